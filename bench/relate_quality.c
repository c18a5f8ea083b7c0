/*
 * relate_quality - precision@8 of the relate engine on a labelled corpus,
 * beside a plain TF-IDF cosine baseline and a random baseline, same run.
 *
 *   relate_quality [-l] CORPUS [METHOD[:DIM] ...]
 *
 * -l: a multi-language endpoint (lb_relate_input.multi_language): only
 * pages of one language are paired, by every method, random included.
 * CORPUS: lines "label<TAB>doc JSON" (bench/relate-corpus.py). Every page
 * is a source and a target (one set, like a blog). precision@8 of a page is
 * the share of its 8 best candidates that carry its label; the figure is
 * the mean over pages. Methods: lsa (default engine), lsa-nosmooth (no
 * neighbour smoothing), tfidf, random; with no METHOD: lsa, tfidf, random. Prints one line per method:
 *   corpus=demo pages=200 labels=5 method=lsa dim=0 p@8=0.9512 ms=41 ...
 * and, but for random, what a run would publish from 32 candidates a page
 * (published(): L = 8, k = 8, then the fillers): the random floor, the
 * fillers and their precision, pub@8 (precision of the published links,
 * random ones counted), the smallest in-degree and the random links.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linkbot/assign.h"
#include "linkbot/doc.h"
#include "linkbot/fillers.h"
#include "linkbot/log.h"
#include "linkbot/relate.h"

#define M 8
#define MC 32	/* candidates per page handed to the assignment, as build.c */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* RELATE_LABELS=1: precision@8 per label (stderr), to see what fails;
 * RELATE_LABELS=label: also the candidates of that label's pages;
 * RELATE_LABELS=ALL: the candidates of every page (bench/relate_diag.py
 * reads them) */
static void per_label(char **label, size_t n, const struct lb_candidates *c,
		      const struct lb_doc **p)
{
	const char *show = getenv("RELATE_LABELS");
	size_t i, j, k;

	for (i = 0; i < n; i++) {
		if (strcmp(label[i], show) && strcmp(show, "ALL"))
			continue;
		fprintf(stderr, "%s\n", p[i]->url);
		for (j = 0; j < M; j++) {
			uint32_t t = c->target[i * c->m + j];

			if (t != LB_NO_TARGET)
				fprintf(stderr, "    %.3f %s %s\n",
					c->score[i * c->m + j], label[t],
					p[t]->url);
		}
	}

	for (i = 0; i < n; i++) {
		double hit = 0, tot = 0;

		for (k = 0; k < i && strcmp(label[k], label[i]); k++)
			;
		if (k < i)
			continue;
		for (k = i; k < n; k++) {
			if (strcmp(label[k], label[i]))
				continue;
			for (j = 0; j < M; j++) {
				uint32_t t = c->target[k * c->m + j];

				tot++;
				hit += t != LB_NO_TARGET &&
				       strcmp(label[t], label[i]) == 0;
			}
		}
		fprintf(stderr, "  %-28s %.3f (%.0f)\n", label[i], hit / tot,
			tot / M);
	}
}

/* same primary language subtag (always, without -l) */
static int lang_eq(const struct lb_doc *a, const struct lb_doc *b, int multi)
{
	const char *x = a->language ? a->language : "";
	const char *y = b->language ? b->language : "";
	size_t i;

	if (!multi)
		return 1;
	for (i = 0; x[i] && x[i] != '-' && y[i] && y[i] != '-'; i++)
		if ((x[i] | 32) != (y[i] | 32))
			return 0;
	return (x[i] == '\0' || x[i] == '-') && (y[i] == '\0' || y[i] == '-');
}

/* other pages page i can be paired with */
static size_t same_lang(const struct lb_doc **p, size_t n, size_t i,
			int multi)
{
	size_t j, c = 0;

	for (j = 0; j < n; j++)
		c += j != i && lang_eq(p[i], p[j], multi);
	return c;
}

