/* doc.c - the page record: lifecycle and JSON form; see doc.h. */
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
static int json_str(struct lb_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *run = p;
	int rc = lb_buf_addc(b, '"', NULL);

	for (; rc == 0 && *p != '\0'; p++) {
		char e[6] = { '\\', 0, '0', '0', 0, 0 };
		size_t n = 2;

		if (*p >= 32 && *p != '"' && *p != '\\')
			continue;
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

int lb_doc_from_json(const char *json, struct lb_doc *doc,
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
