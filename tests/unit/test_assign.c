/*
 * assign: every constraint checked on every output, and the objective
 * checked against an independent exact solver (GLPK's simplex on the LP of
 * the same b-matching, which is totally unimodular, so its optimum is the
 * integer optimum) on many small random instances: same-set and bipartite,
 * with and without random completion, language groups, caps, previous
 * links, and infeasible ones (k * |T| > L * |S|).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>
#include <glpk.h>

#include "../../src/assign/feasible.h"
#include "linkbot/assign.h"

struct inst {
	struct lb_candidates c;
	struct lb_assign_params p;
	long *self;
	uint32_t *ls, *lt, *prev;
};

static uint64_t rs = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static size_t below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

static void inst_free(struct inst *in)
{
	lb_candidates_release(&in->c);
	free(in->self);
	free(in->ls);
	free(in->lt);
	free(in->prev);
	memset(in, 0, sizeof(*in));
}

/*
 * A random instance. same: targets are the sources (self[i] = i);
 * else bipartite. Candidates are best first, sometimes with duplicates,
 * padding in the middle of a row, and self.
 */
static void inst_make(struct inst *in, size_t ns, size_t nt, size_t m,
		      int same, int langs, int with_prev)
{
	size_t s, j;

	memset(in, 0, sizeof(*in));
	assert_int_equal(lb_candidates_init(&in->c, ns, m), 0);
	in->p.n_tgt = nt;
	if (same) {
		in->self = malloc((ns + 1) * sizeof(long));
		for (s = 0; s < ns; s++)
			in->self[s] = (long)s;
		in->p.self = in->self;
	}
	if (langs) {
		in->ls = malloc((ns + 1) * sizeof(uint32_t));
		in->lt = malloc((nt + 1) * sizeof(uint32_t));
		for (j = 0; j < nt; j++)
			in->lt[j] = 7 + (uint32_t)below(2);
		for (s = 0; s < ns; s++)
			in->ls[s] = same ? in->lt[s] : 7 + (uint32_t)below(3);
		in->p.lang_src = in->ls;
		in->p.lang_tgt = in->lt;
	}
	for (s = 0; s < ns; s++) {
		size_t n = below(m + 1);
		float w = 1.0f;

		for (j = 0; j < n && nt > 0; j++) {
			uint32_t t = (uint32_t)below(nt);

			if (below(10) == 0)
				continue;	/* padding in the middle */
			if (langs && in->lt[t] != in->ls[s] && below(2))
				t = (uint32_t)below(nt);
			w -= (float)(below(1000)) / 4000.0f;
			in->c.target[s * m + j] = t;
			in->c.score[s * m + j] = w;
		}
	}
	if (with_prev && nt > 0) {
		in->p.prev_l = 3;
		in->prev = malloc(ns * 3 * sizeof(uint32_t) + 1);
		for (j = 0; j < ns * 3; j++)
			in->prev[j] = below(4) == 0 ? LB_NO_TARGET :
						      (uint32_t)below(nt);
		in->p.prev = in->prev;
		in->p.stability_bonus = 0.05;
	}
}

static int eligible(const struct inst *in, size_t s, size_t t)
{
	if (in->p.self && in->p.self[s] == (long)t)
		return 0;
	if (in->p.lang_src && in->ls[s] != in->lt[t])
		return 0;
	return 1;
}

static int in_prev(const struct inst *in, size_t s, size_t t)
{
	size_t j;

	if (in->p.prev == NULL)
		return 0;
	for (j = 0; j < in->p.prev_l; j++)
		if (in->p.prev[s * in->p.prev_l + j] == t)
			return 1;
	return 0;
}

/* Weight of pair (s, t) in the model, or NAN when it is no arc. */
static double pair_weight(const struct inst *in, size_t s, size_t t)
{
	double w = NAN, b;
	size_t j;

	if (!eligible(in, s, t))
		return NAN;
	for (j = 0; j < in->c.m; j++)
		if (in->c.target[s * in->c.m + j] == t &&
		    (isnan(w) || in->c.score[s * in->c.m + j] > w))
			w = in->c.score[s * in->c.m + j];
	b = (!isnan(w) && in_prev(in, s, t)) ? in->p.stability_bonus : 0;
	if (!isnan(w))
		return w + b;
	return in->p.random_completion ? LB_ASSIGN_RANDOM_WEIGHT : NAN;
}

struct oracle {
	double obj;
	size_t k;
	int capped;
};

/* LP over the pairs with lower bounds min(k', reach), caps; NAN if none. */
static double glpk_solve(const struct inst *in, size_t kk, size_t cap)
{
	size_t ns = in->c.n_src, nt = in->p.n_tgt, s, t, nv = 0, ne = 0;
	size_t *ls = calloc(ns + 1, sizeof(size_t));
	size_t *reach = calloc(nt + 1, sizeof(size_t));
	int *ia = NULL, *ja = NULL;
	double *ar = NULL, obj = NAN;
	glp_prob *lp = glp_create_prob();
	glp_smcp parm;
	int col, ret;

	for (s = 0; s < ns; s++) {
		for (t = 0; t < nt; t++)
			ls[s] += !isnan(pair_weight(in, s, t));
		if (ls[s] > in->p.links)
			ls[s] = in->p.links;
		for (t = 0; t < nt; t++)
			if (ls[s] > 0 && !isnan(pair_weight(in, s, t)))
				reach[t]++;
	}
	for (s = 0; s < ns; s++)
		for (t = 0; t < nt; t++)
			nv += !isnan(pair_weight(in, s, t));
	glp_set_obj_dir(lp, GLP_MAX);
	glp_add_rows(lp, (int)(ns + nt) + 1);
	for (s = 0; s < ns; s++)
		glp_set_row_bnds(lp, (int)s + 1, GLP_FX, (double)ls[s],
				 (double)ls[s]);
	for (t = 0; t < nt; t++) {
		size_t d = reach[t] < kk ? reach[t] : kk;

		if (cap)
			glp_set_row_bnds(lp, (int)(ns + t) + 1,
					 d == cap ? GLP_FX : GLP_DB, (double)d,
					 (double)cap);
		else
			glp_set_row_bnds(lp, (int)(ns + t) + 1, GLP_LO,
					 (double)d, 0.0);
	}
	glp_set_row_bnds(lp, (int)(ns + nt) + 1, GLP_FR, 0, 0);
	if (nv > 0)
		glp_add_cols(lp, (int)nv);
	ia = malloc((2 * nv + 2) * sizeof(int));
	ja = malloc((2 * nv + 2) * sizeof(int));
	ar = malloc((2 * nv + 2) * sizeof(double));
	col = 0;
	for (s = 0; s < ns; s++)
		for (t = 0; t < nt; t++) {
			double w = pair_weight(in, s, t);

			if (isnan(w))
				continue;
			col++;
			glp_set_col_bnds(lp, col, GLP_DB, 0.0, 1.0);
			glp_set_obj_coef(lp, col, w);
			ne++;
			ia[ne] = (int)s + 1, ja[ne] = col, ar[ne] = 1.0;
			ne++;
			ia[ne] = (int)(ns + t) + 1, ja[ne] = col, ar[ne] = 1.0;
		}
	if (ne > 0)
		glp_load_matrix(lp, (int)ne, ia, ja, ar);
	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = GLP_ON;
	ret = glp_simplex(lp, &parm);
	if (ret == 0 && glp_get_status(lp) == GLP_OPT)
		obj = glp_get_obj_val(lp);
	glp_delete_prob(lp);
	free(ia);
	free(ja);
	free(ar);
	free(ls);
	free(reach);
	return obj;
}

