// SPDX-License-Identifier: MIT
/*
 * Deadline accounting of a periodic renderer (see frame_stats.h). The
 * latencies of the frames drawn go to a growing sample list; the counters
 * follow the releases.
 */
#include <errno.h>
#include <stdlib.h>

#include "frame_stats.h"
#include "samples.h"

struct frame_stats {
	int64_t t0, period, deadline;
	unsigned long releases;
	unsigned long next; /* the frame to draw now */
	unsigned long skipped, late;
	struct samples latency_us;
};

struct frame_stats *frame_stats_create(int64_t t0_ns, int64_t period_ns, int64_t deadline_ns,
				       unsigned long releases)
{
	struct frame_stats *fs;

	if (period_ns <= 0 || deadline_ns <= 0)
		return NULL;
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return NULL;
	fs->t0 = t0_ns;
	fs->period = period_ns;
	fs->deadline = deadline_ns;
	fs->releases = releases;
	return fs;
}

void frame_stats_destroy(struct frame_stats *fs)
{
	if (!fs)
		return;
	samples_finish(&fs->latency_us);
	free(fs);
}

int64_t frame_stats_release(const struct frame_stats *fs, unsigned long k)
{
	return fs->t0 + (int64_t)k * fs->period;
}

int frame_stats_set_period(struct frame_stats *fs, unsigned long k, int64_t period_ns,
			   int64_t deadline_ns)
{
	if (period_ns <= 0 || deadline_ns <= 0 || k < fs->next)
		return -EINVAL;
	fs->t0 = frame_stats_release(fs, k) - (int64_t)k * period_ns;
	fs->period = period_ns;
	fs->deadline = deadline_ns;
	return 0;
}

long frame_stats_complete(struct frame_stats *fs, unsigned long k, int64_t done_ns)
{
	int64_t latency = done_ns - frame_stats_release(fs, k);
	unsigned long next = k + 1;

	if (k != fs->next || k >= fs->releases)
		return -EINVAL;
	if (samples_add(&fs->latency_us, (double)latency / 1e3))
		return -ENOMEM;
	if (latency > fs->deadline)
		fs->late++;
	/* The first release at or after the completion. */
	if (done_ns > fs->t0) {
		uint64_t first = ((uint64_t)(done_ns - fs->t0) + (uint64_t)fs->period - 1) /
				 (uint64_t)fs->period;

		if (first > next)
			next = first > fs->releases ? fs->releases : (unsigned long)first;
	}
	fs->skipped += next - k - 1;
	fs->next = next;
	return (long)next;
}

void frame_stats_summary(struct frame_stats *fs, struct frame_summary *out)
{
	samples_sort(&fs->latency_us);
	out->drawn = (unsigned long)fs->latency_us.n;
	out->skipped = fs->skipped;
	out->frames = out->drawn + out->skipped;
	out->misses = fs->late + fs->skipped;
	out->p50_us = samples_percentile(&fs->latency_us, 50);
	out->p99_us = samples_percentile(&fs->latency_us, 99);
	out->max_us = samples_percentile(&fs->latency_us, 100);
}
