/*
 * Stores: the directory store always; the S3 store when LB_TEST_S3 names a
 * running S3-compatible server ("http://127.0.0.1:PORT", bucket in
 * LB_TEST_S3_BUCKET), as tests/integration/publish-s3.sh does with s3rver.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "linkbot/config.h"
#include "linkbot/fsutil.h"
#include "linkbot/store.h"

static const struct lb_object_meta meta = {
	"application/json", "gzip", "public, max-age=86400"
};

struct fixture {
	char root[64];
	char location[256];
	struct lb_config cfg;
	struct lb_store *st;
};

static int setup_dir(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct lb_error err;

	strcpy(f->root, "/tmp/test_store.XXXXXX");
	if (mkdtemp(f->root) == NULL)
		return -1;
	snprintf(f->location, sizeof(f->location), "dir:%s", f->root);
	lb_error_init(&err);
	if (store_open(NULL, f->location, &f->st, &err) < 0)
		return -1;
	*state = f;
	return 0;
}

static int setup_s3(void **state)
{
	struct fixture *f;
	struct lb_error err;
	const char *ep = getenv("LB_TEST_S3");
	const char *bucket = getenv("LB_TEST_S3_BUCKET");
	static int run;

	if (ep == NULL || bucket == NULL)
		return 0;	/* the test skips itself */
	f = calloc(1, sizeof(*f));
	f->cfg.s3.endpoint = (char *)ep;
	f->cfg.s3.region = "us-east-1";
	f->cfg.s3.path_style = 1;
	snprintf(f->location, sizeof(f->location), "s3://%s/unit%d-%ld", bucket,
		 run++, (long)getpid());
	lb_error_init(&err);
	if (store_open(&f->cfg, f->location, &f->st, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	if (f == NULL)
		return 0;
	store_free(f->st);
	if (f->root[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
		if (system(cmd) != 0)
			return -1;
	}
	free(f);
	return 0;
}

struct seen {
	char keys[64][128];
	int n;
};

static int collect(const char *key, void *arg)
{
	struct seen *s = arg;

	if (s->n < 64)
		snprintf(s->keys[s->n++], 128, "%s", key);
	return 0;
}

/* The behaviour every store kind shares. */
static void common(struct fixture *f)
{
	struct lb_error err;
	struct seen s;
	char *data = NULL, big[70000];
	size_t len = 0, i;

	lb_error_init(&err);
	assert_int_equal(store_put(f->st, "c/e/pages/b.json", "bee", 3, &meta, &err), 0);
	assert_int_equal(store_put(f->st, "c/e/pages/a.json", "ay", 2, &meta, &err), 0);
	assert_int_equal(store_put(f->st, "c/e/endpoint.json", "{}", 2, NULL, &err), 0);
	assert_int_equal(store_put(f->st, "c/other/x.json", "x", 1, NULL, &err), 0);
	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	assert_int_equal(store_put(f->st, "c/e/big.json", big, sizeof(big), NULL, &err), 0);
	assert_int_equal(store_flush(f->st, &err), 0);

	assert_int_equal(store_get(f->st, "c/e/pages/b.json", &data, &len, &err), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(data, "bee", 3);
	free(data);
	assert_int_equal(store_get(f->st, "c/e/big.json", &data, &len, &err), 0);
	assert_int_equal(len, sizeof(big));
	assert_memory_equal(data, big, sizeof(big));
	free(data);

	/* Overwrite replaces the whole object. */
	assert_int_equal(store_put(f->st, "c/e/pages/b.json", "b", 1, &meta, &err), 0);
	assert_int_equal(store_flush(f->st, &err), 0);
	assert_int_equal(store_get(f->st, "c/e/pages/b.json", &data, &len, &err), 0);
	assert_int_equal(len, 1);
	free(data);

	/* Listing: sorted, only under the prefix. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_list(f->st, "c/e/", collect, &s, &err), 0);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.keys[0], "c/e/big.json");
	assert_string_equal(s.keys[1], "c/e/endpoint.json");
	assert_string_equal(s.keys[2], "c/e/pages/a.json");
	assert_string_equal(s.keys[3], "c/e/pages/b.json");
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_list(f->st, "c/e/pages/", collect, &s, &err), 0);
	assert_int_equal(s.n, 2);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_list(f->st, "nothing/", collect, &s, &err), 0);
	assert_int_equal(s.n, 0);

	/* Delete, twice: the second is not an error. */
	assert_int_equal(store_delete(f->st, "c/e/pages/a.json", &err), 0);
	assert_int_equal(store_flush(f->st, &err), 0);
	assert_int_equal(store_delete(f->st, "c/e/pages/a.json", &err), 0);
	assert_int_equal(store_flush(f->st, &err), 0);
	assert_int_equal(store_get(f->st, "c/e/pages/a.json", &data, &len, &err), -1);
	assert_int_equal(err.code, LB_ENOTFOUND);
	assert_null(data);

	/* Keys that could escape the root or prefix are refused. */
	{
		static const char *const bad[] = {
			"", "/abs", "a//b", "../x", "a/../b", "a/./b", "a/.tmp",
			"a\\b", "a\nb", "a/", NULL };
		for (i = 0; bad[i] != NULL; i++) {
			lb_error_init(&err);
			if (store_put(f->st, bad[i], "x", 1, NULL, &err) == 0)
				fail_msg("key '%s' accepted", bad[i]);
			assert_int_equal(err.code, LB_EINVALID);
		}
	}
}

static void links(struct fixture *f);

static void test_dir(void **state)
{
	struct fixture *f = *state;
	struct lb_error err;
	struct seen s;
	char tmp[128];

	common(f);
	assert_string_equal(store_describe(f->st) + 4, f->root);
	/* A stray temporary file of a killed run is invisible. */
	snprintf(tmp, sizeof(tmp), "%s/c/e/pages/.z.json.123.tmp", f->root);
	lb_error_init(&err);
	assert_int_equal(lb_file_write_atomic(tmp, "half", 4, &err), 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_list(f->st, "c/e/pages/", collect, &s, &err), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.keys[0], "c/e/pages/b.json");
	links(f);
}

/*
 * State markers (docs/store.md): a link is made, replaced at once, removed
 * (twice is fine); pages are found through it; it is not an object, and
 * listing does not go through it.
 */
static void links(struct fixture *f)
{
	struct lb_error err;
	struct seen s;
	char path[160], target[16];
	struct stat sb;
	ssize_t n;
	int i;

	lb_error_init(&err);
	for (i = 0; i < 2; i++)
		assert_int_equal(store_link(f->st, "c/e/active-standard", "pages",
					    &err), 0);
	snprintf(path, sizeof(path), "%s/c/e/active-standard", f->root);
	n = readlink(path, target, sizeof(target) - 1);
	assert_int_equal(n, 5);
	target[n] = '\0';
	assert_string_equal(target, "pages");
	snprintf(path, sizeof(path), "%s/c/e/active-standard/b.json", f->root);
	assert_int_equal(access(path, R_OK), 0);
	assert_int_equal(store_link(f->st, "n/ew/active-enterprise", "pages",
				    &err), 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_list(f->st, "c/e/", collect, &s, &err), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.keys[0], "c/e/big.json");
	assert_string_equal(s.keys[1], "c/e/endpoint.json");
	assert_string_equal(s.keys[2], "c/e/pages/b.json");
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_list(f->st, "", collect, &s, &err), 0);
	for (i = 0; i < s.n; i++)
		assert_null(strstr(s.keys[i], "active-"));
	for (i = 0; i < 2; i++)
		assert_int_equal(store_link(f->st, "c/e/active-standard", NULL,
					    &err), 0);
	snprintf(path, sizeof(path), "%s/c/e/active-standard", f->root);
	assert_int_not_equal(lstat(path, &sb), 0);
	assert_int_equal(store_link(f->st, "c/../x", "pages", &err), -1);
	assert_int_equal(err.code, LB_EINVALID);
}

/* Names in a directory (hidden ones too), or -1 if it cannot be read. */
static int entries(const char *dir, char names[][64], int max)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
		    n < max)
			snprintf(names[n++], 64, "%.63s", de->d_name);
	closedir(d);
	return n;
}

