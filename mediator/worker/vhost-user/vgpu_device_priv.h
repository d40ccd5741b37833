// SPDX-License-Identifier: MIT
/*
 * What the virtio-gpu device's files share (vgpu_device.h is its public
 * face): struct vgpu_device, its resources, contexts, pending fences and
 * scanouts, and the functions each file offers the others.
 *
 * The files, by job:
 *   vgpu_device.c     lifetime, answers and fences, contexts, SUBMIT_3D
 *                     and its grants, taking requests off the queues
 *   vgpu_resources.c  resources: creating them, their guest backing,
 *                     transfers to and from the host
 *   vgpu_scanout.c    scanouts and what QEMU shows (set, flush, display
 *                     info, EDID) and the capsets
 * All on the worker's main thread.
 */
#ifndef MEDIATOR_VGPU_DEVICE_PRIV_H
#define MEDIATOR_VGPU_DEVICE_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "predict.h"
#include "common/util.h"
#include "worker/gpu_context.h"
#include "worker/resource_quota.h"
#include "worker/vhost-user/vgpu_device.h"
#include "worker/vhost-user/vgpu_display.h"
#include "worker/vhost-user/vgpu_limits.h"

struct vgpu_resource {
	uint32_t id;
	bool is_2d; /* RESOURCE_CREATE_2D: its backing holds what the guest shows */
	/* A 2D resource no context uses is shown from its backing and not
	 * uploaded to the GPU at each transfer; the first context to attach
	 * it gets it uploaded whole (stale marks what the GPU lacks). */
	uint32_t ctx_refs;
	bool stale;
	uint32_t target, format, width, height;
	uint64_t host_bytes;		      /* charged to the VM's quota (resource_quota.h) */
	struct virtio_gpu_mem_entry *entries; /* the guest's backing pages */
	uint32_t n_entries;
	uint64_t backing_bytes; /* their lengths' sum, counted in the VM's usage */
	struct iovec *iov;	/* their host addresses; virglrenderer keeps a pointer */
	int iov_n;
};

struct vgpu_ctx {
	uint32_t guest_id; /* 0: free slot */
	bool dead;	   /* its stream was refused: requests naming it fail */
	struct gpu_context *ctx;
};

struct pending {
	uint32_t fence_id;
	uint32_t slot; /* context slot + 1 of the group it ends, 0 if none */
	uint64_t seq;  /* the group's sequence number */
	bool answer;   /* a fenced request waits for this fence */
	uint16_t head; /* its chain */
	struct virtio_gpu_ctrl_hdr resp;
	struct iovec in[4]; /* its device-writable buffers */
	int in_n;
};

struct scanout {
	uint32_t resource_id; /* 0: disabled */
	struct virtio_gpu_rect r;
	bool announced; /* QEMU knows its size */
};

enum hold {
	HOLD_NONE,
	HOLD_GROUP,	/* the held SUBMIT_3D's group waits in the runner (a slot, a grant) */
	HOLD_ABANDONED, /* the device was reset while a grant was asked for: the runner awaits its
			   answer */
};

struct vgpu_device {
	struct vgpu_device_options opt;
	struct renderer *renderer;   /* the session's */
	struct mediator_link *link;  /* the session's */
	struct group_runner *runner; /* takes each SUBMIT_3D's group to the GPU */
	struct predict_map resources;
	struct vgpu_ctx ctxs[VGPU_MAX_CONTEXTS];
	struct pending pending[VGPU_MAX_PENDING];
	uint32_t pending_head, pending_n;
	uint32_t last_fence;
	struct scanout scanouts[VGPU_MAX_SCANOUTS];
	struct vgpu_display display;
	/* The request that holds the control queue. */
	enum hold hold;
	struct virtqueue_elem elem;
	struct virtqueue_elem cursor_elem; /* the cursor queue's, never held */
	uint8_t *req;
	size_t req_len, req_cap;
	uint32_t errors_logged;
	/* What the VM holds, against vgpu_limits.h and its domain's quota. */
	struct vgpu_backing_usage backing;
	struct resource_quota quota;
	/* This wake-up's work, and the queues it left requests on. */
	struct vgpu_budget budget;
	bool backlog[2];
	/* vgpu_device_reset() is completing groups: their answers go nowhere. */
	bool resetting;
};

