/*
 * fetch.c - the fetcher: libcurl multi, politely.
 *
 * Design notes.
 *
 * Rate. Each host (origin: scheme, host, port) has a FIFO of requests and a
 * time `next` before which no request to it may start. Starting one moves
 * `next` one interval on (interval = 60 / pages_per_minute, times the
 * backoff factor), from when the request really left: curl calls
 * on_prereq just before it sends the request, and sends it before
 * curl_multi_perform() returns, so the interval counts from that return
 * (a thread preempted between the two at load 88 sent requests 60 ms
 * late, and the next one on time made a short gap on the wire). A late
 * start is never caught up, and the next request of a host waits until the
 * one before has left (a slow connect): the origin never sees two requests
 * of a host closer than the interval (bench/RESULTS.md, "the tail, round
 * 4": a catch-up of a twentieth showed 0.238 s gaps on the wire). Several
 * requests may be in flight per host (per_host), so a slow page does not
 * delay the next start: the rate holds as long as latency < per_host *
 * interval.
 *
 * Backoff. 429 and 503 are retried (max_retries) after Retry-After (seconds
 * or a date; default 1 s, doubling), and the whole host waits that long and
 * slows down (factor x2, at most x8). Other 5xx and network errors slow the
 * host by x1.5; every other answer recovers by x0.8 towards 1. Latency is
 * watched too: an EWMA of the transfer time three times above the best seen
 * (and above 1 s) slows the host in proportion, and recovers as it falls.
 *
 * Owners. One fetcher may drive many crawls at once (a crawl loop of the
 * night, loop.c): a request carries its owner, whose done() gets its
 * answer and whose counts say when its phase is drained; max_total caps
 * each owner's transfers. Hosts stay per fetcher, so the rules above hold
 * per host whoever queued the request; fetcher_forget() frees the hosts
 * of an owner that is over, keeping their next start in the marks.
 *
 * Threads (o.threaded: a crawl loop of the night, loop.c). A late start
 * is lost for good, so a loop's requests must not wait for its
 * extractions: one thread drives the fetcher (fetcher_step(): the
 * timers, curl, the hosts' pace) and hands each finished answer over;
 * another, the worker, calls the owners' done() (fetcher_answer()) and
 * adds requests, forgets owners. Everything of the fetcher is under mu,
 * which the network thread holds for a step, never while it sleeps in
 * curl_multi_poll(); the curl multi is the network thread's alone, so
 * fetcher_forget() has it stop an owner's transfers while the worker
 * waits, and fetcher_add() wakes it (curl_multi_wakeup()) for a host
 * that had nothing queued. An answer counts in its owner's inflight
 * until done() returned: an owner is drained when its last answer is
 * handled, and max_total bounds the answers waiting for the worker.
 *
 * Safety. Redirects are never followed here (the caller checks every hop).
 * Only http and https. The socket callback refuses private, loopback,
 * link-local, multicast and reserved addresses after DNS resolution (every
 * address curl tries, on every hop, so DNS rebinding and redirects to
 * 127.0.0.1 are refused too) unless allow_private. Proxies from the
 * environment are ignored: through one the address check would be void.
 * Bodies are capped after content decoding (gzip bombs stop at the cap);
 * a 200 answer that is not HTML is cut at its first byte when html_only.
 */
#define _XOPEN_SOURCE 700	/* strptime */
#include <arpa/inet.h>
#include <ctype.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "linkbot/log.h"
#include "linkbot/retry.h"
#include "crawl_int.h"

/*
 * Easy handles kept for the next transfer (curl_easy_reset() between two):
 * making one is a large calloc (glibc consolidates its free lists for it)
 * and a round of defaults, ~5 % of a night's crawl CPU; the connections
 * and the DNS cache are the multi handle's either way.
 */
#define FETCH_IDLE_HANDLES 16

struct host {
	char *origin;
	struct fetch_req *head, *tail;
	int inflight;
	int unsent;		/* started, not yet left (on_prereq) */
	int left;		/* one left in the last curl_multi_perform() */
	double next;		/* monotonic seconds */
	struct fetch_pace pace;
	struct fetch_owner *owner;	/* the last to queue a request */
};

struct xfer {
	CURL *easy;
	struct curl_slist *headers;
	struct fetch_req *req;
	struct host *host;
	struct fetch_res res;
	int refused;
	int wrong_type;
	int too_big;
	int sent;		/* on_prereq ran */
	size_t cap;
	struct fetcher *f;
	struct xfer *prev, *next;	/* the fetcher's transfers */
};

/* An answer handed from the network thread to the worker (threaded). */
struct answer {
	struct fetch_req *req;
	struct fetch_res res;
	struct answer *next;
};

