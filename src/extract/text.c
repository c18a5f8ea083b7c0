/*
 * text.c - the text writer of extract/: valid UTF-8 out whatever comes in,
 * white space normalised (runs become one space, or one line break at a
 * block boundary), a cap on the length; plus character references, word
 * counts. See extract_int.h.
 */
#define _GNU_SOURCE	/* memmem, memrchr */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "linkbot/utf8.h"
#include "extract_int.h"

unsigned x_utf8_next(const unsigned char *s, size_t n, size_t *len)
{
	unsigned c = s[0], cp, min;
	size_t need, i;

	*len = 1;
	if (c < 0x80)
		return c;
	if (c >= 0xC2 && c <= 0xDF) {
		need = 1; cp = c & 0x1F; min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		need = 2; cp = c & 0x0F; min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		need = 3; cp = c & 0x07; min = 0x10000;
	} else {
		return 0xFFFD;
	}
	if (n < need + 1)
		return 0xFFFD;
	for (i = 1; i <= need; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0xFFFD;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0xFFFD;
	*len = need + 1;
	return cp;
}

int x_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, l;

	while (i < n) {
		uint64_t w;

		/* eight ASCII bytes at a time */
		if (n - i >= 8) {
			memcpy(&w, p + i, 8);
			if ((w & 0x8080808080808080ull) == 0) {
				i += 8;
				continue;
			}
		}
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if (x_utf8_next(p + i, n - i, &l) == 0xFFFD && l == 1)
			return 0;
		i += l;
	}
	return 1;
}


/* 1: white space (or a control); 2: dropped (zero width, soft hyphen). */
static int cp_class(unsigned cp)
{
	if (cp <= 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F))
		return 1;
	if (cp < 0xA0)
		return 0;
	switch (cp) {
	case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F:
	case 0x205F: case 0x3000:
		return 1;
	case 0xAD: case 0x200B: case 0x2060: case 0xFEFF:
		return 2;
	}
	if (cp >= 0x2000 && cp <= 0x200A)
		return 1;
	/* bidi controls: a title with U+202E reads backwards in the
	 * client's page and in a terminal (Trojan Source); dropped */
	if (cp == 0x061C || cp == 0x200E || cp == 0x200F ||
	    (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069))
		return 2;
	return 0;
}

void x_text_init(struct x_text *t, size_t cap, int oneline)
{
	lb_buf_init(&t->b, cap + 8);
	t->cap = cap;
	t->oneline = oneline;
	t->lines = 0;
	t->pending = 0;
	t->full = 0;
	t->oom = 0;
	t->links = NULL;
	t->base = NULL;
}

void x_text_release(struct x_text *t)
{
	lb_buf_release(&t->b);
}

static void put(struct x_text *t, const char *s, size_t n)
{
	if (t->full)
		return;
	if (t->b.len + n > t->cap) {
		t->full = 1;
		return;
	}
	if (t->b.len + n < t->b.alloc) {	/* lb_buf_add() without growth */
		memcpy(t->b.data + t->b.len, s, n);
		t->b.len += n;
		t->b.data[t->b.len] = '\0';
		return;
	}
	if (lb_buf_add(&t->b, s, n, NULL) < 0) {
		t->oom = 1;
		t->full = 1;
	}
}

