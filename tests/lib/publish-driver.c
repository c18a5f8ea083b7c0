/*
 * publish-driver - publishes a synthetic endpoint through the real render,
 * gzip, publish and store code, for the integration tests and the
 * benchmark (built by tests/lib/publish-driver.sh against $BUILD's objects).
 *
 *   publish-driver --store LOC [--folder c/e] [--count N] [--gen G]
 *                  [--change-every K] [--drop-every K] [--dry-run]
 *                  [--s3-endpoint URL] [--region R] [--virtual-host]
 *
 * Page i links to the 8 pages after it. Its description mentions G when
 * i % K == 0 (--change-every K), so raising G changes the answers that
 * link to those N/K pages (about 8 N/K); pages
 * with i % D == 0 are left out (--drop-every D), so they get deleted.
 * Prints one line: objects=.. uploaded=.. deleted=.. unchanged=.. bytes=..
 * seconds=.. commit_seconds=.. (the store part) and exits 0, or prints the error and exits 1.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linkbot/config.h"
#include "linkbot/log.h"
#include "linkbot/pageid.h"
#include "linkbot/publish.h"
#include "linkbot/render.h"
#include "linkbot/store.h"

#define LINKS 8

static const struct lb_object_meta page_meta = {
	"application/json", "gzip", "public, max-age=86400"
};

static void make_doc(struct lb_doc *d, long i, long gen, long change_every)
{
	char buf[512];

	lb_doc_init(d);
	snprintf(buf, sizeof(buf), "https://www.example.com/blog/post-%06ld", i);
	d->url = strdup(buf);
	snprintf(buf, sizeof(buf), "/blog/post-%06ld", i);
	d->url_path = strdup(buf);
	snprintf(buf, sizeof(buf), "Post number %ld: a title of ordinary length", i);
	d->title = strdup(buf);
	snprintf(buf, sizeof(buf), "A description of post %ld, revision %ld, "
		 "about as long as a meta description usually is on a blog.",
		 i, change_every > 0 && i % change_every == 0 ? gen : 0);
	d->description = strdup(buf);
	snprintf(buf, sizeof(buf), "https://www.example.com/img/%ld.jpg", i);
	d->image_url = strdup(buf);
	d->language = strdup("en");
	d->published_time = strdup("2026-01-02T03:04:05Z");
	lb_strlist_add(&d->author, "Ann Author", NULL);
	lb_strlist_add(&d->category, "News", NULL);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "store", required_argument, NULL, 's' },
		{ "folder", required_argument, NULL, 'f' },
		{ "count", required_argument, NULL, 'n' },
		{ "gen", required_argument, NULL, 'g' },
		{ "change-every", required_argument, NULL, 'c' },
		{ "drop-every", required_argument, NULL, 'd' },
		{ "dry-run", no_argument, NULL, 'D' },
		{ "s3-endpoint", required_argument, NULL, 'e' },
		{ "region", required_argument, NULL, 'r' },
		{ "virtual-host", no_argument, NULL, 'V' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct lb_config cfg;
	struct lb_endpoint ep;
	struct lb_store *st = NULL;
	struct lb_publish *pub = NULL;
	struct lb_publish_stats ps;
	struct lb_error err;
	struct lb_doc *docs = NULL;
	struct timespec t0, tm, t1;
	const char *store = NULL, *folder = "demo/blog";
	long n = 1000, gen = 1, change_every = 0, drop_every = 0, i;
	int c, dry_run = 0, verbosity = 0, rc = 1;

	memset(&cfg, 0, sizeof(cfg));
	memset(&ep, 0, sizeof(ep));
	cfg.s3.region = "us-east-1";
	cfg.s3.path_style = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': store = optarg; break;
		case 'f': folder = optarg; break;
		case 'n': n = atol(optarg); break;
		case 'g': gen = atol(optarg); break;
		case 'c': change_every = atol(optarg); break;
		case 'd': drop_every = atol(optarg); break;
		case 'D': dry_run = 1; break;
		case 'e': cfg.s3.endpoint = optarg; break;
		case 'r': cfg.s3.region = optarg; break;
		case 'V': cfg.s3.path_style = 0; break;
		case 'v': verbosity = 2; break;
		default:
			fprintf(stderr, "usage: see the comment at the top of %s\n",
				__FILE__);
			return 2;
		}
	}
	if (store == NULL || n <= LINKS) {
		fprintf(stderr, "publish-driver: --store and --count > %d needed\n",
			LINKS);
		return 2;
	}
	log_init(verbosity);
	log_stage("publish");
	ep.id = "blog";
	ep.variant = LB_VARIANT_STANDARD;
	ep.links = LINKS;
	lb_error_init(&err);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((docs = calloc((size_t)n, sizeof(*docs))) == NULL ||
	    (pub = publish_new(folder)) == NULL) {
		fprintf(stderr, "publish-driver: out of memory\n");
		goto out;
	}
	for (i = 0; i < n; i++)
		make_doc(&docs[i], i, gen, change_every);
	for (i = 0; i < n; i++) {
		struct lb_render_link links[LINKS];
		char id[LB_PAGEID_LEN + 1], key[64], *json, *gz = NULL;
		size_t gzlen = 0;
		int k;

		if (drop_every > 0 && i % drop_every == 0)
			continue;
		for (k = 0; k < LINKS; k++) {
			links[k].doc = &docs[(i + 1 + k) % n];
			links[k].type = k < LINKS - 2 ? LB_LINK_RELATED : LB_LINK_RANDOM;
		}
		if (pageid_of_url(docs[i].url, NULL, id, &err) < 0 ||
		    (json = render_answer(&ep, &docs[i], links, LINKS, &err)) == NULL)
			goto fail;
		snprintf(key, sizeof(key), "pages/%s.json", id);
		if (lb_gzip(json, strlen(json), &gz, &gzlen, &err) < 0 ||
		    publish_add(pub, key, gz, gzlen, &page_meta, &err) < 0) {
			free(json);
			free(gz);
			goto fail;
		}
		free(json);
		free(gz);
	}
	clock_gettime(CLOCK_MONOTONIC, &tm);
	if (store_open(&cfg, store, &st, &err) < 0 ||
	    publish_commit(pub, st, dry_run, &ps, &err) < 0)
		goto fail;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("objects=%ld uploaded=%ld deleted=%ld unchanged=%ld bytes=%lld "
	       "seconds=%.3f commit_seconds=%.3f\n", ps.objects, ps.uploaded,
	       ps.deleted, ps.unchanged, ps.bytes_uploaded,
	       (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	       (double)(t1.tv_sec - tm.tv_sec) +
		       (double)(t1.tv_nsec - tm.tv_nsec) / 1e9);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "publish-driver: %s\n", err.msg);
out:
	store_free(st);
	publish_free(pub);
	for (i = 0; docs != NULL && i < n; i++)
		lb_doc_release(&docs[i]);
	free(docs);
	return rc;
}
