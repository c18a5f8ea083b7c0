/*
 * jsonld.c - schema.org JSON-LD (<script type="application/ld+json">).
 *
 * A page may carry several blocks; a block may be one object, an array of
 * objects, an object with an "@graph" array (Yoast, Rank Math), or several
 * objects written one after the other. Malformed blocks are skipped
 * without losing the others; before parsing, the common slips are
 * repaired (HTML comment or CDATA wrappers, raw line breaks inside
 * strings, trailing commas). A block larger than X_MAX_JSONLD or nested
 * deeper than X_MAX_JSONLD_DEPTH is skipped unread: the depth is measured
 * by the same linear pre-pass, so cJSON never recurses deeper.
 *
 * The nodes used are the top-level objects, the members of @graph and
 * their "mainEntity", ranked: 1 articles (Article and its subtypes,
 * HowTo, Recipe, Review), 2 other creative works and shop/event things
 * (CreativeWork, VideoObject, Book, Product, Event, ...), 3 web pages
 * (WebPage and its subtypes, Blog). Per field, the first node in rank
 * order (then document order) that has a valid value wins; list fields
 * (author, category) come from that one node. A node whose url,
 * mainEntityOfPage or @id names another page (a listing page describing
 * the posts it lists) ranks after all of them. References {"@id": ...}
 * (Yoast's author and image) are looked up among all nodes of the page.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "extract_int.h"

struct x_jsonld {
	cJSON *block[X_MAX_JSONLD_BLOCKS * 4];
	size_t n;
	size_t scripts;		/* <script> blocks seen */
	size_t total;
	const cJSON *node[X_MAX_JSONLD_NODES];
	int rank[X_MAX_JSONLD_NODES];
	size_t nnodes;
};

/* The arrays (~7 KiB) are read only below their counts: not zeroed (a
 * calloc() a page was a 7 KiB memset) */
struct x_jsonld *x_jsonld_new(void)
{
	struct x_jsonld *j = malloc(sizeof(*j));

	if (j != NULL)
		j->n = j->scripts = j->total = j->nnodes = 0;
	return j;
}

void x_jsonld_free(struct x_jsonld *j)
{
	size_t i;

	if (j == NULL)
		return;
	for (i = 0; i < j->n; i++)
		cJSON_Delete(j->block[i]);
	free(j);
}

/*
 * Copies s into o, repairing what it safely can; returns the new length
 * or (size_t)-1 if nested too deeply.
 */
static size_t prepare(const char *s, size_t n, char *o)
{
	size_t i = 0, k = 0, j;
	int depth = 0, instr = 0;

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (instr) {
			if (c == '\\' && i + 1 < n) {
				o[k++] = c;
				o[k++] = s[++i];
				continue;
			}
			if (c == '"')
				instr = 0;
			else if ((unsigned char)c < 0x20)
				c = ' ';	/* raw newline or tab */
			o[k++] = c;
			continue;
		}
		switch (c) {
		case '"':
			instr = 1;
			break;
		case '{':
		case '[':
			if (++depth > X_MAX_JSONLD_DEPTH)
				return (size_t)-1;
			break;
		case '}':
		case ']':
			depth--;
			break;
		case ',':
			for (j = i + 1; j < n && (s[j] == ' ' || s[j] == '\n' ||
						   s[j] == '\r' || s[j] == '\t');
			     j++)
				;
			if (j < n && (s[j] == '}' || s[j] == ']'))
				continue;	/* trailing comma */
			break;
		}
		o[k++] = c;
	}
	o[k] = '\0';
	return k;
}

static int starts(const char *s, size_t n, const char *p)
{
	size_t l = strlen(p);

	return n >= l && memcmp(s, p, l) == 0;
}

