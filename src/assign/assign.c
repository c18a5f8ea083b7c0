/*
 * assign.c - stage 4: L links per source, every target >= k in, maximal
 * total relatedness. See assign.h for the contract.
 *
 * DESIGN NOTES
 *
 * The problem. Sources S, targets T, candidate arcs (s, t, w) from relate/.
 * Choose for each source exactly L_s links, each target receiving between
 * d_t and c_t links, maximising the sum of w over chosen links. Random
 * completion adds, for every source, arcs to every target of its language
 * group at weight R = LB_ASSIGN_RANDOM_WEIGHT (below any cosine). This is
 * a bipartite b-matching with lower bounds, i.e. a min-cost flow:
 *
 *   s --(cap 1, cost -w)--> t --(lower d_t, upper c_t, cost 0)--> Y
 *   supply L_s at each source s, demand sum(L_s) at the sink Y.
 *
 * The lower bound is moved into the node balances: t demands d_t and the
 * arc t->Y carries f_tY = in_t - d_t in [0, c_t - d_t]. We never store
 * f_tY: it is clamp(in_t - d_t), so a target is in deficit when
 * in_t < d_t and in excess when in_t > c_t, and Y's excess is
 * sum(deficit) - sum(excess).
 *
 * Random arcs. For small instances (pairs <= dense_limit) every allowed
 * (source, target) pair without a candidate becomes an explicit arc of
 * weight R ("dense mode"): the model is then exactly the problem above.
 * For large ones (hub mode), one hub node h_g per language group stands for
 * them: s --(cap L_s, cost -R)--> h_g --(cost 0)--> t. The hub relaxes
 * "no duplicate, no self link" for random links only; after solving, the
 * solver keeps per target only the number of random links it needs to
 * reach d_t, spreads the rest uniformly at random (SPEC 1.3), and matches
 * random slots to sources avoiding self and duplicates (swap repair). A
 * matching that succeeds realises the relaxation's optimum, which is then
 * optimal for the exact model too (the relaxation is never worse); with
 * thousands of targets it always succeeds; failures are counted
 * (stats->unrealized) and clear stats->certified.
 *
 * Algorithm: successive shortest paths (SSP) from an optimal pseudo-flow.
 *   Phase 0 (greedy): every source takes its top-L_s arcs. This is the
 *     optimum without the lower bounds, and potentials p that prove it
 *     exist in closed form: p(t) = p(Y) = 0, p(s) between the weight of
 *     its best unused and its worst used arc, p(h) tight against the
 *     sources. Invariant from here on: every residual arc (u, v) has
 *     reduced cost rc = cost + p(u) - p(v) >= 0 (reduced-cost optimality
 *     of the current pseudo-flow for the current imbalances).
 *   Phase 1 (caps): a target over its cap c_t is an excess node; a forward
 *     Dijkstra from it to Y (which then lacks flow) moves one link away.
 *   Phase 2 (levels): for j = 1..k the lower bound is d_t = min(j, reach_t)
 *     where reach_t counts the sources that may link t at all. Each unit of
 *     deficit is removed by a backward Dijkstra (on reduced costs) from the
 *     deficit target to the nearest excess node (Y): the path is a chain of
 *     link moves "source s drops t_i and takes t_{i+1}". Dijkstra stops at
 *     the first excess node; settled nodes get p(v) += E - e(v), which
 *     keeps every rc >= 0 and makes the path tight (classic SSP with
 *     early termination, no O(n) potential update). Raising d_t only
 *     removes residual arcs, so the invariant survives a level change.
 *     A deficit that reaches no excess node proves level j infeasible
 *     (cut argument): the level's snapshot is restored and k_used = j - 1,
 *     the best uniform k that holds ("as close as possible").
 *   Certificate: at the end every residual arc is checked for rc >= 0 and
 *     every balance for zero; that is LP duality's proof of optimality for
 *     the integer costs, O(arcs). stats->certified reports it.
 *
 * Costs are integers: round((score + bonus) * 2^24), so the optimum is
 * exact for scores rounded to 2^-24 (floats in [-1, 1] carry 24 bits).
 *
 * Complexity: building O(n M), greedy O(n M), each augmentation a Dijkstra
 * that stops early, typically touching a small neighbourhood of the
 * deficit target; worst case O(D (m + n) log n) for total deficit D.
 * Memory: about 17 bytes per arc plus ~60 bytes per node.
 *
 * Stability: links of the previous run get stability_bonus added to their
 * weight (a tie-breaker when small), and random links of the previous run
 * are kept when the slots allow it.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linkbot/assign.h"
#include "linkbot/log.h"

#define SCALE 16777216.0	/* 2^24 */
#define CAP_INF 0x3fffffffu
#define DENSE_LIMIT_DEFAULT ((size_t)1 << 20)
#define NONE UINT32_MAX

/* How a node was reached: an arc index, or one of these. */
#define VIA_HUB_T (UINT32_MAX - 1)	/* hub <-> target */
#define VIA_SRC_HUB (UINT32_MAX - 2)	/* source <-> hub */
#define VIA_Y (UINT32_MAX - 3)		/* target <-> Y */

struct heap_item {
	int64_t key;
	uint32_t node;
};

struct solver {
	size_t ns, nt, ng, nn;
	uint32_t y;		/* the sink's node id */
	int hub;		/* hub mode */
	int64_t cost_r;		/* cost of a random arc: -W(R) > 0 */

	/* arcs by source (CSR), sorted by cost ascending per source */
	size_t na;
	size_t *off;
	uint32_t *tg;
	int32_t *cost;
	uint8_t *fl;		/* bit 0: flow, bit 1: chosen by greedy */
	uint8_t *rnd;		/* dense random arc */
	float *score;
	/* arcs by target */
	size_t *roff;
	uint32_t *rarc, *rsrc;

	/* per source */
	uint32_t *ls, *r, *rgreedy, *gs;
	/* per target */
	uint32_t *in, *q, *reach, *gt;
	uint32_t cap;		/* c_t, the same for all targets */
	uint32_t level;		/* d_t = min(level, reach_t) */
	/* per group: its sources and targets */
	size_t *gsoff, *gtoff;
	uint32_t *gsrc, *gtgt;

	int64_t *p;
	/* search state */
	int64_t *dist;
	uint32_t *seen, *done, epoch;
	uint32_t *nxt, *via;
	uint32_t *settled;
	size_t n_settled;
	struct heap_item *heap;
	size_t hn, hcap;