struct fetcher {
	struct fetcher_opts o;
	struct lb_retry_policy retry;	/* from o: crawl_retry_policy() */
	CURLM *multi;
	struct host **hosts;
	size_t n_hosts, alloc_hosts;
	long queued, inflight, started;
	size_t rr;		/* the host served first next round */
	int capped;		/* the global cap was logged */
	int starved;		/* a host was ready, the night's slots not */
	double performed;	/* when curl_multi_perform() last returned */
	CURL *idle[FETCH_IDLE_HANDLES];	/* reset easy handles to reuse */
	size_t n_idle;
	struct xfer *xfers;	/* in flight, for fetcher_forget() */
	/* o.threaded: everything above is mu's (the network thread holds
	 * it for a step, never while it sleeps); the curl multi is the
	 * network thread's alone */
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* answers, a wake-up, a forget done */
	struct answer *ans, *ans_tail;	/* for the worker, in order */
	long answering;			/* in ans or being handled */
	int woken;			/* fetcher_wakeup() for the worker */
	struct fetch_owner *forget;	/* for the network thread to forget */
	int broken;			/* the network thread's step failed: */
	struct lb_error berr;		/* why, for the worker */
};

static void lock(struct fetcher *f)
{
	if (f->o.threaded)
		pthread_mutex_lock(&f->mu);
}

static void unlock(struct fetcher *f)
{
	if (f->o.threaded)
		pthread_mutex_unlock(&f->mu);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int fetch_addr_private(const void *sa)
{
	const struct sockaddr *s = sa;

	if (s->sa_family == AF_INET) {
		const struct sockaddr_in *in = sa;
		uint32_t a = ntohl(in->sin_addr.s_addr);
		return (a >> 24) == 0 || (a >> 24) == 10 || (a >> 24) == 127 ||
		       (a >> 16) == 0xA9FE ||			/* 169.254/16 */
		       (a >> 20) == 0xAC1 ||			/* 172.16/12 */
		       (a >> 16) == 0xC0A8 ||			/* 192.168/16 */
		       (a >> 22) == (100u << 2 | 1) ||		/* 100.64/10 */
		       (a >> 8) == 0xC00000 ||			/* 192.0.0/24 */
		       (a >> 17) == (198u << 7 | 9) ||		/* 198.18/15 */
		       (a >> 28) >= 0xE;			/* multicast, 240/4 */
	}
	if (s->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = sa;
		const uint8_t *b = in6->sin6_addr.s6_addr;
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0,
						    0, 0, 0, 0, 0xff, 0xff };
		size_t i;
		int zero = 1;
		if (memcmp(b, mapped, 12) == 0) {
			struct sockaddr_in v4;
			memset(&v4, 0, sizeof(v4));
			v4.sin_family = AF_INET;
			memcpy(&v4.sin_addr, b + 12, 4);
			return fetch_addr_private(&v4);
		}
		for (i = 0; i < 15; i++)
			if (b[i] != 0)
				zero = 0;
		if (zero)	/* :: and ::1 */
			return 1;
		return (b[0] & 0xfe) == 0xfc ||			/* fc00::/7 */
		       (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) ||	/* fe80::/10 */
		       (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) ||	/* fec0::/10 */
		       b[0] == 0xff ||					/* multicast */
		       (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d &&
			b[3] == 0xb8) ||				/* 2001:db8::/32 */
		       (b[0] == 0 && b[1] == 0x64 && b[2] == 0xff &&
			b[3] == 0x9b);					/* 64:ff9b::/96 */
	}
	return 1;	/* unknown families: refuse */
}

static curl_socket_t open_socket(void *clientp, curlsocktype purpose,
				 struct curl_sockaddr *a)
{
	struct xfer *x = clientp;

	(void)purpose;
	if (!x->f->o.allow_private && fetch_addr_private(&a->addr)) {
		char ip[INET6_ADDRSTRLEN] = "?";
		if (a->family == AF_INET)
			inet_ntop(AF_INET,
				  &((struct sockaddr_in *)&a->addr)->sin_addr,
				  ip, sizeof(ip));
		else if (a->family == AF_INET6)
			inet_ntop(AF_INET6,
				  &((struct sockaddr_in6 *)&a->addr)->sin6_addr,
				  ip, sizeof(ip));
		x->refused = 1;
		snprintf(x->res.msg, sizeof(x->res.msg),
			 "refused private address %s", ip);
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype, a->protocol);
}

static void res_release(struct fetch_res *r)
{
	free(r->redirect);
	lb_buf_release(&r->body);
	free(r->content_type);
	free(r->etag);
	free(r->last_modified);
	lb_strlist_release(&r->xrobots);
	memset(r, 0, sizeof(*r));
}

static char *header_value(const char *line, size_t n, const char *name)
{
	size_t k = strlen(name);
	const char *v, *e;

	if (n <= k || strncasecmp(line, name, k) != 0 || line[k] != ':')
		return NULL;
	v = line + k + 1;
	e = line + n;
	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' ' ||
			 e[-1] == '\t'))
		e--;
	return strndup(v, (size_t)(e - v));
}

static void set_str(char **dst, char *v)
{
	free(*dst);
	*dst = v;
}

