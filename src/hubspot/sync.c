/*
 * sync.c - one HubSpot sync of an endpoint (SPEC 4.4); see hubspot.h.
 *
 * Design notes.
 *
 * The problem: make the portal's custom object hold, for every published
 * blog post, the HubSpot IDs of the posts the endpoint's answer links to,
 * with as few calls as possible (the burst limit is 100-190 requests per
 * 10 s, the daily one 250,000-1,000,000 shared by every app of the portal).
 *
 * Phases:
 *   1. schema: list the schemas (one GET); create ours when absent (a 409
 *      means another run made it: list again and reuse it); add missing
 *      related_post_n properties in one batch.
 *   2. read: the published posts (cursor paging, 100 a page) and the
 *      existing instances (100 a page, only our properties).
 *   3. plan: per post, the wanted values from the store's answer (links
 *      whose page ID is not a post's are skipped, the next fills the slot);
 *      no answer: random posts (kept while still valid, so an unchanged
 *      site stays unchanged) or nothing (without_links: skip).
 *   4. write: batch update of changed properties only, batch create of
 *      missing instances, batch archive of instances of posts that are
 *      gone (archive_gone); 100 inputs a call; a 207's failed inputs are
 *      sent again (twice), the others are not.
 *
 * Invariants: the plan is a pure function of (posts, instances, store);
 * writing it twice is harmless, and writing part of it (a killed run, the
 * DAILY limit) leaves instances that the next plan completes. A second
 * sync of an unchanged site plans nothing and writes nothing: 2 GETs per
 * 100 posts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "linkbot/buf.h"
#include "linkbot/gz.h"
#include "linkbot/hubspot.h"
#include "linkbot/layout.h"
#include "linkbot/log.h"
#include "linkbot/pageid.h"
#include "client.h"

#define HS_PAGE 100		/* listing page size (HubSpot's cap) */
#define HS_BATCH 100		/* batch inputs (over 100 is a 400) */
#define HS_ANSWER_MAX ((size_t)16 << 20)
#define HS_BATCH_TRIES 3

struct post {
	char *id;
	char *url;
	char pid[LB_PAGEID_LEN + 1];
};

struct inst {
	char *id;
	char *url;
	char **vals;		/* n values, "" when unset */
	int seen;		/* a post has it */
};

struct sync {
	const struct lb_config *cfg;
	const struct lb_client *cl;
	const struct lb_endpoint *ep;
	const struct lb_hubspot *h;
	const struct hubspot_opts *opts;
	struct hubspot_stats *st;
	struct lb_store *store;
	struct hs_client *c;
	struct lb_qrule rule;
	char schemas[128], objects[256], props[256], posts_path[128];
	char *type;		/* objectTypeId, e.g. "2-123456" */
	struct post *posts;
	size_t n_posts;
	struct post **by_pid;	/* posts sorted by page ID */
	const char **ids;	/* post IDs, sorted */
	struct inst *insts;
	size_t n_insts;
	struct inst **inst_by_pid;
	size_t n_inst_by_pid;
	int have_answers;	/* endpoint.json says active */
	long conflicts;		/* create inputs refused by a 409 (unique
				   blog_post_url): an instance appeared
				   since the listing */
};

static const char *jstr(const cJSON *o, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* HubSpot IDs come as strings, some listings give numbers. */
static char *jid(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	char tmp[32];

	if (cJSON_IsString(v))
		return strdup(v->valuestring);
	if (cJSON_IsNumber(v)) {
		snprintf(tmp, sizeof(tmp), "%.0f", v->valuedouble);
		return strdup(tmp);
	}
	return NULL;
}

/* Percent-encodes s (RFC 3986 unreserved kept) onto b. */
static int add_escaped(struct lb_buf *b, const char *s, struct lb_error *err)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
		    ch == '_' || ch == '~') {
			if (lb_buf_addc(b, (char)ch, err) < 0)
				return -1;
		} else if (lb_buf_addc(b, '%', err) < 0 ||
			   lb_buf_addc(b, hex[ch >> 4], err) < 0 ||
			   lb_buf_addc(b, hex[ch & 15], err) < 0) {
			return -1;
		}
	}
	return 0;
}

static void set_paths(struct sync *s)
{
	const char *v = s->h->api_version;

	if (strcmp(v, "v3") == 0) {
		snprintf(s->schemas, sizeof(s->schemas), "/crm/v3/schemas");
		snprintf(s->posts_path, sizeof(s->posts_path),
			 "/cms/v3/blogs/posts");
	} else {
		snprintf(s->schemas, sizeof(s->schemas),
			 "/crm-object-schemas/%s/schemas", v);
		snprintf(s->posts_path, sizeof(s->posts_path),
			 "/cms/blogs/%s/posts", v);
	}
}

static void set_type_paths(struct sync *s)
{
	const char *v = s->h->api_version;

	if (strcmp(v, "v3") == 0) {
		snprintf(s->objects, sizeof(s->objects), "/crm/v3/objects/%s",
			 s->type);
		snprintf(s->props, sizeof(s->props), "/crm/v3/properties/%s",
			 s->type);
	} else {
		snprintf(s->objects, sizeof(s->objects), "/crm/objects/%s/%s",
			 v, s->type);
		snprintf(s->props, sizeof(s->props), "/crm/properties/%s/%s",
			 v, s->type);
	}
}

