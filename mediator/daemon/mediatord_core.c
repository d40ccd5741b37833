// SPDX-License-Identifier: MIT
/*
 * mediatord's core (see mediatord.h).
 *
 * Life of a client: a connection is accepted on a domain's socket; a
 * SOCK_SEQPACKET socketpair is made for its records; mediator-worker is
 * spawned with the connection on fd 3 and its end of the pair on fd 4;
 * mediatord keeps its end and reads records from it. When the worker
 * exits (SIGCHLD, however it ended), mediatord reads what records remain,
 * takes the client's clients/contexts counts back from its domain and
 * forgets it. mediatord never parses client bytes itself and never waits
 * on a worker.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "predict.h"
#include "daemon/control.h"
#include "daemon/dispatcher.h"
#include "daemon/domain.h"
#include "daemon/keeper.h"
#include "common/loop.h"
#include "build-config/build-config.h"
#include "daemon/mediatord.h"
#include "daemon/mediatord_priv.h"
#include "daemon/trace.h"
#include "common/unix_listener.h"
#include "common/util.h"
#include "common/wire.h"
#include "daemon/domain_dirs.h"
#include "daemon/service_notify.h"
#include "daemon/worker_user.h"

/* ---- clients ----------------------------------------------------------- */

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
	md->n_clients--;
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

/* Signals a client's worker: through its pidfd when it is no child of ours. */
void client_kill(const struct client *c, int sig)
{
	if (c->pidfd >= 0)
		pidfd_send_signal(c->pidfd, sig, NULL, 0);
	else
		kill(c->pid, sig);
}

/*
 * Takes the safety frames the scheduler closed: into their domains' frame
 * latency, and into the trace when one is open.
 */
void mediatord_take_frames(struct mediatord *md)
{
	struct sched_frame f[32];
	uint64_t dropped;
	size_t n;

	while ((n = dispatcher_take_frames(md->dispatcher, f, ARRAY_SIZE(f), &dropped)) > 0) {
		for (size_t i = 0; i < n; i++)
			domain_frame_closed(md->listeners[f[i].domain].domain, f[i].release_ns,
					    f[i].end_ns);
		for (size_t i = 0; i < n && md->trace; i++) {
			const char *name = domain_name(md->listeners[f[i].domain].domain);

			if (trace_write_frame(md->trace, name, &f[i]) < 0) {
				log_error("trace %s: write failed; tracing stopped",
					  trace_path(md->trace));
				trace_close(md->trace);
				md->trace = NULL;
			}
		}
		if (dropped && md->trace)
			log_warn("trace: %llu frame records were lost",
				 (unsigned long long)dropped);
	}
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

static void accept_client(struct listener *l, bool vm)
{
	struct mediatord *md = l->md;
	const char *dname = domain_name(l->domain);
	int client_fd, pair[2];
	int bufsize = MEDIATORD_RECORD_BUFFER;
	struct client *c;

	client_fd = accept4(vm ? l->vhost_sock.fd : l->sock.fd, NULL, NULL, SOCK_CLOEXEC);
	if (client_fd < 0) {
		if (errno != EAGAIN && errno != EINTR)
			log_warn("domain %s: accept: %s", dname, strerror(errno));
		return;
	}
	if (vm && l->vm_connected) {
		log_warn("domain %s: refusing a second VM on %s: one is connected", dname,
			 l->vhost_sock.path);
		close(client_fd);
		return;
	}
	if (md->n_clients >= MEDIATORD_MAX_CLIENTS) {
		log_warn("domain %s: refusing a client: %u clients already", dname, md->n_clients);
		close(client_fd);
		return;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) {
		log_error("domain %s: socketpair: %s", dname, strerror(errno));
		close(client_fd);
		return;
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
	snprintf(c->name, sizeof(c->name), "unnamed");
	c->vm = vm;
	c->pid = worker_spawn(md, l, c->id, vm, client_fd, pair[1]);
	if (c->pid < 0) {
		log_error("domain %s: cannot start %s: %s", dname, md->worker_path,
			  strerror(errno));
		goto fail;
	}
	close(client_fd);
	close(pair[1]);
	c->source = loop_add(md->loop, c->record_fd, EPOLLIN, client_on_record, c);
	if (!c->source) {
		kill(c->pid, SIGKILL);
		log_error("domain %s: cannot watch worker %d", dname, (int)c->pid);
	}
	takeover_keep_client(md, c);
	c->next = md->clients;
	md->clients = c;
	md->n_clients++;
	domain_client_added(l->domain);
	if (vm)
		l->vm_connected = true;
	log_info("domain %s: %s %u accepted, worker %d", dname, vm ? "VM" : "client", c->id,
		 (int)c->pid);
	return;
fail:
	free(c);
	if (client_fd >= 0)
		close(client_fd);
	close(pair[0]);
	if (pair[1] >= 0)
		close(pair[1]);
}

static void on_accept(struct loop_source *source, int fd, uint32_t events, void *data)
{
	accept_client(data, false);
}

static void on_accept_vm(struct loop_source *source, int fd, uint32_t events, void *data)
{
	accept_client(data, true);
}

static void reap_workers(struct mediatord *md)
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
			client_read_records(c);
		if (WIFSIGNALED(status))
			log_warn("domain %s: client %u: worker %d killed by signal %d",
				 domain_name(c->listener->domain), c->id, (int)pid,
				 WTERMSIG(status));
		else
			log_info("domain %s: client %u: worker %d exited with %d after %llu groups",
				 domain_name(c->listener->domain), c->id, (int)pid,
				 WEXITSTATUS(status), (unsigned long long)c->groups);
		if (c->vm)
			c->listener->vm_connected = false;
		client_free(c);
	}
}

