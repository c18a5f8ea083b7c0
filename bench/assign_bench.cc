// assign_bench - one synthetic instance, solved by linkbot's assign_links()
// ("ours") or by LEMON's CostScaling min-cost flow ("lemon") on the same
// network, in a process of its own so that peak memory is per solver.
//
//   assign_bench ours|lemon N M L k [seed]
//   assign_bench lemon-file N M L k CANDIDATES   (bench/assign_real.c's
//                                   cache of a real site's lists)
//
// Prints one line: solver, N, M, L, k, seconds, peak RSS of the solve
// (VmHWM minus the RSS before solving, MiB), objective (model units: score
// sum with random links at LB_ASSIGN_RANDOM_WEIGHT), min in-degree.
//
// Instance: N pages, sources = targets, self excluded. Each page has a
// popularity drawn from a heavy tail (a few hubs that many pages find
// similar, many pages that nobody's top-L reaches, like a real site) and
// picks M distinct candidates by popularity, scores decreasing in
// [0.15, 0.95] with a popularity boost. Random completion on, one
// language. LEMON gets the network assign.c solves in hub mode:
//   s -(cap 1, cost -w)-> t, s -(cap L, cost -R)-> hub -> t,
//   t -(lower min(k, N-1), upper inf)-> Y, supply L at s, -N*L at Y,
// with the same integer costs (w * 2^24 rounded).
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <lemon/cost_scaling.h>
#include <lemon/smart_graph.h>

extern "C" {
#include "linkbot/assign.h"
#include "linkbot/log.h"
}

static long rss_kib(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0)
			v = atol(line + strlen(key) + 1);
	fclose(f);
	return v;
}

/* Reset the high-water mark so that VmHWM measures the solve only. */
static void reset_hwm(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");

	if (f != NULL) {
		fputs("5", f);
		fclose(f);
	}
}

static void make_instance(struct lb_candidates *c, size_t n, size_t m,
			  uint64_t seed, std::vector<double> *pop_out = nullptr)
{
	std::mt19937_64 rng(seed);
	std::vector<double> pop(n), cdf(n);
	std::uniform_real_distribution<double> u(0.0, 1.0);
	double sum = 0;

	lb_candidates_init(c, n, m);
	for (size_t t = 0; t < n; t++) {
		/* Pareto-like tail: a few hubs, many pages nobody picks */
		pop[t] = std::pow(u(rng) + 1e-9, -0.9);
		sum += pop[t];
		cdf[t] = sum;
	}
	std::vector<std::pair<float, uint32_t>> row;
	for (size_t s = 0; s < n; s++) {
		row.clear();
		while (row.size() < m) {
			double x = u(rng) * sum;
			uint32_t t = (uint32_t)(std::lower_bound(cdf.begin(),
						cdf.end(), x) - cdf.begin());
			bool dup = t == s || t >= n;

			for (auto &e : row)
				dup = dup || e.second == t;
			if (dup)
				continue;
			float w = (float)(0.15 + 0.6 * u(rng) +
					  0.2 * std::min(1.0, std::log1p(pop[t]) / 4));
			row.push_back({ std::min(w, 0.95f), t });
		}
		std::sort(row.begin(), row.end(),
			  [](const std::pair<float, uint32_t> &a,
			     const std::pair<float, uint32_t> &b) {
				  return a.first > b.first;
			  });
		for (size_t j = 0; j < m; j++) {
			c->target[s * m + j] = row[j].second;
			c->score[s * m + j] = row[j].first;
		}
	}
	if (pop_out != nullptr)
		*pop_out = pop;
}

/*
 * A night: 1 % of the pages change. A third of them are deleted (rows
 * gone, and gone from the other rows' lists, which end earlier), a third
 * are new (rows drawn like the others, appended), a third have their
 * candidate list drawn again (over today's pages, new ones included).
 * map[old] = today's index or LB_NO_TARGET. Deterministic in seed.
 */
