/*
 * answer.c - the edge's answer rules (include/linkbot/answer.h).
 *
 * Follows docs/edge.md "Decisions, in order" step by step, and
 * src/edge/core.js line by line where the two meet: the shared vectors
 * (tests/data/edge/vectors.json) hold them together. No I/O here, and
 * nothing that can crash on hostile bytes: every length is bounded before
 * it is used, every allocation checked (a failed one answers 500).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "linkbot/answer.h"
#include "linkbot/layout.h"
#include "linkbot/sha256.h"
#include "linkbot/url.h"

#define DAY "public, max-age=86400"
/* Project answers need a key: no shared cache may give them to others. */
#define PRIVATE_DAY "private, max-age=86400"
#define JSON_TYPE "application/json"

static const char MSG_NO_ENDPOINT[] = "no such endpoint";
static const char MSG_NO_PROJECT[] = "no such project";
static const char MSG_FAILURE[] =
	"internal error: the store could not be read";

/* ---- answers ---- */

static void add_header(struct lb_edge_answer *a, const char *name,
		       const char *value)
{
	size_t i;

	for (i = 0; i < a->n_headers; i++)
		if (strcasecmp(a->headers[i].name, name) == 0) {
			a->headers[i].value = value;
			return;
		}
	if (a->n_headers < LB_EDGE_MAX_HEADERS) {
		a->headers[a->n_headers].name = name;
		a->headers[a->n_headers].value = value;
		a->n_headers++;
	}
}

/* a's body, if any, was released or handed over before */
static void answer_reset(struct lb_edge_answer *a, int status)
{
	memset(a, 0, sizeof(*a));
	a->status = status;
	add_header(a, "Access-Control-Allow-Origin", "*");
}

const char *edge_answer_header(const struct lb_edge_answer *a,
			       const char *name)
{
	size_t i;

	for (i = 0; i < a->n_headers; i++)
		if (strcasecmp(a->headers[i].name, name) == 0)
			return a->headers[i].value;
	return NULL;
}

void edge_answer_release(struct lb_edge_answer *a)
{
	if (a == NULL)
		return;
	free(a->body);
	a->body = NULL;
	a->body_len = 0;
}

/* Appends s as a JSON string literal (messages are ours, but be safe). */
static size_t json_quote(char *out, size_t cap, const char *s)
{
	size_t n = 0;

	if (n < cap)
		out[n] = '"';
	n++;
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[8];
		size_t k, len;

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			len = 2;
		} else if (c < 0x20) {
			len = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", c);
		} else {
			esc[0] = (char)c;
			len = 1;
		}
		for (k = 0; k < len; k++, n++)
			if (n < cap)
				out[n] = esc[k];
	}
	if (n < cap)
		out[n] = '"';
	return n + 1;
}

/* A JSON body; on failure to allocate, the body is left out. */
static void set_json(struct lb_edge_answer *a, char *body)
{
	free(a->body);
	a->body = body;
	a->body_len = body ? strlen(body) : 0;
	a->kind = LB_BODY_JSON;
	add_header(a, "Content-Type", JSON_TYPE);
	add_header(a, "Cache-Control", a->status == 200 ? DAY : "no-store");
}

void edge_error(struct lb_edge_answer *a, int status, const char *message)
{
	size_t need = strlen(message) * 6 + 64, n;
	char *b = malloc(need);

	answer_reset(a, status);
	if (b != NULL) {
		memcpy(b, "{\"message\":", 11);
		n = 11 + json_quote(b + 11, need - 11, message);
		snprintf(b + n, need - n, ",\"status\":%d}", status);
	}
	set_json(a, b);
}

void edge_failure(struct lb_edge_answer *a)
{
	edge_error(a, 500, MSG_FAILURE);
}

static void method_not_allowed(struct lb_edge_answer *a)
{
	edge_error(a, 405, "method not allowed: use GET");
	add_header(a, "Allow", "GET, HEAD, OPTIONS");
}

static void unauthorized(struct lb_edge_answer *a, const char *message)
{
	edge_error(a, 401, message);
	add_header(a, "WWW-Authenticate", "Bearer realm=\"linkbot\"");
}

/* 204: the endpoint exists, its data is not computed yet. */
static void pending(struct lb_edge_answer *a)
{
	answer_reset(a, 204);
	add_header(a, "Cache-Control", "no-store");
}

