/* The crawler's pieces: URLs, X-Robots-Tag, sitemaps (XXE), address guard. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <cmocka.h>
#include <zlib.h>

#include "linkbot/crawl.h"
#include "linkbot/gz.h"
#include "linkbot/retry.h"
#include "../../src/crawl/crawl_int.h"

static void norm(const char *url, const char *base, const char *want)
{
	char *out = NULL;
	int rc = url_normalize(url, base, &out);

	if (want == NULL) {
		if (rc == 0)
			fail_msg("'%s' accepted as '%s'", url, out);
		return;
	}
	if (rc < 0)
		fail_msg("'%s' refused", url);
	if (strcmp(out, want) != 0)
		fail_msg("'%s' -> '%s', want '%s'", url, out, want);
	free(out);
}

static void test_url(void **state)
{
	char *o;

	(void)state;
	norm("HTTP://Example.COM:80/a/./b/../c#frag", NULL,
	     "http://example.com/a/c");
	norm("https://example.com:443", NULL, "https://example.com/");
	norm("https://example.com:8443/x?b=2&a=1", NULL,
	     "https://example.com:8443/x?b=2&a=1");
	norm("/blog/x/", "http://h:81/sitemap/", "http://h:81/blog/x/");
	norm("../y", "http://h/a/b/c", "http://h/a/y");
	norm("//other.example/p", "https://h/", "https://other.example/p");
	norm("  http://h/p \n", NULL, "http://h/p");
	/* one spelling per resource: escapes normalised (RFC 3986 6.2.2) */
	norm("http://h/caf%c3%a9", NULL, "http://h/caf%C3%A9");
	norm("http://h/caf\xc3\xa9", NULL, "http://h/caf%C3%A9");
	norm("http://h/%7euser/%41?q=%7e%2f", NULL, "http://h/~user/A?q=~%2F");
	norm("http://h/a%2Fb", NULL, "http://h/a%2Fb");
	norm("http://h/a b", NULL, "http://h/a%20b");
	/* escaped dots are decoded, then dot segments removed (6.2.2):
	 * robots.txt must see the path curl will fetch */
	norm("http://h/ok/%2e%2e/blocked/x", NULL, "http://h/blocked/x");
	norm("http://h/ok/%2E%2e/%2e/blocked/x?q", NULL,
	     "http://h/blocked/x?q");
	norm("http://h/a/.%2e/.%2E", NULL, "http://h/");
	norm("http://h/a/%2e", NULL, "http://h/a/");
	norm("http://h/%2e%2e/%2e%2e/etc", NULL, "http://h/etc");
	norm("http://h/a/..b/%2e%2ec", NULL, "http://h/a/..b/..c");
	norm("http://h/a//%2e%2e/b", NULL, "http://h/a/b");
	norm("http://h/a/%2e%2e%2fb", NULL, "http://h/a/..%2Fb");
	/* a bare '%' is escaped, so that normalising twice changes nothing
	 * (fuzz_url: "%%331" became "%31", then "1") */
	norm("http://h/x%%331?q=%zz", NULL, "http://h/x%2531?q=%25zz");
	norm("http://h/x%2531?q=%25zz", NULL, "http://h/x%2531?q=%25zz");
	norm("//a%f2%3/x", "http://h/", NULL);
	/* IPv4 shorthands: the dotted quad, or refused (fuzz_url:
	 * "//1312/" against a base stayed "1312", then became 0.0.5.32) */
	norm("http://1312/x", NULL, "http://0.0.5.32/x");
	norm("http://10.0.0.1:8080/x", NULL, "http://10.0.0.1:8080/x");
	/* an escaped host that decodes to a hex shorthand (fuzz_url:
	 * "///0xb%30%32" gave "0xb02", then 0.0.11.2): refused, and a name
	 * of hex letters is still a name */
	norm("///0xb%30%32", "http://h/", NULL);
	norm("http://0xb02/x", NULL, "http://0.0.11.2/x");
	norm("http://cafe.be/x", NULL, "http://cafe.be/x");
	norm("http://0x.deadbeef/x", NULL, "http://0x.deadbeef/x");
	norm("http://xn--caf-dma.example/x", NULL,
	     "http://xn--caf-dma.example/x");
	norm("ftp://h/x", NULL, NULL);
	norm("javascript:alert(1)", "http://h/", NULL);
	norm("mailto:a@b", "http://h/", NULL);
	norm("http://user:pw@h/x", NULL, NULL);
	norm("http://h/a\x01", NULL, NULL);
	norm("", NULL, NULL);
	o = url_origin("http://h:81/a?b");
	assert_string_equal(o, "http://h:81");
	free(o);
	assert_string_equal(url_path_query("http://h:81/a?b"), "/a?b");
	assert_string_equal(url_path_query("http://h"), "/");
}

