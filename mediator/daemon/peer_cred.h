// SPDX-License-Identifier: MIT
/*
 * Who is on the other end of a unix socket, from the kernel
 * (SO_PEERCRED, SO_PEERGROUPS): the credentials the peer had when it
 * connected, which it cannot forge. For the control socket's rule that
 * only root, mediatord's own user and the admin group may change
 * mediatord (config key admin_group).
 */
#ifndef MEDIATOR_PEER_CRED_H
#define MEDIATOR_PEER_CRED_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Supplementary groups kept per peer; a peer with more is judged by the first ones only. */
#define PEER_CRED_MAX_GROUPS 64

struct peer_cred {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	size_t n_groups;
	gid_t groups[PEER_CRED_MAX_GROUPS];
};

/*
 * Reads the credentials of the peer of connected unix socket @fd. Returns
 * 0, or a negative errno (the socket is no unix socket, or the kernel
 * keeps no credentials for it). Supplementary groups the kernel cannot
 * give (no SO_PEERGROUPS) leave n_groups 0.
 */
int peer_cred_read(int fd, struct peer_cred *out);

/* True when the peer's primary group or one of its supplementary groups is @gid. */
bool peer_cred_in_group(const struct peer_cred *cred, gid_t gid);

/*
 * True when the peer may change mediatord: root, @self_uid (mediatord's
 * own user), or a member of @admin_gid ((gid_t)-1: no admin group).
 */
bool peer_cred_is_admin(const struct peer_cred *cred, uid_t self_uid, gid_t admin_gid);

#endif
