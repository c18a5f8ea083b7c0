/* test_retry.c - the one HTTP retry policy (linkbot/retry.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "linkbot/retry.h"

static void test_classify(void **state)
{
	(void)state;
	assert_int_equal(lb_retry_classify(CURLE_OK, 200), LB_RETRY_FINAL);
	assert_int_equal(lb_retry_classify(CURLE_OK, 404), LB_RETRY_FINAL);
	assert_int_equal(lb_retry_classify(CURLE_OK, 301), LB_RETRY_FINAL);
	assert_int_equal(lb_retry_classify(CURLE_OK, 429), LB_RETRY_THROTTLED);
	assert_int_equal(lb_retry_classify(CURLE_OK, 503),
			 LB_RETRY_UNAVAILABLE);
	assert_int_equal(lb_retry_classify(CURLE_OK, 500), LB_RETRY_SERVER);
	assert_int_equal(lb_retry_classify(CURLE_OK, 504), LB_RETRY_SERVER);
	/* the curl code goes first: a status of an earlier try is ignored */
	assert_int_equal(lb_retry_classify(CURLE_COULDNT_CONNECT, 200),
			 LB_RETRY_TRANSPORT);
	assert_int_equal(lb_retry_classify(CURLE_RECV_ERROR, 0),
			 LB_RETRY_TRANSPORT);
	assert_int_equal(lb_retry_classify(CURLE_OPERATION_TIMEDOUT, 0),
			 LB_RETRY_TIMEOUT);
	/* would fail the same way again */
	assert_int_equal(lb_retry_classify(CURLE_URL_MALFORMAT, 0),
			 LB_RETRY_FINAL);
	assert_int_equal(lb_retry_classify(CURLE_UNSUPPORTED_PROTOCOL, 0),
			 LB_RETRY_FINAL);
	assert_int_equal(lb_retry_classify(CURLE_WRITE_ERROR, 0),
			 LB_RETRY_FINAL);
}

/* The crawler's numbers (crawl/fetch.c): politeness must not change. */
static void test_crawler_policy(void **state)
{
	struct lb_retry_policy p = {
		.retries = { [LB_RETRY_THROTTLED] = 2,
			     [LB_RETRY_UNAVAILABLE] = 2,
			     [LB_RETRY_TRANSPORT] = 1 },
		.first_ms = 1000, .cap_ms = 16000, .max_retry_after_s = 120,
	};

	(void)state;
	assert_true(lb_retry_allowed(&p, LB_RETRY_THROTTLED, 0));
	assert_true(lb_retry_allowed(&p, LB_RETRY_THROTTLED, 1));
	assert_false(lb_retry_allowed(&p, LB_RETRY_THROTTLED, 2));
	assert_true(lb_retry_allowed(&p, LB_RETRY_TRANSPORT, 0));
	assert_false(lb_retry_allowed(&p, LB_RETRY_TRANSPORT, 1));
	assert_false(lb_retry_allowed(&p, LB_RETRY_TIMEOUT, 0));
	assert_false(lb_retry_allowed(&p, LB_RETRY_SERVER, 0));
	assert_false(lb_retry_allowed(&p, LB_RETRY_FINAL, 0));
	/* no Retry-After: 1 s doubling, at most 16 s */
	assert_int_equal(lb_retry_wait_ms(&p, LB_RETRY_THROTTLED, 0, -1, 0),
			 1000);
	assert_int_equal(lb_retry_wait_ms(&p, LB_RETRY_UNAVAILABLE, 1, -1, 0),
			 2000);
	assert_int_equal(lb_retry_wait_ms(&p, LB_RETRY_THROTTLED, 9, -1, 0),
			 16000);
	/* Retry-After is honoured on 429 and 503, up to 120 s */
	assert_int_equal(lb_retry_wait_ms(&p, LB_RETRY_THROTTLED, 0, 30, 0),
			 30000);
	assert_int_equal(lb_retry_wait_ms(&p, LB_RETRY_UNAVAILABLE, 0, 0, 0),
			 0);
	assert_int_equal(lb_retry_wait_ms(&p, LB_RETRY_THROTTLED, 0, 120, 0),
			 120000);
	assert_int_equal(lb_retry_wait_ms(&p, LB_RETRY_THROTTLED, 0, 121, 0),
			 -1);
	/* ... and not on a transport error */
	assert_int_equal(lb_retry_wait_ms(&p, LB_RETRY_TRANSPORT, 0, 30, 0),
			 1000);
}

static void test_jitter_and_cap(void **state)
{
	struct lb_retry_policy p = {
		.retries = { [LB_RETRY_SERVER] = 5 },
		.first_ms = 100, .cap_ms = 10000, .jitter = 1,
	};
	struct lb_retry_policy nocap = { .first_ms = 500 };
	uint64_t r;

	(void)state;
	/* full jitter: rnd % (wait + 1), never above the capped wait */
	assert_int_equal(lb_retry_wait_ms(&p, LB_RETRY_SERVER, 0, -1, 0), 0);
	assert_int_equal(lb_retry_wait_ms(&p, LB_RETRY_SERVER, 0, -1, 100),
			 100);
	assert_int_equal(lb_retry_wait_ms(&p, LB_RETRY_SERVER, 0, -1, 101),
			 0);
	for (r = 0; r < 50000; r += 997)
		assert_true(lb_retry_wait_ms(&p, LB_RETRY_SERVER, 40, -1, r) <=
			    10000);
	/* no policy for Retry-After: ignored */
	assert_int_equal(lb_retry_wait_ms(&p, LB_RETRY_SERVER, 0, 5,
					  UINT64_MAX) <= 100, 1);
	/* no cap: doubling, saturating rather than overflowing */
	assert_int_equal(lb_retry_wait_ms(&nocap, LB_RETRY_SERVER, 4, -1, 0),
			 8000);
	assert_true(lb_retry_wait_ms(&nocap, LB_RETRY_SERVER, 200, -1, 0) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_crawler_policy),
		cmocka_unit_test(test_jitter_and_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
