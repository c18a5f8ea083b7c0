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
 * menu, and classes or ids naming menus, sidebars, widgets, breadcrumbs,
 * comments, share buttons, cookie banners, related posts, newsletters.
 * If that leaves nothing, the whole <body> without hidden content.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gumbo.h>

#include "extract_int.h"

/* Frame flags. */
#define F_HIDDEN	0x01	/* inside hidden content */
#define F_BOILER	0x02	/* inside boilerplate */
#define F_ARTICLE	0x04	/* inside <article> or <main> */
#define F_MICRO		0x08	/* inside itemprop=articleBody|text */
#define F_BLOCK		0x10	/* this element is a block */
#define F_HEAD		0x20	/* inside <head> */

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

static const char *const hiding_classes[] = {
	"hidden", "d-none", "sr-only", "visually-hidden", "screen-reader-text",
	"screen-reader-only", "is-hidden", "u-hidden", "invisible", "hide",
	"element-invisible", "a11y-hidden", "headerlink", "hash-link",
	"anchorjs-link", NULL,
};

static int is_hidden(const GumboNode *n)
{
	const char *v, *const *c;

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
		break;
	}
	if (n->type == GUMBO_NODE_TEMPLATE)
		return 1;
	if (n->v.element.attributes.length == 0)
		return 0;
	if (attr(n, "hidden") != NULL)
		return 1;
	if ((v = attr(n, "aria-hidden")) != NULL && strcasecmp(v, "true") == 0)
		return 1;
	if (style_hides(attr(n, "style")))
		return 1;
	if ((v = attr(n, "class")) != NULL)
		for (c = hiding_classes; *c != NULL; c++)
			if (has_token(v, *c))
				return 1;
	return 0;
}

/* Words that mark boilerplate in a class or id, and words that veto it
 * ("content-sidebar-wrap" wraps the content). */
static const char *const boiler_words[] = {
	"nav", "navbar", "navigation", "menu", "menubar", "breadcrumb",
	"breadcrumbs", "sidebar", "widget", "widgets", "footer", "cookie",
	"cookies", "consent", "gdpr", "share", "sharing", "sharedaddy",
	"social", "related", "comments", "comment", "respond", "newsletter",
	"subscribe", "popup", "modal", "advert", "advertisement", "ads", "ad",
	"sponsored", "promo", "skip", "pagination", "pager", "masthead",
	"toolbar", "tagcloud", "relatedposts", "meta", "byline", NULL,
};
static const char *const veto_words[] = {
	"content", "article", "body", "wrap", "wrapper", "container",
	"layout", NULL,
};

static int word_in(const char *p, size_t n, const char *const *l)
{
	for (; *l != NULL; l++)
		if (strlen(*l) == n && strncasecmp(p, *l, n) == 0)
			return 1;
	return 0;
}

/* Does one token of the class or id list name boilerplate? */
static int names_boiler(const char *list)
{
	const char *p = list, *e, *q, *qe;
	int boiler, veto;

	while (*p != '\0') {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		for (e = p; *e != '\0' && *e != ' ' && *e != '\t' &&
			    *e != '\n' && *e != '\r'; e++)
			;
		if (e - p > 64) {
			p = e;
			continue;
		}
		boiler = veto = 0;
		for (q = p; q < e; q = qe + 1) {
			for (qe = q; qe < e && *qe != '-' && *qe != '_'; qe++)
				;
			if (word_in(q, (size_t)(qe - q), boiler_words))
				boiler = 1;
			if (word_in(q, (size_t)(qe - q), veto_words))
				veto = 1;
			if (qe == e)
				break;
		}
		if (boiler && !veto)
			return 1;
		p = e;
	}
	return 0;
}