/* ---- phase 1: the schema (SPEC 2.6) ---- */

static cJSON *property_def(const char *name, const char *label,
			   int unique, const char *group)
{
	cJSON *p = cJSON_CreateObject();

	cJSON_AddStringToObject(p, "name", name);
	cJSON_AddStringToObject(p, "label", label);
	cJSON_AddStringToObject(p, "type", "string");
	cJSON_AddStringToObject(p, "fieldType", "text");
	if (unique)
		cJSON_AddBoolToObject(p, "hasUniqueValue", 1);
	if (group != NULL)
		cJSON_AddStringToObject(p, "groupName", group);
	return p;
}

static char *schema_body(const struct lb_hubspot *h)
{
	cJSON *o = cJSON_CreateObject(), *labels, *props, *a;
	char name[64], label[64];
	char *txt;
	int i;

	cJSON_AddStringToObject(o, "name", h->object);
	labels = cJSON_AddObjectToObject(o, "labels");
	cJSON_AddStringToObject(labels, "singular", "Related posts of a blog post");
	cJSON_AddStringToObject(labels, "plural", "Related posts of blog posts");
	cJSON_AddStringToObject(o, "primaryDisplayProperty", "blog_post_url");
	a = cJSON_AddArrayToObject(o, "requiredProperties");
	cJSON_AddItemToArray(a, cJSON_CreateString("blog_post_url"));
	a = cJSON_AddArrayToObject(o, "searchableProperties");
	cJSON_AddItemToArray(a, cJSON_CreateString("blog_post_url"));
	cJSON_AddArrayToObject(o, "secondaryDisplayProperties");
	props = cJSON_AddArrayToObject(o, "properties");
	cJSON_AddItemToArray(props, property_def("blog_post_url",
						 "Blog Post URL", 1, NULL));
	for (i = 1; i <= h->n; i++) {
		snprintf(name, sizeof(name), "related_post_%d", i);
		snprintf(label, sizeof(label), "Related Post Id %d", i);
		cJSON_AddItemToArray(props, property_def(name, label, 0, NULL));
	}
	cJSON_AddArrayToObject(o, "associatedObjects");
	txt = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return txt;
}

/* Our schema among a schemas listing's results, or NULL. */
static const cJSON *find_schema(const cJSON *list, const char *name)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "results")) {
		const char *n = jstr(it, "name");
		if (n != NULL && strcmp(n, name) == 0)
			return it;
	}
	return NULL;
}

/* Adds the related_post_n properties the schema lacks. */
static int check_properties(struct sync *s, const cJSON *schema,
			    struct lb_error *err)
{
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
	const cJSON *p;
	const char *group = NULL;
	cJSON *body = NULL, *inputs;
	struct hs_response r = { 0, NULL };
	char name[64], label[64], path[300], *txt = NULL;
	int i, have_url = 0, rc = -1;

	cJSON_ArrayForEach(p, props) {
		const char *n = jstr(p, "name");
		if (n != NULL && strcmp(n, "blog_post_url") == 0) {
			have_url = 1;
			group = jstr(p, "groupName");
		}
	}
	if (!have_url)
		return lb_error_set(err, LB_EHTTP,
				    "HubSpot object '%s' exists without the "
				    "blog_post_url property: it is not linkbot's; "
				    "name another object in the config",
				    s->h->object);
	body = cJSON_CreateObject();
	inputs = cJSON_AddArrayToObject(body, "inputs");
	for (i = 1; i <= s->h->n; i++) {
		int found = 0;
		snprintf(name, sizeof(name), "related_post_%d", i);
		cJSON_ArrayForEach(p, props) {
			const char *n = jstr(p, "name");
			found |= n != NULL && strcmp(n, name) == 0;
		}
		if (found)
			continue;
		snprintf(label, sizeof(label), "Related Post Id %d", i);
		cJSON_AddItemToArray(inputs, property_def(name, label, 0,
			group ? group : ""));
	}
	if (cJSON_GetArraySize(inputs) == 0) {
		rc = 0;
		goto out;
	}
	if (group == NULL) {
		/* the default group of a custom object's properties */
		snprintf(label, sizeof(label), "%s_information", s->h->object);
		cJSON_ArrayForEach(p, inputs)
			cJSON_ReplaceItemInObject((cJSON *)p, "groupName",
						  cJSON_CreateString(label));
	}
	log_info("%s/%s: adding %d missing related_post properties to '%s'",
		 s->cl->id, s->ep->id, cJSON_GetArraySize(inputs), s->h->object);
	if (s->opts->dry_run) {
		rc = 0;
		goto out;
	}
	txt = cJSON_PrintUnformatted(body);
	snprintf(path, sizeof(path), "%s/batch/create", s->props);
	if (txt == NULL || hs_call(s->c, "POST", path, txt, &r, err) < 0)
		goto out;
	if (r.status != 200 && r.status != 201 && r.status != 207) {
		hs_error(err, "POST", path, &r);
		goto out;
	}
	if (r.status == 207)
		log_warnx("%s/%s: some properties were not added (%s); the next "
			  "sync tries again", s->cl->id, s->ep->id,
			  jstr(r.json, "message") ? jstr(r.json, "message") : "207");
	rc = 0;
out:
	free(txt);
	cJSON_Delete(body);
	hs_response_release(&r);
	return rc;
}

