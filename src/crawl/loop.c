/*
 * loop.c - the night's crawl loops: a few threads crawl every client of a
 * night, each with one fetcher (one curl multi) for its share of them.
 *
 * Design notes.
 *
 * Why a few threads and not one a client: a crawl spends most of its
 * time waiting for its hosts' next start. A thread a client pays for
 * each request two sleeps and wake-ups of its own (~200,000 context
 * switches in a 1,000-site night) and 1,000 runnable threads make every
 * start late; one curl multi for every host is no better with libcurl
 * 7.88 (its user time grows with the hosts of a multi). Measured
 * (bench/RESULTS.md, "many sites in one night: where a crawled request's
 * CPU goes"): a few threads of a few hundred hosts each were the
 * cheapest, 43-56 us a request against 75-94 us. So the night runs
 * crawl_loops(): `n` threads, each driving one fetcher; a client's crawl
 * goes to the loop with the fewest crawls, and is driven there in steps
 * (crawl.c: crawl_prepare() on the client's thread when it is handed,
 * crawl_start(), crawl_advance() each time its requests are
 * all answered, crawl_end()).
 *
 * Politeness is the fetcher's, unchanged: hosts are per fetcher and the
 * night never crawls two clients of one host at once (pipeline.c's
 * clash), so each host's rate, robots.txt, Retry-After and backoff are
 * those of the one crawl that uses it; a host is freed, and its next
 * allowed start kept in the process's marks, when its crawl ends
 * (fetcher_forget()), so the next client of that host, on any loop, is
 * not early; the night's cap on transfers (conn_slots) is shared by the
 * loops' fetchers. Memory follows the crawls in flight.
 *
 * Two threads a loop: the timers apart from the extraction. A loop's
 * thread used to start its hosts' requests and extract their answers
 * (gumbo, the tokenizer, SQLite) in turn, so a request fell due while
 * the thread extracted a batch of answers, or ran a crawl's step (a
 * corpus scan, a commit: up to 200 ms), or waited for the CPU behind
 * the other loops; it left that late, and the strict interval never
 * catches a late start up: at 1,000 sites on 2 saturated cores the
 * median start was 100 ms late, 240 ms on average, a host's 101
 * intervals 50 s instead of 25 (bench/RESULTS.md, "the crawl span").
 * So each loop is a network thread, which only drives its fetcher
 * (fetcher_step(): start what is due, let curl send and read, hand the
 * finished answers over, sleep until the next start is due), and a
 * worker, this file's loop_run(), which runs everything else: the crawls'
 * steps and every answer's done() (fetcher_answer()), in the order the
 * answers came. The network thread uses about a fifth of the loop's CPU
 * (curl: 43-56 us of a request's ~250) and sleeps in between, so the scheduler runs it soon after it wakes (and
 * sooner with a short slice, sched_short_slice()); when the CPU cannot
 * keep up with the extraction, answers wait for the worker, not
 * requests for their turn: an answer counts in its crawl's transfers
 * until it is handled, so a crawl's cap (64) bounds what waits, and its
 * memory. The worker at a lower priority (nice + 5) was tried and not
 * kept: no better in the paired nights (bench/RESULTS.md).
 *
 * Per thread: the log's client is set around each step of a crawl and
 * around each answer (fetch.c, the owner's log_name); the quarantine's file
 * and line are set before each extraction (crawl.c), on the worker. A loop
 * never waits for a build slot: the night hands a crawl that ended back
 * to its own thread (ended()).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linkbot/crawl.h"
#include "linkbot/log.h"
#include "crawl_int.h"

struct loop_crawl {
	const struct lb_client *client;
	struct lb_corpus *corpus;
	const struct lb_crawl_opts *opts;
	struct lb_crawl_stats *stats;
	struct lb_error *err;
	crawl_ended_fn ended;
	void *arg;
	struct crawl *c;
	int prepared;			/* crawl_prepare()'s return */
	struct loop_crawl *next;
};

struct loop {
	struct crawl_loops *ls;
	pthread_t th, net;		/* the worker, the network thread */
	int started, net_started;
	atomic_int net_stop;		/* the network thread ends */
	struct fetcher *f;
	struct loop_crawl *inbox;	/* ls->mu */
	size_t load;			/* crawls given, not ended (ls->mu) */
};

