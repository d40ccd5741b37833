// SPDX-License-Identifier: MIT
/*
 * The scheduler: decides when each command group may start on a GPU that
 * cannot be preempted, so that the safety domains' frames meet their
 * deadlines. One implementation, two drivers: mediatord (live grants to
 * workers) and mediator-sim (trace replay). Pure: no I/O, no clock; every
 * call is given the time. All times in nanoseconds.
 *
 * A worker asks for a grant (sched_submit(), with the group's prediction
 * and bound); sched_poll() returns the requests that may start now, in the
 * policy's order; sched_complete() charges the measured time. Policy fifo
 * grants in arrival order; policy budget adds budgets per period, safety
 * frames and the gaps they leave. The policy's full text is doc/design.md,
 * "Scheduling model"; the measurements behind its rules are in
 * doc/results/scheduler-tuning.md.
 */
#ifndef MEDIATOR_SCHEDULER_H
#define MEDIATOR_SCHEDULER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Idle time after which a safety domain's frame is over. */
#define SCHED_FRAME_GAP_NS 2000000ull
/* How soon after a safety frame's last group an oversize group may start "at the gap's start". */
#define SCHED_GAP_START_NS 1000000ull
/* Frames whose costs make a safety domain's typical frame cost C. */
#define SCHED_FRAME_HISTORY 16u
/* Recent frames drawn beside a revoked group whose longest sets how early the watchdog revokes. */
#define SCHED_BESIDE_HISTORY 8u
/* Frames a safety domain has drawn before its typical frame can tell it draws past its budget. */
#define SCHED_TYPICAL_FRAMES 8u
/* A safety domain silent for this many periods is not expected to release soon. */
#define SCHED_IDLE_PERIODS 4u
/* A safety domain past its budget whose releases came this many times in a row at under half a
 * period draws as fast as it can: it loses its frames' protection until it slows or has budget. */
#define SCHED_FAST_RELEASES 3u
/* A safety domain's release may come at any moment for this many of its periods after a context
 * of it was created, while none is expected on its grid (sched_expect_frames()). */
#define SCHED_EXPECT_PERIODS 60u
/* ... and for this many after each of its releases, should it fall silent (its client starved). */
#define SCHED_SILENT_EXPECT_PERIODS 12u
/* A safety domain's late frames that no other domain crossed in this many of its periods from its
 * first release (or its first after it was silent and made a context) are its start-up, not
 * judged (sched_frame's startup). */
#define SCHED_STARTUP_PERIODS 30u
/* Most requests waiting at once (one per worker and a margin). */
#define SCHED_MAX_PENDING 1024u
/* Most domains (a car has a handful of VMs). */
#define SCHED_MAX_DOMAINS 16
/* Most a normal domain's weight may be. */
#define SCHED_MAX_WEIGHT 1000u
/* Bounds of a domain's period: 100 us .. 10 s. */
#define SCHED_MIN_PERIOD_NS 100000ull
#define SCHED_MAX_PERIOD_NS 10000000000ull

enum sched_policy {
	SCHED_POLICY_BUDGET = 0, /* budgets, deadlines and safety gaps (the default) */
	SCHED_POLICY_FIFO,	 /* first come, first served: the baseline */
};

enum sched_class {
	SCHED_CLASS_NORMAL = 0,
	SCHED_CLASS_SAFETY, /* periodic frames with deadlines, protected from the others */
};

enum sched_oversize {
	SCHED_OVERSIZE_RUN = 0,	      /* run it at the start of the next safety gap */
	SCHED_OVERSIZE_UNSCHEDULABLE, /* refuse it: its context is unschedulable */
	/* refuse it when SCHED_UNTILED (a draw in it could not be cut), else run it */
	SCHED_OVERSIZE_REFUSE_UNTILED,
};

/*
 * The grant watchdog (doc/design.md, "The grant watchdog"): a group
 * granted at G with bound B is overdue once its completion has not come
 * by G + max(multiplier * B, B + slack_ns, floor_ns); a normal domain's
 * group (policy budget) by G + its allowance at the latest: what the
 * safety domains' gaps leave at G (sched_offer_bound()), at most
 * normal_cap_ns, whatever its bound or its history. The scheduler only
 * says which groups are overdue (sched_next_deadline(), sched_overdue());
 * its driver revokes them (sched_revoke()) and stops their workers.
 * multiplier 0: no watchdog (no group is ever overdue).
 */
