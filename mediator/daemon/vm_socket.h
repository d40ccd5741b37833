// SPDX-License-Identifier: MIT
/*
 * mediatord's vm_socket: where the back-end libvirt starts per VM
 * (gpu-mediator-vm-gpu, mediator/launcher/) hands over the VM's vhost-user
 * connection (common/vm_handoff.h has the protocol).
 *
 * A vm_socket accepts a connection, takes one request with one descriptor
 * from it, finds the VM from libvirt's pid file of the connecting process
 * (vm_identity.h), and hands the descriptor to its owner's callback, which
 * serves it as a VM of the domain listing that VM (config key `vms`).
 * The answer line says what came of it. A connection that sends nothing
 * is closed after VM_SOCKET_REQUEST_TIMEOUT_MS; at most
 * VM_SOCKET_MAX_PENDING wait at once (the socket is its owner's user's,
 * mode 0600: libvirt's QEMU user, whose processes are the only ones that
 * can make others wait).
 *
 * Everything runs on the loop's thread.
 */
#ifndef MEDIATOR_VM_SOCKET_H
#define MEDIATOR_VM_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/loop.h"

/* Connections waiting for their request at once: libvirt starts VMs one after another. */
#define VM_SOCKET_MAX_PENDING 8
/* How long a connection may take to send its request (the launcher sends it at once). */
#define VM_SOCKET_REQUEST_TIMEOUT_MS 2000

struct vm_socket;

/*
 * Called for each well-formed request of a process that libvirt's pid file
 * @stem (without its suffix) names as a vhost-user GPU back-end. Takes
 * @vhost_fd (the VM's connection) in every case. Returns 0 with the name of
 * the domain that serves the VM now in @text, or a negative errno with a
 * one-line reason in @text.
 */
typedef int (*vm_socket_fn)(void *data, const char *stem, pid_t backend, uint32_t flags,
			    int vhost_fd, char *text, size_t text_size);

struct vm_socket_params {
	const char *path;      /* where to listen */
	uid_t owner;	       /* the socket's owner (mode 0600) */
	const char *state_dir; /* libvirt's, with the back-ends' pid files */
	int kept_fd;	       /* a predecessor's listening socket at @path, or -1 */
};

/*
 * Listens at @p->path (or takes over @p->kept_fd) on @loop. Returns NULL
 * with a reason in @err. @fn and @data are kept; @p's strings are copied.
 */
struct vm_socket *vm_socket_create(struct loop *loop, const struct vm_socket_params *p,
				   vm_socket_fn fn, void *data, char *err, size_t err_size);

/* Its listening socket (owned by it), for a keeper to hold across a restart. */
int vm_socket_fd(const struct vm_socket *s);

/* Whether it took over a predecessor's socket. */
bool vm_socket_taken_over(const struct vm_socket *s);

/* Closes connections that waited longer than VM_SOCKET_REQUEST_TIMEOUT_MS. */
void vm_socket_expire(struct vm_socket *s, uint64_t now_ns);

/*
 * Closes it and everything waiting; unlinks its path unless @leave (a
 * keeper holds the socket for a successor). NULL is fine.
 */
void vm_socket_destroy(struct vm_socket *s, bool leave);

#endif
