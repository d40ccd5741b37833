// SPDX-License-Identifier: MIT
/*
 * mediatord's clients (struct client, mediatord_priv.h), one per worker.
 *
 * Life of a client: a connection is accepted on a domain's socket; a
 * SOCK_SEQPACKET socketpair is made for its records; mediator-worker is
 * spawned (worker_spawn.c) with the connection on fd 3 and its end of the
 * pair on fd 4; mediatord keeps its end and reads records from it
 * (client_records.c). Grants go the other way on the same channel. When
 * the worker exits (SIGCHLD, however it ended), mediatord reads what
 * records remain, takes the client's clients/contexts counts back from
 * its domain and forgets it. A worker taken over after a restart
 * (takeover.c) is watched through its pidfd instead. Every worker is
 * signalled through its pidfd, taken the moment it is spawned (it is our
 * unreaped child then: its pid is no other process's) and kept with the
 * keeper for a successor, never by its pid. mediatord never parses client
 * bytes itself and never waits on a worker, but at its stop. All on
 * mediatord's one thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "common/wire.h"
#include "daemon/dispatcher.h"
#include "daemon/domain.h"
#include "daemon/keeper.h"
#include "daemon/mediatord.h"
#include "daemon/mediatord_priv.h"
#include "daemon/vm_socket.h"
#include "daemon/worker_threads.h"
#include "daemon/peer_cred.h"

void client_free(struct client *c)
{
	struct mediatord *md = c->md;
	struct client **pp;

	for (pp = &md->clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	client_started(c);
	md->n_clients--;
	c->listener->n_clients--;
	dispatcher_forget(md->dispatcher, c->id, mono_now_ns());
	domain_client_removed(c->listener->domain);
	if (c->contexts)
		domain_contexts_changed(c->listener->domain, -(int)c->contexts);
	loop_remove(c->source);
	if (c->record_fd >= 0)
		close(c->record_fd);
	loop_remove(c->pid_source);
	if (c->pidfd >= 0)
		close(c->pidfd);
	if (md->keeper)
		keeper_forget_client(md->keeper, c->id);
	free(c);
}

void client_leave(struct client *c)
{
	struct mediatord *md = c->md;

	md->clients = c->next; /* the first: the caller leaves them all */
	md->n_clients--;
	if (c->listener->starting == c)
		c->listener->starting = NULL;
	loop_remove(c->source);
	loop_remove(c->pid_source);
	if (c->record_fd >= 0)
		close(c->record_fd);
	if (c->pidfd >= 0)
		close(c->pidfd);
	free(c);
}

/* The user of the process at the other end of @fd; (uid_t)-1 when not known. */
static uid_t peer_uid(int fd)
{
	struct peer_cred cred;

	return peer_cred_read(fd, &cred) == 0 ? cred.uid : (uid_t)-1;
}

/* Signals a client's worker, through its pidfd: its pid may be another process's by now. */
void client_kill(const struct client *c, int sig)
{
	/* A normal domain's worker dies at idle priority: its exit unmaps all it held. */
	if (listener_config(c->listener)->class == DOMAIN_CLASS_NORMAL)
		worker_threads_set_idle(c->pid, true, listener_config(c->listener)->worker_nice);
	if (pidfd_send_signal(c->pidfd, sig, NULL, 0) < 0 && errno != ESRCH)
		log_warn("domain %s: client %u: cannot signal worker %d: %s",
			 domain_name(c->listener->domain), c->id, (int)c->pid, strerror(errno));
}

static int move_fd_above(int fd, int min)
{
	int nfd;

	if (fd >= min)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, min);
	close(fd);
	return nfd;
}

/*
 * What domain @l's clients hold now: their number, and with a memory
 * total their workers' memory together (those ended for it not counted).
 */
static void domain_usage(const struct listener *l, struct domain_usage *u)
{
	u->clients = l->n_clients;
	u->memory_kib = 0;
	if (!l->limits.memory_kib)
		return;
	for (const struct client *c = l->md->clients; c; c = c->next) {
		uint64_t kib;

		if (c->listener == l && !c->memory_ended &&
		    domain_limits_worker_kib(c->pid, &kib) == 0)
			u->memory_kib += kib;
	}
}