static void trim(const char **s, size_t *n)
{
	int again = 1;

	while (again) {
		again = 0;
		while (*n > 0 && (unsigned char)**s <= 0x20)
			(*s)++, (*n)--;
		while (*n > 0 && (unsigned char)(*s)[*n - 1] <= 0x20)
			(*n)--;
		if (starts(*s, *n, "<!--")) {
			*s += 4, *n -= 4, again = 1;
		} else if (starts(*s, *n, "//<![CDATA[")) {
			*s += 11, *n -= 11, again = 1;
		} else if (starts(*s, *n, "<![CDATA[")) {
			*s += 9, *n -= 9, again = 1;
		}
		if (*n >= 3 && memcmp(*s + *n - 3, "-->", 3) == 0)
			*n -= 3, again = 1;
		else if (*n >= 5 && memcmp(*s + *n - 5, "//]]>", 5) == 0)
			*n -= 5, again = 1;
		else if (*n >= 3 && memcmp(*s + *n - 3, "]]>", 3) == 0)
			*n -= 3, again = 1;
	}
}

void x_jsonld_add(struct x_jsonld *j, const char *s, size_t n)
{
	const size_t max = sizeof(j->block) / sizeof(j->block[0]);
	const char *end;
	char *buf;
	size_t len, used;

	trim(&s, &n);
	if (n == 0 || n > X_MAX_JSONLD || j->total + n > X_MAX_JSONLD_ALL ||
	    j->n >= max || j->scripts >= X_MAX_JSONLD_BLOCKS)
		return;
	j->scripts++;
	j->total += n;
	if ((buf = malloc(n + 1)) == NULL)
		return;
	if ((len = prepare(s, n, buf)) == (size_t)-1)
		goto out;
	used = 0;
	/* One value, or several written one after the other. */
	while (used < len && j->n < max) {
		cJSON *v;

		while (used < len && (unsigned char)buf[used] <= 0x20)
			used++;
		if (used >= len)
			break;
		if (buf[used] == ';' || buf[used] == ',') {
			used++;
			continue;
		}
		v = cJSON_ParseWithLengthOpts(buf + used, len - used, &end, 0);
		if (v == NULL)
			break;
		j->block[j->n++] = v;
		used = (size_t)(end - buf);
	}
out:
	free(buf);
}

/* The type's local name: "http://schema.org/Article" -> "Article". */
static const char *local_name(const char *t)
{
	const char *p = strrchr(t, '/'), *q = strrchr(t, ':');

	if (q != NULL && (p == NULL || q > p))
		p = q;
	return p != NULL ? p + 1 : t;
}

static const char *const rank1[] = {
	"Article", "NewsArticle", "BlogPosting", "Report", "ScholarlyArticle",
	"TechArticle", "SocialMediaPosting", "LiveBlogPosting",
	"DiscussionForumPosting", "AnalysisNewsArticle",
	"AskPublicNewsArticle", "BackgroundNewsArticle", "OpinionNewsArticle",
	"ReportageNewsArticle", "ReviewNewsArticle", "SatiricalArticle",
	"AdvertiserContentArticle", "MedicalScholarlyArticle", "APIReference",
	"HowTo", "Recipe", "Review", "CriticReview", "UserReview",
	NULL,
};
static const char *const rank2[] = {
	"CreativeWork", "Book", "Chapter", "Course", "Dataset", "Guide",
	"Movie", "MusicRecording", "MusicComposition", "Podcast",
	"PodcastEpisode", "Episode", "TVSeries", "VideoObject", "AudioObject",
	"MediaObject", "SoftwareApplication", "WebApplication",
	"MobileApplication", "SoftwareSourceCode", "Thesis", "Legislation",
	"Message", "Photograph", "Painting", "Play", "Poster", "Quotation",
	"Manuscript", "Map", "Menu", "DigitalDocument", "CreativeWorkSeries",
	"Clip", "Game", "VideoGame", "Question", "Claim", "Conversation",
	"EducationalOccupationalCredential", "LearningResource", "Quiz",
	"Product", "ProductGroup", "Event", "JobPosting", "Vehicle",
	NULL,
};
static const char *const rank3[] = {
	"WebPage", "AboutPage", "CheckoutPage", "CollectionPage",
	"ContactPage", "FAQPage", "ItemPage", "MedicalWebPage", "ProfilePage",
	"QAPage", "RealEstateListing", "SearchResultsPage", "MediaGallery",
	"ImageGallery", "VideoGallery", "Blog", "WebContent",
	NULL,
};

