// SPDX-License-Identifier: MIT
/*
 * vtest transport (see vtest_server.h). The client's resources and the
 * transfers are vtest_resources.c's (vtest_server_priv.h).
 *
 * Objects: the server owns the client connection, a vtest_parser that
 * frames its bytes, the worker_session (the link to mediatord, and the
 * renderer, opened lazily on the first command that needs the GPU, so a
 * client that only handshakes costs no GL set-up), a predict_map of the
 * client's resources, and the client's one gpu_context.
 *
 * Flow control: the server stops reading from the client while a
 * SUBMIT_CMD waits for a free in-flight slot (max_inflight) or a
 * RESOURCE_BUSY_WAIT with the WAIT flag waits for the GPU to go idle; the
 * message stays in the parser's buffer until the fence completions that
 * unblock it arrive. The client, which waits for replies anyway, sees
 * backpressure as the GPU would give it.
 *
 * Replies go through a vtest_outbuf: they are queued and written as far
 * as the non-blocking socket takes them; the rest is written when poll()
 * says the socket is writable. While replies are pending the server takes
 * no further message from that client (its requests stay in the socket
 * and the parser), but everything else goes on: fence completions,
 * mediatord's grants and WIRE_DONE. A client that takes nothing of its
 * pending replies for VTEST_OUTBUF_STALL_MS is dropped.
 *
 * Work per wake-up is bounded (vtest_limits.h, VTEST_BUDGET_*): messages
 * left over when the budget is spent are taken on the next turn of the
 * loop, which then polls with a zero timeout instead of waiting for new
 * input.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <virgl/virglrenderer.h>

#include "worker/host_work.h"
#include "worker/gpu_context.h"
#include "worker/group_runner.h"
#include "worker/mediator_link.h"
#include "predict.h"
#include "worker/stream_cost.h"
#include "worker/renderer.h"
#include "common/util.h"
#include "worker/resource_quota.h"
#include "worker/vtest/vtest_limits.h"
#include "worker/vtest/vtest_outbuf.h"
#include "worker/vtest/vtest_parser.h"
#include "worker/vtest/vtest_server.h"
#include "worker/vtest/vtest_server_priv.h"
#include "worker/worker_session.h"
#include "common/wire.h"

static void take_completions(struct vtest_server *s);
static void poll_completions(void *data);

/* The client-visible memory of resource @handle (predict_resource_data_fn). */
static const void *resource_memory(void *data, uint32_t handle, size_t *size)
{
	struct vtest_server *s = data;
	const struct vtest_resource *res = predict_map_get(&s->resources, handle);

	if (!res || !res->shm)
		return NULL;
	*size = res->shm_size;
	return res->shm;
}

/* One context: fence ids are its pieces' sequence numbers, from 1. */
static uint32_t next_fence(void *data)
{
	const struct vtest_server *s = data;

	return (uint32_t)(s->dispatched + 1);
}

static void piece_dispatched(void *data, struct gpu_context *ctx, uint32_t fence_id, uint64_t seq)
{
	struct vtest_server *s = data;

	s->dispatched++;
}

static const struct group_runner_ops group_ops = {
    .version = GROUP_RUNNER_OPS_VERSION,
    .next_fence = next_fence,
    .dispatched = piece_dispatched,
};

struct vtest_server *vtest_server_create(const struct worker_options *options)
{
	struct vtest_server *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->opt = *options;
	s->parser = vtest_parser_create(0);
	s->out = vtest_outbuf_create(0, 0);
	predict_map_init(&s->resources);
	vtest_limits_init(&s->limits, 0, 0);
	resource_quota_init(&s->quota, options->resource_quota_bytes);
	s->session = worker_session_create(options, "client");
	if (s->session)
		s->runner = worker_session_group_runner(s->session, &group_ops, s);
	if (!s->parser || !s->out || !s->runner) {
		vtest_parser_destroy(s->parser);
		vtest_outbuf_destroy(s->out);
		worker_session_destroy(s->session);
		free(s);
		return NULL;
	}
	s->link = worker_session_link(s->session);
	snprintf(s->client_name, sizeof(s->client_name), "unnamed");
	return s;
}

