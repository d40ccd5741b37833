// SPDX-License-Identifier: MIT
/*
 * What decides whether a draw may be cut into scissor tiles (the
 * worker's pieces: predict_ctx_set_boundary_hook(), struct
 * predict_tiling). Private to libpredict: predict_ctx.c keeps one struct
 * predict_tile_state per sub-context and feeds it every command.
 *
 * A draw drawn once per tile, each time with the scissor limited to the
 * tile, leaves the framebuffer as the whole draw does when every pixel's
 * result depends only on the primitives covering it, in their order: what
 * depth, stencil and blending do. It does not when the draw writes
 * anything but the framebuffer, since each tile would write it again
 * (shader buffers, images and atomic counters bound to any stage, stream
 * output), when a query is counting (primitives would be counted once per
 * tile), or when a geometry or tessellation shader is bound (it may pick
 * another viewport, whose scissor the tile does not set). Those are
 * tracked here, conservatively: a binding whose slot is out of the masks'
 * range counts as bound for good.
 */
#ifndef PREDICT_TILING_H
#define PREDICT_TILING_H

#include <stdbool.h>
#include <stdint.h>

#include "predict_ctx.h"
#include "predict_decode.h"

struct predict_tile_state {
	uint32_t scissor[2]; /* scissor 0 as last set: minx | miny << 16, maxx | maxy << 16 */
	uint32_t buffers[PREDICT_PIPE_SHADER_TYPES]; /* slots with a shader buffer bound */
	uint32_t images[PREDICT_PIPE_SHADER_TYPES];  /* slots with a shader image bound */
	uint32_t atomics;			     /* slots with an atomic buffer bound */
	bool writes_for_good; /* a writable binding beyond the masks was seen */
	bool streamout;	      /* stream output targets are set */
	uint32_t queries;     /* queries begun and not ended */
	uint32_t stages;      /* bit per shader stage with a shader bound */
};

/* Follows command @c (decoded) of the sub-context @t belongs to. */
void predict_tile_state_apply(struct predict_tile_state *t, const struct predict_dcmd *c);

/* Why a draw now may not be cut into tiles, or PREDICT_TILEABLE when it may. */
enum predict_untiled predict_tile_state_blocker(const struct predict_tile_state *t);

#endif
