/* Rendering: SPEC 2.3 (standard), 2.1 (enterprise), 2.5 (module maps). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "linkbot/render.h"
#include "linkbot/utf8.h"

static const char *const standard_keys[] = {
	"type", "author", "category", "description", "image_url", "language",
	"location", "published_time", "read_time", "title", "url", "url_path",
	"url_qs_params",
};

static void doc_set(struct lb_doc *d, const char *url, const char *title)
{
	lb_doc_init(d);
	d->url = url ? strdup(url) : NULL;
	d->title = title ? strdup(title) : NULL;
}

static void ep_init(struct lb_endpoint *ep, enum lb_variant v)
{
	memset(ep, 0, sizeof(*ep));
	ep->id = "blog";
	ep->variant = v;
	ep->links = 8;
}

static cJSON *parse_ok(char *json)
{
	cJSON *o;

	assert_non_null(json);
	o = cJSON_Parse(json);
	if (o == NULL)
		fail_msg("not JSON: %s", json);
	free(json);
	return o;
}

/* Number of UTF-8 code points. */
static size_t u8len(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

static void test_standard_all_fields(void **state)
{
	struct lb_endpoint ep;
	struct lb_doc d;
	struct lb_error err;
	struct lb_render_link link;
	cJSON *o, *l, *it;
	size_t i = 0;

	(void)state;
	ep_init(&ep, LB_VARIANT_STANDARD);
	doc_set(&d, "https://ex.com/blog/a?x=1", "A post");
	lb_strlist_add(&d.author, "Ann", NULL);
	lb_strlist_add(&d.author, "Bob", NULL);
	lb_strlist_add(&d.category, "News", NULL);
	d.description = strdup("About a");
	d.image_url = strdup("https://ex.com/a.png");
	d.language = strdup("en");
	d.location = strdup("Paris");
	d.published_time = strdup("2026-01-02T03:04:05Z");
	d.read_time = strdup("4 min");
	d.url_path = strdup("/blog/a");
	d.url_qs_params = strdup("x=1");
	link.doc = &d;
	link.type = LB_LINK_RELATED;
	lb_error_init(&err);
	o = parse_ok(render_envelope(&ep, &link, 1, &err));
	assert_true(cJSON_IsString(cJSON_GetObjectItem(o, "message")));
	l = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "related_links"), 0);
	assert_non_null(l);
	/* Every SPEC 2.3 key, in order, and nothing else. */
	cJSON_ArrayForEach(it, l) {
		assert_true(i < 13);
		assert_string_equal(it->string, standard_keys[i]);
		i++;
	}
	assert_int_equal(i, 13);
	assert_string_equal(cJSON_GetObjectItem(l, "type")->valuestring, "related");
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(l, "author"), 1)->valuestring, "Bob");
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(l, "category"), 0)->valuestring, "News");
	assert_string_equal(cJSON_GetObjectItem(l, "description")->valuestring, "About a");
	assert_string_equal(cJSON_GetObjectItem(l, "image_url")->valuestring, "https://ex.com/a.png");
	assert_string_equal(cJSON_GetObjectItem(l, "language")->valuestring, "en");
	assert_string_equal(cJSON_GetObjectItem(l, "location")->valuestring, "Paris");
	assert_string_equal(cJSON_GetObjectItem(l, "published_time")->valuestring, "2026-01-02T03:04:05Z");
	assert_string_equal(cJSON_GetObjectItem(l, "read_time")->valuestring, "4 min");
	assert_string_equal(cJSON_GetObjectItem(l, "title")->valuestring, "A post");
	assert_string_equal(cJSON_GetObjectItem(l, "url")->valuestring, "https://ex.com/blog/a?x=1");
	assert_string_equal(cJSON_GetObjectItem(l, "url_path")->valuestring, "/blog/a");
	assert_string_equal(cJSON_GetObjectItem(l, "url_qs_params")->valuestring, "x=1");
	cJSON_Delete(o);
	lb_doc_release(&d);
}

