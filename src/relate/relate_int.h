/*
 * relate_int.h - (internal to relate/) the pieces behind relate.h:
 * text -> weighted sparse term vectors (text.c), sparse -> dense semantic
 * vectors (lsa.c), external embeddings (embed.c), stop words (stopwords.c).
 */
#ifndef LINKBOT_RELATE_INT_H
#define LINKBOT_RELATE_INT_H

#include <stddef.h>
#include <stdint.h>
#include "linkbot/doc.h"
#include "linkbot/error.h"
#include "linkbot/relate.h"

/* Sparse rows (CSR): row i has entries ptr[i] .. ptr[i+1]-1. */
struct csr {
	size_t n_rows, n_cols;
	size_t *ptr;		/* n_rows + 1 */
	uint32_t *col;		/* sorted within a row */
	float *val;
};

void csr_release(struct csr *x);

/* Dot product of rows a and b of x (columns sorted), in double, one fixed
 * order (rerank.c). */
double csr_dot(const struct csr *x, size_t a, size_t b);

/*
 * Weighted term vectors of docs, one unit-length row per doc (a doc
 * without terms gives an empty row). plain = 1: the baseline, tokens of
 * title and text, raw tf * log(N / df), no stemming, stop words or field
 * weights. plain = 0: the full weighting of docs/relate.md. Tokens are
 * read on up to `threads` threads; the result does not depend on it.
 * The body texts come from src when given (one reader per thread), else
 * from doc->text.
 */
int text_vectors(const struct lb_doc *const *docs, size_t n,
		 const struct lb_text_source *src, int plain, int threads,
		 struct csr *out, struct lb_error *err);

/*
 * linkgraph.c: the site's own links between the docs being related. An index
 * of the docs' URLs, then the edges of each doc's links that point at
 * another of the docs (exact URL), with their anchor text.
 */
struct link_index;
struct link_edge {
	uint32_t src, tgt;
	char *anchor;		/* or NULL */
};
struct link_edges {
	struct link_edge *v;
	size_t n, cap;
};
int link_index_new(const struct lb_doc *const *docs, size_t n,
		   struct link_index **out);
void link_index_free(struct link_index *ix);
/* Appends the edges of doc src's links l (may be NULL); -1: no memory. */
int link_edges_add(struct link_edges *e, const struct link_index *ix,
		   size_t src, const struct lb_doclinks *l);
void link_edges_release(struct link_edges *e);

/*
 * Splits s into normalised tokens (NFKC, case folded, stop words out,
 * stemmed for lang) and calls fn for each. For tests and the tools.
 */
int text_tokens(const char *s, const char *lang,
		void (*fn)(const char *tok, size_t len, void *arg), void *arg,
		struct lb_error *err);

/* 1 if word (case folded, UTF-8) is a stop word of lang ("en", ...). */
int stopword_is(const char *lang, const char *word, size_t len);

/*
 * Dense unit rows (n_rows x k, row-major) from x by randomized truncated
 * SVD: rows of U_k S_k, centred. *k is in: wanted, out: kept. threads as
 * in lb_relate_opts. Caller frees *out.
 */
int lsa_project(const struct csr *x, size_t *k, uint64_t seed, int threads,
		float **out, struct lb_error *err);

/*
 * The LSA's two views (lsa.c): lsa_project() at *k from seed and at *k / 2
 * from seed + 1, joined by lsa_views_join() with the second view's share
 * LSA_VIEW2_SHARE: unit rows of *k + *k / 2 dimensions (out: kept) whose
 * inner product is (1 - w) cos_a + w cos_b. One view when *k < 2.
 * *k_main (unless NULL): the first view's dimensions, the leading columns
 * of each row. Caller frees *out.
 */
#define LSA_VIEW2_SHARE 0.4
int lsa_views(const struct csr *x, size_t *k, size_t *k_main, uint64_t seed,
	      int threads, float **out, struct lb_error *err);
