/* log.c - timestamped, stage-named log lines on stderr; see log.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linkbot/log.h"

static int verbosity = 1;
static const char *stage = "linkbot";

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

static void vlog(const char *fmt, va_list ap, const char *suffix)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(stderr, "%s %s: ", when, stage);
	vfprintf(stderr, fmt, ap);
	if (suffix != NULL)
		fprintf(stderr, ": %s", suffix);
	fputc('\n', stderr);
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