static struct oracle oracle(const struct inst *in)
{
	struct oracle o;
	size_t cap = 0;

	if (in->p.max_in > 0)
		cap = in->p.max_in < in->p.min_in ? in->p.min_in : in->p.max_in;
	o.capped = cap > 0;
	if (cap && isnan(glpk_solve(in, 0, cap))) {
		cap = 0;	/* the cap cannot hold: solved without */
		o.capped = 0;
	}
	for (o.k = in->p.min_in;; o.k--) {
		o.obj = glpk_solve(in, o.k, cap);
		if (!isnan(o.obj) || o.k == 0)
			break;
	}
	return o;
}

/*
 * Every constraint on the output: L_s links, no self, no duplicate,
 * related links are candidates with their score, random links allowed
 * pairs, in-degree >= min(k_used, reach), cap, figures consistent.
 */
static void check(const struct inst *in, const struct lb_assignment *a,
		  const struct lb_assign_stats *st, size_t cap)
{
	size_t ns = in->c.n_src, nt = in->p.n_tgt, L = in->p.links, s, t, i, j;
	size_t *deg = calloc(nt + 1, sizeof(size_t));
	size_t *reach = calloc(nt + 1, sizeof(size_t));
	size_t links = 0, nrand = 0, mn = SIZE_MAX, mx = 0;
	double obj = 0;

	assert_int_equal(a->n_src, ns);
	assert_int_equal(a->l, L);
	for (s = 0; s < ns; s++) {
		size_t want = 0, n = 0;

		for (t = 0; t < nt; t++)
			want += !isnan(pair_weight(in, s, t));
		if (want > L)
			want = L;
		for (t = 0; t < nt; t++)
			if (want > 0 && !isnan(pair_weight(in, s, t)))
				reach[t]++;
		for (i = 0; i < L; i++) {
			const struct lb_link *lk = &a->links[s * L + i];

			if (lk->target == LB_NO_TARGET) {
				for (j = i; j < L; j++)
					assert_int_equal(a->links[s * L + j].target,
							 LB_NO_TARGET);
				break;
			}
			n++;
			assert_true(lk->target < nt);
			assert_true(eligible(in, s, lk->target));
			for (j = 0; j < i; j++)
				assert_int_not_equal(a->links[s * L + j].target,
						     lk->target);
			if (lk->type == LB_LINK_RELATED) {
				double w = pair_weight(in, s, lk->target);
				double b = in_prev(in, s, lk->target) ?
						   in->p.stability_bonus : 0;

				assert_false(isnan(w));
				assert_true(w > LB_ASSIGN_RANDOM_WEIGHT);
				assert_float_equal(lk->score, w - b, 1e-6);
				obj += lk->score;
				if (i > 0 && a->links[s * L + i - 1].type ==
						     LB_LINK_RELATED)
					assert_true(a->links[s * L + i - 1].score >=
						    lk->score);
			} else {
				assert_int_equal(lk->type, LB_LINK_RANDOM);
				assert_true(in->p.random_completion);
				nrand++;
			}
			deg[lk->target]++;
		}
		assert_int_equal(n, want);
		links += n;
	}
	for (t = 0; t < nt; t++) {
		size_t d = reach[t] < st->k_used ? reach[t] : st->k_used;

		assert_true(deg[t] >= d);
		if (cap)
			assert_true(deg[t] <= cap);
		if (deg[t] < mn)
			mn = deg[t];
		if (deg[t] > mx)
			mx = deg[t];
	}
	assert_int_equal(st->links, links);
	assert_int_equal(st->random_links, nrand);
	assert_true(fabs(st->objective - obj) < 1e-4);
	if (nt > 0) {
		assert_int_equal(st->min_in, mn);
		assert_int_equal(st->max_in, mx);
		assert_true(st->median_in >= mn && st->median_in <= mx);
	}
	assert_true(st->k_used <= in->p.min_in);
	free(deg);
	free(reach);
}

static void run_one(struct inst *in, int must_certify)
{
	struct lb_assignment a = { 0 };
	struct lb_assign_stats st;
	struct lb_error err;
	struct oracle o = oracle(in);
	double tol;

	lb_error_init(&err);
	assert_int_equal(assign_links(&in->c, &in->p, &a, &st, &err), 0);
	check(in, &a, &st, o.capped ? (in->p.max_in < in->p.min_in ?
				     in->p.min_in : in->p.max_in) : 0);
	assert_false(isnan(o.obj));
	if (st.k_used != o.k)
		fail_msg("k_used %zu, GLPK's best k %zu (ns %zu nt %zu L %zu "
			 "k %zu)", st.k_used, o.k, in->c.n_src, in->p.n_tgt,
			 in->p.links, in->p.min_in);
	tol = 1e-6 * fabs(o.obj) + 1e-5;
	if (fabs(st.model_objective - o.obj) > tol)
		fail_msg("objective %.9f, GLPK %.9f (ns %zu nt %zu m %zu L %zu "
			 "k %zu rc %d cap %zu)", st.model_objective, o.obj,
			 in->c.n_src, in->p.n_tgt, in->c.m, in->p.links,
			 in->p.min_in, in->p.random_completion, in->p.max_in);
	if (must_certify)
		assert_true(st.certified);
	lb_assignment_release(&a);
}

/* Many small random instances, dense model: exact against GLPK. */
static void test_random_vs_glpk(void **state)
{
	int it;

	(void)state;
	for (it = 0; it < 600; it++) {
		struct inst in;
		int same = below(2);
		size_t ns = 1 + below(14), nt = same ? ns : 1 + below(14);

		inst_make(&in, ns, nt, below(7), same, below(4) == 0,
			  below(4) == 0);
		in.p.links = below(6);
		in.p.min_in = below(7);
		in.p.random_completion = below(3) != 0;
		in.p.max_in = below(4) == 0 ? in.p.min_in + below(4) : 0;
		in.p.seed = (uint64_t)it;
		run_one(&in, 1);
		inst_free(&in);
	}
}

/* Infeasible: k |T| > L |S|; the best uniform k holds and is reported. */
static void test_infeasible(void **state)
{
	struct inst in;
	struct lb_assignment a = { 0 };
	struct lb_assign_stats st;
	struct lb_error err;

	(void)state;
	inst_make(&in, 10, 40, 5, 0, 0, 0);
	in.p.links = 3;
	in.p.min_in = 4;	/* 160 links needed, 30 exist */
	in.p.random_completion = 1;
	run_one(&in, 1);
	lb_error_init(&err);
	assert_int_equal(assign_links(&in.c, &in.p, &a, &st, &err), 0);
	assert_int_equal(st.k_used, 0);
	assert_false(st.feasible);
	lb_assignment_release(&a);
	inst_free(&in);

	/* 20 sources x 4 links over 30 targets: k = 2 holds, 3 cannot */
	inst_make(&in, 20, 30, 6, 0, 0, 0);
	in.p.links = 4;
	in.p.min_in = 3;
	in.p.random_completion = 1;
	lb_error_init(&err);
	assert_int_equal(assign_links(&in.c, &in.p, &a, &st, &err), 0);
	assert_int_equal(st.k_used, 2);
	assert_int_equal(st.min_in, 2);
	assert_false(st.feasible);
	/* the log names the reason: 80 links for a demand of 90 */
	assert_int_equal(st.short_why, LB_ASSIGN_SHORT_SUPPLY);
	assert_int_equal(st.supply, 80);
	assert_int_equal(st.demand, 90);
	{
		char why[400];

		assign_explain(&st, &in.p, why, sizeof(why));
		assert_non_null(strstr(why, "give 80 links"));
	}
	lb_assignment_release(&a);
	run_one(&in, 1);
	inst_free(&in);
}

