/*
 * client.h - (internal to hubspot/) the one HTTP client for HubSpot's API,
 * with its one retry and rate-limit policy. Only hubspot/ includes curl
 * for HubSpot (docs/HACKING.md).
 *
 *   hs_client_new(base, token, token_env, stats, &c, &err)
 *   hs_call(c, "POST", "/crm/v3/objects/x/batch/update", json, &r, &err)
 *   ... r.status, r.json ...; hs_response_release(&r)
 *   hs_client_free(c)
 *
 * Policy (docs/hubspot.md):
 * - Burst limit: the client keeps the send times of its last requests and
 *   never sends more than the X-HubSpot-RateLimit-Max of the
 *   X-HubSpot-RateLimit-Interval-Milliseconds window (both learnt from the
 *   answers; 100 per 10 s until then), and waits for the window to roll
 *   when X-HubSpot-RateLimit-Remaining says it is spent.
 * - 429 TEN_SECONDLY_ROLLING or SECONDLY (or none named): wait, retry
 *   (30 times). 429 DAILY: stop at once (stats->daily_limit).
 * - 5xx and network errors: exponential backoff, 6 attempts.
 * - 401, 403: errors naming the token's variable and, for MISSING_SCOPES,
 *   the scopes (stats->auth_failed); never the token.
 * - Every other status is the caller's: r->status and r->json.
 * Every error message carries HubSpot's correlationId when there is one.
 */
#ifndef LINKBOT_HUBSPOT_CLIENT_H
#define LINKBOT_HUBSPOT_CLIENT_H

#include <cjson/cJSON.h>
#include "linkbot/error.h"
#include "linkbot/hubspot.h"

struct hs_client;

struct hs_response {
	long status;
	cJSON *json;	/* the parsed body, or NULL; owned */
};

/* token is copied; token_env only names it in messages. */
int hs_client_new(const char *base_url, const char *token,
		  const char *token_env, struct hubspot_stats *stats,
		  struct hs_client **out, struct lb_error *err);
void hs_client_free(struct hs_client *c);

/* body: JSON text or NULL. Returns 0 with r filled, or -1 (see above). */
int hs_call(struct hs_client *c, const char *method, const char *path,
	    const char *body, struct hs_response *r, struct lb_error *err);
void hs_response_release(struct hs_response *r);

/*
 * "HubSpot answered 409 to POST /x: message (CONFLICT, correlationId y)"
 * into err, from r's body.
 */
int hs_error(struct lb_error *err, const char *method, const char *path,
	     const struct hs_response *r);

#endif
