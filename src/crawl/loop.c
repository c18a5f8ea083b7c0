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
 * (crawl.c: crawl_begin(), crawl_advance() each time its requests are
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
 * Per thread: the log's client is set around each step of a crawl and
 * around each answer (fetch.c, the owner's log_name); the quarantine's file
 * and line are set before each extraction (crawl.c). A loop never waits
 * for a build slot: the night hands a crawl that ended back to its own
 * thread (ended()).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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
	struct loop_crawl *next;
};

struct loop {
	struct crawl_loops *ls;
	pthread_t th;
	int started;
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
			if (crawl_begin(l->ls->cfg, k->client, k->corpus,
					k->opts, k->stats, l->f, &k->c,
					k->err) < 0) {
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
		if (fetcher_step(l->f, NULL, NULL, 1000, &ferr) < 0) {
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
	for (i = 0; i < n; i++) {
		ls->loop[i].ls = ls;
		if (fetcher_new(&fo, &ls->loop[i].f, err) < 0)
			goto fail;
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
		if (ls->loop[i].started) {
			fetcher_wakeup(ls->loop[i].f);
			pthread_join(ls->loop[i].th, NULL);
		}
		fetcher_free(ls->loop[i].f);
	}
	pthread_mutex_destroy(&ls->mu);
	free(ls->loop);
	free(ls);
}
