// SPDX-License-Identifier: MIT
/*
 * A command group's whole life in a worker (see group_runner.h). The
 * runner keeps the one group under way: its context and stream, whether
 * it is prepared yet, and what it waits for.
 */
#include <errno.h>
#include <stdlib.h>

#include "worker/group_runner.h"
#include "common/util.h"
#include "common/wire.h"

struct group_runner {
	struct group_runner_options opt;
	/* The group under way: ctx NULL when none is. */
	struct gpu_context *ctx;
	const uint32_t *buf;
	size_t ndw;
	bool prepared; /* gpu_context_prepare() took it: its pieces go on */
	enum group_wait wait;
	/*
	 * Its context ended while a grant was asked for it: the answer is
	 * still awaited (wait stays GROUP_WAITS_GRANT) and a grant given is
	 * released unused.
	 */
	bool forgotten;
	uint64_t grant_id; /* of the grant asked for (GROUP_WAITS_GRANT) */
};

struct group_runner *group_runner_create(const struct group_runner_options *options)
{
	struct group_runner *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->opt = *options;
	return r;
}

void group_runner_destroy(struct group_runner *runner)
{
	free(runner);
}

enum group_wait group_runner_wait(const struct group_runner *runner)
{
	return runner->wait;
}

/* The group is over (done, or ended by an error @err): returns @err. */
static int end_group(struct group_runner *r, int err)
{
	r->ctx = NULL;
	r->buf = NULL;
	r->ndw = 0;
	r->prepared = false;
	r->forgotten = false;
	r->wait = GROUP_DONE;
	return err;
}

/* The group waits for @what: returns 0 with *@wait set. */
static int wait_for(struct group_runner *r, enum group_wait what, enum group_wait *wait)
{
	r->wait = what;
	*wait = what;
	return 0;
}

/* True when the next piece (or the group, before it is prepared) may be dispatched now. */
static bool has_slot(const struct group_runner *r)
{
	if (r->opt.ops->fence_room && !r->opt.ops->fence_room(r->opt.data))
		return false;
	return gpu_context_can_dispatch(r->ctx);
}

/* Hands the next piece (granted) to the renderer with the transport's next fence. */
static int dispatch_piece(struct group_runner *r)
{
	uint32_t fence_id = r->opt.ops->next_fence(r->opt.data);
	uint64_t seq = gpu_context_dispatch(r->ctx, fence_id);

	if (seq == 0)
		return end_group(r, -EIO);
	r->opt.ops->dispatched(r->opt.data, r->ctx, fence_id, seq);
	return 0;
}

/* Takes the group under way as far as it goes now (see group_runner_submit()). */
static int run(struct group_runner *r, enum group_wait *wait)
{
	int err;

	if (!r->prepared) {
		if (!has_slot(r))
			return wait_for(r, GROUP_WAITS_SLOT, wait);
		/* A group is decoded and predicted before it may reach the
		 * GPU; a stream the decoder rejects never does. */
		if (gpu_context_prepare(r->ctx, r->buf, r->ndw) < 0)
			return end_group(r, -EPROTO);
		r->prepared = true;
	}
	while (gpu_context_pending(r->ctx)) {
		if (!has_slot(r))
			return wait_for(r, GROUP_WAITS_SLOT, wait);
		if (r->opt.grants && !gpu_context_request_grant(r->ctx)) {
			r->grant_id = gpu_context_next_piece(r->ctx)->grant_id;
			return wait_for(r, GROUP_WAITS_GRANT, wait);
		}
		err = dispatch_piece(r);
		if (err < 0)
			return err;
	}
	*wait = GROUP_DONE;
	return end_group(r, 0);
}

int group_runner_submit(struct group_runner *runner, struct gpu_context *ctx, const uint32_t *buf,
			size_t ndw, enum group_wait *wait)
{
	struct group_runner *r = runner;

	*wait = GROUP_DONE;
	if (r->wait != GROUP_DONE)
		return -EBUSY;
	r->ctx = ctx;
	r->buf = buf;
	r->ndw = ndw;
	r->prepared = false;
	return run(r, wait);
}

/* The answer to the grant request came: @verdict for the group under way (or forgotten). */
static int granted(struct group_runner *r, uint32_t verdict, enum group_wait *wait)
{
	const struct group_info *info;
	int err;

	if (r->forgotten) {
		if (verdict == WIRE_GRANTED)
			mediator_link_done(r->opt.link, r->grant_id, 0, mono_now_ns());
		*wait = GROUP_DONE;
		return end_group(r, 0);
	}
	if (verdict != WIRE_GRANTED) {
		info = gpu_context_next_piece(r->ctx);
		log_msg(LOG_LEVEL_ERROR,
			"domain %s client %u context %u (%s): group refused by the scheduler: its "
			"context is unschedulable (predicted %.0f us, bound %.0f us: it never fits "
			"the safety domains' gaps)",
			r->opt.domain, r->opt.client_id, gpu_context_id(r->ctx),
			gpu_context_name(r->ctx), info->est.predicted_ns / 1000,
			info->est.bound_ns / 1000);
		return end_group(r, -EPERM);
	}
	err = dispatch_piece(r);
	if (err < 0)
		return err;
	return run(r, wait);
}

int group_runner_resume(struct group_runner *runner, enum group_wait *wait)
{
	struct group_runner *r = runner;
	uint32_t verdict;

	*wait = GROUP_DONE;
	switch (r->wait) {
	case GROUP_WAITS_GRANT:
		if (!mediator_link_take_grant(r->opt.link, &verdict)) {
			*wait = GROUP_WAITS_GRANT;
			return 0;
		}
		r->wait = GROUP_DONE;
		return granted(r, verdict, wait);
	case GROUP_WAITS_SLOT:
		r->wait = GROUP_DONE;
		return run(r, wait);
	case GROUP_DONE:
	default:
		*wait = GROUP_DONE;
		return 0;
	}
}

void group_runner_end_context(struct group_runner *runner, struct gpu_context *ctx,
			      void (*poll)(void *data), void *data)
{
	struct group_runner *r = runner;

	if (!ctx)
		return;
	if (r && r->ctx == ctx) {
		if (r->wait == GROUP_WAITS_GRANT) {
			r->ctx = NULL;
			r->buf = NULL;
			r->prepared = false;
			r->forgotten = true;
		} else {
			end_group(r, 0);
		}
	}
	gpu_context_drain(ctx, poll, data);
	gpu_context_destroy(ctx);
}
