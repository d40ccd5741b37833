// SPDX-License-Identifier: MIT
/*
 * The control socket (see control.h for the protocol).
 *
 * Objects: one struct control owns the listening socket and a list of
 * struct control_client, one per accepted connection. Each client has an
 * input buffer that collects bytes until a '\n' ends a request, and an
 * output queue of replies not yet accepted by the socket. Both are bounded:
 * the input buffer by CONTROL_MAX_REQUEST (one request line), the output
 * queue by CONTROL_OUTPUT_HIGH plus one reply, because a client whose
 * replies pile up is not read from until it has taken them. Nothing here
 * ever blocks: every socket is nonblocking and the loop tells us when it
 * can be read or written.
 *
 * A trace-start request is answered later: its file is opened as the
 * client, in a child process (struct open_as), and until that ends the
 * client's further requests wait in its buffer; the answer goes out from
 * client_trace_opened().
 *
 * Who gets a connection: control_accept_one() reads the peer's credentials
 * first and sorts it into owners (root, mediatord's user), admins (those
 * and admin_group) and users; each may fill the table only up to its own
 * line (struct control_limits), and users and admins only up to
 * max_per_user each. One timer (idle_timer) closes connections that
 * completed no request within idle_timeout_ms; it is armed for the
 * earliest such deadline, and not at all while nobody is connected.
 *
 * Everything runs on mediatord's main thread, in loop callbacks.
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/control.h"
#include "daemon/open_as.h"
#include "daemon/peer_cred.h"
#include "common/unix_listener.h"
#include "common/loop.h"
#include "common/util.h"

/* First size of a client's input buffer; it grows up to CONTROL_MAX_REQUEST + 1. */
#define CONTROL_INPUT_INITIAL 4096
/*
 * While more than this many reply bytes wait for a client to read them, its
 * further requests are left unread (in its buffer and in the socket), so
 * that a client that never reads cannot make mediatord queue without end.
 */
#define CONTROL_OUTPUT_HIGH 65536
/* Connections accepted per wakeup of the listening socket, so one burst cannot starve the loop. */
#define CONTROL_ACCEPT_BATCH 16
/* listen(2) backlog; mediatorctl connects rarely. */
#define CONTROL_BACKLOG 16
/* Longest command name quoted back in an "unknown command" error. */
#define CONTROL_MAX_QUOTED 64
/* Mode of a trace file trace-start creates (less the umask): as it always was. */
#define CONTROL_TRACE_MODE 0644
/* Room for an error that quotes a path. */
#define CONTROL_ERR_SIZE (PATH_MAX + 256)

/* Who a connection is, for the limits (struct control_limits). */
enum control_rank {
	CONTROL_RANK_USER,  /* may read */
	CONTROL_RANK_ADMIN, /* may change mediatord: admin_group */
	CONTROL_RANK_OWNER, /* root or mediatord's user */
};

struct control_client {
	struct control *control;
	struct control_client *prev, *next;
	int fd;
	struct loop_source *source;
	uint32_t events; /* what source currently watches */

	char *in;
	size_t in_len, in_cap;

	char *out;
	size_t out_off, out_len, out_cap; /* pending bytes are out[out_off .. out_len) */

	bool eof;     /* the peer will send nothing more */
	bool closing; /* close once the output queue is empty */

	struct peer_cred cred; /* who connected (the kernel's word) */
	bool admin;	       /* may change mediatord (peer_cred_is_admin()) */
	bool refusal_logged;   /* a refused change is logged once per connection */

	uint64_t active_ns;	 /* accepted, or its last request taken (the idle clock) */
	struct open_as *opening; /* trace-start's file being opened; its requests wait */
	char *opening_path;
};

