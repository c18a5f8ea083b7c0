/*
 * sched.c - runs the clients of a night at once (see sched.h for the why
 * and the contract).
 *
 * The caller's thread only schedules: it starts the lowest pending item
 * that clashes with none running while fewer than `jobs` run, starts the
 * continuation of an item that another thread resumed (sched_resume())
 * once the item's first thread is joined, joins the threads that are
 * done (so that their stacks go as soon as they end: memory follows the
 * items in flight), and sleeps on a condition variable until an item
 * ends or is resumed. Each worker thread runs one part of an item and
 * says so under the lock. An item away (its first part returned
 * SCHED_LATER) has no thread, and still counts as running: in `jobs`
 * and for clash().
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/log.h"
#include "sched.h"

/* A client's crawl, extraction and build fit in this (gumbo is bounded by
 * extract/limit.c); 1,000 clients in flight must not reserve 8 GiB. */
#define SCHED_STACK ((size_t)4 << 20)

enum { PENDING, RUNNING, AWAY, RESUME, DONE, JOINED };

struct sched {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t n;
	sched_fn fn;
	sched_clash_fn clash;
	void *arg;
	unsigned char *state;	/* per item, under mu */
	unsigned char *thread;	/* per item: 1 a thread to join, 2 it ended */
	sched_fn *next;		/* per item resumed: its continuation */
	pthread_t *th;		/* per item started */
	size_t *running;	/* items running, n_running of them */
	size_t n_running;
	int failed;		/* an item failed: start no more */
	struct lb_error *err;	/* the first failure */
};

struct worker {
	struct sched *s;
	size_t i;
	sched_fn fn;
};

static _Thread_local struct sched *current;

struct sched *sched_current(void)
{
	return current;
}

void sched_resume(struct sched *s, size_t i, sched_fn fn)
{
	pthread_mutex_lock(&s->mu);
	s->next[i] = fn;
	s->state[i] = RESUME;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void *work(void *p)
{
	struct worker *w = p;
	struct sched *s = w->s;
	size_t i = w->i, k;
	struct lb_error err;
	int rc;

	current = s;
	lb_error_init(&err);
	rc = w->fn(s->arg, i, &err);
	free(w);
	log_client(NULL);
	pthread_mutex_lock(&s->mu);
	s->thread[i] = 2;
	if (rc == SCHED_LATER) {	/* resumed already, or to be */
		if (s->state[i] == RUNNING)
			s->state[i] = AWAY;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		return NULL;
	}
	if (rc < 0 && !s->failed) {
		s->failed = 1;
		lb_error_set(s->err, err.code, "%s", err.msg);
	}
	for (k = 0; k < s->n_running; k++)
		if (s->running[k] == i) {
			s->running[k] = s->running[--s->n_running];
			break;
		}
	s->state[i] = DONE;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* The lowest pending item that clashes with none running; n if none. */
static size_t pick(struct sched *s, size_t first)
{
	size_t i, k;

	for (i = first; i < s->n; i++) {
		if (s->state[i] != PENDING)
			continue;
		for (k = 0; s->clash != NULL && k < s->n_running; k++)
			if (s->clash(s->arg, i, s->running[k]))
				break;
		if (s->clash == NULL || k == s->n_running)
			return i;
	}
	return s->n;
}

static int spawn(struct sched *s, size_t i, sched_fn fn,
		 const pthread_attr_t *attr)
{
	struct worker *w = malloc(sizeof(*w));
	int rc;

	if (w == NULL)
		return ENOMEM;
	w->s = s;
	w->i = i;
	w->fn = fn;
	if ((rc = pthread_create(&s->th[i], attr, work, w)) != 0) {
		free(w);
		return rc;
	}
	s->thread[i] = 1;
	s->state[i] = RUNNING;
	return 0;
}

static int start(struct sched *s, size_t i, const pthread_attr_t *attr)
{
	int rc = spawn(s, i, s->fn, attr);

	if (rc == 0)
		s->running[s->n_running++] = i;
	return rc;
}

/* Joins the threads that ended; an item done is then over. */
static void join_done(struct sched *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (s->thread[i] == 2) {
			pthread_join(s->th[i], NULL);
			s->thread[i] = 0;
		}
		if (s->state[i] == DONE && s->thread[i] == 0)
			s->state[i] = JOINED;
	}
}

/*
 * Starts the continuations of the items resumed whose first thread is
 * joined. One that cannot get a thread ends the item as failed (its
 * continuation would have freed what the item holds: the night stops).
 */
static void start_resumed(struct sched *s, const pthread_attr_t *attr)
{
	size_t i, k;
	int e;

	for (i = 0; i < s->n; i++) {
		if (s->state[i] != RESUME || s->thread[i] != 0)
			continue;
		if ((e = spawn(s, i, s->next[i], attr)) == 0)
			continue;
		if (!s->failed) {
			s->failed = 1;
			lb_error_set(s->err, LB_ENOMEM, "cannot start a "
				     "thread: %s", strerror(e));
		}
		for (k = 0; k < s->n_running; k++)
			if (s->running[k] == i) {
				s->running[k] = s->running[--s->n_running];
				break;
			}
		s->state[i] = JOINED;
	}
}

int sched_run(size_t n, unsigned jobs, sched_fn fn, sched_clash_fn clash,
	      void *arg, struct lb_error *err)
{
	struct sched s;
	pthread_attr_t attr;
	size_t i, first = 0;
	int rc = -1;

	if (jobs <= 1 || n <= 1) {	/* the sequential night */
		for (i = 0; i < n; i++)
			if (fn(arg, i, err) < 0)
				return -1;
		return 0;
	}
	memset(&s, 0, sizeof(s));
	s.n = n;
	s.fn = fn;
	s.clash = clash;
	s.arg = arg;
	s.err = err;
	s.state = calloc(n, 1);
	s.thread = calloc(n, 1);
	s.next = calloc(n, sizeof(*s.next));
	s.th = calloc(n, sizeof(*s.th));
	s.running = calloc(n, sizeof(*s.running));
	if (s.state == NULL || s.thread == NULL || s.next == NULL ||
	    s.th == NULL || s.running == NULL) {
		lb_error_set(err, LB_ENOMEM, "out of memory");
		goto out;
	}
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, SCHED_STACK);
	pthread_mutex_lock(&s.mu);
	for (;;) {
		join_done(&s);
		start_resumed(&s, &attr);
		while (first < n && s.state[first] != PENDING)
			first++;
		if (!s.failed && s.n_running < jobs && first < n &&
		    (i = pick(&s, first)) < n) {
			int e = start(&s, i, &attr);

			if (e == 0)
				continue;
			if (s.n_running == 0) {	/* not even one thread */
				s.failed = 1;
				lb_error_set(err, LB_ENOMEM, "cannot start a "
					     "thread: %s", strerror(e));
				break;
			}
			/* the system's limit: fewer at once from now */
			log_warnx("cannot start a thread for more than %zu "
				  "clients at once: %s", s.n_running,
				  strerror(e));
			jobs = (unsigned)s.n_running;
			continue;
		}
		if (s.n_running == 0 && (s.failed || first >= n))
			break;
		pthread_cond_wait(&s.cv, &s.mu);
	}
	join_done(&s);
	pthread_mutex_unlock(&s.mu);
	pthread_attr_destroy(&attr);
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
	rc = s.failed ? -1 : 0;
out:
	free(s.state);
	free(s.thread);
	free(s.next);
	free(s.th);
	free(s.running);
	return rc;
}
