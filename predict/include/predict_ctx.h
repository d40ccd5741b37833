// SPDX-License-Identifier: MIT
/*
 * Per-context state tracking and feature extraction.
 *
 * A struct predict_ctx follows one guest virgl context the way the host
 * renderer sees it: the objects it creates (shaders, with their TGSI
 * parsed into an instruction histogram; surfaces; sampler views; vertex
 * elements; blend/depth-stencil-alpha/rasterizer state), what is bound
 * (framebuffer, viewport, scissor, shaders, vertex and index buffers,
 * constant buffers — where the model-view-projection matrix is found —,
 * sampler views, queries), and per resource its size and format and, for
 * buffers that hold positions, the bounding box of their contents when
 * the data arrives (inline writes in the stream, or transfers reported by
 * the transport with predict_ctx_resource_write()).
 *
 * predict_ctx_submit() decodes one command buffer (one group), updates
 * the state command by command and sums the group's features. It is pure
 * C with no GL and no I/O, never reads outside the buffer, and accepts any
 * bytes: a malformed stream yields -EINVAL with the command index and
 * byte offset of the first bad command (and the state is left as it was
 * after the last good command).
 *
 * Fragments of a draw are estimated two ways, and each draw uses whichever
 * has been more accurate lately on this context: the bounding box of the bound position
 * buffer projected with the MVP found in the vertex shader's constant
 * buffer and clipped to the viewport (Schnitzer et al., Concepts for Execution
 * Time Prediction of 3D GPU Rendering, §IV-E), and the recent
 * fragments-per-vertex ratio fed by measured fragment counts
 * (predict_ctx_observe_fragments(), after Ma's thesis, Measurement and
 * Prediction of the Execution Time of GPU Rendering Commands).
 *
 * One thread at a time (the worker's main thread).
 */
#ifndef PREDICT_CTX_H
#define PREDICT_CTX_H

#include <stddef.h>
#include <stdint.h>

#include "predict_cmd.h"
#include "predict_features.h"

/* Most objects and resources tracked per context (guest-controlled counts). */
#define PREDICT_CTX_MAX_OBJECTS	  65536u
#define PREDICT_CTX_MAX_RESOURCES 65536u

struct predict_ctx;

/* A resource as the transport creates it (vtest RESOURCE_CREATE, virtio-gpu RESOURCE_CREATE_3D). */
struct predict_resource_desc {
	uint32_t target; /* PIPE_BUFFER = 0, PIPE_TEXTURE_2D = 2, ... */
	uint32_t format; /* virgl format */
	uint32_t bind;
	uint32_t width, height, depth, array_size, last_level, nr_samples;
};

struct predict_decode_error {
	uint32_t index; /* of the bad command in the buffer */
	size_t offset;	/* byte offset of its header */
	const char *what;
};

enum predict_fragment_mode {
	PREDICT_FRAGMENTS_AUTO = 0, /* per draw, whichever estimator has been more accurate */
	PREDICT_FRAGMENTS_BBOX,	    /* projected bounding box (Schnitzer et al.) */
	PREDICT_FRAGMENTS_HISTORY,  /* recent fragments per vertex (Ma's thesis) */
};

/* How the fragment estimators of a context have done (see predict_ctx_observe_fragments()). */
struct predict_fragment_stats {
	uint64_t observed;    /* groups with a measured fragment count */
	double bbox_error;    /* recent mean |ln(estimate / measured)|, -1 before the first */
	double history_error; /* same for the fragments-per-vertex history */
	enum predict_fragment_mode preferred; /* BBOX or HISTORY: used where both can estimate */
};

struct predict_ctx *predict_ctx_create(void);
/* NULL is fine. */
void predict_ctx_destroy(struct predict_ctx *ctx);

/* Returns 0, -EEXIST, -ENOSPC or -ENOMEM. */
int predict_ctx_resource_create(struct predict_ctx *ctx, uint32_t handle,
				const struct predict_resource_desc *desc);
void predict_ctx_resource_destroy(struct predict_ctx *ctx, uint32_t handle);
/*
 * @len bytes at @data were written to buffer resource @handle at byte
 * @offset outside the command stream (a transfer). The data is only read
 * during the call.
 */
void predict_ctx_resource_write(struct predict_ctx *ctx, uint32_t handle, uint64_t offset,
				const void *data, size_t len);

/*
 * Where the transport keeps resources' guest-visible memory (vtest shared
 * memory, virtio-gpu backing): returns the bytes of resource @handle and
 * their number in *@size, or NULL. COPY_TRANSFER3D, with which Mesa's
 * virgl driver uploads buffers from a staging resource, is followed
 * through it, so that vertex data arriving that way gets its bounding box.
 * The memory is only read during predict_ctx_submit().
 */
typedef const void *(*predict_resource_data_fn)(void *data, uint32_t handle, size_t *size);
void predict_ctx_set_resource_data(struct predict_ctx *ctx, predict_resource_data_fn fn,
				   void *data);

/*
 * Decodes the group of @ndw dwords at @buf, updates the state and fills
 * @features (zeroed first) and @counts (may be NULL). Returns 0 or -EINVAL
 * (then *@err says where).
 */
int predict_ctx_submit(struct predict_ctx *ctx, const uint32_t *buf, size_t ndw,
		       struct predict_features *features, struct predict_cmd_counts *counts,
		       struct predict_decode_error *err);

/* Dwords of a rasterizer state's CREATE_OBJECT payload, its handle first (VIRGL_OBJ_RS_SIZE). */
#define PREDICT_RS_DWORDS 9u

