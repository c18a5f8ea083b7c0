/*
 * fuzz_url.c - libFuzzer target for URL normalisation (tests/fuzz/run):
 * the crawler's url_normalize() (against a base) and the page ID's
 * pageid_normalize(). Contracts: url_normalize is idempotent and its
 * output has no dot segment; a page-ID key starts with '/', has no dot
 * segment, and normalising the key again gives the key.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/pageid.h"
#include "../../src/crawl/crawl_int.h"

static int has_dot_segment(const char *p)
{
	const char *q = strchr(p, '?');
	size_t n = q ? (size_t)(q - p) : strlen(p), i;

	for (i = 0; i + 1 < n; i++)
		if (p[i] == '/' && p[i + 1] == '.' &&
		    (i + 2 == n || p[i + 2] == '/' ||
		     (p[i + 2] == '.' && (i + 3 == n || p[i + 3] == '/'))))
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in, *out = NULL, *again = NULL, *key = NULL, *key2 = NULL;
	struct lb_error err;
	const char *path;

	if (size > 4096 || memchr(data, '\0', size) != NULL)
		return 0;
	if ((in = malloc(size + 1)) == NULL)
		return 0;
	memcpy(in, data, size);
	in[size] = '\0';
	if (url_normalize(in, "http://h.example/a/b/", &out) == 0) {
		path = url_path_query(out);
		if (has_dot_segment(path))
			abort();
		/* (escapes may take it past the 4096-byte cap) */
		if (strlen(out) <= 4096 &&
		    (url_normalize(out, NULL, &again) < 0 ||
		     strcmp(out, again) != 0))
			abort();
	}
	lb_error_init(&err);
	if (pageid_normalize(in, NULL, &key, &err) == 0) {
		if (key[0] != '/' || has_dot_segment(key))
			abort();
		lb_error_init(&err);
		/* a key may outgrow the input cap (escapes triple bytes) */
		if (strlen(key) <= LB_PAGEID_MAX_INPUT &&
		    (pageid_normalize(key, NULL, &key2, &err) < 0 ||
		     strcmp(key, key2) != 0))
			abort();
	}
	free(in);
	free(out);
	free(again);
	free(key);
	free(key2);
	return 0;
}
