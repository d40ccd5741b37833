// SPDX-License-Identifier: MIT
/*
 * Tests of split virtqueues served from guest memory (virtqueue.h): the
 * rings are built in a memfd "guest memory" as a guest driver builds them,
 * and every chain a hostile guest could write is tried: loops, indices
 * out of range, nested or unnegotiated indirect tables, readable buffers
 * after writable ones, buffers outside memory, an avail index that jumps,
 * more buffers than an element holds. A second fixture has two adjacent
 * regions, so that a buffer across them becomes two iovecs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <fcntl.h>

#include "worker/vhost-user/guest_mem.h"
#include "worker/vhost-user/virtqueue.h"

#define MEM_SIZE (1u << 20)
#define NUM	 8u
#define DESC	 0x1000u /* gpa (= uva) of the descriptor table */
#define AVAIL	 0x2000u
#define USED	 0x3000u
#define INDIRECT 0x4000u
#define BUFS	 0x10000u

#define F_NEXT	   1
#define F_WRITE	   2
#define F_INDIRECT 4

struct desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags, next;
};

struct fixture {
	struct guest_mem *mem;
	uint8_t *g; /* the guest's view of its memory */
	struct virtqueue vq;
	uint16_t avail_idx;
};

/*
 * Guest memory of MEM_SIZE bytes at gpa = uva = 0, as one region or as
 * @nregions adjacent ones (each a slice of the same memfd).
 */
static struct fixture *make(size_t nregions)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int fd = memfd_create("guest", MFD_CLOEXEC);
	struct guest_mem_region r[2];
	int fds[2];
	uint64_t slice = MEM_SIZE / nregions;

	assert_non_null(f);
	assert_true(fd >= 0);
	assert_true(nregions >= 1 && nregions <= 2);
	assert_int_equal(ftruncate(fd, MEM_SIZE), 0);
	f->g = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(f->g != MAP_FAILED);
	for (size_t i = 0; i < nregions; i++) {
		r[i] = (struct guest_mem_region){i * slice, slice, i * slice, i * slice};
		fds[i] = i ? dup(fd) : fd;
	}
	f->mem = guest_mem_create();
	assert_int_equal(guest_mem_set(f->mem, r, fds, nregions), 0);
	virtqueue_init(&f->vq);
	f->vq.num = NUM;
	f->vq.desc_uva = DESC;
	f->vq.avail_uva = AVAIL;
	f->vq.used_uva = USED;
	assert_int_equal(virtqueue_map(&f->vq, f->mem), 0);
	f->vq.started = f->vq.enabled = true;
	return f;
}

static int set_up(void **state)
{
	*state = make(1);
	return 0;
}

/* The memory as two regions of MEM_SIZE / 2, meeting at BOUNDARY. */
#define BOUNDARY (MEM_SIZE / 2)

static int set_up_two_regions(void **state)
{
	*state = make(2);
	return 0;
}

static int tear_down(void **state)
{
	struct fixture *f = *state;

	virtqueue_finish(&f->vq);
	guest_mem_destroy(f->mem);
	munmap(f->g, MEM_SIZE);
	free(f);
	return 0;
}

static struct desc *desc_table(struct fixture *f, uint32_t at)
{
	return (struct desc *)(f->g + at);
}

static uint16_t *avail(struct fixture *f)
{
	return (uint16_t *)(f->g + AVAIL);
}

/* The guest offers chain @head. */
static void offer(struct fixture *f, uint16_t head)
{
	avail(f)[2 + f->avail_idx % NUM] = head;
	avail(f)[1] = ++f->avail_idx;
}

static int pop(struct fixture *f, struct virtqueue_elem *e)
{
	return virtqueue_pop(&f->vq, f->mem, e);
}

static void an_empty_ring_gives_nothing(void **state)
{
	struct fixture *f = *state;
	struct virtqueue_elem *e = malloc(sizeof(*e));

	assert_int_equal(pop(f, e), 0);
	free(e);
}

