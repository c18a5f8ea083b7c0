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
 * Threads: each thread takes work items from an atomic counter (cross-set:
 * a row block's items at once, see next_item()) and owns a private set of
 * heaps for the rows in range; the heaps are merged at the end, rows split
 * among the threads (still a total order, so deterministic). OpenBLAS's
 * own threads are set to 1 meanwhile; the parallelism is ours.
 *
 * bf16 prefilter (AVX512_BF16 CPUs): the chunk's scores come from bf16
 * copies through our own kernel, twice the fp32 multiply-adds per
 * instruction; rows keep their best bf16 scores and those within the
 * proven rounding band below, and only those are recomputed in fp32 at
 * the end (see "bf16 prefilter" below): still the exact top-M.
 *
 * Small problems (at most one block of targets: a site of a few hundred
 * pages) skip all this: topm_small() scores each row whole with the same
 * function (bf_dot() or the same sgemm calls) and keeps its top M.
 *
 * Cost: flops 2 * R * N_t * d (cross) or about half of N^2 d (same set);
 * memory threads * R * (M + max(64, 2M)) * 8 bytes for heaps and band lists
 * (pages a thread never touches, cross-set, are never committed) +
 * threads * CHUNK * BLK * 4 for C.
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
#define BF_SIDE 64	/* bf16 path: band list entries a row */
#define RELATE_MAX_THREADS 256
#ifndef CHUNK
#define CHUNK 128	/* rows of one sgemm call within a block pair */
#endif

struct heap_set {
	size_t m;
	uint32_t *tgt;		/* rows * m */
	float *score;		/* rows * m */
	uint32_t *n;		/* rows: entries used */
	/* bf16 path: the heaps hold bf16 scores, and each row has a band
	 * list of `cap` entries just below its heap (see bf_offer()) */
	size_t cap;
	float *side_s;		/* rows * cap */
	uint32_t *side_t;	/* rows * cap */
	uint16_t *side_n;	/* rows: entries used */
	float *ex;		/* rows: bf16 scores below this cannot make it
				 * (from exact scores, side_exact()) */
	struct cand *tmp;	/* m + cap entries of scratch */
};

/* a worse than b: lower score, or equal score and higher target. */
static inline int worse(float sa, uint32_t ta, float sb, uint32_t tb)
{
	return sa < sb || (sa == sb && ta > tb);
}

/* Puts (s, t) at the root of the heap of cnt entries (worst at the root)
 * and sifts it down to its place. */
static void heap_sift_down(float *hs, uint32_t *ht, size_t cnt, float s,
			   uint32_t t)
{
	size_t i = 0, c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= cnt)
			break;
		if (c + 1 < cnt && worse(hs[c + 1], ht[c + 1], hs[c], ht[c]))
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

static void heap_push(float *hs, uint32_t *ht, uint32_t *cnt, size_t m,
		      float s, uint32_t t)
{
	size_t i;

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
	heap_sift_down(hs, ht, m, s, t);	/* replaces the root */
}

/* Threshold below which a score cannot enter the heap. */
static inline float heap_floor(const float *hs, uint32_t cnt, size_t m)
{
	return cnt < m ? -INFINITY : hs[0];
}

int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->s != y->s)
		return x->s > y->s ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

#define CAND_SORT_SMALL 128

static inline int cand_before(const struct cand *x, const struct cand *y)
{
	return x->s != y->s ? x->s > y->s : x->t < y->t;
}

void cand_order(struct cand *v, size_t n)
{
	size_t i, j;

	if (n > CAND_SORT_SMALL) {
		qsort(v, n, sizeof(*v), cand_cmp);
		return;
	}
	for (i = 1; i < n; i++) {
		struct cand c = v[i];

		/* strictly before only: equal items keep their order */
		for (j = i; j > 0 && cand_before(&c, &v[j - 1]); j--)
			v[j] = v[j - 1];
		v[j] = c;
	}
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
	const float *m2;	/* each source's double band (bf_prepare()) */
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
 * bf16 prefilter (CPUs with AVX512_BF16): the scores of a chunk come from
 * bf16 copies of the vectors (8 significant bits) through our own kernel,
 * vdpbf16ps, twice the multiply-adds of fp32 per instruction. Each row
 * keeps a heap of its M best bf16 scores (floor F) and a band list of
 * those just below F; nothing is recomputed while the blocks stream by.
 * At the end, bf_finish() recomputes in fp32 (bf_dot(), one fixed order,
 * the same for (a, b) and (b, a)) the kept entries within the double band
 * of the M-th best, about 1.5 M a row, and keeps the exact top M.
 *
 * The band m: for vectors a, b and their bf16 roundings a' = a + ea,
 * b' = b + eb, a.b - a'.b' = -(a.eb + ea.b'), so by Cauchy-Schwarz the
 * bf16 score is within |a| |eb| + |ea| |b'| of the exact one, plus the two
 * sums' rounding (each at most d 2^-24 |a'| |b'|). |ea| is measured per
 * vector: each element moves by at most 2^-8 of itself, and the moves do
 * not line up, so |ea| is near 2^-9.8 |a|, a band about 3.5 times narrower
 * than the element-wise bound (2^-7 + 2^-16) |a| |b|. m2[row] is 2 m with
 * the largest target norm and error, plus room for rounding F - m2.
 *
 * Why it is exact: the M entries of a row's heap score at least F - m
 * exactly, so the exact floor is at least F - m, and a score below F - 2m
 * cannot reach it. F only rises, so whatever was turned away below the
 * threshold F - 2m of its time is below the final one too; the band list
 * keeps the rest. A list that fills up with scores within 2m of F
 * (near-ties: duplicate pages) is thinned with exact scores instead
 * (side_exact()): it keeps only its entries among the M best known, and
 * the M-th best known exact score E bounds the floor from then on. Same-set
 * rows are fed by both threads; the union of their heaps and lists holds
 * everything above the union's own threshold.
 *
 * Rechecks: about 48 a row at N = 20 000, M = 32, where checking each bf16
 * candidate against the running exact floor took 300 (the floor rises
 * M ln(N/M) times when the targets arrive in any fixed order).
 */
