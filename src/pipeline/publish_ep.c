/*
 * publish_ep.c - stages 5 and 6 for one endpoint: render each source page's
 * answer from links.tsv and the corpus, the random pool and the descriptor,
 * and hand them to publish/ (docs/store.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "linkbot/buf.h"
#include "linkbot/fsutil.h"
#include "linkbot/log.h"
#include "linkbot/pageid.h"
#include "linkbot/publish.h"
#include "linkbot/render.h"
#include "internal.h"

#define LINKS_MAX_BYTES ((size_t)4 << 30)
#define RANDOM_POOL_MAX 1000

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

static int add_answer(struct lb_publish *pub, const struct lb_endpoint *ep,
		      struct idset *ids, const struct lb_doc *src,
		      const struct lb_render_link *links, size_t n,
		      struct lb_error *err)
{
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
	if (!idset_add(ids, id)) {
		log_warnx("skipping '%s': another page of this endpoint has the "
			  "same path (page ID %s)", src->url, id);
		return 0;
	}
	if ((json = render_envelope(ep, links, n, err)) == NULL)
		goto out;
	if (lb_gzip(json, strlen(json), &gz, &gzlen, err) < 0)
		goto out;
	snprintf(key, sizeof(key), "pages/%s.json", id);
	if (publish_add(pub, key, gz, gzlen, &page_meta, err) < 0)
		goto out;
	rc = 0;
out:
	free(json);
	free(gz);
	return rc;
}

/* Splits a links.tsv line in place: 4 fields. */
static int split_line(char *line, char *f[4])
{
	int i;

	for (i = 0; i < 4; i++) {
		f[i] = line;
		line = strchr(line, i < 3 ? '\t' : '\0');
		if (line == NULL)
			return i == 3 ? 0 : -1;
		if (i < 3)
			*line++ = '\0';
	}
	return 0;
}

static int add_answers(struct lb_publish *pub, const struct lb_endpoint *ep,
		       const struct pages *pages, char *links_text,
		       size_t n_lines, struct lb_error *err)
{
	struct lb_render_link *links = NULL;
	struct idset ids = { NULL, 0 };
	const struct lb_doc *cur = NULL;
	char *line, *next, *cur_url = NULL;
	size_t n = 0, cap = (size_t)ep->links + 1;
	int rc = -1;

	ids.cap = n_lines * 2 + 16;
	ids.slot = calloc(ids.cap, sizeof(*ids.slot));
	links = calloc(cap, sizeof(*links));
	if (ids.slot == NULL || links == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	for (line = links_text; line != NULL && *line != '\0'; line = next) {
		char *f[4];
		long si, ti;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (split_line(line, f) < 0)
			continue;
		if (cur_url == NULL || strcmp(cur_url, f[0]) != 0) {
			if (cur != NULL && add_answer(pub, ep, &ids, cur, links,
						      n, err) < 0)
				goto out;
			n = 0;
			cur_url = f[0];
			si = pages_find(pages, f[0]);
			cur = si >= 0 ? &pages->rec[si].doc : NULL;
		}
		ti = pages_find(pages, f[1]);
		if (cur == NULL || ti < 0 || n >= cap - 1)
			continue;
		links[n].doc = &pages->rec[ti].doc;
		links[n].type = strcmp(f[2], "random") == 0 ? LB_LINK_RANDOM :
							       LB_LINK_RELATED;
		n++;
	}
	if (cur != NULL && add_answer(pub, ep, &ids, cur, links, n, err) < 0)
		goto out;
	rc = 0;
out:
	free(ids.slot);
	free(links);
	return rc;
}

/* random.json: a uniform sample of the target set, typed random. */
static int add_random_pool(struct lb_publish *pub, const struct lb_endpoint *ep,
			   const struct pages *pages, uint64_t seed,
			   struct lb_error *err)
{
	struct page_list tgt;
	struct lb_buf b;
	size_t i, k;
	int rc = -1;

	lb_buf_init(&b, (size_t)64 << 20);
	if (pages_select(pages, ep->target, &tgt, err) < 0)
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
		char *lj = render_link_json(ep, tgt.docs[i], LB_LINK_RANDOM, err);
		if (lj == NULL)
			goto out;
		if ((i > 0 && lb_buf_addc(&b, ',', err) < 0) ||
		    lb_buf_adds(&b, lj, err) < 0) {
			free(lj);
			goto out;
		}
		free(lj);
	}
	if (lb_buf_adds(&b, "]}", err) < 0 ||
	    publish_add(pub, "random.json", b.data, b.len, &plain_meta, err) < 0)
		goto out;
	rc = 0;
out:
	page_list_release(&tgt);
	lb_buf_release(&b);
	return rc;
}

