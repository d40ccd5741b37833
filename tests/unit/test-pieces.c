// SPDX-License-Identifier: MIT
/*
 * Tests of where a long command group is cut into pieces (mediator/worker/pieces.h):
 * which groups are cut, that cuts follow the stream and fall where the
 * model's cost reaches each share, that pieces cover the group exactly, and
 * what each piece is predicted and bounded.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "worker/pieces.h"

/* @n boundaries, one every 10 dwords, each adding @step ns of model cost. */
static size_t even_boundaries(struct piece_boundary *b, size_t n, double step)
{
	for (size_t i = 0; i < n; i++) {
		b[i] =
		    (struct piece_boundary){.end_dw = 10 * (i + 1), .cost = step * (double)(i + 1)};
		b[i].x[PF_GROUP] = 1;
		b[i].x[PF_DRAWS] = (double)(i + 1);
	}
	return n;
}

/* The whole group's features in these tests: what the boundaries' features end at. */
static const double whole_x[PF_COUNT] = {[PF_GROUP] = 1, [PF_DRAWS] = 1000};

static struct predict_estimate estimate(double predicted_ns, double bound_ns)
{
	return (struct predict_estimate){
	    .predicted_ns = predicted_ns, .bound_ns = bound_ns, .model_ns = predicted_ns};
}

/*
 * The pieces cover [0, ndw) in order, each non-empty, shares summing to 1,
 * features summing to the group's, each piece one submission.
 */
static void assert_covers(const struct piece_plan *plan, size_t ndw)
{
	size_t at = 0;
	double shares = 0, draws = 0;

	assert_true(plan->n >= 1 && plan->n <= PIECES_MAX);
	for (uint32_t k = 0; k < plan->n; k++) {
		assert_int_equal(plan->p[k].start_dw, at);
		assert_true(plan->p[k].ndw > 0);
		assert_true(plan->p[k].share >= 0 && plan->p[k].share <= 1);
		assert_true(plan->p[k].est.bound_ns >= plan->p[k].est.predicted_ns);
		assert_true(plan->p[k].x[PF_GROUP] == 1);
		at += plan->p[k].ndw;
		shares += plan->p[k].share;
		draws += plan->p[k].x[PF_DRAWS];
	}
	assert_int_equal(at, ndw);
	assert_true(fabs(shares - 1.0) < 1e-9);
	assert_true(draws == whole_x[PF_DRAWS]);
}

static void a_short_group_is_one_piece(void **state)
{
	struct piece_boundary b[10];
	struct predict_estimate est = estimate(3e6, 4e6);
	struct piece_plan plan;

	(void)state;
	pieces_plan(b, even_boundaries(b, 10, 1e5), 1e6, 101, &est, whole_x, 4000000, &plan);
	assert_int_equal(plan.n, 1);
	assert_covers(&plan, 101);
	assert_true(plan.p[0].est.predicted_ns == est.predicted_ns);
	assert_true(plan.p[0].est.bound_ns == est.bound_ns);
}

static void no_piece_length_or_unknown_cost_is_never_cut(void **state)
{
	struct piece_boundary b[10];
	size_t nb = even_boundaries(b, 10, 1e6);
	struct predict_estimate est = estimate(16e6, 18e6);
	struct piece_plan plan;

	(void)state;
	pieces_plan(b, nb, 10e6, 101, &est, whole_x, 0, &plan);
	assert_int_equal(plan.n, 1);
	est = estimate(16e6, 0);
	pieces_plan(b, nb, 10e6, 101, &est, whole_x, 4000000, &plan);
	assert_int_equal(plan.n, 1);
}

static void a_long_group_is_cut_into_equal_shares(void **state)
{
	struct piece_boundary b[16];
	struct predict_estimate est = estimate(16e6, 18e6);
	struct piece_plan plan;

	(void)state;
	/* 16 equal draws, 16 ms predicted, 4 ms pieces: 4 pieces of 4 draws. */
	pieces_plan(b, even_boundaries(b, 16, 1e6), 16e6, 165, &est, whole_x, 4000000, &plan);
	assert_int_equal(plan.n, 4);
	assert_covers(&plan, 165);
	for (uint32_t k = 0; k < 4; k++) {
		assert_int_equal(plan.p[k].start_dw, 40 * k);
		assert_true(fabs(plan.p[k].share - 0.25) < 1e-9);
		assert_true(fabs(plan.p[k].est.predicted_ns - 4e6) < 1);
		/* The group's 2 ms margin over 4 equal pieces: 1 ms each. */
		assert_true(fabs(plan.p[k].est.bound_ns - 5e6) < 1);
		/* Its own features: four draws (the last also what follows in the group). */
		if (k < 3)
			assert_true(plan.p[k].x[PF_DRAWS] == 4);
	}
	/* The trailing commands after the last draw stay with the last piece. */
	assert_int_equal(plan.p[3].ndw, 45);
}

