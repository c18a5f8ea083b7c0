/*
 * relate/ivf.c: the approximate top-M of large sites. Exact when every
 * cell is probed, recall on a clustered instance, the same result for any
 * thread count and row range, the hook in relate_topm().
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "linkbot/relate.h"
#include "../../src/relate/relate_int.h"

#define N 4000
#define D 24
#define M 16
#define TOPICS 80

/*
 * N vectors around TOPICS centres, small integer entries (every dot
 * product is exact in float, so the exact path and the IVF compute the
 * very same scores, ties included): centre entries in [-6, 6], noise in
 * [-2, 2] on a third of the coordinates.
 */
static float *clustered(size_t n, uint64_t seed)
{
	float *c = malloc(TOPICS * D * sizeof(*c));
	float *v = malloc(n * D * sizeof(*v));
	size_t i, k;

	assert_non_null(c);
	assert_non_null(v);
	for (i = 0; i < TOPICS * D; i++)
		c[i] = (float)((int)(relate_rand(&seed) % 13) - 6);
	for (i = 0; i < n; i++) {
		size_t t = relate_rand(&seed) % TOPICS;

		for (k = 0; k < D; k++) {
			int e = relate_rand(&seed) % 3 == 0 ?
				(int)(relate_rand(&seed) % 5) - 2 : 0;

			v[i * D + k] = c[t * D + k] + (float)e;
		}
	}
	free(c);
	return v;
}

static void exact(const float *s, size_t ns, const float *t, size_t nt,
		  const long *self, struct lb_candidates *c)
{
	struct lb_error err;

	lb_error_init(&err);
	assert_int_equal(unsetenv("LINKBOT_IVF"), 0);
	assert_int_equal(relate_topm(s, ns, t, nt, D, self, M, 0, 0, 2, c,
				     &err), 0);
}

static void ivf(const float *s, size_t ns, const float *t, size_t nt,
		const long *self, size_t nlist, size_t nprobe, size_t rb,
		size_t re, int threads, struct lb_candidates *c)
{
	struct ivf_params p = { nlist, nprobe };
	struct lb_error err;

	lb_error_init(&err);
	assert_int_equal(ivf_topm(s, ns, t, nt, D, self, M, rb, re, threads,
				  &p, c, &err), 0);
}

/* share of the exact lists' targets that c found (rows all of them) */
static double recall(const struct lb_candidates *ex,
		     const struct lb_candidates *c)
{
	size_t r, j, k, hit = 0, all = 0;

	for (r = 0; r < ex->n_src; r++)
		for (j = 0; j < M; j++) {
			uint32_t t = ex->target[r * M + j];

			if (t == LB_NO_TARGET)
				continue;
			all++;
			for (k = 0; k < M; k++)
				if (c->target[r * M + k] == t) {
					hit++;
					break;
				}
		}
	return all ? (double)hit / all : 1;
}

/* Every cell probed: the exact lists, scores and ties included. A cell
 * skipped, searched twice or a member lost would show here. */
static void test_ivf_all_cells_exact(void **state)
{
	float *v = clustered(N, 1), *t = clustered(N / 2, 2);
	long *self = malloc(N * sizeof(*self));
	struct lb_candidates a, b;
	size_t i;

	(void)state;
	assert_non_null(self);
	exact(v, N, v, N, NULL, &a);
	ivf(v, N, v, N, NULL, 20, 20, 0, 0, 2, &b);
	assert_memory_equal(a.target, b.target, N * M * sizeof(*a.target));
	assert_memory_equal(a.score, b.score, N * M * sizeof(*a.score));
	lb_candidates_release(&a);
	lb_candidates_release(&b);
	/* cross-set, a source that is a target skips itself */
	for (i = 0; i < N; i++)
		self[i] = i % 3 == 0 && i / 3 < N / 2 ? (long)(i / 3) : -1;
	exact(v, N, t, N / 2, self, &a);
	ivf(v, N, t, N / 2, self, 30, 30, 0, 0, 2, &b);
	assert_memory_equal(a.target, b.target, N * M * sizeof(*a.target));
	assert_memory_equal(a.score, b.score, N * M * sizeof(*a.score));
	for (i = 0; i < N; i++)
		if (self[i] >= 0)
			assert_true(b.target[i * M] != (uint32_t)self[i]);
	lb_candidates_release(&a);
	lb_candidates_release(&b);
	free(self);
	free(t);
	free(v);
}

/* The probes find the neighbours: recall@M on a clustered instance, and
 * more probes never lose any; each row's list is sorted and free of the
 * row itself. */
