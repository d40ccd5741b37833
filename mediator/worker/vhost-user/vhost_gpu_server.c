// SPDX-License-Identifier: MIT
/*
 * vhost-user-gpu transport (see vhost_gpu_server.h).
 *
 * Ring life cycle (vhost-user.rst, "Ring states"): a ring starts when its
 * kick fd arrives, with used_idx read back from the used ring; it is
 * enabled at once unless VHOST_USER_F_PROTOCOL_FEATURES was negotiated
 * (then SET_VRING_ENABLE enables it); GET_VRING_BASE stops it and answers
 * where it stopped. When every ring has stopped, the driver is gone (guest
 * reset or reboot): the device drops all GPU state of that driver.
 *
 * Ring state rules (the same section: "stopped: the back-end must not
 * process the ring at all"; a ring is started by SET_VRING_KICK and
 * stopped by GET_VRING_BASE):
 *  - SET_VRING_NUM, SET_VRING_ADDR and SET_VRING_BASE describe a stopped
 *    ring. On a started ring they are refused: logged, and the connection
 *    is closed like any other message that breaks the protocol (QEMU
 *    sends them only between GET_VRING_BASE and SET_VRING_KICK, as its
 *    recorded sessions show; the spec's one change on the fly,
 *    SET_VRING_ADDR's log flag, needs VHOST_F_LOG_ALL, never offered).
 *    Taking a new size on a started ring would index the old mappings
 *    with it: an out-of-bounds write of the used ring.
 *  - Stopping a ring forgets its mappings (virtqueue_unmap()); starting it
 *    maps the rings again for the size then set, and every ring access
 *    indexes with the size the mappings were made for (mapped_num).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "worker/host_work.h"
#include "worker/mediator_link.h"
#include "worker/renderer.h"
#include "common/util.h"
#include "worker/vhost-user/vgpu_device.h"
#include "worker/vhost-user/vhost_gpu_server.h"
#include "worker/vhost-user/vhost_user.h"
#include "worker/worker_session.h"

#define NQUEUES 2u

/* What the device offers (virtio features). */
#define OFFERED_FEATURES                                                                           \
	((1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_GPU_F_VIRGL) |                             \
	 (1ull << VIRTIO_GPU_F_EDID) | (1ull << VIRTIO_RING_F_INDIRECT_DESC) |                     \
	 (1ull << VIRTIO_RING_F_EVENT_IDX) | (1ull << VHOST_USER_F_PROTOCOL_FEATURES))
#define OFFERED_PROTOCOL_FEATURES                                                                  \
	((1ull << VHOST_USER_PROTOCOL_F_REPLY_ACK) | (1ull << VHOST_USER_PROTOCOL_F_CONFIG))

struct vhost_gpu_server {
	struct worker_options opt;
	struct worker_session *session; /* the link to mediatord and the renderer */
	struct mediator_link *link;	/* the session's */
	struct guest_mem *mem;
	struct virtqueue vq[NQUEUES];
	struct vgpu_device *dev;
	uint64_t features, protocol_features;
	bool ever_started;
};

