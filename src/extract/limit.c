/*
 * limit.c - keeps gumbo linear: a pre-pass over the tags of a page.
 *
 * gumbo 0.10 spends time in proportion to the depth of the tree for every
 * start tag (its scope checks walk the stack of open elements) and in
 * proportion to the number of attributes for every attribute (duplicate
 * check). So 80,000 nested <div>s take 23 s and one tag with 50,000
 * attributes takes 4 s. Browsers cap the depth (Chromium at 512); we do
 * the same before parsing: start tags beyond X_MAX_DEPTH open elements
 * are dropped (with as many end tags after them), and attributes beyond
 * X_MAX_ATTRS in one tag are dropped. Their text stays.
 *
 * The depth is estimated by a tag scanner that knows comments, raw text
 * (script, style, textarea, title, ...), quoted attribute values, and
 * foreign content (svg, math, where "/>" closes). Void elements and those
 * whose end tag is optional or that never nest (p, li, td, a, ...) are
 * not counted, so the estimate stays at or below the real depth of
 * ordinary pages, which never come near the cap. Real pages pass through
 * untouched and uncopied; the cost is one linear scan.
 *
 * Formatting elements (b, i, font, a, ...) left open are a second trap:
 * each time the element holding them is closed (every <p> closes the
 * previous paragraph), gumbo reconstructs all of them for the next text
 * (HTML's "reconstruct the active formatting elements"; the Noah's Ark
 * clause only bounds identical ones). 500 distinct open <b>s before
 * 20,000 paragraphs make 10 million elements: 3.7 GB, then a crash. So
 * at most X_MAX_FORMATTING of them are open at a time (later start tags
 * are dropped with as many end tags), and the reconstruction they may
 * cost is estimated (open formatting elements at each other tag): past
 * X_MAX_RECON the open ones are closed (end tags inserted) before each
 * tag, which empties gumbo's list. Text is never dropped.
 */
#define _GNU_SOURCE	/* memmem */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "extract_int.h"

struct lim {
	const char *s;
	size_t n;
	char *out;	/* NULL until something is dropped */
	size_t len;	/* bytes in out */
	size_t cap;	/* bytes allocated for out */
	size_t copied;	/* s[0..copied) is accounted for */
	int oom;
};

/* Room for len + more bytes and the final copy of the rest. */
static int reserve(struct lim *l, size_t more)
{
	size_t need = l->len + more + (l->n - l->copied) + 1, cap;
	char *p;

	if (need <= l->cap)
		return 0;
	cap = l->cap ? l->cap : l->n + 1 + 4096;
	while (cap < need)
		cap *= 2;
	if ((p = realloc(l->out, cap)) == NULL) {
		l->oom = 1;
		return -1;
	}
	l->out = p;
	l->cap = cap;
	return 0;
}

/* Drops s[a..b); calls come in increasing order of a. */
static void drop(struct lim *l, size_t a, size_t b)
{
	if (a < l->copied || b <= a)
		return;
	if (reserve(l, 0) < 0)
		return;
	memcpy(l->out + l->len, l->s + l->copied, a - l->copied);
	l->len += a - l->copied;
	l->copied = b;
}

