/*
 * sha256.h - the one SHA-256-to-hex helper.
 *
 * Page IDs (pageid.c, and the nginx module's edge_page_id() in answer.c),
 * the manifest's object hashes (publish.c), S3's x-amz-content-sha256
 * (store_s3.c) and the edge's project key check (answer.c) all hash here.
 * Built into the nginx module too (src/edge/nginx/config), so it depends
 * on nothing but libcrypto.
 */
#ifndef LINKBOT_SHA256_H
#define LINKBOT_SHA256_H

#include <stddef.h>

#define LB_SHA256_HEX_LEN 64	/* hex characters of a whole digest */

/*
 * out = the first n_hex lower-case hex characters of SHA-256(data), then a
 * NUL; n_hex is even and at most LB_SHA256_HEX_LEN (the page ID takes 32).
 * out has room for n_hex + 1.
 */
void lb_sha256_hex(const void *data, size_t len, char *out, size_t n_hex);

#endif
