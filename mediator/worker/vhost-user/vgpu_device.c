// SPDX-License-Identifier: MIT
/*
 * The virtio-gpu device of a VM (see vgpu_device.h).
 *
 * Fences: every SUBMIT_3D gets a renderer fence of its own, so that each
 * command group is measured; a request with VIRTIO_GPU_FLAG_FENCE gets
 * one too. Fence ids are the worker's (increasing), not the guest's; the
 * pending list maps them back, in order, to the group they end (its
 * context and sequence number) and to the answer that waits for them.
 * virglrenderer signals fences in creation order, so the list is a FIFO.
 *
 * Scanouts: without a render node there is no dma-buf to share, so a
 * RESOURCE_FLUSH reads the flushed rows back from virglrenderer and sends
 * them to QEMU as VHOST_USER_GPU_UPDATE (x8r8g8b8 pixels).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <virgl/virglrenderer.h>

#include "worker/gpu_context.h"
#include "worker/group_runner.h"
#include "predict.h"
#include "common/util.h"
#include "worker/vhost-user/vgpu_device.h"
#include "worker/vhost-user/vgpu_display.h"
#include "worker/resource_quota.h"
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

/* Guest errors are logged, but a flood of them is not. */
#define MAX_ERRORS_LOGGED 64u

static void guest_error(struct vgpu_device *d, uint32_t type, const char *what)
{
	if (d->errors_logged++ < MAX_ERRORS_LOGGED)
		dev_log(LOG_LEVEL_WARN, d, "%s: %s", vgpu_cmd_name(type), what);
	else if (d->errors_logged == MAX_ERRORS_LOGGED + 1)
		dev_log(LOG_LEVEL_WARN, d, "more guest errors; no longer logged");
}

/* ---- lifetime ------------------------------------------------------------ */

static const struct group_runner_ops group_ops;

struct vgpu_device *vgpu_device_create(const struct vgpu_device_options *options)
{
	struct vgpu_device *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->opt = *options;
	d->runner = worker_session_group_runner(options->session, &group_ops, d);
	if (!d->runner) {
		free(d);
		return NULL;
	}
	vgpu_budget_refill(&d->budget);
	vgpu_display_init(&d->display, options->worker->domain, options->worker->client_id);
	predict_map_init(&d->resources);
	resource_quota_init(&d->quota, options->worker->resource_quota_bytes);
	d->renderer = worker_session_renderer(options->session);
	d->link = worker_session_link(options->session);
	return d;
}

static void resource_free(struct vgpu_resource *res)
{
	if (res->iov)
		virgl_renderer_resource_detach_iov((int)res->id, NULL, NULL);
	virgl_renderer_resource_unref(res->id);
	free(res->iov);
	free(res->entries);
	free(res);
}

static void on_fence(uint32_t fence_id, uint64_t end_ns, void *data);

/* gpu_context_drain()'s poll: the renderer's completions, each to its context. */
static void poll_completions(void *data)
{
	struct vgpu_device *d = data;

	virgl_renderer_poll();
	renderer_take_completions(d->renderer, on_fence, d);
}

/* Frees context @slot once its groups have left the GPU (gpu_context_drain()). */
static void ctx_free(struct vgpu_device *d, uint32_t slot)
{
	struct vgpu_ctx *c = &d->ctxs[slot];

	group_runner_end_context(d->runner, c->ctx, poll_completions, d);
	memset(c, 0, sizeof(*c));
	/* Groups of the context still in flight complete without it. */
	for (uint32_t i = 0; i < d->pending_n; i++) {
		struct pending *p = &d->pending[(d->pending_head + i) % VGPU_MAX_PENDING];

		if (p->slot == slot + 1)
			p->slot = 0;
	}
}

void vgpu_device_reset(struct vgpu_device *dev)
{
	struct vgpu_device *d = dev;
	struct vgpu_resource *res;

	/* The groups still on the GPU are completed (measured, their slots
	 * freed when the GPU is done); their answers belonged to the old
	 * driver instance and are not sent. */
	d->resetting = true;
	poll_completions(d);
	for (uint32_t i = 0; i < VGPU_MAX_CONTEXTS; i++)
		if (d->ctxs[i].guest_id)
			ctx_free(d, i);
	d->resetting = false;
	for (size_t i = 0; (res = predict_map_next(&d->resources, &i));)
		resource_free(res);
	predict_map_finish(&d->resources);
	d->backing = (struct vgpu_backing_usage){0, 0};
	d->quota.used = 0;
	d->backlog[0] = d->backlog[1] = false;
	d->pending_head = d->pending_n = 0;
	memset(d->scanouts, 0, sizeof(d->scanouts));
	/* One grant request may be outstanding per worker: the next group
	 * waits for the answer to the abandoned one (the runner takes it). */
	d->hold = group_runner_wait(d->runner) == GROUP_DONE ? HOLD_NONE : HOLD_ABANDONED;
}

void vgpu_device_destroy(struct vgpu_device *dev)
{
	if (!dev)
		return;
	vgpu_device_reset(dev);
	vgpu_display_finish(&dev->display);
	group_runner_destroy(dev->runner);
	free(dev->req);
	free(dev);
}

uint32_t vgpu_device_num_capsets(void)
{
	uint32_t ver = 0, size = 0, n = 0;

	virgl_renderer_get_cap_set(VIRTIO_GPU_CAPSET_VIRGL, &ver, &size);
	if (size)
		n++;
	virgl_renderer_get_cap_set(VIRTIO_GPU_CAPSET_VIRGL2, &ver, &size);
	if (size)
		n++;
	return n;
}

/* ---- the display channel --------------------------------------------------- */

void vgpu_device_set_display(struct vgpu_device *dev, int fd)
{
	vgpu_display_set_fd(&dev->display, fd);
	for (uint32_t i = 0; i < VGPU_MAX_SCANOUTS; i++)
		dev->scanouts[i].announced = false;
}

int vgpu_device_display_fd(const struct vgpu_device *dev)
{
	return dev->display.fd;
}

/* ---- answers ----------------------------------------------------------------- */

static void answer(struct vgpu_device *d, enum vgpu_queue q, const struct virtqueue_elem *elem,
		   const void *resp, size_t len)
{
	size_t n = virtqueue_elem_write(elem, resp, len);

	virtqueue_push(d->opt.queues[q], elem->head, (uint32_t)n);
}

static void answer_type(struct vgpu_device *d, enum vgpu_queue q, const struct virtqueue_elem *elem,
			const struct virtio_gpu_ctrl_hdr *req, uint32_t type)
{
	struct virtio_gpu_ctrl_hdr resp = {.type = type};

	if (req->flags & VIRTIO_GPU_FLAG_FENCE) {
		resp.flags = VIRTIO_GPU_FLAG_FENCE;
		resp.fence_id = req->fence_id;
		resp.ctx_id = req->ctx_id;
	}
	answer(d, q, elem, &resp, sizeof(resp));
}

