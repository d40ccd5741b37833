// SPDX-License-Identifier: MIT
/*
 * The control socket of mediatord (config key control_socket) and the
 * protocol mediatorctl speaks on it.
 *
 * Protocol: a client connects to the unix stream socket and sends one
 * request per line, each a JSON object with a "cmd" member:
 *   {"cmd": "status"}
 *   {"cmd": "show-budgets"}
 *   {"cmd": "trace-start", "path": "/absolute/file.jsonl"}
 *   {"cmd": "trace-stop"}
 *   {"cmd": "model"}
 *   {"cmd": "set-budget", "domain": "NAME", "budget_us": N, "period_us": N,
 *    "deadline_us": N}                       (period_us, deadline_us optional)
 * For each request mediatord answers one line, a JSON object:
 *   {"ok": true, "result": {...}}   or   {"ok": false, "error": "message"}
 * Requests longer than CONTROL_MAX_REQUEST bytes, malformed JSON and
 * unknown commands get {"ok": false, ...}; an over-long request also
 * closes the connection. The server never blocks on a slow client: replies
 * are queued per connection and written as the socket accepts them.
 * trace-start's file is opened as the client that asked, in a child
 * process (open_as.h); the connection's later requests wait for that
 * answer, the other connections do not.
 *
 * Connections are limited (struct control_limits): so many in all, so
 * many per user, the last ones kept for administrators, and one that sends
 * no request for a while is closed, so that no user of control_group can
 * lock root out. doc/protocols.md lists every command's reply.
 */
#ifndef MEDIATOR_CONTROL_H
#define MEDIATOR_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A request line is small; 64 KiB leaves room for future commands' arguments. */
#define CONTROL_MAX_REQUEST 65536
/*
 * Most control connections open at once, of all users together; more are
 * accepted and closed at once with "too many control connections". Every
 * client in the tree holds one connection for one request at a time.
 */
#define CONTROL_MAX_CLIENTS 32
/*
 * Of CONTROL_MAX_CLIENTS, the last ones only root, mediatord's user and
 * admin_group may take: the users of control_group who may only read
 * hold 24 at most together, so that an administrator can always connect
 * to change a budget or stop a trace.
 */
#define CONTROL_ADMIN_SLOTS 8
/*
 * Of CONTROL_ADMIN_SLOTS, the last ones only root and mediatord's user may
 * take, so that members of admin_group cannot lock root out either.
 */
#define CONTROL_OWNER_SLOTS 2
/*
 * Most connections of one uid at once, root's and mediatord's user's
 * excepted: mediatorctl uses one per invocation, so four let a user run a
 * watch, a metrics scrape and a script side by side, and a user who opens
 * more cannot take more than an eighth of the table.
 */
#define CONTROL_MAX_PER_USER 4
/*
 * A connection that completes no request for this long (from its accept
 * or its last request) is closed. mediatorctl sends its request as soon as
 * it has connected and gives up on a reply after 10 s
 * (MEDIATORCTL_TIMEOUT_MS); a connection quiet for as long serves nobody
 * but one who holds a place. A connection whose trace-start file is being
 * opened is busy, not idle.
 */
#define CONTROL_IDLE_TIMEOUT_MS 10000
/*
 * How long opening a trace-start file may take before mediatord gives up
 * (open_as.h): well within mediatorctl's 10 s, so that its user reads why.
 */
#define CONTROL_OPEN_TIMEOUT_MS 5000

struct control;
struct loop;
struct json_object;

/* 2: trace-start's file is opened by control.c and given to trace_start (trace_check added). */
#define CONTROL_OPS_VERSION 2

/*
 * What mediatord provides to answer requests. Called on mediatord's main
 * thread (the loop's). Functions returning a json_object give the caller
 * (control.c) a new reference; NULL means out of memory. Functions
 * returning int return 0 or a negative errno and then write a one-line
 * reason into @err.
 */
struct control_ops {
	int version; /* CONTROL_OPS_VERSION */
	struct json_object *(*status)(void *data);
	struct json_object *(*show_budgets)(void *data);
	/*
	 * Whether a trace may start now (NULL: always): 0, or a negative errno
	 * with the reason in @err (one is being written already). Asked before
	 * the file is opened, so that a start refused for it leaves no file.
	 */
	int (*trace_check)(void *data, char *err, size_t err_size);
	/*
	 * Starts the trace into @fd, the regular file at @path, which the
	 * client that asked has opened (open_as.h) and nobody has truncated
	 * yet. Takes @fd over: the callee closes it, also when it fails.
	 */
	int (*trace_start)(void *data, const char *path, int fd, char *err, size_t err_size);
	int (*trace_stop)(void *data, char *err, size_t err_size);
	/* {"domains": [{"name", "contexts": [...]}]}: each context's cost model (may be NULL). */
	struct json_object *(*model)(void *data);
	/*
	 * Changes @domain's budget (and period, deadline: 0 keeps the current
	 * value) from its next period; returns the new values in a new object.
	 */
	struct json_object *(*set_budget)(void *data, const char *domain, uint32_t period_us,
					  uint32_t budget_us, uint32_t deadline_us, char *err,
					  size_t err_size);
};

/*
 * Who may use the control socket. Connecting takes write permission on
 * the socket file (mode 0660: mediatord's user and @gid); reading
 * (status, show-budgets, model) is then open to every client; changes
 * (set-budget, trace-start, trace-stop) only to root, @self_uid and
 * members of @admin_gid (primary or supplementary group, from
 * SO_PEERCRED/SO_PEERGROUPS); (gid_t)-1: unchanged / none.
 */
struct control_access {
	gid_t gid;
	uid_t self_uid;
	gid_t admin_gid;
};

/*
 * Binds @socket_path (a stale socket file there, one nobody listens on, is
 * replaced; a live socket or a file that is no socket is refused; the
 * directory is created with mode 0755 if missing), listens, and serves it
 * from @loop. @ops and @data must outlive the control. Returns NULL and
 * writes a reason into @err on failure.
 */
struct control *control_create(struct loop *loop, const char *socket_path,
			       const struct control_access *access, const struct control_ops *ops,
			       void *data, char *err, size_t err_size);
/* Closes every connection and the listening socket, and unlinks the socket file. NULL is fine. */
void control_destroy(struct control *control);

/*
 * The limits on connections. control_create() starts with
 * CONTROL_DEFAULT_LIMITS (the constants above); tests set smaller ones.
 * "Owners" are root and mediatord's user, "admins" those and admin_group.
 */
struct control_limits {
	unsigned max_clients;  /* connections at once, all users */
	unsigned admin_slots;  /* of max_clients, taken by admins only */
	unsigned owner_slots;  /* of admin_slots, taken by owners only */
	unsigned max_per_user; /* connections of one uid at once, owners excepted */
	uint32_t idle_timeout_ms;
	uint32_t open_timeout_ms; /* for trace-start's file */
};

#define CONTROL_DEFAULT_LIMITS                                                                     \
	((struct control_limits){CONTROL_MAX_CLIENTS, CONTROL_ADMIN_SLOTS, CONTROL_OWNER_SLOTS,    \
				 CONTROL_MAX_PER_USER, CONTROL_IDLE_TIMEOUT_MS,                    \
				 CONTROL_OPEN_TIMEOUT_MS})

/*
 * Replaces the limits; connections already open stay. Returns 0, or
 * -EINVAL when they do not nest (owner_slots <= admin_slots < max_clients,
 * max_per_user and the timeouts above 0).
 */
int control_set_limits(struct control *control, const struct control_limits *limits);

#endif
