/*
 * fillers.h - after the assignment (stage 4), before publishing: links
 * that are not related are published as random links (SPEC 1.3).
 *
 * The solver must give every target at least k links (assign.h); when a
 * page has too few related pages, the links it keeps to meet that are
 * fillers: their score is at or below what random pairs of the site score
 * (lb_candidates.random_floor, measured by relate/). On a site where all
 * pages look alike every link is one. A filler is not typed `related`:
 *
 *   - when its target has more than k links, it is replaced by a uniform
 *     random target (not the source itself, none of the source's other
 *     links, same language group, under max_in), drawn with the seed;
 *     its old target keeps at least k;
 *   - otherwise the link is what keeps its target at k: the targets of
 *     all such links are shuffled among them (a seeded Fisher-Yates whose
 *     swaps keep every link valid), which keeps every page's in-degree,
 *     so the k guarantee and the max_in cap hold exactly as the solver
 *     left them.
 *
 * Either way the link becomes type random, score 0, and moves after the
 * row's related links (assign.h's row order). Deterministic for a seed.
 *
 * Calling sequence: assign_links(&cand, &ap, &a, ...), then
 *   struct lb_fillers_params fp = { .floor = cand.random_floor, ... };
 *   fillers_apply(&a, &fp, &fst, &err);
 * a is changed in place; nothing is allocated for the caller.
 */
#ifndef LINKBOT_FILLERS_H
#define LINKBOT_FILLERS_H

#include <stddef.h>
#include <stdint.h>
#include "linkbot/assign.h"
#include "linkbot/error.h"

struct lb_fillers_params {
	size_t n_tgt;
	size_t min_in;		/* k */
	size_t max_in;		/* 0 = no cap; a cap below k counts as k */
	float floor;		/* lb_candidates.random_floor */
	uint64_t seed;
	const long *self;	/* as in lb_assign_params; may be NULL */
	const uint32_t *lang_src;	/* language group per source, or NULL */
	const uint32_t *lang_tgt;	/* language group per target, or NULL */
};

struct lb_fillers_stats {
	size_t fillers;		/* related links at or below the floor */
	size_t redrawn;		/* ... given a uniform random target */
	size_t shuffled;	/* ... kept for k, targets shuffled among them */
};

int fillers_apply(struct lb_assignment *a, const struct lb_fillers_params *p,
		  struct lb_fillers_stats *st, struct lb_error *err);

#endif
