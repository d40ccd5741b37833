// SPDX-License-Identifier: MIT
/*
 * vhost-user message framing and checks (see vhost_user.h).
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/util.h"
#include "worker/vhost-user/vhost_user.h"

/* What each request must carry: payload size (exact, or at most for
 * SIZE_MAX_*), and how many fds (exact; FDS_OPT: 0 or 1). */
enum { SIZE_EXACT, SIZE_MEMORY, SIZE_CONFIG };
enum { FDS_NONE, FDS_ONE, FDS_OPT, FDS_REGIONS };

static const struct rule {
	const char *name;
	uint32_t size;
	uint8_t size_kind;
	uint8_t fds;
	uint8_t ring; /* the payload's first u32 (or u64 low byte) is a ring index */
} rules[VHOST_USER_REQUEST_MAX] = {
    [VHOST_USER_GET_FEATURES] = {"GET_FEATURES", 0, SIZE_EXACT, FDS_NONE, 0},
    [VHOST_USER_SET_FEATURES] = {"SET_FEATURES", 8, SIZE_EXACT, FDS_NONE, 0},
    [VHOST_USER_SET_OWNER] = {"SET_OWNER", 0, SIZE_EXACT, FDS_NONE, 0},
    [VHOST_USER_RESET_OWNER] = {"RESET_OWNER", 0, SIZE_EXACT, FDS_NONE, 0},
    [VHOST_USER_SET_MEM_TABLE] = {"SET_MEM_TABLE", 0, SIZE_MEMORY, FDS_REGIONS, 0},
    [VHOST_USER_SET_VRING_NUM] = {"SET_VRING_NUM", 8, SIZE_EXACT, FDS_NONE, 1},
    [VHOST_USER_SET_VRING_ADDR] = {"SET_VRING_ADDR", 40, SIZE_EXACT, FDS_NONE, 1},
    [VHOST_USER_SET_VRING_BASE] = {"SET_VRING_BASE", 8, SIZE_EXACT, FDS_NONE, 1},
    [VHOST_USER_GET_VRING_BASE] = {"GET_VRING_BASE", 8, SIZE_EXACT, FDS_NONE, 1},
    [VHOST_USER_SET_VRING_KICK] = {"SET_VRING_KICK", 8, SIZE_EXACT, FDS_OPT, 1},
    [VHOST_USER_SET_VRING_CALL] = {"SET_VRING_CALL", 8, SIZE_EXACT, FDS_OPT, 1},
    [VHOST_USER_SET_VRING_ERR] = {"SET_VRING_ERR", 8, SIZE_EXACT, FDS_OPT, 1},
    [VHOST_USER_GET_PROTOCOL_FEATURES] = {"GET_PROTOCOL_FEATURES", 0, SIZE_EXACT, FDS_NONE, 0},
    [VHOST_USER_SET_PROTOCOL_FEATURES] = {"SET_PROTOCOL_FEATURES", 8, SIZE_EXACT, FDS_NONE, 0},
    [VHOST_USER_GET_QUEUE_NUM] = {"GET_QUEUE_NUM", 0, SIZE_EXACT, FDS_NONE, 0},
    [VHOST_USER_SET_VRING_ENABLE] = {"SET_VRING_ENABLE", 8, SIZE_EXACT, FDS_NONE, 1},
    [VHOST_USER_GET_CONFIG] = {"GET_CONFIG", 0, SIZE_CONFIG, FDS_NONE, 0},
    [VHOST_USER_SET_CONFIG] = {"SET_CONFIG", 0, SIZE_CONFIG, FDS_NONE, 0},
    [VHOST_USER_GPU_SET_SOCKET] = {"GPU_SET_SOCKET", 0, SIZE_EXACT, FDS_ONE, 0},
    [VHOST_USER_RESET_DEVICE] = {"RESET_DEVICE", 0, SIZE_EXACT, FDS_NONE, 0},
};

const char *vhost_user_request_name(uint32_t request)
{
	if (request < VHOST_USER_REQUEST_MAX && rules[request].name)
		return rules[request].name;
	return "unknown";
}

