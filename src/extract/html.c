/*
 * html.c - the gumbo walks: one over the whole tree for metadata (meta,
 * link, title, html lang, JSON-LD scripts, the first <h1>, microdata
 * text), then one for the body text. The only file that includes gumbo.
 *
 * Walks are iterative (an explicit stack), so a deep tree costs memory in
 * proportion to its depth, never C stack.
 *
 * Hidden content, never text: script, style, noscript, template, svg,
 * math, iframe, object, canvas, audio, video, form controls; elements with
 * the hidden attribute, aria-hidden="true", an inline style with
 * display:none or visibility:hidden, or a class that hides by convention
 * (hidden, sr-only, screen-reader-text, visually-hidden, d-none).
 *
 * Body text (SPEC 1.10, last resort): the text of the page's main element
 * (the only <main> or role=main, else the only <article>, else <body>)
 * without hidden content and without boilerplate: nav, aside, button,
 * dialog, header and footer outside an article or main element, the ARIA
 * roles navigation, banner, contentinfo, complementary, search, dialog,
 * menu, and classes naming menus, sidebars, widgets, breadcrumbs,
 * comments, share buttons, cookie banners, related posts, newsletters;
 * ids only as whole tokens, and never ids a generator derived from a
 * heading or a term ("credits", "comments": docs/extract.md).
 * If that leaves nothing, the whole <body> without hidden content.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gumbo.h>

#include "extract_int.h"

/*
 * The ancestors of the page's content anchors (<main>, role=main,
 * itemprop=articleBody|text) are never boilerplate, whatever their class
 * says: WordPress puts "ast-right-sidebar" or "et_right_sidebar" on
 * <body> and on wrappers of the whole page. A sorted array, searched only
 * for elements that look like boilerplate.
 */
#define X_MAX_ANCHORS 16
struct keep {
	const GumboNode **v;
	size_t n;
};

static int keeps(const struct keep *k, const GumboNode *n)
{
	size_t lo = 0, hi;

	if (k == NULL)
		return 0;
	hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->v[mid] == n)
			return 1;
		if ((uintptr_t)k->v[mid] < (uintptr_t)n)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Frame flags. */
#define F_HIDDEN	0x01	/* inside hidden content */
#define F_BOILER	0x02	/* inside boilerplate */
#define F_ARTICLE	0x04	/* inside <article> or <main> */
#define F_MICRO		0x08	/* inside itemprop=articleBody|text */
#define F_BLOCK		0x10	/* this element is a block */
#define F_HEAD		0x20	/* inside <head> */
#define F_PRE		0x40	/* inside <pre>: line feeds are line breaks */
#define F_CHROME	0x80	/* inside the site's chrome (boilerplate other
				 * than an entry's meta line): no bylines */
#define F_HEADING	0x100	/* inside h1-h6: never boilerplate (docutils
				 * wraps headings in <a class="toc-backref">) */
#define F_AHEADER	0x200	/* inside the <header> of an article or main */

struct frame {
	GumboNode *node;
	unsigned idx;
	unsigned flags;
};

struct stack {
	struct frame *v;
	size_t n, alloc;
};

static int push(struct stack *s, GumboNode *node, unsigned flags)
{
	if (s->n == s->alloc) {
		size_t a = s->alloc ? s->alloc * 2 : 64;
		struct frame *v = realloc(s->v, a * sizeof(*v));

		if (v == NULL)
			return -1;
		s->v = v;
		s->alloc = a;
	}
	s->v[s->n].node = node;
	s->v[s->n].idx = 0;
	s->v[s->n].flags = flags;
	s->n++;
	return 0;
}

static const GumboVector *children(const GumboNode *n)
{
	if (n->type == GUMBO_NODE_DOCUMENT)
		return &n->v.document.children;
	if (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE)
		return &n->v.element.children;
	return NULL;
}

static const char *attr(const GumboNode *n, const char *name)
{
	const GumboAttribute *a = gumbo_get_attribute(&n->v.element.attributes,
						      name);

	return a != NULL ? a->value : NULL;
}

/* Is word one of the white-space separated tokens of list? */
static int has_token(const char *list, const char *word)
{
	size_t wl = strlen(word);
	const char *p = list;

	if (list == NULL)
		return 0;
	while (*p != '\0') {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' ||
		       *p == '\f')
			p++;
		const char *e = p;

		while (*e != '\0' && *e != ' ' && *e != '\t' && *e != '\n' &&
		       *e != '\r' && *e != '\f')
			e++;
		if ((size_t)(e - p) == wl && strncasecmp(p, word, wl) == 0)
			return 1;
		p = e;
	}
	return 0;
}

/* An element gumbo does not know, by its name as written. */
static int unknown_is(const GumboNode *n, const char *name)
{
	const GumboStringPiece *o = &n->v.element.original_tag;
	size_t l = strlen(name);

	return o->data != NULL && o->length > l + 1 && o->data[0] == '<' &&
	       strncasecmp(o->data + 1, name, l) == 0 &&
	       (o->data[l + 1] == '>' || o->data[l + 1] == ' ' ||
		o->data[l + 1] == '\t' || o->data[l + 1] == '\n' ||
		o->data[l + 1] == '/');
}

static int is_block(GumboTag t)
{
	switch (t) {
	case GUMBO_TAG_ADDRESS: case GUMBO_TAG_ARTICLE: case GUMBO_TAG_ASIDE:
	case GUMBO_TAG_BLOCKQUOTE: case GUMBO_TAG_BODY: case GUMBO_TAG_CAPTION:
	case GUMBO_TAG_DD: case GUMBO_TAG_DETAILS: case GUMBO_TAG_DIV:
	case GUMBO_TAG_DL: case GUMBO_TAG_DT: case GUMBO_TAG_FIELDSET:
	case GUMBO_TAG_FIGCAPTION: case GUMBO_TAG_FIGURE: case GUMBO_TAG_FOOTER:
	case GUMBO_TAG_FORM: case GUMBO_TAG_H1: case GUMBO_TAG_H2:
	case GUMBO_TAG_H3: case GUMBO_TAG_H4: case GUMBO_TAG_H5:
	case GUMBO_TAG_H6: case GUMBO_TAG_HEADER: case GUMBO_TAG_HR:
	case GUMBO_TAG_HTML: case GUMBO_TAG_LI: case GUMBO_TAG_MAIN:
	case GUMBO_TAG_NAV: case GUMBO_TAG_OL: case GUMBO_TAG_P:
	case GUMBO_TAG_PRE: case GUMBO_TAG_SECTION: case GUMBO_TAG_SUMMARY:
	case GUMBO_TAG_TABLE: case GUMBO_TAG_TBODY: case GUMBO_TAG_THEAD:
	case GUMBO_TAG_TFOOT: case GUMBO_TAG_TR: case GUMBO_TAG_UL:
	case GUMBO_TAG_CENTER: case GUMBO_TAG_LISTING: case GUMBO_TAG_MENU:
	case GUMBO_TAG_HGROUP: case GUMBO_TAG_DIR:
		return 1;
	default:
		return 0;
	}
}

static int style_hides(const char *style)
{
	char buf[256];
	size_t k = 0;
	const char *p;

	if (style == NULL)
		return 0;
	for (p = style; *p != '\0' && k + 1 < sizeof(buf); p++) {
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			continue;
		buf[k++] = (*p >= 'A' && *p <= 'Z') ? (char)(*p + 32) : *p;
	}
	buf[k] = '\0';
	for (p = buf; (p = strstr(p, "display:none")) != NULL; p++)
		if ((p == buf || p[-1] == ';' || p[-1] == '{') &&
		    (p[12] == '\0' || p[12] == ';' || p[12] == '!'))
			return 1;
	for (p = buf; (p = strstr(p, "visibility:hidden")) != NULL; p++)
		if ((p == buf || p[-1] == ';' || p[-1] == '{') &&
		    (p[17] == '\0' || p[17] == ';' || p[17] == '!'))
			return 1;
	return 0;
}

/* Word lists with their lengths, compared without strlen on every call. */
struct word {
	const char *w;
	size_t n;
};
#define W(s) { s, sizeof(s) - 1 }

/* Classes that hide by convention (and permalink pilcrows). */
static const struct word hiding_classes[] = {
	W("hidden"), W("d-none"), W("sr-only"), W("visually-hidden"),
	W("screen-reader-text"), W("screen-reader-only"), W("is-hidden"),
	W("u-hidden"), W("invisible"), W("hide"), W("element-invisible"),
	W("a11y-hidden"), W("headerlink"), W("hash-link"), W("anchorjs-link"),
	{ NULL, 0 },
};
/* Words that mark boilerplate in a class or id ("ez-toc-container",
 * "jp-relatedposts", "cookie-law-info-bar"; not "widget": page builders
 * wrap the content in "elementor-widget", "so-panel widget"), and words
 * that veto it when
 * the token ends in a wrapper word ("content-sidebar-wrap" wraps the
 * content; "article-byline" is a byline). */
static const struct word boiler_words[] = {
	W("nav"), W("navbar"), W("navigation"), W("menu"), W("menubar"),
	W("breadcrumb"), W("breadcrumbs"), W("sidebar"), W("footer"), W("cookie"), W("cookies"), W("consent"),
	W("gdpr"), W("share"), W("sharing"), W("sharedaddy"), W("social"),
	W("related"), W("comments"), W("comment"), W("respond"),
	W("newsletter"), W("subscribe"), W("popup"), W("modal"), W("advert"),
	W("advertisement"), W("ads"), W("ad"), W("sponsored"), W("promo"),
	W("skip"), W("pagination"), W("pager"), W("masthead"), W("toolbar"),
	W("tagcloud"), W("relatedposts"), W("toc"), W("signup"), W("tags"),
	W("cookiebanner"), W("paginav"), W("crp"), W("cta"), W("popular"),
	W("trending"), W("recommended"), W("onward"), W("outbrain"),
	W("taboola"), W("ufi"), W("topnav"), W("subnav"), W("mainnav"),
	W("navlinks"), W("subscription"), W("mailpoet"), W("mc4wp"),
	W("optin"), W("pum"), W("popmake"),
	{ NULL, 0 },
};
/* Words of an entry's meta line: boilerplate for the text, but where
 * bylines, entry dates and categories are. */
static const struct word meta_words[] = {
	W("meta"), W("byline"), W("postmeta"), W("entrymeta"), W("avatar"),
	{ NULL, 0 },
};
/* Whole class tokens of an entry's meta line (WordPress). */
static const struct word meta_tokens[] = {
	W("wp-block-post-date"), W("wp-block-post-author"),
	W("wp-block-post-author-name"), W("wp-block-post-terms"),
	W("posted-on"), W("cat-links"), W("tags-links"), W("posted-by"),
	W("entry-date"), W("post-date"), W("dateline"), W("post-info"),
	W("elementor-post-info"), W("entry-info"), W("article-info"),
	W("speechify-ignore"), W("author-box"), W("author-bio"),
	W("about-author"), W("authorbox"), W("saboxplugin-wrap"),
	W("author-info"), W("post-author-box"),
	{ NULL, 0 },
};
/* Whole class or id tokens of documentation generators' navigation
 * (DocBook's navheader/navfooter, the Apache manual's language bars),
 * table-of-contents blocks and consent dialogs. */
static const struct word boiler_tokens[] = {
	W("navheader"), W("navfooter"), W("toplang"), W("bottomlang"),
	W("sphinxsidebar"), W("toctree-wrapper"), W("related-posts"),
	W("table-of-contents"), W("CybotCookiebotDialog"), W("header"),
	W("widget-area"), W("widget_area"), W("widgets-area"),
	W("mw-editsection"), W("edit-link"), W("post-edit-link"),
	W("noprint"), W("mw-jump-link"), W("catlinks"), W("latest-posts"),
	W("links-block"),
	W("wp-block-latest-posts"),
	W("site-header"), W("site-branding"), W("branding"), W("credits"),
	W("colophon"), W("site-info"), W("copyright"), W("topbar"),
	W("top-bar"),
	W("BorlabsCookie"), W("onetrust-consent-sdk"),
	{ NULL, 0 },
};
/* Ids of documentation generators' page chrome (the Apache manual's
 * header, breadcrumb path and quick view). */