static void test_standard_nulls(void **state)
{
	struct lb_endpoint ep;
	struct lb_doc d;
	struct lb_error err;
	cJSON *l;
	size_t i;

	(void)state;
	ep_init(&ep, LB_VARIANT_STANDARD);
	doc_set(&d, "https://ex.com/blog/b/?utm=1#top", NULL);
	d.description = strdup(" \t\n ");	/* white space only: no data */
	lb_error_init(&err);
	l = parse_ok(render_link_json(&ep, &d, LB_LINK_RANDOM, &err));
	for (i = 0; i < 13; i++)
		assert_non_null(cJSON_GetObjectItem(l, standard_keys[i]));
	assert_string_equal(cJSON_GetObjectItem(l, "type")->valuestring, "random");
	/* Non-null fields are derived when the crawl found nothing. */
	assert_string_equal(cJSON_GetObjectItem(l, "url_path")->valuestring, "/blog/b/");
	assert_string_equal(cJSON_GetObjectItem(l, "title")->valuestring, "/blog/b/");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(l, "author")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(l, "category")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(l, "description")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(l, "image_url")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(l, "url_qs_params")));
	cJSON_Delete(l);
	lb_doc_release(&d);

	/* A target without a URL cannot be linked. */
	doc_set(&d, NULL, "x");
	lb_error_init(&err);
	assert_null(render_link_json(&ep, &d, LB_LINK_RELATED, &err));
	assert_int_equal(err.code, LB_EINVALID);
	lb_doc_release(&d);
}

static void test_self_and_duplicates(void **state)
{
	struct lb_endpoint ep;
	struct lb_doc self, a, a_slash, a_host, b, nourl;
	struct lb_render_link links[6];
	struct lb_error err;
	cJSON *o, *arr;

	(void)state;
	ep_init(&ep, LB_VARIANT_STANDARD);
	doc_set(&self, "https://ex.com/self", "Self");
	doc_set(&a, "https://ex.com/a", "A");
	doc_set(&a_slash, "https://ex.com/a/", "A again");
	doc_set(&a_host, "https://EX.com:443/a?utm_source=x", "A thrice");
	doc_set(&b, "https://ex.com/b", "B");
	doc_set(&nourl, NULL, "nothing");
	links[0] = (struct lb_render_link){ &a, LB_LINK_RELATED };
	links[1] = (struct lb_render_link){ &self, LB_LINK_RELATED };
	links[2] = (struct lb_render_link){ &a_slash, LB_LINK_RELATED };
	links[3] = (struct lb_render_link){ &nourl, LB_LINK_RELATED };
	links[4] = (struct lb_render_link){ &a_host, LB_LINK_RANDOM };
	links[5] = (struct lb_render_link){ &b, LB_LINK_RANDOM };
	lb_error_init(&err);
	o = parse_ok(render_answer(&ep, &self, links, 6, &err));
	arr = cJSON_GetObjectItem(o, "related_links");
	assert_int_equal(cJSON_GetArraySize(arr), 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 0), "title")->valuestring, "A");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 1), "title")->valuestring, "B");
	assert_string_equal(cJSON_GetObjectItem(o, "message")->valuestring,
			    "2 links: 1 related, 1 random.");
	cJSON_Delete(o);

	/* Without a self page, the self link stays. */
	o = parse_ok(render_envelope(&ep, links, 6, &err));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "related_links")), 3);
	cJSON_Delete(o);

	/* Empty answer: a message and an empty (non-null) list. */
	o = parse_ok(render_answer(&ep, &self, links + 1, 1, &err));
	arr = cJSON_GetObjectItem(o, "related_links");
	assert_true(cJSON_IsArray(arr));
	assert_int_equal(cJSON_GetArraySize(arr), 0);
	assert_true(strlen(cJSON_GetObjectItem(o, "message")->valuestring) > 0);
	cJSON_Delete(o);
	lb_doc_release(&self);
	lb_doc_release(&a);
	lb_doc_release(&a_slash);
	lb_doc_release(&a_host);
	lb_doc_release(&b);
	lb_doc_release(&nourl);
}

/* Answers through a render cache are the bytes render_answer() gives,
 * whether the cache has room or not, and whatever was rendered before. */
