// SPDX-License-Identifier: MIT
/*
 * mediatord's side of its keeper (see keeper.h); the keeper itself is
 * keeper_process.c.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fd_pass.h"
#include "daemon/keeper.h"
#include "daemon/keeper_msg.h"
#include "daemon/keeper_process.h"
#include "common/unix_listener.h"
#include "common/util.h"

/* How long a keeper may take to answer mediatord at start. */
#define KEEPER_ANSWER_MS 2000

struct taken {
	struct keep_entry e;
	int fd;
};

struct keeper {
	int fd;
	struct taken *taken; /* what a predecessor left, not yet taken */
	size_t n_taken, next_taken;
	struct keep_budget budgets[CONFIG_MAX_DOMAINS];
	size_t n_budgets, next_budget;
};

static int send_msg(struct keeper *k, const struct keep_msg *m, int fd)
{
	if (fd_pass_send(k->fd, m, sizeof(*m), fd, 0) != (ssize_t)sizeof(*m))
		return -errno;
	return 0;
}

/* Receives one message within KEEPER_ANSWER_MS. 0, or -errno (-EPIPE: closed). */
static int recv_msg(struct keeper *k, struct keep_msg *m, int *fd)
{
	struct pollfd p = {.fd = k->fd, .events = POLLIN};
	ssize_t n;
	int r = poll(&p, 1, KEEPER_ANSWER_MS);

	*fd = -1;
	if (r == 0)
		return -ETIMEDOUT;
	if (r < 0)
		return -errno;
	n = fd_pass_recv(k->fd, m, sizeof(*m), 0, fd);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EPIPE;
	if (n != sizeof(*m)) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EPROTO;
	}
	return 0;
}

/* Takes everything the keeper sends a successor, up to KEEP_OP_END. */
static int take_all(struct keeper *k, char *err, size_t err_size)
{
	for (;;) {
		struct keep_msg m;
		int fd, r = recv_msg(k, &m, &fd);

		if (r < 0) {
			snprintf(err, err_size, "the keeper's answer: %s", strerror(-r));
			return r;
		}
		if (m.op == KEEP_OP_END)
			return 0;
		if (m.op == KEEP_OP_BUDGET && k->n_budgets < CONFIG_MAX_DOMAINS) {
			m.budget.domain_name[sizeof(m.budget.domain_name) - 1] = '\0';
			k->budgets[k->n_budgets++] = m.budget;
		} else if (m.op == KEEP_OP_ADD && fd >= 0) {
			struct taken *t = realloc(k->taken, (k->n_taken + 1) * sizeof(*t));

			if (!t) {
				close(fd);
				snprintf(err, err_size, "out of memory");
				return -ENOMEM;
			}
			k->taken = t;
			m.entry.domain_name[sizeof(m.entry.domain_name) - 1] = '\0';
			m.entry.path[sizeof(m.entry.path) - 1] = '\0';
			t[k->n_taken].e = m.entry;
			t[k->n_taken++].fd = fd;
		} else if (fd >= 0) {
			close(fd);
		}
	}
}

/* Connects to a keeper listening at @path. The socket, or -errno. */
static int connect_keeper(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd;

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	/* Only a keeper of our own user hands us descriptors to trust. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* Forks a keeper listening at @path; @k->fd is mediatord's connection to it. */
static int start_keeper(struct keeper *k, const char *path, uint32_t wait_s, char *err,
			size_t err_size)
{
	struct unix_listener l;
	int pair[2];
	pid_t pid;

	if (unix_listener_open_type(&l, path, SOCK_SEQPACKET, 0600, 4, err, err_size) < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) {
		snprintf(err, err_size, "socketpair: %s", strerror(errno));
		unix_listener_close(&l);
		return -1;
	}
	/* Twice: the keeper is no child of mediatord's (it outlives it; nobody
	 * counting mediatord's workers finds it). */
	pid = fork();
	if (pid < 0) {
		snprintf(err, err_size, "fork: %s", strerror(errno));
		close(pair[0]);
		close(pair[1]);
		unix_listener_close(&l);
		return -1;
	}
	if (pid == 0) {
		close(pair[0]);
		setsid(); /* nor of its session: no terminal's signals */
		if (fork() == 0)
			keeper_process_run(l.fd, pair[1], path, wait_s);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	close(pair[1]);
	close(l.fd); /* the keeper's now; it unlinks the path when it quits */
	k->fd = pair[0];
	log_info("keeper started on %s: workers outlive mediatord for up to %u s", path, wait_s);
	return 0;
}

struct keeper *keeper_open(const char *path, uint32_t wait_s, bool *adopted, char *err,
			   size_t err_size)
{
	struct keeper *k = calloc(1, sizeof(*k));
	int fd;

	*adopted = false;
	if (!k) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	fd = connect_keeper(path);
	if (fd >= 0) {
		k->fd = fd;
		if (take_all(k, err, err_size) < 0) {
			keeper_close(k);
			return NULL;
		}
		*adopted = true;
		return k;
	}
	if (fd == -EPERM) {
		snprintf(err, err_size, "%s: its keeper runs as another user", path);
		free(k);
		return NULL;
	}
	if (start_keeper(k, path, wait_s, err, err_size) < 0) {
		free(k);
		return NULL;
	}
	return k;
}

int keeper_take(struct keeper *k, struct keep_entry *e)
{
	if (k->next_taken == k->n_taken)
		return -1;
	*e = k->taken[k->next_taken].e;
	return k->taken[k->next_taken++].fd;
}

bool keeper_take_budget(struct keeper *k, struct keep_budget *b)
{
	if (k->next_budget == k->n_budgets)
		return false;
	*b = k->budgets[k->next_budget++];
	return true;
}

int keeper_keep(struct keeper *k, const struct keep_entry *e, int fd)
{
	struct keep_msg m = {.op = KEEP_OP_ADD, .entry = *e};

	return send_msg(k, &m, fd);
}

void keeper_forget_client(struct keeper *k, uint32_t client_id)
{
	struct keep_msg m = {.op = KEEP_OP_FORGET, .client_id = client_id};

	if (send_msg(k, &m, -1) < 0)
		log_warn("keeper: cannot tell it client %u is gone: %s", client_id,
			 strerror(errno));
}

void keeper_keep_budget(struct keeper *k, const struct keep_budget *b)
{
	struct keep_msg m = {.op = KEEP_OP_BUDGET, .budget = *b};

	if (send_msg(k, &m, -1) < 0)
		log_warn("keeper: cannot keep domain %s's budget: %s", b->domain_name,
			 strerror(errno));
}

void keeper_quit(struct keeper *k)
{
	struct keep_msg m = {.op = KEEP_OP_QUIT};

	if (!k)
		return;
	if (send_msg(k, &m, -1) == 0) {
		int fd;

		/* Its answer, or its end closing, says it let go of everything. */
		while (recv_msg(k, &m, &fd) == 0) {
			if (fd >= 0)
				close(fd);
			if (m.op == KEEP_OP_END)
				break;
		}
	}
	keeper_close(k);
}

void keeper_close(struct keeper *k)
{
	if (!k)
		return;
	while (k->next_taken < k->n_taken)
		close(k->taken[k->next_taken++].fd);
	free(k->taken);
	close(k->fd);
	free(k);
}
