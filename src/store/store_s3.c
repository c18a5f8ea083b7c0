/*
 * store_s3.c - the S3 store: any S3-compatible bucket (AWS S3, MinIO,
 * Cloudflare R2, s3rver) through libcurl, signed with curl's AWS SigV4.
 *
 * Design notes.
 *
 * Requests are signed by curl (CURLOPT_AWS_SIGV4 "aws:amz:REGION:s3"); we
 * send x-amz-content-sha256 with the SHA-256 of the body ourselves, which
 * curl then signs, because S3 requires that header. The canonical request
 * curl builds uses the URL as written, so we write URLs in canonical form:
 * keys URI-encoded per segment (unreserved characters kept, '/' kept),
 * query parameters sorted by name and encoded (ListObjectsV2).
 *
 * Credentials come only from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
 * AWS_SESSION_TOKEN (sent as x-amz-security-token), read once at open;
 * they are never part of a URL, a message or a log line.
 *
 * Puts and deletes are queued: store_put() copies the body into a request
 * and returns once fewer than `concurrency` requests wait to start; up to
 * `concurrency` transfers run at once on one curl multi handle, whose
 * connection cache keeps connections alive between requests. A request
 * that fails with a transport error, HTTP 5xx, 429, or S3's SlowDown /
 * RequestTimeout codes is retried after an exponential backoff with full
 * jitter (base * 2^attempt, capped), up to `retries` times. The first
 * request that fails for good is remembered; store_flush() waits for every
 * queued request and reports it.
 *
 * Gets and lists run one request at a time through the same machinery
 * (retries included), after the queue has drained.
 *
 * Tuning (environment, all optional): LINKBOT_S3_CONCURRENCY (32),
 * LINKBOT_S3_RETRIES (5), LINKBOT_S3_BACKOFF_MS (100), LINKBOT_S3_TIMEOUT
 * (60: a request that moves no byte for that many seconds is abandoned
 * and retried, a store that stalls; none lasts more than 30 times that).
 * Once a write has failed for good, the writes still queued are not
 * tried: the flush reports the first failure at once, where a stalled
 * store would otherwise cost every queued write its timeout times its
 * retries. LINKBOT_S3_DATE=YYYYMMDDTHHMMSSZ fixes the
 * signing time (tests only: curl then sends X-Amz-Date twice).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "linkbot/buf.h"
#include "linkbot/log.h"
#include "linkbot/retry.h"
#include "linkbot/sha256.h"
#include "linkbot/store.h"
#include "store_impl.h"

#define ERRBODY_MAX ((size_t)64 << 10)
#define LIST_BODY_MAX ((size_t)16 << 20)

enum s3_op { OP_PUT, OP_DELETE, OP_GET, OP_LIST };

struct s3_req {
	enum s3_op op;
	char *url;
	char *what;		/* "s3://bucket/key" for messages */
	char *body;		/* PUT: owned copy */
	size_t len;
	struct curl_slist *hdrs;
	struct lb_buf resp;
	int attempt;
	long long due_ms;	/* do not start before (backoff) */
	int done, ok;
	long status;
	CURL *easy;
	struct s3_req *next;		/* waiting list */
	struct s3_req *run_next;	/* running list */
};

struct s3_store {
	struct lb_store base;
	char *scheme_host;	/* "http://127.0.0.1:4569" */
	char *host;		/* "127.0.0.1:4569" */
	char *scheme;		/* "http" */
	char *bucket;
	char *prefix;		/* "" or "a/b/" */
	int path_style;
	char sigv4[128];
	char *access_key, *secret_key, *token_hdr;
	char *fixed_date_hdr;	/* tests: "X-Amz-Date: ..." */
	int concurrency;
	struct lb_retry_policy retry;	/* s3_retry_policy() */
	long timeout_s;
	CURLM *multi;
	CURL **pool;		/* idle easy handles */
	int n_pool;
	struct s3_req *waiting;	/* not started (FIFO: head, tail) */
	struct s3_req *waiting_tail;
	long n_waiting;
	struct s3_req *running;
	int n_running;
	uint64_t rng;
	struct lb_error first;	/* first request that failed for good */
	long long dropped;	/* writes not tried after it */
	int failed;
	long long requests, retried;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* AWS URI encoding: unreserved kept, '/' kept when keep_slash. */
static int uri_encode(struct lb_buf *b, const char *s, int keep_slash,
		      struct lb_error *err)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
		    (keep_slash && c == '/')) {
			if (lb_buf_addc(b, (char)c, err) < 0)
				return -1;
		} else if (lb_buf_printf(b, err, "%%%02X", c) < 0) {
			return -1;
		}
	}
	return 0;
}

