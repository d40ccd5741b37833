// SPDX-License-Identifier: MIT
/*
 * virtio-gpu control and cursor requests (VIRTIO 1.2 §5.7,
 * <linux/virtio_gpu.h>): shape checks before a request is acted on.
 *
 * vgpu_cmd_check() takes the request bytes a guest placed in a descriptor
 * chain and says whether they make a whole request of a command this
 * device serves: the header's type, the fixed size of that command, and
 * for the variable ones their counts (ATTACH_BACKING's entries,
 * SUBMIT_3D's stream size, CTX_CREATE's name length) against the bytes
 * present and the named limits below. A request that fails gets the
 * VIRTIO_GPU_RESP_ERR_* it returns; nothing of it is used. Pure; fuzzed
 * (tests/fuzz/fuzz-virtio-gpu.c).
 */
#ifndef MEDIATOR_VIRTIO_GPU_CMD_H
#define MEDIATOR_VIRTIO_GPU_CMD_H

#include <stddef.h>
#include <stdint.h>

#include <linux/virtio_gpu.h>

/* Largest request: a SUBMIT_3D stream as large as vtest allows (64 MiB). */
#define VGPU_MAX_REQUEST (64u << 20)
/* Most backing pages of one resource: 1 GiB of 4 KiB pages. */
#define VGPU_MAX_BACKING_ENTRIES 262144u

/*
 * The largest fixed part of any command (CTX_CREATE: 96 bytes), rounded
 * up: what is read of a request before its size is known.
 */
#define VGPU_CMD_MAX_FIXED 128u
/*
 * Bytes a request's readable buffers may hold beyond what its command
 * uses. Linux's driver sends exactly the command; a page of slack keeps a
 * driver that rounds its buffers up working. More than that is refused:
 * a chain that points 16 MiB at a GET_DISPLAY_INFO is not a request any
 * driver sends.
 */
#define VGPU_REQUEST_SLACK 4096u

/* Control queue or cursor queue: each serves its own commands. */
enum vgpu_queue { VGPU_QUEUE_CONTROL = 0, VGPU_QUEUE_CURSOR = 1 };

/* The command's name for log lines ("SUBMIT_3D"), or "unknown". */
const char *vgpu_cmd_name(uint32_t type);

/*
 * The bytes the request whose first @len bytes are at @req can use: the
 * fixed size of its command, with ATTACH_BACKING's entries and SUBMIT_3D's
 * stream (by the counts in its fixed part, when @len holds it); the
 * header's size for a command not known or cut short. At most
 * sizeof(fixed part) + VGPU_MAX_BACKING_ENTRIES * 16 or + 4 GiB (a
 * SUBMIT_3D's size field): the caller compares with VGPU_MAX_REQUEST.
 * Pure.
 */
uint64_t vgpu_cmd_needed_size(const void *req, size_t len);

/*
 * Checks @len bytes at @req as a request on @queue. Returns 0, or the
 * VIRTIO_GPU_RESP_ERR_* to answer with (*@what says why).
 */
uint32_t vgpu_cmd_check(const void *req, size_t len, enum vgpu_queue queue, const char **what);

#endif
