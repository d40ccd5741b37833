// SPDX-License-Identifier: MIT
/*
 * The vtest transport of a worker: serves one vtest client connection
 * (Mesa's virgl vtest winsys, GALLIUM_DRIVER=virpipe) with virglrenderer,
 * turning every SUBMIT_CMD into one fenced, timed command group.
 *
 * Protocol versions 0 and 2 are served (version 1 is answered as 0, as the
 * reference server does); version 3 (venus, blobs, sync objects) is not
 * offered, and its commands end the connection (the reference server would
 * take them at any version; Mesa 22 to 25 send none at versions 0 and 2 as
 * long as the caps do not advertise VIRGL_CAP_ARB_BUFFER_STORAGE, which the
 * reference server's do not either: see send_caps()). Everything runs on
 * the worker's main thread except the fence callback (see renderer.h).
 *
 * A protocol error — unknown command, impossible length, a handle the
 * client never created, a command before CREATE_RENDERER — is logged once
 * with the domain and client and ends the connection; vtest has no error
 * reply. Only this client's resources are ever touched: virglrenderer in
 * this process holds nothing but this client's objects.
 *
 * The worker never blocks on its client: the socket is non-blocking and
 * replies wait in a bounded queue (vtest_outbuf.h: its cap, and a client
 * that takes nothing for VTEST_OUTBUF_STALL_MS is dropped) while the
 * worker goes on taking fence completions and talking to mediatord. The
 * client's resources and shared memory are limited (vtest_limits.h): a
 * creation beyond a limit is refused by closing the connection, which is
 * what the reference server does when a creation fails (protocol versions
 * 0 to 2 have no error reply).
 */
#ifndef MEDIATOR_VTEST_SERVER_H
#define MEDIATOR_VTEST_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "worker/worker_options.h"

struct vtest_server;

/* Returns NULL on allocation failure. Does not start the renderer yet. */
struct vtest_server *vtest_server_create(const struct worker_options *options);
/* Frees the client's resources, stops the renderer, closes both fds. NULL is fine. */
void vtest_server_destroy(struct vtest_server *server);

/*
 * Serves the client until it disconnects (returns 0), breaks the protocol
 * (-EPROTO), mediatord goes away (-EPIPE), or a fatal error (negative
 * errno).
 */
int vtest_server_run(struct vtest_server *server);

#endif
