// SPDX-License-Identifier: MIT
/*
 * The virtio-gpu device a worker presents to one VM (VIRTIO 1.2 §5.7),
 * with virglrenderer behind it and the vhost-user-gpu display channel
 * (QEMU docs/interop/vhost-user-gpu.rst) in front of QEMU's console.
 *
 * Objects: resources (guest ids, never a host-reserved id, checked against
 * this VM's own map: the worker serves only this VM, so no id can reach
 * another domain), their backing pages (guest physical ranges translated
 * through guest_mem), guest contexts (each a gpu_context: SUBMIT_3D goes
 * through the same decode, predict, grant, dispatch and measurement path
 * as a vtest client's groups), scanouts and the cursor.
 *
 * Requests come from the server's queues one descriptor chain at a time.
 * A request the checks refuse, or one naming an object the guest does not
 * own, gets a VIRTIO_GPU_RESP_ERR_* answer and one log line with the
 * domain's name. A fenced request is answered when its fence signalled
 * (all earlier work done). A SUBMIT_3D that waits (max_inflight, or
 * mediatord's grant) holds the control queue until it may go: the guest
 * sees the same backpressure the GPU gives. A virgl stream the decoder
 * rejects, or a group the scheduler refuses as unschedulable, costs that
 * guest context only: it is destroyed, and later requests naming it get
 * ERR_INVALID_CONTEXT_ID. Main thread only.
 */
#ifndef MEDIATOR_VGPU_DEVICE_H
#define MEDIATOR_VGPU_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "worker/worker_options.h"
#include "worker/vhost-user/guest_mem.h"
#include "worker/vhost-user/virtio_gpu_cmd.h"
#include "worker/vhost-user/virtqueue.h"
#include "worker/worker_session.h"

/* Guest contexts one VM may hold at once (each is a virglrenderer context). */
#define VGPU_MAX_CONTEXTS 64u
/* Fenced requests waiting for their fence at once; more wait in the queue. */
#define VGPU_MAX_PENDING 1024u
/* Scanouts served (QEMU's vhost-user-gpu-pci has max_outputs, 1 by default). */
#define VGPU_MAX_SCANOUTS 16u

/*
 * The contexts a VM may hold at once: mediatord's --max-contexts (the
 * domain's max_contexts_per_client), within the table's VGPU_MAX_CONTEXTS;
 * 0 (not given): the table's.
 */
static inline uint32_t vgpu_max_contexts(uint32_t configured)
{
	return configured && configured < VGPU_MAX_CONTEXTS ? configured : VGPU_MAX_CONTEXTS;
}

struct vgpu_device_options {
	const struct worker_options *worker; /* not owned; its fds are the server's */
	struct worker_session *session;	     /* open; not owned */
	const struct guest_mem *mem; /* not owned; changes are announced by vgpu_device_remap() */
	struct virtqueue *queues[2]; /* control and cursor; not owned */
};

struct vgpu_device;

/* NULL on allocation failure. */
struct vgpu_device *vgpu_device_create(const struct vgpu_device_options *options);
/* Frees all GPU state and closes the display channel. NULL is fine. */
void vgpu_device_destroy(struct vgpu_device *dev);

/* virtio_gpu_config.num_capsets: the capability sets virglrenderer offers. */
uint32_t vgpu_device_num_capsets(void);

/*
 * The device was reset (its rings stopped): every resource, context,
 * scanout and waiting answer of the old driver instance is dropped.
 */
void vgpu_device_reset(struct vgpu_device *dev);

/* The display channel QEMU gave (GPU_SET_SOCKET); the device owns @fd; -1 closes it. */
void vgpu_device_set_display(struct vgpu_device *dev, int fd);
/* The display channel's fd (to poll for hang-ups), or -1. */
int vgpu_device_display_fd(const struct vgpu_device *dev);

/* The memory table changed: backings are translated again. */
void vgpu_device_remap(struct vgpu_device *dev);

/*
 * Serves the requests waiting in queue @q. Stops early while a SUBMIT_3D
 * waits (vgpu_device_blocked()), and when this wake-up's work budget
 * (vgpu_limits.h) is spent: the rest stays on the ring and
 * vgpu_device_backlog() says so. Returns 0, or -EINVAL when the guest
 * broke the queue itself (a bad descriptor chain: the device needs a
 * reset).
 */
int vgpu_device_process(struct vgpu_device *dev, enum vgpu_queue q);

/*
 * A new wake-up of the main loop: the work budget (VGPU_BUDGET_REQUESTS,
 * VGPU_BUDGET_BYTES) is full again. The loop calls it once per iteration.
 */
void vgpu_device_wakeup(struct vgpu_device *dev);

/*
 * True when queue @q still had requests when the budget ran out: the loop
 * must come back to it without waiting for a kick (the guest kicked
 * already, and may never kick again).
 */
bool vgpu_device_backlog(const struct vgpu_device *dev, enum vgpu_queue q);

/* True while a request holds the control queue. */
bool vgpu_device_blocked(const struct vgpu_device *dev);

/*
 * Takes fence completions and grant answers, answers what waited for
 * them, and serves the control queue again if it was held. Returns as
 * vgpu_device_process().
 */
int vgpu_device_poll(struct vgpu_device *dev);

/* Groups in flight on any context (for poll timeouts). */
uint32_t vgpu_device_inflight(const struct vgpu_device *dev);

#endif
