/*
 * relate/: exact top-M against brute force, symmetry, shards, threads,
 * text normalisation, topic relatedness, languages, export.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "linkbot/relate.h"
#include "linkbot/sha256.h"
#include <lapacke.h>

#include "../../src/relate/relate_int.h"

/* Small integer entries: every dot product is exact in float, so the
 * brute force below computes the very same scores, ties included. */
static float *int_vectors(size_t n, size_t d, uint64_t seed)
{
	float *v = malloc(n * d * sizeof(*v));
	size_t i;

	assert_non_null(v);
	for (i = 0; i < n * d; i++)
		v[i] = (float)((int)(relate_rand(&seed) % 7) - 3);
	return v;
}

/* Reference: full sort of every candidate, (score desc, target asc). */
static void brute(const float *s, size_t ns, const float *t, size_t nt,
		  size_t d, const long *self, int sym, size_t m, size_t i,
		  uint32_t *bt, float *bs)
{
	size_t j, k, q, n = 0;

	for (k = 0; k < m; k++) {
		bt[k] = LB_NO_TARGET;
		bs[k] = 0;
	}
	(void)ns;
	for (j = 0; j < nt; j++) {
		float x = 0;

		if ((self && self[i] == (long)j) || (sym && i == j))
			continue;
		for (k = 0; k < d; k++)
			x += s[i * d + k] * t[j * d + k];
		/* insert into sorted list of n (<= m) */
		for (q = n; q > 0 && (bs[q - 1] < x); q--) {
			if (q < m) {
				bt[q] = bt[q - 1];
				bs[q] = bs[q - 1];
			}
		}
		if (q < m) {
			bt[q] = (uint32_t)j;
			bs[q] = x;
			if (n < m)
				n++;
		}
	}
}

static void check_brute(const float *s, size_t ns, const float *t,
			size_t nt, size_t d, const long *self, size_t m,
			const struct lb_candidates *c, size_t rb)
{
	uint32_t *bt = malloc(m * sizeof(*bt));
	float *bs = malloc(m * sizeof(*bs));
	size_t r, k;

	assert_non_null(bt);
	assert_non_null(bs);
	for (r = 0; r < c->n_src; r++) {
		brute(s, ns, t, nt, d, self, s == t, m, rb + r, bt, bs);
		for (k = 0; k < m; k++) {
			assert_int_equal(c->target[r * m + k], bt[k]);
			assert_true(c->score[r * m + k] == bs[k]);
		}
	}
	free(bt);
	free(bs);
}

static void test_topm_cross(void **state)
{
	size_t ns = 700, nt = 1100, d = 5, m = 9;
	float *s = int_vectors(ns, d, 1), *t = int_vectors(nt, d, 2);
	long *self = malloc(ns * sizeof(*self));
	struct lb_candidates c;
	struct lb_error err;
	size_t i;

	(void)state;
	lb_error_init(&err);
	for (i = 0; i < ns; i++)
		self[i] = i % 3 ? (long)(i * 7 % nt) : -1;
	assert_int_equal(relate_topm(s, ns, t, nt, d, self, m, 0, 0, 2, &c,
				     &err), 0);
	assert_int_equal(c.n_src, ns);
	check_brute(s, ns, t, nt, d, self, m, &c, 0);
	lb_candidates_release(&c);
	free(s);
	free(t);
	free(self);
}

static void test_topm_symmetric(void **state)
{
	size_t n = 1300, d = 4, m = 7;
	float *v = int_vectors(n, d, 3);
	struct lb_candidates c;
	struct lb_error err;

	(void)state;
	lb_error_init(&err);
	assert_int_equal(relate_topm(v, n, v, n, d, NULL, m, 0, 0, 2, &c,
				     &err), 0);
	check_brute(v, n, v, n, d, NULL, m, &c, 0);
	lb_candidates_release(&c);
	setenv("LINKBOT_NO_AVX2", "1", 1);
	assert_int_equal(relate_topm(v, n, v, n, d, NULL, m, 0, 0, 2, &c,
				     &err), 0);
	unsetenv("LINKBOT_NO_AVX2");
	check_brute(v, n, v, n, d, NULL, m, &c, 0);
	lb_candidates_release(&c);
	free(v);
}

/*
 * Vectors that bf16 cannot hold (10 significant bits) but whose dot
 * products are exact in float (20-bit products, 16 of them): targets that
 * differ below bf16's resolution, so the prefilter's scores tie or
 * reorder and only the exact recheck can pick the right top-M.
 */
static float *fine_vectors(size_t n, size_t d, uint64_t seed)
{
	float *v = malloc(n * d * sizeof(*v));
	size_t i, k;

	assert_non_null(v);
	for (i = 0; i < n; i++)
		for (k = 0; k < d; k++) {
			/* a shared pattern plus small individual steps */
			int base = (int)((k * 37 + seed) % 512) + 256;

			v[i * d + k] = (float)(base + (int)(relate_rand(&seed) %
							    9) - 4);
		}
	return v;
}

/*
 * Duplicate pages: 400 targets with one same vector tie exactly for every
 * source, so the bf16 band lists fill with ties that no band can thin and
 * must be thinned with exact scores (ties by the lower target).
 */
static void test_topm_duplicates(void **state)
{
	size_t n = 300, nt = 900, d = 16, m = 12, i, k;
	float *s = fine_vectors(n, d, 21), *t = fine_vectors(nt, d, 22);
	struct lb_candidates c;
	struct lb_error err;

	(void)state;
	lb_error_init(&err);
	for (i = 100; i < 500; i++)
		for (k = 0; k < d; k++)
			t[i * d + k] = t[99 * d + k];
	for (i = 0; i < n; i += 3)	/* a third of the sources are copies */
		for (k = 0; k < d; k++)
			s[i * d + k] = t[99 * d + k];
	assert_int_equal(relate_topm(s, n, t, nt, d, NULL, m, 0, 0, 2, &c,
				     &err), 0);
	check_brute(s, n, t, nt, d, NULL, m, &c, 0);
	lb_candidates_release(&c);
	assert_int_equal(relate_topm(t, nt, t, nt, d, NULL, m, 0, 0, 2, &c,
				     &err), 0);
	check_brute(t, nt, t, nt, d, NULL, m, &c, 0);
	lb_candidates_release(&c);
	free(s);
	free(t);
}

static void test_topm_fine(void **state)
{
	size_t n = 700, nt = 900, d = 16, m = 12;
	float *s = fine_vectors(n, d, 11), *t = fine_vectors(nt, d, 12);
	struct lb_candidates c;
	struct lb_error err;

	(void)state;
	lb_error_init(&err);
	assert_int_equal(relate_topm(s, n, t, nt, d, NULL, m, 0, 0, 2, &c,
				     &err), 0);
	check_brute(s, n, t, nt, d, NULL, m, &c, 0);
	lb_candidates_release(&c);
	assert_int_equal(relate_topm(s, n, s, n, d, NULL, m, 0, 0, 2, &c,
				     &err), 0);
	check_brute(s, n, s, n, d, NULL, m, &c, 0);
	lb_candidates_release(&c);
	free(s);
	free(t);
	/* cross-set where each source's own page (self, excluded) and M - 2
	 * near copies are its best matches, then a gap: the bound a row's
	 * first chunk gives its floor must leave self out */
	{
		size_t ns = 40, ntt = 600, mm = 4, i, k, r;
		uint64_t seed = 21;
		long *self = malloc(ns * sizeof(*self));

		s = malloc(ns * d * sizeof(*s));
		t = malloc(ntt * d * sizeof(*t));
		assert_non_null(self);
		assert_non_null(s);
		assert_non_null(t);
		for (i = 0; i < ns * d; i++)	/* 10 bits, signed */
			s[i] = (float)((int)(relate_rand(&seed) % 1535) - 767);
		for (i = 0; i < ntt * d; i++)
			t[i] = (float)((int)(relate_rand(&seed) % 1535) - 767);
		for (i = 0; i < ns; i++) {
			self[i] = (long)i;
			memcpy(t + i * d, s + i * d, d * sizeof(*t));
			for (r = 0; r < mm - 2; r++)
				for (k = 0; k < d; k++)
					t[(ns + i * (mm - 2) + r) * d + k] =
						s[i * d + k] + (float)(r + 1);
		}
		assert_int_equal(relate_topm(s, ns, t, ntt, d, self, mm, 0, 0,
					     2, &c, &err), 0);
		check_brute(s, ns, t, ntt, d, self, mm, &c, 0);
		lb_candidates_release(&c);
		free(self);
		free(s);
		free(t);
	}
}

/* Shards merged == unsharded, bit for bit; thread count does not matter.
 * Real-valued vectors here, so rounding would show. */
static void shards_equal(int sym)
{
	size_t n = 1500, nt = 1200, d = 16, m = 10, i;
	float *v = int_vectors(n, d, 4), *t = sym ? v : int_vectors(nt, d, 5);
	struct lb_candidates all, one, parts[4], merged;
	struct lb_error err;
	unsigned s, k;

	if (sym)
		nt = n;
	for (i = 0; i < n * d; i++)
		v[i] *= 0.3377f;
	rows_normalize(v, n, d);
	lb_error_init(&err);
	assert_int_equal(relate_topm(v, n, t, nt, d, NULL, m, 0, 0, 2, &all,
				     &err), 0);
	assert_int_equal(relate_topm(v, n, t, nt, d, NULL, m, 0, 0, 1, &one,
				     &err), 0);
	assert_memory_equal(all.target, one.target, n * m * 4);
	assert_memory_equal(all.score, one.score, n * m * 4);
	lb_candidates_release(&one);
	/* the scalar scan gives what the AVX2 scan gives (sgemm scores) */
	setenv("LINKBOT_NO_BF16", "1", 1);
	assert_int_equal(relate_topm(v, n, t, nt, d, NULL, m, 0, 0, 2, &one,
				     &err), 0);
	setenv("LINKBOT_NO_AVX2", "1", 1);
	assert_int_equal(relate_topm(v, n, t, nt, d, NULL, m, 0, 0, 2,
				     &parts[0], &err), 0);
	unsetenv("LINKBOT_NO_AVX2");
	unsetenv("LINKBOT_NO_BF16");
	assert_memory_equal(parts[0].target, one.target, n * m * 4);
	assert_memory_equal(parts[0].score, one.score, n * m * 4);
	lb_candidates_release(&parts[0]);
	/* the bf16 prefilter (where the CPU has it) keeps the same top-M;
	 * its exact scores come from another order of the sums than
	 * sgemm's, so they agree to rounding */
	for (i = 0; i < n * m; i++)
		assert_true(fabsf(all.score[i] - one.score[i]) < 1e-5f);
	for (k = 2; k <= 4; k++) {
		for (s = 0; s < k; s++) {
			size_t b, e;

			assert_int_equal(relate_shard_range(n, s, k, &b, &e), 0);
			assert_int_equal(relate_topm(v, n, t, nt, d, NULL, m, b,
						     e, 2, &parts[s], &err), 0);
			assert_int_equal(parts[s].n_src, e - b);
		}
		assert_int_equal(lb_candidates_merge(parts, k, &merged), 0);
		assert_int_equal(merged.n_src, n);
		assert_memory_equal(all.target, merged.target, n * m * 4);
		assert_memory_equal(all.score, merged.score, n * m * 4);
		lb_candidates_release(&merged);
		for (s = 0; s < k; s++)
			lb_candidates_release(&parts[s]);
	}
	assert_int_equal(relate_shard_range(n, 4, 4, &i, &i), -1);
	lb_candidates_release(&all);
	lb_candidates_release(&one);
	if (!sym)
		free(t);
	free(v);
}

static void test_shards_symmetric(void **state)
{
	(void)state;
	shards_equal(1);
}

static void test_shards_cross(void **state)
{
	(void)state;
	shards_equal(0);
}

/*
 * Small problems (every target in one block) take topm.c's direct path;
 * it keeps what the blocked path keeps, bit for bit: scores, targets and
 * order, with bf16 (where the CPU has it) and without, same set and
 * cross set with self, a row range, fewer targets than M, and a NaN.
 */