static const struct word boiler_ids[] = {
	W("page-header"), W("path"), W("quickview"), W("nav-above"),
	W("nav-below"), W("secondary"),
	{ NULL, 0 },
};
/* An entry's footer ("post-footer", "entry-footer") is its meta line. */
static const struct word entry_words[] = {
	W("post"), W("entry"), W("article"), W("story"),
	{ NULL, 0 },
};
static const struct word veto_words[] = {
	W("content"), W("article"), W("body"), W("main"),
	{ NULL, 0 },
};
/* "has-sidebar", "no-sidebar", "with-sidebar": a layout, not a sidebar */
static const struct word layout_words[] = {
	W("has"), W("no"), W("with"), W("without"),
	{ NULL, 0 },
};
static const struct word wrap_words[] = {
	W("wrap"), W("wrapper"), W("container"), W("inner"), W("area"),
	W("layout"), W("holder"),
	{ NULL, 0 },
};
/* ARIA roles of boilerplate (banner only outside article/main). */
static const struct word boiler_roles[] = {
	W("navigation"), W("contentinfo"), W("complementary"), W("search"),
	W("dialog"), W("alertdialog"), W("menu"), W("menubar"), W("toolbar"),
	{ NULL, 0 },
};

static int word_in(const char *p, size_t n, const struct word *l)
{
	for (; l->w != NULL; l++)
		if (l->n == n && (p[0] | 0x20) == (l->w[0] | 0x20) &&
		    strncasecmp(p, l->w, n) == 0)
			return 1;
	return 0;
}

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/* Does a token of the list match the word list? */
static int list_has(const char *list, const struct word *words)
{
	const char *p = list, *e;

	while (*p != '\0') {
		while (is_ws(*p))
			p++;
		for (e = p; *e != '\0' && !is_ws(*e); e++)
			;
		if (e > p && word_in(p, (size_t)(e - p), words))
			return 1;
		p = e;
	}
	return 0;
}

/* CSS-in-JS class names end in the component's name
 * ("ssrcss-1f39n02-VisuallyHidden"). */
static const struct word hiding_tails[] = {
	W("VisuallyHidden"), W("ScreenReaderOnly"), W("SrOnly"),
	W("ScreenReaderText"),
	{ NULL, 0 },
};

static int tail_hides(const char *list)
{
	const char *p = list, *e, *t;

	while (*p != '\0') {
		while (is_ws(*p))
			p++;
		for (e = p; *e != '\0' && !is_ws(*e); e++)
			;
		for (t = e; t > p && t[-1] != '-'; t--)
			;
		if (t > p && e > t && word_in(t, (size_t)(e - t), hiding_tails))
			return 1;
		p = e;
	}
	return 0;
}

/* Does one token of the class or id list name boilerplate? 1: the site's
 * chrome, 2: an entry's meta line, 0: neither. */
static int names_boiler(const char *list)
{
	const char *p = list, *e, *q, *qe;
	int boiler, meta, veto, entry, r = 0;

	while (*p != '\0') {
		while (is_ws(*p))
			p++;
		for (e = p; *e != '\0' && !is_ws(*e); e++)
			;
		if (e - p > 64) {
			p = e;
			continue;
		}
		/* the short classes of syntax highlighters ("n", "mi", "s2"):
		 * only "ad" names boilerplate */
		if (e - p <= 2) {
			if (e - p == 2 && (p[0] | 0x20) == 'a' &&
			    (p[1] | 0x20) == 'd')
				return 1;
			p = e;
			continue;
		}
		if (word_in(p, (size_t)(e - p), boiler_tokens))
			return 1;
		if (word_in(p, (size_t)(e - p), meta_tokens)) {
			r = 2;
			p = e;
			continue;
		}
		boiler = meta = veto = entry = 0;
		for (q = p; q < e; q = qe + 1) {
			for (qe = q; qe < e && *qe != '-' && *qe != '_'; qe++)
				;
			if (qe > q && word_in(q, (size_t)(qe - q), boiler_words))
				boiler = boiler == 1 || (qe - q != 6 ||
					strncasecmp(q, "footer", 6) != 0) ?
					1 : 2;
			else if (qe > q &&
				 word_in(q, (size_t)(qe - q), entry_words))
				entry = 1;
			else if (qe > q &&
				 word_in(q, (size_t)(qe - q), meta_words))
				meta = 1;
			else if (qe > q &&
				 word_in(q, (size_t)(qe - q), veto_words))
				veto |= 1;
			else if (qe > q &&
				 word_in(q, (size_t)(qe - q), layout_words))
				veto |= 3;
			if (qe == e) {
				if (qe > q && word_in(q, (size_t)(qe - q),
						      wrap_words))
					veto |= 2;
				break;
			}
		}
		veto = veto == 3;
		if (boiler == 2 && entry)
			boiler = 0, meta = 1;	/* post-footer, entry-footer */
		if (boiler && !veto)
			return 1;
		if (meta && !veto)
			r = 2;
		p = e;
	}
	return r;
}

/* The attributes the walks look at, found in one pass. */
struct eattrs {
	const char *hidden, *aria_hidden, *style, *cls, *id, *role;
	const char *itemprop, *rel;
	const char *component;	/* data-component (BBC, Guardian) */
};

static void get_attrs(const GumboNode *n, struct eattrs *a)
{
	const GumboVector *v = &n->v.element.attributes;
	unsigned i;

	memset(a, 0, sizeof(*a));
	for (i = 0; i < v->length; i++) {
		const GumboAttribute *at = v->data[i];
		const char *nm = at->name;

		switch (nm[0]) {
		case 'h':
			if (strcmp(nm, "hidden") == 0)
				a->hidden = at->value;
			break;
		case 'a':
			if (strcmp(nm, "aria-hidden") == 0)
				a->aria_hidden = at->value;
			break;
		case 's':
			if (strcmp(nm, "style") == 0)
				a->style = at->value;
			break;
		case 'c':
			if (strcmp(nm, "class") == 0)
				a->cls = at->value;
			break;
		case 'i':
			if (strcmp(nm, "id") == 0)
				a->id = at->value;
			else if (strcmp(nm, "itemprop") == 0)
				a->itemprop = at->value;
			break;
		case 'r':
			if (strcmp(nm, "role") == 0)
				a->role = at->value;
			else if (strcmp(nm, "rel") == 0)
				a->rel = at->value;
			break;
		case 'd':
			if (strcmp(nm, "data-component") == 0)
				a->component = at->value;
			break;
		}
	}
}

static int hidden_tag(const GumboNode *n)
{
	if (n->type == GUMBO_NODE_TEMPLATE)
		return 1;
	switch (n->v.element.tag) {
	case GUMBO_TAG_SCRIPT: case GUMBO_TAG_STYLE: case GUMBO_TAG_NOSCRIPT:
	case GUMBO_TAG_TEMPLATE: case GUMBO_TAG_SVG: case GUMBO_TAG_MATH:
	case GUMBO_TAG_IFRAME: case GUMBO_TAG_OBJECT: case GUMBO_TAG_EMBED:
	case GUMBO_TAG_CANVAS: case GUMBO_TAG_AUDIO: case GUMBO_TAG_VIDEO:
	case GUMBO_TAG_HEAD: case GUMBO_TAG_TITLE: case GUMBO_TAG_SELECT:
	case GUMBO_TAG_OPTION: case GUMBO_TAG_DATALIST:
	case GUMBO_TAG_TEXTAREA: case GUMBO_TAG_INPUT: case GUMBO_TAG_MAP:
	case GUMBO_TAG_NOFRAMES: case GUMBO_TAG_NOEMBED:
		return 1;
	default:
		return 0;
	}
}

static int boiler_tag(const GumboNode *n, unsigned flags)
{
	switch (n->v.element.tag) {
	case GUMBO_TAG_NAV: case GUMBO_TAG_ASIDE: case GUMBO_TAG_BUTTON:
	case GUMBO_TAG_MENU: case GUMBO_TAG_LABEL:
		return 1;
	case GUMBO_TAG_UNKNOWN:	/* gumbo 0.10 predates <dialog>; AMP's
				 * menus and consent banners */
		return unknown_is(n, "dialog") || unknown_is(n, "amp-sidebar") ||
		       unknown_is(n, "amp-consent") ||
		       unknown_is(n, "amp-user-notification");
	case GUMBO_TAG_HEADER:
		return !(flags & F_ARTICLE);
	case GUMBO_TAG_FOOTER:
		/* an article's own footer: its meta line (tags, "Edit
		 * this page", share links), not its text */
		return !(flags & F_ARTICLE) ? 1 : 2;
	default:
		return 0;
	}
}

/* docutils' <aside> classes: parts of the document, not chrome. */
static const struct word docutils_asides[] = {
	W("footnote"), W("footnote-list"), W("citation"), W("topic"),
	{ NULL, 0 },
};

/*
 * Is n a docutils block with its own title: a sidebar, topic or
 * admonition of the document (<aside class="sidebar"><p
 * class="sidebar-title">: "Important", "Related Articles"), not the
 * page's sidebar?
 */
static int docutils_titled(const GumboNode *n)
{
	const GumboVector *ch = &n->v.element.children;
	const char *c;
	size_t i;

	for (i = 0; i < ch->length; i++) {
		const GumboNode *e = ch->data[i];

		if (e->type != GUMBO_NODE_ELEMENT)
			continue;
		return e->v.element.tag == GUMBO_TAG_P &&
		       e->v.element.attributes.length > 0 &&
		       (c = attr(e, "class")) != NULL &&
		       (has_token(c, "sidebar-title") ||
			has_token(c, "topic-title"));
	}
	return 0;
}

static int is_heading(const GumboNode *n)
{
	return n->type == GUMBO_NODE_ELEMENT &&
	       n->v.element.tag >= GUMBO_TAG_H1 &&
	       n->v.element.tag <= GUMBO_TAG_H6;
}

static int collect_text(GumboNode *root, int boiler, unsigned flags0,
			const struct keep *k, struct x_text *t);
static int keep_link(GumboNode *a, int boiler, unsigned fl,
		     const struct keep *k, struct x_text *t);

/* Words of n's visible text, up to a cap (the text is cut at 512 bytes);
 * *by: it starts with "By " and a capital (a byline). */
static size_t short_words(const GumboNode *n, int *by)
{
	struct x_text t;
	size_t w = 0;

	x_text_init(&t, 512, 1);
	collect_text((GumboNode *)n, 0, 0, NULL, &t);
	if (!t.oom && t.b.len > 0) {
		t.b.data[t.b.len] = '\0';
		w = x_word_count(t.b.data);
		/* "By Jane Doe", not "By the numbers" */
		if (by != NULL)
			*by = strncasecmp(t.b.data, "by ", 3) == 0 &&
			      ((t.b.data[3] >= 'A' && t.b.data[3] <= 'Z') ||
			       (unsigned char)t.b.data[3] >= 0x80);
	}
	x_text_release(&t);
	return w;
}

/*
 * Is id the one a generator derived from the text of the element's
 * heading: the element is a heading, or its first element children (an
 * empty label <span> may come first: Sphinx) hold a heading whose letters
 * and digits, lower-cased, are the id's (docutils, Python-Markdown,
 * kramdown, goldmark and Docusaurus slugs; a "-2" suffix of a repeated
 * title allowed)? A chrome block's id is not its heading's slug:
 * WordPress's <div id="comments"> opens with "3 thoughts on ...".
 */
