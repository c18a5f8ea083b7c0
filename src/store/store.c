/*
 * store.c - one interface over the directory and S3 stores; see store.h.
 * Checks every key before a store kind sees it, so that neither a
 * directory nor a bucket can be written outside its root or prefix.
 */
#include <stdlib.h>
#include <string.h>

#include "linkbot/store.h"
#include "linkbot/wait.h"
#include "store_impl.h"

#define KEY_MAX 1024

/*
 * A key is relative ("a/b/c.json"): no leading '/', no empty, "." or ".."
 * segment, no segment starting with '.' (the directory store's temporary
 * files), no control character or backslash.
 */
static int check_key(const char *key, int allow_empty, struct lb_error *err)
{
	const char *seg, *p;
	size_t n;

	if (key == NULL)
		return lb_error_set(err, LB_EINVALID, "no store key");
	n = strlen(key);
	if (n == 0)
		return allow_empty ? 0 : lb_error_set(err, LB_EINVALID, "empty store key");
	if (n > KEY_MAX)
		return lb_error_set(err, LB_EINVALID,
				    "store key longer than %d bytes", KEY_MAX);
	for (p = key; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\\')
			return lb_error_set(err, LB_EINVALID,
					    "invalid character in store key '%s'",
					    key);
	for (seg = key;; seg = p + 1) {
		p = strchr(seg, '/');
		if (p == NULL)
			p = seg + strlen(seg);
		if (p == seg && !(allow_empty && *p == '\0'))
			return lb_error_set(err, LB_EINVALID,
					    "empty segment in store key '%s'", key);
		if (*seg == '.')
			return lb_error_set(err, LB_EINVALID,
					    "store key '%s' has a segment "
					    "starting with '.'", key);
		if (*p == '\0')
			break;
	}
	return 0;
}

int store_open(const struct lb_config *cfg, const char *location,
	       struct lb_store **out, struct lb_error *err)
{
	*out = NULL;
	if (location == NULL || *location == '\0')
		return lb_error_set(err, LB_ECONFIG, "no store location");
	if (strncmp(location, "s3://", 5) == 0)
		return store_s3_open(cfg, location, out, err);
	if (strncmp(location, "dir:", 4) == 0)
		location += 4;
	return store_dir_open(location, out, err);
}

void store_free(struct lb_store *st)
{
	if (st != NULL)
		st->ops->free(st);
}

int store_put(struct lb_store *st, const char *key, const void *data,
	      size_t len, const struct lb_object_meta *meta,
	      struct lb_error *err)
{
	if (check_key(key, 0, err) < 0)
		return -1;
	return st->ops->put(st, key, data, len, meta, err);
}

int store_get(struct lb_store *st, const char *key, char **data,
	      size_t *len, struct lb_error *err)
{
	*data = NULL;
	if (check_key(key, 0, err) < 0)
		return -1;
	return st->ops->get(st, key, data, len, err);
}

int store_delete(struct lb_store *st, const char *key, struct lb_error *err)
{
	if (check_key(key, 0, err) < 0)
		return -1;
	return st->ops->del(st, key, err);
}

int store_list(struct lb_store *st, const char *prefix, store_list_fn fn,
	       void *arg, struct lb_error *err)
{
	if (prefix == NULL)
		prefix = "";
	if (*prefix != '\0') {
		/* A prefix may end with '/': check it without. */
		size_t n = strlen(prefix);
		char *p = strdup(prefix);
		int rc;

		if (p == NULL)
			return lb_error_set(err, LB_ENOMEM, "out of memory");
		if (n > 0 && p[n - 1] == '/')
			p[n - 1] = '\0';
		rc = check_key(p, 1, err);
		free(p);
		if (rc < 0)
			return -1;
	}
	return st->ops->list(st, prefix, fn, arg, err);
}

int store_check(struct lb_store *st, struct lb_error *err)
{
	char *data = NULL;
	size_t len = 0;
	struct lb_error e;
	int rc;

	lb_error_init(&e);
	rc = store_get(st, "_linkbot/check", &data, &len, &e);
	free(data);
	if (rc < 0 && e.code != LB_ENOTFOUND)
		return lb_error_set(err, e.code, "%s", e.msg);
	return 0;
}

int store_flush(struct lb_store *st, struct lb_error *err)
{
	int rc;

	lb_wait_begin();	/* the disk or the network: not the CPU */
	rc = st->ops->flush(st, err);
	lb_wait_end();
	return rc;
}

int store_link(struct lb_store *st, const char *key, const char *target,
	       struct lb_error *err)
{
	if (check_key(key, 0, err) < 0)
		return -1;
	if (st->ops->link == NULL)
		return 0;
	return st->ops->link(st, key, target, err);
}

const char *store_describe(const struct lb_store *st)
{
	return st->describe;
}
