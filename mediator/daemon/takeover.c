// SPDX-License-Identifier: MIT
/*
 * Take-over after a restart (keeper.h, doc/design.md). While mediatord
 * runs, its keeper process holds a copy of each domain socket, the grant
 * board and each client's record channel, and the budgets set at run
 * time. When mediatord dies, the keeper tells the workers (WIRE_ORPHANED)
 * and waits restart_wait_s for a successor; a mediatord that starts with
 * the same domains takes it all over: the sockets (mediatord.c), the
 * budgets, and each worker, which is watched through the pidfd the keeper
 * kept for it (it is no child of the new mediatord) and told WIRE_RESUME;
 * what it sends before its answer was for the mediatord that died
 * (client_records.c). The normal domains' workers are told
 * MEDIATORD_RESUME_HOLD_MS after the safety domains'. All on mediatord's
 * one thread.
 *
 * A worker is taken over through the pidfd the mediatord that spawned it
 * took and kept, never through its pid: a live record channel is no live
 * worker (a worker may pass its end to its client, and exit), and a pid
 * kept across a restart may be another process's by now (issue 30).
 * A client kept without a pidfd (by an older mediatord) is not taken
 * over: its channel is closed.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/util.h"
#include "common/wire.h"
#include "daemon/dispatcher.h"
#include "daemon/domain.h"
#include "daemon/keeper.h"
#include "daemon/lifeline.h"
#include "daemon/mediatord.h"
#include "daemon/mediatord_priv.h"

/* Gives the keeper a copy of @c's record channel and its worker's pidfd, for a successor. */
void takeover_keep_client(struct mediatord *md, const struct client *c)
{
	const struct domain_config *dc = listener_config(c->listener);
	struct keep_entry e = {.kind = KEEP_CLIENT,
			       .domain = (uint32_t)(c->listener - md->listeners),
			       .client_id = c->id,
			       .pid = c->pid,
			       .flags =
				   (c->vm ? KEEP_CLIENT_VM : 0) |
				   (dc->class == DOMAIN_CLASS_SAFETY ? KEEP_CLIENT_SAFETY : 0)};

	if (!md->keeper)
		return;
	snprintf(e.domain_name, sizeof(e.domain_name), "%s", dc->name);
	if (keeper_keep(md->keeper, &e, c->record_fd) < 0) {
		log_warn("domain %s: client %u: the keeper did not take its channel (%s): it will "
			 "not outlive mediatord",
			 dc->name, c->id, strerror(errno));
		return;
	}
	e.kind = KEEP_WORKER;
	if (keeper_keep(md->keeper, &e, c->pidfd) < 0) {
		/* A channel without its worker's pidfd would be of no use to a successor. */
		log_warn("domain %s: client %u: the keeper did not take worker %d's pidfd (%s): "
			 "it will not outlive mediatord",
			 dc->name, c->id, (int)c->pid, strerror(errno));
		keeper_forget_client(md->keeper, c->id);
	}
}

/* A worker taken over from a mediatord that died ended (its pidfd is readable). */
static void on_adopted_exit(struct loop_source *source, int fd, uint32_t events, void *data)
{
	struct client *c = data;

	if (c->record_fd >= 0)
		client_read_records(c, CLIENT_RECORDS_ALL);
	log_info("domain %s: client %u: worker %d (taken over) ended after %llu groups",
		 domain_name(c->listener->domain), c->id, (int)c->pid,
		 (unsigned long long)c->groups);
	if (c->vm)
		c->listener->vm_connected = false;
	client_free(c);
}

/* Gives up a kept client (takes its descriptors), saying why; the keeper forgets it. */
static void drop_kept_client(struct mediatord *md, const struct keep_entry *e, int fd, int pidfd,
			     const char *why)
{
	log_warn("domain %s: client %u: worker %d %s: not taken over, its channel closed",
		 e->domain_name, e->client_id, (int)e->pid, why);
	if (pidfd >= 0)
		close(pidfd);
	close(fd);
	keeper_forget_client(md->keeper, e->client_id);
}

/*
 * Takes over the worker of a mediatord that died (keeper.h), whose record
 * channel is @fd and whose pidfd, as the keeper kept it, @pidfd (-1:
 * none): watches both, and tells it (WIRE_RESUME). Takes both descriptors.
 */
