/*
 * rerank.c - the dense candidates re-ranked by a hybrid score: the LSA
 * cosine mixed with the sparse cosine of the weighted terms it was
 * computed from (docs/relate.md, "hybrid re-ranking").
 *
 * Design notes. The LSA (after the smoothing) finds pages on one topic
 * that share few words; the sparse cosine keeps what the projection blurs:
 * exact rare terms (a function name, a setting, an error message) and the
 * link-graph terms of the two pages themselves. relate_candidates() asks
 * the exact (or IVF) top-M for twice the candidates it returns, scores
 * each of them (1 - a) dense + a sparse, and keeps the best M. Only the
 * dense top 2M is re-scored: a pair no LSA list holds is not found by its
 * words alone (that is a sparse search over all pairs, which the LSA is
 * there to avoid). Issue 20, round 5 (bench/RESULTS.md): a = 0.5 over the
 * top 2M against the dense order alone, tuning half, published
 * precision@8: python 0.5404 -> 0.5451, postgresql 0.7390 -> 0.7439,
 * scipy 0.9816 -> 0.9817; a = 1 (the sparse cosine alone) lost on all
 * three, the top M instead of 2M lost 0.001 on scipy.
 *
 * Each row is one unit of work, scored in double in a fixed order and
 * sorted under the candidates' total order (score, then the lower
 * target), so the result depends neither on the thread count nor on the
 * row range (a shard re-ranks its rows exactly as the single build).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relate_int.h"

double csr_dot(const struct csr *x, size_t a, size_t b)
{
	size_t p = x->ptr[a], pe = x->ptr[a + 1];
	size_t q = x->ptr[b], qe = x->ptr[b + 1];
	double s = 0;

	while (p < pe && q < qe) {
		if (x->col[p] < x->col[q])
			p++;
		else if (x->col[p] > x->col[q])
			q++;
		else
			s += (double)x->val[p++] * x->val[q++];
	}
	return s;
}

float rerank_score(float dense, double sparse, double a)
{
	return (float)((1 - a) * dense + a * sparse);
}

/*
 * The rows of x as dense rows over the columns some row uses (in column
 * order), when that is at most SPARSE_DENSE_FILL times the entries: then
 * a pair's sparse dot is dot_dbl() of its two dense rows (relate_dots(),
 * four pairs a step), the same bits: the common columns' products in
 * increasing column order, the others' products +0, which leave a sum of
 * non-negative products as it is (so only when no weight is negative).
 * Sites of a small vocabulary (the night's generated ones: ~50 terms a
 * site in use) score their pairs several times faster so; a site of
 * thousands of terms keeps the scattered rows.
 */
#define SPARSE_DENSE_FILL 4

static int memo_dense(struct sparse_memo *m, const struct csr *x)
{
	size_t n = x->n_rows, nnz = x->ptr[n], i, p, v = 0;
	uint32_t *map;

	if (getenv("LINKBOT_NO_SPARSE_DENSE"))
		return 0;
	for (p = 0; p < nnz; p++)
		if (!(x->val[p] >= 0))
			return 0;
	if ((map = malloc((x->n_cols + 1) * sizeof(*map))) == NULL)
		return -1;
	for (i = 0; i < x->n_cols; i++)
		map[i] = 0;
	for (p = 0; p < nnz; p++)
		map[x->col[p]] = 1;
	for (i = 0; i < x->n_cols; i++)
		map[i] = map[i] ? (uint32_t)v++ : UINT32_MAX;
	if (v == 0 || n * v > SPARSE_DENSE_FILL * nnz) {
		free(map);
		return 0;
	}
	if ((m->xd = calloc(n * v, sizeof(*m->xd))) == NULL) {
		free(map);
		return -1;
	}
	for (i = 0; i < n; i++)
		for (p = x->ptr[i]; p < x->ptr[i + 1]; p++)
			m->xd[i * v + map[x->col[p]]] = x->val[p];
	m->vd = v;
	m->wide = relate_dots_wide();
	free(map);
	return 0;
}

