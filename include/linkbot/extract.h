/*
 * extract.h - stage 2: from one HTML page to a doc (doc.h).
 *
 * Fields by the precedence of SPEC 1.9 (first <h1>, schema.org JSON-LD,
 * Open Graph, HTML metadata), text by SPEC 1.10, canonical by SPEC 1.11;
 * the rules, forms and caps are in docs/extract.md. The only module that
 * includes gumbo.
 *
 *   struct lb_doc doc;
 *   lb_doc_init(&doc);
 *   if (extract_html(body, len, final_url, charset, &doc, &err) < 0) ...
 *   use doc (doc.src[] says where each field came from)
 *   lb_doc_release(&doc);
 *
 * extract/ keeps no global state (cJSON's parser only records its last
 * error position in a global, which extract/ never reads).
 */
#ifndef LINKBOT_EXTRACT_H
#define LINKBOT_EXTRACT_H

#include <stddef.h>
#include "linkbot/doc.h"
#include "linkbot/error.h"

/*
 * html/len: the body as fetched; page_url: the final URL after redirects
 * (base for relative URLs and the canonical fallback); charset: from the
 * Content-Type header (a label or the whole header value), may be NULL.
 * Fills doc (which must be initialised; what it held is released first);
 * doc->url is the canonical URL, doc->noindex the robots meta verdict.
 * Missing values stay NULL, never "". Any bytes are accepted: a page that
 * yields nothing is not an error. Fails (-1, doc released) only when out
 * of memory.
 */
int extract_html(const char *html, size_t len, const char *page_url,
		 const char *charset, struct lb_doc *doc,
		 struct lb_error *err);

#endif