static void preflight(struct lb_edge_answer *a)
{
	answer_reset(a, 204);
	add_header(a, "Access-Control-Allow-Methods", "GET, HEAD, OPTIONS");
	/* '*' covers any other header; Authorization must be named */
	add_header(a, "Access-Control-Allow-Headers", "Authorization, *");
	add_header(a, "Access-Control-Max-Age", "86400");
	add_header(a, "Cache-Control", DAY);
}

void edge_page_answer(enum lb_edge_variant variant, struct lb_edge_answer *a)
{
	answer_reset(a, 200);
	a->kind = LB_BODY_PAGE;
	add_header(a, "Content-Type", JSON_TYPE);
	add_header(a, "Content-Encoding", "gzip");
	add_header(a, "Cache-Control",
		   variant == LB_EDGE_PROJECT ? PRIVATE_DAY : DAY);
	add_header(a, "Vary", "Accept-Encoding");
}

/* ---- bytes ---- */

/*
 * Percent-decodes every valid escape of s[0..n) into a new buffer (NUL
 * added; the result may hold NULs before it): query-string decoding when
 * plus is set ('+' is a space). pageid.js's pctDecode().
 */
static char *pct_decode(const char *s, size_t n, int plus, size_t *out_len)
{
	char *out = malloc(n + 1);
	size_t i, o = 0;
	int h, l;

	if (out == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n &&
		    (h = lb_url_hexval((unsigned char)s[i + 1])) >= 0 &&
		    (l = lb_url_hexval((unsigned char)s[i + 2])) >= 0) {
			out[o++] = (char)(h * 16 + l);
			i += 2;
		} else if (s[i] == '+' && plus) {
			out[o++] = ' ';
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

/* Is s[0..n), decoded as a query name, exactly "url"? */
static int name_is_url(const char *s, size_t n)
{
	size_t dl;
	char *d;
	int yes;

	if (n == 3 && memcmp(s, "url", 3) == 0)
		return 1;
	if (memchr(s, '%', n) == NULL && memchr(s, '+', n) == NULL)
		return 0;
	if ((d = pct_decode(s, n, 1, &dl)) == NULL)
		return 0;
	yes = dl == 3 && memcmp(d, "url", 3) == 0;
	free(d);
	return yes;
}

/*
 * The raw query's `url` parameter, decoded once the way query strings are.
 * SPEC 4.3 asks for the query inside the value to be percent-encoded; when
 * it is not (a literal '?' in the raw value), the parameters that follow
 * belong to that query: `?url=/item?utm=1&id=42` is `/item?utm=1&id=42`.
 */
char *edge_url_param(const char *query, size_t len, size_t *out_len)
{
	const char *p = query, *end = query + len;

	while (p <= end) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *pe = amp ? amp : end;
		const char *eq = memchr(p, '=', (size_t)(pe - p));
		const char *ne = eq ? eq : pe;

		if (name_is_url(p, (size_t)(ne - p))) {
			const char *v, *ve = pe;
			if (eq == NULL) {
				*out_len = 0;
				return strdup("");
			}
			v = eq + 1;
			/* a literal '?': the rest of the query is its query */
			if (memchr(v, '?', (size_t)(pe - v)) != NULL &&
			    amp != NULL)
				ve = end;
			return pct_decode(v, (size_t)(ve - v), 1, out_len);
		}
		if (amp == NULL)
			break;
		p = amp + 1;
	}
	return NULL;
}

/* ---- step 1: the route ---- */

/* [a-z0-9][a-z0-9_-]{0,63} */
static int segment_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > LB_EDGE_SEGMENT_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      (i > 0 && (c == '_' || c == '-'))))
			return 0;
	}
	return 1;
}

/* [A-Za-z0-9_-]{1,64} */
static int uuid_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > LB_EDGE_SEGMENT_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

/* A NUL or a bad escape in the path: nginx refuses it (400); so do we. */
static int bad_path(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i] == '\0')
			return 1;
		if (p[i] == '%') {
			if (i + 2 >= n || lb_url_hexval((unsigned char)p[i + 1]) < 0 ||
			    lb_url_hexval((unsigned char)p[i + 2]) < 0)
				return 1;
			if (p[i + 1] == '0' && p[i + 2] == '0')
				return 1;
		}
	}
	return 0;
}