static int id_from_heading(const GumboNode *n, const char *id)
{
	const GumboVector *ch;
	const GumboNode *h = NULL;
	char buf[256], *p, *q;
	size_t i, k = 0, seen = 0, idn, hn;
	struct x_text t;
	int same = 0;

	if (is_heading(n) || n->v.element.tag == GUMBO_TAG_DT)
		return 1;	/* a heading's or a term's own id */
	ch = &n->v.element.children;
	for (i = 0; i < ch->length && seen < 3; i++) {
		const GumboNode *c = ch->data[i];

		if (c->type != GUMBO_NODE_ELEMENT)
			continue;
		seen++;
		if (is_heading(c)) {
			h = c;
			break;
		}
		if (c->v.element.tag != GUMBO_TAG_SPAN &&
		    c->v.element.tag != GUMBO_TAG_A)
			return 0;
	}
	if (h == NULL)
		return 0;
	/* the id's letters and digits, without a "-N" suffix */
	idn = strlen(id);
	for (i = idn; i > 0 && id[i - 1] >= '0' && id[i - 1] <= '9'; i--)
		;
	if (i < idn && i > 1 && (id[i - 1] == '-' || id[i - 1] == '_'))
		idn = i - 1;
	for (i = 0; i < idn && k + 1 < sizeof(buf); i++)
		if ((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' && id[i] <= '9'))
			buf[k++] = id[i];
		else if (id[i] >= 'A' && id[i] <= 'Z')
			buf[k++] = (char)(id[i] + 32);
	buf[k] = '\0';
	if (k == 0)
		return 0;
	x_text_init(&t, 512, 1);
	collect_text((GumboNode *)h, 0, 0, NULL, &t);
	if (!t.oom && t.b.len > 0) {
		/* the heading's letters and digits, in place */
		for (p = q = t.b.data; p < t.b.data + t.b.len; p++) {
			char c = *p;

			if (c >= 'A' && c <= 'Z')
				c = (char)(c + 32);
			if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
				*q++ = c;
		}
		*q = '\0';
		/* a section number before the title ("2.1.3. Comments":
		 * docutils' sectnum, Sphinx's numbered toctrees) is not
		 * in the id */
		hn = (size_t)(q - t.b.data);
		for (i = 0; i < hn && t.b.data[i] >= '0' && t.b.data[i] <= '9';
		     i++)
			;
		same = strcmp(t.b.data, buf) == 0 ||
		       (buf[0] > '9' && hn - i == k &&
			strcmp(t.b.data + i, buf) == 0);
	}
	x_text_release(&t);
	return same;
}

/*
 * A child of an article's <header> that is its meta line rather than its
 * title or standfirst: a <time>, a short line around one ("May 6, 2023 ·
 * 2 min read": Docusaurus) or a short byline ("By Jane Doe": Hugo's
 * Ananke). 1: a date line, 2: a byline, 0: neither.
 */
static int header_meta(const GumboNode *n)
{
	const GumboVector *ch = &n->v.element.children;
	size_t i;
	int by = 0, time = n->v.element.tag == GUMBO_TAG_TIME;

	if (n->parent == NULL || n->parent->type != GUMBO_NODE_ELEMENT ||
	    n->parent->v.element.tag != GUMBO_TAG_HEADER || is_heading(n))
		return 0;
	for (i = 0; i < ch->length && !time; i++) {
		const GumboNode *c = ch->data[i];

		time = c->type == GUMBO_NODE_ELEMENT &&
		       c->v.element.tag == GUMBO_TAG_TIME;
	}
	if (time)
		return short_words(n, NULL) <= 10 ? 1 : 0;
	if (n->v.element.tag != GUMBO_TAG_P && n->v.element.tag != GUMBO_TAG_DIV &&
	    n->v.element.tag != GUMBO_TAG_SPAN)
		return 0;
	return short_words(n, &by) <= 6 && by ? 2 : 0;
}

/*
 * A group of an entry's meta blocks and the labels between them: block
 * themes write "<p>Posted</p> <div class=wp-block-post-date> <p>in</p>
 * <div class=wp-block-post-terms>". Every element child is a meta block
 * (its class names one) or a label of at most two words without
 * elements; at least one of each.
 */
static int labels_meta(const GumboNode *n)
{
	const GumboVector *ch = &n->v.element.children;
	size_t i, metas = 0, labels = 0, els = 0;
	const char *c;

	if (ch->length < 2 || ch->length > 40)
		return 0;
	/* cheap tests first: most elements fail on their first child */
	for (i = 0; i < ch->length; i++) {
		GumboNode *e = ch->data[i], *t;

		if (e->type == GUMBO_NODE_TEXT)
			return 0;
		if (e->type != GUMBO_NODE_ELEMENT)
			continue;
		if (++els > 12)
			return 0;
		if ((e->v.element.tag == GUMBO_TAG_P ||
		     e->v.element.tag == GUMBO_TAG_SPAN) &&
		    e->v.element.children.length == 1 &&
		    (t = e->v.element.children.data[0])->type ==
		    GUMBO_NODE_TEXT) {
			if (strnlen(t->v.text.text, 40) >= 40 ||
			    x_word_count(t->v.text.text) > 2)
				return 0;
			labels++;
			continue;
		}
		if (e->v.element.attributes.length > 0 &&
		    (c = attr(e, "class")) != NULL && names_boiler(c) == 2) {
			metas++;
			continue;
		}
		return 0;
	}
	return metas > 0 && labels > 0;
}

/* Does the link go to a tag or category page ("/tags/debian")? */
static int taxonomy_href(const char *h)
{
	static const char *const seg[] = {
		"/tags/", "/tag/", "/categories/", "/category/", NULL,
	};
	int k;

	for (k = 0; seg[k] != NULL; k++)
		if (strstr(h, seg[k]) != NULL)
			return 1;
	return 0;
}

/* A list of links to tag or category pages only (a post's tags at the
 * end of its text: Hugo's Ananke). */
static int taxonomy_list(const GumboNode *n)
{
	const GumboVector *ch = &n->v.element.children;
	size_t i, j, links = 0;
	const char *h;

	if (n->v.element.tag != GUMBO_TAG_UL && n->v.element.tag != GUMBO_TAG_OL)
		return 0;
	for (i = 0; i < ch->length; i++) {
		const GumboNode *li = ch->data[i], *a = NULL;

		if (li->type == GUMBO_NODE_WHITESPACE ||
		    li->type == GUMBO_NODE_COMMENT)
			continue;
		if (li->type != GUMBO_NODE_ELEMENT ||
		    li->v.element.tag != GUMBO_TAG_LI)
			return 0;
		for (j = 0; j < li->v.element.children.length; j++) {
			const GumboNode *c = li->v.element.children.data[j];

			if (c->type == GUMBO_NODE_WHITESPACE ||
			    c->type == GUMBO_NODE_COMMENT)
				continue;
			if (c->type != GUMBO_NODE_ELEMENT || a != NULL ||
			    c->v.element.tag != GUMBO_TAG_A)
				return 0;
			a = c;
		}
		if (a == NULL || (h = attr(a, "href")) == NULL ||
		    !taxonomy_href(h))
			return 0;
		links++;
	}
	return links > 0;
}

/*
 * What an element is: F_HIDDEN, F_BOILER (only if boiler is asked; with
 * F_CHROME unless it is an entry's meta line) or 0. flags: the context
 * (F_ARTICLE decides for header, footer, banner). An ancestor of the
 * content (k) is never boilerplate.
 */
static unsigned classify(const GumboNode *n, unsigned flags, int boiler,
			 const struct keep *k)
{
	struct eattrs a;
	unsigned r = 0;
	int nb, idb;

	if (hidden_tag(n))
		return F_HIDDEN;
	memset(&a, 0, sizeof(a));
	if (n->v.element.attributes.length > 0) {
		get_attrs(n, &a);
		if (a.hidden != NULL ||
		    (a.aria_hidden != NULL &&
		     strcasecmp(a.aria_hidden, "true") == 0) ||
		    style_hides(a.style) ||
		    (a.cls != NULL && (list_has(a.cls, hiding_classes) ||
				       tail_hides(a.cls))))
			return F_HIDDEN;
		/* the Apache manual's "¶" after each heading */
		if (n->v.element.tag == GUMBO_TAG_A && a.cls != NULL &&
		    has_token(a.cls, "permalink") && n->parent != NULL &&
		    n->parent->type == GUMBO_NODE_ELEMENT &&
		    n->parent->v.element.tag >= GUMBO_TAG_H1 &&
		    n->parent->v.element.tag <= GUMBO_TAG_H6)
			return F_HIDDEN;
	}
	/* nothing in a heading or a code block is chrome: syntax
	 * highlighters' classes name tokens ("token comment": Prism,
	 * "hljs-comment": highlight.js) */
	if (!boiler || (flags & (F_HEADING | F_PRE)) ||
	    n->v.element.tag == GUMBO_TAG_BODY ||
	    n->v.element.tag == GUMBO_TAG_HTML)
		return 0;
	nb = 0;
	/* an id names chrome as a whole token ("sidebar", "comments"), and
	 * not when a generator derived it from the heading's text
	 * ("credits", "comments"): tested last, it walks the heading */
	idb = a.id != NULL ?
	      (list_has(a.id, boiler_ids) ? 2 :
	       list_has(a.id, boiler_words) || list_has(a.id, boiler_tokens)) :
	      0;
	if (idb != 0 && id_from_heading(n, a.id))
		idb = 0;
	if (((n->v.element.tag == GUMBO_TAG_ASIDE ||
	      n->v.element.tag == GUMBO_TAG_DIV) && docutils_titled(n)) ||
	    (n->v.element.tag == GUMBO_TAG_P && a.cls != NULL &&
	     has_token(a.cls, "sidebar-title") && n->parent != NULL &&
	     n->parent->type == GUMBO_NODE_ELEMENT &&
	     docutils_titled(n->parent)))
		return 0;
	if ((nb = boiler_tag(n, flags)) != 0) {
		/* docutils writes footnotes, citations and topics (a
		 * document's abstract) as <aside class="footnote|topic"> */
		if (n->v.element.tag != GUMBO_TAG_ASIDE || a.cls == NULL ||
		    !list_has(a.cls, docutils_asides))
			r = nb == 1 ? F_BOILER | F_CHROME : F_BOILER;
	} else if (idb == 2) {
		r = F_BOILER | F_CHROME;
	} else if (a.role != NULL &&
		 (list_has(a.role, boiler_roles) ||
		  (!(flags & F_ARTICLE) && has_token(a.role, "banner"))))
		r = F_BOILER | F_CHROME;
	else if ((a.cls != NULL && (nb = names_boiler(a.cls)) != 0) ||
		 (idb != 0 && (nb = 1) != 0) ||
		 (a.component != NULL &&
		  (nb = names_boiler(a.component)) != 0))
		r = nb == 1 ? F_BOILER | F_CHROME : F_BOILER;
	else if (((flags & F_AHEADER) && header_meta(n) != 0) ||
		 labels_meta(n) || taxonomy_list(n))
		r = F_BOILER;	/* an entry's meta line */
	if (r != 0 && keeps(k, n))
		return 0;
	return r;
}

static int is_main(const GumboNode *n)
{
	const char *r;

	if (n->v.element.tag == GUMBO_TAG_MAIN)
		return 1;
	return n->v.element.attributes.length > 0 &&
	       (r = attr(n, "role")) != NULL && has_token(r, "main");
}

/*
 * An <a href> met by collect_text() in kept content: its target (resolved,
 * without fragment, http(s) only) and its anchor text go to t->links.
 * Links in navigation chrome never get here: collect_text() skips it.
 */
static int keep_link(GumboNode *a, int boiler, unsigned fl,
		     const struct keep *k, struct x_text *t)
{
	const char *href = attr(a, "href");
	struct x_text at;
	char *url, *anchor;
	int oom = 0, rc;

	if (href == NULL || t->links->n >= LB_DOC_MAX_LINKS)
		return 0;
	url = x_url_resolve(t->base, href, strlen(href), &oom);
	if (url == NULL)
		return oom ? -1 : 0;
	x_text_init(&at, LB_DOC_MAX_ANCHOR, 1);
	rc = collect_text(a, boiler, fl, k, &at);
	anchor = at.oom ? NULL : x_text_take(&at);
	x_text_release(&at);
	if (rc == 0 && !at.oom)
		rc = lb_doclinks_add(t->links, url, anchor, NULL);
	free(url);
	free(anchor);
	return rc < 0 || at.oom ? -1 : 0;
}

/* Text under root, skipping hidden content (and boilerplate if asked). */
static int collect_text(GumboNode *root, int boiler, unsigned flags0,
			const struct keep *k, struct x_text *t)
{
	struct stack s = {0};
	int rc = -1;

	if (push(&s, root, flags0) < 0)
		goto out;
	while (s.n > 0) {
		struct frame *f = &s.v[s.n - 1];
		const GumboVector *ch = children(f->node);
		GumboNode *c;
		unsigned fl;

		if (t->full)
			break;
		if (ch == NULL || f->idx >= ch->length) {
			if (f->flags & F_BLOCK)
				x_text_break(t);
			s.n--;
			continue;
		}
		c = ch->data[f->idx++];
		fl = f->flags & ~F_BLOCK;
		switch (c->type) {
		case GUMBO_NODE_TEXT:
		case GUMBO_NODE_CDATA:
		case GUMBO_NODE_WHITESPACE:
			t->lines = (fl & F_PRE) != 0;
			x_text_add(t, c->v.text.text, strlen(c->v.text.text));
			t->lines = 0;
			continue;
		case GUMBO_NODE_ELEMENT:
			break;
		default:
			continue;
		}
		if (classify(c, fl, boiler, k) != 0)
			continue;
		if (t->links != NULL && c->v.element.tag == GUMBO_TAG_A &&
		    keep_link(c, boiler, fl, k, t) < 0)
			goto out;
		switch (c->v.element.tag) {
		case GUMBO_TAG_BR:
			x_text_break(t);
			continue;
		case GUMBO_TAG_TD: case GUMBO_TAG_TH:
			x_text_add(t, " ", 1);
			break;
		case GUMBO_TAG_ARTICLE: case GUMBO_TAG_MAIN:
			fl |= F_ARTICLE;
			break;
		case GUMBO_TAG_PRE: case GUMBO_TAG_LISTING:
			fl |= F_PRE;
			break;
		case GUMBO_TAG_H1: case GUMBO_TAG_H2: case GUMBO_TAG_H3:
		case GUMBO_TAG_H4: case GUMBO_TAG_H5: case GUMBO_TAG_H6:
			fl |= F_HEADING;
			break;
		case GUMBO_TAG_HEADER:
			if (fl & F_ARTICLE)
				fl |= F_AHEADER;
			break;
		default:
			break;
		}
		if (is_block(c->v.element.tag)) {
			x_text_break(t);
			fl |= F_BLOCK;
		}
		if (push(&s, c, fl) < 0)
			goto out;
	}
	rc = 0;
out:
	free(s.v);
	if (rc < 0)
		t->oom = 1;
	return rc;
}

struct scan {
	struct x_ctx *x;
	struct keep keep;	/* ancestors of the content */
	struct x_jsonld *jsonld;
	GumboNode *body, *main, *article;
	int n_main, n_article;
	GumboNode *h1_boiler;	/* the first <h1> in boilerplate */
	GumboNode *h1_article;	/* the <article> of the title <h1> */
	GumboNode *h1_node;	/* the title <h1> */
	const char *site_name;	/* og:site_name, application-name */
	int have_h1, have_title;
	int micro_authors;	/* itemprop=author looked at */
	int bylines;		/* byline elements and <dt>s looked at */
	struct x_text micro[2];	/* itemprop=articleBody, itemprop=text */
	struct lb_doclinks micro_links[2];	/* their links */
	/* held back: Twitter cards rank below Open Graph */
	const char *tw_title, *tw_desc, *tw_image;
	const char *og_secure;	/* og:image:secure_url */
	const char *og_place[3];	/* locality, region, country */
};

static int robots_noindex(const char *content)
{
	char buf[256];
	size_t i, k = 0;

	for (i = 0; content[i] != '\0' && k + 1 < sizeof(buf); i++)
		buf[k++] = content[i] == ',' ? ' ' : content[i];
	buf[k] = '\0';
	return has_token(buf, "noindex") || has_token(buf, "none");
}

/*
 * The date of an "unavailable_after: DATE" directive in a robots meta
 * content, as written (it runs to the end: the date may hold a comma);
 * crawl/ reads it and compares it with the crawl time. NULL if none.
 */
static const char *robots_unavailable_after(const char *content)
{
	static const char key[] = "unavailable_after";
	const char *p;

	for (p = content; *p != '\0'; p++) {
		if (strncasecmp(p, key, sizeof(key) - 1) != 0)
			continue;
		p += sizeof(key) - 1;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != ':')
			return NULL;
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		return *p != '\0' ? p : NULL;
	}
	return NULL;
}

/* robots, googlebot, linkbot: any case, white space around ignored. */
static int robots_name(const char *key)
{
	static const char *const names[] = { "robots", "googlebot", "linkbot" };
	size_t i, n;

	while (*key == ' ' || *key == '\t' || *key == '\n' || *key == '\r')
		key++;
	n = strlen(key);
	while (n > 0 && (key[n - 1] == ' ' || key[n - 1] == '\t' ||
			 key[n - 1] == '\n' || key[n - 1] == '\r'))
		n--;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && strncasecmp(key, names[i], n) == 0)
			return 1;
	return 0;
}

