// SPDX-License-Identifier: MIT
/*
 * predict-speed: how long one predict + update takes per cost model, and
 * one bound_of + bound_update, over synthetic command groups.
 *
 * Usage: predict-speed [GROUPS]   (default 100000)
 *
 * Prints, per model, the median and 99th percentile in ns of the time to
 * predict a group and learn from its (synthetic) measurement, timed with
 * CLOCK_MONOTONIC around each pair (so the clock read, ~20 ns, is
 * included). The target is a median of at most 5 µs.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "predict.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void synth(struct predict_features *f, double *t)
{
	int draws = (int)(rnd() * 21);

	memset(f, 0, sizeof(*f));
	f->x[PF_GROUP] = 1;
	f->x[PF_DRAWS] = draws;
	f->x[PF_CMDS] = draws + 2;
	f->x[PF_CLEAR_C] = rnd() < 0.5 ? 2e6 * rnd() : 0;
	f->x[PF_VERTICES] = draws * 3000 * rnd();
	f->x[PF_VS_WORK] = f->x[PF_VERTICES] * 20;
	f->x[PF_FRAGMENTS] = draws ? 2e6 * rnd() : 0;
	f->x[PF_FS_ALU_WORK] = f->x[PF_FRAGMENTS] * 12;
	f->x[PF_TRANSFER_BYTES] = rnd() < 0.2 ? 1e5 * rnd() : 0;
	f->content_hash = (uint64_t)(rnd() * 10000);
	*t = 30000 + 200 * f->x[PF_CMDS] + 0.01 * f->x[PF_CLEAR_C] + 2000 * draws +
	     0.5 * f->x[PF_VERTICES] + 0.004 * f->x[PF_FRAGMENTS];
	*t *= 1 + 0.02 * (rnd() - 0.5);
}

static void report(const char *name, uint64_t *ns, size_t n)
{
	qsort(ns, n, sizeof(*ns), cmp_u64);
	printf("%-10s median %6llu ns  p99 %6llu ns  max %8llu ns  (%zu groups)\n", name,
	       (unsigned long long)ns[n / 2], (unsigned long long)ns[n * 99 / 100],
	       (unsigned long long)ns[n - 1], n);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	struct predict_features *f;
	double *t;
	uint64_t *ns;
	volatile double sink = 0;

	if (n == 0) {
		fprintf(stderr, "usage: predict-speed [GROUPS]\n");
		return 2;
	}
	f = malloc(n * sizeof(*f));
	t = malloc(n * sizeof(*t));
	ns = malloc(n * sizeof(*ns));
	if (!f || !t || !ns)
		return 1;
	for (size_t i = 0; i < n; i++)
		synth(&f[i], &t[i]);

	for (size_t k = 0; predict_models[k]; k++) {
		const struct predict_model_ops *ops = predict_models[k];
		struct predict_model *m = ops->create();

		if (!m)
			return 1;
		for (size_t i = 0; i < n; i++) {
			uint64_t t0 = now_ns();
			double p = ops->predict(m, &f[i]);

			ops->update(m, &f[i], t[i]);
			ns[i] = now_ns() - t0;
			sink += p;
		}
		report(ops->name, ns, n);
		ops->destroy(m);
	}
	{
		struct predict_bound *b = predict_bound_create(0.995);

		if (!b)
			return 1;
		for (size_t i = 0; i < n; i++) {
			double p = t[i] * (1 + 0.05 * (rnd() - 0.5));
			uint64_t t0 = now_ns();

			sink += predict_bound_of(b, p);
			predict_bound_update(b, p, t[i], true);
			ns[i] = now_ns() - t0;
		}
		report("bound", ns, n);
		predict_bound_destroy(b);
	}
	free(f);
	free(t);
	free(ns);
	return sink < 0;
}