/*
 * A site of 5 pages with k = L = 8: every page can be linked by 4 others
 * only. Supply and demand match (5 x 4); the reason is the reach, not
 * "too few source pages or links".
 */
static void test_reach_reason(void **state)
{
	struct inst in;
	struct lb_assignment a = { 0 };
	struct lb_assign_stats st;
	struct lb_error err;
	char why[400];

	(void)state;
	inst_make(&in, 5, 5, 3, 1, 0, 0);
	in.p.links = 8;
	in.p.min_in = 8;
	in.p.random_completion = 1;
	lb_error_init(&err);
	assert_int_equal(assign_links(&in.c, &in.p, &a, &st, &err), 0);
	assert_int_equal(st.min_in, 4);
	assert_true(st.certified);
	assert_int_equal(st.short_why, LB_ASSIGN_SHORT_REACH);
	assert_int_equal(st.low_reach, 5);
	assert_int_equal(st.min_reach, 4);
	assign_explain(&st, &in.p, why, sizeof(why));
	assert_non_null(strstr(why, "5 target pages can be linked by fewer "
				    "than k = 8 source pages (as few as 4"));
	lb_assignment_release(&a);
	inst_free(&in);
}

/* Hub mode (random arcs through a hub) gives the dense optimum. */
/*
 * Hall's condition, which counting misses: t0 and t1 can only be linked
 * by source 0, which has one link. Supply 3 = demand 3 at k = 1, yet k = 1
 * cannot hold; the max flow says so and the solver keeps k = 0.
 */
static void test_hall(void **state)
{
	static const size_t off[] = { 0, 2, 3, 4 };
	static const uint32_t tg[] = { 0, 1, 2, 2 };
	static const uint32_t ls[] = { 1, 1, 1 }, reach[] = { 1, 1, 2 };
	static const uint32_t ok_ls[] = { 2, 1, 1 };
	struct lb_candidates c;
	struct lb_assign_params p;
	struct lb_assignment a = { 0 };
	struct lb_assign_stats st;
	struct lb_error err;

	(void)state;
	assert_int_equal(feasible_level(3, 3, off, tg, ls, reach, 1), 0);
	/* source 0 with two links serves both, at every level (each
	 * target's demand is capped by its reach) */
	assert_int_equal(feasible_level(3, 3, off, tg, ok_ls, reach, 1), 1);
	assert_int_equal(feasible_level(3, 3, off, tg, ok_ls, reach, 3), 3);

	assert_int_equal(lb_candidates_init(&c, 3, 2), 0);
	c.target[0] = 0; c.score[0] = 0.9f;
	c.target[1] = 1; c.score[1] = 0.8f;
	c.target[2] = 2; c.score[2] = 0.7f;
	c.target[4] = 2; c.score[4] = 0.6f;
	memset(&p, 0, sizeof(p));
	p.n_tgt = 3;
	p.links = 1;
	p.min_in = 1;
	lb_error_init(&err);
	assert_int_equal(assign_links(&c, &p, &a, &st, &err), 0);
	assert_int_equal(st.k_used, 0);
	assert_false(st.feasible);
	assert_true(st.certified);
	assert_int_equal(a.links[0].target, 0);	/* plain top-1 */
	lb_assignment_release(&a);
	lb_candidates_release(&c);
}

static void test_hub_mode(void **state)
{
	int it;

	(void)state;
	for (it = 0; it < 12; it++) {
		struct inst in;
		struct lb_assignment a = { 0 }, b = { 0 };
		struct lb_assign_stats sa, sb;
		struct lb_error err;
		int same = it % 2;
		size_t ns = 60 + below(60), nt = same ? ns : 40 + below(80);

		inst_make(&in, ns, nt, 6, same, it % 3 == 0, it % 4 == 0);
		in.p.links = 4;
		in.p.min_in = 2 + below(4);
		in.p.random_completion = 1;
		in.p.seed = (uint64_t)it;
		/* some sources without any candidate */
		for (size_t s = 0; s < ns; s += 7)
			for (size_t j = 0; j < in.c.m; j++)
				in.c.target[s * in.c.m + j] = LB_NO_TARGET;
		lb_error_init(&err);
		in.p.dense_limit = 0;
		assert_int_equal(assign_links(&in.c, &in.p, &a, &sa, &err), 0);
		in.p.dense_limit = 1;
		assert_int_equal(assign_links(&in.c, &in.p, &b, &sb, &err), 0);
		check(&in, &b, &sb, 0);
		assert_int_equal(sb.unrealized, 0);
		assert_true(sb.certified);
		assert_int_equal(sa.k_used, sb.k_used);
		assert_true(fabs(sa.model_objective - sb.model_objective) <
			    1e-6 * fabs(sa.model_objective) + 1e-5);
		if (it < 4) {
			in.p.dense_limit = 0;
			run_one(&in, 1);
		}
		lb_assignment_release(&a);
		lb_assignment_release(&b);
		inst_free(&in);
	}
}

/* Sources without candidates get L random links, spread over targets. */
static void test_random_completion(void **state)
{
	struct inst in;
	struct lb_assignment a = { 0 };
	struct lb_assign_stats st;
	struct lb_error err;
	size_t ns = 2000, nt = 500, s, i, *deg;

	(void)state;
	inst_make(&in, ns, nt, 0, 0, 0, 0);
	in.p.links = 5;
	in.p.min_in = 0;
	in.p.random_completion = 1;
	in.p.seed = 42;
	lb_error_init(&err);
	assert_int_equal(assign_links(&in.c, &in.p, &a, &st, &err), 0);
	assert_int_equal(st.random_links, ns * 5);
	deg = calloc(nt, sizeof(size_t));
	for (s = 0; s < ns; s++)
		for (i = 0; i < 5; i++) {
			assert_int_equal(a.links[s * 5 + i].type, LB_LINK_RANDOM);
			deg[a.links[s * 5 + i].target]++;
		}
	/* mean 20 per target: uniform spreading keeps all within 0..60 */
	for (i = 0; i < nt; i++)
		assert_true(deg[i] > 0 && deg[i] < 60);
	free(deg);
	lb_assignment_release(&a);
	/* off: no links at all */
	in.p.random_completion = 0;
	assert_int_equal(assign_links(&in.c, &in.p, &a, &st, &err), 0);
	assert_int_equal(st.links, 0);
	assert_int_equal(a.links[0].target, LB_NO_TARGET);
	lb_assignment_release(&a);
	inst_free(&in);
}

