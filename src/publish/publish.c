/*
 * publish.c - push one folder of rendered objects to a store, incrementally
 * and never half-written; see publish.h and docs/publish.md.
 *
 * Design notes.
 *
 * The problem: a folder holds up to millions of small objects that a CDN
 * serves while the batch rewrites them. A run must upload only what
 * changed, delete what is gone, and survive being killed at any moment.
 *
 * Invariants:
 * 1. Every key a reader can reach holds a complete object: each object is
 *    replaced whole (directory: tmp + rename; S3: a PUT is atomic).
 * 2. A hash in manifest.json is the hash of the bytes stored under its key.
 *    So before touching any key of a folder that has a manifest, the run
 *    writes the manifest with every key it will upload or delete marked
 *    "" (pending: hash unknown), and
 *    new keys added as pending too. A killed or failed run leaves those
 *    marks; the next run uploads a pending key again if it still produces
 *    it (no hash equals "") and deletes it otherwise. Without the marks, a
 *    run that reverts a half-published change would find the old hash in
 *    the manifest and keep the newer bytes.
 * 3. Every object the batch ever wrote is named by the manifest (marks
 *    included), so that a later run can delete it; or, while a folder has
 *    no manifest at all, is under its pages/, where a run without a
 *    manifest lists what is there and takes it all as pending.
 * 4. The final manifest is written only after every upload and delete
 *    succeeded (store_flush()).
 *
 * Phases of publish_commit():
 *   read    old manifest (missing: list <folder>/pages/, hashes unknown)
 *   plan    sort the new objects; upload = hash differs; delete = old key
 *           not produced any more; unchanged = same hash
 *   mark    if anything is to change: write the old manifest with the keys
 *           to upload or delete, and the new keys, marked pending. Not
 *           when the folder has no manifest (a fresh endpoint, or one whose
 *           manifest was lost): the missing manifest already says "all
 *           pending" (a run after a kill or a power cut lists pages/ and
 *           uploads or deletes whatever it finds), and the objects a
 *           publish keeps outside pages/ (random.json, project.json) it
 *           produces every run. A fresh folder's commit so writes one
 *           manifest, not two, and syncs twice (data, manifest), not thrice.
 *   upload  queue every upload, flush (S3: many in flight)
 *   delete  queue every delete, flush
 *   commit  write the new manifest, flush
 * A failure in any phase returns -1 and leaves the marked manifest (or
 * none) in place; the next run converges. A run that changes nothing
 * writes nothing.
 *
 * Cost: O(n log n) to sort and look up, one manifest read, at most two
 * manifest writes, and one request per changed object.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <libdeflate.h>

#include "linkbot/buf.h"
#include "linkbot/layout.h"
#include "linkbot/log.h"
#include "linkbot/publish.h"
#include "linkbot/sha256.h"

#define HASH_HEX LB_SHA256_HEX_LEN
#define MANIFEST_MAX ((size_t)1 << 30)
#define PENDING ""

struct pub_obj {
	char *key;		/* relative to the folder */
	char *data;
	size_t len;
	char *content_type, *content_encoding, *cache_control;
	char hash[HASH_HEX + 1];
};

struct lb_publish {
	char *folder;
	struct pub_obj *obj;
	size_t n, alloc;
	double max_delete;	/* share of the old objects a commit may
				   delete; < 0: no limit */
};

/* One entry of the old manifest. */
struct old_ent {
	char *key;
	char *hash;		/* PENDING when unknown */
	int seen;		/* produced again by this run */
	int will_change;	/* to be uploaded or deleted by this run */
};

struct old_manifest {
	struct old_ent *v;
	size_t n, alloc;
};

struct lb_publish *publish_new(const char *folder)
{
	struct lb_publish *p = calloc(1, sizeof(*p));
	size_t n;

	if (p == NULL)
		return NULL;
	if ((p->folder = strdup(folder ? folder : "")) == NULL) {
		free(p);
		return NULL;
	}
	n = strlen(p->folder);
	while (n > 0 && p->folder[n - 1] == '/')
		p->folder[--n] = '\0';
	p->max_delete = -1;
	return p;
}

void publish_set_max_delete(struct lb_publish *p, double share)
{
	p->max_delete = share;
}

