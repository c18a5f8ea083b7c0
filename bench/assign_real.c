/*
 * assign_real - the assignment (src/assign/) on a real site's vectors:
 * the top-M (relate_topm, same set, self excluded; LINKBOT_IVF=0 for
 * the exact one at 200,000 and above) of the vectors that
 * LINKBOT_IVF_DUMP wrote (u64 n, u64 d, then n x d floats), extended
 * (relate_extend) as relate_candidates() does, then
 * assign_links() as the pipeline calls it for a same-set endpoint with
 * random links (src/pipeline/build.c): L = k = 8, cold, one thread.
 *
 *   assign_real VECTORS M L K [CANDIDATES_CACHE]
 *
 * The candidates are read from CANDIDATES_CACHE when it exists (written
 * there otherwise), so that two builds of the solver (before and after a
 * change) are measured on the same lists without paying the top-M twice.
 * ASSIGN_DEBUG=1 logs the solver's steps (phases, deficits). Prints one
 * key=value line. Not part of `make bench`: the vectors are not in the
 * repository (bench/RESULTS.md, issue 17b). Built like bench/ivf.sh's
 * ivf_bench: cc -O2 -Iinclude bench/assign_real.c build/liblinkbot.a
 * and ivf.sh's libraries, plus -lglpk.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linkbot/assign.h"
#include "linkbot/log.h"
#include "linkbot/relate.h"
#include "clock.h"

static int load_cache(const char *path, struct lb_candidates *c, size_t n,
		      size_t m)
{
	FILE *f = path ? fopen(path, "rb") : NULL;
	int ok;

	if (f == NULL)
		return 0;
	ok = lb_candidates_init(c, n, m) == 0 &&
	     fread(c->target, sizeof(*c->target) * m, n, f) == n &&
	     fread(c->score, sizeof(*c->score) * m, n, f) == n;
	fclose(f);
	if (!ok) {
		fprintf(stderr, "assign_real: cannot read '%s'\n", path);
		exit(1);
	}
	return 1;
}

static void save_cache(const char *path, const struct lb_candidates *c)
{
	FILE *f = fopen(path, "wb");

	if (f == NULL ||
	    fwrite(c->target, sizeof(*c->target) * c->m, c->n_src, f) !=
		    c->n_src ||
	    fwrite(c->score, sizeof(*c->score) * c->m, c->n_src, f) !=
		    c->n_src ||
	    fclose(f) != 0)
		fprintf(stderr, "assign_real: cannot write '%s'\n", path);
}

int main(int argc, char **argv)
{
	struct lb_candidates cand = { 0 };
	struct lb_assign_params ap;
	struct lb_assign_stats st;
	struct lb_assignment a = { 0 };
	struct lb_error err = { 0 };
	struct lb_relate_input in = { 0 };
	const struct lb_doc **docs;
	uint64_t h[2];
	size_t n, d, m, i;
	long *self;
	float *v = NULL;
	FILE *f;
	double t0, c0, ts = 0;

	if (argc < 5) {
		fprintf(stderr, "usage: assign_real VECTORS M L K [CACHE]\n");
		return 2;
	}
	log_init(getenv("ASSIGN_DEBUG") ? 2 : 0);
	log_stage("assign");
	f = fopen(argv[1], "rb");
	if (f == NULL || fread(h, sizeof(h), 1, f) != 1) {
		fprintf(stderr, "assign_real: cannot read '%s'\n", argv[1]);
		return 1;
	}
	n = h[0], d = h[1], m = strtoul(argv[2], NULL, 10);
	self = malloc(n * sizeof(*self));
	if (self == NULL)
		return 1;
	for (i = 0; i < n; i++)
		self[i] = (long)i;
	if (!load_cache(argc > 5 ? argv[5] : NULL, &cand, n, m)) {
		v = malloc(n * d * sizeof(*v));
		if (v == NULL || fread(v, sizeof(*v) * d, n, f) != n) {
			fprintf(stderr, "assign_real: short '%s'\n", argv[1]);
			return 1;
		}
		t0 = now_s();
		if (lb_candidates_init(&cand, n, m) < 0 ||
		    relate_topm(v, n, v, n, d, self, m, 0, n, 2, &cand,
				&err) < 0) {
			fprintf(stderr, "assign_real: top-M: %s\n", err.msg);
			return 1;
		}
		ts = now_s() - t0;
		free(v);
		/* the pipeline extends the lists (relate_candidates()); same
		 * set: only in's counts and the identity of src and tgt count */
		in.src = in.tgt = docs = calloc(n, sizeof(*docs));
		in.n_src = in.n_tgt = n;
		in.self = self;
		if (docs == NULL || relate_extend(&cand, &in, &err) < 0) {
			fprintf(stderr, "assign_real: extend: %s\n", err.msg);
			return 1;
		}
		free(docs);
		if (argc > 5)
			save_cache(argv[5], &cand);
	}
	fclose(f);
	memset(&ap, 0, sizeof(ap));
	ap.n_tgt = n;
	ap.links = strtoul(argv[3], NULL, 10);
	ap.min_in = strtoul(argv[4], NULL, 10);
	ap.random_completion = 1;
	ap.seed = 1;
	ap.self = self;
	ap.threads = 1;
	t0 = now_s(), c0 = cpu_s();
	if (assign_links(&cand, &ap, &a, &st, &err) < 0) {
		fprintf(stderr, "assign_real: %s\n", err.msg);
		return 1;
	}
	printf("assign_real: N=%zu M=%zu L=%zu k=%zu topm_s=%.1f "
	       "seconds=%.2f cpu=%.2f objective=%.6f model_objective=%.6f "
	       "certified=%d "
	       "min_in=%zu max_in=%zu random=%zu augmentations=%zu\n",
	       n, m, ap.links, ap.min_in, ts, now_s() - t0, cpu_s() - c0,
	       st.objective, st.model_objective, st.certified, st.min_in,
	       st.max_in,
	       st.random_links, st.augmentations);
	lb_assignment_release(&a);
	lb_candidates_release(&cand);
	free(self);
	return 0;
}