static int xr(const char *a, const char *b)
{
	char *v[2];
	struct lb_strlist l;

	v[0] = (char *)a;
	v[1] = (char *)b;
	l.v = v;
	l.n = b ? 2 : 1;
	return xrobots_noindex(&l, 1700000000);	/* 2023-11-14 */
}

static void test_xrobots(void **state)
{
	(void)state;
	assert_true(xr("noindex", NULL));
	assert_true(xr("NoIndex", NULL));
	assert_true(xr("none", NULL));
	assert_true(xr("nofollow, noindex", NULL));
	assert_true(xr("noarchive,NOINDEX", NULL));
	assert_true(xr("linkbot: noindex", NULL));
	assert_true(xr("LinkBot: noindex, nofollow", NULL));
	assert_true(xr("googlebot: none", NULL));
	/* several headers */
	assert_true(xr("nofollow", "noindex"));
	assert_true(xr("unavailable_after: 25 Jun 2010 15:00:00 PST",
		       "linkbot: noindex"));
	assert_false(xr("nofollow", NULL));
	assert_false(xr("noarchive, nosnippet", NULL));
	assert_false(xr("index, follow", NULL));
	assert_false(xr("max-snippet: 20, noimageindex", NULL));
	/* unavailable_after: noindex from its date on (ISO 8601, RFC 822,
	 * RFC 850 with its comma), not before; unreadable dates ignored */
	assert_true(xr("unavailable_after: 25 Jun 2010 15:00:00 PST", NULL));
	assert_true(xr("unavailable_after: 2020-01-01", NULL));
	assert_true(xr("UNAVAILABLE_AFTER:2023-11-14T22:13:19Z", NULL));
	assert_false(xr("unavailable_after: 2023-11-14T22:13:21Z", NULL));
	assert_true(xr("unavailable_after: 2023-11-14T23:13:19+01:00", NULL));
	assert_false(xr("unavailable_after: 2023-11-14T22:13:19-01:00", NULL));
	assert_true(xr("unavailable_after: Wednesday, 01-Jan-2020 11:59:59 "
		       "GMT, nofollow", NULL));
	assert_false(xr("unavailable_after: Friday, 01-Jan-2100 00:00:00 GMT",
			NULL));
	assert_false(xr("unavailable_after: Friday, 01-Jan-2100 00:00:00 "
			"GMT, nofollow", NULL));
	assert_true(xr("unavailable_after: Friday, 01-Jan-2100 00:00:00 "
		       "GMT, noindex", NULL));
	assert_false(xr("unavailable_after: someday", NULL));
	assert_false(xr("otherbot: unavailable_after: 2020-01-01", NULL));
	assert_true(xr("linkbot: unavailable_after: 2020-01-01", NULL));
	assert_false(xr("all", "nofollow"));
	/* another named crawler's directives are not ours; scopes follow
	 * the agent name until the next one */
	assert_false(xr("otherbot: noindex", NULL));
	assert_false(xr("otherbot: nofollow, noindex", NULL));
	assert_true(xr("otherbot: noindex, linkbot: none", NULL));
	assert_true(xr("otherbot: noindex", "noindex"));
	assert_true(xr("googlebot: nofollow, noindex", NULL));
}

struct got {
	char buf[4096];
	int n, idx;
};

static int on_entry(void *arg, int is_index, const char *loc,
		    const char *lastmod)
{
	struct got *g = arg;
	size_t len = strlen(g->buf);

	snprintf(g->buf + len, sizeof(g->buf) - len, "%s%s|%s\n",
		 is_index ? "I " : "", loc, lastmod ? lastmod : "-");
	g->n++;
	return 0;
}

