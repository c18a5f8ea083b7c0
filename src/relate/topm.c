/*
 * topm.c - exact top-M by inner product, blocked sgemm fused with selection.
 *
 * Design notes
 *
 * Problem: for each source row i in [row_begin, row_end), the M targets j
 * with the largest s_i . t_j (j != self[i]), best first, ties by the lower
 * j. N x N scores never exist in memory.
 *
 * Grid: sources and targets are cut into blocks of BLK rows. A work item is
 * one block pair (I, J); it computes C = S_I T_J^T with single-threaded
 * cblas_sgemm calls of CHUNK rows (CHUNK x BLK floats, 256 KiB, stays in
 * L2 with the packed panels) and scans each chunk at once into the per-row
 * selections. The grid depends only on the matrix sizes,
 * never on the row range or the thread count, and every pair's score comes
 * from the same sgemm call (bf16 path: the same bf_dot()) whatever the
 * range: that is what makes a shard's rows bit-identical to the same rows
 * of the unsharded run.
 *
 * Symmetry: when the targets are the sources (same matrix), only pairs
 * I <= J are computed. Rows of I take C row-wise; rows of J (J > I) take C
 * column-wise (the transpose), so each off-diagonal score is computed once
 * and feeds both rows' selections. Half the flops of the full product.
 *
 * Selection: a bounded min-heap of M (score, target) per row, the root the
 * worst; the order is total (score, then lower target wins), so the result
 * does not depend on the order in which candidates arrive. The scan keeps
 * the root score as a threshold, so almost every score costs one compare;
 * with AVX2 (checked at run time) one compare covers 8 or 16 scores.
 *
 * Threads: each thread takes work items from an atomic counter and owns a
 * private set of heaps for the rows in range; the heaps are merged at the
 * end (still a total order, so deterministic). OpenBLAS's own threads are
 * set to 1 meanwhile; the parallelism is ours.
 *
 * bf16 prefilter (AVX512_BF16 CPUs): the chunk's scores come from bf16
 * copies through our own kernel, twice the fp32 multiply-adds per
 * instruction, and only scores within the proven rounding bound of a
 * row's floor are recomputed in fp32 and offered (see "bf16 prefilter"
 * below): still the exact top-M.
 *
 * Cost: flops 2 * R * N_t * d (cross) or about half of N^2 d (same set);
 * memory threads * R * M * 8 bytes for heaps + threads * BLK^2 * 4 for C.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "linkbot/relate.h"
#include "relate_int.h"

#ifndef BLK
#define BLK 512		/* the grid: never depends on ranges or threads */
#endif
#ifndef CHUNK
#define CHUNK 128	/* rows of one sgemm call within a block pair */
#endif

struct heap_set {
	size_t m;
	uint32_t *tgt;		/* rows * m */
	float *score;		/* rows * m */
	uint32_t *n;		/* rows: entries used */
};

/* a worse than b: lower score, or equal score and higher target. */
static inline int worse(float sa, uint32_t ta, float sb, uint32_t tb)
{
	return sa < sb || (sa == sb && ta > tb);
}

static void heap_push(float *hs, uint32_t *ht, uint32_t *cnt, size_t m,
		      float s, uint32_t t)
{
	size_t i, c;

	if (*cnt < m) {
		/* sift up */
		i = (*cnt)++;
		while (i > 0) {
			size_t p = (i - 1) / 2;

			if (!worse(s, t, hs[p], ht[p]))
				break;
			hs[i] = hs[p];
			ht[i] = ht[p];
			i = p;
		}
		hs[i] = s;
		ht[i] = t;
		return;
	}
	if (!worse(hs[0], ht[0], s, t))
		return;
	/* replace root, sift down */
	i = 0;
	for (;;) {
		c = 2 * i + 1;
		if (c >= m)
			break;
		if (c + 1 < m && worse(hs[c + 1], ht[c + 1], hs[c], ht[c]))
			c++;
		if (!worse(hs[c], ht[c], s, t))
			break;
		hs[i] = hs[c];
		ht[i] = ht[c];
		i = c;
	}
	hs[i] = s;
	ht[i] = t;
}

/* Threshold below which a score cannot enter the heap. */
static inline float heap_floor(const float *hs, uint32_t cnt, size_t m)
{
	return cnt < m ? -INFINITY : hs[0];
}

