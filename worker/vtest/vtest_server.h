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
 */
#ifndef MEDIATOR_VTEST_SERVER_H
#define MEDIATOR_VTEST_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "worker_options.h"

/* Most resources one client may hold (glmark2 uses a few hundred). */
#define VTEST_MAX_RESOURCES 65536u
/* Most shared memory one client may map for resource backing. */
#define VTEST_MAX_SHM_BYTES (4ull << 30)
/* A client that does not take its replies for this long is dropped. */
#define VTEST_SEND_TIMEOUT_MS 10000

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
