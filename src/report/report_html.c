/*
 * report_html.c - the run report as one self-contained HTML page, made from
 * the report's JSON (report.h). No script and no network: inline CSS and
 * inline SVG charts, so it opens anywhere. Every number is printed in an
 * element with a data-key attribute naming its place in report.json
 * ("crawl.indexed", "endpoints.blog.random_links"), which is how the tests
 * check that the page shows what the file says.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "linkbot/buf.h"
#include "linkbot/report.h"

#define HTML_MAX (256u << 20)

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:70em;"
	"color:#222;padding:0 1em}"
	"h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px "
	"solid #ccc}h3{font-size:1.05em}"
	"table{border-collapse:collapse;margin:.5em 0}td,th{padding:.2em .6em;"
	"border-bottom:1px solid #eee;text-align:left}td.n{text-align:right;"
	"font-variant-numeric:tabular-nums}"
	".bad{color:#b00020;font-weight:600}.ok{color:#1b5e20;font-weight:600}"
	"figure{margin:.5em 0}figcaption{color:#555;font-size:.9em}"
	".legend span{display:inline-block;width:.8em;height:.8em;margin:0 .3em "
	"0 1em}";

struct html {
	struct lb_buf b;
	struct lb_error *err;
	int failed;
};

static void put(struct html *h, const char *s)
{
	if (!h->failed && lb_buf_adds(&h->b, s, h->err) < 0)
		h->failed = 1;
}

static void putf(struct html *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void putf(struct html *h, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	put(h, tmp);
}

/* Text, escaped for HTML element content and attribute values. */
static void esc(struct html *h, const char *s)
{
	char one[2] = { 0, 0 };

	for (; s != NULL && *s != '\0'; s++) {
		switch (*s) {
		case '&': put(h, "&amp;"); break;
		case '<': put(h, "&lt;"); break;
		case '>': put(h, "&gt;"); break;
		case '"': put(h, "&quot;"); break;
		case '\'': put(h, "&#39;"); break;
		default:
			one[0] = *s;
			put(h, one);
		}
	}
}

