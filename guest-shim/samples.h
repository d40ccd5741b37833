// SPDX-License-Identifier: MIT
/*
 * A growing list of measurements (latencies, group times) and its
 * percentiles, for bench/isolation's clients.
 */
#ifndef GUEST_SHIM_SAMPLES_H
#define GUEST_SHIM_SAMPLES_H

#include <stddef.h>

struct samples {
	double *v;
	size_t n, cap;
};

/* Appends @x; 0, or -1 when out of memory (nothing lost before). */
int samples_add(struct samples *s, double x);
/* Sorts the samples in place (before samples_percentile()). */
void samples_sort(struct samples *s);
/* The @p-th percentile (nearest rank, 0 < @p <= 100) of the sorted samples; 0 if empty. */
double samples_percentile(const struct samples *s, double p);
/* Frees the list; it is empty again. */
void samples_finish(struct samples *s);

#endif
