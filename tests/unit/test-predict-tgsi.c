// SPDX-License-Identifier: MIT
/*
 * Tests of the TGSI text histogram: on the shaders glmark2-es2 sends
 * through Mesa's virgl driver, captured from a running client
 * (tests/data/tgsi/, see its README), with their instructions counted by
 * hand; and on hand-written shaders in the same text form (tgsi_dump of
 * nir_to_tgsi output: processor line, PROPERTY, DCL, IMM, numbered
 * instructions) for forms glmark2 does not send (SAMPLE, MAX_SAT, array
 * constants), and on text that is not TGSI.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* Parses @text (@len bytes with its NUL, as in the stream) and checks it against @t. */
static void check_case(const struct tgsi_case *t, const char *text, size_t len)
{
	struct predict_tgsi_stats st;

	print_message("%s\n", t->description);
	predict_tgsi_parse(text, len, &st);
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

static void histograms_of_shaders_match(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i], cases[i].text, strlen(cases[i].text) + 1);
}

/* A captured shader and its instructions, counted by hand (END is flow). */
static const struct tgsi_case captured[] = {
    /* 14 ALU: 3 MUL, 4 MAD, 2 ADD, 2 DP3, RSQ, MAX, MOV */
    {"glmark2-build.vert.tgsi", NULL, 14, 0, 1, 7, 1, 0, 0, false},
    {"glmark2-build.frag.tgsi", NULL, 1, 0, 1, 3, 0, 1, 0, false},
    {"glmark2-texture.vert.tgsi", NULL, 15, 0, 1, 9, 1, 0, 0, false},
    {"glmark2-texture.frag.tgsi", NULL, 1, 1, 1, 7, 0, 1, 0, false}, /* TEX, MUL */
    /* 15 ALU: 4 MUL, 6 MAD, 3 ADD, DP3, RSQ */
    {"glmark2-shading-phong.vert.tgsi", NULL, 15, 0, 1, 8, 0, 0, 0, false},
    /* 25 ALU: 8 MUL, 4 MAD, 6 DP3, 3 RSQ, 2 MAX, DIV, POW */
    {"glmark2-shading-phong.frag.tgsi", NULL, 25, 0, 1, 5, 3, 1, 0, false},
    /* flow: BGNLOOP, UIF, BRK, ENDIF, ENDLOOP, END; the trip count is a uniform */
    {"glmark2-loop.vert.tgsi", NULL, 13, 0, 6, 5, 1, 0, 1, true},
    {"glmark2-loop.frag.tgsi", NULL, 11, 0, 6, 5, 2, 3, 1, true},
    {"glmark2-conditionals.vert.tgsi", NULL, 7, 0, 1, 5, 1, 0, 0, false},
    /* the conditionals compile to selects (5 UCMP): no branch */
    {"glmark2-conditionals.frag.tgsi", NULL, 26, 0, 1, 5, 2, 3, 0, false},
};

/* Reads TGSI_DATA_DIR/@name into a NUL-terminated buffer; *@len its length. */
static char *read_shader(const char *name, size_t *len)
{
	char path[4096];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", TGSI_DATA_DIR, name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

static void histograms_of_captured_glmark2_shaders_match(void **state)
{
	for (size_t i = 0; i < sizeof(captured) / sizeof(captured[0]); i++) {
		size_t len;
		char *text = read_shader(captured[i].description, &len);

		check_case(&captured[i], text, len + 1);
		free(text);
	}
}

struct clip_case {
	const char *description;
	const char *text;
	bool clip_space;
};

/* The quads are tgsi_dump's text of Mesa 22's virgl for glmark2's effect2d and desktop. */
static const struct clip_case clip_cases[] = {
    {"vec3 input passed through, w from an immediate",
     "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\nDCL OUT[1].xy, GENERIC[0]\n"
     "IMM[0] FLT32 {0.5000, 1.0000, 0.0000, 0.0000}\nDCL TEMP[0..3]\n"
     "  0: MAD OUT[1].xy, IN[0].xyxx, IMM[0].xxxx, IMM[0].xxxx\n"
     "  1: MOV OUT[0].xyz, IN[0].xyzx\n  2: MOV OUT[0].w, IMM[0].yyyy\n  3: END\n",
     true},
    {"vec2 input passed through, z and w from an immediate",
     "VERT\nDCL IN[0]\nDCL IN[1]\nDCL OUT[0], POSITION\nDCL OUT[1].xy, GENERIC[0]\n"
     "IMM[0] UINT32 {0, 1065353216, 0, 0}\nDCL TEMP[0..3]\n"
     "  0: MOV OUT[0].xy, IN[0].xyyy\n  1: MOV OUT[0].zw, IMM[0].xyxy\n"
     "  2: MOV OUT[1].xy, IN[1].xyxx\n  3: END\n",
     true},
    {"position output declared second, whole input moved",
     "VERT\nDCL IN[0]\nDCL OUT[0], GENERIC[0]\nDCL OUT[1], POSITION\n"
     "  0: MOV OUT[0], IN[0]\n  1: MOV OUT[1], IN[0]\n  2: END\n",
     true},
    {"an MVP transform", vs_mvp, false},
    {"input 0 through a temporary",
     "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n"
     "  0: MOV TEMP[0], IN[0]\n  1: MOV OUT[0], TEMP[0]\n  2: END\n",
     false},
    {"another input", "VERT\nDCL IN[0]\nDCL IN[1]\nDCL OUT[0], POSITION\n  0: MOV OUT[0], IN[1]\n",
     false},
    {"swizzled", "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0].xy, IN[0].yxxx\n", false},
    {"saturated", "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV_SAT OUT[0], IN[0]\n", false},
    {"negated", "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0], -IN[0]\n", false},
    {"moved, then scaled",
     "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0], IN[0]\n"
     "  1: MUL OUT[0].xy, IN[0].xyyy, IMM[0].xxxx\n",
     false},
    {"no position written", "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: END\n", false},
    {"a fragment shader", "FRAG\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0], IN[0]\n", false},
    {"cut short", "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0", false},
};

static void clip_space_vertex_shaders_are_recognised(void **state)
{
	for (size_t i = 0; i < sizeof(clip_cases) / sizeof(clip_cases[0]); i++) {
		struct predict_tgsi_stats st;

		print_message("%s\n", clip_cases[i].description);
		predict_tgsi_parse(clip_cases[i].text, strlen(clip_cases[i].text), &st);
		assert_int_equal(st.clip_space, clip_cases[i].clip_space);
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
	    cmocka_unit_test(histograms_of_captured_glmark2_shaders_match),
	    cmocka_unit_test(clip_space_vertex_shaders_are_recognised),
	    cmocka_unit_test(tokens_are_counted),
	    cmocka_unit_test(text_stops_at_nul_and_at_the_length),
	    cmocka_unit_test(arbitrary_bytes_give_a_histogram),
	    cmocka_unit_test(a_very_long_word_is_one_alu_instruction),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