static void small_equal(size_t ns, size_t nt, size_t d, size_t m, int sym,
			int nan, int range)
{
	float *s = int_vectors(ns, d, 31 + ns), *t;
	long *self = NULL;
	struct lb_candidates a, b;
	struct lb_error err;
	size_t i, rb = range ? ns / 3 : 0, re = range ? ns - 1 : 0;
	int k;

	for (i = 0; i < ns * d; i++)
		s[i] *= 0.3377f;
	rows_normalize(s, ns, d);
	t = s;
	if (!sym) {
		t = int_vectors(nt, d, 41 + nt);
		for (i = 0; i < nt * d; i++)
			t[i] *= 0.291f;
		rows_normalize(t, nt, d);
		self = malloc(ns * sizeof(*self));
		assert_non_null(self);
		for (i = 0; i < ns; i++)
			self[i] = i % 4 ? (long)(i * 5 % nt) : -1;
	}
	if (nan)
		t[3 * d + 1] = NAN;
	lb_error_init(&err);
	for (k = 0; k < 2; k++) {
		if (k == 1)
			setenv("LINKBOT_NO_BF16", "1", 1);
		assert_int_equal(relate_topm(s, ns, t, sym ? ns : nt, d, self,
					     m, rb, re, 1, &a, &err), 0);
		setenv("LINKBOT_NO_TOPM_SMALL", "1", 1);
		assert_int_equal(relate_topm(s, ns, t, sym ? ns : nt, d, self,
					     m, rb, re, 2, &b, &err), 0);
		unsetenv("LINKBOT_NO_TOPM_SMALL");
		unsetenv("LINKBOT_NO_BF16");
		assert_int_equal(a.n_src, b.n_src);
		assert_memory_equal(a.target, b.target, a.n_src * m * 4);
		assert_memory_equal(a.score, b.score, a.n_src * m * 4);
		lb_candidates_release(&a);
		lb_candidates_release(&b);
	}
	if (!sym)
		free(t);
	free(s);
	free(self);
}

static void test_topm_small(void **state)
{
	(void)state;
	small_equal(100, 100, 20, 64, 1, 0, 0);	/* a night's site */
	small_equal(100, 100, 20, 20, 1, 0, 0);	/* its smoothing */
	small_equal(300, 300, 35, 9, 1, 0, 1);	/* 3 chunks of sgemm, a shard */
	small_equal(700, 500, 16, 12, 0, 0, 1);	/* sources past a block */
	small_equal(700, 500, 16, 12, 0, 0, 0);
	small_equal(40, 30, 7, 64, 0, 0, 0);	/* fewer targets than M */
	small_equal(100, 120, 20, 16, 0, 1, 1);	/* a NaN target */
	small_equal(90, 90, 20, 16, 1, 1, 0);
}

/*
 * The small path's selection (keys_top() in topm.c: a quickselect and a
 * merge sort of integer keys instead of the heaps) against the blocked
 * path's heaps, on rows of heavy ties: vectors of -1, 0 and 1 in 3
 * dimensions give a handful of distinct scores, zeros among them (and
 * -0 where a product's rounding gives it), so the order of equal scores
 * by target decides most of each list. Every M around the sort's runs
 * (16) and merges, below, at and above the number of targets.
 */
static void test_topm_small_ties(void **state)
{
	static const size_t ms[] = { 1, 2, 15, 16, 17, 31, 33, 64, 97, 98,
				     99, 100, 130 };
	size_t n[] = { 99, 100, 300, 512 }, a, b, i, nt;
	uint64_t seed = 77;
	struct lb_candidates x, y;
	struct lb_error err;

	(void)state;
	lb_error_init(&err);
	for (a = 0; a < sizeof(n) / sizeof(n[0]); a++) {
		float *v = malloc(n[a] * 3 * sizeof(*v));

		assert_non_null(v);
		for (i = 0; i < n[a] * 3; i++)
			v[i] = (float)((int)(relate_rand(&seed) % 3) - 1);
		for (i = 0; i < 3; i++)
			v[i] = -0.0f;	/* a row of -0 */
		nt = n[a];
		for (b = 0; b < sizeof(ms) / sizeof(ms[0]); b++) {
			assert_int_equal(relate_topm(v, nt, v, nt, 3, NULL,
						     ms[b], 0, 0, 1, &x, &err),
					 0);
			setenv("LINKBOT_NO_TOPM_SMALL", "1", 1);
			assert_int_equal(relate_topm(v, nt, v, nt, 3, NULL,
						     ms[b], 0, 0, 2, &y, &err),
					 0);
			unsetenv("LINKBOT_NO_TOPM_SMALL");
			assert_memory_equal(x.target, y.target,
					    nt * ms[b] * sizeof(*x.target));
			assert_memory_equal(x.score, y.score,
					    nt * ms[b] * sizeof(*x.score));
			lb_candidates_release(&x);
			lb_candidates_release(&y);
		}
		free(v);
	}
}

/*
 * The small path's keys of a row without a branch (topm.c, row_keys())
 * against the loop with its tests (LINKBOT_NO_ROW_KEYS): the same lists,
 * on rows of few distinct scores (ties, -0 and +0, infinities), the
 * same set and two sets with a self, the AVX2 loop and the plain one
 * (LINKBOT_NO_AVX2), and a row with a NaN (the loop's path).
 */
static void test_topm_row_keys(void **state)
{
	static const float vals[] = { -0.0f, 0.0f, 0.5f, -0.5f, 1.0f,
				      -1.0f, 0.25f, 1e-30f, -1e-30f };
	size_t ns[] = { 2, 7, 8, 9, 33, 99, 100, 257, 512 }, a, i, m, r;
	uint64_t seed = 123;
	struct lb_error err;

	(void)state;
	lb_error_init(&err);
	for (r = 0; r < 2 * sizeof(ns) / sizeof(ns[0]); r++) {
		size_t n = ns[r / 2], d = 4, nsrc = n / 2 + 1;
		float *v = malloc(n * d * sizeof(*v));
		long *self = malloc(nsrc * sizeof(*self));
		struct lb_candidates x, y;

		for (i = 0; i < n * d; i++)
			v[i] = vals[relate_rand(&seed) % 9];
		if (r % 2 && n > 8)
			v[5 * d + 1] = NAN;	/* a NaN in a few rows */
		for (i = 0; i < nsrc; i++)
			self[i] = relate_rand(&seed) % 3 ?
				  (long)(relate_rand(&seed) % n) : -1;
		m = 1 + relate_rand(&seed) % (n + 3);
		for (a = 0; a < 4; a++) {
			int sym = a % 2 == 0;

			if (a >= 2)
				setenv("LINKBOT_NO_AVX2", "1", 1);
			assert_int_equal(relate_topm(v, sym ? n : nsrc, v, n, d,
						     sym ? NULL : self, m, 0, 0,
						     1, &x, &err), 0);
			setenv("LINKBOT_NO_ROW_KEYS", "1", 1);
			assert_int_equal(relate_topm(v, sym ? n : nsrc, v, n, d,
						     sym ? NULL : self, m, 0, 0,
						     1, &y, &err), 0);
			unsetenv("LINKBOT_NO_ROW_KEYS");
			unsetenv("LINKBOT_NO_AVX2");
			assert_memory_equal(x.target, y.target,
					    x.n_src * m * sizeof(*x.target));
			assert_memory_equal(x.score, y.score,
					    x.n_src * m * sizeof(*x.score));
			lb_candidates_release(&x);
			lb_candidates_release(&y);
		}
		free(v);
		free(self);
	}
}

/* The keys against the heap on random rows: few distinct scores, +0 and
 * -0 among them (equal for the heap: the lower target first), every M. */
