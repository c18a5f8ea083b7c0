/*
 * store.h - where answers are published: a directory or an S3-compatible
 * bucket, with one layout (docs/store.md).
 *
 *   store_open(cfg, "public" or "s3://bucket/prefix", &st, &err)
 *   store_put()/store_get()/store_delete()/store_list() ...
 *   store_flush(st, &err)     waits for every queued operation
 *   store_free(st)
 *
 * Locations: a directory ("public", "dir:/srv/x") or "s3://bucket/prefix"
 * (cfg->s3: endpoint, region, path_style; cfg may be NULL for defaults;
 * credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN only). Keys are relative to the store's root or
 * prefix and checked: no leading '/', no empty, "." or ".." segment, no
 * segment starting with '.', no control character (LB_EINVALID).
 *
 * Puts and deletes may be queued and run concurrently (S3: copies of the
 * data, many in flight, retried with backoff); store_flush() waits for all
 * and reports the first failure. Every put replaces an object whole: a
 * directory store writes ".name.pid.tmp" and renames it; its meta is not
 * stored (docs/store.md: gzip is implied by the key). Deleting a missing
 * key succeeds. store_list() calls fn with each key (relative to the root
 * or prefix, as given to store_put) in sorted order; links are not objects
 * and are not listed. store_link() is the directory store's state marker
 * (docs/store.md): a symbolic link the edge's hot path looks through; the
 * S3 store has none and does nothing.
 * See docs/publish.md.
 */
#ifndef LINKBOT_STORE_H
#define LINKBOT_STORE_H

#include <stddef.h>
#include "linkbot/config.h"
#include "linkbot/error.h"

struct lb_store;

struct lb_object_meta {
	const char *content_type;	/* "application/json" */
	const char *content_encoding;	/* "gzip" or NULL */
	const char *cache_control;	/* "public, max-age=86400" or NULL */
};

int store_open(const struct lb_config *cfg, const char *location,
	       struct lb_store **out, struct lb_error *err);
void store_free(struct lb_store *st);

int store_put(struct lb_store *st, const char *key, const void *data,
	      size_t len, const struct lb_object_meta *meta,
	      struct lb_error *err);
/* *data is owned by the caller; LB_ENOTFOUND if the key does not exist. */
int store_get(struct lb_store *st, const char *key, char **data,
	      size_t *len, struct lb_error *err);
int store_delete(struct lb_store *st, const char *key,
		 struct lb_error *err);
typedef int (*store_list_fn)(const char *key, void *arg);
int store_list(struct lb_store *st, const char *prefix, store_list_fn fn,
	       void *arg, struct lb_error *err);
int store_flush(struct lb_store *st, struct lb_error *err);
/*
 * Directory store: makes key a symbolic link to target (a path relative to
 * the key's folder), replacing whatever key was at once; target NULL
 * removes it (a missing key is success). Not queued. S3 store: nothing.
 */
int store_link(struct lb_store *st, const char *key, const char *target,
	       struct lb_error *err);

/*
 * One cheap request that proves the store can be used before a run does
 * any work (a signed GET of a key under the prefix that need not exist:
 * 404 is success). Failure carries the store's own error and its hint, e.g.
 * "cannot read '...': HTTP 403 SignatureDoesNotMatch (check
 * AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)".
 */
int store_check(struct lb_store *st, struct lb_error *err);

/* "dir:/abs/path" or "s3://bucket/prefix", for messages. */
const char *store_describe(const struct lb_store *st);

#endif
