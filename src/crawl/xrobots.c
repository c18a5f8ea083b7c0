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
 *
 * "unavailable_after: DATE" is a noindex from DATE on (Google's meaning:
 * the page leaves the index then). Its date may itself hold a comma
 * ("Friday, 01-Jan-2100 00:00:00 GMT"), so it is read before the value is
 * split further. An unreadable date is ignored (the page stays indexed).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

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

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int digits(const char *s, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

/* ISO 8601: YYYY-MM-DD[(T| )HH:MM[:SS[.frac]]][Z|(+|-)HH[:]MM]. */
static int iso_date(const char *s, int64_t *t)
{
	int y, mo, d, h = 0, mi = 0, sec = 0, oh, om, sign;

	if (digits(s, 4, &y) < 0 || s[4] != '-' || digits(s + 5, 2, &mo) < 0 ||
	    s[7] != '-' || digits(s + 8, 2, &d) < 0 || mo < 1 || mo > 12 ||
	    d < 1 || d > 31)
		return -1;
	s += 10;
	if ((*s == 'T' || *s == 't' || *s == ' ') && isdigit((unsigned char)s[1])) {
		if (digits(s + 1, 2, &h) < 0 || s[3] != ':' ||
		    digits(s + 4, 2, &mi) < 0)
			return -1;
		s += 6;
		if (*s == ':') {
			if (digits(s + 1, 2, &sec) < 0)
				return -1;
			s += 3;
			if (*s == '.' || *s == ',')
				for (s++; isdigit((unsigned char)*s); s++)
					;
		}
	}
	*t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		sign = *s == '-' ? -1 : 1;
		if (digits(s + 1, 2, &oh) < 0)
			return -1;
		s += 3;
		if (*s == ':')
			s++;
		if (digits(s, 2, &om) < 0)
			om = 0;
		else
			s += 2;
		*t -= sign * (oh * 3600 + om * 60);
	}
	while (isspace((unsigned char)*s))
		s++;
	return *s == '\0' ? 0 : -1;
}

/* One date: ISO 8601, else the HTTP/RFC 822/RFC 850 forms curl reads. */
static int parse_date(const char *s, size_t n, int64_t *t)
{
	char buf[128];
	time_t c;

	while (n > 0 && isspace((unsigned char)*s))
		s++, n--;
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (iso_date(buf, t) == 0)
		return 0;
	if ((c = curl_getdate(buf, NULL)) == -1)
		return -1;
	*t = (int64_t)c;
	return 0;
}

/*
 * The date at s (the text after "unavailable_after:"). It ends at the end of
 * the value or at a comma that a digit does not follow: the comma of
 * "Friday, 01-Jan-2100 ..." is the date's, the one of "..., noindex" ends
 * it. *used is the length read.
 */
static int after_date(const char *s, int64_t *t, size_t *used)
{
	const char *e = s;

	for (;;) {
		const char *k;
		e += strcspn(e, ",");
		if (*e == '\0')
			break;
		for (k = e + 1; *k == ' ' || *k == '\t'; k++)
			;
		if (!isdigit((unsigned char)*k))
			break;
		e = k;
	}
	*used = (size_t)(e - s);
	return parse_date(s, *used, t);
}

int xrobots_expired(const char *date, int64_t now)
{
	int64_t t;
	size_t used;

	return date != NULL && after_date(date, &t, &used) == 0 && t <= now;
}

/* If the directive at a is "unavailable_after:", its date's end, else NULL;
 * *expired is 1 if the date is readable and not after now. */
static const char *unavailable(const char *a, const char *b, int64_t now,
			       int *expired)
{
	const char *colon = memchr(a, ':', (size_t)(b - a)), *k;
	int64_t t;
	size_t used;

	if (colon == NULL)
		return NULL;
	for (k = colon; k > a && isspace((unsigned char)k[-1]); k--)
		;
	if (!word_is(a, (size_t)(k - a), "unavailable_after"))
		return NULL;
	*expired = after_date(colon + 1, &t, &used) == 0 && t <= now;
	return colon + 1 + used;
}

static int value_noindex(const char *v, int64_t now)
{
	const char *p = v;
	int mine = 1;	/* the directives that follow apply to us */

	while (*p != '\0') {
		const char *e = p + strcspn(p, ","), *a, *b, *colon, *ue;
		int expired = 0;
		for (a = p; a < e && isspace((unsigned char)*a); a++)
			;
		for (b = e; b > a && isspace((unsigned char)b[-1]); b--)
			;
		colon = memchr(a, ':', (size_t)(b - a));
		if (colon != NULL && unavailable(a, b, now, &expired) == NULL) {
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
		/* the date of unavailable_after may hold commas: read whole */
		if ((ue = unavailable(a, b, now, &expired)) != NULL) {
			if (mine && expired)
				return 1;
			e = ue;
		} else if (mine && (word_is(a, (size_t)(b - a), "noindex") ||
				    word_is(a, (size_t)(b - a), "none"))) {
			return 1;
		}
		p = *e ? e + 1 : e;
	}
	return 0;
}

int xrobots_noindex(const struct lb_strlist *values, int64_t now)
{
	size_t i;

	for (i = 0; i < values->n; i++)
		if (value_noindex(values->v[i], now))
			return 1;
	return 0;
}
