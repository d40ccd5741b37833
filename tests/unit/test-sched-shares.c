// SPDX-License-Identifier: MIT
/*
 * Tests of the weighted shares among normal domains (scheduler.h,
 * sched_shares.c) on a mock GPU with one slot: each normal domain has a
 * client that keeps it busy, sending its next group a little after its
 * last one ended (its CPU time), beside a 60 Hz safety domain. GPU time
 * goes by weight whatever the groups' sizes, within 5 % over a second; an
 * idle domain's share goes to the others; a domain back from idle does
 * not collect the time it did not use; the grant board offers a domain
 * ahead of its share nothing while the one behind is about to send.
 */
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
/* The mock clock's step. */
#define STEP (50 * US)

/* One client of the mock GPU: a group of @group_ns at a time, the next @think_ns after. */
struct client {
	int domain;
	uint64_t group_ns, think_ns;
	bool on;	   /* sends groups */
	bool busy;	   /* a group waits or runs */
	bool running;	   /* it runs, until @end */
	uint64_t id, next; /* its group's id; when it may send the next */
	uint64_t end;
	uint64_t used; /* GPU time its groups took */
	unsigned done; /* groups it completed */
	/* Every @slow_every-th group's next comes @slow_think_ns after it (0: never). */
	unsigned slow_every;
	uint64_t slow_think_ns;
};

struct rig {
	struct sched *s;
	int safety;
	struct client c[4];
	int n;
	uint64_t next_id, t;
};

static void rig_init(struct rig *g, const uint32_t *weights, const uint64_t *group_ns, int n)
{
	struct sched_params p = {.policy = SCHED_POLICY_BUDGET,
				 .max_inflight = 1,
				 .max_defer_ns = 100 * MS,
				 .oversize = SCHED_OVERSIZE_RUN};
	struct sched_domain_params sp = {
	    .class = SCHED_CLASS_SAFETY, .period_ns = P, .budget_ns = 4 * MS, .deadline_ns = P};

	memset(g, 0, sizeof(*g));
	g->s = sched_create(&p, 0);
	assert_non_null(g->s);
	g->safety = sched_add_domain(g->s, &sp, 0);
	assert_true(g->safety >= 0);
	g->n = n;
	g->next_id = 1;
	for (int i = 0; i < n; i++) {
		struct sched_domain_params np = {.class = SCHED_CLASS_NORMAL,
						 .period_ns = P,
						 .budget_ns = P,
						 .deadline_ns = P,
						 .weight = weights[i]};

		g->c[i] =
		    (struct client){.group_ns = group_ns[i], .think_ns = 200 * US, .on = true};
		g->c[i].domain = sched_add_domain(g->s, &np, 0);
		assert_true(g->c[i].domain >= 0);
	}
}

/* The safety domain's frame: a 2 ms group at each release, granted when it may start. */
static uint64_t safety_id, safety_end;
static bool safety_busy, safety_running;

static void granted(struct rig *g, uint64_t id)
{
	if (safety_busy && id == safety_id) {
		safety_running = true;
		safety_end = g->t + 2 * MS;
		return;
	}
	for (int i = 0; i < g->n; i++) {
		if (g->c[i].busy && g->c[i].id == id) {
			g->c[i].running = true;
			g->c[i].end = g->t + g->c[i].group_ns;
			return;
		}
	}
	fail_msg("granted %llu, which nobody sent", (unsigned long long)id);
}

