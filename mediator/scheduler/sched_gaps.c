// SPDX-License-Identifier: MIT
/*
 * DOC: gaps
 *
 * The safety domains' frames leave gaps between them; another domain's
 * group may start only if it fits in the gap before the next frame
 * (check 3 of doc/design.md, "Scheduling model"): after what is in flight
 * and its own bound, the open frame's rest and the next expected frame
 * (its typical cost C, its release possibly early by the release guard,
 * the domain's guard time) must still meet their deadlines. A group
 * larger than any gap some safety domain leaves is oversize; it, and a
 * group of unknown cost, starts only at the start of a gap, right after
 * a safety frame, where the gap ahead is as long as it gets. The grant
 * board's offer (sched_offer()) is the largest bound that fits.
 */
#include "scheduler/sched_internal.h"

/* When the GPU is expected to be free of what is in flight now. */
static uint64_t busy_until(const struct sched *s, uint64_t now_ns)
{
	uint64_t t = now_ns;

	for (size_t i = 0; i < s->top; i++) {
		const struct sreq *r = &s->req[i];

		if (r->used && r->inflight && r->granted_at + r->bound > now_ns)
			t += r->granted_at + r->bound - now_ns;
	}
	return t;
}

/* The largest gap safety domain @d leaves between frames that cost @c each (0 if none). */
static uint64_t gap_between(const struct sdom *d, uint64_t c)
{
	uint64_t room = sched_gap_period(d) + d->p.deadline_ns;

	return room > 2 * c ? room - 2 * c : 0;
}

/* The largest gap safety domain @d leaves between its frames as check 3 sees them. */
static uint64_t largest_gap(const struct sdom *d)
{
	uint64_t gap = gap_between(d, sched_frame_cost(d));

	return gap > d->p.guard_ns ? gap - d->p.guard_ns : 0;
}

/*
 * Check 3 (doc/design.md, "Scheduling model"): would a group of @r's
 * domain costing @cost_ns, started now, make a safety frame late?
 */
/*
 * The deadline of the frame @r's group belongs to, when @r's domain is a
 * protected safety domain; UINT64_MAX otherwise.
 */
static uint64_t own_deadline(const struct sched *s, const struct sreq *r, uint64_t now_ns)
{
	const struct sdom *d = &s->d[r->domain];

	if (!sched_protected_safety(d))
		return UINT64_MAX;
	return (d->frame_open ? d->frame_release : now_ns) + d->p.deadline_ns;
}

/*
 * A safety domain's group is checked only against the frames of other
 * safety domains due before its own (earliest deadline first): checked
 * against all, two safety domains whose frames were both late, or both
 * expected at any moment after their contexts were made, each kept the
 * other's group waiting, for good (bench/displays, 2026-11-29: the
 * cluster and the head-up display, each with a group waiting and nothing
 * on the GPU, 170 and 85 frames missed in 3 s). Their budgets fit the GPU
 * together (sched_set_budget()), and the one due first is never kept
 * waiting by one due later.
 */
static bool fits_safety_as(const struct sched *s, const struct sreq *r, uint64_t cost_ns,
			   uint64_t now_ns)
{
	uint64_t end = busy_until(s, now_ns) + cost_ns, mine = own_deadline(s, r, now_ns);

	for (int i = 0; i < s->n; i++) {
		const struct sdom *d = &s->d[i];
		uint64_t c = sched_frame_cost(d), next;

		if (!sched_protected_safety(d) || i == r->domain)
			continue;
		if (d->frame_open && d->frame_release + d->p.deadline_ns < mine) {
			uint64_t rest = sched_frame_rest(d, c);

			if (rest &&
			    end + rest + d->p.guard_ns > d->frame_release + d->p.deadline_ns)
				return false;
		}
		next = sched_next_release(d, now_ns);
		if (next && next + d->p.deadline_ns < mine &&
		    end + c + sched_release_guard(d) + d->p.guard_ns > next + d->p.deadline_ns)
			return false;
	}
	return true;
}

bool sched_fits_safety(const struct sched *s, const struct sreq *r, uint64_t now_ns)
{
	return fits_safety_as(s, r, r->bound, now_ns);
}

