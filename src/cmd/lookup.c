/*
 * lookup.c - linkbot lookup: what the API answers for a URL, read from the
 * store by the edge's own rules (src/edge/answer.c, the code the nginx
 * module runs), without an edge. The status line and the headers go to
 * stderr, the body to stdout (a stored page gunzipped).
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "linkbot/answer.h"
#include "linkbot/buf.h"
#include "linkbot/cmd.h"
#include "linkbot/gz.h"
#include "linkbot/layout.h"
#include "linkbot/store.h"

#define LOOKUP_MAX_OBJECT ((size_t)16 << 20)
#define LOOKUP_MAX_TARGET ((size_t)64 << 10)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: linkbot lookup [options] -e CLIENT/ENDPOINT URL\n"
		"       linkbot lookup [options] -e _projects/UUID --key KEY URL\n"
		"       linkbot lookup [options] --target 'PATH?QUERY'\n\n"
		"Prints the answer the API gives for URL on that endpoint, read from\n"
		"the store by the edge's rules (the same C as the nginx module): the\n"
		"page's own answer, random links from the pool, or an empty list for\n"
		"a page that is not indexed; 204 for a pending endpoint, 404 for an\n"
		"unknown or disabled one. The endpoint's route (Standard or\n"
		"Enterprise) is the one its descriptor names. --target asks with a\n"
		"raw request target instead, as a client would send it.\n\n"
		"  -c, --config FILE     configuration (for the store location)\n"
		"  -s, --store LOCATION  the store (a directory or s3://bucket/prefix)\n"
		"  -e, --endpoint C/E    the endpoint, or _projects/UUID\n"
		"      --key KEY         the Project API key (Authorization: Bearer)\n"
		"      --target T        a raw request target: /c/e/related-links?url=..\n"
		"  -X, --method M        the request method (default GET)\n"
		"      --seed N          seed of the random draw\n"
		"  -h, --help\n\n"
		"Exit: 0 for 200 and 204, 1 for an error answer (400, 401, 404, 500),\n"
		"2 usage, 3 invalid configuration, 4 store unreachable.\n");
}

struct reader {
	struct lb_store *st;
	int failed;		/* a read failed at least once */
	int store_error;	/* ... because the store did (403, network) */
};

/* Reads a store object whole (gunzipped when stored gzipped). */
static enum lb_edge_object read_object(struct reader *rd, const char *key,
				       char **out, size_t *len)
{
	struct lb_error err;
	char *data = NULL;
	size_t n = 0;

	*out = NULL;
	*len = 0;
	lb_error_init(&err);
	if (store_get(rd->st, key, &data, &n, &err) < 0) {
		if (err.code == LB_ENOTFOUND)
			return LB_OBJECT_MISSING;
		fprintf(stderr, "linkbot lookup: %s\n", err.msg);
		rd->failed = 1;
		rd->store_error = 1;	/* the store itself, not an object */
		return LB_OBJECT_FAILED;
	}
	if (lb_is_gzip(data, n)) {
		int rc = lb_gunzip(data, n, LOOKUP_MAX_OBJECT, out, len, &err);
		free(data);
		if (rc < 0) {
			fprintf(stderr, "linkbot lookup: %s: %s\n", key,
				err.msg);
			rd->failed = 1;
			return LB_OBJECT_FAILED;
		}
		return LB_OBJECT_OK;
	}
	*out = data;
	*len = n;
	return LB_OBJECT_OK;
}

static uint64_t seed_state;

