// SPDX-License-Identifier: MIT
/*
 * Which libvirt VM a vhost-user GPU back-end serves, from libvirt's own
 * records rather than the back-end's word (daemon/vm_socket.h): libvirt
 * writes each back-end's pid into STATE_DIR/SHORT_NAME-ALIAS-vhost-user-
 * gpu.pid (common/libvirt_name.h), a file root creates in a directory
 * only root may write. A process of libvirt's QEMU user that libvirt did
 * not start as a VM's back-end (another VM's QEMU, say) has no such file
 * with its pid in it, so it cannot pass for a VM.
 */
#ifndef MEDIATOR_VM_IDENTITY_H
#define MEDIATOR_VM_IDENTITY_H

#include <stddef.h>
#include <sys/types.h>

/* The largest pid file read: a decimal pid and a newline. */
#define VM_IDENTITY_PIDFILE_MAX 32

/*
 * Finds in @state_dir the vhost-user GPU back-end pid file that holds
 * @pid, and copies its name without LIBVIRT_VHOST_GPU_PIDFILE_SUFFIX into
 * @stem. Only regular files owned by root or by mediatord's own user
 * count (a test's stand-in for libvirt). Returns 0, -ENOENT when no such
 * file holds @pid, or another negative errno when @state_dir cannot be
 * read.
 */
int vm_identity_stem_of_pid(const char *state_dir, pid_t pid, char *stem, size_t stem_size);

#endif