static void adopt_client(struct mediatord *md, const struct keep_entry *e, int fd, int pidfd,
			 bool hold_normal)
{
	struct listener *l = &md->listeners[e->domain];
	struct wire_resume resume = {.hdr = {WIRE_RESUME, sizeof(resume)}};
	struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
	struct client *c;
	/* A normal domain's worker goes on waiting a while (on_resume_timer()). */
	bool hold = hold_normal && !(e->flags & KEEP_CLIENT_SAFETY);

	/* Its pid is no way to it: another process may have it by now. */
	if (pidfd < 0) {
		drop_kept_client(md, e, fd, pidfd,
				 "was kept without a pidfd (by an older mediatord?), and its pid "
				 "may be another process's by now");
		return;
	}
	/* The pidfd says whether it lives: its channel may be open in another process. */
	if (poll(p, 2, 0) < 0 || p[1].revents || (p[0].revents & (POLLHUP | POLLERR)) ||
	    (!hold &&
	     send(fd, &resume, sizeof(resume), MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof(resume))) {
		drop_kept_client(md, e, fd, pidfd, "ended before it was taken over");
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		drop_kept_client(md, e, fd, pidfd, "cannot be taken over (out of memory)");
		return;
	}
	c->md = md;
	c->listener = l;
	c->id = e->client_id;
	c->pid = e->pid;
	c->pidfd = pidfd;
	c->record_fd = fd;
	c->peer_pid = -1;
	c->peer_uid = (uid_t)-1; /* not kept: its penalties start anew */
	c->vm = (e->flags & KEEP_CLIENT_VM) != 0;
	c->adopted = true;
	c->resuming = true;
	c->resume_held = hold;
	snprintf(c->name, sizeof(c->name), "unnamed");
	c->source = loop_add(md->loop, fd, EPOLLIN, client_on_record, c);
	c->pid_source = loop_add(md->loop, pidfd, EPOLLIN, on_adopted_exit, c);
	if (!c->source || !c->pid_source)
		log_error("domain %s: cannot watch worker %d", e->domain_name, (int)e->pid);
	c->next = md->clients;
	md->clients = c;
	md->n_clients++;
	l->n_clients++;
	if (c->id > md->next_client_id)
		md->next_client_id = c->id;
	domain_client_added(l->domain);
	if (c->vm)
		l->vm_connected = true;
	log_info("domain %s: %s %u taken over, worker %d", e->domain_name, c->vm ? "VM" : "client",
		 c->id, (int)c->pid);
}

/*
 * The normal domains' workers taken over are told last: until then they
 * wait as they did while mediatord was away, and the scheduler learns the
 * safety domains' frames (their phase and cost) from their groups alone.
 * Told at once, a normal domain's backlog would meet a scheduler that does
 * not know yet when the next safety frame comes.
 */
static void on_resume_timer(struct loop_source *source, int fd, uint32_t events, void *data)
{
	struct mediatord *md = data;
	struct wire_resume resume = {.hdr = {WIRE_RESUME, sizeof(resume)}};
	uint64_t expirations;
	unsigned n = 0;

	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno == EAGAIN)
		return;
	for (struct client *c = md->clients; c; c = c->next) {
		if (!c->resume_held)
			continue;
		c->resume_held = false;
		n++;
		if (send(c->record_fd, &resume, sizeof(resume), MSG_DONTWAIT | MSG_NOSIGNAL) !=
		    sizeof(resume)) {
			log_error(
			    "domain %s: client %u: cannot take worker %d over: %s; stopping it",
			    domain_name(c->listener->domain), c->id, (int)c->pid, strerror(errno));
			client_kill(c, SIGKILL);
		}
	}
	log_info("the normal domains' %u workers taken over resume, %u ms after the safety "
		 "domains'",
		 n, MEDIATORD_RESUME_HOLD_MS);
	loop_remove(md->resume_source);
	md->resume_source = NULL;
	close(md->resume_timer);
	md->resume_timer = -1;
}

/* Arms the timer that tells the held clients (on_resume_timer()). */
static void hold_normal_clients(struct mediatord *md)
{
	struct itimerspec when = {
	    .it_value = {.tv_sec = MEDIATORD_RESUME_HOLD_MS / 1000,
			 .tv_nsec = (MEDIATORD_RESUME_HOLD_MS % 1000) * 1000000L}};

	md->resume_timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (md->resume_timer < 0 || timerfd_settime(md->resume_timer, 0, &when, NULL) < 0 ||
	    !(md->resume_source =
		  loop_add(md->loop, md->resume_timer, EPOLLIN, on_resume_timer, md))) {
		log_warn("cannot hold the normal domains' workers: %s; resumed at once",
			 strerror(errno));
		if (md->resume_timer >= 0)
			close(md->resume_timer);
		md->resume_timer = -1;
		on_resume_timer(NULL, -1, 0, md);
	}
}