/* Whether domain @l may take a client now; when not, says so in the log (rate-limited). */
static bool admit_client(struct listener *l)
{
	struct domain_usage u;
	const char *what = "";
	uint32_t suppressed;

	/* A domain at its max_clients is refused without reading its workers'
	 * memory: a connection flood costs mediatord's loop no /proc reads. */
	u = (struct domain_usage){.clients = l->n_clients};
	if (u.clients < l->limits.max_clients)
		domain_usage(l, &u);
	if (domain_limits_admit(&l->limits, &u, &what) == 0)
		return true;
	if (!domain_limits_log_pass(&l->refused_log, mono_now_ns(), &suppressed))
		return false;
	if (strcmp(what, "max_clients") == 0)
		log_warn("domain %s: refusing a client: it has %u, its max_clients (%u more "
			 "refused since the last line)",
			 domain_name(l->domain), l->limits.max_clients, suppressed);
	else
		log_warn("domain %s: refusing a client: its workers hold %llu MiB, its "
			 "domain_memory_mb is %llu (%u more refused since the last line)",
			 domain_name(l->domain), (unsigned long long)(u.memory_kib >> 10),
			 (unsigned long long)(l->limits.memory_kib >> 10), suppressed);
	return false;
}

/*
 * Ends domain @l's newest worker not yet ended for its total, which @u's
 * memory counts; takes what it held off @u. False when none is left.
 */
static bool end_newest(struct listener *l, struct domain_usage *u)
{
	struct client *newest = NULL;
	uint32_t suppressed;
	uint64_t kib = 0;

	for (struct client *c = l->md->clients; c; c = c->next)
		if (c->listener == l && !c->memory_ended && (!newest || c->id > newest->id))
			newest = c;
	if (!newest)
		return false;
	if (domain_limits_log_pass(&l->ended_log, mono_now_ns(), &suppressed))
		log_warn("domain %s: its workers hold %llu MiB, past its domain_memory_mb "
			 "%llu: ending its newest, worker %d of client %u (%u more ended "
			 "since the last line)",
			 domain_name(l->domain), (unsigned long long)(u->memory_kib >> 10),
			 (unsigned long long)(l->limits.memory_kib >> 10), (int)newest->pid,
			 newest->id, suppressed);
	if (domain_limits_worker_kib(newest->pid, &kib) == 0)
		u->memory_kib = u->memory_kib > kib ? u->memory_kib - kib : 0;
	newest->memory_ended = true;
	client_kill(newest, SIGKILL);
	return true;
}

void clients_check_memory(struct loop_source *source, int fd, uint32_t events, void *data)
{
	struct mediatord *md = data;
	uint64_t ticks;

	if (read(fd, &ticks, sizeof(ticks)) < 0)
		return;
	vm_socket_expire(md->vm_socket, mono_now_ns());
	for (size_t i = 0; i < md->cfg.n_domains; i++) {
		struct listener *l = &md->listeners[i];
		struct domain_usage u;
		uint32_t suppressed;

		if (domain_limits_log_flush(&l->refused_log, mono_now_ns(), &suppressed))
			log_warn("domain %s: %u more clients refused (max_clients %u, "
				 "domain_memory_mb %llu) since the last line",
				 domain_name(l->domain), suppressed, l->limits.max_clients,
				 (unsigned long long)(l->limits.memory_kib >> 10));
		if (domain_limits_log_flush(&l->ended_log, mono_now_ns(), &suppressed))
			log_warn("domain %s: %u more workers ended past its domain_memory_mb %llu "
				 "since the last line",
				 domain_name(l->domain), suppressed,
				 (unsigned long long)(l->limits.memory_kib >> 10));
		client_start_check_slow(l, mono_now_ns());
		domain_usage(l, &u);
		/*
		 * As many of its newest as it takes to come back under: its
		 * clients may grow together between two checks (a large clear
		 * is cut into bands, each client's in turn).
		 */
		while (domain_limits_over(&l->limits, &u) && end_newest(l, &u))
			;
	}
}