static void check_cached(const struct lb_endpoint *ep, size_t max_bytes,
			 const struct lb_doc *docs, size_t n_docs)
{
	struct lb_render_cache *c = render_cache_new(ep, max_bytes);
	struct lb_render_link links[5];
	struct lb_error err;
	size_t s, k, round;

	assert_non_null(c);
	lb_error_init(&err);
	for (round = 0; round < 2; round++)
		for (s = 0; s < n_docs; s++) {
			char *a, *b;

			/* five links from s on: self, repeats and the doc
			 * without a URL come round; types alternate */
			for (k = 0; k < 5; k++)
				links[k] = (struct lb_render_link){
					&docs[(s + k * (round + 1)) % n_docs],
					(s + k) % 3 == 0 ? LB_LINK_RANDOM :
							   LB_LINK_RELATED };
			a = render_answer(ep, &docs[s], links, 5, &err);
			b = render_answer_cached(c, &docs[s], links, 5, &err);
			assert_non_null(a);
			assert_non_null(b);
			assert_string_equal(a, b);
			free(a);
			free(b);
			if (docs[s].url == NULL)
				continue;
			a = render_link_json(ep, &docs[s], LB_LINK_RANDOM, &err);
			b = render_link_json_cached(c, &docs[s], LB_LINK_RANDOM,
						    &err);
			assert_string_equal(a, b);
			free(a);
			free(b);
		}
	lb_error_init(&err);
	assert_null(render_link_json_cached(c, &docs[n_docs - 1],
					    LB_LINK_RELATED, &err));
	assert_int_equal(err.code, LB_EINVALID);
	render_cache_free(c);
}

static void test_cached_same_bytes(void **state)
{
	struct lb_endpoint ep;
	struct lb_doc d[7];
	size_t i, budgets[] = { 0, 600, (size_t)1 << 20 };
	char *extra[] = { "description", "text", "nosuchfield" };

	(void)state;
	doc_set(&d[0], "https://ex.com/a", "A");
	doc_set(&d[1], "https://ex.com/a/", "A again");	/* A's page ID */
	doc_set(&d[2], "https://EX.com:443/b?utm_source=x", "B \x01 ctl");
	doc_set(&d[3], "https://ex.com/c", NULL);	/* title: the path */
	d[3].description = strdup("About c, with \"quotes\" and \\");
	lb_strlist_add(&d[3].author, "Ann", NULL);
	doc_set(&d[4], "https://ex.com/d", "D \xe2\x80\xa8 sep");
	d[4].text = strdup("the text of d");
	doc_set(&d[5], "not a url at all", "E");
	doc_set(&d[6], NULL, "no URL");	/* last: no link object */
	for (i = 0; i < sizeof(budgets) / sizeof(budgets[0]); i++) {
		ep_init(&ep, LB_VARIANT_STANDARD);
		check_cached(&ep, budgets[i], d, 7);
		ep_init(&ep, LB_VARIANT_ENTERPRISE);
		ep.extra_fields.v = extra;
		ep.extra_fields.n = 3;
		check_cached(&ep, budgets[i], d, 7);
	}
	for (i = 0; i < 7; i++)
		lb_doc_release(&d[i]);
}

