// SPDX-License-Identifier: MIT
/*
 * Listening unix stream sockets at a path, for the control socket and the
 * domains' vtest sockets.
 *
 * Opening creates missing parent directories (mode 0755) and replaces only
 * a stale socket file: it refuses when another process still accepts
 * connections on the path (a running mediatord) and when the path is not a
 * socket. Closing unlinks the path only if it is still the socket this
 * listener created, never a successor's.
 */
#ifndef MEDIATOR_UNIX_LISTENER_H
#define MEDIATOR_UNIX_LISTENER_H

#include <stddef.h>
#include <sys/types.h>

struct unix_listener {
	int fd; /* nonblocking, close-on-exec; -1 when closed */
	char path[108];
	dev_t dev;
	ino_t ino;
};

/*
 * Binds and listens at @path with file mode @mode. Returns 0, or a negative
 * errno with a one-line reason naming the path in @err (-EADDRINUSE:
 * another process listens there; -EEXIST: not a socket).
 */
int unix_listener_open(struct unix_listener *l, const char *path, mode_t mode, int backlog,
		       char *err, size_t err_size);
/* The same for a socket of @type (SOCK_STREAM, SOCK_SEQPACKET). */
int unix_listener_open_type(struct unix_listener *l, const char *path, int type, mode_t mode,
			    int backlog, char *err, size_t err_size);
/*
 * Takes over @fd, a socket listening at @path that a predecessor opened
 * (daemon/keeper.h): closing unlinks @path as for one opened here.
 * Returns 0, or -ENOENT when @path is no socket any more (@fd untouched).
 */
int unix_listener_adopt(struct unix_listener *l, int fd, const char *path);
/*
 * Gives the socket file of an open listener to @uid and @gid ((uid_t)-1 or
 * (gid_t)-1 leaves that one unchanged). Returns 0, or a negative errno with
 * a one-line reason naming the path in @err.
 */
int unix_listener_chown(struct unix_listener *l, uid_t uid, gid_t gid, char *err, size_t err_size);
/* Closes the socket and unlinks its path if it is still ours. Fine on a closed listener. */
void unix_listener_close(struct unix_listener *l);
/*
 * Whether descriptor @fd, handed over by another process, is a unix stream
 * socket: 0, or -EBADF (not open), -ENOTSOCK (no socket), -EPROTOTYPE
 * (another family or type), or getsockopt's negative errno.
 */
int unix_stream_check(int fd);
/* Closes the socket and leaves its path: another process holds it (a keeper). */
void unix_listener_leave(struct unix_listener *l);

#endif
