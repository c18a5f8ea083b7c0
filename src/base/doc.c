/* doc.c - the page record: lifecycle and JSON form; see doc.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "linkbot/buf.h"
#include "linkbot/doc.h"

void lb_lang_group(const char *lang, char key[LB_LANG_GROUP_LEN])
{
	size_t i = 0;

	for (; lang != NULL && lang[i] != '\0' && lang[i] != '-' &&
	       lang[i] != '_' && i < LB_LANG_GROUP_LEN - 1; i++)
		key[i] = lang[i] >= 'A' && lang[i] <= 'Z' ?
				 (char)(lang[i] - 'A' + 'a') : lang[i];
	key[i] = '\0';
}

static const char *const field_names[] = {
#define LB_DOC_FIELD_NAME(name) #name,
	LB_DOC_STR_FIELDS(LB_DOC_FIELD_NAME)
	LB_DOC_LIST_FIELDS(LB_DOC_FIELD_NAME)
#undef LB_DOC_FIELD_NAME
	"text",
};

static const char *const source_names[] = {
	"none", "h1", "jsonld", "opengraph", "meta", "body", "url", "derived",
};

void lb_doc_init(struct lb_doc *doc)
{
	memset(doc, 0, sizeof(*doc));
}

void lb_doc_release(struct lb_doc *doc)
{
#define LB_DOC_FREE_STR(name) free(doc->name);
	LB_DOC_STR_FIELDS(LB_DOC_FREE_STR)
#undef LB_DOC_FREE_STR
#define LB_DOC_FREE_LIST(name) lb_strlist_release(&doc->name);
	LB_DOC_LIST_FIELDS(LB_DOC_FREE_LIST)
#undef LB_DOC_FREE_LIST
	free(doc->text);
	lb_doclinks_release(&doc->links);
	free(doc->unavailable_after);
	free(doc->terms);
	lb_doc_init(doc);
}

const char *lb_doc_field_name(enum lb_doc_field f)
{
	return (unsigned)f < LB_F__COUNT ? field_names[f] : "?";
}

const char *lb_source_name(enum lb_source s)
{
	return (unsigned)s <= LB_SRC_DERIVED ? source_names[s] : "?";
}

int lb_strlist_add(struct lb_strlist *l, const char *s, struct lb_error *err)
{
	char **v;
	size_t i;

	if (s == NULL || *s == '\0')
		return 0;
	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 0;
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (v == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	l->v = v;
	if ((l->v[l->n] = strdup(s)) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	l->n++;
	return 0;
}

void lb_strlist_release(struct lb_strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

int lb_doclinks_add(struct lb_doclinks *l, const char *url,
		    const char *anchor, struct lb_error *err)
{
	struct lb_doclink *v, *e;
	size_t i;

	if (url == NULL || *url == '\0' || l->n >= LB_DOC_MAX_LINKS)
		return 0;
	if (anchor != NULL && *anchor == '\0')
		anchor = NULL;
	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].url, url) == 0 &&
		    (l->v[i].anchor == NULL ? anchor == NULL :
		     anchor != NULL && strcmp(l->v[i].anchor, anchor) == 0))
			return 0;
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (v == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	l->v = v;
	e = &l->v[l->n];
	e->url = strdup(url);
	e->anchor = anchor ? strdup(anchor) : NULL;
	if (e->url == NULL || (anchor != NULL && e->anchor == NULL)) {
		free(e->url);
		free(e->anchor);
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	}
	l->n++;
	return 0;
}

void lb_doclinks_release(struct lb_doclinks *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].url);
		free(l->v[i].anchor);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/*
 * s as a JSON string, escaped as cJSON_PrintUnformatted() escapes it (the
 * stored docs' bytes, and the hashes of them, stay as they were): \" \\
 * \b \f \n \r \t, other bytes below 32 as \u00xx in lower case, every
 * other byte as it is. Runs of plain bytes are copied whole.
 */
/*
 * The first byte in [p, end) that json_str() must look at (a control,
 * '"' or '\\'), or end. Eight bytes at a time while eight are left: a
 * word holds such a byte when one of w, w ^ '"', w ^ '\\' or its bytes'
 * top three bits (zero under 32) has a zero byte, which the classic test
 * (x - 0x01..) & ~x & 0x80.. says without a false "none"; then the word
 * is read a byte at a time.
 */
