/*
 * pipeline.c - the nightly job: the stages in order, for each client and
 * endpoint selected (see pipeline.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linkbot/crawl.h"
#include "linkbot/log.h"
#include "linkbot/render.h"
#include "internal.h"

char *pipeline_links_path(const struct lb_config *cfg,
			  const struct lb_client *cl,
			  const struct lb_endpoint *ep)
{
	size_t n = strlen(cfg->state_dir) + strlen(cl->id) + strlen(ep->id) + 16;
	char *p = malloc(n);

	if (p != NULL)
		snprintf(p, n, "%s/%s/%s/links.tsv", cfg->state_dir, cl->id,
			 ep->id);
	return p;
}

uint64_t pipeline_seed(const struct lb_run_opts *opts, const char *client,
		       const char *endpoint)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */
	time_t now = opts->now ? opts->now : time(NULL);
	const char *parts[2] = { client, endpoint };
	size_t i;

	h ^= opts->have_seed ? opts->seed : (uint64_t)(now / 86400);
	for (i = 0; i < 2; i++) {
		const char *s;
		for (s = parts[i]; *s != '\0'; s++) {
			h ^= (unsigned char)*s;
			h *= 1099511628211ULL;
		}
		h ^= '/';
		h *= 1099511628211ULL;
	}
	return h;
}

/* Does the --endpoint selection ("client" or "client/endpoint") take it? */
static int selected(const struct lb_run_opts *opts, const char *client,
		    const char *endpoint)
{
	size_t n;

	if (opts->endpoint == NULL)
		return 1;
	n = strlen(client);
	if (strncmp(opts->endpoint, client, n) != 0)
		return 0;
	if (opts->endpoint[n] == '\0')
		return 1;
	return opts->endpoint[n] == '/' &&
	       (endpoint == NULL || strcmp(opts->endpoint + n + 1, endpoint) == 0);
}

struct client_run {
	const struct lb_config *cfg;
	const struct lb_client *cl;
	const struct lb_run_opts *opts;
	struct lb_corpus *corpus;
	struct pages pages;
	int pages_loaded;
	struct lb_store *store;
	struct lb_run_stats *stats;
	unsigned failed_endpoints;	/* bit per endpoint index (first 32) */
};

static int stage_crawl(struct client_run *r, struct lb_error *err)
{
	struct lb_crawl_opts co;
	struct lb_crawl_stats cs;
	struct lb_error cerr;

	memset(&co, 0, sizeof(co));
	memset(&cs, 0, sizeof(cs));
	co.force = r->opts->force;
	co.urls_file = r->opts->urls_file;
	co.no_rate_limit = r->opts->no_rate_limit;
	co.progress = r->opts->progress;
	co.now = r->opts->now;
	lb_error_init(&cerr);
	if (crawl_client(r->cfg, r->cl, r->corpus, &co, &cs, &cerr) < 0) {
		lb_error_set(err, cerr.code, "%s", cerr.msg);
		return -1;
	}
	log_info("%s: %ld URLs from the sources, %ld fetched, %ld indexed, "
		 "%ld not modified, %ld excluded, %ld failed (kept), %ld removed",
		 r->cl->id, cs.urls_seen, cs.fetched, cs.indexed,
		 cs.not_modified, cs.excluded, cs.failed, cs.removed);
	return 0;
}

/* How much of the texts publish needs: an Enterprise extra field "text". */
static size_t text_needed(const struct lb_client *cl)
{
	size_t i, j;

	for (i = 0; i < cl->n_endpoints; i++)
		for (j = 0; j < cl->endpoints[i].extra_fields.n; j++)
			if (strcmp(cl->endpoints[i].extra_fields.v[j],
				   "text") == 0)
				return LB_RENDER_TEXT_MAX;
	return 0;
}

static int load_pages(struct client_run *r, struct lb_error *err)
{
	if (r->pages_loaded)
		return 0;
	if (pages_load(r->corpus, text_needed(r->cl), &r->pages, err) < 0)
		return -1;
	r->pages_loaded = 1;
	log_info("%s: %zu live pages in the corpus", r->cl->id, r->pages.n);
	return 0;
}

typedef int (*endpoint_fn)(struct client_run *r, const struct lb_endpoint *ep,
			   struct lb_error *err);

