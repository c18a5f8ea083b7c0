/*
 * client.c - the HubSpot HTTP client and its one retry and rate-limit
 * policy; see client.h.
 *
 * Why a client-side window: HubSpot's burst limit is a rolling window
 * (TEN_SECONDLY_ROLLING: 100 or 190 requests per 10 s by tier, shared by
 * every app of the portal). Meeting 429s and backing off wastes calls and
 * time; counting our own sends against the limit the headers announce
 * keeps a sync just under it, and the 429 path remains for the requests
 * other apps of the portal make in the same window.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "linkbot/buf.h"
#include "linkbot/log.h"
#include "linkbot/retry.h"
#include "client.h"

#define HS_BODY_MAX ((size_t)64 << 20)
#define HS_WINDOW_SLOTS 1024		/* send times remembered */
#define HS_RETRY_SERVER 6		/* attempts for 5xx and network errors */
#define HS_RETRY_429 30			/* attempts for burst 429s */

/* SPEC 5: what the integration's key needs. */
static const char hs_scopes[] =
	"crm.schemas.custom.read, crm.schemas.custom.write, "
	"crm.objects.custom.read, crm.objects.custom.write, content";

struct hs_client {
	CURL *curl;
	char *base;
	struct curl_slist *headers;	/* Authorization: Bearer ... */
	const char *token_env;
	struct hubspot_stats *stats;
	/* rate limit: the headers' figures and our own send times */
	long max;			/* requests per window */
	long window_ms;
	long remaining;			/* -1: unknown */
	long retry_after_ms;		/* Retry-After of the last answer */
	double sent[HS_WINDOW_SLOTS];	/* ring of send times (ms) */
	size_t n_sent, head;
	struct lb_retry_policy retry;	/* hs_retry_policy() */
};

/*
 * HubSpot's retries (linkbot/retry.h): transport errors and 5xx
 * HS_RETRY_SERVER - 1 times after LINKBOT_HUBSPOT_BACKOFF_MS (500 ms)
 * doubling; burst 429s HS_RETRY_429 - 1 times, each after a wait learnt
 * from the portal's announced window (hs_call(): HubSpot's contract, not
 * a backoff), or its Retry-After when longer.
 */
static void hs_retry_policy(struct lb_retry_policy *p, long backoff_ms)
{
	memset(p, 0, sizeof(*p));
	p->retries[LB_RETRY_TRANSPORT] = HS_RETRY_SERVER - 1;
	p->retries[LB_RETRY_TIMEOUT] = HS_RETRY_SERVER - 1;
	p->retries[LB_RETRY_UNAVAILABLE] = HS_RETRY_SERVER - 1;
	p->retries[LB_RETRY_SERVER] = HS_RETRY_SERVER - 1;
	p->retries[LB_RETRY_THROTTLED] = HS_RETRY_429 - 1;
	p->first_ms = backoff_ms;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(double ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1000.0);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
	while (nanosleep(&ts, &ts) != 0)
		;
}

static long env_long(const char *name, long def, long min, long max)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return def;
	v = strtol(s, &end, 10);
	return *end != '\0' || v < min || v > max ? def : v;
}

int hs_client_new(const char *base_url, const char *token,
		  const char *token_env, struct hubspot_stats *stats,
		  struct hs_client **out, struct lb_error *err)
{
	struct hs_client *c;
	struct lb_buf auth;
	size_t n;

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	c->token_env = token_env;
	c->stats = stats;
	c->max = 100;
	c->window_ms = 10000;
	c->remaining = -1;
	hs_retry_policy(&c->retry,
			env_long("LINKBOT_HUBSPOT_BACKOFF_MS", 500, 1, 60000));
	n = strlen(base_url);
	while (n > 0 && base_url[n - 1] == '/')
		n--;
	c->base = strndup(base_url, n);
	lb_buf_init(&auth, 16384);
	if (c->base == NULL ||
	    lb_buf_printf(&auth, err, "Authorization: Bearer %s", token) < 0 ||
	    curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (c->curl = curl_easy_init()) == NULL)
		goto nomem;
	c->headers = curl_slist_append(NULL, auth.data);
	/* the token's copy in the buffer is wiped before it is freed */
	memset(auth.data, 0, auth.len);
	lb_buf_release(&auth);
	if (c->headers == NULL ||
	    !curl_slist_append(c->headers, "Content-Type: application/json") ||
	    !curl_slist_append(c->headers, "Accept: application/json") ||
	    !curl_slist_append(c->headers, "User-Agent: LinkBot/1.0"))
		goto nomem;
	*out = c;
	return 0;
nomem:
	if (auth.data != NULL)
		memset(auth.data, 0, auth.len);
	lb_buf_release(&auth);
	hs_client_free(c);
	return lb_error_set(err, LB_ENOMEM, "out of memory");
}

