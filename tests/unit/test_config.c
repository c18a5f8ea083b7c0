/* Configuration: the example loads; every mistake names its line and fix. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "linkbot/config.h"

static void test_example_loads(void **state)
{
	struct lb_config *cfg = NULL;
	struct lb_error err;
	const struct lb_client *cl;
	const struct lb_endpoint *ep;

	(void)state;
	lb_error_init(&err);
	if (config_load("examples/linkbot.yaml", &cfg, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(cfg->store, "./public");
	assert_int_equal(cfg->crawl.pages_per_minute, 240);
	assert_int_equal(cfg->crawl.jobs, 256);
	assert_int_equal(cfg->crawl.build_jobs, 0);	/* commented: cores */
	assert_int_equal(cfg->crawl.max_connections, 0);	/* the rule */
	cl = config_client(cfg, "demo");
	assert_non_null(cl);
	assert_int_equal(cl->n_sources, 2);
	assert_int_equal(cl->sources[0].kind, LB_SOURCE_SITEMAP_INDEX);
	assert_non_null(cl->sources[0].pattern);
	ep = config_endpoint(cl, "blog-to-blog");
	assert_non_null(ep);
	assert_int_equal(ep->variant, LB_VARIANT_STANDARD);
	assert_int_equal(ep->links, 8);
	assert_int_equal(ep->min_incoming, 8);
	assert_true(ep->random_completion);
	assert_ptr_equal(ep->source, ep->target);
	ep = config_endpoint(cl, "blog");
	assert_int_equal(ep->variant, LB_VARIANT_ENTERPRISE);
	assert_int_equal(ep->min_incoming, 6);	/* defaults to links */
	assert_int_equal(ep->extra_fields.n, 2);
	assert_int_equal(cfg->n_projects, 1);
	assert_ptr_equal(cfg->projects[0].client, cl);
	config_free(cfg);
}

static const char base[] =
	"store: ./out\n"
	"clients:\n"
	"  - id: acme\n"
	"    sources:\n"
	"      - sitemap: https://acme.example/sitemap.xml\n"
	"    sets:\n"
	"      blog: acme.example/blog/{slug}\n"
	"    endpoints:\n"
	"      - id: b2b\n"
	"        source: blog\n";

/* Parses text that must fail; checks the message holds each needle. */
static void expect_error(const char *text, const char *needle1,
			 const char *needle2)
{
	struct lb_config *cfg = NULL;
	struct lb_error err;

	lb_error_init(&err);
	if (config_parse("t.yaml", text, strlen(text), &cfg, &err) == 0)
		fail_msg("accepted:\n%s", text);
	assert_null(cfg);
	assert_int_equal(err.code, LB_ECONFIG);
	if (strstr(err.msg, needle1) == NULL ||
	    (needle2 && strstr(err.msg, needle2) == NULL))
		fail_msg("message '%s' lacks '%s' / '%s'", err.msg, needle1,
			 needle2 ? needle2 : "");
}

