/*
 * Tests of command-group timing (start = max(dispatch, previous end),
 * Schnitzer et al., Concepts for Execution Time Prediction of 3D GPU
 * Rendering, §IV-F), of in-order completion, and of the max_inflight limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "groups.h"

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
	    cmocka_unit_test(destroy_accepts_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