/*
 * Stability: re-solve with 1% of the sources' scores changed. With the
 * previous links as a bonus, the churn stays near the changed rows.
 */
static void test_stability(void **state)
{
	struct inst in;
	struct lb_assignment a = { 0 }, b = { 0 }, c = { 0 };
	struct lb_assign_stats sa, sb, sc;
	struct lb_error err;
	size_t ns = 3000, m = 16, L = 4, s, j;
	uint32_t *prev;

	(void)state;
	memset(&in, 0, sizeof(in));
	assert_int_equal(lb_candidates_init(&in.c, ns, m), 0);
	for (s = 0; s < ns; s++) {
		float w = 0.9f;

		for (j = 0; j < m; j++) {
			uint32_t t = (uint32_t)below(ns);

			w -= (float)below(100) / 2000.0f;
			in.c.target[s * m + j] = t == s ? (uint32_t)((t + 1) % ns) : t;
			in.c.score[s * m + j] = w;
		}
	}
	in.self = malloc(ns * sizeof(long));
	for (s = 0; s < ns; s++)
		in.self[s] = (long)s;
	in.p.self = in.self;
	in.p.n_tgt = ns;
	in.p.links = L;
	in.p.min_in = 3;
	in.p.random_completion = 1;
	lb_error_init(&err);
	assert_int_equal(assign_links(&in.c, &in.p, &a, &sa, &err), 0);
	assert_true(sa.certified);
	assert_int_equal(sa.min_in, 3);
	assert_int_equal(sa.churn, 0);
	prev = malloc(ns * L * sizeof(uint32_t));
	for (j = 0; j < ns * L; j++)
		prev[j] = a.links[j].target;
	/* 1% of the pages change */
	for (s = 0; s < ns; s += 100)
		for (j = 0; j < m; j++)
			in.c.target[s * m + j] = (uint32_t)((s + 1 + below(ns - 1)) % ns);
	in.p.prev = prev;
	in.p.prev_l = L;
	in.p.stability_bonus = 0;
	assert_int_equal(assign_links(&in.c, &in.p, &b, &sb, &err), 0);
	in.p.stability_bonus = 0.02;
	assert_int_equal(assign_links(&in.c, &in.p, &c, &sc, &err), 0);
	assert_true(sc.certified);
	assert_int_equal(sc.min_in, 3);
	/* the changed rows alone account for at most 30 * L new links */
	print_message("stability: churn %zu links / %zu sources without bonus, %zu / %zu with\n", sb.churn, sb.churn_sources, sc.churn, sc.churn_sources);
	/* the bonus keeps strictly more links; a 1% change moves < 5% */
	assert_true(sc.churn < sb.churn);
	assert_true(sc.churn_sources < sb.churn_sources);
	assert_true(sc.churn_sources < ns / 20);
	assert_true(sb.churn > 0);
	lb_assignment_release(&a);
	lb_assignment_release(&b);
	lb_assignment_release(&c);
	free(prev);
	in.p.prev = NULL;
	inst_free(&in);
}


/*
 * A site as the relate stage sees it: sources = targets, each page's
 * candidates drawn by a heavy-tailed popularity (a few pages everybody
 * finds similar, many nobody does), and a few pages with fewer
 * candidates than links (new or short pages). With k = L every page
 * must end at exactly k in and L out, so the few random links the
 * optimum needs are pinned: often a page that lacks outgoing links also
 * lacks incoming ones, and the only random slot left pairs it with
 * itself. Hub mode (|S| * |T| > dense_limit) must still realise them.
 */
static void site_make(struct inst *in, size_t n, size_t m, size_t L,
		      size_t few)
{
	double *cdf = malloc((n + 1) * sizeof(double)), sum = 0;
	char *short_;
	size_t s, j, t;

	memset(in, 0, sizeof(*in));
	assert_int_equal(lb_candidates_init(&in->c, n, m), 0);
	short_ = calloc(n + 1, 1);
	for (t = 0; t < n; t++) {
		double u = (double)(below(1000000) + 1) / 1e6;

		/* a new page: short of candidates, and in nobody's list */
		short_[t] = below(n) < few;
		sum += short_[t] && below(4) ? 0 : pow(u, -0.25);
		cdf[t] = sum;
	}
	in->self = malloc((n + 1) * sizeof(long));
	for (s = 0; s < n; s++)
		in->self[s] = (long)s;
	in->p.self = in->self;
	in->p.n_tgt = n;
	in->p.links = L;
	in->p.min_in = L;
	in->p.random_completion = 1;
	for (s = 0; s < n; s++) {
		size_t want = m, got = 0, tries = 0;
		float w = 0.95f;

		if (short_[s])
			want = L - 1 - below(L / 2);	/* short of links */
		if (want > m)
			want = m;
		while (got < want && tries++ < 50 * m) {
			double x = (double)below(1u << 30) / (double)(1u << 30) * sum;
			size_t lo = 0, hi = n - 1;

			while (lo < hi) {
				size_t mid = (lo + hi) / 2;

				if (cdf[mid] < x)
					lo = mid + 1;
				else
					hi = mid;
			}
			t = lo;
			if (t == s || cdf[t] == (t ? cdf[t - 1] : 0))
				continue;
			for (j = 0; j < got; j++)
				if (in->c.target[s * m + j] == t)
					break;
			if (j < got)
				continue;
			w -= (float)below(1000) / 40000.0f;
			in->c.target[s * m + got] = (uint32_t)t;
			in->c.score[s * m + got] = w;
			got++;
		}
	}
	free(cdf);
	free(short_);
}

/* Links missing: below L out or below k in (k = L: exactly L each);
 * when none, every other constraint is checked too. */
static size_t site_short(const struct inst *in, const struct lb_assignment *a,
			 const struct lb_assign_stats *st)
{
	size_t n = in->c.n_src, L = in->p.links, s, t, shortfall = 0;
	size_t *deg = calloc(n + 1, sizeof(size_t));

	for (s = 0; s < n; s++)
		for (t = 0; t < L; t++)
			if (a->links[s * L + t].target != LB_NO_TARGET)
				deg[a->links[s * L + t].target]++;
			else
				shortfall++;	/* a source below L */
	for (t = 0; t < n; t++)
		if (deg[t] < in->p.min_in)
			shortfall += in->p.min_in - deg[t];
	free(deg);
	if (shortfall == 0)
		check(in, a, st, 0);
	return shortfall;
}

/*
 * The property: on sites shaped like real ones (k = L, |S| = |T| of
 * 1,000-1,200 so that hub mode is used, few random links, sources =
 * targets) every page reaches k, the assignment is certified on the
 * realised links, and nothing is left unrealised. The old post-solve
 * slot matching left pages at k - 2 on some of these.
 */