static int take_schema(struct sync *s, const cJSON *schema,
		       struct lb_error *err)
{
	free(s->type);
	s->type = jid(schema, "objectTypeId");
	if (s->type == NULL)
		return lb_error_set(err, LB_EHTTP, "HubSpot's schema of '%s' "
				    "has no objectTypeId", s->h->object);
	set_type_paths(s);
	log_debug("%s/%s: object '%s' is %s (%s), for the template's "
		  "linkbot_object", s->cl->id, s->ep->id, s->h->object,
		  jstr(schema, "fullyQualifiedName") ?
		  jstr(schema, "fullyQualifiedName") : "?", s->type);
	return check_properties(s, schema, err);
}

static int ensure_schema(struct sync *s, struct lb_error *err)
{
	struct hs_response r = { 0, NULL };
	const cJSON *found;
	char *body = NULL;
	int rc = -1, pass;

	for (pass = 0; pass < 2; pass++) {
		if (hs_call(s->c, "GET", s->schemas, NULL, &r, err) < 0)
			goto out;
		if (r.status != 200) {
			hs_error(err, "GET", s->schemas, &r);
			goto out;
		}
		if ((found = find_schema(r.json, s->h->object)) != NULL) {
			rc = take_schema(s, found, err);
			goto out;
		}
		hs_response_release(&r);
		if (pass == 1)
			break;
		log_info("%s/%s: %s the custom object '%s' (%d "
			 "related_post properties)", s->cl->id, s->ep->id,
			 s->opts->dry_run ? "would create" : "creating",
			 s->h->object, s->h->n);
		if (s->opts->dry_run) {
			rc = 0;
			goto out;
		}
		if ((body = schema_body(s->h)) == NULL) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		if (hs_call(s->c, "POST", s->schemas, body, &r, err) < 0)
			goto out;
		if (r.status == 200 || r.status == 201) {
			rc = take_schema(s, r.json, err);
			goto out;
		}
		if (r.status != 409) {
			hs_error(err, "POST", s->schemas, &r);
			goto out;
		}
		/* 409: it is already there; read it */
		log_info("%s/%s: '%s' already exists (%s); reusing it",
			 s->cl->id, s->ep->id, s->h->object,
			 jstr(r.json, "correlationId") ?
			 jstr(r.json, "correlationId") : "409");
		hs_response_release(&r);
	}
	lb_error_set(err, LB_EHTTP, "HubSpot said object '%s' exists (409) "
		     "but does not list it", s->h->object);
out:
	free(body);
	hs_response_release(&r);
	return rc;
}

/* ---- phase 2: listings ---- */

typedef int (*page_fn)(struct sync *s, const cJSON *item, struct lb_error *err);

/* GETs path (with its query) page after page, following paging.next.after. */
static int list_all(struct sync *s, const char *path, page_fn fn,
		    struct lb_error *err)
{
	struct hs_response r = { 0, NULL };
	struct lb_buf url;
	char *after = NULL;
	const cJSON *it;
	int rc = -1;

	lb_buf_init(&url, 65536);
	for (;;) {
		lb_buf_reset(&url);
		if (lb_buf_adds(&url, path, err) < 0)
			goto out;
		if (after != NULL &&
		    (lb_buf_adds(&url, "&after=", err) < 0 ||
		     add_escaped(&url, after, err) < 0))
			goto out;
		if (hs_call(s->c, "GET", url.data, NULL, &r, err) < 0)
			goto out;
		if (r.status != 200) {
			hs_error(err, "GET", url.data, &r);
			goto out;
		}
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r.json,
									"results"))
			if (fn(s, it, err) < 0)
				goto out;
		free(after);
		after = NULL;
		{
			const cJSON *next = cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(r.json, "paging"),
				"next");
			const char *a = jstr(next, "after");
			if (a == NULL || *a == '\0')
				break;
			if ((after = strdup(a)) == NULL) {
				lb_error_set(err, LB_ENOMEM, "out of memory");
				goto out;
			}
		}
		hs_response_release(&r);
	}
	rc = 0;
out:
	free(after);
	hs_response_release(&r);
	lb_buf_release(&url);
	return rc;
}

static int blog_wanted(const struct lb_hubspot *h, const char *blog)
{
	size_t i;

	if (h->blogs.n == 0)
		return 1;
	for (i = 0; blog != NULL && i < h->blogs.n; i++)
		if (strcmp(h->blogs.v[i], blog) == 0)
			return 1;
	return 0;
}

