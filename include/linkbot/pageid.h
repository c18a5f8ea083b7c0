/*
 * pageid.h - the page ID contract (docs/page-id.md).
 *
 * A URL in any accepted form (full, scheme-less, path-only, percent-encoded)
 * is normalised to a key "path[?query]" and hashed to 32 hex characters. The
 * edge's JavaScript (src/edge/pageid.js) implements the same rules; both are
 * held together by tests/data/page-id/vectors.json.
 */
#ifndef LINKBOT_PAGEID_H
#define LINKBOT_PAGEID_H

#include <stddef.h>
#include "linkbot/error.h"

#define LB_PAGEID_LEN 32	/* hex characters, without the NUL */
#define LB_PAGEID_MAX_INPUT 2048

/*
 * Which query parameters take part in the ID: none (the default), a list of
 * names, or all of them (keep_all). Borrowed pointers.
 */
struct lb_qrule {
	int keep_all;
	const char *const *names;
	size_t n_names;
};

/*
 * Normalises url into *key (caller frees). rule may be NULL (drop the query).
 * Fails with LB_EINVALID and a message saying why the URL is refused.
 */
int pageid_normalize(const char *url, const struct lb_qrule *rule,
		     char **key, struct lb_error *err);

/* id = hex(SHA-256(key)[0..16]); id has room for LB_PAGEID_LEN + 1. */
void pageid_hash(const char *key, char id[LB_PAGEID_LEN + 1]);

/* Both steps: normalise then hash. */
int pageid_of_url(const char *url, const struct lb_qrule *rule,
		  char id[LB_PAGEID_LEN + 1], struct lb_error *err);

#endif
