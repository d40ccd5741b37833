// SPDX-License-Identifier: MIT
/*
 * DOC: the scheduler's core
 *
 * Requests, domains and their budgets: a worker's group waits in a slot
 * (struct sreq) from sched_submit() until sched_poll() grants or refuses
 * it, and is in flight until sched_complete() (or sched_cancel(),
 * sched_revoke()). Each domain (struct sdom) has a budget of GPU time per
 * period, charged with measured time and replenished at each period
 * boundary, overspending carried as debt.
 *
 * Policy fifo grants in arrival order. Policy budget orders the waiting
 * requests (protected safety domains first, by frame deadline, then the
 * rest by arrival) and decide() asks, for each in turn, an ordered list
 * of named rules (rules[] below). The budget's rule is here; the rules of
 * oversize groups, of groups of unknown cost and check 3 are the gaps'
 * (sched_gaps.c), which ask the safety frames (sched_frames.c) for their
 * costs and releases. The watchdog (sched_watchdog.c) and the invariant
 * checks (sched_invariants.c) stand beside. The policy itself is
 * doc/design.md, "Scheduling model".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "scheduler/sched_internal.h"

struct sched *sched_create(const struct sched_params *params, uint64_t now_ns)
{
	struct sched *s;

	if (!params || params->policy > SCHED_POLICY_FIFO ||
	    params->oversize > SCHED_OVERSIZE_REFUSE_UNTILED)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->p = *params;
	s->latest = now_ns; /* SCHED_INV_TIME_ORDER */
	return s;
}

void sched_destroy(struct sched *s)
{
	free(s);
}

int sched_set_params(struct sched *s, const struct sched_params *params)
{
	if (params->policy > SCHED_POLICY_FIFO || params->oversize > SCHED_OVERSIZE_REFUSE_UNTILED)
		return -EINVAL;
	s->p = *params;
	return 0;
}

void sched_get_params(const struct sched *s, struct sched_params *out)
{
	*out = s->p;
}

static bool valid_params(const struct sched_domain_params *p)
{
	if (p->weight > SCHED_MAX_WEIGHT)
		return false;
	if (p->learn_period && (p->class != SCHED_CLASS_SAFETY || p->max_period_ns < p->period_ns ||
				p->max_period_ns > SCHED_MAX_PERIOD_NS))
		return false;
	return p->period_ns > 0 && p->budget_ns <= p->period_ns && p->deadline_ns > 0 &&
	       p->deadline_ns <= p->period_ns && p->guard_ns < p->deadline_ns &&
	       (p->class == SCHED_CLASS_NORMAL || p->class == SCHED_CLASS_SAFETY);
}

int sched_add_domain(struct sched *s, const struct sched_domain_params *p, uint64_t now_ns)
{
	struct sdom *d;

	if (!valid_params(p))
		return -EINVAL;
	if (s->n >= SCHED_MAX_DOMAINS)
		return -ENOSPC;
	d = &s->d[s->n];
	memset(d, 0, sizeof(*d));
	d->s = s;
	d->index = s->n;
	d->p = *p;
	d->period_start = now_ns;
	d->remaining = (int64_t)p->budget_ns;
	d->period_est = (double)p->period_ns;
	if (p->learn_period)
		sched_period_init(&d->learned, p->period_ns, p->max_period_ns);
	return s->n++;
}

