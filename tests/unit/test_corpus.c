/* The corpus: pages per URL, one per canonical, runs, kill -9 safety. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "linkbot/config.h"
#include "linkbot/corpus.h"
#include "linkbot/pages.h"
#include "linkbot/store.h"

#define DAY 86400

static char dir[] = "/tmp/linkbot-test-corpus.XXXXXX";

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/linkbot-test-corpus.XXXXXX");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct lb_corpus *open_c(void)
{
	struct lb_corpus *c = NULL;
	struct lb_error err;

	lb_error_init(&err);
	if (corpus_open(dir, "client", &c, &err) < 0)
		fail_msg("%s", err.msg);
	return c;
}

static void put(struct lb_corpus *c, const char *url, const char *final,
		const char *canonical, const char *title, const char *sets,
		int64_t at)
{
	struct lb_doc doc;
	struct lb_fetch_meta meta;
	struct lb_error err;

	lb_doc_init(&doc);
	doc.url = strdup(canonical);
	doc.title = strdup(title);
	doc.text = malloc(strlen(title) + sizeof("text of "));
	strcpy(doc.text, "text of ");
	strcat(doc.text, title);
	lb_error_init(&err);
	if (strcmp(title, "B") == 0 &&	/* B links to A */
	    lb_doclinks_add(&doc.links, "http://h/a", "see A", &err) < 0)
		fail_msg("%s", err.msg);
	memset(&meta, 0, sizeof(meta));
	meta.url = url;
	meta.final_url = final;
	meta.status = 200;
	meta.etag = "\"e1\"";
	meta.lastmod = "2026-01-01";
	meta.fetched_at = at;
	lb_error_init(&err);
	if (corpus_put(c, &meta, &doc, sets, &err) < 0)
		fail_msg("%s", err.msg);
	lb_doc_release(&doc);
}

struct seen {
	char buf[2048];
	int n;
};

static int visit(struct lb_doc *doc, const char *sets, void *arg)
{
	struct seen *s = arg;
	size_t len = strlen(s->buf);

	snprintf(s->buf + len, sizeof(s->buf) - len, "%s|%s|%s\n", doc->url,
		 doc->title ? doc->title : "", sets);
	s->n++;
	return 0;
}

static void pages(struct lb_corpus *c, struct seen *s)
{
	struct lb_error err;

	memset(s, 0, sizeof(*s));
	lb_error_init(&err);
	if (corpus_foreach(c, visit, s, &err) < 0)
		fail_msg("%s", err.msg);
}

static void test_canonical_dedup(void **state)
{
	struct lb_corpus *c = open_c();
	struct seen s;

	(void)state;
	put(c, "http://h/b", "http://h/b", "http://h/b", "B", "blog", 1);
	/* two URLs, one canonical: the page fetched at its canonical wins */
	put(c, "http://h/a-amp", "http://h/a-amp", "http://h/a", "A amp",
	    "amp", 1);
	put(c, "http://h/a", "http://h/a", "http://h/a", "A", "blog", 1);
	put(c, "http://h/old", "http://h/a", "http://h/a", "A old", "blog",
	    1);
	pages(c, &s);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.buf, "http://h/a|A|blog,amp\n"
				   "http://h/b|B|blog\n");
	assert_int_equal(corpus_count(c), 2);
	corpus_free(c);
}