static int parse(const char *xml, size_t len, struct got *g,
		 struct lb_error *err)
{
	memset(g, 0, sizeof(*g));
	lb_error_init(err);
	return sitemap_parse_xml(xml, len, on_entry, g, err);
}

static void test_sitemap(void **state)
{
	static const char urlset[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">"
		"<url><loc> http://h/a </loc><lastmod>2026-01-02</lastmod>"
		"</url><url><lastmod>2026-01-03</lastmod><loc>http://h/b?x=1"
		"&amp;y=2</loc></url><url></url><url/>"
		"<url><loc><![CDATA[http://h/c]]></loc></url></urlset>";
	static const char index[] =
		"<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/"
		"sitemap/0.9\"><sitemap><loc>http://h/s1.xml.gz</loc>"
		"</sitemap></sitemapindex>";
	static const char nons[] =
		"<urlset><url><loc>http://h/plain</loc></url></urlset>";
	struct got g;
	struct lb_error err;

	(void)state;
	assert_int_equal(parse(urlset, strlen(urlset), &g, &err), 0);
	assert_string_equal(g.buf, "http://h/a|2026-01-02\n"
				   "http://h/b?x=1&y=2|2026-01-03\n"
				   "http://h/c|-\n");
	assert_int_equal(parse(index, strlen(index), &g, &err), 0);
	assert_string_equal(g.buf, "I http://h/s1.xml.gz|-\n");
	assert_int_equal(parse(nons, strlen(nons), &g, &err), 0);
	assert_string_equal(g.buf, "http://h/plain|-\n");
	assert_int_equal(parse("<html><body/></html>", 20, &g, &err), -1);
	assert_int_equal(err.code, LB_EPARSE);
	assert_int_equal(parse("<urlset><url><loc>x", 19, &g, &err), -1);
	/* blank lines (after a BOM, or without one) before the XML
	 * declaration: libxml2 alone refuses the document */
	{
		static const char ws[] = "\n\r\n  <?xml version=\"1.0\"?>"
			"<urlset><url><loc>http://h/ws</loc></url></urlset>";
		static const char bomws[] = "\xEF\xBB\xBF\n<?xml version="
			"\"1.0\"?><urlset><url><loc>http://h/bom</loc></url>"
			"</urlset>";
		assert_int_equal(parse(ws, strlen(ws), &g, &err), 0);
		assert_string_equal(g.buf, "http://h/ws|-\n");
		assert_int_equal(parse(bomws, strlen(bomws), &g, &err), 0);
		assert_string_equal(g.buf, "http://h/bom|-\n");
	}
	/* what a source is, whatever it was listed as */
	assert_true(sitemap_looks_html("\xEF\xBB\xBF\n<!DOCTYPE html><p>", 19));
	assert_true(sitemap_looks_html("  <HTML lang=en>", 16));
	assert_false(sitemap_looks_html("<?xml version=\"1.0\"?><urlset/>", 31));
	assert_false(sitemap_looks_html("\x1f\x8b\x08", 3));
	assert_true(sitemap_looks_xml("\n<?xml version=\"1.0\"?>", 22));
	assert_true(sitemap_looks_xml("<urlset/>", 9));
	assert_true(sitemap_looks_xml("\x1f\x8b\x08", 3));
	assert_false(sitemap_looks_xml("<!doctype html>", 15));
	assert_false(sitemap_looks_xml("<html>", 6));
	/* text sitemaps: one URL a line, other lines skipped */
	{
		static const char txt[] = "\xEF\xBB\xBFhttp://h/t1\r\n"
			"  https://h/t2  \n# not a URL\n\nftp://h/x\nhttp://h/t3";
		assert_int_equal(parse(txt, strlen(txt), &g, &err), 0);
		assert_string_equal(g.buf, "http://h/t1|-\nhttps://h/t2|-\n"
					   "http://h/t3|-\n");
		assert_int_equal(parse("Not Found\n", 10, &g, &err), -1);
		assert_int_equal(err.code, LB_EPARSE);
	}
}

static void test_sitemap_gzip(void **state)
{
	static const char xml[] =
		"<urlset><url><loc>http://h/z</loc></url></urlset>";
	unsigned char gz[512];
	z_stream z;
	struct got g;
	struct lb_error err;

	(void)state;
	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8,
				      Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (unsigned char *)xml;
	z.avail_in = sizeof(xml) - 1;
	z.next_out = gz;
	z.avail_out = sizeof(gz);
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(parse((char *)gz, z.total_out, &g, &err), 0);
	assert_string_equal(g.buf, "http://h/z|-\n");
	/* truncated gzip */
	assert_int_equal(parse((char *)gz, z.total_out / 2, &g, &err), -1);
	deflateEnd(&z);
}

static void test_gzip_bomb(void **state)
{
	size_t n = 64 << 20, len = 0;
	unsigned char *zeros = calloc(1, 1 << 20), *gz = malloc(1 << 20);
	char *out = NULL;
	z_stream z;
	struct lb_error err;
	size_t i;

	(void)state;
	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8,
				      Z_DEFAULT_STRATEGY), Z_OK);
	z.next_out = gz;
	z.avail_out = 1 << 20;
	for (i = 0; i < n >> 20; i++) {
		z.next_in = zeros;
		z.avail_in = 1 << 20;
		assert_int_not_equal(deflate(&z, i + 1 == n >> 20 ? Z_FINISH :
						 Z_NO_FLUSH), Z_STREAM_ERROR);
	}
	/* 64 MiB of zeros in ~64 KiB: stops at the cap */
	lb_error_init(&err);
	assert_int_equal(lb_gunzip((char *)gz, z.total_out, 1 << 20, &out,
				   &len, &err), -1);
	assert_int_equal(err.code, LB_ETOOBIG);
	assert_null(out);
	deflateEnd(&z);
	free(zeros);
	free(gz);
}

