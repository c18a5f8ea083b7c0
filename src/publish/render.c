/*
 * render.c - the JSON answer of one page, per variant; see render.h.
 *
 * JSON is written by hand into a capped buffer rather than through cJSON:
 * the key order is part of the output (byte-identical answers keep the
 * manifest quiet), and a publish renders a million small objects.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/buf.h"
#include "linkbot/pageid.h"
#include "linkbot/render.h"
#include "linkbot/urlpattern.h"
#include "linkbot/url.h"
#include "linkbot/utf8.h"

#define OTHER_MAX 2048		/* characters of any other string field */
#define LIST_ITEM_MAX 200	/* characters of one author or category */
#define LIST_MAX 32		/* entries of one author or category list */
#define CUT_BACK 30		/* look this far back for a word boundary */

enum clean_mode {
	CLEAN_TEXT,	/* collapse white space and control characters */
	CLEAN_URL,	/* keep as is, drop control characters and spaces */
};

/*
 * Decodes one UTF-8 sequence at s (n bytes left). Returns its length and
 * sets *cp, or returns 1 with *cp = U+FFFD for an invalid sequence
 * (overlong, surrogate, beyond U+10FFFF, truncated).
 */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c = s[0], min;
	size_t len, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
		c &= 0x1F;
		min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		c &= 0x0F;
		min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		goto bad;
	}
	if (len > n)
		goto bad;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			goto bad;
		c = (c << 6) | (s[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		goto bad;
	*cp = c;
	return len;
bad:
	*cp = 0xFFFD;
	return 1;
}


static int is_space_or_control(uint32_t cp)
{
	return cp <= 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0) ||
	       cp == 0x2028 || cp == 0x2029;
}

/* One more output character, starting at byte o (kept for the first max). */
static inline void char_start(size_t *starts, size_t *chars, size_t max,
			      size_t o)
{
	if (*chars < max)
		starts[*chars] = o;
	(*chars)++;
}

/*
 * The clean copy of s (see render.h); NULL when nothing is left or on no
 * memory (*nomem set).
 */
static char *clean(const char *s, enum clean_mode mode, size_t max_chars,
		   int *nomem)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n, i = 0, o = 0, chars = 0, cut = 0, cut_chars = 0;
	size_t *starts = NULL;	/* byte offset of the first max_chars output
				   characters: where a cut may fall */
	char *out = NULL;
	int space = 0;

	*nomem = 0;
	if (s == NULL)
		return NULL;
	n = strlen(s);
	/* Each input byte gives at most 3 output bytes (U+FFFD), + ellipsis. */
	out = malloc(n * 3 + 4);
	starts = malloc((max_chars < n ? max_chars : n) * sizeof(*starts) + 1);
	if (out == NULL || starts == NULL) {
		*nomem = 1;
		goto fail;
	}
	while (i < n) {
		uint32_t cp;
		char enc[4];
		size_t k;

		if (p[i] > 0x20 && p[i] < 0x7F) {
			/* a run of printable ASCII (most text): the bytes */
			if (space) {
				char_start(starts, &chars, max_chars, o);
				out[o++] = ' ';
				space = 0;
			}
			do {
				char_start(starts, &chars, max_chars, o);
				out[o++] = (char)p[i++];
			} while (i < n && p[i] > 0x20 && p[i] < 0x7F);
			continue;
		}
		i += utf8_decode(p + i, n - i, &cp);
		if (cp == 0xFEFF)
			continue;	/* byte order mark: invisible noise */
		if (is_space_or_control(cp)) {
			if (mode == CLEAN_TEXT)
				space = chars > 0;
			continue;
		}
		if (space) {
			char_start(starts, &chars, max_chars, o);
			out[o++] = ' ';
			space = 0;
		}
		char_start(starts, &chars, max_chars, o);
		k = lb_utf8_put(enc, cp);
		memcpy(out + o, enc, k);
		o += k;
	}
	if (chars == 0)
		goto fail;
	if (max_chars > 0 && chars > max_chars) {
		/* Keep max_chars - 1 characters and an ellipsis. */
		cut_chars = max_chars - 1;
		cut = starts[cut_chars];
		if (mode == CLEAN_TEXT) {
			size_t j;
			for (j = cut_chars; j > 0 && j + CUT_BACK > cut_chars; j--) {
				if (out[starts[j]] == ' ') {
					cut_chars = j;
					cut = starts[j];
					break;
				}
			}
			while (cut > 0 && strchr(" ,;:-", out[cut - 1]) != NULL)
				cut--;
		}
		memcpy(out + cut, "\xE2\x80\xA6", 3);	/* U+2026 */
		o = cut + 3;
	}
	out[o] = '\0';
	free(starts);
	return out;
