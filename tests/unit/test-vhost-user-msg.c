// SPDX-License-Identifier: MIT
/*
 * Tests of vhost-user message checks and framing (vhost_user.h) and of the
 * guest memory table (guest_mem.h): every request's size and fd rules, ring
 * indices, memory tables whose regions are bad or overlap, messages that
 * are cut short or too large, peers that stop mid-message or never read
 * (given up after their timeouts), and that no fd is ever leaked.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <dirent.h>

#include "worker/vhost-user/guest_mem.h"
#include "scm_send.h"
#include "worker/vhost-user/vgpu_display.h"
#include "worker/vhost-user/vhost_user.h"

static struct vhost_user_msg msg(uint32_t request, uint32_t size)
{
	struct vhost_user_msg m;

	memset(&m, 0, sizeof(m));
	m.request = request;
	m.flags = VHOST_USER_VERSION;
	m.size = size;
	return m;
}

static int check(const struct vhost_user_msg *m, int nfds)
{
	const char *what = NULL;
	int r = vhost_user_check(m, nfds, 2, &what);

	if (r)
		assert_non_null(what);
	return r;
}

static const struct {
	const char *description;
	uint32_t request, size;
	int nfds;
	uint64_t u64; /* payload's first 8 bytes */
	int expect;
} cases[] = {
    {"GET_FEATURES without payload", VHOST_USER_GET_FEATURES, 0, 0, 0, 0},
    {"GET_FEATURES with a payload", VHOST_USER_GET_FEATURES, 8, 0, 0, -EPROTO},
    {"SET_FEATURES with its u64", VHOST_USER_SET_FEATURES, 8, 0, 0, 0},
    {"SET_FEATURES short", VHOST_USER_SET_FEATURES, 4, 0, 0, -EPROTO},
    {"SET_OWNER with an fd", VHOST_USER_SET_OWNER, 0, 1, 0, -EPROTO},
    {"SET_VRING_NUM of ring 1", VHOST_USER_SET_VRING_NUM, 8, 0, 1, 0},
    {"SET_VRING_NUM of ring 2 (of 2)", VHOST_USER_SET_VRING_NUM, 8, 0, 2, -EPROTO},
    {"SET_VRING_ADDR", VHOST_USER_SET_VRING_ADDR, 40, 0, 0, 0},
    {"SET_VRING_ADDR short", VHOST_USER_SET_VRING_ADDR, 32, 0, 0, -EPROTO},
    {"SET_VRING_KICK with its fd", VHOST_USER_SET_VRING_KICK, 8, 1, 0, 0},
    {"SET_VRING_KICK without its fd", VHOST_USER_SET_VRING_KICK, 8, 0, 0, -EPROTO},
    {"SET_VRING_KICK polling, no fd", VHOST_USER_SET_VRING_KICK, 8, 0, VHOST_USER_VRING_NOFD, 0},
    {"SET_VRING_KICK polling with an fd", VHOST_USER_SET_VRING_KICK, 8, 1, VHOST_USER_VRING_NOFD,
     -EPROTO},
    {"SET_VRING_CALL of ring 7", VHOST_USER_SET_VRING_CALL, 8, 1, 7, -EPROTO},
    {"GPU_SET_SOCKET with its fd", VHOST_USER_GPU_SET_SOCKET, 0, 1, 0, 0},
    {"GPU_SET_SOCKET without", VHOST_USER_GPU_SET_SOCKET, 0, 0, 0, -EPROTO},
    {"GPU_SET_SOCKET with two", VHOST_USER_GPU_SET_SOCKET, 0, 2, 0, -EPROTO},
    {"unknown request 0", 0, 0, 0, 0, -EPROTO},
    {"unknown request 63", 63, 0, 0, 0, -EPROTO},
    {"request number far beyond", 0x7fffffff, 0, 0, 0, -EPROTO},
};

static void every_request_has_its_size_fds_and_ring_checked(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vhost_user_msg m = msg(cases[i].request, cases[i].size);

		m.payload.u64 = cases[i].u64;
		if (check(&m, cases[i].nfds) != cases[i].expect)
			fail_msg("%s: got %d, expected %d", cases[i].description,
				 check(&m, cases[i].nfds), cases[i].expect);
	}
}

