/*
 * assign.c - stage 4: L links per source, every target >= k in, maximal
 * total relatedness. See assign.h for the contract, docs/assign.md for
 * the user's view.
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
 * arc t->Y carries f_tY in [0, c_t - d_t] (fy[]). A target's balance is
 * in_t - d_t - f_tY (< 0 deficit, > 0 excess); Y's excess is
 * sum(deficit) - sum(excess) over the targets, so it is never stored.
 *
 * Random arcs. For small instances (pairs <= dense_limit) every allowed
 * (source, target) pair without a candidate becomes an explicit arc of
 * weight R ("dense mode"): the model is then exactly the problem above.
 * For large ones (hub mode), one hub node h_g per language group stands for
 * them: s --(cap L_s, cost -R)--> h_g --(cost 0)--> t. The hub relaxes
 * "no duplicate, no self link" for random links only, so its optimum may
 * not be realisable: with k = L every page ends at exactly k, and a page
 * short of both outgoing and incoming links sends its random units to
 * itself through the hub (the 1,169-page manual of issue 17 ended a page
 * at 6 of 8). After solving, realize() matches random slots to sources
 * exactly (a b-matching with augmenting paths, notes there); when no
 * matching exists, the sources it names get explicit random arcs (dense
 * mode for those rows only, xsrc[]) and the problem is solved again,
 * which is exact for them; at least one source a round, so the rounds
 * end (a handful on real sites). The links finally realised have the
 * relaxation's optimal value, which bounds the exact model's, and
 * certify_links() proves it on the links themselves.
 *
 * Invariant (reduced-cost optimality): potentials p with every residual
 * arc (u, v) at rc = cost + p(u) - p(v) >= 0; only the node balances are
 * off. Every step below keeps it; the solve ends when all balances are 0.
 *
 * Phase 0, a 0-optimal start in closed form (init_flow): given bonuses
 *   p(t) >= 0 (p(Y) = 0), every source takes its L_s best arcs by
 *   weight + bonus (a random link is worth R + p(hub), p(hub) = the
 *   group's top bonus, and goes to a target at that bonus); p(s) lies
 *   between its best arc left out and its worst arc taken; f_tY is the
 *   surplus where p(t) = 0 and 0 elsewhere (surplus stays at t as excess,
 *   so Y -> t has no residual capacity and p(t) > p(Y) is allowed). With
 *   all bonuses 0 this is plain top-L, recorded for the figures.
 * Phase 1, cost scaling (cost_scale, its own notes below): Goldberg's
 *   push-relabel with eps falling from 2^24 to 1 unit, restarted through
 *   phase 0 at every eps, ends with a balanced flow within one unit of
 *   optimal. The hand-off (repair_potentials, its notes) keeps that flow
 *   and moves only the potentials, by shortest distances in its residual
 *   graph (negative cycles cancelled), until every residual arc has
 *   rc >= 0: the flow is then optimal as it is and nothing is left for
 *   phase 3. Only if that runs over its budget do the bonuses go
 *   through phase 0 (which leaves the imbalances of arcs within one
 *   unit) and phase 3 at full scale, as before issue 17c. Should it
 *   give up (a relabel budget: k cannot hold, or a pathological
 *   instance), the solve falls back to phases 1'-2 from zero bonuses.
 * Phase 1', warm start (price_rounds): parallel reverse-auction rounds on
 *   the bonuses; a target short of d_t raises its bonus to win the
 *   sources it lacks (their weakest link is the price to beat), one with
 *   a bonus and a surplus lowers it; targets the candidates cannot fill
 *   sit at the hub level B, set so that about as many links fall below
 *   R + B as random links are unavoidable. Only the start changes: any
 *   bonus vector is a valid phase 0. The round with least imbalance wins.
 * Phase 2, cost levels (shifts[]): the problem is solved exactly with
 *   costs rounded to 2^-20, 2^-16, ... of full scale, the last at full
 *   scale; each level's bonuses, scaled up, feed phase 0 of the next.
 *   Coarse costs tie a lot, which lets one phase move many units.
 * Phase 3, primal-dual phases (pd_phase): one Dijkstra from every excess
 *   node at once, stopped at the first deficit node settled;
 *   settled nodes get p(v) += d(v) - D, which keeps rc >= 0 and makes
 *   every shortest path to a settled deficit tight; then a blocking flow
 *   of unit paths over tight arcs (DFS, current-arc pointers, dead ends
 *   pruned) moves what it can. If a phase moves nothing, or at most
 *   RESOLVE_SSP_TAIL units are left, single shortest paths (augment)
 *   finish. Each path is a chain of link moves "source s
 *   drops t_i and takes t_{i+1}".
 * Hubs and Y have every page as a neighbour: a search walks them lazily
 *   through heaps ordered by potential ("the hubs' and Y's neighbours"),
 *   and each target keeps its used in-arcs in a list of their own, so
 *   a popular target does not cost its whole in-degree.
 * Infeasible k: counting supply against demand per group (level_bound)
 *   is exact with the hub; without it a max flow (feasible.c) finds the
 *   largest k that the arcs allow before anything is solved. Should the
 *   solve still meet a deficit that reaches no excess node (a proof of
 *   infeasibility by the cut argument; with a max_in cap), d_t = min(j,
 *   reach_t) is raised level
 *   by level j = 1..k from plain top-L (raising d_t only removes residual
 *   arcs, so the invariant survives); the snapshot of the last level that
 *   held is kept: k_used, the best uniform k ("as close as possible").
 * Certificate (certify): every residual arc has rc >= 0 and every balance
 *   is 0; LP duality's proof of optimality for the integer costs, O(arcs).
 *   Then certify_links() checks the links as emitted, in the exact model
 *   (no hub: every allowed random pair not taken is an arc, the best of
 *   them per source found through the targets sorted by potential).
 *   stats->certified reports both.
 *
 * Costs are integers: round((score + bonus) * 2^24), so the optimum is
 * exact for scores rounded to 2^-24 (floats in [-1, 1] carry 24 bits).
 *
 * Complexity: building and phase 0 O(n M); cost scaling 13 refines of
 * O(n M) plus 10-25 pushes and relabels per node each on the benchmark;
 * each primal-dual phase a Dijkstra over the part of the graph nearest to
 * the excess, O(m' log n), and after cost scaling only a few of them.
 * Without cost scaling (the fallback) the number of phases is the weak
 * point: hundreds per level on tight instances (L = k).
 * Memory: about 50 bytes per arc plus ~120 bytes per node.
 *
 * Stability: links of the previous run get stability_bonus added to their
 * weight (a tie-breaker when small), and random links of the previous run
 * are kept when the slots allow it.
 */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "linkbot/assign.h"
#include "linkbot/log.h"
#include "feasible.h"
#include "rheap.h"

#define SCALE 16777216.0	/* 2^24 */
#define CAP_INF 0x3fffffffu
#define DENSE_LIMIT_DEFAULT ((size_t)1 << 16)
#define NONE UINT32_MAX
#define PRICE_ROUNDS 20

/* How a node was reached: an arc index, or one of these. */
#define VIA_HUB_T (UINT32_MAX - 1)	/* hub <-> target */
#define VIA_SRC_HUB (UINT32_MAX - 2)	/* source <-> hub */
#define VIA_Y (UINT32_MAX - 3)		/* target <-> Y */
#define VIA_HUB_TS (UINT32_MAX - 4)	/* hub -> t -> s: the night's two-hop
					 * over s's weakest link */
#define VIA_HUB_TY (UINT32_MAX - 5)	/* hub -> t -> Y, t at the top */

struct heap_item {
	int64_t key;
	uint32_t node;
};

/* A binary min-heap of items that grows as needed (the searches' queue,
 * the walks' side heaps, cost scaling's lazy heaps). */
struct iheap {
	struct heap_item *a;
	size_t n, cap;
};

struct pheap {
	uint32_t *a;
	size_t n;
};

struct walk {
	struct iheap h;
	int64_t base;
	uint32_t epoch, from;
};

/*
 * 8 bytes an arc, two tenants in turn: the used lists (u: list is
 * indexed by reverse-CSR position, pos by arc) between cost scaling's
 * refines and after, and cost scaling's link heaps (lh, indexed by
 * reverse-CSR position like the keys in struct cs) during a refine.
 * init_flow() and adopt_flow() rebuild the used lists from the flow
 * (used_part) after every refine, and nothing reads them in between;
 * lh_part() reads a target's used list entry i just before it writes
 * its heap entry i over it.
 */
union arc_use {
	struct {
		uint32_t list, pos;
	} u;
	struct {
		uint32_t src;	/* the link's source */
		int32_t cost;	/* c(s, t): the top check reads no arc array */
	} lh;
};

struct solver {
	size_t ns, nt, ng, nn;
	uint32_t y;		/* the sink's node id */
	int hub;		/* hub mode */
	const uint8_t *xsrc;	/* hub mode: sources with explicit random
				 * arcs instead of the hub (NULL: none) */
	int64_t cost_r;		/* cost of a random arc: -W(R) > 0 */

	/* arcs by source (CSR), sorted by cost ascending per source */
	size_t na;
	size_t *off;
	uint32_t *tg;
	int32_t *cost;		/* at the current scale (cost0 >> shift, rounded) */
	int32_t *cost0;		/* at full scale: kept (set_shift) only once a
				 * coarse level is asked for, NULL before, so
				 * that the usual solve holds one copy */
	int shift;
	int64_t cost_r0;
	uint8_t *fl;		/* bit 0: flow, bit 1: chosen by greedy */
	uint8_t *rnd;		/* dense random arc */
	/* arcs by target */
	size_t *roff;
	uint32_t *rarc, *rsrc;
	/* per target, its used in-arcs first: ua[roff[t] .. + nused[t]).u.list
	 * holds reverse-CSR positions (rev_pos() finds arc a's), ua[a].u.pos
	 * its slot. Cost scaling lends the same 8 bytes an arc to its link heaps
	 * (ua[].lh, see struct cs): the used lists are stale there anyway */
	union arc_use *ua;
	uint32_t *nused;

	/* per source */
	uint32_t *ls, *r, *rgreedy, *gs;
	/* per target */
	uint32_t *in, *q, *reach, *gt;
	uint32_t *fy;		/* flow on t -> Y above the lower bound */
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
	struct rheap hq;	/* the searches' queue */
	/* hub mode: per group, sources (2g) and targets (2g+1) by potential */
	struct pheap *ph;
	uint32_t *hpos[7];
	struct walk *walks;
	/* the night's router (night_route): targets' potentials are capped
	 * at their hub's (tpot), and two more heaps per group: sources by
	 * wmin(s) - p(s), deficit targets by potential */
	int collapse;
	int64_t *wmin;		/* per source: -cost of its weakest link */
	size_t night_settled;	/* nodes the night's searches settled */
	size_t night_halves;	/* step 3's half-rounds */

