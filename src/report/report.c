/*
 * report.c - the run report of one client's night (see report.h).
 *
 * Design notes. The pipeline fills a struct as the stages run; report_write()
 * turns it into one cJSON tree, adds the history read back from the last
 * report.json, and writes the tree twice: as JSON, and as an HTML page made
 * by walking that same tree (report_html()), so the page cannot disagree
 * with the file. The page is self-contained (inline CSS and SVG, no script,
 * no network) so that it opens from a CI artifact or a mail attachment.
 * Every list has a cap: pages listed (LB_REPORT_PAGES_MAX, then only the
 * counts by reason grow), reasons (REASONS_MAX), endpoints (by the config).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "linkbot/buf.h"
#include "linkbot/fsutil.h"
#include "linkbot/report.h"

#define STAGES_MAX 8
#define REASONS_MAX 64
#define REPORT_JSON_MAX (64u << 20)

struct page {
	char *url, *outcome, *reason;
	int status;
};

struct reason {
	char *outcome, *reason;
	long count;
};

struct lb_report {
	char *client;
	time_t started;
	struct { char name[16]; double seconds; } stage[STAGES_MAX];
	size_t n_stages;
	struct lb_report_crawl crawl;
	int has_crawl;
	struct page *pages;
	size_t n_pages, pages_alloc;
	long pages_dropped;
	struct reason reasons[REASONS_MAX];
	size_t n_reasons;
	struct lb_report_endpoint **ep;
	size_t n_ep;
};

struct lb_report *report_new(const char *client, time_t started)
{
	struct lb_report *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	if ((r->client = strdup(client)) == NULL) {
		free(r);
		return NULL;
	}
	r->started = started;
	return r;
}

void report_free(struct lb_report *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n_pages; i++) {
		free(r->pages[i].url);
		free(r->pages[i].outcome);
		free(r->pages[i].reason);
	}
	free(r->pages);
	for (i = 0; i < r->n_reasons; i++) {
		free(r->reasons[i].outcome);
		free(r->reasons[i].reason);
	}
	for (i = 0; i < r->n_ep; i++) {
		free(r->ep[i]->id);
		free(r->ep[i]->variant);
		free(r->ep[i]->outcome);
		free(r->ep[i]->message);
		free(r->ep[i]);
	}
	free(r->ep);
	free(r->client);
	free(r);
}

void report_stage(struct lb_report *r, const char *stage, double seconds)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n_stages; i++)
		if (strcmp(r->stage[i].name, stage) == 0) {
			r->stage[i].seconds += seconds;
			return;
		}
	if (r->n_stages == STAGES_MAX)
		return;
	snprintf(r->stage[r->n_stages].name, sizeof(r->stage[0].name), "%s",
		 stage);
	r->stage[r->n_stages++].seconds = seconds;
}

void report_crawl(struct lb_report *r, const struct lb_report_crawl *c)
{
	if (r == NULL)
		return;
	r->crawl = *c;
	r->has_crawl = 1;
}

/*
 * The kind of a reason, for the counts: its words up to the first URL,
 * quote or colon ("HTTP 404", "noindex", "redirected out of the set"),
 * so that reasons that name a page fall in one group.
 */
