// SPDX-License-Identifier: MIT
/*
 * vtest-poke: a tiny raw vtest client for the integration tests.
 *
 *   vtest-poke SOCKET MODE [N]
 *
 * It speaks just enough of the vtest protocol to do what Mesa's virgl vtest
 * winsys does when it connects (the "handshake"), and then misbehaves in
 * one of a few ways to check that a server survives hostile clients:
 *
 *   handshake        connect, handshake, close; 0 when every reply is well-formed
 *   garbage [SEED]   send 64 KiB of pseudo-random bytes (seeded, default 1)
 *   truncated        handshake, then a header promising 100 dwords, 10 sent, close
 *   huge-length      handshake, then a SUBMIT_CMD header of 0x7fffffff dwords:
 *                    the server must close the connection within 5 s
 *   unknown-cmd      handshake, then command id 999: the server must close the
 *                    connection or go on answering (a PING) sanely
 *   bad-handle       handshake, then TRANSFER_GET2, RESOURCE_UNREF and
 *                    RESOURCE_BUSY_WAIT on never-created handle 12345 (one
 *                    connection each): close, or go on answering sanely
 *   connect-close N  N times: connect, handshake, close (default 100)
 *   hold-idle [N]    N connections (default 300) that never send a byte;
 *                    3 s later one line: how many the server closed (a
 *                    domain's max_clients); then they are held, until it is
 *                    killed or 120 s pass
 *   hold-textures [N]
 *                    handshake, N textures of 4096x4096 (64 MiB, default
 *                    4) each cleared and followed by a PING; one line: how
 *                    many were made; then the connection is held until the
 *                    server closes it (a domain's domain_memory_mb) or
 *                    120 s pass, and a line says which. A connection
 *                    refused at once is a line too, not a failure
 *   pieces N         N groups (default 100), each a CLEAR_TEXTURE of a
 *                    2048x2048 texture to a colour of its own and 16 blits
 *                    between it and a second one (busy_blits.h); then one
 *                    texel is read back: it must be the last group's
 *                    colour. Long groups: a worker cuts them into pieces
 *                    (test-pieces reads the trace). Then, on the same
 *                    connection, one more such group whose last command is
 *                    cut short: the server must close the connection
 *                    without running any of it
 *
 * and attacks a worker's resources (vtest-poke SOCKET --attack NAME [N]):
 *
 *   slow-get [S]     SUBMIT_CMD, then a TRANSFER_GET of 64 MiB that
 *                    virglrenderer refuses (its box is outside the buffer);
 *                    the reply is read at POKE_TRICKLE_BYTES_PER_S for S
 *                    seconds (default 30), then not at all: the server must
 *                    have sent only zeros and close the connection within
 *                    POKE_STALL_CLOSE_S
 *   truncate         RESOURCE_CREATE2 with shared memory, ftruncate() the
 *                    memfd received to 0, TRANSFER_PUT2: the truncation
 *                    must be refused (the memfd sealed), or the server close
 *                    the connection or go on answering sanely
 *   resources [N]    RESOURCE_CREATE2 of 64 MiB backings until the server
 *                    closes the connection, then on a new connection
 *                    RESOURCE_CREATE of tiny buffers until it closes: both
 *                    must be refused before N resources (default 100000)
 *
 *   textures [N]     N textures of 4096x4096 (64 MiB) without shared
 *                    memory (default 64: 4 GiB), each cleared (the host
 *                    driver must give it storage) and followed by a PING:
 *                    every PING answered, or the connection closed
 *
 *   close-busy       two 2048x2048 textures, a SUBMIT_CMD of 16 blits
 *                    between them (tests/tools/busy_blits.h), and the
 *                    connection closed at once, the group still on the GPU
 *
 * The attacks print one "attack NAME: ..." line with what happened.
 *
 * Every bad mode ends with a fresh connection and a full handshake, so exit
 * status 0 means both "the server dealt with the bad connection" and "the
 * server still serves new clients". Exit 1 means the server misbehaved
 * (hung, crashed, or sent a malformed reply); exit 2 is a usage error.
 *
 * Every wait is bounded (poll with a deadline); SIGPIPE is ignored so a
 * server closing early shows up as EPIPE instead of killing us.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "busy_blits.h"

/*
 * Protocol facts from virglrenderer vtest/vtest_protocol.h: every message
 * starts with two uint32: the length (in dwords, except for
 * VCMD_CREATE_RENDERER whose length is the name's size in bytes) and the
 * command id. Replies use the same header.
 */
#define VTEST_HDR_DWORDS	   2
#define VTEST_CMD_LEN		   0
#define VTEST_CMD_ID		   1
#define VCMD_GET_CAPS		   1
#define VCMD_RESOURCE_CREATE	   2
#define VCMD_RESOURCE_UNREF	   3
#define VCMD_TRANSFER_GET	   4
#define VCMD_TRANSFER_PUT	   5
#define VCMD_SUBMIT_CMD		   6
#define VCMD_RESOURCE_BUSY_WAIT	   7
#define VCMD_CREATE_RENDERER	   8
#define VCMD_GET_CAPS2		   9
#define VCMD_PING_PROTOCOL_VERSION 10
#define VCMD_PROTOCOL_VERSION	   11
#define VCMD_RESOURCE_CREATE2	   12
#define VCMD_TRANSFER_GET2	   13
#define VCMD_TRANSFER_PUT2	   14

#define VCMD_RES_CREATE_SIZE                                                                       \
	10 /* handle, target, format, bind, w, h, d, array, levels, samples                        \
	    */
#define VCMD_RES_CREATE2_SIZE	11 /* the same, then the shared memory size */
#define VCMD_TRANSFER_HDR_SIZE	11 /* handle, level, strides, x, y, z, w, h, d, data size */
#define VCMD_RES_UNREF_SIZE	1  /* res handle */
#define VCMD_BUSY_WAIT_SIZE	2  /* res handle, flags */
#define VCMD_TRANSFER2_HDR_SIZE 10 /* handle, level, x, y, z, w, h, d, data size, offset */
#define VTEST_PROTOCOL_VERSION	2  /* what Mesa 22.x asks for */
/* GET_CAPS2 is answered with this id for the v2 caps (VCMD_GET_CAPS for v1). */
#define VTEST_CAPS2_REPLY_ID 2

/* Resource descriptions (virgl_hw.h; the rest in virgl_defs.h). */
#define VIRGL_BIND_VERTEX_BUFFER (1u << 4)

