/*
 * fuzz_sitemap.c - libFuzzer target for the URL sources (tests/fuzz/run):
 * sitemap_parse_xml() (XML, gzip, text sitemaps, indexes) and
 * sitemap_parse_html() (HTML sitemaps). The first byte picks the parser.
 * Contract: every URL handed out is a NUL-terminated, non-empty string.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/crawl/crawl_int.h"

static int on_entry(void *arg, int is_index, const char *loc,
		    const char *lastmod)
{
	(void)is_index;
	(void)lastmod;
	if (loc == NULL || *loc == '\0')
		abort();
	(*(size_t *)arg)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lb_error err;
	char *base = NULL;
	size_t n = 0;
	int html;

	if (size == 0)
		return 0;
	html = data[0] & 1;
	data++;
	size--;
	lb_error_init(&err);
	if (html) {
		sitemap_parse_html((const char *)data, size, on_entry, &n,
				   &base, &err);
		free(base);
	} else {
		sitemap_parse_xml((const char *)data, size, on_entry, &n, &err);
	}
	return 0;
}