static void bad_version_and_replies_are_refused(void **state)
{
	struct vhost_user_msg m = msg(VHOST_USER_GET_FEATURES, 0);

	m.flags = 0;
	assert_int_equal(check(&m, 0), -EPROTO);
	m.flags = VHOST_USER_VERSION | VHOST_USER_REPLY;
	assert_int_equal(check(&m, 0), -EPROTO);
	m.flags = VHOST_USER_VERSION | VHOST_USER_NEED_REPLY;
	assert_int_equal(check(&m, 0), 0);
}

static void memory_table_counts_agree_with_size_and_fds(void **state)
{
	struct vhost_user_msg m = msg(VHOST_USER_SET_MEM_TABLE, 8 + 2 * 32);

	m.payload.memory.nregions = 2;
	assert_int_equal(check(&m, 2), 0);
	assert_int_equal(check(&m, 1), -EPROTO);
	m.size = 8 + 32;
	assert_int_equal(check(&m, 2), -EPROTO);
	m.payload.memory.nregions = 0;
	m.size = 8;
	assert_int_equal(check(&m, 0), -EPROTO);
	m.payload.memory.nregions = GUEST_MEM_MAX_REGIONS + 1;
	m.size = 8 + (GUEST_MEM_MAX_REGIONS + 1) * 32;
	assert_int_equal(check(&m, GUEST_MEM_MAX_REGIONS + 1), -EPROTO);
	m.size = 4;
	assert_int_equal(check(&m, 0), -EPROTO);
}

static void config_access_stays_inside_the_config_space(void **state)
{
	struct vhost_user_msg m = msg(VHOST_USER_GET_CONFIG, 12 + 16);

	m.payload.config.size = 16;
	assert_int_equal(check(&m, 0), 0);
	m.payload.config.offset = VHOST_USER_MAX_CONFIG - 8;
	assert_int_equal(check(&m, 0), -EPROTO);
	m.payload.config.offset = 0;
	m.payload.config.size = VHOST_USER_MAX_CONFIG + 4;
	m.size = 12 + m.payload.config.size;
	assert_int_equal(check(&m, 0), -EPROTO);
	m.payload.config.size = 16;
	m.size = 12 + 8;
	assert_int_equal(check(&m, 0), -EPROTO);
}

/* ---- feature negotiation ------------------------------------------------- */

#define BIT(n) (1ull << (n))
/* What the worker offers: VERSION_1, VIRGL, INDIRECT_DESC, EVENT_IDX,
 * PROTOCOL_FEATURES. */
#define OFFERED (BIT(32) | BIT(0) | BIT(28) | BIT(29) | BIT(30))

static const struct {
	const char *description;
	uint64_t offered, requested;
	int expect;
	uint64_t negotiated;
} negotiations[] = {
    {"everything offered", OFFERED, OFFERED, 0, OFFERED},
    {"part of what was offered", OFFERED, BIT(32) | BIT(0), 0, BIT(32) | BIT(0)},
    {"QEMU 10: the offer and RING_RESET", OFFERED, OFFERED | BIT(40), 0, OFFERED},
    {"RING_RESET offered and set", OFFERED | BIT(40), OFFERED | BIT(40), 0, OFFERED | BIT(40)},
    {"a packed ring, not offered", OFFERED, OFFERED | BIT(34), -EPROTO, 0},
    {"IOMMU addresses, not offered", OFFERED, OFFERED | BIT(33), -EPROTO, 0},
    {"in-order completion, not offered", OFFERED, OFFERED | BIT(35), -EPROTO, 0},
    {"notification data, not offered", OFFERED, OFFERED | BIT(38), -EPROTO, 0},
    {"dirty logging (VHOST_F_LOG_ALL), not offered", OFFERED, OFFERED | BIT(26), -EPROTO, 0},
    {"EDID, not offered", OFFERED, OFFERED | BIT(1), -EPROTO, 0},
    {"a bit no spec names yet, beside RING_RESET", OFFERED, OFFERED | BIT(40) | BIT(63), -EPROTO,
     0},
    {"no VERSION_1: a legacy driver", OFFERED, OFFERED & ~BIT(32), -EPROTO, 0},
    {"nothing at all", OFFERED, 0, -EPROTO, 0},
};

