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
 *      are related), rows made unit length.
 * X stays sparse: products with it cost nnz * l. QR and the small
 * eigenproblem go to LAPACKE, the dense products to OpenBLAS.
 *
 * Columns of X no page uses are dropped first, so memory is
 * O(N l + V_used l); the result is deterministic for a given seed.
 */
#include <math.h>
#include <stdlib.h>
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

/* Y (n x l) = X Om (Om: V x l), with column map. */
static void spmm(const struct csr *x, const uint32_t *map, const float *om,
		 size_t l, float *y)
{
	size_t i, p, j;

	memset(y, 0, x->n_rows * l * sizeof(*y));
	for (i = 0; i < x->n_rows; i++) {
		float *yi = y + i * l;

		for (p = x->ptr[i]; p < x->ptr[i + 1]; p++) {
			const float *o = om + (size_t)map[x->col[p]] * l;
			float v = x->val[p];

			for (j = 0; j < l; j++)
				yi[j] += v * o[j];
		}
	}
}

/* Z (V x l) = X^T Q (Q: n x l). */
static void spmtm(const struct csr *x, const uint32_t *map, size_t v_used,
		  const float *q, size_t l, float *z)
{
	size_t i, p, j;

	memset(z, 0, v_used * l * sizeof(*z));
	for (i = 0; i < x->n_rows; i++) {
		const float *qi = q + i * l;

		for (p = x->ptr[i]; p < x->ptr[i + 1]; p++) {
			float *zc = z + (size_t)map[x->col[p]] * l;
			float v = x->val[p];

			for (j = 0; j < l; j++)
				zc[j] += v * qi[j];
		}
	}
}

/* Orthonormal columns of a (rows x l, rows >= l), in place. */
static int orth(float *a, size_t rows, size_t l, float *tau)
{
	if (LAPACKE_sgeqrf(LAPACK_ROW_MAJOR, (lapack_int)rows, (lapack_int)l,
			   a, (lapack_int)l, tau) != 0)
		return -1;
	if (LAPACKE_sorgqr(LAPACK_ROW_MAJOR, (lapack_int)rows, (lapack_int)l,
			   (lapack_int)l, a, (lapack_int)l, tau) != 0)
		return -1;
	return 0;
}

int lsa_project(const struct csr *x, size_t *kp, uint64_t seed,
		float **out, struct lb_error *err)
{
	size_t n = x->n_rows, k = *kp, l, v = 0, i, j, it;
	uint32_t *map = NULL;
	float *om = NULL, *y = NULL, *z = NULL, *tau = NULL, *g = NULL;
	float *ub = NULL, *res = NULL;
	double *gd = NULL, *ev = NULL;
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
	spmm(x, map, om, l, y);
	if (orth(y, n, l, tau) == -1)
		goto lapack;
	for (it = 0; it < 2; it++) {
		spmtm(x, map, v, y, l, z);
		if (orth(z, v, l, tau) == -1)
			goto lapack;
		spmm(x, map, z, l, y);
		if (orth(y, n, l, tau) == -1)
			goto lapack;
	}
	spmtm(x, map, v, y, l, z);	/* Bt = X^T Q */
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
	for (j = 0; j < k; j++) {
		double mu = 0;

		for (i = 0; i < n; i++)
			mu += res[i * k + j];
		mu /= (double)n;
		for (i = 0; i < n; i++)
			res[i * k + j] -= (float)mu;
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
	free(om);
	free(y);
	free(z);
	free(tau);
	free(g);
	free(gd);
	free(ev);
	free(ub);
	free(res);
	return rc;
}
