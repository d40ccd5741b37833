// SPDX-License-Identifier: MIT
/*
 * vtest transport (see vtest_server.h).
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
#include "worker/worker_session.h"
#include "common/wire.h"

/* The one virgl context of this client (one context per vtest connection). */
#define VTEST_CTX_ID 1

struct vtest_resource {
	uint32_t handle;
	uint32_t target; /* PIPE_BUFFER (0) holds vertex data worth watching */
	void *shm;	 /* NULL when there is no backing */
	size_t shm_size;
	uint64_t host_bytes; /* charged to the client's quota (resource_quota.h) */
	/* virglrenderer keeps a pointer to the iovec attached as backing, not
	 * a copy: it must live as long as the resource. */
	struct iovec iov;
};

enum blocked_on {
	BLOCKED_NONE = 0,
	BLOCKED_GROUP, /* a SUBMIT_CMD's group waits (a slot, a grant): the runner's */
	BLOCKED_IDLE,  /* a BUSY_WAIT with WAIT waits for all groups */
};

struct vtest_server {
	struct worker_options opt;
	struct vtest_parser *parser;
	struct worker_session *session; /* the link to mediatord; the renderer once opened */
	struct mediator_link *link;	/* the session's */
	struct gpu_context *ctx;	/* once the session is open */
	struct group_runner *runner;	/* takes each SUBMIT_CMD's group to the GPU */
	struct predict_map resources;
	struct vtest_limits limits;
	struct resource_quota quota;
	struct vtest_outbuf *out; /* replies not yet taken by the client */
	bool more;		  /* the work budget ran out with messages left */
	uint32_t protocol_version;
	bool named;	 /* CREATE_RENDERER was received */
	bool gpu_failed; /* the session did not open, or the context was not created */
	char client_name[WIRE_NAME_MAX];
	enum blocked_on blocked;
	struct vtest_msg blocked_msg;
	uint64_t dispatched; /* groups so far: the last fence id */
};

