// SPDX-License-Identifier: MIT
/*
 * Tests of command-group timing (start = max(dispatch, previous end),
 * Schnitzer et al., Concepts for Execution Time Prediction of 3D GPU
 * Rendering, §IV-F), of in-order completion, of the max_inflight limit,
 * and of what a group abandoned on the GPU (its context destroyed before
 * its fence) is charged: never 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "worker/groups.h"

struct sink {
	struct wire_group records[16];
	size_t n;
};

static void collect(const struct wire_group *r, const struct group_info *info, void *data)
{
	struct sink *s = data;

	assert_true(s->n < 16);
	s->records[s->n++] = *r;
}

static const struct group_info no_cmds;

static void idle_gpu_starts_a_group_at_its_dispatch(void **state)
{
	struct groups *g = groups_create(1, 1);
	struct sink s = {.n = 0};
	uint64_t seq = groups_dispatch(g, 1000, &no_cmds);

	assert_int_equal(seq, 1);
	assert_int_equal(groups_complete(g, seq, 1500, collect, &s), 1);
	assert_int_equal(s.records[0].dispatch_ns, 1000);
	assert_int_equal(s.records[0].start_ns, 1000);
	assert_int_equal(s.records[0].end_ns, 1500);
	assert_int_equal(s.records[0].hdr.type, WIRE_GROUP);
	assert_int_equal(s.records[0].hdr.size, sizeof(struct wire_group));
	groups_destroy(g);
}

static void queued_group_starts_when_the_previous_one_ends(void **state)
{
	struct groups *g = groups_create(7, 0);
	struct sink s = {.n = 0};

	groups_dispatch(g, 1000, &no_cmds);
	groups_dispatch(g, 1100, &no_cmds); /* dispatched while the first runs */
	groups_complete(g, 1, 2000, collect, &s);
	groups_complete(g, 2, 2600, collect, &s);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.records[1].dispatch_ns, 1100);
	assert_int_equal(s.records[1].start_ns, 2000);
	assert_int_equal(s.records[1].end_ns, 2600);
	assert_int_equal(s.records[1].ctx_id, 7);
	groups_destroy(g);
}

static void later_fence_completes_every_earlier_group(void **state)
{
	struct groups *g = groups_create(1, 0);
	struct sink s = {.n = 0};

	for (int i = 0; i < 3; i++)
		groups_dispatch(g, 100 + (uint64_t)i, &no_cmds);
	assert_int_equal(groups_inflight(g), 3);
	assert_int_equal(groups_complete(g, 3, 900, collect, &s), 3);
	assert_int_equal(groups_inflight(g), 0);
	assert_int_equal(s.records[0].seq, 1);
	assert_int_equal(s.records[2].seq, 3);
	/* The groups that share a completion time get it as their end. */
	assert_int_equal(s.records[0].end_ns, 900);
	assert_int_equal(s.records[1].start_ns, 900);
	groups_destroy(g);
}

static void unknown_or_repeated_fence_completes_nothing(void **state)
{
	struct groups *g = groups_create(1, 0);
	struct sink s = {.n = 0};

	groups_dispatch(g, 100, &no_cmds);
	assert_int_equal(groups_complete(g, 5, 200, collect, &s), 0);
	assert_int_equal(groups_complete(g, 1, 200, collect, &s), 1);
	assert_int_equal(groups_complete(g, 1, 300, collect, &s), 0);
	assert_int_equal(s.n, 1);
	groups_destroy(g);
}

static void max_inflight_one_allows_one_group_at_a_time(void **state)
{
	struct groups *g = groups_create(1, 1);
	struct sink s = {.n = 0};

	assert_true(groups_can_dispatch(g));
	groups_dispatch(g, 10, &no_cmds);
	assert_false(groups_can_dispatch(g));
	groups_complete(g, 1, 20, collect, &s);
	assert_true(groups_can_dispatch(g));
	groups_destroy(g);
}

static void unlimited_inflight_is_capped_by_the_tracking_ring(void **state)
{
	struct groups *g = groups_create(1, 0);

	for (uint32_t i = 0; i < GROUPS_MAX_TRACKED; i++) {
		assert_true(groups_can_dispatch(g));
		groups_dispatch(g, i, &no_cmds);
	}
	assert_false(groups_can_dispatch(g));
	groups_destroy(g);
}

