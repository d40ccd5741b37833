// SPDX-License-Identifier: MIT
/*
 * The user-space reader of host-kmod's fence rings (uapi/gm_fence.h):
 * mediatord's workers map /dev/gm_fence read-only and take the dma-fence
 * events the module recorded, each CPU's ring in order, merged by time.
 *
 * The mapping is kernel memory the reader does not trust blindly: the
 * header is checked once (magic, ABI, sizes that fit the mapping), every
 * index is reduced modulo the ring size, and a record is kept only if the
 * ring's head, read again after the copy, shows it was not overwritten
 * meanwhile. Records the reader was too slow for are counted as lost.
 * Not thread-safe: one reader per struct fence_ring.
 */
#ifndef MEDIATOR_FENCE_RING_H
#define MEDIATOR_FENCE_RING_H

#include <stddef.h>
#include <stdint.h>

#include "gm_fence.h"

/* Most rings (CPUs) a mapping may describe. */
#define FENCE_RING_MAX_RINGS 4096u

struct fence_ring;

/*
 * Reads the rings at @map (@size bytes, a read-only mapping of the device
 * or any memory laid out the same way; not owned). NULL when the header is
 * not one this reader understands or the rings do not fit in @size. Reading
 * starts at what is in the rings now (fence_ring_skip()).
 */
struct fence_ring *fence_ring_open(const void *map, size_t size);
/* NULL is fine; the mapping is the caller's. */
void fence_ring_close(struct fence_ring *ring);

/* Forgets every record written so far. */
void fence_ring_skip(struct fence_ring *ring);

/*
 * Copies up to @max new records into @out, oldest first (by time across
 * rings). Adds the records lost since the last call to *@lost (may be
 * NULL). Returns how many were copied.
 */
size_t fence_ring_read(struct fence_ring *ring, struct gm_fence_record *out, size_t max,
		       uint64_t *lost);

/* Calls @fn for every new record, oldest first; lost records are added to *@lost (may be NULL). */
void fence_ring_drain(struct fence_ring *ring,
		      void (*fn)(const struct gm_fence_record *rec, void *data), void *data,
		      uint64_t *lost);

#endif