#define BF_MR 8		/* rows of the micro-kernel */
#define BF_NP 2		/* panels of 16 targets (the kernel is written for 8 x 2) */

/* the band: |bf16 score - fp32 score| of a vector (norm n, rounding error
 * norm e) with any target (largest norm bn, largest error be) */
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

/* the threshold of row r: its heap's floor less its double band, or the
 * bound its exact scores give (side_exact()), whichever is higher */
static inline float bf_thr(const struct heap_set *h, size_t r, float m2)
{
	float f = h->score[r * h->m] - m2;

	if (h->n[r] < h->m)
		return -INFINITY;
	return f > h->ex[r] ? f : h->ex[r];
}

/*
 * A full band list that its threshold cannot thin (near-ties: duplicate
 * pages score alike): the heap's and the list's entries are recomputed in
 * fp32, and since the M best of those are real candidates, the exact
 * floor is at least the M-th best, (E, tE). The list keeps only its
 * entries among those M (at most M: room again), and bf16 scores below
 * E - m (exact below E) are passed over from now on.
 */
static void side_exact(const struct job *jb, struct heap_set *h, size_t r,
		       float m2)
{
	size_t row = jb->row_begin + r, m = h->m, i, k = 0;
	const float *a = jb->src + row * jb->d;
	float *ss = h->side_s + r * h->cap;
	uint32_t *st = h->side_t + r * h->cap;
	unsigned n = h->side_n[r], w = 0;
	struct cand *c = h->tmp, *x = h->tmp + m + h->cap;	/* x: the list's */
	float lo;

	for (i = 0; i < m; i++, k++) {
		c[k].t = h->tgt[r * m + i];
		c[k].s = bf_dot(a, jb->tgt + (size_t)c[k].t * jb->d, jb->d);
	}
	for (i = 0; i < n; i++, k++) {
		x[i].t = st[i];
		x[i].s = bf_dot(a, jb->tgt + (size_t)st[i] * jb->d, jb->d);
		c[k] = x[i];
	}
	qsort(c, k, sizeof(*c), cand_cmp);
	for (i = 0; i < n; i++)
		if (!worse(x[i].s, x[i].t, c[m - 1].s, c[m - 1].t)) {
			ss[w] = ss[i];
			st[w] = st[i];
			w++;
		}
	h->side_n[r] = (uint16_t)w;
	lo = c[m - 1].s - m2 / 2;	/* m2 / 2 >= m */
	if (lo > h->ex[r])
		h->ex[r] = lo;
}

/* Adds (s, t) to row r's band list unless it is below thr; a full list
 * first drops what fell below thr, then (near-ties) goes exact. */
static void side_add(const struct job *jb, struct heap_set *h, size_t r,
		     float s, uint32_t t, float m2, float *thr)
{
	float *ss = h->side_s + r * h->cap;
	uint32_t *st = h->side_t + r * h->cap;
	unsigned n, i, w = 0;

	if (!(s >= *thr))
		return;
	if (h->side_n[r] == h->cap) {
		for (i = 0; i < h->cap; i++)
			if (ss[i] >= *thr) {
				ss[w] = ss[i];
				st[w] = st[i];
				w++;
			}
		h->side_n[r] = (uint16_t)w;
		if (w == h->cap) {
			side_exact(jb, h, r, m2);
			*thr = bf_thr(h, r, m2);
			if (!(s >= *thr))
				return;
		}
	}
	n = h->side_n[r];
	ss[n] = s;
	st[n] = t;
	h->side_n[r] = (uint16_t)(n + 1);
}

/*
 * Offers bf16 score s of target t to row r: its heap keeps the M best
 * bf16 scores, floor F; what the heap turns away or drops and is still
 * within the row's double band m2 of F goes to the band list. *thr is
 * bf_thr() after the offer (-inf until the heap is full): below it, a
 * score cannot make the exact top M (see "Why it is exact").
 */
static void bf_offer(const struct job *jb, struct heap_set *h, size_t r,
		     float s, uint32_t t, float m2, float *thr)
{
	float *hs = h->score + r * h->m;
	uint32_t *ht = h->tgt + r * h->m;

	if (h->n[r] < h->m) {
		heap_push(hs, ht, h->n + r, h->m, s, t);
		if (h->n[r] == h->m)
			*thr = bf_thr(h, r, m2);
		return;
	}
	if (worse(hs[0], ht[0], s, t)) {
		float s0 = hs[0];
		uint32_t t0 = ht[0];

		heap_push(hs, ht, h->n + r, h->m, s, t);
		*thr = bf_thr(h, r, m2);
		side_add(jb, h, r, s0, t0, m2, thr);
		return;
	}
	side_add(jb, h, r, s, t, m2, thr);
}

