/*
 * feasible.h - assign/'s feasibility test: how many incoming links every
 * target can be guaranteed at all, before the costs are looked at.
 *
 * Sources s have L_s links to give along their arcs (one link per arc),
 * target t may demand d_t = min(k, reach_t). feasible_level() returns the
 * largest k <= kmax for which every target's demand can be met at once:
 * a maximum flow (Dinic) from the sources to the targets, raised level by
 * level with the flow kept, O(arcs * sqrt(nodes)) in all. Without it the
 * exact solver finds an infeasible k only by exhausting every augmenting
 * path at every level, which took tens of minutes for 20,000 pages
 * without random completion.
 *
 * Inputs are borrowed: ns sources, nt targets, the sources' arcs in CSR
 * (off[ns + 1], tg[] target indexes), ls[ns], reach[nt]. Returns the
 * level, or -1 when memory ran out.
 */
#ifndef LINKBOT_ASSIGN_FEASIBLE_H
#define LINKBOT_ASSIGN_FEASIBLE_H

#include <stddef.h>
#include <stdint.h>

long feasible_level(size_t ns, size_t nt, const size_t *off,
		    const uint32_t *tg, const uint32_t *ls,
		    const uint32_t *reach, uint32_t kmax);

#endif
