/*
 * store_dir.c - the directory store: one file per key under a root.
 *
 * Each put writes a hidden temporary file (".<name>.<pid>.tmp") beside the
 * object and renames it over the key, so a reader (nginx, the edge) sees
 * the old object or the new one, never a part of one, even when the batch
 * is killed. Files are not synced one by one (a million fsyncs would
 * dominate a publish); store_flush() syncs the whole file system once, and
 * the publisher flushes before it writes the manifest, so after a power
 * loss the manifest never names data that did not reach the disk. A flush
 * when this handle changed nothing since its last one syncs nothing (a
 * syncfs of a busy file system waits for every other writer's data too).
 * Headers are implied by the key (docs/store.md): pages/ are gzipped JSON.
 * Links (the endpoints' state markers, store_link()) are made the same way:
 * a hidden link beside the key, renamed over it. They are not objects:
 * listing skips them (and never descends through one into pages/).
 */
#define _GNU_SOURCE	/* syncfs() */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linkbot/fsutil.h"
#include "linkbot/store.h"
#include "store_impl.h"

struct dir_store {
	struct lb_store base;
	char *root;
	int dirty;	/* a file made, replaced or removed since the flush */
};

static char *join(const struct dir_store *d, const char *key,
		  struct lb_error *err)
{
	char *p = lb_path_join(d->root, key);

