/*
 * linkgraph.c - the site's own links between the pages of an endpoint.
 *
 * The extractor keeps the links of a page's main content with their
 * anchor text (doc->links; never the menus, sidebars, footers or prev/next
 * bars). Here each link is resolved to the page it points at, among the
 * pages being related: its URL is looked up, exactly, among the pages'
 * own URLs (doc->url, the canonical). Links to other sites, to pages not
 * in the endpoint and to the page itself are dropped. text.c turns the
 * edges into terms (docs/relate.md, "links").
 *
 * Deterministic: the index is sorted by URL (a URL held by two pages
 * resolves to the lower index), and the edges keep the order of the
 * pages and of their links.
 */
#include <stdlib.h>
#include <string.h>

#include "relate_int.h"

struct link_key {
	const char *url;
	uint32_t doc;
};

struct link_index {
	struct link_key *k;	/* sorted by URL, then page */
	size_t n;
};

static int key_cmp(const void *a, const void *b)
{
	const struct link_key *x = a, *y = b;
	int c = strcmp(x->url, y->url);

	return c != 0 ? c : (x->doc > y->doc) - (x->doc < y->doc);
}

int link_index_new(const struct lb_doc *const *docs, size_t n,
		   struct link_index **out)
{
	struct link_index *ix = calloc(1, sizeof(*ix));
	size_t i;

	*out = NULL;
	if (ix == NULL ||
	    (ix->k = malloc((n + 1) * sizeof(*ix->k))) == NULL) {
		free(ix);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (docs[i]->url != NULL)
			ix->k[ix->n++] = (struct link_key){ docs[i]->url,
							    (uint32_t)i };
	qsort(ix->k, ix->n, sizeof(*ix->k), key_cmp);
	*out = ix;
	return 0;
}

void link_index_free(struct link_index *ix)
{
	if (ix == NULL)
		return;
	free(ix->k);
	free(ix);
}

/* Index of the page with this URL (the lowest), or -1. */
static long link_find(const struct link_index *ix, const char *url)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (strcmp(ix->k[mid].url, url) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && strcmp(ix->k[lo].url, url) == 0 ?
		       (long)ix->k[lo].doc : -1;
}

int link_edges_add(struct link_edges *e, const struct link_index *ix,
		   size_t src, const struct lb_doclinks *l)
{
	size_t i;

	for (i = 0; l != NULL && i < l->n; i++) {
		long t = link_find(ix, l->v[i].url);
		struct link_edge *x;

		if (t < 0 || (size_t)t == src)
			continue;
		if (e->n == e->cap) {
			size_t cap = e->cap ? 2 * e->cap : 256;

			x = realloc(e->v, cap * sizeof(*x));
			if (x == NULL)
				return -1;
			e->v = x;
			e->cap = cap;
		}
		x = &e->v[e->n];
		x->src = (uint32_t)src;
		x->tgt = (uint32_t)t;
		x->anchor = NULL;
		if (l->v[i].anchor != NULL &&
		    (x->anchor = strdup(l->v[i].anchor)) == NULL)
			return -1;
		e->n++;
	}
	return 0;
}

void link_edges_release(struct link_edges *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		free(e->v[i].anchor);
	free(e->v);
	memset(e, 0, sizeof(*e));
}