/*
 * The sparse dots of a small site, each pair once (design notes in
 * relate_int.h, "sparse memo"). Pair (a, b), a > b, at a (a - 1) / 2 + b.
 */
int sparse_memo_init(struct sparse_memo *m, const struct csr *x)
{
	size_t n = x->n_rows, pairs = n * (n ? n - 1 : 0) / 2;

	memset(m, 0, sizeof(*m));
	m->x = x;
	if (n > SPARSE_MEMO_MAX || n < 2 || getenv("LINKBOT_NO_SPARSE_MEMO"))
		return 0;	/* no memo: every dot computed */
	m->v = malloc(pairs * sizeof(*m->v));
	m->have = calloc(pairs, 1);
	if (m->v == NULL || m->have == NULL || memo_dense(m, x) == -1) {
		sparse_memo_release(m);
		m->x = x;
		return -1;
	}
	m->n = n;
	return 0;
}

void sparse_memo_release(struct sparse_memo *m)
{
	free(m->v);
	free(m->have);
	free(m->xd);
	memset(m, 0, sizeof(*m));
}

/*
 * Row r of x against row t: the sum over t's entries of acc[col], acc
 * holding row r scattered (zero elsewhere). The products and their order
 * (increasing column) are csr_dot()'s, so the result is the same bits;
 * the lookups have no branch to mispredict (csr_dot()'s merge of the two
 * rows took 2.4 times the CPU on synthetic rows of 285 terms; adding the
 * zeros of the terms the source has not changes no bit: weights are
 * positive).
 */
static double scattered_dot(const struct csr *x, const float *acc, size_t t)
{
	size_t q;
	double s = 0;

	for (q = x->ptr[t]; q < x->ptr[t + 1]; q++)
		s += (double)acc[x->col[q]] * x->val[q];
	return s;
}

double sparse_memo_dot(struct sparse_memo *m, const float *acc, size_t r,
		       size_t t)
{
	size_t k;

	if (m->v == NULL || r == t)
		return scattered_dot(m->x, acc, t);
	k = r > t ? r * (r - 1) / 2 + t : t * (t - 1) / 2 + r;
	if (!m->have[k]) {
		m->v[k] = scattered_dot(m->x, acc, t);
		m->have[k] = 1;
	}
	return m->v[k];
}

void sparse_memo_dots(struct sparse_memo *m, const float *acc, size_t r,
		      const uint32_t *t, size_t n, double *out)
{
	const float *b[SPARSE_MEMO_BATCH];
	double s[SPARSE_MEMO_BATCH];
	size_t at[SPARSE_MEMO_BATCH], key[SPARSE_MEMO_BATCH], j, c = 0, k;

	for (j = 0; j < n; j++) {
		k = SIZE_MAX;	/* not kept */
		if (m->v != NULL && r != t[j]) {
			k = r > t[j] ? r * (r - 1) / 2 + t[j] :
				       (size_t)t[j] * (t[j] - 1) / 2 + r;
			if (m->have[k]) {
				out[j] = m->v[k];
				continue;
			}
		}
		if (m->xd == NULL) {
			out[j] = scattered_dot(m->x, acc, t[j]);
			if (k != SIZE_MAX) {
				m->v[k] = out[j];
				m->have[k] = 1;
			}
			continue;
		}
		b[c] = m->xd + (size_t)t[j] * m->vd;
		key[c] = k;
		at[c++] = j;
	}
	if (c == 0)
		return;
	relate_dots(m->xd + r * m->vd, b, c, m->vd, m->wide, s);
	for (j = 0; j < c; j++) {
		out[at[j]] = s[j];
		if (key[j] != SIZE_MAX) {
			m->v[key[j]] = s[j];
			m->have[key[j]] = 1;
		}
	}
}