static const unsigned char *json_plain(const unsigned char *p,
				       const unsigned char *end)
{
	const uint64_t ones = 0x0101010101010101ull;
	const uint64_t high = 0x8080808080808080ull;
	uint64_t w, q, bs, ctl;

	while (end - p >= 8) {
		memcpy(&w, p, 8);
		q = w ^ (ones * '"');
		bs = w ^ (ones * '\\');
		ctl = w & (ones * 0xE0);
		if ((((q - ones) & ~q) | ((bs - ones) & ~bs) |
		     ((ctl - ones) & ~ctl)) & high)
			break;
		p += 8;
	}
	while (p < end && *p >= 32 && *p != '"' && *p != '\\')
		p++;
	return p;
}

static int json_str(struct lb_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *run = p;
	const unsigned char *end = p + strlen(s);
	int rc = lb_buf_addc(b, '"', NULL);

	for (; rc == 0 && (p = json_plain(p, end)) < end; p++) {
		char e[6] = { '\\', 0, '0', '0', 0, 0 };
		size_t n = 2;

		switch (*p) {
		case '"': e[1] = '"'; break;
		case '\\': e[1] = '\\'; break;
		case '\b': e[1] = 'b'; break;
		case '\f': e[1] = 'f'; break;
		case '\n': e[1] = 'n'; break;
		case '\r': e[1] = 'r'; break;
		case '\t': e[1] = 't'; break;
		default:
			e[1] = 'u';
			e[4] = hex[*p >> 4];
			e[5] = hex[*p & 15];
			n = 6;
		}
		rc = lb_buf_add(b, run, (size_t)(p - run), NULL) < 0 ||
		     lb_buf_add(b, e, n, NULL) < 0 ? -1 : 0;
		run = p + 1;
	}
	if (rc == 0 && (lb_buf_add(b, run, (size_t)(p - run), NULL) < 0 ||
			lb_buf_addc(b, '"', NULL) < 0))
		rc = -1;
	return rc;
}

/* ,"key": (the comma unless first) */
static int json_key(struct lb_buf *b, int *first, const char *key)
{
	if (!*first && lb_buf_addc(b, ',', NULL) < 0)
		return -1;
	*first = 0;
	if (json_str(b, key) < 0 || lb_buf_addc(b, ':', NULL) < 0)
		return -1;
	return 0;
}

/*
 * Written directly, byte for byte what building a cJSON tree and printing
 * it unformatted gave (test_doc.c holds the two together): the tree was
 * ~3 % of a night's crawl CPU.
 */
char *lb_doc_to_json(const struct lb_doc *doc, int with_text,
		     int with_sources)
{
	struct lb_buf b;
	size_t i;
	int first = 1, f2;

	lb_buf_init(&b, (size_t)-1 / 2);
	if (lb_buf_addc(&b, '{', NULL) < 0)
		goto fail;
#define LB_DOC_JSON_STR(name)                                           \
	if (doc->name != NULL && (json_key(&b, &first, #name) < 0 ||    \
				  json_str(&b, doc->name) < 0))          \
		goto fail;
	LB_DOC_STR_FIELDS(LB_DOC_JSON_STR)
#undef LB_DOC_JSON_STR
#define LB_DOC_JSON_LIST(name)                                          \
	if (doc->name.n > 0) {                                          \
		if (json_key(&b, &first, #name) < 0 ||                  \
		    lb_buf_addc(&b, '[', NULL) < 0)                     \
			goto fail;                                      \
		for (f2 = 1, i = 0; i < doc->name.n; i++) {             \
			if (doc->name.v[i] == NULL)                     \
				continue; /* cJSON left those out */    \
			if ((!f2 && lb_buf_addc(&b, ',', NULL) < 0) ||  \
			    json_str(&b, doc->name.v[i]) < 0)           \
				goto fail;                              \
			f2 = 0;                                         \
		}                                                       \
		if (lb_buf_addc(&b, ']', NULL) < 0)                     \
			goto fail;                                      \
	}
	LB_DOC_LIST_FIELDS(LB_DOC_JSON_LIST)
#undef LB_DOC_JSON_LIST
	if (with_text && doc->text != NULL &&
	    (json_key(&b, &first, "text") < 0 || json_str(&b, doc->text) < 0))
		goto fail;
	if (with_text && doc->links.n > 0) {
		if (json_key(&b, &first, "links") < 0 ||
		    lb_buf_addc(&b, '[', NULL) < 0)
			goto fail;
		for (i = 0; i < doc->links.n; i++) {
			if (doc->links.v[i].url == NULL)
				goto fail;	/* as cJSON failed */
			if ((i > 0 && lb_buf_addc(&b, ',', NULL) < 0) ||
			    lb_buf_adds(&b, "{\"url\":", NULL) < 0 ||
			    json_str(&b, doc->links.v[i].url) < 0 ||
			    (doc->links.v[i].anchor != NULL &&
			     (lb_buf_adds(&b, ",\"anchor\":", NULL) < 0 ||
			      json_str(&b, doc->links.v[i].anchor) < 0)) ||
			    lb_buf_addc(&b, '}', NULL) < 0)
				goto fail;
		}
		if (lb_buf_addc(&b, ']', NULL) < 0)
			goto fail;
	}
	if (doc->noindex && (json_key(&b, &first, "noindex") < 0 ||
			     lb_buf_adds(&b, "true", NULL) < 0))
		goto fail;
	if (with_sources) {
		if (json_key(&b, &first, "sources") < 0 ||
		    lb_buf_addc(&b, '{', NULL) < 0)
			goto fail;
		for (f2 = 1, i = 0; i < LB_F__COUNT; i++)
			if (doc->src[i] != LB_SRC_NONE &&
			    (json_key(&b, &f2, field_names[i]) < 0 ||
			     json_str(&b, source_names[doc->src[i]]) < 0))
				goto fail;
		if (lb_buf_addc(&b, '}', NULL) < 0)
			goto fail;
	}
	if (lb_buf_addc(&b, '}', NULL) < 0)
		goto fail;
	return lb_buf_take(&b);
fail:
	lb_buf_release(&b);
	return NULL;
}

static int take_str(const cJSON *o, const char *name, char **dst,
		    struct lb_error *err)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, name);

	if (!cJSON_IsString(it) || it->valuestring[0] == '\0')
		return 0;
	if ((*dst = strdup(it->valuestring)) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	return 0;
}

static int take_list(const cJSON *o, const char *name, struct lb_strlist *l,
		     struct lb_error *err)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, name), *it;

	cJSON_ArrayForEach(it, a)
		if (cJSON_IsString(it) &&
		    lb_strlist_add(l, it->valuestring, err) < 0)
			return -1;
	return 0;
}