/*
 * A draw that may be cut into scissor tiles: drawn once per tile, each
 * time with the scissor limited to the tile, it leaves the framebuffer as
 * the whole draw does (predict_tiling.h says when that holds).
 *
 * Or (@clear) a CLEAR_TEXTURE that may be cut into bands of its box's
 * rows: each band a CLEAR_TEXTURE of its own with the same texture, level,
 * columns, layers and value, which together write what the whole box
 * writes and nothing else (a clear reads nothing). Its box is
 * [x0, x1) x [y0, y1) x @layers layers, in the texture's own coordinates.
 */
#define PREDICT_MAX_CLEAR_COORD 65535 /* a clear cut into bands ends within it */

struct predict_tiling {
	/* The pixels it can touch, in the scissor's coordinates: [x0, x1) x [y0, y1), not empty. */
	uint32_t x0, y0, x1, y1;
	uint32_t
	    rs[PREDICT_RS_DWORDS]; /* the bound rasterizer state (its scissor bit says if on) */
	uint32_t scissor[2];	   /* scissor 0 as last set (0 before): to put back */
	bool clear;		   /* a CLEAR_TEXTURE's box, not a draw's pixels */
	uint32_t layers;	   /* a clear's: its box's depth (1 for a 2D texture) */
};

/*
 * Why a draw may not be cut into scissor tiles (predict_tiling.h);
 * predict_untiled_text() says it in words. Values are stable: mediatord
 * is told them (mediator/common/wire.h, WIRE_UNTILED_MAX).
 */
enum predict_untiled {
	PREDICT_TILEABLE = 0,
	PREDICT_UNTILED_WRITES,	   /* shader buffers, images or atomic counters are bound */
	PREDICT_UNTILED_STREAMOUT, /* stream output is on */
	PREDICT_UNTILED_QUERY,	   /* a query is counting */
	PREDICT_UNTILED_STAGES,	   /* a geometry or tessellation shader is bound */
	PREDICT_UNTILED_VIEWPORT,  /* the vertex shader may pick another viewport */
	PREDICT_UNTILED_NO_RS,	   /* no rasterizer state is bound */
	PREDICT_UNTILED_NOTHING,   /* it rasterizes nothing */
	/*
	 * Not the predictor's: a worker's piece that is cut as far as it may
	 * be (a group's most pieces, its draw in as many tiles as allowed)
	 * and still long.
	 */
	PREDICT_UNTILED_SPENT,
	PREDICT_UNTILED_COUNT
};

/* @why in words; "unknown" for a value out of range. */
const char *predict_untiled_text(enum predict_untiled why);

/* A place a group could be cut: after a command with output. */
struct predict_boundary {
	size_t start_dw, end_dw; /* the command's first dword and where the next command starts */
	uint32_t commands;	 /* commands so far, this one included */
	/* The group's features so far (PF_GROUP and PF_CMDS not yet set). */
	const struct predict_features *so_far;
	bool draw;     /* the command is a draw */
	bool tileable; /* a draw or clear that may be cut into tiles or bands: @tiling says how */
	struct predict_tiling tiling;
	enum predict_untiled untiled; /* a draw that may not: why (PREDICT_TILEABLE else) */
};

/*
 * Where a group could be cut (the worker's pieces, mediator/worker/pieces.h): after
 * each command with output (a draw, clear, blit, copy, transfer, compute;
 * predict_cmd_class_has_output()), predict_ctx_submit() calls @fn with
 * the command's place, the number of commands so far and the group's
 * features so far, and for a draw whether and how it may be cut into
 * scissor tiles (for a CLEAR_TEXTURE, into bands of its box). Cutting after the command splits
 * nothing the state tracker or the host renderer keeps: every command is whole, and the context's
 * state carries over from one submission to the next. Called before the group is known to be well
 * formed: a group that then fails decoding must not be cut. NULL @fn: none (the default).
 */
typedef void (*predict_boundary_fn)(void *data, const struct predict_boundary *b);
void predict_ctx_set_boundary_hook(struct predict_ctx *ctx, predict_boundary_fn fn, void *data);

/* Forces one estimator (for comparisons); the default is PREDICT_FRAGMENTS_AUTO. */
void predict_ctx_set_fragment_mode(struct predict_ctx *ctx, enum predict_fragment_mode mode);
/*
 * The group whose features were @f rasterized @measured fragments (an
 * occlusion query around the group, counting samples). Feeds the
 * fragments-per-vertex history and scores both estimators on the draws
 * they estimated; from then on each draw that both can estimate uses the
 * one with the lower recent error.
 */
void predict_ctx_observe_fragments(struct predict_ctx *ctx, double measured,
				   const struct predict_features *f);
void predict_ctx_fragment_stats(const struct predict_ctx *ctx, struct predict_fragment_stats *out);

/*
 * What the fragment estimators learned (the recent measured fragments per
 * vertex and both estimators' recent errors), saved with the model state
 * so that the next context of the same domain starts with the estimator
 * that worked: predict_ctx_save_fragments() returns the bytes written or
 * -ENOSPC; predict_ctx_load_fragments() returns 0 or -EINVAL (nothing
 * changed). Takes plain pointers so that it fits struct
 * predict_persist_section.
 */
int predict_ctx_save_fragments(const void *ctx, uint8_t *buf, size_t size);
int predict_ctx_load_fragments(void *ctx, const uint8_t *buf, size_t size);

#endif
