/*
 * corpus.c - the crawl state of one client in SQLite; see corpus.h.
 *
 * Durability: WAL journal, synchronous=NORMAL, and writes committed in
 * batches: the first write opens a transaction, which is committed once
 * it holds CORPUS_BATCH writes or is CORPUS_BATCH_MS old (checked at each
 * write), at the end of the run (corpus_run_end()), by corpus_commit() and
 * when the corpus is closed. A kill -9 loses at most the open batch (the
 * last second of a polite crawl), never half of one: the next run finds
 * those URLs as they were before and fetches them again. One commit a
 * page cost ~11 fcntl and ~9.5 pwrite a page (bench/RESULTS.md, issue 25).
 * (NORMAL can lose the last commits on a power cut, not on a killed
 * process; the next run refetches those pages.)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "linkbot/buf.h"
#include "linkbot/corpus.h"
#include "linkbot/fsutil.h"
#include "linkbot/layout.h"
#include "linkbot/log.h"
#include "linkbot/wait.h"

#define SCHEMA_VERSION 1
#define CORPUS_BATCH 256	/* writes in one transaction at most */
#define CORPUS_BATCH_MS 1000	/* and for this long at most */

enum stmt {
	S_PUT, S_EXCLUDE, S_FAILED, S_TOUCH, S_FORGET, S_STATE, S_URLS,
	S_PAGES, S_COUNT, S_LAST_RUN, S_NEW_RUN, S_END_RUN, S_SKIP,
	S_RUN_FORCE, S_SIDE_ADD, S_SIDE_DEL, S_SIDE_LIST, S__COUNT
};

static const char *const sql[S__COUNT] = {
	[S_PUT] =
	"INSERT INTO url(url, final_url, canonical, sets, doc, status, etag,"
	" last_modified, lastmod, fetched_at, tried_at, terms)"
	" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11)"
	" ON CONFLICT(url) DO UPDATE SET final_url = ?2, canonical = ?3,"
	" sets = ?4, doc = ?5, status = ?6, etag = ?7, last_modified = ?8,"
	" lastmod = ?9, fetched_at = ?10, tried_at = ?10, terms = ?11",
	[S_EXCLUDE] =
	"INSERT INTO url(url, status, tried_at) VALUES(?1, ?2, ?3)"
	" ON CONFLICT(url) DO UPDATE SET canonical = NULL, sets = NULL,"
	" doc = NULL, terms = NULL, etag = NULL, last_modified = NULL,"
	" lastmod = NULL, status = ?2, tried_at = ?3",
	[S_FAILED] =
	"INSERT INTO url(url, status, tried_at) VALUES(?1, ?2, ?3)"
	" ON CONFLICT(url) DO UPDATE SET tried_at = ?3,"
	" status = CASE WHEN doc IS NULL THEN ?2 ELSE status END",
	[S_TOUCH] =
	"UPDATE url SET sets = ?2, fetched_at = ?3, tried_at = ?3,"
	" lastmod = coalesce(?4, lastmod),"
	" doc = CASE WHEN ?2 = '' THEN NULL ELSE doc END,"
	" terms = CASE WHEN ?2 = '' THEN NULL ELSE terms END,"
	" canonical = CASE WHEN ?2 = '' THEN NULL ELSE canonical END"
	" WHERE url = ?1",
	[S_FORGET] = "DELETE FROM url WHERE url = ?1",
	[S_STATE] =
	"SELECT doc IS NOT NULL, status, final_url, etag, last_modified,"
	" lastmod, fetched_at, tried_at, canonical FROM url WHERE url = ?1",
	[S_URLS] = "SELECT url, doc IS NOT NULL FROM url ORDER BY url",
	[S_PAGES] =
	"SELECT canonical, doc, sets, terms FROM url WHERE doc IS NOT NULL"
	" ORDER BY canonical, final_url = canonical DESC, url",
	[S_COUNT] =
	"SELECT count(DISTINCT canonical) FROM url WHERE doc IS NOT NULL",
	[S_LAST_RUN] =
	"SELECT id, started_at, finished_at, force FROM run"
	" ORDER BY id DESC LIMIT 1",
	[S_NEW_RUN] = "INSERT INTO run(started_at, force) VALUES(?1, ?2)",
	[S_END_RUN] = "UPDATE run SET finished_at = ?2 WHERE id = ?1",
	/* not fetched: fetched_at stays, so the trust in an unchanged
	 * <lastmod> runs out LASTMOD_TRUST after the last real fetch */
	[S_SKIP] =
	"UPDATE url SET sets = ?2, tried_at = ?3,"
	" doc = CASE WHEN ?2 = '' THEN NULL ELSE doc END,"
	" terms = CASE WHEN ?2 = '' THEN NULL ELSE terms END,"
	" canonical = CASE WHEN ?2 = '' THEN NULL ELSE canonical END"
	" WHERE url = ?1",
	[S_RUN_FORCE] = "UPDATE run SET force = 1 WHERE id = ?1",
	[S_SIDE_ADD] =
	"INSERT INTO side(url, added_at) VALUES(?1, ?2)"
	" ON CONFLICT(url) DO NOTHING",
	[S_SIDE_DEL] = "DELETE FROM side WHERE url = ?1",
	[S_SIDE_LIST] = "SELECT url FROM side ORDER BY url",
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS url("
	" url TEXT PRIMARY KEY,"	/* as taken from the sources */
	" final_url TEXT,"		/* after redirects */
	" canonical TEXT,"		/* the page's URL (doc.url) when live */
	" sets TEXT,"			/* comma-separated set names */
	" doc TEXT,"			/* the doc as JSON; NULL: not indexed */
	" terms BLOB,"			/* stored_terms(): doc's terms */
	" status INTEGER NOT NULL DEFAULT 0,"
	" etag TEXT, last_modified TEXT, lastmod TEXT,"
	" fetched_at INTEGER NOT NULL DEFAULT 0,"
	" tried_at INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX IF NOT EXISTS url_canonical ON url(canonical)"
	" WHERE doc IS NOT NULL;"
	"CREATE TABLE IF NOT EXISTS run("
	" id INTEGER PRIMARY KEY, started_at INTEGER NOT NULL,"
	" finished_at INTEGER, force INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE IF NOT EXISTS side("	/* side-crawled URLs */
	" url TEXT PRIMARY KEY, added_at INTEGER NOT NULL);";

struct lb_corpus {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *st[S__COUNT];
	int64_t run_id;
	int run_force;		/* the run (resumed or new) is a --force run */
	int batch;		/* writes in the open transaction */
	struct timespec batch_start;	/* when it was opened */
};

static int db_error(struct lb_corpus *c, struct lb_error *err,
		    const char *what)
{
	return lb_error_set(err, LB_ESTATE, "%s: %s: %s", c->path, what,
			    sqlite3_errmsg(c->db));
}

static sqlite3_stmt *prep(struct lb_corpus *c, enum stmt s,
			  struct lb_error *err)
{
	if (c->st[s] == NULL &&
	    sqlite3_prepare_v2(c->db, sql[s], -1, &c->st[s], NULL) !=
		    SQLITE_OK) {
		db_error(c, err, "cannot prepare a statement");
		return NULL;
	}
	sqlite3_reset(c->st[s]);
	sqlite3_clear_bindings(c->st[s]);
	return c->st[s];
}

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v == NULL)
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
}