static int is_one_of(const char *s, const char *const *l)
{
	for (; *l != NULL; l++)
		if (strcasecmp(s, *l) == 0)
			return 1;
	return 0;
}

static const char *const og_image_keys[] = {
	"og:image", "og:image:url", "og:image:secure_url", NULL,
};
static const char *const og_author_keys[] = {
	"article:author", "og:article:author", "book:author", NULL,
};
static const char *const og_date_keys[] = {
	"article:published_time", "og:article:published_time",
	"og:published_time", "video:release_date", "book:release_date", NULL,
};
static const char *const meta_desc_keys[] = {
	"description", "dc.description", "dcterms.description", NULL,
};
static const char *const meta_author_keys[] = {
	"author", "dc.creator", "dcterms.creator", "sailthru.author",
	"parsely-author", NULL,
};
static const char *const meta_date_keys[] = {
	"date", "pubdate", "publishdate", "publish-date", "publish_date",
	"published_time", "dc.date", "dc.date.issued", "dcterms.date",
	"dcterms.issued", "dcterms.created", "sailthru.date",
	"parsely-pub-date", "article.published", "original-publish-date",
	"datepublished", NULL,
};
static const char *const meta_lang_keys[] = {
	"language", "content-language", "dc.language", "dcterms.language",
	NULL,
};

static int author_ok(const char *s)
{
	return strncasecmp(s, "http://", 7) != 0 &&
	       strncasecmp(s, "https://", 8) != 0 && s[0] != '/';
}

static int on_meta(struct scan *sc, const GumboNode *n)
{
	struct x_ctx *x = sc->x;
	const char *key = attr(n, "property"), *c = attr(n, "content");
	const char *name = attr(n, "name"), *ip, *ua;

	if (c == NULL)
		return 0;
	if ((ip = attr(n, "itemprop")) != NULL) {
		if (strcasecmp(ip, "datePublished") == 0)
			x_offer(x, LB_F_published_time, LB_SRC_META, c, (size_t)-1);
		else if (strcasecmp(ip, "image") == 0)
			x_offer(x, LB_F_image_url, LB_SRC_META, c, (size_t)-1);
	}
	if (key == NULL || (name != NULL && strncasecmp(key, "og:", 3) != 0 &&
			    strncasecmp(key, "article:", 8) != 0))
		key = name;
	if (key == NULL) {
		key = attr(n, "http-equiv");
		if (key != NULL && strcasecmp(key, "content-language") == 0)
			x_offer(x, LB_F_language, LB_SRC_META, c, (size_t)-1);
		return 0;
	}
	if (robots_name(key)) {
		if (robots_noindex(c))
			x->noindex = 1;
		if (x->unavailable_after == NULL &&
		    (ua = robots_unavailable_after(c)) != NULL &&
		    (x->unavailable_after = strdup(ua)) == NULL)
			return x_oom(x);
	} else if (strcasecmp(key, "og:title") == 0) {
		x_offer(x, LB_F_title, LB_SRC_OPENGRAPH, c, (size_t)-1);
	} else if (strcasecmp(key, "og:description") == 0) {
		x_offer(x, LB_F_description, LB_SRC_OPENGRAPH, c, (size_t)-1);
	} else if (strcasecmp(key, "og:image:secure_url") == 0) {
		/* the https copy of og:image, preferred */
		if (sc->og_secure == NULL)
			sc->og_secure = c;
	} else if (is_one_of(key, og_image_keys)) {
		x_offer(x, LB_F_image_url, LB_SRC_OPENGRAPH, c, (size_t)-1);
	} else if (is_one_of(key, og_author_keys)) {
		if (author_ok(c))
			x_offer_item(x, LB_F_author, LB_SRC_OPENGRAPH, c,
				     (size_t)-1);
	} else if (strcasecmp(key, "article:section") == 0 ||
		   strcasecmp(key, "og:article:section") == 0) {
		x_offer_item(x, LB_F_category, LB_SRC_OPENGRAPH, c, (size_t)-1);
	} else if (is_one_of(key, og_date_keys)) {
		x_offer(x, LB_F_published_time, LB_SRC_OPENGRAPH, c, (size_t)-1);
	} else if (strcasecmp(key, "og:site_name") == 0 ||
		   strcasecmp(key, "application-name") == 0) {
		if (sc->site_name == NULL)
			sc->site_name = c;
	} else if (strcasecmp(key, "og:locale") == 0) {
		x_offer(x, LB_F_language, LB_SRC_OPENGRAPH, c, (size_t)-1);
	} else if (strcasecmp(key, "og:locality") == 0) {
		sc->og_place[0] = c;
	} else if (strcasecmp(key, "og:region") == 0) {
		sc->og_place[1] = c;
	} else if (strcasecmp(key, "og:country-name") == 0) {
		sc->og_place[2] = c;
	} else if (strcasecmp(key, "twitter:title") == 0) {
		if (sc->tw_title == NULL)
			sc->tw_title = c;
	} else if (strcasecmp(key, "twitter:description") == 0) {
		if (sc->tw_desc == NULL)
			sc->tw_desc = c;
	} else if (strcasecmp(key, "twitter:image") == 0 ||
		   strcasecmp(key, "twitter:image:src") == 0) {
		if (sc->tw_image == NULL)
			sc->tw_image = c;
	} else if (is_one_of(key, meta_desc_keys)) {
		x_offer(x, LB_F_description, LB_SRC_META, c, (size_t)-1);
	} else if (is_one_of(key, meta_author_keys)) {
		if (author_ok(c))
			x_offer_item(x, LB_F_author, LB_SRC_META, c, (size_t)-1);
	} else if (is_one_of(key, meta_date_keys)) {
		x_offer(x, LB_F_published_time, LB_SRC_META, c, (size_t)-1);
	} else if (is_one_of(key, meta_lang_keys)) {
		x_offer(x, LB_F_language, LB_SRC_META, c, (size_t)-1);
	} else if (strcasecmp(key, "geo.placename") == 0) {
		x_offer(x, LB_F_location, LB_SRC_META, c, (size_t)-1);
	} else if (strcasecmp(key, "category") == 0) {
		x_offer_item(x, LB_F_category, LB_SRC_META, c, (size_t)-1);
	} else if (strcasecmp(key, "thumbnail") == 0) {
		x_offer(x, LB_F_image_url, LB_SRC_META, c, (size_t)-1);
	}
	return 0;
}

static const char *script_text(const GumboNode *n)
{
	const GumboVector *ch = &n->v.element.children;
	const GumboNode *c;

	if (ch->length == 0)
		return NULL;
	c = ch->data[0];
	if (c->type != GUMBO_NODE_TEXT && c->type != GUMBO_NODE_WHITESPACE &&
	    c->type != GUMBO_NODE_CDATA)
		return NULL;
	return c->v.text.text;
}