struct job {
	const float *src, *tgt;
	size_t n_src, n_tgt, d, m;
	const long *self;
	size_t row_begin, row_end;
	int symmetric;
	int avx2;		/* use the AVX2 scans */
	int bf16;		/* bf16 prefilter + exact recheck (below) */
	const uint32_t *a2;	/* sources as bf16 pairs, rows x kpn */
	const uint32_t *b2;	/* targets as bf16 pairs, panels of 16 */
	size_t kpn;		/* d / 2 rounded up */
	const float *nrm_s, *nrm_t;	/* row norms, rounded up */
	const float *err_s, *err_t;	/* norms of their bf16 rounding errors */
	const float *bmax_s, *bmax_t;	/* largest norm of each block */
	const float *bemax_s, *bemax_t;	/* largest error norm of each block */
	size_t nb_src, nb_tgt;	/* blocks */
	size_t n_items;
	size_t *items;		/* pairs (bi_, bj_) encoded bi_ * nb_tgt + bj_ */
	size_t group;		/* items a thread takes at once */
	atomic_size_t next;
	struct heap_set *heaps;	/* one per thread */
};

/* Offer score s of target t to row r's heap; updates the floor. */
static inline void offer(struct heap_set *h, size_t r, float s, uint32_t t,
			 float *fl)
{
	float *hs = h->score + r * h->m;
	uint32_t *ht = h->tgt + r * h->m;

	heap_push(hs, ht, h->n + r, h->m, s, t);
	*fl = heap_floor(hs, h->n[r], h->m);
}

/*
 * Row feed: scores c[0..n) of targets j0.. for heap row r, skipping
 * target skip. The scalar loop is the reference; the AVX2 one below skips
 * 16 scores at a time when none reaches the floor (the common case once
 * the heap is full) and then does exactly what the scalar loop does.
 */
static void feed_row(struct heap_set *h, size_t r, const float *c,
		     size_t n, uint32_t j0, long skip)
{
	float fl = heap_floor(h->score + r * h->m, h->n[r], h->m);
	size_t j;

	for (j = 0; j < n; j++) {
		if (!(c[j] >= fl) || (long)(j0 + j) == skip)
			continue;	/* (NaN fails >=) */
		offer(h, r, c[j], (uint32_t)(j0 + j), &fl);
	}
}

/*
 * Column feed: one row of C (source row `src` of block I) offered to the
 * heaps of the block's columns, rows j0 + j; fl[j] is each column's floor
 * (INFINITY for rows outside the range). The skip test uses self.
 */
