/* robots.c - robots.txt per RFC 9309; see robots.h. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "linkbot/buf.h"
#include "linkbot/robots.h"

struct rule {
	int allow;
	char *path;	/* normalised pattern */
	size_t len;	/* its length, for the longest match */
};

struct rules {
	struct rule *v;
	size_t n, alloc;
};

struct lb_robots {
	struct rules mine;	/* groups naming our agent */
	struct rules star;	/* groups for "*" */
	int have_mine;
	struct lb_strlist sitemaps;
};

static int unreserved(int c)
{
	return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Normalised copy of s[0..n): escapes of unreserved bytes decoded. */
static char *pct_norm(const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	char *d = malloc(n * 3 + 1), *o = d;
	size_t i;

	if (d == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '%' && i + 2 < n &&
		    hexval((unsigned char)s[i + 1]) >= 0 &&
		    hexval((unsigned char)s[i + 2]) >= 0) {
			int v = hexval((unsigned char)s[i + 1]) * 16 +
				hexval((unsigned char)s[i + 2]);
			if (v < 0x80 && unreserved(v)) {
				*o++ = (char)v;
			} else {
				*o++ = '%';
				*o++ = hex[v >> 4];
				*o++ = hex[v & 15];
			}
			i += 2;
		} else if (c >= 0x80 || c <= 0x20) {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		} else {
			*o++ = (char)c;
		}
	}
	*o = '\0';
	return d;
}

static int rules_add(struct rules *r, int allow, const char *path, size_t n)
{
	if (r->n == r->alloc) {
		size_t na = r->alloc ? r->alloc * 2 : 16;
		struct rule *nv = realloc(r->v, na * sizeof(*nv));
		if (nv == NULL)
			return -1;
		r->v = nv;
		r->alloc = na;
	}
	r->v[r->n].allow = allow;
	if ((r->v[r->n].path = pct_norm(path, n)) == NULL)
		return -1;
	r->v[r->n].len = strlen(r->v[r->n].path);
	r->n++;
	return 0;
}

static void rules_release(struct rules *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->v[i].path);
	free(r->v);
}

/* 1 if the user-agent value names agent (leading token, any case). */
static int names_agent(const char *v, size_t n, const char *agent)
{
	size_t k = 0;

	while (k < n && (isalpha((unsigned char)v[k]) || v[k] == '-' ||
			 v[k] == '_'))
		k++;
	return k > 0 && k == strlen(agent) && strncasecmp(v, agent, k) == 0;
}

enum key { K_OTHER, K_UA, K_ALLOW, K_DISALLOW, K_SITEMAP };

static enum key key_of(const char *k, size_t n)
{
	if ((n == 10 && strncasecmp(k, "user-agent", n) == 0) ||
	    (n == 9 && strncasecmp(k, "useragent", n) == 0) ||
	    (n == 10 && strncasecmp(k, "user agent", n) == 0))
		return K_UA;
	if (n == 5 && strncasecmp(k, "allow", n) == 0)
		return K_ALLOW;
	if ((n == 8 && strncasecmp(k, "disallow", n) == 0) ||
	    (n == 9 && strncasecmp(k, "dissallow", n) == 0))
		return K_DISALLOW;
	if ((n == 7 && strncasecmp(k, "sitemap", n) == 0) ||
	    (n == 8 && strncasecmp(k, "site-map", n) == 0))
		return K_SITEMAP;
	return K_OTHER;
}

int robots_parse(const char *txt, size_t len, const char *agent,
		 struct lb_robots **out, struct lb_error *err)
{
	struct lb_robots *r;
	const char *p = txt, *end;
	int in_rules = 1;	/* the previous line was a rule: a UA starts a group */
	int for_mine = 0, for_star = 0;

