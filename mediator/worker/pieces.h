// SPDX-License-Identifier: MIT
/*
 * Pieces: preemption points without preemption (doc/design.md, "Pieces").
 *
 * A command group is one guest command buffer; once the GPU starts it, it
 * runs to the end. A long group of a normal domain would therefore hold
 * the GPU for its whole length, and a safety frame released meanwhile
 * waits. The worker may instead hand the group to the renderer as several
 * pieces, in order, each cut after a command with output (a draw, a
 * clear, a blit...: predict_ctx_set_boundary_hook()), each with a fence of
 * its own and a grant of its own. Between two pieces mediatord can start a
 * safety group. The guest sees one group: it is answered after the last
 * piece.
 *
 * pieces_plan() decides where to cut. It cuts only a group predicted
 * longer than the domain's piece length, into as many pieces as that
 * length goes into the prediction (at most PIECES_MAX), each cut at the
 * boundary where the model's cost so far comes closest to the next share
 * of the whole. A piece still longer than the piece length whose cost is
 * mostly one draw that may be cut into scissor tiles (predict_tiling.h in
 * predict/: only the framebuffer is written, no query counts, no
 * geometry or tessellation shader) is cut again, into bands of rows of
 * the draw's pixels, each drawn in a piece of its own, each band's share
 * of the draw its share of the rows. Tiles go by the group's prediction
 * also while its context is young: its bound, the longest group so far,
 * is most often a shader compile. A clear of a texture's box
 * (CLEAR_TEXTURE) is cut the same way into bands of the box's rows, each
 * a CLEAR_TEXTURE of its own (tile_cmds_clear_band()), and a clear of more
 * than PIECES_CLEAR_BAND_PIXELS always is. A young context's group (predict_estimate.young) is
 * judged by its bound, the longest group the context took so far, and cut into equal numbers of
 * commands with output: its model is still learning and predicts such groups far too short, and
 * uncut, each of them held the GPU through several safety frames while the context was young
 * (bench/isolation).
 *
 * Each piece is predicted its share s_k of the group's prediction. Its
 * margin (bound - prediction) is the group's margin M
 * scaled as a standard deviation scales when a sum of independent parts is
 * split: each part's spread grows with its size, s_k, and the group's with
 * the square root of the parts' squares, so
 *   margin_k = M s_k / sqrt(sum_j s_j^2)      (M / sqrt(n) for n equal pieces)
 * never more than the group's bound. Giving each piece the whole margin
 * made the pieces of a noisy group as hard to place as the group; giving
 * it only its share s_k M let many pieces overrun their bounds while the
 * whole groups did not (bench/isolation, test-pieces). Pieces
 * are measured one by one: the trace shows how often one overran.
 *
 * Each piece's own features (the group's up to its end, less those up to
 * its start) go with it, so that the model also learns from each piece's
 * measured time: a group whose commands always come in the same mix
 * teaches a model only their sum, and the shares it gives the pieces are
 * off until it has seen them apart.
 *
 * Pure computation, no I/O (unit-tested in tests/unit/test-pieces.c).
 */
#ifndef MEDIATOR_PIECES_H
#define MEDIATOR_PIECES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "predict.h"

/*
 * Most pieces a group is cut into: each costs a submission, a fence, a
 * grant, and what the renderer would have saved within one submission (a
 * tiler's tile loads and stores; llvmpipe drops work that a later opaque
 * draw of the same submission covers), so more would cost more than they
 * save.
 */
#define PIECES_MAX 16u

/*
 * The fewest rows a scissor tile has: a draw is cut into no more tiles
 * than its rows allow, so that each tile's own work (its vertices, drawn
 * again per tile) stays small beside its pixels.
 */
#define PIECES_TILE_MIN_ROWS 16u

