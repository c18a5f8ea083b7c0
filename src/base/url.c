/* url.c - the one URL parser; see url.h. */
#include <string.h>

#include "linkbot/url.h"

void lb_url_split(const char *s, size_t n, struct lb_url_parts *p)
{
	size_t i = 0, k;

	memset(p, 0, sizeof(*p));
	/* scheme ":" if the first characters make one */
	for (k = 0; k < n; k++) {
		char c = s[k];

		if (c == ':') {
			if (k > 0) {
				p->scheme = s;
				p->scheme_n = k;
				i = k + 1;
			}
			break;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (k > 0 && ((c >= '0' && c <= '9') || c == '+' ||
				 c == '-' || c == '.'))))
			break;
	}
	if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
		p->has_auth = 1;
		p->auth = s + i + 2;
		for (k = i + 2; k < n && s[k] != '/' && s[k] != '?'; k++)
			;
		p->auth_n = (size_t)(s + k - p->auth);
		i = k;
	}
	p->path = s + i;
	for (k = i; k < n && s[k] != '?'; k++)
		;
	p->path_n = k - i;
	if (k < n) {
		p->has_query = 1;
		p->query = s + k + 1;
		p->query_n = n - k - 1;
	}
}

const char *lb_url_host(const char *url, size_t *n)
{
	const char *h = strstr(url, "://"), *e, *at;

	if (h == NULL) {
		*n = 0;
		return url;
	}
	h += 3;
	e = h + strcspn(h, "/?#");
	/* user info: the host follows the last '@' of the authority */
	for (at = e; at > h && at[-1] != '@'; at--)
		;
	h = at;
	if (*h == '[')
		e = h + strcspn(h, "]/?#") + (h[strcspn(h, "]/?#")] == ']');
	else
		e = h + strcspn(h, ":/?#");
	*n = (size_t)(e - h);
	return h;
}

size_t lb_url_remove_dots(const char *in, size_t n, char *out)
{
	size_t o = 0, i = 0;

	while (i < n) {
		if (n - i >= 3 && memcmp(in + i, "../", 3) == 0) {
			i += 3;
		} else if (n - i >= 2 && memcmp(in + i, "./", 2) == 0) {
			i += 2;
		} else if (n - i >= 3 && memcmp(in + i, "/./", 3) == 0) {
			i += 2;
		} else if (n - i == 2 && memcmp(in + i, "/.", 2) == 0) {
			i += 2;
			out[o++] = '/';
		} else if ((n - i >= 4 && memcmp(in + i, "/../", 4) == 0) ||
			   (n - i == 3 && memcmp(in + i, "/..", 3) == 0)) {
			int last = (n - i == 3);

			i += 3;
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			if (last)
				out[o++] = '/';
		} else if ((n - i == 1 && in[i] == '.') ||
			   (n - i == 2 && memcmp(in + i, "..", 2) == 0)) {
			i = n;
		} else {
			if (in[i] == '/')
				out[o++] = in[i++];
			while (i < n && in[i] != '/')
				out[o++] = in[i++];
		}
	}
	return o;
}

int lb_url_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
