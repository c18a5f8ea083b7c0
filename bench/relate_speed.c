/*
 * relate_speed - time of relate_topm() (the candidate step) against one
 * bare sgemm of the same product, same vectors, same run.
 *
 *   relate_speed N D M
 *
 * Same-set: N pages against themselves (symmetric path, itself excluded).
 * Cross-set: N sources against N other targets. The bare sgemm computes
 * the full N x N product (in strips of 2048 rows, OpenBLAS threads on)
 * and does nothing with it: the floor for anyone who computes every
 * score. Prints the OpenBLAS kernel, times, ratios, peak memory, and a
 * checksum of the top-M scores to compare with relate_faiss; and the time
 * of relate_extend() on the same-set candidates (the lists extended for
 * targets few lists hold), with how many entries it moved.
 *
 *   relate_speed extend N M
 *
 * times relate_extend() alone on N synthetic lists of M (targets drawn
 * skewed, u^2, so that a share of the pages is in few lists or none):
 * its cost at sizes where the top-M itself takes too long here (10^6).
 *
 *   relate_speed rerank N M NNZ
 *
 * times the hybrid re-ranking (rerank.c) alone: N synthetic lists of 2M
 * dense candidates (uniform targets) re-scored with the sparse cosine of
 * N synthetic term rows of NNZ entries (columns drawn u^2 over 100,000
 * terms: a few frequent, most rare; unit rows) and cut to M, on every
 * core; prints CPU and wall seconds and the memory of the term rows.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "linkbot/relate.h"
#include "clock.h"
#include "relate_vec.h"
#include "../src/relate/relate_int.h"

static double bare_sgemm(const float *a, const float *b, size_t n, size_t d,
			 double *cpu)
{
	size_t strip = 2048, i;
	float *c = malloc(strip * n * sizeof(*c));
	double t0 = now_s();

	*cpu = cpu_s();
	for (i = 0; i < n; i += strip) {
		size_t r = n - i < strip ? n - i : strip;

		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)r,
			    (int)n, (int)d, 1.0f, a + i * d, (int)d, b, (int)d,
			    0.0f, c, (int)n);
	}
	t0 = now_s() - t0;
	*cpu = cpu_s() - *cpu;
	free(c);
	return t0;
}

/* relate_extend() on c (same set of n pages); prints time and changes */
static int time_extend(struct lb_candidates *c, size_t n)
{
	const struct lb_doc **p = malloc(n * sizeof(*p));
	struct lb_relate_input in = { 0 };
	uint32_t *before = malloc(c->n_src * c->m * sizeof(*before));
	struct lb_error err;
	size_t i, moved = 0;
	double t0;

	lb_error_init(&err);
	if (p == NULL || before == NULL)
		return -1;
	for (i = 0; i < n; i++)	/* distinct pointers: one page list */
		p[i] = (const struct lb_doc *)(uintptr_t)(i + 1);
	in.src = in.tgt = p;
	in.n_src = in.n_tgt = n;
	memcpy(before, c->target, c->n_src * c->m * sizeof(*before));
	t0 = now_s();
	if (relate_extend(c, &in, &err) == -1)
		return fprintf(stderr, "%s\n", err.msg), -1;
	t0 = now_s() - t0;
	for (i = 0; i < c->n_src * c->m; i++)
		moved += before[i] != c->target[i];
	printf("relate_speed: extend_s=%.3f entries_changed=%zu of %zu\n", t0,
	       moved, c->n_src * c->m);
	free(before);
	free(p);
	return 0;
}

/* relate_speed extend N M: synthetic lists, skewed targets */
static int extend_only(size_t n, size_t m)
{
	struct lb_candidates c;
	uint64_t x = 42;
	size_t i, j;
	int rc;

	if (lb_candidates_init(&c, n, m) == -1)
		return 1;
	for (i = 0; i < n; i++)
		for (j = 0; j < m; j++) {
			double u;

			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			u = (double)(x >> 11) / 9007199254740992.0;
			c.target[i * m + j] = (uint32_t)(u * u * (double)n);
			c.score[i * m + j] = 0.9f - 0.01f * (float)j;
		}
	printf("relate_speed: extend only, N=%zu M=%zu\n", n, m);
	rc = time_extend(&c, n);
	lb_candidates_release(&c);
	return rc == -1;
}