static int is_boiler(const GumboNode *n, unsigned flags)
{
	const char *v;

	switch (n->v.element.tag) {
	case GUMBO_TAG_NAV: case GUMBO_TAG_ASIDE: case GUMBO_TAG_BUTTON:
	case GUMBO_TAG_MENU: case GUMBO_TAG_LABEL:
		return 1;
	case GUMBO_TAG_UNKNOWN:	/* gumbo 0.10 predates <dialog> */
		if (unknown_is(n, "dialog"))
			return 1;
		break;
	case GUMBO_TAG_HEADER: case GUMBO_TAG_FOOTER:
		if (!(flags & F_ARTICLE))
			return 1;
		break;
	default:
		break;
	}
	if (n->v.element.attributes.length == 0)
		return 0;
	if ((v = attr(n, "role")) != NULL &&
	    (has_token(v, "navigation") || has_token(v, "contentinfo") ||
	     has_token(v, "complementary") || has_token(v, "search") ||
	     has_token(v, "dialog") || has_token(v, "alertdialog") ||
	     has_token(v, "menu") || has_token(v, "menubar") ||
	     has_token(v, "toolbar") ||
	     (has_token(v, "banner") && !(flags & F_ARTICLE))))
		return 1;
	if ((v = attr(n, "class")) != NULL && names_boiler(v))
		return 1;
	if ((v = attr(n, "id")) != NULL && names_boiler(v))
		return 1;
	return 0;
}

static int is_main(const GumboNode *n)
{
	const char *r;

	if (n->v.element.tag == GUMBO_TAG_MAIN)
		return 1;
	return (r = attr(n, "role")) != NULL && has_token(r, "main");
}

/* Text under root, skipping hidden content (and boilerplate if asked). */
static int collect_text(GumboNode *root, int boiler, unsigned flags0,
			struct x_text *t)
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
			x_text_add(t, c->v.text.text, strlen(c->v.text.text));
			continue;
		case GUMBO_NODE_ELEMENT:
			break;
		default:
			continue;
		}
		if (is_hidden(c))
			continue;
		if (boiler && is_boiler(c, fl))
			continue;
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
	struct x_jsonld *jsonld;
	GumboNode *body, *main, *article;
	int n_main, n_article;
	GumboNode *h1_boiler;	/* the first <h1> in boilerplate */
	int have_h1, have_title;
	struct x_text micro;	/* itemprop=articleBody|text */
	int have_micro;
	/* held back: Twitter cards rank below Open Graph */
	const char *tw_title, *tw_desc, *tw_image;
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
	const char *name = attr(n, "name"), *ip;

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
	if (strcasecmp(key, "robots") == 0 || strcasecmp(key, "googlebot") == 0 ||
	    strcasecmp(key, "linkbot") == 0) {
		if (robots_noindex(c))
			x->noindex = 1;
	} else if (strcasecmp(key, "og:title") == 0) {
		x_offer(x, LB_F_title, LB_SRC_OPENGRAPH, c, (size_t)-1);
	} else if (strcasecmp(key, "og:description") == 0) {
		x_offer(x, LB_F_description, LB_SRC_OPENGRAPH, c, (size_t)-1);
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
	rc = collect_text(n, 0, 0, &t);
	*out = x_text_take(&t);
	x_text_release(&t);
	if (rc < 0)
		return x_oom(sc->x);
	return 0;
}

