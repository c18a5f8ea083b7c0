/*
 * The edge's answer rules in C (src/edge/answer.c): every case of
 * tests/data/edge/vectors.json, which tests/edge/vectors.test.mjs runs
 * through src/edge/core.js too; and what the nginx module relies on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "linkbot/answer.h"
#include "linkbot/fsutil.h"
#include "linkbot/pageid.h"
#include "vectors.h"

VECTORS_GROUP(load, unload, "tests/data/edge/vectors.json")

static uint64_t seq = 42;

static uint64_t rnd(void *arg)
{
	uint64_t z = (seq += 0x9E3779B97F4A7C15ULL);

	(void)arg;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* The vectors' store: an object's bytes (owned by *text), or its state. */
static enum lb_edge_object get(const char *key, char **text, size_t *len)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItem(vectors, "store"), key);
	const cJSON *t;

	*text = NULL;
	*len = 0;
	if (o == NULL)
		return LB_OBJECT_MISSING;
	if (cJSON_GetObjectItem(o, "$fail") != NULL)
		return LB_OBJECT_FAILED;
	if ((t = cJSON_GetObjectItem(o, "$text")) != NULL)
		*text = strdup(t->valuestring);
	else
		*text = cJSON_PrintUnformatted(o);
	*len = strlen(*text);
	return LB_OBJECT_OK;
}

static const char *str(const cJSON *c, const char *name)
{
	return cJSON_GetStringValue(cJSON_GetObjectItem(c, name));
}

static void check(const cJSON *c, const struct lb_edge_answer *a,
		  const struct lb_edge_decision *d, const char *page_key)
{
	const char *name = str(c, "name"), *body = str(c, "body");
	const cJSON *h, *exp = cJSON_GetObjectItem(c, "headers");
	cJSON *b = NULL;
	size_t i;

	if (a->status != cJSON_GetObjectItem(c, "status")->valueint)
		fail_msg("%s: status %d, want %d (%s)", name, a->status,
			 cJSON_GetObjectItem(c, "status")->valueint,
			 a->body ? a->body : "");
	if (a->n_headers != (size_t)cJSON_GetArraySize(exp))
		fail_msg("%s: %zu headers, want %d", name, a->n_headers,
			 cJSON_GetArraySize(exp));
	cJSON_ArrayForEach(h, exp) {
		const char *got = edge_answer_header(a, h->string);
		if (got == NULL || strcmp(got, h->valuestring) != 0)
			fail_msg("%s: header %s is '%s', want '%s'", name,
				 h->string, got ? got : "(none)",
				 h->valuestring);
	}
	if (strcmp(body, "none") == 0) {
		assert_int_equal(a->kind, LB_BODY_NONE);
		return;
	}
	if (strcmp(body, "page") == 0) {
		assert_int_equal(a->kind, LB_BODY_PAGE);
		assert_non_null(page_key);
		if (strcmp(page_key, str(c, "page")) != 0)
			fail_msg("%s: page %s, want %s", name, page_key,
				 str(c, "page"));
		return;
	}
	assert_int_equal(a->kind, LB_BODY_JSON);
	b = cJSON_Parse(a->body);
	if (b == NULL)
		fail_msg("%s: body is not JSON: %s", name, a->body);
	if (strcmp(body, "error") == 0) {
		assert_non_null(str(b, "message"));
		assert_true(strlen(str(b, "message")) > 0);
		assert_int_equal(cJSON_GetObjectItem(b, "status")->valueint,
				 a->status);
	} else if (strcmp(body, "modules") == 0) {
		assert_true(cJSON_IsObject(b));
		assert_int_equal(cJSON_GetArraySize(b), 0);
	} else {
		const cJSON *links = cJSON_GetObjectItem(b, "related_links"), *l;
		int want = strcmp(body, "empty") == 0 ? 0 :
			   cJSON_GetObjectItem(c, "links")->valueint;
		assert_non_null(str(b, "message"));
		assert_true(cJSON_IsArray(links));
		if (cJSON_GetArraySize(links) != want)
			fail_msg("%s: %d links, want %d", name,
				 cJSON_GetArraySize(links), want);
		cJSON_ArrayForEach(l, links) {
			const cJSON *x;
			assert_string_equal(str(l, "type"), "random");
			cJSON_ArrayForEach(x, cJSON_GetObjectItem(c, "exclude"))
				assert_string_not_equal(str(l, "url"),
							x->valuestring);
		}
	}
	if (cJSON_IsNull(cJSON_GetObjectItem(c, "side")) && d != NULL &&
	    d->side != NULL)
		fail_msg("%s: side '%s', want none", name, d->side);
	if (str(c, "side") != NULL) {
		assert_non_null(d);
		assert_non_null(d->side);
		if (strcmp(d->side, str(c, "side")) != 0)
			fail_msg("%s: side '%s', want '%s'", name, d->side,
				 str(c, "side"));
	}
	cJSON_Delete(b);
	(void)i;
}