static void test_clean_text(void **state)
{
	struct lb_endpoint ep;
	struct lb_doc d;
	struct lb_error err;
	char longtitle[2000], *json, *c;
	cJSON *l;
	const char *t;
	size_t i;

	(void)state;
	ep_init(&ep, LB_VARIANT_STANDARD);
	/* Control characters, DEL, C1, invalid UTF-8, U+2028. */
	doc_set(&d, "https://ex.com/x", "  A\x01\tb\x7f" "c\xc2\x85" "d \xff" "e\xe2\x80\xa8" "f  ");
	d.description = strdup("caf\xc3\xa9 \xe2\x80\x94 ok");
	lb_error_init(&err);
	json = render_link_json(&ep, &d, LB_LINK_RELATED, &err);
	assert_non_null(json);
	for (i = 0; json[i]; i++)
		assert_true((unsigned char)json[i] >= 0x20);
	l = parse_ok(json);
	assert_string_equal(cJSON_GetObjectItem(l, "title")->valuestring,
			    "A b c d \xef\xbf\xbd" "e f");
	assert_string_equal(cJSON_GetObjectItem(l, "description")->valuestring,
			    "caf\xc3\xa9 \xe2\x80\x94 ok");
	cJSON_Delete(l);
	lb_doc_release(&d);

	/* Bounded title: at most LB_RENDER_TITLE_MAX characters, cut at a word. */
	longtitle[0] = '\0';
	for (i = 0; i < 150; i++)
		strcat(longtitle, "w\xc3\xa9rd ");
	doc_set(&d, "https://ex.com/x", longtitle);
	l = parse_ok(render_link_json(&ep, &d, LB_LINK_RELATED, &err));
	t = cJSON_GetObjectItem(l, "title")->valuestring;
	assert_true(u8len(t) <= LB_RENDER_TITLE_MAX);
	assert_true(u8len(t) > LB_RENDER_TITLE_MAX - 10);
	assert_string_equal(t + strlen(t) - 8, "w\xc3\xa9rd\xe2\x80\xa6");
	cJSON_Delete(l);
	lb_doc_release(&d);

	c = render_clean_text("abcdefghij", 5);
	assert_string_equal(c, "abcd\xe2\x80\xa6");
	free(c);
	assert_null(render_clean_text(" \x01 ", 0));
	assert_null(render_clean_text(NULL, 0));
}

/*
 * The reference for clean() (render.c before its printable-ASCII runs and
 * its bounded cut offsets): every character decoded, every offset kept.
 */
static size_t ref_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c = s[0], min;
	size_t len, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
		c &= 0x1F;
		min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		c &= 0x0F;
		min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		goto bad;
	}
	if (len > n)
		goto bad;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			goto bad;
		c = (c << 6) | (s[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		goto bad;
	*cp = c;
	return len;
bad:
	*cp = 0xFFFD;
	return 1;
}

static char *ref_clean(const char *s, int text, size_t max_chars)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n, i = 0, o = 0, chars = 0, cut = 0, cut_chars = 0, *starts;
	char *out;
	int space = 0;

	if (s == NULL)
		return NULL;
	n = strlen(s);
	out = malloc(n * 3 + 4);
	starts = malloc((n + 1) * sizeof(*starts));
	assert_non_null(out);
	assert_non_null(starts);
	while (i < n) {
		uint32_t cp;
		char enc[4];
		size_t k;

		i += ref_decode(p + i, n - i, &cp);
		if (cp == 0xFEFF)
			continue;
		if (cp <= 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0) ||
		    cp == 0x2028 || cp == 0x2029) {
			if (text)
				space = chars > 0;
			continue;
		}
		if (space) {
			starts[chars++] = o;
			out[o++] = ' ';
			space = 0;
		}
		starts[chars++] = o;
		k = lb_utf8_put(enc, cp);
		memcpy(out + o, enc, k);
		o += k;
	}
	if (chars == 0) {
		free(out);
		free(starts);
		return NULL;
	}
	if (max_chars > 0 && chars > max_chars) {
		cut_chars = max_chars - 1;
		cut = starts[cut_chars];
		if (text) {
			size_t j;
			for (j = cut_chars; j > 0 && j + 30 > cut_chars; j--) {
				if (out[starts[j]] == ' ') {
					cut_chars = j;
					cut = starts[j];
					break;
				}
			}
			while (cut > 0 && strchr(" ,;:-", out[cut - 1]) != NULL)
				cut--;
		}
		memcpy(out + cut, "\xE2\x80\xA6", 3);
		o = cut + 3;
	}
	out[o] = '\0';
	free(starts);
	return out;
}

/*
 * clean()'s fast paths (runs of printable ASCII copied whole; cut offsets
 * kept only for the first max_chars characters) give the reference's
 * string for 40,000 random strings of ASCII words, white space, controls,
 * DEL, multi-byte and invalid UTF-8, BOMs, U+2028 and cut punctuation,
 * for both modes and bounds from none to past the length.
 */
