/*
 * error.h - error codes and the error out-parameter.
 *
 * Functions that can fail return int (0 ok, -1 failure) and fill a
 * struct lb_error that the caller owns. The first error wins: once set,
 * later calls to lb_error_set() on the same struct do nothing, so the
 * innermost, most precise message reaches the user (like curl's error
 * buffer or SQLite's pzErrMsg).
 *
 * The codes come from one X-macro list that also generates their names.
 */
#ifndef LINKBOT_ERROR_H
#define LINKBOT_ERROR_H

#include <stddef.h>

#define LB_ERRNO_MAP(X)                                              \
	X(OK, "no error")                                            \
	X(NOMEM, "out of memory")                                    \
	X(IO, "input/output error")                                  \
	X(CONFIG, "invalid configuration")                           \
	X(USAGE, "invalid usage")                                    \
	X(INVALID, "invalid input")                                  \
	X(TOOBIG, "input exceeds a limit")                           \
	X(NETWORK, "network error")                                  \
	X(HTTP, "unexpected HTTP status")                            \
	X(PARSE, "cannot parse")                                     \
	X(STATE, "state store error")                                \
	X(STORE, "store error")                                      \
	X(NOTFOUND, "not found")                                     \
	X(INFEASIBLE, "constraint cannot hold")                      \
	X(SHRINK, "refused to shrink")                               \
	X(NODATA, "no data")                                         \
	X(INTERNAL, "internal error")

enum lb_errcode {
#define LB_ERR_ENUM(name, str) LB_E##name,
	LB_ERRNO_MAP(LB_ERR_ENUM)
#undef LB_ERR_ENUM
	LB_E__COUNT
};

struct lb_error {
	enum lb_errcode code;
	char msg[512];
};

/* Empty error: code LB_EOK, message "". */
void lb_error_init(struct lb_error *err);

/*
 * Record an error unless one is already recorded (first error wins).
 * Always returns -1 so that callers can write `return lb_error_set(...)`.
 * err may be NULL.
 */
int lb_error_set(struct lb_error *err, enum lb_errcode code,
		 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Like lb_error_set(), appending ": strerror(errno)". */
int lb_error_errno(struct lb_error *err, enum lb_errcode code,
		   const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The name of a code, for example "NOMEM". */
const char *lb_errcode_name(enum lb_errcode code);

/* The description of a code, for example "out of memory". */
const char *lb_errcode_str(enum lb_errcode code);

#endif
