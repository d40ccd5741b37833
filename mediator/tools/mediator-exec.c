// SPDX-License-Identifier: MIT
/*
 * mediator-exec: runs an unmodified vtest client (a GL ES app on Mesa's
 * virgl driver, GALLIUM_DRIVER=virpipe) against one domain's socket.
 *
 * Mesa's vtest client in Debian 12's Mesa 22.3 always connects to
 * /tmp/.virgl_test; it has no setting for another path. So, as a container
 * runtime would with a bind mount, mediator-exec gives the command its own
 * mount namespace with a private /tmp (a fresh tmpfs, as systemd's
 * PrivateTmp= does) in which /tmp/.virgl_test is the domain's socket and
 * /tmp/.X11-unix is the host's, so X11 clients still find their display.
 *
 * Newer Mesa (25 here) connects to $VTEST_SOCKET_NAME when it is set. A
 * caller's value names a path outside the namespace, which the private /tmp
 * may hide, so COMMAND gets VTEST_SOCKET_NAME=/tmp/.virgl_test: every Mesa
 * then opens the socket bound there.
 *
 * As root it uses a mount namespace; as another user, a user namespace
 * too (where the kernel allows unprivileged ones).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build-config/build-config.h"

/* The path Mesa's vtest winsys connects to (VTEST_DEFAULT_SOCKET_NAME). */
#define VTEST_CLIENT_SOCKET "/tmp/.virgl_test"
/* X11's socket directory, kept visible for clients that do not use the
 * abstract socket. */
#define X11_SOCKET_DIR "/tmp/.X11-unix"

