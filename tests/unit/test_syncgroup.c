/*
 * syncgroup: every caller returns only after a call that started after it
 * came and ended before it returned; callers at once share calls; a
 * failed call fails the callers it covers and not the ones after it;
 * lb_fs_sync() on a real directory.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "linkbot/syncgroup.h"

#define CALLERS 32
#define CALLS_MAX (CALLERS + 1)

/* a logical clock: every event takes the next tick */
struct probe {
	pthread_mutex_t mu;
	long clock;
	long start[CALLS_MAX], end[CALLS_MAX];
	int n_calls, running, overlapped;
	int fail_next;		/* the next call fails with EIO */
};

static long tick(struct probe *p)
{
	long t;

	pthread_mutex_lock(&p->mu);
	t = ++p->clock;
	pthread_mutex_unlock(&p->mu);
	return t;
}

static void nap(long ms)
{
	struct timespec ts = { 0, ms * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

static int fake_sync(void *arg)
{
	struct probe *p = arg;
	int k, fail;

	pthread_mutex_lock(&p->mu);
	k = p->n_calls++;
	p->start[k] = ++p->clock;
	if (p->running++)
		p->overlapped = 1;
	fail = p->fail_next;
	p->fail_next = 0;
	pthread_mutex_unlock(&p->mu);
	nap(5);		/* long enough for others to come meanwhile */
	pthread_mutex_lock(&p->mu);
	p->end[k] = ++p->clock;
	p->running--;
	pthread_mutex_unlock(&p->mu);
	if (fail) {
		errno = EIO;
		return -1;
	}
	return 0;
}

struct caller {
	struct probe *p;
	struct lb_sync_group *g;
	long came, left;
	int rc;
};

static void *call(void *arg)
{
	struct caller *c = arg;

	c->came = tick(c->p);
	c->rc = lb_sync_group_run(c->g, fake_sync, c->p);
	c->left = tick(c->p);
	return NULL;
}

static void test_shared_and_covered(void **state)
{
	static struct lb_sync_group g = LB_SYNC_GROUP_INIT;
	struct probe p = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct caller c[CALLERS];
	pthread_t tid[CALLERS];
	int i, k;

	(void)state;
	for (i = 0; i < CALLERS; i++) {
		c[i] = (struct caller){ &p, &g, 0, 0, -2 };
		assert_int_equal(pthread_create(&tid[i], NULL, call, &c[i]), 0);
		if (i % 4 == 3)
			nap(2);	/* in waves: some come while a call runs */
	}
	for (i = 0; i < CALLERS; i++)
		pthread_join(tid[i], NULL);
	assert_int_equal(p.overlapped, 0);
	/* shared: far fewer calls than callers */
	assert_true(p.n_calls >= 1);
	assert_true(p.n_calls < CALLERS / 2);
	for (i = 0; i < CALLERS; i++) {
		int covered = 0;

		assert_int_equal(c[i].rc, 0);
		for (k = 0; k < p.n_calls; k++)
			if (p.start[k] > c[i].came && p.end[k] < c[i].left)
				covered = 1;
		assert_true(covered);
	}
}

static void test_alone(void **state)
{
	static struct lb_sync_group g = LB_SYNC_GROUP_INIT;
	struct probe p = { .mu = PTHREAD_MUTEX_INITIALIZER };
	int i;

	(void)state;
	/* one caller at a time: one call each */
	for (i = 0; i < 3; i++)
		assert_int_equal(lb_sync_group_run(&g, fake_sync, &p), 0);
	assert_int_equal(p.n_calls, 3);
}

static void test_failure(void **state)
{
	static struct lb_sync_group g = LB_SYNC_GROUP_INIT;
	struct probe p = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct caller c[4];
	pthread_t tid[4];
	int i, k;

	(void)state;
	assert_int_equal(lb_sync_group_run(&g, fake_sync, &p), 0);
	p.fail_next = 1;
	errno = 0;
	assert_int_equal(lb_sync_group_run(&g, fake_sync, &p), -1);
	assert_int_equal(errno, EIO);
	/* the failure is not the next caller's */
	assert_int_equal(lb_sync_group_run(&g, fake_sync, &p), 0);
	/* callers sharing a failed call all fail */
	p.fail_next = 1;
	for (i = 0; i < 4; i++) {
		c[i] = (struct caller){ &p, &g, 0, 0, -2 };
		assert_int_equal(pthread_create(&tid[i], NULL, call, &c[i]), 0);
	}
	for (i = 0; i < 4; i++)
		pthread_join(tid[i], NULL);
	/* the first of these calls (the fourth in all) failed: a caller
	 * that came once it had started had the next one, which did not
	 * fail; one that failed came before it started */
	assert_true(p.n_calls >= 4);
	for (i = 0, k = 0; i < 4; i++) {
		if (c[i].came > p.start[3])
			assert_int_equal(c[i].rc, 0);
		if (c[i].rc == -1)
			assert_true(c[i].came < p.start[3]);
		k += c[i].rc == -1;
	}
	assert_true(k >= 1);	/* its caller, at least */
}

static void test_fs_sync(void **state)
{
	char dir[] = "/tmp/lb-syncgroup.XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(lb_fs_sync(dir), 0);
	assert_int_equal(lb_fs_sync(dir), 0);
	errno = 0;
	assert_int_equal(lb_fs_sync("/nonexistent/lb-syncgroup"), -1);
	assert_int_equal(errno, ENOENT);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_and_covered),
		cmocka_unit_test(test_alone),
		cmocka_unit_test(test_failure),
		cmocka_unit_test(test_fs_sync),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
