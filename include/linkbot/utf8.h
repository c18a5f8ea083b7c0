/*
 * utf8.h - one UTF-8 encoder for the stages that write code points back
 * as bytes (sitemaps' HTML entities, extracted text, rendered JSON).
 * Decoding stays with each stage: each has its own rule for bad input.
 */
#ifndef LINKBOT_UTF8_H
#define LINKBOT_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * Writes cp as 1 to 4 bytes into out and returns how many; a code point
 * that cannot be encoded (a surrogate, past U+10FFFF) becomes U+FFFD.
 */
size_t lb_utf8_put(char out[4], uint32_t cp);

#endif
