/*
 * project.c - publishing the Project variant (SPEC 2.5, 4.2): each module of
 * a project links the pages under its `from` path prefix to those under
 * `to` (built by src/pipeline/modules.c); a page's answer is the map of
 * every module that has links for it, published under _projects/<uuid>/
 * with the project descriptor (API key hashes only). See publish.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "linkbot/fsutil.h"
#include "linkbot/layout.h"
#include "linkbot/links.h"
#include "linkbot/log.h"
#include "linkbot/pageid.h"
#include "linkbot/publish.h"
#include "linkbot/render.h"

static const struct lb_object_meta page_meta = {
	"application/json", "gzip", "public, max-age=86400"
};
static const struct lb_object_meta plain_meta = {
	"application/json", NULL, "public, max-age=300"
};

/* One module's links, per page index: at most `links` each. */
struct module_links {
	const struct pages *pages;
	struct lb_render_link *links;	/* pages->n * max */
	size_t *count;			/* pages->n */
	size_t max;
	struct lb_error *err;
};

static int visit_module_links(const struct lb_doc *src,
			      const struct lb_render_link *links, size_t n,
			      void *arg)
{
	struct module_links *m = arg;
	long si = pages_find(m->pages, src->url);

	if (si < 0)
		return 0;
	if (n > m->max)
		n = m->max;
	memcpy(&m->links[(size_t)si * m->max], links, n * sizeof(*links));
	m->count[si] = n;
	return 0;
}

static int put_project_descriptor(struct lb_publish *pub,
				  struct lb_store *store,
				  const struct lb_project *pr, time_t now,
				  struct lb_error *err)
{
	cJSON *o = cJSON_CreateObject(), *keys, *mods;
	char when[32], folder[96], key[128], *json;
	struct tm tm;
	size_t i;
	int rc;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	keys = cJSON_AddArrayToObject(o, "key_sha256");
	for (i = 0; keys != NULL && i < pr->key_sha256.n; i++)
		cJSON_AddItemToArray(keys,
				     cJSON_CreateString(pr->key_sha256.v[i]));
	cJSON_AddStringToObject(o, "state", "active");
	mods = cJSON_AddArrayToObject(o, "modules");
	for (i = 0; mods != NULL && i < pr->n_modules; i++) {
		cJSON *m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "id", pr->modules[i].id);
		cJSON_AddStringToObject(m, "from", pr->modules[i].from);
		cJSON_AddStringToObject(m, "to", pr->modules[i].to);
		cJSON_AddItemToArray(mods, m);
	}
	cJSON_AddStringToObject(o, "updated", when);
	/* unchanged but for the time: the stored bytes, so nothing to upload */
	layout_project_folder(folder, sizeof(folder), pr->uuid);
	layout_key(key, sizeof(key), folder, LAYOUT_PROJECT);
	publish_keep_updated(store, key, o);
	json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (json == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	rc = publish_add(pub, LAYOUT_PROJECT, json, strlen(json), &plain_meta,
			 err);
	free(json);
	return rc;
}

/* Renders, gzips and adds each page's module map (SPEC 2.5). */
static int add_maps(struct lb_publish *pub, const struct lb_project *pr,
		    const struct pages *pages, const struct module_links *ml,
		    struct lb_error *err)
{
	struct lb_render_module *mods;
	struct lb_gzip *gzs = lb_gzip_new();
	size_t i, j;
	int rc = -1;

	mods = calloc(pr->n_modules, sizeof(*mods));
	if (mods == NULL || gzs == NULL) {
		free(mods);
		lb_gzip_free(gzs);
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	}
	for (i = 0; i < pages->n; i++) {
		const struct lb_doc *self = &pages->rec[i].doc;
		char id[LB_PAGEID_LEN + 1], key[64], *json, *gz = NULL;
		size_t n = 0, gzlen = 0;
		struct lb_error perr;
		int r;

		for (j = 0; j < pr->n_modules; j++) {
			if (ml[j].count[i] == 0)
				continue;
			mods[n].module = &pr->modules[j];
			mods[n].links = &ml[j].links[i * ml[j].max];
			mods[n].n = ml[j].count[i];
			n++;
		}
		if (n == 0)
			continue;
		lb_error_init(&perr);
		if (pageid_of_url(self->url, NULL, id, &perr) < 0) {
			log_warnx("skipping '%s': %s", self->url, perr.msg);
			continue;
		}
		if ((json = render_module_map(self, mods, n, err)) == NULL)
			goto out;
		r = lb_gzip_run(gzs, json, strlen(json), &gz, &gzlen, err);
		free(json);
		if (r < 0)
			goto out;
		layout_page_key(key, sizeof(key), "", id);
		r = publish_add(pub, key, gz, gzlen, &page_meta, err);
		free(gz);
		if (r < 0)
			goto out;
	}
	rc = 0;
out:
	free(mods);
	lb_gzip_free(gzs);
	return rc;
}

int publish_project_answers(const struct lb_publish_job *job,
			    struct lb_error *err)
{
	const struct lb_project *pr = job->pr;
	const struct pages *pages = job->pages;
	struct lb_publish *pub = NULL;
	struct lb_publish_stats ps;
	struct module_links *ml;
	char folder[128];
	size_t i, np = pages->n ? pages->n : 1;
	int rc = -1;

	ml = calloc(pr->n_modules, sizeof(*ml));
	layout_project_folder(folder, sizeof(folder), pr->uuid);
	if (ml == NULL || (pub = publish_new(folder)) == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < pr->n_modules; i++) {
		char rel[300], *path;
		int r;

		ml[i].pages = pages;
		ml[i].max = (size_t)pr->modules[i].links;
		ml[i].err = err;
		ml[i].links = calloc(np * ml[i].max, sizeof(*ml[i].links));
		ml[i].count = calloc(np, sizeof(*ml[i].count));
		if (ml[i].links == NULL || ml[i].count == NULL ||
		    layout_module_links_path(rel, sizeof(rel), pr->client->id,
					     pr->uuid, pr->modules[i].id) < 0 ||
		    (path = lb_path_join(job->state_dir, rel)) == NULL) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		r = links_read(path, pages, ml[i].max, visit_module_links,
			       &ml[i], err);
		free(path);
		if (r < 0)
			goto out;
	}
	if (add_maps(pub, pr, pages, ml, err) < 0 ||
	    put_project_descriptor(pub, job->store, pr, job->now, err) < 0)
		goto out;
	memset(&ps, 0, sizeof(ps));
	if (publish_commit(pub, job->store, job->dry_run, &ps, err) < 0)
		goto out;
	log_info("%s: %ld objects, %s%ld uploaded, %ld deleted, %ld unchanged",
		 folder, ps.objects, job->dry_run ? "dry run: would have " : "",
		 ps.uploaded, ps.deleted, ps.unchanged);
	rc = 0;
out:
	for (i = 0; ml != NULL && i < pr->n_modules; i++) {
		free(ml[i].links);
		free(ml[i].count);
	}
	free(ml);
	publish_free(pub);
	return rc;
}