/* Adds a renderer fence, remembering what waits for it. Returns its pending entry. */
static struct pending *add_fence(struct vgpu_device *d, uint32_t virgl_ctx)
{
	struct pending *p;

	if (d->pending_n == VGPU_MAX_PENDING)
		return NULL;
	p = &d->pending[(d->pending_head + d->pending_n) % VGPU_MAX_PENDING];
	memset(p, 0, sizeof(*p));
	p->fence_id = ++d->last_fence;
	if (renderer_fence(d->renderer, virgl_ctx, p->fence_id) < 0)
		return NULL;
	d->pending_n++;
	return p;
}

/* The answer to the request in @elem waits for fence @p. */
static void answer_later(struct pending *p, const struct virtqueue_elem *elem,
			 const struct virtio_gpu_ctrl_hdr *req)
{
	p->answer = true;
	p->head = elem->head;
	p->resp = (struct virtio_gpu_ctrl_hdr){.type = VIRTIO_GPU_RESP_OK_NODATA,
					       .flags = VIRTIO_GPU_FLAG_FENCE,
					       .fence_id = req->fence_id,
					       .ctx_id = req->ctx_id};
	p->in_n = elem->in_n < 4 ? elem->in_n : 4;
	memcpy(p->in, elem->in, sizeof(p->in[0]) * (size_t)p->in_n);
}

static void on_fence(uint32_t fence_id, uint64_t end_ns, void *data)
{
	struct vgpu_device *d = data;

	/* Fences signal in order: this one ends every earlier one too. */
	while (d->pending_n) {
		struct pending *p = &d->pending[d->pending_head];

		if ((int32_t)(p->fence_id - fence_id) > 0)
			break;
		if (p->slot && d->ctxs[p->slot - 1].ctx)
			gpu_context_complete(d->ctxs[p->slot - 1].ctx, p->seq, end_ns);
		if (p->answer && !d->resetting) {
			struct virtqueue_elem e = {.head = p->head, .in_n = p->in_n};

			memcpy(e.iov, p->in, sizeof(p->in[0]) * (size_t)p->in_n);
			e.in = e.iov;
			answer(d, VGPU_QUEUE_CONTROL, &e, &p->resp, sizeof(p->resp));
		}
		d->pending_head = (d->pending_head + 1) % VGPU_MAX_PENDING;
		d->pending_n--;
	}
}

/* ---- objects ------------------------------------------------------------------ */

static struct vgpu_resource *resource(struct vgpu_device *d, uint32_t id)
{
	return id ? predict_map_get(&d->resources, id) : NULL;
}

/* Resource @id of this VM, or NULL with *@what saying so. */
static struct vgpu_resource *owned_resource(struct vgpu_device *d, uint32_t id, const char **what)
{
	struct vgpu_resource *res = resource(d, id);

	if (!res)
		*what = "no such resource";
	return res;
}

/* The slot of guest context @guest_id, or -1. */
static int ctx_slot(const struct vgpu_device *d, uint32_t guest_id)
{
	if (guest_id == 0)
		return -1;
	for (uint32_t i = 0; i < VGPU_MAX_CONTEXTS; i++)
		if (d->ctxs[i].guest_id == guest_id)
			return (int)i;
	return -1;
}

/* The live gpu_context of the request's ctx_id, or NULL (then *err is the answer). */
static struct gpu_context *live_ctx(struct vgpu_device *d, uint32_t guest_id, int *slot_out,
				    uint32_t *err)
{
	int slot = ctx_slot(d, guest_id);

	*err = VIRTIO_GPU_RESP_ERR_INVALID_CONTEXT_ID;
	if (slot < 0 || d->ctxs[slot].dead || !d->ctxs[slot].ctx)
		return NULL;
	if (slot_out)
		*slot_out = slot;
	return d->ctxs[slot].ctx;
}

/* The resource memory a context's predictor may read: a backing in one piece. */
static const void *resource_memory(void *data, uint32_t handle, size_t *size)
{
	struct vgpu_device *d = data;
	struct vgpu_resource *res = resource(d, handle);

	if (!res || res->iov_n != 1)
		return NULL;
	*size = res->iov[0].iov_len;
	return res->iov[0].iov_base;
}

/* Translates @res's backing entries into host iovecs; 0 or -EFAULT/-E2BIG/-ENOMEM. */
static int map_backing(struct vgpu_device *d, struct vgpu_resource *res)
{
	int max = (int)(res->n_entries + GUEST_MEM_MAX_REGIONS);
	struct iovec *iov = calloc((size_t)max, sizeof(*iov));
	int n = 0;

	if (!iov)
		return -ENOMEM;
	for (uint32_t i = 0; i < res->n_entries; i++) {
		n = guest_mem_iov(d->opt.mem, res->entries[i].addr, res->entries[i].length, iov, n,
				  max);
		if (n < 0) {
			free(iov);
			return n;
		}
	}
	res->iov = iov;
	res->iov_n = n;
	virgl_renderer_resource_attach_iov((int)res->id, iov, n);
	return 0;
}

static void unmap_backing(struct vgpu_resource *res)
{
	if (!res->iov)
		return;
	virgl_renderer_resource_detach_iov((int)res->id, NULL, NULL);
	free(res->iov);
	res->iov = NULL;
	res->iov_n = 0;
}

/* Detaches and forgets @res's backing, giving its entries back to the VM's usage. */
static void release_backing(struct vgpu_device *d, struct vgpu_resource *res)
{
	unmap_backing(res);
	vgpu_backing_usage_sub(&d->backing, res->n_entries, res->backing_bytes);
	free(res->entries);
	res->entries = NULL;
	res->n_entries = 0;
	res->backing_bytes = 0;
}

void vgpu_device_remap(struct vgpu_device *dev)
{
	struct vgpu_resource *res;

	for (size_t i = 0; (res = predict_map_next(&dev->resources, &i));) {
		if (!res->entries)
			continue;
		unmap_backing(res);
		if (map_backing(dev, res) < 0) {
			dev_log(LOG_LEVEL_WARN, dev,
				"resource %u: backing outside the new memory table; detached",
				res->id);
			release_backing(dev, res);
		}
	}
}

/* ---- commands ------------------------------------------------------------------ */

/* Each returns the answer's type (RESP_OK_NODATA or an error), or 0 when it answered itself. */

static uint32_t create_resource(struct vgpu_device *d,
				struct virgl_renderer_resource_create_args *args, const char **what)
{
	const struct resource_desc desc = {args->target,     args->format,    args->width,
					   args->height,     args->depth,     args->array_size,
					   args->last_level, args->nr_samples};
	uint64_t host_bytes = resource_host_bytes(&desc);
	struct vgpu_resource *res;

