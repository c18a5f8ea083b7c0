/*
 * relate.c - stage 3 entry point: docs -> vectors -> exact top-M.
 *
 * The vectors are computed over the union of the source and target pages
 * (a source that is also a target, by in->self, is one row), so that both
 * sides live in one space; the source and target rows are then handed to
 * relate_topm(). A multi-language endpoint is cut into language groups
 * first (by_language()), each computed as an endpoint of its own, vectors
 * included, its targets mapped back to the endpoint's target indexes.
 * Groups keep the global order of their pages, so ties still go to the
 * lower target index.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "linkbot/log.h"

#include "linkbot/relate.h"
#include "relate_int.h"

#define DIM_MAX 256
#define SMOOTH_K 20
#define SMOOTH_ROUNDS 2
#define SMOOTH_MAX 50000	/* pages; automatic smoothing up to this */
#define FLOOR_PAIRS 2000	/* random pairs measured for random_floor */
#define FLOOR_SEED 0x5eedf1002ULL
/* a row's targets are scored this many at a time (stack buffers) */
#define RESCORE_CHUNK 64

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A group's candidates (rows a..b of the group, targets numbered in the
 * group) into out: row gs[s] - rb, target gt[t]. by_language() and the
 * groups of relate_candidates() both compute per group.
 */
static void scatter_group(struct lb_candidates *out,
			  const struct lb_candidates *part, const size_t *gs,
			  const size_t *gt, size_t a, size_t b, size_t rb,
			  size_t m)
{
	size_t s, j;

	for (s = a; s < b; s++) {
		size_t r = gs[s] - rb;

		for (j = 0; j < m; j++) {
			uint32_t t = part->target[(s - a) * m + j];

			out->target[r * m + j] =
				t == LB_NO_TARGET ? t : (uint32_t)gt[t];
			out->score[r * m + j] = part->score[(s - a) * m + j];
		}
	}
}

int relate_shard_range(size_t n_src, unsigned i, unsigned n, size_t *begin,
		       size_t *end)
{
	if (n == 0 || i >= n)
		return -1;
	*begin = (size_t)((unsigned __int128)n_src * i / n);
	*end = (size_t)((unsigned __int128)n_src * (i + 1) / n);
	return 0;
}

/* LSA dimensions for n pages when the caller did not choose: 2 sqrt(n),
 * within [16, 256] (bench/RESULTS.md: small sites lose precision with
 * more dimensions, because rare terms come back as noise). */
static size_t auto_dim(size_t n)
{
	size_t k = (size_t)(2 * sqrt((double)n));

	if (k < 16)
		k = 16;
	return k > DIM_MAX ? DIM_MAX : k;
}

/*
 * Neighbour smoothing: each page's vector plus the similarity-weighted
 * mean of its SMOOTH_K nearest pages' vectors, then unit length again;
 * SMOOTH_ROUNDS times, each round from the last one's vectors (a page
 * then borrows from its neighbours' neighbours too: a short diffusion).
 * Topics are sharper after it: a page borrows the vocabulary of its close
 * neighbours, so two pages on one topic that share few words still meet
 * through the pages between them (pseudo-relevance feedback, applied to
 * every page). One extra exact top-K pass over all pages a round, so every
 * shard computes the same vectors; the cost triples, hence off above
 * SMOOTH_MAX pages unless asked for. Gain measured in bench/RESULTS.md
 * (two rounds of 20 against one of 10: +0.02 published precision@8 on
 * the python3-doc site, +0.002 on the two others of the tuning half).
 */
static int smooth(float *vec, size_t n, size_t d, int threads,
		  struct lb_error *err)
{
	struct lb_candidates nb;
	float *nv;
	size_t r, q, j, k = SMOOTH_K;

	if (relate_topm(vec, n, vec, n, d, NULL, k, 0, 0, threads, &nb,
			err) == -1)
		return -1;
	nv = malloc((n * d + 1) * sizeof(*nv));
	if (nv == NULL) {
		lb_candidates_release(&nb);
		return lb_error_set(err, LB_ENOMEM, "smoothing");
	}
	memcpy(nv, vec, n * d * sizeof(*nv));
	for (r = 0; r < n; r++)
		for (q = 0; q < k; q++) {
			uint32_t t = nb.target[r * k + q];
			float w = nb.score[r * k + q] / (float)k;

			if (t == LB_NO_TARGET || !(w > 0))
				continue;
			for (j = 0; j < d; j++)
				nv[r * d + j] += w * vec[t * d + j];
		}
	rows_normalize(nv, n, d);
	memcpy(vec, nv, n * d * sizeof(*nv));
	free(nv);
	lb_candidates_release(&nb);
	return 0;
}

