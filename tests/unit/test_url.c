/* test_url.c - the one URL parser (linkbot/url.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "linkbot/url.h"

static void expect_part(const char *got, size_t n, const char *want)
{
	if (want == NULL) {
		assert_null(got);
		return;
	}
	assert_int_equal(n, strlen(want));
	assert_memory_equal(got, want, n);
}

static void expect_split(const char *s, const char *scheme, const char *auth,
			 const char *path, const char *query)
{
	struct lb_url_parts p;

	lb_url_split(s, strlen(s), &p);
	expect_part(p.scheme, p.scheme_n, scheme);
	assert_int_equal(p.has_auth, auth != NULL);
	expect_part(p.auth, p.auth_n, auth);
	expect_part(p.path, p.path_n, path);
	assert_int_equal(p.has_query, query != NULL);
	expect_part(p.query, p.query_n, query);
}

static void test_split(void **state)
{
	(void)state;
	expect_split("https://Host:8080/a/b?x=1", "https", "Host:8080", "/a/b",
		     "x=1");
	expect_split("http://h", "http", "h", "", NULL);
	expect_split("http://h?", "http", "h", "", "");
	expect_split("//h/p", NULL, "h", "/p", NULL);
	expect_split("/p?q", NULL, NULL, "/p", "q");
	expect_split("a/b:c", NULL, NULL, "a/b:c", NULL);
	expect_split("mailto:x@y", "mailto", NULL, "x@y", NULL);
	expect_split("1http://h/", NULL, NULL, "1http://h/", NULL);
	expect_split("", NULL, NULL, "", NULL);
}

static void expect_host(const char *url, const char *host)
{
	size_t n;
	const char *h = lb_url_host(url, &n);

	assert_int_equal(n, strlen(host));
	assert_memory_equal(h, host, n);
}

static void test_host(void **state)
{
	(void)state;
	expect_host("https://example.com:8443/a", "example.com");
	expect_host("http://[::1]:8080/", "[::1]");
	expect_host("http://h?q", "h");
	expect_host("http://h#f", "h");
	/* user info is not the host (crawl.c's own copy took "u:p@h") */
	expect_host("http://u:p@h/x", "h");
	expect_host("/only/a/path", "");
}

static void expect_dots(const char *in, const char *want)
{
	char buf[256];
	size_t n;

	n = lb_url_remove_dots(in, strlen(in), buf);
	buf[n] = '\0';
	assert_string_equal(buf, want);
	/* in place too (crawl/url.c) */
	strcpy(buf, in);
	n = lb_url_remove_dots(buf, strlen(buf), buf);
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

static void test_remove_dots(void **state)
{
	(void)state;
	/* RFC 3986 5.2.4's examples, and the edges */
	expect_dots("/a/b/c/./../../g", "/a/g");
	expect_dots("mid/content=5/../6", "mid/6");
	expect_dots("/..", "/");
	expect_dots("/a/..", "/");
	expect_dots("/a/.", "/a/");
	expect_dots("/a//b/../c", "/a//c");
	expect_dots("../x", "x");
	expect_dots("./x", "x");
	expect_dots(".", "");
	expect_dots("/ok/../../../blocked/x", "/blocked/x");
}

static void test_hexval(void **state)
{
	(void)state;
	assert_int_equal(lb_url_hexval('0'), 0);
	assert_int_equal(lb_url_hexval('9'), 9);
	assert_int_equal(lb_url_hexval('a'), 10);
	assert_int_equal(lb_url_hexval('F'), 15);
	assert_int_equal(lb_url_hexval('g'), -1);
	assert_int_equal(lb_url_hexval('%'), -1);
	assert_int_equal(lb_url_hexval(0xc3), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_host),
		cmocka_unit_test(test_remove_dots),
		cmocka_unit_test(test_hexval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
