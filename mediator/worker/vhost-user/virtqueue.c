// SPDX-License-Identifier: MIT
/*
 * Split virtqueues of a vhost-user back-end (see virtqueue.h).
 *
 * Layout (VIRTIO 1.1 §2.6): descriptors are 16 bytes {le64 addr, le32 len,
 * le16 flags, le16 next}; the avail ring is {le16 flags, le16 idx,
 * le16 ring[num], le16 used_event}; the used ring is {le16 flags,
 * le16 idx, {le32 id, le32 len}[num], le16 avail_event}. x86 and the
 * other hosts we build for are little-endian, as virtio 1.x is.
 *
 * Ordering: the guest writes ring entries before it moves avail->idx, so
 * we read idx with an acquire fence before reading entries; we write a
 * used entry before moving used->idx (release), and publish avail_event
 * and read used_event around a full fence, as the spec's suppression
 * protocol needs.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "worker/vhost-user/virtqueue.h"

#define VRING_DESC_F_NEXT	   1
#define VRING_DESC_F_WRITE	   2
#define VRING_DESC_F_INDIRECT	   4
#define VRING_AVAIL_F_NO_INTERRUPT 1
#define DESC_SIZE		   16u

struct desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

void virtqueue_init(struct virtqueue *vq)
{
	memset(vq, 0, sizeof(*vq));
	vq->kick_fd = -1;
	vq->call_fd = -1;
}

void virtqueue_finish(struct virtqueue *vq)
{
	if (vq->kick_fd >= 0)
		close(vq->kick_fd);
	if (vq->call_fd >= 0)
		close(vq->call_fd);
	virtqueue_init(vq);
}

void virtqueue_unmap(struct virtqueue *vq)
{
	vq->desc = NULL;
	vq->avail = NULL;
	vq->used = NULL;
	vq->mapped_num = 0;
}

int virtqueue_map(struct virtqueue *vq, const struct guest_mem *mem)
{
	uint64_t n = vq->num;

	virtqueue_unmap(vq);
	if (n == 0 || n > VIRTQUEUE_MAX_SIZE || (n & (n - 1)))
		return -EINVAL;
	vq->desc = guest_mem_uva(mem, vq->desc_uva, n * DESC_SIZE);
	vq->avail = guest_mem_uva(mem, vq->avail_uva, 2 * (3 + n));
	vq->used = guest_mem_uva(mem, vq->used_uva, 6 + 8 * n);
	if (!vq->desc || !vq->avail || !vq->used || ((uintptr_t)vq->avail & 1) ||
	    ((uintptr_t)vq->used & 3)) {
		virtqueue_unmap(vq);
		return -EFAULT;
	}
	vq->mapped_num = (uint32_t)n;
	return 0;
}

int virtqueue_set_num(struct virtqueue *vq, uint32_t num)
{
	if (vq->started)
		return -EBUSY;
	if (num == 0 || num > VIRTQUEUE_MAX_SIZE || (num & (num - 1)))
		return -EINVAL;
	vq->num = num;
	return 0;
}

int virtqueue_set_addr(struct virtqueue *vq, uint64_t desc_uva, uint64_t avail_uva,
		       uint64_t used_uva)
{
	if (vq->started)
		return -EBUSY;
	vq->desc_uva = desc_uva;
	vq->avail_uva = avail_uva;
	vq->used_uva = used_uva;
	return 0;
}

int virtqueue_set_base(struct virtqueue *vq, uint16_t base)
{
	if (vq->started)
		return -EBUSY;
	vq->last_avail = base;
	return 0;
}

int virtqueue_start(struct virtqueue *vq, const struct guest_mem *mem, int kick_fd)
{
	int r;

	if (vq->kick_fd >= 0)
		close(vq->kick_fd);
	vq->kick_fd = kick_fd;
	vq->started = false;
	r = virtqueue_map(vq, mem);
	if (r < 0)
		return r;
	vq->used_idx = ((volatile uint16_t *)vq->used)[1];
	vq->signalled_valid = false;
	vq->started = true;
	return 0;
}

uint16_t virtqueue_stop(struct virtqueue *vq)
{
	vq->started = false;
	vq->broken = false;
	virtqueue_unmap(vq);
	if (vq->kick_fd >= 0)
		close(vq->kick_fd);
	vq->kick_fd = -1;
	return vq->last_avail;
}

static struct desc read_desc(const volatile uint8_t *table, uint32_t i)
{
	struct desc d;

	memcpy(&d, (const void *)(table + (size_t)i * DESC_SIZE), sizeof(d));
	return d;
}

/* Adds one descriptor's buffer to @elem; readable ones may not follow writable ones. */
static int add_buffer(struct virtqueue_elem *elem, const struct guest_mem *mem,
		      const struct desc *d)
{
	int n = elem->out_n + elem->in_n;
	int r;

	if (!(d->flags & VRING_DESC_F_WRITE) && elem->in_n)
		return -EINVAL;
	r = guest_mem_iov(mem, d->addr, d->len, elem->iov, n, VIRTQUEUE_MAX_IOV);
	if (r < 0)
		return r;
	if (d->flags & VRING_DESC_F_WRITE)
		elem->in_n += r - n;
	else
		elem->out_n += r - n;
	return 0;
}