static uint64_t seeded(void *arg)
{
	uint64_t z = (seed_state += 0x9E3779B97F4A7C15ULL);

	(void)arg;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/*
 * Status line and headers to stderr, the body to stdout. A stored page is
 * printed gunzipped, so without its Content-Encoding (as nginx answers a
 * client without gzip).
 */
static int print_answer(const struct lb_edge_answer *a, const char *body,
			size_t len)
{
	size_t i;

	fprintf(stderr, "HTTP %d\n", a->status);
	for (i = 0; i < a->n_headers; i++)
		if (a->kind != LB_BODY_PAGE ||
		    strcmp(a->headers[i].name, "Content-Encoding") != 0)
			fprintf(stderr, "%s: %s\n", a->headers[i].name,
				a->headers[i].value);
	if (body != NULL) {
		fwrite(body, 1, len, stdout);
		putchar('\n');
	}
	return a->status < 300 ? LB_EXIT_OK : LB_EXIT_FAIL;
}

static int print_json(const struct lb_edge_answer *a)
{
	return print_answer(a, a->kind == LB_BODY_JSON ? a->body : NULL,
			    a->body_len);
}

/* "/c/e/related-links?url=<URL, percent-encoded>" for the endpoint. */
static int build_target(struct reader *rd, const char *endpoint,
			const char *url, struct lb_buf *t, struct lb_error *err)
{
	char key[256], *desc = NULL;
	size_t len, i;
	int enterprise = 0;

	if (strncmp(endpoint, LAYOUT_PROJECTS, strlen(LAYOUT_PROJECTS)) == 0) {
		if (lb_buf_printf(t, err, "/api/il/related-links/%s?url=",
				  endpoint + strlen(LAYOUT_PROJECTS)) < 0)
			return -1;
	} else {
		layout_key(key, sizeof(key), endpoint, LAYOUT_DESCRIPTOR);
		if (read_object(rd, key, &desc, &len) == LB_OBJECT_OK) {
			cJSON *o = cJSON_ParseWithLength(desc, len);
			enterprise = cJSON_IsString(cJSON_GetObjectItem(o,
								"variant")) &&
				strcmp(cJSON_GetObjectItem(o, "variant")
					       ->valuestring, "enterprise") == 0;
			cJSON_Delete(o);
		}
		free(desc);
		if (lb_buf_printf(t, err, "%s/%s/related-links?url=",
				  enterprise ? "/il" : "", endpoint) < 0)
			return -1;
	}
	for (i = 0; url[i] != '\0'; i++) {
		unsigned char c = (unsigned char)url[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-._~", c) != NULL) {
			if (lb_buf_addc(t, (char)c, err) < 0)
				return -1;
		} else if (lb_buf_printf(t, err, "%%%02X", c) < 0) {
			return -1;
		}
	}
	return 0;
}

int cmd_lookup(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "store", required_argument, NULL, 's' },
		{ "endpoint", required_argument, NULL, 'e' },
		{ "key", required_argument, NULL, 'K' },
		{ "target", required_argument, NULL, 'T' },
		{ "method", required_argument, NULL, 'X' },
		{ "seed", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *location = NULL, *endpoint = NULL;
	const char *apikey = NULL, *target = NULL, *method = "GET";
	struct lb_config *cfg = NULL;
	struct reader rd = { NULL, 0, 0 };
	struct lb_error err;
	struct lb_buf tb, auth;
	struct lb_edge_request req;
	struct lb_edge_route rt;
	struct lb_edge_answer a;
	struct lb_edge_decision d;
	enum lb_edge_object st;
	char *text = NULL;
	size_t len = 0;
	int c, rc = LB_EXIT_ENV, have_dec = 0;

	seed_state = (uint64_t)time(NULL);
	optind = 0;
	while ((c = getopt_long(argc, argv, "c:s:e:X:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 's': location = optarg; break;
		case 'e': endpoint = optarg; break;
		case 'K': apikey = optarg; break;
		case 'T': target = optarg; break;
		case 'X': method = optarg; break;
		case 'S': seed_state = strtoull(optarg, NULL, 10); break;
		case 'h':
			usage(stdout);
			return LB_EXIT_OK;
		default:
			usage(stderr);
			return LB_EXIT_USAGE;
		}
	}
	if (target == NULL && (endpoint == NULL || optind != argc - 1 ||
			       strchr(endpoint, '/') == NULL)) {
		usage(stderr);
		return LB_EXIT_USAGE;
	}
	if (target != NULL && optind != argc) {
		usage(stderr);
		return LB_EXIT_USAGE;
	}
	lb_error_init(&err);
	lb_buf_init(&tb, LOOKUP_MAX_TARGET);
	lb_buf_init(&auth, LB_EDGE_MAX_TOKEN + 64);
	memset(&a, 0, sizeof(a));
	if ((rc = cmd_load_config_or_defaults(config, location == NULL,
					      &cfg)) != LB_EXIT_OK)
		return rc;
	rc = LB_EXIT_ENV;
	if (store_open(cfg, location ? location : cfg->store, &rd.st,
		       &err) < 0) {
		fprintf(stderr, "linkbot lookup: %s\n", err.msg);
		goto out;
	}
	if (target == NULL) {
		if (build_target(&rd, endpoint, argv[optind], &tb, &err) < 0) {
			fprintf(stderr, "linkbot lookup: %s\n", err.msg);
			goto out;
		}
		target = tb.data;
	}
	if (apikey != NULL && lb_buf_printf(&auth, &err, "Bearer %s",
					    apikey) < 0) {
		fprintf(stderr, "linkbot lookup: %s\n", err.msg);
		rc = LB_EXIT_USAGE;
		goto out;
	}
	req.method = method;
	req.target = target;
	req.target_len = strlen(target);
	req.authorization = apikey ? auth.data : NULL;
	req.authorization_len = apikey ? auth.len : 0;

	/* the sequence of answer.h, with synchronous reads */
	if (edge_route(&req, &rt, &a) == 1) {
		rc = print_json(&a);
		goto out;
	}
	st = read_object(&rd, rt.desc_key, &text, &len);
	if (rd.store_error)
		goto store_failed;
	have_dec = 1;
	if (edge_decide(&req, &rt, st, text, len, &d) == 1) {
		rc = print_json(&d.answer);
		goto out;
	}
	free(text);
	text = NULL;
	st = read_object(&rd, d.page_key, &text, &len);
	if (rd.store_error)
		goto store_failed;
	if (st == LB_OBJECT_OK) {
		edge_page_answer(rt.variant, &a);
		rc = print_answer(&a, strcmp(method, "HEAD") ? text : NULL, len);
		goto out;
	}
	if (st == LB_OBJECT_FAILED) {
		edge_failure(&a);
		rc = print_json(&a);
		goto out;
	}
	st = d.needs_pool ? read_object(&rd, d.pool_key, &text, &len) :
			    LB_OBJECT_MISSING;
	if (rd.store_error)
		goto store_failed;
	edge_miss(&d, st, text, len, seeded, NULL, &a);
	rc = print_json(&a);
	goto out;
store_failed:
	/* The edge would answer 500; the operator needs the store's own
	 * error (a 403 and its hint, printed above): the environment. */
	rc = LB_EXIT_ENV;
out:
	if (have_dec)
		edge_decision_release(&d);
	edge_answer_release(&a);
	free(text);
	lb_buf_release(&tb);
	lb_buf_release(&auth);
	store_free(rd.st);
	config_free(cfg);
	return rc;
}