/* The kept descriptor of @kind (a listener or the board of domain @domain), or -1; taken once. */
int takeover_kept_fd(struct kept *k, uint32_t kind, uint32_t domain)
{
	for (size_t i = 0; i < k->n; i++) {
		if (k->fd[i] >= 0 && k->e[i].kind == kind && k->e[i].domain == domain) {
			int fd = k->fd[i];

			k->fd[i] = -1;
			return fd;
		}
	}
	return -1;
}

int takeover_kept_listener(struct kept *k, uint32_t kind, const char *path)
{
	for (size_t i = 0; i < k->n; i++) {
		if (k->fd[i] >= 0 && k->e[i].kind == kind && !strcmp(k->e[i].path, path)) {
			int fd = k->fd[i];

			k->fd[i] = -1;
			return fd;
		}
	}
	return -1;
}

void takeover_close_kept(struct kept *k)
{
	for (size_t i = 0; i < k->n; i++) {
		if (k->fd[i] >= 0)
			close(k->fd[i]);
		if (k->pidfd[i] >= 0)
			close(k->pidfd[i]);
	}
	k->n = 0;
}

/*
 * Takes a kept worker's pidfd @pidfd (KEEP_WORKER @e) as the pidfd of its
 * client in @k; closes it when @k holds no such client, or one with a
 * pidfd.
 */
static void take_kept_worker(struct kept *k, const struct keep_entry *e, int pidfd)
{
	for (size_t i = 0; i < k->n; i++) {
		if (k->e[i].kind == KEEP_CLIENT && k->e[i].client_id == e->client_id &&
		    k->pidfd[i] < 0) {
			k->pidfd[i] = pidfd;
			return;
		}
	}
	close(pidfd);
}

/*
 * True when what was kept is of the same domains (names, order, sockets)
 * as @cfg: only then can the workers be taken over (their domain indices
 * and board slots stay right). Otherwise says why in @why.
 */
static bool kept_matches(const struct mediator_config *cfg, const struct kept *k, char *why,
			 size_t why_size)
{
	size_t listeners = 0, wanted = 0;

	for (size_t i = 0; i < cfg->n_domains; i++)
		wanted += (cfg->domains[i].vtest_socket[0] != '\0') +
			  (cfg->domains[i].vhost_user_socket[0] != '\0');
	for (size_t i = 0; i < k->n; i++) {
		const struct keep_entry *e = &k->e[i];
		const struct domain_config *dc;

		/* vm_socket is no domain's: a successor adopts it only at the same path. */
		if (e->kind == KEEP_BOARD || e->kind == KEEP_LIFELINE ||
		    e->kind == KEEP_LISTENER_VMS)
			continue;
		dc = &cfg->domains[e->domain < cfg->n_domains ? e->domain : 0];
		if (e->domain >= cfg->n_domains || strcmp(dc->name, e->domain_name)) {
			snprintf(why, why_size, "domain %s is not domain %u any more",
				 e->domain_name, e->domain);
			return false;
		}
		if (e->kind == KEEP_CLIENT)
			continue;
		listeners++;
		if (strcmp(e->path, e->kind == KEEP_LISTENER_VTEST ? dc->vtest_socket
								   : dc->vhost_user_socket)) {
			snprintf(why, why_size, "domain %s's socket %s changed", dc->name, e->path);
			return false;
		}
	}
	if (listeners != wanted) {
		snprintf(why, why_size, "%zu sockets kept, %zu configured", listeners, wanted);
		return false;
	}
	return true;
}

/*
 * Starts the keeper, or reaches the one a mediatord that died left (then
 * @k holds what it kept). Without one (restart_wait_s = 0, or it failed)
 * workers die with mediatord.
 */
