// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: a guest's rings written by the fuzzer. The input fills
 * the start of a 64 KiB guest memory (a memfd, as QEMU shares it) holding
 * an 8-entry split ring (descriptors at 0x0, avail ring at 0x100, used
 * ring at 0x200) and whatever the descriptors point to; every chain the
 * input offers is popped and answered. virtqueue_pop() must never read or
 * write outside guest memory (run under ASan), whatever the indices,
 * lengths, flags and indirect tables.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "worker/vhost-user/guest_mem.h"
#include "worker/vhost-user/virtqueue.h"

#define MEM_SIZE (64u << 10)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct guest_mem *mem;
static uint8_t *guest;
static struct virtqueue_elem elem;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtqueue vq;

	if (!mem) {
		int fd = memfd_create("guest", 0);
		struct guest_mem_region r = {0, MEM_SIZE, 0, 0};

		if (fd < 0 || ftruncate(fd, MEM_SIZE) < 0)
			return 0;
		guest = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		mem = guest_mem_create();
		if (guest == MAP_FAILED || !mem || guest_mem_set(mem, &r, &fd, 1) < 0)
			return 0;
	}
	memset(guest, 0, 0x400);
	memcpy(guest, data, size < MEM_SIZE ? size : MEM_SIZE);
	virtqueue_init(&vq);
	vq.num = 8;
	vq.desc_uva = 0;
	vq.avail_uva = 0x100;
	vq.used_uva = 0x200;
	vq.indirect = size && (data[0] & 1);
	vq.event_idx = size && (data[0] & 2);
	if (virtqueue_map(&vq, mem) < 0)
		return 0;
	vq.started = vq.enabled = true;
	for (int i = 0; i < 16 && virtqueue_pop(&vq, mem, &elem) > 0; i++) {
		uint8_t buf[64];

		virtqueue_elem_read(&elem, buf, sizeof(buf));
		virtqueue_elem_write(&elem, buf, sizeof(buf));
		virtqueue_push(&vq, elem.head, 8);
	}
	virtqueue_finish(&vq);
	return 0;
}
