// SPDX-License-Identifier: MIT
/*
 * Tests of the cluster application's deadline accounting (guest-shim's
 * frame_stats): frames on time, late frames, overruns that skip releases,
 * the end of the run, frames reported out of turn, and the latency
 * percentiles of the summary.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "frame_stats.h"

#define MS 1000000LL
#define T0 (5000 * MS)

static void frames_done_within_their_deadline_miss_nothing(void **state)
{
	struct frame_stats *fs = frame_stats_create(T0, 16 * MS, 16 * MS, 10);
	struct frame_summary s;

	for (unsigned long k = 0; k < 10; k++)
		assert_int_equal(frame_stats_complete(fs, k, frame_stats_release(fs, k) + 2 * MS),
				 k + 1);
	frame_stats_summary(fs, &s);
	assert_int_equal(s.frames, 10);
	assert_int_equal(s.drawn, 10);
	assert_int_equal(s.skipped, 0);
	assert_int_equal(s.misses, 0);
	assert_true(s.p50_us == 2000 && s.p99_us == 2000 && s.max_us == 2000);
	frame_stats_destroy(fs);
}

static void a_frame_done_exactly_at_its_deadline_is_on_time(void **state)
{
	struct frame_stats *fs = frame_stats_create(T0, 16 * MS, 10 * MS, 3);
	struct frame_summary s;

	assert_int_equal(frame_stats_complete(fs, 0, T0 + 10 * MS), 1);
	assert_int_equal(frame_stats_complete(fs, 1, T0 + 16 * MS + 10 * MS + 1), 2);
	frame_stats_summary(fs, &s);
	assert_int_equal(s.misses, 1);
	assert_int_equal(s.skipped, 0);
	frame_stats_destroy(fs);
}

static void a_late_frame_before_the_next_release_skips_nothing(void **state)
{
	struct frame_stats *fs = frame_stats_create(T0, 16 * MS, 8 * MS, 4);
	struct frame_summary s;

	assert_int_equal(frame_stats_complete(fs, 0, T0 + 12 * MS), 1);
	frame_stats_summary(fs, &s);
	assert_int_equal(s.frames, 1);
	assert_int_equal(s.misses, 1);
	assert_int_equal(s.skipped, 0);
	frame_stats_destroy(fs);
}

static void an_overrun_skips_the_releases_it_passed_and_misses_them(void **state)
{
	struct frame_stats *fs = frame_stats_create(T0, 10 * MS, 10 * MS, 100);
	struct frame_summary s;

	/* Frame 0 ends at 35 ms: releases 1, 2 and 3 (10, 20, 30 ms) passed. */
	assert_int_equal(frame_stats_complete(fs, 0, T0 + 35 * MS), 4);
	/* Done right at release 5: frame 5 is the next, nothing more skipped. */
	assert_int_equal(frame_stats_complete(fs, 4, T0 + 50 * MS), 5);
	frame_stats_summary(fs, &s);
	assert_int_equal(s.drawn, 2);
	assert_int_equal(s.skipped, 3);
	assert_int_equal(s.frames, 5);
	assert_int_equal(s.misses, 4); /* frame 0 late, and the 3 skipped */
	frame_stats_destroy(fs);
}

/* A rate change: from frame 3 on, releases every 20 ms after frame 3's, due 20 ms after. */
static void a_new_period_counts_from_the_frame_it_starts_at(void **state)
{
	struct frame_stats *fs = frame_stats_create(T0, 10 * MS, 10 * MS, 10);
	struct frame_summary s;

	for (unsigned long k = 0; k < 3; k++)
		assert_int_equal(frame_stats_complete(fs, k, frame_stats_release(fs, k) + MS),
				 k + 1);
	assert_int_equal(frame_stats_set_period(fs, 2, 20 * MS, 20 * MS), -EINVAL);
	assert_int_equal(frame_stats_set_period(fs, 3, 0, 20 * MS), -EINVAL);
	assert_int_equal(frame_stats_set_period(fs, 3, 20 * MS, 20 * MS), 0);
	assert_int_equal(frame_stats_release(fs, 3), T0 + 30 * MS);
	assert_int_equal(frame_stats_release(fs, 4), T0 + 50 * MS);
	/* 15 ms late by the old deadline, in time by the new one. */
	assert_int_equal(frame_stats_complete(fs, 3, T0 + 45 * MS), 4);
	/* Done at 95 ms: releases 5 (70 ms) and 6 (90 ms) passed. */
	assert_int_equal(frame_stats_complete(fs, 4, T0 + 95 * MS), 7);
	frame_stats_summary(fs, &s);
	assert_int_equal(s.skipped, 2);
	assert_int_equal(s.misses, 3); /* frame 4 late, and the 2 skipped */
	frame_stats_destroy(fs);
}