static int doc_from_cjson(const char *json, struct lb_doc *doc,
			  struct lb_error *err)
{
	cJSON *o = cJSON_Parse(json);
	const cJSON *it;
	int rc = -1;

	lb_doc_init(doc);
	if (!cJSON_IsObject(o)) {
		lb_error_set(err, LB_EPARSE, "stored page is not a JSON object");
		goto out;
	}
#define LB_DOC_TAKE_STR(name)                                \
	if (take_str(o, #name, &doc->name, err) < 0)         \
		goto out;
	LB_DOC_STR_FIELDS(LB_DOC_TAKE_STR)
#undef LB_DOC_TAKE_STR
#define LB_DOC_TAKE_LIST(name)                               \
	if (take_list(o, #name, &doc->name, err) < 0)        \
		goto out;
	LB_DOC_LIST_FIELDS(LB_DOC_TAKE_LIST)
#undef LB_DOC_TAKE_LIST
	if (take_str(o, "text", &doc->text, err) < 0)
		goto out;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(o, "links")) {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(it, "url");
		const cJSON *an = cJSON_GetObjectItemCaseSensitive(it, "anchor");

		if (cJSON_IsString(u) &&
		    lb_doclinks_add(&doc->links, u->valuestring,
				    cJSON_IsString(an) ? an->valuestring : NULL,
				    err) < 0)
			goto out;
	}
	doc->noindex = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o,
								     "noindex"));
	rc = 0;
out:
	if (rc < 0)
		lb_doc_release(doc);
	cJSON_Delete(o);
	return rc;
}

/*
 * Reading a stored doc directly. The docs are what lb_doc_to_json() wrote:
 * one object, no white space, string values with the short escapes (\" \\
 * \/ \b \f \n \r \t), lists of strings, "links" an array of {"url",
 * "anchor"} objects, "noindex" true and "sources" an object of strings.
 * doc_read() takes that form, keys in any order, and gives up (1) on
 * anything else: a \u escape, a number or null,
 * white space, a known key twice, a value of a type cJSON's reading would
 * skip, bytes after the object. Then doc_from_cjson() reads it, as every
 * doc was read before, so both give the same doc for any input (test_corpus
 * holds them together). cJSON's parse and tree were ~5 M instructions of a
 * client's ~69 M tail (bench/RESULTS.md, "the tail, round 4").
 */
struct doc_rd {
	const char *p;
	int nomem;
};

/* A string at r->p (its opening quote checked here), decoded into *out
 * (malloc'd), or only checked and passed when out is NULL (a value the
 * doc drops: "sources", an unknown key's; ~7 a doc, 0.4 M instructions
 * of a 100-page client's load as copies freed at once: bench/RESULTS.md,
 * "the build of a small client"): 0, or 1 (not the simple form, or no
 * memory: r->nomem). Raw
 * bytes are copied as they are, control characters too (as cJSON does);
 * the runs between escapes are found and copied whole (strcspn, memchr):
 * a page's text is most of a stored doc. */
static int rd_str(struct doc_rd *r, char **out)
{
	const char *p = r->p, *q;
	char *o;
	size_t esc = 0;

	if (*p++ != '"')
		return 1;
	for (q = p + strcspn(p, "\"\\"); *q == '\\';
	     q += 2 + strcspn(q + 2, "\"\\"), esc++)
		if (q[1] == '\0' || strchr("\"\\/bfnrt", q[1]) == NULL)
			return 1;	/* \u, or not JSON */
	if (*q != '"')
		return 1;	/* the end of the input */
	if (out == NULL) {
		r->p = q + 1;
		return 0;
	}
	if ((*out = o = malloc((size_t)(q - p) - esc + 1)) == NULL) {
		r->nomem = 1;
		return 1;
	}
	while (p < q) {
		const char *e = esc ? memchr(p, '\\', (size_t)(q - p)) : q;

		memcpy(o, p, (size_t)(e - p));
		o += e - p;
		if (e == q)
			break;
		switch (e[1]) {
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		default: *o++ = e[1];	/* " \ / */
		}
		p = e + 2;
		esc--;
	}
	*o = '\0';
	r->p = q + 1;
	return 0;
}

/* "[" strings "]": each given to add (an lb_strlist or the skipped
 * "sources"-like value when l is NULL); 0 or 1 as rd_str() */
static int rd_strings(struct doc_rd *r, struct lb_strlist *l)
{
	char *v;

	if (*r->p++ != '[')
		return 1;
	if (*r->p == ']') {
		r->p++;
		return 0;
	}
	for (;;) {
		if (rd_str(r, l != NULL ? &v : NULL))
			return 1;
		if (l != NULL && lb_strlist_add(l, v, NULL) < 0) {
			free(v);
			r->nomem = 1;
			return 1;
		}
		if (l != NULL)
			free(v);
		if (*r->p == ']') {
			r->p++;
			return 0;
		}
		if (*r->p++ != ',')
			return 1;
	}
}

/* '{' "key":value,... '}' with string values only: each pair given to
 * pair(), or only checked and passed when pair is NULL; 0 or 1 */
static int rd_object(struct doc_rd *r, int (*pair)(void *, char *, char *),
		     void *arg)
{
	char *k, *v;

	if (*r->p++ != '{')
		return 1;
	if (*r->p == '}') {
		r->p++;
		return 0;
	}
	for (;;) {
		if (pair == NULL) {
			if (rd_str(r, NULL) || *r->p++ != ':' ||
			    rd_str(r, NULL))
				return 1;
		} else {
			if (rd_str(r, &k))
				return 1;
			if (*r->p++ != ':' || rd_str(r, &v)) {
				free(k);
				return 1;
			}
			if (pair(arg, k, v))	/* takes k and v */
				return 1;
		}
		if (*r->p == '}') {
			r->p++;
			return 0;
		}
		if (*r->p++ != ',')
			return 1;
	}
}

/* a link's "url" and "anchor", each at most once, nothing else */
struct link_rd {
	char *url, *anchor;
	int bad;
};

static int pair_link(void *arg, char *k, char *v)
{
	struct link_rd *l = arg;
	char **dst = strcmp(k, "url") == 0 ? &l->url :
		     strcmp(k, "anchor") == 0 ? &l->anchor : NULL;

	free(k);
	if (dst == NULL || *dst != NULL) {
		free(v);
		return l->bad = 1;
	}
	*dst = v;
	return 0;
}

static int rd_links(struct doc_rd *r, struct lb_doclinks *links)
{
	if (*r->p++ != '[')
		return 1;
	if (*r->p == ']') {
		r->p++;
		return 0;
	}
	for (;;) {
		struct link_rd l = { NULL, NULL, 0 };
		int bad = rd_object(r, pair_link, &l);

		if (!bad && l.url != NULL &&
		    lb_doclinks_add(links, l.url, l.anchor, NULL) < 0)
			bad = r->nomem = 1;
		free(l.url);
		free(l.anchor);
		if (bad)
			return 1;
		if (*r->p == ']') {
			r->p++;
			return 0;
		}
		if (*r->p++ != ',')
			return 1;
	}
}

static int doc_read(const char *json, struct lb_doc *doc, int *nomem)
{
	static const char *const strs[] = {
#define LB_DOC_RD_NAME(name) #name,
		LB_DOC_STR_FIELDS(LB_DOC_RD_NAME)
#undef LB_DOC_RD_NAME
		"text",
	};
	char **dst[] = {
#define LB_DOC_RD_DST(name) &doc->name,
		LB_DOC_STR_FIELDS(LB_DOC_RD_DST)
#undef LB_DOC_RD_DST
		&doc->text,
	};
	struct lb_strlist *lists[] = {
#define LB_DOC_RD_LIST(name) &doc->name,
		LB_DOC_LIST_FIELDS(LB_DOC_RD_LIST)
#undef LB_DOC_RD_LIST
	};
	static const char *const list_names[] = {
#define LB_DOC_RD_NAME(name) #name,
		LB_DOC_LIST_FIELDS(LB_DOC_RD_NAME)
#undef LB_DOC_RD_NAME
	};
	enum { N_STR = sizeof(strs) / sizeof(strs[0]),
	       N_LIST = sizeof(list_names) / sizeof(list_names[0]) };
	struct doc_rd r = { json, 0 };
	unsigned long seen = 0;	/* the known keys read so far */
	int bad = 1;

	lb_doc_init(doc);
	if (*r.p++ != '{')
		goto out;
	if (*r.p == '}') {
		r.p++;
		bad = 0;
		goto out;
	}
	for (;;) {
		char *k, *v;
		size_t i;
		int known = -1, rc;

		if (rd_str(&r, &k))
			goto out;
		if (*r.p++ != ':') {
			free(k);
			goto out;
		}
		for (i = 0; i < N_STR && known < 0; i++)
			if (strcmp(k, strs[i]) == 0)
				known = (int)i;
		for (i = 0; i < N_LIST && known < 0; i++)
			if (strcmp(k, list_names[i]) == 0)
				known = (int)(N_STR + i);
		if (known < 0 && strcmp(k, "links") == 0)
			known = N_STR + N_LIST;
		if (known < 0 && strcmp(k, "noindex") == 0)
			known = N_STR + N_LIST + 1;
		if (known >= 0) {
			if (seen & (1ul << known)) {
				free(k);
				goto out;	/* cJSON takes the first */
			}
			seen |= 1ul << known;
		}
		if (known >= 0 && known < N_STR) {
			if ((rc = rd_str(&r, &v)) == 0 && v[0] != '\0')
				*dst[known] = v;
			else if (rc == 0)
				free(v);
		} else if (known >= N_STR && known < N_STR + N_LIST) {
			rc = rd_strings(&r, lists[known - N_STR]);
		} else if (known == N_STR + N_LIST) {
			rc = rd_links(&r, &doc->links);
		} else if (known == N_STR + N_LIST + 1 || *r.p == 't' ||
			   *r.p == 'f') {
			rc = 1;
			if (strncmp(r.p, "true", 4) == 0) {
				r.p += 4;
				rc = 0;
				doc->noindex |= known >= 0;
			} else if (strncmp(r.p, "false", 5) == 0) {
				r.p += 5;
				rc = 0;
			}
		} else if (*r.p == '"') {	/* an unknown key's value */
			rc = rd_str(&r, NULL);
		} else if (*r.p == '[') {
			rc = rd_strings(&r, NULL);
		} else {
			rc = rd_object(&r, NULL, NULL);
		}
		free(k);
		if (rc)
			goto out;
		if (*r.p == '}') {
			r.p++;
			bad = *r.p != '\0';
			goto out;
		}
		if (*r.p++ != ',')
			goto out;
	}
out:
	*nomem = r.nomem;
	if (bad)
		lb_doc_release(doc);
	return bad;
}

int lb_doc_read_direct(const char *json, struct lb_doc *doc)
{
	int nomem = 0;

	return json == NULL || doc_read(json, doc, &nomem) != 0;
}

int lb_doc_from_json(const char *json, struct lb_doc *doc,
		     struct lb_error *err)
{
	int nomem = 0;

	if (json != NULL && doc_read(json, doc, &nomem) == 0)
		return 0;
	if (nomem)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	return doc_from_cjson(json, doc, err);
}
