/*
 * charset.c - any page to valid UTF-8 before gumbo sees it (gumbo reads
 * UTF-8 only).
 *
 * Which charset, in the order of the HTML standard's encoding sniffing:
 * a byte order mark; the charset the HTTP header declared; a <meta
 * charset> or <meta http-equiv=content-type> in the first 4 KiB; else
 * UTF-8 if the bytes are valid UTF-8, else windows-1252 (the web's legacy
 * default). Labels follow the WHATWG Encoding Standard's aliases where it
 * matters: ISO-8859-1, latin1 and US-ASCII mean windows-1252, GB2312 and
 * GBK mean GB18030, and so on. glibc's iconv converts; a byte it cannot
 * convert becomes U+FFFD. Valid UTF-8 is used in place, without a copy.
 */
#define _GNU_SOURCE	/* memmem, memrchr */
#include <errno.h>
#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "extract_int.h"

#define SNIFF_BYTES 4096

static const struct { const char *label, *iconv; } aliases[] = {
	{"utf-8", "UTF-8"}, {"utf8", "UTF-8"}, {"unicode-1-1-utf-8", "UTF-8"},
	{"x-unicode20utf8", "UTF-8"},
	/* A meta tag read as ASCII cannot really be UTF-16: the standard
	 * says to take it as UTF-8. The BOM decides real UTF-16. */
	{"utf-16", "UTF-8"}, {"utf-16le", "UTF-8"}, {"utf-16be", "UTF-8"},
	{"unicode", "UTF-8"}, {"ucs-2", "UTF-8"},
	{"us-ascii", "WINDOWS-1252"}, {"ascii", "WINDOWS-1252"},
	{"iso-8859-1", "WINDOWS-1252"}, {"iso8859-1", "WINDOWS-1252"},
	{"iso_8859-1", "WINDOWS-1252"}, {"latin1", "WINDOWS-1252"},
	{"l1", "WINDOWS-1252"}, {"cp819", "WINDOWS-1252"},
	{"ibm819", "WINDOWS-1252"}, {"windows-1252", "WINDOWS-1252"},
	{"cp1252", "WINDOWS-1252"}, {"x-cp1252", "WINDOWS-1252"},
	{"iso-8859-9", "WINDOWS-1254"}, {"latin5", "WINDOWS-1254"},
	{"iso-8859-11", "CP874"}, {"tis-620", "CP874"},
	{"windows-874", "CP874"},
	{"gb2312", "GB18030"}, {"gbk", "GB18030"}, {"x-gbk", "GB18030"},
	{"chinese", "GB18030"}, {"gb_2312-80", "GB18030"},
	{"gb18030", "GB18030"},
	{"big5", "BIG5-HKSCS"}, {"big5-hkscs", "BIG5-HKSCS"},
	{"x-x-big5", "BIG5-HKSCS"},
	{"shift_jis", "CP932"}, {"shift-jis", "CP932"}, {"sjis", "CP932"},
	{"x-sjis", "CP932"}, {"ms_kanji", "CP932"}, {"windows-31j", "CP932"},
	{"euc-kr", "CP949"}, {"ks_c_5601-1987", "CP949"},
	{"windows-949", "CP949"},
	{"koi8-r", "KOI8-R"}, {"koi8-u", "KOI8-U"},
};

const char *x_charset_label(const char *label, size_t n, char *buf)
{
	size_t i, k = 0;

	while (n > 0 && (*label == ' ' || *label == '\t' || *label == '"' ||
			 *label == '\''))
		label++, n--;
	while (n > 0 && (label[n - 1] == ' ' || label[n - 1] == '\t' ||
			 label[n - 1] == '"' || label[n - 1] == '\'' ||
			 label[n - 1] == ';'))
		n--;
	if (n == 0 || n > 32)
		return NULL;
	for (i = 0; i < n; i++) {
		char c = label[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.' || c == ':'))
			return NULL;
		buf[k++] = c;
	}
	buf[k] = '\0';
	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(aliases[i].label, buf) == 0)
			return aliases[i].iconv;
	for (i = 0; i < k; i++)
		if (buf[i] >= 'a' && buf[i] <= 'z')
			buf[i] = (char)(buf[i] - 'a' + 'A');
	return buf;
}