static void test_sitemap_xxe(void **state)
{
	static const char xxe[] =
		"<?xml version=\"1.0\"?>\n"
		"<!DOCTYPE urlset [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
		"<urlset><url><loc>http://h/&x;</loc></url></urlset>";
	static const char lol[] =
		"<?xml version=\"1.0\"?>\n"
		"<!DOCTYPE lolz [<!ENTITY a \"aaaaaaaaaa\">"
		"<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">"
		"<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]>"
		"<urlset><url><loc>http://h/&c;</loc></url></urlset>";
	static const char net[] =
		"<?xml version=\"1.0\"?>\n"
		"<!DOCTYPE urlset SYSTEM \"http://127.0.0.1:1/evil.dtd\">"
		"<urlset><url><loc>http://h/a</loc></url></urlset>";
	struct got g;
	struct lb_error err;

	(void)state;
	assert_int_equal(parse(xxe, strlen(xxe), &g, &err), -1);
	assert_null(strstr(g.buf, "root:"));
	assert_int_equal(g.n, 0);
	assert_int_equal(parse(lol, strlen(lol), &g, &err), -1);
	assert_int_equal(g.n, 0);
	assert_int_equal(parse(net, strlen(net), &g, &err), -1);
	assert_non_null(strstr(err.msg, "DOCTYPE"));
}

/* A root with 100,000 attributes (quadratic in libxml2: 20 s) is refused
 * at once; a real sitemap's namespaces pass; 300 levels of nesting stop
 * at libxml2's depth limit. */
static void test_xml_limits(void **state)
{
	struct lb_buf b;
	struct got g;
	struct lb_error err;
	time_t t0 = time(NULL);
	int i;

	(void)state;
	lb_buf_init(&b, 8 << 20);
	lb_buf_adds(&b, "<urlset", NULL);
	for (i = 0; i < 100000; i++)
		lb_buf_printf(&b, NULL, " a%d=\"x\"", i);
	lb_buf_adds(&b, "><url><loc>http://h/a</loc></url></urlset>", NULL);
	assert_int_equal(parse(b.data, b.len, &g, &err), -1);
	assert_non_null(strstr(err.msg, "attributes"));
	assert_int_equal(g.n, 0);
	assert_true(time(NULL) - t0 < 3);
	lb_buf_reset(&b);
	lb_buf_adds(&b, "<urlset xmlns=\"http://www.sitemaps.org/schemas/"
		    "sitemap/0.9\" xmlns:xhtml=\"http://www.w3.org/1999/"
		    "xhtml\"><url><loc>http://h/a?x='1'</loc></url><!-- a=1 "
		    "--></urlset>", NULL);
	assert_int_equal(parse(b.data, b.len, &g, &err), 0);
	assert_int_equal(g.n, 1);
	lb_buf_reset(&b);
	lb_buf_adds(&b, "<urlset>", NULL);
	for (i = 0; i < 300; i++)
		lb_buf_adds(&b, "<x>", NULL);
	assert_int_equal(parse(b.data, b.len, &g, &err), -1);
	lb_buf_release(&b);
}