/*
 * bf16 scores c[0..n) of targets j0.. for row r, but target skip. A row's
 * first chunk fills its heap: its M-th best score T bounds the final floor
 * from below, so scores below T - m2 are passed over at once (x: n floats
 * of scratch), and the heap sees about 1.5 M scores instead of n.
 */
__attribute__((target("avx512f")))
static void feed_row_bf(const struct job *jb, struct heap_set *h, size_t r,
			const float *c,
			size_t n, uint32_t j0, long skip, float m2, float *x)
{
	float thr = bf_thr(h, r, m2), lim = -INFINITY;
	size_t j;

	if (h->n[r] == 0 && n > h->m) {
		memcpy(x, c, n * sizeof(*x));
		if (skip >= (long)j0 && skip < (long)(j0 + n))
			x[skip - (long)j0] = -INFINITY;
		lim = kth_largest(x, n, h->m) - m2;
	}
	for (j = 0; j < n; j += 16) {
		float t = thr > lim ? thr : lim;
		unsigned mask = (unsigned)_mm512_cmp_ps_mask(
			_mm512_loadu_ps(c + j), _mm512_set1_ps(t), _CMP_GE_OQ);

		if (n - j < 16)
			mask &= (1u << (n - j)) - 1;
		while (mask) {
			size_t k = j + (size_t)__builtin_ctz(mask);

			mask &= mask - 1;
			if (c[k] >= thr && c[k] >= lim &&
			    (long)(j0 + k) != skip)
				bf_offer(jb, h, r, c[k], (uint32_t)(j0 + k), m2,
					 &thr);
		}
	}
}

/* one row of bf16 C (source `src`) for the rows of its columns j0..;
 * thr[j]: each column's threshold (INFINITY: not in range) */
__attribute__((target("avx512f")))
static void feed_cols_bf(const struct job *jb, struct heap_set *h,
			 const float *ci, size_t n, size_t j0, uint32_t src,
			 float *thr)
{
	size_t j;

	for (j = 0; j < n; j += 16) {
		unsigned mask = (unsigned)_mm512_cmp_ps_mask(
			_mm512_loadu_ps(ci + j), _mm512_loadu_ps(thr + j),
			_CMP_GE_OQ);

		if (n - j < 16)
			mask &= (1u << (n - j)) - 1;
		while (mask) {
			size_t k = j + (size_t)__builtin_ctz(mask);

			mask &= mask - 1;
			if (!(ci[k] >= thr[k]) ||
			    (jb->self && jb->self[j0 + k] == (long)src))
				continue;
			bf_offer(jb, h, j0 + k - jb->row_begin, ci[k], src,
				 jb->m2[j0 + k], &thr[k]);
		}
	}
}

/* the feeds of one bf16 chunk (C row stride BLK), as in worker() */
static void bf_feed(const struct job *jb, struct heap_set *h, const float *c,
		    size_t r0, size_t ch, size_t j0, size_t bj, int cols,
		    float *thr, float *x)
{
	size_t i;

	for (i = 0; i < ch; i++) {
		size_t row = r0 + i;
		long skip;

		if (row < jb->row_begin || row >= jb->row_end)
			continue;
		skip = jb->self ? jb->self[row] :
		       jb->symmetric ? (long)row : -1;
		feed_row_bf(jb, h, row - jb->row_begin, c + i * BLK, bj,
			    (uint32_t)j0, skip, jb->m2[row], x);
	}
	if (!cols)
		return;
	for (i = 0; i < ch; i++)
		feed_cols_bf(jb, h, c + i * BLK, bj, j0, (uint32_t)(r0 + i),
			     thr);
}

#define BF_AHEAD 4	/* rechecks whose target rows are fetched ahead */

/* starts fetching a row of d floats into the cache */
static inline void bf_fetch(const float *v, size_t d)
{
	size_t k;

	for (k = 0; k < d; k += 16)
		_mm_prefetch((const char *)(v + k), _MM_HINT_T0);
}

/* sorts c[0..n) best first (n is small: about 1.5 M) */
static void cand_sort(struct cand *c, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		struct cand x = c[i];

		for (j = i; j > 0 && worse(c[j - 1].s, c[j - 1].t, x.s, x.t);
		     j--)
			c[j] = c[j - 1];
		c[j] = x;
	}
}

/*
 * The exact top of source row `row` from c[0..k) (bf16 scores: every
 * heap's and band list's entries for the row). Returns how many of c are
 * exact, best first (at most M are needed); x (k floats) is scratch.
 */
static size_t bf_finish(const struct job *jb, size_t row, struct cand *c,
			size_t k, float *x)
{
	const float *a = jb->src + row * jb->d;
	double cut = -INFINITY;
	size_t i, j;

	if (k >= jb->m) {
		for (i = 0; i < k; i++)
			x[i] = c[i].s;
		cut = (double)kth_largest(x, k, jb->m) - jb->m2[row];
	}
	for (i = j = 0; i < k; i++)
		if (c[i].s >= cut)
			c[j++].t = c[i].t;
	/* the rows are scattered: fetch a few ahead */
	for (i = 0; i < j + BF_AHEAD; i++) {
		if (i + BF_AHEAD < j)
			bf_fetch(jb->tgt + c[i + BF_AHEAD].t * jb->d, jb->d);
		if (i < j)
			c[i].s = bf_dot(a, jb->tgt + c[i].t * jb->d, jb->d);
	}
	cand_sort(c, j);
	return j;
}
#endif

