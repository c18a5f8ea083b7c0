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
 * checksum of the top-M scores to compare with relate_faiss.
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cblas.h>

#include "linkbot/relate.h"
#include "relate_vec.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double bare_sgemm(const float *a, const float *b, size_t n, size_t d)
{
	size_t strip = 2048, i;
	float *c = malloc(strip * n * sizeof(*c));
	double t0 = now_s();

	for (i = 0; i < n; i += strip) {
		size_t r = n - i < strip ? n - i : strip;

		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)r,
			    (int)n, (int)d, 1.0f, a + i * d, (int)d, b, (int)d,
			    0.0f, c, (int)n);
	}
	t0 = now_s() - t0;
	free(c);
	return t0;
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
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	size_t d = argc > 2 ? strtoul(argv[2], NULL, 10) : 256;
	size_t m = argc > 3 ? strtoul(argv[3], NULL, 10) : 32;
	float *s = vec_make(n, d, 1), *t = vec_make(n, d, 2);
	struct lb_candidates c;
	struct lb_error err;
	struct rusage ru;
	double t_same, t_cross, t_bare;

	lb_error_init(&err);
	printf("relate_speed: N=%zu d=%zu M=%zu openblas=%s threads=%d\n", n,
	       d, m, openblas_get_corename(), openblas_get_num_threads());
	t_same = now_s();
	if (relate_topm(s, n, s, n, d, NULL, m, 0, 0, 0, &c, &err) == -1)
		return fprintf(stderr, "%s\n", err.msg), 1;
	t_same = now_s() - t_same;
	printf("relate_speed: same-set  checksum=%.4f\n", checksum(&c));
	lb_candidates_release(&c);
	t_cross = now_s();
	if (relate_topm(s, n, t, n, d, NULL, m, 0, 0, 0, &c, &err) == -1)
		return fprintf(stderr, "%s\n", err.msg), 1;
	t_cross = now_s() - t_cross;
	printf("relate_speed: cross-set checksum=%.4f\n", checksum(&c));
	lb_candidates_release(&c);
	getrusage(RUSAGE_SELF, &ru);
	printf("relate_speed: peak_rss_mb=%.0f (vectors %.0f MB)\n",
	       ru.ru_maxrss / 1024.0, 2.0 * n * d * 4 / 1048576);
	t_bare = bare_sgemm(s, t, n, d);
	printf("relate_speed: bare_sgemm_s=%.3f gflops=%.0f\n", t_bare,
	       2.0 * n * n * d / t_bare / 1e9);
	printf("relate_speed: same_set_s=%.3f ratio_vs_sgemm=%.2f\n", t_same,
	       t_same / t_bare);
	printf("relate_speed: cross_set_s=%.3f ratio_vs_sgemm=%.2f\n", t_cross,
	       t_cross / t_bare);
	free(s);
	free(t);
	return 0;
}
