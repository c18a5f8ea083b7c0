/*
 * url.h - the one URL parser: the pieces every URL reader of linkbot
 * shares, each caller's normalisation policy written next to it.
 *
 *   lb_url_split()        RFC 3986 appendix B: scheme, authority, path,
 *                         query of a URL or a relative reference (no copy);
 *   lb_url_host()         the host of an absolute URL (no port, no user);
 *   lb_url_remove_dots()  RFC 3986 5.2.4;
 *   lb_url_hexval()       one hex digit of a %-escape.
 *
 * The policies (docs/crawl.md, docs/extract.md, docs/page-id.md):
 *   - extract/url.c resolves links against the page URL, WHATWG-lenient,
 *     and keeps the rest as written;
 *   - crawl/url.c makes the URL the fetcher sends (libcurl's CURLU reads
 *     it, as libcurl will fetch it), one spelling per resource;
 *   - crawl/urlpattern.c matches URLs against a set's patterns;
 *   - base/pageid.c is the page ID contract with the JS edge
 *     (tests/data/page-id/vectors.json): it takes more forms than a URL
 *     (host/path, a path alone) and drops empty segments.
 * Depends on nothing: compiled into the nginx module with pageid.c.
 */
#ifndef LINKBOT_URL_H
#define LINKBOT_URL_H

#include <stddef.h>

struct lb_url_parts {
	const char *scheme, *auth, *path, *query;	/* into the input */
	size_t scheme_n, auth_n, path_n, query_n;
	int has_auth, has_query;	/* "//" seen; '?' seen */
};

/*
 * Splits s[0..n) (no fragment: cut it first) into its components; a part
 * that is absent is NULL with length 0 (the path: "" at its place).
 * Never fails: every string splits.
 */
void lb_url_split(const char *s, size_t n, struct lb_url_parts *p);

/*
 * The host of an absolute URL "scheme://[user@]host[:port]/...": s[0..*n),
 * an IPv6 literal with its brackets; url itself and *n = 0 when url has
 * no "://".
 */
const char *lb_url_host(const char *url, size_t *n);

/*
 * RFC 3986 5.2.4 on in[0..n) into out (room for n + 1 bytes; out may be
 * in: it never writes past what it has read). Returns the length (no NUL
 * added). Empty segments are kept.
 */
size_t lb_url_remove_dots(const char *in, size_t n, char *out);

/* 0..15 for a hex digit (either case), -1 otherwise. */
int lb_url_hexval(int c);

#endif
