/*
 * extract_bench.c - pages per second of extract_html() against gumbo
 * alone on the same pages (bench/extract.sh).
 *
 *   extract_bench [-n max_pages] [-r rounds] FILE...
 *
 * Loads the pages into memory first (no I/O is timed), then alternates
 * rounds: every page parsed by gumbo alone (same options as extract/:
 * no error list), every page through extract_html() (charset check,
 * depth limiter, gumbo, both walks, JSON-LD, text), which side goes first
 * alternating. The best round of each is kept (least disturbed by the
 * other users of a shared machine); time is the process's CPU time, not
 * wall time, for the same reason.
 * Prints one line per side and the ratio extract / gumbo.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gumbo.h>

#include "linkbot/doc.h"
#include "linkbot/extract.h"

struct page {
	char *data;
	size_t len;
	char *url;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int load(const char *path, struct page *p)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		if (f)
			fclose(f);
		return -1;
	}
	p->data = malloc((size_t)n + 1);
	if (p->data == NULL || fread(p->data, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		return -1;
	}
	fclose(f);
	p->len = (size_t)n;
	p->url = malloc(strlen(path) + 32);
	sprintf(p->url, "https://bench.example/%s", path);
	return 0;
}

static double time_gumbo(const struct page *pages, size_t n)
{
	GumboOptions opts = kGumboDefaultOptions;
	double t = now();
	size_t i;

	opts.max_errors = 0;
	for (i = 0; i < n; i++) {
		GumboOutput *o = gumbo_parse_with_options(&opts, pages[i].data,
							  pages[i].len);
		gumbo_destroy_output(&opts, o);
	}
	return now() - t;
}

static double time_extract(const struct page *pages, size_t n, int *failed,
			   size_t *words)
{
	double t = now();
	size_t i;

	for (i = 0; i < n; i++) {
		struct lb_doc doc;
		struct lb_error err;

		lb_doc_init(&doc);
		lb_error_init(&err);
		if (extract_html(pages[i].data, pages[i].len, pages[i].url,
				 NULL, &doc, &err) < 0)
			(*failed)++;
		if (words != NULL && doc.text != NULL)
			*words += strlen(doc.text);
		lb_doc_release(&doc);
	}
	return now() - t;
}

int main(int argc, char **argv)
{
	struct page *pages;
	size_t n = 0, max = 1000, i, bytes = 0, words = 0;
	int rounds = 3, r, c, failed = 0;
	double best_g = 1e30, best_x = 1e30, t;

	while ((c = getopt(argc, argv, "n:r:")) != -1) {
		if (c == 'n')
			max = (size_t)atol(optarg);
		else if (c == 'r')
			rounds = atoi(optarg);
		else
			return 2;
	}
	if (optind >= argc || rounds < 1) {
		fprintf(stderr, "usage: extract_bench [-n pages] [-r rounds] FILE...\n");
		return 2;
	}
	pages = calloc((size_t)(argc - optind), sizeof(*pages));
	for (i = (size_t)optind; i < (size_t)argc && n < max; i++) {
		if (load(argv[i], &pages[n]) == 0) {
			bytes += pages[n].len;
			n++;
		}
	}
	if (n == 0) {
		fprintf(stderr, "extract_bench: no pages\n");
		return 1;
	}
	for (r = 0; r < 2 * rounds; r++) {
		/* alternate which side runs first in a round */
		if ((r & 1) == (r / 2 & 1)) {
			t = time_gumbo(pages, n);
			if (t < best_g)
				best_g = t;
		} else {
			t = time_extract(pages, n, &failed,
					 r < 2 ? &words : NULL);
			if (t < best_x)
				best_x = t;
		}
	}
	printf("corpus: %zu pages, %.1f MB, best of %d rounds\n", n,
	       (double)bytes / 1e6, rounds);
	printf("gumbo-only:   %8.1f pages/s  %6.1f MB/s\n", (double)n / best_g,
	       (double)bytes / 1e6 / best_g);
	printf("extract_html: %8.1f pages/s  %6.1f MB/s  (text out: %.1f MB)\n",
	       (double)n / best_x, (double)bytes / 1e6 / best_x,
	       (double)words / 1e6);
	printf("ratio extract/gumbo: %.2f\n", best_g / best_x);
	for (i = 0; i < n; i++) {
		free(pages[i].data);
		free(pages[i].url);
	}
	free(pages);
	return failed ? 1 : 0;
}