static void feed_cols(struct heap_set *h, const float *ci, size_t n,
		      size_t j0, size_t rb, uint32_t src, const long *self,
		      float *fl)
{
	size_t j;

	for (j = 0; j < n; j++) {
		if (!(ci[j] >= fl[j]))
			continue;
		if (self && self[j0 + j] == (long)src)
			continue;
		offer(h, j0 + j - rb, ci[j], src, &fl[j]);
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1

__attribute__((target("avx2")))
static void feed_row_avx2(struct heap_set *h, size_t r, const float *c,
			  size_t n, uint32_t j0, long skip)
{
	float fl = heap_floor(h->score + r * h->m, h->n[r], h->m);
	size_t j = 0;

	for (; j + 16 <= n; j += 16) {
		__m256 f = _mm256_set1_ps(fl);
		unsigned mask =
			(unsigned)_mm256_movemask_ps(_mm256_cmp_ps(
				_mm256_loadu_ps(c + j), f, _CMP_GE_OQ)) |
			(unsigned)_mm256_movemask_ps(_mm256_cmp_ps(
				_mm256_loadu_ps(c + j + 8), f, _CMP_GE_OQ))
				<< 8;

		while (mask) {
			size_t k = j + (size_t)__builtin_ctz(mask);

			mask &= mask - 1;
			if (!(c[k] >= fl) || (long)(j0 + k) == skip)
				continue;
			offer(h, r, c[k], (uint32_t)(j0 + k), &fl);
		}
	}
	for (; j < n; j++) {
		if (!(c[j] >= fl) || (long)(j0 + j) == skip)
			continue;
		offer(h, r, c[j], (uint32_t)(j0 + j), &fl);
	}
}

__attribute__((target("avx2")))
static void feed_cols_avx2(struct heap_set *h, const float *ci, size_t n,
			   size_t j0, size_t rb, uint32_t src,
			   const long *self, float *fl)
{
	size_t j = 0;

	for (; j + 8 <= n; j += 8) {
		unsigned mask = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(
			_mm256_loadu_ps(ci + j), _mm256_loadu_ps(fl + j),
			_CMP_GE_OQ));

		while (mask) {
			size_t k = j + (size_t)__builtin_ctz(mask);

			mask &= mask - 1;
			if (self && self[j0 + k] == (long)src)
				continue;
			offer(h, j0 + k - rb, ci[k], src, &fl[k]);
		}
	}
	feed_cols(h, ci + j, n - j, j0 + j, rb, src, self, fl + j);
}
#endif

#ifdef HAVE_AVX2_PATH
/*
 * bf16 prefilter (CPUs with AVX512_BF16): the scores of a chunk are first
 * computed from bf16 copies of the vectors (8 significant bits) by our own
 * kernel, vdpbf16ps, twice the multiply-adds of fp32 per instruction; a
 * score that could reach a row's floor is then recomputed exactly in fp32
 * (bf_dot(), one fixed order, the same for (a, b) and (b, a)), and only
 * that exact score is offered. Rounding both vectors to bf16 moves each
 * vectors a, b and their bf16 roundings a' = a + ea, b' = b + eb,
 * a.b - a'.b' = -(a.eb + ea.b'), so by Cauchy-Schwarz the bf16 score is
 * within |a| |eb| + |ea| |b'| of the exact one, plus the two sums'
 * rounding (each at most d 2^-24 |a'| |b'|). |ea| is measured per vector:
 * each element moves by at most 2^-8 of itself, and the moves do not line
 * up, so |ea| is near 2^-9.8 |a| and the band about 3.5 times narrower than
 * the element-wise bound (2^-7 + 2^-16) |a| |b| that we used first. A candidate whose bf16 score is below
 * floor - margin cannot enter the top M, and the result is
 * the exact top-M of the fp32 scores, whatever the order of the work.
 * The first M candidates of a row (floor -inf) are all recomputed, then
 * only those near the floor: a few percent of the work.
 */
#define BF_MR 8		/* rows of the micro-kernel */
#define BF_NP 2		/* panels of 16 targets (the kernel is written for 8 x 2) */

/* the band: |bf16 score - fp32 score| of a vector (norm n, rounding error
 * norm e) with any vector of a block (largest norm bn, largest error be) */
static inline float bf_margin(float n, float e, float bn, float be, size_t d)
{
	double nb = (double)bn + be;

	return (float)(((double)n * be + (double)e * nb +
			4.0 * (double)d / 16777216.0 * ((double)n + e) * nb) *
		       (1 + 1e-5)) + 1e-30f;
}

static uint16_t bf16_round(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	u += 0x7fffu + ((u >> 16) & 1u);	/* to nearest, ties to even */
	return (uint16_t)(u >> 16);
}

/* pair k of row r: elements 2k, 2k + 1 (0 past d) */
static uint32_t bf16_pair(const float *r, size_t d, size_t k)
{
	uint32_t lo = bf16_round(r[2 * k]);
	uint32_t hi = 2 * k + 1 < d ? bf16_round(r[2 * k + 1]) : 0;

	return lo | hi << 16;
}

__attribute__((target("avx512f")))
static float bf_dot(const float *a, const float *b, size_t d)
{
	__m512 acc = _mm512_setzero_ps();
	size_t k = 0;

	for (; k + 16 <= d; k += 16)
		acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + k),
				      _mm512_loadu_ps(b + k), acc);
	if (k < d) {
		__mmask16 mk = (__mmask16)((1u << (d - k)) - 1);

		acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mk, a + k),
				      _mm512_maskz_loadu_ps(mk, b + k), acc);
	}
	return _mm512_reduce_add_ps(acc);
}

/* C (BF_MR x 32, row stride ldc) = A rows . B panels, bf16 in, fp32 out.
 * Written out register by register: 16 accumulators, 2 panel loads and 8
 * broadcasts per pair of dimensions (the compiler at -O2 would otherwise
 * keep the accumulator array in memory). */
#define BF_ROW(i)                                                        \
	av = _mm512_set1_epi32((int)a[(i) * kpn + k]);                   \
	c##i##0 = _mm512_dpbf16_ps(c##i##0, (__m512bh)av, (__m512bh)b0); \
	c##i##1 = _mm512_dpbf16_ps(c##i##1, (__m512bh)av, (__m512bh)b1)
