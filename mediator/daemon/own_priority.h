// SPDX-License-Identifier: MIT
/*
 * mediatord's own CPU priority. mediatord is the safety domains'
 * scheduler: a frame's request waits for its loop, and so does the
 * completion that frees the GPU for the next. On llvmpipe the CPU is the
 * GPU, and the loop competed with every worker, client and VM at nice 0:
 * bench/faults' mem-flood row saw a cluster request read 5.5 ms late and
 * its completion 15 ms late (a frame missed by mediatord's own count with
 * its work done in time), and `perf sched` showed the loop runnable for up
 * to 12 ms behind new workers starting. So it runs at OWN_NICE, with
 * SCHED_RESET_ON_FORK: nothing it starts (workers, their keeper, the
 * helper that opens files as a client) inherits it. Main thread, once.
 */
#ifndef MEDIATOR_OWN_PRIORITY_H
#define MEDIATOR_OWN_PRIORITY_H

#include <stddef.h>

/* mediatord's nice value: above every worker's default (0) and every client's. */
#define OWN_NICE (-10)

/*
 * Raises the calling process to OWN_NICE, reset in its children. 0, or
 * -errno with @err saying why (without CAP_SYS_NICE: mediatord runs on at
 * the priority it has).
 */
int own_priority_raise(char *err, size_t err_size);

#endif
