/*
 * pages.h - (internal to pipeline/) the live pages of one client loaded
 * from the corpus, and the source/target lists of an endpoint over them.
 */
#ifndef LINKBOT_PIPELINE_PAGES_H
#define LINKBOT_PIPELINE_PAGES_H

#include <stddef.h>
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
};

/* A selection of pages: indexes into pages->rec. */
struct page_list {
	const struct lb_doc **docs;
	size_t *index;
	size_t n;
};

int pages_load(struct lb_corpus *corpus, struct pages *p,
	       struct lb_error *err);
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
