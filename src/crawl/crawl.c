/*
 * crawl.c - stage 1: URL sources -> robots.txt -> pages -> corpus.
 *
 * Design notes.
 *
 * Phases. (1) Sources: every configured source is fetched (through the same
 * polite fetcher as pages); sitemap indexes lead to their sub-sitemaps
 * (filtered by the source's pattern), robots.txt sources to their Sitemap:
 * lines, HTML sitemaps to their links. Each URL found is normalised and kept
 * once if it matches at least one set (the first URL of a redirect chain
 * must). (2) Pages: the URLs are ordered new first, then least recently
 * fetched; those already tried in this run (resume after kill -9) are
 * skipped, those whose sitemap <lastmod> did not change are kept without a
 * fetch, the rest are fetched (conditional GET when the page is live). A
 * page waits for its host's robots.txt, which is fetched once per run.
 * (3) Gone: if every source was read, URLs in the corpus that no source
 * lists any more are deleted; then the run is marked finished.
 *
 * Outcome of a page: 200 + HTML + not noindex (meta or X-Robots-Tag) + first
 * and last URL of its redirect chain and its canonical URL in a common set =
 * indexed under its canonical URL (unless that URL was crawled too and is
 * not indexable: checked once all pages are done); 304 or an unchanged
 * lastmod = kept; 3xx = next hop (every hop checked against robots.txt and
 * the address guard; bounded; loops detected); 4xx, noindex, out of the sets, refused, too big, not HTML =
 * excluded (tombstone, removed if it was live); 5xx, 429 after retries,
 * network errors, robots.txt unreachable = failed (the previous version
 * stays, retried next run). Each outcome is committed at once.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "linkbot/buf.h"
#include "linkbot/crawl.h"
#include "linkbot/url.h"
#include "linkbot/extract.h"
#include "linkbot/fsutil.h"
#include "linkbot/log.h"
#include "linkbot/progress.h"
#include "linkbot/robots.h"
#include "linkbot/urlpattern.h"
#include "crawl_int.h"

/* The defaults live in linkbot/config.h (LB_CRAWL_*), next to the settings. */
#define DEFAULT_PPM LB_CRAWL_PAGES_PER_MINUTE
#define DEFAULT_MAX_BODY LB_CRAWL_MAX_BODY_BYTES
#define DEFAULT_TIMEOUT LB_CRAWL_TIMEOUT_SECONDS
#define DEFAULT_REDIRECTS LB_CRAWL_MAX_REDIRECTS
#define PPM_MIN LB_CRAWL_PAGES_PER_MINUTE_MIN
#define PPM_MAX LB_CRAWL_PAGES_PER_MINUTE_MAX
#define MAX_SITEMAPS 1000
#define MAX_SITEMAP_DEPTH 3
#define URLS_FILE_MAX ((size_t)64 << 20)
/* an unchanged sitemap lastmod is trusted for this long, then revalidated */
#define LASTMOD_TRUST (7 * 86400)
/* URLs kept from the sources per run (memory bound against huge sitemaps) */
#define MAX_CANDIDATES 2000000

enum job_kind { J_ROBOTS, J_SRC_ROBOTS, J_SRC_SITEMAP, J_SRC_HTML, J_PAGE };

struct job {
	enum job_kind kind;
	char *first;			/* the URL as listed */
	char *lastmod;			/* the sitemap's, pages only */
	struct lb_strlist chain;	/* every hop so far */
	int hops;
	size_t host;			/* J_ROBOTS: index in c->hosts */
	const struct lb_urlset *filter;	/* sitemap index pattern */
	int depth;			/* sitemap nesting */
	int was_live;
	char *canonical;		/* the stored page's, when live */
	char *cond_url;			/* the hop that gets If-None-Match */
	char *etag, *last_modified;
	int from_canonical;		/* queued as another page's canonical */
};

enum robots_state { R_UNKNOWN, R_PENDING, R_READY, R_UNREACHABLE, R_REFUSED };

struct hostinfo {
	char *origin;
	enum robots_state state;
	struct lb_robots *robots;	/* NULL when READY: allow all */
	char *refused;			/* R_REFUSED: "refused private address A" */
	struct fetch_req **parked;
	size_t n_parked, alloc_parked;
};

struct cand {
	char *url;
	char *lastmod;
};

/* What the requests in flight are for; see crawl_advance(). */
enum crawl_phase { PH_SOURCES, PH_PAGES, PH_DONE };

struct crawl {
	const struct lb_config *cfg;
	const struct lb_client *cl;
	struct lb_corpus *corpus;
	const struct lb_crawl_opts *opts;
	struct lb_crawl_stats *st;
	struct lb_urlset **sets;
	struct lb_urlset **filters;	/* per source, may be NULL */
	struct fetcher *f;
	struct hostinfo *hosts;
	size_t n_hosts, alloc_hosts;
	/* candidate URLs: an array in discovery order and a hash index */
	struct cand *cand;
	size_t n_cand, alloc_cand;
	size_t *slots;			/* index + 1, 0 = empty */
	size_t n_slots;
	int sources_ok;
	int force;			/* --force, or resuming a --force run */
	struct lb_strlist src_hosts;	/* hosts of the client's sources */
	struct lb_strlist quarantine;	/* URLs whose extraction crashed */
	long sitemaps;
	struct lb_strlist sitemap_urls;	/* read once per run */
	int cand_full;
	long queued_pages;
	long done_pages;
	struct lb_progress prog;
	int prog_on;
	int64_t now, cutoff;
	int max_redirects;
	struct lb_error *err;
	/* the steps (crawl_begin(), crawl_advance()) */
	struct fetch_owner own;		/* this crawl's requests in c->f */
	enum crawl_phase phase;
	int side;			/* a side crawl (opts->urls_file) */
	int q_fd;			/* the quarantine file, -1: none */
};

static _Thread_local char ua_buf[1200];	/* per thread: see sched.c */

int crawl_source_hosts(const struct lb_client *cl, struct lb_strlist *out,
		       struct lb_error *err)
{
	size_t i;

	for (i = 0; i < cl->n_sources; i++) {
		char *url = NULL, *origin;
		int rc = 0;

		if (url_normalize(cl->sources[i].url, NULL, &url) < 0)
			continue;	/* the crawl will say so */
		if ((origin = url_origin(url)) != NULL)
			rc = lb_strlist_add(out, origin, err);
		else
			rc = lb_error_set(err, LB_ENOMEM, "out of memory");
		free(origin);
		free(url);
		if (rc < 0)
			return -1;
	}
	return 0;
}

void crawl_global_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	sitemap_xml_setup();
}

const char *crawl_user_agent(const struct lb_config *cfg)
{
	const char *info = cfg ? cfg->crawl.bot_info_url : NULL;

	if (info != NULL && *info != '\0')
		snprintf(ua_buf, sizeof(ua_buf), "LinkBot/1.0 (+%s)", info);
	else
		snprintf(ua_buf, sizeof(ua_buf), "LinkBot/1.0");
	return ua_buf;
}

static void job_free_v(void *j);

void crawl_fetcher_opts(const struct lb_config *cfg, int no_rate,
			struct fetcher_opts *o)
{
	int ppm = cfg->crawl.pages_per_minute;

	if (ppm <= 0)
		ppm = DEFAULT_PPM;
	if (ppm < PPM_MIN || ppm > PPM_MAX) {
		log_warnx("pages_per_minute %d is outside %d..%d; using %d",
			  ppm, PPM_MIN, PPM_MAX, ppm < PPM_MIN ? PPM_MIN : PPM_MAX);
		ppm = ppm < PPM_MIN ? PPM_MIN : PPM_MAX;
	}
	memset(o, 0, sizeof(*o));
	o->user_agent = crawl_user_agent(cfg);
	o->interval = no_rate ? 0 : 60.0 / ppm;
	o->per_host = no_rate ? 16 : 8;
	o->timeout = cfg->crawl.timeout_seconds > 0 ?
			     cfg->crawl.timeout_seconds : DEFAULT_TIMEOUT;
	o->connect_timeout = o->timeout < 10 ? o->timeout : 10;
	o->max_body = cfg->crawl.max_body_bytes > 0 ?
			      (size_t)cfg->crawl.max_body_bytes :
			      (size_t)DEFAULT_MAX_BODY;
	o->allow_private = cfg->crawl.allow_private;
	o->max_retries = 2;
	o->max_retry_after = 120;
	o->udata_free = job_free_v;
}

/* ---- jobs ---- */

static void job_free(struct job *j)
{
	if (j == NULL)
		return;
	free(j->first);
	free(j->lastmod);
	lb_strlist_release(&j->chain);
	free(j->cond_url);
	free(j->canonical);
	free(j->etag);
	free(j->last_modified);
	free(j);
}

static void job_free_v(void *j)
{
	job_free(j);
}

static void req_drop(struct fetch_req *r)
{
	job_free(r->udata);
	fetch_req_free(r);
}

/* Queues req on the crawl's fetcher as one of its own (owned by it). */
static int crawl_queue(struct crawl *c, struct fetch_req *req, int front)
{
	req->owner = &c->own;
	return fetcher_add(c->f, req, front, c->err);
}

static struct fetch_req *job_req(enum job_kind kind, const char *url,
				 struct lb_error *err)
{
	struct job *j = calloc(1, sizeof(*j));
	struct fetch_req *r;

