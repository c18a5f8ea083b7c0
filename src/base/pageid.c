/*
 * pageid.c - URL normalisation and hashing: the page ID contract.
 *
 * The rules are written in docs/page-id.md; this file follows them step by
 * step (the step numbers in comments are the document's). The JavaScript twin
 * is src/edge/pageid.js; tests/data/page-id/vectors.json holds both to it.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>


#include "linkbot/buf.h"
#include "linkbot/pageid.h"
#include "linkbot/sha256.h"
#include "linkbot/url.h"

static int is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	       c == '~';
}

static const char HEX[] = "0123456789ABCDEF";

/*
 * Percent-decodes every valid escape of s into a new string; *len is its
 * length, which is beyond the first NUL when s held "%00".
 */
static char *pct_decode_all(const char *s, size_t *len)
{
	size_t n = strlen(s), i, o = 0;
	char *out = malloc(n + 1);

	if (out == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		int h, l;
		if (s[i] == '%' && i + 2 < n &&
		    (h = lb_url_hexval((unsigned char)s[i + 1])) >= 0 &&
		    (l = lb_url_hexval((unsigned char)s[i + 2])) >= 0) {
			out[o++] = (char)(h * 16 + l);
			i += 2;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	*len = o;
	return out;
}

static int starts_with_ci(const char *s, const char *prefix)
{
	return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

static int contains_ci(const char *s, const char *needle)
{
	size_t n = strlen(needle);

	for (; *s != '\0'; s++)
		if (strncasecmp(s, needle, n) == 0)
			return 1;
	return 0;
}

/*
 * Appends s[0..n) with escapes normalised (step 8.1) and every byte that is
 * neither unreserved nor in `allowed` percent-encoded (8.2 / 9.2). With
 * plus_is_space, '+' is first read as a space.
 */
static int append_normalised(struct lb_buf *b, const char *s, size_t n,
			     const char *allowed, int plus_is_space,
			     struct lb_error *err)
{
	size_t i;
	char esc[3];

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int h, l;

		if (c == '%' && i + 2 < n &&
		    (h = lb_url_hexval((unsigned char)s[i + 1])) >= 0 &&
		    (l = lb_url_hexval((unsigned char)s[i + 2])) >= 0) {
			unsigned char d = (unsigned char)(h * 16 + l);
			i += 2;
			if (is_unreserved(d)) {
				if (lb_buf_addc(b, (char)d, err) < 0)
					return -1;
				continue;
			}
			c = d;
		} else if (c == '+' && plus_is_space) {
			c = ' ';
		} else if (c != '%' && (is_unreserved(c) ||
					(c != '\0' && strchr(allowed, c)))) {
			if (lb_buf_addc(b, (char)c, err) < 0)
				return -1;
			continue;
		}
		esc[0] = '%';
		esc[1] = HEX[c >> 4];
		esc[2] = HEX[c & 15];
		if (lb_buf_add(b, esc, 3, err) < 0)
			return -1;
	}
	return 0;
}

/* RFC 3986 5.2.4 on a path that starts with '/', then steps 8.4 and 8.5. */
static char *clean_path(const char *in)
{
	size_t n = strlen(in);
	char *out = malloc(n + 2);
	size_t o = 0;
	const char *p = in;

	if (out == NULL)
		return NULL;
	while (*p != '\0') {
		const char *seg, *end;
		size_t len;

		while (*p == '/')
			p++;
		seg = p;
		end = strchr(seg, '/');
		if (end == NULL)
			end = seg + strlen(seg);
		len = (size_t)(end - seg);
		p = end;
		if (len == 0)
			continue;
		if (len == 1 && seg[0] == '.')
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;	/* the slash before the segment */
			continue;
		}
		out[o++] = '/';
		memcpy(out + o, seg, len);
		o += len;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

struct qparam {
	char *name;
	char *value;
};

static int qparam_cmp(const void *a, const void *b)
{
	const struct qparam *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c != 0 ? c : strcmp(x->value, y->value);
}

static int name_kept(const struct lb_qrule *rule, const char *name)
{
	size_t i;

	if (rule->keep_all)
		return 1;
	for (i = 0; i < rule->n_names; i++)
		if (strcmp(rule->names[i], name) == 0)
			return 1;
	return 0;
}

static const char QUERY_ALLOWED[] = "!$'()*,;:@/";
static const char PATH_ALLOWED[] = "!$&'()*+,;=:@/";

/* Step 9: the kept, normalised, sorted query; "" when nothing is kept. */
static int normalise_query(const char *q, const struct lb_qrule *rule,
			   struct lb_buf *out, struct lb_error *err)
{
	struct qparam *params = NULL;
	size_t n = 0, alloc = 0, i;
	const char *p = q;
	int rc = -1;

	while (*p != '\0') {
		const char *amp = strchr(p, '&');
		const char *end = amp ? amp : p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(end - p));
		struct lb_buf nb, vb;

		if (end == p) {
			p = amp ? amp + 1 : end;
			continue;
		}
		lb_buf_init(&nb, LB_PAGEID_MAX_INPUT * 3);
		lb_buf_init(&vb, LB_PAGEID_MAX_INPUT * 3);
		if (append_normalised(&nb, p, (size_t)((eq ? eq : end) - p),
				      QUERY_ALLOWED, 1, err) < 0 ||
		    (eq && append_normalised(&vb, eq + 1,
					     (size_t)(end - eq - 1),
					     QUERY_ALLOWED, 1, err) < 0)) {
			lb_buf_release(&nb);
			lb_buf_release(&vb);
			goto out;
		}
		if (n == alloc) {
			size_t na = alloc ? alloc * 2 : 8;
			struct qparam *np = realloc(params, na * sizeof(*np));
			if (np == NULL) {
				lb_buf_release(&nb);
				lb_buf_release(&vb);
				lb_error_set(err, LB_ENOMEM, "out of memory");
				goto out;
			}
			params = np;
			alloc = na;
		}
		params[n].name = lb_buf_take(&nb);
		params[n].value = lb_buf_take(&vb);
		n++;
		p = amp ? amp + 1 : end;
	}
	if (n > 1)	/* params is NULL when the query has none */
		qsort(params, n, sizeof(*params), qparam_cmp);
	for (i = 0; i < n; i++) {
		if (!name_kept(rule, params[i].name))
			continue;
		if ((out->len > 0 && lb_buf_addc(out, '&', err) < 0) ||
		    lb_buf_printf(out, err, "%s=%s", params[i].name,
				  params[i].value) < 0)
			goto out;
	}
	rc = 0;
out:
	for (i = 0; i < n; i++) {
		free(params[i].name);
		free(params[i].value);
	}
	free(params);
	return rc;
}

/* Step 6: host[:port], host = letters digits - . or [v6 literal]. */
static int valid_authority(const char *a, size_t n)
{
	size_t i = 0, host_end;

	if (n == 0)
		return 0;
	if (a[0] == '[') {
		for (i = 1; i < n && a[i] != ']'; i++)
			if (lb_url_hexval((unsigned char)a[i]) < 0 && a[i] != ':' &&
			    a[i] != '.')
				return 0;
		if (i >= n || i == 1)
			return 0;
		host_end = ++i;
	} else {
		if (a[0] == '.' || a[0] == '-')
			return 0;
		for (; i < n && a[i] != ':'; i++) {
			unsigned char c = (unsigned char)a[i];
			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			      (c >= '0' && c <= '9') || c == '-' || c == '.' ||
			      c == '_' || c >= 0x80))
				return 0;
		}
		host_end = i;
		if (host_end == 0)
			return 0;
	}
	if (host_end == n)
		return 1;
	if (a[host_end] != ':')
		return 0;
	if (n - host_end - 1 > 5)	/* "host:" is the default port */
		return 0;
	for (i = host_end + 1; i < n; i++)
		if (a[i] < '0' || a[i] > '9')
			return 0;
	return 1;
}

