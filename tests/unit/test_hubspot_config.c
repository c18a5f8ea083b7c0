/* The hubspot: block of an endpoint: defaults, and every mistake at its line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "linkbot/config.h"

static const char head[] =
	"clients:\n"
	"  - id: demo\n"
	"    sources:\n"
	"      - sitemap: https://blog.example.com/sitemap.xml\n"
	"    sets:\n"
	"      blog: [\"blog.example.com/blog/{slug}/\"]\n"
	"    endpoints:\n"
	"      - id: blog\n"
	"        source: blog\n"
	"        links: 6\n"
	"        hubspot:\n";	/* line 11; its keys from line 12 */

static struct lb_config *parse(const char *body, struct lb_error *err)
{
	char text[4096];
	struct lb_config *cfg = NULL;

	snprintf(text, sizeof(text), "%s%s", head, body);
	lb_error_init(err);
	if (config_parse("t.yaml", text, strlen(text), &cfg, err) < 0)
		return NULL;
	return cfg;
}

static void expect_error(const char *body, const char *n1, const char *n2)
{
	struct lb_error err;
	struct lb_config *cfg = parse(body, &err);

	if (cfg != NULL) {
		config_free(cfg);
		fail_msg("accepted:\n%s", body);
	}
	if (strstr(err.msg, n1) == NULL || (n2 && strstr(err.msg, n2) == NULL))
		fail_msg("'%s' lacks '%s' / '%s'", err.msg, n1, n2 ? n2 : "");
}

static void test_defaults(void **state)
{
	struct lb_error err;
	struct lb_config *cfg = parse("          token_env: HUBSPOT_TOKEN\n", &err);
	const struct lb_hubspot *h;

	(void)state;
	if (cfg == NULL)
		fail_msg("%s", err.msg);
	h = cfg->clients[0].endpoints[0].hubspot;
	assert_non_null(h);
	assert_string_equal(h->token_env, "HUBSPOT_TOKEN");
	assert_string_equal(h->object, "linkbot_related_posts");
	assert_int_equal(h->n, 6);		/* the endpoint's links */
	assert_string_equal(h->api_version, "2026-03");
	assert_string_equal(h->base_url, "https://api.hubapi.com");
	assert_true(h->random_fill);
	assert_false(h->archive_gone);
	assert_int_equal(h->weekly, -1);
	assert_int_equal(h->blogs.n, 0);
	config_free(cfg);
}

static void test_all_keys(void **state)
{
	struct lb_error err;
	struct lb_config *cfg = parse(
		"          token_env: HS_TOKEN\n"
		"          object: my_links\n"
		"          links: 4\n"
		"          blogs: [111, 222]\n"
		"          post_filters: [slug__contains=guide]\n"
		"          api_version: v3\n"
		"          base_url: http://127.0.0.1:9/\n"
		"          without_links: skip\n"
		"          archive_gone: true\n"
		"          weekly: Monday\n", &err);
	const struct lb_hubspot *h;

	(void)state;
	if (cfg == NULL)
		fail_msg("%s", err.msg);
	h = cfg->clients[0].endpoints[0].hubspot;
	assert_string_equal(h->object, "my_links");
	assert_int_equal(h->n, 4);
	assert_int_equal(h->blogs.n, 2);
	assert_string_equal(h->blogs.v[1], "222");
	assert_string_equal(h->api_version, "v3");
	assert_false(h->random_fill);
	assert_true(h->archive_gone);
	assert_int_equal(h->weekly, 1);
	config_free(cfg);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("          object: x\n", "t.yaml:12:", "missing required key 'token_env'");
	expect_error("          token_env: pat-na1-12ab-34cd\n", "t.yaml:12:",
		     "not the token itself");
	expect_error("          token_env: T\n          api_version: 2026-13\n",
		     "t.yaml:13:", "date version like 2026-03, or v3");
	expect_error("          token_env: T\n          api_version: v4\n",
		     "t.yaml:13:", "api_version 'v4'");
	expect_error("          token_env: T\n          object: My-Links\n",
		     "t.yaml:13:", "object 'My-Links'");
	expect_error("          token_env: T\n          blogs: [main]\n",
		     "t.yaml:13:", "blog IDs");
	expect_error("          token_env: T\n          post_filters: [slug]\n",
		     "t.yaml:13:", "property__operator=value");
	expect_error("          token_env: T\n          base_url: api.hubapi.com\n",
		     "t.yaml:13:", "http://");
	expect_error("          token_env: T\n          without_links: none\n",
		     "t.yaml:13:", "random");
	expect_error("          token_env: T\n          weekly: someday\n",
		     "t.yaml:13:", "weekday");
	expect_error("          token_env: T\n          links: 0\n",
		     "t.yaml:13:", "between 1 and 100");
	expect_error("          token_env: T\n          tokn: x\n",
		     "t.yaml:13:", "unknown key 'tokn'");
	expect_error("          [a]\n", "t.yaml:12:", "mapping");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_all_keys),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
