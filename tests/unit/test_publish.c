/* Publishing: gzip, the manifest, incremental commits, never half-written. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <libdeflate.h>
#include <zlib.h>

#include "linkbot/buf.h"
#include "linkbot/fsutil.h"
#include "linkbot/links.h"
#include "linkbot/publish.h"

static const struct lb_object_meta page_meta = {
	"application/json", "gzip", "public, max-age=86400"
};

struct fixture {
	char root[64];
	struct lb_store *st;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct lb_error err;

	strcpy(f->root, "/tmp/test_publish.XXXXXX");
	if (mkdtemp(f->root) == NULL)
		return -1;
	lb_error_init(&err);
	if (store_open(NULL, f->root, &f->st, &err) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	store_free(f->st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static char *gunzip(const char *data, size_t len)
{
	z_stream zs;
	static char out[1 << 16];

	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
	zs.next_in = (Bytef *)(size_t)data;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)out;
	zs.avail_out = sizeof(out) - 1;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	out[zs.total_out] = '\0';
	inflateEnd(&zs);
	return out;
}

static void test_gzip(void **state)
{
	const char *text = "{\"message\":\"hello\",\"related_links\":[]}";
	struct lb_error err;
	char *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0;

	(void)state;
	lb_error_init(&err);
	assert_int_equal(lb_gzip(text, strlen(text), &a, &alen, &err), 0);
	assert_int_equal(lb_gzip(text, strlen(text), &b, &blen, &err), 0);
	/* gzip magic, deflate, no name, mtime 0: the same bytes every run. */
	assert_true(alen > 18);
	assert_int_equal((unsigned char)a[0], 0x1f);
	assert_int_equal((unsigned char)a[1], 0x8b);
	assert_int_equal(a[3], 0);
	assert_int_equal(a[4] | a[5] | a[6] | a[7], 0);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	assert_string_equal(gunzip(a, alen), text);
	free(a);
	free(b);
	assert_int_equal(lb_gzip("", 0, &a, &alen, &err), 0);
	assert_string_equal(gunzip(a, alen), "");
	free(a);
}

/*
 * An answer as the edge and a CDN read it: one gzip member whose trailer
 * holds the CRC-32 and length of the JSON (zlib checks both), and no
 * bigger than zlib's level 9 makes it (the store does not grow with the
 * one-shot compressor).
 */
static void test_gzip_answer(void **state)
{
	char json[4096];
	size_t len = 0, glen = 0, i;
	char *gz = NULL;
	unsigned char *t, zbuf[8192];
	struct lb_error err;
	z_stream zs;
	uLong crc;

	(void)state;
	len += (size_t)snprintf(json + len, sizeof(json) - len,
				"{\"message\":\"4 links: 4 related, 0 random.\","
				"\"related_links\":[");
	for (i = 0; i < 4; i++)
		len += (size_t)snprintf(json + len, sizeof(json) - len,
			"%s{\"url\":\"https://www.example.com/blog/post-%zu-"
			"about-internal-links/\",\"title\":\"Post %zu: how "
			"internal links help readers\",\"type\":\"related\"}",
			i ? "," : "", i * 37 + 11, i);
	len += (size_t)snprintf(json + len, sizeof(json) - len, "]}");
	lb_error_init(&err);
	assert_int_equal(lb_gzip(json, len, &gz, &glen, &err), 0);
	assert_string_equal(gunzip(gz, glen), json);
	t = (unsigned char *)gz + glen - 8;
	crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)json, (uInt)len);
	assert_int_equal(t[0] | t[1] << 8 | t[2] << 16 | (uLong)t[3] << 24,
			 crc);
	assert_int_equal(t[4] | t[5] << 8 | t[6] << 16 | (size_t)t[7] << 24,
			 len);
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, 16 + 15, 8,
				      Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (Bytef *)json;
	zs.avail_in = (uInt)len;
	zs.next_out = zbuf;
	zs.avail_out = sizeof(zbuf);
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	assert_true(glen <= zs.total_out);
	deflateEnd(&zs);
	free(gz);
}