/* The URL of a key (full key, prefix included) or of the bucket (NULL). */
static char *object_url(struct s3_store *s, const char *key, const char *query,
			struct lb_error *err)
{
	struct lb_buf b;

	lb_buf_init(&b, 8192);
	if (s->path_style) {
		if (lb_buf_printf(&b, err, "%s/", s->scheme_host) < 0 ||
		    uri_encode(&b, s->bucket, 0, err) < 0 ||
		    lb_buf_addc(&b, '/', err) < 0)
			goto fail;
	} else if (lb_buf_printf(&b, err, "%s://%s.%s/", s->scheme, s->bucket,
				 s->host) < 0) {
		goto fail;
	}
	if (key != NULL && uri_encode(&b, key, 1, err) < 0)
		goto fail;
	if (query != NULL && lb_buf_printf(&b, err, "?%s", query) < 0)
		goto fail;
	return lb_buf_take(&b);
fail:
	lb_buf_release(&b);
	return NULL;
}

static void req_free(struct s3_req *r)
{
	if (r == NULL)
		return;
	free(r->url);
	free(r->what);
	free(r->body);
	curl_slist_free_all(r->hdrs);
	lb_buf_release(&r->resp);
	free(r);
}

static size_t on_write(char *p, size_t size, size_t n, void *arg)
{
	struct s3_req *r = arg;
	struct lb_error ignore;

	lb_error_init(&ignore);
	if (lb_buf_add(&r->resp, p, size * n, &ignore) < 0)
		return 0;	/* past the cap: curl fails the transfer */
	return size * n;
}

static int add_hdr(struct curl_slist **l, const char *name, const char *value)
{
	char line[1024];
	struct curl_slist *n;

	snprintf(line, sizeof(line), "%s: %s", name, value);
	if ((n = curl_slist_append(*l, line)) == NULL)
		return -1;
	*l = n;
	return 0;
}

/*
 * A new request; key is relative to the store's prefix (NULL: the
 * bucket). PUT bodies are copied.
 */
static struct s3_req *req_new(struct s3_store *s, enum s3_op op,
			      const char *key, const char *query,
			      const void *body, size_t len,
			      const struct lb_object_meta *meta,
			      struct lb_error *err)
{
	struct s3_req *r = calloc(1, sizeof(*r));
	char *full = NULL, sha[65];
	size_t n;

	if (r == NULL)
		goto nomem;
	r->op = op;
	lb_buf_init(&r->resp, op == OP_GET ? STORE_GET_MAX :
			      op == OP_LIST ? LIST_BODY_MAX : ERRBODY_MAX);
	n = strlen(s->prefix) + (key ? strlen(key) : 0) + 1;
	if ((full = malloc(n)) == NULL)
		goto nomem;
	snprintf(full, n, "%s%s", key ? s->prefix : "", key ? key : "");
	if ((r->url = object_url(s, key ? full : NULL, query, err)) == NULL)
		goto fail;
	n = strlen(s->bucket) + strlen(full) + 8;
	if ((r->what = malloc(n)) == NULL)
		goto nomem;
	snprintf(r->what, n, "s3://%s/%s", s->bucket, full);
	if (op == OP_PUT) {
		if ((r->body = malloc(len ? len : 1)) == NULL)
			goto nomem;
		if (len > 0)
			memcpy(r->body, body, len);
		r->len = len;
	}
	lb_sha256_hex(op == OP_PUT ? r->body : "", op == OP_PUT ? len : 0, sha,
		      LB_SHA256_HEX_LEN);
	if (add_hdr(&r->hdrs, "x-amz-content-sha256", sha) < 0)
		goto nomem;
	if (s->token_hdr != NULL &&
	    (r->hdrs = curl_slist_append(r->hdrs, s->token_hdr)) == NULL)
		goto nomem;
	if (s->fixed_date_hdr != NULL &&
	    (r->hdrs = curl_slist_append(r->hdrs, s->fixed_date_hdr)) == NULL)
		goto nomem;
	if (op == OP_PUT) {
		const char *ct = meta && meta->content_type ?
					 meta->content_type : "application/octet-stream";
		if (add_hdr(&r->hdrs, "Content-Type", ct) < 0 ||
		    (meta && meta->content_encoding &&
		     add_hdr(&r->hdrs, "Content-Encoding", meta->content_encoding) < 0) ||
		    (meta && meta->cache_control &&
		     add_hdr(&r->hdrs, "Cache-Control", meta->cache_control) < 0))
			goto nomem;
	}
	free(full);
	return r;
nomem:
	lb_error_set(err, LB_ENOMEM, "out of memory");
fail:
	free(full);
	req_free(r);
	return NULL;
}

