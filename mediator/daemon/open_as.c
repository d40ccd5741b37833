// SPDX-License-Identifier: MIT
/*
 * Opening a file as the client who named it (see open_as.h).
 *
 * open_as_create() works out whose rights the child takes, makes a
 * socketpair and a one-shot timer, forks, and watches the socketpair and
 * the timer in the loop. The child (child_open()) is a copy of mediatord,
 * whose other threads are gone: it may only make async-signal-safe calls,
 * and it makes nothing but system calls. It first closes every descriptor
 * but its end of the socketpair and makes itself undumpable, so that the
 * client, whose uid it takes, can neither ptrace it nor reach mediatord's
 * sockets through /proc; then it takes the client's groups, gid and uid,
 * opens, checks and sends one struct open_as_answer, with the descriptor
 * when it opened one, and exits.
 *
 * The child is watched through a pidfd, so that killing it at the timeout
 * can never hit another process that reused its pid. It is never waited
 * for: it runs as the client, who may stop it. A child that has exited is
 * reaped with WNOHANG when its answer came; one that has not is reaped by
 * mediatord's SIGCHLD handler, which reaps every child (clients_reap()).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/open_as.h"
#include "common/fd_pass.h"
#include "common/loop.h"

/* How the child's open ended (struct open_as_answer's outcome). */
enum open_as_outcome {
	OPEN_AS_OPENED = 1,  /* the descriptor comes with the answer */
	OPEN_AS_FAILED,	     /* open() or fstat() failed with error */
	OPEN_AS_NO_IDENTITY, /* the client's groups, gid or uid could not be taken: error */
	OPEN_AS_SYMLINK,     /* the last component is a symbolic link */
	OPEN_AS_NOT_REGULAR, /* a FIFO, a device, a socket, a directory */
	OPEN_AS_SET_ID,	     /* a regular file with the set-user-ID or set-group-ID bit */
	OPEN_AS_FUSE,	     /* a regular file on a FUSE file system */
};

/* The child's one message. */
struct open_as_answer {
	int32_t outcome; /* enum open_as_outcome */
	int32_t error;	 /* errno, for OPEN_AS_FAILED and OPEN_AS_NO_IDENTITY */
};

/* Whose rights the child takes: the client's, worked out before the fork. */
struct open_as_identity {
	bool switch_user; /* false: keep mediatord's (it is not root) */
	uid_t uid;
	gid_t gid;
	size_t n_groups;
	gid_t groups[PEER_CRED_MAX_GROUPS];
};

struct open_as {
	open_as_done_fn done;
	void *data;
	char *path;
	uid_t uid; /* the client's, for messages */
	uint32_t timeout_ms;
	pid_t pid;
	int pidfd;
	int sock; /* mediatord's end of the socketpair */
	int timer;
	struct loop_source *sock_source;
	struct loop_source *timer_source;
	bool finished; /* done has been called; the child has answered or been killed */
};

/* The open's flags: see child_open(). */
#define OPEN_AS_FLAGS (O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/* Closes every descriptor from 3 up but @keep. */
static void child_close_all_but(int keep)
{
	if (keep > 3)
		close_range(3, (unsigned)keep - 1, 0);
	close_range(keep >= 3 ? (unsigned)keep + 1 : 3, ~0u, 0);
}

/*
 * What the child found out about @path, whose open() failed with @error.
 * O_NOFOLLOW's ELOOP and O_NONBLOCK's ENXIO (a FIFO without a reader, a
 * socket) say little by themselves: lstat() tells a link or another kind
 * of file from the errors that have nothing to do with it.
 */
static void child_explain_failure(const char *path, int error, struct open_as_answer *a)
{
	struct stat st;

	a->outcome = OPEN_AS_FAILED;
	a->error = error;
	if (error == EACCES || error == EPERM || lstat(path, &st) < 0)
		return;
	if (S_ISLNK(st.st_mode))
		a->outcome = OPEN_AS_SYMLINK;
	else if (!S_ISREG(st.st_mode))
		a->outcome = OPEN_AS_NOT_REGULAR;
}

/*
 * The child: takes @id, opens @path, answers on @sock and exits. Only
 * async-signal-safe calls from here on (see the top of this file).
 *
 * O_NOFOLLOW: a link in the last component is refused, so that a client
 * cannot point the open at a file it may not name itself (the open runs
 * with the client's rights anyway; this keeps links out of mediatord's
 * business altogether). O_NONBLOCK: opening a FIFO without a reader fails
 * at once instead of waiting for one, as does opening a device that would
 * wait. O_CREAT without O_TRUNC: the caller truncates once it has decided
 * to use the file (a trace already running leaves the file as it was).
 */
