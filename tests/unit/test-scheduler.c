// SPDX-License-Identifier: MIT
/*
 * Tests of the scheduler (scheduler.h) on synthetic timelines: a mock GPU
 * here is just the times passed in. Admission by budget, replenishment,
 * debt, the check against an expected safety release, work-conserving
 * versus strict, oversize groups (run in a gap, or refused), set-budget
 * at a period boundary and its refusals, frames and deadline misses.
 *
 * Every test ends with finish(), which fails when any invariant of the
 * scheduler's state (enum sched_invariant) was found broken: the checks
 * stay silent in all of these runs. The tests at the end break the
 * invariants that can be broken through the API and see them counted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "scheduler/scheduler.h"

#define US 1000ull
#define MS 1000000ull
#define P  16667000ull /* 60 Hz */

/* What the warn callback was told last, and how often it was called. */
static struct {
	unsigned calls;
	enum sched_invariant inv;
	uint64_t count;
	char what[256];
} warned;

static void on_warn(void *data, enum sched_invariant inv, uint64_t count, const char *what)
{
	warned.calls++;
	warned.inv = inv;
	warned.count = count;
	snprintf(warned.what, sizeof(warned.what), "%s", what);
}

static struct sched *make(enum sched_policy policy, uint32_t max_inflight,
			  enum sched_oversize oversize)
{
	struct sched_params p = {.policy = policy,
				 .max_inflight = max_inflight,
				 .max_defer_ns = 100 * MS,
				 .oversize = oversize};
	struct sched *s = sched_create(&p, 0);

	assert_non_null(s);
	memset(&warned, 0, sizeof(warned));
	sched_set_warn(s, on_warn, NULL);
	return s;
}

/* Fails when an invariant of @s was found broken; destroys @s. */
/*
 * Every frame record left is one the trace can show: missed, or ended by
 * its deadline (2026-11-28: a frame rolled over from a carried one was
 * recorded with no end and not missed).
 */
static void frames_are_consistent(struct sched *s)
{
	struct sched_frame f[SCHED_FRAME_LOG];
	size_t n = sched_take_frames(s, f, SCHED_FRAME_LOG, NULL);

	for (size_t i = 0; i < n; i++) {
		if (f[i].deadline_ns > f[i].release_ns &&
		    (f[i].missed || (f[i].end_ns && f[i].end_ns <= f[i].deadline_ns)))
			continue;
		print_error("frame released at %llu ns, due %llu, ended %llu, %s\n",
			    (unsigned long long)f[i].release_ns,
			    (unsigned long long)f[i].deadline_ns, (unsigned long long)f[i].end_ns,
			    f[i].missed ? "missed" : "not missed");
		fail();
	}
}

static void finish(struct sched *s)
{
	frames_are_consistent(s);
	for (unsigned i = 0; i < SCHED_INV_COUNT; i++) {
		uint64_t n = sched_invariant_violations(s, (enum sched_invariant)i);

		if (n) {
			print_error("invariant %s broken %llu times, last: %s\n",
				    sched_invariant_name((enum sched_invariant)i),
				    (unsigned long long)n, warned.what);
			fail();
		}
	}
	assert_int_equal(warned.calls, 0);
	sched_destroy(s);
}

static int add(struct sched *s, enum sched_class class, uint64_t budget, bool strict)
{
	struct sched_domain_params d = {.class = class,
					.period_ns = P,
					.budget_ns = budget,
					.deadline_ns = P,
					.strict = strict};
	int i = sched_add_domain(s, &d, 0);

	assert_true(i >= 0);
	return i;
}

/* Polls at @now and returns how many were granted; their ids go to @ids. */
static size_t poll_ids(struct sched *s, uint64_t now, uint64_t *ids)
{
	struct sched_decision d[16];
	size_t n = sched_poll(s, now, d, 16);

	for (size_t i = 0; i < n; i++) {
		assert_int_equal(d[i].verdict, SCHED_GRANTED);
		if (ids)
			ids[i] = d[i].id;
	}
	return n;
}

static void stats(struct sched *s, int dom, struct sched_domain_stats *st)
{
	assert_int_equal(sched_domain_stats(s, dom, st), 0);
}

static void fifo_grants_in_arrival_order_up_to_max_inflight(void **state)
{
	struct sched *s = make(SCHED_POLICY_FIFO, 1, SCHED_OVERSIZE_RUN);
	int a = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), b = add(s, SCHED_CLASS_NORMAL, 0, true);
	uint64_t ids[16];

	assert_int_equal(sched_submit(s, 10, b, 50 * MS, 60 * MS, 0, 0), 0); /* over any budget */
	assert_int_equal(sched_submit(s, 11, a, 1 * MS, 2 * MS, 0, 1), 0);
	assert_int_equal(sched_submit(s, 11, a, 1 * MS, 2 * MS, 0, 1), -EINVAL); /* duplicate */
	assert_int_equal(sched_submit(s, 12, 7, 1 * MS, 2 * MS, 0, 1), -EINVAL); /* no domain */
	assert_int_equal(poll_ids(s, 2, ids), 1);
	assert_int_equal(ids[0], 10);
	assert_int_equal(poll_ids(s, 3, NULL), 0); /* one in flight */
	assert_int_equal(sched_complete(s, 10, 55 * MS, 55 * MS), 0);
	assert_int_equal(sched_complete(s, 10, 55 * MS, 55 * MS), -ENOENT);
	assert_int_equal(poll_ids(s, 55 * MS, ids), 1);
	assert_int_equal(ids[0], 11);
	finish(s);
}

/*
 * A config reload's new parameters rule the next decisions: a second slot
 * grants the group that waited for one; the policy changes; what
 * sched_create() refuses is refused and changes nothing.
 */
static void new_params_rule_the_next_decisions(void **state)
{
	struct sched *s = make(SCHED_POLICY_FIFO, 1, SCHED_OVERSIZE_RUN);
	int b = add(s, SCHED_CLASS_NORMAL, P, false);
	struct sched_params p;
	uint64_t ids[16];

	assert_int_equal(sched_submit(s, 1, b, 1 * MS, 2 * MS, 0, 0), 0);
	assert_int_equal(sched_submit(s, 2, b, 1 * MS, 2 * MS, 0, 0), 0);
	assert_int_equal(poll_ids(s, 1, ids), 1);
	assert_int_equal(poll_ids(s, 2, NULL), 0); /* one slot */
	sched_get_params(s, &p);
	p.max_inflight = 2;
	p.policy = SCHED_POLICY_BUDGET;
	assert_int_equal(sched_set_params(s, &p), 0);
	assert_int_equal(poll_ids(s, 3, ids), 1);
	assert_int_equal(ids[0], 2);
	p.oversize = (enum sched_oversize)99;
	assert_int_equal(sched_set_params(s, &p), -EINVAL);
	sched_get_params(s, &p);
	assert_int_equal(p.policy, SCHED_POLICY_BUDGET);
	assert_int_equal(p.oversize, SCHED_OVERSIZE_RUN);
	assert_int_equal(p.max_inflight, 2);
	assert_int_equal(sched_complete(s, 1, 1 * MS, 1 * MS), 0);
	assert_int_equal(sched_complete(s, 2, 1 * MS, 2 * MS), 0);
	finish(s);
}

static void a_group_needs_budget_for_its_bound(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int a = add(s, SCHED_CLASS_NORMAL, 4 * MS, false),
	    b = add(s, SCHED_CLASS_NORMAL, 8 * MS, false);
	struct sched_domain_stats st;
	uint64_t ids[16];

	assert_int_equal(sched_submit(s, 1, a, 2 * MS, 3 * MS, 0, 0), 0);
	assert_int_equal(poll_ids(s, 0, ids), 1);
	assert_int_equal(sched_complete(s, 1, 3 * MS, 3 * MS), 0);
	/* a has 1 ms left: its 3 ms group waits while b, with budget, has work. */
	assert_int_equal(sched_submit(s, 2, a, 2 * MS, 3 * MS, 0, 3 * MS), 0);
	assert_int_equal(sched_submit(s, 3, b, 2 * MS, 3 * MS, 0, 3 * MS + 1), 0);
	assert_int_equal(poll_ids(s, 3 * MS + 1, ids), 1);
	assert_int_equal(ids[0], 3);
	stats(s, a, &st);
	assert_int_equal(st.throttled, 1);
	assert_int_equal(st.remaining_ns, 1 * MS);
	assert_int_equal(st.used_ns, 3 * MS);
	assert_int_equal(st.predicted_ns, 2 * MS);
	finish(s);
}

static void an_idle_gpu_goes_to_whoever_waits_unless_strict(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int a = add(s, SCHED_CLASS_NORMAL, 1 * MS, false),
	    b = add(s, SCHED_CLASS_NORMAL, 1 * MS, true);
	struct sched_domain_stats st;
	uint64_t ids[16];

	/* Work-conserving: a's 5 ms group runs past its 1 ms budget on an idle GPU. */
	assert_int_equal(sched_submit(s, 1, a, 4 * MS, 5 * MS, 0, 0), 0);
	assert_int_equal(poll_ids(s, 0, ids), 1);
	assert_int_equal(sched_complete(s, 1, 5 * MS, 5 * MS), 0);
	stats(s, a, &st);
	assert_int_equal(st.remaining_ns, -4 * (int64_t)MS);
	assert_int_equal(st.overruns, 1);
	/* Strict: b's waits for a budget large enough, even on an idle GPU. */
	assert_int_equal(sched_submit(s, 2, b, 4 * MS, 5 * MS, 0, 6 * MS), 0);
	assert_int_equal(poll_ids(s, 6 * MS, NULL), 0);
	assert_int_equal(poll_ids(s, P + 1, NULL), 0); /* 1 ms per period never fits 5 ms */
	stats(s, b, &st);
	assert_int_equal(st.throttled, 1);
	assert_int_equal(st.pending, 1);
	/* Never enough: after max_defer (106 ms) it runs with a whole period's budget. */
	assert_int_equal(poll_ids(s, 105 * MS, NULL), 0);
	assert_int_equal(poll_ids(s, 106 * MS, NULL), 1);
	finish(s);
}

static void budgets_replenish_and_overruns_become_debt(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int a = add(s, SCHED_CLASS_NORMAL, 4 * MS, true);
	struct sched_domain_stats st;

	assert_int_equal(sched_submit(s, 1, a, 2 * MS, 3 * MS, 0, 0), 0);
	assert_int_equal(poll_ids(s, 0, NULL), 1);
	assert_int_equal(sched_complete(s, 1, 7 * MS, 7 * MS), 0); /* measured, not predicted */
	stats(s, a, &st);
	assert_int_equal(st.remaining_ns, -3 * (int64_t)MS);
	assert_int_equal(st.overruns, 1);
	sched_advance(s, P);
	stats(s, a, &st);
	assert_int_equal(st.debt_ns, 3 * MS);
	assert_int_equal(st.remaining_ns, 1 * MS);
	assert_int_equal(st.used_ns, 0);
	assert_int_equal(st.used_last_period_ns, 7 * MS);
	assert_int_equal(st.period_start_ns, P);
	/* The debt is paid after one period: full budget again, even after a long idle stretch. */
	sched_advance(s, 10 * P + 5);
	stats(s, a, &st);
	assert_int_equal(st.debt_ns, 0);
	assert_int_equal(st.remaining_ns, 4 * MS);
	assert_int_equal(st.period_start_ns, 10 * P);
	finish(s);
}

/* One frame of safety domain @c: a group of bound @bound released at @t, done @took later. */
static void safety_frame(struct sched *s, int c, uint64_t id, uint64_t t, uint64_t bound,
			 uint64_t took)
{
	uint64_t ids[16];

	assert_int_equal(sched_submit(s, id, c, bound / 2, bound, 0, t), 0);
	assert_int_equal(poll_ids(s, t, ids), 1);
	assert_int_equal(ids[0], id);
	assert_int_equal(sched_complete(s, id, took, t + took), 0);
}

/*
 * Normal domain @n submits a 14 ms group @big and a 3 ms group @small at
 * @t, while a safety frame is due now: only @small runs (and completes in
 * 2 ms); @big still waits.
 */
static void only_the_small_group_fits(struct sched *s, int n, uint64_t big, uint64_t small,
				      uint64_t t)
{
	uint64_t ids[16];

	assert_int_equal(sched_submit(s, big, n, 10 * MS, 14 * MS, 0, t), 0);
	assert_int_equal(sched_submit(s, small, n, 2 * MS, 3 * MS, 0, t), 0);
	assert_int_equal(poll_ids(s, t, ids), 1);
	assert_int_equal(ids[0], small);
	assert_int_equal(sched_complete(s, small, 2 * MS, t + 2 * MS), 0);
}

/*
 * Policy budget with a safety domain *@c (budget 4 ms) that has had four
 * frames, released every P, each one group bounded 2 ms that took 1 ms,
 * and a normal domain *@n (budget P).
 */
static struct sched *cluster_after_four_frames(int *c, int *n)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);

	*c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	*n = add(s, SCHED_CLASS_NORMAL, P, false);
	for (int k = 0; k < 4; k++)
		safety_frame(s, *c, 100 + (uint64_t)k, (uint64_t)k * P, 2 * MS, 1 * MS);
	return s;
}

static void a_group_that_would_delay_the_next_safety_frame_waits(void **state)
{
	int c, n;
	struct sched *s = cluster_after_four_frames(&c, &n);
	struct sched_domain_stats st;
	uint64_t ids[16];

	/* Frame 3 released at 3P, done at 3P + 1 ms; the next is expected at 4P (deadline 5P). */
	const uint64_t t = 3 * P + 4 * MS;

	/* 28 ms + the cluster's 2 ms would end after 5P: wait. 25 ms fits. */
	assert_int_equal(sched_submit(s, 1, n, 20 * MS, 28 * MS, 0, t), 0);
	assert_int_equal(poll_ids(s, t, NULL), 0);
	assert_int_equal(sched_submit(s, 2, n, 20 * MS, 25 * MS, 0, t + 1), 0);
	assert_int_equal(poll_ids(s, t + 1, ids), 1);
	assert_int_equal(ids[0], 2);
	stats(s, n, &st);
	assert_int_equal(st.throttled, 1);
	/* Meanwhile the cluster's next frame arrives; it goes first once the GPU is free. */
	assert_int_equal(sched_submit(s, 104, c, 1 * MS, 2 * MS, 0, 4 * P), 0);
	assert_int_equal(sched_complete(s, 2, 24 * MS, t + 1 + 24 * MS), 0);
	assert_int_equal(poll_ids(s, t + 1 + 24 * MS, ids), 1);
	assert_int_equal(ids[0], 104);
	assert_int_equal(sched_complete(s, 104, 1 * MS, t + 2 + 25 * MS), 0);
	/* 28 ms from now would still end too close to the deadline of the frame due at 5P... */
	assert_int_equal(poll_ids(s, t + 3 + 25 * MS, NULL), 0);
	/* ...but right after that frame it fits before the one due at 6P. */
	safety_frame(s, c, 105, 5 * P, 2 * MS, 1 * MS);
	assert_int_equal(poll_ids(s, 5 * P + 1 * MS, ids), 1);
	assert_int_equal(ids[0], 1);
	stats(s, c, &st);
	assert_int_equal(st.deadline_misses, 0);
	assert_int_equal(st.frame_cost_ns, 2 * MS);
	finish(s);
}

/* A frame completed late in its period, right before the next release: two frames, in time. */
static void the_next_release_starts_a_new_frame_even_without_a_gap(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	struct sched_domain_stats st;

	safety_frame(s, c, 100, 0, 2 * MS, 15 * MS); /* done at 15 ms */
	safety_frame(s, c, 101, P, 2 * MS, 1 * MS);  /* 1.7 ms later: no idle gap */
	sched_advance(s, P + 1 * MS + SCHED_FRAME_GAP_NS);
	stats(s, c, &st);
	assert_int_equal(st.frames, 2);
	assert_int_equal(st.deadline_misses, 0);
	finish(s);
}

