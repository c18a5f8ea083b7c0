/* buf.c - growable byte buffer with a cap; see buf.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/buf.h"

void lb_buf_init(struct lb_buf *b, size_t cap)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap;
}

void lb_buf_release(struct lb_buf *b)
{
	free(b->data);
	lb_buf_init(b, b->cap);
}

void lb_buf_reset(struct lb_buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

static int buf_grow(struct lb_buf *b, size_t extra, struct lb_error *err)
{
	size_t need, alloc;
	char *p;

	if (extra > b->cap || b->len > b->cap - extra)
		return lb_error_set(err, LB_ETOOBIG,
				    "buffer would exceed its cap of %zu bytes",
				    b->cap);
	need = b->len + extra + 1;
	if (need <= b->alloc)
		return 0;
	alloc = b->alloc ? b->alloc : 64;
	while (alloc < need)
		alloc *= 2;
	p = realloc(b->data, alloc);
	if (p == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	b->data = p;
	b->alloc = alloc;
	return 0;
}

int lb_buf_add(struct lb_buf *b, const void *data, size_t len,
	       struct lb_error *err)
{
	/* Room already (the common case: a render adds ~100 short pieces
	 * an answer): buf_grow()'s checks without the call. */
	if (!(len < b->alloc - b->len && b->len + len <= b->cap) &&
	    buf_grow(b, len, err) < 0)
		return -1;
	if (len > 0)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int lb_buf_adds(struct lb_buf *b, const char *s, struct lb_error *err)
{
	return lb_buf_add(b, s, strlen(s), err);
}

int lb_buf_addc(struct lb_buf *b, char c, struct lb_error *err)
{
	return lb_buf_add(b, &c, 1, err);
}

int lb_buf_printf(struct lb_buf *b, struct lb_error *err, const char *fmt,
		  ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return lb_error_set(err, LB_EINTERNAL, "bad format");
	if (buf_grow(b, (size_t)n, err) < 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

char *lb_buf_take(struct lb_buf *b)
{
	char *p = b->data;

	if (p == NULL)
		p = calloc(1, 1);
	lb_buf_init(b, b->cap);
	return p;
}
