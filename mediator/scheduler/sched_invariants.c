// SPDX-License-Identifier: MIT
/*
 * DOC: invariants
 *
 * The conditions on the scheduler's state that hold by construction (enum
 * sched_invariant in scheduler.h), and the checks that find them broken:
 * the request counts against what the slots hold, the budget arithmetic,
 * the order of the times calls give. A broken one is counted
 * (sched_invariant_violations()), told to the warn callback
 * (sched_set_warn()) and, where the state would stay wrong, repaired; the
 * scheduler never aborts on one. The checks that belong to one place
 * (a frame closed once, a request granted once, a period's order) sit
 * where they can break and report through sched_violated().
 */
#include <stdarg.h>
#include <stdio.h>

#include "scheduler/sched_internal.h"

/* clang-format off */
static const char *const invariant_names[SCHED_INV_COUNT] = {
    [SCHED_INV_REQUEST_COUNTS] = "request_counts",
    [SCHED_INV_PERIOD_ORDER] = "period_order",
    [SCHED_INV_TIME_ORDER] = "time_order",
    [SCHED_INV_BUDGET] = "budget_arithmetic",
    [SCHED_INV_GRANTED_ONCE] = "granted_once",
    [SCHED_INV_MAX_INFLIGHT] = "max_inflight",
    [SCHED_INV_FRAME_ONCE] = "frame_closed_once",
};
/* clang-format on */

void sched_violated(struct sched *s, enum sched_invariant inv, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	s->violations[inv]++;
	if (!s->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	s->warn(s->warn_data, inv, s->violations[inv], what);
}

void sched_set_warn(struct sched *s, sched_warn_fn fn, void *data)
{
	s->warn = fn;
	s->warn_data = data;
}

const char *sched_invariant_name(enum sched_invariant inv)
{
	return (unsigned)inv < SCHED_INV_COUNT ? invariant_names[inv] : NULL;
}

uint64_t sched_invariant_violations(const struct sched *s, enum sched_invariant inv)
{
	return (unsigned)inv < SCHED_INV_COUNT ? s->violations[inv] : 0;
}

/*
 * SCHED_INV_TIME_ORDER: the time of a call (@call) never goes back; an
 * earlier one (the state already went past it) is taken as the latest.
 */
uint64_t sched_call_time(struct sched *s, uint64_t now_ns, const char *call)
{
	if (now_ns < s->latest) {
		sched_violated(s, SCHED_INV_TIME_ORDER, "%s at %llu ns, after a call at %llu ns",
			       call, (unsigned long long)now_ns, (unsigned long long)s->latest);
		return s->latest;
	}
	s->latest = now_ns;
	return now_ns;
}

/* Takes one off @count, the @what of domain @domain (-1: the scheduler's), never below 0. */
void sched_take_one(struct sched *s, uint32_t *count, int domain, const char *what)
{
	if (*count) {
		(*count)--;
		return;
	}
	sched_violated(s, SCHED_INV_REQUEST_COUNTS, "domain %d: %s count taken below 0", domain,
		       what);
}

/* Takes a request's @bound off the bounds @d has outstanding, never below 0. */
void sched_take_bound(struct sdom *d, uint64_t bound)
{
	if (d->outstanding_bound >= bound) {
		d->outstanding_bound -= bound;
		return;
	}
	sched_violated(d->s, SCHED_INV_REQUEST_COUNTS,
		       "domain %d: a bound of %llu ns taken off %llu ns outstanding", d->index,
		       (unsigned long long)bound, (unsigned long long)d->outstanding_bound);
	d->outstanding_bound = 0;
}

/*
 * SCHED_INV_REQUEST_COUNTS: recounts what the slots hold and repairs the
 * counts that disagree (the slots are what is waiting and in flight).
 */
void sched_check_counts(struct sched *s, const char *call)
{
	uint32_t pending[SCHED_MAX_DOMAINS] = {0}, inflight[SCHED_MAX_DOMAINS] = {0};
	uint32_t carried[SCHED_MAX_DOMAINS] = {0}, all = 0;
	uint64_t bound[SCHED_MAX_DOMAINS] = {0};

	if (s->top && !s->req[s->top - 1].used) {
		sched_violated(s, SCHED_INV_REQUEST_COUNTS, "%s: the top slot %zu is unused", call,
			       s->top - 1);
		while (s->top && !s->req[s->top - 1].used)
			s->top--;
	}
	for (size_t i = 0; i < s->top; i++) {
		const struct sreq *r = &s->req[i];

		if (!r->used)
			continue;
		if (r->inflight) {
			inflight[r->domain]++;
			all++;
		} else {
			pending[r->domain]++;
		}
		bound[r->domain] += r->bound;
		carried[r->domain] += r->carried;
	}
	for (int i = 0; i < s->n; i++) {
		struct sdom *d = &s->d[i];

		if (d->pending == pending[i] && d->inflight == inflight[i] &&
		    d->outstanding_bound == bound[i] && d->carried_n == carried[i])
			continue;
		sched_violated(
		    s, SCHED_INV_REQUEST_COUNTS,
		    "%s: domain %d counts %u waiting, %u in flight, %llu ns of bounds, %u "
		    "carried; its slots hold %u, %u, %llu ns, %u",
		    call, i, d->pending, d->inflight, (unsigned long long)d->outstanding_bound,
		    d->carried_n, pending[i], inflight[i], (unsigned long long)bound[i],
		    carried[i]);
		d->pending = pending[i];
		d->inflight = inflight[i];
		d->outstanding_bound = bound[i];
		d->carried_n = carried[i];
	}
	if (s->inflight != all) {
		sched_violated(s, SCHED_INV_REQUEST_COUNTS,
			       "%s: %u counted in flight, %u in the slots", call, s->inflight, all);
		s->inflight = all;
	}
}

/*
 * SCHED_INV_BUDGET: @d's use and debt within SCHED_SUM_MAX_NS, and its
 * remaining budget its budget less both; repaired (saturated) if not.
 */
void sched_check_budget(struct sdom *d, const char *call)
{
	int64_t expect;

	if (d->used > SCHED_SUM_MAX_NS || d->debt > SCHED_SUM_MAX_NS) {
		sched_violated(d->s, SCHED_INV_BUDGET,
			       "%s: domain %d used %llu ns, owes %llu ns: saturated at %llu ns",
			       call, d->index, (unsigned long long)d->used,
			       (unsigned long long)d->debt, SCHED_SUM_MAX_NS);
		d->used = MIN(d->used, SCHED_SUM_MAX_NS);
		d->debt = MIN(d->debt, SCHED_SUM_MAX_NS);
		d->remaining = (int64_t)d->p.budget_ns - (int64_t)d->debt - (int64_t)d->used;
		return;
	}
	expect = (int64_t)d->p.budget_ns - (int64_t)d->debt - (int64_t)d->used;
	if (d->remaining != expect) {
		sched_violated(
		    d->s, SCHED_INV_BUDGET,
		    "%s: domain %d has %lld ns left of a budget of %llu ns, owing %llu ns, "
		    "having used %llu ns",
		    call, d->index, (long long)d->remaining, (unsigned long long)d->p.budget_ns,
		    (unsigned long long)d->debt, (unsigned long long)d->used);
		d->remaining = expect;
	}
}