/* One deflate state for many objects gives lb_gzip()'s bytes for each. */
static void test_gzip_reused(void **state)
{
	static char big[200000];
	const char *texts[5];
	size_t lens[5], i, k;
	struct lb_gzip *gz = lb_gzip_new();
	struct lb_error err;

	(void)state;
	for (i = 0; i < sizeof(big) - 1; i++)	/* compressible, not trivial */
		big[i] = (char)('a' + (i * 7 + i / 13) % 26);
	texts[0] = "{\"message\":\"hello\",\"related_links\":[]}";
	texts[1] = "";
	texts[2] = big;
	texts[3] = "{\"message\":\"2 links: 2 related, 0 random.\"}";
	texts[4] = texts[0];
	for (i = 0; i < 5; i++)
		lens[i] = strlen(texts[i]);
	assert_non_null(gz);
	lb_error_init(&err);
	for (k = 0; k < 2; k++)		/* twice round: reset after each */
		for (i = 0; i < 5; i++) {
			char *a = NULL, *b = NULL;
			size_t alen = 0, blen = 0;

			assert_int_equal(lb_gzip(texts[i], lens[i], &a, &alen,
						 &err), 0);
			assert_int_equal(lb_gzip_run(gz, texts[i], lens[i], &b,
						     &blen, &err), 0);
			assert_int_equal(alen, blen);
			assert_memory_equal(a, b, alen);
			if (i != 2)
				assert_string_equal(gunzip(b, blen), texts[i]);
			free(a);
			free(b);
		}
	lb_gzip_free(gz);
	lb_gzip_free(NULL);
}

static char *path_of(struct fixture *f, const char *key);

/*
 * The compressors' pool (publish.c): a freed compressor is the next one
 * lb_gzip_new() hands out, and it gives a new libdeflate compressor's
 * bytes (level 9) whatever it compressed before, large or small; the pool
 * keeps at most 16 idle.
 */
static void test_gzip_pool(void **state)
{
	static char big[100000];
	const char *texts[4] = {
		"{\"message\":\"hello\",\"related_links\":[]}", big, "",
		"{\"message\":\"2 links: 2 related, 0 random.\",\"n\":[1,2,2,1]}",
	};
	struct libdeflate_compressor *ref = libdeflate_alloc_compressor(9);
	struct lb_gzip *gz, *again, *many[20];
	struct lb_error err;
	size_t i, k;

	(void)state;
	assert_non_null(ref);
	for (i = 0; i < sizeof(big) - 1; i++)
		big[i] = (char)('a' + (i * 11 + i / 7) % 26);
	lb_error_init(&err);
	lb_gzip_pool_drain();
	gz = lb_gzip_new();
	assert_non_null(gz);
	for (k = 0; k < 3; k++) {
		for (i = 0; i < 4; i++) {
			size_t len = strlen(texts[(i + k) % 4]), n = 0, rn;
			const char *t = texts[(i + k) % 4];
			size_t bound = libdeflate_gzip_compress_bound(ref, len);
			char *out = NULL, *want = malloc(bound);

			assert_int_equal(lb_gzip_run(gz, t, len, &out, &n, &err),
					 0);
			rn = libdeflate_gzip_compress(ref, t, len, want, bound);
			assert_int_equal(n, rn);
			assert_memory_equal(out, want, n);
			free(out);
			free(want);
		}
		lb_gzip_free(gz);
		again = lb_gzip_new();	/* the pool's, not a new one */
		assert_ptr_equal(again, gz);
		gz = again;
	}
	lb_gzip_free(gz);
	assert_int_equal(lb_gzip_pool_drain(), 1);
	assert_int_equal(lb_gzip_pool_drain(), 0);
	for (i = 0; i < 20; i++)
		assert_non_null(many[i] = lb_gzip_new());
	for (i = 0; i < 20; i++)
		lb_gzip_free(many[i]);
	assert_int_equal(lb_gzip_pool_drain(), 16);
	libdeflate_free_compressor(ref);
}

/*
 * publish_add_owned() stores the bytes publish_add() stores (the same
 * objects and manifest), without a copy; on failure it frees the data
 * (ASan's leak check holds that).
 */