/*
 * A frame that reaches us late (its client was slow to encode it) does not
 * move the next expected release by as much: the next frame may come on
 * time again.
 */
static void a_late_arrival_does_not_push_the_next_release_back(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false);
	const uint64_t t = P + 3 * MS + 1500 * US;

	safety_frame(s, c, 100, 0, 2 * MS, 1 * MS);
	safety_frame(s, c, 101, P + 3 * MS, 2 * MS, 1 * MS); /* 3 ms late */
	/*
	 * Expected next: about 2P, not 2P + 3 ms. 28 ms from t, plus the
	 * cluster's 2 ms, ends after 3P: it must wait.
	 */
	assert_int_equal(sched_submit(s, 1, n, 28 * MS, 28 * MS, 0, t), 0);
	assert_int_equal(poll_ids(s, t, NULL), 0);
	finish(s);
}

/*
 * A safety domain's guard keeps that much more time free before its
 * frame's latest start: the 25 ms group that fits above waits with a 3 ms
 * guard; a 22 ms one fits.
 */
static void a_guard_keeps_room_for_overruns(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	struct sched_domain_params cp = {.class = SCHED_CLASS_SAFETY,
					 .period_ns = P,
					 .budget_ns = 4 * MS,
					 .deadline_ns = P,
					 .guard_ns = 3 * MS};
	int c = sched_add_domain(s, &cp, 0), n = add(s, SCHED_CLASS_NORMAL, P, false);
	const uint64_t t = 3 * P + 4 * MS;
	uint64_t ids[16];
	char why[128];

	for (int k = 0; k < 4; k++)
		safety_frame(s, c, 100 + (uint64_t)k, (uint64_t)k * P, 2 * MS, 1 * MS);
	assert_int_equal(sched_submit(s, 1, n, 20 * MS, 25 * MS, 0, t), 0);
	assert_int_equal(poll_ids(s, t, NULL), 0);
	assert_int_equal(sched_submit(s, 2, n, 20 * MS, 22 * MS, 0, t + 1), 0);
	assert_int_equal(poll_ids(s, t + 1, ids), 1);
	assert_int_equal(ids[0], 2);
	/* A deadline no longer than the guard is refused. */
	assert_int_equal(sched_set_budget(s, c, P, 2 * MS, 3 * MS, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "guard"));
	cp.guard_ns = P;
	assert_int_equal(sched_add_domain(s, &cp, 0), -EINVAL);
	finish(s);
}

/*
 * A frame that has as many groups as its recent frames had, all of them
 * started, is done: the GPU goes to others at once, even when this
 * frame's bounds sum to less than the typical frame's.
 */
static void a_frame_with_its_usual_groups_leaves_the_gpu_at_once(void **state)
{
	int c, n;
	struct sched *s = cluster_after_four_frames(&c, &n);
	uint64_t ids[16];

	/* This frame's one group is bounded below C = 2 ms. */
	safety_frame(s, c, 104, 4 * P, 1500 * US, 1 * MS);
	/* 18 ms from 4P + 1 ms ends past this frame's deadline, but the frame is done. */
	assert_int_equal(sched_submit(s, 1, n, 15 * MS, 18 * MS, 0, 4 * P + 1 * MS), 0);
	assert_int_equal(poll_ids(s, 4 * P + 1 * MS, ids), 1);
	assert_int_equal(ids[0], 1);
	finish(s);
}

/*
 * Frames of one group and now and then two: a frame whose first group ran
 * long keeps room for its second, so a normal group that would delay it
 * past the deadline waits until it has arrived and started.
 */
static void a_frame_short_of_its_groups_keeps_room_for_one_more(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false);
	struct sched_domain_stats st;
	const uint64_t r = 4 * P;
	uint64_t ids[16];

	for (int k = 0; k < 3; k++)
		safety_frame(s, c, 100 + (uint64_t)k, (uint64_t)k * P, 1 * MS, 500 * US);
	safety_frame(s, c, 103, 3 * P, 1 * MS, 500 * US);
	safety_frame(s, c, 104, 3 * P + 700 * US, 300 * US, 200 * US);
	/* The first group of the next frame is bounded 1 ms and takes 7 ms. */
	safety_frame(s, c, 105, r, 1 * MS, 7 * MS);
	assert_int_equal(sched_submit(s, 1, n, 8 * MS, 9 * MS, 0, r + 7 * MS), 0);
	assert_int_equal(poll_ids(s, r + 7 * MS, NULL), 0);
	/* Its second group comes, runs, and then the normal group may start. */
	safety_frame(s, c, 106, r + 7500 * US, 300 * US, 200 * US);
	assert_int_equal(poll_ids(s, r + 7700 * US, ids), 1);
	assert_int_equal(ids[0], 1);
	assert_int_equal(sched_complete(s, 1, 8 * MS, r + 15700 * US), 0);
	sched_advance(s, r + 15700 * US + SCHED_FRAME_GAP_NS);
	stats(s, c, &st);
	assert_int_equal(st.frames, 5);
	assert_int_equal(st.deadline_misses, 0);
	finish(s);
}

/*
 * A frame whose group runs past the next release is rolled over: the
 * group carried over is the old frame's, so the new frame still expects
 * its own group and keeps room for it.
 */
static void a_rolled_over_frame_still_expects_its_own_group(void **state)
{
	int c, n;
	struct sched *s = cluster_after_four_frames(&c, &n);
	struct sched_domain_stats st;
	uint64_t ids[16];

	/* Frame 4's group takes 18 ms: it is still running at the next release, 5P. */
	safety_frame(s, c, 104, 4 * P, 2 * MS, 18 * MS);
	assert_int_equal(sched_submit(s, 1, n, 15 * MS, 18 * MS, 0, 5 * P + 1500 * US), 0);
	assert_int_equal(poll_ids(s, 5 * P + 1500 * US, NULL), 0);
	safety_frame(s, c, 105, 5 * P + 1600 * US, 2 * MS, 1 * MS);
	assert_int_equal(poll_ids(s, 5 * P + 2700 * US, ids), 1);
	assert_int_equal(ids[0], 1);
	assert_int_equal(sched_complete(s, 1, 15 * MS, 5 * P + 17700 * US), 0);
	sched_advance(s, 5 * P + 17700 * US + SCHED_FRAME_GAP_NS);
	stats(s, c, &st);
	/* Frame 4 only, late alone in the cluster's start-up: counted apart. */
	assert_int_equal(st.frames + st.startup_frames, 6);
	assert_int_equal(st.startup_frames, 1);
	assert_int_equal(st.deadline_misses, 0);
	finish(s);
}

/*
 * A release that came 1 ms earlier than expected makes the scheduler
 * expect the next ones up to that much early: a group that would end
 * 1.5 ms before the next frame must start is granted after regular
 * releases and waits after the early one.
 */
static bool granted_after_releases(const uint64_t *release, uint64_t bound)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false);
	bool granted;

	for (int k = 0; k < 4; k++)
		safety_frame(s, c, 100 + (uint64_t)k, release[k], 2 * MS, 1 * MS);
	assert_int_equal(sched_submit(s, 1, n, bound / 2, bound, 0, 3 * P + 4 * MS), 0);
	granted = poll_ids(s, 3 * P + 4 * MS, NULL) == 1;
	finish(s);
	return granted;
}

static void an_early_release_makes_the_next_expected_earlier(void **state)
{
	const uint64_t regular[4] = {0, P, 2 * P, 3 * P};
	const uint64_t one_early[4] = {0, P, 2 * P - 1 * MS, 3 * P};
	/* Ends 1.5 ms before 5P - C (the next frame's deadline less its cost) after regular
	 * releases. */
	const uint64_t bound = 5 * P - 2 * MS - 1500 * US - (3 * P + 4 * MS);

	assert_true(granted_after_releases(regular, bound));
	assert_false(granted_after_releases(one_early, bound));
}

/*
 * The grant board's offer: only while nothing waits and a slot is free
 * (or for after the groups in flight), with per domain the largest bound
 * that passes the checks for the whole span; a claimed group is in flight
 * at once.
 */
static void the_offer_holds_the_checks_for_its_whole_span(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false),
	    strict = add(s, SCHED_CLASS_NORMAL, 3 * MS, true);
	const uint64_t t = 3 * P + 4 * MS;
	struct sched_domain_stats st;
	uint64_t b[3], ids[16];

	for (int k = 0; k < 4; k++)
		safety_frame(s, c, 100 + (uint64_t)k, (uint64_t)k * P, 2 * MS, 1 * MS);
	assert_true(sched_offer(s, t, t + 2 * MS, false, b));
	/* Next release 4P, deadline 5P, C = 2 ms, the GPU free until t + 2 ms at the latest. */
	assert_int_equal(b[n], 5 * P - 2 * MS - (t + 2 * MS));
	assert_int_equal(b[strict], 3 * MS); /* its budget */
	assert_true(b[c] == UINT64_MAX);     /* nothing to protect from the cluster itself */
	/* A group that took it is in flight at once; the slot is then taken... */
	assert_int_equal(sched_claim(s, 1, n, b[n] / 2, b[n], 0, t + 1 * MS), 0);
	stats(s, n, &st);
	assert_int_equal(st.inflight, 1);
	assert_false(sched_offer(s, t + 1 * MS, t + 3 * MS, false, b));
	/* ...except for after it, counting its bound as GPU time ahead. */
	assert_true(sched_offer(s, t + 1 * MS, t + 3 * MS, true, b));
	/* It took the whole room 1 ms into the span, so 1 ms is left. */
	assert_int_equal(b[n], 1 * MS);
	/* A request waiting: no offer; it is decided by polling. */
	assert_int_equal(sched_complete(s, 1, 5 * MS, t + 6 * MS), 0);
	assert_int_equal(sched_submit(s, 2, n, 1 * MS, 2 * MS, 0, t + 6 * MS), 0);
	assert_false(sched_offer(s, t + 6 * MS, t + 8 * MS, false, b));
	assert_int_equal(poll_ids(s, t + 6 * MS, ids), 1);
	assert_int_equal(sched_complete(s, 2, 1 * MS, t + 7 * MS), 0);
	stats(s, n, &st);
	assert_int_equal(st.groups, 2);
	finish(s);
}

/*
 * Releases come 1 ms early, so the frame rolls over one observed period
 * (about P - 1 ms) after its release, while its group still runs; the
 * group completes before the deadline (P), so the frame is in time.
 */
static void a_frame_rolled_over_before_its_deadline_is_judged_when_done(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	const uint64_t every = P - 1 * MS;
	struct sched_domain_stats st;

	for (int k = 0; k < 40; k++)
		safety_frame(s, c, 100 + (uint64_t)k, (uint64_t)k * every, 2 * MS, 1 * MS);
	stats(s, c, &st);
	assert_true(st.observed_period_ns < P - 500 * US);
	safety_frame(s, c, 200, 40 * every, 2 * MS, P - 300 * US);
	sched_advance(s, 40 * every + 3 * P);
	stats(s, c, &st);
	assert_int_equal(st.deadline_misses, 0);
	finish(s);
}

/* A group of unknown cost (bound 0: no model yet) waits for the start of a safety gap. */
static void a_group_of_unknown_cost_starts_only_in_a_safety_gap(void **state)
{
	int c, n;
	struct sched *s = cluster_after_four_frames(&c, &n);
	uint64_t ids[16];

	/* 3 ms after the last frame ended: not a gap's start. */
	assert_int_equal(sched_submit(s, 1, n, 0, 0, 0, 3 * P + 4 * MS), 0);
	assert_int_equal(poll_ids(s, 3 * P + 4 * MS, NULL), 0);
	/* Right after the next frame: it starts. */
	safety_frame(s, c, 104, 4 * P, 2 * MS, 1 * MS);
	assert_int_equal(poll_ids(s, 4 * P + 1 * MS, ids), 1);
	assert_int_equal(ids[0], 1);
	finish(s);
}

/*
 * A young context's group (its bound the 40 ms a shader compile took, no
 * learned bound yet) is placed like one of unknown cost: at the next
 * safety gap's start, not after max_defer as an oversize group; the same
 * group with a learned bound, oversize by its bound alone, starts at a
 * gap's start too, the one after (one group at a time).
 */
static void a_young_group_starts_at_the_next_gap_start(void **state)
{
	int c, n;
	struct sched *s = cluster_after_four_frames(&c, &n);
	uint64_t ids[16];

	assert_int_equal(sched_submit(s, 1, n, 10 * MS, 40 * MS, SCHED_YOUNG, 3 * P + 4 * MS), 0);
	assert_int_equal(sched_submit(s, 2, n, 10 * MS, 40 * MS, 0, 3 * P + 4 * MS), 0);
	assert_int_equal(poll_ids(s, 3 * P + 4 * MS, NULL), 0); /* not a gap's start */
	safety_frame(s, c, 104, 4 * P, 2 * MS, 1 * MS);
	assert_int_equal(poll_ids(s, 4 * P + 1 * MS, ids), 1);
	assert_int_equal(ids[0], 1);
	assert_int_equal(sched_complete(s, 1, 10 * MS, 4 * P + 11 * MS), 0);
	/* The other is oversize by its bound: not in the middle of a gap... */
	assert_int_equal(poll_ids(s, 4 * P + 11 * MS, NULL), 0);
	/* ...but at the next gap's start, long before max_defer. */
	safety_frame(s, c, 105, 5 * P, 2 * MS, 1 * MS);
	assert_int_equal(poll_ids(s, 5 * P + 1 * MS, ids), 1);
	assert_int_equal(ids[0], 2);
	finish(s);
}

/*
 * A safety group whose bound is above its domain's budget (a noisy stretch
 * widened it: 6 ms against 4 ms per period) runs on an idle GPU when the
 * only other group waiting is a young one, which may start only in a
 * safety gap: before, each waited for the other, the GPU idle, and the
 * safety frame missed its deadline (bench/faults, display-flood).
 */
/*
 * A group of domain n (@predicted, @bound, @flags) waits while a safety
 * frame completes @took after its release: not granted right after it,
 * granted right after the next frame, which takes 1 ms.
 */
static void starts_after_the_gap_of_a_late_frame(uint64_t predicted, uint64_t bound, unsigned flags,
						 uint64_t took)
{
	int c, n;
	struct sched *s = cluster_after_four_frames(&c, &n);
	uint64_t ids[16];

	assert_int_equal(sched_submit(s, 1, n, predicted, bound, flags, 3 * P + 4 * MS), 0);
	safety_frame(s, c, 104, 4 * P, 2 * MS, took);
	assert_int_equal(poll_ids(s, 4 * P + took, NULL), 0);
	safety_frame(s, c, 105, 5 * P, 2 * MS, 1 * MS);
	assert_int_equal(poll_ids(s, 5 * P + 1 * MS, ids), 1);
	assert_int_equal(ids[0], 1);
	finish(s);
}

/*
 * ... where its likely cost fits: after a safety frame that completed 8 ms
 * after its release, a young group predicted 22 ms (bound 30 ms: 26 ms
 * likely) would end past the next frame's latest start (its prediction
 * would not); it waits for the next gap's start.
 */
static void a_young_group_starts_at_a_gap_start_where_its_likely_cost_fits(void **state)
{
	starts_after_the_gap_of_a_late_frame(22 * MS, 30 * MS, SCHED_YOUNG, 8 * MS);
}

