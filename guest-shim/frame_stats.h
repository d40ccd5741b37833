// SPDX-License-Identifier: MIT
/*
 * Deadline accounting of a periodic renderer, by its own clock (pure: no
 * GL, no I/O). Frame k is released at t0 + k * period and must complete by
 * its release + deadline. A frame that completes late pushes the renderer
 * past later releases: those frames are skipped (never drawn) and each
 * counts as missed; the next frame drawn is the first released at or
 * after the completion. "frames" counts releases: frames drawn plus
 * releases skipped; latency (completion - release) is over frames drawn.
 *
 * One frame_stats per run, used by one thread.
 */
#ifndef GUEST_SHIM_FRAME_STATS_H
#define GUEST_SHIM_FRAME_STATS_H

#include <stdint.h>

struct frame_stats;

/* What a run (or its part so far) came to; latencies in microseconds. */
struct frame_summary {
	unsigned long frames; /* releases: drawn + skipped */
	unsigned long drawn, skipped;
	unsigned long misses; /* drawn late, plus every release skipped */
	double p50_us, p99_us, max_us;
};

/*
 * A run of @releases frames, one per @period_ns, each due @deadline_ns
 * after its release (both > 0), the first released at @t0_ns
 * (CLOCK_MONOTONIC). NULL on bad arguments or out of memory. The caller
 * frees it with frame_stats_destroy().
 */
struct frame_stats *frame_stats_create(int64_t t0_ns, int64_t period_ns, int64_t deadline_ns,
				       unsigned long releases);
/* NULL is fine. */
void frame_stats_destroy(struct frame_stats *fs);

/* The release time of frame @k. */
int64_t frame_stats_release(const struct frame_stats *fs, unsigned long k);

/*
 * From frame @k on (the frame to draw next, or a later one), frames are
 * released every @period_ns after frame @k's release and are due
 * @deadline_ns after their release (a rate change). 0, or -EINVAL.
 */
int frame_stats_set_period(struct frame_stats *fs, unsigned long k, int64_t period_ns,
			   int64_t deadline_ns);

/*
 * Frame @k, drawn, completed at @done_ns. Records its latency and whether
 * it missed, counts the releases it overran as skipped, and returns the
 * next frame to draw (the first released at or after @done_ns, at least
 * k + 1, at most the run's releases: then the run is over). -EINVAL when
 * @k is not the frame to draw now, -ENOMEM when the record cannot grow.
 */
long frame_stats_complete(struct frame_stats *fs, unsigned long k, int64_t done_ns);

/* The frames recorded so far (nearest-rank percentiles). */
void frame_stats_summary(struct frame_stats *fs, struct frame_summary *out);

#endif
