/*
 * config.h - the configuration: what to crawl, how to group pages into sets,
 * which endpoints to compute and where to publish them.
 *
 * Loaded from human-edited YAML (examples/linkbot.yaml is the commented
 * reference). Loading validates everything up front; an error names the
 * file, the line and what to change, and nothing has been touched.
 *
 *   struct lb_config *cfg;
 *   if (config_load("linkbot.yaml", &cfg, &err) < 0) ...
 *   ... read cfg (plain structs, read-only for everyone else) ...
 *   config_free(cfg);
 *
 * The config owns every string and array in it.
 */
#ifndef LINKBOT_CONFIG_H
#define LINKBOT_CONFIG_H

#include <stddef.h>
#include "linkbot/doc.h"
#include "linkbot/error.h"

enum lb_source_kind {
	LB_SOURCE_SITEMAP_INDEX,	/* XML sitemap index (+ optional pattern) */
	LB_SOURCE_SITEMAP,		/* XML sitemap (.xml or .xml.gz) */
	LB_SOURCE_HTML_SITEMAP,		/* an HTML page whose links are pages */
	LB_SOURCE_ROBOTS,		/* robots.txt: its Sitemap: lines */
};

struct lb_url_source {
	enum lb_source_kind kind;
	char *url;
	char *pattern;		/* sitemap index only: which sub-sitemaps; may be NULL */
	int line;
};

/* A named set of pages: URL patterns, see urlpattern.h (config/urlpattern.c). */
struct lb_set {
	char *name;
	struct lb_strlist patterns;
	int line;
};

enum lb_variant { LB_VARIANT_STANDARD, LB_VARIANT_ENTERPRISE };

/*
 * The HubSpot integration of an endpoint (SPEC 1.12, 1.13, 2.6, 4.4;
 * docs/hubspot.md): its links copied into a CRM custom object.
 */
struct lb_hubspot {
	char *token_env;		/* name of the variable holding the token */
	char *object;			/* custom object name */
	int n;				/* related_post_1..n */
	struct lb_strlist blogs;	/* contentGroupId of the blogs read; none = all */
	struct lb_strlist post_filters;	/* extra "param=value" of the posts listing */
	char *api_version;		/* "2026-03" (date-based) or "v3" */
	char *base_url;			/* https://api.hubapi.com */
	int random_fill;		/* posts without links get random posts */
	int archive_gone;		/* archive instances of posts that are gone */
	int weekly;			/* -1, or the weekday 0..6 (Sunday = 0) on
					   which links are recomputed */
	int line;
};
enum lb_ep_state { LB_EP_ACTIVE, LB_EP_PENDING, LB_EP_DISABLED };

struct lb_endpoint {
	char *id;			/* module_id (standard) or page_type (enterprise) */
	enum lb_variant variant;
	const struct lb_set *source;	/* borrowed from the client */
	const struct lb_set *target;
	int links;			/* links per page, L */
	int min_incoming;		/* k */
	int max_incoming;		/* 0 = no cap */
	double stability_bonus;		/* weight of keeping last run's links */
	double max_shrink;		/* share of published answers a night may
					   remove without --allow-shrink */
	int random_completion;		/* fill with random links */
	int multi_language;		/* pair only pages of one language */
	int query_keep_all;		/* query_params: ["*"] */
	struct lb_strlist query_params;	/* names that take part in page IDs */
	struct lb_strlist extra_fields;	/* enterprise: extra index fields */
	enum lb_ep_state state;
	int line;
	struct lb_hubspot *hubspot;	/* NULL: no HubSpot sync */
};

struct lb_client {
	char *id;
	struct lb_url_source *sources;
	size_t n_sources;
	struct lb_set *sets;
	size_t n_sets;
	struct lb_endpoint *endpoints;
	size_t n_endpoints;
	int line;
};

struct lb_module {
	char *id;
	char *from;		/* path prefix of the originating pages */
	char *to;		/* path prefix of the target pages */
	int links;
	int line;
};

struct lb_project {
	char *uuid;
	const struct lb_client *client;	/* borrowed */
	struct lb_strlist key_sha256;	/* hex SHA-256 of each API key */
	struct lb_module *modules;
	size_t n_modules;
	int line;
};