/* Our own limits, not protocol facts. */
#define POKE_NAME	       "vtest-poke"
#define POKE_REPLY_TIMEOUT_MS  5000 /* the default; VTEST_POKE_REPLY_MS sets it */
#define POKE_REPLY_TIMEOUT_MAX 600000
#define POKE_CLOSE_TIMEOUT_MS  5000
/* The capability reply is a few hundred bytes; refuse anything absurd. */
#define POKE_MAX_CAPS_BYTES (64u * 1024u)
#define POKE_GARBAGE_BYTES  (64u * 1024u)
#define POKE_BAD_HANDLE	    12345u
#define POKE_UNKNOWN_CMD    999u
#define POKE_DEFAULT_CYCLES 100ul
/* Mode pieces: its groups, and how long all of them and the read-back may take. */
#define POKE_DEFAULT_PIECES_GROUPS 100ul
#define POKE_PIECES_TIMEOUT_MS	   120000
#define POKE_CMD_CLEAR_TEXTURE	   47u /* VIRGL_CCMD_CLEAR_TEXTURE, virgl_protocol.h */
/* The attacks' sizes and pace. */
#define POKE_GET_BYTES		 (64u << 20) /* the parser's limit of a transfer */
#define POKE_TRICKLE_BYTES_PER_S 4096u
#define POKE_SLOW_GET_DEFAULT_S	 30ul
/* The server's stall time (VTEST_OUTBUF_STALL_MS) and 5 s of slack. */
#define POKE_STALL_CLOSE_S	   15
#define POKE_BACKING_BYTES	   (64u << 20)
#define POKE_SMALL_BUFFER_BYTES	   4096u
#define POKE_DEFAULT_MAX_RESOURCES 100000ul
#define POKE_RESOURCES_BATCH	   512u
#define POKE_FIRST_ATTACK_HANDLE   1u
#define POKE_TEXTURE_SIZE	   4096u
#define POKE_TEXTURE_BYTES	   (POKE_TEXTURE_SIZE * POKE_TEXTURE_SIZE * 4u)
#define POKE_DEFAULT_TEXTURES	   64ul
/* hold-idle, hold-textures: how many, how long before counting, how long held. */
#define POKE_DEFAULT_HOLD_IDLE	   300ul
#define POKE_MAX_HOLD_IDLE	   1000ul
#define POKE_HOLD_SETTLE_MS	   3000
#define POKE_HOLD_MS		   120000
#define POKE_DEFAULT_HOLD_TEXTURES 4ul

/* How long a reply may take (VTEST_POKE_REPLY_MS; a renderer made in turn takes longer). */
static int reply_timeout_ms = POKE_REPLY_TIMEOUT_MS;
static bool verbose;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void vlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void vlog(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	fputs("vtest-poke: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Returns a connected socket (caller closes it) or a negative errno. */
static int poke_connect(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, path, strlen(path) + 1);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* Waits until @fd has @events or @deadline passes: 0, -ETIMEDOUT or -errno. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = events};
		uint64_t now = now_ms();
		int ret;

		if (now >= deadline)
			return -ETIMEDOUT;
		ret = poll(&pfd, 1, (int)(deadline - now));
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		if (ret > 0)
			return 0;
	}
}