struct control {
	struct loop *loop;
	const struct control_ops *ops;
	void *data;
	int fd; /* listener.fd */
	struct unix_listener listener;
	struct loop_source *source;
	struct control_client *clients;
	size_t n_clients;
	struct control_access access;
	struct control_limits limits;
	uint64_t last_accept_warning_ns;
	uint64_t last_refusal_warning_ns;
	int idle_timer; /* timerfd: the earliest idle deadline */
	struct loop_source *idle_source;
};

static void control_arm_idle_timer(struct control *control);

static void client_close(struct control_client *c)
{
	struct control *control = c->control;

	loop_remove(c->source);
	close(c->fd);
	open_as_destroy(c->opening);
	free(c->opening_path);
	if (c->prev)
		c->prev->next = c->next;
	else
		control->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	control->n_clients--;
	free(c->in);
	free(c->out);
	free(c);
}

static size_t client_pending_output(const struct control_client *c)
{
	return c->out_len - c->out_off;
}

/*
 * Whether the client's buffered requests may be handled now: not while
 * its trace-start file is being opened, nor while its replies pile up
 * (see CONTROL_OUTPUT_HIGH).
 */
static bool client_may_process(const struct control_client *c)
{
	return !c->closing && !c->opening && client_pending_output(c) <= CONTROL_OUTPUT_HIGH;
}

/*
 * Brings the watched events in line with the client's state. Returns false
 * when the client has been closed (nothing left to do for it).
 */
static bool client_update_events(struct control_client *c)
{
	uint32_t events = 0;

	if (client_pending_output(c))
		events |= EPOLLOUT;
	else if ((c->closing || c->eof) && !c->opening) {
		/* A client that shut its side after trace-start still gets the answer. */
		client_close(c);
		return false;
	}
	if (!c->eof && client_may_process(c))
		events |= EPOLLIN;
	if (events != c->events) {
		if (loop_update(c->source, events) < 0) {
			client_close(c);
			return false;
		}
		c->events = events;
	}
	return true;
}