static int put_descriptor(struct lb_store *st, const struct lb_client *cl,
			  const struct lb_endpoint *ep, enum lb_ep_state state,
			  const struct lb_run_opts *opts, struct lb_error *err)
{
	cJSON *o = cJSON_CreateObject(), *q;
	char key[160], when[32], *json = NULL;
	struct tm tm;
	time_t now = opts->now ? opts->now : time(NULL);
	size_t i;
	int rc = -1;

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
	cJSON_AddStringToObject(o, "updated", when);
	if ((json = cJSON_PrintUnformatted(o)) == NULL)
		goto nomem;
	snprintf(key, sizeof(key), "%s/%s/endpoint.json", cl->id, ep->id);
	if (opts->dry_run) {
		printf("would put %s (%s)\n", key, config_state_name(state));
		rc = 0;
		goto out;
	}
	if (store_put(st, key, json, strlen(json), &plain_meta, err) < 0 ||
	    store_flush(st, err) < 0)
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

int pipeline_publish_endpoint(const struct lb_config *cfg,
			      const struct lb_client *cl,
			      const struct lb_endpoint *ep,
			      const struct pages *pages,
			      struct lb_store *store,
			      const struct lb_run_opts *opts,
			      struct lb_error *err)
{
	struct lb_publish *pub = NULL;
	struct lb_publish_stats ps;
	struct lb_error rerr;
	char folder[160], *path = NULL, *text = NULL, *p;
	size_t len = 0, n_lines = 0;
	int rc = -1;

	lb_error_init(&rerr);
	path = pipeline_links_path(cfg, cl, ep);
	if (path == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	if (ep->state == LB_EP_PENDING ||
	    lb_file_read(path, LINKS_MAX_BYTES, &text, &len, &rerr) < 0) {
		if (ep->state != LB_EP_PENDING && rerr.code != LB_ENOTFOUND) {
			lb_error_set(err, rerr.code, "%s", rerr.msg);
			goto out;
		}
		log_info("%s/%s: no links computed yet: publishing it as pending",
			 cl->id, ep->id);
		rc = put_descriptor(store, cl, ep, LB_EP_PENDING, opts, err);
		goto out;
	}
	for (p = text; (p = strchr(p, '\n')) != NULL; p++)
		n_lines++;
	snprintf(folder, sizeof(folder), "%s/%s", cl->id, ep->id);
	if ((pub = publish_new(folder)) == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	log_stage("render");
	if (add_answers(pub, ep, pages, text, n_lines, err) < 0 ||
	    add_random_pool(pub, ep, pages,
			    pipeline_seed(opts, cl->id, ep->id) ^ 0x5eed, err) < 0)
		goto out;
	log_stage("publish");
	memset(&ps, 0, sizeof(ps));
	if (publish_commit(pub, store, opts->dry_run, &ps, err) < 0)
		goto out;
	log_info("%s: %ld objects, %ld uploaded (%lld bytes), %ld deleted, "
		 "%ld unchanged", folder, ps.objects, ps.uploaded,
		 ps.bytes_uploaded, ps.deleted, ps.unchanged);
	/* The descriptor last: the edge sees the data before the state. */
	if (put_descriptor(store, cl, ep, ep->state, opts, err) < 0)
		goto out;
	rc = 0;
out:
	publish_free(pub);
	free(text);
	free(path);
	return rc;
}
