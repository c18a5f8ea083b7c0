/*
 * date.c - published dates to ISO 8601, language tags to BCP 47 case.
 *
 * Dates come as ISO 8601 (the common case: JSON-LD, Open Graph), RFC 822
 * ("Tue, 26 Jul 2024 17:29:00 GMT"), or written out ("July 26, 2024",
 * "26 July 2024"). Out: "YYYY-MM-DD" for a date alone,
 * "YYYY-MM-DDTHH:MM:SS" plus the offset as written ("Z" or "+HH:MM") when
 * there is a time. Fractions of a second are dropped. The zone is never
 * converted: the page's own calendar day is what readers see.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "extract_int.h"

struct dt {
	int y, mo, d, h, mi, s;
	int has_time;
	int tz;		/* 0 none, 1 "Z", 2 offset */
	int off;	/* minutes east of UTC */
};

static const char *const months[] = {
	"jan", "feb", "mar", "apr", "may", "jun",
	"jul", "aug", "sep", "oct", "nov", "dec",
};

static int digits(const char *s, size_t n, size_t *i, int count, int *v)
{
	int k, r = 0;

	for (k = 0; k < count; k++) {
		if (*i >= n || s[*i] < '0' || s[*i] > '9')
			return -1;
		r = r * 10 + (s[*i] - '0');
		(*i)++;
	}
	*v = r;
	return 0;
}

static int ndigits(const char *s, size_t n, size_t *i, int max, int *v)
{
	int k = 0, r = 0;

	while (*i < n && k < max && s[*i] >= '0' && s[*i] <= '9') {
		r = r * 10 + (s[*i] - '0');
		(*i)++;
		k++;
	}
	if (k == 0)
		return -1;
	*v = r;
	return 0;
}

static int month_name(const char *s, size_t n, size_t *i)
{
	size_t k, j;

	if (*i + 3 > n)
		return 0;
	for (k = 0; k < 12; k++) {
		if (strncasecmp(s + *i, months[k], 3) == 0) {
			j = *i + 3;
			while (j < n && ((s[j] >= 'a' && s[j] <= 'z') ||
					 (s[j] >= 'A' && s[j] <= 'Z')))
				j++;
			if (j < n && s[j] == '.')
				j++;
			*i = j;
			return (int)k + 1;
		}
	}
	return 0;
}

static void skip_sp(const char *s, size_t n, size_t *i)
{
	while (*i < n && (s[*i] == ' ' || s[*i] == ',' || s[*i] == '\t'))
		(*i)++;
}

/* Skips a leading weekday name ("Tue", "Tuesday", "Tue.") if any. */
static int weekday(const char *s, size_t n, size_t *i)
{
	static const char *const days[] = {
		"mon", "tue", "wed", "thu", "fri", "sat", "sun",
	};
	size_t k, j;

	if (*i + 3 > n)
		return 0;
	for (k = 0; k < 7; k++) {
		if (strncasecmp(s + *i, days[k], 3) != 0)
			continue;
		for (j = *i + 3; j < n && ((s[j] | 0x20) >= 'a' &&
					   (s[j] | 0x20) <= 'z'); j++)
			;
		if (j < n && s[j] == '.')
			j++;
		if (j < n && (s[j] == ',' || s[j] == ' ')) {
			*i = j;
			return 1;
		}
	}
	return 0;
}

/* Zone abbreviations of RFC 822 and a few that pages write out. */
static const struct {
	const char *name;
	int off;	/* minutes east of UTC */
} zones[] = {
	{ "EST", -300 }, { "EDT", -240 }, { "CST", -360 }, { "CDT", -300 },
	{ "MST", -420 }, { "MDT", -360 }, { "PST", -480 }, { "PDT", -420 },
	{ "BST", 60 }, { "CET", 60 }, { "CEST", 120 }, { "EET", 120 },
	{ "EEST", 180 }, { "WET", 0 }, { "WEST", 60 }, { "JST", 540 },
	{ "KST", 540 }, { "AEST", 600 }, { "AEDT", 660 },
};

/*
 * [T| |, |, at ]HH:MM[:SS[.fff]][ am|pm][Z|+HH[:]MM|GMT|UTC|EST...].
 * A time that cannot be read leaves the date alone (has_time 0).
 */
