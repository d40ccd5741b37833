// SPDX-License-Identifier: MIT
/*
 * DOC: the scheduler's private parts
 *
 * What the scheduler's files (scheduler.c, sched_frames.c, sched_gaps.c,
 * sched_watchdog.c, sched_invariants.c) share and nothing outside them
 * sees: the state behind the opaque struct sched (struct sched, its
 * domains struct sdom and its request slots struct sreq), and the helpers
 * one concept's file offers the others. Each file's overview comment says
 * what it holds; scheduler.h holds the API.
 */
#ifndef MEDIATOR_SCHEDULER_SCHED_INTERNAL_H
#define MEDIATOR_SCHEDULER_SCHED_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scheduler/sched_period.h"
#include "scheduler/scheduler.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* Weight of the newest interval in a safety domain's observed period. */
#define SCHED_PERIOD_WEIGHT 0.125
/* How much of a late arrival moves a safety domain's release grid. */
#define SCHED_GRID_FOLLOW 0.125
/*
 * Where a domain's use and debt saturate (SCHED_INV_BUDGET): budget -
 * debt - use stays within an int64_t. A worker that reports an hour for
 * every group (what mediatord lets through) reaches it, rather than
 * wrapping its domain's remaining budget around to a large one.
 */
#define SCHED_SUM_MAX_NS (1ull << 61)
/* A normal domain's allowance, where the safety domains leave no gap at all. */
#define SCHED_MIN_ALLOWANCE_NS 2000000ull

struct sreq {
	uint64_t id;
	int domain;
	bool used, inflight, throttled;
	bool carried; /* of a safety frame rolled over before its deadline (see carry_frame()) */
	bool young;   /* SCHED_YOUNG */
	bool output;  /* not SCHED_NO_OUTPUT */
	bool untiled; /* SCHED_UNTILED */
	uint64_t predicted, bound, arrival, granted_at;
	/* A normal domain's: how long it may hold the slot (sched_watchdog.c); UINT64_MAX: no limit
	 * but the watchdog's. */
	uint64_t allowance;
};

struct sdom {
	struct sched *s; /* the scheduler it belongs to, and its index there */
	int index;
	struct sched_domain_params p, next;
	bool has_next;
	uint64_t period_start;
	uint64_t last_period; /* how long the last period was (0: none ended yet) */
	int64_t remaining;    /* = p.budget_ns - debt - used (SCHED_INV_BUDGET) */
	uint64_t used, used_last, predicted, debt;
	uint64_t groups, overruns, throttled, misses, frames, unschedulable;
	/* Of the misses, frames no other domain's group ran beside (frame_crossed). */
	uint64_t misses_alone;
	/*
	 * Its start-up's frames are those released before startup_until
	 * (sched_frame's startup), counted in startup_frames; set at its
	 * first release (0 until then), again after it was silent.
	 */
	uint64_t startup_until;
	uint64_t startup_frames;
	uint64_t revoked; /* by the watchdog */
	/* Its revoked groups still drawing (sched_set_revoked_running()). */
	uint32_t revoked_running;
	uint64_t late_ns; /* charged by sched_charge_late() */
	uint32_t pending, inflight;
	uint64_t outstanding_bound; /* bounds of its groups waiting or in flight */
	/* Frames (safety domains). */
	bool frame_open;
	bool frame_noted; /* its release counted for the period and grid (note_release()) */
	uint64_t frame_release;
	uint64_t frame_bound,
	    frame_granted;	 /* sums of the bounds of its groups: arrived, granted */
	uint64_t frame_extra;	 /* what its completed groups took beyond their bounds */
	uint64_t frame_measured; /* what its completed groups took */
	uint32_t frame_groups;	 /* its groups so far */
	bool frame_output;	 /* one of them was not SCHED_NO_OUTPUT */
	/* Another domain's group was in flight, or drew on revoked, while it was open. */
	bool frame_crossed;
	/* Another domain's revoked group drew on while it was open. */
	bool frame_beside_revoked;
	/* What its recent such frames took, measured (0: none yet). */
	uint64_t beside[SCHED_BESIDE_HISTORY];
	unsigned next_beside;
	uint64_t frame_last_end; /* end of its last completed group */
	/* Recent frames: what each cost (bounds, or measured where more) and its groups. */
	uint64_t costs[SCHED_FRAME_HISTORY];
	uint64_t measured[SCHED_FRAME_HISTORY]; /* ... and what they took, measured */
	uint32_t counts[SCHED_FRAME_HISTORY];
	unsigned ncosts, next_cost;
	bool have_release;
	uint64_t last_release;
	/*
	 * A context of it was created (sched_expect_frames()): until then,
	 * while no release is expected on its grid, one may come at any moment.
	 */
	uint64_t expect_until;
	/* Releases in a row that came less than half a period after the one before. */
	uint32_t fast_releases;
	/*
	 * The release the last frame was due at on the domain's own grid: a
	 * client releases frames periodically, but its groups reach us late
	 * by its own CPU time, which varies. The grid follows late arrivals
	 * slowly and early ones at once, so that the next release is never
	 * expected later than it may come.
	 */
	uint64_t grid;
	/* Its period as observed (a learned one once trusted, learn_period) */
	double period_est;
	struct sched_period learned; /* learn_period */
	/* Normal domains (sched_shares.c): measured GPU time over weight; when a group last ended.
	 */
	double vtime;
	uint64_t share_done_at;
	/* Another domain's groups wait for its next one since (0: none)... */
	uint64_t share_held_since;
	/* ... for as long as this lasts (ns): half of its GPU time, at most the longest wait. */
	double hold_credit;
	/* A frame rolled over with work of it running, before its deadline: its verdict waits. */
	uint32_t carried_n; /* its groups not completed yet */
	uint64_t carried_release, carried_deadline, carried_bound, carried_end;
	bool carried_output;  /* its frame_output */
	bool carried_crossed; /* its frame_crossed, and what crossed it since */
	/* How much earlier than expected its recent releases came (0 when not early). */
	uint64_t early[SCHED_FRAME_HISTORY];
	unsigned next_early;
};

