/*
 * fuzz_render.c - libFuzzer target for render's clean() (tests/fuzz/run),
 * through render_clean_text() and render_clean_url(): the clean form of
 * every title, description, URL and list entry an answer holds. The first
 * byte picks the mode (bit 0: text or URL) and max_chars (the other bits:
 * 0, no bound, to 127); the rest, cut at its first NUL, is the string.
 * Contract: the output is valid UTF-8 without control characters, at most
 * max_chars characters, and byte for byte what a straightforward
 * reference gives (every character decoded first, then collapsed, then
 * cut), written here from render.h's description and not from render.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/render.h"

#define CUT_BACK 30	/* render.c: how far back a text cut looks for a space */

/* One character at s (n > 0 bytes left) by the table of well-formed
 * sequences (Unicode 3.9, table 3-7); an ill-formed byte is U+FFFD. */
static size_t ref_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned lo = 0x80, hi = 0xBF;
	size_t len, i;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		len = 2, c = s[0] & 0x1F;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		len = 3, c = s[0] & 0x0F;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		len = 4, c = s[0] & 0x07;
	else
		goto bad;
	if (s[0] == 0xE0)
		lo = 0xA0;
	else if (s[0] == 0xED)
		hi = 0x9F;
	else if (s[0] == 0xF0)
		lo = 0x90;
	else if (s[0] == 0xF4)
		hi = 0x8F;
	if (len > n || s[1] < lo || s[1] > hi)
		goto bad;
	for (i = 1; i < len; i++) {
		if (s[i] < 0x80 || s[i] > 0xBF)
			goto bad;
		c = (c << 6) | (s[i] & 0x3F);
	}
	*cp = c;
	return len;
bad:
	*cp = 0xFFFD;
	return 1;
}

static size_t ref_encode(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xC0 | (c >> 6));
		o[1] = (char)(0x80 | (c & 0x3F));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xE0 | (c >> 12));
		o[1] = (char)(0x80 | ((c >> 6) & 0x3F));
		o[2] = (char)(0x80 | (c & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | (c >> 18));
	o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3F));
	o[3] = (char)(0x80 | (c & 0x3F));
	return 4;
}

static int ref_space(uint32_t c)
{
	return c <= 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0) ||
	       c == 0x2028 || c == 0x2029;
}

/* The reference clean form: NULL when nothing is left. */
static char *ref_clean(const char *s, int url, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i, k = 0, o = 0;
	uint32_t *cs = malloc((n + 2) * sizeof(*cs)), c;
	char *out = malloc(n * 4 + 8);
	int space = 0;

	if (cs == NULL || out == NULL)
		abort();
	for (i = 0; i < n;) {
		i += ref_decode(p + i, n - i, &c);
		if (c == 0xFEFF)
			continue;
		if (ref_space(c)) {
			space = !url && k > 0;
			continue;
		}
		if (space)
			cs[k++] = ' ';
		space = 0;
		cs[k++] = c;
	}
	if (k == 0) {
		free(cs);
		free(out);
		return NULL;
	}
	if (max > 0 && k > max) {
		size_t keep = max - 1, j;

		for (j = keep; !url && j > 0 && j + CUT_BACK > keep; j--)
			if (cs[j] == ' ') {
				keep = j;
				break;
			}
		while (!url && keep > 0 && cs[keep - 1] < 0x80 &&
		       strchr(" ,;:-", (int)cs[keep - 1]) != NULL)
			keep--;
		cs[keep] = 0x2026;
		k = keep + 1;
	}
	for (i = 0; i < k; i++)
		o += ref_encode(out + o, cs[i]);
	out[o] = '\0';
	free(cs);
	return out;
}

/* valid UTF-8, no control character or white space but ' ' (text), none
 * at all (URL), and the number of characters */
static size_t check_utf8(const char *s, int url)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i, chars = 0, len;
	uint32_t c;

	for (i = 0; i < n; i += len, chars++) {
		len = ref_decode(p + i, n - i, &c);
		if ((len == 1 && p[i] >= 0x80) ||
		    (ref_space(c) && (url || c != ' ')) || c == 0xFEFF) {
			fprintf(stderr, "bad byte at %zu of '%.200s'\n", i, s);
			abort();
		}
	}
	return chars;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in, *got, *want;
	size_t max;
	int url;

	if (size == 0)
		return 0;
	url = data[0] & 1;
	max = data[0] >> 1;
	if ((in = malloc(size)) == NULL)
		return 0;
	memcpy(in, data + 1, size - 1);
	in[size - 1] = '\0';
	got = url ? render_clean_url(in, max) : render_clean_text(in, max);
	want = ref_clean(in, url, max);
	if ((got == NULL) != (want == NULL) ||
	    (got != NULL && strcmp(got, want) != 0)) {
		fprintf(stderr, "clean (%s, max %zu) of '%.200s':\n"
			"  got  '%.300s'\n  want '%.300s'\n", url ? "url" : "text",
			max, in, got ? got : "(null)", want ? want : "(null)");
		abort();
	}
	if (got != NULL && (got[0] == '\0' ||
			    (check_utf8(got, url) > max && max > 0)))
		abort();
	free(got);
	free(want);
	free(in);
	return 0;
}