static void split_target(const struct lb_edge_request *req,
			 size_t *path_len, const char **query,
			 size_t *query_len)
{
	const char *q = memchr(req->target, '?', req->target_len);

	*path_len = q ? (size_t)(q - req->target) : req->target_len;
	*query = q ? q + 1 : req->target + req->target_len;
	*query_len = q ? req->target_len - *path_len - 1 : 0;
}

static void set_seg(char *dst, const char *s, size_t n)
{
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* Matches the path's segments; 0 and rt filled, or -1. */
static int match_route(const char *p, size_t n, struct lb_edge_route *rt)
{
	const char *seg[6];
	size_t len[6], count = 0, i = 0;

	if (n > LB_EDGE_MAX_PATH || n == 0 || p[0] != '/')
		return -1;
	/* the segments after the leading '/' */
	i = 1;
	while (count < 6) {
		const char *s = p + i;
		const char *e = memchr(s, '/', n - i);
		size_t l = e ? (size_t)(e - s) : n - i;
		seg[count] = s;
		len[count] = l;
		count++;
		if (e == NULL)
			break;
		i += l + 1;
	}
	if (count > 5 || (count == 5 && memchr(seg[4], '/', len[4])))
		return -1;
#define IS(k, lit) (len[k] == sizeof(lit) - 1 && memcmp(seg[k], lit, len[k]) == 0)
	rt->client[0] = '\0';
	if (count == 3 && IS(2, "related-links") &&
	    segment_ok(seg[0], len[0]) && segment_ok(seg[1], len[1])) {
		rt->variant = LB_EDGE_STANDARD;
		set_seg(rt->client, seg[0], len[0]);
		set_seg(rt->endpoint, seg[1], len[1]);
	} else if (count == 4 && IS(0, "il") && IS(3, "related-links") &&
		   segment_ok(seg[1], len[1]) && segment_ok(seg[2], len[2])) {
		rt->variant = LB_EDGE_ENTERPRISE;
		set_seg(rt->client, seg[1], len[1]);
		set_seg(rt->endpoint, seg[2], len[2]);
	} else if (count == 4 && IS(0, "api") && IS(1, "il") &&
		   IS(2, "related-links") && uuid_ok(seg[3], len[3])) {
		rt->variant = LB_EDGE_PROJECT;
		set_seg(rt->endpoint, seg[3], len[3]);
	} else {
		return -1;
	}
#undef IS
	/* (memcpy, not snprintf: this runs on every request) */
	{
		char *b = rt->base;
		size_t cl = strlen(rt->client), el = strlen(rt->endpoint);
		const char *dk = rt->variant == LB_EDGE_PROJECT ?
					 LAYOUT_PROJECT : LAYOUT_DESCRIPTOR;
		if (rt->variant == LB_EDGE_PROJECT) {
			memcpy(b, LAYOUT_PROJECTS, sizeof(LAYOUT_PROJECTS) - 1);
			b += sizeof(LAYOUT_PROJECTS) - 1;
		} else {
			memcpy(b, rt->client, cl);
			b += cl;
			*b++ = '/';
		}
		memcpy(b, rt->endpoint, el);
		b += el;
		*b++ = '/';
		*b = '\0';
		memcpy(rt->desc_key, rt->base, (size_t)(b - rt->base));
		memcpy(rt->desc_key + (b - rt->base), dk, strlen(dk) + 1);
	}
	return 0;
}

int edge_route(const struct lb_edge_request *req, struct lb_edge_route *rt,
	       struct lb_edge_answer *a)
{
	size_t path_len, query_len;
	const char *query;

	split_target(req, &path_len, &query, &query_len);
	(void)query;
	if (bad_path(req->target, path_len)) {
		edge_error(a, 400, "bad request");
		return 1;
	}
	if (match_route(req->target, path_len, rt) < 0) {
		edge_error(a, 404, MSG_NO_ENDPOINT);
		return 1;
	}
	if (strcmp(req->method, "OPTIONS") == 0) {
		preflight(a);
		return 1;
	}
	if (strcmp(req->method, "GET") != 0 &&
	    strcmp(req->method, "HEAD") != 0) {
		method_not_allowed(a);
		return 1;
	}
	return 0;
}

void edge_refused(const struct lb_edge_request *req, struct lb_edge_answer *a)
{
	struct lb_edge_route rt;

	if (edge_route(req, &rt, a) == 1 && a->status != 204)
		return;
	edge_error(a, 413, "the edge takes no request body");
}

/* ---- step 2: the descriptor ---- */

void edge_decision_release(struct lb_edge_decision *d)
{
	size_t i;

	if (d == NULL)
		return;
	edge_answer_release(&d->answer);
	free(d->key);
	free(d->side);
	for (i = 0; i < d->n_names; i++)
		free(d->names[i]);
	free(d->names);
	d->key = d->side = NULL;
	d->names = NULL;
	d->n_names = 0;
}

static int is_object(const cJSON *v)
{
	return v != NULL && cJSON_IsObject(v);
}

static int str_is(const cJSON *v, const char *s)
{
	return cJSON_IsString(v) && strcmp(v->valuestring, s) == 0;
}

/*
 * Constant time: every byte of both is looked at whatever differs (the
 * lengths are public: a SHA-256 hex is 64 bytes). Lower-cases b.
 */
static int same_hex(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = la < lb ? la : lb, i;
	unsigned diff = (unsigned)(la ^ lb);

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)b[i];
		c = (unsigned char)(c | ((c >= 'A' && c <= 'Z') ? 0x20 : 0));
		diff |= (unsigned char)a[i] ^ c;
	}
	return diff == 0;
}

