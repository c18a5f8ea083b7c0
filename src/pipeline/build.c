/*
 * build.c - stages 3 and 4 for one endpoint: relate its source pages to its
 * target pages, assign each source its links, and keep the result in the
 * state as links.tsv (source_url, target_url, type, score), which publish
 * reads. Written atomically: a killed build leaves the previous file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "linkbot/assign.h"
#include "linkbot/fillers.h"
#include "linkbot/fsutil.h"
#include "linkbot/layout.h"
#include "linkbot/links.h"
#include "linkbot/log.h"
#include "linkbot/relate.h"
#include "linkbot/render.h"
#include "internal.h"

#define CANDIDATES_PER_SOURCE 32
#define PIPELINE_SMALL 10000	/* sources: see small_threads (pipeline.h) */

static void *reader_open(void *arg, struct lb_error *err)
{
	struct lb_corpus_reader *r;

	return corpus_reader_open(arg, &r, err) < 0 ? NULL : r;
}

static int reader_get(void *reader, const struct lb_doc *doc, char **text,
		      struct lb_doclinks *links, struct lb_error *err)
{
	return corpus_reader_text(reader, doc->url, text, links, err);
}

static void reader_close(void *reader)
{
	corpus_reader_free(reader);
}

/* The full texts of the pages for relate: one corpus reader per thread. */
static struct lb_text_source pages_text_source(const struct pages *p)
{
	struct lb_text_source src = { reader_open, reader_get, reader_close,
				      p->corpus };
	return src;
}

/* Language group ids: one per lb_lang_group() key (relate groups alike). */
static int language_groups(const struct page_list *src,
			   const struct page_list *tgt, uint32_t **lsrc,
			   uint32_t **ltgt, struct lb_error *err)
{
	char **names = NULL;
	size_t n_names = 0, i, k;
	const struct page_list *lists[2] = { src, tgt };
	uint32_t *out[2] = { NULL, NULL };
	int rc = -1;

	for (k = 0; k < 2; k++) {
		out[k] = malloc((lists[k]->n ? lists[k]->n : 1) *
				sizeof(uint32_t));
		if (out[k] == NULL)
			goto nomem;
		for (i = 0; i < lists[k]->n; i++) {
			char prim[LB_LANG_GROUP_LEN];
			size_t j;

			lb_lang_group(lists[k]->docs[i]->language, prim);
			for (j = 0; j < n_names; j++)
				if (strcmp(names[j], prim) == 0)
					break;
			if (j == n_names) {
				char **nn = realloc(names,
						    (n_names + 1) * sizeof(*nn));
				if (nn == NULL)
					goto nomem;
				names = nn;
				if ((names[n_names] = strdup(prim)) == NULL)
					goto nomem;
				n_names++;
			}
			out[k][i] = (uint32_t)j;
		}
	}
	*lsrc = out[0];
	*ltgt = out[1];
	out[0] = out[1] = NULL;
	rc = 0;
	goto out;
nomem:
	lb_error_set(err, LB_ENOMEM, "out of memory");
out:
	for (i = 0; i < n_names; i++)
		free(names[i]);
	free(names);
	free(out[0]);
	free(out[1]);
	return rc;
}

/*
 * The relate settings of the config: the method, and for embeddings the
 * server, the model, the key ($LINKBOT_EMBEDDINGS_API_KEY, never in the
 * config) and the cache (default <state>/embeddings.cache; *cache owned).
 */
static int relate_method(const struct lb_config *cfg,
			 struct lb_relate_opts *ropts,
			 struct lb_relate_embed *embed, char **cache,
			 struct lb_error *err)
{
	const char *m = cfg->relate.method;