fail:
	free(out);
	free(starts);
	return NULL;
}

char *render_clean_text(const char *s, size_t max_chars)
{
	int nomem;

	return clean(s, CLEAN_TEXT, max_chars, &nomem);
}

char *render_clean_url(const char *s, size_t max_chars)
{
	int nomem;

	return clean(s, CLEAN_URL, max_chars, &nomem);
}

/* Appends s as a JSON string; s is valid UTF-8 without control chars. */
static int add_json_str(struct lb_buf *b, const char *s, struct lb_error *err)
{
	const char *run = s;

	if (lb_buf_addc(b, '"', err) < 0)
		return -1;
	for (; *s != '\0'; s++) {
		const char *esc = NULL;
		char tmp[8];
		unsigned char c = (unsigned char)*s;

		if (c == '"')
			esc = "\\\"";
		else if (c == '\\')
			esc = "\\\\";
		else if (c < 0x20) {
			snprintf(tmp, sizeof(tmp), "\\u%04x", c);
			esc = tmp;
		} else if (c == 0xE2 && (unsigned char)s[1] == 0x80 &&
			   ((unsigned char)s[2] == 0xA8 ||
			    (unsigned char)s[2] == 0xA9)) {
			/* U+2028/U+2029 break JavaScript string literals. */
			esc = (unsigned char)s[2] == 0xA8 ? "\\u2028" : "\\u2029";
			if (lb_buf_add(b, run, (size_t)(s - run), err) < 0 ||
			    lb_buf_adds(b, esc, err) < 0)
				return -1;
			s += 2;
			run = s + 1;
			continue;
		}
		if (esc == NULL)
			continue;
		if (lb_buf_add(b, run, (size_t)(s - run), err) < 0 ||
		    lb_buf_adds(b, esc, err) < 0)
			return -1;
		run = s + 1;
	}
	if (lb_buf_add(b, run, (size_t)(s - run), err) < 0)
		return -1;
	return lb_buf_addc(b, '"', err);
}

/* ,"key": (key is a name of ours: nothing to escape) */
static int add_key(struct lb_buf *b, const char *key, struct lb_error *err)
{
	if (lb_buf_add(b, ",\"", 2, err) < 0 || lb_buf_adds(b, key, err) < 0)
		return -1;
	return lb_buf_add(b, "\":", 2, err);
}

/* "key": value-of-s (cleaned), or null when the clean form is empty. */
static int add_field(struct lb_buf *b, const char *key, const char *s,
		     enum clean_mode mode, size_t max, const char *if_null,
		     struct lb_error *err)
{
	char *c;
	int nomem, rc;

	if (add_key(b, key, err) < 0)
		return -1;
	c = clean(s, mode, max, &nomem);
	if (nomem)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	if (c == NULL)
		return if_null ? add_json_str(b, if_null, err) :
				 lb_buf_adds(b, "null", err);
	rc = add_json_str(b, c, err);
	free(c);
	return rc;
}

static int add_list_field(struct lb_buf *b, const char *key,
			  const struct lb_strlist *l, struct lb_error *err)
{
	size_t i, written = 0;
	int nomem;

	if (add_key(b, key, err) < 0)
		return -1;
	for (i = 0; i < l->n && written < LIST_MAX; i++) {
		char *c = clean(l->v[i], CLEAN_TEXT, LIST_ITEM_MAX, &nomem);
		int rc;

		if (nomem)
			return lb_error_set(err, LB_ENOMEM, "out of memory");
		if (c == NULL)
			continue;
		rc = lb_buf_adds(b, written == 0 ? "[" : ",", err);
		if (rc == 0)
			rc = add_json_str(b, c, err);
		free(c);
		if (rc < 0)
			return -1;
		written++;
	}
	return lb_buf_adds(b, written ? "]" : "null", err);
}