static int float_cmp(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

/*
 * The median as the sort gave it (relate_int.h), in O(n): floats that
 * compare equal are the same bits but for -0 and +0, so when the median
 * is a zero the stable sort's choice (the zeros in their input order) is
 * read from the input; otherwise a selection (Hoare's partition, median
 * of three) finds the value. NaN, which the comparison does not order,
 * goes to the sort itself. Was a qsort() of 2,000 floats a site, 0.7 M
 * instructions (bench/RESULTS.md, "the tail, round 6").
 */
float relate_median(float *sc, size_t n)
{
	size_t i, k = n / 2, lo = 0, hi = n - 1, below = 0, zeros = 0;

	for (i = 0; i < n; i++) {
		if (isnan(sc[i])) {
			qsort(sc, n, sizeof(*sc), float_cmp);
			return sc[k];
		}
		below += sc[i] < 0;
		zeros += sc[i] == 0;
	}
	if (k >= below && k < below + zeros)
		for (i = 0; i < n; i++)
			if (sc[i] == 0 && below++ == k)
				return sc[i];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2, a = lo, b = hi;
		float x = sc[lo], y = sc[mid], z = sc[hi], piv, t;

		piv = x < y ? (y < z ? y : (x < z ? z : x)) :
			      (x < z ? x : (y < z ? z : y));
		for (;;) {
			while (sc[a] < piv)
				a++;
			while (piv < sc[b])
				b--;
			if (a >= b)
				break;
			t = sc[a];
			sc[a] = sc[b];
			sc[b] = t;
			a++;
			b--;
		}
		/* lo..b <= piv <= b+1..hi */
		if (k <= b)
			hi = b;
		else
			lo = b + 1;
	}
	return sc[k];
}

/*
 * random_floor()'s pairs (a[k], b[k]) scored into sc[k] as its loop
 * scores them, grouped by their first row: row a scattered once for all
 * its pairs, the sparse dots through the memo (each pair of the site
 * once, shared with the re-ranking: rerank.c), the dense ones four a step
 * (relate_dots(): dot_dbl()'s bits, which are the loop's). The same
 * scores, so the same median (bench/RESULTS.md, "the build of a small
 * client"). 0, or -1 out of memory.
 */
static int floor_pairs(const float *vec, size_t d, const struct csr *x,
		       double w, const size_t *a, const size_t *b, size_t n,
		       struct sparse_memo *memo, float *sc)
{
	size_t *start = calloc(memo->n + 2, sizeof(*start));
	size_t *ord = malloc((n + 1) * sizeof(*ord));
	float *acc = calloc(x->n_cols + 1, sizeof(*acc));
	const float *bp[RESCORE_CHUNK];
	double dd[RESCORE_CHUNK], sp[RESCORE_CHUNK];
	uint32_t tg[RESCORE_CHUNK];
	size_t i, k, p, r, c, at;
	int wide = relate_dots_wide(), rc = -1;

	if (start == NULL || ord == NULL || acc == NULL)
		goto out;
	/* the pairs by first row, in draw order within a row */
	for (k = 0; k < n; k++)
		start[a[k] + 2]++;
	for (r = 0; r < memo->n; r++)
		start[r + 2] += start[r + 1];
	for (k = 0; k < n; k++)
		ord[start[a[k] + 1]++] = k;
	for (r = 0; r < memo->n; r++) {
		if (start[r] == start[r + 1])
			continue;
		for (p = x->ptr[r]; p < x->ptr[r + 1]; p++)
			acc[x->col[p]] = x->val[p];
		for (i = start[r]; i < start[r + 1]; i += c) {
			c = start[r + 1] - i < RESCORE_CHUNK ?
			    start[r + 1] - i : RESCORE_CHUNK;
			if (vec) {
				for (at = 0; at < c; at++)
					bp[at] = vec + b[ord[i + at]] * d;
				relate_dots(vec + r * d, bp, c, d, wide, dd);
			}
			for (at = 0; at < c; at++)
				tg[at] = (uint32_t)b[ord[i + at]];
			sparse_memo_dots(memo, acc, r, tg, c, sp);
			for (at = 0; at < c; at++) {
				size_t q = ord[i + at];

				sc[q] = vec ? (float)rerank_score((float)dd[at],
								  sp[at], w) :
					      (float)sp[at];
			}
		}
		for (p = x->ptr[r]; p < x->ptr[r + 1]; p++)
			acc[x->col[p]] = 0;
	}
	rc = 0;
out:
	free(start);
	free(ord);
	free(acc);
	return rc;
}

