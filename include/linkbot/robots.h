/*
 * robots.h - robots.txt per RFC 9309 (crawl/ reads one per host).
 *
 * The group for the product token ("LinkBot") is used when robots.txt has
 * one (user-agent values compared case-insensitively on their leading
 * letters, '-' and '_', so "LinkBot/1.0" names it too); otherwise the "*"
 * group. Several groups naming the same agent are merged. Allow and Disallow
 * rules take '*' (any run) and a final '$' (end of URL); the longest
 * matching rule wins, Allow on a tie; no matching rule allows. Paths are
 * compared with percent-escapes normalised (unreserved characters decoded,
 * hex upper case, bytes >= 0x80 encoded). /robots.txt itself is always
 * allowed. Only the first 500 KiB are parsed (RFC 9309 2.5). Crawl-delay is
 * not part of the RFC and is ignored. Sitemap: lines are collected from
 * every group.
 *
 * What to do when robots.txt cannot be fetched is the caller's decision
 * (crawl.c: 4xx allows all, 5xx and network errors skip the host).
 * A parsed robots owns its memory; robots_free(NULL) is a no-op.
 */
#ifndef LINKBOT_ROBOTS_H
#define LINKBOT_ROBOTS_H

#include <stddef.h>
#include "linkbot/doc.h"
#include "linkbot/error.h"

#define LB_ROBOTS_MAX_BYTES (500 * 1024)

struct lb_robots;

/* agent: the product token, for example "LinkBot". */
int robots_parse(const char *txt, size_t len, const char *agent,
		 struct lb_robots **out, struct lb_error *err);
void robots_free(struct lb_robots *r);

/* 1 if the path (with its query, e.g. "/a/b?x=1") may be fetched. */
int robots_allowed(const struct lb_robots *r, const char *path_query);

/* The Sitemap: URLs in file order; owned by r. */
const struct lb_strlist *robots_sitemaps(const struct lb_robots *r);

#endif
