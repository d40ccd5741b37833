// SPDX-License-Identifier: MIT
/*
 * Credentials of a unix socket's peer (see peer_cred.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/peer_cred.h"

int peer_cred_read(int fd, struct peer_cred *out)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);
	gid_t groups[PEER_CRED_MAX_GROUPS];

	memset(out, 0, sizeof(*out));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
		return -errno;
	if (len != sizeof(uc))
		return -EPROTO;
	out->pid = uc.pid;
	out->uid = uc.uid;
	out->gid = uc.gid;
	len = sizeof(groups);
	/* ERANGE: more groups than we keep; the kernel then fills none. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0) {
		out->n_groups = len / sizeof(gid_t);
		memcpy(out->groups, groups, out->n_groups * sizeof(gid_t));
	}
	return 0;
}

bool peer_cred_in_group(const struct peer_cred *cred, gid_t gid)
{
	if (cred->gid == gid)
		return true;
	for (size_t i = 0; i < cred->n_groups; i++) {
		if (cred->groups[i] == gid)
			return true;
	}
	return false;
}

bool peer_cred_is_admin(const struct peer_cred *cred, uid_t self_uid, gid_t admin_gid)
{
	if (cred->uid == 0 || cred->uid == self_uid)
		return true;
	return admin_gid != (gid_t)-1 && peer_cred_in_group(cred, admin_gid);
}