void vtest_server_destroy(struct vtest_server *server)
{
	struct vtest_resource *res;

	if (!server)
		return;
	group_runner_end_context(server->runner, server->ctx, poll_completions, server);
	group_runner_destroy(server->runner);
	host_work_final();
	for (size_t i = 0; (res = predict_map_next(&server->resources, &i));)
		vtest_resource_free(res);
	predict_map_finish(&server->resources);
	vtest_parser_destroy(server->parser);
	vtest_outbuf_destroy(server->out);
	worker_session_destroy(server->session);
	close(server->opt.client_fd);
	free(server);
}

/* ---- talking to the client --------------------------------------------- */

static uint64_t now_ms(void)
{
	return mono_now_ns() / 1000000u;
}

/* Queues a reply: its header, then @body_len bytes of @body. 0 or a negative errno. */
int vtest_server_reply(struct vtest_server *s, uint32_t len_field, uint32_t cmd, const void *body,
		       size_t body_len)
{
	uint32_t hdr[VTEST_HDR_DWORDS] = {len_field, cmd};
	int r = vtest_outbuf_push(s->out, hdr, sizeof(hdr));

	if (r == 0 && body_len)
		r = vtest_outbuf_push(s->out, body, body_len);
	return r;
}

/*
 * Writes what the socket takes of the pending replies. Returns 0, or
 * -ECONNRESET when the client went away (logged), or another negative
 * errno (logged).
 */
static int flush_client(struct vtest_server *s)
{
	int r = vtest_outbuf_flush(s->out, s->opt.client_fd, now_ms());

	if (r == -EPIPE || r == -ECONNRESET) {
		srv_log(LOG_LEVEL_INFO, s, "client disconnected with %zu reply bytes not taken",
			vtest_outbuf_pending(s->out));
		return -ECONNRESET;
	}
	if (r < 0)
		srv_log(LOG_LEVEL_ERROR, s,
			"cannot write to the client: %s; closing the connection", strerror(-r));
	return r;
}

/* ---- renderer, lazily ------------------------------------------------- */

/* Opens the session and creates the client's context, on the first command that needs the GPU. */
int vtest_server_need_renderer(struct vtest_server *s)
{
	if (s->ctx)
		return 0;
	if (!s->gpu_failed && worker_session_open(s->session) == 0)
		s->ctx = worker_session_context_create(s->session, VTEST_CTX_ID, s->client_name,
						       resource_memory, s);
	s->gpu_failed = !s->ctx;
	return s->ctx ? 0 : -ENODEV;
}

static void on_fence(uint32_t fence_id, uint64_t end_ns, void *data)
{
	struct vtest_server *s = data;

	/* One context: its groups' sequence numbers are the fence ids. */
	gpu_context_complete(s->ctx, fence_id, end_ns);
}

/*
 * virglrenderer retires the fence of a group that ended a guest query only
 * after its main thread has looked at the query, in virgl_renderer_poll():
 * until then its sync thread waits ("timeout (5s) waiting for renderer
 * poll() to finish") and the group stays in flight, holding the client's
 * and mediatord's in-flight slots. The reference server calls
 * virgl_renderer_poll() before every command and while it waits for the
 * GPU; the worker calls it whenever it wakes (every client message wakes
 * it), and while it is blocked with groups in flight wakes at least every
 * VTEST_RENDERER_POLL_MS for it.
 */
#define VTEST_RENDERER_POLL_MS 1

static void take_completions(struct vtest_server *s)
{
	if (s->ctx) {
		virgl_renderer_poll();
		renderer_take_completions(worker_session_renderer(s->session), on_fence, s);
	}
}

/* take_completions() as gpu_context_drain() calls it. */
static void poll_completions(void *data)
{
	take_completions(data);
}

/* ---- command handlers -------------------------------------------------- */

/*
 * Each handler returns 0, or a negative errno that ends the connection
 * after *what (a static string) was logged.
 */
typedef int (*cmd_fn)(struct vtest_server *s, const struct vtest_msg *m, const char **what);