static int ucmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* relate_speed rerank N M NNZ: the hybrid re-ranking alone */
static int rerank_only(size_t n, size_t m, size_t nnz)
{
	struct csr x = { .n_rows = n, .n_cols = 100000 };
	struct lb_candidates c;
	struct lb_error err;
	struct rusage r0, r1;
	uint64_t st = 42;
	size_t i, j, *srow = malloc(n * sizeof(*srow));
	double t0, cpu;

	lb_error_init(&err);
	x.ptr = malloc((n + 1) * sizeof(*x.ptr));
	x.col = malloc(n * nnz * sizeof(*x.col));
	x.val = malloc(n * nnz * sizeof(*x.val));
	if (!srow || !x.ptr || !x.col || !x.val ||
	    lb_candidates_init(&c, n, RERANK_DEPTH * m) == -1)
		return 1;
	for (i = 0; i < n; i++) {
		uint32_t *cl = x.col + i * nnz;
		size_t k = 0;

		srow[i] = i;
		x.ptr[i] = i * nnz;
		for (j = 0; j < nnz; j++) {
			double u = (double)(relate_rand(&st) >> 11) /
				   9007199254740992.0;

			cl[j] = (uint32_t)(u * u * (double)x.n_cols);
		}
		qsort(cl, nnz, sizeof(*cl), ucmp);
		for (j = 1; j < nnz; j++)	/* distinct, sorted */
			if (cl[j] <= cl[j - 1])
				cl[j] = cl[j - 1] + 1;
		for (j = 0; j < nnz; j++)
			x.val[i * nnz + j] = 1.0f / sqrtf((float)nnz);
		for (k = 0; k < c.m; k++) {
			c.target[i * c.m + k] =
				(uint32_t)(relate_rand(&st) % n);
			c.score[i * c.m + k] = 0.9f - 0.001f * (float)k;
		}
	}
	x.ptr[n] = n * nnz;
	getrusage(RUSAGE_SELF, &r0);
	t0 = now_s();
	if (rerank_hybrid(&c, &x, srow, 0, m, RERANK_SPARSE,
			  (int)sysconf(_SC_NPROCESSORS_ONLN), &err) == -1)
		return fprintf(stderr, "%s\n", err.msg), 1;
	t0 = now_s() - t0;
	getrusage(RUSAGE_SELF, &r1);
	cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec +
		       r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
	      (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec +
		       r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6;
	printf("relate_speed: rerank N=%zu depth=%zu M=%zu nnz=%zu: "
	       "rerank_s=%.3f cpu_s=%.3f term_rows_mb=%.0f\n", n,
	       RERANK_DEPTH * m, m, nnz, t0, cpu,
	       (double)n * nnz * 8 / 1e6);
	lb_candidates_release(&c);
	free(x.ptr);
	free(x.col);
	free(x.val);
	free(srow);
	return 0;
}

static double checksum(const struct lb_candidates *c)
{
	double s = 0;
	size_t i;

	for (i = 0; i < c->n_src * c->m; i++)
		s += c->score[i];
	return s;
}

int main(int argc, char **argv)
{
	size_t n;
	size_t d = argc > 2 ? strtoul(argv[2], NULL, 10) : 256;
	size_t m = argc > 3 ? strtoul(argv[3], NULL, 10) : 32;
	float *s, *t;
	struct lb_candidates c;
	struct lb_error err;
	struct rusage ru;
	double t_same, t_cross, t_bare, c_same, c_cross, c_bare;

	if (argc > 4 && strcmp(argv[1], "rerank") == 0)
		return rerank_only(strtoul(argv[2], NULL, 10),
				   strtoul(argv[3], NULL, 10),
				   strtoul(argv[4], NULL, 10));
	if (argc > 3 && strcmp(argv[1], "extend") == 0)
		return extend_only(strtoul(argv[2], NULL, 10),
				   strtoul(argv[3], NULL, 10));
	n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	s = vec_make(n, d, 1);
	t = vec_make(n, d, 2);
	lb_error_init(&err);
	printf("relate_speed: N=%zu d=%zu M=%zu openblas=%s threads=%d\n", n,
	       d, m, openblas_get_corename(), openblas_get_num_threads());
	t_same = now_s();
	c_same = cpu_s();
	if (relate_topm(s, n, s, n, d, NULL, m, 0, 0, 0, &c, &err) == -1)
		return fprintf(stderr, "%s\n", err.msg), 1;
	t_same = now_s() - t_same;
	c_same = cpu_s() - c_same;
	printf("relate_speed: same-set  checksum=%.4f\n", checksum(&c));
	if (time_extend(&c, n) == -1)
		return 1;
	lb_candidates_release(&c);
	t_cross = now_s();
	c_cross = cpu_s();
	if (relate_topm(s, n, t, n, d, NULL, m, 0, 0, 0, &c, &err) == -1)
		return fprintf(stderr, "%s\n", err.msg), 1;
	t_cross = now_s() - t_cross;
	c_cross = cpu_s() - c_cross;
	printf("relate_speed: cross-set checksum=%.4f\n", checksum(&c));
	lb_candidates_release(&c);
	getrusage(RUSAGE_SELF, &ru);
	printf("relate_speed: peak_rss_mb=%.0f (vectors %.0f MB)\n",
	       ru.ru_maxrss / 1024.0, 2.0 * n * d * 4 / 1048576);
	t_bare = bare_sgemm(s, t, n, d, &c_bare);
	printf("relate_speed: bare_sgemm_s=%.3f gflops=%.0f "
	       "bare_sgemm_cpu_s=%.3f\n", t_bare,
	       2.0 * n * n * d / t_bare / 1e9, c_bare);
	printf("relate_speed: same_set_s=%.3f ratio_vs_sgemm=%.2f "
	       "same_set_cpu_s=%.3f\n", t_same, t_same / t_bare, c_same);
	printf("relate_speed: cross_set_s=%.3f ratio_vs_sgemm=%.2f "
	       "cross_set_cpu_s=%.3f\n", t_cross, t_cross / t_bare, c_cross);
	free(s);
	free(t);
	return 0;
}
