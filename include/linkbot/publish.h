/*
 * publish.h - stage 6: push one folder of rendered objects (an endpoint or
 * a project) to the store, incrementally and never half-written.
 *
 *   struct lb_publish *p = publish_new("demo/blog");
 *   publish_add(p, "pages/<id>.json", gz, len, &meta, &err);   (copies)
 *   publish_add_owned(p, key, gz, len, &meta, &err);   (takes gz, a
 *                                 malloc'd buffer, and frees it on failure)
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
#include <stdint.h>
#include <time.h>
#include "linkbot/config.h"
#include "linkbot/error.h"
#include "linkbot/pages.h"
#include "linkbot/report.h"
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
int publish_add_owned(struct lb_publish *p, const char *key, char *data,
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

/*
 * The same for many objects: one compressor (libdeflate, level 9: its
 * tables made once) for all of them, so that a publish of many small
 * answers does not allocate it for each. lb_gzip_run() gives the bytes
 * lb_gzip() gives. Not thread-safe: one per thread. lb_gzip_free() keeps
 * up to 16 idle compressors in a process-wide pool (thread-safe) that
 * lb_gzip_new() takes from first; lb_gzip_pool_drain() frees the idle ones
 * (and says how many there were).
 */
struct lb_gzip;
struct lb_gzip *lb_gzip_new(void);
void lb_gzip_free(struct lb_gzip *gz);
size_t lb_gzip_pool_drain(void);
int lb_gzip_run(struct lb_gzip *gz, const void *data, size_t len, char **out,
		size_t *out_len, struct lb_error *err);

/*
 * Publishing an endpoint or a project (src/publish/endpoint.c, project.c):
 * what publish needs of a run, and nothing of its options. The pipeline
 * fills one job per endpoint (or project) and calls:
 *
 *   publish_endpoint()  renders each source page's answer from links_path
 *                       (links.h) and the pages, the random pool, then the
 *                       descriptor and the directory store's markers last
 *                       (docs/store.md); no links yet: published pending.
 *   publish_pending()   an endpoint without data tonight: its published
 *                       answers stay; one that never had any is published
 *                       pending (the edge answers 204).
 *   publish_project_answers()  every module's links (read from
 *                       layout_module_links_path() under state_dir) as the
 *                       module maps of a project (SPEC 2.5).
 *
 * Everything the job points to is borrowed. rep (may be NULL) gets the
 * endpoint's publish figures and outcome.
 */
struct lb_publish_job {
	const struct lb_client *cl;
	const struct lb_endpoint *ep;	/* endpoint and pending */
	const struct lb_project *pr;	/* project */
	const struct pages *pages;
	const char *links_path;		/* endpoint: its links.tsv */
	const char *state_dir;		/* project: where its modules' links are */
	struct lb_store *store;
	time_t now;			/* the descriptors' "updated" */
	uint64_t seed;			/* the random pool's sample */
	int dry_run;			/* only say what would change */
	int allow_shrink;		/* ignore the endpoint's max_shrink */
	struct lb_report_endpoint *rep;
};

int publish_endpoint(const struct lb_publish_job *job, struct lb_error *err);
int publish_pending(const struct lb_publish_job *job, struct lb_error *err);
int publish_project_answers(const struct lb_publish_job *job,
			    struct lb_error *err);

#endif