static int on_link(void *arg, int is_index, const char *href,
		   const char *lastmod)
{
	return on_entry(arg, is_index, href, lastmod);
}

static void test_html_sitemap(void **state)
{
	static const char html[] =
		"<!DOCTYPE html><html><head><base href=\"http://h/base/\">"
		"</head><body><ul><li><a href=\"/blog/a/\">A</a>"
		"<li><A HREF=' b/ '>B</A><li><a>no href</a>"
		"<li><a href=\"http://other/x\">x</a></ul></body></html>";
	struct got g;
	struct lb_error err;
	char *base = NULL;

	(void)state;
	memset(&g, 0, sizeof(g));
	lb_error_init(&err);
	assert_int_equal(sitemap_parse_html(html, strlen(html), on_link, &g,
					    &base, &err), 0);
	assert_string_equal(g.buf, "/blog/a/|-\nb/|-\nhttp://other/x|-\n");
	assert_string_equal(base, "http://h/base/");
	free(base);
}

/* A broken widget's 1000 unclosed <div>s before the links: every link is
 * read (the walk used to stop at 256 levels and found none). */
static void test_html_sitemap_deep(void **state)
{
	struct lb_buf b;
	struct got g;
	struct lb_error err;
	char *base = NULL;
	int i;

	(void)state;
	lb_buf_init(&b, 8 << 20);
	lb_buf_adds(&b, "<!DOCTYPE html><html><body>", NULL);
	for (i = 0; i < 1000; i++)
		lb_buf_adds(&b, "<div class=w>", NULL);
	for (i = 0; i < 50; i++)
		lb_buf_printf(&b, NULL, "<p><a href=\"/blog/p%d/\">P</a>", i);
	lb_buf_adds(&b, "</body></html>", NULL);
	memset(&g, 0, sizeof(g));
	lb_error_init(&err);
	assert_int_equal(sitemap_parse_html(b.data, b.len, on_link, &g,
					    &base, &err), 0);
	assert_int_equal(g.n, 50);
	assert_non_null(strstr(g.buf, "/blog/p0/|-\n"));
	assert_non_null(strstr(g.buf, "/blog/p49/|-\n"));
	free(base);

	/* 200,000 levels and as many stray end tags (quadratic in a tree
	 * parser), comments, raw text and character references */
	lb_buf_reset(&b);
	for (i = 0; i < 200000; i++)
		lb_buf_adds(&b, "<div>", NULL);
	for (i = 0; i < 200000; i++)
		lb_buf_adds(&b, "</span>", NULL);
	lb_buf_adds(&b, "<!-- <a href=/c> --><script>'<a href=/s>'</script>"
		    "<a title='x>y' href='/q?a=1&amp;b=2&#x26;c'>Q</a>", NULL);
	memset(&g, 0, sizeof(g));
	assert_int_equal(sitemap_parse_html(b.data, b.len, on_link, &g,
					    &base, &err), 0);
	assert_string_equal(g.buf, "/q?a=1&b=2&c|-\n");
	assert_null(base);
	lb_buf_release(&b);
}

static int priv(const char *ip)
{
	struct sockaddr_in a4;
	struct sockaddr_in6 a6;

	memset(&a4, 0, sizeof(a4));
	memset(&a6, 0, sizeof(a6));
	if (inet_pton(AF_INET, ip, &a4.sin_addr) == 1) {
		a4.sin_family = AF_INET;
		return fetch_addr_private(&a4);
	}
	if (inet_pton(AF_INET6, ip, &a6.sin6_addr) == 1) {
		a6.sin6_family = AF_INET6;
		return fetch_addr_private(&a6);
	}
	fail_msg("bad test address %s", ip);
	return -1;
}

