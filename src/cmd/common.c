/* common.c - what every subcommand shares: finding and loading the config. */
#include <stdio.h>
#include <stdlib.h>

#include "linkbot/cmd.h"

const char *cmd_config_path(const char *opt)
{
	const char *env = getenv("LINKBOT_CONFIG");

	if (opt != NULL)
		return opt;
	if (env != NULL && *env != '\0')
		return env;
	return "linkbot.yaml";
}

int cmd_load_config(const char *opt, struct lb_config **cfg)
{
	struct lb_error err;

	lb_error_init(&err);
	if (config_load(cmd_config_path(opt), cfg, &err) < 0) {
		fprintf(stderr, "linkbot: %s\n", err.msg);
		if (err.code == LB_ENOTFOUND)
			fprintf(stderr, "linkbot: give the file with --config "
					"FILE (see examples/linkbot.yaml)\n");
		return LB_EXIT_CONFIG;
	}
	return LB_EXIT_OK;
}

int cmd_load_config_or_defaults(const char *opt, int required,
				struct lb_config **cfg)
{
	static const char defaults[] = "clients: []\n";
	const char *env = getenv("LINKBOT_CONFIG");
	struct lb_error err;

	if (required || opt != NULL || (env != NULL && *env != '\0'))
		return cmd_load_config(opt, cfg);
	lb_error_init(&err);
	if (config_parse("<defaults>", defaults, sizeof(defaults) - 1, cfg,
			 &err) < 0) {
		fprintf(stderr, "linkbot: %s\n", err.msg);
		return LB_EXIT_ENV;
	}
	return LB_EXIT_OK;
}
