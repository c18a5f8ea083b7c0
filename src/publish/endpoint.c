/*
 * endpoint.c - stages 5 and 6 for one endpoint: render each source page's
 * answer from links.tsv and the corpus, the random pool and the descriptor,
 * and hand them to the store (docs/store.md). See publish.h.
 */
#include <stdint.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "linkbot/buf.h"
#include "linkbot/fsutil.h"
#include "linkbot/layout.h"
#include "linkbot/links.h"
#include "linkbot/log.h"
#include "linkbot/pageid.h"
#include "linkbot/publish.h"
#include "linkbot/render.h"

#define RANDOM_POOL_MAX 1000
/* The link objects kept for an endpoint's answers: ~100,000 targets. */
#define RENDER_CACHE_MAX ((size_t)64 << 20)

static const struct lb_object_meta page_meta = {
	"application/json", "gzip", "public, max-age=86400"
};
static const struct lb_object_meta plain_meta = {
	"application/json", NULL, "public, max-age=300"
};

/* A set of page IDs, to keep the first page of two that share an ID. */
struct idset {
	char (*slot)[LB_PAGEID_LEN + 1];
	size_t cap;
};

static int idset_add(struct idset *s, const char *id)
{
	uint64_t x = 0;
	size_t h, i;

	/* The ID is already a hash: its first 16 hex digits index the table. */
	for (i = 0; i < 16; i++)
		x = x * 16 + (uint64_t)(id[i] <= '9' ? id[i] - '0' : id[i] - 'a' + 10);
	h = (size_t)(x % s->cap);
	while (s->slot[h][0] != '\0') {
		if (strcmp(s->slot[h], id) == 0)
			return 0;
		h = (h + 1) % s->cap;
	}
	memcpy(s->slot[h], id, LB_PAGEID_LEN + 1);
	return 1;
}

static void ep_qrule(const struct lb_endpoint *ep, struct lb_qrule *rule)
{
	rule->keep_all = ep->query_keep_all;
	rule->names = (const char *const *)ep->query_params.v;
	rule->n_names = ep->query_params.n;
}

/* What the answers of one endpoint's publish share. */
struct answers {
	struct lb_publish *pub;
	const struct lb_endpoint *ep;
	struct idset ids;
	struct lb_render_cache *cache;	/* the targets' link objects */
	struct lb_gzip *gz;		/* one deflate state for all */
	size_t n;		/* source pages seen */
	struct lb_error *err;
};

static int add_answer(struct answers *a, const struct lb_doc *src,
		      const struct lb_render_link *links, size_t n,
		      struct lb_error *err)
{
	const struct lb_endpoint *ep = a->ep;
	struct lb_qrule rule;
	struct lb_error perr;
	char id[LB_PAGEID_LEN + 1], key[64];
	char *json = NULL, *gz = NULL;
	size_t gzlen = 0;
	int rc = -1;

	ep_qrule(ep, &rule);
	lb_error_init(&perr);
	if (pageid_of_url(src->url, &rule, id, &perr) < 0) {
		log_warnx("skipping '%s': %s", src->url, perr.msg);
		return 0;
	}
	if (!idset_add(&a->ids, id)) {
		log_warnx("skipping '%s': another page of this endpoint has the "
			  "same path (page ID %s)", src->url, id);
		return 0;
	}
	if ((json = render_answer_cached(a->cache, src, links, n, err)) ==
	    NULL)
		goto out;
	if (lb_gzip_run(a->gz, json, strlen(json), &gz, &gzlen, err) < 0)
		goto out;
	layout_page_key(key, sizeof(key), "", id);
	rc = publish_add_owned(a->pub, key, gz, gzlen, &page_meta, err);
	gz = NULL;	/* the publish's now, or freed */
out:
	free(json);
	free(gz);
	return rc;
}

static int visit_answer(const struct lb_doc *src,
			const struct lb_render_link *links, size_t n, void *arg)
{
	struct answers *a = arg;

	a->n++;
	return add_answer(a, src, links, n, a->err);
}