static void test_add_owned(void **state)
{
	struct fixture *f = *state;
	const char *texts[3] = { "{\"a\":1}", "{\"b\":22}", "" };
	const char *keys[3] = { "pages/a.json", "pages/b.json", "random.json" };
	struct lb_publish *p1 = publish_new("x/one"), *p2 = publish_new("x/two");
	struct lb_publish_stats s;
	struct lb_error err;
	char *m1 = NULL, *m2 = NULL, *bad;
	size_t i, l1 = 0, l2 = 0;

	lb_error_init(&err);
	for (i = 0; i < 3; i++) {
		char *gz = NULL;
		size_t n = 0;

		assert_int_equal(lb_gzip(texts[i], strlen(texts[i]), &gz, &n,
					 &err), 0);
		assert_int_equal(publish_add(p1, keys[i], gz, n, &page_meta,
					     &err), 0);
		assert_int_equal(publish_add_owned(p2, keys[i], gz, n,
						   &page_meta, &err), 0);
	}
	bad = strdup("x");
	assert_int_equal(publish_add_owned(p2, "manifest.json", bad, 1,
					   &page_meta, &err), -1);
	assert_int_equal(err.code, LB_EINVALID);
	assert_int_equal(publish_add_owned(p2, "pages/c.json", NULL, 0,
					   &page_meta, &err), -1);
	assert_int_equal(publish_commit(p1, f->st, 0, &s, &err), 0);
	assert_int_equal(s.uploaded, 3);
	assert_int_equal(publish_commit(p2, f->st, 0, &s, &err), 0);
	assert_int_equal(s.uploaded, 3);
	publish_free(p1);
	publish_free(p2);
	for (i = 0; i < 3; i++) {
		char k1[64], k2[64];

		snprintf(k1, sizeof(k1), "x/one/%s", keys[i]);
		snprintf(k2, sizeof(k2), "x/two/%s", keys[i]);
		assert_int_equal(lb_file_read(path_of(f, k1), 1 << 20, &m1, &l1,
					      &err), 0);
		assert_int_equal(lb_file_read(path_of(f, k2), 1 << 20, &m2, &l2,
					      &err), 0);
		assert_int_equal(l1, l2);
		assert_memory_equal(m1, m2, l1);
		assert_string_equal(gunzip(m2, l2), texts[i]);
		free(m1);
		free(m2);
	}
	assert_int_equal(lb_file_read(path_of(f, "x/one/manifest.json"), 1 << 20,
				      &m1, &l1, &err), 0);
	assert_int_equal(lb_file_read(path_of(f, "x/two/manifest.json"), 1 << 20,
				      &m2, &l2, &err), 0);
	assert_int_equal(l1, l2);
	assert_memory_equal(m1, m2, l1);
	free(m1);
	free(m2);
}

/*
 * lb_buf_add()'s fast path (room in the allocation) keeps the cap: a
 * buffer whose allocation has room past its cap still refuses to pass it.
 */
static void test_buf_cap(void **state)
{
	struct lb_buf b;
	struct lb_error err;

	(void)state;
	lb_error_init(&err);
	lb_buf_init(&b, 10);
	assert_int_equal(lb_buf_adds(&b, "abcd", &err), 0);	/* alloc 64 */
	assert_int_equal(lb_buf_adds(&b, "efghij", &err), 0);	/* len 10 */
	assert_string_equal(b.data, "abcdefghij");
	assert_int_equal(lb_buf_addc(&b, 'k', &err), -1);
	assert_int_equal(err.code, LB_ETOOBIG);
	assert_int_equal(b.len, 10);
	lb_buf_reset(&b);
	assert_int_equal(lb_buf_add(&b, "0123456789", 10, &err), 0);
	assert_int_equal(lb_buf_add(&b, "", 0, &err), 0);
	assert_int_equal(lb_buf_add(&b, "x", (size_t)-1, &err), -1);
	assert_string_equal(b.data, "0123456789");
	lb_buf_release(&b);
	lb_buf_init(&b, 1 << 20);
	assert_int_equal(lb_buf_add(&b, "", 0, &err), 0);	/* from NULL */
	assert_string_equal(b.data, "");
	lb_buf_release(&b);
}