static void test_site_k_equals_l(void **state)
{
	size_t it, failed = 0, hub_runs = 0, rnd_total = 0, nx = 0;

	(void)state;
	for (it = 0; it < (getenv("SITE_SWEEP") ? 400u : 100u); it++) {
		struct inst in;
		struct lb_assignment a = { 0 };
		struct lb_assign_stats st;
		struct lb_error err;
		size_t n = 1000 + below(201), L = it % 3 == 0 ? 6 : 8;
		size_t sh;

		site_make(&in, n, 12 + below(8), L, 2 + below(6));
		in.p.seed = it;
		lb_error_init(&err);
		assert_int_equal(assign_links(&in.c, &in.p, &a, &st, &err), 0);
		sh = site_short(&in, &a, &st);
		hub_runs++;
		rnd_total += st.random_links;
		nx += st.explicit_sources;
		assert_true(st.rounds >= 1 + (st.explicit_sources > 0));
		if (sh > 0 || st.unrealized > 0 || !st.certified ||
		    !st.feasible || st.min_in < L) {
			print_message("site %zu (n %zu, L = k = %zu): %zu links "
				      "short, min in %zu, %zu unrealised, "
				      "certified %d, %zu random\n", it, n, L,
				      sh, st.min_in, st.unrealized,
				      st.certified, st.random_links);
			failed++;
		}
		lb_assignment_release(&a);
		inst_free(&in);
	}
	print_message("sites: %zu of %zu short of k (%zu random links in all, "
		      "%zu sources made explicit)\n", failed, hub_runs,
		      rnd_total, nx);
	assert_int_equal(failed, 0);
	/* the sites that the old matching left short needed explicit rows */
	assert_true(nx > 0);
}

/*
 * The same shape, small enough for the exact dense model: hub mode
 * (dense_limit 1) gives the dense model's objective (which GLPK checks
 * elsewhere) on every instance, k = L and (every third) k < L.
 */
static void test_site_hub_exact(void **state)
{
	size_t it;

	(void)state;
	for (it = 0; it < (getenv("SITE_SWEEP") ? 3000u : 60u); it++) {
		struct inst in;
		struct lb_assignment a = { 0 }, b = { 0 };
		struct lb_assign_stats sa, sb;
		struct lb_error err;
		size_t n = 30 + below(120), L = 3 + below(4);

		site_make(&in, n, 4 + below(6), L, 1 + below(4));
		in.p.seed = it;
		if (it % 3 == 2)
			in.p.min_in = L - 1 - below(2);	/* k < L too */
		lb_error_init(&err);
		in.p.dense_limit = (size_t)1 << 30;
		assert_int_equal(assign_links(&in.c, &in.p, &a, &sa, &err), 0);
		in.p.dense_limit = 1;
		assert_int_equal(assign_links(&in.c, &in.p, &b, &sb, &err), 0);
		assert_int_equal(site_short(&in, &a, &sa), 0);
		if (site_short(&in, &b, &sb) != 0 || sb.unrealized ||
		    !sb.certified ||
		    fabs(sa.model_objective - sb.model_objective) >
			    1e-6 * fabs(sa.model_objective) + 1e-5)
			fail_msg("site %zu (n %zu L %zu): hub %.9f certified %d "
				 "unrealised %zu min in %zu, dense %.9f",
				 it, n, L, sb.model_objective, sb.certified,
				 sb.unrealized, sb.min_in, sa.model_objective);
		assert_true(sa.certified);
		lb_assignment_release(&a);
		lb_assignment_release(&b);
		inst_free(&in);
	}
}

/*
 * Small sites skip cost scaling (small_limit, docs/assign.md "Small
 * sites"): on 2,400 random instances, solved by both paths (small_limit
 * 1 forces cost scaling), the objective, the k that holds and the
 * certificate are the same. Random bipartite instances of every option
 * (languages, caps, no random completion, yesterday's links) and
 * site-shaped ones (20-300 pages, k < L and k = L, dense and hub
 * mode). Most of them must take the direct path, and a 100-page site
 * like the night benchmark's (L 4, k 2) must.
 */
static void small_pair(struct inst *in, size_t *direct)
{
	struct lb_assignment a = { 0 }, b = { 0 };
	struct lb_assign_stats sa, sb;
	struct lb_error err;

	lb_error_init(&err);
	in->p.small_limit = 0;
	assert_int_equal(assign_links(&in->c, &in->p, &a, &sa, &err), 0);
	in->p.small_limit = 1;
	assert_int_equal(assign_links(&in->c, &in->p, &b, &sb, &err), 0);
	assert_false(sb.direct);
	*direct += sa.direct != 0;
	if (sa.k_used != sb.k_used || sa.certified != sb.certified ||
	    sa.links != sb.links ||
	    fabs(sa.model_objective - sb.model_objective) >
		    1e-6 * fabs(sb.model_objective) + 1e-5)
		fail_msg("ns %zu nt %zu L %zu k %zu: direct %d: %.9f k %zu "
			 "certified %d links %zu; cost scaling %.9f k %zu "
			 "certified %d links %zu", in->c.n_src, in->p.n_tgt,
			 in->p.links, in->p.min_in, sa.direct,
			 sa.model_objective, sa.k_used, sa.certified, sa.links,
			 sb.model_objective, sb.k_used, sb.certified, sb.links);
	check(in, &a, &sa, 0);
	lb_assignment_release(&a);
	lb_assignment_release(&b);
}

static void test_small_direct(void **state)
{
	size_t it, direct = 0, total = 0;
	struct inst in;
	struct lb_assignment a = { 0 };
	struct lb_assign_stats st;
	struct lb_error err;

	(void)state;
	for (it = 0; it < 1800; it++, total++) {
		int same = below(2);
		size_t ns = 1 + below(40), nt = same ? ns : 1 + below(40);

		inst_make(&in, ns, nt, below(9), same, below(4) == 0,
			  below(4) == 0);
		in.p.links = 1 + below(6);
		in.p.min_in = below(4);
		in.p.random_completion = below(4) != 0;
		in.p.max_in = below(6) == 0 ? in.p.min_in + 1 + below(3) : 0;
		in.p.seed = (uint64_t)it;
		small_pair(&in, &direct);
		inst_free(&in);
	}
	for (it = 0; it < 600; it++, total++) {
		size_t n = 20 + below(281), L = 2 + below(7);

		site_make(&in, n, 8 + below(20), L, below(6));
		in.p.min_in = it % 4 == 0 ? L : 1 + below(L / 2);
		in.p.dense_limit = below(3) == 0 ? 1 : 0;
		in.p.seed = (uint64_t)it;
		small_pair(&in, &direct);
		inst_free(&in);
	}
	print_message("small sites: %zu of %zu by the direct path\n", direct,
		      total);
	assert_true(direct * 2 > total);
	/* the night benchmark's shape takes it */
	site_make(&in, 100, 24, 4, 3);
	in.p.min_in = 2;
	lb_error_init(&err);
	assert_int_equal(assign_links(&in.c, &in.p, &a, &st, &err), 0);
	assert_true(st.direct);
	assert_true(st.certified);
	lb_assignment_release(&a);
	inst_free(&in);
}

/*
 * Warm start: tonight's instance (1 % of the rows drawn again) solved
 * from yesterday's bonuses gives the cold solve's objective, certified,
 * in hub and in dense mode; a page that is new (NAN) starts at 0.
 */