/* random.json: a uniform sample of the target set, typed random. */
static int add_random_pool(struct answers *a, const struct pages *pages,
			   uint64_t seed, struct lb_error *err)
{
	const struct lb_endpoint *ep = a->ep;
	struct page_filter target = { ep->target->name, NULL };
	struct page_list tgt;
	struct lb_buf b;
	size_t i, k;
	int rc = -1;

	lb_buf_init(&b, (size_t)64 << 20);
	if (pages_select(pages, &target, &tgt, err) < 0)
		return -1;
	k = tgt.n < RANDOM_POOL_MAX ? tgt.n : RANDOM_POOL_MAX;
	/* Partial Fisher-Yates: the first k of a seeded shuffle. */
	for (i = 0; i < k; i++) {
		size_t j = i + (size_t)(pages_rand(&seed) % (tgt.n - i));
		const struct lb_doc *t = tgt.docs[i];
		tgt.docs[i] = tgt.docs[j];
		tgt.docs[j] = t;
	}
	if (lb_buf_adds(&b, "{\"links\":[", err) < 0)
		goto out;
	for (i = 0; i < k; i++) {
		char *lj = render_link_json_cached(a->cache, tgt.docs[i],
						   LB_LINK_RANDOM, err);
		if (lj == NULL)
			goto out;
		if ((i > 0 && lb_buf_addc(&b, ',', err) < 0) ||
		    lb_buf_adds(&b, lj, err) < 0) {
			free(lj);
			goto out;
		}
		free(lj);
	}
	if (lb_buf_adds(&b, "]}", err) < 0)
		goto out;
	rc = publish_add_owned(a->pub, LAYOUT_POOL, b.data, b.len, &plain_meta,
			       err);
	lb_buf_init(&b, b.cap);	/* the publish's now, or freed */
out:
	page_list_release(&tgt);
	lb_buf_release(&b);
	return rc;
}

/*
 * The state markers of a directory store (docs/store.md): the link
 * <client>/<endpoint>/active-<variant> -> pages exists only while the
 * descriptor says "active" with that variant, and the edge's hot path serves
 * pages through it without reading the descriptor. So every marker that the
 * new descriptor will not vouch for is removed (and synced) before it is
 * written, and the new one is made after: at any moment, and after a crash
 * at any point, a marker means what it says. No marker only means the edge
 * reads the descriptor.
 */
static int put_markers(struct lb_store *st, const struct lb_client *cl,
		       const struct lb_endpoint *ep, enum lb_ep_state state,
		       int after, struct lb_error *err)
{
	static const enum lb_variant variants[] = {
		LB_VARIANT_STANDARD, LB_VARIANT_ENTERPRISE
	};
	char key[160];
	size_t i;

	for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		int keep = state == LB_EP_ACTIVE && ep->variant == variants[i];

		if (keep != after)
			continue;
		layout_marker_key(key, sizeof(key), cl->id, ep->id,
				  config_variant_name(variants[i]));
		if (store_link(st, key, keep ? LAYOUT_MARKER_TARGET : NULL,
			       err) < 0)
			return -1;
	}
	return after ? 0 : store_flush(st, err);
}

/*
 * "hosts": the hosts of the client's sources, lower case, without port:
 * the edge logs a page that is not indexed for the side crawl only when
 * the request names one of them (or no host), as the crawler takes only
 * those (docs/crawl.md).
 */
static void add_hosts(cJSON *o, const struct lb_client *cl)
{
	cJSON *a = cJSON_AddArrayToObject(o, "hosts");
	char h[256];
	size_t i, k, n;

	for (i = 0; a != NULL && i < cl->n_sources; i++) {
		const char *u = strstr(cl->sources[i].url, "://"), *e;
		cJSON *x;
		int dup = 0;

		if (u == NULL)
			continue;
		u += 3;
		if (*u == '[')
			e = u + strcspn(u, "]/?#") + (u[strcspn(u, "]/?#")] == ']');
		else
			e = u + strcspn(u, ":/?#");
		n = (size_t)(e - u);
		if (n == 0 || n >= sizeof(h))
			continue;
		for (k = 0; k < n; k++)
			h[k] = (char)tolower((unsigned char)u[k]);
		h[n] = '\0';
		cJSON_ArrayForEach(x, a)
			if (cJSON_IsString(x) && strcmp(x->valuestring, h) == 0)
				dup = 1;
		if (!dup)
			cJSON_AddItemToArray(a, cJSON_CreateString(h));
	}
}