static void __attribute__((noreturn))
child_open(int sock, const struct open_as_identity *id, const char *path, mode_t mode)
{
	struct open_as_answer a = {.outcome = OPEN_AS_OPENED};
	struct statfs sfs;
	struct stat st;
	int fd = -1;

	child_close_all_but(sock);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (id->switch_user && (setgroups(id->n_groups, id->groups) < 0 || setgid(id->gid) < 0 ||
				setuid(id->uid) < 0)) {
		a.outcome = OPEN_AS_NO_IDENTITY;
		a.error = errno;
	} else if ((fd = open(path, OPEN_AS_FLAGS, mode)) < 0) {
		child_explain_failure(path, errno, &a);
	} else if (fstat(fd, &st) < 0) {
		a.outcome = OPEN_AS_FAILED;
		a.error = errno;
	} else if (!S_ISREG(st.st_mode)) {
		a.outcome = OPEN_AS_NOT_REGULAR;
	} else if (st.st_mode & (S_ISUID | S_ISGID)) {
		/* Root's writes would keep the bits the client's own would clear. */
		a.outcome = OPEN_AS_SET_ID;
	} else if (fstatfs(fd, &sfs) == 0 && sfs.f_type == FUSE_SUPER_MAGIC) {
		a.outcome = OPEN_AS_FUSE;
	}
	/* A lost answer reads as "ended without an answer" on the other side. */
	fd_pass_send(sock, &a, sizeof(a), a.outcome == OPEN_AS_OPENED ? fd : -1, 0);
	_exit(0);
}

/* Kills the child (if it still runs) and reaps it if it is gone already. */
static void open_as_end_child(struct open_as *oa, bool kill_it)
{
	siginfo_t si;

	if (oa->pidfd < 0)
		return;
	if (kill_it)
		pidfd_send_signal(oa->pidfd, SIGKILL, NULL, 0);
	/* ECHILD: mediatord's SIGCHLD handler reaped it first. 0: it is reaped there later. */
	memset(&si, 0, sizeof(si));
	waitid(P_PIDFD, (id_t)oa->pidfd, &si, WEXITED | WNOHANG);
}

/* Ends the open: stops watching, ends the child, and tells the owner. */
static void open_as_finish(struct open_as *oa, bool kill_child, int fd, const char *err)
{
	loop_remove(oa->sock_source);
	oa->sock_source = NULL;
	loop_remove(oa->timer_source);
	oa->timer_source = NULL;
	open_as_end_child(oa, kill_child);
	oa->finished = true;
	/* May free @oa: nothing after this. */
	oa->done(oa, oa->data, fd, err);
}

/* The one-line reason for a refused or failed answer @a. */
static void open_as_describe(const struct open_as *oa, const struct open_as_answer *a, char *msg,
			     size_t size)
{
	switch (a->outcome) {
	case OPEN_AS_FAILED:
		snprintf(msg, size, "%s: %s", oa->path, strerror(a->error));
		break;
	case OPEN_AS_NO_IDENTITY:
		snprintf(msg, size, "%s: cannot open it as uid %u: %s", oa->path, (unsigned)oa->uid,
			 strerror(a->error));
		break;
	case OPEN_AS_SYMLINK:
		snprintf(msg, size, "%s: is a symbolic link (links are not followed)", oa->path);
		break;
	case OPEN_AS_NOT_REGULAR:
		snprintf(msg, size, "%s: not a regular file", oa->path);
		break;
	case OPEN_AS_SET_ID:
		snprintf(msg, size, "%s: has the set-user-ID or set-group-ID bit", oa->path);
		break;
	case OPEN_AS_FUSE:
		snprintf(msg, size,
			 "%s: on a FUSE file system, whose server could stall mediatord's writes",
			 oa->path);
		break;
	default:
		snprintf(msg, size, "%s: the process opening it gave a wrong answer", oa->path);
		break;
	}
}

/*
 * Takes the child's answer if it has come. Returns false when there is
 * none yet; otherwise finishes the open (which may free @oa).
 */
static bool open_as_take_answer(struct open_as *oa)
{
	char msg[PATH_MAX + 128];
	struct open_as_answer a;
	int fd = -1;
	ssize_t n;

	do
		n = fd_pass_recv(oa->sock, &a, sizeof(a), MSG_DONTWAIT, &fd);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return false;
	if (n != (ssize_t)sizeof(a)) {
		/* Killed (by the client, who may), or a message of another size. */
		if (fd >= 0)
			close(fd);
		snprintf(msg, sizeof(msg), "%s: the process opening it ended without an answer",
			 oa->path);
		open_as_finish(oa, true, -1, msg);
		return true;
	}
	if (a.outcome == OPEN_AS_OPENED && fd >= 0) {
		int flags = fcntl(fd, F_GETFL);

		/*
		 * O_NONBLOCK only kept the open itself from waiting. Cleared for
		 * the writes: Linux ignores it on regular files, but a file
		 * system that honoured it would fail a full write with EAGAIN,
		 * which stdio takes for an error.
		 */
		if (flags >= 0)
			fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
		open_as_finish(oa, false, fd, NULL);
		return true;
	}
	if (fd >= 0)
		close(fd);
	if (a.outcome == OPEN_AS_OPENED)
		a.outcome = 0; /* "opened" without a descriptor */
	open_as_describe(oa, &a, msg, sizeof(msg));
	open_as_finish(oa, false, -1, msg);
	return true;
}

static void open_as_on_answer(struct loop_source *source, int fd, uint32_t events, void *data)
{
	open_as_take_answer(data);
}

