// SPDX-License-Identifier: MIT
/*
 * Measurements and their percentiles (see samples.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "samples.h"

int samples_add(struct samples *s, double x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		double *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void samples_sort(struct samples *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(double), cmp_double);
}

double samples_percentile(const struct samples *s, double p)
{
	size_t rank = (size_t)ceil(p / 100.0 * (double)s->n);

	if (s->n == 0)
		return 0;
	if (rank > s->n)
		rank = s->n;
	return s->v[rank ? rank - 1 : 0];
}

void samples_finish(struct samples *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
