// SPDX-License-Identifier: MIT
/*
 * A mediatord trace (doc/trace-format.md) as a GPU timeline for Perfetto
 * (ui.perfetto.dev) and chrome://tracing: the Trace Event JSON format
 * ({"traceEvents": [...]}, times in microseconds). What it shows:
 *   - a process per domain; in it a track per guest context ("client C
 *     ctx X") with a slice per command group from its start to its end
 *     (name "group SEQ", or "group SEQ piece K/N"; args: predicted, bound
 *     and measured microseconds, model, young, grant, commands);
 *   - beside it a track "client C ctx X: grant" with a slice per group
 *     that waited for its grant (request to dispatch), and a flow from it
 *     to the group's slice;
 *   - for a safety domain a track "frames": a slice per frame (release to
 *     end, named "frame", or "MISSED frame" when it missed), and instant
 *     markers "release" and "deadline".
 * Tracks are named by metadata events; ids (pid, tid) follow the order in
 * which domains and contexts first appear.
 */
#ifndef MEDIATOR_TRACE_EXPORT_H
#define MEDIATOR_TRACE_EXPORT_H

#include <stddef.h>
#include <stdio.h>

struct trace_export_counts {
	size_t groups, frames, missed, waits, skipped; /* skipped: lines not understood */
};

/*
 * Reads trace lines from @in and writes the timeline to @out (both the
 * caller's). A line that is not a JSON object (a trace's last line may be
 * cut) or lacks a record's members is skipped and counted. Returns 0, or
 * a negative errno with a reason in @err (a write error).
 */
int trace_export_perfetto(FILE *in, FILE *out, struct trace_export_counts *counts, char *err,
			  size_t err_size);

#endif