struct rr_work {
	const struct lb_candidates *in;
	struct lb_candidates *out;
	const struct csr *x;
	struct sparse_memo memo;	/* a row's pairs; none (v NULL) on
					   several threads */
	const size_t *srow;
	size_t rb, r0, r1;
	double a;
	int failed;
};

static void *rerank_rows(void *arg)
{
	struct rr_work *w = arg;
	const struct csr *x = w->x;
	size_t m0 = w->in->m, m = w->out->m, i, j, n, p;
	struct cand *v = malloc((m0 + 1) * sizeof(*v));
	float *acc = calloc(x->n_cols + 1, sizeof(*acc));

	if (v == NULL || acc == NULL) {
		w->failed = 1;
		free(v);
		free(acc);
		return NULL;
	}
	for (i = w->r0; i < w->r1; i++) {
		const uint32_t *it = w->in->target + i * m0;
		const float *is = w->in->score + i * m0;
		size_t r = w->srow[w->rb + i];

		for (p = x->ptr[r]; p < x->ptr[r + 1]; p++)
			acc[x->col[p]] = x->val[p];
		for (j = 0, n = 0; j < m0; j++) {
			if (it[j] == LB_NO_TARGET)
				continue;
			v[n].t = it[j];
			v[n++].s = is[j];	/* the dense score, for now */
		}
		for (j = 0; j < n; j += SPARSE_MEMO_BATCH) {
			size_t c = n - j < SPARSE_MEMO_BATCH ?
				   n - j : SPARSE_MEMO_BATCH, q;
			uint32_t tg[SPARSE_MEMO_BATCH];
			double sp[SPARSE_MEMO_BATCH];

			for (q = 0; q < c; q++)
				tg[q] = v[j + q].t;
			sparse_memo_dots(&w->memo, acc, r, tg, c, sp);
			for (q = 0; q < c; q++)
				v[j + q].s = rerank_score(v[j + q].s, sp[q],
							  w->a);
		}
		for (p = x->ptr[r]; p < x->ptr[r + 1]; p++)
			acc[x->col[p]] = 0;
		cand_order(v, n);
		for (j = 0; j < n && j < m; j++) {
			w->out->target[i * m + j] = v[j].t;
			w->out->score[i * m + j] = v[j].s;
		}
	}
	free(v);
	free(acc);
	return NULL;
}

int rerank_hybrid(struct lb_candidates *c, const struct csr *x,
		  const size_t *srow, size_t rb, size_t m, double a,
		  int threads, struct sparse_memo *memo,
		  struct lb_error *err)
{
	struct lb_candidates o;
	struct rr_work w[RELATE_MAX_THREADS];
	size_t nt = threads > 0 ? (size_t)threads : 1, t;
	int failed = 0;

	if (nt > RELATE_MAX_THREADS)
		nt = RELATE_MAX_THREADS;
	if (nt > c->n_src / 256 + 1)
		nt = c->n_src / 256 + 1;	/* small sites: one thread */
	if (lb_candidates_init(&o, c->n_src, m) == -1)
		return lb_error_set(err, LB_ENOMEM, "re-ranked candidates");
	o.random_floor = c->random_floor;
	for (t = 0; t < nt; t++)
		w[t] = (struct rr_work){
			.in = c, .out = &o, .x = x, .srow = srow, .rb = rb,
			.r0 = c->n_src * t / nt,
			.r1 = c->n_src * (t + 1) / nt, .a = a,
			/* the memo is one thread's */
			.memo = nt == 1 && memo && memo->x == x ? *memo :
				(struct sparse_memo){ .x = x },
		};
	relate_run_threads(nt, rerank_rows, w, sizeof(*w));
	for (t = 0; t < nt; t++)
		failed |= w[t].failed;
	if (failed) {
		lb_candidates_release(&o);
		return lb_error_set(err, LB_ENOMEM, "re-ranked candidates");
	}
	lb_candidates_release(c);
	*c = o;
	return 0;
}