static void features_set_but_not_offered_are_refused_except_the_front_ends_own(void **state)
{
	for (size_t i = 0; i < sizeof(negotiations) / sizeof(negotiations[0]); i++) {
		uint64_t got = 0xdead;
		const char *what = NULL;
		int r = vhost_user_negotiate_features(negotiations[i].offered,
						      negotiations[i].requested, &got, &what);

		if (r != negotiations[i].expect)
			fail_msg("%s: got %d, expected %d", negotiations[i].description, r,
				 negotiations[i].expect);
		if (r == 0 && got != negotiations[i].negotiated)
			fail_msg("%s: negotiated %#llx, expected %#llx",
				 negotiations[i].description, (unsigned long long)got,
				 (unsigned long long)negotiations[i].negotiated);
		if (r < 0 && !what)
			fail_msg("%s: refused without a reason", negotiations[i].description);
		if (r < 0 && got != 0xdead)
			fail_msg("%s: refused but wrote a result", negotiations[i].description);
	}
}

static void a_refusal_names_the_feature_it_cannot_serve(void **state)
{
	uint64_t got;
	const char *what = NULL;

	assert_int_equal(vhost_user_negotiate_features(OFFERED, OFFERED | BIT(34), &got, &what),
			 -EPROTO);
	assert_non_null(strstr(what, "RING_PACKED"));
	assert_int_equal(vhost_user_negotiate_features(OFFERED, OFFERED & ~BIT(32), &got, &what),
			 -EPROTO);
	assert_non_null(strstr(what, "VERSION_1"));
}

/* ---- framing over a socket ----------------------------------------------- */

/* How many fds this process has open. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own fd */
}

/* Sends @len bytes of @buf on @fd with @nfds fresh fds (copies of stdin's). */
static void send_with_fds(int fd, const void *buf, size_t len, int nfds)
{
	struct iovec iov = {(void *)buf, len};
	int fds[SCM_SEND_MAX_FDS];

	for (int i = 0; i < nfds; i++)
		fds[i] = dup(0);
	assert_int_equal(scm_send(fd, &iov, 1, fds, nfds, 0), (ssize_t)len);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
}

static void a_whole_message_arrives_with_its_fds(void **state)
{
	int sv[2], fds[VHOST_USER_MAX_FDS], nfds = -1, before;
	struct vhost_user_msg m = msg(VHOST_USER_SET_VRING_KICK, 8), got;
	const char *what = NULL;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	before = open_fds();
	m.payload.u64 = 1;
	send_with_fds(sv[0], &m, VHOST_USER_HDR_SIZE + 8, 1);
	assert_int_equal(vhost_user_recv(sv[1], &got, fds, &nfds, &what), 1);
	assert_int_equal(got.request, VHOST_USER_SET_VRING_KICK);
	assert_int_equal(got.size, 8);
	assert_int_equal(got.payload.u64, 1);
	assert_int_equal(nfds, 1);
	close(fds[0]);
	assert_int_equal(open_fds(), before);
	close(sv[0]);
	assert_int_equal(vhost_user_recv(sv[1], &got, fds, &nfds, &what), 0);
	close(sv[1]);
}

static void a_payload_larger_than_any_request_is_refused_without_leaking_fds(void **state)
{
	int sv[2], fds[VHOST_USER_MAX_FDS], nfds = -1, before;
	struct vhost_user_msg m = msg(VHOST_USER_SET_MEM_TABLE, VHOST_USER_MAX_PAYLOAD + 1);
	const char *what = NULL;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	before = open_fds();
	send_with_fds(sv[0], &m, VHOST_USER_HDR_SIZE, 3);
	assert_int_equal(vhost_user_recv(sv[1], &m, fds, &nfds, &what), -EPROTO);
	assert_non_null(what);
	assert_int_equal(nfds, 0);
	assert_int_equal(open_fds(), before);
	close(sv[0]);
	close(sv[1]);
}

static void too_many_fds_are_refused_and_closed(void **state)
{
	int sv[2], fds[VHOST_USER_MAX_FDS], nfds = -1, before;
	struct vhost_user_msg m = msg(VHOST_USER_GET_FEATURES, 0);
	const char *what = NULL;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	before = open_fds();
	send_with_fds(sv[0], &m, VHOST_USER_HDR_SIZE, VHOST_USER_MAX_FDS + 4);
	assert_int_equal(vhost_user_recv(sv[1], &m, fds, &nfds, &what), -EPROTO);
	assert_int_equal(nfds, 0);
	assert_int_equal(open_fds(), before);
	close(sv[0]);
	close(sv[1]);
}

