// SPDX-License-Identifier: MIT
/*
 * virtio-gpu request shape checks (see virtio_gpu_cmd.h).
 */
#include <stdbool.h>
#include <string.h>

#include "worker/vhost-user/virtio_gpu_cmd.h"

#define CTRL(cmd)  ((cmd)-VIRTIO_GPU_CMD_GET_DISPLAY_INFO)
#define CMD3D(cmd) ((cmd)-VIRTIO_GPU_CMD_CTX_CREATE)

struct shape {
	const char *name;
	size_t size; /* fixed part */
};

static const struct shape ctrl2d[] = {
    [CTRL(VIRTIO_GPU_CMD_GET_DISPLAY_INFO)] = {"GET_DISPLAY_INFO",
					       sizeof(struct virtio_gpu_ctrl_hdr)},
    [CTRL(VIRTIO_GPU_CMD_RESOURCE_CREATE_2D)] = {"RESOURCE_CREATE_2D",
						 sizeof(struct virtio_gpu_resource_create_2d)},
    [CTRL(VIRTIO_GPU_CMD_RESOURCE_UNREF)] = {"RESOURCE_UNREF",
					     sizeof(struct virtio_gpu_resource_unref)},
    [CTRL(VIRTIO_GPU_CMD_SET_SCANOUT)] = {"SET_SCANOUT", sizeof(struct virtio_gpu_set_scanout)},
    [CTRL(VIRTIO_GPU_CMD_RESOURCE_FLUSH)] = {"RESOURCE_FLUSH",
					     sizeof(struct virtio_gpu_resource_flush)},
    [CTRL(VIRTIO_GPU_CMD_TRANSFER_TO_HOST_2D)] = {"TRANSFER_TO_HOST_2D",
						  sizeof(struct virtio_gpu_transfer_to_host_2d)},
    [CTRL(VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING)] =
	{"RESOURCE_ATTACH_BACKING", sizeof(struct virtio_gpu_resource_attach_backing)},
    [CTRL(VIRTIO_GPU_CMD_RESOURCE_DETACH_BACKING)] =
	{"RESOURCE_DETACH_BACKING", sizeof(struct virtio_gpu_resource_detach_backing)},
    [CTRL(VIRTIO_GPU_CMD_GET_CAPSET_INFO)] = {"GET_CAPSET_INFO",
					      sizeof(struct virtio_gpu_get_capset_info)},
    [CTRL(VIRTIO_GPU_CMD_GET_CAPSET)] = {"GET_CAPSET", sizeof(struct virtio_gpu_get_capset)},
    [CTRL(VIRTIO_GPU_CMD_GET_EDID)] = {"GET_EDID", sizeof(struct virtio_gpu_cmd_get_edid)},
};

static const struct shape ctrl3d[] = {
    [CMD3D(VIRTIO_GPU_CMD_CTX_CREATE)] = {"CTX_CREATE", sizeof(struct virtio_gpu_ctx_create)},
    [CMD3D(VIRTIO_GPU_CMD_CTX_DESTROY)] = {"CTX_DESTROY", sizeof(struct virtio_gpu_ctx_destroy)},
    [CMD3D(VIRTIO_GPU_CMD_CTX_ATTACH_RESOURCE)] = {"CTX_ATTACH_RESOURCE",
						   sizeof(struct virtio_gpu_ctx_resource)},
    [CMD3D(VIRTIO_GPU_CMD_CTX_DETACH_RESOURCE)] = {"CTX_DETACH_RESOURCE",
						   sizeof(struct virtio_gpu_ctx_resource)},
    [CMD3D(VIRTIO_GPU_CMD_RESOURCE_CREATE_3D)] = {"RESOURCE_CREATE_3D",
						  sizeof(struct virtio_gpu_resource_create_3d)},
    [CMD3D(VIRTIO_GPU_CMD_TRANSFER_TO_HOST_3D)] = {"TRANSFER_TO_HOST_3D",
						   sizeof(struct virtio_gpu_transfer_host_3d)},
    [CMD3D(VIRTIO_GPU_CMD_TRANSFER_FROM_HOST_3D)] = {"TRANSFER_FROM_HOST_3D",
						     sizeof(struct virtio_gpu_transfer_host_3d)},
    [CMD3D(VIRTIO_GPU_CMD_SUBMIT_3D)] = {"SUBMIT_3D", sizeof(struct virtio_gpu_cmd_submit)},
};

static const struct shape cursor[] = {
    {"UPDATE_CURSOR", sizeof(struct virtio_gpu_update_cursor)},
    {"MOVE_CURSOR", sizeof(struct virtio_gpu_update_cursor)},
};

