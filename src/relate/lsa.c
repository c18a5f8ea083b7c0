/*
 * lsa.c - latent semantic projection by randomized truncated SVD.
 *
 * Design notes
 *
 * Problem: X (N pages x V terms, sparse, unit rows) -> N x k dense rows
 * whose inner products approximate the similarity of topics rather than of
 * exact words: synonyms and co-occurring terms pull pages together.
 *
 * Method (Halko, Martinsson, Tropp 2011, algorithm 4.4 with subspace
 * iteration), l = k + 10 columns:
 *   1. Omega: V x l Gaussian from the seed (splitmix64 + Box-Muller).
 *   2. Y = X Omega; Q = qr(Y).
 *   3. q = 2 times: Z = qr(X^T Q); Q = qr(X Z)  (sharpens the spectrum).
 *   4. Bt = X^T Q (V x l), so X ~ Q B with B = Bt^T.
 *   5. G = B B^T (l x l, double) = U_B S^2 U_B^T by dsyevd.
 *   6. page vectors = Q U_B[:, top k] S_k, centred (the mean page is
 *      subtracted: what every page shares says nothing about which pages
 *      are related; pages without terms stay zero, a page equal to the
 *      mean keeps its direction), rows made unit length.
 * X stays sparse (kept with its transpose, so that X^T Q is row-wise too):
 * products with it cost nnz * l and are split by rows over the threads.
 * QR and the small eigenproblem go to LAPACKE, dense products to OpenBLAS.
 *
 * Columns of X no page uses are dropped first, so memory is
 * O(N l + V_used l); the result is deterministic for a given seed.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "relate_int.h"

uint64_t relate_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double unif(uint64_t *st)
{
	return ((relate_rand(st) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

void rows_normalize(float *v, size_t n, size_t d)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		double s = 0;
		float *r = v + i * d;

		for (j = 0; j < d; j++)
			s += (double)r[j] * r[j];
		if (s <= 0)
			continue;
		s = 1 / sqrt(s);
		for (j = 0; j < d; j++)
			r[j] = (float)(r[j] * s);
	}
}

/* Y (rows x l) = A B for sparse A (column ids < rows of B), dense B. */
struct spmm_job {
	const size_t *ptr;
	const uint32_t *col;
	const float *val;
	const float *b;
	float *y;
	size_t l, r0, r1;
	int wide;		/* spmm_rows_avx() */
};

static void spmm_plain(const struct spmm_job *j)
{
	size_t i, p, k;

	for (i = j->r0; i < j->r1; i++) {
		float *restrict yi = j->y + i * j->l;

		memset(yi, 0, j->l * sizeof(*yi));
		for (p = j->ptr[i]; p < j->ptr[i + 1]; p++) {
			const float *restrict o =
				j->b + (size_t)j->col[p] * j->l;
			float v = j->val[p];

			for (k = 0; k < j->l; k++)
				yi[k] += v * o[k];
		}
	}
}

#if defined(__x86_64__)
#include <immintrin.h>

/*
 * spmm_plain() with a row's output held in four AVX registers (32
 * columns at a time; the last vector's columns past l masked off, zero):
 * y[k] = y[k] + v * o[k], a float product rounded, then a float sum
 * rounded, in the entries' order from +0, as the plain loop computes it
 * (no FMA: the product is rounded first), so the same bits, with one
 * load, multiply and add per 8 columns an entry instead of the loop's
 * loads and stores of y. The LSA's products were 2.4 M of a 100-page
 * site's instructions (bench/RESULTS.md, "the build of a small client").
 */
__attribute__((target("avx")))
static void spmm_avx(const struct spmm_job *j)
{
	size_t i, p, c0, q;

	for (c0 = 0; c0 < j->l; c0 += 32) {
		size_t w = j->l - c0 < 32 ? j->l - c0 : 32;
		size_t nv = (w + 7) / 8;
		__m256i mk[4];

		for (q = 0; q < 4; q++) {
			int e[8], t;

			for (t = 0; t < 8; t++)
				e[t] = q * 8 + (size_t)t < w ? -1 : 0;
			mk[q] = _mm256_setr_epi32(e[0], e[1], e[2], e[3], e[4],
						  e[5], e[6], e[7]);
		}
		for (i = j->r0; i < j->r1; i++) {
			__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0;
			__m256 a3 = a0;
			float *yi = j->y + i * j->l + c0;

			for (p = j->ptr[i]; p < j->ptr[i + 1]; p++) {
				const float *o = j->b +
						 (size_t)j->col[p] * j->l + c0;
				__m256 v = _mm256_set1_ps(j->val[p]);

				a0 = _mm256_add_ps(a0, _mm256_mul_ps(v,
					_mm256_maskload_ps(o, mk[0])));
				if (nv < 2)
					continue;
				a1 = _mm256_add_ps(a1, _mm256_mul_ps(v,
					_mm256_maskload_ps(o + 8, mk[1])));
				if (nv < 3)
					continue;
				a2 = _mm256_add_ps(a2, _mm256_mul_ps(v,
					_mm256_maskload_ps(o + 16, mk[2])));
				if (nv < 4)
					continue;
				a3 = _mm256_add_ps(a3, _mm256_mul_ps(v,
					_mm256_maskload_ps(o + 24, mk[3])));
			}
			_mm256_maskstore_ps(yi, mk[0], a0);
			if (nv > 1)
				_mm256_maskstore_ps(yi + 8, mk[1], a1);
			if (nv > 2)
				_mm256_maskstore_ps(yi + 16, mk[2], a2);
			if (nv > 3)
				_mm256_maskstore_ps(yi + 24, mk[3], a3);
		}
	}
}
#endif