static void a_safety_group_over_budget_does_not_wait_for_a_young_group(void **state)
{
	int c, n;
	struct sched *s = cluster_after_four_frames(&c, &n);
	uint64_t ids[16];

	assert_int_equal(sched_submit(s, 1, n, 1 * MS, 2 * MS, SCHED_YOUNG, 3 * P + 4 * MS), 0);
	assert_int_equal(poll_ids(s, 3 * P + 4 * MS, NULL), 0); /* not a gap's start */
	assert_int_equal(sched_submit(s, 104, c, 2 * MS, 6 * MS, 0, 4 * P), 0);
	assert_int_equal(poll_ids(s, 4 * P, ids), 1);
	assert_int_equal(ids[0], 104);
	assert_int_equal(sched_complete(s, 104, 2 * MS, 4 * P + 2 * MS), 0);
	/* And the young group at the gap's start that follows. */
	assert_int_equal(poll_ids(s, 4 * P + 2 * MS, ids), 1);
	assert_int_equal(ids[0], 1);
	finish(s);
}

/*
 * A young group of a strict domain predicted above the domain's whole
 * budget (a shader compile the memo remembers from the last start: 30 ms
 * against 8 ms per period) runs with a whole period's budget at a gap's
 * start; it used to wait for budget a strict domain never has.
 */
static void a_young_group_predicted_over_a_strict_budget_runs(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false),
	    n = add(s, SCHED_CLASS_NORMAL, 8 * MS, true);
	uint64_t ids[16];

	for (int k = 0; k < 4; k++)
		safety_frame(s, c, 100 + (uint64_t)k, (uint64_t)k * P, 2 * MS, 1 * MS);
	assert_int_equal(sched_submit(s, 1, n, 30 * MS, 30 * MS, SCHED_YOUNG, 3 * P + 4 * MS), 0);
	assert_int_equal(poll_ids(s, 3 * P + 4 * MS, NULL), 0);
	safety_frame(s, c, 104, 4 * P, 2 * MS, 1 * MS);
	assert_int_equal(poll_ids(s, 4 * P + 1 * MS, ids), 1);
	assert_int_equal(ids[0], 1);
	finish(s);
}

/* A lone group @id of safety domain @c at @t that takes a period and 1 ms; then 4 periods idle. */
static void late_lone_group(struct sched *s, int c, uint64_t id, uint64_t t, unsigned flags)
{
	assert_int_equal(sched_submit(s, id, c, 1 * MS, 2 * MS, flags, t), 0);
	assert_int_equal(poll_ids(s, t, NULL), 1);
	assert_int_equal(sched_complete(s, id, P + 1 * MS, t + P + 1 * MS), 0);
	sched_advance(s, t + 4 * P);
}

/*
 * A safety client's teardown (shader and state destroys after its last
 * frame, no drawing) is no frame: not counted, and not a miss even when
 * it completes past what would be its deadline.
 */
static void a_run_of_groups_without_output_is_no_frame(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	struct sched_domain_stats st;

	for (int k = 0; k < 4; k++)
		safety_frame(s, c, 100 + (uint64_t)k, (uint64_t)k * P, 2 * MS, 1 * MS);
	late_lone_group(s, c, 1, 4 * P, SCHED_NO_OUTPUT);
	stats(s, c, &st);
	assert_int_equal(st.frames, 4);
	assert_int_equal(st.deadline_misses, 0);
	/* The same late group with output is a frame, and a miss (or more) past its start-up. */
	late_lone_group(s, c, 2, SCHED_STARTUP_PERIODS * P, 0);
	stats(s, c, &st);
	assert_true(st.frames >= 5);
	assert_true(st.deadline_misses >= 1);
	finish(s);
}

/*
 * A frame whose drawing completed in time is no miss when a group without
 * output that joined it (the client's teardown, right after its last
 * frame) waits past the deadline behind another domain's long group.
 */
static void a_frame_drawn_in_time_is_no_miss_when_its_teardown_waits(void **state)
{
	int c, n;
	struct sched *s = cluster_after_four_frames(&c, &n);
	struct sched_domain_stats st;
	uint64_t ids[16];

	assert_int_equal(sched_submit(s, 104, c, 1 * MS, 2 * MS, 0, 4 * P), 0);
	assert_int_equal(poll_ids(s, 4 * P, ids), 1);
	assert_int_equal(sched_complete(s, 104, 1 * MS, 4 * P + 1 * MS), 0);
	assert_int_equal(sched_submit(s, 1, n, 14 * MS, 14 * MS, 0, 4 * P + 1 * MS), 0);
	assert_int_equal(poll_ids(s, 4 * P + 1 * MS, ids), 1);
	assert_int_equal(ids[0], 1);
	assert_int_equal(
	    sched_submit(s, 2, c, MS / 10, MS / 5, SCHED_NO_OUTPUT, 4 * P + 3 * MS / 2), 0);
	/* The long group overruns: the teardown waits past the frame's deadline. */
	assert_int_equal(sched_complete(s, 1, 20 * MS, 4 * P + 21 * MS), 0);
	assert_int_equal(poll_ids(s, 4 * P + 21 * MS, ids), 1);
	assert_int_equal(ids[0], 2);
	assert_int_equal(sched_complete(s, 2, MS / 10, 4 * P + 21 * MS + MS / 10), 0);
	sched_advance(s, 8 * P);
	stats(s, c, &st);
	assert_int_equal(st.frames, 5);
	assert_int_equal(st.deadline_misses, 0);
	finish(s);
}

static void a_late_frame_counts_as_a_deadline_miss(void **state)
{
	struct sched *s = make(SCHED_POLICY_FIFO, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false);
	struct sched_domain_stats st;
	uint64_t ids[16];

	safety_frame(s, c, 100, 0, 2 * MS, 1 * MS);
	/* fifo lets a 30 ms group run first: the next frame completes 14 ms past its deadline. */
	assert_int_equal(sched_submit(s, 1, n, 30 * MS, 30 * MS, 0, P - 1), 0);
	assert_int_equal(poll_ids(s, P - 1, NULL), 1);
	assert_int_equal(sched_submit(s, 101, c, 1 * MS, 2 * MS, 0, P), 0);
	assert_int_equal(poll_ids(s, P, NULL), 0);
	assert_int_equal(sched_complete(s, 1, 30 * MS, P - 1 + 30 * MS), 0);
	assert_int_equal(poll_ids(s, P + 30 * MS, ids), 1);
	assert_int_equal(sched_complete(s, 101, 1 * MS, P + 31 * MS), 0);
	/*
	 * The second frame was still waiting a period after its release: it
	 * was closed then, late; what remained of it makes a third frame,
	 * released at 2P, over after an idle gap and in time.
	 */
	stats(s, c, &st);
	assert_int_equal(st.frames, 2);
	assert_int_equal(st.deadline_misses, 1);
	sched_advance(s, P + 31 * MS + SCHED_FRAME_GAP_NS);
	stats(s, c, &st);
	assert_int_equal(st.frames, 3);
	assert_int_equal(st.deadline_misses, 1);
	finish(s);
}

/* Every closed frame is logged for the trace: release, deadline, end, late or not. */
static void closed_frames_are_logged_for_the_trace(void **state)
{
	struct sched *s = make(SCHED_POLICY_FIFO, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false);
	struct sched_frame f[8];
	uint64_t dropped = 99;

	safety_frame(s, c, 100, 0, 2 * MS, 1 * MS);
	assert_int_equal(sched_submit(s, 1, n, 30 * MS, 30 * MS, 0, P - 1), 0);
	assert_int_equal(poll_ids(s, P - 1, NULL), 1);
	assert_int_equal(sched_submit(s, 101, c, 1 * MS, 2 * MS, 0, P), 0);
	assert_int_equal(sched_complete(s, 1, 30 * MS, P - 1 + 30 * MS), 0);
	assert_int_equal(poll_ids(s, P + 30 * MS, NULL), 1);
	assert_int_equal(sched_complete(s, 101, 1 * MS, P + 31 * MS), 0);
	sched_advance(s, P + 31 * MS + SCHED_FRAME_GAP_NS);

	assert_int_equal(sched_take_frames(s, f, 8, &dropped), 3);
	assert_int_equal(dropped, 0);
	/* In time: released at 0, done at 1 ms. */
	assert_int_equal(f[0].domain, c);
	assert_false(f[0].missed);
	assert_int_equal(f[0].release_ns, 0);
	assert_int_equal(f[0].end_ns, 1 * MS);
	assert_int_equal(f[0].deadline_ns, P);
	assert_int_equal(f[0].bound_ns, 2 * MS);
	/* Still waiting a period after its release: unfinished, missed. */
	assert_true(f[1].missed);
	assert_int_equal(f[1].release_ns, P);
	assert_int_equal(f[1].end_ns, 0);
	assert_false(f[2].missed);
	/* Taken frames are gone. */
	assert_int_equal(sched_take_frames(s, f, 8, NULL), 0);
	finish(s);
}

/*
 * A safety client's start-up (its context set-up and first draws, 40 ms
 * alone here, then a frame late while it catches up) leaves frames late
 * in its first SCHED_STARTUP_PERIODS: logged as its start-up and counted
 * apart, not judged. Past the window a late frame is judged, alone or
 * not. A context made after silence starts another start-up; a frame of
 * it that another domain's group crossed is judged all the same.
 */
static void a_safety_domain_s_start_up_alone_is_not_judged(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false);
	uint64_t t, ids[16], window = SCHED_STARTUP_PERIODS * P;
	struct sched_domain_stats st;
	struct sched_frame f[16];
	size_t nf;

	(void)state;
	assert_true(sched_expect_frames(s, c, 0));
	assert_int_equal(sched_submit(s, 100, c, 1 * MS, 2 * MS, 0, 0), 0);
	assert_int_equal(poll_ids(s, 0, NULL), 1);
	sched_advance(s, P);
	sched_advance(s, 2 * P);
	assert_int_equal(sched_complete(s, 100, 40 * MS, 40 * MS), 0);
	safety_frame(s, c, 101, 41 * MS, 2 * MS, 3 * MS);
	safety_frame(s, c, 102, 3 * P, 2 * MS, P + 1 * MS); /* catching up: late, alone */
	for (uint64_t k = 5; k < 8; k++)
		safety_frame(s, c, 100 + k, k * P, 2 * MS, 3 * MS);
	sched_advance(s, 8 * P);
	stats(s, c, &st);
	assert_int_equal(st.startup_frames, 3);
	assert_int_equal(st.deadline_misses, 0);
	nf = sched_take_frames(s, f, 16, NULL);
	for (size_t i = 0; i < nf; i++)
		assert_int_equal(f[i].startup, f[i].missed);
	/* Past the window, the same late frame alone is judged. */
	safety_frame(s, c, 108, window, 2 * MS, P + 1 * MS);
	sched_advance(s, window + 4 * P);
	stats(s, c, &st);
	assert_int_equal(st.startup_frames, 3);
	assert_int_equal(st.deadline_misses, 1);
	assert_int_equal(st.misses_alone, 1);
	/* Silent, then a new context: another start-up, its late frame alone not judged. */
	t = 4 * window;
	assert_true(sched_expect_frames(s, c, t));
	safety_frame(s, c, 109, t, 2 * MS, P + 1 * MS);
	sched_advance(s, t + 4 * P);
	stats(s, c, &st);
	assert_int_equal(st.startup_frames, 4);
	assert_int_equal(st.deadline_misses, 1);
	/* In the same start-up, a normal group (a claim) runs 30 ms beside its frame: judged. */
	t += 10 * P;
	assert_int_equal(sched_claim(s, 1, n, 30 * MS, 30 * MS, 0, t), 0);
	assert_int_equal(sched_submit(s, 110, c, 1 * MS, 2 * MS, 0, t + 1 * MS), 0);
	assert_int_equal(poll_ids(s, t + 1 * MS, NULL), 0);
	assert_int_equal(sched_complete(s, 1, 30 * MS, t + 30 * MS), 0);
	assert_int_equal(poll_ids(s, t + 30 * MS, ids), 1);
	assert_int_equal(ids[0], 110);
	assert_int_equal(sched_complete(s, 110, 1 * MS, t + 31 * MS), 0);
	sched_advance(s, t + 4 * P);
	stats(s, c, &st);
	assert_int_equal(st.startup_frames, 4);
	assert_true(st.deadline_misses >= 2);
	assert_int_equal(st.misses_alone, 1);
	finish(s);
}

/* Nobody takes the frames: the oldest are dropped and counted, memory stays bounded. */
static void untaken_frames_are_dropped_oldest_first(void **state)
{
	struct sched *s = make(SCHED_POLICY_FIFO, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	struct sched_frame f[SCHED_FRAME_LOG];
	uint64_t dropped = 0;

	for (uint64_t i = 0; i < SCHED_FRAME_LOG + 10; i++)
		safety_frame(s, c, 100 + i, i * P, 2 * MS, 1 * MS);
	sched_advance(s, (SCHED_FRAME_LOG + 10) * P);
	assert_int_equal(sched_take_frames(s, f, SCHED_FRAME_LOG, &dropped), SCHED_FRAME_LOG);
	assert_int_equal(dropped, 10);
	assert_int_equal(f[0].release_ns, 10 * P);
	finish(s);
}

/*
 * Frames of safety domain @c (bound @bound, 1 ms each) at P, 2P, ... while
 * before @until, with nothing granted just before each release; returns
 * the index of the next frame.
 */
static uint64_t frames_while_waiting(struct sched *s, int c, uint64_t until, uint64_t bound)
{
	uint64_t k;

	for (k = 1; k * P < until; k++) {
		assert_int_equal(poll_ids(s, k * P - 1, NULL), 0);
		safety_frame(s, c, 100 + k, k * P, bound, 1 * MS);
	}
	return k;
}

/* A group larger than any gap waits max_defer, then runs at the start of a gap. */
static void an_oversize_group_runs_in_a_gap_after_max_defer(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false);
	struct sched_domain_stats st;
	uint64_t ids[16], k;

	safety_frame(s, c, 100, 0, 2 * MS, 1 * MS);
	assert_int_equal(sched_submit(s, 1, n, 40 * MS, 40 * MS, 0, 2 * MS), 0);
	k = frames_while_waiting(s, c, 102 * MS, 2 * MS);
	stats(s, n, &st);
	assert_int_equal(st.throttled, 1);
	assert_int_equal(st.pending, 1);
	assert_true(sched_next_event(s, 101 * MS) <= 102 * MS);
	/* Past max_defer (100 ms after 2 ms), but in the middle of a gap: still waiting. */
	assert_int_equal(poll_ids(s, 105 * MS, NULL), 0);
	/* Right after the next frame, at the start of a gap: it runs. */
	safety_frame(s, c, 100 + k, k * P, 2 * MS, 1 * MS);
	assert_int_equal(poll_ids(s, k * P + 1 * MS, ids), 1);
	assert_int_equal(ids[0], 1);
	finish(s);
}

static void an_oversize_group_can_be_refused_as_unschedulable(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_UNSCHEDULABLE);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false);
	struct sched_domain_stats st;
	struct sched_decision d[4];

	safety_frame(s, c, 100, 0, 2 * MS, 1 * MS);
	assert_int_equal(sched_submit(s, 1, n, 40 * MS, 40 * MS, 0, 2 * MS), 0);
	frames_while_waiting(s, c, 100 * MS, 2 * MS);
	assert_int_equal(sched_poll(s, 103 * MS, d, 4), 1);
	assert_int_equal(d[0].id, 1);
	assert_int_equal(d[0].verdict, SCHED_REFUSED);
	stats(s, n, &st);
	assert_int_equal(st.unschedulable, 1);
	assert_int_equal(st.pending, 0);
	assert_int_equal(sched_cancel(s, 1, 104 * MS), -ENOENT);
	finish(s);
}

