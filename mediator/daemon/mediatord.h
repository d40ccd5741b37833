// SPDX-License-Identifier: MIT
/*
 * mediatord's core: the domains of the config, their listening sockets,
 * one worker process per accepted connection, the records the workers
 * send, the control socket and the trace. Everything runs on one thread,
 * driven by a loop (loop.h); signals arrive through a signalfd. These
 * functions are mediatord.c's; the files it shares the work with, by job,
 * are listed in mediatord_priv.h.
 *
 * Objects: struct mediatord owns one struct domain (accounting) and one
 * listening socket per configured domain, a list of struct client (one per
 * live worker: its pid, record channel and what it reported), the control
 * server and the active trace, if any.
 */
#ifndef MEDIATOR_MEDIATORD_H
#define MEDIATOR_MEDIATORD_H

#include <stddef.h>

#include "config/config.h"
#include "common/wire.h"

/* Largest packet a worker may send on its record channel: a full batch. */
#define MEDIATORD_MAX_RECORD WIRE_MAX_PACKET
/* Socket buffer of a record channel: about a thousand records in flight. */
#define MEDIATORD_RECORD_BUFFER (1 << 20)
/* Workers still running at shutdown get SIGTERM, then SIGKILL after this. */
#define MEDIATORD_STOP_GRACE_MS 2000
/* Connections waiting to be accepted on one domain socket. */
#define MEDIATORD_LISTEN_BACKLOG 64
/* Most clients served at once, over all domains: the sum of max_clients may not pass it. */
#define MEDIATORD_MAX_CLIENTS CONFIG_MAX_CLIENTS_TOTAL
/*
 * After a restart, how long the normal domains' workers taken over wait
 * after the safety domains' (their WIRE_RESUME): 30 frames at 60 Hz for the
 * scheduler to learn the safety frames' phase and cost again.
 */
#define MEDIATORD_RESUME_HOLD_MS 500
/*
 * Most entries a keeper hands a successor, beside the workers' pidfds
 * (struct kept holds each with its client): each domain's two sockets and
 * grant board, the clients.
 */
#define MEDIATORD_MAX_KEPT (3 * CONFIG_MAX_DOMAINS + MEDIATORD_MAX_CLIENTS)

struct mediatord;

/*
 * Creates the sockets of @cfg (copied) and the control socket. @worker_path
 * is the mediator-worker executable. Returns NULL and writes a reason into
 * @err on failure.
 */
struct mediatord *mediatord_create(const struct mediator_config *cfg, const char *worker_path,
				   char *err, size_t err_size);
/* Serves until SIGTERM or SIGINT. Returns 0 or a negative errno. */
int mediatord_run(struct mediatord *md);
/* Stops all workers, closes and unlinks all sockets. NULL is fine. */
void mediatord_destroy(struct mediatord *md);

#endif
