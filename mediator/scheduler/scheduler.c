// SPDX-License-Identifier: MIT
/*
 * The scheduler (see scheduler.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/sched_internal.h"

struct sched *sched_create(const struct sched_params *params, uint64_t now_ns)
{
	struct sched *s;

	if (!params || params->policy > SCHED_POLICY_FIFO ||
	    params->oversize > SCHED_OVERSIZE_UNSCHEDULABLE)
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

static bool valid_params(const struct sched_domain_params *p)
{
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

static struct sreq *find(struct sched *s, uint64_t id)
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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The median of @n values (n >= 1); sorts @v. */
static uint64_t median(uint64_t *v, unsigned n)
{
	qsort(v, n, sizeof(v[0]), cmp_u64);
	return v[n / 2];
}

/* The median of @d's recent frames' values @per_frame (costs or measured), its budget before any.
 */
static uint64_t frames_median(const struct sdom *d, const uint64_t *per_frame)
{
	uint64_t c[SCHED_FRAME_HISTORY];

	if (!d->ncosts)
		return d->p.budget_ns;
	memcpy(c, per_frame, d->ncosts * sizeof(c[0]));
	return median(c, d->ncosts);
}

/*
 * The frame cost C of a safety domain: the median of its recent frames'
 * costs (its budget before any frame was seen). A frame's cost is the sum
 * of its groups' bounds, or of their measured times where those were
 * larger. Each bound is already a high quantile of what its group will
 * take (the 0.995 quantile of its context's residuals), so the typical
 * frame's sum is what the domain needs with that confidence; the largest
 * of the sums would count each frame's rare worst case again.
 */
static uint64_t frame_cost(const struct sdom *d)
{
	return frames_median(d, d->costs);
}

/* The median measured time of safety domain @d's recent frames (its budget before any). */
static uint64_t frame_time(const struct sdom *d)
{
	return frames_median(d, d->measured);
}

/*
 * True while safety domain @d is past its budget and draws as fast as it
 * can: its last SCHED_FAST_RELEASES releases each came less than half a
 * period after the one before, or its typical measured frame exceeds its
 * budget (frames that roll into one another). Its frames are then not
 * protected against other domains' groups, nor ordered first. It is
 * guaranteed its budget each period, not the GPU: such a client (a
 * benchmark run in the cluster) would otherwise leave no gap another
 * domain's group fits in, and starve it for as long as it draws. A
 * periodic client keeps its protection past its budget (a frame slowed by
 * a stall) and through a frame split by a pause.
 */
static bool past_entitlement(const struct sdom *d)
{
	return d->remaining < 0 &&
	       (d->fast_releases >= SCHED_FAST_RELEASES || frame_time(d) > d->p.budget_ns);
}

/* Safety domain @d's frames are protected against other domains' groups. */
static bool protected_safety(const struct sdom *d)
{
	return d->p.class == SCHED_CLASS_SAFETY && !past_entitlement(d);
}

/*
 * The most groups a recent frame of safety domain @d had (UINT32_MAX
 * before any frame was seen): a frame with fewer may still be sent more.
 */
static uint32_t frame_groups_max(const struct sdom *d)
{
	uint32_t m = d->ncosts ? 0 : UINT32_MAX;

	for (unsigned i = 0; i < d->ncosts; i++)
		m = d->counts[i] > m ? d->counts[i] : m;
	return m;
}

/* What one more group of safety domain @d typically costs: the median of its frames' cost per
 * group. */
static uint64_t group_cost(const struct sdom *d)
{
	uint64_t c[SCHED_FRAME_HISTORY];

	if (!d->ncosts)
		return d->p.budget_ns;
	for (unsigned i = 0; i < d->ncosts; i++)
		c[i] = d->costs[i] / (d->counts[i] ? d->counts[i] : 1);
	return median(c, d->ncosts);
}

/* Logs a frame that ended for the trace. */
static void log_frame(struct sdom *d, uint64_t release, uint64_t deadline, uint64_t end,
		      uint64_t bound, bool missed)
{
	struct sched *s = d->s;
	struct sched_frame *f;

	if (s->frame_n == SCHED_FRAME_LOG) {
		s->frame_head = (s->frame_head + 1) % SCHED_FRAME_LOG;
		s->frame_n--;
		s->frames_dropped++;
	}
	f = &s->frame_log[(s->frame_head + s->frame_n++) % SCHED_FRAME_LOG];
	*f = (struct sched_frame){.domain = d->index,
				  .missed = missed,
				  .release_ns = release,
				  .deadline_ns = deadline,
				  .end_ns = end,
				  .bound_ns = bound};
}