void takeover_open_keeper(struct mediatord *md, struct kept *k)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)], err[512], why[256];
	struct keep_entry e;
	bool adopted;
	int fd;

	k->n = 0;
	if (!md->cfg.restart_wait_s) {
		log_info("restart_wait_s is 0: workers end with mediatord");
		return;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s%s", md->cfg.control_socket,
			     KEEPER_SOCKET_SUFFIX) >= sizeof(path)) {
		log_warn(
		    "control_socket %s is too long for the keeper's socket next to it: workers "
		    "end with mediatord",
		    md->cfg.control_socket);
		return;
	}
	md->keeper = keeper_open(path, md->cfg.restart_wait_s, &adopted, err, sizeof(err));
	if (!md->keeper) {
		log_warn("keeper: %s; workers end with mediatord", err);
		return;
	}
	if (!adopted)
		return;
	md->took_over = true;
	while ((fd = keeper_take(md->keeper, &e)) >= 0) {
		if (e.kind == KEEP_WORKER) {
			take_kept_worker(k, &e, fd);
			continue;
		}
		if (k->n == MEDIATORD_MAX_KEPT) {
			close(fd);
			continue;
		}
		k->e[k->n] = e;
		k->pidfd[k->n] = -1;
		k->fd[k->n++] = fd;
	}
	if (kept_matches(&md->cfg, k, why, sizeof(why)))
		return;
	log_warn("the workers kept for a restart were of another configuration (%s): they are "
		 "stopped",
		 why);
	takeover_close_kept(k);
	keeper_quit(md->keeper);
	md->took_over = false;
	md->keeper = keeper_open(path, md->cfg.restart_wait_s, &adopted, err, sizeof(err));
	if (!md->keeper)
		log_warn("keeper: %s; workers end with mediatord", err);
}

void takeover_hold_lifeline(struct mediatord *md, struct kept *k)
{
	struct keep_entry e = {.kind = KEEP_LIFELINE};
	int fd = takeover_kept_fd(k, KEEP_LIFELINE, 0);

	md->lifeline = -1;
	if (fd >= 0 && md->keeper && lifeline_held(fd)) {
		md->lifeline = fd;
		return;
	}
	if (fd >= 0)
		close(fd);
	if (!md->keeper)
		return;
	md->lifeline = lifeline_create();
	if (md->lifeline >= 0 && keeper_keep(md->keeper, &e, md->lifeline) < 0) {
		log_warn("the keeper did not take the lifeline (%s): a SIGTERM stops the clients",
			 strerror(errno));
		close(md->lifeline);
		md->lifeline = -1;
	}
}

void takeover_keep_budget(struct mediatord *md, int i, uint32_t period_us, uint32_t budget_us,
			  uint32_t deadline_us)
{
	struct keep_budget b = {.domain = (uint32_t)i,
				.period_us = period_us,
				.budget_us = budget_us,
				.deadline_us = deadline_us};

	if (!md->keeper)
		return;
	snprintf(b.domain_name, sizeof(b.domain_name), "%s", md->cfg.domains[i].name);
	keeper_keep_budget(md->keeper, &b);
}

/* Applies the budgets set at run time before the restart (mediatorctl set-budget). */
void takeover_resume_budgets(struct mediatord *md)
{
	struct keep_budget b;
	char err[256];

	while (keeper_take_budget(md->keeper, &b)) {
		if (b.domain >= md->cfg.n_domains ||
		    strcmp(md->cfg.domains[b.domain].name, b.domain_name))
			continue;
		if (dispatcher_set_budget(md->dispatcher, (int)b.domain, b.period_us, b.budget_us,
					  b.deadline_us, err, sizeof(err)) < 0)
			log_warn("domain %s: the budget set before the restart: %s", b.domain_name,
				 err);
		else
			log_info("domain %s: budget %u us per %u us, deadline %u us, as set before "
				 "the restart",
				 b.domain_name, b.budget_us, b.period_us, b.deadline_us);
	}
}

/*
 * Takes over every worker @k holds (their record channels), tells them
 * (WIRE_RESUME): the safety domains' at once, the normal domains' after
 * MEDIATORD_RESUME_HOLD_MS when a safety domain's worker is among them;
 * closes the rest of what @k holds.
 */
void takeover_adopt_clients(struct mediatord *md, struct kept *kept)
{
	bool safety = false, held = false;

	for (size_t i = 0; i < kept->n; i++)
		safety |= kept->fd[i] >= 0 && kept->e[i].kind == KEEP_CLIENT &&
			  (kept->e[i].flags & KEEP_CLIENT_SAFETY);
	for (size_t i = 0; i < kept->n; i++) {
		if (kept->fd[i] >= 0 && kept->e[i].kind == KEEP_CLIENT) {
			adopt_client(md, &kept->e[i], kept->fd[i], kept->pidfd[i], safety);
			kept->pidfd[i] = -1;
		} else if (kept->fd[i] >= 0) {
			close(kept->fd[i]);
		}
	}
	for (struct client *c = md->clients; c; c = c->next)
		held |= c->resume_held;
	if (held)
		hold_normal_clients(md);
	if (kept->n)
		log_info("took over %u workers of the mediatord that died", md->n_clients);
}
