/*
 * urlpattern.h - URL patterns: which URLs belong to a set (config `sets`),
 * and which sub-sitemaps of a sitemap index are read.
 *
 * A pattern is written like a URL, with the scheme, the host or the path left
 * out when any will do (examples below, outside this comment).
 *
 * Wildcards:
 *   {name}  one or more characters, none of them '/' or '?': one path segment
 *           (the name is documentation only).
 *   {name:class}  the same, restricted to a class: digits, letters, alnum,
 *           lower, upper, hex, or [a-z0-9-] (ranges, '^' first negates).
 *   *       zero or more characters of any kind, '/' included.
 * Matching is linear in the URL (an automaton, no backtracking).
 * Everything else matches itself: the path case-sensitively, scheme and host
 * case-insensitively. The whole URL must match, not a prefix of it.
 * Trailing '/' is not significant (the page ID ignores it too): `/blog/{slug}`
 * and `/blog/{slug}/` both match `/blog/a` and `/blog/a/`; and since `/docs/`
 * is `/docs`, the pattern `/docs/<star>` matches the pages below /docs/ but
 * not /docs/ itself.
 * Without a '?' in the pattern the URL's query is ignored; with one, the
 * query is matched by the part after the '?' ("" matches no query only).
 * A fragment is never part of the match.
 *
 * A set is a list of patterns: a URL belongs to it when at least one plain
 * pattern matches and no '!' pattern does.
 *
 * Compiled patterns own their memory; urlset_free(NULL) is a no-op.
 */
/*
 * Examples of patterns (as line comments: they contain slash-star):
 */
// https://example.com/blog/{slug}   scheme, host and path must match
// example.com/blog/{slug}/          http or https, any port
// example.com:8080/docs/*           http or https, port 8080 only
// /blog/{slug}                      any scheme, any host
// *.example.com/shop/*              any subdomain of example.com
// example.com                       every page of the host
// /search?q=*                       with a query: the query must match too
// !/blog/drafts/*                   in a set: excludes what it matches

#ifndef LINKBOT_URLPATTERN_H
#define LINKBOT_URLPATTERN_H

#include <stddef.h>
#include "linkbot/doc.h"
#include "linkbot/error.h"

struct lb_urlset;

/* Compiles the patterns of one set (LB_ECONFIG names a bad pattern). */
int urlset_compile(const struct lb_strlist *patterns, struct lb_urlset **out,
		   struct lb_error *err);
/* Compiles one pattern (a sitemap index's filter). */
int urlset_compile1(const char *pattern, struct lb_urlset **out,
		    struct lb_error *err);
void urlset_free(struct lb_urlset *s);

/* 1 if the absolute http(s) URL belongs to the set, 0 if not or unparsable. */
int urlset_match(const struct lb_urlset *s, const char *url);

/* The same, counting only the plain patterns that name a host: 1 if the
 * URL's host is one the set names (the crawler's off-site check). */
int urlset_match_hosted(const struct lb_urlset *s, const char *url);

/*
 * 1 if path (a URL path, no query) lies under prefix on a segment
 * boundary: "/blog" matches "/blog" and "/blog/a", not "/blogger".
 * The prefix "/" or "" matches every path. (A project module's `from`
 * and `to`: which pages it links, and which answers show it.)
 */
int urlpattern_path_under(const char *prefix, const char *path);

/* 1 if the pattern syntax is valid (config validation); fills err if not. */
int urlpattern_valid(const char *pattern, struct lb_error *err);

#endif
