/*
 * xrobots.c - the X-Robots-Tag header (SPEC 1.8).
 *
 * A value is a comma list of directives; "name: directive" names the agent
 * the directives that follow it apply to (Google's syntax), until the next
 * agent name. A few directives carry their own value after a colon
 * (unavailable_after, max-snippet, ...); those are not agent names.
 * Honoured: directives for every agent, for "linkbot", and, like the robots
 * meta tags that extract/ reads (SPEC 1.8: "crawler-specific meta tags such
 * as googlebot are also honored"), for "googlebot". Directives naming any
 * other crawler are that crawler's business.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "crawl_int.h"

static const char *const valued[] = {
	"unavailable_after", "max-snippet", "max-image-preview",
	"max-video-preview", NULL,
};

static int is_valued(const char *s, size_t n)
{
	size_t i;

	for (i = 0; valued[i] != NULL; i++)
		if (strlen(valued[i]) == n && strncasecmp(s, valued[i], n) == 0)
			return 1;
	return 0;
}

static int word_is(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && strncasecmp(s, w, n) == 0;
}

static int honoured(const char *a, size_t n)
{
	return word_is(a, n, "linkbot") || word_is(a, n, "googlebot") ||
	       word_is(a, n, "*");
}

static int value_noindex(const char *v)
{
	const char *p = v;
	int mine = 1;	/* the directives that follow apply to us */

	while (*p != '\0') {
		const char *e = p + strcspn(p, ","), *a, *b, *colon;
		for (a = p; a < e && isspace((unsigned char)*a); a++)
			;
		for (b = e; b > a && isspace((unsigned char)b[-1]); b--)
			;
		colon = memchr(a, ':', (size_t)(b - a));
		if (colon != NULL) {
			const char *k = colon;
			while (k > a && isspace((unsigned char)k[-1]))
				k--;
			if (!is_valued(a, (size_t)(k - a))) {
				/* "agent: directive": a new scope */
				mine = honoured(a, (size_t)(k - a));
				for (a = colon + 1;
				     a < b && isspace((unsigned char)*a); a++)
					;
			}
		}
		if (mine && (word_is(a, (size_t)(b - a), "noindex") ||
			     word_is(a, (size_t)(b - a), "none")))
			return 1;
		p = *e ? e + 1 : e;
	}
	return 0;
}

int xrobots_noindex(const struct lb_strlist *values)
{
	size_t i;

	for (i = 0; i < values->n; i++)
		if (value_noindex(values->v[i]))
			return 1;
	return 0;
}
