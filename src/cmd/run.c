/*
 * run.c - linkbot run, crawl, build, publish: the nightly job, whole or one
 * stage at a time. One option parser serves the four.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "linkbot/cmd.h"
#include "linkbot/log.h"
#include "linkbot/pipeline.h"

static const struct job {
	const char *name;
	unsigned stages;
	const char *what;
} jobs[] = {
	{ "run", LB_STAGE_ALL,
	  "The nightly job: crawl the URL sources, build (relate, assign) and\n"
	  "publish every endpoint, or only those of --endpoint.\n" },
	{ "crawl", LB_STAGE_CRAWL,
	  "Stage 1: crawl the clients' URL sources into the corpus (the state).\n"
	  "A second crawl on the same UTC day reuses the state unless --force.\n" },
	{ "build", LB_STAGE_BUILD,
	  "Stages 2-4: relate the pages of each endpoint and assign their links\n"
	  "(state/<client>/<endpoint>/links.tsv).\n" },
	{ "publish", LB_STAGE_PUBLISH,
	  "Stages 5-6: render each page's answer and push what changed to the\n"
	  "store (docs/store.md).\n" },
};

static void usage(FILE *f, const struct job *job)
{
	fprintf(f,
		"usage: linkbot %s [options]\n\n%s\n"
		"  -c, --config FILE     configuration (default $LINKBOT_CONFIG or linkbot.yaml)\n"
		"  -e, --endpoint C[/E]  only client C, or its endpoint E\n"
		"  -s, --store DIR|s3://BUCKET/PREFIX   publish there instead\n"
		"      --force           crawl again even if done today\n"
		"      --urls FILE       crawl: only these URLs (side crawl), one a line\n"
		"      --export DIR      build: also write DIR/<client>/<endpoint>/candidates.tsv\n"
		"      --shard I/N       build: only the candidates of shard I of N (0-based)\n"
		"                        into state/<client>/<endpoint>/candidates.I-of-N.tsv\n"
		"      --shards N        build: assign from the N shard files (the merge step)\n"
		"      --cold            build: solve the assignment from scratch, not\n"
		"                        from the last run's bonuses (bonus.tsv)\n"
		"      --dry-run         publish: print what would change, change nothing\n"
		"      --seed N          seed of random completion (default: the UTC day)\n"
		"      --now UNIXTIME    pretend the time is this (tests)\n"
		"      --no-rate-limit   benchmarks only: crawl as fast as the origin allows\n"
		"  -q, --quiet / -v, --verbose\n"
		"  -h, --help\n\n"
		"Exit: 0 done, 1 an endpoint failed (the others were done), 2 usage,\n"
		"3 invalid configuration (nothing touched), 4 environment (disk, state,\n"
		"store, credentials).\n",
		job->name, job->what);
}

static int run_job(const struct job *job, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "endpoint", required_argument, NULL, 'e' },
		{ "store", required_argument, NULL, 's' },
		{ "force", no_argument, NULL, 'F' },
		{ "urls", required_argument, NULL, 'U' },
		{ "export", required_argument, NULL, 'X' },
		{ "shard", required_argument, NULL, 'H' },
		{ "shards", required_argument, NULL, 'M' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "cold", no_argument, NULL, 'C' },
		{ "seed", required_argument, NULL, 'S' },
		{ "now", required_argument, NULL, 'N' },
		{ "no-rate-limit", no_argument, NULL, 'R' },
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
	int c, verbosity = 1, rc;

	memset(&ro, 0, sizeof(ro));
	optind = 0;
	while ((c = getopt_long(argc, argv, "c:e:s:qvh", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'e': ro.endpoint = optarg; break;
		case 's': ro.store = optarg; break;
		case 'F': ro.force = 1; break;
		case 'U': ro.urls_file = optarg; break;
		case 'X': ro.export_dir = optarg; break;
		case 'H':
			if (sscanf(optarg, "%u/%u", &ro.shard_i, &ro.shard_n) != 2 ||
			    ro.shard_n == 0 || ro.shard_i >= ro.shard_n) {
				fprintf(stderr, "linkbot %s: --shard wants I/N with "
					"0 <= I < N, not '%s'\n", job->name, optarg);
				return LB_EXIT_USAGE;
			}
			break;
		case 'M':
			if (sscanf(optarg, "%u", &ro.from_shards) != 1 ||
			    ro.from_shards == 0) {
				fprintf(stderr, "linkbot %s: --shards wants a count, "
					"not '%s'\n", job->name, optarg);
				return LB_EXIT_USAGE;
			}
			break;
		case 'n': ro.dry_run = 1; break;
		case 'C': ro.cold = 1; break;
		case 'S':
			ro.have_seed = 1;
			ro.seed = strtoull(optarg, NULL, 10);
			break;
		case 'N': ro.now = (time_t)strtoll(optarg, NULL, 10); break;
		case 'R': ro.no_rate_limit = 1; break;
		case 'q': verbosity = 0; break;
		case 'v': verbosity = 2; break;
		case 'h':
			usage(stdout, job);
			return LB_EXIT_OK;
		default:
			usage(stderr, job);
			return LB_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "linkbot %s: unexpected argument '%s'\n",
			job->name, argv[optind]);
		usage(stderr, job);
		return LB_EXIT_USAGE;
	}
	log_init(verbosity);
	ro.progress = isatty(STDERR_FILENO) && verbosity > 0;
	if ((rc = cmd_load_config(config, &cfg)) != LB_EXIT_OK)
		return rc;
	lb_error_init(&err);
	if (pipeline_run(cfg, job->stages, &ro, &stats, &err) < 0) {
		fprintf(stderr, "linkbot %s: %s\n", job->name, err.msg);
		rc = err.code == LB_EUSAGE ? LB_EXIT_USAGE :
		     err.code == LB_ECONFIG ? LB_EXIT_CONFIG : LB_EXIT_ENV;
	} else if (stats.endpoints_failed > 0) {
		fprintf(stderr, "linkbot %s: %d endpoint(s) failed\n",
			job->name, stats.endpoints_failed);
		rc = LB_EXIT_FAIL;
	} else {
		rc = LB_EXIT_OK;
	}
	config_free(cfg);
	return rc;
}

int cmd_run(int argc, char **argv)
{
	return run_job(&jobs[0], argc, argv);
}

int cmd_crawl(int argc, char **argv)
{
	return run_job(&jobs[1], argc, argv);
}

int cmd_build(int argc, char **argv)
{
	return run_job(&jobs[2], argc, argv);
}

int cmd_publish(int argc, char **argv)
{
	return run_job(&jobs[3], argc, argv);
}
