// SPDX-License-Identifier: MIT
/*
 * period-replay: how closely the period a safety domain's frames follow
 * (scheduler/sched_period.h, sched_period_followed()) keeps to its
 * guest's, on a model of a client starved of the CPU or on releases read
 * from a trace (bench/periods/run.sh; not a test).
 *
 *   period-replay model [SEEDS [LATE_SHARE [WAKE_MS [WORK_MS]]]]
 *   period-replay replay < LINES       ("release_ns true_period_ns" a line)
 *
 * The model is the kind of client test-sched-period's starved case has
 * (with its own figures: there drawing takes 2 to 4.5 ms plus a wake-up,
 * and one frame in 30 is held up), at 60, 30, then 60 Hz
 * (300, 180 and 300 frames, as test-learned-period): frame k is due at k
 * periods; it starts when due or when the frame before is done, whichever
 * is later; its release reaches mediatord after a wake-up (exponential,
 * WAKE_MS on average, default 1); drawing it takes WORK_MS (default 3)
 * times 0.7 to 1.5, plus another wake-up; a share LATE_SHARE (default
 * 0.02) of the frames is held up 20 to 90 ms more. Releases the client
 * missed are left out. SEEDS runs (default 20), each its own seed.
 *
 * Judged, as test-learned-period does: releases from the tenth true
 * period after each change of the true period (and after the first) on.
 * Printed per run and in total: releases judged, those whose followed
 * period is more than 2 % off, rate changes counted (the model has 2),
 * and the model client's own figures, to calibrate it against a real
 * one (its skipped releases, its median and 99th percentile latency).
 * The baseline in the same run is a configured period: the shortest
 * (16.67 ms), which is what a domain without learning judges by.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/sched_period.h"

#define MS	  1e6
#define P60	  16667000ull
#define MAX_LINES 100000u

struct judged {
	unsigned releases, off, base_off;
	uint64_t changes;
};

/* Judges @n releases @t against their true periods @p (see the top). */
static struct judged judge(const uint64_t *t, const uint64_t *p, unsigned n)
{
	struct sched_period e;
	struct judged j = {0};
	uint64_t since = n ? t[0] : 0;

	sched_period_init(&e, P60, 1000000000ull);
	for (unsigned i = 0; i < n; i++) {
		double want = (double)p[i];

		if (i && p[i] != p[i - 1])
			since = t[i];
		sched_period_note(&e, t[i]);
		if (t[i] < since + 10 * p[i])
			continue;
		j.releases++;
		j.off += fabs((double)sched_period_followed(&e) - want) > 0.02 * want;
		j.base_off += fabs((double)P60 - want) > 0.02 * want;
	}
	j.changes = e.changes;
	return j;
}

static double uniform(unsigned *seed, double lo, double hi)
{
	return lo + (hi - lo) * ((double)rand_r(seed) + 0.5) / ((double)RAND_MAX + 1);
}