/* Rows of out (n x (da + db)) = [sqrt(1 - w) a_i, sqrt(w) b_i]. */
void lsa_views_join(const float *a, size_t da, const float *b, size_t db,
		    size_t n, double w, float *out);

/*
 * Dense unit rows from an OpenAI-compatible embeddings server, cached by
 * content hash; texts from src as in text_vectors(). *dim out. Caller
 * frees *out.
 */
int embed_vectors(const struct lb_doc *const *docs, size_t n,
		  const struct lb_text_source *src,
		  const struct lb_relate_embed *cfg, float **out, size_t *dim,
		  struct lb_error *err);

/* Normalise n rows of length d to unit length (zero rows stay zero). */
void rows_normalize(float *v, size_t n, size_t d);

/* splitmix64 */
uint64_t relate_rand(uint64_t *state);

/* topm.c's pieces that ivf.c shares: runs fn on args[0..nt) (each `size`
 * bytes) on nt threads; a bounded min-heap of m (score, target), the root
 * the worst in the total order (score, then lower target wins). */
#define RELATE_MAX_THREADS 256
void relate_run_threads(size_t nt, void *(*fn)(void *), void *args,
			size_t size);
void relate_heap_push(float *hs, uint32_t *ht, uint32_t *cnt, size_t m,
		      float s, uint32_t t);
/* The small path's selection (topm.c): a (score, target) pair as one
 * integer, larger = better in the heap's order; the m largest of k[0..n)
 * (distinct) moved to its front best first (tmp: n entries), min(n, m)
 * returned. */
uint64_t relate_rank_key(float s, uint32_t t);
size_t relate_keys_top(uint64_t *k, size_t n, size_t m, uint64_t *tmp);

/* The start of relate_topm() and ivf_topm(): checks the row range (both
 * 0 = every row) and the sizes, sets up out with its padding, and the
 * thread count nt; 1 = work to do, 0 = nothing (out is all padding), -1
 * = error (err). */
int topm_begin(size_t n_src, size_t n_tgt, size_t d, size_t m,
	       size_t *row_begin, size_t *row_end, int threads, size_t *nt,
	       struct lb_candidates *out, struct lb_error *err);

/* a candidate; cand_cmp() sorts best first (score, then lower target) */
struct cand {
	float s;
	uint32_t t;
};

int cand_cmp(const void *a, const void *b);
/*
 * v sorted by cand_cmp, the order qsort() gives: glibc's qsort is a
 * stable merge sort, and below CAND_SORT_SMALL items a stable insertion
 * sort with the comparison inline is the same order at a fraction of
 * the calls (rerank's rows arrive nearly sorted); larger ones go to
 * qsort().
 */
void cand_order(struct cand *v, size_t n);
/* sc[n / 2] after a stable sort of sc by value (qsort with a (x > y) -
 * (x < y) comparison), found by selection; reorders sc. */
float relate_median(float *sc, size_t n);
/*
 * out[j] = the sum over k < d of (double)a[k] * b[j][k], in k's order
 * (dense_rescore's scores); wide (relate_dots_wide(): AVX here, and no
 * LINKBOT_NO_AVX2) takes four rows a step, the same bits.
 */
void relate_dots(const float *a, const float *const *b, size_t n, size_t d,
		 int wide, double *out);
int relate_dots_wide(void);
/* lsa.c: orthonormal columns of a (rows x l, row-major, rows >= l) in
 * place, LAPACKE_sgeqrf + LAPACKE_sorgqr's bits; -1 on NaN or error */
int lsa_orth(float *a, size_t rows, size_t l, float *tau);

/*
 * Hybrid re-ranking (rerank.c, docs/relate.md): every row of c (its m0
 * candidates by dense score; candidate row i is doc row srow[rb + i] of
 * x, target t doc row t) scored rerank_score(dense, csr_dot(), a), the
 * best m kept, best first (score, then the lower target), padding where
 * fewer; c is replaced (random_floor kept). threads: up to that many;
 * the result does not depend on it. 0, or -1 (no memory: err, c kept).
 */
