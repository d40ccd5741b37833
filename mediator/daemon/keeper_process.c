// SPDX-License-Identifier: MIT
/*
 * The keeper process (see keeper.h): holds what a restarted mediatord
 * needs, and looks after the workers while there is no mediatord. A kept
 * client holds its record channel and, when mediatord gave it
 * (KEEP_WORKER), its worker's pidfd: what tells the keeper that the worker
 * ended, whoever else holds the channel.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fd_pass.h"
#include "daemon/keeper_msg.h"
#include "daemon/keeper_process.h"
#include "daemon/lifeline.h"
#include "common/util.h"
#include "common/wire.h"

/* Descriptor numbers the keeper moves its two sockets to. */
#define KEEPER_LISTEN_FD 3
#define KEEPER_CONN_FD	 4

struct kept {
	struct keep_entry e;
	int fd;
	int pidfd; /* a KEEP_CLIENT's worker (KEEP_WORKER); -1: none given */
};

struct keeper_state {
	int listen_fd;
	int conn_fd; /* the live mediatord's connection; -1 while there is none */
	const char *path;
	dev_t dev;
	ino_t ino;
	uint32_t wait_s;
	uint64_t orphaned_ns; /* when the last mediatord died */
	struct kept *kept;
	size_t n_kept;
	struct keep_budget budgets[CONFIG_MAX_DOMAINS];
	bool have_budget[CONFIG_MAX_DOMAINS];
};

static size_t count_clients(const struct keeper_state *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_kept; i++)
		n += s->kept[i].e.kind == KEEP_CLIENT;
	return n;
}

static void remove_kept(struct keeper_state *s, size_t i)
{
	close(s->kept[i].fd);
	if (s->kept[i].pidfd >= 0)
		close(s->kept[i].pidfd);
	s->kept[i] = s->kept[--s->n_kept];
}

/* The kept client @client_id, or NULL. */
static struct kept *find_client(struct keeper_state *s, uint32_t client_id)
{
	for (size_t i = 0; i < s->n_kept; i++) {
		if (s->kept[i].e.kind == KEEP_CLIENT && s->kept[i].e.client_id == client_id)
			return &s->kept[i];
	}
	return NULL;
}

/* Takes @pidfd as the worker of the client @e names; closes it when there is none, or one. */
static void keep_worker(struct keeper_state *s, const struct keep_entry *e, int pidfd)
{
	struct kept *c = find_client(s, e->client_id);

	if (!c || c->pidfd >= 0) {
		log_warn("worker %d of domain %s: %s; its pidfd is not kept", (int)e->pid,
			 e->domain_name, c ? "a pidfd is kept already" : "no client of it is kept");
		close(pidfd);
		return;
	}
	c->pidfd = pidfd;
}

/* Closes everything and unlinks the socket if it is still ours. */
static void let_go(struct keeper_state *s)
{
	struct stat st;

	while (s->n_kept)
		remove_kept(s, s->n_kept - 1);
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		s->listen_fd = -1;
		if (lstat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
			unlink(s->path);
	}
}

static _Noreturn void finish(struct keeper_state *s, int status)
{
	let_go(s);
	_exit(status);
}

