/*
 * fuzz_robots.c - libFuzzer target for robots.txt (tests/fuzz/run): the
 * input is "path\n" then the file; robots_parse() then robots_allowed()
 * for that path and a few fixed ones. Contract: an answer of 0 or 1.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/robots.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = { "/", "/a/b?c=d", "/robots.txt",
					     "/%7Ex/caf%C3%A9", NULL };
	const char *s = (const char *)data, *nl;
	struct lb_robots *r = NULL;
	struct lb_error err;
	char path[512];
	size_t pl, i;

	nl = memchr(s, '\n', size);
	pl = nl ? (size_t)(nl - s) : 0;
	if (pl >= sizeof(path))
		pl = sizeof(path) - 1;
	memcpy(path, s, pl);
	path[pl] = '\0';
	if (strlen(path) != pl)
		return 0;
	if (nl != NULL) {
		size -= (size_t)(nl - s) + 1;
		s = nl + 1;
	}
	lb_error_init(&err);
	if (robots_parse(s, size, "LinkBot", &r, &err) < 0)
		return 0;
	if ((unsigned)robots_allowed(r, pl ? path : "/x") > 1)
		abort();
	for (i = 0; paths[i] != NULL; i++)
		if ((unsigned)robots_allowed(r, paths[i]) > 1)
			abort();
	(void)robots_sitemaps(r);
	robots_free(r);
	return 0;
}