static char *reader_text(struct lb_corpus_reader *r, const char *url)
{
	struct lb_error err;
	char *text = NULL;

	lb_error_init(&err);
	if (corpus_reader_text(r, url, &text, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	return text;
}

/* A reader on its own connection sees the row corpus_foreach() visits. */
static void test_reader_text(void **state)
{
	struct lb_corpus *c = open_c();
	struct lb_corpus_reader *r = NULL;
	struct lb_error err;
	char *t;

	(void)state;
	lb_error_init(&err);
	put(c, "http://h/a-amp", "http://h/a-amp", "http://h/a", "A amp",
	    "amp", 1);
	put(c, "http://h/a", "http://h/a", "http://h/a", "A", "blog", 1);
	put(c, "http://h/b", "http://h/b", "http://h/b", "B", "blog", 1);
	assert_int_equal(corpus_commit(c, &err), 0);	/* for other readers */
	assert_int_equal(corpus_reader_open(c, &r, &err), 0);
	t = reader_text(r, "http://h/a");
	assert_non_null(t);
	assert_string_equal(t, "text of A");
	free(t);
	t = reader_text(r, "http://h/b");
	assert_string_equal(t, "text of B");
	free(t);
	/* the links are kept with the text (a page without: none) */
	{
		struct lb_doclinks l = { NULL, 0 };

		assert_int_equal(corpus_reader_text(r, "http://h/b", &t, &l,
						    &err), 0);
		free(t);
		assert_int_equal(l.n, 1);
		assert_string_equal(l.v[0].url, "http://h/a");
		assert_string_equal(l.v[0].anchor, "see A");
		lb_doclinks_release(&l);
		assert_int_equal(corpus_reader_text(r, "http://h/a", &t, &l,
						    &err), 0);
		free(t);
		assert_int_equal(l.n, 0);
	}
	assert_null(reader_text(r, "http://h/none"));
	assert_null(reader_text(r, "http://h/a-amp"));	/* not a canonical */
	/* the owner writes on; the reader sees the committed state */
	assert_int_equal(corpus_remove(c, "http://h/a", &err), 0);
	t = reader_text(r, "http://h/a");
	assert_string_equal(t, "text of A");	/* not committed yet */
	free(t);
	assert_int_equal(corpus_commit(c, &err), 0);
	t = reader_text(r, "http://h/a");
	assert_string_equal(t, "text of A amp");
	free(t);
	corpus_reader_free(r);
	corpus_free(c);
}

/*
 * The pages with their full texts and links for the build (pages.h):
 * the same docs as a load without them but for those, the full texts
 * gone past the budget, and gone again after pages_drop_texts().
 */
static void test_pages_full_texts(void **state)
{
	struct lb_corpus *c = open_c();
	struct pages plain, full, small;
	struct lb_error err;
	size_t i;

	(void)state;
	lb_error_init(&err);
	put(c, "http://h/a-amp", "http://h/a-amp", "http://h/a", "A amp",
	    "amp", 1);
	put(c, "http://h/a", "http://h/a", "http://h/a", "A", "blog", 1);
	put(c, "http://h/b", "http://h/b", "http://h/b", "B", "blog", 1);
	assert_int_equal(pages_load(c, 0, 0, &plain, &err), 0);
	assert_int_equal(pages_load(c, 0, 1 << 20, &full, &err), 0);
	assert_int_equal(pages_load(c, 0, 12, &small, &err), 0);
	assert_int_equal(plain.n, 2);
	assert_int_equal(full.n, 2);
	assert_int_equal(small.n, 2);
	assert_false(plain.full_texts);
	assert_true(full.full_texts);
	assert_false(small.full_texts);	/* "text of A" + "text of B" > 12 */
	for (i = 0; i < 2; i++) {
		assert_string_equal(plain.rec[i].doc.url, full.rec[i].doc.url);
		assert_string_equal(plain.rec[i].doc.title,
				    full.rec[i].doc.title);
		assert_string_equal(plain.rec[i].sets, full.rec[i].sets);
		assert_null(plain.rec[i].doc.text);
		assert_int_equal(plain.rec[i].doc.links.n, 0);
		assert_null(small.rec[i].doc.text);
		assert_int_equal(small.rec[i].doc.links.n, 0);
	}
	/* the stored doc of the canonical URL: what a corpus reader reads */
	assert_string_equal(full.rec[0].doc.text, "text of A");
	assert_string_equal(full.rec[1].doc.text, "text of B");
	assert_int_equal(full.rec[1].doc.links.n, 1);
	assert_string_equal(full.rec[1].doc.links.v[0].url, "http://h/a");
	assert_string_equal(full.rec[1].doc.links.v[0].anchor, "see A");
	pages_drop_texts(&full);
	assert_false(full.full_texts);
	for (i = 0; i < 2; i++) {
		assert_null(full.rec[i].doc.text);
		assert_int_equal(full.rec[i].doc.links.n, 0);
	}
	pages_release(&plain);
	pages_release(&full);
	pages_release(&small);
	/* a text wanted for rendering (enterprise "text") keeps its cut */
	assert_int_equal(pages_load(c, 6, 1 << 20, &plain, &err), 0);
	assert_false(plain.full_texts);
	assert_string_equal(plain.rec[0].doc.text, "text o");
	pages_release(&plain);
	corpus_free(c);
}

/* A page with title and, unless NULL, terms (the corpus does not read
 * them). */
static void put_terms(struct lb_corpus *c, const char *url, const char *title,
		      const char *terms)
{
	struct lb_doc doc;
	struct lb_fetch_meta meta;
	struct lb_error err;

	lb_doc_init(&doc);
	doc.url = strdup(url);
	doc.title = strdup(title);
	doc.text = strdup("some text");
	if (terms != NULL) {
		doc.terms_len = strlen(terms);
		doc.terms = (unsigned char *)strdup(terms);
	}
	memset(&meta, 0, sizeof(meta));
	meta.url = url;
	meta.status = 200;
	meta.fetched_at = 1;
	lb_error_init(&err);
	if (corpus_put(c, &meta, &doc, "blog", &err) < 0)
		fail_msg("%s", err.msg);
	lb_doc_release(&doc);
}

/*
 * A doc's terms (doc.h) come back with the doc, the full texts loaded;
 * not with a doc another writer changed beside them (a linkbot without
 * the column updates doc only), nor without the texts; a corpus made
 * before the column gets it and keeps its pages.
 */
static void test_terms(void **state)
{
	struct lb_corpus *c;
	struct pages p;
	struct lb_error err;
	sqlite3 *db;
	char path[400];

	(void)state;
	lb_error_init(&err);
	/* a corpus of before the column, with one page */
	snprintf(path, sizeof(path), "%s/client", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/client/corpus.sqlite", dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
		"CREATE TABLE url(url TEXT PRIMARY KEY, final_url TEXT,"
		" canonical TEXT, sets TEXT, doc TEXT,"
		" status INTEGER NOT NULL DEFAULT 0, etag TEXT,"
		" last_modified TEXT, lastmod TEXT,"
		" fetched_at INTEGER NOT NULL DEFAULT 0,"
		" tried_at INTEGER NOT NULL DEFAULT 0);"
		"INSERT INTO url VALUES('http://h/old', 'http://h/old',"
		" 'http://h/old', 'blog', '{\"url\":\"http://h/old\","
		"\"title\":\"Old\"}', 200, NULL, NULL, NULL, 1, 1);"
		"PRAGMA user_version=1;", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	c = open_c();
	put_terms(c, "http://h/a", "A", "terms of A");
	put_terms(c, "http://h/b", "B", "terms of B");
	put_terms(c, "http://h/c", "C", NULL);
	assert_int_equal(pages_load(c, 0, 1 << 20, &p, &err), 0);
	assert_int_equal(p.n, 4);
	assert_true(p.full_texts);
	assert_int_equal(p.rec[0].doc.terms_len, 10);
	assert_memory_equal(p.rec[0].doc.terms, "terms of A", 10);
	assert_memory_equal(p.rec[1].doc.terms, "terms of B", 10);
	assert_null(p.rec[2].doc.terms);	/* none made */
	assert_null(p.rec[3].doc.terms);	/* the old page */
	assert_string_equal(p.rec[3].doc.title, "Old");
	pages_drop_texts(&p);
	assert_null(p.rec[0].doc.terms);
	pages_release(&p);
	/* not kept without the full texts */
	assert_int_equal(pages_load(c, 0, 0, &p, &err), 0);
	assert_null(p.rec[0].doc.terms);
	pages_release(&p);
	assert_int_equal(pages_load(c, 100, 1 << 20, &p, &err), 0);
	assert_null(p.rec[0].doc.terms);
	pages_release(&p);
	corpus_free(c);
	/* another writer changes a doc and not its terms */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
		"UPDATE url SET doc = replace(doc, '\"A\"', '\"A2\"')"
		" WHERE url = 'http://h/a'", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	c = open_c();
	assert_int_equal(pages_load(c, 0, 1 << 20, &p, &err), 0);
	assert_string_equal(p.rec[0].doc.title, "A2");
	assert_null(p.rec[0].doc.terms);
	assert_memory_equal(p.rec[1].doc.terms, "terms of B", 10);
	pages_release(&p);
	/* a page stored again without terms: none */
	put_terms(c, "http://h/b", "B", NULL);
	assert_int_equal(pages_load(c, 0, 1 << 20, &p, &err), 0);
	assert_null(p.rec[1].doc.terms);
	pages_release(&p);
	corpus_free(c);
}

static void test_outcomes(void **state)
{
	struct lb_corpus *c = open_c();
	struct lb_url_state st;
	struct lb_error err;
	struct seen s;
	char *etag, *lm, *lastmod;
	int64_t at;

	(void)state;
	lb_error_init(&err);
	put(c, "http://h/a", "http://h/a", "http://h/a", "A", "blog", 10);
	put(c, "http://h/b", "http://h/b", "http://h/b", "B", "blog", 10);
	put(c, "http://h/c", "http://h/c", "http://h/c", "C", "blog", 10);
	/* a 503: the page stays, its try is recorded */
	assert_int_equal(corpus_failed(c, "http://h/a", 503, 20, &err), 0);
	assert_int_equal(corpus_get_state(c, "http://h/a", &st, &err), 0);
	assert_true(st.known && st.live);
	assert_int_equal(st.status, 200);
	assert_int_equal(st.fetched_at, 10);
	assert_int_equal(st.tried_at, 20);
	assert_string_equal(st.etag, "\"e1\"");
	corpus_state_release(&st);
	/* a 404: a tombstone */
	assert_int_equal(corpus_exclude(c, "http://h/b", 404, 21, &err), 0);
	assert_int_equal(corpus_get_state(c, "http://h/b", &st, &err), 0);
	assert_true(st.known && !st.live);
	assert_int_equal(st.status, 404);
	assert_int_equal(st.tried_at, 21);
	corpus_state_release(&st);
	/* not modified, with a new set list; "" removes it */
	assert_int_equal(corpus_touch(c, "http://h/c", "blog,all", NULL, 22,
				      &err), 0);
	pages(c, &s);
	assert_string_equal(s.buf, "http://h/a|A|blog\n"
				   "http://h/c|C|blog,all\n");
	assert_int_equal(corpus_get_meta(c, "http://h/c", &etag, &lm, &lastmod,
					 &at, &err), 0);
	assert_string_equal(etag, "\"e1\"");
	assert_null(lm);
	assert_string_equal(lastmod, "2026-01-01");
	assert_int_equal(at, 22);
	free(etag);
	free(lastmod);
	assert_int_equal(corpus_get_meta(c, "http://h/zz", &etag, &lm,
					 &lastmod, &at, &err), 1);
	/* skipped for an unchanged <lastmod>: tried, not fetched */
	assert_int_equal(corpus_skip(c, "http://h/c", "blog", 30, &err), 0);
	assert_int_equal(corpus_get_state(c, "http://h/c", &st, &err), 0);
	assert_true(st.live);
	assert_int_equal(st.fetched_at, 22);
	assert_int_equal(st.tried_at, 30);
	corpus_state_release(&st);
	assert_int_equal(corpus_touch(c, "http://h/c", "", NULL, 23, &err), 0);
	pages(c, &s);
	assert_string_equal(s.buf, "http://h/a|A|blog\n");
	/* gone from the sources: no trace */
	assert_int_equal(corpus_forget(c, "http://h/a", &err), 0);
	assert_int_equal(corpus_get_state(c, "http://h/a", &st, &err), 0);
	assert_false(st.known);
	assert_int_equal(corpus_remove(c, "http://h/new", &err), 0);
	assert_int_equal(corpus_count(c), 0);
	corpus_free(c);
}

/* "SELECT ... FROM sqlite_master", user_version and journal_mode of a
 * corpus file, as one string */
static void db_shape(const char *path, char *out, size_t size)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	size_t n = 0;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY,
					 NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT type || name || "
		"tbl_name || coalesce(sql, '') FROM sqlite_master ORDER BY name",
		-1, &s, NULL), SQLITE_OK);
	out[0] = '\0';
	while (sqlite3_step(s) == SQLITE_ROW)
		n += (size_t)snprintf(out + n, size - n, "%s\n",
				      sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s,
					    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	n += (size_t)snprintf(out + n, size - n, "v%d\n",
			      sqlite3_column_int(s, 0));
	sqlite3_finalize(s);
	sqlite3_close(db);
	/* the header's WAL bytes (18, 19): 2 in WAL mode */
	{
		FILE *f = fopen(path, "rb");
		unsigned char h[20];
		assert_non_null(f);
		assert_int_equal(fread(h, 1, 20, f), 20);
		fclose(f);
		snprintf(out + n, size - n, "w%d%d\n", h[18], h[19]);
	}
}

/*
 * A new corpus is written from the process's empty one (corpus.c,
 * tmpl_create()): the same tables, version and WAL mode as one that SQLite
 * creates itself (a journal file beside a missing corpus leaves it to
 * SQLite), and nothing else left in the client's directory.
 */
static void test_new_corpus(void **state)
{
	struct lb_corpus *c = NULL;
	struct lb_error err;
	char a[4096], b[4096], p[600];
	struct dirent *e;
	DIR *d;
	FILE *f;
	int files = 0;

	(void)state;
	lb_error_init(&err);
	c = open_c();	/* "client": from the template */
	corpus_free(c);
	snprintf(p, sizeof(p), "%s/client", dir);
	assert_non_null(d = opendir(p));
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' &&
		    strcmp(e->d_name, "corpus.sqlite") != 0)
			files++;
	closedir(d);
	assert_int_equal(files, 0);	/* no private file left */
	snprintf(p, sizeof(p), "%s/sqlite", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/sqlite/corpus.sqlite-journal", dir);
	assert_non_null(f = fopen(p, "w"));	/* empty: not hot */
	fclose(f);
	assert_int_equal(corpus_open(dir, "sqlite", &c, &err), 0);
	corpus_free(c);
	snprintf(p, sizeof(p), "%s/client/corpus.sqlite", dir);
	db_shape(p, a, sizeof(a));
	snprintf(p, sizeof(p), "%s/sqlite/corpus.sqlite", dir);
	db_shape(p, b, sizeof(b));
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "v1\nw22\n"));
	/* a second open finds it and keeps what it holds */
	c = open_c();
	put(c, "https://a.example/x", NULL, "https://a.example/x", "X", "s",
	    1000);
	corpus_free(c);
	c = open_c();
	{
		int64_t day = 20000 * (int64_t)DAY, cutoff;
		int skip;
		assert_int_equal(corpus_run_begin(c, day, 0, &skip, &cutoff,
						  &err), 0);
	}
	corpus_free(c);
	snprintf(p, sizeof(p), "%s/client/corpus.sqlite", dir);
	{
		sqlite3 *db = NULL;
		sqlite3_stmt *s = NULL;
		assert_int_equal(sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY,
						 NULL), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM "
			"url", -1, &s, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(s), SQLITE_ROW);
		assert_int_equal(sqlite3_column_int(s, 0), 1);
		sqlite3_finalize(s);
		sqlite3_close(db);
	}
}

