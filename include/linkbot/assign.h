/*
 * assign.h - stage 4: choose each source page's L links from its
 * candidates so that every target receives at least k links, maximising
 * total relatedness (SPEC 1.2), with random completion (SPEC 1.3).
 *
 * The problem is solved exactly as a min-cost flow with lower bounds
 * (src/assign/assign.c opens with the design notes; docs/assign.md is the
 * user-level description):
 *
 *   maximise   sum of w(s,t) over chosen links
 *   such that  each source s has exactly L_s = min(L, targets it may link)
 *              links, no self link, no duplicate, and every target t
 *              receives between d_t = min(k, sources that may link t) and
 *              max(max_in, k) links (no upper bound when max_in is 0).
 *
 * w(s,t) is the candidate score plus stability_bonus when the link was in
 * the previous run; a random link (uniform, same language group) weighs
 * LB_ASSIGN_RANDOM_WEIGHT, below every candidate, so random links are
 * used only to fill sources without enough candidates or to reach targets
 * that no candidate arc reaches cheaper.
 *
 * When the constraint cannot hold for every target (k * |T| > L * |S|,
 * tiny sets, no random completion), the solver finds the largest k' <= k
 * for which it holds, solves for k', and reports k' (stats->k_used).
 *
 * Calling sequence:
 *   struct lb_assignment a = { 0 };
 *   struct lb_assign_stats st;
 *   if (assign_links(&cand, &params, &a, &st, &err) < 0) ...
 *   ... read a.links ...
 *   lb_assignment_release(&a);
 * The caller owns the assignment (and its input); params are borrowed for
 * the call only.
 */
#ifndef LINKBOT_ASSIGN_H
#define LINKBOT_ASSIGN_H

#include <stddef.h>
#include <stdint.h>
#include "linkbot/candidates.h"
#include "linkbot/error.h"

enum lb_link_type { LB_LINK_RELATED = 0, LB_LINK_RANDOM = 1 };

/* The weight of a random link in the objective: below every cosine. */
#define LB_ASSIGN_RANDOM_WEIGHT (-2.0)

struct lb_link {
	uint32_t target;	/* index into the targets; LB_NO_TARGET = empty slot */
	float score;		/* similarity; 0 for a random link */
	uint8_t type;		/* enum lb_link_type */
};

/*
 * n_src rows of l links, row-major; a row ends early at LB_NO_TARGET.
 * In a row, related links come first by decreasing score, then random.
 */
struct lb_assignment {
	size_t n_src;
	size_t l;
	struct lb_link *links;
	/* per target (n_tgt): its bonus in the optimal dual, in units of
	 * score, >= 0; what the next run's params.warm takes */
	size_t n_tgt;
	double *bonus;
};

struct lb_assign_params {
	size_t n_tgt;
	size_t links;		/* L */
	size_t min_in;		/* k */
	size_t max_in;		/* 0 = no cap; a cap below k counts as k */
	int random_completion;
	uint64_t seed;
	const long *self;	/* self[i]: source i's own target index or -1; may be NULL */
	const uint32_t *lang_src;	/* language group per source, or NULL */
	const uint32_t *lang_tgt;	/* language group per target, or NULL */

	/*
	 * Stability: the previous run's links in today's target indexes,
	 * prev_l per source (LB_NO_TARGET pads), or NULL. A candidate that
	 * was linked last run weighs stability_bonus more (0 = tie-breaker
	 * off; 0.01 is a good start; clamped to [0, 1]); a random link of
	 * the last run is kept when it can be.
	 */
	const uint32_t *prev;
	size_t prev_l;
	double stability_bonus;

	/*
	 * Warm start: the previous run's bonuses (lb_assignment.bonus) in
	 * today's target indexes, NAN for a page that is new; NULL = cold.
	 * Only the start changes: cost scaling begins at a fine eps from
	 * them, and the result is certified as a cold one.
	 */
	const double *warm;

	/*
	 * Random completion is modelled exactly (one arc per allowed pair)
	 * while the pairs number at most dense_limit, through one hub node
	 * per language group above it (0 = default, 1 << 16).
	 */
	size_t dense_limit;

