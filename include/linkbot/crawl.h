/*
 * crawl.h - stage 1: from the client's URL sources to pages in the corpus.
 *
 * Reads the sources (sitemap index, sitemap, HTML sitemap, robots.txt),
 * keeps the URLs that belong to one of the client's sets, fetches them
 * politely with libcurl (robots.txt, rate, redirects, noindex), extracts
 * each page with extract/ and stores it in the corpus.
 * Failed pages are data: counted in the stats, never an error. Only the
 * environment (state store, memory) makes crawl_client() fail.
 */
#ifndef LINKBOT_CRAWL_H
#define LINKBOT_CRAWL_H

#include <semaphore.h>
#include <stdio.h>
#include <time.h>
#include "linkbot/config.h"
#include "linkbot/corpus.h"
#include "linkbot/error.h"

struct lb_crawl_opts {
	int force;		/* recrawl even if done today */
	const char *urls_file;	/* side crawl: only these URLs (one per line) */
	int no_rate_limit;	/* benchmarks only */
	int progress;		/* draw a progress bar (stderr is a TTY) */
	time_t now;		/* injectable clock; 0 = time(NULL) */
	/*
	 * Told of each page not indexed tonight (the run report): outcome
	 * "excluded", "failed" (last version kept) or "removed", the HTTP
	 * status (0 if none) and the reason as the log says it. May be NULL.
	 */
	void (*on_page)(void *arg, const char *url, const char *outcome,
			int status, const char *why);
	void *on_page_arg;
	/*
	 * A night that crawls clients at once (pipeline/sched.c) shares one
	 * cap on transfers in flight: a semaphore with one token a transfer
	 * (docs/crawl.md, max_connections). NULL: only this crawl's cap.
	 */
	sem_t *conn_slots;
	/*
	 * Called with each page's doc as it is about to be stored: may set
	 * doc->terms (doc.h; the pipeline hands relate_terms_doc()), kept
	 * beside the doc in the corpus. NULL: none.
	 */
	void (*doc_terms)(void *arg, struct lb_doc *doc);
	void *doc_terms_arg;
	/* Name the client in the log lines of its crawl (log_client()): a
	 * night of many clients, whose crawls share threads (crawl_loops). */
	int log_client;
};

struct lb_crawl_stats {
	long urls_seen;		/* from the sources */
	long fetched;
	long indexed;
	long not_modified;
	long excluded;		/* out of set, noindex, robots, 4xx */
	long failed;		/* 5xx, network: previous version kept */
	long removed;
};

int crawl_client(const struct lb_config *cfg, const struct lb_client *client,
		 struct lb_corpus *corpus, const struct lb_crawl_opts *opts,
		 struct lb_crawl_stats *stats, struct lb_error *err);

/*
 * The origins ("scheme://host[:port]", normalised) of the client's URL
 * sources, added to *out (the caller's): two clients that share one are
 * not crawled at once (each would hold the host's rate on its own).
 */
int crawl_source_hosts(const struct lb_client *cl, struct lb_strlist *out,
		       struct lb_error *err);

/*
 * Initialises the libraries of the crawler (libcurl, libxml2) once for the
 * process: call it on the main thread before crawl_client() runs on others.
 */
void crawl_global_init(void);

/*
 * The night's crawl loops (src/crawl/loop.c): n threads, each with one
 * fetcher, that crawl every client handed to them at once, in steps, the
 * night's politeness unchanged (docs/crawl.md, "many clients"). conn_slots
 * is the night's cap on transfers in flight (may be NULL).
 * crawl_loops_add() hands a client's crawl (what crawl_client() does) to
 * the loop with the fewest crawls and returns at once, once it did on
 * the caller's thread what needs no network (the corpus's run, the
 * quarantine: a few ms of file work, not the loop's); ended(arg, rc) is
 * then called on that loop's thread once the crawl is over (rc as
 * crawl_client()'s, err set when -1); client, corpus, opts, stats and err
 * must live until then, and nothing else may use the corpus meanwhile.
 * The caller must never crawl two clients of one host at once (each
 * keeps the host's rate). crawl_loops_free() waits for every crawl
 * handed to end, then stops the threads.
 */
struct crawl_loops;
typedef void (*crawl_ended_fn)(void *arg, int rc);
int crawl_loops_new(const struct lb_config *cfg, unsigned n,
		    int no_rate_limit, sem_t *conn_slots,
		    struct crawl_loops **out, struct lb_error *err);
int crawl_loops_add(struct crawl_loops *ls, const struct lb_client *client,
		    struct lb_corpus *corpus, const struct lb_crawl_opts *opts,
		    struct lb_crawl_stats *stats, crawl_ended_fn ended,
		    void *arg, struct lb_error *err);
void crawl_loops_free(struct crawl_loops *ls);

/* The User-Agent header value: "LinkBot/1.0 (+<bot_info_url>)"; static
 * (per thread). */
const char *crawl_user_agent(const struct lb_config *cfg);

/*
 * Fetches one URL and extracts it (linkbot inspect). *body_out may be NULL.
 * status and final URL are reported; doc->noindex covers X-Robots-Tag too.
 */
int crawl_fetch_one(const struct lb_config *cfg, const char *url,
		    struct lb_doc *doc, int *status, char **final_url,
		    struct lb_error *err);

#endif