static int cmd_create_renderer(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	size_t n = m->payload_bytes;
	const char *name = (const char *)m->payload;
	struct ucred cred;
	int32_t peer_pid = -1;
	socklen_t cred_len = sizeof(cred);

	/* The name is NUL-terminated within its length; keep what is printable. */
	size_t len = strnlen(name, n);
	size_t j = 0;

	for (size_t i = 0; i < len && j + 1 < sizeof(s->client_name); i++) {
		char c = name[i];

		s->client_name[j++] = (c >= 0x20 && c < 0x7f) ? c : '?';
	}
	s->client_name[j] = '\0';
	s->named = true;
	if (j == 0)
		snprintf(s->client_name, sizeof(s->client_name), "unnamed");

	if (getsockopt(s->opt.client_fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) == 0)
		peer_pid = cred.pid;
	mediator_link_client_info(s->link, peer_pid, s->client_name);
	srv_log(LOG_LEVEL_INFO, s, "client \"%s\" (pid %d) connected", s->client_name,
		(int)peer_pid);
	return 0;
}

static int cmd_ping(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	return vtest_server_reply(s, 0, VCMD_PING_PROTOCOL_VERSION, NULL, 0);
}

static int cmd_protocol_version(struct vtest_server *s, const struct vtest_msg *m,
				const char **what)
{
	uint32_t v = m->payload[0];

	if (v > VTEST_PROTOCOL_VERSION_MAX)
		v = VTEST_PROTOCOL_VERSION_MAX;
	if (v == 1)
		v = 0;
	s->protocol_version = v;
	return vtest_server_reply(s, VCMD_PROTOCOL_VERSION_SIZE, VCMD_PROTOCOL_VERSION, &v,
				  sizeof(v));
}

/*
 * What the reference server advertises differs from what virglrenderer
 * fills in here in one bit. virgl_test_server starts virglrenderer with
 * VIRGL_RENDERER_USE_EXTERNAL_BLOB, which keeps VIRGL_CAP_ARB_BUFFER_STORAGE
 * out of the caps; the worker does not (the vhost-user path shares its
 * renderer set-up). A vtest client that sees the bit (Mesa 25 does) backs
 * persistent and coherent buffer mappings with RESOURCE_CREATE_BLOB of host
 * memory, which vtest can only hand over as a dma-buf that llvmpipe cannot
 * export. The bit is cleared in the set 2 reply, so that vtest clients see
 * the reference server's caps.
 */
#define VIRGL_CAPS_V2_CAPABILITY_BITS_OFFSET 392 /* bytes: virgl_hw.h struct virgl_caps_v2 */
#define VIRGL_CAP_ARB_BUFFER_STORAGE	     (1u << 31)

static void caps_as_reference(uint32_t set, void *caps, uint32_t size)
{
	uint32_t bits;

	if (set != 2 || size < VIRGL_CAPS_V2_CAPABILITY_BITS_OFFSET + sizeof(bits))
		return;
	memcpy(&bits, (uint8_t *)caps + VIRGL_CAPS_V2_CAPABILITY_BITS_OFFSET, sizeof(bits));
	bits &= ~VIRGL_CAP_ARB_BUFFER_STORAGE;
	memcpy((uint8_t *)caps + VIRGL_CAPS_V2_CAPABILITY_BITS_OFFSET, &bits, sizeof(bits));
}

/* GET_CAPS (set 1) and GET_CAPS2 (set 2). The reply's length field is the
 * caps size in bytes plus one, and its command field the set number, as
 * the reference server sends and Mesa's client reads. */
static int send_caps(struct vtest_server *s, uint32_t set, const char **what)
{
	uint32_t max_ver = 0, max_size = 0;
	void *caps;
	int r;

	if (vtest_server_need_renderer(s) < 0) {
		*what = "renderer unavailable";
		return -ENODEV;
	}
	virgl_renderer_get_cap_set(set, &max_ver, &max_size);
	if (max_size == 0) {
		*what = "renderer has no caps";
		return -ENODEV;
	}
	caps = calloc(1, max_size);
	if (!caps)
		return -ENOMEM;
	virgl_renderer_fill_caps(set, max_ver ? 1 : 0, caps);
	caps_as_reference(set, caps, max_size);
	r = vtest_server_reply(s, max_size + 1, set, caps, max_size);
	free(caps);
	return r;
}

