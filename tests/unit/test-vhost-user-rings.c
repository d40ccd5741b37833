// SPDX-License-Identifier: MIT
/*
 * The ring state rules of the vhost-user-gpu worker (vhost_gpu_server.c,
 * vhost-user.rst "Ring states"), against the real mediator-worker started
 * on a socketpair as mediatord starts it; this test plays QEMU and the
 * guest, with a memfd as the guest's memory.
 *
 *  - A started ring's size, addresses and base cannot change: the exact
 *    sequence a reviewer turned into an out-of-bounds write (a 4-entry
 *    ring whose used ring ends the region, used->idx 30000, SET_VRING_NUM
 *    32768 after the kick, one cursor request) ends the connection, and
 *    the worker exits by itself instead of dying of SIGSEGV (under the
 *    ASan build too).
 *  - The stop/restart QEMU does (GET_VRING_BASE, a new size, addresses
 *    and base, SET_VRING_KICK) is served, and the restarted ring answers
 *    requests at its new size.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/virtio_gpu.h>

#include "scm_send.h"
#include "spawn_worker.h"
#include "worker/vhost-user/vhost_user.h"
#include "common/wire.h"

#define TIMEOUT_MS 10000
/* The reviewer's guest memory: one region of 0x2000 bytes. */
#define REGION_SIZE 0x2000u
#define REGION_UVA  0x7f0000000000ull
#define DESC	    0x0000u
#define AVAIL	    0x0100u
#define REQ	    0x0200u
#define RESP	    0x0400u
/* The used ring of a 4-entry ring ends the region: 6 + 8 * 4 bytes, 4-aligned. */
#define USED_AT(num) ((REGION_SIZE - (6u + 8u * (num))) & ~3u)

struct peer {
	pid_t pid;
	int qemu, mediator;
	int memfd;
	uint8_t *g; /* the guest's view of its memory */
	int kick;
};

static void start_worker(struct peer *p)
{
	p->pid = spawn_vhost_user_worker(MEDIATOR_WORKER_PATH, "rings", &p->qemu, &p->mediator);
	assert_true(p->pid > 0);
	p->kick = -1;
	p->memfd = memfd_create("rings-guest", MFD_CLOEXEC);
	assert_true(p->memfd >= 0);
	assert_int_equal(ftruncate(p->memfd, REGION_SIZE), 0);
	p->g = mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, p->memfd, 0);
	assert_true(p->g != MAP_FAILED);
}

/* Sends one request; false when the worker already closed the connection. */
static bool send_msg(struct peer *p, uint32_t request, const void *payload, uint32_t size,
		     const int *fds, int nfds)
{
	uint32_t hdr[3] = {request, VHOST_USER_VERSION, size};
	struct iovec iov[2] = {{hdr, sizeof(hdr)}, {(void *)payload, size}};

	return scm_send(p->qemu, iov, size ? 2 : 1, fds, nfds, MSG_NOSIGNAL) ==
	       (ssize_t)(sizeof(hdr) + size);
}

static void must_send(struct peer *p, uint32_t request, const void *payload, uint32_t size,
		      const int *fds, int nfds)
{
	if (!send_msg(p, request, payload, size, fds, nfds))
		fail_msg("%s: the worker closed the connection (%s)",
			 vhost_user_request_name(request), strerror(errno));
}

static void read_exact(int fd, void *buf, size_t len)
{
	uint8_t *b = buf;

	while (len) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, TIMEOUT_MS) <= 0)
			fail_msg("no reply within %d ms", TIMEOUT_MS);
		n = recv(fd, b, len, 0);
		if (n <= 0)
			fail_msg("the worker closed the connection");
		b += n;
		len -= (size_t)n;
	}
}

/* Features, the one-region memory table: what comes before any ring. */
static void set_up_device(struct peer *p)
{
	uint64_t features = 1ull << 32; /* VIRTIO_F_VERSION_1, no PROTOCOL_FEATURES */
	struct vhost_user_memory t = {.nregions = 1};

	must_send(p, VHOST_USER_SET_OWNER, NULL, 0, NULL, 0);
	must_send(p, VHOST_USER_SET_FEATURES, &features, sizeof(features), NULL, 0);
	t.regions[0] = (struct guest_mem_region){0, REGION_SIZE, REGION_UVA, 0};
	must_send(p, VHOST_USER_SET_MEM_TABLE, &t, 8 + sizeof(t.regions[0]), &p->memfd, 1);
}

