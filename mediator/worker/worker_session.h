// SPDX-License-Identifier: MIT
/*
 * What every transport's session with its client starts the same way: the
 * record channel to mediatord (a mediator_link, with the grant board), the
 * renderer, the system-call filter and the hello, and the guest contexts
 * made with the worker's options (doc/design.md, "Data flow").
 *
 *   worker_session_create()  at connection time: the link and the board;
 *                            cheap, no GPU set-up.
 *   worker_session_open()    renderer start, system-call filter (from
 *                            here on the worker needs only what the list
 *                            allows), hello to mediatord. vtest opens
 *                            lazily, on the first command that needs the
 *                            GPU; vhost-user at once.
 *   worker_session_context_create()  a gpu_context with the worker's
 *                            options (model, in-flight limit, pieces,
 *                            learned state): vtest's one, or one per
 *                            virtio-gpu CTX_CREATE.
 *
 * The session owns the link and the renderer; the transport owns its
 * connection (client_fd) and its contexts. Main thread only.
 */
#ifndef MEDIATOR_WORKER_SESSION_H
#define MEDIATOR_WORKER_SESSION_H

#include <stdint.h>

#include "predict.h"
#include "worker/gpu_context.h"
#include "worker/group_runner.h"
#include "worker/mediator_link.h"
#include "worker/renderer.h"
#include "worker/worker_options.h"

struct worker_session;

/*
 * Creates the link to mediatord on @options->mediator_fd (taken: closed
 * here, on failure too) and attaches the grant board when the worker
 * schedules with one (a board that cannot be mapped is logged: every
 * group then asks mediatord). @peer names the client in log lines
 * ("client", "vm"; a static string). @options is copied; its strings must
 * outlive the session. NULL on allocation failure.
 */
struct worker_session *worker_session_create(const struct worker_options *options,
					     const char *peer);
/* Destroys the renderer and the link. The transport's contexts are gone already. NULL is fine. */
void worker_session_destroy(struct worker_session *session);

/*
 * Starts the renderer, enters the system-call filter and says hello to
 * mediatord. Returns 0 (at once when open already), or -ENODEV when the
 * renderer or the filter failed (logged), now or at an earlier call.
 */
int worker_session_open(struct worker_session *session);

/*
 * A new guest context @ctx_id named @name (copied; NULL: "unnamed") with
 * the worker's options, its stream cost reading resource memory through
 * @resource_fn(@data). The session must be open. The caller ends it
 * with group_runner_end_context(). NULL on failure (logged).
 */
struct gpu_context *worker_session_context_create(struct worker_session *session, uint32_t ctx_id,
						  const char *name,
						  predict_resource_data_fn resource_fn, void *data);

/*
 * A group runner for this session's groups (group_runner.h): its link,
 * and grants when mediatord schedules; it dispatches through the
 * transport's @ops (with @data; both must outlive it). The caller
 * destroys it. NULL on allocation failure.
 */
struct group_runner *worker_session_group_runner(struct worker_session *session,
						 const struct group_runner_ops *ops, void *data);

/*
 * The end of a turn of the transport's main loop: sends what the link
 * queued, flushes its records when due. Returns 0, or -EPIPE (logged)
 * when the record channel to mediatord broke: the worker stops.
 */
int worker_session_tick(struct worker_session *session);

/*
 * The session's link and renderer (NULL until worker_session_open() started
 * it; it stays when the filter then failed), owned by the session.
 */
struct mediator_link *worker_session_link(struct worker_session *session);
struct renderer *worker_session_renderer(struct worker_session *session);

#endif