static void a_peer_that_closes_mid_message_is_an_error(void **state)
{
	int sv[2], fds[VHOST_USER_MAX_FDS], nfds = -1;
	struct vhost_user_msg m = msg(VHOST_USER_SET_FEATURES, 8);
	const char *what = NULL;

	/* In the payload. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(send(sv[0], &m, VHOST_USER_HDR_SIZE + 3, 0), VHOST_USER_HDR_SIZE + 3);
	close(sv[0]);
	assert_int_equal(vhost_user_recv(sv[1], &m, fds, &nfds, &what), -EPROTO);
	close(sv[1]);
	/* In the header. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(send(sv[0], &m, 5, 0), 5);
	close(sv[0]);
	assert_int_equal(vhost_user_recv(sv[1], &m, fds, &nfds, &what), -EPROTO);
	close(sv[1]);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void a_peer_that_stops_mid_message_is_given_up_after_the_timeout(void **state)
{
	static const struct {
		const char *description;
		size_t sent;
	} cuts[] = {
	    {"inside the header", 5},
	    {"inside the payload", VHOST_USER_HDR_SIZE + 3},
	};

	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		int sv[2], fds[VHOST_USER_MAX_FDS], nfds = -1;
		struct vhost_user_msg m = msg(VHOST_USER_SET_FEATURES, 8);
		const char *what = NULL;
		double t0, took;

		/* The peer stays connected but sends nothing more. */
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		assert_int_equal(send(sv[0], &m, cuts[i].sent, 0), (ssize_t)cuts[i].sent);
		t0 = now_s();
		assert_int_equal(vhost_user_recv(sv[1], &m, fds, &nfds, &what), -ETIMEDOUT);
		took = now_s() - t0;
		if (took < VHOST_USER_MSG_TIMEOUT_MS / 1000.0 * 0.9 ||
		    took > VHOST_USER_MSG_TIMEOUT_MS / 1000.0 + 1.0)
			fail_msg("%s: given up after %.2f s", cuts[i].description, took);
		assert_non_null(strstr(what, "did not come within"));
		assert_int_equal(nfds, 0);
		close(sv[0]);
		close(sv[1]);
	}
}

static void a_reply_to_a_peer_that_never_reads_is_given_up_after_the_timeout(void **state)
{
	int sv[2], size = 4096, r = 0;
	uint8_t payload[VHOST_USER_MAX_PAYLOAD] = {0};
	double t0 = 0;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	/* Fill the socket: the first reply that finds no room waits, then gives up. */
	for (int i = 0; i < 100000 && r == 0; i++) {
		t0 = now_s();
		r = vhost_user_reply(sv[0], VHOST_USER_GET_CONFIG, payload, sizeof(payload));
	}
	assert_int_equal(r, -ETIMEDOUT);
	assert_true(now_s() - t0 >= VHOST_USER_MSG_TIMEOUT_MS / 1000.0 * 0.9);
	assert_true(now_s() - t0 < VHOST_USER_MSG_TIMEOUT_MS / 1000.0 + 1.0);
	close(sv[0]);
	close(sv[1]);
}

static void a_reply_carries_the_request_and_the_reply_flag(void **state)
{
	int sv[2];
	uint64_t v = 0x1234;
	uint8_t buf[64];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(vhost_user_reply(sv[0], VHOST_USER_GET_FEATURES, &v, sizeof(v)), 0);
	assert_int_equal(recv(sv[1], buf, sizeof(buf), 0), VHOST_USER_HDR_SIZE + 8);
	assert_int_equal(((uint32_t *)buf)[0], VHOST_USER_GET_FEATURES);
	assert_int_equal(((uint32_t *)buf)[1], VHOST_USER_VERSION | VHOST_USER_REPLY);
	assert_int_equal(((uint32_t *)buf)[2], 8);
	assert_int_equal(vhost_user_reply(sv[0], 1, &v, VHOST_USER_MAX_PAYLOAD + 1), -EINVAL);
	close(sv[0]);
	close(sv[1]);
}

/* ---- the display channel (vgpu_display.h) ------------------------------------ */

/*
 * The channel is a socketpair: the test plays QEMU on its end. QEMU's
 * answers are queued before the worker's side asks, so no second thread
 * is needed; what the worker's side sent is read afterwards.
 */
enum {
	GPU_GET_PROTOCOL_FEATURES = 1,
	GPU_SET_PROTOCOL_FEATURES = 2,
	GPU_GET_DISPLAY_INFO = 3,
	GPU_GET_EDID = 11
};
#define GPU_REPLY 0x4u

static void qemu_answers(int fd, uint32_t request, const void *payload, uint32_t size)
{
	uint32_t hdr[3] = {request, GPU_REPLY, size};

	assert_int_equal(send(fd, hdr, sizeof(hdr), 0), sizeof(hdr));
	if (size)
		assert_int_equal(send(fd, payload, size, 0), (ssize_t)size);
}