/* One element of the metadata walk; returns 1 to descend into it. */
static int on_element(struct scan *sc, GumboNode *n, unsigned *flags)
{
	struct x_ctx *x = sc->x;
	const char *v;
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
			collect_text(n, 0, 0, &t);
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
		if ((attr(n, "pubdate") != NULL ||
		     ((v = attr(n, "itemprop")) != NULL &&
		      has_token(v, "datePublished"))) &&
		    (v = attr(n, "datetime")) != NULL)
			x_offer(x, LB_F_published_time, LB_SRC_META, v,
				(size_t)-1);
		break;
	case GUMBO_TAG_A:
		if ((v = attr(n, "rel")) != NULL && has_token(v, "category") &&
		    !(*flags & F_HIDDEN)) {
			struct x_text t;

			x_text_init(&t, X_MAX_FIELD, 1);
			collect_text(n, 0, 0, &t);
			s = x_text_take(&t);
			x_text_release(&t);
			if (s != NULL)
				x_offer_item(x, LB_F_category, LB_SRC_BODY, s,
					     (size_t)-1);
			free(s);
		}
		break;
	default:
		break;
	}
	if (*flags & F_HEAD)
		return 1;
	if (!(*flags & F_HIDDEN) && is_hidden(n))
		*flags |= F_HIDDEN;
	if (!(*flags & (F_BOILER | F_HIDDEN)) && is_boiler(n, *flags))
		*flags |= F_BOILER;
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
			if (s != NULL) {
				sc->have_h1 = 1;
				x_offer(x, LB_F_title, LB_SRC_H1, s, (size_t)-1);
				free(s);
			}
		}
	}
	if (!(*flags & (F_HIDDEN | F_MICRO)) &&
	    (v = attr(n, "itemprop")) != NULL &&
	    (has_token(v, "articleBody") || has_token(v, "text"))) {
		*flags |= F_MICRO;
		if (collect_text(n, 1, *flags & F_ARTICLE, &sc->micro) < 0)
			return x_oom(x);
		x_text_break(&sc->micro);
		sc->have_micro = 1;
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

static int body_text(struct scan *sc)
{
	struct x_text t;
	GumboNode *root;
	char *s;
	unsigned fl = 0;

	if (sc->body == NULL)
		return 0;
	root = sc->body;
	if (sc->n_main == 1)
		root = sc->main, fl = F_ARTICLE;
	else if (sc->n_article == 1)
		root = sc->article, fl = F_ARTICLE;
	x_text_init(&t, X_MAX_TEXT, 0);
	collect_text(root, 1, fl, &t);
	if (t.oom) {
		x_text_release(&t);
		return x_oom(sc->x);
	}
	s = x_text_take(&t);
	if (s == NULL) {
		/* Everything looked like boilerplate: take it all. */
		collect_text(sc->body, 0, 0, &t);
		if (t.oom) {
			x_text_release(&t);
			return x_oom(sc->x);
		}
		s = x_text_take(&t);
	}
	x_text_release(&t);
	x_offer_text(sc->x, LB_SRC_BODY, s);
	return 0;
}

int x_html_scan(const char *utf8, size_t len, const char *page_url,
		struct x_ctx *x)
{
	GumboOptions opts = kGumboDefaultOptions;
	GumboOutput *out = NULL;
	struct scan sc;
	char *s, *place = NULL;
	int rc = -1;

	memset(&sc, 0, sizeof(sc));
	sc.x = x;
	x_text_init(&sc.micro, X_MAX_TEXT, 0);
	if ((sc.jsonld = x_jsonld_new()) == NULL) {
		x_oom(x);
		goto out;
	}
	opts.max_errors = 0;
	out = gumbo_parse_with_options(&opts, utf8, len);
	if (out == NULL) {
		x_oom(x);
		goto out;
	}
	if (find_base(out->document, page_url, x) < 0)
		goto out;
	if (scan(&sc, out->document) < 0)
		goto out;
	if (x_jsonld_offer(sc.jsonld, x) < 0)
		goto out;
	x_offer(x, LB_F_title, LB_SRC_OPENGRAPH, sc.tw_title, (size_t)-1);
	x_offer(x, LB_F_description, LB_SRC_OPENGRAPH, sc.tw_desc, (size_t)-1);
	x_offer(x, LB_F_image_url, LB_SRC_OPENGRAPH, sc.tw_image, (size_t)-1);
	if (sc.og_place[0] || sc.og_place[1] || sc.og_place[2]) {
		struct lb_buf b;
		int k;

		lb_buf_init(&b, 3 * X_MAX_FIELD);
		for (k = 0; k < 3; k++)
			if (sc.og_place[k] != NULL && sc.og_place[k][0] != '\0')
				lb_buf_printf(&b, NULL, "%s%s", b.len ? ", " : "",
					      sc.og_place[k]);
		place = b.data;
		x_offer(x, LB_F_location, LB_SRC_OPENGRAPH, place, (size_t)-1);
	}
	if (!sc.have_h1 && sc.h1_boiler != NULL) {
		if (h1_text(&sc, sc.h1_boiler, &s) < 0)
			goto out;
		x_offer(x, LB_F_title, LB_SRC_H1, s, (size_t)-1);
		free(s);
	}
	if (sc.have_micro) {
		if (sc.micro.oom) {
			x_oom(x);
			goto out;
		}
		x_offer_text(x, LB_SRC_BODY, x_text_take(&sc.micro));
	}
	if (x->text[LB_SRC_JSONLD] == NULL && x->text[LB_SRC_BODY] == NULL &&
	    body_text(&sc) < 0)
		goto out;
	rc = x->failed ? -1 : 0;
out:
	free(place);
	x_text_release(&sc.micro);
	x_jsonld_free(sc.jsonld);
	if (out != NULL)
		gumbo_destroy_output(&opts, out);
	return rc;
}