#define BF_STORE(i)                                                      \
	_mm512_storeu_ps(c + (i) * ldc, c##i##0);                        \
	_mm512_storeu_ps(c + (i) * ldc + 16, c##i##1)

__attribute__((target("avx512f,avx512bf16")))
static void bf_kernel(const uint32_t *a, size_t kpn, const uint32_t *b,
		      float *c, size_t ldc)
{
	__m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00;
	__m512 c20 = c00, c21 = c00, c30 = c00, c31 = c00, c40 = c00;
	__m512 c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00;
	__m512 c70 = c00, c71 = c00;
	const uint32_t *b1p = b + kpn * 16;
	size_t k;

	for (k = 0; k < kpn; k++) {
		__m512i b0 = _mm512_loadu_si512(b + k * 16);
		__m512i b1 = _mm512_loadu_si512(b1p + k * 16);
		__m512i av;

		BF_ROW(0);
		BF_ROW(1);
		BF_ROW(2);
		BF_ROW(3);
		BF_ROW(4);
		BF_ROW(5);
		BF_ROW(6);
		BF_ROW(7);
	}
	BF_STORE(0);
	BF_STORE(1);
	BF_STORE(2);
	BF_STORE(3);
	BF_STORE(4);
	BF_STORE(5);
	BF_STORE(6);
	BF_STORE(7);
}
#undef BF_ROW
#undef BF_STORE

/* bf16 scores of source rows [i0, i0 + ch) x targets [j0, j0 + bj) into
 * c (row stride BLK; rows and columns past the end padded, computed and
 * ignored: a2 and b2 have the zero padding) */
static void bf_chunk(const struct job *jb, size_t i0, size_t ch, size_t j0,
		     size_t bj, float *c)
{
	size_t i, p, kpn = jb->kpn;

	for (i = 0; i < ch; i += BF_MR)
		for (p = 0; p * 16 < bj; p += BF_NP)
			bf_kernel(jb->a2 + (i0 + i) * kpn, kpn,
				  jb->b2 + (j0 / 16 + p) * kpn * 16,
				  c + i * BLK + p * 16, BLK);
}

/* the k-th largest of x[0..n) (1 <= k <= n; NaN counts as smallest);
 * x is scratch, reordered */
static float kth_largest(float *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1, want = k - 1;

	for (size_t i = 0; i < n; i++)
		if (x[i] != x[i])
			x[i] = -INFINITY;
	while (lo < hi) {
		float pv = x[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;

		while (i <= j) {
			while (x[i] > pv)
				i++;
			while (x[j] < pv)
				j--;
			if (i <= j) {
				float t = x[i];

				x[i] = x[j];
				x[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (want <= j)
			hi = j;
		else if (want >= i)
			lo = i;
		else
			return x[want];
	}
	return x[want];
}

__attribute__((target("avx512f")))
static void feed_row_bf(const struct job *jb, struct heap_set *h, size_t r,
			const float *c, size_t n, uint32_t j0, long skip,
			const float *a, float margin, float *scratch)
{
	float fl = heap_floor(h->score + r * h->m, h->n[r], h->m);
	float lim = -INFINITY;
	size_t j = 0;

	/* a row's heap not full yet: the M-th best bf16 score of this chunk
	 * row (itself left out), T, says that M candidates score at least
	 * T - margin exactly,
	 * so the final floor is at least that, and a candidate below
	 * T - 2 margin cannot make it (skips the rechecks of the fill) */
	if (h->n[r] < h->m && n > h->m) {
		memcpy(scratch, c, n * sizeof(*scratch));
		if (skip >= (long)j0 && skip < (long)(j0 + n))
			scratch[skip - (long)j0] = -INFINITY;	/* not one */
		lim = kth_largest(scratch, n, h->m) - 2 * margin;
	}

	for (; j < n; j += 16) {
		float thr = fl - margin > lim ? fl - margin : lim;
		unsigned mask = (unsigned)_mm512_cmp_ps_mask(
			_mm512_loadu_ps(c + j), _mm512_set1_ps(thr),
			_CMP_GE_OQ);

		if (n - j < 16)
			mask &= (1u << (n - j)) - 1;
		while (mask) {
			size_t k = j + (size_t)__builtin_ctz(mask);
			float x;

			mask &= mask - 1;
			if (!(c[k] >= fl - margin) || !(c[k] >= lim) ||
			    (long)(j0 + k) == skip)
				continue;
			x = bf_dot(a, jb->tgt + (j0 + k) * jb->d, jb->d);
			if (x >= fl)
				offer(h, r, x, (uint32_t)(j0 + k), &fl);
		}
	}
}

__attribute__((target("avx2")))
static void feed_cols_bf(const struct job *jb, struct heap_set *h,
			 const float *ci, size_t n, size_t j0, uint32_t src,
			 float *fl, const float *marg)
{
	size_t j = 0;

	for (; j < n; j += 8) {
		unsigned mask = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(
			_mm256_loadu_ps(ci + j),
			_mm256_sub_ps(_mm256_loadu_ps(fl + j),
				      _mm256_loadu_ps(marg + j)),
			_CMP_GE_OQ));

		if (n - j < 8)
			mask &= (1u << (n - j)) - 1;
		while (mask) {
			size_t k = j + (size_t)__builtin_ctz(mask);
			float x;

			mask &= mask - 1;
			if (jb->self && jb->self[j0 + k] == (long)src)
				continue;
			x = bf_dot(jb->tgt + (j0 + k) * jb->d,
				   jb->src + (size_t)src * jb->d, jb->d);
			if (x >= fl[k])
				offer(h, j0 + k - jb->row_begin, x, src,
				      &fl[k]);
		}
	}
}
/* the feeds of one bf16 chunk (C row stride BLK), as in worker() */
static void bf_feed(const struct job *jb, struct heap_set *h, const float *c,
		    size_t r0, size_t ch, size_t j0, size_t bj, size_t bi_,
		    size_t bj_, int cols, float *fl, const float *marg,
		    float *scratch)
{
	size_t i;

	for (i = 0; i < ch; i++) {
		size_t row = r0 + i;
		long skip;
		float margin;

		if (row < jb->row_begin || row >= jb->row_end)
			continue;
		skip = jb->self ? jb->self[row] :
		       jb->symmetric ? (long)row : -1;
		margin = bf_margin(jb->nrm_s[row], jb->err_s[row],
				   jb->bmax_t[bj_], jb->bemax_t[bj_], jb->d);
		feed_row_bf(jb, h, row - jb->row_begin, c + i * BLK, bj,
			    (uint32_t)j0, skip, jb->src + row * jb->d, margin,
			    scratch);
	}
	(void)bi_;
	if (!cols)
		return;
	for (i = 0; i < ch; i++)
		feed_cols_bf(jb, h, c + i * BLK, bj, j0, (uint32_t)(r0 + i),
			     fl, marg);
}
#endif

/*
 * This thread's next work item. Cross-set, a thread takes all the items of
 * a row block at once (group = nb_tgt), so that each row's heap lives in
 * one thread and its floor rises over all targets, not over each thread's
 * half: the bf16 path's rechecks fall from about 300 a row to 170.
 */
static int next_item(struct job *jb, size_t *it, size_t *end)
{
	if (*it + 1 < *end) {
		(*it)++;
		return 1;
	}
	*it = atomic_fetch_add(&jb->next, 1) * jb->group;
	*end = *it + jb->group < jb->n_items ? *it + jb->group : jb->n_items;
	return *it < jb->n_items;
}

static void *worker(void *arg)
{
	struct job *jb = ((void **)arg)[0];
	struct heap_set *h = ((void **)arg)[1];
	float *c = malloc((size_t)CHUNK * BLK * sizeof(*c));
	float *fl = malloc(BLK * sizeof(*fl));
	float *marg = malloc(BLK * sizeof(*marg));
	float *scratch = malloc(BLK * sizeof(*scratch));
	size_t it = 0, end = 0, j;

	if (c == NULL || fl == NULL || marg == NULL || scratch == NULL)
		goto out;
	for (j = 0; j < BLK; j++)
		fl[j] = marg[j] = INFINITY;	/* past a short block */
	while (next_item(jb, &it, &end)) {
		size_t bi_ = jb->items[it] / jb->nb_tgt;
		size_t bj_ = jb->items[it] % jb->nb_tgt;
		size_t i0 = bi_ * BLK, j0 = bj_ * BLK;
		size_t bi = jb->n_src - i0 < BLK ? jb->n_src - i0 : BLK;
		size_t bj = jb->n_tgt - j0 < BLK ? jb->n_tgt - j0 : BLK;
		size_t i;
		long skip;

		int cols = jb->symmetric && bi_ != bj_ &&
			   j0 + bj > jb->row_begin && j0 < jb->row_end;
		size_t c0;

		if (cols)	/* one floor per column for the transposed feed */
			for (j = 0; j < bj; j++) {
				size_t row = j0 + j;

				fl[j] = INFINITY;
				if (row >= jb->row_begin && row < jb->row_end) {
					size_t r = row - jb->row_begin;

					fl[j] = heap_floor(h->score + r * h->m,
							   h->n[r], h->m);
				}
#ifdef HAVE_AVX2_PATH
				if (jb->bf16)
					marg[j] = bf_margin(jb->nrm_t[row],
							    jb->err_t[row],
							    jb->bmax_s[bi_],
							    jb->bemax_s[bi_],
							    jb->d);
#endif
			}
		/* CHUNK rows at a time: their scores stay in L2 between the
		 * sgemm that writes them and the scans that read them */
		for (c0 = 0; c0 < bi; c0 += CHUNK) {
			size_t ch = bi - c0 < CHUNK ? bi - c0 : CHUNK;

#ifdef HAVE_AVX2_PATH
			if (jb->bf16) {
				bf_chunk(jb, i0 + c0, ch, j0, bj, c);
				bf_feed(jb, h, c, i0 + c0, ch, j0, bj, bi_,
					bj_, cols, fl, marg, scratch);
				continue;
			}
#endif
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans,
				    (int)ch, (int)bj, (int)jb->d, 1.0f,
				    jb->src + (i0 + c0) * jb->d, (int)jb->d,
				    jb->tgt + j0 * jb->d, (int)jb->d, 0.0f, c,
				    (int)bj);
			/* rows of block I, row-wise */
			for (i = 0; i < ch; i++) {
				size_t row = i0 + c0 + i;

				if (row < jb->row_begin || row >= jb->row_end)
					continue;
				skip = jb->self ? jb->self[row] :
				       jb->symmetric ? (long)row : -1;
#ifdef HAVE_AVX2_PATH
				if (jb->avx2) {
					feed_row_avx2(h, row - jb->row_begin,
						      c + i * bj, bj,
						      (uint32_t)j0, skip);
					continue;
				}
#endif
				feed_row(h, row - jb->row_begin, c + i * bj,
					 bj, (uint32_t)j0, skip);
			}
			if (!cols)
				continue;
			/* rows of block J from the transpose, streaming C row
			 * by row so that the scan stays sequential */
			for (i = 0; i < ch; i++) {
				uint32_t src = (uint32_t)(i0 + c0 + i);
#ifdef HAVE_AVX2_PATH
				if (jb->avx2) {
					feed_cols_avx2(h, c + i * bj, bj, j0,
						       jb->row_begin, src,
						       jb->self, fl);
					continue;
				}
#endif
				feed_cols(h, c + i * bj, bj, j0, jb->row_begin,
					  src, jb->self, fl);
			}
		}
	}
out:
	free(c);
	free(fl);
	free(marg);
	free(scratch);
	return NULL;
}

static int heaps_init(struct heap_set *h, size_t rows, size_t m)
{
	size_t k = rows * m + 1;

	h->m = m;
	h->tgt = malloc(k * sizeof(*h->tgt));
	h->score = malloc(k * sizeof(*h->score));
	h->n = calloc(rows ? rows : 1, sizeof(*h->n));
	return h->tgt && h->score && h->n ? 0 : -1;
}

static void heaps_release(struct heap_set *h)
{
	free(h->tgt);
	free(h->score);
	free(h->n);
}

struct cand {
	float s;
	uint32_t t;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->s != y->s)
		return x->s > y->s ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

/* what bf_prepare() allocates */
struct bf_mem {
	uint32_t *a2, *b2;
	float *nrm;
};

#ifdef HAVE_AVX2_PATH
/* norms (rounded up) of n rows and of their bf16 rounding errors, and the
 * largest of each per block of BLK; 0 if a value is not finite or too
 * large for the error bound to hold */
static int bf_norms(const float *v, size_t n, size_t d, float *nrm,
		    float *err, float *bmax, float *bemax)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		double q = 0, e = 0;

		for (k = 0; k < d; k++) {
			float x = v[i * d + k], r;
			uint32_t u = (uint32_t)bf16_round(x) << 16;

			memcpy(&r, &u, sizeof(r));
			q += (double)x * x;
			e += ((double)r - x) * ((double)r - x);
		}
		if (!(q < 1e30))	/* NaN, inf, or near float overflow */
			return 0;
		nrm[i] = (float)(sqrt(q) * (1 + 1e-6));
		err[i] = (float)(sqrt(e) * (1 + 1e-6));
		if (i % BLK == 0 || nrm[i] > bmax[i / BLK])
			bmax[i / BLK] = nrm[i];
		if (i % BLK == 0 || err[i] > bemax[i / BLK])
			bemax[i / BLK] = err[i];
	}
	return 1;
}

/* pairs of n rows, row-major (kpn a row), plus pad zero rows */
static void bf_rows(const float *v, size_t n, size_t d, size_t kpn,
		    uint32_t *out)
{
	size_t i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k < kpn; k++)
			out[i * kpn + k] = bf16_pair(v + i * d, d, k);
}

/* pairs of n rows in panels of 16 rows: [panel][kpn][16] */
static void bf_panels(const float *v, size_t n, size_t d, size_t kpn,
		      uint32_t *out)
{
	size_t i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k < kpn; k++)
			out[((i / 16) * kpn + k) * 16 + i % 16] =
				bf16_pair(v + i * d, d, k);
}