struct sched {
	struct sched_params p;
	struct sdom d[SCHED_MAX_DOMAINS];
	int n;
	struct sreq req[SCHED_MAX_PENDING];
	size_t top; /* req[top..] are unused */
	uint32_t inflight;
	/* Closed safety frames not yet taken (sched_take_frames()). */
	struct sched_frame frame_log[SCHED_FRAME_LOG];
	size_t frame_head, frame_n;
	uint64_t frames_dropped;
	uint64_t latest; /* the latest time a call gave (SCHED_INV_TIME_ORDER) */
	uint64_t violations[SCHED_INV_COUNT];
	/* The normal domains' least virtual time while active, never going back (sched_shares.c).
	 */
	double share_floor;
	sched_warn_fn warn;
	void *warn_data;
};

/*
 * decide() (scheduler.c) asks its rules, in order, about one waiting
 * request under policy budget; the first that does not say
 * SCHED_RULE_NEXT decides. Each rule is a function of its concept's file.
 */
enum sched_rule_verdict {
	SCHED_RULE_NEXT = 0, /* nothing to say about it: ask the next rule */
	SCHED_RULE_WAIT,     /* it waits (counted as throttled) */
	SCHED_RULE_REFUSE,   /* it is refused: its context is unschedulable */
	SCHED_RULE_GRANT,    /* it starts now */
};

/* What the rules know of the waiting request decide() asks about. */
struct sched_case {
	const struct sched *s;
	const struct sreq *r;
	const struct sdom *d; /* its domain */
	uint64_t now_ns;
	bool unknown;	     /* a normal domain's group of unknown cost: bound 0, or young */
	bool over_budget;    /* its bound exceeds its strict domain's whole budget */
	bool big;	     /* oversize: over_budget, or larger than a gap (normal domains) */
	bool fits_typically; /* big, not over_budget, its prediction fits the typical gap */
	bool budget_ok;	     /* check 2: budget left for it, or work-conserving for it */
};

typedef enum sched_rule_verdict (*sched_rule_fn)(const struct sched_case *c);

/* The core (scheduler.c). */

/* The request @id waiting or in flight, or NULL. */
struct sreq *sched_find(struct sched *s, uint64_t id);
/* Rolls periods and frames forward to @now_ns. */
void sched_advance_to(struct sched *s, uint64_t now_ns);

/* Invariants (sched_invariants.c). */

