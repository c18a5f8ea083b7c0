/*
 * answer.h - the edge's answer rules in C: routing, validation, page ID,
 * endpoint state, Project auth, random pool, side-crawl record, statuses,
 * headers and bodies (docs/edge.md, SPEC 4 and 7).
 *
 * One implementation, two callers: the nginx module
 * (src/edge/nginx/ngx_http_linkbot_module.c) and `linkbot lookup`. The
 * fetch-style worker's core (src/edge/core.js) is the JavaScript twin; both
 * are held together by tests/data/edge/vectors.json (requests and the
 * answers they get), read by tests/unit/test_answer.c and
 * tests/edge/vectors.test.mjs, as the page ID is by its vectors.
 *
 * The rules do no I/O: the caller reads the store (a file, an S3
 * subrequest) between the steps, so the same code runs synchronously in
 * lookup and asynchronously in nginx. Calling sequence:
 *
 *   struct lb_edge_route rt;
 *   struct lb_edge_answer a;
 *   struct lb_edge_decision d;
 *
 *   if (edge_route(&req, &rt, &a) == 1)         answer a (404, 405, 204 ...)
 *   read rt.desc_key -> (state, text)
 *   if (edge_decide(&req, &rt, state, text, len, &d) == 1)
 *                                               answer d.answer (401, 204 ...)
 *   serve d.page_key as stored (edge_page_answer() gives its headers);
 *   when it does not exist:
 *     read d.pool_key -> (state, text)          (only if d.needs_pool)
 *     edge_miss(&d, state, text, len, rand, arg, &a); answer a;
 *     log d.side ("client endpoint url") for the side crawl
 *   edge_decision_release(&d); edge_answer_release(&a);
 *
 * The fast path (edge_fast_id): for a url without a query the page ID does
 * not depend on the descriptor, so a directory store serves
 * "<client>/<endpoint>/active-<variant>/<id>.json" (the state marker of
 * docs/store.md) without reading endpoint.json; when that file is not there
 * the caller takes the sequence above.
 *
 * Ownership: answers and decisions own their body and strings; the
 * *_release() functions free them (on a zeroed struct too). Header names
 * and values are static strings.
 */
#ifndef LINKBOT_ANSWER_H
#define LINKBOT_ANSWER_H

#include <stddef.h>
#include <stdint.h>

#include "linkbot/pageid.h"

#define LB_EDGE_MAX_PATH 256	/* longer paths match no route: 404 */
#define LB_EDGE_MAX_QUERY 8192	/* longer query strings: 400 */
#define LB_EDGE_MAX_TOKEN 1024	/* bearer tokens */
#define LB_EDGE_MAX_HEADERS 8
#define LB_EDGE_SEGMENT_MAX 64

enum lb_edge_variant {
	LB_EDGE_STANDARD,
	LB_EDGE_ENTERPRISE,
	LB_EDGE_PROJECT,
};

/* What the caller found at a store key. */
enum lb_edge_object {
	LB_OBJECT_OK,		/* text holds the object's bytes */
	LB_OBJECT_MISSING,	/* no such object (404/403 from a bucket) */
	LB_OBJECT_FAILED,	/* the store failed: 500 */
};

/* The request, as raw bytes (no decoding done by the caller). */
struct lb_edge_request {
	const char *method;		/* NUL-terminated: "GET", ... */
	const char *target;		/* raw request target: path[?query] */
	size_t target_len;
	const char *authorization;	/* NULL when absent */
	size_t authorization_len;
};

struct lb_edge_header {
	const char *name;
	const char *value;
};

enum lb_edge_body {
	LB_BODY_NONE,	/* 204, or a HEAD */
	LB_BODY_JSON,	/* body/body_len: a JSON document */
	LB_BODY_PAGE,	/* the stored page object, served as stored */
};

struct lb_edge_answer {
	int status;
	size_t n_headers;
	struct lb_edge_header headers[LB_EDGE_MAX_HEADERS];
	enum lb_edge_body kind;
	char *body;		/* LB_BODY_JSON: owned, NUL-terminated */
	size_t body_len;
};

