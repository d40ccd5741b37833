// SPDX-License-Identifier: MIT
/*
 * The virtio-gpu device of a VM (see vgpu_device.h). Resources and their
 * backing are vgpu_resources.c's, scanouts and capsets vgpu_scanout.c's
 * (vgpu_device_priv.h).
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

#include "worker/host_work.h"
#include "worker/gpu_context.h"
#include "worker/group_runner.h"
#include "predict.h"
#include "common/util.h"
#include "worker/vhost-user/vgpu_device.h"
#include "worker/vhost-user/vgpu_device_priv.h"
#include "worker/vhost-user/vgpu_display.h"
#include "worker/resource_quota.h"
#include "worker/vhost-user/vgpu_limits.h"

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

void vgpu_resource_free(struct vgpu_resource *res)
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
	/* Its groups are done: freeing the guest's storage is bulk host work. */
	host_work_begin(d->quota.used);
	for (size_t i = 0; (res = predict_map_next(&d->resources, &i));)
		vgpu_resource_free(res);
	host_work_end();
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

void vgpu_answer(struct vgpu_device *d, enum vgpu_queue q, const struct virtqueue_elem *elem,
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
	vgpu_answer(d, q, elem, &resp, sizeof(resp));
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
			vgpu_answer(d, VGPU_QUEUE_CONTROL, &e, &p->resp, sizeof(p->resp));
		}
		d->pending_head = (d->pending_head + 1) % VGPU_MAX_PENDING;
		d->pending_n--;
	}
}

/* ---- objects ------------------------------------------------------------------ */

struct vgpu_resource *vgpu_resource_get(struct vgpu_device *d, uint32_t id)
{
	return id ? predict_map_get(&d->resources, id) : NULL;
}

/* Resource @id of this VM, or NULL with *@what saying so. */
struct vgpu_resource *vgpu_owned_resource(struct vgpu_device *d, uint32_t id, const char **what)
{
	struct vgpu_resource *res = vgpu_resource_get(d, id);

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
struct gpu_context *vgpu_live_ctx(struct vgpu_device *d, uint32_t guest_id, int *slot_out,
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
	struct vgpu_resource *res = vgpu_resource_get(d, handle);

	if (!res || res->iov_n != 1)
		return NULL;
	*size = res->iov[0].iov_len;
	return res->iov[0].iov_base;
}

static uint32_t cmd_ctx_create(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_ctx_create c;
	char name[sizeof(c.debug_name) + 1];
	uint32_t slot = VGPU_MAX_CONTEXTS, j = 0, live = 0;

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
		if (d->ctxs[i].guest_id)
			live++;
		else if (slot == VGPU_MAX_CONTEXTS)
			slot = i;
	}
	if (vgpu_limits_may_create_context(live, vgpu_max_contexts(d->opt.worker->max_contexts),
					   what) < 0)
		return VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY;
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
	ctx = vgpu_live_ctx(d, c.hdr.ctx_id, NULL, &err);
	if (!ctx) {
		*what = "no such context";
		return err;
	}
	res = vgpu_owned_resource(d, c.resource_id, what);
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
	ctx = vgpu_live_ctx(d, c.hdr.ctx_id, &slot, &err);
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
		return vgpu_scanout_display_info(d, q, &d->elem, req);
	case VIRTIO_GPU_CMD_RESOURCE_CREATE_2D:
		return vgpu_res_create_2d(d, req, what);
	case VIRTIO_GPU_CMD_RESOURCE_UNREF:
		return vgpu_res_unref(d, req, what);
	case VIRTIO_GPU_CMD_SET_SCANOUT:
		return vgpu_scanout_set(d, req, what);
	case VIRTIO_GPU_CMD_RESOURCE_FLUSH:
		return vgpu_scanout_flush(d, req, what);
	case VIRTIO_GPU_CMD_TRANSFER_TO_HOST_2D:
		return vgpu_res_transfer_to_host_2d(d, req, what);
	case VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING:
		return vgpu_res_attach_backing(d, req, what);
	case VIRTIO_GPU_CMD_RESOURCE_DETACH_BACKING:
		return vgpu_res_detach_backing(d, req, what);
	case VIRTIO_GPU_CMD_GET_CAPSET_INFO:
		return vgpu_scanout_capset_info(d, q, &d->elem, req, what);
	case VIRTIO_GPU_CMD_GET_CAPSET:
		return vgpu_scanout_capset(d, q, &d->elem, req, what);
	case VIRTIO_GPU_CMD_GET_EDID:
		return vgpu_scanout_edid(d, q, &d->elem, req, what);
	case VIRTIO_GPU_CMD_CTX_CREATE:
		return cmd_ctx_create(d, req, what);
	case VIRTIO_GPU_CMD_CTX_DESTROY:
		return cmd_ctx_destroy(d, req, what);
	case VIRTIO_GPU_CMD_CTX_ATTACH_RESOURCE:
		return cmd_ctx_resource(d, req, true, what);
	case VIRTIO_GPU_CMD_CTX_DETACH_RESOURCE:
		return cmd_ctx_resource(d, req, false, what);
	case VIRTIO_GPU_CMD_RESOURCE_CREATE_3D:
		return vgpu_res_create_3d(d, req, what);
	case VIRTIO_GPU_CMD_TRANSFER_TO_HOST_3D:
		return vgpu_res_transfer_3d(d, req, true, what);
	case VIRTIO_GPU_CMD_TRANSFER_FROM_HOST_3D:
		return vgpu_res_transfer_3d(d, req, false, what);
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
	res = vgpu_resource_get(d, c->resource_id);
	image = calloc(VGPU_CURSOR_SIZE * VGPU_CURSOR_SIZE, 4);
	if (res && image &&
	    vgpu_scanout_read_pixels(res, 0, 0, VGPU_CURSOR_SIZE, VGPU_CURSOR_SIZE,
				     (uint8_t *)image))
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
			ctx = vgpu_live_ctx(d, hdr.ctx_id, NULL, &err);
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
