/*
 * text.c - page text to weighted sparse term vectors.
 *
 * Design notes
 *
 * Tokens: each field is mapped by utf8proc to NFKC with case folding and
 * default-ignorables removed, then cut into runs of letters, marks and
 * digits. Runs of only digits and runs shorter than two code points are
 * dropped, except ideographs and kana, which are tokens one character each
 * (those scripts do not separate words by spaces). Tokens are checked
 * against the stop words of the page's language and stemmed with the
 * Snowball stemmer of that language when libstemmer ships one ("en",
 * "pt-BR" -> "pt", ...). Unknown languages keep the unstemmed tokens.
 *
 * Weights (full mode): a term's frequency in a page is the weighted count
 * over its fields (title 3, description 2, URL path words 2, text 1), then
 * sublinear, 1 + ln tf, times idf = 1 + ln((1 + N) / (1 + df)); terms in
 * more than three quarters of the pages are dropped, so that one generic
 * word ("blog", a site name) cannot make every page related; the row's
 * unit length does the length normalisation. (Until issue 20: BM25
 * saturation and idf, terms damped from a quarter of the pages to nothing
 * at three quarters; the sublinear weights gave +0.003 to +0.021
 * published precision@8 on each site of the tuning half, bench/RESULTS.md.
 * Dropping from half the pages, scikit-learn's usual max_df, measured the
 * same there, but on a tiny site a few pages on one subject lose every
 * word.)
 * Before the weights, template blocks (many words in
 * exactly the same pages: a newsletter box, a notice) are taken out of the
 * pages that carry them (remove_blocks()). Terms of one page only are
 * dropped: they cannot relate two pages and only shrink every cosine; past
 * the 131072 terms of highest document frequency, terms are dropped too
 * (the LSA step keeps terms x 266 floats twice). Rows are unit length.
 *
 * Plain mode (the baseline of the benchmarks): title and text, raw tf
 * times ln(N / df), no stop words, no stemming, no field weights.
 *
 * Threads: docs are read in contiguous ranges, one per thread (a thread
 * per 64 docs at most), each with its own vocabulary and stemmers
 * (libstemmer is not thread-safe); the vocabularies are then merged in doc
 * order, so every term gets the id one thread would have given it.
 *
 * Memory: the vocabulary (one hash table) and the CSR matrix, O(tokens).
 */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libstemmer.h>
#include <utf8proc.h>

#include "linkbot/buf.h"
#include "relate_int.h"

#define TOK_MAX 64		/* bytes; longer runs are not words */
#define LANG_MAX 32
#define BLOCK_TERMS 8		/* a template block: terms in the same pages */
#define BLOCK_DF 5		/* ... and in this many pages at least */
#define BLOCK_MAX 16		/* blocks removed at most */
#define SHARE_MAX 0.75		/* terms in more pages than this are dropped */
#ifndef VOCAB_MAX
#define VOCAB_MAX 131072	/* terms kept (LSA memory is terms x 266) */
#endif
#define LINK_TERMS_MAX 32768	/* link terms kept, beside the words */
#define WC_MAX ((size_t)1 << 20)	/* words remembered a language */

void csr_release(struct csr *x)
{
	free(x->ptr);
	free(x->col);
	free(x->val);
	memset(x, 0, sizeof(*x));
}

/* ---- stemmers, one per language seen ---- */

struct stemmers {
	char lang[LANG_MAX][8];
	struct sb_stemmer *st[LANG_MAX];
	size_t n;
};

/* Primary subtag, lower case: "pt-BR" -> "pt". */
static void lang_key(const char *lang, char key[8])
{
	size_t i = 0;

	if (lang)
		for (; lang[i] && lang[i] != '-' && lang[i] != '_' && i < 7;
		     i++)
			key[i] = (char)tolower((unsigned char)lang[i]);
	key[i] = '\0';
}

static struct sb_stemmer *stemmer_get(struct stemmers *s, const char *lang)
{
	char key[8];
	size_t i;

	lang_key(lang, key);
	if (key[0] == '\0')
		return NULL;
	for (i = 0; i < s->n; i++)
		if (strcmp(s->lang[i], key) == 0)
			return s->st[i];
	if (s->n == LANG_MAX)
		return NULL;
	memcpy(s->lang[s->n], key, sizeof(key));
	s->st[s->n] = sb_stemmer_new(key, "UTF_8");
	return s->st[s->n++];
}

static void stemmers_release(struct stemmers *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->st[i])
			sb_stemmer_delete(s->st[i]);
	s->n = 0;
}

/* ---- tokenizer ---- */

typedef void tok_fn(const char *tok, size_t len, void *arg);

static int is_cjk(utf8proc_int32_t c)
{
	return (c >= 0x3040 && c <= 0x30ff) ||	/* kana */
	       (c >= 0x3400 && c <= 0x4dbf) ||	/* CJK ext A */
	       (c >= 0x4e00 && c <= 0x9fff) ||	/* CJK unified */
	       (c >= 0xf900 && c <= 0xfaff) ||	/* compatibility */
	       (c >= 0x20000 && c <= 0x2fa1f);
}

static int is_word(utf8proc_int32_t c)
{
	switch (utf8proc_category(c)) {
	case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL:
	case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
	case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN:
	case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
	case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL:
	case UTF8PROC_CATEGORY_NO:
		return 1;
	default:
		return 0;
	}
}

struct wcache;

struct tok_ctx {
	struct sb_stemmer *stem;	/* or NULL */
	const char *lang;
	int stop;			/* drop stop words */
	tok_fn *fn;
	void *arg;
	struct wcache *wc;		/* or NULL; fn is add_token then */
	struct tcache *tc;		/* or NULL (relate_terms_doc()) */
};

static int wc_emit(struct tok_ctx *t, const char *w, size_t len);
static int tc_emit(struct tok_ctx *t, const char *w, size_t len);

static void emit(struct tok_ctx *t, const char *w, size_t len, size_t ncp,
		 int digits_only)
{
	const sb_symbol *st;

	if (len > TOK_MAX || digits_only || ncp < 2)
		return;
	if (t->wc != NULL && wc_emit(t, w, len))
		return;
	if (t->tc != NULL && tc_emit(t, w, len))
		return;
	if (t->stop && stopword_is(t->lang, w, len))
		return;
	if (t->stem) {
		st = sb_stemmer_stem(t->stem, (const sb_symbol *)w, (int)len);
		if (st && sb_stemmer_length(t->stem) > 0) {
			t->fn((const char *)st,
			      (size_t)sb_stemmer_length(t->stem), t->arg);
			return;
		}
	}
	t->fn(w, len, t->arg);
}

/*
 * Text that is all ASCII (most of the web's English): NFKC with case
 * folding and default-ignorables removed is then only A-Z to a-z, and the
 * word characters are only letters and digits, so utf8proc is skipped; the
 * tokens are the same (test_relate.c holds the two paths together, on
 * hand-picked and on random texts).
 *
 * A word at a time, not a character at a time: the word is lowered into
 * w as it is scanned and handed to emit() whole (this loop ran ~50
 * instructions and a memcpy() call a character, ~10 % of a crawled
 * page's CPU with relate_terms_doc()). A word longer than TOK_MAX is
 * skipped, as emit() would.
 * 0, or -1 if s is not all ASCII (nothing emitted then).
 */
