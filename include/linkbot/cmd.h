/*
 * cmd.h - the subcommands of the linkbot program and its exit codes.
 *
 * One file per subcommand in src/cmd/; src/main.c holds the table that maps
 * a name to its function. Each function parses its own options, prints its
 * own --help and returns an exit code; only main.c and cmd/ exit.
 */
#ifndef LINKBOT_CMD_H
#define LINKBOT_CMD_H

#include <stdio.h>

#include "linkbot/config.h"

/* Exit codes of the linkbot program (documented in README.md). */
enum lb_exit {
	LB_EXIT_OK = 0,		/* done */
	LB_EXIT_FAIL = 1,	/* done, but something failed: an endpoint of a
				   run, a page for inspect, a lookup error answer */
	LB_EXIT_USAGE = 2,	/* bad command line */
	LB_EXIT_CONFIG = 3,	/* the configuration is invalid; nothing touched */
	LB_EXIT_ENV = 4,	/* the environment failed: disk, state, store,
				   credentials, out of memory */
};

int cmd_run(int argc, char **argv);
int cmd_crawl(int argc, char **argv);
int cmd_build(int argc, char **argv);
int cmd_publish(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_page_id(int argc, char **argv);
int cmd_lookup(int argc, char **argv);
int cmd_preview(int argc, char **argv);
int cmd_hubspot(int argc, char **argv);

/*
 * The one option parser and runner of the pipeline jobs (src/cmd/run.c):
 * name is "run", "crawl", "build", "publish" or "hubspot sync"; argv[0] is
 * the job's word, options follow. check, when not NULL, vets the loaded
 * configuration and returns an exit code (LB_EXIT_OK: go on).
 */
int cmd_run_job(const char *name, int argc, char **argv,
		int (*check)(const struct lb_config *cfg));
/* That job's --help on f. */
void cmd_job_usage(const char *name, FILE *f);

/* The config file: --config, else $LINKBOT_CONFIG, else linkbot.yaml. */
const char *cmd_config_path(const char *opt);

/*
 * Loads the config, printing the error; returns LB_EXIT_OK or
 * LB_EXIT_CONFIG (with *cfg NULL).
 */
int cmd_load_config(const char *opt, struct lb_config **cfg);

/*
 * Like cmd_load_config() when a config is given (opt or $LINKBOT_CONFIG) or
 * required; else the defaults (no clients), for commands that can run
 * without one (inspect, lookup --store).
 */
int cmd_load_config_or_defaults(const char *opt, int required,
				struct lb_config **cfg);

#endif
