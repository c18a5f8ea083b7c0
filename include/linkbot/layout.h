/*
 * layout.h - every store key and state path, spelled once (docs/store.md).
 *
 * The batch writes the store and the private state; the edge (answer.c,
 * src/edge/layout.js), lookup and preview read them. Each name below is
 * the one place its spelling lives; tests/data/store-layout/vectors.json
 * holds the C functions and their JS twins in src/edge/layout.js together
 * (like tests/data/page-id/vectors.json for the page ID).
 *
 * Published (under the store's prefix, read by the edge):
 *   <client>/<endpoint>/                  an endpoint's folder
 *   _projects/<uuid>/                     a project's folder
 *   <folder>/endpoint.json                the descriptor (state, variant...)
 *   <folder>/project.json                 a project's descriptor
 *   <folder>/pages/<page id>.json         one page's answer (gzipped)
 *   <folder>/random.json                  the random pool
 *   <folder>/manifest.json                content hashes of the folder
 *   <client>/<endpoint>/active-<variant>  directory store's state marker
 * Private state (a local directory, mirrored under _state/ of state_store):
 *   <client>/corpus.sqlite
 *   <client>/<endpoint>/links.tsv         (bonus.tsv next to it)
 *   <client>/_projects/<uuid>/<module>.tsv
 *
 * Every function writes a NUL-terminated string into buf (size bytes) and
 * returns its length, or -1 when it does not fit (buf is then "").
 * No I/O and no other linkbot module: the nginx module compiles it in.
 */
#ifndef LINKBOT_LAYOUT_H
#define LINKBOT_LAYOUT_H

#include <stddef.h>

/* Names inside a folder. */
#define LAYOUT_DESCRIPTOR	"endpoint.json"
#define LAYOUT_PROJECT		"project.json"
#define LAYOUT_POOL		"random.json"
#define LAYOUT_MANIFEST		"manifest.json"
#define LAYOUT_PAGES		"pages/"	/* then <page id>.json */
#define LAYOUT_PROJECTS		"_projects/"	/* then <uuid> */
#define LAYOUT_STATE		"_state/"	/* state_store: then the path */
#define LAYOUT_MARKER_TARGET	"pages"		/* what active-<v> points to */

/* "<client>/<endpoint>" and "_projects/<uuid>" (no trailing slash). */
int layout_endpoint_folder(char *buf, size_t size, const char *client,
			   const char *endpoint);
int layout_project_folder(char *buf, size_t size, const char *uuid);

/* "<folder>/<name>", name one of the LAYOUT_ names above. */
int layout_key(char *buf, size_t size, const char *folder, const char *name);

/* "<folder>/pages/<page id>.json", or "pages/<id>.json" for folder "". */
int layout_page_key(char *buf, size_t size, const char *folder,
		    const char *page_id);

/* "<client>/<endpoint>/active-<variant>" (variant: standard, enterprise). */
int layout_marker_key(char *buf, size_t size, const char *client,
		      const char *endpoint, const char *variant);

/* State paths, relative to the state directory. */
int layout_corpus_path(char *buf, size_t size, const char *client);
int layout_links_path(char *buf, size_t size, const char *client,
		      const char *endpoint);
int layout_module_links_path(char *buf, size_t size, const char *client,
			     const char *uuid, const char *module);
/* bonus.tsv next to a links path (state-relative or not). */
int layout_bonus_path(char *buf, size_t size, const char *links_path);

/* "_state/<path>": where state_store keeps a state path. */
int layout_state_key(char *buf, size_t size, const char *path);

#endif