static int build_one(struct client_run *r, const struct lb_endpoint *ep,
		     struct lb_error *err)
{
	struct link_job job;
	int rc;

	if (ep->state == LB_EP_PENDING)
		return 0;	/* pending: not computed until activated */
	if (link_job_endpoint(&job, r->cfg, r->cl, ep) < 0)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	rc = pipeline_build(&job, &r->pages, r->opts, err);
	link_job_release(&job);
	return rc;
}

static int publish_one(struct client_run *r, const struct lb_endpoint *ep,
		       struct lb_error *err)
{
	return pipeline_publish_endpoint(r->cfg, r->cl, ep, &r->pages,
					 r->store, r->opts, err);
}

/*
 * Runs fn on each selected endpoint. An endpoint's failure is reported and
 * counted, and the others go on; an environment error (no memory, disk,
 * store) stops everything.
 */
static int each_endpoint(struct client_run *r, endpoint_fn fn,
			 struct lb_error *err)
{
	size_t i;

	if (load_pages(r, err) < 0)
		return -1;
	for (i = 0; i < r->cl->n_endpoints; i++) {
		const struct lb_endpoint *ep = &r->cl->endpoints[i];
		struct lb_error eerr;

		if (!selected(r->opts, r->cl->id, ep->id))
			continue;
		if (i < 32 && (r->failed_endpoints & (1u << i)))
			continue;	/* its build failed: keep the old answers */
		lb_error_init(&eerr);
		if (fn(r, ep, &eerr) == 0)
			continue;
		if (eerr.code == LB_ENOMEM || eerr.code == LB_EIO ||
		    eerr.code == LB_ESTORE || eerr.code == LB_ESTATE) {
			lb_error_set(err, eerr.code, "%s/%s: %s", r->cl->id,
				     ep->id, eerr.msg);
			return -1;
		}
		log_warnx("%s/%s failed: %s", r->cl->id, ep->id, eerr.msg);
		if (i < 32)
			r->failed_endpoints |= 1u << i;
		r->stats->endpoints_failed++;
	}
	return 0;
}

typedef int (*project_fn)(struct client_run *r, const struct lb_project *pr,
			  struct lb_error *err);

static int build_project(struct client_run *r, const struct lb_project *pr,
			 struct lb_error *err)
{
	return pipeline_build_project(r->cfg, pr, &r->pages, r->opts, err);
}

static int publish_project(struct client_run *r, const struct lb_project *pr,
			   struct lb_error *err)
{
	return pipeline_publish_project(r->cfg, pr, &r->pages, r->store,
					r->opts, err);
}

/* Runs fn on the client's projects (when the whole client is selected). */
static int each_project(struct client_run *r, project_fn fn,
			struct lb_error *err)
{
	size_t i;

	if (r->opts->endpoint != NULL && strchr(r->opts->endpoint, '/'))
		return 0;
	for (i = 0; i < r->cfg->n_projects; i++) {
		const struct lb_project *pr = &r->cfg->projects[i];
		struct lb_error perr;

		if (pr->client != r->cl)
			continue;
		lb_error_init(&perr);
		if (fn(r, pr, &perr) == 0)
			continue;
		if (perr.code == LB_ENOMEM || perr.code == LB_EIO ||
		    perr.code == LB_ESTORE || perr.code == LB_ESTATE) {
			lb_error_set(err, perr.code, "project %s: %s", pr->uuid,
				     perr.msg);
			return -1;
		}
		log_warnx("project %s failed: %s", pr->uuid, perr.msg);
		r->stats->endpoints_failed++;
	}
	return 0;
}

static int stage_build(struct client_run *r, struct lb_error *err)
{
	if (each_endpoint(r, build_one, err) < 0)
		return -1;
	return each_project(r, build_project, err);
}

static int stage_publish(struct client_run *r, struct lb_error *err)
{
	if (each_endpoint(r, publish_one, err) < 0)
		return -1;
	return each_project(r, publish_project, err);
}

/* The stages of the nightly job, in order. */
static const struct stage {
	enum lb_stage bit;
	const char *name;
	int (*fn)(struct client_run *r, struct lb_error *err);
} stages[] = {
	{ LB_STAGE_CRAWL, "crawl", stage_crawl },
	{ LB_STAGE_BUILD, "build", stage_build },
	{ LB_STAGE_PUBLISH, "publish", stage_publish },
};

