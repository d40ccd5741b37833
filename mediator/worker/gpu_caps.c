// SPDX-License-Identifier: MIT
/*
 * The identity of a renderer's capability set (see gpu_caps.h).
 */
#include "worker/gpu_caps.h"

/*
 * Fields of struct virgl_caps_v2 (virglrenderer's virgl_hw.h), by byte
 * offset and size, that a driver fills from the machine's state rather than
 * from what it is: max_video_memory, which Mesa 25's llvmpipe reports as
 * the memory free at the time (it differed in every process of one host),
 * so a state learned on the same driver would never load again.
 */
static const struct {
	size_t offset, size;
} GPU_CAPS_VOLATILE[] = {
    {692, 4}, /* max_video_memory */
};

uint64_t gpu_caps_hash(const uint8_t *caps, size_t size)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a 64 */

	for (size_t i = 0; i < size; i++) {
		uint8_t byte = caps[i];

		for (size_t v = 0; v < sizeof(GPU_CAPS_VOLATILE) / sizeof(GPU_CAPS_VOLATILE[0]);
		     v++) {
			if (i >= GPU_CAPS_VOLATILE[v].offset &&
			    i < GPU_CAPS_VOLATILE[v].offset + GPU_CAPS_VOLATILE[v].size)
				byte = 0;
		}
		h ^= byte;
		h *= 1099511628211ull;
	}
	return h;
}
