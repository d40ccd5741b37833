// SPDX-License-Identifier: MIT
/*
 * Who mediatord's workers run as (doc/design.md, "Workers' rights").
 *
 * mediatord running as root starts every worker as its domain's worker
 * user (config key worker_user of the domain, else of [mediator], default
 * CONFIG_DEFAULT_WORKER_USER) with that user's groups: a worker gives up root itself before it
 * reads a byte of its client (worker/sandbox.h), told by --run-as. mediatord running as another
 * user starts workers as that user (it cannot give them another). Running workers as root takes an
 * explicit worker_user = root.
 */
#ifndef MEDIATOR_WORKER_USER_H
#define MEDIATOR_WORKER_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config/config.h"

struct worker_user {
	bool switch_user; /* workers get --run-as */
	uid_t uid;
	gid_t gid;
	char name[64];
	char run_as[1024]; /* "UID:GID[:G1,G2,...]", the worker's --run-as */
};

/*
 * Resolves worker user @configured (a domain's worker_uid:
 * CONFIG_SOCKET_ID_UNSET for CONFIG_DEFAULT_WORKER_USER), as this process
 * (root or not) can run workers. Returns 0, or -ENOENT (the user does not
 * exist; @err says how to create it) or another negative errno with a
 * one-line reason in @err.
 */
int worker_user_resolve(uid_t configured, struct worker_user *out, char *err, size_t err_size);

/*
 * Checks that the worker user owns directory @dir (the state directory),
 * where workers keep their learned models; gives it to the worker user
 * when mediatord has just @created it. A directory that existed and
 * belongs to another user is left as it is (it may hold more than
 * mediatord's state): -EACCES, and @err says what to do. Returns 0 or a
 * negative errno with a reason in @err; refuses what is not a directory
 * (a link).
 */
int worker_user_own_dir(const struct worker_user *wu, const char *dir, bool created, char *err,
			size_t err_size);
/*
 * Creates directory @dir with @mode where it is missing, then
 * worker_user_own_dir() on it. Returns 0 or a negative errno with a reason
 * (naming @dir) in @err.
 */
int worker_user_make_dir(const struct worker_user *wu, const char *dir, mode_t mode, char *err,
			 size_t err_size);

#endif