int sched_set_budget(struct sched *s, int domain, uint64_t period_ns, uint64_t budget_ns,
		     uint64_t deadline_ns, char *why, size_t why_size)
{
	struct sched_domain_params p;
	double util = 0;

	if (domain < 0 || domain >= s->n) {
		snprintf(why, why_size, "no such domain");
		return -EINVAL;
	}
	p = s->d[domain].has_next ? s->d[domain].next : s->d[domain].p;
	p.period_ns = period_ns;
	p.budget_ns = budget_ns;
	p.deadline_ns = deadline_ns;
	if (period_ns < SCHED_MIN_PERIOD_NS || period_ns > SCHED_MAX_PERIOD_NS) {
		snprintf(why, why_size, "period %llu us is outside %llu..%llu us",
			 (unsigned long long)(period_ns / 1000), SCHED_MIN_PERIOD_NS / 1000,
			 SCHED_MAX_PERIOD_NS / 1000);
		return -EINVAL;
	}
	if (p.learn_period && period_ns > p.max_period_ns) {
		snprintf(why, why_size,
			 "the shortest period (%llu us) of a learned period is longer than its "
			 "longest (%llu us)",
			 (unsigned long long)(period_ns / 1000),
			 (unsigned long long)(p.max_period_ns / 1000));
		return -EINVAL;
	}
	if (p.guard_ns >= deadline_ns) {
		snprintf(why, why_size,
			 "the deadline (%llu us) must be longer than the guard (%llu us)",
			 (unsigned long long)(deadline_ns / 1000),
			 (unsigned long long)(p.guard_ns / 1000));
		return -EINVAL;
	}
	if (!valid_params(&p)) {
		snprintf(why, why_size,
			 "budget (%llu us) and deadline (%llu us) must be at most the period "
			 "(%llu us), the deadline above 0",
			 (unsigned long long)(budget_ns / 1000),
			 (unsigned long long)(deadline_ns / 1000),
			 (unsigned long long)(period_ns / 1000));
		return -EINVAL;
	}
	if (p.class == SCHED_CLASS_SAFETY && budget_ns > deadline_ns) {
		snprintf(why, why_size, "a safety budget (%llu us) must fit its deadline (%llu us)",
			 (unsigned long long)(budget_ns / 1000),
			 (unsigned long long)(deadline_ns / 1000));
		return -EINVAL;
	}
	for (int i = 0; i < s->n; i++) {
		const struct sched_domain_params *q =
		    i == domain ? &p : (s->d[i].has_next ? &s->d[i].next : &s->d[i].p);

		if (q->class == SCHED_CLASS_SAFETY)
			util += (double)q->budget_ns / (double)q->period_ns;
	}
	if (util > 1.0 + 1e-9) {
		snprintf(
		    why, why_size,
		    "the safety domains' budgets would need %.0f %% of the GPU; at most 100 %% "
		    "fit",
		    util * 100);
		return -EINVAL;
	}
	s->d[domain].next = p;
	s->d[domain].has_next = true;
	return 0;
}

struct sreq *sched_find(struct sched *s, uint64_t id)
{
	for (size_t i = 0; i < s->top; i++) {
		if (s->req[i].used && s->req[i].id == id)
			return &s->req[i];
	}
	return NULL;
}

/* Frees @r's slot (its counts were taken off already). */
static void release(struct sched *s, struct sreq *r)
{
	r->used = false;
	while (s->top > 0 && !s->req[s->top - 1].used)
		s->top--;
}

/*
 * Rolls @d's budget periods forward to @now_ns: at each boundary the
 * budget is replenished less what was overspent (debt), and a new period,
 * budget and deadline (sched_set_budget()) take effect.
 */
