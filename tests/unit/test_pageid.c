/* Page ID contract: every vector of tests/data/page-id/vectors.json. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "linkbot/fsutil.h"
#include "linkbot/pageid.h"
#include "linkbot/sha256.h"
#include "vectors.h"

VECTORS_GROUP(load, unload, "tests/data/page-id/vectors.json")

static void test_vectors(void **state)
{
	const cJSON *v, *names;
	int count = 0;

	(void)state;
	cJSON_ArrayForEach(v, cJSON_GetObjectItem(vectors, "vectors")) {
		const char *in = cJSON_GetObjectItem(v, "input")->valuestring;
		const char *key = cJSON_GetObjectItem(v, "key")->valuestring;
		const char *id = cJSON_GetObjectItem(v, "id")->valuestring;
		const char *list[16];
		struct lb_qrule rule = { 0, list, 0 };
		struct lb_error err;
		char *got = NULL, gid[LB_PAGEID_LEN + 1];
		const cJSON *n;

		lb_error_init(&err);
		names = cJSON_GetObjectItem(v, "query_params");
		cJSON_ArrayForEach(n, names) {
			if (strcmp(n->valuestring, "*") == 0)
				rule.keep_all = 1;
			else
				list[rule.n_names++] = n->valuestring;
		}
		if (pageid_normalize(in, &rule, &got, &err) < 0)
			fail_msg("'%s' refused: %s", in, err.msg);
		if (strcmp(got, key) != 0)
			fail_msg("'%s': key '%s', expected '%s'", in, got, key);
		pageid_hash(got, gid);
		assert_string_equal(gid, id);
		free(got);
		count++;
	}
	assert_true(count > 20);
}

static void test_invalid(void **state)
{
	const cJSON *v;
	int count = 0;

	(void)state;
	cJSON_ArrayForEach(v, cJSON_GetObjectItem(vectors, "invalid")) {
		const char *in = cJSON_GetObjectItem(v, "input")->valuestring;
		struct lb_error err;
		char *got = NULL;

		lb_error_init(&err);
		if (pageid_normalize(in, NULL, &got, &err) == 0)
			fail_msg("'%s' accepted as '%s'", in, got);
		assert_int_equal(err.code, LB_EINVALID);
		assert_null(got);
		count++;
	}
	assert_true(count > 5);
}

/* The one SHA-256 helper against FIPS 180-2's vectors, whole and cut. */
static void test_sha256_hex(void **state)
{
	char out[LB_SHA256_HEX_LEN + 1], id[LB_PAGEID_LEN + 1];

	(void)state;
	lb_sha256_hex("abc", 3, out, LB_SHA256_HEX_LEN);
	assert_string_equal(out, "ba7816bf8f01cfea414140de5dae2223"
				 "b00361a396177a9cb410ff61f20015ad");
	lb_sha256_hex("", 0, out, LB_SHA256_HEX_LEN);
	assert_string_equal(out, "e3b0c44298fc1c149afbf4c8996fb924"
				 "27ae41e4649b934ca495991b7852b855");
	lb_sha256_hex("abc", 3, out, 32);
	assert_string_equal(out, "ba7816bf8f01cfea414140de5dae2223");
	/* a page ID is the first 32 hex characters of the key's digest */
	pageid_hash("abc", id);
	assert_string_equal(id, out);
	/* bytes after a NUL count: the length is the caller's */
	lb_sha256_hex("a\0b", 3, out, 8);
	assert_int_equal(strlen(out), 8);
	assert_string_not_equal(out, "ca978112");	/* sha256("a") */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_sha256_hex),
	};

	return cmocka_run_group_tests(tests, load, unload);
}
