// SPDX-License-Identifier: MIT
/*
 * Tests of the vtest reply queue: replies leave in order across partial
 * writes, an fd arrives exactly where it was queued, nothing is queued
 * beyond the cap, a client that takes nothing for the stall time is
 * stalled (and one that takes a little is not), and a client gone is
 * reported. The client is the other end of a socketpair with a small send
 * buffer, so that partial writes happen with little data.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "worker/vtest/vtest_outbuf.h"

/* sv[0]: the server's end (non-blocking, small send buffer); sv[1]: the client's. */
static void client_pair(int sv[2])
{
	int small = 4096;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
	assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
}

/* Reads what is there (at most @len) from the client's end; 0 when nothing. */
static size_t client_read(int fd, uint8_t *buf, size_t len)
{
	ssize_t n = recv(fd, buf, len, 0);

	if (n < 0) {
		assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
		return 0;
	}
	return (size_t)n;
}

static bool fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void small_reply_is_written_at_once(void **state)
{
	struct vtest_outbuf *ob = vtest_outbuf_create(0, 0);
	const uint32_t reply[3] = {1, 7, 0};
	uint32_t got[3];
	int sv[2];

	client_pair(sv);
	assert_int_equal(vtest_outbuf_push(ob, reply, sizeof(reply)), 0);
	assert_int_equal(vtest_outbuf_pending(ob), sizeof(reply));
	assert_int_equal(vtest_outbuf_flush(ob, sv[0], 0), 0);
	assert_int_equal(vtest_outbuf_pending(ob), 0);
	assert_int_equal(vtest_outbuf_timeout_ms(ob, 0), -1);
	assert_int_equal(client_read(sv[1], (uint8_t *)got, sizeof(got)), sizeof(got));
	assert_memory_equal(got, reply, sizeof(reply));
	vtest_outbuf_destroy(ob);
	close(sv[0]);
	close(sv[1]);
}

static void replies_keep_their_order_across_partial_writes(void **state)
{
	const size_t n_bytes = 300000, n_zeros = 200000;
	size_t total = n_bytes + n_zeros + n_bytes, got = 0;
	uint8_t *bytes = malloc(n_bytes), *owned = malloc(n_bytes), *in = malloc(total);
	struct vtest_outbuf *ob = vtest_outbuf_create(0, 0);
	int sv[2], partial = 0;

	client_pair(sv);
	for (size_t i = 0; i < n_bytes; i++) {
		bytes[i] = (uint8_t)(i * 7 + 1);
		owned[i] = (uint8_t)(i * 13 + 5);
	}
	assert_int_equal(vtest_outbuf_push(ob, bytes, n_bytes), 0);
	assert_int_equal(vtest_outbuf_push_zeros(ob, n_zeros), 0);
	/* The copy is the queue's own: changing ours changes nothing. */
	memset(bytes, 0xee, 16);
	assert_int_equal(vtest_outbuf_push_owned(ob, owned, n_bytes), 0);
	assert_int_equal(vtest_outbuf_pending(ob), total);
	while (got < total) {
		assert_int_equal(vtest_outbuf_flush(ob, sv[0], 0), 0);
		if (vtest_outbuf_pending(ob))
			partial++;
		got += client_read(sv[1], in + got, total - got);
	}
	assert_true(partial > 0);
	assert_int_equal(vtest_outbuf_pending(ob), 0);
	for (size_t i = 0; i < n_bytes; i++) {
		assert_int_equal(in[i], (uint8_t)(i * 7 + 1));
		assert_int_equal(in[n_bytes + n_zeros + i], (uint8_t)(i * 13 + 5));
	}
	for (size_t i = 0; i < n_zeros; i++)
		assert_int_equal(in[n_bytes + i], 0);
	vtest_outbuf_destroy(ob);
	free(bytes);
	free(in);
	close(sv[0]);
	close(sv[1]);
}

