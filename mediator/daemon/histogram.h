// SPDX-License-Identifier: MIT
/*
 * A histogram of durations with fixed buckets, for `mediatorctl metrics`
 * (Prometheus' histogram: cumulative buckets by upper bound, a count and a
 * sum). The bounds suit GPU groups, grant waits and 60 Hz frames: from
 * 100 us to 1 s, with 16.667 ms (a 60 Hz period) among them. Embedded by
 * its owner (zeroed is empty). Main thread.
 */
#ifndef MEDIATOR_HISTOGRAM_H
#define MEDIATOR_HISTOGRAM_H

#include <stdint.h>

#define HISTOGRAM_BUCKETS 14 /* the last one is +Inf */

/* The buckets' upper bounds in ns; the last is UINT64_MAX (+Inf). */
extern const uint64_t histogram_le_ns[HISTOGRAM_BUCKETS];

struct histogram {
	uint64_t buckets[HISTOGRAM_BUCKETS]; /* per bucket, not cumulative */
	uint64_t count;
	uint64_t sum_ns; /* saturates */
};

void histogram_add(struct histogram *h, uint64_t ns);

struct json_object;
/*
 * {"le_us": [finite upper bounds], "buckets": [cumulative counts, one per
 * bound and a last one for +Inf], "count": N, "sum_us": S}: a new
 * reference, or NULL when out of memory.
 */
struct json_object *histogram_to_json(const struct histogram *h);

#endif
