/*
 * test_rheap.c - assign/'s radix heap (src/assign/rheap.h) against a
 * plain reference: every pop must give the least key held, equal keys
 * first in, first out, across runs of equal keys, negative keys, keys
 * spread over all 64 bits, clears, and pushes below the last key popped
 * (rebuilt around, counted).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/assign/rheap.h"

static uint64_t rs = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* the reference: an unsorted array, popped by a scan for the least key
 * and, among equal keys, the earliest pushed */
struct ref {
	int64_t key[4096];
	uint32_t node[4096];
	uint64_t seq[4096];
	size_t n;
	uint64_t next;
};

static void ref_push(struct ref *r, int64_t key, uint32_t node)
{
	r->key[r->n] = key;
	r->node[r->n] = node;
	r->seq[r->n] = r->next++;
	r->n++;
}

static void ref_pop(struct ref *r, int64_t *key, uint32_t *node)
{
	size_t i, b = 0;

	for (i = 1; i < r->n; i++)
		if (r->key[i] < r->key[b] ||
		    (r->key[i] == r->key[b] && r->seq[i] < r->seq[b]))
			b = i;
	*key = r->key[b];
	*node = r->node[b];
	r->n--;
	r->key[b] = r->key[r->n];
	r->node[b] = r->node[r->n];
	r->seq[b] = r->seq[r->n];
}

/* a key for a push at or above `last` (or, rarely, below it when
 * `below` is set); scale picks how far keys spread */
static int64_t next_key(int64_t last, int scale, int below)
{
	uint64_t x = rnd();

	if (below && x % 50 == 0)
		return last - (int64_t)(rnd() % 1000) - 1;
	switch (scale) {
	case 0:
		return last + (int64_t)(x % 3);	/* plateaus of equal keys */
	case 1:
		return last + (int64_t)(x % (1u << 24));
	default:	/* bits 0 to 48 (20,000 steps stay below 2^63) */
		return last + (int64_t)(x >> (16 + x % 48));
	}
}

static void run(int scale, int below, int64_t start)
{
	static struct ref r;
	struct rheap h;
	int64_t last = start;
	size_t step, pops = 0;
	uint32_t id = 0;

	memset(&h, 0, sizeof(h));
	memset(&r, 0, sizeof(r));
	for (step = 0; step < 20000; step++) {
		uint64_t x = rnd() % 10;

		if (step % 5000 == 4999) {	/* a new search */
			rheap_clear(&h);
			r.n = 0;
			continue;
		}
		if (r.n > 0 && (x < 4 || r.n == 4096)) {
			struct rheap_item it;
			int64_t k;
			uint32_t v;

			assert_int_equal(h.n, r.n);
			assert_int_equal(rheap_pop(&h, &it), 0);
			ref_pop(&r, &k, &v);
			assert_true(it.key == k);
			assert_int_equal(it.node, v);
			last = k;
			pops++;
		} else {
			int64_t k = next_key(last, scale, below);

			assert_int_equal(rheap_push(&h, k, id), 0);
			ref_push(&r, k, id);
			id++;
		}
	}
	while (r.n > 0) {
		struct rheap_item it;
		int64_t k;
		uint32_t v;

		assert_int_equal(rheap_pop(&h, &it), 0);
		ref_pop(&r, &k, &v);
		assert_true(it.key == k);
		assert_int_equal(it.node, v);
		pops++;
	}
	assert_int_equal(h.n, 0);
	assert_true(pops > 1000);
	if (!below)
		assert_int_equal(h.rebases, 0);
	else
		assert_true(h.rebases > 0);
	rheap_free(&h);
}

static void test_order(void **state)
{
	int scale;

	(void)state;
	for (scale = 0; scale < 3; scale++) {
		run(scale, 0, 0);
		run(scale, 0, -((int64_t)1 << 40));	/* negative keys */
	}
}

static void test_fifo_ties(void **state)
{
	struct rheap h;
	struct rheap_item it;
	uint32_t i;

	(void)state;
	memset(&h, 0, sizeof(h));
	/* a run of equal keys comes out in push order, also when pushed
	 * while popping (a Dijkstra's plateau) and after a spill */
	assert_int_equal(rheap_push(&h, 7, 100), 0);
	for (i = 0; i < 10; i++)
		assert_int_equal(rheap_push(&h, 5, i), 0);
	for (i = 0; i < 10; i++) {
		assert_int_equal(rheap_pop(&h, &it), 0);
		assert_true(it.key == 5);
		assert_int_equal(it.node, i);
		if (i < 3)
			assert_int_equal(rheap_push(&h, 5, 10 + i), 0);
	}
	for (i = 10; i < 13; i++) {
		assert_int_equal(rheap_pop(&h, &it), 0);
		assert_int_equal(it.node, i);
	}
	assert_int_equal(rheap_pop(&h, &it), 0);
	assert_true(it.key == 7);
	assert_int_equal(it.node, 100);
	assert_int_equal(h.n, 0);
	rheap_free(&h);
}

/* a large search's bucket arrays go at the next clear; the heap works
 * on from there */
static void test_clear_releases(void **state)
{
	struct rheap h;
	struct rheap_item it;
	uint32_t i;
	size_t cap = 0;
	int b;

	(void)state;
	memset(&h, 0, sizeof(h));
	for (i = 0; i < 200000; i++)
		assert_int_equal(rheap_push(&h, (int64_t)(i % 1000) << 20, i), 0);
	for (i = 0; i < 10; i++)
		assert_int_equal(rheap_pop(&h, &it), 0);
	rheap_clear(&h);
	for (b = 0; b < 65; b++) {
		assert_true(h.b[b].cap <= 65536);
		cap += h.b[b].cap;
	}
	assert_true(cap < 200000);
	assert_int_equal(h.n, 0);
	assert_int_equal(rheap_push(&h, -5, 1), 0);
	assert_int_equal(rheap_push(&h, -9, 2), 0);
	assert_int_equal(rheap_pop(&h, &it), 0);
	assert_true(it.key == -9);
	assert_int_equal(rheap_pop(&h, &it), 0);
	assert_true(it.key == -5);
	assert_int_equal(h.rebases, 0);
	rheap_free(&h);
}

static void test_below_last(void **state)
{
	int scale;

	(void)state;
	for (scale = 0; scale < 3; scale++)
		run(scale, 1, 1000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_fifo_ties),
		cmocka_unit_test(test_below_last),
		cmocka_unit_test(test_clear_releases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
