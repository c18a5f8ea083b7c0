/* candidates.c - the relate -> assign record; see candidates.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/candidates.h"

int lb_candidates_init(struct lb_candidates *c, size_t n_src, size_t m)
{
	size_t i, n = n_src * m;

	c->n_src = n_src;
	c->m = m;
	c->random_floor = -INFINITY;
	c->target = malloc((n ? n : 1) * sizeof(*c->target));
	c->score = calloc(n ? n : 1, sizeof(*c->score));
	if (c->target == NULL || c->score == NULL) {
		lb_candidates_release(c);
		return -1;
	}
	for (i = 0; i < n; i++)
		c->target[i] = LB_NO_TARGET;
	return 0;
}

void lb_candidates_release(struct lb_candidates *c)
{
	free(c->target);
	free(c->score);
	c->target = NULL;
	c->score = NULL;
	c->n_src = c->m = 0;
}

int lb_candidates_merge(const struct lb_candidates *parts, size_t n,
			struct lb_candidates *out)
{
	size_t i, rows = 0, at = 0, m = n ? parts[0].m : 0;

	for (i = 0; i < n; i++) {
		if (parts[i].m != m)
			return -1;
		rows += parts[i].n_src;
	}
	if (lb_candidates_init(out, rows, m) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		size_t k = parts[i].n_src * m;

		if (parts[i].random_floor > out->random_floor)
			out->random_floor = parts[i].random_floor;
		if (k == 0)
			continue;
		memcpy(out->target + at, parts[i].target,
		       k * sizeof(*out->target));
		memcpy(out->score + at, parts[i].score,
		       k * sizeof(*out->score));
		at += k;
	}
	return 0;
}