static int is_jsonld(const char *type)
{
	size_t n;

	if (type == NULL)
		return 0;
	while (*type == ' ')
		type++;
	n = strlen("application/ld+json");
	return strncasecmp(type, "application/ld+json", n) == 0 &&
	       (type[n] == '\0' || type[n] == ';' || type[n] == ' ');
}

static int h1_text(struct scan *sc, GumboNode *n, char **out)
{
	struct x_text t;
	int rc;

	x_text_init(&t, X_MAX_FIELD, 1);
	rc = collect_text(n, 0, 0, NULL, &t);
	*out = x_text_take(&t);
	x_text_release(&t);
	if (rc < 0)
		return x_oom(sc->x);
	return 0;
}

/* Offers the text of n (a link) as an item of a list field, source body. */
static int offer_text_of(struct x_ctx *x, GumboNode *n, enum lb_doc_field f)
{
	struct x_text t;
	char *s;

	x_text_init(&t, X_MAX_FIELD, 1);
	collect_text(n, 0, 0, NULL, &t);
	if (t.oom) {
		x_text_release(&t);
		return x_oom(x);
	}
	s = x_text_take(&t);
	x_text_release(&t);
	if (s != NULL && strlen(s) <= 100 &&
	    (f != LB_F_author || strncasecmp(s, "http", 4) != 0))
		x_offer_item(x, f, LB_SRC_BODY, s, (size_t)-1);
	free(s);
	return x->failed ? -1 : 0;
}

/* Is the heading text the site's name (og:site_name, application-name)? */
static int is_site_name(const struct scan *sc, const char *h)
{
	char *name;
	int oom = 0, same;

	if (sc->site_name == NULL)
		return 0;
	if ((name = x_clean(sc->site_name, strlen(sc->site_name), X_MAX_FIELD,
			    &oom)) == NULL)
		return 0;
	same = strcasecmp(name, h) == 0;
	free(name);
	return same;
}

/* Parts of a class or id that name the site's logo or title. */
static const struct word logo_words[] = {
	W("logo"), W("brand"), W("branding"), W("sitename"), W("blogname"),
	W("sitetitle"), W("blogtitle"),
	{ NULL, 0 },
};
static const struct word logo_tokens[] = {
	W("site-title"), W("site-name"), W("blog-title"), W("blog-name"),
	W("site_title"), W("site_name"), W("title-area"),
	{ NULL, 0 },
};

/* Does the class or id list name a logo ("site-title", "header-logo")? */
static int names_logo(const char *list)
{
	const char *p = list, *e, *q, *qe;

	while (*p != '\0') {
		while (is_ws(*p))
			p++;
		for (e = p; *e != '\0' && !is_ws(*e); e++)
			;
		if (e > p && word_in(p, (size_t)(e - p), logo_tokens))
			return 1;
		for (q = p; q < e && e - p <= 64; q = qe + 1) {
			for (qe = q; qe < e && *qe != '-' && *qe != '_'; qe++)
				;
			if (qe > q && word_in(q, (size_t)(qe - q), logo_words))
				return 1;
			if (qe == e)
				break;
		}
		p = e;
	}
	return 0;
}

static int el_names_logo(const GumboNode *n)
{
	const char *v;

	if (n == NULL || n->type != GUMBO_NODE_ELEMENT ||
	    n->v.element.attributes.length == 0)
		return 0;
	return ((v = attr(n, "class")) != NULL && names_logo(v)) ||
	       ((v = attr(n, "id")) != NULL && names_logo(v));
}

/* Is the URL a site's home page ("/", "https://example.com/")? */
static int is_home_url(const char *u)
{
	const char *p = u;

	if (strncasecmp(p, "http://", 7) == 0)
		p += 7;
	else if (strncasecmp(p, "https://", 8) == 0)
		p += 8;
	else if (strncmp(p, "//", 2) == 0)
		p += 2;
	else
		return strcmp(u, "/") == 0 || strcmp(u, "./") == 0 ||
		       strcmp(u, "../") == 0;
	p += strcspn(p, "/?#");
	return *p == '\0' || strcmp(p, "/") == 0;
}

/*
 * Is the <h1> the site's logo or name rather than the page's title: a
 * class or id naming a logo or site title (on it, its parent or its
 * link), or a heading that is only a link to the home page?
 */
static int h1_is_logo(const GumboNode *h)
{
	const GumboVector *ch = &h->v.element.children;
	const GumboNode *only = NULL, *c;
	const char *v;
	size_t i;

	if (el_names_logo(h) || el_names_logo(h->parent))
		return 1;
	for (i = 0; i < ch->length; i++) {
		c = ch->data[i];
		if (c->type == GUMBO_NODE_WHITESPACE ||
		    c->type == GUMBO_NODE_COMMENT)
			continue;
		if (c->type != GUMBO_NODE_ELEMENT || only != NULL)
			return 0;
		only = c;
	}
	if (only == NULL || only->v.element.tag != GUMBO_TAG_A)
		return 0;
	return el_names_logo(only) ||
	       ((v = attr(only, "rel")) != NULL && has_token(v, "home")) ||
	       ((v = attr(only, "href")) != NULL && is_home_url(v));
}

/* The one-line text of n (NULL if empty or longer than max bytes). */
static char *short_text(struct x_ctx *x, GumboNode *n, size_t max)
{
	struct x_text t;
	char *s;

	x_text_init(&t, X_MAX_FIELD, 1);
	collect_text(n, 0, 0, NULL, &t);
	if (t.oom) {
		x_text_release(&t);
		x_oom(x);
		return NULL;
	}
	s = x_text_take(&t);
	x_text_release(&t);
	if (s != NULL && strlen(s) > max) {
		free(s);
		s = NULL;
	}
	return s;
}

/* The first descendant of n (not n) whose attribute a has the token w,
 * not looking into nested microdata items; breadth first, bounded. */
static GumboNode *find_desc(GumboNode *n, const char *a, const char *w)
{
	GumboNode *q[64];
	size_t head = 0, tail = 0, i;

	q[tail++] = n;
	while (head < tail) {
		GumboNode *p = q[head++];
		const GumboVector *ch = &p->v.element.children;

		for (i = 0; i < ch->length; i++) {
			GumboNode *c = ch->data[i];
			const char *v;

			if (c->type != GUMBO_NODE_ELEMENT || hidden_tag(c))
				continue;
			if ((v = attr(c, a)) != NULL && has_token(v, w))
				return c;
			if (tail < sizeof(q) / sizeof(q[0]) &&
			    attr(c, "itemscope") == NULL)
				q[tail++] = c;
		}
	}
	return NULL;
}

/* Is n inside a comment, review or answer item (microdata)? */
static int in_other_item(const GumboNode *n)
{
	static const char *const other[] = {
		"Comment", "Review", "Answer", "Question", NULL,
	};
	const char *t;
	int k, d;

	for (n = n->parent, d = 0; n != NULL && n->type == GUMBO_NODE_ELEMENT &&
	     d < X_MAX_DEPTH; n = n->parent, d++) {
		if ((t = attr(n, "itemtype")) == NULL)
			continue;
		for (k = 0; other[k] != NULL; k++)
			if (strstr(t, other[k]) != NULL)
				return 1;
		return 0;
	}
	return 0;
}

static const struct word byline_classes[] = {
	W("author"), W("p-author"), W("author-name"), W("post-author"),
	W("entry-author"), W("article-author"), W("byline-author"),
	W("author-link"), W("byline__author"),
	W("wp-block-post-author__name"), W("wp-block-post-author-name"),
	{ NULL, 0 },
};
/* Blocks around an entry's <time datetime> (WordPress block themes). */
static const struct word date_blocks[] = {
	W("wp-block-post-date"), W("posted-on"), W("entry-date"),
	W("post-date"), W("published"),
	{ NULL, 0 },
};

/* Offers "A, B and C" as the authors A, B, C (source body). */
static void offer_names(struct x_ctx *x, const char *s)
{
	const char *p = s, *e, *best;
	size_t skip;

	while (*p != '\0') {
		best = NULL;
		skip = 0;
		if ((e = strstr(p, ", ")) != NULL)
			best = e, skip = 2;
		if ((e = strstr(p, " and ")) != NULL && (best == NULL || e < best))
			best = e, skip = 5;
		if ((e = strstr(p, " & ")) != NULL && (best == NULL || e < best))
			best = e, skip = 3;
		if (best == NULL) {
			x_offer_item(x, LB_F_author, LB_SRC_BODY, p, (size_t)-1);
			break;
		}
		x_offer_item(x, LB_F_author, LB_SRC_BODY, p, (size_t)(best - p));
		p = best + skip;
	}
}

/* docutils' field list: <dt>Author:</dt><dd>A and B</dd>. */
static int on_dt(struct scan *sc, GumboNode *n)
{
	struct x_ctx *x = sc->x;
	GumboNode *dd = NULL;
	char *s;
	size_t i;

	if ((s = short_text(x, n, 16)) == NULL)
		return x->failed ? -1 : 0;
	if (strcasecmp(s, "Author:") != 0 && strcasecmp(s, "Authors:") != 0 &&
	    strcasecmp(s, "Author") != 0 && strcasecmp(s, "Authors") != 0) {
		free(s);
		return 0;
	}
	free(s);
	if (n->parent == NULL)
		return 0;
	for (i = n->index_within_parent + 1;
	     i < n->parent->v.element.children.length; i++) {
		dd = n->parent->v.element.children.data[i];
		if (dd->type == GUMBO_NODE_ELEMENT)
			break;
		dd = NULL;
	}
	if (dd == NULL || dd->v.element.tag != GUMBO_TAG_DD)
		return 0;
	if ((s = short_text(x, dd, 200)) != NULL)
		offer_names(x, s);
	free(s);
	return x->failed ? -1 : 0;
}

/*
 * Bylines outside the site's chrome: microdata itemprop=author (Person
 * name, at the rank of HTML metadata), itemprop=datePublished written as
 * text, and at body rank <a rel=author>, hCard "author vcard" (its "fn"),
 * author classes, and "Posted in" links rel=category.
 */
static int on_byline(struct scan *sc, GumboNode *n, const struct eattrs *ea)
{
	struct x_ctx *x = sc->x;
	const char *v, *c;
	GumboNode *m;
	char *s = NULL;

	if ((v = ea->itemprop) != NULL && !in_other_item(n)) {
		if (has_token(v, "author") && sc->micro_authors < 32) {
			sc->micro_authors++;
			m = attr(n, "itemscope") != NULL ?
				find_desc(n, "itemprop", "name") : n;
			if (m != NULL && (c = attr(m, "content")) != NULL)
				s = strdup(c);
			else if (m != NULL)
				s = short_text(x, m, 100);
			if (s != NULL && strncasecmp(s, "http", 4) != 0)
				x_offer_item(x, LB_F_author, LB_SRC_META, s,
					     (size_t)-1);
			free(s);
			s = NULL;
		} else if (has_token(v, "datePublished") &&
			   n->v.element.tag != GUMBO_TAG_META &&
			   n->v.element.tag != GUMBO_TAG_TIME &&
			   !x_has(x, LB_F_published_time, LB_SRC_META)) {
			if ((c = attr(n, "content")) != NULL ||
			    (c = attr(n, "datetime")) != NULL ||
			    (n->v.element.tag == GUMBO_TAG_ABBR &&
			     (c = attr(n, "title")) != NULL))
				x_offer(x, LB_F_published_time, LB_SRC_META, c,
					(size_t)-1);
			else if ((s = short_text(x, n, 64)) != NULL)
				x_offer(x, LB_F_published_time, LB_SRC_META, s,
					(size_t)-1);
			free(s);
			s = NULL;
		}
	}
	/* hAtom (Blogger): <abbr class="published" title="2016-04-16T..."> */
	if (n->v.element.tag == GUMBO_TAG_ABBR &&
	    (v = ea->cls) != NULL && has_token(v, "published") &&
	    (c = attr(n, "title")) != NULL)
		x_offer(x, LB_F_published_time, LB_SRC_BODY, c, (size_t)-1);
	if (n->v.element.tag == GUMBO_TAG_A && (v = ea->rel) != NULL &&
	    (has_token(v, "category") || has_token(v, "author") ||
	     (has_token(v, "tag") && n->parent != NULL &&
	      n->parent->type == GUMBO_NODE_ELEMENT &&
	      (c = attr(n->parent, "class")) != NULL &&
	      has_token(c, "taxonomy-category"))) &&
	    sc->bylines++ < 64) {
		/* WordPress: "Posted in <a rel="category tag">", block
		 * themes' <div class="taxonomy-category"><a rel="tag">,
		 * bylines: <a rel="author"> */
		if (offer_text_of(x, n, has_token(v, "author") ?
				  LB_F_author : LB_F_category) < 0)
			return -1;
	} else if ((v = ea->cls) != NULL && list_has(v, byline_classes)) {
		if (sc->bylines++ < 64) {
			m = find_desc(n, "class", "fn");
			if (m == NULL)
				m = find_desc(n, "itemprop", "name");
			if ((s = short_text(x, m != NULL ? m : n, 80)) != NULL &&
			    strncasecmp(s, "http", 4) != 0 &&
			    strpbrk(s, "0123456789@|") == NULL)
				offer_names(x, s);
			free(s);
		}
	}
	return x->failed ? -1 : 0;
}

