/*
 * relate_vec.h - the synthetic vectors of the relate speed benchmark,
 * shared by relate_speed.c and relate_faiss.cc so that both measure the
 * same data: n unit vectors of dimension d around n / 64 random centres
 * (pages of a site cluster by topic), from a seed.
 */
#ifndef RELATE_VEC_H
#define RELATE_VEC_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static uint64_t vec_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double vec_gauss(uint64_t *s)
{
	double u = ((vec_rand(s) >> 11) + 0.5) / 9007199254740992.0;
	double v = ((vec_rand(s) >> 11) + 0.5) / 9007199254740992.0;

	return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static float *vec_make(size_t n, size_t d, uint64_t seed)
{
	size_t nc = n / 64 + 1, i, j;
	float *c = (float *)malloc(nc * d * sizeof(float));
	float *v = (float *)malloc(n * d * sizeof(float));

	if (c == NULL || v == NULL)
		abort();
	for (i = 0; i < nc * d; i++)
		c[i] = (float)vec_gauss(&seed);
	for (i = 0; i < n; i++) {
		size_t k = vec_rand(&seed) % nc;
		double s = 0;

		for (j = 0; j < d; j++) {
			v[i * d + j] = c[k * d + j] + 0.8f * (float)vec_gauss(&seed);
			s += (double)v[i * d + j] * v[i * d + j];
		}
		s = 1 / sqrt(s);
		for (j = 0; j < d; j++)
			v[i * d + j] = (float)(v[i * d + j] * s);
	}
	free(c);
	return v;
}

#endif
