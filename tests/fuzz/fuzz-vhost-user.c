/*
 * libFuzzer target: arbitrary bytes as one vhost-user message through
 * vhost_user_check(), and as virtio-gpu requests of both queues through
 * vgpu_cmd_check(). Neither may read outside the message (run under ASan).
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
			     (data[0] & 0xf) % (VHOST_USER_MAX_FDS + 2), data[0] >> 4, &what) &&
	    !what)
		__builtin_trap();
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