/* Writes as much queued output as the socket takes. Returns 0 or a negative errno. */
static int client_flush(struct control_client *c)
{
	while (client_pending_output(c)) {
		ssize_t n = send(c->fd, c->out + c->out_off, client_pending_output(c),
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		c->out_off += (size_t)n;
	}
	c->out_off = c->out_len = 0;
	return 0;
}

/* Appends @len bytes and a newline to the output queue. Returns 0 or -ENOMEM. */
static int client_queue(struct control_client *c, const char *line, size_t len)
{
	size_t need;

	if (c->out_off && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	need = c->out_len + len + 1;
	if (need > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 1024;
		char *p;

		if (c->out_off) {
			memmove(c->out, c->out + c->out_off, client_pending_output(c));
			c->out_len -= c->out_off;
			c->out_off = 0;
			need = c->out_len + len + 1;
		}
		while (cap < need)
			cap *= 2;
		if (cap != c->out_cap) {
			p = realloc(c->out, cap);
			if (!p)
				return -ENOMEM;
			c->out = p;
			c->out_cap = cap;
		}
	}
	memcpy(c->out + c->out_len, line, len);
	c->out[c->out_len + len] = '\n';
	c->out_len += len + 1;
	return 0;
}

/* Queues a reply object (its reference is taken over) and tries to send it at once. */
static void client_reply(struct control_client *c, struct json_object *reply)
{
	static const char oom[] = "{\"ok\":false,\"error\":\"out of memory\"}";
	const char *text = NULL;
	size_t len = 0;

	if (reply)
		text = json_object_to_json_string_length(
		    reply, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if (!text) {
		text = oom;
		len = sizeof(oom) - 1;
	}
	if (client_queue(c, text, len) < 0) {
		/* Cannot even queue the reply: the client would wait forever, drop it. */
		c->closing = true;
		c->out_off = c->out_len = 0;
	}
	json_object_put(reply);
	if (client_flush(c) < 0) {
		c->closing = true;
		c->out_off = c->out_len = 0;
	}
}

static struct json_object *reply_error(const char *message)
{
	struct json_object *r = json_object_new_object();

	if (!r)
		return NULL;
	if (json_object_object_add(r, "ok", json_object_new_boolean(0)) < 0 ||
	    json_object_object_add(r, "error", json_object_new_string(message)) < 0) {
		json_object_put(r);
		return NULL;
	}
	return r;
}

/* Takes over the reference to @result. */
static struct json_object *reply_ok(struct json_object *result)
{
	struct json_object *r;

	if (!result)
		return reply_error("out of memory");
	r = json_object_new_object();
	if (!r) {
		json_object_put(result);
		return NULL;
	}
	if (json_object_object_add(r, "ok", json_object_new_boolean(1)) < 0) {
		json_object_put(result);
		json_object_put(r);
		return NULL;
	}
	if (json_object_object_add(r, "result", result) < 0) {
		json_object_put(result);
		json_object_put(r);
		return NULL;
	}
	return r;
}

/* Reply to a failed ops call: its @err text, or the errno's text when it wrote none. */
static struct json_object *reply_errno(int r, const char *err)
{
	char msg[256];

	if (err[0])
		return reply_error(err);
	snprintf(msg, sizeof(msg), "%s", strerror(-r));
	return reply_error(msg);
}

static void client_trace_opened(struct open_as *oa, void *data, int fd, const char *err);

/*
 * Starts trace-start: checks the request and that a trace may start, then
 * has the file opened as the client (open_as.h). Returns the reply to a
 * request refused at once; NULL with c->opening set when the answer comes
 * later (client_trace_opened()); NULL otherwise: out of memory.
 */
static struct json_object *handle_trace_start(struct control_client *c, struct json_object *req)
{
	struct control *control = c->control;
	struct json_object *jpath;
	char err[CONTROL_ERR_SIZE] = "";
	const char *path;
	int r;

	if (!control->ops->trace_start)
		return reply_error("trace-start is not supported");
	if (!json_object_object_get_ex(req, "path", &jpath) ||
	    !json_object_is_type(jpath, json_type_string))
		return reply_error("trace-start needs a string \"path\"");
	path = json_object_get_string(jpath);
	if ((size_t)json_object_get_string_len(jpath) != strlen(path))
		return reply_error("trace-start: \"path\" contains a NUL character");
	if (path[0] != '/')
		return reply_error("trace-start: \"path\" must be absolute");
	if (strlen(path) >= PATH_MAX)
		return reply_error("trace-start: \"path\" is too long");
	if (control->ops->trace_check) {
		r = control->ops->trace_check(control->data, err, sizeof(err));
		if (r < 0)
			return reply_errno(r, err);
	}
	c->opening_path = strdup(path);
	if (!c->opening_path)
		return reply_error("out of memory");
	c->opening = open_as_create(control->loop, &c->cred, path, CONTROL_TRACE_MODE,
				    control->limits.open_timeout_ms, client_trace_opened, c, err,
				    sizeof(err));
	if (!c->opening) {
		free(c->opening_path);
		c->opening_path = NULL;
		log_info("control: trace-start of uid %u: %s", (unsigned)c->cred.uid, err);
		return reply_error(err);
	}
	return NULL;
}

static struct json_object *handle_trace_stop(struct control *control)
{
	char err[256] = "";
	int r;

	if (!control->ops->trace_stop)
		return reply_error("trace-stop is not supported");
	r = control->ops->trace_stop(control->data, err, sizeof(err));
	if (r < 0)
		return reply_errno(r, err);
	return reply_ok(json_object_new_object());
}

/* Member @key of @req as a number 1..UINT32_MAX into @out; absent: 0 when optional. */
static bool get_u32(struct json_object *req, const char *key, bool optional, uint32_t *out)
{
	struct json_object *v;
	int64_t n;

	if (!json_object_object_get_ex(req, key, &v)) {
		*out = 0;
		return optional;
	}
	if (!json_object_is_type(v, json_type_int))
		return false;
	n = json_object_get_int64(v);
	if (n < 1 || n > UINT32_MAX)
		return false;
	*out = (uint32_t)n;
	return true;
}

static struct json_object *handle_set_budget(struct control *control, struct json_object *req)
{
	struct json_object *jdomain, *result;
	uint32_t period, budget, deadline;
	char err[256] = "";

	if (!control->ops->set_budget)
		return reply_error("set-budget is not supported");
	if (!json_object_object_get_ex(req, "domain", &jdomain) ||
	    !json_object_is_type(jdomain, json_type_string))
		return reply_error("set-budget needs a string \"domain\"");
	if (!get_u32(req, "budget_us", false, &budget) ||
	    !get_u32(req, "period_us", true, &period) ||
	    !get_u32(req, "deadline_us", true, &deadline))
		return reply_error("set-budget needs \"budget_us\" and may have \"period_us\" and "
				   "\"deadline_us\", each a whole number of microseconds above 0");
	result = control->ops->set_budget(control->data, json_object_get_string(jdomain), period,
					  budget, deadline, err, sizeof(err));
	if (!result)
		return reply_error(err[0] ? err : "out of memory");
	return reply_ok(result);
}

/*
 * Refuses a change (@cmd) from a client that may only read: says who it
 * is and who may, and logs the first refusal of each connection.
 */
static struct json_object *refuse_change(struct control_client *c, const char *cmd)
{
	const struct control_access *a = &c->control->access;
	char msg[256];

	if (a->admin_gid == (gid_t)-1)
		snprintf(msg, sizeof(msg),
			 "permission denied: %s changes mediatord: only root and mediatord's user "
			 "(uid %u) may (no admin_group is configured); you are uid %u",
			 cmd, (unsigned)a->self_uid, (unsigned)c->cred.uid);
	else
		snprintf(msg, sizeof(msg),
			 "permission denied: %s changes mediatord: only root, mediatord's user "
			 "(uid %u) and admin_group (gid %u) may; you are uid %u",
			 cmd, (unsigned)a->self_uid, (unsigned)a->admin_gid, (unsigned)c->cred.uid);
	if (!c->refusal_logged) {
		log_warn("control: refused %s from uid %u (pid %d): not an admin", cmd,
			 (unsigned)c->cred.uid, (int)c->cred.pid);
		c->refusal_logged = true;
	}
	return reply_error(msg);
}

/*
 * Answers one parsed request. Returns a new reply object; NULL: out of
 * memory, or the answer comes later (c->opening is set).
 */
static struct json_object *handle_request(struct control_client *c, struct json_object *req)
{
	struct control *control = c->control;
	struct json_object *jcmd;
	const char *cmd;
	char msg[CONTROL_MAX_QUOTED + 64];

	if (!json_object_is_type(req, json_type_object))
		return reply_error("a request must be a JSON object");
	if (!json_object_object_get_ex(req, "cmd", &jcmd) ||
	    !json_object_is_type(jcmd, json_type_string))
		return reply_error("a request needs a string \"cmd\"");
	cmd = json_object_get_string(jcmd);

	if (!strcmp(cmd, "status")) {
		if (!control->ops->status)
			return reply_error("status is not supported");
		return reply_ok(control->ops->status(control->data));
	}
	if (!strcmp(cmd, "show-budgets")) {
		if (!control->ops->show_budgets)
			return reply_error("show-budgets is not supported");
		return reply_ok(control->ops->show_budgets(control->data));
	}
	if (!strcmp(cmd, "model")) {
		if (!control->ops->model)
			return reply_error("model is not supported");
		return reply_ok(control->ops->model(control->data));
	}
	if (!c->admin && (!strcmp(cmd, "trace-start") || !strcmp(cmd, "trace-stop") ||
			  !strcmp(cmd, "set-budget")))
		return refuse_change(c, cmd);
	if (!strcmp(cmd, "trace-start"))
		return handle_trace_start(c, req);
	if (!strcmp(cmd, "trace-stop"))
		return handle_trace_stop(control);
	if (!strcmp(cmd, "set-budget"))
		return handle_set_budget(control, req);

	snprintf(msg, sizeof(msg), "unknown command \"%.*s\"%s", CONTROL_MAX_QUOTED, cmd,
		 strlen(cmd) > CONTROL_MAX_QUOTED ? "..." : "");
	return reply_error(msg);
}

/* Parses and answers one request line (without its '\n'). */
static void client_handle_line(struct control_client *c, const char *line, size_t len)
{
	struct json_object *req, *reply;
	struct json_tokener *tok;
	size_t end;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (!len)
		return; /* blank lines are not requests (nor do they keep a connection) */
	c->active_ns = mono_now_ns();

	tok = json_tokener_new();
	if (!tok) {
		client_reply(c, NULL);
		return;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	req = json_tokener_parse_ex(tok, line, (int)len);
	end = json_tokener_get_parse_end(tok);
	if (req) {
		while (end < len && (line[end] == ' ' || line[end] == '\t'))
			end++;
	}
	if (!req || json_tokener_get_error(tok) != json_tokener_success || end != len) {
		json_object_put(req);
		json_tokener_free(tok);
		client_reply(c, reply_error("malformed request: not one JSON object"));
		return;
	}
	json_tokener_free(tok);
	reply = handle_request(c, req);
	if (!c->opening)
		client_reply(c, reply);
	json_object_put(req);
}

/* Handles the complete lines in the input buffer, as far as the output queue allows. */
static void client_process_input(struct control_client *c)
{
	size_t start = 0;

	while (client_may_process(c) && start < c->in_len) {
		char *nl = memchr(c->in + start, '\n', c->in_len - start);

		if (!nl)
			break;
		client_handle_line(c, c->in + start, (size_t)(nl - (c->in + start)));
		start = (size_t)(nl - c->in) + 1;
	}
	if (start) {
		memmove(c->in, c->in + start, c->in_len - start);
		c->in_len -= start;
	}
	if (!client_may_process(c))
		return;
	if (c->in_len > CONTROL_MAX_REQUEST) {
		char msg[80];

		snprintf(msg, sizeof(msg), "request longer than %d bytes", CONTROL_MAX_REQUEST);
		client_reply(c, reply_error(msg));
		c->closing = true;
		c->in_len = 0;
	} else if (c->eof && c->in_len) {
		/* The peer closed its side after a last request without '\n'. */
		client_handle_line(c, c->in, c->in_len);
		c->in_len = 0;
	}
}

/*
 * The end of a trace-start's open (open_as_done_fn): starts the trace or
 * says why not, then goes on with the client's waiting requests.
 */
static void client_trace_opened(struct open_as *oa, void *data, int fd, const char *err)
{
	struct control_client *c = data;
	struct control *control = c->control;
	char msg[CONTROL_ERR_SIZE] = "";
	struct json_object *reply, *result;
	int r;

	open_as_destroy(oa);
	c->opening = NULL;
	if (fd < 0) {
		log_info("control: trace-start of uid %u: %s", (unsigned)c->cred.uid, err);
		reply = reply_error(err);
	} else {
		r = control->ops->trace_start(control->data, c->opening_path, fd, msg, sizeof(msg));
		if (r < 0) {
			reply = reply_errno(r, msg);
		} else {
			result = json_object_new_object();
			if (result &&
			    json_object_object_add(result, "path",
						   json_object_new_string(c->opening_path)) < 0) {
				json_object_put(result);
				result = NULL;
			}
			reply = reply_ok(result);
		}
	}
	free(c->opening_path);
	c->opening_path = NULL;
	c->active_ns = mono_now_ns();
	client_reply(c, reply);
	client_process_input(c);
	client_update_events(c);
	control_arm_idle_timer(control);
}

/* Reads what the socket has. Returns 0 or a negative errno (then close the client). */
static int client_read(struct control_client *c)
{
	ssize_t n;

	if (c->in_len == c->in_cap) {
		size_t cap = c->in_cap ? c->in_cap * 2 : CONTROL_INPUT_INITIAL;
		char *p;

		if (cap > CONTROL_MAX_REQUEST + 1)
			cap = CONTROL_MAX_REQUEST + 1;
		if (cap == c->in_cap)
			return 0; /* full: client_process_input() rejects the request */
		p = realloc(c->in, cap);
		if (!p)
			return -ENOMEM;
		c->in = p;
		c->in_cap = cap;
	}
	do
		n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	if (n == 0)
		c->eof = true;
	c->in_len += (size_t)n;
	return 0;
}

static void client_event(struct loop_source *source, int fd, uint32_t events, void *data)
{
	struct control_client *c = data;

	if (events & EPOLLERR) {
		client_close(c);
		return;
	}
	if (events & EPOLLOUT) {
		if (client_flush(c) < 0) {
			client_close(c);
			return;
		}
	}
	if ((events & (EPOLLIN | EPOLLHUP)) && !c->eof && !c->closing) {
		if (client_read(c) < 0) {
			client_close(c);
			return;
		}
	}
	client_process_input(c);
	if ((events & EPOLLHUP) && !(events & EPOLLIN)) {
		/* Both directions are shut: nobody can read a reply any more. */
		client_close(c);
		return;
	}
	client_update_events(c);
}

/* The rank of a connection from @cred (unknown credentials: a user's). */
static enum control_rank control_rank_of(const struct control *control,
					 const struct peer_cred *cred)
{
	if (cred->uid == (uid_t)-1)
		return CONTROL_RANK_USER;
	if (cred->uid == 0 || cred->uid == control->access.self_uid)
		return CONTROL_RANK_OWNER;
	if (peer_cred_is_admin(cred, control->access.self_uid, control->access.admin_gid))
		return CONTROL_RANK_ADMIN;
	return CONTROL_RANK_USER;
}

/*
 * Whether a connection of @rank from @cred may take a place: 0, or -EBUSY
 * with the reason in @msg. Users and admins are limited per uid; each rank
 * fills the table up to its own line, so that the last places stay free
 * for the ranks above it.
 */
static int control_admit(const struct control *control, enum control_rank rank,
			 const struct peer_cred *cred, char *msg, size_t size)
{
	const struct control_limits *l = &control->limits;
	size_t mine = 0;

	/* A user over its own share hears of that first: it is what the user can change. */
	if (rank != CONTROL_RANK_OWNER) {
		for (const struct control_client *c = control->clients; c; c = c->next)
			mine += c->cred.uid == cred->uid;
		if (mine >= l->max_per_user) {
			snprintf(msg, size,
				 "too many control connections of uid %u: at most %u per user (one "
				 "without a request for %u s is closed)",
				 (unsigned)cred->uid, l->max_per_user,
				 (unsigned)((l->idle_timeout_ms + 999) / 1000));
			return -EBUSY;
		}
	}
	if (rank == CONTROL_RANK_USER && control->n_clients >= l->max_clients - l->admin_slots) {
		snprintf(msg, size,
			 "too many control connections: the last %u of %u are kept for root, "
			 "mediatord's user and admin_group",
			 l->admin_slots, l->max_clients);
		return -EBUSY;
	}
	if (rank == CONTROL_RANK_ADMIN && control->n_clients >= l->max_clients - l->owner_slots) {
		snprintf(msg, size,
			 "too many control connections: the last %u of %u are kept for root and "
			 "mediatord's user",
			 l->owner_slots, l->max_clients);
		return -EBUSY;
	}
	if (control->n_clients >= l->max_clients) {
		snprintf(msg, size, "too many control connections");
		return -EBUSY;
	}
	return 0;
}

/* Tells a refused connection @fd why (best effort) and closes it; says so at most once a second. */
static void control_refuse(struct control *control, int fd, const struct peer_cred *cred,
			   const char *why)
{
	struct json_object *reply = reply_error(why);
	const char *text = NULL;
	char line[512];
	uint64_t now;
	int len = 0;

	if (reply)
		text = json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text)
		len = snprintf(line, sizeof(line), "%s\n", text);
	json_object_put(reply);
	/* The socket is new and empty, so this short line fits. */
	if (len > 0 && (size_t)len < sizeof(line) &&
	    send(fd, line, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		log_debug("control: cannot tell a refused client why: %s", strerror(errno));
	close(fd);
	now = mono_now_ns();
	if (now - control->last_refusal_warning_ns >= NSEC_PER_SEC) {
		log_warn("control: refused a connection of uid %d (pid %d): %s",
			 cred->uid == (uid_t)-1 ? -1 : (int)cred->uid, (int)cred->pid, why);
		control->last_refusal_warning_ns = now;
	}
}

static void control_accept_one(struct control *control, int fd)
{
	struct control_client *c;
	struct peer_cred cred;
	enum control_rank rank;
	char why[256];

	/* Unknown credentials give no right to change anything, and the fewest places. */
	if (peer_cred_read(fd, &cred) < 0)
		cred.uid = (uid_t)-1;
	rank = control_rank_of(control, &cred);
	if (control_admit(control, rank, &cred, why, sizeof(why)) < 0) {
		control_refuse(control, fd, &cred, why);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->control = control;
	c->fd = fd;
	c->events = EPOLLIN;
	c->cred = cred;
	c->admin = rank != CONTROL_RANK_USER;
	c->active_ns = mono_now_ns();
	c->source = loop_add(control->loop, fd, c->events, client_event, c);
	if (!c->source) {
		log_warn("control: cannot watch a new connection: %s", strerror(errno));
		close(fd);
		free(c);
		return;
	}
	c->next = control->clients;
	if (c->next)
		c->next->prev = c;
	control->clients = c;
	control->n_clients++;
	control_arm_idle_timer(control);
}

/*
 * Arms the idle timer for the earliest idle deadline of the connections
 * that are not opening a trace file; disarms it when there is none.
 */
static void control_arm_idle_timer(struct control *control)
{
	uint64_t timeout_ns = (uint64_t)control->limits.idle_timeout_ms * 1000000ull;
	struct itimerspec when = {{0, 0}, {0, 0}};
	uint64_t first = UINT64_MAX;

	for (const struct control_client *c = control->clients; c; c = c->next) {
		if (!c->opening && c->active_ns + timeout_ns < first)
			first = c->active_ns + timeout_ns;
	}
	if (first != UINT64_MAX) {
		when.it_value.tv_sec = (time_t)(first / NSEC_PER_SEC);
		when.it_value.tv_nsec = (long)(first % NSEC_PER_SEC);
		if (!when.it_value.tv_sec && !when.it_value.tv_nsec)
			when.it_value.tv_nsec = 1;
	}
	if (timerfd_settime(control->idle_timer, TFD_TIMER_ABSTIME, &when, NULL) < 0)
		log_warn("control: cannot arm the idle timer: %s", strerror(errno));
}

/* Closes an idle connection, telling it why when nothing else is queued for it. */
static void client_close_idle(struct control_client *c)
{
	char text[128];
	int len;

	len = snprintf(text, sizeof(text),
		       "{\"ok\":false,\"error\":\"closed: no request for %u ms\"}\n",
		       (unsigned)c->control->limits.idle_timeout_ms);
	if (!client_pending_output(c) && len > 0 && (size_t)len < sizeof(text) &&
	    send(c->fd, text, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		log_debug("control: cannot tell an idle client why: %s", strerror(errno));
	log_info("control: closed a connection of uid %u (pid %d): no request for %u ms",
		 (unsigned)c->cred.uid, (int)c->cred.pid,
		 (unsigned)c->control->limits.idle_timeout_ms);
	client_close(c);
}

static void control_idle_event(struct loop_source *source, int fd, uint32_t events, void *data)
{
	struct control *control = data;
	uint64_t timeout_ns = (uint64_t)control->limits.idle_timeout_ms * 1000000ull;
	struct control_client *c, *next;
	uint64_t ticks, now;

	if (read(fd, &ticks, sizeof(ticks)) < 0 && errno == EAGAIN)
		return;
	now = mono_now_ns();
	for (c = control->clients; c; c = next) {
		next = c->next;
		if (!c->opening && now >= c->active_ns + timeout_ns)
			client_close_idle(c);
	}
	control_arm_idle_timer(control);
}

int control_set_limits(struct control *control, const struct control_limits *limits)
{
	if (limits->owner_slots > limits->admin_slots ||
	    limits->admin_slots >= limits->max_clients || !limits->max_per_user ||
	    !limits->idle_timeout_ms || !limits->open_timeout_ms)
		return -EINVAL;
	control->limits = *limits;
	control_arm_idle_timer(control);
	return 0;
}

static void control_listener_event(struct loop_source *source, int fd, uint32_t events, void *data)
{
	struct control *control = data;

	for (int i = 0; i < CONTROL_ACCEPT_BATCH; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0) {
			uint64_t now;

			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			/* EMFILE and friends: say so at most once a second, try again later. */
			now = mono_now_ns();
			if (now - control->last_accept_warning_ns >= NSEC_PER_SEC) {
				log_warn("control: accept: %s", strerror(errno));
				control->last_accept_warning_ns = now;
			}
			return;
		}
		control_accept_one(control, cfd);
	}
}

struct control *control_create(struct loop *loop, const char *socket_path,
			       const struct control_access *access, const struct control_ops *ops,
			       void *data, char *err, size_t err_size)
{
	struct control *control;
	char ebuf[256];
	int r;

	if (!ops || ops->version < CONTROL_OPS_VERSION) {
		snprintf(err, err_size, "control socket: unsupported ops version");
		return NULL;
	}

	control = calloc(1, sizeof(*control));
	if (!control) {
		snprintf(err, err_size, "control socket: out of memory");
		return NULL;
	}
	control->loop = loop;
	control->ops = ops;
	control->data = data;
	control->fd = -1;
	control->access = *access;
	control->limits = CONTROL_DEFAULT_LIMITS;
	control->idle_timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (control->idle_timer < 0) {
		snprintf(err, err_size, "control socket: timerfd: %s", strerror(errno));
		free(control);
		return NULL;
	}

	r = unix_listener_open(&control->listener, socket_path, 0660, CONTROL_BACKLOG, ebuf,
			       sizeof(ebuf));
	if (r == 0 && access->gid != (gid_t)-1)
		r = unix_listener_chown(&control->listener, (uid_t)-1, access->gid, ebuf,
					sizeof(ebuf));
	if (r < 0) {
		snprintf(err, err_size, "control socket %s", ebuf);
		goto fail;
	}
	control->fd = control->listener.fd;
	control->source = loop_add(loop, control->fd, EPOLLIN, control_listener_event, control);
	control->idle_source =
	    loop_add(loop, control->idle_timer, EPOLLIN, control_idle_event, control);
	if (!control->source || !control->idle_source) {
		snprintf(err, err_size, "control socket '%s': %s", socket_path, strerror(errno));
		goto fail;
	}
	return control;

fail:
	loop_remove(control->source);
	loop_remove(control->idle_source);
	close(control->idle_timer);
	unix_listener_close(&control->listener);
	free(control);
	return NULL;
}

void control_destroy(struct control *control)
{
	if (!control)
		return;
	while (control->clients)
		client_close(control->clients);
	loop_remove(control->source);
	loop_remove(control->idle_source);
	close(control->idle_timer);
	unix_listener_close(&control->listener);
	free(control);
}