static int in_list(const char *const *l, const char *t)
{
	for (; *l != NULL; l++)
		if (strcmp(*l, t) == 0)
			return 1;
	return 0;
}

static int type_rank(const cJSON *o)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "@type"), *e;
	int best = 0, r;

	if (cJSON_IsString(t)) {
		const char *n = local_name(t->valuestring);

		return in_list(rank1, n) ? 1 : in_list(rank2, n) ? 2 :
		       in_list(rank3, n) ? 3 : 0;
	}
	cJSON_ArrayForEach(e, t) {
		if (!cJSON_IsString(e))
			continue;
		const char *n = local_name(e->valuestring);

		r = in_list(rank1, n) ? 1 : in_list(rank2, n) ? 2 :
		    in_list(rank3, n) ? 3 : 0;
		if (r != 0 && (best == 0 || r < best))
			best = r;
	}
	return best;
}

static void gather(struct x_jsonld *j, const cJSON *v, int depth)
{
	const cJSON *e, *g;

	if (depth > 4 || j->nnodes >= X_MAX_JSONLD_NODES)
		return;
	if (cJSON_IsArray(v)) {
		cJSON_ArrayForEach(e, v)
			gather(j, e, depth + 1);
		return;
	}
	if (!cJSON_IsObject(v))
		return;
	j->node[j->nnodes] = v;
	j->rank[j->nnodes] = type_rank(v);
	j->nnodes++;
	if ((g = cJSON_GetObjectItemCaseSensitive(v, "@graph")) != NULL)
		gather(j, g, depth + 1);
	if ((g = cJSON_GetObjectItemCaseSensitive(v, "mainEntity")) != NULL)
		gather(j, g, depth + 1);
}

/* A node with that @id that says more than its @id. */
static const cJSON *lookup(const struct x_jsonld *j, const cJSON *ref)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(ref, "@id"), *k;
	size_t i;

	if (!cJSON_IsString(id))
		return ref;
	cJSON_ArrayForEach(k, ref)
		if (strcmp(k->string, "@id") != 0 &&
		    strcmp(k->string, "@type") != 0)
			return ref;	/* says more than its @id */
	for (i = 0; i < j->nnodes; i++) {
		const cJSON *o = j->node[i], *oid;

		if (o == ref || o->child == NULL || o->child->next == NULL)
			continue;
		oid = cJSON_GetObjectItemCaseSensitive(o, "@id");
		if (cJSON_IsString(oid) &&
		    strcmp(oid->valuestring, id->valuestring) == 0)
			return o;
	}
	return ref;
}

