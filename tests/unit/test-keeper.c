// SPDX-License-Identifier: MIT
/*
 * Tests of mediatord's keeper (keeper.h): a real keeper process, started
 * by keeper_open() on a socket in a private directory, holds a domain's
 * listening socket, the grant board and two workers' record channels
 * (socket pairs: the test holds mediatord's end and the worker's end),
 * and where a test says so the pidfds of child processes that play the
 * workers. keeper_close() is mediatord's death, a second keeper_open()
 * its restart.
 *
 * This process is a subreaper, so that the keeper (forked twice, no child
 * of mediatord's) is its child: a test sees it exit, and with which status.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/keeper.h"
#include "common/util.h"
#include "common/wire.h"

/* How long a test waits for the keeper to do something it must do. */
#define WAIT_MS 2000
/* How long a test watches for something the keeper must not do. */
#define QUIET_MS 200
/*
 * The keeper's wait for a successor: longer than any test takes, short
 * enough that the keeper of a failed test soon goes.
 */
#define TEST_WAIT_S 5

#define SAFETY_ID 7
#define OTHER_ID  8
#define OFFER_GEN 5

struct fixture {
	char dir[64];
	char path[108];	 /* the keeper's socket */
	char vtest[108]; /* domain 0's vtest socket, kept */
	int listener;
	int board;
	struct wire_board *b;
	int safety[2];	  /* a safety domain's worker: [0] mediatord's end, [1] the worker's */
	int other[2];	  /* a worker of another domain */
	pid_t keeper;	  /* the keeper process, once started */
	pid_t workers[2]; /* processes playing the two workers, once started (start_worker()) */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct sockaddr_un addr = {.sun_family = AF_UNIX};

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test-keeper-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/control%s", f->dir, KEEPER_SOCKET_SUFFIX);
	snprintf(f->vtest, sizeof(f->vtest), "%s/vtest", f->dir);
	f->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(f->listener >= 0);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", f->vtest);
	assert_int_equal(bind(f->listener, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(f->listener, 4), 0);
	f->board = memfd_create("board", MFD_CLOEXEC);
	assert_true(f->board >= 0);
	assert_int_equal(ftruncate(f->board, sizeof(struct wire_board)), 0);
	f->b = mmap(NULL, sizeof(*f->b), PROT_READ | PROT_WRITE, MAP_SHARED, f->board, 0);
	assert_true(f->b != MAP_FAILED);
	f->b->magic = WIRE_BOARD_MAGIC;
	f->b->domains = 1;
	atomic_store(&f->b->offer, WIRE_OFFER(OFFER_GEN, WIRE_OFFER_OFFERED, 0));
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, f->safety), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, f->other), 0);
	*state = f;
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	/* A keeper a failed test left behind. */
	if (f->keeper > 0 && waitpid(f->keeper, NULL, WNOHANG) == 0) {
		kill(f->keeper, SIGKILL);
		waitpid(f->keeper, NULL, 0);
	}
	for (int i = 0; i < 2; i++) {
		if (f->workers[i] > 0) {
			kill(f->workers[i], SIGKILL);
			waitpid(f->workers[i], NULL, 0);
		}
	}
	munmap(f->b, sizeof(*f->b));
	close_fd(&f->board);
	close_fd(&f->listener);
	for (int i = 0; i < 2; i++) {
		close_fd(&f->safety[i]);
		close_fd(&f->other[i]);
	}
	unlink(f->path);
	unlink(f->vtest);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* The only child of this process, which is the keeper (see the top). */
static pid_t only_child(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = -1;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[300], buf[512], *p;
		FILE *stat_file;
		size_t len;
		int ppid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		stat_file = fopen(path, "r");
		if (!stat_file)
			continue;
		len = fread(buf, 1, sizeof(buf) - 1, stat_file);
		fclose(stat_file);
		buf[len] = '\0';
		/* "pid (comm) state ppid ...": comm may hold anything, even ')'. */
		p = strrchr(buf, ')');
		if (p && sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == getpid()) {
			found = atoi(de->d_name);
			n++;
		}
	}
	closedir(d);
	assert_int_equal(n, 1);
	return found;
}

