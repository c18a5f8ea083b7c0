/*
 * corpus.h - the pages of one client, kept between runs (SQLite).
 *
 * crawl/ writes it as it goes, committed in batches (a second or 256
 * writes, whichever comes first: kill -9 leaves it consistent and loses at
 * most the open batch, whose pages the next run fetches again); the build
 * step (relate, assign, render) reads the live pages. One database per client: <state_dir>/<client>/corpus.sqlite
 * (SQLite, WAL journal; corpus_free() checkpoints it back into that one
 * file, so the state can be copied to a bucket and back between runs).
 *
 * One row per URL taken from the sources: the page when it is live (its
 * doc as JSON, its canonical URL and sets), what the last fetch said
 * (status, ETag, Last-Modified, the sitemap's lastmod) and when it was last
 * tried, so that a run killed at any moment resumes where it stopped.
 * A URL that was excluded keeps a row without a doc (a tombstone).
 *
 *   corpus_open() -> corpus_run_begin()
 *     -> corpus_put() / corpus_exclude() / corpus_touch() / corpus_failed()
 *     -> corpus_forget() for URLs gone from the sources -> corpus_run_end()
 *   -> corpus_free()
 *   corpus_foreach() visits live pages, one per canonical URL.
 */
#ifndef LINKBOT_CORPUS_H
#define LINKBOT_CORPUS_H

#include <stdint.h>
#include "linkbot/doc.h"
#include "linkbot/error.h"

struct lb_corpus;

/* What the crawler knew of a fetch, kept for conditional GETs. */
struct lb_fetch_meta {
	const char *url;		/* the URL taken from the sources */
	const char *final_url;		/* after redirects */
	int status;			/* last HTTP status, 0 for a network error */
	const char *etag;		/* may be NULL */
	const char *last_modified;	/* may be NULL */
	const char *lastmod;		/* the sitemap's <lastmod>, may be NULL */
	int64_t fetched_at;		/* unix seconds */
};

int corpus_open(const char *state_dir, const char *client_id,
		struct lb_corpus **out, struct lb_error *err);
/* Commits the open batch (corpus_free() and corpus_run_end() do too). */
int corpus_commit(struct lb_corpus *c, struct lb_error *err);
void corpus_free(struct lb_corpus *c);

/*
 * Stores a page that was fetched and indexed: doc->url is its canonical URL,
 * sets is a comma-separated list of the set names it belongs to. Replaces
 * what was stored for meta->url.
 */
int corpus_put(struct lb_corpus *c, const struct lb_fetch_meta *meta,
	       const struct lb_doc *doc, const char *sets,
	       struct lb_error *err);

/* Removes the page fetched from url (404, 410, noindex, out of the sources). */
int corpus_remove(struct lb_corpus *c, const char *url, struct lb_error *err);

/*
 * The page of url is not (or no longer) indexed: status is what the fetch
 * said (0 robots, refused, too big...). Keeps a tombstone tried at `at`.
 */
int corpus_exclude(struct lb_corpus *c, const char *url, int status,
		   int64_t at, struct lb_error *err);

/* A transient failure (5xx, network): the previous version stays live. */
int corpus_failed(struct lb_corpus *c, const char *url, int status,
		  int64_t at, struct lb_error *err);

/*
 * Not modified (304, or the same sitemap lastmod): the page stays, with its
 * sets recomputed (sets "" excludes it) and its times set to `at`.
 */
int corpus_touch(struct lb_corpus *c, const char *url, const char *sets,
		 const char *lastmod, int64_t at, struct lb_error *err);

/*
 * Not fetched (the sitemap's <lastmod> is the stored one): the sets are
 * recomputed (sets "" excludes it), tried_at is `at`, fetched_at stays.
 */
int corpus_skip(struct lb_corpus *c, const char *url, const char *sets,
		int64_t at, struct lb_error *err);

/* Deletes every trace of url (gone from the sources). */
int corpus_forget(struct lb_corpus *c, const char *url, struct lb_error *err);

/*
 * Side crawl (`linkbot crawl --urls`): URLs asked for by name, not listed by
 * the sources. Every night's crawl takes them as if a source listed them,
 * so a full crawl does not remove them as "gone from the sources", until
 * they stop being pages (excluded, 4xx): then they leave this list.
 * corpus_side_urls() fills out (sorted; the caller releases it).
 */
int corpus_side_add(struct lb_corpus *c, const char *url, int64_t at,
		    struct lb_error *err);
int corpus_side_remove(struct lb_corpus *c, const char *url,
		       struct lb_error *err);
int corpus_side_urls(struct lb_corpus *c, struct lb_strlist *out,
		     struct lb_error *err);