static void advance_periods(struct sdom *d, uint64_t now_ns)
{
	uint64_t start = d->period_start;

	if (now_ns < d->period_start + d->p.period_ns)
		return;
	/* One boundary: what was overspent is carried as debt. */
	d->used_last = d->used;
	d->last_period = d->p.period_ns;
	d->debt = d->remaining < 0 ? (uint64_t)-d->remaining : 0;
	d->period_start += d->p.period_ns;
	if (d->has_next) {
		d->p = d->next;
		d->has_next = false;
		/* A new shortest period bounds what is learned from now on. */
		d->learned.min_ns = d->p.period_ns;
		if (d->learned.max_ns < d->p.period_ns)
			d->learned.max_ns = d->p.period_ns;
	}
	d->remaining = (int64_t)d->p.budget_ns - (int64_t)d->debt;
	d->used = 0;
	d->predicted = 0;
	/*
	 * Later boundaries of an idle stretch, each a period of the new
	 * length: every one pays a budget's worth of debt; what is still owed
	 * is carried into the current period.
	 */
	if (now_ns >= d->period_start + d->p.period_ns) {
		uint64_t skipped = (now_ns - d->period_start) / d->p.period_ns;

		d->period_start += skipped * d->p.period_ns;
		d->last_period = d->p.period_ns;
		d->used_last = 0;
		if (d->remaining >= 0) {
			d->remaining = (int64_t)d->p.budget_ns;
		} else {
			d->remaining += (int64_t)(skipped * d->p.budget_ns);
			if (d->remaining > (int64_t)d->p.budget_ns)
				d->remaining = (int64_t)d->p.budget_ns;
		}
		d->debt = (uint64_t)((int64_t)d->p.budget_ns - d->remaining);
	}
	if (d->period_start <= start || now_ns >= d->period_start + d->p.period_ns)
		sched_violated(
		    d->s, SCHED_INV_PERIOD_ORDER,
		    "domain %d: advanced to %llu ns, its period moved from %llu ns to %llu "
		    "ns (%llu ns long)",
		    d->index, (unsigned long long)now_ns, (unsigned long long)start,
		    (unsigned long long)d->period_start, (unsigned long long)d->p.period_ns);
	sched_check_budget(d, "period boundary");
}

/* Rolls periods and frames forward to @now_ns. */
void sched_advance_to(struct sched *s, uint64_t now_ns)
{
	for (int i = 0; i < s->n; i++) {
		struct sdom *d = &s->d[i];

		advance_periods(d, now_ns);
		sched_frames_advance(d, now_ns);
	}
}

void sched_advance(struct sched *s, uint64_t now_ns)
{
	sched_advance_to(s, sched_call_time(s, now_ns, "sched_advance"));
}

int sched_submit(struct sched *s, uint64_t id, int domain, uint64_t predicted_ns, uint64_t bound_ns,
		 unsigned flags, uint64_t now_ns)
{
	struct sdom *d;
	struct sreq *r = NULL;

	if (domain < 0 || domain >= s->n || sched_find(s, id) || predicted_ns > SCHED_TIME_MAX_NS ||
	    bound_ns > SCHED_TIME_MAX_NS)
		return -EINVAL;
	for (size_t i = 0; i < SCHED_MAX_PENDING && !r; i++) {
		if (!s->req[i].used)
			r = &s->req[i];
	}
	if (!r)
		return -ENOSPC;
	now_ns = sched_call_time(s, now_ns, "sched_submit");
	sched_advance_to(s, now_ns);
	d = &s->d[domain];
	sched_frame_arrival(d, now_ns);
	sched_share_wake(s, d, now_ns);
	memset(r, 0, sizeof(*r));
	r->used = true;
	r->id = id;
	r->domain = domain;
	r->predicted = predicted_ns;
	r->bound = bound_ns > predicted_ns ? bound_ns : predicted_ns;
	r->young = flags & SCHED_YOUNG;
	r->output = !(flags & SCHED_NO_OUTPUT);
	r->untiled = flags & SCHED_UNTILED;
	r->arrival = now_ns;
	if ((size_t)(r - s->req) >= s->top)
		s->top = (size_t)(r - s->req) + 1;
	d->pending++;
	d->outstanding_bound += r->bound;
	sched_frame_add(d, r);
	sched_check_counts(s, "sched_submit");
	return 0;
}

/*
 * Its domain has budget left for its bound this period. A normal domain
 * whose budget is its whole period (the default) has no cap to keep: its
 * groups always have budget. Held to remaining >= bound, one of groups
 * over half a period waited for the next period after each, unless no
 * other domain waited: the head unit's groups of 10 ms gave way to the
 * rear seats' every other time, 2.77 to 1 for weights 3 to 1
 * (bench/displays, 2026-11-29).
 */
static bool has_budget(const struct sched *s, const struct sreq *r)
{
	const struct sdom *d = &s->d[r->domain];

	if (d->p.class == SCHED_CLASS_NORMAL && !d->p.strict && d->p.budget_ns >= d->p.period_ns)
		return true;
	return d->remaining >= (int64_t)r->bound;
}

