// SPDX-License-Identifier: MIT
/*
 * The worker's system-call allow-list (seccomp, through libseccomp): what
 * a worker may still ask of the kernel once its renderer is up (doc/design.md,
 * "Workers' rights"). Everything else kills the worker: a guest that takes
 * over a worker through a bug in a parser or the GL driver cannot open a
 * socket, start a program, signal another process or create files
 * outside what the host GL driver's shader cache does.
 *
 * The list, with the reason for each entry, is in syscall_filter.c. It is
 * installed on every thread of the worker at once (the renderer's threads
 * already run). A forbidden call writes "forbidden system call NAME (NR)"
 * to stderr (mediatord's log) and the worker dies of SIGSYS; mediatord
 * reaps it like any crashed worker, and the domain's other clients, and
 * every other domain, go on.
 */
#ifndef MEDIATOR_SYSCALL_FILTER_H
#define MEDIATOR_SYSCALL_FILTER_H

#include <stddef.h>
#include <stdint.h>

/*
 * Installs the filter on every thread of this process. Returns 0, or a
 * negative errno with a one-line reason in @err (the worker must then not
 * serve: it has no filter).
 */
int syscall_filter_install(char *err, size_t err_size);

/*
 * What a transport calls once its renderer is up: installs the filter
 * (a failure is logged for worker @client_id of @domain). Then, where the
 * environment has MEDIATOR_WORKER_TRY_FORBIDDEN=@domain (test-worker-sandbox's
 * proof that the filter is on and kills only that worker), makes a
 * forbidden call: the worker dies. Returns 0 or a negative errno.
 */
int syscall_filter_enter(const char *domain, uint32_t client_id);

#endif