static void make_night(const struct lb_candidates *c0,
		       const std::vector<double> &pop0, size_t n, size_t m,
		       uint64_t seed, struct lb_candidates *c,
		       std::vector<uint32_t> *map, size_t *n_out)
{
	std::mt19937_64 rng(seed * 7919 + 17);
	std::uniform_real_distribution<double> u(0.0, 1.0);
	size_t d = std::max<size_t>(3, n / 100), nd = d / 3, nn = d / 3,
	       ne = d - nd - nn, i, j, s;
	std::vector<char> del(n, 0), edit;
	std::vector<double> pop, cdf;
	size_t n1, k = 0;
	double sum = 0;

	for (i = 0; i < nd;) {
		size_t x = rng() % n;
		if (!del[x]) {
			del[x] = 1;
			i++;
		}
	}
	map->assign(n, LB_NO_TARGET);
	for (s = 0; s < n; s++)
		if (!del[s])
			(*map)[s] = (uint32_t)k++;
	n1 = k + nn;
	pop.assign(n1, 0);
	for (s = 0; s < n; s++)
		if (!del[s])
			pop[(*map)[s]] = pop0[s];
	for (s = k; s < n1; s++)
		pop[s] = std::pow(u(rng) + 1e-9, -0.9);
	cdf.assign(n1, 0);
	for (s = 0; s < n1; s++) {
		sum += pop[s];
		cdf[s] = sum;
	}
	edit.assign(n1, 0);
	for (s = k; s < n1; s++)
		edit[s] = 1;
	for (i = 0; i < ne;) {
		size_t x = rng() % k;
		if (!edit[x]) {
			edit[x] = 1;
			i++;
		}
	}
	lb_candidates_init(c, n1, m);
	for (s = 0; s < n; s++) {
		uint32_t ns_ = (*map)[s];
		size_t got = 0;

		if (ns_ == LB_NO_TARGET || edit[ns_])
			continue;
		for (j = 0; j < m; j++) {
			uint32_t t = c0->target[s * m + j];
			if (t == LB_NO_TARGET || (*map)[t] == LB_NO_TARGET)
				continue;
			c->target[ns_ * m + got] = (*map)[t];
			c->score[ns_ * m + got++] = c0->score[s * m + j];
		}
	}
	std::vector<std::pair<float, uint32_t>> row;
	for (s = 0; s < n1; s++) {
		if (!edit[s])
			continue;
		row.clear();
		while (row.size() < m) {
			double x = u(rng) * sum;
			uint32_t t = (uint32_t)(std::lower_bound(cdf.begin(),
						cdf.end(), x) - cdf.begin());
			bool dup = t == s || t >= n1;

			for (auto &e : row)
				dup = dup || e.second == t;
			if (dup)
				continue;
			float w = (float)(0.15 + 0.6 * u(rng) +
					  0.2 * std::min(1.0, std::log1p(pop[t]) / 4));
			row.push_back({ std::min(w, 0.95f), t });
		}
		std::sort(row.begin(), row.end(),
			  [](const std::pair<float, uint32_t> &a,
			     const std::pair<float, uint32_t> &b) {
				  return a.first > b.first;
			  });
		for (j = 0; j < m; j++) {
			c->target[s * m + j] = row[j].second;
			c->score[s * m + j] = row[j].first;
		}
	}
	*n_out = n1;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void)
{
	return std::chrono::duration<double>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

/* ASSIGN_BENCH_THREADS: the solver's threads (default 1) */
static size_t bench_threads(void)
{
	const char *e = getenv("ASSIGN_BENCH_THREADS");

	return e != nullptr && *e ? strtoul(e, nullptr, 10) : 1;
}

/* FNV-1a of the links, so that runs with other thread counts can be
 * compared bit for bit */
static uint64_t links_hash(const struct lb_assignment *a)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < a->n_src * a->l; i++) {
		uint32_t t = a->links[i].target;
		for (int b = 0; b < 4; b++) {
			h ^= (t >> (8 * b)) & 255;
			h *= 1099511628211ULL;
		}
		h ^= a->links[i].type;
		h *= 1099511628211ULL;
	}
	return h;
}

