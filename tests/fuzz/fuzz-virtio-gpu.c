// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: a guest's virtio-gpu queue, everything in it written
 * by the fuzzer, served as vgpu_device serves it: pop a chain, read its
 * request, check it with vgpu_cmd_check(), write an answer, push, notify.
 *
 * Input: byte 0 picks the features and the layout (bit 0 indirect
 * descriptors, bit 1 event index, bit 2 the cursor queue, bits 3-5 the
 * ring size 1..128, bit 6 the memory as two adjacent regions), bytes 1-2
 * the device's avail index to start from; the rest is the start of a
 * 64 KiB guest memory (a memfd, as QEMU shares it) holding the
 * descriptor table at 0x0, the avail ring at 0x800, the used ring at
 * 0xa00 and whatever the descriptors point to. The whole input is also
 * checked as a request of either queue.
 *
 * Guest memory is mmap()ed, where ASan sees no bounds, so every iovec
 * virtqueue_pop() returns is checked here against the regions it may lie
 * in; a request is copied into a buffer of exactly its length, where ASan
 * sees a check that reads past it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "worker/vhost-user/guest_mem.h"
#include "worker/vhost-user/virtio_gpu_cmd.h"
#include "worker/vhost-user/virtqueue.h"

#define MEM_SIZE    (64u << 10)
#define DESC	    0x0u
#define AVAIL	    0x800u
#define USED	    0xa00u
#define HEADER	    3u
#define MAX_REQUEST (256u << 10) /* what this target reads of one request */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t *guest;		 /* the guest's view of its memory */
static struct guest_mem *mem[2]; /* one region, two regions */
static int call_fd = -1;
static struct virtqueue_elem elem;

/* A table of @n regions of the memfd @fd splitting MEM_SIZE evenly. */
static struct guest_mem *table(int fd, size_t n)
{
	struct guest_mem *m = guest_mem_create();
	struct guest_mem_region r[2];
	int fds[2];

	if (!m)
		abort();
	for (size_t i = 0; i < n; i++) {
		uint64_t slice = MEM_SIZE / n;

		r[i] = (struct guest_mem_region){i * slice, slice, i * slice, i * slice};
		fds[i] = dup(fd);
	}
	if (guest_mem_set(m, r, fds, n) < 0)
		abort();
	return m;
}

static void set_up(void)
{
	int fd = memfd_create("guest", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, MEM_SIZE) < 0)
		abort();
	guest = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (guest == MAP_FAILED)
		abort();
	mem[0] = table(fd, 1);
	mem[1] = table(fd, 2);
	close(fd);
	call_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (call_fd < 0)
		abort();
}

/* Whether [p, p + len) lies inside one region of @m. */
static int inside(const struct guest_mem *m, const void *p, size_t len)
{
	for (uint64_t gpa = 0; gpa < MEM_SIZE;) {
		uint64_t slice = m == mem[0] ? MEM_SIZE : MEM_SIZE / 2;
		const uint8_t *base = guest_mem_gpa(m, gpa, slice);

		if (base && (const uint8_t *)p >= base && (const uint8_t *)p <= base + slice &&
		    len <= (size_t)(base + slice - (const uint8_t *)p))
			return 1;
		gpa += slice;
	}
	return 0;
}

/* Every iovec of @e inside guest memory, and no more of them than it holds. */
static void check_elem(const struct guest_mem *m, const struct virtqueue_elem *e)
{
	if (e->out_n < 0 || e->in_n < 0 || e->out_n + e->in_n > VIRTQUEUE_MAX_IOV ||
	    e->out != e->iov || e->in != e->iov + e->out_n)
		__builtin_trap();
	for (int i = 0; i < e->out_n + e->in_n; i++)
		if (!inside(m, e->iov[i].iov_base, e->iov[i].iov_len))
			__builtin_trap();
}

/* Checks @len bytes of @src as a request in a buffer of exactly that size. */
static uint32_t check_copy(const void *src, size_t len, enum vgpu_queue q)
{
	uint8_t *req = malloc(len ? len : 1);
	const char *what = NULL;
	uint32_t r;

	if (!req)
		return 0;
	memcpy(req, src, len);
	r = vgpu_cmd_check(req, len, q, &what);
	if (r && !what)
		__builtin_trap();
	free(req);
	return r;
}

static void serve(const struct guest_mem *m, struct virtqueue *vq, enum vgpu_queue q)
{
	static uint8_t req[MAX_REQUEST];
	int r;

	for (uint32_t i = 0; i < 2 * vq->num + 2; i++) {
		struct virtio_gpu_ctrl_hdr resp = {.type = VIRTIO_GPU_RESP_OK_NODATA};
		size_t len;

		r = virtqueue_pop(vq, m, &elem);
		if (r <= 0)
			break;
		check_elem(m, &elem);
		len = virtqueue_elem_out_size(&elem);
		if (len > MAX_REQUEST)
			len = MAX_REQUEST;
		if (virtqueue_elem_read(&elem, req, len) != len)
			__builtin_trap();
		resp.type = check_copy(req, len, q);
		virtqueue_elem_write(&elem, &resp, sizeof(resp));
		virtqueue_push(vq, elem.head, sizeof(resp));
	}
	virtqueue_notify(vq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtqueue vq;
	enum vgpu_queue q;
	uint64_t calls;
	uint8_t how;

	if (!guest)
		set_up();
	check_copy(data, size, VGPU_QUEUE_CONTROL);
	check_copy(data, size, VGPU_QUEUE_CURSOR);
	if (size < HEADER)
		return 0;
	how = data[0];
	q = (how & 4) ? VGPU_QUEUE_CURSOR : VGPU_QUEUE_CONTROL;
	memset(guest, 0, MEM_SIZE);
	memcpy(guest, data + HEADER, size - HEADER < MEM_SIZE ? size - HEADER : MEM_SIZE);
	virtqueue_init(&vq);
	vq.num = 1u << ((how >> 3) & 7);
	vq.desc_uva = DESC;
	vq.avail_uva = AVAIL;
	vq.used_uva = USED;
	vq.indirect = how & 1;
	vq.event_idx = how & 2;
	vq.last_avail = (uint16_t)(data[1] | data[2] << 8);
	vq.used_idx = vq.last_avail;
	if (virtqueue_map(&vq, mem[(how >> 6) & 1]) < 0)
		__builtin_trap(); /* the rings are always inside */
	vq.started = vq.enabled = true;
	vq.call_fd = call_fd;
	serve(mem[(how >> 6) & 1], &vq, q);
	if (read(call_fd, &calls, sizeof(calls)) < 0) {
		/* No interrupt this time. */
	}
	vq.call_fd = -1; /* kept for the next input */
	virtqueue_finish(&vq);
	return 0;
}