	if (args->handle == 0 || args->handle >= PREDICT_HOST_HANDLE_MIN) {
		*what = "resource id 0 or reserved for the host";
		return VIRTIO_GPU_RESP_ERR_INVALID_RESOURCE_ID;
	}
	if (resource(d, args->handle)) {
		*what = "resource id already in use";
		return VIRTIO_GPU_RESP_ERR_INVALID_RESOURCE_ID;
	}
	if (vgpu_limits_may_create((uint32_t)predict_map_count(&d->resources), what) < 0)
		return VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY;
	if (resource_quota_admit(&d->quota, host_bytes) < 0) {
		*what = "the domain's host memory quota for resources (resource_memory_mb) reached";
		return VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY;
	}
	res = calloc(1, sizeof(*res));
	if (!res) {
		resource_quota_release(&d->quota, host_bytes);
		return VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY;
	}
	res->host_bytes = host_bytes;
	res->id = args->handle;
	res->target = args->target;
	res->format = args->format;
	res->width = args->width;
	res->height = args->height;
	if (virgl_renderer_resource_create(args, NULL, 0)) {
		resource_quota_release(&d->quota, host_bytes);
		free(res);
		*what = "virglrenderer refused the resource description";
		return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	}
	if (predict_map_add(&d->resources, res->id, res) < 0) {
		virgl_renderer_resource_unref(res->id);
		resource_quota_release(&d->quota, host_bytes);
		free(res);
		return VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY;
	}
	return VIRTIO_GPU_RESP_OK_NODATA;
}

static uint32_t cmd_resource_create_2d(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_resource_create_2d c;
	struct virgl_renderer_resource_create_args args;
	uint32_t r;

	memcpy(&c, req, sizeof(c));
	args = (struct virgl_renderer_resource_create_args){
	    .handle = c.resource_id,
	    .target = PIPE_TEXTURE_2D,
	    .format = c.format,
	    .bind = VIRGL_RES_BIND_RENDER_TARGET,
	    .width = c.width,
	    .height = c.height,
	    .depth = 1,
	    .array_size = 1,
	    .flags = VIRTIO_GPU_RESOURCE_FLAG_Y_0_TOP,
	};
	r = create_resource(d, &args, what);
	if (r == VIRTIO_GPU_RESP_OK_NODATA)
		resource(d, c.resource_id)->is_2d = true;
	return r;
}

static uint32_t cmd_resource_create_3d(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_resource_create_3d c;
	struct virgl_renderer_resource_create_args args;

	memcpy(&c, req, sizeof(c));
	args = (struct virgl_renderer_resource_create_args){
	    .handle = c.resource_id,
	    .target = c.target,
	    .format = c.format,
	    .bind = c.bind,
	    .width = c.width,
	    .height = c.height,
	    .depth = c.depth,
	    .array_size = c.array_size,
	    .last_level = c.last_level,
	    .nr_samples = c.nr_samples,
	    .flags = c.flags,
	};
	return create_resource(d, &args, what);
}

static uint32_t cmd_resource_unref(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_resource_unref c;
	struct vgpu_resource *res;

	memcpy(&c, req, sizeof(c));
	res = owned_resource(d, c.resource_id, what);
	if (!res)
		return VIRTIO_GPU_RESP_ERR_INVALID_RESOURCE_ID;
	for (uint32_t i = 0; i < VGPU_MAX_SCANOUTS; i++)
		if (d->scanouts[i].resource_id == res->id)
			d->scanouts[i].resource_id = 0;
	for (uint32_t i = 0; i < VGPU_MAX_CONTEXTS; i++)
		if (d->ctxs[i].ctx)
			stream_cost_resource_destroy(gpu_context_stream_cost(d->ctxs[i].ctx),
						     res->id);
	predict_map_remove(&d->resources, res->id);
	release_backing(d, res);
	resource_quota_release(&d->quota, res->host_bytes);
	resource_free(res);
	return VIRTIO_GPU_RESP_OK_NODATA;
}

static uint32_t cmd_attach_backing(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_resource_attach_backing c;
	struct vgpu_resource *res;
	const struct virtio_gpu_mem_entry *entries =
	    (const void *)((const uint8_t *)req + sizeof(c));
	size_t size;
	uint64_t span;
	int r;

	memcpy(&c, req, sizeof(c));
	res = owned_resource(d, c.resource_id, what);
	if (!res)
		return VIRTIO_GPU_RESP_ERR_INVALID_RESOURCE_ID;
	if (res->entries) {
		*what = "resource already has a backing";
		return VIRTIO_GPU_RESP_ERR_UNSPEC;
	}
	size = (size_t)c.nr_entries * sizeof(struct virtio_gpu_mem_entry);
	res->entries = malloc(size);
	if (!res->entries)
		return VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY;
	memcpy(res->entries, entries, size);
	span = vgpu_limits_backing_bytes(res->entries, c.nr_entries);
	/* Limits before anything is translated: a refusal holds nothing. */
	if (vgpu_limits_may_attach(&d->backing, c.nr_entries, span, what) < 0) {
		free(res->entries);
		res->entries = NULL;
		return VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY;
	}
	res->n_entries = c.nr_entries;
	r = map_backing(d, res);
	if (r < 0) {
		free(res->entries);
		res->entries = NULL;
		res->n_entries = 0;
		*what = r == -ENOMEM ? "out of memory" : "backing page outside guest memory";
		return r == -ENOMEM ? VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY
				    : VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	}
	res->backing_bytes = span;
	vgpu_backing_usage_add(&d->backing, res->n_entries, span);
	return VIRTIO_GPU_RESP_OK_NODATA;
}

static uint32_t cmd_detach_backing(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_resource_detach_backing c;
	struct vgpu_resource *res;

	memcpy(&c, req, sizeof(c));
	res = owned_resource(d, c.resource_id, what);
	if (!res)
		return VIRTIO_GPU_RESP_ERR_INVALID_RESOURCE_ID;
	release_backing(d, res);
	return VIRTIO_GPU_RESP_OK_NODATA;
}

