// SPDX-License-Identifier: MIT
/*
 * vhost-user-record: a recording proxy between a vhost-user front-end
 * (QEMU's vhost-user-gpu-pci) and a back-end (mediatord's
 * vhost_user_socket), to capture the real message sequence of a QEMU
 * version into tests/data/vhost-user/ for test-vhost-user-replay.
 *
 *   vhost-user-record LISTEN_SOCKET BACKEND_SOCKET OUTFILE
 *
 * Listens on LISTEN_SOCKET (give it to QEMU as the chardev's path),
 * accepts one connection, connects to BACKEND_SOCKET and forwards every
 * message both ways, fds included, until either side closes. The display
 * channel QEMU hands over with GPU_SET_SOCKET is proxied and recorded too.
 *
 * OUTFILE gets one line per message (the format test-vhost-user-replay
 * reads; '#' starts a comment):
 *   > REQUEST FLAGS SIZE NFDS PAYLOAD   front-end request on the vhost-user socket
 *   < REQUEST FLAGS SIZE NFDS PAYLOAD   back-end reply
 *   G> ...                              back-end request on the display channel
 *   G< ...                              front-end reply on the display channel
 * with REQUEST, FLAGS, SIZE and NFDS in decimal and PAYLOAD in hex ("-"
 * when empty). Display payloads longer than RECORD_MAX_PAYLOAD bytes
 * (scanout pixels) are left out: their line ends in "*" instead.
 * Exits 0 when a side closed the connection, 1 on an error.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "scm_send.h"

/* The longest display payload written out (an EDID answer is 1056 bytes). */
#define RECORD_MAX_PAYLOAD 2048u
/* The longest message of either channel (a 4K scanout update is 32 MiB). */
#define RECORD_MAX_MESSAGE	  (64u << 20)
#define VHOST_USER_GPU_SET_SOCKET 33u

static FILE *out;

__attribute__((format(printf, 1, 2))) static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "vhost-user-record: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

/* One message read whole, with the fds that came with its first bytes. */
struct message {
	uint32_t hdr[3];
	uint8_t *payload;
	int fds[SCM_SEND_MAX_FDS];
	int nfds;
};

/* Reads exactly @len bytes, collecting fds. 0, or -1 when the peer closed first. */
static int read_full(int fd, void *buf, size_t len, struct message *m)
{
	uint8_t *p = buf;

	while (len) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * SCM_SEND_MAX_FDS)];
			struct cmsghdr align;
		} u;
		struct iovec iov = {p, len};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = u.buf,
				    .msg_controllen = sizeof(u.buf)};
		ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("recvmsg: %s", strerror(errno));
		if (n == 0)
			return -1;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));

			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			if (m->nfds + count > SCM_SEND_MAX_FDS)
				die("more than %d fds with one message", SCM_SEND_MAX_FDS);
			memcpy(&m->fds[m->nfds], CMSG_DATA(c), sizeof(int) * (size_t)count);
			m->nfds += count;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads one message from @fd. 0, or -1 when the peer closed between messages. */
static int read_message(int fd, struct message *m)
{
	memset(m, 0, sizeof(*m));
	if (read_full(fd, m->hdr, sizeof(m->hdr), m) < 0)
		return -1;
	if (m->hdr[2] > RECORD_MAX_MESSAGE)
		die("a message of %u bytes", m->hdr[2]);
	m->payload = malloc(m->hdr[2] ? m->hdr[2] : 1);
	if (!m->payload)
		die("out of memory");
	if (read_full(fd, m->payload, m->hdr[2], m) < 0)
		die("peer closed inside a message");
	return 0;
}

static void record(const char *dir, const struct message *m, bool all)
{
	fprintf(out, "%s %u %u %u %d ", dir, m->hdr[0], m->hdr[1], m->hdr[2], m->nfds);
	if (m->hdr[2] == 0)
		fputc('-', out);
	else if (!all && m->hdr[2] > RECORD_MAX_PAYLOAD)
		fputc('*', out);
	else
		for (uint32_t i = 0; i < m->hdr[2]; i++)
			fprintf(out, "%02x", m->payload[i]);
	fputc('\n', out);
	fflush(out);
}

