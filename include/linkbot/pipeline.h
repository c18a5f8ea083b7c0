/*
 * pipeline.h - the nightly job: the order of the stages and what flows
 * between them, per client and endpoint.
 *
 *   crawl    URL sources -> corpus          (state/<client>/corpus.sqlite)
 *   build    corpus -> relate -> assign     (state/<client>/<endpoint>/links.tsv)
 *   publish  corpus + links -> render -> store  (docs/store.md)
 *   hubspot  store -> HubSpot custom objects (endpoints with hubspot:,
 *            docs/hubspot.md)
 *
 * `linkbot run` runs all four; `linkbot crawl|build|publish` and
 * `linkbot hubspot sync` one each.
 * A failed endpoint is reported and the others go on; only the environment
 * (state directory, store, memory) stops the run.
 */
#ifndef LINKBOT_PIPELINE_H
#define LINKBOT_PIPELINE_H

#include <stdint.h>
#include <time.h>
#include "linkbot/config.h"
#include "linkbot/error.h"

enum lb_stage {
	LB_STAGE_CRAWL = 1 << 0,
	LB_STAGE_BUILD = 1 << 1,
	LB_STAGE_PUBLISH = 1 << 2,
	LB_STAGE_HUBSPOT = 1 << 3,
	LB_STAGE_ALL = 15,
};

struct lb_run_opts {
	const char *endpoint;	/* "client/endpoint", "client" or a project
				   uuid; NULL = all */
	const char *store;	/* overrides cfg->store */
	const char *urls_file;	/* crawl: side crawl of these URLs */
	const char *export_dir;	/* build: write candidates.tsv there */
	unsigned shard_i, shard_n;	/* build --shard i/n: candidates of one
					   block of source rows, no assignment */
	unsigned from_shards;	/* build --shards n: assign from n shard files */
	unsigned clients_i, clients_n;	/* --clients i/n: only the clients of
					   share i of n (pipeline_client_share);
					   n = 0: every client */
	int force;		/* crawl even if done today */
	int cold;		/* build: assign from scratch, not from the last
				 * run's bonuses (state/.../bonus.tsv) */
	unsigned assign_threads;	/* build: the solver's threads (0 = one
					 * per CPU; --assign-threads) */
	unsigned small_threads;	/* build: relate's threads for an endpoint
				   of fewer than 10,000 sources (0 =
				   one per CPU); a night of clients at once
				   sets 1 */
	int dry_run;		/* publish: only say what would change */
	int allow_shrink;	/* publish even past an endpoint's max_shrink */
	int progress;		/* progress bars on a TTY */
	int no_rate_limit;	/* benchmarks only */
	int have_seed;
	uint64_t seed;		/* random completion and pools; default: the day */
	time_t now;		/* injectable clock (--now) */
	unsigned jobs;		/* clients at once; 0: crawl.jobs */
	unsigned build_jobs;	/* builds at once; 0: crawl.build_jobs */
};

struct lb_run_stats {
	int clients;		/* clients run */
	int endpoints_done;	/* endpoints (and modules' projects) that went
				   through every stage asked */
	int endpoints_failed;
	int projects;		/* projects run */
};

/*
 * Runs the stages of `stages` for the selected clients and endpoints.
 * Returns 0 (see stats for failed endpoints) or -1 when the environment
 * failed (err says what).
 */
int pipeline_run(const struct lb_config *cfg, unsigned stages,
		 const struct lb_run_opts *opts, struct lb_run_stats *stats,
		 struct lb_error *err);

/*
 * The share (0 .. n-1) of a client among n jobs: a consistent hash of its
 * id alone (share.c says why), so adding a client never moves another.
 * A project belongs to its client's share.
 */
unsigned pipeline_client_share(const char *client_id, unsigned n);

/* state/<client>/<endpoint>/links.tsv; caller frees. */
char *pipeline_links_path(const struct lb_config *cfg,
			  const struct lb_client *cl,
			  const struct lb_endpoint *ep);

#endif