/*
 * Runs fn on args[0..nt) (each `size` bytes), args[0] in this thread and
 * the others in threads of their own; one that cannot start runs here.
 */
static void run_threads(size_t nt, void *(*fn)(void *), void *args,
			size_t size)
{
	pthread_t tid[RELATE_MAX_THREADS];
	int started[RELATE_MAX_THREADS] = { 0 };
	size_t t;

	for (t = 1; t < nt; t++)
		started[t] = pthread_create(&tid[t], NULL, fn,
					    (char *)args + t * size) == 0;
	fn(args);
	for (t = 1; t < nt; t++)
		if (started[t])
			pthread_join(tid[t], NULL);
		else
			fn((char *)args + t * size);
}

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

/* a worker's job and heaps */
struct work {
	struct job *jb;
	struct heap_set *h;
};

static void *worker(void *arg)
{
	struct job *jb = ((struct work *)arg)->jb;
	struct heap_set *h = ((struct work *)arg)->h;
	float *c = malloc((size_t)CHUNK * BLK * sizeof(*c));
	float *fl = malloc(2 * BLK * sizeof(*fl));	/* + scratch */
	size_t it = 0, end = 0, j;

	if (c == NULL || fl == NULL)
		goto out;
	for (j = 0; j < BLK; j++)
		fl[j] = INFINITY;	/* past a short block */
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
#ifdef HAVE_AVX2_PATH
					if (jb->bf16)	/* a threshold */
						fl[j] = bf_thr(h, r,
							       jb->m2[row]);
#endif
				}
			}
		/* CHUNK rows at a time: their scores stay in L2 between the
		 * sgemm that writes them and the scans that read them */
		for (c0 = 0; c0 < bi; c0 += CHUNK) {
			size_t ch = bi - c0 < CHUNK ? bi - c0 : CHUNK;

#ifdef HAVE_AVX2_PATH
			if (jb->bf16) {
				bf_chunk(jb, i0 + c0, ch, j0, bj, c);
				bf_feed(jb, h, c, i0 + c0, ch, j0, bj, cols,
					fl, fl + BLK);
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
	return NULL;
}

/* heaps of m entries a row, with band lists when `side` */
static int heaps_init(struct heap_set *h, size_t rows, size_t m, int side)
{
	size_t k = rows * m + 1, r;

	memset(h, 0, sizeof(*h));
	h->m = m;
	h->tgt = malloc(k * sizeof(*h->tgt));
	h->score = malloc(k * sizeof(*h->score));
	h->n = calloc(rows ? rows : 1, sizeof(*h->n));
	if (h->tgt == NULL || h->score == NULL || h->n == NULL)
		return -1;
	if (!side)
		return 0;
	/* after side_exact() a list holds at most M: room is left */
	h->cap = 2 * m > BF_SIDE ? 2 * m : BF_SIDE;
	k = rows * h->cap + 1;
	h->side_s = malloc(k * sizeof(*h->side_s));
	h->side_t = malloc(k * sizeof(*h->side_t));
	h->side_n = calloc(rows ? rows : 1, sizeof(*h->side_n));
	h->ex = malloc((rows + 1) * sizeof(*h->ex));
	h->tmp = malloc(2 * (m + h->cap) * sizeof(*h->tmp));
	if (h->side_s == NULL || h->side_t == NULL || h->side_n == NULL ||
	    h->ex == NULL || h->tmp == NULL)
		return -1;
	for (r = 0; r < rows; r++)
		h->ex[r] = -INFINITY;
	return 0;
}

static void heaps_release(struct heap_set *h)
{
	free(h->tgt);
	free(h->score);
	free(h->n);
	free(h->side_s);
	free(h->side_t);
	free(h->side_n);
	free(h->ex);
	free(h->tmp);
}

/* what bf_prepare() allocates */
struct bf_mem {
	uint32_t *a2, *b2;
	float *nrm;
};

#ifdef HAVE_AVX2_PATH
/* norms (rounded up) of n rows and of their bf16 rounding errors, into
 * nrm and err when not NULL, and the largest of each into *gn and *ge;
 * 0 if a value is not finite or too large for the error bound to hold */
static int bf_norms(const float *v, size_t n, size_t d, float *nrm,
		    float *err, float *gn, float *ge)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		double q = 0, e = 0;
		float qn, en;

		for (k = 0; k < d; k++) {
			float x = v[i * d + k], r;
			uint32_t u = (uint32_t)bf16_round(x) << 16;

			memcpy(&r, &u, sizeof(r));
			q += (double)x * x;
			e += ((double)r - x) * ((double)r - x);
		}
		if (!(q < 1e30))	/* NaN, inf, or near float overflow */
			return 0;
		qn = (float)(sqrt(q) * (1 + 1e-6));
		en = (float)(sqrt(e) * (1 + 1e-6));
		if (nrm != NULL) {
			nrm[i] = qn;
			err[i] = en;
		}
		*gn = qn > *gn ? qn : *gn;
		*ge = en > *ge ? en : *ge;
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

/* pairs of rows [i0, i1) of v in panels of 16 rows: [panel][kpn][16] */
static void bf_panels(const float *v, size_t i0, size_t i1, size_t d,
		      size_t kpn, uint32_t *out)
{
	size_t i, k;

	for (i = i0; i < i1; i++)
		for (k = 0; k < kpn; k++)
			out[((i / 16) * kpn + k) * 16 + i % 16] =
				bf16_pair(v + i * d, d, k);
}

/* one thread's share of bf_prepare(): source rows [s0, s1), target rows
 * [t0, t1) (panels of 16 never shared) */
struct prep {
	const struct job *jb;
	struct bf_mem *m;
	float *nrm, *err;
	size_t s0, s1, t0, t1;
	float gn, ge;		/* the largest norm and error seen */
	int ok;			/* 0: a value bf16 cannot bound */
};

static void *prep_rows(void *arg)
{
	struct prep *p = arg;
	const struct job *jb = p->jb;
	size_t d = jb->d, kpn = (d + 1) / 2;

	p->ok = bf_norms(jb->src + p->s0 * d, p->s1 - p->s0, d,
			 p->nrm + p->s0, p->err + p->s0, &p->gn, &p->ge);
	bf_rows(jb->src + p->s0 * d, p->s1 - p->s0, d, kpn,
		p->m->a2 + p->s0 * kpn);
	if (!jb->symmetric)
		p->ok &= bf_norms(jb->tgt + p->t0 * d, p->t1 - p->t0, d, NULL,
				  NULL, &p->gn, &p->ge);
	bf_panels(jb->tgt, p->t0, p->t1, d, kpn, p->m->b2);
	return NULL;
}

/* jb->bf16 = 1 with the bf16 copies and bands, or 0 (non-finite input);
 * -1 when out of memory. The work is split among nt threads. */
static int bf_prepare(struct job *jb, struct bf_mem *m, size_t nt)
{
	size_t kpn = (jb->d + 1) / 2;
	size_t rows = jb->n_src + BF_MR, panels = (jb->n_tgt + 31) / 32 * 2;
	float gn = 0, ge = 0, *nrm, *err;
	struct prep *p = calloc(nt, sizeof(*p));
	size_t i, t;
	int ok = 1;

	m->a2 = calloc(rows * kpn, sizeof(*m->a2));
	m->b2 = calloc(panels * kpn * 16, sizeof(*m->b2));
	m->nrm = malloc(3 * (jb->n_src + 1) * sizeof(*m->nrm));
	if (p == NULL || m->a2 == NULL || m->b2 == NULL || m->nrm == NULL) {
		free(p);
		return -1;
	}
	nrm = m->nrm + jb->n_src + 1;
	err = nrm + jb->n_src + 1;
	for (t = 0; t < nt; t++) {
		p[t].jb = jb;
		p[t].m = m;
		p[t].nrm = nrm;
		p[t].err = err;
		p[t].s0 = jb->n_src * t / nt;
		p[t].s1 = jb->n_src * (t + 1) / nt;
		p[t].t0 = t == 0 ? 0 : (jb->n_tgt * t / nt + 15) / 16 * 16;
		p[t].t1 = t + 1 == nt ? jb->n_tgt :
			  (jb->n_tgt * (t + 1) / nt + 15) / 16 * 16;
		if (p[t].t0 > jb->n_tgt)
			p[t].t0 = jb->n_tgt;
		if (p[t].t1 > jb->n_tgt)
			p[t].t1 = jb->n_tgt;
	}
	run_threads(nt, prep_rows, p, sizeof(*p));
	for (t = 0; t < nt; t++) {
		ok &= p[t].ok;
		gn = p[t].gn > gn ? p[t].gn : gn;
		ge = p[t].ge > ge ? p[t].ge : ge;
	}
	free(p);
	if (!ok)
		return 0;
	/* twice the band, and room for rounding F - m2 (|F| <= |a| gn) */
	for (i = 0; i < jb->n_src; i++)
		m->nrm[i] = 2 * bf_margin(nrm[i], err[i], gn, ge, jb->d) +
			    (float)ldexp((double)nrm[i] * gn, -20);
	jb->a2 = m->a2;
	jb->b2 = m->b2;
	jb->kpn = kpn;
	jb->m2 = m->nrm;
	jb->bf16 = 1;
	return 0;
}
#endif

/* rows [r0, r1) of the result from every thread's heaps */
struct merge {
	const struct job *jb;
	struct heap_set *hs;
	size_t nt;
	struct lb_candidates *out;
	size_t r0, r1;
	int rc;
};

static void *merger(void *arg)
{
	struct merge *mg = arg;
	const struct job *jb = mg->jb;
	size_t m = jb->m, cap = mg->nt * (m + mg->hs[0].cap), r, t;
	/* the entries, then bf_finish()'s scratch */
	struct cand *c = malloc(cap * (sizeof(*c) + sizeof(float)));

	if (c == NULL) {
		mg->rc = -1;
		return NULL;
	}
	for (r = mg->r0; r < mg->r1; r++) {
		size_t k = 0, j;

		for (t = 0; t < mg->nt; t++) {
			const struct heap_set *h = &mg->hs[t];

			for (j = 0; j < h->n[r]; j++) {
				c[k].s = h->score[r * m + j];
				c[k].t = h->tgt[r * m + j];
				k++;
			}
			if (!jb->bf16)
				continue;
			for (j = 0; j < h->side_n[r]; j++) {
				c[k].s = h->side_s[r * h->cap + j];
				c[k].t = h->side_t[r * h->cap + j];
				k++;
			}
		}
#ifdef HAVE_AVX2_PATH
		if (jb->bf16)
			k = bf_finish(jb, jb->row_begin + r, c, k,
				      (float *)(c + cap));
		else
#endif
			qsort(c, k, sizeof(*c), cand_cmp);
		for (j = 0; j < k && j < m; j++) {
			mg->out->target[r * m + j] = c[j].t;
			mg->out->score[r * m + j] = c[j].s;
		}
	}
	free(c);
	return NULL;
}

/*
 * A row's top M without a heap (the small path, topm_small()). worse()
 * is a strict total order on the offered (score, target) pairs (NaN is
 * never offered, targets are distinct), so its M best in best-first order
 * are one list whatever picks them: the heap's pops or, here, one integer
 * key a pair, larger = better, a selection and a sort of integers. The
 * key: the score's bits made monotonic as an unsigned integer (negative
 * floats inverted, positive ones with the sign bit set; -0 read as +0,
 * which worse() does not tell apart) above the complement of the target
 * (equal scores: the lower target first). The score handed out is the
 * row's own float, read back by target, so -0 stays -0. A night's site of
 * 100 pages: ~99 keys, M = 64 or 20 (smoothing); the heaps' pushes,
 * replacements and pops were ~8 % of its build (bench/RESULTS.md, "the
 * tail, round 5").
 */
static inline uint64_t rank_key(float s, uint32_t t)
{
	uint32_t u;

	memcpy(&u, &s, sizeof(u));
	u &= -(uint32_t)(s != 0.0f);	/* -0 == +0 for worse() */
	/* negative: every bit flipped; else the sign bit set */
	u ^= (uint32_t)((int32_t)u >> 31) | 0x80000000u;
	return (uint64_t)u << 32 | (uint32_t)~t;
}

/*
 * The keys of a row's scores ci[j0..j1) (no NaN among them) into key[],
 * target j: rank_key() without a branch, so the loop is vectorized (a
 * night's site: ~30,000 keys a site, 0.75 M instructions one at a time
 * with their NaN and self tests; bench/RESULTS.md, "the build of a
 * small client"). The keys, and so keys_top()'s list, are the loop's.
 */
static inline __attribute__((always_inline)) size_t
row_keys_loop(const float *ci, size_t j0, size_t j1, uint64_t *key)
{
	size_t j;

	for (j = j0; j < j1; j++)
		key[j - j0] = rank_key(ci[j], (uint32_t)j);
	return j1 - j0;
}

static size_t row_keys_plain(const float *ci, size_t j0, size_t j1,
			     uint64_t *key)
{
	return row_keys_loop(ci, j0, j1, key);
}

#if defined(__x86_64__)
/* the same loop, compiled for AVX2 */
__attribute__((target("avx2")))
static size_t row_keys_avx2(const float *ci, size_t j0, size_t j1,
			    uint64_t *key)
{
	return row_keys_loop(ci, j0, j1, key);
}
#endif

/* keys of ci[0..nt) but target skip, NaN skipped; the row's count */
static size_t row_keys(const float *ci, size_t nt, long skip, int avx2,
		       uint64_t *key)
{
	size_t j, cnt = 0, s = skip >= 0 && (size_t)skip < nt ?
			      (size_t)skip : nt;
	size_t (*fn)(const float *, size_t, size_t, uint64_t *) =
		row_keys_plain;

	for (j = 0; j < nt; j++)
		if (ci[j] != ci[j])
			break;
	if (j < nt || getenv("LINKBOT_NO_ROW_KEYS")) {	/* a NaN: tested */
		for (j = 0; j < nt; j++)
			if (ci[j] == ci[j] && (long)j != skip)
				key[cnt++] = rank_key(ci[j], (uint32_t)j);
		return cnt;
	}
#if defined(__x86_64__)
	if (avx2)
		fn = row_keys_avx2;
#else
	(void)avx2;
#endif
	cnt = fn(ci, 0, s, key);
	if (s < nt)
		cnt += fn(ci, s + 1, nt, key + cnt);
	return cnt;
}

static inline uint32_t key_target(uint64_t k)
{
	return ~(uint32_t)k;
}

/* Sorts k[0..n) largest first: insertion sort of runs of 16, then
 * bottom-up merges through tmp (n entries). */
static void keys_sort(uint64_t *k, size_t n, uint64_t *tmp)
{
	size_t i, j, w, lo;
	uint64_t *a = k, *b = tmp, *sw;

	for (lo = 0; lo < n; lo += 16) {
		size_t hi = lo + 16 < n ? lo + 16 : n;

		for (i = lo + 1; i < hi; i++) {
			uint64_t x = k[i];

			for (j = i; j > lo && k[j - 1] < x; j--)
				k[j] = k[j - 1];
			k[j] = x;
		}
	}
	for (w = 16; w < n; w *= 2) {
		for (lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n;
			size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t p = lo, q = mid, o = lo;

			while (p < mid && q < hi)
				b[o++] = a[p] >= a[q] ? a[p++] : a[q++];
			while (p < mid)
				b[o++] = a[p++];
			while (q < hi)
				b[o++] = a[q++];
		}
		sw = a;
		a = b;
		b = sw;
	}
	if (a != k)
		memcpy(k, a, n * sizeof(*k));
}

/* Moves the m largest of k[0..n) (distinct keys) to its front, best
 * first, and returns how many that is (min(n, m)). Quickselect with a
 * median of three, then the sort of the front. */
static size_t keys_top(uint64_t *k, size_t n, size_t m, uint64_t *tmp)
{
	size_t lo = 0, hi = n;

	if (m > n)
		m = n;
	while (m > 0 && m < n && hi - lo > 16) {
		size_t i = lo, j = hi - 1, mid = lo + (hi - lo) / 2;
		uint64_t a = k[lo], b = k[mid], c = k[hi - 1], p, x;

		/* the median of three, as the pivot */
		p = a < b ? (b < c ? b : a < c ? c : a) :
			    (a < c ? a : b < c ? c : b);
		/* Hoare's partition: [lo, j] >= p >= [j + 1, hi) */
		for (;;) {
			while (k[i] > p)
				i++;
			while (k[j] < p)
				j--;
			if (i >= j)
				break;
			x = k[i];
			k[i] = k[j];
			k[j] = x;
			i++;
			j--;
		}
		if (m <= j)
			hi = j + 1;
		else
			lo = j + 1;
		if (lo >= m || hi <= m)
			break;
	}
	keys_sort(k, lo < m && m < hi ? hi : m, tmp);
	return m;
}

/*
 * Small problems: every target in one block (n_tgt <= SMALL_TGT). Each
 * row's scores are computed whole and its top M picked from them, with
 * none of the machinery that pays off on large sites (the bf16 copies and
 * bands, band lists, threads and their heaps: a night of 1,000 sites of
 * 100 pages spent ~7 % of its builds there, three calls a site). The
 * scores are the ones the blocked path keeps, so the candidates are the
 * same bit for bit: bf_dot() where that path runs in bf16 (its exact
 * recheck of every entry it keeps), else the same sgemm calls (CHUNK rows
 * against the one block); the order is worse()'s, NaN never offered, the
 * row's self skipped, as there.
 */
#define SMALL_TGT 512	/* = BLK: one block of targets */

static int topm_small(const struct job *jb, struct lb_candidates *out)
{
	size_t m = jb->m, nt = jb->n_tgt, r0, i, j, n = 1;
	/* bf16: one row at a time, or the whole square of a same-set
	 * problem (bf_dot(a, b) == bf_dot(b, a): each pair once); sgemm:
	 * CHUNK rows */
	size_t rows = jb->bf16 ? (jb->symmetric ? nt : 1) : CHUNK;
	float *c = malloc((rows * nt + 1) * sizeof(*c));
	uint64_t *key = malloc((nt + 1) * sizeof(*key));
	uint64_t *tmp = malloc((nt + 1) * sizeof(*tmp));
	int rc = -1;

	if (c == NULL || key == NULL || tmp == NULL)
		goto out;
	for (r0 = jb->row_begin; r0 < jb->row_end; r0 += n) {
		const float *ci;
		size_t row = r0, r = r0 - jb->row_begin;
		long skip;

#ifdef HAVE_AVX2_PATH
		if (jb->bf16) {
			float *cr = c + (jb->symmetric ? row * nt : 0);

			n = 1;
			for (j = 0; j < nt; j++)
				cr[j] = jb->symmetric && j < row &&
						j >= jb->row_begin ?
						c[j * nt + row] :
						bf_dot(jb->src + row * jb->d,
						       jb->tgt + j * jb->d,
						       jb->d);
			ci = cr;
		} else
#endif
		{
			/* the blocked path's calls: chunks of CHUNK rows
			 * from the block's first row */
			size_t b0 = r0 - r0 % CHUNK;

			n = b0 + CHUNK < jb->row_end ? b0 + CHUNK - r0 :
						       jb->row_end - r0;
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans,
				    (int)(b0 + CHUNK < jb->n_src ?
					  CHUNK : jb->n_src - b0),
				    (int)nt, (int)jb->d, 1.0f,
				    jb->src + b0 * jb->d, (int)jb->d, jb->tgt,
				    (int)jb->d, 0.0f, c, (int)nt);
			ci = c + (r0 - b0) * nt;
		}
		for (i = 0; i < n; i++, ci += nt, row++, r++) {
			size_t cnt = 0, q;

			skip = jb->self ? jb->self[row] :
			       jb->symmetric ? (long)row : -1;
			cnt = row_keys(ci, nt, skip, jb->avx2, key);
			cnt = keys_top(key, cnt, m, tmp);
			for (q = 0; q < cnt; q++) {
				uint32_t t = key_target(key[q]);

				out->target[r * m + q] = t;
				out->score[r * m + q] = ci[t];
			}
		}
	}
	rc = 0;
out:
	free(c);
	free(key);
	free(tmp);
	return rc;
}

