/*
 * extract.c - extract_html(): one page's bytes to a doc (extract.h).
 *
 * The flow: cut the input at X_MAX_HTML; convert it to UTF-8 (charset.c);
 * parse and walk it (html.c), which offers every value it finds to a slot
 * per field and source (the first valid value offered to a slot stays);
 * then take, per field, the slot of the highest source (SPEC 1.9:
 * <h1>, JSON-LD, Open Graph, HTML metadata; then the body for text and
 * categories). The canonical URL is <link rel=canonical> in <head>,
 * resolved, else the page URL (SPEC 1.11); url_path and url_qs_params
 * come from it; read_time from the text's words at X_WPM words a minute.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "linkbot/extract.h"
#include "linkbot/log.h"
#include "extract_int.h"

int x_oom(struct x_ctx *x)
{
	if (!x->failed)
		lb_error_set(x->err, LB_ENOMEM, "out of memory");
	x->failed = 1;
	return -1;
}

static char *validate(struct x_ctx *x, enum lb_doc_field f, const char *s,
		      size_t n, int *oom)
{
	switch (f) {
	case LB_F_image_url:
	case LB_F_url:
		return x_url_resolve(x->base, s, n, oom);
	case LB_F_published_time:
		return x_date_iso(s, n, oom);
	case LB_F_language:
		return x_lang_norm(s, n, oom);
	default:
		return x_clean(s, n, X_MAX_FIELD, oom);
	}
}

int x_offer(struct x_ctx *x, enum lb_doc_field f, enum lb_source src,
	    const char *s, size_t n)
{
	char *v;
	int oom = 0;

	if (s == NULL || x->failed || f >= LB_F_author || src >= X_NSRC ||
	    x->str[f][src] != NULL)
		return 0;
	if (n == (size_t)-1)
		n = strlen(s);
	v = validate(x, f, s, n, &oom);
	if (oom)
		return x_oom(x);
	if (v == NULL)
		return 0;
	x->str[f][src] = v;
	return 1;
}

/* Cuts [from, to) out of s (a NUL-terminated string). */
static void cut(char *s, size_t from, size_t to)
{
	memmove(s + from, s + to, strlen(s + to) + 1);
}

/*
 * An author name as bylines and field lists write it, made a name:
 * "View all of Jane Doe's posts." (WordPress Twenty Twenty-One's author
 * bio), "View all posts by Jane Doe" and "More posts by ..." give the
 * name; e-mail addresses go, bare or in brackets ("A.M. Kuchling
 * <amk@amk.ca>", "Vinay Sajip <vinay_sajip at red-dove dot com>": a
 * name holds no angle brackets). Works in place; returns the length left
 * (0: nothing is left, drop it).
 */
static size_t author_clean(char *v)
{
	static const char *const lead[] = {
		"view all of ", "view all posts by ", "see all posts by ",
		"more posts by ", "all posts by ", "view all articles by ",
		"posts by ", "articles by ", NULL,
	};
	char *p, *q, *e;
	size_t k, n;

	for (k = 0; lead[k] != NULL; k++) {
		n = strlen(lead[k]);
		if (strncasecmp(v, lead[k], n) == 0 && v[n] != '\0') {
			cut(v, 0, n);
			break;
		}
	}
	if (k == 0) {	/* "Jane Doe's posts." */
		n = strlen(v);
		for (e = v + n; e > v && (e[-1] == '.' || e[-1] == ' '); e--)
			;
		*e = '\0';
		if ((p = strstr(v, "'s posts")) != NULL ||
		    (p = strstr(v, "\xe2\x80\x99s posts")) != NULL)
			*p = '\0';
	}
	/* bracketed parts: <mail>, (mail), [mail] */
	while ((p = strchr(v, '<')) != NULL) {
		q = strchr(p, '>');
		cut(v, (size_t)(p - v), q != NULL ? (size_t)(q - v) + 1 : strlen(v));
	}
	for (p = v; (p = strpbrk(p, "([")) != NULL;) {
		q = strchr(p, *p == '(' ? ')' : ']');
		if (q != NULL && memchr(p, '@', (size_t)(q - p)) != NULL)
			cut(v, (size_t)(p - v), (size_t)(q - v) + 1);
		else
			p++;
	}
	/* bare addresses and mailto: links */
	while ((p = strchr(v, '@')) != NULL) {
		for (q = p; q > v && q[-1] != ' '; q--)
			;
		for (e = p; *e != '\0' && *e != ' '; e++)
			;
		cut(v, (size_t)(q - v), (size_t)(e - v));
	}
	/* white space and separators left at the ends */
	n = strlen(v);
	while (n > 0 && strchr(" ,;:-|/", v[n - 1]) != NULL)
		v[--n] = '\0';
	for (k = 0; v[k] == ' ' || v[k] == ',' || v[k] == '-'; k++)
		;
	cut(v, 0, k);
	/* inner runs of two spaces left by a cut */
	for (p = v; (p = strstr(p, "  ")) != NULL;)
		cut(v, (size_t)(p - v), (size_t)(p - v) + 1);
	return strlen(v);
}