static int median_cmp(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

/*
 * relate_median() against qsort() (random_floor's former median): the
 * same bits on 20,000 arrays of 1-301 values drawn from a handful
 * (-0, +0, ±1, 1e-30, ±inf: long runs of equal values, zeros of both
 * signs at the median) or from random floats, and with a NaN.
 */
static void test_relate_median(void **state)
{
	static const float few[] = { -0.0f, 0.0f, 1.0f, -1.0f, 1e-30f,
				     INFINITY, -INFINITY, 0.0f, -0.0f };
	float a[301], b[301];
	uint64_t st = 99;
	size_t it, n, i, zero_med = 0;

	(void)state;
	for (it = 0; it < 20000; it++) {
		n = 1 + relate_rand(&st) % 301;
		for (i = 0; i < n; i++) {
			uint64_t r = relate_rand(&st);

			a[i] = it % 3 ? few[r % 9] :
				(float)((double)(r % 2001) - 1000) / 7.0f;
			if (it % 3 == 2 && r % 5 == 0)
				a[i] = r % 2 ? -0.0f : 0.0f;
		}
		if (it % 97 == 0)
			a[relate_rand(&st) % n] = NAN;
		memcpy(b, a, n * sizeof(*a));
		qsort(b, n, sizeof(*b), median_cmp);
		zero_med += b[n / 2] == 0;
		{
			float m = relate_median(a, n);

			if (memcmp(&m, &b[n / 2], sizeof(m)) != 0 &&
			    !(isnan(m) && isnan(b[n / 2])))
				fail_msg("array %zu (n %zu): median %g, the "
					 "sort's %g", it, n, m, b[n / 2]);
		}
	}
	assert_true(zero_med > 1000);	/* the zeros' rule was exercised */
}

/*
 * cand_order() against qsort(cand_cmp) (rerank's rows): the same items
 * in the same order on 20,000 rows of 0-200 candidates with few distinct
 * scores (ties broken by target; equal items, -0 and +0 among them,
 * kept in their order) and nearly sorted rows.
 */
static void test_cand_order(void **state)
{
	static const float few[] = { -0.0f, 0.0f, 0.5f, 0.25f, -1.0f };
	struct cand a[200], b[200];
	uint64_t st = 7;
	size_t it, n, i;

	(void)state;
	for (it = 0; it < 20000; it++) {
		n = relate_rand(&st) % 200;
		for (i = 0; i < n; i++) {
			uint64_t r = relate_rand(&st);

			a[i].s = it % 2 ? few[r % 5] :
				1.0f - (float)i / 256.0f + (float)(r % 7) / 512.0f;
			a[i].t = (uint32_t)(it % 4 == 1 ? r % 4 : r % 1000);
		}
		memcpy(b, a, n * sizeof(*a));
		qsort(b, n, sizeof(*b), cand_cmp);
		cand_order(a, n);
		if (n && memcmp(a, b, n * sizeof(*a)) != 0)
			fail_msg("row %zu (n %zu) not in qsort's order", it, n);
	}
}

/*
 * relate_dots() four rows a step (AVX) against one at a time: the same
 * bits, every d from 1 to 80 (the transposed steps and the rest), rows
 * of random floats of mixed magnitudes and signs, -0, and subnormals.
 */
static void test_relate_dots(void **state)
{
	enum { D = 80, R = 11 };
	float a[D], rows[R][D];
	const float *b[R];
	double one[R], four[R];
	uint64_t st = 3;
	size_t d, n, i, k, it;

	(void)state;
	if (!relate_dots_wide())
		skip();
	for (it = 0; it < 400; it++)
		for (d = 1; d <= D; d += 1 + it % 3) {
			n = relate_rand(&st) % (R + 1);
			for (k = 0; k < d; k++)
				a[k] = (float)((double)(relate_rand(&st) % 20001) -
					       10000) * (k % 7 ? 1e-4f : 1e3f);
			for (i = 0; i < n; i++) {
				for (k = 0; k < d; k++) {
					uint64_t r = relate_rand(&st);

					rows[i][k] = r % 13 == 0 ? -0.0f :
						r % 17 == 0 ? 1e-40f :
						(float)((double)(r % 30001) - 15000) /
						(float)(1 + r % 977);
				}
				b[i] = rows[i];
			}
			relate_dots(a, b, n, d, 0, one);
			relate_dots(a, b, n, d, 1, four);
			if (n && memcmp(one, four, n * sizeof(*one)) != 0)
				fail_msg("d %zu n %zu: the wide dots differ", d, n);
		}
}

/*
 * lsa_orth() against LAPACKE's row-major sgeqrf + sorgqr (what it
 * replaced): the same bits on random matrices of 1-300 rows and 1-60
 * columns, and -1 for a NaN, as LAPACKE's check gave.
 */
static void test_lsa_orth(void **state)
{
	uint64_t st = 11;
	size_t it, rows, l, i;

	(void)state;
	for (it = 0; it < 300; it++) {
		float *a, *b, *ta, *tb;

		l = 1 + relate_rand(&st) % 60;
		rows = l + relate_rand(&st) % 240;
		a = malloc(rows * l * sizeof(*a));
		b = malloc(rows * l * sizeof(*b));
		ta = malloc(l * sizeof(*ta));
		tb = malloc(l * sizeof(*tb));
		for (i = 0; i < rows * l; i++)
			a[i] = b[i] = (float)((double)(relate_rand(&st) % 20001) -
					      10000) / 3000.0f;
		assert_int_equal(lsa_orth(a, rows, l, ta), 0);
		assert_int_equal(LAPACKE_sgeqrf(LAPACK_ROW_MAJOR, (lapack_int)rows,
						(lapack_int)l, b, (lapack_int)l,
						tb), 0);
		assert_int_equal(LAPACKE_sorgqr(LAPACK_ROW_MAJOR, (lapack_int)rows,
						(lapack_int)l, (lapack_int)l, b,
						(lapack_int)l, tb), 0);
		if (memcmp(a, b, rows * l * sizeof(*a)) != 0)
			fail_msg("%zu x %zu: not LAPACKE's bits", rows, l);
		a[relate_rand(&st) % (rows * l)] = NAN;
		assert_int_equal(lsa_orth(a, rows, l, ta), -1);
		free(a);
		free(b);
		free(ta);
		free(tb);
	}
}

static void test_topm_keys(void **state)
{
	static const float vals[] = { -0.0f, 0.0f, 0.5f, -0.5f, 1.0f,
				      -INFINITY, INFINITY, 1e-30f };
	float s[300], hs[300], out_s[300];
	uint32_t t[300], ht[300], out_t[300], cnt;
	uint64_t k[300], tmp[300];
	uint64_t seed = 5;
	size_t n, m, i, got, round;

	(void)state;
	for (round = 0; round < 400; round++) {
		n = 1 + relate_rand(&seed) % 300;
		m = 1 + relate_rand(&seed) % 320;
		for (i = 0; i < n; i++) {
			s[i] = vals[relate_rand(&seed) % 8];
			t[i] = (uint32_t)(n - 1 - i) * 7;	/* distinct */
			k[i] = relate_rank_key(s[i], t[i]);
		}
		/* the reference: the heap and its pops */
		cnt = 0;
		for (i = 0; i < n; i++)
			relate_heap_push(hs, ht, &cnt, m, s[i], t[i]);
		got = cnt;
		for (i = 0; i < got; i++) {	/* worst first */
			size_t best = 0, j;

			for (j = 1; j < cnt; j++)
				if (hs[j] > hs[best] ||
				    (hs[j] == hs[best] && ht[j] < ht[best]))
					best = j;
			out_s[i] = hs[best];
			out_t[i] = ht[best];
			hs[best] = hs[cnt - 1];
			ht[best] = ht[cnt - 1];
			cnt--;
		}
		assert_int_equal(relate_keys_top(k, n, m, tmp), got);
		for (i = 0; i < got; i++) {
			uint32_t tt = ~(uint32_t)k[i];

			assert_int_equal(tt, out_t[i]);
			for (size_t j = 0; j < n; j++)
				if (t[j] == tt)
					assert_memory_equal(&s[j], &out_s[i],
							    sizeof(float));
		}
	}
}

static void test_topm_padding(void **state)
{
	float v[] = { 1, 0, 0, 1, 1, 1 };
	struct lb_candidates c;
	struct lb_error err;

	(void)state;
	lb_error_init(&err);
	assert_int_equal(relate_topm(v, 3, v, 3, 2, NULL, 4, 0, 0, 2, &c,
				     &err), 0);
	/* 2 other pages for 4 slots: 2 padded */
	assert_int_equal(c.target[0], 2);
	assert_int_equal(c.target[1], 1);
	assert_int_equal(c.target[2], LB_NO_TARGET);
	assert_int_equal(c.target[3], LB_NO_TARGET);
	assert_true(c.score[3] == 0);
	lb_candidates_release(&c);
	assert_int_equal(relate_topm(v, 3, v, 3, 2, NULL, 4, 2, 5, 2, &c,
				     &err), -1);
	assert_int_equal(err.code, LB_EUSAGE);
}

/* ---- text ---- */

struct toks {
	char buf[512];
};

static void collect(const char *tok, size_t len, void *arg)
{
	struct toks *t = arg;

	strncat(t->buf, tok, len);
	strcat(t->buf, " ");
}

static void test_tokens(void **state)
{
	struct toks t;
	struct lb_error err;

	(void)state;
	lb_error_init(&err);
	memset(&t, 0, sizeof(t));
	/* case fold, NFKC ligature, stop words, digits, stemming */
	assert_int_equal(text_tokens("The RUNNING ﬁles of 2024 are Databases",
				     "en", collect, &t, &err), 0);
	assert_string_equal(t.buf, "run file databas ");
	memset(&t, 0, sizeof(t));
	assert_int_equal(text_tokens("Straße STRASSE", "de-DE", collect, &t,
				     &err), 0);
	assert_string_equal(t.buf, "strass strass ");
	memset(&t, 0, sizeof(t));
	/* unknown language: no stemming, still folded; ideographs one by one */
	assert_int_equal(text_tokens("Running 東京", "xx", collect, &t, &err),
			 0);
	assert_string_equal(t.buf, "running 東 京 ");
	memset(&t, 0, sizeof(t));
	assert_int_equal(text_tokens("bad \xff utf8", "en", collect, &t, &err),
			 -1);
	assert_int_equal(stopword_is("en", "the", 3), 1);
	assert_int_equal(stopword_is("fr", "même", strlen("même")), 1);
	assert_int_equal(stopword_is("en", "python", 6), 0);
}

/*
 * Text all in ASCII skips utf8proc (text.c, tokenize_ascii()): its tokens are
 * those of the same text read by utf8proc, which a trailing " é" (one
 * code point: no token) forces. Every printable ASCII character, tabs,
 * runs of digits, words too long, stop words, languages with and without
 * a stemmer.
 */
static void test_tokens_ascii(void **state)
{
	static const char *texts[] = {
		"The RUNNING files of 2024 are Databases",
		"snake_case kebab-case CamelCase x2 a1b2 42 7 I a an",
		"tabs\tand\nnew lines\r\nhere; commas, dots. (parens) [x] {y}",
		"!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		"[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~ end",
		"Supercalifragilisticexpialidocious-and-a-word-of-more-than-"
		"sixty-four-letters-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aaaaaaaaaaaaaaa then short",
		"",
	};
	static const char *langs[] = { "en", "de-DE", "xx", NULL };
	struct toks a, b;
	struct lb_error err;
	char slow[600];
	size_t i, l;

	(void)state;
	lb_error_init(&err);
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		for (l = 0; l < sizeof(langs) / sizeof(langs[0]); l++) {
			memset(&a, 0, sizeof(a));
			memset(&b, 0, sizeof(b));
			snprintf(slow, sizeof(slow), "%s é", texts[i]);
			assert_int_equal(text_tokens(texts[i], langs[l],
						     collect, &a, &err), 0);
			assert_int_equal(text_tokens(slow, langs[l], collect,
						     &b, &err), 0);
			assert_string_equal(a.buf, b.buf);
		}
}

/*
 * The same on random ASCII texts (the ASCII path reads a word at a time):
 * words of every case, digits alone and mixed, stop words, words of 63 to
 * 66 characters around TOK_MAX (64) and every separator, in 2,000 texts.
 */
static void test_tokens_ascii_random(void **state)
{
	static const char *words[] = { "the", "And", "RUNNING", "files",
				       "2024", "x2", "a", "I", "databases",
				       "caf", "o'clock", "re-run" };
	static const char *langs[] = { "en", "xx" };
	struct toks a, b;
	struct lb_error err;
	char text[420], slow[440];
	uint64_t seed = 25;
	size_t i, len, k, n;

	(void)state;
	lb_error_init(&err);
	for (i = 0; i < 2000; i++) {
		len = 0;
		while (len < 300) {
			k = relate_rand(&seed) % 4;
			if (k == 0) {	/* a word of the list */
				const char *w = words[relate_rand(&seed) % 12];

				memcpy(text + len, w, strlen(w));
				len += strlen(w);
			} else if (k == 1) {	/* around TOK_MAX */
				n = 63 + relate_rand(&seed) % 4;
				while (n-- > 0)
					text[len++] = (char)("aZ7"
						[relate_rand(&seed) % 3]);
			} else {	/* any printable character, or a tab */
				n = relate_rand(&seed) % 96;
				text[len++] = (char)(n == 95 ? '\t' : ' ' + n);
			}
		}
		text[len] = '\0';
		snprintf(slow, sizeof(slow), "%s é", text);
		for (k = 0; k < 2; k++) {
			memset(&a, 0, sizeof(a));
			memset(&b, 0, sizeof(b));
			assert_int_equal(text_tokens(text, langs[k], collect,
						     &a, &err), 0);
			assert_int_equal(text_tokens(slow, langs[k], collect,
						     &b, &err), 0);
			assert_string_equal(a.buf, b.buf);
		}
	}
}

/* Tokens read on several threads give the very same matrix as one. */
static void test_text_threads(void **state)
{
	enum { N = 300 };
	static const char *w[] = { "alpha", "beta", "gamma", "delta", "epsilon",
				   "zeta", "eta", "theta", "iota", "kappa",
				   "lambda", "mu", "Straße", "ﬁle", "東京" };
	struct lb_doc docs[N];
	const struct lb_doc *p[N];
	struct csr one, many;
	struct lb_error err;
	uint64_t seed = 9;
	size_t i, k;
	int plain, nt;

	(void)state;
	lb_error_init(&err);
	for (i = 0; i < N; i++) {
		char buf[512] = "";

		for (k = 0; k < 30; k++) {
			strcat(buf, w[relate_rand(&seed) % 15]);
			strcat(buf, k % 7 ? " " : "s ");
		}
		lb_doc_init(&docs[i]);
		docs[i].text = strdup(buf);
		docs[i].title = strdup(w[i % 15]);
		docs[i].language = strdup(i % 3 ? "en" : "de");
		snprintf(buf, sizeof(buf), "https://t.test/%zu", i);
		docs[i].url = strdup(buf);
		/* links (anchor text, link terms) are merged in page order */
		for (k = 0; k < 3; k++) {
			snprintf(buf, sizeof(buf), "https://t.test/%zu",
				 (i * 7 + k * 31 + 1) % N);
			assert_int_equal(lb_doclinks_add(&docs[i].links, buf,
						 w[(i + k) % 15], &err), 0);
		}
		p[i] = &docs[i];
	}
	for (plain = 0; plain <= 1; plain++)
		for (nt = 2; nt <= 3; nt++) {
			assert_int_equal(text_vectors(p, N, NULL, plain, 1, &one, &err),
					 0);
			assert_int_equal(text_vectors(p, N, NULL, plain, nt,
						      &many, &err), 0);
			assert_int_equal(one.n_cols, many.n_cols);
			assert_memory_equal(one.ptr, many.ptr,
					    (N + 1) * sizeof(size_t));
			assert_true(one.ptr[N] > 0);
			assert_memory_equal(one.col, many.col,
					    one.ptr[N] * sizeof(uint32_t));
			assert_memory_equal(one.val, many.val,
					    one.ptr[N] * sizeof(float));
			csr_release(&one);
			csr_release(&many);
		}
	for (i = 0; i < N; i++)
		lb_doc_release(&docs[i]);
}

static void csr_equal(const struct csr *a, const struct csr *b, size_t n)
{
	assert_int_equal(a->n_cols, b->n_cols);
	assert_memory_equal(a->ptr, b->ptr, (n + 1) * sizeof(size_t));
	assert_memory_equal(a->col, b->col, a->ptr[n] * sizeof(uint32_t));
	assert_memory_equal(a->val, b->val, a->ptr[n] * sizeof(float));
}

/*
 * A page's terms made when it was stored (relate_terms_doc(), the crawl)
 * give the very matrix its tokens give at build time: languages with and
 * without a stemmer and stop list, ideographs, a field that is not
 * UTF-8, fields missing, repeated words across fields, links; on one
 * thread and several. Terms of another version or cut short are not
 * used; valid terms are (another page's make another matrix); the plain
 * baseline never uses them.
 */
static void test_text_terms(void **state)
{
	enum { N = 90 };
	static const char *w[] = { "Running", "databases", "the", "Straße",
				   "ﬁles", "東京", "of", "2024", "x", "Café",
				   "über", "runs", "kitten", "a1b2", "DATA" };
	static const char *langs[] = { "en", "de-DE", "xx", NULL, "fr" };
	struct lb_doc docs[N];
	const struct lb_doc *p[N];
	struct relate_terms *t = relate_terms_new();
	struct csr plain, with, made, other;
	struct lb_error err;
	uint64_t seed = 5;
	size_t i, k;
	char buf[600];
	int nt;

	(void)state;
	assert_non_null(t);
	lb_error_init(&err);
	for (i = 0; i < N; i++) {
		lb_doc_init(&docs[i]);
		buf[0] = '\0';
		for (k = 0; k < 40; k++) {
			strcat(buf, w[relate_rand(&seed) % 15]);
			strcat(buf, k % 5 ? " " : ". ");
		}
		docs[i].text = strdup(i % 17 == 3 ? "bad \xff text" : buf);
		docs[i].title = strdup(w[i % 15]);
		if (i % 4)
			docs[i].description = strdup(w[(i * 7) % 15]);
		snprintf(buf, sizeof(buf), "/blog/%s-%zu/", w[(i * 3) % 15], i);
		docs[i].url_path = strdup(buf);
		if (langs[i % 5] != NULL)
			docs[i].language = strdup(langs[i % 5]);
		snprintf(buf, sizeof(buf), "https://t.test/%zu", i);
		docs[i].url = strdup(buf);
		snprintf(buf, sizeof(buf), "https://t.test/%zu", (i * 7 + 1) % N);
		assert_int_equal(lb_doclinks_add(&docs[i].links, buf,
						 w[(i + 1) % 15], &err), 0);
		p[i] = &docs[i];
	}
	assert_int_equal(text_vectors(p, N, NULL, 0, 1, &plain, &err), 0);
	for (i = 0; i < N; i++)
		assert_int_equal(relate_terms_doc(t, &docs[i]), 0);
	for (nt = 1; nt <= 2; nt++) {
		assert_int_equal(text_vectors(p, N, NULL, 0, nt, &with, &err),
				 0);
		csr_equal(&plain, &with, N);
		csr_release(&with);
	}
	/* the terms are what is read: a page given another's */
	{
		struct lb_doc keep = docs[7];

		docs[7].terms = docs[8].terms;
		docs[7].terms_len = docs[8].terms_len;
		assert_int_equal(text_vectors(p, N, NULL, 0, 1, &other, &err),
				 0);
		assert_true(other.ptr[8] - other.ptr[7] !=
				    plain.ptr[8] - plain.ptr[7] ||
			    memcmp(other.col + other.ptr[7],
				   plain.col + plain.ptr[7],
				   (plain.ptr[8] - plain.ptr[7]) *
					   sizeof(uint32_t)) != 0);
		csr_release(&other);
		docs[7].terms = keep.terms;
		docs[7].terms_len = keep.terms_len;
	}
	/* another version, cut short, empty: tokenized as before */
	docs[1].terms[0] ^= 0x40;
	docs[2].terms_len -= 1;
	docs[3].terms_len = 0;
	assert_int_equal(text_vectors(p, N, NULL, 0, 1, &made, &err), 0);
	csr_equal(&plain, &made, N);
	csr_release(&made);
	/* the baseline tokenizes its own way, terms or not */
	assert_int_equal(text_vectors(p, N, NULL, 1, 1, &with, &err), 0);
	for (i = 0; i < N; i++) {
		free(docs[i].terms);
		docs[i].terms = NULL;
		docs[i].terms_len = 0;
	}
	assert_int_equal(text_vectors(p, N, NULL, 1, 1, &made, &err), 0);
	csr_equal(&made, &with, N);
	csr_release(&made);
	csr_release(&with);
	csr_release(&plain);
	for (i = 0; i < N; i++)
		lb_doc_release(&docs[i]);
	relate_terms_free(t);
}

/*
 * The terms of one fixed page, to the byte. When this fails, what the
 * tokenizer makes of pages has changed: bump TERMS_VERSION in text.c, so
 * that the terms stored by the old code are not used, then update the
 * digest here.
 */
static void test_terms_version(void **state)
{
	struct relate_terms *t = relate_terms_new();
	struct lb_doc d;
	char hex[65];

	(void)state;
	lb_doc_init(&d);
	d.title = strdup("The RUNNING ﬁles of 2024");
	d.description = strdup("Databases, Straße and 東京; the runner runs.");
	d.url_path = strdup("/blog/running-files/");
	d.text = strdup("Runners run; the files of databases are running "
			"files. Café über alles, kittens and kitten.");
	d.language = strdup("en");
	assert_int_equal(relate_terms_doc(t, &d), 0);
	lb_sha256_hex(d.terms, d.terms_len, hex, 64);
	assert_string_equal(hex, "770c1350007b94570b6608ea775c5682840f5153d4d5d18abcd48ffabe2b75bd");
	lb_doc_release(&d);
	relate_terms_free(t);
}

/* ---- docs ---- */

static const char *topics[3][2] = {
	{ "cat", "Cats purr and chase mice; a kitten sleeps, feline whiskers "
		 "twitch, the cat hunts birds and climbs trees." },
	{ "database", "SQL databases store rows in tables; an index speeds "
		      "queries, a transaction commits or rolls back." },
	{ "guitar", "Guitar strings vibrate; chords, frets and a capo; "
		    "the guitarist tunes the strings and strums songs." },
};

static void make_doc(struct lb_doc *d, int topic, int k, const char *lang)
{
	char buf[512];

	lb_doc_init(d);
	snprintf(buf, sizeof(buf), "About %s number %d", topics[topic][0], k);
	d->title = strdup(buf);
	snprintf(buf, sizeof(buf), "%s Variation %d of the %s story.",
		 topics[topic][1], k, topics[topic][0]);
	d->text = strdup(buf);
	snprintf(buf, sizeof(buf), "https://x.test/%s/%s-%d/", lang,
		 topics[topic][0], k);
	d->url = strdup(buf);
	d->language = strdup(lang);
}

static void test_candidates_topics(void **state)
{
	enum { N = 30 };
	struct lb_doc docs[N];
	const struct lb_doc *p[N];
	struct lb_relate_input in = { 0 };
	struct lb_relate_opts o = { .m = 5 };
	struct lb_candidates c, c2;
	struct lb_error err;
	size_t i, j;
	int meth;

	(void)state;
	lb_error_init(&err);
	for (i = 0; i < N; i++) {
		make_doc(&docs[i], (int)(i % 3), (int)i, "en");
		p[i] = &docs[i];
	}
	in.src = in.tgt = p;
	in.n_src = in.n_tgt = N;
	for (meth = LB_RELATE_LSA; meth <= LB_RELATE_TFIDF; meth++) {
		o.method = (enum lb_relate_method)meth;
		assert_int_equal(relate_candidates(&in, &o, &c, &err), 0);
		assert_int_equal(c.n_src, N);
		/* what random pairs score: measured, and every on-topic
		 * candidate above it (so none of them is a filler) */
		assert_true(isfinite(c.random_floor));
		for (i = 0; i < N; i++)
			for (j = 0; j < 5; j++) {
				uint32_t t = c.target[i * 5 + j];

				assert_int_not_equal(t, i);	/* never itself */
				assert_int_equal(t % 3, i % 3);	/* on topic */
				assert_true(c.score[i * 5 + j] > 0);
				assert_true(c.score[i * 5 + j] >
					    c.random_floor);
				if (j)
					assert_true(c.score[i * 5 + j] <=
						    c.score[i * 5 + j - 1]);
			}
		/* deterministic, whatever the thread count */
		o.threads = 1;
		assert_int_equal(relate_candidates(&in, &o, &c2, &err), 0);
		o.threads = 0;
		assert_memory_equal(c.target, c2.target, N * 5 * 4);
		assert_memory_equal(c.score, c2.score, N * 5 * 4);
		assert_true(c.random_floor == c2.random_floor);
		lb_candidates_release(&c2);
		/* 3 shards of the whole pipeline merge to the same bytes */
		{
			struct lb_candidates part[3];
			unsigned s;

			for (s = 0; s < 3; s++) {
				struct lb_relate_opts so = o;

				relate_shard_range(N, s, 3, &so.row_begin,
						   &so.row_end);
				assert_int_equal(relate_candidates(
					&in, &so, &part[s], &err), 0);
			}
			assert_int_equal(lb_candidates_merge(part, 3, &c2), 0);
			/* a row range is not extended; the merge is */
			assert_int_equal(relate_extend(&c2, &in, &err), 0);
			for (s = 0; s < 3; s++) {
				/* every shard measures the same pairs */
				assert_true(part[s].random_floor ==
					    c.random_floor);
				lb_candidates_release(&part[s]);
			}
		}
		assert_memory_equal(c.target, c2.target, N * 5 * 4);
		assert_memory_equal(c.score, c2.score, N * 5 * 4);
		lb_candidates_release(&c);
		lb_candidates_release(&c2);
	}
	for (i = 0; i < N; i++)
		lb_doc_release(&docs[i]);
}

/* ---- texts streamed from a source (the corpus, in the pipeline) ---- */

struct fake_source {
	const struct lb_doc *full;	/* the docs with their texts */
	size_t n;
	int opened, closed, fail_at;	/* fail_at: a get that fails, or -1 */
	int gets;
	pthread_mutex_t mu;
};

static void *fake_open(void *arg, struct lb_error *err)
{
	struct fake_source *f = arg;

	(void)err;
	pthread_mutex_lock(&f->mu);
	f->opened++;
	pthread_mutex_unlock(&f->mu);
	return f;
}

static int fake_get(void *reader, const struct lb_doc *doc, char **text,
		    struct lb_doclinks *links, struct lb_error *err)
{
	struct fake_source *f = reader;
	int at;
	size_t i;

	pthread_mutex_lock(&f->mu);
	at = f->gets++;
	pthread_mutex_unlock(&f->mu);
	if (at == f->fail_at)
		return lb_error_set(err, LB_ESTATE, "fake: cannot read %s",
				    doc->url);
	*text = NULL;
	for (i = 0; i < f->n; i++) {
		size_t k;

		if (strcmp(f->full[i].url, doc->url) != 0)
			continue;
		*text = f->full[i].text ? strdup(f->full[i].text) : NULL;
		for (k = 0; links != NULL && k < f->full[i].links.n; k++)
			if (lb_doclinks_add(links, f->full[i].links.v[k].url,
					    f->full[i].links.v[k].anchor,
					    err) < 0)
				return -1;
	}
	return 0;
}

static void fake_close(void *reader)
{
	struct fake_source *f = reader;

	pthread_mutex_lock(&f->mu);
	f->closed++;
	pthread_mutex_unlock(&f->mu);
}

/* Pages without their texts plus a source give the same candidates. */
static void test_text_source(void **state)
{
	enum { N = 150 };
	struct lb_doc docs[N], bare[N];
	const struct lb_doc *p[N], *q[N];
	struct fake_source f = { .full = docs, .n = N, .fail_at = -1 };
	struct lb_text_source src = { fake_open, fake_get, fake_close, &f };
	struct lb_relate_input in = { 0 }, in2;
	struct lb_relate_opts o = { .m = 6 };
	struct lb_candidates c, c2;
	struct lb_error err;
	size_t i;
	int meth;

	(void)state;
	lb_error_init(&err);
	pthread_mutex_init(&f.mu, NULL);
	for (i = 0; i < N; i++) {
		make_doc(&docs[i], (int)(i % 3), (int)i, "en");
		make_doc(&bare[i], (int)(i % 3), (int)i, "en");
		free(bare[i].text);
		bare[i].text = NULL;
		if (i >= 3)	/* links come with the text, from the reader */
			assert_int_equal(lb_doclinks_add(&docs[i].links,
							 docs[i - 3].url,
							 "story", &err), 0);
		p[i] = &docs[i];
		q[i] = &bare[i];
	}
	in.src = in.tgt = p;
	in.n_src = in.n_tgt = N;
	in2 = in;
	in2.src = in2.tgt = q;
	in2.text = &src;
	for (meth = LB_RELATE_LSA; meth <= LB_RELATE_TFIDF; meth++) {
		o.method = (enum lb_relate_method)meth;
		o.threads = 2;
		lb_error_init(&err);
		assert_int_equal(relate_candidates(&in, &o, &c, &err), 0);
		assert_int_equal(relate_candidates(&in2, &o, &c2, &err), 0);
		assert_memory_equal(c.target, c2.target, N * 6 * 4);
		assert_memory_equal(c.score, c2.score, N * 6 * 4);
		lb_candidates_release(&c);
		lb_candidates_release(&c2);
	}
	/* one reader per thread, every one closed, each text read once */
	assert_true(f.opened >= 2);
	assert_int_equal(f.opened, f.closed);
	assert_int_equal(f.gets, 2 * N);
	/* without the source, the bare pages have only their titles */
	o.method = LB_RELATE_TFIDF;
	in2.text = NULL;
	assert_int_equal(relate_candidates(&in, &o, &c, &err), 0);
	assert_int_equal(relate_candidates(&in2, &o, &c2, &err), 0);
	assert_memory_not_equal(c.score, c2.score, N * 6 * 4);
	lb_candidates_release(&c);
	lb_candidates_release(&c2);
	/* a failing read fails the step with the source's message */
	in2.text = &src;
	f.gets = 0;
	f.fail_at = 77;
	f.opened = f.closed = 0;
	lb_error_init(&err);
	assert_int_equal(relate_candidates(&in2, &o, &c2, &err), -1);
	assert_non_null(strstr(err.msg, "fake: cannot read"));
	assert_int_equal(f.opened, f.closed);
	for (i = 0; i < N; i++) {
		lb_doc_release(&docs[i]);
		lb_doc_release(&bare[i]);
	}
	pthread_mutex_destroy(&f.mu);
}

/*
 * The site's links: a page whose text says nothing of any topic is
 * related to the topic whose pages link to it (anchor text and link
 * terms); links to unknown URLs, to other sites and to the page itself
 * change nothing.
 */
static void test_candidates_links(void **state)
{
	enum { N = 31, M = 5 };
	struct lb_doc docs[N];
	const struct lb_doc *p[N];
	struct lb_relate_input in = { 0 };
	struct lb_relate_opts o = { .m = M };
	struct lb_candidates c, c2;
	struct lb_error err;
	size_t i, j, on_topic;
	int with;

	(void)state;
	lb_error_init(&err);
	for (i = 0; i < N - 1; i++) {
		make_doc(&docs[i], (int)(i % 3), (int)i, "en");
		p[i] = &docs[i];
	}
	lb_doc_init(&docs[N - 1]);
	docs[N - 1].title = strdup("Notes");
	docs[N - 1].text = strdup("Notes on the story: a variation, a number.");
	docs[N - 1].url = strdup("https://x.test/en/notes/");
	docs[N - 1].language = strdup("en");
	p[N - 1] = &docs[N - 1];
	in.src = in.tgt = p;
	in.n_src = in.n_tgt = N;
	for (with = 0; with <= 2; with++) {
		if (with >= 1)	/* the guitar pages link to the notes */
			for (i = 2; i < N - 1; i += 3)
				assert_int_equal(lb_doclinks_add(
					&docs[i].links, docs[N - 1].url,
					"guitar chords notes", &err), 0);
		if (with == 2)	/* and to nowhere, elsewhere, themselves */
			for (i = 0; i < N; i++) {
				lb_doclinks_add(&docs[i].links,
						"https://x.test/en/gone/", "cat",
						&err);
				lb_doclinks_add(&docs[i].links,
						"https://other.test/", "database",
						&err);
				lb_doclinks_add(&docs[i].links, docs[i].url,
						"database", &err);
			}
		assert_int_equal(relate_candidates(&in, &o,
						   with == 2 ? &c2 : &c, &err),
				 0);
		if (with == 1)
			continue;
		for (j = 0, on_topic = 0; j < M; j++)
			on_topic += c.target[(N - 1) * M + j] % 3 == 2;
		if (with == 0) {
			/* no word of the notes says guitar */
			assert_true(on_topic < M);
			lb_candidates_release(&c);
		}
	}
	assert_int_equal(on_topic, M);
	/* the links that lead nowhere changed nothing */
	assert_memory_equal(c.target, c2.target, N * M * 4);
	assert_memory_equal(c.score, c2.score, N * M * 4);
	/* every page keeps its own topic */
	for (i = 0; i < N - 1; i++)
		for (j = 0; j < M; j++)
			if (c.target[i * M + j] != N - 1)
				assert_int_equal(c.target[i * M + j] % 3, i % 3);
	lb_candidates_release(&c);
	lb_candidates_release(&c2);
	for (i = 0; i < N; i++)
		lb_doc_release(&docs[i]);
}

/* Cross set with self links, multi-language grouping, shard rows. */
static void test_candidates_languages(void **state)
{
	enum { NT = 24, NS = 8 };
	struct lb_doc docs[NT + NS];
	const struct lb_doc *tgt[NT], *src[NS];
	long self[NS];
	struct lb_relate_input in = { 0 };
	struct lb_relate_opts o = { .m = 4 };
	struct lb_candidates c, part;
	struct lb_error err;
	FILE *f;
	char *buf = NULL;
	size_t len = 0, i, j;

	(void)state;
	lb_error_init(&err);
	for (i = 0; i < NT; i++) {
		make_doc(&docs[i], (int)(i % 3), (int)i, i % 2 ? "de" : "en");
		tgt[i] = &docs[i];
	}
	for (i = 0; i < NS; i++) {
		if (i < 4) {	/* sources 0-3 are targets 0-3 */
			src[i] = tgt[i];
			self[i] = (long)i;
		} else {
			make_doc(&docs[NT + i], (int)(i % 3), 100 + (int)i,
				 i % 2 ? "de" : "en");
			src[i] = &docs[NT + i];
			self[i] = -1;
		}
	}
	in.src = src;
	in.n_src = NS;
	in.tgt = tgt;
	in.n_tgt = NT;
	in.self = self;
	in.multi_language = 1;
	assert_int_equal(relate_candidates(&in, &o, &c, &err), 0);
	for (i = 0; i < NS; i++)
		for (j = 0; j < 4; j++) {
			uint32_t t = c.target[i * 4 + j];

			assert_int_not_equal((long)t, self[i]);
			assert_int_equal(t % 2, i % 2);	/* same language */
			/* 4 targets share language and topic, less itself */
			if (j < (self[i] >= 0 ? 3u : 4u))
				assert_int_equal(t % 3, i % 3);
		}
	/* one row range gives the same rows */
	o.row_begin = 3;
	o.row_end = 6;
	assert_int_equal(relate_candidates(&in, &o, &part, &err), 0);
	assert_int_equal(part.n_src, 3);
	assert_memory_equal(part.target, c.target + 3 * 4, 3 * 4 * 4);
	assert_memory_equal(part.score, c.score + 3 * 4, 3 * 4 * 4);

	/* export: source, target, score per line, best first */
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(relate_export_tsv(f, &in, &part, 3, &err), 0);
	fclose(f);
	{
		char want[256];

		const char *first = strchr(strchr(buf, '\n') + 1, '\n') + 1;

		assert_true(buf[0] == '#');
		snprintf(want, sizeof(want), "%s\t%s\t%.9g\n", src[3]->url,
			 tgt[part.target[0]]->url, (double)part.score[0]);
		assert_memory_equal(first, want, strlen(want));
		assert_true(strtof(strrchr(want, '\t') + 1, NULL) ==
			    part.score[0]);	/* reads back exactly */
		j = 0;
		for (i = 0; i < len; i++)
			j += buf[i] == '\n';
		/* the header, what random pairs score, 12 candidates */
		assert_int_equal(j, 2 + 12);
		snprintf(want, sizeof(want), "\n# random pairs score: %.9g\n",
			 (double)c.random_floor);
		assert_non_null(strstr(buf, want));
	}
	free(buf);
	lb_candidates_release(&part);

	/* shard jobs export their rows to files of their own; the files
	 * read back in order give the unsharded candidates, bit for bit */
	{
		char dir[] = "/tmp/linkbot-test-export.XXXXXX";
		char path[3][64], bad[64];
		const char *paths[3];

		assert_non_null(mkdtemp(dir));
		for (i = 0; i < 3; i++) {
			struct lb_relate_opts so = { .m = 4 };

			snprintf(path[i], sizeof(path[i]), "%s/%zu.tsv", dir, i);
			paths[i] = path[i];
			f = fopen(path[i], "w");
			assert_non_null(f);
			relate_shard_range(NS, (unsigned)i, 3, &so.row_begin,
					   &so.row_end);
			assert_int_equal(relate_candidates(&in, &so, &part,
							   &err), 0);
			assert_int_equal(relate_export_tsv(f, &in, &part,
							   so.row_begin, &err),
					 0);
			fclose(f);
			lb_candidates_release(&part);
		}
		assert_int_equal(relate_import_tsv(paths, 3, &in, 4, &part,
						   &err), 0);
		assert_int_equal(part.n_src, NS);
		assert_memory_equal(part.target, c.target, NS * 4 * 4);
		assert_memory_equal(part.score, c.score, NS * 4 * 4);
		assert_true(isfinite(c.random_floor));
		assert_true(part.random_floor == c.random_floor);
		lb_candidates_release(&part);
		/* a bad line names its file and line; a missing file fails */
		snprintf(bad, sizeof(bad), "%s/bad.tsv", dir);
		f = fopen(bad, "w");
		assert_non_null(f);
		fputs("# comment\nnowhere\tx\t1\n", f);
		fclose(f);
		paths[1] = bad;
		lb_error_init(&err);
		assert_int_equal(relate_import_tsv(paths, 3, &in, 4, &part,
						   &err), -1);
		assert_int_equal(err.code, LB_EPARSE);
		assert_non_null(strstr(err.msg, "bad.tsv line 2"));
		paths[1] = "/nonexistent/shard.tsv";
		lb_error_init(&err);
		assert_int_equal(relate_import_tsv(paths, 3, &in, 4, &part,
						   &err), -1);
		assert_int_equal(err.code, LB_EIO);
		for (i = 0; i < 3; i++)
			unlink(path[i]);
		unlink(bad);
		rmdir(dir);
	}
	lb_candidates_release(&c);
	for (i = 0; i < NT + NS; i++)
		if (i < NT || i >= NT + 4)
			lb_doc_release(&docs[i]);
}

/*
 * A multi-language endpoint is one site per language: a language's pages
 * get exactly the candidates they get on their own (term statistics, LSA
 * and smoothing of that language only), both as one set and cross-set.
 * Computed over the union, the English majority would change the German
 * pages' weights and dimensions.
 */
static void test_candidates_language_alone(void **state)
{
	enum { NEN = 30, NDE = 12, N = NEN + NDE, M = 4 };
	struct lb_doc docs[N];
	const struct lb_doc *all[N], *de[NDE], *src[NDE];
	long self[NDE];
	struct lb_relate_input in = { 0 }, alone = { 0 };
	struct lb_relate_opts o = { .m = M };
	struct lb_candidates c, a;
	struct lb_error err;
	size_t i, j, r;
	int cross;

	(void)state;
	lb_error_init(&err);
	for (i = 0; i < N; i++) {
		/* German pages interleaved with the English ones */
		int isde = i < 2 * NDE && i % 2 == 1;

		make_doc(&docs[i], (int)(i % 3), (int)i, isde ? "de" : "en");
		all[i] = &docs[i];
	}
	for (i = 0, j = 0; i < N; i++)
		if (strcmp(docs[i].language, "de") == 0)
			de[j++] = &docs[i];
	assert_int_equal(j, NDE);
	for (cross = 0; cross < 2; cross++) {
		/* cross: sources are the German pages, a target each */
		for (i = 0; i < NDE; i++) {
			src[i] = de[NDE - 1 - i];
			self[i] = (long)(de[NDE - 1 - i] - docs);
		}
		memset(&in, 0, sizeof(in));
		in.src = cross ? src : all;
		in.n_src = cross ? NDE : N;
		in.tgt = all;
		in.n_tgt = N;
		in.self = cross ? self : NULL;
		in.multi_language = 1;
		assert_int_equal(relate_candidates(&in, &o, &c, &err), 0);
		memset(&alone, 0, sizeof(alone));
		alone.src = cross ? src : de;
		alone.n_src = NDE;
		alone.tgt = de;
		alone.n_tgt = NDE;
		if (cross) {
			for (i = 0; i < NDE; i++)
				self[i] = (long)(NDE - 1 - i);
			alone.self = self;
		}
		assert_int_equal(relate_candidates(&alone, &o, &a, &err), 0);
		for (r = 0, i = 0; i < in.n_src; i++) {
			if (strcmp(in.src[i]->language, "de") != 0)
				continue;
			for (j = 0; j < M; j++) {
				uint32_t t = c.target[i * M + j];

				assert_int_not_equal(t, LB_NO_TARGET);
				assert_ptr_equal(all[t], de[a.target[r * M + j]]);
				assert_true(c.score[i * M + j] ==
					    a.score[r * M + j]);
			}
			r++;
		}
		assert_int_equal(r, NDE);
		lb_candidates_release(&c);
		lb_candidates_release(&a);
	}
	for (i = 0; i < N; i++)
		lb_doc_release(&docs[i]);
}

/*
 * Template blocks: a block of text repeated on half of the pages (a
 * newsletter box) changes nothing: the candidates are those of the same
 * pages without it, bit for bit. Pages that are copies of each other
 * share all their words too, but they are not a template: they still find
 * each other.
 */
static void test_candidates_blocks(void **state)
{
	enum { N = 40, M = 5, NC = 6 };
	static const char block[] = " Subscribe newsletter cookies privacy "
		"webinar dashboard careers sustainability partners pricing.";
	struct lb_doc docs[N], boxed[N];
	const struct lb_doc *p[N], *q[N];
	struct lb_relate_input in = { 0 };
	struct lb_relate_opts o = { .m = M };
	struct lb_candidates c, c2;
	struct lb_error err;
	size_t i, j;
	int meth;

	(void)state;
	lb_error_init(&err);
	for (i = 0; i < N; i++) {
		make_doc(&docs[i], (int)(i % 3), (int)i, "en");
		make_doc(&boxed[i], (int)(i % 3), (int)i, "en");
		if (i % 2 == 0) {
			char *t = malloc(strlen(boxed[i].text) + sizeof(block));

			assert_non_null(t);
			strcpy(t, boxed[i].text);
			strcat(t, block);
			free(boxed[i].text);
			boxed[i].text = t;
		}
		p[i] = &docs[i];
		q[i] = &boxed[i];
	}
	for (meth = 0; meth < 2; meth++) {
		o.smooth = meth ? -1 : 0;
		in.src = in.tgt = p;
		in.n_src = in.n_tgt = N;
		assert_int_equal(relate_candidates(&in, &o, &c, &err), 0);
		in.src = in.tgt = q;
		assert_int_equal(relate_candidates(&in, &o, &c2, &err), 0);
		assert_memory_equal(c.target, c2.target, N * M * 4);
		assert_memory_equal(c.score, c2.score, N * M * 4);
		lb_candidates_release(&c);
		lb_candidates_release(&c2);
	}

	/* NC copies of one page among the others: each finds the others */
	for (i = 0; i < NC; i++) {
		free(boxed[i].title);
		free(boxed[i].text);
		boxed[i].title = strdup("Savanna animals");
		boxed[i].text = strdup("Zebra giraffe okapi antelope gazelle "
				       "wildebeest hippopotamus rhinoceros "
				       "graze on the savanna.");
	}
	o.smooth = 0;
	assert_int_equal(relate_candidates(&in, &o, &c, &err), 0);
	for (i = 0; i < NC; i++)
		for (j = 0; j < M; j++) {
			assert_true(c.target[i * M + j] < NC);
			assert_true(c.score[i * M + j] > 0.9f);
		}
	lb_candidates_release(&c);
	for (i = 0; i < N; i++) {
		lb_doc_release(&docs[i]);
		lb_doc_release(&boxed[i]);
	}
}

/*
 * Term weights (issue 20): sublinear tf, 1 + ln tf, so a word said four
 * times weighs 1 + ln 4 = 2.386 times a word said once with the same df
 * (BM25 saturation gave 1.71 here); a word in more than three quarters of
 * the pages is dropped; a word of one page too.
 */
static void test_text_weights(void **state)
{
	static const char *text[4] = {
		"alpha alpha alpha alpha beta common onlyhere",
		"alpha beta gamma common",
		"gamma delta common",
		"delta epsilon common epsilon",
	};
	struct lb_doc docs[4];
	const struct lb_doc *p[4];
	struct csr x = { 0 };
	struct lb_error err;
	size_t i;
	float a, b;

	(void)state;
	lb_error_init(&err);
	for (i = 0; i < 4; i++) {
		lb_doc_init(&docs[i]);
		docs[i].text = strdup(text[i]);
		docs[i].language = strdup("en");
		p[i] = &docs[i];
	}
	assert_int_equal(text_vectors(p, 4, NULL, 0, 1, &x, &err), 0);
	/* page 0: alpha and beta only (common: 4 of 4 pages; onlyhere: 1) */
	assert_int_equal(x.ptr[1] - x.ptr[0], 2);
	a = x.val[0] > x.val[1] ? x.val[0] : x.val[1];
	b = x.val[0] > x.val[1] ? x.val[1] : x.val[0];
	assert_true(fabsf(a / b - (1 + logf(4))) < 1e-4f);
	assert_true(fabsf(a * a + b * b - 1) < 1e-5f);	/* unit rows */
	/* page 3: delta and epsilon, epsilon (twice, one page) dropped */
	assert_int_equal(x.ptr[4] - x.ptr[3], 1);
	csr_release(&x);
	for (i = 0; i < 4; i++)
		lb_doc_release(&docs[i]);
}

/* Degenerate input: no pages, empty pages, identical pages (ties go to
 * the lower target index), more slots than targets. */
static void test_candidates_edges(void **state)
{
	struct lb_doc docs[6];
	const struct lb_doc *p[6];
	struct lb_relate_input in = { 0 };
	struct lb_relate_opts o = { .m = 8 };
	struct lb_candidates c;
	struct lb_error err;
	size_t i;
	int meth;

	(void)state;
	lb_error_init(&err);
	in.src = in.tgt = p;
	assert_int_equal(relate_candidates(&in, &o, &c, &err), 0);
	assert_int_equal(c.n_src, 0);
	lb_candidates_release(&c);
	for (i = 0; i < 6; i++) {
		lb_doc_init(&docs[i]);
		if (i >= 2)	/* 0, 1: no text at all */
			docs[i].text = strdup("identical words about postgres "
					      "vacuum and autovacuum tuning");
		p[i] = &docs[i];
	}
	in.n_src = in.n_tgt = 6;
	for (meth = LB_RELATE_LSA; meth <= LB_RELATE_TFIDF; meth++) {
		o.method = (enum lb_relate_method)meth;
		assert_int_equal(relate_candidates(&in, &o, &c, &err), 0);
		/* page 2: pages 3, 4, 5 tie at the top, in index order */
		assert_int_equal(c.target[2 * 8 + 0], 3);
		assert_int_equal(c.target[2 * 8 + 1], 4);
		assert_int_equal(c.target[2 * 8 + 2], 5);
		assert_true(c.score[2 * 8] > 0.99f);
		/* 5 other pages for 8 slots */
		assert_int_equal(c.target[2 * 8 + 5], LB_NO_TARGET);
		/* an empty page relates to nothing better than score 0 */
		assert_true(c.score[0] == 0);
		for (i = 0; i < 6 * 8; i++)
			assert_int_not_equal(c.target[i], i / 8);
		lb_candidates_release(&c);
	}
	o.row_begin = 4;
	o.row_end = 7;
	assert_int_equal(relate_candidates(&in, &o, &c, &err), -1);
	assert_int_equal(err.code, LB_EUSAGE);
	for (i = 0; i < 6; i++)
		lb_doc_release(&docs[i]);
}

/*
 * The one language-group rule (relate's groups and assign's, in
 * pipeline/build.c, must agree). build.c's copy lower-cased with "| 0x20",
 * which made "x@" the group "x`" there and "x@" in relate; only ASCII
 * letters change case.
 */
static void test_lang_group(void **state)
{
	char k[LB_LANG_GROUP_LEN], k2[LB_LANG_GROUP_LEN];

	(void)state;
	lb_lang_group("en-US", k);
	assert_string_equal(k, "en");
	lb_lang_group("PT_br", k);
	assert_string_equal(k, "pt");
	lb_lang_group(NULL, k);
	assert_string_equal(k, "");
	lb_lang_group("", k);
	assert_string_equal(k, "");
	lb_lang_group("abcdefghijklmnopqrstuvwxyz", k);
	assert_string_equal(k, "abcdefghijklmno");
	lb_lang_group("x@", k);
	lb_lang_group("x`", k2);
	assert_string_equal(k, "x@");
	assert_string_not_equal(k, k2);
	lb_lang_group("zh-Hant-TW", k);
	assert_string_equal(k, "zh");
}

/*
 * relate_extend(): a target that no list holds is written into the second
 * half of the lists of the sources nearest to it (its own row), in place
 * of entries whose targets other lists hold enough, until m/2 lists hold
 * it; first halves untouched, lists best first, idempotent.
 */
/* the hybrid re-ranking (rerank.c): (1 - a) dense + a sparse cosine over
 * the dense candidates, the best m kept, ties to the lower target,
 * padding kept, the candidate row's doc row taken from srow[rb + i], and
 * the same result for any thread count */
static void test_rerank(void **state)
{
	/* rows: 0 = e0, 1 = e1, 2 = e0, 3 = 0.6 e0 + 0.8 e1, 4 = empty */
	size_t ptr[] = { 0, 1, 2, 3, 5, 5 };
	uint32_t col[] = { 0, 1, 0, 0, 1 };
	float val[] = { 1, 1, 1, 0.6f, 0.8f };
	struct csr x = { .n_rows = 5, .n_cols = 3, .ptr = ptr, .col = col,
			 .val = val };
	size_t srow[] = { 0, 1, 2, 3, 4 };
	struct lb_candidates c, d;
	struct lb_error err;
	size_t i, j;

	(void)state;
	lb_error_init(&err);
	assert_int_equal(lb_candidates_init(&c, 2, 4), 0);
	c.random_floor = -0.25f;
	/* source 0: dense 1 0.9, 3 0.8, 2 0.5, 4 0.4 */
	c.target[0] = 1; c.score[0] = 0.9f;
	c.target[1] = 3; c.score[1] = 0.8f;
	c.target[2] = 2; c.score[2] = 0.5f;
	c.target[3] = 4; c.score[3] = 0.4f;
	/* source 1: two candidates tied in both scores, then padding */
	c.target[4] = 2; c.score[4] = 0.6f;
	c.target[5] = 0; c.score[5] = 0.6f;
	assert_int_equal(rerank_hybrid(&c, &x, srow, 0, 3, 0.5, 1, NULL, &err), 0);
	assert_int_equal(c.m, 3);
	assert_int_equal(c.n_src, 2);
	assert_true(c.random_floor == -0.25f);
	/* 2: 0.5 * 0.5 + 0.5 * 1 = 0.75; 3: 0.4 + 0.3; 1: 0.45; 4 (0.2) out */
	assert_int_equal(c.target[0], 2);
	assert_int_equal(c.target[1], 3);
	assert_int_equal(c.target[2], 1);
	assert_true(fabsf(c.score[0] - 0.75f) < 1e-6f);
	assert_true(fabsf(c.score[1] - 0.70f) < 1e-6f);
	assert_true(fabsf(c.score[2] - 0.45f) < 1e-6f);
	assert_true(c.score[1] == rerank_score(0.8f, csr_dot(&x, 0, 3), 0.5));
	assert_int_equal(c.target[3], 0);	/* the tie: lower target first */
	assert_int_equal(c.target[4], 2);
	assert_int_equal(c.target[5], LB_NO_TARGET);
	lb_candidates_release(&c);

	/* a row range: candidate row 0 is source 3 (srow[3 + 0]) */
	assert_int_equal(lb_candidates_init(&c, 1, 2), 0);
	c.target[0] = 1; c.score[0] = 0.5f;
	c.target[1] = 0; c.score[1] = 0.5f;
	assert_int_equal(rerank_hybrid(&c, &x, srow, 3, 2, 0.5, 1, NULL, &err), 0);
	assert_int_equal(c.target[0], 1);	/* sparse 0.8 beats 0.6 */
	assert_true(fabsf(c.score[0] - 0.65f) < 1e-6f);
	assert_int_equal(c.target[1], 0);
	lb_candidates_release(&c);

	/* 1 or 3 threads, many rows: the same bits */
	{
		enum { N = 900, MC = 8 };
		size_t *p2 = malloc((N + 1) * sizeof(*p2)), *sr = malloc(N * sizeof(*sr));
		uint32_t *c2 = malloc(N * 4 * sizeof(*c2));
		float *v2 = malloc(N * 4 * sizeof(*v2));
		struct csr y = { .n_rows = N, .n_cols = 64, .ptr = p2,
				 .col = c2, .val = v2 };
		uint64_t st = 7;

		for (i = 0; i < N; i++) {
			sr[i] = i;
			p2[i] = 4 * i;
			for (j = 0; j < 4; j++) {
				c2[4 * i + j] = (uint32_t)(16 * j +
					relate_rand(&st) % 16);
				v2[4 * i + j] = 0.5f;
			}
		}
		p2[N] = 4 * N;
		assert_int_equal(lb_candidates_init(&c, N, MC), 0);
		assert_int_equal(lb_candidates_init(&d, N, MC), 0);
		for (i = 0; i < N * MC; i++) {
			c.target[i] = d.target[i] =
				(uint32_t)(relate_rand(&st) % N);
			c.score[i] = d.score[i] =
				(float)(relate_rand(&st) % 5) / 8;
		}
		assert_int_equal(rerank_hybrid(&c, &y, sr, 0, MC / 2, 0.5, 1,
					       NULL, &err), 0);
		assert_int_equal(rerank_hybrid(&d, &y, sr, 0, MC / 2, 0.5, 3,
					       NULL, &err), 0);
		assert_memory_equal(c.target, d.target,
				    N * MC / 2 * sizeof(*c.target));
		assert_memory_equal(c.score, d.score,
				    N * MC / 2 * sizeof(*c.score));
		for (i = 0; i < N; i++)
			for (j = 1; j < MC / 2; j++)
				assert_true(c.score[i * MC / 2 + j] <=
					    c.score[i * MC / 2 + j - 1]);
		lb_candidates_release(&c);
		lb_candidates_release(&d);
		free(p2);
		free(sr);
		free(c2);
		free(v2);
	}
}

/* random docs of words from a small vocabulary: sparse dots of every kind */
static void make_random_doc(struct lb_doc *d, uint64_t *st, int k)
{
	static const char *w[] = { "river", "stone", "bridge", "castle",
		"harbor", "lantern", "meadow", "orchard", "quarry", "saddle",
		"tunnel", "valley", "window", "yarrow", "anchor", "beacon",
		"canyon", "dune", "ember", "fjord", "glacier", "heron",
		"island", "juniper", "kettle", "lagoon", "marsh", "nectar" };
	char buf[2048];
	size_t n = 0, i, words = 4 + relate_rand(st) % 40;

	lb_doc_init(d);
	for (i = 0; i < words && n + 40 < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s ",
				      w[relate_rand(st) % 28],
				      relate_rand(st) % 3 ? "" : "s");
	d->text = strdup(buf);
	snprintf(buf, sizeof(buf), "Page %d %s", k, w[relate_rand(st) % 28]);
	d->title = strdup(buf);
	snprintf(buf, sizeof(buf), "https://x.test/p-%d/", k);
	d->url = strdup(buf);
	d->language = strdup("en");
}

#define TV_BITS_0 0x69c966f668b94f70ULL	/* main, 32315af */
#define TV_BITS_1 0x6a7941a3512acf32ULL
/*
 * text_vectors()' weights pinned: the term rows of 150 random docs (a
 * small vocabulary: the night's shape), hashed over their columns and
 * weights' bits, are the bits main computed before the idf table and the
 * smaller first vocabulary table (bench/RESULTS.md, "the build of a
 * small client"); any change of a weight fails it. Both methods.
 */
static void test_text_vectors_bits(void **state)
{
	enum { N = 150 };
	struct lb_doc docs[N];
	const struct lb_doc *p[N];
	struct lb_error err;
	uint64_t st = 99, h[2] = { 0, 0 };
	size_t i, j;
	int plain;

	(void)state;
	lb_error_init(&err);
	for (i = 0; i < N; i++) {
		make_random_doc(&docs[i], &st, (int)i);
		p[i] = &docs[i];
	}
	for (plain = 0; plain < 2; plain++) {
		struct csr x;
		uint64_t f = 1469598103934665603ULL;

		assert_int_equal(text_vectors(p, N, NULL, plain, 1, &x, &err),
				 0);
		for (i = 0; i < N; i++) {
			f = (f ^ (x.ptr[i + 1] - x.ptr[i])) * 1099511628211ULL;
			for (j = x.ptr[i]; j < x.ptr[i + 1]; j++) {
				uint32_t w;

				memcpy(&w, &x.val[j], sizeof(w));
				f = (f ^ x.col[j]) * 1099511628211ULL;
				f = (f ^ w) * 1099511628211ULL;
			}
		}
		h[plain] = f;
		csr_release(&x);
	}
	print_message("text_vectors bits: %#llx %#llx\n",
		      (unsigned long long)h[0], (unsigned long long)h[1]);
	assert_true(h[0] == TV_BITS_0);
	assert_true(h[1] == TV_BITS_1);
	for (i = 0; i < N; i++)
		lb_doc_release(&docs[i]);
}

/*
 * The sparse memo (rerank.c): a pair's dot read back is csr_dot()'s in
 * either order; the re-ranking and the whole candidates with the memo
 * are the bits without it (LINKBOT_NO_SPARSE_MEMO), on sites of a few to
 * a few hundred pages, one set and two, both methods that use it.
 */
static void test_sparse_memo(void **state)
{
	enum { N = 120, MC = 16 };
	uint64_t st = 11;
	size_t i, j, round;
	int shape;
	struct lb_error err;

	(void)state;
	lb_error_init(&err);
	/* the memo against csr_dot(), both orders, twice (the second read
	 * from the memo); a vocabulary of 200 terms (scattered rows) and of
	 * 24 (dense rows, memo_dense()) */
	for (shape = 0; shape < 2; shape++) {
		uint32_t ncol = shape ? 24 : 200, step = shape ? 3 : 12;
		size_t *ptr = malloc((N + 1) * sizeof(*ptr)), nnz = 0;
		uint32_t *col = malloc(N * 40 * sizeof(*col));
		float *val = malloc(N * 40 * sizeof(*val));
		float *acc = calloc(ncol, sizeof(*acc));
		struct csr x = { .n_rows = N, .n_cols = ncol, .ptr = ptr,
				 .col = col, .val = val };
		struct sparse_memo m;
		size_t known = 0;

		for (i = 0; i < N; i++) {
			uint32_t c = (uint32_t)(relate_rand(&st) % 7);

			ptr[i] = nnz;
			for (; c < ncol && nnz - ptr[i] < 40;
			     c += 1 + (uint32_t)(relate_rand(&st) % step)) {
				col[nnz] = c;
				val[nnz++] = (float)(relate_rand(&st) % 1000 +
						     1) / 997.0f;
			}
		}
		ptr[N] = nnz;
		assert_int_equal(sparse_memo_init(&m, &x), 0);
		assert_non_null(m.v);
		if (shape)
			assert_non_null(m.xd);
		else
			assert_null(m.xd);
		for (round = 0; round < 2; round++)
			for (i = 0; i < N; i++) {
				for (j = ptr[i]; j < ptr[i + 1]; j++)
					acc[col[j]] = val[j];
				for (j = 0; j < N; j++) {
					double a = sparse_memo_dot(&m, acc, i,
								   j);
					double b = csr_dot(&x, i, j);

					assert_memory_equal(&a, &b, sizeof(a));
				}
				for (j = ptr[i]; j < ptr[i + 1]; j++)
					acc[col[j]] = 0;
			}
		for (i = 0; i < N * (N - 1) / 2; i++)
			known += m.have[i];
		assert_int_equal(known, N * (N - 1) / 2);
		sparse_memo_release(&m);
		/* the batches, from an empty memo: targets in random order,
		 * the row itself among them */
		assert_int_equal(sparse_memo_init(&m, &x), 0);
		for (i = 0; i < N; i++) {
			uint32_t tg[SPARSE_MEMO_BATCH];
			double sp[SPARSE_MEMO_BATCH];
			size_t c = 1 + relate_rand(&st) % SPARSE_MEMO_BATCH;

			for (j = ptr[i]; j < ptr[i + 1]; j++)
				acc[col[j]] = val[j];
			for (j = 0; j < c; j++)
				tg[j] = (uint32_t)(relate_rand(&st) % N);
			tg[0] = (uint32_t)i;
			sparse_memo_dots(&m, acc, i, tg, c, sp);
			for (j = 0; j < c; j++) {
				double b = csr_dot(&x, i, tg[j]);

				assert_memory_equal(&sp[j], &b, sizeof(b));
			}
			for (j = ptr[i]; j < ptr[i + 1]; j++)
				acc[col[j]] = 0;
		}
		sparse_memo_release(&m);
		setenv("LINKBOT_NO_SPARSE_MEMO", "1", 1);
		assert_int_equal(sparse_memo_init(&m, &x), 0);
		unsetenv("LINKBOT_NO_SPARSE_MEMO");
		assert_null(m.v);
		sparse_memo_release(&m);

		/* the re-ranking with a memo (twice: filled, then read) and
		 * without: the same bits */
		for (round = 0; round < 3; round++) {
			struct lb_candidates c[3];
			size_t sr[N];
			int k;

			assert_int_equal(sparse_memo_init(&m, &x), 0);
			for (k = 0; k < 3; k++)
				assert_int_equal(lb_candidates_init(&c[k], N,
								    MC), 0);
			for (i = 0; i < N; i++) {
				sr[i] = i;
				for (j = 0; j < MC; j++) {
					uint32_t t = (uint32_t)(relate_rand(&st) % N);
					float sc = (float)(relate_rand(&st) % 9) / 8;

					if (t == i || relate_rand(&st) % 5 == 0)
						t = LB_NO_TARGET;
					for (k = 0; k < 3; k++) {
						c[k].target[i * MC + j] = t;
						c[k].score[i * MC + j] = sc;
					}
				}
			}
			assert_int_equal(rerank_hybrid(&c[0], &x, sr, 0, MC / 2,
						       0.5, 1, &m, &err), 0);
			assert_int_equal(rerank_hybrid(&c[1], &x, sr, 0, MC / 2,
						       0.5, 1, &m, &err), 0);
			assert_int_equal(rerank_hybrid(&c[2], &x, sr, 0, MC / 2,
						       0.5, 1, NULL, &err), 0);
			for (k = 0; k < 2; k++) {
				assert_memory_equal(c[k].target, c[2].target,
						    N * MC / 2 * sizeof(*c[2].target));
				assert_memory_equal(c[k].score, c[2].score,
						    N * MC / 2 * sizeof(*c[2].score));
			}
			for (i = 0, known = 0; i < N * (N - 1) / 2; i++)
				known += m.have[i];
			assert_true(known > 0);
			for (k = 0; k < 3; k++)
				lb_candidates_release(&c[k]);
			sparse_memo_release(&m);
		}
		free(ptr);
		free(col);
		free(val);
		free(acc);
	}

	/* whole candidates: random_floor and the re-ranking */
	for (round = 0; round < 12; round++) {
		size_t n = (size_t[]){ 3, 9, 40, 100, 101, 150, 257, 300,
				       100, 60, 200, 30 }[round];
		struct lb_doc *docs = calloc(n, sizeof(*docs));
		const struct lb_doc **p = calloc(n, sizeof(*p));
		long *self = calloc(n, sizeof(*self));
		const struct lb_doc **half = calloc(n, sizeof(*half));
		struct lb_relate_input in = { 0 };
		struct lb_relate_opts o = { .m = 8, .threads = 1 };
		struct lb_candidates a, b;
		int meth;

		for (i = 0; i < n; i++) {
			make_random_doc(&docs[i], &st, (int)i);
			p[i] = &docs[i];
		}
		in.tgt = p;
		in.n_tgt = n;
		if (round % 3 == 2) {
			/* two sets: every other page a source, its self */
			for (i = 0, j = 0; i < n; i += 2, j++) {
				half[j] = p[i];
				self[j] = (long)i;
			}
			in.src = half;
			in.n_src = j;
			in.self = self;
		} else {
			in.src = p;
			in.n_src = n;
		}
		for (meth = LB_RELATE_LSA; meth <= LB_RELATE_TFIDF; meth++) {
			o.method = (enum lb_relate_method)meth;
			assert_int_equal(relate_candidates(&in, &o, &a, &err),
					 0);
			setenv("LINKBOT_NO_SPARSE_MEMO", "1", 1);
			assert_int_equal(relate_candidates(&in, &o, &b, &err),
					 0);
			unsetenv("LINKBOT_NO_SPARSE_MEMO");
			assert_int_equal(a.m, b.m);
			assert_int_equal(a.n_src, b.n_src);
			assert_memory_equal(&a.random_floor, &b.random_floor,
					    sizeof(a.random_floor));
			assert_memory_equal(a.target, b.target,
					    a.n_src * a.m * sizeof(*a.target));
			assert_memory_equal(a.score, b.score,
					    a.n_src * a.m * sizeof(*a.score));
			lb_candidates_release(&a);
			lb_candidates_release(&b);
		}
		for (i = 0; i < n; i++)
			lb_doc_release(&docs[i]);
		free(half);
		free(docs);
		free(p);
		free(self);
	}
}

/*
 * The LSA's sparse products four AVX registers a row (lsa.c, spmm_avx())
 * against the plain loop (LINKBOT_NO_AVX2): the same bits, for widths l
 * = k + 10 on either side of 8, 32 and 64 columns, on one thread and
 * three, rows with no entry among them.
 */
static void test_lsa_spmm(void **state)
{
	enum { N = 90, V = 300 };
	size_t ks[] = { 1, 5, 6, 14, 21, 22, 23, 30, 53, 54, 55, 60 };
	size_t *ptr = malloc((N + 1) * sizeof(*ptr)), nnz = 0, i, r;
	uint32_t *col = malloc(N * 60 * sizeof(*col));
	float *val = malloc(N * 60 * sizeof(*val));
	struct csr x = { .n_rows = N, .n_cols = V, .ptr = ptr, .col = col,
			 .val = val };
	struct lb_error err;
	uint64_t st = 5;

	(void)state;
	lb_error_init(&err);
	for (i = 0; i < N; i++) {
		uint32_t c = (uint32_t)(relate_rand(&st) % 9);

		ptr[i] = nnz;
		if (i % 17 == 3)
			continue;	/* a page without terms */
		for (; c < V && nnz - ptr[i] < 60;
		     c += 1 + (uint32_t)(relate_rand(&st) % 15)) {
			col[nnz] = c;
			val[nnz++] = (float)(relate_rand(&st) % 4096 + 1) /
				     4099.0f;
		}
	}
	ptr[N] = nnz;
	for (r = 0; r < sizeof(ks) / sizeof(ks[0]); r++) {
		size_t ka = ks[r], kb = ks[r];
		float *a = NULL, *b = NULL;
		int threads = r % 2 ? 3 : 1;

		assert_int_equal(lsa_project(&x, &ka, 42 + r, threads, &a,
					     &err), 0);
		setenv("LINKBOT_NO_AVX2", "1", 1);
		assert_int_equal(lsa_project(&x, &kb, 42 + r, threads, &b,
					     &err), 0);
		unsetenv("LINKBOT_NO_AVX2");
		assert_int_equal(ka, kb);
		assert_memory_equal(a, b, N * ka * sizeof(*a));
		free(a);
		free(b);
	}
	free(ptr);
	free(col);
	free(val);
}

/* The LSA's two views (lsa.c): the join's cosine is the mix of the views'
 * cosines, and lsa_views() is lsa_project() at k from the seed beside
 * lsa_project() at k / 2 from the next seed; it tells how many leading
 * columns are the first view (what relate_candidates()' top-M searches). */
static void test_lsa_views(void **state)
{
	/* rows: a0 = e0, a1 = 0.6 e0 + 0.8 e1, a2 = 0; b0 = e1, b1 = e1 */
	const float a[] = { 1, 0, 0, 0.6f, 0.8f, 0, 0, 0, 0 };
	const float b[] = { 0, 1, 0, 1, 0, 0 };
	float o[3 * 5], *v, *p, *q;
	double dot = 0, n0 = 0;
	enum { N = 40, T = 30 };
	size_t ptr[N + 1], i, j, k, km, kp, kq;
	uint32_t col[N * 5];
	float val[N * 5];
	struct csr x = { .n_rows = N, .n_cols = T, .ptr = ptr, .col = col,
			 .val = val };
	struct lb_error err;
	uint64_t st = 11;

	(void)state;
	lb_error_init(&err);
	lsa_views_join(a, 3, b, 2, 3, 0.4, o);
	for (j = 0; j < 5; j++) {
		dot += (double)o[j] * o[5 + j];
		n0 += (double)o[j] * o[j];
	}
	assert_true(fabs(n0 - 1) < 1e-6);		/* unit rows stay unit */
	assert_true(fabs(dot - (0.6 * 0.6 + 0.4 * 1)) < 1e-6);
	for (j = 0; j < 5; j++)
		assert_true(o[10 + j] == 0);		/* no terms: zero */

	/* 40 pages of 5 terms each out of 30, unit rows */
	for (i = 0; i < N; i++) {
		ptr[i] = 5 * i;
		for (j = 0; j < 5; j++) {
			col[5 * i + j] = (uint32_t)(6 * j + relate_rand(&st) % 6);
			val[5 * i + j] = 1 / sqrtf(5);
		}
	}
	ptr[N] = 5 * N;
	k = 8;
	km = 0;
	assert_int_equal(lsa_views(&x, &k, &km, 3, 1, &v, &err), 0);
	assert_int_equal(k, 12);
	assert_int_equal(km, 8);	/* the first view: the leading 8 */
	kp = 8;
	kq = 4;
	assert_int_equal(lsa_project(&x, &kp, 3, 1, &p, &err), 0);
	assert_int_equal(lsa_project(&x, &kq, 4, 1, &q, &err), 0);
	assert_int_equal(kp + kq, 12);
	for (i = 0; i < N; i++) {
		double nn = 0;

		for (j = 0; j < 8; j++)
			assert_true(v[i * 12 + j] ==
				    (float)sqrt(0.6) * p[i * 8 + j]);
		for (j = 0; j < 4; j++)
			assert_true(v[i * 12 + 8 + j] ==
				    (float)sqrt(0.4) * q[i * 4 + j]);
		for (j = 0; j < 12; j++)
			nn += (double)v[i * 12 + j] * v[i * 12 + j];
		assert_true(fabs(nn - 1) < 1e-5);
	}
	free(v);
	free(p);
	free(q);
	/* one dimension asked: one view */
	k = 1;
	assert_int_equal(lsa_views(&x, &k, &km, 3, 1, &v, &err), 0);
	assert_int_equal(k, 1);
	assert_int_equal(km, 1);
	free(v);
}

static void test_extend(void **state)
{
	enum { N = 12, M = 4 };
	struct lb_doc docs[N];
	const struct lb_doc *p[N];
	struct lb_relate_input in = { 0 };
	struct lb_candidates c, before;
	struct lb_error err;
	uint32_t reach[N] = { 0 };
	size_t i, j;

	(void)state;
	lb_error_init(&err);
	memset(docs, 0, sizeof(docs));
	for (i = 0; i < N; i++)
		p[i] = &docs[i];
	in.src = p;
	in.tgt = p;
	in.n_src = in.n_tgt = N;
	assert_int_equal(lb_candidates_init(&c, N, M), 0);
	/* pages 0-10 list the next four of 0-10 (each held by 4 lists);
	 * page 11 is in no list; its own row: 3, 5, 7, 9 */
	for (i = 0; i < N - 1; i++)
		for (j = 0; j < M; j++) {
			c.target[i * M + j] = (uint32_t)((i + j + 1) % (N - 1));
			c.score[i * M + j] = 0.9f - 0.1f * (float)j;
		}
	for (j = 0; j < M; j++) {
		c.target[(N - 1) * M + j] = (uint32_t)(3 + 2 * j);
		c.score[(N - 1) * M + j] = 0.5f - 0.1f * (float)j;
	}
	assert_int_equal(lb_candidates_init(&before, N, M), 0);
	memcpy(before.target, c.target, N * M * sizeof(*c.target));
	memcpy(before.score, c.score, N * M * sizeof(*c.score));

	assert_int_equal(relate_extend(&c, &in, &err), 0);
	/* the two nearest sources, 3 and 5, now list 11 last, in place of
	 * their worst entry (7 and 9: 5 lists held each, row 11 too; 4 now) */
	assert_int_equal(c.target[3 * M + 3], 11);
	assert_true(c.score[3 * M + 3] == 0.5f);
	assert_int_equal(c.target[5 * M + 3], 11);
	assert_true(c.score[5 * M + 3] == 0.4f);
	for (i = 0; i < N * M; i++)
		reach[c.target[i]]++;
	assert_int_equal(reach[11], M / 2);
	assert_int_equal(reach[7], 4);
	assert_int_equal(reach[9], 4);
	for (i = 0; i < N; i++) {
		/* the first half of every list is untouched */
		assert_memory_equal(c.target + i * M, before.target + i * M,
				    M / 2 * sizeof(*c.target));
		for (j = 1; j < M; j++)
			assert_true(c.score[i * M + j] <=
				    c.score[i * M + j - 1]);
		if (i != 3 && i != 5)
			assert_memory_equal(c.target + i * M,
					    before.target + i * M,
					    M * sizeof(*c.target));
	}
	/* idempotent */
	memcpy(before.target, c.target, N * M * sizeof(*c.target));
	memcpy(before.score, c.score, N * M * sizeof(*c.score));
	assert_int_equal(relate_extend(&c, &in, &err), 0);
	assert_memory_equal(c.target, before.target, N * M * sizeof(*c.target));
	assert_memory_equal(c.score, before.score, N * M * sizeof(*c.score));

	/* another layout (each of 0-10 in 4 lists, 11 in none): an entry
	 * is taken only from a target held by more than m/2 lists, and no
	 * target held by m/2 or more falls below m/2 */
	for (i = 0; i < N - 1; i++)
		for (j = 0; j < M; j++)
			c.target[i * M + j] = j < 2 ? (uint32_t)((i + j + 1) %
						       (N - 1)) :
				(uint32_t)((i + 5 + j) % (N - 1));
	for (i = 0; i < N; i++)
		reach[i] = 0;
	for (i = 0; i < (N - 1) * M; i++)
		reach[c.target[i]]++;
	memcpy(before.target, c.target, N * M * sizeof(*c.target));
	assert_int_equal(relate_extend(&c, &in, &err), 0);
	for (i = 0; i < N * M; i++)
		if (c.target[i] != before.target[i])
			assert_true(reach[before.target[i]] > M / 2);
	for (i = 0; i < N; i++)
		reach[i] = 0;
	for (i = 0; i < N * M; i++)
		reach[c.target[i]]++;
	for (i = 0; i < N; i++)
		assert_true(reach[i] >= M / 2);

	/* rows for another page list are refused */
	in.n_src = in.n_tgt = N - 1;
	assert_int_equal(relate_extend(&c, &in, &err), -1);
	assert_int_equal(err.code, LB_EUSAGE);
	lb_candidates_release(&c);
	lb_candidates_release(&before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lang_group),
		cmocka_unit_test(test_topm_cross),
		cmocka_unit_test(test_topm_symmetric),
		cmocka_unit_test(test_shards_symmetric),
		cmocka_unit_test(test_shards_cross),
		cmocka_unit_test(test_topm_small),
		cmocka_unit_test(test_topm_small_ties),
		cmocka_unit_test(test_topm_keys),
		cmocka_unit_test(test_topm_row_keys),
		cmocka_unit_test(test_relate_median),
		cmocka_unit_test(test_cand_order),
		cmocka_unit_test(test_relate_dots),
		cmocka_unit_test(test_lsa_orth),
		cmocka_unit_test(test_topm_padding),
		cmocka_unit_test(test_topm_fine),
		cmocka_unit_test(test_topm_duplicates),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_tokens_ascii),
		cmocka_unit_test(test_tokens_ascii_random),
		cmocka_unit_test(test_text_threads),
		cmocka_unit_test(test_text_terms),
		cmocka_unit_test(test_terms_version),
		cmocka_unit_test(test_text_weights),
		cmocka_unit_test(test_candidates_topics),
		cmocka_unit_test(test_candidates_languages),
		cmocka_unit_test(test_candidates_language_alone),
		cmocka_unit_test(test_candidates_blocks),
		cmocka_unit_test(test_candidates_edges),
		cmocka_unit_test(test_candidates_links),
		cmocka_unit_test(test_text_source),
		cmocka_unit_test(test_extend),
		cmocka_unit_test(test_rerank),
		cmocka_unit_test(test_sparse_memo),
		cmocka_unit_test(test_text_vectors_bits),
		cmocka_unit_test(test_lsa_views),
		cmocka_unit_test(test_lsa_spmm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