int topm_begin(size_t n_src, size_t n_tgt, size_t d, size_t m,
	       size_t *row_begin, size_t *row_end, int threads, size_t *nt,
	       struct lb_candidates *out, struct lb_error *err)
{
	out->target = NULL;
	out->score = NULL;
	if (*row_begin == 0 && *row_end == 0)
		*row_end = n_src;
	if (*row_begin > *row_end || *row_end > n_src)
		return lb_error_set(err, LB_EUSAGE,
				    "row range [%zu, %zu) outside %zu sources",
				    *row_begin, *row_end, n_src);
	if (n_tgt > UINT32_MAX - 1 || n_src > UINT32_MAX - 1)
		return lb_error_set(err, LB_ETOOBIG, "%zu targets", n_tgt);
	if (lb_candidates_init(out, *row_end - *row_begin, m) == -1)
		return lb_error_set(err, LB_ENOMEM, "candidates");
	if (*row_end == *row_begin || m == 0 || n_tgt == 0 || d == 0)
		return 0;
	*nt = threads > 0 ? (size_t)threads :
	      (size_t)sysconf(_SC_NPROCESSORS_ONLN);
	if (*nt < 1)
		*nt = 1;
	if (*nt > RELATE_MAX_THREADS)
		*nt = RELATE_MAX_THREADS;
	return 1;
}

