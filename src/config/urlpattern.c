/* urlpattern.c - URL patterns of sets; see urlpattern.h. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "linkbot/url.h"
#include "linkbot/urlpattern.h"

struct pattern {
	int negative;
	char *scheme;		/* lower case, NULL = http or https */
	char *host;		/* lower-case glob, NULL = any */
	char *port;		/* glob, NULL = any */
	char *path;		/* glob, trailing '/' dropped */
	char *query;		/* glob, NULL = query ignored */
	struct glob *ghost, *gport, *gpath, *gquery;	/* compiled */
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
 * Globs: compiled to a list of tokens, each a set of bytes that it
 * matches ONE time or MANY times (zero or more):
 *
 *   c          ONE {c}
 *   *          MANY (every byte)
 *   {name}     ONE seg, MANY seg   seg = every byte but '/' and '?'
 *   {name:cls} the same with seg narrowed to a class: digits, letters,
 *              alnum, lower, upper, hex, or [a-z0-9_-] (ranges; '^' first
 *              negates); '/' and '?' are never in it
 *
 * Matching runs the token list as an NFA (the set of tokens reached so
 * far, a bit each), one step per byte of the URL: O(URL x tokens) time,
 * whatever the URL holds. The backtracking matcher this replaced took
 * 89 s for `*-*-*-*.html` against a 1.6 KB URL of dashes.
 */
#define GLOB_MAX_TOKENS 512

struct gtok {
	int many;
	int star;		/* a '*' */
	unsigned char set[32];	/* bit c: byte c matches */
};

struct glob {
	size_t n;
	struct gtok t[];
};

static void set_add(unsigned char *set, unsigned c)
{
	set[c >> 3] |= (unsigned char)(1u << (c & 7));
}

static int set_has(const unsigned char *set, unsigned c)
{
	return (set[c >> 3] >> (c & 7)) & 1;
}

static void set_range(unsigned char *set, unsigned a, unsigned b)
{
	for (; a <= b; a++)
		set_add(set, a);
}

/* The class after ':' in "{name:cls}": s[0..n); 0 ok, -1 unknown. */
static int parse_class(const char *s, size_t n, unsigned char *set)
{
	size_t i;
	int neg = 0;

	memset(set, 0, 32);
	if (n == 6 && strncmp(s, "digits", 6) == 0) {
		set_range(set, '0', '9');
	} else if (n == 7 && strncmp(s, "letters", 7) == 0) {
		set_range(set, 'a', 'z');
		set_range(set, 'A', 'Z');
	} else if (n == 5 && strncmp(s, "alnum", 5) == 0) {
		set_range(set, 'a', 'z');
		set_range(set, 'A', 'Z');
		set_range(set, '0', '9');
	} else if (n == 5 && strncmp(s, "lower", 5) == 0) {
		set_range(set, 'a', 'z');
	} else if (n == 5 && strncmp(s, "upper", 5) == 0) {
		set_range(set, 'A', 'Z');
	} else if (n == 3 && strncmp(s, "hex", 3) == 0) {
		set_range(set, '0', '9');
		set_range(set, 'a', 'f');
		set_range(set, 'A', 'F');
	} else if (n >= 3 && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
		if (n > 0 && s[0] == '^')
			neg = 1, s++, n--;
		if (n == 0)
			return -1;
		for (i = 0; i < n; i++) {
			unsigned a = (unsigned char)s[i];

			if (i + 2 < n && s[i + 1] == '-') {
				unsigned b = (unsigned char)s[i + 2];

				if (b < a)
					return -1;
				set_range(set, a, b);
				i += 2;
			} else {
				set_add(set, a);
			}
		}
		if (neg)
			for (i = 0; i < 32; i++)
				set[i] = (unsigned char)~set[i];
	} else {
		return -1;
	}
	set[0] &= 0xfe;				/* NUL */
	set['/' >> 3] &= (unsigned char)~(1u << ('/' & 7));
	set['?' >> 3] &= (unsigned char)~(1u << ('?' & 7));
	return 0;
}

/* Compiles a glob; NULL with *bad set when the syntax is wrong. */
static struct glob *glob_compile(const char *p, int *bad)
{
	struct glob *g;
	size_t n = 0;
	const char *q;

