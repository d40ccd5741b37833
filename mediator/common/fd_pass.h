// SPDX-License-Identifier: MIT
/*
 * Passing one descriptor with a message over a unix socket (SCM_RIGHTS):
 * between mediatord and its keeper (daemon/keeper.h), and a vtest
 * resource's backing to its client (worker/vtest/vtest_outbuf.c).
 */
#ifndef MEDIATOR_FD_PASS_H
#define MEDIATOR_FD_PASS_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Sends @len bytes of @buf with @fd (-1: none), never raising SIGPIPE;
 * @flags: more send flags (MSG_DONTWAIT). The byte count, or -1 with errno.
 */
ssize_t fd_pass_send(int sock, const void *buf, size_t len, int fd, int flags);
/*
 * Receives one message into @buf (at most @len bytes) and the descriptor
 * sent with it into *@fd (close-on-exec; -1 when none came; any further
 * ones are closed). The byte count (0: the peer closed), or -1 with errno
 * (EMSGSIZE: the message was longer than @len; its descriptor is closed).
 */
ssize_t fd_pass_recv(int sock, void *buf, size_t len, int flags, int *fd);

#endif