/* "Bearer <token>": the token (ptr, len), or -1. */
static int bearer(const char *h, size_t n, const char **tok, size_t *tl)
{
	size_t i = 6, s, e;

	if (h == NULL || n > LB_EDGE_MAX_TOKEN + 16 || n < 8 ||
	    strncasecmp(h, "bearer", 6) != 0 || h[6] != ' ')
		return -1;
	while (i < n && h[i] == ' ')
		i++;
	s = i;
	while (i < n && (unsigned char)h[i] >= 0x21 &&
	       (unsigned char)h[i] <= 0x7e)
		i++;
	e = i;
	while (i < n && h[i] == ' ')
		i++;
	if (i != n || e == s)
		return -1;
	*tok = h + s;
	*tl = e - s;
	return 0;
}

/* The query rule of a descriptor: its query_params strings. */
static int take_rule(struct lb_edge_decision *d, const cJSON *desc)
{
	const cJSON *qp = cJSON_GetObjectItemCaseSensitive(desc,
							   "query_params");
	const cJSON *it;
	size_t n = 0;

	if (!cJSON_IsArray(qp))
		return 0;
	d->names = calloc((size_t)cJSON_GetArraySize(qp) + 1,
			  sizeof(*d->names));
	if (d->names == NULL)
		return -1;
	cJSON_ArrayForEach(it, qp) {
		if (!cJSON_IsString(it))
			continue;
		if (strcmp(it->valuestring, "*") == 0)
			d->keep_all = 1;
		if ((d->names[n] = strdup(it->valuestring)) == NULL)
			return -1;
		d->n_names = ++n;
	}
	return 0;
}

static void rule_of(const struct lb_edge_decision *d, struct lb_qrule *r)
{
	r->keep_all = d->keep_all;
	r->names = (const char *const *)d->names;
	r->n_names = d->n_names;
}

static int is_white(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f';
}

static int starts_ci(const char *s, size_t n, const char *p)
{
	size_t l = strlen(p);
	return n >= l && strncasecmp(s, p, l) == 0;
}

/*
 * The URL to side-crawl: the url value as the client gave it, decoded once
 * more if doubly encoded (pageid's step 2), without its fragment, with
 * white space and non-ASCII bytes percent-encoded. A host/path form is
 * returned with "https://" (or "https:" before "//") in front, for the
 * host check, and *added says how long that is: the log writes the form
 * as given, and the crawler takes the scheme of the client's source on
 * that host (an http site stays http). core.js's sideUrl().
 */