/*
 * What random pairs of the site score (lb_candidates.random_floor): the
 * cosines of FLOOR_PAIRS (source, target) pairs drawn with a fixed seed
 * over all the sources and targets (never the shard's rows only, so every
 * shard finds the same), a page never with itself; their median: a link
 * at or below it is no more related than a pair drawn at random (a site
 * whose pages all look alike: every link). Not a higher quantile: on a
 * site of 5 topics a fifth of random pairs share one, and the 90th
 * percentile marked a third of the demo site's fillers that were on topic
 * (bench/RESULTS.md). Links filling the k constraint can be below it
 * (fillers.h).
 * Rows are doc rows of vec (d floats) and of x; source i is row srow[i],
 * target j row j. With both, a pair scores as the candidates do after the
 * hybrid re-ranking (rerank_score(), sparse share w); with one, its
 * cosine. -INFINITY when no pair exists.
 */
static float random_floor(const float *vec, size_t d, const struct csr *x,
			  double w, const size_t *srow, size_t n_src,
			  size_t n_tgt, struct sparse_memo *memo)
{
	float *sc;
	uint64_t st = FLOOR_SEED;
	size_t i, n = 0, tries, *pa = NULL, *pb = NULL;
	float f = -INFINITY;

	if (n_src == 0 || n_tgt == 0 || (vec == NULL && x == NULL))
		return f;
	sc = malloc(FLOOR_PAIRS * sizeof(*sc));
	if (sc == NULL)
		return f;
	if (x != NULL && memo != NULL && memo->v != NULL && memo->x == x) {
		pa = malloc(2 * FLOOR_PAIRS * sizeof(*pa));
		pb = pa ? pa + FLOOR_PAIRS : NULL;
	}
	for (tries = 0; n < FLOOR_PAIRS && tries < 4 * FLOOR_PAIRS; tries++) {
		size_t a = srow[relate_rand(&st) % n_src];
		size_t b = relate_rand(&st) % n_tgt;
		double dot = 0;

		if (a == b)
			continue;
		if (pa) {	/* scored by floor_pairs() below */
			pa[n] = a;
			pb[n++] = b;
			continue;
		}
		if (vec) {
			for (i = 0; i < d; i++)
				dot += (double)vec[a * d + i] * vec[b * d + i];
			if (x)
				dot = rerank_score((float)dot,
						   csr_dot(x, a, b), w);
		} else {
			dot = csr_dot(x, a, b);
		}
		sc[n++] = (float)dot;
	}
	if (pa && floor_pairs(vec, d, x, w, pa, pb, n, memo, sc) == -1)
		n = 0;	/* no memory: no floor */
	if (n > 0)
		f = relate_median(sc, n);
	free(sc);
	free(pa);
	return f;
}

/* Exact sparse cosine top-M (the plain TF-IDF baseline). */
static int sparse_topm(const struct csr *x, const size_t *srow,
		       size_t n_tgt, const long *self,
		       size_t m, size_t rb, size_t re,
		       struct lb_candidates *out, struct lb_error *err)
{
	size_t *cptr = NULL, *cnt = NULL, i, p, j;
	uint32_t *crow = NULL;
	float *cval = NULL, *acc = NULL;
	int rc = -1;