/* The nearest <article> holding n, or NULL. */
static GumboNode *article_of(GumboNode *n)
{
	int d;

	for (d = 0; n != NULL && n->type == GUMBO_NODE_ELEMENT &&
	     d <= X_MAX_DEPTH + 8; n = n->parent, d++)
		if (n->v.element.tag == GUMBO_TAG_ARTICLE)
			return n;
	return NULL;
}

/* One element of the metadata walk; returns 1 to descend into it. */
static int on_element(struct scan *sc, GumboNode *n, unsigned *flags)
{
	struct x_ctx *x = sc->x;
	const char *v, *w;
	char *s;

	if (n->type == GUMBO_NODE_TEMPLATE)
		return 0;
	switch (n->v.element.tag) {
	case GUMBO_TAG_HTML:
		if (n->parent != NULL && n->parent->type == GUMBO_NODE_DOCUMENT &&
		    (v = attr(n, "lang")) != NULL)
			x_offer(x, LB_F_language, LB_SRC_META, v, (size_t)-1);
		else if (n->parent != NULL &&
			 n->parent->type == GUMBO_NODE_DOCUMENT &&
			 (v = attr(n, "xml:lang")) != NULL)
			x_offer(x, LB_F_language, LB_SRC_META, v, (size_t)-1);
		return 1;
	case GUMBO_TAG_HEAD:
		*flags |= F_HEAD;
		return 1;
	case GUMBO_TAG_BODY:
		if (sc->body == NULL)
			sc->body = n;
		break;
	case GUMBO_TAG_META:
		on_meta(sc, n);
		return 0;
	case GUMBO_TAG_LINK:
		if ((v = attr(n, "rel")) == NULL || attr(n, "href") == NULL)
			return 0;
		if ((*flags & F_HEAD) && has_token(v, "canonical"))
			x_offer(x, LB_F_url, LB_SRC_META, attr(n, "href"),
				(size_t)-1);
		else if (has_token(v, "image_src"))
			x_offer(x, LB_F_image_url, LB_SRC_META, attr(n, "href"),
				(size_t)-1);
		return 0;
	case GUMBO_TAG_TITLE:
		if (!sc->have_title && !(*flags & F_HIDDEN)) {
			struct x_text t;

			x_text_init(&t, X_MAX_FIELD, 1);
			collect_text(n, 0, 0, NULL, &t);
			s = x_text_take(&t);
			x_text_release(&t);
			if (s != NULL) {
				sc->have_title = 1;
				x_offer(x, LB_F_title, LB_SRC_META, s, (size_t)-1);
				free(s);
			}
		}
		return 0;
	case GUMBO_TAG_SCRIPT:
		if (is_jsonld(attr(n, "type")) && (v = script_text(n)) != NULL)
			x_jsonld_add(sc->jsonld, v, strlen(v));
		return 0;
	case GUMBO_TAG_STYLE:
	case GUMBO_TAG_SVG:
	case GUMBO_TAG_MATH:
		return 0;
	case GUMBO_TAG_TIME:
		if ((v = attr(n, "datetime")) == NULL)
			break;
		if (attr(n, "pubdate") != NULL ||
		    ((w = attr(n, "itemprop")) != NULL &&
		     has_token(w, "datePublished")))
			x_offer(x, LB_F_published_time, LB_SRC_META, v,
				(size_t)-1);
		else if (!(*flags & (F_HIDDEN | F_CHROME)) &&
			 (((w = attr(n, "class")) != NULL &&
			   (has_token(w, "published") ||
			    has_token(w, "entry-date") ||
			    has_token(w, "post-date"))) ||
			  (n->parent != NULL &&
			   n->parent->type == GUMBO_NODE_ELEMENT &&
			   (w = attr(n->parent, "class")) != NULL &&
			   list_has(w, date_blocks))))
			/* block themes: <div class="wp-block-post-date">
			 * <time datetime> */
			x_offer(x, LB_F_published_time, LB_SRC_BODY, v,
				(size_t)-1);
		break;
	default:
		break;
	}
	if (*flags & F_HEAD)
		return 1;
	/* "By Jane Doe" under an article's title (Hugo's Ananke) */
	if ((*flags & F_AHEADER) && !(*flags & (F_HIDDEN | F_CHROME)) &&
	    sc->bylines < 64 && header_meta(n) == 2) {
		sc->bylines++;
		if ((s = short_text(x, n, 80)) != NULL &&
		    strpbrk(s, "0123456789@|") == NULL)
			offer_names(x, s);
		free(s);
		if (x->failed)
			return -1;
	}
	if (!(*flags & F_HIDDEN))
		*flags |= classify(n, *flags, !(*flags & F_CHROME), &sc->keep);
	if (is_heading(n))
		*flags |= F_HEADING;
	else if (n->v.element.tag == GUMBO_TAG_PRE ||
		 n->v.element.tag == GUMBO_TAG_LISTING)
		*flags |= F_PRE;
	else if (n->v.element.tag == GUMBO_TAG_HEADER && (*flags & F_ARTICLE))
		*flags |= F_AHEADER;
	if (!(*flags & (F_HIDDEN | F_CHROME)) &&
	    n->v.element.attributes.length > 0) {
		struct eattrs ea;

		get_attrs(n, &ea);
		if ((ea.itemprop != NULL || ea.rel != NULL || ea.cls != NULL) &&
		    on_byline(sc, n, &ea) < 0)
			return -1;
	}
	if (!(*flags & (F_HIDDEN | F_CHROME)) &&
	    n->v.element.tag == GUMBO_TAG_DT && sc->bylines++ < 64 &&
	    on_dt(sc, n) < 0)
		return -1;
	if (!(*flags & (F_HIDDEN | F_BOILER))) {
		if (is_main(n)) {
			sc->n_main++;
			if (sc->main == NULL)
				sc->main = n;
			*flags |= F_ARTICLE;
		} else if (n->v.element.tag == GUMBO_TAG_ARTICLE) {
			sc->n_article++;
			if (sc->article == NULL)
				sc->article = n;
			*flags |= F_ARTICLE;
		}
	}
	if (n->v.element.tag == GUMBO_TAG_H1 && !sc->have_h1 &&
	    !(*flags & F_HIDDEN)) {
		if (*flags & F_BOILER) {
			if (sc->h1_boiler == NULL)
				sc->h1_boiler = n;
		} else {
			if (h1_text(sc, n, &s) < 0)
				return -1;
			if (s != NULL && (is_site_name(sc, s) ||
					  h1_is_logo(n))) {
				/* the site's name (a logo heading), not the
				 * page's title: only if nothing better comes */
				if (sc->h1_boiler == NULL)
					sc->h1_boiler = n;
			} else if (s != NULL) {
				sc->have_h1 = 1;
				x_offer(x, LB_F_title, LB_SRC_H1, s, (size_t)-1);
				sc->h1_article = article_of(n);
				sc->h1_node = n;
			}
			free(s);
		}
	}
	/* Microdata text; "text" of a comment in a comments section is not
	 * the page's, so boilerplate is skipped. */
	if (!(*flags & (F_HIDDEN | F_MICRO | F_BOILER)) &&
	    n->v.element.attributes.length > 0 &&
	    (v = attr(n, "itemprop")) != NULL) {
		int k = has_token(v, "articleBody") ? 0 :
			has_token(v, "text") ? 1 : -1;

		if (k >= 0) {
			*flags |= F_MICRO;
			if (collect_text(n, 1, *flags & F_ARTICLE,
					 &sc->keep, &sc->micro[k]) < 0)
				return x_oom(x);
			x_text_break(&sc->micro[k]);
		}
	}
	return 1;
}

static int scan(struct scan *sc, GumboNode *root)
{
	struct stack s = {0};
	int rc = -1, r;

	if (push(&s, root, 0) < 0)
		goto oom;
	while (s.n > 0) {
		struct frame *f = &s.v[s.n - 1];
		const GumboVector *ch = children(f->node);
		GumboNode *c;
		unsigned fl;

		if (ch == NULL || f->idx >= ch->length) {
			s.n--;
			continue;
		}
		c = ch->data[f->idx++];
		if (c->type != GUMBO_NODE_ELEMENT)
			continue;
		fl = f->flags;
		if ((r = on_element(sc, c, &fl)) < 0)
			goto out;
		if (r > 0 && push(&s, c, fl) < 0)
			goto oom;
	}
	rc = 0;
	goto out;
oom:
	x_oom(sc->x);
out:
	free(s.v);
	return rc;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const GumboNode *const *)a;
	uintptr_t y = (uintptr_t)*(const GumboNode *const *)b;

	return x < y ? -1 : x > y;
}

/* Is the element page chrome by its tag or ARIA role alone? */
static int tag_chrome(const GumboNode *n, unsigned flags)
{
	const char *r;

	if (boiler_tag(n, flags) == 1)
		return 1;
	return n->v.element.attributes.length > 0 &&
	       (r = attr(n, "role")) != NULL &&
	       (list_has(r, boiler_roles) ||
		(!(flags & F_ARTICLE) && has_token(r, "banner")));
}

static int add_ancestors(struct keep *k, size_t *alloc, GumboNode *c)
{
	GumboNode *p;

	for (p = c; p != NULL && p->type == GUMBO_NODE_ELEMENT; p = p->parent) {
		if (k->n == *alloc) {
			size_t a = *alloc ? *alloc * 2 : 64;
			const GumboNode **v = realloc(k->v, a * sizeof(*v));

			if (v == NULL)
				return -1;
			k->v = v;
			*alloc = a;
		}
		k->v[k->n++] = p;
	}
	return 0;
}

/*
 * Fills sc->keep with the content anchors and their ancestors: the first
 * X_MAX_ANCHORS <main>, role=main and itemprop=articleBody elements (not
 * itemprop=text, which comments carry too), and the title <h1>: the
 * first visible, non-empty <h1> outside page chrome (by tag, role or
 * class, but an <article>'s or <main>'s classes do not count) that is
 * not the site's logo or name. These are then never boilerplate
 * (Substack's <article class="newsletter-post">, WordPress's
 * <body class="ast-right-sidebar">). One walk; parent chains are at most
 * X_MAX_DEPTH long.
 */
/*
 * Is the <h1> outside hidden content and page chrome? Its ancestors are
 * judged from the top, as the walks do; an <article>'s or <main>'s own
 * classes do not count.
 */
