// SPDX-License-Identifier: MIT
/*
 * What the files of mediatord's core share (mediatord.h is its public
 * face): its objects and the functions each file offers the others. All
 * of it runs on mediatord's one thread.
 *
 * Objects: struct mediatord owns one struct listener per configured
 * domain (its struct domain, its sockets, its workers' user and
 * directories) and a list of struct client, one per live worker: its
 * process, its record channel and what it reported. Each client belongs
 * to one listener.
 *
 * The files, by job:
 *   mediatord.c        set-up, signals and tear-down (mediatord.h)
 *   clients.c          accepting clients, their workers' ends, the grant
 *                      path's way to them
 *   client_records.c   reading a worker's records
 *   worker_spawn.c     starting a worker process
 *   control_answers.c  the control socket's answers (control.h)
 *   takeover.c         the keeper: what outlives mediatord, taking it over
 */
#ifndef MEDIATOR_MEDIATORD_PRIV_H
#define MEDIATOR_MEDIATORD_PRIV_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/loop.h"
#include "common/unix_listener.h"
#include "common/wire.h"
#include "config/config.h"
#include "daemon/control.h"
#include "daemon/dispatcher.h"
#include "daemon/keeper.h"
#include "daemon/mediatord.h"
#include "daemon/domain_dirs.h"
#include "daemon/domain_limits.h"
#include "daemon/penalties.h"
#include "daemon/worker_user.h"

/* The latest cost-model report of a context, as its worker sent it. */
struct model_report {
	bool valid;
	uint32_t client;
	char client_name[WIRE_NAME_MAX];
	struct wire_model m;
};

/*
 * A domain's groups with a draw longer than a piece that their worker
 * could not cut into scissor tiles (struct wire_grant_request's untiled),
 * and the last context that sent one, for show-budgets.
 */
struct untiled_report {
	uint64_t groups;
	uint32_t client, ctx_id;
	uint32_t why; /* enum predict_untiled */
	char name[WIRE_NAME_MAX];
};

struct listener {
	struct mediatord *md;
	struct domain *domain;
	struct model_report last_model; /* of the domain's most recent reporter */
	struct unix_listener sock;	/* vtest */
	struct loop_source *source;
	/* vhost-user-gpu: one VM at a time. */
	struct unix_listener vhost_sock;
	struct loop_source *vhost_source;
	bool vm_connected;
	struct worker_user user;	      /* its workers run as */
	struct domain_dirs dirs;	      /* its learned models and shader cache */
	struct domain_limits limits;	      /* its max_clients and domain_memory_mb */
	uint32_t n_clients;		      /* its clients now */
	struct domain_limits_log refused_log; /* its refused connections' lines */
	struct domain_limits_log ended_log;   /* its workers ended for memory */
	struct penalties penalties;	      /* its users whose groups were revoked */
	struct untiled_report untiled;	      /* its long draws that could not be cut */
	/*
	 * A normal domain's workers make their renderers one at a time
	 * (client_start.c): the one making its renderer now (no WIRE_HELLO
	 * yet); those waiting are its clients asked and not answered.
	 */
	struct client *starting;
};

/* A live guest context of a client, for show-budgets' context list. */
struct client_ctx {
	uint32_t ctx_id;
	uint64_t groups;
	char name[WIRE_NAME_MAX];
};

/* Contexts listed per client: a VM holds up to VGPU_MAX_CONTEXTS (64). */
#define MEDIATORD_MAX_CLIENT_CONTEXTS 64u

