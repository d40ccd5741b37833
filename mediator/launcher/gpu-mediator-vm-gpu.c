// SPDX-License-Identifier: MIT
/*
 * gpu-mediator-vm-gpu: the vhost-user GPU back-end that libvirt starts for
 * a VM, which hands the VM's GPU over to mediatord.
 *
 * For a domain with <video><driver name='vhostuser'/>, libvirt runs the
 * back-end a vhost-user descriptor of type "gpu" names (ours:
 * /usr/share/qemu/vhost-user/40-gpu-mediator.json): first with
 * --print-capabilities, then once per VM start with --fd=N, one end of a
 * connected socket pair whose other end QEMU gets (and --virgl when the VM
 * asks for 3D). It runs as QEMU's user, daemonized, with its pid in a
 * locked pid file of libvirt's, and is stopped with SIGTERM when the VM
 * stops.
 *
 * This program serves nothing itself. It connects to mediatord's
 * vm_socket, sends one struct vm_handoff_request with descriptor N
 * (SCM_RIGHTS, common/vm_handoff.h), and reads mediatord's one-line answer.
 * mediatord tells which VM it is from libvirt's pid file of this process,
 * so the process that connects must be the one libvirt started: no fork.
 * Then:
 *  - "ok DOMAIN": mediatord serves the VM's GPU in DOMAIN from now on. The
 *    launcher closes its descriptors and waits for SIGTERM or SIGINT, since
 *    libvirt expects the back-end it started to live as long as the VM;
 *    then it exits 0.
 *  - "error: TEXT", no answer in time, or no mediatord: it says why and
 *    exits 1. QEMU then reads the end of its socket and the VM's start fails.
 *
 * Messages go to syslog (libvirt points stderr at /dev/null) and stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "build-config/build-config.h"
#include "common/fd_pass.h"
#include "common/unix_listener.h"
#include "common/util.h"
#include "common/vm_handoff.h"
#include "config/config.h"

#define PROGRAM "gpu-mediator-vm-gpu"
/* Where mediatord listens for launchers unless --socket says otherwise:
 * mediatord.conf's vm_socket default. */
#define LAUNCHER_DEFAULT_SOCKET CONFIG_DEFAULT_VM_SOCKET
/* Seconds to wait for mediatord's answer (--timeout-s): mediatord answers
 * as soon as it has read libvirt's pid file and started the VM's worker. */
#define LAUNCHER_DEFAULT_TIMEOUT_S 10
/* Longest --timeout-s accepted: libvirt waits for QEMU meanwhile. */
#define LAUNCHER_MAX_TIMEOUT_S 3600

/* A bad command line (EXIT STATUS in the help; 1 is EXIT_FAILURE). */
#define EXIT_USAGE 2