static void test_minimal_ok(void **state)
{
	struct lb_config *cfg = NULL;
	struct lb_error err;

	(void)state;
	lb_error_init(&err);
	if (config_parse("t.yaml", base, strlen(base), &cfg, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(cfg->state_dir, "state");
	assert_int_equal(cfg->clients[0].endpoints[0].links, 8);
	/* the crawl defaults come from linkbot/config.h, inside SPEC's range */
	assert_int_equal(cfg->crawl.pages_per_minute, 120);
	assert_int_equal(cfg->crawl.pages_per_minute,
			 LB_CRAWL_PAGES_PER_MINUTE);
	assert_true(LB_CRAWL_PAGES_PER_MINUTE >= LB_CRAWL_PAGES_PER_MINUTE_MIN &&
		    LB_CRAWL_PAGES_PER_MINUTE <= LB_CRAWL_PAGES_PER_MINUTE_MAX);
	assert_int_equal(cfg->crawl.timeout_seconds, LB_CRAWL_TIMEOUT_SECONDS);
	assert_int_equal(cfg->crawl.max_redirects, LB_CRAWL_MAX_REDIRECTS);
	config_free(cfg);
}

static void test_errors_name_the_line(void **state)
{
	char text[2048];

	(void)state;
	/* A typo in a key: the line and the closest known key. */
	snprintf(text, sizeof(text), "%s", base);
	memcpy(strstr(text, "endpoints"), "endpionts", 9);
	expect_error(text, "t.yaml:8:", "did you mean 'endpoints'");
	/* Unknown top-level key. */
	snprintf(text, sizeof(text), "%sbogus: 1\n", base);
	expect_error(text, "t.yaml:11:", "unknown key 'bogus'");
	/* Out of range. */
	snprintf(text, sizeof(text), "crawl:\n  pages_per_minute: 500\n%s",
		 base);
	expect_error(text, "t.yaml:2:", "between 60 and 240");
	/* The night's caps (docs/crawl.md): at least one client at once. */
	snprintf(text, sizeof(text), "crawl:\n  jobs: 0\n%s", base);
	expect_error(text, "t.yaml:2:", "between 1 and 100000");
	snprintf(text, sizeof(text), "crawl:\n  max_connections: -1\n%s",
		 base);
	expect_error(text, "t.yaml:2:", "between 1 and 100000");
	/* Not a number. */
	snprintf(text, sizeof(text), "%s        links: eight\n", base);
	expect_error(text, "t.yaml:11:", "whole number");
	/* A set that does not exist. */
	snprintf(text, sizeof(text), "%s        target: shop\n", base);
	expect_error(text, "t.yaml:11:", "target set 'shop'");
	/* Bad variant and state. */
	snprintf(text, sizeof(text), "%s        variant: premium\n", base);
	expect_error(text, "t.yaml:11:", "standard or enterprise");
	snprintf(text, sizeof(text), "%s        state: on\n", base);
	expect_error(text, "t.yaml:11:", "active, pending or disabled");
	/* Broken YAML. */
	expect_error("clients:\n  - id: [\n", "t.yaml:", NULL);
	/* Bad identifiers and URLs. */
	snprintf(text, sizeof(text), "%s", base);
	memcpy(strstr(text, "id: acme"), "id: Ac/e", 8);
	expect_error(text, "t.yaml:3:", "client id");
	snprintf(text, sizeof(text), "%s", base);
	memcpy(strstr(text, "https://acme"), "ftp://acme.", 11);
	expect_error(text, "t.yaml:5:", "http://");
	/* Project without key hashes, and a key that is not a hash. */
	snprintf(text, sizeof(text),
		 "%sprojects:\n  - uuid: p1\n    client: acme\n"
		 "    modules:\n      - {id: m, from: /a/, to: /b/}\n", base);
	expect_error(text, "t.yaml:12:", "api_key_sha256");
	snprintf(text, sizeof(text),
		 "%sprojects:\n  - uuid: p1\n    client: acme\n"
		 "    api_key_sha256: [secret]\n"
		 "    modules:\n      - {id: m, from: /a/, to: /b/}\n", base);
	expect_error(text, "t.yaml:14:", "SHA-256");
	/* Duplicate endpoint. */
	snprintf(text, sizeof(text), "%s      - id: b2b\n        source: blog\n",
		 base);
	expect_error(text, "t.yaml:11:", "defined twice");
	/* A URL pattern that does not compile. */
	snprintf(text, sizeof(text), "%s", base);
	memcpy(strstr(text, "blog/{slug}"), "blog/{slu}}", 11);
	expect_error(text, "t.yaml:7:", "set 'blog'");
	/* A segment class that does not exist ({year:digits} does). */
	snprintf(text, sizeof(text), "%s", base);
	memcpy(strstr(text, "blog/{slug}"), "blog/{s:nm}", 11);
	expect_error(text, "t.yaml:7:", "digits, letters");
	/* Empty file. */
	expect_error("", "empty", NULL);
}

/* Mistakes YAML itself lets through silently (issue: night after night). */
static void test_silent_mistakes_refused(void **state)
{
	char text[2048];

	(void)state;
	/* A key given twice: the second would be ignored unvalidated. */
	snprintf(text, sizeof(text), "%s        links: 8\n        links: 9999\n",
		 base);
	expect_error(text, "t.yaml:12:", "'links' is given twice in an "
		     "endpoint (first at line 11)");
	/* A second document would be ignored. */
	snprintf(text, sizeof(text), "%s---\nstore: elsewhere\n", base);
	expect_error(text, "t.yaml:12:", "a second YAML document");
	/* NaN and infinity pass a range check. */
	snprintf(text, sizeof(text), "%s        stability_bonus: nan\n", base);
	expect_error(text, "t.yaml:11:", "must be a number, not 'nan'");
	snprintf(text, sizeof(text), "%s        max_shrink: .inf\n", base);
	expect_error(text, "t.yaml:11:", "max_shrink");
	/* Null is no directory named '~'. */
	snprintf(text, sizeof(text), "%s", base);
	memcpy(strstr(text, "store: ./out"), "store: ~    ", 12);
	expect_error(text, "t.yaml:1:", "'store' is null");
	/* A bucket URL with a typo is no directory either. */
	snprintf(text, sizeof(text), "%s", base);
	memcpy(strstr(text, "store: ./out"), "store: s3:/", 11);
	expect_error(text, "t.yaml:1:", "neither a directory nor s3://");
	/* A set of exclusions only matches nothing. */
	expect_error("clients:\n  - id: acme\n    sources:\n"
		     "      - sitemap: https://acme.example/sitemap.xml\n"
		     "    sets:\n      blog:\n        - \"!acme.example/x/*\"\n"
		     "        - \"!acme.example/y/*\"\n",
		     "t.yaml:7:", "only '!' exclusions");
	/* Two modules with one id would mix in the published map. */
	snprintf(text, sizeof(text),
		 "%sprojects:\n  - uuid: p1\n    client: acme\n"
		 "    api_key_sha256: [%064d]\n"
		 "    modules:\n      - {id: m, from: /a/, to: /b/}\n"
		 "      - {id: m, from: /c/, to: /d/}\n", base, 0);
	expect_error(text, "t.yaml:17:", "module 'm' is defined twice");
}

static void test_store_locations(void **state)
{
	(void)state;
	assert_true(config_valid_store("public"));
	assert_true(config_valid_store("dir:/srv/x"));
	assert_true(config_valid_store("s3://bucket/prefix"));
	assert_true(config_valid_store("s3://bucket"));
	assert_false(config_valid_store("s3:/x"));
	assert_false(config_valid_store("s3://"));
	assert_false(config_valid_store("s3:///x"));
	assert_false(config_valid_store("gs://bucket"));
	assert_false(config_valid_store(""));
}

/* A billion laughs of aliases, and an alias inside its own anchor: refused
 * at once (the readers used to walk the expansion). */
static void test_yaml_aliases(void **state)
{
	char text[2048];
	size_t n = 0;
	int i, k;
	time_t t0 = time(NULL);

	(void)state;
	n += (size_t)snprintf(text + n, sizeof(text) - n,
			      "x0: &a0 [\"/blog/{slug}\"]\n");
	for (i = 1; i < 10; i++) {
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "x%d: &a%d [", i, i);
		for (k = 0; k < 9; k++)
			n += (size_t)snprintf(text + n, sizeof(text) - n,
					      "%s*a%d", k ? ", " : "", i - 1);
		n += (size_t)snprintf(text + n, sizeof(text) - n, "]\n");
	}
	snprintf(text + n, sizeof(text) - n, "clients: *a9\n");
	expect_error(text, "t.yaml:", "expand to more than");
	assert_true(time(NULL) - t0 < 3);
	expect_error("a: &x [1, *x]\n", "t.yaml:", "alias inside itself");
}

static void test_missing_file(void **state)
{
	struct lb_config *cfg = NULL;
	struct lb_error err;

	(void)state;
	lb_error_init(&err);
	assert_int_equal(config_load("/nonexistent/linkbot.yaml", &cfg, &err),
			 -1);
	assert_int_equal(err.code, LB_ENOTFOUND);
	assert_non_null(strstr(err.msg, "/nonexistent/linkbot.yaml"));
}

/* the check both the config and `run --store` make */
static void test_state_inside(void **state)
{
	static const struct {
		const char *st, *store;
		int inside;
	} cases[] = {
		{ "s3://b/p", "s3://b/p", 1 },
		{ "s3://b/p/state", "s3://b/p", 1 },
		{ "s3://b/p//x/", "s3://b/p/", 1 },
		{ "s3://b/state", "s3://b", 1 },
		{ "dir:./pub/_state", "pub", 1 },
		{ "public/_state", NULL, 1 },
		{ "s3://b/p2", "s3://b/p", 0 },
		{ "s3://b2/p", "s3://b/p", 0 },
		{ "pub2", "pub", 0 },
		{ "state", NULL, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (config_state_inside(cases[i].st, cases[i].store) !=
		    cases[i].inside)
			fail_msg("state_store '%s', store '%s': want %d",
				 cases[i].st, cases[i].store ? cases[i].store :
				 "(default)", cases[i].inside);
	}
}

/* crawl.max_connections: as set, else 2 a client at once, at least 256 */
static void test_connections_rule(void **state)
{
	struct lb_crawl_settings c = { 0 };

	(void)state;
	assert_int_equal(config_connections(&c, 1), 256);
	assert_int_equal(config_connections(&c, 128), 256);
	assert_int_equal(config_connections(&c, 129), 258);
	assert_int_equal(config_connections(&c, 1000), 2000);
	c.max_connections = 1;
	assert_int_equal(config_connections(&c, 1000), 1);
	c.max_connections = 300;
	assert_int_equal(config_connections(&c, 1), 300);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_loads),
		cmocka_unit_test(test_connections_rule),
		cmocka_unit_test(test_minimal_ok),
		cmocka_unit_test(test_errors_name_the_line),
		cmocka_unit_test(test_silent_mistakes_refused),
		cmocka_unit_test(test_store_locations),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_yaml_aliases),
		cmocka_unit_test(test_state_inside),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