static size_t on_header(char *buf, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n;
	char *v;

	if (len >= 5 && strncmp(buf, "HTTP/", 5) == 0) {
		/* a new response (after 100 Continue, say): start over */
		set_str(&x->res.content_type, NULL);
		set_str(&x->res.etag, NULL);
		set_str(&x->res.last_modified, NULL);
		lb_strlist_release(&x->res.xrobots);
		x->res.retry_after = -1;
		return len;
	}
	if ((v = header_value(buf, len, "content-type")) != NULL)
		set_str(&x->res.content_type, v);
	else if ((v = header_value(buf, len, "etag")) != NULL)
		set_str(&x->res.etag, v);
	else if ((v = header_value(buf, len, "last-modified")) != NULL)
		set_str(&x->res.last_modified, v);
	else if ((v = header_value(buf, len, "retry-after")) != NULL) {
		x->res.retry_after = lb_retry_after_parse(v, time(NULL));
		free(v);
	} else if ((v = header_value(buf, len, "x-robots-tag")) != NULL) {
		if (lb_strlist_add(&x->res.xrobots, v, NULL) < 0) {
			free(v);
			return 0;
		}
		free(v);
	}
	return len;
}

static int is_html_type(const char *ct)
{
	size_t n;

	if (ct == NULL)
		return 0;
	while (*ct == ' ')
		ct++;
	n = strcspn(ct, "; \t");
	return (n == 9 && strncasecmp(ct, "text/html", 9) == 0) ||
	       (n == 21 && strncasecmp(ct, "application/xhtml+xml", 21) == 0);
}

static size_t on_body(char *buf, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n;
	long status = 0;

	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200)
		return len;	/* only 200 bodies are read */
	if (x->req->html_only && x->res.body.len == 0 &&
	    !is_html_type(x->res.content_type)) {
		x->wrong_type = 1;
		return 0;
	}
	if (lb_buf_add(&x->res.body, buf, len, NULL) < 0) {
		if (x->req->truncate && x->res.body.len < x->cap)
			lb_buf_add(&x->res.body, buf,
				   x->cap - x->res.body.len, NULL);
		x->too_big = 1;
		return 0;
	}
	return len;
}

/*
 * The process's memory of each host's next allowed start, across the
 * fetchers of a night (one a client's crawl): a host that one client has
 * just finished crawling is not hit at once by the next client of the
 * same host (one after another, or after it at once: pipeline.c never
 * runs those two together). Written when a fetcher is freed, read when a
 * fetcher first meets the host; it lives as long as the process.
 */
struct host_mark {
	char *origin;
	double next;		/* monotonic seconds */
};
static pthread_mutex_t marks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct host_mark *marks;		/* marks_lock */
static size_t n_marks, alloc_marks;

static struct host_mark *mark_find(const char *origin)
{
	size_t i;

	for (i = 0; i < n_marks; i++)
		if (strcmp(marks[i].origin, origin) == 0)
			return &marks[i];
	return NULL;
}

static double mark_get(const char *origin)
{
	struct host_mark *m;
	double next;

	pthread_mutex_lock(&marks_lock);
	m = mark_find(origin);
	next = m != NULL ? m->next : 0;
	pthread_mutex_unlock(&marks_lock);
	return next;
}

/* Without memory the mark is lost: the next client starts at once. */
static void mark_put(const char *origin, double next)
{
	struct host_mark *m;

	pthread_mutex_lock(&marks_lock);
	if ((m = mark_find(origin)) != NULL) {
		if (m->next < next)
			m->next = next;
	} else {
		if (n_marks == alloc_marks) {
			size_t na = alloc_marks ? alloc_marks * 2 : 64;
			struct host_mark *nm = realloc(marks, na * sizeof(*nm));
			if (nm == NULL)
				goto out;
			marks = nm;
			alloc_marks = na;
		}
		if ((marks[n_marks].origin = strdup(origin)) != NULL)
			marks[n_marks++].next = next;
	}
out:
	pthread_mutex_unlock(&marks_lock);
}

static struct host *host_get(struct fetcher *f, const char *url)
{
	char *origin = url_origin(url);
	struct host *h;
	size_t i;

	if (origin == NULL)
		return NULL;
	for (i = 0; i < f->n_hosts; i++)
		if (strcmp(f->hosts[i]->origin, origin) == 0) {
			free(origin);
			return f->hosts[i];
		}
	if (f->n_hosts == f->alloc_hosts) {
		size_t na = f->alloc_hosts ? f->alloc_hosts * 2 : 8;
		struct host **nh = realloc(f->hosts, na * sizeof(*nh));
		if (nh == NULL) {
			free(origin);
			return NULL;
		}
		f->hosts = nh;
		f->alloc_hosts = na;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		free(origin);
		return NULL;
	}
	h->origin = origin;
	fetch_pace_init(&h->pace);
	if (f->o.interval > 0)
		h->next = mark_get(origin);
	f->hosts[f->n_hosts++] = h;
	return h;
}

void fetch_pace_init(struct fetch_pace *p)
{
	memset(p, 0, sizeof(*p));
	p->factor_err = 1.0;
}

void fetch_pace_answer(struct fetch_pace *p, enum fetch_verdict v,
		       double seconds)
{
	if (v != PACE_ERROR && seconds > 0) {
		p->ewma = p->samples ? 0.8 * p->ewma + 0.2 * seconds : seconds;
		p->samples++;
		if (p->samples >= 3 && (p->best == 0 || p->ewma < p->best))
			p->best = p->ewma;
	}
	switch (v) {
	case PACE_SLOW_DOWN:
		p->factor_err *= 2;
		break;
	case PACE_ERROR:
		p->factor_err *= 1.5;
		break;
	case PACE_OK:
		p->factor_err *= 0.8;
		break;
	}
	if (p->factor_err > 8)
		p->factor_err = 8;
	if (p->factor_err < 1)
		p->factor_err = 1;
}

