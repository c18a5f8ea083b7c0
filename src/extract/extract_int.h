/*
 * extract_int.h - the pieces of stage 2 (extract/) shared by its files;
 * nothing outside src/extract/ includes this.
 *
 *   charset.c  bytes in any declared charset -> valid UTF-8 (iconv)
 *   text.c     the text writer: UTF-8 repair, white space, caps
 *   url.c      RFC 3986 reference resolution, canonical parts
 *   date.c     published dates -> ISO 8601
 *   jsonld.c   schema.org JSON-LD blocks (cJSON) -> candidates
 *   pack.c     text runs folded before gumbo, put back after
 *   html.c     the gumbo walks: metadata, first <h1>, microdata, body text
 *   extract.c  extract_html(): the candidates, by source, into the doc
 *
 * Every value found is offered as a candidate for one field from one
 * source (enum lb_source); a slot keeps the first valid value offered.
 * extract.c then takes, per field, the slot of the highest source.
 */
#ifndef LINKBOT_EXTRACT_INT_H
#define LINKBOT_EXTRACT_INT_H

#include <stddef.h>

#include "linkbot/buf.h"
#include "linkbot/doc.h"
#include "linkbot/error.h"

/* Caps: what one page can make us hold or do. */
#define X_MAX_HTML	(4u << 20)	/* bytes of HTML parsed; the rest is cut */
#define X_MAX_TEXT	(256u << 10)	/* bytes of text kept */
#define X_MAX_FIELD	2048u		/* bytes of a one-line field */
#define X_MAX_URL	2048u		/* bytes of a URL */
#define X_MAX_JSONLD	(1u << 20)	/* bytes of one JSON-LD block */
#define X_MAX_JSONLD_ALL (4u << 20)	/* bytes of all JSON-LD blocks */
#define X_MAX_JSONLD_BLOCKS 32		/* JSON-LD blocks read per page */
#define X_MAX_JSONLD_DEPTH 32		/* nesting of one JSON-LD block */
#define X_MAX_JSONLD_NODES 512		/* objects looked at per page */
#define X_MAX_DEPTH	512		/* element nesting kept by the parser */
#define X_MAX_ATTRS	128		/* attributes kept per tag */
#define X_MAX_FORMATTING 16		/* formatting elements open at once */
#define X_MAX_RECON	100000u		/* their estimated reconstructions */
#define X_WPM		230		/* reading speed for read_time */

#define X_NSRC (LB_SRC_BODY + 1)

/* Candidates found so far, per field and source. */
struct x_ctx {
	char *str[LB_F_author][X_NSRC];	/* single-valued fields */
	struct lb_strlist list[2][X_NSRC];	/* author, category */
	char *text[X_NSRC];
	struct lb_doclinks links;	/* in the body text (LB_SRC_BODY) */
	const char *base;	/* for relative URLs: <base href> or page URL */
	char *base_own;
	int noindex;
	char *unavailable_after;	/* robots meta, first one for us */
	struct lb_error *err;	/* the first error (only out of memory) */
	int failed;
};

/* Offers a value (n bytes, or strlen if n == (size_t)-1); the slot keeps
 * the first valid one. Cleans white space, validates per field (URLs are
 * resolved against ctx->base, dates normalised, languages normalised).
 * Returns 1 if taken, 0 if not, -1 on out of memory. */
int x_offer(struct x_ctx *x, enum lb_doc_field f, enum lb_source src,
	    const char *s, size_t n);
/* Offers one element of a list field (author, category). */
int x_offer_item(struct x_ctx *x, enum lb_doc_field f, enum lb_source src,
		 const char *s, size_t n);
/* Takes ownership of text (or frees it) for the text slot of src. */
void x_offer_text(struct x_ctx *x, enum lb_source src, char *text);
int x_has(const struct x_ctx *x, enum lb_doc_field f, enum lb_source src);
/* Records out of memory; returns -1. */
int x_oom(struct x_ctx *x);
/* Frees every candidate still held (extract_html() at its end). */
void x_ctx_release(struct x_ctx *x);

/* text.c: a capped writer of normalised text. */
struct x_text {
	struct lb_buf b;
	size_t cap;
	int oneline;	/* line breaks become spaces */
	int lines;	/* a line feed in the input is a line break */
	int pending;	/* 0, 1 = space, 2 = line break */
	int full;	/* cap reached: the rest is dropped */
	int oom;
	/* html.c: where the <a href> met on the way go, or NULL */
	struct lb_doclinks *links;
	const char *base;	/* what their hrefs are relative to */
};
void x_text_init(struct x_text *t, size_t cap, int oneline);
void x_text_release(struct x_text *t);
/* Appends UTF-8 text: invalid bytes become U+FFFD, controls and Unicode
 * spaces become one space, zero-width characters go. */
