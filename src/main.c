/*
 * main.c - the linkbot program: one table of subcommands.
 *
 * The stages of a run (crawl, build, publish) live in src/pipeline/; this
 * table only names the commands a user types.
 */
#include <stdio.h>
#include <string.h>

#include "linkbot/cmd.h"
#include "linkbot/log.h"

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "run", cmd_run, "the nightly job: crawl, build, publish, hubspot sync" },
	{ "crawl", cmd_crawl, "stage 1: crawl the URL sources into the corpus" },
	{ "build", cmd_build, "stages 2-4: relate pages and assign links" },
	{ "publish", cmd_publish, "stages 5-6: render answers, push to the store" },
	{ "inspect", cmd_inspect, "fetch and extract one page, print its fields" },
	{ "page-id", cmd_page_id, "print the page ID the edge derives from a URL" },
	{ "lookup", cmd_lookup, "print what the API answers for a URL, from the store" },
	{ "preview", cmd_preview, "serve a store through the real edge (nginx + linkbot's module)" },
	{ "hubspot", cmd_hubspot, "hubspot sync: copy the links into HubSpot custom objects" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: linkbot <command> [options]  (linkbot <command> --help)\n\n"
		   "commands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nexit codes: 0 ok, 1 something failed, 2 usage, "
		   "3 invalid config, 4 environment (disk, store, state)\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return LB_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return LB_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("linkbot 1.0\n");
		return LB_EXIT_OK;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) == 0) {
			log_stage(commands[i].name);
			return commands[i].fn(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "linkbot: '%s' is not a command\n\n", argv[1]);
	usage(stderr);
	return LB_EXIT_USAGE;
}