/*
 * The links a run would publish from these candidates: L = 8, every page
 * at least k = 8 in, random completion on (build.c's assignment, then the
 * filler step); prints their precision (random links count, as a reader
 * sees them), the smallest in-degree and how many links are random.
 */
static int published(const struct lb_candidates *c, char **label,
		     const struct lb_doc **p, size_t n, int multi)
{
	struct lb_assign_params ap = { 0 };
	struct lb_assignment a = { 0 };
	struct lb_assign_stats st;
	struct lb_error err;
	uint32_t *lang = NULL;
	size_t i, j, hit = 0, tot = 0, nrand = 0, *in = NULL, min = SIZE_MAX;

	lb_error_init(&err);
	if (multi) {
		lang = calloc(n + 1, sizeof(*lang));
		for (i = 0; i < n; i++) {
			lang[i] = (uint32_t)i;
			for (j = 0; j < i; j++)
				if (lang_eq(p[i], p[j], 1)) {
					lang[i] = lang[j];
					break;
				}
		}
	}
	ap.n_tgt = n;
	ap.links = M;
	ap.min_in = M;
	ap.random_completion = 1;
	ap.seed = 42;
	ap.lang_src = lang;
	ap.lang_tgt = lang;
	memset(&st, 0, sizeof(st));
	if (assign_links(c, &ap, &a, &st, &err) == -1) {
		fprintf(stderr, "assign: %s\n", err.msg);
		return -1;
	}
	{
		struct lb_fillers_params fp = { 0 };
		struct lb_fillers_stats fs;
		size_t below = 0, bhit = 0;

		for (i = 0; i < n; i++)
			for (j = 0; j < a.l; j++) {
				const struct lb_link *lk = &a.links[i * a.l + j];

				if (lk->target == LB_NO_TARGET ||
				    lk->type != LB_LINK_RELATED ||
				    !(lk->score <= c->random_floor))
					continue;
				below++;
				bhit += strcmp(label[lk->target], label[i]) == 0;
			}
		fp.n_tgt = n;
		fp.min_in = M;
		fp.floor = c->random_floor;
		fp.seed = 42;
		fp.lang_src = lang;
		fp.lang_tgt = lang;
		if (fillers_apply(&a, &fp, &fs, &err) == -1) {
			fprintf(stderr, "fillers: %s\n", err.msg);
			return -1;
		}
		printf(" floor=%.3f fillers=%zu (precision %.3f; %zu redrawn)",
		       c->random_floor, fs.fillers,
		       below ? bhit / (double)below : 0, fs.redrawn);
	}
	in = calloc(n + 1, sizeof(*in));
	for (i = 0; i < n; i++)
		for (j = 0; j < a.l; j++) {
			const struct lb_link *lk = &a.links[i * a.l + j];

			if (lk->target == LB_NO_TARGET)
				continue;
			tot++;
			in[lk->target]++;
			nrand += lk->type == LB_LINK_RANDOM;
			hit += strcmp(label[lk->target], label[i]) == 0;
		}
	for (i = 0; i < n; i++)
		if (in[i] < min)
			min = in[i];
	printf(" pub@8=%.4f min_in=%zu random=%zu", tot ? hit / (double)tot : 0,
	       min, nrand);
	free(in);
	free(lang);
	lb_assignment_release(&a);
	return 0;
}