static int on_post(struct sync *s, const cJSON *it, struct lb_error *err)
{
	const char *state = jstr(it, "state");
	const char *url = jstr(it, "url");
	char *blog = jid(it, "contentGroupId");
	struct post *np, *p;
	struct lb_error perr;
	int wanted;

	wanted = blog_wanted(s->h, blog);
	free(blog);
	if ((state != NULL && strcmp(state, "PUBLISHED") != 0) || !wanted ||
	    url == NULL || *url == '\0' ||
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "archived")))
		return 0;
	if (s->n_posts % 1024 == 0) {
		np = realloc(s->posts, (s->n_posts + 1024) * sizeof(*np));
		if (np == NULL)
			return lb_error_set(err, LB_ENOMEM, "out of memory");
		s->posts = np;
	}
	p = &s->posts[s->n_posts];
	memset(p, 0, sizeof(*p));
	lb_error_init(&perr);
	if (pageid_of_url(url, &s->rule, p->pid, &perr) < 0) {
		log_warnx("post '%s': %s; skipped", url, perr.msg);
		return 0;
	}
	p->id = jid(it, "id");
	p->url = strdup(url);
	if (p->id == NULL || p->url == NULL) {
		free(p->id);
		free(p->url);
		return p->id == NULL && p->url != NULL ? 0 :
		       lb_error_set(err, LB_ENOMEM, "out of memory");
	}
	s->n_posts++;
	return 0;
}

static int on_inst(struct sync *s, const cJSON *it, struct lb_error *err)
{
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(it, "properties");
	const char *url = jstr(props, "blog_post_url");
	struct inst *ni, *x;
	char name[64];
	int i;

	if (s->n_insts % 1024 == 0) {
		ni = realloc(s->insts, (s->n_insts + 1024) * sizeof(*ni));
		if (ni == NULL)
			return lb_error_set(err, LB_ENOMEM, "out of memory");
		s->insts = ni;
	}
	x = &s->insts[s->n_insts];
	memset(x, 0, sizeof(*x));
	x->id = jid(it, "id");
	x->url = strdup(url ? url : "");
	x->vals = calloc((size_t)s->h->n, sizeof(*x->vals));
	if (x->id == NULL || x->url == NULL || x->vals == NULL)
		goto nomem;
	s->n_insts++;	/* owned from here: freed with the others */
	for (i = 0; i < s->h->n; i++) {
		const char *v;
		snprintf(name, sizeof(name), "related_post_%d", i + 1);
		v = jstr(props, name);
		if ((x->vals[i] = strdup(v ? v : "")) == NULL)
			return lb_error_set(err, LB_ENOMEM, "out of memory");
	}
	return 0;
nomem:
	free(x->id);
	free(x->url);
	free(x->vals);
	return lb_error_set(err, LB_ENOMEM, "out of memory");
}

static int cmp_post_pid(const void *a, const void *b)
{
	const struct post *x = *(const struct post *const *)a;
	const struct post *y = *(const struct post *const *)b;
	int c = strcmp(x->pid, y->pid);

	return c ? c : strcmp(x->id, y->id);
}

