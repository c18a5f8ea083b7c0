/*
 * render.h - stage 5: the JSON a client receives for one page
 * (SPEC 2.1-2.5), per variant. Pure functions: docs in, bytes out.
 */
#ifndef LINKBOT_RENDER_H
#define LINKBOT_RENDER_H

#include <stddef.h>
#include "linkbot/assign.h"
#include "linkbot/config.h"
#include "linkbot/doc.h"
#include "linkbot/error.h"

/* One link of an answer. */
struct lb_render_link {
	const struct lb_doc *doc;
	enum lb_link_type type;
};

/*
 * The {message, related_links} envelope of a Standard or Enterprise
 * endpoint. Returns a NUL-terminated string (caller frees) or NULL.
 */
char *render_envelope(const struct lb_endpoint *ep,
		      const struct lb_render_link *links, size_t n,
		      struct lb_error *err);

/* One link object of the endpoint's variant as a JSON string. */
char *render_link_json(const struct lb_endpoint *ep,
		       const struct lb_doc *doc, enum lb_link_type type,
		       struct lb_error *err);

#endif
