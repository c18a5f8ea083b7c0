/* error.c - the error out-parameter; see error.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "linkbot/error.h"

static const char *const code_names[] = {
#define LB_ERR_NAME(name, str) #name,
	LB_ERRNO_MAP(LB_ERR_NAME)
#undef LB_ERR_NAME
};

static const char *const code_strs[] = {
#define LB_ERR_STR(name, str) str,
	LB_ERRNO_MAP(LB_ERR_STR)
#undef LB_ERR_STR
};

void lb_error_init(struct lb_error *err)
{
	err->code = LB_EOK;
	err->msg[0] = '\0';
}

static int error_vset(struct lb_error *err, enum lb_errcode code,
		      const char *suffix, const char *fmt, va_list ap)
{
	size_t n;

	if (err == NULL || err->code != LB_EOK)
		return -1;
	err->code = code;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	if (suffix != NULL) {
		n = strlen(err->msg);
		snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", suffix);
	}
	return -1;
}

int lb_error_set(struct lb_error *err, enum lb_errcode code, const char *fmt,
		 ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(err, code, NULL, fmt, ap);
	va_end(ap);
	return -1;
}

int lb_error_errno(struct lb_error *err, enum lb_errcode code,
		   const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	error_vset(err, code, strerror(saved), fmt, ap);
	va_end(ap);
	errno = saved;
	return -1;
}

const char *lb_errcode_name(enum lb_errcode code)
{
	return (unsigned)code < LB_E__COUNT ? code_names[code] : "UNKNOWN";
}

const char *lb_errcode_str(enum lb_errcode code)
{
	return (unsigned)code < LB_E__COUNT ? code_strs[code] : "unknown error";
}