	size_t tot_def, tot_exc;
	size_t augmentations, phases;
	uint64_t rng;
	size_t threads;		/* params.threads, resolved (par_for) */
	double help_cpu;	/* CPU seconds of par_for()'s threads */
	uint32_t *top;		/* init_flow(): a scratch row per thread */
	size_t top_cap;		/* entries per thread's row */
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

/* CPU seconds of the calling thread (the pipeline runs other work in
 * other threads of the process at the same time) */
static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * ---- the second core: loops whose items are independent ----
 *
 * par_for(S, n, fn, ctx) runs fn(S, ctx, lo, hi, part) over [0, n) in
 * S->threads contiguous parts, the caller taking the first. It is used
 * only where every item writes its own entries and reads nothing another
 * item writes (a source's arcs and its own fields, a target's reverse
 * arcs and its own fields), so that the result is the same for every
 * split, bit for bit: the test compares threads = 1 and 2. What stays
 * sequential is the refines' FIFO (each discharge depends on the last)
 * and everything that draws random numbers. A thread that cannot be
 * started leaves its part to the caller. Small loops run alone: a
 * thread costs more than it saves below PAR_MIN items
 * (starting one takes tens of microseconds; a thousand sources of 30
 * arcs take as long).
 */
#define PAR_MIN 1024

typedef void par_fn(struct solver *S, void *ctx, size_t lo, size_t hi,
		    size_t part);

struct par_job {
	struct solver *S;
	par_fn *fn;
	void *ctx;
	size_t lo, hi, part;
	double cpu;		/* the thread's CPU seconds */
};

static void *par_main(void *arg)
{
	struct par_job *j = arg;

	j->fn(j->S, j->ctx, j->lo, j->hi, j->part);
	j->cpu = cpu_seconds();
	return NULL;
}

static void par_for(struct solver *S, size_t n, par_fn *fn, void *ctx)
{
	struct par_job job[LB_ASSIGN_MAX_THREADS];
	pthread_t tid[LB_ASSIGN_MAX_THREADS];
	int started[LB_ASSIGN_MAX_THREADS];
	size_t k = S->threads, i;

	if (k > LB_ASSIGN_MAX_THREADS)
		k = LB_ASSIGN_MAX_THREADS;
	if (k < 2 || n < PAR_MIN) {
		fn(S, ctx, 0, n, 0);
		return;
	}
	for (i = 0; i < k; i++) {
		job[i].S = S;
		job[i].fn = fn;
		job[i].ctx = ctx;
		job[i].lo = n * i / k;
		job[i].hi = n * (i + 1) / k;
		job[i].part = i;
		started[i] = 0;
	}
	for (i = 1; i < k; i++)
		started[i] = pthread_create(&tid[i], NULL, par_main,
					    &job[i]) == 0;
	fn(S, ctx, job[0].lo, job[0].hi, 0);
	for (i = 1; i < k; i++) {
		if (started[i]) {
			pthread_join(tid[i], NULL);
			S->help_cpu += job[i].cpu;
		} else
			fn(S, ctx, job[i].lo, job[i].hi, job[i].part);
	}
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

/* Source s reaches its group's hub (hub mode, not made explicit). */
static inline int hub_src(const struct solver *S, uint32_t s)
{
	return S->hub && S->gs[s] != NONE &&
	       (S->xsrc == NULL || !S->xsrc[s]);
}

static inline uint32_t dem(const struct solver *S, uint32_t t)
{
	return S->reach[t] < S->level ? S->reach[t] : S->level;
}

/* The balance of target t: inflow - d_t - f_tY (> 0 excess, < 0 deficit). */
static inline int64_t bal(const struct solver *S, uint32_t t)
{
	return (int64_t)S->in[t] - dem(S, t) - S->fy[t];
}

static inline uint32_t def_of(const struct solver *S, uint32_t t)
{
	int64_t b = bal(S, t);

	return b < 0 ? (uint32_t)-b : 0;
}

static inline uint32_t exc_of(const struct solver *S, uint32_t t)
{
	int64_t b = bal(S, t);

	return b > 0 ? (uint32_t)b : 0;
}

/* f_tY, the flow on t -> Y. */
static inline uint32_t fty(const struct solver *S, uint32_t t)
{
	return S->fy[t];
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

static void fy_add(struct solver *S, uint32_t t, int delta)
{
	S->tot_def -= def_of(S, t);
	S->tot_exc -= exc_of(S, t);
	S->fy[t] = (uint32_t)((int64_t)S->fy[t] + delta);
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

static int iheap_push(struct iheap *h, int64_t key, uint32_t node)
{
	size_t i;

	if (h->n == h->cap) {
		size_t nc = h->cap ? h->cap * 2 : 1024;
		struct heap_item *na = realloc(h->a, nc * sizeof(*na));

		if (na == NULL)
			return -1;
		h->a = na;
		h->cap = nc;
	}
	i = h->n++;
	while (i > 0 && h->a[(i - 1) / 2].key > key) {
		h->a[i] = h->a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->a[i].key = key;
	h->a[i].node = node;
	return 0;
}

static struct heap_item iheap_pop(struct iheap *h)
{
	struct heap_item top = h->a[0], last = h->a[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->a[c + 1].key < h->a[c].key)
			c++;
		if (h->a[c].key >= last.key)
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n > 0)
		h->a[i] = last;
	return top;
}

/* The searches' queue (rheap.h): their keys are distances on reduced
 * costs >= 0, walk tokens included, so a radix heap serves them. */
static int heap_push(struct solver *S, int64_t key, uint32_t node)
{
	return rheap_push(&S->hq, key, node);
}

/* node UINT32_MAX: no memory */
static struct heap_item heap_pop(struct solver *S)
{
	struct rheap_item r;
	struct heap_item it = { 0, UINT32_MAX };

	if (rheap_pop(&S->hq, &r) == 0) {
		it.key = r.key;
		it.node = r.node;
	}
	return it;
}

/* Relax node u to distance du, reached through (link, via). */
static inline int relax(struct solver *S, uint32_t u, int64_t du, uint32_t link,
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

/*
 * ---- the hubs' and Y's neighbours in potential order ----
 *
 * A hub has every source and target of its group as a neighbour, and Y
 * every target. When a search settles one of them, scanning all its arcs
 * would make the search O(n). Instead the neighbours sit in binary heaps
 * keyed by the live potential (sign per direction), and the search walks a
 * heap in key order lazily: a small side heap of heap positions, started
 * at the root, yields the next smallest in O(log n), through a token in
 * the main queue. Potentials change only for settled nodes, which are
 * re-sifted after each search. The heaps, per group g (slot in brackets):
 *   5g+0 [0] sources with r < L_s, key  p   (backward: s -> hub)
 *   5g+1 [1] targets with q > 0,   key  p   (backward: t -> hub)
 *   5g+2 [2] all targets,          key -p   (forward: hub -> t)
 *   5g+3 [3] sources with r > 0,   key -p   (forward: hub -> s)
 *   5ng  [4] targets with f_tY > 0, key -p  (forward: Y -> t)
 * and, for the night's router only (S->collapse, night_route()):
 *   5ng+1+2g [5] sources with a link, key wmin(s) - p(s) (hub -> t -> s)
 *   5ng+2+2g [6] targets with a deficit, key -p (hub -> t, the terminal)
 * Target keys use tpot(), the potential capped at the hub's (the night's
 * notes); the cap keeps the order of the stored potentials.
 */
#define NKIND(S) (5 * (S)->ng + 1)
#define NKIND_ALL(S) (7 * (S)->ng + 1)
#define KIND_W(S, g) ((uint32_t)(5 * (S)->ng + 1 + 2 * (g)))
#define KIND_D(S, g) ((uint32_t)(5 * (S)->ng + 2 + 2 * (g)))

static inline int ph_slot(const struct solver *S, uint32_t kind)
{
	if (kind < 5 * S->ng)
		return (int)(kind % 5);
	if (kind == 5 * S->ng)
		return 4;
	return (kind - 5 * S->ng - 1) % 2 ? 6 : 5;
}

/* A target's potential. In the night's router, the potentials of the
 * targets of a group are capped at their hub's: a search that settles
 * the hub lowers every target above its new level to it at once. */
static inline int64_t tpot(const struct solver *S, uint32_t v)
{
	int64_t pv = S->p[v];

	if (S->collapse) {
		int64_t ph = S->p[hnode(S, S->gt[v - S->ns])];

		return pv < ph ? pv : ph;
	}
	return pv;
}

static inline int64_t ph_key(const struct solver *S, uint32_t kind,
			     uint32_t node)
{
	switch (ph_slot(S, kind)) {
	case 0:
		return S->p[node];
	case 1:
		return tpot(S, node);
	case 3:
		return -S->p[node];
	case 5:
		return S->wmin[node] - S->p[node];
	default:
		return -tpot(S, node);
	}
}

static void ph_swap(struct solver *S, struct pheap *h, int sl, size_t i,
		    size_t j)
{
	uint32_t a = h->a[i], b = h->a[j];

	h->a[i] = b;
	h->a[j] = a;
	S->hpos[sl][b] = (uint32_t)i;
	S->hpos[sl][a] = (uint32_t)j;
}

static void ph_up(struct solver *S, uint32_t kind, size_t i)
{
	struct pheap *h = &S->ph[kind];
	int sl = ph_slot(S, kind);

	while (i > 0 && ph_key(S, kind, h->a[(i - 1) / 2]) >
				ph_key(S, kind, h->a[i])) {
		ph_swap(S, h, sl, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void ph_down(struct solver *S, uint32_t kind, size_t i)
{
	struct pheap *h = &S->ph[kind];
	int sl = ph_slot(S, kind);

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			return;
		if (c + 1 < h->n && ph_key(S, kind, h->a[c + 1]) <
					    ph_key(S, kind, h->a[c]))
			c++;
		if (ph_key(S, kind, h->a[c]) >= ph_key(S, kind, h->a[i]))
			return;
		ph_swap(S, h, sl, i, c);
		i = c;
	}
}

static void ph_set(struct solver *S, uint32_t kind, uint32_t node, int want)
{
	struct pheap *h = &S->ph[kind];
	int sl = ph_slot(S, kind);
	size_t i = S->hpos[sl][node];

	if (want && i == NONE) {
		h->a[h->n] = node;
		S->hpos[sl][node] = (uint32_t)h->n;
		ph_up(S, kind, h->n++);
	} else if (!want && i != NONE) {
		size_t last = --h->n;

		if (i != last) {
			uint32_t m = h->a[last];

			ph_swap(S, h, sl, i, last);
			S->hpos[sl][node] = NONE;
			ph_up(S, kind, i);
			ph_down(S, kind, S->hpos[sl][m]);
		} else {
			S->hpos[sl][node] = NONE;
		}
	} else if (want) {
		ph_up(S, kind, i);
		ph_down(S, kind, S->hpos[sl][node]);
	}
}

/* Bring node's memberships in line with its state; re-sift where it stays. */
static void ph_update(struct solver *S, uint32_t node)
{
	if (S->ph == NULL)
		return;
	if (is_src(S, node)) {
		uint32_t g = S->gs[node];

		if (!hub_src(S, node))
			return;
		ph_set(S, 5 * g, node, S->r[node] < S->ls[node]);
		ph_set(S, 5 * g + 3, node, S->r[node] > 0);
		if (S->collapse)
			ph_set(S, KIND_W(S, g), node,
			       S->wmin[node] != INT64_MAX);
	} else if (is_tgt(S, node)) {
		uint32_t t = node - (uint32_t)S->ns, g = S->gt[t];

		if (S->hub) {
			ph_set(S, 5 * g + 1, node, S->q[t] > 0);
			ph_set(S, 5 * g + 2, node, 1);
			if (S->collapse)
				ph_set(S, KIND_D(S, g), node, def_of(S, t) > 0);
		}
		ph_set(S, 5 * (uint32_t)S->ng, node, S->fy[t] > 0);
	}
}

static void ph_rebuild(struct solver *S)
{
	size_t v, sl;

	if (S->ph == NULL)
		return;
	for (v = 0; v < (S->collapse ? NKIND_ALL(S) : NKIND(S)); v++)
		S->ph[v].n = 0;
	for (sl = 0; sl < (S->collapse ? 7u : 5u); sl++)
		for (v = 0; v < S->ns + S->nt; v++)
			S->hpos[sl][v] = NONE;
	for (v = 0; v < S->ns + S->nt; v++)
		ph_update(S, (uint32_t)v);
}

/* Side heap of a walk: positions of heap `kind` keyed by base + key. */
static int walk_push(struct solver *S, struct walk *w, uint32_t kind,
		     size_t pos)
{
	const struct pheap *h = &S->ph[kind];

	if (pos >= h->n)
		return 0;
	return iheap_push(&w->h, w->base + ph_key(S, kind, h->a[pos]),
			  (uint32_t)pos);
}

/* Start walking heap `kind` from node `from`: distance = base + key. */
static int walk_start(struct solver *S, uint32_t kind, uint32_t from,
		      int64_t base)
{
	struct walk *w = &S->walks[kind];

	w->h.n = 0;
	w->base = base;
	w->epoch = S->epoch;
	w->from = from;
	if (walk_push(S, w, kind, 0) < 0)
		return -1;
	if (w->h.n > 0)
		return heap_push(S, w->h.a[0].key, (uint32_t)S->nn + kind);
	return 0;
}

/* A walk's token came up: hand out the next node, re-queue the token. */
static int walk_step(struct solver *S, uint32_t kind)
{
	static const uint32_t via_of[7] = { VIA_SRC_HUB, VIA_HUB_T, VIA_HUB_T,
					    VIA_SRC_HUB, VIA_Y, VIA_HUB_TS,
					    VIA_HUB_T };
	struct walk *w = &S->walks[kind];
	const struct pheap *h = &S->ph[kind];
	struct heap_item it;
	uint32_t node;

	if (w->epoch != S->epoch || w->h.n == 0)
		return 0;
	it = iheap_pop(&w->h);
	node = h->a[it.node];
	if (relax(S, node, it.key, w->from, via_of[ph_slot(S, kind)]) < 0 ||
	    walk_push(S, w, kind, 2 * (size_t)it.node + 1) < 0 ||
	    walk_push(S, w, kind, 2 * (size_t)it.node + 2) < 0)
		return -1;
	if (w->h.n > 0)
		return heap_push(S, w->h.a[0].key, (uint32_t)S->nn + kind);
	return 0;
}

/*
 * The reverse-CSR position of the arc s -> t: t's segment lists its
 * sources in ascending order, each once (build_arcs() merges duplicate
 * targets), so a binary search finds it; a per-arc array would cost 4
 * bytes an arc (128 MB at N = 1,000,000) for what only an augmentation
 * asks.
 */
static uint32_t rev_pos(const struct solver *S, uint32_t s, uint32_t t)
{
	size_t lo = S->roff[t], hi = S->roff[t + 1];

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (S->rsrc[mid] <= s)
			lo = mid;
		else
			hi = mid;
	}
	return (uint32_t)lo;
}

/* Arc a (from s into t) became used or unused: keep t's used list. */
static void used_set(struct solver *S, uint32_t s, uint32_t a, int on)
{
	uint32_t t = S->tg[a];
	size_t base = S->roff[t];

	if (on) {
		size_t k = base + S->nused[t]++;

		S->ua[k].u.list = rev_pos(S, s, t);
		S->ua[a].u.pos = (uint32_t)k;
	} else {
		size_t k = S->ua[a].u.pos, last = base + --S->nused[t];
		uint32_t moved = S->ua[last].u.list;

		S->ua[k].u.list = moved;
		S->ua[S->rarc[moved]].u.pos = (uint32_t)k;
	}
}

/* Targets lo..hi: their used lists (in source order, as used_set()
 * would build them source by source); with ctx, in[t] = their links. */
static void used_part(struct solver *S, void *ctx, size_t lo, size_t hi,
		      size_t part)
{
	size_t t, i;

	(void)part;
	for (t = lo; t < hi; t++) {
		size_t base = S->roff[t], n = 0;

		for (i = base; i < S->roff[t + 1]; i++) {
			uint32_t a = S->rarc[i];

			if (S->fl[a] & 1) {
				S->ua[base + n].u.list = (uint32_t)i;
				S->ua[a].u.pos = (uint32_t)(base + n);
				n++;
			}
		}
		S->nused[t] = (uint32_t)n;
		if (ctx != NULL)
			S->in[t] = (uint32_t)n;
	}
}

static void used_rebuild(struct solver *S)
{
	par_for(S, S->nt, used_part, NULL);
}

/* ---- augmenting along one residual arc u -> v ---- */

/* Source s's weakest link: its -cost (INT64_MAX without a link), *arc
 * its index (arcs are sorted by cost, so the last used one). */
static int64_t weakest_link(const struct solver *S, uint32_t s, uint32_t *arc)
{
	size_t i;

	for (i = S->off[s + 1]; i > S->off[s]; i--)
		if (S->fl[i - 1] & 1) {
			*arc = (uint32_t)(i - 1);
			return -(int64_t)S->cost[i - 1];
		}
	*arc = NONE;
	return INT64_MAX;
}

/* The night's router: source s's links changed (and target node v's
 * balance): its weakest link and the heaps that hold them. */
static void night_touch(struct solver *S, uint32_t s, uint32_t v)
{
	uint32_t a;

	S->wmin[s] = weakest_link(S, s, &a);
	ph_update(S, s);
	ph_update(S, v);
}

static void apply_arc(struct solver *S, uint32_t u, uint32_t v, uint32_t via)
{
	if (via == VIA_HUB_TY) {
		/* hub -> t -> Y through any target of the group (they all
		 * have room to Y; the path's two arcs are tight for each) */
		uint32_t tv = S->ph[5 * (u - hnode(S, 0)) + 2].a[0];

		S->q[tv - S->ns]++;
		in_add(S, tv - (uint32_t)S->ns, +1);
		fy_add(S, tv - (uint32_t)S->ns, +1);
		ph_update(S, tv);
		return;
	}
	if (via == VIA_HUB_TS) {
		/* hub -> t -> s: t takes a unit from the hub and gives s's
		 * weakest link back */
		uint32_t a, t;

		weakest_link(S, v, &a);
		t = S->tg[a];
		S->q[t]++;
		S->fl[a] ^= 1;
		used_set(S, v, a, 0);
		night_touch(S, v, tnode(S, t));
		return;
	}
	if (via == VIA_Y) {
		if (u == S->y) {
			fy_add(S, v - (uint32_t)S->ns, -1);
			ph_update(S, v);
		} else {
			fy_add(S, u - (uint32_t)S->ns, +1);
			ph_update(S, u);
		}
		return;
	}
	if (via == VIA_HUB_T) {
		if (is_hub(S, u)) {
			S->q[v - S->ns]++;
			in_add(S, v - (uint32_t)S->ns, +1);
			ph_update(S, v);
		} else {
			S->q[u - S->ns]--;
			in_add(S, u - (uint32_t)S->ns, -1);
			ph_update(S, u);
		}
		return;
	}
	if (via == VIA_SRC_HUB) {
		if (is_src(S, u)) {
			S->r[u]++;
			ph_update(S, u);
		} else {
			S->r[v]--;
			ph_update(S, v);
		}
		return;
	}
	S->fl[via] ^= 1;
	in_add(S, S->tg[via], (S->fl[via] & 1) ? +1 : -1);
	used_set(S, is_src(S, u) ? u : v, via, S->fl[via] & 1);
	if (S->collapse)
		night_touch(S, is_src(S, u) ? u : v, tnode(S, S->tg[via]));
}

/* ---- backward search: from deficit target t0 to an excess node ---- */

static int is_sink(const struct solver *S, uint32_t v)
{
	if (v == S->y)
		return S->tot_exc > S->tot_def;
	return is_tgt(S, v) && def_of(S, v - (uint32_t)S->ns) > 0;
}

static int is_excess_node(const struct solver *S, uint32_t u)
{
	if (u == S->y)
		return S->tot_def > S->tot_exc;
	if (is_tgt(S, u))
		return exc_of(S, u - (uint32_t)S->ns) > 0;
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

		/* lazily, in order of distance (see "the hub's neighbours") */
		if (walk_start(S, 5 * g, v, ev + S->cost_r - p[v]) < 0 ||
		    walk_start(S, 5 * g + 1, v, ev - p[v]) < 0)
			return -1;
	} else {
		/* Y, not an excess node: its predecessors are targets with
		 * room on t -> Y. Only with caps. */
		for (i = 0; i < S->nt; i++) {
			uint32_t u = tnode(S, (uint32_t)i);

			if (fty(S, (uint32_t)i) < fty_cap(S, (uint32_t)i) &&
			    relax(S, u, ev + p[u] - p[v], v, VIA_Y) < 0)
				return -1;
		}
	}
	return 0;
}

/*
 * Expand u forward: relax its successors v (residual arcs u -> v). In
 * the night's router (S->collapse) a hub relaxes its plateau as one node
 * (the night's notes, "The plateau as one node"), and targets are read
 * at tpot(), which is p itself otherwise.
 */
static int expand_fwd(struct solver *S, uint32_t u, int64_t du)
{
	const int64_t *p = S->p;
	size_t i;

	if (is_tgt(S, u)) {
		uint32_t t = u - (uint32_t)S->ns;
		int64_t pu = tpot(S, u);
		size_t k;

		for (k = S->roff[t]; k < S->roff[t] + S->nused[t]; k++) {
			uint32_t ri = S->ua[k].u.list;
			uint32_t a = S->rarc[ri], s = S->rsrc[ri];

			if (relax(S, s, du - S->cost[a] + pu - p[s], u, a) < 0)
				return -1;
		}
		if (S->hub && S->q[t] > 0) {
			uint32_t h = hnode(S, S->gt[t]);

			if (relax(S, h, du + pu - p[h], u, VIA_HUB_T) < 0)
				return -1;
		}
		if (fty(S, t) < fty_cap(S, t) &&
		    relax(S, S->y, du + pu - p[S->y], u, VIA_Y) < 0)
			return -1;
	} else if (is_src(S, u)) {
		for (i = S->off[u]; i < S->off[u + 1]; i++) {
			uint32_t v;

			if (S->fl[i] & 1)
				continue;
			v = tnode(S, S->tg[i]);
			if (relax(S, v, du + S->cost[i] + p[u] - tpot(S, v), u,
				  (uint32_t)i) < 0)
				return -1;
		}
		if (hub_src(S, u) && S->r[u] < S->ls[u]) {
			uint32_t h = hnode(S, S->gs[u]);

			if (relax(S, h, du + S->cost_r + p[u] - p[h], u,
				  VIA_SRC_HUB) < 0)
				return -1;
		}
	} else if (is_hub(S, u) && S->collapse) {
		uint32_t g = u - hnode(S, 0);
		int64_t base = du + p[u];

		if (walk_start(S, 5 * g + 3, u, base - S->cost_r) < 0)
			return -1;
		if (S->cap != CAP_INF)
			return walk_start(S, 5 * g + 2, u, base);
		if (walk_start(S, KIND_D(S, g), u, base) < 0 ||
		    walk_start(S, KIND_W(S, g), u, base) < 0 ||
		    relax(S, S->y, base - p[S->y], u, VIA_HUB_TY) < 0)
			return -1;
	} else if (is_hub(S, u)) {
		uint32_t g = u - hnode(S, 0);

		/* lazily, in order of distance (see "the hubs' neighbours") */
		if (walk_start(S, 5 * g + 2, u, du + p[u]) < 0 ||
		    walk_start(S, 5 * g + 3, u, du - S->cost_r + p[u]) < 0)
			return -1;
	} else {
		if (walk_start(S, 5 * (uint32_t)S->ng, u, du + p[u]) < 0)
			return -1;
	}
	return 0;
}

/* Target node v, popped at distance dv in the night's router: no nearer
 * than through its settled hub (the hub relaxed what it would)? */
static int night_covered(const struct solver *S, uint32_t v, int64_t dv)
{
	uint32_t h;

	if (!S->collapse || S->cap != CAP_INF)
		return 0;
	h = hnode(S, S->gt[v - S->ns]);
	return S->done[h] == S->epoch &&
	       S->dist[h] + S->p[h] - tpot(S, v) <= dv;
}

static void new_epoch(struct solver *S)
{
	rheap_clear(&S->hq);
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
 * to a deficit node. In the night's router (S->collapse, forward only)
 * the plateau is crossed as one node (expand_fwd(), night_covered()),
 * and the search is dropped, nothing changed, once it settles more than
 * cap nodes (SIZE_MAX: never). Returns 1 augmented, 2 dropped, 0 no path
 * (infeasible), -1 no memory.
 */
static int augment(struct solver *S, uint32_t from, int backward, size_t cap)
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
	while (S->hq.n > 0) {
		struct heap_item it = heap_pop(S);

		if (it.node == UINT32_MAX)
			return -1;

		u = it.node;
		if (u >= S->nn) {
			if (walk_step(S, u - (uint32_t)S->nn) < 0)
				return -1;
			continue;
		}
		if (S->done[u] == S->epoch || it.key > S->dist[u])
			continue;
		if (u != from && (backward ? is_excess_node(S, u) :
				  is_sink(S, u))) {
			S->done[u] = S->epoch;
			S->settled[S->n_settled++] = u;
			end = u;
			e = it.key;
			break;
		}
		if (is_tgt(S, u) && night_covered(S, u, it.key))
			continue;
		S->done[u] = S->epoch;
		S->settled[S->n_settled++] = u;
		if (S->n_settled > cap) {
			S->night_settled += S->n_settled;
			return 2;
		}
		if ((backward ? expand_back(S, u, it.key) :
		     expand_fwd(S, u, it.key)) < 0)
			return -1;
	}
	if (S->collapse)
		S->night_settled += S->n_settled;
	if (end == NONE)
		return 0;
	/* potentials: keep rc >= 0, make the path tight */
	if (S->collapse) {
		/* hubs last: a target's new potential is taken from its
		 * capped one */
		for (i = 0; i < S->n_settled; i++) {
			v = S->settled[i];
			if (is_tgt(S, v))
				S->p[v] = tpot(S, v) + S->dist[v] - e;
			else if (!is_hub(S, v))
				S->p[v] += S->dist[v] - e;
		}
		for (i = 0; i < S->n_settled; i++) {
			v = S->settled[i];
			if (is_hub(S, v))
				S->p[v] += S->dist[v] - e;
			else if (v < S->ns + S->nt)
				ph_update(S, v);
		}
	} else {
		for (i = 0; i < S->n_settled; i++) {
			v = S->settled[i];
			if (backward)
				S->p[v] += e - S->dist[v];
			else
				S->p[v] += S->dist[v] - e;
			if (v < S->ns + S->nt)
				ph_update(S, v);
		}
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
	uint32_t *in, *q, *r, *fy;
	int64_t *p;
};

static void snap_free(struct snap *sn)
{
	free(sn->fl);
	free(sn->in);
	free(sn->q);
	free(sn->r);
	free(sn->fy);
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
		sn->fy = malloc((S->nt + 1) * sizeof(uint32_t));
		sn->p = malloc(S->nn * sizeof(int64_t));
		if (!sn->fl || !sn->in || !sn->q || !sn->r || !sn->fy || !sn->p)
			return -1;
	}
	memcpy(sn->fl, S->fl, S->na);
	memcpy(sn->in, S->in, S->nt * sizeof(uint32_t));
	memcpy(sn->q, S->q, S->nt * sizeof(uint32_t));
	memcpy(sn->r, S->r, S->ns * sizeof(uint32_t));
	memcpy(sn->fy, S->fy, S->nt * sizeof(uint32_t));
	memcpy(sn->p, S->p, S->nn * sizeof(int64_t));
	return 0;
}

static void snap_restore(struct solver *S, const struct snap *sn)
{
	memcpy(S->fl, sn->fl, S->na);
	memcpy(S->in, sn->in, S->nt * sizeof(uint32_t));
	memcpy(S->q, sn->q, S->nt * sizeof(uint32_t));
	memcpy(S->r, sn->r, S->ns * sizeof(uint32_t));
	memcpy(S->fy, sn->fy, S->nt * sizeof(uint32_t));
	memcpy(S->p, sn->p, S->nn * sizeof(int64_t));
	used_rebuild(S);
	ph_rebuild(S);
}

/* ---- building ---- */

static void solver_free(struct solver *S)
{
	free(S->off); free(S->tg); free(S->cost); free(S->cost0); free(S->fl); free(S->rnd);
	free(S->roff); free(S->rarc); free(S->rsrc);
	free(S->ua); free(S->nused);
	free(S->ls); free(S->r); free(S->rgreedy); free(S->gs);
	free(S->in); free(S->q); free(S->fy); free(S->reach); free(S->gt);
	free(S->gsoff); free(S->gtoff); free(S->gsrc); free(S->gtgt);
	free(S->p); free(S->dist); free(S->seen); free(S->done);
	free(S->nxt); free(S->via); free(S->settled); rheap_free(&S->hq);
	if (S->ph != NULL)
		for (size_t g = 0; g < NKIND_ALL(S); g++)
			free(S->ph[g].a);
	if (S->walks != NULL)
		for (size_t g = 0; g < NKIND_ALL(S); g++)
			free(S->walks[g].h.a);
	for (size_t g = 0; g < 7; g++)
		free(S->hpos[g]);
	free(S->wmin);
	free(S->ph); free(S->walks); free(S->top);
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
	if (S->hub && S->xsrc != NULL)
		for (s = 0; s < S->ns; s++)
			if (S->xsrc[s] && S->gs[s] != NONE)
				na += S->gtoff[S->gs[s] + 1] -
				      S->gtoff[S->gs[s]];	/* at most */
	if (na >= (size_t)UINT32_MAX - 8) {
		lb_error_set(err, LB_ETOOBIG, "%zu candidate arcs", na);
		goto out;
	}
	S->na = na;
	S->tg = malloc((na + 1) * sizeof(uint32_t));
	S->cost = malloc((na + 1) * sizeof(int32_t));
	S->fl = calloc(na + 1, 1);
	S->rnd = calloc(na + 1, 1);
	if (!S->tg || !S->cost || !S->fl || !S->rnd)
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
				/* duplicate: keep the best score (the lowest
				 * cost; emit() finds the score again) */
				wb = w + (pmark[t] == s ? bonus : 0);
				for (i = start; i < a; i++)
					if (S->tg[i] == t &&
					    weight_cost(wb) < S->cost[i])
						S->cost[i] = weight_cost(wb);
				continue;
			}
			mark[t] = (uint32_t)s;
			wb = w + (pmark[t] == s ? bonus : 0);
			S->tg[a] = t;
			S->cost[a] = weight_cost(wb);
			a++;
		}
		/* insertion sort by cost ascending (rows are nearly sorted) */
		for (i = start + 1; i < a; i++) {
			uint32_t tt = S->tg[i];
			int32_t cc = S->cost[i];

			for (k = i; k > start && S->cost[k - 1] > cc; k--) {
				S->tg[k] = S->tg[k - 1];
				S->cost[k] = S->cost[k - 1];
			}
			S->tg[k] = tt;
			S->cost[k] = cc;
		}
		if (p->random_completion && S->gs[s] != NONE &&
		    !hub_src(S, (uint32_t)s)) {
			size_t g = S->gs[s], first = a;

			for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++) {
				uint32_t t = S->gtgt[i];

				if ((long)t == self || mark[t] == s)
					continue;
				S->tg[a] = t;
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
	S->ua = malloc((a + 1) * sizeof(*S->ua));
	S->nused = calloc(S->nt + 1, sizeof(uint32_t));
	if (!S->ua || !S->nused)
		goto nomem;
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
	S->fy = calloc(S->nt + 1, sizeof(uint32_t));
	S->reach = calloc(S->nt + 1, sizeof(uint32_t));
	S->p = calloc(nn, sizeof(int64_t));
	S->dist = malloc(nn * sizeof(int64_t));
	S->seen = calloc(nn, sizeof(uint32_t));
	S->done = calloc(nn, sizeof(uint32_t));
	S->nxt = malloc(nn * sizeof(uint32_t));
	S->via = malloc(nn * sizeof(uint32_t));
	S->settled = malloc(nn * sizeof(uint32_t));
	{
		size_t g, sl;

		/* the night's kinds get their arrays when it runs */
		S->ph = calloc(NKIND_ALL(S), sizeof(*S->ph));
		S->walks = calloc(NKIND_ALL(S), sizeof(*S->walks));
		if (!S->ph || !S->walks)
			return -1;
		for (sl = 0; sl < 5; sl++) {
			S->hpos[sl] = malloc((S->ns + S->nt + 1) *
					     sizeof(uint32_t));
			if (S->hpos[sl] == NULL)
				return -1;
		}
		for (g = 0; g < S->ng; g++) {
			size_t nsg = S->gsoff[g + 1] - S->gsoff[g] + 1;
			size_t ntg = S->gtoff[g + 1] - S->gtoff[g] + 1;

			S->ph[5 * g].a = malloc(nsg * sizeof(uint32_t));
			S->ph[5 * g + 1].a = malloc(ntg * sizeof(uint32_t));
			S->ph[5 * g + 2].a = malloc(ntg * sizeof(uint32_t));
			S->ph[5 * g + 3].a = malloc(nsg * sizeof(uint32_t));
			if (!S->ph[5 * g].a || !S->ph[5 * g + 1].a ||
			    !S->ph[5 * g + 2].a || !S->ph[5 * g + 3].a)
				return -1;
		}
		S->ph[5 * S->ng].a = malloc((S->nt + 1) * sizeof(uint32_t));
		if (S->ph[5 * S->ng].a == NULL)
			return -1;
	}
	if (!S->ls || !S->r || !S->rgreedy || !S->in || !S->q || !S->fy ||
	    !S->reach ||
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

/* The value of arc i to its source: weight plus the target's bonus p(t). */
static inline int64_t arc_val(const struct solver *S, size_t i)
{
	return -(int64_t)S->cost[i] + S->p[tnode(S, S->tg[i])];
}

/* arc_val with ties broken for the link held before (fl bit 2). */
static inline int64_t arc_key(const struct solver *S, size_t i)
{
	return 2 * arc_val(S, i) + ((S->fl[i] >> 2) & 1);
}

/* init_flow() for sources lo..hi: each its best arcs, r and p; what
 * they give the targets is counted after (used_part) */
static void src_part(struct solver *S, void *ctx, size_t lo, size_t hi,
		     size_t part)
{
	int mark_greedy = *(const int *)ctx;
	uint32_t *top = S->top + part * S->top_cap;
	size_t s, i, j;

	for (s = lo; s < hi; s++) {
		size_t n = 0, lsv = S->ls[s];
		int hubok = hub_src(S, (uint32_t)s);
		int64_t vr = hubok ? -S->cost_r + S->p[hnode(S, S->gs[s])] :
				     INT64_MIN;
		int64_t best_out = INT64_MIN, worst_in = INT64_MAX;

		/* the best lsv arcs, by insertion into top[] (desc); among
		 * equal values the links held before win (bit 2 keeps them
		 * for the scan), so a restart keeps the flow's ties */
		for (i = S->off[s]; i < S->off[s + 1]; i++)
			S->fl[i] = (uint8_t)((S->fl[i] & ~5) | (S->fl[i] & 1) << 2);
		for (i = S->off[s]; i < S->off[s + 1]; i++) {
			int64_t v = arc_val(S, i), key = arc_key(S, i);

			if (n == lsv && (n == 0 || key <= arc_key(S, top[n - 1]))) {
				if (v > best_out)
					best_out = v;
				continue;
			}
			if (n == lsv) {
				int64_t dv = arc_val(S, top[n - 1]);

				if (dv > best_out)
					best_out = dv;
				n--;
			}
			for (j = n; j > 0 && arc_key(S, top[j - 1]) < key; j--)
				top[j] = top[j - 1];
			top[j] = (uint32_t)i;
			n++;
		}
		/* random links beat the weakest candidates below R + p(hub) */
		while (hubok && n > 0 && arc_val(S, top[n - 1]) < vr) {
			int64_t dv = arc_val(S, top[n - 1]);

			if (dv > best_out)
				best_out = dv;
			n--;
		}
		for (j = 0; j < n; j++) {
			S->fl[top[j]] |= mark_greedy ? 3 : 1;
			if (arc_val(S, top[j]) < worst_in)
				worst_in = arc_val(S, top[j]);
		}
		S->r[s] = hubok ? (uint32_t)(lsv - n) : 0;
		if (mark_greedy)
			S->rgreedy[s] = S->r[s];
		if (S->r[s] < lsv && hubok && vr > best_out)
			best_out = vr;
		if (S->r[s] > 0 && vr < worst_in)
			worst_in = vr;
		if (best_out != INT64_MIN)
			S->p[s] = best_out;
		else if (worst_in != INT64_MAX)
			S->p[s] = worst_in;
		else
			S->p[s] = 0;
	}
}

/*
 * Phase 0: with target bonuses p(t) >= 0 (p(Y) = 0) given, every source
 * takes its L_s best options by weight + bonus (a random link is worth
 * R + p(hub), p(hub) = the group's largest bonus); potentials in closed
 * form make this pseudo-flow 0-optimal:
 *   p(s) = its best option left out (<= its worst option taken),
 *   hub flow only to targets whose bonus equals p(hub),
 *   f_tY = clamp(in_t - d_t) where p(t) = 0, else 0 (the surplus stays at
 *   t as excess: Y -> t has no residual capacity, so p(t) > p(Y) is fine).
 * With all bonuses 0 this is plain top-L (mark_greedy records it).
 */
static int init_flow(struct solver *S, int mark_greedy)
{
	size_t s, t, g, i, lmax = 0;
	uint32_t *top = NULL, *q0 = NULL;

	for (s = 0; s < S->ns; s++)
		if (S->ls[s] > lmax)
			lmax = S->ls[s];
	if (S->top == NULL) {
		/* one row per thread for src_part() */
		S->top_cap = lmax + 1;
		S->top = malloc(S->top_cap * (S->threads ? S->threads : 1) *
				sizeof(uint32_t));
		if (S->top == NULL)
			return -1;
	}
	if (S->hub && S->nt > lmax)
		lmax = S->nt;
	top = malloc((lmax + 1) * sizeof(uint32_t));
	if (top == NULL)
		return -1;
	for (g = 0; g < S->ng; g++) {
		int64_t mx = 0;

		for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++)
			if (S->p[tnode(S, S->gtgt[i])] > mx)
				mx = S->p[tnode(S, S->gtgt[i])];
		S->p[hnode(S, (uint32_t)g)] = mx;
	}
	q0 = malloc((S->nt + 1) * sizeof(uint32_t));
	if (q0 == NULL) {
		free(top);
		return -1;
	}
	memcpy(q0, S->q, S->nt * sizeof(uint32_t));
	memset(S->in, 0, S->nt * sizeof(uint32_t));
	memset(S->q, 0, S->nt * sizeof(uint32_t));
	memset(S->fy, 0, S->nt * sizeof(uint32_t));
	par_for(S, S->ns, src_part, &mark_greedy);
	par_for(S, S->nt, used_part, S);	/* in[t] and the used lists */
	if (S->hub)
		for (g = 0; g < S->ng; g++) {
			size_t rg = 0, ne = 0, b = S->gtoff[g], e = S->gtoff[g + 1];
			uint32_t h = hnode(S, (uint32_t)g);
			int64_t ph = S->p[h];

			for (i = S->gsoff[g]; i < S->gsoff[g + 1]; i++)
				rg += S->r[S->gsrc[i]];
			if (rg == 0) {
				/* no hub flow: p(hub) as high as the sources allow */
				int64_t lim = INT64_MAX;

				for (i = S->gsoff[g]; i < S->gsoff[g + 1]; i++) {
					s = S->gsrc[i];
					if (S->r[s] < S->ls[s] &&
					    S->p[s] + S->cost_r < lim)
						lim = S->p[s] + S->cost_r;
				}
				if (lim != INT64_MAX && lim > ph)
					S->p[h] = lim;
				continue;
			}
			/* to the targets at the top bonus: first as many as
			 * each had (a restart keeps the flow), then the
			 * neediest, the rest uniformly among them */
			for (i = b; i < e; i++)
				if (S->p[tnode(S, S->gtgt[i])] == ph)
					top[ne++] = S->gtgt[i];
			for (i = 0; i < ne && rg > 0; i++) {
				uint32_t tt = top[i];
				uint32_t k0 = q0[tt] < rg ? q0[tt] : (uint32_t)rg;

				S->in[tt] += k0;
				S->q[tt] += k0;
				rg -= k0;
			}
			for (i = 0; i < ne && rg > 0; i++) {
				uint32_t tt = top[i];

				while (S->in[tt] < dem(S, tt) && rg > 0) {
					S->in[tt]++;
					S->q[tt]++;
					rg--;
				}
			}
			while (rg > 0 && ne > 0) {
				uint32_t tt = top[rng_below(&S->rng, ne)];

				S->in[tt]++;
				S->q[tt]++;
				rg--;
			}
		}
	free(top);
	free(q0);
	for (t = 0; t < S->nt; t++) {
		uint32_t d = dem(S, (uint32_t)t);

		if (S->p[tnode(S, (uint32_t)t)] == S->p[S->y] && S->in[t] > d)
			S->fy[t] = (S->in[t] < S->cap ? S->in[t] : S->cap) - d;
	}
	recount(S);	/* the used lists are used_part()'s */
	ph_rebuild(S);
	return 0;
}

/* The k-th smallest of x[0..n) (0-based); reorders x. */
static int64_t select_kth(int64_t *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		int64_t piv = x[lo + (hi - lo) / 2];
		size_t a = lo, c = hi;

		while (a <= c) {
			while (x[a] < piv)
				a++;
			while (x[c] > piv)
				c--;
			if (a <= c) {
				int64_t tmp = x[a];

				x[a] = x[c];
				x[c] = tmp;
				a++;
				if (c == 0)
					break;
				c--;
			}
		}
		if (k <= c && c != (size_t)-1)
			hi = c;
		else if (k >= a)
			lo = a;
		else
			break;
	}
	return x[k];
}

/* Costs at 2^-shift of full scale (rounded): the coarse levels. */
static int set_shift(struct solver *S, int sh)
{
	double d = (double)((int64_t)1 << sh);
	size_t a;

	if (S->cost0 == NULL) {
		/* cost is still at full scale (shift 0 since build_arcs) */
		if (sh == 0)
			return 0;
		S->cost0 = malloc((S->na + 1) * sizeof(int32_t));
		if (S->cost0 == NULL)
			return -1;
		memcpy(S->cost0, S->cost, S->na * sizeof(int32_t));
	}
	S->shift = sh;
	for (a = 0; a < S->na; a++)
		S->cost[a] = (int32_t)llround((double)S->cost0[a] / d);
	S->cost_r = llround((double)S->cost_r0 / d);
	return 0;
}

/*
 * Warm start: a few rounds of a parallel reverse auction on the target
 * bonuses. A target short of d_t raises its bonus just enough to win the
 * sources it lacks (each source's weakest link is the price to beat); a
 * target with a bonus and more than d_t links lowers it until the
 * surplus would leave. Any bonus vector gives a 0-optimal start (see
 * init_flow), so this only has to shrink the imbalance that SSP then
 * removes exactly; the round with the least imbalance is kept.
 */
static int price_rounds(struct solver *S, int rounds)
{
	int64_t *nb = NULL, *best = NULL, *x = NULL, *beta = NULL, *cv = NULL;
	uint8_t *needy = NULL;
	int64_t cap_b = (int64_t)(4 * SCALE) >> S->shift;
	size_t nrand = 0, ncv = 0;
	size_t t, i, s, best_imb = SIZE_MAX, maxin = 0;
	int r, rc = -1;

	for (t = 0; t < S->nt; t++)
		if (S->roff[t + 1] - S->roff[t] > maxin)
			maxin = S->roff[t + 1] - S->roff[t];
	nb = malloc((S->nt + 1) * sizeof(int64_t));
	best = malloc((S->nt + 1) * sizeof(int64_t));
	beta = malloc((S->ns + 1) * sizeof(int64_t));
	x = malloc((maxin + 1) * sizeof(int64_t));
	needy = malloc(S->nt + 1);
	if (!nb || !best || !beta || !x || !needy)
		goto out;
	/* random links the candidates cannot avoid: the hub level's target */
	if (S->hub) {
		for (t = 0; t < S->nt; t++) {
			size_t nin = S->roff[t + 1] - S->roff[t];
			uint32_t d = dem(S, (uint32_t)t);

			if (nin < d)
				nrand += d - nin;
		}
		for (s = 0; s < S->ns; s++)
			ncv += S->ls[s];
		cv = malloc((ncv + 1) * sizeof(int64_t));
		if (cv == NULL)
			goto out;
	}
	for (r = 0; r <= rounds; r++) {
		size_t imb = S->tot_def + S->tot_exc;

		log_debug("assign: round %d, deficit %zu, excess %zu", r,
			  S->tot_def, S->tot_exc);
		if (imb < best_imb) {
			best_imb = imb;
			for (t = 0; t < S->nt; t++)
				best[t] = S->p[tnode(S, (uint32_t)t)];
		}
		if (r == rounds || imb == 0)
			break;
		for (s = 0; s < S->ns; s++) {
			int64_t w = INT64_MAX;

			for (i = S->off[s]; i < S->off[s + 1]; i++)
				if ((S->fl[i] & 1) && arc_val(S, i) < w)
					w = arc_val(S, i);
			if (S->r[s] > 0) {
				int64_t vr = -S->cost_r + S->p[hnode(S, S->gs[s])];

				if (vr < w)
					w = vr;
			}
			beta[s] = w;
		}
		for (t = 0; t < S->nt; t++) {
			uint32_t v = tnode(S, (uint32_t)t), d = dem(S, (uint32_t)t);
			uint32_t inc = S->in[t] - S->q[t];
			int64_t b = S->p[v];
			size_t n = 0, want;

			nb[t] = b;
			needy[t] = 0;
			if (inc < d) {
				for (i = S->roff[t]; i < S->roff[t + 1]; i++) {
					uint32_t a = S->rarc[i];

					if (!(S->fl[a] & 1) && beta[S->rsrc[i]] != INT64_MAX &&
					    S->ls[S->rsrc[i]] > 0)
						x[n++] = beta[S->rsrc[i]] - arc_val(S, a);
				}
				want = d - inc;
				if (want > n && S->hub)
					needy[t] = 1;
			} else if (b > 0 && inc > d) {
				for (i = S->roff[t]; i < S->roff[t + 1]; i++) {
					uint32_t a = S->rarc[i];

					if (S->fl[a] & 1)
						x[n++] = arc_val(S, a) - S->p[S->rsrc[i]];
				}
				want = inc - d;
			} else {
				continue;
			}
			if (n == 0)
				continue;
			if (want > n)
				want = n;
			if (inc < d)
				nb[t] = b + select_kth(x, n, want - 1) + 1;
			else
				nb[t] = b - select_kth(x, n, want - 1) - 1;
			if (nb[t] < 0)
				nb[t] = 0;
			if (nb[t] > cap_b)
				nb[t] = cap_b;
		}
		/*
		 * The hub level B: random links go to the targets at the top
		 * bonus, and a source swaps a link for a random one when its
		 * value is below R + B; B is set so that about as many links
		 * fall below as random links are unavoidable. Targets that
		 * the candidates cannot fill sit at B; no bonus exceeds it.
		 */
		if (S->hub && nrand > 0) {
			size_t m = 0, kth;
			int64_t hb;

			for (s = 0; s < S->ns; s++) {
				for (i = S->off[s]; i < S->off[s + 1]; i++)
					if (S->fl[i] & 1)
						cv[m++] = arc_val(S, i);
				for (i = 0; i < S->r[s]; i++)
					cv[m++] = -S->cost_r +
						  S->p[hnode(S, S->gs[s])];
			}
			kth = nrand < m ? nrand - 1 : (m ? m - 1 : 0);
			if (m > 0) {
				hb = select_kth(cv, m, kth) + S->cost_r + 1;
				if (hb > cap_b)
					hb = cap_b;
				for (t = 0; t < S->nt; t++)
					if (needy[t] || nb[t] > hb)
						nb[t] = hb;
			}
		}
		for (t = 0; t < S->nt; t++)
			S->p[tnode(S, (uint32_t)t)] = nb[t];
		if (init_flow(S, 0) < 0)
			goto out;
	}
	if (S->tot_def + S->tot_exc > best_imb) {
		for (t = 0; t < S->nt; t++)
			S->p[tnode(S, (uint32_t)t)] = best[t];
		if (init_flow(S, 0) < 0)
			goto out;
	}
	rc = 0;
out:
	free(nb);
	free(best);
	free(beta);
	free(x);
	free(cv);
	free(needy);
	return rc;
}

/*
 * ---- cost scaling: near-optimal bonuses in few passes ----
 *
 * Goldberg's cost-scaling push-relabel, specialised to this network, run
 * before the exact phases: it finds bonuses so close to the optimal dual
 * that init_flow() leaves an imbalance the primal-dual phases remove in a
 * handful of passes (each phase is O(n), so their number is what costs).
 *
 * eps-optimality: every residual arc has rc = c + p(u) - p(v) >= -eps.
 * A refine at eps starts from init_flow() of the current bonuses (which
 * is 0-optimal, with imbalances at targets and Y) and discharges every
 * node with excess, first in first out, except that a target a push
 * leaves with an excess is discharged at once, right after the node
 * that filled it (Goldberg and Kennedy's double push: later sources
 * see its lowered potential; 3-10 % on the benchmark):
 *   push    along an admissible arc (rc < 0): a source takes a link, a
 *           target gives one back, surplus goes to Y or the hub;
 *   relabel p(u) = (the e-th largest of p(v) - c(u,v) over u's residual
 *           units) - eps for a node with excess e: e units become
 *           admissible at once and every arc keeps rc >= -eps.
 * Potentials only fall during a refine, which keeps the neighbour
 * structures cheap: a target reaches its links through a max-heap by
 * p(s) + c(s,t) whose keys are fixed lazily at the top; hubs and Y reach
 * their targets (and a hub its sources) through lazy max-heaps by
 * potential. eps falls by CS_ALPHA a refine from CS_EPS0 to one unit of
 * cost (13 refines); each restart keeps the targets' potentials as
 * bonuses, those the hub feeds snapped to its level (cs_bonuses), so
 * that a restart re-creates only the imbalance of arcs within eps. A
 * refine that relabels more than CS_BUDGET times per node gives up (k
 * cannot hold under a max_in cap, or a pathological instance) and the
 * caller falls back to the cost levels. Nothing is claimed here: the
 * exact phases and the certificate that follow decide optimality.
 *
 * Cost: each refine O(n M) for the restart plus the pushes and relabels
 * (about 7 per node per refine on the benchmark), each O(M) for a
 * source and O(log in_t) for a target.
 */
#define CS_EPS0 ((int64_t)1 << 24)	/* one unit of score */
/*
 * A warm start begins at the same eps: a night that changes 1 % of the
 * pages moves the optimal bonuses of a third of the targets (k = L ties
 * every page to every other through chains of link moves), and from
 * yesterday's bonuses a refine at eps 2^18 or finer made more relabels
 * than the whole cold solve and gave up; 2^22 saved nothing
 * (bench/RESULTS.md, issue 17). With yesterday's links as the flow
 * whose ties the restarts keep (third round), 2^18 paid at N = 20,000
 * (0.6 of cold) and gave up again at 100,000; a primal repair by
 * shortest paths from yesterday's flow was 8-14x the cold time
 * (docs/assign.md, "A primal repair, measured").
 */
#define CS_EPS_WARM CS_EPS0
#define CS_ALPHA 4	/* 4 beat 2, 3, 8, 16 and 32 on the benchmark */
#define CS_BUDGET 64
/* |potentials| stay below this, so that link-heap keys (value * 256 +
 * slot) cannot overflow; a refine that goes beyond gives up */
#define CS_PMAX ((int64_t)1 << 52)

#define CS_IN_HUB 1	/* mem[s]: the source is in its hub's heap */
#define CS_IN_Y 2	/* mem[t]: the target is in Y's heap */

#define LH_NOSLOT 255

struct cs {
	int64_t *ex;		/* excess per node */
	uint32_t *ring;		/* FIFO of nodes with excess */
	uint8_t *inq, *mem;
	size_t head, n;
	int64_t eps;
	size_t relabels, limit;
	int oom, range;
	/* the targets' potentials minus pbase (their top at the refine's
	 * start), as int32 while they fit (pt_ok; else the scans read p):
	 * half the bytes for the sources' scans to pull through the cache,
	 * 7-9 % at N = 1,000,000 */
	int32_t *pt;
	int64_t pbase;
	int pt_ok;
	/* targets with excess wait here, not in the FIFO: each is
	 * discharged right after the node that filled it (double push) */
	uint32_t *stk;
	size_t nstk;
	int dp_on;
	double t_start;		/* seconds in cs_start(), all refines */
	int64_t *val;		/* scratch: values of residual units */
	size_t nval, cval;
	/*
	 * Per target, its links by p(s) + c(s,t), in its reverse-CSR
	 * segment: the key, (p(s) + c(s, t) when last looked at) * 256 +
	 * the arc's slot in s's list (LH_NOSLOT if beyond: a give back needs
	 * no search), in hk; the source and cost in hv, which is the
	 * solver's ua (union arc_use): 8 bytes an arc instead of 16 more
	 * while cost scaling runs (256 MB at N = 1,000,000)
	 */
	int64_t *hk;
	union arc_use *hv;
	struct lh_count {
		uint32_t n;	/* links in the segment */
		uint32_t ord;	/* the first ord of them are in heap order */
	} *hn;
	/* per group: its targets, its sources with r > 0; Y: targets with
	 * f_tY > 0; all by potential */
	struct iheap *hubt, *hubs, ys;
};

static void lh_up(int64_t *hk, union arc_use *hv, size_t i)
{
	int64_t xk = hk[i];
	union arc_use xv = hv[i];

	while (i > 0 && hk[(i - 1) / 2] < xk) {
		hk[i] = hk[(i - 1) / 2];
		hv[i].lh = hv[(i - 1) / 2].lh;
		i = (i - 1) / 2;
	}
	hk[i] = xk;
	hv[i].lh = xv.lh;
}

static void lh_down(int64_t *hk, union arc_use *hv, size_t n, size_t i)
{
	int64_t xk = hk[i];
	union arc_use xv = hv[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && hk[c + 1] > hk[c])
			c++;
		if (hk[c] <= xk)
			break;
		hk[i] = hk[c];
		hv[i].lh = hv[c].lh;
		i = c;
	}
	hk[i] = xk;
	hv[i].lh = xv.lh;
}

/* Target t's link heap: add the link from source s at cost c. It joins
 * the heap order only when t next looks at its top (lh_order), which with
 * double push is right after, while the segment is in cache. */
static void lh_add(const struct solver *S, struct cs *C, uint32_t t,
		   uint32_t s, int32_t c, size_t slot)
{
	int64_t *hk = C->hk + S->roff[t];
	union arc_use *hv = C->hv + S->roff[t];
	size_t n = C->hn[t].n++;

	hk[n] = (S->p[s] + c) * 256 +
		(slot < LH_NOSLOT ? (int64_t)slot : LH_NOSLOT);
	hv[n].lh.src = s;
	hv[n].lh.cost = c;
}

/* The arc of source s to target t that carries flow (found on a give
 * back, which is rarer than the top checks the heap serves). */
static uint32_t flow_arc(const struct solver *S, uint32_t s, uint32_t t)
{
	size_t i;

	for (i = S->off[s]; i < S->off[s + 1]; i++)
		if (S->tg[i] == t && (S->fl[i] & 1))
			return (uint32_t)i;
	return NONE;
}

/* The source of target t's link of highest value now, or NONE; *val
 * gets the value, *slot the link's slot in the source's arcs. */
static uint32_t lh_top(const struct solver *S, struct cs *C, uint32_t t,
		       int64_t *val, uint32_t *slot)
{
	int64_t *hk = C->hk + S->roff[t];
	union arc_use *hv = C->hv + S->roff[t];

	while (C->hn[t].ord < C->hn[t].n)
		lh_up(hk, hv, C->hn[t].ord++);
	while (C->hn[t].n > 0) {
		int64_t v = S->p[hv[0].lh.src] + hv[0].lh.cost;
		int64_t sl = hk[0] & 255;

		if (v >= hk[0] >> 8) {
			*val = v;
			*slot = (uint32_t)sl;
			return hv[0].lh.src;
		}
		hk[0] = v * 256 + sl;
		lh_down(hk, hv, C->hn[t].n, 0);
	}
	return NONE;
}

static void lh_pop(const struct solver *S, struct cs *C, uint32_t t)
{
	int64_t *hk = C->hk + S->roff[t];
	union arc_use *hv = C->hv + S->roff[t];
	size_t n = --C->hn[t].n;

	C->hn[t].ord = (uint32_t)n;	/* lh_top() ordered them all */
	if (n > 0) {
		hk[0] = hk[n];
		hv[0].lh = hv[n].lh;
		lh_down(hk, hv, n, 0);
	}
}

/*
 * The valid top of a lazy heap of nodes by potential (keys are -p: the
 * highest potential first), or NONE: nodes that left the set (bit `bit`
 * of mem cleared here) are dropped, stale keys renewed.
 */
static uint32_t lz_top(const struct solver *S, struct cs *C, struct iheap *h,
		       int bit)
{
	while (h->n > 0) {
		uint32_t v = h->a[0].node;
		int in = bit == CS_IN_HUB ? S->r[v] > 0 :
			 bit == CS_IN_Y ? S->fy[v - S->ns] > 0 : 1;

		if (in && -h->a[0].key == S->p[v])
			return v;
		iheap_pop(h);
		if (!in)
			C->mem[v] &= (uint8_t)~bit;
		else if (iheap_push(h, -S->p[v], v) < 0)
			C->oom = 1;
	}
	return NONE;
}

static void lz_join(const struct solver *S, struct cs *C, struct iheap *h,
		    uint32_t v, int bit)
{
	if (!(C->mem[v] & bit)) {
		C->mem[v] |= (uint8_t)bit;
		if (iheap_push(h, -S->p[v], v) < 0)
			C->oom = 1;
	}
}

static void cs_activate(struct solver *S, struct cs *C, uint32_t v)
{
	if (C->ex[v] > 0 && !C->inq[v]) {
		C->inq[v] = 1;
		if (C->dp_on && is_tgt(S, v))
			C->stk[C->nstk++] = v;
		else
			C->ring[(C->head + C->n++) % S->nn] = v;
	}
}

/*
 * Move amt units along the residual arc u -> v (via as in apply_arc).
 * The in-degrees, totals and used lists are left stale (a push would
 * otherwise miss the cache once more): init_flow() renews them after
 * cost scaling, and nothing reads them before.
 */
static void cs_move(struct solver *S, struct cs *C, uint32_t u, uint32_t v,
		    uint32_t via, uint32_t amt)
{
	if (via == VIA_Y) {
		if (u == S->y) {
			S->fy[v - S->ns] -= amt;
		} else {
			S->fy[u - S->ns] += amt;
			lz_join(S, C, &C->ys, u, CS_IN_Y);
		}
	} else if (via == VIA_HUB_T) {
		uint32_t t = (is_hub(S, u) ? v : u) - (uint32_t)S->ns;

		if (is_hub(S, u))
			S->q[t] += amt;
		else
			S->q[t] -= amt;
	} else if (via == VIA_SRC_HUB) {
		if (is_src(S, u)) {
			S->r[u] += amt;
			lz_join(S, C, &C->hubs[S->gs[u]], u, CS_IN_HUB);
		} else {
			S->r[v] -= amt;
		}
	} else {
		/* a candidate link: s -> t takes it, t -> s gives it back
		 * (t pops it from its heap itself) */
		uint32_t t = is_src(S, u) ? S->tg[via] : u - (uint32_t)S->ns;

		S->fl[via] ^= 1;
		if (S->fl[via] & 1)
			lh_add(S, C, t, u, S->cost[via], via - S->off[u]);
	}
	C->ex[u] -= amt;
	C->ex[v] += amt;
	cs_activate(S, C, v);
}

/* Note n copies (at most `want`) of value v for a bulk relabel. */
static void cs_note(struct cs *C, int64_t v, size_t n, size_t want)
{
	if (n > want)
		n = want;
	if (C->nval + n > C->cval) {
		size_t nc = (C->nval + n) * 2 + 64;
		int64_t *na = realloc(C->val, nc * sizeof(int64_t));

		if (na == NULL) {
			C->oom = 1;
			return;
		}
		C->val = na;
		C->cval = nc;
	}
	while (n-- > 0)
		C->val[C->nval++] = v;
}

static void cs_relabel(struct solver *S, struct cs *C, uint32_t u,
		       int64_t best)
{
	S->p[u] = best - C->eps;
	C->relabels++;
	if (C->pt_ok && is_tgt(S, u)) {
		int64_t d = S->p[u] - C->pbase;

		if (d < INT32_MIN)
			C->pt_ok = 0;
		else
			C->pt[u - S->ns] = (int32_t)d;
	}
	if (S->p[u] < -CS_PMAX)
		C->range = 1;
}

/*
 * A source with at most SRC_TOP units of excess: one pass pushes along
 * the admissible arcs and keeps the best e values of the others (a unit
 * to the hub counts once per unit of room); a relabel then makes exactly
 * those admissible and the units follow them without a second scan.
 * 0 done, 1 not applicable (more excess), -1 stuck.
 */
#define SRC_TOP 8

/* Insert (val, a) into kv/ka, descending, keeping the best cap of them. */
static void top_insert(int64_t *kv, uint32_t *ka, size_t *n, size_t cap,
		       int64_t val, uint32_t a)
{
	size_t j;

	if (*n == cap && val <= kv[cap - 1])
		return;
	if (*n < cap)
		(*n)++;
	for (j = *n - 1; j > 0 && kv[j - 1] < val; j--) {
		kv[j] = kv[j - 1];
		ka[j] = ka[j - 1];
	}
	kv[j] = val;
	ka[j] = a;
}

static int cs_discharge_src_few(struct solver *S, struct cs *C, uint32_t s)
{
	int hubok = hub_src(S, s);
	uint32_t h = hubok ? hnode(S, S->gs[s]) : NONE;
	int64_t kv[SRC_TOP + 1];
	uint32_t ka[SRC_TOP + 1];
	size_t i, j, n = 0, want;

	if (C->ex[s] > SRC_TOP)
		return 1;
	want = (size_t)C->ex[s];
	if (C->pt_ok) {
		const int32_t *pt = C->pt;
		int64_t ps = S->p[s] - C->pbase;

		for (i = S->off[s]; i < S->off[s + 1] && i < S->off[s] + 8; i++)
			__builtin_prefetch(&pt[S->tg[i]]);
		for (i = S->off[s]; i < S->off[s + 1] && C->ex[s] > 0; i++) {
			int64_t val;

			if (i + 8 < S->off[s + 1])
				__builtin_prefetch(&pt[S->tg[i + 8]]);
			if (S->fl[i] & 1)
				continue;
			val = (int64_t)pt[S->tg[i]] - S->cost[i];
			if (ps < val) {
				cs_move(S, C, s, tnode(S, S->tg[i]),
					(uint32_t)i, 1);
				continue;
			}
			top_insert(kv, ka, &n, want, val + C->pbase,
				   (uint32_t)i);
		}
	} else {
		for (i = S->off[s]; i < S->off[s + 1] && i < S->off[s] + 8; i++)
			__builtin_prefetch(&S->p[tnode(S, S->tg[i])]);
		for (i = S->off[s]; i < S->off[s + 1] && C->ex[s] > 0; i++) {
			int64_t val;

			if (i + 8 < S->off[s + 1])
				__builtin_prefetch(&S->p[tnode(S, S->tg[i + 8])]);
			if (S->fl[i] & 1)
				continue;
			val = S->p[tnode(S, S->tg[i])] - S->cost[i];
			if (S->p[s] < val) {
				cs_move(S, C, s, tnode(S, S->tg[i]),
					(uint32_t)i, 1);
				continue;
			}
			top_insert(kv, ka, &n, want, val, (uint32_t)i);
		}
	}
	if (hubok && C->ex[s] > 0 && S->r[s] < S->ls[s]) {
		uint32_t room = S->ls[s] - S->r[s];
		int64_t val = S->p[h] - S->cost_r;

		if (S->p[s] < val) {
			cs_move(S, C, s, h, VIA_SRC_HUB,
				C->ex[s] < room ? (uint32_t)C->ex[s] : room);
		} else {
			size_t c;

			for (c = 0; c < room && c < want; c++)
				top_insert(kv, ka, &n, want, val, NONE);
		}
	}
	if (C->ex[s] == 0)
		return 0;
	if (n == 0)
		return -1;
	want = (size_t)C->ex[s] < n ? (size_t)C->ex[s] : n;
	cs_relabel(S, C, s, kv[want - 1]);
	for (j = 0; j < want; j++) {
		if (ka[j] == NONE)
			cs_move(S, C, s, h, VIA_SRC_HUB, 1);
		else
			cs_move(S, C, s, tnode(S, S->tg[ka[j]]), ka[j], 1);
	}
	return C->ex[s] > 0 ? 1 : 0;
}

/* A source takes links: a unit that came back leaves at once. */
static int cs_discharge_src(struct solver *S, struct cs *C, uint32_t s)
{
	int hubok = hub_src(S, s);
	uint32_t h = hubok ? hnode(S, S->gs[s]) : NONE;
	int r = cs_discharge_src_few(S, C, s);

	if (r <= 0)
		return r;
	while (C->ex[s] > 0) {
		size_t i, e;

		C->nval = 0;
		for (i = S->off[s]; i < S->off[s + 1] && C->ex[s] > 0; i++) {
			uint32_t v = tnode(S, S->tg[i]);
			int64_t val;

			if (S->fl[i] & 1)
				continue;
			val = S->p[v] - S->cost[i];
			if (S->p[s] < val)
				cs_move(S, C, s, v, (uint32_t)i, 1);
			else
				cs_note(C, val, 1, 1);
		}
		if (hubok && C->ex[s] > 0 && S->r[s] < S->ls[s]) {
			uint32_t room = S->ls[s] - S->r[s];
			int64_t val = S->p[h] - S->cost_r;

			if (S->p[s] < val)
				cs_move(S, C, s, h, VIA_SRC_HUB,
					C->ex[s] < room ? (uint32_t)C->ex[s] : room);
			else
				cs_note(C, val, room, (size_t)C->ex[s]);
		}
		if (C->ex[s] == 0)
			break;
		if (C->nval == 0)
			return -1;
		e = (size_t)C->ex[s] < C->nval ? (size_t)C->ex[s] : C->nval;
		cs_relabel(S, C, s, select_kth(C->val, C->nval, C->nval - e));
	}
	return 0;
}

/* A target gives links back (its weakest by p(s) + c first), or its
 * surplus to Y or to the hub. */
static int cs_discharge_tgt(struct solver *S, struct cs *C, uint32_t v)
{
	uint32_t t = v - (uint32_t)S->ns;
	uint32_t h = S->hub ? hnode(S, S->gt[t]) : NONE;

	while (C->ex[v] > 0) {
		int64_t best = INT64_MIN, hv;
		uint32_t src, slot;

		if (fty(S, t) < fty_cap(S, t)) {
			uint32_t room = fty_cap(S, t) - fty(S, t);

			if (S->p[v] < S->p[S->y]) {
				cs_move(S, C, v, S->y, VIA_Y,
					C->ex[v] < room ? (uint32_t)C->ex[v] : room);
				continue;
			}
			best = S->p[S->y];
		}
		if (S->hub && S->q[t] > 0) {
			if (S->p[v] < S->p[h]) {
				cs_move(S, C, v, h, VIA_HUB_T,
					C->ex[v] < S->q[t] ? (uint32_t)C->ex[v] : S->q[t]);
				continue;
			}
			if (S->p[h] > best)
				best = S->p[h];
		}
		src = lh_top(S, C, t, &hv, &slot);
		if (src != NONE) {
			if (S->p[v] < hv) {
				lh_pop(S, C, t);
				cs_move(S, C, v, src, slot < LH_NOSLOT ?
					(uint32_t)(S->off[src] + slot) :
					flow_arc(S, src, t), 1);
				continue;
			}
			if (hv > best)
				best = hv;
		}
		if (best == INT64_MIN)
			return -1;
		cs_relabel(S, C, v, best);
	}
	return 0;
}

static int cs_discharge_hub(struct solver *S, struct cs *C, uint32_t h)
{
	uint32_t g = h - (uint32_t)(S->ns + S->nt);

	while (C->ex[h] > 0) {
		int64_t best = INT64_MIN;
		uint32_t s = lz_top(S, C, &C->hubs[g], CS_IN_HUB);
		uint32_t v = lz_top(S, C, &C->hubt[g], 0);

		if (s != NONE) {
			if (S->p[h] - S->cost_r < S->p[s]) {
				cs_move(S, C, h, s, VIA_SRC_HUB,
					C->ex[h] < S->r[s] ? (uint32_t)C->ex[h] : S->r[s]);
				continue;
			}
			best = S->p[s] + S->cost_r;
		}
		if (v != NONE) {
			if (S->p[h] < S->p[v]) {
				cs_move(S, C, h, v, VIA_HUB_T, (uint32_t)C->ex[h]);
				continue;
			}
			if (S->p[v] > best)
				best = S->p[v];
		}
		if (best == INT64_MIN)
			return -1;
		cs_relabel(S, C, h, best);
	}
	return 0;
}

static int cs_discharge_y(struct solver *S, struct cs *C)
{
	while (C->ex[S->y] > 0) {
		uint32_t v = lz_top(S, C, &C->ys, CS_IN_Y);

		if (v == NONE)
			return -1;
		if (S->p[S->y] < S->p[v]) {
			uint32_t f = S->fy[v - S->ns];

			cs_move(S, C, S->y, v, VIA_Y,
				C->ex[S->y] < f ? (uint32_t)C->ex[S->y] : f);
			continue;
		}
		cs_relabel(S, C, S->y, S->p[v]);
	}
	return 0;
}

/*
 * Bonuses from potentials: p(t) - p(Y), at least 0; p(Y) = 0. Targets
 * that the hub feeds sit within eps of the hub's potential; they all get
 * the group's top such bonus, since init_flow() sends random links only
 * to targets at the top bonus (otherwise a restart would take them away).
 */
static void cs_bonuses(struct solver *S)
{
	size_t t, g, i;

	for (t = 0; t < S->nt; t++) {
		int64_t b = S->p[tnode(S, (uint32_t)t)] - S->p[S->y];

		S->p[tnode(S, (uint32_t)t)] = b > 0 ? b : 0;
	}
	S->p[S->y] = 0;
	for (g = 0; g < S->ng && S->hub; g++) {
		int64_t top = INT64_MIN;

		for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++)
			if (S->q[S->gtgt[i]] > 0 &&
			    S->p[tnode(S, S->gtgt[i])] > top)
				top = S->p[tnode(S, S->gtgt[i])];
		for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++)
			if (S->q[S->gtgt[i]] > 0)
				S->p[tnode(S, S->gtgt[i])] = top;
	}
}

/* Targets lo..hi: their link heaps, filled from their used lists (in
 * source order: the order lh_add() saw them in when sources were walked
 * one by one) */
static void lh_part(struct solver *S, void *ctx, size_t lo, size_t hi,
		    size_t part)
{
	struct cs *C = ctx;
	size_t t, i;

	(void)part;
	for (t = lo; t < hi; t++) {
		C->hn[t].n = C->hn[t].ord = 0;
		for (i = 0; i < S->nused[t]; i++) {
			uint32_t pos = S->ua[S->roff[t] + i].u.list;
			uint32_t a = S->rarc[pos], s = S->rsrc[pos];

			lh_add(S, C, (uint32_t)t, s, S->cost[a], a - S->off[s]);
		}
	}
}

/* The flow init_flow() makes from the current bonuses, its excesses and
 * the neighbour heaps. */
static int cs_start(struct solver *S, struct cs *C)
{
	size_t t, g, i, s;
	int64_t ey = 0;

	cs_bonuses(S);
	if (init_flow(S, 0) < 0)
		return -1;
	memset(C->ex, 0, S->nn * sizeof(int64_t));
	memset(C->mem, 0, S->nn);
	for (t = 0; t < S->nt; t++) {
		uint32_t v = tnode(S, (uint32_t)t);

		C->ex[v] = bal(S, (uint32_t)t);
		ey -= C->ex[v];
		if (S->fy[t] > 0)
			lz_join(S, C, &C->ys, v, CS_IN_Y);
	}
	for (g = 0; g < S->ng && S->hub; g++) {
		int64_t e = 0;

		C->hubt[g].n = 0;
		C->hubs[g].n = 0;
		for (i = S->gsoff[g]; i < S->gsoff[g + 1]; i++) {
			s = S->gsrc[i];
			e += S->r[s];
			if (S->r[s] > 0)
				lz_join(S, C, &C->hubs[g], (uint32_t)s, CS_IN_HUB);
		}
		for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++) {
			uint32_t v = tnode(S, S->gtgt[i]);

			e -= S->q[S->gtgt[i]];
			if (iheap_push(&C->hubt[g], -S->p[v], v) < 0)
				return -1;
		}
		C->ex[hnode(S, (uint32_t)g)] = e;
		ey -= e;
	}
	C->pbase = 0;
	for (t = 0; t < S->nt; t++)
		if (S->p[tnode(S, (uint32_t)t)] > C->pbase)
			C->pbase = S->p[tnode(S, (uint32_t)t)];
	C->pt_ok = 1;
	for (t = 0; t < S->nt && C->pt_ok; t++) {
		int64_t d = S->p[tnode(S, (uint32_t)t)] - C->pbase;

		if (d < INT32_MIN)
			C->pt_ok = 0;
		else
			C->pt[t] = (int32_t)d;
	}
	/* what is left is Y's (init_flow balances every source) */
	C->ex[S->y] = ey;
	par_for(S, S->nt, lh_part, C);
	return C->oom ? -1 : 0;
}

