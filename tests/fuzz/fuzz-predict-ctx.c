// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: arbitrary bytes as virgl command groups for one
 * predict_ctx. The first byte picks the fragment mode; the rest is cut into
 * groups at every 0xdeadbeef dword, so that state (objects, sub-contexts,
 * long shaders, bounding boxes) carries over between groups as it does in
 * a worker. A few resources exist from the start (a 2D texture and two
 * buffers), and every group is also written to buffer 2 as if it came from
 * a transfer. Nothing may read outside the buffers or crash, and every
 * feature must stay finite and within PREDICT_FEATURE_MAX (run under ASan
 * and UBSan).
 *
 *   CC=clang meson setup build-fuzz -Dfuzzing=true \
 *       -Db_sanitize=address,undefined -Db_lundef=false
 *   build-fuzz/tests/fuzz/fuzz-predict-ctx -max_total_time=60
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "predict_ctx.h"

#define GROUP_SEPARATOR 0xdeadbeefu

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct predict_features *f)
{
	for (int i = 0; i < PF_COUNT; i++)
		if (!(f->x[i] >= 0 && f->x[i] <= PREDICT_FEATURE_MAX))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct predict_resource_desc tex = {
	    .target = 2, .format = 67, .width = 640, .height = 480, .depth = 1, .array_size = 1};
	const struct predict_resource_desc buf = {
	    .target = 0, .format = 64, .width = 65536, .height = 1, .depth = 1, .array_size = 1};
	struct predict_ctx *ctx;
	uint32_t *dw;
	size_t ndw, start = 0;
	unsigned scale;

	if (size < 1)
		return 0;
	ctx = predict_ctx_create();
	if (!ctx)
		return 0;
	predict_ctx_resource_create(ctx, 1, &tex);
	predict_ctx_resource_create(ctx, 2, &buf);
	predict_ctx_resource_create(ctx, 3, &buf);
	predict_ctx_set_fragment_mode(ctx, (enum predict_fragment_mode)(data[0] % 3));
	scale = data[0] >> 2; /* how many fragments per estimated one are "measured" */
	data++;
	size--;
	ndw = size / 4;
	dw = malloc(ndw ? ndw * 4 : 1);
	if (!dw) {
		predict_ctx_destroy(ctx);
		return 0;
	}
	memcpy(dw, data, ndw * 4);
	for (size_t i = 0; i <= ndw; i++) {
		if (i == ndw || dw[i] == GROUP_SEPARATOR) {
			/* Copy the group to its own block so ASan sees its end. */
			size_t n = i - start;
			uint32_t *g = malloc(n ? n * 4 : 1);
			struct predict_features f;
			struct predict_cmd_counts c;
			struct predict_decode_error err;

			if (!g)
				break;
			memcpy(g, dw + start, n * 4);
			predict_ctx_submit(ctx, g, n, &f, &c, &err);
			check(&f);
			predict_ctx_resource_write(ctx, 2, start * 4, g, n * 4);
			predict_ctx_observe_fragments(ctx, f.x[PF_FRAGMENTS] * scale, &f);
			free(g);
			start = i + 1;
		}
	}
	free(dw);
	predict_ctx_destroy(ctx);
	return 0;
}
