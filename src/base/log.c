/* log.c - timestamped, stage-named log lines on stderr; see log.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linkbot/log.h"

static int verbosity = 1;
/* per thread: a concurrent night runs one client a thread (pipeline/sched.c) */
static _Thread_local const char *stage = "linkbot";
static _Thread_local const char *client;

void log_init(int v)
{
	verbosity = v;
}

int log_verbosity(void)
{
	return verbosity;
}

void log_stage(const char *s)
{
	stage = s != NULL ? s : "linkbot";
}

void log_client(const char *id)
{
	client = id;
}

/*
 * One line, one write: lines of concurrent clients never interleave
 * (a longer message is cut, marked with "...").
 */
static void vlog(const char *fmt, va_list ap, const char *suffix)
{
	char line[4096];
	const size_t max = sizeof(line) - 1;	/* room for the newline */
	time_t now = time(NULL);
	struct tm tm;
	size_t len;
	int n;

	gmtime_r(&now, &tm);
	len = strftime(line, max, "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = client != NULL ?
		    snprintf(line + len, max - len, " %s[%s]: ", stage, client) :
		    snprintf(line + len, max - len, " %s: ", stage);
	len = n < 0 || (size_t)n >= max - len ? max : len + (size_t)n;
	if (len < max) {
		n = vsnprintf(line + len, max - len, fmt, ap);
		len = n < 0 || (size_t)n >= max - len ? max : len + (size_t)n;
	}
	if (suffix != NULL && len < max) {
		n = snprintf(line + len, max - len, ": %s", suffix);
		len = n < 0 || (size_t)n >= max - len ? max : len + (size_t)n;
	}
	if (len == max)
		memcpy(line + max - 3, "...", 3);
	line[len++] = '\n';
	fwrite(line, 1, len, stderr);
}

#define LOG_BODY(min, suffix)                 \
	do {                                  \
		va_list ap;                   \
		if (verbosity < (min))        \
			return;               \
		va_start(ap, fmt);            \
		vlog(fmt, ap, (suffix));      \
		va_end(ap);                   \
	} while (0)

void log_warn(const char *fmt, ...)
{
	const char *e = strerror(errno);
	LOG_BODY(0, e);
}

void log_warnx(const char *fmt, ...)
{
	LOG_BODY(0, NULL);
}

void log_info(const char *fmt, ...)
{
	LOG_BODY(1, NULL);
}

void log_debug(const char *fmt, ...)
{
	LOG_BODY(2, NULL);
}

void fatal(const char *fmt, ...)
{
	const char *e = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap, e);
	va_end(ap);
	exit(4);	/* LB_EXIT_ENV, see cmd.h */
}

void fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap, NULL);
	va_end(ap);
	exit(4);	/* LB_EXIT_ENV, see cmd.h */
}