static CURL *take_easy(struct s3_store *s)
{
	if (s->n_pool > 0)
		return s->pool[--s->n_pool];
	return curl_easy_init();
}

static void give_easy(struct s3_store *s, CURL *e)
{
	if (s->n_pool < s->concurrency) {
		curl_easy_reset(e);
		s->pool[s->n_pool++] = e;
	} else {
		curl_easy_cleanup(e);
	}
}

static int start(struct s3_store *s, struct s3_req *r, struct lb_error *err)
{
	CURL *e = take_easy(s);

	if (e == NULL)
		return lb_error_set(err, LB_ENOMEM, "cannot start a transfer");
	lb_buf_reset(&r->resp);
	curl_easy_setopt(e, CURLOPT_URL, r->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, r);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->hdrs);
	curl_easy_setopt(e, CURLOPT_AWS_SIGV4, s->sigv4);
	curl_easy_setopt(e, CURLOPT_USERNAME, s->access_key);
	curl_easy_setopt(e, CURLOPT_PASSWORD, s->secret_key);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, s->timeout_s);
	curl_easy_setopt(e, CURLOPT_TIMEOUT, s->timeout_s * 30);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "linkbot/1.0");
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
	switch (r->op) {
	case OP_PUT:
		/*
		 * A PUT with the body in memory. Not CURLOPT_UPLOAD: curl
		 * would add "Expect:", and an "Expect:" header we blanked
		 * would be signed though never sent.
		 */
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "PUT");
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)r->len);
		break;
	case OP_DELETE:
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
		break;
	case OP_GET:
	case OP_LIST:
		curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
		break;
	}
	if (curl_multi_add_handle(s->multi, e) != CURLM_OK) {
		give_easy(s, e);
		return lb_error_set(err, LB_ESTORE, "cannot start a transfer");
	}
	r->easy = e;
	r->run_next = s->running;
	s->running = r;
	s->n_running++;
	s->requests++;
	return 0;
}

/* The <Code> of an S3 error body, or "". */
static void s3_code(const struct lb_buf *b, char *out, size_t n)
{
	const char *p, *q;

	out[0] = '\0';
	if (b->data == NULL || (p = strstr(b->data, "<Code>")) == NULL)
		return;
	p += 6;
	if ((q = strstr(p, "</Code>")) == NULL || (size_t)(q - p) >= n)
		return;
	memcpy(out, p, (size_t)(q - p));
	out[q - p] = '\0';
}

static void enqueue(struct s3_store *s, struct s3_req *r)
{
	r->next = NULL;
	if (s->waiting_tail != NULL)
		s->waiting_tail->next = r;
	else
		s->waiting = r;
	s->waiting_tail = r;
	s->n_waiting++;
}

/*
 * A transfer ended: done (ok or failed for good) or queued again after a
 * backoff. The waiting list stays FIFO; start_due() skips requests whose
 * backoff has not run out.
 */
