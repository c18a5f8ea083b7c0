/* fsutil.c - atomic writes and bounded reads; see fsutil.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linkbot/fsutil.h"
#include "linkbot/wait.h"

/*
 * The directory first: a night makes its directories once and then asks
 * for them again at every state file and new folder, so the usual case is
 * one mkdir() that finds it there (EEXIST), not one per component. Only
 * when a parent is missing (ENOENT) are the parents made, deepest first.
 */
int lb_mkdirs(const char *path, struct lb_error *err)
{
	char *p;
	size_t n;
	int rc;

	if (mkdir(path, 0755) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return lb_error_errno(err, LB_EIO, "cannot create '%s'", path);
	if ((p = strdup(path)) == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	/* the parent: strip trailing slashes, the last name, its slashes */
	n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		n--;
	while (n > 0 && p[n - 1] != '/')
		n--;
	while (n > 1 && p[n - 1] == '/')
		n--;
	if (n == 0 || (n == 1 && p[0] == '/')) {
		free(p);	/* no parent to make: the cwd or / is gone */
		errno = ENOENT;
		return lb_error_errno(err, LB_EIO, "cannot create '%s'", path);
	}
	p[n] = '\0';
	rc = lb_mkdirs(p, err);
	free(p);
	if (rc < 0)
		return -1;
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return lb_error_errno(err, LB_EIO, "cannot create '%s'", path);
	return 0;
}

int lb_mkdirs_parent(const char *path, struct lb_error *err)
{
	char *p = strdup(path);
	char *slash;
	int rc = 0;

	if (p == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	slash = strrchr(p, '/');
	if (slash != NULL && slash != p) {
		*slash = '\0';
		rc = lb_mkdirs(p, err);
	}
	free(p);
	return rc;
}

int lb_file_write_atomic(const char *path, const void *data, size_t len,
			 struct lb_error *err)
{
	char *tmp = NULL;
	size_t n = strlen(path) + 16;
	int fd = -1, rc = -1, r;
	const char *p = data;

	tmp = malloc(n);
	if (tmp == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	snprintf(tmp, n, "%s.%ld.tmp", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ENOENT) {
		/* the directory first made now: no mkdir() a write */
		if (lb_mkdirs_parent(path, err) < 0)
			goto out;
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	}
	if (fd < 0) {
		lb_error_errno(err, LB_EIO, "cannot create '%s'", tmp);
		goto out;
	}
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			lb_error_errno(err, LB_EIO, "cannot write '%s'", tmp);
			goto out;
		}
		p += w;
		len -= (size_t)w;
	}
	lb_wait_begin();
	r = fsync(fd);
	lb_wait_end();
	if (r < 0) {
		lb_error_errno(err, LB_EIO, "cannot sync '%s'", tmp);
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		lb_error_errno(err, LB_EIO, "cannot close '%s'", tmp);
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		lb_error_errno(err, LB_EIO, "cannot rename '%s'", tmp);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc;
}

int lb_file_read(const char *path, size_t cap, char **out, size_t *len,
		 struct lb_error *err)
{
	FILE *f = NULL;
	char *data = NULL;
	size_t n = 0, alloc = 0;
	int rc = -1;

	*out = NULL;
	f = fopen(path, "rb");
	if (f == NULL) {
		if (errno == ENOENT)
			return lb_error_errno(err, LB_ENOTFOUND,
					      "cannot open '%s'", path);
		return lb_error_errno(err, LB_EIO, "cannot open '%s'", path);
	}
	for (;;) {
		size_t r;
		if (n + 4096 + 1 > alloc) {
			size_t na = alloc ? alloc * 2 : 8192;
			char *p = realloc(data, na);
			if (p == NULL) {
				lb_error_set(err, LB_ENOMEM, "out of memory");
				goto out;
			}
			data = p;
			alloc = na;
		}
		r = fread(data + n, 1, alloc - n - 1, f);
		n += r;
		if (n > cap) {
			lb_error_set(err, LB_ETOOBIG,
				     "'%s' is larger than %zu bytes", path, cap);
			goto out;
		}
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		lb_error_errno(err, LB_EIO, "cannot read '%s'", path);
		goto out;
	}
	data[n] = '\0';
	*out = data;
	data = NULL;
	if (len != NULL)
		*len = n;
	rc = 0;
out:
	free(data);
	fclose(f);
	return rc;
}

int lb_file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

char *lb_path_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *p;

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (*b == '/') {
		b++;
		lb--;
	}
	p = malloc(la + lb + 2);
	if (p == NULL)
		return NULL;
	memcpy(p, a, la);
	p[la] = '/';
	memcpy(p + la + 1, b, lb + 1);
	return p;
}

int lb_file_write_stream(const char *path, lb_file_writer_fn fn, void *arg,
			 struct lb_error *err)
{
	size_t n = strlen(path) + 32;
	char *tmp = malloc(n);
	FILE *f = NULL;
	int rc = -1, r;

	if (tmp == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	snprintf(tmp, n, "%s.%ld.tmp", path, (long)getpid());
	if ((f = fopen(tmp, "we")) == NULL && errno == ENOENT) {
		if (lb_mkdirs_parent(path, err) < 0)
			goto out;
		f = fopen(tmp, "we");
	}
	if (f == NULL) {
		lb_error_errno(err, LB_EIO, "cannot create '%s'", tmp);
		goto out;
	}
	if (fn(f, arg, err) < 0)
		goto out;
	if (fflush(f) != 0 || ferror(f)) {
		lb_error_errno(err, LB_EIO, "cannot write '%s'", tmp);
		goto out;
	}
	lb_wait_begin();
	r = fsync(fileno(f));
	lb_wait_end();
	if (r < 0) {
		lb_error_errno(err, LB_EIO, "cannot sync '%s'", tmp);
		goto out;
	}
	if (fclose(f) != 0) {
		f = NULL;
		lb_error_errno(err, LB_EIO, "cannot close '%s'", tmp);
		goto out;
	}
	f = NULL;
	if (rename(tmp, path) < 0) {
		lb_error_errno(err, LB_EIO, "cannot rename '%s'", tmp);
		goto out;
	}
	rc = 0;
out:
	if (f != NULL)
		fclose(f);
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc;
}

int lb_file_read_lines(const char *path, int missing_ok, lb_line_fn fn,
		       void *arg, struct lb_error *err)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t got;
	int rc = -1;

	if (f == NULL) {
		if (errno == ENOENT && missing_ok)
			return 1;
		return lb_error_errno(err, LB_EIO, "%s", path);
	}
	while ((got = getline(&line, &cap, f)) >= 0) {
		if (got > 0 && line[got - 1] == '\n')
			line[--got] = '\0';
		if (fn(line, (size_t)got, ++lineno, arg, err) < 0)
			goto out;
	}
	if (ferror(f)) {
		lb_error_errno(err, LB_EIO, "%s", path);
		goto out;
	}
	rc = 0;
out:
	free(line);
	fclose(f);
	return rc;
}