static void on_message(struct keeper_state *s, const struct keep_msg *m, int fd)
{
	switch (m->op) {
	case KEEP_OP_ADD: {
		struct kept *k;

		if (fd < 0)
			return;
		if (m->entry.kind == KEEP_WORKER) {
			keep_worker(s, &m->entry, fd);
			return;
		}
		/* A new lifeline replaces the one kept. */
		for (size_t i = s->n_kept; m->entry.kind == KEEP_LIFELINE && i-- > 0;)
			if (s->kept[i].e.kind == KEEP_LIFELINE)
				remove_kept(s, i);
		k = realloc(s->kept, (s->n_kept + 1) * sizeof(*k));
		if (!k) {
			log_error("out of memory: %s's descriptor not kept",
				  m->entry.kind == KEEP_CLIENT ? "a client" : "a socket");
			close(fd);
			return;
		}
		s->kept = k;
		k[s->n_kept++] = (struct kept){.e = m->entry, .fd = fd, .pidfd = -1};
		return;
	}
	case KEEP_OP_FORGET:
		for (size_t i = 0; i < s->n_kept; i++) {
			if (s->kept[i].e.kind == KEEP_CLIENT &&
			    s->kept[i].e.client_id == m->client_id) {
				remove_kept(s, i);
				break;
			}
		}
		break;
	case KEEP_OP_BUDGET:
		if (m->budget.domain < CONFIG_MAX_DOMAINS) {
			s->budgets[m->budget.domain] = m->budget;
			s->have_budget[m->budget.domain] = true;
		}
		break;
	case KEEP_OP_QUIT: {
		struct keep_msg end = {.op = KEEP_OP_END};

		/* Everything let go before the answer: a successor may bind the path at once. */
		let_go(s);
		fd_pass_send(s->conn_fd, &end, sizeof(end), -1, 0);
		_exit(0);
	}
	default:
		break;
	}
	if (fd >= 0)
		close(fd);
}

/* Reads and drops what a worker sent to a mediatord that is gone. False: the worker is gone. */
static bool drain(int fd)
{
	char buf[WIRE_MAX_BATCH * sizeof(struct wire_group)];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);

		if (n > 0)
			continue;
		return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
	}
}

/* Withdraws an offer standing on the grant board: nobody will be charged for it. */
static void withdraw_offer(int board_fd)
{
	struct wire_board *b =
	    mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED, board_fd, 0);
	uint64_t word;

	if (b == MAP_FAILED)
		return;
	word = atomic_load(&b->offer);
	if (b->magic == WIRE_BOARD_MAGIC && WIRE_OFFER_STATE(word) == WIRE_OFFER_OFFERED)
		atomic_compare_exchange_strong(
		    &b->offer, &word, WIRE_OFFER(WIRE_OFFER_GEN(word), WIRE_OFFER_NONE, 0));
	munmap(b, sizeof(*b));
}

/*
 * True when a lifeline is kept (lifeline.h) and the service manager let go
 * of its other end: the unit was stopped, so no mediatord comes back.
 */
static bool unit_stopped(const struct keeper_state *s)
{
	for (size_t i = 0; i < s->n_kept; i++)
		if (s->kept[i].e.kind == KEEP_LIFELINE && !lifeline_held(s->kept[i].fd))
			return true;
	return false;
}

/* No mediatord will come back: the workers end now. */
static _Noreturn void stop_workers(struct keeper_state *s)
{
	log_info("the service manager stopped mediatord's unit (it let go of the lifeline): "
		 "stopping its %zu workers",
		 count_clients(s));
	finish(s, 0);
}

