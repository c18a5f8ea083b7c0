/*
 * ivf_bench - the approximate top-M of large sites (src/relate/ivf.c)
 * against the exact one (topm.c), same vectors, same run: time and
 * recall@M, for each nprobe given.
 *
 *   ivf_bench N D M NLIST EXACT_OUT NPROBE...
 *
 * Vectors: relate_vec.h's synthetic pages (N unit vectors around N / 64
 * centres, as relate_speed and the FAISS peers use), or, when
 * IVF_BENCH_VECTORS names a file (u64 n, u64 d, then n x d floats), the
 * first N rows of that file. Same-set (each page against all the others),
 * both cores. The exact lists are written to EXACT_OUT (N x M u32) for
 * ivf_faiss's recall (IVF_BENCH_LISTS=1: the approximate ones too, to
 * EXACT_OUT.NPROBE). Prints key=value lines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "linkbot/relate.h"
#include "../src/relate/relate_int.h"
#include "relate_vec.h"
#include "clock.h"

/* the first n rows of a vectors file, d checked */
static float *load(const char *path, size_t n, size_t d)
{
	FILE *f = fopen(path, "rb");
	uint64_t h[2];
	float *v = malloc(n * d * sizeof(*v));

	if (f == NULL || v == NULL || fread(h, sizeof(h), 1, f) != 1 ||
	    h[0] < n || h[1] != d || fread(v, sizeof(*v) * d, n, f) != n) {
		fprintf(stderr, "ivf_bench: cannot read %zu x %zu from '%s'\n",
			n, d, path);
		exit(1);
	}
	fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	size_t n, d, m, nlist, i, j, k;
	const char *vp = getenv("IVF_BENCH_VECTORS");
	struct lb_candidates ex, ap;
	struct lb_error err;
	double t0, c0;
	float *v;
	FILE *f;
	int a;

	if (argc < 7) {
		fprintf(stderr, "usage: ivf_bench N D M NLIST EXACT_OUT NPROBE...\n");
		return 2;
	}
	n = strtoul(argv[1], NULL, 10);
	d = strtoul(argv[2], NULL, 10);
	m = strtoul(argv[3], NULL, 10);
	nlist = strtoul(argv[4], NULL, 10);
	lb_error_init(&err);
	v = vp && *vp ? load(vp, n, d) : vec_make(n, d, 1);
	if (!(vp && *vp))	/* relate_vec.h's are unit rows already */
		rows_normalize(v, n, d);
	setenv("LINKBOT_IVF", "0", 1);
	t0 = now_s();
	c0 = cpu_s();
	if (relate_topm(v, n, v, n, d, NULL, m, 0, 0, 0, &ex, &err) == -1)
		return fprintf(stderr, "%s\n", err.msg), 1;
	printf("ivf_bench: N=%zu d=%zu M=%zu exact_s=%.3f exact_cpu_s=%.1f\n",
	       n, d, m, now_s() - t0, cpu_s() - c0);
	f = fopen(argv[5], "wb");
	if (f == NULL || fwrite(ex.target, sizeof(*ex.target), n * m, f) !=
			 n * m || fclose(f) != 0)
		return fprintf(stderr, "ivf_bench: cannot write %s\n", argv[5]), 1;
	for (a = 6; a < argc; a++) {
		struct ivf_params p = { nlist, strtoul(argv[a], NULL, 10) };
		size_t hit = 0, all = 0;

		t0 = now_s();
		c0 = cpu_s();
		if (ivf_topm(v, n, v, n, d, NULL, m, 0, 0, 0, &p, &ap,
			     &err) == -1)
			return fprintf(stderr, "%s\n", err.msg), 1;
		t0 = now_s() - t0;
		c0 = cpu_s() - c0;
		for (i = 0; i < n; i++)
			for (j = 0; j < m; j++) {
				uint32_t t = ex.target[i * m + j];

				if (t == LB_NO_TARGET)
					continue;
				all++;
				for (k = 0; k < m; k++)
					if (ap.target[i * m + k] == t) {
						hit++;
						break;
					}
			}
		if (getenv("IVF_BENCH_LISTS") != NULL) {	/* for analysis */
			char path[4096];

			snprintf(path, sizeof(path), "%s.%zu", argv[5], p.nprobe);
			f = fopen(path, "wb");
			if (f == NULL || fwrite(ap.target, 4, n * m, f) != n * m ||
			    fclose(f) != 0)
				return fprintf(stderr, "cannot write %s\n", path), 1;
		}
		printf("ivf_bench: nlist=%zu nprobe=%zu ivf_s=%.3f ivf_cpu_s=%.1f "
		       "recall=%.4f\n", nlist, p.nprobe, t0, c0,
		       (double)hit / (all ? all : 1));
		lb_candidates_release(&ap);
	}
	lb_candidates_release(&ex);
	free(v);
	return 0;
}