void hs_client_free(struct hs_client *c)
{
	struct curl_slist *h;

	if (c == NULL)
		return;
	for (h = c->headers; h != NULL; h = h->next)
		memset(h->data, 0, strlen(h->data));
	curl_slist_free_all(c->headers);
	if (c->curl != NULL)
		curl_easy_cleanup(c->curl);
	free(c->base);
	free(c);
}

void hs_response_release(struct hs_response *r)
{
	cJSON_Delete(r->json);
	r->json = NULL;
	r->status = 0;
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct lb_buf *b = arg;
	struct lb_error e;

	lb_error_init(&e);
	return lb_buf_add(b, p, size * n, &e) < 0 ? 0 : size * n;
}

/* "Name: value" -> value as a number when name matches, else -1. */
static long header_value(const char *line, size_t len, const char *name)
{
	size_t n = strlen(name);
	char tmp[32];
	size_t k;

	if (len <= n + 1 || strncasecmp(line, name, n) != 0 || line[n] != ':')
		return -1;
	line += n + 1;
	len -= n + 1;
	while (len > 0 && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	for (k = 0; k < len && k < sizeof(tmp) - 1 && line[k] >= '0' &&
		    line[k] <= '9'; k++)
		tmp[k] = line[k];
	tmp[k] = '\0';
	return k == 0 ? -1 : strtol(tmp, NULL, 10);
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	struct hs_client *c = arg;
	size_t len = size * n;
	long v;

	if ((v = header_value(p, len, "X-HubSpot-RateLimit-Max")) > 0)
		c->max = v;
	else if ((v = header_value(p, len,
				   "X-HubSpot-RateLimit-Interval-Milliseconds")) > 0)
		c->window_ms = v;
	else if ((v = header_value(p, len, "X-HubSpot-RateLimit-Remaining")) >= 0)
		c->remaining = v;
	else if ((v = header_value(p, len, "Retry-After")) >= 0)
		c->retry_after_ms = v * 1000;
	return len;
}

/*
 * Waits until one more request fits in the window: fewer than max sends
 * in the last window_ms (a small margin kept for the other apps of the
 * portal), and none while the server says the window is spent.
 */
static void throttle(struct hs_client *c)
{
	long limit = c->max - (c->max >= 20 ? c->max / 20 : 1);
	double t = now_ms();
	size_t i, in_window = 0, oldest = 0;
	int found = 0;

	if (limit < 1)
		limit = 1;
	for (i = 0; i < c->n_sent; i++) {
		size_t k = (c->head + HS_WINDOW_SLOTS - 1 - i) % HS_WINDOW_SLOTS;
		if (t - c->sent[k] >= (double)c->window_ms)
			break;
		in_window++;
		oldest = k;
		found = 1;
	}
	if (found && ((long)in_window >= limit || c->remaining == 0)) {
		/* wait until enough of the window's sends have aged out */
		size_t drop = (long)in_window >= limit ?
			      in_window - (size_t)limit + 1 : in_window;
		size_t k = (oldest + drop - 1) % HS_WINDOW_SLOTS;
		sleep_ms(c->sent[k] + (double)c->window_ms - t + 1.0);
		c->remaining = -1;
	} else if (c->remaining == 0) {
		sleep_ms((double)c->window_ms);
		c->remaining = -1;
	}
	c->sent[c->head] = now_ms();
	c->head = (c->head + 1) % HS_WINDOW_SLOTS;
	if (c->n_sent < HS_WINDOW_SLOTS)
		c->n_sent++;
}

static const char *json_str(const cJSON *o, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

int hs_error(struct lb_error *err, const char *method, const char *path,
	     const struct hs_response *r)
{
	const char *msg = json_str(r->json, "message");
	const char *cat = json_str(r->json, "category");
	const char *cid = json_str(r->json, "correlationId");
	char where[160];
	const char *q;

	/* the path without its query: short, and no cursor noise */
	q = strchr(path, '?');
	snprintf(where, sizeof(where), "%.*s",
		 (int)(q ? (size_t)(q - path) : strlen(path)), path);
	return lb_error_set(err, LB_EHTTP,
			    "HubSpot answered %ld to %s %s: %s (%s%scorrelationId %s)",
			    r->status, method, where,
			    msg ? msg : "no message", cat ? cat : "",
			    cat ? ", " : "", cid ? cid : "none");
}

/* The scopes a 403 names, from errors[].context.requiredGranularScopes. */
static void missing_scopes(const cJSON *j, struct lb_buf *out)
{
	const cJSON *e, *s;
	struct lb_error ignore;

	lb_error_init(&ignore);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "errors")) {
		const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(e, "context");
		const char *keys[] = { "requiredGranularScopes", "requiredScopes" };
		size_t k;
		for (k = 0; k < 2; k++)
			cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(
						  ctx, keys[k])) {
				if (!cJSON_IsString(s))
					continue;
				if (out->len > 0)
					lb_buf_adds(out, ", ", &ignore);
				lb_buf_adds(out, s->valuestring, &ignore);
			}
	}
}