	size_t tot_def, tot_exc;
	size_t augmentations;
	uint64_t rng;
};

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t rng_below(uint64_t *s, size_t n)
{
	return n ? (size_t)(rng_next(s) % n) : 0;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- node helpers ---- */

static inline uint32_t tnode(const struct solver *S, uint32_t t)
{
	return (uint32_t)S->ns + t;
}

static inline uint32_t hnode(const struct solver *S, uint32_t g)
{
	return (uint32_t)(S->ns + S->nt) + g;
}

static inline int is_src(const struct solver *S, uint32_t v)
{
	return v < S->ns;
}

static inline int is_tgt(const struct solver *S, uint32_t v)
{
	return v >= S->ns && v < S->ns + S->nt;
}

static inline int is_hub(const struct solver *S, uint32_t v)
{
	return v >= S->ns + S->nt && v < S->y;
}

static inline uint32_t dem(const struct solver *S, uint32_t t)
{
	return S->reach[t] < S->level ? S->reach[t] : S->level;
}

static inline uint32_t def_of(const struct solver *S, uint32_t t)
{
	uint32_t d = dem(S, t);

	return S->in[t] < d ? d - S->in[t] : 0;
}

static inline uint32_t exc_of(const struct solver *S, uint32_t t)
{
	return S->in[t] > S->cap ? S->in[t] - S->cap : 0;
}

/* f_tY, the flow on t -> Y. */
static inline uint32_t fty(const struct solver *S, uint32_t t)
{
	uint32_t d = dem(S, t);

	if (S->in[t] <= d)
		return 0;
	return (S->in[t] > S->cap ? S->cap : S->in[t]) - d;
}

static inline uint32_t fty_cap(const struct solver *S, uint32_t t)
{
	return S->cap - dem(S, t);
}

static void in_add(struct solver *S, uint32_t t, int delta)
{
	S->tot_def -= def_of(S, t);
	S->tot_exc -= exc_of(S, t);
	S->in[t] = (uint32_t)((int64_t)S->in[t] + delta);
	S->tot_def += def_of(S, t);
	S->tot_exc += exc_of(S, t);
}

static void recount(struct solver *S)
{
	size_t t;

	S->tot_def = S->tot_exc = 0;
	for (t = 0; t < S->nt; t++) {
		S->tot_def += def_of(S, (uint32_t)t);
		S->tot_exc += exc_of(S, (uint32_t)t);
	}
}

/* ---- heap (binary, lazy deletion) ---- */

static int heap_push(struct solver *S, int64_t key, uint32_t node)
{
	size_t i;

	if (S->hn == S->hcap) {
		size_t nc = S->hcap ? S->hcap * 2 : 1024;
		struct heap_item *nh = realloc(S->heap, nc * sizeof(*nh));

		if (nh == NULL)
			return -1;
		S->heap = nh;
		S->hcap = nc;
	}
	i = S->hn++;
	while (i > 0) {
		size_t up = (i - 1) / 2;

		if (S->heap[up].key <= key)
			break;
		S->heap[i] = S->heap[up];
		i = up;
	}
	S->heap[i].key = key;
	S->heap[i].node = node;
	return 0;
}

static struct heap_item heap_pop(struct solver *S)
{
	struct heap_item top = S->heap[0], last = S->heap[--S->hn];
	size_t i = 0, n = S->hn;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && S->heap[c + 1].key < S->heap[c].key)
			c++;
		if (S->heap[c].key >= last.key)
			break;
		S->heap[i] = S->heap[c];
		i = c;
	}
	if (n > 0)
		S->heap[i] = last;
	return top;
}

/* Relax node u to distance du, reached through (link, via). */
static int relax(struct solver *S, uint32_t u, int64_t du, uint32_t link,
		 uint32_t via)
{
	if (S->done[u] == S->epoch)
		return 0;
	if (S->seen[u] == S->epoch && S->dist[u] <= du)
		return 0;
	S->seen[u] = S->epoch;
	S->dist[u] = du;
	S->nxt[u] = link;
	S->via[u] = via;
	return heap_push(S, du, u);
}

/* ---- augmenting along one residual arc u -> v ---- */

static void apply_arc(struct solver *S, uint32_t u, uint32_t v, uint32_t via)
{
	if (via == VIA_Y)
		return;
	if (via == VIA_HUB_T) {
		if (is_hub(S, u)) {
			S->q[v - S->ns]++;
			in_add(S, v - (uint32_t)S->ns, +1);
		} else {
			S->q[u - S->ns]--;
			in_add(S, u - (uint32_t)S->ns, -1);
		}
		return;
	}
	if (via == VIA_SRC_HUB) {
		if (is_src(S, u))
			S->r[u]++;
		else
			S->r[v]--;
		return;
	}
	S->fl[via] ^= 1;
	in_add(S, S->tg[via], (S->fl[via] & 1) ? +1 : -1);
}

/* ---- backward search: from deficit target t0 to an excess node ---- */

static int is_excess_node(const struct solver *S, uint32_t u)
{
	if (u == S->y)
		return S->tot_def > S->tot_exc;
	if (is_tgt(S, u))
		return S->in[u - S->ns] > S->cap;
	return 0;
}

/* Expand v: relax its predecessors u (residual arcs u -> v). */
static int expand_back(struct solver *S, uint32_t v, int64_t ev)
{
	const int64_t *p = S->p;
	size_t i;

	if (is_tgt(S, v)) {
		uint32_t t = v - (uint32_t)S->ns;

		for (i = S->roff[t]; i < S->roff[t + 1]; i++) {
			uint32_t a = S->rarc[i], s = S->rsrc[i];

			if (S->fl[a] & 1)
				continue;
			if (relax(S, s, ev + S->cost[a] + p[s] - p[v], v, a) < 0)
				return -1;
		}
		if (S->hub && S->gt[t] != NONE) {
			uint32_t h = hnode(S, S->gt[t]);

			if (relax(S, h, ev + p[h] - p[v], v, VIA_HUB_T) < 0)
				return -1;
		}
		if (fty(S, t) > 0 &&
		    relax(S, S->y, ev + p[S->y] - p[v], v, VIA_Y) < 0)
			return -1;
	} else if (is_src(S, v)) {
		for (i = S->off[v]; i < S->off[v + 1]; i++) {
			uint32_t u;

			if (!(S->fl[i] & 1))
				continue;
			u = tnode(S, S->tg[i]);
			if (relax(S, u, ev - S->cost[i] + p[u] - p[v], v,
				  (uint32_t)i) < 0)
				return -1;
		}
		if (S->hub && S->r[v] > 0) {
			uint32_t h = hnode(S, S->gs[v]);

			if (relax(S, h, ev - S->cost_r + p[h] - p[v], v,
				  VIA_SRC_HUB) < 0)
				return -1;
		}
	} else if (is_hub(S, v)) {
		uint32_t g = v - hnode(S, 0);

		for (i = S->gsoff[g]; i < S->gsoff[g + 1]; i++) {
			uint32_t s = S->gsrc[i];

			if (S->r[s] < S->ls[s] &&
			    relax(S, s, ev + S->cost_r + p[s] - p[v], v,
				  VIA_SRC_HUB) < 0)
				return -1;
		}
		for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++) {
			uint32_t t = S->gtgt[i], u = tnode(S, t);

			if (S->q[t] > 0 &&
			    relax(S, u, ev + p[u] - p[v], v, VIA_HUB_T) < 0)
				return -1;
		}
	} else {
		/* Y, not an excess node: its predecessors are targets with
		 * room on t -> Y. Only with caps. */
		for (i = 0; i < S->nt; i++) {
			uint32_t u = tnode(S, (uint32_t)i);

			if (fty(S, (uint32_t)i) < fty_cap(S, (uint32_t)i) &&
			    S->in[i] >= dem(S, (uint32_t)i) &&
			    relax(S, u, ev + p[u] - p[v], v, VIA_Y) < 0)
				return -1;
		}
	}
	return 0;
}