/*
 * The most pixels a band of a clear (CLEAR_TEXTURE) has: a clear of more
 * is cut into bands of its box's rows whatever its prediction (a young
 * context's first clear of a large texture is predicted like any first
 * group). 1 Mi pixels, 4 MiB of RGBA8: 1.5 to 6 ms on llvmpipe here, a
 * 64 MiB texture's first clear (its storage touched for the first time)
 * 25 to 100 ms whole (bench/faults, mem-flood, 2026-11-27). Each band's
 * first row is a multiple of PIECES_TILE_MIN_ROWS from the box's, so
 * that a compressed format's blocks are never split.
 */
#define PIECES_CLEAR_BAND_PIXELS (1u << 20)

/* A place the group may be cut: after the command at [@start_dw, @end_dw). */
struct piece_boundary {
	size_t start_dw, end_dw;
	double cost;		      /* the model's cost of the group up to here, ns (>= 0) */
	double x[PF_COUNT];	      /* the group's features up to here (PF_GROUP 1) */
	bool draw;		      /* the command is a draw */
	bool tileable;		      /* a draw that may be cut into scissor tiles */
	struct predict_tiling tiling; /* then: its pixels, rasterizer state and scissor */
	enum predict_untiled untiled; /* a draw that may not: why */
};

/*
 * One piece: the guest's commands [start_dw, start_dw + ndw). A tile
 * piece (tiles >= 2) draws the draw at [draw_start_dw, draw_end_dw) with
 * the scissor limited to rows [band_y0, band_y1) of @tiling's pixels: the
 * first tile also runs the commands before the draw, the last those after
 * it; the worker adds the commands that set the scissor (tile_cmds.h).
 * For a clear's band (@tiling's clear), the command at [draw_start_dw,
 * draw_end_dw) is submitted with its box's rows limited to [band_y0,
 * band_y1) instead (tile_cmds_clear_band()).
 */
struct piece {
	size_t start_dw, ndw;
	double share; /* of the group's predicted cost, 0..1 */
	struct predict_estimate est;
	double x[PF_COUNT]; /* its own features: what the model learns from its measured time */
	uint32_t tile, tiles;
	size_t draw_start_dw, draw_end_dw;
	uint32_t band_y0, band_y1;
	struct predict_tiling tiling;
	/* Set by the worker: longer than the piece length with a draw not cut, why (0: not so). */
	enum predict_untiled untiled;
	bool untileable; /* set by the worker: it holds a draw that may not be cut, of any length */
	double young_ns; /* set by the worker: a young piece's length by measure (0: none) */
};

struct piece_plan {
	uint32_t n; /* >= 1 */
	struct piece p[PIECES_MAX];
};

/*
 * Plans the group of @ndw dwords with estimate @est and features @x, and
 * the @nb boundaries @b (in stream order; those at the end of the buffer
 * are not used) whose model cost as a whole is @total_cost: one piece when
 * @piece_ns is 0, when @est has no bound (no model yet), when the
 * prediction (a young estimate's bound) is not longer than @piece_ns, or
 * when there is no boundary to cut at. Costs that are not usable (the
 * total not above 0, NaN), and a young estimate's, give way to an equal
 * share per boundary. Pieces keep @est's young flag.
 */
void pieces_plan(const struct piece_boundary *b, size_t nb, double total_cost, size_t ndw,
		 const struct predict_estimate *est, const double x[PF_COUNT], uint64_t piece_ns,
		 struct piece_plan *out);

/*
 * Why piece @p of @plan, @length ns long, is not cut further, or
 * PREDICT_TILEABLE when it is no longer than the piece length @piece_ns or
 * could be: @draw, the reason a draw it holds may not be cut into scissor
 * tiles (not for a tile piece: its draw was cut), or PREDICT_UNTILED_SPENT
 * when it is cut as far as it may be (@plan has PIECES_MAX pieces, or @p
 * is one of as many tiles as its draw may have) and still longer than
 * twice the piece length (a tile not capped is about one), by a model
 * past its young groups (a young one's prediction is no guide).
 */
enum predict_untiled pieces_uncut(const struct piece_plan *plan, const struct piece *p,
				  enum predict_untiled draw, double length, uint64_t piece_ns);

#endif