#define dev_log(level, d, fmt, ...)                                                                \
	log_msg(level, "domain %s vm %u: " fmt, (d)->opt.worker->domain,                           \
		(d)->opt.worker->client_id, ##__VA_ARGS__)

/* ---- vgpu_device.c ------------------------------------------------------- */

/* Writes @resp (@len bytes) into @elem's device-writable buffers and gives it back on @q. */
void vgpu_answer(struct vgpu_device *d, enum vgpu_queue q, const struct virtqueue_elem *elem,
		 const void *resp, size_t len);
/* Resource @id of this VM, or NULL (0 never is one). */
struct vgpu_resource *vgpu_resource_get(struct vgpu_device *d, uint32_t id);
/* Resource @id of this VM, or NULL with *@what saying so. */
struct vgpu_resource *vgpu_owned_resource(struct vgpu_device *d, uint32_t id, const char **what);
/* The live gpu_context of the request's ctx_id, or NULL (then *@err is the answer). */
struct gpu_context *vgpu_live_ctx(struct vgpu_device *d, uint32_t guest_id, int *slot_out,
				  uint32_t *err);
/* Frees @res: detaches its backing, unreferences its virgl resource. */
void vgpu_resource_free(struct vgpu_resource *res);

/*
 * The command handlers below return what the device answers: a
 * VIRTIO_GPU_RESP_* type (OK_NODATA, or an error with the reason in
 * *@what), or 0 when the handler answered the request itself.
 */

/* ---- vgpu_resources.c ---------------------------------------------------- */

uint32_t vgpu_res_create_2d(struct vgpu_device *d, const void *req, const char **what);
uint32_t vgpu_res_create_3d(struct vgpu_device *d, const void *req, const char **what);
uint32_t vgpu_res_unref(struct vgpu_device *d, const void *req, const char **what);
uint32_t vgpu_res_attach_backing(struct vgpu_device *d, const void *req, const char **what);
uint32_t vgpu_res_detach_backing(struct vgpu_device *d, const void *req, const char **what);
uint32_t vgpu_res_transfer_to_host_2d(struct vgpu_device *d, const void *req, const char **what);
/* TRANSFER_TO_HOST_3D (@to_host) or TRANSFER_FROM_HOST_3D. */
uint32_t vgpu_res_transfer_3d(struct vgpu_device *d, const void *req, bool to_host,
			      const char **what);

/* ---- vgpu_scanout.c ------------------------------------------------------ */

uint32_t vgpu_scanout_set(struct vgpu_device *d, const void *req, const char **what);
uint32_t vgpu_scanout_flush(struct vgpu_device *d, const void *req, const char **what);
uint32_t vgpu_scanout_display_info(struct vgpu_device *d, enum vgpu_queue q,
				   const struct virtqueue_elem *elem, const void *req);
/* GET_EDID: QEMU's EDID of the scanout, asked over the display channel. */
uint32_t vgpu_scanout_edid(struct vgpu_device *d, enum vgpu_queue q,
			   const struct virtqueue_elem *elem, const void *req, const char **what);
uint32_t vgpu_scanout_capset_info(struct vgpu_device *d, enum vgpu_queue q,
				  const struct virtqueue_elem *elem, const void *req,
				  const char **what);
uint32_t vgpu_scanout_capset(struct vgpu_device *d, enum vgpu_queue q,
			     const struct virtqueue_elem *elem, const void *req, const char **what);
/*
 * Reads the @w x @h pixels at (@x, @y) of @res (4 bytes each) into @dst,
 * rows of 4 * @w bytes. A 2D resource no context uses shows its backing,
 * as QEMU's 2D device does; anything else is read back from the renderer.
 * False when neither has them.
 */
bool vgpu_scanout_read_pixels(const struct vgpu_resource *res, uint32_t x, uint32_t y, uint32_t w,
			      uint32_t h, uint8_t *dst);

#endif