static uint32_t cmd_transfer_to_host_2d(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_transfer_to_host_2d c;
	struct vgpu_resource *res;
	struct virgl_box box;

	memcpy(&c, req, sizeof(c));
	res = owned_resource(d, c.resource_id, what);
	if (!res)
		return VIRTIO_GPU_RESP_ERR_INVALID_RESOURCE_ID;
	if (res->is_2d && res->ctx_refs == 0) {
		if (!res->iov) {
			*what = "resource has no backing";
			return VIRTIO_GPU_RESP_ERR_UNSPEC;
		}
		if ((uint64_t)c.r.x + c.r.width > res->width ||
		    (uint64_t)c.r.y + c.r.height > res->height) {
			*what = "transfer rectangle outside the resource";
			return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
		}
		res->stale = true;
		return VIRTIO_GPU_RESP_OK_NODATA;
	}
	box = (struct virgl_box){c.r.x, c.r.y, 0, c.r.width, c.r.height, 1};
	if (virgl_renderer_transfer_write_iov(res->id, 0, 0, 0, 0, &box, c.offset, NULL, 0)) {
		*what = "virglrenderer refused the transfer";
		return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	}
	return VIRTIO_GPU_RESP_OK_NODATA;
}

/* Tells the vertex-data watchers of context @ctx what a buffer transfer wrote. */
static void note_buffer_write(struct vgpu_device *d, struct gpu_context *ctx,
			      const struct vgpu_resource *res, uint64_t offset, uint32_t x,
			      uint32_t w)
{
	uint8_t *copy;
	size_t done;

	if (res->target != PIPE_BUFFER || !res->iov || w == 0 || w > (1u << 20))
		return;
	copy = malloc(w);
	if (!copy)
		return;
	done = virtqueue_iov_read(res->iov, res->iov_n, (size_t)offset, copy, w);
	if (done == w)
		stream_cost_resource_write(gpu_context_stream_cost(ctx), res->id, x, copy, w);
	free(copy);
}

static uint32_t cmd_transfer_3d(struct vgpu_device *d, const void *req, bool to_host,
				const char **what)
{
	struct virtio_gpu_transfer_host_3d c;
	struct vgpu_resource *res;
	struct gpu_context *ctx;
	struct virgl_box box;
	uint32_t err, virgl_ctx = 0;
	int r;

	memcpy(&c, req, sizeof(c));
	res = owned_resource(d, c.resource_id, what);
	if (!res)
		return VIRTIO_GPU_RESP_ERR_INVALID_RESOURCE_ID;
	ctx = live_ctx(d, c.hdr.ctx_id, NULL, &err);
	if (c.hdr.ctx_id && !ctx) {
		*what = "no such context";
		return err;
	}
	if (ctx)
		virgl_ctx = gpu_context_id(ctx);
	box = (struct virgl_box){c.box.x, c.box.y, c.box.z, c.box.w, c.box.h, c.box.d};
	if (to_host) {
		if (ctx)
			note_buffer_write(d, ctx, res, c.offset, c.box.x, c.box.w);
		r = virgl_renderer_transfer_write_iov(res->id, virgl_ctx, (int)c.level, c.stride,
						      c.layer_stride, &box, c.offset, NULL, 0);
	} else {
		r = virgl_renderer_transfer_read_iov(res->id, virgl_ctx, c.level, c.stride,
						     c.layer_stride, &box, c.offset, NULL, 0);
	}
	if (r) {
		*what = "virglrenderer refused the transfer";
		return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	}
	return VIRTIO_GPU_RESP_OK_NODATA;
}

static void announce_scanout(struct vgpu_device *d, uint32_t i)
{
	struct scanout *s = &d->scanouts[i];

	if (vgpu_display_scanout(&d->display, i, s->resource_id ? s->r.width : 0,
				 s->resource_id ? s->r.height : 0) == 0)
		s->announced = true;
}

static uint32_t cmd_set_scanout(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_set_scanout c;
	struct vgpu_resource *res;
	struct scanout *s;

	memcpy(&c, req, sizeof(c));
	if (c.scanout_id >= VGPU_MAX_SCANOUTS) {
		*what = "no such scanout";
		return VIRTIO_GPU_RESP_ERR_INVALID_SCANOUT_ID;
	}
	s = &d->scanouts[c.scanout_id];
	if (c.resource_id == 0 || c.r.width == 0 || c.r.height == 0) {
		s->resource_id = 0;
		announce_scanout(d, c.scanout_id);
		return VIRTIO_GPU_RESP_OK_NODATA;
	}
	res = owned_resource(d, c.resource_id, what);
	if (!res)
		return VIRTIO_GPU_RESP_ERR_INVALID_RESOURCE_ID;
	if (c.r.x > res->width || c.r.y > res->height || c.r.width > res->width - c.r.x ||
	    c.r.height > res->height - c.r.y) {
		*what = "scanout rectangle outside the resource";
		return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	}
	/* QEMU makes a new console surface for each VHOST_USER_GPU_SCANOUT:
	 * a page flip to another resource of the same size is not one. */
	if (!s->resource_id || s->r.width != c.r.width || s->r.height != c.r.height)
		s->announced = false;
	s->resource_id = c.resource_id;
	s->r = c.r;
	if (!s->announced)
		announce_scanout(d, c.scanout_id);
	return VIRTIO_GPU_RESP_OK_NODATA;
}

/*
 * Reads the @w x @h pixels at (@x, @y) of @res (4 bytes each) into @dst,
 * rows of 4 * @w bytes. A 2D resource no context uses shows its backing,
 * as QEMU's 2D device does; anything else is read back from the renderer.
 * False when neither has them.
 */
static bool read_pixels(const struct vgpu_resource *res, uint32_t x, uint32_t y, uint32_t w,
			uint32_t h, uint8_t *dst)
{
	size_t stride = (size_t)res->width * 4, row_len = (size_t)w * 4;
	struct virgl_box box = {x, y, 0, w, h, 1};
	struct iovec iov = {dst, row_len * h};

	if ((uint64_t)x + w > res->width || (uint64_t)y + h > res->height)
		return false;
	if (!res->is_2d || !res->iov || res->ctx_refs)
		return virgl_renderer_transfer_read_iov(res->id, 0, 0, (uint32_t)row_len, 0, &box,
							0, &iov, 1) == 0;
	for (uint32_t row = 0; row < h; row++, dst += row_len) {
		size_t off = (size_t)(y + row) * stride + (size_t)x * 4;

		if (virtqueue_iov_read(res->iov, res->iov_n, off, dst, row_len) < row_len)
			return false;
	}
	return true;
}

/* Sends rows [y, y + h) of scanout @i to QEMU. */
static void update_scanout(struct vgpu_device *d, uint32_t i, uint32_t y, uint32_t h)
{
	struct scanout *s = &d->scanouts[i];
	struct vgpu_resource *res = resource(d, s->resource_id);
	uint8_t *pixels;

	if (!res || h == 0 || d->display.fd < 0)
		return;
	if (!s->announced)
		announce_scanout(d, i);
	pixels = malloc((size_t)s->r.width * 4 * h);
	if (!pixels)
		return;
	if (read_pixels(res, s->r.x, s->r.y + y, s->r.width, h, pixels))
		vgpu_display_update(&d->display, i, 0, y, s->r.width, h, pixels);
	free(pixels);
}