static int h1_in_content(GumboNode *h)
{
	GumboNode *path[X_MAX_DEPTH + 64], *p;
	size_t n = 0;
	unsigned fl = 0, cl;
	int art;

	for (p = h; p != NULL && p->type == GUMBO_NODE_ELEMENT &&
	     n < sizeof(path) / sizeof(path[0]); p = p->parent)
		path[n++] = p;
	while (n > 0) {
		p = path[--n];
		if (p->v.element.tag == GUMBO_TAG_HEAD)
			return 0;
		cl = classify(p, fl, 1, NULL);
		if (cl & F_HIDDEN)
			return 0;
		art = p->v.element.tag == GUMBO_TAG_ARTICLE || is_main(p);
		if (art ? tag_chrome(p, fl) : (cl & F_CHROME) != 0)
			return 0;
		if (art)
			fl |= F_ARTICLE;
	}
	return 1;
}

static int find_keep(struct scan *sc, GumboNode *root)
{
	struct keep *k = &sc->keep;
	struct stack s = {0};
	size_t anchors = 0, alloc = 0, i, j;
	const char *ip, *site = NULL, *key;
	int rc = -1, h1 = 0, tries = 0;
	char *t;

	if (push(&s, root, 0) < 0)
		goto out;
	while (s.n > 0 && anchors < X_MAX_ANCHORS) {
		struct frame *f = &s.v[s.n - 1];
		const GumboVector *ch = children(f->node);
		GumboNode *c;

		if (ch == NULL || f->idx >= ch->length) {
			s.n--;
			continue;
		}
		c = ch->data[f->idx++];
		if (c->type != GUMBO_NODE_ELEMENT)
			continue;
		if (c->v.element.tag == GUMBO_TAG_META) {
			key = attr(c, "property");
			if (key == NULL)
				key = attr(c, "name");
			if (site == NULL && key != NULL &&
			    (strcasecmp(key, "og:site_name") == 0 ||
			     strcasecmp(key, "application-name") == 0))
				site = attr(c, "content");
			continue;
		}
		if (hidden_tag(c) && c->v.element.tag != GUMBO_TAG_HEAD)
			continue;
		if (is_main(c) || (c->v.element.attributes.length > 0 &&
				   (ip = attr(c, "itemprop")) != NULL &&
				   has_token(ip, "articleBody"))) {
			anchors++;
			if (add_ancestors(k, &alloc, c) < 0)
				goto out;
		}
		if (c->v.element.tag == GUMBO_TAG_H1 && !h1 && tries < 16) {
			tries++;
			if (!h1_is_logo(c) && h1_in_content(c)) {
				t = short_text(sc->x, c, X_MAX_FIELD);
				if (t == NULL && sc->x->failed)
					goto out;
				sc->site_name = site;
				if (t != NULL && !is_site_name(sc, t)) {
					h1 = 1;
					anchors++;
					if (add_ancestors(k, &alloc, c) < 0) {
						free(t);
						goto out;
					}
				}
				sc->site_name = NULL;
				free(t);
			}
			continue;
		}
		if (push(&s, c, 0) < 0)
			goto out;
	}
	if (k->n > 1) {
		qsort(k->v, k->n, sizeof(*k->v), cmp_ptr);
		for (i = 1, j = 1; i < k->n; i++)
			if (k->v[i] != k->v[j - 1])
				k->v[j++] = k->v[i];
		k->n = j;
	}
	rc = 0;
out:
	free(s.v);
	return rc;
}

/* <base href> (in <head>) changes what relative URLs mean. */
static int find_base(GumboNode *doc, const char *page_url, struct x_ctx *x)
{
	const GumboVector *ch = &doc->v.document.children, *hc;
	size_t i, k;
	int oom = 0;

	for (i = 0; i < ch->length; i++) {
		GumboNode *html = ch->data[i];

		if (html->type != GUMBO_NODE_ELEMENT ||
		    html->v.element.tag != GUMBO_TAG_HTML)
			continue;
		for (k = 0; k < html->v.element.children.length; k++) {
			GumboNode *head = html->v.element.children.data[k];
			size_t m;

			if (head->type != GUMBO_NODE_ELEMENT ||
			    head->v.element.tag != GUMBO_TAG_HEAD)
				continue;
			hc = &head->v.element.children;
			for (m = 0; m < hc->length; m++) {
				GumboNode *b = hc->data[m];
				const char *href;

				if (b->type != GUMBO_NODE_ELEMENT ||
				    b->v.element.tag != GUMBO_TAG_BASE ||
				    (href = attr(b, "href")) == NULL)
					continue;
				x->base_own = x_url_resolve(page_url, href,
							    (size_t)-1, &oom);
				if (oom)
					return x_oom(x);
				if (x->base_own != NULL)
					x->base = x->base_own;
				return 0;
			}
		}
	}
	return 0;
}

/* The text of root without hidden content and boilerplate; -1 on out of
 * memory. links: where the text's links go (released first), or NULL. */
static int main_text(struct scan *sc, GumboNode *root, unsigned fl,
		     char **out, struct lb_doclinks *links)
{
	struct x_text t;

	x_text_init(&t, X_MAX_TEXT, 0);
	if (links != NULL) {
		lb_doclinks_release(links);
		t.links = links;
		t.base = sc->x->base;
	}
	collect_text(root, 1, fl, &sc->keep, &t);
	*out = t.oom ? NULL : x_text_take(&t);
	x_text_release(&t);
	return t.oom ? x_oom(sc->x) : 0;
}

static int is_under(const GumboNode *n, const GumboNode *root)
{
	int d;

	for (d = 0; n != NULL && d <= X_MAX_DEPTH + 8; n = n->parent, d++)
		if (n == root)
			return 1;
	return 0;
}

/*
 * A page without <main> or <article>: the smallest block around the title
 * <h1> (at most 12 levels up) that holds half of the body's words, so
 * that unmarked navigation and footers around it are left out. *out is
 * NULL if none does.
 */
static int h1_block(struct scan *sc, size_t words, char **out,
		    struct lb_doclinks *links)
{
	GumboNode *a;
	char *t;
	int lvl;

	*out = NULL;
	for (a = sc->h1_node->parent, lvl = 0;
	     a != NULL && a != sc->body && a->type == GUMBO_NODE_ELEMENT &&
	     lvl < 12; a = a->parent, lvl++) {
		if (main_text(sc, a, 0, &t, links) < 0)
			return -1;
		if (t != NULL && 2 * x_word_count(t) >= words) {
			*out = t;
			return 0;
		}
		free(t);
	}
	return 0;
}

/*
 * The body text: the page's main element (the only <main>, else the only
 * <article>, else <body>) without boilerplate. When the title <h1> is in
 * an <article> inside it (a news page whose <main> also holds "more on
 * this story" cards), that article, if it holds at least a third of the
 * words: a short article element (a teaser, a header card) is not the
 * page.
 */
/* Separators between a page's title and its site's name. */
static const char *const title_seps[] = {
	" | ", " - ", " \xe2\x80\x93 ", " \xe2\x80\x94 ", " \xc2\xab ",
	" \xc2\xbb ", " :: ", " \xc2\xb7 ", " \xe2\x80\xa2 ", ": ", " / ",
	NULL,
};

/* Cuts "SEP site" from the end of title (in place), when something is
 * left. Not "site SEP" from the start: that is how WordPress names the
 * home page ("Site - Tagline"). */
static void strip_site(char *title, const char *site)
{
	size_t tl = strlen(title), sl = strlen(site), pl;
	int k;

	if (sl == 0 || tl <= sl)
		return;
	for (k = 0; title_seps[k] != NULL; k++) {
		pl = strlen(title_seps[k]);
		if (tl > sl + pl &&
		    strcasecmp(title + tl - sl, site) == 0 &&
		    strncmp(title + tl - sl - pl, title_seps[k], pl) == 0) {
			title[tl - sl - pl] = '\0';
			return;
		}
	}
}

/* Is title h, or h followed by a separator ("Post - Site")? */
static int title_starts(const char *title, const char *h)
{
	size_t hl = strlen(h), pl;
	int k;

	if (title == NULL || strncasecmp(title, h, hl) != 0)
		return 0;
	if (title[hl] == '\0')
		return 1;
	for (k = 0; title_seps[k] != NULL; k++) {
		pl = strlen(title_seps[k]);
		if (strncmp(title + hl, title_seps[k], pl) == 0)
			return 1;
	}
	return 0;
}

/* Cuts the site's name (og:site_name, application-name, the header's
 * <h1>) from the titles of JSON-LD, Open Graph and <title>. */
static int strip_site_names(struct scan *sc, const char *logo)
{
	struct x_ctx *x = sc->x;
	char *site = NULL;
	int oom = 0, src;

	if (sc->site_name != NULL &&
	    (site = x_clean(sc->site_name, strlen(sc->site_name), X_MAX_FIELD,
			    &oom)) == NULL && oom)
		return x_oom(x);
	for (src = LB_SRC_JSONLD; src <= LB_SRC_META; src++) {
		char *t = x->str[LB_F_title][src];

		if (t == NULL)
			continue;
		if (site != NULL)
			strip_site(t, site);
		if (logo != NULL)
			strip_site(t, logo);
	}
	free(site);
	return 0;
}

static int body_text(struct scan *sc)
{
	struct x_text t;
	GumboNode *root, *art = NULL;
	char *s = NULL, *a = NULL;
	struct lb_doclinks ls = { NULL, 0 }, la = { NULL, 0 };
	unsigned fl = 0;
	int rc = -1;

	if (sc->body == NULL)
		return 0;
	root = sc->body;
	if (sc->n_main == 1)
		root = sc->main, fl = F_ARTICLE;
	else if (sc->n_article == 1)
		art = sc->article;
	if (sc->h1_article != NULL && is_under(sc->h1_article, root))
		art = sc->h1_article;
	if (main_text(sc, root, fl, &s, &ls) < 0)
		goto out;
	if (art != NULL && art != root && s != NULL) {
		if (main_text(sc, art, F_ARTICLE, &a, &la) < 0)
			goto out;
		if (a != NULL && 3 * x_word_count(a) >= x_word_count(s)) {
			free(s);
			s = a;
			root = art;
			lb_doclinks_release(&ls);
			ls = la;
			memset(&la, 0, sizeof(la));
		} else {
			free(a);
		}
		a = NULL;
	}
	if (root == sc->body && sc->h1_node != NULL && s != NULL) {
		if (h1_block(sc, x_word_count(s), &a, &la) < 0)
			goto out;
		if (a != NULL) {
			free(s);
			s = a;
			a = NULL;
			lb_doclinks_release(&ls);
			ls = la;
			memset(&la, 0, sizeof(la));
		}
	}
	if (s == NULL) {
		/* Everything looked like boilerplate: take it all (its
		 * links are the navigation's: none kept) */
		lb_doclinks_release(&ls);
		x_text_init(&t, X_MAX_TEXT, 0);
		collect_text(sc->body, 0, 0, NULL, &t);
		if (t.oom) {
			x_text_release(&t);
			x_oom(sc->x);
			goto out;
		}
		s = x_text_take(&t);
		x_text_release(&t);
	}
	x_offer_text(sc->x, LB_SRC_BODY, s);
	s = NULL;
	lb_doclinks_release(&sc->x->links);
	sc->x->links = ls;
	memset(&ls, 0, sizeof(ls));
	rc = 0;
out:
	free(s);
	free(a);
	lb_doclinks_release(&ls);
	lb_doclinks_release(&la);
	return rc;
}

