// SPDX-License-Identifier: MIT
/*
 * The virgl protocol's definitions that no installed header gives, in one
 * place for libpredict and its users (the worker's transports).
 *
 * Names and numbers are the protocol's own, so that they compare line by
 * line with their sources: virglrenderer's src/virgl_protocol.h (command
 * headers, object fields, query state) and src/virgl_hw.h (formats, struct
 * virgl_box), and gallium's p_defines.h (PIPE_*) as virglrenderer and
 * Mesa's virgl driver both carry it. Command and object numbers are in
 * predict_decode.h (enum predict_virgl_cmd, enum predict_virgl_object);
 * resource bind flags are virglrenderer.h's VIRGL_RES_BIND_*.
 */
#ifndef VIRGL_DEFS_H
#define VIRGL_DEFS_H

#include <stdint.h>

/*
 * A box in a resource: origin and size in texels (virgl_hw.h).
 * virglrenderer.h declares it for its transfer functions, but only the
 * uninstalled virgl_hw.h defines it.
 */
struct virgl_box {
	uint32_t x, y, z;
	uint32_t w, h, d;
};

/* A command header (VIRGL_CMD0): command, object type, payload dwords after the header. */
#define VIRGL_CMD(cmd, obj, len) ((uint32_t)(cmd) | (uint32_t)(obj) << 8 | (uint32_t)(len) << 16)

/* enum pipe_texture_target. */
#define PIPE_BUFFER	0u /* a plain buffer: vertex data, uniforms, a query result */
#define PIPE_TEXTURE_2D 2u
#define PIPE_TEXTURE_3D 3u

/* enum pipe_prim_type: the triangle types, which face culling applies to. */
#define PIPE_PRIM_TRIANGLES	     4u
#define PIPE_PRIM_POLYGON	     9u
#define PIPE_PRIM_TRIANGLES_ADJ	     12u
#define PIPE_PRIM_TRIANGLE_STRIP_ADJ 13u

/* PIPE_FACE_*: which faces a rasterizer state culls. */
#define PIPE_FACE_FRONT_AND_BACK 3u

/* PIPE_CLEAR_*: the buffers a CLEAR clears. */
#define PIPE_CLEAR_DEPTH   (1u << 0)
#define PIPE_CLEAR_STENCIL (1u << 1)
#define PIPE_CLEAR_COLOR   (0xffu << 2) /* COLOR0..COLOR7 */

/* enum pipe_query_type. */
#define PIPE_QUERY_OCCLUSION_COUNTER 0u

/* enum virgl_formats (virgl_hw.h). */
#define VIRGL_FORMAT_R32G32_FLOAT	29u
#define VIRGL_FORMAT_R32G32B32_FLOAT	30u
#define VIRGL_FORMAT_R32G32B32A32_FLOAT 31u
#define VIRGL_FORMAT_R8_UNORM		64u

/* Fields of a rasterizer state's dword S0 (VIRGL_OBJ_RS_S0_*): where they start. */
#define VIRGL_OBJ_RS_S0_RASTERIZER_DISCARD_SHIFT 3  /* 1 bit */
#define VIRGL_OBJ_RS_S0_CULL_FACE_SHIFT		 8  /* 2 bits, PIPE_FACE_* */
#define VIRGL_OBJ_RS_S0_SCISSOR_SHIFT		 14 /* 1 bit: the scissor test is on */

/* What the host writes to a query's result buffer (struct virgl_host_query_state). */
struct virgl_host_query_state {
	uint32_t query_state; /* VIRGL_QUERY_STATE_* */
	uint32_t result_size;
	uint64_t result;
};

#define VIRGL_QUERY_STATE_DONE 1u

#endif
