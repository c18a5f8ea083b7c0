/*
 * pack.c - runs of plain text folded into one character each before gumbo,
 * and put back into the tree after it.
 *
 * gumbo 0.10 makes one token of every character of text and hands each to
 * its tree builder (~490 instructions a byte; 60 % of a crawled page's
 * CPU). For the tree builder a run of text characters is a sequence of
 * identical steps, so a page whose runs are each replaced by one character
 * of the same class parses into the same tree, with the runs' text in
 * place of those characters; x_pack_unpack() then puts the text back. The
 * parse sees a tenth of the characters of an ordinary page.
 *
 * Design notes (why the tree is the same):
 *
 * - A run is a stretch of text in the tokenizer's data state made of
 *   characters every text state treats as "anything else": printable
 *   ASCII but < & - > " ' ! = ] ` (each starts or ends something in some
 *   state: tags, character references, comments, quoted values, CDATA),
 *   tab, line feed, form feed, space, and UTF-8 characters from U+00A0 up
 *   that gumbo takes as they are (no noncharacters, no BOM). No NUL, no CR
 *   (gumbo rewrites both). A run never starts right after '<' or '&': what
 *   follows those is read as a name.
 * - The tree builder treats white space and other characters differently
 *   before <body> (ignored, or inserted where they are) and in tables (all
 *   white space or not); after its first other character every mode puts
 *   the rest of a run's characters in one place, one after the other (in
 *   <body>: reconstruct the formatting elements once, insert; in a table:
 *   the pending characters, foster-parented together). So a run's leading
 *   white space is left as it is, and the rest (from its first other
 *   character on) becomes one private-use character of plane 15, U+F0000
 *   + the run's number: not white space, valid, never rewritten.
 * - The scanner follows the tokenizer: tags with their attributes (quoted
 *   values may hold '>'), comments (the ends "-->", "--!>", "<!-->",
 *   "<!--->"), doctypes and bogus comments to '>', character references
 *   to their last name character, and the raw text of script, style,
 *   textarea, title, xmp, iframe, noembed and noframes to the end tag that
 *   closes them; nothing inside those is packed. Where the scanner reads
 *   text and gumbo another text state (raw text, a script's escaped
 *   states, a comment, a quoted value), a run changes nothing there: it
 *   holds none of the characters those states act on, and its text comes
 *   back. What must never happen is a run where gumbo reads a tag's names
 *   and unquoted values: that is, the scanner skipping raw text that
 *   gumbo reads as markup.
 * - So where the tree builder would not switch the tokenizer to raw text
 *   for those elements, or would take white space and other text apart,
 *   packing stops for the rest of the page (the rest goes to gumbo as it
 *   is): foreign content (<svg>, <math>, CDATA: <style> or <title> there
 *   is markup), <select> (it ignores <style>, <title> and others),
 *   <template> (in a column group only white space is kept),
 *   <frameset> (likewise).
 * - A page that already holds a character of planes 13-16 (lead bytes F3,
 *   F4) is not packed: its characters would be taken for runs.
 * - Unpacking rewrites every text, comment and CDATA node and every
 *   attribute value (a comment or a value only holds a run if the scanner
 *   and gumbo disagreed about where markup ends; their text still comes
 *   back whole). Element names and positions into the packed page
 *   (original_tag) keep their bytes; offsets and line numbers differ, and
 *   extract/ reads none.
 *
 * Held by test_extract's test_pack_random (random tag soup of every case
 * above, the trees compared node by node with and without packing) and
 * test_pack_golden (every golden page).
 */
#define _GNU_SOURCE	/* memmem */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gumbo.h>

#include "extract_int.h"

#define PACK_BASE	0xF0000u	/* U+F0000: run 0 */
#define PACK_MAX	0xFFFEu		/* runs a page: plane 15 less U+FFFFE/F */
#define PACK_MIN	8		/* shorter runs are left as they are */

