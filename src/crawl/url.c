/* url.c - URL resolution and normalisation with libcurl's URL API. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "linkbot/url.h"
#include "crawl_int.h"

#define URL_MAX 4096

/*
 * RFC 3986 6.2.2 on path and query, into a new string (NULL: no memory):
 * escapes of unreserved characters decoded, the others' hex in upper case,
 * so that one resource has one spelling ("caf%c3%a9" = "caf%C3%A9",
 * "%7Euser" = "~user"); a bare '%' becomes "%25".
 */
static char *pct_normalize(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *d = malloc(strlen(s) * 3 + 1), *o = d;

	if (d == NULL)
		return NULL;

	for (; *s != '\0'; s++) {
		int a, b;
		if (*s == '%' && (a = lb_url_hexval((unsigned char)s[1])) >= 0 &&
		    (b = lb_url_hexval((unsigned char)s[2])) >= 0) {
			int v = a * 16 + b;
			if (isalnum(v) || v == '-' || v == '.' || v == '_' ||
			    v == '~') {
				*o++ = (char)v;
			} else {
				*o++ = '%';
				*o++ = hex[a];
				*o++ = hex[b];
			}
			s += 2;
		} else if (*s == '%') {
			/* a bare '%': "%%331" must not become "%31" here and
			 * "1" on the next pass (found by fuzz_url) */
			*o++ = '%';
			*o++ = '2';
			*o++ = '5';
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return d;
}

/*
 * RFC 3986 5.2.4 in place on an absolute path. curl removed the dot
 * segments it saw, but "%2e%2e" only becomes ".." in pct_normalize()
 * (6.2.2: decode, then remove dot segments), and curl would remove it
 * when fetching: "/ok/%2e%2e/blocked/x" must be "/blocked/x" before
 * robots.txt and the sets look at it. Empty segments are kept.
 */
static void remove_dots(char *path)
{
	size_t n;

	if (*path != '/' || strstr(path, "/.") == NULL)
		return;
	n = lb_url_remove_dots(path, strlen(path), path);
	if (n == 0)
		path[n++] = '/';
	path[n] = '\0';
}

/* 1 if h is a dotted quad in its one spelling: 4 numbers, 0-255, no
 * leading zero. */
static int dotted_quad(const char *h)
{
	int parts = 0;

	for (;;) {
		int v = 0, d = 0;

		while (*h >= '0' && *h <= '9' && d < 4)
			v = v * 10 + (*h++ - '0'), d++;
		if (d == 0 || d > 3 || v > 255 || (d > 1 && h[-d] == '0'))
			return 0;
		parts++;
		if (*h == '\0')
			return parts == 4;
		if (*h++ != '.' || parts == 4)
			return 0;
	}
}

/* 1 if h reads as an IPv4 address in some spelling: every label a
 * number, decimal, octal (leading 0) or hex (0x), as curl and browsers
 * parse it ("0xb02" is 0.0.11.2; "cafe.be" is a name). */
static int ipv4_like(const char *h)
{
	for (;;) {
		size_t n = strcspn(h, ".");

		if (n == 0)
			return 0;
		if (n >= 2 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X')) {
			if (strspn(h + 2, "0123456789abcdefABCDEF") != n - 2)
				return 0;
		} else if (strspn(h, "0123456789") != n) {
			return 0;
		}
		h += n;
		if (*h == '\0')
			return 1;
		h++;
	}
}

int url_normalize(const char *url, const char *base, char **out)
{
	CURLU *h = NULL;
	char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;
	char *query = NULL, *res = NULL, *cpath = NULL, *cquery = NULL;
	char *npath = NULL, *nquery = NULL;
	const char *s;
	size_t n;
	int rc = -1;

	*out = NULL;
	if (url == NULL)
		return -1;
	while (*url == ' ' || *url == '\t' || *url == '\n' || *url == '\r')
		url++;
	n = strlen(url);
	while (n > 0 && (url[n - 1] == ' ' || url[n - 1] == '\t' ||
			 url[n - 1] == '\n' || url[n - 1] == '\r'))
		n--;
	if (n == 0 || n > URL_MAX)
		return -1;
	for (s = url; s < url + n; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return -1;
	if ((h = curl_url()) == NULL)
		return -1;
	{
		char *u = strndup(url, n);
		CURLUcode uc;
		if (u == NULL)
			goto out;
		if (base != NULL &&
		    curl_url_set(h, CURLUPART_URL, base, 0) != CURLUE_OK) {
			free(u);
			goto out;
		}
		uc = curl_url_set(h, CURLUPART_URL, u,
				  CURLU_URLENCODE | CURLU_ALLOW_SPACE);
		if (uc != CURLUE_OK)
			uc = curl_url_set(h, CURLUPART_URL, u, 0);
		free(u);
		if (uc != CURLUE_OK)
			goto out;
	}
	if (curl_url_get(h, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(h, CURLUPART_HOST, &host, 0) != CURLUE_OK)
		goto out;
	for (char *p = scheme; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	for (char *p = host; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)
		goto out;
	/* a host is letters, digits, '.', '-', '_' (punycode for IDN), or
	 * an IPv6 literal: "%"-escapes or raw bytes there decode anew on
	 * each pass (found by fuzz_url) */
	if (*host == '\0' ||
	    host[strspn(host, "abcdefghijklmnopqrstuvwxyz0123456789.-_[]:")] !=
		    '\0')
		goto out;
	/* IPv4 shorthands (1312, 0x7f.1, 010.0.0.1, and "0xb%30%32", which
	 * curl decodes to 0xb02 after its own IPv4 pass) that curl would
	 * spell otherwise on the next pass: only the dotted quad is taken */
	if (ipv4_like(host) && !dotted_quad(host))
		goto out;
	{
		char *user = NULL;
		/* credentials in a crawled URL: refuse rather than send them */
		if (curl_url_get(h, CURLUPART_USER, &user, 0) == CURLUE_OK) {
			curl_free(user);
			goto out;
		}
	}
	if (curl_url_get(h, CURLUPART_PORT, &port, CURLU_NO_DEFAULT_PORT) !=
	    CURLUE_OK)
		port = NULL;
	if (curl_url_get(h, CURLUPART_PATH, &cpath, 0) != CURLUE_OK)
		cpath = NULL;
	if (curl_url_get(h, CURLUPART_QUERY, &cquery, 0) != CURLUE_OK)
		cquery = NULL;
	path = cpath;
	query = cquery;
	if (path != NULL) {
		if ((npath = pct_normalize(path)) == NULL)
			goto out;
		remove_dots(npath);
	}
	if (query != NULL && (nquery = pct_normalize(query)) == NULL)
		goto out;
	path = npath;
	query = nquery;
	n = strlen(scheme) + strlen(host) + (port ? strlen(port) : 0) +
	    (path ? strlen(path) : 0) + (query ? strlen(query) : 0) + 16;
	if ((res = malloc(n)) == NULL)
		goto out;
	snprintf(res, n, "%s://%s%s%s%s%s%s", scheme, host, port ? ":" : "",
		 port ? port : "", path && *path ? path : "/",
		 query && *query ? "?" : "", query && *query ? query : "");
	*out = res;
	rc = 0;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(cpath);
	curl_free(cquery);
	free(npath);
	free(nquery);
	curl_url_cleanup(h);
	return rc;
}

char *url_origin(const char *url)
{
	struct lb_url_parts u;

	lb_url_split(url, strcspn(url, "#"), &u);
	if (!u.has_auth)
		return NULL;
	return strndup(url, (size_t)(u.auth + u.auth_n - url));
}

const char *url_path_query(const char *url)
{
	struct lb_url_parts u;
	const char *s;

	lb_url_split(url, strcspn(url, "#"), &u);
	if (!u.has_auth)
		return url;
	s = u.auth + u.auth_n;
	return *s ? s : "/";
}