static void a_request_and_its_answer_buffer_come_as_iovecs(void **state)
{
	struct fixture *f = *state;
	struct desc *d = desc_table(f, DESC);
	struct virtqueue_elem *e = malloc(sizeof(*e));
	char got[8];
	uint32_t used_id, used_len;

	memcpy(f->g + BUFS, "request", 8);
	d[3] = (struct desc){BUFS, 8, F_NEXT, 5};
	d[5] = (struct desc){BUFS + 0x100, 24, F_WRITE, 0};
	offer(f, 3);
	assert_int_equal(pop(f, e), 1);
	assert_int_equal(e->head, 3);
	assert_int_equal(e->out_n, 1);
	assert_int_equal(e->in_n, 1);
	assert_int_equal(virtqueue_elem_out_size(e), 8);
	assert_int_equal(virtqueue_elem_in_size(e), 24);
	assert_int_equal(virtqueue_elem_read(e, got, sizeof(got)), 8);
	assert_memory_equal(got, "request", 8);
	assert_int_equal(virtqueue_elem_write(e, "answer", 7), 7);
	assert_memory_equal(f->g + BUFS + 0x100, "answer", 7);
	virtqueue_push(&f->vq, e->head, 7);
	memcpy(&used_id, f->g + USED + 4, 4);
	memcpy(&used_len, f->g + USED + 8, 4);
	assert_int_equal(used_id, 3);
	assert_int_equal(used_len, 7);
	assert_int_equal(((uint16_t *)(f->g + USED))[1], 1);
	assert_int_equal(pop(f, e), 0);
	free(e);
}

static void indirect_tables_are_followed_only_when_negotiated(void **state)
{
	struct fixture *f = *state;
	struct desc *d = desc_table(f, DESC), *ind = desc_table(f, INDIRECT);
	struct virtqueue_elem *e = malloc(sizeof(*e));

	ind[0] = (struct desc){BUFS, 16, F_NEXT, 1};
	ind[1] = (struct desc){BUFS + 0x100, 16, F_WRITE, 0};
	d[0] = (struct desc){INDIRECT, 2 * 16, F_INDIRECT, 0};
	f->vq.indirect = true;
	offer(f, 0);
	assert_int_equal(pop(f, e), 1);
	assert_int_equal(e->out_n, 1);
	assert_int_equal(e->in_n, 1);
	/* Not negotiated: refused, and the queue stays broken. */
	f->vq.indirect = false;
	offer(f, 0);
	assert_int_equal(pop(f, e), -EINVAL);
	assert_int_equal(pop(f, e), -EINVAL);
	free(e);
}

