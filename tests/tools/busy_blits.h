// SPDX-License-Identifier: MIT
/*
 * An expensive command group for the hostile test tools: whole-surface
 * blits between two BUSY_SIZE x BUSY_SIZE B8G8R8X8 textures, one way and
 * back (each depends on the one before), nearest filter. On llvmpipe here
 * BUSY_BLITS of them take tens of milliseconds: long enough that a
 * context destroyed right after submitting them still has them on the GPU.
 */
#ifndef GM_TESTS_BUSY_BLITS_H
#define GM_TESTS_BUSY_BLITS_H

#include <stdint.h>
#include <string.h>

#include "virgl_defs.h"

#define BUSY_SIZE     2048u
#define BUSY_BLITS    16u
#define BUSY_BLIT_DW  21u				/* VIRGL_CCMD_BLIT's length */
#define BUSY_DWORDS   (BUSY_BLITS * (1 + BUSY_BLIT_DW)) /* the whole stream */
#define BUSY_FORMAT   2u				/* VIRGL_FORMAT_B8G8R8X8_UNORM */
#define BUSY_BIND     ((1u << 1) | (1u << 3))		/* render target, sampler view */
#define BUSY_CMD_BLIT 16u

/* Writes the BUSY_DWORDS of the stream into @out, between resources @a and @b. */
static inline void busy_blits(uint32_t *out, uint32_t a, uint32_t b)
{
	const uint32_t box[6] = {0, 0, 0, BUSY_SIZE, BUSY_SIZE, 1};

	for (uint32_t i = 0; i < BUSY_BLITS; i++) {
		uint32_t *c = &out[i * (1 + BUSY_BLIT_DW)];

		c[0] = VIRGL_CMD(BUSY_CMD_BLIT, 0, BUSY_BLIT_DW);
		c[1] = 0xf; /* mask RGBA, filter nearest, no scissor */
		c[2] = 0;
		c[3] = BUSY_SIZE | BUSY_SIZE << 16;
		c[4] = i % 2 ? a : b; /* destination */
		c[5] = 0;
		c[6] = BUSY_FORMAT;
		memcpy(&c[7], box, sizeof(box));
		c[13] = i % 2 ? b : a; /* source */
		c[14] = 0;
		c[15] = BUSY_FORMAT;
		memcpy(&c[16], box, sizeof(box));
	}
}

#endif
