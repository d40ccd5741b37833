// SPDX-License-Identifier: MIT
/*
 * mediatord's side of libvirt's own vhost-user path (doc/vms.md): the VM
 * connections vm_socket (vm_socket.h) takes from the back-ends libvirt
 * starts become VM clients of the domain whose `vms` lists the VM, as if
 * QEMU had connected to that domain's vhost_user_socket. The socket is
 * handed to a successor across a restart like the domains' sockets.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/libvirt_name.h"
#include "common/util.h"
#include "common/vm_handoff.h"
#include "daemon/keeper.h"
#include "daemon/mediatord_priv.h"
#include "daemon/vm_socket.h"

/* vm_socket_fn: serves the VM of libvirt's pid file @stem in the domain listing it. */
static int take_vm(void *data, const char *stem, pid_t backend, uint32_t flags, int vhost_fd,
		   char *text, size_t text_size)
{
	struct mediatord *md = data;
	char vm[CONFIG_VMS_MAX];
	int d = config_domain_of_vm_stem(&md->cfg, stem, vm, sizeof(vm));
	int id;

	if (d < 0) {
		close(vhost_fd);
		if (d == -EEXIST)
			snprintf(text, text_size,
				 "libvirt's file name %s fits more than one VM of the vms lists "
				 "in %s",
				 stem, md->cfg.path);
		else
			snprintf(text, text_size,
				 "the VM of libvirt's %s%s is in no domain's vms list in %s", stem,
				 LIBVIRT_VHOST_GPU_PIDFILE_SUFFIX, md->cfg.path);
		return d;
	}
	id = clients_add(&md->listeners[d], true, vhost_fd, text, text_size);
	if (id < 0)
		return id;
	log_info("domain %s: VM %s is client %d (libvirt's back-end %d%s)", md->cfg.domains[d].name,
		 vm, id, (int)backend, flags & VM_HANDOFF_FLAG_VIRGL ? ", --virgl" : "");
	return 0;
}

int vm_clients_open(struct mediatord *md, struct kept *kept, char *err, size_t err_size)
{
	const struct mediator_config *cfg = &md->cfg;
	struct vm_socket_params p = {
	    .path = cfg->vm_socket,
	    .owner = cfg->vm_socket_uid,
	    .state_dir = cfg->libvirt_state_dir,
	    .kept_fd = takeover_kept_listener(kept, KEEP_LISTENER_VMS, cfg->vm_socket)};

	if (!config_has_vms(cfg)) {
		if (p.kept_fd >= 0)
			close(p.kept_fd);
		return 0;
	}
	md->vm_socket = vm_socket_create(md->loop, &p, take_vm, md, err, err_size);
	if (!md->vm_socket)
		return -EINVAL;
	if (!vm_socket_taken_over(md->vm_socket) && md->keeper) {
		struct keep_entry e = {.kind = KEEP_LISTENER_VMS};

		snprintf(e.path, sizeof(e.path), "%s", cfg->vm_socket);
		if (keeper_keep(md->keeper, &e, vm_socket_fd(md->vm_socket)) < 0)
			log_warn("the keeper did not take vm_socket %s: %s", cfg->vm_socket,
				 strerror(errno));
	}
	log_info("vm_socket on %s (libvirt's VMs in the domains' vms lists; their back-ends' pid "
		 "files in %s)%s",
		 cfg->vm_socket, cfg->libvirt_state_dir,
		 vm_socket_taken_over(md->vm_socket) ? ", taken over" : "");
	return 0;
}
