/* page_id.c - linkbot page-id: the page ID the edge derives from a URL. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/cmd.h"
#include "linkbot/pageid.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: linkbot page-id [--query-params a,b | '*'] [--key] URL...\n"
		"\n"
		"Prints, one line per URL, the 32-hex page ID under which the\n"
		"answer for URL is stored (docs/page-id.md). URL may be a full URL,\n"
		"host/path, a path starting with '/', or a percent-encoded form.\n"
		"\n"
		"  --query-params LIST  query parameters that take part in the ID\n"
		"                       (comma-separated names, or '*' for all)\n"
		"  --key                print the normalised key instead of the ID\n"
		"  -h, --help           this text\n"
		"\n"
		"Exit: 0, or 1 if a URL is refused (its line says why).\n");
}

int cmd_page_id(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "query-params", required_argument, NULL, 'q' },
		{ "key", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *names[64];
	struct lb_qrule rule = { 0, names, 0 };
	char *list = NULL, *tok, *save = NULL;
	int c, print_key = 0, rc = LB_EXIT_OK, i;

	optind = 0;
	while ((c = getopt_long(argc, argv, "q:kh", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			free(list);
			list = strdup(optarg);
			break;
		case 'k':
			print_key = 1;
			break;
		case 'h':
			usage(stdout);
			free(list);
			return LB_EXIT_OK;
		default:
			usage(stderr);
			free(list);
			return LB_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		free(list);
		return LB_EXIT_USAGE;
	}
	for (tok = list ? strtok_r(list, ",", &save) : NULL; tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "*") == 0)
			rule.keep_all = 1;
		else if (rule.n_names < sizeof(names) / sizeof(names[0]))
			names[rule.n_names++] = tok;
	}
	for (i = optind; i < argc; i++) {
		struct lb_error err;
		char *key = NULL, id[LB_PAGEID_LEN + 1];

		lb_error_init(&err);
		if (pageid_normalize(argv[i], &rule, &key, &err) < 0) {
			printf("error: %s\n", err.msg);
			rc = LB_EXIT_FAIL;
			continue;
		}
		if (print_key) {
			printf("%s\n", key);
		} else {
			pageid_hash(key, id);
			printf("%s\n", id);
		}
		free(key);
	}
	free(list);
	return rc;
}