static void finish(struct s3_store *s, struct s3_req *r, CURLcode cc)
{
	char code[64];
	long status = 0;
	enum lb_retry_class c = LB_RETRY_FINAL;
	int ok = 0;

	struct s3_req **pp;

	for (pp = &s->running; *pp != NULL; pp = &(*pp)->run_next) {
		if (*pp == r) {
			*pp = r->run_next;
			break;
		}
	}
	r->run_next = NULL;
	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
	curl_multi_remove_handle(s->multi, r->easy);
	give_easy(s, r->easy);
	r->easy = NULL;
	s->n_running--;
	r->status = status;
	s3_code(&r->resp, code, sizeof(code));
	if (cc != CURLE_OK) {
		c = lb_retry_classify(cc, 0);
	} else if (status >= 200 && status < 300) {
		ok = 1;
	} else if (status == 404 && (r->op == OP_DELETE || r->op == OP_GET)) {
		ok = r->op == OP_DELETE;	/* already gone */
	} else if (strcmp(code, "SlowDown") == 0 ||
		   strcmp(code, "RequestTimeout") == 0) {
		c = LB_RETRY_THROTTLED;		/* S3's way of saying 429 */
	} else {
		c = lb_retry_classify(0, status);
	}
	if (!ok && lb_retry_allowed(&s->retry, c, r->attempt)) {
		long long wait = lb_retry_wait_ms(&s->retry, c, r->attempt, -1,
						  next_rand(&s->rng));
		r->attempt++;
		r->due_ms = now_ms() + wait;
		s->retried++;
		log_debug("retrying %s in %lld ms (attempt %d): %s%s%s", r->what,
			  wait, r->attempt + 1,
			  cc != CURLE_OK ? curl_easy_strerror(cc) : "HTTP",
			  code[0] ? " " : "", code);
		enqueue(s, r);
		return;
	}
	r->done = 1;
	r->ok = ok;
	if (ok || (status == 404 && r->op == OP_GET))
		return;
	if (!s->failed) {
		s->failed = 1;
		if (cc != CURLE_OK)
			lb_error_set(&s->first, LB_ESTORE, "cannot %s '%s': %s%s "
				     "(%d attempts)",
				     r->op == OP_PUT ? "put" : r->op == OP_DELETE ?
					     "delete" : "read", r->what,
				     curl_easy_strerror(cc),
				     cc == CURLE_OPERATION_TIMEDOUT ?
					     " (the store stalled: no byte "
					     "moved for LINKBOT_S3_TIMEOUT "
					     "seconds)" : "",
				     r->attempt + 1);
		else
			lb_error_set(&s->first, LB_ESTORE, "cannot %s '%s': HTTP "
				     "%ld%s%s%s (%d attempts)",
				     r->op == OP_PUT ? "put" : r->op == OP_DELETE ?
					     "delete" : "read", r->what, status,
				     code[0] ? " " : "", code,
				     status == 403 ? " (check AWS_ACCESS_KEY_ID and "
				     "AWS_SECRET_ACCESS_KEY)" : "",
				     r->attempt + 1);
	}
}

/* Starts waiting requests that are due while slots are free. */
static int start_due(struct s3_store *s, long long *next_due,
		     struct lb_error *err)
{
	struct s3_req **pp = &s->waiting, *prev = NULL;
	long long t = now_ms();

