/*
 * The client share of linkbot run --clients I/N (src/pipeline/share.c):
 * every vector of tests/data/share/vectors.json (made by its Python twin,
 * tests/lib/share.py), and the properties the operator relies on: shares
 * are even, and growing N to N+1 moves clients only to the new job.
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
#include "linkbot/pipeline.h"

static void test_vectors(void **state)
{
	struct lb_error err;
	char *text = NULL;
	cJSON *doc;
	const cJSON *v;
	int count = 0;

	(void)state;
	lb_error_init(&err);
	assert_int_equal(lb_file_read("tests/data/share/vectors.json", 1 << 20,
				      &text, NULL, &err), 0);
	doc = cJSON_Parse(text);
	free(text);
	assert_non_null(doc);
	cJSON_ArrayForEach(v, cJSON_GetObjectItem(doc, "vectors")) {
		const char *id = cJSON_GetObjectItem(v, "id")->valuestring;
		unsigned n = (unsigned)cJSON_GetObjectItem(v, "n")->valueint;
		unsigned want = (unsigned)cJSON_GetObjectItem(v, "share")->valueint;
		unsigned got = pipeline_client_share(id, n);

		if (got != want)
			fail_msg("share('%s', %u) = %u, the vectors say %u", id,
				 n, got, want);
		count++;
	}
	cJSON_Delete(doc);
	assert_true(count > 100);
}

/* 1000 ids over 4 jobs: each gets 250 +- 50 (about 3.5 sigma). */
static void test_even(void **state)
{
	unsigned per[4] = { 0 }, i;
	char id[32];

	(void)state;
	for (i = 0; i < 1000; i++) {
		snprintf(id, sizeof(id), "client-%u", i);
		per[pipeline_client_share(id, 4)]++;
	}
	for (i = 0; i < 4; i++)
		assert_in_range(per[i], 200, 300);
}

/*
 * From N to N+1 jobs a client stays where it was or moves to the new job
 * N, never between old jobs; and about 1/(N+1) of them move.
 */
static void test_growing_n_moves_few(void **state)
{
	unsigned n, i, moved;
	char id[32];

	(void)state;
	for (n = 1; n < 12; n++) {
		moved = 0;
		for (i = 0; i < 1200; i++) {
			unsigned a, b;

			snprintf(id, sizeof(id), "site-%u", i);
			a = pipeline_client_share(id, n);
			b = pipeline_client_share(id, n + 1);
			assert_true(a < n && b <= n);
			if (a != b) {
				assert_int_equal(b, n);
				moved++;
			}
		}
		assert_in_range(moved, 1200 / (n + 1) / 2,
				1200 / (n + 1) * 3 / 2);
	}
}

static void test_one_job_takes_all(void **state)
{
	(void)state;
	assert_int_equal(pipeline_client_share("anything", 1), 0);
	assert_int_equal(pipeline_client_share("", 1), 0);
	assert_true(pipeline_client_share("", 100000) < 100000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_even),
		cmocka_unit_test(test_growing_n_moves_few),
		cmocka_unit_test(test_one_job_takes_all),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
