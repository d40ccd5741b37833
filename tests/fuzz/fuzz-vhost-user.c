// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: arbitrary bytes as one vhost-user message through
 * vhost_user_check() (and a SET_FEATURES that passes it through the
 * feature negotiation rule, whose result must stay within the offer), and
 * as virtio-gpu requests of both queues through vgpu_cmd_check(). Neither
 * may read outside the message (run under ASan).
 *
 * Input: byte 0 says how many fds came with the message (low nibble,
 * 0..VHOST_USER_MAX_FDS + 1) and how many rings the device has (high
 * nibble, 0..15); the rest is the header and payload. The message is
 * copied into a buffer of exactly VHOST_USER_HDR_SIZE + size bytes, so a
 * check that decides on payload bytes the message does not carry shows
 * as a heap overflow.
 *
 * The same bytes then drive the ring state messages in arbitrary orders
 * (ring_session()): each 8-byte step is one of SET_VRING_NUM, _ADDR,
 * _BASE, _KICK, GET_VRING_BASE (framed and passed through
 * vhost_user_check() as the server does), a guest write into its memory,
 * or a request the guest offers and the device answers. The memory is
 * one 0x2000-byte region, so rings at its end are where an access past
 * a ring's mapped size would fault. After each step the ring state rules
 * of virtqueue.h must hold: a started ring is mapped for exactly its
 * size, a stopped one is not mapped, and a started ring refuses a new
 * size, addresses or base.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "worker/vhost-user/guest_mem.h"
#include "worker/vhost-user/vhost_user.h"
#include "worker/vhost-user/virtqueue.h"
#include "worker/vhost-user/virtio_gpu_cmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RING_MEM 0x2000u

static struct guest_mem *ring_mem;
static uint8_t *ring_guest;
static struct virtqueue_elem ring_elem;