static void test_clean_fast(void **state)
{
	static const char *const pieces[] = {
		"a", "word", "Hello,", "x-y", "42", ";", ":", "-", " ", "  ",
		"\t", "\n", "\x01", "\x7f", "\xc3\xa9", "\xe2\x80\xa6",
		"\xef\xbb\xbf", "\xe2\x80\xa8", "\xc2\x85", "\xf0\x9f\x98\x80",
		"\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "\xc0\xaf", "~",
		"\"", "\\", "http://ex.com/a?b=c", "averyveryverylongwordindeed",
	};
	unsigned seed = 12345;
	char buf[600];
	int t;

	(void)state;
	for (t = 0; t < 40000; t++) {
		size_t len = 0, k, np, max;
		int text = t & 1;
		char *a, *b;

		seed = seed * 1103515245u + 12345u;
		np = (seed >> 16) % 60;
		for (k = 0; k < np; k++) {
			const char *pc;
			size_t pl;

			seed = seed * 1103515245u + 12345u;
			pc = pieces[(seed >> 16) % (sizeof(pieces) /
						     sizeof(pieces[0]))];
			pl = strlen(pc);
			if (len + pl >= sizeof(buf))
				break;
			memcpy(buf + len, pc, pl);
			len += pl;
		}
		buf[len] = '\0';
		seed = seed * 1103515245u + 12345u;
		max = (seed >> 16) % 4 == 0 ? 0 : (seed >> 18) % (len + 8);
		a = ref_clean(buf, text, max);
		b = text ? render_clean_text(buf, max) : render_clean_url(buf, max);
		if (a == NULL || b == NULL) {
			assert_null(a);
			assert_null(b);
			continue;
		}
		assert_string_equal(b, a);
		free(a);
		free(b);
	}
}

static void test_enterprise(void **state)
{
	static const char *const want[] = { "type", "title", "url", "url_path",
					    "description", "author", "text",
					    "nosuchfield" };
	char *extra[] = { "description", "author", "title", "text", "nosuchfield" };
	struct lb_endpoint ep;
	struct lb_doc d;
	struct lb_error err;
	cJSON *l, *it;
	size_t i = 0;

	(void)state;
	ep_init(&ep, LB_VARIANT_ENTERPRISE);
	ep.extra_fields.v = extra;
	ep.extra_fields.n = 5;
	doc_set(&d, "https://ex.com/e", "E");
	d.description = strdup("desc");
	d.text = strdup("body text");
	d.language = strdup("en");	/* not asked for: absent */
	lb_error_init(&err);
	l = parse_ok(render_link_json(&ep, &d, LB_LINK_RELATED, &err));
	cJSON_ArrayForEach(it, l) {
		assert_true(i < 8);
		assert_string_equal(it->string, want[i]);
		i++;
	}
	assert_int_equal(i, 8);
	assert_string_equal(cJSON_GetObjectItem(l, "url_path")->valuestring, "/e");
	assert_string_equal(cJSON_GetObjectItem(l, "description")->valuestring, "desc");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(l, "author")));
	assert_string_equal(cJSON_GetObjectItem(l, "text")->valuestring, "body text");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(l, "nosuchfield")));
	cJSON_Delete(l);

	/* No extra fields: exactly the four of SPEC 2.1. */
	ep.extra_fields.n = 0;
	l = parse_ok(render_link_json(&ep, &d, LB_LINK_RANDOM, &err));
	assert_int_equal(cJSON_GetArraySize(l), 4);
	cJSON_Delete(l);
	lb_doc_release(&d);
}

static void test_deterministic(void **state)
{
	struct lb_endpoint ep;
	struct lb_doc a, b;
	struct lb_render_link links[2];
	struct lb_error err;
	char *x, *y;

	(void)state;
	ep_init(&ep, LB_VARIANT_STANDARD);
	doc_set(&a, "https://ex.com/a", "A \"quoted\" \\ title");
	doc_set(&b, "https://ex.com/b", "B");
	links[0] = (struct lb_render_link){ &a, LB_LINK_RELATED };
	links[1] = (struct lb_render_link){ &b, LB_LINK_RELATED };
	lb_error_init(&err);
	x = render_envelope(&ep, links, 2, &err);
	y = render_envelope(&ep, links, 2, &err);
	assert_non_null(x);
	assert_string_equal(x, y);
	assert_non_null(strstr(x, "\"A \\\"quoted\\\" \\\\ title\""));
	free(x);
	free(y);
	lb_doc_release(&a);
	lb_doc_release(&b);
}

