// SPDX-License-Identifier: MIT
/*
 * The textures of the busy stream (../tools/busy_blits.h) for unit tests
 * that drive a real renderer: one BUSY_SIZE x BUSY_SIZE texture, created
 * in virglrenderer and attached to a context.
 */
#ifndef GM_TESTS_BUSY_TEXTURE_H
#define GM_TESTS_BUSY_TEXTURE_H

#include <stdint.h>

#include <virgl/virglrenderer.h>

#include "../tools/busy_blits.h"

/* Creates texture @handle and attaches it to context @ctx_id; 0 or virglrenderer's error. */
static inline int busy_texture_create(uint32_t handle, uint32_t ctx_id)
{
	struct virgl_renderer_resource_create_args args = {
	    .handle = handle,
	    .target = 2, /* PIPE_TEXTURE_2D */
	    .format = BUSY_FORMAT,
	    .bind = BUSY_BIND,
	    .width = BUSY_SIZE,
	    .height = BUSY_SIZE,
	    .depth = 1,
	    .array_size = 1,
	};
	int r = virgl_renderer_resource_create(&args, NULL, 0);

	if (r == 0)
		virgl_renderer_ctx_attach_resource((int)ctx_id, (int)handle);
	return r;
}

#endif