/* jb->bf16 = 1 with the bf16 copies and norms, or 0 (non-finite input);
 * -1 when out of memory */
static int bf_prepare(struct job *jb, struct bf_mem *m)
{
	size_t kpn = (jb->d + 1) / 2;
	size_t rows = jb->n_src + BF_MR, panels = (jb->n_tgt + 31) / 32 * 2;
	size_t nn = jb->symmetric ? jb->n_src : jb->n_src + jb->n_tgt;
	size_t nb = jb->nb_src + jb->nb_tgt;
	float *nrm_t, *bmax_s, *bmax_t, *err_s, *err_t, *bemax_s, *bemax_t;

	m->a2 = calloc(rows * kpn, sizeof(*m->a2));
	m->b2 = calloc(panels * kpn * 16, sizeof(*m->b2));
	m->nrm = malloc(2 * (nn + nb + 1) * sizeof(*m->nrm));
	if (m->a2 == NULL || m->b2 == NULL || m->nrm == NULL)
		return -1;
	err_s = m->nrm + nn;
	bmax_s = err_s + nn;
	bmax_t = bmax_s + jb->nb_src;
	bemax_s = bmax_t + jb->nb_tgt;
	bemax_t = bemax_s + jb->nb_src;
	nrm_t = m->nrm + (jb->symmetric ? 0 : jb->n_src);
	err_t = err_s + (jb->symmetric ? 0 : jb->n_src);
	if (!bf_norms(jb->src, jb->n_src, jb->d, m->nrm, err_s, bmax_s,
		      bemax_s))
		return 0;
	if (jb->symmetric) {
		memcpy(bmax_t, bmax_s, jb->nb_src * sizeof(*bmax_t));
		memcpy(bemax_t, bemax_s, jb->nb_src * sizeof(*bemax_t));
	} else if (!bf_norms(jb->tgt, jb->n_tgt, jb->d, nrm_t, err_t, bmax_t,
			     bemax_t))
		return 0;
	bf_rows(jb->src, jb->n_src, jb->d, kpn, m->a2);
	bf_panels(jb->tgt, jb->n_tgt, jb->d, kpn, m->b2);
	jb->a2 = m->a2;
	jb->b2 = m->b2;
	jb->kpn = kpn;
	jb->nrm_s = m->nrm;
	jb->nrm_t = nrm_t;
	jb->err_s = err_s;
	jb->err_t = err_t;
	jb->bmax_s = bmax_s;
	jb->bmax_t = bmax_t;
	jb->bemax_s = bemax_s;
	jb->bemax_t = bemax_t;
	jb->bf16 = 1;
	return 0;
}
#endif

