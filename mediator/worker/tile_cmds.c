// SPDX-License-Identifier: MIT
/*
 * The commands around a scissor tile (see tile_cmds.h). Layouts are
 * virglrenderer's src/virgl_protocol.h: CREATE_OBJECT of a rasterizer
 * state carries VIRGL_OBJ_RS_SIZE dwords (the handle, then S0, whose bit
 * VIRGL_OBJ_RS_S0_SCISSOR turns the scissor test on); BIND_OBJECT and
 * DESTROY_OBJECT a handle; SET_SCISSOR_STATE the start slot and per slot
 * minx | miny << 16, maxx | maxy << 16 (max exclusive); CLEAR_TEXTURE
 * (VIRGL_CLEAR_TEXTURE_SIZE, 12 dwords) the texture's handle, the level,
 * the box x, y, z, w, h, d, then the value.
 */
#include <string.h>

#include "worker/tile_cmds.h"

static bool scissor_was_on(const struct piece *p)
{
	return (p->tiling.rs[1] >> VIRGL_OBJ_RS_S0_SCISSOR_SHIFT) & 1u;
}

static size_t put_scissor(uint32_t *out, uint32_t minxy, uint32_t maxxy)
{
	out[0] = VIRGL_CMD(PREDICT_VIRGL_SET_SCISSOR_STATE, 0, 3);
	out[1] = 0; /* slot 0 */
	out[2] = minxy;
	out[3] = maxxy;
	return 4;
}

static size_t put_handle_cmd(uint32_t *out, uint32_t cmd, uint32_t handle)
{
	out[0] = VIRGL_CMD(cmd, PREDICT_VIRGL_OBJECT_RASTERIZER, 1);
	out[1] = handle;
	return 2;
}

enum { CLEAR_TEXTURE_DW = 12, CLEAR_BOX_Y = 4, CLEAR_BOX_H = 7 }; /* after the header */

size_t tile_cmds_before(const struct piece *p, uint32_t out[TILE_CMDS_MAX])
{
	size_t n = 0;

	if (p->tiles < 2 || p->tiling.clear)
		return 0;
	if (p->tile == 0 && !scissor_was_on(p)) {
		out[n++] = VIRGL_CMD(PREDICT_VIRGL_CREATE_OBJECT, PREDICT_VIRGL_OBJECT_RASTERIZER,
				     PREDICT_RS_DWORDS);
		memcpy(&out[n], p->tiling.rs, sizeof(p->tiling.rs));
		out[n] = TILE_RASTERIZER_HANDLE;
		out[n + 1] |= 1u << VIRGL_OBJ_RS_S0_SCISSOR_SHIFT;
		n += PREDICT_RS_DWORDS;
		n += put_handle_cmd(&out[n], PREDICT_VIRGL_BIND_OBJECT, TILE_RASTERIZER_HANDLE);
	}
	n += put_scissor(&out[n], p->tiling.x0 | p->band_y0 << 16, p->tiling.x1 | p->band_y1 << 16);
	return n;
}

size_t tile_cmds_after(const struct piece *p, uint32_t out[TILE_CMDS_MAX])
{
	size_t n = 0;

	if (p->tiles < 2 || p->tile + 1 != p->tiles || p->tiling.clear)
		return 0;
	n += put_scissor(&out[n], p->tiling.scissor[0], p->tiling.scissor[1]);
	if (!scissor_was_on(p)) {
		n += put_handle_cmd(&out[n], PREDICT_VIRGL_BIND_OBJECT, p->tiling.rs[0]);
		n += put_handle_cmd(&out[n], PREDICT_VIRGL_DESTROY_OBJECT, TILE_RASTERIZER_HANDLE);
	}
	return n;
}

size_t tile_cmds_clear_band(const struct piece *p, const uint32_t *cmd, size_t ndw,
			    uint32_t out[TILE_CMDS_MAX])
{
	_Static_assert(CLEAR_TEXTURE_DW + 1 <= TILE_CMDS_MAX, "a clear fits");

	if (p->tiles < 2 || !p->tiling.clear || ndw != CLEAR_TEXTURE_DW + 1 ||
	    cmd[0] != VIRGL_CMD(PREDICT_VIRGL_CLEAR_TEXTURE, 0, CLEAR_TEXTURE_DW) ||
	    p->band_y1 <= p->band_y0)
		return 0;
	memcpy(out, cmd, ndw * sizeof(cmd[0]));
	out[CLEAR_BOX_Y] = p->band_y0;
	out[CLEAR_BOX_H] = p->band_y1 - p->band_y0;
	return ndw;
}