static int put_descriptor(struct lb_store *st, const struct lb_client *cl,
			  const struct lb_endpoint *ep, enum lb_ep_state state,
			  time_t now, int dry_run, struct lb_error *err)
{
	cJSON *o = cJSON_CreateObject(), *q;
	char folder[160], key[180], when[32], *json = NULL;
	struct tm tm;
	size_t i;
	int rc = -1, same;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (o == NULL)
		goto nomem;
	cJSON_AddStringToObject(o, "variant", config_variant_name(ep->variant));
	cJSON_AddStringToObject(o, "state", config_state_name(state));
	cJSON_AddNumberToObject(o, "links", ep->links);
	q = cJSON_AddArrayToObject(o, "query_params");
	for (i = 0; q != NULL && i < ep->query_params.n; i++)
		cJSON_AddItemToArray(q, cJSON_CreateString(ep->query_params.v[i]));
	cJSON_AddStringToObject(o, "not_indexed",
				(ep->multi_language ||
				 (!ep->random_completion &&
				  ep->variant == LB_VARIANT_STANDARD)) ?
					"empty" : "random");
	add_hosts(o, cl);
	cJSON_AddStringToObject(o, "updated", when);
	layout_endpoint_folder(folder, sizeof(folder), cl->id, ep->id);
	layout_key(key, sizeof(key), folder, LAYOUT_DESCRIPTOR);
	/* unchanged but for the time: keep the stored object, write nothing */
	same = publish_keep_updated(st, key, o);
	if ((json = cJSON_PrintUnformatted(o)) == NULL)
		goto nomem;
	if (dry_run) {
		printf("would put %s (%s)\n", key, config_state_name(state));
		rc = 0;
		goto out;
	}
	if (put_markers(st, cl, ep, state, 0, err) < 0 ||
	    (!same &&
	     (store_put(st, key, json, strlen(json), &plain_meta, err) < 0 ||
	      store_flush(st, err) < 0)) ||
	    put_markers(st, cl, ep, state, 1, err) < 0)
		goto out;
	rc = 0;
	goto out;
nomem:
	lb_error_set(err, LB_ENOMEM, "out of memory");
out:
	free(json);
	cJSON_Delete(o);
	return rc;
}

/* Is the endpoint's published descriptor there, and not pending? */
static int has_data(struct lb_store *st, const struct lb_client *cl,
		    const struct lb_endpoint *ep, struct lb_error *err)
{
	char folder[160], key[180], *data = NULL;
	size_t len = 0;
	struct lb_error gerr;
	cJSON *o, *state;
	int rc;

	layout_endpoint_folder(folder, sizeof(folder), cl->id, ep->id);
	layout_key(key, sizeof(key), folder, LAYOUT_DESCRIPTOR);
	lb_error_init(&gerr);
	if (store_get(st, key, &data, &len, &gerr) < 0) {
		if (gerr.code == LB_ENOTFOUND)
			return 0;
		return lb_error_set(err, gerr.code, "%s", gerr.msg);
	}
	o = cJSON_ParseWithLength(data, len);
	state = cJSON_GetObjectItemCaseSensitive(o, "state");
	rc = cJSON_IsString(state) &&
	     strcmp(state->valuestring, config_state_name(LB_EP_PENDING)) != 0;
	cJSON_Delete(o);
	free(data);
	return rc;
}

int publish_pending(const struct lb_publish_job *job, struct lb_error *err)
{
	const struct lb_client *cl = job->cl;
	const struct lb_endpoint *ep = job->ep;
	int r = has_data(job->store, cl, ep, err);

	if (r < 0)
		return -1;
	if (r > 0) {
		log_info("%s/%s: no data tonight: its published answers stay "
			 "as they were", cl->id, ep->id);
		return 0;
	}
	log_info("%s/%s: no data yet: published pending (the edge answers 204)",
		 cl->id, ep->id);
	return put_descriptor(job->store, cl, ep, LB_EP_PENDING, job->now,
			      job->dry_run, err);
}

