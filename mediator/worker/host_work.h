// SPDX-License-Identifier: MIT
/*
 * Bulk host work at idle priority (doc/design.md, "Host work outside
 * groups"). A worker does some of the host GL driver's heaviest work
 * outside any command group, so outside any grant: a resource's storage
 * (llvmpipe allocates and fills a 64 MiB texture's in 30 to 100 ms), and
 * a large transfer's copy. On llvmpipe that is the GPU's CPU, taken from
 * the safety domain's frames at the worker's priority (bench/faults,
 * mem-flood: 8 clients' textures cost the cluster frames with no group of
 * theirs on the GPU). A normal domain's worker (--idle-host-work) runs
 * such work of HOST_WORK_MIN_BYTES or more at idle priority: it lowers
 * the thread doing it to SCHED_IDLE itself (any thread may lower its
 * own), and afterwards tells mediatord (WIRE_HOST_WORK), which puts it
 * back to the domain's priority unless mediatord keeps the worker at idle
 * priority for its own reasons (a revocation, a penalty, a new worker).
 * Work that follows work still waiting for that put-back sends BEGIN
 * instead of lowering itself, so that the put-back, read before it, does
 * not leave it at the domain's priority (wire.h).
 * Work that runs while mediatord keeps the worker at idle priority
 * itself sends HELD afterwards, so that mediatord counts it too.
 * A worker that does not lower itself gains nothing over today; one that
 * sends WIRE_HOST_WORK at other times can only undo its own lowering, or
 * lower itself. Runs on the worker's main thread only.
 */
#ifndef MEDIATOR_HOST_WORK_H
#define MEDIATOR_HOST_WORK_H

#include <stdbool.h>
#include <stdint.h>

struct mediator_link;

/* The least work, in bytes of storage or copy, run at idle priority: 4 MiB. */
#define HOST_WORK_MIN_BYTES (4u << 20)

/* Turns it on for this worker, reporting over @link (NULL: off, the default); starts afresh. */
void host_work_enable(struct mediator_link *link);

/*
 * Before work of @bytes: at HOST_WORK_MIN_BYTES or more, lowers the
 * calling thread to SCHED_IDLE, or keeps it there while the put-back of
 * the last host work is pending. Pair with host_work_end().
 */
void host_work_begin(uint64_t bytes);

/* After it: tells mediatord, if host_work_begin() lowered the thread or found it idle. */
void host_work_end(void);

/*
 * The worker's teardown, once its groups are done: its client is gone, and
 * freeing its resources and its exit (hundreds of MiB unmapped) are host
 * work that nothing puts back. Lowers the calling thread for good (when
 * enabled).
 */
void host_work_final(void);

#endif
