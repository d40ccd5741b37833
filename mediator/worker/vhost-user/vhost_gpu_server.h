// SPDX-License-Identifier: MIT
/*
 * The vhost-user-gpu transport of a worker: serves one QEMU
 * `vhost-user-gpu-pci` device (one VM) on the connection mediatord
 * accepted on the domain's vhost_user_socket.
 *
 * The server speaks the vhost-user protocol (vhost_user.h): features,
 * protocol features (REPLY_ACK, CONFIG), the memory table (guest_mem.h),
 * two virtqueues (control and cursor, virtqueue.h) with their kick and
 * call eventfds, the device config (virtio_gpu_config: capsets), and the
 * display channel QEMU hands over with GPU_SET_SOCKET; the virtio-gpu
 * device itself is vgpu_device.h. A malformed vhost-user message (bad
 * size, bad fd count, a ring or memory region outside the table) is
 * logged and ends the connection; QEMU disconnecting (VM shutdown or
 * crash) ends it too, and the worker exits, freeing all of the VM's GPU
 * state. Everything runs on the worker's main thread except the fence
 * callback (renderer.h).
 */
#ifndef MEDIATOR_VHOST_GPU_SERVER_H
#define MEDIATOR_VHOST_GPU_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "worker/worker_options.h"

struct vhost_gpu_server;

/* Starts the renderer. NULL on failure (logged); the fds are closed then. */
struct vhost_gpu_server *vhost_gpu_server_create(const struct worker_options *options);
/* Frees everything and closes the fds. NULL is fine. */
void vhost_gpu_server_destroy(struct vhost_gpu_server *server);

/*
 * Serves QEMU until it disconnects (0), breaks the protocol (-EPROTO),
 * mediatord goes away (-EPIPE) or a fatal error (negative errno).
 */
int vhost_gpu_server_run(struct vhost_gpu_server *server);

#endif