static void obj_release(struct pub_obj *o)
{
	free(o->key);
	free(o->data);
	free(o->content_type);
	free(o->content_encoding);
	free(o->cache_control);
}

void publish_free(struct lb_publish *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++)
		obj_release(&p->obj[i]);
	free(p->obj);
	free(p->folder);
	free(p);
}

static char *dup_or_null(const char *s, int *nomem)
{
	char *d;

	if (s == NULL)
		return NULL;
	if ((d = strdup(s)) == NULL)
		*nomem = 1;
	return d;
}

/* Adds key with data (malloc'd: owned from here on, freed on failure). */
static int add_obj(struct lb_publish *p, const char *key, char *data,
		   size_t len, const struct lb_object_meta *meta,
		   struct lb_error *err)
{
	struct pub_obj *o;
	int nomem = 0;

	if (key == NULL || *key == '\0' || strcmp(key, LAYOUT_MANIFEST) == 0) {
		free(data);
		return lb_error_set(err, LB_EINVALID,
				    "'%s' cannot be published as an object",
				    key ? key : "");
	}
	if (p->n == p->alloc) {
		size_t na = p->alloc ? p->alloc * 2 : 1024;
		struct pub_obj *v = realloc(p->obj, na * sizeof(*v));
		if (v == NULL) {
			free(data);
			return lb_error_set(err, LB_ENOMEM, "out of memory");
		}
		p->obj = v;
		p->alloc = na;
	}
	o = &p->obj[p->n];
	memset(o, 0, sizeof(*o));
	o->key = dup_or_null(key, &nomem);
	o->data = data;
	o->len = len;
	if (meta != NULL) {
		o->content_type = dup_or_null(meta->content_type, &nomem);
		o->content_encoding = dup_or_null(meta->content_encoding, &nomem);
		o->cache_control = dup_or_null(meta->cache_control, &nomem);
	}
	if (nomem) {
		obj_release(o);
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	}
	lb_sha256_hex(o->data, len, o->hash, HASH_HEX);
	p->n++;
	return 0;
}

int publish_add(struct lb_publish *p, const char *key, const void *data,
		size_t len, const struct lb_object_meta *meta,
		struct lb_error *err)
{
	char *copy = malloc(len ? len : 1);

	if (copy == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	if (len > 0)
		memcpy(copy, data, len);
	return add_obj(p, key, copy, len, meta, err);
}

int publish_add_owned(struct lb_publish *p, const char *key, char *data,
		      size_t len, const struct lb_object_meta *meta,
		      struct lb_error *err)
{
	if (data == NULL)
		return lb_error_set(err, LB_EINVALID, "no data for '%s'",
				    key ? key : "");
	return add_obj(p, key, data, len, meta, err);
}

static int cmp_obj(const void *a, const void *b)
{
	return strcmp(((const struct pub_obj *)a)->key,
		      ((const struct pub_obj *)b)->key);
}

static int cmp_old(const void *a, const void *b)
{
	return strcmp(((const struct old_ent *)a)->key,
		      ((const struct old_ent *)b)->key);
}

static void old_release(struct old_manifest *m)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		free(m->v[i].key);
		free(m->v[i].hash);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}

static int old_add(struct old_manifest *m, const char *key, const char *hash,
		   struct lb_error *err)
{
	if (m->n == m->alloc) {
		size_t na = m->alloc ? m->alloc * 2 : 1024;
		struct old_ent *v = realloc(m->v, na * sizeof(*v));
		if (v == NULL)
			return lb_error_set(err, LB_ENOMEM, "out of memory");
		m->v = v;
		m->alloc = na;
	}
	m->v[m->n].key = strdup(key);
	m->v[m->n].hash = strdup(hash);
	m->v[m->n].seen = 0;
	m->v[m->n].will_change = 0;
	if (m->v[m->n].key == NULL || m->v[m->n].hash == NULL) {
		free(m->v[m->n].key);
		free(m->v[m->n].hash);
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	}
	m->n++;
	return 0;
}

static struct old_ent *old_find(struct old_manifest *m, const char *key)
{
	struct old_ent probe;