static void on_signal(struct loop_source *source, int fd, uint32_t events, void *data)
{
	struct mediatord *md = data;
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			reap_workers(md);
			break;
		case SIGTERM:
		case SIGINT:
			log_info("signal %u: shutting down", si.ssi_signo);
			service_notify_stopping();
			loop_quit(md->loop);
			break;
		default:
			break;
		}
	}
	if (md->trace)
		trace_tick(md->trace, mono_now_ns());
}

/* ---- set-up and tear-down ---------------------------------------------- */

/* The dispatcher's way to a worker (dispatcher_send_fn). */
static int send_grant(void *data, uint32_t client, const struct wire_grant *grant)
{
	struct mediatord *md = data;
	struct client *c;

	for (c = md->clients; c && c->id != client; c = c->next)
		;
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

/*
 * The grant watchdog revoked a group of a client (dispatcher_revoke_fn):
 * at the revocation a warning (the client is suspended); when its
 * completion has not come by the kill delay, its worker is killed and the
 * reaper cleans up as for a crash.
 */
static void revoke_grant(void *data, const struct dispatcher_revoked *r)
{
	struct mediatord *md = data;
	uint64_t now = mono_now_ns();
	struct client *c;

	for (c = md->clients; c && c->id != r->client; c = c->next)
		;
	if (!c)
		return;
	if (!r->kill) {
		log_warn(
		    "domain %s: client %u context %u: group of grant %llu held it for %llu ms, "
		    "past its watchdog deadline of %llu ms (bound %llu us); grant revoked, "
		    "client suspended until its completion",
		    domain_name(c->listener->domain), c->id, r->ctx_id,
		    (unsigned long long)r->wire_id,
		    (unsigned long long)((now - r->granted_ns) / 1000000u),
		    (unsigned long long)((r->deadline_ns - r->granted_ns) / 1000000u),
		    (unsigned long long)(r->bound_ns / 1000u));
		return;
	}
	log_error("domain %s: client %u context %u: group of grant %llu revoked %llu ms ago has "
		  "not completed (held %llu ms); killing worker %d",
		  domain_name(c->listener->domain), c->id, r->ctx_id,
		  (unsigned long long)r->wire_id,
		  (unsigned long long)((now - r->revoked_ns) / 1000000u),
		  (unsigned long long)((now - r->granted_ns) / 1000000u), (int)c->pid);
	domain_watchdog_killed(c->listener->domain);
	c->revoked = true;
	client_kill(c, SIGKILL);
}

/*
 * Opens one of a domain's sockets (its config @key names it in messages)
 * with the domain's socket_mode, socket_owner and socket_group, and
 * watches it with @fn. Returns false with the reason in @err.
 */
/*
 * Opens one of a domain's sockets (its config @key names it in messages)
 * with the domain's socket_mode, socket_owner and socket_group, or takes
 * over @kept_fd, the same socket a mediatord that died opened (-1: none),
 * and watches it with @fn. Returns false with the reason in @err.
 */
static bool open_domain_socket(struct mediatord *md, struct listener *l,
			       const struct domain_config *dc, struct unix_listener *sock,
			       struct loop_source **source, const char *path, const char *key,
			       int kept_fd, loop_fn fn, char *err, size_t err_size)
{
	char ebuf[256];
	bool taken = kept_fd >= 0 && unix_listener_adopt(sock, kept_fd, path) == 0;

	if (kept_fd >= 0 && !taken) {
		log_warn("domain %s: %s %s is gone; opened again", dc->name, key, path);
		close(kept_fd);
	}
	if (!taken &&
	    (unix_listener_open(sock, path, (mode_t)dc->socket_mode, MEDIATORD_LISTEN_BACKLOG, ebuf,
				sizeof(ebuf)) < 0 ||
	     unix_listener_chown(sock, dc->socket_uid, dc->socket_gid, ebuf, sizeof(ebuf)) < 0)) {
		snprintf(err, err_size, "domain %s: %s %s", dc->name, key, ebuf);
		return false;
	}
	*source = loop_add(md->loop, sock->fd, EPOLLIN, fn, l);
	if (!*source) {
		snprintf(err, err_size, "cannot watch %s: %s", path, strerror(errno));
		return false;
	}
	if (!taken && md->keeper) {
		struct keep_entry e = {.kind = sock == &l->sock ? KEEP_LISTENER_VTEST
								: KEEP_LISTENER_VHOST,
				       .domain = (uint32_t)(l - md->listeners)};

		snprintf(e.domain_name, sizeof(e.domain_name), "%s", dc->name);
		snprintf(e.path, sizeof(e.path), "%s", path);
		if (keeper_keep(md->keeper, &e, sock->fd) < 0)
			log_warn("domain %s: the keeper did not take %s: %s", dc->name, path,
				 strerror(errno));
	}
	log_info("domain %s (%s): %s on %s (mode %04o)%s", dc->name, config_class_name(dc->class),
		 key, path, dc->socket_mode, taken ? ", taken over" : "");
	return true;
}

/*
 * Each domain's worker user and directories (domain_dirs.h). Returns 0 or
 * a negative errno with a reason in @err (a worker user that does not
 * exist).
 */
static int prepare_domains(struct mediatord *md, char *err, size_t err_size)
{
	const struct mediator_config *cfg = &md->cfg;

	for (size_t i = 0; i < cfg->n_domains; i++) {
		struct listener *l = &md->listeners[i];
		const char *name = cfg->domains[i].name;
		char ebuf[512];
		int r =
		    worker_user_resolve(cfg->domains[i].worker_uid, &l->user, ebuf, sizeof(ebuf));

		if (r < 0) {
			snprintf(err, err_size, "domain %s: %s", name, ebuf);
			return r;
		}
		if (!l->user.switch_user && geteuid() == 0)
			log_warn("domain %s: workers run as root (worker_user = %s): a guest that "
				 "breaks its worker owns the host",
				 name, l->user.name);
		domain_dirs_prepare(cfg, name, &l->user, &l->dirs);
	}
	return 0;
}

struct mediatord *mediatord_create(const struct mediator_config *cfg, const char *worker_path,
				   char *err, size_t err_size)
{
	struct mediatord *md = calloc(1, sizeof(*md));
	struct kept *kept = calloc(1, sizeof(*kept));
	struct control_access control_access;
	sigset_t mask;
	int board;

	if (!md || !kept) {
		free(kept);
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	md->cfg = *cfg;
	md->signal_fd = -1;
	md->resume_timer = -1;
	md->started_ns = mono_now_ns();
	snprintf(md->worker_path, sizeof(md->worker_path), "%s", worker_path);
	for (size_t i = 0; i < CONFIG_MAX_DOMAINS; i++) {
		md->listeners[i].sock.fd = -1;
		md->listeners[i].vhost_sock.fd = -1;
	}
	if (cfg->renderer == MEDIATOR_RENDERER_EGL_GBM &&
	    access(cfg->render_node, R_OK | W_OK) < 0) {
		snprintf(err, err_size, "renderer egl-gbm: render node %s: %s", cfg->render_node,
			 strerror(errno));
		goto fail;
	}
	if (prepare_domains(md, err, err_size) < 0)
		goto fail;
	/* Before anything a keeper must not inherit. */
	takeover_open_keeper(md, kept);
	md->loop = loop_create();
	if (!md->loop) {
		snprintf(err, err_size, "cannot create the event loop: %s", strerror(errno));
		goto fail;
	}
	md->service = service_notify_create(md->loop);
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	md->signal_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (md->signal_fd < 0 ||
	    !(md->signal_source = loop_add(md->loop, md->signal_fd, EPOLLIN, on_signal, md))) {
		snprintf(err, err_size, "cannot watch signals: %s", strerror(errno));
		goto fail;
	}
	for (size_t i = 0; i < cfg->n_domains; i++) {
		struct listener *l = &md->listeners[i];
		const struct domain_config *dc = &cfg->domains[i];

		l->md = md;
		l->domain = domain_create(dc);
		if (!l->domain) {
			snprintf(err, err_size, "out of memory");
			goto fail;
		}
		if (dc->vtest_socket[0] &&
		    !open_domain_socket(
			md, l, dc, &l->sock, &l->source, dc->vtest_socket, "vtest_socket",
			takeover_kept_fd(kept, KEEP_LISTENER_VTEST, i), on_accept, err, err_size))
			goto fail;
		if (dc->vhost_user_socket[0] &&
		    !open_domain_socket(md, l, dc, &l->vhost_sock, &l->vhost_source,
					dc->vhost_user_socket, "vhost_user_socket",
					takeover_kept_fd(kept, KEEP_LISTENER_VHOST, i),
					on_accept_vm, err, err_size))
			goto fail;
	}
	md->dispatcher =
	    dispatcher_create(md->loop, cfg, md->started_ns, send_grant, md, err, err_size);
	if (!md->dispatcher)
		goto fail;
	/* The workers taken over share the board with new ones. */
	board = takeover_kept_fd(kept, KEEP_BOARD, 0);
	if (board >= 0 && dispatcher_adopt_board(md->dispatcher, board) < 0) {
		log_warn("the grant board kept for the restart is not one; workers taken over ask "
			 "for every grant");
		close(board);
	} else if (board < 0 && md->keeper) {
		struct keep_entry e = {.kind = KEEP_BOARD};

		if (keeper_keep(md->keeper, &e, dispatcher_board_fd(md->dispatcher)) < 0)
			log_warn("the keeper did not take the grant board: %s", strerror(errno));
	}
	dispatcher_set_revoke(md->dispatcher, revoke_grant, md);
	control_access = (struct control_access){
	    .gid = cfg->control_gid, .self_uid = geteuid(), .admin_gid = cfg->admin_gid};
	md->control = control_create(md->loop, cfg->control_socket, &control_access,
				     &mediatord_control_ops, md, err, err_size);
	if (!md->control)
		goto fail;
	if (md->keeper) {
		takeover_resume_budgets(md);
		takeover_adopt_clients(md, kept);
	}
	free(kept);
	return md;
fail:
	takeover_close_kept(kept);
	free(kept);
	mediatord_destroy(md);
	return NULL;
}

int mediatord_run(struct mediatord *md)
{
	md->served = true;
	return loop_run(md->loop);
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

static void stop_workers(struct mediatord *md)
{
	uint64_t deadline = mono_now_ns() + MEDIATORD_STOP_GRACE_MS * 1000000ull;

	for (struct client *c = md->clients; c; c = c->next)
		client_kill(c, SIGTERM);
	while (md->clients && mono_now_ns() < deadline) {
		reap_workers(md);
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

void mediatord_destroy(struct mediatord *md)
{
	if (!md)
		return;
	if (md->served) {
		/* A clean stop: the workers and the keeper go too. */
		stop_workers(md);
		keeper_quit(md->keeper);
		md->keeper = NULL;
	} else if (md->took_over) {
		/* A failed start: the predecessor's workers stay with the keeper for another try.
		 */
		keeper_close(md->keeper);
		md->keeper = NULL;
		while (md->clients)
			client_free(md->clients);
	} else {
		/* A failed fresh start: its keeper keeps nothing worth waiting for. */
		keeper_quit(md->keeper);
		md->keeper = NULL;
	}
	loop_remove(md->resume_source);
	service_notify_destroy(md->service);
	if (md->resume_timer >= 0)
		close(md->resume_timer);
	control_destroy(md->control);
	dispatcher_destroy(md->dispatcher);
	for (size_t i = 0; i < CONFIG_MAX_DOMAINS; i++) {
		struct listener *l = &md->listeners[i];

		loop_remove(l->source);
		unix_listener_close(&l->sock);
		loop_remove(l->vhost_source);
		unix_listener_close(&l->vhost_sock);
		domain_destroy(l->domain);
	}
	if (md->trace)
		trace_close(md->trace);
	loop_remove(md->signal_source);
	if (md->signal_fd >= 0)
		close(md->signal_fd);
	loop_destroy(md->loop);
	free(md);
}
