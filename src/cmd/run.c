/*
 * run.c - linkbot run, crawl, build, publish and hubspot sync: the nightly
 * job, whole or one stage at a time. One option parser serves the five;
 * each job accepts and documents only the options that mean something to
 * it (hubspot.c hands `linkbot hubspot sync` here: cmd_run_job()).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "linkbot/assign.h"
#include "linkbot/cmd.h"
#include "linkbot/log.h"
#include "linkbot/pipeline.h"

/* The options, each with the jobs that take it and its line of --help. */
enum {
	J_RUN = 1 << 0, J_CRAWL = 1 << 1, J_BUILD = 1 << 2, J_PUBLISH = 1 << 3,
	J_ALL = 15,		/* the four stage jobs */
	J_HUBSPOT = 1 << 4,
};

static const struct opt_doc {
	int key;
	unsigned jobs;
	const char *help;
} opt_docs[] = {
	{ 'c', J_ALL | J_HUBSPOT, "  -c, --config FILE     configuration (default $LINKBOT_CONFIG or linkbot.yaml)\n" },
	{ 'e', J_ALL, "  -e, --endpoint C[/E]  only client C, its endpoint E, or the project\n"
		      "                        with that uuid\n" },
	{ 'K', J_ALL, "      --clients I/N     only the clients of share I of N (0-based): N jobs\n"
		      "                        split a night, each client in exactly one share\n"
		      "                        (a hash of its id); with -e, their intersection\n" },
	{ 'e', J_HUBSPOT, "  -e, --endpoint C[/E]  only client C, or its endpoint E\n" },
	{ 's', J_RUN | J_PUBLISH | J_CRAWL,
		      "  -s, --store DIR|s3://BUCKET/PREFIX   publish there instead\n" },
	{ 's', J_HUBSPOT, "  -s, --store DIR|s3://BUCKET/PREFIX   read the answers there\n" },
	{ 'F', J_RUN | J_CRAWL, "      --force           crawl again even if done today\n" },
	{ 'U', J_CRAWL, "      --urls FILE       only these URLs (side crawl), one a line\n" },
	{ 'X', J_RUN | J_BUILD, "      --export DIR      also write DIR/<client>/<endpoint>/candidates.tsv\n" },
	{ 'H', J_BUILD, "      --shard I/N       only the candidates of shard I of N (0-based)\n"
			"                        into state/<client>/<endpoint>/candidates.I-of-N.tsv\n" },
	{ 'M', J_BUILD, "      --shards N        assign from the N shard files (the merge step)\n" },
	{ 'C', J_RUN | J_BUILD,
		"      --cold            solve the assignment from scratch, not from the\n"
		"                        last run's links and bonuses (bonus.tsv)\n" },
	{ 'T', J_RUN | J_BUILD,
		"      --assign-threads N  threads of the assignment solver (default: one\n"
		"                        per CPU; the links are the same for every N)\n" },
	{ 'n', J_PUBLISH, "      --dry-run         print what would change, change nothing\n" },
	{ 'n', J_HUBSPOT, "      --dry-run         read everything, write nothing, say what would change\n" },
	{ 'A', J_RUN | J_PUBLISH,
		"      --allow-shrink    publish even when an endpoint would lose more than\n"
		"                        its max_shrink share of its answers (default 20 %)\n" },
	{ 'S', J_RUN | J_BUILD | J_PUBLISH,
		"      --seed N          seed of random completion (default: the UTC day)\n" },
	{ 'S', J_HUBSPOT, "      --seed N          seed of the random posts of posts without links\n" },
	{ 'N', J_ALL, "      --now UNIXTIME    pretend the time is this (tests)\n" },
	{ 'j', J_ALL, "  -j, --jobs N          clients at once (default crawl.jobs, 256); 1: one\n"
		      "                        after another\n" },
	{ 'B', J_ALL, "      --build-jobs N    builds and publishes at once (default\n"
		      "                        crawl.build_jobs, the cores)\n" },
	{ 'R', J_RUN | J_CRAWL, "      --no-rate-limit   benchmarks only: crawl as fast as the origin allows\n" },
	{ 'q', J_ALL | J_HUBSPOT, "  -q, --quiet / -v, --verbose\n" },
	{ 'h', J_ALL | J_HUBSPOT, "  -h, --help\n" },
};

