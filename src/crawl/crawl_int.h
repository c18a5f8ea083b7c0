/*
 * crawl_int.h - the crawler's internal pieces, shared by the files of src/crawl/
 * and by the crawl unit tests only.
 *
 *   url.c      normalise and resolve URLs (libcurl's URL API)
 *   sitemap.c  XML sitemaps and indexes (libxml2 reader, no network, no
 *              DTD), HTML sitemaps (libxml2's HTML parser), gunzip
 *   xrobots.c  X-Robots-Tag values
 *   fetch.c    the fetcher: curl multi, per-host rate, backoff, SSRF guard
 *   crawl.c    sources -> robots -> pages -> corpus
 */
#ifndef LINKBOT_CRAWL_INT_H
#define LINKBOT_CRAWL_INT_H

#include <semaphore.h>
#include <stddef.h>
#include <stdint.h>
#include "linkbot/buf.h"
#include "linkbot/doc.h"
#include "linkbot/error.h"

/* ---- url.c ---- */

/*
 * Resolves url against base (may be NULL) and normalises it: http(s) only,
 * scheme and host lower case, default port dropped, dot segments removed,
 * empty path "/", fragment dropped. *out is the caller's. -1 if unusable.
 */
int url_normalize(const char *url, const char *base, char **out);

/* "scheme://host[:port]" of a normalised URL; caller frees; NULL on error. */
char *url_origin(const char *url);

/* The path and query of a normalised URL (points into url). */
const char *url_path_query(const char *url);

/* ---- xrobots.c ---- */

/*
 * 1 if the X-Robots-Tag header values (one per header line) forbid
 * indexing at `now`: "noindex" or "none", alone or in comma lists, for
 * every agent or for a named one ("linkbot: noindex", "googlebot: none"),
 * any case; or "unavailable_after: DATE" with DATE <= now.
 */
int xrobots_noindex(const struct lb_strlist *values, int64_t now);

/* 1 if the date of an unavailable_after directive (ISO 8601, RFC 822 or
 * RFC 850) is not after now; 0 if later, NULL or unreadable. */
int xrobots_expired(const char *date, int64_t now);

/* ---- sitemap.c ---- */

#define LB_SITEMAP_MAX_BYTES ((size_t)64 << 20)	/* 50 MB + room, unzipped */

/*
 * Time limits of a sitemap (XML or HTML): it may hold 50 MB, which a slow
 * server, or a crawl sharing a loaded machine with its own extraction,
 * does not send within a page's timeout_seconds; a source that times out
 * costs the night its URLs. So a source is given up when it moves fewer
 * than LB_SOURCE_MIN_RATE bytes a second for timeout_seconds (a drip), or
 * after LB_SOURCE_MAX_SECONDS in all; a page keeps timeout_seconds in all.
 */
#define LB_SOURCE_MIN_RATE 1024
#define LB_SOURCE_MAX_SECONDS 600

/* is_index: loc names a sitemap (from a <sitemapindex>), else a page. */
typedef int (*sitemap_fn)(void *arg, int is_index, const char *loc,
			  const char *lastmod);

/*
 * Parses an XML <urlset> or <sitemapindex> (gzipped or not), calling fn per
 * <loc>; a document that does not start with markup is read as a text
 * sitemap (one URL a line). A document with a DOCTYPE is refused (no entities, ever); nothing
 * is loaded from the network. fn returning -1 stops with that error.
 */
int sitemap_parse_xml(const char *data, size_t len, sitemap_fn fn, void *arg,
		      struct lb_error *err);

/* Calls fn(arg, 0, href, NULL) for every <a href> of an HTML page, as
 * written (the caller resolves); *base_href gets <base href> if any. */
int sitemap_parse_html(const char *data, size_t len, sitemap_fn fn,
		       void *arg, char **base_href, struct lb_error *err);

/* What a source's body is, whatever it was listed as: an HTML page (a
 * doctype, <html>, <head> or <body> first), or an XML sitemap (gzip,
 * "<?xml", <urlset> or <sitemapindex> first). */
int sitemap_looks_html(const char *data, size_t len);
int sitemap_looks_xml(const char *data, size_t len);

/* libxml2's settings for this thread (no entities, quiet); idempotent. */
void sitemap_xml_setup(void);

/* gzipped sitemaps: lb_gunzip() and lb_is_gzip() (linkbot/gz.h). */

/* ---- fetch.c ---- */

enum fetch_error {
	FE_OK = 0,	/* an HTTP response arrived (any status) */
	FE_NETWORK,	/* DNS, connect, reset, timeout */
	FE_REFUSED,	/* private address refused, or not http(s) */
	FE_TOOBIG,	/* body or decompressed body over the cap */
	FE_TYPE,	/* html_only and the 200 answer is not HTML */
};