/* Size, base and addresses of ring 1 (the cursor queue), used ring at @used. */
static void describe_cursor_ring(struct peer *p, uint32_t num, uint32_t used)
{
	struct vhost_user_vring_state st = {1, num};
	struct vhost_user_vring_addr a = {.index = 1,
					  .desc_uva = REGION_UVA + DESC,
					  .avail_uva = REGION_UVA + AVAIL,
					  .used_uva = REGION_UVA + used};

	must_send(p, VHOST_USER_SET_VRING_NUM, &st, sizeof(st), NULL, 0);
	st.num = 0;
	must_send(p, VHOST_USER_SET_VRING_BASE, &st, sizeof(st), NULL, 0);
	must_send(p, VHOST_USER_SET_VRING_ADDR, &a, sizeof(a), NULL, 0);
}

static void kick_fd(struct peer *p)
{
	uint64_t idx = 1;

	if (p->kick >= 0)
		close(p->kick);
	p->kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	assert_true(p->kick >= 0);
	must_send(p, VHOST_USER_SET_VRING_KICK, &idx, sizeof(idx), &p->kick, 1);
}

/* The guest puts one MOVE_CURSOR (descriptors 0 and 1) as avail entry @avail_idx - 1 and kicks. */
static void offer_cursor_request(struct peer *p, uint32_t num, uint16_t avail_idx)
{
	struct virtio_gpu_update_cursor c = {.hdr.type = VIRTIO_GPU_CMD_MOVE_CURSOR};
	uint64_t d[2][2] = {{REQ, 0}, {RESP, 0}};
	uint16_t *avail = (uint16_t *)(p->g + AVAIL);
	uint64_t one = 1;

	memcpy(p->g + REQ, &c, sizeof(c));
	/* {u64 addr, u32 len, u16 flags, u16 next}: NEXT then WRITE. */
	d[0][1] = sizeof(c) | (1ull << 32) | (1ull << 48);
	d[1][1] = 24 | (2ull << 32);
	memcpy(p->g + DESC, d, sizeof(d));
	avail[2 + (avail_idx - 1) % num] = 0;
	__atomic_store_n(&avail[1], avail_idx, __ATOMIC_RELEASE);
	if (write(p->kick, &one, sizeof(one)) != sizeof(one))
		fail_msg("kick");
}

static uint16_t used_idx(struct peer *p, uint32_t used)
{
	return __atomic_load_n((uint16_t *)(p->g + used + 2), __ATOMIC_ACQUIRE);
}

/* Waits for the worker to exit by itself; returns its wait status. */
static int wait_exit(struct peer *p)
{
	int status = 0;

	for (int i = 0; i < TIMEOUT_MS / 10; i++) {
		pid_t r = waitpid(p->pid, &status, WNOHANG);

		if (r == p->pid)
			return status;
		usleep(10000);
	}
	kill(p->pid, SIGKILL);
	waitpid(p->pid, &status, 0);
	fail_msg("the worker did not exit after the connection ended");
	return status;
}

static void finish(struct peer *p)
{
	close(p->qemu);
	wait_exit(p);
	close(p->mediator);
	close(p->memfd);
	if (p->kick >= 0)
		close(p->kick);
	munmap(p->g, REGION_SIZE);
}

/* The connection ends (the worker closed it) within TIMEOUT_MS. */
static void expect_closed(struct peer *p)
{
	char buf[64];

	for (;;) {
		struct pollfd pfd = {.fd = p->qemu, .events = POLLIN};

		if (poll(&pfd, 1, TIMEOUT_MS) <= 0)
			fail_msg("the worker kept the connection open");
		if (recv(p->qemu, buf, sizeof(buf), 0) <= 0)
			return;
	}
}