	if (j == NULL || (j->first = strdup(url)) == NULL ||
	    (r = fetch_req_new(url, j)) == NULL) {
		job_free(j);
		lb_error_set(err, LB_ENOMEM, "out of memory");
		return NULL;
	}
	j->kind = kind;
	r->source = kind == J_SRC_SITEMAP || kind == J_SRC_HTML;
	if (lb_strlist_add(&j->chain, url, err) < 0) {
		req_drop(r);
		return NULL;
	}
	return r;
}

/* ---- candidates ---- */

static size_t hash_str(const char *s)
{
	size_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static long cand_find(const struct crawl *c, const char *url)
{
	size_t i;

	if (c->n_slots == 0)
		return -1;
	for (i = hash_str(url) & (c->n_slots - 1); c->slots[i] != 0;
	     i = (i + 1) & (c->n_slots - 1))
		if (strcmp(c->cand[c->slots[i] - 1].url, url) == 0)
			return (long)(c->slots[i] - 1);
	return -1;
}

static int cand_rehash(struct crawl *c)
{
	size_t n = c->n_slots ? c->n_slots * 2 : 1024, i, k;
	size_t *slots = calloc(n, sizeof(*slots));

	if (slots == NULL)
		return -1;
	for (k = 0; k < c->n_cand; k++) {
		for (i = hash_str(c->cand[k].url) & (n - 1); slots[i] != 0;
		     i = (i + 1) & (n - 1))
			;
		slots[i] = k + 1;
	}
	free(c->slots);
	c->slots = slots;
	c->n_slots = n;
	return 0;
}

/*
 * Sets of the client that the first and the last URL of a redirect chain
 * and the page's canonical URL (NULL: not known yet) all belong to, as
 * "a,b"; "" for none. The canonical URL is the URL a page is indexed and
 * linked under (SPEC 1.7, 1.11), so it must be in the set's patterns too:
 * a page whose canonical URL points outside a set (another section, another
 * host) is not a page of that set.
 */
/*
 * Links only where they belong: a URL is in a set when a pattern that names
 * its host matches it, or when a pattern without a host matches it and its
 * host is one of the client's sources'. So a hostile sitemap, a side crawl
 * or a redirect cannot bring in (nor a canonical point to) another site's
 * pages through a pattern like "/blog/{slug}".
 */
static int in_set(const struct crawl *c, size_t i, const char *url)
{
	const char *h;
	size_t n, k;

	if (urlset_match_hosted(c->sets[i], url))
		return 1;
	if (!urlset_match(c->sets[i], url))
		return 0;
	h = lb_url_host(url, &n);
	if (n > 4 && strncasecmp(h, "www.", 4) == 0)
		h += 4, n -= 4;		/* www.example.com is example.com's */
	for (k = 0; k < c->src_hosts.n; k++) {
		const char *v = c->src_hosts.v[k];

		if (strncasecmp(v, "www.", 4) == 0)
			v += 4;
		if (strlen(v) == n && strncasecmp(v, h, n) == 0)
			return 1;
	}
	return 0;
}

/* A top-level source answered from url (after redirects): its host is
 * the client's too. */
static int src_host_add(struct crawl *c, const char *url)
{
	const char *h;
	size_t n, k;
	char *d;

	h = lb_url_host(url, &n);
	for (k = 0; k < c->src_hosts.n; k++)
		if (strlen(c->src_hosts.v[k]) == n &&
		    strncasecmp(c->src_hosts.v[k], h, n) == 0)
			return 0;
	if ((d = strndup(h, n)) == NULL ||
	    lb_strlist_add(&c->src_hosts, d, c->err) < 0) {
		free(d);
		return lb_error_set(c->err, LB_ENOMEM, "out of memory");
	}
	free(d);
	return 0;
}

/* Collects the hosts of the client's sources (config-given, trusted). */
static int src_hosts_init(struct crawl *c)
{
	size_t i, n;
	char *u = NULL, *h;
	const char *p;

	for (i = 0; i < c->cl->n_sources; i++) {
		if (url_normalize(c->cl->sources[i].url, NULL, &u) < 0)
			continue;
		p = lb_url_host(u, &n);
		h = strndup(p, n);
		free(u);
		if (h == NULL || lb_strlist_add(&c->src_hosts, h, c->err) < 0) {
			free(h);
			return lb_error_set(c->err, LB_ENOMEM, "out of memory");
		}
		free(h);
	}
	return 0;
}

static int sets_of(const struct crawl *c, const char *first,
		   const char *last, const char *canon, struct lb_buf *b)
{
	size_t i;

	lb_buf_reset(b);
	if (lb_buf_adds(b, "", c->err) < 0)
		return -1;
	for (i = 0; i < c->cl->n_sets; i++) {
		if (!in_set(c, i, first) || !in_set(c, i, last) ||
		    (canon != NULL && !in_set(c, i, canon)))
			continue;
		if (b->len > 0 && lb_buf_addc(b, ',', c->err) < 0)
			return -1;
		if (lb_buf_adds(b, c->cl->sets[i].name, c->err) < 0)
			return -1;
	}
	return 0;
}

static int in_some_set(const struct crawl *c, const char *url)
{
	size_t i;

	for (i = 0; i < c->cl->n_sets; i++)
		if (in_set(c, i, url))
			return 1;
	return 0;
}

/* A URL from a source: normalised, kept once if some set wants it. */
static int cand_add(struct crawl *c, const char *raw, const char *base,
		    const char *lastmod)
{
	char *url = NULL;
	struct cand *k;

	if (url_normalize(raw, base, &url) < 0) {
		log_debug("ignoring URL '%s': not an http(s) URL", raw);
		return 0;
	}
	if (cand_find(c, url) >= 0) {
		free(url);
		return 0;
	}
	c->st->urls_seen++;
	if (!in_some_set(c, url)) {
		log_debug("%s: in no set", url);
		c->st->excluded++;
		free(url);
		return 0;
	}
	if (c->n_cand >= MAX_CANDIDATES) {
		if (!c->cand_full++)
			log_warnx("more than %d URLs in the sets: the others are "
				  "ignored this run", MAX_CANDIDATES);
		c->sources_ok = 0;	/* the list is incomplete: remove nothing */
		free(url);
		return 0;
	}
	if (c->n_cand == c->alloc_cand) {
		size_t na = c->alloc_cand ? c->alloc_cand * 2 : 1024;
		struct cand *nc = realloc(c->cand, na * sizeof(*nc));
		if (nc == NULL)
			goto nomem;
		c->cand = nc;
		c->alloc_cand = na;
	}
	if ((c->n_cand + 1) * 2 > c->n_slots && cand_rehash(c) < 0)
		goto nomem;
	k = &c->cand[c->n_cand];
	k->url = url;
	k->lastmod = lastmod ? strdup(lastmod) : NULL;
	c->n_cand++;
	{
		size_t i;
		for (i = hash_str(url) & (c->n_slots - 1); c->slots[i] != 0;
		     i = (i + 1) & (c->n_slots - 1))
			;
		c->slots[i] = c->n_cand;
	}
	return 0;
nomem:
	free(url);
	return lb_error_set(c->err, LB_ENOMEM, "out of memory");
}

/* ---- robots per host ---- */

static struct hostinfo *host_of(struct crawl *c, const char *url,
				size_t *index)
{
	char *origin = url_origin(url);
	size_t i;

	if (origin == NULL) {
		lb_error_set(c->err, LB_ENOMEM, "out of memory");
		return NULL;
	}
	for (i = 0; i < c->n_hosts; i++)
		if (strcmp(c->hosts[i].origin, origin) == 0) {
			free(origin);
			*index = i;
			return &c->hosts[i];
		}
	if (c->n_hosts == c->alloc_hosts) {
		size_t na = c->alloc_hosts ? c->alloc_hosts * 2 : 8;
		struct hostinfo *nh = realloc(c->hosts, na * sizeof(*nh));
		if (nh == NULL) {
			free(origin);
			lb_error_set(c->err, LB_ENOMEM, "out of memory");
			return NULL;
		}
		c->hosts = nh;
		c->alloc_hosts = na;
	}
	memset(&c->hosts[c->n_hosts], 0, sizeof(c->hosts[0]));
	c->hosts[c->n_hosts].origin = origin;
	*index = c->n_hosts;
	return &c->hosts[c->n_hosts++];
}

static void page_counted(struct crawl *c)
{
	c->done_pages++;
	if (c->prog_on)
		progress_add(&c->prog, 1);
}

/* The run report hears of each page not indexed (lb_crawl_opts.on_page). */
static void tell(struct crawl *c, const char *url, const char *outcome,
		 int status, const char *why)
{
	if (c->opts->on_page != NULL)
		c->opts->on_page(c->opts->on_page_arg, url, outcome, status, why);
}

/*
 * The page an outcome belongs to is the URL as listed (j->first); when it
 * was redirected, the hop that decided is said too, so an operator can find
 * the page (a refused hop to 127.0.0.1 is not a page of the site).
 */
static void page_log(struct crawl *c, struct job *j, const char *url,
		     const char *outcome, int status, const char *why)
{
	const char *page = url;
	char *both = NULL;

	if (j->first != NULL && strcmp(j->first, url) != 0) {
		size_t n = strlen(why) + strlen(url) + 20;
		page = j->first;
		if ((both = malloc(n)) != NULL) {	/* else: why alone */
			snprintf(both, n, "%s (redirected to %s)", why, url);
			why = both;
		}
	}
	if (strcmp(outcome, "excluded") == 0)
		log_info("%s: excluded: %s", page, why);
	else
		log_warnx("cannot fetch '%s': %s (previous version kept)",
			  page, why);
	tell(c, page, outcome, status, why);
	free(both);
}

static int page_exclude(struct crawl *c, struct job *j, int status,
			const char *url, const char *why)
{
	page_log(c, j, url, "excluded", status, why);
	c->st->excluded++;
	if (j->was_live)
		c->st->removed++;
	page_counted(c);
	return corpus_exclude(c->corpus, j->first, status, c->now, c->err);
}

static int page_failed(struct crawl *c, struct job *j, int status,
		       const char *url, const char *why)
{
	page_log(c, j, url, "failed", status, why);
	c->st->failed++;
	page_counted(c);
	return corpus_failed(c->corpus, j->first, status, c->now, c->err);
}

/* Queues a page hop after its host's robots.txt; req is consumed. */
static int queue_page(struct crawl *c, struct fetch_req *req, int front)
{
	struct job *j = req->udata;
	struct hostinfo *h;
	size_t hi;
	int rc = 0;

	if ((h = host_of(c, req->url, &hi)) == NULL) {
		req_drop(req);
		return -1;
	}
	switch (h->state) {
	case R_UNKNOWN: {
		struct fetch_req *rr;
		char *ru = malloc(strlen(h->origin) + 12);
		if (ru == NULL) {
			req_drop(req);
			return lb_error_set(c->err, LB_ENOMEM, "out of memory");
		}
		sprintf(ru, "%s/robots.txt", h->origin);
		rr = job_req(J_ROBOTS, ru, c->err);
		free(ru);
		if (rr == NULL) {
			req_drop(req);
			return -1;
		}
		((struct job *)rr->udata)->host = hi;
		rr->cap = LB_ROBOTS_MAX_BYTES;
		rr->truncate = 1;
		h->state = R_PENDING;
		if (crawl_queue(c, rr, 1) < 0) {
			req_drop(req);
			return -1;
		}
	}
		/* fall through */
	case R_PENDING:
		if (h->n_parked == h->alloc_parked) {
			size_t na = h->alloc_parked ? h->alloc_parked * 2 : 64;
			struct fetch_req **np = realloc(h->parked,
							na * sizeof(*np));
			if (np == NULL) {
				req_drop(req);
				return lb_error_set(c->err, LB_ENOMEM,
						    "out of memory");
			}
			h->parked = np;
			h->alloc_parked = na;
		}
		h->parked[h->n_parked++] = req;
		return 0;
	case R_READY:
		if (h->robots != NULL &&
		    !robots_allowed(h->robots, url_path_query(req->url))) {
			rc = page_exclude(c, j, 0, req->url,
					  "disallowed by robots.txt");
			req_drop(req);
			return rc;
		}
		return crawl_queue(c, req, front);
	case R_UNREACHABLE:
		rc = page_failed(c, j, 0, req->url,
				 "robots.txt unreachable (host skipped)");
		req_drop(req);
		return rc;
	case R_REFUSED:
		rc = page_exclude(c, j, 0, req->url, h->refused != NULL ?
				  h->refused : "refused private address");
		req_drop(req);
		return rc;
	}
	return 0;
}

static int robots_done(struct crawl *c, struct job *j, struct fetch_req *req,
		       struct fetch_res *res)
{
	struct hostinfo *h = &c->hosts[j->host];
	struct fetch_req **parked;
	size_t i, n;

	if (res->error == FE_OK && res->status >= 300 && res->status < 400 &&
	    res->redirect != NULL && j->hops < 5) {
		char *next = NULL;
		if (url_normalize(res->redirect, req->url, &next) == 0) {
			free(req->url);
			req->url = next;
			j->hops++;
			return crawl_queue(c, req, 1);
		}
	}
	if (res->error == FE_OK && res->status >= 300 && res->status < 400) {
		/* more than 5 redirects, or one that leads nowhere: RFC 9309
		 * 2.3.1.2 lets the crawler take robots.txt as unavailable,
		 * which is 2.3.1.3's "no restrictions" */
		log_info("%s: robots.txt redirects too often or nowhere: "
			 "no restrictions", h->origin);
		h->state = R_READY;
	} else if (res->error == FE_OK && res->status >= 200 &&
		   res->status < 300) {
		if (robots_parse(res->body.data ? res->body.data : "",
				 res->body.len, "LinkBot", &h->robots,
				 c->err) < 0) {
			req_drop(req);
			return -1;
		}
		h->state = R_READY;
	} else if (res->error == FE_OK && res->status >= 400 &&
		   res->status < 500 && res->status != 429) {
		h->state = R_READY;	/* RFC 9309 2.3.1.3: allow all */
	} else if (res->error == FE_TOOBIG && res->body.len > 0) {
		/* beyond 500 KiB: parse what arrived (RFC 9309 2.5) */
		log_warnx("robots.txt of %s is over %d bytes: the rest is "
			  "ignored", h->origin, LB_ROBOTS_MAX_BYTES);
		if (robots_parse(res->body.data, res->body.len, "LinkBot",
				 &h->robots, c->err) < 0) {
			req_drop(req);
			return -1;
		}
		h->state = R_READY;
	} else if (res->error == FE_REFUSED) {
		h->state = R_REFUSED;
		h->refused = strdup(res->msg);	/* NULL: the generic words */
	} else {
		log_warnx("cannot fetch '%s': %s; not crawling %s this run",
			  req->url, res->error == FE_OK ? "server error" :
			  res->msg, h->origin);
		h->state = R_UNREACHABLE;	/* RFC 9309 2.3.1.4 */
	}
	req_drop(req);
	parked = h->parked;
	n = h->n_parked;
	h->parked = NULL;
	h->n_parked = h->alloc_parked = 0;
	for (i = 0; i < n; i++) {
		if (queue_page(c, parked[i], 0) < 0) {
			for (i++; i < n; i++)
				req_drop(parked[i]);
			free(parked);
			return -1;
		}
	}
	free(parked);
	return 0;
}

/* ---- sources ---- */

struct src_ctx {
	struct crawl *c;
	struct job *j;
	const char *base;
	size_t entries;		/* <url>s and <sitemap>s read */
};

/* A source that parsed but lists nothing: an error page, a broken deploy,
 * a template that lost its list. Never a reason to remove every page. */
static void source_empty(struct crawl *c, const char *url)
{
	log_warnx("source '%s' lists no URL: pages missing from the sources "
		  "are kept this run", url);
	c->sources_ok = 0;
}

/* 1 if url was already queued as a sitemap; else remembers it. */
static int sitemap_seen(struct crawl *c, const char *url)
{
	size_t i;

	for (i = 0; i < c->sitemap_urls.n; i++)
		if (strcmp(c->sitemap_urls.v[i], url) == 0)
			return 1;
	lb_strlist_add(&c->sitemap_urls, url, NULL);
	return 0;
}

static int add_sitemap(struct crawl *c, const char *raw, const char *base,
		       const struct lb_urlset *filter, int depth)
{
	struct fetch_req *r;
	struct job *j;
	char *url;

	if (url_normalize(raw, base, &url) < 0) {
		log_warnx("ignoring sitemap '%s': not an http(s) URL", raw);
		return 0;
	}
	if (filter != NULL && !urlset_match(filter, url)) {
		log_debug("%s: sub-sitemap left out by the pattern", url);
		free(url);
		return 0;
	}
	if (sitemap_seen(c, url)) {
		/* listed twice (an index and robots.txt, say): the first
		 * listing, with its pattern, decides */
		free(url);
		return 0;
	}
	if (c->sitemaps >= MAX_SITEMAPS || depth > MAX_SITEMAP_DEPTH) {
		log_warnx("ignoring sitemap '%s': more than %d sitemaps or "
			  "nested deeper than %d", url, MAX_SITEMAPS,
			  MAX_SITEMAP_DEPTH);
		free(url);
		return 0;
	}
	c->sitemaps++;
	r = job_req(J_SRC_SITEMAP, url, c->err);
	free(url);
	if (r == NULL)
		return -1;
	j = r->udata;
	j->filter = filter;
	j->depth = depth;
	r->cap = LB_SITEMAP_MAX_BYTES;
	return crawl_queue(c, r, 0);
}

static int on_sitemap_entry(void *arg, int is_index, const char *loc,
			    const char *lastmod)
{
	struct src_ctx *s = arg;

	s->entries++;
	if (is_index)
		return add_sitemap(s->c, loc, s->base, s->j->filter,
				   s->j->depth + 1);
	return cand_add(s->c, loc, s->base, lastmod);
}

static int on_html_link(void *arg, int is_index, const char *href,
			const char *lastmod)
{
	struct lb_strlist *links = arg;

	(void)is_index;
	(void)lastmod;
	if (strncasecmp(href, "javascript:", 11) == 0 ||
	    strncasecmp(href, "mailto:", 7) == 0 || href[0] == '#')
		return 0;
	return lb_strlist_add(links, href, NULL);
}

/* An HTML sitemap: its links, resolved against <base href> if any. */
static int read_html_sitemap(struct crawl *c, const char *url,
			     const struct fetch_res *res)
{
	struct lb_strlist links = { 0 };
	struct lb_error perr;
	char *base = NULL, *abs = NULL;
	size_t i;
	int rc = 0;

	lb_error_init(&perr);
	if (sitemap_parse_html(res->body.data, res->body.len, on_html_link,
			       &links, &base, &perr) < 0) {
		log_warnx("cannot parse HTML sitemap '%s': %s", url,
			  perr.msg);
		c->sources_ok = 0;
		goto out;
	}
	if (links.n == 0)
		source_empty(c, url);
	if (base != NULL && url_normalize(base, url, &abs) < 0)
		abs = NULL;
	for (i = 0; i < links.n && rc == 0; i++)
		rc = cand_add(c, links.v[i], abs ? abs : url, NULL);
out:
	free(base);
	free(abs);
	lb_strlist_release(&links);
	return rc;
}

/* An XML (or text) sitemap or index; a bad one stops removals this run. */
static int read_sitemap(struct crawl *c, struct src_ctx *s, const char *url,
			const struct fetch_res *res)
{
	struct lb_error perr;

	lb_error_init(&perr);
	if (sitemap_parse_xml(res->body.data, res->body.len, on_sitemap_entry,
			      s, &perr) < 0) {
		if (c->err->code != LB_EOK)
			return -1;
		log_warnx("cannot parse sitemap '%s': %s", url, perr.msg);
		c->sources_ok = 0;
	} else if (s->entries == 0) {
		source_empty(c, url);
	}
	return 0;
}

static int source_done(struct crawl *c, struct job *j, struct fetch_req *req,
		       struct fetch_res *res)
{
	struct src_ctx s = { c, j, req->url, 0 };
	int rc = 0;

	if (res->error == FE_OK && res->status >= 300 && res->status < 400 &&
	    res->redirect != NULL && j->hops < c->max_redirects) {
		char *next = NULL;
		if (url_normalize(res->redirect, req->url, &next) == 0) {
			free(req->url);
			req->url = next;
			j->hops++;
			return crawl_queue(c, req, 1);
		}
	}
	if (j->kind == J_SRC_ROBOTS && res->error == FE_OK &&
	    ((res->status >= 400 && res->status < 500 && res->status != 429) ||
	     (res->status >= 300 && res->status < 400))) {
		/* no robots.txt (RFC 9309: no rules; too many redirects count
		 * as none too): no sitemaps from it, and if it is its host's,
		 * the host is open (no second fetch) */
		size_t hi;
		struct hostinfo *h;
		log_info("source '%s' answered %d: no sitemaps listed",
			  j->first, res->status);
		if (strcmp(url_path_query(j->first), "/robots.txt") == 0 &&
		    (h = host_of(c, j->first, &hi)) != NULL &&
		    h->state == R_UNKNOWN)
			h->state = R_READY;
		req_drop(req);
		return 0;
	}
	if (j->kind == J_SRC_ROBOTS && res->error == FE_TOOBIG &&
	    res->body.len > 0) {
		/* RFC 9309 2.5: the first 500 KiB are parsed */
		log_warnx("robots.txt '%s' is over %d bytes: the rest is "
			  "ignored", j->first, LB_ROBOTS_MAX_BYTES);
		res->error = FE_OK;
		res->status = 200;
	}
	if (res->error != FE_OK || res->status != 200) {
		log_warnx("cannot read source '%s': %s", j->first,
			  res->error != FE_OK ? res->msg : "HTTP status");
		if (res->error == FE_OK)
			log_warnx("source '%s' answered %d", j->first,
				  res->status);
		c->sources_ok = 0;
		req_drop(req);
		return 0;
	}
	if (j->depth == 0 && src_host_add(c, req->url) < 0) {
		req_drop(req);
		return -1;
	}
	switch (j->kind) {
	case J_SRC_ROBOTS: {
		struct lb_robots *rb = NULL;
		size_t i, hi;
		struct hostinfo *h;
		if (robots_parse(res->body.data, res->body.len, "LinkBot", &rb,
				 c->err) < 0) {
			rc = -1;
			break;
		}
		for (i = 0; i < robots_sitemaps(rb)->n && rc == 0; i++)
			rc = add_sitemap(c, robots_sitemaps(rb)->v[i], req->url,
					 NULL, 0);
		/* the host's robots.txt itself: no need to fetch it again
		 * (after redirects, its rules are the first host's: RFC 9309
		 * 2.3.1.2) */
		if (strcmp(url_path_query(j->first), "/robots.txt") == 0 &&
		    (h = host_of(c, j->first, &hi)) != NULL &&
		    h->state == R_UNKNOWN) {
			h->robots = rb;
			h->state = R_READY;
			rb = NULL;
		}
		robots_free(rb);
		break;
	}
	case J_SRC_SITEMAP:
		/* the content decides what a source is, not its listing */
		if (sitemap_looks_html(res->body.data, res->body.len)) {
			log_info("sitemap '%s' is an HTML page: its links are "
				 "read as an HTML sitemap's", req->url);
			rc = read_html_sitemap(c, req->url, res);
		} else {
			rc = read_sitemap(c, &s, req->url, res);
		}
		break;
	case J_SRC_HTML:
		if (sitemap_looks_xml(res->body.data, res->body.len)) {
			log_info("HTML sitemap '%s' is an XML sitemap: read as "
				 "one", req->url);
			rc = read_sitemap(c, &s, req->url, res);
		} else {
			rc = read_html_sitemap(c, req->url, res);
		}
		break;
	default:
		break;
	}
	req_drop(req);
	return rc;
}

/* ---- pages ---- */

static char *charset_of(const char *ct)
{
	const char *p;
	size_t n;

	if (ct == NULL)
		return NULL;
	for (p = ct; *p != '\0'; p++)
		if (strncasecmp(p, "charset=", 8) == 0)
			break;
	if (*p == '\0')
		return NULL;
	p += 8;
	if (*p == '"')
		p++;
	n = strcspn(p, "\"; \t");
	return n ? strndup(p, n) : NULL;
}

/*
 * Quarantine. The parser limits (extract/limit.c) keep known bombs out,
 * but should a page still crash the process while it is extracted, the
 * signal handler appends "TIME URL" to <state>/<client>/quarantine and
 * says so on stderr (write(2) only: async-signal-safe), then dies as it
 * would have. The next run (the resumed one, and those of the next
 * QUARANTINE_DAYS days) logs the URL and does not fetch it, so one page
 * cannot take every later night down with it. kill -9 quarantines
 * nothing. LINKBOT_FAULT_EXTRACT=SUBSTRING (tests only) crashes the
 * extraction of the URLs that contain it.
 */
#define QUARANTINE_DAYS 7

/*
 * Per thread: a concurrent night crawls its clients on a few loop
 * threads (loop.c), and the signals the handler catches (SIGSEGV,
 * SIGBUS, SIGFPE, SIGILL from a fault, SIGABRT from abort()) are
 * delivered to the thread that caused them, so the handler reads the
 * line and the file (the crawl's, set with the line before each
 * extraction) of the page being extracted on that thread. The handler
 * is installed by the first crawl open and removed by the last.
 */
static _Thread_local int q_fd = -1;
static _Thread_local volatile sig_atomic_t q_armed;
static _Thread_local char q_line[4200];
static _Thread_local size_t q_len;
static _Thread_local const char *q_fault;
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static int q_users;		/* crawls with the handler armed, q_lock */

static void q_handler(int sig)
{
	static const char msg[] = "linkbot: crawl: fatal signal while "
				  "extracting a page; quarantined: ";
	if (q_armed && q_fd >= 0) {
		(void)!write(q_fd, q_line, q_len);
		(void)!write(2, msg, sizeof(msg) - 1);
		(void)!write(2, strchr(q_line, ' ') + 1,
			     q_len - (size_t)(strchr(q_line, ' ') + 1 - q_line));
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Reads the quarantine, arms the handler; -1 only for no memory. */
static int quarantine_open(struct crawl *c)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
	char path[4096], *data = NULL, *line, *save = NULL;
	struct lb_error rerr;
	size_t len = 0, i;
	struct sigaction sa;

	if (c->cfg->state_dir == NULL)
		return 0;
	q_fault = getenv("LINKBOT_FAULT_EXTRACT");
	snprintf(path, sizeof(path), "%s/%s/quarantine", c->cfg->state_dir,
		 c->cl->id);
	lb_error_init(&rerr);
	if (lb_file_read(path, 1 << 20, &data, &len, &rerr) == 0) {
		for (line = strtok_r(data, "\n", &save); line != NULL;
		     line = strtok_r(NULL, "\n", &save)) {
			long long at = atoll(line);
			char *u = strchr(line, ' ');

			if (u == NULL || c->now - at >= QUARANTINE_DAYS * 86400)
				continue;
			if (lb_strlist_add(&c->quarantine, u + 1, c->err) < 0) {
				free(data);
				return -1;
			}
		}
		free(data);
	}
	if ((c->q_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
			    0644)) < 0)
		return 0;	/* no quarantine, no harm */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = q_handler;
	sa.sa_flags = SA_RESETHAND;
	pthread_mutex_lock(&q_lock);
	if (q_users++ == 0)
		for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			sigaction(sigs[i], &sa, NULL);
	pthread_mutex_unlock(&q_lock);
	return 0;
}

static void quarantine_close(struct crawl *c)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
	size_t i;

	if (c->q_fd < 0)
		return;
	pthread_mutex_lock(&q_lock);
	if (--q_users == 0)
		for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			signal(sigs[i], SIG_DFL);
	pthread_mutex_unlock(&q_lock);
	close(c->q_fd);
	c->q_fd = -1;
}