/*
 * A group of domain n predicted @predicted and bounded @bound (@flags:
 * SCHED_UNTILED or 0) after one 1 ms cluster frame, under oversize =
 * refuse-untiled: refused past max_defer (@refused), or run at the gap's
 * start that follows, as oversize = run has it.
 */
static void refused_or_run_at_a_gap_start(uint64_t predicted, uint64_t bound, unsigned flags,
					  bool refused)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_REFUSE_UNTILED);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false);
	struct sched_domain_stats st;
	struct sched_decision d[4];
	uint64_t ids[16], k;

	safety_frame(s, c, 100, 0, 2 * MS, 1 * MS);
	assert_int_equal(sched_submit(s, 1, n, predicted, bound, flags, 2 * MS), 0);
	k = frames_while_waiting(s, c, 102 * MS, 2 * MS);
	if (refused) {
		assert_int_equal(sched_poll(s, 103 * MS, d, 4), 1);
		assert_int_equal(d[0].id, 1);
		assert_int_equal(d[0].verdict, SCHED_REFUSED);
	} else {
		assert_int_equal(poll_ids(s, 105 * MS, NULL), 0);
		safety_frame(s, c, 100 + k, k * P, 2 * MS, 1 * MS);
		assert_int_equal(poll_ids(s, k * P + 1 * MS, ids), 1);
		assert_int_equal(ids[0], 1);
		assert_int_equal(sched_complete(s, 1, predicted, k * P + 1 * MS + predicted), 0);
	}
	stats(s, n, &st);
	assert_int_equal(st.unschedulable, refused ? 1 : 0);
	finish(s);
}

/*
 * oversize = refuse-untiled (the default): of two groups that fit no gap
 * as they typically go, the one with a draw its worker could not cut
 * (SCHED_UNTILED) is refused, the other runs at a gap's start past
 * max_defer, as oversize = run has it.
 */
static void an_oversize_group_is_refused_where_a_draw_in_it_could_not_be_cut(void **state)
{
	struct sched *s;
	int c, n;
	struct sched_decision d[4];
	uint64_t ids[16];

	refused_or_run_at_a_gap_start(40 * MS, 40 * MS, SCHED_UNTILED, true);
	/* The same without the flag: not refused; past max_defer it runs at a gap's start. */
	refused_or_run_at_a_gap_start(40 * MS, 40 * MS, 0, false);

	/*
	 * A young group is refused too where it asks with what its context's
	 * untileable draws took (36 ms); one that asks with 3 ms starts at
	 * a gap's start.
	 */
	s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_REFUSE_UNTILED);
	c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	n = add(s, SCHED_CLASS_NORMAL, P, false);
	safety_frame(s, c, 100, 0, 2 * MS, 1 * MS);
	assert_int_equal(
	    sched_submit(s, 1, n, 36 * MS, 36 * MS, SCHED_UNTILED | SCHED_YOUNG, 2 * MS), 0);
	assert_int_equal(sched_poll(s, 2 * MS, d, 4), 1);
	assert_int_equal(d[0].verdict, SCHED_REFUSED);
	assert_int_equal(sched_submit(s, 2, n, 3 * MS, 3 * MS, SCHED_UNTILED | SCHED_YOUNG, 3 * MS),
			 0);
	safety_frame(s, c, 101, P, 2 * MS, 1 * MS);
	assert_int_equal(poll_ids(s, P + 1 * MS, ids), 1);
	assert_int_equal(ids[0], 2);
	finish(s);

	/*
	 * An uncut draw predicted to fit the typical gap (26 ms against 1 ms
	 * frames: 31 ms) but bounded past it (33 ms) is refused: it runs
	 * whole. A group whose draws are cut is judged by its prediction.
	 */
	refused_or_run_at_a_gap_start(26 * MS, 33 * MS, SCHED_UNTILED, true);
	refused_or_run_at_a_gap_start(26 * MS, 33 * MS, 0, false);
}

/*
 * With oversize = unschedulable, a group that fails only on bounds is not
 * refused: the cluster's frames are bounded at 12 ms (a widened margin)
 * but take 1 ms, so check 3 sees gaps of 9.3 ms; the group's bound (22 ms)
 * exceeds them, its prediction (18 ms) fits the 31.3 ms gap between frames
 * of their measured time. It does not wait max_defer (it cannot get
 * smaller): it runs at the start of the next gap, right after a frame,
 * where check 3 passes with its likely cost (20 ms, halfway to its bound).
 */
static void a_group_oversize_by_bounds_alone_is_not_refused(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_UNSCHEDULABLE);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false);
	struct sched_domain_stats st;
	uint64_t ids[16];

	safety_frame(s, c, 100, 0, 12 * MS, 1 * MS);
	assert_int_equal(sched_submit(s, 1, n, 18 * MS, 22 * MS, 0, 2 * MS), 0);
	/* In the middle of a gap: not now. */
	assert_int_equal(poll_ids(s, 3 * MS, NULL), 0);
	stats(s, n, &st);
	assert_int_equal(st.throttled, 1);
	/* Right after the next frame, long before max_defer (100 ms). */
	safety_frame(s, c, 101, P, 12 * MS, 1 * MS);
	assert_int_equal(poll_ids(s, P + 1 * MS, ids), 1);
	assert_int_equal(ids[0], 1);
	stats(s, n, &st);
	assert_int_equal(st.unschedulable, 0);
	finish(s);
}

/*
 * A group oversize by its bound alone starts at a gap's start only if it
 * fits what is left of the gap: after a safety frame that
 * completed 12 ms after its release, a 20 ms group would end past the next
 * frame's latest start. It waits for the next gap's start, where it fits.
 */
static void a_group_oversize_by_bounds_alone_waits_for_room_at_a_late_gap_start(void **state)
{
	starts_after_the_gap_of_a_late_frame(20 * MS, 40 * MS, 0, 12 * MS);
}

/*
 * ... and where it fits at its likely cost (halfway from its prediction,
 * 18 ms, to its bound, 32 ms): after a frame that completed 8 ms after its
 * release, its prediction would end in time for the next frame but 25 ms
 * would not; it waits for the next gap's start.
 */
static void a_group_oversize_by_bounds_alone_starts_where_its_likely_cost_fits(void **state)
{
	starts_after_the_gap_of_a_late_frame(18 * MS, 32 * MS, 0, 8 * MS);
}

/*
 * ... but not for ever: a group whose likely cost (34 ms, halfway from its
 * prediction, 28 ms, to its bound, 40 ms) fits no gap of the cluster's
 * frames starts at the first gap's start past max_defer (100 ms).
 */
static void a_group_oversize_by_bounds_alone_waits_at_most_max_defer(void **state)
{
	int c, n;
	struct sched *s = cluster_after_four_frames(&c, &n);
	uint64_t ids[16], k;

	assert_int_equal(sched_submit(s, 1, n, 28 * MS, 40 * MS, 0, 3 * P + 4 * MS), 0);
	for (k = 4; k * P + 1 * MS < 3 * P + 104 * MS; k++) {
		safety_frame(s, c, 100 + k, k * P, 2 * MS, 1 * MS);
		assert_int_equal(poll_ids(s, k * P + 1 * MS, NULL), 0);
	}
	safety_frame(s, c, 100 + k, k * P, 2 * MS, 1 * MS);
	assert_int_equal(poll_ids(s, k * P + 1 * MS, ids), 1);
	assert_int_equal(ids[0], 1);
	finish(s);
}

/*
 * A safety client that draws as fast as it can (glmark2 in the cluster),
 * each group costing @safety_ns, far past its 4 ms budget, beside a
 * normal domain whose 11 ms groups (bound @bound_ns, over its 12 ms
 * budget or not) come back to back: over 2 s, the normal domain's groups
 * are granted within max_defer of their arrival, and their count shows
 * the GPU shared. Returns the normal domain's grants.
 */
#define SAFETY_IDS 1000000u /* the safety client's group ids from here, the normal one's below */
static uint64_t normal_grants_beside_a_greedy_safety_domain(uint64_t safety_ns, uint64_t bound_ns)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	int n = add(s, SCHED_CLASS_NORMAL, 12 * MS, false);
	struct sched_decision d[4];
	uint64_t running = 0, end = 0, next_c = SAFETY_IDS, next_n = 1, grants = 0, asked = 0;
	uint64_t ready[2] = {0, 0}; /* when each client sends its next group */
	bool waiting[2] = {false, false};

	for (uint64_t t = 0; t < 2000 * MS; t += 100 * US) {
		if (running && t >= end) {
			assert_int_equal(sched_complete(s, running,
							running >= SAFETY_IDS ? safety_ns : 11 * MS,
							end),
					 0);
			ready[running >= SAFETY_IDS ? 0 : 1] = end + 300 * US;
			running = 0;
		}
		if (!waiting[0] && !(running >= SAFETY_IDS) && t >= ready[0]) {
			assert_int_equal(sched_submit(s, next_c++, c, safety_ns,
						      safety_ns + safety_ns / 3, 0, t),
					 0);
			waiting[0] = true;
		}
		if (!waiting[1] && !(running && running < SAFETY_IDS) && t >= ready[1]) {
			assert_int_equal(sched_submit(s, next_n++, n, 11 * MS, bound_ns, 0, t), 0);
			waiting[1] = true;
			asked = t;
		}
		for (size_t k = 0, m = sched_poll(s, t, d, 4); k < m; k++) {
			assert_int_equal(d[k].verdict, SCHED_GRANTED);
			running = d[k].id;
			end = t + (running >= SAFETY_IDS ? safety_ns : 11 * MS);
			waiting[running >= SAFETY_IDS ? 0 : 1] = false;
			if (running < SAFETY_IDS)
				grants++;
		}
		/* Never waits max_defer: each group is granted well within it. */
		assert_true(!waiting[1] || t - asked < 100 * MS);
	}
	finish(s);
	return grants;
}

static void a_safety_domain_drawing_past_its_budget_starves_no_one(void **state)
{
	/* Each 11 ms group plus a safety group: two or more a period of 16.7 ms. */
	assert_true(normal_grants_beside_a_greedy_safety_domain(1 * MS, 13 * MS) > 100);
	assert_true(normal_grants_beside_a_greedy_safety_domain(1 * MS, 11 * MS) > 100);
	assert_true(normal_grants_beside_a_greedy_safety_domain(5 * MS, 13 * MS) > 100);
}

/*
 * A safety domain's first frames are its start-up (its shaders compile:
 * 10 to 40 ms a frame under TCG, bench/vms): frames over its budget then
 * do not make it a client drawing past its budget, and the frame after
 * them stays protected. Once its typical frame is over its budget, it is.
 */
static void a_safety_domain_over_budget_in_its_first_frames_stays_protected(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	int n = add(s, SCHED_CLASS_NORMAL, P, false);
	uint64_t t = 2 * P + 13 * MS, ids[16];

	(void)state;
	safety_frame(s, c, 100, 0, 12 * MS, 10 * MS);
	safety_frame(s, c, 101, P, 12 * MS, 10 * MS);
	/* Its third frame is late (start-up): 16 ms from now would make it miss, 3 ms not. */
	assert_int_equal(sched_submit(s, 1, n, 10 * MS, 16 * MS, 0, t), 0);
	assert_int_equal(poll_ids(s, t, NULL), 0);
	assert_int_equal(sched_submit(s, 2, n, 1 * MS, 3 * MS, 0, t + 1), 0);
	assert_int_equal(poll_ids(s, t + 1, ids), 1);
	assert_int_equal(ids[0], 2);
	assert_int_equal(sched_complete(s, 2, 2 * MS, t + 2 * MS), 0);
	assert_int_equal(sched_cancel(s, 1, t + 2 * MS), 0);
	finish(s);

	/* Eight frames of 10 ms each: its typical frame is over its budget, not protected. */
	s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	n = add(s, SCHED_CLASS_NORMAL, P, false);
	for (uint64_t k = 0; k < SCHED_TYPICAL_FRAMES; k++)
		safety_frame(s, c, 100 + k, k * P, 12 * MS, 10 * MS);
	t = SCHED_TYPICAL_FRAMES * P + 13 * MS;
	assert_int_equal(sched_submit(s, 1, n, 10 * MS, 16 * MS, 0, t), 0);
	assert_int_equal(poll_ids(s, t, NULL), 1);
	assert_int_equal(sched_complete(s, 1, 10 * MS, t + 10 * MS), 0);
	finish(s);
}

/*
 * A safety domain's frame may come at any moment once a context of it was
 * created: before its first release, and when it was silent, check 3
 * keeps room for one due now, for SCHED_EXPECT_PERIODS periods.
 */
static void a_safety_frame_is_expected_from_its_context_s_creation(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	int n = add(s, SCHED_CLASS_NORMAL, P, false);
	uint64_t t = 20 * MS, window = SCHED_EXPECT_PERIODS * P, ids[16];

	(void)state;
	assert_false(sched_expect_frames(s, n, 0));
	assert_false(sched_expect_frames(s, 9, 0));
	/* No context of the cluster: nothing to keep room for. */
	assert_int_equal(sched_submit(s, 1, n, 10 * MS, 14 * MS, 0, 0), 0);
	assert_int_equal(poll_ids(s, 0, NULL), 1);
	assert_int_equal(sched_complete(s, 1, 10 * MS, 10 * MS), 0);
	/* Its context: 14 ms now and its 4 ms frame would end past the frame's deadline. */
	assert_true(sched_expect_frames(s, c, t));
	only_the_small_group_fits(s, n, 2, 3, t);
	assert_int_equal(poll_ids(s, t + 200 * MS, NULL), 0);
	/* Its first frames: room follows its grid, the 14 ms group fits after one. */
	safety_frame(s, c, 100, t + 300 * MS, 4 * MS, 3 * MS);
	/* Room for its open frame's next group. */
	assert_int_equal(poll_ids(s, t + 300 * MS + 3 * MS, NULL), 0);
	safety_frame(s, c, 101, t + 300 * MS + P, 4 * MS, 3 * MS);
	assert_int_equal(poll_ids(s, t + 300 * MS + P + 3 * MS, ids), 1);
	assert_int_equal(ids[0], 2);
	assert_int_equal(sched_complete(s, 2, 10 * MS, t + 300 * MS + P + 13 * MS), 0);
	/* Silent for more than SCHED_IDLE_PERIODS: a frame may come at any moment again. */
	t += 300 * MS + (SCHED_IDLE_PERIODS + 2) * P;
	assert_int_equal(sched_submit(s, 4, n, 10 * MS, 14 * MS, 0, t), 0);
	assert_int_equal(poll_ids(s, t, NULL), 0);
	/* Until the window ends, which is an event. */
	assert_true(sched_next_event(s, t) <= 20 * MS + window);
	assert_int_equal(poll_ids(s, 20 * MS + window, ids), 1);
	assert_int_equal(ids[0], 4);
	assert_int_equal(sched_complete(s, 4, 10 * MS, 20 * MS + window + 10 * MS), 0);
	finish(s);
}

/*
 * A safety domain that falls silent after its frames (its client starved
 * for a few periods) is expected back at any moment for
 * SCHED_SILENT_EXPECT_PERIODS periods after its last release: a normal group
 * that would make a frame released now late waits; one that fits runs.
 * After the window, the longer one runs.
 */
