/*
 * pipeline.c - the nightly job: the stages in order, for each client and
 * endpoint selected (see pipeline.h).
 */
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "linkbot/crawl.h"
#include "linkbot/fsutil.h"
#include "linkbot/hubspot.h"
#include "linkbot/layout.h"
#include "linkbot/log.h"
#include "linkbot/publish.h"
#include "linkbot/relate.h"
#include "linkbot/render.h"
#include "linkbot/wait.h"
#include "internal.h"
#include "sched.h"

/*
 * What --endpoint selects: nothing given (everything), a client, one
 * endpoint of a client, or one project (by its uuid). Resolved once, before
 * anything runs, so that a typo is an error and not a night that does
 * nothing.
 */
struct selection {
	const struct lb_client *client;		/* NULL: every client */
	const struct lb_endpoint *ep;		/* NULL: all of the client's */
	const struct lb_project *project;	/* only this project */
	unsigned share_i, share_n;		/* --clients: share_n 0 = all */
};

static int list_names(const struct lb_config *cfg, char *buf, size_t size)
{
	size_t c, e, len = 0;

	buf[0] = '\0';
#define ADD(...) (len += (size_t)snprintf(buf + len, len < size ? size - len : 0, __VA_ARGS__))
	for (c = 0; c < cfg->n_clients; c++) {
		const struct lb_client *cl = &cfg->clients[c];
		ADD("%s%s", len ? ", " : "", cl->id);
		for (e = 0; e < cl->n_endpoints; e++)
			ADD(", %s/%s", cl->id, cl->endpoints[e].id);
	}
	for (c = 0; c < cfg->n_projects; c++)
		ADD("%s%s (project)", len ? ", " : "", cfg->projects[c].uuid);
#undef ADD
	if (len >= size && size > 4)
		memcpy(buf + size - 4, "...", 4);
	return 0;
}

static int resolve_selection(const struct lb_config *cfg, const char *what,
			     struct selection *sel, struct lb_error *err)
{
	char names[300];
	const char *slash;
	size_t i, n;

	memset(sel, 0, sizeof(*sel));
	if (what == NULL)
		return 0;
	slash = strchr(what, '/');
	n = slash ? (size_t)(slash - what) : strlen(what);
	for (i = 0; i < cfg->n_clients; i++) {
		const struct lb_client *cl = &cfg->clients[i];
		if (strlen(cl->id) != n || strncmp(cl->id, what, n) != 0)
			continue;
		sel->client = cl;
		if (slash == NULL)
			return 0;
		if ((sel->ep = config_endpoint(cl, slash + 1)) != NULL)
			return 0;
	}
	for (i = 0; slash == NULL && i < cfg->n_projects; i++)
		if (strcmp(cfg->projects[i].uuid, what) == 0) {
			sel->project = &cfg->projects[i];
			sel->client = sel->project->client;
			return 0;
		}
	list_names(cfg, names, sizeof(names));
	return lb_error_set(err, LB_EUSAGE,
			    "no client, endpoint or project '%s' in '%s' "
			    "(known: %s)", what, cfg->path,
			    *names ? names : "none");
}

static int selected_client(const struct selection *sel,
			   const struct lb_client *cl)
{
	return (sel->client == NULL || sel->client == cl) &&
	       (sel->share_n == 0 ||
		pipeline_client_share(cl->id, sel->share_n) == sel->share_i);
}

/*
 * --clients I/N on top of --endpoint (the intersection): says which
 * clients this job takes, or that it takes none (a job of N whose share
 * is empty has nothing to do, and that is not a failure).
 */
static void resolve_share(const struct lb_config *cfg,
			  const struct lb_run_opts *opts, struct selection *sel)
{
	char names[300];
	size_t c, len = 0, n = 0;

	if (opts->clients_n == 0)
		return;
	sel->share_i = opts->clients_i;
	sel->share_n = opts->clients_n;
	names[0] = '\0';
	for (c = 0; c < cfg->n_clients; c++) {
		if (!selected_client(sel, &cfg->clients[c]))
			continue;
		n++;
		if (len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len,
						"%s%s", len ? ", " : "",
						cfg->clients[c].id);
	}
	if (len >= sizeof(names))
		memcpy(names + sizeof(names) - 4, "...", 4);
	if (n == 0)
		log_info("clients %u/%u: no client of '%s'%s%s%s falls in this "
			 "share; nothing to do", sel->share_i, sel->share_n,
			 cfg->path, opts->endpoint ? " (--endpoint " : "",
			 opts->endpoint ? opts->endpoint : "",
			 opts->endpoint ? ")" : "");
	else
		log_info("clients %u/%u: %zu of %zu client(s): %s",
			 sel->share_i, sel->share_n, n, cfg->n_clients, names);
}

static int selected_endpoint(const struct selection *sel,
			     const struct lb_endpoint *ep)
{
	return sel->project == NULL && (sel->ep == NULL || sel->ep == ep);
}

