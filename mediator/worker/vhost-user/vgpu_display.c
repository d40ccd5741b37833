// SPDX-License-Identifier: MIT
/*
 * The vhost-user-gpu display channel (see vgpu_display.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/util.h"
#include "worker/vhost-user/vgpu_display.h"

/* Requests (vhost-user-gpu.rst, "Message types"). */
enum {
	VUGPU_GET_PROTOCOL_FEATURES = 1,
	VUGPU_SET_PROTOCOL_FEATURES = 2,
	VUGPU_GET_DISPLAY_INFO = 3,
	VUGPU_CURSOR_POS = 4,
	VUGPU_CURSOR_POS_HIDE = 5,
	VUGPU_CURSOR_UPDATE = 6,
	VUGPU_SCANOUT = 7,
	VUGPU_UPDATE = 8,
	VUGPU_GET_EDID = 11,
};
/* The protocol features this back-end uses. */
#define VUGPU_USED_FEATURES (1ull << VGPU_DISPLAY_F_EDID)
#define VUGPU_FLAG_REPLY    0x4u

static int send_msg(struct vgpu_display *disp, uint32_t request, const void *payload,
		    uint32_t payload_size, const void *data, uint32_t data_size);

void vgpu_display_init(struct vgpu_display *disp, const char *domain, uint32_t client_id)
{
	memset(disp, 0, sizeof(*disp));
	disp->fd = -1;
	snprintf(disp->domain, sizeof(disp->domain), "%s", domain ? domain : "?");
	disp->client_id = client_id;
}

void vgpu_display_finish(struct vgpu_display *disp)
{
	vgpu_display_set_fd(disp, -1);
}

void vgpu_display_set_fd(struct vgpu_display *disp, int fd)
{
	if (disp->fd >= 0)
		close(disp->fd);
	disp->fd = fd;
	disp->info_valid = false;
	disp->features_asked = false;
	disp->protocol_features = 0;
	if (fd >= 0) {
		/* Asked now, read before the first answer (see vgpu_display.h). */
		if (send_msg(disp, VUGPU_GET_PROTOCOL_FEATURES, NULL, 0, NULL, 0) == 0)
			disp->features_asked = true;
	}
}

static void lost(struct vgpu_display *disp, const char *why)
{
	log_warn("domain %s vm %u: display channel to QEMU: %s; display updates stop", disp->domain,
		 disp->client_id, why);
	vgpu_display_set_fd(disp, -1);
}

/* The deadline of one exchange: VGPU_DISPLAY_TIMEOUT_MS from now. */
static uint64_t deadline_from_now(void)
{
	return mono_now_ns() + (uint64_t)VGPU_DISPLAY_TIMEOUT_MS * 1000000;
}

/* Waits until the channel is ready for @events before @deadline_ns: 0 or -ETIMEDOUT. */
static int wait_ready(int fd, short events, uint64_t deadline_ns)
{
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = events};
		uint64_t now = mono_now_ns();
		int r;

		if (now >= deadline_ns)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, (int)((deadline_ns - now + 999999) / 1000000));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -ETIMEDOUT;
		return 0;
	}
}

/*
 * Sends one message: the header, @payload and @data (either may be empty),
 * all of it within VGPU_DISPLAY_TIMEOUT_MS: a QEMU that reads slowly, or
 * not at all, loses its channel rather than holding the worker.
 */
static int send_msg(struct vgpu_display *disp, uint32_t request, const void *payload,
		    uint32_t payload_size, const void *data, uint32_t data_size)
{
	uint32_t hdr[3] = {request, 0, payload_size + data_size};
	struct iovec iov[3] = {
	    {hdr, sizeof(hdr)}, {(void *)payload, payload_size}, {(void *)data, data_size}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 3};
	size_t left = sizeof(hdr) + payload_size + data_size;
	uint64_t deadline = deadline_from_now();

	if (disp->fd < 0)
		return -ENOTCONN;
	while (left) {
		ssize_t n = sendmsg(disp->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN && wait_ready(disp->fd, POLLOUT, deadline) == 0)
				continue;
			lost(disp, errno == EAGAIN ? "QEMU took no message within "
						     "VGPU_DISPLAY_TIMEOUT_MS (2000 ms)"
						   : strerror(errno));
			return -EPIPE;
		}
		left -= (size_t)n;
		while (mh.msg_iovlen && (size_t)n >= mh.msg_iov[0].iov_len) {
			n -= (ssize_t)mh.msg_iov[0].iov_len;
			mh.msg_iov++;
			mh.msg_iovlen--;
		}
		if (mh.msg_iovlen) {
			mh.msg_iov[0].iov_base = (uint8_t *)mh.msg_iov[0].iov_base + n;
			mh.msg_iov[0].iov_len -= (size_t)n;
		}
	}
	return 0;
}

