// SPDX-License-Identifier: MIT
/*
 * A guest's memory, as QEMU shares it with a vhost-user back-end
 * (VHOST_USER_SET_MEM_TABLE): up to GUEST_MEM_MAX_REGIONS regions, each a
 * file descriptor mapped here, known by its guest physical address (what
 * descriptors carry) and by QEMU's own virtual address (what ring
 * addresses carry).
 *
 * Every translation checks that the whole range lies inside one region:
 * the guest controls the addresses, so an address outside the table or a
 * range that runs past a region's end is refused, never followed. A range
 * that crosses from one region into the next is split into one iovec per
 * region (guest_mem_iov()). Main thread only.
 */
#ifndef MEDIATOR_GUEST_MEM_H
#define MEDIATOR_GUEST_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* VHOST_MEMORY_BASELINE_NREGIONS of vhost-user.rst: what SET_MEM_TABLE may carry. */
#define GUEST_MEM_MAX_REGIONS 8

struct guest_mem_region {
	uint64_t gpa;	      /* guest physical address of the first byte */
	uint64_t size;	      /* bytes */
	uint64_t uva;	      /* QEMU's virtual address of the first byte */
	uint64_t mmap_offset; /* where the region starts in its fd */
};

struct guest_mem;

/* An empty table. NULL on allocation failure. */
struct guest_mem *guest_mem_create(void);
/* Unmaps everything. NULL is fine. */
void guest_mem_destroy(struct guest_mem *mem);

/*
 * Replaces the table with @n regions mapped from @fds (one per region; the
 * table takes ownership of every fd, also on failure). Returns 0, or
 * -EINVAL (bad count, empty or overflowing region, overlapping regions),
 * -ENXIO (mmap_offset + size past the end of the region's file: mapping
 * it would fault on first touch), -ENODEV (an fd that is not a file, so
 * its size cannot be checked), or the errno of a failed fstat or mmap; on
 * failure the table is empty.
 */
int guest_mem_set(struct guest_mem *mem, const struct guest_mem_region *regions, const int *fds,
		  size_t n);

/* Host pointer for [@gpa, @gpa + @len) in one region, or NULL. */
void *guest_mem_gpa(const struct guest_mem *mem, uint64_t gpa, uint64_t len);
/* Host pointer for QEMU's virtual range [@uva, @uva + @len) in one region, or NULL. */
void *guest_mem_uva(const struct guest_mem *mem, uint64_t uva, uint64_t len);

/*
 * Appends iovecs for [@gpa, @gpa + @len) to @iov (room for @max, @n used
 * so far), splitting at region boundaries. Returns the new count, or
 * -EFAULT when part of the range is outside the table, -E2BIG when @max
 * is reached.
 */
int guest_mem_iov(const struct guest_mem *mem, uint64_t gpa, uint64_t len, struct iovec *iov, int n,
		  int max);

#endif