/* Reads the next message the worker's side sent; its payload to @payload. */
static uint32_t worker_sent(int fd, void *payload, uint32_t max)
{
	uint32_t hdr[3];

	assert_int_equal(recv(fd, hdr, sizeof(hdr), MSG_DONTWAIT), sizeof(hdr));
	assert_int_equal(hdr[1], 0);
	assert_true(hdr[2] <= max);
	if (hdr[2])
		assert_int_equal(recv(fd, payload, hdr[2], MSG_DONTWAIT), (ssize_t)hdr[2]);
	return hdr[0];
}

static bool nothing_more_sent(int fd)
{
	uint8_t b;

	return recv(fd, &b, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
}

/* QEMU's display: one enabled 800x600 head, a second one disabled. */
static void queue_display_info(int fd)
{
	struct virtio_gpu_resp_display_info info;

	memset(&info, 0, sizeof(info));
	info.hdr.type = VIRTIO_GPU_RESP_OK_DISPLAY_INFO;
	info.pmodes[0].r.width = 800;
	info.pmodes[0].r.height = 600;
	info.pmodes[0].enabled = 1;
	qemu_answers(fd, GPU_GET_DISPLAY_INFO, &info, sizeof(info));
}

static void the_display_channel_asks_for_protocol_features_without_waiting(void **state)
{
	struct vgpu_display disp;
	int sv[2];
	uint64_t u64;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	vgpu_display_init(&disp, "test", 1);
	/* Nothing is queued: the worker must not wait for QEMU here. */
	vgpu_display_set_fd(&disp, sv[1]);
	assert_int_equal(worker_sent(sv[0], &u64, sizeof(u64)), GPU_GET_PROTOCOL_FEATURES);
	assert_true(nothing_more_sent(sv[0]));
	vgpu_display_finish(&disp);
	close(sv[0]);
}

static void edid_comes_from_a_qemu_that_offers_it(void **state)
{
	struct vgpu_display disp;
	struct virtio_gpu_resp_edid edid, got;
	int sv[2];
	uint64_t offered = 0x3, u64; /* QEMU 10: EDID and DMABUF2 */
	uint32_t id;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	vgpu_display_init(&disp, "test", 1);
	vgpu_display_set_fd(&disp, sv[1]);
	memset(&edid, 0, sizeof(edid));
	edid.hdr.type = VIRTIO_GPU_RESP_OK_EDID;
	edid.size = 128;
	memcpy(edid.edid, "\x00\xff\xff\xff\xff\xff\xff\x00QEMU", 12);
	qemu_answers(sv[0], GPU_GET_PROTOCOL_FEATURES, &offered, sizeof(offered));
	queue_display_info(sv[0]);
	qemu_answers(sv[0], GPU_GET_EDID, &edid, sizeof(edid));
	assert_int_equal(vgpu_display_edid(&disp, 0, &got), 0);
	assert_int_equal(got.hdr.type, VIRTIO_GPU_RESP_OK_EDID);
	assert_int_equal(got.size, 128);
	assert_memory_equal(got.edid, edid.edid, 128);
	/* On the wire: the features asked, only EDID taken, the display, the EDID. */
	assert_int_equal(worker_sent(sv[0], &u64, sizeof(u64)), GPU_GET_PROTOCOL_FEATURES);
	assert_int_equal(worker_sent(sv[0], &u64, sizeof(u64)), GPU_SET_PROTOCOL_FEATURES);
	assert_int_equal(u64, 1u << VGPU_DISPLAY_F_EDID);
	assert_int_equal(worker_sent(sv[0], &u64, sizeof(u64)), GPU_GET_DISPLAY_INFO);
	assert_int_equal(worker_sent(sv[0], &id, sizeof(id)), GPU_GET_EDID);
	assert_int_equal(id, 0);
	/* A scanout QEMU does not show is never asked for: QEMU would not answer. */
	assert_int_equal(vgpu_display_edid(&disp, 1, &got), -EINVAL);
	assert_int_equal(vgpu_display_edid(&disp, VIRTIO_GPU_MAX_SCANOUTS, &got), -EINVAL);
	assert_true(nothing_more_sent(sv[0]));
	assert_int_equal(vgpu_display_info(&disp)->pmodes[0].r.width, 800);
	vgpu_display_finish(&disp);
	close(sv[0]);
}

static void a_qemu_without_the_edid_protocol_feature_is_never_asked(void **state)
{
	struct vgpu_display disp;
	struct virtio_gpu_resp_edid got;
	int sv[2];
	uint64_t offered = 0, u64; /* QEMU before 8.1 */

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	vgpu_display_init(&disp, "test", 1);
	vgpu_display_set_fd(&disp, sv[1]);
	qemu_answers(sv[0], GPU_GET_PROTOCOL_FEATURES, &offered, sizeof(offered));
	assert_int_equal(vgpu_display_edid(&disp, 0, &got), -ENOTSUP);
	assert_int_equal(worker_sent(sv[0], &u64, sizeof(u64)), GPU_GET_PROTOCOL_FEATURES);
	assert_int_equal(worker_sent(sv[0], &u64, sizeof(u64)), GPU_SET_PROTOCOL_FEATURES);
	assert_int_equal(u64, 0);
	assert_true(nothing_more_sent(sv[0]));
	assert_true(disp.fd >= 0);
	vgpu_display_finish(&disp);
	close(sv[0]);
	/* No channel at all. */
	vgpu_display_init(&disp, "test", 1);
	assert_int_equal(vgpu_display_edid(&disp, 0, &got), -ENOTSUP);
	vgpu_display_finish(&disp);
}

static void a_qemu_that_stops_reading_loses_its_display_channel_after_the_timeout(void **state)
{
	struct vgpu_display disp;
	int sv[2], size = 4096;
	size_t frame = 4u << 20;
	uint8_t *pixels = calloc(1, frame);
	double t0, took;

	assert_non_null(pixels);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	vgpu_display_init(&disp, "test", 1);
	vgpu_display_set_fd(&disp, sv[1]);
	/* "QEMU" never reads: a 1024x1024 frame cannot go. */
	t0 = now_s();
	assert_int_equal(vgpu_display_update(&disp, 0, 0, 0, 1024, 1024, pixels), -EPIPE);
	took = now_s() - t0;
	if (took < VGPU_DISPLAY_TIMEOUT_MS / 1000.0 * 0.9 ||
	    took > VGPU_DISPLAY_TIMEOUT_MS / 1000.0 + 1.0)
		fail_msg("the channel was given up after %.2f s", took);
	assert_int_equal(disp.fd, -1);
	/* Later updates cost nothing. */
	assert_int_equal(vgpu_display_update(&disp, 0, 0, 0, 1, 1, pixels), -ENOTCONN);
	vgpu_display_finish(&disp);
	close(sv[0]);
	free(pixels);
}

static void a_wrong_answer_closes_the_display_channel(void **state)
{
	static const struct {
		const char *description;
		uint32_t request, flags, size;
	} bad[] = {
	    {"another request's answer", GPU_GET_DISPLAY_INFO, GPU_REPLY, 8},
	    {"no reply flag", GPU_GET_PROTOCOL_FEATURES, 0, 8},
	    {"a short payload", GPU_GET_PROTOCOL_FEATURES, GPU_REPLY, 4},
	};
	struct virtio_gpu_resp_edid got;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vgpu_display disp;
		uint32_t hdr[3] = {bad[i].request, bad[i].flags, bad[i].size};
		uint64_t payload = 1;
		int sv[2];

		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		vgpu_display_init(&disp, "test", 1);
		vgpu_display_set_fd(&disp, sv[1]);
		assert_int_equal(send(sv[0], hdr, sizeof(hdr), 0), sizeof(hdr));
		assert_int_equal(send(sv[0], &payload, sizeof(payload), 0), sizeof(payload));
		if (vgpu_display_edid(&disp, 0, &got) != -EPIPE || disp.fd != -1)
			fail_msg("%s: channel kept", bad[i].description);
		/* The guest still gets a display: QEMU's default head. */
		assert_int_equal(vgpu_display_info(&disp)->pmodes[0].r.width, 1024);
		vgpu_display_finish(&disp);
		close(sv[0]);
	}
}