/* Expand u forward: relax its successors v (residual arcs u -> v). */
static int expand_fwd(struct solver *S, uint32_t u, int64_t du)
{
	const int64_t *p = S->p;
	size_t i;

	if (is_tgt(S, u)) {
		uint32_t t = u - (uint32_t)S->ns;

		for (i = S->roff[t]; i < S->roff[t + 1]; i++) {
			uint32_t a = S->rarc[i], s = S->rsrc[i];

			if (!(S->fl[a] & 1))
				continue;
			if (relax(S, s, du - S->cost[a] + p[u] - p[s], u, a) < 0)
				return -1;
		}
		if (S->hub && S->q[t] > 0) {
			uint32_t h = hnode(S, S->gt[t]);

			if (relax(S, h, du + p[u] - p[h], u, VIA_HUB_T) < 0)
				return -1;
		}
		if (fty(S, t) < fty_cap(S, t) && S->in[t] >= dem(S, t) &&
		    relax(S, S->y, du + p[u] - p[S->y], u, VIA_Y) < 0)
			return -1;
	} else if (is_src(S, u)) {
		for (i = S->off[u]; i < S->off[u + 1]; i++) {
			uint32_t v;

			if (S->fl[i] & 1)
				continue;
			v = tnode(S, S->tg[i]);
			if (relax(S, v, du + S->cost[i] + p[u] - p[v], u,
				  (uint32_t)i) < 0)
				return -1;
		}
		if (S->hub && S->gs[u] != NONE && S->r[u] < S->ls[u]) {
			uint32_t h = hnode(S, S->gs[u]);

			if (relax(S, h, du + S->cost_r + p[u] - p[h], u,
				  VIA_SRC_HUB) < 0)
				return -1;
		}
	} else if (is_hub(S, u)) {
		uint32_t g = u - hnode(S, 0);

		for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++) {
			uint32_t v = tnode(S, S->gtgt[i]);

			if (relax(S, v, du + p[u] - p[v], u, VIA_HUB_T) < 0)
				return -1;
		}
		for (i = S->gsoff[g]; i < S->gsoff[g + 1]; i++) {
			uint32_t s = S->gsrc[i];

			if (S->r[s] > 0 &&
			    relax(S, s, du - S->cost_r + p[u] - p[s], u,
				  VIA_SRC_HUB) < 0)
				return -1;
		}
	} else {
		for (i = 0; i < S->nt; i++) {
			uint32_t v = tnode(S, (uint32_t)i);

			if (fty(S, (uint32_t)i) > 0 &&
			    relax(S, v, du + p[u] - p[v], u, VIA_Y) < 0)
				return -1;
		}
	}
	return 0;
}

static void new_epoch(struct solver *S)
{
	S->hn = 0;
	S->n_settled = 0;
	if (++S->epoch == 0) {
		memset(S->seen, 0, S->nn * sizeof(*S->seen));
		memset(S->done, 0, S->nn * sizeof(*S->done));
		S->epoch = 1;
	}
}

/*
 * One shortest augmenting path. backward: from deficit target node `from`
 * against the arcs to an excess node; else forward from excess node `from`
 * to a deficit node. Returns 1 augmented, 0 no path (infeasible), -1 no
 * memory.
 */
static int augment(struct solver *S, uint32_t from, int backward)
{
	uint32_t end = NONE, u, v;
	int64_t e = 0;
	size_t i;

	new_epoch(S);
	S->seen[from] = S->epoch;
	S->dist[from] = 0;
	S->nxt[from] = NONE;
	if (heap_push(S, 0, from) < 0)
		return -1;
	while (S->hn > 0) {
		struct heap_item it = heap_pop(S);

		u = it.node;
		if (S->done[u] == S->epoch || it.key > S->dist[u])
			continue;
		S->done[u] = S->epoch;
		S->settled[S->n_settled++] = u;
		if (u != from) {
			int term = backward ? is_excess_node(S, u) :
				   (u == S->y ? S->tot_exc > S->tot_def :
				    is_tgt(S, u) && def_of(S, u - (uint32_t)S->ns) > 0);
			if (term) {
				end = u;
				e = it.key;
				break;
			}
		}
		if ((backward ? expand_back(S, u, it.key) :
		     expand_fwd(S, u, it.key)) < 0)
			return -1;
	}
	if (end == NONE)
		return 0;
	/* potentials: keep rc >= 0, make the path tight */
	for (i = 0; i < S->n_settled; i++) {
		v = S->settled[i];
		if (backward)
			S->p[v] += e - S->dist[v];
		else
			S->p[v] += S->dist[v] - e;
	}
	/* walk the path */
	u = end;
	while (u != from) {
		v = S->nxt[u];
		if (backward)
			apply_arc(S, u, v, S->via[u]);
		else
			apply_arc(S, v, u, S->via[u]);
		u = v;
	}
	S->augmentations++;
	return 1;
}

/* ---- snapshot for level rollback ---- */

struct snap {
	uint8_t *fl;
	uint32_t *in, *q, *r;
	int64_t *p;
};

static void snap_free(struct snap *sn)
{
	free(sn->fl);
	free(sn->in);
	free(sn->q);
	free(sn->r);
	free(sn->p);
	memset(sn, 0, sizeof(*sn));
}

static int snap_take(const struct solver *S, struct snap *sn)
{
	if (sn->fl == NULL) {
		sn->fl = malloc(S->na + 1);
		sn->in = malloc((S->nt + 1) * sizeof(uint32_t));
		sn->q = malloc((S->nt + 1) * sizeof(uint32_t));
		sn->r = malloc((S->ns + 1) * sizeof(uint32_t));
		sn->p = malloc(S->nn * sizeof(int64_t));
		if (!sn->fl || !sn->in || !sn->q || !sn->r || !sn->p)
			return -1;
	}
	memcpy(sn->fl, S->fl, S->na);
	memcpy(sn->in, S->in, S->nt * sizeof(uint32_t));
	memcpy(sn->q, S->q, S->nt * sizeof(uint32_t));
	memcpy(sn->r, S->r, S->ns * sizeof(uint32_t));
	memcpy(sn->p, S->p, S->nn * sizeof(int64_t));
	return 0;
}

static void snap_restore(struct solver *S, const struct snap *sn)
{
	memcpy(S->fl, sn->fl, S->na);
	memcpy(S->in, sn->in, S->nt * sizeof(uint32_t));
	memcpy(S->q, sn->q, S->nt * sizeof(uint32_t));
	memcpy(S->r, sn->r, S->ns * sizeof(uint32_t));
	memcpy(S->p, sn->p, S->nn * sizeof(int64_t));
}