static char *path_of(struct fixture *f, const char *key)
{
	static char p[512];

	snprintf(p, sizeof(p), "%s/%s", f->root, key);
	return p;
}

static cJSON *manifest(struct fixture *f, const char *folder)
{
	char key[256], *text = NULL;
	struct lb_error err;
	cJSON *o;

	snprintf(key, sizeof(key), "%s/manifest.json", folder);
	lb_error_init(&err);
	if (lb_file_read(path_of(f, key), 1 << 24, &text, NULL, &err) < 0)
		return NULL;
	o = cJSON_Parse(text);
	free(text);
	return o;
}

/* Publishes objects name=content from a NULL-terminated list. */
static int publish(struct fixture *f, const char *folder,
		   const char *const *kv, int dry_run,
		   struct lb_publish_stats *s, struct lb_error *err)
{
	struct lb_publish *p = publish_new(folder);
	int rc;

	for (; *kv != NULL; kv += 2) {
		char *gz = NULL;
		size_t n = 0;
		assert_int_equal(lb_gzip(kv[1], strlen(kv[1]), &gz, &n, err), 0);
		assert_int_equal(publish_add(p, kv[0], gz, n, &page_meta, err), 0);
		free(gz);
	}
	(void)f;
	rc = publish_commit(p, f->st, dry_run, s, err);
	publish_free(p);
	return rc;
}

static void sha_hex(const char *data, size_t len, char out[65])
{
	unsigned char md[32];
	unsigned int n = 0, i;

	EVP_Digest(data, len, md, &n, EVP_sha256(), NULL);
	for (i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
}

static void test_incremental(void **state)
{
	struct fixture *f = *state;
	const char *const v1[] = { "pages/a.json", "{\"a\":1}",
				   "pages/b.json", "{\"b\":1}",
				   "pages/c.json", "{\"c\":1}", NULL };
	const char *const v2[] = { "pages/a.json", "{\"a\":1}",
				   "pages/b.json", "{\"b\":2}",
				   "pages/d.json", "{\"d\":1}", NULL };
	struct lb_publish_stats s;
	struct lb_error err;
	struct stat sb1, sb2;
	cJSON *m;
	char *data = NULL, hex[65];
	size_t len = 0;

	lb_error_init(&err);
	assert_int_equal(publish(f, "demo/blog", v1, 0, &s, &err), 0);
	assert_int_equal(s.objects, 3);
	assert_int_equal(s.uploaded, 3);
	assert_int_equal(s.deleted, 0);
	assert_true(lb_file_exists(path_of(f, "demo/blog/pages/c.json")));
	m = manifest(f, "demo/blog");
	assert_non_null(m);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(m, "objects")), 3);
	/* The manifest holds the SHA-256 of the stored bytes. */
	assert_int_equal(lb_file_read(path_of(f, "demo/blog/pages/a.json"), 1 << 20,
				      &data, &len, &err), 0);
	assert_string_equal(gunzip(data, len), "{\"a\":1}");
	sha_hex(data, len, hex);
	free(data);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "objects"),
						"pages/a.json")->valuestring, hex);
	cJSON_Delete(m);

	/* Unchanged: zero uploads, and not even the manifest is rewritten. */
	assert_int_equal(stat(path_of(f, "demo/blog/manifest.json"), &sb1), 0);
	assert_int_equal(publish(f, "demo/blog", v1, 0, &s, &err), 0);
	assert_int_equal(s.uploaded, 0);
	assert_int_equal(s.unchanged, 3);
	assert_int_equal(stat(path_of(f, "demo/blog/manifest.json"), &sb2), 0);
	assert_int_equal(sb1.st_ino, sb2.st_ino);

	/* Dry run: says what would change, changes nothing. */
	assert_int_equal(publish(f, "demo/blog", v2, 1, &s, &err), 0);
	assert_int_equal(s.uploaded, 2);
	assert_int_equal(s.deleted, 1);
	assert_int_equal(s.unchanged, 1);
	assert_true(lb_file_exists(path_of(f, "demo/blog/pages/c.json")));
	assert_false(lb_file_exists(path_of(f, "demo/blog/pages/d.json")));

	/* Changed b, new d, gone c. */
	assert_int_equal(publish(f, "demo/blog", v2, 0, &s, &err), 0);
	assert_int_equal(s.uploaded, 2);
	assert_int_equal(s.deleted, 1);
	assert_int_equal(s.unchanged, 1);
	assert_false(lb_file_exists(path_of(f, "demo/blog/pages/c.json")));
	assert_true(lb_file_exists(path_of(f, "demo/blog/pages/d.json")));
	m = manifest(f, "demo/blog");
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "objects"), "pages/c.json"));
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "objects"), "pages/d.json"));
	cJSON_Delete(m);
}