/* Sends all of @buf: 0, or -EPIPE/-ECONNRESET when the peer closed, -ETIMEDOUT, -errno. */
static int send_all(int fd, const void *buf, size_t len, int timeout_ms)
{
	const uint8_t *p = buf;
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;

	while (len > 0) {
		ssize_t n;
		int ret = wait_fd(fd, POLLOUT, deadline);

		if (ret < 0)
			return ret;
		n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads exactly @len bytes: 0, -EPIPE at end of stream, -ETIMEDOUT, -errno. */
static int recv_all(int fd, void *buf, size_t len, int timeout_ms)
{
	uint8_t *p = buf;
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;

	while (len > 0) {
		ssize_t n;
		int ret = wait_fd(fd, POLLIN, deadline);

		if (ret < 0)
			return ret;
		n = recv(fd, p, len, MSG_DONTWAIT);
		if (n == 0)
			return -EPIPE;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static bool is_closed_error(int err)
{
	return err == -EPIPE || err == -ECONNRESET;
}

/* Sends a message, waiting at most @timeout_ms for the socket to take each part. */
static int send_cmd_within(int fd, uint32_t len, uint32_t cmd, const void *payload,
			   size_t payload_size, int timeout_ms)
{
	uint32_t hdr[VTEST_HDR_DWORDS] = {[VTEST_CMD_LEN] = len, [VTEST_CMD_ID] = cmd};
	int ret;

	ret = send_all(fd, hdr, sizeof(hdr), timeout_ms);
	if (ret == 0 && payload_size > 0)
		ret = send_all(fd, payload, payload_size, timeout_ms);
	return ret;
}

static int send_cmd(int fd, uint32_t len, uint32_t cmd, const void *payload, size_t payload_size)
{
	return send_cmd_within(fd, len, cmd, payload, payload_size, reply_timeout_ms);
}

/* Reads a reply header and checks its id and, when @want_len >= 0, its length. */
static int expect_reply(int fd, const char *what, uint32_t want_cmd, int64_t want_len,
			uint32_t *len_out)
{
	uint32_t hdr[VTEST_HDR_DWORDS];
	int ret = recv_all(fd, hdr, sizeof(hdr), reply_timeout_ms);

	if (ret < 0) {
		fprintf(stderr, "vtest-poke: %s: no reply header: %s\n", what, strerror(-ret));
		return ret;
	}
	vlog("%s: reply header len=%u id=%u", what, hdr[VTEST_CMD_LEN], hdr[VTEST_CMD_ID]);
	if (hdr[VTEST_CMD_ID] != want_cmd ||
	    (want_len >= 0 && hdr[VTEST_CMD_LEN] != (uint32_t)want_len)) {
		fprintf(stderr, "vtest-poke: %s: unexpected reply header len=%u id=%u\n", what,
			hdr[VTEST_CMD_LEN], hdr[VTEST_CMD_ID]);
		return -EPROTO;
	}
	if (len_out)
		*len_out = hdr[VTEST_CMD_LEN];
	return 0;
}

/*
 * What Mesa's vtest winsys sends on connect: CREATE_RENDERER with its
 * program name, then PING_PROTOCOL_VERSION followed by a non-waiting
 * BUSY_WAIT (a server too old to know PING answers only the BUSY_WAIT),
 * then PROTOCOL_VERSION, then GET_CAPS2.
 */
static int handshake(int fd)
{
	static const char name[] = POKE_NAME;
	uint32_t busy_wait[VCMD_BUSY_WAIT_SIZE] = {0, 0};
	uint32_t version = VTEST_PROTOCOL_VERSION;
	uint32_t value = 0, len;
	uint8_t *caps;
	size_t caps_bytes;
	int ret;

	ret = send_cmd(fd, sizeof(name), VCMD_CREATE_RENDERER, name, sizeof(name));
	if (ret == 0)
		ret = send_cmd(fd, 0, VCMD_PING_PROTOCOL_VERSION, NULL, 0);
	if (ret == 0)
		ret = send_cmd(fd, VCMD_BUSY_WAIT_SIZE, VCMD_RESOURCE_BUSY_WAIT, busy_wait,
			       sizeof(busy_wait));
	if (ret < 0) {
		fprintf(stderr, "vtest-poke: handshake: send: %s\n", strerror(-ret));
		return ret;
	}

	ret = expect_reply(fd, "ping", VCMD_PING_PROTOCOL_VERSION, 0, NULL);
	if (ret < 0)
		return ret;
	ret = expect_reply(fd, "busy-wait", VCMD_RESOURCE_BUSY_WAIT, 1, NULL);
	if (ret == 0)
		ret = recv_all(fd, &value, sizeof(value), reply_timeout_ms);
	if (ret < 0)
		return ret;
	if (value > 1) {
		fprintf(stderr, "vtest-poke: busy-wait: reply %u is not a boolean\n", value);
		return -EPROTO;
	}

	ret = send_cmd(fd, 1, VCMD_PROTOCOL_VERSION, &version, sizeof(version));
	if (ret == 0)
		ret = expect_reply(fd, "protocol-version", VCMD_PROTOCOL_VERSION, 1, NULL);
	if (ret == 0)
		ret = recv_all(fd, &value, sizeof(value), reply_timeout_ms);
	if (ret < 0)
		return ret;
	if (value > VTEST_PROTOCOL_VERSION) {
		fprintf(stderr, "vtest-poke: protocol-version: server chose %u > asked %u\n", value,
			VTEST_PROTOCOL_VERSION);
		return -EPROTO;
	}
	vlog("protocol version %u", value);

	/*
	 * The capability reply's id is VTEST_CAPS2_REPLY_ID for the v2 caps
	 * struct, VCMD_GET_CAPS for v1; unlike other replies, its
	 * length field is one more than the size of the caps in bytes (what
	 * virglrenderer's vtest server sends and Mesa's winsys reads).
	 */
	ret = send_cmd(fd, 0, VCMD_GET_CAPS2, NULL, 0);
	if (ret < 0)
		return ret;
	{
		uint32_t hdr[VTEST_HDR_DWORDS];

		ret = recv_all(fd, hdr, sizeof(hdr), reply_timeout_ms);
		if (ret < 0) {
			fprintf(stderr, "vtest-poke: caps: no reply: %s\n", strerror(-ret));
			return ret;
		}
		len = hdr[VTEST_CMD_LEN];
		vlog("caps: reply header len=%u id=%u", len, hdr[VTEST_CMD_ID]);
		if ((hdr[VTEST_CMD_ID] != VCMD_GET_CAPS &&
		     hdr[VTEST_CMD_ID] != VTEST_CAPS2_REPLY_ID) ||
		    len < 2 || len - 1 > POKE_MAX_CAPS_BYTES) {
			fprintf(stderr, "vtest-poke: caps: unexpected reply header len=%u id=%u\n",
				len, hdr[VTEST_CMD_ID]);
			return -EPROTO;
		}
	}
	caps_bytes = (size_t)len - 1;
	caps = malloc(caps_bytes);
	if (!caps)
		return -ENOMEM;
	ret = recv_all(fd, caps, caps_bytes, reply_timeout_ms);
	if (ret < 0)
		fprintf(stderr, "vtest-poke: caps: short payload: %s\n", strerror(-ret));
	else if (caps_bytes >= 4)
		vlog("caps: %zu bytes, first dword (max version) %u", caps_bytes,
		     (uint32_t)caps[0] | (uint32_t)caps[1] << 8 | (uint32_t)caps[2] << 16 |
			 (uint32_t)caps[3] << 24);
	free(caps);
	return ret;
}

/* Connects and shakes hands; returns the connected fd or a negative errno. */
static int connect_and_handshake(const char *path)
{
	int fd = poke_connect(path);
	int ret;

	if (fd < 0) {
		fprintf(stderr, "vtest-poke: connect %s: %s\n", path, strerror(-fd));
		return fd;
	}
	ret = handshake(fd);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	return fd;
}

/* Waits for end of stream, discarding whatever arrives: 0 when closed, -ETIMEDOUT. */
static int wait_closed(int fd, int timeout_ms)
{
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	uint8_t buf[4096];

	for (;;) {
		ssize_t n;
		int ret = wait_fd(fd, POLLIN, deadline);

		if (ret < 0)
			return ret;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			if (errno == ECONNRESET)
				return 0;
			return -errno;
		}
		vlog("discarded %zd bytes while waiting for close", n);
	}
}

/*
 * After a bad command: the server either closes the connection, or it is
 * still in step with us, so a PING gets its reply (possibly after one
 * well-formed BUSY_WAIT reply to the bad command). Anything else (silence,
 * garbage) is a failure. Returns 0 when the server behaved.
 */
static int expect_closed_or_sane(int fd, const char *what)
{
	uint64_t deadline = now_ms() + POKE_CLOSE_TIMEOUT_MS;
	int ret = send_cmd(fd, 0, VCMD_PING_PROTOCOL_VERSION, NULL, 0);

	if (is_closed_error(ret)) {
		printf("%s: server closed the connection\n", what);
		return 0;
	}
	if (ret < 0) {
		fprintf(stderr, "vtest-poke: %s: send ping: %s\n", what, strerror(-ret));
		return ret;
	}
	for (;;) {
		uint32_t hdr[VTEST_HDR_DWORDS], value;
		uint64_t now = now_ms();

		if (now >= deadline) {
			fprintf(stderr, "vtest-poke: %s: server neither closed nor answered\n",
				what);
			return -ETIMEDOUT;
		}
		ret = recv_all(fd, hdr, sizeof(hdr), (int)(deadline - now));
		if (is_closed_error(ret)) {
			printf("%s: server closed the connection\n", what);
			return 0;
		}
		if (ret < 0) {
			fprintf(stderr, "vtest-poke: %s: %s\n", what, strerror(-ret));
			return ret;
		}
		vlog("%s: reply header len=%u id=%u", what, hdr[VTEST_CMD_LEN], hdr[VTEST_CMD_ID]);
		if (hdr[VTEST_CMD_ID] == VCMD_PING_PROTOCOL_VERSION && hdr[VTEST_CMD_LEN] == 0) {
			printf("%s: server answered and is still in step\n", what);
			return 0;
		}
		if (hdr[VTEST_CMD_ID] == VCMD_RESOURCE_BUSY_WAIT && hdr[VTEST_CMD_LEN] == 1) {
			ret = recv_all(fd, &value, sizeof(value), reply_timeout_ms);
			if (is_closed_error(ret))
				continue;
			if (ret < 0)
				return ret;
			continue;
		}
		fprintf(stderr, "vtest-poke: %s: malformed reply len=%u id=%u\n", what,
			hdr[VTEST_CMD_LEN], hdr[VTEST_CMD_ID]);
		return -EPROTO;
	}
}

/* A new connection is accepted and served a full handshake; @who names it in messages. */
static int check_client(const char *path, const char *who)
{
	int fd = connect_and_handshake(path);

	if (fd < 0) {
		fprintf(stderr, "vtest-poke: %s was not served\n", who);
		return fd;
	}
	close(fd);
	printf("%s: handshake ok\n", who);
	return 0;
}

/* After a bad client, the server must still accept and serve a new one. */
static int check_fresh_client(const char *path)
{
	return check_client(path, "fresh client");
}

/* xorshift64: deterministic bytes for a given seed, no libc state. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

static int mode_garbage(const char *path, unsigned long seed)
{
	uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
	uint8_t *buf = malloc(POKE_GARBAGE_BYTES);
	int fd, ret;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < POKE_GARBAGE_BYTES; i++)
		buf[i] = (uint8_t)next_random(&state);

	fd = poke_connect(path);
	if (fd < 0) {
		free(buf);
		fprintf(stderr, "vtest-poke: connect %s: %s\n", path, strerror(-fd));
		return fd;
	}
	ret = send_all(fd, buf, POKE_GARBAGE_BYTES, reply_timeout_ms);
	free(buf);
	if (ret < 0 && !is_closed_error(ret) && ret != -ETIMEDOUT) {
		close(fd);
		return ret;
	}
	/* The server may close, or wait for the rest of a message it thinks is long. */
	ret = wait_closed(fd, 1000);
	printf("garbage (seed %lu): %s\n", seed,
	       ret == 0 ? "server closed the connection" : "server kept waiting; we closed");
	close(fd);
	return check_fresh_client(path);
}

static int mode_truncated(const char *path)
{
	uint32_t body[10] = {0};
	int fd = connect_and_handshake(path);
	int ret;

	if (fd < 0)
		return fd;
	ret = send_cmd(fd, 100, VCMD_SUBMIT_CMD, body, sizeof(body));
	close(fd);
	if (ret < 0 && !is_closed_error(ret))
		return ret;
	printf("truncated: sent 10 of 100 promised dwords and closed\n");
	return check_fresh_client(path);
}

static int mode_huge_length(const char *path)
{
	int fd = connect_and_handshake(path);
	int ret;

	if (fd < 0)
		return fd;
	ret = send_cmd(fd, 0x7fffffffu, VCMD_SUBMIT_CMD, NULL, 0);
	if (ret == 0)
		ret = wait_closed(fd, POKE_CLOSE_TIMEOUT_MS);
	else if (is_closed_error(ret))
		ret = 0;
	close(fd);
	if (ret < 0) {
		fprintf(stderr, "vtest-poke: huge-length: server did not close within %d ms\n",
			POKE_CLOSE_TIMEOUT_MS);
		return ret;
	}
	printf("huge-length: server closed the connection\n");
	return check_fresh_client(path);
}

static int mode_unknown_cmd(const char *path)
{
	int fd = connect_and_handshake(path);
	int ret;

	if (fd < 0)
		return fd;
	ret = send_cmd(fd, 0, POKE_UNKNOWN_CMD, NULL, 0);
	if (ret == 0 || is_closed_error(ret))
		ret = expect_closed_or_sane(fd, "unknown-cmd");
	close(fd);
	if (ret < 0)
		return ret;
	return check_fresh_client(path);
}

static int bad_handle_one(const char *path, const char *what, uint32_t cmd, const uint32_t *args,
			  uint32_t n_args)
{
	int fd = connect_and_handshake(path);
	int ret;

	if (fd < 0)
		return fd;
	ret = send_cmd(fd, n_args, cmd, args, n_args * sizeof(*args));
	if (ret == 0 || is_closed_error(ret))
		ret = expect_closed_or_sane(fd, what);
	close(fd);
	return ret;
}

static int mode_bad_handle(const char *path)
{
	uint32_t transfer[VCMD_TRANSFER2_HDR_SIZE] = {
	    POKE_BAD_HANDLE, 0, 0, 0, 0, 16, 16, 1, 16 * 16 * 4, 0,
	};
	uint32_t unref[VCMD_RES_UNREF_SIZE] = {POKE_BAD_HANDLE};
	uint32_t busy_wait[VCMD_BUSY_WAIT_SIZE] = {POKE_BAD_HANDLE, 1};
	int ret;

	ret = bad_handle_one(path, "bad-handle transfer-get2", VCMD_TRANSFER_GET2, transfer,
			     VCMD_TRANSFER2_HDR_SIZE);
	if (ret == 0)
		ret = bad_handle_one(path, "bad-handle resource-unref", VCMD_RESOURCE_UNREF, unref,
				     VCMD_RES_UNREF_SIZE);
	if (ret == 0)
		ret = bad_handle_one(path, "bad-handle busy-wait", VCMD_RESOURCE_BUSY_WAIT,
				     busy_wait, VCMD_BUSY_WAIT_SIZE);
	if (ret < 0)
		return ret;
	return check_fresh_client(path);
}

static int mode_connect_close(const char *path, unsigned long cycles)
{
	uint64_t start = now_ms();

	for (unsigned long i = 0; i < cycles; i++) {
		int fd = connect_and_handshake(path);

		if (fd < 0) {
			fprintf(stderr, "vtest-poke: connect-close: cycle %lu of %lu failed\n",
				i + 1, cycles);
			return fd;
		}
		close(fd);
	}
	printf("connect-close: %lu cycles ok in %llu ms\n", cycles,
	       (unsigned long long)(now_ms() - start));
	return 0;
}

/* ---- attacks on a worker's resources ------------------------------------ */

/* RESOURCE_CREATE (@shm_bytes 0) or RESOURCE_CREATE2 of a buffer of @bytes. */
static int create_buffer(int fd, uint32_t handle, uint32_t bytes, bool v2, uint32_t shm_bytes)
{
	uint32_t args[VCMD_RES_CREATE2_SIZE] = {
	    handle, PIPE_BUFFER, VIRGL_FORMAT_R8_UNORM, VIRGL_BIND_VERTEX_BUFFER, bytes, 1, 1, 1, 0,
	    0,	    shm_bytes,
	};
	uint32_t n = v2 ? VCMD_RES_CREATE2_SIZE : VCMD_RES_CREATE_SIZE;

	return send_cmd(fd, n, v2 ? VCMD_RESOURCE_CREATE2 : VCMD_RESOURCE_CREATE, args,
			n * sizeof(uint32_t));
}

/*
 * Receives the memfd that answers RESOURCE_CREATE2 (one byte, SCM_RIGHTS):
 * the fd (caller closes it), -EPIPE when the server closed, or -errno.
 */
static int recv_fd(int fd, int timeout_ms)
{
	char byte;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cmsg;
	int ret = wait_fd(fd, POLLIN, now_ms() + (uint64_t)timeout_ms), got;
	ssize_t n;

	if (ret < 0)
		return ret;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n == 0)
		return -EPIPE;
	if (n < 0)
		return -errno;
	cmsg = CMSG_FIRSTHDR(&msg);
	if (!cmsg || cmsg->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&got, CMSG_DATA(cmsg), sizeof(int));
	return got;
}

/* True once the server has closed its end (without reading what it sent). */
static bool server_closed(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLRDHUP};

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return false;
	return pfd.revents & (POLLHUP | POLLRDHUP | POLLERR);
}

