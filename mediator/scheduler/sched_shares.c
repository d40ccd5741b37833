// SPDX-License-Identifier: MIT
/*
 * DOC: weighted shares among the normal domains
 *
 * What the safety domains leave is divided among the backlogged normal
 * domains by their weights (issue 33). Each normal domain keeps a virtual
 * time: the GPU time its groups took, measured, divided by its weight.
 * Among waiting groups of normal domains, the one of the domain furthest
 * behind in virtual time comes first (decide()'s order). That alone does
 * not share a GPU between two workers that each send their next group
 * only once their last ended: at each grant, the other's group is the
 * only one waiting, and they alternate, group for group. So while a
 * domain behind its share is about to send its next group (its last
 * ended within SCHED_SHARE_ANTICIPATE_NS), the groups of a domain ahead
 * of it wait for it, and the grant board offers that domain nothing: the
 * GPU idles that long at most, as an anticipatory disk scheduler waits
 * for the process it just served. How long the others wait for a domain
 * is paid from its hold credit, half of the GPU time its groups took (at
 * most SCHED_SHARE_ANTICIPATE_MAX_NS): a domain that sent a 0.5 ms group
 * every 4 ms, behind its share for good, kept the other domains' groups
 * waiting for good (test-sched-shares); on credit, it keeps them 0.25 ms
 * a group. So two domains that keep the GPU busy get GPU time
 * in the ratio of their weights, group by group. A domain that comes back
 * from idle starts at the floor, the least virtual time of those active
 * (never going back), not at what it had: time it did not use is not
 * banked, and a domain that had the GPU alone owes nothing for it
 * (work-conserving). Budgets stay caps.
 *
 * This is the virtual runtime of DRM's FAIR scheduler and of Linux's CFS,
 * per domain rather than per context or entity, under the safety domains'
 * gaps; unlike Xe's per-VF time quanta, a domain's share of an idle GPU is
 * everything, and nothing is preempted (doc/design.md, "Weighted shares").
 */
#include "scheduler/sched_internal.h"

uint32_t sched_weight(const struct sdom *d)
{
	return d->p.weight ? d->p.weight : 1;
}

/*
 * Normal domain @o's next group may come at any moment: its last one
 * ended less than @window ago and none waits or runs, and its budget
 * would let it run (a strict domain past its budget would not).
 */
static bool coming(const struct sdom *o, uint64_t now_ns, uint64_t window_ns)
{
	return o->p.class == SCHED_CLASS_NORMAL && !o->pending && !o->inflight &&
	       o->share_done_at && now_ns - o->share_done_at < window_ns &&
	       (!o->p.strict || o->remaining > 0);
}

/*
 * A normal domain with a group waiting or in flight, or one that had one
 * within SCHED_SHARE_IDLE_NS: not idle. Counted idle after the wait for
 * its next group (1 ms), a domain that was slow to send one now and then
 * came back at the floor, and what it was owed was forgiven each time
 * (bench/displays: the head unit's share 2.75 to 1 for weights 3 to 1).
 */
static bool active(const struct sdom *d, uint64_t now_ns)
{
	return d->p.class == SCHED_CLASS_NORMAL &&
	       (d->pending || d->inflight || coming(d, now_ns, SCHED_SHARE_IDLE_NS));
}

/*
 * Normal domain @d, which another domain's groups waited for since
 * share_held_since, sent its next group (or let the wait run out) at
 * @now_ns: the wait is taken from its hold credit.
 */
static void charge_hold(struct sdom *d, uint64_t now_ns)
{
	double held;

	if (!d->share_held_since)
		return;
	held = (double)(now_ns - d->share_held_since);
	d->hold_credit = d->hold_credit > held ? d->hold_credit - held : 0;
	d->share_held_since = 0;
}

void sched_share_wake(struct sched *s, struct sdom *d, uint64_t now_ns)
{
	if (d->p.class != SCHED_CLASS_NORMAL)
		return;
	charge_hold(d, now_ns);
	if (!active(d, now_ns) && d->vtime < s->share_floor)
		d->vtime = s->share_floor;
}

