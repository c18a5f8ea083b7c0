/* URL patterns of sets: {slug}, *, scheme/host/port/path/query, '!'. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "linkbot/urlpattern.h"

static int m(const char *pattern, const char *url)
{
	struct lb_urlset *s = NULL;
	struct lb_error err;
	int r;

	lb_error_init(&err);
	if (urlset_compile1(pattern, &s, &err) < 0)
		fail_msg("pattern '%s': %s", pattern, err.msg);
	r = urlset_match(s, url);
	urlset_free(s);
	return r;
}

static void test_slug(void **state)
{
	(void)state;
	assert_true(m("/blog/{slug}", "https://a.example/blog/x"));
	assert_true(m("/blog/{slug}/", "https://a.example/blog/x/"));
	/* trailing slash is not significant, either way */
	assert_true(m("/blog/{slug}/", "https://a.example/blog/x"));
	assert_true(m("/blog/{slug}", "https://a.example/blog/x/"));
	/* one segment, not zero, not two */
	assert_false(m("/blog/{slug}/", "https://a.example/blog/"));
	assert_false(m("/blog/{slug}/", "https://a.example/blog"));
	assert_false(m("/blog/{slug}/", "https://a.example/blog/x/y/"));
	assert_true(m("/blog/{year}/{slug}", "http://h/blog/2024/post"));
	assert_true(m("/p/{id}.html", "http://h/p/12.html"));
	assert_false(m("/p/{id}.html", "http://h/p/.html"));
	/* the whole path must match, not a prefix */
	assert_false(m("/blog/{slug}", "http://h/blog/x/comments"));
	assert_false(m("/blog/{slug}", "http://h/en/blog/x"));
	/* path is case-sensitive */
	assert_false(m("/blog/{slug}", "http://h/Blog/x"));
}

static void test_star(void **state)
{
	(void)state;
	assert_true(m("/docs/*", "http://h/docs/a/b/c"));
	/* pages below /docs/, not /docs/ itself (== /docs: slash ignored) */
	assert_false(m("/docs/*", "http://h/docs/"));
	assert_true(m("/docs*", "http://h/docs/"));
	assert_false(m("/docs/*", "http://h/doc"));
	assert_true(m("*", "http://h/anything?x=1"));
	assert_true(m("/*.pdf", "http://h/a/b.pdf"));
	assert_false(m("/*.pdf", "http://h/a/b.pdf.html"));
	assert_true(m("/a*b*c", "http://h/aXXbYYc"));
	assert_false(m("/a*b*c", "http://h/aXXbYY"));
}

static void test_host_scheme_port(void **state)
{
	(void)state;
	assert_true(m("example.com/blog/{slug}", "https://example.com/blog/a"));
	assert_true(m("example.com/blog/{slug}", "http://example.com/blog/a"));
	assert_true(m("Example.COM/blog/{slug}", "http://example.com/blog/a"));
	assert_true(m("example.com/blog/{slug}",
		      "http://example.com:8080/blog/a"));
	assert_false(m("example.com/blog/{slug}",
		       "https://www.example.com/blog/a"));
	assert_false(m("example.com/blog/{slug}",
		       "https://example.com.evil/blog/a"));
	assert_true(m("https://example.com/blog/{slug}",
		      "https://example.com/blog/a"));
	assert_false(m("https://example.com/blog/{slug}",
		       "http://example.com/blog/a"));
	assert_true(m("127.0.0.1:8931/blog/{slug}/",
		      "http://127.0.0.1:8931/blog/a/"));
	assert_false(m("127.0.0.1:8931/blog/{slug}/",
		       "http://127.0.0.1:8932/blog/a/"));
	assert_true(m("example.com:443/x", "https://example.com/x"));
	assert_true(m("*.example.com/shop/*", "https://de.example.com/shop/1"));
	assert_false(m("*.example.com/shop/*", "https://example.org/shop/1"));
	/* a host alone: every page of it */
	assert_true(m("example.com", "https://example.com/a/b?c"));
	assert_false(m("example.com", "https://example.org/"));
	assert_true(m("http://[::1]:8080/x", "http://[::1]:8080/x"));
	assert_false(m("/x", "ftp://h/x"));
	assert_false(m("/x", "not a url"));
}

static void test_query_fragment(void **state)
{
	(void)state;
	/* no '?' in the pattern: the query is ignored */
	assert_true(m("/blog/{slug}", "http://h/blog/a?utm_source=x"));
	assert_true(m("/blog/{slug}", "http://h/blog/a#top"));
	/* with one, it must match */
	assert_true(m("/search?q=*", "http://h/search?q=cats"));
	assert_false(m("/search?q=*", "http://h/search?page=2"));
	assert_false(m("/search?q=*", "http://h/search"));
	assert_true(m("/item?", "http://h/item"));
	assert_false(m("/item?", "http://h/item?x=1"));
}

static void test_sets(void **state)
{
	struct lb_urlset *s = NULL;
	struct lb_error err;
	char *v[] = { "/blog/{slug}", "/news/*", "!/blog/draft-*",
		      "!/news/private/*" };
	struct lb_strlist l = { v, 4 };

	(void)state;
	lb_error_init(&err);
	assert_int_equal(urlset_compile(&l, &s, &err), 0);
	assert_true(urlset_match(s, "http://h/blog/a"));
	assert_true(urlset_match(s, "http://h/news/2024/x"));
	assert_false(urlset_match(s, "http://h/blog/draft-1"));
	assert_false(urlset_match(s, "http://h/news/private/x"));
	assert_false(urlset_match(s, "http://h/about"));
	urlset_free(s);
	urlset_free(NULL);
	/* hosted: only patterns that name a host vouch for the URL's host */
	{
		char *w[] = { "a.example/blog/*", "/news/*", "!a.example/blog/x" };
		struct lb_strlist l2 = { w, 3 };

		assert_int_equal(urlset_compile(&l2, &s, &err), 0);
		assert_true(urlset_match_hosted(s, "http://a.example/blog/y"));
		assert_false(urlset_match_hosted(s, "http://a.example/blog/x"));
		assert_false(urlset_match_hosted(s, "http://evil.example/news/y"));
		assert_true(urlset_match(s, "http://evil.example/news/y"));
		urlset_free(s);
	}
}