static long ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(now.tv_sec - t->tv_sec) * 1000 +
	       (now.tv_nsec - t->tv_nsec) / 1000000;
}

int corpus_commit(struct lb_corpus *c, struct lb_error *err)
{
	char *errmsg = NULL;

	c->batch = 0;
	if (sqlite3_get_autocommit(c->db))
		return 0;	/* none open (or SQLite rolled it back) */
	if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, &errmsg) != SQLITE_OK) {
		lb_error_set(err, LB_ESTATE, "%s: cannot commit: %s", c->path,
			     errmsg ? errmsg : sqlite3_errmsg(c->db));
		sqlite3_free(errmsg);
		return -1;
	}
	return 0;
}

/*
 * Opens the batch (see above) if none is open. A page's state is read in
 * it too: a read outside a transaction takes and lets go SQLite's locks
 * on its own (~5 fcntl each, one read a page in the crawl), in the batch
 * it takes none. The batch is still committed by the writes' rule, and
 * at the latest when the corpus is closed. IMMEDIATE: the write lock is
 * taken when the batch opens, as the first write took it before reads
 * joined; a deferred batch opened by a read would hold a snapshot, and
 * a write after another connection's commit would fail at once
 * (SQLITE_BUSY_SNAPSHOT) instead of waiting its turn.
 */
static int batch_open(struct lb_corpus *c, struct lb_error *err)
{
	if (!sqlite3_get_autocommit(c->db))
		return 0;
	if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
	    SQLITE_OK)
		return db_error(c, err, "cannot begin a transaction");
	c->batch = 0;
	clock_gettime(CLOCK_MONOTONIC, &c->batch_start);
	return 0;
}

/* Runs a statement that returns no rows, in the open batch (see above). */
static int step_done(struct lb_corpus *c, sqlite3_stmt *s,
		     struct lb_error *err, const char *what)
{
	int rc;

	if (batch_open(c, err) < 0) {
		sqlite3_reset(s);
		return -1;
	}
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return db_error(c, err, what);
	if (++c->batch >= CORPUS_BATCH ||
	    ms_since(&c->batch_start) >= CORPUS_BATCH_MS)
		return corpus_commit(c, err);
	return 0;
}

/*
 * A corpus made before the terms column (still version 1: a linkbot
 * without it reads and writes this one, leaving terms that no longer go
 * with the doc, which stored_terms() then ignores) gets it.
 */
/*
 * A doc's terms (doc.h) are stored after a digest of the doc's JSON as
 * stored beside them: read back, they are the doc's only if the JSON
 * still has that digest (an older linkbot rewrites the doc and leaves
 * the terms). A 64-bit multiply-xorshift over 8-byte words: the check is
 * against staleness, and is ~20 times faster than FNV-1a on 3 KB docs.
 */
