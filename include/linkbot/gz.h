/*
 * gz.h - gunzip with a cap on the output (gzip bombs stop at the cap).
 * The one gunzip: published objects read back (lookup, hubspot sync) and
 * gzipped sitemaps (crawl/sitemap.c).
 */
#ifndef LINKBOT_GZ_H
#define LINKBOT_GZ_H

#include <stddef.h>
#include "linkbot/error.h"

/* *out is NUL-terminated and owned by the caller; LB_ETOOBIG past cap. */
int lb_gunzip(const void *data, size_t len, size_t cap, char **out,
	      size_t *out_len, struct lb_error *err);

/* 1 if data starts with the gzip magic bytes. */
int lb_is_gzip(const void *data, size_t len);

#endif
