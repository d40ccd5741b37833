// SPDX-License-Identifier: MIT
/*
 * The replies a vtest server owes its client, written without ever
 * blocking the worker.
 *
 * A vtest_outbuf is a queue of chunks: bytes (copied, or a buffer handed
 * over), a run of zero bytes (no memory behind it), or a file descriptor
 * sent with one byte of payload (SCM_RIGHTS, as Mesa's vtest winsys reads
 * it). vtest_outbuf_flush() writes as much as the non-blocking socket takes
 * and keeps the rest; the caller watches the socket for POLLOUT while
 * vtest_outbuf_pending() is not 0 and flushes again then.
 *
 * Two rules bound what a client that does not read can cost:
 *  - the queue never holds more than its cap: a push beyond it is refused
 *    (-ENOBUFS) and queues nothing;
 *  - a queue that made no progress (the client took not one byte) for the
 *    stall time is stalled: vtest_outbuf_stalled() says so and the caller
 *    closes the connection.
 *
 * Pure bookkeeping plus send()/sendmsg() on the socket it is given; the
 * clock is the caller's (milliseconds), so tests drive it. One thread.
 */
#ifndef MEDIATOR_VTEST_OUTBUF_H
#define MEDIATOR_VTEST_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/vtest/vtest_parser.h"

/*
 * Cap of one client's queue: the largest reply (a TRANSFER_GET of
 * VTEST_DEFAULT_MAX_PAYLOAD, the parser's limit; it has no reply
 * header) and 1 MiB for the small replies (caps, busy-wait, fds) that may
 * be queued in front of it. The server takes no new command while replies
 * are pending, so one large reply at a time is all a legal client causes.
 */
#define VTEST_OUTBUF_MAX_BYTES ((size_t)VTEST_DEFAULT_MAX_PAYLOAD + (1u << 20))
/*
 * A client that has not taken a single byte of its pending replies for
 * this long is dropped. Mesa reads its replies as soon as it asked for
 * them; 10 s is far beyond any scheduling hiccup of a live client.
 */
#define VTEST_OUTBUF_STALL_MS 10000

struct vtest_outbuf;

/* @max_bytes: the cap (0: VTEST_OUTBUF_MAX_BYTES); @stall_ms (0: VTEST_OUTBUF_STALL_MS). NULL on
 * ENOMEM. */
struct vtest_outbuf *vtest_outbuf_create(size_t max_bytes, uint32_t stall_ms);
/* Frees every chunk and closes every fd not yet sent. NULL is fine. */
void vtest_outbuf_destroy(struct vtest_outbuf *ob);

/* Queues a copy of @len bytes at @buf. 0, -ENOBUFS (beyond the cap) or -ENOMEM. */
int vtest_outbuf_push(struct vtest_outbuf *ob, const void *buf, size_t len);
/*
 * Queues @buf (from malloc) of @len bytes without copying it: the queue
 * owns it from now on and frees it once sent, or at once on error.
 */
int vtest_outbuf_push_owned(struct vtest_outbuf *ob, void *buf, size_t len);
/* Queues @len zero bytes, backed by no memory. */
int vtest_outbuf_push_zeros(struct vtest_outbuf *ob, size_t len);
/*
 * Queues @fd, sent with one byte of payload. The queue owns @fd from now
 * on: it closes it once sent, or at once on error.
 */
int vtest_outbuf_push_fd(struct vtest_outbuf *ob, int fd);

/*
 * Writes to @sock (non-blocking; no SIGPIPE) until the queue is empty or
 * the socket is full. @now_ms is the caller's clock (it starts and resets
 * the stall timer). Returns 0 (bytes may remain), or a negative errno of
 * send() (-EPIPE, -ECONNRESET: the client went away).
 */
int vtest_outbuf_flush(struct vtest_outbuf *ob, int sock, uint64_t now_ms);

/* Bytes queued and not yet sent (a queued fd counts its one byte). */
size_t vtest_outbuf_pending(const struct vtest_outbuf *ob);
/* The cap this queue was created with. */
size_t vtest_outbuf_cap(const struct vtest_outbuf *ob);
/* True when bytes are pending and none was taken for the stall time. */
bool vtest_outbuf_stalled(const struct vtest_outbuf *ob, uint64_t now_ms);
/* Milliseconds until the queue would be stalled; -1 when nothing is pending. */
int vtest_outbuf_timeout_ms(const struct vtest_outbuf *ob, uint64_t now_ms);

#endif