/*
 * The night in one process: yesterday's cold solve (its links and
 * bonuses mapped to today's pages), then today's instance warm and cold.
 * Prints one line per solve; CPU seconds of each solve alone.
 */
static int run_night(const struct lb_candidates *c0,
		     const std::vector<double> &pop0, size_t n, size_t l,
		     size_t k, uint64_t seed)
{
	struct lb_candidates c;
	std::vector<uint32_t> map;
	std::vector<long> self;
	std::vector<uint32_t> prev;
	std::vector<double> warm;
	struct lb_assign_params p;
	struct lb_assignment a0 = { 0, 0, nullptr, 0, nullptr },
			     a1 = { 0, 0, nullptr, 0, nullptr },
			     a2 = { 0, 0, nullptr, 0, nullptr };
	struct lb_assign_stats st;
	struct lb_error err;
	size_t n1, s, j;
	double c0t;
	const char *what[2] = { "warm", "cold" };

	self.resize(n);
	for (s = 0; s < n; s++)
		self[s] = (long)s;
	memset(&p, 0, sizeof(p));
	p.n_tgt = n;
	p.links = l;
	p.min_in = k;
	p.random_completion = 1;
	p.seed = seed;
	p.self = self.data();
	p.threads = bench_threads();
	lb_error_init(&err);
	c0t = cpu_now();
	if (assign_links(c0, &p, &a0, &st, &err) < 0) {
		fprintf(stderr, "assign_links: %s\n", err.msg);
		return 1;
	}
	printf("night-yesterday N=%zu cpu=%.3f objective=%.6f certified=%d\n",
	       n, cpu_now() - c0t, st.model_objective, st.certified);
	make_night(c0, pop0, n, c0->m, seed, &c, &map, &n1);
	self.resize(n1);
	for (s = 0; s < n1; s++)
		self[s] = (long)s;
	prev.assign(n1 * l, LB_NO_TARGET);
	warm.assign(n1, NAN);
	for (s = 0; s < n; s++) {
		uint32_t ns_ = map[s];
		size_t got = 0;

		if (ns_ == LB_NO_TARGET)
			continue;
		warm[ns_] = a0.bonus[s];
		for (j = 0; j < l; j++) {
			uint32_t t = a0.links[s * l + j].target;
			if (t != LB_NO_TARGET && map[t] != LB_NO_TARGET)
				prev[ns_ * l + got++] = map[t];
		}
	}
	lb_assignment_release(&a0);
	p.n_tgt = n1;
	p.self = self.data();
	p.prev = prev.data();
	p.prev_l = l;
	p.stability_bonus = 0;	/* the same instance warm and cold */
	for (int w = 0; w < 2; w++) {
		struct lb_assignment *a = w == 0 ? &a1 : &a2;

		p.warm = w == 0 ? warm.data() : nullptr;
		c0t = cpu_now();
		double w0 = now();
		if (assign_links(&c, &p, a, &st, &err) < 0) {
			fprintf(stderr, "assign_links: %s\n", err.msg);
			return 1;
		}
		printf("night-%s N=%zu M=%zu L=%zu k=%zu threads=%zu cpu=%.3f "
		       "seconds=%.3f objective=%.6f "
		       "min_in=%zu certified=%d churn=%zu churn_pages=%zu "
		       "lifted_pages=%zu links_hash=%016llx "
		       "process_peak_mib=%.1f\n", what[w], n1,
		       c.m, l, k, st.threads,
		       cpu_now() - c0t, now() - w0, st.model_objective, st.min_in,
		       st.certified, st.churn, st.churn_sources,
		       st.lifted_pages, (unsigned long long)links_hash(a),
		       (double)rss_kib("VmHWM:") / 1024.0);
		fflush(stdout);
	}
	/* how far the optimal bonuses moved overnight (pages kept) */
	{
		size_t kept = 0, moved = 0, moved_far = 0;
		double mx = 0;

		for (s = 0; s < n1; s++) {
			if (std::isnan(warm[s]))
				continue;
			double dlt = std::fabs(warm[s] - a2.bonus[s]);
			kept++;
			moved += dlt > 1e-6;
			moved_far += dlt > 1e-2;
			mx = std::max(mx, dlt);
		}
		printf("night-duals kept=%zu moved=%zu moved_over_0.01=%zu "
		       "max_move=%.4f\n", kept, moved, moved_far, mx);
	}
	lb_assignment_release(&a1);
	lb_assignment_release(&a2);
	lb_candidates_release(&c);
	return 0;
}

