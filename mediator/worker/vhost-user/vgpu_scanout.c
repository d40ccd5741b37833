// SPDX-License-Identifier: MIT
/*
 * The VM's scanouts and capsets (vgpu_device_priv.h): SET_SCANOUT,
 * RESOURCE_FLUSH (the flushed rows read back from virglrenderer and sent
 * to QEMU as VHOST_USER_GPU_UPDATE: without a render node there is no
 * dma-buf to share), GET_DISPLAY_INFO, GET_EDID, GET_CAPSET_INFO and
 * GET_CAPSET.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <virgl/virglrenderer.h>

#include "worker/vhost-user/vgpu_device_priv.h"

static void announce_scanout(struct vgpu_device *d, uint32_t i)
{
	struct scanout *s = &d->scanouts[i];

	if (vgpu_display_scanout(&d->display, i, s->resource_id ? s->r.width : 0,
				 s->resource_id ? s->r.height : 0) == 0)
		s->announced = true;
}

uint32_t vgpu_scanout_set(struct vgpu_device *d, const void *req, const char **what)
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
	res = vgpu_owned_resource(d, c.resource_id, what);
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
bool vgpu_scanout_read_pixels(const struct vgpu_resource *res, uint32_t x, uint32_t y, uint32_t w,
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
	struct vgpu_resource *res = vgpu_resource_get(d, s->resource_id);
	uint8_t *pixels;

	if (!res || h == 0 || d->display.fd < 0)
		return;
	if (!s->announced)
		announce_scanout(d, i);
	pixels = malloc((size_t)s->r.width * 4 * h);
	if (!pixels)
		return;
	if (vgpu_scanout_read_pixels(res, s->r.x, s->r.y + y, s->r.width, h, pixels))
		vgpu_display_update(&d->display, i, 0, y, s->r.width, h, pixels);
	free(pixels);
}

uint32_t vgpu_scanout_flush(struct vgpu_device *d, const void *req, const char **what)
{
	struct virtio_gpu_resource_flush c;

	memcpy(&c, req, sizeof(c));
	if (!vgpu_resource_get(d, c.resource_id)) {
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

uint32_t vgpu_scanout_display_info(struct vgpu_device *d, enum vgpu_queue q,
				   const struct virtqueue_elem *elem, const void *req)
{
	struct virtio_gpu_ctrl_hdr hdr;
	struct virtio_gpu_resp_display_info info = *vgpu_display_info(&d->display);

	memcpy(&hdr, req, sizeof(hdr));
	info.hdr.flags = hdr.flags & VIRTIO_GPU_FLAG_FENCE;
	info.hdr.fence_id = hdr.flags & VIRTIO_GPU_FLAG_FENCE ? hdr.fence_id : 0;
	info.hdr.ctx_id = hdr.flags & VIRTIO_GPU_FLAG_FENCE ? hdr.ctx_id : 0;
	vgpu_answer(d, q, elem, &info, sizeof(info));
	return 0;
}

/* GET_EDID: QEMU's EDID of the scanout, asked over the display channel. */
uint32_t vgpu_scanout_edid(struct vgpu_device *d, enum vgpu_queue q,
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
	vgpu_answer(d, q, elem, &resp, sizeof(resp));
	return 0;
}

uint32_t vgpu_scanout_capset_info(struct vgpu_device *d, enum vgpu_queue q,
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
	vgpu_answer(d, q, elem, &resp, sizeof(resp));
	return 0;
}

uint32_t vgpu_scanout_capset(struct vgpu_device *d, enum vgpu_queue q,
			     const struct virtqueue_elem *elem, const void *req, const char **what)
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
	vgpu_answer(d, q, elem, resp, sizeof(*resp) + size);
	free(resp);
	return 0;
}