static uint32_t cmd_resource_flush(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_resource_flush c;

	memcpy(&c, req, sizeof(c));
	if (!resource(d, c.resource_id)) {
		*what = "no such resource";
		return VIRTIO_GPU_RESP_ERR_INVALID_RESOURCE_ID;
	}
	for (uint32_t i = 0; i < VGPU_MAX_SCANOUTS; i++) {
		struct scanout *s = &d->scanouts[i];
		uint64_t top, bottom;

		if (s->resource_id != c.resource_id)
			continue;
		/* The flushed rows, in the scanout's coordinates. */
		top = c.r.y > s->r.y ? c.r.y - s->r.y : 0;
		bottom = (uint64_t)c.r.y + c.r.height - s->r.y;
		if ((uint64_t)c.r.y + c.r.height <= s->r.y || top >= s->r.height)
			continue;
		if (bottom > s->r.height)
			bottom = s->r.height;
		update_scanout(d, i, (uint32_t)top, (uint32_t)(bottom - top));
	}
	return VIRTIO_GPU_RESP_OK_NODATA;
}

static uint32_t cmd_get_display_info(struct vgpu_device *d, enum vgpu_queue q,
				     const struct virtqueue_elem *elem, const void *req)
{
	struct virtio_gpu_ctrl_hdr hdr;
	struct virtio_gpu_resp_display_info info = *vgpu_display_info(&d->display);

	memcpy(&hdr, req, sizeof(hdr));
	info.hdr.flags = hdr.flags & VIRTIO_GPU_FLAG_FENCE;
	info.hdr.fence_id = hdr.flags & VIRTIO_GPU_FLAG_FENCE ? hdr.fence_id : 0;
	info.hdr.ctx_id = hdr.flags & VIRTIO_GPU_FLAG_FENCE ? hdr.ctx_id : 0;
	answer(d, q, elem, &info, sizeof(info));
	return 0;
}

/* GET_EDID: QEMU's EDID of the scanout, asked over the display channel. */
static uint32_t cmd_get_edid(struct vgpu_device *d, enum vgpu_queue q,
			     const struct virtqueue_elem *elem, const void *req, const char **what)
{
	struct virtio_gpu_cmd_get_edid c;
	struct virtio_gpu_resp_edid resp;
	int r;

	memcpy(&c, req, sizeof(c));
	if (c.scanout >= VGPU_MAX_SCANOUTS) {
		*what = "no such scanout";
		return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	}
	memset(&resp, 0, sizeof(resp));
	r = vgpu_display_edid(&d->display, c.scanout, &resp);
	if (r == -EINVAL) {
		*what = "EDID of a scanout QEMU does not show";
		return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	}
	if (r < 0) {
		*what = r == -ENOTSUP ? "no EDID: QEMU's display channel does not offer it"
				      : "no EDID: the display channel broke";
		return VIRTIO_GPU_RESP_ERR_UNSPEC;
	}
	resp.hdr.flags = c.hdr.flags & VIRTIO_GPU_FLAG_FENCE;
	resp.hdr.fence_id = c.hdr.flags & VIRTIO_GPU_FLAG_FENCE ? c.hdr.fence_id : 0;
	resp.hdr.ctx_id = c.hdr.flags & VIRTIO_GPU_FLAG_FENCE ? c.hdr.ctx_id : 0;
	answer(d, q, elem, &resp, sizeof(resp));
	return 0;
}

static uint32_t cmd_get_capset_info(struct vgpu_device *d, enum vgpu_queue q,
				    const struct virtqueue_elem *elem, const void *req,
				    const char **what)
{
	struct virtio_gpu_get_capset_info c;
	struct virtio_gpu_resp_capset_info resp = {.hdr.type = VIRTIO_GPU_RESP_OK_CAPSET_INFO};
	uint32_t ver = 0, size = 0;

	memcpy(&c, req, sizeof(c));
	if (c.capset_index >= vgpu_device_num_capsets()) {
		*what = "no such capset index";
		return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	}
	resp.capset_id = c.capset_index == 0 ? VIRTIO_GPU_CAPSET_VIRGL : VIRTIO_GPU_CAPSET_VIRGL2;
	virgl_renderer_get_cap_set(resp.capset_id, &ver, &size);
	resp.capset_max_version = ver;
	resp.capset_max_size = size;
	answer(d, q, elem, &resp, sizeof(resp));
	return 0;
}

static uint32_t cmd_get_capset(struct vgpu_device *d, enum vgpu_queue q,
			       const struct virtqueue_elem *elem, const void *req,
			       const char **what)
{
	struct virtio_gpu_get_capset c;
	struct virtio_gpu_resp_capset *resp;
	uint32_t ver = 0, size = 0;

	memcpy(&c, req, sizeof(c));
	if (c.capset_id != VIRTIO_GPU_CAPSET_VIRGL && c.capset_id != VIRTIO_GPU_CAPSET_VIRGL2) {
		*what = "no such capset";
		return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	}
	virgl_renderer_get_cap_set(c.capset_id, &ver, &size);
	if (size == 0 || c.capset_version > ver) {
		*what = "capset version not offered";
		return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	}
	if (virtqueue_elem_in_size(elem) < sizeof(*resp) + size) {
		*what = "answer buffer too small for the capset";
		return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	}
	resp = calloc(1, sizeof(*resp) + size);
	if (!resp)
		return VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY;
	resp->hdr.type = VIRTIO_GPU_RESP_OK_CAPSET;
	virgl_renderer_fill_caps(c.capset_id, c.capset_version, resp->capset_data);
	answer(d, q, elem, resp, sizeof(*resp) + size);
	free(resp);
	return 0;
}

static uint32_t cmd_ctx_create(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_ctx_create c;
	char name[sizeof(c.debug_name) + 1];
	uint32_t slot = VGPU_MAX_CONTEXTS, j = 0;

	memcpy(&c, req, sizeof(c));
	if (c.hdr.ctx_id == 0 || ctx_slot(d, c.hdr.ctx_id) >= 0) {
		*what = "context id 0 or already in use";
		return VIRTIO_GPU_RESP_ERR_INVALID_CONTEXT_ID;
	}
	if (c.context_init & 0xffu) {
		/* A capset other than virgl's (venus, cross-domain): not offered. */
		*what = "context type not offered";
		return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	}
	for (uint32_t i = 0; i < VGPU_MAX_CONTEXTS; i++) {
		if (!d->ctxs[i].guest_id) {
			slot = i;
			break;
		}
	}
	if (slot == VGPU_MAX_CONTEXTS) {
		*what = "too many contexts";
		return VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY;
	}
	/* Keep what is printable of the guest's debug name. */
	for (uint32_t i = 0; i < c.nlen && c.debug_name[i]; i++)
		name[j++] =
		    (c.debug_name[i] >= 0x20 && c.debug_name[i] < 0x7f) ? c.debug_name[i] : '?';
	name[j] = '\0';
	d->ctxs[slot].ctx = worker_session_context_create(d->opt.session, slot + 1,
							  j ? name : "unnamed", resource_memory, d);
	if (!d->ctxs[slot].ctx) {
		*what = "the renderer cannot create the context";
		return VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY;
	}
	d->ctxs[slot].guest_id = c.hdr.ctx_id;
	dev_log(LOG_LEVEL_INFO, d, "guest context %u \"%s\" created", c.hdr.ctx_id,
		gpu_context_name(d->ctxs[slot].ctx));
	return VIRTIO_GPU_RESP_OK_NODATA;
}

