/* robots.txt per RFC 9309: groups, longest match, '*', '$', encodings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "linkbot/robots.h"

static struct lb_robots *parse(const char *txt)
{
	struct lb_robots *r = NULL;
	struct lb_error err;

	lb_error_init(&err);
	if (robots_parse(txt, strlen(txt), "LinkBot", &r, &err) < 0)
		fail_msg("%s", err.msg);
	return r;
}

static int allowed(const char *txt, const char *path)
{
	struct lb_robots *r = parse(txt);
	int a = robots_allowed(r, path);

	robots_free(r);
	return a;
}

static void test_groups(void **state)
{
	const char *txt =
		"User-agent: *\n"
		"Disallow: /\n"
		"\n"
		"User-agent: otherbot\n"
		"Allow: /\n"
		"\n"
		"User-Agent: linkbot\n"
		"Disallow: /private/\n";

	(void)state;
	/* our group, not '*': case-insensitive agent name */
	assert_true(allowed(txt, "/blog/a"));
	assert_false(allowed(txt, "/private/x"));
	/* no group for us: '*' */
	assert_false(allowed("User-agent: *\nDisallow: /\n", "/x"));
	/* "LinkBot/1.0" names us; groups naming us are merged */
	assert_false(allowed("User-agent: LinkBot/1.0\nDisallow: /a\n"
			     "User-agent: *\nDisallow: /b\n"
			     "User-agent: linkbot\nDisallow: /c\n", "/c/1"));
	assert_false(allowed("User-agent: LinkBot/1.0\nDisallow: /a\n"
			     "User-agent: *\nDisallow: /b\n"
			     "User-agent: linkbot\nDisallow: /c\n", "/a/1"));
	assert_true(allowed("User-agent: LinkBot/1.0\nDisallow: /a\n"
			    "User-agent: *\nDisallow: /b\n", "/b/1"));
	/* several user-agent lines start one group */
	assert_false(allowed("User-agent: a\nUser-agent: LinkBot\n"
			     "Disallow: /x\n", "/x"));
	/* "LinkBotX" is another crawler */
	assert_true(allowed("User-agent: LinkBotX\nDisallow: /\n", "/x"));
	/* empty robots.txt, empty Disallow */
	assert_true(allowed("", "/x"));
	assert_true(allowed("User-agent: *\nDisallow:\n", "/x"));
	/* blank lines do not end a group (RFC 9309): both agents here */
	assert_false(allowed("User-agent: LinkBot\n\nUser-agent: *\n"
			     "Disallow: /\n", "/x"));
	/* our group with no rules allows all, even if '*' disallows */
	assert_true(allowed("User-agent: *\nDisallow: /\n"
			    "User-agent: LinkBot\n", "/x"));
}

static void test_longest_match(void **state)
{
	const char *txt =
		"User-agent: *\n"
		"Disallow: /wp-admin/\n"
		"Allow: /wp-admin/admin-ajax.php\n"
		"Disallow: /a\n"
		"Allow: /a\n"
		"Allow: /shop/\n"
		"Disallow: /shop/cart\n";

	(void)state;
	assert_false(allowed(txt, "/wp-admin/x"));
	assert_true(allowed(txt, "/wp-admin/admin-ajax.php"));
	/* equal length: allow wins */
	assert_true(allowed(txt, "/a/b"));
	assert_false(allowed(txt, "/shop/cart?x=1"));
	assert_true(allowed(txt, "/shop/item"));
	/* robots.txt itself is always allowed */
	assert_true(allowed("User-agent: *\nDisallow: /\n", "/robots.txt"));
}

static void test_wildcards(void **state)
{
	const char *txt =
		"User-agent: *\n"
		"Disallow: /*.pdf$\n"
		"Disallow: /*?sessionid=\n"
		"Disallow: /fish*\n"
		"Allow: /fish/ok$\n";

	(void)state;
	assert_false(allowed(txt, "/docs/a.pdf"));
	assert_true(allowed(txt, "/docs/a.pdf.html"));
	assert_false(allowed(txt, "/page?sessionid=1"));
	assert_true(allowed(txt, "/page?id=1"));
	assert_false(allowed(txt, "/fishes"));
	assert_true(allowed(txt, "/fish/ok"));
	assert_false(allowed(txt, "/fish/ok/no"));
	/* query strings take part */
	assert_false(allowed("User-agent: *\nDisallow: /a?b\n", "/a?b=1"));
	/* '*' backtracking, '$' only at the end, '$' elsewhere literal */
	assert_false(allowed("User-agent: *\nDisallow: /*b*c$\n", "/abxbc"));
	assert_true(allowed("User-agent: *\nDisallow: /*b*c$\n", "/abxbcd"));
	assert_false(allowed("User-agent: *\nDisallow: /a$b\n", "/a$bc"));
	assert_true(allowed("User-agent: *\nDisallow: /a$b\n", "/a"));
	assert_false(allowed("User-agent: *\nDisallow: /**x\n", "/yyx"));
	assert_false(allowed("User-agent: *\nDisallow: *\n", "/"));
}

