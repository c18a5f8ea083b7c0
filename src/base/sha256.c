/*
 * sha256.c - SHA-256 to hex; see sha256.h.
 *
 * The low-level SHA256_* calls, not EVP_Digest(): in OpenSSL 3, EVP looks
 * the algorithm up on every call (about half a microsecond, a tenth of what
 * the edge may add to static nginx per request, bench/RESULTS.md), and this
 * runs once per edge request. The digest is the same either way
 * (tests/unit/test_pageid.c holds it against the FIPS 180-2 vectors).
 */
/* SHA256_Init/Update/Final: deprecated in OpenSSL 3, still the fastest */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include "linkbot/sha256.h"

void lb_sha256_hex(const void *data, size_t len, char *out, size_t n_hex)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256_CTX c;
	size_t i;

	SHA256_Init(&c);
	SHA256_Update(&c, data, len);
	SHA256_Final(md, &c);
	if (n_hex > LB_SHA256_HEX_LEN)
		n_hex = LB_SHA256_HEX_LEN;
	for (i = 0; i < n_hex / 2; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[n_hex / 2 * 2] = '\0';
}