	if (p == NULL)
		lb_error_set(err, LB_ENOMEM, "out of memory");
	return p;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* The temporary name beside path: "DIR/.NAME.PID.tmp" (hidden from
 * listings; a killed run's is replaced by the next run with its pid). */
static char *tmp_path(const char *path, struct lb_error *err)
{
	const char *slash = strrchr(path, '/');
	size_t n = strlen(path) + 32;
	char *tmp = malloc(n);

	if (tmp == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		return NULL;
	}
	snprintf(tmp, n, "%.*s/.%s.%ld.tmp", (int)(slash - path), path,
		 slash + 1, (long)getpid());
	return tmp;
}

static int dir_put(struct lb_store *st, const char *key, const void *data,
		   size_t len, const struct lb_object_meta *meta,
		   struct lb_error *err)
{
	struct dir_store *d = (struct dir_store *)st;
	char *path = NULL, *tmp = NULL;
	int fd = -1, rc = -1;

	(void)meta;
	if ((path = join(d, key, err)) == NULL)
		return -1;
	if ((tmp = tmp_path(path, err)) == NULL)
		goto out;
	d->dirty = 1;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ENOENT) {
		if (lb_mkdirs_parent(path, err) < 0)
			goto out;
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	}
	if (fd < 0) {
		lb_error_errno(err, LB_ESTORE, "cannot create '%s'", tmp);
		goto out;
	}
	if (write_all(fd, data, len) < 0) {
		lb_error_errno(err, LB_ESTORE, "cannot write '%s'", tmp);
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		lb_error_errno(err, LB_ESTORE, "cannot close '%s'", tmp);
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		lb_error_errno(err, LB_ESTORE, "cannot rename '%s'", tmp);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0 && tmp != NULL)
		unlink(tmp);
	free(tmp);
	free(path);
	return rc;
}

static int dir_get(struct lb_store *st, const char *key, char **data,
		   size_t *len, struct lb_error *err)
{
	struct dir_store *d = (struct dir_store *)st;
	char *path;
	int rc;

	if ((path = join(d, key, err)) == NULL)
		return -1;
	rc = lb_file_read(path, STORE_GET_MAX, data, len, err);
	free(path);
	return rc;
}

static int dir_del(struct lb_store *st, const char *key, struct lb_error *err)
{
	struct dir_store *d = (struct dir_store *)st;
	char *path;
	int rc = 0;

	if ((path = join(d, key, err)) == NULL)
		return -1;
	if (unlink(path) == 0)
		d->dirty = 1;
	else if (errno != ENOENT)
		rc = lb_error_errno(err, LB_ESTORE, "cannot delete '%s'", path);
	free(path);
	return rc;
}

struct keylist {
	char **v;
	size_t n, alloc;
};

static int keylist_add(struct keylist *k, const char *s, struct lb_error *err)
{
	if (k->n == k->alloc) {
		size_t na = k->alloc ? k->alloc * 2 : 256;
		char **v = realloc(k->v, na * sizeof(*v));
		if (v == NULL)
			return lb_error_set(err, LB_ENOMEM, "out of memory");
		k->v = v;
		k->alloc = na;
	}
	if ((k->v[k->n] = strdup(s)) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	k->n++;
	return 0;
}

/* Collects the files under root/rel whose key starts with prefix. */
static int walk(const char *root, const char *rel, const char *prefix,
		struct keylist *keys, struct lb_error *err)
{
	char *dirpath = NULL;
	DIR *dir = NULL;
	struct dirent *de;
	int rc = -1;

	dirpath = *rel ? lb_path_join(root, rel) : strdup(root);
	if (dirpath == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	if ((dir = opendir(dirpath)) == NULL) {
		if (errno == ENOENT || errno == ENOTDIR)
			rc = 0;
		else
			lb_error_errno(err, LB_ESTORE, "cannot list '%s'", dirpath);
		goto out;
	}
	while ((errno = 0, de = readdir(dir)) != NULL) {
		char *key;
		struct stat sb;
		char *full;
		int is_dir, r = 0;

		if (de->d_name[0] == '.')
			continue;	/* ".", "..", temporary files */
		key = *rel ? lb_path_join(rel, de->d_name) : strdup(de->d_name);
		if (key == NULL) {
			lb_error_set(err, LB_ENOMEM, "out of memory");
			goto out;
		}
		if (de->d_type == DT_DIR)
			is_dir = 1;
		else if (de->d_type == DT_REG)
			is_dir = 0;
		else if (de->d_type == DT_LNK)
			is_dir = -1;
		else {
			full = lb_path_join(root, key);
			is_dir = full && lstat(full, &sb) == 0 ?
				(S_ISLNK(sb.st_mode) ? -1 : S_ISDIR(sb.st_mode)) : 0;
			free(full);
		}
		if (is_dir < 0) {
			;	/* a link (a state marker): not an object */
		} else if (is_dir) {
			/* Descend only where the prefix can still match. */
			size_t kl = strlen(key), pl = strlen(prefix);
			if (strncmp(key, prefix, kl < pl ? kl : pl) == 0)
				r = walk(root, key, prefix, keys, err);
		} else if (strncmp(key, prefix, strlen(prefix)) == 0) {
			r = keylist_add(keys, key, err);
		}
		free(key);
		if (r < 0)
			goto out;
	}
	if (errno != 0) {
		lb_error_errno(err, LB_ESTORE, "cannot list '%s'", dirpath);
		goto out;
	}
	rc = 0;
out:
	if (dir != NULL)
		closedir(dir);
	free(dirpath);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int dir_list(struct lb_store *st, const char *prefix, store_list_fn fn,
		    void *arg, struct lb_error *err)
{
	struct dir_store *d = (struct dir_store *)st;
	struct keylist keys = { NULL, 0, 0 };
	char *start = NULL, *slash;
	size_t i;
	int rc = -1;

	/* Start at the deepest directory the prefix names. */
	if ((start = strdup(prefix)) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	slash = strrchr(start, '/');
	if (slash != NULL)
		*slash = '\0';
	else
		start[0] = '\0';
	if (walk(d->root, start, prefix, &keys, err) < 0)
		goto out;
	if (keys.n > 1)
		qsort(keys.v, keys.n, sizeof(*keys.v), cmp_str);
	for (i = 0; i < keys.n; i++) {
		if (fn(keys.v[i], arg) != 0) {
			lb_error_set(err, LB_EINTERNAL, "listing stopped at '%s'",
				     keys.v[i]);
			goto out;
		}
	}
	rc = 0;
out:
	for (i = 0; i < keys.n; i++)
		free(keys.v[i]);
	free(keys.v);
	free(start);
	return rc;
}

static int dir_flush(struct lb_store *st, struct lb_error *err)
{
	struct dir_store *d = (struct dir_store *)st;
	int fd, rc = 0;

	if (!d->dirty)
		return 0;
	d->dirty = 0;
	fd = open(d->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return lb_error_errno(err, LB_ESTORE, "cannot open '%s'", d->root);
	if (syncfs(fd) < 0) {
		rc = lb_error_errno(err, LB_ESTORE, "cannot sync '%s'", d->root);
		d->dirty = 1;
	}
	close(fd);
	return rc;
}

static int dir_link(struct lb_store *st, const char *key, const char *target,
		    struct lb_error *err)
{
	struct dir_store *d = (struct dir_store *)st;
	char *path = NULL, *tmp = NULL;
	int r, rc = -1;

	if ((path = join(d, key, err)) == NULL)
		return -1;
	if (target == NULL) {
		if (unlink(path) == 0) {
			d->dirty = 1;
			rc = 0;
		} else if (errno != ENOENT) {
			lb_error_errno(err, LB_ESTORE, "cannot delete '%s'", path);
		} else {
			rc = 0;
		}
		goto out;
	}
	d->dirty = 1;
	if ((tmp = tmp_path(path, err)) == NULL)
		goto out;
	unlink(tmp);	/* one that a killed run with this pid left */
	r = symlink(target, tmp);
	if (r < 0 && errno == ENOENT) {
		if (lb_mkdirs_parent(path, err) < 0)
			goto out;
		r = symlink(target, tmp);
	}
	if (r < 0) {
		lb_error_errno(err, LB_ESTORE, "cannot create '%s'", tmp);
		goto out;
	}
	if (rename(tmp, path) < 0) {
		lb_error_errno(err, LB_ESTORE, "cannot rename '%s'", tmp);
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	free(tmp);
	free(path);
	return rc;
}

static void dir_free(struct lb_store *st)
{
	struct dir_store *d = (struct dir_store *)st;

	free(d->root);
	free(d->base.describe);
	free(d);
}

static const struct store_ops dir_ops = {
	dir_put, dir_get, dir_del, dir_list, dir_flush, dir_free, dir_link,
};

int store_dir_open(const char *root, struct lb_store **out,
		   struct lb_error *err)
{
	struct dir_store *d = NULL;
	char abs[PATH_MAX];
	size_t n;

	*out = NULL;
	if (root == NULL || *root == '\0')
		return lb_error_set(err, LB_ECONFIG, "empty store directory");
	if (lb_mkdirs(root, err) < 0)
		return -1;
	if (realpath(root, abs) == NULL)
		return lb_error_errno(err, LB_ESTORE, "cannot resolve '%s'", root);
	if ((d = calloc(1, sizeof(*d))) == NULL)
		goto nomem;
	d->base.ops = &dir_ops;
	n = strlen(abs) + 5;
	if ((d->root = strdup(abs)) == NULL ||
	    (d->base.describe = malloc(n)) == NULL)
		goto nomem;
	snprintf(d->base.describe, n, "dir:%s", abs);
	*out = &d->base;
	return 0;
nomem:
	if (d != NULL)
		dir_free(&d->base);
	return lb_error_set(err, LB_ENOMEM, "out of memory");
}
