/* gz.c - bounded gunzip; see gz.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "linkbot/buf.h"
#include "linkbot/gz.h"

int lb_is_gzip(const void *data, size_t len)
{
	const unsigned char *p = data;

	return len >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

int lb_gunzip(const void *data, size_t len, size_t cap, char **out,
	      size_t *out_len, struct lb_error *err)
{
	z_stream zs;
	struct lb_buf b;
	unsigned char chunk[16384];
	int zr = Z_OK, rc = -1;

	*out = NULL;
	memset(&zs, 0, sizeof(zs));
	lb_buf_init(&b, cap);
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return lb_error_set(err, LB_ENOMEM, "cannot start gunzip");
	zs.next_in = (Bytef *)(uintptr_t)data;
	zs.avail_in = (uInt)len;
	while (zr != Z_STREAM_END) {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zr = inflate(&zs, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END) {
			lb_error_set(err, LB_EPARSE, "invalid gzip data (%s)",
				     zs.msg ? zs.msg : "truncated");
			goto out;
		}
		if (lb_buf_add(&b, chunk, sizeof(chunk) - zs.avail_out, err) < 0)
			goto out;
		if (zr == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
			lb_error_set(err, LB_EPARSE, "truncated gzip data");
			goto out;
		}
	}
	if (out_len != NULL)
		*out_len = b.len;
	*out = lb_buf_take(&b);
	rc = 0;
out:
	inflateEnd(&zs);
	lb_buf_release(&b);
	return rc;
}
