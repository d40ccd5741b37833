// SPDX-License-Identifier: MIT
/*
 * Fixed-bucket histograms of durations (see histogram.h).
 */
#include <json-c/json.h>

#include "daemon/histogram.h"

const uint64_t histogram_le_ns[HISTOGRAM_BUCKETS] = {
    100000,   250000,	500000,	  1000000,   2000000,	4000000,    8000000,
    16667000, 33333000, 66667000, 100000000, 250000000, 1000000000, UINT64_MAX,
};

void histogram_add(struct histogram *h, uint64_t ns)
{
	size_t i = 0;

	while (ns > histogram_le_ns[i])
		i++; /* the last bound is UINT64_MAX */
	h->buckets[i]++;
	h->count++;
	h->sum_ns = h->sum_ns + ns < h->sum_ns ? UINT64_MAX : h->sum_ns + ns;
}

struct json_object *histogram_to_json(const struct histogram *h)
{
	struct json_object *o = json_object_new_object(), *le = json_object_new_array(),
			   *buckets = json_object_new_array();
	uint64_t cumulative = 0;

	if (!o || !le || !buckets) {
		json_object_put(o);
		json_object_put(le);
		json_object_put(buckets);
		return NULL;
	}
	for (size_t i = 0; i < HISTOGRAM_BUCKETS; i++) {
		cumulative += h->buckets[i];
		if (i + 1 < HISTOGRAM_BUCKETS)
			json_object_array_add(
			    le, json_object_new_double((double)histogram_le_ns[i] / 1000.0));
		json_object_array_add(buckets, json_object_new_uint64(cumulative));
	}
	json_object_object_add(o, "le_us", le);
	json_object_object_add(o, "buckets", buckets);
	json_object_object_add(o, "count", json_object_new_uint64(h->count));
	json_object_object_add(o, "sum_us", json_object_new_double((double)h->sum_ns / 1000.0));
	return o;
}