static void test_runs(void **state)
{
	struct lb_corpus *c = open_c();
	struct lb_error err;
	int64_t day = 20000 * (int64_t)DAY, cutoff;
	int skip;

	(void)state;
	lb_error_init(&err);
	/* first run of the day */
	assert_int_equal(corpus_run_begin(c, day + 100, 0, &skip, &cutoff,
					  &err), 0);
	assert_false(skip);
	assert_int_equal(cutoff, day + 100);
	/* killed: the next start the same day resumes it */
	corpus_free(c);
	c = open_c();
	assert_int_equal(corpus_run_begin(c, day + 500, 0, &skip, &cutoff,
					  &err), 0);
	assert_false(skip);
	assert_int_equal(cutoff, day + 100);
	assert_false(corpus_run_forced(c));
	assert_int_equal(corpus_run_end(c, day + 600, &err), 0);
	/* finished: same day is skipped, unless forced */
	assert_int_equal(corpus_run_begin(c, day + 700, 0, &skip, &cutoff,
					  &err), 0);
	assert_true(skip);
	assert_int_equal(corpus_run_begin(c, day + 800, 1, &skip, &cutoff,
					  &err), 0);
	assert_false(skip);
	assert_int_equal(cutoff, day + 800);
	assert_true(corpus_run_forced(c));
	/* the forced run killed, then resumed (even without force): it is
	 * still a forced run */
	corpus_free(c);
	c = open_c();
	assert_int_equal(corpus_run_begin(c, day + 900, 0, &skip, &cutoff,
					  &err), 0);
	assert_false(skip);
	assert_int_equal(cutoff, day + 800);
	assert_true(corpus_run_forced(c));
	assert_int_equal(corpus_run_end(c, day + 950, &err), 0);
	/* the next day: a new run */
	assert_int_equal(corpus_run_begin(c, day + DAY + 1, 0, &skip, &cutoff,
					  &err), 0);
	assert_false(skip);
	assert_int_equal(cutoff, day + DAY + 1);
	corpus_free(c);
}

