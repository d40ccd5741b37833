// SPDX-License-Identifier: MIT
/*
 * gpu_caps_hash(): the identity of a renderer's capability set 2, under
 * which learned models are saved, names the driver and not the moment.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "worker/gpu_caps.h"

/* sizeof(struct virgl_caps_v2) in virglrenderer 0.10.4 */
#define CAPS_V2_SIZE	    1384
#define MAX_VIDEO_MEMORY_AT 692
#define RENDERER_AT	    696

static void fill(uint8_t *caps, const char *renderer, uint32_t video_memory)
{
	for (size_t i = 0; i < CAPS_V2_SIZE; i++)
		caps[i] = (uint8_t)(i * 7);
	memcpy(caps + MAX_VIDEO_MEMORY_AT, &video_memory, sizeof(video_memory));
	memset(caps + RENDERER_AT, 0, 64);
	memcpy(caps + RENDERER_AT, renderer, strlen(renderer));
}

static void the_free_video_memory_does_not_change_the_identity(void **state)
{
	uint8_t a[CAPS_V2_SIZE], b[CAPS_V2_SIZE];

	(void)state;
	fill(a, "LLVMPIPE (LLVM 15.0.6, 256 bits)", 0xcf04c9);
	fill(b, "LLVMPIPE (LLVM 15.0.6, 256 bits)", 0xdfb51a);
	assert_true(gpu_caps_hash(a, sizeof(a)) == gpu_caps_hash(b, sizeof(b)));
}

static void another_renderer_is_another_identity(void **state)
{
	uint8_t a[CAPS_V2_SIZE], b[CAPS_V2_SIZE];

	(void)state;
	fill(a, "LLVMPIPE (LLVM 15.0.6, 256 bits)", 1024);
	fill(b, "LLVMPIPE (LLVM 19.1.7, 256 bits)", 1024);
	assert_true(gpu_caps_hash(a, sizeof(a)) != gpu_caps_hash(b, sizeof(b)));
}

static void any_other_field_changes_the_identity(void **state)
{
	uint8_t a[CAPS_V2_SIZE], b[CAPS_V2_SIZE];

	(void)state;
	fill(a, "virgl", 1024);
	fill(b, "virgl", 1024);
	b[MAX_VIDEO_MEMORY_AT - 1] ^= 1; /* capability_bits_v2 */
	assert_true(gpu_caps_hash(a, sizeof(a)) != gpu_caps_hash(b, sizeof(b)));
	memcpy(b, a, sizeof(b));
	b[RENDERER_AT + 63] ^= 1;
	assert_true(gpu_caps_hash(a, sizeof(a)) != gpu_caps_hash(b, sizeof(b)));
}

static void a_short_block_is_hashed_as_far_as_it_goes(void **state)
{
	uint8_t a[CAPS_V2_SIZE];

	(void)state;
	fill(a, "virgl", 1024);
	/* a v1-sized block ends before max_video_memory; nothing is read past it */
	assert_true(gpu_caps_hash(a, 308) != gpu_caps_hash(a, 309));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_free_video_memory_does_not_change_the_identity),
	    cmocka_unit_test(another_renderer_is_another_identity),
	    cmocka_unit_test(any_other_field_changes_the_identity),
	    cmocka_unit_test(a_short_block_is_hashed_as_far_as_it_goes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