static void reason_kind(const char *why, char *out, size_t size)
{
	size_t n = 0;
	const char *p;

	for (p = why; *p != '\0' && n + 1 < size; p++) {
		if (*p == ':' || *p == '\'' || *p == '"' || *p == '(' ||
		    strncmp(p, "http://", 7) == 0 ||
		    strncmp(p, "https://", 8) == 0)
			break;
		out[n++] = *p;
	}
	while (n > 0 && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
	if (n == 0)
		snprintf(out, size, "%s", "other");
}

static void count_reason(struct lb_report *r, const char *outcome,
			 const char *why)
{
	char kind[80];
	size_t i;

	reason_kind(why, kind, sizeof(kind));
	for (i = 0; i < r->n_reasons; i++)
		if (strcmp(r->reasons[i].outcome, outcome) == 0 &&
		    strcmp(r->reasons[i].reason, kind) == 0) {
			r->reasons[i].count++;
			return;
		}
	if (r->n_reasons == REASONS_MAX) {
		/* the last slot gathers the rest */
		r->reasons[REASONS_MAX - 1].count++;
		return;
	}
	r->reasons[r->n_reasons].outcome = strdup(outcome);
	r->reasons[r->n_reasons].reason = strdup(kind);
	if (r->reasons[r->n_reasons].outcome == NULL ||
	    r->reasons[r->n_reasons].reason == NULL) {
		free(r->reasons[r->n_reasons].outcome);
		free(r->reasons[r->n_reasons].reason);
		return;
	}
	r->reasons[r->n_reasons++].count = 1;
}

void report_page(struct lb_report *r, const char *url, const char *outcome,
		 int status, const char *reason)
{
	struct page *p;

	if (r == NULL)
		return;
	if (reason == NULL)
		reason = "";
	count_reason(r, outcome, reason);
	if (r->n_pages == LB_REPORT_PAGES_MAX) {
		r->pages_dropped++;
		return;
	}
	if (r->n_pages == r->pages_alloc) {
		size_t n = r->pages_alloc ? r->pages_alloc * 2 : 64;
		struct page *np = realloc(r->pages, n * sizeof(*np));
		if (np == NULL) {
			r->pages_dropped++;
			return;
		}
		r->pages = np;
		r->pages_alloc = n;
	}
	p = &r->pages[r->n_pages];
	p->url = strdup(url);
	p->outcome = strdup(outcome);
	p->reason = strdup(reason);
	p->status = status;
	if (p->url == NULL || p->outcome == NULL || p->reason == NULL) {
		free(p->url);
		free(p->outcome);
		free(p->reason);
		r->pages_dropped++;
		return;
	}
	r->n_pages++;
}

struct lb_report_endpoint *report_endpoint(struct lb_report *r,
					   const char *id,
					   const char *variant)
{
	struct lb_report_endpoint **v, *e;
	size_t i;

	if (r == NULL)
		return NULL;
	for (i = 0; i < r->n_ep; i++)
		if (strcmp(r->ep[i]->id, id) == 0)
			return r->ep[i];
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return NULL;
	v = realloc(r->ep, (r->n_ep + 1) * sizeof(*v));
	e->id = strdup(id);
	e->variant = strdup(variant ? variant : "");
	if (v == NULL || e->id == NULL || e->variant == NULL) {
		if (v != NULL)
			r->ep = v;
		free(e->id);
		free(e->variant);
		free(e);
		return NULL;
	}
	r->ep = v;
	r->ep[r->n_ep++] = e;
	return e;
}

void report_endpoint_outcome(struct lb_report_endpoint *e,
			     const char *outcome, const char *message)
{
	if (e == NULL)
		return;
	free(e->outcome);
	free(e->message);
	e->outcome = strdup(outcome);
	e->message = message ? strdup(message) : NULL;
}

void report_in_degree(struct lb_report_endpoint *e, int after,
		      const size_t *in_degree, size_t n)
{
	long *h;
	size_t i;

	if (e == NULL)
		return;
	h = after ? e->after : e->before;
	for (i = 0; i < n; i++)
		h[in_degree[i] > LB_REPORT_DEGREE_MAX ? LB_REPORT_DEGREE_MAX :
							in_degree[i]]++;
	e->has_degrees = 1;
}

/* ---- JSON ---------------------------------------------------------------- */

static void iso_time(time_t t, char *buf, size_t size)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A number rounded to 3 decimals, so the file is stable and readable. */
static cJSON *num(cJSON *o, const char *key, double x)
{
	return cJSON_AddNumberToObject(o, key, round(x * 1000.0) / 1000.0);
}

static cJSON *histogram(const long *h)
{
	cJSON *a = cJSON_CreateArray();
	int d;

	for (d = 0; a != NULL && d <= LB_REPORT_DEGREE_MAX; d++) {
		cJSON *pair;
		if (h[d] == 0)
			continue;
		pair = cJSON_CreateArray();
		cJSON_AddItemToArray(pair, cJSON_CreateNumber(d));
		cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)h[d]));
		cJSON_AddItemToArray(a, pair);
	}
	return a;
}

