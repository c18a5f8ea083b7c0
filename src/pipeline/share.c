/*
 * share.c - which job of N takes a client (linkbot run --clients I/N).
 *
 * Design notes. N jobs of a scheduler (a Kubernetes Indexed Job, a CI
 * matrix) split a night by client; each job must find its clients from
 * nothing but its index, N and the configuration, and every client must
 * fall to exactly one job. The rule:
 *
 *   share(id, N) = jump(fnv1a64(id), N)
 *
 * - It depends only on the client id (never on its place in the
 *   configuration, nor on how many clients there are): adding, removing or
 *   reordering clients never moves another client to another job, so a
 *   job keeps the clients whose local state (corpus, last links) it has,
 *   and an operator can tell from the id alone which job runs a client.
 * - jump() is Lamping and Veach's jump consistent hash ("A Fast, Minimal
 *   Memory, Consistent Hash Algorithm", 2014): shares are even (each job
 *   gets 1/N of the clients in expectation) and when N grows to N+1 only
 *   the clients that move to the new job move (about 1/(N+1) of them);
 *   plain "hash mod N" would move almost all of them.
 * - Projects and HubSpot syncs go with their client: a project is built
 *   from its client's corpus (it has no pages of its own).
 *
 * The function is a contract between the jobs of one night (all must run
 * the same linkbot); tests/data/share/vectors.json pins it.
 * Cost: O(log N) per client.
 */
#include <stdint.h>

#include "linkbot/pipeline.h"

static uint64_t fnv1a64(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* Lamping and Veach's jump consistent hash: a bucket in [0, n). */
static unsigned jump(uint64_t key, unsigned n)
{
	int64_t b = -1, j = 0;

	while (j < (int64_t)n) {
		b = j;
		key = key * 2862933555777941757ULL + 1;
		j = (int64_t)((double)(b + 1) *
			      ((double)(1LL << 31) / (double)((key >> 33) + 1)));
	}
	return (unsigned)b;
}

unsigned pipeline_client_share(const char *client_id, unsigned n)
{
	return n <= 1 ? 0 : jump(fnv1a64(client_id), n);
}