static void an_edid_larger_than_its_field_closes_the_display_channel(void **state)
{
	struct vgpu_display disp;
	struct virtio_gpu_resp_edid edid, got;
	int sv[2];
	uint64_t offered = 0x1;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	vgpu_display_init(&disp, "test", 1);
	vgpu_display_set_fd(&disp, sv[1]);
	memset(&edid, 0, sizeof(edid));
	edid.size = sizeof(edid.edid) + 1;
	qemu_answers(sv[0], GPU_GET_PROTOCOL_FEATURES, &offered, sizeof(offered));
	queue_display_info(sv[0]);
	qemu_answers(sv[0], GPU_GET_EDID, &edid, sizeof(edid));
	assert_int_equal(vgpu_display_edid(&disp, 0, &got), -EPIPE);
	assert_int_equal(disp.fd, -1);
	vgpu_display_finish(&disp);
	close(sv[0]);
}

/* ---- guest memory ------------------------------------------------------------ */

static int memfd_of(size_t size)
{
	int fd = memfd_create("guest", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	return fd;
}

static void guest_addresses_translate_inside_their_region_only(void **state)
{
	struct guest_mem *mem = guest_mem_create();
	struct guest_mem_region r[2] = {{0, 1 << 20, 0x7f0000000000, 0},
					{1 << 20, 1 << 20, 0x7f1000000000, 0}};
	int fds[2] = {memfd_of(1 << 20), memfd_of(1 << 20)};
	struct iovec iov[4];
	uint8_t *a, *b;

	assert_int_equal(guest_mem_set(mem, r, fds, 2), 0);
	a = guest_mem_gpa(mem, 4096, 16);
	b = guest_mem_uva(mem, 0x7f0000000000 + 4096, 16);
	assert_non_null(a);
	assert_ptr_equal(a, b);
	/* The last byte of a region, and one past. */
	assert_non_null(guest_mem_gpa(mem, (1 << 20) - 1, 1));
	assert_null(guest_mem_gpa(mem, (1 << 20) - 1, 2));
	assert_null(guest_mem_gpa(mem, 2 << 20, 1));
	assert_null(guest_mem_gpa(mem, UINT64_MAX - 4, 16));
	assert_null(guest_mem_uva(mem, 0x1000, 1));
	/* A range across both regions is split in two. */
	assert_int_equal(guest_mem_iov(mem, (1 << 20) - 16, 32, iov, 0, 4), 2);
	assert_int_equal(iov[0].iov_len, 16);
	assert_int_equal(iov[1].iov_len, 16);
	assert_int_equal(guest_mem_iov(mem, (1 << 20) - 16, 32, iov, 0, 1), -E2BIG);
	assert_int_equal(guest_mem_iov(mem, (2 << 20) - 16, 32, iov, 0, 4), -EFAULT);
	assert_int_equal(guest_mem_iov(mem, UINT64_MAX - 8, 32, iov, 0, 4), -EFAULT);
	guest_mem_destroy(mem);
}

static void bad_memory_tables_are_refused_and_their_fds_closed(void **state)
{
	static const struct {
		const char *description;
		struct guest_mem_region r[2];
		size_t n;
		int err;
	} bad[] = {
	    {"no region", {{0}}, 0, -EINVAL},
	    {"an empty region", {{0, 0, 0x1000, 0}}, 1, -EINVAL},
	    {"a region past the end of guest addresses",
	     {{UINT64_MAX - 10, 4096, 0x1000, 0}},
	     1,
	     -EINVAL},
	    {"overlapping guest addresses",
	     {{0, 1 << 20, 0x10000000, 0}, {4096, 1 << 20, 0x20000000, 0}},
	     2,
	     -EINVAL},
	    {"overlapping QEMU addresses",
	     {{0, 1 << 20, 0x10000000, 0}, {1 << 20, 1 << 20, 0x10001000, 0}},
	     2,
	     -EINVAL},
	    {"a region past the end of its file", {{0, 2 << 20, 0x10000000, 0}}, 1, -ENXIO},
	    {"an offset past the end of its file", {{0, 1 << 20, 0x10000000, 4096}}, 1, -ENXIO},
	};
	struct guest_mem *mem = guest_mem_create();
	int before = open_fds();

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int fds[2] = {memfd_of(1 << 20), memfd_of(1 << 20)};

		if (guest_mem_set(mem, bad[i].r, fds, bad[i].n) != bad[i].err)
			fail_msg("%s: not refused with %d", bad[i].description, bad[i].err);
		assert_null(guest_mem_gpa(mem, 0, 1));
		for (size_t k = bad[i].n; k < 2; k++)
			close(fds[k]);
		if (open_fds() != before)
			fail_msg("%s: fds leaked", bad[i].description);
	}
	guest_mem_destroy(mem);
	guest_mem_destroy(NULL);
}