static void *spmm_rows(void *arg)
{
	const struct spmm_job *j = arg;

#if defined(__x86_64__)
	if (j->wide) {
		spmm_avx(j);
		return NULL;
	}
#endif
	spmm_plain(j);
	return NULL;
}

/*
 * Rows split into nt contiguous ranges of about equal entries, one thread
 * each; every output row is computed by one thread in one order, so the
 * result does not depend on nt.
 */
static void spmm(size_t rows, const size_t *ptr, const uint32_t *col,
		 const float *val, const float *b, size_t l, float *y,
		 int nt)
{
	struct spmm_job job[8];
	pthread_t tid[8];
	int started[8] = { 0 }, t, wide = relate_dots_wide();
	size_t r = 0;

	if (nt < 1)
		nt = 1;
	if (nt > 8)
		nt = 8;
	for (t = 0; t < nt; t++) {
		size_t goal = ptr[rows] / (size_t)nt * (size_t)(t + 1);

		job[t] = (struct spmm_job){ ptr, col, val, b, y, l, r, r,
					    wide };
		while (job[t].r1 < rows && (t == nt - 1 || ptr[job[t].r1] < goal))
			job[t].r1++;
		r = job[t].r1;
	}
	for (t = 1; t < nt; t++)
		started[t] = pthread_create(&tid[t], NULL, spmm_rows,
					    &job[t]) == 0;
	spmm_rows(&job[0]);
	for (t = 1; t < nt; t++) {
		if (started[t])
			pthread_join(tid[t], NULL);
		else
			spmm_rows(&job[t]);
	}
}

/*
 * Orthonormal columns of a (rows x l, rows >= l), in place.
 *
 * LAPACK works on column-major matrices: LAPACKE's row-major sgeqrf and
 * sorgqr each check a for NaN and transpose it in and out, four
 * transposes and two scans of a where one transpose in and one out
 * suffice (0.74 M of a 100-page site's instructions were the wrappers').
 * So a is transposed once and both routines run on the column-major
 * copy, through the _work calls with the workspace each one asks for
 * (the high-level calls' own query: the same blocking, so the same
 * bits; test_lsa_orth); a NaN is refused where LAPACKE refused it (a,
 * then the factors).
 */
int lsa_orth(float *a, size_t rows, size_t l, float *tau)
{
	lapack_int m = (lapack_int)rows, n = (lapack_int)l, lw;
	float q1 = 0, q2 = 0, *t = NULL, *work = NULL;
	size_t i, j;
	int rc = -1;

	for (i = 0; i < rows * l; i++)
		if (isnan(a[i]))
			return -1;
	if (LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, m, n, NULL, m, NULL, &q1,
				-1) != 0 ||
	    LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, m, n, n, NULL, m, NULL, &q2,
				-1) != 0)
		return -1;
	lw = (lapack_int)(q1 > q2 ? q1 : q2);
	t = malloc(rows * l * sizeof(*t));
	work = malloc(((size_t)lw + 1) * sizeof(*work));
	if (t == NULL || work == NULL)
		goto out;
	for (i = 0; i < rows; i++)
		for (j = 0; j < l; j++)
			t[j * rows + i] = a[i * l + j];
	if (LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, m, n, t, m, tau, work,
				(lapack_int)q1) != 0)
		goto out;
	/* what LAPACKE_sorgqr() would refuse */
	for (i = 0; i < rows * l; i++)
		if (isnan(t[i]))
			goto out;
	for (i = 0; i < l; i++)
		if (isnan(tau[i]))
			goto out;
	if (LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, m, n, n, t, m, tau, work,
				(lapack_int)q2) != 0)
		goto out;
	for (i = 0; i < rows; i++)
		for (j = 0; j < l; j++)
			a[i * l + j] = t[j * rows + i];
	rc = 0;
