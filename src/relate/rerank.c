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
	if (m->v == NULL || m->have == NULL) {
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
			v[n++].s = rerank_score(is[j],
						sparse_memo_dot(&w->memo, acc,
								r, it[j]),
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