static const char exit_doc[] =
	"Exit: 0 done, 1 an endpoint failed (the others were done), 2 usage,\n"
	"3 invalid configuration (nothing touched), 4 environment (disk, state,\n"
	"store, credentials).\n";

static const struct job {
	const char *name;
	unsigned stages, bit;
	const char *what;
	const char *exit;	/* NULL: exit_doc */
} jobs[] = {
	{ "run", LB_STAGE_ALL, J_RUN,
	  "The nightly job: crawl the URL sources, build (relate, assign) and\n"
	  "publish every endpoint, or only those of --endpoint, then sync the\n"
	  "endpoints with hubspot: settings (linkbot hubspot sync).\n", NULL },
	{ "crawl", LB_STAGE_CRAWL, J_CRAWL,
	  "Stage 1: crawl the clients' URL sources into the corpus (the state).\n"
	  "A second crawl on the same UTC day reuses the state unless --force.\n", NULL },
	{ "build", LB_STAGE_BUILD, J_BUILD,
	  "Stages 2-4: relate the pages of each endpoint and assign their links\n"
	  "(state/<client>/<endpoint>/links.tsv).\n", NULL },
	{ "publish", LB_STAGE_PUBLISH, J_PUBLISH,
	  "Stages 5-6: render each page's answer and push what changed to the\n"
	  "store (docs/store.md).\n", NULL },
	{ "hubspot sync", LB_STAGE_HUBSPOT, J_HUBSPOT,
	  "Copies each endpoint's links, as the store serves them, into the\n"
	  "HubSpot custom object its hubspot: settings name (docs/hubspot.md):\n"
	  "creates the object on first launch, lists the published blog posts\n"
	  "and the instances, creates and updates what changed, in batches of\n"
	  "100. An unchanged site makes no write call. `linkbot run` does the\n"
	  "same after publishing.\n",
	  "The token comes from the environment variable named by token_env.\n"
	  "Exit: 0 done, 1 an endpoint failed (HubSpot refused the token or some\n"
	  "inputs, or its DAILY limit is spent: the next run resumes), 2 usage,\n"
	  "3 invalid configuration, 4 environment (store, memory).\n" },
};

static void usage(FILE *f, const struct job *job)
{
	size_t i;

	fprintf(f, "usage: linkbot %s [options]\n\n%s\n", job->name, job->what);
	for (i = 0; i < sizeof(opt_docs) / sizeof(opt_docs[0]); i++)
		if (opt_docs[i].jobs & job->bit)
			fputs(opt_docs[i].help, f);
	fprintf(f, "\n%s", job->exit != NULL ? job->exit : exit_doc);
}

/* An option may have a line per job (its meaning there): any of them. */
static int job_takes(const struct job *job, int key)
{
	size_t i;

	for (i = 0; i < sizeof(opt_docs) / sizeof(opt_docs[0]); i++)
		if (opt_docs[i].key == key && (opt_docs[i].jobs & job->bit))
			return 1;
	return 0;
}

static const char *long_name(const struct option *o, int key)
{
	for (; o->name != NULL; o++)
		if (o->val == key)
			return o->name;
	return "?";
}

/* A whole decimal number in [min, max], nothing before or after it. */
static int parse_num(const char *s, long long min, long long max,
		     long long *out)
{
	char *end;
	long long x;

	if (s == NULL || *s == '\0' || *s == ' ' || *s == '+')
		return -1;
	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || x < min || x > max)
		return -1;
	*out = x;
	return 0;
}