#define TERMS_DIGEST 8

static uint64_t doc_digest(const char *s, size_t len)
{
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	uint64_t h = len * k, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s + i, len - i);
	h = (h ^ w) * k;
	h ^= h >> 32;
	return h * k ^ (h >> 29);
}

/* The terms blob to store for doc (its JSON json): digest, then terms. */
static unsigned char *stored_terms(const struct lb_doc *doc, const char *json,
				   size_t *len)
{
	unsigned char *b;
	uint64_t h;

	if (doc->terms == NULL || doc->terms_len == 0 ||
	    (b = malloc(TERMS_DIGEST + doc->terms_len)) == NULL)
		return NULL;
	h = doc_digest(json, strlen(json));
	memcpy(b, &h, TERMS_DIGEST);
	memcpy(b + TERMS_DIGEST, doc->terms, doc->terms_len);
	*len = TERMS_DIGEST + doc->terms_len;
	return b;
}

/* The stored terms b (len bytes) into doc, if they go with json. */
static void load_terms(const unsigned char *b, size_t len, const char *json,
		       struct lb_doc *doc)
{
	uint64_t h;

	if (b == NULL || len <= TERMS_DIGEST)
		return;
	memcpy(&h, b, TERMS_DIGEST);
	if (h != doc_digest(json, strlen(json)) ||
	    (doc->terms = malloc(len - TERMS_DIGEST)) == NULL)
		return;
	memcpy(doc->terms, b + TERMS_DIGEST, len - TERMS_DIGEST);
	doc->terms_len = len - TERMS_DIGEST;
}

/*
 * A new corpus is a copy of an empty one. Created by SQLite in place, a
 * corpus costs ~6 fsyncs and ~1-2 ms of CPU before its first request (the
 * switch to WAL is a rollback-journal commit: journal, directory, journal,
 * file; then the WAL's creation: its header, the directory), and a night
 * of 1,000 new clients spent seconds there with its clients' first
 * requests waiting (bench/RESULTS.md, "the first requests"). So the
 * process builds the empty corpus once (SQLite, the same statements,
 * without syncs: a private file, read back and deleted) and writes each
 * new one from those bytes: a file written under a private name, synced
 * once, then linked to the corpus's name, which it takes only if no
 * corpus is there (link() never replaces one). A killed process leaves no
 * half corpus: at worst a private file, which is deleted or never read.
 * Then corpus_open() goes on as for any corpus (its WAL's creation syncs
 * it and the directory, the link with it). Not for a corpus that has a
 * WAL or a journal beside it (SQLite's to read), nor when the template
 * could not be built: then SQLite creates it as before.
 */
static pthread_mutex_t tmpl_mu = PTHREAD_MUTEX_INITIALIZER;
static char *tmpl;		/* the empty corpus's bytes, tmpl_len of them */
static size_t tmpl_len;
static int tmpl_tried;

static int schema_create(sqlite3 *db, char **errmsg);

/* Builds the template at `scratch` (a private name); 0 or -1. */
static int tmpl_build(const char *scratch)
{
	sqlite3 *db = NULL;
	struct lb_error rerr;
	char *errmsg = NULL, *data = NULL, side[4200];
	size_t len = 0;
	int ok;

	unlink(scratch);
	ok = sqlite3_open_v2(scratch, &db, SQLITE_OPEN_READWRITE |
			     SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			     NULL) == SQLITE_OK &&
	     sqlite3_exec(db, "PRAGMA synchronous=OFF;"
			  "PRAGMA journal_mode=WAL;", NULL, NULL,
			  NULL) == SQLITE_OK &&
	     schema_create(db, &errmsg) == 0;
	sqlite3_free(errmsg);
	/* the last close folds the WAL in and deletes it */
	if (sqlite3_close(db) != SQLITE_OK)
		ok = 0;
	snprintf(side, sizeof(side), "%s-wal", scratch);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", scratch);
	unlink(side);
	lb_error_init(&rerr);
	if (ok && lb_file_read(scratch, (size_t)1 << 20, &data, &len,
			       &rerr) == 0 && len > 0) {
		tmpl = data;
		tmpl_len = len;
	} else {
		free(data);
	}
	unlink(scratch);
	return tmpl != NULL ? 0 : -1;
}

/* Writes the empty corpus at path if none is there; 0 when it did, 1 if
 * SQLite is to create it (or open what is there), -1 on an error. */
