/*
 * Tests of the TGSI text histogram. The shaders are written by hand in the
 * exact text form Mesa's virgl driver sends (tgsi_dump of nir_to_tgsi
 * output: processor line, PROPERTY, DCL, IMM, numbered instructions); they
 * were not captured from a running guest (the vtest server did not start
 * in this environment), and mirror glmark2-es2's "build" vertex shader,
 * a textured fragment shader and a loop-and-branch fragment shader.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "predict_tgsi.h"

static const char vs_mvp[] = "VERT\n"
			     "PROPERTY NEXT_SHADER FRAG\n"
			     "DCL IN[0]\n"
			     "DCL IN[1]\n"
			     "DCL OUT[0], POSITION\n"
			     "DCL OUT[1], GENERIC[9]\n"
			     "DCL CONST[0][0..7]\n"
			     "DCL TEMP[0..1], LOCAL\n"
			     "IMM[0] UINT32 {0, 16, 32, 48}\n"
			     "  0: MUL TEMP[0], CONST[0][0], IN[0].xxxx\n"
			     "  1: MAD TEMP[0], CONST[0][1], IN[0].yyyy, TEMP[0]\n"
			     "  2: MAD TEMP[0], CONST[0][2], IN[0].zzzz, TEMP[0]\n"
			     "  3: ADD OUT[0], TEMP[0], CONST[0][3]\n"
			     "  4: DP3 TEMP[1].x, IN[1].xyzz, CONST[0][4].xyzz\n"
			     "  5: MAX_SAT TEMP[1].x, TEMP[1].xxxx, IMM[0].xxxx\n"
			     "  6: MOV OUT[1], TEMP[1].xxxx\n"
			     "  7: END\n";

static const char fs_tex[] = "FRAG\n"
			     "PROPERTY FS_COLOR0_WRITES_ALL_CBUFS 1\n"
			     "DCL IN[0], GENERIC[9], PERSPECTIVE\n"
			     "DCL OUT[0], COLOR\n"
			     "DCL SAMP[0]\n"
			     "DCL SVIEW[0], 2D, FLOAT\n"
			     "DCL TEMP[0], LOCAL\n"
			     "  0: TEX TEMP[0], IN[0].xyyy, SAMP[0], 2D\n"
			     "  1: MUL OUT[0], TEMP[0], IN[0].wwww\n"
			     "  2: END\n";

static const char fs_loop[] = "FRAG\n"
			      "DCL IN[0], GENERIC[9], PERSPECTIVE\n"
			      "DCL OUT[0], COLOR\n"
			      "DCL SAMP[0]\n"
			      "DCL SVIEW[0], 2D, FLOAT\n"
			      "DCL CONST[0][0]\n"
			      "DCL TEMP[0..2], LOCAL\n"
			      "IMM[0] FLT32 {    0.0000,     1.0000,     0.0000,     0.0000}\n"
			      "IMM[1] INT32 {0, 1, 0, 0}\n"
			      "  0: MOV TEMP[0], IMM[0].xxxx\n"
			      "  1: MOV TEMP[1].x, IMM[1].xxxx\n"
			      "  2: BGNLOOP\n"
			      "  3:   ISGE TEMP[2].x, TEMP[1].xxxx, CONST[0][0].xxxx\n"
			      "  4:   UIF TEMP[2].xxxx\n"
			      "  5:     BRK\n"
			      "  6:   ENDIF\n"
			      "  7:   SAMPLE TEMP[2], IN[0], SVIEW[0], SAMP[0]\n"
			      "  8:   ADD TEMP[0], TEMP[0], TEMP[2]\n"
			      "  9:   UADD TEMP[1].x, TEMP[1].xxxx, IMM[1].yyyy\n"
			      " 10: ENDLOOP\n"
			      " 11: MOV OUT[0], TEMP[0]\n"
			      " 12: END\n";

struct tgsi_case {
	const char *description;
	const char *text;
	uint32_t alu, tex, flow, decl, imm, props, loops;
	bool unbounded;
};

static const struct tgsi_case cases[] = {
    {"vertex shader with an MVP transform", vs_mvp, 7, 0, 1, 6, 1, 1, 0, false},
    {"textured fragment shader", fs_tex, 1, 1, 1, 5, 0, 1, 0, false},
    {"fragment shader with a loop and a branch", fs_loop, 6, 1, 6, 6, 2, 0, 1, true},
    {"empty text", "", 0, 0, 0, 0, 0, 0, 0, false},
    {"garbage words count as ALU", "12345\n!!!\nfoo bar\n\n", 1, 0, 0, 0, 0, 0, 0, false},
};

static void histograms_of_shaders_match(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tgsi_case *t = &cases[i];
		struct predict_tgsi_stats st;

		print_message("%s\n", t->description);
		predict_tgsi_parse(t->text, strlen(t->text) + 1, &st);
		assert_int_equal(st.alu, t->alu);
		assert_int_equal(st.tex, t->tex);
		assert_int_equal(st.flow, t->flow);
		assert_int_equal(st.decl, t->decl);
		assert_int_equal(st.imm, t->imm);
		assert_int_equal(st.props, t->props);
		assert_int_equal(st.loops, t->loops);
		assert_int_equal(st.unbounded_loop, t->unbounded);
		assert_int_equal(st.has_loop, t->loops > 0);
	}
}

static void tokens_are_counted(void **state)
{
	struct predict_tgsi_stats st;
	const char *t = "  0: MAD TEMP[0], CONST[0][1], IN[0].yyyy, TEMP[0]\n";

	/* 0 : MAD TEMP [ 0 ] , CONST [ 0 ] [ 1 ] , IN [ 0 ] .yyyy , TEMP [ 0 ] */
	predict_tgsi_parse(t, strlen(t), &st);
	assert_int_equal(st.alu, 1);
	assert_int_equal(st.tokens, 26);
}