static int ascii_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

static int tokenize_ascii(const char *s, struct tok_ctx *t)
{
	const unsigned char *p = (const unsigned char *)s;
	char w[TOK_MAX + 1];
	size_t len;
	int digits;

	size_t n = strlen(s), i = 0;
	uint64_t w8;

	for (; i + 8 <= n; i += 8) {	/* eight bytes at a time */
		memcpy(&w8, p + i, 8);
		if (w8 & 0x8080808080808080ull)
			return -1;
	}
	for (; i < n; i++)
		if (p[i] >= 0x80)
			return -1;
	while (*p != '\0') {
		if (!ascii_word(*p)) {
			p++;
			continue;
		}
		len = 0;
		digits = 1;
		do {
			if (len < sizeof(w))	/* not tolower(): no locale */
				w[len] = (char)(*p >= 'A' && *p <= 'Z' ?
						*p - 'A' + 'a' : *p);
			len++;
			if (*p < '0' || *p > '9')
				digits = 0;
		} while (ascii_word(*++p));
		if (len <= TOK_MAX)
			emit(t, w, len, len, digits);
	}
	return 0;
}

static int tokenize(const char *s, struct tok_ctx *t)
{
	utf8proc_uint8_t *norm = NULL;
	utf8proc_ssize_t n, i = 0;
	char w[TOK_MAX + 8];
	size_t len = 0, ncp = 0;
	int digits = 1, over = 0;

	if (s == NULL || *s == '\0' || tokenize_ascii(s, t) == 0)
		return 0;
	n = utf8proc_map((const utf8proc_uint8_t *)s, 0, &norm,
			 UTF8PROC_NULLTERM | UTF8PROC_STABLE |
			 UTF8PROC_COMPOSE | UTF8PROC_COMPAT |
			 UTF8PROC_CASEFOLD | UTF8PROC_IGNORE);
	if (n < 0)
		return -1;	/* invalid UTF-8: the caller skips the field */
	while (i <= n) {
		utf8proc_int32_t c = -1;
		utf8proc_ssize_t k = 0;

		if (i < n) {
			k = utf8proc_iterate(norm + i, n - i, &c);
			if (k <= 0) {
				k = 1;
				c = -1;
			}
		}
		if (c >= 0 && is_cjk(c)) {
			/* flush, then the ideograph alone */
			if (!over)
				emit(t, w, len, ncp, digits);
			len = ncp = 0;
			digits = 1;
			over = 0;
			t->fn((const char *)norm + i, (size_t)k, t->arg);
		} else if (c >= 0 && is_word(c)) {
			if (len + (size_t)k <= TOK_MAX) {
				memcpy(w + len, norm + i, (size_t)k);
				len += (size_t)k;
			} else {
				over = 1;
			}
			ncp++;
			if (c < '0' || c > '9')
				digits = 0;
		} else {
			if (len && !over)
				emit(t, w, len, ncp, digits);
			len = ncp = 0;
			digits = 1;
			over = 0;
		}
		i += k ? k : 1;
	}
	free(norm);
	return 0;
}

int text_tokens(const char *s, const char *lang,
		void (*fn)(const char *tok, size_t len, void *arg), void *arg,
		struct lb_error *err)
{
	struct stemmers sm = { .n = 0 };
	struct tok_ctx t = { .lang = lang, .stop = 1, .fn = fn, .arg = arg };
	int rc;

	t.stem = stemmer_get(&sm, lang);
	rc = tokenize(s, &t);
	stemmers_release(&sm);
	if (rc == -1)
		return lb_error_set(err, LB_EINVALID, "text is not UTF-8");
	return 0;
}

/* ---- a page's terms, made when it is stored ---- */

/*
 * relate_terms_doc() runs the tokenizer of the full mode over one page's
 * fields as tokenize_range() does (same language, stop words, stems,
 * field weights) and keeps what it would hand the vocabulary: each
 * distinct term once, in the order of its first occurrence, with the sum
 * of its weights. A build that finds them with the page (pages loaded
 * with their texts) interns them in that order instead of tokenizing:
 * the same term ids, counts and lengths, so the same vectors. The crawl
 * makes them as each page is extracted (a night's crawl waits on the
 * hosts' rate with CPU to spare; its builds all come at the end).
 *
 * Format: TERMS_VERSION, then per term varint(weight) varint(length)
 * bytes. TERMS_VERSION changes with anything that changes what the full
 * mode's tokens are (tokenize(), emit(), the stop lists, the stemmers,
 * the fields and their weights): terms of another version are not used
 * (test_relate.c holds a page's terms to a fixed digest to say when).
 */
#define TERMS_VERSION 1
#define TERMS_SLOTS_MIN 256

struct terms_ent {
	uint32_t off, len;	/* in the term bytes */
	uint32_t w;		/* sum of the weights */
};

/*
 * What each word of one language became (its stem, or nothing: a stop
 * word), for the pages of a site, which repeat their words: a word seen
 * again costs one lookup instead of the stop list and the stemmer (as
 * wcache does for a build). At most WC_MAX words a language.
 */
struct tc_ent {
	char *word;		/* NULL: empty slot */
	char *out;		/* what emit() gave, or NULL: nothing */
	uint32_t wlen, olen;
};

struct tcache {
	char lang[LANG_MAX];
	struct tc_ent *slot;
	size_t cap, n;		/* cap a power of two */
};

struct relate_terms {
	struct tcache tc[LANG_MAX];
	size_t n_tc;
	struct stemmers sm;
	struct lb_buf bytes;	/* the terms' bytes, one after another */
	struct terms_ent *e;	/* the page's terms, first seen first */
	size_t n, cap;
	uint32_t *slot;		/* hash -> e index + 1; 0 empty */
	size_t n_slots;		/* a power of two */
	uint32_t field_w;
	int failed;
};

struct relate_terms *relate_terms_new(void)
{
	struct relate_terms *t = calloc(1, sizeof(*t));

	if (t != NULL)
		lb_buf_init(&t->bytes, (size_t)1 << 30);
	return t;
}

void relate_terms_free(struct relate_terms *t)
{
	size_t i, k;

	if (t == NULL)
		return;
	for (i = 0; i < t->n_tc; i++) {
		for (k = 0; k < t->tc[i].cap; k++) {
			free(t->tc[i].slot[k].word);
			free(t->tc[i].slot[k].out);
		}
		free(t->tc[i].slot);
	}
	stemmers_release(&t->sm);
	lb_buf_release(&t->bytes);
	free(t->e);
	free(t->slot);
	free(t);
}

static uint64_t hash(const char *s, size_t len);

