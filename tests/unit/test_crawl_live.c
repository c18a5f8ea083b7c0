/*
 * crawl_client() and crawl_fetch_one() end to end under ASan+UBSan, against
 * nginx serving the crawl-rules fixture (tests/lib/origin.sh), so that every
 * path of the crawler (sources, robots, redirects, caps, retries, corpus)
 * runs sanitized. The rules themselves are checked in detail by
 * tests/integration/crawl-rules.sh; here: the same expected pages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "linkbot/config.h"
#include "linkbot/corpus.h"
#include "linkbot/crawl.h"
#include "linkbot/log.h"

static char origin[128], work[512], state[64];

static int setup(void **st)
{
	FILE *p;

	(void)st;
	p = popen("tests/lib/origin.sh start tests/data/crawl/rules/htdocs "
		  "tests/data/crawl/rules/server.conf", "r");
	if (p == NULL || fscanf(p, "%127s %511s", origin, work) != 2) {
		if (p)
			pclose(p);
		return -1;
	}
	pclose(p);
	strcpy(state, "/tmp/linkbot-test-crawl-live.XXXXXX");
	return mkdtemp(state) == NULL ? -1 : 0;
}

static int teardown(void **st)
{
	char cmd[1200];

	(void)st;
	snprintf(cmd, sizeof(cmd), "tests/lib/origin.sh stop '%s'; rm -rf '%s'",
		 work, state);
	return system(cmd) == 0 ? 0 : -1;
}

struct pages {
	char buf[8192];
	int n;
};

static int visit(struct lb_doc *doc, const char *sets, void *arg)
{
	struct pages *p = arg;
	size_t len = strlen(p->buf), o = strlen(origin);

	(void)sets;
	assert_true(strncmp(doc->url, origin, o) == 0);
	snprintf(p->buf + len, sizeof(p->buf) - len, "%s\n", doc->url + o);
	p->n++;
	return 0;
}

static void test_crawl_rules_site(void **st)
{
	char yaml[2048], *want = NULL;
	struct lb_config *cfg = NULL;
	struct lb_corpus *corpus = NULL;
	struct lb_crawl_opts opts;
	struct lb_crawl_stats stats;
	struct lb_error err;
	struct pages pages;
	FILE *f;
	long n;

	(void)st;
	log_init(0);
	snprintf(yaml, sizeof(yaml),
		 "store: %s/public\nstate: %s/state\n"
		 "crawl:\n  allow_private: true\n  max_body_bytes: 200000\n"
		 "  timeout_seconds: 4\n  bot_info_url: https://example.com/bot\n"
		 "clients:\n  - id: t\n    sources:\n"
		 "      - sitemap_index: %s/sitemap_index.xml\n"
		 "        pattern: \"*/sitemaps/posts*\"\n"
		 "      - html_sitemap: %s/html-sitemap/\n"
		 "      - robots: %s/robots.txt\n"
		 "    sets:\n      blog: [\"%s/blog/{slug}/\"]\n"
		 "    endpoints:\n      - id: e\n        source: blog\n",
		 state, state, origin, origin, origin, origin + 7);
	lb_error_init(&err);
	if (config_parse("test", yaml, strlen(yaml), &cfg, &err) < 0)
		fail_msg("%s", err.msg);
	if (corpus_open(cfg->state_dir, "t", &corpus, &err) < 0)
		fail_msg("%s", err.msg);
	memset(&opts, 0, sizeof(opts));
	opts.no_rate_limit = 1;
	if (crawl_client(cfg, &cfg->clients[0], corpus, &opts, &stats,
			 &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(stats.indexed, 19);	/* 18 pages, canon twice */
	assert_int_equal(stats.failed, 2);	/* 503, timeout */
	memset(&pages, 0, sizeof(pages));
	assert_int_equal(corpus_foreach(corpus, visit, &pages, &err), 0);
	f = fopen("tests/data/crawl/rules/expected-run1.txt", "r");
	assert_non_null(f);
	want = calloc(1, 8192);
	n = (long)fread(want, 1, 8191, f);
	fclose(f);
	assert_true(n > 0);
	/* corpus order is byte order of full URLs; the file is sorted too */
	assert_string_equal(pages.buf, want);
	free(want);
	corpus_free(corpus);
	config_free(cfg);
}

static void test_fetch_one(void **st)
{
	struct lb_config *cfg = NULL;
	struct lb_doc doc;
	struct lb_error err;
	char url[256], *final = NULL;
	int status = 0;
	const char *yaml = "clients: []\ncrawl:\n  allow_private: true\n";

	(void)st;
	lb_error_init(&err);
	assert_int_equal(config_parse("t", yaml, strlen(yaml), &cfg, &err), 0);
	/* a redirect chain through an out-of-set hop, then the page */
	snprintf(url, sizeof(url), "%s/blog/chain/", origin);
	lb_doc_init(&doc);
	if (crawl_fetch_one(cfg, url, &doc, &status, &final, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(status, 200);
	assert_non_null(strstr(final, "/blog/chain-end/"));
	assert_false(doc.noindex);
	lb_doc_release(&doc);
	free(final);
	final = NULL;
	/* X-Robots-Tag reaches doc->noindex */
	snprintf(url, sizeof(url), "%s/blog/xrt-linkbot/", origin);
	lb_doc_init(&doc);
	assert_int_equal(crawl_fetch_one(cfg, url, &doc, &status, &final,
					 &err), 0);
	assert_true(doc.noindex);
	lb_doc_release(&doc);
	free(final);
	final = NULL;
	/* 404 is an error here (inspect reports it) */
	snprintf(url, sizeof(url), "%s/blog/gone-404/", origin);
	lb_doc_init(&doc);
	lb_error_init(&err);
	assert_int_equal(crawl_fetch_one(cfg, url, &doc, &status, &final,
					 &err), -1);
	assert_int_equal(status, 404);
	lb_doc_release(&doc);
	/* without allow_private: refused */
	cfg->crawl.allow_private = 0;
	snprintf(url, sizeof(url), "%s/blog/ok-1/", origin);
	lb_doc_init(&doc);
	lb_error_init(&err);
	assert_int_equal(crawl_fetch_one(cfg, url, &doc, &status, &final,
					 &err), -1);
	assert_non_null(strstr(err.msg, "refused private address"));
	lb_doc_release(&doc);
	config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crawl_rules_site),
		cmocka_unit_test(test_fetch_one),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