static void test_ivf_recall(void **state)
{
	float *v = clustered(N, 3);
	struct lb_candidates a, one, few;
	double r1, r4;
	size_t i, j;

	(void)state;
	exact(v, N, v, N, NULL, &a);
	ivf(v, N, v, N, NULL, 63, 1, 0, 0, 2, &one);
	ivf(v, N, v, N, NULL, 63, 4, 0, 0, 2, &few);
	r1 = recall(&a, &one);
	r4 = recall(&a, &few);
	print_message("ivf recall@%d: nprobe 1 %.4f, nprobe 4 %.4f\n", M, r1,
		      r4);
	assert_true(r1 > 0.5);
	assert_true(r4 >= 0.95);
	assert_true(r4 > r1);	/* the other probes are searched */
	for (i = 0; i < N; i++)
		for (j = 0; j < M; j++) {
			assert_true(few.target[i * M + j] != (uint32_t)i);
			if (j > 0)
				assert_true(few.score[i * M + j] <=
					    few.score[i * M + j - 1]);
		}
	lb_candidates_release(&a);
	lb_candidates_release(&one);
	lb_candidates_release(&few);
	free(v);
}

/* 1, 2 and 3 threads, and the rows cut into 3 shards, give the same
 * bytes (float vectors, not integers: the sgemm of a shard gathers other
 * rows beside a row, and must not change its scores). */
static void test_ivf_threads_shards(void **state)
{
	size_t n = 3000, d = 256, i, s;
	float *v = malloc(n * d * sizeof(*v));
	uint64_t seed = 9;
	struct lb_candidates one, two, three, parts[3], merged;
	struct ivf_params p = { 40, 3 };
	struct lb_error err;

	(void)state;
	assert_non_null(v);
	lb_error_init(&err);
	for (i = 0; i < n * d; i++)	/* 30 topics, gaussian-ish noise */
		v[i] = (float)((i / d) % 30 == (i % d) % 30) +
		       (float)((int)(relate_rand(&seed) % 1001) - 500) / 2500;
	rows_normalize(v, n, d);
	assert_int_equal(ivf_topm(v, n, v, n, d, NULL, M, 0, 0, 1, &p, &one,
				  &err), 0);
	assert_int_equal(ivf_topm(v, n, v, n, d, NULL, M, 0, 0, 2, &p, &two,
				  &err), 0);
	assert_int_equal(ivf_topm(v, n, v, n, d, NULL, M, 0, 0, 3, &p,
				  &three, &err), 0);
	assert_memory_equal(one.target, two.target, n * M * 4);
	assert_memory_equal(one.score, two.score, n * M * 4);
	assert_memory_equal(one.target, three.target, n * M * 4);
	assert_memory_equal(one.score, three.score, n * M * 4);
	for (s = 0; s < 3; s++) {
		size_t b, e;

		assert_int_equal(relate_shard_range(n, s, 3, &b, &e), 0);
		assert_int_equal(ivf_topm(v, n, v, n, d, NULL, M, b, e, 2, &p,
					  &parts[s], &err), 0);
	}
	assert_int_equal(lb_candidates_merge(parts, 3, &merged), 0);
	assert_memory_equal(one.target, merged.target, n * M * 4);
	assert_memory_equal(one.score, merged.score, n * M * 4);
	for (s = 0; s < 3; s++)
		lb_candidates_release(&parts[s]);
	lb_candidates_release(&merged);
	lb_candidates_release(&one);
	lb_candidates_release(&two);
	lb_candidates_release(&three);
	free(v);
}

/* relate_topm() hands over to the IVF when LINKBOT_IVF=1 (at any size;
 * from 200,000 targets without it) and keeps the exact path with =0. */
static void test_ivf_hook(void **state)
{
	float *v = clustered(N, 4);
	struct lb_candidates a, b, c;
	struct lb_error err;

	(void)state;
	lb_error_init(&err);
	assert_int_equal(setenv("LINKBOT_IVF", "1", 1), 0);
	assert_int_equal(setenv("LINKBOT_IVF_NPROBE", "1", 1), 0);
	assert_true(ivf_wanted(10));
	assert_int_equal(relate_topm(v, N, v, N, D, NULL, M, 0, 0, 2, &a,
				     &err), 0);
	ivf(v, N, v, N, NULL, 253, 1, 0, 0, 2, &b);	/* 4 sqrt(4000) = 253 */
	assert_memory_equal(a.target, b.target, N * M * sizeof(*a.target));
	assert_int_equal(setenv("LINKBOT_IVF", "0", 1), 0);
	assert_false(ivf_wanted(1000000));
	exact(v, N, v, N, NULL, &c);
	assert_true(recall(&c, &b) < 1);
	assert_int_equal(unsetenv("LINKBOT_IVF_NPROBE"), 0);
	assert_false(ivf_wanted(199999));
	assert_true(ivf_wanted(200000));
	lb_candidates_release(&a);
	lb_candidates_release(&b);
	lb_candidates_release(&c);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ivf_all_cells_exact),
		cmocka_unit_test(test_ivf_recall),
		cmocka_unit_test(test_ivf_threads_shards),
		cmocka_unit_test(test_ivf_hook),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