static int parse_time(const char *s, size_t n, size_t *i, struct dt *t)
{
	size_t i0 = *i, k, l;
	int oh, om, ok = 0;
	char sign;

	if (*i >= n)
		return 0;
	if (s[*i] != 'T' && s[*i] != 't' && s[*i] != ' ' && s[*i] != ',')
		return 0;
	(*i)++;
	skip_sp(s, n, i);
	if (*i + 3 <= n && strncasecmp(s + *i, "at ", 3) == 0)
		*i += 3;
	if (ndigits(s, n, i, 2, &t->h) < 0 || *i >= n || s[*i] != ':')
		goto bad;
	(*i)++;
	if (digits(s, n, i, 2, &t->mi) < 0)
		goto bad;
	if (*i < n && s[*i] == ':') {
		(*i)++;
		if (digits(s, n, i, 2, &t->s) < 0)
			goto bad;
		if (*i < n && (s[*i] == '.' || s[*i] == ','))
			for ((*i)++; *i < n && s[*i] >= '0' && s[*i] <= '9';
			     (*i)++)
				;
	}
	t->has_time = 1;
	ok = 1;
	skip_sp(s, n, i);
	/* 5:43 pm, 5:43 p.m. */
	if (*i + 2 <= n && (s[*i] == 'a' || s[*i] == 'A' || s[*i] == 'p' ||
			    s[*i] == 'P') &&
	    (s[*i + 1] == 'm' || s[*i + 1] == 'M' || s[*i + 1] == '.')) {
		int pm = s[*i] == 'p' || s[*i] == 'P';

		if (t->h < 1 || t->h > 12)
			goto bad;
		*i += 2;
		if (*i < n && (s[*i] == 'm' || s[*i] == 'M'))
			(*i)++;
		if (*i < n && s[*i] == '.')
			(*i)++;
		t->h = t->h % 12 + (pm ? 12 : 0);
		skip_sp(s, n, i);
	}
	if (*i < n && (s[*i] == 'Z' || s[*i] == 'z')) {
		t->tz = 1;
		(*i)++;
	} else if (*i + 3 <= n && (strncasecmp(s + *i, "GMT", 3) == 0 ||
				   strncasecmp(s + *i, "UTC", 3) == 0)) {
		t->tz = 1;
		*i += 3;
	} else {
		for (k = 0; k < sizeof(zones) / sizeof(zones[0]); k++) {
			l = strlen(zones[k].name);
			if (*i + l <= n && strncmp(s + *i, zones[k].name, l) == 0 &&
			    (*i + l == n || !((s[*i + l] | 0x20) >= 'a' &&
					      (s[*i + l] | 0x20) <= 'z'))) {
				t->tz = 2;
				t->off = zones[k].off;
				*i += l;
				return 0;
			}
		}
	}
	if (*i < n && (s[*i] == '+' || s[*i] == '-')) {
		sign = s[(*i)++];
		if (digits(s, n, i, 2, &oh) < 0)
			goto bad;
		om = 0;
		if (*i < n && s[*i] == ':')
			(*i)++;
		if (*i < n && s[*i] >= '0' && s[*i] <= '9' &&
		    digits(s, n, i, 2, &om) < 0)
			goto bad;
		if (oh > 14 || om > 59)
			goto bad;
		t->tz = 2;
		t->off = (sign == '-' ? -1 : 1) * (oh * 60 + om);
	}
	return 0;
bad:
	/* "2024-07-26Tgarbage" is not a date; "July 26, 2024 (updated)"
	 * keeps its date, a time we cannot read dropped with its zone */
	if (!ok && (s[i0] == 'T' || s[i0] == 't'))
		return -1;
	*i = i0;
	t->h = t->mi = t->s = 0;
	t->has_time = 0;
	t->tz = 0;
	t->off = 0;
	return 0;
}

static int valid(const struct dt *t)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	if (t->y < 1900 || t->y > 2200 || t->mo < 1 || t->mo > 12 ||
	    t->d < 1 || t->d > mdays[t->mo - 1])
		return 0;
	if (t->mo == 2 && t->d == 29 &&
	    !(t->y % 4 == 0 && (t->y % 100 != 0 || t->y % 400 == 0)))
		return 0;
	if (t->has_time && (t->h > 23 || t->mi > 59 || t->s > 60))
		return 0;
	return 1;
}

