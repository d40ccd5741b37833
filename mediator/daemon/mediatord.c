// SPDX-License-Identifier: MIT
/*
 * mediatord's core (mediatord.h): set-up, signals and tear-down.
 *
 * mediatord_create() makes, in this order: each domain's worker user and
 * directories, the keeper (takeover.c; before anything it must not
 * inherit), the loop and its signalfd, each domain's struct domain and
 * sockets (taken over from a predecessor when the keeper holds them), the
 * dispatcher and its grant board, the control socket (control_answers.c),
 * and the workers taken over. mediatord_run() serves on the loop until
 * SIGTERM or SIGINT; SIGCHLD reaps workers (clients.c).
 * mediatord_destroy() undoes it: after a clean stop with the workers and
 * the keeper; after a failed start that took over, leaving the
 * predecessor's workers with the keeper for another try.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/loop.h"
#include "common/unix_listener.h"
#include "common/util.h"
#include "daemon/control.h"
#include "daemon/dispatcher.h"
#include "daemon/domain.h"
#include "daemon/domain_dirs.h"
#include "daemon/domain_limits.h"
#include "daemon/keeper.h"
#include "daemon/mediatord.h"
#include "daemon/mediatord_priv.h"
#include "daemon/service_notify.h"
#include "daemon/lifeline.h"
#include "daemon/trace.h"
#include "daemon/vm_socket.h"
#include "daemon/worker_user.h"

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

/* SIGHUP: the config file read again (mediatord_reload()), told to the log and systemd. */
static void reload(struct mediatord *md)
{
	char msg[2048];

	service_notify_reloading();
	if (mediatord_reload(md, msg, sizeof(msg)) < 0)
		log_error("reload of %s: %s", md->cfg.path, msg);
	else
		log_info("reload of %s: %s", md->cfg.path, msg);
	service_notify_ready(msg);
}

static void on_signal(struct loop_source *source, int fd, uint32_t events, void *data)
{
	struct mediatord *md = data;
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			clients_reap(md);
			break;
		case SIGTERM:
			if (md->keeper && lifeline_held(md->lifeline)) {
				log_info(
				    "signal %u: leaving the clients to the keeper; a mediatord "
				    "started again takes them over (systemctl restart), and "
				    "if the unit stops instead the keeper ends them",
				    si.ssi_signo);
				md->handing_over = true;
				service_notify_stopping();
				loop_quit(md->loop);
				break;
			}
			if (md->lifeline >= 0)
				log_warn("the service manager holds no lifeline (is the unit's "
					 "FileDescriptorStoreMax= 0?): a restart cannot keep the "
					 "clients");
			/* fall through */
		case SIGINT:
			log_info("signal %u: shutting down", si.ssi_signo);
			service_notify_stopping();
			loop_quit(md->loop);
			break;
		case SIGHUP:
			reload(md);
			break;
		default:
			break;
		}
	}
	if (md->trace)
		trace_tick(md->trace, mono_now_ns());
}

/* ---- set-up and tear-down ---------------------------------------------- */

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

/*
 * Says at start how the domains' memory totals are kept: a cgroup v2
 * memory controller delegated to mediatord is detected, but for now the
 * totals are always counted from each worker's /proc (domain_limits.h).
 */
static void log_memory_limits(const struct mediator_config *cfg)
{
	char self[1024] = "", where[600];
	FILE *f = fopen("/proc/self/cgroup", "re");
	size_t n = 0;

	if (f) {
		n = fread(self, 1, sizeof(self) - 1, f);
		fclose(f);
	}
	self[n] = '\0';
	if (domain_limits_cgroup_probe("/sys/fs/cgroup", self, where, sizeof(where)) == 0)
		log_info("memory: a cgroup v2 memory controller is delegated at %s, not used "
			 "yet; domain_memory_mb is counted from the workers' RssAnon, "
			 "worker_memory_mb is each worker's RLIMIT_DATA",
			 where);
	else
		log_info("memory: no cgroup v2 memory controller to delegate (%s); "
			 "domain_memory_mb is counted from the workers' RssAnon, "
			 "worker_memory_mb is each worker's RLIMIT_DATA",
			 where);
	for (size_t i = 0; i < cfg->n_domains; i++)
		log_info("domain %s: at most %u clients, %u MiB of memory together%s, %u MiB each",
			 cfg->domains[i].name, cfg->domains[i].max_clients,
			 cfg->domains[i].domain_memory_mb,
			 cfg->domains[i].domain_memory_mb ? "" : " (0: unlimited)",
			 cfg->domains[i].worker_memory_mb);
}

/* Arms the timer of clients_check_memory(): every DOMAIN_LIMITS_CHECK_MS. */
static int start_limits_timer(struct mediatord *md)
{
	struct itimerspec every = {
	    .it_interval = {.tv_sec = DOMAIN_LIMITS_CHECK_MS / 1000,
			    .tv_nsec = (DOMAIN_LIMITS_CHECK_MS % 1000) * 1000000L},
	};

	every.it_value = every.it_interval;
	md->limits_timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (md->limits_timer < 0 || timerfd_settime(md->limits_timer, 0, &every, NULL) < 0)
		return -errno;
	md->limits_source = loop_add(md->loop, md->limits_timer, EPOLLIN, clients_check_memory, md);
	return md->limits_source ? 0 : -ENOMEM;
}

