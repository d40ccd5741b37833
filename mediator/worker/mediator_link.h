// SPDX-License-Identifier: MIT
/*
 * A worker's link to mediatord: the record channel (wire.h), the same for
 * every transport.
 *
 * The link batches group records (WIRE_MAX_BATCH, WIRE_FLUSH_MS), sends
 * the hello, client, context and model messages, and runs the grant path:
 * mediator_link_request_grant() sends a request, mediator_link_read()
 * takes the answer. Sending never blocks: a record mediatord does not take
 * in time is dropped and counted (the GPU path never waits for
 * bookkeeping); a broken channel marks the link gone, and the transport
 * stops. When mediatord dies and is restarted (WIRE_ORPHANED,
 * WIRE_RESUME: wire.h), the link says again what the new one must know.
 * Runs on the worker's main thread only.
 */
#ifndef MEDIATOR_LINK_H
#define MEDIATOR_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"

/*
 * Most bytes queued while the channel does not take them: 256 full
 * batches (WIRE_MAX_BATCH group records), on top of the channel's own
 * megabyte. mediatord reads every record as it comes; a worker that has
 * this much more to send is talking to a mediatord that stopped reading.
 */
#define MEDIATOR_LINK_QUEUE_MAX_BYTES (256u * WIRE_MAX_BATCH * sizeof(struct wire_group))
/* Live guest contexts a restarted mediatord is told of: a VM's most (VGPU_MAX_CONTEXTS). */
#define MEDIATOR_LINK_MAX_CONTEXTS 64
/* How soon a queued message is tried again. */
#define MEDIATOR_LINK_RETRY_MS 1

struct mediator_link;

/*
 * @fd: the worker's end of the record channel; the link owns and closes
 * it. @domain and @client_id only name log lines (@domain is copied).
 * NULL on allocation failure.
 */
struct mediator_link *mediator_link_create(int fd, const char *domain, uint32_t client_id);
/* Flushes pending records and closes the channel. NULL is fine. */
void mediator_link_destroy(struct mediator_link *link);

/* The channel's fd, to poll for grant answers (POLLIN) and hang-ups. */
int mediator_link_fd(const struct mediator_link *link);
/* True once the channel broke or mediatord sent something unexpected. */
bool mediator_link_gone(const struct mediator_link *link);

/*
 * Sends @msg (one whole wire message, @size bytes, at most a full batch)
 * at once, or queues it after what is queued; never blocks. Exits the
 * worker when the queue overflows (see above).
 */
void mediator_link_send(struct mediator_link *link, const void *msg, size_t size);

/*
 * WIRE_START: asks mediatord whether the worker may make its renderer
 * now, and waits for the answer, WIRE_START_WAIT_MS at most, or until
 * mediatord dies (orphaned). 0, -EPIPE when mediatord went away, or
 * poll()'s negative errno.
 */
int mediator_link_wait_start(struct mediator_link *link);
/* WIRE_HELLO: the renderer is up. */
void mediator_link_hello(struct mediator_link *link, const char *timestamp_source,
			 const char *renderer);
/* WIRE_CLIENT_INFO: the client or guest said who it is. */
void mediator_link_client_info(struct mediator_link *link, int32_t peer_pid, const char *name);
/* WIRE_CONTEXT: a guest context was created (@alive) or destroyed. */
void mediator_link_context(struct mediator_link *link, uint32_t ctx_id, bool alive,
			   const char *name);

/*
 * Queues one group record; the batch goes out when full or due. Its seq
 * is replaced by the worker's own count of records (from 1), which wire.h
 * promises to increase per client whatever context the group came from.
 */
void mediator_link_record(struct mediator_link *link, const struct wire_group *record);
/* Sends queued records now. */
void mediator_link_flush(struct mediator_link *link);
/*
 * How long the caller may sleep before mediator_link_tick() is due, in
 * ms: -1 when nothing is queued.
 */