#define RERANK_SPARSE 0.5	/* a: the sparse cosine's share */
#define RERANK_DEPTH 2		/* dense candidates re-scored: 2M */

/*
 * Sparse memo (rerank.c): a small site's sparse dots, each unordered
 * pair of doc rows computed once. Design notes: random_floor() and the
 * re-ranking both score pairs by csr_dot(); on a site of 100 pages the
 * re-ranking's 2M candidates a row are two thirds of all pairs, so most
 * pairs come twice, (a, b) in a's list and (b, a) in b's, and the 2,000
 * random pairs are mostly among them. csr_dot(x, a, b) is csr_dot(x, b,
 * a), bit for bit: the same exact products (a float times a float in
 * double), added in the same order (increasing column). So the first
 * computation of a pair is kept in a triangle of doubles and read back
 * for the other. Up to SPARSE_MEMO_MAX doc rows (a triangle of 1.2 MB at
 * 512); none with LINKBOT_NO_SPARSE_MEMO (tests: the same bits without).
 * Not shared between threads: rerank_hybrid() uses it on one thread
 * only (the small sites').
 */
#define SPARSE_MEMO_MAX 512
struct sparse_memo {
	const struct csr *x;
	size_t n;		/* doc rows; 0: no memo */
	double *v;		/* n (n - 1) / 2 dots */
	unsigned char *have;	/* v[k] computed */
	float *xd;		/* x's rows dense over its vd used columns
				   (a small vocabulary: rerank.c,
				   memo_dense()), or NULL */
	size_t vd;
	int wide;		/* relate_dots_wide() */
};
#define SPARSE_MEMO_BATCH 64
/* 0 (a memo, or none when x is too large or the environment says so),
 * -1 out of memory (m then has none) */
int sparse_memo_init(struct sparse_memo *m, const struct csr *x);
void sparse_memo_release(struct sparse_memo *m);
/* csr_dot(m->x, r, t), acc holding row r scattered (zero elsewhere);
 * computed once a pair with a memo; m may have none (v NULL, x set). */
double sparse_memo_dot(struct sparse_memo *m, const float *acc, size_t r,
		       size_t t);
/* out[j] = csr_dot(m->x, r, t[j]) for j < n <= SPARSE_MEMO_BATCH, acc
 * as above; with the memo's dense rows four a step (same bits) */
void sparse_memo_dots(struct sparse_memo *m, const float *acc, size_t r,
		      const uint32_t *t, size_t n, double *out);

int rerank_hybrid(struct lb_candidates *c, const struct csr *x,
		  const size_t *srow, size_t rb, size_t m, double a,
		  int threads, struct sparse_memo *memo,
		  struct lb_error *err);
/* (1 - a) dense + a sparse, as a float */
float rerank_score(float dense, double sparse, double a);

/*
 * Approximate top-M for large sites (ivf.c, docs/relate.md): k-means
 * cells of the targets, each source row searched in its nprobe best
 * cells. relate_topm() calls it when ivf_wanted(n_tgt): from 200,000
 * targets, or as LINKBOT_IVF says (1 on, 0 off; benchmarks). Same
 * arguments and output as relate_topm(); par NULL = the defaults
 * (nlist = 4 sqrt(n_tgt), nprobe = 16; LINKBOT_IVF_NLIST, _NPROBE).
 * Deterministic for any thread count and row range.
 */
struct ivf_params {
	size_t nlist;		/* cells */
	size_t nprobe;		/* cells searched a row */
};

int ivf_wanted(size_t n_tgt);
void ivf_params_default(size_t n_tgt, struct ivf_params *p);
int ivf_topm(const float *src, size_t n_src, const float *tgt, size_t n_tgt,
	     size_t d, const long *self, size_t m, size_t row_begin,
	     size_t row_end, int threads, const struct ivf_params *par,
	     struct lb_candidates *out, struct lb_error *err);

#endif