static char *side_url(const char *raw, size_t n, size_t *added)
{
	const char *s = raw;
	char *dec = NULL, *out = NULL, *h;
	size_t i, o = 0, dl;
	int host, has_slash = memchr(raw, '/', n) != NULL;

	while (n > 0 && is_white(*s))
		s++, n--;
	while (n > 0 && is_white(s[n - 1]))
		n--;
	if (starts_ci(s, n, "http%3a") || starts_ci(s, n, "https%3a") ||
	    starts_ci(s, n, "%2f")) {
		dec = pct_decode(s, n, 0, &dl);
	} else if (!has_slash) {
		for (i = 0; i + 3 <= n; i++)
			if (s[i] == '%' && s[i + 1] == '2' &&
			    (s[i + 2] == 'f' || s[i + 2] == 'F')) {
				dec = pct_decode(s, n, 0, &dl);
				break;
			}
	}
	if (dec != NULL) {
		s = dec;
		n = dl;
	}
	if ((h = memchr(s, '#', n)) != NULL)
		n = (size_t)(h - s);
	/* the host: what the page ID's normalisation calls the authority */
	{
		const char *p = s;
		size_t m = n;
		if (starts_ci(p, m, "http://"))
			p += 7, m -= 7;
		else if (starts_ci(p, m, "https://"))
			p += 8, m -= 8;
		else if (m >= 2 && p[0] == '/' && p[1] == '/')
			p += 2, m -= 2;
		host = m > 0 && p[0] != '/' && p[0] != '?';
	}
	out = malloc(n * 3 + 16);
	if (out == NULL)
		goto done;
	if (host && !starts_ci(s, n, "http://") && !starts_ci(s, n, "https://"))
		o += (size_t)sprintf(out, "%s",
				     n >= 2 && s[0] == '/' && s[1] == '/' ?
					     "https:" : "https://");
	*added = o;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x21 || c > 0x7e) {
			out[o++] = '%';
			out[o++] = "0123456789ABCDEF"[c >> 4];
			out[o++] = "0123456789ABCDEF"[c & 15];
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
done:
	free(dec);
	return out;
}

/* A host without port, lower case and without a leading "www.". */
static size_t bare_host(const char *h, size_t n, char *out, size_t size)
{
	size_t i, o = 0;

	if (n > 0 && h[0] == '[') {
		const char *e = memchr(h, ']', n);
		n = e ? (size_t)(e - h) + 1 : n;
	} else {
		const char *e = memchr(h, ':', n);
		if (e != NULL)
			n = (size_t)(e - h);
	}
	if (n >= 4 && strncasecmp(h, "www.", 4) == 0)
		h += 4, n -= 4;
	for (i = 0; i < n && o + 1 < size; i++)
		out[o++] = (char)tolower((unsigned char)h[i]);
	out[o] = '\0';
	return o;
}

/*
 * Whether a page asked for by an anonymous request may go to the
 * side-crawl log: a path, or a URL on a host of the client's sources (the
 * descriptor's "hosts"; www.host counts as host, as in the crawler).
 * Anyone can ask for ?url=//evil.example/x: it is answered, never logged.
 * A descriptor written before "hosts" existed logs as before. core.js's
 * sideAllowed().
 */
static int side_allowed(const char *side, const cJSON *ep)
{
	const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(ep, "hosts"), *h;
	const char *a;
	char want[256], have[256];
	size_t n;

	if (!cJSON_IsArray(hosts))
		return 1;
	if (strncasecmp(side, "http://", 7) == 0)
		a = side + 7;
	else if (strncasecmp(side, "https://", 8) == 0)
		a = side + 8;
	else
		return 1;	/* a path: on the client's own site */
	n = strcspn(a, "/?#");
	if (n == 0 || n >= sizeof(want))
		return n == 0;
	bare_host(a, n, want, sizeof(want));
	cJSON_ArrayForEach(h, hosts)
		if (cJSON_IsString(h) &&
		    bare_host(h->valuestring, strlen(h->valuestring), have,
			      sizeof(have)) > 0 &&
		    strcmp(have, want) == 0)
			return 1;
	return 0;
}

/*
 * Step 5: the url parameter, normalised with the descriptor's rule.
 * Returns 0 with d->key set, or 1 with a 400 answer in d->answer; raw
 * gets the decoded value (owned).
 */
static int url_key(const struct lb_edge_request *req,
		   struct lb_edge_decision *d, char **raw, size_t *raw_len)
{
	size_t path_len, query_len;
	const char *query;
	struct lb_qrule rule;
	struct lb_error err;
	char msg[sizeof(err.msg) + 32];