static struct post *post_by_pid(struct sync *s, const char *pid)
{
	size_t lo = 0, hi = s->n_posts;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(s->by_pid[mid]->pid, pid);
		if (c == 0) {
			/* the first of equal page IDs */
			while (mid > 0 && strcmp(s->by_pid[mid - 1]->pid, pid) == 0)
				mid--;
			return s->by_pid[mid];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int is_post_id(struct sync *s, const char *id)
{
	return bsearch(&id, s->ids, s->n_posts, sizeof(*s->ids), cmp_str) != NULL;
}

static int build_indexes(struct sync *s, struct lb_error *err)
{
	size_t i;
	struct lb_error e;

	free(s->by_pid);
	free(s->ids);
	free(s->inst_by_pid);
	s->by_pid = malloc((s->n_posts + 1) * sizeof(*s->by_pid));
	s->ids = malloc((s->n_posts + 1) * sizeof(*s->ids));
	s->inst_by_pid = calloc(s->n_posts + 1, sizeof(*s->inst_by_pid));
	if (s->by_pid == NULL || s->ids == NULL || s->inst_by_pid == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	for (i = 0; i < s->n_posts; i++) {
		s->by_pid[i] = &s->posts[i];
		s->ids[i] = s->posts[i].id;
	}
	qsort(s->by_pid, s->n_posts, sizeof(*s->by_pid), cmp_post_pid);
	qsort(s->ids, s->n_posts, sizeof(*s->ids), cmp_str);
	/* instance of each post, by the page ID of its blog_post_url */
	for (i = 0; i < s->n_insts; i++) {
		char pid[LB_PAGEID_LEN + 1];
		struct post *p;
		lb_error_init(&e);
		if (pageid_of_url(s->insts[i].url, &s->rule, pid, &e) < 0)
			continue;
		if ((p = post_by_pid(s, pid)) == NULL)
			continue;
		if (s->inst_by_pid[p - s->posts] == NULL) {
			s->inst_by_pid[p - s->posts] = &s->insts[i];
			s->insts[i].seen = 1;
		}
	}
	return 0;
}

/* ---- phase 3: the wanted values ---- */

/* The answer the edge serves for a post: 1 found, 0 none, -1 store error. */
static int read_answer(struct sync *s, const struct post *p, cJSON **out,
		       struct lb_error *err)
{
	char folder[200], key[300], *data = NULL, *text = NULL;
	size_t len = 0;
	struct lb_error e;

	*out = NULL;
	layout_endpoint_folder(folder, sizeof(folder), s->cl->id, s->ep->id);
	layout_page_key(key, sizeof(key), folder, p->pid);
	lb_error_init(&e);
	if (store_get(s->store, key, &data, &len, &e) < 0) {
		if (e.code == LB_ENOTFOUND)
			return 0;
		return lb_error_set(err, LB_ESTORE, "%s", e.msg);
	}
	if (lb_is_gzip(data, len)) {
		if (lb_gunzip(data, len, HS_ANSWER_MAX, &text, NULL, &e) < 0) {
			free(data);
			log_warnx("'%s': %s; taken as no answer", key, e.msg);
			return 0;
		}
		free(data);
	} else {
		text = data;
	}
	*out = cJSON_Parse(text);
	free(text);
	return *out != NULL;
}

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* n distinct random posts, never p itself; seeded by the post's ID. */
static void random_posts(struct sync *s, const struct post *p, char **want)
{
	uint64_t seed = s->opts->seed ^ 0x9E3779B97F4A7C15ULL;
	size_t got = 0, tries = 0, limit = s->n_posts * 4 + 64;
	const char *c;
	int k;

	for (c = p->id; *c != '\0'; c++)
		seed = mix(seed ^ (unsigned char)*c);
	while ((int)got < s->h->n && tries++ < limit) {
		const struct post *q;
		seed = mix(seed + 0x9E3779B97F4A7C15ULL);
		q = &s->posts[seed % s->n_posts];
		if (q == p || strcmp(q->pid, p->pid) == 0)
			continue;
		for (k = 0; k < (int)got; k++)
			if (strcmp(want[k], q->id) == 0)
				break;
		if (k < (int)got)
			continue;
		want[got++] = q->id;
	}
}

/*
 * want[0..n) for post p (pointers into posts, or ""): returns 1 when p
 * should have these values, 0 when p gets no instance (without_links:
 * skip and no answer), -1 on a store error.
 */
static int wanted(struct sync *s, const struct post *p, const struct inst *x,
		  char **want, struct lb_error *err)
{
	cJSON *ans = NULL;
	const cJSON *l;
	int i, got = 0, r;

	for (i = 0; i < s->h->n; i++)
		want[i] = "";
	r = s->have_answers ? read_answer(s, p, &ans, err) : 0;
	if (r < 0)
		return -1;
	cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(ans,
							       "related_links")) {
		const char *u = jstr(l, "url");
		char pid[LB_PAGEID_LEN + 1];
		struct lb_error e;
		struct post *q;
		int k;

		if (got >= s->h->n)
			break;
		lb_error_init(&e);
		if (u == NULL || pageid_of_url(u, &s->rule, pid, &e) < 0 ||
		    (q = post_by_pid(s, pid)) == NULL || q == p ||
		    strcmp(q->pid, p->pid) == 0)
			continue;	/* not a post of the portal: next link */
		for (k = 0; k < got; k++)
			if (strcmp(want[k], q->id) == 0)
				break;
		if (k == got)
			want[got++] = q->id;
	}
	cJSON_Delete(ans);
	if (got > 0)
		return 1;
	if (!s->h->random_fill)
		return 0;
	/* no links: random posts, but keep an instance's random posts while
	 * they are all still posts (an unchanged site stays unchanged) */
	if (x != NULL) {
		int ok = 1;
		for (i = 0; i < s->h->n && ok; i++) {
			int k;
			ok = x->vals[i][0] != '\0' && strcmp(x->vals[i], p->id) != 0 &&
			     is_post_id(s, x->vals[i]);
			for (k = 0; k < i && ok; k++)
				ok = strcmp(x->vals[k], x->vals[i]) != 0;
		}
		/* fewer posts than slots: what can be filled is enough */
		if (!ok && (size_t)s->h->n >= s->n_posts) {
			ok = 1;
			for (i = 0; i < s->h->n && ok; i++)
				ok = x->vals[i][0] == '\0' ||
				     (strcmp(x->vals[i], p->id) != 0 &&
				      is_post_id(s, x->vals[i]));
			if (ok && x->vals[0][0] == '\0')
				ok = 0;
		}
		if (ok) {
			for (i = 0; i < s->h->n; i++)
				want[i] = x->vals[i];
			return 1;
		}
	}
	if (s->n_posts > 1)
		random_posts(s, p, want);
	return 1;
}

/* ---- phase 4: batches ---- */

enum batch_kind { B_CREATE, B_UPDATE, B_ARCHIVE };

static const char *const batch_verb[] = { "create", "update", "archive" };

/* The input's key in results: its id, or (create) its blog_post_url. */
static const char *input_key(enum batch_kind k, const cJSON *in)
{
	if (k == B_CREATE)
		return jstr(cJSON_GetObjectItemCaseSensitive(in, "properties"),
			    "blog_post_url");
	return jstr(in, "id");
}

static int in_results(enum batch_kind k, const cJSON *results, const char *key)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, results) {
		const char *v = k == B_CREATE ?
			jstr(cJSON_GetObjectItemCaseSensitive(it, "properties"),
			     "blog_post_url") : jstr(it, "id");
		if (v != NULL && key != NULL && strcmp(v, key) == 0)
			return 1;
	}
	return 0;
}

