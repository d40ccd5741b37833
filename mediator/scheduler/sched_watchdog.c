// SPDX-License-Identifier: MIT
/*
 * DOC: the grant watchdog
 *
 * A granted group holds the GPU's slot until its completion comes. The
 * watchdog (doc/design.md, "The grant watchdog") gives each one a
 * deadline, its grant + sched_watchdog_limit() of its bound; the
 * scheduler only says which groups are past it (sched_next_deadline(),
 * sched_overdue()). Its driver revokes them (sched_revoke(): completed as
 * if measured for as long as they held the slot) and stops their workers;
 * a completion that comes after all is charged late
 * (sched_charge_late()). The deadlines change no decision of
 * sched_poll(), so replays are not affected.
 */
#include <errno.h>

#include "scheduler/sched_internal.h"

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

/*
 * How long a young group of domain @dom granted at @now_ns may hold the
 * slot: until the next release of a protected safety domain, and no longer
 * than one period of any safety domain that has released frames, protected
 * or not. A cluster past its budget that draws as fast as it can, or one
 * silent for a few periods, has no release expected; it is still owed its
 * budget every period, and a young group held it off for the class's cap
 * (250 ms; bench/soak, test-isolation under ASan).
 */
static uint64_t young_limit(const struct sched *s, int dom, uint64_t now_ns)
{
	uint64_t a = sched_until_next_release(s, dom, now_ns);

	for (int i = 0; i < s->n; i++)
		if (i != dom && s->d[i].p.class == SCHED_CLASS_SAFETY && s->d[i].have_release)
			a = MIN(a, s->d[i].p.period_ns);
	return a;
}

/*
 * Sets the allowance of @r, a group granted now: a normal domain's may
 * hold the slot as long as the safety domains' frames leave room (check 3
 * alone: until the next frame's latest start; its budget does not cut
 * it shorter), at least SCHED_MIN_ALLOWANCE_NS, at most normal_cap_ns.
 * (Until 2026-11-27 it was at least the largest gap the safety domains
 * leave, for groups started at a gap's start: that runs from a frame's
 * earliest end, so a group granted a little after a frame ended held the
 * slot past the next frame's latest start, and the frame missed by 0.3 to
 * 4 ms, one a scissor tile in bench/faults' escalating row.) Young or
 * old, predicted right or not: the mediator chooses how long another
 * domain's group may keep the GPU, not the group's history
 * (doc/design.md, "The grant watchdog").
 */
void sched_set_allowance(const struct sched *s, struct sreq *r, uint64_t now_ns)
{
	const struct sched_watchdog *w = &s->p.watchdog;
	uint64_t a;

	r->allowance = UINT64_MAX;
	if (!w->multiplier || !w->normal_cap_ns || s->p.policy != SCHED_POLICY_BUDGET ||
	    s->d[r->domain].p.class == SCHED_CLASS_SAFETY)
		return;
	a = sched_safety_room(s, r->domain, now_ns);
	/*
	 * A young group's cost is unknown: it holds the slot until the next
	 * safety release at most, not until that frame's latest start. Revoked
	 * there, it draws on beside the frame (the GPU cannot be preempted),
	 * which starts at once and has its whole deadline; revoked at the
	 * latest start, the frame waited for it and then took 3 to 6 times C
	 * beside it, and missed (bench/faults, escalating: grants 10 to 16 ms
	 * late, every miss of the row).
	 */
	if (r->young)
		a = MIN(a, young_limit(s, r->domain, now_ns));
	if (a < SCHED_MIN_ALLOWANCE_NS)
		a = SCHED_MIN_ALLOWANCE_NS;
	r->allowance = MIN(a, w->normal_cap_ns);
}

/* True when a safety domain other than @dom is configured. */
static bool other_safety(const struct sched *s, int dom)
{
	for (int i = 0; i < s->n; i++)
		if (i != dom && s->d[i].p.class == SCHED_CLASS_SAFETY)
			return true;
	return false;
}

/*
 * When in-flight @r is overdue: its grant + its limit, saturating. A
 * young group of the only safety domain is its start-up, its shaders
 * compiling: it may take SCHED_WATCHDOG_SAFETY_YOUNG_NS. Revoked at the
 * floor, it served only the other domains: its client was suspended and
 * its worker put at idle priority while their groups ran beside it
 * (test-grant-watchdog, 2026-11-28: glmark2's first scene in the cluster,
 * its cache cold, beside long-draws, revoked at 200 ms). Where another
 * safety domain's frames could wait for it, the floor stays.
 */
static uint64_t deadline_of(const struct sched *s, const struct sreq *r)
{
	uint64_t limit = sched_watchdog_limit(&s->p.watchdog, r->bound);

	if (r->allowance < limit)
		limit = r->allowance;
	if (r->young && limit < SCHED_WATCHDOG_SAFETY_YOUNG_NS &&
	    s->d[r->domain].p.class == SCHED_CLASS_SAFETY && !other_safety(s, r->domain))
		limit = SCHED_WATCHDOG_SAFETY_YOUNG_NS;

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
	struct sreq *r = sched_find(s, id);
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
	sched_advance_to(s, end_ns);
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
	sched_share_late(d, extra_ns);
	sched_check_budget(d, "sched_charge_late");
	return 0;
}