/* One refine at C->eps: 0 done, 1 gave up, -1 no memory. */
static int cs_refine(struct solver *S, struct cs *C)
{
	size_t v;
	double t0 = now_seconds();

	C->ys.n = 0;
	if (cs_start(S, C) < 0)
		return -1;
	C->t_start += now_seconds() - t0;
	memset(C->inq, 0, S->nn);
	C->head = C->n = 0;
	C->dp_on = 0;
	C->nstk = 0;
	for (v = 0; v < S->nn; v++)
		cs_activate(S, C, (uint32_t)v);
	C->dp_on = 1;
	C->limit = C->relabels + CS_BUDGET * S->nn;
	while (C->n > 0) {
		uint32_t u = C->ring[C->head];
		int r;

		C->head = (C->head + 1) % S->nn;
		C->n--;
		C->inq[u] = 0;
		if (is_src(S, u))
			r = cs_discharge_src(S, C, u);
		else if (is_tgt(S, u))
			r = cs_discharge_tgt(S, C, u);
		else if (u == S->y)
			r = cs_discharge_y(S, C);
		else
			r = cs_discharge_hub(S, C, u);
		while (r == 0 && C->nstk > 0) {
			uint32_t t = C->stk[--C->nstk];

			C->inq[t] = 0;
			r = cs_discharge_tgt(S, C, t);
		}
		if (C->oom)
			return -1;
		if (r < 0 || C->relabels > C->limit || C->range)
			return 1;
	}
	return 0;
}