static uint32_t cmd_ctx_destroy(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_ctx_destroy c;
	int slot;

	memcpy(&c, req, sizeof(c));
	slot = ctx_slot(d, c.hdr.ctx_id);
	if (slot < 0) {
		*what = "no such context";
		return VIRTIO_GPU_RESP_ERR_INVALID_CONTEXT_ID;
	}
	ctx_free(d, (uint32_t)slot);
	return VIRTIO_GPU_RESP_OK_NODATA;
}

static uint32_t cmd_ctx_resource(struct vgpu_device *d, const void *req, bool attach,
				 const char **what)
{
	struct virtio_gpu_ctx_resource c;
	struct vgpu_resource *res;
	struct gpu_context *ctx;
	uint32_t err;

	memcpy(&c, req, sizeof(c));
	ctx = live_ctx(d, c.hdr.ctx_id, NULL, &err);
	if (!ctx) {
		*what = "no such context";
		return err;
	}
	res = owned_resource(d, c.resource_id, what);
	if (!res)
		return VIRTIO_GPU_RESP_ERR_INVALID_RESOURCE_ID;
	if (attach) {
		if (res->stale) {
			struct virgl_box all = {0, 0, 0, res->width, res->height, 1};

			virgl_renderer_transfer_write_iov(res->id, 0, 0, 0, 0, &all, 0, NULL, 0);
			res->stale = false;
		}
		res->ctx_refs++;
		virgl_renderer_ctx_attach_resource((int)gpu_context_id(ctx), (int)res->id);
		stream_cost_resource_create(gpu_context_stream_cost(ctx), res->id,
					    &(struct predict_resource_desc){
						.target = res->target,
						.format = res->format,
						.width = res->width,
						.height = res->height,
						.depth = 1,
						.array_size = 1,
					    });
	} else {
		if (res->ctx_refs)
			res->ctx_refs--;
		virgl_renderer_ctx_detach_resource((int)gpu_context_id(ctx), (int)res->id);
		stream_cost_resource_destroy(gpu_context_stream_cost(ctx), res->id);
	}
	return VIRTIO_GPU_RESP_OK_NODATA;
}

/* The guest's stream or the scheduler ended context @slot; later requests naming it fail. */
static void kill_ctx(struct vgpu_device *d, int slot, const char *why)
{
	uint32_t guest_id = d->ctxs[slot].guest_id;

	dev_log(LOG_LEVEL_ERROR, d, "guest context %u \"%s\": %s; the context is destroyed",
		guest_id, gpu_context_name(d->ctxs[slot].ctx), why);
	ctx_free(d, (uint32_t)slot);
	d->ctxs[slot].guest_id = guest_id;
	d->ctxs[slot].dead = true;
}

/* SUBMIT_3D's answer while it holds the control queue. */
#define HELD UINT32_MAX

/* The runner's ops: the pending list holds each piece's fence. */
static bool fence_room(void *data)
{
	const struct vgpu_device *d = data;

	return d->pending_n < VGPU_MAX_PENDING;
}

static uint32_t next_fence(void *data)
{
	const struct vgpu_device *d = data;

	return d->last_fence + 1;
}

static void piece_dispatched(void *data, struct gpu_context *ctx, uint32_t fence_id, uint64_t seq)
{
	struct vgpu_device *d = data;
	struct pending *p = &d->pending[(d->pending_head + d->pending_n) % VGPU_MAX_PENDING];

	memset(p, 0, sizeof(*p));
	p->fence_id = fence_id;
	p->seq = seq;
	p->slot = gpu_context_id(ctx); /* context slot + 1 (cmd_ctx_create()) */
	d->last_fence = fence_id;
	d->pending_n++;
}

static const struct group_runner_ops group_ops = {
    .version = GROUP_RUNNER_OPS_VERSION,
    .fence_room = fence_room,
    .next_fence = next_fence,
    .dispatched = piece_dispatched,
};

/*
 * Where the runner left the held SUBMIT_3D's group of context @slot
 * (@err, @wait): HELD while it waits; otherwise its answer (0 when the
 * last piece's fence answers it). A stream the decoder rejects, a group
 * the scheduler refuses or a fence that cannot be created costs the
 * context.
 */
static uint32_t group_answer(struct vgpu_device *d, int slot, int err, enum group_wait wait,
			     const char **what)
{
	struct virtio_gpu_ctrl_hdr hdr;

	switch (err) {
	case 0:
		break;
	case -EPROTO:
		kill_ctx(d, slot, "malformed command stream");
		*what = "malformed command stream";
		return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	case -EPERM:
		kill_ctx(d, slot,
			 "unschedulable: its command group never fits the safety domains' gaps");
		*what = "refused by the scheduler";
		return VIRTIO_GPU_RESP_ERR_UNSPEC;
	default:
		kill_ctx(d, slot, "the renderer cannot create a fence");
		return VIRTIO_GPU_RESP_ERR_UNSPEC;
	}
	if (wait != GROUP_DONE) {
		d->hold = HOLD_GROUP;
		return HELD;
	}
	memcpy(&hdr, d->req, sizeof(hdr));
	if (hdr.flags & VIRTIO_GPU_FLAG_FENCE) {
		/* The last piece's fence, the newest: it answers the request. */
		answer_later(&d->pending[(d->pending_head + d->pending_n - 1) % VGPU_MAX_PENDING],
			     &d->elem, &hdr);
		return 0;
	}
	return VIRTIO_GPU_RESP_OK_NODATA;
}

/*
 * SUBMIT_3D: one command group, handed to the runner. Returns the answer
 * type, 0 when answered (or to be answered at its fence), or HELD when it
 * holds the queue.
 */