static const struct shape *shape_of(uint32_t type)
{
	if (type >= VIRTIO_GPU_CMD_GET_DISPLAY_INFO &&
	    CTRL(type) < sizeof(ctrl2d) / sizeof(ctrl2d[0]))
		return &ctrl2d[CTRL(type)];
	if (type >= VIRTIO_GPU_CMD_CTX_CREATE && CMD3D(type) < sizeof(ctrl3d) / sizeof(ctrl3d[0]))
		return &ctrl3d[CMD3D(type)];
	if (type == VIRTIO_GPU_CMD_UPDATE_CURSOR || type == VIRTIO_GPU_CMD_MOVE_CURSOR)
		return &cursor[type - VIRTIO_GPU_CMD_UPDATE_CURSOR];
	return NULL;
}

const char *vgpu_cmd_name(uint32_t type)
{
	const struct shape *s = shape_of(type);

	return s && s->name ? s->name : "unknown";
}

uint64_t vgpu_cmd_needed_size(const void *req, size_t len)
{
	struct virtio_gpu_ctrl_hdr hdr;
	const struct shape *s;

	if (len < sizeof(hdr))
		return sizeof(hdr);
	memcpy(&hdr, req, sizeof(hdr));
	s = shape_of(hdr.type);
	if (!s || !s->name || len < s->size)
		return s && s->name ? s->size : sizeof(hdr);
	switch (hdr.type) {
	case VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING: {
		struct virtio_gpu_resource_attach_backing ab;

		memcpy(&ab, req, sizeof(ab));
		if (ab.nr_entries > VGPU_MAX_BACKING_ENTRIES)
			return s->size;
		return s->size + (uint64_t)ab.nr_entries * sizeof(struct virtio_gpu_mem_entry);
	}
	case VIRTIO_GPU_CMD_SUBMIT_3D: {
		struct virtio_gpu_cmd_submit sub;

		memcpy(&sub, req, sizeof(sub));
		return s->size + (uint64_t)sub.size;
	}
	default:
		return s->size;
	}
}

uint32_t vgpu_cmd_check(const void *req, size_t len, enum vgpu_queue queue, const char **what)
{
	struct virtio_gpu_ctrl_hdr hdr;
	const struct shape *s;
	bool cursor_cmd;

	if (len < sizeof(hdr)) {
		*what = "request shorter than its header";
		return VIRTIO_GPU_RESP_ERR_UNSPEC;
	}
	if (len > VGPU_MAX_REQUEST) {
		*what = "request larger than the device accepts";
		return VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY;
	}
	memcpy(&hdr, req, sizeof(hdr));
	s = shape_of(hdr.type);
	if (!s || !s->name) {
		*what = "command not served by this device";
		return VIRTIO_GPU_RESP_ERR_UNSPEC;
	}
	cursor_cmd =
	    hdr.type == VIRTIO_GPU_CMD_UPDATE_CURSOR || hdr.type == VIRTIO_GPU_CMD_MOVE_CURSOR;
	if (cursor_cmd != (queue == VGPU_QUEUE_CURSOR)) {
		*what = "command on the wrong queue";
		return VIRTIO_GPU_RESP_ERR_UNSPEC;
	}
	if (len < s->size) {
		*what = "request shorter than its command";
		return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
	}
	switch (hdr.type) {
	case VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING: {
		struct virtio_gpu_resource_attach_backing ab;

		memcpy(&ab, req, sizeof(ab));
		if (ab.nr_entries == 0 || ab.nr_entries > VGPU_MAX_BACKING_ENTRIES) {
			*what = "backing entry count out of range";
			return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
		}
		if (len - sizeof(ab) <
		    (size_t)ab.nr_entries * sizeof(struct virtio_gpu_mem_entry)) {
			*what = "fewer backing entries than announced";
			return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
		}
		break;
	}
	case VIRTIO_GPU_CMD_SUBMIT_3D: {
		struct virtio_gpu_cmd_submit sub;

		memcpy(&sub, req, sizeof(sub));
		if (sub.size % 4 || len - sizeof(sub) < sub.size) {
			*what = "command stream size not whole dwords or beyond the request";
			return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
		}
		break;
	}
	case VIRTIO_GPU_CMD_CTX_CREATE: {
		struct virtio_gpu_ctx_create cc;

		memcpy(&cc, req, sizeof(cc));
		if (cc.nlen > sizeof(cc.debug_name)) {
			*what = "context name longer than its field";
			return VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER;
		}
		break;
	}
	default:
		break;
	}
	return 0;
}