	memset(embed, 0, sizeof(*embed));
	if (m == NULL || strcmp(m, "lsa") == 0)
		return 0;
	if (strcmp(m, "tfidf") == 0) {
		ropts->method = LB_RELATE_TFIDF;
		return 0;
	}
	ropts->method = LB_RELATE_EMBED;
	ropts->embed = embed;
	embed->url = cfg->relate.embed_url;
	embed->model = cfg->relate.embed_model;
	embed->api_key = getenv("LINKBOT_EMBEDDINGS_API_KEY");
	*cache = cfg->relate.embed_cache ?
			 strdup(cfg->relate.embed_cache) :
			 lb_path_join(cfg->state_dir, "embeddings.cache");
	if (*cache == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	embed->cache_path = *cache;
	return 0;
}

/* Position of page index pi in a page list (indexes ascend), or -1. */
static long list_find(const struct page_list *l, size_t pi)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->index[mid] == pi)
			return (long)mid;
		if (l->index[mid] < pi)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

struct prev_ctx {
	const struct pages *pages;
	const struct page_list *src, *tgt;
	uint32_t *prev;
	size_t l;
};

static int prev_visit(const struct lb_doc *doc,
		      const struct lb_render_link *links, size_t n, void *arg)
{
	struct prev_ctx *c = arg;
	long sp = pages_find(c->pages, doc->url), si, tp, ti;
	size_t k, got = 0;

	if (sp < 0 || (si = list_find(c->src, (size_t)sp)) < 0)
		return 0;
	for (k = 0; k < n && got < c->l; k++)
		if ((tp = pages_find(c->pages, links[k].doc->url)) >= 0 &&
		    (ti = list_find(c->tgt, (size_t)tp)) >= 0)
			c->prev[(size_t)si * c->l + got++] = (uint32_t)ti;
	return 0;
}

/*
 * The previous run's links (links.tsv as it still is) in today's indexes,
 * l per source, for the stability bonus. NULL when there is none.
 */
static uint32_t *previous_links(const char *path, const struct pages *pages,
				const struct page_list *src,
				const struct page_list *tgt, size_t l,
				struct lb_error *err)
{
	struct prev_ctx c = { pages, src, tgt, NULL, l };
	struct lb_error rerr;
	size_t i;

	c.prev = malloc((src->n * l > 0 ? src->n * l : 1) * sizeof(*c.prev));
	if (c.prev == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		return NULL;
	}
	for (i = 0; i < src->n * l; i++)
		c.prev[i] = LB_NO_TARGET;
	lb_error_init(&rerr);
	/* first run, or unreadable: no bonus */
	if (links_read(path, pages, l, prev_visit,
				&c, &rerr) != 0) {
		free(c.prev);
		return NULL;
	}
	return c.prev;
}

/* The last run's bonus of a target, by URL, into today's index. */
struct bonus_ctx {
	const struct pages *pages;
	const struct page_list *tgt;
	double *b;
	size_t found;
};

static void bonus_visit(const char *url, double v, void *arg)
{
	struct bonus_ctx *c = arg;
	long tp, ti;

	if ((tp = pages_find(c->pages, url)) >= 0 &&
	    (ti = list_find(c->tgt, (size_t)tp)) >= 0) {
		c->b[ti] = v;
		c->found++;
	}
}

/* The last run's bonuses in today's target indexes (NAN for a new page),
 * or NULL: a first run, no file or an unreadable one (a cold start). */
static double *previous_bonus(const char *path, const struct pages *pages,
			      const struct page_list *tgt)
{
	struct bonus_ctx c = { pages, tgt, NULL, 0 };
	struct lb_error rerr;
	size_t i;

	c.b = malloc((tgt->n ? tgt->n : 1) * sizeof(*c.b));
	if (c.b == NULL)
		return NULL;
	for (i = 0; i < tgt->n; i++)
		c.b[i] = NAN;
	lb_error_init(&rerr);
	if (links_read_bonus(path, bonus_visit, &c, &rerr) != 0 ||
	    c.found == 0) {
		free(c.b);
		return NULL;
	}
	return c.b;
}

/* The candidates in relate's export format (docs/relate.md), atomically. */
struct export_ctx {
	const struct lb_relate_input *in;
	const struct lb_candidates *cand;
	size_t row_begin;
};

static int export_writer(FILE *f, void *arg, struct lb_error *err)
{
	struct export_ctx *x = arg;

	return relate_export_tsv(f, x->in, x->cand, x->row_begin, err);
}

static int write_export(const char *path, const struct lb_relate_input *in,
			const struct lb_candidates *cand, size_t row_begin,
			struct lb_error *err)
{
	struct export_ctx x = { in, cand, row_begin };