size_t sched_take_frames(struct sched *s, struct sched_frame *out, size_t max, uint64_t *dropped)
{
	size_t n = 0;

	for (; n < max && s->frame_n; n++, s->frame_n--) {
		out[n] = s->frame_log[s->frame_head];
		s->frame_head = (s->frame_head + 1) % SCHED_FRAME_LOG;
	}
	if (dropped)
		*dropped = s->frames_dropped;
	s->frames_dropped = 0;
	return n;
}

static void close_frame(struct sdom *d, bool unfinished)
{
	bool missed = unfinished || d->frame_last_end > d->frame_release + d->p.deadline_ns;

	if (!d->frame_open) {
		sched_violated(d->s, SCHED_INV_FRAME_ONCE,
			       "domain %d: the frame released at %llu ns closed again", d->index,
			       (unsigned long long)d->frame_release);
		return;
	}
	d->frame_open = false;
	if (!d->frame_output)
		return; /* set-up or teardown: no frame */
	d->frames++;
	if (missed)
		d->misses++;
	log_frame(d, d->frame_release, d->frame_release + d->p.deadline_ns,
		  unfinished ? 0 : d->frame_last_end, d->frame_bound, missed);
	/* What an unfinished frame would have cost is not known. */
	if (unfinished)
		return;
	d->costs[d->next_cost] = d->frame_bound + d->frame_extra;
	d->measured[d->next_cost] = d->frame_measured;
	d->counts[d->next_cost] = d->frame_groups;
	d->next_cost = (d->next_cost + 1) % SCHED_FRAME_HISTORY;
	if (d->ncosts < SCHED_FRAME_HISTORY)
		d->ncosts++;
}

/* A safety domain's frame is over once it has been idle for SCHED_FRAME_GAP_NS. */
static bool frame_over(const struct sdom *d, uint64_t now_ns)
{
	return d->frame_open && !d->pending && !d->inflight && d->frame_last_end &&
	       now_ns >= d->frame_last_end + SCHED_FRAME_GAP_NS;
}

static void open_frame(struct sdom *d, uint64_t now_ns)
{
	if (d->have_release) {
		double interval = (double)(now_ns - d->last_release);
		double p = (double)d->p.period_ns;

		/* A frame split by a pause, or a skipped release, says nothing of the period. */
		if (interval >= p / 2 && interval <= p * 2)
			d->period_est += SCHED_PERIOD_WEIGHT * (interval - d->period_est);
		if (interval < p / 2)
			d->fast_releases++;
		else
			d->fast_releases = 0;
	}
	if (!d->have_release) {
		d->grid = now_ns;
	} else {
		uint64_t due = d->grid + (uint64_t)d->period_est;

		uint64_t off = now_ns > due ? now_ns - due : due - now_ns;

		if (off < (uint64_t)d->period_est / 2) { /* on the grid, give or take */
			d->early[d->next_early] = now_ns < due ? due - now_ns : 0;
			d->next_early = (d->next_early + 1) % SCHED_FRAME_HISTORY;
		}
		if (now_ns <= due || now_ns - due > (uint64_t)d->period_est / 2)
			d->grid = now_ns; /* early, or an irregular release: start again here */
		else
			d->grid = due + (uint64_t)(SCHED_GRID_FOLLOW * (double)(now_ns - due));
	}
	d->have_release = true;
	d->last_release = now_ns;
	d->frame_open = true;
	d->frame_release = now_ns;
	d->frame_bound = 0;
	d->frame_granted = 0;
	d->frame_extra = 0;
	d->frame_measured = 0;
	d->frame_groups = 0;
	d->frame_output = false;
	d->frame_last_end = 0;
}

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

/*
 * A safety domain that never leaves an idle gap (it submits without
 * pause) still has one frame per period: a frame open for a whole
 * observed period is closed (late if work of it was still waiting or
 * running at its deadline), and what remains opens the next one.
 */
/*
 * Rolls the open frame over at the next release while work of it still
 * waits or runs but its deadline has not come: whether it missed is
 * decided when that work completed.
 */