int clients_add(struct listener *l, bool vm, int client_fd, char *why, size_t why_size)
{
	struct mediatord *md = l->md;
	const char *dname = domain_name(l->domain);
	int pair[2];
	int bufsize = MEDIATORD_RECORD_BUFFER;
	struct client *c;

	if (vm && l->vm_connected) {
		log_warn("domain %s: refusing a second VM: one is connected", dname);
		snprintf(why, why_size, "domain %s serves another VM now", dname);
		close(client_fd);
		return -EBUSY;
	}
	if (!admit_client(l)) {
		snprintf(why, why_size, "domain %s is at its max_clients or domain_memory_mb",
			 dname);
		close(client_fd);
		return -EMFILE;
	}
	/* A backstop: the domains' max_clients add up to MEDIATORD_MAX_CLIENTS at most. */
	if (md->n_clients >= MEDIATORD_MAX_CLIENTS) {
		log_warn("domain %s: refusing a client: %u clients already", dname, md->n_clients);
		snprintf(why, why_size, "mediatord serves %u clients already", md->n_clients);
		close(client_fd);
		return -EMFILE;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) {
		int e = errno;

		log_error("domain %s: socketpair: %s", dname, strerror(e));
		snprintf(why, why_size, "socketpair: %s", strerror(e));
		close(client_fd);
		return -e;
	}
	/* Keep the fds the worker inherits away from the numbers they get there. */
	client_fd = move_fd_above(client_fd, WIRE_BOARD_FD + 1);
	pair[1] = move_fd_above(pair[1], WIRE_BOARD_FD + 1);
	setsockopt(pair[1], SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize));
	setsockopt(pair[0], SOL_SOCKET, SO_RCVBUF, &bufsize, sizeof(bufsize));

	c = calloc(1, sizeof(*c));
	if (!c || client_fd < 0 || pair[1] < 0) {
		log_error("domain %s: out of resources for a new client", dname);
		goto fail;
	}
	c->md = md;
	c->listener = l;
	c->pidfd = -1;
	c->id = ++md->next_client_id;
	c->record_fd = pair[0];
	c->peer_pid = -1;
	c->peer_uid = peer_uid(client_fd);
	snprintf(c->name, sizeof(c->name), "unnamed");
	c->vm = vm;
	c->spawned_ns = mono_now_ns();
	c->pid = worker_spawn(md, l, c->id, vm, client_fd, pair[1]);
	if (c->pid < 0) {
		log_error("domain %s: cannot start %s: %s", dname, md->worker_path,
			  strerror(errno));
		goto fail;
	}
	/* Now, before any reaping (clients_reap(), on this thread): the pid is the worker's. */
	c->pidfd = pidfd_open(c->pid, 0);
	if (c->pidfd < 0) {
		log_error("domain %s: worker %d: pidfd_open: %s; stopping it", dname, (int)c->pid,
			  strerror(errno));
		kill(c->pid, SIGKILL); /* our child, not reaped yet: clients_reap() reaps it */
		goto fail;
	}
	close(client_fd);
	close(pair[1]);
	c->source = loop_add(md->loop, c->record_fd, EPOLLIN, client_on_record, c);
	if (!c->source) {
		client_kill(c, SIGKILL);
		log_error("domain %s: cannot watch worker %d", dname, (int)c->pid);
	}
	takeover_keep_client(md, c);
	c->next = md->clients;
	md->clients = c;
	md->n_clients++;
	l->n_clients++;
	domain_client_added(l->domain);
	if (vm)
		l->vm_connected = true;
	log_info("domain %s: %s %u accepted, worker %d", dname, vm ? "VM" : "client", c->id,
		 (int)c->pid);
	client_watchdog_start(c);
	snprintf(why, why_size, "%s", dname);
	return (int)c->id;