/* One case through the calling sequence of answer.h. */
static void run_case(const cJSON *c)
{
	const char *target = str(c, "target"), *auth = str(c, "authorization");
	struct lb_edge_request req = { str(c, "method"), target,
				       strlen(target), auth,
				       auth ? strlen(auth) : 0 };
	struct lb_edge_route rt;
	struct lb_edge_answer a;
	struct lb_edge_decision d;
	enum lb_edge_object st;
	char *text = NULL;
	size_t len;

	memset(&a, 0, sizeof(a));
	if (edge_route(&req, &rt, &a) == 1) {
		check(c, &a, NULL, NULL);
		edge_answer_release(&a);
		return;
	}
	st = get(rt.desc_key, &text, &len);
	if (edge_decide(&req, &rt, st, text, len, &d) == 1) {
		check(c, &d.answer, &d, NULL);
	} else if (cJSON_GetObjectItemCaseSensitive(
			   cJSON_GetObjectItem(vectors, "store"),
			   d.page_key) != NULL) {
		edge_page_answer(rt.variant, &a);
		check(c, &a, &d, d.page_key);
	} else {
		free(text);
		text = NULL;
		len = 0;
		st = d.needs_pool ? get(d.pool_key, &text, &len) :
				    LB_OBJECT_MISSING;
		edge_miss(&d, st, text, len, rnd, NULL, &a);
		check(c, &a, &d, NULL);
		edge_answer_release(&a);
	}
	free(text);
	edge_decision_release(&d);
}

static void test_vectors(void **state)
{
	const cJSON *c;
	int n = 0, round;

	(void)state;
	/* the random draws differ from round to round */
	for (round = 0; round < 3; round++)
		cJSON_ArrayForEach(c, cJSON_GetObjectItem(vectors, "cases")) {
			run_case(c);
			n++;
		}
	assert_true(n >= 300);
}

/* The fast path's ID is the full path's, whenever it gives one. */
static void test_fast_id(void **state)
{
	const cJSON *c;
	int fast = 0;

	(void)state;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(vectors, "cases")) {
		const char *target = str(c, "target");
		struct lb_edge_request req = { "GET", target, strlen(target),
					       NULL, 0 };
		struct lb_edge_route rt;
		struct lb_edge_answer a;
		char id[LB_PAGEID_LEN + 1];
		const char *page = str(c, "page");

		memset(&a, 0, sizeof(a));
		if (edge_route(&req, &rt, &a) == 1) {
			edge_answer_release(&a);
			continue;
		}
		if (edge_fast_id(&req, &rt, id) < 0)
			continue;
		assert_true(rt.variant != LB_EDGE_PROJECT);
		if (page != NULL && strcmp(str(c, "body"), "page") == 0 &&
		    strstr(page, "/pages/") != NULL) {
			assert_non_null(strstr(page, id));
			fast++;
		}
	}
	assert_true(fast >= 15);
}

/* edge_page_id() is pageid_hash(), faster. */
static void test_page_id(void **state)
{
	const char *keys[] = { "/", "/blog/a-post", "/item?id=42",
			       "/caf%C3%A9", "" };
	char a[LB_PAGEID_LEN + 1], b[LB_PAGEID_LEN + 1];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		pageid_hash(keys[i], a);
		edge_page_id(keys[i], strlen(keys[i]), b);
		assert_string_equal(a, b);
	}
}

/* nginx's own refusals: the route's answer, else 413. */
static void test_refused(void **state)
{
	struct lb_edge_request req = { "TRACE", "/acme/blog/related-links",
				       24, NULL, 0 };
	struct lb_edge_answer a;

	(void)state;
	memset(&a, 0, sizeof(a));
	edge_refused(&req, &a);
	assert_int_equal(a.status, 405);
	assert_string_equal(edge_answer_header(&a, "Allow"),
			    "GET, HEAD, OPTIONS");
	edge_answer_release(&a);
	req.method = "GET";
	edge_refused(&req, &a);
	assert_int_equal(a.status, 413);
	edge_answer_release(&a);
	req.target = "/x";
	req.target_len = 2;
	edge_refused(&req, &a);
	assert_int_equal(a.status, 404);
	edge_answer_release(&a);
}

/* Bytes no client should send: no crash, no read outside the target. */
static void test_hostile_bytes(void **state)
{
	static const char *targets[] = {
		"/acme/blog/related-links?url=%", "/acme/blog/related-links?url=%4",
		"/acme/blog/related-links?&&&url", "/acme/blog/related-links?url",
		"/acme/blog/related-links?=&=url=", "/acme/blog/related-links?url=?",
		"/acme/blog/related-links?url=%00%00", "?url=/x", "/?",
		"/acme/blog/related-links?url=http://[::1", "/acme/blog/related-links?url=http://[",
	};
	size_t i, cut;

	(void)state;
	for (i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
		for (cut = 0; cut <= strlen(targets[i]); cut++) {
			/* a copy of exactly cut bytes: ASan sees any overread */
			char *t = malloc(cut ? cut : 1);
			struct lb_edge_request req = { "GET", t, cut, NULL, 0 };
			struct lb_edge_route rt;
			struct lb_edge_answer a;
			struct lb_edge_decision d;
			char id[LB_PAGEID_LEN + 1];
			const char *ep = "{\"variant\":\"standard\","
					 "\"state\":\"active\"}";

			memcpy(t, targets[i], cut);
			memset(&a, 0, sizeof(a));
			if (edge_route(&req, &rt, &a) == 0) {
				edge_fast_id(&req, &rt, id);
				if (edge_decide(&req, &rt, LB_OBJECT_OK, ep,
						strlen(ep), &d) == 0) {
					edge_miss(&d, LB_OBJECT_MISSING, NULL,
						  0, rnd, NULL, &a);
					edge_answer_release(&a);
				}
				edge_decision_release(&d);
			}
			edge_answer_release(&a);
			free(t);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_fast_id),
		cmocka_unit_test(test_page_id),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_hostile_bytes),
	};

	return cmocka_run_group_tests(tests, load, unload);
}