/* ---- building ---- */

static void solver_free(struct solver *S)
{
	free(S->off); free(S->tg); free(S->cost); free(S->fl); free(S->rnd);
	free(S->score); free(S->roff); free(S->rarc); free(S->rsrc);
	free(S->ls); free(S->r); free(S->rgreedy); free(S->gs);
	free(S->in); free(S->q); free(S->reach); free(S->gt);
	free(S->gsoff); free(S->gtoff); free(S->gsrc); free(S->gtgt);
	free(S->p); free(S->dist); free(S->seen); free(S->done);
	free(S->nxt); free(S->via); free(S->settled); free(S->heap);
	memset(S, 0, sizeof(*S));
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static uint32_t group_of(const uint32_t *vals, size_t n, uint32_t v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (vals[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (uint32_t)lo;
}

static long self_of(const struct lb_assign_params *p, size_t s)
{
	return p->self ? p->self[s] : -1;
}

/* Language groups: dense ids for the union of the values. */
static int build_groups(struct solver *S, const struct lb_assign_params *p)
{
	uint32_t *vals = NULL;
	size_t n = 0, i, g;

	S->gs = malloc((S->ns + 1) * sizeof(uint32_t));
	S->gt = malloc((S->nt + 1) * sizeof(uint32_t));
	if (S->gs == NULL || S->gt == NULL)
		return -1;
	if (p->lang_src == NULL || p->lang_tgt == NULL) {
		S->ng = 1;
		for (i = 0; i < S->ns; i++)
			S->gs[i] = 0;
		for (i = 0; i < S->nt; i++)
			S->gt[i] = 0;
	} else {
		vals = malloc((S->nt + 1) * sizeof(uint32_t));
		if (vals == NULL)
			return -1;
		memcpy(vals, p->lang_tgt, S->nt * sizeof(uint32_t));
		qsort(vals, S->nt, sizeof(uint32_t), cmp_u32);
		for (i = 0; i < S->nt; i++)
			if (n == 0 || vals[n - 1] != vals[i])
				vals[n++] = vals[i];
		S->ng = n;
		for (i = 0; i < S->nt; i++)
			S->gt[i] = group_of(vals, n, p->lang_tgt[i]);
		for (i = 0; i < S->ns; i++) {
			g = group_of(vals, n, p->lang_src[i]);
			S->gs[i] = (g < n && vals[g] == p->lang_src[i]) ?
					   (uint32_t)g : NONE;
		}
		free(vals);
	}
	S->gsoff = calloc(S->ng + 2, sizeof(size_t));
	S->gtoff = calloc(S->ng + 2, sizeof(size_t));
	S->gsrc = malloc((S->ns + 1) * sizeof(uint32_t));
	S->gtgt = malloc((S->nt + 1) * sizeof(uint32_t));
	if (!S->gsoff || !S->gtoff || !S->gsrc || !S->gtgt)
		return -1;
	for (i = 0; i < S->ns; i++)
		if (S->gs[i] != NONE)
			S->gsoff[S->gs[i] + 1]++;
	for (i = 0; i < S->nt; i++)
		S->gtoff[S->gt[i] + 1]++;
	for (g = 0; g < S->ng; g++) {
		S->gsoff[g + 1] += S->gsoff[g];
		S->gtoff[g + 1] += S->gtoff[g];
	}
	{
		size_t *fs = S->gsoff, *ft = S->gtoff;
		size_t *cs = malloc((S->ng + 1) * sizeof(size_t));
		size_t *ct = malloc((S->ng + 1) * sizeof(size_t));

		if (cs == NULL || ct == NULL) {
			free(cs);
			free(ct);
			return -1;
		}
		memcpy(cs, fs, S->ng * sizeof(size_t));
		memcpy(ct, ft, S->ng * sizeof(size_t));
		for (i = 0; i < S->ns; i++)
			if (S->gs[i] != NONE)
				S->gsrc[cs[S->gs[i]]++] = (uint32_t)i;
		for (i = 0; i < S->nt; i++)
			S->gtgt[ct[S->gt[i]]++] = (uint32_t)i;
		free(cs);
		free(ct);
	}
	return 0;
}

static inline int32_t weight_cost(double w)
{
	return (int32_t)-llround(w * SCALE);
}

/*
 * Arcs: eligible candidates (target valid, not self, same group, first
 * occurrence of a target wins since rows are best first... we keep the
 * best score), plus dense random arcs. Sorted by cost per source.
 */
static int build_arcs(struct solver *S, const struct lb_candidates *c,
		      const struct lb_assign_params *p, double bonus,
		      size_t dense_limit, struct lb_error *err)
{
	uint32_t *mark = NULL, *pmark = NULL;
	size_t s, j, a, na = 0, pairs = 0;
	int rc = -1;

	mark = malloc((S->nt + 1) * sizeof(uint32_t));
	pmark = malloc((S->nt + 1) * sizeof(uint32_t));
	S->off = malloc((S->ns + 1) * sizeof(size_t));
	if (mark == NULL || pmark == NULL || S->off == NULL)
		goto nomem;
	for (j = 0; j < S->nt; j++)
		mark[j] = pmark[j] = NONE;

	/* validate, count arcs; decide dense vs hub */
	for (s = 0; s < S->ns; s++) {
		long self = self_of(p, s);
		size_t k = 0;

		for (j = 0; j < c->m; j++) {
			uint32_t t = c->target[s * c->m + j];
			float w = c->score[s * c->m + j];

			if (t == LB_NO_TARGET)
				continue;
			if (t >= S->nt) {
				lb_error_set(err, LB_EINVALID, "candidate %zu of "
					     "source %zu: target %u out of range",
					     j, s, t);
				goto out;
			}
			if (!isfinite(w) || fabsf(w) > 1.5f) {
				lb_error_set(err, LB_EINVALID, "candidate %zu of "
					     "source %zu: bad score", j, s);
				goto out;
			}
			if ((long)t == self || mark[t] == s)
				continue;
			if (S->gs[s] == NONE || S->gt[t] != S->gs[s])
				continue;
			mark[t] = (uint32_t)s;
			k++;
		}
		na += k;
		if (p->random_completion && S->gs[s] != NONE)
			pairs += S->gtoff[S->gs[s] + 1] - S->gtoff[S->gs[s]];
	}
	S->hub = p->random_completion && pairs > dense_limit;
	if (p->random_completion && !S->hub)
		na = pairs;	/* every pair in the group becomes an arc */
	if (na >= (size_t)UINT32_MAX - 8) {
		lb_error_set(err, LB_ETOOBIG, "%zu candidate arcs", na);
		goto out;
	}
	S->na = na;
	S->tg = malloc((na + 1) * sizeof(uint32_t));
	S->cost = malloc((na + 1) * sizeof(int32_t));
	S->fl = calloc(na + 1, 1);
	S->rnd = calloc(na + 1, 1);
	S->score = malloc((na + 1) * sizeof(float));
	if (!S->tg || !S->cost || !S->fl || !S->rnd || !S->score)
		goto nomem;
	for (j = 0; j < S->nt; j++)
		mark[j] = NONE;

	a = 0;
	for (s = 0; s < S->ns; s++) {
		long self = self_of(p, s);
		size_t start = a, i, k;

		S->off[s] = a;
		if (p->prev != NULL && bonus > 0)
			for (j = 0; j < p->prev_l; j++) {
				uint32_t t = p->prev[s * p->prev_l + j];

				if (t < S->nt)
					pmark[t] = (uint32_t)s;
			}
		for (j = 0; j < c->m; j++) {
			uint32_t t = c->target[s * c->m + j];
			float w = c->score[s * c->m + j];
			double wb;

			if (t == LB_NO_TARGET || (long)t == self)
				continue;
			if (S->gs[s] == NONE || S->gt[t] != S->gs[s])
				continue;
			if (mark[t] == s) {
				/* duplicate: keep the best score */
				for (i = start; i < a; i++)
					if (S->tg[i] == t && S->score[i] < w) {
						S->score[i] = w;
						wb = w + (pmark[t] == s ? bonus : 0);
						S->cost[i] = weight_cost(wb);
					}
				continue;
			}
			mark[t] = (uint32_t)s;
			wb = w + (pmark[t] == s ? bonus : 0);
			S->tg[a] = t;
			S->score[a] = w;
			S->cost[a] = weight_cost(wb);
			a++;
		}
		/* insertion sort by cost ascending (rows are nearly sorted) */
		for (i = start + 1; i < a; i++) {
			uint32_t tt = S->tg[i];
			int32_t cc = S->cost[i];
			float ww = S->score[i];

			for (k = i; k > start && S->cost[k - 1] > cc; k--) {
				S->tg[k] = S->tg[k - 1];
				S->cost[k] = S->cost[k - 1];
				S->score[k] = S->score[k - 1];
			}
			S->tg[k] = tt;
			S->cost[k] = cc;
			S->score[k] = ww;
		}
		if (p->random_completion && !S->hub && S->gs[s] != NONE) {
			size_t g = S->gs[s], first = a;

			for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++) {
				uint32_t t = S->gtgt[i];

				if ((long)t == self || mark[t] == s)
					continue;
				S->tg[a] = t;
				S->score[a] = 0;
				S->cost[a] = (int32_t)S->cost_r;
				S->rnd[a] = 1;
				a++;
			}
			/* shuffle so ties among random arcs break at random */
			for (i = a; i > first + 1; i--) {
				size_t r = first + rng_below(&S->rng, i - first);
				uint32_t tt = S->tg[i - 1];

				S->tg[i - 1] = S->tg[r];
				S->tg[r] = tt;
			}
		}
	}
	S->off[S->ns] = a;
	S->na = a;

	/* reverse CSR */
	S->roff = calloc(S->nt + 2, sizeof(size_t));
	S->rarc = malloc((a + 1) * sizeof(uint32_t));
	S->rsrc = malloc((a + 1) * sizeof(uint32_t));
	if (!S->roff || !S->rarc || !S->rsrc)
		goto nomem;
	for (j = 0; j < a; j++)
		S->roff[S->tg[j] + 1]++;
	for (j = 0; j < S->nt; j++)
		S->roff[j + 1] += S->roff[j];
	for (s = 0; s < S->ns; s++)
		for (j = S->off[s]; j < S->off[s + 1]; j++) {
			size_t pos = S->roff[S->tg[j]]++;

			S->rarc[pos] = (uint32_t)j;
			S->rsrc[pos] = (uint32_t)s;
		}
	for (j = S->nt; j > 0; j--)
		S->roff[j] = S->roff[j - 1];
	S->roff[0] = 0;
	rc = 0;
	goto out;
nomem:
	lb_error_set(err, LB_ENOMEM, "out of memory");
out:
	free(mark);
	free(pmark);
	return rc;
}

static int alloc_nodes(struct solver *S)
{
	size_t nn = S->nn;

	S->ls = calloc(S->ns + 1, sizeof(uint32_t));
	S->r = calloc(S->ns + 1, sizeof(uint32_t));
	S->rgreedy = calloc(S->ns + 1, sizeof(uint32_t));
	S->in = calloc(S->nt + 1, sizeof(uint32_t));
	S->q = calloc(S->nt + 1, sizeof(uint32_t));
	S->reach = calloc(S->nt + 1, sizeof(uint32_t));
	S->p = calloc(nn, sizeof(int64_t));
	S->dist = malloc(nn * sizeof(int64_t));
	S->seen = calloc(nn, sizeof(uint32_t));
	S->done = calloc(nn, sizeof(uint32_t));
	S->nxt = malloc(nn * sizeof(uint32_t));
	S->via = malloc(nn * sizeof(uint32_t));
	S->settled = malloc(nn * sizeof(uint32_t));
	if (!S->ls || !S->r || !S->rgreedy || !S->in || !S->q || !S->reach ||
	    !S->p || !S->dist || !S->seen || !S->done || !S->nxt ||
	    !S->via || !S->settled)
		return -1;
	return 0;
}

/* L_s and reach_t. */
static void limits(struct solver *S, const struct lb_assign_params *p)
{
	size_t s, t, g, i;
	size_t *cnt;

	for (s = 0; s < S->ns; s++) {
		size_t avail = S->off[s + 1] - S->off[s];

		if (S->hub && S->gs[s] != NONE) {
			long self = self_of(p, s);

			g = S->gs[s];
			avail = S->gtoff[g + 1] - S->gtoff[g];
			if (self >= 0 && (size_t)self < S->nt &&
			    S->gt[self] == g)
				avail--;
		}
		S->ls[s] = (uint32_t)(avail < p->links ? avail : p->links);
	}
	if (!S->hub) {
		for (t = 0; t < S->nt; t++) {
			size_t n = 0;

			for (i = S->roff[t]; i < S->roff[t + 1]; i++)
				n += S->ls[S->rsrc[i]] > 0;
			S->reach[t] = (uint32_t)n;
		}
		return;
	}
	/* hub mode: every source of the group with L_s > 0, minus self */
	cnt = calloc(S->ng + 1, sizeof(size_t));
	if (cnt == NULL)
		return;	/* reach stays 0: no lower bounds (logged by caller) */
	for (s = 0; s < S->ns; s++)
		if (S->gs[s] != NONE && S->ls[s] > 0)
			cnt[S->gs[s]]++;
	for (t = 0; t < S->nt; t++)
		S->reach[t] = (uint32_t)cnt[S->gt[t]];
	for (s = 0; s < S->ns; s++) {
		long self = self_of(p, s);

		if (S->gs[s] != NONE && S->ls[s] > 0 && self >= 0 &&
		    (size_t)self < S->nt && S->gt[self] == S->gs[s])
			S->reach[self]--;
	}
	free(cnt);
}

/* Phase 0: top-L_s per source, hub flow to the neediest, potentials. */
static void greedy(struct solver *S, uint32_t k)
{
	size_t s, t, g, i;

	for (s = 0; s < S->ns; s++) {
		size_t n = S->off[s + 1] - S->off[s], used = 0;

		for (i = S->off[s]; i < S->off[s + 1] && used < S->ls[s]; i++) {
			S->fl[i] = 3;
			S->in[S->tg[i]]++;
			used++;
		}
		S->r[s] = S->rgreedy[s] = S->hub ? S->ls[s] - (uint32_t)used : 0;
		if (S->r[s] > 0)
			S->p[s] = -S->cost_r;
		else if (used < n)
			S->p[s] = -(int64_t)S->cost[S->off[s] + used];
		else if (used > 0)
			S->p[s] = -(int64_t)S->cost[S->off[s] + used - 1];
		else
			S->p[s] = 0;
	}
	if (!S->hub)
		return;
	for (g = 0; g < S->ng; g++) {
		size_t rg = 0, nt = S->gtoff[g + 1] - S->gtoff[g];
		int64_t ph = INT64_MAX;
		int any = 0;

		for (i = S->gsoff[g]; i < S->gsoff[g + 1]; i++)
			rg += S->r[S->gsrc[i]];
		/* first to targets below k, then round the group at random */
		for (i = S->gtoff[g]; i < S->gtoff[g + 1] && rg > 0; i++) {
			uint32_t tt = S->gtgt[i];
			uint32_t d = S->reach[tt] < k ? S->reach[tt] : k;

			while (S->in[tt] < d && rg > 0) {
				S->in[tt]++;
				S->q[tt]++;
				rg--;
			}
		}
		while (rg > 0 && nt > 0) {
			uint32_t tt = S->gtgt[S->gtoff[g] + rng_below(&S->rng, nt)];

			S->in[tt]++;
			S->q[tt]++;
			rg--;
		}
		for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++)
			any |= S->q[S->gtgt[i]] > 0;
		if (any) {
			ph = 0;
		} else {
			for (i = S->gsoff[g]; i < S->gsoff[g + 1]; i++) {
				s = S->gsrc[i];
				if (S->r[s] < S->ls[s] && S->p[s] + S->cost_r < ph)
					ph = S->p[s] + S->cost_r;
			}
			if (ph == INT64_MAX || ph < 0)
				ph = 0;
		}
		S->p[hnode(S, (uint32_t)g)] = ph;
	}
	(void)t;
}

/* Dual certificate: every residual arc has rc >= 0, every balance 0. */
static int certify(const struct solver *S)
{
	const int64_t *p = S->p;
	size_t s, i, t;

	if (S->tot_def || S->tot_exc)
		return 0;
	for (s = 0; s < S->ns; s++) {
		size_t out = S->r[s];

		for (i = S->off[s]; i < S->off[s + 1]; i++) {
			uint32_t v = tnode(S, S->tg[i]);

			if (S->fl[i] & 1) {
				out++;
				if (-S->cost[i] + p[v] - p[s] < 0)
					return 0;
			} else if (S->cost[i] + p[s] - p[v] < 0) {
				return 0;
			}
		}
		if (out != S->ls[s])
			return 0;
		if (S->hub && S->gs[s] != NONE) {
			uint32_t h = hnode(S, S->gs[s]);

			if (S->r[s] < S->ls[s] && S->cost_r + p[s] - p[h] < 0)
				return 0;
			if (S->r[s] > 0 && -S->cost_r + p[h] - p[s] < 0)
				return 0;
		}
	}
	for (t = 0; t < S->nt; t++) {
		uint32_t v = tnode(S, (uint32_t)t);

		if (fty(S, (uint32_t)t) < fty_cap(S, (uint32_t)t) &&
		    p[v] - p[S->y] < 0)
			return 0;
		if (fty(S, (uint32_t)t) > 0 && p[S->y] - p[v] < 0)
			return 0;
		if (S->hub) {
			uint32_t h = hnode(S, S->gt[t]);

			if (p[h] - p[v] < 0)
				return 0;
			if (S->q[t] > 0 && p[v] - p[h] < 0)
				return 0;
		}
	}
	return 1;
}

/* Phase 1: targets over the cap. 0 ok, 1 infeasible, -1 no memory. */
static int resolve_excess(struct solver *S)
{
	size_t t;

	for (t = 0; t < S->nt; t++)
		while (S->in[t] > S->cap) {
			int rc = augment(S, tnode(S, (uint32_t)t), 0);

			if (rc <= 0)
				return rc < 0 ? -1 : 1;
		}
	return 0;
}

/* Phase 2 at the current level. 0 ok, 1 infeasible, -1 no memory. */
static int resolve_deficits(struct solver *S)
{
	size_t t;

	for (t = 0; t < S->nt; t++)
		while (def_of(S, (uint32_t)t) > 0) {
			int rc = augment(S, tnode(S, (uint32_t)t), 1);

			if (rc <= 0)
				return rc < 0 ? -1 : 1;
		}
	return 0;
}

/* Largest level whose demand fits the supply of every group. */
static uint32_t level_bound(const struct solver *S, uint32_t k)
{
	uint32_t lo = 0, hi = k;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		size_t g, i;
		int ok = 1;

		for (g = 0; g < S->ng && ok; g++) {
			size_t sup = 0, need = 0;

			for (i = S->gsoff[g]; i < S->gsoff[g + 1]; i++)
				sup += S->ls[S->gsrc[i]];
			for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++) {
				uint32_t r = S->reach[S->gtgt[i]];

				need += r < mid ? r : mid;
			}
			ok = need <= sup;
		}
		if (ok)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* ---- hub mode: random links to real targets ---- */

static int links_to(const struct solver *S, const uint32_t *rt, size_t l,
		    size_t s, uint32_t t)
{
	size_t i;

	for (i = S->off[s]; i < S->off[s + 1]; i++)
		if ((S->fl[i] & 1) && S->tg[i] == t)
			return 1;
	for (i = 0; i < l; i++)
		if (rt[s * l + i] == t)
			return 1;
	return 0;
}

static int may_link(const struct solver *S, const struct lb_assign_params *p,
		    const uint32_t *rt, size_t l, size_t s, uint32_t t)
{
	return (long)t != self_of(p, s) && !links_to(S, rt, l, s, t);
}

/*
 * rt: n_src * l random targets (NONE = empty). Keeps per target what it
 * needs to reach d_t, spreads the rest uniformly, matches slots to sources.
 */
static int realize(struct solver *S, const struct lb_assign_params *p,
		   uint32_t *rt, size_t l, size_t *unrealized)
{
	uint32_t *qq = NULL, *slots = NULL, *cnt = NULL;
	size_t g, i, j;
	int rc = -1;

	qq = calloc(S->nt + 1, sizeof(uint32_t));
	cnt = calloc(S->ns + 1, sizeof(uint32_t));
	if (qq == NULL || cnt == NULL)
		goto out;
	for (g = 0; g < S->ng; g++) {
		size_t rg = 0, need = 0, nt = S->gtoff[g + 1] - S->gtoff[g];
		size_t ns_ = 0, tries;

		for (i = S->gsoff[g]; i < S->gsoff[g + 1]; i++)
			rg += S->r[S->gsrc[i]];
		if (rg == 0)
			continue;
		for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++) {
			uint32_t t = S->gtgt[i], rel = S->in[t] - S->q[t];

			qq[t] = dem(S, t) > rel ? dem(S, t) - rel : 0;
			need += qq[t];
		}
		/* the rest uniformly at random among targets with room */
		for (j = need; j < rg; j++) {
			uint32_t t = NONE;

			for (tries = 0; tries < 64 && t == NONE; tries++) {
				uint32_t c = S->gtgt[S->gtoff[g] +
						     rng_below(&S->rng, nt)];

				if (S->in[c] - S->q[c] + qq[c] < S->cap &&
				    qq[c] < S->reach[c])
					t = c;
			}
			for (i = S->gtoff[g]; i < S->gtoff[g + 1] && t == NONE; i++) {
				uint32_t c = S->gtgt[i];

				if (S->in[c] - S->q[c] + qq[c] < S->cap &&
				    qq[c] < S->reach[c])
					t = c;
			}
			if (t == NONE)	/* every target full: ignore the cap */
				t = S->gtgt[S->gtoff[g] + rng_below(&S->rng, nt)];
			qq[t]++;
		}
		/* stability: keep last run's random links where slots allow */
		if (p->prev != NULL)
			for (i = S->gsoff[g]; i < S->gsoff[g + 1]; i++) {
				uint32_t s = S->gsrc[i];

				for (j = 0; j < p->prev_l && cnt[s] < S->r[s]; j++) {
					uint32_t t = p->prev[(size_t)s * p->prev_l + j];

					if (t >= S->nt || qq[t] == 0 ||
					    S->gt[t] != g || !may_link(S, p, rt, l, s, t))
						continue;
					rt[(size_t)s * l + cnt[s]++] = t;
					qq[t]--;
				}
			}
		free(slots);
		slots = malloc((rg + 1) * sizeof(uint32_t));
		if (slots == NULL)
			goto out;
		for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++) {
			uint32_t t = S->gtgt[i];

			for (j = 0; j < qq[t]; j++)
				slots[ns_++] = t;
			qq[t] = 0;
		}
		for (i = ns_; i > 1; i--) {
			size_t r = rng_below(&S->rng, i);
			uint32_t x = slots[i - 1];

			slots[i - 1] = slots[r];
			slots[r] = x;
		}
		/* match: each source takes slots from the end */
		for (i = S->gsoff[g]; i < S->gsoff[g + 1]; i++) {
			uint32_t s = S->gsrc[i];

			while (cnt[s] < S->r[s]) {
				size_t k, found = ns_;

				if (ns_ == 0)
					break;
				for (k = ns_; k > 0; k--)
					if (may_link(S, p, rt, l, s, slots[k - 1])) {
						found = k - 1;
						break;
					}
				if (found == ns_) {
					/* swap with a random link given earlier */
					uint32_t t = slots[ns_ - 1];
					size_t i2, m2;
					int done_ = 0;

					for (i2 = S->gsoff[g]; i2 < i && !done_; i2++) {
						uint32_t s2 = S->gsrc[i2];

						for (m2 = 0; m2 < cnt[s2] && !done_; m2++) {
							uint32_t t2 = rt[(size_t)s2 * l + m2];

							if (may_link(S, p, rt, l, s, t2) &&
							    may_link(S, p, rt, l, s2, t)) {
								rt[(size_t)s2 * l + m2] = t;
								rt[(size_t)s * l + cnt[s]++] = t2;
								done_ = 1;
							}
						}
					}
					ns_--;
					if (!done_) {
						(*unrealized)++;
						S->r[s]--;
					}
					continue;
				}
				rt[(size_t)s * l + cnt[s]++] = slots[found];
				slots[found] = slots[--ns_];
			}
			if (cnt[s] < S->r[s]) {
				*unrealized += S->r[s] - cnt[s];
				S->r[s] = cnt[s];
			}
		}
	}
	rc = 0;
