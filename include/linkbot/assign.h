/*
 * assign.h - stage 4: choose each source page's L links from its
 * candidates so that every target receives at least k links, maximising
 * total relatedness (SPEC 1.2), with random completion (SPEC 1.3).
 */
#ifndef LINKBOT_ASSIGN_H
#define LINKBOT_ASSIGN_H

#include <stddef.h>
#include <stdint.h>
#include "linkbot/candidates.h"
#include "linkbot/error.h"

enum lb_link_type { LB_LINK_RELATED = 0, LB_LINK_RANDOM = 1 };

struct lb_link {
	uint32_t target;	/* index into the targets; LB_NO_TARGET = empty slot */
	float score;
	uint8_t type;		/* enum lb_link_type */
};

/* n_src rows of l links, row-major; a row ends early at LB_NO_TARGET. */
struct lb_assignment {
	size_t n_src;
	size_t l;
	struct lb_link *links;
};

struct lb_assign_params {
	size_t n_tgt;
	size_t links;		/* L */
	size_t min_in;		/* k */
	size_t max_in;		/* 0 = no cap */
	int random_completion;
	uint64_t seed;
	const long *self;	/* self[i]: source i's own target index or -1 */
	const uint32_t *lang_src;	/* language group per source, or NULL */
	const uint32_t *lang_tgt;	/* language group per target, or NULL */
};

struct lb_assign_stats {
	double objective;
	size_t min_in, median_in, max_in;
	size_t lifted;		/* links chosen to meet k that top-L would not */
	size_t random_links;
};

int assign_links(const struct lb_candidates *cand,
		 const struct lb_assign_params *p, struct lb_assignment *out,
		 struct lb_assign_stats *stats, struct lb_error *err);
void lb_assignment_release(struct lb_assignment *a);

#endif
