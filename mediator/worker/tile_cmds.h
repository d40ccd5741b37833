// SPDX-License-Identifier: MIT
/*
 * The commands a worker adds around a scissor tile (pieces.h): the draw
 * of a tile piece runs with scissor 0 set to the tile's band, and after
 * the last tile the context's state is as the guest left it.
 *
 * Where the guest's rasterizer state has the scissor test off, the first
 * tile creates a copy of it with the test on under a handle of the host's
 * range (PREDICT_HOST_HANDLE_MIN + 1: guests cannot create such handles,
 * predict_decode.h) and binds it; after the last tile the guest's state
 * is bound again and the copy destroyed. Scissor 0 is set back to what
 * the guest set last (zero where it never did, as a new context has it).
 * Every command is whole and its own: each list can be submitted alone.
 */
#ifndef MEDIATOR_TILE_CMDS_H
#define MEDIATOR_TILE_CMDS_H

#include <stddef.h>
#include <stdint.h>

#include "worker/pieces.h"

/* The rasterizer state copy's handle. */
#define TILE_RASTERIZER_HANDLE (PREDICT_HOST_HANDLE_MIN + 1u)

/* Most dwords either list has. */
#define TILE_CMDS_MAX 24u

/* The commands before tile piece @p's draw into @out; returns their dwords (0: not a tile). */
size_t tile_cmds_before(const struct piece *p, uint32_t out[TILE_CMDS_MAX]);

/* The commands after the last tile's draw into @out; returns their dwords (0: none). */
size_t tile_cmds_after(const struct piece *p, uint32_t out[TILE_CMDS_MAX]);

/*
 * Clear band piece @p's CLEAR_TEXTURE (@cmd, its @ndw dwords, header
 * included) with its box's rows limited to [band_y0, band_y1) into @out;
 * returns its dwords (0: @p is not a clear's band, or @cmd not a whole
 * CLEAR_TEXTURE).
 */
size_t tile_cmds_clear_band(const struct piece *p, const uint32_t *cmd, size_t ndw,
			    uint32_t out[TILE_CMDS_MAX]);

#endif
