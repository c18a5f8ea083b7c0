/* The run report: figures, reasons, history cap, and a page that escapes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "linkbot/fsutil.h"
#include "linkbot/report.h"

static char dir[] = "/tmp/linkbot-report-test.XXXXXX";

static cJSON *read_json(void)
{
	char path[128], *text = NULL;
	size_t len = 0;
	struct lb_error err;
	cJSON *o;

	lb_error_init(&err);
	snprintf(path, sizeof(path), "%s/report.json", dir);
	assert_int_equal(lb_file_read(path, 1 << 24, &text, &len, &err), 0);
	o = cJSON_Parse(text);
	free(text);
	assert_non_null(o);
	return o;
}

static void one_night(time_t t, const char *hostile)
{
	struct lb_report *r = report_new("acme", t);
	struct lb_report_endpoint *e;
	struct lb_report_crawl c = { 10, 9, 7, 0, 2, 1, 0 };
	struct lb_error err;
	size_t in[5] = { 0, 1, 2, 2, 100 };

	assert_non_null(r);
	report_stage(r, "crawl", 1.5);
	report_stage(r, "build", 0.25);
	report_crawl(r, &c);
	report_page(r, "https://acme.example/a/", "excluded", 404, "HTTP 404");
	report_page(r, "https://acme.example/b/", "excluded", 301,
		    "redirected to 'https://acme.example/x/', out of the set");
	report_page(r, "https://acme.example/c/", "excluded", 302,
		    "redirected to 'https://acme.example/y/', out of the set");
	report_page(r, hostile, "failed", 500, hostile);
	e = report_endpoint(r, "blog", "standard");
	assert_ptr_equal(report_endpoint(r, "blog", "standard"), e);
	e->links = 56;
	e->random_links = 3;
	report_in_degree(e, 1, in, 5);
	report_endpoint_outcome(e, "published", NULL);
	lb_error_init(&err);
	if (report_write(r, dir, t + 60, &err) < 0)
		fail_msg("%s", err.msg);
	report_free(r);
}

static void test_report(void **state)
{
	cJSON *o, *e, *h, *it;
	char path[128], *html = NULL;
	size_t len = 0, i;
	int by_redirect = 0;
	struct lb_error err;

	(void)state;
	assert_non_null(mkdtemp(dir));
	one_night(86400, "https://acme.example/<script>alert(1)</script>");
	o = read_json();
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "finished")),
			    "1970-01-02T00:01:00Z");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "crawl"),
					     "indexed")->valueint, 7);
	/* Reasons that name a page fall in one group. */
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(o, "reasons"))
		if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(it, "reason")),
			   "redirected to") == 0)
			by_redirect = cJSON_GetObjectItem(it, "pages")->valueint;
	assert_int_equal(by_redirect, 2);
	e = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "endpoints"), 0);
	assert_int_equal(cJSON_GetObjectItem(e, "links")->valueint, 56);
	/* in-degree 100 lands in the last bucket, 64+ */
	h = cJSON_GetObjectItem(e, "in_degree_after");
	assert_int_equal(cJSON_GetArraySize(h), 4);
	assert_int_equal(cJSON_GetArrayItem(cJSON_GetArrayItem(h, 3), 0)->valueint,
			 LB_REPORT_DEGREE_MAX);
	cJSON_Delete(o);

	/* The page escapes what the web sent: no markup of a URL survives. */
	snprintf(path, sizeof(path), "%s/report.html", dir);
	lb_error_init(&err);
	assert_int_equal(lb_file_read(path, 1 << 24, &html, &len, &err), 0);
	assert_null(strstr(html, "<script"));
	assert_non_null(strstr(html, "&lt;script&gt;alert(1)"));
	free(html);

	/* The history keeps the last 30 nights, oldest first. */
	for (i = 2; i <= 35; i++)
		one_night((time_t)i * 86400, "https://acme.example/d/");
	o = read_json();
	h = cJSON_GetObjectItem(o, "history");
	assert_int_equal(cJSON_GetArraySize(h), LB_REPORT_HISTORY);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
				    cJSON_GetArrayItem(h, 0), "started")),
			    "1970-01-07T00:00:00Z");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
				    cJSON_GetArrayItem(h, 29), "started")),
			    "1970-02-05T00:00:00Z");
	cJSON_Delete(o);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

static void test_not_json(void **state)
{
	struct lb_error err;

	(void)state;
	lb_error_init(&err);
	assert_null(report_html("{not json", &err));
	assert_int_equal(err.code, LB_EPARSE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_not_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
