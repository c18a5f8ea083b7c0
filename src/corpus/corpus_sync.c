/*
 * corpus_sync.c - the state kept in a private state store between runs (CI
 * runners start empty; config `state_store`, never under the published
 * store): the corpus, downloaded before the crawl and uploaded as soon as
 * the crawl is done; each endpoint's links.tsv (the previous night's links,
 * for the stability bonus), downloaded before the build and uploaded after.
 *
 * Keys: _state/<path under the state directory> (layout.h), e.g.
 * _state/<client>/corpus.sqlite, _state/<client>/<endpoint>/links.tsv. A
 * download is written atomically and only when there is no local file: a
 * local one always wins, being at least as new as the last upload.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/corpus.h"
#include "linkbot/fsutil.h"
#include "linkbot/layout.h"
#include "linkbot/log.h"
#include "linkbot/store.h"

#define CORPUS_MAX_BYTES ((size_t)16 << 30)

static int paths(const char *state_dir, const char *client_id, char **local,
		 char key[300], struct lb_error *err)
{
	char rel[300];

	layout_corpus_path(rel, sizeof(rel), client_id);
	layout_state_key(key, 300, rel);
	if ((*local = lb_path_join(state_dir, rel)) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	return 0;
}

int corpus_pull(struct lb_store *st, const char *state_dir,
		const char *client_id, struct lb_error *err)
{
	char *local = NULL, *data = NULL, key[300];
	size_t len = 0;
	struct lb_error gerr;
	int rc = -1;

	if (paths(state_dir, client_id, &local, key, err) < 0)
		return -1;
	if (lb_file_exists(local)) {
		rc = 0;	/* a local corpus is at least as new */
		goto out;
	}
	lb_error_init(&gerr);
	if (store_get(st, key, &data, &len, &gerr) < 0) {
		if (gerr.code == LB_ENOTFOUND) {
			log_info("%s: no corpus in %s yet: first crawl",
				 client_id, store_describe(st));
			rc = 0;
		} else {
			lb_error_set(err, gerr.code, "%s", gerr.msg);
		}
		goto out;
	}
	if (len < 16 || memcmp(data, "SQLite format 3", 16) != 0) {
		lb_error_set(err, LB_ESTATE, "%s in %s is not an SQLite "
			     "database", key, store_describe(st));
		goto out;
	}
	if (lb_file_write_atomic(local, data, len, err) < 0)
		goto out;
	log_info("%s: corpus downloaded from %s (%zu bytes)", client_id,
		 store_describe(st), len);
	rc = 0;
out:
	free(data);
	free(local);
	return rc;
}

int corpus_push(struct lb_store *st, const char *state_dir,
		const char *client_id, struct lb_error *err)
{
	static const struct lb_object_meta meta = {
		"application/vnd.sqlite3", NULL, "no-store"
	};
	char *local = NULL, *data = NULL, key[300];
	size_t len = 0;
	int rc = -1;

	if (paths(state_dir, client_id, &local, key, err) < 0)
		return -1;
	/* the caller closed the corpus: the WAL is folded into the file */
	if (lb_file_read(local, CORPUS_MAX_BYTES, &data, &len, err) < 0 ||
	    store_put(st, key, data, len, &meta, err) < 0 ||
	    store_flush(st, err) < 0)
		goto out;
	log_info("%s: corpus uploaded to %s (%zu bytes)", client_id,
		 store_describe(st), len);
	rc = 0;
out:
	free(data);
	free(local);
	return rc;
}

#define STATE_FILE_MAX ((size_t)4 << 30)

int state_file_pull(struct lb_store *st, const char *state_dir,
		    const char *rel, struct lb_error *err)
{
	char *local = NULL, *data = NULL, key[600];
	size_t len = 0;
	struct lb_error gerr;
	int rc = -1;

	layout_state_key(key, sizeof(key), rel);
	if ((local = lb_path_join(state_dir, rel)) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	if (lb_file_exists(local)) {
		rc = 0;
		goto out;
	}
	lb_error_init(&gerr);
	if (store_get(st, key, &data, &len, &gerr) < 0) {
		if (gerr.code == LB_ENOTFOUND)
			rc = 0;	/* none kept yet */
		else
			lb_error_set(err, gerr.code, "%s", gerr.msg);
		goto out;
	}
	if (lb_file_write_atomic(local, data, len, err) < 0)
		goto out;
	log_info("%s downloaded from %s (%zu bytes)", rel, store_describe(st),
		 len);
	rc = 0;
out:
	free(data);
	free(local);
	return rc;
}

int state_file_push(struct lb_store *st, const char *state_dir,
		    const char *rel, struct lb_error *err)
{
	static const struct lb_object_meta meta = {
		"text/tab-separated-values", NULL, "no-store"
	};
	char *local = NULL, *data = NULL, key[600];
	size_t len = 0;
	int rc = -1;

	layout_state_key(key, sizeof(key), rel);
	if ((local = lb_path_join(state_dir, rel)) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	if (!lb_file_exists(local)) {
		rc = 0;	/* nothing computed yet */
		goto out;
	}
	if (lb_file_read(local, STATE_FILE_MAX, &data, &len, err) < 0 ||
	    store_put(st, key, data, len, &meta, err) < 0 ||
	    store_flush(st, err) < 0)
		goto out;
	log_info("%s uploaded to %s (%zu bytes)", rel, store_describe(st), len);
	rc = 0;
out:
	free(data);
	free(local);
	return rc;
}