struct fetch_owner;

struct fetch_req {
	char *url;
	void *udata;
	struct fetch_owner *owner;	/* whose answer it is; NULL: the
					 * done() given to fetcher_run() */
	int html_only;			/* only text/html, xhtml bodies */
	size_t cap;			/* 0: the fetcher's default */
	int truncate;			/* over cap: keep the first cap bytes
					 * (FE_TOOBIG with them), robots.txt */
	int source;			/* a sitemap: LB_SOURCE_* time limits */
	char *if_none_match;		/* may be NULL */
	char *if_modified_since;	/* may be NULL */
	/* fetcher's */
	int tries;
	struct fetch_req *next;
};

struct fetch_res {
	enum fetch_error error;
	int status;			/* 0 without a response */
	char *redirect;			/* absolute Location of a 3xx */
	struct lb_buf body;
	char *content_type;
	char *etag;
	char *last_modified;
	struct lb_strlist xrobots;	/* X-Robots-Tag values */
	long retry_after;		/* seconds, -1 if absent */
	double seconds;			/* total time */
	int timed_out;			/* FE_NETWORK by a timeout */
	char msg[256];			/* why, for errors */
};

/* Transfers in flight at once over all hosts: a sitemap naming 25,000
 * hosts must not start 25,000 robots.txt fetches that all time out. */
#define FETCH_MAX_TOTAL 64

struct fetcher_opts {
	const char *user_agent;
	double interval;		/* seconds between request starts per host; 0 = no limit */
	int per_host;			/* requests in flight per host */
	int max_total;			/* in flight in all (of each owner when
					 * requests have one), 0 =
					 * FETCH_MAX_TOTAL */
	long timeout;			/* seconds, whole transfer */
	long connect_timeout;
	size_t max_body;		/* default cap on (decoded) bodies */
	int allow_private;
	int max_retries;		/* 429, 503, network errors */
	double max_retry_after;		/* longer Retry-After: give up */
	void (*udata_free)(void *);	/* frees a request's udata; may be NULL */
	sem_t *slots;			/* shared by the fetchers of a night:
					 * one token a transfer in flight
					 * over all of them; NULL: none */
	int threaded;			/* two threads (a crawl loop): see
					 * fetcher_answer() */
};

struct fetcher;

/*
 * done() receives each request once it is answered for good (after the
 * fetcher's own retries of 429/503/network errors); it owns req and must
 * either fetcher_add() it again (a redirect) or fetch_req_free() it. res is
 * valid during the call only. Returning -1 stops fetcher_run().
 */
typedef int (*fetch_done_fn)(void *arg, struct fetch_req *req,
			     struct fetch_res *res);

/*
 * One fetcher may serve several crawls at once (a loop thread of the
 * night, loop.c): each request says whose it is (req->owner), and its
 * answer goes to that owner's done(). A done() of an owner that returns
 * -1 fails that owner only (failed is set; the others go on); the
 * fetcher counts each owner's requests, so that its caller knows when
 * an owner's phase is drained (queued and inflight both 0).
 */
struct fetch_owner {
	fetch_done_fn done;
	void *arg;
	const char *log_name;		/* log_client() around its answers;
					 * NULL: the thread's as it is */
	long queued, inflight;		/* the fetcher's */
	int failed;			/* done() returned -1 */
};

int fetcher_new(const struct fetcher_opts *o, struct fetcher **out,
		struct lb_error *err);
void fetcher_free(struct fetcher *f);

/* A request for url (copied). NULL without memory. */
struct fetch_req *fetch_req_new(const char *url, void *udata);
void fetch_req_free(struct fetch_req *r);

/* Queues req (owned by the fetcher from now); front: before the others of
 * its host (robots.txt, redirect hops). */
int fetcher_add(struct fetcher *f, struct fetch_req *req, int front,
		struct lb_error *err);

/* Runs until every queued request is done. */
int fetcher_run(struct fetcher *f, fetch_done_fn done, void *arg,
		struct lb_error *err);

/*
 * One round of fetcher_run(): starts what may start, lets curl work,
 * hands every finished answer to its done() (the owner's, else done; to
 * the worker's fetcher_answer() when threaded), then sleeps until the next start is due, an answer comes in, another
 * thread calls fetcher_wakeup(), or max_ms have passed. -1 on an error
 * of the fetcher itself, or when an unowned done() returns -1.
 */
int fetcher_step(struct fetcher *f, fetch_done_fn done, void *arg,
		 int max_ms, struct lb_error *err);