	*out = NULL;
	if (len > LB_ROBOTS_MAX_BYTES)
		len = LB_ROBOTS_MAX_BYTES;
	end = txt + len;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
		p += 3;
	while (p < end) {
		const char *eol = p, *colon, *k, *ke, *v, *ve;
		enum key key;

		while (eol < end && *eol != '\n' && *eol != '\r')
			eol++;
		ve = memchr(p, '#', (size_t)(eol - p));
		if (ve == NULL)
			ve = eol;
		colon = memchr(p, ':', (size_t)(ve - p));
		if (colon == NULL)
			goto next;
		for (k = p; k < colon && isspace((unsigned char)*k); k++)
			;
		for (ke = colon; ke > k && isspace((unsigned char)ke[-1]); ke--)
			;
		for (v = colon + 1; v < ve && isspace((unsigned char)*v); v++)
			;
		while (ve > v && isspace((unsigned char)ve[-1]))
			ve--;
		key = key_of(k, (size_t)(ke - k));
		switch (key) {
		case K_UA:
			if (in_rules) {
				for_mine = for_star = 0;
				in_rules = 0;
			}
			if (ve - v == 1 && *v == '*')
				for_star = 1;
			else if (names_agent(v, (size_t)(ve - v), agent))
				for_mine = 1;
			break;
		case K_ALLOW:
		case K_DISALLOW:
			in_rules = 1;
			if (ve == v)	/* "Disallow:" alone allows all */
				break;
			if (for_mine && rules_add(&r->mine, key == K_ALLOW, v,
						  (size_t)(ve - v)) < 0)
				goto nomem;
			if (for_star && rules_add(&r->star, key == K_ALLOW, v,
						  (size_t)(ve - v)) < 0)
				goto nomem;
			break;
		case K_SITEMAP: {
			/* the value is a URL: '#' may belong to it */
			const char *se = eol;
			char *u;
			while (se > v && isspace((unsigned char)se[-1]))
				se--;
			if (se == v)
				break;
			if ((u = strndup(v, (size_t)(se - v))) == NULL)
				goto nomem;
			if (lb_strlist_add(&r->sitemaps, u, err) < 0) {
				free(u);
				robots_free(r);
				return -1;
			}
			free(u);
			break;
		}
		case K_OTHER:
			/* unknown lines (Crawl-delay, Host) neither start nor
			 * end a group */
			break;
		}
		if (key == K_UA && for_mine)
			r->have_mine = 1;
next:
		p = eol;
		while (p < end && (*p == '\n' || *p == '\r'))
			p++;
	}
	*out = r;
	return 0;
nomem:
	robots_free(r);
	return lb_error_set(err, LB_ENOMEM, "out of memory");
}

void robots_free(struct lb_robots *r)
{
	if (r == NULL)
		return;
	rules_release(&r->mine);
	rules_release(&r->star);
	lb_strlist_release(&r->sitemaps);
	free(r);
}

/*
 * 1 if pattern p (with '*' and a final '$') matches a prefix of s.
 * Greedy, going back only to the last '*' seen: O(len(p) * len(s)) at
 * worst, where trying every split at every '*' is exponential (a robots.txt
 * line like "Disallow: /", then "*a" ten times, then "b", would stall the
 * crawl).
 */
static int rule_match(const char *p, const char *s)
{
	size_t pl = strlen(p), i = 0, star = (size_t)-1;
	const char *star_s = NULL;
	int anchored = pl > 0 && p[pl - 1] == '$';

	if (anchored)
		pl--;
	for (;;) {
		if (i == pl) {
			if (!anchored || *s == '\0')
				return 1;
		} else if (p[i] == '*') {
			star = i++;
			star_s = s;
			continue;
		} else if (*s != '\0' && p[i] == *s) {
			i++;
			s++;
			continue;
		}
		/* mismatch: let the last '*' take one more character */
		if (star == (size_t)-1 || *star_s == '\0')
			return 0;
		s = ++star_s;
		i = star + 1;
	}
}

int robots_allowed(const struct lb_robots *r, const char *path_query)
{
	const struct rules *rs;
	char *path;
	size_t i, best = 0;
	int found = 0, allow = 1;

	if (r == NULL)
		return 1;
	if (strcmp(path_query, "/robots.txt") == 0)
		return 1;
	rs = r->have_mine ? &r->mine : &r->star;
	if (rs->n == 0)
		return 1;
	if ((path = pct_norm(path_query, strlen(path_query))) == NULL)
		return 0;	/* no memory: the safe answer */
	for (i = 0; i < rs->n; i++) {
		const struct rule *ru = &rs->v[i];
		if (!rule_match(ru->path, path))
			continue;
		if (!found || ru->len > best ||
		    (ru->len == best && ru->allow && !allow)) {
			found = 1;
			best = ru->len;
			allow = ru->allow;
		}
	}
	free(path);
	return allow;
}

const struct lb_strlist *robots_sitemaps(const struct lb_robots *r)
{
	return &r->sitemaps;
}