double fetch_pace_factor(const struct fetch_pace *p)
{
	double factor = p->factor_err;

	if (p->samples >= 5 && p->best > 0 && p->ewma > 1.0 &&
	    p->ewma > 3 * p->best) {
		double lat = p->ewma / (3 * p->best);
		if (lat > factor)
			factor = lat;
	}
	return factor > 8 ? 8 : factor;
}

/*
 * The night's cap on transfers in flight (o.slots, one counting semaphore
 * shared by the fetchers of all the clients crawled at once): a token is
 * taken before a transfer starts and given back when it ends. A fetcher
 * that finds none waits a few milliseconds and tries again.
 */
static int slot_take(struct fetcher *f)
{
	if (f->o.slots == NULL || sem_trywait(f->o.slots) == 0)
		return 1;
	f->starved = 1;
	return 0;
}

static void slots_give(struct fetcher *f, long n)
{
	for (; f->o.slots != NULL && n > 0; n--)
		sem_post(f->o.slots);
}

static double host_interval(const struct fetcher *f, const struct host *h)
{
	return f->o.interval * fetch_pace_factor(&h->pace);
}

/* A request of h left in the last curl_multi_perform() (on_prereq): the
 * next one an interval from when that returned. */
static void host_left(const struct fetcher *f, struct host *h)
{
	if (h->left && h->next < f->performed + host_interval(f, h))
		h->next = f->performed + host_interval(f, h);
	h->left = 0;
}

/*
 * The crawler's retries (linkbot/retry.h): 429 and 503 max_retries times
 * after Retry-After (at most max_retry_after) or 1 s doubling up to 16 s;
 * a transport error once, after 1 s, unless it timed out (a slow page is
 * not asked twice); other 5xx not at all, the page is kept from last run.
 */
static void crawl_retry_policy(const struct fetcher_opts *o,
			       struct lb_retry_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->retries[LB_RETRY_THROTTLED] = o->max_retries;
	p->retries[LB_RETRY_UNAVAILABLE] = o->max_retries;
	p->retries[LB_RETRY_TRANSPORT] = o->max_retries < 1 ? o->max_retries : 1;
	p->first_ms = 1000;
	p->cap_ms = 16000;
	p->max_retry_after_s = (long)o->max_retry_after;
}

int fetcher_new(const struct fetcher_opts *o, struct fetcher **out,
		struct lb_error *err)
{
	struct fetcher *f;

	*out = NULL;
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	f->o = *o;
	crawl_retry_policy(&f->o, &f->retry);
	if (f->o.per_host < 1)
		f->o.per_host = 1;
	if ((f->multi = curl_multi_init()) == NULL) {
		free(f);
		return lb_error_set(err, LB_ENOMEM, "cannot start libcurl");
	}
	curl_multi_setopt(f->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
			  (long)f->o.per_host);
	if (f->o.threaded) {
		pthread_mutex_init(&f->mu, NULL);
		pthread_cond_init(&f->cv, NULL);
	}
	*out = f;
	return 0;
}

/* Frees a request nobody will answer, with its owner's udata. */
static void req_drop(struct fetcher *f, struct fetch_req *r)
{
	if (f->o.udata_free != NULL)
		f->o.udata_free(r->udata);
	fetch_req_free(r);
}

/* Frees an answer the worker will not handle (threaded). */
static void answer_drop(struct fetcher *f, struct answer *a)
{
	req_drop(f, a->req);
	res_release(&a->res);
	free(a);
}

void fetcher_free(struct fetcher *f)
{
	size_t i;

	if (f == NULL)
		return;
	for (i = 0; i < f->n_hosts; i++) {
		struct fetch_req *r = f->hosts[i]->head, *nx;
		for (; r != NULL; r = nx) {
			nx = r->next;
			req_drop(f, r);
		}
		host_left(f, f->hosts[i]);
		if (f->o.interval > 0)
			mark_put(f->hosts[i]->origin, f->hosts[i]->next);
		free(f->hosts[i]->origin);
		free(f->hosts[i]);
	}
	free(f->hosts);
	while (f->ans != NULL) {	/* a worker that stopped early */
		struct answer *a = f->ans;
		f->ans = a->next;
		answer_drop(f, a);
	}
	if (f->o.threaded) {
		pthread_mutex_destroy(&f->mu);
		pthread_cond_destroy(&f->cv);
	}
	while (f->n_idle > 0)
		curl_easy_cleanup(f->idle[--f->n_idle]);
	curl_multi_cleanup(f->multi);
	slots_give(f, f->inflight);	/* a run stopped by an error */
	free(f);
}

struct fetch_req *fetch_req_new(const char *url, void *udata)
{
	struct fetch_req *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	if ((r->url = strdup(url)) == NULL) {
		free(r);
		return NULL;
	}
	r->udata = udata;
	return r;
}