static const struct {
	const char *description;
	struct desc d[3];   /* descriptors 0..2 of the table */
	struct desc ind[2]; /* an indirect table at INDIRECT */
	uint16_t head;
	int expect;
} bad_chains[] = {
    {"a chain that loops", {{BUFS, 8, F_NEXT, 1}, {BUFS, 8, F_NEXT, 0}}, {{0}}, 0, -EINVAL},
    {"a head beyond the ring", {{BUFS, 8, 0, 0}}, {{0}}, NUM, -EINVAL},
    {"a next beyond the ring", {{BUFS, 8, F_NEXT, NUM + 3}}, {{0}}, 0, -EINVAL},
    {"a readable buffer after a writable one",
     {{BUFS, 8, F_WRITE | F_NEXT, 1}, {BUFS, 8, 0, 0}},
     {{0}},
     0,
     -EINVAL},
    {"a buffer outside guest memory", {{MEM_SIZE - 4, 8, 0, 0}}, {{0}}, 0, -EFAULT},
    {"a buffer at the end of the address space", {{UINT64_MAX - 2, 8, 0, 0}}, {{0}}, 0, -EFAULT},
    {"an indirect table that is not whole descriptors",
     {{INDIRECT, 20, F_INDIRECT, 0}},
     {{0}},
     0,
     -EINVAL},
    {"an empty indirect table", {{INDIRECT, 0, F_INDIRECT, 0}}, {{0}}, 0, -EINVAL},
    {"an indirect table outside memory", {{MEM_SIZE - 16, 32, F_INDIRECT, 0}}, {{0}}, 0, -EFAULT},
    {"a nested indirect table",
     {{INDIRECT, 32, F_INDIRECT, 0}},
     {{INDIRECT, 32, F_INDIRECT, 0}},
     0,
     -EINVAL},
    {"an indirect table that loops",
     {{INDIRECT, 32, F_INDIRECT, 0}},
     {{BUFS, 8, F_NEXT, 1}, {BUFS, 8, F_NEXT, 0}},
     0,
     -EINVAL},
    {"an indirect descriptor chained to another",
     {{INDIRECT, 32, F_INDIRECT | F_NEXT, 1}, {BUFS, 8, 0, 0}},
     {{BUFS, 8, 0, 0}},
     0,
     -EINVAL},
    {"the largest head a guest can write", {{BUFS, 8, 0, 0}}, {{0}}, UINT16_MAX, -EINVAL},
    {"a chain that loops on its second descriptor",
     {{BUFS, 8, F_NEXT, 1}, {BUFS, 8, F_NEXT, 2}, {BUFS, 8, F_NEXT, 1}},
     {{0}},
     0,
     -EINVAL},
    {"a descriptor that points to itself", {{BUFS, 8, F_NEXT, 0}}, {{0}}, 0, -EINVAL},
    {"an indirect descriptor after a direct one",
     {{BUFS, 8, F_NEXT, 1}, {INDIRECT, 16, F_INDIRECT, 0}},
     {{BUFS, 8, 0, 0}},
     0,
     -EINVAL},
    {"a buffer running past the end of memory", {{BUFS, MEM_SIZE, 0, 0}}, {{0}}, 0, -EFAULT},
    {"a writable buffer outside guest memory",
     {{BUFS, 8, F_NEXT, 1}, {MEM_SIZE, 8, F_WRITE, 0}},
     {{0}},
     0,
     -EFAULT},
    {"an indirect table longer than VIRTQUEUE_MAX_INDIRECT",
     {{INDIRECT, (VIRTQUEUE_MAX_INDIRECT + 1) * 16, F_INDIRECT, 0}},
     {{BUFS, 8, 0, 0}},
     0,
     -EINVAL},
    {"an indirect table whose next is beyond it",
     {{INDIRECT, 32, F_INDIRECT, 0}},
     {{BUFS, 8, F_NEXT, 2}, {BUFS, 8, 0, 0}},
     0,
     -EINVAL},
    {"an indirect table with a readable buffer after a writable one",
     {{INDIRECT, 32, F_INDIRECT, 0}},
     {{BUFS, 8, F_WRITE | F_NEXT, 1}, {BUFS, 8, 0, 0}},
     0,
     -EINVAL},
    {"an indirect table with a buffer outside memory",
     {{INDIRECT, 32, F_INDIRECT, 0}},
     {{BUFS, 8, F_NEXT, 1}, {MEM_SIZE - 4, 8, F_WRITE, 0}},
     0,
     -EFAULT},
};

static void every_bad_chain_is_refused_and_breaks_the_queue(void **state)
{
	struct virtqueue_elem *e = malloc(sizeof(*e));

	for (size_t i = 0; i < sizeof(bad_chains) / sizeof(bad_chains[0]); i++) {
		struct fixture *f;
		int r;

		f = make(1);
		f->vq.indirect = true;
		memcpy(desc_table(f, DESC), bad_chains[i].d, sizeof(bad_chains[i].d));
		memcpy(desc_table(f, INDIRECT), bad_chains[i].ind, sizeof(bad_chains[i].ind));
		offer(f, bad_chains[i].head);
		r = pop(f, e);
		if (r != bad_chains[i].expect)
			fail_msg("%s: got %d, expected %d", bad_chains[i].description, r,
				 bad_chains[i].expect);
		assert_true(f->vq.broken);
		/* Broken: every later pop is refused, whatever broke the queue. */
		r = pop(f, e);
		if (r != -EINVAL)
			fail_msg("%s: a second pop got %d", bad_chains[i].description, r);
		tear_down((void **)&f);
	}
	free(e);
}

