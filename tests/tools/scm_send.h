// SPDX-License-Identifier: MIT
/*
 * sendmsg() with file descriptors (SCM_RIGHTS), for the test tools and
 * unit tests that play a peer which passes fds (QEMU's vhost-user
 * front-end). Header-only: each test program is one file.
 */
#ifndef TESTS_SCM_SEND_H
#define TESTS_SCM_SEND_H

#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* Most fds one call passes. */
#define SCM_SEND_MAX_FDS 16

/*
 * Sends @iovcnt buffers on @sock with @nfds (<= SCM_SEND_MAX_FDS) fds of
 * @fds (they stay the caller's). Returns what sendmsg() returns.
 */
static inline ssize_t scm_send(int sock, struct iovec *iov, int iovcnt, const int *fds, int nfds,
			       int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * SCM_SEND_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)iovcnt};

	if (nfds > 0 && nfds <= SCM_SEND_MAX_FDS) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	return sendmsg(sock, &mh, flags);
}

#endif