static uint32_t cmd_submit_3d(struct vgpu_device *d, const char **what)
{
	struct virtio_gpu_cmd_submit c;
	struct gpu_context *ctx;
	enum group_wait wait;
	uint32_t err;
	int slot = -1, r;

	memcpy(&c, d->req, sizeof(c));
	ctx = live_ctx(d, c.hdr.ctx_id, &slot, &err);
	if (!ctx) {
		*what = "no such context";
		return err;
	}
	if (c.size == 0)
		return VIRTIO_GPU_RESP_OK_NODATA;
	r = group_runner_submit(d->runner, ctx, (const uint32_t *)(d->req + sizeof(c)), c.size / 4,
				&wait);
	return group_answer(d, slot, r, wait, what);
}

/* Runs the request in d->req (d->req_len bytes) from chain d->elem. */
static uint32_t run(struct vgpu_device *d, enum vgpu_queue q, const char **what)
{
	const void *req = d->req;
	struct virtio_gpu_ctrl_hdr hdr;

	memcpy(&hdr, req, sizeof(hdr));
	switch (hdr.type) {
	case VIRTIO_GPU_CMD_GET_DISPLAY_INFO:
		return cmd_get_display_info(d, q, &d->elem, req);
	case VIRTIO_GPU_CMD_RESOURCE_CREATE_2D:
		return cmd_resource_create_2d(d, req, what);
	case VIRTIO_GPU_CMD_RESOURCE_UNREF:
		return cmd_resource_unref(d, req, what);
	case VIRTIO_GPU_CMD_SET_SCANOUT:
		return cmd_set_scanout(d, req, what);
	case VIRTIO_GPU_CMD_RESOURCE_FLUSH:
		return cmd_resource_flush(d, req, what);
	case VIRTIO_GPU_CMD_TRANSFER_TO_HOST_2D:
		return cmd_transfer_to_host_2d(d, req, what);
	case VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING:
		return cmd_attach_backing(d, req, what);
	case VIRTIO_GPU_CMD_RESOURCE_DETACH_BACKING:
		return cmd_detach_backing(d, req, what);
	case VIRTIO_GPU_CMD_GET_CAPSET_INFO:
		return cmd_get_capset_info(d, q, &d->elem, req, what);
	case VIRTIO_GPU_CMD_GET_CAPSET:
		return cmd_get_capset(d, q, &d->elem, req, what);
	case VIRTIO_GPU_CMD_GET_EDID:
		return cmd_get_edid(d, q, &d->elem, req, what);
	case VIRTIO_GPU_CMD_CTX_CREATE:
		return cmd_ctx_create(d, req, what);
	case VIRTIO_GPU_CMD_CTX_DESTROY:
		return cmd_ctx_destroy(d, req, what);
	case VIRTIO_GPU_CMD_CTX_ATTACH_RESOURCE:
		return cmd_ctx_resource(d, req, true, what);
	case VIRTIO_GPU_CMD_CTX_DETACH_RESOURCE:
		return cmd_ctx_resource(d, req, false, what);
	case VIRTIO_GPU_CMD_RESOURCE_CREATE_3D:
		return cmd_resource_create_3d(d, req, what);
	case VIRTIO_GPU_CMD_TRANSFER_TO_HOST_3D:
		return cmd_transfer_3d(d, req, true, what);
	case VIRTIO_GPU_CMD_TRANSFER_FROM_HOST_3D:
		return cmd_transfer_3d(d, req, false, what);
	case VIRTIO_GPU_CMD_SUBMIT_3D:
		return cmd_submit_3d(d, what);
	default:
		*what = "command not served by this device";
		return VIRTIO_GPU_RESP_ERR_UNSPEC;
	}
}

static void cursor(struct vgpu_device *d, const struct virtio_gpu_update_cursor *c)
{
	const struct virtio_gpu_cursor_pos *pos = &c->pos;
	struct vgpu_resource *res;
	uint32_t *image;

	if (pos->scanout_id >= VGPU_MAX_SCANOUTS || d->display.fd < 0)
		return;
	if (c->hdr.type == VIRTIO_GPU_CMD_MOVE_CURSOR) {
		vgpu_display_cursor_pos(&d->display, pos->scanout_id, pos->x, pos->y, false);
		return;
	}
	res = resource(d, c->resource_id);
	image = calloc(VGPU_CURSOR_SIZE * VGPU_CURSOR_SIZE, 4);
	if (res && image &&
	    read_pixels(res, 0, 0, VGPU_CURSOR_SIZE, VGPU_CURSOR_SIZE, (uint8_t *)image))
		vgpu_display_cursor_update(&d->display, pos->scanout_id, pos->x, pos->y, c->hot_x,
					   c->hot_y, image);
	else
		vgpu_display_cursor_pos(&d->display, pos->scanout_id, pos->x, pos->y, true);
	free(image);
}

/* Finishes the request in d->req with answer @type (0: already answered). */
static void finish(struct vgpu_device *d, enum vgpu_queue q, uint32_t type, const char *what)
{
	struct virtio_gpu_ctrl_hdr hdr;

	memcpy(&hdr, d->req, sizeof(hdr));
	if (type == 0)
		return;
	if (type != VIRTIO_GPU_RESP_OK_NODATA)
		guest_error(d, hdr.type, what ? what : "refused");
	if (type == VIRTIO_GPU_RESP_OK_NODATA && (hdr.flags & VIRTIO_GPU_FLAG_FENCE)) {
		struct gpu_context *ctx = NULL;
		uint32_t err;
		struct pending *p;

		if (hdr.ctx_id)
			ctx = live_ctx(d, hdr.ctx_id, NULL, &err);
		p = add_fence(d, ctx ? gpu_context_id(ctx) : 0);
		if (p) {
			answer_later(p, &d->elem, &hdr);
			return;
		}
	}
	answer_type(d, q, &d->elem, &hdr, type);
}

/*
 * Reads the request of chain d->elem into d->req: only the bytes its
 * command can use (vgpu_cmd_needed_size()), so a chain that points a
 * small command at a huge buffer costs no copy. A readable part larger
 * than the command needs by more than VGPU_REQUEST_SLACK, or a command
 * larger than VGPU_MAX_REQUEST, is refused. Returns 0 or the error
 * answer; *@copied is the bytes copied out of guest memory.
 */