/* The path of an absolute or path-only URL: no query, no fragment. */
static char *path_of_url(const char *url)
{
	struct lb_url_parts u;

	lb_url_split(url, strcspn(url, "#"), &u);
	return u.path_n == 0 ? strdup("/") : strndup(u.path, u.path_n);
}
/* type, title, url, url_path: the four non-null fields. */
static int add_core(struct lb_buf *b, const struct lb_doc *d,
		    enum lb_link_type type, int standard, struct lb_error *err)
{
	char *path = NULL;
	const char *url_path = d->url_path;
	int rc = -1;

	if (url_path == NULL) {
		if ((path = path_of_url(d->url)) == NULL)
			return lb_error_set(err, LB_ENOMEM, "out of memory");
		url_path = path;
	}
	if (lb_buf_adds(b, type == LB_LINK_RANDOM ? "{\"type\":\"random\"" :
			"{\"type\":\"related\"", err) < 0)
		goto out;
	if (standard) {
		/* SPEC 2.3 order: the optional fields between type and title. */
		if (add_list_field(b, "author", &d->author, err) < 0 ||
		    add_list_field(b, "category", &d->category, err) < 0 ||
		    add_field(b, "description", d->description, CLEAN_TEXT,
			      LB_RENDER_DESC_MAX, NULL, err) < 0 ||
		    add_field(b, "image_url", d->image_url, CLEAN_URL,
			      OTHER_MAX, NULL, err) < 0 ||
		    add_field(b, "language", d->language, CLEAN_TEXT,
			      OTHER_MAX, NULL, err) < 0 ||
		    add_field(b, "location", d->location, CLEAN_TEXT,
			      OTHER_MAX, NULL, err) < 0 ||
		    add_field(b, "published_time", d->published_time,
			      CLEAN_TEXT, OTHER_MAX, NULL, err) < 0 ||
		    add_field(b, "read_time", d->read_time, CLEAN_TEXT,
			      OTHER_MAX, NULL, err) < 0)
			goto out;
	}
	if (add_field(b, "title", d->title ? d->title : url_path, CLEAN_TEXT,
		      LB_RENDER_TITLE_MAX, url_path, err) < 0 ||
	    add_field(b, "url", d->url, CLEAN_URL, 0, "/", err) < 0 ||
	    add_field(b, "url_path", url_path, CLEAN_URL, 0, "/", err) < 0)
		goto out;
	if (standard && add_field(b, "url_qs_params", d->url_qs_params,
				  CLEAN_URL, OTHER_MAX, NULL, err) < 0)
		goto out;
	rc = 0;
out:
	free(path);
	return rc;
}

