// SPDX-License-Identifier: MIT
/*
 * mediatord's dispatcher: the grant path between the workers and the
 * scheduler (scheduler.h). Workers' WIRE_GRANT_REQUEST and WIRE_DONE
 * messages come in through dispatcher_request() and dispatcher_done();
 * grants go out through the send callback as soon as the policy allows,
 * also from a timer when only time can change the answer (a period
 * boundary, the end of a safety frame, max_defer running out).
 *
 * While no request waits, the free slot is offered on a grant board
 * (wire.h), each domain's its own: the board of the single client whose
 * groups are in flight, else of the domain that asked last. A worker of
 * that domain whose group fits takes it without a round trip and reports
 * it with a claimed request, checked against the offer. A claim not
 * reported within its domain's bound on the offer (10 to 50 ms, see
 * DISPATCHER_CLAIM_REPORT_NS) switches its domain's board off.
 *
 * Workers are not trusted: a request or completion that breaks the
 * protocol (a rule of the wire's, wire_check_grant_request() and
 * wire_check_done(); an id out of order, a second request while one
 * waits, a completion of a group never granted, a claim of an offer it
 * did not take or that did not fit) is refused, and the caller
 * stops that worker; a refused claim holds up no other worker. All on
 * mediatord's main thread.
 *
 * The grant watchdog (scheduler.h, struct sched_watchdog), in two stages
 * (doc/design.md, "The grant watchdog"). A granted group whose completion
 * has not come by its deadline is revoked (its domain charged the time it
 * held the slot, at least its bound), the freed slot goes to whoever
 * waits, at once, and its client is suspended: none of its requests is
 * granted (nor given to the scheduler) and no offer is made on the board
 * until the revoked group's late completion comes; that completion
 * charges the rest of its measured time and resumes the client. When it
 * has not come by the kill stage's time (watchdog_kill_us after the
 * revocation, or when the revoke callback says), the callback is asked
 * whether to kill its worker: when it does, the client is forgotten;
 * else it says when to ask again. The timer wakes the dispatcher at the
 * earliest deadline in flight or kill stage due.
 *
 * Invariants: the scheduler's (enum sched_invariant) and the
 * dispatcher's own, "dispatcher_agrees": every request the scheduler
 * holds is one the dispatcher holds, and the other way round. A broken
 * one is counted and logged (a warning the 1st, 2nd, 4th, ... time).
 */
#ifndef MEDIATOR_DISPATCHER_H
#define MEDIATOR_DISPATCHER_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "common/loop.h"
#include "scheduler/sched_config.h"
#include "common/wire.h"

struct dispatcher;

/* Sends WIRE_GRANT to client @client; returns 0 or a negative errno. */
typedef int (*dispatcher_send_fn)(void *data, uint32_t client, const struct wire_grant *grant);

/* A granted group the watchdog revoked, at either stage. */
struct dispatcher_revoked {
	uint32_t client;
	int domain;
	uint32_t ctx_id;  /* as its worker named it in the request */
	uint64_t wire_id; /* the worker's request id */
	uint64_t granted_ns;
	uint64_t bound_ns;    /* as admitted */
	uint64_t deadline_ns; /* at the revocation only (0 with kill) */
	uint64_t revoked_ns;
	bool young; /* asked as young, or its client's groups still are to mediatord */
	/*
	 * false: just revoked, the client suspended (the callee logs it).
	 * true: its completion has not come by the kill stage's time.
	 */
	bool kill;
};
/*
 * Called on the main thread from inside a dispatcher call when the
 * watchdog revoked a group of @r->client, and at its kill stage's time.
 * It must not call the dispatcher. Returns when the kill stage comes
 * next: at the revocation, 0 for watchdog_kill_us later; at the kill
 * stage, 0 when it killed the worker (the client is then forgotten, as
 * by dispatcher_forget()), or a later time to be asked again.
 */
typedef uint64_t (*dispatcher_revoke_fn)(void *data, const struct dispatcher_revoked *r);

/* One scheduler domain per cfg->domains[i], same index. NULL with @err set on failure. */
struct dispatcher *dispatcher_create(struct loop *loop, const struct mediator_config *cfg,
				     uint64_t now_ns, dispatcher_send_fn send, void *data,
				     char *err, size_t err_size);
/* NULL is fine. */
void dispatcher_destroy(struct dispatcher *d);