#define srv_log(level, s, fmt, ...)                                                                \
	log_msg(level, "domain %s vm %u: " fmt, (s)->opt.domain, (s)->opt.client_id, ##__VA_ARGS__)

/* Tells mediatord who the VM is: QEMU's process (its pid and command name). */
static void report_client(struct vhost_gpu_server *s)
{
	struct ucred cred;
	socklen_t cred_len = sizeof(cred);
	char name[WIRE_NAME_MAX], comm[64] = "", path[64];
	FILE *f;

	snprintf(name, sizeof(name), "vhost-user-gpu");
	if (getsockopt(s->opt.client_fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)cred.pid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	if (comm[0])
		snprintf(name, sizeof(name), "%s", comm);
	mediator_link_client_info(s->link, cred.pid, name);
	srv_log(LOG_LEVEL_INFO, s, "VM connected: %s (pid %d)", name, (int)cred.pid);
}

struct vhost_gpu_server *vhost_gpu_server_create(const struct worker_options *options)
{
	struct vhost_gpu_server *s = calloc(1, sizeof(*s));

	if (!s) {
		close(options->client_fd);
		close(options->mediator_fd);
		return NULL;
	}
	s->opt = *options;
	for (uint32_t i = 0; i < NQUEUES; i++)
		virtqueue_init(&s->vq[i]);
	s->session = worker_session_create(options, "vm");
	s->mem = guest_mem_create();
	if (!s->session || !s->mem)
		goto fail;
	s->link = worker_session_link(s->session);
	/* Before the session opens: the system-call filter allows no /proc reads. */
	report_client(s);
	if (worker_session_open(s->session) < 0)
		goto fail;
	s->dev = vgpu_device_create(&(struct vgpu_device_options){
	    .worker = &s->opt,
	    .session = s->session,
	    .mem = s->mem,
	    .queues = {&s->vq[0], &s->vq[1]},
	});
	if (!s->dev)
		goto fail;
	return s;
fail:
	vhost_gpu_server_destroy(s);
	return NULL;
}

void vhost_gpu_server_destroy(struct vhost_gpu_server *server)
{
	if (!server)
		return;
	vgpu_device_destroy(server->dev);
	host_work_final();
	for (uint32_t i = 0; i < NQUEUES; i++)
		virtqueue_finish(&server->vq[i]);
	guest_mem_destroy(server->mem);
	worker_session_destroy(server->session);
	close(server->opt.client_fd);
	free(server);
}

/* ---- vhost-user messages --------------------------------------------------- */

static bool any_started(const struct vhost_gpu_server *s)
{
	for (uint32_t i = 0; i < NQUEUES; i++)
		if (s->vq[i].started)
			return true;
	return false;
}

static int start_ring(struct vhost_gpu_server *s, struct virtqueue *vq, int kick_fd)
{
	int r = virtqueue_start(vq, s->mem, kick_fd);

	if (r < 0)
		return r;
	vq->event_idx = s->features & (1ull << VIRTIO_RING_F_EVENT_IDX);
	vq->indirect = s->features & (1ull << VIRTIO_RING_F_INDIRECT_DESC);
	if (!(s->features & (1ull << VHOST_USER_F_PROTOCOL_FEATURES)))
		vq->enabled = true;
	s->ever_started = true;
	return 0;
}

/* Stops @vq; returns where it stopped. */
static uint16_t stop_ring(struct vhost_gpu_server *s, struct virtqueue *vq)
{
	uint16_t base = virtqueue_stop(vq);

	if (s->ever_started && !any_started(s)) {
		srv_log(LOG_LEVEL_INFO, s, "device stopped: the guest's GPU state is dropped");
		vgpu_device_reset(s->dev);
	}
	return base;
}

static void set_fd(int *slot, int fd)
{
	if (*slot >= 0)
		close(*slot);
	*slot = fd;
}

/* Why guest_mem_set() refused a table (its errno @r), for the log line. */
static const char *mem_table_refusal(int r)
{
	switch (r) {
	case -ENXIO:
		return "memory table refused: a region's mmap_offset + size is past the end of "
		       "its file";
	case -ENODEV:
		return "memory table refused: a region's fd is not a file (its size cannot be "
		       "checked)";
	default:
		return "memory table refused (bad or overlapping regions, or mmap failed)";
	}
}

/* SET_VRING_NUM/ADDR/BASE of a stopped ring (the caller checked). */
static int set_ring(struct vhost_gpu_server *s, const struct vhost_user_msg *m, const char **what)
{
	struct virtqueue *vq = &s->vq[m->payload.state.index];
	int r;

	switch (m->request) {
	case VHOST_USER_SET_VRING_NUM:
		r = virtqueue_set_num(vq, m->payload.state.num);
		break;
	case VHOST_USER_SET_VRING_ADDR:
		r = virtqueue_set_addr(vq, m->payload.addr.desc_uva, m->payload.addr.avail_uva,
				       m->payload.addr.used_uva);
		break;
	default: /* VHOST_USER_SET_VRING_BASE */
		r = virtqueue_set_base(vq, (uint16_t)m->payload.state.num);
		break;
	}
	if (r == -EBUSY)
		*what = "the ring is started (SET_VRING_KICK came, GET_VRING_BASE did not): "
			"its size, addresses and base change only while it is stopped";
	else if (r < 0)
		*what = "ring size not a power of two up to 32768";
	return r < 0 ? -EPROTO : 0;
}

/*
 * Acts on a checked message. Returns 0, a positive value when it already
 * replied, or a negative errno (with *@what) that ends the connection.
 */
static int handle(struct vhost_gpu_server *s, const struct vhost_user_msg *m, int *fds, int nfds,
		  const char **what)
{
	int fd = s->opt.client_fd;
	uint64_t u64;
	uint32_t ring = m->payload.state.index;
	struct guest_mem_region regions[GUEST_MEM_MAX_REGIONS];
	struct virtqueue *vq;
	int r;

	switch (m->request) {
	case VHOST_USER_GET_FEATURES:
		u64 = OFFERED_FEATURES;
		return vhost_user_reply(fd, m->request, &u64, sizeof(u64)) ?: 1;
	case VHOST_USER_SET_FEATURES:
		r = vhost_user_negotiate_features(OFFERED_FEATURES, m->payload.u64, &u64, what);
		if (r < 0) {
			srv_log(LOG_LEVEL_ERROR, s, "SET_FEATURES %#llx, offered %#llx",
				(unsigned long long)m->payload.u64,
				(unsigned long long)OFFERED_FEATURES);
			return r;
		}
		if (m->payload.u64 & ~OFFERED_FEATURES)
			srv_log(
			    LOG_LEVEL_DEBUG, s,
			    "SET_FEATURES: ignoring %#llx, which the front-end implements itself",
			    (unsigned long long)(m->payload.u64 & ~OFFERED_FEATURES));
		s->features = u64;
		return 0;
	case VHOST_USER_GET_PROTOCOL_FEATURES:
		u64 = OFFERED_PROTOCOL_FEATURES;
		return vhost_user_reply(fd, m->request, &u64, sizeof(u64)) ?: 1;
	case VHOST_USER_SET_PROTOCOL_FEATURES:
		s->protocol_features = m->payload.u64 & OFFERED_PROTOCOL_FEATURES;
		return 0;
	case VHOST_USER_SET_OWNER:
		return 0;
	case VHOST_USER_RESET_OWNER:
	case VHOST_USER_RESET_DEVICE:
		for (uint32_t i = 0; i < NQUEUES; i++)
			virtqueue_finish(&s->vq[i]);
		vgpu_device_reset(s->dev);
		s->features = 0;
		return 0;
	case VHOST_USER_SET_MEM_TABLE:
		if (any_started(s)) {
			*what = "memory table changed while rings run";
			for (int i = 0; i < nfds; i++)
				close(fds[i]);
			return -EPROTO;
		}
		memcpy(regions, m->payload.memory.regions, sizeof(regions));
		r = guest_mem_set(s->mem, regions, fds, m->payload.memory.nregions);
		if (r < 0) {
			*what = mem_table_refusal(r);
			return -EPROTO;
		}
		vgpu_device_remap(s->dev);
		return 0;
	case VHOST_USER_SET_VRING_NUM:
	case VHOST_USER_SET_VRING_ADDR:
	case VHOST_USER_SET_VRING_BASE:
		return set_ring(s, m, what);
	case VHOST_USER_GET_VRING_BASE: {
		struct vhost_user_vring_state st = {ring, 0};

		st.num = stop_ring(s, &s->vq[ring]);
		return vhost_user_reply(fd, m->request, &st, sizeof(st)) ?: 1;
	}
	case VHOST_USER_SET_VRING_KICK:
		ring = (uint32_t)(m->payload.u64 & VHOST_USER_VRING_IDX_MASK);
		if (nfds == 0) {
			*what = "polling mode (no kick fd) is not supported";
			return -EPROTO;
		}
		vq = &s->vq[ring];
		if (start_ring(s, vq, fds[0]) < 0) {
			*what = "ring addresses outside the memory table or bad size";
			return -EPROTO;
		}
		return 0;
	case VHOST_USER_SET_VRING_CALL:
		ring = (uint32_t)(m->payload.u64 & VHOST_USER_VRING_IDX_MASK);
		set_fd(&s->vq[ring].call_fd, nfds ? fds[0] : -1);
		return 0;
	case VHOST_USER_SET_VRING_ERR:
		if (nfds)
			close(fds[0]);
		return 0;
	case VHOST_USER_SET_VRING_ENABLE:
		s->vq[ring].enabled = m->payload.state.num != 0;
		return 0;
	case VHOST_USER_GET_QUEUE_NUM:
		u64 = NQUEUES;
		return vhost_user_reply(fd, m->request, &u64, sizeof(u64)) ?: 1;
	case VHOST_USER_GET_CONFIG: {
		struct vhost_user_config c = m->payload.config;
		struct virtio_gpu_config cfg = {.num_scanouts = 1,
						.num_capsets = vgpu_device_num_capsets()};
		uint8_t space[VHOST_USER_MAX_CONFIG] = {0};

		memcpy(space, &cfg, sizeof(cfg));
		memcpy(c.payload, space + c.offset, c.size);
		return vhost_user_reply(fd, m->request, &c, 12 + c.size) ?: 1;
	}
	case VHOST_USER_SET_CONFIG:
		/* events_clear: no events are ever raised. */
		return 0;
	case VHOST_USER_GPU_SET_SOCKET:
		vgpu_device_set_display(s->dev, fds[0]);
		return 0;
	default:
		*what = "request not supported";
		return -EPROTO;
	}
}

static int read_qemu(struct vhost_gpu_server *s)
{
	struct vhost_user_msg m;
	int fds[VHOST_USER_MAX_FDS], nfds = 0;
	const char *what = NULL;
	int r;

	r = vhost_user_recv(s->opt.client_fd, &m, fds, &nfds, &what);
	if (r == 0)
		return -ECONNRESET;
	if (r < 0) {
		srv_log(LOG_LEVEL_ERROR, s, "vhost-user: %s; closing the connection",
			what ? what : strerror(-r));
		return -EPROTO;
	}
	r = vhost_user_check(&m, nfds, NQUEUES, &what);
	if (r == 0)
		r = handle(s, &m, fds, nfds, &what);
	else
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
	if (r < 0) {
		srv_log(LOG_LEVEL_ERROR, s, "vhost-user %s: %s; closing the connection",
			vhost_user_request_name(m.request), what ? what : strerror(-r));
		return -EPROTO;
	}
	/* REPLY_ACK: a request that has no reply of its own is acknowledged. */
	if (r == 0 && (m.flags & VHOST_USER_NEED_REPLY) &&
	    (s->protocol_features & (1ull << VHOST_USER_PROTOCOL_F_REPLY_ACK))) {
		uint64_t ok = 0;

		r = vhost_user_reply(s->opt.client_fd, m.request, &ok, sizeof(ok));
		if (r < 0) {
			srv_log(LOG_LEVEL_ERROR, s,
				"vhost-user %s: acknowledging: %s; closing the "
				"connection",
				vhost_user_request_name(m.request), strerror(-r));
			return -EPIPE;
		}
	}
	return 0;
}

/* ---- main loop ------------------------------------------------------------- */

static void drain_eventfd(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing to take. */
	}
}

int vhost_gpu_server_run(struct vhost_gpu_server *server)
{
	struct vhost_gpu_server *s = server;

	for (;;) {
		struct pollfd pfd[6] = {
		    {.fd = s->opt.client_fd, .events = POLLIN},
		    {.fd = mediator_link_fd(s->link), .events = POLLIN},
		    {.fd = renderer_completion_fd(worker_session_renderer(s->session)),
		     .events = POLLIN},
		    {.fd = s->vq[0].started ? s->vq[0].kick_fd : -1, .events = POLLIN},
		    {.fd = s->vq[1].started ? s->vq[1].kick_fd : -1, .events = POLLIN},
		    {.fd = vgpu_device_display_fd(s->dev), .events = 0},
		};
		int timeout = mediator_link_timeout_ms(s->link);
		bool backlog[NQUEUES];
		int r;

		if (timeout < 0 && vgpu_device_inflight(s->dev))
			timeout = WIRE_FLUSH_MS;
		/* Requests left by the last wake-up's budget: look at the other
		 * fds without waiting, then serve them (no kick will come). */
		for (uint32_t i = 0; i < NQUEUES; i++) {
			backlog[i] = vgpu_device_backlog(s->dev, (enum vgpu_queue)i);
			if (backlog[i])
				timeout = 0;
		}
		if (poll(pfd, 6, timeout) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (mediator_link_on_events(s->link, pfd[1].revents) < 0)
			return -EPIPE;
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			r = read_qemu(s);
			if (r == -ECONNRESET) {
				srv_log(LOG_LEVEL_INFO, s, "QEMU disconnected");
				return 0;
			}
			if (r < 0)
				return r;
		}
		if (pfd[5].revents & (POLLHUP | POLLERR))
			vgpu_device_set_display(s->dev, -1);
		if (pfd[2].revents & POLLIN)
			renderer_ack_wakeup(worker_session_renderer(s->session));
		vgpu_device_wakeup(s->dev);
		for (uint32_t i = 0; i < NQUEUES; i++) {
			if (pfd[3 + i].revents & POLLIN)
				drain_eventfd(s->vq[i].kick_fd);
		}
		/* Completions and grants first: they may release a held request. */
		vgpu_device_poll(s->dev);
		for (uint32_t i = 0; i < NQUEUES; i++) {
			if ((pfd[3 + i].revents & POLLIN) || backlog[i])
				vgpu_device_process(s->dev, (enum vgpu_queue)i);
		}
		r = worker_session_tick(s->session);
		if (r < 0)
			return r;
	}
}
