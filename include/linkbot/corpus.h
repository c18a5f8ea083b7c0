/*
 * corpus.h - the pages of one client, kept between runs (SQLite).
 *
 * crawl/ writes it as it goes (each page committed on its own, so kill -9
 * leaves it consistent); the build step (relate, assign, render) reads the
 * live pages. One database per client: <state_dir>/<client>/corpus.sqlite.
 *
 *   corpus_open() -> corpus_put()/corpus_mark_gone()... -> corpus_free()
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

/* Visits each live page once per canonical URL, in canonical URL order. */
typedef int (*corpus_visit_fn)(const struct lb_doc *doc, const char *sets,
			       void *arg);
int corpus_foreach(struct lb_corpus *c, corpus_visit_fn fn, void *arg,
		   struct lb_error *err);

/* Fetch metadata of a URL, for conditional GETs; 0 found, 1 unknown. */
int corpus_get_meta(struct lb_corpus *c, const char *url, char **etag,
		    char **last_modified, char **lastmod, int64_t *fetched_at,
		    struct lb_error *err);

/* Number of live pages. */
long corpus_count(struct lb_corpus *c);

#endif