/*
 * A threaded fetcher (o.threaded, a crawl loop of the night) is driven
 * by two threads: the network thread calls fetcher_step() (timers, curl:
 * the requests leave on time), the worker calls fetcher_answer(), which
 * waits up to max_ms for answers (or fetcher_wakeup()) and calls each
 * one's owner's done() (the extraction, the corpus) on the worker's
 * thread, in the order they came. Every request must have an owner. An
 * answer counts in its owner's inflight until its done() returned. The
 * other calls (fetcher_add() from done(), fetcher_forget(), the counts)
 * are the worker's and may run while the network thread sleeps or steps.
 * Returns the answers handled, or -1 (err set) when a step of the
 * network thread failed: every crawl of the fetcher fails.
 */
int fetcher_answer(struct fetcher *f, int max_ms, struct lb_error *err);

/* Interrupts the sleep of fetcher_step() and of fetcher_answer() (any
 * thread). */
void fetcher_wakeup(struct fetcher *f);

/*
 * Forgets an owner: its queued requests are dropped and its transfers in
 * flight stopped (udata_free, slots given back), then every host it was
 * the last to use and that has nothing left to do is freed, its next
 * allowed start kept in the process's marks as fetcher_free() does: a
 * fetcher that serves a whole night holds the hosts of the crawls in
 * flight only.
 */
void fetcher_forget(struct fetcher *f, struct fetch_owner *o);

/* Requests queued or in flight (answers not yet handled included), of
 * every owner; of one owner (-1 once it failed). */
long fetcher_pending(struct fetcher *f);
long fetcher_owner_pending(struct fetcher *f, const struct fetch_owner *o);

/* Requests started so far, and 1 if addr (struct sockaddr) is private. */
long fetcher_started(const struct fetcher *f);
int fetch_addr_private(const void *sockaddr);

/*
 * The pace of one host: how much slower than the configured rate to go.
 * Errors (5xx, network) x1.5, 429/503 x2, good answers x0.8 back towards 1;
 * and when the moving average of response times (EWMA, 0.2) is above 1 s
 * and three times the best seen, in proportion. Never more than x8.
 */
enum fetch_verdict { PACE_OK, PACE_SLOW_DOWN, PACE_ERROR };
struct fetch_pace {
	double factor_err;	/* from errors, >= 1 */
	double ewma;		/* response time, seconds */
	double best;		/* lowest EWMA seen (after 3 answers) */
	long samples;
};
void fetch_pace_init(struct fetch_pace *p);
void fetch_pace_answer(struct fetch_pace *p, enum fetch_verdict v,
		       double seconds);
double fetch_pace_factor(const struct fetch_pace *p);

/* Retry-After is read by lb_retry_after_parse() (linkbot/retry.h). */

/* ---- crawl.c: a client's crawl in steps (for loop.c) ---- */

struct crawl;
struct lb_config;
struct lb_client;
struct lb_corpus;
struct lb_crawl_opts;
struct lb_crawl_stats;

/*
 * crawl_begin() sets a crawl up on fetcher f (its requests are owned by
 * it, see struct fetch_owner) and queues its first requests; *out is set
 * even when it fails (then crawl_end() it with -1). Then, each time
 * crawl_pending() says 0 (its requests are all answered), crawl_advance()
 * runs the next step: 0 when it queued more (wait again), 1 when the
 * crawl is over. crawl_pending() is -1 once one of its answers failed
 * (then crawl_end() it with -1: its requests are dropped). crawl_end()
 * commits what was done, forgets the crawl's requests and hosts in f and
 * frees the crawl; it returns rc, or -1 if the commit failed. err, opts
 * and stats must live until then; every call of a crawl is made on the
 * thread that drives f.
 */
/* The fetcher's options of a crawl of cfg: crawl_begin()'s fetcher. */
struct fetcher_opts;
void crawl_fetcher_opts(const struct lb_config *cfg, int no_rate_limit,
			struct fetcher_opts *o);

int crawl_begin(const struct lb_config *cfg, const struct lb_client *client,
		struct lb_corpus *corpus, const struct lb_crawl_opts *opts,
		struct lb_crawl_stats *stats, struct fetcher *f,
		struct crawl **out, struct lb_error *err);
/*
 * crawl_begin() in two: crawl_prepare() does what needs no fetcher (the
 * quarantine, the patterns, the corpus's run: the file work), on any
 * thread; crawl_start() then queues the first requests on f, on f's
 * thread, given what crawl_prepare() returned (-1: it only sets f, for
 * crawl_end()). *out is set as crawl_begin() sets it.
 */
int crawl_prepare(const struct lb_config *cfg,
		  const struct lb_client *client, struct lb_corpus *corpus,
		  const struct lb_crawl_opts *opts,
		  struct lb_crawl_stats *stats, struct crawl **out,
		  struct lb_error *err);
int crawl_start(struct crawl *c, struct fetcher *f, int prepared);
int crawl_pending(const struct crawl *c);
int crawl_advance(struct crawl *c);
int crawl_end(struct crawl *c, int rc);

#endif
