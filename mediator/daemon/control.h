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
 * doc/protocols.md lists every command's reply.
 */
#ifndef MEDIATOR_CONTROL_H
#define MEDIATOR_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A request line is small; 64 KiB leaves room for future commands' arguments. */
#define CONTROL_MAX_REQUEST 65536
/* Most control connections open at once; more are accepted and closed at once. */
#define CONTROL_MAX_CLIENTS 32

struct control;
struct loop;
struct json_object;

#define CONTROL_OPS_VERSION 1

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
	int (*trace_start)(void *data, const char *path, char *err, size_t err_size);
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

#endif