/* The help, shaped like a man page (doc/man/help2scd.py reads that shape). */
static void usage(FILE *f)
{
	fprintf(f,
		"NAME\n"
		"    " PROGRAM " - hand a VM's vhost-user GPU from libvirt to mediatord\n"
		"\n"
		"SYNOPSIS\n"
		"    " PROGRAM " --print-capabilities\n"
		"    " PROGRAM " --fd=N [--virgl] [--render-node=PATH] [--socket=PATH]\n"
		"        [--timeout-s=SECONDS]\n"
		"\n"
		"DESCRIPTION\n"
		"    libvirt starts " PROGRAM " for each VM with a vhost-user GPU\n"
		"    (<video><driver name='vhostuser'/>), as the back-end the descriptor\n"
		"    /usr/share/qemu/vhost-user/40-gpu-mediator.json names. It hands the\n"
		"    VM's socket (fd N, whose peer is QEMU's) to mediatord on mediatord's\n"
		"    vm_socket and reports mediatord's answer to syslog and stderr.\n"
		"    mediatord tells the VM from libvirt's pid file of this process and\n"
		"    serves it in the domain whose vms list names it. When mediatord\n"
		"    serves the VM, " PROGRAM " holds nothing more and waits for\n"
		"    SIGTERM or SIGINT (libvirt stops it with the VM), then exits 0.\n"
		"\n"
		"OPTIONS\n"
		"    --print-capabilities\n"
		"        Print the back-end's capabilities as libvirt reads them (JSON)\n"
		"        and exit.\n"
		"    --fd=N, --fd N\n"
		"        The VM's end of the connection to QEMU: a connected unix stream\n"
		"        socket. Required otherwise.\n"
		"    --virgl\n"
		"        The VM asks for 3D acceleration (virgl); mediatord is told so.\n"
		"    --render-node=PATH\n"
		"        Accepted and ignored: mediatord chooses the GPU.\n"
		"    --socket=PATH\n"
		"        mediatord's vm_socket (default " LAUNCHER_DEFAULT_SOCKET ").\n"
		"    --timeout-s=SECONDS\n"
		"        How long to wait for mediatord's answer (default %d).\n"
		"    -h, --help\n"
		"        Print this help and exit.\n"
		"    -V, --version\n"
		"        Print the version and exit.\n"
		"\n"
		"EXIT STATUS\n"
		"    0   stopped by SIGTERM or SIGINT after mediatord took the VM; or\n"
		"        --print-capabilities, --help, --version\n"
		"    1   mediatord refused the VM, did not answer, or could not be\n"
		"        reached; fd N is not a connected unix stream socket; or the\n"
		"        capabilities could not be written\n"
		"    2   a bad command line\n"
		"\n"
		"SEE ALSO\n"
		"    mediatord(8), mediatord.conf(5)\n",
		LAUNCHER_DEFAULT_TIMEOUT_S);
}