static void an_avail_index_that_jumps_past_the_ring_is_refused(void **state)
{
	struct fixture *f = *state;
	struct virtqueue_elem *e = malloc(sizeof(*e));

	desc_table(f, DESC)[0] = (struct desc){BUFS, 8, 0, 0};
	avail(f)[1] = NUM + 1;
	assert_int_equal(pop(f, e), -EINVAL);
	assert_true(f->vq.broken);
	/* Setting the index right again does not mend the queue. */
	avail(f)[1] = 1;
	assert_int_equal(pop(f, e), -EINVAL);
	free(e);
}

static void rings_outside_memory_or_misaligned_are_not_mapped(void **state)
{
	struct fixture *f = *state;
	struct virtqueue vq;

	virtqueue_init(&vq);
	vq.num = NUM;
	vq.desc_uva = MEM_SIZE - 16;
	vq.avail_uva = AVAIL;
	vq.used_uva = USED;
	assert_int_equal(virtqueue_map(&vq, f->mem), -EFAULT);
	assert_null(vq.desc);
	vq.desc_uva = DESC;
	vq.avail_uva = MEM_SIZE - 2 * (3 + NUM) + 2; /* used_event past the end */
	assert_int_equal(virtqueue_map(&vq, f->mem), -EFAULT);
	vq.avail_uva = AVAIL;
	vq.used_uva = MEM_SIZE - (6 + 8 * NUM) + 2; /* avail_event past the end */
	assert_int_equal(virtqueue_map(&vq, f->mem), -EFAULT);
	vq.used_uva = USED + 2; /* the used ring is 4-byte aligned */
	assert_int_equal(virtqueue_map(&vq, f->mem), -EFAULT);
	vq.used_uva = USED;
	vq.avail_uva = AVAIL + 1; /* the avail ring is 2-byte aligned */
	assert_int_equal(virtqueue_map(&vq, f->mem), -EFAULT);
	vq.avail_uva = AVAIL;
	assert_int_equal(virtqueue_map(&vq, f->mem), 0);
	vq.num = 6;
	assert_int_equal(virtqueue_map(&vq, f->mem), -EINVAL);
	vq.num = 0;
	assert_int_equal(virtqueue_map(&vq, f->mem), -EINVAL);
	vq.num = VIRTQUEUE_MAX_SIZE * 2;
	assert_int_equal(virtqueue_map(&vq, f->mem), -EINVAL);
	vq.num = VIRTQUEUE_MAX_SIZE; /* 512 KiB of descriptors: still inside */
	assert_int_equal(virtqueue_map(&vq, f->mem), 0);
	virtqueue_finish(&vq);
}

static void ring_accesses_stay_inside_the_size_the_rings_were_mapped_for(void **state)
{
	struct fixture *f = *state;
	struct virtqueue_elem *e = malloc(sizeof(*e));
	uint32_t entry[2];

	/* A size set after mapping (what a started ring must refuse) is
	 * never used to index the mapped rings. */
	f->vq.num = VIRTQUEUE_MAX_SIZE;
	f->vq.used_idx = 30000;
	desc_table(f, DESC)[0] = (struct desc){BUFS, 8, 0, 0};
	offer(f, 0);
	assert_int_equal(pop(f, e), 1);
	virtqueue_push(&f->vq, e->head, 8);
	memcpy(entry, f->g + USED + 4 + 8 * (30000 % NUM), sizeof(entry));
	assert_int_equal(entry[0], 0);
	assert_int_equal(entry[1], 8);
	/* Unmapped (the ring stopped): nothing is read or written. */
	virtqueue_unmap(&f->vq);
	assert_null(f->vq.used);
	assert_int_equal(f->vq.mapped_num, 0);
	offer(f, 0);
	assert_int_equal(pop(f, e), 0);
	virtqueue_push(&f->vq, 0, 8);
	assert_int_equal(*(uint16_t *)(f->g + USED + 2), 30001);
	free(e);
}

