/*
 * config.c - load and validate the YAML configuration; see config.h.
 *
 * libyaml loads the file into a node tree (its document API keeps each
 * node's line); we walk it with one table of known keys per mapping, so a
 * typo is reported at its line with the closest known key. Nothing outside
 * memory is touched before the whole file validated.
 */
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "linkbot/config.h"
#include "linkbot/fsutil.h"
#include "linkbot/urlpattern.h"

#define CONFIG_MAX_BYTES (4 << 20)

struct ctx {
	const char *name;	/* file name, for messages */
	yaml_document_t *doc;
	struct lb_error *err;
};

static int cfg_error(struct ctx *c, const yaml_node_t *n, const char *fmt,
		     ...) __attribute__((format(printf, 3, 4)));

static int cfg_error(struct ctx *c, const yaml_node_t *n, const char *fmt,
		     ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n != NULL)
		return lb_error_set(c->err, LB_ECONFIG, "%s:%lu: %s", c->name,
				    (unsigned long)n->start_mark.line + 1, msg);
	return lb_error_set(c->err, LB_ECONFIG, "%s: %s", c->name, msg);
}

static int line_of(const yaml_node_t *n)
{
	return (int)n->start_mark.line + 1;
}

static yaml_node_t *node(struct ctx *c, int idx)
{
	return yaml_document_get_node(c->doc, idx);
}

static const char *scalar(const yaml_node_t *n)
{
	return n != NULL && n->type == YAML_SCALAR_NODE ?
		       (const char *)n->data.scalar.value : NULL;
}

/* Levenshtein distance, for "did you mean" on short keys. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[64], prev, tmp;

	if (la >= 63 || lb >= 63)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t best = prev + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

/* The key node of an earlier pair of mapping n with the same key as *p. */
static yaml_node_t *dup_key(struct ctx *c, yaml_node_t *n,
			    const yaml_node_pair_t *p)
{
	const char *ks = scalar(node(c, p->key));
	yaml_node_pair_t *q;

	for (q = n->data.mapping.pairs.start; ks != NULL && q < p; q++) {
		const char *qs = scalar(node(c, q->key));
		if (qs != NULL && strcmp(qs, ks) == 0)
			return node(c, q->key);
	}
	return NULL;
}

/* A plain scalar that YAML reads as null: ~, null, Null, NULL. */
static int is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);

	return s != NULL && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
		!strcmp(s, "NULL"));
}

/*
 * Checks that every key of mapping n is one of keys[] (NULL-terminated);
 * otherwise reports the unknown key with the closest known one.
 */
static int check_keys(struct ctx *c, yaml_node_t *n, const char *what,
		      const char *const *keys)
{
	yaml_node_pair_t *p;
	char list[256];
	size_t i, len = 0;

	if (n->type != YAML_MAPPING_NODE)
		return cfg_error(c, n, "%s must be a mapping of 'key: value'",
				 what);
	list[0] = '\0';
	for (i = 0; keys[i] != NULL; i++)
		len += (size_t)snprintf(list + len,
					len < sizeof(list) ? sizeof(list) - len : 0,
					"%s%s", i ? ", " : "", keys[i]);
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = node(c, p->key);
		const char *ks = scalar(k);
		const char *best = NULL;
		size_t bestd = SIZE_MAX;

		if (ks == NULL)
			return cfg_error(c, k, "keys of %s must be plain words",
					 what);
		if (dup_key(c, n, p) != NULL)
			return cfg_error(c, k, "'%s' is given twice in %s (first "
					 "at line %d): keep one",
					 ks, what, line_of(dup_key(c, n, p)));
		for (i = 0; keys[i] != NULL; i++) {
			size_t d = distance(ks, keys[i]);
			if (d == 0)
				break;
			if (d < bestd) {
				bestd = d;
				best = keys[i];
			}
		}
		if (keys[i] != NULL)
			continue;
		if (best != NULL && bestd <= 2)
			return cfg_error(c, k,
					 "unknown key '%s' in %s; did you mean "
					 "'%s'?",
					 ks, what, best);
		return cfg_error(c, k, "unknown key '%s' in %s (known: %s)",
				 ks, what, list);
	}
	return 0;
}

static yaml_node_t *get(struct ctx *c, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p;

	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const char *ks = scalar(node(c, p->key));
		if (ks != NULL && strcmp(ks, key) == 0)
			return node(c, p->value);
	}
	return NULL;
}

static int get_str(struct ctx *c, yaml_node_t *map, const char *key,
		   int required, char **out)
{
	yaml_node_t *v = get(c, map, key);
	const char *s = scalar(v);

	if (v == NULL) {
		if (required)
			return cfg_error(c, map, "missing required key '%s'",
					 key);
		return 0;
	}
	if (s == NULL)
		return cfg_error(c, v, "'%s' must be a single value", key);
	if (is_null(v))
		return cfg_error(c, v, "'%s' is null ('%s'): give a value, or "
				 "remove the key for the default", key, s);
	if (*s == '\0') {
		if (required)
			return cfg_error(c, v, "'%s' must not be empty", key);
		return 0;
	}
	free(*out);
	*out = strdup(s);
	if (*out == NULL)
		return lb_error_set(c->err, LB_ENOMEM, "out of memory");
	return 0;
}

static int get_long(struct ctx *c, yaml_node_t *map, const char *key,
		    long min, long max, long *out)
{
	yaml_node_t *v = get(c, map, key);
	const char *s = scalar(v);
	char *end;
	long x;

	if (v == NULL)
		return 0;
	if (s == NULL)
		return cfg_error(c, v, "'%s' must be a number", key);
	errno = 0;
	x = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0')
		return cfg_error(c, v, "'%s' must be a whole number, not '%s'",
				 key, s);
	if (x < min || x > max)
		return cfg_error(c, v, "'%s' must be between %ld and %ld, not %ld",
				 key, min, max, x);
	*out = x;
	return 0;
}

static int get_double(struct ctx *c, yaml_node_t *map, const char *key,
		      double min, double max, double *out)
{
	yaml_node_t *v = get(c, map, key);
	const char *s = scalar(v);
	char *end;
	double x;

	if (v == NULL)
		return 0;
	if (s == NULL)
		return cfg_error(c, v, "'%s' must be a number", key);
	errno = 0;
	x = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(x))
		return cfg_error(c, v, "'%s' must be a number, not '%s'", key, s);
	if (x < min || x > max)
		return cfg_error(c, v, "'%s' must be between %g and %g, not %g",
				 key, min, max, x);
	*out = x;
	return 0;
}

