/*
 * relate.h - stage 3: how related pages are.
 *
 * Turns each page's text into a vector and finds, for each source page,
 * its top-M targets by cosine similarity (never itself). The only module
 * that includes BLAS.
 */
#ifndef LINKBOT_RELATE_H
#define LINKBOT_RELATE_H

#include <stddef.h>
#include <stdint.h>
#include "linkbot/candidates.h"
#include "linkbot/doc.h"
#include "linkbot/error.h"

struct lb_relate_input {
	const struct lb_doc *const *src;	/* source pages */
	size_t n_src;
	const struct lb_doc *const *tgt;	/* target pages */
	size_t n_tgt;
	/* self[i]: index in tgt of source i's own page, or -1. */
	const long *self;
	int multi_language;	/* pair only pages of the same language */
};

struct lb_relate_opts {
	size_t m;		/* candidates per source */
};

int relate_candidates(const struct lb_relate_input *in,
		      const struct lb_relate_opts *opts,
		      struct lb_candidates *out, struct lb_error *err);

#endif
