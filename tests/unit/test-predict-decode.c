// SPDX-License-Identifier: MIT
/*
 * Tests of the typed virgl decoder: operands of hand-built valid streams
 * come out by name, and every malformed command is rejected with its
 * index, byte offset and a reason. Buffers are copied to the end of a heap
 * block of exactly their size so that ASan catches any read past them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "predict_decode.h"

#define CMD0(cmd, obj, len) ((uint32_t)(cmd) | ((uint32_t)(obj) << 8) | ((uint32_t)(len) << 16))
#define N(a)		    (sizeof(a) / sizeof((a)[0]))

enum {
	CREATE = 1,
	BIND = 2,
	DESTROY = 3,
	VIEWPORT = 4,
	FRAMEBUFFER = 5,
	VBUFS = 6,
	CLEAR = 7,
	DRAW = 8,
	INLINE_WRITE = 9,
	SVIEWS = 10,
	IBUF = 11,
	CBUF = 12,
	SCISSOR = 15,
	BLIT = 16,
	COPY = 17,
	BEGIN_Q = 19,
	UBO = 27,
	SET_SUB = 28,
	BIND_SHADER = 31,
	GRID = 37,
	TRANSFER3D = 43,
	CLEAR_TEX = 47,
};
enum { O_BLEND = 1, O_SHADER = 4, O_VE = 5, O_SURFACE = 8 };

static uint32_t *tail_copy(const uint32_t *src, size_t ndw)
{
	uint32_t *p = malloc(ndw ? ndw * sizeof(*p) : 1);

	assert_non_null(p);
	if (ndw)
		memcpy(p, src, ndw * sizeof(*p));
	return p;
}

static void operands_of_a_frame_come_out_by_name(void **state)
{
	const uint32_t src[] = {
	    CMD0(CREATE, O_SURFACE, 5),
	    7,
	    42,
	    67,
	    0,
	    0, /* surface 7 on res 42 */
	    CMD0(FRAMEBUFFER, 0, 3),
	    1,
	    9,
	    7, /* cbuf 7, zsurf 9 */
	    CMD0(CLEAR, 0, 8),
	    0x5,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0, /* color0 | depth */
	    CMD0(CREATE, O_VE, 5),
	    3,
	    12,
	    0,
	    1,
	    30, /* 1 element */
	    CMD0(VBUFS, 0, 3),
	    16,
	    64,
	    5, /* stride 16 off 64 res 5 */
	    CMD0(DRAW, 0, 12),
	    2,
	    300,
	    4,
	    0,
	    3,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0, /* 300 verts, 3 inst */
	    CMD0(INLINE_WRITE, 0, 13),
	    5,
	    0,
	    0,
	    0,
	    0,
	    8,
	    0,
	    0,
	    8,
	    1,
	    1,
	    0xa,
	    0xb,
	    CMD0(200, 3, 1),
	    0, /* unknown command */
	};
	uint32_t *buf = tail_copy(src, N(src));
	struct predict_decode d;
	struct predict_dcmd c;

	predict_decode_init(&d, buf, N(src));
	assert_int_equal(predict_decode_next(&d, &c, NULL), 1);
	assert_int_equal(c.cmd, CREATE);
	assert_int_equal(c.obj, O_SURFACE);
	assert_int_equal(c.u.surface.handle, 7);
	assert_int_equal(c.u.surface.res_handle, 42);
	assert_int_equal(c.u.surface.format, 67);

	assert_int_equal(predict_decode_next(&d, &c, NULL), 1);
	assert_int_equal(c.index, 1);
	assert_int_equal(c.offset, 24);
	assert_int_equal(c.u.framebuffer.nr_cbufs, 1);
	assert_int_equal(c.u.framebuffer.zsurf, 9);
	assert_int_equal(c.u.framebuffer.cbufs[0], 7);

	assert_int_equal(predict_decode_next(&d, &c, NULL), 1);
	assert_int_equal(c.u.clear.buffers, 5);

	assert_int_equal(predict_decode_next(&d, &c, NULL), 1);
	assert_int_equal(c.u.vertex_elements.handle, 3);
	assert_int_equal(c.u.vertex_elements.count, 1);
	assert_int_equal(c.u.vertex_elements.elems[0], 12);
	assert_int_equal(c.u.vertex_elements.elems[3], 30);

	assert_int_equal(predict_decode_next(&d, &c, NULL), 1);
	assert_int_equal(c.u.vertex_buffers.count, 1);
	assert_int_equal(c.u.vertex_buffers.vb[0], 16);
	assert_int_equal(c.u.vertex_buffers.vb[2], 5);

	assert_int_equal(predict_decode_next(&d, &c, NULL), 1);
	assert_int_equal(c.u.draw.start, 2);
	assert_int_equal(c.u.draw.count, 300);
	assert_int_equal(c.u.draw.mode, 4);
	assert_int_equal(c.u.draw.instance_count, 3);

	assert_int_equal(predict_decode_next(&d, &c, NULL), 1);
	assert_int_equal(c.u.transfer.handle, 5);
	assert_int_equal(c.u.transfer.box.x, 8);
	assert_int_equal(c.u.transfer.box.w, 8);
	assert_int_equal(c.u.transfer.data_len, 8);
	assert_int_equal(((const uint32_t *)c.u.transfer.data)[1], 0xb);

	assert_int_equal(predict_decode_next(&d, &c, NULL), 1);
	assert_int_equal(c.cmd, 200);
	assert_int_equal(c.len, 1);

	assert_int_equal(predict_decode_next(&d, &c, NULL), 0);
	assert_int_equal(predict_decode_next(&d, &c, NULL), 0);
	free(buf);
}