/* What @r likely takes at most: halfway from its prediction to its bound. */
static uint64_t likely_cost(const struct sreq *r)
{
	return r->bound > r->predicted ? r->predicted + (r->bound - r->predicted) / 2
				       : r->predicted;
}

/*
 * What a group that starts at a gap's start needs room for: its likely
 * cost; a young normal group's prediction where allowances are on. Its
 * bound is the longest group its context had (a shader compile); room
 * for that would hold an honest app's first groups back max_defer each,
 * and the allowance revokes it at its gap's end whatever it takes.
 */
static uint64_t room_needed(const struct sched *s, const struct sreq *r)
{
	if (r->young && s->p.watchdog.multiplier && s->p.watchdog.normal_cap_ns &&
	    s->d[r->domain].p.class != SCHED_CLASS_SAFETY)
		return r->predicted;
	return likely_cost(r);
}

/*
 * At a gap's start, a group whose bound is no guide (oversize by it, or
 * young) waits for room for what it needs, but no longer than max_defer.
 */
static bool waits_for_room(const struct sched *s, const struct sreq *r, uint64_t now_ns)
{
	return now_ns < r->arrival + s->p.max_defer_ns &&
	       !fits_safety_as(s, r, room_needed(s, r), now_ns);
}

/*
 * True when @r exceeds the largest gap some safety domain leaves: its bound
 * against the gap check 3 sees (@typical false), or its typical cost against
 * the gap between frames of their typical measured time (@typical true).
 * The typical cost is its prediction, but a draw that could not be cut
 * (SCHED_UNTILED) counts with its bound: it runs whole, and one that
 * outlives the gap is revoked and the frame drawn beside it. Judged by
 * its prediction, bench/faults' uncut draws (26 to 32 ms, the gap 29 ms)
 * were let run, each revoked, and cost the cluster 4 frames a minute.
 */
bool sched_exceeds_gaps(const struct sched *s, const struct sreq *r, bool typical, uint64_t now_ns)
{
	uint64_t cost = r->untiled ? r->bound : r->predicted;

	for (int i = 0; i < s->n; i++) {
		const struct sdom *d = &s->d[i];

		if (!sched_protected_safety(d) || i == r->domain || !sched_next_release(d, now_ns))
			continue;
		if (typical ? cost > gap_between(d, sched_frame_time(d))
			    : r->bound > largest_gap(d))
			return true;
	}
	return false;
}

bool sched_oversize(const struct sched *s, const struct sreq *r, uint64_t now_ns)
{
	return sched_exceeds_gaps(s, r, false, now_ns);
}

/* Safety domain @d completed its frame's last group at most SCHED_GAP_START_NS ago. */
static bool at_gap_start(const struct sdom *d, uint64_t now_ns)
{
	return d->frame_open && d->frame_last_end &&
	       now_ns - d->frame_last_end <= SCHED_GAP_START_NS;
}

/*
 * True at the start of a safety gap: no safety domain has work waiting or
 * running, and one of them completed its last group at most
 * SCHED_GAP_START_NS ago whose next release comes no later than any
 * other's (so the room ahead, until the next safety release, is as long as
 * it gets). One whose release may come at any moment leaves no longer
 * gap later, and vetoes nothing. With one safety domain, that is the start
 * of its gap. Until 2026-11-29 every safety domain had to be at its gap's
 * start at once: a 60 Hz cluster and a 30 Hz head-up display out of phase
 * never were, and a young group waited max_defer and then started wherever
 * check 3 let it, 2 ms before the next release, and was revoked there
 * (bench/displays: the rear-seat domain's first groups, one revocation
 * after another).
 */
bool sched_in_safety_gap(const struct sched *s, const struct sreq *r, uint64_t now_ns)
{
	uint64_t first = UINT64_MAX, started = UINT64_MAX;

	for (int i = 0; i < s->n; i++) {
		const struct sdom *d = &s->d[i];
		uint64_t next;

		if (!sched_protected_safety(d) || i == r->domain)
			continue;
		if (d->pending || d->inflight)
			return false;
		next = sched_next_release(d, now_ns);
		if (!next || sched_expecting(d, now_ns))
			continue;
		first = MIN(first, next);
		if (at_gap_start(d, now_ns))
			started = MIN(started, next);
	}
	return first == UINT64_MAX || started <= first;
}