/* The keeper's exit status, or -1 if it has not exited within @ms. */
static int keeper_exit_status(struct fixture *f, int ms)
{
	uint64_t deadline = mono_now_ns() + (uint64_t)ms * 1000000u;
	int status;

	do {
		pid_t r = waitpid(f->keeper, &status, WNOHANG);

		assert_true(r >= 0);
		if (r == f->keeper) {
			f->keeper = -1;
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
		usleep(10000);
	} while (mono_now_ns() < deadline);
	return -1;
}

static bool socket_file_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* What poll() reports for @fd within @ms (POLLIN asked), 0 if nothing. */
static short events_within(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	assert_true(poll(&p, 1, ms) >= 0);
	return p.revents;
}

/* @fd's peer is gone: a hang-up within @ms, and an end of file. */
static void expect_hang_up(int fd, int ms)
{
	char c;

	assert_true(events_within(fd, ms) & POLLHUP);
	assert_int_equal(recv(fd, &c, sizeof(c), MSG_DONTWAIT), 0);
}

/* Nothing to read on @fd now. */
static void expect_nothing(int fd)
{
	char buf[256];

	assert_int_equal(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
}

/* The worker's end @fd gets one WIRE_ORPHANED saying @serve_freely, and nothing else. */
static void expect_orphaned(int fd, uint32_t serve_freely)
{
	struct wire_orphaned m;
	char buf[256];
	ssize_t n;

	assert_true(events_within(fd, WAIT_MS) & POLLIN);
	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	assert_int_equal(n, sizeof(m));
	memcpy(&m, buf, sizeof(m));
	assert_int_equal(m.hdr.type, WIRE_ORPHANED);
	assert_int_equal(m.hdr.size, sizeof(m));
	assert_int_equal(m.serve_freely, serve_freely);
	assert_int_equal(m.reserved, 0);
	assert_int_equal(events_within(fd, QUIET_MS), 0);
}

/* What the worker sends mediatord: a WIRE_DONE for grant @id. */
static void worker_sends(int fd, uint64_t id)
{
	struct wire_done d = {.hdr = {WIRE_DONE, sizeof(d)}, .id = id};

	assert_int_equal(send(fd, &d, sizeof(d), MSG_DONTWAIT), sizeof(d));
}

/*
 * Starts a child process that plays a worker (it waits to be killed) into
 * *@pid; returns a pidfd of it (the caller closes it).
 */
static int start_worker(pid_t *pid)
{
	int pidfd;

	*pid = fork();
	assert_true(*pid >= 0);
	if (*pid == 0) {
		/* Nothing of the test's: no copy of mediatord's end of the keeper's socket. */
		close_range(3, ~0u, 0);
		for (;;)
			pause();
	}
	pidfd = pidfd_open(*pid, 0);
	assert_true(pidfd >= 0);
	return pidfd;
}

/* The worker *@pid ends (SIGKILL), and is reaped: its pid is free again. */
static void worker_ends(pid_t *pid)
{
	assert_int_equal(kill(*pid, SIGKILL), 0);
	assert_int_equal(waitpid(*pid, NULL, 0), *pid);
	*pid = -1;
}

/* The process @pidfd refers to, from /proc/self/fdinfo; -1 if none. */
static pid_t pidfd_pid(int pidfd)
{
	char path[64], line[128];
	pid_t pid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Pid: %d", &pid) == 1)
			break;
	}
	fclose(f);
	return pid;
}

/* Client @client's entry of @kind (KEEP_CLIENT, KEEP_WORKER) when its worker is process @pid. */
static struct keep_entry entry_of(const struct keep_entry *client, uint32_t kind, pid_t pid)
{
	struct keep_entry e = *client;

	e.kind = kind;
	e.pid = pid;
	return e;
}

static struct keep_entry listener_entry(const struct fixture *f)
{
	struct keep_entry e = {.kind = KEEP_LISTENER_VTEST, .domain = 0, .domain_name = "cars"};

	snprintf(e.path, sizeof(e.path), "%s", f->vtest);
	return e;
}

static const struct keep_entry board_entry = {.kind = KEEP_BOARD};
static const struct keep_entry safety_entry = {.kind = KEEP_CLIENT,
					       .domain = 0,
					       .client_id = SAFETY_ID,
					       .pid = 1001,
					       .flags = KEEP_CLIENT_SAFETY,
					       .domain_name = "cars"};
static const struct keep_entry other_entry = {.kind = KEEP_CLIENT,
					      .domain = 1,
					      .client_id = OTHER_ID,
					      .pid = 1002,
					      .flags = KEEP_CLIENT_VM,
					      .domain_name = "infotainment"};
static const struct keep_budget old_budget = {
    .domain = 1, .period_us = 1000, .budget_us = 100, .deadline_us = 500, .domain_name = "x"};
static const struct keep_budget budget = {.domain = 1,
					  .period_us = 16667,
					  .budget_us = 4000,
					  .deadline_us = 8000,
					  .domain_name = "infotainment"};

/* A fresh keeper at f->path, waiting up to @wait_s for a successor. */
static struct keeper *start_keeper(struct fixture *f, uint32_t wait_s)
{
	char err[256] = "";
	bool adopted = true;
	struct keeper *k = keeper_open(f->path, wait_s, &adopted, err, sizeof(err));

	assert_non_null(k);
	assert_false(adopted);
	assert_true(socket_file_exists(f->path));
	f->keeper = only_child();
	return k;
}

/* Gives @k what mediatord keeps, as it does: its sockets and board, then its clients. */
static void keep_everything(struct fixture *f, struct keeper *k)
{
	struct keep_entry listener = listener_entry(f);

	assert_int_equal(keeper_keep(k, &listener, f->listener), 0);
	assert_int_equal(keeper_keep(k, &board_entry, f->board), 0);
	assert_int_equal(keeper_keep(k, &safety_entry, f->safety[0]), 0);
	assert_int_equal(keeper_keep(k, &other_entry, f->other[0]), 0);
	keeper_keep_budget(k, &old_budget);
	keeper_keep_budget(k, &budget);
}

/*
 * mediatord dies; returns once the keeper has told both workers (checked:
 * one WIRE_ORPHANED each), so that it has noticed the death before a
 * successor connects.
 */
static void mediatord_dies(struct keeper *k, struct fixture *f)
{
	keeper_close(k);
	expect_orphaned(f->safety[1], 1);
	expect_orphaned(f->other[1], 0);
}

/*
 * A restarted mediatord: it adopts, and takes what was kept, up to @max
 * entries, into @e and their descriptors into @fd; *@n: how many.
 */
static struct keeper *mediatord_restarts(struct fixture *f, struct keep_entry *e, int *fd,
					 size_t max, size_t *n)
{
	char err[256] = "";
	bool adopted = false;
	struct keeper *k = keeper_open(f->path, TEST_WAIT_S, &adopted, err, sizeof(err));

	assert_non_null(k);
	assert_true(adopted);
	for (*n = 0; *n < max && (fd[*n] = keeper_take(k, &e[*n])) >= 0; (*n)++)
		;
	return k;
}

/* The restarted mediatord stops cleanly: the keeper exits with 0. */
static void mediatord_quits(struct keeper *k, struct fixture *f, int *fd, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close(fd[i]);
	keeper_quit(k);
	assert_int_equal(keeper_exit_status(f, WAIT_MS), 0);
}

/* Index of the entry of @kind (and @client_id for a client or worker) in @e, asserted there. */
static size_t find(const struct keep_entry *e, size_t n, uint32_t kind, uint32_t client_id)
{
	for (size_t i = 0; i < n; i++) {
		if (e[i].kind == kind &&
		    ((kind != KEEP_CLIENT && kind != KEEP_WORKER) || e[i].client_id == client_id))
			return i;
	}
	fail_msg("no entry of kind %u (client %u) was handed over", kind, client_id);
	return 0;
}

static void assert_same_entry(const struct keep_entry *got, const struct keep_entry *want)
{
	assert_int_equal(got->kind, want->kind);
	assert_int_equal(got->domain, want->domain);
	assert_int_equal(got->client_id, want->client_id);
	assert_int_equal(got->pid, want->pid);
	assert_int_equal(got->flags, want->flags);
	assert_string_equal(got->domain_name, want->domain_name);
	assert_string_equal(got->path, want->path);
}

/* Shows: a fresh keeper listens on its socket and has nothing to hand over. */
static void a_fresh_keeper_listens_and_hands_nothing_over(void **state)
{
	struct fixture *f = *state;
	struct keeper *k = start_keeper(f, TEST_WAIT_S);
	struct keep_entry e;
	struct keep_budget b;

	assert_int_equal(keeper_take(k, &e), -1);
	assert_false(keeper_take_budget(k, &b));
	keeper_quit(k);
	assert_int_equal(keeper_exit_status(f, WAIT_MS), 0);
}

/*
 * Shows: when mediatord dies, each worker gets one WIRE_ORPHANED, saying
 * serve freely to a safety domain's worker only.
 */
static void a_dead_mediatords_workers_are_told_whether_to_serve_freely(void **state)
{
	struct fixture *f = *state;
	struct keeper *k = start_keeper(f, TEST_WAIT_S);
	struct keep_entry e[8];
	int fd[8];
	size_t n;

	keep_everything(f, k);
	mediatord_dies(k, f); /* checks the two WIRE_ORPHANED */
	k = mediatord_restarts(f, e, fd, 8, &n);
	mediatord_quits(k, f, fd, n);
}

/*
 * Shows: what a worker sent to mediatord before its death, and what it
 * sends while there is none, is read and dropped by the keeper: a
 * restarted mediatord reads nothing old.
 */
static void what_workers_send_a_dead_mediatord_is_dropped(void **state)
{
	struct fixture *f = *state;
	struct keeper *k = start_keeper(f, TEST_WAIT_S);
	struct keep_entry e[8];
	int fd[8];
	size_t n;
	uint64_t deadline;
	char c;

	keep_everything(f, k);
	worker_sends(f->safety[1], 1);
	worker_sends(f->other[1], 2);
	mediatord_dies(k, f);
	/* Drained before the WIRE_ORPHANED went out (mediatord's end is shared with the keeper). */
	expect_nothing(f->safety[0]);
	expect_nothing(f->other[0]);
	/* Sent while orphaned: drained as it comes. */
	worker_sends(f->other[1], 3);
	deadline = mono_now_ns() + WAIT_MS * 1000000ull;
	while (recv(f->other[0], &c, sizeof(c), MSG_DONTWAIT | MSG_PEEK) > 0 &&
	       mono_now_ns() < deadline)
		usleep(10000);
	expect_nothing(f->other[0]);
	k = mediatord_restarts(f, e, fd, 8, &n);
	expect_nothing(fd[find(e, n, KEEP_CLIENT, SAFETY_ID)]);
	expect_nothing(fd[find(e, n, KEEP_CLIENT, OTHER_ID)]);
	mediatord_quits(k, f, fd, n);
}

/* Shows: the board's standing offer is withdrawn when mediatord dies (nobody claims it). */
static void a_dead_mediatords_offer_is_withdrawn(void **state)
{
	struct fixture *f = *state;
	struct keeper *k = start_keeper(f, TEST_WAIT_S);
	struct keep_entry e[8];
	int fd[8];
	size_t n;
	uint64_t offer;

	keep_everything(f, k);
	mediatord_dies(k, f); /* kept before the clients, the board is withdrawn first */
	offer = atomic_load(&f->b->offer);
	assert_int_equal(WIRE_OFFER_STATE(offer), WIRE_OFFER_NONE);
	assert_int_equal(WIRE_OFFER_GEN(offer), OFFER_GEN);
	k = mediatord_restarts(f, e, fd, 8, &n);
	mediatord_quits(k, f, fd, n);
}

/*
 * Shows: a restarted mediatord takes every kept entry back, once, with
 * its fields and a descriptor of the same socket or board.
 */
static void a_restarted_mediatord_takes_back_every_descriptor(void **state)
{
	struct fixture *f = *state;
	struct keeper *k = start_keeper(f, TEST_WAIT_S);
	struct keep_entry e[8], listener = listener_entry(f), last;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct wire_done d = {.hdr = {WIRE_DONE, sizeof(d)}, .id = 9};
	struct wire_done got;
	struct stat ours, theirs;
	int fd[8], conn, accepted;
	size_t n, i;

	keep_everything(f, k);
	mediatord_dies(k, f);
	k = mediatord_restarts(f, e, fd, 8, &n);
	assert_int_equal(n, 4);
	assert_int_equal(keeper_take(k, &last), -1);

	i = find(e, n, KEEP_CLIENT, SAFETY_ID);
	assert_same_entry(&e[i], &safety_entry);
	/* mediatord's end of the channel: what it sends reaches the worker. */
	assert_int_equal(send(fd[i], &d, sizeof(d), 0), sizeof(d));
	assert_int_equal(recv(f->safety[1], &got, sizeof(got), MSG_DONTWAIT), sizeof(got));
	assert_int_equal(got.id, 9);

	i = find(e, n, KEEP_CLIENT, OTHER_ID);
	assert_same_entry(&e[i], &other_entry);
	assert_int_equal(send(fd[i], &d, sizeof(d), 0), sizeof(d));
	assert_int_equal(recv(f->other[1], &got, sizeof(got), MSG_DONTWAIT), sizeof(got));

	i = find(e, n, KEEP_LISTENER_VTEST, 0);
	assert_same_entry(&e[i], &listener);
	/* The listening socket: a client connecting to its path is accepted on it. */
	conn = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", f->vtest);
	assert_int_equal(connect(conn, (struct sockaddr *)&addr, sizeof(addr)), 0);
	accepted = accept4(fd[i], NULL, NULL, SOCK_CLOEXEC);
	assert_true(accepted >= 0);
	close(accepted);
	close(conn);

	i = find(e, n, KEEP_BOARD, 0);
	assert_same_entry(&e[i], &board_entry);
	assert_int_equal(fstat(f->board, &ours), 0);
	assert_int_equal(fstat(fd[i], &theirs), 0);
	assert_int_equal(ours.st_ino, theirs.st_ino);
	assert_int_equal(ours.st_dev, theirs.st_dev);

	mediatord_quits(k, f, fd, n);
}

/* Shows: a restarted mediatord gets the last budget kept for each domain, once. */
static void a_restarted_mediatord_takes_back_the_last_budget(void **state)
{
	struct fixture *f = *state;
	struct keeper *k = start_keeper(f, TEST_WAIT_S);
	struct keep_entry e[8];
	struct keep_budget b;
	int fd[8];
	size_t n;

	keep_everything(f, k); /* old_budget, then budget, both of domain 1 */
	mediatord_dies(k, f);
	k = mediatord_restarts(f, e, fd, 8, &n);
	assert_true(keeper_take_budget(k, &b));
	assert_int_equal(b.domain, budget.domain);
	assert_int_equal(b.period_us, budget.period_us);
	assert_int_equal(b.budget_us, budget.budget_us);
	assert_int_equal(b.deadline_us, budget.deadline_us);
	assert_string_equal(b.domain_name, budget.domain_name);
	assert_false(keeper_take_budget(k, &b));
	mediatord_quits(k, f, fd, n);
}

/*
 * Shows: the keeper holds a client's channel open until told that this
 * client is gone, then closes it, and only it.
 */
static void a_forgotten_clients_channel_is_closed_by_the_keeper(void **state)
{
	struct fixture *f = *state;
	struct keeper *k = start_keeper(f, TEST_WAIT_S);

	assert_int_equal(keeper_keep(k, &safety_entry, f->safety[0]), 0);
	assert_int_equal(keeper_keep(k, &other_entry, f->other[0]), 0);
	close_fd(&f->safety[0]);
	close_fd(&f->other[0]);
	/* The keeper's copies keep the channels open; a client it never had is no other one. */
	keeper_forget_client(k, 99);
	assert_int_equal(events_within(f->safety[1], QUIET_MS), 0);
	assert_int_equal(events_within(f->other[1], 0), 0);
	keeper_forget_client(k, OTHER_ID);
	expect_hang_up(f->other[1], WAIT_MS);
	assert_int_equal(events_within(f->safety[1], QUIET_MS), 0);
	keeper_quit(k);
	assert_int_equal(keeper_exit_status(f, WAIT_MS), 0);
}

/*
 * Shows: keeper_quit() ends the keeper: it exits with 0, its socket goes,
 * and every channel it held closes.
 */
static void quitting_ends_the_keeper_and_closes_every_channel(void **state)
{
	struct fixture *f = *state;
	struct keeper *k = start_keeper(f, TEST_WAIT_S);

	keep_everything(f, k);
	close_fd(&f->safety[0]);
	close_fd(&f->other[0]);
	keeper_quit(k);
	assert_int_equal(keeper_exit_status(f, WAIT_MS), 0);
	assert_false(socket_file_exists(f->path));
	expect_hang_up(f->safety[1], WAIT_MS);
	expect_hang_up(f->other[1], WAIT_MS);
}

/*
 * Shows: a keeper no mediatord comes back to within its wait gives up
 * (not before): it exits with 1, its socket goes and the workers'
 * channels close.
 */
static void a_keeper_nobody_comes_back_to_gives_up_after_its_wait(void **state)
{
	struct fixture *f = *state;
	struct keeper *k = start_keeper(f, 1 /* s */);
	uint64_t died_ns;

	assert_int_equal(keeper_keep(k, &other_entry, f->other[0]), 0);
	close_fd(&f->other[0]);
	died_ns = mono_now_ns();
	keeper_close(k);
	expect_orphaned(f->other[1], 0);
	expect_hang_up(f->other[1], 1500);
	assert_true(mono_now_ns() - died_ns >= 900 * 1000000ull);
	assert_int_equal(keeper_exit_status(f, WAIT_MS), 1);
	assert_false(socket_file_exists(f->path));
}

/*
 * Shows: while a mediatord is attached to the keeper, a second one gets
 * nothing (keeper_open() fails and starts no keeper of its own), and the
 * first keeps its keeper.
 */
static void a_second_mediatord_is_refused_while_one_is_attached(void **state)
{
	struct fixture *f = *state;
	struct keeper *k = start_keeper(f, TEST_WAIT_S), *second;
	struct keep_entry e[8];
	char err[256] = "";
	bool adopted = false;
	int fd[8];
	size_t n;

	keep_everything(f, k);
	second = keeper_open(f->path, TEST_WAIT_S, &adopted, err, sizeof(err));
	assert_null(second);
	assert_false(adopted);
	assert_non_null(strstr(err, "keeper"));
	assert_true(socket_file_exists(f->path));
	assert_int_equal(only_child(), f->keeper);
	/* The keeper is the first mediatord's still: it looks after its workers when it dies. */
	assert_int_equal(events_within(f->safety[1], QUIET_MS), 0);
	mediatord_dies(k, f);
	k = mediatord_restarts(f, e, fd, 8, &n);
	assert_int_equal(n, 4);
	mediatord_quits(k, f, fd, n);
}

/* Shows: a restarted mediatord that dies too leaves the workers with the keeper again. */
static void a_restarted_mediatord_that_dies_too_is_waited_for_again(void **state)
{
	struct fixture *f = *state;
	struct keeper *k = start_keeper(f, TEST_WAIT_S);
	struct keep_entry e[8];
	int fd[8];
	size_t n;

	keep_everything(f, k);
	mediatord_dies(k, f);
	k = mediatord_restarts(f, e, fd, 8, &n);
	for (size_t i = 0; i < n; i++)
		close(fd[i]);
	mediatord_dies(k, f);
	k = mediatord_restarts(f, e, fd, 8, &n);
	assert_int_equal(n, 4);
	mediatord_quits(k, f, fd, n);
}

/*
 * Shows: a worker's pidfd, kept after its client's channel, is handed to a
 * restarted mediatord right after that channel, and is a pidfd of that
 * worker; a pidfd for a client the keeper does not hold is dropped.
 */
static void a_restarted_mediatord_takes_back_each_workers_pidfd(void **state)
{
	struct fixture *f = *state;
	struct keeper *k = start_keeper(f, TEST_WAIT_S);
	int pidfd = start_worker(&f->workers[0]), stray = start_worker(&f->workers[1]);
	struct keep_entry e[8], client = entry_of(&safety_entry, KEEP_CLIENT, f->workers[0]);
	struct keep_entry worker = entry_of(&safety_entry, KEEP_WORKER, f->workers[0]);
	struct keep_entry nobodys = entry_of(&other_entry, KEEP_WORKER, f->workers[1]);
	size_t n, c, w;
	int fd[8];

	assert_int_equal(keeper_keep(k, &nobodys, stray), 0); /* before its client: dropped */
	assert_int_equal(keeper_keep(k, &client, f->safety[0]), 0);
	assert_int_equal(keeper_keep(k, &worker, pidfd), 0);
	close(pidfd);
	close(stray);
	keeper_close(k);
	expect_orphaned(f->safety[1], 1);
	k = mediatord_restarts(f, e, fd, 8, &n);
	assert_int_equal(n, 2);
	c = find(e, n, KEEP_CLIENT, SAFETY_ID);
	w = find(e, n, KEEP_WORKER, SAFETY_ID);
	assert_int_equal(w, c + 1);
	assert_same_entry(&e[c], &client);
	assert_same_entry(&e[w], &worker);
	/* The worker's own pidfd: it says when that process ends. */
	assert_int_equal(pidfd_pid(fd[w]), f->workers[0]);
	assert_int_equal(pidfd_send_signal(fd[w], 0, NULL, 0), 0);
	assert_int_equal(events_within(fd[w], 0), 0);
	worker_ends(&f->workers[0]);
	assert_true(events_within(fd[w], WAIT_MS) & POLLIN);
	mediatord_quits(k, f, fd, n);
}

/*
 * Shows: while mediatord is away, a worker that ends is forgotten (the
 * keeper closes its channel and hands it to nobody) although its channel
 * is still open elsewhere (here: this test holds the worker's end, as a
 * client the worker passed it to would); a worker that lives is kept.
 */
static void a_worker_that_ended_is_forgotten_though_its_channel_is_open(void **state)
{
	struct fixture *f = *state;
	struct keeper *k = start_keeper(f, TEST_WAIT_S);
	int safety_pidfd = start_worker(&f->workers[0]), other_pidfd = start_worker(&f->workers[1]);
	struct keep_entry safety = entry_of(&safety_entry, KEEP_CLIENT, f->workers[0]);
	struct keep_entry safety_worker = entry_of(&safety_entry, KEEP_WORKER, f->workers[0]);
	struct keep_entry other = entry_of(&other_entry, KEEP_CLIENT, f->workers[1]);
	struct keep_entry other_worker = entry_of(&other_entry, KEEP_WORKER, f->workers[1]);
	struct keep_entry e[8];
	size_t n;
	int fd[8];

	assert_int_equal(keeper_keep(k, &safety, f->safety[0]), 0);
	assert_int_equal(keeper_keep(k, &safety_worker, safety_pidfd), 0);
	assert_int_equal(keeper_keep(k, &other, f->other[0]), 0);
	assert_int_equal(keeper_keep(k, &other_worker, other_pidfd), 0);
	close(safety_pidfd);
	close(other_pidfd);
	close_fd(&f->safety[0]);
	close_fd(&f->other[0]);
	mediatord_dies(k, f);
	worker_ends(&f->workers[0]);
	expect_hang_up(f->safety[1], WAIT_MS);
	assert_int_equal(events_within(f->other[1], QUIET_MS), 0);
	k = mediatord_restarts(f, e, fd, 8, &n);
	assert_int_equal(n, 2);
	find(e, n, KEEP_CLIENT, OTHER_ID);
	find(e, n, KEEP_WORKER, OTHER_ID);
	mediatord_quits(k, f, fd, n);
}

/*
 * Shows: a mediatord restarted the instant its predecessor died, before
 * the keeper read the predecessor's last messages and its end, is taken
 * over, not refused as a second mediatord.
 */
static void a_successor_at_once_after_a_death_is_taken_over(void **state)
{
	struct fixture *f = *state;
	struct keeper *k = start_keeper(f, TEST_WAIT_S);
	struct keep_entry e[8];
	int fd[8];
	size_t n;

	keep_everything(f, k);
	keeper_close(k);
	k = mediatord_restarts(f, e, fd, 8, &n);
	assert_int_equal(n, 4);
	mediatord_quits(k, f, fd, n);
}

/*
 * Shows: once keeper_quit() returned, the path is free: a mediatord
 * started at once (another configuration) starts a keeper of its own there.
 */
static void after_a_quit_a_new_keeper_starts_at_once(void **state)
{
	struct fixture *f = *state;
	struct keeper *k = start_keeper(f, TEST_WAIT_S);
	char err[256] = "";
	bool adopted = true;

	keep_everything(f, k);
	keeper_quit(k);
	assert_int_equal(keeper_exit_status(f, WAIT_MS), 0);
	k = keeper_open(f->path, TEST_WAIT_S, &adopted, err, sizeof(err));
	assert_non_null(k);
	assert_false(adopted);
	f->keeper = only_child();
	keeper_quit(k);
	assert_int_equal(keeper_exit_status(f, WAIT_MS), 0);
}

/* Shows: keeper_quit() and keeper_close() accept NULL (mediatord without a keeper). */
static void quitting_or_closing_null_is_fine(void **state)
{
	keeper_quit(NULL);
	keeper_close(NULL);
}

#define keeper_test(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    keeper_test(a_fresh_keeper_listens_and_hands_nothing_over),
	    keeper_test(a_dead_mediatords_workers_are_told_whether_to_serve_freely),
	    keeper_test(what_workers_send_a_dead_mediatord_is_dropped),
	    keeper_test(a_dead_mediatords_offer_is_withdrawn),
	    keeper_test(a_restarted_mediatord_takes_back_every_descriptor),
	    keeper_test(a_restarted_mediatord_takes_back_the_last_budget),
	    keeper_test(a_forgotten_clients_channel_is_closed_by_the_keeper),
	    keeper_test(quitting_ends_the_keeper_and_closes_every_channel),
	    keeper_test(a_keeper_nobody_comes_back_to_gives_up_after_its_wait),
	    keeper_test(a_second_mediatord_is_refused_while_one_is_attached),
	    keeper_test(a_restarted_mediatord_that_dies_too_is_waited_for_again),
	    keeper_test(a_restarted_mediatord_takes_back_each_workers_pidfd),
	    keeper_test(a_worker_that_ended_is_forgotten_though_its_channel_is_open),
	    keeper_test(a_successor_at_once_after_a_death_is_taken_over),
	    keeper_test(after_a_quit_a_new_keeper_starts_at_once),
	    cmocka_unit_test(quitting_or_closing_null_is_fine),
	};

	/* The keeper becomes this process's child (see the top). */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		perror("PR_SET_CHILD_SUBREAPER");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
