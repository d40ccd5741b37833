// SPDX-License-Identifier: MIT
/*
 * Tests of per-context state tracking and features: clears per mask and
 * framebuffer size, draw vertex counts and shader work, fragments from the
 * projected bounding box against hand-computed areas, the fallbacks, NaN
 * and Inf from the guest, sub-context switches, history mode, and errors;
 * and what the boundary hook says of each draw: whether it may be cut into
 * scissor tiles (its pixels, rasterizer state and scissor), or why not.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "predict_ctx.h"

#define CMD0(cmd, obj, len) ((uint32_t)(cmd) | ((uint32_t)(obj) << 8) | ((uint32_t)(len) << 16))
#define N(a)		    (sizeof(a) / sizeof((a)[0]))

enum {
	CREATE = 1,
	BIND = 2,
	VIEWPORT = 4,
	FRAMEBUFFER = 5,
	VBUFS = 6,
	CLEAR = 7,
	DRAW = 8,
	INLINE_WRITE = 9,
	CBUF = 12,
	BLIT = 16,
	SET_SUB = 28,
	CREATE_SUB = 29,
	BIND_SHADER = 31,
};
enum { O_RS = 2, O_SHADER = 4, O_VE = 5, O_SURFACE = 8 };
enum { FMT_RG32F = 29, FMT_RGB32F = 30, FMT_RGBA8 = 67 };

/* A command stream being built. */
struct sb {
	uint32_t d[8192];
	size_t n;
};

static void emit(struct sb *s, uint32_t cmd, uint32_t obj, uint32_t n, ...)
{
	va_list ap;

	assert_true(s->n + n + 1 <= N(s->d));
	s->d[s->n++] = CMD0(cmd, obj, n);
	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++)
		s->d[s->n++] = va_arg(ap, uint32_t);
	va_end(ap);
}

