// SPDX-License-Identifier: MIT
/*
 * Measured fragment counts per command group, for the fragment estimators
 * of libpredict (the recent-history ratio of Ma's thesis, and the choice between it
 * and the projected bounding box).
 *
 * The worker wraps a group that draws in an occlusion query of its own:
 * BEGIN_QUERY before the guest's commands and END_QUERY after them, in the
 * guest's virgl context, with an object handle and a resource id from the
 * host's reserved range (PREDICT_HOST_HANDLE_MIN), which guests cannot
 * create. Once the group's fence signalled, GET_QUERY_RESULT (no wait)
 * makes virglrenderer write the result (samples that passed: fragments ×
 * MSAA samples) into memory we attached as the query resource's backing.
 * (Asking before the fence would leave the query to virglrenderer's sync
 * thread, which cannot read it: query objects are not shared between GL
 * contexts.) The guest never sees the query.
 *
 * The first FRAGMENT_QUERY_FIRST drawing groups are wrapped, then at most
 * one in FRAGMENT_QUERY_EVERY (fragment_query.c). A group is not wrapped when it uses queries
 * itself (GL allows one active occlusion query, so wrapping stops for good), when it creates,
 * switches or destroys sub-contexts (our query object lives in one sub-context, and a query
 * cannot span two: the next group that stays in one sub-context is wrapped with an object made
 * anew there; glmark2 switches once at start, and was never measured when a switch stopped
 * wrapping for good), or while another wrapped group is in flight (one query object).
 */
#ifndef MEDIATOR_FRAGMENT_QUERY_H
#define MEDIATOR_FRAGMENT_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "worker/groups.h"

struct fragment_query;

/* Highest virgl context id served: the host's handle range (predict_decode.h) has 256 ids. */
#define FRAGMENT_QUERY_MAX_CTX_ID 255u

/*
 * For virgl context @ctx_id (1..FRAGMENT_QUERY_MAX_CTX_ID); NULL on
 * allocation failure or a bad id. Nothing reaches the renderer yet.
 */
struct fragment_query *fragment_query_create(uint32_t ctx_id);
/*
 * Releases the query resource. Call after the virgl context was destroyed
 * (which destroys the query object, so nothing writes into our memory any
 * more) and before virglrenderer is cleaned up. NULL is fine.
 */
void fragment_query_destroy(struct fragment_query *fq);

/*
 * Called before group @seq described by @info is submitted: returns true
 * when it submitted the BEGIN_QUERY (then fragment_query_end() must follow
 * the guest's commands).
 */
bool fragment_query_begin(struct fragment_query *fq, uint64_t seq, const struct group_info *info);
void fragment_query_end(struct fragment_query *fq);

/*
 * Group @seq completed (its fence signalled): its measured samples, or -1
 * when it was not wrapped or no result is available.
 */
double fragment_query_take(struct fragment_query *fq, uint64_t seq);

/* Why wrapping stopped for good, or NULL while it is on. */
const char *fragment_query_stopped(const struct fragment_query *fq);

#endif