static cJSON *endpoint_json(const struct lb_report_endpoint *e)
{
	cJSON *o = cJSON_CreateObject(), *s, *p;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "id", e->id);
	cJSON_AddStringToObject(o, "variant", e->variant);
	cJSON_AddStringToObject(o, "outcome", e->outcome ? e->outcome : "skipped");
	if (e->message != NULL)
		cJSON_AddStringToObject(o, "message", e->message);
	num(o, "source_pages", (double)e->source_pages);
	num(o, "target_pages", (double)e->target_pages);
	num(o, "links", (double)e->links);
	num(o, "random_links", (double)e->random_links);
	num(o, "fillers", (double)e->fillers);
	num(o, "k", (double)e->k);
	num(o, "k_used", (double)e->k_used);
	num(o, "min_in", (double)e->min_in);
	num(o, "median_in", (double)e->median_in);
	num(o, "max_in", (double)e->max_in);
	num(o, "lifted_links", (double)e->lifted_links);
	num(o, "lifted_pages", (double)e->lifted_pages);
	if (e->has_prev) {
		num(o, "churn_links", (double)e->churn_links);
		num(o, "churn_pages", (double)e->churn_pages);
	} else {
		cJSON_AddNullToObject(o, "churn_links");
		cJSON_AddNullToObject(o, "churn_pages");
	}
	cJSON_AddBoolToObject(o, "certified", e->certified);
	if (e->has_degrees) {
		cJSON_AddItemToObject(o, "in_degree_before", histogram(e->before));
		cJSON_AddItemToObject(o, "in_degree_after", histogram(e->after));
	}
	s = cJSON_AddObjectToObject(o, "seconds");
	if (s != NULL) {
		num(s, "relate", e->relate_seconds);
		num(s, "assign", e->assign_seconds);
		num(s, "publish", e->publish_seconds);
	}
	p = cJSON_AddObjectToObject(o, "published");
	if (p != NULL) {
		num(p, "objects", (double)e->objects);
		num(p, "uploaded", (double)e->uploaded);
		num(p, "deleted", (double)e->deleted);
		num(p, "unchanged", (double)e->unchanged);
	}
	return o;
}

static double total(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

/* One line of the history: this night in a few numbers. */
static cJSON *night_summary(const cJSON *rep)
{
	const cJSON *crawl = cJSON_GetObjectItemCaseSensitive(rep, "crawl");
	const cJSON *eps = cJSON_GetObjectItemCaseSensitive(rep, "endpoints");
	const cJSON *e;
	cJSON *o = cJSON_CreateObject();
	double links = 0, randoms = 0, churn = 0, failed = 0;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "started",
		cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rep, "started")));
	num(o, "seconds", total(rep, "seconds"));
	num(o, "indexed", total(crawl, "indexed"));
	num(o, "excluded", total(crawl, "excluded"));
	num(o, "failed", total(crawl, "failed"));
	num(o, "removed", total(crawl, "removed"));
	cJSON_ArrayForEach(e, eps) {
		const char *out = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(e, "outcome"));
		links += total(e, "links");
		randoms += total(e, "random_links");
		churn += total(e, "churn_links");
		failed += out != NULL && strcmp(out, "published") != 0 &&
			  strcmp(out, "skipped") != 0;
	}
	num(o, "links", links);
	num(o, "random_links", randoms);
	num(o, "churn_links", churn);
	num(o, "endpoints_not_published", failed);
	return o;
}

