/*
 * feasible.c - the largest uniform in-degree the arcs allow (feasible.h).
 *
 * Network: S -> s (capacity L_s), s -> t (1 per arc), t -> T (d_t at the
 * current level). Arc a's reverse is a ^ 1; each node lists its arcs in
 * CSR. Dinic: a BFS from S labels levels, then a depth-first search with
 * current-arc pointers sends unit paths along level-increasing arcs
 * (dead ends are pruned for the phase); phases repeat until T is out of
 * reach. Level j + 1 only raises the t -> T capacities, so the flow of
 * level j is kept and only the new demand is searched for.
 */
#include <stdlib.h>
#include <string.h>

#include "feasible.h"

struct net {
	size_t n, na;
	size_t *aoff;		/* node -> its arcs in alist */
	uint32_t *alist, *to;
	int32_t *cap;
	int32_t *lev;
	size_t *cur;
	uint32_t *queue, *path;
};

static void net_free(struct net *g)
{
	free(g->aoff);
	free(g->alist);
	free(g->to);
	free(g->cap);
	free(g->lev);
	free(g->cur);
	free(g->queue);
	free(g->path);
}

static int bfs(struct net *g, uint32_t src, uint32_t snk)
{
	size_t h = 0, n = 0, i;

	for (i = 0; i < g->n; i++)
		g->lev[i] = -1;
	g->lev[src] = 0;
	g->queue[n++] = src;
	while (h < n) {
		uint32_t u = g->queue[h++];

		for (i = g->aoff[u]; i < g->aoff[u + 1]; i++) {
			uint32_t a = g->alist[i], v = g->to[a];

			if (g->cap[a] > 0 && g->lev[v] < 0) {
				g->lev[v] = g->lev[u] + 1;
				g->queue[n++] = v;
			}
		}
	}
	return g->lev[snk] >= 0;
}

/* One blocking flow of unit paths; returns the units sent. */
static size_t blocking(struct net *g, uint32_t src, uint32_t snk)
{
	size_t sent = 0, depth = 0, i;
	uint32_t u = src;

	for (i = 0; i < g->n; i++)
		g->cur[i] = g->aoff[i];
	for (;;) {
		if (u == snk) {
			for (i = 0; i < depth; i++) {
				g->cap[g->path[i]]--;
				g->cap[g->path[i] ^ 1]++;
			}
			sent++;
			depth = 0;
			u = src;
			continue;
		}
		for (; g->cur[u] < g->aoff[u + 1]; g->cur[u]++) {
			uint32_t a = g->alist[g->cur[u]];

			if (g->cap[a] > 0 && g->lev[g->to[a]] == g->lev[u] + 1)
				break;
		}
		if (g->cur[u] < g->aoff[u + 1]) {
			uint32_t a = g->alist[g->cur[u]];

			g->path[depth++] = a;
			u = g->to[a];
			continue;
		}
		/* dead end: prune u, step back */
		g->lev[u] = -1;
		if (depth == 0)
			return sent;
		u = g->to[g->path[--depth] ^ 1];
		g->cur[u]++;
	}
}

long feasible_level(size_t ns, size_t nt, const size_t *off,
		    const uint32_t *tg, const uint32_t *ls,
		    const uint32_t *reach, uint32_t kmax)
{
	struct net g;
	uint32_t src = (uint32_t)(ns + nt), snk = src + 1;
	size_t na = off[ns], s, t, i, a = 0, flow = 0, need = 0;
	size_t *fill = NULL;
	long rc = -1;
	uint32_t j;

	memset(&g, 0, sizeof(g));
	g.n = ns + nt + 2;
	g.na = 2 * (ns + na + nt);
	g.aoff = calloc(g.n + 1, sizeof(size_t));
	fill = calloc(g.n + 1, sizeof(size_t));
	g.alist = malloc((g.na + 1) * sizeof(uint32_t));
	g.to = malloc((g.na + 1) * sizeof(uint32_t));
	g.cap = malloc((g.na + 1) * sizeof(int32_t));
	g.lev = malloc(g.n * sizeof(int32_t));
	g.cur = malloc(g.n * sizeof(size_t));
	g.queue = malloc(g.n * sizeof(uint32_t));
	g.path = malloc(g.n * sizeof(uint32_t));
	if (!g.aoff || !fill || !g.alist || !g.to || !g.cap || !g.lev ||
	    !g.cur || !g.queue || !g.path)
		goto out;
	/* arcs in pairs: S -> s, s -> t, t -> T (capacity 0 for now) */
#define ARC(u, v, c) do { g.to[a] = (v); g.cap[a] = (c); g.aoff[(u) + 1]++; \
		g.to[a + 1] = (u); g.cap[a + 1] = 0; g.aoff[(v) + 1]++; a += 2; } while (0)
	for (s = 0; s < ns; s++)
		ARC(src, (uint32_t)s, (int32_t)ls[s]);
	for (s = 0; s < ns; s++)
		for (i = off[s]; i < off[s + 1]; i++)
			ARC((uint32_t)s, (uint32_t)(ns + tg[i]), ls[s] > 0);
	for (t = 0; t < nt; t++)
		ARC((uint32_t)(ns + t), snk, 0);
#undef ARC
	for (i = 0; i < g.n; i++)
		g.aoff[i + 1] += g.aoff[i];
	for (i = 0; i < g.na; i += 2) {
		uint32_t u = g.to[i + 1], v = g.to[i];

		g.alist[g.aoff[u] + fill[u]++] = (uint32_t)i;
		g.alist[g.aoff[v] + fill[v]++] = (uint32_t)(i + 1);
	}
	for (j = 1; j <= kmax; j++) {
		/* level j: targets that sources can reach j times want one more */
		for (t = 0; t < nt; t++)
			if (reach[t] >= j) {
				g.cap[2 * (ns + na + t)]++;
				need++;
			}
		while (flow < need && bfs(&g, src, snk))
			flow += blocking(&g, src, snk);
		if (flow < need)
			break;
	}
	rc = (long)j - 1;
out:
	free(fill);
	net_free(&g);
	return rc;
}