/*
 * @count connections that never send a byte, for a domain's max_clients:
 * those past it are closed by the server at once, the others wait for
 * their handshake. Counted after POKE_HOLD_SETTLE_MS, then held.
 */
static int mode_hold_idle(const char *path, unsigned long count)
{
	static int fds[POKE_MAX_HOLD_IDLE];
	unsigned long made = 0, failed = 0, closed = 0;

	if (count > POKE_MAX_HOLD_IDLE)
		count = POKE_MAX_HOLD_IDLE;
	for (unsigned long i = 0; i < count; i++) {
		int fd = poke_connect(path);

		if (fd < 0) {
			failed++;
			continue;
		}
		fds[made++] = fd;
	}
	usleep(POKE_HOLD_SETTLE_MS * 1000);
	for (unsigned long i = 0; i < made; i++) {
		if (server_closed(fds[i], 0)) {
			closed++;
			close(fds[i]);
			fds[i] = -1;
		}
	}
	printf("hold-idle: %lu connected, %lu not, %lu closed by the server, %lu held\n", made,
	       failed, closed, made - closed);
	fflush(stdout);
	usleep(POKE_HOLD_MS * 1000ull);
	for (unsigned long i = 0; i < made; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return 0;
}

/* Reads at most @len bytes now: the count (0: none waiting), or -1 when nothing more can come. */
static ssize_t read_some(int fd, uint8_t *buf, size_t len, size_t *nonzero)
{
	ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	if (n == 0)
		return -1;
	for (ssize_t i = 0; i < n; i++)
		*nonzero += buf[i] != 0;
	return n;
}

static int attack_slow_get(const char *path, unsigned long seconds)
{
	/* A 4 KiB buffer; the transfer's box is 16 Mi texels wide: refused. */
	uint32_t get[VCMD_TRANSFER_HDR_SIZE] = {
	    POKE_FIRST_ATTACK_HANDLE, 0, 0, 0, 0, 0, 0, 1u << 24, 1, 1, POKE_GET_BYTES,
	};
	uint8_t buf[POKE_TRICKLE_BYTES_PER_S / 4];
	size_t received = 0, nonzero = 0;
	uint64_t start, stopped;
	bool closed = false;
	int fd = connect_and_handshake(path), ret;

	if (fd < 0)
		return fd;
	ret = create_buffer(fd, POKE_FIRST_ATTACK_HANDLE, POKE_SMALL_BUFFER_BYTES, false, 0);
	if (ret == 0)
		ret = send_cmd(fd, 0, VCMD_SUBMIT_CMD, NULL, 0);
	if (ret == 0)
		ret = send_cmd(fd, VCMD_TRANSFER_HDR_SIZE, VCMD_TRANSFER_GET, get, sizeof(get));
	if (ret < 0) {
		fprintf(stderr, "vtest-poke: slow-get: send: %s\n", strerror(-ret));
		close(fd);
		return ret;
	}
	/* A quarter of the trickle rate every 250 ms, until the time is up
	 * or the server drops us. */
	start = now_ms();
	while (!closed && now_ms() - start < seconds * 1000u) {
		ssize_t n = read_some(fd, buf, sizeof(buf), &nonzero);

		if (n < 0)
			closed = true;
		else
			received += (size_t)n;
		if (!closed)
			closed = server_closed(fd, 250);
	}
	stopped = now_ms();
	if (!closed)
		closed = server_closed(fd, POKE_STALL_CLOSE_S * 1000);
	close(fd);
	printf("attack slow-get: read %zu of %u reply bytes (%zu not zero) at %u B/s; server "
	       "%s %.1f s after the request%s\n",
	       received, POKE_GET_BYTES, nonzero, POKE_TRICKLE_BYTES_PER_S,
	       closed ? "closed the connection" : "still held the connection",
	       (double)(now_ms() - start) / 1000.0,
	       stopped - start < seconds * 1000u ? " (while the client was reading)"
						 : " (after the client stopped reading)");
	if (nonzero) {
		fprintf(stderr, "vtest-poke: slow-get: the server sent data for a refused read\n");
		return -EPROTO;
	}
	if (!closed) {
		fprintf(stderr,
			"vtest-poke: slow-get: a client that reads nothing was not dropped "
			"within %d s\n",
			POKE_STALL_CLOSE_S);
		return -ETIMEDOUT;
	}
	return check_fresh_client(path);
}

static int attack_truncate(const char *path)
{
	const uint32_t size = 65536;
	uint32_t put2[VCMD_TRANSFER2_HDR_SIZE] = {
	    POKE_FIRST_ATTACK_HANDLE, 0, 0, 0, 0, size, 1, 1, size, 0,
	};
	int fd = connect_and_handshake(path), mfd, ret, seals, trunc_errno = 0;

	if (fd < 0)
		return fd;
	ret = create_buffer(fd, POKE_FIRST_ATTACK_HANDLE, size, true, size);
	mfd = ret < 0 ? ret : recv_fd(fd, reply_timeout_ms);
	if (mfd < 0) {
		fprintf(stderr, "vtest-poke: truncate: no backing fd: %s\n", strerror(-mfd));
		close(fd);
		return mfd;
	}
	seals = fcntl(mfd, F_GET_SEALS);
	if (ftruncate(mfd, 0) < 0)
		trunc_errno = errno;
	close(mfd);
	ret = send_cmd(fd, VCMD_TRANSFER2_HDR_SIZE, VCMD_TRANSFER_PUT2, put2, sizeof(put2));
	if (ret == 0 || is_closed_error(ret))
		ret = expect_closed_or_sane(fd, "attack truncate: after TRANSFER_PUT2");
	close(fd);
	printf("attack truncate: ftruncate of the backing to 0 %s%s (seals 0x%x)\n",
	       trunc_errno ? "refused: " : "succeeded", trunc_errno ? strerror(trunc_errno) : "",
	       (unsigned)seals);
	if (ret < 0)
		return ret;
	if (!trunc_errno) {
		fprintf(stderr, "vtest-poke: truncate: the server's backing could be truncated\n");
		return -EPROTO;
	}
	return check_fresh_client(path);
}

/*
 * Two textures, a SUBMIT_CMD of busy_blits() between them, and the
 * connection closed at once: its worker must still measure the group when
 * the GPU is done with it (the test reads the trace), and serve new clients.
 */
/* A connection with two BUSY_SIZE textures (busy_blits.h): its fd, or a negative errno. */
static int busy_connect(const char *path)
{
	int fd = connect_and_handshake(path), ret = 0;

	if (fd < 0)
		return fd;
	for (uint32_t h = 0; h < 2 && ret == 0; h++) {
		uint32_t args[VCMD_RES_CREATE_SIZE] = {POKE_FIRST_ATTACK_HANDLE + h,
						       PIPE_TEXTURE_2D,
						       BUSY_FORMAT,
						       BUSY_BIND,
						       BUSY_SIZE,
						       BUSY_SIZE,
						       1,
						       1,
						       0,
						       0};

		ret = send_cmd(fd, VCMD_RES_CREATE_SIZE, VCMD_RESOURCE_CREATE, args, sizeof(args));
	}
	if (ret < 0) {
		close(fd);
		return ret;
	}
	return fd;
}

static int attack_close_busy(const char *path)
{
	uint32_t stream[BUSY_DWORDS];
	int fd = busy_connect(path), ret;

	if (fd < 0)
		return fd;
	busy_blits(stream, POKE_FIRST_ATTACK_HANDLE, POKE_FIRST_ATTACK_HANDLE + 1);
	ret = send_cmd(fd, BUSY_DWORDS, VCMD_SUBMIT_CMD, stream, sizeof(stream));
	close(fd);
	if (ret < 0) {
		fprintf(stderr, "vtest-poke: close-busy: send: %s\n", strerror(-ret));
		return ret;
	}
	printf("attack close-busy: SUBMIT_CMD of %u blits of %ux%u sent, connection closed\n",
	       BUSY_BLITS, BUSY_SIZE, BUSY_SIZE);
	return check_fresh_client(path);
}

/* The colour of group @g of mode pieces (B8G8R8X8: blue in the low byte). */
static uint32_t piece_colour(unsigned long g)
{
	return 0xff000000u | (uint32_t)((g * 2654435761u) & 0xffffffu);
}

enum { PIECES_CLEAR_DW = 12, PIECES_DW = 1 + PIECES_CLEAR_DW + BUSY_DWORDS };

/* A busy_connect() connection, and mode pieces' group stream in @stream. */
static int pieces_connect(const char *path, uint32_t stream[PIECES_DW])
{
	int fd = busy_connect(path);

	if (fd < 0)
		return fd;
	memset(stream, 0, PIECES_DW * sizeof(uint32_t));
	stream[0] = VIRGL_CMD(POKE_CMD_CLEAR_TEXTURE, 0, PIECES_CLEAR_DW);
	stream[1] = POKE_FIRST_ATTACK_HANDLE; /* the first blit's source, level 0, all of it */
	stream[6] = BUSY_SIZE;
	stream[7] = BUSY_SIZE;
	stream[8] = 1;
	busy_blits(stream + 1 + PIECES_CLEAR_DW, POKE_FIRST_ATTACK_HANDLE,
		   POKE_FIRST_ATTACK_HANDLE + 1);
	return fd;
}

static int send_pieces_groups(int fd, uint32_t stream[PIECES_DW], unsigned long groups)
{
	int ret = 0;

	for (unsigned long g = 0; g < groups && ret == 0; g++) {
		stream[9] = piece_colour(g);
		/* The server reads the next group once the last is on the GPU. */
		ret = send_cmd_within(fd, PIECES_DW, VCMD_SUBMIT_CMD, stream,
				      PIECES_DW * sizeof(uint32_t), POKE_PIECES_TIMEOUT_MS);
	}
	return ret;
}

static int mode_pieces(const char *path, unsigned long groups)
{
	uint32_t stream[PIECES_DW];
	uint32_t get[VCMD_TRANSFER_HDR_SIZE] = {
	    POKE_FIRST_ATTACK_HANDLE, 0, 4, 4, 0, 0, 0, 1, 1, 1, 4,
	};
	uint32_t texel = 0, last = 0, want = piece_colour(groups - 1);
	int fd = pieces_connect(path, stream), ret;

	if (fd < 0)
		return fd;
	ret = send_pieces_groups(fd, stream, groups);
	if (ret == 0)
		ret = send_cmd(fd, VCMD_TRANSFER_HDR_SIZE, VCMD_TRANSFER_GET, get, sizeof(get));
	if (ret == 0)
		ret = recv_all(fd, &texel, sizeof(texel), POKE_PIECES_TIMEOUT_MS);
	/* And the texel at the far corner: a clear cut into bands covers its last rows too. */
	get[4] = get[5] = BUSY_SIZE - 1;
	if (ret == 0)
		ret = send_cmd(fd, VCMD_TRANSFER_HDR_SIZE, VCMD_TRANSFER_GET, get, sizeof(get));
	if (ret == 0)
		ret = recv_all(fd, &last, sizeof(last), POKE_PIECES_TIMEOUT_MS);
	if (ret < 0) {
		close(fd);
		fprintf(stderr, "vtest-poke: pieces: %s\n", strerror(-ret));
		return ret;
	}
	printf("pieces: %lu groups of a clear and %u blits of %ux%u; texels 0x%08x and 0x%08x, "
	       "expected 0x%08x\n",
	       groups, BUSY_BLITS, BUSY_SIZE, BUSY_SIZE, texel, last, want);
	/* The X byte is undefined. */
	if ((texel & 0xffffffu) != (want & 0xffffffu) || (last & 0xffffffu) != (want & 0xffffffu)) {
		close(fd);
		fprintf(stderr, "vtest-poke: pieces: the last group's colour did not arrive\n");
		return -EPROTO;
	}
	/* The same group with its last blit one dword short of its header's length. */
	stream[PIECES_DW - 1 - BUSY_BLIT_DW] = VIRGL_CMD(BUSY_CMD_BLIT, 0, BUSY_BLIT_DW + 1);
	ret = send_cmd(fd, PIECES_DW, VCMD_SUBMIT_CMD, stream, PIECES_DW * sizeof(uint32_t));
	if (ret == 0 && !server_closed(fd, POKE_PIECES_TIMEOUT_MS))
		ret = -ETIMEDOUT;
	close(fd);
	if (ret < 0) {
		fprintf(stderr, "vtest-poke: pieces: a malformed long group: %s\n", strerror(-ret));
		return ret;
	}
	printf("pieces: a long group with a malformed last command: connection closed\n");
	return check_fresh_client(path);
}

/* RESOURCE_CREATE2 with POKE_BACKING_BYTES each until refused: how many were created. */
static int flood_shared_memory(const char *path, unsigned long max, unsigned long *created)
{
	int fd = connect_and_handshake(path);

	*created = 0;
	if (fd < 0)
		return fd;
	for (unsigned long i = 0; i < max; i++) {
		int ret = create_buffer(fd, POKE_FIRST_ATTACK_HANDLE + (uint32_t)i,
					POKE_SMALL_BUFFER_BYTES, true, POKE_BACKING_BYTES);
		int mfd = ret < 0 ? ret : recv_fd(fd, reply_timeout_ms);

		if (is_closed_error(mfd))
			break;
		if (mfd < 0) {
			close(fd);
			return mfd;
		}
		close(mfd);
		(*created)++;
	}
	close(fd);
	return *created < max ? 0 : -ENOSPC;
}

/* RESOURCE_CREATE of small buffers, in batches, until refused: the batch's bounds. */
static int flood_resources(const char *path, unsigned long max, unsigned long *low,
			   unsigned long *high)
{
	int fd = connect_and_handshake(path);
	unsigned long sent = 0;

	*low = *high = 0;
	if (fd < 0)
		return fd;
	while (sent < max) {
		int ret = 0;

		*low = sent;
		for (unsigned i = 0; i < POKE_RESOURCES_BATCH && ret == 0; i++, sent++)
			ret = create_buffer(fd, POKE_FIRST_ATTACK_HANDLE + (uint32_t)sent, 64,
					    false, 0);
		*high = sent;
		if (ret == 0)
			ret = send_cmd(fd, 0, VCMD_PING_PROTOCOL_VERSION, NULL, 0);
		if (ret == 0)
			ret =
			    expect_reply(fd, "resources ping", VCMD_PING_PROTOCOL_VERSION, 0, NULL);
		if (is_closed_error(ret))
			break;
		if (ret < 0) {
			close(fd);
			return ret;
		}
	}
	close(fd);
	return sent < max ? 0 : -ENOSPC;
}

static int attack_resources(const char *path, unsigned long max)
{
	unsigned long shm_created, low, high;
	int ret = flood_shared_memory(path, max, &shm_created);

	if (ret == 0)
		ret = flood_resources(path, max, &low, &high);
	if (ret == -ENOSPC)
		fprintf(stderr, "vtest-poke: resources: %lu resources were not refused\n", max);
	if (ret < 0)
		return ret;
	printf("attack resources: shared memory refused after %lu backings of %u MiB (%lu MiB); "
	       "resources refused after %lu to %lu\n",
	       shm_created, POKE_BACKING_BYTES >> 20, shm_created * (POKE_BACKING_BYTES >> 20), low,
	       high);
	return check_fresh_client(path);
}

/*
 * Creates textures of 64 MiB on @fd, one after the other, each cleared (so
 * the host driver gives it storage) and followed by a PING whose answer
 * says it was taken, until @count are made or the connection fails.
 * *@made gets how many were asked for; returns 0 or the first error
 * (a negative errno). @what names the mode in messages.
 */
static int make_textures(int fd, unsigned long count, const char *what, unsigned long *made)
{
	uint32_t clear[1 + PIECES_CLEAR_DW] = {0};
	int ret = 0;

	*made = 0;
	clear[0] = VIRGL_CMD(POKE_CMD_CLEAR_TEXTURE, 0, PIECES_CLEAR_DW);
	clear[6] = clear[7] = POKE_TEXTURE_SIZE;
	clear[8] = 1;
	clear[9] = 0xff00ff00u;
	for (; *made < count && ret == 0; (*made)++) {
		uint32_t args[VCMD_RES_CREATE_SIZE] = {POKE_FIRST_ATTACK_HANDLE + (uint32_t)*made,
						       PIPE_TEXTURE_2D,
						       BUSY_FORMAT,
						       BUSY_BIND,
						       POKE_TEXTURE_SIZE,
						       POKE_TEXTURE_SIZE,
						       1,
						       1,
						       0,
						       0};

		clear[1] = args[0];
		ret = send_cmd(fd, VCMD_RES_CREATE_SIZE, VCMD_RESOURCE_CREATE, args, sizeof(args));
		if (ret == 0)
			ret = send_cmd(fd, 1 + PIECES_CLEAR_DW, VCMD_SUBMIT_CMD, clear,
				       sizeof(clear));
		if (ret == 0)
			ret = send_cmd(fd, 0, VCMD_PING_PROTOCOL_VERSION, NULL, 0);
		if (ret == 0)
			ret = expect_reply(fd, what, VCMD_PING_PROTOCOL_VERSION, 0, NULL);
	}
	return ret;
}

/*
 * @count textures of POKE_TEXTURE_SIZE squared (64 MiB each) without shared
 * memory, each cleared so that the host driver must give it storage, with
 * a PING after each: far more host memory than a worker may allocate
 * (worker_memory_mb). The server may answer every PING (the textures past
 * the worker's limit get no storage; their commands fail) or close the
 * connection; either way it must then serve a fresh client.
 */
static int attack_textures(const char *path, unsigned long count)
{
	unsigned long made;
	int fd = connect_and_handshake(path), ret;

	if (fd < 0)
		return fd;
	ret = make_textures(fd, count, "textures ping", &made);
	close(fd);
	if (ret < 0 && !is_closed_error(ret)) {
		fprintf(stderr, "vtest-poke: textures: %s\n", strerror(-ret));
		return ret;
	}
	if (ret == 0)
		printf("attack textures: %lu textures of %u MiB (%lu MiB) asked for, every PING "
		       "answered\n",
		       made, POKE_TEXTURE_BYTES >> 20, made * (POKE_TEXTURE_BYTES >> 20));
	else
		printf("attack textures: connection closed at texture %lu of %u MiB\n", made,
		       POKE_TEXTURE_BYTES >> 20);
	return check_fresh_client(path);
}

/*
 * A client that holds @count textures of 64 MiB (cleared, so the host
 * driver gives them storage) until the server closes its connection, for
 * a domain's domain_memory_mb. 0 unless the server misbehaved.
 */
static int mode_hold_textures(const char *path, unsigned long count)
{
	unsigned long made;
	uint64_t start;
	int fd = connect_and_handshake(path), ret;

	if (fd < 0) {
		if (!is_closed_error(fd))
			return fd;
		printf("hold-textures: refused at the handshake\n");
		return 0;
	}
	ret = make_textures(fd, count, "hold-textures ping", &made);
	if (ret < 0) {
		close(fd);
		if (!is_closed_error(ret)) {
			fprintf(stderr, "vtest-poke: hold-textures: %s\n", strerror(-ret));
			return ret;
		}
		printf("hold-textures: closed by the server at texture %lu of %lu\n", made, count);
		return 0;
	}
	printf("hold-textures: %lu textures of %u MiB made\n", made, POKE_TEXTURE_BYTES >> 20);
	fflush(stdout);
	start = now_ms();
	if (server_closed(fd, POKE_HOLD_MS))
		printf("hold-textures: closed by the server after %llu ms held\n",
		       (unsigned long long)(now_ms() - start));
	else
		printf("hold-textures: held %d s\n", POKE_HOLD_MS / 1000);
	close(fd);
	return 0;
}

static int run_attack(const char *path, const char *name, bool have_n, unsigned long n)
{
	if (strcmp(name, "slow-get") == 0)
		return attack_slow_get(path, have_n ? n : POKE_SLOW_GET_DEFAULT_S);
	if (strcmp(name, "truncate") == 0)
		return attack_truncate(path);
	if (strcmp(name, "resources") == 0)
		return attack_resources(path, have_n ? n : POKE_DEFAULT_MAX_RESOURCES);
	if (strcmp(name, "close-busy") == 0)
		return attack_close_busy(path);
	if (strcmp(name, "textures") == 0)
		return attack_textures(path, have_n ? n : POKE_DEFAULT_TEXTURES);
	fprintf(stderr, "vtest-poke: unknown attack '%s'\n", name);
	return -EINVAL;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: vtest-poke [-v] SOCKET MODE [N]\n"
		"       vtest-poke [-v] SOCKET --attack NAME [N]\n"
		"modes: handshake, garbage [SEED], truncated, huge-length, unknown-cmd,\n"
		"       bad-handle, connect-close [N], pieces [N], hold-idle [N],\n"
		"       hold-textures [N]\n"
		"attacks: slow-get [SECONDS], truncate, resources [MAX], close-busy,\n"
		"         textures [N]\n"
		"environment: VTEST_POKE_REPLY_MS, how long a reply may take (default %d)\n"
		"exit: 0 the server behaved, 1 it did not, 2 usage\n",
		POKE_REPLY_TIMEOUT_MS);
}

