/*
 * publish.h - stage 6: push one folder of rendered objects (an endpoint or
 * a project) to the store, incrementally and never half-written.
 *
 *   struct lb_publish *p = publish_new("demo/blog");
 *   publish_add(p, "pages/<id>.json", gz, len, &meta, &err);   (copies)
 *   publish_commit(p, st, dry_run, &stats, &err);
 *   publish_free(p);
 *
 * publish_commit() reads the folder's manifest.json, uploads the objects
 * whose bytes changed, deletes the ones no longer produced, then writes the
 * new manifest last (before touching anything it marks the keys it will
 * change pending, so a killed run is repaired by the next one). A run with
 * nothing to change writes nothing. With dry_run it prints "would upload
 * KEY (N bytes)", "would delete KEY" and a summary line on stdout and
 * changes nothing; stats are filled either way. Descriptor objects
 * (endpoint.json) are put by the caller after the commit so that the edge
 * sees data before the state. Design notes: publish.c, docs/publish.md.
 */
#ifndef LINKBOT_PUBLISH_H
#define LINKBOT_PUBLISH_H

#include <stddef.h>
#include "linkbot/error.h"
#include "linkbot/store.h"

struct lb_publish;

struct lb_publish_stats {
	long objects;
	long uploaded;
	long deleted;
	long unchanged;
	long long bytes_uploaded;
};

struct lb_publish *publish_new(const char *folder);
void publish_free(struct lb_publish *p);
int publish_add(struct lb_publish *p, const char *key, const void *data,
		size_t len, const struct lb_object_meta *meta,
		struct lb_error *err);
int publish_commit(struct lb_publish *p, struct lb_store *st, int dry_run,
		   struct lb_publish_stats *stats, struct lb_error *err);

/*
 * The safety valve: a commit that would delete more than share (0..1) of
 * the objects the folder's manifest lists changes nothing and fails with
 * LB_ESHRINK (stats still say what it would have done). Default: no limit.
 */
void publish_set_max_delete(struct lb_publish *p, double share);

/*
 * Descriptors (endpoint.json, project.json) carry an "updated" time that
 * must change only with their content, so that an unchanged re-run writes
 * nothing (docs/publish.md). publish_keep_updated() reads key from st; when
 * the stored object parses and equals o but for "updated", it sets o's
 * "updated" to the stored one and returns 1 (o now renders to the stored
 * bytes); otherwise (missing, unreadable, changed) it leaves o alone and
 * returns 0. o is a cJSON object.
 */
struct cJSON;
int publish_keep_updated(struct lb_store *st, const char *key,
			 struct cJSON *o);

/* gzip data (deterministic: no name, no time); *out owned by caller. */
int lb_gzip(const void *data, size_t len, char **out, size_t *out_len,
	    struct lb_error *err);

#endif