/* Why a bit that was not offered cannot be served, for the log line. */
static const char *unoffered_reason(uint64_t bits)
{
	if (bits & (1ull << VHOST_USER_VIRTIO_F_RING_PACKED))
		return "VIRTIO_F_RING_PACKED set but not offered: only split rings are served";
	if (bits & (1ull << VHOST_USER_VIRTIO_F_ACCESS_PLATFORM))
		return "VIRTIO_F_ACCESS_PLATFORM set but not offered: ring addresses through an "
		       "IOMMU are not served";
	if (bits & (1ull << VHOST_USER_VIRTIO_F_IN_ORDER))
		return "VIRTIO_F_IN_ORDER set but not offered: buffers complete out of order";
	if (bits & (1ull << VHOST_USER_VIRTIO_F_NOTIFICATION_DATA))
		return "VIRTIO_F_NOTIFICATION_DATA set but not offered";
	return "features set that were not offered";
}

int vhost_user_negotiate_features(uint64_t offered, uint64_t requested, uint64_t *negotiated,
				  const char **what)
{
	uint64_t unoffered = requested & ~offered & ~VHOST_USER_FRONTEND_ONLY_FEATURES;

	if (unoffered) {
		*what = unoffered_reason(unoffered);
		return -EPROTO;
	}
	if (!(requested & (1ull << VHOST_USER_VIRTIO_F_VERSION_1))) {
		*what = "VIRTIO_F_VERSION_1 not set: a legacy virtio-gpu driver is not served";
		return -EPROTO;
	}
	*negotiated = requested & offered;
	return 0;
}

int vhost_user_check(const struct vhost_user_msg *msg, int nfds, uint32_t nqueues,
		     const char **what)
{
	const struct rule *rule;
	uint32_t ring;

	if (msg->request >= VHOST_USER_REQUEST_MAX || !rules[msg->request].name) {
		*what = "unknown request";
		return -EPROTO;
	}
	rule = &rules[msg->request];
	if ((msg->flags & VHOST_USER_VERSION_MASK) != VHOST_USER_VERSION) {
		*what = "unsupported protocol version";
		return -EPROTO;
	}
	if (msg->flags & VHOST_USER_REPLY) {
		*what = "a reply where a request was expected";
		return -EPROTO;
	}
	switch (rule->size_kind) {
	case SIZE_EXACT:
		if (msg->size != rule->size) {
			*what = "bad payload size";
			return -EPROTO;
		}
		break;
	case SIZE_MEMORY:
		if (msg->size < 8 || msg->payload.memory.nregions == 0 ||
		    msg->payload.memory.nregions > GUEST_MEM_MAX_REGIONS ||
		    msg->size !=
			8 + msg->payload.memory.nregions * sizeof(struct guest_mem_region)) {
			*what = "bad memory table size";
			return -EPROTO;
		}
		break;
	case SIZE_CONFIG:
		if (msg->size < 12 || msg->payload.config.size > VHOST_USER_MAX_CONFIG ||
		    msg->payload.config.offset > VHOST_USER_MAX_CONFIG ||
		    msg->payload.config.size > VHOST_USER_MAX_CONFIG - msg->payload.config.offset ||
		    msg->size != 12 + msg->payload.config.size) {
			*what = "bad config access size";
			return -EPROTO;
		}
		break;
	}
	switch (rule->fds) {
	case FDS_NONE:
		if (nfds != 0) {
			*what = "unexpected file descriptors";
			return -EPROTO;
		}
		break;
	case FDS_ONE:
		if (nfds != 1) {
			*what = "needs exactly one file descriptor";
			return -EPROTO;
		}
		break;
	case FDS_OPT:
		if (nfds != ((msg->payload.u64 & VHOST_USER_VRING_NOFD) ? 0 : 1)) {
			*what = "bad file descriptor count for the ring";
			return -EPROTO;
		}
		break;
	case FDS_REGIONS:
		if ((uint32_t)nfds != msg->payload.memory.nregions) {
			*what = "file descriptor count differs from the region count";
			return -EPROTO;
		}
		break;
	}
	if (rule->ring) {
		ring = rule->fds == FDS_OPT
			   ? (uint32_t)(msg->payload.u64 & VHOST_USER_VRING_IDX_MASK)
			   : msg->payload.state.index;
		if (ring >= nqueues) {
			*what = "ring index out of range";
			return -EPROTO;
		}
	}
	return 0;
}