static void a_silent_safety_domain_is_expected_back(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	int n = add(s, SCHED_CLASS_NORMAL, P, false);
	uint64_t last = 7 * P, t = last + (SCHED_IDLE_PERIODS + 1) * P, ids[16];

	(void)state;
	for (uint64_t k = 0; k < 8; k++)
		safety_frame(s, c, 100 + k, k * P, 4 * MS, 3 * MS);
	/* Off its grid now: a 14 ms group would make a frame due now late, a 3 ms one not. */
	only_the_small_group_fits(s, n, 1, 2, t);
	assert_int_equal(poll_ids(s, t + 2 * MS, NULL), 0);
	/* The window ends SCHED_SILENT_EXPECT_PERIODS after the last release, an event. */
	assert_true(sched_next_event(s, t + 2 * MS) <= last + SCHED_SILENT_EXPECT_PERIODS * P);
	assert_int_equal(poll_ids(s, last + SCHED_SILENT_EXPECT_PERIODS * P, ids), 1);
	assert_int_equal(ids[0], 1);
	assert_int_equal(
	    sched_complete(s, 1, 10 * MS, last + SCHED_SILENT_EXPECT_PERIODS * P + 10 * MS), 0);
	finish(s);
}

/*
 * A group without output that comes after the idle gap closed its frame
 * (a client's state or fence group, 4 ms after each draw) is no release:
 * the period and the grid stay the draws'. Counted as one, each moved the
 * grid 4 ms late ("an irregular release") and the draw after it counted
 * an interval of P - 4 ms: the observed period sank towards 12.7 ms and
 * each draw seemed 4 ms early (the release guard at its cap).
 */
static void a_group_without_output_after_its_frame_does_not_move_the_grid(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	struct sched_domain_stats st;
	uint64_t ids[16], t;

	(void)state;
	for (uint64_t k = 0; k < 16; k++) {
		safety_frame(s, c, 100 + 2 * k, k * P, 2 * MS, 1 * MS);
		/* mediatord's timer at the idle gap's end closes the frame. */
		assert_int_equal(poll_ids(s, k * P + 3 * MS, NULL), 0);
		t = k * P + 4 * MS;
		assert_int_equal(
		    sched_submit(s, 101 + 2 * k, c, MS / 10, MS / 2, SCHED_NO_OUTPUT, t), 0);
		assert_int_equal(poll_ids(s, t, ids), 1);
		assert_int_equal(sched_complete(s, 101 + 2 * k, MS / 10, t + MS / 10), 0);
	}
	stats(s, c, &st);
	assert_true(st.observed_period_ns > P - P / 100 && st.observed_period_ns < P + P / 100);
	assert_int_equal(st.frames, 16);
	finish(s);
}

/*
 * Two safety domains (60 and 30 Hz) that both just made a context, so that
 * each expects the other's frame at any moment, both send a 40 ms first
 * group (a context's set-up), and both frames are late by then: the one
 * due first starts, then the other, as soon as nothing of the first is
 * due before it. Checked against each other's frames,
 * each kept the other's group waiting for good, nothing on the GPU
 * (bench/displays, 2026-11-29).
 */
static void two_safety_domains_never_keep_each_other_waiting(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	struct sched_domain_params hud = {.class = SCHED_CLASS_SAFETY,
					  .period_ns = 2 * P,
					  .budget_ns = 4 * MS,
					  .deadline_ns = 2 * P};
	int a = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), b = sched_add_domain(s, &hud, 0);
	uint64_t ids[16], t;

	(void)state;
	assert_true(sched_expect_frames(s, a, 0));
	assert_true(sched_expect_frames(s, b, 0));
	assert_int_equal(sched_submit(s, 1, b, 20 * MS, 40 * MS, 0, 0), 0);
	assert_int_equal(sched_submit(s, 2, a, 20 * MS, 40 * MS, 0, MS), 0);
	assert_int_equal(poll_ids(s, MS, ids), 1);
	assert_int_equal(ids[0], 2);
	assert_int_equal(sched_complete(s, 2, 40 * MS, 41 * MS), 0);
	/*
	 * The 30 Hz frame, rolled over at 2P, is due at 4P; the 60 Hz
	 * domain's next release is overdue, expected at any moment, due a
	 * period later: before 4P until 3P. Then the 30 Hz group starts.
	 */
	for (t = 41 * MS; !poll_ids(s, t, ids); t += MS / 2)
		assert_true(t < 3 * P);
	assert_int_equal(ids[0], 1);
	assert_int_equal(sched_complete(s, 1, 40 * MS, t + 40 * MS), 0);
	finish(s);
}

/*
 * A young group beside a 60 Hz cluster and a 30 Hz head-up display 8 ms
 * behind it starts right after a cluster frame after which the display's
 * next release comes later than the cluster's: the room ahead is a whole
 * cluster gap. Until 2026-11-29 it needed both at their gaps' start at
 * once, which they never were (bench/displays).
 */
static void a_young_group_starts_after_the_frame_whose_next_release_comes_first(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	struct sched_domain_params hud = {.class = SCHED_CLASS_SAFETY,
					  .period_ns = 2 * P,
					  .budget_ns = 4 * MS,
					  .deadline_ns = 2 * P};
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), h = sched_add_domain(s, &hud, 0);
	int n = add(s, SCHED_CLASS_NORMAL, P, false);
	uint64_t ids[16];

	(void)state;
	for (uint64_t k = 0; k < 8; k++) {
		safety_frame(s, c, 100 + k, k * P, 2 * MS, 1 * MS);
		if (k % 2 == 0)
			safety_frame(s, h, 200 + k, k * P + 8 * MS, 2 * MS, 1 * MS);
	}
	/* After the cluster's frame at 8P the display's release at 8P + 8 ms comes first. */
	safety_frame(s, c, 108, 8 * P, 2 * MS, 1 * MS);
	assert_int_equal(sched_submit(s, 1, n, 3 * MS, 3 * MS, SCHED_YOUNG, 8 * P + 1500 * US), 0);
	assert_int_equal(poll_ids(s, 8 * P + 1500 * US, NULL), 0);
	safety_frame(s, h, 208, 8 * P + 8 * MS, 2 * MS, 1 * MS);
	assert_int_equal(poll_ids(s, 8 * P + 9500 * US, NULL), 0);
	/* After the cluster's frame at 9P, the cluster's next release comes first: it starts. */
	safety_frame(s, c, 109, 9 * P, 2 * MS, 1 * MS);
	assert_int_equal(poll_ids(s, 9 * P + 1500 * US, ids), 1);
	assert_int_equal(ids[0], 1);
	assert_int_equal(sched_complete(s, 1, 3 * MS, 9 * P + 4500 * US), 0);
	finish(s);
}

/* A safety domain whose period is learned, at most 1 s, at least P; budget 4 ms per P. */
static int add_learned(struct sched *s, bool deadline_follows)
{
	struct sched_domain_params d = {.class = SCHED_CLASS_SAFETY,
					.period_ns = P,
					.budget_ns = 4 * MS,
					.deadline_ns = P,
					.learn_period = true,
					.deadline_follows = deadline_follows,
					.max_period_ns = 1000 * MS};
	int i = sched_add_domain(s, &d, 0);

	assert_true(i >= 0);
	return i;
}

/*
 * @n frames of safety domain @c, one every @period from *@t (moved past
 * them), each a group of bound 2 ms that takes 1 ms; ids from *@id. From
 * its tenth frame on, a learned period is within 2 % of @period.
 */
static void frames_every(struct sched *s, int c, uint64_t *id, uint64_t *t, uint64_t period,
			 unsigned n)
{
	struct sched_domain_stats st;

	for (unsigned k = 0; k < n; k++, *t += period) {
		safety_frame(s, c, (*id)++, *t, 2 * MS, 1 * MS);
		stats(s, c, &st);
		if (k < 10 || !st.params.learn_period)
			continue;
		if (st.learned_period_ns + period / 50 < period ||
		    st.learned_period_ns > period + period / 50) {
			print_error("frame %u at %llu ns: learned %llu ns for %llu\n", k,
				    (unsigned long long)*t,
				    (unsigned long long)st.learned_period_ns,
				    (unsigned long long)period);
			fail();
		}
	}
}

/*
 * Issue 33: a guest at 60 Hz, then 30, then 60 again; its period is not
 * configured. Within 10 frames of each change the learned period is
 * within 2 % of the guest's, and no frame is late.
 */
static void a_learned_period_follows_rate_changes_within_ten_frames(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add_learned(s, true);
	struct sched_domain_stats st;
	uint64_t id = 1, t = 0;

	(void)state;
	frames_every(s, c, &id, &t, P, 40);
	frames_every(s, c, &id, &t, 2 * P, 30);
	frames_every(s, c, &id, &t, P, 40);
	assert_int_equal(poll_ids(s, t, NULL), 0);
	stats(s, c, &st);
	assert_int_equal(st.deadline_misses, 0);
	assert_int_equal(st.period_changes, 2);
	assert_true(st.period_confidence > 0.9);
	assert_int_equal(st.observed_period_ns, st.learned_period_ns);
	finish(s);
}

/*
 * The same on a host whose timer wakes the guest on 4 ms ticks: a 30 Hz
 * guest's frames come 32 and 36 ms apart, and a fit at the new rate stays
 * unsure for a while. The period the frames follow (observed) is within
 * 2 % of the guest's from the tenth frame after each change: right after
 * a change, the frames follow the fit at the new rate, sure or not, not
 * the old rate's period, known to be wrong.
 */
static void a_learned_period_on_a_coarse_timer_is_followed_at_once(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add_learned(s, true);
	struct sched_domain_stats st;
	uint64_t id = 1, t0 = 0;

	(void)state;
	for (unsigned phase = 0; phase < 3; phase++) {
		uint64_t period = phase == 1 ? 2 * P : P, t = 0;

		for (unsigned k = 0; k < 40; k++) {
			t = t0 + k * period;
			safety_frame(s, c, id++, (t + 4 * MS - 1) / (4 * MS) * (4 * MS), 2 * MS,
				     1 * MS);
			stats(s, c, &st);
			if (k >= 10 && (st.observed_period_ns + period / 50 < period ||
					st.observed_period_ns > period + period / 50)) {
				print_error("phase %u frame %u: followed %llu ns for %llu\n", phase,
					    k, (unsigned long long)st.observed_period_ns,
					    (unsigned long long)period);
				fail();
			}
		}
		t0 = t + period;
	}
	assert_int_equal(st.period_changes, 2);
	finish(s);
}

/*
 * A guest gives no notice of a faster rate: room for a learned domain's
 * next frame is kept as if it came its shortest period after its last.
 * At 30 Hz, a 35 ms group just after its frame fits the configured 30 Hz
 * domain's gap (its next frame 33 ms away, due 33 ms later) and starts;
 * beside the learned one, whose shortest period is 60 Hz, it does not.
 */
static void room_is_kept_for_a_learned_domain_s_shortest_period(void **state)
{
	(void)state;
	for (int learned = 0; learned < 2; learned++) {
		struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
		struct sched_domain_params fixed = {.class = SCHED_CLASS_SAFETY,
						    .period_ns = 2 * P,
						    .budget_ns = 4 * MS,
						    .deadline_ns = 2 * P};
		int c = learned ? add_learned(s, true) : sched_add_domain(s, &fixed, 0);
		int n = add(s, SCHED_CLASS_NORMAL, P, false);
		uint64_t id = 100, t = 0;

		frames_every(s, c, &id, &t, 2 * P, 20);
		t -= 2 * P;
		assert_int_equal(poll_ids(s, t + 3 * MS, NULL), 0);
		assert_int_equal(sched_submit(s, 1, n, 30 * MS, 35 * MS, 0, t + 3 * MS), 0);
		assert_int_equal(poll_ids(s, t + 3 * MS, NULL), learned ? 0 : 1);
		assert_int_equal(sched_cancel(s, 1, t + 4 * MS), 0);
		finish(s);
	}
}

/*
 * With deadline_follows, a learned domain's frame is judged against the
 * period it shows frames at: at 30 Hz, a frame done 20 ms after its
 * release is in time; against its 60 Hz deadline, it is late.
 */
static void a_learned_domain_s_frames_are_judged_against_its_period(void **state)
{
	(void)state;
	for (int follows = 0; follows < 2; follows++) {
		struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
		int c = add_learned(s, follows);
		struct sched_domain_stats st;
		uint64_t id = 1, t = 0;

		frames_every(s, c, &id, &t, 2 * P, 40);
		safety_frame(s, c, id++, t, 2 * MS, 20 * MS);
		t += 2 * P;
		frames_every(s, c, &id, &t, 2 * P, 2);
		stats(s, c, &st);
		assert_int_equal(st.deadline_misses, follows ? 0 : 1);
		assert_int_equal(st.startup_frames, 0);
		finish(s);
	}
}

static void set_budget_applies_at_the_next_period_and_refuses_what_cannot_fit(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false),
	    n = add(s, SCHED_CLASS_NORMAL, 8 * MS, false);
	int c2 = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	struct sched_domain_stats st;
	char why[200];

	assert_int_equal(sched_set_budget(s, n, P, 2 * MS, P, why, sizeof(why)), 0);
	stats(s, n, &st);
	assert_int_equal(st.params.budget_ns, 8 * MS);
	assert_int_equal(st.remaining_ns, 8 * MS);
	sched_advance(s, P);
	stats(s, n, &st);
	assert_int_equal(st.params.budget_ns, 2 * MS);
	assert_int_equal(st.remaining_ns, 2 * MS);
	/* Safety budgets over 100 % of the GPU together. */
	assert_int_equal(sched_set_budget(s, c, P, 14 * MS, P, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "safety"));
	/* A safety budget larger than its deadline. */
	assert_int_equal(sched_set_budget(s, c2, P, 5 * MS, 4 * MS, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "deadline"));
	/* Out of range. */
	assert_int_equal(sched_set_budget(s, c, 10, 1, 1, why, sizeof(why)), -EINVAL);
	assert_int_equal(sched_set_budget(s, c, P, 2 * P, P, why, sizeof(why)), -EINVAL);
	assert_int_equal(sched_set_budget(s, 9, P, 1, P, why, sizeof(why)), -EINVAL);
	stats(s, c, &st);
	assert_int_equal(st.params.budget_ns, 4 * MS);
	finish(s);
}

static void cancelled_groups_free_their_slot(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int a = add(s, SCHED_CLASS_NORMAL, 8 * MS, false);
	struct sched_domain_stats st;
	uint64_t ids[16];

	assert_int_equal(sched_submit(s, 1, a, 1 * MS, 1 * MS, 0, 0), 0);
	assert_int_equal(sched_submit(s, 2, a, 1 * MS, 1 * MS, 0, 1), 0);
	assert_int_equal(poll_ids(s, 2, ids), 1);
	assert_int_equal(sched_cancel(s, 1, 3), 0); /* in flight: its worker died */
	assert_int_equal(poll_ids(s, 4, ids), 1);
	assert_int_equal(ids[0], 2);
	stats(s, a, &st);
	assert_int_equal(st.inflight, 1);
	assert_int_equal(st.pending, 0);
	finish(s);
}

static void bad_parameters_are_refused(void **state)
{
	struct sched_params bad = {.policy = 7};
	struct sched *s = make(SCHED_POLICY_BUDGET, 0, SCHED_OVERSIZE_RUN);
	struct sched_domain_params d = {.class = SCHED_CLASS_NORMAL, .period_ns = P};

	assert_null(sched_create(&bad, 0));
	assert_null(sched_create(NULL, 0));
	assert_int_equal(sched_add_domain(s, &d, 0), -EINVAL); /* deadline 0 */
	d.deadline_ns = P;
	d.budget_ns = P + 1;
	assert_int_equal(sched_add_domain(s, &d, 0), -EINVAL);
	d.budget_ns = P;
	for (int i = 0; i < SCHED_MAX_DOMAINS; i++)
		assert_int_equal(sched_add_domain(s, &d, 0), i);
	assert_int_equal(sched_add_domain(s, &d, 0), -ENOSPC);
	for (uint64_t i = 0; i < SCHED_MAX_PENDING; i++)
		assert_int_equal(sched_submit(s, i, 0, 1, 1, 0, 0), 0);
	assert_int_equal(sched_submit(s, SCHED_MAX_PENDING, 0, 1, 1, 0, 0), -ENOSPC);
	finish(s);
	sched_destroy(NULL);
}