static void test_failed_run_converges(void **state)
{
	struct fixture *f = *state;
	const char *const v1[] = { "pages/a.json", "{\"a\":1}", NULL };
	const char *const v2[] = { "pages/a.json", "{\"a\":2}",
				   "pages/n.json", "{\"n\":1}",
				   "pages/z.json", "{\"z\":1}", NULL };
	/* v3 reverts a to v1's bytes, which the failed run had replaced. */
	const char *const v3[] = { "pages/a.json", "{\"a\":1}", NULL };
	struct lb_publish_stats s;
	struct lb_error err;
	cJSON *m, *objs;
	char cmd[600];

	lb_error_init(&err);
	assert_int_equal(publish(f, "c/e", v1, 0, &s, &err), 0);
	/* Block the last upload: a directory where the file must go. */
	assert_int_equal(lb_mkdirs(path_of(f, "c/e/pages/z.json/x"), &err), 0);
	assert_int_equal(publish(f, "c/e", v2, 0, &s, &err), -1);
	assert_int_equal(err.code, LB_ESTORE);
	/* a and n were written; the manifest marks every key touched pending. */
	assert_true(lb_file_exists(path_of(f, "c/e/pages/n.json")));
	m = manifest(f, "c/e");
	objs = cJSON_GetObjectItem(m, "objects");
	assert_string_equal(cJSON_GetObjectItem(objs, "pages/n.json")->valuestring, "");
	assert_string_equal(cJSON_GetObjectItem(objs, "pages/z.json")->valuestring, "");
	assert_string_equal(cJSON_GetObjectItem(objs, "pages/a.json")->valuestring, "");
	cJSON_Delete(m);

	/* The next run no longer produces n: it is deleted all the same. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path_of(f, "c/e/pages/z.json"));
	assert_int_equal(system(cmd), 0);
	lb_error_init(&err);
	assert_int_equal(publish(f, "c/e", v3, 0, &s, &err), 0);
	assert_int_equal(s.uploaded, 1);
	assert_int_equal(s.deleted, 2);
	assert_false(lb_file_exists(path_of(f, "c/e/pages/n.json")));
	{
		char *data = NULL;
		size_t len = 0;
		assert_int_equal(lb_file_read(path_of(f, "c/e/pages/a.json"), 1 << 20,
					      &data, &len, &err), 0);
		assert_string_equal(gunzip(data, len), "{\"a\":1}");
		free(data);
	}
	m = manifest(f, "c/e");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(m, "objects")), 1);
	cJSON_Delete(m);
}

static void test_no_manifest(void **state)
{
	struct fixture *f = *state;
	const char *const v[] = { "pages/a.json", "{\"a\":1}", NULL };
	struct lb_publish_stats s;
	struct lb_error err;

	/* Pages left by a lost manifest are deleted; other keys are not. */
	lb_error_init(&err);
	assert_int_equal(lb_mkdirs(path_of(f, "x/y/pages"), &err), 0);
	assert_int_equal(lb_file_write_atomic(path_of(f, "x/y/pages/old.json"), "x", 1, &err), 0);
	assert_int_equal(lb_file_write_atomic(path_of(f, "x/y/endpoint.json"), "{}", 2, &err), 0);
	assert_int_equal(publish(f, "x/y", v, 0, &s, &err), 0);
	assert_int_equal(s.deleted, 1);
	assert_false(lb_file_exists(path_of(f, "x/y/pages/old.json")));
	assert_true(lb_file_exists(path_of(f, "x/y/endpoint.json")));
	assert_true(lb_file_exists(path_of(f, "x/y/pages/a.json")));
}

