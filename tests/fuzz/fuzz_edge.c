/*
 * fuzz_edge.c - libFuzzer target for the edge's request parser and answer
 * rules (src/edge/answer.c), the code the nginx module runs on every
 * request: hostile bytes must never crash a worker, and no answer may name
 * a store key outside the route's own folder.
 *
 * Input: byte 0 picks the method, byte 1 the descriptor; the rest is the
 * request target, up to the first NUL; after it, the Authorization value.
 * Contracts checked beyond the sanitizers:
 *   - the status is one SPEC 4 and docs/edge.md list, every answer has
 *     CORS, and a JSON body parses;
 *   - a store key is "<client>/<endpoint>/" or "_projects/<uuid>/" followed
 *     by endpoint.json | project.json | random.json | pages/<32 hex>.json,
 *     and its segments are in the store's alphabets;
 *   - the fast path's ID equals the full path's whenever both give one.
 * Run by tests/fuzz/edge (short: tests/integration/edge-fuzz.sh).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "linkbot/answer.h"

static const char *const METHODS[] = { "GET", "HEAD", "OPTIONS", "POST",
				       "TRACE", "get", "" };
static const char *const DESCS[] = {
	"{\"variant\":\"standard\",\"state\":\"active\",\"links\":3,"
	"\"query_params\":[],\"not_indexed\":\"random\"}",
	"{\"variant\":\"enterprise\",\"state\":\"active\",\"links\":2,"
	"\"query_params\":[\"id\",\"*\"],\"not_indexed\":\"random\"}",
	"{\"state\":\"pending\",\"query_params\":[\"id\"]}",
	"{\"variant\":\"standard\",\"state\":\"active\",\"links\":1e300,"
	"\"not_indexed\":\"empty\"}",
	/* sha256("k") */
	"{\"key_sha256\":[\"8254C329A92850F6D539DD376F4816EE2764517DA5E0235514"
	"af433164480d7a\"],\"query_params\":[\"*\"]}",
	"[1,2",
};
static const char POOL[] =
	"{\"links\":[{\"url\":\"https://a.example/x\",\"title\":\"X\"},"
	"{\"url\":\"/y?id=1\",\"type\":\"related\"},{\"url\":7},3,null,"
	"{\"url\":\"\\u0000\"}]}";

static uint64_t seq;

static uint64_t rnd(void *arg)
{
	(void)arg;
	seq = seq * 6364136223846793005ULL + 1442695040888963407ULL;
	return seq >> 11;
}

static void check_answer(const struct lb_edge_answer *a)
{
	static const int ok[] = { 200, 204, 400, 401, 404, 405, 413, 500 };
	size_t i;
	int found = 0;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		found |= a->status == ok[i];
	if (!found || edge_answer_header(a, "Access-Control-Allow-Origin") ==
			      NULL)
		abort();
	for (i = 0; i < a->n_headers; i++)
		if (a->headers[i].name == NULL || a->headers[i].value == NULL)
			abort();
	if (a->kind == LB_BODY_JSON) {
		cJSON *b;
		if (a->body == NULL || strlen(a->body) != a->body_len)
			abort();
		if ((b = cJSON_Parse(a->body)) == NULL)
			abort();
		cJSON_Delete(b);
	}
}

static int in_alphabet(const char *s, size_t n, int uuid)
{
	size_t i;

	if (n == 0 || n > 64)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' ||
		      (uuid && c >= 'A' && c <= 'Z')))
			return 0;
	}
	return uuid || s[0] != '_';
}

static void check_key(const struct lb_edge_route *rt, const char *key)
{
	const char *rest = key, *slash;

	if (strncmp(key, rt->base, strlen(rt->base)) != 0)
		abort();
	if (rt->variant == LB_EDGE_PROJECT) {
		if (strncmp(key, "_projects/", 10) != 0)
			abort();
		rest = key + 10;
		slash = strchr(rest, '/');
		if (slash == NULL || !in_alphabet(rest, (size_t)(slash - rest), 1))
			abort();
		rest = slash + 1;
	} else {
		int k;
		for (k = 0; k < 2; k++) {
			slash = strchr(rest, '/');
			if (slash == NULL ||
			    !in_alphabet(rest, (size_t)(slash - rest), 0))
				abort();
			rest = slash + 1;
		}
	}
	if (strcmp(rest, "endpoint.json") == 0 ||
	    strcmp(rest, "project.json") == 0 ||
	    strcmp(rest, "random.json") == 0)
		return;
	if (strncmp(rest, "pages/", 6) != 0 || strlen(rest) != 6 + 32 + 5 ||
	    strspn(rest + 6, "0123456789abcdef") != 32 ||
	    strcmp(rest + 38, ".json") != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lb_edge_request req;
	struct lb_edge_route rt;
	struct lb_edge_answer a;
	struct lb_edge_decision d;
	const uint8_t *nul;
	char *target, *auth = NULL, id[LB_PAGEID_LEN + 1];
	const char *desc;
	size_t tl;
	int fast;

	if (size < 2)
		return 0;
	req.method = METHODS[data[0] % (sizeof(METHODS) / sizeof(METHODS[0]))];
	desc = DESCS[data[1] % (sizeof(DESCS) / sizeof(DESCS[0]))];
	seq = data[0] * 31u + data[1];
	data += 2;
	size -= 2;
	nul = memchr(data, '\0', size);
	tl = nul ? (size_t)(nul - data) : size;
	/* exact-size copies: ASan sees a read past the end */
	target = malloc(tl ? tl : 1);
	memcpy(target, data, tl);
	req.target = target;
	req.target_len = tl;
	req.authorization = NULL;
	req.authorization_len = 0;
	if (nul != NULL) {
		size_t al = size - tl - 1;
		auth = malloc(al ? al : 1);
		memcpy(auth, nul + 1, al);
		req.authorization = auth;
		req.authorization_len = al;
	}

	memset(&a, 0, sizeof(a));
	edge_refused(&req, &a);
	check_answer(&a);
	edge_answer_release(&a);

	memset(&a, 0, sizeof(a));
	if (edge_route(&req, &rt, &a) == 1) {
		check_answer(&a);
		edge_answer_release(&a);
		goto out;
	}
	check_key(&rt, rt.desc_key);
	fast = edge_fast_id(&req, &rt, id) == 0;
	if (edge_decide(&req, &rt, LB_OBJECT_OK, desc, strlen(desc), &d) == 1) {
		check_answer(&d.answer);
	} else {
		check_key(&rt, d.page_key);
		check_key(&rt, d.pool_key);
		if (fast && strcmp(id, d.id) != 0)
			abort();
		edge_page_answer(rt.variant, &a);
		check_answer(&a);
		edge_answer_release(&a);
		edge_miss(&d, data[0] & 1 ? LB_OBJECT_OK : LB_OBJECT_MISSING,
			  POOL, sizeof(POOL) - 1, rnd, NULL, &a);
		check_answer(&a);
		edge_answer_release(&a);
		if (d.side == NULL || strchr(d.side, '\n') != NULL)
			abort();
	}
	edge_decision_release(&d);
	/* the descriptor missing, and failing */
	if (edge_decide(&req, &rt, LB_OBJECT_MISSING, NULL, 0, &d) == 0)
		abort();
	check_answer(&d.answer);
	edge_decision_release(&d);
out:
	free(target);
	free(auth);
	return 0;
}
