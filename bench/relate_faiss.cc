/*
 * relate_faiss - FAISS IndexFlatIP search on the vectors of relate_speed
 * (relate_vec.h): the peer of the relate speed benchmark.
 *
 *   relate_faiss N D M
 *
 * Same-set: index the N pages, search them with k = M + 1 (each finds
 * itself), as a caller of FAISS would. Cross-set: index N targets, search
 * N other sources with k = M. Exact search, FAISS's own threads (OpenMP).
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include <sys/resource.h>

#include <faiss/IndexFlat.h>

#include "clock.h"
#include "relate_vec.h"

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	size_t d = argc > 2 ? strtoul(argv[2], NULL, 10) : 256;
	size_t m = argc > 3 ? strtoul(argv[3], NULL, 10) : 32;
	float *s = vec_make(n, d, 1), *t = vec_make(n, d, 2);
	std::vector<float> dist(n * (m + 1));
	std::vector<faiss::Index::idx_t> lab(n * (m + 1));
	double t0, c0, sum;
	size_t i, j;

	{
		faiss::IndexFlatIP ix(d);

		ix.add(n, s);
		t0 = now_s();
		c0 = cpu_s();
		ix.search(n, s, m + 1, dist.data(), lab.data());
		t0 = now_s() - t0;
		c0 = cpu_s() - c0;
		sum = 0;
		for (i = 0; i < n; i++) {
			size_t k = 0;

			for (j = 0; j < m + 1 && k < m; j++)
				if (lab[i * (m + 1) + j] != (faiss::Index::idx_t)i) {
					sum += dist[i * (m + 1) + j];
					k++;
				}
		}
		printf("relate_faiss: same_set_s=%.3f checksum=%.4f "
		       "same_set_cpu_s=%.3f\n", t0, sum, c0);
	}
	{
		faiss::IndexFlatIP ix(d);

		ix.add(n, t);
		t0 = now_s();
		c0 = cpu_s();
		ix.search(n, s, m, dist.data(), lab.data());
		t0 = now_s() - t0;
		c0 = cpu_s() - c0;
		sum = 0;
		for (i = 0; i < n * m; i++)
			sum += dist[i];
		printf("relate_faiss: cross_set_s=%.3f checksum=%.4f "
		       "cross_set_cpu_s=%.3f\n", t0, sum, c0);
	}
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	printf("relate_faiss: peak_rss_mb=%.0f\n", ru.ru_maxrss / 1024.0);
	free(s);
	free(t);
	return 0;
}