/* Its cost is not known (no model yet) or its bound not learned (young). */
static bool unknown_cost(const struct sched *s, const struct sreq *r)
{
	return s->d[r->domain].p.class != SCHED_CLASS_SAFETY && (r->bound == 0 || r->young);
}

/*
 * A waiting group that may start now within its domain's budget. A group
 * of unknown cost starts only in a safety gap (decide()): not before,
 * else a safety group past its budget would wait for it while it waits
 * for the safety group, the GPU idle.
 */
static bool eligible(const struct sched *s, const struct sreq *r, uint64_t now_ns)
{
	if (unknown_cost(s, r) && !sched_in_safety_gap(s, r, now_ns))
		return false;
	return has_budget(s, r) && sched_fits_safety(s, r, now_ns) &&
	       !(s->d[r->domain].p.class != SCHED_CLASS_SAFETY && sched_oversize(s, r, now_ns));
}

static bool slot_free(const struct sched *s)
{
	return s->p.max_inflight == 0 || s->inflight < s->p.max_inflight;
}

static void grant(struct sched *s, struct sreq *r, uint64_t now_ns)
{
	struct sdom *d = &s->d[r->domain];

	if (r->inflight) {
		sched_violated(s, SCHED_INV_GRANTED_ONCE, "domain %d: request %llu granted again",
			       r->domain, (unsigned long long)r->id);
		return;
	}
	if (!slot_free(s))
		sched_violated(s, SCHED_INV_MAX_INFLIGHT,
			       "domain %d: request %llu granted with %u of %u in flight", r->domain,
			       (unsigned long long)r->id, s->inflight, s->p.max_inflight);
	sched_set_allowance(s, r, now_ns); /* before it counts as in flight */
	sched_frames_crossed(s, r->domain);
	r->inflight = true;
	r->granted_at = now_ns;
	sched_take_one(s, &d->pending, d->index, "waiting");
	d->inflight++;
	d->predicted += r->predicted;
	sched_frame_grant(d, r);
	s->inflight++;
}

static void throttle(struct sched *s, struct sreq *r)
{
	if (!r->throttled) {
		r->throttled = true;
		s->d[r->domain].throttled++;
	}
}

/*
 * Orders waiting requests: safety first by frame deadline; then a normal
 * domain's before another's when it is further behind its weighted share
 * (sched_shares.c); then by arrival.
 */
static bool before(const struct sched *s, const struct sreq *a, const struct sreq *b)
{
	const struct sdom *da = &s->d[a->domain], *db = &s->d[b->domain];
	bool sa = sched_protected_safety(da), sb = sched_protected_safety(db);

	if (sa != sb)
		return sa;
	if (sa && da->frame_release + da->p.deadline_ns != db->frame_release + db->p.deadline_ns)
		return da->frame_release + da->p.deadline_ns <
		       db->frame_release + db->p.deadline_ns;
	if (sched_share_first(da, db) || sched_share_first(db, da))
		return sched_share_first(da, db);
	if (a->arrival != b->arrival)
		return a->arrival < b->arrival;
	return a->id < b->id;
}

/* The waiting request that comes first among those not in @skip, or NULL. */
static struct sreq *first_waiting(struct sched *s, const bool *skip)
{
	struct sreq *best = NULL;

	for (size_t i = 0; i < s->top; i++) {
		struct sreq *r = &s->req[i];

		if (r->used && !r->inflight && !skip[i] && (!best || before(s, r, best)))
			best = r;
	}
	return best;
}

static size_t poll_fifo(struct sched *s, uint64_t now_ns, struct sched_decision *out, size_t max)
{
	size_t n = 0;

	while (n < max && slot_free(s)) {
		struct sreq *best = NULL;

		for (size_t i = 0; i < s->top; i++) {
			struct sreq *r = &s->req[i];

			if (r->used && !r->inflight &&
			    (!best || r->arrival < best->arrival ||
			     (r->arrival == best->arrival && r->id < best->id)))
				best = r;
		}
		if (!best)
			break;
		grant(s, best, now_ns);
		out[n++] = (struct sched_decision){best->id, best->domain, SCHED_GRANTED};
	}
	return n;
}