static void text_stops_at_nul_and_at_the_length(void **state)
{
	struct predict_tgsi_stats st;
	const char with_nul[] = "MOV\nMOV\0MOV\nMOV\n";
	char *tail;

	predict_tgsi_parse(with_nul, sizeof(with_nul), &st);
	assert_int_equal(st.alu, 2);
	/* No newline and no NUL at the end, at the end of a heap block (ASan). */
	tail = malloc(7);
	assert_non_null(tail);
	memcpy(tail, "TEX\nTEX", 7);
	predict_tgsi_parse(tail, 7, &st);
	assert_int_equal(st.tex, 2);
	predict_tgsi_parse(tail, 5, &st);
	assert_int_equal(st.tex, 1);
	assert_int_equal(st.alu, 1); /* the "T" left of the second TEX */
	free(tail);
	predict_tgsi_parse(NULL, 10, &st);
	assert_int_equal(st.tokens, 0);
}

static void arbitrary_bytes_give_a_histogram(void **state)
{
	size_t len = 1 << 16;
	char *buf = malloc(len);
	struct predict_tgsi_stats st;
	uint32_t x = 12345;

	assert_non_null(buf);
	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (char)(1 + (x >> 16) % 255); /* no NUL */
	}
	predict_tgsi_parse(buf, len, &st);
	assert_true(st.tokens <= len);
	free(buf);
}

static void a_very_long_word_is_one_alu_instruction(void **state)
{
	char line[200];
	struct predict_tgsi_stats st;

	memset(line, 'A', sizeof(line));
	predict_tgsi_parse(line, sizeof(line), &st);
	assert_int_equal(st.alu, 1);
	assert_int_equal(st.tokens, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(histograms_of_shaders_match),
	    cmocka_unit_test(tokens_are_counted),
	    cmocka_unit_test(text_stops_at_nul_and_at_the_length),
	    cmocka_unit_test(arbitrary_bytes_give_a_histogram),
	    cmocka_unit_test(a_very_long_word_is_one_alu_instruction),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