static void open_as_on_timeout(struct loop_source *source, int fd, uint32_t events, void *data)
{
	struct open_as *oa = data;
	char msg[PATH_MAX + 128];
	uint64_t ticks;

	if (read(oa->timer, &ticks, sizeof(ticks)) < 0 && errno == EAGAIN)
		return;
	/* An answer that came with the timeout still counts. */
	if (open_as_take_answer(oa))
		return;
	snprintf(msg, sizeof(msg),
		 "%s: no answer within %u ms (a file system that does not answer?)", oa->path,
		 (unsigned)oa->timeout_ms);
	open_as_finish(oa, true, -1, msg);
}

/*
 * Whose rights the child takes for @who: the client's own when mediatord
 * is root; mediatord's when it is not and @who is root or mediatord's
 * user. Returns 0, or -EPERM with the reason in @err.
 */
static int open_as_identity(const struct peer_cred *who, const char *path,
			    struct open_as_identity *id, char *err, size_t err_size)
{
	uid_t self = geteuid();

	memset(id, 0, sizeof(*id));
	if (who->uid == (uid_t)-1) {
		snprintf(err, err_size, "%s: the client's credentials are unknown", path);
		return -EPERM;
	}
	if (self != 0) {
		if (who->uid == self || who->uid == 0)
			return 0;
		snprintf(err, err_size,
			 "%s: mediatord (uid %u) does not run as root and cannot open files as "
			 "uid %u",
			 path, (unsigned)self, (unsigned)who->uid);
		return -EPERM;
	}
	id->switch_user = true;
	id->uid = who->uid;
	id->gid = who->gid;
	/*
	 * The groups the client had when it connected, as the kernel says
	 * (SO_PEERGROUPS), not the group database's: a client that gave up
	 * groups (setpriv --clear-groups) gets no more than it kept. A client
	 * with more than PEER_CRED_MAX_GROUPS gets none: fewer rights, never more.
	 */
	id->n_groups = who->n_groups;
	memcpy(id->groups, who->groups, who->n_groups * sizeof(gid_t));
	return 0;
}

struct open_as *open_as_create(struct loop *loop, const struct peer_cred *who, const char *path,
			       mode_t mode, uint32_t timeout_ms, open_as_done_fn done, void *data,
			       char *err, size_t err_size)
{
	struct itimerspec when = {
	    .it_value = {.tv_sec = timeout_ms / 1000,
			 .tv_nsec = (long)(timeout_ms % 1000) * 1000000},
	};
	struct open_as_identity id;
	struct open_as *oa;
	int pair[2];

	if (path[0] != '/') {
		snprintf(err, err_size, "%s: not an absolute path", path);
		return NULL;
	}
	if (open_as_identity(who, path, &id, err, err_size) < 0)
		return NULL;
	oa = calloc(1, sizeof(*oa));
	if (!oa || !(oa->path = strdup(path))) {
		snprintf(err, err_size, "%s: out of memory", path);
		free(oa);
		return NULL;
	}
	oa->done = done;
	oa->data = data;
	oa->uid = who->uid;
	oa->timeout_ms = timeout_ms;
	oa->pidfd = oa->sock = -1;
	if (!timeout_ms)
		when.it_value.tv_nsec = 1;
	oa->timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (oa->timer < 0 || timerfd_settime(oa->timer, 0, &when, NULL) < 0) {
		snprintf(err, err_size, "%s: cannot make a timer: %s", path, strerror(errno));
		goto fail;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) {
		snprintf(err, err_size, "%s: socketpair: %s", path, strerror(errno));
		goto fail;
	}
	oa->pid = fork();
	if (oa->pid == 0)
		child_open(pair[1], &id, oa->path, mode);
	close(pair[1]);
	oa->sock = pair[0];
	if (oa->pid < 0) {
		snprintf(err, err_size, "%s: cannot start a process to open it: %s", path,
			 strerror(errno));
		goto fail;
	}
	/* Nothing can have reaped the child yet: this thread alone reaps. */
	oa->pidfd = pidfd_open(oa->pid, 0);
	if (oa->pidfd < 0) {
		snprintf(err, err_size, "%s: pidfd_open: %s", path, strerror(errno));
		kill(oa->pid, SIGKILL);
		goto fail;
	}
	oa->sock_source = loop_add(loop, oa->sock, EPOLLIN, open_as_on_answer, oa);
	oa->timer_source = loop_add(loop, oa->timer, EPOLLIN, open_as_on_timeout, oa);
	if (!oa->sock_source || !oa->timer_source) {
		snprintf(err, err_size, "%s: cannot watch the process opening it: %s", path,
			 strerror(errno));
		goto fail;
	}
	return oa;

fail:
	open_as_destroy(oa);
	return NULL;
}

void open_as_destroy(struct open_as *oa)
{
	if (!oa)
		return;
	loop_remove(oa->sock_source);
	loop_remove(oa->timer_source);
	open_as_end_child(oa, !oa->finished);
	if (oa->pidfd >= 0)
		close(oa->pidfd);
	if (oa->sock >= 0)
		close(oa->sock);
	if (oa->timer >= 0)
		close(oa->timer);
	free(oa->path);
	free(oa);
}
