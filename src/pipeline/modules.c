/*
 * modules.c - building the Project variant (SPEC 2.5): each module of a
 * project is a linking job of its own, an endpoint made up from its
 * settings, linking the pages under its `from` prefix to those under `to`.
 * Its links go to layout_module_links_path(); src/publish/project.c
 * publishes them as module maps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/fsutil.h"
#include "linkbot/layout.h"
#include "linkbot/log.h"
#include "internal.h"

/* A module as a job: an endpoint made up from the module's settings. */
static int module_job(struct link_job *job, struct lb_endpoint *mep,
		      const struct lb_config *cfg, const struct lb_project *pr,
		      const struct lb_module *mod)
{
	char rel[300];

	memset(job, 0, sizeof(*job));
	memset(mep, 0, sizeof(*mep));
	job->cfg = cfg;
	mep->id = mod->id;
	mep->variant = LB_VARIANT_STANDARD;
	mep->links = mod->links;
	mep->min_incoming = mod->links;
	mep->random_completion = 1;
	mep->stability_bonus = 0.01;	/* as an endpoint's default: ties
					   keep yesterday's links */
	mep->max_shrink = 0.2;
	job->client_id = pr->uuid;
	job->id = mod->id;
	job->source.path_prefix = mod->from;
	job->target.path_prefix = mod->to;
	job->ep = mep;
	if (layout_module_links_path(rel, sizeof(rel), pr->client->id,
				     pr->uuid, mod->id) < 0)
		return -1;
	job->links_path = lb_path_join(cfg->state_dir, rel);
	return job->links_path != NULL ? 0 : -1;
}

int pipeline_build_project(const struct lb_config *cfg,
			   const struct lb_project *pr,
			   const struct pages *pages,
			   const struct lb_run_opts *opts,
			   struct lb_error *err)
{
	size_t i;

	for (i = 0; i < pr->n_modules; i++) {
		struct link_job job;
		struct lb_endpoint mep;
		int rc;

		struct lb_error merr;

		if (module_job(&job, &mep, cfg, pr, &pr->modules[i]) < 0)
			return lb_error_set(err, LB_ENOMEM, "out of memory");
		lb_error_init(&merr);
		rc = pipeline_build(&job, pages, opts, &merr);
		link_job_release(&job);
		if (rc < 0 && merr.code == LB_ENODATA) {
			/* A module whose prefixes match no page yet: its
			 * pages get no map entry, the others go on. */
			log_warnx("project %s, module %s: %s", pr->uuid,
				  pr->modules[i].id, merr.msg);
			continue;
		}
		if (rc < 0)
			return lb_error_set(err, merr.code, "%s", merr.msg);
	}
	return 0;
}