struct sched_watchdog {
	uint32_t multiplier;
	uint64_t slack_ns;
	uint64_t floor_ns;
	uint64_t normal_cap_ns; /* 0: a normal domain's groups have no allowance */
};
/*
 * The defaults: 4 x the bound (far past a 0.995 quantile's noise), at
 * least 50 ms over it (a host stall) and at least 200 ms (young groups'
 * shader compiles) (doc/results/scheduler-tuning.md).
 */
#define SCHED_WATCHDOG_MULTIPLIER 4u
#define SCHED_WATCHDOG_SLACK_NS	  50000000ull
#define SCHED_WATCHDOG_FLOOR_NS	  200000000ull
/* A young group of the only safety domain (its start-up) is revoked after 1 s at the earliest. */
#define SCHED_WATCHDOG_SAFETY_YOUNG_NS 1000000000ull
/* A normal domain's group holds the GPU 250 ms at most, gaps or none. */
#define SCHED_WATCHDOG_NORMAL_CAP_NS 250000000ull

struct sched_params {
	enum sched_policy policy;
	uint32_t max_inflight; /* 0 = unlimited */
	uint64_t max_defer_ns; /* how long an oversize group waits before max_defer applies */
	enum sched_oversize oversize;
	struct sched_watchdog watchdog; /* all 0: no watchdog */
};

struct sched_domain_params {
	enum sched_class class;
	uint64_t period_ns, budget_ns, deadline_ns;
	bool strict; /* never runs past its budget, even on an idle GPU */
	/*
	 * Safety domains: time kept free before each frame's latest start
	 * (release + deadline - its typical cost), for groups of other
	 * domains that overrun their bounds (a host stall); < deadline_ns.
	 */
	uint64_t guard_ns;
	/*
	 * Safety domains: the period is learned from the domain's releases
	 * (sched_period.h), within [period_ns, max_period_ns]. period_ns is
	 * then the shortest period its guest may show frames at: its budget
	 * is per period_ns, and room for its next frame is kept as if it came
	 * period_ns after the last one, whatever was learned, since a guest
	 * gives no notice of a faster rate and a group of another domain,
	 * once started, runs to its end. With @deadline_follows, its frames
	 * are judged against the learned period (deadline_ns still protects
	 * them); without, against deadline_ns.
	 */
	bool learn_period;
	bool deadline_follows;
	uint64_t max_period_ns;
	/*
	 * Normal domains: the GPU time the safety domains leave is divided
	 * among the backlogged normal domains by weight (sched_shares.c),
	 * 1..SCHED_MAX_WEIGHT; 0 is taken as 1.
	 */
	uint32_t weight;
};

/* What sched_poll() decided about a request. */
enum sched_verdict {
	SCHED_GRANTED = 0,
	SCHED_REFUSED, /* oversize and SCHED_OVERSIZE_UNSCHEDULABLE */
};

struct sched_decision {
	uint64_t id;
	int domain;
	enum sched_verdict verdict;
};

/*
 * A domain's accounting, all of it by the scheduler's periods: the
 * current one started at period_start_ns and lasts params.period_ns.
 * remaining_ns = params.budget_ns - debt_ns - used_ns.
 */
struct sched_domain_stats {
	struct sched_domain_params params; /* in force in the current period */
	uint64_t period_start_ns;
	int64_t remaining_ns; /* budget left this period (negative: overspent) */
	uint64_t used_ns;     /* measured, charged in this period */
	uint64_t used_last_period_ns;
	uint64_t last_period_ns; /* how long the last period was (0: none ended yet) */
	uint64_t predicted_ns;	 /* predicted, of the groups granted this period */
	uint64_t debt_ns;	 /* overspending carried into this period */
	uint64_t groups, overruns, throttled, deadline_misses, frames, unschedulable;
	/*
	 * Of deadline_misses, frames that no other domain's group ran beside
	 * (in flight, or drawing on after its revocation): late by their own
	 * work, such as a client's first frames compiling its shaders.
	 */
	uint64_t misses_alone;
	/* Frames of its start-up, not judged (sched_frame's startup). */
	uint64_t startup_frames;
	uint64_t revoked; /* groups the watchdog revoked (sched_revoke()) */
	uint64_t late_ns; /* charged by sched_charge_late(), in all */
	uint32_t pending, inflight;
	uint64_t frame_cost_ns; /* C: the typical frame cost of check 3 (safety only) */
	uint64_t observed_period_ns;
	/* A learned period's (learn_period): the estimate, how sure it is (0 to 1), and how often
	 * it followed a rate change or started again after a pause; all 0 otherwise. */
	uint64_t learned_period_ns;
	double period_confidence;
	uint64_t period_changes, period_pauses;
	/* A normal domain's: its GPU time measured over its weight (sched_shares.c). */
	uint64_t vtime_ns;
	/* Filled by mediatord's dispatcher: groups its workers reported shorter than it saw. */
	uint64_t underreported;
};