static void test_kill9(void **state)
{
	pid_t pid;
	int status, i, n;
	struct lb_corpus *c;
	struct seen s;
	sqlite3 *db;
	sqlite3_stmt *st;
	char path[400];

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct lb_corpus *cc = open_c();
		char url[64];
		for (i = 0;; i++) {
			snprintf(url, sizeof(url), "http://h/p%06d", i);
			put(cc, url, url, url, "T", "blog", i);
			if (i == 50) {
				/* pages are committed in batches: "ready"
				 * says the first 51 are */
				struct lb_error cerr;
				FILE *f;
				lb_error_init(&cerr);
				if (corpus_commit(cc, &cerr) < 0)
					_exit(1);
				snprintf(path, sizeof(path), "%s/ready", dir);
				f = fopen(path, "w");
				if (f)
					fclose(f);
			}
		}
	}
	snprintf(path, sizeof(path), "%s/ready", dir);
	for (i = 0; i < 500 && access(path, F_OK) != 0; i++)
		usleep(10000);
	usleep(50000);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	assert_true(WIFSIGNALED(status));
	/* the database is whole, every page it has is whole */
	snprintf(path, sizeof(path), "%s/client/corpus.sqlite", dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1,
					    &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	sqlite3_close(db);
	c = open_c();
	pages(c, &s);
	n = (int)corpus_count(c);
	assert_true(n > 50);	/* every page committed before the kill */
	/* consecutive: page i committed means every page before it was (a
	 * kill loses the open batch, a suffix) */
	{
		struct lb_url_state us;
		struct lb_error err;
		char url[64];
		lb_error_init(&err);
		for (i = 0; i < n; i++) {
			snprintf(url, sizeof(url), "http://h/p%06d", i);
			assert_int_equal(corpus_get_state(c, url, &us, &err), 0);
			assert_true(us.live);
			corpus_state_release(&us);
		}
	}
	corpus_free(c);
}

