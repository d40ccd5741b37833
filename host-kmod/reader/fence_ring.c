// SPDX-License-Identifier: MIT
/*
 * Reader of host-kmod's per-CPU fence rings (see fence_ring.h).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fence_ring.h"

struct fence_ring {
	const uint8_t *map;
	size_t size;
	struct gm_fence_header h;
	uint64_t *tail; /* per ring: the next record to read */
};

static const struct gm_fence_ring_header *ring_header(const struct fence_ring *r, uint32_t i)
{
	return (const struct gm_fence_ring_header *)(r->map + r->h.rings_offset +
						     (size_t)i * r->h.ring_stride);
}

static uint64_t head_of(const struct fence_ring *r, uint32_t i)
{
	/* Written by the kernel with a release store after the record. */
	return __atomic_load_n(&ring_header(r, i)->head, __ATOMIC_ACQUIRE);
}

struct fence_ring *fence_ring_open(const void *map, size_t size)
{
	struct fence_ring *r;
	struct gm_fence_header h;
	uint64_t need;

	if (!map || size < sizeof(h))
		return NULL;
	memcpy(&h, map, sizeof(h));
	if (h.magic != GM_FENCE_MAGIC || h.abi_version != GM_FENCE_ABI_VERSION ||
	    h.record_size != sizeof(struct gm_fence_record) || h.nr_rings == 0 ||
	    h.nr_rings > FENCE_RING_MAX_RINGS || h.ring_entries == 0 || h.rings_offset < sizeof(h))
		return NULL;
	need = sizeof(struct gm_fence_ring_header) + (uint64_t)h.ring_entries * h.record_size;
	if (h.ring_stride < need)
		return NULL;
	need = (uint64_t)h.rings_offset + (uint64_t)h.nr_rings * h.ring_stride;
	if (need > size)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->tail = calloc(h.nr_rings, sizeof(*r->tail));
	if (!r->tail) {
		free(r);
		return NULL;
	}
	r->map = map;
	r->size = size;
	r->h = h;
	fence_ring_skip(r);
	return r;
}

void fence_ring_close(struct fence_ring *ring)
{
	if (!ring)
		return;
	free(ring->tail);
	free(ring);
}

void fence_ring_skip(struct fence_ring *ring)
{
	for (uint32_t i = 0; i < ring->h.nr_rings; i++)
		ring->tail[i] = head_of(ring, i);
}

/*
 * The next record of ring @i into @out: 1, or 0 when there is none. Records
 * overwritten before they could be read are skipped and added to *@lost.
 */
static int peek(struct fence_ring *r, uint32_t i, struct gm_fence_record *out, uint64_t *lost)
{
	const struct gm_fence_record *recs =
	    (const struct gm_fence_record *)(ring_header(r, i) + 1);
	uint64_t head = head_of(r, i), n = r->h.ring_entries;

	if (head < r->tail[i]) {
		/* A head that went back: not the kernel's ring any more. Start again. */
		r->tail[i] = head;
		return 0;
	}
	for (;;) {
		if (r->tail[i] == head)
			return 0;
		if (head - r->tail[i] > n) {
			*lost += head - r->tail[i] - n;
			r->tail[i] = head - n;
		}
		memcpy(out, &recs[r->tail[i] % n], sizeof(*out));
		atomic_thread_fence(memory_order_acquire);
		head = head_of(r, i);
		/* Still there after the copy: not overwritten while we read it. */
		if (head - r->tail[i] <= n)
			return 1;
	}
}

size_t fence_ring_read(struct fence_ring *ring, struct gm_fence_record *out, size_t max,
		       uint64_t *lost)
{
	uint64_t lost_here = 0;
	size_t n = 0;

	while (n < max) {
		struct gm_fence_record best, cand;
		int best_ring = -1;

		for (uint32_t i = 0; i < ring->h.nr_rings; i++) {
			if (!peek(ring, i, &cand, &lost_here))
				continue;
			if (best_ring < 0 || cand.time_ns < best.time_ns) {
				best = cand;
				best_ring = (int)i;
			}
		}
		if (best_ring < 0)
			break;
		/* The peeked record stays where it is unless it is the one taken. */
		ring->tail[best_ring]++;
		best.driver[sizeof(best.driver) - 1] = '\0';
		best.timeline[sizeof(best.timeline) - 1] = '\0';
		out[n++] = best;
	}
	if (lost)
		*lost += lost_here;
	return n;
}

void fence_ring_drain(struct fence_ring *ring,
		      void (*fn)(const struct gm_fence_record *rec, void *data), void *data,
		      uint64_t *lost)
{
	struct gm_fence_record buf[64];
	size_t n;

	while ((n = fence_ring_read(ring, buf, 64, lost)) > 0)
		for (size_t i = 0; i < n; i++)
			fn(&buf[i], data);
}