static void shader_text_and_its_continuation_are_found(void **state)
{
	/* "VERT\nEND\n\0\0\0" as 3 dwords, then a continuation at byte 12. */
	uint32_t src[] = {
	    CMD0(CREATE, O_SHADER, 8),
	    11,
	    0,
	    24,
	    100,
	    0,
	    0,
	    0,
	    0,
	    CMD0(CREATE, O_SHADER, 7),
	    11,
	    0,
	    0x80000000u | 12,
	    100,
	    0,
	    0,
	    0,
	    CMD0(CREATE, O_SHADER, 9 + 2 * 1 + 1),
	    12,
	    0,
	    4,
	    10,
	    1,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	    0,
	};
	uint32_t *buf;
	struct predict_decode d;
	struct predict_dcmd c;

	memcpy(&src[6], "VERT\nEND\n\0\0\0", 12);
	memcpy(&src[15], "ABCDEFGH", 8);
	memcpy(&src[29], "TEX", 4);
	buf = tail_copy(src, N(src));
	predict_decode_init(&d, buf, N(src));

	assert_int_equal(predict_decode_next(&d, &c, NULL), 1);
	assert_int_equal(c.u.shader.handle, 11);
	assert_int_equal(c.u.shader.type, 0);
	assert_false(c.u.shader.continuation);
	assert_int_equal(c.u.shader.offlen, 24);
	assert_int_equal(c.u.shader.num_tokens, 100);
	assert_int_equal(c.u.shader.text_len, 12);
	assert_memory_equal(c.u.shader.text, "VERT\nEND\n", 9);

	assert_int_equal(predict_decode_next(&d, &c, NULL), 1);
	assert_true(c.u.shader.continuation);
	assert_int_equal(c.u.shader.offlen, 12);
	assert_int_equal(c.u.shader.text_len, 8);
	assert_memory_equal(c.u.shader.text, "ABCDEFGH", 8);

	/* One stream-output output: the text starts after 4 strides and 2 dwords. */
	assert_int_equal(predict_decode_next(&d, &c, NULL), 1);
	assert_int_equal(c.u.shader.num_so_outputs, 1);
	assert_int_equal(c.u.shader.text_len, 4);
	assert_memory_equal(c.u.shader.text, "TEX", 4);
	assert_int_equal(predict_decode_next(&d, &c, NULL), 0);
	free(buf);
}

static void empty_buffer_decodes_to_nothing(void **state)
{
	struct predict_decode d;
	struct predict_dcmd c;

	predict_decode_init(&d, NULL, 0);
	assert_int_equal(predict_decode_next(&d, &c, NULL), 0);
}

struct bad_case {
	const char *description;
	uint32_t src[32];
	size_t ndw;
	uint32_t index;
	size_t offset;
};

/* A valid 9-dword clear to put before bad commands (36 bytes). */
#define GOOD_CLEAR CMD0(CLEAR, 0, 8), 4, 0, 0, 0, 0, 0, 0, 0