static void test_sync_through_store(void **state)
{
	struct lb_config *cfg = NULL;
	struct lb_store *st = NULL;
	struct lb_corpus *c;
	struct lb_error err;
	struct seen s;
	char store_dir[400], cmd[500];
	const char *yaml = "clients: []\n";

	(void)state;
	lb_error_init(&err);
	assert_int_equal(config_parse("t", yaml, strlen(yaml), &cfg, &err), 0);
	snprintf(store_dir, sizeof(store_dir), "%s/store", dir);
	if (store_open(cfg, store_dir, &st, &err) < 0)
		fail_msg("%s", err.msg);
	/* nothing stored yet, nothing local: fine, nothing created */
	assert_int_equal(corpus_pull(st, dir, "client", &err), 0);
	snprintf(cmd, sizeof(cmd), "test ! -e '%s/client/corpus.sqlite'", dir);
	assert_int_equal(system(cmd), 0);
	c = open_c();
	put(c, "http://h/a", "http://h/a", "http://h/a", "A", "blog", 1);
	corpus_free(c);
	assert_int_equal(corpus_push(st, dir, "client", &err), 0);
	/* a new runner: empty state directory */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/client'", dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(corpus_pull(st, dir, "client", &err), 0);
	c = open_c();
	pages(c, &s);
	assert_string_equal(s.buf, "http://h/a|A|blog\n");
	/* a local corpus wins over the stored one */
	put(c, "http://h/b", "http://h/b", "http://h/b", "B", "blog", 2);
	corpus_free(c);
	assert_int_equal(corpus_pull(st, dir, "client", &err), 0);
	c = open_c();
	assert_int_equal(corpus_count(c), 2);
	corpus_free(c);
	store_free(st);
	config_free(cfg);
}