static uint32_t take_request(struct vgpu_device *d, enum vgpu_queue q, const char **what,
			     size_t *copied)
{
	size_t have = virtqueue_elem_out_size(&d->elem);
	uint8_t fixed[VGPU_CMD_MAX_FIXED];
	size_t head = virtqueue_elem_read(&d->elem, fixed, sizeof(fixed));
	uint64_t need = vgpu_cmd_needed_size(fixed, head);
	size_t len;

	/* The header is always there to answer from (zeroes past the end). */
	memset(d->req, 0, sizeof(struct virtio_gpu_ctrl_hdr));
	memcpy(d->req, fixed,
	       head < sizeof(struct virtio_gpu_ctrl_hdr) ? head
							 : sizeof(struct virtio_gpu_ctrl_hdr));
	d->req_len = head;
	*copied = head;
	if (need > VGPU_MAX_REQUEST || have > VGPU_MAX_REQUEST) {
		*what = "request larger than the device accepts";
		return VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY;
	}
	if (have > need + VGPU_REQUEST_SLACK) {
		*what = "request buffers far larger than the command needs";
		return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	}
	len = have < need ? have : (size_t)need;
	if (len > d->req_cap) {
		uint8_t *p = realloc(d->req, len);

		if (!p)
			return VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY;
		d->req = p;
		d->req_cap = len;
	}
	if (len > head) {
		d->req_len = virtqueue_elem_read(&d->elem, d->req, len);
		*copied += d->req_len;
	} else {
		memcpy(d->req, fixed, len);
		d->req_len = len;
	}
	return vgpu_cmd_check(d->req, d->req_len, q, what);
}

/* The cursor queue: small requests, never held, answered at once. */
static int process_cursor(struct vgpu_device *d)
{
	struct virtqueue *vq = d->opt.queues[VGPU_QUEUE_CURSOR];
	struct virtqueue_elem *e = &d->cursor_elem;
	int served = 0, r;

	d->backlog[VGPU_QUEUE_CURSOR] = false;
	for (;;) {
		struct virtio_gpu_update_cursor c;
		const char *what = NULL;
		size_t len;
		uint32_t type;

		if (vgpu_budget_spent(&d->budget)) {
			d->backlog[VGPU_QUEUE_CURSOR] = true;
			r = 0;
			break;
		}
		r = virtqueue_pop(vq, d->opt.mem, e);
		if (r <= 0)
			break;
		len = virtqueue_elem_out_size(e);
		memset(&c, 0, sizeof(c));
		/* Only the command is read, whatever the buffer's size. */
		vgpu_budget_take(&d->budget, virtqueue_elem_read(e, &c, sizeof(c)));
		type =
		    vgpu_cmd_check(&c, len < sizeof(c) ? len : sizeof(c), VGPU_QUEUE_CURSOR, &what);
		if (type)
			guest_error(d, c.hdr.type, what);
		else
			cursor(d, &c);
		answer_type(d, VGPU_QUEUE_CURSOR, e, &c.hdr,
			    type ? type : VIRTIO_GPU_RESP_OK_NODATA);
		served++;
	}
	if (served)
		virtqueue_notify(vq);
	if (r < 0) {
		dev_log(LOG_LEVEL_ERROR, d,
			"the guest broke the cursor queue (bad descriptor chain); it stops until "
			"the device is reset");
		return -EINVAL;
	}
	return 0;
}

int vgpu_device_process(struct vgpu_device *dev, enum vgpu_queue q)
{
	struct vgpu_device *d = dev;
	struct virtqueue *vq = d->opt.queues[q];
	int served = 0, r;

	if (q == VGPU_QUEUE_CURSOR)
		return process_cursor(d);
	if (d->hold != HOLD_NONE)
		return 0;
	d->backlog[q] = false;
	for (;;) {
		const char *what = NULL;
		uint32_t type;
		size_t copied = 0;

		if (vgpu_budget_spent(&d->budget)) {
			/* The rest waits for the next wake-up (vgpu_device_backlog()). */
			d->backlog[q] = true;
			r = 0;
			break;
		}
		r = virtqueue_pop(vq, d->opt.mem, &d->elem);
		if (r <= 0)
			break;
		served++;
		if (d->req_cap < sizeof(struct virtio_gpu_ctrl_hdr)) {
			d->req = realloc(d->req, 4096);
			d->req_cap = d->req ? 4096 : 0;
			if (!d->req)
				return -ENOMEM;
		}
		type = take_request(d, q, &what, &copied);
		vgpu_budget_take(&d->budget, copied);
		if (type) {
			struct virtio_gpu_ctrl_hdr hdr;

			memset(&hdr, 0, sizeof(hdr));
			memcpy(&hdr, d->req, d->req_len < sizeof(hdr) ? d->req_len : sizeof(hdr));
			guest_error(d, hdr.type, what ? what : "bad request");
			answer_type(d, q, &d->elem, &hdr, type);
			continue;
		}
		type = run(d, q, &what);
		if (type == HELD)
			break;
		finish(d, q, type, what);
	}
	if (served)
		virtqueue_notify(vq);
	if (r < 0) {
		dev_log(LOG_LEVEL_ERROR, d,
			"the guest broke the control queue (bad descriptor chain); it stops until "
			"the device is reset");
		return -EINVAL;
	}
	return 0;
}

bool vgpu_device_blocked(const struct vgpu_device *dev)
{
	return dev->hold != HOLD_NONE;
}

/* Goes on with the held SUBMIT_3D's group. True when it no longer holds the queue. */
static bool retry_held(struct vgpu_device *d)
{
	struct virtio_gpu_cmd_submit c;
	const char *what = NULL;
	enum group_wait wait;
	uint32_t type;
	int r = group_runner_resume(d->runner, &wait);

	if (r == 0 && wait != GROUP_DONE)
		return false;
	if (d->hold == HOLD_ABANDONED) {
		/* The answer to a reset device's request came: no request waits for it. */
		d->hold = HOLD_NONE;
		return true;
	}
	d->hold = HOLD_NONE;
	memcpy(&c, d->req, sizeof(c));
	type = group_answer(d, ctx_slot(d, c.hdr.ctx_id), r, wait, &what);
	finish(d, VGPU_QUEUE_CONTROL, type, what);
	virtqueue_notify(d->opt.queues[VGPU_QUEUE_CONTROL]);
	return true;
}

int vgpu_device_poll(struct vgpu_device *dev)
{
	uint32_t before = dev->pending_n;

	renderer_take_completions(dev->renderer, on_fence, dev);
	if (dev->pending_n != before)
		virtqueue_notify(dev->opt.queues[VGPU_QUEUE_CONTROL]);
	if (dev->hold != HOLD_NONE && !retry_held(dev))
		return 0;
	return vgpu_device_process(dev, VGPU_QUEUE_CONTROL);
}

void vgpu_device_wakeup(struct vgpu_device *dev)
{
	vgpu_budget_refill(&dev->budget);
}

bool vgpu_device_backlog(const struct vgpu_device *dev, enum vgpu_queue q)
{
	/* A held control queue resumes on its grant or completion, not on the budget. */
	if (q == VGPU_QUEUE_CONTROL && dev->hold != HOLD_NONE)
		return false;
	return dev->backlog[q];
}

uint32_t vgpu_device_inflight(const struct vgpu_device *dev)
{
	return dev->pending_n;
}
