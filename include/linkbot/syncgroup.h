/*
 * syncgroup.h - one syncfs() for every thread that asks at once (group
 * commit).
 *
 * Why: a night of 1,000 clients ends its crawls together, and every
 * client's publish then asks the directory store's file system to be
 * durable three times within the same seconds (store_dir.c). Each
 * syncfs() costs ~0.15-0.2 ms of CPU even when there is little to write
 * (walking the file system's inodes and block device), and each writes
 * back every other writer's data too. A syncfs() that *starts* after a
 * thread's writes covers them, whoever calls it, so the threads asking at
 * once can share one call.
 *
 * Protocol (lb_sync_group_run()): a caller needs the first call that
 * starts after it came. If none is running, it runs one itself; if one is
 * running (it may have started before the caller's writes), the caller
 * waits for it to end, then for the next one, which the first waiter to
 * wake starts on behalf of everyone who came meanwhile. Calls never
 * overlap, so with callers arriving all the time there are at most about
 * half as many calls as callers, and with 1,000 at once a handful.
 * A caller gets the failure of its call, or of a later one (reported
 * rather than lost: a later failure may be its data's write-back too).
 *
 *   static struct lb_sync_group g = LB_SYNC_GROUP_INIT;
 *   lb_sync_group_run(&g, fn, arg)   fn(arg) (0 / -1 with errno) covers us
 *   lb_fs_sync(path)                 the file system of path is durable
 *                                    (syncfs(), one group per file system)
 *
 * Thread-safe; a caller blocks until its call ended (wrap it in
 * lb_wait_begin()/lb_wait_end(): wait.h).
 */
#ifndef LINKBOT_SYNCGROUP_H
#define LINKBOT_SYNCGROUP_H

#include <pthread.h>
#include <stdint.h>

struct lb_sync_group {
	pthread_mutex_t mu;
	pthread_cond_t ended;
	uint64_t started, done;	/* calls started, calls ended */
	uint64_t failed;	/* number of the last call that failed, or 0 */
	int failed_errno;
	int running;
};

#define LB_SYNC_GROUP_INIT \
	{ PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0 }

/* Runs fn(arg) or waits for a call that covers this one; fn returns 0 or
 * -1 with errno set. Returns 0, or -1 with errno of the failed call. */
int lb_sync_group_run(struct lb_sync_group *g, int (*fn)(void *arg),
		      void *arg);

/* syncfs() of the file system holding path (a directory), shared with the
 * threads asking for the same file system at once: 0, or -1 with errno. */
int lb_fs_sync(const char *path);

#endif