	split_target(req, &path_len, &query, &query_len);
	*raw = NULL;
	if (query_len > LB_EDGE_MAX_QUERY) {
		edge_error(&d->answer, 400, "the query string is too long");
		return 1;
	}
	*raw = edge_url_param(query, query_len, raw_len);
	if (*raw == NULL) {
		edge_error(&d->answer, 400,
			   "the url query parameter is required");
		return 1;
	}
	if (memchr(*raw, '\0', *raw_len) != NULL) {
		edge_error(&d->answer, 400, "invalid url: the URL contains a "
					    "control character or a backslash");
		return 1;
	}
	rule_of(d, &rule);
	lb_error_init(&err);
	if (pageid_normalize(*raw, &rule, &d->key, &err) < 0) {
		if (err.code == LB_ENOMEM) {
			edge_failure(&d->answer);
			return 1;
		}
		snprintf(msg, sizeof(msg), "invalid url: %s", err.msg);
		edge_error(&d->answer, 400, msg);
		return 1;
	}
	return 0;
}

static int decide_project(const struct lb_edge_request *req,
			  const struct lb_edge_route *rt,
			  enum lb_edge_object state, const cJSON *proj,
			  struct lb_edge_decision *d)
{
	const char *tok;
	size_t tl, raw_len = 0;
	const cJSON *hashes, *it;
	char mine[65], *raw = NULL;
	int ok = 0, rc = 1;

	if (bearer(req->authorization, req->authorization_len, &tok,
		   &tl) < 0) {
		unauthorized(&d->answer, "an Authorization: Bearer <API key> "
					 "header is required");
		return 1;
	}
	if (state == LB_OBJECT_MISSING) {
		edge_error(&d->answer, 404, MSG_NO_PROJECT);
		return 1;
	}
	if (state != LB_OBJECT_OK || !is_object(proj)) {
		edge_failure(&d->answer);
		return 1;
	}
	if (str_is(cJSON_GetObjectItemCaseSensitive(proj, "state"),
		   "disabled")) {
		edge_error(&d->answer, 404, MSG_NO_PROJECT);
		return 1;
	}
	lb_sha256_hex(tok, tl, mine, LB_SHA256_HEX_LEN);
	hashes = cJSON_GetObjectItemCaseSensitive(proj, "key_sha256");
	/* every stored hash is compared in full, whatever matches */
	if (cJSON_IsArray(hashes))
		cJSON_ArrayForEach(it, hashes)
			if (cJSON_IsString(it))
				ok |= same_hex(mine, it->valuestring);
	if (!ok) {
		unauthorized(&d->answer, "the API key is not valid");
		return 1;
	}
	if (take_rule(d, proj) < 0) {
		edge_failure(&d->answer);
		return 1;
	}
	if (url_key(req, d, &raw, &raw_len) != 0)
		goto out;
	if (str_is(cJSON_GetObjectItemCaseSensitive(proj, "state"),
		   "pending")) {
		pending(&d->answer);
		goto out;
	}
	rc = 0;
out:
	if (rc == 0) {
		size_t added = 0;
		char *side = side_url(raw, raw_len, &added);
		size_t need = side ? strlen(side) + 96 : 0;
		if (side != NULL && (d->side = malloc(need)) != NULL)
			snprintf(d->side, need, "_projects %s %s",
				 rt->endpoint, side + added);
		free(side);
		if (d->side == NULL) {
			edge_failure(&d->answer);
			rc = 1;
		}
	}
	free(raw);
	return rc;
}

static int decide_endpoint(const struct lb_edge_request *req,
			   const struct lb_edge_route *rt,
			   enum lb_edge_object state, const cJSON *ep,
			   struct lb_edge_decision *d)
{
	const cJSON *v, *st, *links;
	const char *variant;
	char *raw = NULL;
	size_t raw_len = 0;
	int rc = 1;