static int run_ours(const struct lb_candidates *c, size_t n, size_t l,
		    size_t k, uint64_t seed)
{
	std::vector<long> self(n);
	struct lb_assign_params p;
	struct lb_assignment a = { 0, 0, nullptr, 0, nullptr };
	struct lb_assign_stats st;
	struct lb_error err;
	long before;
	double t0, t1;

	for (size_t i = 0; i < n; i++)
		self[i] = (long)i;
	memset(&p, 0, sizeof(p));
	p.n_tgt = n;
	p.links = l;
	p.min_in = k;
	p.random_completion = 1;
	p.seed = seed;
	p.self = self.data();
	p.threads = bench_threads();
	lb_error_init(&err);
	before = rss_kib("VmRSS:");
	reset_hwm();
	t0 = now();
	double c0 = cpu_now();
	if (assign_links(c, &p, &a, &st, &err) < 0) {
		fprintf(stderr, "assign_links: %s\n", err.msg);
		return 1;
	}
	t1 = now();
	printf("ours N=%zu M=%zu L=%zu k=%zu threads=%zu cpu=%.3f seconds=%.3f "
	       "peak_mib=%.1f "
	       "objective=%.6f min_in=%zu median_in=%zu max_in=%zu "
	       "certified=%d random=%zu lifted=%zu lifted_pages=%zu "
	       "augmentations=%zu unrealized=%zu links_hash=%016llx\n",
	       n, c->m, l, k, st.threads, cpu_now() - c0, t1 - t0,
	       (double)(rss_kib("VmHWM:") - before) / 1024.0,
	       st.model_objective, st.min_in, st.median_in, st.max_in,
	       st.certified, st.random_links, st.lifted, st.lifted_pages,
	       st.augmentations, st.unrealized,
	       (unsigned long long)links_hash(&a));
	lb_assignment_release(&a);
	return 0;
}

static int run_lemon(const struct lb_candidates *c, size_t n, size_t l,
		     size_t k)
{
	typedef lemon::SmartDigraph G;
	const double scale = 16777216.0;
	const long long cost_r = -llround(LB_ASSIGN_RANDOM_WEIGHT * scale);
	long before = rss_kib("VmRSS:");
	double t0, t1;

	reset_hwm();
	t0 = now();
	double c0 = cpu_now();
	G g;
	g.reserveNode((int)(2 * n + 2));
	g.reserveArc((int)(n * c->m + 3 * n));
	std::vector<G::Node> sn(n), tn(n);
	for (size_t i = 0; i < n; i++)
		sn[i] = g.addNode();
	for (size_t i = 0; i < n; i++)
		tn[i] = g.addNode();
	G::Node hub = g.addNode(), y = g.addNode();
	G::ArcMap<long long> cost(g), lower(g), upper(g);
	G::NodeMap<long long> supply(g, 0);
	const long long inf = (long long)n * (long long)l;
	size_t d = std::min(k, n - 1);

	/* the network is the one of N pages; a night has as many */

	for (size_t s = 0; s < n; s++) {
		for (size_t j = 0; j < c->m; j++) {
			uint32_t t = c->target[s * c->m + j];
			if (t == LB_NO_TARGET || t == s)
				continue;
			G::Arc a = g.addArc(sn[s], tn[t]);
			cost[a] = -llround((double)c->score[s * c->m + j] * scale);
			lower[a] = 0;
			upper[a] = 1;
		}
		G::Arc a = g.addArc(sn[s], hub);
		cost[a] = cost_r;
		lower[a] = 0;
		upper[a] = (long long)l;
		supply[sn[s]] = (long long)l;
	}
	for (size_t t = 0; t < n; t++) {
		G::Arc a = g.addArc(hub, tn[t]);
		cost[a] = 0;
		lower[a] = 0;
		upper[a] = inf;
		a = g.addArc(tn[t], y);
		cost[a] = 0;
		lower[a] = (long long)d;
		upper[a] = inf;
	}
	supply[y] = -(long long)(n * l);
	lemon::CostScaling<G, long long, long long> cs(g);
	cs.lowerMap(lower).upperMap(upper).costMap(cost).supplyMap(supply);
	if (cs.run() != lemon::CostScaling<G, long long, long long>::OPTIMAL) {
		fprintf(stderr, "lemon: not optimal\n");
		return 1;
	}
	t1 = now();
	double c1 = cpu_now();
	long long tot = cs.totalCost<long long>();
	size_t mn = SIZE_MAX;
	for (size_t t = 0; t < n; t++) {
		size_t in = 0;
		for (G::InArcIt a(g, tn[t]); a != lemon::INVALID; ++a)
			in += (size_t)cs.flow(a);
		mn = std::min(mn, in);
	}
	printf("lemon N=%zu M=%zu L=%zu k=%zu cpu=%.3f seconds=%.3f peak_mib=%.1f "
	       "objective=%.6f min_in=%zu\n", n, c->m, l, k, c1 - c0, t1 - t0,
	       (double)(rss_kib("VmHWM:") - before) / 1024.0,
	       -(double)tot / scale, mn);
	return 0;
}