static const struct bad_case bad_cases[] = {
    {"length runs past the end", {CMD0(0, 0, 0), CMD0(CLEAR, 0, 8), 0, 0}, 4, 1, 4},
    {"clear shorter than its 8 operands", {CMD0(CLEAR, 0, 2), 0, 0}, 3, 0, 0},
    {"draw shorter than 12 operands", {GOOD_CLEAR, CMD0(DRAW, 0, 11)}, 21, 1, 36},
    {"shader shorter than its header", {CMD0(CREATE, O_SHADER, 4), 1, 0, 0, 0}, 5, 0, 0},
    {"shader type out of range", {CMD0(CREATE, O_SHADER, 5), 1, 6, 0, 0, 0}, 6, 0, 0},
    {"shader with 65 stream-output outputs", {CMD0(CREATE, O_SHADER, 5), 1, 0, 0, 0, 65}, 6, 0, 0},
    {"shader shorter than its stream-output info",
     {CMD0(CREATE, O_SHADER, 12), 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0},
     13,
     0,
     0},
    {"create_object with handle 0", {CMD0(CREATE, O_BLEND, 11), 0}, 12, 0, 0},
    {"create_object with a host handle", {CMD0(CREATE, O_BLEND, 11), 0xffffff00u}, 12, 0, 0},
    {"create_object without a handle", {GOOD_CLEAR, CMD0(CREATE, O_BLEND, 0)}, 10, 1, 36},
    {"create_object of an unknown type", {CMD0(CREATE, 12, 1), 1}, 2, 0, 0},
    {"blend object too short", {CMD0(CREATE, O_BLEND, 10), 1}, 11, 0, 0},
    {"surface too short", {CMD0(CREATE, O_SURFACE, 4), 1, 2, 3, 4}, 5, 0, 0},
    {"vertex elements not 4 n + 1", {CMD0(CREATE, O_VE, 4), 1, 0, 0, 0}, 5, 0, 0},
    {"framebuffer with 9 color buffers", {CMD0(FRAMEBUFFER, 0, 11), 9, 0}, 12, 0, 0},
    {"framebuffer shorter than its color buffers", {CMD0(FRAMEBUFFER, 0, 3), 2, 0, 1}, 4, 0, 0},
    {"viewport not 6 n + 1", {CMD0(VIEWPORT, 0, 6)}, 7, 0, 0},
    {"viewport past slot 16", {CMD0(VIEWPORT, 0, 7), 16}, 8, 0, 0},
    {"scissor not 2 n + 1", {CMD0(SCISSOR, 0, 2), 0, 0}, 3, 0, 0},
    {"vertex buffers not 3 n", {CMD0(VBUFS, 0, 4), 0, 0, 0, 0}, 5, 0, 0},
    {"index buffer without a handle", {CMD0(IBUF, 0, 0)}, 1, 0, 0},
    {"constant buffer without its index", {CMD0(CBUF, 0, 1), 0}, 2, 0, 0},
    {"constant buffer for shader type 6", {CMD0(CBUF, 0, 2), 6, 0}, 3, 0, 0},
    {"uniform buffer index 32", {CMD0(UBO, 0, 5), 0, 32, 0, 0, 1}, 6, 0, 0},
    {"sampler views of shader type 6", {CMD0(SVIEWS, 0, 2), 6, 0}, 3, 0, 0},
    {"sampler views past slot 32", {CMD0(SVIEWS, 0, 3), 1, 32, 5}, 4, 0, 0},
    {"bind_shader without its type", {CMD0(BIND_SHADER, 0, 1), 1}, 2, 0, 0},
    {"bind object without a handle", {GOOD_CLEAR, CMD0(BIND, O_VE, 0)}, 10, 1, 36},
    {"destroy object without a handle", {CMD0(DESTROY, 0, 0)}, 1, 0, 0},
    {"begin_query without a handle", {CMD0(BEGIN_Q, 0, 0)}, 1, 0, 0},
    {"set_sub_ctx without an id", {CMD0(SET_SUB, 0, 0)}, 1, 0, 0},
    {"blit shorter than 21 operands", {CMD0(BLIT, 0, 20)}, 21, 0, 0},
    {"copy region shorter than 13 operands", {CMD0(COPY, 0, 12)}, 13, 0, 0},
    {"inline write shorter than 12 operands", {CMD0(INLINE_WRITE, 0, 11)}, 12, 0, 0},
    {"transfer3d shorter than 13 operands", {CMD0(TRANSFER3D, 0, 12)}, 13, 0, 0},
    {"transfer3d in direction 3",
     {CMD0(TRANSFER3D, 0, 13), 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 3},
     14,
     0,
     0},
    {"clear_texture shorter than 12 operands", {CMD0(CLEAR_TEX, 0, 11)}, 12, 0, 0},
    {"launch_grid shorter than 8 operands", {CMD0(GRID, 0, 7)}, 8, 0, 0},
};

static void every_malformed_command_is_rejected_with_index_and_offset(void **state)
{
	for (size_t i = 0; i < N(bad_cases); i++) {
		const struct bad_case *t = &bad_cases[i];
		uint32_t *buf = tail_copy(t->src, t->ndw);
		struct predict_decode d;
		struct predict_dcmd c;
		const char *why = NULL;
		int r;

		predict_decode_init(&d, buf, t->ndw);
		while ((r = predict_decode_next(&d, &c, &why)) > 0)
			;
		print_message("%s\n", t->description);
		assert_int_equal(r, -EINVAL);
		assert_int_equal(c.index, t->index);
		assert_int_equal(c.offset, t->offset);
		assert_non_null(why);
		/* It stays stopped there. */
		assert_int_equal(predict_decode_next(&d, &c, NULL), -EINVAL);
		assert_int_equal(c.index, t->index);
		assert_int_equal(predict_decode_offset(&d), t->offset);
		free(buf);
	}
}

static void floats_are_read_from_their_bits(void **state)
{
	assert_true(predict_decode_f32(0x3f800000u) == 1.0f);
	assert_true(predict_decode_f32(0xc0000000u) == -2.0f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(operands_of_a_frame_come_out_by_name),
	    cmocka_unit_test(shader_text_and_its_continuation_are_found),
	    cmocka_unit_test(empty_buffer_decodes_to_nothing),
	    cmocka_unit_test(every_malformed_command_is_rejected_with_index_and_offset),
	    cmocka_unit_test(floats_are_read_from_their_bits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
