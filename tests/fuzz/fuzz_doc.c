/*
 * fuzz_doc.c - libFuzzer target for the stored doc record (tests/fuzz/run):
 * lb_doc_from_json() (the direct reader, then cJSON when it gives up),
 * lb_doc_read_direct() alone and lb_doc_to_json(). The input, cut at its
 * first NUL, is a stored doc. Contract:
 *   - lb_doc_from_json() gives the same result, or the same failure, as
 *     the copying reader (a cJSON tree, the fields taken from it: the
 *     reading every doc had before the direct reader);
 *   - lb_doc_read_direct() either gives up or reads that same doc;
 *   - a doc read is written back (lb_doc_to_json) and read again to the
 *     same doc, its JSON the same bytes.
 * Docs are compared through lb_doc_to_json(doc, 1, 0): every field a
 * reader keeps, NULL and "" told apart.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "linkbot/doc.h"

/* the copying reader: cJSON's tree, each field copied out of it */
static int doc_read_cjson(const char *json, struct lb_doc *doc)
{
	cJSON *o = cJSON_Parse(json);
	const cJSON *it;

	lb_doc_init(doc);
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return -1;
	}
#define REF_TAKE_STR(name)                                                \
	it = cJSON_GetObjectItemCaseSensitive(o, #name);                  \
	if (cJSON_IsString(it) && it->valuestring[0] != '\0' &&           \
	    (doc->name = strdup(it->valuestring)) == NULL)                \
		abort();
	LB_DOC_STR_FIELDS(REF_TAKE_STR)
	REF_TAKE_STR(text)
#undef REF_TAKE_STR
#define REF_TAKE_LIST(name)                                               \
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(o, #name)) \
		if (cJSON_IsString(it) &&                                 \
		    lb_strlist_add(&doc->name, it->valuestring, NULL) < 0) \
			abort();
	LB_DOC_LIST_FIELDS(REF_TAKE_LIST)
#undef REF_TAKE_LIST
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(o, "links")) {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(it, "url");
		const cJSON *an = cJSON_GetObjectItemCaseSensitive(it, "anchor");

		if (cJSON_IsString(u) &&
		    lb_doclinks_add(&doc->links, u->valuestring,
				    cJSON_IsString(an) ? an->valuestring : NULL,
				    NULL) < 0)
			abort();
	}
	doc->noindex = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o,
								     "noindex"));
	cJSON_Delete(o);
	return 0;
}

static char *doc_json(const struct lb_doc *doc)
{
	char *j = lb_doc_to_json(doc, 1, 0);

	if (j == NULL)
		abort();
	return j;
}

static void same(const char *what, const char *in, const char *a,
		 const char *b)
{
	if (strcmp(a, b) != 0) {
		fprintf(stderr, "%s differ on '%.200s':\n  %.300s\n  %.300s\n",
			what, in, a, b);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lb_doc a, b, c;
	struct lb_error err;
	char *in, *ja, *jb, *jc;
	int ra, rb;

	if ((in = malloc(size + 1)) == NULL)
		return 0;
	memcpy(in, data, size);
	in[size] = '\0';
	lb_error_init(&err);
	ra = lb_doc_from_json(in, &a, &err);
	rb = doc_read_cjson(in, &b);
	if ((ra == 0) != (rb == 0)) {
		fprintf(stderr, "lb_doc_from_json %d, cJSON %d on '%.200s'\n",
			ra, rb, in);
		abort();
	}
	if (ra != 0) {
		if (err.code != LB_EPARSE)
			abort();
		lb_doc_release(&b);
		if (lb_doc_read_direct(in, &c) == 0)
			abort();	/* read what cJSON cannot */
		free(in);
		return 0;
	}
	ja = doc_json(&a);
	jb = doc_json(&b);
	same("lb_doc_from_json and cJSON", in, ja, jb);
	if (lb_doc_read_direct(in, &c) == 0) {
		jc = doc_json(&c);
		same("lb_doc_read_direct and cJSON", in, jc, jb);
		free(jc);
		lb_doc_release(&c);
	}
	/* the round trip: written, read again, written the same */
	if (lb_doc_from_json(ja, &c, &err) != 0)
		abort();
	jc = doc_json(&c);
	same("the round trip", in, jc, ja);
	free(jc);
	lb_doc_release(&c);
	if (lb_doc_read_direct(ja, &c) == 0) {
		jc = doc_json(&c);
		same("the direct round trip", in, jc, ja);
		free(jc);
		lb_doc_release(&c);
	}
	free(ja);
	free(jb);
	lb_doc_release(&a);
	lb_doc_release(&b);
	free(in);
	return 0;
}
