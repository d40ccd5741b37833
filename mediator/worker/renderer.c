// SPDX-License-Identifier: MIT
/*
 * virglrenderer set-up and fence completion timestamps (see renderer.h).
 *
 * The completion ring: the sync thread is the only producer, the main
 * thread the only consumer. Each side owns one index; the indices are
 * C11 atomics with release/acquire ordering so that a slot's contents are
 * visible before its index moves. The ring holds more entries than
 * fences can be in flight (GROUPS_MAX_TRACKED), so it never overflows;
 * should it ever, the newest completion is kept in `overflow_*` and the
 * consumer completes everything up to it, which loses per-group precision
 * but never a completion.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <virgl/virglrenderer.h>

#include "worker/fence_done.h"
#include "gm_fence.h"
#include "worker/groups.h"
#include "worker/renderer.h"
#include "worker/timestamp_source.h"
#include "common/util.h"

#define COMPLETION_RING_SIZE 4096u
_Static_assert(COMPLETION_RING_SIZE > GROUPS_MAX_TRACKED,
	       "completion ring smaller than the groups in flight");

struct completion {
	uint32_t fence_id;
	uint64_t end_ns;
};

/* The fence id that probes, at start-up, whether fences export as sync_files. */
#define PROBE_FENCE_ID UINT32_MAX

/* A fence's sync_file, while the fence is pending (sync_files only). */
struct pending_sync {
	uint32_t fence_id;
	int fd; /* -1: none */
};

struct renderer {
	int event_fd;
	int drm_fd_to_give; /* for egl-gbm: handed to virglrenderer once */
	char render_node[PATH_MAX];
	atomic_uint head; /* next slot the producer writes */
	atomic_uint tail; /* next slot the consumer reads */
	atomic_uint overflow_fence;
	struct completion ring[COMPLETION_RING_SIZE];
	/* Main thread: where completion times come from (timestamp_source.h). */
	struct timestamp_source ts;
	bool sync_files;
	struct pending_sync sync[COMPLETION_RING_SIZE];
};

/* virglrenderer has process-global state: so does this. */
static struct renderer *the_renderer;
/* Devices opened before the worker gave up its rights (renderer_preopen()); -1: none. */
static int preopened_render_fd = -1, preopened_kmod_fd = -1;

void renderer_preopen(enum mediator_renderer kind, const char *render_node)
{
	if (kind == MEDIATOR_RENDERER_EGL_GBM && render_node && preopened_render_fd < 0)
		preopened_render_fd = open(render_node, O_RDWR | O_CLOEXEC);
	if (preopened_kmod_fd < 0)
		preopened_kmod_fd = open(GM_FENCE_DEVICE, O_RDONLY | O_CLOEXEC);
}

int renderer_preopened_fds(int fds[2])
{
	int n = 0;

	if (preopened_render_fd >= 0)
		fds[n++] = preopened_render_fd;
	if (preopened_kmod_fd >= 0)
		fds[n++] = preopened_kmod_fd;
	return n;
}

/* A descriptor of its own for a device: a dup of the preopened one, else opened now. */
static int device_fd(int preopened, const char *path, int flags)
{
	if (preopened >= 0)
		return fcntl(preopened, F_DUPFD_CLOEXEC, 0);
	return open(path, flags | O_CLOEXEC);
}

/* Runs on virglrenderer's sync thread (ASYNC_FENCE_CB). */
static void on_write_fence(void *cookie, uint32_t fence_id)
{
	struct renderer *r = cookie;
	uint64_t now = mono_now_ns();
	unsigned head = atomic_load_explicit(&r->head, memory_order_relaxed);
	unsigned tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint64_t one = 1;

	/* mediatord first: it holds the GPU for a granted group until told. */
	fence_done_signalled(fence_id, now);
	if (head - tail < COMPLETION_RING_SIZE) {
		r->ring[head % COMPLETION_RING_SIZE] = (struct completion){fence_id, now};
		atomic_store_explicit(&r->head, head + 1, memory_order_release);
	} else {
		atomic_store_explicit(&r->overflow_fence, fence_id, memory_order_release);
	}
	if (write(r->event_fd, &one, sizeof(one)) < 0) {
		/* The eventfd counter cannot overflow in practice; nothing to do. */
	}
}

/* Runs on the main thread during virgl_renderer_init() for egl-gbm. */
static int on_get_drm_fd(void *cookie)
{
	struct renderer *r = cookie;

	return device_fd(preopened_render_fd, r->render_node, O_RDWR);
}

static struct virgl_renderer_callbacks callbacks = {
    .version = 2,
    .write_fence = on_write_fence,
    .get_drm_fd = on_get_drm_fd,
};