	*bad = 0;
	g = malloc(sizeof(*g) + (2 * strlen(p) + 1) * sizeof(struct gtok));
	if (g == NULL)
		return NULL;
	for (q = p; *q != '\0'; q++) {
		if (n + 2 > GLOB_MAX_TOKENS)
			goto bad;
		if (*q == '*') {
			if (n > 0 && g->t[n - 1].star)
				continue;	/* ** is * */
			g->t[n].many = 1;
			g->t[n].star = 1;
			memset(g->t[n].set, 0xff, 32);
			g->t[n].set[0] = 0xfe;
			n++;
		} else if (*q == '{') {
			const char *e = strchr(q, '}'), *colon;

			if (e == NULL)
				goto bad;
			colon = memchr(q, ':', (size_t)(e - q));
			if (colon != NULL) {
				if (parse_class(colon + 1, (size_t)(e - colon - 1),
						g->t[n].set) < 0)
					goto bad;
			} else {
				parse_class("[^/]", 4, g->t[n].set);
			}
			g->t[n].many = 0;
			g->t[n].star = 0;
			g->t[n + 1] = g->t[n];
			g->t[n + 1].many = 1;
			n += 2;
			q = e;
		} else {
			g->t[n].many = 0;
			g->t[n].star = 0;
			memset(g->t[n].set, 0, 32);
			set_add(g->t[n].set, (unsigned char)*q);
			n++;
		}
	}
	g->n = n;
	return g;
bad:
	free(g);
	*bad = 1;
	return NULL;
}

/* Adds the tokens reached without a byte: past each MANY. */
static void reach(const struct glob *g, unsigned char *on)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (on[i] && g->t[i].many)
			on[i + 1] = 1;
}

static int glob(const struct glob *g, const char *s)
{
	unsigned char a[GLOB_MAX_TOKENS + 1], b[GLOB_MAX_TOKENS + 1];
	unsigned char *cur = a, *next = b, *tmp;
	size_t i;
	int any;

	memset(cur, 0, g->n + 1);
	cur[0] = 1;
	reach(g, cur);
	for (; *s != '\0'; s++) {
		unsigned c = (unsigned char)*s;

		memset(next, 0, g->n + 1);
		any = 0;
		for (i = 0; i < g->n; i++) {
			if (!cur[i] || !set_has(g->t[i].set, c))
				continue;
			next[g->t[i].many ? i : i + 1] = 1;
			any = 1;
		}
		if (!any)
			return 0;
		reach(g, next);
		tmp = cur, cur = next, next = tmp;
	}
	return cur[g->n];
}

/*
 * Splits an absolute URL (lb_url_split(), the one parser) into pt, whose
 * parts point into the returned buffer (caller frees); NULL when url is
 * not an absolute URL or there is no memory. Scheme and host lower-cased,
 * the fragment dropped, an empty path read as "/".
 */
static char *split_url(const char *url, struct parts *pt)
{
	struct lb_url_parts u;
	size_t n = strcspn(url, "#");
	char *buf, *o, *h, *e;

	memset(pt, 0, sizeof(*pt));
	lb_url_split(url, n, &u);
	if (u.scheme == NULL || !u.has_auth || u.auth_n == 0 ||
	    (buf = malloc(n + 8)) == NULL)
		return NULL;
	o = buf;
#define PART(dst, src, len)                                                    \
	do {                                                                   \
		(dst) = o;                                                     \
		memcpy(o, (src), (len));                                       \
		o += (len);                                                    \
		*o++ = '\0';                                                   \
	} while (0)
	PART(pt->scheme, u.scheme, u.scheme_n);
	PART(h, u.auth, u.auth_n);
	if (u.path_n > 0)
		PART(pt->path, u.path, u.path_n);
	else
		PART(pt->path, "/", 1);
	if (u.has_query)
		PART(pt->query, u.query, u.query_n);
#undef PART
	if (*h == '[') {
		char *rb = strchr(h, ']');
		if (rb == NULL) {
			free(buf);
			return NULL;
		}
		if (rb[1] == ':')
			pt->port = rb + 2, rb[1] = '\0';
	} else if ((e = strrchr(h, ':')) != NULL) {
		*e = '\0';
		pt->port = e + 1;
	}
	pt->host = h;
	if (*h == '\0') {
		free(buf);
		return NULL;
	}
	lower(pt->scheme);
	lower(pt->host);
	return buf;
}