void fetch_req_free(struct fetch_req *r)
{
	if (r == NULL)
		return;
	free(r->url);
	free(r->if_none_match);
	free(r->if_modified_since);
	free(r);
}

static int add_locked(struct fetcher *f, struct fetch_req *req, int front,
		      struct lb_error *err)
{
	struct host *h = host_get(f, req->url);

	if (h == NULL) {
		req_drop(f, req);
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	}
	/* a host with requests queued is in the network thread's next
	 * wake-up already; one with none may be due before it */
	if (f->o.threaded && h->head == NULL)
		curl_multi_wakeup(f->multi);
	req->next = NULL;
	h->owner = req->owner;
	if (req->owner != NULL)
		req->owner->queued++;
	if (h->head == NULL) {
		h->head = h->tail = req;
	} else if (front) {
		req->next = h->head;
		h->head = req;
	} else {
		h->tail->next = req;
		h->tail = req;
	}
	f->queued++;
	return 0;
}

int fetcher_add(struct fetcher *f, struct fetch_req *req, int front,
		struct lb_error *err)
{
	int rc;

	lock(f);
	rc = add_locked(f, req, front, err);
	unlock(f);
	return rc;
}

long fetcher_started(const struct fetcher *f)
{
	return f->started;
}

/*
 * Called by curl just before the request goes out (in curl_multi_perform(),
 * which sends it before it returns). The start was scheduled at h->next -
 * interval; when the thread or the connection made it leave late (a loaded
 * machine, a night of many clients), the next one keeps a whole interval
 * from the return of that curl_multi_perform() (fetcher_run()), so the
 * host never sees two requests closer than the interval allows.
 */
static int on_prereq(void *arg, char *ip, char *local_ip, int port,
		     int local_port)
{
	struct xfer *x = arg;

	(void)ip;
	(void)local_ip;
	(void)port;
	(void)local_port;
	if (!x->sent) {	/* a retry on a fresh connection calls it again */
		x->sent = 1;
		x->host->unsent--;
	}
	x->host->left = 1;
	return CURL_PREREQFUNC_OK;
}

static int start(struct fetcher *f, struct host *h, struct fetch_req *req,
		 struct lb_error *err)
{
	struct xfer *x = calloc(1, sizeof(*x));
	CURL *e;
	char line[1100];

	if (x == NULL ||
	    (e = f->n_idle > 0 ? f->idle[--f->n_idle] : curl_easy_init()) ==
		    NULL) {
		free(x);
		return lb_error_set(err, LB_ENOMEM, "cannot start a transfer");
	}
	x->easy = e;
	x->req = req;
	x->host = h;
	x->f = f;
	x->res.retry_after = -1;
	x->cap = req->cap ? req->cap : f->o.max_body;
	lb_buf_init(&x->res.body, x->cap);
	if (req->if_none_match != NULL &&
	    strlen(req->if_none_match) < 1000) {
		snprintf(line, sizeof(line), "If-None-Match: %s",
			 req->if_none_match);
		x->headers = curl_slist_append(x->headers, line);
	}
	if (req->if_modified_since != NULL &&
	    strlen(req->if_modified_since) < 1000) {
		snprintf(line, sizeof(line), "If-Modified-Since: %s",
			 req->if_modified_since);
		x->headers = curl_slist_append(x->headers, line);
	}
	curl_easy_setopt(e, CURLOPT_URL, req->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, x);
	curl_easy_setopt(e, CURLOPT_USERAGENT, f->o.user_agent);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_PROXY, "");
	if (req->tries > 0)	/* the last connection may be poisoned */
		curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
	curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	if (req->source && f->o.timeout < LB_SOURCE_MAX_SECONDS) {
		curl_easy_setopt(e, CURLOPT_TIMEOUT, (long)LB_SOURCE_MAX_SECONDS);
		curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT,
				 (long)LB_SOURCE_MIN_RATE);
		curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, f->o.timeout);
	} else {
		curl_easy_setopt(e, CURLOPT_TIMEOUT, f->o.timeout);
	}
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, f->o.connect_timeout);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	if (!req->truncate)	/* else a Content-Length over cap is read */
		curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE,
				 (curl_off_t)x->cap);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, open_socket);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, x);
	if (f->o.interval > 0) {
		curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, on_prereq);
		curl_easy_setopt(e, CURLOPT_PREREQDATA, x);
	}
	if (curl_multi_add_handle(f->multi, e) != CURLM_OK) {
		curl_easy_cleanup(e);
		curl_slist_free_all(x->headers);
		lb_buf_release(&x->res.body);
		free(x);
		return lb_error_set(err, LB_EINTERNAL, "curl_multi_add_handle");
	}
	h->inflight++;
	h->unsent += f->o.interval > 0;
	f->inflight++;
	f->started++;
	if (req->owner != NULL)
		req->owner->inflight++;
	x->next = f->xfers;
	if (f->xfers != NULL)
		f->xfers->prev = x;
	f->xfers = x;
	log_debug("GET %s", req->url);
	return 0;
}