/* Reads exactly @len bytes of QEMU's answer, all within VGPU_DISPLAY_TIMEOUT_MS. */
static int read_answer(struct vgpu_display *disp, void *buf, size_t len)
{
	uint8_t *p = buf;
	uint64_t deadline = deadline_from_now();

	while (len) {
		ssize_t n;

		if (wait_ready(disp->fd, POLLIN, deadline) < 0)
			return -ETIMEDOUT;
		n = recv(disp->fd, p, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads the header of the answer to @request, which must carry @size bytes. */
static int read_answer_header(struct vgpu_display *disp, uint32_t request, uint32_t size)
{
	uint32_t hdr[3];

	if (read_answer(disp, hdr, sizeof(hdr)) < 0 || hdr[0] != request ||
	    !(hdr[1] & VUGPU_FLAG_REPLY) || hdr[2] != size)
		return -EPROTO;
	return 0;
}

/* Reads QEMU's protocol features, if asked, and sets those used. 0 or -EPIPE. */
static int settle_features(struct vgpu_display *disp)
{
	uint64_t offered;

	if (disp->fd < 0 || !disp->features_asked)
		return 0;
	disp->features_asked = false;
	if (read_answer_header(disp, VUGPU_GET_PROTOCOL_FEATURES, sizeof(offered)) < 0 ||
	    read_answer(disp, &offered, sizeof(offered)) < 0) {
		lost(disp, "bad or missing answer to GET_PROTOCOL_FEATURES");
		return -EPIPE;
	}
	disp->protocol_features = offered & VUGPU_USED_FEATURES;
	return send_msg(disp, VUGPU_SET_PROTOCOL_FEATURES, &disp->protocol_features,
			sizeof(disp->protocol_features), NULL, 0);
}

const struct virtio_gpu_resp_display_info *vgpu_display_info(struct vgpu_display *disp)
{
	struct virtio_gpu_resp_display_info *info = &disp->info;

	if (disp->info_valid)
		return info;
	memset(info, 0, sizeof(*info));
	if (settle_features(disp) == 0 &&
	    send_msg(disp, VUGPU_GET_DISPLAY_INFO, NULL, 0, NULL, 0) == 0) {
		if (read_answer_header(disp, VUGPU_GET_DISPLAY_INFO, sizeof(*info)) < 0 ||
		    read_answer(disp, info, sizeof(*info)) < 0) {
			lost(disp, "bad or missing answer to GET_DISPLAY_INFO");
			memset(info, 0, sizeof(*info));
		} else {
			disp->info_valid = true;
		}
	}
	if (!disp->info_valid) {
		/* No display: one 1024x768 head, as QEMU's default. */
		info->pmodes[0].r.width = 1024;
		info->pmodes[0].r.height = 768;
		info->pmodes[0].enabled = 1;
	}
	info->hdr.type = VIRTIO_GPU_RESP_OK_DISPLAY_INFO;
	return info;
}

int vgpu_display_edid(struct vgpu_display *disp, uint32_t id, struct virtio_gpu_resp_edid *resp)
{
	const struct virtio_gpu_resp_display_info *info;

	if (settle_features(disp) < 0)
		return -EPIPE;
	if (disp->fd < 0 || !(disp->protocol_features & (1ull << VGPU_DISPLAY_F_EDID)))
		return -ENOTSUP;
	info = vgpu_display_info(disp);
	if (id >= VIRTIO_GPU_MAX_SCANOUTS || !info->pmodes[id].enabled)
		return -EINVAL;
	if (send_msg(disp, VUGPU_GET_EDID, &id, sizeof(id), NULL, 0) < 0)
		return -EPIPE;
	if (read_answer_header(disp, VUGPU_GET_EDID, sizeof(*resp)) < 0 ||
	    read_answer(disp, resp, sizeof(*resp)) < 0 || resp->size > sizeof(resp->edid)) {
		lost(disp, "bad or missing answer to GET_EDID");
		return -EPIPE;
	}
	resp->hdr.type = VIRTIO_GPU_RESP_OK_EDID;
	return 0;
}

int vgpu_display_scanout(struct vgpu_display *disp, uint32_t id, uint32_t w, uint32_t h)
{
	uint32_t m[3] = {id, w, h};

	return send_msg(disp, VUGPU_SCANOUT, m, sizeof(m), NULL, 0);
}

int vgpu_display_update(struct vgpu_display *disp, uint32_t id, uint32_t x, uint32_t y, uint32_t w,
			uint32_t h, const void *pixels)
{
	uint32_t m[5] = {id, x, y, w, h};
	uint64_t bytes = (uint64_t)w * h * 4;

	if (bytes > UINT32_MAX - sizeof(m))
		return -EINVAL;
	return send_msg(disp, VUGPU_UPDATE, m, sizeof(m), pixels, (uint32_t)bytes);
}

int vgpu_display_cursor_pos(struct vgpu_display *disp, uint32_t id, uint32_t x, uint32_t y,
			    bool hide)
{
	uint32_t m[3] = {id, x, y};

	return send_msg(disp, hide ? VUGPU_CURSOR_POS_HIDE : VUGPU_CURSOR_POS, m, sizeof(m), NULL,
			0);
}

int vgpu_display_cursor_update(struct vgpu_display *disp, uint32_t id, uint32_t x, uint32_t y,
			       uint32_t hot_x, uint32_t hot_y, const uint32_t *image)
{
	uint32_t m[5] = {id, x, y, hot_x, hot_y};

	return send_msg(disp, VUGPU_CURSOR_UPDATE, m, sizeof(m), image,
			VGPU_CURSOR_SIZE * VGPU_CURSOR_SIZE * 4);
}
