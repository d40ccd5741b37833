/*
 * libFuzzer target: arbitrary bytes as one vhost-user message (header and
 * payload; the first byte also picks how many fds came with it) through
 * vhost_user_check(), and as virtio-gpu requests of both queues through
 * vgpu_cmd_check(). Neither may read outside the message (run under ASan).
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
	struct vhost_user_msg m;
	const char *what = NULL;
	size_t n = size < sizeof(m) ? size : sizeof(m);

	if (size == 0)
		return 0;
	memset(&m, 0, sizeof(m));
	memcpy(&m, data + 1, n - 1);
	/* The header's size field may claim more than arrived: the framing
	 * never hands such a message over, so neither does this target. */
	if (m.size > VHOST_USER_MAX_PAYLOAD || VHOST_USER_HDR_SIZE + m.size > n - 1)
		m.size = n - 1 > VHOST_USER_HDR_SIZE ? (uint32_t)(n - 1 - VHOST_USER_HDR_SIZE) : 0;
	vhost_user_check(&m, data[0] % (VHOST_USER_MAX_FDS + 2), 2, &what);
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