static void a_started_ring_refuses_a_new_size_addresses_or_base(void **state)
{
	struct fixture *f = *state;
	int kick = eventfd(0, EFD_CLOEXEC);

	/* The fixture's ring is mapped by hand; start it as SET_VRING_KICK does. */
	f->vq.started = false;
	assert_int_equal(virtqueue_start(&f->vq, f->mem, kick), 0);
	assert_true(f->vq.started);
	assert_int_equal(f->vq.mapped_num, NUM);
	assert_int_equal(virtqueue_set_num(&f->vq, NUM * 2), -EBUSY);
	assert_int_equal(virtqueue_set_addr(&f->vq, DESC, AVAIL, USED + 8), -EBUSY);
	assert_int_equal(virtqueue_set_base(&f->vq, 3), -EBUSY);
	assert_int_equal(f->vq.num, NUM);
	assert_int_equal(f->vq.used_uva, USED);
	assert_int_equal(f->vq.last_avail, 0);
	/* Stopped (GET_VRING_BASE): unmapped, kick fd closed, all may change. */
	assert_int_equal(virtqueue_stop(&f->vq), 0);
	assert_false(f->vq.started);
	assert_null(f->vq.used);
	assert_int_equal(f->vq.kick_fd, -1);
	assert_int_equal(fcntl(kick, F_GETFD), -1);
	assert_int_equal(virtqueue_set_num(&f->vq, 6), -EINVAL);
	assert_int_equal(virtqueue_set_num(&f->vq, NUM * 2), 0);
	assert_int_equal(virtqueue_set_addr(&f->vq, DESC, AVAIL, USED), 0);
	assert_int_equal(virtqueue_set_base(&f->vq, 0), 0);
	/* Restarted at the new size. */
	assert_int_equal(virtqueue_start(&f->vq, f->mem, eventfd(0, EFD_CLOEXEC)), 0);
	assert_int_equal(f->vq.mapped_num, NUM * 2);
	/* A start whose rings are outside memory leaves the ring stopped. */
	virtqueue_stop(&f->vq);
	assert_int_equal(virtqueue_set_addr(&f->vq, MEM_SIZE - 16, AVAIL, USED), 0);
	assert_int_equal(virtqueue_start(&f->vq, f->mem, eventfd(0, EFD_CLOEXEC)), -EFAULT);
	assert_false(f->vq.started);
	assert_int_equal(f->vq.mapped_num, 0);
}

static void a_queue_not_started_or_not_enabled_gives_nothing(void **state)
{
	struct fixture *f = *state;
	struct virtqueue_elem *e = malloc(sizeof(*e));

	desc_table(f, DESC)[0] = (struct desc){BUFS, 8, 0, 0};
	offer(f, 0);
	f->vq.started = false;
	assert_int_equal(pop(f, e), 0);
	f->vq.started = true;
	f->vq.enabled = false;
	assert_int_equal(pop(f, e), 0);
	f->vq.enabled = true;
	assert_int_equal(pop(f, e), 1);
	free(e);
}