static void test_warm_start(void **state)
{
	size_t it;

	(void)state;
	for (it = 0; it < 6; it++) {
		struct inst in;
		struct lb_assignment a = { 0 }, b = { 0 }, c = { 0 };
		struct lb_assign_stats sa, sb, sc;
		struct lb_error err;
		size_t n = it < 3 ? 1000 + below(200) : 60 + below(100);
		size_t L = 4 + below(5), s, j;
		double *warm;

		site_make(&in, n, 12, L, 3);
		in.p.min_in = L - it % 2;	/* k = L and k < L */
		in.p.seed = it;
		lb_error_init(&err);
		assert_int_equal(assign_links(&in.c, &in.p, &a, &sa, &err), 0);
		assert_true(sa.certified);
		assert_false(sa.warm);
		assert_int_equal(a.n_tgt, n);
		warm = malloc(n * sizeof(double));
		for (j = 0; j < n; j++) {
			assert_true(a.bonus[j] >= 0);
			warm[j] = j % 97 == 5 ? NAN : a.bonus[j];
		}
		for (s = 3; s < n; s += 100)
			for (j = 0; j < in.c.m; j++)
				if (in.c.target[s * in.c.m + j] != LB_NO_TARGET)
					in.c.target[s * in.c.m + j] =
						(uint32_t)((s + 1 + below(n - 1)) % n);
		in.p.warm = warm;
		assert_int_equal(assign_links(&in.c, &in.p, &b, &sb, &err), 0);
		in.p.warm = NULL;
		assert_int_equal(assign_links(&in.c, &in.p, &c, &sc, &err), 0);
		assert_true(sb.warm);
		assert_false(sc.warm);
		assert_true(sb.certified && sc.certified);
		assert_int_equal(site_short(&in, &b, &sb), 0);
		if (fabs(sb.model_objective - sc.model_objective) >
		    1e-6 * fabs(sc.model_objective) + 1e-5)
			fail_msg("warm %.9f, cold %.9f (n %zu L %zu)",
				 sb.model_objective, sc.model_objective, n, L);
		free(warm);
		lb_assignment_release(&a);
		lb_assignment_release(&b);
		lb_assignment_release(&c);
		inst_free(&in);
	}
}

/*
 * Threads (issue 17): the links, the bonuses and the figures are the
 * same for threads = 1 and 2, bit for bit, on sites big enough that the
 * parallel loops split (over 1,024 items) (hub mode, and dense mode with a high
 * dense_limit), k = L and k < L, with previous links and a warm start.
 */
static int same_run(const struct lb_assignment *a,
		    const struct lb_assign_stats *sa,
		    const struct lb_assignment *b,
		    const struct lb_assign_stats *sb)
{
	size_t i;

	if (a->n_src != b->n_src || a->l != b->l || a->n_tgt != b->n_tgt)
		return 0;
	for (i = 0; i < a->n_src * a->l; i++)
		if (a->links[i].target != b->links[i].target ||
		    a->links[i].type != b->links[i].type ||
		    memcmp(&a->links[i].score, &b->links[i].score,
			   sizeof(float)) != 0)
			return 0;
	if (a->n_tgt > 0 &&
	    memcmp(a->bonus, b->bonus, a->n_tgt * sizeof(double)) != 0)
		return 0;
	return memcmp(&sa->objective, &sb->objective, sizeof(double)) == 0 &&
	       memcmp(&sa->model_objective, &sb->model_objective,
		      sizeof(double)) == 0 &&
	       sa->min_in == sb->min_in && sa->max_in == sb->max_in &&
	       sa->lifted == sb->lifted && sa->random_links == sb->random_links &&
	       sa->k_used == sb->k_used && sa->certified == sb->certified &&
	       sa->churn == sb->churn && sa->augmentations == sb->augmentations &&
	       sa->explicit_sources == sb->explicit_sources &&
	       sa->rounds == sb->rounds;
}

static void test_threads_identical(void **state)
{
	size_t it, runs = getenv("SITE_SWEEP") ? 200u : 12u;

	(void)state;
	for (it = 0; it < runs; it++) {
		struct inst in;
		struct lb_assignment a = { 0 }, b = { 0 };
		struct lb_assign_stats sa, sb;
		struct lb_error err;
		size_t n = 1100 + below(500), L = 4 + below(5), j;
		uint32_t *prev = NULL;
		double *warm = NULL;

		site_make(&in, n, 10 + below(14), L, 2 + below(8));
		in.p.seed = it;
		if (it % 3 == 1)
			in.p.min_in = L - 1 - below(2);
		if (it % 4 == 3)
			in.p.dense_limit = (size_t)1 << 30;	/* dense */
		lb_error_init(&err);
		if (it % 2 == 1) {
			/* a night: yesterday's links and bonuses */
			in.p.threads = 1;
			assert_int_equal(assign_links(&in.c, &in.p, &a, &sa,
						      &err), 0);
			prev = malloc(n * L * sizeof(uint32_t));
			warm = malloc(n * sizeof(double));
			for (j = 0; j < n * L; j++)
				prev[j] = a.links[j].target;
			for (j = 0; j < n; j++)
				warm[j] = j % 53 == 7 ? NAN : a.bonus[j];
			lb_assignment_release(&a);
			for (j = 5; j < n; j += 100)
				in.c.target[j * in.c.m] =
					(uint32_t)((j + 1 + below(n - 1)) % n);
			in.p.prev = prev;
			in.p.prev_l = L;
			in.p.stability_bonus = 0.01;
			in.p.warm = warm;
		}
		in.p.threads = 1;
		assert_int_equal(assign_links(&in.c, &in.p, &a, &sa, &err), 0);
		in.p.threads = 2;
		assert_int_equal(assign_links(&in.c, &in.p, &b, &sb, &err), 0);
		assert_int_equal(sa.threads, 1);
		assert_int_equal(sb.threads, 2);
		assert_true(sa.certified);
		if (!same_run(&a, &sa, &b, &sb))
			fail_msg("site %zu (n %zu, L %zu, k %zu): threads 1 and 2 "
				 "differ: objective %.9f / %.9f, min in %zu / "
				 "%zu", it, n, L, in.p.min_in, sa.objective,
				 sb.objective, sa.min_in, sb.min_in);
		lb_assignment_release(&a);
		lb_assignment_release(&b);
		in.p.prev = NULL;
		in.p.warm = NULL;
		free(prev);
		free(warm);
		inst_free(&in);
	}
}

/*
 * A night on a site of site_make(): of yesterday's n pages, `ch` change,
 * a third deleted (gone from every row), a third new (appended, drawn
 * like the others, in nobody's list but the edited rows'), a third with
 * a new candidate list. Yesterday's links and bonuses (a) are mapped to
 * tonight's pages as the pipeline maps them by URL: prev (L a source)
 * and warm (NAN for a new page). Tonight's instance replaces `in`.
 */