/* "I/N" with 0 <= I < N <= 100000, nothing else. */
static int parse_shard(const char *s, unsigned *i, unsigned *n)
{
	const char *slash = strchr(s, '/');
	char head[24];
	long long a, b;

	if (slash == NULL || (size_t)(slash - s) >= sizeof(head))
		return -1;
	memcpy(head, s, (size_t)(slash - s));
	head[slash - s] = '\0';
	if (parse_num(head, 0, 99999, &a) < 0 ||
	    parse_num(slash + 1, 1, 100000, &b) < 0 || a >= b)
		return -1;
	*i = (unsigned)a;
	*n = (unsigned)b;
	return 0;
}

static int bad_value(const struct job *job, const char *opt, const char *want,
		     const char *got)
{
	fprintf(stderr, "linkbot %s: %s wants %s, not '%s'\n", job->name, opt,
		want, got);
	return LB_EXIT_USAGE;
}

static int run_job(const struct job *job, int argc, char **argv,
		   int (*check)(const struct lb_config *cfg))
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "endpoint", required_argument, NULL, 'e' },
		{ "clients", required_argument, NULL, 'K' },
		{ "store", required_argument, NULL, 's' },
		{ "force", no_argument, NULL, 'F' },
		{ "urls", required_argument, NULL, 'U' },
		{ "export", required_argument, NULL, 'X' },
		{ "shard", required_argument, NULL, 'H' },
		{ "shards", required_argument, NULL, 'M' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "allow-shrink", no_argument, NULL, 'A' },
		{ "cold", no_argument, NULL, 'C' },
		{ "assign-threads", required_argument, NULL, 'T' },
		{ "seed", required_argument, NULL, 'S' },
		{ "now", required_argument, NULL, 'N' },
		{ "no-rate-limit", no_argument, NULL, 'R' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "build-jobs", required_argument, NULL, 'B' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct lb_run_opts ro;
	struct lb_run_stats stats;
	struct lb_config *cfg = NULL;
	struct lb_error err;
	struct timespec t0, t1;
	const char *config = NULL;
	long long x;
	int c, verbosity = 1, rc;

	memset(&ro, 0, sizeof(ro));
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:e:s:j:qvh", opts, NULL)) != -1) {
		if (c == '?' || c == ':') {
			fprintf(stderr, "linkbot %s: %s '%s'\n", job->name,
				c == ':' ? "missing value for" : "unknown option",
				argv[optind - 1]);
			usage(stderr, job);
			return LB_EXIT_USAGE;
		}
		if (c != 'v' && !job_takes(job, c)) {
			fprintf(stderr, "linkbot %s: --%s is not an option of "
				"'linkbot %s' (see linkbot %s --help)\n",
				job->name, long_name(opts, c), job->name,
				job->name);
			return LB_EXIT_USAGE;
		}
		switch (c) {
		case 'c': config = optarg; break;
		case 'e': ro.endpoint = optarg; break;
		case 's':
			if (!config_valid_store(optarg))
				return bad_value(job, "--store",
						 "a directory or s3://BUCKET/PREFIX",
						 optarg);
			ro.store = optarg;
			break;
		case 'K':
			if (parse_shard(optarg, &ro.clients_i, &ro.clients_n) < 0)
				return bad_value(job, "--clients",
						 "I/N with 0 <= I < N <= 100000",
						 optarg);
			break;
		case 'F': ro.force = 1; break;
		case 'U': ro.urls_file = optarg; break;
		case 'X': ro.export_dir = optarg; break;
		case 'H':
			if (parse_shard(optarg, &ro.shard_i, &ro.shard_n) < 0)
				return bad_value(job, "--shard",
						 "I/N with 0 <= I < N <= 100000",
						 optarg);
			break;
		case 'M':
			if (parse_num(optarg, 1, 100000, &x) < 0)
				return bad_value(job, "--shards",
						 "a count from 1 to 100000", optarg);
			ro.from_shards = (unsigned)x;
			break;
		case 'n': ro.dry_run = 1; break;
		case 'A': ro.allow_shrink = 1; break;
		case 'C': ro.cold = 1; break;
		case 'T':
			if (parse_num(optarg, 1, LB_ASSIGN_MAX_THREADS, &x) < 0)
				return bad_value(job, "--assign-threads",
						 "a count from 1 to "
						 LB_ASSIGN_MAX_THREADS_STR, optarg);
			ro.assign_threads = (unsigned)x;
			break;
		case 'S':
			if (parse_num(optarg, 0, INT64_MAX, &x) < 0)
				return bad_value(job, "--seed",
						 "a whole number >= 0", optarg);
			ro.have_seed = 1;
			ro.seed = (uint64_t)x;
			break;
		case 'N':
			if (parse_num(optarg, 1, 253402300799LL, &x) < 0)
				return bad_value(job, "--now",
						 "seconds since 1970 (UTC)", optarg);
			ro.now = (time_t)x;
			break;
		case 'R': ro.no_rate_limit = 1; break;
		case 'j':
		case 'B':
			if (parse_num(optarg, 1, 100000, &x) < 0)
				return bad_value(job, c == 'j' ? "--jobs" :
						 "--build-jobs",
						 "a count from 1 to 100000", optarg);
			*(c == 'j' ? &ro.jobs : &ro.build_jobs) = (unsigned)x;
			break;
		case 'q': verbosity = 0; break;
		case 'v': verbosity = 2; break;
		case 'h':
			usage(stdout, job);
			return LB_EXIT_OK;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "linkbot %s: unexpected argument '%s'\n",
			job->name, argv[optind]);
		usage(stderr, job);
		return LB_EXIT_USAGE;
	}
	if (ro.shard_n > 0 && ro.from_shards > 0) {
		fprintf(stderr, "linkbot %s: --shard and --shards are two "
			"different steps; give one\n", job->name);
		return LB_EXIT_USAGE;
	}
	log_init(verbosity);
	ro.progress = isatty(STDERR_FILENO) && verbosity > 0;
	if ((rc = cmd_load_config(config, &cfg)) != LB_EXIT_OK)
		return rc;
	if (check != NULL && (rc = check(cfg)) != LB_EXIT_OK) {
		config_free(cfg);
		return rc;
	}
	/* the config checked state_store against its own store only */
	if (ro.store != NULL && cfg->state_store != NULL &&
	    config_state_inside(cfg->state_store, ro.store)) {
		fprintf(stderr, "linkbot %s: state_store '%s' is inside the "
			"published store '%s' (--store): the corpus would be "
			"public; publish elsewhere or give state_store a "
			"location of its own (another bucket or prefix)\n",
			job->name, cfg->state_store, ro.store);
		config_free(cfg);
		return LB_EXIT_USAGE;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
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
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc == LB_EXIT_OK || rc == LB_EXIT_FAIL)
		log_info("%s %s: %d client(s), %d endpoint(s) done, %d failed, "
			 "%d project(s), %.1f s", job->name,
			 rc == LB_EXIT_OK ? "done" : "done with failures",
			 stats.clients, stats.endpoints_done,
			 stats.endpoints_failed, stats.projects,
			 (double)(t1.tv_sec - t0.tv_sec) +
				 (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	config_free(cfg);
	return rc;
}

int cmd_run(int argc, char **argv)
{
	return run_job(&jobs[0], argc, argv, NULL);
}

int cmd_crawl(int argc, char **argv)
{
	return run_job(&jobs[1], argc, argv, NULL);
}

int cmd_build(int argc, char **argv)
{
	return run_job(&jobs[2], argc, argv, NULL);
}

int cmd_publish(int argc, char **argv)
{
	return run_job(&jobs[3], argc, argv, NULL);
}

static const struct job *job_named(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
		if (strcmp(jobs[i].name, name) == 0)
			return &jobs[i];
	return NULL;
}

int cmd_run_job(const char *name, int argc, char **argv,
		int (*check)(const struct lb_config *cfg))
{
	return run_job(job_named(name), argc, argv, check);
}

void cmd_job_usage(const char *name, FILE *f)
{
	usage(f, job_named(name));
}