/* The debt after an idle stretch is what is still owed: budget - debt - use stays what is left. */
static void debt_after_idle_periods_is_what_is_still_owed(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int a = add(s, SCHED_CLASS_NORMAL, 1 * MS, false);
	struct sched_domain_stats st;

	assert_int_equal(sched_submit(s, 1, a, 1 * MS, 1 * MS, 0, 0), 0);
	assert_int_equal(poll_ids(s, 0, NULL), 1);
	assert_int_equal(sched_complete(s, 1, 10 * MS, 10 * MS), 0); /* 9 ms overspent */
	/* Boundaries at P (owes 9 ms) and 2P (owes 8 ms): 7 ms short in the third period. */
	sched_advance(s, 2 * P + 1);
	stats(s, a, &st);
	assert_int_equal(st.period_start_ns, 2 * P);
	assert_int_equal(st.debt_ns, 8 * MS);
	assert_int_equal(st.remaining_ns, -7 * (int64_t)MS);
	assert_int_equal(st.used_last_period_ns, 0);
	assert_int_equal(st.last_period_ns, P);
	assert_int_equal(st.remaining_ns,
			 (int64_t)st.params.budget_ns - (int64_t)st.debt_ns - (int64_t)st.used_ns);
	finish(s);
}

/* A small deterministic random number generator, for the mixed run. */
static uint64_t rnd_state;

static uint64_t rnd(uint64_t n)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return (rnd_state >> 33) % n;
}

/*
 * Two seconds of a safety domain's frames, a work-conserving and a strict
 * normal domain on a mock GPU with two slots: groups that ask and groups
 * that take the offer, overruns, oversize groups refused, workers that go
 * away with groups waiting or running, set-budget twice. No invariant
 * breaks.
 */
static void invariants_stay_silent_in_a_long_mixed_run(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 2, SCHED_OVERSIZE_UNSCHEDULABLE);
	int dom[3] = {add(s, SCHED_CLASS_SAFETY, 4 * MS, false),
		      add(s, SCHED_CLASS_NORMAL, 8 * MS, false),
		      add(s, SCHED_CLASS_NORMAL, 4 * MS, true)};
	struct {
		uint64_t id, end, measured;
		bool waiting, running;
		unsigned frame_left;
	} c[3] = {{0}};
	struct sched_decision dec[8];
	uint64_t next_id = 1, max_bound[3], granted = 0, refused = 0, claimed = 0;
	char why[200];

	rnd_state = 1;
	for (uint64_t t = 0; t < 2000 * MS; t += 100 * US) {
		if (t == 500 * MS)
			assert_int_equal(
			    sched_set_budget(s, dom[1], 2 * P, 10 * MS, 2 * P, why, sizeof(why)),
			    0);
		if (t == 1000 * MS)
			assert_int_equal(
			    sched_set_budget(s, dom[1], P / 2, 2 * MS, P / 2, why, sizeof(why)), 0);
		for (int i = 0; i < 3; i++) { /* completions */
			if (c[i].running && c[i].end <= t) {
				assert_int_equal(
				    sched_complete(s, c[i].id, c[i].measured, c[i].end), 0);
				c[i].running = false;
			}
		}
		for (int i = 0; i < 3; i++) { /* workers that go away */
			if ((c[i].waiting || c[i].running) && rnd(2000) == 0) {
				assert_int_equal(sched_cancel(s, c[i].id, t), 0);
				c[i].waiting = c[i].running = false;
			}
		}
		for (int i = 0; i < 3; i++) { /* arrivals */
			uint64_t bound, predicted;

			if (c[i].waiting || c[i].running)
				continue;
			if (i == 0 && t % P < 100 * US)
				c[i].frame_left = 1 + (unsigned)rnd(3);
			if (i == 0 ? !c[i].frame_left : rnd(4) != 0)
				continue;
			if (i == 0)
				c[i].frame_left--;
			bound = (200 + rnd(2800)) * US;
			if (i == 2 && rnd(20) == 0)
				bound = 30 * MS; /* over its strict budget: refused in the end */
			predicted = bound / 2;
			c[i].id = next_id++;
			c[i].measured =
			    predicted + rnd(bound); /* overruns its bound now and then */
			if (i != 2 && rnd(3) == 0 &&
			    sched_offer(s, t, t + 2 * MS, false, max_bound) &&
			    bound <= max_bound[dom[i]]) {
				assert_int_equal(
				    sched_claim(s, c[i].id, dom[i], predicted, bound, 0, t), 0);
				c[i].running = true;
				c[i].end = t + c[i].measured;
				claimed++;
				continue;
			}
			assert_int_equal(sched_submit(s, c[i].id, dom[i], predicted, bound, 0, t),
					 0);
			c[i].waiting = true;
		}
		for (size_t k = 0, n = sched_poll(s, t, dec, 8); k < n; k++) {
			int i = dec[k].domain;

			assert_int_equal(dec[k].id, c[i].id);
			c[i].waiting = false;
			if (dec[k].verdict == SCHED_REFUSED) {
				refused++;
				continue;
			}
			c[i].running = true;
			c[i].end = t + c[i].measured;
			granted++;
		}
	}
	/* The run did all of that. */
	assert_true(granted > 1000 && claimed > 20 && refused > 0);
	finish(s);
}

/* A claim while every slot is taken (no offer stood): counted, and the group still tracked. */
static void a_claim_without_a_free_slot_breaks_max_inflight(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int a = add(s, SCHED_CLASS_NORMAL, P, false);
	struct sched_domain_stats st;

	assert_int_equal(sched_submit(s, 1, a, 1 * MS, 1 * MS, 0, 0), 0);
	assert_int_equal(poll_ids(s, 0, NULL), 1);
	assert_int_equal(sched_claim(s, 2, a, 1 * MS, 1 * MS, 0, 1), 0);
	assert_int_equal(sched_invariant_violations(s, SCHED_INV_MAX_INFLIGHT), 1);
	assert_int_equal(warned.calls, 1);
	assert_int_equal(warned.inv, SCHED_INV_MAX_INFLIGHT);
	assert_int_equal(warned.count, 1);
	assert_non_null(strstr(warned.what, "2 granted with 1 of 1 in flight"));
	stats(s, a, &st);
	assert_int_equal(st.inflight, 2);
	assert_int_equal(sched_complete(s, 1, 1 * MS, 1 * MS), 0);
	assert_int_equal(sched_complete(s, 2, 1 * MS, 1 * MS + 1), 0);
	stats(s, a, &st);
	assert_int_equal(st.inflight, 0);
	assert_int_equal(st.used_ns, 2 * MS);
	/* Nothing else broke. */
	assert_int_equal(warned.calls, 1);
	sched_destroy(s);
}

/* A caller's time that goes back is counted and taken as the latest; a completion's may. */
static void a_time_that_goes_back_is_counted_and_taken_as_the_latest(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int a = add(s, SCHED_CLASS_NORMAL, 4 * MS, true);
	struct sched_domain_stats st;

	assert_int_equal(sched_submit(s, 1, a, 1 * MS, 1 * MS, 0, 2 * P + 5), 0);
	assert_int_equal(poll_ids(s, 2 * P + 5, NULL), 1);
	/* Completed before the last call's time, reported after: that is how it goes. */
	assert_int_equal(sched_complete(s, 1, 1 * MS, 2 * P + 3), 0);
	assert_int_equal(warned.calls, 0);
	/* A submission from the period before: counted, and charged to the current period. */
	assert_int_equal(sched_submit(s, 2, a, 1 * MS, 1 * MS, 0, P), 0);
	assert_int_equal(sched_invariant_violations(s, SCHED_INV_TIME_ORDER), 1);
	assert_int_equal(warned.inv, SCHED_INV_TIME_ORDER);
	assert_non_null(strstr(warned.what, "sched_submit"));
	assert_int_equal(poll_ids(s, 2 * P + 6, NULL), 1);
	assert_int_equal(sched_complete(s, 2, 2 * MS, 2 * P + 2 * MS), 0);
	stats(s, a, &st);
	assert_int_equal(st.period_start_ns, 2 * P);
	assert_int_equal(st.used_ns, 3 * MS);
	assert_int_equal(st.remaining_ns, 1 * MS);
	sched_advance(s, P);
	assert_int_equal(sched_invariant_violations(s, SCHED_INV_TIME_ORDER), 2);
	stats(s, a, &st);
	assert_int_equal(st.period_start_ns, 2 * P); /* never back */
	assert_int_equal(warned.calls, 2);
	sched_destroy(s);
}

/* A measured time the arithmetic cannot hold is capped and counted; use saturates, never wraps. */
static void budget_arithmetic_saturates_rather_than_wraps(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int a = add(s, SCHED_CLASS_NORMAL, 4 * MS, false);
	struct sched_domain_stats st;
	uint64_t id = 1;

	/* Times beyond SCHED_TIME_MAX_NS are refused at the door. */
	assert_int_equal(sched_submit(s, 1, a, 1, SCHED_TIME_MAX_NS + 1, 0, 0), -EINVAL);
	assert_int_equal(sched_submit(s, 1, a, SCHED_TIME_MAX_NS + 1, 0, 0, 0), -EINVAL);
	assert_int_equal(sched_submit(s, id, a, 1 * MS, 1 * MS, 0, 0), 0);
	assert_int_equal(poll_ids(s, 0, NULL), 1);
	assert_int_equal(sched_complete(s, id, UINT64_MAX, 1 * MS), 0);
	assert_int_equal(sched_invariant_violations(s, SCHED_INV_BUDGET), 1);
	stats(s, a, &st);
	assert_int_equal(st.used_ns, SCHED_TIME_MAX_NS);
	assert_int_equal(st.remaining_ns, 4 * (int64_t)MS - (int64_t)SCHED_TIME_MAX_NS);
	/* 600 more such groups in the same period: the use stops at 2^61 ns. */
	for (int k = 0; k < 600; k++) {
		id++;
		assert_int_equal(sched_submit(s, id, a, 1 * MS, 1 * MS, 0, 1 * MS), 0);
		assert_int_equal(poll_ids(s, 1 * MS, NULL), 1);
		assert_int_equal(sched_complete(s, id, SCHED_TIME_MAX_NS, 1 * MS), 0);
	}
	assert_true(sched_invariant_violations(s, SCHED_INV_BUDGET) > 1);
	stats(s, a, &st);
	assert_int_equal(st.used_ns, 1ull << 61);
	assert_true(st.remaining_ns < 0);
	assert_int_equal(st.remaining_ns, 4 * (int64_t)MS - (int64_t)(1ull << 61));
	/* The next period owes it all, still without wrapping. */
	sched_advance(s, P);
	stats(s, a, &st);
	assert_true(st.remaining_ns < 0);
	assert_int_equal(st.remaining_ns,
			 (int64_t)st.params.budget_ns - (int64_t)st.debt_ns - (int64_t)st.used_ns);
	for (unsigned i = 0; i < SCHED_INV_COUNT; i++) {
		if (i != SCHED_INV_BUDGET)
			assert_int_equal(sched_invariant_violations(s, (enum sched_invariant)i), 0);
	}
	sched_destroy(s);
}

static void every_invariant_has_a_name(void **state)
{
	struct sched *s = make(SCHED_POLICY_FIFO, 1, SCHED_OVERSIZE_RUN);

	for (unsigned i = 0; i < SCHED_INV_COUNT; i++) {
		const char *name = sched_invariant_name((enum sched_invariant)i);

		assert_non_null(name);
		for (unsigned j = 0; j < i; j++)
			assert_string_not_equal(name,
						sched_invariant_name((enum sched_invariant)j));
	}
	assert_string_equal(sched_invariant_name(SCHED_INV_REQUEST_COUNTS), "request_counts");
	assert_null(sched_invariant_name(SCHED_INV_COUNT));
	assert_int_equal(sched_invariant_violations(s, SCHED_INV_COUNT), 0);
	finish(s);
}

/* The default watchdog (scheduler.h, SCHED_WATCHDOG_*). */
static const struct sched_watchdog default_watchdog = {.multiplier = SCHED_WATCHDOG_MULTIPLIER,
						       .slack_ns = SCHED_WATCHDOG_SLACK_NS,
						       .floor_ns = SCHED_WATCHDOG_FLOOR_NS};

static struct sched *make_watched(uint32_t max_inflight)
{
	struct sched_params p = {.policy = SCHED_POLICY_BUDGET,
				 .max_inflight = max_inflight,
				 .max_defer_ns = 100 * MS,
				 .watchdog = default_watchdog};
	struct sched *s = sched_create(&p, 0);

	assert_non_null(s);
	memset(&warned, 0, sizeof(warned));
	sched_set_warn(s, on_warn, NULL);
	return s;
}

static void watchdog_limit_is_the_largest_of_its_three_terms(void **state)
{
	static const struct {
		const char *what;
		struct sched_watchdog w;
		uint64_t bound, limit;
	} cases[] = {
	    {"unknown cost: the floor", default_watchdog, 0, 200 * MS},
	    {"a short group: the floor", default_watchdog, 5 * MS, 200 * MS},
	    {"4 x 50 ms is the floor itself", default_watchdog, 50 * MS, 200 * MS},
	    {"a long group: 4 x its bound", default_watchdog, 80 * MS, 320 * MS},
	    {"slack wins over a small multiplier", {1, 50 * MS, 10 * MS, 0}, 30 * MS, 80 * MS},
	    {"multiplier wins over slack", {4, 50 * MS, 10 * MS, 0}, 30 * MS, 120 * MS},
	    {"a huge bound saturates", default_watchdog, UINT64_MAX / 2, UINT64_MAX},
	    {"bound + slack saturates", {1, 10, 10, 0}, UINT64_MAX - 5, UINT64_MAX},
	    {"multiplier 0: no watchdog", {0, 50 * MS, 200 * MS, 0}, 5 * MS, UINT64_MAX},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t got = sched_watchdog_limit(&cases[i].w, cases[i].bound);

		if (got != cases[i].limit) {
			print_error("%s: %llu, expected %llu\n", cases[i].what,
				    (unsigned long long)got, (unsigned long long)cases[i].limit);
			fail();
		}
	}
}

static void a_scheduler_without_watchdog_finds_nothing_overdue(void **state)
{
	struct sched *s = make(SCHED_POLICY_BUDGET, 1, SCHED_OVERSIZE_RUN);
	int b = add(s, SCHED_CLASS_NORMAL, P, false);
	struct sched_overdue o[4];

	assert_int_equal(sched_submit(s, 1, b, 1 * MS, 2 * MS, 0, 0), 0);
	assert_int_equal(poll_ids(s, 0, NULL), 1);
	assert_int_equal(sched_next_deadline(s), UINT64_MAX);
	assert_int_equal(sched_overdue(s, 3600000 * MS, o, 4), 0);
	assert_int_equal(sched_complete(s, 1, 1 * MS, 1 * MS), 0);
	finish(s);
}

/*
 * A young group of the only safety domain (its shaders compiling) is
 * revoked after SCHED_WATCHDOG_SAFETY_YOUNG_NS at the earliest, not at
 * the floor; with a second safety domain, whose frames could wait for
 * it, at the floor.
 */