int relate_topm(const float *src, size_t n_src, const float *tgt,
		size_t n_tgt, size_t d, const long *self, size_t m,
		size_t row_begin, size_t row_end, int threads,
		struct lb_candidates *out, struct lb_error *err)
{
	struct job jb;
	struct heap_set *hs = NULL;
	struct work *wk = NULL;
	struct merge *mg = NULL;
	struct bf_mem bfm = { 0 };
	size_t rows, bi_, bj_, t, nt, n_heaps = 0;
	int rc = -1, blas_threads = openblas_get_num_threads(), small;

	if (ivf_wanted(n_tgt))	/* large sites: approximate (ivf.c) */
		return ivf_topm(src, n_src, tgt, n_tgt, d, self, m, row_begin,
				row_end, threads, NULL, out, err);
	memset(&jb, 0, sizeof(jb));
	rc = topm_begin(n_src, n_tgt, d, m, &row_begin, &row_end, threads,
			&nt, out, err);
	if (rc != 1)
		return rc;
	rc = -1;
	rows = row_end - row_begin;
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
	/* LINKBOT_NO_TOPM_SMALL: the blocked path anyway (tests) */
	small = n_tgt <= SMALL_TGT && !getenv("LINKBOT_NO_TOPM_SMALL");
#ifdef HAVE_AVX2_PATH
	if (jb.avx2 && __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bf16") &&
	    !getenv("LINKBOT_NO_BF16")) {
		if (small) {
			/* the bf16 path's condition, without its copies */
			float gn = 0, ge = 0;

			jb.bf16 = bf_norms(src, n_src, d, NULL, NULL, &gn,
					   &ge) &&
				  (jb.symmetric ||
				   bf_norms(tgt, n_tgt, d, NULL, NULL, &gn,
					    &ge));
		} else if (bf_prepare(&jb, &bfm, nt) == -1) {
			goto nomem;
		}
	}
#endif
	if (small) {
		/* the blocked path's calls are single-threaded: so are these,
		 * or OpenBLAS's own split of a call may change its bits */
		openblas_set_num_threads(1);
		rc = topm_small(&jb, out);
		openblas_set_num_threads(blas_threads);
		if (rc == -1)
			goto nomem;
		goto out;
	}
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
	wk = calloc(nt, sizeof(*wk));
	mg = calloc(nt, sizeof(*mg));
	if (hs == NULL || wk == NULL || mg == NULL)
		goto nomem;
	for (n_heaps = 0; n_heaps < nt; n_heaps++)
		if (heaps_init(&hs[n_heaps], rows, m, jb.bf16) == -1) {
			n_heaps++;
			goto nomem;
		}

