/*
 * lookup.c - linkbot lookup: what the API answers for a URL, read from the
 * store with the edge's rules (docs/store.md), without an edge. The status
 * goes to stderr, the body to stdout.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "linkbot/cmd.h"
#include "linkbot/gz.h"
#include "linkbot/pageid.h"
#include "linkbot/store.h"

#define LOOKUP_MAX_OBJECT ((size_t)16 << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: linkbot lookup [options] -e CLIENT/ENDPOINT URL\n\n"
		"Prints the answer the API gives for URL on that endpoint, read from\n"
		"the store with the edge's rules: the page's own answer, random links\n"
		"from the pool, or an empty list for a page that is not indexed; 204\n"
		"for a pending endpoint, 404 for an unknown or disabled one.\n\n"
		"  -c, --config FILE     configuration (for the store location)\n"
		"  -s, --store LOCATION  the store (a directory or s3://bucket/prefix)\n"
		"  -e, --endpoint C/E    the endpoint (required)\n"
		"      --seed N          seed of the random draw\n"
		"  -h, --help\n\n"
		"Exit: 0 for 200 and 204, 1 for an error answer (400, 404, 500),\n"
		"2 usage, 3 invalid configuration, 4 store unreachable.\n");
}

static int answer(int status, const char *body)
{
	fprintf(stderr, "HTTP %d\n", status);
	if (body != NULL)
		printf("%s\n", body);
	return status < 300 ? LB_EXIT_OK : LB_EXIT_FAIL;
}

static int error_answer(int status, const char *message)
{
	cJSON *o = cJSON_CreateObject();
	char *s;
	int rc;

	cJSON_AddStringToObject(o, "message", message);
	s = cJSON_PrintUnformatted(o);
	rc = answer(status, s);
	free(s);
	cJSON_Delete(o);
	return rc;
}

/* Reads a store object, gunzipping it if needed; 1 when missing. */
static int read_object(struct lb_store *st, const char *key, char **out,
		       struct lb_error *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if (store_get(st, key, &data, &len, err) < 0)
		return err->code == LB_ENOTFOUND ? 1 : -1;
	if (lb_is_gzip(data, len)) {
		rc = lb_gunzip(data, len, LOOKUP_MAX_OBJECT, out, NULL, err);
		free(data);
		return rc;
	}
	*out = data;
	return 0;
}

/* Draws n links of the pool uniformly without replacement, never `self`. */
static char *draw_random(const char *pool_json, int n, const char *self_id,
			 const struct lb_qrule *rule, uint64_t seed)
{
	cJSON *pool = cJSON_Parse(pool_json), *links, *out, *arr, *it;
	cJSON **cand = NULL;
	size_t count = 0, i, k;
	char *s = NULL;

	links = cJSON_GetObjectItem(pool, "links");
	out = cJSON_CreateObject();
	arr = cJSON_CreateArray();
	cJSON_ArrayForEach(it, links) {
		const cJSON *u = cJSON_GetObjectItem(it, "url");
		char id[LB_PAGEID_LEN + 1];
		struct lb_error e;
		cJSON **nc;

		lb_error_init(&e);
		if (cJSON_IsString(u) &&
		    pageid_of_url(u->valuestring, rule, id, &e) == 0 &&
		    strcmp(id, self_id) == 0)
			continue;
		nc = realloc(cand, (count + 1) * sizeof(*cand));
		if (nc == NULL)
			goto out;
		cand = nc;
		cand[count++] = it;
	}
	for (i = 0; i < count && (int)i < n; i++) {
		uint64_t z = (seed += 0x9E3779B97F4A7C15ULL);
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
		z ^= z >> 31;
		k = i + (size_t)(z % (count - i));
		it = cand[k];
		cand[k] = cand[i];
		cand[i] = it;
		cJSON_AddItemToArray(arr, cJSON_Duplicate(it, 1));
	}
	cJSON_AddStringToObject(out, "message",
				"page not indexed yet: random links");
	cJSON_AddItemToObject(out, "related_links", arr);
	arr = NULL;
	s = cJSON_PrintUnformatted(out);
out:
	cJSON_Delete(arr);
	cJSON_Delete(out);
	cJSON_Delete(pool);
	free(cand);
	return s;
}