static void test_module_map(void **state)
{
	struct lb_module m_shop = { "z-shop", "/blog", "/shop", 4, 0 };
	struct lb_module m_blog = { "a-blog", "/blog/", "/blog", 4, 0 };
	struct lb_module m_docs = { "docs", "/docs", "/docs", 4, 0 };
	struct lb_doc self, p1, p1dup, s1;
	struct lb_render_link blog_links[3], shop_links[1];
	struct lb_render_module mods[3];
	struct lb_error err;
	cJSON *o, *it, *l;
	const char *order[2] = { "a-blog", "z-shop" };
	size_t i = 0;
	char *json;

	(void)state;
	doc_set(&self, "https://ex.com/blog/self", "Self");
	doc_set(&p1, "https://ex.com/blog/p1", "P1");
	p1.description = strdup("First");
	doc_set(&p1dup, "https://ex.com/blog/p1/", "P1 again");
	doc_set(&s1, "https://ex.com/shop/s1", "S1");
	s1.image_url = strdup("https://ex.com/s1.png");
	blog_links[0] = (struct lb_render_link){ &self, LB_LINK_RELATED };
	blog_links[1] = (struct lb_render_link){ &p1, LB_LINK_RELATED };
	blog_links[2] = (struct lb_render_link){ &p1dup, LB_LINK_RELATED };
	shop_links[0] = (struct lb_render_link){ &s1, LB_LINK_RELATED };
	mods[0] = (struct lb_render_module){ &m_shop, shop_links, 1 };
	mods[1] = (struct lb_render_module){ &m_docs, shop_links, 1 };
	mods[2] = (struct lb_render_module){ &m_blog, blog_links, 3 };
	lb_error_init(&err);
	o = parse_ok(render_module_map(&self, mods, 3, &err));
	cJSON_ArrayForEach(it, o) {
		assert_true(i < 2);
		assert_string_equal(it->string, order[i]);
		i++;
	}
	assert_int_equal(i, 2);
	it = cJSON_GetObjectItem(o, "a-blog");
	assert_string_equal(cJSON_GetObjectItem(it, "from")->valuestring, "/blog/");
	assert_string_equal(cJSON_GetObjectItem(it, "to")->valuestring, "/blog");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(it, "links")), 1);
	l = cJSON_GetArrayItem(cJSON_GetObjectItem(it, "links"), 0);
	assert_int_equal(cJSON_GetArraySize(l), 4);
	assert_string_equal(cJSON_GetObjectItem(l, "url")->valuestring, "https://ex.com/blog/p1");
	assert_string_equal(cJSON_GetObjectItem(l, "title")->valuestring, "P1");
	assert_string_equal(cJSON_GetObjectItem(l, "description")->valuestring, "First");
	assert_string_equal(cJSON_GetObjectItem(l, "image_url")->valuestring, "");
	l = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "z-shop"), "links"), 0);
	assert_string_equal(cJSON_GetObjectItem(l, "image_url")->valuestring, "https://ex.com/s1.png");
	assert_string_equal(cJSON_GetObjectItem(l, "description")->valuestring, "");
	cJSON_Delete(o);

	/* A page no module starts from: an empty map. */
	json = render_module_map(&s1, mods, 3, &err);
	assert_string_equal(json, "{}");
	free(json);
	lb_doc_release(&self);
	lb_doc_release(&p1);
	lb_doc_release(&p1dup);
	lb_doc_release(&s1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_standard_all_fields),
		cmocka_unit_test(test_standard_nulls),
		cmocka_unit_test(test_self_and_duplicates),
		cmocka_unit_test(test_cached_same_bytes),
		cmocka_unit_test(test_clean_text),
		cmocka_unit_test(test_clean_fast),
		cmocka_unit_test(test_enterprise),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_module_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
