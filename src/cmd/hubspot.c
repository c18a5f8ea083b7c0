/*
 * hubspot.c - linkbot hubspot sync: the HubSpot stage of a run alone
 * (docs/hubspot.md): the links the store serves copied into each
 * configured portal's custom object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/cmd.h"
#include "linkbot/log.h"

/* Refuses a configuration in which no endpoint has hubspot: settings. */
static int some_endpoint_syncs(const struct lb_config *cfg)
{
	size_t i, j, configured = 0;

	log_stage("hubspot");
	for (i = 0; i < cfg->n_clients; i++)
		for (j = 0; j < cfg->clients[i].n_endpoints; j++)
			configured += cfg->clients[i].endpoints[j].hubspot != NULL;
	if (configured == 0) {
		fprintf(stderr, "linkbot hubspot: no endpoint of '%s' has "
			"hubspot: settings (docs/hubspot.md)\n", cfg->path);
		return LB_EXIT_CONFIG;
	}
	return LB_EXIT_OK;
}

/* Options and the run itself: run.c's parser, the "hubspot sync" job. */
int cmd_hubspot(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		cmd_job_usage("hubspot sync", stdout);
		return LB_EXIT_OK;
	}
	if (argc < 2 || strcmp(argv[1], "sync") != 0) {
		cmd_job_usage("hubspot sync", stderr);
		return LB_EXIT_USAGE;
	}
	return cmd_run_job("hubspot sync", argc - 1, argv + 1,
			   some_endpoint_syncs);
}