	if (m->n == 0)
		return NULL;
	probe.key = (char *)key;
	return bsearch(&probe, m->v, m->n, sizeof(*m->v), cmp_old);
}

struct list_ctx {
	struct old_manifest *m;
	size_t skip;		/* strlen("<folder>/") */
	struct lb_error *err;
};

static int on_listed(const char *key, void *arg)
{
	struct list_ctx *c = arg;

	return old_add(c->m, key + c->skip, PENDING, c->err);
}

static char *folder_key(const struct lb_publish *p, const char *key)
{
	size_t nf = strlen(p->folder), nk = strlen(key);
	char *s = malloc(nf + nk + 2), *q;

	if (s == NULL)
		return NULL;
	q = s;	/* "folder/key", or "key" for the root folder */
	memcpy(q, p->folder, nf);
	q += nf;
	if (nf > 0)
		*q++ = '/';
	memcpy(q, key, nk + 1);
	return s;
}

/*
 * Reads the folder's manifest. Without one (first run, or lost), what the
 * folder's pages/ hold is taken as published with unknown hashes, so that
 * pages gone since are still deleted.
 */
static int read_manifest(struct lb_publish *p, struct lb_store *st,
			 struct old_manifest *m, int *found, struct lb_error *err)
{
	struct lb_error gerr;
	cJSON *root = NULL;
	const cJSON *objs, *it;
	char *key = NULL, *text = NULL;
	size_t len = 0;
	int rc = -1;

	lb_error_init(&gerr);
	*found = 0;
	if ((key = folder_key(p, LAYOUT_MANIFEST)) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	if (store_get(st, key, &text, &len, &gerr) < 0) {
		struct list_ctx c;
		char *prefix;

		if (gerr.code != LB_ENOTFOUND) {
			lb_error_set(err, gerr.code == LB_ENOMEM ? LB_ENOMEM :
				     LB_ESTORE, "cannot read '%s': %s", key,
				     gerr.msg);
			goto out;
		}
		if ((prefix = folder_key(p, LAYOUT_PAGES)) == NULL) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		c.m = m;
		c.skip = strlen(prefix) - strlen(LAYOUT_PAGES);
		c.err = err;
		rc = store_list(st, prefix, on_listed, &c, err);
		free(prefix);
		if (rc < 0)
			goto out;
		log_debug("%s: no manifest; %zu objects found in pages/",
			  p->folder, m->n);
		goto sort;
	}
	*found = 1;
	if ((root = cJSON_ParseWithLength(text, len)) == NULL ||
	    !cJSON_IsObject(objs = cJSON_GetObjectItemCaseSensitive(root,
								    "objects"))) {
		lb_error_set(err, LB_ESTORE, "'%s' is not a manifest", key);
		goto out;
	}
	cJSON_ArrayForEach(it, objs) {
		if (!cJSON_IsString(it) || it->string == NULL)
			continue;
		if (old_add(m, it->string, it->valuestring, err) < 0)
			goto out;
	}
sort:
	if (m->n > 1)
		qsort(m->v, m->n, sizeof(*m->v), cmp_old);
	rc = 0;
out:
	cJSON_Delete(root);
	free(text);
	free(key);
	return rc;
}

static int add_json_key(struct lb_buf *b, const char *s, struct lb_error *err)
{
	/* Keys are store keys: no control characters, no backslash. */
	size_t n;

	if (lb_buf_addc(b, '"', err) < 0)
		return -1;
	for (;;) {	/* the runs between quotes whole */
		n = strcspn(s, "\"");
		if (lb_buf_add(b, s, n, err) < 0)
			return -1;
		s += n;
		if (*s == '\0')
			break;
		if (lb_buf_adds(b, "\\\"", err) < 0)
			return -1;
		s++;
	}
	return lb_buf_addc(b, '"', err);
}

/* One manifest line. */
static int add_entry(struct lb_buf *b, int *first, const char *key,
		     const char *hash, struct lb_error *err)
{
	if (lb_buf_adds(b, *first ? "\n  " : ",\n  ", err) < 0 ||
	    add_json_key(b, key, err) < 0 || lb_buf_addc(b, ':', err) < 0 ||
	    add_json_key(b, hash, err) < 0)
		return -1;
	*first = 0;
	return 0;
}

static const struct lb_object_meta manifest_meta = {
	"application/json", NULL, "no-store"
};

/*
 * Writes the manifest: with pending set, the old entries, those to upload
 * or delete marked PENDING, merged with this run's new keys (PENDING);
 * else the new objects with their hashes. Both are sorted by key.
 */
static int write_manifest(struct lb_publish *p, struct lb_store *st,
			  struct old_manifest *old, int pending,
			  struct lb_error *err)
{
	struct lb_buf b;
	char *key = NULL;
	size_t i = 0, j = 0;
	int first = 1, rc = -1;