/* A pattern with many '*' against a long path: linear, not exponential
 * (the old matcher tried every split and took hours here). */
static void test_wildcards_fast(void **state)
{
	char txt[128], path[2100];
	time_t t0 = time(NULL);

	(void)state;
	snprintf(txt, sizeof(txt), "User-agent: *\nDisallow: /%s\n",
		 "*a*a*a*a*a*a*a*a*a*a*a*a*b");
	path[0] = '/';
	memset(path + 1, 'a', 2000);
	path[2001] = '\0';
	assert_true(allowed(txt, path));
	path[2000] = 'b';
	assert_false(allowed(txt, path));
	assert_true(time(NULL) - t0 < 5);
}

/* 500 KiB of distinct wildcard rules against a 2 KB path: each rule is
 * matched in time linear in the path (segments found left to right), and
 * the rules are scanned longest first, so one URL stays far below the
 * 1.5 s the backtracking matcher took. */
static void test_many_wildcard_rules(void **state)
{
	size_t cap = LB_ROBOTS_MAX_BYTES, len, k;
	char *txt = malloc(cap + 64), path[2100];
	struct lb_robots *r = NULL;
	struct lb_error err;
	struct timespec t0, t1;
	double secs;
	int i;

	(void)state;
	len = (size_t)sprintf(txt, "User-agent: *\n");
	for (k = 0; len + 64 < cap; k++)
		len += (size_t)sprintf(txt + len, "Disallow: /*a*a*a*a*%zu*b$\n",
				       k);
	len += (size_t)sprintf(txt + len, "Allow: /*a*a*a*q$\n");
	lb_error_init(&err);
	assert_int_equal(robots_parse(txt, len, "LinkBot", &r, &err), 0);
	path[0] = '/';
	memset(path + 1, 'a', 2000);
	path[2001] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 10; i++)
		assert_true(robots_allowed(r, path));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(secs < 1.0);	/* 10 URLs */
	memcpy(path + 1000, "7b", 3);	/* ".../aaa7b": rule 7 */
	assert_false(robots_allowed(r, path));
	memcpy(path + 1000, "q", 2);
	assert_true(robots_allowed(r, path));
	/* the same rule a thousand times is one rule */
	robots_free(r);
	free(txt);
}

static void test_syntax(void **state)
{
	(void)state;
	/* comments, spaces, CRLF, BOM, odd case */
	assert_false(allowed("\xEF\xBB\xBFuser-agent: * # all\r\n"
			     "  DISALLOW :  /x   # no x\r\n", "/x/1"));
	/* unknown lines do not break the group */
	assert_false(allowed("User-agent: *\nCrawl-delay: 10\n"
			     "Disallow: /x\n", "/x"));
	/* a rule before any user-agent belongs to no group */
	assert_true(allowed("Disallow: /\nUser-agent: *\nDisallow: /y\n",
			    "/x"));
	/* percent-encoding: unreserved decoded, others in upper case */
	assert_false(allowed("User-agent: *\nDisallow: /%7Euser\n", "/~user/"));
	assert_false(allowed("User-agent: *\nDisallow: /~user\n", "/%7euser/"));
	assert_false(allowed("User-agent: *\nDisallow: /caf%c3%a9\n",
			     "/caf%C3%A9"));
	assert_false(allowed("User-agent: *\nDisallow: /café\n",
			     "/caf%C3%A9"));
	assert_true(allowed("User-agent: *\nDisallow: /a%2Fb\n", "/a/b"));
}

static void test_sitemaps(void **state)
{
	struct lb_robots *r = parse(
		"Sitemap: https://a.example/s1.xml\n"
		"User-agent: *\nDisallow: /p\n"
		"sitemap:https://a.example/s2.xml#x\n");
	const struct lb_strlist *s = robots_sitemaps(r);

	(void)state;
	assert_int_equal(s->n, 2);
	assert_string_equal(s->v[0], "https://a.example/s1.xml");
	assert_string_equal(s->v[1], "https://a.example/s2.xml#x");
	/* a Sitemap line does not end the group */
	assert_false(robots_allowed(r, "/p"));
	robots_free(r);
	robots_free(NULL);
}

static void test_size_limit(void **state)
{
	size_t n = LB_ROBOTS_MAX_BYTES + 100, i;
	char *txt = malloc(n + 64);
	struct lb_robots *r = NULL;
	struct lb_error err;

	(void)state;
	/* 500 KiB of comments, then a rule past the limit: ignored */
	strcpy(txt, "User-agent: *\n");
	for (i = strlen(txt); i < n; i++)
		txt[i] = (i % 64 == 63) ? '\n' : '#';
	strcpy(txt + n, "\nDisallow: /\n");
	lb_error_init(&err);
	assert_int_equal(robots_parse(txt, strlen(txt), "LinkBot", &r, &err),
			 0);
	assert_true(robots_allowed(r, "/x"));
	robots_free(r);
	free(txt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_longest_match),
		cmocka_unit_test(test_wildcards),
		cmocka_unit_test(test_wildcards_fast),
		cmocka_unit_test(test_many_wildcard_rules),
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_sitemaps),
		cmocka_unit_test(test_size_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