struct lb_edge_route {
	enum lb_edge_variant variant;
	char client[LB_EDGE_SEGMENT_MAX + 1];	/* "" for a project */
	char endpoint[LB_EDGE_SEGMENT_MAX + 1];	/* or the project's uuid */
	char base[2 * LB_EDGE_SEGMENT_MAX + 16];	/* "c/e/", "_projects/u/" */
	char desc_key[2 * LB_EDGE_SEGMENT_MAX + 32];
};

struct lb_edge_decision {
	int is_page;			/* 0: answer holds the answer */
	struct lb_edge_answer answer;
	enum lb_edge_variant variant;
	char page_key[2 * LB_EDGE_SEGMENT_MAX + 64];
	char pool_key[2 * LB_EDGE_SEGMENT_MAX + 32];
	char id[LB_PAGEID_LEN + 1];
	int needs_pool;			/* a miss reads pool_key first */
	/* for a miss (owned) */
	char *key;			/* the page's normalised key */
	char *side;			/* "client endpoint url", for the log */
	int links;
	int keep_all;
	char **names;
	size_t n_names;
};

/*
 * Step 1: the route, the method. Returns 0 and fills rt, or 1 and fills a
 * (400 bad path, 404 no route, 204 preflight, 405 method).
 */
int edge_route(const struct lb_edge_request *req, struct lb_edge_route *rt,
	       struct lb_edge_answer *a);

/*
 * Step 2: with the descriptor (endpoint.json / project.json) as the caller
 * found it. Returns 0 when the page is to be served (d->page_key) or 1 when
 * d->answer is the answer.
 */
int edge_decide(const struct lb_edge_request *req,
		const struct lb_edge_route *rt, enum lb_edge_object state,
		const char *text, size_t len, struct lb_edge_decision *d);

/*
 * Step 3: the page object does not exist. pool: random.json as found
 * (ignored unless d->needs_pool). rand returns uniform 64-bit values.
 * Fills a: 200 with random links, an empty list or {} (Project), or 500.
 */
void edge_miss(const struct lb_edge_decision *d, enum lb_edge_object state,
	       const char *pool, size_t len, uint64_t (*rand)(void *),
	       void *rand_arg, struct lb_edge_answer *a);

/* The headers of a stored page answer (200, gzip as stored). */
void edge_page_answer(enum lb_edge_variant variant, struct lb_edge_answer *a);

/* 500: the store could not be read. */
void edge_failure(struct lb_edge_answer *a);

/* A JSON error {"message":..,"status":..} with no-store and CORS. */
void edge_error(struct lb_edge_answer *a, int status, const char *message);

/*
 * nginx refused the request itself (TRACE, CONNECT, a body): the route's
 * answer for the method (404, 405 with Allow), else 413.
 */
void edge_refused(const struct lb_edge_request *req, struct lb_edge_answer *a);

/*
 * The fast path: 0 and the page ID when the request is a GET/HEAD on a
 * Standard or Enterprise route whose url has no query (so the ID does not
 * depend on the descriptor's query_params); -1 otherwise.
 */
int edge_fast_id(const struct lb_edge_request *req,
		 const struct lb_edge_route *rt, char id[LB_PAGEID_LEN + 1]);

/* pageid_hash() of key[0..len), faster (see answer.c). */
void edge_page_id(const char *key, size_t len, char id[LB_PAGEID_LEN + 1]);

/* The `url` query parameter, decoded (caller frees); NULL when absent. */
char *edge_url_param(const char *query, size_t len, size_t *out_len);

/* Looks a header up by name (case-insensitive); NULL when absent. */
const char *edge_answer_header(const struct lb_edge_answer *a,
			       const char *name);

void edge_answer_release(struct lb_edge_answer *a);
void edge_decision_release(struct lb_edge_decision *d);

#endif