static void test_invalid(void **state)
{
	struct lb_error err;
	const char *bad[] = { "", "!", "/blog/{slug", "/blog/slug}",
			      "ftp://h/x", "h:port/x", "/a#frag",
			      "https:///x", "us@er.com/x", NULL };
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++) {
		lb_error_init(&err);
		if (urlpattern_valid(bad[i], &err))
			fail_msg("pattern '%s' accepted", bad[i]);
		assert_int_equal(err.code, LB_ECONFIG);
	}
	lb_error_init(&err);
	assert_true(urlpattern_valid("example.com/blog/{slug}/", &err));
}

/* Segment classes: {name:digits}, named classes, [...] (issue 19). */
static void test_classes(void **state)
{
	struct lb_error err;
	const char *bad[] = { "/{y:digit}", "/{y:}", "/{y:[]}", "/{y:[z-a]}",
			      "/{y:[^]}", NULL };
	size_t i;

	(void)state;
	assert_true(m("/blog/{year:digits}/{month:digits}/{slug}",
		      "http://h/blog/2024/05/post"));
	assert_false(m("/blog/{year:digits}/{month:digits}/{slug}",
		       "http://h/blog/tag/cats/post"));
	assert_false(m("/blog/{year:digits}/{slug}", "http://h/blog/20x4/a"));
	assert_false(m("/blog/{year:digits}/{slug}", "http://h/blog//a"));
	assert_true(m("/p/{id:hex}", "http://h/p/00ffAB"));
	assert_false(m("/p/{id:hex}", "http://h/p/00fg"));
	assert_true(m("/p/{id:letters}-{n:digits}", "http://h/p/abc-12"));
	assert_false(m("/p/{id:letters}-{n:digits}", "http://h/p/ab1-12"));
	assert_true(m("/p/{id:lower}", "http://h/p/abc"));
	assert_false(m("/p/{id:lower}", "http://h/p/aBc"));
	assert_true(m("/p/{id:upper}", "http://h/p/ABC"));
	assert_true(m("/p/{id:alnum}", "http://h/p/aB3"));
	assert_false(m("/p/{id:alnum}", "http://h/p/a-3"));
	assert_true(m("/p/{slug:[a-z0-9-]}", "http://h/p/a-3"));
	assert_false(m("/p/{slug:[a-z0-9-]}", "http://h/p/A-3"));
	assert_true(m("/p/{x:[^.]}.html", "http://h/p/abc.html"));
	assert_false(m("/p/{x:[^.]}.html", "http://h/p/a.b.html"));
	/* a class never spans a '/' or a '?' */
	assert_false(m("/p/{x:[^.]}", "http://h/p/a/b"));
	assert_false(m("/p/{x:[^.]}?q=1", "http://h/p/a?b?q=1"));
	for (i = 0; bad[i] != NULL; i++) {
		lb_error_init(&err);
		if (urlpattern_valid(bad[i], &err))
			fail_msg("pattern '%s' accepted", bad[i]);
		assert_int_equal(err.code, LB_ECONFIG);
	}
}

/* Matching is linear: `*-*-*-*.html` against 4 KB of dashes took 100 s
 * with the backtracking matcher; here 1000 such matches must be quick. */
static void test_linear(void **state)
{
	struct lb_urlset *s = NULL;
	struct lb_error err;
	char url[8192];
	size_t n;
	int i;
	struct timespec t0, t1;
	double secs;

	(void)state;
	n = (size_t)snprintf(url, sizeof(url), "https://example.com/");
	while (n < 4096)
		url[n++] = '-';
	memcpy(url + n, "x.htm", 6);
	lb_error_init(&err);
	assert_int_equal(urlset_compile1("example.com/*-*-*-*.html", &s, &err),
			 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 100; i++)
		assert_false(urlset_match(s, url));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(secs < 5.0);
	memcpy(url + n, "x.html", 7);
	assert_true(urlset_match(s, url));
	urlset_free(s);
	lb_error_init(&err);
	assert_int_equal(urlset_compile1("/{a}{b}{c}{d}{e}x", &s, &err), 0);
	url[n] = '\0';
	memset(url + 20, 'a', n - 20);
	assert_false(urlset_match(s, url));
	urlset_free(s);
}

static void test_path_under(void **state)
{
	(void)state;
	assert_true(urlpattern_path_under("/blog", "/blog"));
	assert_true(urlpattern_path_under("/blog", "/blog/a"));
	assert_true(urlpattern_path_under("/blog/", "/blog/a"));
	assert_false(urlpattern_path_under("/blog", "/blogger"));
	assert_false(urlpattern_path_under("/blog/a", "/blog"));
	assert_true(urlpattern_path_under("/", "/anything"));
	assert_true(urlpattern_path_under("", "/"));
	assert_false(urlpattern_path_under(NULL, "/x"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slug),
		cmocka_unit_test(test_star),
		cmocka_unit_test(test_host_scheme_port),
		cmocka_unit_test(test_query_fragment),
		cmocka_unit_test(test_sets),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_linear),
		cmocka_unit_test(test_path_under),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