static void carry_frame(struct sdom *d)
{
	struct sched *s = d->s;

	d->frame_open = false;
	d->carried_n = 0;
	for (size_t i = 0; i < s->top; i++) {
		if (s->req[i].used && s->req[i].domain == d->index) {
			s->req[i].carried = true;
			d->carried_n++;
		}
	}
	d->carried_release = d->frame_release;
	d->carried_deadline = d->frame_release + d->p.deadline_ns;
	d->carried_bound = d->frame_bound;
	d->carried_end = d->frame_last_end;
	d->carried_output = d->frame_output;
}

/* A group of a carried frame completed (or went away) at @end_ns. */
static void carried_done(struct sdom *d, struct sreq *r, uint64_t end_ns)
{
	bool missed;

	if (!r->carried || !d->carried_n) {
		sched_violated(
		    d->s, SCHED_INV_FRAME_ONCE,
		    "domain %d: a group done for a carried frame already judged (%u left)",
		    d->index, d->carried_n);
		r->carried = false;
		return;
	}
	r->carried = false;
	if (end_ns > d->carried_end)
		d->carried_end = end_ns;
	if (--d->carried_n || !d->carried_output)
		return;
	missed = d->carried_end > d->carried_deadline;
	d->frames++;
	if (missed)
		d->misses++;
	log_frame(d, d->carried_release, d->carried_deadline, d->carried_end, d->carried_bound,
		  missed);
}

/* True when a group of @d with output waits or runs. */
static bool output_outstanding(const struct sdom *d)
{
	const struct sched *s = d->s;

	for (size_t i = 0; i < s->top; i++)
		if (s->req[i].used && s->req[i].domain == d->index && s->req[i].output)
			return true;
	return false;
}

static void roll_frame(struct sdom *d, uint64_t now_ns)
{
	uint64_t next = d->frame_release + (uint64_t)d->period_est;
	bool busy = d->pending || d->inflight;
	bool drawn;

	if (!d->frame_open || now_ns < next)
		return;
	/*
	 * Only groups without output left (a client's teardown right after
	 * its last frame, waiting behind another domain's group): the frame
	 * is judged by what it drew, which is done, and what is left is no
	 * frame of its own.
	 */
	drawn = busy && !output_outstanding(d);
	if (busy && !drawn && !d->carried_n && now_ns < d->frame_release + d->p.deadline_ns)
		carry_frame(d);
	else
		close_frame(d, busy && !drawn);
	if (!busy)
		return;
	d->have_release = true;
	d->last_release = next;
	d->grid = next;
	d->frame_open = true;
	d->frame_release = next;
	d->frame_bound = d->outstanding_bound;
	d->frame_granted = 0;
	d->frame_extra = 0;
	d->frame_measured = 0;
	d->frame_groups = 0; /* the groups carried over are the last frame's */
	if (drawn)
		d->frame_output = false;
	/*
	 * frame_output stays: a frame rolled over from one with output is
	 * judged as before (a release the client missed while its last frame
	 * waited is a frame late); one rolled over from set-up or teardown is
	 * no frame unless a group with output joins it.
	 */
	d->frame_last_end = 0;
}

/* Rolls periods and frames forward to @now_ns. */
static void advance(struct sched *s, uint64_t now_ns)
{
	for (int i = 0; i < s->n; i++) {
		struct sdom *d = &s->d[i];

		advance_periods(d, now_ns);
		if (frame_over(d, now_ns))
			close_frame(d, false);
		if (d->p.class == SCHED_CLASS_SAFETY)
			roll_frame(d, now_ns);
	}
}

void sched_advance(struct sched *s, uint64_t now_ns)
{
	advance(s, sched_call_time(s, now_ns, "sched_advance"));
}