/*
 * Bonuses by cost scaling (above), from the bonuses in S->p at eps0
 * (CS_EPS0 cold; CS_EPS_WARM from yesterday's). 2: the last refine's
 * flow is optimal and S->p certifies it (repair_potentials(); its in[],
 * used lists and heaps are for adopt_flow() to renew); 0: S->p holds the
 * bonuses for init_flow(); 1: gave up (S->p is then zeroed); -1: no
 * memory.
 */
static int repair_potentials(struct solver *S, struct cs *C);

static int cost_scale(struct solver *S, int64_t eps0)
{
	struct cs C;
	size_t g;
	int rc = -1, r = 0;

	memset(&C, 0, sizeof(C));
	C.ex = malloc(S->nn * sizeof(int64_t));
	C.ring = malloc(S->nn * sizeof(uint32_t));
	C.inq = malloc(S->nn);
	C.mem = malloc(S->nn);
	C.hk = malloc((S->na + 1) * sizeof(int64_t));
	C.hv = S->ua;
	C.hn = malloc((S->nt + 1) * sizeof(*C.hn));
	C.hubt = calloc(S->ng + 1, sizeof(struct iheap));
	C.hubs = calloc(S->ng + 1, sizeof(struct iheap));
	C.stk = malloc((S->nt + 1) * sizeof(uint32_t));
	C.pt = malloc((S->nt + 1) * sizeof(int32_t));
	if (!C.ex || !C.ring || !C.inq || !C.mem || !C.hk || !C.hn ||
	    !C.hubt || !C.hubs || !C.stk || !C.pt)
		goto out;
	for (C.eps = eps0; r == 0; C.eps /= CS_ALPHA) {
		if (C.eps < 1)
			C.eps = 1;
		r = cs_refine(S, &C);
		log_debug("assign: refine at eps %lld: %s, %zu relabels",
			  (long long)C.eps, r ? "gave up" : "done", C.relabels);
		if (C.eps == 1)
			break;
	}
	log_debug("assign: %.3f s of cost scaling in the restarts (%zu "
		  "threads)", C.t_start, S->threads);
	if (r < 0)
		goto out;
	if (r > 0)
		memset(S->p, 0, S->nn * sizeof(int64_t));
	else if (C.eps == 1 && (r = repair_potentials(S, &C)) == 0)
		r = 2;	/* the last refine's flow, optimal */
	else if (r >= 0) {
		r = 0;
		cs_bonuses(S);
	}
	rc = r;
out:
	for (g = 0; C.hubt && C.hubs && g < S->ng; g++) {
		free(C.hubt[g].a);
		free(C.hubs[g].a);
	}
	free(C.hubt);
	free(C.hubs);
	free(C.ys.a);
	free(C.ex);
	free(C.ring);
	free(C.inq);
	free(C.mem);
	free(C.val);
	free(C.hk);
	free(C.hn);
	free(C.stk);
	free(C.pt);
	return rc;
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
		if (hub_src(S, (uint32_t)s)) {
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

/*
 * ---- the hand-off: the last refine's flow, its potentials repaired ----
 *
 * The last refine (eps = 1 unit of cost) ends with a balanced flow f and
 * potentials p under which every residual arc has rc >= -1. Until issue
 * 17c the solve kept only the bonuses and rebuilt the flow from them in
 * closed form (init_flow), which re-opens every arc at rc = -1: on the
 * real vectors of a 200,000-page site that left 4,138-14,434 units of
 * imbalance, and the phases and single paths that routed them took 36 to
 * 150 s, each path's search crossing the plateau of targets at the hub's
 * level (147,000 of them, all at distance 0 through the hub) to move one
 * unit (bench/RESULTS.md, issue 17c).
 *
 * Instead the flow is kept and only the potentials move. f is optimal iff
 * its residual graph has no negative cycle; then the shortest distances
 * d(v) <= 0 from a virtual root joined to every node by a 0 arc give
 * p' = p + d with rc' = rc + d(u) - d(v) >= 0 on every residual arc: a
 * certificate for f as it is. d is found by a FIFO label-correcting
 * search (Bellman-Ford's queue form; rc may be negative): the first pass
 * scans every arc once, later ones only nodes whose label fell, so the
 * work follows the violated arcs (200,000 real pages: 3.8 passes' worth
 * of arc scans, labels down to -12 units; 20,000 synthetic: 2.5). A hub
 * or Y whose label falls relaxes all its arcs, which happens once per
 * level of labels, not once per unit as with the single paths.
 *
 * Stopping cost scaling at a coarser eps and leaving more to this search
 * was measured (eps 16 to 1,024 at N = 20,000 and 100,000): from eps 16
 * on the flow has negative cycles, found only after several passes
 * each, and from 1,024 the budget runs out; the refines it saves are
 * 3-7 % of the relabels. So cost scaling still ends at eps = 1.
 *
 * f need not be optimal (eps = 1 only bounds a cycle's cost by its
 * length): a negative cycle shows as a cycle of the parent pointers
 * (checked after every n pops, O(n)), and is cancelled: one unit around
 * it (every residual arc carries one), which lowers the cost, and the
 * labels start again. A work budget (RP_PASSES passes over the arcs)
 * bounds it all; beyond it the solve takes the closed-form hand-off, as
 * before. Either way certify() checks the result. The budget is wide:
 * on the real 900,000-page site two cycles took 15.2 passes (27 s wall
 * at load 7), while the closed-form hand-off there left 52,240 units,
 * 13,077 of them for single paths that had not finished after 30 min.
 */
#define RP_PASSES 64

/* the search's arrays, borrowed from cost scaling's (struct cs), whose
 * refines are over: no memory beyond theirs */
struct rp {
	int64_t *d;		/* C->ex */
	uint32_t *ring;		/* C->ring */
	uint32_t *mark;		/* S->settled */
	uint8_t *inq;		/* C->inq */
	size_t head, n;
};

static inline void rp_relax(struct solver *S, struct rp *R, uint32_t u,
			    uint32_t v, int64_t c, uint32_t via)
{
	int64_t nd = R->d[u] + c + S->p[u] - S->p[v];

	if (nd < R->d[v]) {
		R->d[v] = nd;
		S->nxt[v] = u;
		S->via[v] = via;
		if (!R->inq[v]) {
			R->inq[v] = 1;
			R->ring[(R->head + R->n++) % S->nn] = v;
		}
	}
}

/* Relax every residual arc out of u; returns the arcs looked at. */
static size_t rp_scan(struct solver *S, struct rp *R, uint32_t u)
{
	size_t i;

	if (is_src(S, u)) {
		for (i = S->off[u]; i < S->off[u + 1]; i++)
			if (!(S->fl[i] & 1))
				rp_relax(S, R, u, tnode(S, S->tg[i]), S->cost[i],
					 (uint32_t)i);
		if (hub_src(S, u) && S->r[u] < S->ls[u])
			rp_relax(S, R, u, hnode(S, S->gs[u]), S->cost_r,
				 VIA_SRC_HUB);
		return S->off[u + 1] - S->off[u] + 1;
	}
	if (is_tgt(S, u)) {
		uint32_t t = u - (uint32_t)S->ns;

		for (i = S->roff[t]; i < S->roff[t + 1]; i++) {
			uint32_t a = S->rarc[i];

			if (S->fl[a] & 1)
				rp_relax(S, R, u, S->rsrc[i],
					 -(int64_t)S->cost[a], a);
		}
		if (S->hub && S->q[t] > 0)
			rp_relax(S, R, u, hnode(S, S->gt[t]), 0, VIA_HUB_T);
		if (S->fy[t] < fty_cap(S, t))
			rp_relax(S, R, u, S->y, 0, VIA_Y);
		return S->roff[t + 1] - S->roff[t] + 2;
	}
	if (is_hub(S, u)) {
		uint32_t g = u - hnode(S, 0);

		for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++)
			rp_relax(S, R, u, tnode(S, S->gtgt[i]), 0, VIA_HUB_T);
		for (i = S->gsoff[g]; i < S->gsoff[g + 1]; i++)
			if (S->r[S->gsrc[i]] > 0)
				rp_relax(S, R, u, S->gsrc[i], -S->cost_r,
					 VIA_SRC_HUB);
		return S->gtoff[g + 1] - S->gtoff[g] + S->gsoff[g + 1] -
		       S->gsoff[g];
	}
	for (i = 0; i < S->nt; i++)
		if (S->fy[i] > 0)
			rp_relax(S, R, u, tnode(S, (uint32_t)i), 0, VIA_Y);
	return S->nt;
}

/* One unit along the residual arc u -> v: the flow only (adopt_flow()
 * renews what follows from it). */
static void rp_push(struct solver *S, uint32_t u, uint32_t v, uint32_t via)
{
	if (via == VIA_Y) {
		if (u == S->y)
			S->fy[v - S->ns]--;
		else
			S->fy[u - S->ns]++;
	} else if (via == VIA_HUB_T) {
		if (is_hub(S, u))
			S->q[v - S->ns]++;
		else
			S->q[u - S->ns]--;
	} else if (via == VIA_SRC_HUB) {
		if (is_src(S, u))
			S->r[u]++;
		else
			S->r[v]--;
	} else {
		S->fl[via] ^= 1;
	}
}

/* A cycle of the parent pointers (a negative cycle), cancelled; 1 if
 * there was one. */
static int rp_cancel_cycle(struct solver *S, struct rp *R)
{
	size_t v;

	memset(R->mark, 0, S->nn * sizeof(uint32_t));
	for (v = 0; v < S->nn; v++) {
		uint32_t x = (uint32_t)v, id = (uint32_t)v + 1, c;

		while (x != NONE && R->mark[x] == 0) {
			R->mark[x] = id;
			x = S->nxt[x];
		}
		if (x == NONE || R->mark[x] != id)
			continue;
		/* x is on a cycle: nxt[c] -> c are its arcs */
		c = x;
		do {
			uint32_t u = S->nxt[c];

			rp_push(S, u, c, S->via[c]);
			c = u;
		} while (c != x);
		return 1;
	}
	return 0;
}

/* 0: f kept and S->p certifies it; 1: over budget (S->p as it was, the
 * flow perhaps improved by cancelled cycles). */
static int repair_potentials(struct solver *S, struct cs *C)
{
	struct rp R;
	size_t v, pops = 0, work = 0, budget = RP_PASSES * (S->na + S->nn);
	size_t cycles = 0;

	memset(&R, 0, sizeof(R));
	R.d = C->ex;
	R.ring = C->ring;
	R.mark = S->settled;
	R.inq = C->inq;
restart:
	for (v = 0; v < S->nn; v++) {
		R.d[v] = 0;
		S->nxt[v] = NONE;
		R.ring[v] = (uint32_t)v;
		R.inq[v] = 1;
	}
	R.head = 0;
	R.n = S->nn;
	while (R.n > 0 && work < budget) {
		uint32_t u = R.ring[R.head];

		R.head = (R.head + 1) % S->nn;
		R.n--;
		R.inq[u] = 0;
		work += rp_scan(S, &R, u);
		if (++pops % S->nn == 0 && rp_cancel_cycle(S, &R)) {
			cycles++;
			goto restart;
		}
	}
	log_debug("assign: hand-off: potentials %s after %zu pops (%.1f "
		  "passes), %zu negative cycles cancelled",
		  R.n ? "not repaired" : "repaired", pops,
		  (double)work / (double)(S->na + S->nn), cycles);
	if (R.n > 0)
		return 1;
	for (v = 0; v < S->nn; v++)
		S->p[v] += R.d[v];
	return 0;
}

/* The derived state of the flow cost scaling left (in-degrees, used
 * lists, totals, the search heaps), which its pushes left stale. */
static void adopt_flow(struct solver *S)
{
	size_t t;

	par_for(S, S->nt, used_part, S);
	for (t = 0; t < S->nt; t++)
		S->in[t] += S->q[t];
	recount(S);
	ph_rebuild(S);
}

/*
 * ---- primal-dual phases ----
 *
 * One Dijkstra from every excess node at once (no early stop) gives each
 * node its distance d(v); p(v) += min(d(v), Dmax) makes every shortest
 * path tight (rc = 0) at once, for every deficit node. A blocking flow of
 * unit paths over the tight residual arcs (depth-first, current-arc
 * pointers, dead ends pruned for the phase) then moves as many units as
 * it can before the next Dijkstra. Optimality is kept as in SSP: flow
 * moves only on arcs with rc = 0.
 */

/* The idx-th residual arc out of v, if it is tight; returns 1 and the head. */
static int tight_arc(const struct solver *S, uint32_t v, uint32_t idx,
		     uint32_t *w, uint32_t *via)
{
	const int64_t *p = S->p;

	if (is_src(S, v)) {
		size_t deg = S->off[v + 1] - S->off[v];

		if (idx < deg) {
			size_t a = S->off[v] + idx;
			uint32_t t = tnode(S, S->tg[a]);

			if (S->fl[a] & 1 || S->cost[a] + p[v] - p[t] != 0)
				return 0;
			*w = t;
			*via = (uint32_t)a;
			return 1;
		}
		if (idx == deg && hub_src(S, v) && S->r[v] < S->ls[v]) {
			uint32_t h = hnode(S, S->gs[v]);

			if (S->cost_r + p[v] - p[h] != 0)
				return 0;
			*w = h;
			*via = VIA_SRC_HUB;
			return 1;
		}
		return 0;
	}
	if (is_tgt(S, v)) {
		uint32_t t = v - (uint32_t)S->ns;
		size_t deg = S->nused[t];

		if (idx < deg) {
			size_t i = S->ua[S->roff[t] + idx].u.list;
			uint32_t a = S->rarc[i], s = S->rsrc[i];

			if (-S->cost[a] + p[v] - p[s] != 0)
				return 0;
			*w = s;
			*via = a;
			return 1;
		}
		if (idx == deg && S->hub && S->q[t] > 0) {
			uint32_t h = hnode(S, S->gt[t]);

			if (p[v] - p[h] != 0)
				return 0;
			*w = h;
			*via = VIA_HUB_T;
			return 1;
		}
		if (idx == deg + 1 && S->fy[t] < fty_cap(S, t)) {
			if (p[v] - p[S->y] != 0)
				return 0;
			*w = S->y;
			*via = VIA_Y;
			return 1;
		}
		return 0;
	}
	if (is_hub(S, v)) {
		uint32_t g = v - hnode(S, 0);
		size_t nt = S->gtoff[g + 1] - S->gtoff[g];

		if (idx < nt) {
			uint32_t t = tnode(S, S->gtgt[S->gtoff[g] + idx]);

			if (p[v] - p[t] != 0)
				return 0;
			*w = t;
			*via = VIA_HUB_T;
			return 1;
		}
		if (idx < nt + S->gsoff[g + 1] - S->gsoff[g]) {
			uint32_t s = S->gsrc[S->gsoff[g] + idx - nt];

			if (S->r[s] == 0 || -S->cost_r + p[v] - p[s] != 0)
				return 0;
			*w = s;
			*via = VIA_SRC_HUB;
			return 1;
		}
		return 0;
	}
	if (idx < S->nt) {
		uint32_t t = tnode(S, idx);

		if (S->fy[idx] == 0 || p[v] - p[t] != 0)
			return 0;
		*w = t;
		*via = VIA_Y;
		return 1;
	}
	return 0;
}

static uint32_t arc_count(const struct solver *S, uint32_t v)
{
	if (is_src(S, v))
		return (uint32_t)(S->off[v + 1] - S->off[v] + 1);
	if (is_tgt(S, v))
		return S->nused[v - S->ns] + 2;
	if (is_hub(S, v)) {
		uint32_t g = v - hnode(S, 0);

		return (uint32_t)(S->gtoff[g + 1] - S->gtoff[g] +
				  S->gsoff[g + 1] - S->gsoff[g]);
	}
	return (uint32_t)S->nt;
}

static int has_excess(const struct solver *S, uint32_t v)
{
	if (v == S->y)
		return S->tot_def > S->tot_exc;
	return exc_of(S, v - (uint32_t)S->ns) > 0;
}

/*
 * One phase: the search stops at the batch-th settled sink (resolve()
 * passes 1; any batch is sound), p += min(d, dmax) makes the shortest
 * paths to the settled sinks tight, and a blocking flow augments along
 * every tight arc. *moved = the units augmented. 1 = flow moved, 0 = no
 * deficit reachable, 2 = none moved.
 */
/* Which nodes end a path of tight_path(): a sink of the phase, a hub, or
 * a target short of its k (the night's rounds). */
enum path_end { END_SINK, END_HUB, END_DEFICIT };

static int path_ends(const struct solver *S, uint32_t u, enum path_end e)
{
	switch (e) {
	case END_SINK:
		return is_sink(S, u);
	case END_HUB:
		return is_hub(S, u);
	default:
		return is_tgt(S, u) && def_of(S, u - (uint32_t)S->ns) > 0;
	}
}

/*
 * A blocking flow's step: one unit path over tight arcs from x to a node
 * that ends it (e), by depth-first search with the current-arc pointers
 * cur[], skipping nodes found dead this epoch (seen[]) and marking the
 * dead ends it meets. The path is applied and its last node put in *end:
 * 1; no path (x is then dead): 0.
 */
static int tight_path(struct solver *S, uint32_t x, enum path_end e,
		      uint32_t *stk, uint32_t *svia, uint32_t *cur,
		      uint32_t *end)
{
	size_t n = 1, j;

	stk[0] = x;
	S->done[x] = S->epoch;	/* done[] marks "on the stack" */
	while (n > 0) {
		uint32_t u = stk[n - 1], w = 0, via = 0;

		if (n > 1 && path_ends(S, u, e))
			break;
		while (cur[u] < arc_count(S, u)) {
			if (tight_arc(S, u, cur[u], &w, &via) &&
			    S->seen[w] != S->epoch && S->done[w] != S->epoch)
				break;
			cur[u]++;
		}
		if (cur[u] < arc_count(S, u)) {
			svia[n] = via;
			stk[n++] = w;
			S->done[w] = S->epoch;
		} else {
			S->seen[u] = S->epoch;	/* dead */
			S->done[u] = 0;
			n--;
			if (n > 0)
				cur[stk[n - 1]]++;
		}
	}
	if (n == 0)
		return 0;
	for (j = 0; j + 1 < n; j++) {
		apply_arc(S, stk[j], stk[j + 1], svia[j + 1]);
		S->done[stk[j]] = 0;
	}
	S->done[stk[n - 1]] = 0;
	S->augmentations++;
	*end = stk[n - 1];
	return 1;
}

static int pd_phase(struct solver *S, uint32_t *stk, uint32_t *svia,
		    uint32_t *cur, uint32_t *srcs, size_t nsrc, size_t batch,
		    size_t *moved_out)
{
	int64_t dmax = 0;
	size_t i, moved = 0, reached = 0;
	uint32_t v;

	*moved_out = 0;
	new_epoch(S);
	for (i = 0; i < nsrc; i++) {
		S->seen[srcs[i]] = S->epoch;
		S->dist[srcs[i]] = 0;
		if (heap_push(S, 0, srcs[i]) < 0)
			return -1;
	}
	while (S->hq.n > 0) {
		struct heap_item it = heap_pop(S);

		if (it.node == UINT32_MAX)
			return -1;

		v = it.node;
		if (v >= S->nn) {
			if (walk_step(S, v - (uint32_t)S->nn) < 0)
				return -1;
			continue;
		}
		if (S->done[v] == S->epoch || it.key > S->dist[v])
			continue;
		S->done[v] = S->epoch;
		S->settled[S->n_settled++] = v;
		dmax = it.key;
		if (is_sink(S, v) && ++reached >= batch)
			break;
		if (expand_fwd(S, v, it.key) < 0)
			return -1;
	}
	if (!reached)
		return 0;
	/* p += min(d, dmax), shifted by -dmax: only settled nodes move */
	for (i = 0; i < S->n_settled; i++) {
		v = S->settled[i];
		S->p[v] += S->dist[v] - dmax;
		if (v < S->ns + S->nt)
			ph_update(S, v);
	}
	/* blocking flow: dead[] reuses seen[] with a new epoch */
	new_epoch(S);
	memset(cur, 0, S->nn * sizeof(uint32_t));
	for (i = 0; i < nsrc; i++) {
		uint32_t x = srcs[i];

		while (has_excess(S, x) && S->seen[x] != S->epoch) {
			uint32_t end;

			if (!tight_path(S, x, END_SINK, stk, svia, cur, &end))
				break;
			moved++;
		}
	}
	*moved_out = moved;
	return moved > 0 ? 1 : 2;
}


/*
 * Phases 1-2: remove every imbalance by shortest paths. While Y lacks flow
 * (more excess than deficit at the targets) an excess target searches
 * forward, else a deficit target searches backward; so Y is always a
 * terminal and its n arcs are never scanned. 0 ok, 1 infeasible, -1 no
 * memory.
 */
static int resolve_ssp(struct solver *S)
{
	uint32_t *dl = NULL, *el = NULL;
	size_t nd = 0, ne = 0, id = 0, ie = 0, t;
	int rc = -1;

	dl = malloc((S->nt + 1) * sizeof(uint32_t));
	el = malloc((S->nt + 1) * sizeof(uint32_t));
	if (dl == NULL || el == NULL)
		goto out;
	ph_rebuild(S);	/* the phases moved potentials under the heaps */
	for (t = 0; t < S->nt; t++) {
		if (def_of(S, (uint32_t)t))
			dl[nd++] = (uint32_t)t;
		if (exc_of(S, (uint32_t)t))
			el[ne++] = (uint32_t)t;
	}
	while (S->tot_def + S->tot_exc > 0) {
		int r;

		if (S->tot_exc > S->tot_def) {
			while (ie < ne && exc_of(S, el[ie]) == 0)
				ie++;
			if (ie == ne)
				break;	/* cannot happen: kept for safety */
			r = augment(S, tnode(S, el[ie]), 0, SIZE_MAX);
		} else {
			while (id < nd && def_of(S, dl[id]) == 0)
				id++;
			if (id == nd)
				break;
			r = augment(S, tnode(S, dl[id]), 1, SIZE_MAX);
		}
		if (r <= 0) {
			rc = r < 0 ? -1 : 1;
			goto out;
		}
	}
	rc = (S->tot_def + S->tot_exc) ? 1 : 0;
out:
	free(dl);
	free(el);
	return rc;
}

/*
 * The last few units go by single shortest paths (resolve_ssp): at
 * N = 1,000,000 the hand-off after cost scaling ends with 8 units whose
 * phases each settled over a million nodes from a handful of excess
 * nodes (3.52 million in three phases, 31 s wall at load 10); single
 * paths from the deficits settled 2.37 million (8.4 s), same links
 * (bench/RESULTS.md, issue 17, third round).
 */
#define RESOLVE_SSP_TAIL 16

/*
 * Phases 1-2 by primal-dual phases; single paths (resolve_ssp()) once a
 * phase moves at most one unit, or when at most RESOLVE_SSP_TAIL units
 * of imbalance are left.
 *
 * A phase's search stops at its first settled sink (batch 1): the
 * search stays local and the blocking flow then uses every tight arc,
 * so the first phases move thousands of units (a fixed batch of
 * max(deficit, excess)/4 made the synthetic solve 2.5-3x slower). On
 * real sites the phases after the first two or three moved one unit
 * each (200,000 pages: 849 phases for 14,434 units, 1,000,000 pages:
 * 13,364 units at ~1 s a phase), and a larger batch does not help:
 * doubled up to every deficit left (939), a phase still moved one unit,
 * at two to five times the search. The shortest paths to the deficits
 * share a bottleneck, so each unit needs its own change of potentials;
 * one shortest path from a deficit to the nearest excess (resolve_ssp())
 * is the cheaper search for that (bench/RESULTS.md, issue 17b).
 */
static int resolve(struct solver *S)
{
	uint32_t *stk = NULL, *svia = NULL, *cur = NULL, *srcs = NULL;
	size_t t, nsrc, nexc = 0, sum, moved;
	int rc = -1, r, y;

	stk = malloc((S->nn + 1) * sizeof(uint32_t));
	svia = malloc((S->nn + 1) * sizeof(uint32_t));
	cur = malloc((S->nn + 1) * sizeof(uint32_t));
	srcs = malloc((S->nt + 2) * sizeof(uint32_t));
	if (!stk || !svia || !cur || !srcs)
		goto out;
	while (S->tot_def + S->tot_exc > 0) {
		if (S->tot_def + S->tot_exc <= RESOLVE_SSP_TAIL) {
			rc = resolve_ssp(S);
			goto out;
		}
		/* the excess targets of the last phase, those still in
		 * excess kept: a path takes excess from where it starts
		 * only, so no target gains any; the full scan when the sum
		 * disagrees (the first phase) */
		for (t = 0, nsrc = 0, sum = 0; t < nexc; t++) {
			uint32_t e = exc_of(S, srcs[1 + t] - (uint32_t)S->ns);

			sum += e;
			if (e)
				srcs[1 + nsrc++] = srcs[1 + t];
		}
		if (sum != S->tot_exc)
			for (t = 0, nsrc = 0; t < S->nt; t++)
				if (exc_of(S, (uint32_t)t))
					srcs[1 + nsrc++] = tnode(S, (uint32_t)t);
		nexc = nsrc;
		y = S->tot_def > S->tot_exc;	/* Y the source in srcs[0] */
		srcs[0] = S->y;
		r = pd_phase(S, stk, svia, cur, srcs + !y, nexc + y, 1, &moved);
		if (r < 0)
			goto out;
		if (r == 0) {
			rc = 1;
			goto out;
		}
		S->phases++;
		if (r == 2) {
			r = resolve_ssp(S);
			rc = r;
			goto out;
		}
		log_debug("assign: phase %zu, moved %zu, deficit %zu, "
			  "excess %zu", S->phases, moved, S->tot_def,
			  S->tot_exc);
		if (moved <= 1) {	/* stalled: one path a unit */
			rc = resolve_ssp(S);
			goto out;
		}
	}
	rc = 0;
out:
	free(stk);
	free(svia);
	free(cur);
	free(srcs);
	return rc;
}

/*
 * ---- the night: yesterday's flow, only the change routed ----
 *
 * A night changes about 1 % of the pages and 2 % of the links (the
 * primal change is local), while the optimal potentials of many pages
 * move a little (docs/assign.md, "The warm target"). So a night starts
 * from yesterday's links and bonuses (params.prev and params.warm, which
 * the pipeline maps to today's pages) and moves only the units of flow
 * the change disturbed, by shortest paths: every step keeps rc >= 0 on
 * every residual arc, so the balanced flow at the end is optimal and
 * its potentials are its certificate, with nothing rebuilt.
 *
 * 1. night_start(): yesterday's links become the flow that phase 0
 *    (init_flow) keeps on ties, yesterday's random links per target the
 *    hub flow it keeps; targets start at yesterday's bonus, a new page
 *    at its group's top (nobody links it yet: the hub's level). Phase 0
 *    gives every source its best L_s options under these bonuses, which
 *    leaves the imbalance at the targets near the change (on the
 *    benchmark's night 9,000 units at N = 100,000).
 * 2. night_route(): from each excess target, one shortest path to the
 *    nearest deficit (Dijkstra on reduced costs, the settled nodes'
 *    potentials moved as in augment()), the plateau crossed as one node
 *    (below). A search that settles more than NIGHT_CAP nodes is dropped
 *    (nothing changed) and its unit left for step 3. On the benchmark
 *    77 % of the units go here, 26 nodes settled each on average.
 * 3. night_rounds(): the rest, about a quarter of the units, sit where
 *    the potentials of the whole region moved (their searches settled
 *    55,000 of 200,000 nodes each at N = 100,000, and more with every
 *    path). They go through the hubs, which every unit can reach: one
 *    Dijkstra backward from the hubs to every excess target, the
 *    potentials moved by it (p += R - d, R the farthest excess), makes
 *    every excess target's shortest path to a hub tight at once, and a
 *    blocking flow of unit paths over tight arcs moves them all to the
 *    hubs; then one Dijkstra forward from the hubs to every deficit and
 *    a blocking flow from the hubs. A unit beyond its target's first
 *    (a target with 2 units has one tight path) waits for the next
 *    round: 2,073 -> 137 -> 10 -> 1 -> 0 units in 4 rounds at N =
 *    100,000. Parking units at a hub is a pseudo-flow like any other:
 *    optimality needs rc >= 0 and zero balances only at the end.
 *    At N = 1,000,000 the last 8 units went one a round, each round
 *    two searches over the whole graph (the units share one bottleneck
 *    arc), so a round that moves at most NIGHT_TAIL units ends step 3,
 *    and so does one that leaves at most NIGHT_TAIL (at N = 100,000 a
 *    whole round moved the last unit): the rest (and the units parked
 *    at the hubs) go by single paths of step 2 without a cap, one
 *    collapsed search each, no dearer than a half-round.
 *
 * The plateau as one node (step 2). A third to three quarters of the
 * targets sit at the hub's level, at distance 0 from each other through
 * the hub; a search that reached the hub settled all of them (and
 * scanned their links) to move one unit, which made the primal repair of
 * issue 17's third round 8-16x the cold time. Here, when a search
 * settles hub h at distance d_h, with P = p(h):
 *   - the targets behind it are not settled. A target t is at d_h + P -
 *     p(t) through h, and what a settled t would relax is relaxed from h
 *     directly, because the two arcs telescope: h -> t -> s costs P -
 *     c(s,t) - p(s) whatever p(t), so each source is offered once, at its
 *     weakest link (a heap of sources by wmin(s) - p(s), kind 5); the
 *     deficit targets are offered in potential order (kind 6), and Y at
 *     d_h + P - p(Y) (every target has room to Y without a max_in cap;
 *     with one, the hub walks its targets one by one). A target popped
 *     later at no less than its distance through h is skipped.
 *   - the targets it did not settle get p += min(d, D) - D like the
 *     settled ones: one at d_h + P - p(t) < D ends at P + d_h - D, the
 *     hub's new level, one at D or beyond keeps p(t); that is p(t) :=
 *     min(p(t), P'), for every target of the group at once. So a
 *     target's potential is stored uncapped and read capped at its hub's
 *     (tpot()), and the cap keeps the heaps' order. Step 2 searches only
 *     forward (from excess), so the hubs' potentials only fall and the
 *     cap stays valid; the caps are written back before step 3.
 *
 * Step 3 runs when the start is balanced at Y (tot_exc == tot_def: k =
 * L, no surplus to route to Y) in hub mode; otherwise, or past
 * NIGHT_ROUNDS rounds, or when a unit finds no path, the solve goes back
 * to cost scaling from yesterday's bonuses (the warm start before this).
 * So does a routed flow that certify() rejects: a guard, one O(arcs)
 * pass, never seen in the tests or the benchmark. Measured (issue 17d,
 * bench/RESULTS.md): 0.32 of the cold CPU time at N = 100,000; the
 * seven half-rounds of step 3 are most of it, each settling nearly the
 * whole graph.
 */
#define NIGHT_CAP 64
#define NIGHT_ROUNDS 32
#define NIGHT_TAIL 2

/*
 * Step 3's blocking flow: unit paths over tight arcs from x (an excess
 * target, or a hub holding *units) to a hub (toward_hub) or a deficit
 * target, dead ends pruned for the round (seen[]), current-arc pointers
 * in cur[]. units[g] counts what the hubs hold. Returns the units moved.
 */
static size_t round_block(struct solver *S, uint32_t x, int toward_hub,
			  size_t *units, uint32_t *stk, uint32_t *svia,
			  uint32_t *cur)
{
	size_t moved = 0;

	for (;;) {
		uint32_t end;

		if (toward_hub ? exc_of(S, x - (uint32_t)S->ns) == 0 :
				 units[x - hnode(S, 0)] == 0)
			break;
		if (S->seen[x] == S->epoch ||
		    !tight_path(S, x, toward_hub ? END_HUB : END_DEFICIT, stk,
				svia, cur, &end))
			break;
		if (toward_hub)
			units[end - hnode(S, 0)]++;
		else
			units[x - hnode(S, 0)]--;
		moved++;
	}
	return moved;
}

/*
 * Half a round: a Dijkstra from every hub (backward toward the excess
 * targets, or forward toward the deficits) until all of them are
 * settled, p moved so that every shortest path to or from a hub is
 * tight, then the blocking flows. -1 no memory, else the units moved.
 */
static long round_half(struct solver *S, int toward_hub, size_t *units,
		       uint32_t *stk, uint32_t *svia, uint32_t *cur)
{
	size_t want = toward_hub ? S->tot_exc : S->tot_def, got = 0, i, g;
	size_t moved = 0, settled;
	int64_t R = 0;
	uint32_t v;
	double t0 = cpu_seconds();

	new_epoch(S);
	for (g = 0; g < S->ng; g++) {
		v = hnode(S, (uint32_t)g);
		if (!toward_hub && units[g] == 0)
			continue;
		S->seen[v] = S->epoch;
		S->dist[v] = 0;
		S->nxt[v] = NONE;
		if (heap_push(S, 0, v) < 0)
			return -1;
	}
	while (S->hq.n > 0 && got < want) {
		struct heap_item it = heap_pop(S);

		if (it.node == UINT32_MAX)
			return -1;

		v = it.node;
		if (v >= S->nn) {
			if (walk_step(S, v - (uint32_t)S->nn) < 0)
				return -1;
			continue;
		}
		if (S->done[v] == S->epoch || it.key > S->dist[v])
			continue;
		S->done[v] = S->epoch;
		S->settled[S->n_settled++] = v;
		R = it.key;
		if (is_tgt(S, v))
			got += toward_hub ? exc_of(S, v - (uint32_t)S->ns) :
					    def_of(S, v - (uint32_t)S->ns);
		if ((toward_hub ? expand_back(S, v, it.key) :
		     expand_fwd(S, v, it.key)) < 0)
			return -1;
	}
	S->night_settled += S->n_settled;
	S->night_halves++;
	settled = S->n_settled;
	for (i = 0; i < S->n_settled; i++) {
		v = S->settled[i];
		S->p[v] += toward_hub ? R - S->dist[v] : S->dist[v] - R;
		if (v < S->ns + S->nt)
			ph_update(S, v);
	}
	new_epoch(S);
	memset(cur, 0, S->nn * sizeof(uint32_t));
	if (toward_hub) {
		size_t t;

		for (t = 0; t < S->nt; t++)
			if (exc_of(S, (uint32_t)t))
				moved += round_block(S, tnode(S, (uint32_t)t), 1,
						     units, stk, svia, cur);
	} else {
		for (g = 0; g < S->ng; g++)
			moved += round_block(S, hnode(S, (uint32_t)g), 0, units,
					     stk, svia, cur);
	}
	log_debug("assign: night round, %s the hubs: %zu nodes settled, %zu "
		  "units moved; deficit %zu, excess %zu (%.3f s CPU)",
		  toward_hub ? "to" : "from", settled, moved, S->tot_def,
		  S->tot_exc, cpu_seconds() - t0);
	return (long)moved;
}

/*
 * Step 3, units[] what the hubs hold: 0 balanced, 1 gave up, 2 the tail
 * (a round moved at most NIGHT_TAIL units, or at most NIGHT_TAIL are
 * left: single paths finish, no dearer than the round they replace), -1
 * no memory.
 */
static int night_rounds(struct solver *S, size_t *units)
{
	uint32_t *stk = malloc((S->nn + 1) * sizeof(uint32_t));
	uint32_t *svia = malloc((S->nn + 1) * sizeof(uint32_t));
	uint32_t *cur = malloc((S->nn + 1) * sizeof(uint32_t));
	size_t round, held = 0, g;
	int rc = -1;

	if (!stk || !svia || !cur)
		goto out;
	for (round = 0; round < NIGHT_ROUNDS; round++) {
		long in = 0, out = 0;

		if (S->tot_exc > 0 &&
		    (in = round_half(S, 1, units, stk, svia, cur)) < 0)
			goto out;
		for (g = 0, held = 0; g < S->ng; g++)
			held += units[g];
		if (held > 0 &&
		    (out = round_half(S, 0, units, stk, svia, cur)) < 0)
			goto out;
		for (g = 0, held = 0; g < S->ng; g++)
			held += units[g];
		if (S->tot_def + S->tot_exc + held == 0 || in + out == 0)
			break;
		if (in + out <= NIGHT_TAIL ||
		    S->tot_def + S->tot_exc + held <= NIGHT_TAIL) {
			rc = 2;
			goto out;
		}
	}
	rc = S->tot_def + S->tot_exc + held > 0;
out:
	free(stk);
	free(svia);
	free(cur);
	return rc;
}

/*
 * Step 1: yesterday's links as the flow phase 0 keeps on ties, its
 * random links per target as the hub's, its bonuses (a new page, NAN in
 * fresh[], at its group's top) as the start.
 */
static int night_start(struct solver *S, const struct lb_assign_params *p,
		       const int64_t *warm, const double *fresh)
{
	uint32_t *mark = NULL, *arc = NULL;
	int64_t *top = NULL;
	size_t s, t, i, j;
	int rc = -1;

	mark = malloc((S->nt + 1) * sizeof(uint32_t));
	arc = malloc((S->nt + 1) * sizeof(uint32_t));
	top = calloc(S->ng + 1, sizeof(int64_t));
	if (mark == NULL || arc == NULL || top == NULL)
		goto out;
	for (t = 0; t < S->nt; t++)
		mark[t] = NONE;
	memset(S->q, 0, S->nt * sizeof(uint32_t));
	for (s = 0; s < S->ns; s++) {
		long self = self_of(p, s);

		for (i = S->off[s]; i < S->off[s + 1]; i++) {
			S->fl[i] &= (uint8_t)~1;
			mark[S->tg[i]] = (uint32_t)s;
			arc[S->tg[i]] = (uint32_t)i;
		}
		for (j = 0; j < p->prev_l; j++) {
			t = p->prev[s * p->prev_l + j];
			if (t >= S->nt)
				continue;
			if (mark[t] == s)
				S->fl[arc[t]] |= 1;
			else if (hub_src(S, (uint32_t)s) &&
				 S->gt[t] == S->gs[s] && (long)t != self)
				S->q[t]++;
		}
	}
	for (t = 0; t < S->nt; t++)
		if ((fresh == NULL || isfinite(fresh[t])) &&
		    warm[t] > top[S->gt[t]])
			top[S->gt[t]] = warm[t];
	memset(S->p, 0, S->nn * sizeof(int64_t));
	for (t = 0; t < S->nt; t++)
		S->p[tnode(S, (uint32_t)t)] =
			fresh != NULL && !isfinite(fresh[t]) ? top[S->gt[t]] :
							       warm[t];
	/*
	 * A target at bonus 0 sends its surplus to Y (init_flow), and the
	 * router needs a start balanced at Y. With k = L no optimum sends
	 * anything to Y, and the bonuses are then free up to a common
	 * shift (only t -> Y arcs see it), so they are lifted off 0 by one
	 * unit; no choice of phase 0 among links moves. Yesterday's duals
	 * put a target at exactly 0 on the benchmark's N = 100,000 night
	 * once the refines ended at another tied optimum (issue 17,
	 * synchronous refines), and the night went to cost scaling.
	 * Elsewhere the router still declines and certify() guards it.
	 */
	for (t = 0; t < S->nt; t++)
		if (S->p[tnode(S, (uint32_t)t)] <= 0)
			break;
	if (t < S->nt)
		for (t = 0; t < S->nt; t++)
			S->p[tnode(S, (uint32_t)t)] += 1;
	rc = init_flow(S, 0);
out:
	free(mark);
	free(arc);
	free(top);
	return rc;
}

/* Step 2's own heaps (kinds 5 and 6) and the sources' weakest links. */
static int night_alloc(struct solver *S)
{
	size_t g, s;

	if (S->wmin == NULL) {
		S->wmin = malloc((S->ns + 1) * sizeof(int64_t));
		S->hpos[5] = malloc((S->ns + S->nt + 1) * sizeof(uint32_t));
		S->hpos[6] = malloc((S->ns + S->nt + 1) * sizeof(uint32_t));
		if (!S->wmin || !S->hpos[5] || !S->hpos[6])
			return -1;
		for (g = 0; g < S->ng; g++) {
			size_t nsg = S->gsoff[g + 1] - S->gsoff[g] + 1;
			size_t ntg = S->gtoff[g + 1] - S->gtoff[g] + 1;

			S->ph[KIND_W(S, g)].a = malloc(nsg * sizeof(uint32_t));
			S->ph[KIND_D(S, g)].a = malloc(ntg * sizeof(uint32_t));
			if (!S->ph[KIND_W(S, g)].a || !S->ph[KIND_D(S, g)].a)
				return -1;
		}
	}
	for (s = 0; s < S->ns; s++) {
		uint32_t a;

		S->wmin[s] = weakest_link(S, (uint32_t)s, &a);
	}
	return 0;
}

/* The capped potentials written back; step 2's heaps dropped. */
static void night_uncollapse(struct solver *S)
{
	size_t t;

	if (!S->collapse)
		return;
	for (t = 0; t < S->nt; t++)
		S->p[tnode(S, (uint32_t)t)] = tpot(S, tnode(S, (uint32_t)t));
	S->collapse = 0;
	ph_rebuild(S);
}

/*
 * Step 2 for the excess targets el[0 .. *ne) and the units the hubs hold
 * (units[], step 3's): single paths, each dropped past cap settled
 * nodes; el keeps the targets still in excess. 0 done, 1 a unit found
 * no path, -1 no memory.
 */
static int night_paths(struct solver *S, uint32_t *el, size_t *ne,
		       size_t *units, size_t cap)
{
	size_t ie, n2 = 0, g;
	int r = 1;

	for (ie = 0; ie < *ne; ie++) {
		while (exc_of(S, el[ie]) > 0 &&
		       (r = augment(S, tnode(S, el[ie]), 0, cap)) == 1)
			;
		if (r <= 0)
			return r < 0 ? -1 : 1;
		if (exc_of(S, el[ie]) > 0)
			el[n2++] = el[ie];
	}
	*ne = n2;
	for (g = 0; g < S->ng; g++) {
		while (units[g] > 0 &&
		       (r = augment(S, hnode(S, (uint32_t)g), 0, cap)) == 1)
			units[g]--;
		if (r <= 0)
			return r < 0 ? -1 : 1;
	}
	return 0;
}

/* Step 2's collapse on; el[0 .. *ne) the excess targets. */
static int night_collapse(struct solver *S, uint32_t *el, size_t *ne)
{
	size_t t;

	S->collapse = 1;
	if (night_alloc(S) < 0)
		return -1;
	ph_rebuild(S);
	*ne = 0;
	for (t = 0; t < S->nt; t++)
		if (exc_of(S, (uint32_t)t))
			el[(*ne)++] = (uint32_t)t;
	return 0;
}

/*
 * Steps 2 and 3 after night_start(): 0 done (the flow optimal, S->p its
 * certificate), 1 gave up (cost scaling takes over), -1 no memory.
 */
static int night_route(struct solver *S)
{
	uint32_t *el = NULL;
	size_t *units = NULL;
	size_t ne = 0, a0;
	int rc = -1;
	double t0;

	if (S->tot_exc != S->tot_def || !S->hub) {
		log_debug("assign: night: not balanced at Y (excess %zu, "
			  "deficit %zu) or dense; cost scaling", S->tot_exc,
			  S->tot_def);
		return 1;	/* surplus to Y, or dense: cost scaling */
	}
	el = malloc((S->nt + 1) * sizeof(uint32_t));
	units = calloc(S->ng + 1, sizeof(size_t));
	if (el == NULL || units == NULL || night_collapse(S, el, &ne) < 0)
		goto out;
	log_debug("assign: night: %zu units to route", S->tot_exc);
	t0 = cpu_seconds();
	rc = night_paths(S, el, &ne, units, NIGHT_CAP);
	log_debug("assign: night: %zu units by single paths (%zu nodes "
		  "settled, %.3f s CPU), %zu left for the rounds",
		  S->augmentations, S->night_settled, cpu_seconds() - t0,
		  S->tot_exc);
	night_uncollapse(S);
	if (rc == 0 && S->tot_exc > 0)
		rc = night_rounds(S, units);
	if (rc == 2) {
		/* the tail: a unit a round, a round two whole searches */
		size_t n0 = S->night_settled;

		t0 = cpu_seconds();
		a0 = S->augmentations;
		rc = night_collapse(S, el, &ne) < 0 ? -1 :
			night_paths(S, el, &ne, units, SIZE_MAX);
		log_debug("assign: night: the tail, %zu units by single paths "
			  "(%zu nodes settled, %.3f s CPU)",
			  S->augmentations - a0, S->night_settled - n0,
			  cpu_seconds() - t0);
	}
	log_debug("assign: night: %zu paths in all, %zu nodes settled, %zu "
		  "queue rebases%s", S->augmentations, S->night_settled,
		  S->hq.rebases,
		  rc == 0 ? "" : rc > 0 ? ", gave up" : ", out of memory");
out:
	night_uncollapse(S);
	free(el);
	free(units);
	return rc;
}

/* Level j-1 -> j: surplus already sent to Y at zero reduced cost comes back. */
static void raise_level(struct solver *S, uint32_t j)
{
	size_t t;

	S->level = j;
	for (t = 0; t < S->nt; t++) {
		int64_t b = bal(S, (uint32_t)t);

		if (b < 0 && S->fy[t] > 0 &&
		    S->p[tnode(S, (uint32_t)t)] == S->p[S->y]) {
			uint32_t take = (uint32_t)(-b < S->fy[t] ? -b : S->fy[t]);

			S->fy[t] -= take;
		}
	}
	recount(S);
	ph_rebuild(S);
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

/*
 * The hub relaxes two rules for random links: a source's random units may
 * reach its own page, or a page it already links. realize() turns the hub
 * flow into real links without them. Per target, the random links it
 * needs to reach d_t (need_t) are fixed by the flow, and so is each
 * source's number r_s; which source serves which target is free, as long
 * as the pair is allowed. That is a bipartite b-matching, solved exactly:
 *   stage 0: last run's random links where the target still needs one;
 *   stage 1: every needed link, greedily from a random source with a free
 *            slot, else by an augmenting path (a target's breadth-first
 *            search over sources that may link it and the random links
 *            they hold, to a source with a free slot: each source on the
 *            path hands its link on and takes the one before);
 *   stage 2: the remaining slots uniformly at random among the allowed
 *            targets with room (SPEC 1.3).
 * A needed link no path serves proves that the relaxation's optimum is
 * not realisable: every source with a free slot may not link that target
 * (its own page, or linked already). Those sources are returned in
 * `stuck`; the caller gives them explicit random arcs (no hub) and solves
 * again, which is exact for them. Each round makes at least one source
 * explicit, so the rounds end, at worst in the dense model. When no
 * source is stuck, the links have the relaxation's optimal value, which
 * bounds the exact model's: they are optimal, and certify_links() checks
 * it on the links themselves.
 */

struct rz {
	uint32_t *cnt;		/* per source: random links given */
	uint32_t *rin, *need, *room;	/* per target */
	uint32_t *rs, nrs;	/* the group's sources with r > 0 */
	uint32_t *fs, nfs;	/* those with a free slot (lazily pruned) */
	uint32_t *par_t, *par_s, *par_j, *mk_s, *mk_t, *qt, ep;
};

/* s may take t as a random link: not its own page, no candidate arc
 * (a candidate pair has one arc, the related one), not linked yet. */
static int may_random(const struct solver *S, const struct lb_assign_params *p,
		      const uint32_t *rt, size_t l, const uint32_t *cnt,
		      uint32_t s, uint32_t t)
{
	size_t i;

	if ((long)t == self_of(p, s))
		return 0;
	for (i = S->off[s]; i < S->off[s + 1]; i++)
		if (S->tg[i] == t)
			return 0;
	for (i = 0; i < cnt[s]; i++)
		if (rt[(size_t)s * l + i] == t)
			return 0;
	return 1;
}

static void rz_take(struct rz *Z, uint32_t *rt, size_t l, uint32_t s,
		    uint32_t t)
{
	rt[(size_t)s * l + Z->cnt[s]++] = t;
	Z->rin[t]++;
}

/* Stage 1's augmenting path for target t0: 1 found (t0 got a link), 0 none. */
static int rz_augment(const struct solver *S, const struct lb_assign_params *p,
		      struct rz *Z, uint32_t *rt, size_t l, uint32_t t0)
{
	size_t head = 0, tail = 0, i, j;

	if (++Z->ep == 0) {
		memset(Z->mk_s, 0, S->ns * sizeof(uint32_t));
		memset(Z->mk_t, 0, S->nt * sizeof(uint32_t));
		Z->ep = 1;
	}
	Z->qt[tail++] = t0;
	Z->mk_t[t0] = Z->ep;
	while (head < tail) {
		uint32_t u = Z->qt[head++];

		for (i = 0; i < Z->nrs; i++) {
			uint32_t s = Z->rs[i];

			if (Z->mk_s[s] == Z->ep ||
			    !may_random(S, p, rt, l, Z->cnt, s, u))
				continue;
			Z->mk_s[s] = Z->ep;
			Z->par_t[s] = u;
			if (Z->cnt[s] < S->r[s]) {
				/* s takes u; each source before it on the
				 * path hands its link on and takes its own */
				rt[(size_t)s * l + Z->cnt[s]++] = u;
				while (u != t0) {
					uint32_t s2 = Z->par_s[u];

					rt[(size_t)s2 * l + Z->par_j[u]] =
						Z->par_t[s2];
					u = Z->par_t[s2];
				}
				Z->rin[t0]++;
				return 1;
			}
			for (j = 0; j < Z->cnt[s]; j++) {
				uint32_t t = rt[(size_t)s * l + j];

				if (Z->mk_t[t] == Z->ep)
					continue;
				Z->mk_t[t] = Z->ep;
				Z->par_s[t] = s;
				Z->par_j[t] = (uint32_t)j;
				Z->qt[tail++] = t;
			}
		}
	}
	return 0;
}

static void rz_free(struct rz *Z)
{
	free(Z->cnt); free(Z->rin); free(Z->need); free(Z->room);
	free(Z->rs); free(Z->fs); free(Z->par_t); free(Z->par_s);
	free(Z->par_j); free(Z->mk_s); free(Z->mk_t); free(Z->qt);
}

/*
 * rt: n_src * l random targets. Fills them from the hub flow (above);
 * stuck[s] = 1 for the sources the relaxation cannot realise, counted in
 * *nstuck. 0 ok, -1 no memory.
 */
static int realize(struct solver *S, const struct lb_assign_params *p,
		   uint32_t *rt, size_t l, uint8_t *stuck, size_t *nstuck)
{
	struct rz Z;
	size_t g, i, j;
	int rc = -1;

	memset(&Z, 0, sizeof(Z));
	*nstuck = 0;
	Z.cnt = calloc(S->ns + 1, sizeof(uint32_t));
	Z.rs = malloc((S->ns + 1) * sizeof(uint32_t));
	Z.fs = malloc((S->ns + 1) * sizeof(uint32_t));
	Z.par_t = malloc((S->ns + 1) * sizeof(uint32_t));
	Z.mk_s = calloc(S->ns + 1, sizeof(uint32_t));
	Z.rin = calloc(S->nt + 1, sizeof(uint32_t));
	Z.need = calloc(S->nt + 1, sizeof(uint32_t));
	Z.room = calloc(S->nt + 1, sizeof(uint32_t));
	Z.par_s = malloc((S->nt + 1) * sizeof(uint32_t));
	Z.par_j = malloc((S->nt + 1) * sizeof(uint32_t));
	Z.mk_t = calloc(S->nt + 1, sizeof(uint32_t));
	Z.qt = malloc((S->nt + 1) * sizeof(uint32_t));
	if (!Z.cnt || !Z.rs || !Z.fs || !Z.par_t || !Z.mk_s || !Z.rin ||
	    !Z.need || !Z.room || !Z.par_s || !Z.par_j || !Z.mk_t || !Z.qt)
		goto out;
	for (g = 0; g < S->ng; g++) {
		size_t nt = S->gtoff[g + 1] - S->gtoff[g];

		Z.nrs = 0;
		for (i = S->gsoff[g]; i < S->gsoff[g + 1]; i++)
			if (S->r[S->gsrc[i]] > 0)
				Z.rs[Z.nrs++] = S->gsrc[i];
		if (Z.nrs == 0)
			continue;
		for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++) {
			uint32_t t = S->gtgt[i], rel = S->in[t] - S->q[t];

			Z.need[t] = dem(S, t) > rel ? dem(S, t) - rel : 0;
			Z.room[t] = S->cap > rel ? S->cap - rel : 0;
		}
		/* stage 0: last run's random links that are still needed */
		for (i = 0; p->prev != NULL && i < Z.nrs; i++) {
			uint32_t s = Z.rs[i];

			for (j = 0; j < p->prev_l && Z.cnt[s] < S->r[s]; j++) {
				uint32_t t = p->prev[(size_t)s * p->prev_l + j];

				if (t < S->nt && S->gt[t] == g &&
				    Z.rin[t] < Z.need[t] &&
				    may_random(S, p, rt, l, Z.cnt, s, t))
					rz_take(&Z, rt, l, s, t);
			}
		}
		/* stage 1: every needed link */
		Z.nfs = 0;
		for (i = 0; i < Z.nrs; i++)
			if (Z.cnt[Z.rs[i]] < S->r[Z.rs[i]])
				Z.fs[Z.nfs++] = Z.rs[i];
		for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++) {
			uint32_t t = S->gtgt[i];

			while (Z.rin[t] < Z.need[t]) {
				size_t tries;
				int done = 0;

				for (tries = 0; tries < 16 && Z.nfs > 0 && !done;
				     tries++) {
					size_t x = rng_below(&S->rng, Z.nfs);
					uint32_t s = Z.fs[x];

					if (Z.cnt[s] >= S->r[s]) {
						Z.fs[x] = Z.fs[--Z.nfs];
						continue;
					}
					if (may_random(S, p, rt, l, Z.cnt, s, t)) {
						rz_take(&Z, rt, l, s, t);
						done = 1;
					}
				}
				if (done || rz_augment(S, p, &Z, rt, l, t))
					continue;
				/* not realisable: every source with a free
				 * slot may not link t */
				for (j = 0; j < Z.nrs; j++) {
					uint32_t s = Z.rs[j];

					if (Z.cnt[s] < S->r[s] && !stuck[s]) {
						stuck[s] = 1;
						(*nstuck)++;
					}
				}
				break;
			}
		}
		if (*nstuck > 0)
			continue;
		/* stage 2: the other slots, uniformly among targets with room
		 * (last run's first) */
		for (i = 0; i < Z.nrs; i++) {
			uint32_t s = Z.rs[i];

			for (j = 0; p->prev != NULL && j < p->prev_l &&
				    Z.cnt[s] < S->r[s]; j++) {
				uint32_t t = p->prev[(size_t)s * p->prev_l + j];

				if (t < S->nt && S->gt[t] == g &&
				    Z.rin[t] < Z.room[t] &&
				    may_random(S, p, rt, l, Z.cnt, s, t))
					rz_take(&Z, rt, l, s, t);
			}
			while (Z.cnt[s] < S->r[s]) {
				uint32_t t = NONE;
				size_t tries, k, start;

				for (tries = 0; tries < 64 && t == NONE; tries++) {
					uint32_t c = S->gtgt[S->gtoff[g] +
							     rng_below(&S->rng, nt)];

					if (Z.rin[c] < Z.room[c] &&
					    may_random(S, p, rt, l, Z.cnt, s, c))
						t = c;
				}
				start = rng_below(&S->rng, nt);
				for (k = 0; k < nt && t == NONE; k++) {
					uint32_t c = S->gtgt[S->gtoff[g] +
							     (start + k) % nt];

					if (Z.rin[c] < Z.room[c] &&
					    may_random(S, p, rt, l, Z.cnt, s, c))
						t = c;
				}
				if (t == NONE) {
					stuck[s] = 1;
					(*nstuck)++;
					break;
				}
				rz_take(&Z, rt, l, s, t);
			}
		}
	}
	rc = 0;
out:
	rz_free(&Z);
	return rc;
}

