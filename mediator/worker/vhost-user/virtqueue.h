// SPDX-License-Identifier: MIT
/*
 * One split virtqueue (VIRTIO 1.1 §2.6) served from a vhost-user back-end:
 * the rings live in guest memory (guest_mem.h), QEMU tells us where
 * (SET_VRING_NUM/ADDR/BASE) and hands us the kick and call eventfds.
 *
 * virtqueue_pop() takes the next available descriptor chain and returns
 * it as host iovecs: the device-readable part (the request) and the
 * device-writable part (room for the response). Everything the guest
 * wrote is read once and checked: the head and every next index against
 * the ring size, chains longer than the ring (loops), indirect tables
 * (VIRTIO_RING_F_INDIRECT_DESC; length a multiple of 16, no nesting, at
 * most VIRTQUEUE_MAX_INDIRECT entries), a readable descriptor after a
 * writable one, and every buffer against the memory table. A bad chain is
 * an error of the guest: the caller stops the queue (the device needs a
 * reset), nothing is followed.
 *
 * virtqueue_push() returns a chain with the bytes written, and
 * virtqueue_notify() signals the call eventfd when the guest wants an
 * interrupt (VRING_AVAIL_F_NO_INTERRUPT, or used_event with
 * VIRTIO_RING_F_EVENT_IDX; avail_event is kept up to date then). Main
 * thread only.
 */
#ifndef MEDIATOR_VIRTQUEUE_H
#define MEDIATOR_VIRTQUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "worker/vhost-user/guest_mem.h"

/* Largest ring: the virtio spec's limit of a split queue's size (2^15). */
#define VIRTQUEUE_MAX_SIZE 32768u
/* Most entries in one indirect table (Linux's guests use a few). */
#define VIRTQUEUE_MAX_INDIRECT 1024u
/* Most iovecs of one chain (buffers split at region boundaries count once more). */
#define VIRTQUEUE_MAX_IOV 1024

struct virtqueue_elem {
	uint16_t head; /* the chain's id, for virtqueue_push() */
	int out_n, in_n;
	struct iovec *out; /* device-readable, out_n of them */
	struct iovec *in;  /* device-writable, in_n of them */
	struct iovec iov[VIRTQUEUE_MAX_IOV];
};

struct virtqueue {
	/* Set by the vhost-user messages. */
	uint32_t num;				/* ring size, 0 until SET_VRING_NUM */
	uint64_t desc_uva, avail_uva, used_uva; /* QEMU's addresses of the rings */
	uint16_t last_avail;			/* next entry of the avail ring to take */
	uint16_t used_idx;			/* next entry of the used ring to fill */
	int kick_fd, call_fd;			/* -1 when not set */
	bool started;				/* kick fd set and rings valid */
	bool enabled;
	bool event_idx, indirect; /* negotiated features */
	bool broken;		  /* the guest gave a bad chain */
	uint16_t signalled_used;  /* used_idx at the last notification */
	bool signalled_valid;
	/*
	 * The rings, translated when started, and the ring size they were
	 * translated for: every access indexes with mapped_num, never with
	 * num, so no later change of num can reach past the mappings.
	 */
	uint32_t mapped_num; /* 0: not mapped */
	const volatile uint8_t *desc;
	volatile uint16_t *avail; /* flags, idx, ring[num], used_event */
	volatile uint8_t *used;	  /* flags, idx, {id, len}[num], avail_event */
};

/* A stopped queue with no fds. */
void virtqueue_init(struct virtqueue *vq);
/* Closes the fds and forgets the rings. */
void virtqueue_finish(struct virtqueue *vq);

/*
 * Translates the rings through @mem for the ring size vq->num, which
 * becomes vq->mapped_num. Returns 0, or -EINVAL when the size is not set
 * or not a power of two, or -EFAULT when a ring is outside the memory
 * table (then nothing is mapped).
 */
int virtqueue_map(struct virtqueue *vq, const struct guest_mem *mem);
/* Forgets the translated rings (the ring stopped); pop and push do nothing until mapped again. */
void virtqueue_unmap(struct virtqueue *vq);

/*
 * The ring state rules (vhost-user.rst, "Ring states"): a ring is started
 * by SET_VRING_KICK (virtqueue_start()) and stopped by GET_VRING_BASE
 * (virtqueue_stop()). Its size, addresses and base describe a stopped
 * ring: on a started one they are refused with -EBUSY, since the started
 * ring's mappings were made for the old ones. Stopping forgets the
 * mappings; starting makes them again.
 */
/* SET_VRING_NUM: 0, -EBUSY (started) or -EINVAL (not a power of two up to VIRTQUEUE_MAX_SIZE). */
int virtqueue_set_num(struct virtqueue *vq, uint32_t num);
/* SET_VRING_ADDR (QEMU's addresses of the three rings): 0 or -EBUSY. */
int virtqueue_set_addr(struct virtqueue *vq, uint64_t desc_uva, uint64_t avail_uva,
		       uint64_t used_uva);
/* SET_VRING_BASE: the next avail entry to take. 0 or -EBUSY. */
int virtqueue_set_base(struct virtqueue *vq, uint16_t base);
/*
 * SET_VRING_KICK: takes @kick_fd (owned from now on, also on failure) and
 * starts the ring: maps it (virtqueue_map()) and reads used_idx back from
 * the used ring. Returns 0 or virtqueue_map()'s error (the ring stays
 * stopped then). A started ring is started again with its own size and
 * addresses (a new kick fd).
 */
int virtqueue_start(struct virtqueue *vq, const struct guest_mem *mem, int kick_fd);
/*
 * GET_VRING_BASE: stops the ring (unmapped, kick fd closed, no longer
 * broken) and returns where it stopped: the next avail entry to take.
 */
uint16_t virtqueue_stop(struct virtqueue *vq);

/*
 * Takes the next chain into @elem. Returns 1 when one was taken, 0 when
 * the ring is empty, -EINVAL/-EFAULT/-E2BIG for a bad chain (the queue is
 * then broken and returns -EINVAL until reset).
 */
int virtqueue_pop(struct virtqueue *vq, const struct guest_mem *mem, struct virtqueue_elem *elem);

/* Returns chain @head to the guest with @len bytes written into its device-writable buffers. */
void virtqueue_push(struct virtqueue *vq, uint16_t head, uint32_t len);

/* Signals the call eventfd if the guest asked for an interrupt since the last one. */
void virtqueue_notify(struct virtqueue *vq);

/*
 * Copies up to @len bytes, starting @offset bytes into the buffers @iov
 * (@n of them), to @dst; returns the bytes copied (fewer when the buffers
 * end first).
 */
size_t virtqueue_iov_read(const struct iovec *iov, int n, size_t offset, void *dst, size_t len);

/* Copies the device-readable part of @elem into @buf (at most @size bytes); returns bytes copied.
 */
size_t virtqueue_elem_read(const struct virtqueue_elem *elem, void *buf, size_t size);
/* Copies @len bytes of @buf into the device-writable part; returns bytes written (may be less). */
size_t virtqueue_elem_write(const struct virtqueue_elem *elem, const void *buf, size_t len);
/* Bytes of the device-readable and writable parts. */
size_t virtqueue_elem_out_size(const struct virtqueue_elem *elem);
size_t virtqueue_elem_in_size(const struct virtqueue_elem *elem);

#endif
