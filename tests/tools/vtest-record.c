// SPDX-License-Identifier: MIT
/*
 * vtest-record: a recording proxy between a vtest client (Mesa's virgl
 * vtest winsys, GALLIUM_DRIVER=virpipe) and a vtest server
 * (virgl_test_server or mediatord's vtest_socket), to capture what a real
 * Mesa release sends into tests/data/vtest/ for test-vtest-parser.
 *
 *   vtest-record LISTEN_SOCKET SERVER_SOCKET OUTFILE
 *
 * Listens on LISTEN_SOCKET (give it to the client as VTEST_SOCKET_NAME, or
 * as /tmp/.virgl_test through mediator-exec), accepts one connection,
 * connects to SERVER_SOCKET and forwards bytes both ways until either side
 * closes. The fds the server passes (the shared memory of RESOURCE_CREATE2)
 * are passed on with the byte they came with.
 *
 * OUTFILE gets the client's bytes exactly as they arrived, nothing else:
 * the recording is the stream a server must frame. Exits 0 when a side
 * closed the connection, 1 on an error, 2 on a usage error.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "scm_send.h"

/* Bytes forwarded per read; any size works, the stream is forwarded as is. */
#define RECORD_CHUNK (256u * 1024u)

__attribute__((format(printf, 1, 2))) static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "vtest-record: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void unix_addr(struct sockaddr_un *addr, const char *path)
{
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(addr->sun_path))
		die("socket path too long: %s", path);
	memcpy(addr->sun_path, path, strlen(path) + 1);
}

static int send_all(int fd, const char *buf, size_t len, const int *fds, int nfds)
{
	while (len) {
		struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
		ssize_t n = scm_send(fd, &iov, 1, fds, nfds, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
		nfds = 0; /* the fds went with the first byte */
	}
	return 0;
}

/*
 * Moves what @from has to @to, fds included. Returns 1 when something was
 * forwarded, 0 when @from closed, -1 on an error.
 */
static int forward(int from, int to, char *buf, FILE *record)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * SCM_SEND_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = buf, .iov_len = RECORD_CHUNK};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	int fds[SCM_SEND_MAX_FDS];
	int nfds = 0;
	ssize_t n;

	n = recvmsg(from, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EINTR ? 1 : -1;
	if (n == 0)
		return 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		nfds = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		if (nfds > SCM_SEND_MAX_FDS)
			nfds = SCM_SEND_MAX_FDS;
		memcpy(fds, CMSG_DATA(c), sizeof(int) * (size_t)nfds);
	}
	if (record && fwrite(buf, 1, (size_t)n, record) != (size_t)n)
		die("cannot write the recording");
	if (send_all(to, buf, (size_t)n, fds, nfds) < 0)
		return -1;
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	return 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_un addr;
	int listener, client, server;
	FILE *record;
	char *buf;

	if (argc != 4) {
		fprintf(stderr, "usage: vtest-record LISTEN_SOCKET SERVER_SOCKET OUTFILE\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	buf = malloc(RECORD_CHUNK);
	record = fopen(argv[3], "wb");
	if (!buf || !record)
		die("cannot open %s: %s", argv[3], strerror(errno));

	listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unix_addr(&addr, argv[1]);
	unlink(argv[1]);
	if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(listener, 1) < 0)
		die("cannot listen on %s: %s", argv[1], strerror(errno));
	client = accept(listener, NULL, NULL);
	if (client < 0)
		die("accept: %s", strerror(errno));
	close(listener);
	unlink(argv[1]);

	server = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unix_addr(&addr, argv[2]);
	if (server < 0 || connect(server, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		die("cannot connect to %s: %s", argv[2], strerror(errno));

	for (;;) {
		struct pollfd pfd[2] = {{.fd = client, .events = POLLIN},
					{.fd = server, .events = POLLIN}};
		int r = 1;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (pfd[0].revents)
			r = forward(client, server, buf, record);
		if (r > 0 && pfd[1].revents)
			r = forward(server, client, buf, NULL);
		if (r <= 0)
			break;
	}
	if (fclose(record) != 0)
		die("cannot write the recording");
	free(buf);
	return 0;
}