/* Runs the rig until @until: completions, arrivals, the scheduler's decisions. */
static void rig_run(struct rig *g, uint64_t until)
{
	struct sched_decision dec[8];

	for (; g->t < until; g->t += STEP) {
		if (safety_running && safety_end <= g->t) {
			assert_int_equal(sched_complete(g->s, safety_id, 2 * MS, safety_end), 0);
			safety_busy = safety_running = false;
		}
		for (int i = 0; i < g->n; i++) {
			struct client *c = &g->c[i];

			if (c->running && c->end <= g->t) {
				assert_int_equal(sched_complete(g->s, c->id, c->group_ns, c->end),
						 0);
				c->used += c->group_ns;
				c->busy = c->running = false;
				c->next = c->end + (c->slow_every && ++c->done % c->slow_every == 0
							? c->slow_think_ns
							: c->think_ns);
			}
		}
		if (!safety_busy && g->t % P < STEP) {
			safety_id = g->next_id++;
			assert_int_equal(
			    sched_submit(g->s, safety_id, g->safety, MS, 2 * MS, 0, g->t), 0);
			safety_busy = true;
		}
		for (int i = 0; i < g->n; i++) {
			struct client *c = &g->c[i];

			if (!c->on || c->busy || g->t < c->next)
				continue;
			c->id = g->next_id++;
			assert_int_equal(sched_submit(g->s, c->id, c->domain, c->group_ns,
						      c->group_ns + c->group_ns / 2, 0, g->t),
					 0);
			c->busy = true;
		}
		for (size_t k = 0, n = sched_poll(g->s, g->t, dec, 8); k < n; k++) {
			assert_int_equal(dec[k].verdict, SCHED_GRANTED);
			granted(g, dec[k].id);
		}
	}
}

/* GPU time of each client from here on (the clients' counts are zeroed). */
static void rig_zero(struct rig *g)
{
	for (int i = 0; i < g->n; i++)
		g->c[i].used = 0;
}

/* @a's GPU time is @ratio times @b's, within 5 %. */
static void in_ratio(const struct client *a, const struct client *b, double ratio)
{
	double got = (double)a->used / (double)(b->used ? b->used : 1);

	if (got < ratio * 0.95 || got > ratio * 1.05)
		fail_msg("GPU time %llu us against %llu us: %.3f, not %.3f within 5 %%",
			 (unsigned long long)(a->used / US), (unsigned long long)(b->used / US),
			 got, ratio);
}

static void rig_finish(struct rig *g)
{
	for (unsigned i = 0; i < SCHED_INV_COUNT; i++)
		assert_int_equal(sched_invariant_violations(g->s, (enum sched_invariant)i), 0);
	sched_destroy(g->s);
	safety_busy = safety_running = false;
}

/* What shares() runs: the weights and group sizes of two domains, the first one's slowness. */
struct share_case {
	uint32_t w[2];
	uint64_t size[2];
	unsigned slow_every; /* the first domain's every slow_every-th group comes late */
	uint64_t slow_think_ns;
	uint64_t run_ns; /* counted after 200 ms */
	double ratio;	 /* the first domain's GPU time over the second's */
};

/* Runs @c's two domains and checks their GPU time's ratio; returns the GPU time of both. */
static uint64_t shares(const struct share_case *c)
{
	struct rig g;
	uint64_t both;

	rig_init(&g, c->w, c->size, 2);
	g.c[0].slow_every = c->slow_every;
	g.c[0].slow_think_ns = c->slow_think_ns;
	rig_run(&g, 200 * MS);
	rig_zero(&g);
	rig_run(&g, 200 * MS + c->run_ns);
	in_ratio(&g.c[0], &g.c[1], c->ratio);
	both = g.c[0].used + g.c[1].used;
	rig_finish(&g);
	return both;
}

/* Weights 3 and 1, groups alike: three quarters and a quarter of what the safety domain leaves. */
static void backlogged_domains_share_by_weight(void **state)
{
	const struct share_case c = {{3, 1}, {2 * MS, 2 * MS}, 0, 0, 1000 * MS, 3.0};

	(void)state;
	/* The GPU stayed busy: the two got most of what the safety domain left. */
	assert_true(shares(&c) > 700 * MS);
}

/*
 * The weight-3 domain's client is slow to send its next group now and
 * then (every second one after 1.5 ms, past a fixed 1 ms wait, which gave
 * 2.08 to 1 here and 2.75 to 1 in bench/displays): the wait grows with
 * what it is owed, and the shares hold.
 */
