// SPDX-License-Identifier: MIT
/*
 * The worker's renderer: libvirglrenderer, initialised once per worker
 * process (virglrenderer keeps process-global state, one more reason for a
 * process per client), and the completion timestamps of its fences.
 *
 * Timestamp source "fence-callback": virglrenderer is initialised with
 * VIRGL_RENDERER_THREAD_SYNC | VIRGL_RENDERER_ASYNC_FENCE_CB, so its sync
 * thread waits on each fence's GL sync object and calls our write_fence
 * callback as soon as it signals. The callback (on that sync thread) takes
 * the CLOCK_MONOTONIC time and queues (fence id, time) into a
 * single-producer/single-consumer ring, then wakes the main thread through
 * an eventfd. The main thread takes completions out with
 * renderer_take_completions(). That callback time is the last resort of
 * the chain in timestamp_source.h: where the renderer can export fences as
 * sync_files (probed once at start), each fence's sync_file is kept until
 * it completes and its completion time comes from host-kmod's ring
 * ("kmod") or the sync_file itself ("sync_file") instead.
 */
#ifndef MEDIATOR_RENDERER_H
#define MEDIATOR_RENDERER_H

#include <stddef.h>
#include <stdint.h>

#include "common/renderer_kind.h"

struct renderer;

/*
 * Initialises virglrenderer with the given backend (@render_node is used by
 * MEDIATOR_RENDERER_EGL_GBM). Only one renderer may exist per process.
 * Returns NULL and writes a reason into @err on failure.
 */
struct renderer *renderer_create(enum mediator_renderer kind, const char *render_node, char *err,
				 size_t err_size);
/*
 * Opens, while the worker still may, the devices a renderer created later
 * needs: the render node for egl-gbm (@render_node), and host-kmod's
 * GM_FENCE_DEVICE where it exists. A worker calls it before it gives up
 * its rights (sandbox.h); renderer_create() then uses these. Devices that
 * do not open are opened again by renderer_create(), as before.
 */
void renderer_preopen(enum mediator_renderer kind, const char *render_node);
/* The descriptors renderer_preopen() keeps (at most 2, into @fds); returns how many. */
int renderer_preopened_fds(int fds[2]);

/* Cleans up virglrenderer (all contexts and resources). NULL is fine. */
void renderer_destroy(struct renderer *renderer);

/*
 * Readable (an eventfd) when fence completions are waiting. Owned by the
 * renderer. A caller that does not need to be woken for each completion
 * need not watch it: completions also wait in the ring for the next
 * renderer_take_completions(). After it polled readable, call
 * renderer_ack_wakeup().
 */
int renderer_completion_fd(const struct renderer *renderer);
void renderer_ack_wakeup(struct renderer *renderer);

/* Name of the timestamp source, for show-budgets: "kmod", "sync_file" or "fence-callback". */
const char *renderer_timestamp_source(const struct renderer *renderer);

/*
 * Creates fence @fence_id (non-zero, increasing) after everything submitted
 * so far on @ctx_id. Returns 0 or a negative errno.
 */
int renderer_fence(struct renderer *renderer, uint32_t ctx_id, uint32_t fence_id);

/*
 * Calls @fn(fence_id, end_ns, data) on the calling (main) thread for every
 * fence completed since the last call, in completion order.
 */
void renderer_take_completions(struct renderer *renderer,
			       void (*fn)(uint32_t fence_id, uint64_t end_ns, void *data),
			       void *data);

#endif