/* A string value, with {"@value": ...} objects; NULL if none. */
static const char *str_of(const cJSON *v)
{
	if (cJSON_IsString(v))
		return v->valuestring;
	if (cJSON_IsObject(v)) {
		v = cJSON_GetObjectItemCaseSensitive(v, "@value");
		if (cJSON_IsString(v))
			return v->valuestring;
	}
	return NULL;
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* Offers a string with character references decoded. */
static int offer_s(struct x_ctx *x, enum lb_doc_field f, const char *s,
		   int item)
{
	char *u = NULL;
	int r;

	if (s == NULL)
		return 0;
	if (strchr(s, '&') != NULL || strchr(s, '<') != NULL) {
		if ((u = x_html_unescape(s, strlen(s))) == NULL)
			return x_oom(x);
		s = u;
	}
	r = item ? x_offer_item(x, f, LB_SRC_JSONLD, s, (size_t)-1) :
		   x_offer(x, f, LB_SRC_JSONLD, s, (size_t)-1);
	free(u);
	return r;
}

static int looks_like_url(const char *s)
{
	return strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0 ||
	       s[0] == '/';
}

/* A person's or organisation's name. */
static int offer_name(struct x_jsonld *j, struct x_ctx *x,
		      enum lb_doc_field f, const cJSON *v)
{
	const cJSON *e;
	const char *s;
	int r;

	if (cJSON_IsArray(v)) {
		int any = 0;

		cJSON_ArrayForEach(e, v) {
			if (cJSON_IsArray(e))
				continue;
			if ((r = offer_name(j, x, f, e)) < 0)
				return -1;
			any |= r;
		}
		return any;
	}
	if (cJSON_IsObject(v)) {
		v = lookup(j, v);
		if ((s = str_of(get(v, "name"))) != NULL)
			return looks_like_url(s) ? 0 : offer_s(x, f, s, 1);
		const char *g = str_of(get(v, "givenName"));
		const char *fam = str_of(get(v, "familyName"));

		if (g != NULL && fam != NULL) {
			size_t n = strlen(g) + strlen(fam) + 2;
			char *full = malloc(n);

			if (full == NULL)
				return x_oom(x);
			snprintf(full, n, "%s %s", g, fam);
			r = offer_s(x, f, full, 1);
			free(full);
			return r;
		}
		return 0;
	}
	if ((s = str_of(v)) != NULL && !looks_like_url(s))
		return offer_s(x, f, s, 1);
	return 0;
}

static int offer_image(struct x_jsonld *j, struct x_ctx *x, const cJSON *v)
{
	const cJSON *e;
	const char *s;
	int r;

	if (cJSON_IsArray(v)) {
		cJSON_ArrayForEach(e, v) {
			if (cJSON_IsArray(e))
				continue;
			if ((r = offer_image(j, x, e)) != 0)
				return r;
		}
		return 0;
	}
	if (cJSON_IsObject(v)) {
		v = lookup(j, v);
		if ((s = str_of(get(v, "url"))) != NULL &&
		    (r = offer_s(x, LB_F_image_url, s, 0)) != 0)
			return r;
		if ((s = str_of(get(v, "contentUrl"))) != NULL)
			return offer_s(x, LB_F_image_url, s, 0);
		return 0;
	}
	return offer_s(x, LB_F_image_url, str_of(v), 0);
}

static int offer_place(struct x_jsonld *j, struct x_ctx *x, const cJSON *v)
{
	static const char *const parts[] = {
		"addressLocality", "addressRegion", "addressCountry",
	};
	const cJSON *e, *a;
	const char *s;
	char buf[X_MAX_FIELD];
	size_t k, len = 0;
	int r;

	if (cJSON_IsArray(v)) {
		cJSON_ArrayForEach(e, v) {
			if (cJSON_IsArray(e))
				continue;
			if ((r = offer_place(j, x, e)) != 0)
				return r;
		}
		return 0;
	}
	if (!cJSON_IsObject(v))
		return offer_s(x, LB_F_location, str_of(v), 0);
	v = lookup(j, v);
	if ((s = str_of(get(v, "name"))) != NULL &&
	    (r = offer_s(x, LB_F_location, s, 0)) != 0)
		return r;
	a = get(v, "address");
	if (!cJSON_IsObject(a))
		return offer_s(x, LB_F_location, str_of(a), 0);
	buf[0] = '\0';
	for (k = 0; k < 3; k++) {
		e = get(a, parts[k]);
		if (cJSON_IsObject(e))
			e = get(e, "name");
		if ((s = str_of(e)) == NULL || *s == '\0')
			continue;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
					len ? ", " : "", s);
		if (len >= sizeof(buf))
			break;
	}
	return buf[0] ? offer_s(x, LB_F_location, buf, 0) : 0;
}

/* The text of HowTo steps, recipe instructions, FAQ answers. */
static void steps_text(const struct x_jsonld *j, const cJSON *v,
		       struct x_text *t, int depth)
{
	const cJSON *e, *it;
	const char *s;

	if (depth > X_MAX_JSONLD_DEPTH)
		return;
	if (cJSON_IsArray(v)) {
		cJSON_ArrayForEach(e, v)
			steps_text(j, e, t, depth + 1);
		return;
	}
	if ((s = str_of(v)) != NULL) {
		char *u = x_html_unescape(s, strlen(s));

		if (u == NULL) {
			t->oom = 1;
			return;
		}
		x_text_add(t, u, strlen(u));
		x_text_break(t);
		free(u);
		return;
	}
	if (!cJSON_IsObject(v))
		return;
	v = lookup(j, v);
	it = get(v, "itemListElement");
	if ((s = str_of(get(v, "text"))) != NULL) {
		steps_text(j, get(v, "text"), t, depth + 1);
	} else if (it == NULL && (s = str_of(get(v, "name"))) != NULL) {
		steps_text(j, get(v, "name"), t, depth + 1);
	} else if (it != NULL && (s = str_of(get(v, "name"))) != NULL) {
		/* a HowToSection: its name heads its steps */
		steps_text(j, get(v, "name"), t, depth + 1);
	}
	if (it != NULL)
		steps_text(j, it, t, depth + 1);
	if ((e = get(v, "acceptedAnswer")) != NULL)
		steps_text(j, e, t, depth + 1);
}