	*next_due = -1;
	while (*pp != NULL && s->n_running < s->concurrency) {
		struct s3_req *r = *pp;
		if (r->due_ms > t) {
			if (*next_due < 0 || r->due_ms < *next_due)
				*next_due = r->due_ms;
			prev = r;
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		if (s->waiting_tail == r)
			s->waiting_tail = prev;
		s->n_waiting--;
		r->next = NULL;
		if (s->failed && (r->op == OP_PUT || r->op == OP_DELETE)) {
			s->dropped++;	/* fire and forget: nobody waits */
			req_free(r);
			continue;
		}
		if (start(s, r, err) < 0)
			return -1;
	}
	return 0;
}

/* One round: start what is due, move transfers, reap finished ones. */
static int pump(struct s3_store *s, int block, struct lb_error *err)
{
	CURLMsg *m;
	long long next_due;
	int left, running;

	if (start_due(s, &next_due, err) < 0)
		return -1;
	if (curl_multi_perform(s->multi, &running) != CURLM_OK)
		return lb_error_set(err, LB_ESTORE, "curl multi failed");
	while ((m = curl_multi_info_read(s->multi, &left)) != NULL) {
		struct s3_req *r = NULL;
		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
		finish(s, r, m->data.result);
		if (r->done && (r->op == OP_PUT || r->op == OP_DELETE))
			req_free(r);	/* queued: nobody waits on it */
	}
	if (block) {
		int timeout = 1000;
		if (s->n_running == 0 && next_due >= 0) {
			long long w = next_due - now_ms();
			timeout = w < 0 ? 0 : w > 1000 ? 1000 : (int)w;
		} else if (next_due >= 0) {
			long long w = next_due - now_ms();
			if (w < timeout)
				timeout = w < 0 ? 0 : (int)w;
		}
		if (s->n_running > 0 || next_due >= 0)
			curl_multi_poll(s->multi, NULL, 0, timeout, NULL);
	}
	return 0;
}

static int drain(struct s3_store *s, struct lb_error *err)
{
	while (s->n_running > 0 || s->n_waiting > 0)
		if (pump(s, 1, err) < 0)
			return -1;
	return 0;
}

/* Queues a put or delete; waits while too many are queued. */
static int submit(struct s3_store *s, struct s3_req *r, struct lb_error *err)
{
	enqueue(s, r);
	while (s->n_waiting > s->concurrency)
		if (pump(s, 1, err) < 0)
			return -1;
	return pump(s, 0, err);
}

/* Runs one request to its end (the queue drained first). */
static int run_one(struct s3_store *s, struct s3_req *r, struct lb_error *err)
{
	if (drain(s, err) < 0)
		return -1;
	enqueue(s, r);
	while (!r->done)
		if (pump(s, 1, err) < 0)
			return -1;
	return 0;
}

static int s3_put(struct lb_store *st, const char *key, const void *data,
		  size_t len, const struct lb_object_meta *meta,
		  struct lb_error *err)
{
	struct s3_store *s = (struct s3_store *)st;
	struct s3_req *r = req_new(s, OP_PUT, key, NULL, data, len, meta, err);