int main(int argc, char **argv)
{
	struct lb_candidates c;
	size_t n, m, l, k;
	uint64_t seed;
	int rc;

	if (argc < 6) {
		fprintf(stderr, "usage: assign_bench ours|lemon|night|lemon-night "
			"N M L k [seed]\n"
			"       assign_bench lemon-file N M L k CANDIDATES\n");
		return 2;
	}
	n = strtoul(argv[2], nullptr, 10);
	m = strtoul(argv[3], nullptr, 10);
	l = strtoul(argv[4], nullptr, 10);
	k = strtoul(argv[5], nullptr, 10);
	seed = argc > 6 ? strtoull(argv[6], nullptr, 10) : 1;
	log_init(getenv("ASSIGN_DEBUG") ? 2 : 0);
	std::vector<double> pop;
	if (std::string(argv[1]) == "lemon-file")
		c = lb_candidates{};	/* no synthetic instance */
	else
		make_instance(&c, n, m, seed, &pop);
	if (std::string(argv[1]) == "night") {
		rc = run_night(&c, pop, n, l, k, seed);
	} else if (std::string(argv[1]) == "lemon-night") {
		/* LEMON cold on tonight's instance (the same as night's) */
		struct lb_candidates c1;
		std::vector<uint32_t> map;
		size_t n1;

		make_night(&c, pop, n, m, seed, &c1, &map, &n1);
		rc = run_lemon(&c1, n1, l, k);
		lb_candidates_release(&c1);
	} else if (std::string(argv[1]) == "lemon-file" && argc > 6) {
		/* LEMON on candidates that bench/assign_real.c cached (argv[6];
		 * N and M as given there): a real site's lists */
		struct lb_candidates cf;
		FILE *f = fopen(argv[6], "rb");

		rc = 1;
		if (f != nullptr && lb_candidates_init(&cf, n, m) == 0) {
			if (fread(cf.target, sizeof(*cf.target) * m, n, f) == n &&
			    fread(cf.score, sizeof(*cf.score) * m, n, f) == n)
				rc = run_lemon(&cf, n, l, k);
			lb_candidates_release(&cf);
		}
		if (f != nullptr)
			fclose(f);
		if (rc == 1)
			fprintf(stderr, "assign_bench: cannot read '%s'\n", argv[6]);
	} else if (std::string(argv[1]) == "ours")
		rc = run_ours(&c, n, l, k, seed);
	else if (std::string(argv[1]) == "lemon")
		rc = run_lemon(&c, n, l, k);
	else
		rc = 2;
	lb_candidates_release(&c);
	return rc;
}
