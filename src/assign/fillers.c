/*
 * fillers.c - fillers published as random links; see fillers.h.
 *
 * Design notes
 *
 * Problem: the solver's links that score at or below random_floor are
 * not related; SPEC 1.3 says a page without enough related pages gets
 * uniform random links. The solver's guarantee (every target at least k
 * links, at most max(max_in, k)) must survive.
 *
 * Phases, over the links in row order:
 *   1. in-degrees of every target, over all links;
 *   2. each filler whose target has more than k links: a uniform random
 *      target u among the allowed ones (u not the source's own page, not
 *      linked by the source, same language group, under the cap), by
 *      rejection with the seeded generator, then a scan from a random
 *      start when 64 draws failed (a crowded row); the old target loses
 *      one link and still has at least k;
 *   3. the other fillers (each one holds its target at k or below): a
 *      Fisher-Yates pass over them swaps targets pairwise when both links
 *      stay valid (no self link, no duplicate in either row, same
 *      language group); each target keeps its in-degree, so the k
 *      guarantee and the cap hold exactly;
 *   4. every filler becomes random, score 0; rows are reordered: related
 *      links (by decreasing score, as the solver left them), then random.
 *
 * Complexity: O(links * L) for the duplicate checks, O(n_tgt) memory.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/fillers.h"

#define DRAWS 64

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* 1 if row s already links t (the slot `skip` left out) */
static int row_has(const struct lb_assignment *a, size_t s, uint32_t t,
		   size_t skip)
{
	size_t j;

	for (j = 0; j < a->l; j++) {
		uint32_t x = a->links[s * a->l + j].target;

		if (x == LB_NO_TARGET)
			break;
		if (j != skip && x == t)
			return 1;
	}
	return 0;
}

/* may source s link target t (self, language) */
static int allowed(const struct lb_fillers_params *p, size_t s, uint32_t t)
{
	if (p->self && p->self[s] >= 0 && (uint32_t)p->self[s] == t)
		return 0;
	if (p->lang_src && p->lang_tgt && p->lang_src[s] != p->lang_tgt[t])
		return 0;
	return 1;
}

/* a uniform random target for slot j of row s, or LB_NO_TARGET */
static uint32_t draw(const struct lb_assignment *a,
		     const struct lb_fillers_params *p, const size_t *in,
		     size_t cap, size_t s, uint64_t *st)
{
	size_t i, n = p->n_tgt, start;

	for (i = 0; i < DRAWS; i++) {
		uint32_t u = (uint32_t)(rnd(st) % n);

		if (allowed(p, s, u) && (cap == 0 || in[u] < cap) &&
		    !row_has(a, s, u, SIZE_MAX))
			return u;
	}
	start = (size_t)(rnd(st) % n);
	for (i = 0; i < n; i++) {
		uint32_t u = (uint32_t)((start + i) % n);

		if (allowed(p, s, u) && (cap == 0 || in[u] < cap) &&
		    !row_has(a, s, u, SIZE_MAX))
			return u;
	}
	return LB_NO_TARGET;
}

/* row s: related links first (their order kept), then random */
static void row_order(struct lb_assignment *a, size_t s)
{
	struct lb_link tmp[256], *row = a->links + s * a->l;
	size_t j, k = 0, n;

	for (n = 0; n < a->l && row[n].target != LB_NO_TARGET; n++)
		;
	if (n > 256)
		return;	/* L is at most 100 (config): never here */
	for (j = 0; j < n; j++)
		if (row[j].type == LB_LINK_RELATED)
			tmp[k++] = row[j];
	for (j = 0; j < n; j++)
		if (row[j].type != LB_LINK_RELATED)
			tmp[k++] = row[j];
	memcpy(row, tmp, n * sizeof(*row));
}

int fillers_apply(struct lb_assignment *a, const struct lb_fillers_params *p,
		  struct lb_fillers_stats *st, struct lb_error *err)
{
	size_t *in = NULL, *held = NULL, nheld = 0, s, j, i, cap;
	unsigned char *touched = NULL;
	uint64_t seed = p->seed ^ 0xf111e25ULL;
	int rc = -1;

	memset(st, 0, sizeof(*st));
	if (!(p->floor > -INFINITY) || a->n_src == 0 || p->n_tgt == 0)
		return 0;
	cap = p->max_in == 0 ? 0 :
	      p->max_in < p->min_in ? p->min_in : p->max_in;
	in = calloc(p->n_tgt, sizeof(*in));
	held = malloc((a->n_src * a->l + 1) * sizeof(*held));
	touched = calloc(a->n_src, 1);
	if (in == NULL || held == NULL || touched == NULL) {
		lb_error_set(err, LB_ENOMEM, "fillers of %zu pages", a->n_src);
		goto out;
	}
	for (i = 0; i < a->n_src * a->l; i++)
		if (a->links[i].target != LB_NO_TARGET) {
			if (a->links[i].target >= p->n_tgt) {
				lb_error_set(err, LB_EINVALID,
					     "fillers: target %u of %zu",
					     (unsigned)a->links[i].target,
					     p->n_tgt);
				goto out;
			}
			in[a->links[i].target]++;
		}

	/* phase 2: fillers on targets with room to spare get a new one */
	for (s = 0; s < a->n_src; s++)
		for (j = 0; j < a->l; j++) {
			struct lb_link *lk = &a->links[s * a->l + j];
			uint32_t u;

			if (lk->target == LB_NO_TARGET)
				break;
			if (lk->type != LB_LINK_RELATED ||
			    !(lk->score <= p->floor))
				continue;
			st->fillers++;
			touched[s] = 1;
			if (in[lk->target] <= p->min_in ||
			    (u = draw(a, p, in, cap, s, &seed)) ==
			    LB_NO_TARGET) {
				held[nheld++] = s * a->l + j;
			} else {
				in[lk->target]--;
				in[u]++;
				lk->target = u;
				st->redrawn++;
			}
			lk->type = LB_LINK_RANDOM;
			lk->score = 0;
		}

	/* phase 3: the others hold their targets at k: shuffle the targets
	 * among them, each swap keeping both links valid */
	for (i = nheld; i > 1; i--) {
		size_t x = held[i - 1], y = held[rnd(&seed) % i];
		size_t sx = x / a->l, sy = y / a->l;
		uint32_t tx = a->links[x].target, ty = a->links[y].target;

		if (x == y || tx == ty || !allowed(p, sx, ty) ||
		    !allowed(p, sy, tx) || row_has(a, sx, ty, x % a->l) ||
		    row_has(a, sy, tx, y % a->l))
			continue;
		a->links[x].target = ty;
		a->links[y].target = tx;
	}
	st->shuffled = nheld;

	for (s = 0; s < a->n_src; s++)
		if (touched[s])
			row_order(a, s);
	rc = 0;
out:
	free(in);
	free(held);
	free(touched);
	return rc;
}
