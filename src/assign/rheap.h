/*
 * rheap.h - assign/'s search queue: a radix heap (Ahuja, Mehlhorn, Orlin
 * and Tarjan, 1990) of (int64 key, uint32 node) items for Dijkstra-style
 * searches whose keys never fall below the last key popped (reduced costs
 * >= 0).
 *
 * A key sits in the bucket of the highest bit in which it differs from
 * the last key popped (bucket 0: equal to it). A pop takes bucket 0 and,
 * when it is empty, the lowest non-empty bucket, whose minimum becomes
 * the new last key and whose items move to lower buckets; so an item
 * moves at most 64 times, and a run of equal keys costs O(1) an item
 * where a binary heap sifts each through log n levels. Equal keys come
 * out first in, first out: the order depends on the pushes alone. A push
 * below the last key popped (a caller's reduced cost < 0) is still
 * served in order: the buckets are rebuilt around it (rheap.rebases
 * counts it; O(n), not expected). Before the first pop after a clear, any
 * key may come first.
 *
 * rheap_push() returns 0, or -1 when memory ran out; rheap_pop() needs
 * n > 0 and returns 0, or -1 when memory ran out. After a -1 the items
 * are lost (the caller gives up; rheap_clear() makes the heap usable
 * again). A zeroed struct rheap is an empty heap; rheap_free() releases
 * it.
 */
#ifndef LINKBOT_ASSIGN_RHEAP_H
#define LINKBOT_ASSIGN_RHEAP_H

#include <stddef.h>
#include <stdint.h>

struct rheap_item {
	int64_t key;
	uint32_t node;
};

struct rheap_bucket {
	struct rheap_item *a;
	size_t n, cap;
};

struct rheap {
	struct rheap_bucket b[65];
	uint64_t last;		/* the last key popped, order-preserving */
	size_t head;		/* bucket 0 is a queue: its next item */
	size_t n;		/* items held */
	int popped;		/* a pop since the last clear */
	size_t rebases;		/* pushes below the last key popped */
};

int rheap_push(struct rheap *h, int64_t key, uint32_t node);
int rheap_pop(struct rheap *h, struct rheap_item *out);
void rheap_clear(struct rheap *h);
void rheap_free(struct rheap *h);

#endif
