/* internal.h - (internal to pipeline/) one function per stage of an endpoint. */
#ifndef LINKBOT_PIPELINE_INTERNAL_H
#define LINKBOT_PIPELINE_INTERNAL_H

#include <stdint.h>
#include "linkbot/config.h"
#include "linkbot/pipeline.h"
#include "linkbot/publish.h"
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

/* Build every module of a project. */
int pipeline_build_project(const struct lb_config *cfg,
			   const struct lb_project *pr,
			   const struct pages *pages,
			   const struct lb_run_opts *opts,
			   struct lb_error *err);

/* The seed of an endpoint's randomness: --seed, else the UTC day. */
uint64_t pipeline_seed(const struct lb_run_opts *opts, const char *client,
		       const char *endpoint);

#endif
