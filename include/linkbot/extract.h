/*
 * extract.h - stage 2: from one HTML page to a doc (doc.h).
 *
 * Fields by the precedence of SPEC 1.9 (first <h1>, schema.org JSON-LD,
 * Open Graph, HTML metadata), text by SPEC 1.10, canonical by SPEC 1.11.
 * The only module that includes gumbo.
 */
#ifndef LINKBOT_EXTRACT_H
#define LINKBOT_EXTRACT_H

#include <stddef.h>
#include "linkbot/doc.h"
#include "linkbot/error.h"

/*
 * html/len: the body as fetched; page_url: the final URL after redirects
 * (base for relative URLs and the canonical fallback); charset: from the
 * Content-Type header, may be NULL. Fills doc (which must be initialised);
 * doc->url is the canonical URL, doc->noindex the robots meta verdict.
 */
int extract_html(const char *html, size_t len, const char *page_url,
		 const char *charset, struct lb_doc *doc,
		 struct lb_error *err);

#endif
