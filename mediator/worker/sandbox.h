// SPDX-License-Identifier: MIT
/*
 * A worker gives up what it does not need before it reads a guest byte
 * (doc/design.md, "Workers' rights"): it parses guest-controlled streams
 * and runs the host's GL driver on them, so a guest that finds a bug there
 * must find an unprivileged process that can reach nothing but its own
 * connection.
 *
 * sandbox_enter(), in this order:
 *  1. closes every descriptor but stdin/out/err and those it is told to
 *     keep (the connection, the record channel, the grant board, the
 *     devices the renderer needs, opened before: renderer_preopen());
 *  2. limits the private memory it may allocate from here on (RLIMIT_DATA,
 *     set to what it has mapped now plus the limit: heap, anonymous and
 *     private writable mappings; a VM's RAM, which a vhost-user worker
 *     maps shared, is not counted; nor is, under AddressSanitizer, the
 *     shadow memory mapped at start);
 *  3. becomes the worker user (supplementary groups, then gid, then uid,
 *     real, effective and saved) and checks it cannot become root again;
 *  4. PR_SET_NO_NEW_PRIVS (no set-user-ID program or file capability can
 *     give rights back), PR_SET_DUMPABLE 0 (workers of other domains run
 *     as the same user and must not ptrace or read the memory of this
 *     one), and the parent-death signal again (changing credentials
 *     clears it), unless the worker is to outlive mediatord (its keeper,
 *     daemon/keeper.h, holds the record channel for a restarted one).
 */
#ifndef MEDIATOR_SANDBOX_H
#define MEDIATOR_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/wire.h"

/* Supplementary groups a worker user may have (render, video, ...). */
#define SANDBOX_MAX_GROUPS WIRE_RUN_AS_MAX_GROUPS
/* Descriptors a worker keeps. */
#define SANDBOX_MAX_KEEP 8

struct sandbox_options {
	bool switch_user; /* false: keep the user mediatord runs as */
	uid_t uid;
	gid_t gid;
	size_t n_groups;
	gid_t groups[SANDBOX_MAX_GROUPS];
	uint64_t data_limit_bytes; /* private memory it may allocate from here; 0: unlimited */
	size_t n_keep;
	int keep[SANDBOX_MAX_KEEP]; /* besides 0, 1, 2 */
	pid_t parent;		    /* mediatord, the worker's parent; 0: not checked */
	int parent_death_signal;    /* sent when mediatord dies; 0: none (it outlives it) */
};

/*
 * Parses mediator-worker's --run-as value "UID:GID[:G1,G2,...]" into @o
 * (switch_user set). Returns 0 or -EINVAL.
 */
int sandbox_parse_run_as(const char *s, struct sandbox_options *o);

/*
 * Enters the sandbox (above). Returns 0, or a negative errno with a
 * one-line reason in @err: the worker must then exit, never serve.
 */
int sandbox_enter(const struct sandbox_options *o, char *err, size_t err_size);

#endif
