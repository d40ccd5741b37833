// SPDX-License-Identifier: MIT
/*
 * Host memory quotas of resources (see resource_quota.h).
 */
#include <errno.h>
#include <stdbool.h>

#include "worker/resource_quota.h"
#include "virgl_defs.h"

/*
 * Texel sizes of the formats guests use, by their virgl_hw.h numbers
 * (enum virgl_formats). Sizes follow from the formats' names.
 */
static const struct {
	uint16_t format;
	uint8_t bytes;
} texel_sizes[] = {
    {1, 4},    /* B8G8R8A8_UNORM */
    {2, 4},    /* B8G8R8X8_UNORM */
    {3, 4},    /* A8R8G8B8_UNORM */
    {4, 4},    /* X8R8G8B8_UNORM */
    {5, 2},    /* B5G5R5A1_UNORM */
    {6, 2},    /* B4G4R4A4_UNORM */
    {7, 2},    /* B5G6R5_UNORM */
    {8, 4},    /* R10G10B10A2_UNORM */
    {9, 1},    /* L8_UNORM */
    {10, 1},   /* A8_UNORM */
    {11, 1},   /* I8_UNORM */
    {12, 2},   /* L8A8_UNORM */
    {13, 2},   /* L16_UNORM */
    {16, 2},   /* Z16_UNORM */
    {17, 4},   /* Z32_UNORM */
    {18, 4},   /* Z32_FLOAT */
    {19, 4},   /* Z24_UNORM_S8_UINT */
    {20, 4},   /* S8_UINT_Z24_UNORM */
    {21, 4},   /* Z24X8_UNORM */
    {22, 4},   /* X8Z24_UNORM */
    {23, 1},   /* S8_UINT */
    {24, 8},   /* R64_FLOAT */
    {25, 16},  /* R64G64_FLOAT */
    {26, 24},  /* R64G64B64_FLOAT */
    {27, 32},  /* R64G64B64A64_FLOAT */
    {28, 4},   /* R32_FLOAT */
    {29, 8},   /* R32G32_FLOAT */
    {30, 12},  /* R32G32B32_FLOAT */
    {31, 16},  /* R32G32B32A32_FLOAT */
    {48, 2},   /* R16_UNORM */
    {49, 4},   /* R16G16_UNORM */
    {51, 8},   /* R16G16B16A16_UNORM */
    {64, 1},   /* R8_UNORM */
    {65, 2},   /* R8G8_UNORM */
    {66, 3},   /* R8G8B8_UNORM */
    {67, 4},   /* R8G8B8A8_UNORM */
    {68, 4},   /* X8B8G8R8_UNORM */
    {91, 2},   /* R16_FLOAT */
    {92, 4},   /* R16G16_FLOAT */
    {94, 8},   /* R16G16B16A16_FLOAT */
    {100, 4},  /* B8G8R8A8_SRGB */
    {101, 4},  /* B8G8R8X8_SRGB */
    {104, 4},  /* R8G8B8A8_SRGB */
    {121, 4},  /* A8B8G8R8_UNORM */
    {124, 4},  /* R11G11B10_FLOAT */
    {126, 8},  /* Z32_FLOAT_S8X24_UINT */
    {134, 4},  /* R8G8B8X8_UNORM */
    {177, 1},  /* R8_UINT */
    {180, 4},  /* R8G8B8A8_UINT */
    {185, 2},  /* R16_UINT */
    {193, 4},  /* R32_UINT */
    {196, 16}, /* R32G32B32A32_UINT */
};

uint32_t resource_texel_bytes(uint32_t format)
{
	for (unsigned i = 0; i < sizeof(texel_sizes) / sizeof(texel_sizes[0]); i++) {
		if (texel_sizes[i].format == format)
			return texel_sizes[i].bytes;
	}
	return RESOURCE_QUOTA_DEFAULT_TEXEL;
}

/* a * b, or UINT64_MAX when it does not fit. */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t level_size(uint32_t v, uint32_t level)
{
	return level >= 32 || (v >> level) == 0 ? 1 : v >> level;
}

uint64_t resource_host_bytes(const struct resource_desc *d)
{
	/* A 3D texture's depth halves with each level; layers do not. */
	bool volume = d->target == PIPE_TEXTURE_3D;
	uint32_t levels = d->last_level < 31 ? d->last_level + 1 : 32;
	uint64_t texels = 0;

	for (uint32_t l = 0; l < levels; l++) {
		uint64_t t = mul_sat(level_size(d->width, l), level_size(d->height, l));

		texels = add_sat(texels, mul_sat(t, volume ? level_size(d->depth, l)
							   : (d->depth ? d->depth : 1)));
	}
	texels = mul_sat(texels, d->array_size ? d->array_size : 1);
	texels = mul_sat(texels, d->nr_samples > 1 ? d->nr_samples : 1);
	return mul_sat(texels, resource_texel_bytes(d->format));
}

void resource_quota_init(struct resource_quota *q, uint64_t max_bytes)
{
	q->used = 0;
	q->max = max_bytes;
}

int resource_quota_admit(struct resource_quota *q, uint64_t bytes)
{
	if (q->max && (bytes > q->max || q->used > q->max - bytes))
		return -ENOSPC;
	q->used = add_sat(q->used, bytes);
	return 0;
}

void resource_quota_release(struct resource_quota *q, uint64_t bytes)
{
	q->used = bytes > q->used ? 0 : q->used - bytes;
}