static int selected_project(const struct selection *sel,
			    const struct lb_project *pr)
{
	return sel->ep == NULL &&
	       (sel->project == NULL || sel->project == pr);
}

struct client_run {
	const struct lb_config *cfg;
	const struct lb_client *cl;
	const struct lb_run_opts *opts;
	const struct selection *sel;
	struct lb_corpus *corpus;
	struct pages pages;
	int pages_loaded;
	struct lb_store *store;
	struct lb_run_stats *stats;
	unsigned failed_endpoints;	/* bit per endpoint index (first 32) */
	unsigned nodata_endpoints;	/* failed for want of pages: published
					   pending if they never were */
	struct lb_report *report;	/* the night's run report */
	time_t started;			/* its start (--now or the clock) */
	struct timespec t_start;
	sem_t *conn_slots;		/* the night's cap on transfers */
};

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void report_crawled_page(void *arg, const char *url,
				const char *outcome, int status,
				const char *why)
{
	report_page(arg, url, outcome, status, why);
}

static struct lb_report_endpoint *ep_report(struct client_run *r,
					    const struct lb_endpoint *ep)
{
	return report_endpoint(r->report, ep->id,
			       config_variant_name(ep->variant));
}

/* The crawl's doc_terms: each page's terms made as it is stored. */
static void crawl_doc_terms(void *arg, struct lb_doc *doc)
{
	relate_terms_doc(arg, doc);	/* none: the build tokenizes it */
}

/* Does the build tokenize pages as relate_terms_doc() does (the default
 * method)? Then the crawl makes their terms. */
static int build_uses_terms(const struct lb_config *cfg)
{
	return cfg->relate.method == NULL ||
	       strcmp(cfg->relate.method, "lsa") == 0;
}

/* A client's crawl options; *terms is freed by crawl_told(). */
static void crawl_opts(struct client_run *r, struct lb_crawl_opts *co,
		       struct relate_terms **terms)
{
	memset(co, 0, sizeof(*co));
	co->force = r->opts->force;
	co->urls_file = r->opts->urls_file;
	co->no_rate_limit = r->opts->no_rate_limit;
	co->progress = r->opts->progress;
	co->now = r->opts->now;
	co->on_page = report_crawled_page;
	co->on_page_arg = r->report;
	co->conn_slots = r->conn_slots;
	*terms = NULL;
	if (build_uses_terms(r->cfg) &&
	    (*terms = relate_terms_new()) != NULL) {
		co->doc_terms = crawl_doc_terms;
		co->doc_terms_arg = *terms;
	}
}

/* The crawl is over (crc, cerr): into the report and the log. */
static int crawl_told(struct client_run *r, int crc,
		      const struct lb_crawl_stats *cs,
		      const struct lb_error *cerr, struct relate_terms *terms,
		      struct lb_error *err)
{
	relate_terms_free(terms);
	if (crc < 0) {
		lb_error_set(err, cerr->code, "%s", cerr->msg);
		return -1;
	}
	{
		struct lb_report_crawl rc = { cs->urls_seen, cs->fetched,
					      cs->indexed, cs->not_modified,
					      cs->excluded, cs->failed,
					      cs->removed };
		report_crawl(r->report, &rc);
	}
	log_info("%s: %ld URLs from the sources, %ld fetched, %ld indexed, "
		 "%ld not modified, %ld excluded, %ld failed (kept), %ld removed",
		 r->cl->id, cs->urls_seen, cs->fetched, cs->indexed,
		 cs->not_modified, cs->excluded, cs->failed, cs->removed);
	return 0;
}

