/*
 * sitemap.c - URL sources: XML sitemaps and sitemap indexes, HTML sitemaps.
 *
 * XML goes through libxml2's streaming reader (a 50 MB sitemap is never a
 * tree) with XML_PARSE_NONET and without DTD loading or entity substitution;
 * a document that carries a DOCTYPE is refused outright, so no entity of any
 * kind (XXE, billion laughs) is ever expanded. Element names are matched by
 * local name, so sitemaps without the sitemaps.org namespace work too.
 */
#define _GNU_SOURCE	/* memmem */
#include <string.h>
#include <strings.h>

#include <libxml/parserInternals.h>
#include <libxml/xmlreader.h>

#include "linkbot/gz.h"
#include "linkbot/utf8.h"
#include "crawl_int.h"

static xmlParserInputPtr no_entities(const char *url, const char *id,
				     xmlParserCtxtPtr ctx)
{
	(void)url;
	(void)id;
	(void)ctx;
	return NULL;
}

static void quiet(void *ctx, const char *msg, ...)
{
	(void)ctx;
	(void)msg;
}

/*
 * Per thread: libxml2 keeps the generic error handler per thread (the
 * entity loader is global, set to the same function by every thread).
 * crawl_global_init() runs it first on the main thread, before a
 * concurrent night starts its threads, so xmlInitParser() runs there.
 */
void sitemap_xml_setup(void)
{
	static _Thread_local int done;

	if (done)
		return;
	done = 1;
	xmlInitParser();
	xmlSetExternalEntityLoader(no_entities);
	xmlSetGenericErrorFunc(NULL, quiet);
}

static int name_is(xmlTextReaderPtr r, const char *name)
{
	const xmlChar *n = xmlTextReaderConstLocalName(r);

	return n != NULL && strcmp((const char *)n, name) == 0;
}

static char *trimmed(xmlChar *s)
{
	char *p = (char *)s, *e;

	if (p == NULL)
		return NULL;
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	e = p + strlen(p);
	while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
			 e[-1] == '\r'))
		e--;
	*e = '\0';
	return p;
}

/* The start of data past a UTF-8 BOM and white space. */
static const char *skip_bom_space(const char *data, size_t len, size_t *left)
{
	size_t k = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;

	while (k < len && (data[k] == ' ' || data[k] == '\t' ||
			   data[k] == '\r' || data[k] == '\n'))
		k++;
	*left = len - k;
	return data + k;
}

static int starts_ci(const char *p, size_t n, const char *w)
{
	size_t k = strlen(w);

	return n >= k && strncasecmp(p, w, k) == 0;
}

int sitemap_looks_html(const char *data, size_t len)
{
	size_t n;
	const char *p;

	if (data == NULL || lb_is_gzip(data, len))
		return 0;
	p = skip_bom_space(data, len, &n);
	return starts_ci(p, n, "<!doctype html") || starts_ci(p, n, "<html") ||
	       starts_ci(p, n, "<head") || starts_ci(p, n, "<body");
}

int sitemap_looks_xml(const char *data, size_t len)
{
	size_t n;
	const char *p;

	if (data == NULL)
		return 0;
	if (lb_is_gzip(data, len))
		return 1;
	p = skip_bom_space(data, len, &n);
	return starts_ci(p, n, "<?xml") || starts_ci(p, n, "<urlset") ||
	       starts_ci(p, n, "<sitemapindex");
}

/*
 * A text sitemap (sitemaps.org): one absolute URL a line, UTF-8. Lines that
 * are not http(s) URLs are skipped; a document with none is not a sitemap
 * (an error page served as text, say).
 */
static int parse_text(const char *data, size_t len, sitemap_fn fn, void *arg,
		      struct lb_error *err)
{
	const char *p = data, *end = data + len;
	char line[4100];
	int found = 0;

	while (p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p)), *a = p, *b;
		if (e == NULL)
			e = end;
		b = e;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r'))
			b--;
		if ((size_t)(b - a) < sizeof(line) &&
		    ((b - a > 7 && strncasecmp(a, "http://", 7) == 0) ||
		     (b - a > 8 && strncasecmp(a, "https://", 8) == 0))) {
			memcpy(line, a, (size_t)(b - a));
			line[b - a] = '\0';
			found = 1;
			if (fn(arg, 0, line, NULL) < 0)
				return -1;
		}
		p = e + 1;
	}
	if (!found)
		return lb_error_set(err, LB_EPARSE, "not a sitemap: neither XML "
				    "nor a list of URLs");
	return 0;
}