/* The value of "charset=" inside a Content-Type like value. */
static const char *charset_param(const char *s, size_t n, size_t *vlen)
{
	size_t i, k;

	for (i = 0; i + 8 <= n; i++) {
		if (strncasecmp(s + i, "charset", 7) != 0)
			continue;
		k = i + 7;
		while (k < n && (s[k] == ' ' || s[k] == '\t'))
			k++;
		if (k >= n || s[k] != '=')
			continue;
		k++;
		while (k < n && (s[k] == ' ' || s[k] == '"' || s[k] == '\''))
			k++;
		i = k;
		while (k < n && s[k] != ';' && s[k] != '"' && s[k] != '\'' &&
		       s[k] != ' ' && s[k] != ',')
			k++;
		*vlen = k - i;
		return s + i;
	}
	return NULL;
}

/* One attribute of a tag: returns the position after it, or 0 at the end. */
static size_t attr(const char *s, size_t n, size_t i, const char **name,
		   size_t *nlen, const char **val, size_t *vlen)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
			 s[i] == '\r' || s[i] == '\f' || s[i] == '/'))
		i++;
	if (i >= n || s[i] == '>')
		return 0;
	*name = s + i;
	while (i < n && s[i] != '=' && s[i] != '>' && s[i] != ' ' &&
	       s[i] != '\t' && s[i] != '\n' && s[i] != '\r' && s[i] != '/')
		i++;
	*nlen = (size_t)(s + i - *name);
	*val = NULL;
	*vlen = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
			 s[i] == '\r'))
		i++;
	if (i >= n || s[i] != '=')
		return i;
	i++;
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
			 s[i] == '\r'))
		i++;
	if (i < n && (s[i] == '"' || s[i] == '\'')) {
		char q = s[i++];
		const char *e = memchr(s + i, q, n - i);

		*val = s + i;
		if (e == NULL) {
			*vlen = n - i;
			return n;
		}
		*vlen = (size_t)(e - (s + i));
		return (size_t)(e - s) + 1;
	}
	*val = s + i;
	while (i < n && s[i] != '>' && s[i] != ' ' && s[i] != '\t' &&
	       s[i] != '\n' && s[i] != '\r')
		i++;
	*vlen = (size_t)(s + i - *val);
	return i;
}

/* The charset a <meta> in the first bytes declares (the prescan). */
static const char *sniff_meta(const char *s, size_t n, char *buf)
{
	size_t i, k, nlen, vlen;
	const char *name, *val, *cs = NULL, *r;
	size_t cslen = 0;
	int http_equiv;

	if (n > SNIFF_BYTES)
		n = SNIFF_BYTES;
	for (i = 0; i + 5 < n; i++) {
		const char *lt = memchr(s + i, '<', n - 5 - i);

		if (lt == NULL)
			break;
		i = (size_t)(lt - s);
		if (i + 4 <= n && memcmp(s + i, "<!--", 4) == 0) {
			const char *e = memmem(s + i + 4, n - i - 4, "-->", 3);

			if (e == NULL)
				return NULL;
			i = (size_t)(e - s) + 2;
			continue;
		}
		if (strncasecmp(s + i, "<meta", 5) != 0 ||
		    (s[i + 5] != ' ' && s[i + 5] != '\t' && s[i + 5] != '\n' &&
		     s[i + 5] != '\r' && s[i + 5] != '/'))
			continue;
		k = i + 5;
		http_equiv = 0;
		cs = NULL;
		const char *content = NULL;
		size_t clen = 0;

		while ((k = attr(s, n, k, &name, &nlen, &val, &vlen)) != 0) {
			if (val == NULL)
				continue;
			if (nlen == 7 && strncasecmp(name, "charset", 7) == 0) {
				cs = val;
				cslen = vlen;
			} else if (nlen == 10 &&
				   strncasecmp(name, "http-equiv", 10) == 0) {
				http_equiv = vlen == 12 &&
					strncasecmp(val, "content-type", 12) == 0;
			} else if (nlen == 7 &&
				   strncasecmp(name, "content", 7) == 0) {
				content = val;
				clen = vlen;
			}
		}
		if (cs == NULL && http_equiv && content != NULL)
			cs = charset_param(content, clen, &cslen);
		if (cs != NULL && (r = x_charset_label(cs, cslen, buf)) != NULL)
			return r;
	}
	return NULL;
}

static int add_fffd(char **o, size_t *left)
{
	if (*left < 3)
		return -1;
	memcpy(*o, "\xEF\xBF\xBD", 3);
	*o += 3;
	*left -= 3;
	return 0;
}