/* An enterprise extra index field, by its doc field name. */
static int add_extra(struct lb_buf *b, const struct lb_doc *d,
		     const char *name, struct lb_error *err)
{
	static const char *const core[] = { "type", "title", "url", "url_path" };
	size_t i;

	for (i = 0; i < sizeof(core) / sizeof(core[0]); i++)
		if (strcmp(name, core[i]) == 0)
			return 0;	/* already there */
#define LB_EXTRA_STR(fname)                                                   \
	if (strcmp(name, #fname) == 0)                                        \
		return add_field(b, name, d->fname,                           \
				 strstr(#fname, "url") ? CLEAN_URL : CLEAN_TEXT, \
				 strcmp(#fname, "description") == 0 ?          \
					 LB_RENDER_DESC_MAX : OTHER_MAX,       \
				 NULL, err);
	LB_DOC_STR_FIELDS(LB_EXTRA_STR)
#undef LB_EXTRA_STR
#define LB_EXTRA_LIST(fname)                                                  \
	if (strcmp(name, #fname) == 0)                                        \
		return add_list_field(b, name, &d->fname, err);
	LB_DOC_LIST_FIELDS(LB_EXTRA_LIST)
#undef LB_EXTRA_LIST
	if (strcmp(name, "text") == 0)
		return add_field(b, name, d->text, CLEAN_TEXT,
				 LB_RENDER_TEXT_MAX, NULL, err);
	/* Not an index field: null, as for a field without data. */
	if (lb_buf_adds(b, ",", err) < 0 || add_json_str(b, name, err) < 0)
		return -1;
	return lb_buf_adds(b, ":null", err);
}

static int add_link(struct lb_buf *b, const struct lb_endpoint *ep,
		    const struct lb_doc *d, enum lb_link_type type,
		    struct lb_error *err)
{
	int standard = ep->variant == LB_VARIANT_STANDARD;
	size_t i;

	if (add_core(b, d, type, standard, err) < 0)
		return -1;
	for (i = 0; !standard && i < ep->extra_fields.n; i++)
		if (add_extra(b, d, ep->extra_fields.v[i], err) < 0)
			return -1;
	return lb_buf_addc(b, '}', err);
}

char *render_link_json(const struct lb_endpoint *ep,
		       const struct lb_doc *doc, enum lb_link_type type,
		       struct lb_error *err)
{
	struct lb_buf b;

	if (doc == NULL || doc->url == NULL) {
		lb_error_set(err, LB_EINVALID, "a link target has no URL");
		return NULL;
	}
	lb_buf_init(&b, LB_RENDER_MAX_BYTES);
	if (add_link(&b, ep, doc, type, err) < 0) {
		lb_buf_release(&b);
		return NULL;
	}
	return lb_buf_take(&b);
}

/*
 * What the answers of one endpoint share (render_cache_new()): a target is
 * linked from about `links` pages, so its link object (one per type) and
 * its page-ID key are made the first time and copied after. Entries are
 * keyed by the doc's address (the docs outlive the cache); past
 * max_bytes, docs are no longer remembered and are rendered each time, as
 * without a cache. The bytes are the same either way.
 */
struct cache_ent {
	const struct lb_doc *doc;	/* NULL: an empty slot */
	char *key;			/* page-ID key; NULL: not linkable */
	char *json[2];			/* related, random; NULL: not yet */
	size_t len[2];
	int keyed;			/* key is known (NULL or not) */
};

struct lb_render_cache {
	const struct lb_endpoint *ep;
	struct cache_ent *slot;
	size_t cap, n;			/* cap a power of two */
	size_t bytes, max_bytes;
};

#define CACHE_FIRST 256

struct lb_render_cache *render_cache_new(const struct lb_endpoint *ep,
					 size_t max_bytes)
{
	struct lb_render_cache *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->ep = ep;
	c->max_bytes = max_bytes;
	return c;
}

void render_cache_free(struct lb_render_cache *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->cap; i++) {
		free(c->slot[i].key);
		free(c->slot[i].json[0]);
		free(c->slot[i].json[1]);
	}
	free(c->slot);
	free(c);
}

static size_t cache_hash(const struct lb_doc *d, size_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)d;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x & (cap - 1);
}

static int cache_grow(struct lb_render_cache *c)
{
	size_t cap = c->cap ? c->cap * 2 : CACHE_FIRST, i, j;
	struct cache_ent *slot = calloc(cap, sizeof(*slot));

	if (slot == NULL)
		return -1;
	for (i = 0; i < c->cap; i++) {
		if (c->slot[i].doc == NULL)
			continue;
		j = cache_hash(c->slot[i].doc, cap);
		while (slot[j].doc != NULL)
			j = (j + 1) & (cap - 1);
		slot[j] = c->slot[i];
	}
	free(c->slot);
	c->slot = slot;
	c->cap = cap;
	return 0;
}

/* The entry of d, made when new; NULL: no cache, full, or no memory (the
 * caller then renders without it). */
static struct cache_ent *cache_get(struct lb_render_cache *c,
				   const struct lb_doc *d)
{
	size_t j;

	if (c == NULL || d == NULL)
		return NULL;
	if (c->cap > 0) {
		j = cache_hash(d, c->cap);
		while (c->slot[j].doc != NULL) {
			if (c->slot[j].doc == d)
				return &c->slot[j];
			j = (j + 1) & (c->cap - 1);
		}
	}
	if (c->bytes >= c->max_bytes)
		return NULL;
	if (2 * (c->n + 1) > c->cap) {
		if (cache_grow(c) < 0)
			return NULL;
	}
	j = cache_hash(d, c->cap);
	while (c->slot[j].doc != NULL)
		j = (j + 1) & (c->cap - 1);
	c->slot[j].doc = d;
	c->n++;
	c->bytes += 2 * sizeof(struct cache_ent);
	return &c->slot[j];
}

/*
 * The page-ID key of d under rule into *key (NULL: not a linkable URL);
 * *owned when the caller frees it. -1 only on no memory.
 */
static int link_key(struct lb_render_cache *c, const struct lb_qrule *rule,
		    const struct lb_doc *d, char **key, int *owned)
{
	struct cache_ent *e = cache_get(c, d);
	struct lb_error ignore;

	*key = NULL;
	*owned = 0;
	if (e != NULL && e->keyed) {
		*key = e->key;
		return 0;
	}
	lb_error_init(&ignore);
	if (pageid_normalize(d->url, rule, key, &ignore) < 0) {
		*key = NULL;
		if (ignore.code == LB_ENOMEM)
			return -1;
	}
	if (e != NULL) {
		e->key = *key;
		e->keyed = 1;
		c->bytes += *key ? strlen(*key) + 1 : 0;
	} else {
		*owned = *key != NULL;
	}
	return 0;
}

/*
 * Keeps the first link of each page ID and drops the page self: keep[i] is
 * set for the links to render. The ID is the page-ID key (path and kept
 * query), so "/a/" and "https://Host:443/a" are one target.
 */
static int dedupe(struct lb_render_cache *cache, const struct lb_qrule *rule,
		  const struct lb_doc *self,
		  const struct lb_render_link *links, size_t n, char *keep,
		  struct lb_error *err)
{
	char **keys = NULL, *self_key = NULL;
	char *owned = NULL;
	int self_owned = 0, own;
	size_t i, j;
	int rc = -1;

	if ((keys = calloc(n + 1, sizeof(*keys))) == NULL ||
	    (owned = calloc(n + 1, 1)) == NULL) {
		free(keys);
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	}
	/* the self's key: any failure (no memory too) is no self filter */
	if (self != NULL && self->url != NULL &&
	    link_key(cache, rule, self, &self_key, &self_owned) < 0)
		self_key = NULL;
	for (i = 0; i < n; i++) {
		keep[i] = 0;
		if (links[i].doc == NULL || links[i].doc->url == NULL)
			continue;
		if (link_key(cache, rule, links[i].doc, &keys[i], &own) < 0) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		owned[i] = (char)own;
		if (keys[i] == NULL)
			continue;	/* not a linkable URL */
		if (self_key != NULL && strcmp(keys[i], self_key) == 0)
			continue;
		keep[i] = 1;
		for (j = 0; j < i; j++) {
			if (keep[j] && strcmp(keys[j], keys[i]) == 0) {
				keep[i] = 0;
				break;
			}
		}
	}
	rc = 0;
out:
	for (i = 0; i < n; i++)
		if (owned[i])
			free(keys[i]);
	free(keys);
	free(owned);
	if (self_owned)
		free(self_key);
	return rc;
}

/* Appends the link object of d (type) from the cache, made there first
 * when there is room; without it, rendered in place. */
static int add_link_cached(struct lb_buf *b, struct lb_render_cache *c,
			   const struct lb_endpoint *ep,
			   const struct lb_doc *d, enum lb_link_type type,
			   struct lb_error *err)
{
	struct cache_ent *e = cache_get(c, d);
	int t = type == LB_LINK_RANDOM;
	struct lb_buf one;

	if (e == NULL)
		return add_link(b, ep, d, type, err);
	if (e->json[t] == NULL) {
		lb_buf_init(&one, LB_RENDER_MAX_BYTES);
		if (add_link(&one, ep, d, type, err) < 0) {
			lb_buf_release(&one);
			return -1;
		}
		e->len[t] = one.len;
		if ((e->json[t] = lb_buf_take(&one)) == NULL)
			return lb_error_set(err, LB_ENOMEM, "out of memory");
		c->bytes += e->len[t] + 1;
	}
	return lb_buf_add(b, e->json[t], e->len[t], err);
}

static void ep_rule(const struct lb_endpoint *ep, struct lb_qrule *rule)
{
	rule->keep_all = ep->query_keep_all;
	rule->names = (const char *const *)ep->query_params.v;
	rule->n_names = ep->query_params.n;
}

/* Appends a count in decimal. */
static int add_count(struct lb_buf *b, size_t v, struct lb_error *err)
{
	char d[24];
	size_t i = sizeof(d);

	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0);
	return lb_buf_add(b, d + i, sizeof(d) - i, err);
}

static char *answer(const struct lb_endpoint *ep, struct lb_render_cache *c,
		    const struct lb_doc *self,
		    const struct lb_render_link *links, size_t n,
		    struct lb_error *err)
{
	struct lb_qrule rule;
	struct lb_buf b;
	char *keep = NULL;
	size_t i, written = 0, related = 0, random = 0;

	lb_buf_init(&b, LB_RENDER_MAX_BYTES);
	ep_rule(ep, &rule);
	if ((keep = malloc(n + 1)) == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto fail;
	}
	if (dedupe(c, &rule, self, links, n, keep, err) < 0)
		goto fail;
	for (i = 0; i < n; i++) {
		if (!keep[i])
			continue;
		if (links[i].type == LB_LINK_RANDOM)
			random++;
		else
			related++;
	}
	/* {"message":"N link(s): R related, X random.","related_links":[ */
	if (related + random == 0) {
		if (lb_buf_adds(&b, "{\"message\":\"No links for this page.\","
				    "\"related_links\":[", err) < 0)
			goto fail;
	} else if (lb_buf_adds(&b, "{\"message\":\"", err) < 0 ||
		   add_count(&b, related + random, err) < 0 ||
		   lb_buf_adds(&b, related + random == 1 ? " link: " :
			       " links: ", err) < 0 ||
		   add_count(&b, related, err) < 0 ||
		   lb_buf_adds(&b, " related, ", err) < 0 ||
		   add_count(&b, random, err) < 0 ||
		   lb_buf_adds(&b, " random.\",\"related_links\":[", err) < 0) {
		goto fail;
	}
	for (i = 0; i < n; i++) {
		if (!keep[i])
			continue;
		if ((written++ > 0 && lb_buf_addc(&b, ',', err) < 0) ||
		    add_link_cached(&b, c, ep, links[i].doc, links[i].type,
				    err) < 0)
			goto fail;
	}
	if (lb_buf_adds(&b, "]}", err) < 0)
		goto fail;
	free(keep);
	return lb_buf_take(&b);
fail:
	free(keep);
	lb_buf_release(&b);
	return NULL;
}

char *render_answer(const struct lb_endpoint *ep, const struct lb_doc *self,
		    const struct lb_render_link *links, size_t n,
		    struct lb_error *err)
{
	return answer(ep, NULL, self, links, n, err);
}

char *render_answer_cached(struct lb_render_cache *c,
			   const struct lb_doc *self,
			   const struct lb_render_link *links, size_t n,
			   struct lb_error *err)
{
	return answer(c->ep, c, self, links, n, err);
}

char *render_link_json_cached(struct lb_render_cache *c,
			      const struct lb_doc *doc, enum lb_link_type type,
			      struct lb_error *err)
{
	struct lb_buf b;

	if (doc == NULL || doc->url == NULL) {
		lb_error_set(err, LB_EINVALID, "a link target has no URL");
		return NULL;
	}
	lb_buf_init(&b, LB_RENDER_MAX_BYTES);
	if (add_link_cached(&b, c, c->ep, doc, type, err) < 0) {
		lb_buf_release(&b);
		return NULL;
	}
	return lb_buf_take(&b);
}

char *render_envelope(const struct lb_endpoint *ep,
		      const struct lb_render_link *links, size_t n,
		      struct lb_error *err)
{
	return render_answer(ep, NULL, links, n, err);
}

static int cmp_module(const void *a, const void *b)
{
	const struct lb_render_module *x = *(const struct lb_render_module *const *)a;
	const struct lb_render_module *y = *(const struct lb_render_module *const *)b;

	return strcmp(x->module->id, y->module->id);
}

static int add_project_link(struct lb_buf *b, const struct lb_doc *d,
			    struct lb_error *err)
{
	char *path = NULL;
	const char *fallback;
	int rc = -1;

	fallback = d->url_path;
	if (fallback == NULL && (fallback = path = path_of_url(d->url)) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	/* url first: add_field() writes the comma before each later key. */
	if (lb_buf_adds(b, "{\"url\":", err) < 0)
		goto out;
	{
		int nomem;
		char *u = clean(d->url, CLEAN_URL, 0, &nomem);
		if (nomem) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		rc = add_json_str(b, u ? u : "/", err);
		free(u);
		if (rc < 0)
			goto out;
		rc = -1;
	}
	if (add_field(b, "title", d->title ? d->title : fallback, CLEAN_TEXT,
		      LB_RENDER_TITLE_MAX, fallback, err) < 0 ||
	    add_field(b, "description", d->description, CLEAN_TEXT,
		      LB_RENDER_DESC_MAX, "", err) < 0 ||
	    add_field(b, "image_url", d->image_url, CLEAN_URL, OTHER_MAX, "",
		      err) < 0 ||
	    lb_buf_addc(b, '}', err) < 0)
		goto out;
	rc = 0;
out:
	free(path);
	return rc;
}

char *render_module_map(const struct lb_doc *self,
			const struct lb_render_module *mods, size_t n,
			struct lb_error *err)
{
	const struct lb_render_module **order = NULL;
	struct lb_buf b;
	char *keep = NULL, *self_path = NULL;
	const char *path;
	size_t i, j, m = 0, written = 0;

	lb_buf_init(&b, LB_RENDER_MAX_BYTES);
	if ((order = calloc(n + 1, sizeof(*order))) == NULL)
		goto nomem;
	path = self ? self->url_path : NULL;
	if (self != NULL && path == NULL && self->url != NULL) {
		if ((self_path = path_of_url(self->url)) == NULL)
			goto nomem;
		path = self_path;
	}
	for (i = 0; i < n; i++)
		if (path != NULL && mods[i].module != NULL &&
		    urlpattern_path_under(mods[i].module->from, path))
			order[m++] = &mods[i];
	if (m > 1)
		qsort(order, m, sizeof(*order), cmp_module);
	if (lb_buf_addc(&b, '{', err) < 0)
		goto fail;
	for (i = 0; i < m; i++) {
		const struct lb_render_module *rm = order[i];
		size_t k = 0;

		if (i > 0 && strcmp(rm->module->id, order[i - 1]->module->id) == 0)
			continue;	/* one key per module id */
		free(keep);
		if ((keep = malloc(rm->n + 1)) == NULL)
			goto nomem;
		if (dedupe(NULL, NULL, self, rm->links, rm->n, keep, err) < 0)
			goto fail;
		if ((written++ > 0 && lb_buf_addc(&b, ',', err) < 0) ||
		    add_json_str(&b, rm->module->id, err) < 0 ||
		    lb_buf_adds(&b, ":{\"from\":", err) < 0 ||
		    add_json_str(&b, rm->module->from ? rm->module->from : "", err) < 0 ||
		    lb_buf_adds(&b, ",\"to\":", err) < 0 ||
		    add_json_str(&b, rm->module->to ? rm->module->to : "", err) < 0 ||
		    lb_buf_adds(&b, ",\"links\":[", err) < 0)
			goto fail;
		for (j = 0; j < rm->n; j++) {
			if (!keep[j])
				continue;
			if ((k++ > 0 && lb_buf_addc(&b, ',', err) < 0) ||
			    add_project_link(&b, rm->links[j].doc, err) < 0)
				goto fail;
		}
		if (lb_buf_adds(&b, "]}", err) < 0)
			goto fail;
	}
	if (lb_buf_addc(&b, '}', err) < 0)
		goto fail;
	free(order);
	free(keep);
	free(self_path);
	return lb_buf_take(&b);
nomem:
	lb_error_set(err, LB_ENOMEM, "out of memory");
fail:
	free(order);
	free(keep);
	free(self_path);
	lb_buf_release(&b);
	return NULL;
}
