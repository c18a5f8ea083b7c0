/*
 * hubspot.h - the CMS integration (SPEC 1.12, 1.13, 2.6, 4.4, 5): every
 * published blog post of a HubSpot portal gets one instance of a CRM
 * custom object whose related_post_1..N properties hold the HubSpot IDs of
 * the posts the endpoint's answers link to, so a page template renders
 * them with no call to the API (templates/hubspot/, docs/hubspot.md).
 *
 * It sits after publish: the links are read from the store, the same
 * answers the edge serves, so the CRM shows exactly what the API shows.
 *
 *   hubspot_sync(cfg, client, endpoint, store, &opts, &stats, &err)
 *
 * One sync: ensure the schema (create it, or reuse it and add missing
 * properties), list the published posts and the existing instances, then
 * create and update (and, when asked, archive) in batches of at most 100.
 * Nothing changed: no write call at all. Every call goes through one
 * client with one retry and rate-limit policy (hubspot/client.c). The token
 * comes from the environment variable the config names and is never
 * logged nor put into an error message.
 *
 * Returns 0, or -1 with err set: LB_ECONFIG (no token), LB_EHTTP (HubSpot
 * refused: stats->auth_failed for 401/403, stats->daily_limit for the
 * DAILY limit), LB_ENETWORK, LB_ESTORE, LB_ENOMEM. A sync that stops
 * half-way leaves HubSpot consistent: the next one converges.
 */
#ifndef LINKBOT_HUBSPOT_H
#define LINKBOT_HUBSPOT_H

#include <stdint.h>
#include <time.h>
#include "linkbot/config.h"
#include "linkbot/error.h"
#include "linkbot/store.h"

struct hubspot_opts {
	int dry_run;		/* read everything, write nothing, say what */
	uint64_t seed;		/* random posts for posts without links */
};

struct hubspot_stats {
	long calls;		/* HTTP requests sent, retries included */
	long writes;		/* POST/PATCH/DELETE requests sent */
	long retries;
	long posts;		/* published posts listed */
	long instances;		/* existing instances listed */
	long created, updated, archived, unchanged, skipped;
	long failed;		/* inputs HubSpot refused after the retries */
	int auth_failed;	/* 401 or 403 */
	int daily_limit;	/* stopped by the DAILY limit */
};

int hubspot_sync(const struct lb_config *cfg, const struct lb_client *cl,
		 const struct lb_endpoint *ep, struct lb_store *store,
		 const struct hubspot_opts *opts, struct hubspot_stats *stats,
		 struct lb_error *err);

#endif
