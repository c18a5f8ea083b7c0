/* internal.h - (internal to pipeline/) one function per stage of an endpoint. */
#ifndef LINKBOT_PIPELINE_INTERNAL_H
#define LINKBOT_PIPELINE_INTERNAL_H

#include <stdint.h>
#include "linkbot/config.h"
#include "linkbot/pipeline.h"
#include "linkbot/report.h"
#include "linkbot/store.h"
#include "linkbot/pages.h"

/*
 * One linking job: the sources and targets of an endpoint, or of a project
 * module, and the parameters of its links (a module gets an endpoint made
 * up from its own settings).
 */
struct link_job {
	const struct lb_config *cfg;
	const char *client_id;		/* logs, seeds and candidate export */
	const char *id;
	struct page_filter source, target;
	const struct lb_endpoint *ep;
	char *links_path;		/* where build writes links.tsv */
	struct lb_report_endpoint *report;	/* its figures, or NULL */
};

/* Fills job for a configured endpoint; job->links_path is owned. */
int link_job_endpoint(struct link_job *job, const struct lb_config *cfg,
		      const struct lb_client *cl, const struct lb_endpoint *ep);
void link_job_release(struct link_job *job);

/* Relate and assign one job; writes job->links_path. */
int pipeline_build(const struct link_job *job, const struct pages *pages,
		   const struct lb_run_opts *opts, struct lb_error *err);

/*
 * Reads a links.tsv and calls fn once per source page with its links, in
 * the file's order. Lines whose pages left the corpus are skipped.
 * Returns 1 when the file does not exist yet.
 */
struct lb_render_link;
typedef int (*links_visit_fn)(const struct lb_doc *src,
			      const struct lb_render_link *links, size_t n,
			      void *arg);
int pipeline_read_links(const char *path, const struct pages *pages,
			size_t max_links, links_visit_fn fn, void *arg,
			struct lb_error *err);

/*
 * bonus.tsv, next to links.tsv: "target_url \t bonus" per target page, the
 * optimal dual of the last assignment (units of score), which warm starts
 * the next night's solve (docs/assign.md). Private state, like links.tsv.
 * pipeline_read_bonus() calls fn per valid line; 1 when the file does not
 * exist. pipeline_write_bonus() writes atomically.
 */
void pipeline_bonus_path(char *buf, size_t size, const char *links_path);
int pipeline_read_bonus(const char *path,
			void (*fn)(const char *url, double bonus, void *arg),
			void *arg, struct lb_error *err);
int pipeline_write_bonus(const char *path, const struct page_list *tgt,
			 const double *bonus, size_t n, struct lb_error *err);

/* Publish a project: every module's links as module maps (SPEC 2.5). */
int pipeline_publish_project(const struct lb_config *cfg,
			     const struct lb_project *pr,
			     const struct pages *pages, struct lb_store *store,
			     const struct lb_run_opts *opts,
			     struct lb_error *err);

/* Build every module of a project. */
int pipeline_build_project(const struct lb_config *cfg,
			   const struct lb_project *pr,
			   const struct pages *pages,
			   const struct lb_run_opts *opts,
			   struct lb_error *err);

/* Publish one endpoint; rep (may be NULL) gets its publish figures. */
int pipeline_publish_endpoint(const struct lb_config *cfg,
			      const struct lb_client *cl,
			      const struct lb_endpoint *ep,
			      const struct pages *pages,
			      struct lb_store *store,
			      const struct lb_run_opts *opts,
			      struct lb_report_endpoint *rep,
			      struct lb_error *err);

/*
 * An endpoint without data tonight: its published answers stay as they
 * are; one that never had any is published pending (the edge answers 204).
 */
int pipeline_publish_pending(const struct lb_client *cl,
			     const struct lb_endpoint *ep,
			     struct lb_store *store,
			     const struct lb_run_opts *opts, struct lb_error *err);

/* The seed of an endpoint's randomness: --seed, else the UTC day. */
uint64_t pipeline_seed(const struct lb_run_opts *opts, const char *client,
		       const char *endpoint);

#endif
