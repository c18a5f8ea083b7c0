/*
 * extract_fuzz.h - what the fuzz targets of the extractor share
 * (fuzz_extract.c, fuzz_charset.c, fuzz_jsonld.c): the charsets an "HTTP
 * header" may declare (the first byte of the input picks one, so every
 * iconv path is reached) and the check of one extracted string.
 */
#ifndef LINKBOT_FUZZ_EXTRACT_H
#define LINKBOT_FUZZ_EXTRACT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/extract/extract_int.h"

static const char *const fuzz_charsets[] = {
	NULL, "utf-8", "windows-1252", "iso-8859-1", "shift_jis", "gb2312",
	"euc-kr", "big5", "koi8-r", "utf-16le", "text/html; charset=EUC-JP",
	"x-unknown", "", "utf-16", "UTF-16BE", "text/html;charset=\"utf-16\"",
	"iso-2022-jp", "gb18030", "utf-7",
};

/* Takes the first byte of the input as the declared charset. */
static inline const char *fuzz_charset(const uint8_t **data, size_t *size)
{
	const char *cs;

	if (*size == 0)
		return NULL;
	cs = fuzz_charsets[**data %
			   (sizeof(fuzz_charsets) / sizeof(fuzz_charsets[0]))];
	(*data)++;
	(*size)--;
	return cs;
}

/* A field's contract: NULL, or non-empty valid UTF-8 within cap. */
static inline void fuzz_check_str(const char *name, const char *s,
				  size_t cap)
{
	size_t n;

	if (s == NULL)
		return;
	n = strlen(s);
	if (n == 0 || n > cap || !x_utf8_valid(s, n)) {
		fprintf(stderr, "bad field %s (%zu bytes): '%.80s'\n", name, n,
			s);
		abort();
	}
}

#endif
