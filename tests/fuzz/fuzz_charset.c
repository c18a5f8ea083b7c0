/*
 * fuzz_charset.c - libFuzzer target for charset detection and conversion
 * (tests/fuzz/run): x_to_utf8() on the page bytes, with the charset the
 * first byte picks as the HTTP header's (or none: then BOM, <meta>,
 * UTF-8 validity, windows-1252), and x_charset_label() on the first line.
 * Contract: the output is valid UTF-8; it is the input itself only when
 * the input was valid UTF-8 already; the label fits its buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "extract_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *cs, *out, *label, *nl;
	size_t outlen, n;
	char used[48], buf[48];
	int own;

	cs = fuzz_charset(&data, &size);
	if (x_to_utf8((const char *)data, size, cs, &out, &outlen, &own,
		      used) < 0)
		return 0;	/* out of memory only */
	if (!x_utf8_valid(out, outlen) || memchr(used, '\0', 48) == NULL)
		abort();
	if (!own && (out < (const char *)data ||
		     out + outlen > (const char *)data + size))
		abort();
	if (own)
		free((char *)out);

	nl = memchr(data, '\n', size);
	n = nl != NULL ? (size_t)(nl - (const char *)data) : size;
	memset(buf, 'x', sizeof(buf));
	label = x_charset_label((const char *)data, n, buf);
	if (label != NULL && strnlen(label, 40) >= 40)
		abort();
	return 0;
}