static void a_chain_of_several_buffers_is_read_and_written_across_them(void **state)
{
	struct fixture *f = *state;
	struct desc *d = desc_table(f, DESC);
	struct virtqueue_elem *e = malloc(sizeof(*e));
	char got[16], big[20] = {0};

	memcpy(f->g + BUFS, "hello", 5);
	memcpy(f->g + BUFS + 0x100, "abc", 3);
	memcpy(f->g + BUFS + 0x200, "defg", 4);
	d[0] = (struct desc){BUFS, 5, F_NEXT, 6};
	d[6] = (struct desc){BUFS + 0x100, 3, F_NEXT, 2};
	d[2] = (struct desc){BUFS + 0x200, 4, F_NEXT, 7};
	d[7] = (struct desc){BUFS + 0x300, 4, F_WRITE | F_NEXT, 1};
	d[1] = (struct desc){BUFS + 0x400, 8, F_WRITE, 0};
	offer(f, 0);
	assert_int_equal(pop(f, e), 1);
	assert_int_equal(e->out_n, 3);
	assert_int_equal(e->in_n, 2);
	assert_int_equal(virtqueue_elem_out_size(e), 12);
	assert_int_equal(virtqueue_elem_in_size(e), 12);
	/* All of the request, then only as much as the buffer holds. */
	assert_int_equal(virtqueue_elem_read(e, got, sizeof(got)), 12);
	assert_memory_equal(got, "helloabcdefg", 12);
	memset(got, 0, sizeof(got));
	assert_int_equal(virtqueue_elem_read(e, got, 7), 7);
	assert_memory_equal(got, "helloab\0", 8);
	/* An answer spread over both writable buffers, then one too long. */
	assert_int_equal(virtqueue_elem_write(e, "0123456789", 10), 10);
	assert_memory_equal(f->g + BUFS + 0x300, "0123", 4);
	assert_memory_equal(f->g + BUFS + 0x400, "456789", 6);
	assert_int_equal(virtqueue_elem_write(e, big, sizeof(big)), 12);
	free(e);
}

static void a_buffer_across_two_regions_comes_as_two_iovecs(void **state)
{
	struct fixture *f = *state;
	struct desc *d = desc_table(f, DESC);
	struct virtqueue_elem *e = malloc(sizeof(*e));
	char got[8];

	memcpy(f->g + BOUNDARY - 4, "abcdefgh", 8);
	d[0] = (struct desc){BOUNDARY - 4, 8, F_NEXT, 1};
	d[1] = (struct desc){BOUNDARY - 2, 4, F_WRITE, 0};
	offer(f, 0);
	assert_int_equal(pop(f, e), 1);
	assert_int_equal(e->out_n, 2);
	assert_int_equal(e->in_n, 2);
	assert_int_equal(e->out[0].iov_len, 4);
	assert_int_equal(e->out[1].iov_len, 4);
	assert_int_equal(e->in[0].iov_len, 2);
	assert_int_equal(e->in[1].iov_len, 2);
	assert_int_equal(virtqueue_elem_read(e, got, sizeof(got)), 8);
	assert_memory_equal(got, "abcdefgh", 8);
	assert_int_equal(virtqueue_elem_write(e, "WXYZ", 4), 4);
	assert_memory_equal(f->g + BOUNDARY - 4, "abWXYZgh", 8);
	free(e);
}

/* An indirect table of @n readable buffers, each across the region boundary. */
static void offer_crossing_buffers(struct fixture *f, uint32_t n)
{
	struct desc *ind = desc_table(f, INDIRECT);

	for (uint32_t i = 0; i < n; i++)
		ind[i] = (struct desc){BOUNDARY - 8, 16, i + 1 < n ? F_NEXT : 0, (uint16_t)(i + 1)};
	desc_table(f, DESC)[0] = (struct desc){INDIRECT, n * 16, F_INDIRECT, 0};
	offer(f, 0);
}

static void more_buffers_than_an_element_holds_are_refused(void **state)
{
	struct fixture *f = *state;
	struct virtqueue_elem *e = malloc(sizeof(*e));

	f->vq.indirect = true;
	/* Each buffer is two iovecs: VIRTQUEUE_MAX_IOV of them fit exactly. */
	offer_crossing_buffers(f, VIRTQUEUE_MAX_IOV / 2);
	assert_int_equal(pop(f, e), 1);
	assert_int_equal(e->out_n, VIRTQUEUE_MAX_IOV);
	assert_int_equal(virtqueue_elem_out_size(e), 16 * (VIRTQUEUE_MAX_IOV / 2));
	/* One buffer more does not. */
	offer_crossing_buffers(f, VIRTQUEUE_MAX_IOV / 2 + 1);
	assert_int_equal(pop(f, e), -E2BIG);
	assert_true(f->vq.broken);
	free(e);
}