/* The last nights from the previous report.json, this one last. */
static cJSON *history(const char *path, const cJSON *rep)
{
	cJSON *h = cJSON_CreateArray(), *old = NULL;
	const cJSON *prev, *it;
	struct lb_error ignore;
	char *text = NULL;
	size_t len = 0;
	int n, skip;

	lb_error_init(&ignore);
	if (h == NULL)
		return NULL;
	if (lb_file_read(path, REPORT_JSON_MAX, &text, &len, &ignore) == 0)
		old = cJSON_ParseWithLength(text, len);
	prev = cJSON_GetObjectItemCaseSensitive(old, "history");
	n = cJSON_GetArraySize(prev);
	skip = n - (LB_REPORT_HISTORY - 1);
	cJSON_ArrayForEach(it, prev) {
		if (skip-- > 0 || !cJSON_IsObject(it))
			continue;
		cJSON_AddItemToArray(h, cJSON_Duplicate(it, 1));
	}
	cJSON_AddItemToArray(h, night_summary(rep));
	cJSON_Delete(old);
	free(text);
	return h;
}

static cJSON *report_json(const struct lb_report *r, time_t finished)
{
	cJSON *o = cJSON_CreateObject(), *st, *c, *reasons, *pages, *eps;
	char when[32];
	size_t i;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "client", r->client);
	iso_time(r->started, when, sizeof(when));
	cJSON_AddStringToObject(o, "started", when);
	iso_time(finished, when, sizeof(when));
	cJSON_AddStringToObject(o, "finished", when);
	num(o, "seconds", difftime(finished, r->started));
	st = cJSON_AddObjectToObject(o, "stages");
	for (i = 0; st != NULL && i < r->n_stages; i++)
		num(st, r->stage[i].name, r->stage[i].seconds);
	if (r->has_crawl && (c = cJSON_AddObjectToObject(o, "crawl")) != NULL) {
		num(c, "urls_seen", (double)r->crawl.urls_seen);
		num(c, "fetched", (double)r->crawl.fetched);
		num(c, "indexed", (double)r->crawl.indexed);
		num(c, "not_modified", (double)r->crawl.not_modified);
		num(c, "excluded", (double)r->crawl.excluded);
		num(c, "failed", (double)r->crawl.failed);
		num(c, "removed", (double)r->crawl.removed);
	}
	reasons = cJSON_AddArrayToObject(o, "reasons");
	for (i = 0; reasons != NULL && i < r->n_reasons; i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "outcome", r->reasons[i].outcome);
		cJSON_AddStringToObject(x, "reason", r->reasons[i].reason);
		num(x, "pages", (double)r->reasons[i].count);
		cJSON_AddItemToArray(reasons, x);
	}
	pages = cJSON_AddArrayToObject(o, "pages");
	for (i = 0; pages != NULL && i < r->n_pages; i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "url", r->pages[i].url);
		cJSON_AddStringToObject(x, "outcome", r->pages[i].outcome);
		num(x, "status", r->pages[i].status);
		cJSON_AddStringToObject(x, "reason", r->pages[i].reason);
		cJSON_AddItemToArray(pages, x);
	}
	num(o, "pages_not_listed", (double)r->pages_dropped);
	eps = cJSON_AddArrayToObject(o, "endpoints");
	for (i = 0; eps != NULL && i < r->n_ep; i++)
		cJSON_AddItemToArray(eps, endpoint_json(r->ep[i]));
	return o;
}

int report_write(struct lb_report *r, const char *dir, time_t finished,
		 struct lb_error *err)
{
	char *json_path = lb_path_join(dir, "report.json");
	char *html_path = lb_path_join(dir, "report.html");
	char *json = NULL, *html = NULL;
	cJSON *o = NULL, *h;
	int rc = -1;

	if (json_path == NULL || html_path == NULL ||
	    (o = report_json(r, finished)) == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	if ((h = history(json_path, o)) == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	cJSON_AddItemToObject(o, "history", h);
	if ((json = cJSON_Print(o)) == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	if ((html = report_html(json, err)) == NULL)
		goto out;
	if (lb_file_write_atomic(json_path, json, strlen(json), err) < 0 ||
	    lb_file_write_atomic(html_path, html, strlen(html), err) < 0)
		goto out;
	rc = 0;
out:
	free(json_path);
	free(html_path);
	free(json);
	free(html);
	cJSON_Delete(o);
	return rc;
}
