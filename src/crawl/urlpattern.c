/* urlpattern.c - URL patterns of sets; see urlpattern.h. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "linkbot/urlpattern.h"

struct pattern {
	int negative;
	char *scheme;		/* lower case, NULL = http or https */
	char *host;		/* lower-case glob, NULL = any */
	char *port;		/* glob, NULL = any */
	char *path;		/* glob, trailing '/' dropped */
	char *query;		/* glob, NULL = query ignored */
};

struct lb_urlset {
	struct pattern *p;
	size_t n;
};

/* The parts of a URL, pointing into one scratch copy. */
struct parts {
	char *scheme, *host, *port, *path, *query;
};

static void lower(char *s)
{
	for (; s != NULL && *s != '\0'; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* Drops one trailing '/' unless the path is "/" (page IDs ignore it). */
static void trim_slash(char *path)
{
	size_t n = strlen(path);

	if (n > 1 && path[n - 1] == '/')
		path[n - 1] = '\0';
}

/*
 * Glob match: '*' any run (even empty), "{...}" a non-empty run without '/'
 * or '?'. Backtracking; patterns are short and written by the operator.
 */
static int glob(const char *p, const char *s)
{
	while (*p != '\0') {
		if (*p == '*') {
			while (*p == '*')
				p++;
			if (*p == '\0')
				return 1;
			for (; *s != '\0'; s++)
				if (glob(p, s))
					return 1;
			return glob(p, s);
		}
		if (*p == '{') {
			const char *e = strchr(p, '}');
			size_t i;
			if (e == NULL)
				return 0;	/* rejected at compile time */
			p = e + 1;
			for (i = 0; s[i] != '\0' && s[i] != '/' && s[i] != '?';
			     i++)
				if (glob(p, s + i + 1))
					return 1;
			return 0;
		}
		if (*p != *s)
			return 0;
		p++;
		s++;
	}
	return *s == '\0';
}

/* Splits an absolute URL in place; 0 ok, -1 not an absolute http(s) URL. */
static int split_url(char *u, struct parts *pt)
{
	char *s = strstr(u, "://"), *h, *e, *q, *hash;

	memset(pt, 0, sizeof(*pt));
	if (s == NULL || s == u)
		return -1;
	*s = '\0';
	pt->scheme = u;
	lower(pt->scheme);
	h = s + 3;
	if ((hash = strchr(h, '#')) != NULL)
		*hash = '\0';
	e = h + strcspn(h, "/?");
	q = strchr(e, '?');
	if (q != NULL)
		*q++ = '\0';
	pt->query = q;
	/* path: from e; it starts with '/' or is empty */
	if (*e == '/') {
		size_t hl = (size_t)(e - h);
		memmove(h - 1, h, hl);	/* make room for the NUL after host */
		h--;
		h[hl] = '\0';
		pt->path = e;
	} else {
		pt->path = "/";
		*e = '\0';
	}
	pt->host = h;
	if (*h == '[') {
		char *rb = strchr(h, ']');
		if (rb == NULL)
			return -1;
		if (rb[1] == ':')
			pt->port = rb + 2, rb[1] = '\0';
	} else if ((e = strrchr(h, ':')) != NULL) {
		*e = '\0';
		pt->port = e + 1;
	}
	lower(pt->host);
	if (*pt->host == '\0')
		return -1;
	return 0;
}

static void pattern_release(struct pattern *p)
{
	free(p->scheme);
	free(p->host);
	free(p->port);
	free(p->path);
	free(p->query);
}

static int check_braces(const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '}')
			return -1;
		if (*s == '{') {
			const char *e = strchr(s, '}');
			if (e == NULL || memchr(s + 1, '{', (size_t)(e - s - 1)))
				return -1;
			s = e;
		}
	}
	return 0;
}

static char *dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d != NULL) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static int pattern_parse(const char *src, struct pattern *p,
			 struct lb_error *err)
{
	const char *s = src, *e, *hostend;