	openblas_set_num_threads(1);
	for (t = 0; t < nt; t++) {
		wk[t].jb = &jb;
		wk[t].h = &hs[t];
	}
	run_threads(nt, worker, wk, sizeof(*wk));
	openblas_set_num_threads(blas_threads);

	/* merge the threads' heaps, best first, rows split among threads */
	for (t = 0; t < nt; t++) {
		mg[t].jb = &jb;
		mg[t].hs = hs;
		mg[t].nt = nt;
		mg[t].out = out;
		mg[t].r0 = rows * t / nt;
		mg[t].r1 = rows * (t + 1) / nt;
		mg[t].rc = 0;
	}
	run_threads(nt, merger, mg, sizeof(*mg));
	for (t = 0; t < nt; t++)
		if (mg[t].rc == -1)
			goto nomem;
	rc = 0;
	goto out;
nomem:
	lb_error_set(err, LB_ENOMEM, "top-M selection for %zu rows", rows);
	lb_candidates_release(out);
out:
	for (t = 0; t < n_heaps; t++)
		heaps_release(&hs[t]);
	free(hs);
	free(wk);
	free(mg);
	free(jb.items);
	free(bfm.a2);
	free(bfm.b2);
	free(bfm.nrm);
	return rc;
}

void relate_run_threads(size_t nt, void *(*fn)(void *), void *args,
			size_t size)
{
	run_threads(nt, fn, args, size);
}

void relate_heap_push(float *hs, uint32_t *ht, uint32_t *cnt, size_t m,
		      float s, uint32_t t)
{
	heap_push(hs, ht, cnt, m, s, t);
}

void relate_blas_single(void)
{
	openblas_set_num_threads(1);
}

uint64_t relate_rank_key(float s, uint32_t t)
{
	return rank_key(s, t);
}

size_t relate_keys_top(uint64_t *k, size_t n, size_t m, uint64_t *tmp)
{
	return keys_top(k, n, m, tmp);
}
