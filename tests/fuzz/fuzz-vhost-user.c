/*
 * libFuzzer target: arbitrary bytes as one vhost-user message through
 * vhost_user_check() (and a SET_FEATURES that passes it through the
 * feature negotiation rule, whose result must stay within the offer), and
 * as virtio-gpu requests of both queues through vgpu_cmd_check(). Neither
 * may read outside the message (run under ASan).
 *
 * Input: byte 0 says how many fds came with the message (low nibble,
 * 0..VHOST_USER_MAX_FDS + 1) and how many rings the device has (high
 * nibble, 0..15); the rest is the header and payload. The message is
 * copied into a buffer of exactly VHOST_USER_HDR_SIZE + size bytes, so a
 * check that decides on payload bytes the message does not carry shows
 * as a heap overflow.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vhost_user.h"
#include "virtio_gpu_cmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *what = NULL;
	uint32_t payload = 0;
	size_t len;
	uint8_t *buf;

	if (size == 0)
		return 0;
	/* The header's size field may claim more than arrived: the framing
	 * never hands such a message over, so neither does this target. */
	len = size - 1 < VHOST_USER_HDR_SIZE ? VHOST_USER_HDR_SIZE : size - 1;
	if (len > sizeof(struct vhost_user_msg))
		len = sizeof(struct vhost_user_msg);
	buf = calloc(1, len);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1 < len ? size - 1 : len);
	memcpy(&payload, buf + 8, sizeof(payload));
	if (payload > len - VHOST_USER_HDR_SIZE) {
		payload = (uint32_t)(len - VHOST_USER_HDR_SIZE);
		memcpy(buf + 8, &payload, sizeof(payload));
	}
	/* The check reads the message through struct vhost_user_msg: a buffer
	 * of exactly the bytes present, header and payload. */
	buf = realloc(buf, VHOST_USER_HDR_SIZE + payload);
	if (!buf)
		return 0;
	if (vhost_user_check((const struct vhost_user_msg *)buf,
			     (data[0] & 0xf) % (VHOST_USER_MAX_FDS + 2), data[0] >> 4, &what)) {
		if (!what)
			__builtin_trap();
	} else if (((const struct vhost_user_msg *)buf)->request == VHOST_USER_SET_FEATURES) {
		/* The worker's offer: VERSION_1, VIRGL, EDID, INDIRECT_DESC,
		 * EVENT_IDX, PROTOCOL_FEATURES. */
		const uint64_t offered = 0x170000003ull;
		uint64_t requested, negotiated = 0;

		memcpy(&requested, buf + VHOST_USER_HDR_SIZE, sizeof(requested));
		what = NULL;
		if (vhost_user_negotiate_features(offered, requested, &negotiated, &what) == 0) {
			if (negotiated & ~offered || !(negotiated & (1ull << 32)))
				__builtin_trap();
		} else if (!what) {
			__builtin_trap();
		}
	}
	free(buf);
	/* The same bytes as guest requests, copied so that ASan sees their end. */
	{
		uint8_t *req = malloc(size);

		if (req) {
			memcpy(req, data, size);
			vgpu_cmd_check(req, size, VGPU_QUEUE_CONTROL, &what);
			vgpu_cmd_check(req, size, VGPU_QUEUE_CURSOR, &what);
			free(req);
		}
	}
	return 0;
}