static const cJSON *get(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

static double getn(const cJSON *o, const char *key)
{
	const cJSON *v = get(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

static const char *gets(const cJSON *o, const char *key)
{
	const char *s = cJSON_GetStringValue(get(o, key));

	return s ? s : "";
}

/* A table row: label, then the number under its data-key (or "-"). */
static void row(struct html *h, const char *label, const char *prefix,
		const cJSON *o, const char *key)
{
	const cJSON *v = get(o, key);

	put(h, "<tr><th>");
	esc(h, label);
	put(h, "</th><td class=\"n\" data-key=\"");
	esc(h, prefix);
	esc(h, key);
	put(h, "\">");
	if (cJSON_IsNumber(v))
		putf(h, "%.15g", v->valuedouble);
	else if (cJSON_IsBool(v))
		put(h, cJSON_IsTrue(v) ? "yes" : "no");
	else
		put(h, "-");
	put(h, "</td></tr>\n");
}

/* Grouped bars of the in-degree histograms before and after the constraint. */
static void degree_chart(struct html *h, const cJSON *before,
			 const cJSON *after)
{
	double cnt[2][LB_REPORT_DEGREE_MAX + 1] = { { 0 } }, max = 1;
	const cJSON *hist[2] = { before, after }, *p;
	int d, s, lo = LB_REPORT_DEGREE_MAX, hi = 0, w = 640, ht = 160;
	double bw;

	for (s = 0; s < 2; s++)
		cJSON_ArrayForEach(p, hist[s]) {
			int deg = (int)cJSON_GetArrayItem(p, 0)->valuedouble;
			double c = cJSON_GetArrayItem(p, 1)->valuedouble;
			if (deg < 0 || deg > LB_REPORT_DEGREE_MAX)
				continue;
			cnt[s][deg] = c;
			if (c > max)
				max = c;
			if (deg < lo)
				lo = deg;
			if (deg > hi)
				hi = deg;
		}
	if (lo > hi)
		return;
	bw = (double)w / (double)(hi - lo + 1);
	putf(h, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" role=\"img\" aria-label=\"in-degree histogram\">",
	     w, ht + 20);
	for (d = lo; d <= hi; d++) {
		double x = (d - lo) * bw;
		for (s = 0; s < 2; s++) {
			double bh = cnt[s][d] / max * ht;
			if (cnt[s][d] == 0)
				continue;
			putf(h, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"%.1f\" fill=\"%s\"><title>in-degree %d%s, "
				"%s: %.0f pages</title></rect>",
			     x + s * bw * 0.45 + bw * 0.05, ht - bh, bw * 0.45, bh,
			     s ? "#1565c0" : "#bbb", d,
			     d == LB_REPORT_DEGREE_MAX ? "+" : "",
			     s ? "published" : "top-L", cnt[s][d]);
		}
		if ((d - lo) % ((hi - lo) / 16 + 1) == 0)
			putf(h, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\">%d</text>",
			     x + bw * 0.2, ht + 14, d);
	}
	put(h, "</svg><figcaption class=\"legend\">incoming links per page:"
	       "<span style=\"background:#bbb\"></span>top-L without the "
	       "constraint<span style=\"background:#1565c0\"></span>published"
	       "</figcaption></figure>\n");
}

/* A line chart of one figure of the history. */
static void history_chart(struct html *h, const cJSON *hist, const char *key,
			  const char *label)
{
	int n = cJSON_GetArraySize(hist), i, w = 640, ht = 100;
	double max = 0;
	const cJSON *it;

	if (n == 0)
		return;
	cJSON_ArrayForEach(it, hist)
		if (getn(it, key) > max)
			max = getn(it, key);
	if (max <= 0)
		max = 1;
	putf(h, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" role=\"img\"><polyline fill=\"none\" "
		"stroke=\"#1565c0\" stroke-width=\"2\" points=\"", w, ht + 10);
	i = 0;
	cJSON_ArrayForEach(it, hist) {
		double x = n == 1 ? w / 2.0 : (double)i * (w - 10) / (n - 1) + 5;
		putf(h, "%.1f,%.1f ", x, ht + 5 - getn(it, key) / max * ht);
		i++;
	}
	put(h, "\"/>");
	i = 0;
	cJSON_ArrayForEach(it, hist) {	/* a dot a night: one night shows */
		double x = n == 1 ? w / 2.0 : (double)i * (w - 10) / (n - 1) + 5;
		putf(h, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#1565c0\">"
			"<title>%.15g</title></circle>", x,
		     ht + 5 - getn(it, key) / max * ht, getn(it, key));
		i++;
	}
	put(h, "</svg><figcaption>");
	esc(h, label);
	putf(h, ", last %d nights (max %.15g)</figcaption></figure>\n", n, max);
}

static void endpoint_html(struct html *h, const cJSON *e)
{
	static const struct { const char *key, *label; } figs[] = {
		{ "source_pages", "source pages" },
		{ "target_pages", "target pages" },
		{ "links", "links published" },
		{ "random_links", "random links" },
		{ "fillers", "fillers typed random" },
		{ "k", "k asked (minimum incoming links)" },
		{ "k_used", "k held" },
		{ "min_in", "smallest in-degree" },
		{ "median_in", "median in-degree" },
		{ "max_in", "largest in-degree" },
		{ "lifted_links", "links lifted by the constraint" },
		{ "lifted_pages", "pages lifted to k" },
		{ "churn_links", "links new against last night" },
		{ "churn_pages", "pages whose links changed" },
		{ "certified", "optimum certified" },
	};
	const char *id = gets(e, "id"), *outcome = gets(e, "outcome");
	char prefix[200];
	const cJSON *s = get(e, "seconds"), *p = get(e, "published");
	size_t i;

	snprintf(prefix, sizeof(prefix), "endpoints.%s.", id);
	put(h, "<h3 id=\"ep-");
	esc(h, id);
	put(h, "\">");
	esc(h, id);
	put(h, " <small>(");
	esc(h, gets(e, "variant"));
	put(h, ")</small> <span data-key=\"");
	esc(h, prefix);
	put(h, "outcome\" class=\"");
	put(h, strcmp(outcome, "published") == 0 ? "ok" : "bad");
	put(h, "\">");
	esc(h, outcome);
	put(h, "</span></h3>\n");
	if (get(e, "message") != NULL) {
		put(h, "<p class=\"bad\">");
		esc(h, gets(e, "message"));
		put(h, "</p>\n");
	}
	put(h, "<table>");
	for (i = 0; i < sizeof(figs) / sizeof(figs[0]); i++)
		row(h, figs[i].label, prefix, e, figs[i].key);
	snprintf(prefix, sizeof(prefix), "endpoints.%s.seconds.", id);
	row(h, "relate, s", prefix, s, "relate");
	row(h, "assign, s", prefix, s, "assign");
	row(h, "publish, s", prefix, s, "publish");
	snprintf(prefix, sizeof(prefix), "endpoints.%s.published.", id);
	row(h, "objects", prefix, p, "objects");
	row(h, "uploaded", prefix, p, "uploaded");
	row(h, "deleted", prefix, p, "deleted");
	row(h, "unchanged", prefix, p, "unchanged");
	put(h, "</table>\n");
	degree_chart(h, get(e, "in_degree_before"), get(e, "in_degree_after"));
}

char *report_html(const char *json, struct lb_error *err)
{
	struct html h;
	cJSON *o = cJSON_Parse(json);
	const cJSON *it, *c, *hist;
	char *out = NULL;

	memset(&h, 0, sizeof(h));
	lb_buf_init(&h.b, HTML_MAX);
	h.err = err;
	if (o == NULL) {
		lb_error_set(err, LB_EPARSE, "report: not JSON");
		goto out;
	}
	put(&h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		"<meta name=\"robots\" content=\"noindex\"><title>linkbot: ");
	esc(&h, gets(o, "client"));
	put(&h, ", ");
	esc(&h, gets(o, "started"));
	put(&h, "</title><style>");
	put(&h, css);
	put(&h, "</style></head><body>\n<h1>linkbot run report: <span "
		"data-key=\"client\">");
	esc(&h, gets(o, "client"));
	put(&h, "</span></h1>\n<p>Started <span data-key=\"started\">");
	esc(&h, gets(o, "started"));
	put(&h, "</span>, finished <span data-key=\"finished\">");
	esc(&h, gets(o, "finished"));
	putf(&h, "</span>, <span data-key=\"seconds\">%.15g</span> s.</p>\n",
	     getn(o, "seconds"));

	put(&h, "<h2>Stages</h2><table>");
	cJSON_ArrayForEach(it, get(o, "stages")) {
		char label[64];
		snprintf(label, sizeof(label), "%s, s", it->string);
		row(&h, label, "stages.", get(o, "stages"), it->string);
	}
	put(&h, "</table>\n");

	if ((c = get(o, "crawl")) != NULL) {
		put(&h, "<h2>Crawl</h2><table>");
		row(&h, "URLs from the sources", "crawl.", c, "urls_seen");
		row(&h, "fetched", "crawl.", c, "fetched");
		row(&h, "indexed", "crawl.", c, "indexed");
		row(&h, "not modified", "crawl.", c, "not_modified");
		row(&h, "excluded", "crawl.", c, "excluded");
		row(&h, "failed (last version kept)", "crawl.", c, "failed");
		row(&h, "removed", "crawl.", c, "removed");
		put(&h, "</table>\n");
	}
	if (cJSON_GetArraySize(get(o, "reasons")) > 0) {
		put(&h, "<h3>Pages not indexed, by reason</h3><table><tr><th>"
			"outcome</th><th>reason</th><th>pages</th></tr>");
		cJSON_ArrayForEach(it, get(o, "reasons")) {
			put(&h, "<tr><td>");
			esc(&h, gets(it, "outcome"));
			put(&h, "</td><td>");
			esc(&h, gets(it, "reason"));
			putf(&h, "</td><td class=\"n\" data-reason=\"1\">%.15g</td>"
				 "</tr>", getn(it, "pages"));
		}
		put(&h, "</table>\n");
	}

	put(&h, "<h2>Endpoints</h2>\n");
	cJSON_ArrayForEach(it, get(o, "endpoints"))
		endpoint_html(&h, it);

	hist = get(o, "history");
	put(&h, "<h2>History</h2>\n");
	history_chart(&h, hist, "indexed", "pages indexed");
	history_chart(&h, hist, "seconds", "seconds per night");
	history_chart(&h, hist, "churn_links", "links changed");
	put(&h, "<table><tr><th>started</th><th>s</th><th>indexed</th><th>"
		"excluded</th><th>failed</th><th>links</th><th>random</th>"
		"<th>churn</th><th>endpoints not published</th></tr>");
	cJSON_ArrayForEach(it, hist) {
		put(&h, "<tr data-night=\"1\"><td>");
		esc(&h, gets(it, "started"));
		putf(&h, "</td><td class=\"n\">%.15g</td><td class=\"n\">%.15g</td>"
			 "<td class=\"n\">%.15g</td><td class=\"n\">%.15g</td>"
			 "<td class=\"n\">%.15g</td><td class=\"n\">%.15g</td>"
			 "<td class=\"n\">%.15g</td><td class=\"n\">%.15g</td></tr>",
		     getn(it, "seconds"), getn(it, "indexed"),
		     getn(it, "excluded"), getn(it, "failed"), getn(it, "links"),
		     getn(it, "random_links"), getn(it, "churn_links"),
		     getn(it, "endpoints_not_published"));
	}
	put(&h, "</table>\n");

	put(&h, "<h2>Pages not indexed</h2>");
	if (getn(o, "pages_not_listed") > 0)
		putf(&h, "<p>%.15g more not listed.</p>",
		     getn(o, "pages_not_listed"));
	put(&h, "<table><tr><th>URL</th><th>outcome</th><th>status</th>"
		"<th>reason</th></tr>");
	cJSON_ArrayForEach(it, get(o, "pages")) {
		put(&h, "<tr data-page=\"1\"><td>");
		esc(&h, gets(it, "url"));
		put(&h, "</td><td>");
		esc(&h, gets(it, "outcome"));
		putf(&h, "</td><td class=\"n\">%.15g</td><td>", getn(it, "status"));
		esc(&h, gets(it, "reason"));
		put(&h, "</td></tr>\n");
	}
	put(&h, "</table>\n</body></html>\n");
	if (!h.failed)
		out = lb_buf_take(&h.b);
out:
	lb_buf_release(&h.b);
	cJSON_Delete(o);
	return out;
}