/* What the corpus knows of one URL; strings owned by the struct. */
struct lb_url_state {
	int known;		/* a row exists */
	int live;		/* a page is indexed from it */
	int status;
	char *final_url;
	char *etag;
	char *last_modified;
	char *lastmod;
	char *canonical;	/* the page's URL when live */
	int64_t fetched_at;	/* last 200 or 304 */
	int64_t tried_at;	/* last attempt, whatever it gave */
};
int corpus_get_state(struct lb_corpus *c, const char *url,
		     struct lb_url_state *st, struct lb_error *err);
void corpus_state_release(struct lb_url_state *st);

/* Visits every URL with a row (live or not), in URL order. */
typedef int (*corpus_url_fn)(const char *url, int live, void *arg);
int corpus_foreach_url(struct lb_corpus *c, corpus_url_fn fn, void *arg,
		       struct lb_error *err);

/*
 * Live pages indexed under a canonical URL that was itself crawled and is
 * not indexable (noindex, 4xx, a failed redirect, out of the sets): one
 * "url<TAB>canonical<TAB>status" line each, appended to out (the caller's).
 */
int corpus_dead_canonicals(struct lb_corpus *c, struct lb_strlist *out,
			   struct lb_error *err);

/*
 * Runs. corpus_run_begin() decides what the crawl at `now` does:
 *   *skip = 1: a crawl already finished on this UTC day and !force;
 *   otherwise *cutoff is the time from which URLs count as done in this run
 *   (the start of an unfinished run of the same day, which is resumed, or
 *   now for a new run).
 */
int corpus_run_begin(struct lb_corpus *c, int64_t now, int force, int *skip,
		     int64_t *cutoff, struct lb_error *err);
int corpus_run_end(struct lb_corpus *c, int64_t now, struct lb_error *err);
/* 1 if the run begun is a --force run: this one's flag, or the flag of
 * the unfinished run it resumes (a killed --force run stays one). */
int corpus_run_forced(const struct lb_corpus *c);

/*
 * The corpus between CI runs, in the state store under _state/<client>/
 * corpus.sqlite (src/corpus/corpus_sync.c). corpus_pull() before
 * corpus_open(): downloads it unless a local corpus exists (nothing stored
 * yet is fine). corpus_push() after corpus_free(): uploads the file.
 */
struct lb_store;
int corpus_pull(struct lb_store *st, const char *state_dir,
		const char *client_id, struct lb_error *err);
int corpus_push(struct lb_store *st, const char *state_dir,
		const char *client_id, struct lb_error *err);
/*
 * Any other state file, by its path under the state directory (e.g.
 * "<client>/<endpoint>/links.tsv"), under _state/ of the state store:
 * pull downloads it unless it exists locally (nothing stored is fine);
 * push uploads it if it exists.
 */
int state_file_pull(struct lb_store *st, const char *state_dir,
		    const char *rel, struct lb_error *err);
int state_file_push(struct lb_store *st, const char *state_dir,
		    const char *rel, struct lb_error *err);

/*
 * Visits each live page once per canonical URL, in canonical URL order.
 * The doc is the visitor's to take: what it moves out (and leaves
 * lb_doc_init()'ed or NULL) is not released after the visit.
 */
typedef int (*corpus_visit_fn)(struct lb_doc *doc, const char *sets,
			       void *arg);
int corpus_foreach(struct lb_corpus *c, corpus_visit_fn fn, void *arg,
		   struct lb_error *err);

/* Fetch metadata of a URL, for conditional GETs; 0 found, 1 unknown. */
int corpus_get_meta(struct lb_corpus *c, const char *url, char **etag,
		    char **last_modified, char **lastmod, int64_t *fetched_at,
		    struct lb_error *err);

/* Number of live pages. */
long corpus_count(struct lb_corpus *c);

/*
 * A read-only connection of its own to c's file, for a thread that reads
 * page texts while c stays with its owner (relate streams the texts of a
 * million pages rather than keep them all in memory). It reads what the
 * owner committed (corpus_commit(); the crawl commits when it ends).
 */
struct lb_corpus_reader;
int corpus_reader_open(const struct lb_corpus *c,
		       struct lb_corpus_reader **out, struct lb_error *err);
void corpus_reader_free(struct lb_corpus_reader *r);

/*
 * The body text of the live page whose canonical URL is url, the same row
 * corpus_foreach() visits: *text is malloc'd, NULL when the page has no
 * text or is not live; links (may be NULL) gets its links, none for a
 * page stored before links were kept (the caller releases them).
 */
int corpus_reader_text(struct lb_corpus_reader *r, const char *url,
		       char **text, struct lb_doclinks *links,
		       struct lb_error *err);

#endif