int cmd_lookup(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "store", required_argument, NULL, 's' },
		{ "endpoint", required_argument, NULL, 'e' },
		{ "seed", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *location = NULL, *endpoint = NULL;
	struct lb_config *cfg = NULL;
	struct lb_store *st = NULL;
	struct lb_error err;
	cJSON *desc = NULL, *qp, *it;
	const char *names[64];
	struct lb_qrule rule = { 0, names, 0 };
	char key[256], id[LB_PAGEID_LEN + 1], *text = NULL, *body = NULL;
	const char *state, *variant;
	uint64_t seed = (uint64_t)time(NULL);
	int c, r, rc = LB_EXIT_ENV;

	optind = 0;
	while ((c = getopt_long(argc, argv, "c:s:e:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 's': location = optarg; break;
		case 'e': endpoint = optarg; break;
		case 'S': seed = strtoull(optarg, NULL, 10); break;
		case 'h':
			usage(stdout);
			return LB_EXIT_OK;
		default:
			usage(stderr);
			return LB_EXIT_USAGE;
		}
	}
	if (endpoint == NULL || optind != argc - 1 ||
	    strchr(endpoint, '/') == NULL) {
		usage(stderr);
		return LB_EXIT_USAGE;
	}
	lb_error_init(&err);
	if ((rc = cmd_load_config_or_defaults(config, location == NULL,
					      &cfg)) != LB_EXIT_OK)
		return rc;
	rc = LB_EXIT_ENV;
	if (store_open(cfg, location ? location : cfg->store, &st, &err) < 0) {
		fprintf(stderr, "linkbot lookup: %s\n", err.msg);
		goto out;
	}
	snprintf(key, sizeof(key), "%s/endpoint.json", endpoint);
	r = read_object(st, key, &text, &err);
	if (r < 0) {	/* the store's own error (403 and its hint), exit 4 */
		fprintf(stderr, "linkbot lookup: %s\n", err.msg);
		goto out;
	}
	desc = r == 0 ? cJSON_Parse(text) : NULL;
	state = cJSON_GetStringValue(cJSON_GetObjectItem(desc, "state"));
	variant = cJSON_GetStringValue(cJSON_GetObjectItem(desc, "variant"));
	if (state == NULL || variant == NULL || strcmp(state, "disabled") == 0) {
		rc = error_answer(404, "endpoint not found");
		goto out;
	}
	if (strcmp(state, "pending") == 0) {
		rc = answer(204, NULL);
		goto out;
	}
	qp = cJSON_GetObjectItem(desc, "query_params");
	cJSON_ArrayForEach(it, qp) {
		if (!cJSON_IsString(it))
			continue;
		if (strcmp(it->valuestring, "*") == 0)
			rule.keep_all = 1;
		else if (rule.n_names < sizeof(names) / sizeof(names[0]))
			names[rule.n_names++] = it->valuestring;
	}
	lb_error_init(&err);
	if (pageid_of_url(argv[optind], &rule, id, &err) < 0) {
		rc = error_answer(400, err.msg);
		goto out;
	}
	snprintf(key, sizeof(key), "%s/pages/%s.json", endpoint, id);
	free(text);
	text = NULL;
	r = read_object(st, key, &text, &err);
	if (r < 0) {	/* the store's own error (403 and its hint), exit 4 */
		fprintf(stderr, "linkbot lookup: %s\n", err.msg);
		goto out;
	}
	if (r == 0) {
		rc = answer(200, text);
		goto out;
	}
	/* Not indexed: the endpoint says random links or an empty list. */
	if (cJSON_GetStringValue(cJSON_GetObjectItem(desc, "not_indexed")) &&
	    strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(desc, "not_indexed")),
		   "empty") == 0) {
		rc = answer(200, "{\"message\":\"page not indexed: no links "
				 "for a page whose language is unknown\","
				 "\"related_links\":[]}");
		goto out;
	}
	snprintf(key, sizeof(key), "%s/random.json", endpoint);
	r = read_object(st, key, &text, &err);
	if (r != 0) {
		rc = r < 0 ? error_answer(500, "the store failed") :
			     answer(200, "{\"message\":\"page not indexed yet\","
					 "\"related_links\":[]}");
		goto out;
	}
	body = draw_random(text, (int)cJSON_GetNumberValue(
					 cJSON_GetObjectItem(desc, "links")),
			   id, &rule, seed);
	rc = body ? answer(200, body) : error_answer(500, "out of memory");
out:
	free(body);
	free(text);
	cJSON_Delete(desc);
	store_free(st);
	config_free(cfg);
	return rc;
}