static void log_batch_errors(struct sync *s, enum batch_kind k,
			     const struct hs_response *r)
{
	const cJSON *e;
	int shown = 0;

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(r->json, "errors")) {
		if (shown++ >= 5)
			break;
		log_warnx("%s/%s: batch %s: %s (%s, correlationId %s)",
			  s->cl->id, s->ep->id, batch_verb[k],
			  jstr(e, "message") ? jstr(e, "message") : "error",
			  jstr(e, "category") ? jstr(e, "category") : "",
			  jstr(r->json, "correlationId") ?
			  jstr(r->json, "correlationId") :
			  jstr(e, "correlationId") ? jstr(e, "correlationId") :
			  "none");
	}
}

/*
 * Sends inputs (an array it owns and frees) as one batch; a 207's failed
 * inputs are sent again, HS_BATCH_TRIES times in all. Counts what was done
 * and what failed; -1 only when the sync must stop (auth, DAILY, network).
 */
static int send_batch(struct sync *s, enum batch_kind k, cJSON *inputs,
		      struct lb_error *err)
{
	struct hs_response r = { 0, NULL };
	char path[320], *txt = NULL;
	cJSON *body = NULL;
	int tries, rc = -1;
	long n;

	snprintf(path, sizeof(path), "%s/batch/%s", s->objects, batch_verb[k]);
	for (tries = 0; tries < HS_BATCH_TRIES; tries++) {
		cJSON *failed, *in;

		n = cJSON_GetArraySize(inputs);
		if (n == 0)
			break;
		body = cJSON_CreateObject();
		cJSON_AddItemToObject(body, "inputs", inputs);
		inputs = NULL;
		txt = cJSON_PrintUnformatted(body);
		if (txt == NULL) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		if (hs_call(s->c, "POST", path, txt, &r, err) < 0)
			goto out;
		free(txt);
		txt = NULL;
		inputs = cJSON_DetachItemFromObject(body, "inputs");
		cJSON_Delete(body);
		body = NULL;
		if (r.status == 200 || r.status == 201 || r.status == 204) {
			if (k == B_CREATE)
				s->st->created += n;
			else if (k == B_UPDATE)
				s->st->updated += n;
			else
				s->st->archived += n;
			cJSON_Delete(inputs);
			inputs = NULL;
			break;
		}
		if (r.status != 207) {
			/* the whole batch refused (400, 409, ...): say why;
			 * a 409 on create is planned again after a new
			 * listing, the rest by the next sync */
			struct lb_error e;
			lb_error_init(&e);
			hs_error(&e, "POST", path, &r);
			log_warnx("%s/%s: %s", s->cl->id, s->ep->id, e.msg);
			if (k == B_CREATE && r.status == 409)
				s->conflicts += n;
			else
				s->st->failed += n;
			cJSON_Delete(inputs);
			inputs = NULL;
			break;
		}
		log_batch_errors(s, k, &r);
		failed = cJSON_CreateArray();
		while ((in = cJSON_DetachItemFromArray(inputs, 0)) != NULL) {
			const cJSON *res = cJSON_GetObjectItemCaseSensitive(
				r.json, "results");
			if (k != B_ARCHIVE && in_results(k, res, input_key(k, in))) {
				if (k == B_CREATE)
					s->st->created++;
				else
					s->st->updated++;
				cJSON_Delete(in);
			} else {
				cJSON_AddItemToArray(failed, in);
			}
		}
		cJSON_Delete(inputs);
		inputs = failed;
		hs_response_release(&r);
		if (cJSON_GetArraySize(inputs) > 0 && tries + 1 < HS_BATCH_TRIES)
			log_info("%s/%s: sending %d failed %s input(s) again",
				 s->cl->id, s->ep->id, cJSON_GetArraySize(inputs),
				 batch_verb[k]);
	}
	if (inputs != NULL && cJSON_GetArraySize(inputs) > 0) {
		s->st->failed += cJSON_GetArraySize(inputs);
		log_warnx("%s/%s: %d %s input(s) still refused; the next sync "
			  "tries again", s->cl->id, s->ep->id,
			  cJSON_GetArraySize(inputs), batch_verb[k]);
	}
	rc = 0;
out:
	free(txt);
	cJSON_Delete(body);
	cJSON_Delete(inputs);
	hs_response_release(&r);
	return rc;
}

static int flush(struct sync *s, enum batch_kind k, cJSON **batch,
		 struct lb_error *err);

/* Adds in to the pending batch of kind k, sending it when full. */
static int queue(struct sync *s, enum batch_kind k, cJSON **batch, cJSON *in,
		 struct lb_error *err)
{
	if (*batch == NULL && (*batch = cJSON_CreateArray()) == NULL) {
		cJSON_Delete(in);
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	}
	cJSON_AddItemToArray(*batch, in);
	if (cJSON_GetArraySize(*batch) < HS_BATCH)
		return 0;
	return flush(s, k, batch, err);
}