/* The guest memory of ring_session(), made once: one region, gpa = uva = 0. */
static int ring_memory(void)
{
	int fd;
	struct guest_mem_region r = {0, RING_MEM, 0, 0};

	if (ring_mem)
		return 0;
	fd = memfd_create("fuzz-guest", 0);
	if (fd < 0 || ftruncate(fd, RING_MEM) < 0)
		return -1;
	ring_guest = mmap(NULL, RING_MEM, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ring_mem = guest_mem_create();
	if (ring_guest == MAP_FAILED || !ring_mem || guest_mem_set(ring_mem, &r, &fd, 1) < 0)
		return -1;
	return 0;
}

/* The rules of virtqueue.h after every step. */
static void check_ring_rules(const struct virtqueue *vq)
{
	if (vq->started && (vq->mapped_num != vq->num || !vq->used || !vq->avail || !vq->desc))
		__builtin_trap();
	if (!vq->started && (vq->mapped_num || vq->used))
		__builtin_trap();
}

/* One ring message @request with @payload, through the server's check, then applied. */
static void ring_message(struct virtqueue *vq, uint32_t request, const void *payload, uint32_t size,
			 bool with_fd)
{
	struct vhost_user_msg m;
	const char *what = NULL;
	bool started = vq->started;
	int r = 0;

	memset(&m, 0, sizeof(m));
	m.request = request;
	m.flags = VHOST_USER_VERSION;
	m.size = size;
	memcpy(&m.payload, payload, size);
	if (vhost_user_check(&m, with_fd ? 1 : 0, 2, &what) < 0)
		return;
	if (m.payload.state.index != 0)
		return; /* one ring is enough */
	switch (request) {
	case VHOST_USER_SET_VRING_NUM:
		r = virtqueue_set_num(vq, m.payload.state.num);
		break;
	case VHOST_USER_SET_VRING_ADDR:
		r = virtqueue_set_addr(vq, m.payload.addr.desc_uva, m.payload.addr.avail_uva,
				       m.payload.addr.used_uva);
		break;
	case VHOST_USER_SET_VRING_BASE:
		r = virtqueue_set_base(vq, (uint16_t)m.payload.state.num);
		break;
	case VHOST_USER_SET_VRING_KICK:
		if (virtqueue_start(vq, ring_mem, eventfd(0, EFD_NONBLOCK)) == 0)
			vq->enabled = true;
		return;
	case VHOST_USER_GET_VRING_BASE:
		virtqueue_stop(vq);
		return;
	}
	if (started && r != -EBUSY)
		__builtin_trap();
}

/*
 * Ring messages, guest writes and requests in the order the input says,
 * 8 bytes a step: {op, a, b16, c32}.
 */
static void ring_session(const uint8_t *data, size_t size)
{
	struct virtqueue vq;

	if (ring_memory() < 0)
		return;
	memset(ring_guest, 0, RING_MEM);
	virtqueue_init(&vq);
	for (size_t at = 0; at + 8 <= size; at += 8) {
		const uint8_t *step = data + at;
		uint16_t b16;
		uint32_t c32;

		memcpy(&b16, step + 2, 2);
		memcpy(&c32, step + 4, 4);
		switch (step[0] % 7) {
		case 0: { /* SET_VRING_NUM: a power of two now and then */
			struct vhost_user_vring_state st = {0,
							    step[1] & 1 ? 1u << (c32 % 17) : c32};

			ring_message(&vq, VHOST_USER_SET_VRING_NUM, &st, sizeof(st), false);
			break;
		}
		case 1: { /* SET_VRING_ADDR: rings anywhere near the region */
			struct vhost_user_vring_addr a = {.desc_uva = (c32 & 0x3fff) & ~15u,
							  .avail_uva = (b16 & 0x3fff) & ~1u,
							  .used_uva = ((c32 >> 16) & 0x3fff) & ~3u};

			ring_message(&vq, VHOST_USER_SET_VRING_ADDR, &a, sizeof(a), false);
			break;
		}
		case 2: {
			struct vhost_user_vring_state st = {0, b16};

			ring_message(&vq, VHOST_USER_SET_VRING_BASE, &st, sizeof(st), false);
			break;
		}
		case 3: {
			uint64_t idx = 0;

			ring_message(&vq, VHOST_USER_SET_VRING_KICK, &idx, sizeof(idx), true);
			break;
		}
		case 4: {
			struct vhost_user_vring_state st = {0, 0};

			ring_message(&vq, VHOST_USER_GET_VRING_BASE, &st, sizeof(st), false);
			break;
		}
		case 5: /* the guest writes 4 bytes (indices, descriptors) */
			memcpy(ring_guest + (b16 % (RING_MEM - 3)), &c32, 4);
			break;
		default: /* the device serves what the guest offered */
			for (int i = 0; i < 4 && virtqueue_pop(&vq, ring_mem, &ring_elem) > 0; i++)
				virtqueue_push(&vq, ring_elem.head, c32);
			virtqueue_notify(&vq);
			break;
		}
		check_ring_rules(&vq);
	}
	virtqueue_finish(&vq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *what = NULL;
	uint32_t payload = 0;
	size_t len;
	uint8_t *buf;

	if (size == 0)
		return 0;
	/* The header's size field may claim more than arrived: the framing
	 * never hands such a message over, so neither does this target. */
	len = size - 1 < VHOST_USER_HDR_SIZE ? VHOST_USER_HDR_SIZE : size - 1;
	if (len > sizeof(struct vhost_user_msg))
		len = sizeof(struct vhost_user_msg);
	buf = calloc(1, len);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1 < len ? size - 1 : len);
	memcpy(&payload, buf + 8, sizeof(payload));
	if (payload > len - VHOST_USER_HDR_SIZE) {
		payload = (uint32_t)(len - VHOST_USER_HDR_SIZE);
		memcpy(buf + 8, &payload, sizeof(payload));
	}
	/* The check reads the message through struct vhost_user_msg: a buffer
	 * of exactly the bytes present, header and payload. */
	buf = realloc(buf, VHOST_USER_HDR_SIZE + payload);
	if (!buf)
		return 0;
	if (vhost_user_check((const struct vhost_user_msg *)buf,
			     (data[0] & 0xf) % (VHOST_USER_MAX_FDS + 2), data[0] >> 4, &what)) {
		if (!what)
			__builtin_trap();
	} else if (((const struct vhost_user_msg *)buf)->request == VHOST_USER_SET_FEATURES) {
		/* The worker's offer: VERSION_1, VIRGL, EDID, INDIRECT_DESC,
		 * EVENT_IDX, PROTOCOL_FEATURES. */
		const uint64_t offered = 0x170000003ull;
		uint64_t requested, negotiated = 0;

		memcpy(&requested, buf + VHOST_USER_HDR_SIZE, sizeof(requested));
		what = NULL;
		if (vhost_user_negotiate_features(offered, requested, &negotiated, &what) == 0) {
			if (negotiated & ~offered || !(negotiated & (1ull << 32)))
				__builtin_trap();
		} else if (!what) {
			__builtin_trap();
		}
	}
	free(buf);
	/* The same bytes as guest requests, copied so that ASan sees their end. */
	{
		uint8_t *req = malloc(size);

		if (req) {
			memcpy(req, data, size);
			vgpu_cmd_check(req, size, VGPU_QUEUE_CONTROL, &what);
			vgpu_cmd_check(req, size, VGPU_QUEUE_CURSOR, &what);
			free(req);
		}
	}
	ring_session(data, size);
	return 0;
}
