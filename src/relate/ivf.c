/*
 * ivf.c - approximate top-M for large sites: an inverted file (IVF) over
 * k-means cells of the vectors, searched with blocked sgemm.
 *
 * Design notes
 *
 * Problem: the exact top-M (topm.c) costs N^2 d / 2 multiply-adds on the
 * same set: at a million pages and d = 256, 2.6e14 flops, about an hour of
 * this machine's two cores. Above IVF_MIN targets (or when forced, for the
 * benchmarks) relate_topm() hands the work here instead; below it nothing
 * changes, so every relatedness figure measured on smaller sites holds.
 *
 * Cells: spherical k-means (the vectors are unit rows; a centroid is the
 * normalised mean of its points) with nlist = 4 sqrt(N_t) cells (with
 * sqrt(N_t), fewer cells than the site had topics, a cell mixed topics and
 * recall stalled near 0.93 whatever nprobe; bench/RESULTS.md), trained by
 * IVF_ITERS Lloyd iterations on a sample of IVF_SAMPLE points a cell drawn
 * with a fixed seed; the first nlist points of the sample start the
 * centroids; a cell left empty takes the sample point its centroid fits
 * worst (lowest best score, then lowest index). Every target goes to its
 * best cell (highest inner product with the centroid, lower cell on ties).
 *
 * Search: each source row probes its nprobe best cells (same rule), its own
 * cell first. Sources are grouped by their first cell and cut into chunks
 * of IVF_Q rows; a chunk is one work item. For each cell any row of the
 * chunk probes, the rows that probe it are gathered and one sgemm per
 * IVF_TB members of the cell scores them (rows x members x d, BLAS-bound),
 * and each score is offered to the row's bounded heap (topm.c's order:
 * score, then lower target). A row's whole search is inside one item, so
 * the result does not depend on the thread count; training, cells and
 * probe lists are computed on a block grid that depends only on the
 * matrix sizes, so a shard (row range) gets the rows of the whole run.
 * The one assumption: OpenBLAS computes an element of C the same way
 * whichever rows of A sit beside it (checked by test_ivf.c's shard test).
 *
 * Recall: the true neighbours of a page are nearly always in its own or
 * a near cell; what is missed is a neighbour beyond the nprobe nearest
 * cells. bench/ivf.sh measures recall@M against the exact top-M (and the
 * time against the exact path and FAISS IndexIVFFlat); IVF_NPROBE is
 * chosen there for recall >= 0.95 (bench/RESULTS.md).
 *
 * Cost: training IVF_ITERS * S * nlist * d * 2 (S = IVF_SAMPLE * nlist),
 * the probe lists N * nlist * d * 2, the search about
 * N * nprobe * (N / nlist) * d * 2 for balanced cells: at N = 1e6,
 * nlist 4000, nprobe 16, about 2e12 each, 40 times less than the exact
 * grid. Memory: the targets again in cell order (N_t * d floats), nprobe
 * cells a source row, IVF_Q heaps of M a thread.
 *
 * Knobs (benchmarks only; the defaults are what a build uses):
 * LINKBOT_IVF=1 forces it on at any size, =0 off; LINKBOT_IVF_NLIST,
 * LINKBOT_IVF_NPROBE set the cells and the probes; LINKBOT_IVF_RECALL=n
 * logs the recall of n rows against brute force; LINKBOT_IVF_DUMP=path
 * writes the vectors for bench/ivf.sh.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "linkbot/log.h"
#include "linkbot/relate.h"
#include "relate_int.h"

#define IVF_MIN 200000		/* targets: the exact top-M below this */
#define IVF_CELLS 4		/* nlist = IVF_CELLS sqrt(N) (bench/RESULTS.md) */
#define IVF_NPROBE 16		/* probes a row (bench/RESULTS.md) */
#define IVF_ITERS 8		/* Lloyd iterations */
#define IVF_SAMPLE 32		/* training points a cell */
#define IVF_SEED 0x1f5eedc311ULL
#define IVF_Q 64		/* source rows a work item */
#define IVF_TB 1024		/* cell members an sgemm call */
#define IVF_SLACK 8		/* entries kept beyond M for row_finish() */
#define IVF_RB 256		/* rows of the grid of centroid scores */
#define IVF_MAXPROBE 256