/*
 * The directory store keeps the directory of its last write open: puts
 * that go from one directory to another and back land where their keys
 * say, leave no temporary file, deletes and links work in it, and after a
 * flush a directory made anew by someone else is the one written to.
 */
static void test_dir_kept(void **state)
{
	struct fixture *f = *state;
	struct lb_error err;
	char path[256], names[8][64], *data = NULL;
	size_t len = 0;
	int n;

	lb_error_init(&err);
	assert_int_equal(store_put(f->st, "a/pages/1.json", "one", 3, &meta,
				   &err), 0);
	assert_int_equal(store_put(f->st, "b/pages/2.json", "two", 3, &meta,
				   &err), 0);
	assert_int_equal(store_put(f->st, "a/pages/3.json", "three", 5, &meta,
				   &err), 0);
	assert_int_equal(store_put(f->st, "a/pages/1.json", "uno", 3, &meta,
				   &err), 0);
	assert_int_equal(store_put(f->st, "a/random.json", "r", 1, &meta,
				   &err), 0);
	assert_int_equal(store_get(f->st, "a/pages/1.json", &data, &len, &err),
			 0);
	assert_int_equal(len, 3);
	assert_memory_equal(data, "uno", 3);
	free(data);
	assert_int_equal(store_get(f->st, "b/pages/2.json", &data, &len, &err),
			 0);
	assert_memory_equal(data, "two", 3);
	free(data);
	snprintf(path, sizeof(path), "%s/a/pages", f->root);
	n = entries(path, names, 8);
	assert_int_equal(n, 2);		/* 1.json, 3.json: no .tmp left */
	assert_true(names[0][0] != '.' && names[1][0] != '.');
	/* deletes through the kept directory, and of what is not there */
	assert_int_equal(store_delete(f->st, "a/pages/3.json", &err), 0);
	assert_int_equal(store_delete(f->st, "a/pages/3.json", &err), 0);
	assert_int_equal(store_delete(f->st, "zz/pages/9.json", &err), 0);
	assert_int_equal(store_link(f->st, "zz/active-standard", NULL, &err),
			 0);
	assert_int_equal(entries(path, names, 8), 1);
	assert_int_equal(store_flush(f->st, &err), 0);
	/* after a flush: the directory is looked up again */
	snprintf(path, sizeof(path), "rm -rf %s/b", f->root);
	assert_int_equal(system(path), 0);
	assert_int_equal(store_put(f->st, "b/pages/4.json", "four", 4, &meta,
				   &err), 0);
	assert_int_equal(store_get(f->st, "b/pages/4.json", &data, &len, &err),
			 0);
	assert_memory_equal(data, "four", 4);
	free(data);
	assert_int_equal(store_flush(f->st, &err), 0);
}