out:
	free(t);
	free(work);
	return rc;
}

int lsa_project(const struct csr *x, size_t *kp, uint64_t seed,
		int threads, float **out, struct lb_error *err)
{
	size_t n = x->n_rows, k = *kp, l, v = 0, i, j, it, nnz;
	uint32_t *map = NULL, *xcol = NULL, *tcol = NULL;
	size_t *tptr = NULL;
	float *tval = NULL;
	float *om = NULL, *y = NULL, *z = NULL, *tau = NULL, *g = NULL;
	float *ub = NULL, *res = NULL;
	double *gd = NULL, *ev = NULL, *mu = NULL;
	uint64_t st = seed ? seed : 0x6c696e6b626f74ULL;	/* "linkbot" */
	int rc = -1;

	*out = NULL;
	map = malloc((x->n_cols ? x->n_cols : 1) * sizeof(*map));
	if (map == NULL)
		goto nomem;
	for (i = 0; i < x->n_cols; i++)
		map[i] = UINT32_MAX;
	for (i = 0; i < x->ptr[n]; i++)
		if (map[x->col[i]] == UINT32_MAX)
			map[x->col[i]] = 0;
	for (i = 0; i < x->n_cols; i++)
		if (map[i] == 0)
			map[i] = (uint32_t)v++;
	l = k + 10;
	if (l > n)
		l = n;
	if (l > v)
		l = v;
	if (k > l)
		k = l;
	res = calloc(n * (k ? k : 1) + 1, sizeof(*res));
	if (res == NULL)
		goto nomem;
	if (k == 0) {
		*kp = 0;
		*out = res;
		res = NULL;
		rc = 0;
		goto out;
	}
	om = malloc(v * l * sizeof(*om));
	z = malloc(v * l * sizeof(*z));
	y = malloc(n * l * sizeof(*y));
	tau = malloc(l * sizeof(*tau));
	g = malloc(l * l * sizeof(*g));
	gd = malloc(l * l * sizeof(*gd));
	ev = malloc(l * sizeof(*ev));
	ub = malloc(l * k * sizeof(*ub));
	if (!om || !z || !y || !tau || !g || !gd || !ev || !ub)
		goto nomem;
	for (i = 0; i < v * l; i += 2) {
		double r = sqrt(-2 * log(unif(&st))), t = 2 * M_PI * unif(&st);

		om[i] = (float)(r * cos(t));
		if (i + 1 < v * l)
			om[i + 1] = (float)(r * sin(t));
	}
	/* X with used columns only, and its transpose (rows = terms) */
	nnz = x->ptr[n];
	xcol = malloc((nnz + 1) * sizeof(*xcol));
	tptr = calloc(v + 2, sizeof(*tptr));
	tcol = malloc((nnz + 1) * sizeof(*tcol));
	tval = malloc((nnz + 1) * sizeof(*tval));
	if (!xcol || !tptr || !tcol || !tval)
		goto nomem;
	for (i = 0; i < nnz; i++) {
		xcol[i] = map[x->col[i]];
		tptr[xcol[i] + 2]++;
	}
	for (i = 0; i < v; i++)
		tptr[i + 2] += tptr[i + 1];
	for (i = 0; i < n; i++)
		for (j = x->ptr[i]; j < x->ptr[i + 1]; j++) {
			size_t at = tptr[xcol[j] + 1]++;

			tcol[at] = (uint32_t)i;
			tval[at] = x->val[j];
		}
	/* now tptr[t] .. tptr[t + 1] is term t's row */

	spmm(n, x->ptr, xcol, x->val, om, l, y, threads);
	if (lsa_orth(y, n, l, tau) == -1)
		goto lapack;
	for (it = 0; it < 2; it++) {
		spmm(v, tptr, tcol, tval, y, l, z, threads);
		if (lsa_orth(z, v, l, tau) == -1)
			goto lapack;
		spmm(n, x->ptr, xcol, x->val, z, l, y, threads);
		if (lsa_orth(y, n, l, tau) == -1)
			goto lapack;
	}
	spmm(v, tptr, tcol, tval, y, l, z, threads);	/* Bt = X^T Q */
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)l, (int)l,
		    (int)v, 1.0f, z, (int)l, z, (int)l, 0.0f, g, (int)l);
	for (i = 0; i < l * l; i++)
		gd[i] = g[i];
	if (LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)l, gd,
			   (lapack_int)l, ev) != 0)
		goto lapack;
	/* eigenvalues ascending: column l-1-j is the j-th largest */
	for (i = 0; i < l; i++)
		for (j = 0; j < k; j++) {
			double s = ev[l - 1 - j] > 0 ? sqrt(ev[l - 1 - j]) : 0;

			ub[i * k + j] = (float)(gd[i * l + (l - 1 - j)] * s);
		}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)k,
		    (int)l, 1.0f, y, (int)l, ub, (int)k, 0.0f, res, (int)k);
	/* centre: the mean page is what every page shares; without it the
	 * cosines measure what sets pages apart */
	/* (over pages with terms only: a page without any stays zero, so it
	 * relates to nothing rather than to the opposite of the mean) */
	for (j = 0, it = 0; it < n; it++)
		j += x->ptr[it + 1] > x->ptr[it];
	if (j > 0 && (mu = calloc(k, sizeof(*mu))) == NULL)
		goto nomem;
	if (j > 0) {
		size_t used = j;

		for (i = 0; i < n; i++)
			for (j = 0; j < k; j++)
				mu[j] += res[i * k + j];
		for (j = 0; j < k; j++)
			mu[j] /= (double)used;
		for (i = 0; i < n; i++) {
			double before = 0, after = 0, t;

			if (x->ptr[i + 1] == x->ptr[i])
				continue;
			for (j = 0; j < k; j++) {
				t = res[i * k + j];
				before += t * t;
				after += (t - mu[j]) * (t - mu[j]);
			}
			/* a page that is the mean page (every page alike)
			 * keeps its direction instead of vanishing */
			if (after < 1e-6 * before)
				continue;
			for (j = 0; j < k; j++)
				res[i * k + j] -= (float)mu[j];
		}
	}
	rows_normalize(res, n, k);
	*kp = k;
	*out = res;
	res = NULL;
	rc = 0;
	goto out;
