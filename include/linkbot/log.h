/*
 * log.h - logging with OpenBSD's verbs (relayd log.h).
 *
 * Each line carries the UTC time and the current stage:
 *   2026-11-22T00:00:01Z crawl: cannot fetch 'http://x/': timeout
 * and, in a night that runs clients at once, the client:
 *   2026-11-22T00:00:01Z crawl[acme]: cannot fetch 'http://x/': timeout
 * A line is written with one call, so concurrent lines never mix.
 * log_warn() appends strerror(errno); log_warnx() does not.
 * fatal() and fatalx() log and exit(4) (LB_EXIT_ENV); only main.c and cmd/ may call them.
 * log_debug() prints only at verbosity >= 2, log_info() at >= 1.
 */
#ifndef LINKBOT_LOG_H
#define LINKBOT_LOG_H

#include <stdio.h>

/* 0: warnings only, 1: info (default), 2: debug. */
void log_init(int verbosity);
int log_verbosity(void);

/*
 * The stage named on each line; a static string, for example "crawl".
 * Both are per thread. log_client(id) names the client too, as
 * "crawl[acme]:", for the lines of a concurrent night (NULL: no client);
 * id must outlive its use.
 */
void log_stage(const char *stage);
void log_client(const char *id);

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

#endif