static int cmd_get_caps(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	return send_caps(s, 1, what);
}

static int cmd_get_caps2(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	return send_caps(s, 2, what);
}

/*
 * Where the runner left the SUBMIT_CMD's group (@err, @wait): a wait
 * blocks the client (unblock() resumes it); an error ends the connection
 * with *@what.
 */
static int group_went(struct vtest_server *s, int err, enum group_wait wait, const char **what)
{
	switch (err) {
	case 0:
		if (wait != GROUP_DONE)
			s->blocked = BLOCKED_GROUP;
		return 0;
	case -EPROTO:
		*what = "malformed command buffer";
		break;
	case -EPERM:
		*what = "group refused by the scheduler";
		break;
	default:
		*what = "cannot create a fence";
		break;
	}
	return err;
}

static int cmd_submit(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	enum group_wait wait;
	int r;

	if (vtest_server_need_renderer(s) < 0) {
		*what = "renderer unavailable";
		return -ENODEV;
	}
	r = group_runner_submit(s->runner, s->ctx, m->payload, m->length_dw, &wait);
	return group_went(s, r, wait, what);
}

static int cmd_busy_wait(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	uint32_t handle = m->payload[0], flags = m->payload[1];
	uint32_t busy;

	/* Handle 0 is Mesa's probe right after PING_PROTOCOL_VERSION. */
	if (handle != 0 && !vtest_resource_lookup(s, handle, what))
		return -ENOENT;
	take_completions(s);
	busy = s->ctx && gpu_context_inflight(s->ctx) ? 1 : 0;
	if (busy && (flags & VCMD_BUSY_WAIT_FLAG_WAIT)) {
		s->blocked = BLOCKED_IDLE;
		return 0;
	}
	return vtest_server_reply(s, 1, VCMD_RESOURCE_BUSY_WAIT, &busy, sizeof(busy));
}

static const struct {
	cmd_fn fn;
	uint32_t min_version; /* lowest protocol version the command belongs to */
} handlers[] = {
    [VCMD_GET_CAPS] = {cmd_get_caps, 0},
    [VCMD_RESOURCE_CREATE] = {vtest_cmd_resource_create, 0},
    [VCMD_RESOURCE_UNREF] = {vtest_cmd_resource_unref, 0},
    [VCMD_TRANSFER_GET] = {vtest_cmd_transfer_get, 0},
    [VCMD_TRANSFER_PUT] = {vtest_cmd_transfer_put, 0},
    [VCMD_SUBMIT_CMD] = {cmd_submit, 0},
    [VCMD_RESOURCE_BUSY_WAIT] = {cmd_busy_wait, 0},
    [VCMD_CREATE_RENDERER] = {cmd_create_renderer, 0},
    [VCMD_GET_CAPS2] = {cmd_get_caps2, 0},
    [VCMD_PING_PROTOCOL_VERSION] = {cmd_ping, 0},
    [VCMD_PROTOCOL_VERSION] = {cmd_protocol_version, 0},
    [VCMD_RESOURCE_CREATE2] = {vtest_cmd_resource_create2, 2},
    [VCMD_TRANSFER_GET2] = {vtest_cmd_transfer_get2, 2},
    [VCMD_TRANSFER_PUT2] = {vtest_cmd_transfer_put2, 2},
};

/* Runs one message. Returns 0 (maybe leaving s->blocked set) or a negative errno. */
static int handle(struct vtest_server *s, const struct vtest_msg *m)
{
	const char *what = NULL;
	int r;

	if (!s->named && m->cmd != VCMD_CREATE_RENDERER) {
		what = "the first command must be CREATE_RENDERER";
		r = -EPROTO;
	} else if (s->named && m->cmd == VCMD_CREATE_RENDERER) {
		what = "CREATE_RENDERER sent twice";
		r = -EPROTO;
	} else if (handlers[m->cmd].min_version > s->protocol_version) {
		what = "command of a protocol version not negotiated";
		r = -EPROTO;
	} else {
		r = handlers[m->cmd].fn(s, m, &what);
	}
	if (r < 0 && !what)
		what = r == -ENOBUFS ? "reply beyond the output queue's cap" : strerror(-r);
	if (r < 0)
		srv_log(LOG_LEVEL_ERROR, s, "%s: %s; closing the connection",
			vtest_cmd_name(m->cmd), what);
	return r;
}

