// SPDX-License-Identifier: MIT
/*
 * Guest memory regions of a vhost-user device (see guest_mem.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/vhost-user/guest_mem.h"

struct mapped_region {
	struct guest_mem_region r;
	uint8_t *map; /* mmap of [0, mmap_offset + size) of the fd */
	size_t map_size;
};

struct guest_mem {
	struct mapped_region regions[GUEST_MEM_MAX_REGIONS];
	size_t n;
};

struct guest_mem *guest_mem_create(void)
{
	return calloc(1, sizeof(struct guest_mem));
}

static void unmap_all(struct guest_mem *mem)
{
	for (size_t i = 0; i < mem->n; i++)
		munmap(mem->regions[i].map, mem->regions[i].map_size);
	mem->n = 0;
}

void guest_mem_destroy(struct guest_mem *mem)
{
	if (!mem)
		return;
	unmap_all(mem);
	free(mem);
}

/* [a, a + as) and [b, b + bs) overlap; both sizes are non-zero and do not overflow. */
static bool overlap(uint64_t a, uint64_t as, uint64_t b, uint64_t bs)
{
	return a < b + bs && b < a + as;
}

static int check(const struct guest_mem_region *regions, size_t n)
{
	if (n == 0 || n > GUEST_MEM_MAX_REGIONS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const struct guest_mem_region *r = &regions[i];

		if (r->size == 0 || r->gpa + r->size < r->gpa || r->uva + r->size < r->uva ||
		    r->mmap_offset + r->size < r->mmap_offset ||
		    r->mmap_offset + r->size > SIZE_MAX)
			return -EINVAL;
		for (size_t j = 0; j < i; j++) {
			if (overlap(r->gpa, r->size, regions[j].gpa, regions[j].size) ||
			    overlap(r->uva, r->size, regions[j].uva, regions[j].size))
				return -EINVAL;
		}
	}
	return 0;
}

int guest_mem_set(struct guest_mem *mem, const struct guest_mem_region *regions, const int *fds,
		  size_t n)
{
	int r = check(regions, n);

	unmap_all(mem);
	for (size_t i = 0; r == 0 && i < n; i++) {
		struct mapped_region *m = &mem->regions[i];
		size_t size = (size_t)(regions[i].mmap_offset + regions[i].size);
		struct stat st;
		void *p;

		/*
		 * A region past the end of its file would fault (SIGBUS) on
		 * first touch: its size is checked against the file's now.
		 * Only files have a size to check (QEMU's memfd, shm and
		 * hugetlbfs backends are all files); anything else is refused.
		 * Residual risk: a peer that shrinks the file later still makes
		 * the next touch fault. That cannot be prevented without seals
		 * on QEMU's fds (F_SEAL_SHRINK), which QEMU does not set and we
		 * do not own; no signal handler papers over it: the fault ends
		 * this VM's own worker only, mediatord and the other domains go
		 * on.
		 */
		if (fstat(fds[i], &st) < 0) {
			r = -errno;
			break;
		}
		if (!S_ISREG(st.st_mode)) {
			r = -ENODEV;
			break;
		}
		if ((uint64_t)st.st_size < size) {
			r = -ENXIO;
			break;
		}
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[i], 0);
		if (p == MAP_FAILED) {
			r = -errno;
			break;
		}
		m->r = regions[i];
		m->map = p;
		m->map_size = size;
		mem->n = i + 1;
	}
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	if (r < 0)
		unmap_all(mem);
	return r;
}

/* The region holding [addr, addr + len) by gpa (@by_gpa) or uva, or NULL. */
static const struct mapped_region *find(const struct guest_mem *mem, uint64_t addr, uint64_t len,
					bool by_gpa)
{
	for (size_t i = 0; i < mem->n; i++) {
		const struct mapped_region *m = &mem->regions[i];
		uint64_t base = by_gpa ? m->r.gpa : m->r.uva;

		if (addr >= base && addr - base < m->r.size && len <= m->r.size - (addr - base))
			return m;
	}
	return NULL;
}

static void *host(const struct mapped_region *m, uint64_t addr, bool by_gpa)
{
	return m->map + m->r.mmap_offset + (addr - (by_gpa ? m->r.gpa : m->r.uva));
}

void *guest_mem_gpa(const struct guest_mem *mem, uint64_t gpa, uint64_t len)
{
	const struct mapped_region *m = find(mem, gpa, len, true);

	return m ? host(m, gpa, true) : NULL;
}

void *guest_mem_uva(const struct guest_mem *mem, uint64_t uva, uint64_t len)
{
	const struct mapped_region *m = find(mem, uva, len, false);

	return m ? host(m, uva, false) : NULL;
}

int guest_mem_iov(const struct guest_mem *mem, uint64_t gpa, uint64_t len, struct iovec *iov, int n,
		  int max)
{
	if (gpa + len < gpa)
		return -EFAULT;
	while (len) {
		const struct mapped_region *m = find(mem, gpa, 1, true);
		uint64_t chunk;

		if (!m)
			return -EFAULT;
		if (n >= max)
			return -E2BIG;
		chunk = m->r.size - (gpa - m->r.gpa);
		if (chunk > len)
			chunk = len;
		iov[n].iov_base = host(m, gpa, true);
		iov[n].iov_len = (size_t)chunk;
		n++;
		gpa += chunk;
		len -= chunk;
	}
	return n;
}