	if (lb_file_write_stream(path, export_writer, &x, err) < 0)
		return -1;
	log_info("candidates written to '%s'", path);
	return 0;
}

/* state/<client>/<id>/candidates.<i>-of-<n>.tsv */
static void shard_path(char *buf, size_t size, const struct link_job *job,
		       unsigned i, unsigned n)
{
	size_t len = strlen(job->links_path);
	const char *slash = strrchr(job->links_path, '/');

	if (slash != NULL)
		len = (size_t)(slash - job->links_path);
	snprintf(buf, size, "%.*s/candidates.%u-of-%u.tsv", (int)len,
		 job->links_path, i, n);
}

/* Candidates from the n shard files of `linkbot build --shard i/n`. */
static int import_shards(const struct link_job *job,
			 const struct lb_relate_input *in, size_t m, unsigned n,
			 struct lb_candidates *cand, struct lb_error *err)
{
	char (*path)[4200] = calloc(n ? n : 1, sizeof(*path));
	const char **paths = calloc(n ? n : 1, sizeof(*paths));
	unsigned i;
	int rc = -1;

	if (path == NULL || paths == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		shard_path(path[i], sizeof(path[i]), job, i, n);
		paths[i] = path[i];
	}
	rc = relate_import_tsv(paths, n, in, m, cand, err);
out:
	free(path);
	free(paths);
	return rc;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The run report's "before": in-degrees if every page took its top L. */
static void in_degree_top_l(const struct lb_candidates *cand, size_t l,
			    size_t n_tgt, struct lb_report_endpoint *rep)
{
	size_t *in = calloc(n_tgt ? n_tgt : 1, sizeof(*in)), i, j;

	if (in == NULL)
		return;
	for (i = 0; i < cand->n_src; i++)
		for (j = 0; j < l && j < cand->m; j++) {
			uint32_t t = cand->target[i * cand->m + j];
			if (t != LB_NO_TARGET && t < n_tgt)
				in[t]++;
		}
	report_in_degree(rep, 0, in, n_tgt);
	free(in);
}

/* The run report's figures of an assignment. */
static void report_build(struct lb_report_endpoint *rep,
			 const struct lb_assignment *asg,
			 const struct lb_assign_stats *st,
			 const struct lb_assign_params *ap, size_t n_src,
			 size_t n_tgt, int has_prev, double seconds)
{
	size_t *in, i;

	if (rep == NULL)
		return;
	rep->source_pages = (long)n_src;
	rep->target_pages = (long)n_tgt;
	rep->links = (long)st->links;
	rep->random_links = (long)st->random_links;
	rep->k = (long)ap->min_in;
	rep->k_used = (long)st->k_used;
	rep->min_in = (long)st->min_in;
	rep->median_in = (long)st->median_in;
	rep->max_in = (long)st->max_in;
	rep->lifted_links = (long)st->lifted;
	rep->lifted_pages = (long)st->lifted_pages;
	rep->has_prev = has_prev;
	rep->churn_links = (long)st->churn;
	rep->churn_pages = (long)st->churn_sources;
	rep->certified = st->certified;
	rep->assign_seconds = seconds;
	if ((in = calloc(n_tgt ? n_tgt : 1, sizeof(*in))) == NULL)
		return;
	for (i = 0; i < asg->n_src * asg->l; i++)
		if (asg->links[i].target != LB_NO_TARGET &&
		    asg->links[i].target < n_tgt)
			in[asg->links[i].target]++;
	report_in_degree(rep, 1, in, n_tgt);
	free(in);
}

int pipeline_build(const struct link_job *job, const struct pages *pages,
		   const struct lb_run_opts *opts, struct lb_error *err)
{
	const struct lb_endpoint *ep = job->ep;
	struct page_list src, tgt;
	struct lb_candidates cand = { 0 };
	struct lb_assignment asg = { 0 };
	struct lb_assign_stats st;
	struct lb_fillers_params fp;
	struct lb_fillers_stats fst;
	struct lb_relate_input in;
	struct lb_text_source texts;
	struct lb_relate_opts ropts;
	struct lb_relate_embed embed;
	char *embed_cache = NULL;
	struct lb_assign_params ap;
	uint32_t *lsrc = NULL, *ltgt = NULL;
	long *self = NULL;
	struct timespec t0;
	double *warm = NULL;
	char churn[160], bpath[4200];
	size_t i, j;
	int rc = -1;

	memset(&src, 0, sizeof(src));
	memset(&tgt, 0, sizeof(tgt));
	memset(&ap, 0, sizeof(ap));
	if (pages_select(pages, &job->source, &src, err) < 0 ||
	    pages_select(pages, &job->target, &tgt, err) < 0)
		goto out;
	log_info("%s/%s: %zu source pages, %zu target pages", job->client_id,
		 job->id, src.n, tgt.n);
	if (src.n == 0 || tgt.n == 0) {
		lb_error_set(err, LB_ENODATA,
			     "no page of its %s set is indexed: are the URL "
			     "sources reachable, and do the set's patterns "
			     "match their URLs? (see the crawl's log)",
			     src.n == 0 ? "source" : "target");
		goto out;
	}
	self = malloc((src.n ? src.n : 1) * sizeof(*self));
	if (self == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	/* Both lists are in page order: one merge finds each source's self. */
	for (i = 0, j = 0; i < src.n; i++) {
		while (j < tgt.n && tgt.index[j] < src.index[i])
			j++;
		self[i] = (j < tgt.n && tgt.index[j] == src.index[i]) ?
				  (long)j : -1;
	}
	if (ep->multi_language &&
	    language_groups(&src, &tgt, &lsrc, &ltgt, err) < 0)
		goto out;

	log_stage("relate");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&ropts, 0, sizeof(ropts));
	ropts.m = CANDIDATES_PER_SOURCE;
	/* a small endpoint in a night of clients at once: one thread (the
	 * other cores build other clients; for 100 pages a thread and its
	 * corpus reader cost more than they save); the same candidates */
	if (opts->small_threads > 0 && src.n < PIPELINE_SMALL)
		ropts.threads = (int)opts->small_threads;
	if (relate_method(job->cfg, &ropts, &embed, &embed_cache, err) < 0)
		goto out;
	in.src = src.docs;
	in.n_src = src.n;
	in.tgt = tgt.docs;
	in.n_tgt = tgt.n;
	in.self = self;
	in.multi_language = ep->multi_language;
	texts = pages_text_source(pages);
	/* the full texts: in the docs when they fit (pages.h), else read
	 * from the corpus */
	in.text = pages->corpus && !pages->full_texts ? &texts : NULL;
	if (opts->shard_n > 0) {
		/* One block of source rows, for a job of a sharded build. */
		char path[4200];

		if (relate_shard_range(src.n, opts->shard_i, opts->shard_n,
				       &ropts.row_begin, &ropts.row_end) < 0) {
			lb_error_set(err, LB_EUSAGE, "shard %u of %u does not exist",
				     opts->shard_i, opts->shard_n);
			goto out;
		}
		shard_path(path, sizeof(path), job, opts->shard_i, opts->shard_n);
		if (ropts.row_end > ropts.row_begin &&
		    relate_candidates(&in, &ropts, &cand, err) < 0)
			goto out;
		if (ropts.row_end == ropts.row_begin &&
		    lb_candidates_init(&cand, 0, ropts.m) < 0) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		rc = write_export(path, &in, &cand, ropts.row_begin, err);
		goto out;
	}
	if (opts->from_shards > 0) {
		if (import_shards(job, &in, ropts.m, opts->from_shards, &cand,
				  err) < 0)
			goto out;
	} else if (relate_candidates(&in, &ropts, &cand, err) < 0) {
		goto out;
	}
	if (opts->export_dir != NULL) {
		char name[300], *path;
		snprintf(name, sizeof(name), "%s/%s/candidates.tsv",
			 job->client_id, job->id);
		if ((path = lb_path_join(opts->export_dir, name)) == NULL) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		rc = write_export(path, &in, &cand, 0, err);
		free(path);
		if (rc < 0)
			goto out;
		rc = -1;
	}

	log_stage("assign");
	if (job->report != NULL) {
		job->report->relate_seconds = seconds_since(&t0);
		in_degree_top_l(&cand, (size_t)ep->links, tgt.n, job->report);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ap.n_tgt = tgt.n;
	ap.links = (size_t)ep->links;
	ap.min_in = (size_t)ep->min_incoming;
	ap.max_in = (size_t)ep->max_incoming;
	ap.random_completion = ep->random_completion;
	ap.seed = pipeline_seed(opts, job->client_id, job->id);
	ap.self = self;
	ap.lang_src = lsrc;
	ap.lang_tgt = ltgt;
	ap.prev = previous_links(job->links_path, pages, &src, &tgt, ap.links,
				 err);
	if (ap.prev == NULL && err->code != LB_EOK)
		goto out;
	ap.prev_l = ap.links;
	ap.stability_bonus = ep->stability_bonus;
	layout_bonus_path(bpath, sizeof(bpath), job->links_path);
	if (!opts->cold && ap.prev != NULL)
		warm = previous_bonus(bpath, pages, &tgt);
	ap.warm = warm;
	ap.threads = opts->assign_threads;
	memset(&st, 0, sizeof(st));
	if (assign_links(&cand, &ap, &asg, &st, err) < 0)
		goto out;
	/* links no more related than random pairs: published as random */
	memset(&fp, 0, sizeof(fp));
	fp.n_tgt = tgt.n;
	fp.min_in = ap.min_in;
	fp.max_in = ap.max_in;
	fp.floor = cand.random_floor;
	fp.seed = ap.seed;
	fp.self = self;
	fp.lang_src = lsrc;
	fp.lang_tgt = ltgt;
	if (fillers_apply(&asg, &fp, &fst, err) < 0)
		goto out;
	/* the run's figures: one line an operator can grep */
	if (ap.prev != NULL)
		snprintf(churn, sizeof(churn), "churn against the last run: "
			 "%zu of %zu links new, %zu of %zu pages changed",
			 st.churn, st.links, st.churn_sources, src.n);
	else
		snprintf(churn, sizeof(churn), "no last run");
	log_info("%s/%s: assign %.2f s %s (%.2f s CPU, %zu threads), "
		 "objective %.3f, in-degree min %zu "
		 "median %zu max %zu, %zu links lifted by the constraint on "
		 "%zu pages, %zu random (%zu of them fillers scoring at or "
		 "below random pairs, %.3f), %s, %s", job->client_id, job->id,
		 st.seconds,
		 st.routed ? "warm, routed" : st.warm ? "warm" :
		 st.direct ? "cold, small" : "cold",
		 st.cpu_seconds,
		 st.threads, st.objective,
		 st.min_in, st.median_in, st.max_in, st.lifted,
		 st.lifted_pages, st.random_links + fst.fillers, fst.fillers,
		 (double)cand.random_floor, churn,
		 st.certified ? "certified optimal" : "NOT certified optimal");
	if (tgt.n > 0 && st.min_in < ap.min_in) {
		char why[400];

		assign_explain(&st, &ap, why, sizeof(why));
		log_warnx("%s/%s: minimum in-degree %zu is below the %zu asked "
			  "for: %s", job->client_id, job->id, st.min_in,
			  ap.min_in, why);
	}

	report_build(job->report, &asg, &st, &ap, src.n, tgt.n,
		     ap.prev != NULL, seconds_since(&t0));
	if (job->report != NULL) {
		job->report->random_links += (long)fst.fillers;
		job->report->fillers = (long)fst.fillers;
	}
	if (links_write(job->links_path, &src, &tgt, &asg, err) < 0)
		goto out;
	if (asg.bonus != NULL &&
	    links_write_bonus(bpath, &tgt, asg.bonus, asg.n_tgt, err) < 0)
		goto out;
	rc = 0;
out:
	log_stage("build");
	free((void *)ap.prev);
	free(warm);
	free(embed_cache);
	lb_assignment_release(&asg);
	lb_candidates_release(&cand);
	free(self);
	free(lsrc);
	free(ltgt);
	page_list_release(&src);
	page_list_release(&tgt);
	return rc;
}