struct sched;

/* NULL on allocation failure or bad parameters. */
struct sched *sched_create(const struct sched_params *params, uint64_t now_ns);
/* NULL is fine. */
void sched_destroy(struct sched *s);
/*
 * Replaces the parameters sched_create() was given (a config reload):
 * decisions from now on follow them; groups granted keep their watchdog
 * deadlines. -EINVAL for values sched_create() refuses.
 */
int sched_set_params(struct sched *s, const struct sched_params *params);
/* The parameters in force. */
void sched_get_params(const struct sched *s, struct sched_params *out);

/*
 * A safety domain's frame that ended (closed after its idle gap, or rolled
 * over at the next release while work of it was unfinished), for the
 * trace: released at @release_ns, due at @deadline_ns, its last group
 * done at @end_ns (0 when unfinished), @missed when late or unfinished.
 */
struct sched_frame {
	int domain;
	bool missed;
	/* No other domain's group was in flight, or drew on revoked, while it was open. */
	bool alone;
	/*
	 * Missed, alone, released within SCHED_STARTUP_PERIODS of the
	 * domain's first release: its start-up (its client's context set-up
	 * and first draws, its shaders compiling, and the frames its client
	 * is late with while it catches up), which its client does not time
	 * either (cluster-client draws one frame before its first timed
	 * release). Not judged: not in frames or deadline_misses, but in
	 * startup_frames. A frame another domain's group crossed is judged
	 * whenever it came.
	 */
	bool startup;
	uint64_t release_ns, deadline_ns, end_ns;
	uint64_t bound_ns; /* the sum of its groups' bounds */
	/* The period its domain's frames followed when it ended: configured, or learned. */
	uint64_t period_ns;
};
/* Closed frames kept until taken; older ones are dropped (and counted). */
#define SCHED_FRAME_LOG 256u

/*
 * Moves up to @max closed frames, oldest first, into @out; returns how
 * many. *@dropped (may be NULL) gets the frames lost since the last call
 * because nobody took them in time.
 */
size_t sched_take_frames(struct sched *s, struct sched_frame *out, size_t max, uint64_t *dropped);

/* Adds a domain; returns its index (from 0) or -EINVAL / -ENOSPC. */
int sched_add_domain(struct sched *s, const struct sched_domain_params *p, uint64_t now_ns);

/*
 * Changes a domain's period, budget and deadline from its next period
 * boundary. Refused (-EINVAL, @why says why) when the values are out of
 * range, or when the safety domains' budgets would no longer fit: their
 * utilisations (budget / period) must sum to at most 1, and each safety
 * budget must fit within its deadline.
 */
int sched_set_budget(struct sched *s, int domain, uint64_t period_ns, uint64_t budget_ns,
		     uint64_t deadline_ns, char *why, size_t why_size);

/*
 * A guest context of @domain was created at @now_ns. A safety domain's
 * first frame may follow at any moment, before any release of it was
 * seen (its start-up), or after it was silent: for SCHED_EXPECT_PERIODS
 * of its configured periods, whenever no release of it is expected on its
 * grid, check 3 takes one as due now, so that no other domain's group
 * starts that would make such a frame late. The same holds for
 * SCHED_SILENT_EXPECT_PERIODS after each of its releases, should it fall
 * silent.
 * True for a safety domain (what may start changed), false otherwise.
 */
bool sched_expect_frames(struct sched *s, int domain, uint64_t now_ns);

