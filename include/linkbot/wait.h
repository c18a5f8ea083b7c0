/*
 * wait.h - a thread about to wait for the disk or the network says so.
 *
 * Why: a night runs many clients at once and lets only a few build and
 * publish at a time (pipeline.c: a CPU slot each). A publish spends much
 * of its time waiting (syncfs of the directory store, fsync of a state
 * file, the S3 queue); holding the slot meanwhile leaves the CPU idle
 * while the clients behind it wait for a slot. With a hook, the slot goes
 * to another client for the length of the wait and is taken back after.
 *
 *   lb_wait_hook(fn, arg)      this thread: fn(arg, 1) before a wait,
 *                              fn(arg, 0) after it; NULL: none (default)
 *   lb_wait_begin(); fsync(fd) / syncfs / store_flush ...; lb_wait_end();
 *
 * Pairs nest: only the outermost calls the hook. The hook is per thread
 * and must not call lb_wait_begin() itself.
 */
#ifndef LINKBOT_WAIT_H
#define LINKBOT_WAIT_H

typedef void (*lb_wait_fn)(void *arg, int waiting);

void lb_wait_hook(lb_wait_fn fn, void *arg);
void lb_wait_begin(void);
void lb_wait_end(void);

#endif
