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

#include "fuzz_groups.h"
#include "predict_ctx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct predict_features *f)
{
	for (int i = 0; i < PF_COUNT; i++)
		if (!(f->x[i] >= 0 && f->x[i] <= PREDICT_FEATURE_MAX))
			abort();
}

/* What each group is fed with (fuzz_for_each_group()). */
struct run {
	struct predict_ctx *ctx;
	unsigned scale; /* how many fragments per estimated one are "measured" */
};

static void one_group(const uint32_t *g, size_t n, size_t start, void *arg)
{
	struct run *r = arg;
	struct predict_features f;
	struct predict_cmd_counts c;
	struct predict_decode_error err;

	predict_ctx_submit(r->ctx, g, n, &f, &c, &err);
	check(&f);
	predict_ctx_resource_write(r->ctx, 2, start * 4, g, n * 4);
	predict_ctx_observe_fragments(r->ctx, f.x[PF_FRAGMENTS] * r->scale, &f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct predict_resource_desc tex = {
	    .target = 2, .format = 67, .width = 640, .height = 480, .depth = 1, .array_size = 1};
	const struct predict_resource_desc buf = {
	    .target = 0, .format = 64, .width = 65536, .height = 1, .depth = 1, .array_size = 1};
	struct run r;

	if (size < 1)
		return 0;
	r.ctx = predict_ctx_create();
	if (!r.ctx)
		return 0;
	predict_ctx_resource_create(r.ctx, 1, &tex);
	predict_ctx_resource_create(r.ctx, 2, &buf);
	predict_ctx_resource_create(r.ctx, 3, &buf);
	predict_ctx_set_fragment_mode(r.ctx, (enum predict_fragment_mode)(data[0] % 3));
	r.scale = data[0] >> 2;
	fuzz_for_each_group(data + 1, size - 1, one_group, &r);
	predict_ctx_destroy(r.ctx);
	return 0;
}
