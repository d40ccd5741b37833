// SPDX-License-Identifier: MIT
/*
 * Instruction histogram of a TGSI shader in text form.
 *
 * Mesa's virgl driver sends shaders as TGSI text (tgsi_dump's format, read
 * back by virglrenderer with tgsi_text_translate): a processor line (VERT,
 * FRAG, ...), declarations (DCL), immediates (IMM), properties (PROPERTY)
 * and numbered instructions ("  3: MAD TEMP[0], ..."), one per line.
 * predict_tgsi_parse() reads such text and counts instructions by kind:
 * ALU, texture/memory, flow control; and declarations. It accepts any
 * bytes (the text comes from a guest): the work is linear in the length,
 * nothing past @len or a NUL is read, and text that is not TGSI yields
 * some histogram, never an error. For a vertex shader it also tells
 * whether the position output is its input 0 unchanged (clip_space).
 */
#ifndef PREDICT_TGSI_H
#define PREDICT_TGSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct predict_tgsi_stats {
	uint32_t alu;	 /* arithmetic and logic instructions (MOV, MAD, DP4, ...) */
	uint32_t tex;	 /* texture sampling, image and buffer access (TEX, SAMPLE, LOAD, ...) */
	uint32_t flow;	 /* flow control (IF, ELSE, ENDIF, BGNLOOP, BRK, CAL, RET, KILL, ...) */
	uint32_t decl;	 /* DCL lines */
	uint32_t imm;	 /* IMM lines */
	uint32_t props;	 /* PROPERTY lines */
	uint32_t loops;	 /* BGNLOOP instructions */
	uint32_t tokens; /* lexical tokens (words, numbers, punctuation) */
	bool has_loop;	 /* loops > 0 */
	bool
	    unbounded_loop; /* a loop whose trip count is not proven constant (every loop, today) */
	/*
	 * A vertex shader whose position output is written only by MOVs from
	 * input 0 (unswizzled) or immediates: its positions are already clip
	 * coordinates, as in the full-screen or screen-aligned quads of
	 * post-processing and compositing passes, which draw without any
	 * matrix.
	 */
	bool clip_space;
	/* A VIEWPORT_INDEX is declared: the shader may pick the viewport (and scissor) it draws to.
	 */
	bool viewport_index;
};

/*
 * Parses @len bytes of TGSI text at @text (stops early at a NUL) into
 * @st (zeroed first). @text is only read during the call.
 */
void predict_tgsi_parse(const char *text, size_t len, struct predict_tgsi_stats *st);

#endif
