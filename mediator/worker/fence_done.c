// SPDX-License-Identifier: MIT
/*
 * The early WIRE_DONE (see fence_done.h): a table of armed grants under
 * one mutex, shared by the main thread and virglrenderer's sync thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/socket.h>

#include "worker/fence_done.h"
#include "common/wire.h"

enum slot_state {
	SLOT_FREE = 0,
	SLOT_ARMED, /* waiting for its fence */
	SLOT_SENT,  /* its WIRE_DONE went out; the main thread has not taken it yet */
};

struct slot {
	enum slot_state state;
	int fd;
	uint32_t fence_id;
	uint64_t grant_id;
	uint64_t dispatch_ns;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[FENCE_DONE_SLOTS];
static uint64_t last_end_ns; /* the latest fence completion seen */

int fence_done_arm(int fd, uint32_t fence_id, uint64_t grant_id, uint64_t dispatch_ns)
{
	int ret = -ENOSPC;

	if (fd < 0 || grant_id == 0)
		return -EINVAL;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < FENCE_DONE_SLOTS; i++) {
		if (slots[i].state == SLOT_FREE) {
			slots[i] = (struct slot){SLOT_ARMED, fd, fence_id, grant_id, dispatch_ns};
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

bool fence_done_take(uint64_t grant_id)
{
	bool sent = false;

	if (grant_id == 0)
		return false;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < FENCE_DONE_SLOTS; i++) {
		if (slots[i].state != SLOT_FREE && slots[i].grant_id == grant_id) {
			sent = slots[i].state == SLOT_SENT;
			slots[i].state = SLOT_FREE;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return sent;
}

void fence_done_forget(int fd)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < FENCE_DONE_SLOTS; i++)
		if (slots[i].state != SLOT_FREE && slots[i].fd == fd)
			slots[i].state = SLOT_FREE;
	pthread_mutex_unlock(&lock);
}

/* Whether fence @a signalled no later than @b (ids increase and wrap). */
static bool fence_not_after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

/*
 * The armed slot with the earliest fence up to @fence_id not yet @tried, or
 * NULL. Relayed in fence order: one callback may stand for several fences
 * (virglrenderer reports a context's latest signalled fence), and the
 * slots' order is only the order they were freed in.
 */
static struct slot *earliest_armed(uint32_t fence_id, const bool *tried)
{
	struct slot *best = NULL;

	for (size_t i = 0; i < FENCE_DONE_SLOTS; i++) {
		struct slot *s = &slots[i];

		if (tried[i] || s->state != SLOT_ARMED || !fence_not_after(s->fence_id, fence_id))
			continue;
		if (!best || fence_not_after(s->fence_id, best->fence_id))
			best = s;
	}
	return best;
}

void fence_done_signalled(uint32_t fence_id, uint64_t end_ns)
{
	bool tried[FENCE_DONE_SLOTS] = {false};
	int full_fd = -1; /* a channel that did not take one: its later ones wait too */
	uint64_t floor_ns;
	struct slot *s;

	pthread_mutex_lock(&lock);
	floor_ns = last_end_ns;
	if (end_ns > last_end_ns)
		last_end_ns = end_ns;
	while ((s = earliest_armed(fence_id, tried))) {
		uint64_t start = s->dispatch_ns > floor_ns ? s->dispatch_ns : floor_ns;
		struct wire_done done = {.hdr = {WIRE_DONE, sizeof(done)}};

		tried[s - slots] = true;
		if (s->fd == full_fd)
			continue;
		done.id = s->grant_id;
		done.end_ns = end_ns > start ? end_ns : start;
		done.measured_ns = done.end_ns - start;
		/* Never blocks: a full channel leaves it to the main thread. */
		if (send(s->fd, &done, sizeof(done), MSG_DONTWAIT | MSG_NOSIGNAL) ==
		    (ssize_t)sizeof(done))
			s->state = SLOT_SENT;
		else
			full_fd = s->fd;
	}
	pthread_mutex_unlock(&lock);
}
