/*
 * build.c - stages 3 and 4 for one endpoint: relate its source pages to its
 * target pages, assign each source its links, and keep the result in the
 * state as links.tsv (source_url, target_url, type, score), which publish
 * reads. Written atomically: a killed build leaves the previous file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "linkbot/assign.h"
#include "linkbot/buf.h"
#include "linkbot/fsutil.h"
#include "linkbot/log.h"
#include "linkbot/relate.h"
#include "internal.h"

#define LINKS_MAX_BYTES ((size_t)4 << 30)
#define CANDIDATES_PER_SOURCE 32

/* Language group ids: the primary subtag, lower-cased ("en-US" -> "en"). */
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
			const char *lang = lists[k]->docs[i]->language;
			char prim[16] = "";
			size_t j, len = 0;
			if (lang != NULL)
				while (len < sizeof(prim) - 1 && lang[len] &&
				       lang[len] != '-' && lang[len] != '_') {
					prim[len] = (char)(lang[len] | 0x20);
					len++;
				}
			prim[len] = '\0';
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

static int url_clean(const char *u)
{
	for (; *u != '\0'; u++)
		if ((unsigned char)*u < 0x20)
			return 0;
	return 1;
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

/*
 * The previous run's links (links.tsv as it still is) in today's indexes,
 * l per source, for the stability bonus. NULL when there is none.
 */
static uint32_t *previous_links(const char *path, const struct pages *pages,
				const struct page_list *src,
				const struct page_list *tgt, size_t l,
				struct lb_error *err)
{
	char *text = NULL, *line, *next;
	uint32_t *prev = NULL;
	size_t *count = NULL, i, len = 0;
	struct lb_error rerr;

	lb_error_init(&rerr);
	if (lb_file_read(path, LINKS_MAX_BYTES, &text, &len, &rerr) < 0)
		return NULL;	/* first run, or unreadable: no bonus */
	prev = malloc((src->n * l > 0 ? src->n * l : 1) * sizeof(*prev));
	count = calloc(src->n ? src->n : 1, sizeof(*count));
	if (prev == NULL || count == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		free(prev);
		prev = NULL;
		goto out;
	}
	for (i = 0; i < src->n * l; i++)
		prev[i] = LB_NO_TARGET;
	for (line = text; line != NULL && *line != '\0'; line = next) {
		char *tab1, *tab2;
		long sp, tp, si, ti;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		if (line[0] == '#' || (tab1 = strchr(line, '\t')) == NULL ||
		    (tab2 = strchr(tab1 + 1, '\t')) == NULL)
			continue;
		*tab1 = *tab2 = '\0';
		if ((sp = pages_find(pages, line)) < 0 ||
		    (tp = pages_find(pages, tab1 + 1)) < 0 ||
		    (si = list_find(src, (size_t)sp)) < 0 ||
		    (ti = list_find(tgt, (size_t)tp)) < 0 ||
		    count[si] >= l)
			continue;
		prev[(size_t)si * l + count[si]++] = (uint32_t)ti;
	}
out:
	free(count);
	free(text);
	return prev;
}

/* The candidates in relate's export format (docs/relate.md), atomically. */
static int write_export(const char *path, const struct lb_relate_input *in,
			const struct lb_candidates *cand, size_t row_begin,
			struct lb_error *err)
{
	char tmp[4200];
	FILE *f;
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (lb_mkdirs_parent(path, err) < 0)
		return -1;
	if ((f = fopen(tmp, "w")) == NULL)
		return lb_error_errno(err, LB_EIO, "cannot create '%s'", tmp);
	rc = relate_export_tsv(f, in, cand, row_begin, err);
	if (fflush(f) != 0 || ferror(f)) {
		rc = lb_error_errno(err, LB_EIO, "cannot write '%s'", tmp);
	}
	if (fclose(f) != 0 && rc == 0)
		rc = lb_error_errno(err, LB_EIO, "cannot write '%s'", tmp);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = lb_error_errno(err, LB_EIO, "cannot rename '%s'", tmp);
	if (rc < 0)
		unlink(tmp);
	else
		log_info("candidates written to '%s'", path);
	return rc;
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
	struct lb_buf all;
	unsigned i;
	int rc = -1;

	lb_buf_init(&all, LINKS_MAX_BYTES);
	for (i = 0; i < n; i++) {
		char path[4200], *text = NULL;
		size_t len = 0;

		shard_path(path, sizeof(path), job, i, n);
		if (lb_file_read(path, LINKS_MAX_BYTES, &text, &len, err) < 0)
			goto out;
		rc = lb_buf_add(&all, text, len, err);
		free(text);
		if (rc < 0)
			goto out;
		rc = -1;
	}
	rc = relate_import_tsv(all.data ? all.data : "", in, m, cand, err);
out:
	lb_buf_release(&all);
	return rc;
}

int link_job_endpoint(struct link_job *job, const struct lb_config *cfg,
		      const struct lb_client *cl, const struct lb_endpoint *ep)
{
	memset(job, 0, sizeof(*job));
	job->cfg = cfg;
	job->client_id = cl->id;
	job->id = ep->id;
	job->source.set = ep->source->name;
	job->target.set = ep->target->name;
	job->ep = ep;
	job->links_path = pipeline_links_path(cfg, cl, ep);
	return job->links_path != NULL ? 0 : -1;
}

void link_job_release(struct link_job *job)
{
	free(job->links_path);
	job->links_path = NULL;
}

int pipeline_build(const struct link_job *job, const struct pages *pages,
		   const struct lb_run_opts *opts, struct lb_error *err)
{
	const struct lb_endpoint *ep = job->ep;
	struct page_list src, tgt;
	struct lb_candidates cand = { 0 };
	struct lb_assignment asg = { 0 };
	struct lb_assign_stats st;
	struct lb_relate_input in;
	struct lb_text_source texts;
	struct lb_relate_opts ropts;
	struct lb_relate_embed embed;
	char *embed_cache = NULL;
	struct lb_assign_params ap;
	uint32_t *lsrc = NULL, *ltgt = NULL;
	long *self = NULL;
	struct lb_buf out;
	size_t i, j;
	int rc = -1;

	memset(&src, 0, sizeof(src));
	memset(&tgt, 0, sizeof(tgt));
	memset(&ap, 0, sizeof(ap));
	lb_buf_init(&out, LINKS_MAX_BYTES);
	if (pages_select(pages, &job->source, &src, err) < 0 ||
	    pages_select(pages, &job->target, &tgt, err) < 0)
		goto out;
	log_info("%s/%s: %zu source pages, %zu target pages", job->client_id,
		 job->id, src.n, tgt.n);
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
	memset(&ropts, 0, sizeof(ropts));
	ropts.m = CANDIDATES_PER_SOURCE;
	if (relate_method(job->cfg, &ropts, &embed, &embed_cache, err) < 0)
		goto out;
	in.src = src.docs;
	in.n_src = src.n;
	in.tgt = tgt.docs;
	in.n_tgt = tgt.n;
	in.self = self;
	in.multi_language = ep->multi_language;
	texts = pages_text_source(pages);
	in.text = pages->corpus ? &texts : NULL;
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
	memset(&st, 0, sizeof(st));
	if (assign_links(&cand, &ap, &asg, &st, err) < 0)
		goto out;
	log_info("%s/%s: objective %.3f, in-degree min %zu median %zu max %zu, "
		 "%zu links lifted by the constraint, %zu random",
		 job->client_id, job->id, st.objective, st.min_in, st.median_in,
		 st.max_in, st.lifted, st.random_links);
	if (ap.prev != NULL)
		log_info("%s/%s: churn against the last run: %zu of %zu links new, "
			 "%zu of %zu pages changed", job->client_id, job->id,
			 st.churn, st.links, st.churn_sources, src.n);
	if (tgt.n > 0 && st.min_in < ap.min_in)
		log_warnx("%s/%s: minimum in-degree %zu is below the %zu asked "
			  "for (too few source pages or links)",
			  job->client_id, job->id, st.min_in, ap.min_in);

	if (lb_buf_adds(&out, "# linkbot links: source_url\ttarget_url\t"
			      "type\tscore\n", err) < 0)
		goto out;
	for (i = 0; i < asg.n_src; i++) {
		if (!url_clean(src.docs[i]->url))
			continue;
		for (j = 0; j < asg.l; j++) {
			const struct lb_link *lk = &asg.links[i * asg.l + j];
			if (lk->target == LB_NO_TARGET)
				break;
			if (!url_clean(tgt.docs[lk->target]->url))
				continue;
			if (lb_buf_printf(&out, err, "%s\t%s\t%s\t%.6f\n",
					  src.docs[i]->url,
					  tgt.docs[lk->target]->url,
					  lk->type == LB_LINK_RANDOM ?
						  "random" : "related",
					  lk->score) < 0)
				goto out;
		}
	}
	if (lb_mkdirs_parent(job->links_path, err) < 0 ||
	    lb_file_write_atomic(job->links_path, out.data, out.len, err) < 0)
		goto out;
	rc = 0;
out:
	log_stage("build");
	lb_buf_release(&out);
	free((void *)ap.prev);
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