static void night_make(struct inst *in, const struct lb_assignment *a,
		       size_t ch, uint32_t **prev_out, double **warm_out)
{
	size_t n = in->c.n_src, m = in->c.m, L = in->p.links, s, j, k = 0;
	size_t nd = ch / 3, nn = ch / 3, ne = ch - nd - nn, n1;
	uint32_t *map = malloc((n + 1) * sizeof(uint32_t)), *prev;
	char *del = calloc(n + 1, 1), *edit;
	double *warm;
	struct lb_candidates c;

	for (j = 0; j < nd;) {
		s = below(n);
		if (!del[s]) {
			del[s] = 1;
			j++;
		}
	}
	for (s = 0; s < n; s++)
		map[s] = del[s] ? LB_NO_TARGET : (uint32_t)k++;
	n1 = k + nn;
	edit = calloc(n1 + 1, 1);
	for (s = k; s < n1; s++)
		edit[s] = 1;
	for (j = 0; j < ne;) {
		s = below(k);
		if (!edit[s]) {
			edit[s] = 1;
			j++;
		}
	}
	assert_int_equal(lb_candidates_init(&c, n1, m), 0);
	prev = malloc((n1 * L + 1) * sizeof(uint32_t));
	warm = malloc((n1 + 1) * sizeof(double));
	for (j = 0; j < n1 * L; j++)
		prev[j] = LB_NO_TARGET;
	for (s = 0; s < n1; s++)
		warm[s] = NAN;
	for (s = 0; s < n; s++) {
		uint32_t t1 = map[s];
		size_t got = 0;

		if (t1 == LB_NO_TARGET)
			continue;
		warm[t1] = a->bonus[s];
		for (j = 0; j < L; j++) {
			uint32_t t = a->links[s * L + j].target;

			if (t != LB_NO_TARGET && map[t] != LB_NO_TARGET)
				prev[t1 * L + got++] = map[t];
		}
		if (edit[t1])
			continue;
		got = 0;
		for (j = 0; j < m; j++) {
			uint32_t t = in->c.target[s * m + j];

			if (t == LB_NO_TARGET || map[t] == LB_NO_TARGET)
				continue;
			c.target[t1 * m + got] = map[t];
			c.score[t1 * m + got++] = in->c.score[s * m + j];
		}
	}
	for (s = 0; s < n1; s++) {
		float w = 0.95f;
		size_t got = 0, tries = 0;

		if (!edit[s])
			continue;
		while (got < m && tries++ < 50 * m) {
			uint32_t t = (uint32_t)below(n1);

			for (j = 0; j < got; j++)
				if (c.target[s * m + j] == t)
					break;
			if (t == s || j < got)
				continue;
			w -= (float)below(1000) / 40000.0f;
			c.target[s * m + got] = t;
			c.score[s * m + got++] = w;
		}
	}
	lb_candidates_release(&in->c);
	in->c = c;
	in->self = realloc(in->self, (n1 + 1) * sizeof(long));
	for (s = 0; s < n1; s++)
		in->self[s] = (long)s;
	in->p.self = in->self;
	in->p.n_tgt = n1;
	*prev_out = prev;
	*warm_out = warm;
	free(map);
	free(del);
	free(edit);
}

/*
 * With k = L the bonuses are optimal up to a common shift, so yesterday's
 * shifted down until one target is at bonus exactly 0 are as good a
 * start: the night must still be routed (a target at 0 used to send its
 * surplus to Y in phase 0, the router refused the start and the night
 * went to cost scaling: issue 17, assign9) and end at the cold optimum.
 */
static void shifted_night(struct inst *in, const double *warm,
			  const struct lb_assign_stats *cold, size_t it)
{
	struct lb_assignment a = { 0 };
	struct lb_assign_stats sa;
	struct lb_error err;
	size_t t, n = in->c.n_src;	/* sources = targets */
	double *w = malloc((n + 1) * sizeof(double)), lo = INFINITY;

	assert_non_null(w);
	for (t = 0; t < n; t++)
		if (isfinite(warm[t]) && warm[t] < lo)
			lo = warm[t];
	for (t = 0; t < n; t++)
		w[t] = isfinite(warm[t]) ? warm[t] - lo : warm[t];
	in->p.warm = w;
	in->p.threads = 1;
	lb_error_init(&err);
	assert_int_equal(assign_links(&in->c, &in->p, &a, &sa, &err), 0);
	if (!sa.routed || !sa.certified ||
	    fabs(sa.model_objective - cold->model_objective) >
		    1e-6 * fabs(cold->model_objective) + 1e-5)
		fail_msg("night %zu, bonuses shifted to 0: routed %d, "
			 "certified %d, %.9f against cold %.9f", it, sa.routed,
			 sa.certified, sa.model_objective,
			 cold->model_objective);
	in->p.warm = NULL;
	lb_assignment_release(&a);
	free(w);
}

/*
 * Warm re-solve of a night (yesterday's links as the flow, yesterday's
 * bonuses, new pages at the top bonus): on random sites, hub and dense
 * mode, k = L and k < L, the warm solve ends at the cold solve's
 * objective, certified on the realised links, every page at k, and the
 * same for 1 and 2 threads, bit for bit. In hub mode with k = L the
 * night is routed from yesterday's flow (stats.routed), with no cost
 * scaling (with k < L only when the start is balanced at Y); in dense
 * mode, never.
 */
static void test_warm_night(void **state)
{
	size_t it, runs = getenv("SITE_SWEEP") ? 300u : 12u, rounds = 0;

	(void)state;
	for (it = 0; it < runs; it++) {
		struct inst in;
		struct lb_assignment a = { 0 }, b = { 0 }, c = { 0 };
		struct lb_assign_stats sa, sb, sc;
		struct lb_error err;
		/* hub mode above 256 pages (dense_limit 2^16 pairs) */
		size_t n = it % 4 == 3 ? 80 + below(120) : 400 + below(400);
		size_t L = 4 + below(5);
		uint32_t *prev = NULL;
		double *warm = NULL;

		site_make(&in, n, 10 + below(14), L, 2 + below(6));
		in.p.seed = it;
		if (it % 3 == 1)
			in.p.min_in = L - 1 - below(2);
		lb_error_init(&err);
		assert_int_equal(assign_links(&in.c, &in.p, &a, &sa, &err), 0);
		assert_true(sa.certified);
		night_make(&in, &a, 3 + below(n / 20), &prev, &warm);
		lb_assignment_release(&a);
		in.p.prev = prev;
		in.p.prev_l = L;
		in.p.stability_bonus = it % 2 ? 0.01 : 0;
		in.p.threads = 1;
		assert_int_equal(assign_links(&in.c, &in.p, &c, &sc, &err), 0);
		in.p.warm = warm;
		assert_int_equal(assign_links(&in.c, &in.p, &a, &sa, &err), 0);
		in.p.threads = 2;
		assert_int_equal(assign_links(&in.c, &in.p, &b, &sb, &err), 0);
		assert_true(sa.warm && !sc.warm);
		if (!sa.certified || !sc.certified ||
		    fabs(sa.model_objective - sc.model_objective) >
			    1e-6 * fabs(sc.model_objective) + 1e-5)
			fail_msg("night %zu (n %zu, L %zu, k %zu): warm %.9f "
				 "certified %d, cold %.9f certified %d", it,
				 in.c.n_src, L, in.p.min_in, sa.model_objective,
				 sa.certified, sc.model_objective, sc.certified);
		if (in.p.min_in == L)
			assert_int_equal(site_short(&in, &a, &sa), 0);
		if (!same_run(&a, &sa, &b, &sb))
			fail_msg("night %zu: warm with threads 1 and 2 differs",
				 it);
		/* hub mode, k = L: the night's router, not cost scaling */
		if ((n > 256 && in.p.min_in == L && !sa.routed) ||
		    (n <= 256 && sa.routed))
			fail_msg("night %zu (n %zu, L %zu, k %zu): routed %d",
				 it, n, L, in.p.min_in, sa.routed);
		/* step 3 (the rounds through the hubs) must run on some of
		 * these nights, or the checks above never reach it */
		if (sa.routed && sa.night_settled == 0)
			fail_msg("night %zu: routed with no node settled", it);
		rounds += sa.night_halves > 0;
		if (n > 256 && in.p.min_in == L)
			shifted_night(&in, warm, &sc, it);
		lb_assignment_release(&a);
		lb_assignment_release(&b);
		lb_assignment_release(&c);
		free(prev);
		free(warm);
		inst_free(&in);
	}
	/* 6 of the 12 nights (153 of 300 with SITE_SWEEP) */
	assert_true(rounds >= runs / 4);
}

