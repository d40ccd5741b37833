/* SPDX-License-Identifier: MIT */
/*
 * A worker that dies of a fault says so, with the fault, on stderr
 * (mediatord's log) on its way out.
 */
#ifndef GM_WORKER_FATAL_SIGNAL_H
#define GM_WORKER_FATAL_SIGNAL_H

#include <stdint.h>

/*
 * From now on, SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT print
 * "mediator-worker: domain DOMAIN client CLIENT_ID: fatal signal NAME ..."
 * before the process dies of them as it would have (the handlers before
 * these, a sanitizer's say, still run). Returns 0 or -errno.
 */
int fatal_signal_report(const char *domain, uint32_t client_id);

#endif