	/* inverted index of the target rows */
	cptr = calloc(x->n_cols + 1, sizeof(*cptr));
	cnt = calloc(x->n_cols + 1, sizeof(*cnt));
	crow = malloc((x->ptr[n_tgt] + 1) * sizeof(*crow));
	cval = malloc((x->ptr[n_tgt] + 1) * sizeof(*cval));
	acc = malloc((n_tgt + 1) * sizeof(*acc));
	if (!cptr || !cnt || !crow || !cval || !acc)
		goto nomem;
	for (p = 0; p < x->ptr[n_tgt]; p++)
		cptr[x->col[p] + 1]++;
	for (j = 0; j < x->n_cols; j++)
		cptr[j + 1] += cptr[j];
	for (i = 0; i < n_tgt; i++)
		for (p = x->ptr[i]; p < x->ptr[i + 1]; p++) {
			size_t at = cptr[x->col[p]] + cnt[x->col[p]]++;

			crow[at] = (uint32_t)i;
			cval[at] = x->val[p];
		}
	for (i = rb; i < re; i++) {
		size_t r = srow[i], k;
		uint32_t *ot = out->target + (i - rb) * m;
		float *os = out->score + (i - rb) * m;

		memset(acc, 0, n_tgt * sizeof(*acc));
		for (p = x->ptr[r]; p < x->ptr[r + 1]; p++) {
			uint32_t c = x->col[p];

			for (k = cptr[c]; k < cptr[c + 1]; k++)
				acc[crow[k]] += x->val[p] * cval[k];
		}
		/* insertion into the sorted row: fine for the baseline */
		for (j = 0; j < n_tgt; j++) {
			size_t q;

			if (self && self[i] == (long)j)
				continue;
			if (ot[m - 1] != LB_NO_TARGET && acc[j] <= os[m - 1])
				continue;
			for (q = m - 1; q > 0 && (ot[q - 1] == LB_NO_TARGET ||
						  acc[j] > os[q - 1]); q--) {
				ot[q] = ot[q - 1];
				os[q] = os[q - 1];
			}
			ot[q] = (uint32_t)j;
			os[q] = acc[j];
		}
	}
	rc = 0;
	goto out;
nomem:
	lb_error_set(err, LB_ENOMEM, "TF-IDF candidates");
out:
	free(cptr);
	free(cnt);
	free(crow);
	free(cval);
	free(acc);
	return rc;
}

/*
 * A multi-language endpoint is one site per language: each language group
 * (targets and sources by primary subtag) goes through the whole pipeline
 * on its own, term statistics, LSA and smoothing included, then its rows
 * are placed back. Computed over the union, a word in every page of one
 * language (a particle of a language without a stop list, a site name)
 * would count as rare when that language is a minority of the pages, and
 * the languages would share the LSA dimensions (bench/RESULTS.md).
 */
static int by_language(const struct lb_relate_input *in,
		       const struct lb_relate_opts *opts, size_t rb, size_t re,
		       struct lb_candidates *out, struct lb_error *err)
{
	const struct lb_doc **gsrc = NULL, **gtgt = NULL;
	char (*ks)[LB_LANG_GROUP_LEN] = NULL, (*kt)[LB_LANG_GROUP_LEN] = NULL;
	size_t *gs = NULL, *gt = NULL, *tpos = NULL, i, j, m = opts->m;
	unsigned char *sdone = NULL;
	long *gself = NULL;
	int rc = -1;