/*
 * A site shaped like the real ones of issue 17c: pages drawn around a few
 * topics (unit vectors, center + sigma * noise), each page's top-32 by
 * cosine like relate's top-M, sources = targets, k = L = 8 with random
 * links (hub mode: a third of the targets end at the hub's level). On
 * the real vectors of a 200,000-page site the hand-off from cost scaling
 * rebuilt the flow from the bonuses and left 4,138 units to route, one
 * search across the hub's plateau each (36-150 s); here the old hand-off
 * left 18-70 units on each site. The last refine's flow is kept now and
 * its potentials repaired, so nothing is left to route.
 */
static double gauss(void)
{
	double u = ((double)(rnd() >> 11) + 1) / 9007199254740993.0;
	double v = (double)(rnd() >> 11) / 9007199254740992.0;

	return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static void topical_make(struct inst *in, size_t n, size_t topics, size_t d,
			 double sigma)
{
	size_t m = 32, i, j, x, r;
	float *v = malloc(n * d * sizeof(float));
	float *c = malloc(topics * d * sizeof(float));
	float *sc = malloc(n * sizeof(float));

	assert_non_null(v);
	assert_non_null(c);
	assert_non_null(sc);
	memset(in, 0, sizeof(*in));
	for (i = 0; i < topics * d; i++)
		c[i] = (float)gauss();
	for (i = 0; i < n; i++) {
		double nr = 0;

		for (x = 0; x < d; x++) {
			v[i * d + x] = c[(i % topics) * d + x] +
				       (float)(sigma * gauss());
			nr += (double)v[i * d + x] * v[i * d + x];
		}
		for (x = 0; x < d; x++)
			v[i * d + x] = (float)(v[i * d + x] / sqrt(nr));
	}
	assert_int_equal(lb_candidates_init(&in->c, n, m), 0);
	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++) {
			float dot = 0;

			for (x = 0; x < d; x++)
				dot += v[i * d + x] * v[j * d + x];
			sc[j] = j == i ? -INFINITY : dot;
		}
		for (r = 0; r < m; r++) {
			size_t b = 0;

			for (j = 1; j < n; j++)
				if (sc[j] > sc[b])
					b = j;
			in->c.target[i * m + r] = (uint32_t)b;
			in->c.score[i * m + r] = sc[b];
			sc[b] = -INFINITY;
		}
	}
	in->self = malloc(n * sizeof(long));
	assert_non_null(in->self);
	for (i = 0; i < n; i++)
		in->self[i] = (long)i;
	in->p.self = in->self;
	in->p.n_tgt = n;
	in->p.links = 8;
	in->p.min_in = 8;
	in->p.random_completion = 1;
	free(v);
	free(c);
	free(sc);
}

static void test_topical_handoff(void **state)
{
	static const double sigma[] = { 0.2, 0.3, 0.5 };
	size_t it;

	(void)state;
	for (it = 0; it < sizeof(sigma) / sizeof(sigma[0]); it++) {
		struct inst in;
		struct lb_assignment a = { 0 }, b = { 0 };
		struct lb_assign_stats sa, sb;
		struct lb_error err;

		topical_make(&in, 1500, 8, 24, sigma[it]);
		in.p.seed = it;
		in.p.threads = 1;
		lb_error_init(&err);
		assert_int_equal(assign_links(&in.c, &in.p, &a, &sa, &err), 0);
		check(&in, &a, &sa, 0);
		assert_true(sa.certified);
		assert_int_equal(sa.min_in, 8);
		assert_true(sa.random_links > 0);
		if (sa.augmentations != 0)
			fail_msg("sigma %.1f: the hand-off left %zu units to "
				 "route", sigma[it], sa.augmentations);
		in.p.threads = 2;
		assert_int_equal(assign_links(&in.c, &in.p, &b, &sb, &err), 0);
		assert_true(same_run(&a, &sa, &b, &sb));
		lb_assignment_release(&a);
		lb_assignment_release(&b);
		inst_free(&in);
	}
}

static void test_invalid(void **state)
{
	struct inst in;
	struct lb_assignment a = { 0 };
	struct lb_assign_stats st;
	struct lb_error err;

	(void)state;
	inst_make(&in, 3, 3, 2, 0, 0, 0);
	in.p.links = 1;
	in.c.target[0] = 3;	/* out of range */
	in.c.score[0] = 0.5f;
	lb_error_init(&err);
	assert_int_equal(assign_links(&in.c, &in.p, &a, &st, &err), -1);
	assert_int_equal(err.code, LB_EINVALID);
	assert_null(a.links);
	in.c.target[0] = 1;
	in.c.score[0] = NAN;
	lb_error_init(&err);
	assert_int_equal(assign_links(&in.c, &in.p, &a, &st, &err), -1);
	assert_int_equal(err.code, LB_EINVALID);
	inst_free(&in);
}

/* Empty sets and L = 0 are answers, not errors. */
static void test_empty(void **state)
{
	struct inst in;
	struct lb_assignment a = { 0 };
	struct lb_assign_stats st;
	struct lb_error err;

	(void)state;
	inst_make(&in, 4, 0, 2, 0, 0, 0);
	in.p.links = 3;
	in.p.min_in = 2;
	in.p.random_completion = 1;
	lb_error_init(&err);
	assert_int_equal(assign_links(&in.c, &in.p, &a, &st, &err), 0);
	assert_int_equal(st.links, 0);
	lb_assignment_release(&a);
	inst_free(&in);
	inst_make(&in, 0, 5, 2, 0, 0, 0);
	in.p.links = 3;
	in.p.min_in = 2;
	assert_int_equal(assign_links(&in.c, &in.p, &a, &st, &err), 0);
	assert_int_equal(st.min_in, 0);
	lb_assignment_release(&a);
	inst_free(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_vs_glpk),
		cmocka_unit_test(test_infeasible),
		cmocka_unit_test(test_hall),
		cmocka_unit_test(test_reach_reason),
		cmocka_unit_test(test_hub_mode),
		cmocka_unit_test(test_random_completion),
		cmocka_unit_test(test_stability),
		cmocka_unit_test(test_site_k_equals_l),
		cmocka_unit_test(test_site_hub_exact),
		cmocka_unit_test(test_small_direct),
		cmocka_unit_test(test_warm_start),
		cmocka_unit_test(test_threads_identical),
		cmocka_unit_test(test_warm_night),
		cmocka_unit_test(test_topical_handoff),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_empty),
	};

	glp_term_out(GLP_OFF);
	/* ASSIGN_TEST=test_warm_night: one test (cmocka's filter) */
	if (getenv("ASSIGN_TEST") != NULL)
		cmocka_set_test_filter(getenv("ASSIGN_TEST"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