/*
 * A fresh folder (no manifest) is not marked first: a run that fails in
 * its uploads leaves no manifest, and the next one lists pages/, takes
 * what it finds as pending and converges (deletes what it no longer
 * produces, uploads the rest).
 */
static void test_fresh_failed_run_converges(void **state)
{
	struct fixture *f = *state;
	const char *const v1[] = { "pages/a.json", "{\"a\":1}",
				   "pages/n.json", "{\"n\":1}",
				   "pages/z.json", "{\"z\":1}", NULL };
	const char *const v2[] = { "pages/a.json", "{\"a\":1}", NULL };
	struct lb_publish_stats s;
	struct lb_error err;
	cJSON *m;
	char cmd[600];

	lb_error_init(&err);
	assert_int_equal(lb_mkdirs(path_of(f, "f/e/pages/z.json/x"), &err), 0);
	assert_int_equal(publish(f, "f/e", v1, 0, &s, &err), -1);
	assert_int_equal(err.code, LB_ESTORE);
	assert_true(lb_file_exists(path_of(f, "f/e/pages/n.json")));
	assert_false(lb_file_exists(path_of(f, "f/e/manifest.json")));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path_of(f, "f/e/pages/z.json"));
	assert_int_equal(system(cmd), 0);
	lb_error_init(&err);
	assert_int_equal(publish(f, "f/e", v2, 0, &s, &err), 0);
	assert_int_equal(s.uploaded, 1);
	assert_int_equal(s.deleted, 1);
	assert_false(lb_file_exists(path_of(f, "f/e/pages/n.json")));
	m = manifest(f, "f/e");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(m, "objects")), 1);
	cJSON_Delete(m);
}

/* The manifest's keys are JSON strings: a key's quotes escaped, anywhere
 * (add_json_key() copies the runs between them whole). */
static void test_manifest_quotes(void **state)
{
	struct fixture *f = *state;
	static const char *const keys[] = { "pages/q\"1\".json",
					    "pages/\"lead", "pages/tail\"",
					    "pages/\"\"two", "pages/plain.json" };
	const char *const kv[] = { keys[0], "{}", keys[1], "{}", keys[2], "{}",
				   keys[3], "{}", keys[4], "{}", NULL };
	struct lb_publish_stats s;
	struct lb_error err;
	cJSON *m, *objs;
	size_t i;

	lb_error_init(&err);
	assert_int_equal(publish(f, "q/e", kv, 0, &s, &err), 0);
	m = manifest(f, "q/e");
	assert_non_null(m);
	objs = cJSON_GetObjectItemCaseSensitive(m, "objects");
	assert_int_equal(cJSON_GetArraySize(objs), 5);
	for (i = 0; i < 5; i++)
		assert_non_null(cJSON_GetObjectItemCaseSensitive(objs, keys[i]));
	cJSON_Delete(m);
}

static void test_bad_input(void **state)
{
	struct fixture *f = *state;
	const char *const dup[] = { "pages/a.json", "1", "pages/a.json", "2", NULL };
	struct lb_publish *p = publish_new("q/r");
	struct lb_publish_stats s;
	struct lb_error err;

	lb_error_init(&err);
	assert_int_equal(publish_add(p, "manifest.json", "x", 1, NULL, &err), -1);
	assert_int_equal(err.code, LB_EINVALID);
	publish_free(p);
	lb_error_init(&err);
	assert_int_equal(publish(f, "q/r", dup, 0, &s, &err), -1);
	assert_int_equal(err.code, LB_EINVALID);
	assert_false(lb_file_exists(path_of(f, "q/r/pages/a.json")));
	/* A key escaping the store is refused by the store. */
	p = publish_new("q/r");
	lb_error_init(&err);
	assert_int_equal(publish_add(p, "../../etc/x", "x", 1, NULL, &err), 0);
	assert_int_equal(publish_commit(p, f->st, 0, &s, &err), -1);
	assert_int_equal(err.code, LB_EINVALID);
	publish_free(p);
}