/*
 * The pid of a mediatord that serves @path, the control socket, or 0 when
 * none answers there. A control connection costs the running one nothing
 * (a probe of a domain socket would start a worker there).
 */
static pid_t running_mediatord(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct ucred cred = {0};
	socklen_t len = sizeof(cred);
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path))
		return 0;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	if (connect(fd, (const struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		cred.pid = 0;
	close(fd);
	return cred.pid;
}

struct mediatord *mediatord_create(const struct mediator_config *cfg, const char *worker_path,
				   char *err, size_t err_size)
{
	struct mediatord *md = calloc(1, sizeof(*md));
	struct kept *kept = calloc(1, sizeof(*kept));
	struct control_access control_access;
	sigset_t mask;
	int board, r;

	if (!md || !kept) {
		free(kept);
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	md->cfg = *cfg;
	md->signal_fd = -1;
	md->lifeline = -1;
	md->resume_timer = -1;
	md->limits_timer = -1;
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
	/* Before the keeper: one that serves a running mediatord would refuse us. */
	if ((r = (int)running_mediatord(cfg->control_socket)) > 0) {
		snprintf(err, err_size,
			 "control_socket %s: mediatord %d serves it; one mediatord per "
			 "configuration (its domains' sockets are that one's)",
			 cfg->control_socket, r);
		goto fail;
	}
	if (prepare_domains(md, err, err_size) < 0)
		goto fail;
	/* The service manager's copy of the lifeline is all it needs (lifeline.h). */
	lifeline_close_passed();
	/* Before anything a keeper must not inherit. */
	takeover_open_keeper(md, kept);
	takeover_hold_lifeline(md, kept);
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
		l->limits = domain_limits_from_config(dc);
		l->domain = domain_create(dc);
		if (!l->domain) {
			snprintf(err, err_size, "out of memory");
			goto fail;
		}
		if (dc->vtest_socket[0] &&
		    !open_domain_socket(md, l, dc, &l->sock, &l->source, dc->vtest_socket,
					"vtest_socket",
					takeover_kept_fd(kept, KEEP_LISTENER_VTEST, i),
					client_on_accept, err, err_size))
			goto fail;
		if (dc->vhost_user_socket[0] &&
		    !open_domain_socket(md, l, dc, &l->vhost_sock, &l->vhost_source,
					dc->vhost_user_socket, "vhost_user_socket",
					takeover_kept_fd(kept, KEEP_LISTENER_VHOST, i),
					client_on_accept_vm, err, err_size))
			goto fail;
	}
	if (vm_clients_open(md, kept, err, err_size) < 0)
		goto fail;
	r = start_limits_timer(md);
	if (r < 0) {
		snprintf(err, err_size, "cannot start the timer of the domains' memory: %s",
			 strerror(-r));
		goto fail;
	}
	log_memory_limits(cfg);
	md->dispatcher =
	    dispatcher_create(md->loop, cfg, md->started_ns, client_send_grant, md, err, err_size);
	if (!md->dispatcher)
		goto fail;
	/* The workers taken over share their domain's board with new ones. */
	for (size_t i = 0; i < cfg->n_domains; i++) {
		board = takeover_kept_fd(kept, KEEP_BOARD, (uint32_t)i);
		if (board >= 0 && dispatcher_adopt_board(md->dispatcher, (int)i, board) < 0) {
			log_warn("the grant board of domain %s kept for the restart is not one; "
				 "workers taken over ask for every grant",
				 cfg->domains[i].name);
			close(board);
		} else if (board < 0 && md->keeper) {
			struct keep_entry e = {.kind = KEEP_BOARD, .domain = (uint32_t)i};

			snprintf(e.domain_name, sizeof(e.domain_name), "%s", cfg->domains[i].name);
			if (keeper_keep(md->keeper, &e,
					dispatcher_board_fd(md->dispatcher, (int)i)) < 0)
				log_warn("the keeper did not take domain %s's grant board: %s",
					 cfg->domains[i].name, strerror(errno));
		}
	}
	dispatcher_set_revoke(md->dispatcher, client_revoked, md);
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

void mediatord_destroy(struct mediatord *md)
{
	if (!md)
		return;
	if (md->served && md->handing_over) {
		/* As on a death: the keeper keeps the sockets and the workers for a successor. */
		while (md->clients)
			client_leave(md->clients);
		keeper_close(md->keeper);
		md->keeper = NULL;
		for (size_t i = 0; i < CONFIG_MAX_DOMAINS; i++) {
			unix_listener_leave(&md->listeners[i].sock);
			unix_listener_leave(&md->listeners[i].vhost_sock);
		}
		vm_socket_destroy(md->vm_socket, true);
		md->vm_socket = NULL;
	} else if (md->served) {
		/* A clean stop: the workers and the keeper go too. */
		clients_stop(md);
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
	loop_remove(md->limits_source);
	if (md->limits_timer >= 0)
		close(md->limits_timer);
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
	/* A failed takeover leaves the path to the keeper's copy, for another try. */
	vm_socket_destroy(md->vm_socket, !md->served && md->took_over);
	if (md->trace)
		trace_close(md->trace);
	loop_remove(md->signal_source);
	if (md->signal_fd >= 0)
		close(md->signal_fd);
	if (md->lifeline >= 0)
		close(md->lifeline);
	loop_destroy(md->loop);
	free(md);
}