static void test_bad_state_dir(void **state)
{
	struct lb_corpus *c = NULL;
	struct lb_error err;

	(void)state;
	lb_error_init(&err);
	assert_int_equal(corpus_open("/proc/linkbot-no", "x", &c, &err), -1);
	assert_null(c);
	assert_int_not_equal(err.code, LB_EOK);
	corpus_free(NULL);
}

/*
 * lb_doc_to_json() writes the JSON itself; the stored docs (and the hash
 * of them that checks a page's stored terms) must keep the bytes that a
 * cJSON tree printed unformatted gave. The reference below is the cJSON
 * code it replaced.
 */
static char *doc_json_cjson(const struct lb_doc *doc, int with_text,
			    int with_sources)
{
	static const char *const src_names[] = {
		"none", "h1", "jsonld", "opengraph", "meta", "body", "url",
		"derived",
	};
	cJSON *o = cJSON_CreateObject(), *a, *src;
	char *s;
	size_t i;

#define REF_STR(name)                                                   \
	if (doc->name != NULL)                                          \
		cJSON_AddStringToObject(o, #name, doc->name);
	LB_DOC_STR_FIELDS(REF_STR)
#undef REF_STR
#define REF_LIST(name)                                                  \
	if (doc->name.n > 0) {                                          \
		a = cJSON_AddArrayToObject(o, #name);                   \
		for (i = 0; i < doc->name.n; i++)                       \
			cJSON_AddItemToArray(                           \
				a, cJSON_CreateString(doc->name.v[i])); \
	}
	LB_DOC_LIST_FIELDS(REF_LIST)
#undef REF_LIST
	if (with_text && doc->text != NULL)
		cJSON_AddStringToObject(o, "text", doc->text);
	if (with_text && doc->links.n > 0) {
		a = cJSON_AddArrayToObject(o, "links");
		for (i = 0; i < doc->links.n; i++) {
			cJSON *l = cJSON_CreateObject();

			cJSON_AddItemToArray(a, l);
			cJSON_AddStringToObject(l, "url", doc->links.v[i].url);
			if (doc->links.v[i].anchor != NULL)
				cJSON_AddStringToObject(l, "anchor",
							doc->links.v[i].anchor);
		}
	}
	if (doc->noindex)
		cJSON_AddTrueToObject(o, "noindex");
	if (with_sources) {
		src = cJSON_AddObjectToObject(o, "sources");
		for (i = 0; i < LB_F__COUNT; i++)
			if (doc->src[i] != LB_SRC_NONE)
				cJSON_AddStringToObject(
					src,
					lb_doc_field_name((enum lb_doc_field)i),
					src_names[doc->src[i]]);
	}
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* a string of n random bytes 1..255, control characters, quotes and
 * backslashes often */
static char *rand_str(unsigned *seed, size_t n)
{
	static const char special[] = "\"\\/\b\f\n\r\t\x01\x1f\x7f";
	char *s = malloc(n + 1);
	size_t i;

	assert_non_null(s);
	for (i = 0; i < n; i++) {
		unsigned r = (unsigned)rand_r(seed);
		s[i] = r % 3 == 0 ? special[r / 3 % (sizeof(special) - 1)] :
				    (char)(1 + r / 3 % 255);
	}
	s[n] = '\0';
	return s;
}

/*
 * lb_doc_from_json() reads the form lb_doc_to_json() writes directly and
 * hands anything else to cJSON; the reference below is the cJSON reading
 * it replaced: both must give the same doc (or both fail) for any input.
 */
static int doc_read_cjson(const char *json, struct lb_doc *doc)
{
	cJSON *o = cJSON_Parse(json);
	const cJSON *it;

	lb_doc_init(doc);
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return -1;
	}
#define REF_TAKE_STR(name)                                                \
	it = cJSON_GetObjectItemCaseSensitive(o, #name);                  \
	if (cJSON_IsString(it) && it->valuestring[0] != '\0')             \
		doc->name = strdup(it->valuestring);
	LB_DOC_STR_FIELDS(REF_TAKE_STR)
	REF_TAKE_STR(text)
#undef REF_TAKE_STR
#define REF_TAKE_LIST(name)                                               \
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(o, #name)) \
		if (cJSON_IsString(it))                                   \
			assert_int_equal(lb_strlist_add(&doc->name,       \
					 it->valuestring, NULL), 0);
	LB_DOC_LIST_FIELDS(REF_TAKE_LIST)
#undef REF_TAKE_LIST
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(o, "links")) {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(it, "url");
		const cJSON *an = cJSON_GetObjectItemCaseSensitive(it, "anchor");

		if (cJSON_IsString(u))
			assert_int_equal(lb_doclinks_add(&doc->links,
				u->valuestring,
				cJSON_IsString(an) ? an->valuestring : NULL,
				NULL), 0);
	}
	doc->noindex = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o,
								     "noindex"));
	cJSON_Delete(o);
	return 0;
}

static void str_same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

/* lb_doc_from_json() and the cJSON reading agree on json */
static void doc_read_same(const char *json)
{
	struct lb_doc a, b;
	struct lb_error err;
	int ra = lb_doc_from_json(json, &a, &err);
	int rb = doc_read_cjson(json, &b);
	size_t i;

	assert_int_equal(ra, rb);
	if (ra == 0) {
#define SAME_STR(name) str_same(a.name, b.name);
		LB_DOC_STR_FIELDS(SAME_STR)
		SAME_STR(text)
#undef SAME_STR
#define SAME_LIST(name)                                                 \
		assert_int_equal(a.name.n, b.name.n);                   \
		for (i = 0; i < a.name.n; i++)                          \
			assert_string_equal(a.name.v[i], b.name.v[i]);
		LB_DOC_LIST_FIELDS(SAME_LIST)
#undef SAME_LIST
		assert_int_equal(a.links.n, b.links.n);
		for (i = 0; i < a.links.n; i++) {
			str_same(a.links.v[i].url, b.links.v[i].url);
			str_same(a.links.v[i].anchor, b.links.v[i].anchor);
		}
		assert_int_equal(a.noindex, b.noindex);
	}
	lb_doc_release(&a);
	lb_doc_release(&b);
}

/* the reading of every prefix of json and of json with one byte changed
 * (to each of a few bytes that make other forms) */
static void doc_read_mutations(const char *json)
{
	static const char bytes[] = " \"\\,:[]{}0nu\x01tf";
	size_t n = strlen(json), i, k;
	char *m = strdup(json);

	assert_non_null(m);
	for (i = 0; i <= n; i++) {
		char c = m[i];

		m[i] = '\0';
		doc_read_same(m);
		for (k = 0; k < sizeof(bytes) - 1 && i < n; k++) {
			m[i] = bytes[k];
			doc_read_same(m);
		}
		m[i] = c;
	}
	free(m);
}

static void test_doc_read(void **state)
{
	static const char *const cases[] = {
		"{}", "[]", "", " {}", "{} ", "{}x", "\"x\"", "null",
		"{\"title\":\"a\",\"title\":\"b\"}",
		"{\"title\":\"\\u00e9t\\u00E9\",\"url\":\"/x\"}",
		"{\"title\":\"a\\/b\\\\c\\\"d\\b\\f\\n\\r\\t\"}",
		"{\"title\":\"\",\"description\":\"d\"}",
		"{\"title\":1,\"description\":null,\"url\":true}",
		"{ \"title\" : \"spaced\" }",
		"{\"author\":[\"a\",\"b\",\"a\",\"\"],\"category\":[]}",
		"{\"author\":[\"a\",1,null,\"b\"],\"category\":\"c\"}",
		"{\"author\":{\"x\":\"a\"}}",
		"{\"links\":[{\"url\":\"/a\",\"anchor\":\"A\"},{\"url\":\"/b\"},"
		"{\"anchor\":\"no url\"},{}]}",
		"{\"links\":[{\"url\":\"/a\",\"url\":\"/b\"}]}",
		"{\"links\":[{\"url\":\"/a\",\"anchor\":3}]}",
		"{\"links\":[{\"url\":\"/a\",\"rel\":\"x\"}],\"noindex\":true}",
		"{\"links\":\"/a\",\"noindex\":false}",
		"{\"noindex\":1}", "{\"noindex\":true,\"noindex\":false}",
		"{\"sources\":{\"title\":\"h1\",\"url\":\"url\"},\"title\":\"t\"}",
		"{\"sources\":{\"title\":1},\"title\":\"t\"}",
		"{\"other\":[\"x\"],\"other\":\"y\",\"flag\":true,\"title\":\"t\"}",
		"{\"other\":[[\"x\"]],\"title\":\"t\"}",
		"{\"text\":\"raw\x01control\",\"title\":\"t\"}",
		"{\"text\":\"bad \\x escape\"}",
		"{\"t\\u0069tle\":\"t\"}",
	};
	size_t i;

	/* what the direct reader reads itself, the values it drops (a
	 * stored doc's "sources", an unknown key's string or list) passed
	 * without a copy, escapes among them */
	static const char *const direct[] = {
		"{\"sources\":{\"title\":\"h1\",\"url\":\"url\"},\"title\":\"t\"}",
		"{\"sources\":{\"ti\\\"tle\":\"h\\n1\"},\"title\":\"t\"}",
		"{\"sources\":{},\"title\":\"t\"}",
		"{\"other\":\"a\\\\b\",\"title\":\"t\"}",
		"{\"other\":[\"x\",\"y\\t\"],\"title\":\"t\"}",
	};
	struct lb_doc d;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		doc_read_same(cases[i]);
		doc_read_mutations(cases[i]);
	}
	for (i = 0; i < sizeof(direct) / sizeof(direct[0]); i++) {
		doc_read_same(direct[i]);
		lb_doc_init(&d);
		assert_int_equal(lb_doc_read_direct(direct[i], &d), 0);
		assert_string_equal(d.title, "t");
		lb_doc_release(&d);
	}
}

