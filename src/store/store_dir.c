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
 * syncfs of a busy file system waits for every other writer's data too);
 * the handles of a night's clients that flush at once share one syncfs
 * (syncgroup.h).
 * Headers are implied by the key (docs/store.md): pages/ are gzipped JSON.
 * A publish writes its objects into few directories (an endpoint's pages/
 * holds them all): the handle keeps the last directory open and creates
 * and renames by name in it (openat, renameat), not by walking the whole
 * path three times an object; the directory is let go at each flush.
 * Links (the endpoints' state markers, store_link()) are made the same way:
 * a hidden link beside the key, renamed over it. They are not objects:
 * listing skips them (and never descends through one into pages/).
 */
#define _GNU_SOURCE	/* O_PATH, O_TMPFILE, AT_EMPTY_PATH */
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
#include "linkbot/syncgroup.h"
#include "store_impl.h"

struct dir_store {
	struct lb_store base;
	char *root;
	int dirty;	/* a file made, replaced or removed since the flush */
	char *dir;	/* the directory of the last put or delete, or NULL */
	int dfd;	/* ... open (O_PATH), or -1 */
	long pid;	/* of the temporary names */
	int via;	/* enum put_via: how a new object is named */
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

/* The temporary name beside name: ".NAME.PID.tmp" (hidden from
 * listings; a killed run's is replaced by the next run with its pid). */
static void tmp_name(char *buf, size_t size, const char *name, long pid)
{
	snprintf(buf, size, ".%s.%ld.tmp", name, pid);
}

/* Lets the kept directory go. */
static void dir_drop(struct dir_store *d)
{
	if (d->dfd >= 0)
		close(d->dfd);
	d->dfd = -1;
	free(d->dir);
	d->dir = NULL;
}

/*
 * The directory of path, open, and the name in it (*name points into
 * path). With make, a missing directory is made. -1 with err set;
 * -2 when it is missing and not made (errno ENOENT).
 */
static int dir_of(struct dir_store *d, const char *path, int make,
		  const char **name, struct lb_error *err)
{
	const char *slash = strrchr(path, '/');
	size_t n = (size_t)(slash - path);
	char *dir;
	int fd;

	*name = slash + 1;
	if (d->dir != NULL && strlen(d->dir) == n &&
	    memcmp(d->dir, path, n) == 0)
		return d->dfd;
	dir_drop(d);
	if ((dir = strndup(path, n)) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && make) {
		if (lb_mkdirs(dir, err) < 0) {
			free(dir);
			return -1;
		}
		fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT && !make) {
			free(dir);
			return -2;
		}
		lb_error_errno(err, LB_ESTORE, "cannot open '%s'", dir);
		free(dir);
		return -1;
	}
	d->dir = dir;
	d->dfd = fd;
	return fd;
}

/*
 * How a new object gets its name (one each handle, learnt at its first
 * put): an unnamed file (O_TMPFILE) is written whole and then linked
 * under the key, by linkat(AT_EMPTY_PATH) (needs CAP_DAC_READ_SEARCH) or
 * through /proc/self/fd; or, where neither works, a hidden temporary name
 * renamed over the key. Both make the name appear only once the file is
 * whole; the link makes one directory entry where the rename makes two and
 * removes one (~29 -> ~22 us of CPU a file on ext4, bench/RESULTS.md). A
 * key that exists already (a replaced object) takes the temporary name
 * and the rename, since a link never replaces a name.
 */
enum put_via { VIA_EMPTY_PATH, VIA_PROC, VIA_RENAME };

/* Links the unnamed file fd as dfd/name: 0, or -1 with errno (EEXIST:
 * the name is taken); d->via moves on when a way is not available. */
static int link_tmpfile(struct dir_store *d, int fd, int dfd,
			const char *name)
{
	char proc[64];

	if (d->via == VIA_EMPTY_PATH) {
		if (linkat(fd, "", dfd, name, AT_EMPTY_PATH) == 0)
			return 0;
		if (errno != ENOENT && errno != EPERM)
			return -1;
		d->via = VIA_PROC;	/* not allowed: through /proc */
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, dfd, name, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno == ENOENT && access("/proc/self/fd", F_OK) < 0)
		d->via = VIA_RENAME;	/* no /proc */
	return -1;
}

/*
 * A put through an unnamed file: 0 done, -1 failed (err set), 1 when
 * this file system or process cannot (d->via is then VIA_RENAME, and the
 * caller takes the temporary name).
 */
static int put_linked(struct dir_store *d, int dfd, const char *name,
		      const void *data, size_t len, struct lb_error *err)
{
	int fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	int rc = -1;
	char tmp[NAME_MAX + 40];

	if (fd < 0) {
		if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)
			d->via = VIA_RENAME;	/* no O_TMPFILE here */
		return 1;	/* the other way says why if it fails too */
	}
	if (write_all(fd, data, len) < 0) {
		lb_error_errno(err, LB_ESTORE, "cannot write '%s/%s'", d->dir,
			       name);
		goto out;
	}
	if (link_tmpfile(d, fd, dfd, name) == 0) {
		rc = 0;
		goto out;
	}
	if (errno == EEXIST) {
		/* a replaced object: the temporary name, renamed over it
		 * (named only here: a new key, the common case, needs none) */
		tmp_name(tmp, sizeof(tmp), name, d->pid);
		unlinkat(dfd, tmp, 0);	/* a killed run's, with our pid */
		if (link_tmpfile(d, fd, dfd, tmp) == 0) {
			if (renameat(dfd, tmp, dfd, name) == 0) {
				rc = 0;
				goto out;
			}
			lb_error_errno(err, LB_ESTORE, "cannot rename '%s/%s'",
				       d->dir, tmp);
			unlinkat(dfd, tmp, 0);
			goto out;
		}
	}
	if (d->via == VIA_RENAME)
		rc = 1;
	else
		lb_error_errno(err, LB_ESTORE, "cannot link '%s/%s'", d->dir,
			       name);
out:
	if (close(fd) < 0 && rc == 0)
		rc = lb_error_errno(err, LB_ESTORE, "cannot close '%s/%s'",
				    d->dir, name);
	return rc;
}

