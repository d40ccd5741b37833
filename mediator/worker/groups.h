// SPDX-License-Identifier: MIT
/*
 * Command groups of one client, from dispatch to completion.
 *
 * A command group is one submitted command buffer. The worker dispatches
 * it to the renderer together with a fence; the fence's completion time is
 * the group's end. As in Schnitzer et al. (§IV-F), a group's execution starts when
 * it was dispatched or when the previous group ended, whichever is later:
 *   start_k = max(dispatch_k, end_{k-1}),  measured_k = end_k - start_k.
 *
 * groups also enforces max_inflight: at most that many groups may be
 * dispatched and not yet completed (0 = unlimited).
 *
 * Not thread-safe: all calls come from the worker's main thread (fence
 * completions are handed over to it first, see renderer.h).
 */
#ifndef MEDIATOR_GROUPS_H
#define MEDIATOR_GROUPS_H

#include <stdbool.h>
#include <stdint.h>

#include "predict.h"
#include "common/wire.h"

_Static_assert(PREDICT_CMD_CLASS_COUNT <= WIRE_CMD_CLASSES, "the wire holds every command class");
_Static_assert(PF_COUNT <= WIRE_COEFS, "the wire holds every feature's coefficient");

/* Most groups tracked in flight when max_inflight is 0 (unlimited): a
 * client that outruns the GPU by more than this is throttled here. */
#define GROUPS_MAX_TRACKED 1024u

struct groups;

/* @max_inflight 0 means unlimited (up to GROUPS_MAX_TRACKED). */
struct groups *groups_create(uint32_t ctx_id, uint32_t max_inflight);
/* NULL is fine. */
void groups_destroy(struct groups *groups);

/* True when another group may be dispatched now. */
bool groups_can_dispatch(const struct groups *groups);
/* Groups dispatched and not yet completed. */
uint32_t groups_inflight(const struct groups *groups);

/* What was known of a group before dispatch. */
struct group_info {
	struct predict_cmd_counts counts;
	struct predict_features features;
	struct predict_estimate est; /* prediction and bound; zero when no model predicted */
	const char *model;	     /* static string, "" when no model predicted */
	uint64_t grant_id;	     /* the grant request's id, 0 when dispatched without one */
	uint64_t request_ns;	     /* when the grant was asked for, 0 when not */
	uint32_t grant;		     /* enum wire_grant_path */
	/* A piece of a group cut into pieces (pieces.h): its number, from 1, and how many. */
	uint32_t piece, pieces; /* 0, 0 for a whole group */
	bool tile;		/* a scissor tile of a draw: the model learns from its group only */
	uint32_t untiled;	/* enum predict_untiled: why a long draw in it was not cut, 0 */
	bool untileable;	/* it holds a draw that may not be cut, of any length */
	double young_ns;	/* young and untiled: what such groups took lately, asked with */
};

/*
 * Records a group dispatched at @dispatch_ns, described by @info (copied).
 * Returns its sequence number (from 1), which is also the fence id the
 * caller attaches to it. Call only when groups_can_dispatch().
 */
uint64_t groups_dispatch(struct groups *groups, uint64_t dispatch_ns,
			 const struct group_info *info);

/*
 * Called once per completed group with its finished record and what was
 * known of it at dispatch (for the model to learn from).
 */
typedef void (*groups_emit_fn)(const struct wire_group *record, const struct group_info *info,
			       void *data);

/*
 * Forgets every group still in flight (its context is going away before
 * its fences signalled), calling @fn with what was known of each and what
 * it is charged (groups_abandoned_charge() at @now_ns). Returns how many
 * there were.
 */
uint32_t groups_abandon(struct groups *groups, uint64_t now_ns,
			void (*fn)(const struct group_info *info, uint64_t charge_ns, void *data),
			void *data);

/*
 * What a group abandoned on the GPU at @now_ns is charged, never 0 (a
 * context destroyed right after an expensive submit must not run it for
 * free): its bound, or the time since its dispatch where longer, at least
 * 1 ns (a group of unknown cost that was just dispatched). For groups
 * whose fence did not come within gpu_context_drain()'s limit
 * (doc/design.md, "Abandoned groups").
 */
uint64_t groups_abandoned_charge(const struct group_info *info, uint64_t dispatch_ns,
				 uint64_t now_ns);

/*
 * The fence of group @seq completed at @end_ns: this completes @seq and any
 * earlier group still in flight (fences complete in order), calling @emit
 * for each. Returns the number of groups completed; a @seq that is not in
 * flight completes none.
 */
uint32_t groups_complete(struct groups *groups, uint64_t seq, uint64_t end_ns, groups_emit_fn emit,
			 void *data);

#endif
