/* pages.c - a client's live pages in memory; see pages.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/urlpattern.h"
#include "linkbot/pages.h"

struct loader {
	struct pages *p;
	size_t alloc, text_max;
	size_t full_max, full_bytes;	/* the full texts' budget, used */
	struct lb_error *err;
};

/* s cut to at most max bytes, not inside a UTF-8 sequence. */
static void utf8_cut(char *s, size_t max)
{
	size_t len = strlen(s);

	if (len <= max)
		return;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	s[max] = '\0';
}

/* The bytes of a doc's text, links and terms. */
static size_t text_bytes(const struct lb_doc *d)
{
	size_t n = (d->text ? strlen(d->text) + 1 : 0) + d->terms_len, i;

	for (i = 0; i < d->links.n; i++)
		n += sizeof(d->links.v[i]) + strlen(d->links.v[i].url) + 1 +
		     (d->links.v[i].anchor ? strlen(d->links.v[i].anchor) + 1 :
					     0);
	return n;
}

static void drop_text(struct lb_doc *d)
{
	free(d->text);
	d->text = NULL;
	lb_doclinks_release(&d->links);
	free(d->terms);	/* relate's: with the text (doc.h) */
	d->terms = NULL;
	d->terms_len = 0;
}

/*
 * The doc is the corpus's parse of the stored JSON: taken as it is (the
 * JSON form holds no provenance and no unavailable_after, as the stored
 * one does not), then its text and links cut to what was asked.
 */
static int load_one(struct lb_doc *doc, const char *sets, void *arg)
{
	struct loader *l = arg;
	struct pages *p = l->p;
	struct page_rec *r;

	if (doc->url == NULL)
		return 0;
	if (p->n == l->alloc) {
		size_t na = l->alloc ? l->alloc * 2 : 256;
		struct page_rec *nr = realloc(p->rec, na * sizeof(*nr));
		if (nr == NULL)
			return lb_error_set(l->err, LB_ENOMEM, "out of memory");
		p->rec = nr;
		l->alloc = na;
	}
	r = &p->rec[p->n];
	if ((r->sets = strdup(sets ? sets : "")) == NULL)
		return lb_error_set(l->err, LB_ENOMEM, "out of memory");
	r->doc = *doc;
	lb_doc_init(doc);
	memset(r->doc.src, 0, sizeof(r->doc.src));
	free(r->doc.unavailable_after);
	r->doc.unavailable_after = NULL;
	if (p->full_texts) {
		l->full_bytes += text_bytes(&r->doc);
		if (l->full_bytes > l->full_max) {
			/* too big to hold: the corpus reader, as for any */
			size_t i;

			for (i = 0; i < p->n; i++)
				drop_text(&p->rec[i].doc);
			p->full_texts = 0;
		}
	}
	if (!p->full_texts && l->text_max == 0) {
		drop_text(&r->doc);
	} else if (!p->full_texts) {
		if (r->doc.text != NULL)
			utf8_cut(r->doc.text, l->text_max);
		free(r->doc.terms);	/* relate reads the corpus */
		r->doc.terms = NULL;
		r->doc.terms_len = 0;
	}
	p->n++;
	return 0;
}

static int rec_cmp(const void *a, const void *b)
{
	return strcmp(((const struct page_rec *)a)->doc.url,
		      ((const struct page_rec *)b)->doc.url);
}

int pages_load(struct lb_corpus *corpus, size_t text_max, size_t full_max,
	       struct pages *p, struct lb_error *err)
{
	struct loader l = { p, 0, text_max, full_max, 0, err };

	memset(p, 0, sizeof(*p));
	p->corpus = corpus;
	p->full_texts = full_max > 0 && text_max == 0;
	if (corpus_foreach(corpus, load_one, &l, err) < 0)
		return -1;
	/* Sorted, so that pages_find() can bisect whatever the corpus did. */
	qsort(p->rec, p->n, sizeof(*p->rec), rec_cmp);
	return 0;
}

void pages_drop_texts(struct pages *p)
{
	size_t i;

	if (!p->full_texts)
		return;
	for (i = 0; i < p->n; i++)
		drop_text(&p->rec[i].doc);
	p->full_texts = 0;
}

void pages_release(struct pages *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		lb_doc_release(&p->rec[i].doc);
		free(p->rec[i].sets);
	}
	free(p->rec);
	memset(p, 0, sizeof(*p));
}

static int sets_has(const char *csv, const char *name)
{
	size_t n = strlen(name);
	const char *s = csv;

	while (*s != '\0') {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len == n && strncmp(s, name, n) == 0)
			return 1;
		if (e == NULL)
			break;
		s = e + 1;
	}
	return 0;
}

static int filter_takes(const struct page_filter *f,
			const struct page_rec *r)
{
	if (f->set != NULL)
		return sets_has(r->sets, f->set);
	return f->path_prefix != NULL && r->doc.url_path != NULL &&
	       urlpattern_path_under(f->path_prefix, r->doc.url_path);
}

int pages_select(const struct pages *p, const struct page_filter *f,
		 struct page_list *list, struct lb_error *err)
{
	size_t i;

	memset(list, 0, sizeof(*list));
	list->docs = malloc((p->n ? p->n : 1) * sizeof(*list->docs));
	list->index = malloc((p->n ? p->n : 1) * sizeof(*list->index));
	if (list->docs == NULL || list->index == NULL) {
		page_list_release(list);
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	}
	for (i = 0; i < p->n; i++) {
		if (!filter_takes(f, &p->rec[i]))
			continue;
		list->docs[list->n] = &p->rec[i].doc;
		list->index[list->n] = i;
		list->n++;
	}
	return 0;
}

void page_list_release(struct page_list *list)
{
	free(list->docs);
	free(list->index);
	memset(list, 0, sizeof(*list));
}

long pages_find(const struct pages *p, const char *url)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(p->rec[mid].doc.url, url);
		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

uint64_t pages_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}