static int quarantined(const struct crawl *c, const char *url)
{
	size_t i;

	for (i = 0; i < c->quarantine.n; i++)
		if (strcmp(c->quarantine.v[i], url) == 0)
			return 1;
	return 0;
}

/* 1 if the body holds nothing but white space (or a BOM). */
static int blank(const char *s, size_t n)
{
	size_t i = 0;

	if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	for (; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' &&
		    s[i] != '\r' && s[i] != '\f' && s[i] != '\0')
			return 0;
	return 1;
}

/*
 * A canonical URL that no source lists was never crawled: it may be a 404
 * or another page altogether, and the page would be linked under it. It is
 * crawled in this run (once: not the canonical's canonical), so that
 * drop_dead_canonicals() judges it like any listed one.
 */
static int queue_canonical(struct crawl *c, const char *canon)
{
	struct fetch_req *r;
	struct job *j;
	struct lb_url_state st;
	size_t before = c->n_cand;

	if (cand_find(c, canon) >= 0)
		return 0;
	if (cand_add(c, canon, NULL, NULL) < 0)
		return -1;
	if (c->n_cand == before)
		return 0;	/* in no set: the sets' check excludes */
	if (corpus_get_state(c->corpus, canon, &st, c->err) < 0)
		return -1;
	if (st.known && st.tried_at >= c->cutoff) {
		corpus_state_release(&st);
		return 0;
	}
	if ((r = job_req(J_PAGE, canon, c->err)) == NULL) {
		corpus_state_release(&st);
		return -1;
	}
	j = r->udata;
	r->html_only = 1;
	j->from_canonical = 1;
	j->was_live = st.live;
	if (st.live) {
		j->canonical = st.canonical;
		st.canonical = NULL;
	}
	corpus_state_release(&st);
	log_info("%s: canonical URL of another page, not in the sources: "
		 "crawled to check it", canon);
	c->queued_pages++;
	if (c->prog_on)
		progress_set_total(&c->prog, c->queued_pages);
	return queue_page(c, r, 0);
}

