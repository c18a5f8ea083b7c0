/*
 * extend.c - candidate lists extended for the pages that no list reaches.
 *
 * Design notes.
 *
 * The problem: the assignment (assign/) gives every target at least k
 * incoming links, choosing among the top-M candidates of each source. A
 * page that few sources list among their M best (an "anti-hub": its
 * nearest pages all have nearer pages of their own) can only get its k
 * links from those few sources or, when they are not enough, from random
 * completion: on linux-doc (2,417 pages, M = 32, k = 8) about 150 of the
 * published links were random for that reason alone (bench/RESULTS.md).
 *
 * The fix: such a target t is written into the lists of the sources it
 * is nearest to, so that the solver can give it related sources. Cosine
 * is symmetric, so t's own row (its top M targets) is also the list of
 * the sources nearest to it, best first, with the score of each pair:
 * no vector and no new product is needed, only the candidates, which is
 * why this works on the merged shards too (relate_import_tsv()).
 *
 * Invariants:
 * - reach(t) = the number of lists holding t. A target is short when
 *   reach(t) < R = M / 2 (16 of 32: twice the usual k = 8, the room the
 *   solver needs to choose).
 * - Short targets are taken by reach, then index. For each, the sources
 *   of its row, best first: when t is not in the source's list, the
 *   source's worst entry within its second half (positions M/2 .. M-1),
 *   scanning from the end, whose target keeps reach > R after losing it,
 *   is removed and t is inserted at its place by score (so the list stays
 *   best first); stop when reach(t) = R.
 * - A source's first M/2 candidates are never touched, no target falls
 *   below R by losing an entry, and a short target never rises above R,
 *   so no entry of an earlier step is undone and a second call changes
 *   nothing (idempotent: a shard of one language group extended in its
 *   job and the merge extending again give the same lists).
 * - Only pages that are sources have a row: in a cross-set endpoint a
 *   target that is no source (self) is not extended; a source is found
 *   from its target index through self.
 * - Deterministic: one order, no randomness, no threads.
 *
 * Cost: O(N M) to count and O(short x M x M) to insert; 100,000 pages,
 * M = 32: 0.17 s under load, 0.4 % of the top-M (bench/RESULTS.md).
 */
#include <stdlib.h>
#include <string.h>

#include "linkbot/relate.h"

struct short_tgt {
	uint32_t reach;
	uint32_t t;
};

static int short_cmp(const void *a, const void *b)
{
	const struct short_tgt *x = a, *y = b;

	if (x->reach != y->reach)
		return x->reach < y->reach ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

/* Puts t (score sc) into row r of c, evicting an entry of its second half
 * whose target stays above the reach floor; 1 if done, else 0. */
static int insert(struct lb_candidates *c, uint32_t *reach, uint32_t floor,
		  size_t r, uint32_t t, float sc)
{
	uint32_t *tg = c->target + r * c->m;
	float *s = c->score + r * c->m;
	size_t m = c->m, j, p;

	for (j = 0; j < m; j++)
		if (tg[j] == t)
			return 0;
	if (s[m / 2 - 1] < sc && tg[m / 2 - 1] != LB_NO_TARGET)
		return 0;	/* would land in the first half (a near-tie) */
	for (p = m; p-- > m / 2;)
		if (tg[p] != LB_NO_TARGET && reach[tg[p]] > floor)
			break;
	if (p < m / 2 || p >= m)
		return 0;
	reach[tg[p]]--;
	memmove(tg + p, tg + p + 1, (m - 1 - p) * sizeof(*tg));
	memmove(s + p, s + p + 1, (m - 1 - p) * sizeof(*s));
	/* best first: after the last entry scoring at least sc (the
	 * padding, if any, stays at the end) */
	for (j = m - 1; j > 0 && (tg[j - 1] == LB_NO_TARGET ||
				  s[j - 1] < sc); j--) {
		tg[j] = tg[j - 1];
		s[j] = s[j - 1];
	}
	tg[j] = t;
	s[j] = sc;
	reach[t]++;
	return 1;
}

int relate_extend(struct lb_candidates *c, const struct lb_relate_input *in,
		  struct lb_error *err)
{
	size_t m = c->m, n_tgt = in->n_tgt, i, j, n_short = 0;
	uint32_t floor = (uint32_t)(m / 2);
	uint32_t *reach = NULL;
	long *row_of = NULL;	/* target -> its source row, or -1 */
	long *src_of = NULL;	/* target -> the source it is, or -1 */
	struct short_tgt *sh = NULL;
	int same = in->n_src == in->n_tgt, rc = -1;

	if (c->n_src != in->n_src)
		return lb_error_set(err, LB_EUSAGE,
				    "extend: %zu rows for %zu sources",
				    c->n_src, in->n_src);
	if (m < 4 || n_tgt == 0)
		return 0;
	for (i = 0; same && i < in->n_src; i++)
		same = in->src[i] == in->tgt[i];
	reach = calloc(n_tgt, sizeof(*reach));
	row_of = malloc(n_tgt * sizeof(*row_of));
	sh = malloc(n_tgt * sizeof(*sh));
	if (reach == NULL || row_of == NULL || sh == NULL) {
		lb_error_set(err, LB_ENOMEM, "extend: %zu targets", n_tgt);
		goto out;
	}
	src_of = row_of;	/* one map: the row of t is the source t is */
	for (i = 0; i < n_tgt; i++)
		row_of[i] = same ? (long)i : -1;
	for (i = 0; !same && in->self && i < in->n_src; i++)
		if (in->self[i] >= 0 && (size_t)in->self[i] < n_tgt &&
		    row_of[in->self[i]] < 0)
			row_of[in->self[i]] = (long)i;
	for (i = 0; i < c->n_src * m; i++)
		if (c->target[i] != LB_NO_TARGET && c->target[i] < n_tgt)
			reach[c->target[i]]++;
	for (i = 0; i < n_tgt; i++)
		if (reach[i] < floor && row_of[i] >= 0) {
			sh[n_short].reach = reach[i];
			sh[n_short++].t = (uint32_t)i;
		}
	qsort(sh, n_short, sizeof(*sh), short_cmp);
	for (i = 0; i < n_short; i++) {
		uint32_t t = sh[i].t;
		size_t r = (size_t)row_of[t];

		for (j = 0; j < m && reach[t] < floor; j++) {
			uint32_t u = c->target[r * m + j];

			if (u == LB_NO_TARGET || u >= n_tgt || src_of[u] < 0)
				continue;
			insert(c, reach, floor, (size_t)src_of[u], t,
			       c->score[r * m + j]);
		}
	}
	rc = 0;
out:
	free(reach);
	free(row_of);
	free(sh);
	return rc;
}