int sched_submit(struct sched *s, uint64_t id, int domain, uint64_t predicted_ns, uint64_t bound_ns,
		 unsigned flags, uint64_t now_ns)
{
	struct sdom *d;
	struct sreq *r = NULL;

	if (domain < 0 || domain >= s->n || find(s, id) || predicted_ns > SCHED_TIME_MAX_NS ||
	    bound_ns > SCHED_TIME_MAX_NS)
		return -EINVAL;
	for (size_t i = 0; i < SCHED_MAX_PENDING && !r; i++) {
		if (!s->req[i].used)
			r = &s->req[i];
	}
	if (!r)
		return -ENOSPC;
	now_ns = sched_call_time(s, now_ns, "sched_submit");
	advance(s, now_ns);
	d = &s->d[domain];
	/*
	 * A group arriving half a period or more after its frame's release,
	 * with all of that frame done, is the next frame's, even if it came
	 * before the idle gap that ends a frame (the GPU was busy, the frame
	 * completed late in its period).
	 */
	if (d->p.class == SCHED_CLASS_SAFETY && d->frame_open && !d->pending && !d->inflight &&
	    d->frame_last_end && now_ns - d->frame_release >= (uint64_t)(d->period_est / 2))
		close_frame(d, false);
	if (d->p.class == SCHED_CLASS_SAFETY && !d->frame_open)
		open_frame(d, now_ns);
	memset(r, 0, sizeof(*r));
	r->used = true;
	r->id = id;
	r->domain = domain;
	r->predicted = predicted_ns;
	r->bound = bound_ns > predicted_ns ? bound_ns : predicted_ns;
	r->young = flags & SCHED_YOUNG;
	r->output = !(flags & SCHED_NO_OUTPUT);
	r->arrival = now_ns;
	if ((size_t)(r - s->req) >= s->top)
		s->top = (size_t)(r - s->req) + 1;
	d->pending++;
	d->outstanding_bound += r->bound;
	if (d->p.class == SCHED_CLASS_SAFETY) {
		d->frame_bound += r->bound;
		d->frame_groups++;
		if (!(flags & SCHED_NO_OUTPUT))
			d->frame_output = true;
	}
	sched_check_counts(s, "sched_submit");
	return 0;
}

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

/* The next release expected of safety domain @d, or 0 when none is expected. */
static uint64_t next_release(const struct sdom *d, uint64_t now_ns)
{
	uint64_t r;

	if (!d->have_release ||
	    now_ns - d->last_release > (uint64_t)(SCHED_IDLE_PERIODS * d->period_est))
		return 0;
	r = d->grid + (uint64_t)d->period_est;
	return r > now_ns ? r : now_ns;
}

/*
 * How much earlier than expected the next release of safety domain @d may
 * come: the most any of its recent releases was early (a client's frames
 * reach us late by its own CPU time, which varies, so the grid sits a
 * little late now and then), at most an eighth of its deadline.
 */
static uint64_t release_guard(const struct sdom *d)
{
	uint64_t g = 0;

	for (unsigned i = 0; i < SCHED_FRAME_HISTORY; i++)
		g = d->early[i] > g ? d->early[i] : g;
	return g < d->p.deadline_ns / 8 ? g : d->p.deadline_ns / 8;
}

/* The largest gap safety domain @d leaves between frames that cost @c each (0 if none). */
static uint64_t gap_between(const struct sdom *d, uint64_t c)
{
	uint64_t room = (uint64_t)d->period_est + d->p.deadline_ns;

	return room > 2 * c ? room - 2 * c : 0;
}

/* The largest gap safety domain @d leaves between its frames as check 3 sees them. */
static uint64_t largest_gap(const struct sdom *d)
{
	uint64_t gap = gap_between(d, frame_cost(d));

	return gap > d->p.guard_ns ? gap - d->p.guard_ns : 0;
}

/*
 * What the open frame of safety domain @d still needs, C being its typical
 * cost: a typical frame or what arrived, less what was granted. A frame
 * with all its groups granted and fewer than its recent frames had may
 * still be sent another, so it keeps room for one typical group; one with
 * as many is done.
 */
static uint64_t frame_rest(const struct sdom *d, uint64_t c)
{
	uint64_t need = c > d->frame_bound ? c : d->frame_bound;
	uint64_t rest = need > d->frame_granted ? need - d->frame_granted : 0;
	uint64_t one;

	if (d->pending)
		return rest;
	if (d->frame_groups >= frame_groups_max(d))
		return 0;
	one = group_cost(d);
	return rest > one ? rest : one;
}

/* Check 3 of scheduler.h: would a group of @r's bound, started now, make a safety frame late? */
static bool fits_safety_as(const struct sched *s, const struct sreq *r, uint64_t cost_ns,
			   uint64_t now_ns)
{
	uint64_t end = busy_until(s, now_ns) + cost_ns;

	for (int i = 0; i < s->n; i++) {
		const struct sdom *d = &s->d[i];
		uint64_t c = frame_cost(d), next;

		if (!protected_safety(d) || i == r->domain)
			continue;
		if (d->frame_open) {
			uint64_t rest = frame_rest(d, c);

			if (rest &&
			    end + rest + d->p.guard_ns > d->frame_release + d->p.deadline_ns)
				return false;
		}
		next = next_release(d, now_ns);
		if (next && end + c + release_guard(d) + d->p.guard_ns > next + d->p.deadline_ns)
			return false;
	}
	return true;
}

