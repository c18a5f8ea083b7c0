/*
 * render.h - stage 5: the JSON a client receives for one page
 * (SPEC 2.1-2.5), per variant. Pure functions: docs in, bytes out.
 *
 * Standard link objects carry every field of SPEC 2.3, always in the same
 * order; a field without data is written as null (never omitted), so a
 * client can rely on the key being there. type, title, url and url_path are
 * never null: a link whose doc has no url is dropped, a missing title falls
 * back to the url_path, a missing url_path is derived from the url.
 * Enterprise link objects carry type, title, url, url_path and then the
 * endpoint's extra_fields in configured order (null when the doc has none).
 *
 * Clean output, whatever the crawl found:
 * - no self link (a target with the answering page's ID) and no duplicate
 *   target (two targets with one page ID: trailing slash, default port, host
 *   case, query parameters the endpoint ignores); the first one is kept;
 * - strings: invalid UTF-8 replaced by U+FFFD, control characters (C0, DEL,
 *   C1) turned into spaces, runs of white space collapsed, trimmed;
 * - title at most LB_RENDER_TITLE_MAX and description at most
 *   LB_RENDER_DESC_MAX characters (cut at a word when one is near, with
 *   an ellipsis);
 * - key order fixed, module maps sorted by module id: the same input gives
 *   the same bytes, so the manifest sees no change when nothing changed.
 *
 * Every function returns a NUL-terminated string the caller frees, or NULL
 * with err set.
 */
#ifndef LINKBOT_RENDER_H
#define LINKBOT_RENDER_H

#include <stddef.h>
#include "linkbot/assign.h"
#include "linkbot/config.h"
#include "linkbot/doc.h"
#include "linkbot/error.h"

#define LB_RENDER_TITLE_MAX 200		/* characters (code points) */
#define LB_RENDER_DESC_MAX 500
#define LB_RENDER_TEXT_MAX 20000	/* enterprise extra field "text" */
#define LB_RENDER_MAX_BYTES ((size_t)16 << 20)	/* cap of one answer */

/* One link of an answer. */
struct lb_render_link {
	const struct lb_doc *doc;
	enum lb_link_type type;
};

/*
 * The {message, related_links} envelope of a Standard or Enterprise
 * endpoint, for the page self (may be NULL: no self-link filter).
 * Duplicates and self links are dropped, in order.
 */
char *render_answer(const struct lb_endpoint *ep, const struct lb_doc *self,
		    const struct lb_render_link *links, size_t n,
		    struct lb_error *err);

/* render_answer() without a self page. */
char *render_envelope(const struct lb_endpoint *ep,
		      const struct lb_render_link *links, size_t n,
		      struct lb_error *err);

/* One link object of the endpoint's variant as a JSON string. */
char *render_link_json(const struct lb_endpoint *ep,
		       const struct lb_doc *doc, enum lb_link_type type,
		       struct lb_error *err);

/*
 * The same bytes for the answers of one endpoint, faster: a target is
 * linked from many pages, so its link object and page-ID key are made
 * once (render.c). The cache holds at most about max_bytes (past that,
 * docs are rendered each time); the docs must outlive it and not change.
 */
struct lb_render_cache;
struct lb_render_cache *render_cache_new(const struct lb_endpoint *ep,
					 size_t max_bytes);
void render_cache_free(struct lb_render_cache *c);
char *render_answer_cached(struct lb_render_cache *c,
			   const struct lb_doc *self,
			   const struct lb_render_link *links, size_t n,
			   struct lb_error *err);
char *render_link_json_cached(struct lb_render_cache *c,
			      const struct lb_doc *doc, enum lb_link_type type,
			      struct lb_error *err);

/* The links of one module of a project page (SPEC 2.5). */
struct lb_render_module {
	const struct lb_module *module;
	const struct lb_render_link *links;
	size_t n;
};

/*
 * The module map of a Project page: {"<module id>": {"from", "to",
 * "links": [{url, title, description, image_url}, ...]}, ...}, keys
 * sorted. A module whose `from` does not match self's url_path is left
 * out (see urlpattern_path_under); an empty map is "{}". Missing
 * description and image_url are written as "" (SPEC 2.5 types them as
 * strings). Self links and duplicates are dropped per module.
 */
char *render_module_map(const struct lb_doc *self,
			const struct lb_render_module *mods, size_t n,
			struct lb_error *err);

/*
 * The clean form of a string as rendered (see above); max_chars 0 = no
 * bound. Returns NULL for NULL or when nothing is left (all white space).
 */
char *render_clean_text(const char *s, size_t max_chars);
/* The same for a URL field: white space and control characters dropped,
 * not collapsed, and a cut without looking for a word boundary. */
char *render_clean_url(const char *s, size_t max_chars);

#endif