struct pt_item {
	int64_t p;
	uint32_t t;
};

static int cmp_pt_desc(const void *a, const void *b)
{
	const struct pt_item *x = a, *y = b;

	if (x->p != y->p)
		return x->p < y->p ? 1 : -1;
	return x->t < y->t ? -1 : x->t > y->t;
}

/*
 * The certificate on the links themselves, in the exact model (no hub):
 * every source gives L_s links, every target's in-degree lies in
 * [d_t, c_t], and under the final potentials every residual arc has
 * rc >= 0: candidate arcs as in certify(); a random link s -> t taken
 * (rc of t -> s: R' + p(t) - p(s) with R' = -cost_r); every allowed random
 * pair not taken (cost_r + p(s) - p(t)), checked against the best-placed
 * allowed target of each group (targets by potential, descending); t -> Y
 * and Y -> t by the realised surplus. 1 proven, 0 not, -1 no memory.
 */
/*
 * The certificate on the links themselves, in the exact model (no hub):
 * every source gives L_s links, every target's in-degree lies in
 * [d_t, c_t], and some potentials make every residual arc's reduced cost
 * non-negative. The targets' and Y's are the solver's; a source touches
 * only its own arcs, so its potential is chosen here: it must lie between
 * its best arc not taken, max(p(t) - c), and its worst arc taken,
 * min(p(t) - c). Arcs are the candidates, the random links taken (cost
 * cost_r) and every allowed random pair not taken, of which only the
 * best matters: the first allowed target of the group by potential,
 * descending. t -> Y and Y -> t by the realised surplus. O(arcs + n log n).
 * 1 proven, 0 not, -1 no memory.
 */
