// SPDX-License-Identifier: MIT
/*
 * The keeper: what lets a mediatord that died (SIGKILL, a crash) be
 * started again without any VM losing its GPU.
 *
 * At a fresh start mediatord forks a small process, the keeper, and gives
 * it a copy of every descriptor a successor needs: the domains' listening
 * sockets, the grant boards, each worker's end of its record channel
 * (with the worker's client id, pid, domain and whether the domain is a
 * safety one) and each worker's pidfd, and the budgets set at run time.
 * Workers are started to outlive mediatord. While mediatord lives the
 * keeper only stores.
 *
 * When mediatord dies, the keeper withdraws the boards' offers, reads and
 * drops what the workers had sent to the dead mediatord, and sends each
 * worker WIRE_ORPHANED (wire.h): a safety domain's workers go on
 * dispatching without grants, the others' groups wait. Connections made
 * meanwhile wait in the listening sockets' backlog. A worker whose pidfd
 * says it ended is forgotten (its channel closed), even while its channel
 * is open elsewhere: a worker may have passed its end on. A mediatord
 * started again connects to the keeper's socket, <control_socket>.keeper,
 * gets every descriptor back (keeper_take()), takes the workers over
 * through their pidfds (WIRE_RESUME) and goes on. If none comes within
 * restart_wait_s, the keeper exits: every channel closes and the workers
 * stop. Nor does it wait when the service manager let go of the lifeline
 * (lifeline.h: the unit was stopped, not restarted).
 *
 * A worker is only ever known by its pidfd, taken when mediatord spawned
 * it (its unreaped child: the pid is the worker's), never by its pid,
 * which another process may have by now: the pid is for the logs.
 *
 * A mediatord that stops cleanly (SIGINT; SIGTERM without a lifeline the
 * service manager holds) tells the keeper to quit
 * (keeper_quit()); so does one whose config no longer matches what is kept
 * (other domains), before it starts a keeper of its own.
 */
#ifndef MEDIATOR_KEEPER_H
#define MEDIATOR_KEEPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"

/* Appended to control_socket for the keeper's socket. */
#define KEEPER_SOCKET_SUFFIX ".keeper"

enum keep_kind {
	KEEP_LISTENER_VTEST = 1, /* a domain's vtest_socket */
	KEEP_LISTENER_VHOST = 2, /* a domain's vhost_user_socket */
	KEEP_BOARD = 3,		 /* a domain's grant board */
	KEEP_CLIENT = 4,	 /* mediatord's end of a worker's record channel */
	KEEP_WORKER = 5,	 /* the pidfd of client client_id's worker (kept after its
				    KEEP_CLIENT; handed over right after it) */
	KEEP_LIFELINE = 6,	 /* mediatord's end of the lifeline (lifeline.h): when the
				    other end hangs up while mediatord is away, no successor
				    comes and the workers end at once */
	KEEP_LISTENER_VMS = 7,	 /* vm_socket (vm_socket.h); domain 0 */
};

#define KEEP_CLIENT_VM	   (1u << 0) /* a vhost-user-gpu connection */
#define KEEP_CLIENT_SAFETY (1u << 1) /* of a safety domain: served freely while orphaned */

/* One kept descriptor and what it is. */
struct keep_entry {
	uint32_t kind;	 /* enum keep_kind */
	uint32_t domain; /* index in the config (a board's too) */
	uint32_t client_id;
	int32_t pid;	/* the client's worker: for the logs only (it may be reused) */
	uint32_t flags; /* KEEP_CLIENT_* */
	char domain_name[CONFIG_NAME_MAX];
	char path[108]; /* a listener's path */
};

/* A budget set at run time (mediatorctl set-budget), kept for a successor. */
struct keep_budget {
	uint32_t domain;
	uint32_t period_us, budget_us, deadline_us;
	char domain_name[CONFIG_NAME_MAX];
};

struct keeper;

/*
 * Connects to the keeper of a mediatord that died, at @path, or starts a
 * new one listening there that waits up to @wait_s for a successor.
 * *@adopted says which: true when there are kept descriptors to take
 * (keeper_take()). NULL with a reason in @err when neither works
 * (mediatord then runs without one: its workers die with it).
 */
struct keeper *keeper_open(const char *path, uint32_t wait_s, bool *adopted, char *err,
			   size_t err_size);
/*
 * The descriptors and budgets a predecessor left, once each, after
 * keeper_open() said adopted: returns the next entry's descriptor (the
 * caller owns it) and fills @e, or -1 when there is none left; a
 * client's KEEP_WORKER, when one was kept, comes right after its
 * KEEP_CLIENT. Budgets come through keeper_take_budget() the same way
 * (false: none left).
 */
int keeper_take(struct keeper *k, struct keep_entry *e);
bool keeper_take_budget(struct keeper *k, struct keep_budget *b);
/*
 * Gives the keeper a copy of @fd (the caller keeps its own) described by
 * @e. A KEEP_WORKER's pidfd goes after its client's KEEP_CLIENT; the
 * keeper drops one for no client it holds. 0 or -errno.
 */
int keeper_keep(struct keeper *k, const struct keep_entry *e, int fd);
/* The keeper closes its copy of client @client_id's channel (the client is gone). */
void keeper_forget_client(struct keeper *k, uint32_t client_id);
/* Keeps a budget set at run time, replacing the domain's previous one. */
void keeper_keep_budget(struct keeper *k, const struct keep_budget *b);
/*
 * Tells the keeper to close everything and exit, and waits (up to
 * KEEPER_ANSWER_MS, keeper.c) until it has let go of everything, its
 * socket included. Then frees @k. NULL is fine.
 */
void keeper_quit(struct keeper *k);
/* Frees @k without telling the keeper anything (it then acts as on a death). */
void keeper_close(struct keeper *k);

#endif