/* Goes on with what blocked if what it waits for has happened. */
static int unblock(struct vtest_server *s)
{
	const char *what = NULL;
	enum group_wait wait;
	int r;

	if (s->blocked == BLOCKED_GROUP) {
		r = group_runner_resume(s->runner, &wait);
		if (r == 0 && wait != GROUP_DONE)
			return 0;
		s->blocked = BLOCKED_NONE;
		r = group_went(s, r, wait, &what);
		if (r < 0)
			srv_log(LOG_LEVEL_ERROR, s, "SUBMIT_CMD: %s; closing the connection", what);
		return r;
	}
	if (s->blocked == BLOCKED_IDLE && gpu_context_inflight(s->ctx))
		return 0;
	s->blocked = BLOCKED_NONE;
	return handle(s, &s->blocked_msg);
}

/*
 * Sends what is pending, then handles whole messages received until one
 * blocks, a reply stays pending (the client has not taken it yet: its
 * next messages wait, see the overview), or this turn's work budget is
 * spent (s->more: the loop comes back without waiting). Returns 0,
 * -ECONNRESET when the client went away, or another negative errno that
 * ends the connection (logged).
 */
static int drain_messages(struct vtest_server *s)
{
	struct vtest_budget budget;
	struct vtest_msg m;
	const char *what = NULL;
	int r;

	s->more = false;
	r = flush_client(s);
	if (r < 0)
		return r;
	vtest_budget_init(&budget);
	while (s->blocked == BLOCKED_NONE && !vtest_outbuf_pending(s->out)) {
		if (vtest_budget_spent(&budget)) {
			s->more = true;
			return 0;
		}
		r = vtest_parser_next(s->parser, &m, &what);
		if (r == 0)
			return 0;
		if (r < 0) {
			srv_log(LOG_LEVEL_ERROR, s, "malformed message: %s; closing the connection",
				what);
			return -EPROTO;
		}
		vtest_budget_charge(&budget, VTEST_HDR_DWORDS * sizeof(uint32_t) + m.payload_bytes);
		r = handle(s, &m);
		if (r < 0)
			return -EPROTO;
		if (s->blocked != BLOCKED_NONE)
			s->blocked_msg = m;
		r = flush_client(s);
		if (r < 0)
			return r;
	}
	return 0;
}

static int read_client(struct vtest_server *s)
{
	size_t len;
	void *space = vtest_parser_space(s->parser, &len);
	ssize_t n;

	if (!space)
		return -ENOMEM;
	if (len == 0)
		return drain_messages(s);
	n = recv(s->opt.client_fd, space, len, MSG_DONTWAIT);
	if (n < 0)
		return (errno == EAGAIN || errno == EINTR) ? 0 : -errno;
	if (n == 0) {
		if (vtest_parser_pending(s->parser))
			srv_log(LOG_LEVEL_INFO, s,
				"client disconnected in the middle of a message");
		return -ECONNRESET;
	}
	vtest_parser_commit(s->parser, (size_t)n);
	return drain_messages(s);
}