static int certify_links(const struct solver *S,
			 const struct lb_assign_params *p, const uint32_t *rt,
			 size_t l)
{
	const int64_t *pp = S->p;
	uint32_t *deg = NULL, *mark = NULL;
	struct pt_item *ord = NULL;
	size_t s, i, t, g;
	int rc = -1, ok = 1;

	deg = calloc(S->nt + 1, sizeof(uint32_t));
	mark = malloc((S->nt + 1) * sizeof(uint32_t));
	ord = malloc((S->nt + 1) * sizeof(*ord));
	if (deg == NULL || mark == NULL || ord == NULL)
		goto out;
	for (t = 0; t < S->nt; t++)
		mark[t] = NONE;
	for (g = 0; g < S->ng && ok; g++) {
		size_t n = 0;

		if (S->hub) {
			for (i = S->gtoff[g]; i < S->gtoff[g + 1]; i++) {
				ord[n].p = pp[tnode(S, S->gtgt[i])];
				ord[n++].t = S->gtgt[i];
			}
			qsort(ord, n, sizeof(*ord), cmp_pt_desc);
		}
		for (i = S->gsoff[g]; i < S->gsoff[g + 1] && ok; i++) {
			uint32_t src = S->gsrc[i];
			int64_t lo = INT64_MIN, hi = INT64_MAX, x;
			size_t out = 0, j;

			for (j = S->off[src]; j < S->off[src + 1]; j++) {
				x = pp[tnode(S, S->tg[j])] - S->cost[j];
				mark[S->tg[j]] = src;
				if (S->fl[j] & 1) {
					out++;
					deg[S->tg[j]]++;
					hi = x < hi ? x : hi;
				} else {
					lo = x > lo ? x : lo;
				}
			}
			for (j = 0; rt != NULL && j < S->r[src]; j++) {
				uint32_t tt = rt[(size_t)src * l + j];

				if (tt >= S->nt || mark[tt] == src) {
					ok = 0;	/* no target, or a duplicate */
					break;
				}
				mark[tt] = src;
				out++;
				deg[tt]++;
				x = pp[tnode(S, tt)] - S->cost_r;
				hi = x < hi ? x : hi;
			}
			if (hub_src(S, src) && S->ls[src] > 0) {
				long self = self_of(p, src);

				for (j = 0; j < n; j++)
					if (mark[ord[j].t] != src &&
					    (long)ord[j].t != self)
						break;
				if (j < n) {
					x = ord[j].p - S->cost_r;
					lo = x > lo ? x : lo;
				}
			}
			if (out != S->ls[src] || lo > hi)
				ok = 0;
		}
	}
	/* sources outside every group have no arcs */
	for (s = 0; s < S->ns && ok; s++)
		if (S->gs[s] == NONE && S->ls[s] != 0)
			ok = 0;
	for (t = 0; t < S->nt && ok; t++) {
		uint32_t v = tnode(S, (uint32_t)t), d = dem(S, (uint32_t)t);

		if (deg[t] < d || deg[t] > S->cap)
			ok = 0;
		else if (deg[t] < S->cap && pp[v] < pp[S->y])
			ok = 0;	/* t -> Y residual */
		else if (deg[t] > d && pp[S->y] < pp[v])
			ok = 0;	/* Y -> t residual */
	}
	rc = ok;
out:
	free(deg);
	free(mark);
	free(ord);
	return rc;
}

