// SPDX-License-Identifier: MIT
/*
 * vhost-user messages (QEMU docs/interop/vhost-user.rst): framing and
 * checks, for the back-end side of the connection.
 *
 * A message is a 12-byte header {u32 request, u32 flags, u32 size} and
 * `size` bytes of payload; file descriptors travel as SCM_RIGHTS with the
 * header. vhost_user_recv() reads one whole message; vhost_user_check()
 * decides whether it is acceptable before anything acts on it: a known
 * request, the exact payload size the request has (or a bounded one), the
 * number of fds it must carry, a version of 1. Everything else is refused
 * with a reason, and the connection is closed by the caller. Pure
 * functions except vhost_user_recv()/vhost_user_send(); fuzzed
 * (tests/fuzz/fuzz-vhost-user.c).
 */
#ifndef MEDIATOR_VHOST_USER_H
#define MEDIATOR_VHOST_USER_H

#include <stddef.h>
#include <stdint.h>

#include "worker/vhost-user/guest_mem.h"

enum vhost_user_request {
	VHOST_USER_GET_FEATURES = 1,
	VHOST_USER_SET_FEATURES = 2,
	VHOST_USER_SET_OWNER = 3,
	VHOST_USER_RESET_OWNER = 4,
	VHOST_USER_SET_MEM_TABLE = 5,
	VHOST_USER_SET_LOG_BASE = 6,
	VHOST_USER_SET_LOG_FD = 7,
	VHOST_USER_SET_VRING_NUM = 8,
	VHOST_USER_SET_VRING_ADDR = 9,
	VHOST_USER_SET_VRING_BASE = 10,
	VHOST_USER_GET_VRING_BASE = 11,
	VHOST_USER_SET_VRING_KICK = 12,
	VHOST_USER_SET_VRING_CALL = 13,
	VHOST_USER_SET_VRING_ERR = 14,
	VHOST_USER_GET_PROTOCOL_FEATURES = 15,
	VHOST_USER_SET_PROTOCOL_FEATURES = 16,
	VHOST_USER_GET_QUEUE_NUM = 17,
	VHOST_USER_SET_VRING_ENABLE = 18,
	VHOST_USER_GET_CONFIG = 24,
	VHOST_USER_SET_CONFIG = 25,
	VHOST_USER_GPU_SET_SOCKET = 33,
	VHOST_USER_RESET_DEVICE = 34,
	VHOST_USER_REQUEST_MAX = 64, /* no request we know of is this high */
};

/* Header flags. */
#define VHOST_USER_VERSION_MASK 0x3u
#define VHOST_USER_VERSION	0x1u
#define VHOST_USER_REPLY	(1u << 2)
#define VHOST_USER_NEED_REPLY	(1u << 3)

/* Feature bits. */
#define VHOST_USER_F_PROTOCOL_FEATURES 30
/*
 * Virtio transport feature bits the negotiation rule names (virtio 1.2,
 * "Reserved Feature Bits"; the same numbers as linux/virtio_config.h, kept
 * here because older kernel headers lack some).
 */
#define VHOST_USER_VIRTIO_F_VERSION_1	      32
#define VHOST_USER_VIRTIO_F_ACCESS_PLATFORM   33
#define VHOST_USER_VIRTIO_F_RING_PACKED	      34
#define VHOST_USER_VIRTIO_F_IN_ORDER	      35
#define VHOST_USER_VIRTIO_F_NOTIFICATION_DATA 38
#define VHOST_USER_VIRTIO_F_RING_RESET	      40
/*
 * Bits a front-end may set in SET_FEATURES without the back-end having
 * offered them, because the front-end's own virtio transport implements
 * them and no vhost-user message ever asks the back-end to act on them:
 * RING_RESET (per-queue reset is a register of QEMU's virtio-pci common
 * config; QEMU offers it to the guest itself, on by default since 7.2).
 */
#define VHOST_USER_FRONTEND_ONLY_FEATURES (1ull << VHOST_USER_VIRTIO_F_RING_RESET)
/* Protocol feature bits. */
#define VHOST_USER_PROTOCOL_F_MQ	   0
#define VHOST_USER_PROTOCOL_F_REPLY_ACK	   3
#define VHOST_USER_PROTOCOL_F_CONFIG	   9
#define VHOST_USER_PROTOCOL_F_RESET_DEVICE 13

/* SET_VRING_KICK/CALL/ERR payload: the ring index and "no fd" (polling). */
#define VHOST_USER_VRING_IDX_MASK 0xffu
#define VHOST_USER_VRING_NOFD	  (1u << 8)

#define VHOST_USER_HDR_SIZE 12u
/* The largest payload of any request we accept (GET_CONFIG: 12 + 256). */
#define VHOST_USER_MAX_PAYLOAD 512u
/* The config space QEMU may ask for at most (VHOST_USER_MAX_CONFIG_SIZE). */
#define VHOST_USER_MAX_CONFIG 256u
/* Most fds one message may carry (SET_MEM_TABLE: one per region). */
#define VHOST_USER_MAX_FDS GUEST_MEM_MAX_REGIONS

