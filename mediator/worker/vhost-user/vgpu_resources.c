// SPDX-License-Identifier: MIT
/*
 * The VM's resources (vgpu_device_priv.h): RESOURCE_CREATE_2D/3D, UNREF,
 * the guest's backing pages (ATTACH/DETACH_BACKING, mapped through guest
 * memory and counted against vgpu_limits.h and the domain's quota), and
 * the transfers between backing and host (TRANSFER_TO_HOST_2D,
 * TRANSFER_TO/FROM_HOST_3D). Every id, size and box the guest sends is
 * checked before use.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <virgl/virglrenderer.h>

#include "worker/host_work.h"
#include "worker/vhost-user/vgpu_device_priv.h"

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
	int r;

	if (args->handle == 0 || args->handle >= PREDICT_HOST_HANDLE_MIN) {
		*what = "resource id 0 or reserved for the host";
		return VIRTIO_GPU_RESP_ERR_INVALID_RESOURCE_ID;
	}
	if (vgpu_resource_get(d, args->handle)) {
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
	host_work_begin(host_bytes);
	r = virgl_renderer_resource_create(args, NULL, 0);
	host_work_end();
	if (r) {
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

uint32_t vgpu_res_create_2d(struct vgpu_device *d, const void *req, const char **what)
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
		vgpu_resource_get(d, c.resource_id)->is_2d = true;
	return r;
}

uint32_t vgpu_res_create_3d(struct vgpu_device *d, const void *req, const char **what)
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

uint32_t vgpu_res_unref(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_resource_unref c;
	struct vgpu_resource *res;

	memcpy(&c, req, sizeof(c));
	res = vgpu_owned_resource(d, c.resource_id, what);
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
	vgpu_resource_free(res);
	return VIRTIO_GPU_RESP_OK_NODATA;
}

uint32_t vgpu_res_attach_backing(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_resource_attach_backing c;
	struct vgpu_resource *res;
	const struct virtio_gpu_mem_entry *entries =
	    (const void *)((const uint8_t *)req + sizeof(c));
	size_t size;
	uint64_t span;
	int r;

	memcpy(&c, req, sizeof(c));
	res = vgpu_owned_resource(d, c.resource_id, what);
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

uint32_t vgpu_res_detach_backing(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_resource_detach_backing c;
	struct vgpu_resource *res;

	memcpy(&c, req, sizeof(c));
	res = vgpu_owned_resource(d, c.resource_id, what);
	if (!res)
		return VIRTIO_GPU_RESP_ERR_INVALID_RESOURCE_ID;
	release_backing(d, res);
	return VIRTIO_GPU_RESP_OK_NODATA;
}

uint32_t vgpu_res_transfer_to_host_2d(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_transfer_to_host_2d c;
	struct vgpu_resource *res;
	struct virgl_box box;
	int r;

	memcpy(&c, req, sizeof(c));
	res = vgpu_owned_resource(d, c.resource_id, what);
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
	host_work_begin((uint64_t)c.r.width * c.r.height * 4u);
	r = virgl_renderer_transfer_write_iov(res->id, 0, 0, 0, 0, &box, c.offset, NULL, 0);
	host_work_end();
	if (r) {
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

uint32_t vgpu_res_transfer_3d(struct vgpu_device *d, const void *req, bool to_host,
			      const char **what)
{
	struct virtio_gpu_transfer_host_3d c;
	struct vgpu_resource *res;
	struct gpu_context *ctx;
	struct virgl_box box;
	uint32_t err, virgl_ctx = 0;
	int r;

	memcpy(&c, req, sizeof(c));
	res = vgpu_owned_resource(d, c.resource_id, what);
	if (!res)
		return VIRTIO_GPU_RESP_ERR_INVALID_RESOURCE_ID;
	ctx = vgpu_live_ctx(d, c.hdr.ctx_id, NULL, &err);
	if (c.hdr.ctx_id && !ctx) {
		*what = "no such context";
		return err;
	}
	if (ctx)
		virgl_ctx = gpu_context_id(ctx);
	box = (struct virgl_box){c.box.x, c.box.y, c.box.z, c.box.w, c.box.h, c.box.d};
	/* At 4 bytes a texel: which transfers are large enough to run at idle priority. */
	host_work_begin((uint64_t)c.box.w * c.box.h * (c.box.d ? c.box.d : 1) * 4u);
	if (to_host) {
		if (ctx)
			note_buffer_write(d, ctx, res, c.offset, c.box.x, c.box.w);
		r = virgl_renderer_transfer_write_iov(res->id, virgl_ctx, (int)c.level, c.stride,
						      c.layer_stride, &box, c.offset, NULL, 0);
	} else {
		r = virgl_renderer_transfer_read_iov(res->id, virgl_ctx, c.level, c.stride,
						     c.layer_stride, &box, c.offset, NULL, 0);
	}
	host_work_end();
	if (r) {
		*what = "virglrenderer refused the transfer";
		return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	}
	return VIRTIO_GPU_RESP_OK_NODATA;
}