/*
 * Is the articleBody cut short of the node's own wordCount (less than
 * half of it)? Hugo's plainify, which themes such as PaperMod use to
 * write articleBody, stops at the first "<script" in the text; the
 * page's own text is then the better source.
 */
static int cut_short(const cJSON *o, const char *s)
{
	const cJSON *w = get(o, "wordCount");
	double n = 0;

	if (cJSON_IsNumber(w))
		n = w->valuedouble;
	else if (cJSON_IsString(w))
		n = strtod(w->valuestring, NULL);
	return n > 0 && n < 1e9 && 2.0 * (double)x_word_count(s) < n;
}

static int offer_text(struct x_jsonld *j, struct x_ctx *x, const cJSON *o)
{
	static const char *const keys[] = {
		"articleBody", "text", "reviewBody", "step",
		"recipeInstructions", "mainEntity",
	};
	struct x_text t;
	size_t k;
	char *s;

	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		const cJSON *v = get(o, keys[k]);

		if (v == NULL)
			continue;
		/* mainEntity: only a FAQ's questions and answers */
		if (k == 5 && type_rank(o) != 3)
			continue;
		x_text_init(&t, X_MAX_TEXT, 0);
		t.lines = 1;
		steps_text(j, v, &t, 0);
		if (t.oom) {
			x_text_release(&t);
			return x_oom(x);
		}
		if ((s = x_text_take(&t)) != NULL) {
			if (k <= 1 && cut_short(o, s)) {
				free(s);	/* the page's text is better */
				return 0;
			}
			x_offer_text(x, LB_SRC_JSONLD, s);
			return 1;
		}
	}
	return 0;
}

/* Rank Math writes the post's categories as one string, "Europe, Italy". */
static int offer_section(struct x_ctx *x, const char *s)
{
	char buf[X_MAX_FIELD];
	const char *p, *e;

	if (s == NULL)
		return 0;
	for (p = s; *p != '\0'; p = *e ? e + 1 : e) {
		size_t n;

		e = p + strcspn(p, ",");
		n = (size_t)(e - p) < sizeof(buf) ? (size_t)(e - p) :
						    sizeof(buf) - 1;
		memcpy(buf, p, n);
		buf[n] = '\0';
		if (offer_s(x, LB_F_category, buf, 1) < 0)
			return -1;
	}
	return 0;
}