#define srv_log(level, s, fmt, ...)                                                                \
	log_msg(level, "domain %s client %u: " fmt, (s)->opt.domain, (s)->opt.client_id,           \
		##__VA_ARGS__)

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

static void resource_free(struct vtest_resource *res)
{
	if (res->shm) {
		virgl_renderer_resource_detach_iov((int)res->handle, NULL, NULL);
		munmap(res->shm, res->shm_size);
	}
	virgl_renderer_resource_unref(res->handle);
	free(res);
}

void vtest_server_destroy(struct vtest_server *server)
{
	struct vtest_resource *res;

	if (!server)
		return;
	group_runner_end_context(server->runner, server->ctx, poll_completions, server);
	group_runner_destroy(server->runner);
	for (size_t i = 0; (res = predict_map_next(&server->resources, &i));)
		resource_free(res);
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
static int send_reply(struct vtest_server *s, uint32_t len_field, uint32_t cmd, const void *body,
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
static int need_renderer(struct vtest_server *s)
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
	return send_reply(s, 0, VCMD_PING_PROTOCOL_VERSION, NULL, 0);
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
	return send_reply(s, VCMD_PROTOCOL_VERSION_SIZE, VCMD_PROTOCOL_VERSION, &v, sizeof(v));
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

	if (need_renderer(s) < 0) {
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
	r = send_reply(s, max_size + 1, set, caps, max_size);
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
 * A new memfd of @size bytes for a resource's backing, sealed against
 * shrinking and growing (and further seals) before the client ever sees
 * it: a client that truncated its copy would make every access of the
 * worker's mapping past the new end a SIGBUS. Returns the fd (the caller
 * closes it) or a negative errno.
 */
static int new_backing(size_t size)
{
	int fd = memfd_create("vtest-res", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int r;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

/* Maps a new sealed backing of @size bytes into @res; returns its fd or a negative errno. */
static int attach_backing(struct vtest_resource *res, size_t size)
{
	int fd = new_backing(size);
	void *p;

	if (fd < 0)
		return fd;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int r = -errno;

		close(fd);
		return r;
	}
	res->shm = p;
	res->shm_size = size;
	return fd;
}

static void predict_resource(struct vtest_server *s, const struct vtest_resource *res,
			     const struct virgl_renderer_resource_create_args *args)
{
	const struct predict_resource_desc desc = {
	    .target = args->target,
	    .format = args->format,
	    .bind = args->bind,
	    .width = args->width,
	    .height = args->height,
	    .depth = args->depth,
	    .array_size = args->array_size,
	    .last_level = args->last_level,
	    .nr_samples = args->nr_samples,
	};

	/* Prediction only loses this resource's size if it fails. */
	stream_cost_resource_create(gpu_context_stream_cost(s->ctx), res->handle, &desc);
}

/*
 * RESOURCE_CREATE(2). Every refusal ends the connection, as the reference
 * server's does: versions 0 to 2 have no reply that could carry an error
 * (RESOURCE_CREATE2's only reply is the backing's fd).
 */
static int create_resource(struct vtest_server *s, const uint32_t *p, uint32_t shm_size,
			   bool with_shm, const char **what)
{
	struct virgl_renderer_resource_create_args args = {
	    .handle = p[0],
	    .target = p[1],
	    .format = p[2],
	    .bind = p[3],
	    .width = p[4],
	    .height = p[5],
	    .depth = p[6],
	    .array_size = p[7],
	    .last_level = p[8],
	    .nr_samples = p[9],
	    .flags = 0,
	};
	uint64_t backing = with_shm ? shm_size : 0;
	const struct resource_desc desc = {args.target,	    args.format,    args.width,
					   args.height,	    args.depth,	    args.array_size,
					   args.last_level, args.nr_samples};
	uint64_t host_bytes = resource_host_bytes(&desc);
	struct vtest_resource *res;
	int fd = -1;
	int r;

	if (need_renderer(s) < 0) {
		*what = "renderer unavailable";
		return -ENODEV;
	}
	if (args.handle == 0) {
		*what = "resource handle 0";
		return -EINVAL;
	}
	if (args.handle >= PREDICT_HOST_HANDLE_MIN) {
		*what = "resource handle reserved for the host";
		return -EINVAL;
	}
	if (predict_map_get(&s->resources, args.handle)) {
		*what = "resource handle already in use";
		return -EEXIST;
	}
	if (resource_quota_admit(&s->quota, host_bytes) < 0) {
		srv_log(LOG_LEVEL_WARN, s,
			"resource %u of %llu MiB refused: its resources would pass the domain's "
			"host memory quota (resource_memory_mb %llu, %llu MiB held)",
			args.handle, (unsigned long long)(host_bytes >> 20),
			(unsigned long long)(s->quota.max >> 20),
			(unsigned long long)(s->quota.used >> 20));
		*what = "host memory quota reached";
		return -ENOSPC;
	}
	r = vtest_limits_admit(&s->limits, backing, what);
	if (r < 0) {
		resource_quota_release(&s->quota, host_bytes);
		return r;
	}
	res = calloc(1, sizeof(*res));
	if (!res) {
		vtest_limits_release(&s->limits, backing);
		resource_quota_release(&s->quota, host_bytes);
		return -ENOMEM;
	}
	res->host_bytes = host_bytes;
	res->handle = args.handle;
	res->target = args.target;
	if (virgl_renderer_resource_create(&args, NULL, 0)) {
		/* virglrenderer refused the description: a client error. */
		vtest_limits_release(&s->limits, backing);
		resource_quota_release(&s->quota, host_bytes);
		free(res);
		*what = "virglrenderer refused the resource description";
		return -EINVAL;
	}
	virgl_renderer_ctx_attach_resource(VTEST_CTX_ID, (int)args.handle);
	if (backing) {
		fd = attach_backing(res, backing);
		if (fd < 0) {
			r = fd;
			fd = -1;
			goto fail;
		}
	}
	r = predict_map_add(&s->resources, res->handle, res);
	if (r < 0)
		goto fail;
	predict_resource(s, res, &args);
	if (res->shm) {
		res->iov.iov_base = res->shm;
		res->iov.iov_len = res->shm_size;
		virgl_renderer_resource_attach_iov((int)res->handle, &res->iov, 1);
		/* The queue owns the fd from here. */
		r = vtest_outbuf_push_fd(s->out, fd);
		if (r < 0) {
			*what = "cannot queue the backing fd";
			return r;
		}
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	*what = "cannot allocate the resource backing";
	vtest_limits_release(&s->limits, backing);
	resource_quota_release(&s->quota, host_bytes);
	resource_free(res);
	return r;
}

static int cmd_resource_create(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	return create_resource(s, m->payload, 0, false, what);
}

static int cmd_resource_create2(struct vtest_server *s, const struct vtest_msg *m,
				const char **what)
{
	return create_resource(s, m->payload, m->payload[10], true, what);
}

static struct vtest_resource *lookup(struct vtest_server *s, uint32_t handle, const char **what)
{
	struct vtest_resource *res = predict_map_get(&s->resources, handle);

	if (!res)
		*what = "resource handle not owned by this client";
	return res;
}

static int cmd_resource_unref(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	struct vtest_resource *res = lookup(s, m->payload[0], what);

	if (!res)
		return -ENOENT;
	predict_map_remove(&s->resources, res->handle);
	stream_cost_resource_destroy(gpu_context_stream_cost(s->ctx), res->handle);
	vtest_limits_release(&s->limits, res->shm_size);
	resource_quota_release(&s->quota, res->host_bytes);
	virgl_renderer_ctx_detach_resource(VTEST_CTX_ID, (int)res->handle);
	resource_free(res);
	return 0;
}

static void box_from(struct virgl_box *box, const uint32_t *p)
{
	box->x = p[0];
	box->y = p[1];
	box->z = p[2];
	box->w = p[3];
	box->h = p[4];
	box->d = p[5];
}

/*
 * v0 transfers: data travels inline in the messages.
 *
 * TRANSFER_GET has no reply header: the client reads data size bytes
 * whatever happens. The reference server sends them even when
 * virglrenderer refused the read (whatever its buffer held) and goes on
 * serving; so does this one, but it sends zeros then, so that nothing
 * virglrenderer did not produce (not even half a read) reaches the
 * client. The reply is queued like any other: a client that reads it
 * slowly holds only its own connection.
 */
static int cmd_transfer_get(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	const uint32_t *p = m->payload;
	struct vtest_resource *res = lookup(s, p[0], what);
	uint32_t data_size = p[10];
	struct virgl_box box;
	struct iovec iov;

	if (!res)
		return -ENOENT;
	if (data_size > VTEST_DEFAULT_MAX_PAYLOAD) {
		*what = "transfer size beyond the limit";
		return -EMSGSIZE;
	}
	if (data_size == 0)
		return 0;
	box_from(&box, p + 4);
	iov.iov_len = data_size;
	iov.iov_base = calloc(1, data_size);
	if (!iov.iov_base)
		return -ENOMEM;
	if (virgl_renderer_transfer_read_iov(res->handle, VTEST_CTX_ID, p[1], p[2], p[3], &box, 0,
					     &iov, 1)) {
		free(iov.iov_base);
		srv_log(LOG_LEVEL_WARN, s,
			"TRANSFER_GET of resource %u refused by virglrenderer; answering %u zero "
			"bytes",
			res->handle, data_size);
		return vtest_outbuf_push_zeros(s->out, data_size);
	}
	return vtest_outbuf_push_owned(s->out, iov.iov_base, data_size);
}

static int cmd_transfer_put(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	const uint32_t *p = m->payload;
	struct vtest_resource *res = lookup(s, p[0], what);
	uint32_t data_size = p[10];
	struct virgl_box box;
	struct iovec iov;

	if (!res)
		return -ENOENT;
	if (data_size > m->payload_bytes - VCMD_TRANSFER_HDR_SIZE * sizeof(uint32_t)) {
		*what = "transfer size beyond the message";
		return -EMSGSIZE;
	}
	box_from(&box, p + 4);
	iov.iov_base = (void *)(p + VCMD_TRANSFER_HDR_SIZE);
	iov.iov_len = data_size;
	if (res->target == PIPE_BUFFER)
		stream_cost_resource_write(gpu_context_stream_cost(s->ctx), res->handle, box.x,
					   iov.iov_base, data_size);
	if (virgl_renderer_transfer_write_iov(res->handle, VTEST_CTX_ID, (int)p[1], p[2], p[3],
					      &box, 0, &iov, 1))
		srv_log(LOG_LEVEL_WARN, s, "TRANSFER_PUT to resource %u refused by virglrenderer",
			res->handle);
	return 0;
}

/* v2 transfers: data goes through the resource's shared-memory backing. */
static int transfer2(struct vtest_server *s, const struct vtest_msg *m, bool put, const char **what)
{
	const uint32_t *p = m->payload;
	struct vtest_resource *res = lookup(s, p[0], what);
	uint32_t data_size = p[8], offset = p[9];
	struct virgl_box box;
	int r;

	if (!res)
		return -ENOENT;
	/* The transfer starts inside the backing; virglrenderer checks that
	 * the box, with the resource's strides, fits the backing it was
	 * given (Mesa's data_size may count padding past its end). */
	if (!res->shm || offset >= res->shm_size) {
		*what = "transfer offset outside the resource's backing";
		return -EFAULT;
	}
	if (data_size > res->shm_size - offset)
		data_size = (uint32_t)(res->shm_size - offset);
	box_from(&box, p + 2);
	if (put && res->target == PIPE_BUFFER)
		stream_cost_resource_write(gpu_context_stream_cost(s->ctx), res->handle, box.x,
					   (const uint8_t *)res->shm + offset, data_size);
	if (put)
		r = virgl_renderer_transfer_write_iov(res->handle, VTEST_CTX_ID, (int)p[1], 0, 0,
						      &box, offset, NULL, 0);
	else
		r = virgl_renderer_transfer_read_iov(res->handle, VTEST_CTX_ID, p[1], 0, 0, &box,
						     offset, NULL, 0);
	if (r)
		srv_log(LOG_LEVEL_WARN, s, "%s on resource %u refused by virglrenderer",
			put ? "TRANSFER_PUT2" : "TRANSFER_GET2", res->handle);
	return 0;
}

static int cmd_transfer_get2(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	return transfer2(s, m, false, what);
}

static int cmd_transfer_put2(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	return transfer2(s, m, true, what);
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

	if (need_renderer(s) < 0) {
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
	if (handle != 0 && !lookup(s, handle, what))
		return -ENOENT;
	take_completions(s);
	busy = s->ctx && gpu_context_inflight(s->ctx) ? 1 : 0;
	if (busy && (flags & VCMD_BUSY_WAIT_FLAG_WAIT)) {
		s->blocked = BLOCKED_IDLE;
		return 0;
	}
	return send_reply(s, 1, VCMD_RESOURCE_BUSY_WAIT, &busy, sizeof(busy));
}

static const struct {
	cmd_fn fn;
	uint32_t min_version; /* lowest protocol version the command belongs to */
} handlers[] = {
    [VCMD_GET_CAPS] = {cmd_get_caps, 0},
    [VCMD_RESOURCE_CREATE] = {cmd_resource_create, 0},
    [VCMD_RESOURCE_UNREF] = {cmd_resource_unref, 0},
    [VCMD_TRANSFER_GET] = {cmd_transfer_get, 0},
    [VCMD_TRANSFER_PUT] = {cmd_transfer_put, 0},
    [VCMD_SUBMIT_CMD] = {cmd_submit, 0},
    [VCMD_RESOURCE_BUSY_WAIT] = {cmd_busy_wait, 0},
    [VCMD_CREATE_RENDERER] = {cmd_create_renderer, 0},
    [VCMD_GET_CAPS2] = {cmd_get_caps2, 0},
    [VCMD_PING_PROTOCOL_VERSION] = {cmd_ping, 0},
    [VCMD_PROTOCOL_VERSION] = {cmd_protocol_version, 0},
    [VCMD_RESOURCE_CREATE2] = {cmd_resource_create2, 2},
    [VCMD_TRANSFER_GET2] = {cmd_transfer_get2, 2},
    [VCMD_TRANSFER_PUT2] = {cmd_transfer_put2, 2},
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