	lb_buf_init(&b, MANIFEST_MAX);
	if (lb_buf_adds(&b, "{\"objects\": {", err) < 0)
		goto out;
	if (!pending) {
		for (i = 0; i < p->n; i++)
			if (add_entry(&b, &first, p->obj[i].key, p->obj[i].hash,
				      err) < 0)
				goto out;
	} else {
		/* Merge the old entries with the keys the old one lacks. */
		while (i < old->n || j < p->n) {
			int c;
			struct old_ent *e;

			if (j < p->n && old_find(old, p->obj[j].key) != NULL) {
				j++;
				continue;
			}
			c = i >= old->n ? 1 : j >= p->n ? -1 :
				strcmp(old->v[i].key, p->obj[j].key);
			if (c <= 0) {
				e = &old->v[i++];
				if (add_entry(&b, &first, e->key,
					      e->will_change ? PENDING : e->hash,
					      err) < 0)
					goto out;
			} else {
				if (add_entry(&b, &first, p->obj[j].key,
					      PENDING, err) < 0)
					goto out;
				j++;
			}
		}
	}
	if (lb_buf_adds(&b, first ? "}}\n" : "\n}}\n", err) < 0)
		goto out;
	if ((key = folder_key(p, LAYOUT_MANIFEST)) == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	if (store_put(st, key, b.data, b.len, &manifest_meta, err) < 0 ||
	    store_flush(st, err) < 0)
		goto out;
	rc = 0;
out:
	free(key);
	lb_buf_release(&b);
	return rc;
}

int publish_commit(struct lb_publish *p, struct lb_store *st, int dry_run,
		   struct lb_publish_stats *stats, struct lb_error *err)
{
	struct old_manifest old = { NULL, 0, 0 };
	struct lb_publish_stats s;
	char *upload = NULL, *key = NULL;
	size_t i;
	int rc = -1, had_manifest = 0;

	memset(&s, 0, sizeof(s));
	if (p->n > 1)
		qsort(p->obj, p->n, sizeof(*p->obj), cmp_obj);
	for (i = 1; i < p->n; i++)
		if (strcmp(p->obj[i - 1].key, p->obj[i].key) == 0)
			return lb_error_set(err, LB_EINVALID,
					    "'%s/%s' was added twice",
					    p->folder, p->obj[i].key);
	if (read_manifest(p, st, &old, &had_manifest, err) < 0)
		goto out;
	if ((upload = calloc(p->n + 1, 1)) == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}

	/* plan */
	s.objects = (long)p->n;
	for (i = 0; i < p->n; i++) {
		struct old_ent *e = old_find(&old, p->obj[i].key);

		if (e != NULL)
			e->seen = 1;
		if (e != NULL && strcmp(e->hash, p->obj[i].hash) == 0) {
			s.unchanged++;
			continue;
		}
		upload[i] = 1;
		if (e != NULL)
			e->will_change = 1;
		s.uploaded++;
		s.bytes_uploaded += (long long)p->obj[i].len;
	}
	for (i = 0; i < old.n; i++) {
		if (!old.v[i].seen) {
			old.v[i].will_change = 1;
			s.deleted++;
		}
	}