/* say(PRIORITY, ...): one line to syslog and the same to stderr. */
static void say(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(int priority, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	syslog(priority, "%s", line);
	fprintf(stderr, PROGRAM ": %s\n", line);
}

/* Parses a non-negative decimal int from @text into *@out; -EINVAL if it is none. */
static int parse_int(const char *text, int max, int *out)
{
	char *end;
	long v;

	if (text[0] < '0' || text[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/*
 * Checks that @fd is open and a connected unix stream socket, as libvirt's
 * socket pair is. Returns 0 or -1 after saying what it is instead.
 */
static int check_vm_fd(int fd)
{
	struct sockaddr_un peer;
	socklen_t peer_len = sizeof(peer);
	int r = unix_stream_check(fd);

	if (r == -EBADF) {
		say(LOG_ERR, "fd %d (--fd) is not open", fd);
		return -1;
	}
	if (r == -ENOTSOCK) {
		say(LOG_ERR, "fd %d (--fd) is not a socket", fd);
		return -1;
	}
	if (r == -EPROTOTYPE) {
		say(LOG_ERR, "fd %d (--fd) is not a unix stream socket", fd);
		return -1;
	}
	if (r < 0) {
		say(LOG_ERR, "fd %d (--fd): cannot read its kind: %s", fd, strerror(-r));
		return -1;
	}
	if (getpeername(fd, (struct sockaddr *)&peer, &peer_len) < 0) {
		say(LOG_ERR, "fd %d (--fd) is not a connected socket: %s", fd, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Connects to mediatord's socket @path, sending and connecting bounded by
 * @timeout_s. Returns the connection (the caller closes it) or -1 after
 * saying why.
 */
static int connect_mediatord(const char *path, int timeout_s)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = timeout_s};
	int sock;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		say(LOG_ERR, "socket path %s is too long", path);
		return -1;
	}
	memcpy(addr.sun_path, path, strlen(path) + 1);
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		say(LOG_ERR, "cannot create a socket: %s", strerror(errno));
		return -1;
	}
	/* A unix connect() waits while mediatord's backlog is full. */
	if (setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(sock, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		say(LOG_ERR, "cannot connect to mediatord's socket %s: %s", path, strerror(errno));
		close(sock);
		return -1;
	}
	return sock;
}

/*
 * Reads mediatord's answer line from @sock into @answer (NUL-terminated,
 * the newline removed, anything unprintable as '?') within @timeout_s.
 * SIGTERM and SIGINT, blocked otherwise, end the process meanwhile (libvirt
 * stops a VM whose start it gave up). Returns 0, or -1 after saying why
 * there is no answer.
 */
static int read_answer(int sock, int timeout_s, const sigset_t *wait_mask,
		       char answer[VM_HANDOFF_ANSWER_MAX])
{
	uint64_t deadline = mono_now_ns() + (uint64_t)timeout_s * NSEC_PER_SEC;
	size_t len = 0;

	for (;;) {
		struct pollfd pfd = {.fd = sock, .events = POLLIN};
		uint64_t now = mono_now_ns();
		struct timespec left;
		char *nl;
		ssize_t n;
		int r;

		if (now >= deadline) {
			say(LOG_ERR, "no answer from mediatord within %d s", timeout_s);
			return -1;
		}
		left.tv_sec = (time_t)((deadline - now) / NSEC_PER_SEC);
		left.tv_nsec = (long)((deadline - now) % NSEC_PER_SEC);
		r = ppoll(&pfd, 1, &left, wait_mask);
		if (r < 0 && errno != EINTR) {
			say(LOG_ERR, "waiting for mediatord's answer: %s", strerror(errno));
			return -1;
		}
		if (r <= 0)
			continue;
		n = recv(sock, answer + len, VM_HANDOFF_ANSWER_MAX - 1 - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			say(LOG_ERR, "reading mediatord's answer: %s", strerror(errno));
			return -1;
		}
		if (n == 0) {
			say(LOG_ERR, "mediatord closed the connection without an answer");
			return -1;
		}
		len += (size_t)n;
		answer[len] = '\0';
		nl = memchr(answer, '\n', len);
		if (nl) {
			*nl = '\0';
			for (char *p = answer; *p; p++)
				if (*p < ' ' || *p > '~')
					*p = '?';
			return 0;
		}
		if (len == VM_HANDOFF_ANSWER_MAX - 1) {
			say(LOG_ERR, "mediatord's answer is longer than %d bytes",
			    VM_HANDOFF_ANSWER_MAX - 1);
			return -1;
		}
	}
}

/*
 * Hands @vm_fd to mediatord on @path. Returns 0 when mediatord serves the
 * VM, or -1 after saying why not. Closes neither descriptor of the caller.
 */
static int hand_off(const char *path, int vm_fd, uint32_t flags, int timeout_s,
		    const sigset_t *wait_mask)
{
	struct vm_handoff_request req = {
	    .magic = VM_HANDOFF_MAGIC,
	    .version = VM_HANDOFF_VERSION,
	    .flags = flags,
	};
	char answer[VM_HANDOFF_ANSWER_MAX];
	int sock, r = -1;
	ssize_t n;

	sock = connect_mediatord(path, timeout_s);
	if (sock < 0)
		return -1;
	n = fd_pass_send(sock, &req, sizeof(req), vm_fd, 0);
	if (n != (ssize_t)sizeof(req)) {
		say(LOG_ERR, "cannot send the VM's socket to mediatord on %s: %s", path,
		    n < 0 ? strerror(errno) : "short write");
	} else if (read_answer(sock, timeout_s, wait_mask, answer) == 0) {
		if (strncmp(answer, "ok ", 3) == 0 && answer[3]) {
			say(LOG_INFO, "serving this VM's GPU through mediatord domain %s",
			    answer + 3);
			r = 0;
		} else if (strncmp(answer, "error: ", 7) == 0) {
			say(LOG_ERR, "mediatord refused this VM: %s", answer + 7);
		} else {
			say(LOG_ERR, "mediatord's answer is not understood: %s", answer);
		}
	}
	close(sock);
	return r;
}

/* What libvirt reads from --print-capabilities; 0, or 1 when it could not be written. */
static int print_capabilities(void)
{
	/* "render-node" is left out: libvirt would then insist on a host DRM
	 * render node, and mediatord chooses the GPU itself. */
	printf("{\"type\": \"gpu\", \"features\": [\"virgl\"]}\n");
	return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}

int main(int argc, char **argv)
{
	enum { OPT_PRINT_CAPS = 256, OPT_FD, OPT_VIRGL, OPT_RENDER_NODE, OPT_SOCKET, OPT_TIMEOUT };
	static const struct option options[] = {
	    {"print-capabilities", no_argument, NULL, OPT_PRINT_CAPS},
	    {"fd", required_argument, NULL, OPT_FD},
	    {"virgl", no_argument, NULL, OPT_VIRGL},
	    {"render-node", required_argument, NULL, OPT_RENDER_NODE},
	    {"socket", required_argument, NULL, OPT_SOCKET},
	    {"timeout-s", required_argument, NULL, OPT_TIMEOUT},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	const char *socket_path = LAUNCHER_DEFAULT_SOCKET;
	const char *render_node = NULL;
	int timeout_s = LAUNCHER_DEFAULT_TIMEOUT_S;
	int vm_fd = -1, c, sig, r;
	uint32_t flags = 0;
	sigset_t stop_signals, wait_mask;

	openlog(PROGRAM, LOG_PID, LOG_DAEMON);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hV", options, NULL)) != -1) {
		switch (c) {
		case OPT_PRINT_CAPS:
			return print_capabilities();
		case OPT_FD:
			if (parse_int(optarg, INT_MAX, &vm_fd) < 0) {
				say(LOG_ERR, "--fd=%s: not a descriptor number", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_VIRGL:
			flags |= VM_HANDOFF_FLAG_VIRGL;
			break;
		case OPT_RENDER_NODE:
			render_node = optarg;
			break;
		case OPT_SOCKET:
			socket_path = optarg;
			break;
		case OPT_TIMEOUT:
			if (parse_int(optarg, LAUNCHER_MAX_TIMEOUT_S, &timeout_s) < 0 ||
			    timeout_s < 1) {
				say(LOG_ERR, "--timeout-s=%s: not a number of seconds from 1 to %d",
				    optarg, LAUNCHER_MAX_TIMEOUT_S);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf(PROGRAM " %s\n", MEDIATOR_VERSION);
			return 0;
		case ':':
			say(LOG_ERR, "option %s needs a value (see --help)", argv[optind - 1]);
			return EXIT_USAGE;
		default:
			say(LOG_ERR, "unknown option %s (see --help)", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		say(LOG_ERR, "unexpected argument %s (see --help)", argv[optind]);
		return EXIT_USAGE;
	}
	if (vm_fd < 0) {
		say(LOG_ERR, "--fd=N is required: the VM's socket, as libvirt passes it "
			     "(see --help)");
		return EXIT_USAGE;
	}
	if (render_node)
		say(LOG_INFO, "--render-node=%s ignored: mediatord chooses the GPU", render_node);
	if (check_vm_fd(vm_fd) < 0)
		return EXIT_FAILURE;

	/* From here SIGTERM and SIGINT are taken by sigwait(), so that one that
	 * comes just after the answer is not lost; while the answer is awaited
	 * they end the process as by default. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGINT);
	sigprocmask(SIG_BLOCK, &stop_signals, &wait_mask);
	sigdelset(&wait_mask, SIGTERM);
	sigdelset(&wait_mask, SIGINT);

	r = hand_off(socket_path, vm_fd, flags, timeout_s, &wait_mask);
	close(vm_fd);
	if (r < 0)
		return EXIT_FAILURE;
	/* Nothing held while the VM runs: not even syslog's socket. */
	closelog();
	if (sigwait(&stop_signals, &sig) != 0)
		return EXIT_FAILURE;
	openlog(PROGRAM, LOG_PID, LOG_DAEMON);
	say(LOG_INFO, "%s: stopping, as libvirt does with the VM", strsignal(sig));
	closelog();
	return 0;
}