/* ---- output and figures ---- */

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The score of source s's candidate link to t: the solver keeps only
 * costs (with yesterday's bonus in them), 4 bytes an arc less; a
 * duplicate target keeps its best score, as build_arcs() keeps its
 * lowest cost.
 */
static float cand_score(const struct lb_candidates *c, size_t s, uint32_t t)
{
	const uint32_t *tg = c->target + s * c->m;
	const float *sc = c->score + s * c->m;
	float w = 0;
	size_t j;
	int found = 0;

	for (j = 0; j < c->m; j++)
		if (tg[j] == t && (!found || w < sc[j])) {
			w = sc[j];
			found = 1;
		}
	return w;
}

static int emit(struct solver *S, const struct lb_candidates *c,
		const struct lb_assign_params *p,
		const uint32_t *rt, struct lb_assignment *out,
		struct lb_assign_stats *st, double bonus)
{
	size_t l = p->links, s, i, j, t;
	size_t *deg = NULL;
	uint32_t *pm = NULL;
	int rc = -1;

	out->n_src = S->ns;
	out->l = l;
	out->n_tgt = S->nt;
	out->links = malloc((S->ns * l + 1) * sizeof(*out->links));
	out->bonus = malloc((S->nt + 1) * sizeof(*out->bonus));
	if (out->bonus == NULL)
		goto out;
	for (t = 0; t < S->nt; t++) {
		int64_t b = S->p[tnode(S, (uint32_t)t)] - S->p[S->y];

		out->bonus[t] = b > 0 ? (double)b / SCALE : 0;
	}
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
				row[n].score = cand_score(c, s, S->tg[i]);
				st->objective += row[n].score;
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
	free(a->bonus);
	a->links = NULL;
	a->bonus = NULL;
	a->n_src = a->l = a->n_tgt = 0;
}

/*
 * One solve with a given cap and the explicit sources xsrc (may be NULL),
 * from the bonuses warm[] (cost units; NULL = cold). 0 done, 1 the cap
 * cannot hold (retry without), 2 the hub flow cannot be realised: stuck[]
 * marks the sources to make explicit and next[] gets this round's
 * bonuses, which start the next round; -1 error.
 */
/* params.threads, 0 resolved to the online CPUs, capped */
static size_t assign_threads(const struct lb_assign_params *p)
{
	size_t n = p->threads;

	if (n == 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		n = c > 0 ? (size_t)c : 1;
	}
	return n > LB_ASSIGN_MAX_THREADS ? LB_ASSIGN_MAX_THREADS : n;
}

/*
 * Small sites: no cost scaling.
 *
 * Cost scaling's price is mostly fixed: 13 refines (eps 2^24 down to 1
 * by CS_ALPHA), each restarted from a full phase 0 and its heaps, so a
 * 100-page site paid ~18 M instructions to move the few dozen units
 * plain top-L leaves short (bench/RESULTS.md, "the tail, round 6"). A
 * cold solve instead hands init_flow(S, 1)'s top-L, which is 0-optimal
 * at zero bonuses (every residual arc has rc >= 0), to resolve(): its
 * phases and single shortest paths keep rc >= 0 and end balanced, and
 * certify() checks the result as after cost scaling. Only the work
 * differs: about one Dijkstra over part of the graph for each unit of
 * imbalance, against 13 passes over all of it. Measured
 * (bench/assign_bench, callgrind): direct / cost scaling 0.25-0.44 at
 * 100 pages with <= 0.82 units a node, 0.31-0.81 up to 4,000 pages with
 * <= 0.96 a node, but 0.97-1.32 at 100 pages and k = L (1.4-1.8 units
 * a node) and 5-40x at 1,000-3,000 pages with k = L = 8. So the path is
 * taken while top-L leaves at most one unit for every two nodes and the
 * graph has at most small_limit nodes (8192: measured up to 8,002).
 *
 * The objective is the cold solve's (test_small_direct: thousands of
 * random sites, both paths); the links are the same but for ties
 * between equal-valued alternatives, and the bonuses (bonus.tsv) are
 * another optimal dual: the smallest one shortest paths from zero
 * reach, where cost scaling leaves its own.
 */
#define SMALL_LIMIT_DEFAULT 8192

static int small_direct(const struct solver *S,
			const struct lb_assign_params *p)
{
	size_t lim = p->small_limit ? p->small_limit : SMALL_LIMIT_DEFAULT;

	return S->nn <= lim && 2 * (S->tot_def + S->tot_exc) <= S->nn;
}

static int solve_once(const struct lb_candidates *cand,
		      const struct lb_assign_params *p, uint32_t cap,
		      const uint8_t *xsrc, uint8_t *stuck, const int64_t *warm,
		      const double *fresh, int64_t *next,
		      struct lb_assignment *out, struct lb_assign_stats *st,
		      struct lb_error *err)
{
	static const int shifts[] = { 20, 16, 12, 8, 4, 0 };
	struct solver S;
	struct snap sn;
	uint32_t *rt = NULL;
	double bonus = p->stability_bonus;
	uint32_t k = p->min_in > CAP_INF ? CAP_INF : (uint32_t)p->min_in;
	uint32_t j, kmax;
	size_t t;
	double t_cs = 0, t_rz = 0;
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
	S.xsrc = xsrc;
	S.threads = assign_threads(p);
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
	kmax = level_bound(&S, k);
	/* what k asks against what the sources can give, for the log's why */
	for (t = 0; t < S.nt; t++) {
		st->demand += S.reach[t] < k ? S.reach[t] : k;
		if (S.reach[t] < k) {
			if (st->low_reach++ == 0 || S.reach[t] < st->min_reach)
				st->min_reach = S.reach[t];
		}
	}
	for (t = 0; t < S.ns; t++)
		st->supply += S.ls[t];
	if (kmax < k)
		st->short_why = LB_ASSIGN_SHORT_SUPPLY;
	if (!S.hub && !p->random_completion && S.cap == CAP_INF && kmax > 0) {
		/* without random completion, counting is not enough: a max
		 * flow says which k can hold, so that the solver never proves
		 * it slowly. With it, the dense model's arcs are every allowed
		 * pair, the pairs hub mode stands for, where counting is what
		 * decides k (docs/assign.md, "When k cannot hold"); this max
		 * flow was 1.2 M of a 100-page site's 5.5 M instructions */
		long f = feasible_level(S.ns, S.nt, S.off, S.tg, S.ls, S.reach,
					kmax);

		if (f < 0) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		if ((uint32_t)f < kmax) {
			log_debug("assign: k = %u cannot hold, %ld can", kmax, f);
			st->short_why = LB_ASSIGN_SHORT_CANDIDATES;
		}
		kmax = (uint32_t)f;
	}
	S.cost_r0 = S.cost_r;	/* cost0 waits for a coarse level */

	/*
	 * direct: plain top-L marks the greedy links; cost scaling finds
	 * bonuses near the optimal dual and the primal-dual phases finish
	 * exactly at full scale. Should cost scaling give up, the problem
	 * for k_max is solved at coarse costs first (ties let each phase
	 * move many units), each level's bonuses warm-starting the next
	 * finer one, the last level at full scale.
	 */
	S.level = kmax;
	if (init_flow(&S, 1) < 0) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	set_shift(&S, 0);
	if (warm != NULL) {
		/* yesterday's bonuses (or the last round's) as the start */
		for (t = 0; t < S.nt; t++)
			S.p[tnode(&S, (uint32_t)t)] = warm[t];
		st->warm = 1;
	}
	t_cs = now_seconds();
	r = 1;
	if (warm != NULL && p->prev != NULL) {
		/* a night: yesterday's flow, only the change routed */
		r = night_start(&S, p, warm, fresh) < 0 ? -1 : night_route(&S);
		if (r < 0) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		if (r == 0 && !certify(&S)) {
			/* a guard, never seen: the router's invariants
			 * broken would cost a cold-sized solve, not the
			 * certificate */
			log_warnx("assign: the night's router ended "
				  "uncertified; cost scaling instead");
			r = 1;
		}
		if (r > 0) {
			log_debug("assign: the night's router gave up; cost "
				  "scaling from yesterday's bonuses");
			memset(S.p, 0, S.nn * sizeof(int64_t));
			for (t = 0; t < S.nt; t++)
				S.p[tnode(&S, (uint32_t)t)] = warm[t];
			S.augmentations = 0;
		}
	}
	if (r != 0 && warm == NULL && small_direct(&S, p))
		r = 4;	/* small: shortest paths from plain top-L */
	else if (r != 0)
		r = cost_scale(&S, warm != NULL ? CS_EPS_WARM : CS_EPS0);
	else
		r = 3;	/* routed: optimal as it is */
	t_cs = now_seconds() - t_cs;
	if (r == 1 && warm != NULL) {
		/* a warm start that went astray costs a cold solve, no more */
		log_debug("assign: warm cost scaling gave up; cold");
		memset(S.p, 0, S.nn * sizeof(int64_t));
		if (init_flow(&S, 0) < 0) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		r = cost_scale(&S, CS_EPS0);
	}
	j = 0;
	if (r == 3) {
		j = sizeof(shifts) / sizeof(shifts[0]);
		st->routed = 1;
		st->night_halves = S.night_halves;
		st->night_settled = S.night_settled;
		r = 0;
	} else if (r == 4) {
		/* init_flow(&S, 1)'s top-L is 0-optimal at zero bonuses */
		j = sizeof(shifts) / sizeof(shifts[0]);
		st->direct = 1;
		log_debug("assign: small: deficit %zu, excess %zu from top-L, "
			  "no cost scaling", S.tot_def, S.tot_exc);
		r = resolve(&S);
	} else if (r == 2) {
		j = sizeof(shifts) / sizeof(shifts[0]);
		adopt_flow(&S);
		log_debug("assign: the last refine's flow kept: deficit %zu, "
			  "excess %zu", S.tot_def, S.tot_exc);
		r = resolve(&S);
	} else if (r == 0) {
		j = sizeof(shifts) / sizeof(shifts[0]);
		r = init_flow(&S, 0) < 0 ? -1 : resolve(&S);
	} else if (r == 1) {
		log_debug("assign: cost scaling gave up; cost levels");
		r = 0;
	}
	if (r < 0) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	for (; j < sizeof(shifts) / sizeof(shifts[0]) && r == 0; j++) {
		int64_t f = j ? (int64_t)1 << (shifts[j - 1] - shifts[j]) : 0;

		for (t = 0; t < S.nt; t++) {
			int64_t b = S.p[tnode(&S, (uint32_t)t)] - S.p[S.y];

			S.p[tnode(&S, (uint32_t)t)] = b > 0 ? b * f : 0;
		}
		S.p[S.y] = 0;
		if (set_shift(&S, shifts[j]) < 0 || init_flow(&S, 0) < 0 ||
		    (j == 0 && price_rounds(&S, PRICE_ROUNDS) < 0)) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		log_debug("assign: scale 2^-%d: deficit %zu, excess %zu",
			  shifts[j], S.tot_def, S.tot_exc);
		r = resolve(&S);
		if (r < 0) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
	}
	st->k_used = kmax;
	if (r > 0) {
		/* infeasible for k_max: raise the bound level by level from
		 * plain top-L, keeping the last level that held */
		log_debug("assign: k = %u cannot hold, searching by level", kmax);
		memset(S.p, 0, S.nn * sizeof(int64_t));
		set_shift(&S, 0);
		S.level = 0;
		if (init_flow(&S, 0) < 0) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		r = resolve(&S);	/* caps only */
		if (r != 0) {
			rc = r < 0 ? -1 : 1;
			if (r < 0)
				lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		st->k_used = 0;
		for (j = 1; j <= kmax; j++) {
			if (snap_take(&S, &sn) < 0) {
				lb_error_set(err, LB_ENOMEM, "out of memory");
				goto out;
			}
			raise_level(&S, j);
			r = resolve(&S);
			if (r < 0) {
				lb_error_set(err, LB_ENOMEM, "out of memory");
				goto out;
			}
			if (r > 0) {
				snap_restore(&S, &sn);
				break;
			}
			st->k_used = j;
		}
	}
	if (st->k_used < kmax && st->short_why == LB_ASSIGN_SHORT_NONE)
		st->short_why = S.cap < CAP_INF ? LB_ASSIGN_SHORT_CAP :
						  LB_ASSIGN_SHORT_CANDIDATES;
	if (st->short_why == LB_ASSIGN_SHORT_NONE && st->low_reach > 0)
		st->short_why = LB_ASSIGN_SHORT_REACH;
	S.level = (uint32_t)st->k_used;
	recount(&S);
	/* k_used counts what holds for every target that can be reached */
	st->feasible = st->k_used >= p->min_in;
	for (t = 0; t < S.nt && st->feasible; t++)
		if (S.reach[t] < k)
			st->feasible = 0;
	st->certified = certify(&S);
	st->augmentations = S.augmentations;
	t_rz = now_seconds();

	if (S.hub) {
		size_t nstuck = 0;

		rt = malloc((S.ns * p->links + 1) * sizeof(uint32_t));
		if (rt == NULL) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		for (t = 0; t < S.ns * p->links; t++)
			rt[t] = NONE;
		if (realize(&S, p, rt, p->links, stuck, &nstuck) < 0) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		if (nstuck > 0) {
			log_debug("assign: the hub flow pairs %zu sources with "
				  "their own page or a page they link; solving "
				  "again with explicit random arcs for them",
				  nstuck);
			/* the next round starts from this one's bonuses */
			for (t = 0; t < S.nt; t++) {
				int64_t b = S.p[tnode(&S, (uint32_t)t)] - S.p[S.y];

				next[t] = b > 0 ? b : 0;
			}
			rc = 2;
			goto out;
		}
	}
	/* the certificate covers the links as given, not only the flow */
	if (st->certified) {
		r = certify_links(&S, p, rt, p->links);
		if (r < 0) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		st->certified = r;
	}
	log_debug("assign: %.3f s cost scaling, %.3f s realising and "
		  "certifying the links", t_cs, now_seconds() - t_rz);
	if (emit(&S, cand, p, rt, out, st, bonus) < 0) {
		lb_assignment_release(out);
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	rc = 0;
out:
	free(rt);
	snap_free(&sn);
	st->cpu_seconds += S.help_cpu;
	solver_free(&S);
	return rc;
}

/*
 * solve_once() until the hub flow is realisable: each round makes the
 * stuck sources explicit (at least one a round, so it ends).
 */
static int solve(const struct lb_candidates *cand,
		 const struct lb_assign_params *p, uint32_t cap,
		 struct lb_assignment *out, struct lb_assign_stats *st,
		 struct lb_error *err)
{
	uint8_t *xsrc = NULL, *stuck = NULL;
	int64_t *warm = NULL;
	size_t ns = cand->n_src, s, nx = 0, rounds = 0;
	double help_cpu = 0;
	int rc = -1, is_warm = p->warm != NULL;

	xsrc = calloc(ns + 1, 1);
	stuck = calloc(ns + 1, 1);
	warm = calloc(p->n_tgt + 1, sizeof(int64_t));
	if (xsrc == NULL || stuck == NULL || warm == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	/* yesterday's bonuses in cost units; a new page starts at 0 */
	for (s = 0; p->warm != NULL && s < p->n_tgt; s++) {
		double b = p->warm[s];

		warm[s] = isfinite(b) && b > 0 ?
				  llround((b < 1e6 ? b : 1e6) * SCALE) : 0;
	}
	for (;;) {
		size_t added = 0;

		memset(st, 0, sizeof(*st));
		rc = solve_once(cand, p, cap, nx ? xsrc : NULL, stuck,
				is_warm || rounds > 0 ? warm : NULL,
				rounds == 0 ? p->warm : NULL, warm, out,
				st, err);
		help_cpu += st->cpu_seconds;
		if (rc != 2)
			break;
		for (s = 0; s < ns; s++)
			if (stuck[s] && !xsrc[s]) {
				xsrc[s] = 1;
				added++;
			}
		memset(stuck, 0, ns);
		nx += added;
		rounds++;
		if (added == 0) {	/* cannot happen: each round adds one */
			lb_error_set(err, LB_EINTERNAL, "random links cannot "
				     "be realised");
			rc = -1;
			goto out;
		}
	}
	st->cpu_seconds = help_cpu;	/* the caller adds its own */
	st->explicit_sources = nx;
	st->rounds = rounds + 1;
	st->warm = is_warm;
out:
	free(xsrc);
	free(stuck);
	free(warm);
	return rc;
}

int assign_links(const struct lb_candidates *cand,
		 const struct lb_assign_params *p, struct lb_assignment *out,
		 struct lb_assign_stats *stats, struct lb_error *err)
{
	struct lb_assign_stats st;
	uint32_t cap = CAP_INF;
	double t0 = now_seconds(), c0 = cpu_seconds();
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
		rc = solve(cand, p, CAP_INF, out, &st, err);
	}
	st.seconds = now_seconds() - t0;
	st.cpu_seconds = cpu_seconds() - c0 + st.cpu_seconds;
	st.threads = assign_threads(p);
	if (stats != NULL)
		*stats = st;
	return rc < 0 ? -1 : 0;
}

int assign_explain(const struct lb_assign_stats *st,
		   const struct lb_assign_params *p, char *buf, size_t size)
{
	size_t k = p->min_in;

	switch (st->short_why) {
	case LB_ASSIGN_SHORT_SUPPLY:
		return snprintf(buf, size, "the source pages give %zu links "
				"(L = %zu each, as far as they have targets), "
				"and k = %zu for every target page needs %zu; "
				"k = %zu holds", st->supply, p->links, k,
				st->demand, st->k_used);
	case LB_ASSIGN_SHORT_CANDIDATES:
		return snprintf(buf, size, "random completion is off and the "
				"candidate lists cannot give every page k = %zu "
				"links at once; k = %zu holds", k, st->k_used);
	case LB_ASSIGN_SHORT_CAP:
		return snprintf(buf, size, "max_in %zu leaves too little room; "
				"k = %zu holds", p->max_in, st->k_used);
	case LB_ASSIGN_SHORT_REACH:
		return snprintf(buf, size, "%zu target pages can be linked by "
				"fewer than k = %zu source pages (as few as %zu: "
				"a page never links itself%s); each of them has "
				"all it can get", st->low_reach, k,
				st->min_reach, p->random_completion ?
				", and links stay in their language" :
				", and random completion is off");
	default:
		return snprintf(buf, size, "every target page has k = %zu", k);
	}
}