/* What a caller knows of a group besides its prediction and bound. */
enum sched_group_flag {
	/*
	 * Its context is young: its bound is the longest group the context
	 * took so far, not a learned one (predict_estimator.h), and that is
	 * often a one-off, a shader compile
	 * (doc/results/scheduler-tuning.md). A young group of a normal
	 * domain is handled as one of unknown cost (bound 0): it
	 * starts only at the start of a safety gap, never deferred or
	 * refused as oversize; it needs budget for its prediction, or for a
	 * whole period when it is predicted above that.
	 */
	SCHED_YOUNG = 1u << 0,
	/*
	 * It produces no output (wire.h, WIRE_GRANT_NO_OUTPUT): a safety
	 * domain's frame made only of such groups (a client's set-up or
	 * teardown) is not a frame: not counted, not judged, not logged.
	 */
	SCHED_NO_OUTPUT = 1u << 1,
	/*
	 * Its worker could not cut a draw in it into scissor tiles (wire.h,
	 * struct wire_grant_request's untiled): it cannot get shorter, so
	 * where it is oversize SCHED_OVERSIZE_REFUSE_UNTILED refuses it, young
	 * or not (a young one's prediction is then what such draws of its
	 * context took, not its model's).
	 */
	SCHED_UNTILED = 1u << 2,
};

/*
 * A group of @domain asks to start: @id is the caller's (unique among
 * pending and in-flight groups), @bound_ns >= @predicted_ns, @flags from
 * enum sched_group_flag. Returns 0, -EINVAL (bad domain, duplicate id,
 * a time above SCHED_TIME_MAX_NS) or -ENOSPC (too many pending).
 */
int sched_submit(struct sched *s, uint64_t id, int domain, uint64_t predicted_ns, uint64_t bound_ns,
		 unsigned flags, uint64_t now_ns);

/*
 * Decides what may start at @now_ns: writes up to @max decisions into
 * @out and returns how many. Granted groups are in flight from now.
 */
size_t sched_poll(struct sched *s, uint64_t now_ns, struct sched_decision *out, size_t max);

/*
 * The grant board's offer (wire.h): when a slot is free and no request
 * waits, writes for each domain into @max_bound (as many entries as
 * domains) the largest bound a group of it may have to be granted at any
 * time in [@now_ns, @until_ns] (0: none may start), and returns true;
 * false when nothing may be offered. @after_inflight: the offer is for a
 * group that starts only once the groups in flight completed, so the slots
 * they hold count as free (their bounds still count as GPU time ahead).
 */
bool sched_offer(struct sched *s, uint64_t now_ns, uint64_t until_ns, bool after_inflight,
		 uint64_t *max_bound);

/*
 * A group of @domain took the offer: it is granted (in flight) at @now_ns
 * as if submitted and polled. Returns what sched_submit() returns.
 */
int sched_claim(struct sched *s, uint64_t id, int domain, uint64_t predicted_ns, uint64_t bound_ns,
		unsigned flags, uint64_t now_ns);

/*
 * The granted group @id completed at @end_ns after @measured_ns on the
 * GPU (charged as SCHED_TIME_MAX_NS when above, SCHED_INV_BUDGET). Returns 0
 * or -ENOENT (not in flight).
 */
int sched_complete(struct sched *s, uint64_t id, uint64_t measured_ns, uint64_t end_ns);

/* Forgets a pending or in-flight group (its worker went away). -ENOENT if unknown. */
int sched_cancel(struct sched *s, uint64_t id, uint64_t now_ns);

/*
 * How long a group of @bound_ns may hold its grant before the watchdog
 * @w revokes it: max(multiplier * bound, bound + slack, floor), saturating;
 * UINT64_MAX when @w is off (multiplier 0).
 */
uint64_t sched_watchdog_limit(const struct sched_watchdog *w, uint64_t bound_ns);

/* An in-flight group past its watchdog deadline. */
struct sched_overdue {
	uint64_t id;
	int domain;
	uint64_t granted_ns, bound_ns, deadline_ns;
};

/*
 * The earliest watchdog deadline of the groups in flight (granted +
 * sched_watchdog_limit()); UINT64_MAX when none is in flight or the
 * watchdog is off. Not part of sched_next_event(): it changes no decision
 * of sched_poll(), so that replays (mediator-sim) are not affected.
 */
uint64_t sched_next_deadline(const struct sched *s);

/*
 * Writes up to @max in-flight groups whose deadline is at or before
 * @now_ns into @out, oldest grant first; returns how many.
 */
size_t sched_overdue(const struct sched *s, uint64_t now_ns, struct sched_overdue *out, size_t max);

/*
 * The watchdog takes back the slot of in-flight group @id at @now_ns: it
 * completes as if measured for as long as it held the slot (now - its
 * grant, at least its bound), charged to its domain, and is counted
 * (sched_domain_stats().revoked). Its slot is free at once. Returns 0 or
 * -ENOENT (not in flight).
 */