/* Inserts t[0..tn) before s[a]; a >= every earlier call's position. */
static void insert(struct lim *l, size_t a, const char *t, size_t tn)
{
	if (a < l->copied || reserve(l, tn) < 0)
		return;
	memcpy(l->out + l->len, l->s + l->copied, a - l->copied);
	l->len += a - l->copied;
	l->copied = a;
	memcpy(l->out + l->len, t, tn);
	l->len += tn;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static int is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The lists below are in lower case: an entry whose first letter differs
 * is passed over without its strlen() (every tag of a page meets these
 * lists: ~1.6 M strlen() a 2,000 pages before) */
static int name_is(const char *name, size_t n, const char *const *list)
{
	char c;

	if (n == 0)
		return 0;
	c = (char)(name[0] >= 'A' && name[0] <= 'Z' ? name[0] - 'A' + 'a' :
		   name[0]);
	for (; *list != NULL; list++)
		if ((*list)[0] == c && strlen(*list) == n &&
		    strncasecmp(name, *list, n) == 0)
			return 1;
	return 0;
}

/* Not counted: void, optional end tag, or never nested in practice. */
static const char *const uncounted[] = {
	"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
	"meta", "param", "source", "track", "wbr", "keygen", "basefont",
	"bgsound", "frame", "image", "p", "li", "dt", "dd", "option",
	"optgroup", "tr", "td", "th", "tbody", "thead", "tfoot", "colgroup",
	"caption", "rb", "rt", "rp", "rtc", "html", "head", "body", "a",
	"button", "form", "nobr", "h1", "h2", "h3", "h4", "h5", "h6",
	"frameset", NULL,
};
/* HTML's formatting elements: reconstructed when left open. */
static const char *const formatting[] = {
	"a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small",
	"strike", "strong", "tt", "u", NULL,
};
static const char *const rawtext[] = {
	"script", "style", "textarea", "title", "xmp", "iframe", "noembed",
	"noframes", "noscript", NULL,
};

/* Position after "</name", or n. */
static size_t find_end_tag(const char *s, size_t n, size_t i,
			   const char *name, size_t nl)
{
	const char *p;

	while (i < n && (p = memchr(s + i, '<', n - i)) != NULL) {
		i = (size_t)(p - s);
		if (i + 2 + nl <= n && s[i + 1] == '/' &&
		    strncasecmp(s + i + 2, name, nl) == 0)
			return i;
		i++;
	}
	return n;
}

/* Closes the open formatting elements before s[t]: "</b></i>". */
static void close_formatting(struct lim *l, size_t t, const size_t *fname,
			     const size_t *flen, size_t *nf)
{
	char tags[X_MAX_FORMATTING * 10];
	size_t k, len = 0;

	for (k = *nf; k-- > 0;) {
		tags[len++] = '<';
		tags[len++] = '/';
		memcpy(tags + len, l->s + fname[k], flen[k]);
		len += flen[k];
		tags[len++] = '>';
	}
	insert(l, t, tags, len);
	*nf = 0;
}

int x_limit_html(const char *s, size_t n, char **out, size_t *outlen)
{
	struct lim l = { s, n, NULL, 0, 0, 0, 0 };
	size_t i = 0, depth = 0, dropped = 0, foreign = 0;
	size_t fname[X_MAX_FORMATTING], flen[X_MAX_FORMATTING];
	size_t nf = 0, fdropped = 0, recon = 0;
	const char *p;

	*out = NULL;
	while (i < n && (p = memchr(s + i, '<', n - i)) != NULL && !l.oom) {
		size_t t = (size_t)(p - s), k, name, nl, attrs = 0;
		size_t cut_a = 0, cut_b = 0;	/* attributes to drop */
		int end, selfclose = 0;

		i = t + 1;
		if (i >= n)
			break;
		if (s[i] == '!') {
			if (i + 2 < n && s[i + 1] == '-' && s[i + 2] == '-') {
				const char *e = memmem(s + i + 3, n - i - 3, "-->",
						       3);

				i = e ? (size_t)(e - s) + 3 : n;
				continue;
			}
			p = memchr(s + i, '>', n - i);
			i = p ? (size_t)(p - s) + 1 : n;
			continue;
		}
		if (s[i] == '?') {
			p = memchr(s + i, '>', n - i);
			i = p ? (size_t)(p - s) + 1 : n;
			continue;
		}
		end = s[i] == '/';
		if (end)
			i++;
		if (i >= n || !is_alpha(s[i]))
			continue;
		name = i;
		while (i < n && !is_space(s[i]) && s[i] != '/' && s[i] != '>')
			i++;
		nl = i - name;
		/* attributes, with quoted values that may hold '>' */
		while (i < n && s[i] != '>') {
			size_t a;

			if (is_space(s[i]) || s[i] == '/') {
				selfclose = s[i] == '/';
				i++;
				continue;
			}
			selfclose = 0;
			a = i;
			while (i < n && !is_space(s[i]) && s[i] != '/' &&
			       s[i] != '>' && s[i] != '=')
				i++;
			if (i == a)
				i++;	/* a lone '=' */
			while (i < n && is_space(s[i]))
				i++;
			if (i < n && s[i] == '=') {
				i++;
				while (i < n && is_space(s[i]))
					i++;
				if (i < n && (s[i] == '"' || s[i] == '\'')) {
					p = memchr(s + i + 1, s[i], n - i - 1);
					i = p ? (size_t)(p - s) + 1 : n;
				} else {
					while (i < n && !is_space(s[i]) &&
					       s[i] != '>')
						i++;
				}
			}
			if (++attrs == X_MAX_ATTRS + 1 && !end) {
				/* drop this and the following attributes */
				k = i;
				while (k < n && s[k] != '>') {
					if (s[k] == '"' || s[k] == '\'') {
						p = memchr(s + k + 1, s[k],
							   n - k - 1);
						k = p ? (size_t)(p - s) : n;
					}
					if (k < n)
						k++;
				}
				cut_a = a;
				cut_b = k;
				i = k;
				break;
			}
		}
		if (i < n)
			i++;	/* '>' */
		if ((nl == 3 && strncasecmp(s + name, "svg", 3) == 0) ||
		    (nl == 4 && strncasecmp(s + name, "math", 4) == 0)) {
			if (!end)
				foreign++;
			else if (foreign > 0)
				foreign--;
		}
		if (!foreign && nl <= 6 && name_is(s + name, nl, formatting)) {
			if (!end) {
				if (nf >= X_MAX_FORMATTING) {
					fdropped++;
					drop(&l, t, i);
					continue;
				}
				drop(&l, cut_a, cut_b);
				fname[nf] = name;
				flen[nf++] = nl;
				continue;
			}
			for (k = nf; k-- > 0;)
				if (flen[k] == nl &&
				    strncasecmp(s + fname[k], s + name, nl) == 0)
					break;
			if (k != (size_t)-1) {
				memmove(fname + k, fname + k + 1,
					(nf - k - 1) * sizeof(*fname));
				memmove(flen + k, flen + k + 1,
					(nf - k - 1) * sizeof(*flen));
				nf--;
			} else if (fdropped > 0) {
				fdropped--;
				drop(&l, t, i);
			}
			continue;
		}
		if (nf > 0 && (recon += nf) > X_MAX_RECON)
			close_formatting(&l, t, fname, flen, &nf);
		if (name_is(s + name, nl, uncounted)) {
			drop(&l, cut_a, cut_b);
			continue;
		}
		if (end) {
			if (dropped > 0) {
				dropped--;
				drop(&l, t, i);
			} else if (depth > 0) {
				depth--;
			}
			continue;
		}
		if (!foreign && name_is(s + name, nl, rawtext)) {
			/* the whole element, end tag included, is one leaf */
			drop(&l, cut_a, cut_b);
			i = find_end_tag(s, n, i, s + name, nl);
			p = i < n ? memchr(s + i, '>', n - i) : NULL;
			i = p ? (size_t)(p - s) + 1 : n;
			continue;
		}
		if (selfclose && foreign) {
			drop(&l, cut_a, cut_b);
			continue;
		}
		if (depth >= X_MAX_DEPTH) {
			dropped++;
			drop(&l, t, i);		/* the whole tag */
			continue;
		}
		drop(&l, cut_a, cut_b);
		depth++;
	}
	if (l.oom) {
		free(l.out);
		return -1;
	}
	if (l.out != NULL) {
		memcpy(l.out + l.len, s + l.copied, n - l.copied);
		l.len += n - l.copied;
		l.out[l.len] = '\0';
		*out = l.out;
		*outlen = l.len;
	}
	return 0;
}