fail:
	snprintf(why, why_size, "out of resources for a new client (mediatord's log says which)");
	free(c);
	if (client_fd >= 0)
		close(client_fd);
	close(pair[0]);
	if (pair[1] >= 0)
		close(pair[1]);
	return -ENOMEM;
}

static void accept_client(struct listener *l, bool vm)
{
	char why[256];
	int fd = accept4(vm ? l->vhost_sock.fd : l->sock.fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR)
			log_warn("domain %s: accept: %s", domain_name(l->domain), strerror(errno));
		return;
	}
	clients_add(l, vm, fd, why, sizeof(why));
}

void client_on_accept(struct loop_source *source, int fd, uint32_t events, void *data)
{
	accept_client(data, false);
}

void client_on_accept_vm(struct loop_source *source, int fd, uint32_t events, void *data)
{
	accept_client(data, true);
}

void clients_reap(struct mediatord *md)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		struct client *c;

		for (c = md->clients; c && c->pid != pid; c = c->next)
			;
		if (!c)
			continue;
		if (c->record_fd >= 0)
			client_read_records(c, CLIENT_RECORDS_ALL);
		if (WIFSIGNALED(status))
			log_warn("domain %s: client %u: worker %d killed by signal %d",
				 domain_name(c->listener->domain), c->id, (int)pid,
				 WTERMSIG(status));
		else
			log_info("domain %s: client %u: worker %d exited with %d after %llu groups",
				 domain_name(c->listener->domain), c->id, (int)pid,
				 WEXITSTATUS(status), (unsigned long long)c->groups);
		if (c->spawned_ns && !c->renderer_up &&
		    (WIFSIGNALED(status) || WEXITSTATUS(status) != 0))
			log_warn(
			    "domain %s: client %u: worker %d ended before its renderer was up; "
			    "its own lines above say why. Workers get only the environment "
			    "mediatord.conf(5) names (worker_pass_environment)",
			    domain_name(c->listener->domain), c->id, (int)pid);
		if (c->vm)
			c->listener->vm_connected = false;
		client_free(c);
	}
}

struct client *client_by_id(struct mediatord *md, uint32_t id)
{
	struct client *c;

	for (c = md->clients; c && c->id != id; c = c->next)
		;
	return c;
}

/* The dispatcher's way to a worker (dispatcher_send_fn). */
int client_send_grant(void *data, uint32_t client, const struct wire_grant *grant)
{
	struct client *c = client_by_id(data, client);

	if (!c || c->record_fd < 0)
		return -ENOENT;
	if (send(c->record_fd, grant, sizeof(*grant), MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    (ssize_t)sizeof(*grant)) {
		log_error("domain %s: client %u: cannot send a grant: %s; stopping its worker",
			  domain_name(c->listener->domain), c->id, strerror(errno));
		client_kill(c, SIGKILL);
		return -errno;
	}
	return 0;
}

/* Forgets the workers taken over that have ended (their pidfds readable). */
static void reap_adopted(struct mediatord *md)
{
	struct client *c = md->clients, *next;

	for (; c; c = next) {
		struct pollfd p = {.fd = c->pidfd, .events = POLLIN};

		next = c->next;
		if (c->adopted && poll(&p, 1, 0) == 1)
			client_free(c);
	}
}

void clients_stop(struct mediatord *md)
{
	uint64_t deadline = mono_now_ns() + MEDIATORD_STOP_GRACE_MS * 1000000ull;

	client_start_forget(md);
	for (struct client *c = md->clients; c; c = c->next)
		client_kill(c, SIGTERM);
	while (md->clients && mono_now_ns() < deadline) {
		clients_reap(md);
		reap_adopted(md);
		if (md->clients)
			usleep(10000);
	}
	for (struct client *c = md->clients; c; c = c->next)
		client_kill(c, SIGKILL);
	while (md->clients) {
		struct pollfd p = {.fd = md->clients->pidfd, .events = POLLIN};

		if (md->clients->adopted)
			poll(&p, 1, 1000);
		else
			waitpid(md->clients->pid, NULL, 0);
		client_free(md->clients);
	}
}