	if (lb_candidates_init(out, re - rb, m) == -1)
		return lb_error_set(err, LB_ENOMEM, "candidates");
	ks = malloc((in->n_src + 1) * sizeof(*ks));
	kt = malloc((in->n_tgt + 1) * sizeof(*kt));
	gs = malloc((in->n_src + 1) * sizeof(*gs));
	gt = malloc((in->n_tgt + 1) * sizeof(*gt));
	tpos = malloc((in->n_tgt + 1) * sizeof(*tpos));
	gsrc = malloc((in->n_src + 1) * sizeof(*gsrc));
	gtgt = malloc((in->n_tgt + 1) * sizeof(*gtgt));
	gself = malloc((in->n_src + 1) * sizeof(*gself));
	sdone = calloc(in->n_src + 1, 1);
	if (!ks || !kt || !gs || !gt || !tpos || !gsrc || !gtgt || !gself ||
	    !sdone) {
		lb_error_set(err, LB_ENOMEM, "language groups");
		goto out;
	}
	for (i = 0; i < in->n_src; i++)
		lb_lang_group(in->src[i]->language, ks[i]);
	for (i = 0; i < in->n_tgt; i++)
		lb_lang_group(in->tgt[i]->language, kt[i]);
	/* a group per language of a source; groups without sources do not
	 * matter, sources of a language without targets stay padding */
	for (i = 0; i < in->n_src; i++) {
		struct lb_relate_input sub = { 0 };
		struct lb_relate_opts so = *opts;
		struct lb_candidates part;
		size_t ns = 0, nt = 0, a, b, s;
		int same = 1;

		if (sdone[i])
			continue;
		for (j = 0; j < in->n_tgt; j++)
			if (strcmp(kt[j], ks[i]) == 0) {
				tpos[j] = nt;
				gt[nt] = j;
				gtgt[nt++] = in->tgt[j];
			}
		for (j = i; j < in->n_src; j++)
			if (!sdone[j] && strcmp(ks[j], ks[i]) == 0) {
				sdone[j] = 1;
				gs[ns] = j;
				gsrc[ns] = in->src[j];
				/* self in group-local target indexes */
				gself[ns] = in->self && in->self[j] >= 0 &&
					    (size_t)in->self[j] < in->n_tgt &&
					    strcmp(kt[in->self[j]], ks[i]) == 0 ?
					    (long)tpos[in->self[j]] : -1;
				ns++;
			}
		/* sources of the group within [rb, re): a contiguous run */
		for (a = 0; a < ns && gs[a] < rb; a++)
			;
		for (b = a; b < ns && gs[b] < re; b++)
			;
		if (a == b || nt == 0)
			continue;
		/* one set stays one set (the symmetric path) */
		same = in->n_src == in->n_tgt && ns == nt;
		for (s = 0; same && s < ns; s++)
			same = gsrc[s] == gtgt[s];
		sub.src = same ? gtgt : gsrc;
		sub.n_src = ns;
		sub.tgt = gtgt;
		sub.n_tgt = nt;
		sub.self = same ? NULL : gself;
		sub.text = in->text;
		so.row_begin = a;
		so.row_end = b;
		if (relate_candidates(&sub, &so, &part, err) == -1)
			goto out;
		/* the highest group's: a filler in any language stays one */
		if (part.random_floor > out->random_floor)
			out->random_floor = part.random_floor;
		scatter_group(out, &part, gs, gt, a, b, rb, m);
		lb_candidates_release(&part);
	}
	rc = 0;
out:
	if (rc == -1)
		lb_candidates_release(out);
	free(ks);
	free(kt);
	free(gs);
	free(gt);
	free(tpos);
	free(gsrc);
	free(gtgt);
	free(gself);
	free(sdone);
	return rc;
}

/*
 * The candidates' scores, found on the LSA's first view alone, replaced
 * by the inner product of the whole rows (both views: the mix of the two
 * cosines), in double in a fixed order, so a row's scores depend only on
 * its own pair of vectors (threads and shards alike). The order is left
 * to rerank_hybrid(), which sorts every row (the LSA path always runs
 * it). Why the search leaves the second view out: docs/relate.md, "two
 * views"; the top 2M of the first view holds almost all of the mix's
 * best M (bench/RESULTS.md, round 8), and the search, the step whose
 * cost grows as N^2 d, stays at the first view's d.
 */
struct rescore_work {
	struct lb_candidates *c;
	const float *vec;
	size_t d, r0, r1;
	const size_t *srow;
	size_t rb;
};

/* sum over k of (double)a[k] * b[k], in k's order */
static double dot_dbl(const float *a, const float *b, size_t d)
{
	double s = 0;
	size_t k;

	for (k = 0; k < d; k++)
		s += (double)a[k] * b[k];
	return s;
}

#if defined(__x86_64__)
#include <immintrin.h>

/*
 * dot_dbl() of a with four rows at once, one row a lane of a vector of
 * doubles: each lane adds the same products (a float times a float is
 * exact in double) in the same order as dot_dbl(), so the four sums are
 * its bits; four rows' next 4 floats are transposed so that a step
 * reads each row once. 1.8 M of a 100-page site's instructions were
 * these dots one at a time (bench/RESULTS.md, "the tail, round 6").
 */