static void test_doc_json_bytes(void **state)
{
	unsigned seed = 25;
	int round, wt, ws;

	(void)state;
	for (round = 0; round < 300; round++) {
		struct lb_doc doc;
		size_t i, k;
		char *u, *an;

		lb_doc_init(&doc);
		/* every field present, absent or empty, in turn */
#define SET_STR(name)                                                   \
		k = (size_t)rand_r(&seed) % 3;                          \
		doc.name = k == 0 ? NULL : k == 1 ? strdup("") :        \
			   rand_str(&seed, (size_t)rand_r(&seed) % 40);
		LB_DOC_STR_FIELDS(SET_STR)
#undef SET_STR
		k = (size_t)rand_r(&seed) % 3;
		doc.text = k == 0 ? NULL :
			   rand_str(&seed, (size_t)rand_r(&seed) % 300);
		for (i = (size_t)rand_r(&seed) % 4; i > 0; i--) {
			char *v = rand_str(&seed,
					   1 + (size_t)rand_r(&seed) % 12);

			assert_int_equal(lb_strlist_add(&doc.author, v, NULL),
					 0);
			assert_int_equal(
				lb_strlist_add(&doc.category, v, NULL), 0);
			free(v);
		}
		for (i = (size_t)rand_r(&seed) % 4; i > 0; i--) {
			u = rand_str(&seed, 1 + (size_t)rand_r(&seed) % 30);
			k = (size_t)rand_r(&seed) % 20;
			an = rand_r(&seed) % 2 ? rand_str(&seed, k) : NULL;
			assert_int_equal(
				lb_doclinks_add(&doc.links, u, an, NULL), 0);
			free(u);
			free(an);
		}
		doc.noindex = rand_r(&seed) % 2;
		for (i = 0; i < LB_F__COUNT; i++)
			doc.src[i] = (enum lb_source)(rand_r(&seed) %
						      (LB_SRC_DERIVED + 1));
		for (wt = 0; wt < 2; wt++)
			for (ws = 0; ws < 2; ws++) {
				char *got = lb_doc_to_json(&doc, wt, ws);
				char *want = doc_json_cjson(&doc, wt, ws);

				assert_non_null(got);
				assert_non_null(want);
				assert_string_equal(got, want);
				doc_read_same(got);
				if (round % 50 == 0 && wt && ws)
					doc_read_mutations(got);
				free(got);
				free(want);
			}
		lb_doc_release(&doc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_canonical_dedup, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reader_text, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pages_full_texts, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_terms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outcomes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_corpus, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_kill9, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_through_store, setup,
						teardown),
		cmocka_unit_test(test_bad_state_dir),
		cmocka_unit_test(test_doc_json_bytes),
		cmocka_unit_test(test_doc_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