static int tmpl_create(const char *path, struct lb_error *err)
{
	char *tmp, side[4200];
	size_t n = strlen(path) + 64, off;
	struct stat sb;
	int fd, rc = -1, r;

	snprintf(side, sizeof(side), "%s-wal", path);
	if (strlen(path) > 4000 || lstat(path, &sb) == 0 ||
	    errno != ENOENT || lstat(side, &sb) == 0)
		return 1;
	snprintf(side, sizeof(side), "%s-journal", path);
	if (lstat(side, &sb) == 0)
		return 1;
	if ((tmp = malloc(n)) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	snprintf(tmp, n, "%s.%ld.%lx.new", path, (long)getpid(),
		 (unsigned long)pthread_self());
	pthread_mutex_lock(&tmpl_mu);
	if (!tmpl_tried) {
		tmpl_tried = 1;
		if (tmpl_build(tmp) < 0)
			log_warnx("%s: cannot build an empty corpus to copy; "
				  "SQLite creates each", path);
	}
	pthread_mutex_unlock(&tmpl_mu);
	if (tmpl == NULL) {
		free(tmp);
		return 1;
	}
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		       0644)) < 0) {
		lb_error_errno(err, LB_ESTATE, "cannot create '%s'", tmp);
		free(tmp);
		return -1;
	}
	for (off = 0; off < tmpl_len;) {
		ssize_t w = write(fd, tmpl + off, tmpl_len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			lb_error_errno(err, LB_ESTATE, "cannot write '%s'",
				       tmp);
			goto out;
		}
		off += (size_t)w;
	}
	lb_wait_begin();
	r = fdatasync(fd);
	lb_wait_end();
	if (r < 0) {
		lb_error_errno(err, LB_ESTATE, "cannot sync '%s'", tmp);
		goto out;
	}
	/* one appeared meanwhile (EEXIST): it is opened; a file system
	 * without hard links: SQLite creates it */
	rc = link(tmp, path) == 0 ? 0 : 1;
out:
	close(fd);
	unlink(tmp);
	free(tmp);
	return rc;
}

/* The schema in one transaction (a new corpus's, or an older one's
 * upgrade); 0 or -1 with *errmsg. */
static int schema_create(sqlite3 *db, char **errmsg)
{
	sqlite3_stmt *s = NULL;
	int has = 0;

	if (sqlite3_exec(db, "BEGIN", NULL, NULL, errmsg) != SQLITE_OK ||
	    sqlite3_exec(db, schema, NULL, NULL, errmsg) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('url')"
			       " WHERE name = 'terms'", -1, &s, NULL) !=
	    SQLITE_OK)
		return -1;
	has = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	if (!has && sqlite3_exec(db, "ALTER TABLE url ADD COLUMN terms BLOB",
				 NULL, NULL, errmsg) != SQLITE_OK)
		return -1;
	return sqlite3_exec(db, "PRAGMA user_version=1; COMMIT", NULL, NULL,
			    errmsg) == SQLITE_OK ? 0 : -1;
}

int corpus_open(const char *state_dir, const char *client_id,
		struct lb_corpus **out, struct lb_error *err)
{
	struct lb_corpus *c;
	char *dir = NULL, rel[300];
	char *errmsg = NULL;
	int version = 0;
	sqlite3_stmt *s = NULL;

	*out = NULL;
	if (layout_corpus_path(rel, sizeof(rel), client_id) < 0)
		return lb_error_set(err, LB_ECONFIG, "client id too long: '%s'",
				    client_id);
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	if ((dir = lb_path_join(state_dir, client_id)) == NULL ||
	    (c->path = lb_path_join(state_dir, rel)) == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto fail;
	}
	if (lb_mkdirs(dir, err) < 0 || tmpl_create(c->path, err) < 0)
		goto fail;
	if (sqlite3_open_v2(c->path, &c->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		if (c->db != NULL)
			db_error(c, err, "cannot open");
		else
			lb_error_set(err, LB_ESTATE, "%s: cannot open",
				     c->path);
		goto fail;
	}
	sqlite3_busy_timeout(c->db, 10000);
	if (sqlite3_exec(c->db, "PRAGMA journal_mode=WAL;"
			 "PRAGMA synchronous=NORMAL;", NULL, NULL,
			 &errmsg) != SQLITE_OK) {
		lb_error_set(err, LB_ESTATE, "%s: %s", c->path, errmsg);
		goto fail;
	}
	if (sqlite3_prepare_v2(c->db, "PRAGMA user_version", -1, &s, NULL) !=
		    SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_ROW) {
		db_error(c, err, "cannot read the schema version");
		goto fail;
	}
	version = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	s = NULL;
	if (version > SCHEMA_VERSION) {
		lb_error_set(err, LB_ESTATE, "%s: schema version %d is newer "
			     "than this linkbot (%d)", c->path, version,
			     SCHEMA_VERSION);
		goto fail;
	}
	if (schema_create(c->db, &errmsg) < 0) {
		lb_error_set(err, LB_ESTATE, "%s: cannot create the schema: "
			     "%s", c->path, errmsg ? errmsg : "?");
		goto fail;
	}
	free(dir);
	*out = c;
	return 0;
fail:
	sqlite3_free(errmsg);
	sqlite3_finalize(s);
	free(dir);
	corpus_free(c);
	return -1;
}

void corpus_free(struct lb_corpus *c)
{
	struct lb_error err;
	int i;

	lb_error_init(&err);
	if (c == NULL)
		return;
	if (c->db != NULL && corpus_commit(c, &err) < 0)
		log_warnx("%s", err.msg);
	for (i = 0; i < S__COUNT; i++)
		sqlite3_finalize(c->st[i]);
	if (c->db != NULL) {
		/* fold the WAL back into the one file (copied between runs) */
		sqlite3_wal_checkpoint_v2(c->db, NULL,
					  SQLITE_CHECKPOINT_TRUNCATE, NULL,
					  NULL);
		sqlite3_close(c->db);
	}
	free(c->path);
	free(c);
}

int corpus_put(struct lb_corpus *c, const struct lb_fetch_meta *meta,
	       const struct lb_doc *doc, const char *sets,
	       struct lb_error *err)
{
	sqlite3_stmt *s;
	char *json;
	unsigned char *terms;
	size_t terms_len = 0;
	int rc;

