/* robots.c - robots.txt per RFC 9309; see robots.h. */
#define _GNU_SOURCE	/* memmem */
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

static void rules_sort(struct rules *r);

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
	rules_sort(&r->mine);
	rules_sort(&r->star);
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
 * 1 if pattern p[0..pl) (with '*' and a final '$') matches a prefix of
 * s[0..sl). The pattern is literal segments between '*'s: the first must
 * start s, each next one is taken at its leftmost place after the last
 * (leftmost is always right when '*' is the only wildcard), and with '$'
 * the last must end s. memmem is linear, so a rule costs O(len(p) +
 * len(s)), never a product: no robots.txt line can stall the crawl.
 */
static int rule_match(const char *p, size_t pl, const char *s, size_t sl)
{
	const char *st, *nx, *f;
	size_t seg, pi, si, len;
	int anchored = pl > 0 && p[pl - 1] == '$';

	if (anchored)
		pl--;
	st = memchr(p, '*', pl);
	seg = st ? (size_t)(st - p) : pl;
	if (seg > sl || memcmp(p, s, seg) != 0)
		return 0;
	if (st == NULL)
		return !anchored || seg == sl;
	pi = si = seg;
	for (;;) {
		while (pi < pl && p[pi] == '*')
			pi++;
		if (pi == pl)
			return 1;	/* a final '*' takes the rest */
		nx = memchr(p + pi, '*', pl - pi);
		len = nx ? (size_t)(nx - (p + pi)) : pl - pi;
		if (nx == NULL && anchored)
			return sl - si >= len &&
			       memcmp(s + sl - len, p + pi, len) == 0;
		f = memmem(s + si, sl - si, p + pi, len);
		if (f == NULL)
			return 0;
		if (nx == NULL)
			return 1;
		si = (size_t)(f - s) + len;
		pi += len;
	}
}

/* Longest first; the same rule twice is kept once. */
static int rule_cmp(const void *a, const void *b)
{
	const struct rule *x = a, *y = b;
	int c;

	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	if ((c = strcmp(x->path, y->path)) != 0)
		return c;
	return y->allow - x->allow;
}

static void rules_sort(struct rules *r)
{
	size_t i, o = 0;

	if (r->n < 2)
		return;
	qsort(r->v, r->n, sizeof(*r->v), rule_cmp);
	for (i = 0; i < r->n; i++) {
		if (o > 0 && r->v[o - 1].len == r->v[i].len &&
		    r->v[o - 1].allow == r->v[i].allow &&
		    strcmp(r->v[o - 1].path, r->v[i].path) == 0) {
			free(r->v[i].path);
			continue;
		}
		r->v[o++] = r->v[i];
	}
	r->n = o;
}

int robots_allowed(const struct lb_robots *r, const char *path_query)
{
	const struct rules *rs;
	char *path;
	size_t i, best = 0, pl;
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
	pl = strlen(path);
	/* longest first: the first match decides, but for an Allow of the
	 * same length (the tie goes to Allow) */
	for (i = 0; i < rs->n; i++) {
		const struct rule *ru = &rs->v[i];
		if (found && ru->len < best)
			break;
		if (!rule_match(ru->path, ru->len, path, pl))
			continue;
		if (!found || (ru->allow && !allow)) {
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