/* Sets (or, with NULL, removes) the watchdog's revoke callback. */
void dispatcher_set_revoke(struct dispatcher *d, dispatcher_revoke_fn fn, void *data);

/*
 * The grant board's memfd (wire.h) of domain @domain (its index in the
 * config), for that domain's workers (WIRE_BOARD_FD); -1 for no domain.
 * Each domain has its own: a worker writes only its domain's.
 */
int dispatcher_board_fd(const struct dispatcher *d, int domain);
/*
 * Uses @fd, the board of domain @domain of a mediatord that died
 * (keeper.h), instead of its own, so that the workers taken over share it
 * with new ones; offers go on from a later generation. Takes @fd on
 * success. 0, or -EINVAL when it is not a board of as many domains, or
 * -errno.
 */
int dispatcher_adopt_board(struct dispatcher *d, int domain, int fd);

/* A worker of client @client (domain @domain) asks for a grant. 0 or -EPROTO / -ENOSPC. */
int dispatcher_request(struct dispatcher *d, uint32_t client, int domain,
		       const struct wire_grant_request *req, uint64_t now_ns);
/*
 * A claim of @client refused before it came to dispatcher_request() (its
 * message broke a rule of wire_check()): when the board says @client took
 * the offer, the offer is released, as dispatcher_request() does for a
 * claim it refuses, so that nobody waits for the report of it.
 */
void dispatcher_release_claim(struct dispatcher *d, uint32_t client, uint64_t now_ns);
/*
 * The granted group @done->id of @client completed. 0 or -EPROTO. Its
 * domain is charged what the worker measured, but at least what mediatord
 * saw on its own clock (grant, or the latest other completion after it,
 * to this report, less a report's slack); a worker that reports far less
 * than that is admitted on inflated bounds from then on and claims no
 * offer (doc/design.md, "What a worker's word is worth"). *@charged_ns
 * (NULL: not wanted) gets what was charged now.
 */
int dispatcher_done(struct dispatcher *d, uint32_t client, const struct wire_done *done,
		    uint64_t now_ns, uint64_t *charged_ns);
/*
 * Does what is due at @now_ns: revokes groups past their watchdog
 * deadline, kills workers past the kill delay, grants what may start. The dispatcher's timer calls
 * it; so may a caller with its own clock (tests).
 */
void dispatcher_tick(struct dispatcher *d, uint64_t now_ns);
/*
 * A guest context of @domain was created at @now_ns: a safety domain's
 * frame may come at any moment from now (sched_expect_frames()); the
 * standing offer is withdrawn and what may start decided again. True for
 * a safety domain.
 */
bool dispatcher_expect_frames(struct dispatcher *d, int domain, uint64_t now_ns);
/* True while a group of @client is revoked and its completion has not come. */
bool dispatcher_suspended(const struct dispatcher *d, uint32_t client);
/* True while @client's worker is known to report its groups short (dispatcher_done()). */
bool dispatcher_distrusted(const struct dispatcher *d, uint32_t client);
/* Client @client is gone: its requests and groups in flight are forgotten. */
void dispatcher_forget(struct dispatcher *d, uint32_t client, uint64_t now_ns);

/* See sched_take_frames(): safety frames that ended, for the trace. */
size_t dispatcher_take_frames(struct dispatcher *d, struct sched_frame *out, size_t max,
			      uint64_t *dropped);

/* See sched_set_params() and sched_get_params(). */
int dispatcher_set_params(struct dispatcher *d, const struct sched_params *params);
void dispatcher_get_params(const struct dispatcher *d, struct sched_params *out);

/* See sched_set_budget(); times in microseconds. */
int dispatcher_set_budget(struct dispatcher *d, int domain, uint32_t period_us, uint32_t budget_us,
			  uint32_t deadline_us, char *why, size_t why_size);
/* See sched_domain_stats(), as of @now_ns. */
int dispatcher_stats(struct dispatcher *d, int domain, uint64_t now_ns,
		     struct sched_domain_stats *out);

/* How many invariants are checked: indexes 0 .. DISPATCHER_INVARIANTS - 1. */
#define DISPATCHER_INVARIANTS (SCHED_INV_COUNT + 1)
/* The name of invariant @i ("request_counts", ...); NULL when out of range. */
const char *dispatcher_invariant_name(unsigned i);
/* How often invariant @i was found broken (0 when out of range). */
uint64_t dispatcher_invariant_violations(const struct dispatcher *d, unsigned i);

#endif