	if (state == LB_OBJECT_MISSING) {
		edge_error(&d->answer, 404, MSG_NO_ENDPOINT);
		return 1;
	}
	if (state != LB_OBJECT_OK || !is_object(ep)) {
		edge_failure(&d->answer);
		return 1;
	}
	v = cJSON_GetObjectItemCaseSensitive(ep, "variant");
	variant = v == NULL ? "standard" :
		  cJSON_IsString(v) ? v->valuestring : "";
	st = cJSON_GetObjectItemCaseSensitive(ep, "state");
	if (strcmp(variant, rt->variant == LB_EDGE_ENTERPRISE ? "enterprise" :
							       "standard") != 0 ||
	    !(str_is(st, "active") || str_is(st, "pending"))) {
		edge_error(&d->answer, 404, MSG_NO_ENDPOINT);
		return 1;
	}
	if (take_rule(d, ep) < 0) {
		edge_failure(&d->answer);
		return 1;
	}
	if (url_key(req, d, &raw, &raw_len) != 0)
		goto out;
	if (str_is(st, "pending")) {
		pending(&d->answer);
		goto out;
	}
	links = cJSON_GetObjectItemCaseSensitive(ep, "links");
	d->links = 8;
	if (cJSON_IsNumber(links) && links->valuedouble >= 0)
		d->links = links->valuedouble > 1e6 ? 1000000 :
			   (int)links->valuedouble;
	d->needs_pool = d->links > 0 &&
		!str_is(cJSON_GetObjectItemCaseSensitive(ep, "not_indexed"),
			"empty");
	rc = 0;
out:
	if (rc == 0) {
		size_t added = 0;
		char *side = side_url(raw, raw_len, &added);
		size_t need = side ? strlen(side) + 160 : 0;
		int allowed = side != NULL && side_allowed(side, ep);
		if (allowed && (d->side = malloc(need)) != NULL)
			snprintf(d->side, need, "%s %s %s", rt->client,
				 rt->endpoint, side + added);
		free(side);
		if (d->side == NULL && (side == NULL || allowed)) {
			edge_failure(&d->answer);
			rc = 1;
		}
	}
	free(raw);
	return rc;
}

int edge_decide(const struct lb_edge_request *req,
		const struct lb_edge_route *rt, enum lb_edge_object state,
		const char *text, size_t len, struct lb_edge_decision *d)
{
	cJSON *desc = NULL;
	int rc;

	memset(d, 0, sizeof(*d));
	d->variant = rt->variant;
	if (state == LB_OBJECT_OK)
		desc = cJSON_ParseWithLength(text, len);
	if (rt->variant == LB_EDGE_PROJECT)
		rc = decide_project(req, rt, state, desc, d);
	else
		rc = decide_endpoint(req, rt, state, desc, d);
	cJSON_Delete(desc);
	if (rc != 0)
		return 1;
	edge_page_id(d->key, strlen(d->key), d->id);
	snprintf(d->page_key, sizeof(d->page_key), "%s" LAYOUT_PAGES "%s.json",
		 rt->base, d->id);
	snprintf(d->pool_key, sizeof(d->pool_key), "%s" LAYOUT_POOL, rt->base);
	d->is_page = 1;
	return 0;
}

int edge_fast_id(const struct lb_edge_request *req,
		 const struct lb_edge_route *rt, char id[LB_PAGEID_LEN + 1])
{
	static const struct lb_qrule all = { 1, NULL, 0 };
	size_t path_len, query_len, raw_len;
	const char *query;
	char *raw, *key = NULL;
	struct lb_error err;
	int rc = -1;

	if (rt->variant == LB_EDGE_PROJECT)
		return -1;
	split_target(req, &path_len, &query, &query_len);
	if (query_len > LB_EDGE_MAX_QUERY ||
	    (raw = edge_url_param(query, query_len, &raw_len)) == NULL)
		return -1;
	lb_error_init(&err);
	/* kept whole, a query shows in the key: then the rule matters */
	if (memchr(raw, '\0', raw_len) == NULL &&
	    pageid_normalize(raw, &all, &key, &err) == 0 &&
	    strchr(key, '?') == NULL) {
		edge_page_id(key, strlen(key), id);
		rc = 0;
	}
	free(key);
	free(raw);
	return rc;
}

/* The page ID of a key of len bytes: pageid_hash()'s value, unterminated key. */
void edge_page_id(const char *key, size_t len, char id[LB_PAGEID_LEN + 1])
{
	lb_sha256_hex(key, len, id, LB_PAGEID_LEN);
}

/* ---- step 3: pages not indexed ---- */