/* check 2: its domain has budget for it, or the policy is work-conserving for it. */
static enum sched_rule_verdict rule_within_budget(const struct sched_case *c)
{
	return c->budget_ok ? SCHED_RULE_NEXT : SCHED_RULE_WAIT;
}

/*
 * decide()'s rules, in order: the first that does not say SCHED_RULE_NEXT
 * decides, and a request that none stops is granted. Check 1
 * (max_inflight) is poll_budget()'s: it asks only while a slot is free.
 */
static const sched_rule_fn rules[] = {
    sched_rule_oversize_waits,	      /* oversize: waits max_defer unless it fits typically, */
    sched_rule_oversize_refused,      /* is refused if it never fits (as configured), */
    sched_rule_oversize_at_gap_start, /* or starts at a gap's start */
    sched_rule_unknown_at_gap_start,  /* unknown cost: starts at a gap's start */
    rule_within_budget,		      /* check 2: budget, or work-conserving */
    sched_rule_fits_safety,	      /* check 3: no safety frame made late */
};

/* What decide()'s rules know of waiting request @r at @now_ns. */
static struct sched_case make_case(const struct sched *s, const struct sreq *r, bool others_wait,
				   uint64_t now_ns)
{
	const struct sdom *d = &s->d[r->domain];
	/*
	 * A group of unknown cost needs budget for its prediction, or a whole
	 * period's when it is predicted above that (a shader compile the memo
	 * remembers from the last start: a strict domain never has more).
	 */
	uint64_t unknown_need = r->predicted < d->p.budget_ns ? r->predicted : d->p.budget_ns;
	struct sched_case c = {.s = s, .r = r, .d = d, .now_ns = now_ns};

	c.unknown = unknown_cost(s, r);
	/* Larger than a strict domain's whole budget: it would never have enough. */
	c.over_budget = d->p.strict && r->bound > d->p.budget_ns;
	c.big = !c.unknown && (c.over_budget ||
			       (d->p.class != SCHED_CLASS_SAFETY && sched_oversize(s, r, now_ns)));
	c.fits_typically = c.big && !c.over_budget && !sched_exceeds_gaps(s, r, true, now_ns);
	c.budget_ok = (c.unknown ? d->remaining >= (int64_t)unknown_need : has_budget(s, r)) ||
		      (!d->p.strict && !others_wait);
	return c;
}

/* Refuses waiting @r: it never runs, its context is reported unschedulable. */
static void refuse(struct sched *s, struct sreq *r, uint64_t now_ns, struct sched_decision *out)
{
	struct sdom *d = &s->d[r->domain];

	sched_take_one(s, &d->pending, d->index, "waiting");
	sched_take_bound(d, r->bound);
	d->unschedulable++;
	/*
	 * A group that never runs ends its frame's wait as a cancelled one
	 * does: a carried frame is judged without it, an open one by now.
	 */
	sched_frame_cancel(d, r, now_ns);
	*out = (struct sched_decision){r->id, r->domain, SCHED_REFUSED};
	release(s, r);
}

/*
 * Decides about one waiting request under policy budget by asking the
 * rules; true when it was decided (granted or refused), false when it
 * waits. An oversize group counts as throttled whatever the rules say: it
 * waits for a gap's start at least.
 */
static bool decide(struct sched *s, struct sreq *r, bool others_wait, uint64_t now_ns,
		   struct sched_decision *out)
{
	struct sched_case c = make_case(s, r, others_wait, now_ns);
	enum sched_rule_verdict v = SCHED_RULE_NEXT;

	for (size_t i = 0; i < ARRAY_SIZE(rules) && v == SCHED_RULE_NEXT; i++)
		v = rules[i](&c);
	if (c.big || v == SCHED_RULE_WAIT)
		throttle(s, r);
	if (v == SCHED_RULE_WAIT)
		return false;
	if (v == SCHED_RULE_REFUSE) {
		refuse(s, r, now_ns, out);
		return true;
	}
	grant(s, r, now_ns);
	*out = (struct sched_decision){r->id, r->domain, SCHED_GRANTED};
	return true;
}