/*
 * The most attributes one element has (a linear scan of the tags that
 * skips comments, CDATA, declarations and quoted values). libxml2 checks
 * each attribute against the previous ones: a root with 100,000 attributes
 * cost 20 s. A sitemap needs a handful (namespaces); XML_MAX_ATTRS is far
 * above any real one. Nesting is bounded by libxml2 itself (256 levels).
 */
#define XML_MAX_ATTRS 256

static size_t max_attrs(const char *s, size_t n)
{
	size_t i = 0, most = 0;
	const char *p;

	while (i < n && (p = memchr(s + i, '<', n - i)) != NULL) {
		size_t attrs = 0;

		i = (size_t)(p - s) + 1;
		if (i + 2 < n && s[i] == '!' && s[i + 1] == '-' &&
		    s[i + 2] == '-') {
			p = memmem(s + i, n - i, "-->", 3);
			i = p ? (size_t)(p - s) + 3 : n;
			continue;
		}
		if (i + 7 < n && memcmp(s + i, "![CDATA[", 8) == 0) {
			p = memmem(s + i, n - i, "]]>", 3);
			i = p ? (size_t)(p - s) + 3 : n;
			continue;
		}
		if (i < n && (s[i] == '!' || s[i] == '?' || s[i] == '/')) {
			p = memchr(s + i, '>', n - i);
			i = p ? (size_t)(p - s) + 1 : n;
			continue;
		}
		while (i < n && s[i] != '>') {
			if (s[i] == '"' || s[i] == '\'') {
				p = memchr(s + i + 1, s[i], n - i - 1);
				i = p ? (size_t)(p - s) + 1 : n;
				continue;
			}
			if (s[i] == '=')
				attrs++;
			i++;
		}
		if (attrs > most)
			most = attrs;
	}
	return most;
}

int sitemap_parse_xml(const char *data, size_t len, sitemap_fn fn, void *arg,
		      struct lb_error *err)
{
	xmlTextReaderPtr r = NULL;
	char *unz = NULL;
	xmlChar *loc = NULL, *lastmod = NULL;
	int is_index = -1, depth_entry = -1, rc = -1, ret;

	sitemap_xml_setup();
	if (lb_is_gzip(data, len)) {
		size_t ulen;
		if (lb_gunzip(data, len, LB_SITEMAP_MAX_BYTES, &unz, &ulen,
			      err) < 0)
			return -1;
		data = unz;
		len = ulen;
	}
	if (len > LB_SITEMAP_MAX_BYTES) {
		lb_error_set(err, LB_ETOOBIG, "sitemap larger than %zu bytes",
			     LB_SITEMAP_MAX_BYTES);
		goto out;
	}
	{
		/* white space before "<?xml" (a stray newline from a CMS
		 * template, common in the wild) is a fatal error to libxml2;
		 * skip it, with a UTF-8 BOM before it */
		size_t k = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
		size_t w = k;
		while (w < len && (data[w] == ' ' || data[w] == '\t' ||
				   data[w] == '\r' || data[w] == '\n'))
			w++;
		if (w > k && w < len && data[w] == '<') {
			data += w;
			len -= w;
		} else if (w < len && data[w] != '<') {
			/* not markup: a text sitemap (sitemaps.org) */
			rc = parse_text(data + w, len - w, fn, arg, err);
			goto out;
		}
	}
	if (max_attrs(data, len) > XML_MAX_ATTRS) {
		lb_error_set(err, LB_EPARSE, "an element has more than %d "
			     "attributes: not a sitemap", XML_MAX_ATTRS);
		goto out;
	}
	r = xmlReaderForMemory(data, (int)len, NULL, NULL,
			       XML_PARSE_NONET | XML_PARSE_NOERROR |
				       XML_PARSE_NOWARNING | XML_PARSE_NOCDATA);
	if (r == NULL) {
		lb_error_set(err, LB_ENOMEM, "cannot create an XML reader");
		goto out;
	}
	while ((ret = xmlTextReaderRead(r)) == 1) {
		int type = xmlTextReaderNodeType(r);
		int depth = xmlTextReaderDepth(r);

		if (type == XML_READER_TYPE_DOCUMENT_TYPE) {
			lb_error_set(err, LB_EPARSE, "sitemap has a DOCTYPE "
				     "(refused: no entities in sitemaps)");
			goto out;
		}
		if (type == XML_READER_TYPE_ELEMENT && depth == 0) {
			if (name_is(r, "urlset"))
				is_index = 0;
			else if (name_is(r, "sitemapindex"))
				is_index = 1;
			else {
				lb_error_set(err, LB_EPARSE, "not a sitemap: "
					     "root element <%s>",
					     (const char *)
					     xmlTextReaderConstLocalName(r));
				goto out;
			}
			continue;
		}
		if (is_index < 0)
			continue;
		if (type == XML_READER_TYPE_ELEMENT && depth == 1 &&
		    (name_is(r, "url") || name_is(r, "sitemap"))) {
			depth_entry = 1;
			xmlFree(loc);
			xmlFree(lastmod);
			loc = lastmod = NULL;
			if (xmlTextReaderIsEmptyElement(r))
				depth_entry = -1;
			continue;
		}
		if (depth_entry == 1 && type == XML_READER_TYPE_ELEMENT &&
		    depth == 2) {
			if (name_is(r, "loc") && loc == NULL)
				loc = xmlTextReaderReadString(r);
			else if (name_is(r, "lastmod") && lastmod == NULL)
				lastmod = xmlTextReaderReadString(r);
			continue;
		}
		if (depth_entry == 1 && type == XML_READER_TYPE_END_ELEMENT &&
		    depth == 1) {
			char *l = trimmed(loc), *m = trimmed(lastmod);
			depth_entry = -1;
			if (l != NULL && *l != '\0' &&
			    fn(arg, is_index, l, m && *m ? m : NULL) < 0)
				goto out;
		}
	}
	if (ret < 0) {
		const xmlError *e = xmlGetLastError();
		lb_error_set(err, LB_EPARSE, "malformed sitemap XML%s%s",
			     e && e->message ? ": " : "",
			     e && e->message ? e->message : "");
		/* what was read before the error is kept */
	}
	if (is_index < 0 && ret >= 0) {
		lb_error_set(err, LB_EPARSE, "not a sitemap: no root element");
		goto out;
	}
	rc = ret < 0 ? -1 : 0;
out:
	xmlFree(loc);
	xmlFree(lastmod);
	xmlFreeTextReader(r);
	free(unz);
	return rc;
}