void sched_share_charge(struct sched *s, struct sdom *d, uint64_t measured_ns, uint64_t end_ns)
{
	double least = -1;

	if (d->p.class != SCHED_CLASS_NORMAL)
		return;
	d->vtime += (double)measured_ns / sched_weight(d);
	d->share_done_at = end_ns ? end_ns : 1;
	d->hold_credit += (double)measured_ns * SCHED_SHARE_HOLD_SHARE;
	if (d->hold_credit > (double)SCHED_SHARE_ANTICIPATE_MAX_NS)
		d->hold_credit = (double)SCHED_SHARE_ANTICIPATE_MAX_NS;
	/* The floor: the least virtual time of the active domains, never back. */
	for (int i = 0; i < s->n; i++) {
		const struct sdom *o = &s->d[i];

		if ((o == d || active(o, end_ns)) && o->p.class == SCHED_CLASS_NORMAL &&
		    (least < 0 || o->vtime < least))
			least = o->vtime;
	}
	if (least > s->share_floor)
		s->share_floor = least;
}

void sched_share_late(struct sdom *d, uint64_t ns)
{
	if (d->p.class == SCHED_CLASS_NORMAL)
		d->vtime += (double)ns / sched_weight(d);
}

bool sched_share_first(const struct sdom *a, const struct sdom *b)
{
	return a->p.class == SCHED_CLASS_NORMAL && b->p.class == SCHED_CLASS_NORMAL && a != b &&
	       a->vtime < b->vtime;
}

/*
 * How long to wait for behind domain @o's next group, in the way of @d's:
 * SCHED_SHARE_ANTICIPATE_NS, and as much more as @o is owed (its lag in
 * virtual time, at its weight), at most SCHED_SHARE_ANTICIPATE_MAX_NS; 0
 * when @o is not behind @d by SCHED_SHARE_SLACK_NS. A fixed wait let the
 * head unit's groups that came late (11 % after 1 ms, bench/displays)
 * give the rear seats their turns, and nothing gave them back: 2.75 to 1
 * for weights 3 to 1. Owed more, it is waited for longer, until it is not.
 */
static uint64_t wait_for(const struct sdom *d, const struct sdom *o)
{
	double owed = (d->vtime - o->vtime) * sched_weight(o) - (double)SCHED_SHARE_SLACK_NS;
	double w;

	if (owed <= 0)
		return 0;
	w = (double)SCHED_SHARE_ANTICIPATE_NS + owed;
	if (w > (double)SCHED_SHARE_ANTICIPATE_MAX_NS)
		w = (double)SCHED_SHARE_ANTICIPATE_MAX_NS;
	/* No longer than its hold credit lasts (the wait under way counts against it). */
	return w < o->hold_credit ? (uint64_t)w : (uint64_t)o->hold_credit;
}

int sched_share_holder(const struct sched *s, int dom, uint64_t now_ns)
{
	const struct sdom *d = &s->d[dom];

	if (d->p.class != SCHED_CLASS_NORMAL)
		return -1;
	for (int i = 0; i < s->n; i++) {
		const struct sdom *o = &s->d[i];

		if (i != dom && o->p.class == SCHED_CLASS_NORMAL &&
		    coming(o, now_ns, wait_for(d, o)))
			return i;
	}
	return -1;
}

bool sched_share_held(const struct sched *s, int dom, uint64_t now_ns)
{
	return sched_share_holder(s, dom, now_ns) >= 0;
}

void sched_share_hold(struct sdom *o, uint64_t now_ns)
{
	if (!o->share_held_since)
		o->share_held_since = now_ns;
}

uint64_t sched_share_next_event(const struct sched *s, uint64_t now_ns)
{
	uint64_t t = UINT64_MAX;

	for (int i = 0; i < s->n; i++) {
		const struct sdom *o = &s->d[i];

		for (int j = 0; j < s->n; j++) {
			uint64_t w = j == i ? 0 : wait_for(&s->d[j], o);

			if (w && coming(o, now_ns, w))
				t = MIN(t, o->share_done_at + w);
		}
	}
	return t;
}