void x_text_add(struct x_text *t, const char *s, size_t n);
/* A block boundary: the next text starts on a new line. */
void x_text_break(struct x_text *t);
/* The text (NULL if empty or out of memory); t is reset. */
char *x_text_take(struct x_text *t);
/* One-line clean copy of s, NULL if empty (or out of memory: *oom = 1). */
char *x_clean(const char *s, size_t n, size_t cap, int *oom);
/* Decodes HTML character references and drops tags in s (JSON-LD values
 * often carry both); returns a new string or NULL on out of memory. */
char *x_html_unescape(const char *s, size_t n);
/* Words in UTF-8 text (CJK ideographs and kana count one each). */
size_t x_word_count(const char *s);
int x_utf8_valid(const char *s, size_t n);
/* Decodes one code point at s (n > 0 bytes left); *len gets its length;
 * invalid input gives 0xFFFD and *len = 1. */
unsigned x_utf8_next(const unsigned char *s, size_t n, size_t *len);

/* charset.c */
/*
 * Converts html to UTF-8. charset: the HTTP header's value or label (may
 * be NULL). Order: BOM, charset argument, <meta charset> or http-equiv in
 * the first bytes, valid UTF-8, else windows-1252. *out is either html
 * itself (valid UTF-8 already, *own = 0) or a new buffer (*own = 1).
 * used gets the charset's name. -1 only on out of memory.
 */
int x_to_utf8(const char *html, size_t len, const char *charset,
	      const char **out, size_t *outlen, int *own, char used[48]);
/* Normalised charset label for iconv ("UTF-8", "WINDOWS-1252", ...), NULL
 * if unusable. buf holds at least 40 bytes. */
const char *x_charset_label(const char *label, size_t n, char *buf);

/* url.c */
/* Resolves ref against base (absolute http(s)); returns a new absolute
 * http(s) URL without fragment, or NULL (not http(s), invalid, too long,
 * out of memory: *oom = 1). */
char *x_url_resolve(const char *base, const char *ref, size_t n, int *oom);
/* The path ("/" if none) and the query (NULL if none) of an absolute URL. */
char *x_url_path(const char *url, int *oom);
char *x_url_query(const char *url, int *oom);

/* date.c: normalises a date to ISO 8601; NULL if not understood. */
char *x_date_iso(const char *s, size_t n, int *oom);
/* lang: "en_us" -> "en-US"; NULL if not a language tag. */
char *x_lang_norm(const char *s, size_t n, int *oom);

/* jsonld.c: reads one <script type="application/ld+json"> block. */
struct x_jsonld;
struct x_jsonld *x_jsonld_new(void);
/* Parses and keeps a block; malformed or oversized blocks are skipped. */
void x_jsonld_add(struct x_jsonld *j, const char *s, size_t n);
/* Offers the candidates of every kept block to x (source LB_SRC_JSONLD);
 * page: the canonical or page URL (nodes about other pages rank last). */
int x_jsonld_offer(struct x_jsonld *j, struct x_ctx *x, const char *page);
void x_jsonld_free(struct x_jsonld *j);

/* limit.c: drops tags beyond X_MAX_DEPTH and attributes beyond
 * X_MAX_ATTRS; *out is NULL if nothing was dropped, else a new buffer.
 * -1 on out of memory. */
int x_limit_html(const char *s, size_t n, char **out, size_t *outlen);

/* pack.c: runs of plain text folded into one character each before gumbo
 * (one token instead of one a character), put back into its tree after
 * (design notes there). */
struct GumboInternalNode;
struct GumboInternalOptions;
struct x_pack {
	char *html;	/* the packed page (NUL-terminated); NULL: not packed */
	size_t len;	/* its bytes */
	const char *src; /* the page: the runs' text */
	size_t *run;	/* run k: offset run[2k] in src, length run[2k+1] */
	size_t n, cap;	/* runs */
};
int x_pack_html(const char *html, size_t n, struct x_pack *p);
int x_pack_unpack(const struct x_pack *p,
		  const struct GumboInternalOptions *o,
		  struct GumboInternalNode *root);
void x_pack_release(struct x_pack *p);

/* html.c: parses utf8 with gumbo and offers every candidate it finds. */
int x_html_scan(const char *utf8, size_t len, const char *page_url,
		struct x_ctx *x);

#endif
