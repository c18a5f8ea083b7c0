/*
 * Store layout contract: every vector of tests/data/store-layout/vectors.json
 * (the JS twin, src/edge/layout.js, passes the same: tests/edge/layout.test.mjs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "linkbot/fsutil.h"
#include "linkbot/layout.h"
#include "vectors.h"

VECTORS_GROUP(load, unload, "tests/data/store-layout/vectors.json")

/* Calls layout_<fn> with a[]; -1 for an unknown fn or arity. */
static int call(const char *fn, const char **a, int n, char *buf, size_t size)
{
	if (strcmp(fn, "endpoint_folder") == 0 && n == 2)
		return layout_endpoint_folder(buf, size, a[0], a[1]);
	if (strcmp(fn, "project_folder") == 0 && n == 1)
		return layout_project_folder(buf, size, a[0]);
	if (strcmp(fn, "key") == 0 && n == 2)
		return layout_key(buf, size, a[0], a[1]);
	if (strcmp(fn, "page_key") == 0 && n == 2)
		return layout_page_key(buf, size, a[0], a[1]);
	if (strcmp(fn, "marker_key") == 0 && n == 3)
		return layout_marker_key(buf, size, a[0], a[1], a[2]);
	if (strcmp(fn, "corpus_path") == 0 && n == 1)
		return layout_corpus_path(buf, size, a[0]);
	if (strcmp(fn, "links_path") == 0 && n == 2)
		return layout_links_path(buf, size, a[0], a[1]);
	if (strcmp(fn, "module_links_path") == 0 && n == 3)
		return layout_module_links_path(buf, size, a[0], a[1], a[2]);
	if (strcmp(fn, "bonus_path") == 0 && n == 1)
		return layout_bonus_path(buf, size, a[0]);
	if (strcmp(fn, "state_key") == 0 && n == 1)
		return layout_state_key(buf, size, a[0]);
	fail_msg("unknown layout function '%s' with %d arguments", fn, n);
	return -1;
}

static void test_vectors(void **state)
{
	const cJSON *v;
	int count = 0;

	(void)state;
	cJSON_ArrayForEach(v, cJSON_GetObjectItem(vectors, "vectors")) {
		const char *fn = cJSON_GetObjectItem(v, "fn")->valuestring;
		const char *want = cJSON_GetObjectItem(v, "expect")->valuestring;
		const char *a[4];
		const cJSON *x;
		char buf[512];
		int n = 0;

		cJSON_ArrayForEach(x, cJSON_GetObjectItem(v, "args")) {
			assert_true(n < 4);
			a[n++] = x->valuestring;
		}
		assert_int_equal(call(fn, a, n, buf, sizeof(buf)),
				 (int)strlen(want));
		if (strcmp(buf, want) != 0)
			fail_msg("%s: got '%s', want '%s'", fn, buf, want);
		count++;
	}
	assert_true(count >= 15);
}

static void test_names(void **state)
{
	const cJSON *names = cJSON_GetObjectItem(vectors, "names");
	static const struct { const char *name, *value; } c[] = {
		{ "DESCRIPTOR", LAYOUT_DESCRIPTOR },
		{ "PROJECT", LAYOUT_PROJECT },
		{ "POOL", LAYOUT_POOL },
		{ "MANIFEST", LAYOUT_MANIFEST },
		{ "PAGES", LAYOUT_PAGES },
		{ "PROJECTS", LAYOUT_PROJECTS },
		{ "STATE", LAYOUT_STATE },
		{ "MARKER_TARGET", LAYOUT_MARKER_TARGET },
	};
	size_t i;

	(void)state;
	assert_int_equal(cJSON_GetArraySize(names),
			 (int)(sizeof(c) / sizeof(c[0])));
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const cJSON *x = cJSON_GetObjectItem(names, c[i].name);

		assert_non_null(x);
		assert_string_equal(x->valuestring, c[i].value);
	}
}

/* A key that does not fit is refused whole, never cut. */
static void test_too_long(void **state)
{
	char buf[16];

	(void)state;
	assert_int_equal(layout_page_key(buf, sizeof(buf), "acme/blog",
					 "0123456789abcdef"), -1);
	assert_string_equal(buf, "");
	assert_int_equal(layout_endpoint_folder(buf, sizeof(buf), "acme",
						"blog"), 9);
	assert_int_equal(layout_endpoint_folder(buf, 9, "acme", "blog"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_too_long),
	};
	return cmocka_run_group_tests(tests, load, unload);
}