/*
 * The crawl defaults, spelled once: lb_config_load() starts from them and
 * the crawler falls back on them for a settings struct built by hand
 * (tests, tools). SPEC.md: 60..240 pages a minute per host.
 */
#define LB_CRAWL_PAGES_PER_MINUTE 120
#define LB_CRAWL_PAGES_PER_MINUTE_MIN 60
#define LB_CRAWL_PAGES_PER_MINUTE_MAX 240
#define LB_CRAWL_MAX_PAGES 1000000L
#define LB_CRAWL_MAX_BODY_BYTES (10L << 20)
#define LB_CRAWL_TIMEOUT_SECONDS 30
#define LB_CRAWL_MAX_REDIRECTS 5

struct lb_crawl_settings {
	int pages_per_minute;	/* 60..240, per host */
	char *bot_info_url;
	int allow_private;	/* allow loopback/private addresses (tests) */
	long max_pages;		/* cap on URLs per client per run */
	long max_body_bytes;
	int timeout_seconds;
	int max_redirects;
	/* the night (docs/crawl.md, "Many sites in one night") */
	int jobs;		/* clients in flight at once (crawl to publish) */
	int build_jobs;		/* builds + publishes at once; 0: the cores */
	int max_connections;	/* transfers in flight over all clients;
				   0: config_connections()'s rule */
};

#define LB_DEFAULT_JOBS 256
/* crawl.max_connections unset: LB_CONNECTIONS_PER_CLIENT a client at once,
   at least LB_DEFAULT_MAX_CONNECTIONS (docs/crawl.md, "Sizing") */
#define LB_DEFAULT_MAX_CONNECTIONS 256
#define LB_CONNECTIONS_PER_CLIENT 2

struct lb_s3_settings {
	char *endpoint;		/* https://s3.amazonaws.com, http://127.0.0.1:4569 */
	char *region;
	int path_style;
};

/* How relatedness is measured (docs/relate.md). */
struct lb_relate_settings {
	char *method;		/* "lsa" (default), "tfidf" or "embeddings" */
	char *embed_url;	/* OpenAI-compatible base URL, e.g. http://host/v1 */
	char *embed_model;
	char *embed_cache;	/* content-hash cache file; default state/embeddings.cache */
};

struct lb_config {
	char *path;		/* the file it was loaded from */
	char *store;		/* a directory, or s3://bucket/prefix */
	struct lb_s3_settings s3;
	char *state_dir;
	int state_sync;		/* keep the state in state_store between runs */
	char *state_store;	/* private: a directory or s3://bucket/prefix,
				   never under store (set: state_sync on) */
	struct lb_crawl_settings crawl;
	struct lb_relate_settings relate;
	struct lb_client *clients;
	size_t n_clients;
	struct lb_project *projects;
	size_t n_projects;
};

int config_load(const char *path, struct lb_config **out,
		struct lb_error *err);
/* Parses YAML text; name is used in messages. */
int config_parse(const char *name, const char *text, size_t len,
		 struct lb_config **out, struct lb_error *err);
void config_free(struct lb_config *cfg);

const struct lb_client *config_client(const struct lb_config *cfg,
				      const char *id);
const struct lb_endpoint *config_endpoint(const struct lb_client *client,
					  const char *id);

/* 1 if s is a valid client or endpoint id: [a-z0-9][a-z0-9_-]{0,63}. */
/* The night's cap on transfers in flight for CLIENTS clients at once. */
unsigned config_connections(const struct lb_crawl_settings *crawl,
			    unsigned clients);
int config_valid_id(const char *s);

/* A store location: a directory, "dir:PATH" or "s3://BUCKET[/PREFIX]". */
int config_valid_store(const char *s);

/*
 * 1 if the state location state_store is store itself or inside it (store
 * NULL: the default "public"): the corpus would be published. The config
 * refuses it; so does `run --store`.
 */
int config_state_inside(const char *state_store, const char *store);

const char *config_variant_name(enum lb_variant v);
const char *config_state_name(enum lb_ep_state s);

#endif