	if (doc->url == NULL)
		return lb_error_set(err, LB_EINVALID, "page '%s' has no URL",
				    meta->url);
	if ((json = lb_doc_to_json(doc, 1, 1)) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	if ((s = prep(c, S_PUT, err)) == NULL) {
		free(json);
		return -1;
	}
	bind_text(s, 1, meta->url);
	bind_text(s, 2, meta->final_url ? meta->final_url : meta->url);
	bind_text(s, 3, doc->url);
	bind_text(s, 4, sets ? sets : "");
	bind_text(s, 5, json);
	sqlite3_bind_int(s, 6, meta->status);
	bind_text(s, 7, meta->etag);
	bind_text(s, 8, meta->last_modified);
	bind_text(s, 9, meta->lastmod);
	sqlite3_bind_int64(s, 10, meta->fetched_at);
	if ((terms = stored_terms(doc, json, &terms_len)) != NULL)
		sqlite3_bind_blob(s, 11, terms, (int)terms_len, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 11);
	rc = step_done(c, s, err, "cannot store a page");
	free(json);
	free(terms);
	return rc;
}

int corpus_exclude(struct lb_corpus *c, const char *url, int status,
		   int64_t at, struct lb_error *err)
{
	sqlite3_stmt *s = prep(c, S_EXCLUDE, err);

	if (s == NULL)
		return -1;
	bind_text(s, 1, url);
	sqlite3_bind_int(s, 2, status);
	sqlite3_bind_int64(s, 3, at);
	return step_done(c, s, err, "cannot remove a page");
}

int corpus_remove(struct lb_corpus *c, const char *url, struct lb_error *err)
{
	return corpus_exclude(c, url, 0, (int64_t)time(NULL), err);
}

int corpus_failed(struct lb_corpus *c, const char *url, int status,
		  int64_t at, struct lb_error *err)
{
	sqlite3_stmt *s = prep(c, S_FAILED, err);

	if (s == NULL)
		return -1;
	bind_text(s, 1, url);
	sqlite3_bind_int(s, 2, status);
	sqlite3_bind_int64(s, 3, at);
	return step_done(c, s, err, "cannot record a failure");
}

int corpus_touch(struct lb_corpus *c, const char *url, const char *sets,
		 const char *lastmod, int64_t at, struct lb_error *err)
{
	sqlite3_stmt *s = prep(c, S_TOUCH, err);

	if (s == NULL)
		return -1;
	bind_text(s, 1, url);
	bind_text(s, 2, sets ? sets : "");
	sqlite3_bind_int64(s, 3, at);
	bind_text(s, 4, lastmod);
	return step_done(c, s, err, "cannot update a page");
}

int corpus_forget(struct lb_corpus *c, const char *url, struct lb_error *err)
{
	sqlite3_stmt *s = prep(c, S_FORGET, err);

	if (s == NULL)
		return -1;
	bind_text(s, 1, url);
	return step_done(c, s, err, "cannot delete a page");
}

int corpus_side_add(struct lb_corpus *c, const char *url, int64_t at,
		    struct lb_error *err)
{
	sqlite3_stmt *s = prep(c, S_SIDE_ADD, err);

	if (s == NULL)
		return -1;
	bind_text(s, 1, url);
	sqlite3_bind_int64(s, 2, at);
	return step_done(c, s, err, "cannot keep a side-crawled URL");
}

int corpus_side_remove(struct lb_corpus *c, const char *url,
		       struct lb_error *err)
{
	sqlite3_stmt *s = prep(c, S_SIDE_DEL, err);

	if (s == NULL)
		return -1;
	bind_text(s, 1, url);
	return step_done(c, s, err, "cannot drop a side-crawled URL");
}

int corpus_side_urls(struct lb_corpus *c, struct lb_strlist *out,
		     struct lb_error *err)
{
	sqlite3_stmt *s = prep(c, S_SIDE_LIST, err);
	int r;

	if (s == NULL)
		return -1;
	while ((r = sqlite3_step(s)) == SQLITE_ROW)
		if (lb_strlist_add(out, (const char *)sqlite3_column_text(s, 0),
				   err) < 0) {
			sqlite3_reset(s);
			return -1;
		}
	sqlite3_reset(s);
	if (r != SQLITE_DONE)
		return db_error(c, err, "cannot list side-crawled URLs");
	return 0;
}

static char *col_dup(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return t ? strdup((const char *)t) : NULL;
}

int corpus_get_state(struct lb_corpus *c, const char *url,
		     struct lb_url_state *st, struct lb_error *err)
{
	sqlite3_stmt *s = prep(c, S_STATE, err);
	int rc;