void x_text_add(struct x_text *t, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, l, run;
	unsigned cp;
	char u[4];
	int cls;

	while (i < n && !t->full) {
		/* Copy runs of plain printable ASCII at once. */
		run = i;
		while (run < n && p[run] > 0x20 && p[run] < 0x7F)
			run++;
		if (run > i) {
			if (t->pending && t->b.len > 0)
				put(t, t->pending == 2 && !t->oneline ? "\n" : " ",
				    1);
			t->pending = 0;
			/* ... and the words after it that one space each
			 * separates, which is what that space's pending
			 * would put, as long as they all fit (past the cap,
			 * a word at a time as below: put() stops at the
			 * first that does not) */
			while (run + 1 < n && p[run] == ' ' &&
			       p[run + 1] > 0x20 && p[run + 1] < 0x7F) {
				size_t e = run + 1;

				while (e < n && p[e] > 0x20 && p[e] < 0x7F)
					e++;
				if (t->b.len + (e - i) > t->cap)
					break;
				run = e;
			}
			put(t, s + i, run - i);
			i = run;
			continue;
		}
		cp = x_utf8_next(p + i, n - i, &l);
		i += l;
		cls = cp_class(cp);
		if (cp == '\n' && t->lines) {
			t->pending = 2;
			continue;
		}
		if (cls == 1) {
			if (t->pending == 0)
				t->pending = 1;
			continue;
		}
		if (cls == 2)
			continue;
		if (t->pending && t->b.len > 0)
			put(t, t->pending == 2 && !t->oneline ? "\n" : " ", 1);
		t->pending = 0;
		put(t, u, lb_utf8_put(u, cp));
	}
}

void x_text_break(struct x_text *t)
{
	t->pending = 2;
}

char *x_text_take(struct x_text *t)
{
	char *s;

	if (t->oom || t->b.len == 0) {
		lb_buf_release(&t->b);
		t->pending = t->full = 0;
		return NULL;
	}
	s = lb_buf_take(&t->b);
	t->pending = t->full = 0;
	return s;
}

char *x_clean(const char *s, size_t n, size_t cap, int *oom)
{
	struct x_text t;
	char *r;

	x_text_init(&t, cap, 1);
	x_text_add(&t, s, n);
	if (t.oom)
		*oom = 1;
	if (t.full && t.b.len > 0) {
		/* Cut at the last space rather than inside a word. */
		char *sp = memrchr(t.b.data, ' ', t.b.len);

		if (sp != NULL && (size_t)(sp - t.b.data) > t.b.len / 2)
			t.b.len = (size_t)(sp - t.b.data);
		t.b.data[t.b.len] = '\0';
	}
	r = x_text_take(&t);
	return r;
}

/* Named references that pages put in JSON-LD and meta values; numeric
 * references cover the rest. */