static int page_ok(struct crawl *c, struct job *j, struct fetch_req *req,
		   struct fetch_res *res)
{
	struct lb_doc doc;
	struct lb_error xerr;
	struct lb_buf sets;
	struct lb_fetch_meta meta;
	char *charset = charset_of(res->content_type), *canon = NULL;
	int rc = -1;

	lb_doc_init(&doc);
	lb_error_init(&xerr);
	lb_buf_init(&sets, 1 << 16);
	if (sets_of(c, j->first, req->url, NULL, &sets) < 0)
		goto out;
	if (sets.len == 0) {
		rc = page_exclude(c, j, res->status, req->url,
				  "redirected out of the sets' patterns");
		goto out;
	}
	if (xrobots_noindex(&res->xrobots, c->now)) {
		rc = page_exclude(c, j, res->status, req->url,
				  "noindex (X-Robots-Tag)");
		goto out;
	}
	if (blank(res->body.data, res->body.len)) {
		/* a broken deploy or a failing backend, not a new page:
		 * never replaces a good document */
		rc = page_failed(c, j, res->status, req->url,
				 "200 with an empty or blank body");
		goto out;
	}
	q_len = (size_t)snprintf(q_line, sizeof(q_line), "%lld %s\n",
				 (long long)c->now, j->first);
	if (q_len >= sizeof(q_line))
		q_len = 0;
	q_fd = c->q_fd;	/* this thread may run several crawls */
	q_armed = q_len > 0;
	if (q_fault != NULL && *q_fault != '\0' && strstr(req->url, q_fault))
		raise(SIGSEGV);
	rc = extract_html(res->body.data ? res->body.data : "", res->body.len,
			  req->url, charset, &doc, &xerr);
	q_armed = 0;
	if (rc < 0) {
		rc = -1;
		if (xerr.code == LB_ENOMEM) {
			lb_error_set(c->err, xerr.code, "%s", xerr.msg);
			goto out;
		}
		rc = page_exclude(c, j, res->status, req->url, xerr.msg);
		goto out;
	}
	rc = -1;
	if (doc.noindex || xrobots_expired(doc.unavailable_after, c->now)) {
		rc = page_exclude(c, j, res->status, req->url,
				  "noindex (robots meta tag)");
		goto out;
	}
	if (url_normalize(doc.url ? doc.url : req->url, req->url, &canon) < 0 &&
	    (canon = strdup(req->url)) == NULL) {
		lb_error_set(c->err, LB_ENOMEM, "out of memory");
		goto out;
	}
	free(doc.url);
	doc.url = canon;
	if (sets_of(c, j->first, req->url, canon, &sets) < 0)
		goto out;
	if (sets.len == 0) {
		char why[64 + 2048];
		snprintf(why, sizeof(why), "canonical URL %.2048s is out of the "
			 "sets' patterns", canon);
		rc = page_exclude(c, j, res->status, req->url, why);
		goto out;
	}
	if (!j->from_canonical && strcmp(canon, req->url) != 0 &&
	    strcmp(canon, j->first) != 0 && queue_canonical(c, canon) < 0)
		goto out;
	memset(&meta, 0, sizeof(meta));
	meta.url = j->first;
	meta.final_url = req->url;
	meta.status = res->status;
	meta.etag = res->etag;
	meta.last_modified = res->last_modified;
	meta.lastmod = j->lastmod;
	meta.fetched_at = c->now;
	if (c->opts->doc_terms != NULL)
		c->opts->doc_terms(c->opts->doc_terms_arg, &doc);
	/* a page crawled only as another's canonical URL belongs to no set
	 * of its own: it lends its document to the pages that name it */
	if (corpus_put(c->corpus, &meta, &doc, j->from_canonical ? "" :
		       sets.data, c->err) < 0)
		goto out;
	if (strcmp(canon, req->url) != 0)
		log_debug("%s: indexed as %s", j->first, canon);
	if (!j->from_canonical)	/* a canonical's check, not a page */
		c->st->indexed++;
	page_counted(c);
	rc = 0;
out:
	free(charset);
	lb_buf_release(&sets);
	lb_doc_release(&doc);
	return rc;
}