struct vhost_user_vring_state {
	uint32_t index;
	uint32_t num;
};

struct vhost_user_vring_addr {
	uint32_t index;
	uint32_t flags;
	uint64_t desc_uva;
	uint64_t used_uva;
	uint64_t avail_uva;
	uint64_t log_gpa;
};

struct vhost_user_memory {
	uint32_t nregions;
	uint32_t padding;
	struct guest_mem_region regions[GUEST_MEM_MAX_REGIONS];
};

struct vhost_user_config {
	uint32_t offset;
	uint32_t size;
	uint32_t flags;
	uint8_t payload[VHOST_USER_MAX_CONFIG];
};

struct vhost_user_msg {
	uint32_t request;
	uint32_t flags;
	uint32_t size;
	union {
		uint64_t u64;
		struct vhost_user_vring_state state;
		struct vhost_user_vring_addr addr;
		struct vhost_user_memory memory;
		struct vhost_user_config config;
		uint8_t bytes[VHOST_USER_MAX_PAYLOAD];
	} payload;
} __attribute__((packed));

/*
 * The feature negotiation rule of this back-end, for SET_FEATURES
 * @requested against what GET_FEATURES answered (@offered):
 *
 *  - A bit the back-end offered and the front-end set is negotiated.
 *  - A bit the back-end did not offer but the front-end set is ignored
 *    (not negotiated) when it is one of VHOST_USER_FRONTEND_ONLY_FEATURES.
 *    QEMU's vhost-user back-end object (backends/vhost-user.c) sends the
 *    guest's acknowledged features verbatim, and those include transport
 *    bits QEMU's virtio-pci offers by itself, whatever the back-end said:
 *    QEMU 10 sets RING_RESET (bit 40) this way.
 *  - Any other bit that was not offered refuses the request: it would ask
 *    the back-end for something it does not do (a packed ring, IOMMU
 *    addresses, in-order completion, dirty logging, a device feature),
 *    and serving such a guest anyway would misread its rings.
 *  - VIRTIO_F_VERSION_1 must be set: virtio-gpu has no legacy interface,
 *    and a legacy driver's rings would be in the guest's byte order.
 *
 * The vhost-user spec leaves open what a back-end does with bits it never
 * offered ("If back-end detects some error such as incompatible features,
 * it may also close the connection"). QEMU's libvhost-user (its own
 * contrib/vhost-user-gpu) stores whatever is set and refuses only the lack
 * of VERSION_1; rust-vmm's vhost-user-backend refuses every bit not
 * offered, so its vhost-device-gpu offers RING_RESET to work with QEMU.
 * This rule takes the strict side but names the one bit QEMU sends on
 * its own, rather than offering a feature the back-end does not have.
 *
 * Returns 0 with *@negotiated = @requested & @offered, or -EPROTO with
 * *@what set to a static reason.
 */
int vhost_user_negotiate_features(uint64_t offered, uint64_t requested, uint64_t *negotiated,
				  const char **what);

/* The request's name for log lines ("SET_MEM_TABLE"), "unknown" if none. */
const char *vhost_user_request_name(uint32_t request);

/*
 * Checks @msg (header and @msg->size payload bytes) with @nfds fds and
 * @nqueues rings. Returns 0, or -EPROTO with *@what set to a static
 * reason.
 */
int vhost_user_check(const struct vhost_user_msg *msg, int nfds, uint32_t nqueues,
		     const char **what);

/*
 * How long the rest of a message may take once its first bytes arrived,
 * and how long a reply may wait for room in the socket. QEMU writes a
 * message with one sendmsg() and reads its replies at once, so a healthy
 * peer needs microseconds; a second is generous and still bounds how
 * long a peer that stops mid-message (or never reads) holds the worker's
 * main loop, and so every other fd it serves.
 */
#define VHOST_USER_MSG_TIMEOUT_MS 1000

/*
 * Reads one message from the connection @fd, which the caller saw readable:
 * the rest of a message that has begun must arrive within
 * VHOST_USER_MSG_TIMEOUT_MS (else -ETIMEDOUT).
 * The fds it carried go to @fds (room for VHOST_USER_MAX_FDS; the caller
 * owns and closes them), their count to *@nfds. Returns 1 for a message,
 * 0 when the peer closed the connection between messages, or -EPROTO
 * (*@what says why: a payload beyond VHOST_USER_MAX_PAYLOAD, too many
 * fds, the peer closing mid-message) or another negative errno. On error
 * no fd is left open.
 */
int vhost_user_recv(int fd, struct vhost_user_msg *msg, int *fds, int *nfds, const char **what);

/*
 * Sends a reply to @request with @size payload bytes, waiting at most
 * VHOST_USER_MSG_TIMEOUT_MS for room. Returns 0 or a negative errno
 * (-ETIMEDOUT: the peer does not read).
 */
int vhost_user_reply(int fd, uint32_t request, const void *payload, uint32_t size);

#endif
