// SPDX-License-Identifier: MIT
/*
 * A command group's whole life in a worker, whatever transport carried it
 * (doc/design.md, "Data flow"). A transport hands the runner each group a
 * guest submitted, and the runner takes it through
 *   prepare   decode + predict, and plan its pieces (gpu_context_prepare():
 *             a stream the decoder rejects never reaches the GPU);
 *   slot      a free in-flight slot of its context (max_inflight) and room
 *             for one more fence in the transport (ops->fence_room);
 *   grant     when mediatord schedules, for each piece: the grant board's
 *             offer, or mediatord's answer to a request;
 *   dispatch  each piece to the renderer, followed by a fence of the
 *             transport's numbering (ops->next_fence, ops->dispatched);
 * and completion is its fences': the transport hands each signalled fence
 * to gpu_context_complete() (measurement, WIRE_DONE, learning), and ends a
 * context with group_runner_end_context() (its groups drained, an unfinished
 * group forgotten).
 *
 * When a step must wait, group_runner_submit() returns what the group
 * waits for (enum group_wait). The transport blocks its client in its own
 * way (vtest stops reading its socket, vhost-user holds its control queue)
 * and calls group_runner_resume() whenever the wait may be over: after it
 * took fence completions, after mediatord's link had events. A worker has
 * one group under way at a time (its transport blocks while one waits),
 * and mediatord answers one grant request at a time.
 *
 * Main thread only; the ops are called from within submit and resume.
 */
#ifndef MEDIATOR_GROUP_RUNNER_H
#define MEDIATOR_GROUP_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/gpu_context.h"
#include "worker/mediator_link.h"

/* What the group under way waits for. */
enum group_wait {
	GROUP_DONE = 0,	   /* nothing: every piece is on the GPU (or there is no group) */
	GROUP_WAITS_SLOT,  /* a free in-flight slot of its context, or the transport's fence room */
	GROUP_WAITS_GRANT, /* mediatord's answer to the grant request of its next piece */
};

#define GROUP_RUNNER_OPS_VERSION 1u

/* What a transport does for the runner; @data is group_runner_options.data. */
struct group_runner_ops {
	uint32_t version; /* GROUP_RUNNER_OPS_VERSION */
	/* True when the transport can take one more fence now (vhost-user: its pending list). */
	bool (*fence_room)(void *data);
	/* The fence id the next piece gets: unique in the worker, increasing. Not yet taken. */
	uint32_t (*next_fence)(void *data);
	/*
	 * The piece of @ctx with sequence number @seq (gpu_context_dispatch())
	 * is on the GPU, followed by fence @fence_id (the id next_fence() gave):
	 * the transport takes the id and remembers what the fence ends.
	 */
	void (*dispatched)(void *data, struct gpu_context *ctx, uint32_t fence_id, uint64_t seq);
};

struct group_runner_options {
	const char *domain;		    /* for log lines */
	uint32_t client_id;		    /* for log lines */
	bool grants;			    /* ask for a grant before each piece (wire.h) */
	struct mediator_link *link;	    /* the worker's; not owned */
	const struct group_runner_ops *ops; /* not owned; outlives the runner */
	void *data;			    /* the ops' */
};

struct group_runner;

/* NULL on allocation failure. */
struct group_runner *group_runner_create(const struct group_runner_options *options);
/* NULL is fine. A group under way is forgotten (its context ends it: group_runner_end_context()).
 */
void group_runner_destroy(struct group_runner *runner);

/*
 * Takes the group at @buf (@ndw dwords) of context @ctx as far as it goes
 * now: slot, prepare, and for each piece slot, grant and dispatch. @buf
 * must stay valid and unchanged until the group is done. Returns 0 with
 * *@wait saying what it waits for (GROUP_DONE: nothing), or a negative
 * errno that ends the group (logged; nothing more of it is dispatched):
 *   -EPROTO  the decoder rejected the stream (none of it was dispatched);
 *   -EPERM   the scheduler refused a piece: its context is unschedulable;
 *   -EIO     a piece's fence could not be created (the context is broken);
 *   -EBUSY   another group is under way (group_runner_wait()).
 */
int group_runner_submit(struct group_runner *runner, struct gpu_context *ctx, const uint32_t *buf,
			size_t ndw, enum group_wait *wait);

/*
 * Goes on with the group under way if what it waits for has come (a slot
 * freed, mediatord's answer taken from the link). Returns as
 * group_runner_submit(); 0 with GROUP_DONE when no group was under way.
 */
int group_runner_resume(struct group_runner *runner, enum group_wait *wait);

/* What the group under way waits for; GROUP_DONE when none is. */
enum group_wait group_runner_wait(const struct group_runner *runner);

/*
 * Context @ctx ends (the guest destroyed it, its stream or the scheduler
 * cost it, its client left): its group under way, if any, is forgotten,
 * and the context is drained and destroyed (gpu_context_drain() with
 * @poll(@data), gpu_context_destroy()). A grant asked for the forgotten
 * group is still awaited (mediatord answers one request at a time):
 * group_runner_wait() says GROUP_WAITS_GRANT until group_runner_resume()
 * took the answer, and a grant given then is released unused. NULL @ctx
 * is fine, and so is a NULL @runner (a transport that never ran a group).
 */
void group_runner_end_context(struct group_runner *runner, struct gpu_context *ctx,
			      void (*poll)(void *data), void *data);

#endif