static void a_young_group_of_the_only_safety_domain_has_a_second(void **state)
{
	struct sched *s = make_watched(1);
	int a = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	uint64_t ids[16];

	(void)state;
	(void)add(s, SCHED_CLASS_NORMAL, P, false);
	assert_int_equal(sched_submit(s, 10, a, 1 * MS, 17 * MS, SCHED_YOUNG, 1 * MS), 0);
	assert_int_equal(poll_ids(s, 1 * MS, ids), 1);
	assert_int_equal(sched_next_deadline(s), 1 * MS + SCHED_WATCHDOG_SAFETY_YOUNG_NS);
	assert_int_equal(sched_complete(s, 10, 300 * MS, 301 * MS), 0);
	/* Not young: the floor. */
	assert_int_equal(sched_submit(s, 11, a, 1 * MS, 17 * MS, 0, 302 * MS), 0);
	assert_int_equal(poll_ids(s, 302 * MS, ids), 1);
	assert_int_equal(sched_next_deadline(s), 502 * MS);
	assert_int_equal(sched_complete(s, 11, 1 * MS, 303 * MS), 0);
	finish(s);

	s = make_watched(1);
	a = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	(void)add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	assert_int_equal(sched_submit(s, 10, a, 1 * MS, 17 * MS, SCHED_YOUNG, 1 * MS), 0);
	assert_int_equal(poll_ids(s, 1 * MS, ids), 1);
	assert_int_equal(sched_next_deadline(s), 201 * MS);
	assert_int_equal(sched_complete(s, 10, 2 * MS, 3 * MS), 0);
	finish(s);
}

static void a_stuck_group_is_revoked_at_its_deadline_and_safety_gets_the_slot(void **state)
{
	struct sched *s = make_watched(1);
	int a = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), b = add(s, SCHED_CLASS_NORMAL, P, false);
	struct sched_domain_stats st;
	struct sched_overdue o[4];
	uint64_t ids[16];

	/* Nothing in flight: no deadline. */
	assert_int_equal(sched_next_deadline(s), UINT64_MAX);
	/* The infotainment's group (bound 5 ms) is granted at 1 ms, then never completes. */
	assert_int_equal(sched_submit(s, 10, b, 4 * MS, 5 * MS, 0, 1 * MS), 0);
	assert_int_equal(poll_ids(s, 1 * MS, ids), 1);
	assert_int_equal(ids[0], 10);
	assert_int_equal(sched_next_deadline(s), 201 * MS);
	/* The cluster's group waits for the slot. */
	assert_int_equal(sched_submit(s, 20, a, 1 * MS, 1 * MS, 0, 2 * MS), 0);
	assert_int_equal(poll_ids(s, 2 * MS, NULL), 0);
	assert_int_equal(sched_overdue(s, 201 * MS - 1, o, 4), 0);
	assert_int_equal(sched_overdue(s, 201 * MS, o, 4), 1);
	assert_int_equal(o[0].id, 10);
	assert_int_equal(o[0].domain, b);
	assert_int_equal(o[0].granted_ns, 1 * MS);
	assert_int_equal(o[0].bound_ns, 5 * MS);
	assert_int_equal(o[0].deadline_ns, 201 * MS);
	/* Revoked: charged the 200 ms it held the slot, counted; the cluster starts at once. */
	assert_int_equal(sched_revoke(s, 10, 201 * MS), 0);
	assert_int_equal(sched_revoke(s, 10, 201 * MS), -ENOENT);
	assert_int_equal(sched_revoke(s, 20, 201 * MS), -ENOENT); /* waiting, not in flight */
	stats(s, b, &st);
	assert_int_equal(st.revoked, 1);
	assert_int_equal(st.inflight, 0);
	assert_int_equal(st.groups, 1);
	assert_true(st.used_ns + st.used_last_period_ns + st.debt_ns >= 200 * MS);
	assert_int_equal(poll_ids(s, 201 * MS, ids), 1);
	assert_int_equal(ids[0], 20);
	stats(s, a, &st);
	assert_int_equal(st.revoked, 0);
	assert_int_equal(sched_complete(s, 20, 1 * MS, 202 * MS), 0);
	finish(s);
}

static void a_revoked_group_is_charged_at_least_its_bound(void **state)
{
	struct sched *s = make_watched(1);
	int b = add(s, SCHED_CLASS_NORMAL, P, false);
	struct sched_domain_stats st;

	assert_int_equal(sched_submit(s, 1, b, 3 * MS, 4 * MS, 0, 0), 0);
	assert_int_equal(poll_ids(s, 0, NULL), 1);
	/* Revoked early (its driver may revoke before the deadline): still its bound. */
	assert_int_equal(sched_revoke(s, 1, 1 * MS), 0);
	stats(s, b, &st);
	assert_int_equal(st.used_ns, 4 * MS);
	finish(s);
}

static void a_late_completion_charges_the_rest_of_its_measured_time(void **state)
{
	struct sched *s = make_watched(1);
	int b = add(s, SCHED_CLASS_NORMAL, P, false);
	struct sched_domain_stats st;

	assert_int_equal(sched_submit(s, 1, b, 3 * MS, 4 * MS, 0, 0), 0);
	assert_int_equal(poll_ids(s, 0, NULL), 1);
	assert_int_equal(sched_revoke(s, 1, 1 * MS), 0); /* charged its bound, 4 ms */
	/* It completes after 10 ms: the 6 ms beyond what was charged, in the same period. */
	assert_int_equal(sched_charge_late(s, b, 6 * MS, 10 * MS), 0);
	stats(s, b, &st);
	assert_int_equal(st.used_ns, 10 * MS);
	assert_int_equal(st.late_ns, 6 * MS);
	assert_int_equal(st.revoked, 1);
	assert_int_equal(st.groups, 1);
	assert_int_equal(st.inflight, 0);
	assert_int_equal(sched_charge_late(s, b, 0, 11 * MS), 0); /* measured under: nothing */
	assert_int_equal(sched_charge_late(s, 5, 1 * MS, 11 * MS), -EINVAL);
	assert_int_equal(sched_charge_late(s, -1, 1 * MS, 11 * MS), -EINVAL);
	finish(s);
}

static void overdue_groups_come_oldest_grant_first(void **state)
{
	struct sched *s = make_watched(0);
	int b = add(s, SCHED_CLASS_NORMAL, P, false);
	struct sched_overdue o[2];

	/* Granted at 3, 1 and 2 ms (slots in that order), none completes. */
	assert_int_equal(sched_submit(s, 3, b, 1 * MS, 1 * MS, 0, 3 * MS), 0);
	assert_int_equal(poll_ids(s, 3 * MS, NULL), 1);
	assert_int_equal(sched_submit(s, 1, b, 1 * MS, 1 * MS, 0, 3 * MS), 0);
	assert_int_equal(sched_submit(s, 2, b, 1 * MS, 1 * MS, 0, 3 * MS), 0);
	assert_int_equal(poll_ids(s, 3 * MS, NULL), 2);
	assert_int_equal(sched_next_deadline(s), 203 * MS);
	/* All three overdue, room for two: the two oldest grants (by slot order on a tie). */
	assert_int_equal(sched_overdue(s, 300 * MS, o, 2), 2);
	assert_int_equal(o[0].id, 3);
	assert_int_equal(o[1].id, 1);
	for (uint64_t id = 1; id <= 3; id++)
		assert_int_equal(sched_revoke(s, id, 300 * MS), 0);
	assert_int_equal(sched_overdue(s, 300 * MS, o, 2), 0);
	assert_int_equal(sched_next_deadline(s), UINT64_MAX);
	finish(s);
}

/*
 * A missed frame is "alone" when no other domain's group was in flight or
 * drew on revoked while it was open (misses_alone, sched_frame's alone):
 * the cluster's own long first frame is; one that waited behind a normal
 * group is not, nor one released while a revoked group of the normal
 * domain still draws.
 */
static void misses_alone_are_the_frames_no_other_domain_ran_beside(void **state)
{
	int c, n;
	struct sched *s = cluster_after_four_frames(&c, &n);
	struct sched_domain_stats st;
	struct sched_frame f[16];
	uint64_t ids[4];
	size_t k, m;

	(void)state;
	assert_int_equal(poll_ids(s, 3 * P + 5 * MS, ids), 0); /* the fourth frame closes */
	assert_int_equal(sched_take_frames(s, f, 16, NULL), 4);
	/* Its own frame of 1.2 periods, nothing else on the GPU. */
	safety_frame(s, c, 104, 4 * P, 2 * MS, P + P / 5);
	/* A normal group on the GPU first (a claim: granted as it comes), for over a period. */
	assert_int_equal(sched_claim(s, 1, n, P, P, 0, 7 * P), 0);
	assert_int_equal(sched_submit(s, 105, c, 1 * MS, 2 * MS, 0, 7 * P + 1 * MS), 0);
	assert_int_equal(poll_ids(s, 7 * P + 1 * MS, ids), 0);
	assert_int_equal(sched_complete(s, 1, P + 2 * MS, 8 * P + 2 * MS), 0);
	assert_int_equal(poll_ids(s, 8 * P + 2 * MS, ids), 1);
	assert_int_equal(sched_complete(s, 105, 1 * MS, 8 * P + 3 * MS), 0);
	/* Released while a revoked normal group still draws: not alone either, however late. */
	sched_set_revoked_running(s, n, 1);
	safety_frame(s, c, 106, 10 * P, 2 * MS, P + P / 5);
	sched_set_revoked_running(s, n, 0);
	/* And alone again once none does. */
	safety_frame(s, c, 107, 13 * P, 2 * MS, P + P / 5);
	assert_int_equal(poll_ids(s, 16 * P, ids), 0);
	stats(s, c, &st);
	/* The two alone are in the cluster's start-up window: counted apart, not judged. */
	assert_int_equal(st.deadline_misses, 2);
	assert_int_equal(st.misses_alone, 0);
	assert_int_equal(st.startup_frames, 2);
	/* Each long frame is missed (rolled over unfinished a period after its release). */
	k = sched_take_frames(s, f, 16, NULL);
	m = 0;
	for (size_t i = 0; i < k; i++) {
		if (!f[i].missed)
			continue;
		assert_true(m < 4);
		assert_int_equal(f[i].alone, m == 0 || m == 3);
		assert_int_equal(f[i].startup, f[i].alone);
		m++;
	}
	assert_int_equal(m, 4);
	finish(s);
}

/*
 * A frame is crossed (not alone) only when another domain's group was on
 * the GPU while work of the frame waited or ran: one granted after the
 * frame's own groups ended, before the idle gap closed it, took nothing
 * from it (test-isolation counted every frame crossed that way, none
 * overlapped). A group of the frame that arrives while another domain's
 * group runs is crossed.
 */
static void a_frame_is_crossed_only_while_its_own_work_waits_or_runs(void **state)
{
	int c, n;
	struct sched *s = cluster_after_four_frames(&c, &n);
	struct sched_frame f[16];
	uint64_t ids[4];

	(void)state;
	assert_int_equal(poll_ids(s, 3 * P + 5 * MS, ids), 0);
	assert_int_equal(sched_take_frames(s, f, 16, NULL), 4);
	/* Its group done at 4P + 1 ms; a normal group claimed 0.5 ms later, in the gap. */
	safety_frame(s, c, 104, 4 * P, 2 * MS, 1 * MS);
	assert_int_equal(sched_claim(s, 1, n, 1 * MS, 2 * MS, 0, 4 * P + 1500 * US), 0);
	assert_int_equal(sched_complete(s, 1, 1 * MS, 4 * P + 2500 * US), 0);
	assert_int_equal(poll_ids(s, 4 * P + 5 * MS, ids), 0);
	/* Its next frame: a second group arrives while a normal group runs. */
	safety_frame(s, c, 105, 5 * P, 2 * MS, 1 * MS);
	assert_int_equal(sched_claim(s, 2, n, 1 * MS, 2 * MS, 0, 5 * P + 1500 * US), 0);
	assert_int_equal(sched_submit(s, 106, c, 1 * MS, 2 * MS, 0, 5 * P + 2 * MS), 0);
	assert_int_equal(sched_complete(s, 2, 1 * MS, 5 * P + 2500 * US), 0);
	assert_int_equal(poll_ids(s, 5 * P + 2500 * US, ids), 1);
	assert_int_equal(sched_complete(s, 106, 1 * MS, 5 * P + 3500 * US), 0);
	assert_int_equal(poll_ids(s, 5 * P + 8 * MS, ids), 0);
	assert_int_equal(sched_take_frames(s, f, 16, NULL), 2);
	assert_true(f[0].alone);
	assert_false(f[1].alone);
	finish(s);
}

/* make_watched(1) with a normal domain's allowance capped at @cap_ns. */
static struct sched *make_capped(uint64_t cap_ns)
{
	struct sched_watchdog w = default_watchdog;
	struct sched_params p = {.policy = SCHED_POLICY_BUDGET,
				 .max_inflight = 1,
				 .max_defer_ns = 100 * MS,
				 .watchdog = w};
	struct sched *s;

	p.watchdog.normal_cap_ns = cap_ns;
	s = sched_create(&p, 0);
	assert_non_null(s);
	memset(&warned, 0, sizeof(warned));
	sched_set_warn(s, on_warn, NULL);
	return s;
}

/*
 * A young group whose bound its history raised to 2 s (what a deceiving
 * client's escalating groups did: the watchdog's limit would be 8 s) is
 * granted at a gap's start; it holds the slot only as long as the gap
 * leaves room for the cluster's next frame: overdue before the frame's
 * latest start, revoked there, and the cluster's group starts at once
 * and meets its deadline.
 */
static void a_normal_group_holds_the_gpu_no_longer_than_the_gap_left_at_its_grant(void **state)
{
	struct sched *s = make_capped(SCHED_WATCHDOG_NORMAL_CAP_NS);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false);
	struct sched_domain_stats st;
	struct sched_overdue o[2];
	uint64_t ids[4], deadline, k = 0, granted = 0;

	for (; k < 4; k++)
		safety_frame(s, c, 100 + k, k * P, 2 * MS, 1 * MS);
	assert_int_equal(sched_submit(s, 1, n, 2000 * MS, 2000 * MS, SCHED_YOUNG, 3 * P + 1 * MS),
			 0);
	/* It waits max_defer for room for its likely cost, then starts at a gap's start. */
	for (; k < 20 && !granted; k++) {
		safety_frame(s, c, 100 + k, k * P, 2 * MS, 1 * MS);
		if (poll_ids(s, k * P + 1 * MS, ids) == 1)
			granted = k * P + 1 * MS;
	}
	assert_true(granted >= 3 * P + 1 * MS + 100 * MS);
	assert_int_equal(ids[0], 1);
	deadline = sched_next_deadline(s);
	/* Past the grant, before the next frame's latest start (its deadline less its bound). */
	assert_true(deadline > granted);
	assert_true(deadline + 2 * MS <= k * P + P);
	assert_int_equal(sched_overdue(s, deadline - 1, o, 2), 0);
	assert_int_equal(sched_overdue(s, deadline, o, 2), 1);
	assert_int_equal(sched_revoke(s, 1, deadline), 0);
	assert_int_equal(sched_submit(s, 100 + k, c, 1 * MS, 2 * MS, 0, deadline), 0);
	assert_int_equal(poll_ids(s, deadline, ids), 1);
	assert_int_equal(ids[0], 100 + k);
	assert_int_equal(sched_complete(s, 100 + k, 1 * MS, deadline + 1 * MS), 0);
	stats(s, c, &st);
	assert_int_equal(st.deadline_misses, 0);
	finish(s);
}

/*
 * Where allowances are on, a young normal group needs room for its
 * prediction at a gap's start, not for its bound (the longest group its
 * context had: a shader compile): predicted 2 ms, bound 60 ms, after a
 * safety frame that took 8 ms, it starts at once; the allowance revokes
 * it at the gap's end if it runs long. Without allowances it waits
 * (a_young_group_starts_at_a_gap_start_where_its_likely_cost_fits).
 */
