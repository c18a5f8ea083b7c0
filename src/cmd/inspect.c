/*
 * inspect.c - linkbot inspect: fetch (or read) one page, extract it, and
 * print every field, where it came from, the text, the canonical URL and the
 * noindex verdict as JSON.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "linkbot/cmd.h"
#include "linkbot/crawl.h"
#include "linkbot/extract.h"
#include "linkbot/fsutil.h"
#include "linkbot/log.h"

#define INSPECT_MAX_FILE ((size_t)64 << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: linkbot inspect [options] URL\n"
		"       linkbot inspect --file PAGE.html --url URL\n\n"
		"Fetches URL as the crawler does (user agent, redirects, X-Robots-Tag)\n"
		"or reads PAGE.html, extracts it, and prints every field as JSON with\n"
		"its source, the text, the canonical URL and the noindex verdict.\n\n"
		"  -c, --config FILE   crawl settings (user agent, limits) from FILE\n"
		"  -f, --file PAGE     read the HTML from a file instead of fetching\n"
		"  -u, --url URL       with --file: the URL the page was served at\n"
		"      --allow-private allow loopback/private addresses (local sites)\n"
		"  -h, --help\n\n"
		"Exit: 0, 1 the page could not be fetched or extracted, 2 usage,\n"
		"3 invalid configuration.\n");
}

static int print_doc(const struct lb_doc *doc, int status,
		     const char *final_url)
{
	char *json = lb_doc_to_json(doc, 1, 1), *out;
	cJSON *o = json ? cJSON_Parse(json) : NULL;

	free(json);
	if (o == NULL)
		return LB_EXIT_ENV;
	cJSON_AddStringToObject(o, "canonical", doc->url ? doc->url : "");
	cJSON_AddBoolToObject(o, "noindex", doc->noindex);
	if (status > 0)
		cJSON_AddNumberToObject(o, "status", status);
	if (final_url != NULL)
		cJSON_AddStringToObject(o, "final_url", final_url);
	out = cJSON_Print(o);
	cJSON_Delete(o);
	if (out == NULL)
		return LB_EXIT_ENV;
	printf("%s\n", out);
	free(out);
	return LB_EXIT_OK;
}

int cmd_inspect(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "file", required_argument, NULL, 'f' },
		{ "url", required_argument, NULL, 'u' },
		{ "allow-private", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *file = NULL, *url = NULL;
	struct lb_config *cfg = NULL;
	struct lb_doc doc;
	struct lb_error err;
	char *html = NULL, *final_url = NULL;
	size_t len = 0;
	int c, allow_private = 0, status = 0, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "c:f:u:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'f': file = optarg; break;
		case 'u': url = optarg; break;
		case 'P': allow_private = 1; break;
		case 'h':
			usage(stdout);
			return LB_EXIT_OK;
		default:
			usage(stderr);
			return LB_EXIT_USAGE;
		}
	}
	if (url == NULL && optind < argc)
		url = argv[optind++];
	if (url == NULL || optind < argc) {
		usage(stderr);
		return LB_EXIT_USAGE;
	}
	lb_error_init(&err);
	lb_doc_init(&doc);
	if ((rc = cmd_load_config_or_defaults(config, 0, &cfg)) != LB_EXIT_OK)
		return rc;
	if (allow_private)
		cfg->crawl.allow_private = 1;
	rc = LB_EXIT_FAIL;
	if (file != NULL) {
		if (lb_file_read(file, INSPECT_MAX_FILE, &html, &len, &err) < 0 ||
		    extract_html(html, len, url, NULL, &doc, &err) < 0) {
			fprintf(stderr, "linkbot inspect: %s\n", err.msg);
			goto out;
		}
	} else if (crawl_fetch_one(cfg, url, &doc, &status, &final_url,
				   &err) < 0) {
		fprintf(stderr, "linkbot inspect: %s\n", err.msg);
		goto out;
	}
	rc = print_doc(&doc, status, final_url);
out:
	free(html);
	free(final_url);
	lb_doc_release(&doc);
	config_free(cfg);
	return rc;
}