static bool fits_safety(const struct sched *s, const struct sreq *r, uint64_t now_ns)
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
 * At a gap's start, a group whose bound is no guide (oversize by it, or
 * young) waits for room for its likely cost, but no longer than max_defer.
 */
static bool waits_for_room(const struct sched *s, const struct sreq *r, uint64_t now_ns)
{
	return now_ns < r->arrival + s->p.max_defer_ns &&
	       !fits_safety_as(s, r, likely_cost(r), now_ns);
}

/*
 * True when @r exceeds the largest gap some safety domain leaves: its bound
 * against the gap check 3 sees (@typical false), or its prediction against
 * the gap between frames of their typical measured time (@typical true).
 */
static bool exceeds_gaps(const struct sched *s, const struct sreq *r, bool typical, uint64_t now_ns)
{
	for (int i = 0; i < s->n; i++) {
		const struct sdom *d = &s->d[i];

		if (!protected_safety(d) || i == r->domain || !next_release(d, now_ns))
			continue;
		if (typical ? r->predicted > gap_between(d, frame_time(d))
			    : r->bound > largest_gap(d))
			return true;
	}
	return false;
}

static bool oversize(const struct sched *s, const struct sreq *r, uint64_t now_ns)
{
	return exceeds_gaps(s, r, false, now_ns);
}

/*
 * True at the start of a gap of every safety domain: none has work waiting
 * or running, and each active one completed its last group at most
 * SCHED_GAP_START_NS ago (so the gap ahead is as long as it gets).
 */
static bool in_safety_gap(const struct sched *s, const struct sreq *r, uint64_t now_ns)
{
	for (int i = 0; i < s->n; i++) {
		const struct sdom *d = &s->d[i];

		if (!protected_safety(d) || i == r->domain)
			continue;
		if (d->pending || d->inflight)
			return false;
		if (next_release(d, now_ns) && !(d->frame_open && d->frame_last_end &&
						 now_ns - d->frame_last_end <= SCHED_GAP_START_NS))
			return false;
	}
	return true;
}

static bool has_budget(const struct sched *s, const struct sreq *r)
{
	return s->d[r->domain].remaining >= (int64_t)r->bound;
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
	if (unknown_cost(s, r) && !in_safety_gap(s, r, now_ns))
		return false;
	return has_budget(s, r) && fits_safety(s, r, now_ns) &&
	       !(s->d[r->domain].p.class != SCHED_CLASS_SAFETY && oversize(s, r, now_ns));
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
	r->inflight = true;
	r->granted_at = now_ns;
	sched_take_one(s, &d->pending, d->index, "waiting");
	d->inflight++;
	d->predicted += r->predicted;
	if (d->p.class == SCHED_CLASS_SAFETY && d->frame_open)
		d->frame_granted += r->bound;
	s->inflight++;
}

static void throttle(struct sched *s, struct sreq *r)
{
	if (!r->throttled) {
		r->throttled = true;
		s->d[r->domain].throttled++;
	}
}