static void pattern_release(struct pattern *p)
{
	free(p->scheme);
	free(p->host);
	free(p->port);
	free(p->path);
	free(p->query);
	free(p->ghost);
	free(p->gport);
	free(p->gpath);
	free(p->gquery);
}

/* Compiles one part; 0 ok (or part absent), -1 with err set. */
static int part_compile(const char *src, const char *part, struct glob **g,
			struct lb_error *err)
{
	int bad;

	if (part == NULL)
		return 0;
	if ((*g = glob_compile(part, &bad)) != NULL)
		return 0;
	if (!bad)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	return lb_error_set(err, LB_ECONFIG, "URL pattern '%s': bad '{...}' "
			    "(a class is digits, letters, alnum, lower, upper, "
			    "hex or [...]) or over %d parts", src,
			    GLOB_MAX_TOKENS / 2);
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
		if ((*p->host == '[') != (strchr(p->host, ']') != NULL) ||
		    (*p->host == '[' && p->host[strlen(p->host) - 1] != ']') ||
		    (*p->host != '[' && strchr(p->host, '[') != NULL)) {
			lb_error_set(err, LB_ECONFIG,
				     "URL pattern '%s': an IPv6 host is written "
				     "in brackets, like [::1]", src);
			goto fail;
		}
		if (colon != NULL) {
			p->port = dupn(colon + 1, (size_t)(hostend - colon - 1));
			if (p->port == NULL)
				goto nomem;
			if (*p->port == '\0' ||
			    strspn(p->port, "0123456789*") != strlen(p->port) ||
			    (strchr(p->port, '*') == NULL &&
			     (strlen(p->port) > 5 || atol(p->port) < 1 ||
			      atol(p->port) > 65535))) {
				lb_error_set(err, LB_ECONFIG,
					     "URL pattern '%s': bad port (1 to "
					     "65535, or *)", src);
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
	if (part_compile(src, p->host, &p->ghost, err) < 0 ||
	    part_compile(src, p->port, &p->gport, err) < 0 ||
	    part_compile(src, p->path, &p->gpath, err) < 0 ||
	    part_compile(src, p->query, &p->gquery, err) < 0)
		goto fail;
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
	if (p->host != NULL && !glob(p->ghost, u->host))
		return 0;
	if (p->port != NULL) {
		if (port == NULL)
			port = strcmp(u->scheme, "https") == 0 ? "443" : "80";
		if (!glob(p->gport, port))
			return 0;
	}
	if (!glob(p->gpath, u->path))
		return 0;
	if (p->query != NULL && !glob(p->gquery, u->query ? u->query : ""))
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

/* hosted: only plain patterns that name a host count as a match. */
static int set_match(const struct lb_urlset *s, const char *url, int hosted)
{
	struct parts pt;
	char *copy;
	size_t i;
	int hit = 0;

	if (s == NULL || url == NULL || (copy = split_url(url, &pt)) == NULL)
		return 0;
	trim_slash(pt.path);
	for (i = 0; i < s->n; i++) {
		if (!pattern_match(&s->p[i], &pt))
			continue;
		if (s->p[i].negative) {
			hit = 0;
			break;
		}
		if (!hosted || s->p[i].host != NULL)
			hit = 1;
	}
	free(copy);
	return hit;
}

int urlset_match(const struct lb_urlset *s, const char *url)
{
	return set_match(s, url, 0);
}

int urlset_match_hosted(const struct lb_urlset *s, const char *url)
{
	return set_match(s, url, 1);
}

int urlpattern_valid(const char *pattern, struct lb_error *err)
{
	struct pattern p;

	if (pattern_parse(pattern, &p, err) < 0)
		return 0;
	pattern_release(&p);
	return 1;
}

int urlpattern_path_under(const char *prefix, const char *path)
{
	size_t n;

	if (prefix == NULL || path == NULL)
		return 0;
	n = strlen(prefix);
	while (n > 0 && prefix[n - 1] == '/')
		n--;		/* "/blog/" is "/blog"; "/" is "" */
	if (n == 0)
		return 1;
	return strncmp(prefix, path, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/');
}