struct client {
	struct mediatord *md;
	struct listener *listener;
	uint32_t id;
	pid_t pid;
	int record_fd;
	struct loop_source *source;
	uint32_t contexts;
	struct client_ctx ctx_list[MEDIATORD_MAX_CLIENT_CONTEXTS];
	uint32_t n_ctx_list; /* <= contexts: beyond the list's room they are only counted */
	bool vm;	     /* a vhost-user-gpu connection */
	uint64_t spawned_ns; /* when its worker was started (0: taken over) */
	uint64_t asked_ns;   /* when its worker asked to make its renderer (0: not yet) */
	uint64_t go_ns;	     /* when it was answered (0: not yet) */
	bool renderer_up;    /* its worker said hello: its renderer is up */
	bool expect_logged;  /* its first context's protection of its frames was logged */
	int32_t peer_pid;
	uint64_t last_seq;
	uint64_t groups;
	char name[WIRE_NAME_MAX];
	struct model_report model;
	bool revoked;	/* the grant watchdog stopped its worker: what it still sends is ignored */
	uid_t peer_uid; /* its connection's peer ((uid_t)-1: not known): whom penalties name */
	/* client_records.c: the second its worker's records are counted in, its unsolicited
	 * records and its completed groups in it, and those of the second before */
	uint64_t rate_since;
	uint32_t rate_count, rate_dones, rate_dones_before;
	/* The grant watchdog's (client_watchdog.c). */
	bool demoted;		   /* its worker runs at idle priority */
	bool awaiting_late;	   /* a revoked group's completion has not come */
	uint64_t revocations;	   /* of its groups */
	uint64_t raster_at_revoke; /* its rasterizer threads' CPU time at the revocation */
	uint64_t revoked_past_ns;  /* when the revoked group passes its own bound (grant + bound) */
	bool revoked_young;	   /* the revoked group was young: its bound the mediator's guess */
	uint64_t cpu_at_check;	   /* its threads' CPU time at the last kill stage check */
	uint64_t stuck_since;	   /* when it stopped making progress (0: it makes some) */
	bool memory_ended;	   /* killed for its domain's domain_memory_mb: no longer counted */
	/*
	 * Taken over from a mediatord that died (keeper.h): its worker is no
	 * child of ours, watched through @pidfd; what it sends before its
	 * answer to WIRE_RESUME was for the dead one (@resuming).
	 */
	bool adopted;
	bool resuming;
	bool resume_held; /* a normal domain's: WIRE_RESUME not sent yet (on_resume_timer()) */
	/*
	 * Its worker, whom every signal goes to: taken while the worker was
	 * our unreaped child (so it is the worker's), or the keeper's, taken
	 * so by the mediatord that spawned it. Never -1 while the client is
	 * listed; the client closes it.
	 */
	int pidfd;
	struct loop_source *pid_source;
	struct client *next;
};

struct mediatord {
	struct mediator_config cfg;
	char worker_path[4096];
	struct loop *loop;
	int signal_fd;
	struct loop_source *signal_source;
	struct listener listeners[CONFIG_MAX_DOMAINS];
	struct control *control;
	struct dispatcher *dispatcher;
	struct trace *trace;
	struct client *clients;
	uint32_t n_clients;
	uint32_t next_client_id;
	uint64_t started_ns;
	uint64_t bad_records;
	struct keeper *keeper; /* NULL: workers die with mediatord */
	bool served;	       /* mediatord_run() ran: a stop is a clean one */
	bool took_over;	       /* it reached a keeper that kept a predecessor's work */
	bool handing_over;     /* a SIGTERM under a lifeline: the keeper keeps the clients */
	int lifeline;	       /* its end of the lifeline (lifeline.h); -1: none */
	int resume_timer;      /* timerfd: the held clients' WIRE_RESUME is due; -1: none */
	struct service_notify *service; /* systemd's watchdog keep-alive; NULL: none */
	struct loop_source *resume_source;
	int limits_timer; /* timerfd: each domain's memory against its total
			     (clients_check_memory()) */
	struct loop_source *limits_source;
	struct vm_socket *vm_socket; /* libvirt's back-ends hand VMs over here; NULL: no vms */
};

/* The config of @l's domain. */
static inline const struct domain_config *listener_config(const struct listener *l)
{
	return &l->md->cfg.domains[l - l->md->listeners];
}

/* ---- mediatord.c --------------------------------------------------------- */

/*
 * Takes the safety frames the scheduler closed: into their domains' frame
 * latency, and into the trace when one is open (closed when it fails).
 */
void mediatord_take_frames(struct mediatord *md);

/* ---- clients.c ----------------------------------------------------------- */

/*
 * Leaves @c to the keeper (a hand-over, mediatord exits): closes mediatord's
 * descriptors of it and frees it, telling nobody: the dispatcher would
 * grant another worker's group, the keeper would forget it.
 */