int relate_topm(const float *src, size_t n_src, const float *tgt,
		size_t n_tgt, size_t d, const long *self, size_t m,
		size_t row_begin, size_t row_end, int threads,
		struct lb_candidates *out, struct lb_error *err)
{
	struct job jb;
	struct heap_set *hs = NULL;
	pthread_t *tid = NULL;
	void **args = NULL;
	struct cand *tmp = NULL;
	struct bf_mem bfm = { 0 };
	size_t rows, bi_, bj_, r, t, nt, n_heaps = 0;
	int rc = -1, blas_threads = openblas_get_num_threads();

	memset(&jb, 0, sizeof(jb));
	out->target = NULL;
	out->score = NULL;
	if (row_begin == 0 && row_end == 0)
		row_end = n_src;
	if (row_begin > row_end || row_end > n_src)
		return lb_error_set(err, LB_EUSAGE,
				    "row range [%zu, %zu) outside %zu sources",
				    row_begin, row_end, n_src);
	if (n_tgt > UINT32_MAX - 1)
		return lb_error_set(err, LB_ETOOBIG, "%zu targets", n_tgt);
	rows = row_end - row_begin;
	if (lb_candidates_init(out, rows, m) == -1)
		return lb_error_set(err, LB_ENOMEM, "candidates");
	if (rows == 0 || m == 0 || n_tgt == 0 || d == 0)
		return 0;

