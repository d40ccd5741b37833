// SPDX-License-Identifier: MIT
/*
 * Tests of where a long command group is cut into pieces (mediator/worker/pieces.h):
 * which groups are cut, that cuts follow the stream and fall where the
 * model's cost reaches each share, that pieces cover the group exactly, and
 * what each piece is predicted and bounded; that a long draw that may be
 * cut into scissor tiles is, into bands of rows that cover its pixels, and
 * the commands a worker adds around each tile (tile_cmds.h); that a large
 * clear is cut into bands of its box whatever its prediction, each band
 * the clear with its rows limited.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "worker/pieces.h"
#include "worker/tile_cmds.h"

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
 * features summing to the group's, each piece one submission; the tiles of
 * a draw after the first start again at the draw, which the one before
 * ended with.
 */
static void assert_covers(const struct piece_plan *plan, size_t ndw)
{
	size_t at = 0;
	double shares = 0, draws = 0;

	assert_true(plan->n >= 1 && plan->n <= PIECES_MAX);
	for (uint32_t k = 0; k < plan->n; k++) {
		if (plan->p[k].tiles >= 2 && plan->p[k].tile > 0) {
			assert_int_equal(at, plan->p[k].draw_end_dw);
			at = plan->p[k].draw_start_dw;
		}
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
	assert_true(fabs(draws - whole_x[PF_DRAWS]) < 1e-6);
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

/* ---- scissor tiles ---- */

/*
 * A group of 60 dwords: a clear ending at 10, a draw at [10, 23) costing
 * @draw_ns of the model's @total_ns, and state to the end; the draw's
 * pixels rows [@y0, @y1) of a 256-wide target.
 */
static size_t draw_group(struct piece_boundary *b, double draw_ns, double total_ns, uint32_t y0,
			 uint32_t y1, bool tileable)
{
	double clear = (total_ns - draw_ns) / 2;

	b[0] = (struct piece_boundary){.start_dw = 0, .end_dw = 10, .cost = clear};
	b[1] = (struct piece_boundary){.start_dw = 10,
				       .end_dw = 23,
				       .cost = clear + draw_ns,
				       .draw = true,
				       .tileable = tileable,
				       .tiling = {.x0 = 0,
						  .y0 = y0,
						  .x1 = 256,
						  .y1 = y1,
						  .rs = {7, 0},
						  .scissor = {0, 256u | 256u << 16}}};
	b[0].x[PF_GROUP] = b[1].x[PF_GROUP] = 1;
	b[0].x[PF_DRAWS] = 0;
	b[1].x[PF_DRAWS] = 1000;
	return 2;
}

/* The tiles of @plan cover rows [y0, y1) in order, each its share of the draw by its rows. */
static void assert_bands(const struct piece_plan *plan, uint32_t y0, uint32_t y1)
{
	uint32_t y = y0;

	for (uint32_t k = 0; k < plan->n; k++) {
		const struct piece *p = &plan->p[k];

		if (p->tiles < 2)
			continue;
		assert_int_equal(p->band_y0, y);
		assert_true(p->band_y1 > p->band_y0);
		assert_true(p->band_y1 - p->band_y0 >= PIECES_TILE_MIN_ROWS);
		assert_int_equal(p->draw_start_dw, 10);
		assert_int_equal(p->draw_end_dw, 23);
		assert_true(p->start_dw <= p->draw_start_dw);
		assert_true(p->start_dw + p->ndw >= p->draw_end_dw);
		y = p->band_y1;
	}
	assert_int_equal(y, y1);
}

static void a_long_tileable_draw_is_cut_into_bands_of_rows(void **state)
{
	struct piece_boundary b[2];
	struct predict_estimate est = estimate(24e6, 26e6);
	struct piece_plan plan;
	size_t nb = draw_group(b, 22e6, 24e6, 0, 256, true);

	(void)state;
	pieces_plan(b, nb, 24e6, 60, &est, whole_x, 8000000, &plan);
	/*
	 * The clear and the state after the draw are pieces of their own
	 * (cuts at commands with output), the draw's 22 ms three tiles.
	 */
	assert_covers(&plan, 60);
	assert_bands(&plan, 0, 256);
	assert_int_equal(plan.n, 5);
	assert_int_equal(plan.p[0].tiles, 0);
	assert_int_equal(plan.p[0].ndw, 10);
	assert_int_equal(plan.p[4].tiles, 0);
	assert_int_equal(plan.p[4].start_dw, 23);
	for (uint32_t k = 1; k <= 3; k++) {
		assert_int_equal(plan.p[k].tiles, 3);
		assert_int_equal(plan.p[k].tile, k - 1);
		assert_int_equal(plan.p[k].start_dw, 10);
		assert_int_equal(plan.p[k].ndw, 13);
		assert_true(plan.p[k].est.predicted_ns <= 8e6);
		assert_true(plan.p[k].est.bound_ns >= plan.p[k].est.predicted_ns);
	}
	/* The same draw not tileable: one piece. */
	b[1].tileable = false;
	pieces_plan(b, nb, 24e6, 60, &est, whole_x, 8000000, &plan);
	assert_int_equal(plan.n, 3);
	assert_int_equal(plan.p[1].ndw, 13);
}

static void draws_that_may_not_be_tiled_or_are_short_stay_whole(void **state)
{
	struct piece_boundary b[2];
	struct predict_estimate est = estimate(24e6, 26e6);
	struct piece_plan plan;
	size_t nb = draw_group(b, 22e6, 24e6, 0, 256, false);

	(void)state;
	pieces_plan(b, nb, 24e6, 60, &est, whole_x, 8000000, &plan);
	assert_covers(&plan, 60);
	for (uint32_t k = 0; k < plan.n; k++)
		assert_int_equal(plan.p[k].tiles, 0);
	/* Mostly the clear: the draw is not what makes the group long. */
	nb = draw_group(b, 2e6, 24e6, 0, 256, true);
	pieces_plan(b, nb, 24e6, 60, &est, whole_x, 8000000, &plan);
	for (uint32_t k = 0; k < plan.n; k++)
		assert_int_equal(plan.p[k].tiles, 0);
	/* A draw of 20 rows has room for one tile only. */
	nb = draw_group(b, 22e6, 24e6, 40, 60, true);
	pieces_plan(b, nb, 24e6, 60, &est, whole_x, 8000000, &plan);
	for (uint32_t k = 0; k < plan.n; k++)
		assert_int_equal(plan.p[k].tiles, 0);
}

static void tiles_never_make_more_than_pieces_max(void **state)
{
	struct piece_boundary b[2];
	struct predict_estimate est = estimate(1e9, 1.2e9);
	struct piece_plan plan;
	size_t nb = draw_group(b, 0.999e9, 1e9, 3, 1003, true);

	(void)state;
	pieces_plan(b, nb, 1e9, 60, &est, whole_x, 1000000, &plan);
	assert_int_equal(plan.n, PIECES_MAX);
	assert_covers(&plan, 60);
	assert_bands(&plan, 3, 1003);
	/* Inner edges fall on even rows. */
	for (uint32_t k = 0; k < plan.n; k++)
		if (plan.p[k].tile + 1 < plan.p[k].tiles)
			assert_int_equal(plan.p[k].band_y1 % 2, 0);
}

/*
 * A young group (equal shares by boundary) whose one command with output
 * is a draw: tiled by its prediction, not by its bound (the longest group
 * so far, most often a shader compile).
 */
static void a_young_single_draw_group_is_tiled_by_its_prediction(void **state)
{
	struct piece_boundary b[1] = {
	    {.start_dw = 4,
	     .end_dw = 17,
	     .cost = 0,
	     .draw = true,
	     .tileable = true,
	     .tiling = {.x0 = 0, .y0 = 0, .x1 = 640, .y1 = 480, .rs = {9, 0}}}};
	struct predict_estimate est = estimate(30e6, 120e6);
	struct piece_plan plan;

	(void)state;
	b[0].x[PF_GROUP] = 1;
	b[0].x[PF_DRAWS] = 1000;
	est.young = true;
	pieces_plan(b, 1, 0, 17, &est, whole_x, 8000000, &plan);
	assert_int_equal(plan.n, 4);
	assert_covers(&plan, 17);
	for (uint32_t k = 0; k < plan.n; k++) {
		assert_true(plan.p[k].est.young);
		assert_int_equal(plan.p[k].tiles, 4);
	}
	assert_int_equal(plan.p[0].start_dw, 0);
	assert_int_equal(plan.p[3].start_dw + plan.p[3].ndw, 17);
	/* A short draw whose bound is a compile's: whole. */
	est = estimate(1e6, 120e6);
	est.young = true;
	pieces_plan(b, 1, 0, 17, &est, whole_x, 8000000, &plan);
	assert_int_equal(plan.n, 1);
}

/*
 * Which pieces say they cannot be cut further (pieces_uncut(), what the
 * grant request's untiled carries): a draw that may not be tiled, in a
 * piece longer than the piece length; a piece cut as far as it may be
 * (a tile of a draw in PIECES_MAX pieces, or any piece of a plan of
 * PIECES_MAX) still over twice the piece length, past the young groups.
 */
static void pieces_cut_as_far_as_they_may_be_and_still_long_say_so(void **state)
{
	struct piece_boundary b[2];
	struct predict_estimate est = estimate(1e9, 1.2e9);
	struct piece_plan plan;
	size_t nb = draw_group(b, 0.999e9, 1e9, 3, 1003, true);
	const uint64_t piece_ns = 4000000;
	struct piece *t;

	(void)state;
	/* A draw of 1 s in 16 tiles of about 62 ms. */
	pieces_plan(b, nb, 1e9, 60, &est, whole_x, piece_ns, &plan);
	assert_int_equal(plan.n, PIECES_MAX);
	t = &plan.p[plan.n / 2];
	assert_true(t->tiles >= 2);
	assert_int_equal(pieces_uncut(&plan, t, PREDICT_TILEABLE, t->est.predicted_ns, piece_ns),
			 PREDICT_UNTILED_SPENT);
	/* Not so for a young model, for a tile of up to twice the piece length, or no pieces. */
	t->est.young = true;
	assert_int_equal(pieces_uncut(&plan, t, PREDICT_TILEABLE, t->est.predicted_ns, piece_ns),
			 PREDICT_TILEABLE);
	t->est.young = false;
	assert_int_equal(pieces_uncut(&plan, t, PREDICT_TILEABLE, 2.0 * piece_ns, piece_ns),
			 PREDICT_TILEABLE);
	assert_int_equal(pieces_uncut(&plan, t, PREDICT_TILEABLE, t->est.predicted_ns, 0),
			 PREDICT_TILEABLE);
	/* A tile's own draw was cut: another reason does not hold for it. */
	assert_int_equal(
	    pieces_uncut(&plan, t, PREDICT_UNTILED_QUERY, t->est.predicted_ns, piece_ns),
	    PREDICT_TILEABLE);

	/* Commands only, 10 ms each: 3 pieces of 10 ms could be cut further, 16 could not. */
	nb = even_boundaries(b, 2, 10e6);
	est = estimate(30e6, 36e6);
	pieces_plan(b, nb, 30e6, 30, &est, whole_x, 8000000, &plan);
	assert_true(plan.n >= 2 && plan.n < PIECES_MAX);
	assert_int_equal(pieces_uncut(&plan, &plan.p[0], PREDICT_TILEABLE, 10e6, 4000000),
			 PREDICT_TILEABLE);
	plan.n = PIECES_MAX;
	assert_int_equal(pieces_uncut(&plan, &plan.p[0], PREDICT_TILEABLE, 10e6, 4000000),
			 PREDICT_UNTILED_SPENT);
	/* A draw that may not be tiled, whole in a piece longer than the piece length: why. */
	nb = draw_group(b, 22e6, 24e6, 0, 256, false);
	est = estimate(24e6, 26e6);
	pieces_plan(b, nb, 24e6, 60, &est, whole_x, 8000000, &plan);
	assert_int_equal(pieces_uncut(&plan, &plan.p[1], PREDICT_UNTILED_QUERY, 22e6, 8000000),
			 PREDICT_UNTILED_QUERY);
	assert_int_equal(pieces_uncut(&plan, &plan.p[1], PREDICT_UNTILED_QUERY, 7e6, 8000000),
			 PREDICT_TILEABLE);
}

/* The commands around tiles decode as whole commands, and set what tile_cmds.h says. */
static void tile_commands_set_the_band_and_put_the_guest_state_back(void **state)
{
	struct piece_boundary b[2];
	struct predict_estimate est = estimate(24e6, 26e6);
	struct piece_plan plan;
	uint32_t cmds[TILE_CMDS_MAX];
	size_t n;

	(void)state;
	draw_group(b, 22e6, 24e6, 0, 256, true);
	b[1].tiling.rs[1] = 0x5;
	pieces_plan(b, 2, 24e6, 60, &est, whole_x, 8000000, &plan);
	assert_int_equal(plan.n, 5);
	/* First tile, scissor off: a copy of the state with it on, bound, and the band. */
	n = tile_cmds_before(&plan.p[1], cmds);
	assert_int_equal(n, 1 + PREDICT_RS_DWORDS + 2 + 4);
	assert_int_equal(cmds[0], VIRGL_CMD(PREDICT_VIRGL_CREATE_OBJECT,
					    PREDICT_VIRGL_OBJECT_RASTERIZER, PREDICT_RS_DWORDS));
	assert_int_equal(cmds[1], TILE_RASTERIZER_HANDLE);
	assert_int_equal(cmds[2], 0x5u | 1u << VIRGL_OBJ_RS_S0_SCISSOR_SHIFT);
	assert_int_equal(cmds[10],
			 VIRGL_CMD(PREDICT_VIRGL_BIND_OBJECT, PREDICT_VIRGL_OBJECT_RASTERIZER, 1));
	assert_int_equal(cmds[11], TILE_RASTERIZER_HANDLE);
	assert_int_equal(cmds[12], VIRGL_CMD(PREDICT_VIRGL_SET_SCISSOR_STATE, 0, 3));
	assert_int_equal(cmds[14], plan.p[1].band_y0 << 16);
	assert_int_equal(cmds[15], 256u | plan.p[1].band_y1 << 16);
	assert_int_equal(tile_cmds_after(&plan.p[1], cmds), 0);
	/* A middle tile: its band only. */
	assert_int_equal(tile_cmds_before(&plan.p[2], cmds), 4);
	assert_int_equal(cmds[2], plan.p[2].band_y0 << 16);
	/* After the last: the guest's scissor, its state bound, the copy destroyed. */
	n = tile_cmds_after(&plan.p[3], cmds);
	assert_int_equal(n, 4 + 2 + 2);
	assert_int_equal(cmds[2], 0);
	assert_int_equal(cmds[3], 256u | 256u << 16);
	assert_int_equal(cmds[5], 7);
	assert_int_equal(
	    cmds[6], VIRGL_CMD(PREDICT_VIRGL_DESTROY_OBJECT, PREDICT_VIRGL_OBJECT_RASTERIZER, 1));
	assert_int_equal(cmds[7], TILE_RASTERIZER_HANDLE);
	{
		struct predict_cmd_counts counts;

		assert_int_equal(predict_cmd_count(cmds, n, &counts, NULL, NULL), 0);
		assert_int_equal(counts.total, 3);
	}
	/* Scissor already on: no copy, only bands and the guest's scissor back. */
	b[1].tiling.rs[1] = 1u << VIRGL_OBJ_RS_S0_SCISSOR_SHIFT;
	pieces_plan(b, 2, 24e6, 60, &est, whole_x, 8000000, &plan);
	assert_int_equal(tile_cmds_before(&plan.p[1], cmds), 4);
	assert_int_equal(tile_cmds_after(&plan.p[3], cmds), 4);
	/* Not a tile: nothing. */
	plan.p[1].tiles = 0;
	assert_int_equal(tile_cmds_before(&plan.p[1], cmds), 0);
}

/*
 * A group of one CLEAR_TEXTURE of @w x @h pixels at rows from @y0 (at
 * dwords [0, 13)) and a flush after it (to 16): its boundary.
 */
static size_t clear_group(struct piece_boundary *b, uint32_t w, uint32_t y0, uint32_t h)
{
	b[0] = (struct piece_boundary){.start_dw = 0, .end_dw = 13, .cost = 1e5, .tileable = true};
	b[0].x[PF_GROUP] = 1;
	b[0].x[PF_DRAWS] = whole_x[PF_DRAWS];
	b[0].tiling = (struct predict_tiling){
	    .x0 = 0, .y0 = y0, .x1 = w, .y1 = y0 + h, .clear = true, .layers = 1};
	return 1;
}

static void a_large_clear_is_cut_into_bands_whatever_its_prediction(void **state)
{
	struct piece_boundary b[1];
	/* A young context's first group: predicted and bounded at next to nothing. */
	struct predict_estimate est = estimate(2e5, 3e5);
	uint32_t guest[13] = {VIRGL_CMD(PREDICT_VIRGL_CLEAR_TEXTURE, 0, 12),
			      9,
			      0,
			      0,
			      8,
			      0,
			      4096,
			      4088,
			      1,
			      0xff00ff00u};
	uint32_t cmds[TILE_CMDS_MAX];
	struct piece_plan plan;
	double x[PF_COUNT];

	(void)state;
	est.young = true;
	clear_group(b, 4096, 8, 4088);
	/* The group's features: its clear's pixels among them. */
	memcpy(x, whole_x, sizeof(x));
	x[PF_CLEAR_TEX_PIXELS] = 4096.0 * 4088.0;
	pieces_plan(b, 1, 1e5, 16, &est, x, 4000000, &plan);
	/* 4096 x 4088 pixels, 16 Mi: 16 bands of at most PIECES_CLEAR_BAND_PIXELS or so. */
	assert_int_equal(plan.n, PIECES_MAX);
	assert_covers(&plan, 16);
	for (uint32_t k = 0, y = 8; k < plan.n; k++) {
		const struct piece *p = &plan.p[k];

		assert_int_equal(p->tiles, plan.n);
		assert_int_equal(p->band_y0, y);
		/* Bands start a multiple of PIECES_TILE_MIN_ROWS rows from the box's first row. */
		assert_int_equal((p->band_y0 - 8) % PIECES_TILE_MIN_ROWS, 0);
		assert_true(p->band_y1 > p->band_y0);
		assert_true(p->est.young);
		/* No scissor around a clear's band: the clear itself is rewritten. */
		assert_int_equal(tile_cmds_before(p, cmds), 0);
		assert_int_equal(tile_cmds_after(p, cmds), 0);
		assert_int_equal(tile_cmds_clear_band(p, guest, 13, cmds), 13);
		assert_int_equal(cmds[0], guest[0]);
		assert_int_equal(cmds[1], 9);	 /* the texture */
		assert_int_equal(cmds[3], 0);	 /* x */
		assert_int_equal(cmds[4], y);	 /* y: the band's */
		assert_int_equal(cmds[6], 4096); /* w */
		assert_int_equal(cmds[7], p->band_y1 - p->band_y0);
		assert_int_equal(cmds[8], 1);
		assert_int_equal(cmds[9], 0xff00ff00u);
		y = p->band_y1;
		if (k + 1 == plan.n)
			assert_int_equal(y, 8 + 4088);
	}
	/* Not a whole CLEAR_TEXTURE of the protocol's length: nothing to submit. */
	assert_int_equal(tile_cmds_clear_band(&plan.p[0], guest, 12, cmds), 0);
	guest[0] = VIRGL_CMD(PREDICT_VIRGL_CLEAR, 0, 12);
	assert_int_equal(tile_cmds_clear_band(&plan.p[0], guest, 13, cmds), 0);
	/* A clear of 512 x 512 (a quarter band's pixels), predicted short: whole. */
	clear_group(b, 512, 0, 512);
	x[PF_CLEAR_TEX_PIXELS] = 512.0 * 512.0;
	pieces_plan(b, 1, 1e5, 16, &est, x, 4000000, &plan);
	assert_int_equal(plan.n, 1);
	/* Predicted long, it is cut by its prediction: 12 ms in 3 bands, and the flush. */
	est = estimate(12e6, 14e6);
	pieces_plan(b, 1, 1e5, 16, &est, x, 4000000, &plan);
	assert_int_equal(plan.n, 4);
	assert_int_equal(plan.p[0].tiles, 3);
	assert_int_equal(plan.p[3].tiles, 0);
	assert_covers(&plan, 16);
	/* With no piece length (no safety domain active), never cut. */
	clear_group(b, 4096, 0, 4096);
	x[PF_CLEAR_TEX_PIXELS] = 4096.0 * 4096.0;
	pieces_plan(b, 1, 1e5, 16, &est, x, 0, &plan);
	assert_int_equal(plan.n, 1);
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
	    cmocka_unit_test(a_long_tileable_draw_is_cut_into_bands_of_rows),
	    cmocka_unit_test(draws_that_may_not_be_tiled_or_are_short_stay_whole),
	    cmocka_unit_test(tiles_never_make_more_than_pieces_max),
	    cmocka_unit_test(a_young_single_draw_group_is_tiled_by_its_prediction),
	    cmocka_unit_test(pieces_cut_as_far_as_they_may_be_and_still_long_say_so),
	    cmocka_unit_test(tile_commands_set_the_band_and_put_the_guest_state_back),
	    cmocka_unit_test(a_large_clear_is_cut_into_bands_whatever_its_prediction),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