static double exponential(unsigned *seed, double mean)
{
	return -mean * log(uniform(seed, 0, 1));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One run of the model: its releases in @t, @p; returns how many. */
static unsigned model(unsigned seed, double late_share, double wake, double work, uint64_t *t,
		      uint64_t *p, unsigned *skipped, double *lat)
{
	static const struct {
		uint64_t period;
		unsigned frames;
	} phase[] = {{P60, 300}, {2 * P60, 180}, {P60, 300}};
	double start = 1000 * MS, done = start;
	unsigned n = 0;

	*skipped = 0;
	for (unsigned ph = 0; ph < 3; ph++) {
		double period = (double)phase[ph].period;

		for (unsigned k = 0; k < phase[ph].frames;) {
			double due = start + k * period, begin = due > done ? due : done;
			double release = begin + exponential(&seed, wake) * MS;
			unsigned next;

			if (uniform(&seed, 0, 1) < late_share)
				release += uniform(&seed, 20, 90) * MS;
			done = release +
			       (work * uniform(&seed, 0.7, 1.5) + exponential(&seed, wake)) * MS;
			lat[n] = (done - due) / MS;
			t[n] = (uint64_t)release;
			p[n++] = phase[ph].period;
			next = (unsigned)ceil((done - start) / period);
			if (next <= k)
				next = k + 1;
			*skipped += next - k - 1;
			k = next;
		}
		start += phase[ph].frames * period;
	}
	return n;
}

/* argv[@i] as a number within [@lo, @hi], or @def when absent; false on a bad one. */
static bool arg(int argc, char **argv, int i, double lo, double hi, double def, double *out)
{
	char *end;

	*out = def;
	if (i >= argc)
		return true;
	*out = strtod(argv[i], &end);
	if (end == argv[i] || *end || !(*out >= lo && *out <= hi)) {
		fprintf(stderr, "period-replay: argument %d: \"%s\" is not a number in [%g, %g]\n",
			i, argv[i], lo, hi);
		return false;
	}
	return true;
}

static int run_model(int argc, char **argv)
{
	double seeds_d, late, wake, work;
	unsigned seeds, runs_off = 0;
	static uint64_t t[2000], p[2000];
	static double lat[2000];
	struct judged all = {0};

	if (argc > 6 || !arg(argc, argv, 2, 1, 10000, 20, &seeds_d) ||
	    !arg(argc, argv, 3, 0, 1, 0.02, &late) || !arg(argc, argv, 4, 0, 100, 1, &wake) ||
	    !arg(argc, argv, 5, 0, 100, 3, &work))
		return 2;
	seeds = (unsigned)seeds_d;
	printf("model: late share %.3f, wake-up %.2f ms, drawing %.2f ms; %u runs\n", late, wake,
	       work, seeds);
	for (unsigned s = 1; s <= seeds; s++) {
		unsigned skipped, n = model(s, late, wake, work, t, p, &skipped, lat);
		struct judged j = judge(t, p, n);

		qsort(lat, n, sizeof(lat[0]), cmp_double);
		printf("  run %2u: %u releases judged, %u off by more than 2 %% (baseline %u), "
		       "%llu rate changes; client: %u of %u skipped, latency p50 %.1f ms, "
		       "p99 %.1f ms\n",
		       s, j.releases, j.off, j.base_off, (unsigned long long)j.changes, skipped,
		       n + skipped, lat[n / 2], lat[n * 99 / 100]);
		all.releases += j.releases;
		all.off += j.off;
		all.base_off += j.base_off;
		runs_off += j.off > 0;
	}
	printf("total: %u releases judged, %u off by more than 2 %% (%.2f %%), in %u of %u runs; "
	       "baseline (the shortest period configured): %u off (%.2f %%)\n",
	       all.releases, all.off, 100.0 * all.off / (all.releases ? all.releases : 1), runs_off,
	       seeds, all.base_off, 100.0 * all.base_off / (all.releases ? all.releases : 1));
	return 0;
}

static int run_replay(void)
{
	static uint64_t t[MAX_LINES], p[MAX_LINES];
	unsigned long long a, b;
	unsigned n = 0;
	struct judged j;

	while (n < MAX_LINES && scanf("%llu %llu", &a, &b) == 2) {
		if (n && a < t[n - 1]) {
			fprintf(stderr,
				"period-replay: line %u: release %llu before the one above\n",
				n + 1, a);
			return 1;
		}
		t[n] = a;
		p[n++] = b;
	}
	if (n == MAX_LINES && scanf("%llu %llu", &a, &b) == 2) {
		fprintf(stderr, "period-replay: more than %u lines\n", MAX_LINES);
		return 1;
	}
	if (!feof(stdin)) {
		fprintf(stderr, "period-replay: line %u: not \"release_ns true_period_ns\"\n",
			n + 1);
		return 1;
	}
	j = judge(t, p, n);
	printf("replay: %u releases, %u judged, %u off by more than 2 %% (%.2f %%), %llu rate "
	       "changes; baseline (the shortest period configured): %u off\n",
	       n, j.releases, j.off, 100.0 * j.off / (j.releases ? j.releases : 1),
	       (unsigned long long)j.changes, j.base_off);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "model"))
		return run_model(argc, argv);
	if (argc == 2 && !strcmp(argv[1], "replay"))
		return run_replay();
	fprintf(stderr, "usage: period-replay model [SEEDS [LATE_SHARE [WAKE_MS [WORK_MS]]]]\n"
			"       period-replay replay < LINES (\"release_ns true_period_ns\")\n");
	return 2;
}