/* The shorter of two poll() timeouts (-1: forever). */
static int min_timeout(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

/*
 * How long poll() may sleep: not at all when the work budget left
 * messages to handle; forever when nothing is pending; otherwise until
 * the record batch is due, checking fence completions at least that
 * often while groups are in flight, and no later than the moment pending
 * replies would count as stalled. Blocked with groups in flight, at most
 * VTEST_RENDERER_POLL_MS: nothing but take_completions() then calls
 * virgl_renderer_poll(), which a fence after a guest query waits for.
 */
static int poll_timeout_ms(const struct vtest_server *s)
{
	int t;

	if (s->more && !s->blocked)
		return 0;
	t = vtest_outbuf_timeout_ms(s->out, now_ms());
	if (s->blocked)
		return min_timeout(
		    t, s->ctx && gpu_context_inflight(s->ctx) ? VTEST_RENDERER_POLL_MS : -1);
	t = min_timeout(t, mediator_link_timeout_ms(s->link));
	if (s->ctx && gpu_context_inflight(s->ctx))
		t = min_timeout(t, WIRE_FLUSH_MS);
	return t;
}

/*
 * Whether a fence completion must wake the worker: when something waits
 * for it, and whenever mediatord schedules (its scheduler takes the GPU as
 * busy until WIRE_DONE arrives: a late one delays the other domains and
 * makes a safety frame look unfinished). Without grants, completions are
 * taken as the worker passes by, at most WIRE_FLUSH_MS late.
 */
static bool watch_completions(const struct vtest_server *s)
{
	if (!worker_session_renderer(s->session))
		return false;
	return s->blocked || (s->opt.grants && s->ctx && gpu_context_inflight(s->ctx));
}

/*
 * What to watch the client socket for: writable while replies are pending
 * (and nothing else: its next messages wait), readable when nothing
 * blocks. While blocked, not even a hang-up is looked at: the fences that
 * unblock it always complete (take_completions() polls the renderer for
 * those that need it).
 */
static short client_events(const struct vtest_server *s)
{
	if (vtest_outbuf_pending(s->out))
		return POLLOUT;
	return s->blocked ? 0 : POLLIN;
}

/* The client side of one turn of the loop, after poll() said @revents for @events. */
static int serve_client(struct vtest_server *s, short events, short revents)
{
	int r = 0;

	if (s->blocked) {
		r = unblock(s);
		if (r == 0 && !s->blocked)
			r = drain_messages(s);
		if (r < 0)
			return r;
	}
	if (events == POLLOUT && (revents & (POLLOUT | POLLHUP | POLLERR)))
		r = drain_messages(s);
	else if (events == POLLIN && (revents & (POLLIN | POLLHUP | POLLERR)))
		r = read_client(s);
	else if (s->more && !s->blocked)
		r = drain_messages(s);
	if (r < 0)
		return r;
	if (vtest_outbuf_stalled(s->out, now_ms())) {
		srv_log(LOG_LEVEL_ERROR, s,
			"client took none of its %zu pending reply bytes for %d ms; closing the "
			"connection",
			vtest_outbuf_pending(s->out), VTEST_OUTBUF_STALL_MS);
		return -ETIMEDOUT;
	}
	return 0;
}

int vtest_server_run(struct vtest_server *server)
{
	struct vtest_server *s = server;
	int flags = fcntl(s->opt.client_fd, F_GETFL);

	/* Every send and receive is MSG_DONTWAIT already; this says it twice. */
	if (flags >= 0)
		fcntl(s->opt.client_fd, F_SETFL, flags | O_NONBLOCK);
	for (;;) {
		short events = client_events(s);
		/* Fence completions wake the worker when watch_completions()
		 * says so; otherwise they are taken as it passes by (below). */
		struct pollfd pfd[3] = {
		    {.fd = events ? s->opt.client_fd : -1, .events = events},
		    {.fd = mediator_link_fd(s->link), .events = POLLIN},
		    {.fd = watch_completions(s)
			       ? renderer_completion_fd(worker_session_renderer(s->session))
			       : -1,
		     .events = POLLIN},
		};
		int r;

		if (poll(pfd, 3, poll_timeout_ms(s)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (mediator_link_on_events(s->link, pfd[1].revents) < 0)
			return -EPIPE;
		if (pfd[2].revents & POLLIN)
			renderer_ack_wakeup(worker_session_renderer(s->session));
		take_completions(s);
		r = serve_client(s, events, pfd[0].revents);
		if (r == -ECONNRESET)
			return 0;
		if (r < 0)
			return r;
		r = worker_session_tick(s->session);
		if (r < 0)
			return r;
	}
}