__attribute__((target("avx")))
static void dot_dbl4(const float *a, const float *const b[4], size_t d,
		     double out[4])
{
	__m256d s = _mm256_setzero_pd();
	size_t k;

	for (k = 0; k + 4 <= d; k += 4) {
		__m128 r0 = _mm_loadu_ps(b[0] + k), r1 = _mm_loadu_ps(b[1] + k);
		__m128 r2 = _mm_loadu_ps(b[2] + k), r3 = _mm_loadu_ps(b[3] + k);

		_MM_TRANSPOSE4_PS(r0, r1, r2, r3);
		s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_set1_pd(a[k]),
						   _mm256_cvtps_pd(r0)));
		s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_set1_pd(a[k + 1]),
						   _mm256_cvtps_pd(r1)));
		s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_set1_pd(a[k + 2]),
						   _mm256_cvtps_pd(r2)));
		s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_set1_pd(a[k + 3]),
						   _mm256_cvtps_pd(r3)));
	}
	for (; k < d; k++)
		s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_set1_pd(a[k]),
			_mm256_cvtps_pd(_mm_setr_ps(b[0][k], b[1][k], b[2][k],
						    b[3][k]))));
	_mm256_storeu_pd(out, s);
}
#endif

void relate_dots(const float *a, const float *const *b, size_t n, size_t d,
		 int wide, double *out)
{
	size_t j = 0;

#if defined(__x86_64__)
	for (; wide && j + 4 <= n; j += 4)
		dot_dbl4(a, b + j, d, out + j);
#else
	(void)wide;
#endif
	for (; j < n; j++)
		out[j] = dot_dbl(a, b[j], d);
}

int relate_dots_wide(void)
{
#if defined(__x86_64__)
	return __builtin_cpu_supports("avx") && !getenv("LINKBOT_NO_AVX2");
#else
	return 0;
#endif
}


static void *rescore_rows(void *arg)
{
	struct rescore_work *w = arg;
	struct lb_candidates *c = w->c;
	size_t i, j, k, n, d = w->d;
	const float *b[RESCORE_CHUNK];
	double s[RESCORE_CHUNK];
	size_t at[RESCORE_CHUNK];
	int wide = relate_dots_wide();

	for (i = w->r0; i < w->r1; i++) {
		const float *a = w->vec + w->srow[w->rb + i] * d;

		for (j = 0; j < c->m;) {
			for (n = 0; j < c->m && n < RESCORE_CHUNK; j++) {
				uint32_t t = c->target[i * c->m + j];

				if (t == LB_NO_TARGET)
					continue;
				b[n] = w->vec + (size_t)t * d;
				at[n++] = j;
			}
			relate_dots(a, b, n, d, wide, s);
			for (k = 0; k < n; k++)
				c->score[i * c->m + at[k]] = (float)s[k];
		}
	}
	return NULL;
}

static void dense_rescore(struct lb_candidates *c, const float *vec,
			  size_t d, const size_t *srow, size_t rb,
			  int threads)
{
	struct rescore_work w[RELATE_MAX_THREADS];
	size_t nt = threads > 0 ? (size_t)threads : 1, t;

	if (nt > RELATE_MAX_THREADS)
		nt = RELATE_MAX_THREADS;
	if (nt > c->n_src / 256 + 1)
		nt = c->n_src / 256 + 1;	/* small sites: one thread */
	for (t = 0; t < nt; t++)
		w[t] = (struct rescore_work){
			.c = c, .vec = vec, .d = d, .srow = srow, .rb = rb,
			.r0 = c->n_src * t / nt,
			.r1 = c->n_src * (t + 1) / nt,
		};
	relate_run_threads(nt, rescore_rows, w, sizeof(*w));
}

int relate_candidates(const struct lb_relate_input *in,
		      const struct lb_relate_opts *opts,
		      struct lb_candidates *out, struct lb_error *err)
{
	const struct lb_doc **docs = NULL;
	size_t *srow = NULL, n_docs, i, j, d = 0, ds = 0, m = opts->m;
	size_t rb = opts->row_begin, re = opts->row_end;
	float *vec = NULL, *sv = NULL, *tv = NULL;
	char (*key)[16] = NULL;
	size_t *gs = NULL, *gt = NULL;
	long *gself = NULL;
	uint32_t *done = NULL;
	struct csr x = { 0 };
	struct sparse_memo memo = { 0 };
	int same = in->n_src == in->n_tgt, rc = -1;
	double tm[4];
	int nthreads = opts->threads > 0 ? opts->threads :
		       (int)sysconf(_SC_NPROCESSORS_ONLN);