void client_leave(struct client *c);
/* Forgets @c: its domain's counts, the dispatcher's, the keeper's; closes its channel. */
void client_free(struct client *c);
/*
 * The limits timer's callback (loop_fn, @data the mediatord): ends the
 * newest worker of each domain whose workers hold more than its
 * domain_memory_mb (one a domain per call; the next call sees the rest),
 * and logs how many refusals the rate limit kept out of the log; a normal
 * domain's worker slow to make its renderer lets the next one begin.
 */
void clients_check_memory(struct loop_source *source, int fd, uint32_t events, void *data);
/* The client with id @id, or NULL. */
struct client *client_by_id(struct mediatord *md, uint32_t id);
/* Signals @c's worker, through its pidfd (never by its pid, which may be another's by now). */
void client_kill(const struct client *c, int sig);
/*
 * Serves @client_fd (taken in every case), a connection to domain @l: a
 * VM's vhost-user connection when @vm, else a vtest client's. Starts its
 * worker. Returns the new client's id (> 0), or a negative errno with the
 * reason in @why (the domain is at a limit, or has a VM when @vm; logged
 * too); on success @why holds the domain's name.
 */
int clients_add(struct listener *l, bool vm, int client_fd, char *why, size_t why_size);
/* The loop's callbacks of a domain's vtest and vhost-user sockets (loop_fn, @data the listener). */
void client_on_accept(struct loop_source *source, int fd, uint32_t events, void *data);
void client_on_accept_vm(struct loop_source *source, int fd, uint32_t events, void *data);
/* Reaps the workers that exited (SIGCHLD) and forgets their clients. */
void clients_reap(struct mediatord *md);
/* Stops every worker (SIGTERM, SIGKILL after MEDIATORD_STOP_GRACE_MS) and forgets its client. */
void clients_stop(struct mediatord *md);
/* The dispatcher's way to a worker (dispatcher_send_fn, @data the struct mediatord). */
int client_send_grant(void *data, uint32_t client, const struct wire_grant *grant);

/* ---- client_start.c ------------------------------------------------------ */

/*
 * @c's worker asks to make its renderer (WIRE_START): answered now, or
 * once the worker of its normal domain making its renderer is done.
 * Returns -EPROTO (with the rule in @err) for a worker that asked before.
 */
int client_start_ask(struct client *c, char *err, size_t err_size);
/* @c's worker has its renderer up, or is gone: the next waiting one makes its renderer. */
void client_started(struct client *c);
/* The limits timer's part: a worker slow to make its renderer lets the next one start beside it. */
void client_start_check_slow(struct listener *l, uint64_t now_ns);
/* mediatord stops: no worker is answered any more. */
void client_start_forget(struct mediatord *md);

/* ---- client_watchdog.c --------------------------------------------------- */

/*
 * The grant watchdog revoked a group of a client, or its kill stage came
 * (dispatcher_revoke_fn, @data the struct mediatord; see
 * client_watchdog.c).
 */
uint64_t client_revoked(void *data, const struct dispatcher_revoked *r);
/* A new client @c: at idle priority from the start in a normal domain, or when its user is
 * penalised. */
void client_watchdog_start(struct client *c);
/*
 * @c completed a group: its worker's priority back when nothing of it is
 * revoked any more and it does not report short.
 */
void client_watchdog_done(struct client *c);
/*
 * @c's worker was found reporting its groups short (dispatcher_done()):
 * penalised as for a revocation (its user's level one higher), at idle
 * priority while it stays distrusted.
 */
void client_watchdog_short(struct client *c);
/*
 * @c's worker ran bulk host work at idle priority, lowered by itself
 * (worker/host_work.h), and is done: back to its domain's priority, unless
 * mediatord keeps it at idle priority (demoted) or its domain is not normal.
 * _begin: more host work comes while that put-back was on its way: kept at
 * idle priority (same exceptions). _held: it ran at the idle priority
 * mediatord had put the worker at itself: counted, nothing changes.
 */
void client_watchdog_host_work_begin(struct client *c);
void client_watchdog_host_work_done(struct client *c);
void client_watchdog_host_work_held(struct client *c);

/* ---- client_records.c ---------------------------------------------------- */

/*
 * Reads the records waiting on @c's channel, @max packets at most
 * (CLIENT_RECORDS_ALL: all, for a worker that has ended); on the first that
 * breaks a rule, counts it (bad_records), logs it and kills the worker.
 * A worker that sends more records of its own accord a second than any
 * honest one breaks a rule too. Returns false when the channel is closed or broken.
 */
