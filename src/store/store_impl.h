/*
 * store_impl.h - (internal to store/) the operations a store kind
 * implements; store.c dispatches to them and checks keys first.
 */
#ifndef LINKBOT_STORE_IMPL_H
#define LINKBOT_STORE_IMPL_H

#include "linkbot/store.h"

struct store_ops {
	int (*put)(struct lb_store *st, const char *key, const void *data,
		   size_t len, const struct lb_object_meta *meta,
		   struct lb_error *err);
	int (*get)(struct lb_store *st, const char *key, char **data,
		   size_t *len, struct lb_error *err);
	int (*del)(struct lb_store *st, const char *key, struct lb_error *err);
	int (*list)(struct lb_store *st, const char *prefix, store_list_fn fn,
		    void *arg, struct lb_error *err);
	int (*flush)(struct lb_store *st, struct lb_error *err);
	void (*free)(struct lb_store *st);
	/* NULL: the kind has no links (store_link() does nothing) */
	int (*link)(struct lb_store *st, const char *key, const char *target,
		    struct lb_error *err);
};

/* Every store begins with this header. */
struct lb_store {
	const struct store_ops *ops;
	char *describe;
};

/* The largest object store_get() reads. */
#define STORE_GET_MAX ((size_t)256 << 20)

int store_dir_open(const char *root, struct lb_store **out,
		   struct lb_error *err);
int store_s3_open(const struct lb_config *cfg, const char *location,
		  struct lb_store **out, struct lb_error *err);

#endif
