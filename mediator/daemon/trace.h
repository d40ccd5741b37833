// SPDX-License-Identifier: MIT
/*
 * The per-group trace of doc/trace-format.md: JSON Lines, one object per command
 * group, times in CLOCK_MONOTONIC nanoseconds:
 *   {"domain", "client", "ctx", "seq", "request_ns", "dispatch_ns", "start_ns", "end_ns",
 *    "measured_ns", "predicted_ns", "bound_ns", "model", "cmds": {...}}
 * "cmds" has one member per predict_cmd_class that is non-zero in the group.
 * "request_ns" (an extension of the original format) is when the worker
 * asked mediatord for a grant: dispatch_ns - request_ns is the time the
 * group waited for it. "young": true (another extension, absent
 * otherwise) marks a group whose context was young, its bound not learned
 * yet (scheduler.h, SCHED_YOUNG); mediator-sim replays it as such.
 * "grant" ("request" or "offer", absent when mediatord did not schedule
 * the group) says how it got to start.
 * Written by mediatord's main thread; buffered, flushed when the buffer
 * fills, by trace_tick() (at most once a second, when mediatord calls it)
 * and completely by trace_close().
 */
#ifndef MEDIATOR_TRACE_H
#define MEDIATOR_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "scheduler/scheduler.h"
#include "common/wire.h"

struct trace;

/*
 * Starts a trace into @fd, the regular file at @path (for messages and
 * trace_path()), opened for writing: truncates it and writes records from
 * its start. mediatord opens the file as the client who asked for the trace
 * (open_as.h), never as itself. Takes @fd over: closed by trace_close(),
 * or here on failure. Returns NULL and writes a reason into @err on
 * failure (not a regular file, cannot be truncated, out of memory).
 */
struct trace *trace_create(int fd, const char *path, char *err, size_t err_size);
/* Flushes, closes and frees. Returns 0 or a negative errno (a failed flush). NULL is fine. */
int trace_close(struct trace *trace);
/* Appends one record. Returns 0 or a negative errno. */
int trace_write_group(struct trace *trace, const char *domain, uint32_t client,
		      const struct wire_group *group);
/*
 * Appends one frame record of safety domain @domain: {"type": "frame",
 * "domain", "release_ns", "deadline_ns", "end_ns" (0: unfinished),
 * "missed", "bound_ns"}. Group records have no "type". Returns as
 * trace_write_group().
 */
int trace_write_frame(struct trace *trace, const char *domain, const struct sched_frame *frame);
/* Flushes if the last flush is older than a second. */
void trace_tick(struct trace *trace, uint64_t now_ns);
const char *trace_path(const struct trace *trace);

#endif