static void a_domain_slow_to_send_now_and_then_keeps_its_share(void **state)
{
	const struct share_case c = {{3, 1}, {2 * MS, 2 * MS}, 2, 1500 * US, 1000 * MS, 3.0};

	(void)state;
	shares(&c);
}

/*
 * The weight-3 domain's client now and then sends its next group only
 * after the wait for it is over (every fourth one after 5 ms): the other
 * domain's group runs meanwhile, and what the weight-3 domain is owed is
 * kept until it is made up, not forgiven because it seemed idle for a
 * moment (it was counted idle after 1 ms until 2026-11-29).
 */
static void what_a_domain_is_owed_is_kept_over_a_pause(void **state)
{
	const struct share_case c = {{3, 1}, {2 * MS, 2 * MS}, 4, 5 * MS, 1000 * MS, 3.0};

	(void)state;
	shares(&c);
}

/*
 * Groups of 10 ms, over half a period: a domain whose budget is its whole
 * period has no cap, and its second group of a period does not give way
 * to the other domain for want of budget (bench/displays: 2.77 to 1).
 */
static void long_groups_share_by_weight_too(void **state)
{
	const struct share_case c = {{3, 1}, {10 * MS, 10 * MS}, 0, 0, 2000 * MS, 3.0};

	(void)state;
	shares(&c);
}

/*
 * A domain that keeps itself behind its share to keep the other waiting:
 * a 0.5 ms group, its next 3.5 ms after. The waits for it are paid from
 * its hold credit, half its GPU time, so the other domain, which keeps the
 * GPU busy, gets most of the GPU, not the gaps between its groups only.
 */
static void a_domain_cannot_keep_the_others_waiting_by_being_slow(void **state)
{
	const uint32_t w[] = {1, 1};
	const uint64_t size[] = {500 * US, 2 * MS};
	struct rig g;

	(void)state;
	rig_init(&g, w, size, 2);
	g.c[0].think_ns = 3500 * US;
	rig_run(&g, 200 * MS);
	rig_zero(&g);
	rig_run(&g, 1200 * MS);
	if (g.c[1].used < 600 * MS)
		fail_msg("the busy domain got %llu ms of 1000 beside one slow on purpose (%llu ms)",
			 (unsigned long long)(g.c[1].used / MS),
			 (unsigned long long)(g.c[0].used / MS));
	rig_finish(&g);
}

/* Weights 1 and 1, groups of 1 ms and 4 ms: equal GPU time, not equal groups. */
static void shares_count_time_not_groups(void **state)
{
	const struct share_case c = {{1, 1}, {1 * MS, 4 * MS}, 0, 0, 1000 * MS, 1.0};

	(void)state;
	shares(&c);
}

/*
 * Work-conserving: while the weight-3 domain is idle, the weight-1 one
 * gets all the safety domain leaves. Back, the weight-3 domain gets three
 * quarters from then on, not the second it missed on top.
 */
static void an_idle_domain_s_share_goes_to_the_others_and_is_not_banked(void **state)
{
	const uint32_t w[] = {3, 1};
	const uint64_t size[] = {2 * MS, 2 * MS};
	struct rig g;

	(void)state;
	rig_init(&g, w, size, 2);
	g.c[0].on = false;
	rig_run(&g, 1000 * MS);
	assert_int_equal(g.c[0].used, 0);
	assert_true(g.c[1].used > 750 * MS);
	g.c[0].on = true;
	rig_zero(&g);
	rig_run(&g, 2000 * MS);
	in_ratio(&g.c[0], &g.c[1], 3.0);
	rig_finish(&g);
}

/*
 * The grant board, with weights 3 and 1 and no safety domain: the
 * weight-3 domain's group ends at 6 ms, behind the other's share (0.67 +
 * 0.67 ms of virtual time against 2); the weight-1 domain, ahead, is
 * offered nothing for 1 ms and what the other is owed (at most the other's
 * hold credit), and its group sent meanwhile waits; then both are offered
 * a slot.
 */