/* Fills a with a 200 JSON answer of body b (owned). */
static void json_200(struct lb_edge_answer *a, char *b, const char *cache)
{
	answer_reset(a, 200);
	if (b == NULL) {
		edge_failure(a);
		return;
	}
	set_json(a, b);
	add_header(a, "Cache-Control", cache);
}

/*
 * Draws up to n links uniformly without replacement from the pool (a
 * partial Fisher-Yates shuffle on a copy of the pointers), skipping the
 * requested page itself (compared by normalised key); each typed random.
 */
static cJSON *draw(const cJSON *pool, const struct lb_edge_decision *d,
		   uint64_t (*rand)(void *), void *arg)
{
	cJSON *out = cJSON_CreateArray(), **a = NULL;
	const cJSON *it;
	struct lb_qrule rule;
	size_t len = 0, i, j;
	int got = 0;

	if (out == NULL)
		return NULL;
	if (!cJSON_IsArray(pool))
		return out;
	len = (size_t)cJSON_GetArraySize(pool);
	if (len == 0)
		return out;
	if ((a = malloc(len * sizeof(*a))) == NULL)
		goto fail;
	i = 0;
	cJSON_ArrayForEach(it, pool)
		a[i++] = (cJSON *)it;
	rule_of(d, &rule);
	for (i = 0; i < len && got < d->links; i++) {
		cJSON *link, *u, *copy, *type;
		char *key = NULL;
		struct lb_error err;
		int self;

		j = i + (size_t)(rand(arg) % (uint64_t)(len - i));
		link = a[j];
		a[j] = a[i];
		a[i] = link;
		u = cJSON_GetObjectItemCaseSensitive(link, "url");
		if (!is_object(link) || !cJSON_IsString(u))
			continue;
		lb_error_init(&err);
		self = pageid_normalize(u->valuestring, &rule, &key, &err) == 0
		       && strcmp(key, d->key) == 0;
		free(key);
		if (self)
			continue;
		if ((copy = cJSON_Duplicate(link, 1)) == NULL ||
		    (type = cJSON_CreateString("random")) == NULL) {
			cJSON_Delete(copy);
			goto fail;
		}
		if (cJSON_GetObjectItemCaseSensitive(copy, "type") != NULL)
			cJSON_ReplaceItemInObjectCaseSensitive(copy, "type",
							       type);
		else
			cJSON_AddItemToObject(copy, "type", type);
		cJSON_AddItemToArray(out, copy);
		got++;
	}
	free(a);
	return out;
fail:
	free(a);
	cJSON_Delete(out);
	return NULL;
}

void edge_miss(const struct lb_edge_decision *d, enum lb_edge_object state,
	       const char *pool, size_t len, uint64_t (*rand)(void *),
	       void *rand_arg, struct lb_edge_answer *a)
{
	cJSON *doc = NULL, *out = NULL, *links;
	char *b;

	if (d->variant == LB_EDGE_PROJECT) {
		json_200(a, strdup("{}"), PRIVATE_DAY);
		return;
	}
	if (!d->needs_pool) {
		json_200(a, strdup("{\"message\":\"page not indexed yet: no "
				   "links until it is crawled\","
				   "\"related_links\":[]}"), DAY);
		return;
	}
	if (state == LB_OBJECT_FAILED) {
		edge_failure(a);
		return;
	}
	/* a pool that is not JSON is the store failing, as in core.js */
	if (state == LB_OBJECT_OK &&
	    (doc = cJSON_ParseWithLength(pool, len)) == NULL) {
		edge_failure(a);
		return;
	}
	links = draw(is_object(doc) ?
			     cJSON_GetObjectItemCaseSensitive(doc, "links") : NULL,
		     d, rand, rand_arg);
	if (links == NULL || (out = cJSON_CreateObject()) == NULL ||
	    cJSON_AddStringToObject(out, "message",
				    "page not indexed yet: random links") ==
		    NULL) {
		cJSON_Delete(links);
		cJSON_Delete(out);
		cJSON_Delete(doc);
		edge_failure(a);
		return;
	}
	cJSON_AddItemToObject(out, "related_links", links);
	b = cJSON_PrintUnformatted(out);
	cJSON_Delete(out);
	cJSON_Delete(doc);
	json_200(a, b, DAY);
}