static void the_avail_and_used_indices_wrap_at_65536(void **state)
{
	struct fixture *f = *state;
	struct virtqueue_elem *e = malloc(sizeof(*e));
	uint32_t used_id, used_len;

	desc_table(f, DESC)[0] = (struct desc){BUFS, 8, 0, 0};
	desc_table(f, DESC)[1] = (struct desc){BUFS, 4, 0, 0};
	f->vq.last_avail = UINT16_MAX;
	f->avail_idx = UINT16_MAX;
	avail(f)[1] = UINT16_MAX;
	assert_int_equal(pop(f, e), 0);
	offer(f, 0); /* the guest's index goes from 65535 to 0 */
	offer(f, 1);
	assert_int_equal(avail(f)[1], 1);
	assert_int_equal(pop(f, e), 1);
	assert_int_equal(e->head, 0);
	assert_int_equal(pop(f, e), 1);
	assert_int_equal(e->head, 1);
	assert_int_equal(virtqueue_elem_out_size(e), 4);
	assert_int_equal(pop(f, e), 0);
	f->vq.used_idx = UINT16_MAX;
	virtqueue_push(&f->vq, 1, 3);
	memcpy(&used_id, f->g + USED + 4 + 8 * (UINT16_MAX % NUM), 4);
	memcpy(&used_len, f->g + USED + 8 + 8 * (UINT16_MAX % NUM), 4);
	assert_int_equal(used_id, 1);
	assert_int_equal(used_len, 3);
	assert_int_equal(((uint16_t *)(f->g + USED))[1], 0);
	free(e);
}

static void finishing_a_queue_closes_its_eventfds(void **state)
{
	struct fixture *f = *state;
	int kick = eventfd(0, EFD_CLOEXEC), call = eventfd(0, EFD_CLOEXEC);

	assert_true(kick >= 0 && call >= 0);
	f->vq.kick_fd = kick;
	f->vq.call_fd = call;
	virtqueue_finish(&f->vq);
	assert_int_equal(fcntl(kick, F_GETFD), -1);
	assert_int_equal(fcntl(call, F_GETFD), -1);
	assert_int_equal(f->vq.kick_fd, -1);
	assert_int_equal(f->vq.call_fd, -1);
	assert_false(f->vq.started);
	/* A finished queue has no rings and no call fd: push and notify do nothing. */
	virtqueue_notify(&f->vq);
	virtqueue_push(&f->vq, 0, 0);
}

static uint64_t calls(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) < 0)
		return 0;
	return v;
}

static void the_guest_is_interrupted_unless_it_said_not_to(void **state)
{
	struct fixture *f = *state;

	f->vq.call_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	virtqueue_push(&f->vq, 0, 0);
	virtqueue_notify(&f->vq);
	assert_int_equal(calls(f->vq.call_fd), 1);
	avail(f)[0] = 1; /* VRING_AVAIL_F_NO_INTERRUPT */
	virtqueue_push(&f->vq, 0, 0);
	virtqueue_notify(&f->vq);
	assert_int_equal(calls(f->vq.call_fd), 0);
}