/* 1: an ASCII byte that may be in a run */
static const unsigned char plain_ascii[128] = {
	['\t'] = 1, ['\n'] = 1, ['\f'] = 1, [' '] = 1,
	['#'] = 1, ['$'] = 1, ['%'] = 1, ['('] = 1, [')'] = 1, ['*'] = 1,
	['+'] = 1, [','] = 1, ['.'] = 1, ['/'] = 1,
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
	['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1, [':'] = 1, [';'] = 1,
	['?'] = 1, ['@'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
	['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,
	['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
	['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
	['Y'] = 1, ['Z'] = 1, ['['] = 1, ['\\'] = 1, ['^'] = 1, ['_'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1,
	['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
	['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
	['y'] = 1, ['z'] = 1, ['{'] = 1, ['|'] = 1, ['}'] = 1, ['~'] = 1,
};

static int is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static int is_alpha(unsigned char c)
{
	return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static int is_alnum(unsigned char c)
{
	return is_alpha(c) || (c >= '0' && c <= '9');
}

/* Bytes of the run character at s[i] (0: not one). */
static size_t plain_len(const unsigned char *s, size_t n, size_t i)
{
	unsigned char c = s[i];
	uint32_t cp;
	size_t k, len;

	if (c < 0x80)
		return plain_ascii[c];
	if (c >= 0xC2 && c <= 0xDF)
		len = 2, cp = c & 0x1Fu;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3, cp = c & 0x0Fu;
	else if (c >= 0xF0 && c <= 0xF2)
		len = 4, cp = c & 0x07u;
	else
		return 0;
	if (i + len > n)
		return 0;
	for (k = 1; k < len; k++) {
		if ((s[i + k] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i + k] & 0x3Fu);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp < 0xA0 || (cp >= 0xD800 && cp <= 0xDFFF) ||
	    (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFEu) == 0xFFFEu ||
	    cp == 0xFEFF)
		return 0;
	return len;
}

/* Names whose start tag stops packing for the rest of the page. */
static const char *const stop_tags[] = {
	"svg", "math", "template", "frameset", "select", NULL,
};
/* Elements whose content the tokenizer reads as raw text. */
static const char *const raw_tags[] = {
	"script", "style", "textarea", "title", "xmp", "iframe", "noembed",
	"noframes", NULL,
};

static const char *name_in(const unsigned char *s, size_t len,
			   const char *const *list)
{
	for (; *list != NULL; list++)
		if (strlen(*list) == len &&
		    strncasecmp((const char *)s, *list, len) == 0)
			return *list;
	return NULL;
}

/* After the '>' of a bogus comment or doctype from s[i] on. */
static size_t to_gt(const unsigned char *s, size_t n, size_t i)
{
	const unsigned char *p = i < n ? memchr(s + i, '>', n - i) : NULL;

	return p ? (size_t)(p - s) + 1 : n;
}

/* After the comment whose "<!--" is at s[i]. */
static size_t comment_end(const unsigned char *s, size_t n, size_t i)
{
	size_t j = i + 2, k;
	const unsigned char *p;

	while (j + 1 < n &&
	       (p = memmem(s + j, n - j, "--", 2)) != NULL) {
		k = (size_t)(p - s);
		/* "<!-->" and "<!--->": the opener's dashes; "--!>" only
		 * after two dashes of the comment's own */
		if (k + 2 < n && s[k + 2] == '>')
			return k + 3;
		if (k >= i + 4 && k + 3 < n && s[k + 2] == '!' &&
		    s[k + 3] == '>')
			return k + 4;
		j = k + 1;
	}
	return n;
}

/* After the tag whose name starts at s[i] (its attributes read as the
 * tokenizer does); *nl = the name's length. */
static size_t tag_end(const unsigned char *s, size_t n, size_t i, size_t *nl)
{
	size_t name = i;
	const unsigned char *p;

	while (i < n && !is_ws(s[i]) && s[i] != '/' && s[i] != '>')
		i++;
	*nl = i - name;
	for (;;) {
		while (i < n && (is_ws(s[i]) || s[i] == '/'))
			i++;
		if (i >= n)
			return n;
		if (s[i] == '>')
			return i + 1;
		/* an attribute name; '=' may be its first character */
		i++;
		while (i < n && !is_ws(s[i]) && s[i] != '/' && s[i] != '>' &&
		       s[i] != '=')
			i++;
		while (i < n && is_ws(s[i]))
			i++;
		if (i >= n || s[i] != '=')
			continue;
		i++;
		while (i < n && is_ws(s[i]))
			i++;
		if (i >= n)
			return n;
		if (s[i] == '"' || s[i] == '\'') {
			p = i + 1 < n ? memchr(s + i + 1, s[i], n - i - 1) :
					NULL;
			if (p == NULL)
				return n;
			i = (size_t)(p - s) + 1;
		} else if (s[i] != '>') {
			while (i < n && !is_ws(s[i]) && s[i] != '>')
				i++;
		}
	}
}

/* Where "</name" followed by white space, '/' or '>' starts, or n. */
static size_t raw_end(const unsigned char *s, size_t n, size_t i,
		      const char *name)
{
	size_t nl = strlen(name);
	const unsigned char *p;

	while (i < n && (p = memchr(s + i, '<', n - i)) != NULL) {
		i = (size_t)(p - s);
		if (i + 2 + nl < n && s[i + 1] == '/' &&
		    strncasecmp((const char *)s + i + 2, name, nl) == 0 &&
		    (is_ws(s[i + 2 + nl]) || s[i + 2 + nl] == '/' ||
		     s[i + 2 + nl] == '>'))
			return i;
		i++;
	}
	return n;
}

/* After the markup at s[i] == '<'; *stop set where packing must stop. */
static size_t markup_end(const unsigned char *s, size_t n, size_t i,
			 int *stop)
{
	const char *raw;
	size_t nl, j, e;

	if (i + 1 >= n)
		return n;
	switch (s[i + 1]) {
	case '!':
		if (i + 3 < n && s[i + 2] == '-' && s[i + 3] == '-')
			return comment_end(s, n, i);
		if (i + 8 < n && memcmp(s + i + 2, "[CDATA[", 7) == 0) {
			*stop = 1;
			return i;
		}
		return to_gt(s, n, i + 2);
	case '?':
		return to_gt(s, n, i + 2);
	case '/':
		if (i + 2 >= n)
			return n;
		if (s[i + 2] == '>')
			return i + 3;
		if (!is_alpha(s[i + 2]))
			return to_gt(s, n, i + 2);
		return tag_end(s, n, i + 2, &nl);
	default:
		if (!is_alpha(s[i + 1]))
			return i + 1;	/* a '<' of the text */
		break;
	}
	j = tag_end(s, n, i + 1, &nl);
	if (name_in(s + i + 1, nl, stop_tags) != NULL) {
		*stop = 1;
		return i;
	}
	if ((raw = name_in(s + i + 1, nl, raw_tags)) == NULL)
		return j;
	e = raw_end(s, n, j, raw);
	if (e >= n)
		return n;
	return tag_end(s, n, e + 2, &nl);
}

static int add_run(struct x_pack *p, size_t a, size_t b)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		size_t *r = realloc(p->run, 2 * cap * sizeof(*r));

		if (r == NULL)
			return -1;
		p->run = r;
		p->cap = cap;
	}
	p->run[2 * p->n] = a;
	p->run[2 * p->n + 1] = b - a;
	p->n++;
	return 0;
}

static void put_mark(char *o, size_t k)
{
	uint32_t cp = PACK_BASE + (uint32_t)k;

	o[0] = (char)0xF3;
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
}

/* 1 if a numeric character reference of the page could name a character
 * of planes 12-16 (gumbo would write it where a mark could be). */
static int big_refs(const unsigned char *s, size_t n)
{
	const unsigned char *q;
	size_t i = 0;
	uint32_t v;

	while (i + 2 < n && (q = memmem(s + i, n - i, "&#", 2)) != NULL) {
		i = (size_t)(q - s) + 2;
		v = 0;
		if (i < n && (s[i] | 0x20) == 'x') {
			for (i++; i < n && v < 0xC0000u; i++) {
				unsigned char c = s[i] | 0x20;

				if (s[i] >= '0' && s[i] <= '9')
					v = v * 16 + (s[i] - '0');
				else if (c >= 'a' && c <= 'f')
					v = v * 16 + (c - 'a' + 10u);
				else
					break;
			}
		} else {
			for (; i < n && v < 0xC0000u && s[i] >= '0' &&
			     s[i] <= '9'; i++)
				v = v * 10 + (s[i] - '0');
		}
		if (v >= 0xC0000u)
			return 1;
	}
	return 0;
}

int x_pack_html(const char *html, size_t n, struct x_pack *p)
{
	const unsigned char *s = (const unsigned char *)html;
	size_t i = 0, a, f, len, k, w, from;
	int stop = 0;

	memset(p, 0, sizeof(*p));
	p->src = html;
	if (memchr(s, 0xF3, n) != NULL || memchr(s, 0xF4, n) != NULL ||
	    big_refs(s, n))
		return 0;
	while (i < n && !stop && p->n < PACK_MAX) {
		if (s[i] == '<') {
			i = markup_end(s, n, i, &stop);
			continue;
		}
		if (s[i] == '&') {
			for (i++; i < n && (is_alnum(s[i]) || s[i] == '#' ||
					    s[i] == ';'); i++)
				;
			continue;
		}
		a = i;
		while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' ||
				 s[i] == '\f'))
			i++;
		f = i;	/* the first character not white space, if any */
		for (;;) {
			while (i < n && s[i] < 0x80 && plain_ascii[s[i]])
				i++;
			if (i >= n || s[i] < 0x80 ||
			    (len = plain_len(s, n, i)) == 0)
				break;
			i += len;
		}
		if (f == i)
			f = (size_t)-1;	/* white space only */
		if (i == a) {
			i++;	/* a byte no run holds */
			continue;
		}
		if (f != (size_t)-1 && i - f >= PACK_MIN &&
		    add_run(p, f, i) < 0)
			goto oom;
	}
	if (p->n == 0)
		return 0;
	/* the packed page: 4 bytes a run instead of its text */
	if ((p->html = malloc(n + 1)) == NULL)
		goto oom;
	for (k = 0, w = 0, from = 0; k < p->n; k++) {
		memcpy(p->html + w, html + from, p->run[2 * k] - from);
		w += p->run[2 * k] - from;
		put_mark(p->html + w, k);
		w += 4;
		from = p->run[2 * k] + p->run[2 * k + 1];
	}
	memcpy(p->html + w, html + from, n - from);
	w += n - from;
	p->html[w] = '\0';
	p->len = w;
	return 0;
oom:
	x_pack_release(p);
	return -1;
}

/* The run of the mark at t (4 bytes), or -1. */
static long mark_run(const struct x_pack *p, const unsigned char *t)
{
	uint32_t cp;

	if ((t[1] & 0xC0) != 0x80 || (t[2] & 0xC0) != 0x80 ||
	    (t[3] & 0xC0) != 0x80)
		return -1;
	/* lead byte F3: planes 12-15 */
	cp = 0xC0000u | (uint32_t)(t[1] & 0x3F) << 12 |
	     (uint32_t)(t[2] & 0x3F) << 6 | (t[3] & 0x3Fu);
	if (cp < PACK_BASE || cp - PACK_BASE >= p->n)
		return -1;
	return (long)(cp - PACK_BASE);
}

/* *text with its marks replaced by their runs; 0, or -1 out of memory. */
static int unpack_text(const struct x_pack *p, const GumboOptions *o,
		       const char **text)
{
	const unsigned char *t = (const unsigned char *)*text, *m;
	size_t len = 0, tl;
	long k;
	char *out, *w;

	if (t == NULL || (m = (const unsigned char *)strchr(*text, 0xF3)) == NULL)
		return 0;
	tl = strlen(*text);
	for (m = t; *m != '\0'; m++) {
		if (*m == 0xF3 && (size_t)(m - t) + 4 <= tl &&
		    (k = mark_run(p, m)) >= 0) {
			len += p->run[2 * k + 1];
			m += 3;
		} else {
			len++;
		}
	}
	if ((out = o->allocator(o->userdata, len + 1)) == NULL)
		return -1;
	for (m = t, w = out; *m != '\0'; m++) {
		if (*m == 0xF3 && (size_t)(m - t) + 4 <= tl &&
		    (k = mark_run(p, m)) >= 0) {
			memcpy(w, p->src + p->run[2 * k], p->run[2 * k + 1]);
			w += p->run[2 * k + 1];
			m += 3;
		} else {
			*w++ = (char)*m;
		}
	}
	*w = '\0';
	o->deallocator(o->userdata, (void *)*text);
	*text = out;
	return 0;
}

int x_pack_unpack(const struct x_pack *p, const GumboOptions *o,
		  GumboNode *root)
{
	struct frame { GumboNode *n; unsigned i; } *st = NULL, *g;
	size_t depth = 0, cap = 0, k;
	const GumboVector *ch;
	GumboNode *n;
	int rc = -1;

	if (p->n == 0 || root == NULL)
		return 0;
	n = root;
	for (;;) {
		/* the node itself */
		ch = NULL;
		switch (n->type) {
		case GUMBO_NODE_DOCUMENT:
			ch = &n->v.document.children;
			break;
		case GUMBO_NODE_ELEMENT:
		case GUMBO_NODE_TEMPLATE:
			for (k = 0; k < n->v.element.attributes.length; k++) {
				GumboAttribute *a =
					n->v.element.attributes.data[k];

				if (unpack_text(p, o, &a->value) < 0)
					goto out;
			}
			ch = &n->v.element.children;
			break;
		default:	/* text, white space, comment, CDATA */
			if (unpack_text(p, o, &n->v.text.text) < 0)
				goto out;
			break;
		}
		if (ch != NULL && ch->length > 0) {
			if (depth == cap) {
				cap = cap ? 2 * cap : 64;
				if ((g = realloc(st, cap * sizeof(*st))) == NULL)
					goto out;
				st = g;
			}
			st[depth].n = n;
			st[depth++].i = 0;
			n = ch->data[0];
			continue;
		}
		/* the next sibling of the nearest ancestor that has one */
		for (;;) {
			if (depth == 0) {
				rc = 0;
				goto out;
			}
			g = &st[depth - 1];
			ch = g->n->type == GUMBO_NODE_DOCUMENT ?
				     &g->n->v.document.children :
				     &g->n->v.element.children;
			if (++g->i < ch->length) {
				n = ch->data[g->i];
				break;
			}
			depth--;
		}
	}
out:
	free(st);
	return rc;
}

void x_pack_release(struct x_pack *p)
{
	free(p->html);
	free(p->run);
	memset(p, 0, sizeof(*p));
}