/* Takes x's handle out of the multi and keeps it, reset, for the next. */
static void xfer_free(struct fetcher *f, struct xfer *x)
{
	if (x->prev != NULL)
		x->prev->next = x->next;
	else
		f->xfers = x->next;
	if (x->next != NULL)
		x->next->prev = x->prev;
	curl_multi_remove_handle(f->multi, x->easy);
	if (f->n_idle < FETCH_IDLE_HANDLES) {
		curl_easy_reset(x->easy);
		f->idle[f->n_idle++] = x->easy;
	} else {
		curl_easy_cleanup(x->easy);
	}
	curl_slist_free_all(x->headers);
	res_release(&x->res);
	free(x);
}

/* Slows or recovers the host after an answer; 1 if req must be retried. */
static int judge(struct fetcher *f, struct xfer *x, double now)
{
	struct host *h = x->host;
	struct fetch_res *r = &x->res;
	enum lb_retry_class c = LB_RETRY_FINAL;
	int tries = x->req->tries, retry = 0;
	long wait = -1;

	if (r->error == FE_OK)
		c = lb_retry_classify(0, r->status);
	else if (r->error == FE_NETWORK)	/* garbage answers too */
		c = r->timed_out ? LB_RETRY_TIMEOUT : LB_RETRY_TRANSPORT;
	if (lb_retry_allowed(&f->retry, c, tries))
		wait = lb_retry_wait_ms(&f->retry, c, tries, r->retry_after, 0);
	if (wait >= 0) {
		if (h->next < now + wait / 1000.0)
			h->next = now + wait / 1000.0;
		retry = 1;
	}
	if (c == LB_RETRY_THROTTLED || c == LB_RETRY_UNAVAILABLE) {
		fetch_pace_answer(&h->pace, PACE_SLOW_DOWN, r->seconds);
		log_info("%s answered %d: %s (host slowed down)",
			 x->req->url, r->status,
			 retry ? "will retry" : "giving up for this run");
	} else if (c != LB_RETRY_FINAL) {
		fetch_pace_answer(&h->pace, PACE_ERROR, r->seconds);
	} else {
		fetch_pace_answer(&h->pace, PACE_OK, r->seconds);
	}
	return retry;
}

static int finish(struct fetcher *f, CURLMsg *m, fetch_done_fn done,
		  void *arg, struct lb_error *err)
{
	struct xfer *x = NULL;
	struct fetch_req *req;
	long status = 0;
	char *redir = NULL;
	int rc;

	curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
	req = x->req;
	if (req->owner != NULL && req->owner->log_name != NULL)
		log_client(req->owner->log_name);
	x->host->inflight--;
	x->host->unsent -= f->o.interval > 0 && !x->sent;
	f->inflight--;
	if (req->owner != NULL && !f->o.threaded)	/* else the worker's */
		req->owner->inflight--;
	slots_give(f, 1);
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(x->easy, CURLINFO_TOTAL_TIME, &x->res.seconds);
	x->res.status = (int)status;
	if (x->req->html_only && status == 200 && m->data.result == CURLE_OK &&
	    x->res.body.len == 0 && !is_html_type(x->res.content_type))
		x->wrong_type = 1;	/* an empty body never reached on_body() */
	if (x->refused) {
		x->res.error = FE_REFUSED;
		x->res.status = 0;
	} else if (x->wrong_type) {
		x->res.error = FE_TYPE;
		snprintf(x->res.msg, sizeof(x->res.msg),
			 "not HTML (Content-Type: %s)",
			 x->res.content_type ? x->res.content_type : "none");
	} else if (x->too_big || m->data.result == CURLE_FILESIZE_EXCEEDED) {
		x->res.error = FE_TOOBIG;
		snprintf(x->res.msg, sizeof(x->res.msg),
			 "body larger than %zu bytes", x->cap);
	} else if (m->data.result == CURLE_UNSUPPORTED_PROTOCOL ||
		   m->data.result == CURLE_WEIRD_SERVER_REPLY) {
		/* URLs are http(s) by then (url_normalize): this is an
		 * answer without a status line (HTTP/0.9), garbage, or the
		 * rest of a body longer than its Content-Length left on a
		 * kept-alive connection. A failure, retried once on a fresh
		 * connection: the previous version of the page stays. */
		x->res.error = FE_NETWORK;
		x->res.status = 0;
		snprintf(x->res.msg, sizeof(x->res.msg), "not an HTTP answer "
			 "(no status line, HTTP/0.9 or garbage)");
	} else if (m->data.result != CURLE_OK) {
		x->res.error = FE_NETWORK;
		x->res.status = 0;
		x->res.timed_out = m->data.result == CURLE_OPERATION_TIMEDOUT;
		snprintf(x->res.msg, sizeof(x->res.msg), "%s",
			 curl_easy_strerror(m->data.result));
	} else if (status >= 300 && status < 400 &&
		   curl_easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &redir) ==
			   CURLE_OK && redir != NULL) {
		x->res.redirect = strdup(redir);
	}
	if (judge(f, x, mono())) {
		req->tries++;
		x->req = NULL;
		xfer_free(f, x);
		if (f->o.threaded && req->owner != NULL)
			req->owner->inflight--;
		return add_locked(f, req, 1, err);
	}
	x->req = NULL;
	if (req->owner != NULL && f->o.threaded) {
		/* the worker calls done() (fetcher_answer()) */
		struct fetch_owner *o = req->owner;
		struct answer *a = o->failed ? NULL : calloc(1, sizeof(*a));
		if (a == NULL) {	/* over, or no memory: it fails */
			if (!o->failed)
				log_warnx("%s: out of memory", req->url);
			o->failed = 1;
			o->inflight--;
			req_drop(f, req);
		} else {
			a->req = req;
			a->res = x->res;
			memset(&x->res, 0, sizeof(x->res));
			if (f->ans_tail != NULL)
				f->ans_tail->next = a;
			else
				f->ans = a;
			f->ans_tail = a;
			f->answering++;
			pthread_cond_broadcast(&f->cv);
		}
		rc = 0;
	} else if (req->owner != NULL) {
		struct fetch_owner *o = req->owner;
		if (o->failed) {	/* its crawl is over: nobody reads it */
			req_drop(f, req);
		} else if (o->done(o->arg, req, &x->res) < 0) {
			o->failed = 1;
		}
		rc = 0;
	} else {
		rc = done(arg, req, &x->res);
	}
	xfer_free(f, x);
	return rc;
}