static uint32_t fb(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static int submit(struct predict_ctx *ctx, struct sb *s, struct predict_features *f)
{
	struct predict_decode_error err;
	/* At the end of a heap block of exactly its size (ASan). */
	uint32_t *buf = malloc(s->n ? s->n * sizeof(uint32_t) : 1);
	int r;

	assert_non_null(buf);
	memcpy(buf, s->d, s->n * sizeof(uint32_t));
	r = predict_ctx_submit(ctx, buf, s->n, f, NULL, &err);
	free(buf);
	s->n = 0;
	return r;
}

static void add_texture(struct predict_ctx *ctx, uint32_t handle, uint32_t w, uint32_t h)
{
	struct predict_resource_desc d = {
	    .target = 2, .format = FMT_RGBA8, .width = w, .height = h, .depth = 1, .array_size = 1};

	assert_int_equal(predict_ctx_resource_create(ctx, handle, &d), 0);
}

static void add_buffer(struct predict_ctx *ctx, uint32_t handle, uint32_t bytes)
{
	struct predict_resource_desc d = {
	    .target = 0, .width = bytes, .height = 1, .depth = 1, .array_size = 1};

	assert_int_equal(predict_ctx_resource_create(ctx, handle, &d), 0);
}

/* Surface 10 on a w x h texture 100 as color buffer 0 and the matching viewport. */
static void frame(struct predict_ctx *ctx, struct sb *s, uint32_t w, uint32_t h)
{
	add_texture(ctx, 100, w, h);
	emit(s, CREATE, O_SURFACE, 5, 10, 100, FMT_RGBA8, 0, 0);
	emit(s, FRAMEBUFFER, 0, 3, 1, 0, 10);
	emit(s, VIEWPORT, 0, 7, 0, fb(w / 2.0f), fb(h / 2.0f), fb(0.5f), fb(w / 2.0f), fb(h / 2.0f),
	     fb(0.5f));
}

static void clear_mask(struct sb *s, uint32_t buffers)
{
	emit(s, CLEAR, 0, 8, buffers, 0, 0, 0, 0, 0, 0, 0);
}

static void all_finite(const struct predict_features *f)
{
	for (int i = 0; i < PF_COUNT; i++) {
		assert_true(isfinite(f->x[i]));
		assert_true(f->x[i] >= 0);
		assert_true(f->x[i] <= PREDICT_FEATURE_MAX);
	}
}

struct clear_case {
	const char *description;
	uint32_t buffers;
	enum predict_feature feature; /* PF_COUNT: none */
};

static const struct clear_case clear_cases[] = {
    {"color0", 0x4, PF_CLEAR_C},
    {"color1 alone is color", 0x8, PF_CLEAR_C},
    {"depth", 0x1, PF_CLEAR_D},
    {"stencil", 0x2, PF_CLEAR_S},
    {"color and depth", 0x5, PF_CLEAR_CD},
    {"color and stencil", 0x6, PF_CLEAR_CS},
    {"depth and stencil", 0x3, PF_CLEAR_DS},
    {"color, depth and stencil", 0x7, PF_CLEAR_CDS},
    {"all colors, depth and stencil", 0x3ff, PF_CLEAR_CDS},
    {"empty mask clears nothing", 0x0, PF_COUNT},
};

static void clear_adds_framebuffer_pixels_to_its_mask(void **state)
{
	for (size_t i = 0; i < N(clear_cases); i++) {
		const struct clear_case *t = &clear_cases[i];
		struct predict_ctx *ctx = predict_ctx_create();
		struct predict_features f;
		struct sb s = {.n = 0};

		print_message("%s\n", t->description);
		frame(ctx, &s, 640, 480);
		clear_mask(&s, t->buffers);
		assert_int_equal(submit(ctx, &s, &f), 0);
		for (int k = PF_CLEAR_C; k <= PF_CLEAR_CDS; k++)
			assert_true(f.x[k] == (k == (int)t->feature ? 640.0 * 480.0 : 0.0));
		assert_true(f.x[PF_GROUP] == 1);
		assert_true(f.x[PF_CMDS] == 4);
		predict_ctx_destroy(ctx);
	}
}

static void clear_without_color_buffer_uses_the_depth_surface(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f;
	struct sb s = {.n = 0};

	add_texture(ctx, 7, 320, 200);
	emit(&s, CREATE, O_SURFACE, 5, 11, 7, 19, 0, 0);
	emit(&s, FRAMEBUFFER, 0, 2, 0, 11);
	clear_mask(&s, 0x3);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(f.x[PF_CLEAR_DS] == 320.0 * 200.0);
	predict_ctx_destroy(ctx);
}

/* A buffer cleared again before anything draws keeps only the last clear
 * value (llvmpipe, tilers): its pixels count once; another buffer, or a
 * clear after a draw, counts again. */
static void superseded_clears_count_once(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f;
	struct sb s = {.n = 0};

	frame(ctx, &s, 640, 480);
	clear_mask(&s, 0x4); /* colour */
	clear_mask(&s, 0x4); /* colour again: superseded */
	clear_mask(&s, 0x5); /* colour and depth: only depth is new */
	emit(&s, DRAW, 0, 12, 0, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	clear_mask(&s, 0x4); /* after a draw: counts again */
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(f.x[PF_CLEAR_C] == 2 * 640.0 * 480.0);
	assert_true(f.x[PF_CLEAR_D] == 640.0 * 480.0);
	assert_true(f.x[PF_CLEAR_CD] == 0);
	/* The next group starts afresh: the flush wrote the clears out. */
	s.n = 0;
	clear_mask(&s, 0x4);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(f.x[PF_CLEAR_C] == 640.0 * 480.0);
	predict_ctx_destroy(ctx);
}

struct draw_case {
	const char *description;
	uint32_t count, instances, indexed;
	double vertices;
};

static const struct draw_case draw_cases[] = {
    {"plain draw", 300, 0, 0, 300},
    {"instance count 1 is one instance", 300, 1, 0, 300},
    {"three instances", 300, 3, 0, 900},
    {"indexed draw counts indices", 36, 2, 1, 72},
    {"huge counts are clamped", 0xffffffffu, 0xffffffffu, 0, PREDICT_FEATURE_MAX},
};

static void draw_vertices_are_count_times_instances(void **state)
{
	for (size_t i = 0; i < N(draw_cases); i++) {
		const struct draw_case *t = &draw_cases[i];
		struct predict_ctx *ctx = predict_ctx_create();
		struct predict_features f;
		struct sb s = {.n = 0};

		print_message("%s\n", t->description);
		frame(ctx, &s, 100, 100);
		emit(&s, DRAW, 0, 12, 0, t->count, 4, t->indexed, t->instances, 0, 0, 0, 0, 0, 0,
		     0);
		assert_int_equal(submit(ctx, &s, &f), 0);
		assert_true(f.x[PF_DRAWS] == 1);
		assert_true(f.x[PF_VERTICES] == t->vertices);
		all_finite(&f);
		predict_ctx_destroy(ctx);
	}
}

/* Creates and binds shader @handle of @type from @text (padded to dwords). */
static void shader(struct sb *s, uint32_t handle, uint32_t type, const char *text)
{
	size_t len = strlen(text) + 1, ndw = (len + 3) / 4;

	assert_true(s->n + 6 + ndw + 3 <= N(s->d));
	s->d[s->n++] = CMD0(CREATE, O_SHADER, 5 + ndw);
	s->d[s->n++] = handle;
	s->d[s->n++] = type;
	s->d[s->n++] = (uint32_t)len;
	s->d[s->n++] = 100;
	s->d[s->n++] = 0;
	memset(&s->d[s->n], 0, ndw * 4);
	memcpy(&s->d[s->n], text, len);
	s->n += ndw;
	emit(s, BIND_SHADER, 0, 2, handle, type);
}

static const char vs_text[] = "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\nDCL CONST[0][0..3]\n"
			      "  0: MUL TEMP[0], CONST[0][0], IN[0].xxxx\n"
			      "  1: MAD TEMP[0], CONST[0][1], IN[0].yyyy, TEMP[0]\n"
			      "  2: MAD TEMP[0], CONST[0][2], IN[0].zzzz, TEMP[0]\n"
			      "  3: ADD OUT[0], TEMP[0], CONST[0][3]\n"
			      "  4: END\n";
static const char fs_text[] = "FRAG\nDCL IN[0], GENERIC[9], PERSPECTIVE\nDCL OUT[0], COLOR\n"
			      "  0: TEX TEMP[0], IN[0].xyyy, SAMP[0], 2D\n"
			      "  1: TEX TEMP[1], IN[0].yxxx, SAMP[0], 2D\n"
			      "  2: MUL OUT[0], TEMP[0], TEMP[1]\n"
			      "  3: END\n";

static void corners(float v[24], const float lo[3], const float hi[3])
{
	for (int i = 0; i < 8; i++) {
		v[3 * i] = i & 1 ? hi[0] : lo[0];
		v[3 * i + 1] = i & 2 ? hi[1] : lo[1];
		v[3 * i + 2] = i & 4 ? hi[2] : lo[2];
	}
}

/* Position buffer 1 with the 8 corners of [lo, hi], bound as attribute 0. */
static void box_buffer(struct predict_ctx *ctx, struct sb *s, const float lo[3], const float hi[3])
{
	float v[24];

	corners(v, lo, hi);
	add_buffer(ctx, 1, sizeof(v));
	emit(s, CREATE, O_VE, 5, 3, 0, 0, 0, FMT_RGB32F);
	emit(s, BIND, O_VE, 1, 3);
	emit(s, VBUFS, 0, 3, 12, 0, 1);
	/* Vertex data arrives from the transport (a transfer). */
	predict_ctx_resource_write(ctx, 1, 0, v, sizeof(v));
}

static void mvp(struct sb *s, const float m[16])
{
	emit(s, CBUF, 0, 18, 0, 0, fb(m[0]), fb(m[1]), fb(m[2]), fb(m[3]), fb(m[4]), fb(m[5]),
	     fb(m[6]), fb(m[7]), fb(m[8]), fb(m[9]), fb(m[10]), fb(m[11]), fb(m[12]), fb(m[13]),
	     fb(m[14]), fb(m[15]));
}

static void draw36(struct sb *s)
{
	emit(s, DRAW, 0, 12, 0, 36, 4, 0, 1, 0, 0, 0, 0, 0, 0, 0);
}

static void shader_work_scales_with_vertices_and_fragments(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f;
	struct sb s = {.n = 0};
	const float id[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
	const float lo[3] = {-0.5f, -0.5f, -0.5f}, hi[3] = {0.5f, 0.5f, 0.5f};

	frame(ctx, &s, 100, 100);
	shader(&s, 20, 0, vs_text);
	shader(&s, 21, 1, fs_text);
	box_buffer(ctx, &s, lo, hi);
	mvp(&s, id);
	draw36(&s);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(f.x[PF_VERTICES] == 36);
	assert_true(f.x[PF_VS_WORK] == 36 * 4); /* MUL MAD MAD ADD */
	assert_true(fabs(f.x[PF_FRAGMENTS] - 1250) < 1e-6);
	assert_true(fabs(f.x[PF_FS_ALU_WORK] - 1250 * 1) < 1e-6);
	assert_true(fabs(f.x[PF_FS_TEX_WORK] - 1250 * 2) < 1e-6);
	assert_true(f.x[PF_SHADER_TOKENS] > 0);
	assert_int_equal(f.flags & PFF_NO_MVP, 0);
	assert_int_equal(f.flags & PFF_UNBOUNDED_LOOP, 0);
	predict_ctx_destroy(ctx);
}

struct bbox_case {
	const char *description;
	float m[16]; /* column-major */
	float lo[3], hi[3];
	double fragments; /* projected area in the 100 x 100 viewport x 0.5 */
};

static const struct bbox_case bbox_cases[] = {
    {"identity: [-0.5, 0.5] covers [25, 75] squared",
     {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1},
     {-0.5f, -0.5f, -0.5f},
     {0.5f, 0.5f, 0.5f},
     2500 * 0.5},
    {"translation by 1 in x: [75, 125] clipped to [75, 100]",
     {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1},
     {-0.5f, -0.5f, -0.5f},
     {0.5f, 0.5f, 0.5f},
     25 * 50 * 0.5},
    {"perspective (w = -z), box in front: the near face z = -2 spans [25, 75]",
     {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, -1, 0, 0, 0, 0},
     {-1, -1, -4},
     {1, 1, -2},
     2500 * 0.5},
    {"perspective, box partly behind the eye: it surrounds the eye, whole viewport",
     {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, -1, 0, 0, 0, 0},
     {-1, -1, -3},
     {1, 1, 1},
     10000 * 0.5},
    /* Front corners (z = -2) project to x in [0.25, 0.75], y in [-0.25, 0.25] (NDC); the
     * z edges cross the eye plane at x / w -> +inf along y = +-x, so the clipped area is
     * the integral of 2x over [0.25, 1] = 0.9375 NDC units = 2343.75 pixels. */
    {"perspective, box partly behind the eye and partly off screen",
     {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, -1, 0, 0, 0, 0},
     {0.5f, -0.5f, -2},
     {1.5f, 0.5f, 1},
     2343.75 * 0.5},
    {"perspective, box entirely behind the eye",
     {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, -1, 0, 0, 0, 0},
     {-1, -1, 1},
     {1, 1, 3},
     0},
    {"box outside the viewport",
     {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 3, 0, 0, 1},
     {-0.5f, -0.5f, -0.5f},
     {0.5f, 0.5f, 0.5f},
     0},
};

static void projected_bounding_box_gives_hand_computed_fragments(void **state)
{
	for (size_t i = 0; i < N(bbox_cases); i++) {
		const struct bbox_case *t = &bbox_cases[i];
		struct predict_ctx *ctx = predict_ctx_create();
		struct predict_features f;
		struct sb s = {.n = 0};

		print_message("%s\n", t->description);
		frame(ctx, &s, 100, 100);
		box_buffer(ctx, &s, t->lo, t->hi);
		mvp(&s, t->m);
		draw36(&s);
		assert_int_equal(submit(ctx, &s, &f), 0);
		print_message("  fragments %f, expected %f\n", f.x[PF_FRAGMENTS], t->fragments);
		assert_true(fabs(f.x[PF_FRAGMENTS] - t->fragments) < 1e-3);
		assert_int_equal(f.flags & PFF_NO_MVP, 0);
		predict_ctx_destroy(ctx);
	}
}

static void inline_written_vertices_give_the_box_too(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f;
	struct sb s = {.n = 0};
	const float id[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

	frame(ctx, &s, 100, 100);
	add_buffer(ctx, 2, 24);
	emit(&s, CREATE, O_VE, 5, 3, 0, 0, 0, FMT_RGB32F);
	emit(&s, BIND, O_VE, 1, 3);
	emit(&s, VBUFS, 0, 3, 12, 0, 2);
	/* Two vertices (-1, -1, 0) and (0, 0, 0): [0, 50] squared. */
	emit(&s, INLINE_WRITE, 0, 17, 2, 0, 0, 0, 0, 0, 0, 0, 24, 1, 1, fb(-1), fb(-1), fb(0),
	     fb(0), fb(0), fb(0));
	mvp(&s, id);
	draw36(&s);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(f.x[PF_TRANSFER_BYTES] == 24);
	assert_true(fabs(f.x[PF_FRAGMENTS] - 2500 * 0.5) < 1e-3);
	predict_ctx_destroy(ctx);
}

/*
 * Rasterizer state that culls both faces (Schnitzer et al.'s culled-vertex
 * calibration) or discards.
 */
static void culled_and_discarded_draws_have_no_fragments(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f;
	struct sb s = {.n = 0};

	frame(ctx, &s, 200, 100);
	emit(&s, CREATE, O_RS, 9, 7, 3u << 8, 0, 0, 0, 0, 0, 0, 0); /* cull front and back */
	emit(&s, CREATE, O_RS, 9, 8, 1u << 3, 0, 0, 0, 0, 0, 0, 0); /* rasterizer discard */
	emit(&s, BIND, O_RS, 1, 7);
	draw36(&s); /* triangles: culled */
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(f.x[PF_VERTICES] == 36);
	assert_true(f.x[PF_FRAGMENTS] == 0);
	assert_int_equal(f.frag.draws, 0);
	s.n = 0;
	emit(&s, DRAW, 0, 12, 0, 36, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0); /* lines: not culled */
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(f.x[PF_FRAGMENTS] == 200 * 100 / 2);
	s.n = 0;
	emit(&s, BIND, O_RS, 1, 8);
	emit(&s, DRAW, 0, 12, 0, 36, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0); /* discarded */
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(f.x[PF_FRAGMENTS] == 0);
	assert_true(f.x[PF_VERTICES] == 36);
	predict_ctx_destroy(ctx);
}

/* The transport's resource memory, for uploads the stream names but does not carry. */
static uint8_t test_memory[2][256];

static const void *memory_of(void *data, uint32_t handle, size_t *size)
{
	if (handle < 1 || handle > 2)
		return NULL;
	*size = sizeof(test_memory[0]);
	return test_memory[handle - 1];
}

/* Vertex data uploaded by TRANSFER3D (vtest protocol 2) or COPY_TRANSFER3D (staging). */
static void uploads_from_resource_memory_give_the_bbox(void **state)
{
	const float id[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
	const float lo[3] = {-0.5f, -0.5f, -0.5f}, hi[3] = {0.5f, 0.5f, 0.5f};
	float v[24];

	corners(v, lo, hi);
	memcpy(test_memory[0] + 40, v, sizeof(v));
	memcpy(test_memory[1] + 8, v, sizeof(v));
	/* copy (45) from resource 2 at 8; transfer (43) from its own memory at 40; beyond the end.
	 */
	for (int how = 0; how < 3; how++) {
		struct predict_ctx *ctx = predict_ctx_create();
		struct predict_features f;
		struct sb s = {.n = 0};
		struct predict_resource_desc staging = {.width = 256, .height = 1};

		predict_ctx_set_resource_data(ctx, memory_of, NULL);
		frame(ctx, &s, 100, 100);
		add_buffer(ctx, 1, 256);
		assert_int_equal(predict_ctx_resource_create(ctx, 2, &staging), 0);
		emit(&s, CREATE, O_VE, 5, 3, 0, 0, 0, FMT_RGB32F);
		emit(&s, BIND, O_VE, 1, 3);
		emit(&s, VBUFS, 0, 3, 12, 0, 1);
		if (how == 0)
			emit(&s, 45, 0, 14, 1, 0, 0, 0, 0, 0, 0, 0, 96, 1, 1, 2, 8, 0);
		else
			emit(&s, 43, 0, 13, 1, 0, 0, 0, 0, 0, 0, 0, 96, 1, 1, how == 1 ? 40 : 200,
			     1);
		mvp(&s, id);
		draw36(&s);
		assert_int_equal(submit(ctx, &s, &f), 0);
		assert_true(f.x[PF_TRANSFER_BYTES] == 96);
		if (how < 2) {
			assert_true(fabs(f.x[PF_FRAGMENTS] - 1250) < 1e-6);
			assert_int_equal(f.flags & PFF_NO_MVP, 0);
		} else {
			assert_true(f.flags & PFF_NO_MVP); /* 200 + 96 > 256: not read */
		}
		predict_ctx_destroy(ctx);
	}
}

static void without_mvp_half_the_viewport_is_assumed(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f;
	struct sb s = {.n = 0};

	frame(ctx, &s, 200, 100);
	draw36(&s);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(f.x[PF_FRAGMENTS] == 200 * 100 / 2);
	assert_true(f.flags & PFF_NO_MVP);
	predict_ctx_destroy(ctx);
}

static const char vs_quad_text[] = "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n"
				   "IMM[0] FLT32 {0.0000, 1.0000, 0.0000, 0.0000}\n"
				   "  0: MOV OUT[0].xy, IN[0].xyyy\n"
				   "  1: MOV OUT[0].zw, IMM[0].xyxy\n"
				   "  2: END\n";

/*
 * Post-processing and compositing passes draw quads given in clip space,
 * with no matrix: their box is their area. The constants an earlier
 * shader left bound are not theirs.
 */
static void clip_space_quads_cover_their_rectangle(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f;
	struct sb s = {.n = 0};
	const float lo[3] = {-1, -1, 0}, hi[3] = {0, 0.5f, 0};
	const float scale2[16] = {2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1};

	frame(ctx, &s, 200, 100);
	mvp(&s, scale2);
	shader(&s, 20, 0, vs_quad_text);
	box_buffer(ctx, &s, lo, hi);
	emit(&s, DRAW, 0, 12, 0, 4, 5, 0, 1, 0, 0, 0, 0, 0, 0, 0); /* a triangle strip */
	assert_int_equal(submit(ctx, &s, &f), 0);
	/* x in [0, 100], y in [0, 75]: a quad covers all of its box. */
	assert_true(fabs(f.x[PF_FRAGMENTS] - 7500) < 1e-3);
	assert_int_equal(f.flags & PFF_NO_MVP, 0);
	assert_int_equal(f.frag.bbox_draws, 1);
	/* More than a quad in the box: the coverage of a box. */
	draw36(&s);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(fabs(f.x[PF_FRAGMENTS] - 7500 * 0.5) < 1e-3);
	predict_ctx_destroy(ctx);
}

/*
 * A pass uploads its quad while the previous pass's vertex elements are
 * still bound; the quad's draw reads it as vec2 with its own stride. A
 * small buffer is read again with the layout of the draw that uses it.
 */
static void a_small_buffer_is_read_with_the_layout_of_its_draw(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f;
	struct sb s = {.n = 0};
	const float lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
	/* A strip over x in [-1, 0], y in [-1, 0.5]: 100 x 75 pixels of 200 x 100. */
	const float quad[8] = {-1, -1, 0, -1, -1, 0.5f, 0, 0.5f};

	frame(ctx, &s, 200, 100);
	shader(&s, 20, 0, vs_quad_text);
	box_buffer(ctx, &s, lo, hi); /* buffer 1, vec3 elements 3 bound */
	add_buffer(ctx, 2, sizeof(quad));
	predict_ctx_resource_write(ctx, 2, 0, quad, sizeof(quad)); /* read as vec3 */
	emit(&s, CREATE, O_VE, 5, 4, 0, 0, 0, FMT_RG32F);
	emit(&s, BIND, O_VE, 1, 4);
	emit(&s, VBUFS, 0, 3, 8, 0, 2);
	emit(&s, DRAW, 0, 12, 0, 4, 5, 0, 1, 0, 0, 0, 0, 0, 0, 0);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(fabs(f.x[PF_FRAGMENTS] - 7500) < 1e-3);
	predict_ctx_destroy(ctx);
}

/*
 * Render to texture, then sample it: each pass's draws and clears take
 * the size of the surface they target (a level of a texture), not the
 * window's.
 */
static void passes_take_the_size_of_their_target(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f;
	struct sb s = {.n = 0};
	const float lo[3] = {-1, -1, 0}, hi[3] = {1, 1, 0};

	frame(ctx, &s, 200, 100);				  /* the window: surface 10 */
	add_texture(ctx, 101, 512, 256);			  /* the offscreen texture */
	emit(&s, CREATE, O_SURFACE, 5, 11, 101, FMT_RGBA8, 1, 0); /* its level 1: 256 x 128 */
	shader(&s, 20, 0, vs_quad_text);
	box_buffer(ctx, &s, lo, hi);
	emit(&s, FRAMEBUFFER, 0, 3, 1, 0, 11);
	emit(&s, VIEWPORT, 0, 7, 0, fb(128), fb(64), fb(0.5f), fb(128), fb(64), fb(0.5f));
	clear_mask(&s, 4);
	emit(&s, DRAW, 0, 12, 0, 4, 5, 0, 1, 0, 0, 0, 0, 0, 0, 0);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(f.x[PF_CLEAR_C] == 256 * 128);
	assert_true(fabs(f.x[PF_FRAGMENTS] - 256 * 128) < 1e-3);
	/* Back to the window. */
	emit(&s, FRAMEBUFFER, 0, 3, 1, 0, 10);
	emit(&s, VIEWPORT, 0, 7, 0, fb(100), fb(50), fb(0.5f), fb(100), fb(50), fb(0.5f));
	clear_mask(&s, 4);
	emit(&s, DRAW, 0, 12, 0, 4, 5, 0, 1, 0, 0, 0, 0, 0, 0, 0);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(f.x[PF_CLEAR_C] == 200 * 100);
	assert_true(fabs(f.x[PF_FRAGMENTS] - 200 * 100) < 1e-3);
	predict_ctx_destroy(ctx);
}

static void nan_and_inf_from_the_guest_stay_finite(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f;
	struct sb s = {.n = 0};
	const float lo[3] = {-0.5f, -0.5f, -0.5f}, hi[3] = {0.5f, 0.5f, 0.5f};
	float bad[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
	float verts[6] = {NAN, 0, 0, INFINITY, -INFINITY, 0}, v[24];
	const float huge[16] = {3e38f, 3e38f, 3e38f, 3e38f, 3e38f, 3e38f, 3e38f, 3e38f,
				3e38f, 3e38f, 3e38f, 3e38f, 3e38f, 3e38f, 3e38f, 3e38f};

	frame(ctx, &s, 100, 100);
	box_buffer(ctx, &s, lo, hi);
	bad[5] = NAN;
	mvp(&s, bad);
	draw36(&s);
	assert_int_equal(submit(ctx, &s, &f), 0);
	all_finite(&f);
	assert_true(f.flags & PFF_NO_MVP);

	/* Non-finite vertices are skipped: a write of only those leaves no box. */
	predict_ctx_resource_write(ctx, 1, 0, verts, sizeof(verts));
	bad[5] = INFINITY;
	mvp(&s, bad);
	draw36(&s);
	assert_int_equal(submit(ctx, &s, &f), 0);
	all_finite(&f);
	assert_true(f.flags & PFF_NO_MVP);

	/* Huge but finite: the box and matrix are used and the result stays finite. */
	corners(v, (const float[3]){-3e38f, -3e38f, -3e38f}, (const float[3]){3e38f, 3e38f, 3e38f});
	predict_ctx_resource_write(ctx, 1, 0, v, sizeof(v));
	mvp(&s, huge);
	draw36(&s);
	assert_int_equal(submit(ctx, &s, &f), 0);
	all_finite(&f);

	/* A NaN viewport falls back to the framebuffer. */
	emit(&s, VIEWPORT, 0, 7, 0, fb(NAN), fb(INFINITY), 0, fb(NAN), 0, 0);
	draw36(&s);
	assert_int_equal(submit(ctx, &s, &f), 0);
	all_finite(&f);
	predict_ctx_destroy(ctx);
}

static void sub_context_switch_changes_the_framebuffer(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f;
	struct sb s = {.n = 0};

	frame(ctx, &s, 640, 480);
	emit(&s, CREATE_SUB, 0, 1, 1);
	emit(&s, SET_SUB, 0, 1, 1);
	add_texture(ctx, 101, 100, 50);
	/* Surface handle 10 again: objects are per sub-context. */
	emit(&s, CREATE, O_SURFACE, 5, 10, 101, FMT_RGBA8, 0, 0);
	emit(&s, FRAMEBUFFER, 0, 3, 1, 0, 10);
	clear_mask(&s, 0x4);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(f.x[PF_CLEAR_C] == 100 * 50);

	emit(&s, SET_SUB, 0, 1, 0);
	clear_mask(&s, 0x4);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(f.x[PF_CLEAR_C] == 640 * 480);

	/* An unknown sub-context leaves the current one. */
	emit(&s, SET_SUB, 0, 1, 77);
	clear_mask(&s, 0x4);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(f.x[PF_CLEAR_C] == 640 * 480);
	predict_ctx_destroy(ctx);
}

static void same_stream_on_other_framebuffer_hashes_differently(void **state)
{
	struct predict_ctx *a = predict_ctx_create(), *b = predict_ctx_create();
	struct predict_features fa, fb2, fa2;
	struct sb s = {.n = 0};

	add_texture(a, 100, 640, 480);
	add_texture(b, 100, 1920, 1080);
	emit(&s, CREATE, O_SURFACE, 5, 10, 100, FMT_RGBA8, 0, 0);
	emit(&s, FRAMEBUFFER, 0, 3, 1, 0, 10);
	clear_mask(&s, 0x4);
	size_t n = s.n;
	assert_int_equal(submit(a, &s, &fa), 0);
	s.n = n;
	assert_int_equal(submit(b, &s, &fb2), 0);
	assert_true(fa.content_hash != fb2.content_hash);
	assert_true(fa.x[PF_CLEAR_C] < fb2.x[PF_CLEAR_C]);
	s.n = n;
	assert_int_equal(submit(a, &s, &fa2), 0);
	assert_true(fa.content_hash == fa2.content_hash);
	predict_ctx_destroy(a);
	predict_ctx_destroy(b);
}

static void malformed_command_keeps_features_before_it(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f;
	struct predict_cmd_counts counts;
	struct predict_decode_error err;
	struct sb s = {.n = 0};
	uint32_t *buf;

	frame(ctx, &s, 100, 100);
	clear_mask(&s, 0x4);
	emit(&s, DRAW, 0, 3, 0, 0, 0); /* too short */
	clear_mask(&s, 0x4);
	buf = malloc(s.n * sizeof(uint32_t));
	assert_non_null(buf);
	memcpy(buf, s.d, s.n * sizeof(uint32_t));
	assert_int_equal(predict_ctx_submit(ctx, buf, s.n, &f, &counts, &err), -EINVAL);
	assert_int_equal(err.index, 4);
	assert_int_equal(err.offset, (6 + 4 + 8 + 9) * 4);
	assert_non_null(err.what);
	assert_true(f.x[PF_CLEAR_C] == 100 * 100);
	assert_true(f.x[PF_CMDS] == 4);
	assert_true(f.x[PF_DRAWS] == 0);
	assert_int_equal(counts.total, 4);
	assert_int_equal(counts.n[PREDICT_CMD_CLEAR], 1);
	free(buf);
	predict_ctx_destroy(ctx);
}

static void history_mode_uses_the_recent_fragments_per_vertex(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f, seen = {.frag = {.vertices = 100, .draws = 1}};
	struct sb s = {.n = 0};

	frame(ctx, &s, 100, 100);
	predict_ctx_set_fragment_mode(ctx, PREDICT_FRAGMENTS_HISTORY);
	predict_ctx_observe_fragments(ctx, 1000, &seen);
	predict_ctx_observe_fragments(ctx, 3000, &seen);
	predict_ctx_observe_fragments(ctx, NAN, &seen); /* ignored */
	predict_ctx_observe_fragments(ctx, -5, &seen);	/* ignored */
	seen.frag.draws = 0;
	predict_ctx_observe_fragments(ctx, 5, &seen); /* no draw: ignored */
	draw36(&s);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(fabs(f.x[PF_FRAGMENTS] - 20.0 * 36) < 1e-9);
	assert_true(fabs(f.frag.history - 20.0 * 36) < 1e-9);
	assert_int_equal(f.frag.history_draws, 1);
	assert_int_equal(f.frag.bbox_draws, 0);
	predict_ctx_destroy(ctx);
}

/* Each draw uses the estimator that was closer to the measured counts lately. */
static void the_more_accurate_estimator_is_chosen(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f;
	struct predict_fragment_stats st;
	struct sb s = {.n = 0};
	const float id[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
	const float lo[3] = {-0.5f, -0.5f, -0.5f}, hi[3] = {0.5f, 0.5f, 0.5f};

	frame(ctx, &s, 100, 100);
	box_buffer(ctx, &s, lo, hi);
	mvp(&s, id);
	draw36(&s);
	assert_int_equal(submit(ctx, &s, &f), 0);
	/* Nothing measured yet: the box (1250 fragments). */
	assert_true(fabs(f.x[PF_FRAGMENTS] - 1250) < 1e-6);
	assert_int_equal(f.frag.bbox_draws, 1);
	assert_int_equal(f.frag.history_draws, 0);
	predict_ctx_fragment_stats(ctx, &st);
	assert_int_equal(st.preferred, PREDICT_FRAGMENTS_BBOX);
	assert_true(st.bbox_error < 0 && st.history_error < 0);

	/* The draw really covers 5000 fragments (a guest fooling the box). */
	predict_ctx_observe_fragments(ctx, 5000, &f);
	s.n = 0;
	draw36(&s);
	assert_int_equal(submit(ctx, &s, &f), 0);
	/*
	 * History has not been scored yet: still the box, now scaled by the
	 * coverage learned from one measurement (a fifth of the way in log
	 * space); both recorded.
	 */
	const double box1 = 1250 * exp(-0.2 * log((1250.0 + 64) / (5000 + 64)));
	assert_true(fabs(f.x[PF_FRAGMENTS] - box1) < 1e-6);
	assert_true(fabs(f.frag.history - 5000) < 1e-6);
	predict_ctx_observe_fragments(ctx, 5000, &f);
	predict_ctx_fragment_stats(ctx, &st);
	assert_int_equal(st.observed, 2);
	assert_true(st.bbox_error > 0.5);
	assert_true(st.history_error < 1e-9);
	assert_int_equal(st.preferred, PREDICT_FRAGMENTS_HISTORY);
	s.n = 0;
	draw36(&s);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(fabs(f.x[PF_FRAGMENTS] - 5000) < 1e-6);

	/* A forced estimator wins over the scores. */
	predict_ctx_set_fragment_mode(ctx, PREDICT_FRAGMENTS_BBOX);
	s.n = 0;
	draw36(&s);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(fabs(f.x[PF_FRAGMENTS] - f.frag.bbox) < 1e-6);
	assert_true(f.frag.bbox > box1 && f.frag.bbox < 5000);
	predict_ctx_destroy(ctx);
}

/*
 * A box that its draws cover by a constant share other than Schnitzer et al.'s
 * half is scaled by the share measured; then the box follows a changing
 * count better than the recent history does, and is chosen.
 */
static void the_box_learns_its_coverage(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f;
	struct predict_fragment_stats st;
	struct sb s = {.n = 0};
	const float lo[3] = {-0.5f, -0.5f, -0.5f}, hi[3] = {0.5f, 0.5f, 0.5f};

	frame(ctx, &s, 100, 100);
	box_buffer(ctx, &s, lo, hi);
	for (int i = 0; i < 60; i++) {
		/* Zooming in and out: the box covers 2500 * z^2 pixels, the draw a fifth of that.
		 */
		float z = 0.6f + 0.4f * (float)(i % 5) / 4.0f;
		const float m[16] = {z, 0, 0, 0, 0, z, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

		mvp(&s, m);
		draw36(&s);
		assert_int_equal(submit(ctx, &s, &f), 0);
		s.n = 0;
		predict_ctx_observe_fragments(ctx, 2500.0 * z * z / 5, &f);
		if (i >= 50)
			assert_true(fabs(f.frag.bbox - 500.0 * z * z) < 0.05 * 500.0 * z * z);
	}
	predict_ctx_fragment_stats(ctx, &st);
	assert_int_equal(st.preferred, PREDICT_FRAGMENTS_BBOX);
	assert_true(st.bbox_error < 0.05 && st.history_error > 0.1);
	predict_ctx_destroy(ctx);
}

static void other_commands_add_their_pixels(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_features f;
	struct sb s = {.n = 0};

	emit(&s, BLIT, 0, 21, 0, 0, 0, 1, 0, 67, 0, 0, 0, 64, 32, 1, 2, 0, 67, 0, 0, 0, 128, 64, 1);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(f.x[PF_BLIT_PIXELS] == 64 * 32);
	predict_ctx_destroy(ctx);
}

static void resources_are_unique_and_destroy_accepts_null(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct predict_resource_desc d = {.width = 4};

	assert_int_equal(predict_ctx_resource_create(ctx, 5, &d), 0);
	assert_int_equal(predict_ctx_resource_create(ctx, 5, &d), -EEXIST);
	predict_ctx_resource_destroy(ctx, 5);
	predict_ctx_resource_destroy(ctx, 5);
	assert_int_equal(predict_ctx_resource_create(ctx, 5, &d), 0);
	predict_ctx_resource_write(ctx, 99, 0, &d, sizeof(d)); /* unknown: ignored */
	predict_ctx_resource_write(ctx, 5, UINT64_MAX, &d, sizeof(d));
	predict_ctx_destroy(ctx);
	predict_ctx_destroy(NULL);
}

/* ---- boundaries and scissor tiles ---- */

enum { SCISSOR = 15, BEGIN_QUERY = 19, END_QUERY = 20, STREAMOUT = 25, SHADER_BUFFERS = 34 };

#define RS_SCISSOR_ON (1u << 14)

/* What the boundary hook was told, last call. */
struct seen_boundary {
	uint32_t calls;
	struct predict_boundary last;
	char why[128];
};

static void note_boundary(void *data, const struct predict_boundary *b)
{
	struct seen_boundary *seen = data;

	seen->calls++;
	seen->last = *b;
	seen->last.so_far = NULL;
	seen->why[0] = '\0';
	if (b->draw && !b->tileable)
		snprintf(seen->why, sizeof(seen->why), "%s", predict_untiled_text(b->untiled));
}

/* A 200 x 100 target, its viewport, a vertex shader and rasterizer state 7 (S0 @s0) bound. */
static void tile_scene(struct predict_ctx *ctx, struct sb *s, uint32_t s0, const char *vs)
{
	frame(ctx, s, 200, 100);
	shader(s, 20, 0, vs);
	emit(s, CREATE, O_RS, 9, 7, s0, 0x3f800000, 0, 0, 0x3f800000, 0, 0, 0);
	emit(s, BIND, O_RS, 1, 7);
}

/* Submits @s, whose last command is a draw, and returns what the hook saw of it. */
static struct seen_boundary tile_verdict(struct predict_ctx *ctx, struct sb *s)
{
	struct seen_boundary seen = {0};
	struct predict_features f;
	size_t draw_at = s->n;

	emit(s, DRAW, 0, 12, 0, 6, 4, 0, 1, 0, 0, 0, 0, 0, 0, 0);
	predict_ctx_set_boundary_hook(ctx, note_boundary, &seen);
	assert_int_equal(submit(ctx, s, &f), 0);
	predict_ctx_set_boundary_hook(ctx, NULL, NULL);
	assert_true(seen.calls >= 1);
	assert_true(seen.last.draw);
	assert_int_equal(seen.last.start_dw, draw_at);
	assert_int_equal(seen.last.end_dw, draw_at + 13);
	return seen;
}

static void a_plain_draw_may_be_cut_into_tiles_of_its_viewport(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct sb s = {.n = 0};
	struct seen_boundary seen;

	(void)state;
	tile_scene(ctx, &s, 0, vs_quad_text);
	emit(&s, SCISSOR, 0, 3, 0, 1u | 2u << 16, 50u | 60u << 16);
	seen = tile_verdict(ctx, &s);
	assert_true(seen.last.tileable);
	assert_int_equal(seen.last.untiled, PREDICT_TILEABLE);
	assert_int_equal(seen.last.tiling.x0, 0);
	assert_int_equal(seen.last.tiling.y0, 0);
	assert_int_equal(seen.last.tiling.x1, 200);
	assert_int_equal(seen.last.tiling.y1, 100);
	assert_int_equal(seen.last.tiling.rs[0], 7);
	/* The scissor to put back, though the test is off. */
	assert_int_equal(seen.last.tiling.scissor[0], 1u | 2u << 16);
	assert_int_equal(seen.last.tiling.scissor[1], 50u | 60u << 16);
	predict_ctx_destroy(ctx);
}

static void a_draw_with_the_scissor_on_is_tiled_within_its_scissor(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct sb s = {.n = 0};
	struct seen_boundary seen;

	(void)state;
	tile_scene(ctx, &s, RS_SCISSOR_ON, vs_quad_text);
	emit(&s, SCISSOR, 0, 3, 0, 10u | 20u << 16, 150u | 300u << 16);
	seen = tile_verdict(ctx, &s);
	assert_true(seen.last.tileable);
	assert_int_equal(seen.last.tiling.x0, 10);
	assert_int_equal(seen.last.tiling.y0, 20);
	assert_int_equal(seen.last.tiling.x1, 150);
	assert_int_equal(seen.last.tiling.y1, 100); /* the viewport ends first */
	assert_true(seen.last.tiling.rs[1] & RS_SCISSOR_ON);
	/* A scissor that leaves nothing: nothing to cut. */
	emit(&s, SCISSOR, 0, 3, 0, 10u | 20u << 16, 10u | 300u << 16);
	seen = tile_verdict(ctx, &s);
	assert_false(seen.last.tileable);
	assert_string_equal(seen.why, "it rasterizes nothing");
	predict_ctx_destroy(ctx);
}

static const char vs_viewport_text[] = "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n"
				       "DCL OUT[1], VIEWPORT_INDEX\n"
				       "  0: MOV OUT[0], IN[0]\n"
				       "  1: MOV OUT[1].x, IN[0].wwww\n"
				       "  2: END\n";

/*
 * What a draw writes outside the framebuffer would be written once per
 * tile, a counting query would count its primitives once per tile, and a
 * shader that picks another viewport draws outside the tile's scissor: such
 * draws are not cut, and the hook says why; each blocker lifted, the draw
 * may be cut again.
 */
static void draws_whose_result_depends_on_the_split_are_not_tiled(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct sb s = {.n = 0};
	struct seen_boundary seen;

	(void)state;
	tile_scene(ctx, &s, 0, vs_quad_text);
	emit(&s, SHADER_BUFFERS, 0, 5, 1, 2, 0, 64, 33); /* fragment stage, slot 2 */
	seen = tile_verdict(ctx, &s);
	assert_false(seen.last.tileable);
	assert_non_null(strstr(seen.why, "shader buffers"));
	emit(&s, SHADER_BUFFERS, 0, 5, 1, 2, 0, 0, 0); /* unbound */
	assert_true(tile_verdict(ctx, &s).last.tileable);
	emit(&s, SHADER_BUFFERS, 0, 5, 5, 0, 0, 64, 33); /* compute's: not a draw's */
	assert_true(tile_verdict(ctx, &s).last.tileable);

	emit(&s, STREAMOUT, 0, 2, 0, 40);
	assert_non_null(strstr(tile_verdict(ctx, &s).why, "stream output"));
	emit(&s, STREAMOUT, 0, 1, 0);
	assert_true(tile_verdict(ctx, &s).last.tileable);

	emit(&s, BEGIN_QUERY, 0, 1, 50);
	assert_non_null(strstr(tile_verdict(ctx, &s).why, "query"));
	emit(&s, END_QUERY, 0, 1, 50);
	assert_true(tile_verdict(ctx, &s).last.tileable);

	emit(&s, BIND_SHADER, 0, 2, 30, 2); /* a geometry shader */
	assert_non_null(strstr(tile_verdict(ctx, &s).why, "geometry"));
	emit(&s, BIND_SHADER, 0, 2, 0, 2);
	assert_true(tile_verdict(ctx, &s).last.tileable);

	shader(&s, 21, 0, vs_viewport_text);
	assert_non_null(strstr(tile_verdict(ctx, &s).why, "viewport"));
	emit(&s, BIND_SHADER, 0, 2, 20, 0);
	assert_true(tile_verdict(ctx, &s).last.tileable);

	emit(&s, BIND, O_RS, 1, 0);
	assert_non_null(strstr(tile_verdict(ctx, &s).why, "rasterizer"));
	predict_ctx_destroy(ctx);
}

/* Bindings the masks cannot hold (a slot past 31, a malformed command) block for good. */
static void bindings_out_of_range_block_tiles_for_good(void **state)
{
	struct predict_ctx *ctx = predict_ctx_create();
	struct sb s = {.n = 0};

	(void)state;
	tile_scene(ctx, &s, 0, vs_quad_text);
	emit(&s, SHADER_BUFFERS, 0, 5, 1, 40, 0, 64, 33);
	assert_false(tile_verdict(ctx, &s).last.tileable);
	emit(&s, SHADER_BUFFERS, 0, 5, 1, 40, 0, 0, 0);
	assert_false(tile_verdict(ctx, &s).last.tileable);
	predict_ctx_destroy(ctx);
	ctx = predict_ctx_create();
	tile_scene(ctx, &s, 0, vs_quad_text);
	emit(&s, SHADER_BUFFERS, 0, 4, 1, 0, 0, 64); /* not 3 dwords a slot */
	assert_false(tile_verdict(ctx, &s).last.tileable);
	predict_ctx_destroy(ctx);
}

/* A CLEAR_TEXTURE of a sane box may be cut into bands of its rows; others may not. */
static void a_clear_texture_may_be_cut_into_bands_of_its_box(void **state)
{
	enum { CLEAR_TEXTURE = 47 };
	struct predict_ctx *ctx = predict_ctx_create();
	struct seen_boundary seen = {0};
	struct predict_features f;
	struct sb s = {.n = 0};

	(void)state;
	predict_ctx_set_boundary_hook(ctx, note_boundary, &seen);
	emit(&s, CLEAR_TEXTURE, 0, 12, 5, 0, 16, 32, 0, 256, 128, 2, 0, 0, 0, 0);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_true(seen.calls >= 1);
	assert_false(seen.last.draw);
	assert_true(seen.last.tileable);
	assert_true(seen.last.tiling.clear);
	assert_int_equal(seen.last.tiling.x0, 16);
	assert_int_equal(seen.last.tiling.x1, 16 + 256);
	assert_int_equal(seen.last.tiling.y0, 32);
	assert_int_equal(seen.last.tiling.y1, 32 + 128);
	assert_int_equal(seen.last.tiling.layers, 2);
	/* A box with a negative corner, one row, or past the coordinates a band may take. */
	const uint32_t bad[][6] = {
	    {0, (uint32_t)-4, 0, 64, 64, 1}, {0, 0, 0, 64, 1, 1}, {0, 0, 0, 64, 64, 0},
	    {0, 65500, 0, 64, 64, 1},	     {0, 0, 0, 0, 64, 1},
	};
	for (size_t i = 0; i < N(bad); i++) {
		s.n = 0;
		seen.calls = 0;
		emit(&s, CLEAR_TEXTURE, 0, 12, 5, 0, bad[i][0], bad[i][1], bad[i][2], bad[i][3],
		     bad[i][4], bad[i][5], 0, 0, 0, 0);
		assert_int_equal(submit(ctx, &s, &f), 0);
		assert_true(seen.calls >= 1);
		assert_false(seen.last.tileable);
	}
	/* Longer than the protocol's 12 dwords: not rewritten, so not cut. */
	s.n = 0;
	emit(&s, CLEAR_TEXTURE, 0, 13, 5, 0, 0, 0, 0, 64, 64, 1, 0, 0, 0, 0, 0);
	assert_int_equal(submit(ctx, &s, &f), 0);
	assert_false(seen.last.tileable);
	predict_ctx_set_boundary_hook(ctx, NULL, NULL);
	predict_ctx_destroy(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(clear_adds_framebuffer_pixels_to_its_mask),
	    cmocka_unit_test(clear_without_color_buffer_uses_the_depth_surface),
	    cmocka_unit_test(superseded_clears_count_once),
	    cmocka_unit_test(draw_vertices_are_count_times_instances),
	    cmocka_unit_test(shader_work_scales_with_vertices_and_fragments),
	    cmocka_unit_test(projected_bounding_box_gives_hand_computed_fragments),
	    cmocka_unit_test(inline_written_vertices_give_the_box_too),
	    cmocka_unit_test(without_mvp_half_the_viewport_is_assumed),
	    cmocka_unit_test(clip_space_quads_cover_their_rectangle),
	    cmocka_unit_test(a_small_buffer_is_read_with_the_layout_of_its_draw),
	    cmocka_unit_test(passes_take_the_size_of_their_target),
	    cmocka_unit_test(uploads_from_resource_memory_give_the_bbox),
	    cmocka_unit_test(culled_and_discarded_draws_have_no_fragments),
	    cmocka_unit_test(nan_and_inf_from_the_guest_stay_finite),
	    cmocka_unit_test(sub_context_switch_changes_the_framebuffer),
	    cmocka_unit_test(same_stream_on_other_framebuffer_hashes_differently),
	    cmocka_unit_test(malformed_command_keeps_features_before_it),
	    cmocka_unit_test(history_mode_uses_the_recent_fragments_per_vertex),
	    cmocka_unit_test(the_more_accurate_estimator_is_chosen),
	    cmocka_unit_test(the_box_learns_its_coverage),
	    cmocka_unit_test(other_commands_add_their_pixels),
	    cmocka_unit_test(resources_are_unique_and_destroy_accepts_null),
	    cmocka_unit_test(a_plain_draw_may_be_cut_into_tiles_of_its_viewport),
	    cmocka_unit_test(a_clear_texture_may_be_cut_into_bands_of_its_box),
	    cmocka_unit_test(a_draw_with_the_scissor_on_is_tiled_within_its_scissor),
	    cmocka_unit_test(draws_whose_result_depends_on_the_split_are_not_tiled),
	    cmocka_unit_test(bindings_out_of_range_block_tiles_for_good),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