struct crawl_loops {
	const struct lb_config *cfg;
	pthread_mutex_t mu;
	int stop;			/* mu */
	struct loop *loop;
	unsigned n;
	char ua[1200];			/* every fetcher's user agent */
};

/* A crawl is over: commit, forget, tell. */
static void loop_end(struct loop *l, struct loop_crawl *k, int rc)
{
	log_client(k->client->id);
	rc = crawl_end(k->c, rc);
	log_client(NULL);
	pthread_mutex_lock(&l->ls->mu);
	l->load--;
	pthread_mutex_unlock(&l->ls->mu);
	k->ended(k->arg, rc);
	free(k);
}

/* Runs k's steps while its requests are all answered; 1 once it ended. */
static int loop_drive(struct loop *l, struct loop_crawl *k)
{
	int p, rc = 0;

	log_client(k->client->id);
	while ((p = crawl_pending(k->c)) == 0 && rc == 0)
		rc = crawl_advance(k->c);
	log_client(NULL);
	if (p < 0 || rc != 0) {
		loop_end(l, k, p < 0 || rc < 0 ? -1 : 0);
		return 1;
	}
	return 0;
}

/*
 * The network thread asks for a short time slice (0.5 ms instead of the
 * kernel's ~1.4 ms default here), at the same nice: with Linux's EEVDF
 * scheduler (6.12 on, sched_attr.sched_runtime of a SCHED_OTHER thread)
 * a thread that wakes with a shorter slice may preempt the one running,
 * so a due request does not wait for the end of an extraction's slice.
 * Its share of the CPU is unchanged (it sleeps most of the time anyway);
 * elsewhere the call fails and nothing changes.
 */
static void sched_short_slice(void)
{
#ifdef SYS_sched_setattr
	struct {
		uint32_t size, policy;
		uint64_t flags;
		int32_t nice;
		uint32_t priority;
		uint64_t runtime, deadline, period;
		uint32_t util_min, util_max;
	} a;

	memset(&a, 0, sizeof(a));
	if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0) != 0 ||
	    a.policy != 0 /* SCHED_OTHER */)
		return;
	a.size = sizeof(a);
	a.flags = 0;
	a.runtime = 500000;	/* ns */
	(void)syscall(SYS_sched_setattr, 0, &a, 0);
#endif
}

static void *loop_run(void *arg)
{
	struct loop *l = arg;
	struct loop_crawl *active = NULL, *k, **pk;
	struct lb_error ferr;
	int stop;

	log_stage("crawl");
	lb_error_init(&ferr);
	for (;;) {
		struct loop_crawl *in;

		pthread_mutex_lock(&l->ls->mu);
		in = l->inbox;
		l->inbox = NULL;
		stop = l->ls->stop;
		pthread_mutex_unlock(&l->ls->mu);
		while ((k = in) != NULL) {	/* begin, in the order given */
			in = k->next;
			log_client(k->client->id);
			if (k->c == NULL ||
			    crawl_start(k->c, l->f, k->prepared) < 0) {
				loop_end(l, k, -1);
				continue;
			}
			log_client(NULL);
			if (loop_drive(l, k))
				continue;
			for (pk = &active; *pk != NULL; pk = &(*pk)->next)
				;
			k->next = NULL;
			*pk = k;
		}
		if (active == NULL && stop)
			break;
		if (fetcher_answer(l->f, 1000, &ferr) < 0) {
			/* the fetcher itself: every crawl of it fails */
			log_warnx("%s", ferr.msg);
			while ((k = active) != NULL) {
				active = k->next;
				lb_error_set(k->err, ferr.code, "%s", ferr.msg);
				loop_end(l, k, -1);
			}
			lb_error_init(&ferr);
			continue;
		}
		for (pk = &active; (k = *pk) != NULL;) {
			struct loop_crawl *nx = k->next;
			int p = crawl_pending(k->c), over = p < 0;

			if (p < 0)	/* an answer failed it */
				loop_end(l, k, -1);
			else if (p == 0)
				over = loop_drive(l, k);
			if (over)
				*pk = nx;	/* k is freed */
			else
				pk = &k->next;
		}
	}
	return NULL;
}

/*
 * The network thread of a loop: the fetcher's timers and transfers only,
 * so that a host's request leaves when it is due while the worker
 * extracts (a failed step is the worker's to report, fetcher_answer()).
 */
