// SPDX-License-Identifier: MIT
/*
 * Tests of the host memory quota of a client's resources: a resource's
 * size from its description (texel sizes, mip levels, layers, samples,
 * saturation on absurd sizes), and the quota's refusals and give-backs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "worker/resource_quota.h"
#include "virgl_defs.h"

/* A 2D texture of @format, @w x @h, one level, one layer. */
static struct resource_desc tex2d(uint32_t format, uint32_t w, uint32_t h)
{
	return (struct resource_desc){PIPE_TEXTURE_2D, format, w, h, 1, 1, 0, 0};
}

static void texel_sizes_follow_the_format(void **state)
{
	struct resource_desc bgrx = tex2d(2, 4096, 4096); /* B8G8R8X8_UNORM */
	struct resource_desc r8 = tex2d(64, 1000, 1);	  /* R8_UNORM: a buffer's bytes */
	struct resource_desc unknown = tex2d(9999, 10, 10);

	assert_true(resource_host_bytes(&bgrx) == 64ull << 20);
	assert_true(resource_host_bytes(&r8) == 1000);
	assert_true(resource_host_bytes(&unknown) == 100ull * RESOURCE_QUOTA_DEFAULT_TEXEL);
	assert_int_equal(resource_texel_bytes(31), 16); /* R32G32B32A32_FLOAT */
	assert_int_equal(resource_texel_bytes(27), 32); /* R64G64B64A64_FLOAT */
}

static void mip_levels_layers_and_samples_count(void **state)
{
	struct resource_desc d = tex2d(1, 8, 8);

	d.last_level = 3; /* 8x8 + 4x4 + 2x2 + 1x1 = 85 texels */
	assert_true(resource_host_bytes(&d) == 85 * 4);
	d.array_size = 6; /* a cube map's faces */
	assert_true(resource_host_bytes(&d) == 6 * 85 * 4);
	d = tex2d(1, 16, 16);
	d.nr_samples = 4;
	assert_true(resource_host_bytes(&d) == 4 * 256 * 4);
	/* A 3D texture's depth halves with its levels: 4x4x4 + 2x2x2 + 1. */
	d = (struct resource_desc){PIPE_TEXTURE_3D, 1, 4, 4, 4, 1, 2, 0};
	assert_true(resource_host_bytes(&d) == (64 + 8 + 1) * 4);
	/* A 2D array's depth field does not halve (layers are not levels). */
	d = (struct resource_desc){PIPE_TEXTURE_2D, 1, 4, 4, 3, 1, 1, 0};
	assert_true(resource_host_bytes(&d) == (16 * 3 + 4 * 3) * 4);
}

static void absurd_sizes_saturate(void **state)
{
	struct resource_desc d = {PIPE_TEXTURE_3D, 27,	       UINT32_MAX, UINT32_MAX,
				  UINT32_MAX,	   UINT32_MAX, UINT32_MAX, UINT32_MAX};

	assert_true(resource_host_bytes(&d) == UINT64_MAX);
}

static void the_quota_refuses_past_its_limit_and_takes_back(void **state)
{
	struct resource_quota q;

	resource_quota_init(&q, 100);
	assert_int_equal(resource_quota_admit(&q, 60), 0);
	assert_int_equal(resource_quota_admit(&q, 41), -ENOSPC);
	assert_true(q.used == 60);
	assert_int_equal(resource_quota_admit(&q, 40), 0);
	assert_int_equal(resource_quota_admit(&q, 1), -ENOSPC);
	resource_quota_release(&q, 60);
	assert_int_equal(resource_quota_admit(&q, 60), 0);
	/* One resource larger than the whole quota, and one that would wrap. */
	resource_quota_init(&q, 100);
	assert_int_equal(resource_quota_admit(&q, 101), -ENOSPC);
	assert_int_equal(resource_quota_admit(&q, 50), 0);
	assert_int_equal(resource_quota_admit(&q, UINT64_MAX), -ENOSPC);
	assert_true(q.used == 50);
}

static void zero_is_unlimited(void **state)
{
	struct resource_quota q;

	resource_quota_init(&q, 0);
	assert_int_equal(resource_quota_admit(&q, UINT64_MAX / 2), 0);
	assert_int_equal(resource_quota_admit(&q, UINT64_MAX), 0);
	resource_quota_release(&q, UINT64_MAX);
	assert_true(q.used == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(texel_sizes_follow_the_format),
	    cmocka_unit_test(mip_levels_layers_and_samples_count),
	    cmocka_unit_test(absurd_sizes_saturate),
	    cmocka_unit_test(the_quota_refuses_past_its_limit_and_takes_back),
	    cmocka_unit_test(zero_is_unlimited),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