/* Orders waiting requests: safety first by frame deadline, then the rest by arrival. */
static bool before(const struct sched *s, const struct sreq *a, const struct sreq *b)
{
	const struct sdom *da = &s->d[a->domain], *db = &s->d[b->domain];
	bool sa = protected_safety(da), sb = protected_safety(db);

	if (sa != sb)
		return sa;
	if (sa && da->frame_release + da->p.deadline_ns != db->frame_release + db->p.deadline_ns)
		return da->frame_release + da->p.deadline_ns <
		       db->frame_release + db->p.deadline_ns;
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

/* Decides about one waiting request under policy budget; true when it was decided. */
static bool decide(struct sched *s, struct sreq *r, bool others_wait, uint64_t now_ns,
		   struct sched_decision *out)
{
	struct sdom *d = &s->d[r->domain];
	bool unknown = unknown_cost(s, r);
	/* Larger than a strict domain's whole budget: it would never have enough. */
	bool over_budget = d->p.strict && r->bound > d->p.budget_ns;
	bool big = !unknown &&
		   (over_budget || (d->p.class != SCHED_CLASS_SAFETY && oversize(s, r, now_ns)));
	/*
	 * A group of unknown cost needs budget for its prediction, or a whole
	 * period's when it is predicted above that (a shader compile the memo
	 * remembers from the last start: a strict domain never has more).
	 */
	uint64_t unknown_need = r->predicted < d->p.budget_ns ? r->predicted : d->p.budget_ns;
	bool budget_ok = (unknown ? d->remaining >= (int64_t)unknown_need : has_budget(s, r)) ||
			 (!d->p.strict && !others_wait);

	if (big) {
		/*
		 * A group whose prediction fits the gap between safety frames of
		 * their typical measured time, and that fails on its bound alone,
		 * cannot get smaller by waiting: it starts at the next gap's
		 * start, right after a safety frame, where it has the most room
		 * (a flood of single long draws, which no piece can cut, gets one
		 * gap a period instead of one every max_defer). The others wait
		 * max_defer first: they may be refused.
		 */
		bool fits_typically = !over_budget && !exceeds_gaps(s, r, true, now_ns);

		throttle(s, r);
		if (!fits_typically && now_ns < r->arrival + s->p.max_defer_ns)
			return false;
		/*
		 * Refused only when it never fits even as it typically goes: its
		 * prediction against the gap between safety frames of their
		 * typical measured time. A group that fails only on bounds (a
		 * margin widened by a noisy stretch, its own or the safety
		 * domain's, whose frame cost then narrows the gaps) may well fit,
		 * and runs at a gap's start.
		 */
		if (s->p.oversize == SCHED_OVERSIZE_UNSCHEDULABLE &&
		    ((over_budget && r->predicted > d->p.budget_ns) ||
		     (!over_budget && !fits_typically))) {
			sched_take_one(s, &d->pending, d->index, "waiting");
			sched_take_bound(d, r->bound);
			d->unschedulable++;
			/* A carried frame's group that never runs: judged without it. */
			if (r->carried)
				carried_done(d, r, now_ns);
			*out = (struct sched_decision){r->id, r->domain, SCHED_REFUSED};
			release(s, r);
			return true;
		}
		/* A strict domain's runs with a whole period's budget, and no debt. */
		if (over_budget)
			budget_ok = d->remaining >= (int64_t)d->p.budget_ns;
		if (!in_safety_gap(s, r, now_ns) || !budget_ok)
			return false;
		/*
		 * And, at this gap's start, only if check 3 passes with its
		 * likely cost, halfway from its prediction to its bound (about
		 * the 0.9 quantile of its time, the bound being the 0.995): a
		 * safety frame that completed late (it waited for the last such
		 * group) leaves less than a whole gap, and groups longer than a
		 * period started at every gap's start pushed each frame later
		 * until one missed; with their prediction alone, one that ran a
		 * fifth over it made the next frame miss (test-isolation, single
		 * draws). Past max_defer it starts at the next gap's start, as
		 * any oversize group that runs does: one whose likely cost fits
		 * no gap of the safety frames' bounds (a prediction inflated
		 * once, 25 ms for groups that take 10) waited for ever.
		 */
		if (fits_typically && waits_for_room(s, r, now_ns))
			return false;
	} else if (unknown) {
		/*
		 * Only where the most room is and, for max_defer, where check 3
		 * passes with its likely cost (from a young context's estimate
		 * and the longest group it had): started at every gap's start,
		 * a flood's young groups of more than a period (22 ms draws)
		 * made the next frame miss after each late gap start (all of
		 * bench/isolation's single-load misses came from its first 64
		 * groups), and with their prediction alone, one that ran a
		 * fifth over it did.
		 */
		if (!in_safety_gap(s, r, now_ns) || !budget_ok || waits_for_room(s, r, now_ns)) {
			throttle(s, r);
			return false;
		}
	} else if (!budget_ok || !fits_safety(s, r, now_ns)) {
		throttle(s, r);
		return false;
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

		/* Work-conserving: a domain past its budget runs only if no other domain waits. */
		for (size_t i = 0; i < s->top && others_wait; i++) {
			const struct sreq *o = &s->req[i];

			if (o->used && !o->inflight && o->domain != r->domain &&
			    eligible(s, o, now_ns))
				mine_only = false;
		}
		skip[r - s->req] = true;
		if (decide(s, r, !mine_only, now_ns, &out[n]))
			n++;
	}
	return n;
}

size_t sched_poll(struct sched *s, uint64_t now_ns, struct sched_decision *out, size_t max)
{
	size_t n;

	now_ns = sched_call_time(s, now_ns, "sched_poll");
	advance(s, now_ns);
	if (s->p.policy == SCHED_POLICY_FIFO)
		n = poll_fifo(s, now_ns, out, max);
	else
		n = poll_budget(s, now_ns, out, max);
	sched_check_counts(s, "sched_poll");
	return n;
}

/* a - b, or 0 when b >= a. */
static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * The largest bound a group of domain @dom may have to pass checks 2 and
 * 3 (and not be oversize) at any time in [@now_ns, @until_ns], nothing
 * else waiting: check 3 with the GPU busy until the later of the two.
 */
static uint64_t offer_bound(const struct sched *s, int dom, uint64_t now_ns, uint64_t until_ns)
{
	const struct sdom *d = &s->d[dom];
	uint64_t busy = busy_until(s, now_ns), b = UINT64_MAX;

	if (busy_until(s, until_ns) > busy)
		busy = busy_until(s, until_ns);
	if (d->p.strict)
		b = d->remaining > 0 ? (uint64_t)d->remaining : 0;
	for (int i = 0; i < s->n; i++) {
		const struct sdom *o = &s->d[i];
		uint64_t c = frame_cost(o), next, rest;

		if (!protected_safety(o) || i == dom)
			continue;
		if (o->frame_open && (rest = frame_rest(o, c)) != 0)
			b = MIN(b, sub0(o->frame_release + o->p.deadline_ns,
					busy + rest + o->p.guard_ns));
		next = next_release(o, now_ns);
		if (next) {
			b = MIN(b, sub0(next + o->p.deadline_ns,
					busy + c + release_guard(o) + o->p.guard_ns));
			if (d->p.class != SCHED_CLASS_SAFETY)
				b = MIN(b, largest_gap(o));
		}
	}
	return b;
}

bool sched_offer(struct sched *s, uint64_t now_ns, uint64_t until_ns, bool after_inflight,
		 uint64_t *max_bound)
{
	now_ns = sched_call_time(s, now_ns, "sched_offer");
	advance(s, now_ns);
	if ((!after_inflight && !slot_free(s)) || until_ns < now_ns)
		return false;
	for (size_t i = 0; i < s->top; i++) {
		if (s->req[i].used && !s->req[i].inflight)
			return false;
	}
	for (int i = 0; i < s->n; i++)
		max_bound[i] = s->p.policy == SCHED_POLICY_FIFO
				   ? UINT64_MAX
				   : offer_bound(s, i, now_ns, until_ns);
	return true;
}

int sched_claim(struct sched *s, uint64_t id, int domain, uint64_t predicted_ns, uint64_t bound_ns,
		unsigned flags, uint64_t now_ns)
{
	int r = sched_submit(s, id, domain, predicted_ns, bound_ns, flags, now_ns);

	if (r == 0) {
		/* The time sched_submit() took: never before the latest. */
		grant(s, find(s, id), s->latest);
		sched_check_counts(s, "sched_claim");
	}
	return r;
}

int sched_complete(struct sched *s, uint64_t id, uint64_t measured_ns, uint64_t end_ns)
{
	struct sreq *r = find(s, id);
	struct sdom *d;

	if (!r || !r->inflight)
		return -ENOENT;
	/* Its end may be older than the last call's time: it was reported after. */
	advance(s, end_ns);
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
	sched_check_budget(d, "sched_complete");
	if (r->carried) {
		carried_done(d, r, end_ns);
	} else if (d->p.class == SCHED_CLASS_SAFETY && d->frame_open) {
		if (end_ns > d->frame_last_end)
			d->frame_last_end = end_ns;
		if (measured_ns > r->bound)
			d->frame_extra += measured_ns - r->bound;
		d->frame_measured += measured_ns;
	}
	release(s, r);
	sched_check_counts(s, "sched_complete");
	return 0;
}

int sched_cancel(struct sched *s, uint64_t id, uint64_t now_ns)
{
	struct sreq *r = find(s, id);
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
	if (r->carried)
		carried_done(d, r, now_ns);
	else if (d->p.class == SCHED_CLASS_SAFETY && d->frame_open && !d->frame_last_end)
		d->frame_last_end = now_ns;
	release(s, r);
	sched_check_counts(s, "sched_cancel");
	return 0;
}

uint64_t sched_watchdog_limit(const struct sched_watchdog *w, uint64_t bound_ns)
{
	uint64_t limit = w->floor_ns;

	if (!w->multiplier)
		return UINT64_MAX;
	if (bound_ns > UINT64_MAX / w->multiplier)
		return UINT64_MAX;
	if (bound_ns * w->multiplier > limit)
		limit = bound_ns * w->multiplier;
	if (bound_ns > UINT64_MAX - w->slack_ns)
		return UINT64_MAX;
	if (bound_ns + w->slack_ns > limit)
		limit = bound_ns + w->slack_ns;
	return limit;
}

/* When in-flight @r is overdue: its grant + its limit, saturating. */
static uint64_t deadline_of(const struct sched *s, const struct sreq *r)
{
	uint64_t limit = sched_watchdog_limit(&s->p.watchdog, r->bound);

	return limit > UINT64_MAX - r->granted_at ? UINT64_MAX : r->granted_at + limit;
}

uint64_t sched_next_deadline(const struct sched *s)
{
	uint64_t t = UINT64_MAX;

	for (size_t i = 0; i < s->top; i++) {
		const struct sreq *r = &s->req[i];

		if (r->used && r->inflight && deadline_of(s, r) < t)
			t = deadline_of(s, r);
	}
	return t;
}

size_t sched_overdue(const struct sched *s, uint64_t now_ns, struct sched_overdue *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < s->top; i++) {
		const struct sreq *r = &s->req[i];
		size_t k;

		if (!r->used || !r->inflight || deadline_of(s, r) > now_ns)
			continue;
		/* Insertion by grant time; the oldest are kept when more are overdue. */
		for (k = n; k > 0 && out[k - 1].granted_ns > r->granted_at; k--) {
			if (k < max)
				out[k] = out[k - 1];
		}
		if (k >= max)
			continue;
		out[k] = (struct sched_overdue){.id = r->id,
						.domain = r->domain,
						.granted_ns = r->granted_at,
						.bound_ns = r->bound,
						.deadline_ns = deadline_of(s, r)};
		if (n < max)
			n++;
	}
	return n;
}