static int stage_crawl(struct client_run *r, struct lb_error *err)
{
	struct lb_crawl_opts co;
	struct lb_crawl_stats cs;
	struct lb_error cerr;
	struct relate_terms *terms;
	int crc;

	crawl_opts(r, &co, &terms);
	memset(&cs, 0, sizeof(cs));
	lb_error_init(&cerr);
	crc = crawl_client(r->cfg, r->cl, r->corpus, &co, &cs, &cerr);
	return crawl_told(r, crc, &cs, &cerr, terms, err);
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

/*
 * The pages, once a night. For the build they hold their full texts when
 * the client's fit in PIPELINE_TEXTS_MAX (relate reads them there, not
 * through a second parse from the corpus), and drop them after it.
 */
#define PIPELINE_TEXTS_MAX ((size_t)64 << 20)

static int load_pages(struct client_run *r, int for_build,
		      struct lb_error *err)
{
	if (r->pages_loaded)
		return 0;
	if (pages_load(r->corpus, text_needed(r->cl),
		       for_build ? PIPELINE_TEXTS_MAX : 0, &r->pages,
		       err) < 0)
		return -1;
	r->pages_loaded = 1;
	log_info("%s: %zu live pages in the corpus", r->cl->id, r->pages.n);
	return 0;
}

typedef int (*endpoint_fn)(struct client_run *r, const struct lb_endpoint *ep,
			   struct lb_error *err);

/*
 * SPEC 1.12: a CMS endpoint's links are computed weekly (hubspot.weekly,
 * a weekday) while new posts are crawled, published and synced daily (they
 * get random posts until then). 1 when today is not the day and last
 * week's links exist.
 */
static int hubspot_keep_week(struct client_run *r, const struct lb_endpoint *ep)
{
	time_t now = r->opts->now ? r->opts->now : time(NULL);
	struct tm tm;
	char *path;
	FILE *f;

	if (ep->hubspot == NULL || ep->hubspot->weekly < 0 ||
	    gmtime_r(&now, &tm) == NULL || tm.tm_wday == ep->hubspot->weekly)
		return 0;
	if ((path = pipeline_links_path(r->cfg, r->cl, ep)) == NULL)
		return 0;
	f = fopen(path, "r");
	free(path);
	if (f == NULL)
		return 0;	/* never computed: compute now */
	fclose(f);
	log_info("%s/%s: links are recomputed weekly; keeping this week's",
		 r->cl->id, ep->id);
	return 1;
}

static int build_one(struct client_run *r, const struct lb_endpoint *ep,
		     struct lb_error *err)
{
	struct link_job job;
	int rc;

	if (ep->state == LB_EP_PENDING)
		return 0;	/* pending: not computed until activated */
	if (hubspot_keep_week(r, ep))
		return 0;
	if (link_job_endpoint(&job, r->cfg, r->cl, ep) < 0)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	job.report = ep_report(r, ep);
	rc = pipeline_build(&job, &r->pages, r->opts, err);
	link_job_release(&job);
	return rc;
}

/*
 * What publish needs of one endpoint (or, with ep NULL, of a project)
 * tonight: the run's clock, seed and dry run, never the options.
 */
static void publish_job(struct lb_publish_job *pj, const struct client_run *r,
			const struct lb_endpoint *ep, const char *links_path,
			struct lb_report_endpoint *rep)
{
	memset(pj, 0, sizeof(*pj));
	pj->cl = r->cl;
	pj->ep = ep;
	pj->pages = &r->pages;
	pj->links_path = links_path;
	pj->store = r->store;
	pj->now = r->opts->now ? r->opts->now : time(NULL);
	if (ep != NULL)
		pj->seed = pipeline_seed(r->opts, r->cl->id, ep->id) ^ 0x5eed;
	pj->dry_run = r->opts->dry_run;
	pj->allow_shrink = r->opts->allow_shrink;
	pj->rep = rep;
}

static int publish_one(struct client_run *r, const struct lb_endpoint *ep,
		       struct lb_error *err)
{
	struct lb_report_endpoint *rep = ep_report(r, ep);
	struct lb_publish_job pj;
	struct timespec t0;
	char *links;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((links = pipeline_links_path(r->cfg, r->cl, ep)) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	publish_job(&pj, r, ep, links, rep);
	rc = publish_endpoint(&pj, err);
	free(links);
	if (rep != NULL)
		rep->publish_seconds = seconds_since(&t0);
	return rc;
}

/*
 * Runs fn on each selected endpoint. An endpoint's failure is reported and
 * counted, and the others go on; an environment error (no memory, disk,
 * store) stops everything. An endpoint whose build found no page (the
 * sources failed, or its set matches nothing) is not published: it keeps
 * what it had, or, if it never had data, is published pending (the edge
 * answers 204).
 */
static int each_endpoint(struct client_run *r, endpoint_fn fn,
			 struct lb_error *err)
{
	size_t i;

	if (load_pages(r, fn == build_one, err) < 0)
		return -1;
	for (i = 0; i < r->cl->n_endpoints; i++) {
		const struct lb_endpoint *ep = &r->cl->endpoints[i];
		unsigned bit = i < 32 ? 1u << i : 0;
		struct lb_error eerr;

		if (!selected_endpoint(r->sel, ep))
			continue;
		lb_error_init(&eerr);
		if (r->nodata_endpoints & bit) {
			struct lb_publish_job pj;

			publish_job(&pj, r, ep, NULL, NULL);
			if (fn == publish_one && publish_pending(&pj, &eerr) < 0)
				goto failed;
			continue;
		}
		if (r->failed_endpoints & bit)
			continue;	/* its build failed: keep the old answers */
		if (fn(r, ep, &eerr) == 0)
			continue;
failed:
		if (eerr.code == LB_ENOMEM || eerr.code == LB_EIO ||
		    eerr.code == LB_ESTORE || eerr.code == LB_ESTATE) {
			lb_error_set(err, eerr.code, "%s/%s: %s", r->cl->id,
				     ep->id, eerr.msg);
			return -1;
		}
		log_warnx("%s/%s failed: %s", r->cl->id, ep->id, eerr.msg);
		report_endpoint_outcome(ep_report(r, ep),
					eerr.code == LB_ESHRINK ? "refused" :
					eerr.code == LB_ENODATA ? "no data" :
					"failed", eerr.msg);
		if (eerr.code == LB_ENODATA)
			r->nodata_endpoints |= bit;
		else
			r->failed_endpoints |= bit;
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
	struct lb_publish_job pj;

	publish_job(&pj, r, NULL, NULL, NULL);
	pj.pr = pr;
	pj.state_dir = r->cfg->state_dir;
	return publish_project_answers(&pj, err);
}

/* Runs fn on the client's projects (when the whole client is selected). */
static int each_project(struct client_run *r, project_fn fn,
			struct lb_error *err)
{
	size_t i;

	for (i = 0; i < r->cfg->n_projects; i++) {
		const struct lb_project *pr = &r->cfg->projects[i];
		struct lb_error perr;

		if (pr->client != r->cl || !selected_project(r->sel, pr))
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
	int rc = each_endpoint(r, build_one, err) < 0 ||
		 each_project(r, build_project, err) < 0 ? -1 : 0;

	/* publish needs no full texts: their memory goes now */
	pages_drop_texts(&r->pages);
	return rc;
}

static int stage_publish(struct client_run *r, struct lb_error *err)
{
	if (each_endpoint(r, publish_one, err) < 0)
		return -1;
	return each_project(r, publish_project, err);
}

/*
 * The HubSpot sync of each selected endpoint that configures one: it reads
 * the store, so it needs no pages. Its failure (HubSpot refused, the DAILY
 * limit) is the endpoint's; only the store stops the run.
 */
static int stage_hubspot(struct client_run *r, struct lb_error *err)
{
	struct hubspot_opts ho;
	size_t i;

	memset(&ho, 0, sizeof(ho));
	ho.dry_run = r->opts->dry_run;
	ho.seed = r->opts->have_seed ? r->opts->seed : 0;
	for (i = 0; i < r->cl->n_endpoints; i++) {
		const struct lb_endpoint *ep = &r->cl->endpoints[i];
		struct hubspot_stats hs;
		struct lb_error eerr;

		if (ep->hubspot == NULL || !selected_endpoint(r->sel, ep) ||
		    (i < 32 && ((r->failed_endpoints | r->nodata_endpoints) &
				(1u << i))))
			continue;
		if (ep->state == LB_EP_DISABLED) {
			log_info("%s/%s is disabled: not synced to HubSpot",
				 r->cl->id, ep->id);
			continue;
		}
		lb_error_init(&eerr);
		if (hubspot_sync(r->cfg, r->cl, ep, r->store, &ho, &hs,
				 &eerr) == 0)
			continue;
		if (eerr.code == LB_ENOMEM || eerr.code == LB_ESTORE)
			return lb_error_set(err, eerr.code, "%s/%s: %s",
					    r->cl->id, ep->id, eerr.msg);
		log_warnx("%s/%s: hubspot sync failed: %s", r->cl->id, ep->id,
			  eerr.msg);
		report_endpoint_outcome(ep_report(r, ep), "hubspot sync failed",
					eerr.msg);
		if (i < 32)
			r->failed_endpoints |= 1u << i;
		r->stats->endpoints_failed++;
	}
	return 0;
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
	{ LB_STAGE_HUBSPOT, "hubspot", stage_hubspot },
};

/* Does any endpoint of the client sync to HubSpot? */
static int uses_hubspot(const struct lb_client *cl)
{
	size_t i;

	for (i = 0; i < cl->n_endpoints; i++)
		if (cl->endpoints[i].hubspot != NULL)
			return 1;
	return 0;
}

/* Counts what a client's run did, once its stages are over. */
static void count_client(struct client_run *r)
{
	size_t i;

	r->stats->clients++;
	for (i = 0; i < r->cl->n_endpoints; i++) {
		unsigned bit = i < 32 ? 1u << i : 0;
		if (selected_endpoint(r->sel, &r->cl->endpoints[i]) &&
		    !((r->failed_endpoints | r->nodata_endpoints) & bit))
			r->stats->endpoints_done++;
	}
	for (i = 0; i < r->cfg->n_projects; i++)
		if (r->cfg->projects[i].client == r->cl &&
		    selected_project(r->sel, &r->cfg->projects[i]))
			r->stats->projects++;
}

/*
 * A whole night (every stage, not a dry run) leaves its report in
 * state/<client>/ (report.h); the report is freed either way.
 */
static void finish_report(struct client_run *r, unsigned which)
{
	struct lb_error rerr;
	char *dir = NULL;

	if (r->report == NULL)
		return;
	lb_error_init(&rerr);
	if (which == LB_STAGE_ALL && !r->opts->dry_run) {
		/* finished = started + the wall time, so --now holds too */
		time_t finished = r->started + (time_t)llround(
					seconds_since(&r->t_start));

		dir = lb_path_join(r->cfg->state_dir, r->cl->id);
		if (dir == NULL || report_write(r->report, dir, finished,
						&rerr) < 0)
			/* the night's work is done: say so and go on */
			log_warnx("%s: cannot write the run report: %s",
				  r->cl->id, dir ? rerr.msg : "out of memory");
		else
			log_info("%s: run report in %s/report.html", r->cl->id,
				 dir);
	}
	free(dir);
	report_free(r->report);
	r->report = NULL;
}

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

		if (!selected_endpoint(r->sel, ep))
			continue;
		layout_links_path(rel, sizeof(rel), r->cl->id, ep->id);
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

/*
 * The night's CPU slots (builds and publishes at once). A client that
 * gave its slot back for a wait (wait.h) takes one again before any
 * client starts its build: started work ends first, so the answers of
 * the first clients go out early and the clients in their build or
 * publish, and their memory, stay about `builds`.
 */
struct cpu_slots {
	pthread_mutex_t mu;
	pthread_cond_t start, resume;
	unsigned free;
	unsigned resuming;	/* waiting to take one back */
};

/* Wakes the next waiter a free slot is for (under mu). */
static void slots_pass(struct cpu_slots *c)
{
	if (c->free > 0)
		pthread_cond_signal(c->resuming > 0 ? &c->resume : &c->start);
}

static void slots_take(struct cpu_slots *c, int resume)
{
	pthread_mutex_lock(&c->mu);
	if (resume)
		c->resuming++;
	while (c->free == 0 || (!resume && c->resuming > 0))
		pthread_cond_wait(resume ? &c->resume : &c->start, &c->mu);
	if (resume)
		c->resuming--;
	c->free--;
	slots_pass(c);
	pthread_mutex_unlock(&c->mu);
}

static void slots_give(struct cpu_slots *c)
{
	pthread_mutex_lock(&c->mu);
	c->free++;
	slots_pass(c);
	pthread_mutex_unlock(&c->mu);
}

/*
 * The night: what every client's run shares. With jobs > 1 the clients
 * run at once (sched.c), each with its own store handles, stats and
 * report; they share the caps (transfers in flight, builds at once) and
 * add their counts to the night's under mu.
 */
struct night {
	const struct lb_config *cfg;
	unsigned which;
	const struct lb_run_opts *opts;
	struct selection sel;
	int need_corpus;
	struct lb_store *store, *ss;	/* checked once; the sequential
					   night's handles */
	const struct lb_client **cl;	/* the selected clients */
	struct lb_strlist *hosts;	/* per selected client: its sources' */
	size_t n;
	unsigned jobs;
	struct lb_run_stats *stats;
	pthread_mutex_t mu;
	sem_t conns;			/* transfers in flight */
	struct cpu_slots builds;	/* builds and publishes at once */
	pthread_mutex_t hubspot;	/* one sync at a time: clients may
					   share a HubSpot account's limits */
	struct crawl_loops *loops;	/* the crawls (jobs > 1), else NULL */
	struct night_run **runs;	/* per client in flight with loops */
};

/* Two clients crawled at once must not share a host: each would keep
 * the host's rate, and the host would see twice its rate. */
static int clients_clash(void *arg, size_t i, size_t j)
{
	const struct night *nt = arg;
	size_t a, b;

	for (a = 0; a < nt->hosts[i].n; a++)
		for (b = 0; b < nt->hosts[j].n; b++)
			if (strcmp(nt->hosts[i].v[a], nt->hosts[j].v[b]) == 0)
				return 1;
	return 0;
}

static int night_hosts(struct night *nt, struct lb_error *err)
{
	size_t c;

	if ((nt->hosts = calloc(nt->n ? nt->n : 1, sizeof(*nt->hosts))) ==
	    NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	for (c = 0; c < nt->n; c++)
		if (crawl_source_hosts(nt->cl[c], &nt->hosts[c], err) < 0)
			return -1;
	return 0;
}

/* Adds one client's counts to the night's. */
static void night_count(struct night *nt, const struct lb_run_stats *st)
{
	if (nt->jobs > 1)
		pthread_mutex_lock(&nt->mu);
	nt->stats->clients += st->clients;
	nt->stats->endpoints_done += st->endpoints_done;
	nt->stats->endpoints_failed += st->endpoints_failed;
	nt->stats->projects += st->projects;
	if (nt->jobs > 1)
		pthread_mutex_unlock(&nt->mu);
}

/*
 * A client's builds and publishes take a slot of the night's (they use
 * the CPU): from its first build or publish stage to the end of its last.
 * For the length of a wait for the disk or the network (a sync of the
 * store or of a state file, the S3 queue: wait.h) the slot goes back, so
 * that another client's build uses the CPU meanwhile, and is taken again
 * after it.
 */
struct slot {
	struct night *nt;
	int held;
};

static void build_slot(struct slot *s, int want)
{
	if (s->nt->jobs <= 1 || s->held == want)
		return;
	if (want)
		slots_take(&s->nt->builds, 0);
	else
		slots_give(&s->nt->builds);
	s->held = want;
}

static void slot_wait(void *arg, int waiting)
{
	struct slot *s = arg;

	if (!s->held)
		return;
	if (waiting)
		slots_give(&s->nt->builds);
	else
		slots_take(&s->nt->builds, 1);
}

/*
 * One client's night: its stages in order (sched_fn). In a night of
 * many clients the crawl is handed to the night's crawl loops
 * (crawl_loops, src/crawl/loop.c) instead of holding a thread for its
 * whole length: night_client() sets the client up on a thread of the
 * scheduler and returns SCHED_LATER at the crawl; the loop that crawled
 * it calls night_crawled(), which resumes the item on a new thread
 * (night_resumed()) for the rest of the stages. So the threads of a
 * night are the loops and the clients in their build or publish, not
 * one a client. The client's state lives in a struct night_run between
 * the two.
 */
struct night_run {
	struct night *nt;
	struct sched *sched;
	size_t c;
	struct client_run r;
	struct lb_run_stats st;
	struct lb_run_opts own_opts;
	struct lb_store *own_store, *own_ss, *ss;
	struct slot building;
	size_t s;			/* the stage running */
	struct timespec t0;		/* its start */
	/* the crawl on a loop */
	struct lb_crawl_opts co;
	struct lb_crawl_stats cs;
	struct lb_error cerr;
	struct relate_terms *terms;
	int crc;
};

static int night_resumed(void *arg, size_t c, struct lb_error *err);

/* On the loop's thread: the crawl is over, the stages go on elsewhere. */
static void night_crawled(void *arg, int rc)
{
	struct night_run *nr = arg;

	nr->crc = rc;
	sched_resume(nr->sched, nr->c, night_resumed);
}

/* The end of a client's night, whatever happened (rc). */
static int night_end(struct night_run *nr, int rc)
{
	struct night *nt = nr->nt;

	build_slot(&nr->building, 0);
	if (rc == 0)
		count_client(&nr->r);
	finish_report(&nr->r, nt->which);
	if (nr->r.pages_loaded)
		pages_release(&nr->r.pages);
	corpus_free(nr->r.corpus);
	night_count(nt, &nr->st);
	store_free(nr->own_store);
	store_free(nr->own_ss);
	lb_wait_hook(NULL, NULL);
	log_stage("linkbot");
	if (nt->runs != NULL)
		nt->runs[nr->c] = NULL;
	free(nr);
	return rc;
}

/* Runs the stages from nr->s on; SCHED_LATER when the crawl went to a
 * loop. */
static int night_stages(struct night_run *nr, struct lb_error *err)
{
	struct night *nt = nr->nt;
	struct client_run *r = &nr->r;
	int rc = 0;

	for (; nr->s < sizeof(stages) / sizeof(stages[0]); nr->s++) {
		const struct stage *sg = &stages[nr->s];
		int hubspot = nt->jobs > 1 && sg->bit == LB_STAGE_HUBSPOT;

		if (!(nt->which & sg->bit) ||
		    (sg->bit == LB_STAGE_HUBSPOT && !uses_hubspot(r->cl)))
			continue;
		build_slot(&nr->building, (sg->bit & (LB_STAGE_BUILD |
						      LB_STAGE_PUBLISH)) != 0);
		log_stage(sg->name);
		clock_gettime(CLOCK_MONOTONIC, &nr->t0);
		if (sg->bit == LB_STAGE_CRAWL && nt->loops != NULL) {
			crawl_opts(r, &nr->co, &nr->terms);
			nr->co.log_client = 1;
			memset(&nr->cs, 0, sizeof(nr->cs));
			lb_error_init(&nr->cerr);
			if (crawl_loops_add(nt->loops, r->cl, r->corpus,
					    &nr->co, &nr->cs, night_crawled,
					    nr, &nr->cerr) == 0)
				return SCHED_LATER;
			relate_terms_free(nr->terms);
			lb_error_set(err, nr->cerr.code, "%s", nr->cerr.msg);
			rc = -1;
		} else {
			if (hubspot)
				pthread_mutex_lock(&nt->hubspot);
			rc = sg->fn(r, err) < 0 ||
			     state_after(r, nr->ss, sg->bit, err) < 0 ? -1 : 0;
			if (hubspot)
				pthread_mutex_unlock(&nt->hubspot);
		}
		report_stage(r->report, sg->name, seconds_since(&nr->t0));
		if (rc < 0)
			break;
	}
	return night_end(nr, rc);
}

/* The rest of a client's night, once its crawl on a loop is over. */
static int night_resumed(void *arg, size_t c, struct lb_error *err)
{
	struct night *nt = arg;
	struct night_run *nr = nt->runs[c];
	struct client_run *r = &nr->r;
	int rc;

	log_client(r->cl->id);
	lb_wait_hook(slot_wait, &nr->building);
	log_stage(stages[nr->s].name);
	rc = crawl_told(r, nr->crc, &nr->cs, &nr->cerr, nr->terms, err) < 0 ||
	     state_after(r, nr->ss, LB_STAGE_CRAWL, err) < 0 ? -1 : 0;
	report_stage(r->report, stages[nr->s].name, seconds_since(&nr->t0));
	if (rc < 0)
		return night_end(nr, rc);
	nr->s++;
	return night_stages(nr, err);
}

static int night_client(void *arg, size_t c, struct lb_error *err)
{
	struct night *nt = arg;
	const struct lb_config *cfg = nt->cfg;
	const struct lb_run_opts *opts = nt->opts;
	struct night_run *nr;
	struct client_run *r;

	if ((nr = calloc(1, sizeof(*nr))) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	nr->nt = nt;
	nr->sched = sched_current();
	nr->c = c;
	nr->building.nt = nt;
	if (nt->runs != NULL)
		nt->runs[c] = nr;
	r = &nr->r;
	r->cfg = cfg;
	r->cl = nt->cl[c];
	r->sel = &nt->sel;
	r->store = nt->store;
	r->stats = &nr->st;
	if (nt->jobs > 1) {
		/* no progress bars at once; store handles are not shared */
		nr->own_opts = *opts;
		nr->own_opts.progress = 0;
		nr->own_opts.small_threads = 1;	/* build.c */
		opts = &nr->own_opts;
		log_client(r->cl->id);
		lb_wait_hook(slot_wait, &nr->building);
		if ((nt->store != NULL &&
		     store_open(cfg, opts->store ? opts->store : cfg->store,
				&nr->own_store, err) < 0) ||
		    (nt->ss != NULL &&
		     store_open(cfg, cfg->state_store, &nr->own_ss, err) < 0))
			return night_end(nr, -1);
		r->store = nr->own_store;
		r->conn_slots = &nt->conns;
	}
	r->opts = opts;
	nr->ss = nt->jobs > 1 ? nr->own_ss : nt->ss;
	if (nt->need_corpus && nr->ss != NULL &&
	    (corpus_pull(nr->ss, cfg->state_dir, r->cl->id, err) < 0 ||
	     state_links(r, nr->ss, 0, err) < 0))
		return night_end(nr, -1);
	if (nt->need_corpus &&
	    corpus_open(cfg->state_dir, r->cl->id, &r->corpus, err) < 0)
		return night_end(nr, -1);
	r->started = opts->now ? opts->now : time(NULL);
	clock_gettime(CLOCK_MONOTONIC, &r->t_start);
	r->report = report_new(r->cl->id, r->started);
	return night_stages(nr, err);
}

/*
 * A client in flight holds files: its corpus (SQLite, WAL and shared
 * memory), its quarantine, curl's connections (8 a host) and wake-up pipe,
 * a report or an object being written. A night of --jobs 1000 needs more
 * than the usual soft limit of 1024: raise it to the hard limit, and run
 * fewer clients at once if even that is short (said in the log).
 */
#define NIGHT_FILES_PER_CLIENT 16
#define NIGHT_FILES_SPARE 64

static void night_files(struct night *nt)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)nt->jobs * NIGHT_FILES_PER_CLIENT +
		      NIGHT_FILES_SPARE;
	unsigned fit;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return;
	fit = rl.rlim_cur > NIGHT_FILES_SPARE + NIGHT_FILES_PER_CLIENT ?
		      (unsigned)((rl.rlim_cur - NIGHT_FILES_SPARE) /
				 NIGHT_FILES_PER_CLIENT) : 1;
	log_warnx("%u clients at once need %lu open files, the limit is %lu "
		  "(ulimit -n): %u at once", nt->jobs, (unsigned long)need,
		  (unsigned long)rl.rlim_cur, fit);
	nt->jobs = fit;
}

/*
 * The crawl loops of a night of many clients (src/crawl/loop.c): four a
 * core, at most NIGHT_LOOPS_MAX, never more than the clients at once.
 * Measured (bench/RESULTS.md, issue 25): fetching alone, 4 threads of 250
 * hosts each took 43-56 us a request, 16 of 63 hosts 47 us, one multi for
 * all 1,000 hosts 52-71 us, a thread a host 75-94 us; the whole night on
 * a loaded machine kept the hosts' rates better with 8 loops than with 4
 * (a loop late on its extractions makes every start of its hosts late,
 * and a late start is never caught up), for the same CPU.
 */
#define NIGHT_LOOPS_PER_CORE 4
#define NIGHT_LOOPS_MAX 16

static unsigned night_loops(const struct night *nt)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = (cores > 0 ? (unsigned)cores : 1) * NIGHT_LOOPS_PER_CORE;

	if (n > NIGHT_LOOPS_MAX)
		n = NIGHT_LOOPS_MAX;
	return n < nt->jobs ? n : nt->jobs;
}

/* Clients at once, builds at once: the option, else the config. */
static void night_caps(struct night *nt, unsigned *builds, unsigned *conns)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	nt->jobs = nt->opts->jobs ? nt->opts->jobs :
				    (unsigned)nt->cfg->crawl.jobs;
	*builds = nt->opts->build_jobs ? nt->opts->build_jobs :
		  nt->cfg->crawl.build_jobs > 0 ?
					 (unsigned)nt->cfg->crawl.build_jobs :
					 (unsigned)(cores > 0 ? cores : 1);
	/* the embeddings cache is one file for every client */
	if (nt->cfg->relate.method != NULL &&
	    strcmp(nt->cfg->relate.method, "embeddings") == 0)
		*builds = 1;
	if (nt->jobs < 1)
		nt->jobs = 1;
	if (nt->jobs > nt->n)
		nt->jobs = nt->n ? (unsigned)nt->n : 1;
	if (nt->jobs > 1)
		night_files(nt);
	*conns = config_connections(&nt->cfg->crawl, nt->jobs);
}

int pipeline_run(const struct lb_config *cfg, unsigned which,
		 const struct lb_run_opts *opts, struct lb_run_stats *stats,
		 struct lb_error *err)
{
	struct night nt;
	unsigned builds = 1, conns = 0;
	size_t c;
	int rc = -1, sems = 0;

	memset(stats, 0, sizeof(*stats));
	memset(&nt, 0, sizeof(nt));
	nt.cfg = cfg;
	nt.which = which;
	nt.opts = opts;
	nt.stats = stats;
	nt.need_corpus = (which & ~(unsigned)LB_STAGE_HUBSPOT) != 0;
	if (resolve_selection(cfg, opts->endpoint, &nt.sel, err) < 0)
		return -1;
	resolve_share(cfg, opts, &nt.sel);
	/* credentials before any crawl: one cheap request to each store */
	if (((which & (LB_STAGE_PUBLISH | LB_STAGE_HUBSPOT)) &&
	     (store_open(cfg, opts->store ? opts->store : cfg->store,
			 &nt.store, err) < 0 ||
	      store_check(nt.store, err) < 0)) ||
	    (cfg->state_sync && cfg->state_store != NULL &&
	     (store_open(cfg, cfg->state_store, &nt.ss, err) < 0 ||
	      store_check(nt.ss, err) < 0)))
		goto out;
	if ((nt.cl = calloc(cfg->n_clients ? cfg->n_clients : 1,
			    sizeof(*nt.cl))) == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	for (c = 0; c < cfg->n_clients; c++)
		if (selected_client(&nt.sel, &cfg->clients[c]))
			nt.cl[nt.n++] = &cfg->clients[c];
	night_caps(&nt, &builds, &conns);
	if (nt.jobs > 1) {
		if (night_hosts(&nt, err) < 0)
			goto out;
		crawl_global_init();
		relate_blas_single();
		pthread_mutex_init(&nt.mu, NULL);
		pthread_mutex_init(&nt.hubspot, NULL);
		sem_init(&nt.conns, 0, conns);
		pthread_mutex_init(&nt.builds.mu, NULL);
		pthread_cond_init(&nt.builds.start, NULL);
		pthread_cond_init(&nt.builds.resume, NULL);
		nt.builds.free = builds;
		sems = 1;
		if (which & LB_STAGE_CRAWL) {
			if ((nt.runs = calloc(nt.n, sizeof(*nt.runs))) ==
			    NULL) {
				lb_error_set(err, LB_ENOMEM, "out of memory");
				goto out;
			}
			if (crawl_loops_new(cfg, night_loops(&nt),
					    opts->no_rate_limit, &nt.conns,
					    &nt.loops, err) < 0)
				goto out;
		}
		log_info("%zu clients, %u at once (%u builds, %u transfers in "
			 "flight at most, %u crawl threads)", nt.n, nt.jobs,
			 builds, conns, nt.loops ? night_loops(&nt) : 0);
	}
	rc = sched_run(nt.n, nt.jobs, night_client,
		       nt.jobs > 1 ? clients_clash : NULL, &nt, err);
out:
	log_stage("linkbot");
	crawl_loops_free(nt.loops);	/* every crawl has ended */
	free(nt.runs);
	if (sems) {
		sem_destroy(&nt.conns);
		pthread_cond_destroy(&nt.builds.start);
		pthread_cond_destroy(&nt.builds.resume);
		pthread_mutex_destroy(&nt.builds.mu);
		pthread_mutex_destroy(&nt.mu);
		pthread_mutex_destroy(&nt.hubspot);
	}
	for (c = 0; nt.hosts != NULL && c < nt.n; c++)
		lb_strlist_release(&nt.hosts[c]);
	free(nt.hosts);
	free(nt.cl);
	store_free(nt.store);
	store_free(nt.ss);
	return rc;
}