static void fd_arrives_where_it_was_queued(void **state)
{
	struct vtest_outbuf *ob = vtest_outbuf_create(0, 0);
	int memfd = memfd_create("test", MFD_CLOEXEC);
	char before[2], byte, after[2];
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cmsg;
	int sv[2], got_fd;

	client_pair(sv);
	assert_true(memfd >= 0);
	assert_int_equal(vtest_outbuf_push(ob, "ab", 2), 0);
	assert_int_equal(vtest_outbuf_push_fd(ob, memfd), 0);
	assert_int_equal(vtest_outbuf_push(ob, "cd", 2), 0);
	assert_int_equal(vtest_outbuf_pending(ob), 5);
	assert_int_equal(vtest_outbuf_flush(ob, sv[0], 0), 0);
	assert_int_equal(vtest_outbuf_pending(ob), 0);
	/* Sent: the queue closed its copy. */
	assert_false(fd_is_open(memfd));
	assert_int_equal(recv(sv[1], before, 2, 0), 2);
	assert_memory_equal(before, "ab", 2);
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	assert_int_equal(recvmsg(sv[1], &msg, 0), 1);
	cmsg = CMSG_FIRSTHDR(&msg);
	assert_non_null(cmsg);
	assert_int_equal(cmsg->cmsg_type, SCM_RIGHTS);
	memcpy(&got_fd, CMSG_DATA(cmsg), sizeof(int));
	assert_true(fd_is_open(got_fd));
	close(got_fd);
	assert_int_equal(recv(sv[1], after, 2, 0), 2);
	assert_memory_equal(after, "cd", 2);
	vtest_outbuf_destroy(ob);
	close(sv[0]);
	close(sv[1]);
}

static void nothing_is_queued_beyond_the_cap(void **state)
{
	struct vtest_outbuf *ob = vtest_outbuf_create(100, 0);
	uint8_t buf[100] = {0};
	int memfd = memfd_create("test", MFD_CLOEXEC);

	assert_int_equal(vtest_outbuf_cap(ob), 100);
	assert_int_equal(vtest_outbuf_push(ob, buf, 60), 0);
	assert_int_equal(vtest_outbuf_push(ob, buf, 41), -ENOBUFS);
	assert_int_equal(vtest_outbuf_push_zeros(ob, 41), -ENOBUFS);
	assert_int_equal(vtest_outbuf_push_zeros(ob, SIZE_MAX), -ENOBUFS);
	/* Refused, an owned buffer is freed (ASan's leak check) and an fd closed. */
	assert_int_equal(vtest_outbuf_push_owned(ob, malloc(41), 41), -ENOBUFS);
	assert_int_equal(vtest_outbuf_pending(ob), 60);
	assert_int_equal(vtest_outbuf_push(ob, buf, 39), 0);
	assert_int_equal(vtest_outbuf_push_fd(ob, memfd), 0);
	assert_int_equal(vtest_outbuf_pending(ob), 100);
	assert_int_equal(vtest_outbuf_push(ob, buf, 1), -ENOBUFS);
	memfd = memfd_create("test", MFD_CLOEXEC);
	assert_int_equal(vtest_outbuf_push_fd(ob, memfd), -ENOBUFS);
	assert_false(fd_is_open(memfd));
	vtest_outbuf_destroy(ob);
}

static void the_default_cap_holds_the_largest_transfer_reply(void **state)
{
	struct vtest_outbuf *ob = vtest_outbuf_create(0, 0);

	assert_int_equal(vtest_outbuf_cap(ob), VTEST_OUTBUF_MAX_BYTES);
	assert_int_equal(vtest_outbuf_push(ob, "caps", 4), 0);
	assert_int_equal(vtest_outbuf_push_zeros(ob, VTEST_DEFAULT_MAX_PAYLOAD), 0);
	vtest_outbuf_destroy(ob);
}