static void a_new_size_on_a_started_ring_is_refused_before_it_writes_out_of_bounds(void **state)
{
	struct peer p;
	struct vhost_user_vring_state big = {1, 32768};
	int status;

	start_worker(&p);
	set_up_device(&p);
	describe_cursor_ring(&p, 4, USED_AT(4));
	/* The guest says 30000 entries were used already. */
	*(uint16_t *)(p.g + USED_AT(4) + 2) = 30000;
	kick_fd(&p);
	/* The old code stored 32768 and the cursor answer went to used entry
	 * 30000: 0x3c95c bytes into a 0x2000-byte region. */
	send_msg(&p, VHOST_USER_SET_VRING_NUM, &big, sizeof(big), NULL, 0);
	offer_cursor_request(&p, 4, 1);
	expect_closed(&p);
	status = wait_exit(&p);
	if (WIFSIGNALED(status))
		fail_msg("the worker died of signal %d", WTERMSIG(status));
	assert_true(WIFEXITED(status));
	/* Nothing was answered through a ring the worker refused to resize. */
	assert_int_equal(used_idx(&p, USED_AT(4)), 30000);
	close(p.qemu);
	close(p.mediator);
	close(p.memfd);
	close(p.kick);
	munmap(p.g, REGION_SIZE);
	(void)state;
}

static void addresses_and_base_of_a_started_ring_are_refused_too(void **state)
{
	static const uint32_t requests[] = {VHOST_USER_SET_VRING_ADDR, VHOST_USER_SET_VRING_BASE};

	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		struct peer p;
		struct vhost_user_vring_addr a = {.index = 1,
						  .desc_uva = REGION_UVA + DESC,
						  .avail_uva = REGION_UVA + AVAIL,
						  .used_uva = REGION_UVA + USED_AT(4)};
		struct vhost_user_vring_state st = {1, 7};
		int status;

		start_worker(&p);
		set_up_device(&p);
		describe_cursor_ring(&p, 4, USED_AT(4));
		kick_fd(&p);
		if (requests[i] == VHOST_USER_SET_VRING_ADDR)
			send_msg(&p, requests[i], &a, sizeof(a), NULL, 0);
		else
			send_msg(&p, requests[i], &st, sizeof(st), NULL, 0);
		expect_closed(&p);
		status = wait_exit(&p);
		assert_true(WIFEXITED(status));
		close(p.qemu);
		close(p.mediator);
		close(p.memfd);
		close(p.kick);
		munmap(p.g, REGION_SIZE);
	}
	(void)state;
}

static void a_stopped_ring_takes_a_new_size_and_serves_at_it_when_restarted(void **state)
{
	struct peer p;
	struct vhost_user_vring_state st = {1, 0};
	uint32_t hdr[3];
	struct vhost_user_vring_state base;
	uint16_t before;

	start_worker(&p);
	set_up_device(&p);
	describe_cursor_ring(&p, 4, USED_AT(4));
	kick_fd(&p);
	offer_cursor_request(&p, 4, 1);
	for (int i = 0; used_idx(&p, USED_AT(4)) != 1; i++) {
		if (i > TIMEOUT_MS / 10)
			fail_msg("the first cursor request was not answered");
		usleep(10000);
	}
	/* QEMU stops the ring as vhost_virtqueue_stop() does. */
	must_send(&p, VHOST_USER_GET_VRING_BASE, &st, sizeof(st), NULL, 0);
	read_exact(p.qemu, hdr, sizeof(hdr));
	assert_int_equal(hdr[0], VHOST_USER_GET_VRING_BASE);
	assert_int_equal(hdr[2], sizeof(base));
	read_exact(p.qemu, &base, sizeof(base));
	assert_int_equal(base.index, 1);
	assert_int_equal(base.num, 1);
	/* ... and starts it again at another size, as vhost_virtqueue_start() does. */
	memset(p.g, 0, REGION_SIZE);
	describe_cursor_ring(&p, 8, USED_AT(8));
	kick_fd(&p);
	before = used_idx(&p, USED_AT(8));
	offer_cursor_request(&p, 8, 1);
	for (int i = 0; used_idx(&p, USED_AT(8)) == before; i++) {
		if (i > TIMEOUT_MS / 10)
			fail_msg("the restarted ring answered nothing");
		usleep(10000);
	}
	assert_int_equal(used_idx(&p, USED_AT(8)), (uint16_t)(before + 1));
	finish(&p);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		a_new_size_on_a_started_ring_is_refused_before_it_writes_out_of_bounds),
	    cmocka_unit_test(addresses_and_base_of_a_started_ring_are_refused_too),
	    cmocka_unit_test(a_stopped_ring_takes_a_new_size_and_serves_at_it_when_restarted),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