out:
	free(qq);
	free(slots);
	free(cnt);
	return rc;
}

/* ---- output and figures ---- */

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

static int emit(struct solver *S, const struct lb_assign_params *p,
		const uint32_t *rt, struct lb_assignment *out,
		struct lb_assign_stats *st, double bonus)
{
	size_t l = p->links, s, i, j, t;
	size_t *deg = NULL;
	uint32_t *pm = NULL;
	int rc = -1;

	out->n_src = S->ns;
	out->l = l;
	out->links = malloc((S->ns * l + 1) * sizeof(*out->links));
	deg = calloc(S->nt + 1, sizeof(size_t));
	pm = malloc((S->nt + 1) * sizeof(uint32_t));
	if (out->links == NULL || deg == NULL || pm == NULL)
		goto out;
	for (t = 0; t < S->nt; t++)
		pm[t] = NONE;
	for (s = 0; s < S->ns; s++) {
		struct lb_link *row = out->links + s * l;
		size_t n = 0, changed = 0;

		for (i = S->off[s]; i < S->off[s + 1]; i++) {
			if (!(S->fl[i] & 1))
				continue;
			row[n].target = S->tg[i];
			if (S->rnd[i]) {
				row[n].type = LB_LINK_RANDOM;
				row[n].score = 0;
				st->random_links++;
				st->model_objective += LB_ASSIGN_RANDOM_WEIGHT;
			} else {
				row[n].type = LB_LINK_RELATED;
				row[n].score = S->score[i];
				st->objective += S->score[i];
				st->model_objective += -(double)S->cost[i] / SCALE;
			}
			if (!(S->fl[i] & 2))
				st->lifted++;
			n++;
		}
		for (j = 0; rt != NULL && j < S->r[s]; j++) {
			row[n].target = rt[s * l + j];
			row[n].type = LB_LINK_RANDOM;
			row[n].score = 0;
			st->random_links++;
			st->model_objective += LB_ASSIGN_RANDOM_WEIGHT;
			n++;
		}
		if (S->r[s] > S->rgreedy[s])
			st->lifted += S->r[s] - S->rgreedy[s];
		/* related by score descending, random after (stable) */
		for (i = 1; i < n; i++) {
			struct lb_link x = row[i];

			for (j = i; j > 0 && (row[j - 1].type > x.type ||
					      (row[j - 1].type == x.type &&
					       x.type == LB_LINK_RELATED &&
					       row[j - 1].score < x.score)); j--)
				row[j] = row[j - 1];
			row[j] = x;
		}
		for (i = 0; i < n; i++)
			deg[row[i].target]++;
		st->links += n;
		if (p->prev != NULL) {
			size_t np = 0;

			for (j = 0; j < p->prev_l; j++) {
				uint32_t t2 = p->prev[s * p->prev_l + j];

				if (t2 < S->nt && pm[t2] != s) {
					pm[t2] = (uint32_t)s;
					np++;
				}
			}
			for (i = 0; i < n; i++)
				if (pm[row[i].target] != s)
					changed++;
			st->churn += changed;
			st->churn_sources += changed > 0 || np != n;
		}
		for (; n < l; n++) {
			row[n].target = LB_NO_TARGET;
			row[n].score = 0;
			row[n].type = LB_LINK_RELATED;
		}
	}
	(void)bonus;
	/* lifted pages: below d_t under top-L (related arcs only) */
	{
		size_t *g = calloc(S->nt + 1, sizeof(size_t));

		if (g == NULL)
			goto out;
		for (i = 0; i < S->na; i++)
			if (S->fl[i] & 2)
				g[S->tg[i]]++;
		for (t = 0; t < S->nt; t++)
			if (g[t] < dem(S, (uint32_t)t) && deg[t] > g[t])
				st->lifted_pages++;
		free(g);
	}
	if (S->nt > 0) {
		size_t lo = SIZE_MAX, hi = 0;

		for (t = 0; t < S->nt; t++) {
			if (deg[t] < lo)
				lo = deg[t];
			if (deg[t] > hi)
				hi = deg[t];
		}
		st->min_in = lo;
		st->max_in = hi;
		qsort(deg, S->nt, sizeof(size_t), cmp_size);
		st->median_in = deg[S->nt / 2];
	}
	rc = 0;
out:
	free(deg);
	free(pm);
	return rc;
}