static void a_client_that_takes_nothing_is_stalled_after_the_stall_time(void **state)
{
	struct vtest_outbuf *ob = vtest_outbuf_create(0, 1000);
	int sv[2];

	client_pair(sv);
	assert_int_equal(vtest_outbuf_push_zeros(ob, 4u << 20), 0);
	assert_int_equal(vtest_outbuf_flush(ob, sv[0], 5000), 0);
	assert_true(vtest_outbuf_pending(ob) > 0);
	assert_int_equal(vtest_outbuf_timeout_ms(ob, 5500), 500);
	assert_false(vtest_outbuf_stalled(ob, 5999));
	/* Flushing into a full socket is no progress. */
	assert_int_equal(vtest_outbuf_flush(ob, sv[0], 5900), 0);
	assert_true(vtest_outbuf_stalled(ob, 6000));
	assert_int_equal(vtest_outbuf_timeout_ms(ob, 6100), 0);
	vtest_outbuf_destroy(ob);
	close(sv[0]);
	close(sv[1]);
}

static void a_client_that_takes_a_little_is_not_stalled(void **state)
{
	struct vtest_outbuf *ob = vtest_outbuf_create(0, 1000);
	uint8_t buf[4096];
	int sv[2];

	client_pair(sv);
	assert_int_equal(vtest_outbuf_push_zeros(ob, 4u << 20), 0);
	assert_int_equal(vtest_outbuf_flush(ob, sv[0], 0), 0);
	assert_true(client_read(sv[1], buf, sizeof(buf)) > 0);
	assert_int_equal(vtest_outbuf_flush(ob, sv[0], 900), 0);
	assert_false(vtest_outbuf_stalled(ob, 1800));
	assert_true(vtest_outbuf_stalled(ob, 1900));
	vtest_outbuf_destroy(ob);
	close(sv[0]);
	close(sv[1]);
}

static void an_empty_queue_is_never_stalled(void **state)
{
	struct vtest_outbuf *ob = vtest_outbuf_create(0, 1000);

	assert_false(vtest_outbuf_stalled(ob, 1000000));
	assert_int_equal(vtest_outbuf_timeout_ms(ob, 1000000), -1);
	vtest_outbuf_destroy(ob);
}

static void a_client_gone_is_reported(void **state)
{
	struct vtest_outbuf *ob = vtest_outbuf_create(0, 0);
	int sv[2];

	client_pair(sv);
	close(sv[1]);
	assert_int_equal(vtest_outbuf_push(ob, "ab", 2), 0);
	assert_int_equal(vtest_outbuf_flush(ob, sv[0], 0), -EPIPE);
	assert_int_equal(vtest_outbuf_pending(ob), 2);
	vtest_outbuf_destroy(ob);
	close(sv[0]);
}

static void destroy_closes_unsent_fds_and_frees_buffers(void **state)
{
	struct vtest_outbuf *ob = vtest_outbuf_create(0, 0);
	int memfd = memfd_create("test", MFD_CLOEXEC);

	assert_int_equal(vtest_outbuf_push_fd(ob, memfd), 0);
	assert_int_equal(vtest_outbuf_push_owned(ob, malloc(16), 16), 0);
	assert_true(fd_is_open(memfd));
	vtest_outbuf_destroy(ob);
	assert_false(fd_is_open(memfd));
}

static void destroy_accepts_null(void **state)
{
	vtest_outbuf_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(small_reply_is_written_at_once),
	    cmocka_unit_test(replies_keep_their_order_across_partial_writes),
	    cmocka_unit_test(fd_arrives_where_it_was_queued),
	    cmocka_unit_test(nothing_is_queued_beyond_the_cap),
	    cmocka_unit_test(the_default_cap_holds_the_largest_transfer_reply),
	    cmocka_unit_test(a_client_that_takes_nothing_is_stalled_after_the_stall_time),
	    cmocka_unit_test(a_client_that_takes_a_little_is_not_stalled),
	    cmocka_unit_test(an_empty_queue_is_never_stalled),
	    cmocka_unit_test(a_client_gone_is_reported),
	    cmocka_unit_test(destroy_closes_unsent_fds_and_frees_buffers),
	    cmocka_unit_test(destroy_accepts_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