int pageid_normalize(const char *url, const struct lb_qrule *rule,
		     char **key, struct lb_error *err)
{
	static const struct lb_qrule drop_all = { 0, NULL, 0 };
	char *v = NULL, *path = NULL, *cleaned = NULL;
	const char *p, *rest, *q;
	size_t n, i;
	struct lb_buf pb, qb, out;
	int rc = -1;

	*key = NULL;
	if (rule == NULL)
		rule = &drop_all;
	lb_buf_init(&pb, LB_PAGEID_MAX_INPUT * 3 + 16);
	lb_buf_init(&qb, LB_PAGEID_MAX_INPUT * 3 + 16);
	lb_buf_init(&out, LB_PAGEID_MAX_INPUT * 6 + 16);

	/* 1. trim */
	while (*url == ' ' || *url == '\t' || *url == '\r' || *url == '\n' ||
	       *url == '\f')
		url++;
	n = strlen(url);
	while (n > 0 && (url[n - 1] == ' ' || url[n - 1] == '\t' ||
			 url[n - 1] == '\r' || url[n - 1] == '\n' ||
			 url[n - 1] == '\f'))
		n--;
	v = strndup(url, n);
	if (v == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	/* 2. doubly encoded */
	if (starts_with_ci(v, "http%3a") || starts_with_ci(v, "https%3a") ||
	    starts_with_ci(v, "%2f") ||
	    (strchr(v, '/') == NULL && contains_ci(v, "%2f"))) {
		size_t dlen;
		char *d = pct_decode_all(v, &dlen);
		if (d == NULL) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		free(v);
		v = d;
		/* a decoded NUL is a control byte too (step 3) */
		if (dlen != strlen(v)) {
			lb_error_set(err, LB_EINVALID,
				     "the URL contains a control character or "
				     "a backslash");
			goto out;
		}
	}
	/* 3. refuse */
	n = strlen(v);
	if (n == 0) {
		lb_error_set(err, LB_EINVALID, "the URL is empty");
		goto out;
	}
	if (n > LB_PAGEID_MAX_INPUT) {
		lb_error_set(err, LB_EINVALID,
			     "the URL is longer than %d bytes",
			     LB_PAGEID_MAX_INPUT);
		goto out;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];
		if (c < 0x20 || c == 0x7f || c == '\\') {
			lb_error_set(err, LB_EINVALID,
				     "the URL contains a control character or "
				     "a backslash");
			goto out;
		}
	}
	/* 4. fragment */
	if ((path = strchr(v, '#')) != NULL)
		*path = '\0';
	path = NULL;
	/* 5. scheme */
	p = v;
	if (starts_with_ci(p, "http://"))
		p += 7;
	else if (starts_with_ci(p, "https://"))
		p += 8;
	else if (p[0] == '/' && p[1] == '/')
		p += 2;
	else {
		const char *s = p;
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) {
			while ((*s >= 'a' && *s <= 'z') ||
			       (*s >= 'A' && *s <= 'Z') ||
			       (*s >= '0' && *s <= '9') || *s == '+' ||
			       *s == '-' || *s == '.')
				s++;
			if (strncmp(s, "://", 3) == 0) {
				lb_error_set(err, LB_EINVALID,
					     "only http and https URLs are "
					     "accepted");
				goto out;
			}
		}
	}
	/* 6. authority */
	rest = p;
	if (*p != '/') {
		size_t alen = strcspn(p, "/?");
		if (!valid_authority(p, alen)) {
			lb_error_set(err, LB_EINVALID,
				     "the URL has no valid host: give a full "
				     "URL, host/path, or a path starting "
				     "with '/'");
			goto out;
		}
		rest = p + alen;
	}
	/* 7. path and query */
	q = strchr(rest, '?');
	/* 8. path */
	if (lb_buf_addc(&pb, '/', err) < 0 ||
	    append_normalised(&pb, rest,
			      q ? (size_t)(q - rest) : strlen(rest),
			      PATH_ALLOWED, 0, err) < 0)
		goto out;
	cleaned = clean_path(pb.data);
	if (cleaned == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	n = strlen(cleaned);
	if (n > 1 && cleaned[n - 1] == '/')
		cleaned[n - 1] = '\0';
	/* 9. query */
	if (q != NULL && normalise_query(q + 1, rule, &qb, err) < 0)
		goto out;
	/* 10. key */
	if (lb_buf_adds(&out, cleaned, err) < 0 ||
	    (qb.len > 0 && lb_buf_printf(&out, err, "?%s", qb.data) < 0))
		goto out;
	*key = lb_buf_take(&out);
	rc = 0;
out:
	free(v);
	free(cleaned);
	lb_buf_release(&pb);
	lb_buf_release(&qb);
	lb_buf_release(&out);
	return rc;
}

void pageid_hash(const char *key, char id[LB_PAGEID_LEN + 1])
{
	lb_sha256_hex(key, strlen(key), id, LB_PAGEID_LEN);
}

int pageid_of_url(const char *url, const struct lb_qrule *rule,
		  char id[LB_PAGEID_LEN + 1], struct lb_error *err)
{
	char *key = NULL;

	if (pageid_normalize(url, rule, &key, err) < 0)
		return -1;
	pageid_hash(key, id);
	free(key);
	return 0;
}
