/*
 * fillers: links no more related than random pairs are published as
 * random links, every page keeping its k incoming links.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "linkbot/assign.h"
#include "linkbot/fillers.h"
#include "linkbot/relate.h"

/* in-degrees of the n targets; checks no self link and no duplicate */
static void degrees(const struct lb_assignment *a, const long *self,
		    size_t n, size_t *in)
{
	size_t s, j, q;

	memset(in, 0, n * sizeof(*in));
	for (s = 0; s < a->n_src; s++)
		for (j = 0; j < a->l; j++) {
			uint32_t t = a->links[s * a->l + j].target;

			if (t == LB_NO_TARGET)
				break;
			assert_true(t < n);
			if (self)
				assert_int_not_equal((long)t, self[s]);
			for (q = 0; q < j; q++)
				assert_int_not_equal(
					a->links[s * a->l + q].target, t);
			in[t]++;
		}
}

/*
 * A site whose pages all look alike (the same text, one word apart):
 * every score is what random pairs score, so every link is a filler. The
 * old code published them as `related`, score 0.000.
 */
static void test_fillers_alike(void **state)
{
	enum { N = 24, L = 4 };
	struct lb_doc docs[N];
	const struct lb_doc *p[N];
	struct lb_relate_input in = { 0 };
	struct lb_relate_opts o = { .m = 8 };
	struct lb_candidates c;
	struct lb_assign_params ap = { 0 };
	struct lb_assignment a = { 0 };
	struct lb_assign_stats st;
	struct lb_fillers_params fp = { 0 };
	struct lb_fillers_stats fs;
	struct lb_error err;
	size_t i, deg[N];
	long self[N];
	char buf[256];

	(void)state;
	lb_error_init(&err);
	for (i = 0; i < N; i++) {
		lb_doc_init(&docs[i]);
		docs[i].title = strdup("Opening hours of the shop");
		snprintf(buf, sizeof(buf), "The shop opens at nine and closes "
			 "at six, every day of the week. Ref%c%c.",
			 (char)('a' + i % 26), (char)('a' + i / 26));
		docs[i].text = strdup(buf);
		snprintf(buf, sizeof(buf), "https://x.test/shop/%zu/", i);
		docs[i].url = strdup(buf);
		docs[i].language = strdup("en");
		p[i] = &docs[i];
		self[i] = (long)i;
	}
	in.src = in.tgt = p;
	in.n_src = in.n_tgt = N;
	assert_int_equal(relate_candidates(&in, &o, &c, &err), 0);
	assert_true(isfinite(c.random_floor));
	for (i = 0; i < N * 8; i++)
		assert_true(c.target[i] == LB_NO_TARGET ||
			    c.score[i] <= c.random_floor);

	ap.n_tgt = N;
	ap.links = L;
	ap.min_in = L;
	ap.random_completion = 1;
	ap.seed = 7;
	ap.self = self;
	assert_int_equal(assign_links(&c, &ap, &a, &st, &err), 0);
	fp.n_tgt = N;
	fp.min_in = L;
	fp.floor = c.random_floor;
	fp.seed = 7;
	fp.self = self;
	assert_int_equal(fillers_apply(&a, &fp, &fs, &err), 0);
	assert_int_equal(fs.fillers + st.random_links, N * L);
	for (i = 0; i < N * L; i++) {
		assert_int_equal(a.links[i].type, LB_LINK_RANDOM);
		assert_true(a.links[i].score == 0);
	}
	degrees(&a, self, N, deg);
	for (i = 0; i < N; i++)
		assert_true(deg[i] >= L);	/* k still holds */
	lb_assignment_release(&a);
	lb_candidates_release(&c);
	for (i = 0; i < N; i++)
		lb_doc_release(&docs[i]);
}

/* a hand-made assignment: n pages, one set, l links a page */
static void make(struct lb_assignment *a, size_t n, size_t l)
{
	a->n_src = n;
	a->l = l;
	a->links = calloc(n * l, sizeof(*a->links));
	assert_non_null(a->links);
}

static void set(struct lb_assignment *a, size_t s, size_t j, uint32_t t,
		float score)
{
	a->links[s * a->l + j].target = t;
	a->links[s * a->l + j].score = score;
	a->links[s * a->l + j].type = LB_LINK_RELATED;
}

/*
 * A filler on a target with links to spare gets a uniform random target
 * (never the source, never one of its other links); a filler that holds
 * its target at k keeps it (no other such filler to swap with); links
 * above the floor are untouched; rows list related links first.
 */
