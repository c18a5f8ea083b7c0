/*
 * rheap.c - the radix heap of assign/'s searches (rheap.h).
 *
 * Why it is there: the night's router (night_route() in assign.c) runs
 * Dijkstras that settle nearly every node, half of them at distance
 * exactly 0 from the hubs (docs/assign.md, "Where the half-rounds go").
 * The binary heap it replaced spent a third of the router's instructions
 * sifting those (bench/RESULTS.md, "assign8").
 */
#include <stdlib.h>
#include <string.h>

#include "rheap.h"

static inline uint64_t ukey(int64_t k)
{
	return (uint64_t)k ^ ((uint64_t)1 << 63);	/* order-preserving */
}

static inline int bucket_of(uint64_t u, uint64_t last)
{
	return u == last ? 0 : 64 - __builtin_clzll(u ^ last);
}

static int append(struct rheap_bucket *b, int64_t key, uint32_t node)
{
	if (b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 256;
		struct rheap_item *na = realloc(b->a, nc * sizeof(*na));

		if (na == NULL)
			return -1;
		b->a = na;
		b->cap = nc;
	}
	b->a[b->n].key = key;
	b->a[b->n].node = node;
	b->n++;
	return 0;
}

/* Move bucket i's items to their buckets under h->last: below i when
 * h->last is their minimum, anywhere after a rebase. */
static int spill(struct rheap *h, int i)
{
	struct rheap_bucket old = h->b[i];
	size_t j;
	int rc = 0;

	memset(&h->b[i], 0, sizeof(h->b[i]));
	for (j = 0; j < old.n && rc == 0; j++)
		rc = append(&h->b[bucket_of(ukey(old.a[j].key), h->last)],
			    old.a[j].key, old.a[j].node);
	if (h->b[i].a == NULL) {	/* keep the array for later */
		h->b[i] = old;
		h->b[i].n = 0;
	} else {
		free(old.a);
	}
	return rc;
}

int rheap_push(struct rheap *h, int64_t key, uint32_t node)
{
	uint64_t u = ukey(key);
	int i;

	if (h->n == 0) {
		h->b[0].n = h->head = 0;
		if (!h->popped)
			h->last = u;
	}
	if (u < h->last) {
		/* before the first pop: a lower start; after it: a key below
		 * the last one popped, which a search should not push */
		h->rebases += h->popped;
		h->last = u;
		h->b[0].n -= h->head;
		memmove(h->b[0].a, h->b[0].a + h->head,
			h->b[0].n * sizeof(*h->b[0].a));
		h->head = 0;
		for (i = 0; i < 65; i++)
			if (h->b[i].n > 0 && spill(h, i) < 0)
				return -1;
	}
	if (append(&h->b[bucket_of(u, h->last)], key, node) < 0)
		return -1;
	h->n++;
	return 0;
}

int rheap_pop(struct rheap *h, struct rheap_item *out)
{
	if (h->head == h->b[0].n) {
		int i = 1;
		size_t j;
		uint64_t m;

		while (h->b[i].n == 0)
			i++;
		m = ukey(h->b[i].a[0].key);
		for (j = 1; j < h->b[i].n; j++)
			if (ukey(h->b[i].a[j].key) < m)
				m = ukey(h->b[i].a[j].key);
		h->last = m;
		h->b[0].n = h->head = 0;
		if (spill(h, i) < 0)
			return -1;
	}
	h->n--;
	h->popped = 1;
	*out = h->b[0].a[h->head++];
	return 0;
}

/* Bucket arrays kept across clears, in items: a half-round at N =
 * 1,000,000 fills millions, a night's single paths a few hundred, and
 * 65 buckets that each keep their largest size cost 140 MiB there. */
#define RH_KEEP 65536

void rheap_clear(struct rheap *h)
{
	int i;

	for (i = 0; i < 65; i++) {
		h->b[i].n = 0;
		if (h->b[i].cap > RH_KEEP) {
			free(h->b[i].a);
			h->b[i].a = NULL;
			h->b[i].cap = 0;
		}
	}
	h->n = h->head = 0;
	h->popped = 0;
}

void rheap_free(struct rheap *h)
{
	int i;

	for (i = 0; i < 65; i++)
		free(h->b[i].a);
	memset(h, 0, sizeof(*h));
}