/* mediatord died: the workers are told (wire.h) and looked after. */
static void on_death(struct keeper_state *s)
{
	size_t safety = 0;

	close(s->conn_fd);
	s->conn_fd = -1;
	if (unit_stopped(s))
		stop_workers(s);
	s->orphaned_ns = mono_now_ns();
	for (size_t i = 0; i < s->n_kept; i++) {
		struct kept *k = &s->kept[i];
		struct wire_orphaned m = {.hdr = {WIRE_ORPHANED, sizeof(m)}};

		if (k->e.kind == KEEP_BOARD)
			withdraw_offer(k->fd);
		if (k->e.kind != KEEP_CLIENT)
			continue;
		drain(k->fd);
		m.serve_freely = (k->e.flags & KEEP_CLIENT_SAFETY) != 0;
		safety += m.serve_freely;
		if (send(k->fd, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof(m))
			log_warn("worker %d of domain %s: cannot tell it mediatord died: %s",
				 (int)k->e.pid, k->e.domain_name, strerror(errno));
	}
	log_warn("mediatord died: keeping %zu workers (%zu of safety domains served without "
		 "grants, the others waiting) for up to %u s",
		 count_clients(s), safety, s->wait_s);
}

/*
 * Takes every message mediatord sent, until none is left; notices its
 * death (on_death()). Returns false when it died.
 */
static bool take_messages(struct keeper_state *s)
{
	for (;;) {
		struct keep_msg m;
		int fd;
		ssize_t got = fd_pass_recv(s->conn_fd, &m, sizeof(m), MSG_DONTWAIT, &fd);

		if (got == sizeof(m)) {
			on_message(s, &m, fd);
			continue;
		}
		if (fd >= 0)
			close(fd);
		if (got > 0 || (got < 0 && errno == EMSGSIZE))
			continue; /* not one of ours: dropped */
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return true;
		on_death(s);
		return false;
	}
}

/* A successor connected: it gets everything kept, and is the live mediatord. */
static void on_successor(struct keeper_state *s)
{
	int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	struct keep_msg end = {.op = KEEP_OP_END};
	struct ucred cred;
	socklen_t len = sizeof(cred);
	bool ok = true;

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != geteuid() && cred.uid != 0)) {
		log_warn("refused a connection of uid %d: not mediatord's user", (int)cred.uid);
		close(fd);
		return;
	}
	/* A mediatord that died just now has left its last messages and its end. */
	if (s->conn_fd >= 0 && take_messages(s)) {
		log_warn("refused process %d: a mediatord is running", (int)cred.pid);
		close(fd);
		return;
	}
	for (size_t i = 0; i < s->n_kept; i++) {
		struct keep_msg m = {.op = KEEP_OP_ADD, .entry = s->kept[i].e};

		if (s->kept[i].e.kind == KEEP_CLIENT)
			drain(s->kept[i].fd);
		ok = ok && fd_pass_send(fd, &m, sizeof(m), s->kept[i].fd, 0) == sizeof(m);
		if (s->kept[i].pidfd < 0)
			continue;
		m.entry.kind = KEEP_WORKER;
		ok = ok && fd_pass_send(fd, &m, sizeof(m), s->kept[i].pidfd, 0) == sizeof(m);
	}
	for (size_t i = 0; i < CONFIG_MAX_DOMAINS; i++) {
		struct keep_msg m = {.op = KEEP_OP_BUDGET, .budget = s->budgets[i]};

		if (s->have_budget[i])
			ok = ok && fd_pass_send(fd, &m, sizeof(m), -1, 0) == sizeof(m);
	}
	ok = ok && fd_pass_send(fd, &end, sizeof(end), -1, 0) == sizeof(end);
	if (!ok) {
		log_error("cannot hand over to mediatord %d: %s", (int)cred.pid, strerror(errno));
		close(fd);
		return;
	}
	s->conn_fd = fd;
	log_info("mediatord %d took over %zu workers after %llu ms", (int)cred.pid,
		 count_clients(s),
		 (unsigned long long)((mono_now_ns() - s->orphaned_ns) / 1000000u));
}

/*
 * What one round of waiting watches: the listening socket, then the live
 * mediatord's connection, or while orphaned each kept entry's channel and
 * pidfd (at WATCH_CHANNEL() and WATCH_PIDFD(); -1 for what it has none of).
 */
#define WATCH_SIZE(n_kept) (2 + 2 * (n_kept))
#define WATCH_CHANNEL(i)   (1 + 2 * (i))
#define WATCH_PIDFD(i)	   (2 + 2 * (i))

