// SPDX-License-Identifier: MIT
/*
 * vtest reply queue (see vtest_outbuf.h).
 *
 * Chunks are kept on a singly linked list in the order they were pushed;
 * each remembers how much of it was sent (off). A copied chunk carries its
 * bytes after its header; an owned one points at the caller's buffer; a
 * zero run is sent from one static page of zeros; an fd chunk is one
 * byte sent with the fd attached, so the fd arrives exactly where the
 * client expects it in the stream.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/fd_pass.h"
#include "worker/vtest/vtest_outbuf.h"

/* Largest single send() of a zero run (one static buffer). */
#define ZERO_RUN_BYTES 65536

enum chunk_kind {
	CHUNK_BYTES, /* data: inline copy or owned buffer */
	CHUNK_ZEROS,
	CHUNK_FD,
};

struct chunk {
	struct chunk *next;
	enum chunk_kind kind;
	size_t len;
	size_t off;
	void *owned; /* freed with the chunk (owned buffers) */
	const uint8_t *data;
	int fd; /* CHUNK_FD: closed once sent or with the chunk */
	uint8_t inline_data[];
};

struct vtest_outbuf {
	struct chunk *head, *tail;
	size_t pending;
	size_t max_bytes;
	uint32_t stall_ms;
	bool timing;	   /* bytes are pending and since_ms counts */
	uint64_t since_ms; /* last progress, or when bytes became pending */
};

static const uint8_t zero_run[ZERO_RUN_BYTES];

struct vtest_outbuf *vtest_outbuf_create(size_t max_bytes, uint32_t stall_ms)
{
	struct vtest_outbuf *ob = calloc(1, sizeof(*ob));

	if (!ob)
		return NULL;
	ob->max_bytes = max_bytes ? max_bytes : VTEST_OUTBUF_MAX_BYTES;
	ob->stall_ms = stall_ms ? stall_ms : VTEST_OUTBUF_STALL_MS;
	return ob;
}

static void chunk_free(struct chunk *c)
{
	if (c->kind == CHUNK_FD && c->fd >= 0)
		close(c->fd);
	free(c->owned);
	free(c);
}

void vtest_outbuf_destroy(struct vtest_outbuf *ob)
{
	if (!ob)
		return;
	while (ob->head) {
		struct chunk *c = ob->head;

		ob->head = c->next;
		chunk_free(c);
	}
	free(ob);
}

static bool fits(const struct vtest_outbuf *ob, size_t len)
{
	return len <= ob->max_bytes && ob->pending <= ob->max_bytes - len;
}

static void append(struct vtest_outbuf *ob, struct chunk *c)
{
	if (ob->tail)
		ob->tail->next = c;
	else
		ob->head = c;
	ob->tail = c;
	ob->pending += c->len;
}

int vtest_outbuf_push(struct vtest_outbuf *ob, const void *buf, size_t len)
{
	struct chunk *c;

	if (len == 0)
		return 0;
	if (!fits(ob, len))
		return -ENOBUFS;
	c = calloc(1, sizeof(*c) + len);
	if (!c)
		return -ENOMEM;
	c->kind = CHUNK_BYTES;
	c->len = len;
	c->fd = -1;
	memcpy(c->inline_data, buf, len);
	c->data = c->inline_data;
	append(ob, c);
	return 0;
}

int vtest_outbuf_push_owned(struct vtest_outbuf *ob, void *buf, size_t len)
{
	struct chunk *c;

	if (len == 0 || !fits(ob, len)) {
		free(buf);
		return len == 0 ? 0 : -ENOBUFS;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		free(buf);
		return -ENOMEM;
	}
	c->kind = CHUNK_BYTES;
	c->len = len;
	c->fd = -1;
	c->owned = buf;
	c->data = buf;
	append(ob, c);
	return 0;
}

int vtest_outbuf_push_zeros(struct vtest_outbuf *ob, size_t len)
{
	struct chunk *c;

	if (len == 0)
		return 0;
	if (!fits(ob, len))
		return -ENOBUFS;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->kind = CHUNK_ZEROS;
	c->len = len;
	c->fd = -1;
	append(ob, c);
	return 0;
}

int vtest_outbuf_push_fd(struct vtest_outbuf *ob, int fd)
{
	struct chunk *c;

	if (!fits(ob, 1)) {
		close(fd);
		return -ENOBUFS;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->kind = CHUNK_FD;
	c->len = 1;
	c->fd = fd;
	append(ob, c);
	return 0;
}

/* Sends the fd of @c with its one byte of payload. */
static ssize_t send_fd_chunk(int sock, struct chunk *c)
{
	char byte = 0;

	return fd_pass_send(sock, &byte, 1, c->fd, MSG_DONTWAIT);
}

/* One send() of the rest of @c: bytes sent, or -1 with errno. */
static ssize_t send_chunk(int sock, struct chunk *c)
{
	size_t left = c->len - c->off;

	switch (c->kind) {
	case CHUNK_FD:
		return send_fd_chunk(sock, c);
	case CHUNK_ZEROS:
		return send(sock, zero_run, left < ZERO_RUN_BYTES ? left : ZERO_RUN_BYTES,
			    MSG_NOSIGNAL | MSG_DONTWAIT);
	case CHUNK_BYTES:
	default:
		return send(sock, c->data + c->off, left, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
}

int vtest_outbuf_flush(struct vtest_outbuf *ob, int sock, uint64_t now_ms)
{
	int r = 0;

	while (ob->head) {
		struct chunk *c = ob->head;
		ssize_t n = send_chunk(sock, c);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				r = -errno;
			break;
		}
		c->off += (size_t)n;
		ob->pending -= (size_t)n;
		ob->since_ms = now_ms;
		ob->timing = true;
		if (c->off < c->len)
			continue;
		ob->head = c->next;
		if (!ob->head)
			ob->tail = NULL;
		chunk_free(c);
	}
	if (!ob->pending)
		ob->timing = false;
	else if (!ob->timing) {
		ob->timing = true;
		ob->since_ms = now_ms;
	}
	return r;
}

size_t vtest_outbuf_pending(const struct vtest_outbuf *ob)
{
	return ob->pending;
}

size_t vtest_outbuf_cap(const struct vtest_outbuf *ob)
{
	return ob->max_bytes;
}

bool vtest_outbuf_stalled(const struct vtest_outbuf *ob, uint64_t now_ms)
{
	return ob->pending && ob->timing && now_ms - ob->since_ms >= ob->stall_ms;
}

int vtest_outbuf_timeout_ms(const struct vtest_outbuf *ob, uint64_t now_ms)
{
	uint64_t elapsed;

	if (!ob->pending)
		return -1;
	if (!ob->timing)
		return (int)ob->stall_ms;
	elapsed = now_ms - ob->since_ms;
	return elapsed >= ob->stall_ms ? 0 : (int)(ob->stall_ms - elapsed);
}
