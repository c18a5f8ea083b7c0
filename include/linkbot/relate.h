/*
 * relate.h - stage 3: how related pages are.
 *
 * Turns each page's text into a vector and finds, for each source page,
 * its top-M targets by cosine similarity (never itself). The only module
 * that includes BLAS.
 *
 * Text to vectors (docs/relate.md): Unicode NFKC + case folding (utf8proc),
 * tokens, stop words and Snowball stemming for the page's language
 * (libstemmer), field weights (title, description, URL path words, text),
 * BM25-style term weights with common terms damped, then a semantic
 * projection (LSA by randomized truncated SVD, OpenBLAS/LAPACKE) - or,
 * optionally, vectors from an OpenAI-compatible /v1/embeddings server.
 *
 * Candidates: exact top-M by cosine, computed in blocks with sgemm fused
 * with selection, never N x N in memory; ties broken by the lower target
 * index, so the output is deterministic. With LSA, the top 2M by the
 * dense cosine are re-scored half dense, half the sparse cosine of the
 * weighted terms, and the best M kept (the hybrid re-ranking). When the source list is the
 * target list (same pointers, same order), each pair is computed once.
 *
 * Calling sequence:
 *   struct lb_relate_opts o = { .m = 32 };
 *   relate_candidates(&in, &o, &cand, &err);   cand owned by the caller:
 *   ...                                        lb_candidates_release(&cand)
 * Sharding: relate_shard_range(n_src, i, n, &o.row_begin, &o.row_end) per
 * job, then lb_candidates_merge() of the n parts in order and
 * relate_extend() give exactly the unsharded result (a row range is not
 * extended: the extension needs every row).
 */
#ifndef LINKBOT_RELATE_H
#define LINKBOT_RELATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "linkbot/candidates.h"
#include "linkbot/doc.h"
#include "linkbot/error.h"

/*
 * Where the pages' body text comes from when it is not in memory: relate
 * reads each page's text once, through one reader per thread, so that a
 * million pages never sit in memory with their text (pipeline/ reads the
 * corpus). open() returns a reader (NULL: error); get() sets *text to a
 * malloc'd copy of doc's text, or NULL for none, and, when links is not
 * NULL, fills it with doc's links (doc->links of the stored page; the
 * caller releases it).
 */
struct lb_text_source {
	void *(*open)(void *arg, struct lb_error *err);
	int (*get)(void *reader, const struct lb_doc *doc, char **text,
		   struct lb_doclinks *links, struct lb_error *err);
	void (*close)(void *reader);
	void *arg;
};

/*
 * A page's terms made when it is stored (the crawl, as each page is
 * extracted), so that its builds need not tokenize it again: doc->terms
 * (doc.h), relate's own format, ignored by a build of another version or
 * of another method than the default. One context per thread:
 *   struct relate_terms *t = relate_terms_new();    NULL: no memory
 *   relate_terms_doc(t, doc);   sets doc->terms (0), or leaves none (-1)
 *   relate_terms_free(t);
 */
struct relate_terms;
struct relate_terms *relate_terms_new(void);
int relate_terms_doc(struct relate_terms *t, struct lb_doc *doc);
void relate_terms_free(struct relate_terms *t);

struct lb_relate_input {
	const struct lb_doc *const *src;	/* source pages */
	size_t n_src;
	const struct lb_doc *const *tgt;	/* target pages */
	size_t n_tgt;
	/* self[i]: index in tgt of source i's own page, or -1. May be NULL. */
	const long *self;
	int multi_language;	/* pair only pages of the same language */
	/* the texts; NULL: doc->text of the pages above */
	const struct lb_text_source *text;
};

enum lb_relate_method {
	LB_RELATE_LSA = 0,	/* weighted terms + LSA projection, hybrid
				 * re-ranking (default) */
	LB_RELATE_TFIDF,	/* plain TF-IDF cosine (the baseline) */
	LB_RELATE_EMBED,	/* external /v1/embeddings (opts.embed) */
};

/* An OpenAI-compatible embeddings server (llama.cpp, Ollama, hosted). */
struct lb_relate_embed {
	const char *url;	/* base, e.g. "http://127.0.0.1:8080/v1" */
	const char *model;	/* "model" of the request */
	const char *api_key;	/* Bearer token or NULL (caller reads env) */
	const char *cache_path;	/* content-hash cache file, or NULL */
	size_t batch;		/* inputs per request; 0 = 32 */
	int retries;		/* extra tries on network error/5xx/429; 0 = 3 */
	long timeout_ms;	/* per request; 0 = 60000 */
	size_t max_chars;	/* input cut to this many bytes; 0 = 8000 */
};