	tm[0] = now_s();
	memset(out, 0, sizeof(*out));
	if (rb == 0 && re == 0)
		re = in->n_src;
	if (rb > re || re > in->n_src)
		return lb_error_set(err, LB_EUSAGE,
				    "row range [%zu, %zu) outside %zu sources",
				    rb, re, in->n_src);
	for (i = 0; same && i < in->n_src; i++)
		same = in->src[i] == in->tgt[i];
	if (in->multi_language)
		return by_language(in, opts, rb, re, out, err);

	/* the union of pages, targets first */
	n_docs = in->n_tgt;
	docs = malloc((in->n_tgt + in->n_src + 1) * sizeof(*docs));
	srow = malloc((in->n_src + 1) * sizeof(*srow));
	gself = malloc((in->n_src + 1) * sizeof(*gself));
	if (docs == NULL || srow == NULL || gself == NULL)
		goto nomem;
	memcpy(docs, in->tgt, in->n_tgt * sizeof(*docs));
	for (i = 0; i < in->n_src; i++) {
		if (same)
			srow[i] = i;
		else if (in->self && in->self[i] >= 0 &&
			 (size_t)in->self[i] < in->n_tgt)
			srow[i] = (size_t)in->self[i];
		else {
			srow[i] = n_docs;
			docs[n_docs++] = in->src[i];
		}
	}

	if (opts->method == LB_RELATE_TFIDF) {
		/* the baseline works on the sparse vectors directly */
		if (text_vectors(docs, n_docs, in->text, 1, nthreads, &x,
				 err) == -1)
			goto out;
		if (lb_candidates_init(out, re - rb, m) == -1 ||
		    sparse_memo_init(&memo, &x) == -1)
			goto nomem;
		for (i = 0; i < in->n_src; i++)
			gself[i] = same ? (long)i :
				   in->self ? in->self[i] : -1;
		if (m && sparse_topm(&x, srow, in->n_tgt, gself, m, rb, re,
				     out, err) == -1)
			goto out;
		out->random_floor = random_floor(NULL, 0, &x, 0, srow, in->n_src,
						 in->n_tgt, &memo);
		goto extend;
	}

	if (opts->method == LB_RELATE_EMBED) {
		if (opts->embed == NULL) {
			lb_error_set(err, LB_EUSAGE,
				     "embeddings method without a server");
			goto out;
		}
		if (embed_vectors(docs, n_docs, in->text, opts->embed, &vec,
				  &d, err) ==
		    -1)
			goto out;
	} else {
		d = opts->dim ? opts->dim : auto_dim(n_docs);
		if (text_vectors(docs, n_docs, in->text, 0, nthreads, &x,
				 err) == -1)
			goto out;
		tm[1] = now_s();
		log_debug("relate: %zu pages, %zu terms, %zu entries in %.2f s",
			  n_docs, x.n_cols, x.ptr[n_docs], tm[1] - tm[0]);
		/* x stays: the hybrid re-ranking scores the candidates
		 * with it (rerank.c) */
		if (lsa_views(&x, &d, &ds, opts->seed, nthreads, &vec,
			      err) == -1)
			goto out;
		if (getenv("LINKBOT_TOPM_BOTH_VIEWS"))	/* benchmarks: round 7 */
			ds = d;
		tm[2] = now_s();
		log_debug("relate: LSA to %zu dimensions (two views) in %.2f s",
			  d,
			  tm[2] - tm[1]);
		if (opts->smooth > 0 ||
		    (opts->smooth == 0 && n_docs <= SMOOTH_MAX))
			for (i = 0; i < SMOOTH_ROUNDS; i++)
				if (smooth(vec, n_docs, d, opts->threads,
					   err) == -1)
					goto out;
		log_debug("relate: smoothing in %.2f s", now_s() - tm[2]);
	}
	tm[3] = now_s();
	if (d == 0)
		d = 1;	/* no terms at all: zero vectors, scores 0 */
	if (ds == 0 || ds > d)
		ds = d;	/* the top-M searches all dimensions */