static void counts_and_prediction_travel_with_the_group(void **state)
{
	struct groups *g = groups_create(1, 1);
	struct sink s = {.n = 0};
	struct group_info info;

	memset(&info, 0, sizeof(info));
	info.counts.n[PREDICT_CMD_DRAW] = 12;
	info.counts.n[PREDICT_CMD_CLEAR] = 1;
	info.est.predicted_ns = 1234.7;
	info.est.bound_ns = 2000.0;
	info.model = "rls";
	groups_dispatch(g, 10, &info);
	groups_complete(g, 1, 20, collect, &s);
	assert_int_equal(s.records[0].cmds[PREDICT_CMD_DRAW], 12);
	assert_int_equal(s.records[0].cmds[PREDICT_CMD_CLEAR], 1);
	assert_int_equal(s.records[0].predicted_ns, 1234);
	assert_int_equal(s.records[0].bound_ns, 2000);
	assert_string_equal(s.records[0].model, "rls");
	groups_destroy(g);
}

/* What groups_abandon() reported: grant ids and charges. */
struct abandoned {
	uint64_t grant[4], charge[4];
	size_t n;
};

static void note_abandoned(const struct group_info *info, uint64_t charge_ns, void *data)
{
	struct abandoned *a = data;

	assert_true(a->n < 4);
	a->grant[a->n] = info->grant_id;
	a->charge[a->n++] = charge_ns;
}

static void an_abandoned_group_is_charged_its_bound_or_its_time_on_the_gpu(void **state)
{
	struct groups *g = groups_create(1, 0);
	struct group_info expensive = {.grant_id = 5}, unknown = {.grant_id = 6};
	struct abandoned a = {.n = 0};

	/* An expensive submit (bound 30 ms) and one of unknown cost, then CTX_DESTROY. */
	expensive.est.predicted_ns = 25e6;
	expensive.est.bound_ns = 30e6;
	groups_dispatch(g, 1000000, &expensive);
	groups_dispatch(g, 2000000, &unknown);
	assert_int_equal(groups_abandon(g, 3000000, note_abandoned, &a), 2);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.grant[0], 5);
	assert_int_equal(a.charge[0], 30000000); /* its bound, not the 2 ms so far */
	assert_int_equal(a.grant[1], 6);
	assert_int_equal(a.charge[1], 1000000); /* no bound: the time since its dispatch */
	assert_int_equal(groups_inflight(g), 0);
	groups_destroy(g);
}

static void an_abandoned_group_is_never_charged_zero(void **state)
{
	static const struct {
		const char *what;
		double bound;
		uint64_t dispatch, now, charge;
	} cases[] = {
	    {"bound, dispatched just now", 4e6, 100, 100, 4000000},
	    {"longer on the GPU than its bound", 4e6, 100, 10000100, 10000000},
	    {"unknown cost, dispatched just now", 0, 100, 100, 1},
	    {"a clock a hair before the dispatch", 0, 100, 99, 1},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct group_info info = {.grant_id = 1};
		uint64_t got;

		info.est.bound_ns = cases[i].bound;
		got = groups_abandoned_charge(&info, cases[i].dispatch, cases[i].now);
		if (got != cases[i].charge) {
			print_error("%s: %llu, expected %llu\n", cases[i].what,
				    (unsigned long long)got, (unsigned long long)cases[i].charge);
			fail();
		}
	}
}

static void destroy_accepts_null(void **state)
{
	groups_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(idle_gpu_starts_a_group_at_its_dispatch),
	    cmocka_unit_test(queued_group_starts_when_the_previous_one_ends),
	    cmocka_unit_test(later_fence_completes_every_earlier_group),
	    cmocka_unit_test(unknown_or_repeated_fence_completes_nothing),
	    cmocka_unit_test(max_inflight_one_allows_one_group_at_a_time),
	    cmocka_unit_test(unlimited_inflight_is_capped_by_the_tracking_ring),
	    cmocka_unit_test(counts_and_prediction_travel_with_the_group),
	    cmocka_unit_test(an_abandoned_group_is_charged_its_bound_or_its_time_on_the_gpu),
	    cmocka_unit_test(an_abandoned_group_is_never_charged_zero),
	    cmocka_unit_test(destroy_accepts_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