/*
 * HTML sitemaps: a linear scan for <a href> and <base href>, not a tree.
 * A sitemap page needs nothing else, and a tree has two traps on hostile
 * pages: libxml2 stops at 256 levels (a broken widget's unclosed <div>s
 * above the list hid every link: 0 URLs, every page "gone"), and without
 * that limit its end-tag handling is quadratic in the depth (200,000
 * <div>s and as many stray end tags: 2 minutes). The scanner knows
 * comments, <!...>, <?...>, quoted attribute values, and the raw text
 * of script, style, textarea, title, xmp, noscript, iframe, noembed and
 * noframes; it decodes character references in the value.
 */
static int hs_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/* The attribute value v[0..n), references decoded, trimmed; NULL = OOM. */
static char *hs_value(const char *v, size_t n)
{
	static const struct { const char *name; char c; } ent[] = {
		{ "amp;", '&' }, { "lt;", '<' }, { "gt;", '>' },
		{ "quot;", '"' }, { "apos;", '\'' }, { "amp", '&' },
	};
	char *o = malloc(n * 2 + 4), *t;
	size_t i = 0, k = 0, e;

	if (o == NULL)
		return NULL;
	while (i < n) {
		if (v[i] != '&') {
			o[k++] = v[i++];
			continue;
		}
		if (i + 2 < n && v[i + 1] == '#') {
			unsigned long cp = 0;
			size_t j = i + 2, d = 0;
			int hex = v[j] == 'x' || v[j] == 'X';

			if (hex)
				j++;
			for (; j < n && d < 8; j++, d++) {
				int c = (unsigned char)v[j], x;

				if (c >= '0' && c <= '9')
					x = c - '0';
				else if (hex && c >= 'a' && c <= 'f')
					x = c - 'a' + 10;
				else if (hex && c >= 'A' && c <= 'F')
					x = c - 'A' + 10;
				else
					break;
				cp = cp * (hex ? 16 : 10) + (unsigned long)x;
			}
			if (d > 0) {
				k += lb_utf8_put(o + k, cp == 0 || cp > 0x10FFFF ?
						 0xFFFD : (uint32_t)cp);
				i = j < n && v[j] == ';' ? j + 1 : j;
				continue;
			}
		}
		for (e = 0; e < sizeof(ent) / sizeof(ent[0]); e++) {
			size_t l = strlen(ent[e].name);

			if (i + 1 + l <= n && strncmp(v + i + 1, ent[e].name,
						      l) == 0) {
				o[k++] = ent[e].c;
				i += 1 + l;
				break;
			}
		}
		if (e == sizeof(ent) / sizeof(ent[0]))
			o[k++] = v[i++];
	}
	o[k] = '\0';
	t = trimmed((xmlChar *)o);
	memmove(o, t, strlen(t) + 1);
	return o;
}