static void forward(int fd, struct message *m)
{
	struct iovec iov[2] = {{m->hdr, sizeof(m->hdr)}, {m->payload, m->hdr[2]}};
	size_t len = sizeof(m->hdr) + m->hdr[2];
	ssize_t n = scm_send(fd, iov, m->hdr[2] ? 2 : 1, m->fds, m->nfds, MSG_NOSIGNAL);

	/* Large display updates go in pieces; fds go with the first. */
	while (n >= 0 && (size_t)n < len) {
		size_t done = (size_t)n;
		ssize_t more;

		if (done < sizeof(m->hdr))
			more =
			    send(fd, (uint8_t *)m->hdr + done, sizeof(m->hdr) - done, MSG_NOSIGNAL);
		else
			more = send(fd, m->payload + (done - sizeof(m->hdr)), len - done,
				    MSG_NOSIGNAL);
		if (more < 0 && errno == EINTR)
			continue;
		n = more < 0 ? more : n + more;
	}
	if (n < 0)
		die("forwarding: %s", strerror(errno));
	for (int i = 0; i < m->nfds; i++)
		close(m->fds[i]);
	free(m->payload);
}

static int listen_on(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1) < 0)
		die("listen on %s: %s", path, strerror(errno));
	return fd;
}

static int connect_to(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("connect to %s: %s", path, strerror(errno));
	return fd;
}

int main(int argc, char **argv)
{
	/* 0: QEMU, 1: back-end, 2: QEMU's display end, 3: the back-end's. */
	int fd[4] = {-1, -1, -1, -1}, lfd;

	if (argc != 4) {
		fprintf(stderr, "usage: vhost-user-record LISTEN_SOCKET BACKEND_SOCKET OUTFILE\n");
		return 2;
	}
	out = fopen(argv[3], "w");
	if (!out)
		die("%s: %s", argv[3], strerror(errno));
	lfd = listen_on(argv[1]);
	fd[0] = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd[0] < 0)
		die("accept: %s", strerror(errno));
	close(lfd);
	fd[1] = connect_to(argv[2]);
	for (;;) {
		struct pollfd pfd[4];
		struct message m;

		for (int i = 0; i < 4; i++)
			pfd[i] = (struct pollfd){.fd = fd[i], .events = POLLIN};
		if (poll(pfd, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (pfd[0].revents) {
			if (read_message(fd[0], &m) < 0)
				break;
			record(">", &m, true);
			if (m.hdr[0] == VHOST_USER_GPU_SET_SOCKET && m.nfds == 1) {
				int sv[2];

				/* Keep QEMU's display end; hand the back-end ours. */
				if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
					die("socketpair: %s", strerror(errno));
				if (fd[2] >= 0) {
					close(fd[2]);
					close(fd[3]);
				}
				fd[2] = m.fds[0];
				fd[3] = sv[0];
				m.fds[0] = sv[1];
			}
			forward(fd[1], &m);
		}
		if (pfd[1].revents) {
			if (read_message(fd[1], &m) < 0)
				break;
			record("<", &m, true);
			forward(fd[0], &m);
		}
		if (fd[3] >= 0 && pfd[3].revents) {
			if (read_message(fd[3], &m) < 0) {
				fprintf(out, "# the back-end closed the display channel\n");
				close(fd[3]);
				fd[3] = -1;
			} else {
				record("G>", &m, false);
				if (fd[2] >= 0)
					forward(fd[2], &m);
				else
					free(m.payload);
			}
		}
		if (fd[2] >= 0 && pfd[2].revents) {
			if (read_message(fd[2], &m) < 0) {
				fprintf(out, "# QEMU closed the display channel\n");
				close(fd[2]);
				fd[2] = -1;
			} else {
				record("G<", &m, false);
				forward(fd[3], &m);
			}
		}
	}
	fprintf(out, "# connection closed\n");
	fclose(out);
	return 0;
}