int mediator_link_timeout_ms(const struct mediator_link *link);
/* Bytes of messages queued because the channel did not take them. */
size_t mediator_link_queued_bytes(const struct mediator_link *link);
/* Sends what is queued if the channel takes it; flushes the batch if it is due. */
void mediator_link_tick(struct mediator_link *link);

/*
 * Maps the grant board (wire.h) from @fd (taken: closed here) for a
 * worker of config domain @domain, so that mediator_link_claim_grant()
 * can take its offers. 0, or -EINVAL for a board that is not one, or the
 * errno of a failed mmap; without a board every group asks.
 */
int mediator_link_attach_board(struct mediator_link *link, int fd, int domain);
/*
 * The fast path of the grant path: takes the board's standing offer if a
 * group of @bound_ns fits it and returns true with the grant's id in
 * *@id: the group may start now; mediator_link_report_claim() tells
 * mediatord (a claimed WIRE_GRANT_REQUEST; no answer comes) right after
 * the dispatch, so that waking mediatord does not delay the group
 * (@flags: WIRE_GRANT_NO_OUTPUT or 0). False: ask with
 * mediator_link_request_grant().
 */
bool mediator_link_claim_grant(struct mediator_link *link, uint32_t ctx_id, uint64_t predicted_ns,
			       uint64_t bound_ns, uint32_t flags, uint32_t untiled, uint64_t *id);
/* Sends the claimed request of the last mediator_link_claim_grant() if not sent yet. */
void mediator_link_report_claim(struct mediator_link *link);
/*
 * The grant path. request_grant() sends a request for a group of guest
 * context @ctx_id with the given prediction and bound (@flags: WIRE_GRANT_YOUNG,
 * WIRE_GRANT_NO_OUTPUT; @untiled: struct wire_grant_request's) and returns its id (from 1); one
 * request may be outstanding. mediator_link_read() takes what mediatord sent: returns 0, or -EPIPE
 * when the channel is gone or mediatord broke the protocol. mediator_link_take_grant() returns
 * true, once, when the answer to the outstanding request came; *@verdict is then enum wire_verdict.
 */
uint64_t mediator_link_request_grant(struct mediator_link *link, uint32_t ctx_id,
				     uint64_t predicted_ns, uint64_t bound_ns, uint32_t flags,
				     uint32_t untiled);
int mediator_link_read(struct mediator_link *link);
bool mediator_link_take_grant(struct mediator_link *link, uint32_t *verdict);
/*
 * Handles what poll() reported for mediator_link_fd() (@revents): reads
 * grant answers, notices a hang-up. Returns 0, or -EPIPE (logged) when
 * mediatord is gone and the worker must stop.
 */
int mediator_link_on_events(struct mediator_link *link, short revents);
/*
 * True while mediatord is dead and this worker's domain is served without
 * grants (WIRE_ORPHANED with serve_freely, wire.h): a group dispatches at
 * once, with no request and no WIRE_DONE.
 */
bool mediator_link_serving_freely(const struct mediator_link *link);
/*
 * How long the pieces of a long group may be now: @piece_ns while the
 * board says a safety domain is active, shorter where the gap it leaves
 * is (never under 1 ms), 0 (do not cut) while none is; @piece_ns without
 * a board.
 */
uint64_t mediator_link_piece_ns(const struct mediator_link *link, uint64_t piece_ns);
/*
 * A granted group's fence @fence_id is about to be created: arms the
 * early WIRE_DONE (fence_done.h), sent from the sync thread when the fence
 * signals, if nothing queued on the channel could be overtaken by it.
 * @dispatch_ns: when the group was submitted. Grant 0 (none) is ignored.
 */
void mediator_link_arm_done(struct mediator_link *link, uint32_t fence_id, uint64_t grant_id,
			    uint64_t dispatch_ns);
/*
 * WIRE_DONE for a granted group, at once (never batched), unless the
 * early one went out already (mediator_link_arm_done()).
 */
void mediator_link_done(struct mediator_link *link, uint64_t grant_id, uint64_t measured_ns,
			uint64_t end_ns);

#endif