static int parse(const char *s, size_t n, struct dt *t)
{
	size_t i = 0;
	int m;

	memset(t, 0, sizeof(*t));
	/* ISO 8601: YYYY-MM-DD, YYYY/MM/DD, YYYYMMDD */
	if (n >= 8 && s[0] >= '0' && s[0] <= '9') {
		if (digits(s, n, &i, 4, &t->y) == 0) {
			if (i < n && (s[i] == '-' || s[i] == '/' || s[i] == '.')) {
				char sep = s[i++];

				if (ndigits(s, n, &i, 2, &t->mo) < 0 ||
				    i >= n || s[i++] != sep ||
				    ndigits(s, n, &i, 2, &t->d) < 0)
					return -1;
			} else if (digits(s, n, &i, 2, &t->mo) < 0 ||
				   digits(s, n, &i, 2, &t->d) < 0) {
				return -1;
			}
			if (parse_time(s, n, &i, t) < 0)
				return -1;
			return 0;
		}
		/* D Month YYYY / DD.MM.YYYY */
		i = 0;
		if (ndigits(s, n, &i, 2, &t->d) < 0)
			return -1;
		if (i < n && (s[i] == '.' || s[i] == '/')) {
			char sep = s[i++];

			if (ndigits(s, n, &i, 2, &t->mo) < 0 || i >= n ||
			    s[i++] != sep || digits(s, n, &i, 4, &t->y) < 0)
				return -1;
			/* 03/04/2024 is ambiguous (US or not): refuse */
			if (sep == '/' && t->mo <= 12 && t->d <= 12)
				return -1;
			if (sep == '/' && t->mo > 12) {
				int x = t->mo;

				t->mo = t->d;
				t->d = x;
			}
			return parse_time(s, n, &i, t);
		}
		skip_sp(s, n, &i);
		if ((m = month_name(s, n, &i)) == 0)
			return -1;
		t->mo = m;
		skip_sp(s, n, &i);
		if (digits(s, n, &i, 4, &t->y) < 0)
			return -1;
		return parse_time(s, n, &i, t) < 0 ? -1 : 0;
	}
	/* "Tue, 26 Jul 2024 17:29:00 GMT", "Tuesday, March 5, 2024",
	 * "Tue Mar 05 2024" or "July 26, 2024" */
	if (weekday(s, n, &i))
		skip_sp(s, n, &i);
	if (i < n && s[i] >= '0' && s[i] <= '9') {
		if (ndigits(s, n, &i, 2, &t->d) < 0)
			return -1;
		skip_sp(s, n, &i);
		if ((m = month_name(s, n, &i)) == 0)
			return -1;
		t->mo = m;
		skip_sp(s, n, &i);
		if (digits(s, n, &i, 4, &t->y) < 0)
			return -1;
	} else {
		if ((m = month_name(s, n, &i)) == 0)
			return -1;
		t->mo = m;
		skip_sp(s, n, &i);
		if (ndigits(s, n, &i, 2, &t->d) < 0)
			return -1;
		if (i + 1 < n && strchr("snrt", s[i] | 0x20) != NULL &&
		    strchr("tdh", s[i + 1] | 0x20) != NULL)
			i += 2;	/* 1st, 2nd, 3rd, 4th */
		skip_sp(s, n, &i);
		if (digits(s, n, &i, 4, &t->y) < 0)
			return -1;
	}
	if (i < n && s[i] != ' ' && s[i] != 'T' && s[i] != ',')
		return -1;
	return parse_time(s, n, &i, t) < 0 ? -1 : 0;
}

char *x_date_iso(const char *s, size_t n, int *oom)
{
	struct dt t;
	char buf[128];
	char *r;

	if (n == (size_t)-1)
		n = strlen(s);
	while (n > 0 && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
		s++, n--;
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
			 s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	if (n < 6 || n > 64 || parse(s, n, &t) < 0 || !valid(&t))
		return NULL;
	if (!t.has_time)
		snprintf(buf, sizeof(buf), "%04d-%02d-%02d", t.y, t.mo, t.d);
	else if (t.tz == 0)
		snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d",
			 t.y, t.mo, t.d, t.h, t.mi, t.s > 59 ? 59 : t.s);
	else if (t.tz == 1)
		snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02dZ",
			 t.y, t.mo, t.d, t.h, t.mi, t.s > 59 ? 59 : t.s);
	else
		snprintf(buf, sizeof(buf),
			 "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", t.y, t.mo,
			 t.d, t.h, t.mi, t.s > 59 ? 59 : t.s,
			 t.off < 0 ? '-' : '+', abs(t.off) / 60, abs(t.off) % 60);
	if ((r = strdup(buf)) == NULL)
		*oom = 1;
	return r;
}

char *x_lang_norm(const char *s, size_t n, int *oom)
{
	char buf[36];
	size_t i, k = 0, sub = 0, start = 0;
	char *r;

	if (n == (size_t)-1)
		n = strlen(s);
	while (n > 0 && (*s == ' ' || *s == '\t' || *s == '\n'))
		s++, n--;
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
			 s[n - 1] == '\n'))
		n--;
	if (n < 2 || n >= sizeof(buf))
		return NULL;
	for (i = 0; i <= n; i++) {
		char c = i < n ? s[i] : '-';

		if (c == '_')
			c = '-';
		if (c == '-') {
			size_t len = k - start;

			if (len == 0 || len > 8)
				return NULL;
			if (sub == 0 && (len < 2 || len > 3) &&
			    !(len == 1 && (buf[start] == 'x' || buf[start] == 'i')))
				return NULL;
			if (sub > 0 && len == 2 && buf[start] >= 'a')
				buf[start] = (char)(buf[start] - 32),
				buf[start + 1] = (char)(buf[start + 1] - 32 *
					(buf[start + 1] >= 'a'));
			else if (sub > 0 && len == 4 && buf[start] >= 'a')
				buf[start] = (char)(buf[start] - 32);
			if (i < n)
				buf[k++] = '-';
			start = k;
			sub++;
			continue;
		}
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') ||
		      (sub > 0 && c >= '0' && c <= '9')))
			return NULL;
		buf[k++] = c;
	}
	buf[k] = '\0';
	if ((r = strdup(buf)) == NULL)
		*oom = 1;
	return r;
}