/* One round of waiting: fills @p (WATCH_SIZE() entries); for how long (-1: no limit). */
static int watch(struct keeper_state *s, struct pollfd *p, size_t *n)
{
	uint64_t waited_ms;

	*n = 0;
	p[(*n)++] = (struct pollfd){.fd = s->listen_fd, .events = POLLIN};
	if (s->conn_fd >= 0) {
		p[(*n)++] = (struct pollfd){.fd = s->conn_fd, .events = POLLIN};
		return -1;
	}
	/* Orphaned: what workers still send is dropped, their ends noticed. */
	for (size_t i = 0; i < s->n_kept; i++) {
		bool client = s->kept[i].e.kind == KEEP_CLIENT;
		bool lifeline = s->kept[i].e.kind == KEEP_LIFELINE;

		/* A lifeline is watched for its hang-up only (POLLHUP is always reported). */
		p[(*n)++] = (struct pollfd){.fd = client || lifeline ? s->kept[i].fd : -1,
					    .events = client ? POLLIN : 0};
		p[(*n)++] = (struct pollfd){.fd = client ? s->kept[i].pidfd : -1, .events = POLLIN};
	}
	waited_ms = (mono_now_ns() - s->orphaned_ns) / 1000000u;
	return waited_ms >= (uint64_t)s->wait_s * 1000
		   ? 0
		   : (int)((uint64_t)s->wait_s * 1000 - waited_ms);
}

/*
 * While orphaned: drains the workers' channels and forgets the workers that
 * ended: by their pidfds, whoever holds their channels, or by their
 * channels' ends.
 */
static void look_after(struct keeper_state *s, const struct pollfd *p)
{
	for (size_t i = s->n_kept; i-- > 0;) {
		short channel = p[WATCH_CHANNEL(i)].revents, worker = p[WATCH_PIDFD(i)].revents;

		if (s->kept[i].e.kind == KEEP_LIFELINE && (channel & (POLLHUP | POLLERR)))
			stop_workers(s);
		if (s->kept[i].e.kind != KEEP_CLIENT || (!channel && !worker))
			continue;
		if (worker || (channel & (POLLHUP | POLLERR)) || !drain(s->kept[i].fd)) {
			log_info("worker %d of domain %s ended while mediatord was away%s",
				 (int)s->kept[i].e.pid, s->kept[i].e.domain_name,
				 worker ? "" : " (its channel closed)");
			remove_kept(s, i);
		}
	}
}

_Noreturn void keeper_process_run(int listen_fd, int conn_fd, const char *path, uint32_t wait_s)
{
	struct keeper_state s = {.path = path, .wait_s = wait_s};
	sigset_t none;
	struct stat st;

	/* Nothing of mediatord's but these two and the standard streams (moved
	 * out of the way first: either may be on the other's number). */
	listen_fd = fcntl(listen_fd, F_DUPFD, KEEPER_CONN_FD + 1);
	conn_fd = fcntl(conn_fd, F_DUPFD, KEEPER_CONN_FD + 1);
	if (listen_fd < 0 || conn_fd < 0 || dup2(listen_fd, KEEPER_LISTEN_FD) < 0 ||
	    dup2(conn_fd, KEEPER_CONN_FD) < 0)
		_exit(1);
	close_range(KEEPER_CONN_FD + 1, ~0u, 0);
	s.listen_fd = KEEPER_LISTEN_FD;
	s.conn_fd = KEEPER_CONN_FD;
	if (lstat(path, &st) == 0) {
		s.dev = st.st_dev;
		s.ino = st.st_ino;
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	prctl(PR_SET_NAME, "mediatord-keep");
	log_init("mediatord-keeper", LOG_LEVEL_INFO);
	for (;;) {
		struct pollfd *p = calloc(WATCH_SIZE(s.n_kept), sizeof(*p));
		size_t n;
		int timeout, r;

		if (!p) {
			log_error("out of memory; stopping");
			finish(&s, 1);
		}
		timeout = watch(&s, p, &n);
		if (timeout == 0) {
			log_error("no mediatord came back within %u s: stopping its %zu workers",
				  s.wait_s, count_clients(&s));
			finish(&s, 1);
		}
		r = poll(p, n, timeout);
		if (r < 0 && errno != EINTR) {
			log_error("poll: %s; stopping", strerror(errno));
			finish(&s, 1);
		}
		if (r > 0 && s.conn_fd >= 0 && p[1].revents) {
			take_messages(&s);
		} else if (r > 0 && s.conn_fd < 0) {
			look_after(&s, p);
		}
		if (r > 0 && (p[0].revents & POLLIN))
			on_successor(&s);
		free(p);
	}
}