/* Walks the indirect table described by @d (no nesting). */
static int walk_indirect(struct virtqueue_elem *elem, const struct guest_mem *mem,
			 const struct desc *d)
{
	uint32_t count = d->len / DESC_SIZE;
	const volatile uint8_t *table;
	uint32_t i = 0, steps = 0;

	if (d->len == 0 || d->len % DESC_SIZE || count > VIRTQUEUE_MAX_INDIRECT)
		return -EINVAL;
	table = guest_mem_gpa(mem, d->addr, d->len);
	if (!table)
		return -EFAULT;
	for (;;) {
		struct desc e = read_desc(table, i);
		int r;

		if (e.flags & VRING_DESC_F_INDIRECT)
			return -EINVAL;
		r = add_buffer(elem, mem, &e);
		if (r < 0)
			return r;
		if (!(e.flags & VRING_DESC_F_NEXT))
			return 0;
		if (e.next >= count || ++steps >= count)
			return -EINVAL;
		i = e.next;
	}
}

static int walk(struct virtqueue *vq, const struct guest_mem *mem, struct virtqueue_elem *elem,
		uint16_t head)
{
	uint32_t i = head, steps = 0;

	if (head >= vq->mapped_num)
		return -EINVAL;
	for (;;) {
		struct desc d = read_desc(vq->desc, i);
		int r;

		if (d.flags & VRING_DESC_F_INDIRECT) {
			/* An indirect descriptor is the chain's only one (§2.6.5.3.1). */
			if (!vq->indirect || steps || (d.flags & VRING_DESC_F_NEXT))
				return -EINVAL;
			return walk_indirect(elem, mem, &d);
		}
		r = add_buffer(elem, mem, &d);
		if (r < 0)
			return r;
		if (!(d.flags & VRING_DESC_F_NEXT))
			return 0;
		if (d.next >= vq->mapped_num || ++steps >= vq->mapped_num)
			return -EINVAL;
		i = d.next;
	}
}

static volatile uint16_t *avail_event(struct virtqueue *vq)
{
	return (volatile uint16_t *)(vq->used + 4 + 8 * (size_t)vq->mapped_num);
}