static int get_int(struct ctx *c, yaml_node_t *map, const char *key,
		   long min, long max, int *out)
{
	long x = *out;

	if (get_long(c, map, key, min, max, &x) < 0)
		return -1;
	*out = (int)x;
	return 0;
}

static int get_bool(struct ctx *c, yaml_node_t *map, const char *key,
		    int *out)
{
	yaml_node_t *v = get(c, map, key);
	const char *s = scalar(v);

	if (v == NULL)
		return 0;
	if (s != NULL && (!strcasecmp(s, "true") || !strcasecmp(s, "yes") ||
			  !strcasecmp(s, "on"))) {
		*out = 1;
		return 0;
	}
	if (s != NULL && (!strcasecmp(s, "false") || !strcasecmp(s, "no") ||
			  !strcasecmp(s, "off"))) {
		*out = 0;
		return 0;
	}
	return cfg_error(c, v, "'%s' must be true or false", key);
}

/* A value that is one string or a sequence of strings. */
static int get_strlist(struct ctx *c, yaml_node_t *map, const char *key,
		       struct lb_strlist *out)
{
	yaml_node_t *v = get(c, map, key);
	yaml_node_item_t *it;

	if (v == NULL)
		return 0;
	if (v->type == YAML_SCALAR_NODE)
		return lb_strlist_add(out, scalar(v), c->err);
	if (v->type != YAML_SEQUENCE_NODE)
		return cfg_error(c, v, "'%s' must be a value or a list", key);
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++) {
		const char *s = scalar(node(c, *it));
		if (s == NULL || *s == '\0')
			return cfg_error(c, node(c, *it),
					 "items of '%s' must be non-empty values",
					 key);
		if (lb_strlist_add(out, s, c->err) < 0)
			return -1;
	}
	return 0;
}

/* Iterates the items of a sequence-valued key; NULL/0 when absent. */
static int get_seq(struct ctx *c, yaml_node_t *map, const char *key,
		   yaml_node_item_t **start, size_t *n)
{
	yaml_node_t *v = get(c, map, key);

	*start = NULL;
	*n = 0;
	if (v == NULL)
		return 0;
	if (v->type != YAML_SEQUENCE_NODE)
		return cfg_error(c, v, "'%s' must be a list (items start with '- ')",
				 key);
	*start = v->data.sequence.items.start;
	*n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	return 0;
}

int config_valid_store(const char *s)
{
	if (s == NULL || *s == '\0')
		return 0;
	if (strncmp(s, "s3:", 3) == 0 || strncmp(s, "S3:", 3) == 0)
		return strncmp(s, "s3://", 5) == 0 && s[5] != '\0' &&
		       s[5] != '/';
	if (strncmp(s, "dir:", 4) == 0)
		return s[4] != '\0';
	/* Another scheme is a typo of a bucket URL, not a directory. */
	return strstr(s, "://") == NULL;
}

/*
 * A night needs about hosts at once x their rate x the origins' answer
 * time transfers in flight: on loopback a few, against origins 100 ms
 * away ~400 for 1,000 hosts at 240 a minute, which 256 held to half
 * their rate (bench/RESULTS.md, "sites of different sizes, and a night
 * against slow origins"). Two a client at once covers a host of one
 * client at 240 a minute up to half a second away; a transfer is one
 * socket, inside the open files a night asks for a client (pipeline.c).
 */
unsigned config_connections(const struct lb_crawl_settings *crawl,
			    unsigned clients)
{
	unsigned n;

	if (crawl->max_connections > 0)
		return (unsigned)crawl->max_connections;
	n = clients * LB_CONNECTIONS_PER_CLIENT;
	return n > LB_DEFAULT_MAX_CONNECTIONS ? n : LB_DEFAULT_MAX_CONNECTIONS;
}

int config_valid_id(const char *s)
{
	size_t i;

	if (s == NULL || !((s[0] >= 'a' && s[0] <= 'z') ||
			   (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		char ch = s[i];
		if (i >= 64)
			return 0;
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		      ch == '-' || ch == '_'))
			return 0;
	}
	return 1;
}

static int valid_uuid(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++) {
		char ch = s[i];
		if (i >= 64 || !((ch >= 'a' && ch <= 'z') ||
				 (ch >= 'A' && ch <= 'Z') ||
				 (ch >= '0' && ch <= '9') || ch == '-' ||
				 ch == '_'))
			return 0;
	}
	return i > 0;
}

static int valid_http_url(const char *s)
{
	return strncasecmp(s, "http://", 7) == 0 ||
	       strncasecmp(s, "https://", 8) == 0;
}

static const char *const top_keys[] = { "store", "s3", "state",
					"state_sync", "state_store", "crawl",
					"relate",
					"clients", "projects", NULL };
static const char *const relate_keys[] = { "method", "embeddings", NULL };
static const char *const embed_keys[] = { "url", "model", "cache", NULL };
static const char *const s3_keys[] = { "endpoint", "region", "path_style",
				       NULL };
static const char *const crawl_keys[] = {
	"pages_per_minute", "bot_info_url", "allow_private", "max_pages",
	"max_body_bytes", "timeout_seconds", "max_redirects", "jobs",
	"build_jobs", "max_connections", NULL
};
static const char *const client_keys[] = { "id", "sources", "sets",
					   "endpoints", NULL };
static const char *const source_keys[] = { "sitemap_index", "sitemap",
					   "html_sitemap", "robots",
					   "pattern", NULL };
static const char *const endpoint_keys[] = {
	"id", "variant", "source", "target", "links", "min_incoming",
	"max_incoming", "random_completion", "multi_language", "query_params",
	"extra_fields", "state", "stability_bonus", "max_shrink", "hubspot",
	NULL
};
static const char *const project_keys[] = { "uuid", "client",
					    "api_key_sha256", "modules", NULL };
static const char *const module_keys[] = { "id", "from", "to", "links",
					   NULL };

static int parse_source(struct ctx *c, yaml_node_t *n,
			struct lb_url_source *s)
{
	static const struct {
		const char *key;
		enum lb_source_kind kind;
	} kinds[] = {
		{ "sitemap_index", LB_SOURCE_SITEMAP_INDEX },
		{ "sitemap", LB_SOURCE_SITEMAP },
		{ "html_sitemap", LB_SOURCE_HTML_SITEMAP },
		{ "robots", LB_SOURCE_ROBOTS },
	};
	size_t i, found = 0;

