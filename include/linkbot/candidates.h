/*
 * candidates.h - the record between relate/ and assign/: for each source
 * page, its top-M target pages by relatedness, best first.
 *
 * Row-major: entry j of source i is at i * m + j. A row with fewer than m
 * candidates is padded with target LB_NO_TARGET and score 0. Targets are
 * indexes into the endpoint's target list.
 *
 * random_floor is what random pairs of the site score (relate/ measures
 * it on pairs drawn with a fixed seed, docs/relate.md): a link scoring at
 * or below it is no more related than a random one, so it is published
 * as a random link (fillers.h). -INFINITY when unknown.
 */
#ifndef LINKBOT_CANDIDATES_H
#define LINKBOT_CANDIDATES_H

#include <stddef.h>
#include <stdint.h>

#define LB_NO_TARGET UINT32_MAX

struct lb_candidates {
	size_t n_src;
	size_t m;
	uint32_t *target;	/* n_src * m */
	float *score;		/* n_src * m, similarity in [-1, 1]: the
				 * cosine (LSA: the hybrid of the dense and
				 * the sparse cosine, docs/relate.md) */
	float random_floor;	/* what random pairs score; -INFINITY: unknown */
};

/* Allocates n_src * m entries, all padding, random_floor -INFINITY.
 * 0 or -1 (no memory). */
int lb_candidates_init(struct lb_candidates *c, size_t n_src, size_t m);
void lb_candidates_release(struct lb_candidates *c);

/*
 * Concatenates the rows of n parts (shards in order, all with the same m)
 * into out, which the caller releases; random_floor is the parts' highest.
 * 0 or -1 (m differs, no memory).
 */
int lb_candidates_merge(const struct lb_candidates *parts, size_t n,
			struct lb_candidates *out);

#endif
