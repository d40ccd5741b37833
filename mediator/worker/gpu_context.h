// SPDX-License-Identifier: MIT
/*
 * One guest GPU context in a worker, whatever transport carried it: the
 * code path below the transport layer (doc/design.md, "Data flow").
 *
 * A gpu_context owns the virglrenderer context, the context's stream cost
 * (decoder, state tracker, cost model and bound), its command groups in
 * flight and its fragment query. For each command group the group runner
 * (group_runner.h; transports go through it) calls
 *   gpu_context_prepare()   decode + predict, and plan its pieces (a
 *                           rejected stream never reaches the GPU),
 * and then, while gpu_context_pending(), for each piece in turn:
 *   gpu_context_request_grant() when mediatord schedules (unless the
 *                           grant board's offer was taken, the runner
 *                           waits for mediator_link_take_grant()),
 *   gpu_context_dispatch()  to the renderer with a fence;
 * and for each fence that signalled (the transport's fence callback)
 *   gpu_context_complete()  the measured time goes to mediatord's
 *                           scheduler (WIRE_DONE) and its records, and
 *                           (once the group's last piece completed) to
 *                           the model and the bound.
 * A group predicted longer than the domain's piece length is cut into
 * pieces (pieces.h), each with its own grant and fence; any other group
 * is one piece. The guest's group is done when its last piece is.
 * A vtest connection has one context; a virtio-gpu device has one per
 * guest context (CTX_CREATE). Runs on the worker's main thread.
 */
#ifndef MEDIATOR_GPU_CONTEXT_H
#define MEDIATOR_GPU_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/groups.h"
#include "worker/mediator_link.h"
#include "predict.h"
#include "worker/stream_cost.h"
#include "worker/renderer.h"

struct gpu_context_options {
	const char *domain;	      /* for log lines and the state file */
	uint32_t client_id;	      /* for log lines and the feature dump */
	uint32_t ctx_id;	      /* virglrenderer context id, 1..FRAGMENT_QUERY_MAX_CTX_ID */
	const char *name;	      /* the guest's debug name (copied) */
	const char *model;	      /* cost model name, NULL for the default */
	uint32_t max_inflight;	      /* 0 = unlimited */
	uint64_t piece_ns;	      /* groups predicted longer are cut into pieces; 0: never */
	const char *feature_dump_dir; /* see stream_cost_dump_to(); NULL: none */
	const char *state_dir;	      /* learned model state; NULL: not kept */
	const char *identity;	      /* GPU/driver identity of the learned state */
	struct renderer *renderer;    /* the worker's; not owned */
	struct mediator_link *link;   /* the worker's; not owned */
};

struct gpu_context;

/*
 * Creates the virglrenderer context, loads the domain's learned state and
 * tells mediatord the context exists. A context named
 * STREAM_COST_CALIBRATION_CLIENT seeds the model from its groups. NULL on
 * failure (logged).
 */
struct gpu_context *gpu_context_create(const struct gpu_context_options *options);
/*
 * Longest gpu_context_drain() waits for a context's groups to leave the
 * GPU: far above any group a bound admits on these GPUs, short enough that
 * a VM's other contexts wait little behind a context that never finishes
 * (mediatord's grant watchdog deals with that one).
 */
#define GPU_CONTEXT_DRAIN_LIMIT_NS 1000000000ull

/*
 * Waits until the context's groups in flight have completed, or for
 * GPU_CONTEXT_DRAIN_LIMIT_NS: calls @poll(@data), which must hand the
 * renderer's completed fences to gpu_context_complete(), at once and then
 * every millisecond. A transport calls it before gpu_context_destroy(), so
 * that a destroyed context's groups are measured and their slots freed
 * only when the GPU is done with them (doc/design.md, "Abandoned groups").
 * Returns the number of groups still in flight (logged when not 0). NULL
 * is fine.
 */
uint32_t gpu_context_drain(struct gpu_context *ctx, void (*poll)(void *data), void *data);

/*
 * Saves the learned state, releases the grants of groups still in flight
 * (gpu_context_drain() gave up on them: their measurement is lost;
 * mediatord is told they are done, each charged its bound or the time
 * since its dispatch: groups_abandoned_charge()), destroys the
 * virglrenderer context (and with it the context's objects; resources stay
 * with the transport) and tells mediatord. NULL is fine.
 */
void gpu_context_destroy(struct gpu_context *ctx);

uint32_t gpu_context_id(const struct gpu_context *ctx);
const char *gpu_context_name(const struct gpu_context *ctx);
/* The context's stream cost (decoder and predictor), for the transport's resource reports. Owned by
 * the context. */
struct stream_cost *gpu_context_stream_cost(struct gpu_context *ctx);

/* True when another group may be dispatched now (max_inflight). */
bool gpu_context_can_dispatch(const struct gpu_context *ctx);
uint32_t gpu_context_inflight(const struct gpu_context *ctx);

/*
 * Decodes and predicts the group at @buf (@ndw dwords) and plans its
 * pieces. Returns 0, or -EPROTO for a stream the decoder rejects (logged
 * with the command index and byte offset; nothing of it may be
 * dispatched). @buf must stay valid and unchanged while
 * gpu_context_pending(); a new prepare forgets what was left of the last
 * group.
 */
int gpu_context_prepare(struct gpu_context *ctx, const uint32_t *buf, size_t ndw);
/* True while pieces of the prepared group are left to dispatch. */
bool gpu_context_pending(const struct gpu_context *ctx);
/*
 * What is known of the next piece (of the whole group, when it is one):
 * prediction, bound, counts, grant. Valid while gpu_context_pending().
 */
const struct group_info *gpu_context_next_piece(const struct gpu_context *ctx);
/*
 * Gets a grant for the next piece (sets its grant id and request time):
 * true when it took the grant board's offer and may be dispatched now;
 * false when it asked mediatord and must wait for the answer.
 */
bool gpu_context_request_grant(struct gpu_context *ctx);

/*
 * Submits the next piece to the renderer followed by fence @fence_id
 * (unique in the worker, increasing). Returns the piece's sequence number
 * (from 1: a whole group and each piece count one), or 0 when nothing was
 * pending or the fence could not be created (the context is then broken).
 */
uint64_t gpu_context_dispatch(struct gpu_context *ctx, uint32_t fence_id);

/* The fence of group @seq signalled at @end_ns: completes it and every earlier group. */
void gpu_context_complete(struct gpu_context *ctx, uint64_t seq, uint64_t end_ns);

/* The renderer's identity for learned state: backend and a hash of its caps. */
void gpu_context_identity(const char *renderer_name, char *out, size_t size);

#endif