static bool parse_ulong(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno == 0 && end != s && *end == '\0' && s[0] != '-';
}

int main(int argc, char **argv)
{
	const char *path, *mode;
	unsigned long n = 0;
	bool have_n = false, attack = false;
	int ret;

	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		verbose = true;
		argv++;
		argc--;
	}
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc > 2 && strcmp(argv[2], "--attack") == 0) {
		attack = true;
		for (int i = 2; i < argc; i++)
			argv[i] = argv[i + 1];
		argc--;
	}
	if (argc < 3 || argc > 4) {
		usage(stderr);
		return 2;
	}
	if (getenv("VTEST_POKE_REPLY_MS")) {
		unsigned long ms;

		if (!parse_ulong(getenv("VTEST_POKE_REPLY_MS"), &ms) || ms == 0 ||
		    ms > POKE_REPLY_TIMEOUT_MAX) {
			fprintf(stderr, "vtest-poke: VTEST_POKE_REPLY_MS must be 1 to %d: %s\n",
				POKE_REPLY_TIMEOUT_MAX, getenv("VTEST_POKE_REPLY_MS"));
			return 2;
		}
		reply_timeout_ms = (int)ms;
	}
	path = argv[1];
	mode = argv[2];
	if (argc == 4) {
		if (!parse_ulong(argv[3], &n)) {
			fprintf(stderr, "vtest-poke: N must be a non-negative integer: %s\n",
				argv[3]);
			return 2;
		}
		have_n = true;
	}
	signal(SIGPIPE, SIG_IGN);

	if (attack) {
		uint64_t start = now_ns();

		ret = run_attack(path, mode, have_n, n);
		/* For the trace's timestamps (doc/trace-format.md: CLOCK_MONOTONIC). */
		printf("attack window ns: %llu %llu\n", (unsigned long long)start,
		       (unsigned long long)now_ns());
		if (ret == -EINVAL) {
			usage(stderr);
			return 2;
		}
	} else if (strcmp(mode, "handshake") == 0) {
		ret = check_client(path, "client");
	} else if (strcmp(mode, "garbage") == 0) {
		ret = mode_garbage(path, have_n ? n : 1);
	} else if (strcmp(mode, "truncated") == 0) {
		ret = mode_truncated(path);
	} else if (strcmp(mode, "huge-length") == 0) {
		ret = mode_huge_length(path);
	} else if (strcmp(mode, "unknown-cmd") == 0) {
		ret = mode_unknown_cmd(path);
	} else if (strcmp(mode, "bad-handle") == 0) {
		ret = mode_bad_handle(path);
	} else if (strcmp(mode, "connect-close") == 0) {
		ret = mode_connect_close(path, have_n ? n : POKE_DEFAULT_CYCLES);
	} else if (strcmp(mode, "hold-idle") == 0) {
		ret = mode_hold_idle(path, have_n ? n : POKE_DEFAULT_HOLD_IDLE);
	} else if (strcmp(mode, "hold-textures") == 0) {
		ret = mode_hold_textures(path, have_n ? n : POKE_DEFAULT_HOLD_TEXTURES);
	} else if (strcmp(mode, "pieces") == 0) {
		ret = mode_pieces(path, have_n && n > 0 ? n : POKE_DEFAULT_PIECES_GROUPS);
	} else {
		fprintf(stderr, "vtest-poke: unknown mode '%s'\n", mode);
		usage(stderr);
		return 2;
	}
	if (ret < 0) {
		fprintf(stderr, "vtest-poke: %s: FAILED (%s)\n", mode, strerror(-ret));
		return 1;
	}
	return 0;
}