void lb_assignment_release(struct lb_assignment *a)
{
	if (a == NULL)
		return;
	free(a->links);
	a->links = NULL;
	a->n_src = a->l = 0;
}

/* One solve with a given cap; 1 = the cap cannot hold (retry without). */
static int solve(const struct lb_candidates *cand,
		 const struct lb_assign_params *p, uint32_t cap,
		 struct lb_assignment *out, struct lb_assign_stats *st,
		 struct lb_error *err)
{
	struct solver S;
	struct snap sn;
	uint32_t *rt = NULL;
	double bonus = p->stability_bonus;
	uint32_t k = p->min_in > CAP_INF ? CAP_INF : (uint32_t)p->min_in;
	uint32_t j, kmax;
	size_t t;
	int rc = -1, r;

	memset(&S, 0, sizeof(S));
	memset(&sn, 0, sizeof(sn));
	if (!(bonus > 0))
		bonus = 0;
	if (bonus > 1)
		bonus = 1;
	S.ns = cand->n_src;
	S.nt = p->n_tgt;
	S.cap = cap;
	S.rng = p->seed ^ 0x6c696e6b626f74ULL;
	S.cost_r = weight_cost(LB_ASSIGN_RANDOM_WEIGHT);
	if (build_groups(&S, p) < 0) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	if (build_arcs(&S, cand, p, bonus,
		       p->dense_limit ? p->dense_limit : DENSE_LIMIT_DEFAULT,
		       err) < 0)
		goto out;
	S.nn = S.ns + S.nt + S.ng + 1;
	S.y = (uint32_t)(S.nn - 1);
	if (alloc_nodes(&S) < 0) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	limits(&S, p);
	greedy(&S, k);