int sitemap_parse_html(const char *data, size_t len, sitemap_fn fn,
		       void *arg, char **base_href, struct lb_error *err)
{
	static const char *const raw[] = {
		"script", "style", "textarea", "title", "xmp", "noscript",
		"iframe", "noembed", "noframes", NULL,
	};
	const char *s = data, *p;
	size_t n = len, i = 0;

	*base_href = NULL;
	while (i < n && (p = memchr(s + i, '<', n - i)) != NULL) {
		size_t name, nl, r;
		int is_a, is_base;

		i = (size_t)(p - s) + 1;
		if (i < n && s[i] == '!') {
			if (i + 2 < n && s[i + 1] == '-' && s[i + 2] == '-') {
				const char *e = i + 3 <= n ?
					memmem(s + i + 3, n - i - 3, "-->", 3) :
					NULL;
				i = e ? (size_t)(e - s) + 3 : n;
				continue;
			}
		}
		if (i < n && (s[i] == '!' || s[i] == '?' || s[i] == '/')) {
			p = memchr(s + i, '>', n - i);
			i = p ? (size_t)(p - s) + 1 : n;
			continue;
		}
		if (i >= n || !((s[i] >= 'a' && s[i] <= 'z') ||
				(s[i] >= 'A' && s[i] <= 'Z')))
			continue;
		name = i;
		while (i < n && !hs_space(s[i]) && s[i] != '/' && s[i] != '>')
			i++;
		nl = i - name;
		is_a = nl == 1 && (s[name] == 'a' || s[name] == 'A');
		is_base = nl == 4 && strncasecmp(s + name, "base", 4) == 0;
		/* attributes */
		while (i < n && s[i] != '>') {
			size_t an, al, vs = 0, vl = 0;
			int has = 0;

			if (hs_space(s[i]) || s[i] == '/') {
				i++;
				continue;
			}
			an = i;
			while (i < n && !hs_space(s[i]) && s[i] != '/' &&
			       s[i] != '>' && s[i] != '=')
				i++;
			if (i == an)
				i++;	/* a lone '=' */
			al = i - an;
			while (i < n && hs_space(s[i]))
				i++;
			if (i < n && s[i] == '=') {
				i++;
				while (i < n && hs_space(s[i]))
					i++;
				has = 1;
				if (i < n && (s[i] == '"' || s[i] == '\'')) {
					p = memchr(s + i + 1, s[i], n - i - 1);
					vs = i + 1;
					i = p ? (size_t)(p - s) : n;
					vl = i - vs;
					if (i < n)
						i++;
				} else {
					vs = i;
					while (i < n && !hs_space(s[i]) &&
					       s[i] != '>')
						i++;
					vl = i - vs;
				}
			}
			if (has && (is_a || (is_base && *base_href == NULL)) &&
			    al == 4 && strncasecmp(s + an, "href", 4) == 0) {
				char *v = hs_value(s + vs, vl);
				int rc = 0;

				if (v == NULL)
					return lb_error_set(err, LB_ENOMEM,
							    "out of memory");
				if (is_base) {
					if (*v != '\0')
						*base_href = v, v = NULL;
				} else if (*v != '\0') {
					rc = fn(arg, 0, v, NULL);
				}
				free(v);
				if (rc < 0) {
					if (err->code == LB_EOK)
						lb_error_set(err, LB_EINTERNAL,
							     "HTML sitemap walk "
							     "failed");
					return -1;
				}
				is_a = is_base = 0;	/* the first href wins */
			}
		}
		if (i < n)
			i++;	/* '>' */
		for (r = 0; raw[r] != NULL; r++)
			if (strlen(raw[r]) == nl &&
			    strncasecmp(s + name, raw[r], nl) == 0)
				break;
		if (raw[r] != NULL) {
			/* skip to the end tag */
			while (i < n && (p = memchr(s + i, '<', n - i)) != NULL) {
				i = (size_t)(p - s);
				if (i + 2 + nl <= n && s[i + 1] == '/' &&
				    strncasecmp(s + i + 2, raw[r], nl) == 0)
					break;
				i++;
			}
			if (p == NULL)
				i = n;
		}
	}
	return 0;
}