static int page_done(struct crawl *c, struct job *j, struct fetch_req *req,
		     struct fetch_res *res)
{
	int rc = 0;

	if ((res->error == FE_OK || res->error == FE_TOOBIG ||
	     res->error == FE_TYPE) &&
	    !(res->status >= 300 && res->status < 400 && res->status != 304))
		c->st->fetched++;	/* pages, not redirect hops */
	switch (res->error) {
	case FE_REFUSED:
		rc = page_exclude(c, j, 0, req->url, res->msg);
		goto drop;
	case FE_TOOBIG:
	case FE_TYPE:
		rc = page_exclude(c, j, res->status, req->url, res->msg);
		goto drop;
	case FE_NETWORK:
		rc = page_failed(c, j, 0, req->url, res->msg);
		goto drop;
	case FE_OK:
		break;
	}
	if (res->status >= 300 && res->status < 400 && res->status != 304) {
		char *next = NULL;
		size_t i;
		if (res->redirect == NULL ||
		    url_normalize(res->redirect, req->url, &next) < 0) {
			rc = page_exclude(c, j, res->status, req->url,
					  "redirect without a usable Location");
			goto drop;
		}
		for (i = 0; i < j->chain.n; i++)
			if (strcmp(j->chain.v[i], next) == 0)
				break;
		if (i < j->chain.n) {
			free(next);
			rc = page_exclude(c, j, res->status, req->url,
					  "redirect loop");
			goto drop;
		}
		if (++j->hops > c->max_redirects) {
			free(next);
			rc = page_exclude(c, j, res->status, req->url,
					  "too many redirects");
			goto drop;
		}
		if (lb_strlist_add(&j->chain, next, c->err) < 0) {
			free(next);
			goto drop_err;
		}
		free(req->url);
		req->url = next;
		free(req->if_none_match);
		free(req->if_modified_since);
		req->if_none_match = req->if_modified_since = NULL;
		if (j->cond_url != NULL && strcmp(j->cond_url, next) == 0) {
			req->if_none_match = j->etag ? strdup(j->etag) : NULL;
			req->if_modified_since = j->last_modified ?
					strdup(j->last_modified) : NULL;
		}
		return queue_page(c, req, 1);
	}
	if (res->status == 304) {
		struct lb_buf sets;
		/* a 304 carries the headers a 200 would (RFC 9110 15.4.5):
		 * a page that became noindex by header alone says so here */
		if (xrobots_noindex(&res->xrobots, c->now)) {
			rc = page_exclude(c, j, 304, req->url,
					  "noindex (X-Robots-Tag)");
			goto drop;
		}
		lb_buf_init(&sets, 1 << 16);
		if (sets_of(c, j->first, req->url, j->canonical, &sets) < 0) {
			lb_buf_release(&sets);
			goto drop_err;
		}
		if (sets.len == 0) {
			lb_buf_release(&sets);
			rc = page_exclude(c, j, 304, req->url,
					  "out of the sets' patterns");
			goto drop;
		}
		rc = corpus_touch(c->corpus, j->first, sets.data, j->lastmod,
				  c->now, c->err);
		lb_buf_release(&sets);
		c->st->not_modified++;
		page_counted(c);
		goto drop;
	}
	if (res->status == 200) {
		rc = page_ok(c, j, req, res);
		goto drop;
	}
	if (res->status >= 500 || res->status == 429) {
		char why[64];
		snprintf(why, sizeof(why), "HTTP %d", res->status);
		rc = page_failed(c, j, res->status, req->url, why);
		goto drop;
	}
	{
		char why[64];
		snprintf(why, sizeof(why), "HTTP %d", res->status);
		rc = page_exclude(c, j, res->status, req->url, why);
	}
drop:
	req_drop(req);
	return rc;
drop_err:
	req_drop(req);
	return -1;
}