/* A put through a hidden temporary name, renamed over the key. */
static int put_renamed(struct dir_store *d, int dfd, const char *name,
		       const void *data, size_t len, struct lb_error *err)
{
	int fd, rc = -1;
	char tmp[NAME_MAX + 40];

	tmp_name(tmp, sizeof(tmp), name, d->pid);

	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return lb_error_errno(err, LB_ESTORE, "cannot create '%s/%s'",
				      d->dir, tmp);
	if (write_all(fd, data, len) < 0) {
		lb_error_errno(err, LB_ESTORE, "cannot write '%s/%s'", d->dir,
			       tmp);
		close(fd);
		goto out;
	}
	if (close(fd) < 0) {
		lb_error_errno(err, LB_ESTORE, "cannot close '%s/%s'", d->dir,
			       tmp);
		goto out;
	}
	if (renameat(dfd, tmp, dfd, name) < 0) {
		lb_error_errno(err, LB_ESTORE, "cannot rename '%s/%s'", d->dir,
			       tmp);
		goto out;
	}
	rc = 0;
out:
	if (rc < 0)
		unlinkat(dfd, tmp, 0);
	return rc;
}

static int dir_put(struct lb_store *st, const char *key, const void *data,
		   size_t len, const struct lb_object_meta *meta,
		   struct lb_error *err)
{
	struct dir_store *d = (struct dir_store *)st;
	char *path = NULL;
	const char *name;
	int dfd, rc = -1;

	(void)meta;
	if ((path = join(d, key, err)) == NULL)
		return -1;
	if ((dfd = dir_of(d, path, 1, &name, err)) < 0)
		goto out;
	d->dirty = 1;
	rc = 1;
	if (d->via != VIA_RENAME)
		rc = put_linked(d, dfd, name, data, len, err);
	if (rc == 1)
		rc = put_renamed(d, dfd, name, data, len, err);
out:
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
	const char *name;
	char *path;
	int dfd, rc = 0;

	if ((path = join(d, key, err)) == NULL)
		return -1;
	dfd = dir_of(d, path, 0, &name, err);
	if (dfd == -1)
		rc = -1;
	else if (dfd >= 0 && unlinkat(dfd, name, 0) == 0)
		d->dirty = 1;
	else if (dfd >= 0 && errno != ENOENT)
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

	dir_drop(d);	/* a directory is not kept past a commit's phase */
	if (!d->dirty)
		return 0;
	d->dirty = 0;
	/* one syncfs() for the clients of a night that flush at once */
	if (lb_fs_sync(d->root) < 0) {
		d->dirty = 1;
		return lb_error_errno(err, LB_ESTORE, "cannot sync '%s'",
				      d->root);
	}
	return 0;
}

static int dir_link(struct lb_store *st, const char *key, const char *target,
		    struct lb_error *err)
{
	struct dir_store *d = (struct dir_store *)st;
	char *path = NULL, tmp[NAME_MAX + 40];
	const char *name;
	int dfd, rc = -1;

	if ((path = join(d, key, err)) == NULL)
		return -1;
	if (target == NULL) {
		dfd = dir_of(d, path, 0, &name, err);
		if (dfd == -2)
			rc = 0;	/* no directory, no link */
		else if (dfd >= 0 && unlinkat(dfd, name, 0) == 0)
			d->dirty = 1, rc = 0;
		else if (dfd >= 0 && errno == ENOENT)
			rc = 0;
		else if (dfd >= 0)
			lb_error_errno(err, LB_ESTORE, "cannot delete '%s'",
				       path);
		goto out;
	}
	if ((dfd = dir_of(d, path, 1, &name, err)) < 0)
		goto out;
	d->dirty = 1;
	tmp_name(tmp, sizeof(tmp), name, d->pid);
	unlinkat(dfd, tmp, 0);	/* one that a killed run with this pid left */
	if (symlinkat(target, dfd, tmp) < 0) {
		lb_error_errno(err, LB_ESTORE, "cannot create '%s/%s'", d->dir,
			       tmp);
		goto out;
	}
	if (renameat(dfd, tmp, dfd, name) < 0) {
		lb_error_errno(err, LB_ESTORE, "cannot rename '%s/%s'", d->dir,
			       tmp);
		unlinkat(dfd, tmp, 0);
		goto out;
	}
	rc = 0;
out:
	free(path);
	return rc;
}

static void dir_free(struct lb_store *st)
{
	struct dir_store *d = (struct dir_store *)st;

	dir_drop(d);
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
	d->dfd = -1;
	d->pid = (long)getpid();
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