int publish_endpoint(const struct lb_publish_job *job, struct lb_error *err)
{
	const struct lb_client *cl = job->cl;
	const struct lb_endpoint *ep = job->ep;
	const struct pages *pages = job->pages;
	struct lb_store *store = job->store;
	struct lb_report_endpoint *rep = job->rep;
	struct answers a;
	struct lb_publish_stats ps;
	char folder[160];
	int r, rc = -1;

	memset(&a, 0, sizeof(a));
	if (ep->state == LB_EP_PENDING || !lb_file_exists(job->links_path)) {
		log_info("%s/%s: no links computed yet: publishing it as pending",
			 cl->id, ep->id);
		report_endpoint_outcome(rep, "pending", ep->state == LB_EP_PENDING ?
					"configured pending" : "no links computed yet");
		rc = put_descriptor(store, cl, ep, LB_EP_PENDING, job->now,
				    job->dry_run, err);
		goto out;
	}
	layout_endpoint_folder(folder, sizeof(folder), cl->id, ep->id);
	a.ep = ep;
	a.err = err;
	a.ids.cap = pages->n * 2 + 16;
	a.ids.slot = calloc(a.ids.cap, sizeof(*a.ids.slot));
	a.cache = render_cache_new(ep, RENDER_CACHE_MAX);
	a.gz = lb_gzip_new();
	if ((a.pub = publish_new(folder)) == NULL || a.ids.slot == NULL ||
	    a.cache == NULL || a.gz == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	log_stage("render");
	r = links_read(job->links_path, pages, (size_t)ep->links, visit_answer,
	       &a, err);
	if (r < 0)
		goto out;
	if (a.n == 0) {
		/* Links of pages that are all gone: publishing would delete
		 * every answer, or make an active endpoint with none. */
		if (publish_pending(job, err) < 0)
			goto out;
		lb_error_set(err, LB_ENODATA, "none of the pages it has links "
			     "for is in the corpus (see the crawl's log)");
		goto out;
	}
	if (add_random_pool(&a, pages, job->seed, err) < 0)
		goto out;
	/* Rendered: the compressor goes back to the pool and the link cache
	 * goes before the commit, which waits for the night's shared syncs
	 * with its slot given back; the clients publishing meanwhile take
	 * this compressor rather than making their own. */
	lb_gzip_free(a.gz);
	a.gz = NULL;
	render_cache_free(a.cache);
	a.cache = NULL;
	log_stage("publish");
	memset(&ps, 0, sizeof(ps));
	publish_set_max_delete(a.pub, job->allow_shrink ? -1.0 : ep->max_shrink);
	r = publish_commit(a.pub, store, job->dry_run, &ps, err);
	if (rep != NULL) {	/* what it did, or would have done */
		rep->objects = ps.objects;
		rep->uploaded = ps.uploaded;
		rep->deleted = ps.deleted;
		rep->unchanged = ps.unchanged;
	}
	if (r < 0)
		goto out;
	log_info("%s: %ld objects, %s%ld uploaded (%lld bytes), %ld deleted, "
		 "%ld unchanged", folder, ps.objects,
		 job->dry_run ? "dry run: would have " : "", ps.uploaded,
		 ps.bytes_uploaded, ps.deleted, ps.unchanged);
	/* The descriptor last: the edge sees the data before the state. */
	if (put_descriptor(store, cl, ep, ep->state, job->now, job->dry_run,
			   err) < 0)
		goto out;
	report_endpoint_outcome(rep, job->dry_run ? "dry run" :
				ep->state == LB_EP_ACTIVE ? "published" :
				config_state_name(ep->state), NULL);
	rc = 0;
out:
	publish_free(a.pub);
	render_cache_free(a.cache);
	lb_gzip_free(a.gz);
	free(a.ids.slot);
	return rc;
}
