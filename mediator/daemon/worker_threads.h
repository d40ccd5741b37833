// SPDX-License-Identifier: MIT
/*
 * DOC: a worker's threads, seen from mediatord
 *
 * What the grant watchdog needs of a worker whose group it revoked
 * (doc/design.md, "The grant watchdog"), read from /proc/PID/task and set
 * per thread (a nice value and a scheduling policy are per thread on
 * Linux):
 *
 * - its threads' CPU time, the rasterizer's apart: on llvmpipe the
 *   worker's CPU is the GPU, and the fragment work of a draw runs on
 *   Mesa's rasterizer threads ("llvmpipe-N"), while a shader compile
 *   runs on the thread that submitted the group, the rasterizer idle
 *   (on a hardware GPU, the analogue is the engine time a DRM client's
 *   fdinfo reports against the CPU time of its compiler);
 * - whether any thread may run (a stopped or deadlocked worker has none);
 * - its priority: demoted to SCHED_IDLE (it runs only on CPU time nobody
 *   else wants, the safety domain's worker first) and restored to its
 *   domain's nice value.
 */
#ifndef MEDIATOR_DAEMON_WORKER_THREADS_H
#define MEDIATOR_DAEMON_WORKER_THREADS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct worker_cpu {
	uint64_t total_ns;  /* every thread's user + system time */
	uint64_t raster_ns; /* of the rasterizer threads */
	unsigned threads, raster_threads;
	bool runnable; /* some thread is running or may run (state R) */
};

/* Reads process @pid's threads. 0, or -errno (-ESRCH: it is gone). */
int worker_threads_cpu(pid_t pid, struct worker_cpu *out);

/*
 * Every thread of @pid to SCHED_IDLE (@idle) or back to SCHED_OTHER at
 * nice @nice (the domain's), but those the process lowered itself (a nice
 * value above @nice). Threads started meanwhile inherit their starter's
 * policy; a second pass catches those started by one not yet changed. 0,
 * or the first -errno (the other threads are still changed).
 */
int worker_threads_set_idle(pid_t pid, bool idle, int nice);

/*
 * Parses one /proc/PID/task/TID/stat line into @out's sums (for tests).
 * 0, or -EINVAL on a line that is not one.
 */
int worker_threads_add_stat(const char *line, struct worker_cpu *out);

#endif