	/*
	 * A cold solve of at most small_limit nodes (sources + targets +
	 * groups + 1) whose plain top-L leaves at most one unit of
	 * imbalance for every two nodes skips cost scaling: shortest paths
	 * from top-L finish it (docs/assign.md, "Small sites"). 0 = default,
	 * 8192; 1 = never.
	 */
	size_t small_limit;

	/*
	 * Threads the solver may use (0 = one per online CPU, at most
	 * LB_ASSIGN_MAX_THREADS; 1 = none started). The links, bonuses and
	 * figures (but the seconds) are the same for every thread count:
	 * extra threads take a share of the loops whose items are
	 * independent (the restarts of cost scaling and phase 0), never
	 * the discharges, whose order decides ties.
	 */
	size_t threads;
};

#define LB_ASSIGN_MAX_THREADS 8
#define LB_ASSIGN_MAX_THREADS_STR "8"

/* Why some page has fewer than k links in (stats.short_why). */
enum lb_assign_short {
	LB_ASSIGN_SHORT_NONE = 0,
	LB_ASSIGN_SHORT_SUPPLY,		/* L * sources < demand of k (a group) */
	LB_ASSIGN_SHORT_CANDIDATES,	/* no random completion: the candidate
					 * lists cannot reach k everywhere */
	LB_ASSIGN_SHORT_CAP,		/* max_in leaves too little room */
	LB_ASSIGN_SHORT_REACH		/* some pages have fewer than k sources
					 * that may link them at all */
};

struct lb_assign_stats {
	double objective;	/* sum of the scores of the related links */
	double model_objective;	/* what is maximised: bonuses, random weight */
	size_t min_in, median_in, max_in;
	size_t lifted;		/* links chosen to meet k that top-L would not */
	size_t lifted_pages;	/* targets below k under top-L, raised */
	size_t random_links;
	size_t links;		/* links chosen in total */
	size_t k_used;		/* the k that holds (< min_in when infeasible) */
	int feasible;		/* k_used == min_in */
	int certified;		/* dual potentials prove the flow optimal */
	size_t churn;		/* links not in the previous run (0 without prev) */
	size_t churn_sources;	/* sources whose link set changed */
	size_t unrealized;	/* random links that found no target (always 0
				 * now: kept for the report's format) */
	size_t explicit_sources;	/* hub mode: sources solved with explicit
				 * random arcs so that the hub flow could
				 * be realised (no self link, no duplicate) */
	size_t rounds;		/* solves that took (1 + rounds that made
				 * sources explicit) */
	size_t augmentations;	/* shortest paths the solver augmented */
	double seconds;		/* solve time (wall) */
	double cpu_seconds;	/* CPU time of the solve: the calling thread
				 * and the solver's own threads */
	size_t threads;		/* params.threads, resolved */
	int warm;		/* started from the previous run's potentials */
	int routed;		/* a night: yesterday's links kept and only the
				 * change routed, no cost scaling (docs/assign.md) */
	int direct;		/* a small cold solve: shortest paths from
				 * plain top-L, no cost scaling (small_limit) */
	size_t night_halves;	/* a routed night: half-rounds through the
				 * hubs (step 3 of "The night routed") */
	size_t night_settled;	/* a routed night: nodes its searches settled */
	int short_why;		/* enum lb_assign_short */
	size_t supply;		/* links the sources can give (sum of L_s) */
	size_t demand;		/* links k asks for: sum of min(k, reach_t) */
	size_t low_reach;	/* targets fewer than k sources may link */
	size_t min_reach;	/* the fewest sources that may link a target */
};

int assign_links(const struct lb_candidates *cand,
		 const struct lb_assign_params *p, struct lb_assignment *out,
		 struct lb_assign_stats *stats, struct lb_error *err);
void lb_assignment_release(struct lb_assignment *a);

/*
 * One sentence on why k does not hold for every page (stats->short_why),
 * or that it does, for the log. Returns what snprintf returns.
 */
int assign_explain(const struct lb_assign_stats *st,
		   const struct lb_assign_params *p, char *buf, size_t size);

#endif
