// SPDX-License-Identifier: MIT
/*
 * A transport's session with its client, as every transport starts it
 * (see worker_session.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "worker/syscall_filter.h"
#include "worker/host_work.h"
#include "worker/worker_session.h"
#include "common/util.h"

struct worker_session {
	struct worker_options opt;
	const char *peer;
	struct mediator_link *link;
	struct renderer *renderer; /* NULL until open */
	bool failed;	    /* the renderer or the filter failed: never open (a renderer stays) */
	char identity[128]; /* the renderer's, for learned state */
};

#define session_log(level, s, fmt, ...)                                                            \
	log_msg(level, "domain %s %s %u: " fmt, (s)->opt.domain, (s)->peer, (s)->opt.client_id,    \
		##__VA_ARGS__)

struct worker_session *worker_session_create(const struct worker_options *options, const char *peer)
{
	struct worker_session *s = calloc(1, sizeof(*s));

	if (!s) {
		close(options->mediator_fd);
		return NULL;
	}
	s->opt = *options;
	s->peer = peer;
	s->link = mediator_link_create(options->mediator_fd, options->domain, options->client_id);
	if (!s->link) {
		close(options->mediator_fd);
		free(s);
		return NULL;
	}
	if (options->grants && options->board_domain >= 0 &&
	    mediator_link_attach_board(s->link, options->board_fd, options->board_domain) < 0)
		session_log(LOG_LEVEL_WARN, s, "no grant board: every group asks mediatord");
	if (options->idle_host_work)
		host_work_enable(s->link);
	return s;
}

void worker_session_destroy(struct worker_session *session)
{
	if (!session)
		return;
	renderer_destroy(session->renderer);
	mediator_link_destroy(session->link);
	free(session);
}

int worker_session_open(struct worker_session *session)
{
	struct worker_session *s = session;
	char err[256];

	if (s->failed)
		return -ENODEV;
	if (s->renderer)
		return 0;
	/* A normal domain's workers make their renderers one at a time (wire.h, WIRE_START). */
	if (s->opt.start_turn && mediator_link_wait_start(s->link) < 0) {
		s->failed = true;
		session_log(LOG_LEVEL_ERROR, s, "mediatord went away before the renderer was made");
		return -ENODEV;
	}
	s->renderer = renderer_create(s->opt.renderer, s->opt.render_node, err, sizeof(err));
	if (!s->renderer) {
		s->failed = true;
		session_log(LOG_LEVEL_ERROR, s, "cannot start the renderer: %s", err);
		return -ENODEV;
	}
	/* The renderer is up: from here on the worker needs only what the list allows. */
	if (syscall_filter_enter(s->opt.domain, s->opt.client_id) < 0) {
		s->failed = true;
		return -ENODEV;
	}
	gpu_context_identity(renderer_kind_name(s->opt.renderer), s->identity, sizeof(s->identity));
	mediator_link_hello(s->link, renderer_timestamp_source(s->renderer),
			    renderer_kind_name(s->opt.renderer));
	return 0;
}

struct gpu_context *worker_session_context_create(struct worker_session *session, uint32_t ctx_id,
						  const char *name,
						  predict_resource_data_fn resource_fn, void *data)
{
	struct worker_session *s = session;
	struct gpu_context *ctx;

	if (!s->renderer || s->failed)
		return NULL;
	ctx = gpu_context_create(&(struct gpu_context_options){
	    .domain = s->opt.domain,
	    .client_id = s->opt.client_id,
	    .ctx_id = ctx_id,
	    .name = name,
	    .model = s->opt.model,
	    .max_inflight = s->opt.max_inflight,
	    .piece_ns = s->opt.piece_ns,
	    .feature_dump_dir = s->opt.feature_dump_dir,
	    .state_dir = s->opt.state_dir,
	    .identity = s->identity,
	    .renderer = s->renderer,
	    .link = s->link,
	});
	if (ctx)
		stream_cost_set_resource_data(gpu_context_stream_cost(ctx), resource_fn, data);
	return ctx;
}

struct group_runner *worker_session_group_runner(struct worker_session *session,
						 const struct group_runner_ops *ops, void *data)
{
	return group_runner_create(&(struct group_runner_options){
	    .domain = session->opt.domain,
	    .client_id = session->opt.client_id,
	    .grants = session->opt.grants,
	    .link = session->link,
	    .ops = ops,
	    .data = data,
	});
}

int worker_session_tick(struct worker_session *session)
{
	mediator_link_tick(session->link);
	if (mediator_link_gone(session->link)) {
		session_log(LOG_LEVEL_ERROR, session,
			    "record channel to mediatord broken; stopping");
		return -EPIPE;
	}
	return 0;
}

struct mediator_link *worker_session_link(struct worker_session *session)
{
	return session->link;
}

struct renderer *worker_session_renderer(struct worker_session *session)
{
	return session->renderer;
}