	/* phase 1: caps */
	S.level = 0;
	recount(&S);
	if (S.tot_exc > 0) {
		r = resolve_excess(&S);
		if (r != 0) {
			rc = r < 0 ? -1 : 1;
			if (r < 0)
				lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
	}
	/* phase 2: levels */
	kmax = level_bound(&S, k);
	st->k_used = 0;
	for (j = 1; j <= kmax; j++) {
		S.level = j;
		recount(&S);
		if (S.tot_def > 0) {
			if (snap_take(&S, &sn) < 0) {
				lb_error_set(err, LB_ENOMEM, "out of memory");
				goto out;
			}
			r = resolve_deficits(&S);
			if (r < 0) {
				lb_error_set(err, LB_ENOMEM, "out of memory");
				goto out;
			}
			if (r > 0) {
				snap_restore(&S, &sn);
				S.level = j - 1;
				recount(&S);
				break;
			}
		}
		st->k_used = j;
	}
	S.level = (uint32_t)st->k_used;
	recount(&S);
	/* k_used counts what holds for every target that can be reached */
	st->feasible = st->k_used >= p->min_in;
	for (t = 0; t < S.nt && st->feasible; t++)
		if (S.reach[t] < k)
			st->feasible = 0;
	st->certified = certify(&S);
	st->augmentations = S.augmentations;

	if (S.hub) {
		rt = malloc((S.ns * p->links + 1) * sizeof(uint32_t));
		if (rt == NULL) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		for (t = 0; t < S.ns * p->links; t++)
			rt[t] = NONE;
		if (realize(&S, p, rt, p->links, &st->unrealized) < 0) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		if (st->unrealized > 0) {
			st->certified = 0;
			log_warnx("%zu random links found no target", st->unrealized);
		}
	}
	if (emit(&S, p, rt, out, st, bonus) < 0) {
		lb_assignment_release(out);
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	rc = 0;
out:
	free(rt);
	snap_free(&sn);
	solver_free(&S);
	return rc;
}

int assign_links(const struct lb_candidates *cand,
		 const struct lb_assign_params *p, struct lb_assignment *out,
		 struct lb_assign_stats *stats, struct lb_error *err)
{
	struct lb_assign_stats st;
	uint32_t cap = CAP_INF;
	double t0 = now_seconds();
	int rc;

	memset(out, 0, sizeof(*out));
	if (cand->n_src > (size_t)UINT32_MAX / 4 || p->n_tgt > (size_t)UINT32_MAX / 4)
		return lb_error_set(err, LB_ETOOBIG, "too many pages");
	if (p->links > 4096)
		return lb_error_set(err, LB_EINVALID, "%zu links per page",
				    p->links);
	if (cand->m > 0 && (cand->target == NULL || cand->score == NULL))
		return lb_error_set(err, LB_EINVALID, "candidates without data");
	if (p->max_in > 0) {
		size_t c = p->max_in < p->min_in ? p->min_in : p->max_in;

		cap = c > CAP_INF ? CAP_INF : (uint32_t)c;
	}
	memset(&st, 0, sizeof(st));
	rc = solve(cand, p, cap, out, &st, err);
	if (rc == 1) {
		log_warnx("max_in %zu cannot hold for %zu sources of %zu links; "
			  "solving without the cap", p->max_in, cand->n_src,
			  p->links);
		memset(&st, 0, sizeof(st));
		rc = solve(cand, p, CAP_INF, out, &st, err);
	}
	st.seconds = now_seconds() - t0;
	if (stats != NULL)
		*stats = st;
	return rc < 0 ? -1 : 0;
}