/* The help, shaped like a man page: mediator-exec(1) is made from it (doc/man/). */
static void usage(FILE *f)
{
	fprintf(
	    f,
	    "NAME\n"
	    "    mediator-exec - run a GL ES program through a mediatord domain's vtest socket\n"
	    "\n"
	    "SYNOPSIS\n"
	    "    mediator-exec --socket PATH [--] COMMAND [ARG...]\n"
	    "    mediator-exec --help\n"
	    "\n"
	    "DESCRIPTION\n"
	    "    mediator-exec runs COMMAND with a private /tmp in which /tmp/.virgl_test\n"
	    "    is the vtest socket PATH (a mediatord domain's vtest_socket), so that an\n"
	    "    unmodified GL ES application on Mesa's virgl driver renders through that\n"
	    "    domain. COMMAND sees an empty /tmp of its own, and VTEST_SOCKET_NAME set\n"
	    "    to /tmp/.virgl_test (a value from the caller would name a path the\n"
	    "    private /tmp may hide). It needs root, or unprivileged user namespaces.\n"
	    "\n"
	    "    It is the way for Mesa releases that always connect to /tmp/.virgl_test\n"
	    "    (Debian 12's Mesa 22). A Mesa that reads VTEST_SOCKET_NAME (Mesa 25, for\n"
	    "    one) needs no mediator-exec: the variable alone is enough.\n"
	    "\n"
	    "OPTIONS\n"
	    "    --socket PATH\n"
	    "        The vtest socket of the domain to render through.\n"
	    "    -h, --help\n"
	    "        Print this help and exit.\n"
	    "\n"
	    "EXIT STATUS\n"
	    "    125 the namespace could not be set up\n"
	    "    127 COMMAND could not be run\n"
	    "    2   a bad command line\n"
	    "    Otherwise the exit status of COMMAND.\n"
	    "\n"
	    "EXAMPLES\n"
	    "    GALLIUM_DRIVER=virpipe mediator-exec --socket /run/gpu-mediator/cluster.vtest \\\n"
	    "        -- glmark2-es2 --off-screen\n"
	    "    GALLIUM_DRIVER=virpipe VTEST_SOCKET_NAME=/run/gpu-mediator/cluster.vtest \\\n"
	    "        glmark2-es2 --off-screen\n"
	    "\n"
	    "SEE ALSO\n"
	    "    mediatord(8), mediatord.conf(5)\n");
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

static int enter_namespace(void)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];

	if (uid == 0)
		return unshare(CLONE_NEWNS) < 0 ? -errno : 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return -errno;
	snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
	if (write_file("/proc/self/setgroups", "deny") < 0 ||
	    write_file("/proc/self/uid_map", map) < 0)
		return -EPERM;
	snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
	return write_file("/proc/self/gid_map", map);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	const char *socket_path = NULL;
	char source[64], x11_source[64];
	int x11_fd, cmd_fd = -1;
	struct stat st;
	int c, sock_fd, fd, r;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+s:hV", options, NULL)) != -1) {
		switch (c) {
		case 's':
			socket_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("mediator-exec %s\n", MEDIATOR_VERSION);
			return 0;
		default:
			fprintf(stderr, "mediator-exec: bad option %s (see --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (!socket_path || optind >= argc) {
		fprintf(stderr, "mediator-exec: --socket PATH and a COMMAND are required "
				"(see --help)\n");
		return 2;
	}
	if (stat(socket_path, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "mediator-exec: %s: %s\n", socket_path,
			errno ? strerror(errno) : "not a socket");
		return 125;
	}
	r = enter_namespace();
	if (r < 0) {
		fprintf(stderr, "mediator-exec: cannot create a mount namespace: %s\n",
			strerror(-r));
		return 125;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		fprintf(stderr, "mediator-exec: cannot make mounts private: %s\n", strerror(errno));
		return 125;
	}
	/* Hold the socket before /tmp is covered (it may live under /tmp), from
	 * inside the new namespace: a bind mount's source must belong to it. */
	sock_fd = open(socket_path, O_PATH | O_CLOEXEC);
	if (sock_fd < 0) {
		fprintf(stderr, "mediator-exec: %s: %s\n", socket_path, strerror(errno));
		return 125;
	}
	snprintf(source, sizeof(source), "/proc/self/fd/%d", sock_fd);
	/* A COMMAND given by path may live under /tmp too: hold it as well. */
	if (strchr(argv[optind], '/'))
		cmd_fd = open(argv[optind], O_PATH | O_CLOEXEC);
	x11_fd = open(X11_SOCKET_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(x11_source, sizeof(x11_source), "/proc/self/fd/%d", x11_fd);
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0) {
		fprintf(stderr, "mediator-exec: cannot set up a private /tmp: %s\n",
			strerror(errno));
		return 125;
	}
	fd = open(VTEST_CLIENT_SOCKET, O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
	if (fd < 0 || close(fd) < 0 ||
	    mount(source, VTEST_CLIENT_SOCKET, NULL, MS_BIND, NULL) < 0) {
		fprintf(stderr, "mediator-exec: cannot place %s at %s: %s\n", socket_path,
			VTEST_CLIENT_SOCKET, strerror(errno));
		return 125;
	}
	close(sock_fd);
	/* A Mesa that reads VTEST_SOCKET_NAME must open the socket bound above,
	 * not the caller's path, which the private /tmp may hide. */
	if (setenv("VTEST_SOCKET_NAME", VTEST_CLIENT_SOCKET, 1) < 0) {
		fprintf(stderr, "mediator-exec: cannot set VTEST_SOCKET_NAME: %s\n",
			strerror(errno));
		return 125;
	}
	if (x11_fd >= 0) {
		if (mkdir(X11_SOCKET_DIR, 01777) < 0 ||
		    mount(x11_source, X11_SOCKET_DIR, NULL, MS_BIND, NULL) < 0) {
			fprintf(stderr, "mediator-exec: cannot keep %s: %s\n", X11_SOCKET_DIR,
				strerror(errno));
			return 125;
		}
		close(x11_fd);
	}
	if (cmd_fd >= 0) {
		extern char **environ;

		fexecve(cmd_fd, argv + optind, environ);
		/* A script cannot be run from a close-on-exec fd: try its path. */
	}
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "mediator-exec: %s: %s\n", argv[optind], strerror(errno));
	return 127;
}