struct renderer *renderer_create(enum mediator_renderer kind, const char *render_node, char *err,
				 size_t err_size)
{
	struct renderer *r;
	int flags = VIRGL_RENDERER_THREAD_SYNC | VIRGL_RENDERER_ASYNC_FENCE_CB;
	int ret;

	if (the_renderer) {
		snprintf(err, err_size, "a renderer already exists in this process");
		return NULL;
	}
	switch (kind) {
	case MEDIATOR_RENDERER_EGL_SURFACELESS:
		flags |= VIRGL_RENDERER_USE_EGL | VIRGL_RENDERER_USE_SURFACELESS;
		break;
	case MEDIATOR_RENDERER_EGL_GBM:
		flags |= VIRGL_RENDERER_USE_EGL;
		if (preopened_render_fd < 0 && access(render_node, R_OK | W_OK) < 0) {
			snprintf(err, err_size, "render node %s: %s", render_node, strerror(errno));
			return NULL;
		}
		break;
	case MEDIATOR_RENDERER_GLX:
		flags |= VIRGL_RENDERER_USE_GLX;
		if (!getenv("DISPLAY")) {
			snprintf(err, err_size,
				 "renderer glx needs an X display (DISPLAY is not set)");
			return NULL;
		}
		break;
	case MEDIATOR_RENDERER_COUNT:
	default:
		snprintf(err, err_size, "unknown renderer kind %d", (int)kind);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	snprintf(r->render_node, sizeof(r->render_node), "%s", render_node ? render_node : "");
	r->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->event_fd < 0) {
		snprintf(err, err_size, "eventfd: %s", strerror(errno));
		free(r);
		return NULL;
	}
	ret = virgl_renderer_init(r, flags, &callbacks);
	if (ret) {
		snprintf(err, err_size, "virgl_renderer_init (%s) failed: %d",
			 renderer_kind_name(kind), ret);
		close(r->event_fd);
		free(r);
		return NULL;
	}
	the_renderer = r;
	for (unsigned i = 0; i < COMPLETION_RING_SIZE; i++)
		r->sync[i].fd = -1;
	/* Can fences be had as sync_files? Only where the renderer's driver
	 * has kernel fences (EGL_ANDROID_native_fence_sync). */
	if (virgl_renderer_create_fence((int)PROBE_FENCE_ID, 0) == 0) {
		int fd = -1;

		if (virgl_renderer_export_fence(PROBE_FENCE_ID, &fd) == 0 && fd >= 0) {
			r->sync_files = true;
			close(fd);
		}
	}
	timestamp_source_choose(&r->ts, r->sync_files,
				device_fd(preopened_kmod_fd, GM_FENCE_DEVICE, O_RDONLY));
	return r;
}

void renderer_destroy(struct renderer *renderer)
{
	if (!renderer)
		return;
	virgl_renderer_cleanup(renderer);
	for (unsigned i = 0; i < COMPLETION_RING_SIZE; i++)
		if (renderer->sync[i].fd >= 0)
			close(renderer->sync[i].fd);
	timestamp_source_finish(&renderer->ts);
	close(renderer->event_fd);
	the_renderer = NULL;
	free(renderer);
}

int renderer_completion_fd(const struct renderer *renderer)
{
	return renderer->event_fd;
}

const char *renderer_timestamp_source(const struct renderer *renderer)
{
	return timestamp_source_name(&renderer->ts);
}

void renderer_ack_wakeup(struct renderer *renderer)
{
	uint64_t count;

	if (read(renderer->event_fd, &count, sizeof(count)) < 0) {
		/* EAGAIN: already acknowledged. */
	}
}

int renderer_fence(struct renderer *renderer, uint32_t ctx_id, uint32_t fence_id)
{
	int ret = virgl_renderer_create_fence((int)fence_id, ctx_id);
	struct pending_sync *p = &renderer->sync[fence_id % COMPLETION_RING_SIZE];

	if (ret)
		return -(ret < 0 ? -ret : ret);
	if (renderer->sync_files) {
		if (p->fd >= 0)
			close(p->fd);
		p->fd = -1;
		p->fence_id = fence_id;
		if (virgl_renderer_export_fence(fence_id, &p->fd) != 0)
			p->fd = -1;
	}
	return 0;
}

void renderer_take_completions(struct renderer *renderer,
			       void (*fn)(uint32_t fence_id, uint64_t end_ns, void *data),
			       void *data)
{
	struct renderer *r = renderer;
	unsigned tail, head, overflow;

	tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	head = atomic_load_explicit(&r->head, memory_order_acquire);
	while (tail != head) {
		struct completion c = r->ring[tail % COMPLETION_RING_SIZE];
		struct pending_sync *p = &r->sync[c.fence_id % COMPLETION_RING_SIZE];

		atomic_store_explicit(&r->tail, ++tail, memory_order_release);
		if (c.fence_id == PROBE_FENCE_ID)
			continue;
		/* The signal path's own time, where the source has it. */
		if (p->fd >= 0 && p->fence_id == c.fence_id) {
			uint64_t t;

			if (timestamp_source_end_ns(&r->ts, p->fd, &t) == 0 && t <= c.end_ns)
				c.end_ns = t;
			close(p->fd);
			p->fd = -1;
		}
		fn(c.fence_id, c.end_ns, data);
	}
	overflow = atomic_exchange_explicit(&r->overflow_fence, 0, memory_order_acquire);
	if (overflow)
		fn(overflow, mono_now_ns(), data);
}
