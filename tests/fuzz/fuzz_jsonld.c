/*
 * fuzz_jsonld.c - libFuzzer target for schema.org JSON-LD
 * (tests/fuzz/run): the input is up to X_MAX_JSONLD_BLOCKS blocks
 * separated by NUL bytes, each given to x_jsonld_add() as the text of one
 * <script type="application/ld+json">; then x_jsonld_offer() offers the
 * candidates (dates, URLs, languages, lists validated on the way).
 * Contract: every candidate taken is non-empty valid UTF-8 within its cap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "extract_fuzz.h"

#define PAGE "https://fuzz.example/dir/page.html"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *end = s + size, *z;
	struct x_jsonld *j;
	struct lb_error err;
	struct x_ctx x;
	int f, b;
	size_t i;

	if ((j = x_jsonld_new()) == NULL)
		return 0;
	for (b = 0; b < X_MAX_JSONLD_BLOCKS + 2 && s < end; b++) {
		z = memchr(s, '\0', (size_t)(end - s));
		if (z == NULL)
			z = end;
		x_jsonld_add(j, s, (size_t)(z - s));
		s = z + 1;
	}
	memset(&x, 0, sizeof(x));
	lb_error_init(&err);
	x.err = &err;
	x.base = PAGE;
	if (x_jsonld_offer(j, &x, PAGE) < 0 && err.code != LB_ENOMEM)
		abort();
	for (f = 0; f < LB_F_author; f++)
		fuzz_check_str("field", x.str[f][LB_SRC_JSONLD], X_MAX_URL * 2);
	for (f = 0; f < 2; f++)
		for (i = 0; i < x.list[f][LB_SRC_JSONLD].n; i++)
			fuzz_check_str("list", x.list[f][LB_SRC_JSONLD].v[i],
				       X_MAX_FIELD);
	x_ctx_release(&x);
	x_jsonld_free(j);
	return 0;
}