	nt = threads > 0 ? (size_t)threads : (size_t)sysconf(_SC_NPROCESSORS_ONLN);
	if (nt < 1)
		nt = 1;
	jb.src = src;
	jb.tgt = tgt;
	jb.n_src = n_src;
	jb.n_tgt = n_tgt;
	jb.d = d;
	jb.m = m;
	jb.self = self;
	jb.row_begin = row_begin;
	jb.row_end = row_end;
	jb.symmetric = src == tgt && n_src == n_tgt;
#ifdef HAVE_AVX2_PATH
	__builtin_cpu_init();
	jb.avx2 = __builtin_cpu_supports("avx2") && !getenv("LINKBOT_NO_AVX2");
#endif
	jb.nb_src = (n_src + BLK - 1) / BLK;
	jb.nb_tgt = (n_tgt + BLK - 1) / BLK;
#ifdef HAVE_AVX2_PATH
	if (jb.avx2 && __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bf16") &&
	    !getenv("LINKBOT_NO_BF16") && bf_prepare(&jb, &bfm) == -1)
		goto nomem;
#endif
	jb.items = malloc(jb.nb_src * jb.nb_tgt * sizeof(*jb.items));
	if (jb.items == NULL)
		goto nomem;
	for (bi_ = 0; bi_ < jb.nb_src; bi_++) {
		int mine = bi_ * BLK < row_end && (bi_ + 1) * BLK > row_begin;

		for (bj_ = jb.symmetric ? bi_ : 0; bj_ < jb.nb_tgt; bj_++) {
			int theirs = jb.symmetric && bj_ * BLK < row_end &&
				     (bj_ + 1) * BLK > row_begin;

			if (mine || theirs)
				jb.items[jb.n_items++] = bi_ * jb.nb_tgt + bj_;
		}
	}
	/* cross-set: the items of a row block are consecutive, nb_tgt of them */
	jb.group = jb.symmetric ? 1 : jb.nb_tgt;
	if (nt > (jb.n_items + jb.group - 1) / jb.group)
		nt = (jb.n_items + jb.group - 1) / jb.group;
	hs = calloc(nt, sizeof(*hs));
	tid = calloc(nt, sizeof(*tid));
	args = calloc(2 * nt, sizeof(*args));
	tmp = malloc(nt * m * sizeof(*tmp));
	if (hs == NULL || tid == NULL || args == NULL || tmp == NULL)
		goto nomem;
	for (n_heaps = 0; n_heaps < nt; n_heaps++)
		if (heaps_init(&hs[n_heaps], rows, m) == -1) {
			n_heaps++;
			goto nomem;
		}