	if (check_keys(c, n, "a URL source", source_keys) < 0)
		return -1;
	s->line = line_of(n);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (get(c, n, kinds[i].key) == NULL)
			continue;
		found++;
		s->kind = kinds[i].kind;
		if (get_str(c, n, kinds[i].key, 1, &s->url) < 0)
			return -1;
	}
	if (found != 1)
		return cfg_error(c, n,
				 "a URL source needs exactly one of "
				 "sitemap_index, sitemap, html_sitemap, robots");
	if (!valid_http_url(s->url))
		return cfg_error(c, n, "source URL '%s' must start with "
				 "http:// or https://", s->url);
	if (get_str(c, n, "pattern", 0, &s->pattern) < 0)
		return -1;
	if (s->pattern != NULL && s->kind != LB_SOURCE_SITEMAP_INDEX)
		return cfg_error(c, get(c, n, "pattern"),
				 "'pattern' only applies to a sitemap_index");
	if (s->pattern != NULL) {
		struct lb_error perr;
		lb_error_init(&perr);
		if (!urlpattern_valid(s->pattern, &perr))
			return cfg_error(c, get(c, n, "pattern"), "%s", perr.msg);
	}
	return 0;
}

static const struct lb_set *find_set(const struct lb_client *cl,
				     const char *name)
{
	size_t i;

	for (i = 0; i < cl->n_sets; i++)
		if (strcmp(cl->sets[i].name, name) == 0)
			return &cl->sets[i];
	return NULL;
}

static const char *const hubspot_keys[] = {
	"token_env", "object", "links", "blogs", "post_filters", "api_version",
	"base_url", "without_links", "archive_gone", "weekly", NULL
};

