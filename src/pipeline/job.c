/*
 * job.c - the per-job helpers of the pipeline: where an endpoint's links
 * go, the seed of its randomness, and the linking job of an endpoint.
 * Here, apart, so that pipeline.c (the order of the stages) and build.c
 * (relate + assign of one job) both use them without calling each other.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linkbot/fsutil.h"
#include "linkbot/layout.h"
#include "internal.h"

char *pipeline_links_path(const struct lb_config *cfg,
			  const struct lb_client *cl,
			  const struct lb_endpoint *ep)
{
	char rel[300];

	if (layout_links_path(rel, sizeof(rel), cl->id, ep->id) < 0)
		return NULL;
	return lb_path_join(cfg->state_dir, rel);
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
