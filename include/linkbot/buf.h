/*
 * buf.h - a growable byte buffer with a cap (curl dynbuf.h).
 *
 * Every buffer that grows from outside input (HTTP bodies, sitemaps,
 * decompressed gzip, JSON output) has a cap; growing past it fails with
 * LB_ETOOBIG rather than eating the machine's memory.
 *
 *   struct lb_buf b;
 *   lb_buf_init(&b, 10 << 20);
 *   if (lb_buf_add(&b, data, n, &err) < 0) ...
 *   use b.data (always NUL-terminated), b.len
 *   lb_buf_release(&b);          or: char *s = lb_buf_take(&b);
 *
 * The buffer owns b.data until lb_buf_take() hands it to the caller.
 */
#ifndef LINKBOT_BUF_H
#define LINKBOT_BUF_H

#include <stddef.h>
#include "linkbot/error.h"

struct lb_buf {
	char *data;	/* NUL-terminated when not NULL */
	size_t len;
	size_t alloc;
	size_t cap;	/* maximum len */
};

void lb_buf_init(struct lb_buf *b, size_t cap);
void lb_buf_release(struct lb_buf *b);
void lb_buf_reset(struct lb_buf *b);
int lb_buf_add(struct lb_buf *b, const void *data, size_t len,
	       struct lb_error *err);
int lb_buf_adds(struct lb_buf *b, const char *s, struct lb_error *err);
int lb_buf_addc(struct lb_buf *b, char c, struct lb_error *err);
int lb_buf_printf(struct lb_buf *b, struct lb_error *err, const char *fmt,
		  ...) __attribute__((format(printf, 3, 4)));
/* Hands out the data (never NULL: "" for an empty buffer); b is reset. */
char *lb_buf_take(struct lb_buf *b);

#endif