int sched_revoke(struct sched *s, uint64_t id, uint64_t now_ns)
{
	struct sreq *r = find(s, id);
	uint64_t held;

	if (!r || !r->inflight)
		return -ENOENT;
	now_ns = sched_call_time(s, now_ns, "sched_revoke");
	held = now_ns > r->granted_at ? now_ns - r->granted_at : 0;
	if (held < r->bound)
		held = r->bound;
	s->d[r->domain].revoked++;
	return sched_complete(s, id, held, now_ns);
}

int sched_charge_late(struct sched *s, int domain, uint64_t extra_ns, uint64_t end_ns)
{
	struct sdom *d;

	if (domain < 0 || domain >= s->n)
		return -EINVAL;
	/* Like a completion's, its end may be older than the last call's time. */
	advance(s, end_ns);
	d = &s->d[domain];
	if (extra_ns > SCHED_TIME_MAX_NS) {
		sched_violated(s, SCHED_INV_BUDGET,
			       "domain %d: a late completion charged %llu ns; %llu ns", d->index,
			       (unsigned long long)extra_ns, SCHED_TIME_MAX_NS);
		extra_ns = SCHED_TIME_MAX_NS;
	}
	d->used += extra_ns;
	d->late_ns += extra_ns;
	d->remaining -= (int64_t)extra_ns;
	sched_check_budget(d, "sched_charge_late");
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
		r = d->p.class == SCHED_CLASS_SAFETY ? next_release(d, now_ns) : 0;
		if (r > now_ns)
			t = r < t ? r : t;
	}
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
	out->frames = d->frames;
	out->unschedulable = d->unschedulable;
	out->revoked = d->revoked;
	out->late_ns = d->late_ns;
	out->pending = d->pending;
	out->inflight = d->inflight;
	out->frame_cost_ns = d->p.class == SCHED_CLASS_SAFETY ? frame_cost(d) : 0;
	out->observed_period_ns = (uint64_t)d->period_est;
	return 0;
}