	memset(st, 0, sizeof(*st));
	if (s == NULL || batch_open(c, err) < 0)
		return -1;
	bind_text(s, 1, url);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		st->known = 1;
		st->live = sqlite3_column_int(s, 0);
		st->status = sqlite3_column_int(s, 1);
		st->final_url = col_dup(s, 2);
		st->etag = col_dup(s, 3);
		st->last_modified = col_dup(s, 4);
		st->lastmod = col_dup(s, 5);
		st->fetched_at = sqlite3_column_int64(s, 6);
		st->tried_at = sqlite3_column_int64(s, 7);
		st->canonical = col_dup(s, 8);
	} else if (rc != SQLITE_DONE) {
		sqlite3_reset(s);
		return db_error(c, err, "cannot read a page");
	}
	sqlite3_reset(s);
	return 0;
}

void corpus_state_release(struct lb_url_state *st)
{
	free(st->final_url);
	free(st->etag);
	free(st->last_modified);
	free(st->lastmod);
	free(st->canonical);
	memset(st, 0, sizeof(*st));
}

int corpus_get_meta(struct lb_corpus *c, const char *url, char **etag,
		    char **last_modified, char **lastmod, int64_t *fetched_at,
		    struct lb_error *err)
{
	struct lb_url_state st;

	*etag = *last_modified = *lastmod = NULL;
	*fetched_at = 0;
	if (corpus_get_state(c, url, &st, err) < 0)
		return -1;
	if (!st.known)
		return 1;
	*etag = st.etag;
	*last_modified = st.last_modified;
	*lastmod = st.lastmod;
	*fetched_at = st.fetched_at;
	st.etag = st.last_modified = st.lastmod = NULL;
	corpus_state_release(&st);
	return 0;
}

int corpus_dead_canonicals(struct lb_corpus *c, struct lb_strlist *out,
			   struct lb_error *err)
{
	/* b: the row of the URL that a's canonical names, when that URL was
	 * crawled and is not indexable: noindex or out of the sets (200), a
	 * redirect that went wrong (3xx), gone or refused (4xx but 429).
	 * Failures (5xx, network) and robots.txt refusals (0) prove nothing.
	 * Or b is live but its own page names another canonical URL (not
	 * after a redirect): a loop (A says B, B says A) or a chain, where a
	 * link to b would carry a's title under b's URL: status -1. */
	static const char q[] =
		"SELECT a.url, a.canonical,"
		" CASE WHEN b.doc IS NULL THEN b.status ELSE -1 END FROM url a"
		" JOIN url b ON b.url = a.canonical"
		" WHERE a.doc IS NOT NULL AND a.url != a.canonical"
		" AND b.tried_at > 0"
		" AND ((b.doc IS NULL"
		" AND (b.status = 200 OR (b.status >= 300 AND b.status < 500"
		" AND b.status != 429 AND b.status != 304)))"
		" OR (b.doc IS NOT NULL AND b.canonical != b.url"
		" AND coalesce(b.final_url, b.url) = b.url))"
		" ORDER BY a.url";
	sqlite3_stmt *s = NULL;
	struct lb_buf line;
	int r, rc = -1;

	lb_buf_init(&line, 3 * 8192);
	if (sqlite3_prepare_v2(c->db, q, -1, &s, NULL) != SQLITE_OK)
		return db_error(c, err, "cannot check canonical URLs");
	while ((r = sqlite3_step(s)) == SQLITE_ROW) {
		char st[16];
		lb_buf_reset(&line);
		snprintf(st, sizeof(st), "%d", sqlite3_column_int(s, 2));
		if (lb_buf_adds(&line, (const char *)sqlite3_column_text(s, 0),
				err) < 0 ||
		    lb_buf_addc(&line, '\t', err) < 0 ||
		    lb_buf_adds(&line, (const char *)sqlite3_column_text(s, 1),
				err) < 0 ||
		    lb_buf_addc(&line, '\t', err) < 0 ||
		    lb_buf_adds(&line, st, err) < 0 ||
		    lb_strlist_add(out, line.data, err) < 0)
			goto out;
	}
	if (r != SQLITE_DONE) {
		db_error(c, err, "cannot check canonical URLs");
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(s);
	lb_buf_release(&line);
	return rc;
}

int corpus_foreach_url(struct lb_corpus *c, corpus_url_fn fn, void *arg,
		       struct lb_error *err)
{
	sqlite3_stmt *s = NULL;
	struct lb_strlist urls = { 0 };
	int *live = NULL, rc = -1, r;
	size_t i, alloc = 0;

