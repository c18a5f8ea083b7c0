/*
 * ivf_faiss - FAISS IndexIVFFlat (inner product) on the vectors of
 * ivf_bench, with the same nlist, the same training sample size (32
 * points a cell), the same Lloyd iterations (8) and each nprobe given:
 * the peer of the approximate top-M (src/relate/ivf.c). Same-set: the N
 * pages indexed and searched with k = M + 1 (each finds itself). Time =
 * train + add + search, FAISS's own threads (OpenMP); recall@M against
 * ivf_bench's exact lists.
 *
 *   ivf_faiss N D M NLIST EXACT NPROBE...
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFFlat.h>

#include "relate_vec.h"

static double now_s()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 7) {
		fprintf(stderr, "usage: ivf_faiss N D M NLIST EXACT NPROBE...\n");
		return 2;
	}
	size_t n = strtoul(argv[1], NULL, 10), d = strtoul(argv[2], NULL, 10);
	size_t m = strtoul(argv[3], NULL, 10), nlist = strtoul(argv[4], NULL, 10);
	const char *vp = getenv("IVF_BENCH_VECTORS");
	float *v;
	std::vector<uint32_t> ex(n * m);
	FILE *f = fopen(argv[5], "rb");

	if (f == NULL || fread(ex.data(), 4, n * m, f) != n * m) {
		fprintf(stderr, "ivf_faiss: cannot read %s\n", argv[5]);
		return 1;
	}
	fclose(f);
	if (vp && *vp) {
		uint64_t h[2];
		FILE *g = fopen(vp, "rb");

		v = (float *)malloc(n * d * sizeof(float));
		if (g == NULL || fread(h, sizeof(h), 1, g) != 1 ||
		    fread(v, sizeof(float) * d, n, g) != n)
			return fprintf(stderr, "ivf_faiss: cannot read %s\n", vp), 1;
		fclose(g);
	} else {
		v = vec_make(n, d, 1);
	}
	for (int a = 6; a < argc; a++) {
		size_t np = strtoul(argv[a], NULL, 10);
		size_t s = n < 32 * nlist ? n : 32 * nlist, hit = 0, all = 0;
		std::vector<float> dist(n * (m + 1));
		std::vector<faiss::Index::idx_t> lab(n * (m + 1));
		double t0 = now_s();
		faiss::IndexFlatIP q(d);
		faiss::IndexIVFFlat ix(&q, d, nlist, faiss::METRIC_INNER_PRODUCT);

		ix.cp.niter = 8;
		ix.cp.max_points_per_centroid = 32;
		ix.train(s == n ? n : s, v);	/* FAISS samples s itself too */
		ix.add(n, v);
		ix.nprobe = np;
		ix.search(n, v, m + 1, dist.data(), lab.data());
		t0 = now_s() - t0;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < m; j++) {
				uint32_t t = ex[i * m + j];

				if (t == UINT32_MAX)
					continue;
				all++;
				for (size_t k = 0; k < m + 1; k++)
					if (lab[i * (m + 1) + k] == (faiss::Index::idx_t)t) {
						hit++;
						break;
					}
			}
		printf("ivf_faiss: nlist=%zu nprobe=%zu faiss_s=%.3f recall=%.4f\n",
		       nlist, np, t0, (double)hit / (all ? all : 1));
	}
	free(v);
	return 0;
}
