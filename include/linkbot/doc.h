/*
 * doc.h - the record of one page as extracted: the fields of a link object
 * (SPEC 2.3) plus the text that relatedness is computed from.
 *
 * Produced by extract/, stored by the corpus between runs, read by relate/
 * (text, title, description, url_path) and publish/ (every field).
 * A NULL string or an empty list means "no data found at crawl time"; an
 * empty string is never stored. A doc owns all its strings.
 */
#ifndef LINKBOT_DOC_H
#define LINKBOT_DOC_H

#include <stddef.h>
#include "linkbot/error.h"

struct lb_strlist {
	char **v;
	size_t n;
};

/*
 * A link inside the page's main content (the part the text comes from:
 * never the menus, sidebars, footers or prev/next bars): its target, an
 * absolute http(s) URL without fragment, and its anchor text (one line,
 * NULL if none). relate/ reads them (the site's own link structure).
 */
struct lb_doclink {
	char *url;
	char *anchor;
};

#define LB_DOC_MAX_LINKS 256	/* links kept a page, in document order */
#define LB_DOC_MAX_ANCHOR 200	/* bytes of an anchor text */

struct lb_doclinks {
	struct lb_doclink *v;
	size_t n;
};

/* Where a field's value came from (SPEC 1.9 precedence, highest first). */
enum lb_source {
	LB_SRC_NONE = 0,
	LB_SRC_H1,
	LB_SRC_JSONLD,
	LB_SRC_OPENGRAPH,
	LB_SRC_META,
	LB_SRC_BODY,
	LB_SRC_URL,
	LB_SRC_DERIVED,
};

/* The single-valued string fields, in output order. X(name) */
#define LB_DOC_STR_FIELDS(X)                                             \
	X(title)                                                         \
	X(description)                                                   \
	X(image_url)                                                     \
	X(language)                                                      \
	X(location)                                                      \
	X(published_time)                                                \
	X(read_time)                                                     \
	X(url)                                                           \
	X(url_path)                                                      \
	X(url_qs_params)

/* The list fields. X(name) */
#define LB_DOC_LIST_FIELDS(X)                                            \
	X(author)                                                        \
	X(category)

enum lb_doc_field {
#define LB_DOC_FIELD_ENUM(name) LB_F_##name,
	LB_DOC_STR_FIELDS(LB_DOC_FIELD_ENUM)
	LB_DOC_LIST_FIELDS(LB_DOC_FIELD_ENUM)
#undef LB_DOC_FIELD_ENUM
	LB_F_text,
	LB_F__COUNT
};

struct lb_doc {
#define LB_DOC_STR_MEMBER(name) char *name;
	LB_DOC_STR_FIELDS(LB_DOC_STR_MEMBER)
#undef LB_DOC_STR_MEMBER
#define LB_DOC_LIST_MEMBER(name) struct lb_strlist name;
	LB_DOC_LIST_FIELDS(LB_DOC_LIST_MEMBER)
#undef LB_DOC_LIST_MEMBER
	char *text;		/* plain text, UTF-8, white space normalised */
	struct lb_doclinks links;	/* links in the main content; kept
					 * with the text (not in a page list
					 * loaded without texts) */
	int noindex;		/* robots meta said noindex for us */
	char *unavailable_after;	/* date of a robots meta unavailable_after
				 * directive for us (as written), or NULL;
				 * crawl/ compares it with the crawl time */
	enum lb_source src[LB_F__COUNT];	/* provenance, for inspect */
	/*
	 * The page's terms as relate/ made them when the page was stored
	 * (relate_terms_doc(): tokens, stop words and stems of the fields
	 * it weighs), so a build need not tokenize the page again; relate/
	 * owns the format and checks its version, the corpus that the doc
	 * they came from is the one stored. NULL: none (relate tokenizes).
	 * Kept with the text (dropped with it); never in the doc's JSON.
	 */
	unsigned char *terms;
	size_t terms_len;
};

void lb_doc_init(struct lb_doc *doc);
void lb_doc_release(struct lb_doc *doc);

const char *lb_doc_field_name(enum lb_doc_field f);
const char *lb_source_name(enum lb_source s);

/*
 * The language group of a page (multi-language endpoints pair only pages
 * of one group): the primary subtag of its language, ASCII letters
 * lower-cased, at most LB_LANG_GROUP_LEN - 1 bytes ("en-US", "EN_gb" ->
 * "en"); "" when the language is unknown (NULL). The one rule: relate's
 * groups and assign's (pipeline/build.c) must be the same groups.
 */
#define LB_LANG_GROUP_LEN 16
void lb_lang_group(const char *lang, char key[LB_LANG_GROUP_LEN]);

/* Appends a copy of s to the list (ignores NULL/empty and duplicates). */
int lb_strlist_add(struct lb_strlist *l, const char *s, struct lb_error *err);
void lb_strlist_release(struct lb_strlist *l);

/* Appends a copy of (url, anchor): ignores a NULL/empty url, a pair
 * already in the list and anything past LB_DOC_MAX_LINKS. */
int lb_doclinks_add(struct lb_doclinks *l, const char *url,
		    const char *anchor, struct lb_error *err);
void lb_doclinks_release(struct lb_doclinks *l);

/*
 * The doc as a JSON object string (every field; lists as arrays; absent
 * fields omitted; with_text: also "text" and "links", an array of
 * {"url", "anchor"} objects), and back (a stored doc without "links",
 * from before links were kept, reads as a doc without links). Used by
 * the corpus to store docs and by
 * inspect. Caller frees the string / releases the doc.
 */
char *lb_doc_to_json(const struct lb_doc *doc, int with_text,
		     int with_sources);
int lb_doc_from_json(const char *json, struct lb_doc *doc,
		     struct lb_error *err);
/* Tests: the direct reader of lb_doc_from_json() alone, no cJSON after
 * it: 0 (read), else 1 (not its form, or no memory); doc released then. */
int lb_doc_read_direct(const char *json, struct lb_doc *doc);

#endif