/*
 * state_store (a private location, never the published store): the
 * corpus and each endpoint's links.tsv come back before a run (a CI runner
 * starts empty) and go back as soon as the stage that wrote them is done,
 * whatever happens after (a failed publish must not cost a recrawl).
 */
static int state_links(struct client_run *r, struct lb_store *ss, int push,
		       struct lb_error *err)
{
	char rel[300];
	size_t e;

	for (e = 0; e < r->cl->n_endpoints; e++) {
		const struct lb_endpoint *ep = &r->cl->endpoints[e];

		if (!selected(r->opts, r->cl->id, ep->id))
			continue;
		snprintf(rel, sizeof(rel), "%s/%s/links.tsv", r->cl->id, ep->id);
		if ((push ? state_file_push(ss, r->cfg->state_dir, rel, err) :
			    state_file_pull(ss, r->cfg->state_dir, rel, err)) < 0)
			return -1;
	}
	return 0;
}

static int state_after(struct client_run *r, struct lb_store *ss,
		       enum lb_stage bit, struct lb_error *err)
{
	if (ss == NULL)
		return 0;
	if (bit == LB_STAGE_BUILD)
		return state_links(r, ss, 1, err);
	if (bit != LB_STAGE_CRAWL)
		return 0;
	/* the upload needs the WAL folded in: close, push, reopen */
	corpus_free(r->corpus);
	r->corpus = NULL;
	if (corpus_push(ss, r->cfg->state_dir, r->cl->id, err) < 0)
		return -1;
	return corpus_open(r->cfg->state_dir, r->cl->id, &r->corpus, err);
}

int pipeline_run(const struct lb_config *cfg, unsigned which,
		 const struct lb_run_opts *opts, struct lb_run_stats *stats,
		 struct lb_error *err)
{
	struct lb_store *store = NULL, *ss = NULL;
	size_t c, s;
	int rc = -1, matched = 0;

	memset(stats, 0, sizeof(*stats));
	for (c = 0; c < cfg->n_clients; c++)
		matched |= selected(opts, cfg->clients[c].id, NULL);
	if (!matched)
		return lb_error_set(err, LB_EUSAGE,
				    "no client or endpoint '%s' in '%s'",
				    opts->endpoint, cfg->path);
	/* credentials before any crawl: one cheap request to each store */
	if (((which & LB_STAGE_PUBLISH) &&
	     (store_open(cfg, opts->store ? opts->store : cfg->store, &store,
			 err) < 0 ||
	      store_check(store, err) < 0)) ||
	    (cfg->state_sync && cfg->state_store != NULL &&
	     (store_open(cfg, cfg->state_store, &ss, err) < 0 ||
	      store_check(ss, err) < 0))) {
		store_free(store);
		store_free(ss);
		return -1;
	}
	for (c = 0; c < cfg->n_clients; c++) {
		struct client_run r;

		if (!selected(opts, cfg->clients[c].id, NULL))
			continue;
		memset(&r, 0, sizeof(r));
		r.cfg = cfg;
		r.cl = &cfg->clients[c];
		r.opts = opts;
		r.store = store;
		r.stats = stats;
		if (ss != NULL &&
		    (corpus_pull(ss, cfg->state_dir, r.cl->id, err) < 0 ||
		     state_links(&r, ss, 0, err) < 0))
			goto out;
		if (corpus_open(cfg->state_dir, r.cl->id, &r.corpus, err) < 0)
			goto out;
		for (s = 0; s < sizeof(stages) / sizeof(stages[0]); s++) {
			if (!(which & stages[s].bit))
				continue;
			log_stage(stages[s].name);
			if (stages[s].fn(&r, err) < 0 ||
			    state_after(&r, ss, stages[s].bit, err) < 0) {
				if (r.pages_loaded)
					pages_release(&r.pages);
				corpus_free(r.corpus);
				goto out;
			}
		}
		if (r.pages_loaded)
			pages_release(&r.pages);
		corpus_free(r.corpus);
	}
	rc = 0;
out:
	log_stage("linkbot");
	store_free(store);
	store_free(ss);
	return rc;
}