int x_offer_item(struct x_ctx *x, enum lb_doc_field f, enum lb_source src,
		 const char *s, size_t n)
{
	struct lb_strlist *l;
	char *v;
	int oom = 0, rc;

	if (s == NULL || x->failed || src >= X_NSRC ||
	    (f != LB_F_author && f != LB_F_category))
		return 0;
	l = &x->list[f - LB_F_author][src];
	if (l->n >= 32)
		return 0;
	if (n == (size_t)-1)
		n = strlen(s);
	/* "By Jane Doe", "Posted by Jane Doe", "Author: Jane Doe" */
	if (f == LB_F_author) {
		static const char *const pre[] = {
			"by ", "posted by ", "written by ", "author: ",
			"von ", "par ", "por ", "door ", NULL,
		};
		size_t k, pl;

		while (n > 0 && (*s == ' ' || *s == '\t' || *s == '\n'))
			s++, n--;
		for (k = 0; pre[k] != NULL; k++) {
			pl = strlen(pre[k]);
			if (n > pl && strncasecmp(s, pre[k], pl) == 0) {
				s += pl, n -= pl;
				break;
			}
		}
	}
	v = x_clean(s, n, X_MAX_FIELD / 4, &oom);
	if (oom)
		return x_oom(x);
	if (v != NULL && f == LB_F_author && author_clean(v) == 0) {
		free(v);
		v = NULL;
	}
	if (v == NULL)
		return 0;
	rc = lb_strlist_add(l, v, x->err);
	free(v);
	if (rc < 0)
		return x_oom(x);
	return 1;
}

void x_offer_text(struct x_ctx *x, enum lb_source src, char *text)
{
	if (src >= X_NSRC || x->text[src] != NULL || text == NULL) {
		free(text);
		return;
	}
	x->text[src] = text;
}

int x_has(const struct x_ctx *x, enum lb_doc_field f, enum lb_source src)
{
	if (f == LB_F_author || f == LB_F_category)
		return x->list[f - LB_F_author][src].n > 0;
	if (f == LB_F_text)
		return x->text[src] != NULL;
	return x->str[f][src] != NULL;
}

void x_ctx_release(struct x_ctx *x)
{
	int f, s;

	for (f = 0; f < LB_F_author; f++)
		for (s = 0; s < X_NSRC; s++)
			free(x->str[f][s]);
	for (f = 0; f < 2; f++)
		for (s = 0; s < X_NSRC; s++)
			lb_strlist_release(&x->list[f][s]);
	for (s = 0; s < X_NSRC; s++)
		free(x->text[s]);
	lb_doclinks_release(&x->links);
	free(x->base_own);
	free(x->unavailable_after);
}

static char **doc_str(struct lb_doc *d, enum lb_doc_field f)
{
	switch (f) {
#define X_DOC_CASE(name) case LB_F_##name: return &d->name;
	LB_DOC_STR_FIELDS(X_DOC_CASE)
#undef X_DOC_CASE
	default:
		return NULL;
	}
}