	openblas_set_num_threads(1);
	for (t = 0; t < nt; t++) {
		args[2 * t] = &jb;
		args[2 * t + 1] = &hs[t];
		if (t > 0 && pthread_create(&tid[t], NULL, worker,
					    &args[2 * t]) != 0) {
			/* run what could not start in this thread */
			nt = t;
			break;
		}
	}
	worker(&args[0]);
	for (t = 1; t < nt; t++)
		pthread_join(tid[t], NULL);
	openblas_set_num_threads(blas_threads);

	/* merge the threads' heaps, best first */
	for (r = 0; r < rows; r++) {
		size_t k = 0, j;

		for (t = 0; t < nt; t++)
			for (j = 0; j < hs[t].n[r]; j++) {
				tmp[k].s = hs[t].score[r * m + j];
				tmp[k].t = hs[t].tgt[r * m + j];
				k++;
			}
		qsort(tmp, k, sizeof(*tmp), cand_cmp);
		for (j = 0; j < k && j < m; j++) {
			out->target[r * m + j] = tmp[j].t;
			out->score[r * m + j] = tmp[j].s;
		}
	}
	rc = 0;
	goto out;
nomem:
	lb_error_set(err, LB_ENOMEM, "top-M selection for %zu rows", rows);
	lb_candidates_release(out);
out:
	for (t = 0; t < n_heaps; t++)
		heaps_release(&hs[t]);
	free(hs);
	free(tid);
	free(args);
	free(tmp);
	free(jb.items);
	free(bfm.a2);
	free(bfm.b2);
	free(bfm.nrm);
	return rc;
}