/*
 * gumbo's memory, one arena per parse. libgumbo 0.10.1 loses a token's
 * strings on some malformed input: `<noscript><!doctype` at the end of a
 * page leaks the doctype's name and identifiers (found by the extract
 * fuzz target; tests/data/extract/0103-gumbo-doctype-leak). A page that
 * cannot crash a night must not leak a little on every hostile page of
 * it either, and the library has no fix to take. So gumbo allocates from
 * a pool that is let go whole when the parse is done.
 *
 * The pool is an arena: small blocks are cut from chunks (64 KiB, then
 * doubling) and gumbo's frees of them do nothing; the chunks go at the
 * end. A page makes ~150 small blocks, and in a night of a thousand
 * crawling threads a malloc and a free each were ~6 % of the crawl's CPU
 * (glibc's arenas are shared by the threads). Blocks of GPOOL_BIG bytes
 * or more (long texts' growing buffers) and every block once the chunks
 * hold GPOOL_ARENA_MAX are their own malloc, linked into a list that
 * gumbo's frees unlink, so a page whose parse allocates and frees a lot
 * (a 10 MiB body) stays bounded as with malloc. Each block has a 16-byte
 * header saying which kind it is. First chunks are kept for the next
 * parse (GPOOL_CACHE of them, any thread): a 64 KiB malloc a page made
 * glibc consolidate its free lists each time. Under AddressSanitizer the
 * arena's free space, the headers and the 16 bytes after each block are
 * poisoned and a freed block is poisoned again: overflows and uses after
 * free are still seen.
 */
#if defined(__SANITIZE_ADDRESS__)
#define GPOOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPOOL_ASAN 1
#endif
#endif
#ifdef GPOOL_ASAN
#include <sanitizer/asan_interface.h>
#define GPOOL_REDZONE 16
#else
#define ASAN_POISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#define GPOOL_REDZONE 0
#endif
#define GPOOL_CHUNK ((size_t)64 << 10)
#define GPOOL_BIG ((size_t)8 << 10)
#define GPOOL_ARENA_MAX ((size_t)64 << 20)
#define GPOOL_CACHE 16	/* first chunks kept for the next parses */

struct gblock {
	struct gblock *prev;	/* NULL: cut from a chunk */
	union {
		struct gblock *next;	/* malloc'd: the pool's list */
		size_t size;		/* in a chunk: the size asked */
	} u;
};
_Static_assert(sizeof(struct gblock) == 16, "keeps malloc's alignment");

struct gchunk {
	struct gchunk *next;
	size_t size;		/* bytes after this header */
};
_Static_assert(sizeof(struct gchunk) == 16, "keeps malloc's alignment");

struct gpool {
	struct gblock list;	/* the malloc'd blocks, circular */
	struct gchunk *chunks;	/* newest first */
	char *cur, *end;	/* the newest chunk's free space */
	size_t arena;		/* bytes of all chunks */
};

static void gpool_init(struct gpool *p)
{
	memset(p, 0, sizeof(*p));
	p->list.prev = p->list.u.next = &p->list;
}

/* A block of its own, on the list. */
static void *gpool_malloc(struct gpool *p, size_t size)
{
	struct gblock *b;

	if (size > SIZE_MAX - sizeof(*b) ||
	    (b = malloc(sizeof(*b) + size)) == NULL)
		return NULL;	/* what gumbo's default, malloc, would give */
	b->prev = &p->list;
	b->u.next = p->list.u.next;
	p->list.u.next->prev = b;
	p->list.u.next = b;
	return b + 1;
}

static pthread_mutex_t gcache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gchunk *gcache[GPOOL_CACHE];	/* gcache_lock */
static size_t n_gcache;				/* gcache_lock */

/* A new chunk with room for need bytes; 0, or -1 past the budget. */
static int gpool_grow(struct gpool *p, size_t need)
{
	size_t size = p->arena > GPOOL_CHUNK ? p->arena : GPOOL_CHUNK;
	struct gchunk *c = NULL;

	if (size < need)
		size = need;
	if (p->arena + size > GPOOL_ARENA_MAX)
		return -1;
	if (size == GPOOL_CHUNK) {
		pthread_mutex_lock(&gcache_lock);
		if (n_gcache > 0)
			c = gcache[--n_gcache];
		pthread_mutex_unlock(&gcache_lock);
	}
	if (c == NULL && (c = malloc(sizeof(*c) + size)) == NULL)
		return -1;
	c->next = p->chunks;
	c->size = size;
	p->chunks = c;
	p->arena += size;
	p->cur = (char *)(c + 1);
	p->end = p->cur + size;
	ASAN_POISON_MEMORY_REGION(p->cur, size);
	return 0;
}

static void *gpool_alloc(void *userdata, size_t size)
{
	struct gpool *p = userdata;
	struct gblock *b;
	size_t need;

	if (size >= GPOOL_BIG)
		return gpool_malloc(p, size);
	need = sizeof(*b) + ((size + 15) & ~(size_t)15) + GPOOL_REDZONE;
	if ((size_t)(p->end - p->cur) < need && gpool_grow(p, need) < 0)
		return gpool_malloc(p, size);
	b = (struct gblock *)p->cur;
	p->cur += need;
	ASAN_UNPOISON_MEMORY_REGION(b, sizeof(*b) + size);
	b->prev = NULL;
	b->u.size = size;
	ASAN_POISON_MEMORY_REGION(b, sizeof(*b));
	return b + 1;
}

static void gpool_free(void *userdata, void *ptr)
{
	struct gblock *b;

	(void)userdata;
	if (ptr == NULL)
		return;
	b = (struct gblock *)ptr - 1;
	ASAN_UNPOISON_MEMORY_REGION(b, sizeof(*b));
	if (b->prev == NULL) {	/* in a chunk: goes with it */
		ASAN_POISON_MEMORY_REGION(b, sizeof(*b) + b->u.size);
		return;
	}
	b->prev->u.next = b->u.next;
	b->u.next->prev = b->prev;
	free(b);
}

/* Frees what gumbo did not, and the chunks. */
static void gpool_release(struct gpool *p)
{
	struct gchunk *c, *next;

	while (p->list.u.next != &p->list)
		gpool_free(p, p->list.u.next + 1);
	for (c = p->chunks; c != NULL; c = next) {
		next = c->next;
		if (c->size == GPOOL_CHUNK) {
			pthread_mutex_lock(&gcache_lock);
			if (n_gcache < GPOOL_CACHE) {
				gcache[n_gcache++] = c;
				c = NULL;
			}
			pthread_mutex_unlock(&gcache_lock);
		}
		if (c != NULL) {
			ASAN_UNPOISON_MEMORY_REGION(c + 1, c->size);
			free(c);
		}
	}
	gpool_init(p);
}

int x_html_scan(const char *utf8, size_t len, const char *page_url,
		struct x_ctx *x)
{
	GumboOptions opts = kGumboDefaultOptions;
	GumboOutput *out = NULL;
	struct gpool pool;
	struct x_pack pk;
	struct scan sc;
	char *s, *place = NULL;
	int rc = -1, k;

	memset(&pk, 0, sizeof(pk));
	gpool_init(&pool);
	opts.allocator = gpool_alloc;
	opts.deallocator = gpool_free;
	opts.userdata = &pool;
	memset(&sc, 0, sizeof(sc));
	sc.x = x;
	x_text_init(&sc.micro[0], X_MAX_TEXT, 0);
	x_text_init(&sc.micro[1], X_MAX_TEXT, 0);
	if ((sc.jsonld = x_jsonld_new()) == NULL) {
		x_oom(x);
		goto out;
	}
	opts.max_errors = 0;
	if (x_pack_html(utf8, len, &pk) < 0) {
		x_oom(x);
		goto out;
	}
	out = pk.html != NULL ?
		gumbo_parse_with_options(&opts, pk.html, pk.len) :
		gumbo_parse_with_options(&opts, utf8, len);
	if (out == NULL || x_pack_unpack(&pk, &opts, out->document) < 0) {
		x_oom(x);
		goto out;
	}
	if (find_base(out->document, page_url, x) < 0)
		goto out;
	for (k = 0; k < 2; k++) {
		sc.micro[k].links = &sc.micro_links[k];
		sc.micro[k].base = x->base;
	}
	if (find_keep(&sc, out->document) < 0) {
		x_oom(x);
		goto out;
	}
	if (scan(&sc, out->document) < 0)
		goto out;
	if (x_jsonld_offer(sc.jsonld, x, x->str[LB_F_url][LB_SRC_META] != NULL ?
			   x->str[LB_F_url][LB_SRC_META] : page_url) < 0)
		goto out;
	x_offer(x, LB_F_title, LB_SRC_OPENGRAPH, sc.tw_title, (size_t)-1);
	x_offer(x, LB_F_description, LB_SRC_OPENGRAPH, sc.tw_desc, (size_t)-1);
	if (sc.og_secure != NULL &&
	    (x->str[LB_F_image_url][LB_SRC_OPENGRAPH] == NULL ||
	     strncmp(x->str[LB_F_image_url][LB_SRC_OPENGRAPH], "http:", 5) == 0)) {
		/* og:image:secure_url, when valid, replaces an http og:image */
		char *old = x->str[LB_F_image_url][LB_SRC_OPENGRAPH];

		x->str[LB_F_image_url][LB_SRC_OPENGRAPH] = NULL;
		if (x_offer(x, LB_F_image_url, LB_SRC_OPENGRAPH, sc.og_secure,
			    (size_t)-1) > 0 || old == NULL) {
			free(old);
		} else {
			x->str[LB_F_image_url][LB_SRC_OPENGRAPH] = old;
		}
		if (x->failed)
			goto out;
	}
	x_offer(x, LB_F_image_url, LB_SRC_OPENGRAPH, sc.tw_image, (size_t)-1);
	if (sc.og_place[0] || sc.og_place[1] || sc.og_place[2]) {
		struct lb_buf b;

		lb_buf_init(&b, 3 * X_MAX_FIELD);
		for (k = 0; k < 3; k++)
			if (sc.og_place[k] != NULL && sc.og_place[k][0] != '\0')
				lb_buf_printf(&b, NULL, "%s%s", b.len ? ", " : "",
					      sc.og_place[k]);
		place = b.data;
		x_offer(x, LB_F_location, LB_SRC_OPENGRAPH, place, (size_t)-1);
	}
	/* An <h1> in the page header or naming the site is the title only
	 * when no source has one: it ranks last. Its text, and the site's
	 * declared name, are cut from the other titles ("Post - Site"). */
	s = NULL;
	if (sc.h1_boiler != NULL && h1_text(&sc, sc.h1_boiler, &s) < 0)
		goto out;
	if (!sc.have_h1 && s != NULL && !h1_is_logo(sc.h1_boiler) &&
	    !is_site_name(&sc, s) &&
	    title_starts(x->str[LB_F_title][LB_SRC_META], s)) {
		/* a page header's <h1> (Clean Blog's masthead) that <title>
		 * names first ("Post - Site") is the page's title */
		x_offer(x, LB_F_title, LB_SRC_H1, s, (size_t)-1);
		sc.have_h1 = 1;
		free(s);
		s = NULL;
	}
	if (strip_site_names(&sc, s) < 0) {
		free(s);
		goto out;
	}
	if (!sc.have_h1 && s != NULL)
		x_offer(x, LB_F_title, LB_SRC_BODY, s, (size_t)-1);
	free(s);
	/* articleBody, else text */
	for (k = 0; k < 2; k++) {
		char *mt;

		if (sc.micro[k].oom) {
			x_oom(x);
			goto out;
		}
		mt = x_text_take(&sc.micro[k]);
		if (mt != NULL && x->text[LB_SRC_BODY] == NULL) {
			/* the text taken: its links are the page's */
			lb_doclinks_release(&x->links);
			x->links = sc.micro_links[k];
			memset(&sc.micro_links[k], 0,
			       sizeof(sc.micro_links[k]));
		}
		x_offer_text(x, LB_SRC_BODY, mt);
	}
	if (x->text[LB_SRC_JSONLD] == NULL && x->text[LB_SRC_BODY] == NULL &&
	    body_text(&sc) < 0)
		goto out;
	rc = x->failed ? -1 : 0;
out:
	free(place);
	x_text_release(&sc.micro[0]);
	x_text_release(&sc.micro[1]);
	lb_doclinks_release(&sc.micro_links[0]);
	lb_doclinks_release(&sc.micro_links[1]);
	x_jsonld_free(sc.jsonld);
	free(sc.keep.v);
	if (out != NULL)
		gumbo_destroy_output(&opts, out);
	gpool_release(&pool);
	x_pack_release(&pk);	/* after the tree: original_tag points in */
	return rc;
}
