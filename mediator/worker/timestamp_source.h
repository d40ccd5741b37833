// SPDX-License-Identifier: MIT
/*
 * Where a command group's completion time comes from (doc/design.md,
 * "Completion timestamps"), best first:
 *   "kmod"            host-kmod's gm_fence.ko: the time its dma_fence
 *                     signaled tracepoint ran (the GPU's completion IRQ),
 *                     found by the fence's (context, seqno) from the group's
 *                     sync_file;
 *   "sync_file"       the sync_file's own signal timestamp
 *                     (SYNC_IOC_FILE_INFO), also taken in the signal path;
 *   "fence-callback"  the CPU time virglrenderer's fence callback ran
 *                     (renderer.h), late by the callback's scheduling.
 * The first two need the renderer to export each fence as a sync_file
 * (virgl_renderer_export_fence(), EGL_ANDROID_native_fence_sync); Mesa's
 * llvmpipe has no kernel fences, so there only the callback remains.
 *
 * Each source is one small ops table; the worker never switches on the
 * kind. Main thread only.
 */
#ifndef MEDIATOR_TIMESTAMP_SOURCE_H
#define MEDIATOR_TIMESTAMP_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#define TIMESTAMP_SOURCE_OPS_VERSION 1

struct timestamp_source_ops {
	uint32_t version; /* TIMESTAMP_SOURCE_OPS_VERSION */
	const char *name;
	/*
	 * The completion time (CLOCK_MONOTONIC ns) of the signalled fence of
	 * @sync_fd (a sync_file; the caller keeps and closes it). 0 or a
	 * negative errno (-EAGAIN: not signalled yet; -ENOTSUP: this source
	 * takes no sync_files).
	 */
	int (*end_ns)(void *state, int sync_fd, uint64_t *end_ns);
	void (*destroy)(void *state); /* may be NULL */
};

struct timestamp_source {
	const struct timestamp_source_ops *ops;
	void *state;
};

/*
 * Picks the best source: with @have_sync_files, "kmod" when @kmod_fd (an
 * open GM_FENCE_DEVICE, or -1) speaks our ABI, else "sync_file"; without,
 * "fence-callback". Takes @kmod_fd (closed here when not used). Never
 * fails: the callback is always there.
 */
void timestamp_source_choose(struct timestamp_source *out, bool have_sync_files, int kmod_fd);
const char *timestamp_source_name(const struct timestamp_source *src);
/* See timestamp_source_ops.end_ns. */
int timestamp_source_end_ns(const struct timestamp_source *src, int sync_fd, uint64_t *end_ns);
void timestamp_source_finish(struct timestamp_source *src);

#endif