	memset(p, 0, sizeof(*p));
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '!') {
		p->negative = 1;
		s++;
	}
	if (*s == '\0')
		return lb_error_set(err, LB_ECONFIG, "empty URL pattern '%s'",
				    src);
	if ((e = strstr(s, "://")) != NULL && e < s + strcspn(s, "/?")) {
		p->scheme = dupn(s, (size_t)(e - s));
		if (p->scheme == NULL)
			goto nomem;
		lower(p->scheme);
		if (strcmp(p->scheme, "http") != 0 &&
		    strcmp(p->scheme, "https") != 0) {
			lb_error_set(err, LB_ECONFIG,
				     "URL pattern '%s': scheme must be http or "
				     "https", src);
			goto fail;
		}
		s = e + 3;
	}
	if (*s != '/' && *s != '?') {
		const char *colon;
		hostend = s + strcspn(s, "/?#");
		colon = memchr(s, ':', (size_t)(hostend - s));
		if (*s == '[') {
			const char *rb = memchr(s, ']', (size_t)(hostend - s));
			colon = (rb != NULL && rb[1] == ':') ? rb + 1 : NULL;
		}
		p->host = dupn(s, (size_t)((colon ? colon : hostend) - s));
		if (p->host == NULL)
			goto nomem;
		lower(p->host);
		if (*p->host == '\0' || strpbrk(p->host, "{}@ ") != NULL) {
			lb_error_set(err, LB_ECONFIG,
				     "URL pattern '%s': bad host", src);
			goto fail;
		}
		if (colon != NULL) {
			p->port = dupn(colon + 1, (size_t)(hostend - colon - 1));
			if (p->port == NULL)
				goto nomem;
			if (*p->port == '\0' ||
			    strspn(p->port, "0123456789*") != strlen(p->port)) {
				lb_error_set(err, LB_ECONFIG,
					     "URL pattern '%s': bad port", src);
				goto fail;
			}
		}
		s = hostend;
	} else if (p->scheme != NULL) {
		lb_error_set(err, LB_ECONFIG, "URL pattern '%s': a scheme needs "
			     "a host", src);
		goto fail;
	}
	if (*s == '#') {
		lb_error_set(err, LB_ECONFIG, "URL pattern '%s': fragments are "
			     "never matched", src);
		goto fail;
	}
	e = strchr(s, '?');
	if (e != NULL) {
		p->path = dupn(s, (size_t)(e - s));
		p->query = strdup(e + 1);
		if (p->query == NULL)
			goto nomem;
	} else {
		p->path = strdup(s);
	}
	if (p->path == NULL)
		goto nomem;
	if (*p->path == '\0') {
		free(p->path);
		/* a host alone: every page of it */
		p->path = strdup(p->query ? "/" : "/*");
		if (p->path == NULL)
			goto nomem;
	}
	if (strchr(p->path, '#') != NULL ||
	    (p->query && strchr(p->query, '#') != NULL)) {
		lb_error_set(err, LB_ECONFIG, "URL pattern '%s': fragments are "
			     "never matched", src);
		goto fail;
	}
	if (check_braces(p->path) < 0 ||
	    (p->query != NULL && check_braces(p->query) < 0)) {
		lb_error_set(err, LB_ECONFIG, "URL pattern '%s': unbalanced "
			     "'{' '}'", src);
		goto fail;
	}
	trim_slash(p->path);
	return 0;
nomem:
	lb_error_set(err, LB_ENOMEM, "out of memory");
fail:
	pattern_release(p);
	return -1;
}

static int pattern_match(const struct pattern *p, const struct parts *u)
{
	const char *port = u->port;

	if (p->scheme != NULL) {
		if (strcmp(p->scheme, u->scheme) != 0)
			return 0;
	} else if (strcmp(u->scheme, "http") != 0 &&
		   strcmp(u->scheme, "https") != 0) {
		return 0;
	}
	if (p->host != NULL && !glob(p->host, u->host))
		return 0;
	if (p->port != NULL) {
		if (port == NULL)
			port = strcmp(u->scheme, "https") == 0 ? "443" : "80";
		if (!glob(p->port, port))
			return 0;
	}
	if (!glob(p->path, u->path))
		return 0;
	if (p->query != NULL && !glob(p->query, u->query ? u->query : ""))
		return 0;
	return 1;
}

int urlset_compile(const struct lb_strlist *patterns, struct lb_urlset **out,
		   struct lb_error *err)
{
	struct lb_urlset *s;
	size_t i;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL || (patterns->n > 0 &&
			  (s->p = calloc(patterns->n, sizeof(*s->p))) == NULL)) {
		free(s);
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	}
	for (i = 0; i < patterns->n; i++) {
		if (pattern_parse(patterns->v[i], &s->p[i], err) < 0) {
			urlset_free(s);
			return -1;
		}
		s->n++;
	}
	*out = s;
	return 0;
}

int urlset_compile1(const char *pattern, struct lb_urlset **out,
		    struct lb_error *err)
{
	char *v[1];
	struct lb_strlist l;

	v[0] = (char *)pattern;
	l.v = v;
	l.n = 1;
	return urlset_compile(&l, out, err);
}

void urlset_free(struct lb_urlset *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		pattern_release(&s->p[i]);
	free(s->p);
	free(s);
}

int urlset_match(const struct lb_urlset *s, const char *url)
{
	struct parts pt;
	char *copy;
	size_t i;
	int hit = 0;

	if (s == NULL || url == NULL || (copy = strdup(url)) == NULL)
		return 0;
	if (split_url(copy, &pt) < 0) {
		free(copy);
		return 0;
	}
	trim_slash(pt.path);
	for (i = 0; i < s->n; i++) {
		if (!pattern_match(&s->p[i], &pt))
			continue;
		if (s->p[i].negative) {
			hit = 0;
			break;
		}
		hit = 1;
	}
	free(copy);
	return hit;
}

int urlpattern_valid(const char *pattern, struct lb_error *err)
{
	struct pattern p;

	if (pattern_parse(pattern, &p, err) < 0)
		return 0;
	pattern_release(&p);
	return 1;
}