/* Invalid sequences become U+FFFD. */
static int repair_utf8(const char *s, size_t n, char **out, size_t *outlen)
{
	const unsigned char *p = (const unsigned char *)s;
	char *o = malloc(n * 3 + 1), *w = o;
	size_t i = 0, l;

	if (o == NULL)
		return -1;
	while (i < n) {
		if (p[i] < 0x80) {
			*w++ = (char)p[i++];
			continue;
		}
		if (x_utf8_next(p + i, n - i, &l) == 0xFFFD && l == 1) {
			memcpy(w, "\xEF\xBF\xBD", 3);
			w += 3;
			i++;
			continue;
		}
		memcpy(w, s + i, l);
		w += l;
		i += l;
	}
	*w = '\0';
	*out = o;
	*outlen = (size_t)(w - o);
	return 0;
}

/* iconv from `from`; -1 on out of memory, 1 if iconv does not know it. */
static int convert(const char *from, const char *s, size_t n, char **out,
		   size_t *outlen)
{
	iconv_t cd = iconv_open("UTF-8", from);
	size_t alloc = n * 4 + 16, inleft = n, left;
	char *o, *in = (char *)s, *w, *p;
	int rc = -1;

	if (cd == (iconv_t)-1)
		return 1;
	if ((o = malloc(alloc)) == NULL)
		goto out;
	w = o;
	left = alloc - 1;
	while (inleft > 0) {
		if (iconv(cd, &in, &inleft, &w, &left) != (size_t)-1)
			break;
		if (errno == E2BIG) {
			size_t used = (size_t)(w - o);

			alloc *= 2;
			if ((p = realloc(o, alloc)) == NULL)
				goto out;
			o = p;
			w = o + used;
			left = alloc - used - 1;
			continue;
		}
		if (left < 3) {
			errno = E2BIG;
			continue;
		}
		add_fffd(&w, &left);
		if (errno == EINVAL)	/* incomplete sequence at the end */
			break;
		in++;			/* EILSEQ: skip one byte */
		inleft--;
		iconv(cd, NULL, NULL, NULL, NULL);
	}
	*w = '\0';
	*out = o;
	*outlen = (size_t)(w - o);
	o = NULL;
	rc = 0;
out:
	free(o);
	iconv_close(cd);
	return rc;
}

int x_to_utf8(const char *html, size_t len, const char *charset,
	      const char **out, size_t *outlen, int *own, char used[48])
{
	char buf[48];
	const unsigned char *u = (const unsigned char *)html;
	const char *label = NULL, *v;
	char *conv = NULL;
	size_t vlen, clen;
	int rc;

	*own = 0;
	if (len >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF) {
		html += 3;
		len -= 3;
		label = "UTF-8";
	} else if (len >= 2 && u[0] == 0xFE && u[1] == 0xFF) {
		html += 2;
		len -= 2;
		label = "UTF-16BE";
	} else if (len >= 2 && u[0] == 0xFF && u[1] == 0xFE) {
		html += 2;
		len -= 2;
		label = "UTF-16LE";
	}
	if (label == NULL && charset != NULL && *charset != '\0') {
		/* A label, or a whole Content-Type value. */
		if ((v = charset_param(charset, strlen(charset), &vlen)) ==
		    NULL) {
			v = charset;
			vlen = strlen(charset);
		}
		label = x_charset_label(v, vlen, buf);
		/* UTF-16 named by HTTP is real (WHATWG: the transport's
		 * label counts, only a meta tag's is taken as UTF-8), if
		 * the bytes agree: ASCII markup in UTF-16 has NUL bytes */
		if (vlen >= 6 && strncasecmp(v, "utf-16", 6) == 0 &&
		    memchr(html, '\0', len < 512 ? len : 512) != NULL)
			label = vlen >= 8 && strncasecmp(v + 6, "be", 2) == 0 ?
					"UTF-16BE" : "UTF-16LE";
	}
	if (label == NULL)
		label = sniff_meta(html, len, buf);
	if (label == NULL)
		label = x_utf8_valid(html, len) ? "UTF-8" : "WINDOWS-1252";
	snprintf(used, 48, "%s", label);
	if (strcmp(label, "UTF-8") == 0) {
		if (x_utf8_valid(html, len)) {
			*out = html;
			*outlen = len;
			return 0;
		}
		if (repair_utf8(html, len, &conv, &clen) < 0)
			return -1;
	} else {
		rc = convert(label, html, len, &conv, &clen);
		if (rc < 0)
			return -1;
		if (rc > 0) {	/* unknown to iconv: read as UTF-8 */
			snprintf(used, 48, "UTF-8");
			if (x_utf8_valid(html, len)) {
				*out = html;
				*outlen = len;
				return 0;
			}
			if (repair_utf8(html, len, &conv, &clen) < 0)
				return -1;
		}
	}
	*out = conv;
	*outlen = clen;
	*own = 1;
	return 0;
}
