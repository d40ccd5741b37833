// SPDX-License-Identifier: MIT
/*
 * Listening unix sockets (see unix_listener.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/unix_listener.h"

_Static_assert(sizeof(((struct unix_listener *)0)->path) ==
		   sizeof(((struct sockaddr_un *)0)->sun_path),
	       "path must hold a sun_path");

/* Creates every missing directory above @path's last component, mode 0755. */
static int make_parent_dirs(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * Removes a socket file left at @addr by an earlier run. Refuses
 * (-EADDRINUSE) when something still accepts connections on it, and
 * (-EEXIST) when the path is not a socket.
 */
static int remove_stale_socket(const struct sockaddr_un *addr, int type)
{
	struct stat st;
	int fd, r;

	if (lstat(addr->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	r = connect(fd, (const struct sockaddr *)addr, sizeof(*addr));
	close(fd);
	/* EPROTOTYPE: a socket of another type listens there. */
	if (r == 0 || errno == EAGAIN || errno == EPROTOTYPE)
		return -EADDRINUSE;
	if (unlink(addr->sun_path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static int fail(struct unix_listener *l, int r, char *err, size_t err_size, const char *what)
{
	snprintf(err, err_size, "'%s': %s: %s", l->path, what, strerror(-r));
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	return r;
}

int unix_listener_open(struct unix_listener *l, const char *path, mode_t mode, int backlog,
		       char *err, size_t err_size)
{
	return unix_listener_open_type(l, path, SOCK_STREAM, mode, backlog, err, err_size);
}

int unix_listener_open_type(struct unix_listener *l, const char *path, int type, mode_t mode,
			    int backlog, char *err, size_t err_size)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct stat st;
	int r;

	l->fd = -1;
	if (!path || !path[0] || strlen(path) >= sizeof(addr.sun_path)) {
		snprintf(err, err_size, "'%s': path empty or longer than %zu bytes",
			 path ? path : "", sizeof(addr.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memcpy(addr.sun_path, path, strlen(path) + 1);
	memcpy(l->path, addr.sun_path, sizeof(l->path));

	r = make_parent_dirs(path);
	if (r < 0)
		return fail(l, r, err, err_size, "cannot create its directory");
	r = remove_stale_socket(&addr, type);
	if (r == -EADDRINUSE) {
		snprintf(err, err_size, "'%s': another process is listening on it", path);
		return r;
	}
	if (r == -EEXIST) {
		snprintf(err, err_size, "'%s': exists and is not a socket", path);
		return r;
	}
	if (r < 0)
		return fail(l, r, err, err_size, "cannot remove the old socket");
	l->fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0)
		return fail(l, -errno, err, err_size, "socket");
	if (bind(l->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return fail(l, -errno, err, err_size, "bind");
	if (chmod(path, mode) < 0 || lstat(path, &st) < 0 || listen(l->fd, backlog) < 0) {
		r = -errno;
		unlink(path);
		return fail(l, r, err, err_size, "cannot listen");
	}
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	return 0;
}

int unix_listener_chown(struct unix_listener *l, uid_t uid, gid_t gid, char *err, size_t err_size)
{
	if (uid == (uid_t)-1 && gid == (gid_t)-1)
		return 0;
	/* lchown: the path is the socket bound in unix_listener_open(), never a link. */
	if (lchown(l->path, uid, gid) < 0) {
		int r = -errno;

		snprintf(err, err_size, "'%s': cannot give it to uid %ld gid %ld: %s", l->path,
			 uid == (uid_t)-1 ? -1L : (long)uid, gid == (gid_t)-1 ? -1L : (long)gid,
			 strerror(-r));
		return r;
	}
	return 0;
}

int unix_listener_adopt(struct unix_listener *l, int fd, const char *path)
{
	struct stat st;

	l->fd = -1;
	if (strlen(path) >= sizeof(l->path) || lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
		return -ENOENT;
	snprintf(l->path, sizeof(l->path), "%s", path);
	l->fd = fd;
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	return 0;
}

void unix_listener_close(struct unix_listener *l)
{
	struct stat st;

	if (l->fd < 0)
		return;
	close(l->fd);
	l->fd = -1;
	if (lstat(l->path, &st) == 0 && st.st_dev == l->dev && st.st_ino == l->ino)
		unlink(l->path);
}

void unix_listener_leave(struct unix_listener *l)
{
	if (l->fd < 0)
		return;
	close(l->fd);
	l->fd = -1;
}

int unix_stream_check(int fd)
{
	struct stat st;
	int domain = 0, type = 0;
	socklen_t len = sizeof(int);

	if (fstat(fd, &st) < 0)
		return -EBADF;
	if (!S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0)
		return -errno;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
		return -errno;
	return domain == AF_UNIX && type == SOCK_STREAM ? 0 : -EPROTOTYPE;
}
