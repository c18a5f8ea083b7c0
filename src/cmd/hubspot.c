/*
 * hubspot.c - linkbot hubspot sync: the HubSpot stage of a run alone
 * (docs/hubspot.md): the links the store serves copied into each
 * configured portal's custom object.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linkbot/cmd.h"
#include "linkbot/log.h"
#include "linkbot/pipeline.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: linkbot hubspot sync [options]\n\n"
		"Copies each endpoint's links, as the store serves them, into the\n"
		"HubSpot custom object its hubspot: settings name (docs/hubspot.md):\n"
		"creates the object on first launch, lists the published blog posts\n"
		"and the instances, creates and updates what changed, in batches of\n"
		"100. An unchanged site makes no write call. `linkbot run` does the\n"
		"same after publishing.\n\n"
		"  -c, --config FILE     configuration (default $LINKBOT_CONFIG or linkbot.yaml)\n"
		"  -e, --endpoint C[/E]  only client C, or its endpoint E\n"
		"  -s, --store DIR|s3://BUCKET/PREFIX   read the answers there\n"
		"      --dry-run         read everything, write nothing, say what would change\n"
		"      --seed N          seed of the random posts of posts without links\n"
		"  -q, --quiet / -v, --verbose\n"
		"  -h, --help\n\n"
		"The token comes from the environment variable named by token_env.\n"
		"Exit: 0 done, 1 an endpoint failed (HubSpot refused the token or some\n"
		"inputs, or its DAILY limit is spent: the next run resumes), 2 usage,\n"
		"3 invalid configuration, 4 environment (store, memory).\n");
}

int cmd_hubspot(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "endpoint", required_argument, NULL, 'e' },
		{ "store", required_argument, NULL, 's' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 'S' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct lb_run_opts ro;
	struct lb_run_stats stats;
	struct lb_config *cfg = NULL;
	struct lb_error err;
	const char *config = NULL;
	size_t i, j, configured = 0;
	int c, verbosity = 1, rc;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return LB_EXIT_OK;
	}
	if (argc < 2 || strcmp(argv[1], "sync") != 0) {
		usage(stderr);
		return LB_EXIT_USAGE;
	}
	argc--;
	argv++;
	memset(&ro, 0, sizeof(ro));
	optind = 0;
	while ((c = getopt_long(argc, argv, "c:e:s:qvh", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'e': ro.endpoint = optarg; break;
		case 's': ro.store = optarg; break;
		case 'n': ro.dry_run = 1; break;
		case 'S':
			ro.have_seed = 1;
			ro.seed = strtoull(optarg, NULL, 10);
			break;
		case 'q': verbosity = 0; break;
		case 'v': verbosity = 2; break;
		case 'h':
			usage(stdout);
			return LB_EXIT_OK;
		default:
			usage(stderr);
			return LB_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "linkbot hubspot: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return LB_EXIT_USAGE;
	}
	log_init(verbosity);
	log_stage("hubspot");
	if ((rc = cmd_load_config(config, &cfg)) != LB_EXIT_OK)
		return rc;
	for (i = 0; i < cfg->n_clients; i++)
		for (j = 0; j < cfg->clients[i].n_endpoints; j++)
			configured += cfg->clients[i].endpoints[j].hubspot != NULL;
	if (configured == 0) {
		fprintf(stderr, "linkbot hubspot: no endpoint of '%s' has "
			"hubspot: settings (docs/hubspot.md)\n", cfg->path);
		config_free(cfg);
		return LB_EXIT_CONFIG;
	}
	lb_error_init(&err);
	if (pipeline_run(cfg, LB_STAGE_HUBSPOT, &ro, &stats, &err) < 0) {
		fprintf(stderr, "linkbot hubspot: %s\n", err.msg);
		rc = err.code == LB_EUSAGE ? LB_EXIT_USAGE :
		     err.code == LB_ECONFIG ? LB_EXIT_CONFIG : LB_EXIT_ENV;
	} else if (stats.endpoints_failed > 0) {
		fprintf(stderr, "linkbot hubspot: %d endpoint(s) failed\n",
			stats.endpoints_failed);
		rc = LB_EXIT_FAIL;
	} else {
		rc = LB_EXIT_OK;
	}
	config_free(cfg);
	return rc;
}
