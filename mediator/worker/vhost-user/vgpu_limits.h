// SPDX-License-Identifier: MIT
/*
 * What one VM (one worker connection) may make its worker hold or do, and
 * why each bound is what it is. A guest is hostile (STYLE.md): every
 * count it controls is held against one of these, and a request past one
 * is refused with a VIRTIO_GPU_RESP_ERR_* answer and a log line
 * (vgpu_device.c caps those lines per VM); nothing else is affected.
 *
 * Two kinds of bound:
 *  - Limits on what a VM holds: resources, and the backing entries (the
 *    guest pages behind resources) per resource and per VM, counted in
 *    entries (each costs the worker 16 bytes of entry and 16 of iovec)
 *    and in bytes of guest address space. Entries may all name the same
 *    guest page, so bytes bound nothing by themselves: the entry counts
 *    bound the worker's memory. Usage is counted when a backing is
 *    attached and given back when it is detached, its resource destroyed,
 *    or the device reset.
 *  - A work budget per wake-up of the worker's main loop: at most
 *    VGPU_BUDGET_REQUESTS requests and VGPU_BUDGET_BYTES bytes copied out
 *    of guest memory, so that a ring full of requests cannot keep the loop
 *    from mediatord's link, the renderer's completions and QEMU's socket.
 *    What is left stays on the ring and is served on the next iteration,
 *    without a new kick.
 *
 * Constants, not configuration: they bound the worker's own memory and
 * time whatever the domain's policy, and a production guest stays far
 * below each (the reasons are next to them). Pure; main thread only.
 */
#ifndef MEDIATOR_VGPU_LIMITS_H
#define MEDIATOR_VGPU_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "worker/vhost-user/virtio_gpu_cmd.h"

/*
 * Resources one VM may hold at once. A Linux desktop guest on virgl holds
 * a few hundred to a few thousand (one per buffer object: textures,
 * vertex and constant buffers, framebuffers); 16384 leaves ample room and
 * bounds the worker's per-resource state and virglrenderer's objects.
 */
#define VGPU_MAX_RESOURCES 16384u
/*
 * Bytes of guest memory one resource's backing may span: 1 GiB, the
 * VGPU_MAX_BACKING_ENTRIES (virtio_gpu_cmd.h) 4 KiB pages it may name. No
 * guest buffer object of a GL ES client comes near it.
 */
#define VGPU_MAX_RESOURCE_BACKING_BYTES (1ull << 30)
/*
 * Backing entries all resources of one VM may hold together: 2^20 entries
 * are 4 GiB of 4 KiB guest pages, more than the guest memory of the VMs
 * served (2-4 GiB), and cost the worker at most 32 MiB of entries and
 * iovecs. Without it, 65536 resources of 262144 entries each could make
 * a worker hold 512 GiB of bookkeeping, all naming one guest page.
 */
#define VGPU_MAX_VM_BACKING_ENTRIES (1u << 20)
/*
 * Bytes of guest address space all backings of one VM may span together:
 * 8 GiB, twice the largest guest memory served, so aliases (two
 * resources backed by the same pages, as a guest's dma-buf imports do)
 * still fit.
 */
#define VGPU_MAX_VM_BACKING_BYTES (8ull << 30)

/*
 * Requests served per wake-up of the main loop (both queues together).
 * A small request (GET_DISPLAY_INFO, a cursor move, a resource command)
 * costs the worker microseconds; 128 of them keep a wake-up in the
 * low milliseconds, under a safety domain's 4 ms budget per 16.7 ms
 * period, while a guest's frame (tens of requests) still goes in one.
 */
#define VGPU_BUDGET_REQUESTS 128u
/*
 * Bytes copied out of guest memory per wake-up: 16 MiB take about 2-5 ms
 * at the memcpy speeds of the hosts served. One request may take more
 * (a SUBMIT_3D of up to VGPU_MAX_REQUEST): it is then the only request of
 * its wake-up.
 */
#define VGPU_BUDGET_BYTES (16u << 20)

/* Backing held by one VM. */
struct vgpu_backing_usage {
	uint64_t entries;
	uint64_t bytes;
};

/*
 * A VM holding @resources may create one more: 0, or -ENOSPC with *@what
 * naming the limit.
 */
int vgpu_limits_may_create(uint32_t resources, const char **what);

/*
 * A VM holding @contexts guest contexts may create one more when it holds
 * fewer than @max_contexts (its domain's max_contexts_per_client, see
 * vgpu_max_contexts()): 0, or -ENOSPC with *@what naming the limit.
 */
int vgpu_limits_may_create_context(uint32_t contexts, uint32_t max_contexts, const char **what);

/*
 * A VM whose backings are @vm may attach a backing of @entries entries
 * spanning @bytes to one resource: 0, or -ENOSPC with *@what naming the
 * limit (per resource, then per VM).
 */
int vgpu_limits_may_attach(const struct vgpu_backing_usage *vm, uint32_t entries, uint64_t bytes,
			   const char **what);

/* Sum of the lengths of @n entries at @entries. */
uint64_t vgpu_limits_backing_bytes(const struct virtio_gpu_mem_entry *entries, uint32_t n);

/* Counts an attached backing in @vm, or gives a detached one back. */
void vgpu_backing_usage_add(struct vgpu_backing_usage *vm, uint32_t entries, uint64_t bytes);
void vgpu_backing_usage_sub(struct vgpu_backing_usage *vm, uint32_t entries, uint64_t bytes);

/* The work budget of one wake-up. */
struct vgpu_budget {
	uint32_t requests; /* left */
	uint64_t bytes;	   /* left */
};

/* A fresh budget: VGPU_BUDGET_REQUESTS and VGPU_BUDGET_BYTES. */
void vgpu_budget_refill(struct vgpu_budget *b);
/* True when no further request may be taken in this wake-up. */
bool vgpu_budget_spent(const struct vgpu_budget *b);
/* One request taken, @bytes copied for it (may overdraw: the budget is then spent). */
void vgpu_budget_take(struct vgpu_budget *b, uint64_t bytes);

#endif
