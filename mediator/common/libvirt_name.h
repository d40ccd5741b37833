// SPDX-License-Identifier: MIT
/*
 * libvirt's names for a VM as they appear in its files, for telling which
 * VM a vhost-user back-end serves (daemon/vm_identity.h) and for checking
 * that a config's `vms` lists can be told apart (config/config.c).
 *
 * libvirt names a VM's per-run files after its "short name": the VM's id,
 * '-', and the first LIBVIRT_SHORT_NAME_CHARS characters of its name
 * (virDomainDefGetShortName(), libvirt's src/conf/domain_conf.c). A
 * vhost-user GPU back-end's pid file is
 * STATE_DIR/SHORT_NAME-ALIAS-vhost-user-gpu.pid (ALIAS: the video device's,
 * "video0" or a user alias "ua-..."; src/qemu/qemu_vhost_user_gpu.c).
 */
#ifndef MEDIATOR_LIBVIRT_NAME_H
#define MEDIATOR_LIBVIRT_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* Characters of a VM's name in its short name (libvirt's VIR_DOMAIN_SHORT_NAME_MAX). */
#define LIBVIRT_SHORT_NAME_CHARS 20
/* The end of a vhost-user GPU back-end's pid file name. */
#define LIBVIRT_VHOST_GPU_PIDFILE_SUFFIX "-vhost-user-gpu.pid"

/*
 * The length in bytes of the part of VM name @name that libvirt keeps in
 * its short name: its first LIBVIRT_SHORT_NAME_CHARS UTF-8 characters
 * (a byte that is not UTF-8 counts as one character).
 */
size_t libvirt_short_name_len(const char *name);

/*
 * True when @stem (a pid file's name without LIBVIRT_VHOST_GPU_PIDFILE_SUFFIX)
 * is that of a back-end of VM @name: decimal id, '-', the short part of
 * @name, '-', and an alias ("video" and digits, or "ua-" and at least one
 * more character).
 */
bool libvirt_stem_is_vm(const char *stem, const char *name);

#endif