/*
 * What max_total caps for h's next request: its owner's transfers (each
 * crawl keeps its own cap when several share a fetcher: the night's cap
 * over all of them is o.slots), else the fetcher's.
 */
static long in_flight(const struct fetcher *f, const struct host *h)
{
	return h->head->owner != NULL ? h->head->owner->inflight : f->inflight;
}

static void forget_locked(struct fetcher *f, struct fetch_owner *o);

/* fetcher_step() but its sleep: *timeout_ms is how long it may sleep. */
static int step_locked(struct fetcher *f, fetch_done_fn done, void *arg,
		       int max_ms, int *timeout_ms, struct lb_error *err)
{
	double now = mono(), wake = now + max_ms / 1000.0;
	int running, left;
	CURLMsg *m;
	long max = f->o.max_total > 0 ? f->o.max_total : FETCH_MAX_TOTAL;
	size_t n = f->n_hosts, k;

	/* round robin from a moving start, so that under the global
	 * cap no host waits behind the others for ever */
	for (k = 0; k < n; k++) {
		struct host *h = f->hosts[(f->rr + k) % n];
		host_left(f, h);
		if (h->head != NULL && h->inflight < f->o.per_host &&
		    now >= h->next && in_flight(f, h) >= max) {
			if (!f->capped) {
				f->capped = 1;
				log_warnx("%ld transfers in flight: "
					  "the other hosts wait (at "
					  "most %ld at once)",
					  in_flight(f, h), max);
			}
			if (h->head->owner == NULL)
				break;
			continue;	/* the other owners' hosts may */
		}
		while (h->head != NULL && h->inflight < f->o.per_host &&
		       !h->unsent && now >= h->next && in_flight(f, h) < max &&
		       slot_take(f)) {
			struct fetch_req *r = h->head;
			double iv = host_interval(f, h);
			h->head = r->next;
			if (h->head == NULL)
				h->tail = NULL;
			r->next = NULL;
			f->queued--;
			if (r->owner != NULL)
				r->owner->queued--;
			if (start(f, h, r, err) < 0) {
				slots_give(f, 1);
				req_drop(f, r);
				return -1;
			}
			if (h->next < now)
				h->next = now;
			h->next += iv;
		}
		if (h->head != NULL && h->inflight < f->o.per_host &&
		    h->next < wake)
			wake = h->next;
	}
	if (f->starved) {	/* the night's cap: try again soon
				 * (ready hosts set wake to now) */
		f->starved = 0;
		wake = now + 0.01;
	}
	if (n > 0)
		f->rr = (f->rr + 1) % n;
	if (curl_multi_perform(f->multi, &running) != CURLM_OK)
		return lb_error_set(err, LB_EINTERNAL,
				    "curl_multi_perform failed");
	f->performed = mono();
	while ((m = curl_multi_info_read(f->multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE)
			continue;
		if (finish(f, m, done, arg, err) < 0)
			return -1;
		/* done() may have queued more: schedule at once */
		wake = now;
	}
	now = mono();
	*timeout_ms = wake <= now ? 0 : (int)ceil((wake - now) * 1000);
	if (*timeout_ms > max_ms)
		*timeout_ms = max_ms;
	return 0;
}

int fetcher_step(struct fetcher *f, fetch_done_fn done, void *arg,
		 int max_ms, struct lb_error *err)
{
	int rc, timeout_ms = 0;

	lock(f);
	if (f->forget != NULL) {	/* fetcher_forget(), threaded */
		forget_locked(f, f->forget);
		f->forget = NULL;
		pthread_cond_broadcast(&f->cv);
	}
	rc = step_locked(f, done, arg, max_ms, &timeout_ms, err);
	if (rc < 0 && f->o.threaded) {	/* the worker fails its crawls */
		f->broken = 1;
		f->berr = *err;
		pthread_cond_broadcast(&f->cv);
	}
	unlock(f);
	if (rc < 0)
		return -1;
	if (timeout_ms > 0 &&
	    curl_multi_poll(f->multi, NULL, 0, timeout_ms, NULL) != CURLM_OK)
		return lb_error_set(err, LB_EINTERNAL,
				    "curl_multi_poll failed");
	return 0;
}

int fetcher_answer(struct fetcher *f, int max_ms, struct lb_error *err)
{
	struct answer *a, *nx;
	int broken, n = 0;

	pthread_mutex_lock(&f->mu);
	if (f->ans == NULL && !f->woken && !f->broken) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += max_ms / 1000;
		ts.tv_nsec += (long)(max_ms % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&f->cv, &f->mu, &ts);
	}
	f->woken = 0;
	a = f->ans;
	f->ans = f->ans_tail = NULL;
	if ((broken = f->broken) != 0) {
		*err = f->berr;
		f->broken = 0;
	}
	pthread_mutex_unlock(&f->mu);
	for (; a != NULL; a = nx, n++) {
		struct fetch_owner *o = a->req->owner;
		nx = a->next;
		if (o->log_name != NULL)
			log_client(o->log_name);
		if (o->failed) {	/* its crawl is over: nobody reads it */
			req_drop(f, a->req);
		} else if (o->done(o->arg, a->req, &a->res) < 0) {
			pthread_mutex_lock(&f->mu);
			o->failed = 1;
			pthread_mutex_unlock(&f->mu);
		}
		res_release(&a->res);
		free(a);
		pthread_mutex_lock(&f->mu);
		o->inflight--;
		f->answering--;
		pthread_mutex_unlock(&f->mu);
	}
	return broken ? -1 : n;
}