static size_t env_size(const char *name, size_t def)
{
	const char *e = getenv(name);
	char *end;
	unsigned long long v;

	if (e == NULL || *e == '\0')
		return def;
	v = strtoull(e, &end, 10);
	return *end == '\0' && v > 0 ? (size_t)v : def;
}

int ivf_wanted(size_t n_tgt)
{
	const char *e = getenv("LINKBOT_IVF");

	if (e != NULL && *e != '\0')
		return strcmp(e, "0") != 0;
	return n_tgt >= IVF_MIN;
}

void ivf_params_default(size_t n_tgt, struct ivf_params *p)
{
	size_t nl = (size_t)llround(IVF_CELLS * sqrt((double)n_tgt));

	p->nlist = env_size("LINKBOT_IVF_NLIST", nl ? nl : 1);
	p->nprobe = env_size("LINKBOT_IVF_NPROBE", IVF_NPROBE);
}

/*
 * Best cells: for rows of v in the blocks of IVF_RB rows that meet
 * [r0, r1) (the grid starts at row 0, so it depends on n only), the np
 * cells of highest score with the centroids, best first, lower cell on
 * ties, into cell[row * np]; the best score into best[row] when not NULL.
 */
struct best_job {
	const float *v, *cent;
	size_t n, d, nlist, np, b0, b1;
	uint32_t *cell;
	float *best;
	atomic_size_t next;
	int rc;
};

static void *best_worker(void *arg)
{
	struct best_job *bj = *(struct best_job **)arg;
	float *c = malloc(IVF_RB * bj->nlist * sizeof(*c));
	size_t b;

	if (c == NULL) {
		bj->rc = -1;
		return NULL;
	}
	while ((b = bj->b0 + atomic_fetch_add(&bj->next, 1)) < bj->b1) {
		size_t i0 = b * IVF_RB, i;
		size_t rows = bj->n - i0 < IVF_RB ? bj->n - i0 : IVF_RB;

		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans,
			    (int)rows, (int)bj->nlist, (int)bj->d, 1.0f,
			    bj->v + i0 * bj->d, (int)bj->d, bj->cent,
			    (int)bj->d, 0.0f, c, (int)bj->nlist);
		for (i = 0; i < rows; i++) {
			const float *ci = c + i * bj->nlist;
			uint32_t *top = bj->cell + (i0 + i) * bj->np;
			float ts[IVF_MAXPROBE];
			size_t k, n = 0, q;

			for (k = 0; k < bj->nlist; k++) {
				float s = ci[k] == ci[k] ? ci[k] : -INFINITY;

				if (n == bj->np && !(s > ts[n - 1]))
					continue;
				q = n < bj->np ? n++ : n - 1;
				while (q > 0 && s > ts[q - 1]) {
					ts[q] = ts[q - 1];
					top[q] = top[q - 1];
					q--;
				}
				ts[q] = s;
				top[q] = (uint32_t)k;
			}
			if (bj->best != NULL)
				bj->best[i0 + i] = ts[0];
		}
	}
	free(c);
	return NULL;
}

static int best_cells(const float *v, size_t n, size_t d, const float *cent,
		      size_t nlist, size_t np, size_t r0, size_t r1,
		      size_t nt, uint32_t *cell, float *best)
{
	struct best_job bj = {
		.v = v, .cent = cent, .n = n, .d = d, .nlist = nlist,
		.np = np, .b0 = r0 / IVF_RB, .b1 = (r1 + IVF_RB - 1) / IVF_RB,
		.cell = cell, .best = best,
	};
	struct best_job *arg[RELATE_MAX_THREADS];
	size_t t;

	if (r0 >= r1)
		return 0;
	atomic_init(&bj.next, 0);
	for (t = 0; t < nt; t++)
		arg[t] = &bj;
	relate_run_threads(nt, best_worker, arg, sizeof(arg[0]));
	return bj.rc;
}