lapack:
	lb_error_set(err, LB_EINTERNAL, "LAPACK failed in the LSA projection");
	goto out;
nomem:
	lb_error_set(err, LB_ENOMEM, "LSA projection of %zu pages", n);
out:
	free(map);
	free(xcol);
	free(tptr);
	free(tcol);
	free(tval);
	free(om);
	free(y);
	free(z);
	free(tau);
	free(g);
	free(gd);
	free(ev);
	free(mu);
	free(ub);
	free(res);
	return rc;
}

/*
 * Two views of one LSA (issue 20, round 7; docs/relate.md, "two views").
 *
 * Design notes. The randomized SVD above is approximate: its last
 * components depend on the seed, and on the tuning half a seed alone
 * moves published precision@8 by up to 0.019 (python, six seeds:
 * 0.5296-0.5484). A second projection of the same rows at half the
 * dimensions, from the next seed, joined to the first as
 * [sqrt(1 - w) a, sqrt(w) b] (a, b unit rows), gives rows whose inner
 * product is (1 - w) cos_a + w cos_b: the leading components, which both
 * views hold, count more than the seed-dependent tail, and two draws of
 * the tail average. bench/RESULTS.md, round 7, tuning half, mean over
 * five seeds: python 0.5410 -> 0.5536, postgresql 0.7428 -> 0.7475,
 * scipy 0.9834 -> 0.9847; two views of equal size gained about half of
 * that, one view with its leading half up-weighted gained on python only.
 * Pages without terms are zero in both views and stay zero.
 */
void lsa_views_join(const float *a, size_t da, const float *b, size_t db,
		    size_t n, double w, float *out)
{
	float sa = (float)sqrt(1 - w), sb = (float)sqrt(w);
	size_t i, j, d = da + db;

	for (i = 0; i < n; i++) {
		for (j = 0; j < da; j++)
			out[i * d + j] = sa * a[i * da + j];
		for (j = 0; j < db; j++)
			out[i * d + da + j] = sb * b[i * db + j];
	}
}

int lsa_views(const struct csr *x, size_t *k, size_t *k_main, uint64_t seed,
	      int threads, float **out, struct lb_error *err)
{
	size_t ka = *k, kb = *k / 2;
	float *a = NULL, *b = NULL, *res;

	if (lsa_project(x, &ka, seed, threads, &a, err) == -1)
		return -1;
	if (k_main)
		*k_main = ka;
	if (kb == 0 || ka < 2) {	/* too few dimensions for two */
		*k = ka;
		*out = a;
		return 0;
	}
	if (kb > ka / 2)
		kb = ka / 2;
	if (lsa_project(x, &kb, seed + 1, threads, &b, err) == -1) {
		free(a);
		return -1;
	}
	res = malloc((x->n_rows + 1) * (ka + kb) * sizeof(*res));
	if (res == NULL) {
		free(a);
		free(b);
		return lb_error_set(err, LB_ENOMEM, "LSA views of %zu pages",
				    x->n_rows);
	}
	lsa_views_join(a, ka, b, kb, x->n_rows, LSA_VIEW2_SHARE, res);
	free(a);
	free(b);
	*k = ka + kb;
	*out = res;
	return 0;
}