struct lb_relate_opts {
	size_t m;		/* candidates per source */
	enum lb_relate_method method;
	size_t dim;		/* LSA dimensions; 0 = automatic (<= 256) */
	uint64_t seed;		/* randomized SVD; 0 = fixed default */
	/* Neighbour smoothing of LSA vectors (docs/relate.md): 0 = automatic
	 * (on up to 50000 pages), 1 = on, -1 = off. */
	int smooth;
	int threads;		/* 0 = every online core */
	/* Source rows [row_begin, row_end) only; both 0 = every row. The
	 * output then has row_end - row_begin rows. */
	size_t row_begin, row_end;
	const struct lb_relate_embed *embed;	/* for LB_RELATE_EMBED */
};

int relate_candidates(const struct lb_relate_input *in,
		      const struct lb_relate_opts *opts,
		      struct lb_candidates *out, struct lb_error *err);

/*
 * Extends the candidate lists for the targets that few lists hold
 * (docs/relate.md, src/relate/extend.c): a target in fewer than m/2 lists
 * is written, with its score, into the second half of the lists of the
 * sources nearest to it, in place of entries whose targets other lists
 * hold enough. c must hold every source row (in->n_src). Deterministic and
 * idempotent; relate_candidates() calls it when it computes every row,
 * relate_import_tsv() after reading the shards. 0, or -1 (memory).
 */
int relate_extend(struct lb_candidates *c, const struct lb_relate_input *in,
		  struct lb_error *err);

/*
 * Row range of shard i of n (0 <= i < n) over n_src source rows: contiguous
 * and balanced; the n ranges cover [0, n_src) in order. -1 if i >= n.
 */
int relate_shard_range(size_t n_src, unsigned i, unsigned n,
		       size_t *begin, size_t *end);

/*
 * Exact top-M of unit vectors: src (n_src x d) against tgt (n_tgt x d),
 * row-major floats, for source rows [row_begin, row_end). tgt == src and
 * n_tgt == n_src selects the symmetric path (each pair computed once).
 * self as in lb_relate_input (may be NULL). The engine behind
 * relate_candidates(), public for the benchmarks and for callers that
 * bring their own vectors.
 */
int relate_topm(const float *src, size_t n_src, const float *tgt,
		size_t n_tgt, size_t d, const long *self, size_t m,
		size_t row_begin, size_t row_end, int threads,
		struct lb_candidates *out, struct lb_error *err);

/*
 * Many builds at once (a night that runs clients at once, pipeline/
 * sched.c): BLAS computes on the calling thread only. OpenBLAS's thread
 * pool serves one large build; beside other builds its idle threads spin
 * (sched_yield) and cost a third of the CPU of a night of small sites.
 * Process-wide; call before the builds start. The results do not depend
 * on it (tests/integration/run-night.sh compares with a sequential night).
 */
void relate_blas_single(void);

/*
 * Candidate export (docs/relate.md): a "# linkbot candidates: ..." comment
 * line, then one line per candidate, "source_url<TAB>target_url<TAB>score\n",
 * score printed with "%.9g" so it reads back to the same float; sources in
 * row order, targets best first, padding omitted. Row r of cand is source
 * row_begin + r, so shard files concatenate (comment lines start with #).
 */
int relate_export_tsv(FILE *f, const struct lb_relate_input *in,
		      const struct lb_candidates *cand, size_t row_begin,
		      struct lb_error *err);

/*
 * Reads exports back, the files in order (shard exports in shard order),
 * line by line: m candidates per source of in, in file order, sources and
 * targets found by URL (URLs are unique within a page list). Rows absent
 * from the files stay padding. So n jobs each exporting
 * relate_shard_range() rows give the unsharded candidates exactly. Errors
 * name the file and line. The lists are then extended (relate_extend()),
 * as relate_candidates() does for every row. out is the caller's to
 * release.
 */
int relate_import_tsv(const char *const *paths, size_t n_paths,
		      const struct lb_relate_input *in, size_t m,
		      struct lb_candidates *out, struct lb_error *err);

#endif
