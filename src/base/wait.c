/* wait.c - the per-thread hook around blocking waits; see wait.h. */
#include <stddef.h>

#include "linkbot/wait.h"

static _Thread_local lb_wait_fn hook;
static _Thread_local void *hook_arg;
static _Thread_local int depth;

void lb_wait_hook(lb_wait_fn fn, void *arg)
{
	hook = fn;
	hook_arg = arg;
	depth = 0;
}

void lb_wait_begin(void)
{
	if (depth++ == 0 && hook != NULL)
		hook(hook_arg, 1);
}

void lb_wait_end(void)
{
	if (depth > 0 && --depth == 0 && hook != NULL)
		hook(hook_arg, 0);
}
