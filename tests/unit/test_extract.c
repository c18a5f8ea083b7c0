/*
 * Extractor (stage 2): the golden cases in tests/data/extract/, then the
 * pieces (dates, languages, URLs, charsets, text) and the caps.
 *
 * A golden case is a folder tests/data/extract/NNNN-name/ with
 *   input.html     the page, as bytes (any charset)
 *   expected.json  {
 *     "about": "what the case shows",  free text, not checked
 *     "page_url": "https://...",       the URL it was fetched from
 *     "charset": "iso-8859-1",         optional: the HTTP header's charset
 *     "expect": { "title": "...", "author": ["..."], "image_url": null,
 *                 "noindex": false, "text": "..." },
 *                 every field named must match exactly; null = absent
 *     "sources": { "title": "h1", ... },   optional provenance checks
 *     "text_contains": ["..."],        optional substrings of the text
 *     "text_excludes": ["..."]         optional: must not be in the text
 *   }
 * Fields not named are not checked.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <gumbo.h>

#include "linkbot/extract.h"
#include "linkbot/fsutil.h"
#include "../../src/extract/extract_int.h"

#define GOLDEN_DIR "tests/data/extract"

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Checks one golden case; returns the number of mismatches (printed). */
static int check_case(const char *dir)
{
	struct lb_error err;
	struct lb_doc doc;
	char *path_in = NULL, *path_exp = NULL, *html = NULL, *exp_text = NULL;
	char *got_json = NULL;
	size_t len = 0;
	cJSON *exp = NULL, *got = NULL, *e, *want;
	const char *page_url, *charset;
	int bad = 0;

	lb_error_init(&err);
	lb_doc_init(&doc);
	path_in = lb_path_join(dir, "input.html");
	path_exp = lb_path_join(dir, "expected.json");
	if (lb_file_read(path_in, 16 << 20, &html, &len, &err) < 0 ||
	    lb_file_read(path_exp, 1 << 20, &exp_text, NULL, &err) < 0) {
		printf("%s: %s\n", dir, err.msg);
		bad++;
		goto out;
	}
	if ((exp = cJSON_Parse(exp_text)) == NULL) {
		printf("%s: expected.json is not JSON\n", dir);
		bad++;
		goto out;
	}
	page_url = cJSON_GetStringValue(cJSON_GetObjectItem(exp, "page_url"));
	charset = cJSON_GetStringValue(cJSON_GetObjectItem(exp, "charset"));
	if (extract_html(html, len, page_url, charset, &doc, &err) < 0) {
		printf("%s: extract_html failed: %s\n", dir, err.msg);
		bad++;
		goto out;
	}
	got_json = lb_doc_to_json(&doc, 1, 1);
	got = cJSON_Parse(got_json);
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(exp, "expect")) {
		const cJSON *g = cJSON_GetObjectItem(got, e->string);

		if (strcmp(e->string, "noindex") == 0) {
			if (cJSON_IsTrue(e) != (g != NULL && cJSON_IsTrue(g))) {
				printf("%s: noindex is %s\n", dir,
				       doc.noindex ? "true" : "false");
				bad++;
			}
			continue;
		}
		if (cJSON_IsNull(e) ? g != NULL : !cJSON_Compare(e, g, 1)) {
			char *gs = g ? cJSON_PrintUnformatted(g) : NULL;
			char *es = cJSON_PrintUnformatted(e);

			printf("%s: %s\n  got:      %s\n  expected: %s\n", dir,
			       e->string, gs ? gs : "(absent)", es);
			free(gs);
			free(es);
			bad++;
		}
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(exp, "sources")) {
		want = cJSON_GetObjectItem(cJSON_GetObjectItem(got, "sources"),
					   e->string);
		if (!cJSON_Compare(e, want, 1)) {
			printf("%s: source of %s is %s, expected %s\n", dir,
			       e->string,
			       want ? cJSON_GetStringValue(want) : "(none)",
			       cJSON_GetStringValue(e));
			bad++;
		}
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(exp, "text_contains")) {
		if (doc.text == NULL || !cJSON_IsString(e) ||
		    strstr(doc.text, e->valuestring) == NULL) {
			printf("%s: text lacks '%s'\n", dir,
			       cJSON_GetStringValue(e));
			bad++;
		}
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(exp, "text_excludes")) {
		if (doc.text != NULL && cJSON_IsString(e) &&
		    strstr(doc.text, e->valuestring) != NULL) {
			printf("%s: text has '%s'\n", dir, e->valuestring);
			bad++;
		}
	}
	if (bad && getenv("EXTRACT_GOLDEN_SHOW") != NULL)
		printf("%s: got %s\n", dir, got_json);
out:
	cJSON_Delete(exp);
	cJSON_Delete(got);
	free(got_json);
	free(path_in);
	free(path_exp);
	free(html);
	free(exp_text);
	lb_doc_release(&doc);
	return bad;
}

static void test_golden(void **state)
{
	DIR *d = opendir(GOLDEN_DIR);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, i;
	int bad = 0;
	const char *only = getenv("EXTRACT_GOLDEN");

	(void)state;
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (only != NULL && strstr(de->d_name, only) == NULL)
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		assert_non_null(names);
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		char *dir = lb_path_join(GOLDEN_DIR, names[i]);

		bad += check_case(dir);
		free(dir);
		free(names[i]);
	}
	free(names);
	printf("golden: %zu cases, %d mismatches\n", n, bad);
	if (only == NULL)
		assert_true(n >= 30);
	assert_int_equal(bad, 0);
}