/*
 * How objects get their names (store_dir.c: an unnamed file linked under
 * a new key, the temporary name and a rename for a key that exists):
 * new and replaced objects hold exactly their bytes, one name each, mode
 * 0644 (less the umask), nothing hidden left beside them, also when a
 * killed run of the same pid left its temporary name of the key.
 */
static void test_dir_names(void **state)
{
	struct fixture *f = *state;
	struct lb_error err;
	char path[256], names[8][64], *data = NULL;
	struct stat sb;
	size_t len = 0;
	mode_t um = umask(022);
	int i;

	umask(um);
	lb_error_init(&err);
	for (i = 0; i < 3; i++) {
		const char *v = i == 0 ? "first" : i == 1 ? "second!" : "3";

		assert_int_equal(store_put(f->st, "n/pages/x.json", v,
					   strlen(v), &meta, &err), 0);
		assert_int_equal(store_get(f->st, "n/pages/x.json", &data,
					   &len, &err), 0);
		assert_int_equal(len, strlen(v));
		assert_memory_equal(data, v, len);
		free(data);
		snprintf(path, sizeof(path), "%s/n/pages/x.json", f->root);
		assert_int_equal(stat(path, &sb), 0);
		assert_int_equal(sb.st_nlink, 1);
		assert_int_equal(sb.st_mode & 0777, 0644 & ~um);
		if (i == 1) {
			/* a killed run with our pid left its temporary */
			snprintf(path, sizeof(path),
				 "%s/n/pages/.x.json.%ld.tmp", f->root,
				 (long)getpid());
			assert_int_equal(lb_file_write_atomic(path, "stale", 5,
							      &err), 0);
		}
	}
	assert_int_equal(store_put(f->st, "n/pages/y.json", "why", 3, &meta,
				   &err), 0);
	assert_int_equal(store_flush(f->st, &err), 0);
	snprintf(path, sizeof(path), "%s/n/pages", f->root);
	assert_int_equal(entries(path, names, 8), 2);	/* x.json, y.json */
	assert_true(names[0][0] != '.' && names[1][0] != '.');
}