static int on_done(void *arg, struct fetch_req *req, struct fetch_res *res)
{
	struct crawl *c = arg;
	struct job *j = req->udata;

	switch (j->kind) {
	case J_ROBOTS:
		return robots_done(c, j, req, res);
	case J_SRC_ROBOTS:
	case J_SRC_SITEMAP:
	case J_SRC_HTML:
		return source_done(c, j, req, res);
	case J_PAGE:
		return page_done(c, j, req, res);
	}
	req_drop(req);
	return 0;
}

/* ---- the run ---- */

static int read_sources(struct crawl *c)
{
	size_t i;

	for (i = 0; i < c->cl->n_sources; i++) {
		const struct lb_url_source *s = &c->cl->sources[i];
		struct fetch_req *r;
		char *url;

		if (url_normalize(s->url, NULL, &url) < 0) {
			log_warnx("ignoring source '%s': not an http(s) URL",
				  s->url);
			c->sources_ok = 0;
			continue;
		}
		switch (s->kind) {
		case LB_SOURCE_SITEMAP_INDEX:
		case LB_SOURCE_SITEMAP:
			if (sitemap_seen(c, url)) {
				free(url);
				continue;
			}
			c->sitemaps++;
			r = job_req(J_SRC_SITEMAP, url, c->err);
			if (r != NULL) {
				((struct job *)r->udata)->filter =
					c->filters[i];
				r->cap = LB_SITEMAP_MAX_BYTES;
			}
			break;
		case LB_SOURCE_HTML_SITEMAP:
			r = job_req(J_SRC_HTML, url, c->err);
			break;
		case LB_SOURCE_ROBOTS:
		default:
			r = job_req(J_SRC_ROBOTS, url, c->err);
			if (r != NULL) {
				r->cap = LB_ROBOTS_MAX_BYTES;
				r->truncate = 1;
			}
			break;
		}
		free(url);
		if (r == NULL || crawl_queue(c, r, 0) < 0)
			return -1;
	}
	return 0;
}

/*
 * One line of a side-crawl file as a URL of this client: a full URL as it
 * is; "//host/path" and "host/path" (the edge logs what a client asked,
 * often without a scheme) take the scheme of the client's source on that
 * host, else https; "/path" takes the origin of each of the client's
 * sources in turn, the first that puts it in a set. NULL (why says it) if
 * none fits.
 */
static char *with_scheme(const char *scheme, size_t n, const char *rest)
{
	size_t len = n + 3 + strlen(rest) + 1;
	char *s = malloc(len);

	if (s != NULL)
		snprintf(s, len, "%.*s://%s", (int)n, scheme, rest);
	return s;
}

static char *resolve_side(struct crawl *c, const char *line, const char **why)
{
	const struct lb_client *cl = c->cl;
	char *url = NULL, *origin = NULL, *tmp = NULL;
	size_t i, hl;

	*why = "not a URL of this client's sites";
	if (strncmp(line, "http://", 7) == 0 || strncmp(line, "https://", 8) == 0) {
		if (url_normalize(line, NULL, &url) < 0)
			*why = "not a valid http(s) URL";
		return url;
	}
	if (line[0] == '/' && line[1] != '/') {
		/* path only: the origin of a source that puts it in a set */
		for (i = 0; i < cl->n_sources; i++) {
			free(origin);
			origin = url_origin(cl->sources[i].url);
			if (origin == NULL || url_normalize(line, origin, &url) < 0)
				continue;
			if (in_some_set(c, url))
				break;
			free(url);
			url = NULL;
		}
		free(origin);
		if (url == NULL)
			*why = "a path in no set on any of this client's source hosts";
		return url;
	}
	/* "//host/path" or "host/path": the scheme of a source on that host */
	if (line[0] == '/')
		line += 2;
	hl = strcspn(line, "/?#");
	if (hl == 0)
		return NULL;
	for (i = 0; i < cl->n_sources && url == NULL; i++) {
		const char *h = strstr(cl->sources[i].url, "://");
		size_t n;
		if (h == NULL)
			continue;
		n = (size_t)(h - cl->sources[i].url);
		if (strncasecmp(h + 3, line, hl) != 0 ||
		    strchr("/?#:", h[3 + hl]) == NULL)
			continue;
		if ((tmp = with_scheme(cl->sources[i].url, n, line)) == NULL)
			return NULL;
		if (url_normalize(tmp, NULL, &url) < 0)
			url = NULL;
		free(tmp);
		tmp = NULL;
	}
	if (url == NULL) {
		if ((tmp = with_scheme("https", 5, line)) == NULL)
			return NULL;
		if (url_normalize(tmp, NULL, &url) < 0) {
			url = NULL;
			*why = "not a valid URL";
		}
		free(tmp);
	}
	return url;
}

static int read_urls_file(struct crawl *c, const char *path)
{
	char *data = NULL, *p, *line, *url;
	size_t len;
	long lineno = 0, dropped = 0;
	int rc = -1;

	if (lb_file_read(path, URLS_FILE_MAX, &data, &len, c->err) < 0)
		return -1;
	for (p = data; (line = strsep(&p, "\n")) != NULL;) {
		size_t n = strlen(line);
		const char *why;

		lineno++;
		while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' ' ||
				 line[n - 1] == '\t'))
			line[--n] = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line == '\0' || *line == '#')
			continue;
		if ((url = resolve_side(c, line, &why)) != NULL &&
		    !in_some_set(c, url))
			why = "in none of this client's sets";
		if (url == NULL || !in_some_set(c, url)) {
			log_warnx("%s:%ld: '%s' dropped: %s", path, lineno, line,
				  why);
			dropped++;
			free(url);
			continue;
		}
		if (cand_add(c, url, NULL, NULL) < 0 ||
		    corpus_side_add(c->corpus, url, c->now, c->err) < 0) {
			free(url);
			goto out;
		}
		free(url);
	}
	if (dropped > 0)
		log_warnx("%s: %ld line(s) dropped (see above)", path, dropped);
	rc = 0;
out:
	free(data);
	return rc;
}

/*
 * The side-crawled URLs of earlier nights join tonight's candidates, so
 * that a full crawl keeps them; one that stopped being a page (excluded,
 * 4xx) leaves the list.
 */
static int add_side_urls(struct crawl *c)
{
	struct lb_strlist urls = { 0 };
	size_t i;
	int rc = -1;

	if (corpus_side_urls(c->corpus, &urls, c->err) < 0)
		goto out;
	for (i = 0; i < urls.n; i++) {
		struct lb_url_state st;

		if (corpus_get_state(c->corpus, urls.v[i], &st, c->err) < 0)
			goto out;
		if ((st.known && !st.live && st.tried_at > 0 &&
		     st.status != 0 && st.status < 500) ||
		    !in_some_set(c, urls.v[i])) {
			corpus_state_release(&st);
			if (corpus_side_remove(c->corpus, urls.v[i], c->err) < 0)
				goto out;
			continue;
		}
		corpus_state_release(&st);
		if (cand_add(c, urls.v[i], NULL, NULL) < 0)
			goto out;
	}
	if (urls.n > 0)
		log_info("%s: %zu side-crawled URLs kept with the sources",
			 c->cl->id, urls.n);
	rc = 0;
out:
	lb_strlist_release(&urls);
	return rc;
}

struct order {
	size_t i;
	int known;
	int64_t fetched_at;
};

