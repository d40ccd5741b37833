// SPDX-License-Identifier: MIT
/*
 * Opening a file for writing as the client who named it (the control
 * socket's trace-start, doc/protocols.md), without blocking mediatord.
 *
 * mediatord runs as root, so a path a control client names must be opened
 * with the client's rights, not mediatord's, and opening it must not stall
 * mediatord's loop (a FIFO, a device, a file system whose server does not
 * answer). A struct open_as is one such open in progress: a short-lived
 * child process takes the client's uid, gid and supplementary groups,
 * opens the path without following a symbolic link in its last component
 * and without waiting, checks that it is a regular file, and passes the
 * descriptor back over a socketpair. The loop watches the socketpair and a
 * timer, so mediatord goes on meanwhile; the child is killed when it takes
 * longer than its timeout.
 */
#ifndef MEDIATOR_OPEN_AS_H
#define MEDIATOR_OPEN_AS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/peer_cred.h"

struct loop;
struct open_as;

/*
 * The end of an open, called once, on the thread that runs @loop (in one
 * of its callbacks). On success @fd is the file, a regular file, opened
 * O_WRONLY | O_CLOEXEC (O_NONBLOCK cleared), not truncated: the callee owns
 * it and closes it. On failure @fd is -1 and @err says why in one line
 * that starts with the path ("/x/t.jsonl: not a regular file"). @done may
 * call open_as_destroy(@oa).
 */
typedef void (*open_as_done_fn)(struct open_as *oa, void *data, int fd, const char *err);

/*
 * Starts opening @path (absolute) for writing as @who, creating it with
 * @mode (less the umask) if it is missing; a link in its last component
 * or anything but a regular file is refused, and so is a file with the
 * set-user-ID or set-group-ID bit and one on a FUSE file system (whose
 * server, a user's process, could stall mediatord's writes). @who's uid,
 * gid and supplementary groups are the kernel's word on the client
 * (peer_cred_read()). When mediatord does not run as root it cannot take
 * another user's rights: it then opens as itself for root and its own
 * user and refuses everyone else. After @timeout_ms the child is killed
 * and @done told so. Returns NULL, with a reason in @err, when the open
 * cannot be started; @done is then never called. The caller frees the
 * result with open_as_destroy(), after @done or to give up.
 */
struct open_as *open_as_create(struct loop *loop, const struct peer_cred *who, const char *path,
			       mode_t mode, uint32_t timeout_ms, open_as_done_fn done, void *data,
			       char *err, size_t err_size);

/*
 * Frees @oa; an open still in progress is given up (its child killed, @done
 * never called). NULL is fine.
 */
void open_as_destroy(struct open_as *oa);

#endif