int fetcher_run(struct fetcher *f, fetch_done_fn done, void *arg,
		struct lb_error *err)
{
	while (f->queued > 0 || f->inflight > 0)
		if (fetcher_step(f, done, arg, 1000, err) < 0)
			return -1;
	return 0;
}

void fetcher_wakeup(struct fetcher *f)
{
	curl_multi_wakeup(f->multi);
	if (f->o.threaded) {
		pthread_mutex_lock(&f->mu);
		f->woken = 1;
		pthread_cond_broadcast(&f->cv);
		pthread_mutex_unlock(&f->mu);
	}
}

long fetcher_pending(struct fetcher *f)
{
	long n;

	lock(f);
	n = f->queued + f->inflight + f->answering;
	unlock(f);
	return n;
}

long fetcher_owner_pending(struct fetcher *f, const struct fetch_owner *o)
{
	long n;

	lock(f);
	n = o->failed ? -1 : o->queued + o->inflight;
	unlock(f);
	return n;
}

/* Drops o's queued requests of h. */
static void host_drop(struct fetcher *f, struct host *h,
		      struct fetch_owner *o)
{
	struct fetch_req **p = &h->head, *r;

	h->tail = NULL;
	while ((r = *p) != NULL) {
		if (r->owner != o) {
			h->tail = r;
			p = &r->next;
			continue;
		}
		*p = r->next;
		f->queued--;
		o->queued--;
		req_drop(f, r);
	}
}

/* Stops a transfer in flight (its owner is forgotten). */
static void xfer_stop(struct fetcher *f, struct xfer *x)
{
	struct fetch_req *r = x->req;

	x->host->inflight--;
	x->host->unsent -= f->o.interval > 0 && !x->sent;
	f->inflight--;
	r->owner->inflight--;
	slots_give(f, 1);
	x->req = NULL;
	req_drop(f, r);
	xfer_free(f, x);
}

void fetcher_forget(struct fetcher *f, struct fetch_owner *o)
{
	if (!f->o.threaded) {
		forget_locked(f, o);
		return;
	}
	/* its transfers are the curl multi's: the network thread stops
	 * them (fetcher_step()) while the worker waits */
	pthread_mutex_lock(&f->mu);
	f->forget = o;
	curl_multi_wakeup(f->multi);
	while (f->forget == o)
		pthread_cond_wait(&f->cv, &f->mu);
	pthread_mutex_unlock(&f->mu);
}

/* Drops o's answers not yet handed to the worker. */
static void answers_drop(struct fetcher *f, struct fetch_owner *o)
{
	struct answer **p = &f->ans, *a;

	f->ans_tail = NULL;
	while ((a = *p) != NULL) {
		if (a->req->owner != o) {
			f->ans_tail = a;
			p = &a->next;
			continue;
		}
		*p = a->next;
		o->inflight--;
		f->answering--;
		answer_drop(f, a);
	}
}

static void forget_locked(struct fetcher *f, struct fetch_owner *o)
{
	struct xfer *x, *nx;
	size_t i, k;

	answers_drop(f, o);

	for (x = f->xfers; x != NULL; x = nx) {
		nx = x->next;
		if (x->req != NULL && x->req->owner == o)
			xfer_stop(f, x);
	}
	for (i = k = 0; i < f->n_hosts; i++) {
		struct host *h = f->hosts[i];

		host_drop(f, h, o);
		if (h->owner != o || h->head != NULL || h->inflight > 0) {
			f->hosts[k++] = h;
			continue;
		}
		host_left(f, h);
		if (f->o.interval > 0)
			mark_put(h->origin, h->next);
		free(h->origin);
		free(h);
	}
	f->n_hosts = k;
	if (f->rr >= k)
		f->rr = 0;
}