	/*
	 * The safety valve: a night that would delete more than max_delete of
	 * what is published (a sitemap that suddenly lists a fraction of the
	 * site, a half-deployed site) changes nothing at all, not even the
	 * answers that stay, until the operator confirms.
	 */
	if (p->max_delete >= 0 && old.n > 0 &&
	    (double)s.deleted > p->max_delete * (double)old.n) {
		lb_error_set(err, LB_ESHRINK,
			     "would delete %ld of the %zu objects published in "
			     "'%s' (%.0f %%), more than the %.0f %% its max_shrink "
			     "allows: nothing changed; if the site really "
			     "shrank, run again with --allow-shrink",
			     s.deleted, old.n, p->folder,
			     100.0 * (double)s.deleted / (double)old.n,
			     100.0 * p->max_delete);
		goto out;
	}
	if (dry_run) {
		for (i = 0; i < p->n; i++)
			if (upload[i])
				printf("would upload %s%s%s (%zu bytes)\n",
				       p->folder, *p->folder ? "/" : "",
				       p->obj[i].key, p->obj[i].len);
		for (i = 0; i < old.n; i++)
			if (!old.v[i].seen)
				printf("would delete %s%s%s\n", p->folder,
				       *p->folder ? "/" : "", old.v[i].key);
		printf("%s: would upload %ld objects (%lld bytes), delete %ld, "
		       "keep %ld unchanged\n", p->folder, s.uploaded,
		       s.bytes_uploaded, s.deleted, s.unchanged);
		rc = 0;
		goto out;
	}
	if (s.uploaded == 0 && s.deleted == 0) {
		rc = 0;		/* nothing changed: not even the manifest */
		goto out;
	}

	/* mark (a folder without a manifest is all pending already) */
	if (had_manifest && write_manifest(p, st, &old, 1, err) < 0)
		goto out;

	/* upload */
	for (i = 0; i < p->n; i++) {
		struct pub_obj *o = &p->obj[i];
		struct lb_object_meta meta = { o->content_type,
					       o->content_encoding,
					       o->cache_control };
		if (!upload[i])
			continue;
		free(key);
		if ((key = folder_key(p, o->key)) == NULL) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		if (store_put(st, key, o->data, o->len, &meta, err) < 0)
			goto out;
	}
	if (store_flush(st, err) < 0)
		goto out;

	/* delete */
	for (i = 0; i < old.n; i++) {
		if (old.v[i].seen)
			continue;
		free(key);
		if ((key = folder_key(p, old.v[i].key)) == NULL) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		if (store_delete(st, key, err) < 0)
			goto out;
	}
	if (store_flush(st, err) < 0)
		goto out;

	/* commit */
	if (write_manifest(p, st, &old, 0, err) < 0)
		goto out;
	rc = 0;
out:
	if (stats != NULL)
		*stats = s;
	if (rc < 0 && !dry_run) {
		struct lb_error ignore;
		lb_error_init(&ignore);
		store_flush(st, &ignore);	/* let queued requests end */
	}
	free(key);
	free(upload);
	old_release(&old);
	return rc;
}

/*
 * gzip with libdeflate: one-shot compression of a whole buffer, which is
 * what an answer is (~1.3 KB). zlib's streaming deflate at level 9 took
 * ~15 us an answer and ~19 M instructions a 100-page site (a fifth of a
 * client's whole build and publish); libdeflate's level 9 takes ~11 us
 * and writes 0.1 % fewer bytes on the same answers (bench/RESULTS.md,
 * "the tail, round 3"). Its gzip wrapper has no name, mtime 0, and OS
 * "unknown" (255): the same input gives the same bytes. The compressor
 * (its hash tables, 657 KiB at level 9) is made once per publish of an
 * endpoint and used for all its answers.
 *
 * A night runs every client in its own thread (hundreds at once, a few of
 * them publishing), so a compressor freed at the end of a publish goes to a
 * small pool that the next publish takes it from: its 657 KiB are touched
 * once per process rather than once per client (each client's were fresh
 * pages: ~50 page faults a client for the match finder's hash tables,
 * cleared by the kernel, then cleared again by libdeflate). A compressor
 * keeps no state from one call to the next that changes its output: each
 * libdeflate_gzip_compress() starts from reset tables, so a pooled one
 * gives the bytes a new one gives (test_publish's test_gzip_pool).
 */
#define GZIP_LEVEL 9
#define GZIP_POOL_MAX 16	/* kept idle; more than a night's build_jobs */

struct lb_gzip {
	struct libdeflate_compressor *c;
	struct lb_gzip *next;	/* in the pool */
};

static pthread_mutex_t gzip_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lb_gzip *gzip_pool;
static size_t gzip_pool_n;

struct lb_gzip *lb_gzip_new(void)
{
	struct lb_gzip *gz;

