// SPDX-License-Identifier: MIT
/*
 * The features of one command group: what the cost models see.
 *
 * A group's features are the sum of its commands' features (Schnitzer et
 * al., Concepts for Execution Time Prediction of 3D GPU Rendering, §IV-B: a
 * group's time is the sum of its commands' times). Each feature is a count
 * that a cost grows with linearly (Ma's and Keller's theses, Schnitzer et
 * al.; see doc/references.md), so a linear model over them reproduces
 * their FLUSH, CLEAR and DRAW models:
 *   flush:   PF_GROUP (1 per group: c_flush)
 *   clear:   pixels cleared, one feature per buffer mask (7 masks, Schnitzer
 *            et al. §IV-D: c_color, c_depth, ..., c_color&depth&stencil)
 *   draw:    vertex term (vertices × instances, and that × vertex-shader
 *            instructions) + fragment term (estimated fragments, and that ×
 *            fragment-shader ALU / texture instructions; × MSAA samples)
 *   others:  transfer/upload bytes, blit/copy/clear_texture pixels,
 *            shader compilation (TGSI tokens), and command counts.
 *
 * Values are doubles; none is negative. Guest-controlled counts are
 * clamped to PREDICT_FEATURE_MAX so that a hostile stream cannot produce
 * infinities or NaNs.
 */
#ifndef PREDICT_FEATURES_H
#define PREDICT_FEATURES_H

#include <stdint.h>

enum predict_feature {
	PF_GROUP = 0,	   /* 1 for every group: submission, flush, fence */
	PF_CMDS,	   /* commands in the group */
	PF_CLEAR_C,	   /* pixels cleared with mask color */
	PF_CLEAR_D,	   /* depth */
	PF_CLEAR_S,	   /* stencil */
	PF_CLEAR_CD,	   /* color + depth */
	PF_CLEAR_CS,	   /* color + stencil */
	PF_CLEAR_DS,	   /* depth + stencil */
	PF_CLEAR_CDS,	   /* color + depth + stencil */
	PF_DRAWS,	   /* draw calls */
	PF_VERTICES,	   /* vertices × instances */
	PF_VS_WORK,	   /* vertices × instances × vertex-shader instructions */
	PF_FRAGMENTS,	   /* estimated fragments × MSAA samples */
	PF_FS_ALU_WORK,	   /* fragments × fragment-shader ALU instructions */
	PF_FS_TEX_WORK,	   /* fragments × fragment-shader texture instructions */
	PF_TRANSFER_BYTES, /* bytes uploaded/downloaded in the stream (inline writes, transfer3d) */
	PF_BLIT_PIXELS,	   /* destination pixels of blits */
	PF_COPY_PIXELS,	   /* pixels of resource_copy_region */
	PF_CLEAR_TEX_PIXELS, /* pixels of clear_texture */
	PF_SHADER_TOKENS,    /* TGSI tokens of shaders created in the group (compilation) */
	PF_COUNT
};

/* Upper bound of any feature value: 2^50, far above any real group. */
#define PREDICT_FEATURE_MAX 1125899906842624.0

/* Flags of a group's features. */
enum predict_feature_flag {
	PFF_UNBOUNDED_LOOP = 1u << 0, /* a bound shader has a loop whose trip count is unknown */
	PFF_NO_MVP = 1u << 1,	      /* a draw's fragments could not be projected (no MVP found) */
	PFF_SUB_CTX = 1u << 2, /* the group creates, destroys or changes the current sub-context */
	PFF_QUERY = 1u << 3,   /* the group uses queries of its own */
};

struct predict_features {
	double x[PF_COUNT];
	/*
	 * Identity of the group's content for history-based prediction
	 * (TimeGraph): a hash of the command stream with fence/sequence
	 * numbers left out, mixed with the context's framebuffer size (so
	 * binary-equal groups of different contexts differ only if their
	 * targets do; Schnitzer et al. §VI-E show why the plain content is not
	 * enough).
	 */
	uint64_t content_hash;
	uint32_t flags;
	/*
	 * The group's fragments as each estimator saw them (MSAA samples
	 * included), kept so that the estimators can be scored once the
	 * measured count is known (predict_ctx_observe_fragments()). Not model
	 * inputs: PF_FRAGMENTS holds the estimate chosen per draw.
	 */
	struct predict_fragment_estimates {
		double vertices;      /* of the draws that rasterize */
		double bbox, history; /* summed over the draws each could estimate */
		uint32_t draws, bbox_draws, history_draws;
	} frag;
};

/* Name of a feature ("clear_cd", "fs_alu_work", ...), for `mediatorctl model`. */
const char *predict_feature_name(enum predict_feature f);

#endif