int virtqueue_pop(struct virtqueue *vq, const struct guest_mem *mem, struct virtqueue_elem *elem)
{
	uint16_t avail_idx, head;
	int r;

	if (vq->broken)
		return -EINVAL;
	if (!vq->started || !vq->enabled || !vq->avail || !vq->mapped_num)
		return 0;
	avail_idx = vq->avail[1];
	atomic_thread_fence(memory_order_acquire);
	if (avail_idx == vq->last_avail) {
		if (vq->event_idx) {
			*avail_event(vq) = vq->last_avail;
			atomic_thread_fence(memory_order_seq_cst);
			/* Look again: the guest may have added one before it saw avail_event. */
			avail_idx = vq->avail[1];
			atomic_thread_fence(memory_order_acquire);
			if (avail_idx == vq->last_avail)
				return 0;
		} else {
			return 0;
		}
	}
	if ((uint16_t)(avail_idx - vq->last_avail) > vq->mapped_num) {
		vq->broken = true;
		return -EINVAL;
	}
	head = vq->avail[2 + vq->last_avail % vq->mapped_num];
	elem->head = head;
	elem->out_n = elem->in_n = 0;
	r = walk(vq, mem, elem, head);
	if (r < 0) {
		vq->broken = true;
		return r;
	}
	elem->out = elem->iov;
	elem->in = elem->iov + elem->out_n;
	vq->last_avail++;
	if (vq->event_idx)
		*avail_event(vq) = vq->last_avail;
	return 1;
}

void virtqueue_push(struct virtqueue *vq, uint16_t head, uint32_t len)
{
	volatile uint8_t *entry;
	uint32_t id = head;

	if (!vq->used || !vq->mapped_num)
		return;
	entry = vq->used + 4 + 8 * (size_t)(vq->used_idx % vq->mapped_num);
	memcpy((void *)entry, &id, 4);
	memcpy((void *)(entry + 4), &len, 4);
	atomic_thread_fence(memory_order_release);
	vq->used_idx++;
	((volatile uint16_t *)vq->used)[1] = vq->used_idx;
}

void virtqueue_notify(struct virtqueue *vq)
{
	uint64_t one = 1;
	bool need;

	if (vq->call_fd < 0 || !vq->avail || !vq->mapped_num)
		return;
	atomic_thread_fence(memory_order_seq_cst);
	if (vq->event_idx) {
		uint16_t used_event = vq->avail[2 + vq->mapped_num];
		uint16_t old = vq->signalled_used, new_idx = vq->used_idx;

		/* vring_need_event() of the spec (§2.6.7.2). */
		need = !vq->signalled_valid ||
		       (uint16_t)(new_idx - used_event - 1) < (uint16_t)(new_idx - old);
		if (old == new_idx && vq->signalled_valid)
			need = false;
	} else {
		need = !(vq->avail[0] & VRING_AVAIL_F_NO_INTERRUPT);
	}
	vq->signalled_used = vq->used_idx;
	vq->signalled_valid = true;
	if (need && write(vq->call_fd, &one, sizeof(one)) < 0) {
		/* The eventfd counter cannot overflow in practice. */
	}
}

size_t virtqueue_iov_read(const struct iovec *iov, int n, size_t offset, void *dst, size_t len)
{
	size_t done = 0;

	for (int i = 0; i < n && done < len; i++) {
		size_t have = iov[i].iov_len, take;

		if (offset >= have) {
			offset -= have;
			continue;
		}
		take = have - offset < len - done ? have - offset : len - done;
		memcpy((uint8_t *)dst + done, (const uint8_t *)iov[i].iov_base + offset, take);
		done += take;
		offset = 0;
	}
	return done;
}

size_t virtqueue_elem_read(const struct virtqueue_elem *elem, void *buf, size_t size)
{
	return virtqueue_iov_read(elem->out, elem->out_n, 0, buf, size);
}

size_t virtqueue_elem_write(const struct virtqueue_elem *elem, const void *buf, size_t len)
{
	size_t done = 0;

	for (int i = 0; i < elem->in_n && done < len; i++) {
		size_t n = elem->in[i].iov_len;

		if (n > len - done)
			n = len - done;
		memcpy(elem->in[i].iov_base, (const uint8_t *)buf + done, n);
		done += n;
	}
	return done;
}

static size_t iov_size(const struct iovec *iov, int n)
{
	size_t s = 0;

	for (int i = 0; i < n; i++)
		s += iov[i].iov_len;
	return s;
}

size_t virtqueue_elem_out_size(const struct virtqueue_elem *elem)
{
	return iov_size(elem->out, elem->out_n);
}

size_t virtqueue_elem_in_size(const struct virtqueue_elem *elem)
{
	return iov_size(elem->in, elem->in_n);
}
