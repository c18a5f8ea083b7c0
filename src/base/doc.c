/* doc.c - the page record: lifecycle and JSON form; see doc.h. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

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

char *lb_doc_to_json(const struct lb_doc *doc, int with_text,
		     int with_sources)
{
	cJSON *o = cJSON_CreateObject(), *a, *src;
	char *s = NULL;
	size_t i;

	if (o == NULL)
		return NULL;
#define LB_DOC_JSON_STR(name)                                           \
	if (doc->name != NULL &&                                        \
	    cJSON_AddStringToObject(o, #name, doc->name) == NULL)       \
		goto out;
	LB_DOC_STR_FIELDS(LB_DOC_JSON_STR)
#undef LB_DOC_JSON_STR
#define LB_DOC_JSON_LIST(name)                                          \
	if (doc->name.n > 0) {                                          \
		if ((a = cJSON_AddArrayToObject(o, #name)) == NULL)     \
			goto out;                                       \
		for (i = 0; i < doc->name.n; i++)                       \
			cJSON_AddItemToArray(                           \
				a, cJSON_CreateString(doc->name.v[i])); \
	}
	LB_DOC_LIST_FIELDS(LB_DOC_JSON_LIST)
#undef LB_DOC_JSON_LIST
	if (with_text && doc->text != NULL &&
	    cJSON_AddStringToObject(o, "text", doc->text) == NULL)
		goto out;
	if (with_text && doc->links.n > 0) {
		if ((a = cJSON_AddArrayToObject(o, "links")) == NULL)
			goto out;
		for (i = 0; i < doc->links.n; i++) {
			cJSON *l = cJSON_CreateObject();

			if (l == NULL)
				goto out;
			cJSON_AddItemToArray(a, l);
			if (cJSON_AddStringToObject(l, "url",
						    doc->links.v[i].url) == NULL ||
			    (doc->links.v[i].anchor != NULL &&
			     cJSON_AddStringToObject(l, "anchor",
						     doc->links.v[i].anchor) ==
				     NULL))
				goto out;
		}
	}
	if (doc->noindex && cJSON_AddTrueToObject(o, "noindex") == NULL)
		goto out;
	if (with_sources) {
		if ((src = cJSON_AddObjectToObject(o, "sources")) == NULL)
			goto out;
		for (i = 0; i < LB_F__COUNT; i++)
			if (doc->src[i] != LB_SRC_NONE)
				cJSON_AddStringToObject(
					src, field_names[i],
					source_names[doc->src[i]]);
	}
	s = cJSON_PrintUnformatted(o);
out:
	cJSON_Delete(o);
	return s;
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