static void test_private_addresses(void **state)
{
	const char *yes[] = { "127.0.0.1", "127.1.2.3", "10.0.0.1",
			      "172.16.0.1", "172.31.255.255", "192.168.1.1",
			      "169.254.169.254", "0.0.0.0", "100.64.0.1",
			      "224.0.0.1", "255.255.255.255", "::1", "::",
			      "fe80::1", "fd00::1", "fc00::1", "ff02::1",
			      "::ffff:127.0.0.1", "::ffff:10.1.1.1", NULL };
	const char *no[] = { "8.8.8.8", "1.1.1.1", "172.32.0.1",
			     "192.169.0.1", "93.184.216.34",
			     "2606:4700:4700::1111", "::ffff:8.8.8.8", NULL };
	size_t i;

	(void)state;
	for (i = 0; yes[i]; i++)
		if (!priv(yes[i]))
			fail_msg("%s not seen as private", yes[i]);
	for (i = 0; no[i]; i++)
		if (priv(no[i]))
			fail_msg("%s seen as private", no[i]);
}

static void test_retry_after(void **state)
{
	(void)state;
	assert_int_equal(lb_retry_after_parse("120", 0), 120);
	assert_int_equal(lb_retry_after_parse(" 5 ", 0), 5);
	assert_int_equal(lb_retry_after_parse("soon", 0), -1);
	/* Sun, 06 Nov 1994 08:49:37 GMT = 784111777 */
	assert_int_equal(lb_retry_after_parse(
				 "Sun, 06 Nov 1994 08:49:37 GMT", 784111770), 7);
	assert_int_equal(lb_retry_after_parse(
				 "Sun, 06 Nov 1994 08:49:37 GMT", 784111999), 0);
}

static void test_pace(void **state)
{
	struct fetch_pace p;
	int i;

	(void)state;
	fetch_pace_init(&p);
	for (i = 0; i < 20; i++)
		fetch_pace_answer(&p, PACE_OK, 0.05);
	assert_true(fetch_pace_factor(&p) == 1.0);
	/* errors slow down, x1.5 each, at most x8 */
	fetch_pace_answer(&p, PACE_ERROR, 0);
	assert_true(fetch_pace_factor(&p) > 1.49 && fetch_pace_factor(&p) < 1.51);
	fetch_pace_answer(&p, PACE_SLOW_DOWN, 0.05);
	assert_true(fetch_pace_factor(&p) > 2.99 && fetch_pace_factor(&p) < 3.01);
	for (i = 0; i < 10; i++)
		fetch_pace_answer(&p, PACE_SLOW_DOWN, 0.05);
	assert_true(fetch_pace_factor(&p) == 8.0);
	/* and recover with good answers */
	for (i = 0; i < 12; i++)
		fetch_pace_answer(&p, PACE_OK, 0.05);
	assert_true(fetch_pace_factor(&p) == 1.0);
	/* rising latency: from 50 ms to 3 s slows down in proportion */
	for (i = 0; i < 10; i++)
		fetch_pace_answer(&p, PACE_OK, 3.0);
	assert_true(fetch_pace_factor(&p) > 4.0);
	assert_true(fetch_pace_factor(&p) <= 8.0);
	/* latency back to normal: recovered */
	for (i = 0; i < 30; i++)
		fetch_pace_answer(&p, PACE_OK, 0.05);
	assert_true(fetch_pace_factor(&p) == 1.0);
	/* a site that is always slow is not punished for it */
	fetch_pace_init(&p);
	for (i = 0; i < 30; i++)
		fetch_pace_answer(&p, PACE_OK, 2.0);
	assert_true(fetch_pace_factor(&p) == 1.0);
}

static void test_user_agent(void **state)
{
	struct lb_config cfg;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.crawl.bot_info_url = "https://example.com/bot";
	assert_string_equal(crawl_user_agent(&cfg),
			    "LinkBot/1.0 (+https://example.com/bot)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_xrobots),
		cmocka_unit_test(test_sitemap),
		cmocka_unit_test(test_sitemap_gzip),
		cmocka_unit_test(test_gzip_bomb),
		cmocka_unit_test(test_sitemap_xxe),
		cmocka_unit_test(test_html_sitemap),
		cmocka_unit_test(test_html_sitemap_deep),
		cmocka_unit_test(test_xml_limits),
		cmocka_unit_test(test_private_addresses),
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_pace),
		cmocka_unit_test(test_user_agent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