/* a - b, or 0 when b >= a. */
static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

uint64_t sched_largest_gap(const struct sched *s, int dom, uint64_t now_ns)
{
	uint64_t b = UINT64_MAX;

	for (int i = 0; i < s->n; i++) {
		const struct sdom *o = &s->d[i];

		if (sched_protected_safety(o) && i != dom && sched_next_release(o, now_ns))
			b = MIN(b, largest_gap(o));
	}
	return b;
}

uint64_t sched_safety_gap(const struct sched *s, uint64_t now_ns)
{
	uint64_t gap = sched_largest_gap(s, -1, now_ns);

	return gap == UINT64_MAX ? 0 : gap;
}

/*
 * Check 3 alone: the longest a group of domain @dom started when the GPU
 * is free at @busy may take so that no safety frame is late, seen at
 * @now_ns (UINT64_MAX: no safety domain to protect). With @gaps, also no
 * more than the largest gap of each (what a normal domain may be offered).
 * With @revoked, for a group that, past that room, is revoked and draws
 * on beside the frame: the frame's cost is what its frames took beside a
 * revoked group (on llvmpipe, 3 to 6 times C: bench/faults' escalating
 * row).
 */
static uint64_t safety_room(const struct sched *s, int dom, uint64_t now_ns, uint64_t busy,
			    bool gaps, bool revoked)
{
	uint64_t b = UINT64_MAX;

	for (int i = 0; i < s->n; i++) {
		const struct sdom *o = &s->d[i];
		uint64_t c = revoked ? sched_frame_cost_beside_revoked(o) : sched_frame_cost(o);
		uint64_t next, rest;

		if (!sched_protected_safety(o) || i == dom)
			continue;
		if (o->frame_open && (rest = sched_frame_rest(o, c)) != 0)
			b = MIN(b, sub0(o->frame_release + o->p.deadline_ns,
					busy + rest + o->p.guard_ns));
		next = sched_next_release(o, now_ns);
		if (next) {
			b = MIN(b, sub0(next + o->p.deadline_ns,
					busy + c + sched_release_guard(o) + o->p.guard_ns));
			if (gaps)
				b = MIN(b, largest_gap(o));
		}
	}
	return b;
}

uint64_t sched_until_next_release(const struct sched *s, int dom, uint64_t now_ns)
{
	uint64_t b = UINT64_MAX;

	for (int i = 0; i < s->n; i++) {
		const struct sdom *o = &s->d[i];
		uint64_t next;

		/* One whose release may come at any moment: check 3's room bounds it. */
		if (!sched_protected_safety(o) || i == dom || sched_expecting(o, now_ns))
			continue;
		next = sched_next_release(o, now_ns);
		if (next)
			b = MIN(b, sub0(next, now_ns + sched_release_guard(o)));
	}
	return b;
}

uint64_t sched_safety_room(const struct sched *s, int dom, uint64_t now_ns)
{
	return safety_room(s, dom, now_ns, busy_until(s, now_ns), false, true);
}

/*
 * The largest bound a group of domain @dom may have to pass checks 2 and
 * 3 (and not be oversize) at any time in [@now_ns, @until_ns], nothing
 * else waiting: check 3 with the GPU busy until the later of the two.
 */
uint64_t sched_offer_bound(const struct sched *s, int dom, uint64_t now_ns, uint64_t until_ns)
{
	const struct sdom *d = &s->d[dom];
	uint64_t busy = busy_until(s, now_ns), b = UINT64_MAX;

	if (busy_until(s, until_ns) > busy)
		busy = busy_until(s, until_ns);
	if (d->p.strict)
		b = d->remaining > 0 ? (uint64_t)d->remaining : 0;
	return MIN(b, safety_room(s, dom, now_ns, busy, d->p.class != SCHED_CLASS_SAFETY, false));
}