#define CLIENT_RECORDS_ALL INT_MAX
bool client_read_records(struct client *c, int max);
/*
 * The loop's callback of a client's record channel (loop_fn, @data the
 * client): reads what waits; a channel closed or broken is closed and no
 * longer watched (the worker is forgotten when it is reaped).
 */
void client_on_record(struct loop_source *source, int fd, uint32_t events, void *data);

/* ---- control_answers.c --------------------------------------------------- */

/* mediatord's answers to the control socket's requests; their data is the struct mediatord. */
extern const struct control_ops mediatord_control_ops;

/* ---- reload.c ------------------------------------------------------------ */

/*
 * Reads the config file again (SIGHUP, systemctl reload) and applies, with
 * every client kept, what may change live: each domain's period, budget
 * and deadline (as set-budget does, and kept for a successor), and the
 * scheduler's policy, max_inflight, oversize, max_defer_us and grant
 * watchdog. Other changes are named in @msg: they apply at the next
 * restart. Returns 0, or -1 when the file is invalid or names other
 * domains (nothing applied) or a budget was refused; @msg says what.
 */
int mediatord_reload(struct mediatord *md, char *msg, size_t msg_size);

/* ---- takeover.c ---------------------------------------------------------- */

/* What a mediatord that died left with the keeper (keeper.h). */
struct kept {
	size_t n;
	struct keep_entry e[MEDIATORD_MAX_KEPT];
	int fd[MEDIATORD_MAX_KEPT];
	int pidfd[MEDIATORD_MAX_KEPT]; /* a KEEP_CLIENT's worker (its KEEP_WORKER); -1: none */
};

/*
 * Starts the keeper, or reaches the one a mediatord that died left (then
 * @k holds what it kept, when it is of the same domains). Without one
 * (restart_wait_s = 0, or it failed) workers die with mediatord.
 */
void takeover_open_keeper(struct mediatord *md, struct kept *k);
/* The kept descriptor of @kind (a listener of domain @domain, or the board), or -1; taken once. */
int takeover_kept_fd(struct kept *k, uint32_t kind, uint32_t domain);
/* The kept listening socket of @kind at @path (a socket that is no domain's), or -1; taken once. */
int takeover_kept_listener(struct kept *k, uint32_t kind, const char *path);
/* Closes what @k still holds. */
void takeover_close_kept(struct kept *k);
/* Keeps domain @i's budget set at run time (set-budget, a reload) for a successor. */
void takeover_keep_budget(struct mediatord *md, int i, uint32_t period_us, uint32_t budget_us,
			  uint32_t deadline_us);
/* Applies the budgets set at run time before the restart (mediatorctl set-budget). */
void takeover_resume_budgets(struct mediatord *md);
/*
 * Takes the lifeline (lifeline.h) a predecessor left with the keeper in @k,
 * or makes one and gives the keeper a copy; none without a keeper.
 */
void takeover_hold_lifeline(struct mediatord *md, struct kept *k);
/* Takes over the workers @k holds and tells them (WIRE_RESUME); closes the rest. */
void takeover_adopt_clients(struct mediatord *md, struct kept *k);
/* Gives the keeper a copy of @c's record channel and its worker's pidfd, for a successor. */
void takeover_keep_client(struct mediatord *md, const struct client *c);

/* ---- vm_clients.c -------------------------------------------------------- */

/*
 * Opens vm_socket (or takes over @kept's) when a domain lists vms, and
 * gives the keeper a copy. Returns 0, or a negative errno with a reason in
 * @err.
 */
int vm_clients_open(struct mediatord *md, struct kept *kept, char *err, size_t err_size);

/* ---- worker_spawn.c ------------------------------------------------------ */

/*
 * Starts mediator-worker for client @id of @l's domain (@vm: a
 * vhost-user-gpu connection) with @client_fd on WIRE_CLIENT_FD, @worker_fd
 * on WIRE_WORKER_FD and the grant board on WIRE_BOARD_FD. The caller keeps
 * and closes its descriptors. Returns the worker's pid, or -1 with errno.
 */
pid_t worker_spawn(struct mediatord *md, struct listener *l, uint32_t id, bool vm, int client_fd,
		   int worker_fd);

#endif