int sched_revoke(struct sched *s, uint64_t id, uint64_t now_ns);

/*
 * A revoked group's completion came late, at @end_ns: @extra_ns, the part
 * of its measured time beyond what sched_revoke() charged, is charged to
 * @domain now (its in-flight counts and frames were settled at the
 * revocation). Returns 0 or -EINVAL (bad domain).
 */
int sched_charge_late(struct sched *s, int domain, uint64_t extra_ns, uint64_t end_ns);

/*
 * How many revoked groups of @domain still draw (their late completion has
 * not come, their worker is not gone): while any do, other domains' frames
 * are not alone (sched_frame's alone, sched_domain_stats' misses_alone).
 * Out-of-range domains are ignored.
 */
void sched_set_revoked_running(struct sched *s, int domain, uint32_t n);

/*
 * The next time sched_poll() may decide differently without any other
 * call (a period boundary, the end of a frame, max_defer running out);
 * UINT64_MAX when none.
 */
uint64_t sched_next_event(const struct sched *s, uint64_t now_ns);
/*
 * The largest gap the active safety domains leave between their frames
 * at @now_ns (check 3's view: the largest bound a normal group could
 * start with at a gap's start), 0 while no safety domain is active.
 */
uint64_t sched_safety_gap(const struct sched *s, uint64_t now_ns);

/* Rolls periods and frames forward to @now_ns (sched_poll() does this too). */
void sched_advance(struct sched *s, uint64_t now_ns);

/* The counts of @domain as of the last call. Returns -EINVAL for a bad index. */
int sched_domain_stats(const struct sched *s, int domain, struct sched_domain_stats *out);

/*
 * The invariants of the scheduler's state, which hold by construction. Each
 * is checked where it can break; a broken one is counted, reported to the
 * warn callback (sched_set_warn()) and, where the state would stay wrong,
 * repaired. The scheduler never aborts on one.
 */
enum sched_invariant {
	/*
	 * Each domain's waiting and in-flight counts, the bounds it has
	 * outstanding, its carried frame's groups and the scheduler's
	 * in-flight count agree with the requests in the slots; no count is
	 * taken below 0.
	 */
	SCHED_INV_REQUEST_COUNTS = 0,
	/* A domain's period start only moves forward, and an advance leaves the time in its period.
	 */
	SCHED_INV_PERIOD_ORDER,
	/*
	 * The time of sched_submit(), sched_claim(), sched_poll(),
	 * sched_offer(), sched_cancel() and sched_advance() never goes back
	 * (sched_complete()'s end may be older: a completion is reported
	 * after it happened). An earlier time is taken as the latest seen.
	 */
	SCHED_INV_TIME_ORDER,
	/*
	 * A domain's remaining budget is its budget less its debt and its use
	 * this period; a measured time above SCHED_TIME_MAX_NS is charged as
	 * that, and use and debt saturate rather than overflow.
	 */
	SCHED_INV_BUDGET,
	/* A request is granted (put in flight) once. */
	SCHED_INV_GRANTED_ONCE,
	/* At most max_inflight groups are in flight (sched_claim() only after an offer). */
	SCHED_INV_MAX_INFLIGHT,
	/* A safety frame is closed, counted and judged once. */
	SCHED_INV_FRAME_ONCE,
	SCHED_INV_COUNT,
};

/*
 * The longest prediction, bound or measured time of one group (about 52
 * days): the bounds of SCHED_MAX_PENDING groups add up without overflow,
 * and so does the budget arithmetic.
 */
#define SCHED_TIME_MAX_NS (1ull << 52)

/*
 * Called when invariant @inv was found broken, for the @count-th time
 * since sched_create(); @what says where and how (valid during the call
 * only). Runs on the caller's thread, inside the sched_*() call that
 * found it; it must not call the scheduler.
 */
typedef void (*sched_warn_fn)(void *data, enum sched_invariant inv, uint64_t count,
			      const char *what);

/* Sets (or, with NULL, removes) the warn callback. */
void sched_set_warn(struct sched *s, sched_warn_fn fn, void *data);

/* "request_counts", "period_order", ...; NULL for a value out of range. */
const char *sched_invariant_name(enum sched_invariant inv);

/* How often @inv was found broken since sched_create() (0 for a value out of range). */
uint64_t sched_invariant_violations(const struct sched *s, enum sched_invariant inv);

#endif