enum sched_rule_verdict sched_rule_oversize_waits(const struct sched_case *c)
{
	/*
	 * A group whose prediction fits the gap between safety frames of
	 * their typical measured time, and that fails on its bound alone,
	 * cannot get smaller by waiting: it goes on to start at the next
	 * gap's start, where it has the most room, so that a flood of long
	 * draws gets a gap a period, not one a max_defer
	 * (doc/results/scheduler-tuning.md). The others wait max_defer
	 * first: they may be refused.
	 */
	if (!c->big || c->fits_typically)
		return SCHED_RULE_NEXT;
	return c->now_ns < c->r->arrival + c->s->p.max_defer_ns ? SCHED_RULE_WAIT : SCHED_RULE_NEXT;
}

enum sched_rule_verdict sched_rule_oversize_refused(const struct sched_case *c)
{
	/*
	 * Refused only when it never fits even as it typically goes: its
	 * prediction against the gap between safety frames of their
	 * typical measured time. A group that fails only on bounds may well
	 * fit (a noisy stretch widens bounds and narrows the gaps alike),
	 * and runs at a gap's start (doc/results/scheduler-tuning.md).
	 */
	if (!c->big || !(c->s->p.oversize == SCHED_OVERSIZE_UNSCHEDULABLE ||
			 (c->s->p.oversize == SCHED_OVERSIZE_REFUSE_UNTILED && c->r->untiled)))
		return SCHED_RULE_NEXT;
	if (c->over_budget ? c->r->predicted > c->d->p.budget_ns : !c->fits_typically)
		return SCHED_RULE_REFUSE;
	return SCHED_RULE_NEXT;
}

enum sched_rule_verdict sched_rule_oversize_at_gap_start(const struct sched_case *c)
{
	bool budget_ok = c->budget_ok;

	if (!c->big)
		return SCHED_RULE_NEXT;
	/* A strict domain's runs with a whole period's budget, and no debt. */
	if (c->over_budget)
		budget_ok = c->d->remaining >= (int64_t)c->d->p.budget_ns;
	if (!sched_in_safety_gap(c->s, c->r, c->now_ns) || !budget_ok)
		return SCHED_RULE_WAIT;
	/*
	 * And, at this gap's start, only if check 3 passes with its
	 * likely cost, halfway from its prediction to its bound (about
	 * the 0.9 quantile of its time, the bound being the 0.995): a
	 * frame that completed late leaves less than a whole gap. Past
	 * max_defer it starts at the next gap's start regardless, so that
	 * one whose likely cost fits no gap does not wait for ever
	 * (doc/results/scheduler-tuning.md).
	 */
	if (c->fits_typically && waits_for_room(c->s, c->r, c->now_ns))
		return SCHED_RULE_WAIT;
	return SCHED_RULE_GRANT;
}

enum sched_rule_verdict sched_rule_unknown_at_gap_start(const struct sched_case *c)
{
	if (!c->unknown)
		return SCHED_RULE_NEXT;
	/*
	 * A young group is never refused for its estimate, except where its
	 * worker says it holds a draw that may not be cut and asks with what
	 * such draws of its context took (SCHED_UNTILED): that cannot get
	 * shorter, and would take a frame each time.
	 */
	if (c->r->untiled && c->s->p.oversize == SCHED_OVERSIZE_REFUSE_UNTILED &&
	    sched_exceeds_gaps(c->s, c->r, true, c->now_ns))
		return SCHED_RULE_REFUSE;
	/*
	 * Only where the most room is and, for max_defer, where check 3
	 * passes with its likely cost (from a young context's estimate
	 * and the longest group it had): young groups longer than a
	 * period, started at every gap's start, made frames miss
	 * (doc/results/scheduler-tuning.md).
	 */
	if (!sched_in_safety_gap(c->s, c->r, c->now_ns) || !c->budget_ok ||
	    waits_for_room(c->s, c->r, c->now_ns))
		return SCHED_RULE_WAIT;
	return SCHED_RULE_GRANT;
}

enum sched_rule_verdict sched_rule_fits_safety(const struct sched_case *c)
{
	return sched_fits_safety(c->s, c->r, c->now_ns) ? SCHED_RULE_NEXT : SCHED_RULE_WAIT;
}