int main(int argc, char **argv)
{
	FILE *f;
	char *line = NULL, **label = NULL;
	size_t cap = 0, n = 0, alloc = 0, i, j, nlab = 0;
	struct lb_doc *docs = NULL;
	const struct lb_doc **p;
	const char *name, *methods[] = { "lsa", "tfidf", "random" };
	const char **want = methods;
	int nwant = 3, w, multi = 0;
	struct lb_error err;

	if (argc > 1 && strcmp(argv[1], "-l") == 0) {
		multi = 1;
		argv++;
		argc--;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: relate_quality [-l] CORPUS [METHOD...]\n");
		return 2;
	}
	if (argc > 2) {
		want = (const char **)argv + 2;
		nwant = argc - 2;
	}
	f = fopen(argv[1], "r");
	if (f == NULL) {
		perror(argv[1]);
		return 1;
	}
	lb_error_init(&err);
	log_init(getenv("RELATE_DEBUG") ? 2 : 0);
	while (getline(&line, &cap, f) > 0) {
		char *tab = strchr(line, '\t');

		if (tab == NULL)
			continue;
		*tab = '\0';
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 256;
			docs = realloc(docs, alloc * sizeof(*docs));
			label = realloc(label, alloc * sizeof(*label));
		}
		if (lb_doc_from_json(tab + 1, &docs[n], &err) == -1) {
			fprintf(stderr, "bad doc: %s\n", err.msg);
			return 1;
		}
		label[n] = strdup(line);
		for (j = 0; j < n && strcmp(label[j], label[n]); j++)
			;
		nlab += j == n;
		n++;
	}
	fclose(f);
	free(line);
	p = malloc(n * sizeof(*p));
	for (i = 0; i < n; i++)
		p[i] = &docs[i];
	name = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];

	for (w = 0; w < nwant; w++) {
		struct lb_relate_input in = { .src = p, .n_src = n, .tgt = p,
					      .n_tgt = n,
					      .multi_language = multi };
		struct lb_relate_opts o = { .m = MC };
		struct lb_candidates c;
		double t0 = now_ms(), hit = 0;
		char meth[32];
		char *colon;

		/* RELATE_SEED: the randomized SVD's seed (how much a draw
		 * moves the figures, bench/RESULTS.md round 7) */
		if (getenv("RELATE_SEED"))
			o.seed = strtoull(getenv("RELATE_SEED"), NULL, 10);
		snprintf(meth, sizeof(meth), "%s", want[w]);
		colon = strchr(meth, ':');
		if (colon) {
			*colon = '\0';
			o.dim = strtoul(colon + 1, NULL, 10);
		}
		if (strcmp(meth, "random") == 0) {
			/* uniform without replacement, itself excluded (and
			 * with -l, pages of another language) */
			uint64_t s = 42;

			lb_candidates_init(&c, n, M);
			for (i = 0; i < n; i++)
				for (j = 0; j < M && j < same_lang(p, n, i, multi);
				     j++) {
					uint32_t t;
					size_t k;

					do {
						t = (uint32_t)(rnd(&s) % n);
						for (k = 0; k < j; k++)
							if (c.target[i * M + k] == t)
								break;
					} while (t == i || k < j ||
						 !lang_eq(p[t], p[i], multi));
					c.target[i * M + j] = t;
				}
		} else {
			o.method = strcmp(meth, "tfidf") == 0 ? LB_RELATE_TFIDF :
				   LB_RELATE_LSA;
			if (strcmp(meth, "lsa-nosmooth") == 0)
				o.smooth = -1;
			if (relate_candidates(&in, &o, &c, &err) == -1) {
				fprintf(stderr, "relate: %s\n", err.msg);
				return 1;
			}
		}
		for (i = 0; i < n; i++)
			for (j = 0; j < M; j++) {
				uint32_t t = c.target[i * c.m + j];

				if (t != LB_NO_TARGET &&
				    strcmp(label[t], label[i]) == 0)
					hit++;
			}
		if (getenv("RELATE_LABELS"))
			per_label(label, n, &c, p);
		printf("corpus=%s pages=%zu labels=%zu method=%s dim=%zu "
		       "p@8=%.4f ms=%.0f", name, n, nlab, meth, o.dim,
		       hit / (double)(n * M), now_ms() - t0);
		if (strcmp(meth, "random") != 0 &&
		    published(&c, label, p, n, multi) == -1)
			return 1;
		printf("\n");
		lb_candidates_release(&c);
	}
	for (i = 0; i < n; i++) {
		lb_doc_release(&docs[i]);
		free(label[i]);
	}
	free(docs);
	free(label);
	free(p);
	return 0;
}