/* the sample's sort order: by best score, then position (empty cells) */
struct fit {
	float s;
	uint32_t i;
};

static int fit_cmp(const void *a, const void *b)
{
	const struct fit *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * k-means of the targets into cent (nlist x d): see the design notes.
 * Deterministic: a fixed seed, sums in sample order, in double.
 */
static int train(const float *tgt, size_t n, size_t d, size_t nlist,
		 size_t nt, float *cent)
{
	size_t per = env_size("LINKBOT_IVF_SAMPLE", IVF_SAMPLE);
	size_t iters = env_size("LINKBOT_IVF_ITERS", IVF_ITERS);
	size_t s = n < per * nlist ? n : per * nlist;
	uint32_t *perm = malloc(n * sizeof(*perm));
	uint32_t *cell = malloc(s * sizeof(*cell));
	size_t *cnt = malloc(nlist * sizeof(*cnt));
	float *x = malloc(s * d * sizeof(*x)), *best = malloc(s * sizeof(*best));
	double *sum = malloc(nlist * d * sizeof(*sum));
	struct fit *fit = malloc(s * sizeof(*fit));
	uint64_t st = IVF_SEED;
	size_t i, k, c, it;
	int rc = -1;

	if (!perm || !cell || !cnt || !x || !best || !sum || !fit)
		goto out;
	for (i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (i = 0; i < s; i++) {	/* partial Fisher-Yates */
		size_t j = i + relate_rand(&st) % (n - i);
		uint32_t t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (c = 0; c < nlist; c++)
		memcpy(cent + c * d, tgt + perm[c % s] * d, d * sizeof(*cent));
	qsort(perm, s, sizeof(*perm), u32_cmp);	/* memory order */
	for (i = 0; i < s; i++)
		memcpy(x + i * d, tgt + perm[i] * d, d * sizeof(*x));
	for (it = 0; it < iters; it++) {
		size_t e = 0;

		if (best_cells(x, s, d, cent, nlist, 1, 0, s, nt, cell,
			       best) == -1)
			goto out;
		memset(sum, 0, nlist * d * sizeof(*sum));
		memset(cnt, 0, nlist * sizeof(*cnt));
		for (i = 0; i < s; i++) {
			double *sc = sum + cell[i] * d;
			const float *xi = x + i * d;

			cnt[cell[i]]++;
			for (k = 0; k < d; k++)
				sc[k] += xi[k];
		}
		for (i = 0; i < s; i++) {
			fit[i].s = best[i];
			fit[i].i = (uint32_t)i;
		}
		qsort(fit, s, sizeof(*fit), fit_cmp);
		for (c = 0; c < nlist; c++) {
			double q = 0;

			if (cnt[c] == 0 && e < s) {	/* the worst fit */
				for (k = 0; k < d; k++)
					sum[c * d + k] = x[fit[e].i * d + k];
				e++;
			}
			for (k = 0; k < d; k++)
				q += sum[c * d + k] * sum[c * d + k];
			if (q == 0)
				continue;	/* keep the old centroid */
			q = 1 / sqrt(q);
			for (k = 0; k < d; k++)
				cent[c * d + k] = (float)(sum[c * d + k] * q);
		}
	}
	rc = 0;
out:
	free(perm);
	free(cell);
	free(cnt);
	free(x);
	free(best);
	free(sum);
	free(fit);
	return rc;
}

/*
 * The score of a pair, the same whatever else is computed beside it: the
 * sgemm's scores are not (OpenBLAS rounds an element differently with
 * other rows in the call: a shard's rows would differ from the whole
 * run's in the last bits). Eight partial sums in a fixed order.
 */
static float dot_fixed(const float *a, const float *b, size_t d)
{
	float acc[8] = { 0 };
	size_t k, j;

	for (k = 0; k + 8 <= d; k += 8)
		for (j = 0; j < 8; j++)
			acc[j] += a[k + j] * b[k + j];
	for (j = 0; k < d; k++, j++)
		acc[j] += a[k] * b[k];
	return ((acc[0] + acc[4]) + (acc[1] + acc[5])) +
	       ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

/* a row's kept entries (the sgemm's best m + IVF_SLACK) scored again by
 * dot_fixed(), the best m of them into score, target */
static void row_finish(const float *q, const float *tgt, size_t d,
		       const uint32_t *ht, size_t n, size_t m,
		       struct cand *tmp, float *score, uint32_t *target)
{
	size_t i;

	for (i = 0; i < n; i++) {
		tmp[i].t = ht[i];
		tmp[i].s = dot_fixed(q, tgt + (size_t)ht[i] * d, d);
	}
	qsort(tmp, n, sizeof(*tmp), cand_cmp);
	for (i = 0; i < n && i < m; i++) {
		score[i] = tmp[i].s;
		target[i] = tmp[i].t;
	}
}

/* the search (design notes): one work item a chunk of source rows */
struct item {
	uint32_t cell, at, n;	/* rows qrow[at .. at + n) */
};

struct search {
	const float *src, *tgt, *tv;	/* tv: targets in cell order */
	const uint32_t *tid;	/* target of each tv row */
	const size_t *start;	/* cell c: tv rows start[c] .. start[c+1] */
	const uint32_t *probe;	/* np cells a source row */
	const uint32_t *qrow;	/* source rows grouped by first cell */
	const struct item *items;
	size_t n_items, d, m, np, row_begin;
	const long *self;
	int symmetric;
	struct lb_candidates *out;
	atomic_size_t next;
	int rc;
};

static void *search_worker(void *arg)
{
	struct search *sj = *(struct search **)arg;
	size_t d = sj->d, m = sj->m + IVF_SLACK, np = sj->np;
	struct cand *tmp = malloc(m * sizeof(*tmp));
	float *a = malloc(IVF_Q * d * sizeof(*a));
	float *c = malloc(IVF_Q * IVF_TB * sizeof(*c));
	float *hs = malloc(IVF_Q * m * sizeof(*hs));
	uint32_t *ht = malloc(IVF_Q * m * sizeof(*ht));
	uint32_t hn[IVF_Q], *cells = malloc(IVF_Q * np * sizeof(*cells));
	size_t w, sub[IVF_Q];

	if (!a || !c || !hs || !ht || !cells || !tmp) {
		sj->rc = -1;
		goto out;
	}
	while ((w = atomic_fetch_add(&sj->next, 1)) < sj->n_items) {
		const struct item *it = &sj->items[w];
		const uint32_t *rows = sj->qrow + it->at;
		size_t nc = 0, u, q, k, j;

		/* the cells any row of the chunk probes, once each */
		for (q = 0; q < it->n; q++)
			memcpy(cells + q * np, sj->probe + rows[q] * np,
			       np * sizeof(*cells));
		qsort(cells, it->n * np, sizeof(*cells), u32_cmp);
		for (u = 0; u < it->n * np; u++)
			if (u == 0 || cells[u] != cells[nc - 1])
				cells[nc++] = cells[u];
		memset(hn, 0, sizeof(hn));
		for (u = 0; u < nc; u++) {
			uint32_t p = cells[u];
			size_t ns = 0, t0, c0 = sj->start[p];
			size_t c1 = sj->start[p + 1];

			for (q = 0; q < it->n; q++) {
				const uint32_t *pr = sj->probe + rows[q] * np;

				for (k = 0; k < np && pr[k] != p; k++)
					;
				if (k == np)
					continue;
				memcpy(a + ns * d, sj->src + rows[q] * d,
				       d * sizeof(*a));
				sub[ns++] = q;
			}
			for (t0 = c0; t0 < c1; t0 += IVF_TB) {
				size_t tb = c1 - t0 < IVF_TB ? c1 - t0 : IVF_TB;

				cblas_sgemm(CblasRowMajor, CblasNoTrans,
					    CblasTrans, (int)ns, (int)tb,
					    (int)d, 1.0f, a, (int)d,
					    sj->tv + t0 * d, (int)d, 0.0f, c,
					    (int)tb);
				for (q = 0; q < ns; q++) {
					size_t r = sub[q], row = rows[r];
					float *h = hs + r * m;
					uint32_t *hid = ht + r * m;
					const float *cq = c + q * tb;
					long skip = sj->self ? sj->self[row] :
						    sj->symmetric ? (long)row : -1;
					float fl = hn[r] < m ? -INFINITY : h[0];

					for (j = 0; j < tb; j++) {
						uint32_t t = sj->tid[t0 + j];

						if (!(cq[j] >= fl) ||
						    (long)t == skip)
							continue;
						relate_heap_push(h, hid, &hn[r],
								 m, cq[j], t);
						fl = hn[r] < m ? -INFINITY : h[0];
					}
				}
			}
		}
		/* each row's heap, best first, into its output row */
		for (q = 0; q < it->n; q++) {
			size_t r = rows[q] - sj->row_begin;

			row_finish(sj->src + rows[q] * d, sj->tgt, d,
				   ht + q * m, hn[q], sj->m, tmp,
				   sj->out->score + r * sj->m,
				   sj->out->target + r * sj->m);
		}
	}
out:
	free(a);
	free(c);
	free(hs);
	free(ht);
	free(cells);
	free(tmp);
	return NULL;
}

static size_t largest(const size_t *start, size_t nlist)
{
	size_t c, big = 0;

	for (c = 0; c < nlist; c++)
		if (start[c + 1] - start[c] > big)
			big = start[c + 1] - start[c];
	return big;
}

/*
 * LINKBOT_IVF_RECALL=n (benchmarks): recall@M of n rows of the range,
 * evenly spaced, against their exact top-M by brute force (n x N_t x d
 * flops, BLAS's own threads), logged.
 */
static void recall_log(const float *src, const float *tgt, size_t n_tgt,
		       size_t d, const long *self, int symmetric, size_t m,
		       size_t row_begin, size_t row_end,
		       const struct lb_candidates *out, size_t n)
{
	size_t rows = row_end - row_begin, i, j, k, t0, hit = 0, all = 0;
	size_t tb = 4096;
	float *a = NULL, *c = NULL, *hs = NULL;
	uint32_t *ht = NULL, *hn = NULL;

	if (n > rows)
		n = rows;
	a = malloc(n * d * sizeof(*a));
	c = malloc(n * tb * sizeof(*c));
	hs = malloc(n * m * sizeof(*hs));
	ht = malloc(n * m * sizeof(*ht));
	hn = calloc(n, sizeof(*hn));
	if (!a || !c || !hs || !ht || !hn || n == 0)
		goto out;
	for (i = 0; i < n; i++)
		memcpy(a + i * d, src + (row_begin + i * rows / n) * d,
		       d * sizeof(*a));
	for (t0 = 0; t0 < n_tgt; t0 += tb) {
		size_t nb = n_tgt - t0 < tb ? n_tgt - t0 : tb;

		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n,
			    (int)nb, (int)d, 1.0f, a, (int)d, tgt + t0 * d,
			    (int)d, 0.0f, c, (int)nb);
		for (i = 0; i < n; i++) {
			size_t row = row_begin + i * rows / n;
			long skip = self ? self[row] :
				    symmetric ? (long)row : -1;

			for (j = 0; j < nb; j++)
				if ((long)(t0 + j) != skip)
					relate_heap_push(hs + i * m, ht + i * m,
							 &hn[i], m,
							 c[i * nb + j],
							 (uint32_t)(t0 + j));
		}
	}
	for (i = 0; i < n; i++) {
		const uint32_t *got = out->target +
				      (i * rows / n) * m;

		for (j = 0; j < hn[i]; j++) {
			all++;
			for (k = 0; k < m; k++)
				if (got[k] == ht[i * m + j]) {
					hit++;
					break;
				}
		}
	}
	log_info("relate: IVF recall@%zu on %zu rows against brute force: "
		 "%.4f", m, n, all ? (double)hit / all : 1.0);
out:
	free(a);
	free(c);
	free(hs);
	free(ht);
	free(hn);
}

/* LINKBOT_IVF_DUMP=path (benchmarks): the targets' vectors, u64 n, u64 d,
 * then n x d floats (bench/ivf.sh reads them) */
static void dump(const char *path, const float *tgt, size_t n, size_t d)
{
	uint64_t h[2] = { n, d };
	FILE *f = fopen(path, "wb");

	if (f == NULL || fwrite(h, sizeof(h), 1, f) != 1 ||
	    fwrite(tgt, d * sizeof(*tgt), n, f) != n || fclose(f) != 0)
		log_warnx("relate: cannot write '%s'", path);
	else
		log_info("relate: %zu vectors of %zu written to '%s'", n, d,
			 path);
}

int ivf_topm(const float *src, size_t n_src, const float *tgt, size_t n_tgt,
	     size_t d, const long *self, size_t m, size_t row_begin,
	     size_t row_end, int threads, const struct ivf_params *par,
	     struct lb_candidates *out, struct lb_error *err)
{
	struct ivf_params p;
	struct search sj;
	struct search *sarg[RELATE_MAX_THREADS];
	float *cent = NULL, *tv = NULL;
	uint32_t *probe = NULL, *tcell = NULL, *tid = NULL, *qrow = NULL;
	size_t *start = NULL, *qstart = NULL;
	struct item *items = NULL;
	size_t rows, nt, i, c, n_items = 0;
	int symmetric = src == tgt && n_src == n_tgt, rc = -1;
	int blas_threads = openblas_get_num_threads();

	rc = topm_begin(n_src, n_tgt, d, m, &row_begin, &row_end, threads,
			&nt, out, err);
	if (rc != 1)
		return rc;
	rc = -1;
	rows = row_end - row_begin;
	if (par == NULL && getenv("LINKBOT_IVF_DUMP") != NULL)
		dump(getenv("LINKBOT_IVF_DUMP"), tgt, n_tgt, d);
	if (par == NULL)
		ivf_params_default(n_tgt, &p);
	else
		p = *par;
	if (p.nlist < 1)
		p.nlist = 1;
	if (p.nlist > n_tgt)
		p.nlist = n_tgt;
	if (p.nprobe < 1)
		p.nprobe = 1;
	if (p.nprobe > p.nlist)
		p.nprobe = p.nlist;
	if (p.nprobe > IVF_MAXPROBE)
		p.nprobe = IVF_MAXPROBE;

	cent = malloc(p.nlist * d * sizeof(*cent));
	tcell = malloc(n_tgt * sizeof(*tcell));
	probe = malloc(n_src * p.nprobe * sizeof(*probe));
	start = calloc(p.nlist + 2, sizeof(*start));
	qstart = calloc(p.nlist + 2, sizeof(*qstart));
	tid = malloc(n_tgt * sizeof(*tid));
	qrow = malloc(rows * sizeof(*qrow));
	tv = malloc(n_tgt * d * sizeof(*tv));
	items = malloc((rows / IVF_Q + p.nlist + 1) * sizeof(*items));
	if (!cent || !tcell || !probe || !start || !qstart || !tid || !qrow ||
	    !tv || !items)
		goto nomem;

	openblas_set_num_threads(1);	/* the parallelism is ours */
	if (train(tgt, n_tgt, d, p.nlist, nt, cent) == -1)
		goto nomem;
	if (symmetric) {
		/* one pass: every row's probes, its first cell its own (the
		 * same block grid, so a shard gets the same lists) */
		if (best_cells(src, n_src, d, cent, p.nlist, p.nprobe, 0,
			       n_src, nt, probe, NULL) == -1)
			goto nomem;
		for (i = 0; i < n_tgt; i++)
			tcell[i] = probe[i * p.nprobe];
	} else if (best_cells(tgt, n_tgt, d, cent, p.nlist, 1, 0, n_tgt, nt,
			      tcell, NULL) == -1 ||
		   best_cells(src, n_src, d, cent, p.nlist, p.nprobe,
			      row_begin, row_end, nt, probe, NULL) == -1)
		goto nomem;

	/* targets in cell order (counting sort: index order in a cell) */
	for (i = 0; i < n_tgt; i++)
		start[tcell[i] + 1]++;
	for (c = 0; c < p.nlist; c++)
		start[c + 1] += start[c];
	for (i = 0; i < n_tgt; i++) {
		size_t at = start[tcell[i]]++;

		tid[at] = (uint32_t)i;
		memcpy(tv + at * d, tgt + i * d, d * sizeof(*tv));
	}
	for (c = p.nlist; c > 0; c--)
		start[c] = start[c - 1];
	start[0] = 0;

	/* source rows in range by first cell, chunks of IVF_Q */
	for (i = row_begin; i < row_end; i++)
		qstart[probe[i * p.nprobe] + 1]++;
	for (c = 0; c < p.nlist; c++)
		qstart[c + 1] += qstart[c];
	for (c = 0; c < p.nlist; c++) {
		size_t a;

		for (a = qstart[c]; a < qstart[c + 1]; a += IVF_Q) {
			items[n_items].cell = (uint32_t)c;
			items[n_items].at = (uint32_t)a;
			items[n_items].n = (uint32_t)(qstart[c + 1] - a < IVF_Q ?
						      qstart[c + 1] - a : IVF_Q);
			n_items++;
		}
	}
	for (i = row_begin; i < row_end; i++)
		qrow[qstart[probe[i * p.nprobe]]++] = (uint32_t)i;

	memset(&sj, 0, sizeof(sj));
	sj.src = src;
	sj.tgt = tgt;
	sj.tv = tv;
	sj.tid = tid;
	sj.start = start;
	sj.probe = probe;
	sj.qrow = qrow;
	sj.items = items;
	sj.n_items = n_items;
	sj.d = d;
	sj.m = m;
	sj.np = p.nprobe;
	sj.row_begin = row_begin;
	sj.self = self;
	sj.symmetric = symmetric;
	sj.out = out;
	atomic_init(&sj.next, 0);
	for (i = 0; i < nt; i++)
		sarg[i] = &sj;
	relate_run_threads(nt, search_worker, sarg, sizeof(sarg[0]));
	if (sj.rc == -1)
		goto nomem;
	openblas_set_num_threads(blas_threads);
	if (getenv("LINKBOT_IVF_RECALL") != NULL)
		recall_log(src, tgt, n_tgt, d, self, symmetric, m, row_begin,
			   row_end, out, env_size("LINKBOT_IVF_RECALL", 1000));
	log_info("relate: approximate top-%zu (IVF, %zu cells, %zu probes, "
		  "largest cell %zu)", m, p.nlist, p.nprobe, largest(start,
		  p.nlist));
	rc = 0;
	goto out;
nomem:
	lb_error_set(err, LB_ENOMEM, "approximate top-M for %zu rows", rows);
	lb_candidates_release(out);
out:
	openblas_set_num_threads(blas_threads);
	free(cent);
	free(tcell);
	free(probe);
	free(start);
	free(qstart);
	free(tid);
	free(qrow);
	free(tv);
	free(items);
	return rc;
}