	/* language groups (one group unless multi-language); the LSA's
	 * lists twice as deep, for the re-ranking */
	if (x.ptr)
		m = RERANK_DEPTH * opts->m;
	if (lb_candidates_init(out, re - rb, m) == -1 ||
	    (x.ptr && sparse_memo_init(&memo, &x) == -1))
		goto nomem;
	out->random_floor = random_floor(vec, d, x.ptr ? &x : NULL,
					 RERANK_SPARSE, srow, in->n_src,
					 in->n_tgt, &memo);
	key = malloc((n_docs + 1) * sizeof(*key));
	gs = malloc((in->n_src + 1) * sizeof(*gs));
	gt = malloc((in->n_tgt + 1) * sizeof(*gt));
	done = calloc(in->n_src + in->n_tgt + 1, sizeof(*done));
	sv = malloc((in->n_src + 1) * d * sizeof(*sv));
	tv = malloc((in->n_tgt + 1) * d * sizeof(*tv));
	if (!key || !gs || !gt || !done || !sv || !tv)
		goto nomem;
	for (i = 0; i < n_docs; i++)
		key[i][0] = '\0';	/* one group (languages: by_language()) */
	/* done[]: targets, then sources, already placed in a group */
	for (i = 0; i < in->n_tgt + in->n_src; i++) {
		const char *k;
		size_t ns = 0, nt = 0, a, b, s;
		struct lb_candidates part;
		long *pos;

		if (done[i])
			continue;
		k = i < in->n_tgt ? key[i] : key[srow[i - in->n_tgt]];
		for (j = 0; j < in->n_tgt; j++)
			if (!done[j] && strcmp(key[j], k) == 0) {
				done[j] = 1;
				gt[nt] = j;
				memcpy(tv + nt * ds, vec + j * d,
				       ds * sizeof(*tv));
				nt++;
			}
		for (j = 0; j < in->n_src; j++)
			if (!done[in->n_tgt + j] &&
			    strcmp(key[srow[j]], k) == 0) {
				done[in->n_tgt + j] = 1;
				gs[ns++] = j;
			}
		if (ns == 0)
			continue;
		/* sources of the group within [rb, re): a contiguous run */
		for (a = 0; a < ns && gs[a] < rb; a++)
			;
		for (b = a; b < ns && gs[b] < re; b++)
			;
		if (a == b || nt == 0)
			continue;
		/* self in group-local target indexes (gt is sorted) */
		pos = gself;
		for (s = 0; s < ns; s++) {
			long t = same ? (long)gs[s] :
				 in->self ? in->self[gs[s]] : -1;
			size_t lo = 0, hi = nt;

			pos[s] = -1;
			if (t < 0)
				continue;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;

				if (gt[mid] < (size_t)t)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < nt && gt[lo] == (size_t)t)
				pos[s] = (long)lo;
		}
		if (same) {
			/* the group's sources are its targets: symmetric */
			if (relate_topm(tv, nt, tv, nt, ds, NULL, m, a, b,
					opts->threads, &part, err) == -1)
				goto out;
		} else {
			for (s = 0; s < ns; s++)
				memcpy(sv + s * ds, vec + srow[gs[s]] * d,
				       ds * sizeof(*sv));
			if (relate_topm(sv, ns, tv, nt, ds, pos, m, a, b,
					opts->threads, &part, err) == -1)
				goto out;
		}
		scatter_group(out, &part, gs, gt, a, b, rb, m);
		lb_candidates_release(&part);
	}
	log_debug("relate: top-%zu of %zu rows (%zu of %zu dimensions) in "
		  "%.2f s", m, re - rb, ds, d, now_s() - tm[3]);
	if (ds < d) {
		tm[3] = now_s();
		dense_rescore(out, vec, d, srow, rb, nthreads);
		log_debug("relate: two-view scores of %zu rows in %.2f s",
			  re - rb, now_s() - tm[3]);
	}
	if (x.ptr) {
		tm[3] = now_s();
		if (rerank_hybrid(out, &x, srow, rb, opts->m, RERANK_SPARSE,
				  nthreads, &memo, err) == -1)
			goto out;
		log_debug("relate: hybrid re-ranking of %zu rows in %.2f s",
			  re - rb, now_s() - tm[3]);
	}
extend:
	/* every row at hand: lists extended for the targets few reach */
	if (rb == 0 && re == in->n_src && relate_extend(out, in, err) == -1)
		goto out;
	rc = 0;
	goto out;
nomem:
	lb_error_set(err, LB_ENOMEM, "candidates of %zu pages", in->n_src);
out:
	if (rc == -1)
		lb_candidates_release(out);
	sparse_memo_release(&memo);
	csr_release(&x);
	free(docs);
	free(srow);
	free(vec);
	free(sv);
	free(tv);
	free(key);
	free(gs);
	free(gt);
	free(gself);
	free(done);
	return rc;
}