static size_t poll_budget(struct sched *s, uint64_t now_ns, struct sched_decision *out, size_t max)
{
	bool skip[SCHED_MAX_PENDING] = {false};
	size_t n = 0;
	struct sreq *r;
	bool others_wait = false;

	/* Does some domain with budget left have a group waiting that may start now? */
	for (size_t i = 0; i < s->top; i++) {
		r = &s->req[i];
		if (r->used && !r->inflight && eligible(s, r, now_ns))
			others_wait = true;
	}
	while (n < max && slot_free(s) && (r = first_waiting(s, skip)) != NULL) {
		bool mine_only = true;
		int holder;

		/* Work-conserving: a domain past its budget runs only if no other domain waits. */
		for (size_t i = 0; i < s->top && others_wait; i++) {
			const struct sreq *o = &s->req[i];

			if (o->used && !o->inflight && o->domain != r->domain &&
			    eligible(s, o, now_ns))
				mine_only = false;
		}
		skip[r - s->req] = true;
		/* Another normal domain, behind its share, is about to send its next group. */
		holder = sched_share_holder(s, r->domain, now_ns);
		if (holder >= 0) {
			sched_share_hold(&s->d[holder], now_ns);
			continue;
		}
		if (decide(s, r, !mine_only, now_ns, &out[n]))
			n++;
	}
	return n;
}

size_t sched_poll(struct sched *s, uint64_t now_ns, struct sched_decision *out, size_t max)
{
	size_t n;

	now_ns = sched_call_time(s, now_ns, "sched_poll");
	sched_advance_to(s, now_ns);
	if (s->p.policy == SCHED_POLICY_FIFO)
		n = poll_fifo(s, now_ns, out, max);
	else
		n = poll_budget(s, now_ns, out, max);
	sched_check_counts(s, "sched_poll");
	return n;
}

bool sched_offer(struct sched *s, uint64_t now_ns, uint64_t until_ns, bool after_inflight,
		 uint64_t *max_bound)
{
	now_ns = sched_call_time(s, now_ns, "sched_offer");
	sched_advance_to(s, now_ns);
	if ((!after_inflight && !slot_free(s)) || until_ns < now_ns)
		return false;
	for (size_t i = 0; i < s->top; i++) {
		if (s->req[i].used && !s->req[i].inflight)
			return false;
	}
	for (int i = 0; i < s->n; i++)
		max_bound[i] = s->p.policy == SCHED_POLICY_FIFO ? UINT64_MAX
			       : sched_share_held(s, i, now_ns)
				   ? 0
				   : sched_offer_bound(s, i, now_ns, until_ns);
	return true;
}

int sched_claim(struct sched *s, uint64_t id, int domain, uint64_t predicted_ns, uint64_t bound_ns,
		unsigned flags, uint64_t now_ns)
{
	int r = sched_submit(s, id, domain, predicted_ns, bound_ns, flags, now_ns);

	if (r == 0) {
		/* The time sched_submit() took: never before the latest. */
		grant(s, sched_find(s, id), s->latest);
		sched_check_counts(s, "sched_claim");
	}
	return r;
}

int sched_complete(struct sched *s, uint64_t id, uint64_t measured_ns, uint64_t end_ns)
{
	struct sreq *r = sched_find(s, id);
	struct sdom *d;

	if (!r || !r->inflight)
		return -ENOENT;
	/* Its end may be older than the last call's time: it was reported after. */
	sched_advance_to(s, end_ns);
	d = &s->d[r->domain];
	sched_take_one(s, &d->inflight, d->index, "in-flight");
	sched_take_bound(d, r->bound);
	sched_take_one(s, &s->inflight, -1, "in-flight");
	d->groups++;
	if (measured_ns > SCHED_TIME_MAX_NS) {
		sched_violated(s, SCHED_INV_BUDGET,
			       "domain %d: request %llu took %llu ns; charged %llu ns", d->index,
			       (unsigned long long)id, (unsigned long long)measured_ns,
			       SCHED_TIME_MAX_NS);
		measured_ns = SCHED_TIME_MAX_NS;
	}
	d->used += measured_ns;
	if (d->remaining >= 0 && d->remaining < (int64_t)measured_ns)
		d->overruns++;
	d->remaining -= (int64_t)measured_ns;
	sched_share_charge(s, d, measured_ns, end_ns);
	sched_check_budget(d, "sched_complete");
	sched_frame_complete(d, r, measured_ns, end_ns);
	release(s, r);
	sched_check_counts(s, "sched_complete");
	return 0;
}