static void the_board_offers_nothing_to_a_domain_ahead_of_its_share(void **state)
{
	struct sched_params p = {.policy = SCHED_POLICY_BUDGET, .max_inflight = 1};
	struct sched_domain_params a = {.class = SCHED_CLASS_NORMAL,
					.period_ns = P,
					.budget_ns = P,
					.deadline_ns = P,
					.weight = 3},
				   b = a;
	struct sched *s = sched_create(&p, 0);
	struct sched_decision dec[4];
	uint64_t bound[2];
	int da, db;

	(void)state;
	b.weight = 1;
	da = sched_add_domain(s, &a, 0);
	db = sched_add_domain(s, &b, 0);
	assert_int_equal(sched_submit(s, 1, da, 2 * MS, 3 * MS, 0, 0), 0);
	assert_int_equal(sched_submit(s, 2, db, 2 * MS, 3 * MS, 0, 0), 0);
	assert_int_equal(sched_poll(s, 0, dec, 4), 1);
	assert_int_equal(dec[0].id, 1);
	assert_int_equal(sched_complete(s, 1, 2 * MS, 2 * MS), 0);
	assert_int_equal(sched_submit(s, 3, da, 2 * MS, 3 * MS, 0, 2 * MS + 100 * US), 0);
	/* Both wait: the weight-1 domain is behind (0 against 0.67 ms), its group first. */
	assert_int_equal(sched_poll(s, 2 * MS + 100 * US, dec, 4), 1);
	assert_int_equal(dec[0].id, 2);
	assert_int_equal(sched_complete(s, 2, 2 * MS, 4 * MS + 100 * US), 0);
	assert_int_equal(sched_poll(s, 4 * MS + 100 * US, dec, 4), 1);
	assert_int_equal(dec[0].id, 3);
	assert_int_equal(sched_complete(s, 3, 2 * MS, 6 * MS + 100 * US), 0);
	assert_true(sched_offer(s, 6 * MS + 200 * US, 7 * MS, false, bound));
	assert_int_equal(bound[db], 0);
	assert_true(bound[da] > 0);
	assert_int_equal(sched_submit(s, 4, db, 2 * MS, 3 * MS, 0, 6 * MS + 300 * US), 0);
	assert_int_equal(sched_poll(s, 6 * MS + 300 * US, dec, 4), 0);
	/*
	 * It waits 1 ms and what the weight-3 domain is owed, (2 - 4/3 ms) x 3
	 * less the 0.5 ms slack, 1.5 ms; but no longer than that domain's hold
	 * credit, half of its 4 ms of GPU time: the wait ends as an event at
	 * 8.1 ms.
	 */
	assert_int_equal(sched_poll(s, 8 * MS, dec, 4), 0);
	assert_int_equal(sched_next_event(s, 8 * MS), 8 * MS + 100 * US);
	assert_int_equal(sched_poll(s, 8 * MS + 100 * US, dec, 4), 1);
	assert_int_equal(dec[0].id, 4);
	assert_int_equal(sched_complete(s, 4, 2 * MS, 10 * MS + 100 * US), 0);
	assert_true(sched_offer(s, 10 * MS + 200 * US, 11 * MS, false, bound));
	assert_true(bound[da] > 0 && bound[db] > 0);
	for (unsigned i = 0; i < SCHED_INV_COUNT; i++)
		assert_int_equal(sched_invariant_violations(s, (enum sched_invariant)i), 0);
	sched_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(backlogged_domains_share_by_weight),
	    cmocka_unit_test(shares_count_time_not_groups),
	    cmocka_unit_test(a_domain_slow_to_send_now_and_then_keeps_its_share),
	    cmocka_unit_test(what_a_domain_is_owed_is_kept_over_a_pause),
	    cmocka_unit_test(long_groups_share_by_weight_too),
	    cmocka_unit_test(a_domain_cannot_keep_the_others_waiting_by_being_slow),
	    cmocka_unit_test(an_idle_domain_s_share_goes_to_the_others_and_is_not_banked),
	    cmocka_unit_test(the_board_offers_nothing_to_a_domain_ahead_of_its_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
