/*
 * url.c - relative references resolved against the page URL (RFC 3986
 * section 5.2, with the WHATWG leniencies browsers apply to http(s):
 * surrounding white space trimmed, tabs and newlines removed, '\' read as
 * '/'). Only http and https URLs come out; the fragment is dropped; bytes
 * that cannot stand in a URL (space, controls, non-ASCII, quotes, <>) are
 * percent-encoded. Scheme and host are lower-cased; the rest is kept as
 * written, since the page ID (docs/page-id.md) normalises later.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "linkbot/buf.h"
#include "linkbot/url.h"
#include "extract_int.h"

static int addpct(struct lb_buf *b, const char *s, size_t n, int lower)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[3];

		if (c <= 0x20 || c >= 0x7F || c == '"' || c == '<' ||
		    c == '>' || c == '`' || c == '{' || c == '}' || c == '|' ||
		    c == '^') {
			e[0] = '%';
			e[1] = hex[c >> 4];
			e[2] = hex[c & 15];
			if (lb_buf_add(b, e, 3, NULL) < 0)
				return -1;
			continue;
		}
		if (lower && c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		if (lb_buf_addc(b, (char)c, NULL) < 0)
			return -1;
	}
	return 0;
}

static int is_http(const char *s, size_t n)
{
	return (n == 4 && strncasecmp(s, "http", 4) == 0) ||
	       (n == 5 && strncasecmp(s, "https", 5) == 0);
}

char *x_url_resolve(const char *base, const char *ref, size_t n, int *oom)
{
	struct lb_url_parts b, r;
	struct lb_buf out, path;
	char *clean = NULL, *res = NULL, *tmp = NULL;
	size_t i, k = 0, bn;

	lb_buf_init(&out, X_MAX_URL + 64);
	lb_buf_init(&path, 4 * X_MAX_URL);
	if (n == (size_t)-1)
		n = strlen(ref);
	while (n > 0 && (unsigned char)*ref <= 0x20)
		ref++, n--;
	while (n > 0 && (unsigned char)ref[n - 1] <= 0x20)
		n--;
	if (n == 0 || n > X_MAX_URL)
		goto out;
	if ((clean = malloc(n + 1)) == NULL)
		goto oom;
	for (i = 0; i < n && ref[i] != '#'; i++) {
		if (ref[i] == '\t' || ref[i] == '\n' || ref[i] == '\r')
			continue;
		clean[k++] = ref[i] == '\\' ? '/' : ref[i];
	}
	clean[k] = '\0';
	lb_url_split(clean, k, &r);
	if (r.scheme != NULL && !is_http(r.scheme, r.scheme_n))
		goto out;
	if (r.scheme != NULL && r.has_auth) {
		b = r;		/* absolute: only the path is cleaned */
	} else {
		if (base == NULL)
			goto out;
		bn = strlen(base);
		lb_url_split(base, bn, &b);
		if (b.scheme == NULL || !is_http(b.scheme, b.scheme_n) ||
		    !b.has_auth || b.auth_n == 0)
			goto out;
		if (r.scheme != NULL) {
			/* "http:path": same scheme as the base means relative */
			if (r.scheme_n != b.scheme_n ||
			    strncasecmp(r.scheme, b.scheme, b.scheme_n) != 0)
				goto out;
			r.scheme = NULL;
		}
		if (r.has_auth) {
			b.auth = r.auth;
			b.auth_n = r.auth_n;
			b.path = r.path;
			b.path_n = r.path_n;
			b.has_query = r.has_query;
			b.query = r.query;
			b.query_n = r.query_n;
		} else if (r.path_n == 0) {
			if (r.has_query) {
				b.has_query = 1;
				b.query = r.query;
				b.query_n = r.query_n;
			}
		} else {
			if (r.path[0] == '/') {
				if (lb_buf_add(&path, r.path, r.path_n, NULL) < 0)
					goto oom;
			} else {
				/* merge: the base path up to its last '/' */
				size_t cut = b.path_n;

				while (cut > 0 && b.path[cut - 1] != '/')
					cut--;
				if (cut == 0 && lb_buf_addc(&path, '/', NULL) < 0)
					goto oom;
				if (lb_buf_add(&path, b.path, cut, NULL) < 0 ||
				    lb_buf_add(&path, r.path, r.path_n, NULL) < 0)
					goto oom;
			}
			b.path = path.data;
			b.path_n = path.len;
			b.has_query = r.has_query;
			b.query = r.query;
			b.query_n = r.query_n;
		}
	}
	if (b.auth_n == 0 || memchr(b.auth, '@', b.auth_n) != NULL)
		goto out;
	if ((tmp = malloc(b.path_n + 2)) == NULL)
		goto oom;
	k = lb_url_remove_dots(b.path, b.path_n, tmp);
	if (k == 0)
		tmp[k++] = '/';
	if (addpct(&out, b.scheme, b.scheme_n, 1) < 0 ||
	    lb_buf_add(&out, "://", 3, NULL) < 0 ||
	    addpct(&out, b.auth, b.auth_n, 1) < 0 ||
	    addpct(&out, tmp, k, 0) < 0)
		goto oom;
	if (b.has_query && b.query_n > 0 &&
	    (lb_buf_addc(&out, '?', NULL) < 0 ||
	     addpct(&out, b.query, b.query_n, 0) < 0))
		goto oom;
	if (out.len > X_MAX_URL)
		goto out;
	res = lb_buf_take(&out);
	goto out;
oom:
	*oom = 1;
out:
	free(clean);
	free(tmp);
	lb_buf_release(&out);
	lb_buf_release(&path);
	return res;
}

char *x_url_path(const char *url, int *oom)
{
	struct lb_url_parts p;
	char *s;

	lb_url_split(url, strlen(url), &p);
	if (p.path_n == 0) {
		p.path = "/";
		p.path_n = 1;
	}
	if ((s = strndup(p.path, p.path_n)) == NULL)
		*oom = 1;
	return s;
}

char *x_url_query(const char *url, int *oom)
{
	struct lb_url_parts p;
	char *s;

	lb_url_split(url, strlen(url), &p);
	if (!p.has_query || p.query_n == 0)
		return NULL;
	if ((s = strndup(p.query, p.query_n)) == NULL)
		*oom = 1;
	return s;
}