static void cuts_follow_the_model_cost_not_the_command_count(void **state)
{
	struct piece_boundary b[8];
	struct predict_estimate est = estimate(8e6, 9e6);
	struct piece_plan plan;
	size_t nb = even_boundaries(b, 8, 0);

	(void)state;
	/* One expensive draw (the third) does half the work. */
	for (size_t i = 0; i < nb; i++)
		b[i].cost = (double)(i + 1) * 0.5e6 + (i >= 2 ? 4e6 : 0);
	pieces_plan(b, nb, 8e6, 80, &est, whole_x, 4000000, &plan);
	assert_int_equal(plan.n, 2);
	assert_covers(&plan, 80);
	/* Cut right after the expensive draw (share 0.6875), not after four draws. */
	assert_int_equal(plan.p[1].start_dw, 30);
	assert_true(fabs(plan.p[0].share - 5.5 / 8) < 1e-9);
}

static void a_young_group_is_judged_by_its_bound_and_cut_by_command_count(void **state)
{
	struct piece_boundary b[4];
	/* A model still learning: 0.1 ms predicted, the bound the longest seen (60 ms). */
	struct predict_estimate est = estimate(0.1e6, 60e6);
	struct piece_plan plan;
	size_t nb = even_boundaries(b, 4, 1e6);

	(void)state;
	est.young = true;
	/* Its costs say the first draw is nearly all of it: not trusted. */
	b[0].cost = 0.99e6;
	pieces_plan(b, nb, 1e6, 40, &est, whole_x, 4000000, &plan);
	assert_int_equal(plan.n, 4);
	assert_covers(&plan, 40);
	for (uint32_t k = 0; k < 4; k++) {
		assert_int_equal(plan.p[k].start_dw, 10 * k);
		assert_true(plan.p[k].est.young);
	}
	/* A young group within the piece length by its bound stays whole. */
	est = estimate(0.1e6, 3e6);
	est.young = true;
	pieces_plan(b, nb, 1e6, 40, &est, whole_x, 4000000, &plan);
	assert_int_equal(plan.n, 1);
}

static void a_single_long_draw_cannot_be_cut(void **state)
{
	struct piece_boundary b[1] = {{.end_dw = 12, .cost = 16e6}};
	struct predict_estimate est = estimate(16e6, 17e6);
	struct piece_plan plan;

	(void)state;
	/* Its only boundary is the end of the buffer. */
	pieces_plan(b, 1, 16e6, 12, &est, whole_x, 4000000, &plan);
	assert_int_equal(plan.n, 1);
	assert_covers(&plan, 12);
}

static void unusable_costs_fall_back_to_equal_shares_per_boundary(void **state)
{
	struct piece_boundary b[8];
	struct predict_estimate est = estimate(8e6, 8e6);
	struct piece_plan plan;
	size_t nb = even_boundaries(b, 8, 0);

	(void)state;
	pieces_plan(b, nb, 0, 80, &est, whole_x, 4000000, &plan);
	assert_int_equal(plan.n, 2);
	assert_covers(&plan, 80);
	assert_int_equal(plan.p[1].start_dw, 40);
	pieces_plan(b, nb, NAN, 80, &est, whole_x, 4000000, &plan);
	assert_int_equal(plan.n, 2);
	assert_covers(&plan, 80);
}

static void a_very_long_group_is_cut_into_at_most_pieces_max(void **state)
{
	static struct piece_boundary b[1000];
	struct predict_estimate est = estimate(1e9, 1.1e9);
	struct piece_plan plan;

	(void)state;
	pieces_plan(b, even_boundaries(b, 1000, 1e6), 1e9, 10001, &est, whole_x, 1000000, &plan);
	assert_int_equal(plan.n, PIECES_MAX);
	assert_covers(&plan, 10001);
	for (uint32_t k = 0; k < plan.n; k++)
		assert_true(plan.p[k].est.bound_ns <= est.bound_ns);
}

static void boundaries_out_of_order_or_past_the_end_are_ignored(void **state)
{
	struct piece_boundary b[6] = {
	    {.end_dw = 10, .cost = 1e6}, {.end_dw = 10, .cost = 2e6},  {.end_dw = 5, .cost = 3e6},
	    {.end_dw = 30, .cost = 4e6}, {.end_dw = 500, .cost = 5e6}, {.end_dw = 0, .cost = 6e6},
	};
	struct predict_estimate est = estimate(8e6, 9e6);
	struct piece_plan plan;

	(void)state;
	pieces_plan(b, 6, 6e6, 40, &est, whole_x, 2000000, &plan);
	assert_covers(&plan, 40);
	for (uint32_t k = 1; k < plan.n; k++)
		assert_true(plan.p[k].start_dw == 10 || plan.p[k].start_dw == 30);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_short_group_is_one_piece),
	    cmocka_unit_test(no_piece_length_or_unknown_cost_is_never_cut),
	    cmocka_unit_test(a_young_group_is_judged_by_its_bound_and_cut_by_command_count),
	    cmocka_unit_test(a_long_group_is_cut_into_equal_shares),
	    cmocka_unit_test(cuts_follow_the_model_cost_not_the_command_count),
	    cmocka_unit_test(a_single_long_draw_cannot_be_cut),
	    cmocka_unit_test(unusable_costs_fall_back_to_equal_shares_per_boundary),
	    cmocka_unit_test(a_very_long_group_is_cut_into_at_most_pieces_max),
	    cmocka_unit_test(boundaries_out_of_order_or_past_the_end_are_ignored),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
