// SPDX-License-Identifier: MIT
/*
 * Tests of the shallow virgl command-buffer walk: counts per class, and
 * rejection (with index and offset) of headers whose length runs past the
 * end of the buffer; class names both ways, and which classes have output.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "predict_cmd.h"

#define CMD0(cmd, obj, len) ((uint32_t)(cmd) | ((uint32_t)(obj) << 8) | ((uint32_t)(len) << 16))

static void counts_commands_by_class(void **state)
{
	const uint32_t buf[] = {
	    CMD0(7, 0, 8),   0, 0, 0, 0, 0, 0, 0, 0, /* CLEAR, 8 dwords */
	    CMD0(8, 0, 1),   0,			     /* DRAW_VBO */
	    CMD0(8, 0, 0),			     /* DRAW_VBO, empty payload */
	    CMD0(1, 4, 2),   0, 0,		     /* CREATE_OBJECT shader */
	    CMD0(1, 1, 0),			     /* CREATE_OBJECT blend */
	    CMD0(43, 0, 1),  0,			     /* TRANSFER3D */
	    CMD0(200, 0, 0),			     /* unknown */
	};
	struct predict_cmd_counts c;

	assert_int_equal(predict_cmd_count(buf, sizeof(buf) / sizeof(buf[0]), &c, NULL, NULL), 0);
	assert_int_equal(c.total, 7);
	assert_int_equal(c.n[PREDICT_CMD_CLEAR], 1);
	assert_int_equal(c.n[PREDICT_CMD_DRAW], 2);
	assert_int_equal(c.n[PREDICT_CMD_SHADER], 1);
	assert_int_equal(c.n[PREDICT_CMD_STATE], 1);
	assert_int_equal(c.n[PREDICT_CMD_TRANSFER], 1);
	assert_int_equal(c.n[PREDICT_CMD_UNKNOWN], 1);
}

static void empty_buffer_has_no_commands(void **state)
{
	struct predict_cmd_counts c;

	assert_int_equal(predict_cmd_count(NULL, 0, &c, NULL, NULL), 0);
	assert_int_equal(c.total, 0);
}

static void length_past_the_end_is_rejected_with_index_and_offset(void **state)
{
	/* The second command claims 5 dwords but only 2 follow. Copy it to the
	 * end of a heap block so that ASan catches any read past it. */
	const uint32_t src[] = {CMD0(8, 0, 1), 0, CMD0(7, 0, 5), 0, 0};
	uint32_t *buf = malloc(sizeof(src));
	struct predict_cmd_counts c;
	uint32_t index = 99;
	size_t offset = 99;

	memcpy(buf, src, sizeof(src));
	assert_int_equal(predict_cmd_count(buf, 5, &c, &index, &offset), -EINVAL);
	assert_int_equal(index, 1);
	assert_int_equal(offset, 8);
	assert_int_equal(c.n[PREDICT_CMD_DRAW], 1);
	free(buf);
}

static void maximum_length_header_in_a_short_buffer_is_rejected(void **state)
{
	const uint32_t buf[] = {CMD0(8, 0, 0xffff)};
	struct predict_cmd_counts c;

	assert_int_equal(predict_cmd_count(buf, 1, &c, NULL, NULL), -EINVAL);
}

static void class_names_match_the_trace_format(void **state)
{
	assert_string_equal(predict_cmd_class_name(PREDICT_CMD_DRAW), "draw");
	assert_string_equal(predict_cmd_class_name(PREDICT_CMD_CLEAR), "clear");
	assert_string_equal(predict_cmd_class_name(PREDICT_CMD_CLASS_COUNT), "invalid");
}

static void class_names_are_found_again(void **state)
{
	for (int cls = 0; cls < PREDICT_CMD_CLASS_COUNT; cls++)
		assert_int_equal(predict_cmd_class_find(predict_cmd_class_name(cls)), cls);
	assert_int_equal(predict_cmd_class_find("invalid"), -1);
	assert_int_equal(predict_cmd_class_find("Draw"), -1);
	assert_int_equal(predict_cmd_class_find(""), -1);
}

static void only_state_shader_and_query_commands_have_no_output(void **state)
{
	const uint32_t setup[] = {
	    CMD0(1, 1, 0),  /* CREATE_OBJECT blend: state */
	    CMD0(1, 4, 0),  /* CREATE_OBJECT shader */
	    CMD0(31, 0, 0), /* BIND_SHADER */
	    CMD0(19, 0, 0), /* BEGIN_QUERY */
	};
	struct predict_cmd_counts c = {0};

	assert_true(predict_cmd_no_output(&c)); /* an empty group */
	assert_int_equal(predict_cmd_count(setup, 4, &c, NULL, NULL), 0);
	assert_true(predict_cmd_no_output(&c));
	for (int cls = 0; cls < PREDICT_CMD_CLASS_COUNT; cls++) {
		bool none = cls == PREDICT_CMD_STATE || cls == PREDICT_CMD_SHADER ||
			    cls == PREDICT_CMD_QUERY;

		assert_int_equal(predict_cmd_class_has_output(cls), !none);
		c.n[cls]++;
		assert_int_equal(predict_cmd_no_output(&c), none);
		c.n[cls]--;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(counts_commands_by_class),
	    cmocka_unit_test(empty_buffer_has_no_commands),
	    cmocka_unit_test(length_past_the_end_is_rejected_with_index_and_offset),
	    cmocka_unit_test(maximum_length_header_in_a_short_buffer_is_rejected),
	    cmocka_unit_test(class_names_match_the_trace_format),
	    cmocka_unit_test(class_names_are_found_again),
	    cmocka_unit_test(only_state_shader_and_query_commands_have_no_output),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