/* Reads a demo site page with __ORIGIN__ replaced by the given origin. */
static char *demo_page(const char *path, const char *origin, size_t *len)
{
	struct lb_error err;
	struct lb_buf b;
	char *file, *raw = NULL, *p, *q;

	lb_error_init(&err);
	file = malloc(strlen(path) + 64);
	assert_non_null(file);
	sprintf(file, "examples/site/htdocs%sindex.html", path);
	if (lb_file_read(file, 4 << 20, &raw, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	free(file);
	lb_buf_init(&b, 16 << 20);
	for (p = raw; (q = strstr(p, "__ORIGIN__")) != NULL; p = q + 10) {
		lb_buf_add(&b, p, (size_t)(q - p), NULL);
		lb_buf_adds(&b, origin, NULL);
	}
	lb_buf_adds(&b, p, NULL);
	free(raw);
	*len = b.len;
	return lb_buf_take(&b);
}

/* The text between the first `open` after `after` and the next `close`. */
static char *between(const char *s, const char *after, const char *open,
		     const char *close)
{
	const char *a = strstr(s, after), *b, *e;

	if (a == NULL || (b = strstr(a, open)) == NULL ||
	    (e = strstr(b + strlen(open), close)) == NULL)
		return NULL;
	b += strlen(open);
	return strndup(b, (size_t)(e - b));
}

/*
 * Every article of the demo site (examples/site, labels.tsv): the fields a
 * reader sees, and text that holds the article without the menus, sidebar,
 * footer, hidden newsletter and promo blocks, or the cookie script.
 */
static void test_demo_site(void **state)
{
	static const char *const junk[] = {
		"Subscribe to our newsletter", "chocolate cake", "football",
		"Caribbean", "We use cookies", "Recent Posts", "Skip to content",
		"Proudly powered", "dataLayer", "Comments are closed",
		"Notes on servers, databases and code", "Posted on", NULL,
	};
	const char *origin = "http://demo.test";
	struct lb_error err;
	char *labels = NULL, *line, *save = NULL;
	int pages = 0, with_date = 0, with_body = 0, i;

	(void)state;
	lb_error_init(&err);
	if (lb_file_read("examples/site/labels.tsv", 1 << 20, &labels, NULL,
			 &err) < 0)
		fail_msg("%s", err.msg);
	for (line = strtok_r(labels, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t'), *html, *h1, *para, url[512];
		struct lb_doc doc;
		size_t len;

		if (tab == NULL)
			continue;
		*tab = '\0';
		html = demo_page(line, origin, &len);
		snprintf(url, sizeof(url), "%s%s", origin, line);
		lb_doc_init(&doc);
		assert_int_equal(extract_html(html, len, url, NULL, &doc, &err),
				 0);
		h1 = between(html, "<h1", ">", "</h1>");
		para = between(html, "class=\"entry-content\"", "<p>", "</p>");
		if (doc.title == NULL || doc.text == NULL || doc.url == NULL ||
		    strcmp(doc.url, url) != 0 ||
		    strcmp(doc.url_path, line) != 0 || doc.noindex ||
		    doc.description == NULL || doc.author.n != 1 ||
		    doc.language == NULL || doc.src[LB_F_title] != LB_SRC_H1)
			fail_msg("%s: %s", line, lb_doc_to_json(&doc, 0, 1));
		if (h1 != NULL && strchr(h1, '&') == NULL)
			assert_string_equal(doc.title, h1);
		if (para != NULL && strlen(para) > 60 && !strchr(para, '&')) {
			para[60] = '\0';
			if (strstr(doc.text, para) == NULL)
				fail_msg("%s: text lacks '%s'", line, para);
		}
		for (i = 0; junk[i] != NULL; i++)
			if (strstr(doc.text, junk[i]) != NULL)
				fail_msg("%s: text has '%s'", line, junk[i]);
		/* "plain" pages have no Open Graph and no JSON-LD */
		if (strstr(html, "og:title") != NULL) {
			assert_non_null(doc.published_time);
			assert_non_null(doc.image_url);
			assert_true(strncmp(doc.image_url, origin,
					    strlen(origin)) == 0);
			assert_true(doc.category.n >= 1);
			with_date++;
		}
		if (doc.src[LB_F_text] == LB_SRC_BODY)
			with_body++;
		free(h1);
		free(para);
		free(html);
		lb_doc_release(&doc);
		pages++;
	}
	free(labels);
	assert_int_equal(pages, 200);
	assert_int_equal(with_date, 192);	/* all but the 8 plain pages */
	assert_int_equal(with_body, 108);	/* no articleBody: 200 - 92 */
}

/* Robots meta tags: names any case with white space around; the date of
 * unavailable_after is handed to crawl/ as written (commas included). */
static void test_robots_meta(void **state)
{
	static const struct {
		const char *head;
		int noindex;
		const char *after;
	} cases[] = {
		{ "<meta name=\" ROBOTS \" content=\"NoIndex\">", 1, NULL },
		{ "<meta name=\"LinkBot\" content=\"none\">", 1, NULL },
		{ "<meta name=\"otherbot\" content=\"noindex\">", 0, NULL },
		{ "<meta name=\"robots\" content=\"nofollow, "
		  "unavailable_after: Wednesday, 01-Jan-2020 11:59:59 GMT\">",
		  0, "Wednesday, 01-Jan-2020 11:59:59 GMT" },
		{ "<meta name=\"googlebot\" content=\"UNAVAILABLE_AFTER :"
		  "2020-01-01\">", 0, "2020-01-01" },
		{ "<meta name=\"otherbot\" content=\"unavailable_after: "
		  "2020-01-01\">", 0, NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lb_doc doc;
		struct lb_error err;
		char html[512];

		lb_error_init(&err);
		lb_doc_init(&doc);
		snprintf(html, sizeof(html), "<html><head>%s</head><body><h1>t"
			 "</h1></body></html>", cases[i].head);
		assert_int_equal(extract_html(html, strlen(html), "http://h/a",
					      NULL, &doc, &err), 0);
		if (doc.noindex != cases[i].noindex)
			fail_msg("%s: noindex %d", cases[i].head, doc.noindex);
		if (cases[i].after == NULL)
			assert_null(doc.unavailable_after);
		else
			assert_string_equal(doc.unavailable_after,
					    cases[i].after);
		lb_doc_release(&doc);
	}
}

/* The demo site's crawl rules that the extractor decides. */
static void test_demo_rules(void **state)
{
	struct lb_doc doc;
	struct lb_error err;
	size_t len;
	char *html;

	(void)state;
	lb_error_init(&err);
	lb_doc_init(&doc);
	html = demo_page("/blog/accessing-the-annotations-dict-of-an-object-"
			 "in-python-3-9/", "http://demo.test", &len);
	assert_int_equal(extract_html(html, len, "http://demo.test/x/", NULL,
				      &doc, &err), 0);
	assert_true(doc.noindex);
	free(html);
	html = demo_page("/blog/sql-dump/", "http://demo.test", &len);
	assert_int_equal(extract_html(html, len, "http://demo.test/x/", NULL,
				      &doc, &err), 0);
	assert_true(doc.noindex);
	free(html);
	html = demo_page("/blog/creating-a-database-amp/", "http://demo.test",
			 &len);
	assert_int_equal(extract_html(html, len,
				      "http://demo.test/blog/creating-a-database-amp/",
				      NULL, &doc, &err), 0);
	assert_false(doc.noindex);
	assert_string_equal(doc.url, "http://demo.test/blog/creating-a-database/");
	free(html);
	lb_doc_release(&doc);
}

static void check_date(const char *in, const char *want)
{
	int oom = 0;
	char *got = x_date_iso(in, (size_t)-1, &oom);

	assert_int_equal(oom, 0);
	if (want == NULL) {
		if (got != NULL)
			fail_msg("'%s' gave '%s', expected nothing", in, got);
		return;
	}
	if (got == NULL || strcmp(got, want) != 0)
		fail_msg("'%s' gave '%s', expected '%s'", in,
			 got ? got : "(null)", want);
	free(got);
}

static void test_dates(void **state)
{
	(void)state;
	check_date("2024-07-26T17:29:00+00:00", "2024-07-26T17:29:00+00:00");
	check_date("2024-07-26T17:29:00.123Z", "2024-07-26T17:29:00Z");
	check_date("2024-07-26T17:29Z", "2024-07-26T17:29:00Z");
	check_date("2024-07-26 17:29:05 -0500", "2024-07-26T17:29:05-05:00");
	check_date("2024-07-26T17:29:05+0530", "2024-07-26T17:29:05+05:30");
	check_date("2024-07-26T17:29:05", "2024-07-26T17:29:05");
	check_date("  2024-07-26 ", "2024-07-26");
	check_date("2024/7/6", "2024-07-06");
	check_date("20240726", "2024-07-26");
	check_date("Tue, 26 Jul 2024 17:29:00 GMT", "2024-07-26T17:29:00Z");
	check_date("Fri, 02 Feb 2024 08:00:00 +0100", "2024-02-02T08:00:00+01:00");
	check_date("July 26, 2024", "2024-07-26");
	check_date("Jul. 4th, 2023", "2023-07-04");
	check_date("26 July 2024", "2024-07-26");
	check_date("26.07.2024", "2024-07-26");
	check_date("2024-02-29", "2024-02-29");
	check_date("2023-02-29", NULL);
	check_date("2024-13-01", NULL);
	check_date("2024-07-26T25:00:00Z", NULL);
	check_date("03/04/2024", NULL);		/* US or European? */
	check_date("yesterday", NULL);
	check_date("", NULL);
	check_date("2024-07-26Tgarbage", NULL);
	/* weekdays, am/pm, "at", zone names, trailing words */
	check_date("Tue Mar 05 2024", "2024-03-05");
	check_date("Tuesday, March 5, 2024", "2024-03-05");
	check_date("March 5, 2024 at 5:43 pm", "2024-03-05T17:43:00");
	check_date("March 5, 2024 12:05 a.m.", "2024-03-05T00:05:00");
	check_date("5 March 2024, 17:43 GMT", "2024-03-05T17:43:00Z");
	check_date("Mar 5, 2024, 5:43 PM EST", "2024-03-05T17:43:00-05:00");
	check_date("Mon, 4 Mar 2024 09:00:00 PDT", "2024-03-04T09:00:00-07:00");
	check_date("Jan 02 2023 10:00:00 GMT+0100", "2023-01-02T10:00:00+01:00");
	check_date("2024-03-05 (updated)", "2024-03-05");
	check_date("March 5, 2024 at 13:43 pm", "2024-03-05");
}

static void check_lang(const char *in, const char *want)
{
	int oom = 0;
	char *got = x_lang_norm(in, (size_t)-1, &oom);

	if (want == NULL) {
		if (got != NULL)
			fail_msg("'%s' gave '%s'", in, got);
		return;
	}
	if (got == NULL || strcmp(got, want) != 0)
		fail_msg("'%s' gave '%s', expected '%s'", in,
			 got ? got : "(null)", want);
	free(got);
}

static void test_languages(void **state)
{
	(void)state;
	check_lang("en", "en");
	check_lang("en_US", "en-US");
	check_lang("EN-gb", "en-GB");
	check_lang(" fr ", "fr");
	check_lang("zh-hant-tw", "zh-Hant-TW");
	check_lang("es-419", "es-419");
	check_lang("English", NULL);
	check_lang("e", NULL);
	check_lang("en--US", NULL);
	check_lang("en US", NULL);
	check_lang("", NULL);
}

static void check_url(const char *base, const char *ref, const char *want)
{
	int oom = 0;
	char *got = x_url_resolve(base, ref, (size_t)-1, &oom);

	assert_int_equal(oom, 0);
	if (want == NULL) {
		if (got != NULL)
			fail_msg("'%s' + '%s' gave '%s'", base, ref, got);
		return;
	}
	if (got == NULL || strcmp(got, want) != 0)
		fail_msg("'%s' + '%s' gave '%s', expected '%s'", base, ref,
			 got ? got : "(null)", want);
	free(got);
}

static void test_urls(void **state)
{
	const char *b = "http://a.example/b/c/d;p?q";

	(void)state;
	/* RFC 3986 section 5.4.1 and 5.4.2, without fragments */
	check_url(b, "g", "http://a.example/b/c/g");
	check_url(b, "./g", "http://a.example/b/c/g");
	check_url(b, "g/", "http://a.example/b/c/g/");
	check_url(b, "/g", "http://a.example/g");
	check_url(b, "//g", "http://g/");
	check_url(b, "?y", "http://a.example/b/c/d;p?y");
	check_url(b, "g?y", "http://a.example/b/c/g?y");
	check_url(b, "#s", "http://a.example/b/c/d;p?q");
	check_url(b, "g#s", "http://a.example/b/c/g");
	check_url(b, ";x", "http://a.example/b/c/;x");
	check_url(b, "", NULL);
	check_url(b, ".", "http://a.example/b/c/");
	check_url(b, "./", "http://a.example/b/c/");
	check_url(b, "..", "http://a.example/b/");
	check_url(b, "../", "http://a.example/b/");
	check_url(b, "../g", "http://a.example/b/g");
	check_url(b, "../..", "http://a.example/");
	check_url(b, "../../g", "http://a.example/g");
	check_url(b, "../../../g", "http://a.example/g");
	check_url(b, "/./g", "http://a.example/g");
	check_url(b, "/../g", "http://a.example/g");
	check_url(b, "g.", "http://a.example/b/c/g.");
	check_url(b, "..g", "http://a.example/b/c/..g");
	check_url(b, "./../g", "http://a.example/b/g");
	check_url(b, "g/./h", "http://a.example/b/c/g/h");
	check_url(b, "g/../h", "http://a.example/b/c/h");
	check_url(b, "http:g", "http://a.example/b/c/g");
	/* the web's leniencies and refusals */
	check_url(b, "  HTTPS://Www.Example.COM/A B\t/é  ",
		  "https://www.example.com/A%20B/%C3%A9");
	check_url(b, "\\\\cdn.example\\img.png", "http://cdn.example/img.png");
	check_url(b, "javascript:alert(1)", NULL);
	check_url(b, "data:image/png;base64,AAAA", NULL);
	check_url(b, "mailto:x@y", NULL);
	check_url(b, "ftp://x/y", NULL);
	check_url(b, "http://user@host/", NULL);
	check_url(NULL, "/relative", NULL);
	check_url("not a url", "/relative", NULL);
	check_url(NULL, "https://x.example", "https://x.example/");
}

#define CONV(in, cs, want, want_cs) \
	check_conv(in, sizeof(in) - 1, cs, want, want_cs)

static void check_conv(const char *in, size_t n, const char *charset,
		       const char *want, const char *want_cs)
{
	const char *out;
	size_t outlen;
	int own;
	char used[48];

	assert_int_equal(x_to_utf8(in, n, charset, &out, &outlen, &own, used),
			 0);
	assert_int_equal(outlen, strlen(want));
	assert_memory_equal(out, want, outlen);
	assert_string_equal(used, want_cs);
	if (own)
		free((char *)out);
}

static void test_charsets(void **state)
{
	(void)state;
	/* windows-1252 smart quotes and e-acute, declared by meta */
	CONV("<meta charset=windows-1252>\x93" "caf\xe9\x94", NULL,
		   "<meta charset=windows-1252>\xe2\x80\x9c" "caf\xc3\xa9"
		   "\xe2\x80\x9d", "WINDOWS-1252");
	/* ISO-8859-1 from HTTP means windows-1252 (WHATWG) */
	CONV("\x80 \xe9", "text/html; charset=ISO-8859-1",
		   "\xe2\x82\xac \xc3\xa9", "WINDOWS-1252");
	/* http-equiv */
	CONV("<meta http-equiv=\"Content-Type\" content=\"text/html; "
		   "charset=iso-8859-1\">\xe9", NULL,
		   "<meta http-equiv=\"Content-Type\" content=\"text/html; "
		   "charset=iso-8859-1\">\xc3\xa9", "WINDOWS-1252");
	/* BOM beats everything */
	CONV("\xef\xbb\xbf" "a\xc3\xa9", "iso-8859-1", "a\xc3\xa9",
		   "UTF-8");
	CONV("\xff\xfe" "a\0\xe9\0", NULL, "a\xc3\xa9", "UTF-16LE");
	/* UTF-16 named only by the HTTP header, no BOM */
	CONV("<\0p\0>\0\xe9\0", "text/html; charset=UTF-16",
		   "<p>\xc3\xa9", "UTF-16LE");
	CONV("\0<\0p\0>\0\xe9", "text/html; charset=utf-16be",
		   "<p>\xc3\xa9", "UTF-16BE");
	/* ... unless the bytes are plainly not UTF-16 */
	CONV("<p>ok", "utf-16le", "<p>ok", "UTF-8");
	/* undeclared: valid UTF-8 stays, anything else is windows-1252 */
	CONV("caf\xc3\xa9", NULL, "caf\xc3\xa9", "UTF-8");
	CONV("caf\xe9", NULL, "caf\xc3\xa9", "WINDOWS-1252");
	/* declared UTF-8 but broken: U+FFFD */
	CONV("a\xff" "b", "utf-8", "a\xef\xbf\xbd" "b", "UTF-8");
	/* unknown label: read as UTF-8 */
	CONV("ok", "x-no-such-charset", "ok", "UTF-8");
	/* GBK (GB18030) */
	CONV("\xc4\xe3\xba\xc3", "gb2312", "\xe4\xbd\xa0\xe5\xa5\xbd",
		   "GB18030");
	/* Shift_JIS, with a byte iconv rejects at the end */
	CONV("\x82\xa0\x82", "shift_jis", "\xe3\x81\x82\xef\xbf\xbd",
		   "CP932");
}

static void test_text_writer(void **state)
{
	struct x_text t;
	char *s;
	int oom = 0;

	(void)state;
	x_text_init(&t, 100, 0);
	x_text_add(&t, "  a\t\tb \xc2\xa0 c", 11);
	x_text_break(&t);
	x_text_add(&t, " d\xe2\x80\x8b" "e\x01" "f\xff", 9);
	s = x_text_take(&t);
	assert_string_equal(s, "a b c\nde f\xef\xbf\xbd");
	free(s);
	x_text_release(&t);

	s = x_clean("  \xc2\xa0 ", 5, 100, &oom);
	assert_null(s);
	s = x_clean("one two three four", 18, 10, &oom);
	assert_string_equal(s, "one two");
	free(s);

	s = x_html_unescape("A &amp; B &#8217;s &#x1F600; &bogus; <b>x</b>",
			    strlen("A &amp; B &#8217;s &#x1F600; &bogus; <b>x</b>"));
	assert_string_equal(s, "A & B \xe2\x80\x99s \xf0\x9f\x98\x80 &bogus; x");
	free(s);
	s = x_html_unescape("<p>One</p><p>Two<br/>three</p>", 30);
	assert_string_equal(s, "\nOne\n\nTwo\nthree\n");
	free(s);

	assert_int_equal(x_word_count("Hello, world! It's a test-case."), 5);
	assert_int_equal(x_word_count("\xe4\xbd\xa0\xe5\xa5\xbd world"), 3);
	assert_int_equal(x_word_count(" -- 42 "), 1);
}

/* xorshift: the random texts below */
static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A random text: printable ASCII, single and double spaces, tabs, line
 * feeds, controls, U+00A0, U+200B, U+2019, an ideograph, a bad byte. */
static size_t random_text(uint64_t *x, char *out, size_t max)
{
	static const char *pieces[] = { " ", " ", " ", "  ", "\t", "\n", "\x01",
					"\xc2\xa0", "\xe2\x80\x8b",
					"\xe2\x80\x99", "\xe4\xbd\xa0", "\xff",
					"'", "-", "_" };
	size_t n = 0, k, len = rnd(x) % max;

	while (n + 4 < len) {
		k = rnd(x) % 30;
		if (k < 15) {
			out[n++] = (char)(0x21 + rnd(x) % 94);
		} else {
			const char *p = pieces[k - 15];

			memcpy(out + n, p, strlen(p));
			n += strlen(p);
		}
	}
	out[n] = '\0';
	return n;
}

/*
 * x_text_add() copies runs of printable ASCII, and the single spaces
 * between them, at once: the text it writes, and where a cap cuts it, are
 * those of the same input added a character (or a run of printable ASCII)
 * at a time, for every cap, line mode and text.
 */
static void test_text_runs(void **state)
{
	uint64_t x = 88172645463325252ull;
	char in[400];
	size_t i, n, j, l;

	(void)state;
	for (i = 0; i < 3000; i++) {
		struct x_text a, b;
		size_t cap = 1 + rnd(&x) % 300;
		int oneline = (int)(rnd(&x) % 2);

		n = random_text(&x, in, sizeof(in));
		x_text_init(&a, cap, oneline);
		x_text_init(&b, cap, oneline);
		a.lines = b.lines = (int)(rnd(&x) % 2);
		x_text_add(&a, in, n);
		for (j = 0; j < n; j += l) {
			const unsigned char *p = (const unsigned char *)in;

			l = 0;
			while (j + l < n && p[j + l] > 0x20 && p[j + l] < 0x7F)
				l++;
			if (l == 0)
				x_utf8_next(p + j, n - j, &l);
			x_text_add(&b, in + j, l);
		}
		assert_int_equal(a.b.len, b.b.len);
		if (a.b.len > 0)
			assert_memory_equal(a.b.data, b.b.data, a.b.len + 1);
		assert_int_equal(a.full, b.full);
		assert_int_equal(a.pending, b.pending);
		x_text_release(&a);
		x_text_release(&b);
	}
}

/* x_word_count() on random texts against every character decoded (its
 * ASCII bytes are read from a table), and x_utf8_valid() (eight ASCII
 * bytes at a time) likewise */
static void test_word_count_random(void **state)
{
	uint64_t x = 42;
	char in[400];
	size_t i, n, j, l, words;
	unsigned cp;
	int inword, w, valid;

	(void)state;
	for (i = 0; i < 3000; i++) {
		n = random_text(&x, in, sizeof(in));
		for (j = 0; i % 2 && j < n; j++)	/* half without a bad byte */
			if (in[j] == '\xff')
				in[j] = 'y';
		words = 0;
		inword = 0;
		valid = 1;
		for (j = 0; j < n; j += l) {
			cp = x_utf8_next((const unsigned char *)in + j, n - j,
					 &l);
			if (cp == 0xFFFD && l == 1)
				valid = 0;
			w = (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') ||
			    (cp >= 'A' && cp <= 'Z') ||
			    (cp >= 0xC0 && cp != 0xD7 && cp != 0xF7 &&
			     cp != 0xFFFD && !(cp >= 0x2000 && cp <= 0x2BFF) &&
			     !(cp >= 0x3000 && cp <= 0x303F));
			if (cp >= 0x4E00 && cp <= 0x9FFF) {
				words++;
				inword = 0;
			} else if (w) {
				words += !inword;
				inword = 1;
			} else if (cp != '\'' && cp != 0x2019 && cp != '-' &&
				   cp != '_') {
				inword = 0;
			}
		}
		assert_int_equal(x_word_count(in), words);
		assert_int_equal(x_utf8_valid(in, n), valid);
	}
}

static struct lb_doc run(const char *html, const char *url)
{
	struct lb_doc doc;
	struct lb_error err;

	lb_doc_init(&doc);
	lb_error_init(&err);
	if (extract_html(html, strlen(html), url, NULL, &doc, &err) < 0)
		fail_msg("extract_html: %s", err.msg);
	return doc;
}

/* read_time: ceil(words / 230) minutes. */
static void test_read_time(void **state)
{
	struct lb_buf b;
	struct lb_doc doc;
	int i;

	(void)state;
	lb_buf_init(&b, 1 << 20);
	lb_buf_adds(&b, "<p>", NULL);
	for (i = 0; i < 231; i++)
		lb_buf_adds(&b, "word ", NULL);
	doc = run(b.data, "https://e.example/");
	assert_string_equal(doc.read_time, "2 min");
	assert_int_equal(doc.src[LB_F_read_time], LB_SRC_DERIVED);
	lb_doc_release(&doc);
	doc = run("<p>one</p>", "https://e.example/");
	assert_string_equal(doc.read_time, "1 min");
	lb_doc_release(&doc);
	doc = run("<p> </p>", "https://e.example/");
	assert_null(doc.read_time);
	assert_null(doc.text);
	lb_doc_release(&doc);
	lb_buf_release(&b);
}

/* Nothing found: everything NULL but the URL; never "". */
static void test_empty(void **state)
{
	struct lb_doc doc;
	struct lb_error err;

	(void)state;
	lb_doc_init(&doc);
	lb_error_init(&err);
	assert_int_equal(extract_html("", 0, "https://e.example/a?b=1", NULL,
				      &doc, &err), 0);
	assert_null(doc.title);
	assert_null(doc.description);
	assert_null(doc.text);
	assert_null(doc.language);
	assert_int_equal(doc.author.n, 0);
	assert_string_equal(doc.url, "https://e.example/a?b=1");
	assert_string_equal(doc.url_path, "/a");
	assert_string_equal(doc.url_qs_params, "b=1");
	assert_int_equal(doc.src[LB_F_url], LB_SRC_URL);
	lb_doc_release(&doc);

	assert_int_equal(extract_html(NULL, 0, NULL, NULL, &doc, &err), 0);
	assert_null(doc.url);
	assert_null(doc.url_path);
	lb_doc_release(&doc);

	doc = run("<title> </title><h1>\xc2\xa0</h1><meta name=description "
		  "content=''><meta property=og:title content='   '>"
		  "<script type=application/ld+json>{\"@type\":\"Article\","
		  "\"headline\":\"\",\"author\":[\"\",{\"name\":\" \"}]}"
		  "</script>", "https://e.example/");
	assert_null(doc.title);
	assert_null(doc.description);
	assert_int_equal(doc.author.n, 0);
	lb_doc_release(&doc);
}

/* Caps: text length, a JSON-LD block nested too deep, a deep tree. */
static void test_caps(void **state)
{
	struct lb_buf b;
	struct lb_doc doc;
	int i;

	(void)state;
	lb_buf_init(&b, 16 << 20);
	lb_buf_adds(&b, "<body><p>", NULL);
	for (i = 0; i < 100000; i++)
		lb_buf_adds(&b, "lorem ipsum ", NULL);
	doc = run(b.data, "https://e.example/");
	assert_non_null(doc.text);
	assert_true(strlen(doc.text) <= X_MAX_TEXT);
	assert_true(strlen(doc.text) > X_MAX_TEXT - 100);
	lb_doc_release(&doc);

	/* JSON-LD deeper than the cap is skipped; the next block counts */
	lb_buf_reset(&b);
	lb_buf_adds(&b, "<script type=application/ld+json>{\"@type\":"
		    "\"Article\",\"headline\":\"Deep\",\"x\":", NULL);
	for (i = 0; i < X_MAX_JSONLD_DEPTH + 5; i++)
		lb_buf_adds(&b, "[", NULL);
	for (i = 0; i < X_MAX_JSONLD_DEPTH + 5; i++)
		lb_buf_adds(&b, "]", NULL);
	lb_buf_adds(&b, "}</script><script type=application/ld+json>"
		    "{\"@type\":\"Article\",\"headline\":\"Shallow\"}</script>",
		    NULL);
	doc = run(b.data, "https://e.example/");
	assert_string_equal(doc.title, "Shallow");
	lb_doc_release(&doc);

	/* 200000 nested elements: gumbo alone would take minutes (it is
	 * quadratic in depth); the limiter keeps it linear */
	lb_buf_reset(&b);
	for (i = 0; i < 200000; i++)
		lb_buf_adds(&b, "<div><span>", NULL);
	lb_buf_adds(&b, "<h1>Deep title</h1><p>deep text", NULL);
	doc = run(b.data, "https://e.example/");
	assert_string_equal(doc.title, "Deep title");
	assert_string_equal(doc.text, "Deep title\ndeep text");
	lb_doc_release(&doc);

	/* a tag with 100000 attributes (quadratic in gumbo too), then tags
	 * beyond the depth cap that also have too many attributes */
	lb_buf_reset(&b);
	lb_buf_adds(&b, "<h1 ", NULL);
	for (i = 0; i < 100000; i++)
		lb_buf_printf(&b, NULL, "a%d='>' ", i);
	lb_buf_adds(&b, ">Many attributes</h1>", NULL);
	for (i = 0; i < X_MAX_DEPTH + 10; i++) {
		int k;

		lb_buf_adds(&b, "<div", NULL);
		for (k = 0; k < X_MAX_ATTRS + 2; k++)
			lb_buf_printf(&b, NULL, " b%d", k);
		lb_buf_adds(&b, ">", NULL);
	}
	lb_buf_adds(&b, "end", NULL);
	doc = run(b.data, "https://e.example/");
	assert_string_equal(doc.title, "Many attributes");
	assert_string_equal(doc.text, "Many attributes\nend");
	lb_doc_release(&doc);

	/* the byline and title lookups are capped: 20000 <h1>s in a
	 * sidebar, 20000 'Author:' field lists and byline spans, a title
	 * <h1> 400 levels down; every author list stays within its cap */
	lb_buf_reset(&b);
	lb_buf_adds(&b, "<body><div class=sidebar>", NULL);
	for (i = 0; i < 20000; i++)
		lb_buf_adds(&b, "<h1>x</h1>", NULL);
	lb_buf_adds(&b, "</div><dl>", NULL);
	for (i = 0; i < 20000; i++)
		lb_buf_printf(&b, NULL, "<dt>Author:</dt><dd>A%d and B</dd>"
			      "<span class=author>C%d</span>", i, i);
	lb_buf_adds(&b, "</dl>", NULL);
	for (i = 0; i < 400; i++)
		lb_buf_adds(&b, "<div class=a>", NULL);
	lb_buf_adds(&b, "<h1>Deep title</h1><p>text", NULL);
	doc = run(b.data, "https://e.example/");
	assert_string_equal(doc.title, "Deep title");
	assert_true(doc.author.n > 0 && doc.author.n <= 32);
	lb_doc_release(&doc);
	lb_buf_release(&b);
}

/*
 * Rules that real generators need (issue 19), each on the smallest page
 * that shows it: ids derived from headings are not chrome, a heading's
 * own links are its text, docutils asides are content; bylines without
 * e-mail or "View all" phrasing; block themes' meta blocks and labels.
 */
static void test_generator_rules(void **state)
{
	static const struct {
		const char *html;
		const char *has, *lacks;	/* in the text */
		const char *author, *date, *category;
	} cases[] = {
		/* Sphinx: <section id="credits">, MkDocs <h2 id="comments"> */
		{ "<main><h1>hashlib</h1><p>Intro.</p><section id=\"credits\">"
		  "<span id=\"x\"></span><h2>Credits<a class=headerlink "
		  "href=#credits>\xc2\xb6</a></h2><p>Thanks to Gregory.</p>"
		  "</section><h2 id=\"comments\">Comments</h2><p>Start with "
		  "a hash.</p><div id=\"related-topics-2\"><h3>Related topics"
		  "</h3><p>See also os.</p></div></main>",
		  "Credits\nThanks to Gregory.\nComments\nStart with a hash.\n"
		  "Related topics\nSee also os.", "\xc2\xb6", NULL, NULL, NULL },
		/* Python's docs: numbered sections, object and term ids,
		 * a docutils sidebar with its title */
		{ "<div role=main><h1>Lexical analysis</h1><section id=\"comments"
		  "\"><span id=\"id4\"></span><h3><span class=section-number>"
		  "2.1.3. </span>Comments</h3><p>A comment starts with a hash."
		  "</p></section><dl><dt id=\"http.cookiejar.CookieJar.add_"
		  "cookie_header\">add_cookie_header(request)</dt><dd>Add the "
		  "header.</dd><dt id=\"term-meta-path-finder\">meta path "
		  "finder</dt><dd>A finder.</dd><dt id=\"credits\">credits</dt>"
		  "<dd>Prints the credits.</dd></dl><aside class=\"sidebar\"><p "
		  "class=\"sidebar-title\">Important</p><p>See the tutorial.</p>"
		  "</aside></div>",
		  "2.1.3. Comments\nA comment starts with a hash.\n"
		  "add_cookie_header(request)\nAdd the header.\nmeta path finder"
		  "\nA finder.\ncredits\nPrints the credits.\nImportant\nSee "
		  "the tutorial.", NULL, NULL, NULL, NULL },
		/* syntax highlighters' token classes inside <pre> */
		{ "<main><h1>T</h1><pre><code><span class=\"token comment\">"
		  "# limit the threads</span>\nlimit(1)\n<span class=\"hljs-"
		  "comment\">// share it</span></code></pre></main>",
		  "# limit the threads\nlimit(1)\n// share it", NULL, NULL,
		  NULL, NULL },
		/* a chrome block's id is not its heading's slug */
		{ "<main><h1>Post</h1><p>Body.</p><div id=\"comments\"><h2>3 "
		  "thoughts on Post</h2><p>Nice!</p></div><div id=\"sidebar\">"
		  "<h2>Sidebar</h2><p>Ads here.</p></div></main>",
		  "Post\nBody.", "thoughts", NULL, NULL, NULL },
		/* docutils: toc-backref headings, topic abstract, footnotes */
		{ "<div role=main><h1><a class=\"toc-backref\" href=#id1>Socket "
		  "HOWTO</a></h1><dl class=field-list><dt>Author<span>:</span>"
		  "</dt><dd><p>A.M. Kuchling &lt;<a href=\"mailto:amk%40amk.ca\">"
		  "amk<span>@</span>amk<span>.</span>ca</a>&gt;</p></dd></dl>"
		  "<aside class=\"topic\"><p class=topic-title>Abstract</p><p>"
		  "Sockets are everywhere.</p></aside><h2><a class=toc-backref "
		  "href=#id2>Sockets</a></h2><p>Text.</p><aside class=\""
		  "footnote-list brackets\"><aside class=\"footnote brackets\">"
		  "<p>A note.</p></aside></aside><aside><p>Sidebar.</p></aside>"
		  "</div>", "Socket HOWTO\n", "Sidebar.", "A.M. Kuchling", NULL,
		  NULL },
		{ "<div role=main><h1>T</h1><p>x</p><aside class=topic><p>"
		  "Sockets are everywhere.</p></aside><h2><a class=toc-backref "
		  "href=#id2>Sockets</a></h2><aside class=\"footnote-list\"><p>"
		  "A note.</p></aside></div>",
		  "Sockets are everywhere.\nSockets\nA note.", NULL, NULL, NULL,
		  NULL },
		/* author names without addresses or "View all" phrasing */
		{ "<html><head><meta name=author content=\"Vinay Sajip <vinay_"
		  "sajip at red-dove dot com>\"></head><body><h1>T</h1><p>x</p>"
		  "</body></html>", NULL, NULL, "Vinay Sajip", NULL, NULL },
		{ "<html><head><meta name=author content=\"Jane Doe (jane@"
		  "example.org) @janedoe\"></head><body><h1>T</h1></body></html>",
		  NULL, NULL, "Jane Doe", NULL, NULL },
		{ "<article><h1>T</h1><p>x</p><footer><a rel=author href=/a/>"
		  "View all posts by Jane Doe</a></footer></article>", NULL, NULL,
		  "Jane Doe", NULL, NULL },
		/* WordPress Twenty Twenty-One's author bio */
		{ "<article><h1>T</h1><div class=entry-content><p>Body.</p>"
		  "</div><div class=\"author-bio\"><h2 class=author-title>By "
		  "Jane Doe</h2><a class=author-link href=/author/jane/ rel="
		  "author>View all of Jane Doe&#039;s posts.</a></div></article>",
		  "T\nBody.", "View all", "Jane Doe", NULL, NULL },
		/* WordPress block themes (Twenty Twenty-Three) */
		{ "<main><h1 class=wp-block-post-title>T</h1><div class=\""
		  "entry-content wp-block-post-content\"><p>Body.</p></div>"
		  "<div class=\"wp-block-group\"><p>\n Posted </p><div class="
		  "\"wp-block-post-date\"><time datetime=\"2023-05-06T09:30:00"
		  "+00:00\">May 6, 2023</time></div><p>in</p><div class=\""
		  "taxonomy-category wp-block-post-terms\"><a href=/category/"
		  "p/ rel=tag>Packages</a></div></div><div class=wp-block-group"
		  "><p>by</p><div class=wp-block-post-author><div class=wp-block"
		  "-post-author__content><p class=wp-block-post-author__name>Ada"
		  " Lovelace</p></div></div></div><div class=wp-block-group><p>"
		  "Tags:</p><div class=\"taxonomy-post_tag wp-block-post-terms\""
		  "><a href=/tag/debian/ rel=tag>debian</a></div></div></main>",
		  "T\nBody.", "Posted", "Ada Lovelace",
		  "2023-05-06T09:30:00+00:00", "Packages" },
		/* Docusaurus blog header; Hugo Ananke byline and tag list */
		{ "<main><article><header><h1>T</h1><div class=\"container_mt6G"
		  "\"><time datetime=\"2023-05-06\">May 6, 2023</time> \xc2\xb7 "
		  "2 min read</div><div class=row><div class=\"avatar\"><div "
		  "class=avatar__intro><div class=avatar__name><a href=/a><span>"
		  "Ada Lovelace</span></a></div><small>Maintainer</small></div>"
		  "</div></div></header><div class=markdown><p>Body.</p></div>"
		  "</article></main>", "T\nBody.", "read", NULL, NULL, NULL },
		{ "<main><article><header><h1>T</h1><p class=tracked>By <strong>"
		  "Ada Lovelace</strong></p><time datetime=\"2023-05-06\">May 6"
		  "</time><p>A standfirst of the post that is longer than a "
		  "byline.</p><p>By the numbers</p></header><div><p>Body.</p><ul class=pa0><li><a "
		  "href=\"/tags/debian\">debian</a></li><li><a href=\"/tags/"
		  "tools\">tools</a></li></ul><ul><li><a href=\"/docs/\">docs"
		  "</a></li></ul></div></article></main>",
		  "T\nA standfirst of the post that is longer than a byline.\n"
		  "By the numbers\nBody.\ndocs", "debian", "Ada Lovelace", NULL,
		  NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lb_doc doc = run(cases[i].html, "https://e.example/p");
		char *j = lb_doc_to_json(&doc, 1, 1);

		if (cases[i].has != NULL &&
		    (doc.text == NULL || strstr(doc.text, cases[i].has) == NULL))
			fail_msg("case %zu: text lacks '%s': %s", i, cases[i].has, j);
		if (cases[i].lacks != NULL && doc.text != NULL &&
		    strstr(doc.text, cases[i].lacks) != NULL)
			fail_msg("case %zu: text has '%s': %s", i, cases[i].lacks, j);
		if (cases[i].author != NULL &&
		    (doc.author.n != 1 ||
		     strcmp(doc.author.v[0], cases[i].author) != 0))
			fail_msg("case %zu: author: %s", i, j);
		if (cases[i].date != NULL &&
		    (doc.published_time == NULL ||
		     strcmp(doc.published_time, cases[i].date) != 0))
			fail_msg("case %zu: date: %s", i, j);
		if (cases[i].category != NULL &&
		    (doc.category.n != 1 ||
		     strcmp(doc.category.v[0], cases[i].category) != 0))
			fail_msg("case %zu: category: %s", i, j);
		free(j);
		lb_doc_release(&doc);
	}
}

/* Bidi and terminal controls never reach a field: U+202E, U+2066,
 * ESC sequences (the ESC itself). */
static void test_controls(void **state)
{
	struct lb_doc doc;

	(void)state;
	doc = run("<html><head><title>T</title><meta property=og:title "
		  "content=\"B\x1b]0;x\x07 \xe2\x80\xae" "o\">"
		  "<script type=application/ld+json>{\"@type\":\"Article\","
		  "\"author\":\"E\\u001b[31mvil\\u202e\"}</script></head>"
		  "<body><h1>H\x1b[2Jx\xe2\x80\xaey\xe2\x81\xa6z</h1>"
		  "<p>t\xe2\x80\x8f" "ext</p></body></html>", "https://e.example/");
	assert_non_null(doc.title);
	assert_null(strstr(doc.title, "\xe2\x80\xae"));
	assert_null(strstr(doc.title, "\xe2\x81\xa6"));
	assert_null(strchr(doc.title, 0x1b));
	assert_null(strstr(doc.text, "\xe2\x80\x8f"));
	assert_null(strchr(doc.text, 0x1b));
	assert_int_equal(doc.author.n, 1);
	assert_null(strchr(doc.author.v[0], 0x1b));
	assert_null(strstr(doc.author.v[0], "\xe2\x80\xae"));
	lb_doc_release(&doc);
}

/* 500 distinct formatting elements left open, then 20,000 paragraphs:
 * gumbo reconstructs every open one for each paragraph (3.7 GB, then a
 * crash). The limiter keeps at most X_MAX_FORMATTING open and closes them
 * once their reconstructions pass X_MAX_RECON; the text is all kept. */
static void test_formatting_bomb(void **state)
{
	struct lb_buf b;
	struct lb_doc doc;
	char *out = NULL;
	size_t outlen = 0, i, paras = 0;
	const char *p;
	int k;

	(void)state;
	lb_buf_init(&b, 16 << 20);
	lb_buf_adds(&b, "<html><body><p>", NULL);
	for (k = 0; k < 500; k++)
		lb_buf_printf(&b, NULL, "<b class=c%d>", k);
	for (k = 0; k < 20000; k++)
		lb_buf_adds(&b, "<p>x", NULL);
	assert_int_equal(x_limit_html(b.data, b.len, &out, &outlen), 0);
	assert_non_null(out);
	/* at most X_MAX_FORMATTING of the <b>s are left */
	for (k = X_MAX_FORMATTING; k < 500; k++) {
		char tag[32];

		snprintf(tag, sizeof(tag), "<b class=c%d>", k);
		assert_null(strstr(out, tag));
	}
	assert_non_null(strstr(out, "<b class=c0>"));
	/* past the budget they are closed before the next paragraph */
	assert_non_null(strstr(out, "</b></b><p>x"));
	{	/* tag names in upper case are the same elements */
		char *up = NULL;
		size_t uplen = 0;

		for (i = 0; i < b.len; i++)
			if (b.data[i] == 'b' || b.data[i] == 'p')
				b.data[i] = (char)(b.data[i] - 'a' + 'A');
		assert_int_equal(x_limit_html(b.data, b.len, &up, &uplen), 0);
		assert_int_equal(uplen, outlen);
		for (i = 0; i < outlen; i++)
			assert_true(up[i] == out[i] ||
				    up[i] == out[i] - 'a' + 'A');
		free(up);
		for (i = 0; i < b.len; i++)
			if (b.data[i] == 'B' || b.data[i] == 'P')
				b.data[i] = (char)(b.data[i] - 'A' + 'a');
	}
	for (p = out; (p = strstr(p, "<p>x")) != NULL; p++)
		paras++;
	assert_int_equal(paras, 20000);
	free(out);

	doc = run(b.data, "https://e.example/");
	assert_non_null(doc.text);
	for (i = 0, paras = 0; doc.text[i] != '\0'; i++)
		paras += doc.text[i] == 'x';
	assert_int_equal(paras, 20000);
	lb_doc_release(&doc);

	/* an ordinary page passes untouched */
	lb_buf_reset(&b);
	lb_buf_adds(&b, "<p><a href=/x><b><i>bold</i></b></a> plain<p>next", NULL);
	assert_int_equal(x_limit_html(b.data, b.len, &out, &outlen), 0);
	assert_null(out);
	lb_buf_release(&b);
}

/* A gumbo tree written out whole: every node's kind, tag, namespace,
 * flags, name and end tag as written, attributes (names and values, and
 * as written), text; the doctype. */
static void tree_dump(FILE *f, const GumboNode *n, int depth)
{
	const GumboVector *ch = NULL;
	unsigned k;

	fprintf(f, "%d %d ", depth, (int)n->type);
	switch (n->type) {
	case GUMBO_NODE_DOCUMENT:
		fprintf(f, "doc %d [%s] [%s] [%s] %d\n",
			n->v.document.has_doctype, n->v.document.name,
			n->v.document.public_identifier,
			n->v.document.system_identifier,
			(int)n->v.document.doc_type_quirks_mode);
		ch = &n->v.document.children;
		break;
	case GUMBO_NODE_ELEMENT:
	case GUMBO_NODE_TEMPLATE:
		fprintf(f, "el %d %d %u [%.*s] [%.*s]\n", (int)n->v.element.tag,
			(int)n->v.element.tag_namespace, (unsigned)n->parse_flags,
			(int)n->v.element.original_tag.length,
			n->v.element.original_tag.data,
			(int)n->v.element.original_end_tag.length,
			n->v.element.original_end_tag.data);
		for (k = 0; k < n->v.element.attributes.length; k++) {
			const GumboAttribute *a = n->v.element.attributes.data[k];

			fprintf(f, " at %d [%s] [%s] [%.*s] [%.*s]\n",
				(int)a->attr_namespace, a->name, a->value,
				(int)a->original_name.length,
				a->original_name.data,
				(int)a->original_value.length,
				a->original_value.data);
		}
		ch = &n->v.element.children;
		break;
	default:
		fprintf(f, "text [%s]\n", n->v.text.text);
		break;
	}
	for (k = 0; ch != NULL && k < ch->length; k++)
		tree_dump(f, ch->data[k], depth + 1);
}

/* gumbo's allocations, all let go after each parse (its doctype strings
 * leak otherwise, as in html.c's pool) */
struct tblock {
	struct tblock *prev, *next;
	max_align_t align[];
};
static struct tblock tlist = { &tlist, &tlist };

static void *talloc(void *ud, size_t size)
{
	struct tblock *b = malloc(sizeof(*b) + size);

	(void)ud;
	assert_non_null(b);
	b->next = tlist.next;
	b->prev = &tlist;
	tlist.next->prev = b;
	tlist.next = b;
	return b + 1;
}

static void tfree(void *ud, void *p)
{
	struct tblock *b;

	(void)ud;
	if (p == NULL)
		return;
	b = (struct tblock *)p - 1;
	b->prev->next = b->next;
	b->next->prev = b->prev;
	free(b);
}

/* The tree of html as extract/ parses it, packed (x_pack_html) or not;
 * *packed: the runs packed. */
static char *parse_dump(const char *html, size_t len, int pack,
			size_t *packed)
{
	GumboOptions o = kGumboDefaultOptions;
	GumboOutput *out;
	struct x_pack pk;
	char *dump = NULL;
	size_t dl = 0;
	FILE *f;

	memset(&pk, 0, sizeof(pk));
	o.max_errors = 0;
	o.allocator = talloc;
	o.deallocator = tfree;
	if (pack)
		assert_int_equal(x_pack_html(html, len, &pk), 0);
	if (packed != NULL)
		*packed = pk.n;
	out = pk.html != NULL ? gumbo_parse_with_options(&o, pk.html, pk.len) :
				gumbo_parse_with_options(&o, html, len);
	assert_non_null(out);
	assert_int_equal(x_pack_unpack(&pk, &o, out->document), 0);
	f = open_memstream(&dump, &dl);
	assert_non_null(f);
	tree_dump(f, out->document, 0);
	fclose(f);
	gumbo_destroy_output(&o, out);
	while (tlist.next != &tlist)
		tfree(NULL, tlist.next + 1);
	x_pack_release(&pk);
	return dump;
}

/* Random tag soup: every construct pack.c follows or stops at. */
static size_t random_soup(uint64_t *x, char *out, size_t max)
{
	static const char *const tags[] = {
		"p", "b", "i", "a", "div", "span", "table", "tr", "td", "tbody",
		"caption", "colgroup", "col", "select", "option", "style",
		"script", "title", "textarea", "xmp", "iframe", "noembed",
		"noframes", "noscript", "svg", "math", "template", "frameset",
		"frame", "plaintext", "pre", "listing", "head", "body", "html",
		"br", "img", "h1", "ul", "li", "form", "input", "isindex",
		"image", "button", "nobr", "font", "em", "STYLE", "Script",
		"desc", "foreignObject", "mi", "annotation-xml", "dialog",
		"main", "article",
	};
	static const char *const names[] = {
		"class", "href", "x", "\"q", "'", "=", "a<b", "title", "src",
		"encoding", "type", "longattributename", "another_long_name",
	};
	static const char *const values[] = {
		"\"one two\"", "'a>b'", "plain", "\"x\"y", "'it''s'", "=",
		"\"&amp; &#65;\"", "a>b", "\"</style>\"", "'</script> x y'",
		"\"text/html\"", "'\xc3\xa9t\xc3\xa9'", "", "\"unterminated",
		"an_unquoted_long_value", "\"</title>\"", "\"</xmp>\"",
	};
	static const char *const bits[] = {
		"<!-- a comment here -->", "<!-->", "<!--->", "<!---->",
		"<!--!>", "<!---!>", "<!-- x --!> after bang", "<!-- a -- b -->",
		"-->", "--!>", "<!DOCTYPE html>",
		"<!doctype html PUBLIC \"-//W3C//DTD HTML 4.01//EN\">",
		"<!DOCTYPE x SYSTEM \"a>b\">", "<![CDATA[ some cdata ]]>",
		"<?php echo 1; ?>", "</>", "</ bogus end>", "< a lone lt",
		"<3 love", "&amp;", "&amp", "&notin;", "&notit;", "&#65;",
		"&#x41", "&#xF0000;", "& and", "&foo;", "&#128512;",
		"</p>", "</br>", "</select>", "</table>", "</body>", "</html>",
		"<!-- <script> -->", "<script><!-- document.write('<script>x"
		"</script>') --></script>", "\r\n", "\r", "\f", "\0",
		"\xc2\x85", "\xef\xbb\xbf", "\xf0\x9f\x98\x80", "\xef\xb7\x90",
		"\xf3\xb0\x80\x80", "\xe2\x80\x94 dash \xe2\x80\x94",
		"</style>", "</script>", "</textarea>", "</title>",
		"</noscript>", "</svg>", "</math>", "</template>",
	};
	static const char *const words[] = {
		"the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog",
		"caf\xc3\xa9", "na\xc3\xafve", "\xe6\x97\xa5\xe6\x9c\xac",
		"don't", "well-known", "a=b", "x]y", "(paren)", "50%", "e.g.",
		"http://example.com/a?b=c", "tab\there", "line\nfeed",
	};
	size_t n = 0, parts = 1 + rnd(x) % 40, i, k, w;
	char piece[512];

	for (i = 0; i < parts; i++) {
		int len = 0;

		switch (rnd(x) % 8) {
		case 0:
		case 1:	/* a start tag */
			len = snprintf(piece, sizeof(piece), "<%s",
				       tags[rnd(x) % (sizeof(tags) /
						      sizeof(*tags))]);
			for (k = rnd(x) % 4; k > 0; k--)
				len += snprintf(piece + len,
						sizeof(piece) - (size_t)len,
						"%s%s%s%s",
						rnd(x) % 4 ? " " : "\n ",
						names[rnd(x) % (sizeof(names) /
								sizeof(*names))],
						rnd(x) % 3 ? "=" : "",
						values[rnd(x) % (sizeof(values) /
								 sizeof(*values))]);
			len += snprintf(piece + len, sizeof(piece) - (size_t)len,
					"%s", rnd(x) % 5 ? ">" : rnd(x) % 2 ?
					"/>" : " / >");
			break;
		case 2:	/* an end tag */
			len = snprintf(piece, sizeof(piece), "</%s%s>",
				       tags[rnd(x) % (sizeof(tags) /
						      sizeof(*tags))],
				       rnd(x) % 6 ? "" : " a='>'");
			break;
		case 3:
			len = snprintf(piece, sizeof(piece), "%s",
				       bits[rnd(x) % (sizeof(bits) /
						      sizeof(*bits))]);
			if (piece[0] == '\0' && len == 0)
				piece[len++] = '\0';	/* the NUL */
			break;
		default:	/* text */
			for (w = 1 + rnd(x) % 12; w > 0 && len < 400; w--)
				len += snprintf(piece + len,
						sizeof(piece) - (size_t)len,
						"%s%s", rnd(x) % 5 ? " " :
						rnd(x) % 2 ? "\n" : "  ",
						words[rnd(x) % (sizeof(words) /
								sizeof(*words))]);
			break;
		}
		if (n + (size_t)len >= max)
			break;
		memcpy(out + n, piece, (size_t)len);
		n += (size_t)len;
	}
	out[n] = '\0';
	return n;
}

/*
 * pack.c: gumbo's tree of a packed page, its runs put back, is the tree of
 * the page itself, node for node (names and values as written included),
 * on random tag soup of every construct the packer follows or stops at;
 * and most of those pages are packed (the test must not pass by packing
 * nothing).
 */
static void test_pack_random(void **state)
{
	/* where the scanner's raw text ends inside what gumbo reads as a
	 * tag: each needs its stop or raw-text rule */
	static const char *const fixed[] = {
		"<select><style><option title=\"</style>\" longattributename "
		"other>text text text</option></select>",
		"<select><title><option title=\"</title>\" longattributename "
		"other>text text text</option></select>",
		"<script>\"<a b='</script><p title='x>' longattributename "
		"other>words words words",
		"<style>\"<a b='</style><p title='x>' longattributename "
		"other>words words words",
		"<svg><style><a title=\"</style>\" longattributename other>"
		"words words words</a></svg>",
	};
	uint64_t x = 0x9E3779B97F4A7C15ull;
	char in[20000];
	size_t i, n, packed, some = 0;

	(void)state;
	for (i = 0; i < sizeof(fixed) / sizeof(*fixed); i++) {
		char *a = parse_dump(fixed[i], strlen(fixed[i]), 0, NULL);
		char *b = parse_dump(fixed[i], strlen(fixed[i]), 1, &packed);

		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	for (i = 0; i < 20000; i++) {
		char *a, *b;

		n = random_soup(&x, in, sizeof(in));
		a = parse_dump(in, n, 0, NULL);
		b = parse_dump(in, n, 1, &packed);
		if (strcmp(a, b) != 0) {
			fprintf(stderr, "pack changed the tree of:\n%.*s\n"
				"--- plain\n%s--- packed\n%s", (int)n, in, a, b);
			fail();
		}
		some += packed > 0;
		free(a);
		free(b);
	}
	assert_true(some > 20000 / 3);
}

/* pack.c on every golden page (real generators' markup): the same tree,
 * and most of them packed. */
static void test_pack_golden(void **state)
{
	DIR *d = opendir(GOLDEN_DIR);
	struct dirent *de;
	size_t cases = 0, some = 0, packed;

	(void)state;
	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		struct lb_error err;
		char *dir, *path, *html = NULL, used[48], *a, *b;
		const char *utf8;
		size_t len = 0, ulen;
		int own;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		lb_error_init(&err);
		dir = lb_path_join(GOLDEN_DIR, de->d_name);
		path = lb_path_join(dir, "input.html");
		if (lb_file_read(path, 16 << 20, &html, &len, &err) == 0) {
			assert_int_equal(x_to_utf8(html, len, NULL, &utf8, &ulen,
						   &own, used), 0);
			a = parse_dump(utf8, ulen, 0, NULL);
			b = parse_dump(utf8, ulen, 1, &packed);
			if (strcmp(a, b) != 0)
				fprintf(stderr, "pack changed the tree of %s\n",
					dir);
			assert_string_equal(a, b);
			cases++;
			some += packed > 0;
			free(a);
			free(b);
			if (own)
				free((char *)utf8);
		}
		free(html);
		free(path);
		free(dir);
	}
	closedir(d);
	printf("pack: %zu golden pages, %zu packed\n", cases, some);
	assert_true(cases >= 30);
	assert_true(some > cases / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_demo_site),
		cmocka_unit_test(test_demo_rules),
		cmocka_unit_test(test_robots_meta),
		cmocka_unit_test(test_dates),
		cmocka_unit_test(test_languages),
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_charsets),
		cmocka_unit_test(test_text_writer),
		cmocka_unit_test(test_text_runs),
		cmocka_unit_test(test_pack_random),
		cmocka_unit_test(test_pack_golden),
		cmocka_unit_test(test_word_count_random),
		cmocka_unit_test(test_read_time),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_generator_rules),
		cmocka_unit_test(test_formatting_bomb),
		cmocka_unit_test(test_controls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