static void *loop_net(void *arg)
{
	struct loop *l = arg;
	struct lb_error err;
	int stop = 0;

	log_stage("crawl");
	lb_error_init(&err);
	sched_short_slice();
	while (!stop) {
		if (fetcher_step(l->f, NULL, NULL, 1000, &err) < 0) {
			lb_error_init(&err);
			usleep(10000);	/* not a busy loop on a broken multi */
		}
		stop = atomic_load(&l->net_stop);
	}
	return NULL;
}

int crawl_loops_new(const struct lb_config *cfg, unsigned n,
		    int no_rate_limit, sem_t *conn_slots,
		    struct crawl_loops **out, struct lb_error *err)
{
	struct crawl_loops *ls;
	struct fetcher_opts fo;
	unsigned i;

	*out = NULL;
	if (n < 1)
		n = 1;
	if ((ls = calloc(1, sizeof(*ls))) == NULL ||
	    (ls->loop = calloc(n, sizeof(*ls->loop))) == NULL) {
		free(ls);
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	}
	ls->cfg = cfg;
	ls->n = n;
	pthread_mutex_init(&ls->mu, NULL);
	crawl_fetcher_opts(cfg, no_rate_limit, &fo);
	snprintf(ls->ua, sizeof(ls->ua), "%s", fo.user_agent);
	fo.user_agent = ls->ua;
	fo.slots = conn_slots;
	fo.threaded = 1;
	for (i = 0; i < n; i++) {
		ls->loop[i].ls = ls;
		if (fetcher_new(&fo, &ls->loop[i].f, err) < 0)
			goto fail;
		if (pthread_create(&ls->loop[i].net, NULL, loop_net,
				   &ls->loop[i]) != 0) {
			lb_error_set(err, LB_ENOMEM, "cannot start a thread");
			goto fail;
		}
		ls->loop[i].net_started = 1;
		if (pthread_create(&ls->loop[i].th, NULL, loop_run,
				   &ls->loop[i]) != 0) {
			lb_error_set(err, LB_ENOMEM, "cannot start a thread");
			goto fail;
		}
		ls->loop[i].started = 1;
	}
	*out = ls;
	return 0;
fail:
	crawl_loops_free(ls);
	return -1;
}

int crawl_loops_add(struct crawl_loops *ls, const struct lb_client *client,
		    struct lb_corpus *corpus, const struct lb_crawl_opts *opts,
		    struct lb_crawl_stats *stats, crawl_ended_fn ended,
		    void *arg, struct lb_error *err)
{
	struct loop_crawl *k = calloc(1, sizeof(*k)), **pk;
	struct loop *l;
	unsigned i;

	if (k == NULL)
		return lb_error_set(err, LB_ENOMEM, "out of memory");
	k->client = client;
	k->corpus = corpus;
	k->opts = opts;
	k->stats = stats;
	k->err = err;
	k->ended = ended;
	k->arg = arg;
	/* the file work here, on the client's thread; its failure is the
	 * loop's to report, as crawl_begin()'s was */
	k->prepared = crawl_prepare(ls->cfg, client, corpus, opts, stats,
				    &k->c, err);
	pthread_mutex_lock(&ls->mu);
	l = &ls->loop[0];
	for (i = 1; i < ls->n; i++)
		if (ls->loop[i].load < l->load)
			l = &ls->loop[i];
	l->load++;
	for (pk = &l->inbox; *pk != NULL; pk = &(*pk)->next)
		;
	*pk = k;
	pthread_mutex_unlock(&ls->mu);
	fetcher_wakeup(l->f);
	return 0;
}

void crawl_loops_free(struct crawl_loops *ls)
{
	unsigned i;

	if (ls == NULL)
		return;
	pthread_mutex_lock(&ls->mu);
	ls->stop = 1;
	pthread_mutex_unlock(&ls->mu);
	for (i = 0; i < ls->n; i++) {
		struct loop *l = &ls->loop[i];
		if (l->started) {	/* its crawls end first */
			fetcher_wakeup(l->f);
			pthread_join(l->th, NULL);
		}
		if (l->net_started) {
			atomic_store(&l->net_stop, 1);
			fetcher_wakeup(l->f);
			pthread_join(l->net, NULL);
		}
		fetcher_free(l->f);
	}
	pthread_mutex_destroy(&ls->mu);
	free(ls->loop);
	free(ls);
}