	pthread_mutex_lock(&gzip_pool_lock);
	if ((gz = gzip_pool) != NULL) {
		gzip_pool = gz->next;
		gzip_pool_n--;
	}
	pthread_mutex_unlock(&gzip_pool_lock);
	if (gz != NULL) {
		gz->next = NULL;
		return gz;
	}
	gz = calloc(1, sizeof(struct lb_gzip));
	if (gz != NULL &&
	    (gz->c = libdeflate_alloc_compressor(GZIP_LEVEL)) == NULL) {
		free(gz);
		gz = NULL;
	}
	return gz;
}

void lb_gzip_free(struct lb_gzip *gz)
{
	if (gz == NULL)
		return;
	pthread_mutex_lock(&gzip_pool_lock);
	if (gzip_pool_n < GZIP_POOL_MAX) {
		gz->next = gzip_pool;
		gzip_pool = gz;
		gzip_pool_n++;
		gz = NULL;
	}
	pthread_mutex_unlock(&gzip_pool_lock);
	if (gz == NULL)
		return;
	libdeflate_free_compressor(gz->c);
	free(gz);
}

size_t lb_gzip_pool_drain(void)
{
	struct lb_gzip *gz, *next;
	size_t n;

	pthread_mutex_lock(&gzip_pool_lock);
	gz = gzip_pool;
	n = gzip_pool_n;
	gzip_pool = NULL;
	gzip_pool_n = 0;
	pthread_mutex_unlock(&gzip_pool_lock);
	for (; gz != NULL; gz = next) {
		next = gz->next;
		libdeflate_free_compressor(gz->c);
		free(gz);
	}
	return n;
}

int lb_gzip_run(struct lb_gzip *gz, const void *data, size_t len, char **out,
		size_t *out_len, struct lb_error *err)
{
	size_t bound = libdeflate_gzip_compress_bound(gz->c, len), n;
	char *buf;

	*out = NULL;
	if ((buf = malloc(bound)) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	n = libdeflate_gzip_compress(gz->c, data, len, buf, bound);
	if (n == 0) {	/* cannot happen with the bound's room */
		free(buf);
		return lb_error_set(err, LB_EINTERNAL, "gzip did not finish");
	}
	if (n < bound) {	/* in place: the publish keeps it till commit */
		char *fit = realloc(buf, n);
		if (fit != NULL)
			buf = fit;
	}
	*out_len = n;
	*out = buf;
	return 0;
}

int lb_gzip(const void *data, size_t len, char **out, size_t *out_len,
	    struct lb_error *err)
{
	struct lb_gzip *gz = lb_gzip_new();
	int rc;

	*out = NULL;
	if (gz == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	rc = lb_gzip_run(gz, data, len, out, out_len, err);
	lb_gzip_free(gz);
	return rc;
}

int publish_keep_updated(struct lb_store *st, const char *key, cJSON *o)
{
	struct lb_error err;
	char *data = NULL, *mine = NULL;
	size_t len = 0;
	cJSON *old = NULL, *was, *now;
	int same = 0;

	lb_error_init(&err);
	if (store_get(st, key, &data, &len, &err) < 0)
		goto out;	/* missing or unreadable: write it anew */
	if ((old = cJSON_ParseWithLength(data, len)) == NULL ||
	    !cJSON_IsObject(old))
		goto out;
	was = cJSON_GetObjectItemCaseSensitive(old, "updated");
	now = cJSON_GetObjectItemCaseSensitive(o, "updated");
	if (!cJSON_IsString(was) || !cJSON_IsString(now) ||
	    (mine = strdup(now->valuestring)) == NULL)
		goto out;
	if (!cJSON_ReplaceItemInObjectCaseSensitive(o, "updated",
			cJSON_CreateString(was->valuestring)))
		goto out;
	same = cJSON_Compare(old, o, 1);
	if (!same)	/* the content changed: the new time stands */
		cJSON_ReplaceItemInObjectCaseSensitive(o, "updated",
			cJSON_CreateString(mine));
out:
	free(mine);
	cJSON_Delete(old);
	free(data);
	return same;
}
