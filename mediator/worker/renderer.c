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
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <virgl/virglrenderer.h>

#include "groups.h"
#include "renderer.h"
#include "util.h"

#define COMPLETION_RING_SIZE 4096u
_Static_assert(COMPLETION_RING_SIZE > GROUPS_MAX_TRACKED,
	       "completion ring smaller than the groups in flight");

struct completion {
	uint32_t fence_id;
	uint64_t end_ns;
};

struct renderer {
	int event_fd;
	int drm_fd_to_give; /* for egl-gbm: handed to virglrenderer once */
	char render_node[CONFIG_PATH_MAX];
	atomic_uint head; /* next slot the producer writes */
	atomic_uint tail; /* next slot the consumer reads */
	atomic_uint overflow_fence;
	struct completion ring[COMPLETION_RING_SIZE];
};

/* virglrenderer has process-global state: so does this. */
static struct renderer *the_renderer;

/* Runs on virglrenderer's sync thread (ASYNC_FENCE_CB). */
static void on_write_fence(void *cookie, uint32_t fence_id)
{
	struct renderer *r = cookie;
	uint64_t now = mono_now_ns();
	unsigned head = atomic_load_explicit(&r->head, memory_order_relaxed);
	unsigned tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint64_t one = 1;

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

	return open(r->render_node, O_RDWR | O_CLOEXEC);
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
		if (access(render_node, R_OK | W_OK) < 0) {
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
			 config_renderer_name(kind), ret);
		close(r->event_fd);
		free(r);
		return NULL;
	}
	the_renderer = r;
	return r;
}

void renderer_destroy(struct renderer *renderer)
{
	if (!renderer)
		return;
	virgl_renderer_cleanup(renderer);
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
	return "fence-callback";
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

	return ret ? -(ret < 0 ? -ret : ret) : 0;
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

		atomic_store_explicit(&r->tail, ++tail, memory_order_release);
		fn(c.fence_id, c.end_ns, data);
	}
	overflow = atomic_exchange_explicit(&r->overflow_fence, 0, memory_order_acquire);
	if (overflow)
		fn(overflow, mono_now_ns(), data);
}