static void the_run_ends_at_its_last_release(void **state)
{
	struct frame_stats *fs = frame_stats_create(T0, 10 * MS, 10 * MS, 3);
	struct frame_summary s;

	assert_int_equal(frame_stats_complete(fs, 0, T0 + 1000 * MS), 3);
	assert_int_equal(frame_stats_complete(fs, 3, T0 + 1001 * MS), -EINVAL);
	frame_stats_summary(fs, &s);
	assert_int_equal(s.frames, 3);
	assert_int_equal(s.misses, 3);
	frame_stats_destroy(fs);
}

static void frames_reported_out_of_turn_are_refused(void **state)
{
	struct frame_stats *fs = frame_stats_create(T0, 10 * MS, 10 * MS, 10);

	assert_int_equal(frame_stats_complete(fs, 1, T0 + 11 * MS), -EINVAL);
	assert_int_equal(frame_stats_complete(fs, 0, T0 + 35 * MS), 4);
	/* Frames 1..3 were skipped: they cannot be reported any more. */
	assert_int_equal(frame_stats_complete(fs, 2, T0 + 36 * MS), -EINVAL);
	assert_int_equal(frame_stats_complete(fs, 4, T0 + 41 * MS), 5);
	frame_stats_destroy(fs);
}

static void percentiles_are_the_nearest_rank_of_the_frames_drawn(void **state)
{
	struct frame_stats *fs = frame_stats_create(T0, 100 * MS, 100 * MS, 200);
	struct frame_summary s;

	/* Latencies 1..200 us, reported in no particular order of size. */
	for (unsigned long k = 0; k < 200; k++) {
		int64_t latency_ns = (int64_t)((k * 73) % 200 + 1) * 1000;

		assert_int_equal(
		    frame_stats_complete(fs, k, frame_stats_release(fs, k) + latency_ns), k + 1);
	}
	frame_stats_summary(fs, &s);
	assert_true(s.p50_us == 100);
	assert_true(s.p99_us == 198);
	assert_true(s.max_us == 200);
	/* The summary can be taken again as frames go on. */
	frame_stats_summary(fs, &s);
	assert_true(s.p50_us == 100);
	frame_stats_destroy(fs);
}

static void an_empty_run_summarizes_to_zeroes(void **state)
{
	struct frame_stats *fs = frame_stats_create(T0, 10 * MS, 10 * MS, 10);
	struct frame_summary s;

	frame_stats_summary(fs, &s);
	assert_int_equal(s.frames, 0);
	assert_int_equal(s.misses, 0);
	assert_true(s.p50_us == 0 && s.max_us == 0);
	frame_stats_destroy(fs);
}

static void bad_periods_and_deadlines_are_refused_and_null_is_destroyed(void **state)
{
	assert_null(frame_stats_create(T0, 0, 10 * MS, 10));
	assert_null(frame_stats_create(T0, 10 * MS, 0, 10));
	assert_null(frame_stats_create(T0, -1, 10 * MS, 10));
	frame_stats_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(frames_done_within_their_deadline_miss_nothing),
	    cmocka_unit_test(a_frame_done_exactly_at_its_deadline_is_on_time),
	    cmocka_unit_test(a_late_frame_before_the_next_release_skips_nothing),
	    cmocka_unit_test(an_overrun_skips_the_releases_it_passed_and_misses_them),
	    cmocka_unit_test(a_new_period_counts_from_the_frame_it_starts_at),
	    cmocka_unit_test(the_run_ends_at_its_last_release),
	    cmocka_unit_test(frames_reported_out_of_turn_are_refused),
	    cmocka_unit_test(percentiles_are_the_nearest_rank_of_the_frames_drawn),
	    cmocka_unit_test(an_empty_run_summarizes_to_zeroes),
	    cmocka_unit_test(bad_periods_and_deadlines_are_refused_and_null_is_destroyed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