/* Counts a broken invariant @inv and tells the warn callback what @fmt says. */
void sched_violated(struct sched *s, enum sched_invariant inv, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/*
 * SCHED_INV_TIME_ORDER: the time of a call (@call) never goes back; an
 * earlier one (the state already went past it) is taken as the latest.
 */
uint64_t sched_call_time(struct sched *s, uint64_t now_ns, const char *call);
/* Takes one off @count, the @what of domain @domain (-1: the scheduler's), never below 0. */
void sched_take_one(struct sched *s, uint32_t *count, int domain, const char *what);
/* Takes a request's @bound off the bounds @d has outstanding, never below 0. */
void sched_take_bound(struct sdom *d, uint64_t bound);
/*
 * SCHED_INV_REQUEST_COUNTS: recounts what the slots hold and repairs the
 * counts that disagree (the slots are what is waiting and in flight).
 */
void sched_check_counts(struct sched *s, const char *call);
/*
 * SCHED_INV_BUDGET: @d's use and debt within SCHED_SUM_MAX_NS, and its
 * remaining budget its budget less both; repaired (saturated) if not.
 */
void sched_check_budget(struct sdom *d, const char *call);

/* Safety frames (sched_frames.c); each a no-op for a normal domain where it says "safety". */

/* The typical frame cost C of safety domain @d: the median of its recent frames' costs. */
uint64_t sched_frame_cost(const struct sdom *d);
/* The median measured time of safety domain @d's recent frames (its budget before any). */
uint64_t sched_frame_time(const struct sdom *d);
/*
 * What a frame of safety domain @d takes beside another domain's revoked
 * group still drawing: the longest of its recent such frames, measured,
 * at least its frame cost C.
 */
uint64_t sched_frame_cost_beside_revoked(const struct sdom *d);
/* Safety domain @d's frames are protected against other domains' groups. */
bool sched_protected_safety(const struct sdom *d);
/* The next release expected of safety domain @d, or 0 when none is expected. */
uint64_t sched_next_release(const struct sdom *d, uint64_t now_ns);
/* True while safety domain @d's next release is expected only as "any moment now" (no grid). */
bool sched_expecting(const struct sdom *d, uint64_t now_ns);
/*
 * The period by which room is kept for safety domain @d's next frame: its
 * observed one, or with a learned period the shortest it may show frames
 * at.
 */
uint64_t sched_gap_period(const struct sdom *d);
/* How much earlier than expected the next release of safety domain @d may come. */
uint64_t sched_release_guard(const struct sdom *d);
/* What the open frame of safety domain @d still needs, @c being its typical cost. */
uint64_t sched_frame_rest(const struct sdom *d, uint64_t c);
/* Closes @d's frame after its idle gap, rolls it over at its next release (sched_advance()). */
void sched_frames_advance(struct sdom *d, uint64_t now_ns);
/* A group of @d arrives at @now_ns: it may close the frame and open the next. */
void sched_frame_arrival(struct sdom *d, uint64_t now_ns);
/* Waiting request @r of @d joins its open frame. */
void sched_frame_add(struct sdom *d, const struct sreq *r);
/* @r of @d was granted: its bound counts as granted in the open frame. */
void sched_frame_grant(struct sdom *d, const struct sreq *r);
/* In-flight @r of @d completed at @end_ns after @measured_ns: its frame learns so. */
void sched_frame_complete(struct sdom *d, struct sreq *r, uint64_t measured_ns, uint64_t end_ns);
/* @r of @d went away (cancelled) at @now_ns. */
void sched_frame_cancel(struct sdom *d, struct sreq *r, uint64_t now_ns);
/* A group of a carried frame completed (or went away, or was refused) at @end_ns. */
void sched_carried_done(struct sdom *d, struct sreq *r, uint64_t end_ns);

/* Gaps (sched_gaps.c): the safety domains' gaps, and what fits before their next frame. */

/* Check 3: would @r, its bound started now, make a safety frame of another domain late? */
bool sched_fits_safety(const struct sched *s, const struct sreq *r, uint64_t now_ns);
/*
 * @r exceeds the largest gap some safety domain leaves: its bound against
 * the gap check 3 sees (@typical false), or its prediction against the gap
 * between frames of their typical measured time (@typical true).
 */
bool sched_exceeds_gaps(const struct sched *s, const struct sreq *r, bool typical, uint64_t now_ns);
/* @r's bound exceeds the largest gap some safety domain leaves. */
bool sched_oversize(const struct sched *s, const struct sreq *r, uint64_t now_ns);
/* @now_ns is at the start of a gap of every (other) protected safety domain. */
bool sched_in_safety_gap(const struct sched *s, const struct sreq *r, uint64_t now_ns);
/*
 * The largest gap every active safety domain but @dom leaves between its
 * frames as check 3 sees them (UINT64_MAX: none is active).
 */
uint64_t sched_largest_gap(const struct sched *s, int dom, uint64_t now_ns);
/* A group of domain @by takes the GPU, or draws on revoked: other domains' frames are crossed. */
void sched_frames_crossed(struct sched *s, int by);
/* Sets @r's allowance at its grant (sched_watchdog.c). */
void sched_set_allowance(const struct sched *s, struct sreq *r, uint64_t now_ns);
/* The largest bound a group of @dom may have to be granted at any time in [@now_ns, @until_ns]. */
uint64_t sched_offer_bound(const struct sched *s, int dom, uint64_t now_ns, uint64_t until_ns);
/*
 * Check 3 alone, for a group of @dom started now that, past it, is revoked
 * and draws on beside the safety frames: how long it may hold the slot
 * before some safety frame would be late, that frame costing what its
 * frames took beside a revoked group (UINT64_MAX: none to protect).
 */
uint64_t sched_safety_room(const struct sched *s, int dom, uint64_t now_ns);
/*
 * How long until the next release of a protected safety domain other than
 * @dom, as early as it may come (UINT64_MAX: none expected).
 */
uint64_t sched_until_next_release(const struct sched *s, int dom, uint64_t now_ns);

/* Weighted shares among the normal domains (sched_shares.c). */

/*
 * How long after a normal domain's group ended its next one is waited for,
 * when it is behind its share and another domain's group would take the
 * GPU: a worker that keeps the GPU busy sends its next group within this.
 */
#define SCHED_SHARE_ANTICIPATE_NS 1000000ull
/* ... and longer by what it is owed, up to this. */
#define SCHED_SHARE_ANTICIPATE_MAX_NS 4000000ull
/* The share of a normal domain's GPU time the others' waits for its next groups may take. */
#define SCHED_SHARE_HOLD_SHARE 0.5
/* A normal domain that sent no group for this long is idle: back, it starts at the floor. */
#define SCHED_SHARE_IDLE_NS 50000000ull
/* How far ahead (GPU time at weight 1) of a domain whose next group is coming one may be. */
#define SCHED_SHARE_SLACK_NS 500000ull

/* @d's weight (params.weight, 0 taken as 1). */
uint32_t sched_weight(const struct sdom *d);
/* A group of normal domain @d arrives at @now_ns: back from idle, it starts level with the rest. */
void sched_share_wake(struct sched *s, struct sdom *d, uint64_t now_ns);
/* A group of normal domain @d took @measured_ns, ending at @end_ns. */
void sched_share_charge(struct sched *s, struct sdom *d, uint64_t measured_ns, uint64_t end_ns);
/* A revoked group of @d completed after all: the rest of its time counts too. */
void sched_share_late(struct sdom *d, uint64_t ns);
/* Both normal: @a is further behind than @b, and its group comes first. */
bool sched_share_first(const struct sdom *a, const struct sdom *b);
/*
 * Normal domain @dom is ahead of another whose next group is coming: its
 * groups wait for it (SCHED_SHARE_ANTICIPATE_NS at most), and the grant
 * board offers it nothing.
 */
bool sched_share_held(const struct sched *s, int dom, uint64_t now_ns);
/* The normal domain whose next group @dom's groups wait for (sched_share_held()), or -1. */
int sched_share_holder(const struct sched *s, int dom, uint64_t now_ns);
/* Normal domain @o's next group is waited for from @now_ns (paid from its hold credit). */
void sched_share_hold(struct sdom *o, uint64_t now_ns);
/* When the earliest such wait ends (UINT64_MAX: none). */
uint64_t sched_share_next_event(const struct sched *s, uint64_t now_ns);

/* decide()'s rules of the gaps, in the order it asks them (scheduler.c, rules[]). */

/* An oversize group that does not fit typically waits max_defer. */
enum sched_rule_verdict sched_rule_oversize_waits(const struct sched_case *c);
/* With SCHED_OVERSIZE_UNSCHEDULABLE, an oversize group that never fits is refused. */
enum sched_rule_verdict sched_rule_oversize_refused(const struct sched_case *c);
/* An oversize group starts at a gap's start, with budget, where its likely cost fits. */
enum sched_rule_verdict sched_rule_oversize_at_gap_start(const struct sched_case *c);
/* A group of unknown cost starts at a gap's start, with budget, where its likely cost fits. */
enum sched_rule_verdict sched_rule_unknown_at_gap_start(const struct sched_case *c);
/* Check 3: any other group waits while it would make a safety frame late. */
enum sched_rule_verdict sched_rule_fits_safety(const struct sched_case *c);

#endif