/* Moves the best candidates into the doc. */
static int assemble(struct x_ctx *x, const char *page_url, struct lb_doc *doc)
{
	int f, s, oom = 0;
	char buf[32];
	size_t words;

	for (f = 0; f < LB_F_author; f++) {
		for (s = 1; s < X_NSRC; s++) {
			if (x->str[f][s] == NULL)
				continue;
			*doc_str(doc, (enum lb_doc_field)f) = x->str[f][s];
			x->str[f][s] = NULL;
			doc->src[f] = (enum lb_source)s;
			break;
		}
	}
	for (f = 0; f < 2; f++) {
		struct lb_strlist *dst = f == 0 ? &doc->author : &doc->category;

		for (s = 1; s < X_NSRC; s++) {
			if (x->list[f][s].n == 0)
				continue;
			*dst = x->list[f][s];
			memset(&x->list[f][s], 0, sizeof(x->list[f][s]));
			doc->src[LB_F_author + f] = (enum lb_source)s;
			break;
		}
	}
	for (s = 1; s < X_NSRC; s++) {
		if (x->text[s] == NULL)
			continue;
		doc->text = x->text[s];
		x->text[s] = NULL;
		doc->src[LB_F_text] = (enum lb_source)s;
		break;
	}
	if (doc->url == NULL && page_url != NULL) {
		doc->url = x_url_resolve(NULL, page_url, (size_t)-1, &oom);
		if (doc->url != NULL)
			doc->src[LB_F_url] = LB_SRC_URL;
	}
	if (doc->url != NULL) {
		doc->url_path = x_url_path(doc->url, &oom);
		doc->url_qs_params = x_url_query(doc->url, &oom);
		if (doc->url_path != NULL)
			doc->src[LB_F_url_path] = LB_SRC_DERIVED;
		if (doc->url_qs_params != NULL)
			doc->src[LB_F_url_qs_params] = LB_SRC_DERIVED;
	}
	if (doc->text != NULL && (words = x_word_count(doc->text)) > 0) {
		snprintf(buf, sizeof(buf), "%zu min",
			 (words + X_WPM - 1) / X_WPM);
		if ((doc->read_time = strdup(buf)) == NULL)
			oom = 1;
		doc->src[LB_F_read_time] = LB_SRC_DERIVED;
	}
	/* the body text's links, but none to the page itself */
	if (doc->src[LB_F_text] == LB_SRC_BODY) {
		size_t i, w = 0;

		doc->links = x->links;
		memset(&x->links, 0, sizeof(x->links));
		for (i = 0; i < doc->links.n; i++) {
			struct lb_doclink *l = &doc->links.v[i];

			if (doc->url != NULL && strcmp(l->url, doc->url) == 0) {
				free(l->url);
				free(l->anchor);
				continue;
			}
			doc->links.v[w++] = *l;
		}
		doc->links.n = w;
	}
	doc->noindex = x->noindex;
	doc->unavailable_after = x->unavailable_after;
	x->unavailable_after = NULL;
	return oom ? x_oom(x) : 0;
}

int extract_html(const char *html, size_t len, const char *page_url,
		 const char *charset, struct lb_doc *doc, struct lb_error *err)
{
	struct x_ctx x;
	const char *utf8 = NULL;
	char *limited = NULL;
	size_t ulen, llen = 0;
	int own = 0, rc = -1;
	char used[48];

	memset(&x, 0, sizeof(x));
	x.err = err;
	x.base = page_url;
	lb_doc_release(doc);
	if (html == NULL)
		len = 0, html = "";
	if (len > X_MAX_HTML)
		len = X_MAX_HTML;
	if (x_to_utf8(html, len, charset, &utf8, &ulen, &own, used) < 0) {
		x_oom(&x);
		goto out;
	}
	if (x_limit_html(utf8, ulen, &limited, &llen) < 0) {
		x_oom(&x);
		goto out;
	}
	if (limited != NULL) {
		log_warnx("'%s': markup beyond the parser's limits dropped "
			  "(nesting over %d, over %d attributes in a tag, or "
			  "over %d formatting elements left open)",
			  page_url ? page_url : "-", X_MAX_DEPTH, X_MAX_ATTRS,
			  X_MAX_FORMATTING);
		if (own)
			free((char *)utf8);
		utf8 = limited;
		ulen = llen;
		own = 1;
	}
	if (x_html_scan(utf8, ulen, page_url, &x) < 0)
		goto out;
	if (assemble(&x, page_url, doc) < 0)
		goto out;
	rc = 0;
out:
	if (own)
		free((char *)utf8);
	x_ctx_release(&x);
	if (rc < 0)
		lb_doc_release(doc);
	return rc;
}