	/* Collected first: fn may write to the table it visits. */
	if (sqlite3_prepare_v2(c->db, sql[S_URLS], -1, &s, NULL) != SQLITE_OK)
		return db_error(c, err, "cannot list URLs");
	while ((r = sqlite3_step(s)) == SQLITE_ROW) {
		if (urls.n == alloc) {
			size_t na = alloc ? alloc * 2 : 256;
			int *nl = realloc(live, na * sizeof(*nl));
			char **nv = realloc(urls.v, na * sizeof(*nv));
			if (nl != NULL)
				live = nl;
			if (nv != NULL)
				urls.v = nv;
			if (nl == NULL || nv == NULL) {
				lb_error_set(err, LB_ENOMEM, "out of memory");
				goto out;
			}
			alloc = na;
		}
		live[urls.n] = sqlite3_column_int(s, 1);
		if ((urls.v[urls.n] = col_dup(s, 0)) == NULL) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		urls.n++;
	}
	if (r != SQLITE_DONE) {
		db_error(c, err, "cannot list URLs");
		goto out;
	}
	sqlite3_finalize(s);
	s = NULL;
	for (i = 0; i < urls.n; i++)
		if (fn(urls.v[i], live[i], arg) < 0)
			goto out;
	rc = 0;
out:
	sqlite3_finalize(s);
	lb_strlist_release(&urls);
	free(live);
	return rc;
}

/* Adds the names of csv missing from b (a comma list) to b. */
static int sets_union(struct lb_buf *b, const char *csv, struct lb_error *err)
{
	const char *p = csv;

	while (p != NULL && *p != '\0') {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *q = b->data ? b->data : "";
		int have = 0;
		while (*q != '\0') {
			const char *qe = strchr(q, ',');
			size_t qn = qe ? (size_t)(qe - q) : strlen(q);
			if (qn == n && strncmp(q, p, n) == 0)
				have = 1;
			q = qe ? qe + 1 : q + qn;
		}
		if (!have && n > 0) {
			if (b->len > 0 && lb_buf_addc(b, ',', err) < 0)
				return -1;
			if (lb_buf_add(b, p, n, err) < 0)
				return -1;
		}
		p = e ? e + 1 : NULL;
	}
	return 0;
}

int corpus_foreach(struct lb_corpus *c, corpus_visit_fn fn, void *arg,
		   struct lb_error *err)
{
	sqlite3_stmt *s = NULL;
	char *canon = NULL, *json = NULL;
	unsigned char *terms = NULL;
	size_t terms_len = 0;
	struct lb_buf sets;
	int r, rc = -1;