static int offer_node(struct x_jsonld *j, struct x_ctx *x, const cJSON *o)
{
	static const char *const title_keys[] = {"headline", "name"};
	static const char *const date_keys[] = {
		"datePublished", "dateCreated", "uploadDate", "startDate",
	};
	static const char *const place_keys[] = {
		"contentLocation", "locationCreated", "spatialCoverage",
		"location", "jobLocation",
	};
	const cJSON *v, *e;
	size_t k;

	for (k = 0; k < 2; k++)
		if (offer_s(x, LB_F_title, str_of(get(o, title_keys[k])), 0) < 0)
			return -1;
	if (offer_s(x, LB_F_description, str_of(get(o, "description")), 0) < 0 ||
	    offer_s(x, LB_F_description, str_of(get(o, "abstract")), 0) < 0)
		return -1;
	if (!x_has(x, LB_F_author, LB_SRC_JSONLD)) {
		if ((v = get(o, "author")) == NULL)
			v = get(o, "creator");
		if (v != NULL && offer_name(j, x, LB_F_author, v) < 0)
			return -1;
	}
	if (!x_has(x, LB_F_category, LB_SRC_JSONLD)) {
		v = get(o, "articleSection");
		if (cJSON_IsArray(v)) {
			cJSON_ArrayForEach(e, v)
				if (offer_s(x, LB_F_category, str_of(e), 1) < 0)
					return -1;
		} else if (offer_section(x, str_of(v)) < 0) {
			return -1;
		}
	}
	if (!x_has(x, LB_F_image_url, LB_SRC_JSONLD)) {
		if (offer_image(j, x, get(o, "image")) < 0 ||
		    offer_image(j, x, get(o, "thumbnailUrl")) < 0)
			return -1;
	}
	if (!x_has(x, LB_F_language, LB_SRC_JSONLD)) {
		v = get(o, "inLanguage");
		if (cJSON_IsObject(v)) {
			if (offer_s(x, LB_F_language,
				    str_of(get(v, "alternateName")), 0) < 0 ||
			    offer_s(x, LB_F_language, str_of(get(v, "name")),
				    0) < 0)
				return -1;
		} else if (offer_s(x, LB_F_language, str_of(v), 0) < 0) {
			return -1;
		}
	}
	for (k = 0; k < sizeof(place_keys) / sizeof(place_keys[0]) &&
		    !x_has(x, LB_F_location, LB_SRC_JSONLD); k++)
		if (offer_place(j, x, get(o, place_keys[k])) < 0)
			return -1;
	for (k = 0; k < sizeof(date_keys) / sizeof(date_keys[0]); k++)
		if (offer_s(x, LB_F_published_time,
			    str_of(get(o, date_keys[k])), 0) < 0)
			return -1;
	if (x->text[LB_SRC_JSONLD] == NULL && offer_text(j, x, o) < 0)
		return -1;
	return x->failed ? -1 : 0;
}

/* The path of an absolute http(s) URL without a trailing '/', the query
 * kept; NULL if not absolute. */
static const char *url_path_of(const char *u, size_t *n)
{
	const char *p, *e;

	if (strncmp(u, "http://", 7) == 0)
		u += 7;
	else if (strncmp(u, "https://", 8) == 0)
		u += 8;
	else
		return NULL;
	p = u + strcspn(u, "/?#");
	e = p + strcspn(p, "#");
	while (e > p && e[-1] == '/')
		e--;
	*n = (size_t)(e - p);
	return p;
}

/* The page a node says it describes: url, mainEntityOfPage, @id. */
static const char *node_page(const cJSON *o)
{
	const cJSON *v = get(o, "url");

	if (cJSON_IsString(v))
		return v->valuestring;
	v = get(o, "mainEntityOfPage");
	if (cJSON_IsObject(v))
		v = get(v, "@id");
	if (cJSON_IsString(v))
		return v->valuestring;
	v = get(o, "@id");
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/*
 * A node that names another page (a listing page's JSON-LD of the posts it
 * lists) is ignored when a node describes this page, and ranks last
 * otherwise (a site whose JSON-LD URLs disagree with its canonical).
 */
static int other_page(const cJSON *o, const char *page)
{
	const char *u = node_page(o), *a, *b;
	size_t an, bn;

	if (u == NULL || page == NULL ||
	    (a = url_path_of(u, &an)) == NULL ||
	    (b = url_path_of(page, &bn)) == NULL)
		return 0;
	return an != bn || memcmp(a, b, an) != 0;
}

int x_jsonld_offer(struct x_jsonld *j, struct x_ctx *x, const char *page)
{
	size_t i, ours = 0, others = 0;
	int r;

	j->nnodes = 0;
	for (i = 0; i < j->n; i++)
		gather(j, j->block[i], 0);
	for (i = 0; i < j->nnodes; i++) {
		if (j->rank[i] == 0)
			continue;
		if (other_page(j->node[i], page))
			j->rank[i] += 3, others++;
		else
			ours++;
	}
	for (i = 0; ours > 0 && others > 0 && i < j->nnodes; i++)
		if (j->rank[i] > 3)
			j->rank[i] = 0;
	for (r = 1; r <= 6; r++)
		for (i = 0; i < j->nnodes; i++)
			if (j->rank[i] == r && offer_node(j, x, j->node[i]) < 0)
				return -1;
	return 0;
}
