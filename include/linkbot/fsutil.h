/*
 * fsutil.h - files written whole or not at all, and bounded reads.
 *
 * lb_file_write_atomic() writes name.tmp, flushes it to disk, then renames it
 * over name (git lockfile.h), so a reader sees the old file or the new one,
 * never half of one, even if the process is killed. Both writers make the
 * missing directories of the path (mkdir -p), only when they are missing:
 * a night's thousand clients then do not mkdir() their state directory
 * at every state file.
 */
#ifndef LINKBOT_FSUTIL_H
#define LINKBOT_FSUTIL_H

#include <stddef.h>
#include <stdio.h>
#include "linkbot/error.h"

/* mkdir -p; mode 0755. */
int lb_mkdirs(const char *path, struct lb_error *err);

/* mkdir -p of the directory part of path. */
int lb_mkdirs_parent(const char *path, struct lb_error *err);

int lb_file_write_atomic(const char *path, const void *data, size_t len,
			 struct lb_error *err);

/*
 * The same for a file too big to build in memory: fn writes it to f (a
 * temporary file next to path), returning -1 on error; the file is synced
 * and renamed onto path only if fn and every write succeeded.
 */
typedef int (*lb_file_writer_fn)(FILE *f, void *arg, struct lb_error *err);
int lb_file_write_stream(const char *path, lb_file_writer_fn fn, void *arg,
			 struct lb_error *err);

/*
 * Reads a whole file, at most cap bytes (LB_ETOOBIG beyond). *out is
 * NUL-terminated and owned by the caller. A missing file is LB_ENOTFOUND.
 */
int lb_file_read(const char *path, size_t cap, char **out, size_t *len,
		 struct lb_error *err);

/*
 * Reads a text file line by line (any length: a million pages' lines need
 * not sit in memory), calling fn with each line, its '\n' removed, its
 * length and its number (from 1); fn returns 0 to go on, -1 to stop with
 * its error set. Returns 0; -1 on fn's error or a read error (naming
 * path); 1 when the file does not exist and missing_ok (else an error).
 * The reader of the state's TSV files: links.tsv, bonus.tsv, candidates.
 */
typedef int (*lb_line_fn)(char *line, size_t len, size_t lineno, void *arg,
			  struct lb_error *err);
int lb_file_read_lines(const char *path, int missing_ok, lb_line_fn fn,
		       void *arg, struct lb_error *err);

/* 1 if path exists, 0 otherwise. */
int lb_file_exists(const char *path);

/* Joins two path parts with one '/'; caller frees. NULL on no memory. */
char *lb_path_join(const char *a, const char *b);

#endif
