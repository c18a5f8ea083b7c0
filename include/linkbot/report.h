/*
 * report.h - what one night did for one client, for the operator: a run
 * report written next to the client's state, as JSON (for machines) and as
 * one self-contained HTML page (for people: no network, inline SVG).
 *
 *   struct lb_report *r = report_new("demo", started);
 *   report_stage(r, "crawl", seconds);                 per stage, in order
 *   report_crawl(r, &counts);                          the crawl's totals
 *   report_page(r, url, "excluded", 404, "HTTP 404");  each page not indexed
 *   struct lb_report_endpoint *e = report_endpoint(r, "blog", "standard");
 *   e->source_pages = ...; report_in_degree(e, 0, in_before, n); ...
 *   report_write(r, "state/demo", finished, &err);
 *   report_free(r);
 *
 * report_write() reads the previous state/<client>/report.json for the
 * history (the last 30 nights, this one included), then writes report.json
 * and report.html atomically. The HTML is made from the JSON tree, so the
 * page shows exactly the numbers of report.json. The report owns every
 * string it is given (copies).
 */
#ifndef LINKBOT_REPORT_H
#define LINKBOT_REPORT_H

#include <stddef.h>
#include <time.h>
#include "linkbot/error.h"

#define LB_REPORT_HISTORY 30		/* nights kept in the history */
#define LB_REPORT_PAGES_MAX 20000	/* pages listed with their reason */
#define LB_REPORT_DEGREE_MAX 64		/* in-degree histogram: 0..63, 64+ */

struct lb_report;

/* The crawl's totals (struct lb_crawl_stats, without depending on crawl/). */
struct lb_report_crawl {
	long urls_seen, fetched, indexed, not_modified, excluded, failed,
	     removed;
};

struct lb_report_endpoint {
	char *id, *variant;
	char *outcome;		/* "published", "pending", "failed", "refused" */
	char *message;		/* why, when not published; NULL otherwise */
	long source_pages, target_pages;
	long links, random_links, fillers;	/* fillers: retyped random */
	long k, k_used, min_in, median_in, max_in;
	long lifted_links, lifted_pages;
	long churn_links, churn_pages;
	int has_prev;			/* churn is against a last night */
	int certified;
	double relate_seconds, assign_seconds, publish_seconds;
	long objects, uploaded, deleted, unchanged;
	long before[LB_REPORT_DEGREE_MAX + 1];	/* in-degree under top-L */
	long after[LB_REPORT_DEGREE_MAX + 1];	/* in-degree published */
	int has_degrees;
};

struct lb_report *report_new(const char *client, time_t started);
void report_free(struct lb_report *r);

void report_stage(struct lb_report *r, const char *stage, double seconds);
void report_crawl(struct lb_report *r, const struct lb_report_crawl *c);

/*
 * A page the crawl did not index: outcome "excluded", "failed" (kept from
 * the last night) or "removed"; reason as the crawl's log says it. Past
 * LB_REPORT_PAGES_MAX pages only the counts by reason grow.
 */
void report_page(struct lb_report *r, const char *url, const char *outcome,
		 int status, const char *reason);

/* The endpoint's record, made on first use; NULL when out of memory. */
struct lb_report_endpoint *report_endpoint(struct lb_report *r,
					   const char *id,
					   const char *variant);
void report_endpoint_outcome(struct lb_report_endpoint *e,
			     const char *outcome, const char *message);

/* Adds in-degrees (one per target page) to the histogram before/after. */
void report_in_degree(struct lb_report_endpoint *e, int after,
		      const size_t *in_degree, size_t n);

/* Writes dir/report.json and dir/report.html (see above). */
int report_write(struct lb_report *r, const char *dir, time_t finished,
		 struct lb_error *err);

/* The HTML page of a report.json text (report_write() uses it; tests). */
char *report_html(const char *json, struct lb_error *err);

#endif
