/*
 * sched: the night's scheduler runs every item once, never more than
 * `jobs` at once, never two that clash at once, in index order one after
 * another with jobs 1, starts nothing after a failure, and runs the
 * continuation of an item handed on (SCHED_LATER, sched_resume()) once,
 * the item in flight meanwhile.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../../src/pipeline/sched.h"

#define N 40

struct probe {
	pthread_mutex_t mu;
	int runs[N];		/* times each item ran */
	int now, peak;		/* items running, most at once */
	int running[N];
	int clashed;		/* two clashing items ran at once */
	size_t order[N], n_order;
	size_t fail_at;		/* this item fails; N: none */
	int threads_seen;	/* an item ran off the caller's thread */
	int failing;		/* the failing item is returning */
	pthread_t caller;
};

static void nap(void)
{
	/* long enough that under load the others start meanwhile */
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

/* items i and j clash when they share i % 5 (a host, say) */
static int clash5(void *arg, size_t i, size_t j)
{
	(void)arg;
	return i % 5 == j % 5;
}

static int item(void *arg, size_t i, struct lb_error *err)
{
	struct probe *p = arg;
	size_t k;

	pthread_mutex_lock(&p->mu);
	p->runs[i]++;
	p->order[p->n_order++] = i;
	if (++p->now > p->peak)
		p->peak = p->now;
	for (k = 0; k < N; k++)
		if (p->running[k] && k % 5 == i % 5)
			p->clashed = 1;
	p->running[i] = 1;
	if (!pthread_equal(pthread_self(), p->caller))
		p->threads_seen = 1;
	pthread_mutex_unlock(&p->mu);
	if (p->fail_at < N && i > p->fail_at) {
		/* the later items end only after the failure: the scheduler
		 * has the failing one's -1 long before it could start all */
		int f = 0;
		while (!f) {
			nap();
			pthread_mutex_lock(&p->mu);
			f = p->failing;
			pthread_mutex_unlock(&p->mu);
		}
	}
	nap();
	pthread_mutex_lock(&p->mu);
	p->running[i] = 0;
	p->now--;
	if (i == p->fail_at)
		p->failing = 1;
	pthread_mutex_unlock(&p->mu);
	if (i == p->fail_at)
		return lb_error_set(err, LB_ESTATE, "item %zu failed", i);
	return 0;
}

/* Runs the N items on a fresh probe; returns sched_run()'s answer. */
static int run(struct probe *p, unsigned jobs, sched_clash_fn clash,
	       size_t fail_at, struct lb_error *err)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->mu, NULL);
	p->fail_at = fail_at;
	p->caller = pthread_self();
	lb_error_init(err);
	return sched_run(N, jobs, item, clash, p, err);
}

static void assert_each_once(const struct probe *p)
{
	size_t i;

	for (i = 0; i < N; i++)
		assert_int_equal(p->runs[i], 1);
}

static void test_all_once_at_most_jobs(void **state)
{
	struct probe p;
	struct lb_error err;

	(void)state;
	assert_int_equal(run(&p, 8, NULL, N, &err), 0);
	assert_each_once(&p);
	assert_true(p.peak <= 8);
	assert_true(p.peak > 1);	/* they did overlap */
	assert_true(p.threads_seen);
}

static void test_clashing_never_together(void **state)
{
	struct probe p;
	struct lb_error err;

	(void)state;
	assert_int_equal(run(&p, 16, clash5, N, &err), 0);
	assert_each_once(&p);
	assert_false(p.clashed);
	assert_true(p.peak <= 5);
}

static void test_one_job_is_sequential(void **state)
{
	struct probe p;
	struct lb_error err;
	size_t i;

	(void)state;
	assert_int_equal(run(&p, 1, clash5, N, &err), 0);
	assert_int_equal(p.peak, 1);
	assert_false(p.threads_seen);
	for (i = 0; i < N; i++)
		assert_int_equal(p.order[i], i);
}

static void test_failure_starts_no_more(void **state)
{
	struct probe p;
	struct lb_error err;
	size_t i, ran = 0;

	(void)state;
	assert_int_equal(run(&p, 4, NULL, 3, &err), -1);
	assert_int_equal(err.code, LB_ESTATE);
	assert_string_equal(err.msg, "item 3 failed");
	for (i = 0; i < N; i++) {
		assert_true(p.runs[i] <= 1);
		ran += (size_t)p.runs[i];
	}
	assert_int_equal(p.runs[3], 1);
	assert_true(ran < N);	/* items after the failure never started */
	/* one after another: it stops right there */
	assert_int_equal(run(&p, 1, NULL, 3, &err), -1);
	assert_int_equal(p.n_order, 4);
}

/*
 * Items handed on (SCHED_LATER): the first part of each item starts its
 * "crawl" on a thread of the test's (as the night hands it to a loop),
 * which resumes the item later; every third item is resumed before its
 * first part has even returned. Each item's continuation runs once, on a
 * scheduler thread, and an item away still counts: never more than jobs
 * items between their first start and their continuation's end, never
 * two clashing ones.
 */
struct away {
	struct probe *p;
	struct sched *s;
	size_t i;
	int at_once;
};

static int item_rest(void *arg, size_t i, struct lb_error *err)
{
	struct probe *p = arg;

	(void)err;
	nap();
	pthread_mutex_lock(&p->mu);
	p->runs[i]++;		/* the continuation: once */
	if (sched_current() == NULL)
		p->clashed = 1;	/* not on a scheduler's thread */
	p->running[i] = 0;
	p->now--;
	pthread_mutex_unlock(&p->mu);
	return 0;
}

static void *crawl_away(void *arg)
{
	struct away *a = arg;

	if (!a->at_once)
		nap();
	sched_resume(a->s, a->i, item_rest);
	free(a);
	return NULL;
}

static int item_away(void *arg, size_t i, struct lb_error *err)
{
	struct probe *p = arg;
	struct away *a = malloc(sizeof(*a));
	pthread_t th;
	size_t k;

	(void)err;
	pthread_mutex_lock(&p->mu);
	p->order[p->n_order++] = i;
	if (++p->now > p->peak)
		p->peak = p->now;
	for (k = 0; k < N; k++)
		if (p->running[k] && k % 5 == i % 5)
			p->clashed = 1;
	p->running[i] = 1;
	pthread_mutex_unlock(&p->mu);
	assert_non_null(a);
	a->p = p;
	a->s = sched_current();
	a->i = i;
	a->at_once = i % 3 == 0;
	if (a->at_once) {
		crawl_away(a);	/* resumed before this returns */
		return SCHED_LATER;
	}
	assert_int_equal(pthread_create(&th, NULL, crawl_away, a), 0);
	pthread_detach(th);
	return SCHED_LATER;
}

static void test_handed_on_items_resume_once(void **state)
{
	struct probe p;
	struct lb_error err;

	(void)state;
	memset(&p, 0, sizeof(p));
	pthread_mutex_init(&p.mu, NULL);
	p.caller = pthread_self();
	lb_error_init(&err);
	assert_int_equal(sched_run(N, 8, item_away, clash5, &p, &err), 0);
	assert_each_once(&p);
	assert_int_equal(p.n_order, N);
	assert_int_equal(p.now, 0);
	assert_false(p.clashed);
	assert_true(p.peak <= 5);
	assert_true(p.peak > 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_once_at_most_jobs),
		cmocka_unit_test(test_clashing_never_together),
		cmocka_unit_test(test_one_job_is_sequential),
		cmocka_unit_test(test_failure_starts_no_more),
		cmocka_unit_test(test_handed_on_items_resume_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