/* 1 if s is [A-Za-z_][A-Za-z0-9_]*: an environment variable's name. */
static int valid_env_name(const char *s)
{
	const char *p;

	if (s == NULL || !((*s >= 'A' && *s <= 'Z') ||
			   (*s >= 'a' && *s <= 'z') || *s == '_'))
		return 0;
	for (p = s; *p != '\0'; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return 0;
	return 1;
}

/* 1 if s is "v3" or a date version "YYYY-MM". */
static int valid_hubspot_version(const char *s)
{
	int i;

	if (strcmp(s, "v3") == 0)
		return 1;
	if (strlen(s) != 7 || s[4] != '-')
		return 0;
	for (i = 0; i < 7; i++)
		if (i != 4 && (s[i] < '0' || s[i] > '9'))
			return 0;
	return (s[5] == '0' && s[6] >= '1') || (s[5] == '1' && s[6] <= '2');
}

/* 1 if s is a HubSpot object or property name: [a-z][a-z0-9_]{0,99}. */
static int valid_hubspot_name(const char *s)
{
	size_t i;

	if (!(s[0] >= 'a' && s[0] <= 'z') || strlen(s) > 100)
		return 0;
	for (i = 1; s[i] != '\0'; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

/* The endpoint's hubspot: block (docs/hubspot.md). */
static int parse_hubspot(struct ctx *c, yaml_node_t *n, struct lb_endpoint *ep)
{
	static const char *const days[] = { "sunday", "monday", "tuesday",
					    "wednesday", "thursday", "friday",
					    "saturday" };
	struct lb_hubspot *h;
	char *s = NULL;
	size_t i;
	int rc = -1;

	if (n->type != YAML_MAPPING_NODE)
		return cfg_error(c, n, "'hubspot' must be a mapping "
				 "(token_env: ..., object: ...)");
	if (check_keys(c, n, "the hubspot settings", hubspot_keys) < 0)
		return -1;
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return lb_error_set(c->err, LB_ENOMEM, "out of memory");
	ep->hubspot = h;
	h->line = line_of(n);
	h->n = ep->links;
	h->random_fill = 1;
	h->weekly = -1;
	if (get_str(c, n, "token_env", 1, &h->token_env) < 0)
		goto out;
	if (!valid_env_name(h->token_env)) {
		cfg_error(c, get(c, n, "token_env"),
			  "token_env names an environment variable holding "
			  "the token (like HUBSPOT_TOKEN), not the token "
			  "itself");
		goto out;
	}
	if (get_str(c, n, "object", 0, &h->object) < 0 ||
	    get_int(c, n, "links", 1, 100, &h->n) < 0 ||
	    get_strlist(c, n, "blogs", &h->blogs) < 0 ||
	    get_strlist(c, n, "post_filters", &h->post_filters) < 0 ||
	    get_str(c, n, "api_version", 0, &h->api_version) < 0 ||
	    get_str(c, n, "base_url", 0, &h->base_url) < 0 ||
	    get_bool(c, n, "archive_gone", &h->archive_gone) < 0)
		goto out;
	if (h->object == NULL &&
	    (h->object = strdup("linkbot_related_posts")) == NULL)
		goto nomem;
	if (!valid_hubspot_name(h->object)) {
		cfg_error(c, get(c, n, "object"),
			  "object '%s' must be 1-100 of a-z 0-9 _ starting "
			  "with a letter", h->object);
		goto out;
	}
	for (i = 0; i < h->blogs.n; i++) {
		const char *b = h->blogs.v[i];
		if (b[strspn(b, "0123456789")] != '\0') {
			cfg_error(c, get(c, n, "blogs"),
				  "blogs are blog IDs (contentGroupId, "
				  "digits), not '%s'", b);
			goto out;
		}
	}
	for (i = 0; i < h->post_filters.n; i++) {
		const char *f = h->post_filters.v[i];
		const char *eq = strchr(f, '=');
		if (eq == NULL || eq == f || strchr(f, '&') != NULL) {
			cfg_error(c, get(c, n, "post_filters"),
				  "post filter '%s' must be one "
				  "property__operator=value (for example "
				  "slug__contains=guide)", f);
			goto out;
		}
	}
	if (h->api_version == NULL &&
	    (h->api_version = strdup("2026-03")) == NULL)
		goto nomem;
	if (!valid_hubspot_version(h->api_version)) {
		cfg_error(c, get(c, n, "api_version"),
			  "api_version '%s' must be a date version like "
			  "2026-03, or v3 (the legacy paths)", h->api_version);
		goto out;
	}
	if (h->base_url == NULL &&
	    (h->base_url = strdup("https://api.hubapi.com")) == NULL)
		goto nomem;
	if (!valid_http_url(h->base_url)) {
		cfg_error(c, get(c, n, "base_url"),
			  "base_url '%s' must start with http:// or https://",
			  h->base_url);
		goto out;
	}
	if (get_str(c, n, "without_links", 0, &s) < 0)
		goto out;
	if (s != NULL && strcmp(s, "random") != 0 && strcmp(s, "skip") != 0) {
		cfg_error(c, get(c, n, "without_links"),
			  "without_links '%s' must be random (the default: "
			  "random posts until links exist) or skip (no "
			  "instance until then)", s);
		goto out;
	}
	h->random_fill = s == NULL || strcmp(s, "random") == 0;
	free(s);
	s = NULL;
	if (get_str(c, n, "weekly", 0, &s) < 0)
		goto out;
	if (s != NULL) {
		for (i = 0; i < 7; i++)
			if (strcasecmp(s, days[i]) == 0)
				h->weekly = (int)i;
		if (h->weekly < 0) {
			cfg_error(c, get(c, n, "weekly"),
				  "weekly '%s' must be a weekday (monday .. "
				  "sunday): links are recomputed that day, "
				  "new posts synced daily", s);
			goto out;
		}
	}
	rc = 0;
	goto out;
nomem:
	lb_error_set(c->err, LB_ENOMEM, "out of memory");
out:
	free(s);
	return rc;
}

static int parse_endpoint(struct ctx *c, yaml_node_t *n,
			  struct lb_client *cl, struct lb_endpoint *ep)
{
	char *s = NULL;
	size_t i;
	int rc = -1;

	if (check_keys(c, n, "an endpoint", endpoint_keys) < 0)
		return -1;
	ep->line = line_of(n);
	ep->links = 8;
	ep->min_incoming = -1;
	ep->random_completion = -1;
	ep->stability_bonus = 0.01;
	ep->max_shrink = 0.2;
	if (get_str(c, n, "id", 1, &ep->id) < 0)
		goto out;
	if (!config_valid_id(ep->id)) {
		cfg_error(c, get(c, n, "id"),
			  "endpoint id '%s' must be 1-64 of a-z 0-9 - _ "
			  "starting with a letter or digit", ep->id);
		goto out;
	}
	if (get_str(c, n, "variant", 0, &s) < 0)
		goto out;
	if (s == NULL || strcmp(s, "standard") == 0)
		ep->variant = LB_VARIANT_STANDARD;
	else if (strcmp(s, "enterprise") == 0)
		ep->variant = LB_VARIANT_ENTERPRISE;
	else {
		cfg_error(c, get(c, n, "variant"),
			  "variant '%s' must be standard or enterprise", s);
		goto out;
	}
	free(s);
	s = NULL;
	if (get_str(c, n, "source", 1, &s) < 0)
		goto out;
	if ((ep->source = find_set(cl, s)) == NULL) {
		cfg_error(c, get(c, n, "source"),
			  "source set '%s' is not defined in this client's sets",
			  s);
		goto out;
	}
	free(s);
	s = NULL;
	if (get_str(c, n, "target", 0, &s) < 0)
		goto out;
	ep->target = s ? find_set(cl, s) : ep->source;
	if (ep->target == NULL) {
		cfg_error(c, get(c, n, "target"),
			  "target set '%s' is not defined in this client's sets",
			  s);
		goto out;
	}
	free(s);
	s = NULL;
	if (get_int(c, n, "links", 1, 100, &ep->links) < 0 ||
	    get_int(c, n, "min_incoming", 0, 1000, &ep->min_incoming) < 0 ||
	    get_int(c, n, "max_incoming", 0, 1000000, &ep->max_incoming) < 0 ||
	    get_bool(c, n, "random_completion", &ep->random_completion) < 0 ||
	    get_bool(c, n, "multi_language", &ep->multi_language) < 0 ||
	    get_strlist(c, n, "query_params", &ep->query_params) < 0 ||
	    get_strlist(c, n, "extra_fields", &ep->extra_fields) < 0 ||
	    get_str(c, n, "state", 0, &s) < 0)
		goto out;
	if (get_double(c, n, "stability_bonus", 0.0, 1.0,
		       &ep->stability_bonus) < 0 ||
	    get_double(c, n, "max_shrink", 0.0, 1.0, &ep->max_shrink) < 0)
		goto out;
	if (ep->min_incoming < 0)
		ep->min_incoming = ep->links;
	if (ep->random_completion < 0)
		ep->random_completion = 1;
	if (ep->max_incoming > 0 && ep->max_incoming < ep->min_incoming) {
		cfg_error(c, get(c, n, "max_incoming"),
			  "max_incoming (%d) is below min_incoming (%d)",
			  ep->max_incoming, ep->min_incoming);
		goto out;
	}
	for (i = 0; i < ep->query_params.n; i++)
		if (strcmp(ep->query_params.v[i], "*") == 0)
			ep->query_keep_all = 1;
	for (i = 0; i < ep->extra_fields.n; i++) {
		const char *f = ep->extra_fields.v[i];
		int known = 0, k;
		for (k = 0; k < LB_F__COUNT; k++)
			known |= strcmp(f, lb_doc_field_name(k)) == 0;
		if (!known) {
			cfg_error(c, get(c, n, "extra_fields"),
				  "extra field '%s' is not an index field "
				  "(title, description, author, category, "
				  "image_url, language, location, "
				  "published_time, read_time, url_qs_params, "
				  "text)", f);
			goto out;
		}
	}
	if (s == NULL || strcmp(s, "active") == 0)
		ep->state = LB_EP_ACTIVE;
	else if (strcmp(s, "pending") == 0)
		ep->state = LB_EP_PENDING;
	else if (strcmp(s, "disabled") == 0)
		ep->state = LB_EP_DISABLED;
	else {
		cfg_error(c, get(c, n, "state"),
			  "state '%s' must be active, pending or disabled", s);
		goto out;
	}
	if (get(c, n, "hubspot") != NULL &&
	    parse_hubspot(c, get(c, n, "hubspot"), ep) < 0)
		goto out;
	rc = 0;
out:
	free(s);
	return rc;
}

/* Does a set have a pattern that is not a '!' exclusion? */
static int includes_something(const struct lb_strlist *patterns)
{
	size_t i;

	for (i = 0; i < patterns->n; i++)
		if (patterns->v[i][0] != '!')
			return 1;
	return 0;
}

static int parse_sets(struct ctx *c, yaml_node_t *n, struct lb_client *cl)
{
	yaml_node_pair_t *p;
	size_t count;

	if (n == NULL)
		return cfg_error(c, NULL, "client '%s' has no 'sets'", cl->id);
	if (n->type != YAML_MAPPING_NODE)
		return cfg_error(c, n,
				 "'sets' must map a set name to its URL "
				 "patterns, e.g. 'blog: [\"example.com/blog/{slug}\"]'");
	count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	cl->sets = calloc(count ? count : 1, sizeof(*cl->sets));
	if (cl->sets == NULL)
		return lb_error_set(c->err, LB_ENOMEM, "out of memory");
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
		struct lb_set *set = &cl->sets[cl->n_sets];
		yaml_node_item_t *it;
		const char *name = scalar(k);

		if (!config_valid_id(name))
			return cfg_error(c, k,
					 "set name '%s' must be 1-64 of a-z 0-9 "
					 "- _", name ? name : "?");
		if (find_set(cl, name) != NULL)
			return cfg_error(c, k, "set '%s' is defined twice",
					 name);
		set->line = line_of(k);
		if ((set->name = strdup(name)) == NULL)
			return lb_error_set(c->err, LB_ENOMEM, "out of memory");
		cl->n_sets++;
		if (v->type == YAML_SCALAR_NODE && *scalar(v) != '\0') {
			if (lb_strlist_add(&set->patterns, scalar(v), c->err) < 0)
				return -1;
			if (!includes_something(&set->patterns))
				return cfg_error(c, v,
						 "set '%s' has only a '!' "
						 "exclusion, so it matches no "
						 "page", name);
			continue;
		}
		if (v->type != YAML_SEQUENCE_NODE ||
		    v->data.sequence.items.start == v->data.sequence.items.top)
			return cfg_error(c, v,
					 "set '%s' needs one or more URL "
					 "patterns", name);
		for (it = v->data.sequence.items.start;
		     it < v->data.sequence.items.top; it++) {
			const char *s = scalar(node(c, *it));
			if (s == NULL || *s == '\0')
				return cfg_error(c, node(c, *it),
						 "a URL pattern must be a "
						 "non-empty value");
			if (lb_strlist_add(&set->patterns, s, c->err) < 0)
				return -1;
		}
		if (!includes_something(&set->patterns))
			return cfg_error(c, v,
					 "set '%s' has only '!' exclusions, so "
					 "it matches no page: add the patterns "
					 "of the pages it holds", name);
	}
	return 0;
}

/* Each URL pattern of each set must compile (docs/crawl.md). */
static int check_patterns(struct ctx *c, yaml_node_t *sets_node,
			  const struct lb_client *cl)
{
	size_t i, j;

	for (i = 0; i < cl->n_sets; i++) {
		const struct lb_set *set = &cl->sets[i];
		for (j = 0; j < set->patterns.n; j++) {
			struct lb_error perr;
			lb_error_init(&perr);
			if (!urlpattern_valid(set->patterns.v[j], &perr))
				return cfg_error(c, get(c, sets_node, set->name),
						 "set '%s': %s", set->name,
						 perr.msg);
		}
	}
	return 0;
}

static int parse_client(struct ctx *c, yaml_node_t *n, struct lb_config *cfg,
			struct lb_client *cl)
{
	yaml_node_item_t *items;
	size_t count, i, j;

	if (check_keys(c, n, "a client", client_keys) < 0)
		return -1;
	cl->line = line_of(n);
	if (get_str(c, n, "id", 1, &cl->id) < 0)
		return -1;
	if (!config_valid_id(cl->id))
		return cfg_error(c, get(c, n, "id"),
				 "client id '%s' must be 1-64 of a-z 0-9 - _ "
				 "starting with a letter or digit", cl->id);
	if (config_client(cfg, cl->id) != NULL)
		return cfg_error(c, get(c, n, "id"),
				 "client '%s' is defined twice", cl->id);
	if (get_seq(c, n, "sources", &items, &count) < 0)
		return -1;
	if (count == 0)
		return cfg_error(c, n, "client '%s' needs at least one URL "
				 "source under 'sources'", cl->id);
	cl->sources = calloc(count, sizeof(*cl->sources));
	if (cl->sources == NULL)
		return lb_error_set(c->err, LB_ENOMEM, "out of memory");
	for (i = 0; i < count; i++) {
		cl->n_sources++;	/* counted first: freed even if it fails */
		if (parse_source(c, node(c, items[i]), &cl->sources[i]) < 0)
			return -1;
	}
	if (parse_sets(c, get(c, n, "sets"), cl) < 0 ||
	    check_patterns(c, get(c, n, "sets"), cl) < 0)
		return -1;
	if (get_seq(c, n, "endpoints", &items, &count) < 0)
		return -1;
	cl->endpoints = calloc(count ? count : 1, sizeof(*cl->endpoints));
	if (cl->endpoints == NULL)
		return lb_error_set(c->err, LB_ENOMEM, "out of memory");
	for (i = 0; i < count; i++) {
		struct lb_endpoint *ep = &cl->endpoints[i];
		cl->n_endpoints++;
		if (parse_endpoint(c, node(c, items[i]), cl, ep) < 0)
			return -1;
		for (j = 0; j < i; j++)
			if (strcmp(cl->endpoints[j].id, ep->id) == 0)
				return cfg_error(c, node(c, items[i]),
						 "endpoint '%s' is defined "
						 "twice in client '%s'",
						 ep->id, cl->id);
	}
	return 0;
}

static int valid_sha256_hex(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return i == 64;
}

static int parse_project(struct ctx *c, yaml_node_t *n, struct lb_config *cfg,
			 struct lb_project *pr)
{
	yaml_node_item_t *items;
	size_t count, i, j;
	char *client = NULL;
	int rc = -1;

	if (check_keys(c, n, "a project", project_keys) < 0)
		return -1;
	pr->line = line_of(n);
	if (get_str(c, n, "uuid", 1, &pr->uuid) < 0 ||
	    get_str(c, n, "client", 1, &client) < 0 ||
	    get_strlist(c, n, "api_key_sha256", &pr->key_sha256) < 0)
		goto out;
	if (!valid_uuid(pr->uuid)) {
		cfg_error(c, get(c, n, "uuid"),
			  "project uuid '%s' must be 1-64 of A-Z a-z 0-9 - _",
			  pr->uuid);
		goto out;
	}
	if ((pr->client = config_client(cfg, client)) == NULL) {
		cfg_error(c, get(c, n, "client"),
			  "project client '%s' is not defined under 'clients'",
			  client);
		goto out;
	}
	if (pr->key_sha256.n == 0) {
		cfg_error(c, n,
			  "project '%s' needs api_key_sha256: the SHA-256 hex "
			  "of each API key (never the key itself; "
			  "`printf %%s KEY | sha256sum`)", pr->uuid);
		goto out;
	}
	for (i = 0; i < pr->key_sha256.n; i++)
		if (!valid_sha256_hex(pr->key_sha256.v[i])) {
			cfg_error(c, get(c, n, "api_key_sha256"),
				  "'%s' is not a lower-case SHA-256 hex "
				  "digest (64 characters)", pr->key_sha256.v[i]);
			goto out;
		}
	if (get_seq(c, n, "modules", &items, &count) < 0)
		goto out;
	if (count == 0) {
		cfg_error(c, n, "project '%s' needs at least one module",
			  pr->uuid);
		goto out;
	}
	pr->modules = calloc(count, sizeof(*pr->modules));
	if (pr->modules == NULL) {
		lb_error_set(c->err, LB_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < count; i++) {
		yaml_node_t *m = node(c, items[i]);
		struct lb_module *mod = &pr->modules[i];
		pr->n_modules++;
		mod->links = 8;
		mod->line = line_of(m);
		if (check_keys(c, m, "a module", module_keys) < 0 ||
		    get_str(c, m, "id", 1, &mod->id) < 0 ||
		    get_str(c, m, "from", 1, &mod->from) < 0 ||
		    get_str(c, m, "to", 1, &mod->to) < 0 ||
		    get_int(c, m, "links", 1, 100, &mod->links) < 0)
			goto out;
		if (mod->from[0] != '/' || mod->to[0] != '/') {
			cfg_error(c, m, "module '%s': 'from' and 'to' are "
				  "path prefixes starting with '/'", mod->id);
			goto out;
		}
		for (j = 0; j < i; j++)
			if (strcmp(pr->modules[j].id, mod->id) == 0) {
				cfg_error(c, get(c, m, "id"),
					  "module '%s' is defined twice in "
					  "project '%s' (first at line %d): "
					  "module ids must differ",
					  mod->id, pr->uuid,
					  pr->modules[j].line);
				goto out;
			}
	}
	rc = 0;
out:
	free(client);
	return rc;
}

/*
 * "s3://b/p/", "dir:./x/", "x" -> "s3://b/p", "x": a location without
 * "dir:", "./" and trailing slashes, to compare two of them as prefixes.
 */
static void location_norm(const char *in, char *out, size_t cap)
{
	size_t n;

	if (strncmp(in, "dir:", 4) == 0)
		in += 4;
	while (strncmp(in, "./", 2) == 0)
		in += 2;
	snprintf(out, cap, "%s", in);
	n = strlen(out);
	while (n > 1 && out[n - 1] == '/')
		out[--n] = '\0';
}

/*
 * state_store keeps the corpus (every page's full text) and the links: it
 * must be private, so never the published store nor under its prefix (the
 * edge serves that prefix, often from a public bucket). state_sync alone
 * used to mean "under the store's _state/": refused, with the fix.
 */
int config_state_inside(const char *state_store, const char *store)
{
	char st[1024], pub[1024];
	size_t n;

	location_norm(state_store, st, sizeof(st));
	location_norm(store ? store : "public", pub, sizeof(pub));
	n = strlen(pub);
	return strncmp(st, pub, n) == 0 &&
	       (st[n] == '\0' || st[n] == '/' || pub[n - 1] == '/');
}

static int check_state_store(struct ctx *c, yaml_node_t *root,
			     struct lb_config *cfg)
{
	char st[1024];

	if (cfg->state_store == NULL) {
		if (cfg->state_sync)
			return cfg_error(c, get(c, root, "state_sync"),
					 "state_sync needs a private "
					 "state_store (e.g. state_store: "
					 "s3://private-bucket/linkbot-state); "
					 "the published store is readable by "
					 "the edge");
		return 0;
	}
	cfg->state_sync = 1;
	location_norm(cfg->state_store, st, sizeof(st));
	if (*st == '\0' || strcmp(st, "s3:") == 0)
		return cfg_error(c, get(c, root, "state_store"),
				 "state_store is empty");
	if (config_state_inside(cfg->state_store, cfg->store))
		return cfg_error(c, get(c, root, "state_store"),
				 "state_store '%s' is inside the published "
				 "store '%s': the corpus would be public; "
				 "use a location of its own (another bucket "
				 "or prefix)", cfg->state_store,
				 cfg->store ? cfg->store : "public");
	return 0;
}

static int parse_root(struct ctx *c, yaml_node_t *root,
		      struct lb_config *cfg)
{
	yaml_node_t *n;
	yaml_node_item_t *items;
	size_t count, i;

	if (root == NULL)
		return cfg_error(c, NULL, "the file is empty");
	if (check_keys(c, root, "the top level", top_keys) < 0)
		return -1;
	if (get_str(c, root, "store", 0, &cfg->store) < 0 ||
	    get_str(c, root, "state", 0, &cfg->state_dir) < 0 ||
	    get_bool(c, root, "state_sync", &cfg->state_sync) < 0 ||
	    get_str(c, root, "state_store", 0, &cfg->state_store) < 0 ||
	    check_state_store(c, root, cfg) < 0)
		return -1;
	if (cfg->store != NULL && !config_valid_store(cfg->store))
		return cfg_error(c, get(c, root, "store"),
				 "store '%s' is neither a directory nor "
				 "s3://BUCKET/PREFIX", cfg->store);
	if ((n = get(c, root, "s3")) != NULL) {
		if (check_keys(c, n, "s3", s3_keys) < 0 ||
		    get_str(c, n, "endpoint", 0, &cfg->s3.endpoint) < 0 ||
		    get_str(c, n, "region", 0, &cfg->s3.region) < 0 ||
		    get_bool(c, n, "path_style", &cfg->s3.path_style) < 0)
			return -1;
		if (cfg->s3.endpoint && !valid_http_url(cfg->s3.endpoint))
			return cfg_error(c, get(c, n, "endpoint"),
					 "s3 endpoint must start with http:// "
					 "or https://");
	}
	if ((n = get(c, root, "crawl")) != NULL) {
		if (check_keys(c, n, "crawl", crawl_keys) < 0 ||
		    get_int(c, n, "pages_per_minute",
			    LB_CRAWL_PAGES_PER_MINUTE_MIN,
			    LB_CRAWL_PAGES_PER_MINUTE_MAX,
			    &cfg->crawl.pages_per_minute) < 0 ||
		    get_str(c, n, "bot_info_url", 0,
			    &cfg->crawl.bot_info_url) < 0 ||
		    get_bool(c, n, "allow_private", &cfg->crawl.allow_private) < 0 ||
		    get_long(c, n, "max_pages", 1, 100000000L,
			     &cfg->crawl.max_pages) < 0 ||
		    get_long(c, n, "max_body_bytes", 1024, 1L << 30,
			     &cfg->crawl.max_body_bytes) < 0 ||
		    get_int(c, n, "timeout_seconds", 1, 600,
			    &cfg->crawl.timeout_seconds) < 0 ||
		    get_int(c, n, "max_redirects", 0, 20,
			    &cfg->crawl.max_redirects) < 0 ||
		    get_int(c, n, "jobs", 1, 100000, &cfg->crawl.jobs) < 0 ||
		    get_int(c, n, "build_jobs", 0, 1024,
			    &cfg->crawl.build_jobs) < 0 ||
		    get_int(c, n, "max_connections", 1, 100000,
			    &cfg->crawl.max_connections) < 0)
			return -1;
	}
	if ((n = get(c, root, "relate")) != NULL) {
		yaml_node_t *e;
		const char *m;
		if (check_keys(c, n, "relate", relate_keys) < 0 ||
		    get_str(c, n, "method", 0, &cfg->relate.method) < 0)
			return -1;
		m = cfg->relate.method;
		if (m != NULL && strcmp(m, "lsa") && strcmp(m, "tfidf") &&
		    strcmp(m, "embeddings"))
			return cfg_error(c, get(c, n, "method"),
					 "relate method '%s' must be lsa, tfidf "
					 "or embeddings", m);
		if ((e = get(c, n, "embeddings")) != NULL &&
		    (check_keys(c, e, "relate.embeddings", embed_keys) < 0 ||
		     get_str(c, e, "url", 1, &cfg->relate.embed_url) < 0 ||
		     get_str(c, e, "model", 1, &cfg->relate.embed_model) < 0 ||
		     get_str(c, e, "cache", 0, &cfg->relate.embed_cache) < 0))
			return -1;
		if (cfg->relate.embed_url != NULL &&
		    !valid_http_url(cfg->relate.embed_url))
			return cfg_error(c, e, "embeddings url must start with "
					 "http:// or https://");
		if (m != NULL && strcmp(m, "embeddings") == 0 &&
		    cfg->relate.embed_url == NULL)
			return cfg_error(c, n, "method embeddings needs "
					 "'embeddings: {url: ..., model: ...}'");
	}
	if (get_seq(c, root, "clients", &items, &count) < 0)
		return -1;
	cfg->clients = calloc(count ? count : 1, sizeof(*cfg->clients));
	if (cfg->clients == NULL)
		return lb_error_set(c->err, LB_ENOMEM, "out of memory");
	for (i = 0; i < count; i++) {
		if (parse_client(c, node(c, items[i]), cfg, &cfg->clients[i]) < 0) {
			cfg->n_clients = i + 1;
			return -1;
		}
		cfg->n_clients = i + 1;
	}
	if (get_seq(c, root, "projects", &items, &count) < 0)
		return -1;
	cfg->projects = calloc(count ? count : 1, sizeof(*cfg->projects));
	if (cfg->projects == NULL)
		return lb_error_set(c->err, LB_ENOMEM, "out of memory");
	for (i = 0; i < count; i++) {
		cfg->n_projects = i + 1;
		if (parse_project(c, node(c, items[i]), cfg,
				  &cfg->projects[i]) < 0)
			return -1;
		if (i > 0) {
			size_t j;
			for (j = 0; j < i; j++)
				if (!strcmp(cfg->projects[j].uuid,
					    cfg->projects[i].uuid))
					return cfg_error(c, node(c, items[i]),
							 "project '%s' is "
							 "defined twice",
							 cfg->projects[i].uuid);
		}
	}
	return 0;
}

static int set_defaults(struct lb_config *cfg, struct lb_error *err)
{
	if (cfg->store == NULL && (cfg->store = strdup("public")) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	if (cfg->state_dir == NULL && (cfg->state_dir = strdup("state")) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	if (cfg->s3.region == NULL && (cfg->s3.region = strdup("us-east-1")) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	if (cfg->crawl.bot_info_url == NULL &&
	    (cfg->crawl.bot_info_url =
		     strdup("https://github.com/linkbot/linkbot#crawler")) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	return 0;
}

/* A second document ('---') would be ignored silently: refuse it. */
static int one_document(yaml_parser_t *parser, const char *name,
			struct lb_error *err)
{
	yaml_document_t next;
	yaml_node_t *root;
	int rc = 0;

	if (!yaml_parser_load(parser, &next))
		return lb_error_set(err, LB_ECONFIG, "%s:%lu: %s", name,
				    (unsigned long)parser->problem_mark.line + 1,
				    parser->problem ? parser->problem :
						      "invalid YAML");
	if ((root = yaml_document_get_root_node(&next)) != NULL)
		rc = lb_error_set(err, LB_ECONFIG,
				  "%s:%lu: a second YAML document: linkbot reads "
				  "one; merge it into the first or remove the "
				  "'---' line",
				  name, (unsigned long)root->start_mark.line + 1);
	yaml_document_delete(&next);
	return rc;
}

/*
 * YAML aliases: libyaml loads "*a" as a second reference to the anchored
 * node, so nine aliases of nine aliases of ... (a billion laughs) is a
 * small document that the readers below would walk in exponential time,
 * and "&a [*a]" is a cycle. The size of the document with every alias
 * expanded is counted once per node (memoised) and must stay under
 * CFG_MAX_NODES, its nesting under CFG_MAX_DEPTH.
 */
#define CFG_MAX_NODES 100000
#define CFG_MAX_DEPTH 64

static int expanded(struct ctx *c, int idx, size_t *memo, unsigned char *busy,
		    int depth, size_t *out)
{
	yaml_node_t *n = node(c, idx);
	size_t i = (size_t)idx - 1, total = 1, sub;

	if (n == NULL) {
		*out = 0;
		return 0;
	}
	if (memo[i] != 0) {
		*out = memo[i];
		return 0;
	}
	if (busy[i] || depth > CFG_MAX_DEPTH)
		return cfg_error(c, n, "YAML nested too deep or an alias "
				 "inside itself (at most %d levels)",
				 CFG_MAX_DEPTH);
	busy[i] = 1;
	if (n->type == YAML_SEQUENCE_NODE) {
		yaml_node_item_t *it;

		for (it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			if (expanded(c, *it, memo, busy, depth + 1, &sub) < 0)
				return -1;
			total += sub;
			if (total > CFG_MAX_NODES)
				break;
		}
	} else if (n->type == YAML_MAPPING_NODE) {
		yaml_node_pair_t *p;

		for (p = n->data.mapping.pairs.start;
		     p < n->data.mapping.pairs.top; p++) {
			if (expanded(c, p->key, memo, busy, depth + 1, &sub) < 0)
				return -1;
			total += sub;
			if (expanded(c, p->value, memo, busy, depth + 1, &sub) <
			    0)
				return -1;
			total += sub;
			if (total > CFG_MAX_NODES)
				break;
		}
	}
	busy[i] = 0;
	if (total > CFG_MAX_NODES)
		return cfg_error(c, n, "YAML aliases expand to more than %d "
				 "nodes", CFG_MAX_NODES);
	memo[i] = total;
	*out = total;
	return 0;
}

static int yaml_expansion_check(struct ctx *c)
{
	size_t n = (size_t)(c->doc->nodes.top - c->doc->nodes.start), total;
	size_t *memo;
	unsigned char *busy;
	int rc = -1;

	if (n == 0)
		return 0;
	memo = calloc(n, sizeof(*memo));
	busy = calloc(n, 1);
	if (memo == NULL || busy == NULL)
		lb_error_set(c->err, LB_ENOMEM, "out of memory");
	else
		rc = expanded(c, 1, memo, busy, 0, &total);
	free(memo);
	free(busy);
	return rc;
}

int config_parse(const char *name, const char *text, size_t len,
		 struct lb_config **out, struct lb_error *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct lb_config *cfg = NULL;
	struct ctx c = { name, &doc, err };
	int have_doc = 0, rc = -1;

	*out = NULL;
	if (!yaml_parser_initialize(&parser))
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		lb_error_set(err, LB_ECONFIG, "%s:%lu: %s%s%s", name,
			     (unsigned long)parser.problem_mark.line + 1,
			     parser.problem ? parser.problem : "invalid YAML",
			     parser.context ? " " : "",
			     parser.context ? parser.context : "");
		goto out;
	}
	have_doc = 1;
	if (yaml_expansion_check(&c) < 0)
		goto out;
	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	cfg->crawl.pages_per_minute = LB_CRAWL_PAGES_PER_MINUTE;
	cfg->crawl.max_pages = LB_CRAWL_MAX_PAGES;
	cfg->crawl.max_body_bytes = LB_CRAWL_MAX_BODY_BYTES;
	cfg->crawl.timeout_seconds = LB_CRAWL_TIMEOUT_SECONDS;
	cfg->crawl.max_redirects = LB_CRAWL_MAX_REDIRECTS;
	cfg->crawl.jobs = LB_DEFAULT_JOBS;
	cfg->s3.path_style = 1;
	if ((cfg->path = strdup(name)) == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	if (parse_root(&c, yaml_document_get_root_node(&doc), cfg) < 0 ||
	    set_defaults(cfg, err) < 0 || one_document(&parser, name, err) < 0)
		goto out;
	*out = cfg;
	cfg = NULL;
	rc = 0;
out:
	config_free(cfg);
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

int config_load(const char *path, struct lb_config **out,
		struct lb_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if (lb_file_read(path, CONFIG_MAX_BYTES, &text, &len, err) < 0)
		return -1;
	rc = config_parse(path, text, len, out, err);
	free(text);
	return rc;
}

static void config_hubspot_free(struct lb_hubspot *h)
{
	if (h == NULL)
		return;
	free(h->token_env);
	free(h->object);
	lb_strlist_release(&h->blogs);
	lb_strlist_release(&h->post_filters);
	free(h->api_version);
	free(h->base_url);
	free(h);
}

void config_free(struct lb_config *cfg)
{
	size_t i, j;

	if (cfg == NULL)
		return;
	for (i = 0; i < cfg->n_clients; i++) {
		struct lb_client *cl = &cfg->clients[i];
		for (j = 0; j < cl->n_sources; j++) {
			free(cl->sources[j].url);
			free(cl->sources[j].pattern);
		}
		free(cl->sources);
		for (j = 0; j < cl->n_sets; j++) {
			free(cl->sets[j].name);
			lb_strlist_release(&cl->sets[j].patterns);
		}
		free(cl->sets);
		for (j = 0; j < cl->n_endpoints; j++) {
			free(cl->endpoints[j].id);
			lb_strlist_release(&cl->endpoints[j].query_params);
			lb_strlist_release(&cl->endpoints[j].extra_fields);
			config_hubspot_free(cl->endpoints[j].hubspot);
		}
		free(cl->endpoints);
		free(cl->id);
	}
	free(cfg->clients);
	for (i = 0; i < cfg->n_projects; i++) {
		struct lb_project *pr = &cfg->projects[i];
		for (j = 0; j < pr->n_modules; j++) {
			free(pr->modules[j].id);
			free(pr->modules[j].from);
			free(pr->modules[j].to);
		}
		free(pr->modules);
		lb_strlist_release(&pr->key_sha256);
		free(pr->uuid);
	}
	free(cfg->projects);
	free(cfg->path);
	free(cfg->store);
	free(cfg->state_store);
	free(cfg->state_dir);
	free(cfg->s3.endpoint);
	free(cfg->s3.region);
	free(cfg->crawl.bot_info_url);
	free(cfg->relate.method);
	free(cfg->relate.embed_url);
	free(cfg->relate.embed_model);
	free(cfg->relate.embed_cache);
	free(cfg);
}

const struct lb_client *config_client(const struct lb_config *cfg,
				      const char *id)
{
	size_t i;

	if (id == NULL)
		return NULL;
	for (i = 0; i < cfg->n_clients; i++)
		if (cfg->clients[i].id && strcmp(cfg->clients[i].id, id) == 0)
			return &cfg->clients[i];
	return NULL;
}

const struct lb_endpoint *config_endpoint(const struct lb_client *client,
					  const char *id)
{
	size_t i;

	for (i = 0; i < client->n_endpoints; i++)
		if (client->endpoints[i].id &&
		    strcmp(client->endpoints[i].id, id) == 0)
			return &client->endpoints[i];
	return NULL;
}

const char *config_variant_name(enum lb_variant v)
{
	return v == LB_VARIANT_ENTERPRISE ? "enterprise" : "standard";
}

const char *config_state_name(enum lb_ep_state s)
{
	return s == LB_EP_PENDING ? "pending" :
	       s == LB_EP_DISABLED ? "disabled" : "active";
}