/* 429: which policy? "DAILY", "TEN_SECONDLY_ROLLING", "SECONDLY", ... */
static const char *policy_of(const cJSON *j)
{
	const char *p = json_str(j, "policyName");

	return p ? p : "";
}

int hs_call(struct hs_client *c, const char *method, const char *path,
	    const char *body, struct hs_response *r, struct lb_error *err)
{
	struct lb_buf resp, url;
	int server_tries = 0, burst_tries = 0, rc = -1;
	long wait_429 = 0;

	r->status = 0;
	r->json = NULL;
	lb_buf_init(&resp, HS_BODY_MAX);
	lb_buf_init(&url, 65536);
	if (lb_buf_printf(&url, err, "%s%s", c->base, path) < 0)
		goto out;
	for (;;) {
		CURLcode cc;
		enum lb_retry_class k;
		char ebuf[CURL_ERROR_SIZE] = "";

		lb_buf_reset(&resp);
		throttle(c);
		c->retry_after_ms = -1;
		curl_easy_reset(c->curl);
		curl_easy_setopt(c->curl, CURLOPT_URL, url.data);
		curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
		curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, method);
		if (body != NULL) {
			curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
			curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE,
					 (long)strlen(body));
		}
		curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &resp);
		curl_easy_setopt(c->curl, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(c->curl, CURLOPT_HEADERDATA, c);
		curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, ebuf);
		curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, 10L);
		curl_easy_setopt(c->curl, CURLOPT_TIMEOUT,
				 env_long("LINKBOT_HUBSPOT_TIMEOUT", 60, 1, 3600));
		curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
		c->stats->calls++;
		if (strcmp(method, "GET") != 0)
			c->stats->writes++;
		cc = curl_easy_perform(c->curl);
		cJSON_Delete(r->json);
		r->json = NULL;
		if (cc != CURLE_OK) {
			k = lb_retry_classify(cc, 0);
			if (!lb_retry_allowed(&c->retry, k, server_tries)) {
				lb_error_set(err, LB_ENETWORK,
					     "cannot reach HubSpot for %s %.*s: %s",
					     method, (int)strcspn(path, "?"), path,
					     ebuf[0] ? ebuf : curl_easy_strerror(cc));
				goto out;
			}
			log_warnx("%s %.*s: %s; retrying", method,
				  (int)strcspn(path, "?"), path,
				  ebuf[0] ? ebuf : curl_easy_strerror(cc));
			c->stats->retries++;
			sleep_ms((double)lb_retry_wait_ms(&c->retry, k,
							  server_tries++, -1, 0));
			continue;
		}
		curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &r->status);
		r->json = resp.len ? cJSON_ParseWithLength(resp.data, resp.len)
				   : NULL;
		if (r->status == 429) {
			const char *pol = policy_of(r->json);
			if (strcmp(pol, "DAILY") == 0) {
				c->stats->daily_limit = 1;
				hs_error(err, method, path, r);
				log_warnx("HubSpot's DAILY limit is spent (%s): the "
					  "sync stops here and resumes on the next "
					  "run", json_str(r->json, "correlationId") ?
					  json_str(r->json, "correlationId") : "");
				goto out;
			}
			if (!lb_retry_allowed(&c->retry, LB_RETRY_THROTTLED,
					      burst_tries++)) {
				hs_error(err, method, path, r);
				goto out;
			}
			/* wait a tenth of the window, doubling, at most the
			 * window; SECONDLY (search): a second */
			wait_429 = wait_429 ? wait_429 * 2 : c->window_ms / 10;
			if (wait_429 > c->window_ms)
				wait_429 = c->window_ms;
			if (strcmp(pol, "SECONDLY") == 0 && wait_429 < 1000)
				wait_429 = 1000;
			if (c->retry_after_ms > wait_429)
				wait_429 = c->retry_after_ms;
			log_debug("429 %s on %s %.*s (correlationId %s): waiting "
				  "%ld ms", pol[0] ? pol : "(no policy)", method,
				  (int)strcspn(path, "?"), path,
				  json_str(r->json, "correlationId") ?
				  json_str(r->json, "correlationId") : "none",
				  wait_429);
			c->stats->retries++;
			c->remaining = -1;
			sleep_ms((double)wait_429);
			continue;
		}
		k = lb_retry_classify(0, r->status);
		if (k == LB_RETRY_UNAVAILABLE || k == LB_RETRY_SERVER) {
			if (!lb_retry_allowed(&c->retry, k, server_tries)) {
				hs_error(err, method, path, r);
				goto out;
			}
			log_warnx("HubSpot answered %ld to %s %.*s (correlationId "
				  "%s); retrying", r->status, method,
				  (int)strcspn(path, "?"), path,
				  json_str(r->json, "correlationId") ?
				  json_str(r->json, "correlationId") : "none");
			c->stats->retries++;
			sleep_ms((double)lb_retry_wait_ms(&c->retry, k,
							  server_tries++, -1, 0));
			continue;
		}
		if (r->status == 401) {
			c->stats->auth_failed = 1;
			lb_error_set(err, LB_EHTTP,
				     "HubSpot refused the token in $%s (401 %s, "
				     "correlationId %s): check that it is the "
				     "private app's or service key's access "
				     "token and that it was not rotated",
				     c->token_env,
				     json_str(r->json, "category") ?
				     json_str(r->json, "category") : "",
				     json_str(r->json, "correlationId") ?
				     json_str(r->json, "correlationId") : "none");
			goto out;
		}
		if (r->status == 403) {
			struct lb_buf sc;
			const char *cat = json_str(r->json, "category");
			lb_buf_init(&sc, 4096);
			missing_scopes(r->json, &sc);
			c->stats->auth_failed = 1;
			lb_error_set(err, LB_EHTTP,
				     "HubSpot refused %s %.*s (403 %s, "
				     "correlationId %s): the token in $%s lacks "
				     "the scope%s %s; the integration needs %s",
				     method, (int)strcspn(path, "?"), path,
				     cat ? cat : "",
				     json_str(r->json, "correlationId") ?
				     json_str(r->json, "correlationId") : "none",
				     c->token_env, sc.len ? "(s)" : "s",
				     sc.len ? sc.data : "it needs", hs_scopes);
			lb_buf_release(&sc);
			goto out;
		}
		rc = 0;
		break;
	}
out:
	if (rc < 0) {
		cJSON_Delete(r->json);
		r->json = NULL;
	}
	lb_buf_release(&resp);
	lb_buf_release(&url);
	return rc;
}