	lb_buf_init(&sets, 1 << 20);
	if (sqlite3_prepare_v2(c->db, sql[S_PAGES], -1, &s, NULL) != SQLITE_OK)
		return db_error(c, err, "cannot list pages");
	for (;;) {
		const char *cn = NULL;
		r = sqlite3_step(s);
		if (r == SQLITE_ROW)
			cn = (const char *)sqlite3_column_text(s, 0);
		if (canon != NULL && (r != SQLITE_ROW || cn == NULL ||
				      strcmp(cn, canon) != 0)) {
			/* the group of canon is complete: visit it */
			struct lb_doc doc;
			lb_doc_init(&doc);
			if (lb_doc_from_json(json, &doc, err) < 0)
				goto out;
			load_terms(terms, terms_len, json, &doc);
			if (doc.url == NULL || strcmp(doc.url, canon) != 0) {
				free(doc.url);
				doc.url = strdup(canon);
			}
			if (sets.len > 0 &&
			    fn(&doc, sets.data ? sets.data : "", arg) < 0) {
				lb_doc_release(&doc);
				lb_error_set(err, LB_EINTERNAL,
					     "corpus visitor failed");
				goto out;
			}
			lb_doc_release(&doc);
			free(canon);
			free(json);
			free(terms);
			canon = json = NULL;
			terms = NULL;
			lb_buf_reset(&sets);
		}
		if (r != SQLITE_ROW)
			break;
		if (cn == NULL)
			continue;
		if (canon == NULL) {
			const void *tb = sqlite3_column_blob(s, 3);

			canon = strdup(cn);
			json = col_dup(s, 1);
			terms_len = (size_t)sqlite3_column_bytes(s, 3);
			if (tb != NULL && (terms = malloc(terms_len)) != NULL)
				memcpy(terms, tb, terms_len);
			if (canon == NULL || json == NULL) {
				lb_error_set(err, LB_ENOMEM, "out of memory");
				goto out;
			}
		}
		if (sets_union(&sets, (const char *)sqlite3_column_text(s, 2),
			       err) < 0)
			goto out;
	}
	if (r != SQLITE_DONE) {
		db_error(c, err, "cannot list pages");
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(s);
	free(canon);
	free(json);
	free(terms);
	lb_buf_release(&sets);
	return rc;
}

long corpus_count(struct lb_corpus *c)
{
	sqlite3_stmt *s = prep(c, S_COUNT, NULL);
	long n = -1;

	if (s != NULL && sqlite3_step(s) == SQLITE_ROW)
		n = (long)sqlite3_column_int64(s, 0);
	if (s != NULL)
		sqlite3_reset(s);
	return n;
}

int corpus_run_begin(struct lb_corpus *c, int64_t now, int force, int *skip,
		     int64_t *cutoff, struct lb_error *err)
{
	sqlite3_stmt *s = prep(c, S_LAST_RUN, err);
	int r;

	*skip = 0;
	*cutoff = now;
	if (s == NULL)
		return -1;
	r = sqlite3_step(s);
	if (r == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);
		int64_t started = sqlite3_column_int64(s, 1);
		int finished = sqlite3_column_type(s, 2) != SQLITE_NULL;
		int was_forced = sqlite3_column_int(s, 3) != 0;
		sqlite3_reset(s);
		if (started / 86400 == now / 86400 && started <= now) {
			if (!finished) {
				c->run_id = id;
				*cutoff = started;
				/* a --force run killed and resumed stays one */
				c->run_force = was_forced || force;
				log_info("resuming the crawl started at %lld%s",
					 (long long)started, c->run_force ?
					 " (--force)" : "");
				if (force && !was_forced) {
					if ((s = prep(c, S_RUN_FORCE, err)) ==
					    NULL)
						return -1;
					sqlite3_bind_int64(s, 1, id);
					if (step_done(c, s, err, "cannot "
						      "record the run") < 0)
						return -1;
					return corpus_commit(c, err);
				}
				return 0;
			}
			if (!force) {
				*skip = 1;
				return 0;
			}
		}
	} else {
		sqlite3_reset(s);
		if (r != SQLITE_DONE)
			return db_error(c, err, "cannot read the runs");
	}
	if ((s = prep(c, S_NEW_RUN, err)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, now);
	sqlite3_bind_int(s, 2, force);
	if (step_done(c, s, err, "cannot record the run") < 0)
		return -1;
	c->run_id = sqlite3_last_insert_rowid(c->db);
	c->run_force = force;
	return corpus_commit(c, err);
}

int corpus_run_forced(const struct lb_corpus *c)
{
	return c->run_force;
}

int corpus_skip(struct lb_corpus *c, const char *url, const char *sets,
		int64_t at, struct lb_error *err)
{
	sqlite3_stmt *s = prep(c, S_SKIP, err);

	if (s == NULL)
		return -1;
	bind_text(s, 1, url);
	bind_text(s, 2, sets ? sets : "");
	sqlite3_bind_int64(s, 3, at);
	return step_done(c, s, err, "cannot update a page");
}

int corpus_run_end(struct lb_corpus *c, int64_t now, struct lb_error *err)
{
	sqlite3_stmt *s = prep(c, S_END_RUN, err);

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, c->run_id);
	sqlite3_bind_int64(s, 2, now);
	if (step_done(c, s, err, "cannot record the end of the run") < 0)
		return -1;
	return corpus_commit(c, err);
}

/* ---- readers (other threads) ---- */

struct lb_corpus_reader {
	sqlite3 *db;
	sqlite3_stmt *text;
	const char *path;	/* the corpus's, which outlives the reader */
};

int corpus_reader_open(const struct lb_corpus *c,
		       struct lb_corpus_reader **out, struct lb_error *err)
{
	static const char q[] =
		"SELECT doc FROM url WHERE canonical = ?1 AND doc IS NOT NULL"
		" ORDER BY final_url = canonical DESC, url LIMIT 1";
	struct lb_corpus_reader *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (r == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	r->path = c->path;
	if (sqlite3_open_v2(c->path, &r->db,
			    SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(r->db, q, -1, &r->text, NULL) != SQLITE_OK) {
		lb_error_set(err, LB_ESTATE, "%s: cannot open for reading: %s",
			     c->path,
			     r->db ? sqlite3_errmsg(r->db) : "out of memory");
		corpus_reader_free(r);
		return -1;
	}
	sqlite3_busy_timeout(r->db, 10000);
	*out = r;
	return 0;
}

void corpus_reader_free(struct lb_corpus_reader *r)
{
	if (r == NULL)
		return;
	sqlite3_finalize(r->text);
	sqlite3_close(r->db);
	free(r);
}

int corpus_reader_text(struct lb_corpus_reader *r, const char *url,
		       char **text, struct lb_doclinks *links,
		       struct lb_error *err)
{
	struct lb_doc doc;
	int step, rc = 0;

	*text = NULL;
	sqlite3_reset(r->text);
	sqlite3_bind_text(r->text, 1, url, -1, SQLITE_STATIC);
	step = sqlite3_step(r->text);
	if (step == SQLITE_DONE)
		goto out;
	if (step != SQLITE_ROW) {
		rc = lb_error_set(err, LB_ESTATE, "%s: cannot read %s: %s",
				  r->path, url, sqlite3_errmsg(r->db));
		goto out;
	}
	lb_doc_init(&doc);
	rc = lb_doc_from_json((const char *)sqlite3_column_text(r->text, 0),
			      &doc, err);
	if (rc == 0) {
		*text = doc.text;	/* taken over */
		doc.text = NULL;
		if (links != NULL) {
			*links = doc.links;
			memset(&doc.links, 0, sizeof(doc.links));
		}
	}
	lb_doc_release(&doc);
out:
	sqlite3_reset(r->text);
	sqlite3_clear_bindings(r->text);
	return rc;
}
