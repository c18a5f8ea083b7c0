/*
 * fuzz_extract.c - libFuzzer target for extract_html() (tests/fuzz/run).
 *
 * The first byte picks the charset the "HTTP header" declared (so the
 * iconv paths are fuzzed too); the rest is the page. Besides the
 * sanitizers' verdict, the doc's contract is checked: every string valid
 * UTF-8, never empty, within its cap; the text within X_MAX_TEXT; the URL
 * fields consistent; the doc read back from its stored JSON
 * (lb_doc_from_json: the direct reader) is the same doc.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/doc.h"
#include "linkbot/extract.h"
#include "extract_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *cs;
	struct lb_doc doc, back;
	struct lb_error err;
	char *json, *again;
	size_t i;

	cs = fuzz_charset(&data, &size);
	lb_doc_init(&doc);
	lb_error_init(&err);
	if (extract_html((const char *)data, size,
			 "https://fuzz.example/dir/page.html?q=1", cs, &doc,
			 &err) < 0) {
		/* only running out of memory may fail */
		if (err.code != LB_ENOMEM)
			abort();
		return 0;
	}
#define CHECK_STR(name) fuzz_check_str(#name, doc.name, X_MAX_URL * 2);
	LB_DOC_STR_FIELDS(CHECK_STR)
#undef CHECK_STR
	fuzz_check_str("text", doc.text, X_MAX_TEXT);
	for (i = 0; i < doc.author.n; i++)
		fuzz_check_str("author", doc.author.v[i], X_MAX_FIELD);
	for (i = 0; i < doc.category.n; i++)
		fuzz_check_str("category", doc.category.v[i], X_MAX_FIELD);
	/* the page URL is valid, so there is always a canonical */
	if (doc.url == NULL || doc.url_path == NULL || doc.url_path[0] != '/' ||
	    (strncmp(doc.url, "http://", 7) != 0 &&
	     strncmp(doc.url, "https://", 8) != 0))
		abort();
	json = lb_doc_to_json(&doc, 1, 1);
	if (json == NULL)
		abort();
	if (lb_doc_from_json(json, &back, &err) < 0)
		abort();
	free(json);
	json = lb_doc_to_json(&doc, 1, 0);
	again = lb_doc_to_json(&back, 1, 0);
	if (json == NULL || again == NULL || strcmp(json, again) != 0) {
		fprintf(stderr, "stored doc read back differs:\n  %.300s\n"
			"  %.300s\n", json, again ? again : "(null)");
		abort();
	}
	free(json);
	free(again);
	lb_doc_release(&back);
	lb_doc_release(&doc);
	return 0;
}