static int terms_rehash(struct relate_terms *t, size_t n_slots)
{
	uint32_t *slot = calloc(n_slots, sizeof(*slot));
	size_t i;

	if (slot == NULL)
		return -1;
	for (i = 0; i < t->n; i++) {
		size_t j = hash(t->bytes.data + t->e[i].off, t->e[i].len) &
			   (n_slots - 1);

		while (slot[j])
			j = (j + 1) & (n_slots - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->n_slots = n_slots;
	return 0;
}

/* tok_fn: one token of the page, as add_token() would take it */
static void terms_token(const char *tok, size_t len, void *arg)
{
	struct relate_terms *t = arg;
	struct lb_error err;
	size_t j;

	if (t->failed)
		return;
	if (2 * (t->n + 1) > t->n_slots &&
	    terms_rehash(t, t->n_slots ? 2 * t->n_slots : TERMS_SLOTS_MIN) <
		    0) {
		t->failed = 1;
		return;
	}
	j = hash(tok, len) & (t->n_slots - 1);
	while (t->slot[j]) {
		struct terms_ent *e = &t->e[t->slot[j] - 1];

		if (e->len == len &&
		    memcmp(t->bytes.data + e->off, tok, len) == 0) {
			e->w += t->field_w;
			return;
		}
		j = (j + 1) & (t->n_slots - 1);
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct terms_ent *e = realloc(t->e, cap * sizeof(*e));

		if (e == NULL) {
			t->failed = 1;
			return;
		}
		t->e = e;
		t->cap = cap;
	}
	lb_error_init(&err);
	t->e[t->n] = (struct terms_ent){ (uint32_t)t->bytes.len,
					 (uint32_t)len, t->field_w };
	if (lb_buf_add(&t->bytes, tok, len, &err) < 0) {
		t->failed = 1;
		return;
	}
	t->slot[j] = (uint32_t)++t->n;
}

/* The cache of lang (NULL: none); NULL when too many languages. */
static struct tcache *tc_get(struct relate_terms *t, const char *lang)
{
	size_t i;

	if (lang == NULL)
		lang = "";
	if (strlen(lang) >= LANG_MAX)
		return NULL;
	for (i = 0; i < t->n_tc; i++)
		if (strcmp(t->tc[i].lang, lang) == 0)
			return &t->tc[i];
	if (t->n_tc == LANG_MAX)
		return NULL;
	strcpy(t->tc[t->n_tc].lang, lang);
	return &t->tc[t->n_tc++];
}

/* emit()'s fn while a word takes the long way: what it gives */
struct tc_catch {
	char *out;
	size_t len;
	int failed;
};

static void tc_catch(const char *tok, size_t len, void *arg)
{
	struct tc_catch *c = arg;

	free(c->out);
	if ((c->out = malloc(len + 1)) == NULL) {
		c->failed = 1;
		return;
	}
	memcpy(c->out, tok, len);
	c->out[len] = '\0';
	c->len = len;
}

static int tc_grow(struct tcache *c)
{
	size_t cap = c->cap ? 2 * c->cap : 1024, i;
	struct tc_ent *slot = calloc(cap, sizeof(*slot));

	if (slot == NULL)
		return -1;
	for (i = 0; i < c->cap; i++) {
		size_t j;

		if (c->slot[i].word == NULL)
			continue;
		j = hash(c->slot[i].word, c->slot[i].wlen) & (cap - 1);
		while (slot[j].word)
			j = (j + 1) & (cap - 1);
		slot[j] = c->slot[i];
	}
	free(c->slot);
	c->slot = slot;
	c->cap = cap;
	return 0;
}

/* emit() through the cache: 1 when handled (t->fn called or the word
 * dropped), 0 to take the long way (nothing cached). */
static int tc_emit(struct tok_ctx *t, const char *w, size_t len)
{
	struct tcache *c = t->tc;
	struct tok_ctx plain = *t;
	struct tc_catch got = { NULL, 0, 0 };
	size_t j = 0;
	char *word;

	if (c->cap > 0) {
		j = hash(w, len) & (c->cap - 1);
		while (c->slot[j].word) {
			if (c->slot[j].wlen == len &&
			    memcmp(c->slot[j].word, w, len) == 0) {
				if (c->slot[j].out != NULL)
					t->fn(c->slot[j].out, c->slot[j].olen,
					      t->arg);
				return 1;
			}
			j = (j + 1) & (c->cap - 1);
		}
	}
	if (c->n >= WC_MAX)
		return 0;
	/* the long way, once: what the word becomes */
	plain.tc = NULL;
	plain.fn = tc_catch;
	plain.arg = &got;
	emit(&plain, w, len, 2, 0);
	if (got.failed || (2 * (c->n + 1) > c->cap && tc_grow(c) < 0) ||
	    (word = malloc(len + 1)) == NULL) {
		free(got.out);
		return 0;
	}
	j = hash(w, len) & (c->cap - 1);
	while (c->slot[j].word)
		j = (j + 1) & (c->cap - 1);
	memcpy(word, w, len);
	word[len] = '\0';
	c->slot[j] = (struct tc_ent){ word, got.out, (uint32_t)len,
				      (uint32_t)got.len };
	c->n++;
	if (got.out != NULL)
		t->fn(got.out, got.len, t->arg);
	return 1;
}

static int varint_put(struct lb_buf *b, uint64_t v, struct lb_error *err)
{
	unsigned char c[10];
	size_t n = 0;

	do {
		c[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return lb_buf_add(b, c, n, err);
}

static int varint_get(const unsigned char **p, const unsigned char *end,
		      uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		unsigned char c = *(*p)++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

int relate_terms_doc(struct relate_terms *t, struct lb_doc *doc)
{
	struct tok_ctx c = { .lang = doc->language, .stop = 1,
			     .fn = terms_token, .arg = t };
	struct lb_buf out;
	struct lb_error err;
	size_t i, j;

	free(doc->terms);
	doc->terms = NULL;
	doc->terms_len = 0;
	t->n = 0;
	t->failed = 0;
	lb_buf_reset(&t->bytes);
	if (t->slot != NULL)
		memset(t->slot, 0, t->n_slots * sizeof(*t->slot));
	c.stem = stemmer_get(&t->sm, doc->language);
	c.tc = tc_get(t, doc->language);
	/* the fields and weights of tokenize_range() */
	t->field_w = 3;
	tokenize(doc->title, &c);
	t->field_w = 2;
	tokenize(doc->description, &c);
	tokenize(doc->url_path, &c);
	t->field_w = 1;
	tokenize(doc->text, &c);
	if (t->failed)
		return -1;
	lb_buf_init(&out, (size_t)1 << 30);
	lb_error_init(&err);
	if (lb_buf_addc(&out, TERMS_VERSION, &err) < 0)
		goto fail;
	for (i = 0; i < t->n; i++) {
		j = t->e[i].off;
		if (varint_put(&out, t->e[i].w, &err) < 0 ||
		    varint_put(&out, t->e[i].len, &err) < 0 ||
		    lb_buf_add(&out, t->bytes.data + j, t->e[i].len, &err) < 0)
			goto fail;
	}
	doc->terms_len = out.len;
	doc->terms = (unsigned char *)lb_buf_take(&out);
	return doc->terms != NULL ? 0 : -1;
fail:
	lb_buf_release(&out);
	return -1;
}

/* 1 if blob is whole terms of this version, else 0 (then tokenized). */
static int terms_check(const unsigned char *blob, size_t len)
{
	const unsigned char *p = blob + 1, *end = blob + len;
	uint64_t w, n;

	if (len < 1 || blob[0] != TERMS_VERSION)
		return 0;
	while (p < end) {
		if (varint_get(&p, end, &w) < 0 || w == 0 || w > UINT32_MAX ||
		    varint_get(&p, end, &n) < 0 || n == 0 ||
		    n > (uint64_t)(end - p))
			return 0;
		p += n;
	}
	return 1;
}

/* ---- vocabulary ---- */

struct term {
	char *s;		/* NULL: empty slot */
	uint32_t len, id;
};

struct vocab {
	struct term *slot;
	size_t cap, n;		/* cap a power of two */
	uint32_t *df;		/* by id */
	uint32_t *last;		/* by id: last doc + 1 that counted df */
	size_t df_cap;
};

static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

/* Doubles an open-addressing table of terms (first size: first). */
static int terms_grow(struct term **slots, size_t *capp, size_t first)
{
	size_t cap = *capp ? *capp * 2 : first, i;
	struct term *slot = calloc(cap, sizeof(*slot)), *old = *slots;

	if (slot == NULL)
		return -1;
	for (i = 0; i < *capp; i++) {
		size_t j;

		if (old[i].s == NULL)
			continue;
		j = hash(old[i].s, old[i].len) & (cap - 1);
		while (slot[j].s)
			j = (j + 1) & (cap - 1);
		slot[j] = old[i];
	}
	free(old);
	*slots = slot;
	*capp = cap;
	return 0;
}

/* (first 512 slots: a site of 100 pages has a few hundred terms, and a
 * table of 4,096 cost more to clear and to free than its terms; ids are
 * by first sight, never by slot, so the size changes no result) */
static int vocab_grow(struct vocab *v)
{
	return terms_grow(&v->slot, &v->cap, 512);
}

/* Id of the term, added when new; -1 on no memory. */
static long vocab_id(struct vocab *v, const char *s, size_t len)
{
	size_t j;

	if (2 * (v->n + 1) > v->cap && vocab_grow(v) == -1)
		return -1;
	j = hash(s, len) & (v->cap - 1);
	while (v->slot[j].s) {
		if (v->slot[j].len == len && memcmp(v->slot[j].s, s, len) == 0)
			return v->slot[j].id;
		j = (j + 1) & (v->cap - 1);
	}
	if (v->n == v->df_cap) {
		size_t cap = v->df_cap ? 2 * v->df_cap : 4096;
		uint32_t *df = realloc(v->df, cap * sizeof(*df));
		uint32_t *last;

		if (df == NULL)
			return -1;
		v->df = df;
		last = realloc(v->last, cap * sizeof(*last));
		if (last == NULL)
			return -1;
		v->last = last;
		v->df_cap = cap;
	}
	v->slot[j].s = malloc(len + 1);
	if (v->slot[j].s == NULL)
		return -1;
	memcpy(v->slot[j].s, s, len);
	v->slot[j].s[len] = '\0';
	v->slot[j].len = (uint32_t)len;
	v->slot[j].id = (uint32_t)v->n;
	v->df[v->n] = 0;
	v->last[v->n] = 0;
	return (long)v->n++;
}

static void vocab_release(struct vocab *v)
{
	size_t i;

	for (i = 0; i < v->cap; i++)
		free(v->slot[i].s);
	free(v->slot);
	free(v->df);
	free(v->last);
	memset(v, 0, sizeof(*v));
}

/* ---- building the matrix ---- */

struct entry {
	uint32_t id;
	float w;
};

struct builder {
	struct vocab voc;
	struct entry *e;	/* every (doc, term, field weight) */
	size_t n, cap;
	size_t *doc_start;	/* n_docs + 1 */
	float field_w;
	int failed;
	uint32_t last_id;	/* of the last add_token() (wc_emit()) */
};

static void add_id(struct builder *b, uint32_t id)
{
	if (b->failed)
		return;
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 1 << 16;
		struct entry *e = realloc(b->e, cap * sizeof(*e));

		if (e == NULL) {
			b->failed = 1;
			return;
		}
		b->e = e;
		b->cap = cap;
	}
	b->e[b->n].id = id;
	b->e[b->n].w = b->field_w;
	b->n++;
}

static void add_token(const char *tok, size_t len, void *arg)
{
	struct builder *b = arg;
	long id;

	if (b->failed)
		return;
	id = vocab_id(&b->voc, tok, len);
	if (id < 0) {
		b->failed = 1;
		return;
	}
	b->last_id = (uint32_t)id;
	add_id(b, (uint32_t)id);
}

/* ---- words seen: a word of the text -> its term ---- */

/*
 * The pages of a site repeat their words. Each thread remembers, for one
 * language of its pages, what a word (normalised, before the stop list
 * and the stemmer) became: a term id, or nothing (a stop word). A word
 * seen again then costs one lookup instead of the stop list's bsearch, the
 * stemmer and the vocabulary's hash of the stem; the id is the one
 * vocab_id() gave the first time, so the matrix is the same. At most
 * WC_MAX words a language are kept (a huge site's rare words are not).
 */
#define WC_DROP UINT32_MAX

struct wcache {
	char lang[LANG_MAX];	/* the doc's language as given ("" none) */
	struct term *slot;	/* word -> term id, WC_DROP: a stop word */
	size_t cap, n;		/* cap a power of two */
};

struct wcaches {
	struct wcache c[LANG_MAX];
	size_t n;
};

/* The words of docs in lang (NULL: none); NULL when too many languages. */
static struct wcache *wc_get(struct wcaches *w, const char *lang)
{
	size_t i;

	if (lang == NULL)
		lang = "";
	if (strlen(lang) >= LANG_MAX)
		return NULL;
	for (i = 0; i < w->n; i++)
		if (strcmp(w->c[i].lang, lang) == 0)
			return &w->c[i];
	if (w->n == LANG_MAX)
		return NULL;
	strcpy(w->c[w->n].lang, lang);
	return &w->c[w->n++];
}

static void wc_release(struct wcaches *w)
{
	size_t i, k;

	for (i = 0; i < w->n; i++) {
		for (k = 0; k < w->c[i].cap; k++)
			free(w->c[i].slot[k].s);
		free(w->c[i].slot);
	}
	w->n = 0;
}

static int wc_grow(struct wcache *c)
{
	return terms_grow(&c->slot, &c->cap, 1024);
}

/*
 * emit() through the cache: 1 if the word was handled (added, or dropped
 * as a stop word), 0 to take the long way (and nothing is cached).
 */
static int wc_emit(struct tok_ctx *t, const char *w, size_t len)
{
	struct wcache *c = t->wc;
	struct builder *b = t->arg;
	struct tok_ctx plain = *t;
	size_t j = 0;
	char *copy;

	if (c->cap > 0) {
		j = hash(w, len) & (c->cap - 1);
		while (c->slot[j].s) {
			if (c->slot[j].len == len &&
			    memcmp(c->slot[j].s, w, len) == 0) {
				if (c->slot[j].id != WC_DROP)
					add_id(b, c->slot[j].id);
				return 1;
			}
			j = (j + 1) & (c->cap - 1);
		}
	}
	/* the long way, once: what the word becomes */
	plain.wc = NULL;
	b->last_id = WC_DROP;
	emit(&plain, w, len, 2, 0);
	if (b->failed || c->n >= WC_MAX)
		return 1;
	if (2 * (c->n + 1) > c->cap) {
		if (wc_grow(c) < 0)
			return 1;	/* not cached: the next one tries */
		j = hash(w, len) & (c->cap - 1);
		while (c->slot[j].s)
			j = (j + 1) & (c->cap - 1);
	}
	if ((copy = malloc(len + 1)) == NULL)
		return 1;
	memcpy(copy, w, len);
	copy[len] = '\0';
	c->slot[j].s = copy;
	c->slot[j].len = (uint32_t)len;
	c->slot[j].id = b->last_id;
	c->n++;
	return 1;
}

/*
 * keep[id] = 1 for the terms to use: df >= 2, the VOCAB_MAX words of
 * highest df and, apart, the LINK_TERMS_MAX link terms of highest df
 * (add_link_terms(): a million pages would give a million of them, which
 * would push words out of the cap), ties to the lower id.
 */
static int vocab_keep(const struct vocab *v, size_t n, unsigned char **out)
{
	size_t *hist = calloc(n + 2, sizeof(*hist)), i, total, cut;
	size_t at_cut, budget;
	unsigned char *keep = calloc(v->n + 1, 1);
	unsigned char *cls = calloc(v->n + 1, 1);
	int c;

	if (hist == NULL || keep == NULL || cls == NULL) {
		free(hist);
		free(keep);
		free(cls);
		return -1;
	}
	for (i = 0; i < v->cap; i++)
		if (v->slot[i].s != NULL && v->slot[i].s[0] == '\x01')
			cls[v->slot[i].id] = 1;
	for (c = 0; c < 2; c++) {
		budget = c == 0 ? VOCAB_MAX : LINK_TERMS_MAX;
		memset(hist, 0, (n + 2) * sizeof(*hist));
		for (i = 0; i < v->n; i++)
			if (cls[i] == c)
				hist[v->df[i] <= n ? v->df[i] : n]++;
		/* the lowest df that still fits, counting from the top */
		total = 0;
		at_cut = 0;
		for (cut = n; cut >= 2; cut--) {
			if (total + hist[cut] > budget)
				break;
			total += hist[cut];
		}
		if (cut < 2)
			cut = 1;	/* everything with df >= 2 fits */
		else
			at_cut = budget - total;	/* room left at cut */
		for (i = 0; i < v->n; i++) {
			if (cls[i] != c)
				continue;
			if (v->df[i] > cut && v->df[i] >= 2)
				keep[i] = 1;
			else if (v->df[i] == cut && cut >= 2 && at_cut) {
				keep[i] = 1;
				at_cut--;
			}
		}
	}
	free(hist);
	free(cls);
	*out = keep;
	return 0;
}

/*
 * A doc's entries by term id, ascending (before the merge an id may
 * repeat: equal ids come out next to each other in any order, and their
 * weights, small integers, sum exactly whatever the order). qsort()'s
 * call per comparison cost more than the sort itself: quicksort on the
 * ids, insertion sort below 16.
 */
static void entries_sort(struct entry *e, size_t n)
{
	while (n > 16) {
		size_t i = 0, j = n - 1, mid = n / 2;
		uint32_t a = e[0].id, b = e[mid].id, c = e[n - 1].id, pv;
		struct entry t;

		pv = a < b ? (b < c ? b : a < c ? c : a) :
			     (a < c ? a : b < c ? c : b);
		for (;;) {
			while (e[i].id < pv)
				i++;
			while (e[j].id > pv)
				j--;
			if (i >= j)
				break;
			t = e[i];
			e[i] = e[j];
			e[j] = t;
			i++;
			j--;
		}
		/* [0, j] <= pv <= [j + 1, n): the smaller side first */
		if (j + 1 < n - j - 1) {
			entries_sort(e, j + 1);
			e += j + 1;
			n -= j + 1;
		} else {
			entries_sort(e + j + 1, n - j - 1);
			n = j + 1;
		}
	}
	for (size_t i = 1; i < n; i++) {
		struct entry x = e[i];
		size_t k = i;

		for (; k > 0 && e[k - 1].id > x.id; k--)
			e[k] = e[k - 1];
		e[k] = x;
	}
}

/* A page's stored terms (terms_check()ed) into the builder, as its
 * tokens would have come: first seen first, each with its weights. */
static void terms_add(struct builder *b, const unsigned char *blob,
		      size_t len)
{
	const unsigned char *p = blob + 1, *end = blob + len;
	uint64_t w, n;

	while (p < end && !b->failed) {
		varint_get(&p, end, &w);
		varint_get(&p, end, &n);
		b->field_w = (float)w;
		add_token((const char *)p, (size_t)n, b);
		p += n;
	}
}

/* One thread's share of pass 1: docs [i0, i1), local ids. */
struct part {
	const struct lb_doc *const *docs;
	const struct lb_text_source *src;	/* NULL: docs' text */
	size_t i0, i1;
	int plain;
	const struct link_index *ix;	/* NULL: links not used */
	struct link_edges edges;	/* of docs [i0, i1), in order */
	struct lb_error err;	/* when src failed */
	double *len;		/* shared, indexed by doc */
	struct builder b;	/* doc_start relative to i0 */
	pthread_t tid;
	int started;
};

static void *tokenize_range(void *arg)
{
	struct part *p = arg;
	struct builder *b = &p->b;
	struct stemmers sm = { .n = 0 };
	struct wcaches wc = { .n = 0 };
	void *reader = NULL;
	size_t i, r;

	b->doc_start = malloc((p->i1 - p->i0 + 1) * sizeof(*b->doc_start));
	if (b->doc_start == NULL) {
		b->failed = 1;
		return NULL;
	}
	if (p->src && (reader = p->src->open(p->src->arg, &p->err)) == NULL) {
		b->failed = 2;
		return NULL;
	}
	for (i = p->i0; i < p->i1 && !b->failed; i++) {
		const struct lb_doc *d = p->docs[i];
		struct tok_ctx t = { .lang = d->language, .stop = !p->plain,
				     .fn = add_token, .arg = b };
		char *fetched = NULL;
		struct lb_doclinks got = { NULL, 0 };
		size_t k, w;

		r = i - p->i0;
		b->doc_start[r] = b->n;
		if (!p->plain && reader == NULL && d->terms != NULL &&
		    terms_check(d->terms, d->terms_len)) {
			/* made when the page was stored: the same tokens */
			terms_add(b, d->terms, d->terms_len);
			goto tokens_done;
		}
		t.stem = p->plain ? NULL : stemmer_get(&sm, d->language);
		t.wc = wc_get(&wc, d->language);
		b->field_w = p->plain ? 1.0f : 3.0f;
		tokenize(d->title, &t);
		if (!p->plain) {
			b->field_w = 2.0f;
			tokenize(d->description, &t);
			tokenize(d->url_path, &t);
		}
		b->field_w = 1.0f;
		if (reader && p->src->get(reader, d, &fetched,
					  p->ix ? &got : NULL, &p->err) < 0) {
			lb_doclinks_release(&got);
			b->failed = 2;
			break;
		}
		tokenize(reader ? fetched : d->text, &t);
		free(fetched);
tokens_done:
		if (p->ix && link_edges_add(&p->edges, p->ix, i,
					    reader ? &got : &d->links) < 0)
			b->failed = 1;
		lb_doclinks_release(&got);
		if (b->failed)
			break;
		/* merge duplicates of this doc (weights are small sums of
		 * 1, 2, 3: exact in float whatever the order) */
		entries_sort(b->e + b->doc_start[r], b->n - b->doc_start[r]);
		for (k = w = b->doc_start[r]; k < b->n; k++) {
			p->len[i] += b->e[k].w;
			if (w > b->doc_start[r] && b->e[w - 1].id == b->e[k].id) {
				b->e[w - 1].w += b->e[k].w;
				continue;
			}
			b->e[w++] = b->e[k];
			b->voc.df[b->e[k].id]++;
		}
		b->n = w;
	}
	b->doc_start[p->i1 - p->i0] = b->n;
	stemmers_release(&sm);
	wc_release(&wc);
	if (reader)
		p->src->close(reader);
	return NULL;
}

/*
 * The parts' local vocabularies into one, in doc order: a term's global id
 * is its first occurrence over all docs, exactly as one thread would have
 * numbered it, so the result does not depend on the number of threads.
 */
static int merge_parts(struct builder *b, struct part *part, int nt)
{
	size_t total = 0, at = 0, i, k;
	int t;

	for (t = 0; t < nt; t++)
		total += part[t].b.n;
	b->e = malloc((total + 1) * sizeof(*b->e));
	if (b->e == NULL)
		return -1;
	b->cap = total + 1;
	for (t = 0; t < nt; t++) {
		struct builder *pb = &part[t].b;
		const char **str = calloc(pb->voc.n + 1, sizeof(*str));
		uint32_t *slen = calloc(pb->voc.n + 1, sizeof(*slen));
		uint32_t *map = calloc(pb->voc.n + 1, sizeof(*map));

		if (str == NULL || slen == NULL || map == NULL) {
			free(str);
			free(slen);
			free(map);
			return -1;
		}
		for (i = 0; i < pb->voc.cap; i++)
			if (pb->voc.slot[i].s) {
				str[pb->voc.slot[i].id] = pb->voc.slot[i].s;
				slen[pb->voc.slot[i].id] = pb->voc.slot[i].len;
			}
		for (i = 0; i < pb->voc.n; i++) {
			long id = vocab_id(&b->voc, str[i], slen[i]);

			if (id < 0) {
				free(str);
				free(slen);
				free(map);
				return -1;
			}
			map[i] = (uint32_t)id;
			b->voc.df[id] += pb->voc.df[i];
		}
		for (i = part[t].i0; i < part[t].i1; i++) {
			size_t r = i - part[t].i0;

			b->doc_start[i] = at;
			for (k = pb->doc_start[r]; k < pb->doc_start[r + 1];
			     k++) {
				b->e[at].id = map[pb->e[k].id];
				b->e[at].w = pb->e[k].w;
				at++;
			}
			entries_sort(b->e + b->doc_start[i],
				     at - b->doc_start[i]);
		}
		free(str);
		free(slen);
		free(map);
	}
	b->n = at;
	return 0;
}

struct posting {
	uint64_t h;
	uint32_t df, id;
};

static int posting_cmp(const void *a, const void *b)
{
	const struct posting *x = a, *y = b;

	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	if (x->df != y->df)
		return x->df < y->df ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Index of term id among doc i's entries (sorted by id), or -1. */
static long find_entry(const struct builder *b, size_t i, uint32_t id)
{
	size_t lo = b->doc_start[i], hi = b->doc_start[i + 1];

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (b->e[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->doc_start[i + 1] && b->e[lo].id == id &&
	       b->e[lo].w > 0 ? (long)lo : -1;
}

struct group {
	size_t first, terms;	/* in the sorted postings */
	uint32_t df;
	uint64_t h;
};

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->terms != y->terms)
		return x->terms > y->terms ? -1 : 1;
	if (x->df != y->df)
		return x->df > y->df ? -1 : 1;
	return x->h < y->h ? -1 : x->h > y->h;
}

static int size_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Template blocks (a sidebar, a cookie notice, a newsletter box repeated on
 * part of a site): text the pages did not choose, which would make every
 * page carrying it related to every other. Found by their words: a block
 * has BLOCK_TERMS or more words found in exactly the same pages, and in at
 * least BLOCK_DF pages and 2 % of the site (S, those pages). Every term
 * present in all pages of S is then taken to be in the block as many times
 * as in the page of S that has it least; that count is removed from the
 * pages of S (their df and length too), so what a page says beyond the
 * block stays. Pages that are near-copies of each other (versions of one
 * page) also share all their words: a "block" making up more than half of
 * the text of most of its pages is such a set and is left alone. Blocks
 * with the most words first; at most BLOCK_MAX blocks removed, 4 times as
 * many examined. Terms in over SHARE_MAX of the pages are left as they
 * are: they are dropped anyway, and removing some of their occurrences
 * would bring them back. Deterministic: depends on the merged matrix only.
 */
static int remove_blocks(struct builder *b, size_t n, double *len)
{
	size_t i, k, q, nt = b->voc.n, np = 0, nb = 0, ns, ng = 0, gi;
	size_t dfmin = n / 50 > BLOCK_DF ? n / 50 : BLOCK_DF;
	uint64_t *h = calloc(nt + 1, sizeof(*h));
	struct posting *p = malloc((nt + 1) * sizeof(*p));
	struct group *grp = malloc((nt / BLOCK_TERMS + 1) * sizeof(*grp));
	uint32_t *cnt = calloc(nt + 1, sizeof(*cnt));
	float *minw = malloc((nt + 1) * sizeof(*minw));
	size_t *in_s = malloc((n + 1) * sizeof(*in_s));
	double *share = malloc((n + 1) * sizeof(*share));
	int rc = -1;

	if (!h || !p || !grp || !cnt || !minw || !in_s || !share)
		goto out;
	/* a hash of each term's page list */
	for (i = 0; i < n; i++)
		for (k = b->doc_start[i]; k < b->doc_start[i + 1]; k++) {
			uint64_t x = h[b->e[k].id] ^ (i + 1);

			h[b->e[k].id] = relate_rand(&x);
		}
	for (i = 0; i < nt; i++)
		if (b->voc.df[i] >= dfmin)
			p[np++] = (struct posting){ h[i], b->voc.df[i],
						    (uint32_t)i };
	qsort(p, np, sizeof(*p), posting_cmp);
	/* the groups, most terms first (then most pages, then hash) */
	for (q = 0; q < np; q = k) {
		for (k = q + 1; k < np && p[k].h == p[q].h &&
		     p[k].df == p[q].df; k++)
			;
		if (k - q >= BLOCK_TERMS)
			grp[ng++] = (struct group){ q, k - q, p[q].df, p[q].h };
	}
	qsort(grp, ng, sizeof(*grp), group_cmp);
	for (gi = 0; gi < ng && gi < 4 * BLOCK_MAX && nb < BLOCK_MAX; gi++) {
		double blk;

		q = grp[gi].first;
		/* S: the pages of the group's first term */
		for (i = 0, ns = 0; i < n; i++)
			if (find_entry(b, i, p[q].id) >= 0)
				in_s[ns++] = i;
		if (ns < dfmin || ns > SHARE_MAX * n)
			continue;	/* an earlier block's, or damped anyway */
		/* terms in every page of S, and their least count there */
		for (i = 0; i < ns; i++)
			for (size_t e = b->doc_start[in_s[i]];
			     e < b->doc_start[in_s[i] + 1]; e++) {
				uint32_t id = b->e[e].id;

				if (b->e[e].w <= 0)
					continue;	/* an earlier block's */
				if (b->voc.df[id] > SHARE_MAX * n)
					continue;	/* damped to 0 anyway */
				if (cnt[id] == 0 || b->e[e].w < minw[id])
					minw[id] = b->e[e].w;
				cnt[id]++;
			}
		/* the block's share of each page of S; the median decides */
		for (i = 0; i < ns; i++) {
			size_t d = in_s[i];

			blk = 0;
			for (size_t e = b->doc_start[d]; e < b->doc_start[d + 1];
			     e++)
				if (cnt[b->e[e].id] == ns && b->e[e].w > 0)
					blk += minw[b->e[e].id];
			share[i] = len[d] > 0 ? blk / len[d] : 1;
		}
		qsort(share, ns, sizeof(*share), size_cmp);
		for (i = 0; i < ns; i++) {
			size_t d = in_s[i];

			for (size_t e = b->doc_start[d]; e < b->doc_start[d + 1];
			     e++) {
				uint32_t id = b->e[e].id;

				if (cnt[id] != ns || b->e[e].w <= 0 ||
				    share[ns / 2] > 0.5)
					continue;
				b->e[e].w -= minw[id];
				len[d] -= minw[id];
				if (b->e[e].w <= 0)
					b->voc.df[id]--;
			}
		}
		/* cnt back to zero (the pages of S only touched it) */
		for (i = 0; i < ns; i++)
			for (size_t e = b->doc_start[in_s[i]];
			     e < b->doc_start[in_s[i] + 1]; e++)
				cnt[b->e[e].id] = 0;
		nb += share[ns / 2] <= 0.5;
	}
	rc = 0;
out:
	free(h);
	free(p);
	free(grp);
	free(cnt);
	free(minw);
	free(in_s);
	free(share);
	return rc;
}

/*
 * The site's own links as terms (docs/relate.md, "links"): the anchor
 * text of every link to a page is a field of that page (weight W_ANCHOR,
 * stemmed in the target's language), and the link graph gives each page
 * one pseudo-term per neighbour (weight W_LINK): a page linking to t and
 * t itself share t's term, two pages linking to one page share its term
 * (they are cited together), two pages linked from one page share that
 * page's. The pseudo-terms ("\x01" and the page index: no token holds a
 * control character) go through the same idf, the same 75 % cut (a page
 * every page links to counts for nothing) and the same LSA as words.
 * Only links inside the main content reach here (extract/).
 */
#define W_ANCHOR 1.0f	/* an anchor's words count as the text's */
#define W_LINK 8.0f	/* a neighbour's term: tf 8, 1 + ln 8 = 3.1 */

struct xent {
	uint32_t doc, id;
	float w;
};

struct xadd {
	struct vocab *voc;
	struct xent *v;
	size_t n, cap;
	uint32_t doc;
	float w;
	int failed;
};

static void xadd_term(const char *tok, size_t len, void *arg)
{
	struct xadd *x = arg;
	long id;

	if (x->failed)
		return;
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 4096;
		struct xent *v = realloc(x->v, cap * sizeof(*v));

		if (v == NULL) {
			x->failed = 1;
			return;
		}
		x->v = v;
		x->cap = cap;
	}
	if ((id = vocab_id(x->voc, tok, len)) < 0) {
		x->failed = 1;
		return;
	}
	x->v[x->n++] = (struct xent){ x->doc, (uint32_t)id, x->w };
}

static void xadd_node(struct xadd *x, uint32_t doc, uint32_t node)
{
	char s[16];
	int len = snprintf(s, sizeof(s), "\x01%u", (unsigned)node);

	x->doc = doc;
	x->w = W_LINK;
	xadd_term(s, (size_t)len, x);
}

static int xent_cmp(const void *a, const void *b)
{
	const struct xent *x = a, *y = b;

	if (x->doc != y->doc)
		return x->doc < y->doc ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int add_link_terms(struct builder *b, size_t n, double *len,
			  const struct lb_doc *const *docs,
			  const struct part *part, int nt)
{
	struct xadd x = { .voc = &b->voc };
	struct stemmers sm = { .n = 0 };
	unsigned char *linked = calloc(n + 1, 1);
	struct entry *ne = NULL;
	size_t i, k, at = 0, q;
	int t, rc = -1;

	if (linked == NULL)
		goto out;
	for (t = 0; t < nt; t++)
		for (i = 0; i < part[t].edges.n; i++) {
			const struct link_edge *e = &part[t].edges.v[i];
			const char *lang = docs[e->tgt]->language;
			struct tok_ctx tc = { .lang = lang, .stop = 1,
					      .fn = xadd_term, .arg = &x };

			tc.stem = stemmer_get(&sm, lang);
			x.doc = e->tgt;
			x.w = W_ANCHOR;
			tokenize(e->anchor, &tc);
			xadd_node(&x, e->src, e->tgt);
			xadd_node(&x, e->tgt, e->src);
			linked[e->src] = linked[e->tgt] = 1;
		}
	for (i = 0; i < n; i++)
		if (linked[i])
			xadd_node(&x, (uint32_t)i, (uint32_t)i);
	if (x.failed)
		goto out;
	if (x.n == 0) {
		rc = 0;
		goto out;
	}
	qsort(x.v, x.n, sizeof(*x.v), xent_cmp);
	for (i = 1, q = 0; i < x.n; i++)	/* one entry a (doc, term) */
		if (x.v[i].doc == x.v[q].doc && x.v[i].id == x.v[q].id)
			x.v[q].w += x.v[i].w;
		else
			x.v[++q] = x.v[i];
	x.n = q + 1;
	/* merge each doc's entries (sorted by id) with its new ones; an
	 * entry a template block took to zero (df already lowered) counts
	 * as absent */
	if ((ne = malloc((b->n + x.n + 1) * sizeof(*ne))) == NULL)
		goto out;
	for (i = 0, q = 0; i < n; i++) {
		size_t end = b->doc_start[i + 1];

		k = b->doc_start[i];
		b->doc_start[i] = at;
		while (k < end || (q < x.n && x.v[q].doc == i)) {
			int has_x = q < x.n && x.v[q].doc == i;

			if (k < end && (!has_x || b->e[k].id < x.v[q].id)) {
				ne[at++] = b->e[k++];
				continue;
			}
			ne[at] = (struct entry){ x.v[q].id, x.v[q].w };
			if (k < end && b->e[k].id == x.v[q].id) {
				if (b->e[k].w > 0)
					ne[at].w += b->e[k].w;
				else
					b->voc.df[x.v[q].id]++;
				k++;
			} else {
				b->voc.df[x.v[q].id]++;
			}
			len[i] += x.v[q].w;
			at++;
			q++;
		}
	}
	b->doc_start[n] = at;
	free(b->e);
	b->e = ne;
	b->n = at;
	b->cap = b->n + x.n + 1;
	ne = NULL;
	rc = 0;
out:
	stemmers_release(&sm);
	free(x.v);
	free(ne);
	free(linked);
	return rc;
}

int text_vectors(const struct lb_doc *const *docs, size_t n,
		 const struct lb_text_source *src, int plain, int nt,
		 struct csr *out, struct lb_error *err)
{
	struct builder b;
	double *len = NULL, *idf = NULL;
	unsigned char *keep = NULL;
	struct part *part = NULL;
	struct link_index *ix = NULL;
	size_t i, j, nnz = 0;
	int rc = -1, t;

	memset(&b, 0, sizeof(b));
	memset(out, 0, sizeof(*out));
	b.doc_start = malloc((n + 1) * sizeof(*b.doc_start));
	len = calloc(n ? n : 1, sizeof(*len));
	if (b.doc_start == NULL || len == NULL)
		goto nomem;

	/* pass 1: tokens of every doc, term ids, weighted counts, df; in
	 * contiguous ranges of docs on the threads, then merged in order */
	if (nt < 1)
		nt = 1;
	if ((size_t)nt > n / 64 + 1)
		nt = (int)(n / 64 + 1);	/* small sites: one thread */
	if (nt > 8)
		nt = 8;
	part = calloc((size_t)nt, sizeof(*part));
	if (part == NULL || (!plain && link_index_new(docs, n, &ix) < 0))
		goto nomem;
	for (t = 0; t < nt; t++) {
		part[t].docs = docs;
		part[t].src = src;
		part[t].i0 = n * (size_t)t / (size_t)nt;
		part[t].i1 = n * (size_t)(t + 1) / (size_t)nt;
		part[t].plain = plain;
		part[t].ix = ix;
		part[t].len = len;
	}
	for (t = 1; t < nt; t++)
		part[t].started = pthread_create(&part[t].tid, NULL,
						 tokenize_range, &part[t]) == 0;
	tokenize_range(&part[0]);
	for (t = 1; t < nt; t++) {
		if (part[t].started)
			pthread_join(part[t].tid, NULL);
		else
			tokenize_range(&part[t]);
	}
	for (t = 0; t < nt; t++)
		if (part[t].b.failed == 2) {
			/* the text source's */
			lb_error_set(err, part[t].err.code, "%s",
				     part[t].err.msg);
			goto fail;
		} else if (part[t].b.failed) {
			goto nomem;
		}
	if (nt == 1) {
		/* the part is the whole: take it as it is */
		free(b.doc_start);
		b = part[0].b;
		memset(&part[0].b, 0, sizeof(part[0].b));
	} else if (merge_parts(&b, part, nt) == -1) {
		goto nomem;
	}
	b.doc_start[n] = b.n;

	/* text repeated by a template: out, as if the pages had not it */
	if (!plain && remove_blocks(&b, n, len) == -1)
		goto nomem;

	/* the site's links: anchor text and link-graph terms */
	if (!plain && add_link_terms(&b, n, len, docs, part, nt) == -1)
		goto nomem;

	/* the vocabulary cap: the VOCAB_MAX terms of highest df (ties: first
	 * seen), so that memory stays bounded on huge sites */
	if (!plain && vocab_keep(&b.voc, n, &keep) == -1)
		goto nomem;

	/* pass 2: weights, drop, normalise; a term's idf factor once (the
	 * same expression, so the same bits, as in the loop) */
	if (!plain) {
		idf = malloc((b.voc.n + 1) * sizeof(*idf));
		if (idf == NULL)
			goto nomem;
		for (i = 0; i < b.voc.n; i++)
			idf[i] = 1 + log((1.0 + n) / (1.0 + b.voc.df[i]));
	}
	for (i = 0; i < n; i++) {
		double norm = 0;
		size_t k, w = b.doc_start[i];

		for (k = b.doc_start[i]; k < b.doc_start[i + 1]; k++) {
			double df = b.voc.df[b.e[k].id], tf = b.e[k].w, x;

			if (plain) {
				x = tf * log((double)n / df);
			} else {
				if (df < 2 || !keep[b.e[k].id] ||
				    df > SHARE_MAX * (double)n || !(tf > 0))
					continue;
				x = (1 + log(tf)) * idf[b.e[k].id];
			}
			if (x <= 0)
				continue;
			b.e[w].id = b.e[k].id;
			b.e[w].w = (float)x;
			norm += x * x;
			w++;
		}
		norm = norm > 0 ? 1 / sqrt(norm) : 0;
		for (k = b.doc_start[i]; k < w; k++)
			b.e[k].w = (float)(b.e[k].w * norm);
		len[i] = (double)(w - b.doc_start[i]);	/* now: kept */
		nnz += w - b.doc_start[i];
	}

	out->n_rows = n;
	out->n_cols = b.voc.n;
	out->ptr = malloc((n + 1) * sizeof(*out->ptr));
	out->col = malloc((nnz ? nnz : 1) * sizeof(*out->col));
	out->val = malloc((nnz ? nnz : 1) * sizeof(*out->val));
	if (out->ptr == NULL || out->col == NULL || out->val == NULL)
		goto nomem;
	for (i = 0, j = 0; i < n; i++) {
		size_t k, kept = (size_t)len[i];

		out->ptr[i] = j;
		for (k = 0; k < kept; k++, j++) {
			out->col[j] = b.e[b.doc_start[i] + k].id;
			out->val[j] = b.e[b.doc_start[i] + k].w;
		}
	}
	out->ptr[n] = j;
	rc = 0;
	goto out;
nomem:
	lb_error_set(err, LB_ENOMEM, "term vectors of %zu pages", n);
fail:
	csr_release(out);
out:
	if (part)
		for (t = 0; t < nt; t++) {
			vocab_release(&part[t].b.voc);
			link_edges_release(&part[t].edges);
			free(part[t].b.e);
			free(part[t].b.doc_start);
		}
	free(part);
	link_index_free(ix);
	vocab_release(&b.voc);
	free(b.e);
	free(b.doc_start);
	free(len);
	free(idf);
	free(keep);
	return rc;
}