int sched_cancel(struct sched *s, uint64_t id, uint64_t now_ns)
{
	struct sreq *r = sched_find(s, id);
	struct sdom *d;

	if (!r)
		return -ENOENT;
	now_ns = sched_call_time(s, now_ns, "sched_cancel");
	d = &s->d[r->domain];
	sched_take_bound(d, r->bound);
	if (r->inflight) {
		sched_take_one(s, &d->inflight, d->index, "in-flight");
		sched_take_one(s, &s->inflight, -1, "in-flight");
	} else {
		sched_take_one(s, &d->pending, d->index, "waiting");
	}
	sched_frame_cancel(d, r, now_ns);
	release(s, r);
	sched_check_counts(s, "sched_cancel");
	return 0;
}

uint64_t sched_next_event(const struct sched *s, uint64_t now_ns)
{
	uint64_t t = UINT64_MAX;

	for (int i = 0; i < s->n; i++) {
		const struct sdom *d = &s->d[i];
		uint64_t b = d->period_start + d->p.period_ns, r;

		t = b < t ? b : t;
		if (d->frame_open && !d->pending && !d->inflight && d->frame_last_end) {
			b = d->frame_last_end + SCHED_FRAME_GAP_NS;
			t = b < t ? b : t;
		}
		r = d->p.class == SCHED_CLASS_SAFETY ? sched_next_release(d, now_ns) : 0;
		if (r > now_ns)
			t = r < t ? r : t;
		if (d->expect_until > now_ns)
			t = d->expect_until < t ? d->expect_until : t;
	}
	t = MIN(t, sched_share_next_event(s, now_ns));
	for (size_t i = 0; i < s->top; i++) {
		const struct sreq *r = &s->req[i];

		if (r->used && !r->inflight && r->throttled) {
			uint64_t b = r->arrival + s->p.max_defer_ns;

			if (b > now_ns)
				t = b < t ? b : t;
		}
	}
	return t;
}

int sched_domain_stats(const struct sched *s, int domain, struct sched_domain_stats *out)
{
	const struct sdom *d;

	if (domain < 0 || domain >= s->n)
		return -EINVAL;
	d = &s->d[domain];
	memset(out, 0, sizeof(*out));
	out->params = d->p;
	out->period_start_ns = d->period_start;
	out->remaining_ns = d->remaining;
	out->used_ns = d->used;
	out->used_last_period_ns = d->used_last;
	out->last_period_ns = d->last_period;
	out->predicted_ns = d->predicted;
	out->debt_ns = d->debt;
	out->groups = d->groups;
	out->overruns = d->overruns;
	out->throttled = d->throttled;
	out->deadline_misses = d->misses;
	out->misses_alone = d->misses_alone;
	out->startup_frames = d->startup_frames;
	out->frames = d->frames;
	out->unschedulable = d->unschedulable;
	out->revoked = d->revoked;
	out->late_ns = d->late_ns;
	out->pending = d->pending;
	out->inflight = d->inflight;
	out->frame_cost_ns = d->p.class == SCHED_CLASS_SAFETY ? sched_frame_cost(d) : 0;
	out->observed_period_ns = (uint64_t)d->period_est;
	out->vtime_ns = (uint64_t)d->vtime;
	if (d->p.learn_period) {
		out->learned_period_ns = sched_period_ns(&d->learned);
		out->period_confidence = sched_period_confidence(&d->learned);
		out->period_changes = d->learned.changes;
		out->period_pauses = d->learned.pauses;
	}
	return 0;
}