static int order_cmp(const void *a, const void *b)
{
	const struct order *x = a, *y = b;

	if (x->known != y->known)
		return x->known - y->known;	/* new pages first */
	if (x->fetched_at != y->fetched_at)
		return x->fetched_at < y->fetched_at ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Queues the pages to fetch (their answers: page_done()). */
static int crawl_pages(struct crawl *c)
{
	struct order *ord = NULL;
	struct lb_buf sets;
	long max = c->cfg->crawl.max_pages, n_fetch = 0;
	size_t i;
	int rc = -1;

	lb_buf_init(&sets, 1 << 16);
	if ((ord = calloc(c->n_cand ? c->n_cand : 1, sizeof(*ord))) == NULL) {
		lb_error_set(c->err, LB_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < c->n_cand; i++) {
		struct lb_url_state st;
		if (corpus_get_state(c->corpus, c->cand[i].url, &st, c->err) <
		    0)
			goto out;
		ord[i].i = i;
		ord[i].known = st.known && st.fetched_at > 0;
		ord[i].fetched_at = st.fetched_at;
		corpus_state_release(&st);
	}
	qsort(ord, c->n_cand, sizeof(*ord), order_cmp);
	progress_start(&c->prog, "pages", 0, c->opts->progress);
	c->prog_on = 1;
	for (i = 0; i < c->n_cand; i++) {
		const struct cand *k = &c->cand[ord[i].i];
		struct lb_url_state st;
		struct fetch_req *r;
		struct job *j;

		if (quarantined(c, k->url)) {
			log_warnx("'%s': quarantined: its extraction crashed a "
				  "run in the last %d days; not fetched (previous "
				  "version kept)", k->url, QUARANTINE_DAYS);
			c->st->failed++;
			continue;
		}
		if (corpus_get_state(c->corpus, k->url, &st, c->err) < 0)
			goto out;
		if (st.known && st.tried_at >= c->cutoff) {
			corpus_state_release(&st);
			continue;	/* done earlier in this run */
		}
		if (st.live && k->lastmod != NULL && st.lastmod != NULL &&
		    strcmp(k->lastmod, st.lastmod) == 0 && !c->force &&
		    c->now - st.fetched_at < LASTMOD_TRUST) {
			/* unchanged per the sitemap: no fetch */
			if (sets_of(c, k->url, st.final_url ? st.final_url :
				    k->url, st.canonical, &sets) < 0 ||
			    corpus_skip(c->corpus, k->url, sets.data, c->now,
					c->err) < 0) {
				corpus_state_release(&st);
				goto out;
			}
			if (sets.len == 0)
				c->st->removed++;
			c->st->not_modified++;
			corpus_state_release(&st);
			continue;
		}
		if (max > 0 && n_fetch >= max) {
			corpus_state_release(&st);
			log_warnx("%s: max_pages %ld reached; the other URLs "
				  "wait for the next run", c->cl->id, max);
			break;
		}
		if ((r = job_req(J_PAGE, k->url, c->err)) == NULL) {
			corpus_state_release(&st);
			goto out;
		}
		j = r->udata;
		r->html_only = 1;
		j->was_live = st.live;
		if (st.live) {
			j->canonical = st.canonical;
			st.canonical = NULL;
		}
		if (k->lastmod && (j->lastmod = strdup(k->lastmod)) == NULL) {
			corpus_state_release(&st);
			req_drop(r);
			lb_error_set(c->err, LB_ENOMEM, "out of memory");
			goto out;
		}
		if (st.live && !c->force &&
		    (st.etag != NULL || st.last_modified != NULL)) {
			j->cond_url = st.final_url ? st.final_url :
						     strdup(k->url);
			j->etag = st.etag;
			j->last_modified = st.last_modified;
			st.final_url = st.etag = st.last_modified = NULL;
			if (j->cond_url != NULL &&
			    strcmp(j->cond_url, k->url) == 0) {
				r->if_none_match = j->etag ?
					strdup(j->etag) : NULL;
				r->if_modified_since = j->last_modified ?
					strdup(j->last_modified) : NULL;
			}
		}
		corpus_state_release(&st);
		n_fetch++;
		c->queued_pages++;
		if (queue_page(c, r, 0) < 0)
			goto out;
	}
	log_info("%s: %ld URLs in the sets, %ld to fetch", c->cl->id,
		 (long)c->n_cand, n_fetch);
	progress_set_total(&c->prog, n_fetch);
	rc = 0;
out:
	lb_buf_release(&sets);
	free(ord);
	return rc;
}

/*
 * A page whose canonical URL names another crawled URL that turned out not
 * to be indexable (noindex, 404, redirected away...) is not indexed either:
 * its canonical URL says it is that page, and that page's owner excluded it
 * (SPEC 1.8: such pages are neither sources nor targets), or it is gone, so
 * a link to it would be dead. Checked once the pages are done, whatever the
 * order they came in, and only against URLs the sources list this run (the
 * row of one they dropped is yesterday's news); the page is fetched again
 * next run.
 */
static int drop_dead_canonicals(struct crawl *c)
{
	struct lb_strlist dead = { 0 };
	size_t i;
	int rc = -1;

	if (corpus_dead_canonicals(c->corpus, &dead, c->err) < 0)
		goto out;
	for (i = 0; i < dead.n; i++) {
		char *url = dead.v[i], *canon, *status;
		if ((canon = strchr(url, '\t')) == NULL ||
		    (status = strchr(canon + 1, '\t')) == NULL)
			continue;
		*canon++ = '\0';
		*status++ = '\0';
		if (cand_find(c, canon) < 0)
			continue;	/* not listed this run: its row is stale */
		if (strcmp(status, "-1") == 0)
			log_info("%s: excluded: its canonical URL %s names "
				 "another canonical URL (a loop or a chain)",
				 url, canon);
		else
			log_info("%s: excluded: its canonical URL %s is not "
				 "indexable (%s)", url, canon,
				 strcmp(status, "200") == 0 ?
				 "noindex or out of the sets" : status);
		c->st->excluded++;
		if (corpus_exclude(c->corpus, url, strcmp(status, "-1") == 0 ?
				   200 : atoi(status), c->now, c->err) < 0)
			goto out;
	}
	rc = 0;
out:
	lb_strlist_release(&dead);
	return rc;
}

struct shrink {
	struct crawl *c;
	size_t live, gone;
	struct lb_strlist urls;	/* live and unlisted */
};

static int count_gone(const char *url, int live, void *arg)
{
	struct shrink *k = arg;

	if (!live)
		return 0;
	k->live++;
	if (cand_find(k->c, url) >= 0)
		return 0;
	k->gone++;
	return lb_strlist_add(&k->urls, url, k->c->err);
}

/*
 * The sources read well but list far fewer of the live pages than last
 * night (more than half of them gone, at least SHRINK_MIN): a sitemap cut
 * short, a plugin that lost a section. The unlisted pages are not removed
 * for absence: they are fetched again with the rest (a 404 or a redirect
 * still removes each one), and nothing is removed for absence this run.
 */
#define SHRINK_MIN 10

static int guard_shrink(struct crawl *c)
{
	struct shrink k;
	size_t i;
	int rc = -1;

	memset(&k, 0, sizeof(k));
	k.c = c;
	if (corpus_foreach_url(c->corpus, count_gone, &k, c->err) < 0)
		goto out;
	if (k.gone >= SHRINK_MIN && k.gone * 2 > k.live) {
		log_warnx("%s: the sources list %zu of %zu live pages: %zu are "
			  "missing; they are fetched again and kept unless "
			  "they are gone (nothing removed for absence this "
			  "run)", c->cl->id, k.live - k.gone, k.live, k.gone);
		c->sources_ok = 0;
		for (i = 0; i < k.urls.n; i++)
			if (cand_add(c, k.urls.v[i], NULL, NULL) < 0)
				goto out;
	}
	rc = 0;
out:
	lb_strlist_release(&k.urls);
	return rc;
}

static int forget_gone(const char *url, int live, void *arg)
{
	struct crawl *c = arg;

	if (cand_find(c, url) >= 0)
		return 0;
	if (live) {
		log_info("%s: gone from the sources, removed", url);
		tell(c, url, "removed", 0, "gone from the sources");
		c->st->removed++;
	}
	return corpus_forget(c->corpus, url, c->err);
}

static void crawl_release(struct crawl *c)
{
	size_t i, k;

	if (c->prog_on)
		progress_done(&c->prog);
	if (c->f != NULL)
		fetcher_forget(c->f, &c->own);
	quarantine_close(c);
	lb_strlist_release(&c->src_hosts);
	lb_strlist_release(&c->quarantine);
	for (i = 0; c->sets != NULL && i < c->cl->n_sets; i++)
		urlset_free(c->sets[i]);
	free(c->sets);
	for (i = 0; c->filters != NULL && i < c->cl->n_sources; i++)
		urlset_free(c->filters[i]);
	free(c->filters);
	for (i = 0; i < c->n_hosts; i++) {
		free(c->hosts[i].origin);
		free(c->hosts[i].refused);
		robots_free(c->hosts[i].robots);
		for (k = 0; k < c->hosts[i].n_parked; k++)
			req_drop(c->hosts[i].parked[k]);
		free(c->hosts[i].parked);
	}
	free(c->hosts);
	for (i = 0; i < c->n_cand; i++) {
		free(c->cand[i].url);
		free(c->cand[i].lastmod);
	}
	free(c->cand);
	free(c->slots);
	lb_strlist_release(&c->sitemap_urls);
}

/*
 * The steps of a crawl. A crawl waits for its fetcher at two points only:
 * once the sources are queued (their answers queue more sources, and the
 * robots.txt of their hosts), and once the pages are queued (a page's
 * answer may queue its canonical URL, a redirect its next hop). So it is
 * three steps, each run when the requests of the one before are all
 * answered: begin (set up, queue the sources), sources drained (the side
 * URLs, the shrink guard, queue the pages), pages drained (the dead
 * canonicals, the gone pages, the end of the run). Whoever drives the
 * fetcher calls them: crawl_client() on its own fetcher, or a loop
 * thread of the night (loop.c) for many crawls on one fetcher, so that a
 * few threads crawl every client of a night.
 */
int crawl_prepare(const struct lb_config *cfg,
		  const struct lb_client *client, struct lb_corpus *corpus,
		  const struct lb_crawl_opts *opts,
		  struct lb_crawl_stats *stats, struct crawl **out,
		  struct lb_error *err)
{
	struct crawl *c;
	int skip = 0;
	size_t i;

	*out = NULL;
	memset(stats, 0, sizeof(*stats));
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	*out = c;
	c->cfg = cfg;
	c->cl = client;
	c->corpus = corpus;
	c->opts = opts;
	c->st = stats;
	c->err = err;
	c->sources_ok = 1;
	c->force = opts->force;
	c->own.done = on_done;
	c->own.arg = c;
	c->own.log_name = opts->log_client ? client->id : NULL;
	c->q_fd = -1;
	c->phase = PH_SOURCES;
	if (src_hosts_init(c) < 0)
		return -1;
	c->now = opts->now ? (int64_t)opts->now : (int64_t)time(NULL);
	if (quarantine_open(c) < 0)
		return -1;
	c->now = opts->now ? (int64_t)opts->now : (int64_t)time(NULL);
	c->max_redirects = cfg->crawl.max_redirects > 0 ?
				   cfg->crawl.max_redirects : DEFAULT_REDIRECTS;
	c->sets = calloc(client->n_sets ? client->n_sets : 1, sizeof(*c->sets));
	c->filters = calloc(client->n_sources ? client->n_sources : 1,
			    sizeof(*c->filters));
	if (c->sets == NULL || c->filters == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	for (i = 0; i < client->n_sets; i++)
		if (urlset_compile(&client->sets[i].patterns, &c->sets[i],
				   err) < 0)
			return -1;
	for (i = 0; i < client->n_sources; i++)
		if (client->sources[i].pattern != NULL &&
		    urlset_compile1(client->sources[i].pattern, &c->filters[i],
				    err) < 0)
			return -1;
	if (opts->urls_file != NULL) {
		/* side crawl: only these URLs, nothing removed for absence */
		c->side = 1;
		c->phase = PH_PAGES;
		c->cutoff = opts->force ? INT64_MAX : c->now - c->now % 86400;
		return 0;
	}
	if (corpus_run_begin(corpus, c->now, opts->force, &skip, &c->cutoff,
			     err) < 0)
		return -1;
	if (skip) {
		log_info("%s: already crawled today (UTC); the corpus is "
			 "reused (--force to crawl again)", client->id);
		c->phase = PH_DONE;
		return 0;
	}
	c->force = corpus_run_forced(corpus);
	return 0;
}

int crawl_start(struct crawl *c, struct fetcher *f, int prepared)
{
	c->f = f;
	q_fault = getenv("LINKBOT_FAULT_EXTRACT");	/* this thread's */
	if (prepared < 0)
		return -1;
	if (c->side)
		return read_urls_file(c, c->opts->urls_file) < 0 ||
		       crawl_pages(c) < 0 ? -1 : 0;
	if (c->phase == PH_DONE)
		return 0;
	return read_sources(c);
}

int crawl_begin(const struct lb_config *cfg, const struct lb_client *client,
		struct lb_corpus *corpus, const struct lb_crawl_opts *opts,
		struct lb_crawl_stats *stats, struct fetcher *f,
		struct crawl **out, struct lb_error *err)
{
	int rc = crawl_prepare(cfg, client, corpus, opts, stats, out, err);

	if (*out == NULL)
		return -1;
	return crawl_start(*out, f, rc);
}

int crawl_pending(const struct crawl *c)
{
	long n = fetcher_owner_pending(c->f, &c->own);

	return n < 0 ? -1 : n > 0;
}

int crawl_advance(struct crawl *c)
{
	if (c->own.failed)
		return -1;
	switch (c->phase) {
	case PH_SOURCES:
		if (add_side_urls(c) < 0)
			return -1;
		log_info("%s: %ld URLs from %ld sitemaps and other sources, "
			 "%zu in the sets", c->cl->id, c->st->urls_seen,
			 c->sitemaps, c->n_cand);
		if (c->sources_ok && guard_shrink(c) < 0)
			return -1;
		c->phase = PH_PAGES;
		return crawl_pages(c) < 0 ? -1 : 0;
	case PH_PAGES:
		c->phase = PH_DONE;
		if (c->prog_on) {
			progress_done(&c->prog);
			c->prog_on = 0;
		}
		if (drop_dead_canonicals(c) < 0)
			return -1;
		if (c->side)
			return 1;
		if (c->sources_ok) {
			if (corpus_foreach_url(c->corpus, forget_gone, c,
					       c->err) < 0)
				return -1;
		} else {
			log_warnx("%s: a source could not be read, listed "
				  "nothing or shrank; pages missing from the "
				  "sources are kept this run", c->cl->id);
		}
		if (corpus_run_end(c->corpus, c->opts->now ?
				   (int64_t)c->opts->now : (int64_t)time(NULL),
				   c->err) < 0)
			return -1;
		return 1;
	case PH_DONE:
		break;
	}
	return 1;
}

int crawl_end(struct crawl *c, int rc)
{
	if (c == NULL)
		return rc;
	/* the last batch, also of a side crawl or a failed one: what was
	 * done is kept, as the pages were stored */
	if (c->corpus != NULL && corpus_commit(c->corpus, c->err) < 0)
		rc = -1;
	crawl_release(c);
	free(c);
	return rc;
}

int crawl_client(const struct lb_config *cfg, const struct lb_client *client,
		 struct lb_corpus *corpus, const struct lb_crawl_opts *opts,
		 struct lb_crawl_stats *stats, struct lb_error *err)
{
	struct fetcher_opts fo;
	struct fetcher *f = NULL;
	struct crawl *c = NULL;
	int rc;

	log_stage("crawl");
	crawl_fetcher_opts(cfg, opts->no_rate_limit, &fo);
	fo.slots = opts->conn_slots;
	if (fetcher_new(&fo, &f, err) < 0) {
		memset(stats, 0, sizeof(*stats));
		return -1;
	}
	rc = crawl_begin(cfg, client, corpus, opts, stats, f, &c, err);
	while (rc == 0) {
		int p;
		while ((p = crawl_pending(c)) > 0)
			if (fetcher_step(f, NULL, NULL, 1000, err) < 0)
				break;
		if (p != 0 && crawl_pending(c) != 0) {
			rc = -1;	/* failed, or the fetcher did */
			break;
		}
		rc = crawl_advance(c);
	}
	rc = crawl_end(c, rc < 0 ? -1 : 0);
	fetcher_free(f);
	return rc;
}

/* ---- one URL, for linkbot inspect ---- */

struct one {
	int status;
	int xnoindex;
	char *redirect;
	struct lb_buf body;
	char *content_type;
	char msg[256];
	enum fetch_error error;
};

static int one_done(void *arg, struct fetch_req *req, struct fetch_res *res)
{
	struct one *o = arg;

	o->status = res->status;
	o->error = res->error;
	o->xnoindex = xrobots_noindex(&res->xrobots, (int64_t)time(NULL));
	snprintf(o->msg, sizeof(o->msg), "%s", res->msg);
	o->redirect = res->redirect ? strdup(res->redirect) : NULL;
	o->content_type = res->content_type ? strdup(res->content_type) : NULL;
	o->body = res->body;	/* take the buffer */
	lb_buf_init(&res->body, 1);
	fetch_req_free(req);
	return 0;
}

int crawl_fetch_one(const struct lb_config *cfg, const char *url,
		    struct lb_doc *doc, int *status, char **final_url,
		    struct lb_error *err)
{
	struct fetcher_opts fo;
	struct fetcher *f = NULL;
	char *cur = NULL;
	int hops, max_hops, rc = -1;
	struct one o;

	memset(&o, 0, sizeof(o));
	*status = 0;
	if (final_url != NULL)
		*final_url = NULL;
	crawl_fetcher_opts(cfg, 1, &fo);
	fo.udata_free = NULL;	/* no jobs here */
	max_hops = cfg->crawl.max_redirects > 0 ? cfg->crawl.max_redirects :
						  DEFAULT_REDIRECTS;
	if (url_normalize(url, NULL, &cur) < 0)
		return lb_error_set(err, LB_EINVALID, "'%s' is not an http(s) "
				    "URL", url);
	for (hops = 0;; hops++) {
		struct fetch_req *r;
		char *next = NULL;
		if (fetcher_new(&fo, &f, err) < 0)
			goto out;
		if ((r = fetch_req_new(cur, NULL)) == NULL) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		r->html_only = 1;
		free(o.redirect);
		free(o.content_type);
		lb_buf_release(&o.body);
		memset(&o, 0, sizeof(o));
		if (fetcher_add(f, r, 0, err) < 0 ||
		    fetcher_run(f, one_done, &o, err) < 0)
			goto out;
		fetcher_free(f);
		f = NULL;
		*status = o.status;
		if (o.error != FE_OK) {
			lb_error_set(err, o.error == FE_NETWORK ? LB_ENETWORK :
				     o.error == FE_TOOBIG ? LB_ETOOBIG :
				     LB_EINVALID, "cannot fetch '%s': %s", cur,
				     o.msg);
			goto out;
		}
		if (o.status < 300 || o.status >= 400 || o.redirect == NULL)
			break;
		if (hops >= max_hops) {
			lb_error_set(err, LB_EHTTP, "'%s': more than %d "
				     "redirects", url, max_hops);
			goto out;
		}
		if (url_normalize(o.redirect, cur, &next) < 0) {
			lb_error_set(err, LB_EHTTP, "'%s': bad redirect to "
				     "'%s'", cur, o.redirect);
			goto out;
		}
		free(cur);
		cur = next;
	}
	if (o.status != 200) {
		lb_error_set(err, LB_EHTTP, "'%s' answered HTTP %d", cur,
			     o.status);
		goto out;
	}
	{
		char *cs = charset_of(o.content_type);
		int xrc = extract_html(o.body.data ? o.body.data : "",
				       o.body.len, cur, cs, doc, err);
		free(cs);
		if (xrc < 0)
			goto out;
	}
	if (o.xnoindex ||
	    xrobots_expired(doc->unavailable_after, (int64_t)time(NULL)))
		doc->noindex = 1;
	if (final_url != NULL) {
		*final_url = cur;
		cur = NULL;
	}
	rc = 0;
out:
	fetcher_free(f);
	free(cur);
	free(o.redirect);
	free(o.content_type);
	lb_buf_release(&o.body);
	return rc;
}