static void test_fillers_redraw(void **state)
{
	enum { N = 6 };
	struct lb_assignment a = { 0 };
	struct lb_fillers_params fp = { 0 };
	struct lb_fillers_stats fs;
	struct lb_error err;
	long self[N];
	size_t s, deg[N], seen[N] = { 0 };
	uint64_t seed;

	(void)state;
	lb_error_init(&err);
	for (s = 0; s < N; s++)
		self[s] = (long)s;
	fp.n_tgt = N;
	fp.min_in = 1;
	fp.floor = 0.1f;
	fp.self = self;
	for (seed = 1; seed <= 40; seed++) {
		make(&a, N, 2);
		/* target 3 gets 3 links (k = 1): room for two to go */
		set(&a, 0, 0, 3, 0.05f);	/* filler, first in its row */
		set(&a, 0, 1, 1, 0.5f);
		set(&a, 1, 0, 3, 0.5f);
		set(&a, 1, 1, 2, 0.5f);
		set(&a, 2, 0, 3, 0.5f);
		set(&a, 2, 1, 0, 0.5f);
		set(&a, 3, 0, 1, 0.5f);
		set(&a, 3, 1, 5, 0.5f);
		set(&a, 4, 0, 5, 0.5f);
		set(&a, 4, 1, 2, 0.5f);
		/* target 4 has this one link only: a filler holding k */
		set(&a, 5, 0, 0, 0.5f);
		set(&a, 5, 1, 4, 0.1f);	/* at the floor: a filler too */
		fp.seed = seed;
		assert_int_equal(fillers_apply(&a, &fp, &fs, &err), 0);
		assert_int_equal(fs.fillers, 2);
		assert_int_equal(fs.redrawn + fs.shuffled, 2);
		/* row 0: the related link first, then the random one */
		assert_int_equal(a.links[0].target, 1);
		assert_int_equal(a.links[0].type, LB_LINK_RELATED);
		assert_int_equal(a.links[1].type, LB_LINK_RANDOM);
		assert_true(a.links[1].score == 0);
		assert_true(a.links[1].target != 0 && a.links[1].target != 1);
		seen[a.links[1].target]++;
		/* row 5 keeps target 4, typed random, unless row 0's draw
		 * gave target 4 a second link: then it has room and is
		 * drawn anew too */
		if (a.links[1].target != 4) {
			assert_int_equal(fs.shuffled, 1);
			assert_int_equal(a.links[5 * 2 + 1].target, 4);
		} else {
			assert_int_equal(fs.redrawn, 2);
		}
		assert_int_equal(a.links[5 * 2 + 1].type, LB_LINK_RANDOM);
		/* the others untouched */
		for (s = 1; s < 5; s++) {
			assert_int_equal(a.links[s * 2].type, LB_LINK_RELATED);
			assert_int_equal(a.links[s * 2 + 1].type,
					 LB_LINK_RELATED);
		}
		degrees(&a, self, N, deg);
		for (s = 0; s < N; s++)
			assert_true(deg[s] >= 1);
		lb_assignment_release(&a);
	}
	/* uniform over the allowed targets 2, 4, 5 (not 0, the source, nor
	 * 1 and 3, its links): each drawn in 40 seeds */
	assert_true(seen[2] > 0 && seen[4] > 0 && seen[5] > 0);
	assert_true(seen[0] == 0 && seen[1] == 0 && seen[3] == 0);
}

/*
 * Fillers that each hold their target at k: their targets are shuffled
 * among them; every in-degree stays exactly what it was, no self link,
 * no duplicate; the same seed gives the same links.
 */
static void test_fillers_shuffle(void **state)
{
	enum { N = 50, L = 4 };
	struct lb_assignment a = { 0 }, b = { 0 };
	struct lb_fillers_params fp = { 0 };
	struct lb_fillers_stats fs;
	struct lb_error err;
	long self[N];
	size_t s, j, moved = 0, deg[N];

	(void)state;
	lb_error_init(&err);
	make(&a, N, L);
	make(&b, N, L);
	for (s = 0; s < N; s++) {
		self[s] = (long)s;
		for (j = 0; j < L; j++) {
			set(&a, s, j, (uint32_t)((s + 1 + j) % N),
			    0.3f - 0.01f * (float)j);
			set(&b, s, j, (uint32_t)((s + 1 + j) % N),
			    0.3f - 0.01f * (float)j);
		}
	}
	fp.n_tgt = N;
	fp.min_in = L;
	fp.floor = 0.295f;	/* the last three links of each row */
	fp.self = self;
	fp.seed = 99;
	assert_int_equal(fillers_apply(&a, &fp, &fs, &err), 0);
	assert_int_equal(fillers_apply(&b, &fp, &fs, &err), 0);
	assert_int_equal(fs.fillers, N * 3);
	assert_int_equal(fs.redrawn, 0);
	assert_int_equal(fs.shuffled, N * 3);
	assert_memory_equal(a.links, b.links, N * L * sizeof(*a.links));
	degrees(&a, self, N, deg);
	for (s = 0; s < N; s++) {
		assert_int_equal(deg[s], L);
		assert_int_equal(a.links[s * L].type, LB_LINK_RELATED);
		assert_int_equal(a.links[s * L].target, (s + 1) % N);
		for (j = 1; j < L; j++) {
			assert_int_equal(a.links[s * L + j].type,
					 LB_LINK_RANDOM);
			moved += a.links[s * L + j].target !=
				 (uint32_t)((s + 1 + j) % N);
		}
	}
	assert_true(moved > N);	/* shuffled, not left in place */
	/* no floor (an old export): nothing changes */
	fp.floor = -INFINITY;
	memcpy(b.links, a.links, N * L * sizeof(*a.links));
	assert_int_equal(fillers_apply(&a, &fp, &fs, &err), 0);
	assert_int_equal(fs.fillers, 0);
	assert_memory_equal(a.links, b.links, N * L * sizeof(*a.links));
	lb_assignment_release(&a);
	lb_assignment_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fillers_alike),
		cmocka_unit_test(test_fillers_redraw),
		cmocka_unit_test(test_fillers_shuffle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