static void a_memory_fd_that_is_not_a_file_is_refused(void **state)
{
	struct guest_mem *mem = guest_mem_create();
	struct guest_mem_region r = {0, 4096, 0x10000000, 0};
	int sv[2], before = open_fds();

	/* A socket has no size to check the region against. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(guest_mem_set(mem, &r, &sv[0], 1), -ENODEV);
	close(sv[1]);
	assert_int_equal(open_fds(), before);
	assert_null(guest_mem_gpa(mem, 0, 1));
	guest_mem_destroy(mem);
}

static void a_region_is_read_from_its_mmap_offset(void **state)
{
	struct guest_mem *mem = guest_mem_create();
	struct guest_mem_region r = {0x100000, 4096, 0x7f0000000000, 8192};
	int fd = memfd_of(3 * 4096);
	uint8_t *p;

	assert_int_equal(pwrite(fd, "offset", 6, 8192), 6);
	assert_int_equal(guest_mem_set(mem, &r, &fd, 1), 0);
	p = guest_mem_gpa(mem, 0x100000, 6);
	assert_non_null(p);
	assert_memory_equal(p, "offset", 6);
	assert_null(guest_mem_gpa(mem, 0x100000 + 4096 - 2, 6));
	guest_mem_destroy(mem);
}

static void more_regions_than_served_are_refused_with_every_fd_closed(void **state)
{
	struct guest_mem_region r[GUEST_MEM_MAX_REGIONS + 1];
	int fds[GUEST_MEM_MAX_REGIONS + 1];
	struct guest_mem *mem = guest_mem_create();
	int before = open_fds();

	for (size_t i = 0; i < GUEST_MEM_MAX_REGIONS + 1; i++) {
		r[i] = (struct guest_mem_region){i << 20, 1 << 20, 0x10000000 + (i << 20), 0};
		fds[i] = memfd_of(1 << 20);
	}
	assert_int_equal(guest_mem_set(mem, r, fds, GUEST_MEM_MAX_REGIONS + 1), -EINVAL);
	assert_int_equal(open_fds(), before);
	/* The largest table served is accepted. */
	for (size_t i = 0; i < GUEST_MEM_MAX_REGIONS; i++)
		fds[i] = memfd_of(1 << 20);
	assert_int_equal(guest_mem_set(mem, r, fds, GUEST_MEM_MAX_REGIONS), 0);
	assert_non_null(guest_mem_gpa(mem, ((uint64_t)GUEST_MEM_MAX_REGIONS << 20) - 1, 1));
	guest_mem_destroy(mem);
	assert_int_equal(open_fds(), before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_request_has_its_size_fds_and_ring_checked),
	    cmocka_unit_test(bad_version_and_replies_are_refused),
	    cmocka_unit_test(memory_table_counts_agree_with_size_and_fds),
	    cmocka_unit_test(config_access_stays_inside_the_config_space),
	    cmocka_unit_test(features_set_but_not_offered_are_refused_except_the_front_ends_own),
	    cmocka_unit_test(a_refusal_names_the_feature_it_cannot_serve),
	    cmocka_unit_test(a_whole_message_arrives_with_its_fds),
	    cmocka_unit_test(a_payload_larger_than_any_request_is_refused_without_leaking_fds),
	    cmocka_unit_test(too_many_fds_are_refused_and_closed),
	    cmocka_unit_test(a_peer_that_closes_mid_message_is_an_error),
	    cmocka_unit_test(a_reply_carries_the_request_and_the_reply_flag),
	    cmocka_unit_test(a_peer_that_stops_mid_message_is_given_up_after_the_timeout),
	    cmocka_unit_test(a_reply_to_a_peer_that_never_reads_is_given_up_after_the_timeout),
	    cmocka_unit_test(a_qemu_that_stops_reading_loses_its_display_channel_after_the_timeout),
	    cmocka_unit_test(the_display_channel_asks_for_protocol_features_without_waiting),
	    cmocka_unit_test(edid_comes_from_a_qemu_that_offers_it),
	    cmocka_unit_test(a_qemu_without_the_edid_protocol_feature_is_never_asked),
	    cmocka_unit_test(a_wrong_answer_closes_the_display_channel),
	    cmocka_unit_test(an_edid_larger_than_its_field_closes_the_display_channel),
	    cmocka_unit_test(a_region_is_read_from_its_mmap_offset),
	    cmocka_unit_test(a_memory_fd_that_is_not_a_file_is_refused),
	    cmocka_unit_test(more_regions_than_served_are_refused_with_every_fd_closed),
	    cmocka_unit_test(guest_addresses_translate_inside_their_region_only),
	    cmocka_unit_test(bad_memory_tables_are_refused_and_their_fds_closed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
