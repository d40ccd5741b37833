// SPDX-License-Identifier: MIT
/*
 * The vhost-user-gpu display channel (QEMU docs/interop/vhost-user-gpu.rst):
 * the stream socket QEMU hands a back-end with VHOST_USER_GPU_SET_SOCKET,
 * over which the back-end shows the guest's scanouts and cursor in QEMU's
 * console and asks for the display configuration.
 *
 * Messages are {u32 request, u32 flags, u32 size} and a payload; the
 * answers (flag 0x4) come within VGPU_DISPLAY_TIMEOUT_MS. Protocol
 * features are negotiated once per channel: GET_PROTOCOL_FEATURES goes out
 * as soon as the channel arrives (QEMU reads it when its main loop gets to
 * the channel; the worker never waits for QEMU while QEMU may be waiting
 * for the worker on the vhost-user socket), and its answer is read, and
 * SET_PROTOCOL_FEATURES sent, before the first request that has an answer.
 * The one protocol feature used is EDID (QEMU >= 8.1): GET_EDID is sent
 * only when QEMU offered it. Pixels go as VHOST_USER_GPU_UPDATE
 * (x8r8g8b8, no dma-buf: these hosts have no render node). A channel that
 * breaks or answers wrongly is closed, logged once, and display updates
 * stop; rendering goes on. Main thread only.
 */
#ifndef MEDIATOR_VGPU_DISPLAY_H
#define MEDIATOR_VGPU_DISPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/virtio_gpu.h>

/*
 * How long QEMU may take to answer, or to take a whole message (a frame's
 * pixels included: QEMU's main loop reads the channel as it comes): a
 * channel past it is closed, so that a QEMU that stops reading never
 * holds the worker's loop longer than this per message.
 */
#define VGPU_DISPLAY_TIMEOUT_MS 2000
/* Protocol feature bits (vhost-user-gpu.rst, "Protocol features"). */
#define VGPU_DISPLAY_F_EDID 0
/* The cursor image of VHOST_USER_GPU_CURSOR_UPDATE: 64 x 64 ARGB. */
#define VGPU_CURSOR_SIZE 64u

struct vgpu_display {
	int fd; /* -1: no channel */
	char domain[32];
	uint32_t client_id;
	bool info_valid;
	struct virtio_gpu_resp_display_info info;
	bool features_asked;	    /* GET_PROTOCOL_FEATURES sent, its answer not read yet */
	uint64_t protocol_features; /* negotiated on this channel */
};

/* No channel yet; @domain and @client_id name log lines. */
void vgpu_display_init(struct vgpu_display *disp, const char *domain, uint32_t client_id);
/* Closes the channel. */
void vgpu_display_finish(struct vgpu_display *disp);

/* Takes ownership of @fd (the channel QEMU gave), closing any previous one; -1 closes. */
void vgpu_display_set_fd(struct vgpu_display *disp, int fd);

/*
 * QEMU's preferred display configuration, asked for once per channel; with
 * no channel (or no answer) one enabled 1024x768 head. Owned by @disp.
 */
const struct virtio_gpu_resp_display_info *vgpu_display_info(struct vgpu_display *disp);

/*
 * VHOST_USER_GPU_GET_EDID: QEMU's EDID of scanout @id into @resp (its
 * header's type VIRTIO_GPU_RESP_OK_EDID, its size at most 1024). Asked only
 * of a scanout QEMU reports enabled (QEMU leaves a request for a scanout it
 * does not have unanswered). Returns 0, -ENOTSUP when there is no channel
 * or QEMU did not offer VGPU_DISPLAY_F_EDID, -EINVAL for a scanout QEMU
 * does not report enabled, or -EPIPE when the channel broke (it is closed).
 */
int vgpu_display_edid(struct vgpu_display *disp, uint32_t id, struct virtio_gpu_resp_edid *resp);

/* VHOST_USER_GPU_SCANOUT: scanout @id now shows @w x @h (0 x 0: disabled). 0 or -errno. */
int vgpu_display_scanout(struct vgpu_display *disp, uint32_t id, uint32_t w, uint32_t h);
/* VHOST_USER_GPU_UPDATE: @w x @h pixels at (@x, @y) of scanout @id, rows of 4 * @w bytes. */
int vgpu_display_update(struct vgpu_display *disp, uint32_t id, uint32_t x, uint32_t y, uint32_t w,
			uint32_t h, const void *pixels);
/* VHOST_USER_GPU_CURSOR_POS (or _HIDE when @hide). */
int vgpu_display_cursor_pos(struct vgpu_display *disp, uint32_t id, uint32_t x, uint32_t y,
			    bool hide);
/* VHOST_USER_GPU_CURSOR_UPDATE with a VGPU_CURSOR_SIZE^2 image. */
int vgpu_display_cursor_update(struct vgpu_display *disp, uint32_t id, uint32_t x, uint32_t y,
			       uint32_t hot_x, uint32_t hot_y, const uint32_t *image);

#endif