static int write_two(FILE *fp, void *arg, struct lb_error *err)
{
	(void)arg;
	(void)err;
	return fputs("ab", fp) < 0 ? -1 : 0;
}

/* mkdir -p: deep, there already, trailing slash, through a file (error);
 * the atomic writers make the directories they miss. */
static void test_mkdirs(void **state)
{
	struct fixture *f = *state;
	struct lb_error err;
	char path[256];
	struct stat sb;

	lb_error_init(&err);
	snprintf(path, sizeof(path), "%s/m/n/o/p", f->root);
	assert_int_equal(lb_mkdirs(path, &err), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	assert_int_equal(lb_mkdirs(path, &err), 0);
	snprintf(path, sizeof(path), "%s/m/q//r/", f->root);
	assert_int_equal(lb_mkdirs(path, &err), 0);
	snprintf(path, sizeof(path), "%s/m/q/r", f->root);
	assert_int_equal(stat(path, &sb), 0);
	snprintf(path, sizeof(path), "%s/m/file", f->root);
	assert_int_equal(lb_file_write_atomic(path, "x", 1, &err), 0);
	snprintf(path, sizeof(path), "%s/m/file/s/t", f->root);
	assert_int_equal(lb_mkdirs(path, &err), -1);
	assert_int_equal(err.code, LB_EIO);
	lb_error_init(&err);
	snprintf(path, sizeof(path), "%s/m/u/v/w.json", f->root);
	assert_int_equal(lb_mkdirs_parent(path, &err), 0);
	snprintf(path, sizeof(path), "%s/m/u/v", f->root);
	assert_int_equal(stat(path, &sb), 0);
	/* the state writers make what is missing of their path */
	snprintf(path, sizeof(path), "%s/w/x/y/state.tsv", f->root);
	assert_int_equal(lb_file_write_atomic(path, "s", 1, &err), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_size, 1);
	snprintf(path, sizeof(path), "%s/w/z/stream.tsv", f->root);
	assert_int_equal(lb_file_write_stream(path, write_two, NULL, &err), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_size, 2);
	snprintf(path, sizeof(path), "%s/m/file/s/t.tsv", f->root);
	assert_int_equal(lb_file_write_atomic(path, "s", 1, &err), -1);
	assert_int_equal(err.code, LB_EIO);
}

static void test_s3(void **state)
{
	struct lb_error err;

	if (*state == NULL)
		skip();
	common(*state);
	/* no links in a bucket: nothing to do */
	lb_error_init(&err);
	assert_int_equal(store_link(((struct fixture *)*state)->st,
				    "c/e/active-standard", "pages", &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dir, setup_dir, teardown),
		cmocka_unit_test_setup_teardown(test_dir_kept, setup_dir,
						teardown),
		cmocka_unit_test_setup_teardown(test_dir_names, setup_dir,
						teardown),
		cmocka_unit_test_setup_teardown(test_mkdirs, setup_dir, teardown),
		cmocka_unit_test_setup_teardown(test_s3, setup_s3, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