static void a_young_group_needs_room_for_its_prediction_where_allowances_are_on(void **state)
{
	struct sched *s = make_capped(SCHED_WATCHDOG_NORMAL_CAP_NS);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false);
	uint64_t ids[4];

	for (uint64_t k = 0; k < 4; k++)
		safety_frame(s, c, 100 + k, k * P, 2 * MS, 1 * MS);
	assert_int_equal(sched_submit(s, 1, n, 2 * MS, 60 * MS, SCHED_YOUNG, 3 * P + 4 * MS), 0);
	safety_frame(s, c, 104, 4 * P, 2 * MS, 8 * MS);
	assert_int_equal(poll_ids(s, 4 * P + 8 * MS, ids), 1);
	assert_int_equal(ids[0], 1);
	assert_true(sched_next_deadline(s) < 4 * P + 8 * MS + 60 * MS);
	assert_int_equal(sched_complete(s, 1, 2 * MS, 4 * P + 10 * MS), 0);
	finish(s);
}

/*
 * Grants normal domain @n's group 1 (@flags, predicted 1 ms, bound 2 ms)
 * at @t; its watchdog deadline. Ends @s.
 */
static uint64_t deadline_of_one(struct sched *s, int n, uint32_t flags, uint64_t t)
{
	uint64_t deadline;

	assert_int_equal(sched_submit(s, 1, n, 1 * MS, 2 * MS, flags, t), 0);
	assert_int_equal(poll_ids(s, t, NULL), 1);
	deadline = sched_next_deadline(s);
	assert_int_equal(sched_complete(s, 1, 1 * MS, t + 1 * MS), 0);
	finish(s);
	return deadline;
}

/*
 * The deadline of a normal group granted at 5P + 2 ms after five cluster
 * frames (bound 2 ms, took 1 ms), the fifth of which took @fifth_took
 * while a revoked normal group drew on beside it when @beside.
 */
static uint64_t allowance_after(bool beside, uint64_t fifth_took)
{
	struct sched *s = make_capped(SCHED_WATCHDOG_NORMAL_CAP_NS);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false);

	for (uint64_t k = 0; k < 4; k++)
		safety_frame(s, c, 100 + k, k * P, 2 * MS, 1 * MS);
	sched_set_revoked_running(s, n, beside);
	safety_frame(s, c, 104, 4 * P, 2 * MS, fifth_took);
	sched_set_revoked_running(s, n, 0);
	assert_int_equal(poll_ids(s, 4 * P + fifth_took + 3 * MS, NULL), 0); /* the frame closes */
	safety_frame(s, c, 105, 5 * P, 2 * MS, 1 * MS);
	return deadline_of_one(s, n, 0, 5 * P + 2 * MS);
}

/*
 * A normal group past its allowance is revoked and draws on beside the
 * cluster's next frame (the GPU cannot be preempted), which then takes
 * longer than its cost C (on llvmpipe 3 to 6 times: bench/faults,
 * escalating). So the allowance leaves room for what the cluster's
 * frames took beside a revoked group: one that took 8 ms, against C =
 * 2 ms, revokes the next group 6 ms earlier; a frame as long without a
 * revoked group beside it changes nothing here (it raises C by its
 * median only).
 */
static void a_frame_drawn_beside_a_revoked_group_makes_revocations_earlier(void **state)
{
	uint64_t plain = allowance_after(false, 8 * MS), beside = allowance_after(true, 8 * MS);

	(void)state;
	assert_int_equal(allowance_after(false, 1 * MS), plain);
	assert_int_equal(plain - beside, 6 * MS);
}

/* The deadline of a normal group (@flags) of bound 2 ms granted at 4P + 2 ms, after four frames. */
static uint64_t deadline_after_a_frame(uint32_t flags)
{
	struct sched *s = make_capped(SCHED_WATCHDOG_NORMAL_CAP_NS);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false);

	for (uint64_t k = 0; k < 5; k++)
		safety_frame(s, c, 100 + k, k * P, 2 * MS, 1 * MS);
	return deadline_of_one(s, n, flags, 4 * P + 2 * MS);
}

/*
 * A young group's cost is unknown: it holds the slot until the cluster's
 * next release, where it is revoked and the frame starts at once with its
 * whole deadline; a group of known cost until the frame's latest start.
 */
static void a_young_group_holds_the_gpu_until_the_next_safety_release(void **state)
{
	(void)state;
	assert_int_equal(deadline_after_a_frame(SCHED_YOUNG), 5 * P);
	assert_true(deadline_after_a_frame(0) > 5 * P + 8 * MS);
}

/*
 * A cluster silent for a while (past SCHED_SILENT_EXPECT_PERIODS after its last
 * release) has no release expected, so no frame to protect; it is still
 * owed its budget each period: a young normal group holds the slot one
 * cluster period at most, not the class's 250 ms cap. One of known cost
 * keeps the watchdog's limit (its 200 ms floor here).
 */
static void
a_young_group_holds_the_gpu_a_safety_period_at_most_when_no_release_is_expected(void **state)
{
	struct sched *s = make_capped(SCHED_WATCHDOG_NORMAL_CAP_NS);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false), n = add(s, SCHED_CLASS_NORMAL, P, false);
	uint64_t t = (4 + SCHED_SILENT_EXPECT_PERIODS) * P;

	(void)state;
	for (uint64_t k = 0; k < 4; k++)
		safety_frame(s, c, 100 + k, k * P, 2 * MS, 1 * MS);
	assert_int_equal(sched_submit(s, 1, n, 1 * MS, 2 * MS, SCHED_YOUNG, t), 0);
	assert_int_equal(poll_ids(s, t, NULL), 1);
	assert_int_equal(sched_next_deadline(s), t + P);
	assert_int_equal(sched_complete(s, 1, 1 * MS, t + 1 * MS), 0);
	assert_int_equal(sched_submit(s, 2, n, 1 * MS, 2 * MS, 0, t + 2 * MS), 0);
	assert_int_equal(poll_ids(s, t + 2 * MS, NULL), 1);
	assert_int_equal(sched_next_deadline(s), t + 2 * MS + SCHED_WATCHDOG_FLOOR_NS);
	assert_int_equal(sched_complete(s, 2, 1 * MS, t + 3 * MS), 0);
	finish(s);
}

/*
 * What workers cut their long groups by (the grant board's safety_gap_ns):
 * 0 while no safety domain releases frames, so that nothing is cut for
 * nothing; once the cluster runs, the largest gap its frames leave as
 * check 3 sees them: from one frame's end to the next one's latest start,
 * less than its period and deadline.
 */
static void the_safety_gap_is_zero_until_a_safety_domain_runs(void **state)
{
	struct sched *s = make_capped(SCHED_WATCHDOG_NORMAL_CAP_NS);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);
	uint64_t gap;

	(void)state;
	add(s, SCHED_CLASS_NORMAL, P, false);
	assert_int_equal(sched_safety_gap(s, 0), 0);
	for (uint64_t k = 0; k < 4; k++)
		safety_frame(s, c, 100 + k, k * P, 2 * MS, 1 * MS);
	gap = sched_safety_gap(s, 4 * P);
	assert_true(gap > 0 && gap < 2 * P);
	finish(s);
}

/* With no safety domain to protect, the class's cap: 250 ms, not 4 x a 1 s bound. */
static void a_normal_group_holds_the_gpu_at_most_the_cap(void **state)
{
	struct sched *s = make_capped(SCHED_WATCHDOG_NORMAL_CAP_NS);
	int n = add(s, SCHED_CLASS_NORMAL, P, false);

	assert_int_equal(sched_submit(s, 1, n, 1000 * MS, 1000 * MS, 0, 5 * MS), 0);
	assert_int_equal(poll_ids(s, 5 * MS, NULL), 1);
	assert_int_equal(sched_next_deadline(s), 5 * MS + SCHED_WATCHDOG_NORMAL_CAP_NS);
	assert_int_equal(sched_revoke(s, 1, 5 * MS + SCHED_WATCHDOG_NORMAL_CAP_NS), 0);
	finish(s);
}

/* A safety domain's group keeps the watchdog's limit (its floor here); cap 0 turns allowances off.
 */
static void only_normal_groups_get_an_allowance(void **state)
{
	struct sched *s = make_capped(SCHED_WATCHDOG_NORMAL_CAP_NS);
	int c = add(s, SCHED_CLASS_SAFETY, 4 * MS, false);

	assert_int_equal(sched_submit(s, 1, c, 1 * MS, 300 * MS, 0, 0), 0);
	assert_int_equal(poll_ids(s, 0, NULL), 1);
	assert_int_equal(sched_next_deadline(s), 1200 * MS);
	assert_int_equal(sched_complete(s, 1, 1 * MS, 1 * MS), 0);
	finish(s);
	s = make_capped(0);
	c = add(s, SCHED_CLASS_NORMAL, P, false);
	assert_int_equal(sched_submit(s, 1, c, 1000 * MS, 1000 * MS, 0, 0), 0);
	assert_int_equal(poll_ids(s, 0, NULL), 1);
	assert_int_equal(sched_next_deadline(s), 4000 * MS);
	assert_int_equal(sched_complete(s, 1, 1 * MS, 1 * MS), 0);
	finish(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(fifo_grants_in_arrival_order_up_to_max_inflight),
	    cmocka_unit_test(new_params_rule_the_next_decisions),
	    cmocka_unit_test(watchdog_limit_is_the_largest_of_its_three_terms),
	    cmocka_unit_test(a_scheduler_without_watchdog_finds_nothing_overdue),
	    cmocka_unit_test(a_stuck_group_is_revoked_at_its_deadline_and_safety_gets_the_slot),
	    cmocka_unit_test(a_young_group_of_the_only_safety_domain_has_a_second),
	    cmocka_unit_test(a_revoked_group_is_charged_at_least_its_bound),
	    cmocka_unit_test(a_late_completion_charges_the_rest_of_its_measured_time),
	    cmocka_unit_test(overdue_groups_come_oldest_grant_first),
	    cmocka_unit_test(a_normal_group_holds_the_gpu_no_longer_than_the_gap_left_at_its_grant),
	    cmocka_unit_test(a_normal_group_holds_the_gpu_at_most_the_cap),
	    cmocka_unit_test(the_safety_gap_is_zero_until_a_safety_domain_runs),
	    cmocka_unit_test(a_young_group_needs_room_for_its_prediction_where_allowances_are_on),
	    cmocka_unit_test(a_frame_drawn_beside_a_revoked_group_makes_revocations_earlier),
	    cmocka_unit_test(a_young_group_holds_the_gpu_until_the_next_safety_release),
	    cmocka_unit_test(
		a_young_group_holds_the_gpu_a_safety_period_at_most_when_no_release_is_expected),
	    cmocka_unit_test(only_normal_groups_get_an_allowance),
	    cmocka_unit_test(misses_alone_are_the_frames_no_other_domain_ran_beside),
	    cmocka_unit_test(a_frame_is_crossed_only_while_its_own_work_waits_or_runs),
	    cmocka_unit_test(a_group_needs_budget_for_its_bound),
	    cmocka_unit_test(an_idle_gpu_goes_to_whoever_waits_unless_strict),
	    cmocka_unit_test(budgets_replenish_and_overruns_become_debt),
	    cmocka_unit_test(a_group_that_would_delay_the_next_safety_frame_waits),
	    cmocka_unit_test(a_frame_with_its_usual_groups_leaves_the_gpu_at_once),
	    cmocka_unit_test(a_frame_short_of_its_groups_keeps_room_for_one_more),
	    cmocka_unit_test(a_rolled_over_frame_still_expects_its_own_group),
	    cmocka_unit_test(an_early_release_makes_the_next_expected_earlier),
	    cmocka_unit_test(the_offer_holds_the_checks_for_its_whole_span),
	    cmocka_unit_test(a_frame_rolled_over_before_its_deadline_is_judged_when_done),
	    cmocka_unit_test(a_group_of_unknown_cost_starts_only_in_a_safety_gap),
	    cmocka_unit_test(a_guard_keeps_room_for_overruns),
	    cmocka_unit_test(a_young_group_starts_at_the_next_gap_start),
	    cmocka_unit_test(a_young_group_starts_at_a_gap_start_where_its_likely_cost_fits),
	    cmocka_unit_test(a_safety_group_over_budget_does_not_wait_for_a_young_group),
	    cmocka_unit_test(a_young_group_predicted_over_a_strict_budget_runs),
	    cmocka_unit_test(a_run_of_groups_without_output_is_no_frame),
	    cmocka_unit_test(a_late_frame_counts_as_a_deadline_miss),
	    cmocka_unit_test(closed_frames_are_logged_for_the_trace),
	    cmocka_unit_test(untaken_frames_are_dropped_oldest_first),
	    cmocka_unit_test(the_next_release_starts_a_new_frame_even_without_a_gap),
	    cmocka_unit_test(a_late_arrival_does_not_push_the_next_release_back),
	    cmocka_unit_test(an_oversize_group_runs_in_a_gap_after_max_defer),
	    cmocka_unit_test(an_oversize_group_can_be_refused_as_unschedulable),
	    cmocka_unit_test(an_oversize_group_is_refused_where_a_draw_in_it_could_not_be_cut),
	    cmocka_unit_test(a_group_oversize_by_bounds_alone_is_not_refused),
	    cmocka_unit_test(a_group_oversize_by_bounds_alone_waits_for_room_at_a_late_gap_start),
	    cmocka_unit_test(a_group_oversize_by_bounds_alone_starts_where_its_likely_cost_fits),
	    cmocka_unit_test(a_group_oversize_by_bounds_alone_waits_at_most_max_defer),
	    cmocka_unit_test(a_safety_domain_drawing_past_its_budget_starves_no_one),
	    cmocka_unit_test(a_safety_domain_over_budget_in_its_first_frames_stays_protected),
	    cmocka_unit_test(a_safety_frame_is_expected_from_its_context_s_creation),
	    cmocka_unit_test(a_silent_safety_domain_is_expected_back),
	    cmocka_unit_test(two_safety_domains_never_keep_each_other_waiting),
	    cmocka_unit_test(a_young_group_starts_after_the_frame_whose_next_release_comes_first),
	    cmocka_unit_test(a_learned_period_follows_rate_changes_within_ten_frames),
	    cmocka_unit_test(a_learned_period_on_a_coarse_timer_is_followed_at_once),
	    cmocka_unit_test(room_is_kept_for_a_learned_domain_s_shortest_period),
	    cmocka_unit_test(a_learned_domain_s_frames_are_judged_against_its_period),
	    cmocka_unit_test(a_safety_domain_s_start_up_alone_is_not_judged),
	    cmocka_unit_test(a_group_without_output_after_its_frame_does_not_move_the_grid),
	    cmocka_unit_test(a_frame_drawn_in_time_is_no_miss_when_its_teardown_waits),
	    cmocka_unit_test(set_budget_applies_at_the_next_period_and_refuses_what_cannot_fit),
	    cmocka_unit_test(cancelled_groups_free_their_slot),
	    cmocka_unit_test(bad_parameters_are_refused),
	    cmocka_unit_test(debt_after_idle_periods_is_what_is_still_owed),
	    cmocka_unit_test(invariants_stay_silent_in_a_long_mixed_run),
	    cmocka_unit_test(a_claim_without_a_free_slot_breaks_max_inflight),
	    cmocka_unit_test(a_time_that_goes_back_is_counted_and_taken_as_the_latest),
	    cmocka_unit_test(budget_arithmetic_saturates_rather_than_wraps),
	    cmocka_unit_test(every_invariant_has_a_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