static void close_fds(int *fds, int *nfds)
{
	for (int i = 0; i < *nfds; i++)
		close(fds[i]);
	*nfds = 0;
}

/* Milliseconds left until @deadline_ns (0 when past). */
static int ms_left(uint64_t deadline_ns)
{
	uint64_t now = mono_now_ns();

	return now >= deadline_ns ? 0 : (int)((deadline_ns - now + 999999) / 1000000);
}

/* Waits until @fd is ready for @events or @deadline_ns passes: 0 or -ETIMEDOUT or -errno. */
static int wait_ready(int fd, short events, uint64_t deadline_ns)
{
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = events};
		int left = ms_left(deadline_ns), r;

		if (left == 0)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r > 0)
			return 0;
	}
}

/* Reads exactly @len bytes before @deadline_ns; 0 or -EPROTO (closed), -ETIMEDOUT or -errno. */
static int read_all(int fd, void *buf, size_t len, uint64_t deadline_ns)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n;
		int r = wait_ready(fd, POLLIN, deadline_ns);

		if (r < 0)
			return r;
		n = recv(fd, p, len, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EPROTO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Sends all @len bytes before @deadline_ns; 0, -ETIMEDOUT or -errno. */
static int send_all(int fd, const void *buf, size_t len, uint64_t deadline_ns)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			int r;

			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			r = wait_ready(fd, POLLOUT, deadline_ns);
			if (r < 0)
				return r;
			continue;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int vhost_user_recv(int fd, struct vhost_user_msg *msg, int *fds, int *nfds, const char **what)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * VHOST_USER_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = msg, .iov_len = VHOST_USER_HDR_SIZE};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c;
	uint64_t deadline;
	ssize_t n;
	int r;

	*nfds = 0;
	do {
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));

			for (int i = 0; i < count; i++) {
				int f;

				memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (*nfds < VHOST_USER_MAX_FDS)
					fds[(*nfds)++] = f;
				else
					close(f);
			}
		}
	}
	if (mh.msg_flags & MSG_CTRUNC) {
		close_fds(fds, nfds);
		*what = "too many file descriptors";
		return -EPROTO;
	}
	deadline = mono_now_ns() + (uint64_t)VHOST_USER_MSG_TIMEOUT_MS * 1000000;
	if ((size_t)n < VHOST_USER_HDR_SIZE) {
		r = read_all(fd, (uint8_t *)msg + n, VHOST_USER_HDR_SIZE - (size_t)n, deadline);
		if (r < 0) {
			close_fds(fds, nfds);
			*what = r == -ETIMEDOUT ? "the rest of a header did not come within "
						  "VHOST_USER_MSG_TIMEOUT_MS (1000 ms)"
						: "connection closed inside a header";
			return r;
		}
	}
	if (msg->size > VHOST_USER_MAX_PAYLOAD) {
		close_fds(fds, nfds);
		*what = "payload larger than any request's";
		return -EPROTO;
	}
	r = read_all(fd, &msg->payload, msg->size, deadline);
	if (r < 0) {
		close_fds(fds, nfds);
		*what = r == -ETIMEDOUT ? "the rest of a payload did not come within "
					  "VHOST_USER_MSG_TIMEOUT_MS (1000 ms)"
					: "connection closed inside a payload";
		return r;
	}
	return 1;
}

int vhost_user_reply(int fd, uint32_t request, const void *payload, uint32_t size)
{
	struct vhost_user_msg m;

	if (size > VHOST_USER_MAX_PAYLOAD)
		return -EINVAL;
	m.request = request;
	m.flags = VHOST_USER_VERSION | VHOST_USER_REPLY;
	m.size = size;
	if (size)
		memcpy(&m.payload, payload, size);
	return send_all(fd, &m, VHOST_USER_HDR_SIZE + size,
			mono_now_ns() + (uint64_t)VHOST_USER_MSG_TIMEOUT_MS * 1000000);
}