static int flush(struct sync *s, enum batch_kind k, cJSON **batch,
		 struct lb_error *err)
{
	cJSON *b = *batch;

	*batch = NULL;
	if (b == NULL)
		return 0;
	if (s->opts->dry_run) {
		log_info("%s/%s: would %s %d instance(s)", s->cl->id, s->ep->id,
			 batch_verb[k], cJSON_GetArraySize(b));
		cJSON_Delete(b);
		return 0;
	}
	return send_batch(s, k, b, err);
}

static int plan_and_write(struct sync *s, struct lb_error *err)
{
	cJSON *batch[3] = { NULL, NULL, NULL };
	char **want = NULL, name[64];
	size_t i;
	int j, rc = -1;

	if ((want = calloc((size_t)s->h->n, sizeof(*want))) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	for (i = 0; i < s->n_posts; i++) {
		const struct post *p = &s->posts[i];
		struct inst *x = s->inst_by_pid[i];
		cJSON *in, *props;
		int r, changed = 0;

		if (i > 0 && strcmp(p->pid, s->posts[i - 1].pid) == 0 &&
		    post_by_pid(s, p->pid) != p)
			continue;	/* two posts, one page: the first counts */
		if ((r = wanted(s, p, x, want, err)) < 0)
			goto out;
		if (r == 0) {
			s->st->skipped++;
			continue;
		}
		in = cJSON_CreateObject();
		props = cJSON_AddObjectToObject(in, "properties");
		if (x == NULL)
			cJSON_AddStringToObject(props, "blog_post_url", p->url);
		for (j = 0; j < s->h->n; j++) {
			if (x != NULL && strcmp(x->vals[j], want[j]) == 0)
				continue;
			snprintf(name, sizeof(name), "related_post_%d", j + 1);
			cJSON_AddStringToObject(props, name, want[j]);
			changed = 1;
		}
		if (x != NULL && !changed) {
			s->st->unchanged++;
			cJSON_Delete(in);
			continue;
		}
		if (x != NULL)
			cJSON_AddStringToObject(in, "id", x->id);
		if (queue(s, x ? B_UPDATE : B_CREATE, &batch[x ? B_UPDATE : B_CREATE],
			  in, err) < 0)
			goto out;
	}
	for (i = 0; s->h->archive_gone && i < s->n_insts; i++) {
		cJSON *in;
		if (s->insts[i].seen)
			continue;
		in = cJSON_CreateObject();
		cJSON_AddStringToObject(in, "id", s->insts[i].id);
		if (queue(s, B_ARCHIVE, &batch[B_ARCHIVE], in, err) < 0)
			goto out;
	}
	for (j = 0; j < 3; j++)
		if (flush(s, (enum batch_kind)j, &batch[j], err) < 0)
			goto out;
	rc = 0;
out:
	for (j = 0; j < 3; j++)
		cJSON_Delete(batch[j]);
	free(want);
	return rc;
}

/* Is the endpoint active in the store (endpoint.json), so answers count? */
static int endpoint_active(struct sync *s, struct lb_error *err)
{
	char folder[200], key[300], *data = NULL;
	size_t len = 0;
	cJSON *d;
	struct lb_error e;
	const char *state;
	int active;

	layout_endpoint_folder(folder, sizeof(folder), s->cl->id, s->ep->id);
	layout_key(key, sizeof(key), folder, LAYOUT_DESCRIPTOR);
	lb_error_init(&e);
	if (store_get(s->store, key, &data, &len, &e) < 0) {
		if (e.code == LB_ENOTFOUND)
			return 0;
		return lb_error_set(err, LB_ESTORE, "%s", e.msg);
	}
	d = cJSON_ParseWithLength(data, len);
	state = jstr(d, "state");
	active = state != NULL && strcmp(state, "active") == 0;
	cJSON_Delete(d);
	free(data);
	return active;
}

static void free_insts(struct sync *s)
{
	size_t i;
	int j;

	for (i = 0; i < s->n_insts; i++) {
		for (j = 0; s->insts[i].vals != NULL && j < s->h->n; j++)
			free(s->insts[i].vals[j]);
		free(s->insts[i].vals);
		free(s->insts[i].id);
		free(s->insts[i].url);
	}
	free(s->insts);
	s->insts = NULL;
	s->n_insts = 0;
}

static void sync_release(struct sync *s)
{
	size_t i;

	for (i = 0; i < s->n_posts; i++) {
		free(s->posts[i].id);
		free(s->posts[i].url);
	}
	free(s->posts);
	free_insts(s);
	free(s->by_pid);
	free(s->ids);
	free(s->inst_by_pid);
	free(s->type);
	hs_client_free(s->c);
}

static int posts_query(struct sync *s, const char *blog, struct lb_buf *q,
		       struct lb_error *err)
{
	size_t i;

	if (lb_buf_printf(q, err, "%s?limit=%d&state=PUBLISHED", s->posts_path,
			  HS_PAGE) < 0)
		return -1;
	if (blog != NULL && lb_buf_printf(q, err, "&contentGroupId=%s", blog) < 0)
		return -1;
	for (i = 0; i < s->h->post_filters.n; i++) {
		const char *f = s->h->post_filters.v[i];
		const char *eq = strchr(f, '=');
		if (lb_buf_addc(q, '&', err) < 0 ||
		    lb_buf_add(q, f, (size_t)(eq - f), err) < 0 ||
		    lb_buf_addc(q, '=', err) < 0 || add_escaped(q, eq + 1, err) < 0)
			return -1;
	}
	return 0;
}

int hubspot_sync(const struct lb_config *cfg, const struct lb_client *cl,
		 const struct lb_endpoint *ep, struct lb_store *store,
		 const struct hubspot_opts *opts, struct hubspot_stats *stats,
		 struct lb_error *err)
{
	struct sync s;
	struct lb_buf q;
	const char *token;
	size_t i;
	int j, rc = -1, r;

	memset(stats, 0, sizeof(*stats));
	memset(&s, 0, sizeof(s));
	lb_buf_init(&q, 65536);
	s.cfg = cfg;
	s.cl = cl;
	s.ep = ep;
	s.h = ep->hubspot;
	s.opts = opts;
	s.st = stats;
	s.store = store;
	s.rule.keep_all = ep->query_keep_all;
	s.rule.names = (const char *const *)ep->query_params.v;
	s.rule.n_names = ep->query_params.n;
	if (s.h == NULL)
		return lb_error_set(err, LB_ECONFIG, "%s/%s has no hubspot "
				    "settings", cl->id, ep->id);
	token = getenv(s.h->token_env);
	if (token == NULL || *token == '\0')
		return lb_error_set(err, LB_ECONFIG,
				    "%s:%d: the HubSpot token is not set: "
				    "export %s (a private app's or service "
				    "key's access token)", cfg->path, s.h->line,
				    s.h->token_env);
	set_paths(&s);
	if (hs_client_new(s.h->base_url, token, s.h->token_env, stats, &s.c,
			  err) < 0)
		goto out;
	if ((r = endpoint_active(&s, err)) < 0)
		goto out;
	s.have_answers = r;
	if (!r)
		log_info("%s/%s: no active answers in the store yet: %s",
			 cl->id, ep->id, s.h->random_fill ?
			 "posts get random posts" : "no instance is created");
	if (ensure_schema(&s, err) < 0)
		goto out;
	for (i = 0; i < (s.h->blogs.n ? s.h->blogs.n : 1); i++) {
		lb_buf_reset(&q);
		if (posts_query(&s, s.h->blogs.n ? s.h->blogs.v[i] : NULL, &q,
				err) < 0 ||
		    list_all(&s, q.data, on_post, err) < 0)
			goto out;
	}
	stats->posts = (long)s.n_posts;
	if (s.type != NULL) {
		lb_buf_reset(&q);
		if (lb_buf_printf(&q, err, "%s?limit=%d&archived=false&properties="
				  "blog_post_url", s.objects, HS_PAGE) < 0)
			goto out;
		for (j = 1; j <= s.h->n; j++)
			if (lb_buf_printf(&q, err, ",related_post_%d", j) < 0)
				goto out;
		if (list_all(&s, q.data, on_inst, err) < 0)
			goto out;
	}
	stats->instances = (long)s.n_insts;
	if (build_indexes(&s, err) < 0)
		goto out;
	if (s.type == NULL) {	/* dry run without a schema */
		log_info("%s/%s: would create %zu instance(s)", cl->id, ep->id,
			 s.n_posts);
		rc = 0;
		goto out;
	}
	if (plan_and_write(&s, err) < 0)
		goto out;
	if (s.conflicts > 0) {
		/* instances appeared since the listing (a create retried
		 * after a lost answer, another run): list again, plan again */
		log_info("%s/%s: %ld instance(s) already existed; listing the "
			 "instances again", cl->id, ep->id, s.conflicts);
		s.conflicts = 0;
		stats->unchanged = stats->skipped = 0;
		free_insts(&s);
		if (list_all(&s, q.data, on_inst, err) < 0 ||
		    build_indexes(&s, err) < 0 || plan_and_write(&s, err) < 0)
			goto out;
		stats->failed += s.conflicts;
	}
	if (stats->failed > 0) {
		lb_error_set(err, LB_EHTTP, "HubSpot refused %ld input(s) "
			     "(logged above); the next sync tries them again",
			     stats->failed);
		goto out;
	}
	rc = 0;
out:
	log_info("%s/%s: hubspot: %ld posts, %ld instances; %ld created, %ld "
		 "updated, %ld unchanged, %ld archived, %ld skipped, %ld failed; "
		 "%ld calls (%ld writes, %ld retries)", cl->id, ep->id,
		 stats->posts, stats->instances, stats->created, stats->updated,
		 stats->unchanged, stats->archived, stats->skipped,
		 stats->failed, stats->calls, stats->writes, stats->retries);
	lb_buf_release(&q);
	sync_release(&s);
	return rc;
}
