// SPDX-License-Identifier: MIT
/*
 * The VM hand-off: how libvirt's own vhost-user GPU path reaches mediatord
 * (doc/vms.md, "libvirt's vhost-user path").
 *
 * libvirt starts the back-end a vhost-user descriptor names
 * (/usr/share/qemu/vhost-user/40-gpu-mediator.json, type gpu) once per VM,
 * with one end of a socket pair as --fd=N; QEMU gets the other end. That
 * back-end is gpu-mediator-vm-gpu (mediator/launcher/): it connects to
 * mediatord's vm_socket and sends one request with that descriptor
 * (SCM_RIGHTS). mediatord finds out itself which VM the launcher serves,
 * from libvirt's own pid file of the back-end (daemon/vm_identity.h):
 * the launcher's word is not taken for it. mediatord answers with one
 * line and closes the connection:
 *   "ok DOMAIN\n"     the VM's GPU is served by domain DOMAIN from now on;
 *   "error: TEXT\n"   refused (TEXT says why; mediatord logs it too).
 *
 * A request is exactly struct vm_handoff_request, little-endian as the
 * host, with one descriptor; anything else is refused.
 */
#ifndef MEDIATOR_VM_HANDOFF_H
#define MEDIATOR_VM_HANDOFF_H

#include <stdint.h>

#define VM_HANDOFF_MAGIC   0x315550474d564d47ull /* the bytes "GMVMGPU1", little-endian */
#define VM_HANDOFF_VERSION 1u

/* The launcher was given --virgl: the VM's XML asks for 3D acceleration. */
#define VM_HANDOFF_FLAG_VIRGL  0x1u
#define VM_HANDOFF_FLAGS_KNOWN VM_HANDOFF_FLAG_VIRGL

struct vm_handoff_request {
	uint64_t magic;	  /* VM_HANDOFF_MAGIC */
	uint32_t version; /* VM_HANDOFF_VERSION */
	uint32_t flags;	  /* VM_HANDOFF_FLAG_*; unknown bits are refused */
};

/* Longest answer line, its newline and NUL included. */
#define VM_HANDOFF_ANSWER_MAX 256

#endif
