/*
 * pages.h - the live pages of one client loaded from the corpus
 * (src/corpus/pages.c), and the source/target lists of an endpoint over
 * them. The pipeline's build stage reads them, and hands relate their
 * full texts: in the docs when the client's fit in memory (pages_load()'s
 * full_max), else from the corpus (a struct lb_text_source).
 */
#ifndef LINKBOT_PAGES_H
#define LINKBOT_PAGES_H

#include <stddef.h>
#include <stdint.h>
#include "linkbot/config.h"
#include "linkbot/corpus.h"
#include "linkbot/doc.h"

struct page_rec {
	struct lb_doc doc;
	char *sets;		/* comma-separated set names */
};

struct pages {
	struct page_rec *rec;	/* in canonical URL order */
	size_t n;
	struct lb_corpus *corpus;	/* where the full texts stay */
	int full_texts;		/* every doc holds its full text and links */
};

/* A selection of pages: indexes into pages->rec. */
struct page_list {
	const struct lb_doc **docs;
	size_t *index;
	size_t n;
};

/*
 * Loads the live pages of corpus, each text cut to text_max bytes (0: no
 * text; a million pages' texts would not fit in memory). The full texts
 * stay in the corpus (corpus_reader_text()).
 *
 * With full_max > 0 (and text_max 0), the docs keep their full texts,
 * links and stored terms (doc.h) when all of them come to at most
 * full_max bytes (p->full_texts set): relate then reads them there
 * instead of through a corpus reader (the same texts: the stored doc,
 * parsed once), and
 * pages_drop_texts() takes them out again once the build is done, so
 * that the pages are then what a load without them gives.
 */
int pages_load(struct lb_corpus *corpus, size_t text_max, size_t full_max,
	       struct pages *p, struct lb_error *err);
void pages_drop_texts(struct pages *p);
void pages_release(struct pages *p);

/* Which pages: those of a named set, or those whose path has a prefix. */
struct page_filter {
	const char *set;		/* set name, or NULL */
	const char *path_prefix;	/* url_path prefix (project modules) */
};

/* The pages the filter takes; list->docs borrows from p. */
int pages_select(const struct pages *p, const struct page_filter *f,
		 struct page_list *list, struct lb_error *err);
void page_list_release(struct page_list *list);

/* Index of url in p (binary search on canonical order), or -1. */
long pages_find(const struct pages *p, const char *url);

/* 64-bit mix for seeded sampling (splitmix64). */
uint64_t pages_rand(uint64_t *state);

#endif
