/*
 * sched.h - the night's scheduler: runs the clients of `linkbot run` at
 * once, each on a thread of its own (pipeline.c gives it one function per
 * client: crawl, build, publish, hubspot).
 *
 * Why threads: a host is crawled at most pages_per_minute (SPEC 1.6), so
 * a night of many sites is as long as its slowest host only if every
 * host is crawled at the same time. A thread per client keeps the stages
 * and their failure policy exactly as in the sequential run (the same
 * code, the same answers) while the clients overlap. Memory grows with
 * the clients in flight (`jobs`), not with the clients of the night.
 *
 * Calling sequence:
 *   sched_run(n, jobs, fn, clash, arg, err)
 * runs fn(arg, i, err) for i = 0 .. n-1, at most `jobs` at once, started
 * in index order; an item that clash() says may not run beside one that
 * runs (they share a host) waits for it, and the next items go first.
 * jobs <= 1 runs them one after another on the caller's thread, as the
 * night always did. After an fn() fails (-1, an environment error) no
 * item starts; those running finish; sched_run() returns -1 with the
 * first error. Items never started are not run.
 */
#ifndef LINKBOT_SCHED_H
#define LINKBOT_SCHED_H

#include <stddef.h>
#include "linkbot/error.h"

typedef int (*sched_fn)(void *arg, size_t i, struct lb_error *err);

/*
 * An fn() may hand its item on instead of finishing it (a client's crawl
 * to a loop thread, pipeline.c): it returns SCHED_LATER and its thread
 * ends, the item still in flight (it counts in `jobs` and for clash()).
 * Later, any thread calls sched_resume(s, i, next) with the scheduler
 * that sched_current() gave on the item's thread: next(arg, i, err) then
 * runs on a thread of its own and ends the item (or hands it on again).
 * Only with jobs > 1.
 */
#define SCHED_LATER 1
struct sched;
struct sched *sched_current(void);
void sched_resume(struct sched *s, size_t i, sched_fn fn);
/* 1 if items i and j may not run at the same time; may be NULL. */
typedef int (*sched_clash_fn)(void *arg, size_t i, size_t j);

int sched_run(size_t n, unsigned jobs, sched_fn fn, sched_clash_fn clash,
	      void *arg, struct lb_error *err);

#endif