	return r == NULL ? -1 : submit(s, r, err);
}

static int s3_del(struct lb_store *st, const char *key, struct lb_error *err)
{
	struct s3_store *s = (struct s3_store *)st;
	struct s3_req *r = req_new(s, OP_DELETE, key, NULL, NULL, 0, NULL, err);

	return r == NULL ? -1 : submit(s, r, err);
}

static int s3_get(struct lb_store *st, const char *key, char **data,
		  size_t *len, struct lb_error *err)
{
	struct s3_store *s = (struct s3_store *)st;
	struct s3_req *r = req_new(s, OP_GET, key, NULL, NULL, 0, NULL, err);
	int rc = -1;

	if (r == NULL)
		return -1;
	if (run_one(s, r, err) < 0)
		goto out;
	if (!r->ok) {
		if (r->status == 404)
			lb_error_set(err, LB_ENOTFOUND, "'%s' does not exist",
				     r->what);
		else {
			lb_error_set(err, s->first.code, "%s", s->first.msg);
			s->failed = 0;	/* reported here, not at flush */
			lb_error_init(&s->first);
		}
		goto out;
	}
	if (len != NULL)
		*len = r->resp.len;
	*data = lb_buf_take(&r->resp);
	rc = 0;
out:
	req_free(r);
	return rc;
}

/* Decodes the XML text between <tag> and </tag> at or after *p. */
static char *xml_next(const char **p, const char *end, const char *tag)
{
	char open[64], close[64], *out;
	const char *a, *b, *q;
	size_t o = 0;

	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	if ((a = strstr(*p, open)) == NULL || (end && a >= end))
		return NULL;
	a += strlen(open);
	if ((b = strstr(a, close)) == NULL)
		return NULL;
	*p = b + strlen(close);
	if ((out = malloc((size_t)(b - a) + 1)) == NULL)
		return NULL;
	for (q = a; q < b; q++) {
		static const struct { const char *ent; char c; } ents[] = {
			{ "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' },
			{ "&quot;", '"' }, { "&apos;", '\'' },
		};
		size_t i;
		int done = 0;
		if (*q == '&') {
			for (i = 0; i < sizeof(ents) / sizeof(ents[0]); i++) {
				size_t n = strlen(ents[i].ent);
				if ((size_t)(b - q) >= n && !strncmp(q, ents[i].ent, n)) {
					out[o++] = ents[i].c;
					q += n - 1;
					done = 1;
					break;
				}
			}
			if (!done && q[1] == '#') {
				char *e;
				long c = q[2] == 'x' ? strtol(q + 3, &e, 16) :
						       strtol(q + 2, &e, 10);
				if (*e == ';' && c > 0 && c < 128) {
					out[o++] = (char)c;
					q = e;
					done = 1;
				}
			}
		}
		if (!done)
			out[o++] = *q;
	}
	out[o] = '\0';
	return out;
}

static int s3_list(struct lb_store *st, const char *prefix, store_list_fn fn,
		   void *arg, struct lb_error *err)
{
	struct s3_store *s = (struct s3_store *)st;
	struct lb_buf q, full;
	char *token = NULL;
	size_t skip = strlen(s->prefix);
	int rc = -1;

	lb_buf_init(&q, 16384);
	lb_buf_init(&full, 8192);
	if (lb_buf_printf(&full, err, "%s%s", s->prefix, prefix) < 0)
		goto out;
	for (;;) {
		struct s3_req *r;
		const char *p, *end;
		char *trunc, *key;

		/* Query parameters sorted by name: the canonical form. */
		lb_buf_reset(&q);
		if (token != NULL && (lb_buf_adds(&q, "continuation-token=", err) < 0 ||
				      uri_encode(&q, token, 0, err) < 0 ||
				      lb_buf_addc(&q, '&', err) < 0))
			goto out;
		if (lb_buf_adds(&q, "list-type=2&max-keys=1000&prefix=", err) < 0 ||
		    uri_encode(&q, full.data, 0, err) < 0)
			goto out;
		if ((r = req_new(s, OP_LIST, NULL, q.data, NULL, 0, NULL, err)) == NULL)
			goto out;
		if (run_one(s, r, err) < 0 || !r->ok) {
			if (!r->ok) {
				lb_error_set(err, LB_ESTORE, "%s", s->first.msg);
				s->failed = 0;
				lb_error_init(&s->first);
			}
			req_free(r);
			goto out;
		}
		p = r->resp.data ? r->resp.data : "";
		while ((p = strstr(p, "<Contents>")) != NULL) {
			end = strstr(p, "</Contents>");
			key = xml_next(&p, end, "Key");
			if (key == NULL)
				break;
			if (strncmp(key, s->prefix, skip) == 0 &&
			    fn(key + skip, arg) != 0) {
				free(key);
				req_free(r);
				lb_error_set(err, LB_EINTERNAL, "listing stopped");
				goto out;
			}
			free(key);
		}
		p = r->resp.data ? r->resp.data : "";
		trunc = xml_next(&p, NULL, "IsTruncated");
		free(token);
		token = NULL;
		if (trunc != NULL && strcmp(trunc, "true") == 0) {
			p = r->resp.data;
			token = xml_next(&p, NULL, "NextContinuationToken");
		}
		free(trunc);
		req_free(r);
		if (token == NULL)
			break;
	}
	rc = 0;
out:
	free(token);
	lb_buf_release(&q);
	lb_buf_release(&full);
	return rc;
}

static int s3_flush(struct lb_store *st, struct lb_error *err)
{
	struct s3_store *s = (struct s3_store *)st;

	if (drain(s, err) < 0)
		return -1;
	log_debug("%s: %lld requests, %lld retried", s->base.describe,
		  s->requests, s->retried);
	if (s->failed) {
		if (s->dropped > 0)
			lb_error_set(err, s->first.code, "%s; %lld other "
				     "write(s) not tried", s->first.msg,
				     s->dropped);
		else
			lb_error_set(err, s->first.code, "%s", s->first.msg);
		s->failed = 0;
		s->dropped = 0;
		lb_error_init(&s->first);
		return -1;
	}
	return 0;
}

static void s3_free(struct lb_store *st)
{
	struct s3_store *s = (struct s3_store *)st;
	struct s3_req *r;
	int i;

	/* Abandon what is still queued or running (an error path). */
	while ((r = s->waiting) != NULL) {
		s->waiting = r->next;
		req_free(r);
	}
	while ((r = s->running) != NULL) {
		s->running = r->run_next;
		curl_multi_remove_handle(s->multi, r->easy);
		curl_easy_cleanup(r->easy);
		req_free(r);
	}
	if (s->multi != NULL)
		curl_multi_cleanup(s->multi);
	for (i = 0; i < s->n_pool; i++)
		curl_easy_cleanup(s->pool[i]);
	free(s->pool);
	free(s->scheme_host);
	free(s->host);
	free(s->scheme);
	free(s->bucket);
	free(s->prefix);
	if (s->secret_key != NULL)
		memset(s->secret_key, 0, strlen(s->secret_key));
	free(s->access_key);
	free(s->secret_key);
	free(s->token_hdr);
	free(s->fixed_date_hdr);
	free(s->base.describe);
	free(s);
}

static const struct store_ops s3_ops = {
	s3_put, s3_get, s3_del, s3_list, s3_flush, s3_free, NULL,
};

static int env_int(const char *name, int def, int min, int max)
{
	const char *v = getenv(name);
	char *end;
	long x;

	if (v == NULL || *v == '\0')
		return def;
	x = strtol(v, &end, 10);
	if (*end != '\0' || x < min || x > max) {
		log_warnx("ignoring %s='%s': not a number in %d..%d", name, v,
			  min, max);
		return def;
	}
	return (int)x;
}

/*
 * The store's retries (linkbot/retry.h): every transport error but the
 * permanent ones, 5xx, 429 and S3's SlowDown / RequestTimeout, `retries`
 * times, after base * 2^attempt capped at 10 s with full jitter (the
 * store's requests run 32 at once: they must not come back together).
 */
static void s3_retry_policy(struct lb_retry_policy *p)
{
	int n = env_int("LINKBOT_S3_RETRIES", 5, 0, 100), c;

	memset(p, 0, sizeof(*p));
	for (c = LB_RETRY_FINAL + 1; c < LB_RETRY_N_CLASSES; c++)
		p->retries[c] = n;
	p->first_ms = env_int("LINKBOT_S3_BACKOFF_MS", 100, 1, 60000);
	p->cap_ms = 10000;
	p->jitter = 1;
}

int store_s3_open(const struct lb_config *cfg, const char *location,
		  struct lb_store **out, struct lb_error *err)
{
	struct s3_store *s = NULL;
	const char *b = location + 5, *slash, *endpoint, *region, *ak, *sk, *tok;
	const char *date;
	size_t n;

	*out = NULL;
	endpoint = cfg && cfg->s3.endpoint ? cfg->s3.endpoint :
					     "https://s3.amazonaws.com";
	region = cfg && cfg->s3.region ? cfg->s3.region : "us-east-1";
	ak = getenv("AWS_ACCESS_KEY_ID");
	sk = getenv("AWS_SECRET_ACCESS_KEY");
	tok = getenv("AWS_SESSION_TOKEN");
	if (ak == NULL || *ak == '\0' || sk == NULL || *sk == '\0')
		return lb_error_set(err, LB_ESTORE,	/* credentials: exit 4 */
				    "'%s': set AWS_ACCESS_KEY_ID and "
				    "AWS_SECRET_ACCESS_KEY in the environment",
				    location);
	if (strncmp(endpoint, "http://", 7) != 0 &&
	    strncmp(endpoint, "https://", 8) != 0)
		return lb_error_set(err, LB_ECONFIG, "S3 endpoint '%s' is not an "
				    "http:// or https:// URL", endpoint);
	if (strlen(region) > 64 || strspn(region, "abcdefghijklmnopqrstuvwxyz"
					  "0123456789-_") != strlen(region))
		return lb_error_set(err, LB_ECONFIG, "invalid S3 region '%s'",
				    region);
	if ((s = calloc(1, sizeof(*s))) == NULL)
		goto nomem;
	s->base.ops = &s3_ops;
	slash = strchr(b, '/');
	n = slash ? (size_t)(slash - b) : strlen(b);
	if (n == 0 || n > 63) {
		free(s);
		return lb_error_set(err, LB_ECONFIG, "'%s': no bucket name", location);
	}
	if ((s->bucket = strndup(b, n)) == NULL)
		goto nomem;
	if (strspn(s->bucket, "abcdefghijklmnopqrstuvwxyz0123456789.-") != n) {
		lb_error_set(err, LB_ECONFIG, "'%s': invalid bucket name", location);
		s3_free(&s->base);
		return -1;
	}
	{
		/* The prefix, without slashes at either end, then one '/'. */
		const char *p = slash ? slash : "";
		size_t pl;
		while (*p == '/')
			p++;
		pl = strlen(p);
		while (pl > 0 && p[pl - 1] == '/')
			pl--;
		if ((s->prefix = malloc(pl + 2)) == NULL)
			goto nomem;
		memcpy(s->prefix, p, pl);
		if (pl > 0)
			s->prefix[pl++] = '/';
		s->prefix[pl] = '\0';
	}
	{
		const char *h = strstr(endpoint, "://") + 3;
		size_t hl = strcspn(h, "/");
		if ((s->scheme = strndup(endpoint, (size_t)(h - 3 - endpoint))) == NULL ||
		    (s->host = strndup(h, hl)) == NULL ||
		    (s->scheme_host = strndup(endpoint, (size_t)(h - endpoint) + hl)) == NULL)
			goto nomem;
		if (hl == 0) {
			lb_error_set(err, LB_ECONFIG, "S3 endpoint '%s' has no host",
				     endpoint);
			s3_free(&s->base);
			return -1;
		}
	}
	s->path_style = cfg ? cfg->s3.path_style : 0;
	snprintf(s->sigv4, sizeof(s->sigv4), "aws:amz:%s:s3", region);
	if ((s->access_key = strdup(ak)) == NULL ||
	    (s->secret_key = strdup(sk)) == NULL)
		goto nomem;
	if (tok != NULL && *tok != '\0') {
		n = strlen(tok) + 32;
		if ((s->token_hdr = malloc(n)) == NULL)
			goto nomem;
		snprintf(s->token_hdr, n, "x-amz-security-token: %s", tok);
	}
	if ((date = getenv("LINKBOT_S3_DATE")) != NULL && *date != '\0') {
		if (strlen(date) != 16 || date[8] != 'T' || date[15] != 'Z') {
			lb_error_set(err, LB_ECONFIG, "LINKBOT_S3_DATE must look "
				     "like 20260101T000000Z");
			s3_free(&s->base);
			return -1;
		}
		n = strlen(date) + 16;
		if ((s->fixed_date_hdr = malloc(n)) == NULL)
			goto nomem;
		snprintf(s->fixed_date_hdr, n, "X-Amz-Date: %s", date);
	}
	s->concurrency = env_int("LINKBOT_S3_CONCURRENCY", 32, 1, 1024);
	s3_retry_policy(&s->retry);
	s->timeout_s = env_int("LINKBOT_S3_TIMEOUT", 60, 1, 3600);
	s->rng = (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)s << 16);
	if ((s->pool = calloc((size_t)s->concurrency, sizeof(*s->pool))) == NULL)
		goto nomem;
	n = strlen(s->bucket) + strlen(s->prefix) + 8;
	if ((s->base.describe = malloc(n)) == NULL)
		goto nomem;
	snprintf(s->base.describe, n, "s3://%s/%s", s->bucket, s->prefix);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (s->multi = curl_multi_init()) == NULL)
		goto nomem;
	curl_multi_setopt(s->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
			  (long)s->concurrency);
	curl_multi_setopt(s->multi, CURLMOPT_MAXCONNECTS,
			  (long)s->concurrency + 4);
	lb_error_init(&s->first);
	*out = &s->base;
	return 0;
nomem:
	if (s != NULL)
		s3_free(&s->base);
	return lb_error_set(err, LB_ENOMEM, "out of memory");
}