static void with_event_index_avail_event_and_used_event_are_honoured(void **state)
{
	struct fixture *f = *state;
	struct virtqueue_elem *e = malloc(sizeof(*e));
	uint16_t *used_event = &avail(f)[2 + NUM];
	uint16_t avail_event;

	f->vq.event_idx = true;
	f->vq.call_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	/* An empty ring says where the device wants the next kick. */
	memset(f->g + USED + 4 + 8 * NUM, 0xff, 2);
	assert_int_equal(pop(f, e), 0);
	memcpy(&avail_event, f->g + USED + 4 + 8 * NUM, 2);
	assert_int_equal(avail_event, 0);
	desc_table(f, DESC)[0] = (struct desc){BUFS, 8, 0, 0};
	offer(f, 0);
	assert_int_equal(pop(f, e), 1);
	memcpy(&avail_event, f->g + USED + 4 + 8 * NUM, 2);
	assert_int_equal(avail_event, 1);
	/* The guest wants an interrupt once entry 0 is used. */
	*used_event = 0;
	virtqueue_push(&f->vq, 0, 0);
	virtqueue_notify(&f->vq);
	assert_int_equal(calls(f->vq.call_fd), 1);
	/* ... and not again before entry 5. */
	*used_event = 5;
	virtqueue_push(&f->vq, 0, 0);
	virtqueue_notify(&f->vq);
	assert_int_equal(calls(f->vq.call_fd), 0);
	/* Entries 2..5 used: entry 5 is reached, once. */
	for (int i = 0; i < 4; i++)
		virtqueue_push(&f->vq, 0, 0);
	virtqueue_notify(&f->vq);
	assert_int_equal(calls(f->vq.call_fd), 1);
	virtqueue_notify(&f->vq);
	assert_int_equal(calls(f->vq.call_fd), 0);
	free(e);
}

static void gathers_copy_across_buffers(void **state)
{
	uint8_t a[3] = {1, 2, 3}, b[4] = {4, 5, 6, 7}, out[8];
	struct iovec iov[2] = {{a, 3}, {b, 4}};

	assert_int_equal(virtqueue_iov_read(iov, 2, 2, out, 4), 4);
	assert_memory_equal(out, ((uint8_t[]){3, 4, 5, 6}), 4);
	assert_int_equal(virtqueue_iov_read(iov, 2, 5, out, 8), 2);
	assert_int_equal(virtqueue_iov_read(iov, 2, 9, out, 8), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(an_empty_ring_gives_nothing, set_up, tear_down),
	    cmocka_unit_test_setup_teardown(a_request_and_its_answer_buffer_come_as_iovecs, set_up,
					    tear_down),
	    cmocka_unit_test_setup_teardown(indirect_tables_are_followed_only_when_negotiated,
					    set_up, tear_down),
	    cmocka_unit_test(every_bad_chain_is_refused_and_breaks_the_queue),
	    cmocka_unit_test_setup_teardown(an_avail_index_that_jumps_past_the_ring_is_refused,
					    set_up, tear_down),
	    cmocka_unit_test_setup_teardown(rings_outside_memory_or_misaligned_are_not_mapped,
					    set_up, tear_down),
	    cmocka_unit_test_setup_teardown(
		ring_accesses_stay_inside_the_size_the_rings_were_mapped_for, set_up, tear_down),
	    cmocka_unit_test_setup_teardown(a_started_ring_refuses_a_new_size_addresses_or_base,
					    set_up, tear_down),
	    cmocka_unit_test_setup_teardown(a_queue_not_started_or_not_enabled_gives_nothing,
					    set_up, tear_down),
	    cmocka_unit_test_setup_teardown(
		a_chain_of_several_buffers_is_read_and_written_across_them, set_up, tear_down),
	    cmocka_unit_test_setup_teardown(a_buffer_across_two_regions_comes_as_two_iovecs,
					    set_up_two_regions, tear_down),
	    cmocka_unit_test_setup_teardown(more_buffers_than_an_element_holds_are_refused,
					    set_up_two_regions, tear_down),
	    cmocka_unit_test_setup_teardown(the_avail_and_used_indices_wrap_at_65536, set_up,
					    tear_down),
	    cmocka_unit_test_setup_teardown(finishing_a_queue_closes_its_eventfds, set_up,
					    tear_down),
	    cmocka_unit_test_setup_teardown(the_guest_is_interrupted_unless_it_said_not_to, set_up,
					    tear_down),
	    cmocka_unit_test_setup_teardown(
		with_event_index_avail_event_and_used_event_are_honoured, set_up, tear_down),
	    cmocka_unit_test(gathers_copy_across_buffers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