/* The one line reader of the state's TSV files (fsutil.h). */
struct seen {
	char text[256];
	size_t lines, stop_at;
};

static int see_line(char *line, size_t len, size_t lineno, void *arg,
		    struct lb_error *err)
{
	struct seen *s = arg;

	assert_int_equal(strlen(line), len);
	assert_int_equal(lineno, s->lines + 1);
	s->lines++;
	if (s->stop_at == lineno)
		return lb_error_set(err, LB_EPARSE, "line %zu", lineno);
	strncat(s->text, line, sizeof(s->text) - strlen(s->text) - 2);
	strcat(s->text, "|");
	return 0;
}

static void test_read_lines(void **state)
{
	char dir[] = "/tmp/lb-lines.XXXXXX", path[64];
	struct seen s = { "", 0, 0 };
	struct lb_error err;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.tsv", dir);
	lb_error_init(&err);
	/* missing: 1 when that is fine, an error naming the file otherwise */
	assert_int_equal(lb_file_read_lines(path, 1, see_line, &s, &err), 1);
	assert_int_equal(lb_file_read_lines(path, 0, see_line, &s, &err), -1);
	assert_non_null(strstr(err.msg, "x.tsv"));
	/* lines without their newline, the last one without one too */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("a\tb\n\n#c\nlast", f);
	assert_int_equal(fclose(f), 0);
	lb_error_init(&err);
	assert_int_equal(lb_file_read_lines(path, 0, see_line, &s, &err), 0);
	assert_string_equal(s.text, "a\tb||#c|last|");
	assert_int_equal(s.lines, 4);
	/* the callback stops the read with its error */
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	assert_int_equal(lb_file_read_lines(path, 0, see_line, &s, &err), -1);
	assert_string_equal(err.msg, "line 2");
	assert_int_equal(s.lines, 2);
	unlink(path);
	rmdir(dir);
}

/* links.tsv's score field against printf's "%.6f": every k / 2^n (the
 * exact ties of the sixth decimal among them: 1/128 is 0.0078125), ±0,
 * subnormals, infinities, NaN, the largest floats, and a million random
 * bit patterns. */
static void score_check(float x)
{
	char a[64], b[64];
	size_t n = links_score_text(a, x);

	snprintf(b, sizeof(b), "%.6f", (double)x);
	if (strcmp(a, b) != 0 || n != strlen(b))
		fail_msg("%a: '%s' (%zu), printf '%s'", (double)x, a, n, b);
}

static void test_links_score_text(void **state)
{
	uint64_t seed = 0x9e3779b97f4a7c15u;
	uint32_t u;
	float x;
	long k;
	int e, i;

	(void)state;
	for (e = 0; e <= 40; e++)
		for (k = -5000; k <= 5000; k++)
			score_check(ldexpf((float)k, -e));
	score_check(0.0f);
	score_check(-0.0f);
	score_check(1e-45f);
	score_check(-1e-45f);
	score_check(5e-7f);
	score_check(-5e-7f);
	score_check(INFINITY);
	score_check(-INFINITY);
	score_check(NAN);
	score_check(3.4e38f);
	score_check(1099511627775.0f);
	score_check(1099511627776.0f);	/* 2^40: printf's */
	for (i = 0; i < 1000000; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		u = (uint32_t)(seed >> 16);
		memcpy(&x, &u, sizeof(x));
		score_check(x);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gzip),
		cmocka_unit_test(test_links_score_text),
		cmocka_unit_test_setup_teardown(test_manifest_quotes, setup, teardown),
		cmocka_unit_test(test_gzip_answer),
		cmocka_unit_test(test_gzip_reused),
		cmocka_unit_test(test_gzip_pool),
		cmocka_unit_test(test_buf_cap),
		cmocka_unit_test_setup_teardown(test_add_owned, setup, teardown),
		cmocka_unit_test(test_read_lines),
		cmocka_unit_test_setup_teardown(test_incremental, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_run_converges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_manifest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fresh_failed_run_converges,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