static const struct { const char *name; unsigned cp; } entities[] = {
	{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'},
	{"apos", '\''}, {"nbsp", 0xA0}, {"hellip", 0x2026},
	{"mdash", 0x2014}, {"ndash", 0x2013}, {"lsquo", 0x2018},
	{"rsquo", 0x2019}, {"sbquo", 0x201A}, {"ldquo", 0x201C},
	{"rdquo", 0x201D}, {"bdquo", 0x201E}, {"laquo", 0xAB},
	{"raquo", 0xBB}, {"lsaquo", 0x2039}, {"rsaquo", 0x203A},
	{"copy", 0xA9}, {"reg", 0xAE}, {"trade", 0x2122},
	{"middot", 0xB7}, {"bull", 0x2022}, {"deg", 0xB0},
	{"euro", 0x20AC}, {"pound", 0xA3}, {"yen", 0xA5}, {"cent", 0xA2},
	{"sect", 0xA7}, {"para", 0xB6}, {"times", 0xD7}, {"divide", 0xF7},
	{"shy", 0xAD}, {"iexcl", 0xA1}, {"iquest", 0xBF},
	{"agrave", 0xE0}, {"aacute", 0xE1}, {"acirc", 0xE2},
	{"atilde", 0xE3}, {"auml", 0xE4}, {"aring", 0xE5}, {"aelig", 0xE6},
	{"ccedil", 0xE7}, {"egrave", 0xE8}, {"eacute", 0xE9},
	{"ecirc", 0xEA}, {"euml", 0xEB}, {"igrave", 0xEC}, {"iacute", 0xED},
	{"icirc", 0xEE}, {"iuml", 0xEF}, {"ntilde", 0xF1}, {"ograve", 0xF2},
	{"oacute", 0xF3}, {"ocirc", 0xF4}, {"otilde", 0xF5}, {"ouml", 0xF6},
	{"oslash", 0xF8}, {"ugrave", 0xF9}, {"uacute", 0xFA},
	{"ucirc", 0xFB}, {"uuml", 0xFC}, {"yacute", 0xFD}, {"szlig", 0xDF},
	{"Agrave", 0xC0}, {"Aacute", 0xC1}, {"Acirc", 0xC2},
	{"Auml", 0xC4}, {"Aring", 0xC5}, {"Ccedil", 0xC7},
	{"Egrave", 0xC8}, {"Eacute", 0xC9}, {"Ecirc", 0xCA},
	{"Iacute", 0xCD}, {"Ntilde", 0xD1}, {"Oacute", 0xD3},
	{"Ouml", 0xD6}, {"Oslash", 0xD8}, {"Uacute", 0xDA}, {"Uuml", 0xDC},
	{"thinsp", 0x2009}, {"ensp", 0x2002}, {"emsp", 0x2003},
	{"zwj", 0x200D}, {"zwnj", 0x200C}, {"prime", 0x2032},
	{"larr", 0x2190}, {"rarr", 0x2192}, {"frac12", 0xBD},
};

/* Decodes the reference at s[0] == '&'; returns its length or 0. */
static size_t entity(const char *s, size_t n, unsigned *cp)
{
	size_t i, k;
	unsigned long v = 0;

	if (n >= 3 && s[1] == '#') {
		int hex = (s[2] == 'x' || s[2] == 'X');

		i = hex ? 3 : 2;
		k = i;
		while (i < n && i < k + 8) {
			char c = s[i];
			int d = (c >= '0' && c <= '9') ? c - '0' :
				(hex && c >= 'a' && c <= 'f') ? c - 'a' + 10 :
				(hex && c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
			if (d < 0)
				break;
			v = v * (hex ? 16 : 10) + (unsigned)d;
			i++;
		}
		if (i == k)
			return 0;
		if (i < n && s[i] == ';')
			i++;
		if (v == 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
			v = 0xFFFD;
		*cp = (unsigned)v;
		return i;
	}
	for (i = 1; i < n && i < 10 &&
	     ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
	      (s[i] >= '0' && s[i] <= '9')); i++)
		;
	if (i == 1)
		return 0;
	for (k = 0; k < sizeof(entities) / sizeof(entities[0]); k++) {
		if (strlen(entities[k].name) == i - 1 &&
		    memcmp(entities[k].name, s + 1, i - 1) == 0) {
			*cp = entities[k].cp;
			return (i < n && s[i] == ';') ? i + 1 : i;
		}
	}
	return 0;
}

static int tag_start(const char *s, size_t n)
{
	return n >= 2 && s[0] == '<' &&
	       ((s[1] >= 'a' && s[1] <= 'z') || (s[1] >= 'A' && s[1] <= 'Z') ||
		s[1] == '/' || s[1] == '!');
}

/* Is the tag at s ("<p ...", "</div", "<br/") one that breaks a line? */
static int block_tag(const char *s, size_t n)
{
	static const char *const blocks[] = {
		"p", "br", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4",
		"h5", "h6", "tr", "table", "blockquote", "section", "article",
		"pre", "hr", "dd", "dt", "dl", "figure", "figcaption", NULL,
	};
	size_t i = 1, k, len;

	if (i < n && s[i] == '/')
		i++;
	for (k = i; k < n && ((s[k] >= 'a' && s[k] <= 'z') ||
			      (s[k] >= 'A' && s[k] <= 'Z') ||
			      (s[k] >= '0' && s[k] <= '9')); k++)
		;
	len = k - i;
	for (k = 0; blocks[k] != NULL; k++)
		if (strlen(blocks[k]) == len &&
		    strncasecmp(s + i, blocks[k], len) == 0)
			return 1;
	return 0;
}

char *x_html_unescape(const char *s, size_t n)
{
	char *o = malloc(n + 1), *w = o;
	size_t i = 0, l;
	unsigned cp;

	if (o == NULL)
		return NULL;
	while (i < n) {
		if (s[i] == '&' && (l = entity(s + i, n - i, &cp)) > 0) {
			/* A reference is never shorter than its UTF-8. */
			w += lb_utf8_put(w, cp);
			i += l;
		} else if (tag_start(s + i, n - i)) {
			const char *e = memchr(s + i, '>', n - i);

			if (e == NULL) {
				*w++ = s[i++];
				continue;
			}
			/* A tag goes; a block tag leaves a line feed. */
			if (block_tag(s + i, (size_t)(e - (s + i))))
				*w++ = '\n';
			i = (size_t)(e - s) + 1;
		} else {
			*w++ = s[i++];
		}
	}
	*w = '\0';
	return o;
}

static int is_cjk(unsigned cp)
{
	return (cp >= 0x3040 && cp <= 0x30FF) ||	/* kana */
	       (cp >= 0x3400 && cp <= 0x4DBF) ||
	       (cp >= 0x4E00 && cp <= 0x9FFF) ||
	       (cp >= 0xF900 && cp <= 0xFAFF) ||
	       (cp >= 0x20000 && cp <= 0x2FFFF);
}

static int is_wordchar(unsigned cp)
{
	if (cp < 0x80)
		return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') ||
		       (cp >= 'A' && cp <= 'Z');
	return cp >= 0xC0 && cp != 0xD7 && cp != 0xF7 && cp != 0xFFFD &&
	       !(cp >= 0x2000 && cp <= 0x2BFF) && !(cp >= 0x3000 && cp <= 0x303F);
}

/* x_word_count()'s classes of a byte: 1 an ASCII word character, 2 one
 * that neither starts nor ends a word (' - _), 0 an ASCII separator, 3 a
 * byte of UTF-8 (decoded), 4 the end */
#define WK_ASCII(c) ((c) >= 0x80 ? 3 : (c) == 0 ? 4 :			\
		     ((c) >= '0' && (c) <= '9') || ((c) >= 'a' && (c) <= 'z') || \
		     ((c) >= 'A' && (c) <= 'Z') ? 1 :				\
		     (c) == '\'' || (c) == '-' || (c) == '_' ? 2 : 0)
#define WK4(c) WK_ASCII(c), WK_ASCII(c + 1), WK_ASCII(c + 2), WK_ASCII(c + 3)
#define WK16(c) WK4(c), WK4(c + 4), WK4(c + 8), WK4(c + 12)
#define WK64(c) WK16(c), WK16(c + 16), WK16(c + 32), WK16(c + 48)
static const unsigned char word_kind[256] = {
	WK64(0), WK64(64), WK64(128), WK64(192)
};

/*
 * Words: the ASCII bytes go by the table, a run at a time (outside a word
 * only a word character starts one; inside one only a separator ends it),
 * the rest decoded.
 */
size_t x_word_count(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, l, words = 0;
	int inword = 0, k;
	unsigned cp;

	for (;;) {
		if (inword)
			while ((k = word_kind[p[i]]) == 1 || k == 2)
				i++;
		else
			while ((k = word_kind[p[i]]) == 0 || k == 2)
				i++;
		if (k == 4)
			break;
		if (k == 1) {		/* outside a word */
			words++;
			inword = 1;
			i++;
			continue;
		}
		if (k == 0) {		/* inside one */
			inword = 0;
			i++;
			continue;
		}
		cp = x_utf8_next(p + i, n - i, &l);
		i += l;
		if (is_cjk(cp)) {
			words++;
			inword = 0;
		} else if (is_wordchar(cp) || cp == '\'' || cp == 0x2019 ||
			   cp == '-' || cp == '_') {
			if (!inword && is_wordchar(cp))
				words++, inword = 1;
		} else {
			inword = 0;
		}
	}
	return words;
}
