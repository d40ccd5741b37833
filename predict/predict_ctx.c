// SPDX-License-Identifier: MIT
/*
 * Per-context state tracking and feature extraction (see predict_ctx.h).
 *
 * Objects and their relations:
 *
 *   predict_ctx ── resources (map handle → struct pc_resource: desc, bbox)
 *        │
 *        └─ sub-contexts (struct pc_sub, up to PREDICT_CTX_MAX_SUB_CTX; one is
 *           current) ── objects (map handle → struct pc_object: shader with
 *           its TGSI histogram, surface, sampler view, vertex elements, ...)
 *           and the bound state: framebuffer, viewport 0, shaders, vertex
 *           elements, vertex buffers, the vertex shader's constant buffer 0.
 *
 * As in virglrenderer, objects belong to a sub-context and resources to
 * the context. predict_ctx_submit() runs the decoder (predict_decode.h)
 * over the group, applies each command to the current sub-context and adds
 * its features (predict_features.h).
 *
 * Bounding boxes of vertex data. When data reaches a buffer resource (an
 * inline write in the stream, or predict_ctx_resource_write() from the
 * transport), it is read as positions: attribute 0 of the currently bound
 * vertex elements if its format is R32G32_FLOAT, R32G32B32_FLOAT or
 * R32G32B32A32_FLOAT and the written resource is the vertex buffer that
 * attribute reads (then its stride and offsets apply); otherwise as tightly
 * packed float vec3 from byte 0. A write that starts at byte 0 of the
 * buffer starts a new box; later writes grow it. Vertices with a NaN or
 * infinite coordinate are skipped. At most PREDICT_CTX_BBOX_VERTICES_MAX
 * vertices are read per write (evenly spaced when there are more).
 * The vertex elements bound when the data arrives need not be those of the
 * draw that reads it (a pass uploads its quad before it binds the quad's
 * layout), so the data of small buffers (up to PREDICT_CTX_KEEP_BYTES:
 * quads and other screen-aligned geometry) is kept, and a draw that reads
 * one with another layout than its box was read with reads it again.
 *
 * The MVP. The first 16 floats of the vertex shader's constant buffer 0
 * (SET_CONSTANT_BUFFER, the default uniform block) are taken as a
 * column-major 4x4 matrix, the way a GLSL mat4 uniform is laid out and a
 * vertex shader's MUL/MAD chain over CONST[0..3] uses it. This is right
 * when the MVP is the first uniform (es2gears, glmark2's simple scenes) and
 * a guess otherwise; a matrix with a NaN/Inf element, or all zeros, counts
 * as no MVP. A vertex shader that passes its position input through
 * (predict_tgsi.h, clip_space) needs none: the later passes of multi-pass
 * rendering draw their quads in clip space, and their box is taken as it
 * is.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "predict_ctx.h"
#include "predict_decode.h"
#include "predict_map.h"
#include "predict_model_priv.h"
#include "predict_tgsi.h"
#include "predict_tiling.h"
#include "virgl_defs.h"

/*
 * Sub-contexts per context: Mesa's virgl driver creates one per
 * pipe_context; applications use one or two. Creations past this are
 * ignored (their commands then act on the current sub-context).
 */
#define PREDICT_CTX_MAX_SUB_CTX 64u
/* Vertices read per write for the bounding box (bounds the work of one write). */
#define PREDICT_CTX_BBOX_VERTICES_MAX 65536u
/* Observations kept for the fragments-per-vertex ratio (Ma's thesis: recent history). */
#define PREDICT_CTX_HISTORY 8u
/* Coverage of the projected box by fragments (Schnitzer et al. §V: 0.5). */
#define PREDICT_CTX_COVERAGE 0.5
/*
 * Vertices of a draw that, in clip space, is taken to cover all of its box
 * inside the viewport: one quad (a strip or fan of 4, or two triangles),
 * or the one triangle a post-processing pass spans the screen with (its
 * box, clipped to the viewport, is the screen).
 */
#define PREDICT_CTX_QUAD_VERTICES 6.0
/* Points closer to the eye plane than this (clip w) are clipped away. */
#define PREDICT_CTX_NEAR_W 1e-5

/*
 * Buffers up to this size keep a copy of their data, so that their box can
 * be read again with the layout of the draw that uses them: a quad of six
 * vertices with a vec4 position and a vec4 attribute fits. At most
 * PREDICT_CTX_MAX_RESOURCES times this per context.
 */
#define PREDICT_CTX_KEEP_BYTES 256u

/* Bytes per texel assumed for TRANSFER3D of textures (the format table is not tracked). */
#define PREDICT_CTX_TEXEL_BYTES 4.0

/* ---- state ---- */

struct pos_layout {
	uint64_t base;	 /* byte offset of vertex 0's position in the buffer */
	uint64_t stride; /* bytes between vertices */
	uint32_t ncomp;	 /* floats per position read: 2 or 3 */
};

struct pc_resource {
	struct predict_resource_desc desc;
	bool has_bbox;
	float bmin[3], bmax[3];
	struct pos_layout layout; /* how the box was read */
	uint8_t *data;		  /* a copy of a small buffer's data, or NULL */
	uint32_t data_len;	  /* bytes of it from 0 that were written */
};

struct pc_object {
	uint32_t type; /* enum predict_virgl_object */
	union {
		struct {
			uint32_t type;		  /* PIPE_SHADER_* */
			uint32_t total, received; /* text bytes announced / seen so far */
			struct predict_tgsi_stats st;
		} shader;
		struct {
			uint32_t res, level, samples;
		} surface;
		struct {
			uint32_t count, offset0, vb0, format0;
		} ve;
		struct {
			bool discard;  /* rasterizer discard: nothing is rasterized */
			bool cull_all; /* both faces culled: no triangle is rasterized */
			uint32_t
			    payload[PREDICT_RS_DWORDS]; /* as created: a tile's copy starts here */
		} rs;
	} u;
};

struct pc_vbuf {
	uint32_t stride, offset, handle;
};

struct pc_sub {
	uint32_t id;
	struct predict_map objects;
	uint32_t nr_cbufs, cbuf0, zsurf;
	uint32_t noattach_w, noattach_h, noattach_samples;
	bool has_viewport;
	float vp_scale[2], vp_translate[2];
	uint32_t vs, fs; /* bound shader handles */
	uint32_t ve;	 /* bound vertex elements handle */
	uint32_t rs;	 /* bound rasterizer state handle */
	struct pc_vbuf vb[PREDICT_PIPE_MAX_ATTRIBS];
	uint32_t nr_vb;
	float vs_const[16];
	uint32_t vs_const_n; /* dwords of constant buffer 0 of the vertex shader, up to 16 */
	struct predict_tile_state tiles; /* whether its draws may be cut into tiles */
};

struct predict_ctx {
	struct predict_map resources;
	struct pc_sub *subs[PREDICT_CTX_MAX_SUB_CTX];
	struct pc_sub *cur;
	uint32_t nobjects; /* over all sub-contexts, <= PREDICT_CTX_MAX_OBJECTS */
	enum predict_fragment_mode mode;
	double hist_frag[PREDICT_CTX_HISTORY], hist_vert[PREDICT_CTX_HISTORY];
	uint32_t hist_n, hist_next;
	/* Recent mean |ln(estimate/measured)| per estimator; < 0 before the first score. */
	double err_bbox, err_hist;
	/*
	 * Recent mean ln(box estimate / measured): how much of the projected
	 * box the draws of this context cover. Schnitzer et al. assume half
	 * (PREDICT_CTX_COVERAGE); a model of a horse covers less of its box
	 * than a quad. The box estimate is divided by exp(bbox_bias), so that
	 * the estimators are compared on how well they follow the fragment
	 * count, not on a constant factor a linear model absorbs anyway.
	 */
	double bbox_bias;
	uint64_t frag_observed;
	predict_resource_data_fn resource_data;
	void *resource_data_arg;
	predict_boundary_fn boundary;
	void *boundary_arg;
	/*
	 * Buffers (bit 0 colour, 1 depth, 2 stencil) already cleared since
	 * the last command that used the framebuffer. A clear of a buffer
	 * that is cleared again before anything draws to it is superseded:
	 * llvmpipe (and tiling GPUs) keep only the last clear value, so on
	 * these machines a group of 500 clears of one target costs about what
	 * one does (measured with bench/accuracy's gl-clears). Its pixels are
	 * therefore counted once.
	 */
	unsigned cleared;
};

static double clamp_feature(double v)
{
	if (!(v >= 0.0)) /* negative or NaN */
		return 0.0;
	return v > PREDICT_FEATURE_MAX ? PREDICT_FEATURE_MAX : v;
}

static void add_feature(struct predict_features *f, enum predict_feature k, double v)
{
	f->x[k] = clamp_feature(f->x[k] + clamp_feature(v));
}

static bool finite_f(double v)
{
	return v == v && v <= 1e300 && v >= -1e300;
}

static double absd(double v)
{
	return v < 0 ? -v : v;
}

/* ---- lifecycle ---- */

/* Frees the values of @m (objects and resources are plain allocations) and its table. */
static void map_free_all(struct predict_map *m)
{
	void *v;

	for (size_t i = 0; (v = predict_map_next(m, &i));)
		free(v);
	predict_map_finish(m);
}

static struct pc_sub *sub_create(uint32_t id)
{
	struct pc_sub *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->id = id;
	predict_map_init(&s->objects);
	return s;
}

static void sub_destroy(struct predict_ctx *ctx, struct pc_sub *s)
{
	if (!s)
		return;
	ctx->nobjects -= (uint32_t)predict_map_count(&s->objects);
	map_free_all(&s->objects);
	free(s);
}

struct predict_ctx *predict_ctx_create(void)
{
	struct predict_ctx *ctx = calloc(1, sizeof(*ctx));

	if (!ctx)
		return NULL;
	predict_map_init(&ctx->resources);
	ctx->subs[0] = sub_create(0);
	if (!ctx->subs[0]) {
		free(ctx);
		return NULL;
	}
	ctx->cur = ctx->subs[0];
	ctx->err_bbox = ctx->err_hist = -1;
	return ctx;
}

void predict_ctx_destroy(struct predict_ctx *ctx)
{
	struct pc_resource *r;

	if (!ctx)
		return;
	for (uint32_t i = 0; i < PREDICT_CTX_MAX_SUB_CTX; i++)
		sub_destroy(ctx, ctx->subs[i]);
	for (size_t i = 0; (r = predict_map_next(&ctx->resources, &i));)
		free(r->data);
	map_free_all(&ctx->resources);
	free(ctx);
}

/* ---- resources and their bounding boxes ---- */

static void resource_free(struct pc_resource *r)
{
	if (r)
		free(r->data);
	free(r);
}

int predict_ctx_resource_create(struct predict_ctx *ctx, uint32_t handle,
				const struct predict_resource_desc *desc)
{
	struct pc_resource *r;
	int ret;

	if (predict_map_get(&ctx->resources, handle))
		return -EEXIST;
	if (predict_map_count(&ctx->resources) >= PREDICT_CTX_MAX_RESOURCES)
		return -ENOSPC;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->desc = *desc;
	if (desc->target == PIPE_BUFFER && desc->width && desc->width <= PREDICT_CTX_KEEP_BYTES) {
		r->data = calloc(1, desc->width);
		if (!r->data) {
			free(r);
			return -ENOMEM;
		}
	}
	ret = predict_map_add(&ctx->resources, handle, r);
	if (ret)
		resource_free(r);
	return ret;
}

void predict_ctx_resource_destroy(struct predict_ctx *ctx, uint32_t handle)
{
	resource_free(predict_map_remove(&ctx->resources, handle));
}

static uint32_t format_components(uint32_t format)
{
	switch (format) {
	case VIRGL_FORMAT_R32G32_FLOAT:
		return 2;
	case VIRGL_FORMAT_R32G32B32_FLOAT:
	case VIRGL_FORMAT_R32G32B32A32_FLOAT:
		return 3; /* w is not needed for the box */
	default:
		return 0;
	}
}

/* How positions lie in buffer @handle, per attribute 0 of the bound vertex elements. */
static void position_layout(const struct pc_sub *s, uint32_t handle, struct pos_layout *l)
{
	const struct pc_object *ve = s->ve ? predict_map_get(&s->objects, s->ve) : NULL;

	l->base = 0;
	l->stride = 3 * sizeof(float);
	l->ncomp = 3;
	if (!ve || ve->type != PREDICT_VIRGL_OBJECT_VERTEX_ELEMENTS || !ve->u.ve.count)
		return;
	if (!format_components(ve->u.ve.format0) || ve->u.ve.vb0 >= s->nr_vb ||
	    s->vb[ve->u.ve.vb0].handle != handle)
		return;
	l->ncomp = format_components(ve->u.ve.format0);
	l->base = (uint64_t)s->vb[ve->u.ve.vb0].offset + ve->u.ve.offset0;
	l->stride = s->vb[ve->u.ve.vb0].stride;
	if (!l->stride)
		l->stride = (ve->u.ve.format0 == VIRGL_FORMAT_R32G32B32A32_FLOAT ? 4 : l->ncomp) *
			    sizeof(float);
}

static void bbox_add(struct pc_resource *r, const float p[3])
{
	for (int k = 0; k < 3; k++) {
		if (!r->has_bbox || p[k] < r->bmin[k])
			r->bmin[k] = p[k];
		if (!r->has_bbox || p[k] > r->bmax[k])
			r->bmax[k] = p[k];
	}
	r->has_bbox = true;
}

/* Grows @r's box by the positions, laid out as @l, in @len bytes @data at @offset. */
static void bbox_read(struct pc_resource *r, const struct pos_layout *lp, uint64_t offset,
		      const uint8_t *data, size_t len)
{
	struct pos_layout l = *lp;
	uint64_t end = offset + len, psize, first, last, n, step;

	psize = (uint64_t)l.ncomp * sizeof(float);
	/* Vertices i with base + i stride in [offset, end - psize]. */
	if (end < psize || end - psize < l.base)
		return;
	first = offset <= l.base ? 0 : (offset - l.base + l.stride - 1) / (l.stride ? l.stride : 1);
	if (!l.stride) {
		if (l.base < offset)
			return;
		last = 0;
	} else {
		last = (end - psize - l.base) / l.stride;
	}
	if (first > last)
		return;
	n = last - first + 1;
	step = n > PREDICT_CTX_BBOX_VERTICES_MAX
		   ? (n + PREDICT_CTX_BBOX_VERTICES_MAX - 1) / PREDICT_CTX_BBOX_VERTICES_MAX
		   : 1;
	for (uint64_t i = first; i <= last; i += step) {
		uint64_t at = l.base + i * l.stride - offset;
		float p[3] = {0, 0, 0};
		bool ok = true;

		memcpy(p, data + at, psize);
		for (uint32_t k = 0; k < l.ncomp; k++)
			ok = ok && finite_f(p[k]);
		if (ok)
			bbox_add(r, p);
		if (last - i < step)
			break;
	}
}

static bool same_layout(const struct pos_layout *a, const struct pos_layout *b)
{
	return a->base == b->base && a->stride == b->stride && a->ncomp == b->ncomp;
}

static void resource_write(struct predict_ctx *ctx, uint32_t handle, uint64_t offset,
			   const uint8_t *data, size_t len)
{
	struct pc_resource *r = predict_map_get(&ctx->resources, handle);

	if (!r || r->desc.target != PIPE_BUFFER || !data || !len)
		return;
	if (offset > UINT64_MAX - len)
		return;
	if (r->data && offset < r->desc.width) {
		size_t n = len < r->desc.width - offset ? len : r->desc.width - offset;

		memcpy(r->data + offset, data, n);
		/* A write from byte 0 starts the data anew, as it starts the box. */
		if (offset == 0)
			r->data_len = (uint32_t)n;
		else if (offset <= r->data_len && offset + n > r->data_len)
			r->data_len = (uint32_t)(offset + n);
	}
	position_layout(ctx->cur, handle, &r->layout);
	if (offset == 0)
		r->has_bbox = false;
	bbox_read(r, &r->layout, offset, data, len);
}

void predict_ctx_resource_write(struct predict_ctx *ctx, uint32_t handle, uint64_t offset,
				const void *data, size_t len)
{
	resource_write(ctx, handle, offset, data, len);
}

/* ---- objects ---- */

static struct pc_object *object_get(const struct pc_sub *s, uint32_t handle, uint32_t type)
{
	struct pc_object *o = predict_map_get(&s->objects, handle);

	return o && o->type == type ? o : NULL;
}

static void object_destroy(struct predict_ctx *ctx, uint32_t handle)
{
	struct pc_object *o = predict_map_remove(&ctx->cur->objects, handle);

	if (o) {
		ctx->nobjects--;
		free(o);
	}
}

/* A new object of @type under @handle (replacing one there), or NULL when the map is full. */
static struct pc_object *object_new(struct predict_ctx *ctx, uint32_t handle, uint32_t type)
{
	struct pc_object *o;

	object_destroy(ctx, handle);
	if (ctx->nobjects >= PREDICT_CTX_MAX_OBJECTS)
		return NULL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	if (predict_map_add(&ctx->cur->objects, handle, o)) {
		free(o);
		return NULL;
	}
	ctx->nobjects++;
	o->type = type;
	return o;
}

static void stats_add(struct predict_tgsi_stats *a, const struct predict_tgsi_stats *b)
{
	a->alu += b->alu;
	a->tex += b->tex;
	a->flow += b->flow;
	a->decl += b->decl;
	a->imm += b->imm;
	a->props += b->props;
	a->loops += b->loops;
	a->tokens += b->tokens;
	a->has_loop = a->has_loop || b->has_loop;
	a->unbounded_loop = a->unbounded_loop || b->unbounded_loop;
	a->viewport_index = a->viewport_index || b->viewport_index;
	/* A continuation is not parsed with the declarations: only a shader sent
	 * whole counts as clip-space (such shaders are a few lines long). */
	a->clip_space = false;
}

/*
 * A shader arrives in one CREATE_OBJECT, or (long shaders) in a first part
 * whose offset field holds the total length followed by continuations
 * whose offset field holds VIRGL_OBJ_SHADER_OFFSET_CONT | byte offset. Each
 * part is parsed on its own and the histograms summed, so nothing is
 * buffered; a line split between two parts may count as two.
 */
static void create_shader(struct predict_ctx *ctx, const struct predict_dcmd *c,
			  struct predict_features *f)
{
	struct predict_tgsi_stats st;
	struct pc_object *o;

	predict_tgsi_parse(c->u.shader.text, c->u.shader.text_len, &st);
	if (c->u.shader.continuation) {
		o = object_get(ctx->cur, c->u.shader.handle, PREDICT_VIRGL_OBJECT_SHADER);
		if (!o || o->u.shader.received != c->u.shader.offlen ||
		    o->u.shader.received >= o->u.shader.total)
			return; /* the renderer rejects it too */
		stats_add(&o->u.shader.st, &st);
		o->u.shader.received += (uint32_t)c->u.shader.text_len;
	} else {
		o = object_new(ctx, c->u.shader.handle, PREDICT_VIRGL_OBJECT_SHADER);
		if (!o)
			return;
		o->u.shader.type = c->u.shader.type;
		o->u.shader.st = st;
		o->u.shader.total = c->u.shader.offlen;
		o->u.shader.received = (uint32_t)c->u.shader.text_len;
	}
	add_feature(f, PF_SHADER_TOKENS, st.tokens);
}

static void create_object(struct predict_ctx *ctx, const struct predict_dcmd *c,
			  struct predict_features *f)
{
	struct pc_object *o;

	switch (c->obj) {
	case PREDICT_VIRGL_OBJECT_SHADER:
		create_shader(ctx, c, f);
		return;
	case PREDICT_VIRGL_OBJECT_SURFACE:
	case PREDICT_VIRGL_OBJECT_MSAA_SURFACE:
		o = object_new(ctx, c->u.surface.handle, PREDICT_VIRGL_OBJECT_SURFACE);
		if (o) {
			o->u.surface.res = c->u.surface.res_handle;
			o->u.surface.level = c->u.surface.level_or_first;
			o->u.surface.samples = c->u.surface.nr_samples;
		}
		return;
	case PREDICT_VIRGL_OBJECT_VERTEX_ELEMENTS:
		o = object_new(ctx, c->u.vertex_elements.handle, c->obj);
		if (o) {
			o->u.ve.count = c->u.vertex_elements.count;
			if (o->u.ve.count) {
				o->u.ve.offset0 = c->u.vertex_elements.elems[0];
				o->u.ve.vb0 = c->u.vertex_elements.elems[2];
				o->u.ve.format0 = c->u.vertex_elements.elems[3];
			}
		}
		return;
	case PREDICT_VIRGL_OBJECT_RASTERIZER:
		o = object_new(ctx, c->u.object.handle, c->obj);
		if (o) {
			/* VIRGL_OBJ_RS_S0 (the decoder checked the length). */
			uint32_t s0 = c->payload[1];

			o->u.rs.discard = (s0 >> VIRGL_OBJ_RS_S0_RASTERIZER_DISCARD_SHIFT) & 1;
			o->u.rs.cull_all = ((s0 >> VIRGL_OBJ_RS_S0_CULL_FACE_SHIFT) & 3) ==
					   PIPE_FACE_FRONT_AND_BACK;
			memcpy(o->u.rs.payload, c->payload, sizeof(o->u.rs.payload));
		}
		return;
	default:
		/* Sampler views, queries, blend/dsa state: tracked by handle only. */
		object_new(ctx, c->u.object.handle, c->obj);
		return;
	}
}

/* ---- sub-contexts ---- */

static struct pc_sub **sub_slot(struct predict_ctx *ctx, uint32_t id)
{
	for (uint32_t i = 0; i < PREDICT_CTX_MAX_SUB_CTX; i++)
		if (ctx->subs[i] && ctx->subs[i]->id == id)
			return &ctx->subs[i];
	return NULL;
}

/*
 * Applies a sub-context command. Returns true when it changed which
 * sub-contexts exist or which one is current (Mesa starts every command
 * buffer by setting the current one again, which changes nothing).
 */
static bool sub_ctx_cmd(struct predict_ctx *ctx, const struct predict_dcmd *c)
{
	uint32_t id = c->u.object.handle;
	struct pc_sub **slot = sub_slot(ctx, id);

	switch (c->cmd) {
	case PREDICT_VIRGL_CREATE_SUB_CTX:
		if (slot)
			return true;
		for (uint32_t i = 0; i < PREDICT_CTX_MAX_SUB_CTX; i++) {
			if (!ctx->subs[i]) {
				ctx->subs[i] = sub_create(id);
				return true;
			}
		}
		return true;
	case PREDICT_VIRGL_SET_SUB_CTX:
		if (slot && *slot == ctx->cur)
			return false;
		if (slot)
			ctx->cur = *slot;
		return true;
	case PREDICT_VIRGL_DESTROY_SUB_CTX:
		/* Sub-context 0 stays, as in virglrenderer; destroying the current one
		 * makes 0 current. */
		if (!slot || id == 0)
			return true;
		if (ctx->cur == *slot)
			ctx->cur = ctx->subs[0];
		sub_destroy(ctx, *slot);
		*slot = NULL;
		return true;
	default:
		return false;
	}
}

/* ---- framebuffer geometry ---- */

struct rect {
	double x0, y0, x1, y1;
};

/* Size of the resource behind surface @handle, at the surface's level; false if unknown. */
static bool surface_size(struct predict_ctx *ctx, uint32_t handle, double *w, double *h,
			 uint32_t *samples)
{
	const struct pc_object *s = object_get(ctx->cur, handle, PREDICT_VIRGL_OBJECT_SURFACE);
	const struct pc_resource *r;
	uint32_t level;

	if (!handle || !s)
		return false;
	r = predict_map_get(&ctx->resources, s->u.surface.res);
	if (!r)
		return false;
	level = s->u.surface.level < 31 ? s->u.surface.level : 31;
	*w = (double)(r->desc.width >> level ? r->desc.width >> level : 1);
	*h = (double)(r->desc.height >> level ? r->desc.height >> level : 1);
	*samples =
	    s->u.surface.samples > r->desc.nr_samples ? s->u.surface.samples : r->desc.nr_samples;
	return true;
}

/* The framebuffer's size (cbuf 0, else zsurf, else the no-attachment size). */
static bool framebuffer_size(struct predict_ctx *ctx, double *w, double *h, uint32_t *samples)
{
	struct pc_sub *s = ctx->cur;

	*samples = 0;
	if (s->nr_cbufs && surface_size(ctx, s->cbuf0, w, h, samples))
		return true;
	if (surface_size(ctx, s->zsurf, w, h, samples))
		return true;
	if (s->noattach_w && s->noattach_h) {
		*w = s->noattach_w;
		*h = s->noattach_h;
		*samples = s->noattach_samples;
		return true;
	}
	return false;
}

/* The area draws can touch: viewport 0 clipped to the framebuffer; false if neither is known. */
static bool draw_rect(struct predict_ctx *ctx, struct rect *r, uint32_t *samples)
{
	struct pc_sub *s = ctx->cur;
	double fw, fh;
	bool has_fb = framebuffer_size(ctx, &fw, &fh, samples);

	if (s->has_viewport) {
		double sx = absd(s->vp_scale[0]), sy = absd(s->vp_scale[1]);

		r->x0 = s->vp_translate[0] - sx;
		r->x1 = s->vp_translate[0] + sx;
		r->y0 = s->vp_translate[1] - sy;
		r->y1 = s->vp_translate[1] + sy;
		if (has_fb) {
			r->x0 = r->x0 < 0 ? 0 : r->x0;
			r->y0 = r->y0 < 0 ? 0 : r->y0;
			r->x1 = r->x1 > fw ? fw : r->x1;
			r->y1 = r->y1 > fh ? fh : r->y1;
		}
		if (r->x1 < r->x0)
			r->x1 = r->x0;
		if (r->y1 < r->y0)
			r->y1 = r->y0;
		return true;
	}
	if (has_fb) {
		*r = (struct rect){0, 0, fw, fh};
		return true;
	}
	return false;
}

static double rect_area(const struct rect *r)
{
	return (r->x1 - r->x0) * (r->y1 - r->y0);
}

/* ---- bounding-box projection (Schnitzer et al. §IV-E) ---- */

struct pt {
	double x, y;
};

static double cross(struct pt o, struct pt a, struct pt b)
{
	return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

static int pt_cmp(const void *a, const void *b)
{
	const struct pt *p = a, *q = b;

	if (p->x != q->x)
		return p->x < q->x ? -1 : 1;
	if (p->y != q->y)
		return p->y < q->y ? -1 : 1;
	return 0;
}

/* Convex hull of @n points (n <= 20) into @hull (counter-clockwise); returns its size. */
static int convex_hull(struct pt *p, int n, struct pt *hull)
{
	int k = 0;

	qsort(p, (size_t)n, sizeof(*p), pt_cmp);
	for (int i = 0; i < n; i++) {
		while (k >= 2 && cross(hull[k - 2], hull[k - 1], p[i]) <= 0)
			k--;
		hull[k++] = p[i];
	}
	for (int i = n - 2, t = k + 1; i >= 0; i--) {
		while (k >= t && cross(hull[k - 2], hull[k - 1], p[i]) <= 0)
			k--;
		hull[k++] = p[i];
	}
	return k > 1 ? k - 1 : k;
}

/* Clips polygon @in (n points) by the half-plane where side(p) >= 0; returns the new count. */
static int clip_edge(const struct pt *in, int n, struct pt *out, int axis, double bound,
		     int keep_ge)
{
	int m = 0;

	for (int i = 0; i < n; i++) {
		struct pt a = in[i], b = in[(i + 1) % n];
		double va = axis ? a.y : a.x, vb = axis ? b.y : b.x;
		bool ina = keep_ge ? va >= bound : va <= bound;
		bool inb = keep_ge ? vb >= bound : vb <= bound;

		if (ina)
			out[m++] = a;
		if (ina != inb) {
			double t = (bound - va) / (vb - va);
			struct pt q = {a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)};

			if (axis)
				q.y = bound;
			else
				q.x = bound;
			out[m++] = q;
		}
	}
	return m;
}

static double polygon_area(const struct pt *p, int n)
{
	double a = 0;

	for (int i = 0; i < n; i++)
		a += p[i].x * p[(i + 1) % n].y - p[(i + 1) % n].x * p[i].y;
	return absd(a) / 2;
}

struct viewport {
	double sx, sy, tx, ty;
};

static struct pt to_window(const double c[4], const struct viewport *vp)
{
	struct pt p = {c[0] / c[3] * vp->sx + vp->tx, c[1] / c[3] * vp->sy + vp->ty};

	return p;
}

/*
 * Pixels covered by the box [bmin, bmax] transformed by the column-major
 * @m, seen through @vp and clipped to @clip: the convex hull of the
 * corners in front of the eye and of the points where the box's edges
 * cross the near plane (w = PREDICT_CTX_NEAR_W).
 */
static double project_box(const float m[16], const float bmin[3], const float bmax[3],
			  const struct viewport *vp, const struct rect *clip)
{
	double corner[8][4];
	struct pt pts[20], hull[48], tmp[48];
	int n = 0, k;

	for (int i = 0; i < 8; i++) {
		double v[4] = {i & 1 ? bmax[0] : bmin[0], i & 2 ? bmax[1] : bmin[1],
			       i & 4 ? bmax[2] : bmin[2], 1.0};

		for (int r = 0; r < 4; r++)
			corner[i][r] = m[r] * v[0] + m[4 + r] * v[1] + m[8 + r] * v[2] + m[12 + r];
		if (corner[i][3] > PREDICT_CTX_NEAR_W)
			pts[n++] = to_window(corner[i], vp);
	}
	/* The 12 edges: corners that differ in one bit. */
	for (int i = 0; i < 8; i++) {
		for (int bit = 1; bit < 8; bit <<= 1) {
			int j = i | bit;
			double wi = corner[i][3] - PREDICT_CTX_NEAR_W, wj, t, q[4];

			if (j == i)
				continue;
			wj = corner[j][3] - PREDICT_CTX_NEAR_W;
			if ((wi > 0) == (wj > 0))
				continue;
			t = wi / (wi - wj);
			for (int r = 0; r < 4; r++)
				q[r] = corner[i][r] + t * (corner[j][r] - corner[i][r]);
			q[3] = PREDICT_CTX_NEAR_W;
			pts[n++] = to_window(q, vp);
		}
	}
	for (int i = 0; i < n; i++)
		if (!finite_f(pts[i].x) || !finite_f(pts[i].y))
			return 0;
	if (n < 3)
		return 0;
	k = convex_hull(pts, n, hull);
	k = clip_edge(hull, k, tmp, 0, clip->x0, 1);
	k = clip_edge(tmp, k, hull, 0, clip->x1, 0);
	k = clip_edge(hull, k, tmp, 1, clip->y0, 1);
	k = clip_edge(tmp, k, hull, 1, clip->y1, 0);
	return k >= 3 ? polygon_area(hull, k) : 0;
}

/* The MVP of the bound vertex shader, if constant buffer 0 holds a usable one. */
static bool find_mvp(const struct pc_sub *s, float m[16])
{
	bool nonzero = false;

	if (s->vs_const_n < 16)
		return false;
	for (int i = 0; i < 16; i++) {
		m[i] = s->vs_const[i];
		if (!finite_f(m[i]))
			return false;
		nonzero = nonzero || m[i] != 0;
	}
	return nonzero;
}

/* The bounding box of the buffer attribute 0 reads, if one is known. */
static const struct pc_resource *position_buffer(struct predict_ctx *ctx)
{
	const struct pc_sub *s = ctx->cur;
	const struct pc_object *ve =
	    object_get(ctx->cur, s->ve, PREDICT_VIRGL_OBJECT_VERTEX_ELEMENTS);
	struct pc_resource *r;
	uint32_t vb = 0;

	if (ve && ve->u.ve.count)
		vb = ve->u.ve.vb0;
	if (vb >= s->nr_vb || !s->vb[vb].handle)
		return NULL;
	r = predict_map_get(&ctx->resources, s->vb[vb].handle);
	if (r && r->data && r->data_len) {
		struct pos_layout l;

		position_layout(s, s->vb[vb].handle, &l);
		if (!same_layout(&l, &r->layout)) {
			r->layout = l;
			r->has_bbox = false;
			bbox_read(r, &l, 0, r->data, r->data_len);
		}
	}
	return r && r->has_bbox ? r : NULL;
}

/* Fragments per vertex of the recent measured groups, or -1 when none was measured. */
static double history_ratio(const struct predict_ctx *ctx)
{
	double fsum = 0, vsum = 0;

	for (uint32_t i = 0; i < ctx->hist_n; i++) {
		fsum += ctx->hist_frag[i];
		vsum += ctx->hist_vert[i];
	}
	return vsum > 0 ? fsum / vsum : -1;
}

/*
 * The matrix that takes the bound position data to clip coordinates: the
 * identity when the vertex shader passes its input 0 through (*@clip_space
 * is then true; its constants, if any are bound, belong to an earlier
 * shader), else the MVP found in its constant buffer 0.
 */
static bool position_transform(const struct pc_sub *s, float m[16], bool *clip_space)
{
	const struct pc_object *vs = object_get(s, s->vs, PREDICT_VIRGL_OBJECT_SHADER);

	*clip_space = vs && vs->u.shader.st.clip_space;
	if (*clip_space) {
		for (int i = 0; i < 16; i++)
			m[i] = i % 5 == 0 ? 1.0f : 0.0f;
		return true;
	}
	return find_mvp(s, m);
}

/*
 * Fragments of @vertices vertices inside the projected bounding box, or -1
 * when unknown. A clip-space quad (PREDICT_CTX_QUAD_VERTICES) covers its
 * box: neither the assumed coverage nor the learned one applies to it.
 */
static double bbox_fragments(struct predict_ctx *ctx, double vertices, const struct rect *clip,
			     bool has_rect)
{
	const struct pc_sub *s = ctx->cur;
	const struct pc_resource *r = position_buffer(ctx);
	bool clip_space;
	double area;
	float m[16];

	if (!has_rect || !s->has_viewport || !r || !position_transform(s, m, &clip_space))
		return -1;
	struct viewport vp = {s->vp_scale[0], s->vp_scale[1], s->vp_translate[0],
			      s->vp_translate[1]};
	area = project_box(m, r->bmin, r->bmax, &vp, clip);
	if (clip_space && vertices <= PREDICT_CTX_QUAD_VERTICES)
		return area;
	return area * PREDICT_CTX_COVERAGE * exp(-ctx->bbox_bias);
}

/* The estimator a draw both can estimate uses (ties and no scores yet: the box). */
static enum predict_fragment_mode preferred_estimator(const struct predict_ctx *ctx)
{
	if (ctx->mode != PREDICT_FRAGMENTS_AUTO)
		return ctx->mode;
	if (ctx->err_hist >= 0 && (ctx->err_bbox < 0 || ctx->err_hist < ctx->err_bbox))
		return PREDICT_FRAGMENTS_HISTORY;
	return PREDICT_FRAGMENTS_BBOX;
}

/*
 * Fragments of a draw of @vertices vertices with @samples samples each:
 * both estimates are recorded in f->frag; the one returned is the
 * preferred estimator's where both exist, else whichever exists, else half
 * the clip rectangle.
 */
static double draw_fragments(struct predict_ctx *ctx, double vertices, double samples,
			     const struct rect *clip, bool has_rect, struct predict_features *f)
{
	double ratio = history_ratio(ctx);
	double hist = ratio >= 0 ? clamp_feature(ratio * vertices) : -1;
	double box = bbox_fragments(ctx, vertices, clip, has_rect);
	struct predict_fragment_estimates *e = &f->frag;

	if (!has_rect)
		return 0; /* nothing to rasterize into */
	if (box >= 0)
		box = clamp_feature(box * samples);
	e->draws++;
	e->vertices = clamp_feature(e->vertices + vertices);
	if (box >= 0) {
		e->bbox_draws++;
		e->bbox = clamp_feature(e->bbox + box);
	}
	if (hist >= 0) {
		e->history_draws++;
		e->history = clamp_feature(e->history + hist);
	}
	if (box < 0)
		f->flags |= PFF_NO_MVP;
	if (box >= 0 && hist >= 0)
		return preferred_estimator(ctx) == PREDICT_FRAGMENTS_HISTORY ? hist : box;
	if (box >= 0)
		return box;
	if (hist >= 0)
		return hist;
	return clamp_feature(rect_area(clip) / 2 * samples);
}

/* False when the bound rasterizer state lets nothing of a draw of @mode reach the fragments. */
static bool rasterizes(struct predict_ctx *ctx, uint32_t mode)
{
	const struct pc_object *rs =
	    object_get(ctx->cur, ctx->cur->rs, PREDICT_VIRGL_OBJECT_RASTERIZER);

	if (!rs)
		return true;
	bool triangles = (mode >= PIPE_PRIM_TRIANGLES && mode <= PIPE_PRIM_POLYGON) ||
			 mode == PIPE_PRIM_TRIANGLES_ADJ || mode == PIPE_PRIM_TRIANGLE_STRIP_ADJ;

	return !rs->u.rs.discard && !(rs->u.rs.cull_all && triangles);
}

static void draw(struct predict_ctx *ctx, const struct predict_dcmd *c, struct predict_features *f)
{
	const struct pc_sub *s = ctx->cur;
	const struct pc_object *vs = object_get(ctx->cur, s->vs, PREDICT_VIRGL_OBJECT_SHADER);
	const struct pc_object *fs = object_get(ctx->cur, s->fs, PREDICT_VIRGL_OBJECT_SHADER);
	double inst = c->u.draw.instance_count ? c->u.draw.instance_count : 1;
	double vertices = (double)c->u.draw.count * inst, frags;
	uint32_t samples = 0;
	struct rect clip;
	bool has_rect = draw_rect(ctx, &clip, &samples) && rasterizes(ctx, c->u.draw.mode);

	add_feature(f, PF_DRAWS, 1);
	add_feature(f, PF_VERTICES, vertices);
	if (vs) {
		add_feature(f, PF_VS_WORK,
			    clamp_feature(vertices) *
				(double)(vs->u.shader.st.alu + vs->u.shader.st.tex));
		if (vs->u.shader.st.unbounded_loop)
			f->flags |= PFF_UNBOUNDED_LOOP;
	}
	frags = draw_fragments(ctx, vertices, samples > 1 ? samples : 1, &clip, has_rect, f);
	add_feature(f, PF_FRAGMENTS, frags);
	if (fs) {
		add_feature(f, PF_FS_ALU_WORK, frags * fs->u.shader.st.alu);
		add_feature(f, PF_FS_TEX_WORK, frags * fs->u.shader.st.tex);
		if (fs->u.shader.st.unbounded_loop)
			f->flags |= PFF_UNBOUNDED_LOOP;
	}
}

static void clear(struct predict_ctx *ctx, uint32_t buffers, struct predict_features *f)
{
	static const enum predict_feature by_mask[8] = {
	    [1] = PF_CLEAR_C,  [2] = PF_CLEAR_D,  [3] = PF_CLEAR_CD,  [4] = PF_CLEAR_S,
	    [5] = PF_CLEAR_CS, [6] = PF_CLEAR_DS, [7] = PF_CLEAR_CDS,
	};
	unsigned idx = (buffers & PIPE_CLEAR_COLOR ? 1u : 0u) |
		       (buffers & PIPE_CLEAR_DEPTH ? 2u : 0u) |
		       (buffers & PIPE_CLEAR_STENCIL ? 4u : 0u);
	uint32_t samples;
	double w, h;

	idx &= ~ctx->cleared;
	ctx->cleared |= idx;
	if (!idx || !framebuffer_size(ctx, &w, &h, &samples))
		return;
	add_feature(f, by_mask[idx], w * h);
}

static double box_pixels(const struct predict_box *b)
{
	double w = absd((double)b->w), h = absd((double)b->h), d = absd((double)b->d);

	return w * (h ? h : 1) * (d ? d : 1);
}

static void set_framebuffer(struct pc_sub *s, const struct predict_dcmd *c)
{
	s->nr_cbufs = c->u.framebuffer.nr_cbufs;
	s->cbuf0 = s->nr_cbufs ? c->u.framebuffer.cbufs[0] : 0;
	s->zsurf = c->u.framebuffer.zsurf;
	s->noattach_w = s->noattach_h = s->noattach_samples = 0;
}

static void set_vertex_buffers(struct pc_sub *s, const struct predict_dcmd *c)
{
	s->nr_vb = c->u.vertex_buffers.count;
	for (uint32_t i = 0; i < s->nr_vb; i++) {
		s->vb[i].stride = c->u.vertex_buffers.vb[3 * i];
		s->vb[i].offset = c->u.vertex_buffers.vb[3 * i + 1];
		s->vb[i].handle = c->u.vertex_buffers.vb[3 * i + 2];
	}
}

static void set_constants(struct pc_sub *s, const struct predict_dcmd *c)
{
	if (c->u.constant_buffer.shader_type != PREDICT_PIPE_SHADER_VERTEX ||
	    c->u.constant_buffer.index != 0)
		return;
	s->vs_const_n = c->u.constant_buffer.count < 16 ? c->u.constant_buffer.count : 16;
	for (uint32_t i = 0; i < s->vs_const_n; i++)
		s->vs_const[i] = predict_decode_f32(c->u.constant_buffer.data[i]);
}

static void transfer3d(struct predict_ctx *ctx, const struct predict_dcmd *c,
		       struct predict_features *f)
{
	const struct pc_resource *r = predict_map_get(&ctx->resources, c->u.transfer.handle);
	double bytes = box_pixels(&c->u.transfer.box);

	/* A buffer's box is in bytes; a texture's in texels. */
	if (!r || r->desc.target != PIPE_BUFFER)
		bytes *= PREDICT_CTX_TEXEL_BYTES;
	add_feature(f, PF_TRANSFER_BYTES, bytes);
}

/*
 * Data of a buffer upload that the stream names but does not carry: @len
 * bytes at @src_offset of resource @src's memory (see
 * predict_ctx_set_resource_data()) were written to buffer @dst at @box.
 */
static void upload_from_memory(struct predict_ctx *ctx, uint32_t dst, const struct predict_box *b,
			       uint32_t src, uint32_t src_offset)
{
	const uint8_t *mem;
	size_t size = 0;

	if (!ctx->resource_data || b->x < 0 || b->w <= 0)
		return;
	mem = ctx->resource_data(ctx->resource_data_arg, src, &size);
	if (!mem || src_offset > size || (size_t)b->w > size - src_offset)
		return;
	resource_write(ctx, dst, (uint64_t)b->x, mem + src_offset, (size_t)b->w);
}

/* Applies one decoded command to the state and adds its features. */
static void apply(struct predict_ctx *ctx, const struct predict_dcmd *c, struct predict_features *f)
{
	struct pc_sub *s = ctx->cur;

	predict_tile_state_apply(&s->tiles, c);

	/* Anything but another clear or plain state setting ends a run of
	 * clears (see struct predict_ctx's cleared). */
	switch (c->cmd) {
	case PREDICT_VIRGL_CLEAR:
	case PREDICT_VIRGL_CREATE_OBJECT:
	case PREDICT_VIRGL_BIND_OBJECT:
	case PREDICT_VIRGL_BIND_SHADER:
	case PREDICT_VIRGL_SET_VIEWPORT_STATE:
	case PREDICT_VIRGL_SET_VERTEX_BUFFERS:
	case PREDICT_VIRGL_SET_CONSTANT_BUFFER:
		break;
	default:
		ctx->cleared = 0;
		break;
	}
	switch (c->cmd) {
	case PREDICT_VIRGL_CREATE_OBJECT:
		create_object(ctx, c, f);
		break;
	case PREDICT_VIRGL_DESTROY_OBJECT:
		object_destroy(ctx, c->u.object.handle);
		break;
	case PREDICT_VIRGL_BIND_OBJECT:
		if (c->obj == PREDICT_VIRGL_OBJECT_VERTEX_ELEMENTS)
			s->ve = c->u.object.handle;
		else if (c->obj == PREDICT_VIRGL_OBJECT_RASTERIZER)
			s->rs = c->u.object.handle;
		break;
	case PREDICT_VIRGL_BIND_SHADER:
		if (c->u.bind_shader.type == PREDICT_PIPE_SHADER_VERTEX)
			s->vs = c->u.bind_shader.handle;
		else if (c->u.bind_shader.type == PREDICT_PIPE_SHADER_FRAGMENT)
			s->fs = c->u.bind_shader.handle;
		break;
	case PREDICT_VIRGL_SET_FRAMEBUFFER_STATE:
		set_framebuffer(s, c);
		break;
	case PREDICT_VIRGL_SET_FRAMEBUFFER_STATE_NO_ATTACH:
		s->nr_cbufs = s->cbuf0 = s->zsurf = 0;
		s->noattach_w = c->u.framebuffer_no_attach.width;
		s->noattach_h = c->u.framebuffer_no_attach.height;
		s->noattach_samples = c->u.framebuffer_no_attach.samples;
		break;
	case PREDICT_VIRGL_SET_VIEWPORT_STATE:
		if (c->u.viewport.start_slot == 0 && c->u.viewport.count) {
			float v[4] = {predict_decode_f32(c->u.viewport.vp[0]),
				      predict_decode_f32(c->u.viewport.vp[1]),
				      predict_decode_f32(c->u.viewport.vp[3]),
				      predict_decode_f32(c->u.viewport.vp[4])};
			bool ok = true;

			for (int i = 0; i < 4; i++)
				ok = ok && finite_f(v[i]);
			s->has_viewport = ok;
			s->vp_scale[0] = v[0];
			s->vp_scale[1] = v[1];
			s->vp_translate[0] = v[2];
			s->vp_translate[1] = v[3];
		}
		break;
	case PREDICT_VIRGL_SET_VERTEX_BUFFERS:
		set_vertex_buffers(s, c);
		break;
	case PREDICT_VIRGL_SET_CONSTANT_BUFFER:
		set_constants(s, c);
		break;
	case PREDICT_VIRGL_SET_SUB_CTX:
	case PREDICT_VIRGL_CREATE_SUB_CTX:
	case PREDICT_VIRGL_DESTROY_SUB_CTX:
		if (sub_ctx_cmd(ctx, c))
			f->flags |= PFF_SUB_CTX;
		break;
	case PREDICT_VIRGL_BEGIN_QUERY:
	case PREDICT_VIRGL_END_QUERY:
	case PREDICT_VIRGL_GET_QUERY_RESULT:
	case PREDICT_VIRGL_GET_QUERY_RESULT_QBO:
		f->flags |= PFF_QUERY;
		break;
	case PREDICT_VIRGL_CLEAR:
		clear(ctx, c->u.clear.buffers, f);
		break;
	case PREDICT_VIRGL_DRAW_VBO:
		draw(ctx, c, f);
		break;
	case PREDICT_VIRGL_CLEAR_TEXTURE:
		add_feature(f, PF_CLEAR_TEX_PIXELS, box_pixels(&c->u.clear_texture.box));
		break;
	case PREDICT_VIRGL_BLIT:
		add_feature(f, PF_BLIT_PIXELS, box_pixels(&c->u.blit.dst));
		break;
	case PREDICT_VIRGL_RESOURCE_COPY_REGION:
		add_feature(f, PF_COPY_PIXELS, box_pixels(&c->u.copy_region.src));
		break;
	case PREDICT_VIRGL_RESOURCE_INLINE_WRITE:
		add_feature(f, PF_TRANSFER_BYTES, (double)c->u.transfer.data_len);
		if (c->u.transfer.box.x >= 0)
			resource_write(ctx, c->u.transfer.handle, (uint64_t)c->u.transfer.box.x,
				       c->u.transfer.data, c->u.transfer.data_len);
		break;
	case PREDICT_VIRGL_TRANSFER3D:
		/* Encoded transfers (vtest protocol 2, virtio-gpu): the data is
		 * in the resource's own memory at data_offset. */
		transfer3d(ctx, c, f);
		if (c->u.transfer.direction == PREDICT_TRANSFER_TO_HOST)
			upload_from_memory(ctx, c->u.transfer.handle, &c->u.transfer.box,
					   c->u.transfer.handle, c->u.transfer.data_offset);
		break;
	case PREDICT_VIRGL_COPY_TRANSFER3D:
		/* From a staging resource. */
		transfer3d(ctx, c, f);
		upload_from_memory(ctx, c->u.transfer.handle, &c->u.transfer.box,
				   c->u.transfer.src_handle, c->u.transfer.data_offset);
		break;
	default:
		break;
	}
}

/* FNV-1a, 64 bit. */
#define FNV_OFFSET 14695981039346656037ull
#define FNV_PRIME  1099511628211ull

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= FNV_PRIME;
	}
	return h;
}

/* ---- where a group could be cut ---- */

/* @v rounded down (@up: up) to a scissor coordinate (16 bits). */
static uint32_t scissor_coord(double v, bool up)
{
	double r = up ? ceil(v) : floor(v);

	if (!(r > 0))
		return 0;
	return r > 65535 ? 65535u : (uint32_t)r;
}

/* Whether the draw just applied may be cut into scissor tiles: PREDICT_TILEABLE and *@t filled, or
 * why not. */
static enum predict_untiled draw_tiling(struct predict_ctx *ctx, const struct predict_dcmd *c,
					struct predict_tiling *t)
{
	struct pc_sub *s = ctx->cur;
	const struct pc_object *rs = object_get(s, s->rs, PREDICT_VIRGL_OBJECT_RASTERIZER);
	const struct pc_object *vs = object_get(s, s->vs, PREDICT_VIRGL_OBJECT_SHADER);
	enum predict_untiled why = predict_tile_state_blocker(&s->tiles);
	uint32_t samples;
	struct rect r;

	if (why != PREDICT_TILEABLE)
		return why;
	if (!vs || vs->u.shader.st.viewport_index)
		return PREDICT_UNTILED_VIEWPORT;
	if (!rs)
		return PREDICT_UNTILED_NO_RS;
	if (!draw_rect(ctx, &r, &samples) || !rasterizes(ctx, c->u.draw.mode))
		return PREDICT_UNTILED_NOTHING;
	t->x0 = scissor_coord(r.x0, false);
	t->y0 = scissor_coord(r.y0, false);
	t->x1 = scissor_coord(r.x1, true);
	t->y1 = scissor_coord(r.y1, true);
	memcpy(t->rs, rs->u.rs.payload, sizeof(t->rs));
	memcpy(t->scissor, s->tiles.scissor, sizeof(t->scissor));
	if ((t->rs[1] >> VIRGL_OBJ_RS_S0_SCISSOR_SHIFT) & 1) {
		uint32_t sx0 = t->scissor[0] & 0xffff, sy0 = t->scissor[0] >> 16;
		uint32_t sx1 = t->scissor[1] & 0xffff, sy1 = t->scissor[1] >> 16;

		t->x0 = t->x0 > sx0 ? t->x0 : sx0;
		t->y0 = t->y0 > sy0 ? t->y0 : sy0;
		t->x1 = t->x1 < sx1 ? t->x1 : sx1;
		t->y1 = t->y1 < sy1 ? t->y1 : sy1;
	}
	if (t->x1 <= t->x0 || t->y1 <= t->y0)
		return PREDICT_UNTILED_NOTHING;
	return PREDICT_TILEABLE;
}

/*
 * Whether CLEAR_TEXTURE @c may be cut into bands of its box's rows: a box
 * not empty, in the texture's range of coordinates (a clear outside it is
 * the renderer's to refuse whole), with more than one band's worth of rows
 * (predict_tiling's @clear). *@t is filled when it may.
 */
static bool clear_bands(const struct predict_dcmd *c, struct predict_tiling *t)
{
	const struct predict_box *b = &c->u.clear_texture.box;

	/* Exactly VIRGL_CLEAR_TEXTURE_SIZE: the worker rewrites it whole (tile_cmds.h). */
	if (c->len != 12 || c->obj != 0)
		return false;
	if (b->x < 0 || b->y < 0 || b->z < 0 || b->w <= 0 || b->h <= 1 || b->d <= 0 ||
	    b->x > PREDICT_MAX_CLEAR_COORD - b->w || b->y > PREDICT_MAX_CLEAR_COORD - b->h)
		return false;
	memset(t, 0, sizeof(*t));
	t->clear = true;
	t->x0 = (uint32_t)b->x;
	t->x1 = (uint32_t)(b->x + b->w);
	t->y0 = (uint32_t)b->y;
	t->y1 = (uint32_t)(b->y + b->h);
	t->layers = (uint32_t)b->d;
	return true;
}

/* Tells the boundary hook about command @c, which has output and ends at @end_dw. */
static void report_boundary(struct predict_ctx *ctx, const struct predict_dcmd *c, size_t end_dw,
			    uint32_t commands, const struct predict_features *so_far)
{
	struct predict_boundary b = {
	    .start_dw = c->offset / sizeof(uint32_t),
	    .end_dw = end_dw,
	    .commands = commands,
	    .so_far = so_far,
	    .draw = c->cmd == PREDICT_VIRGL_DRAW_VBO,
	};

	if (b.draw) {
		b.untiled = draw_tiling(ctx, c, &b.tiling);
		b.tileable = b.untiled == PREDICT_TILEABLE;
	} else if (c->cmd == PREDICT_VIRGL_CLEAR_TEXTURE) {
		b.tileable = clear_bands(c, &b.tiling);
	}
	ctx->boundary(ctx->boundary_arg, &b);
}

int predict_ctx_submit(struct predict_ctx *ctx, const uint32_t *buf, size_t ndw,
		       struct predict_features *features, struct predict_cmd_counts *counts,
		       struct predict_decode_error *err)
{
	struct predict_decode d;
	struct predict_dcmd c;
	const char *why = NULL;
	uint32_t fb[2] = {0, 0}, samples;
	double w, h;
	int r;

	memset(features, 0, sizeof(*features));
	/* A group ends with a flush: the clears before it reached memory. */
	ctx->cleared = 0;
	if (counts)
		memset(counts, 0, sizeof(*counts));
	predict_decode_init(&d, buf, ndw);
	/* One walk of the buffer: state, features and command counts. */
	while ((r = predict_decode_next(&d, &c, &why)) > 0) {
		enum predict_cmd_class cls = predict_cmd_classify(c.cmd, c.obj);

		apply(ctx, &c, features);
		if (counts) {
			counts->n[cls]++;
			counts->total++;
		}
		if (ctx->boundary && predict_cmd_class_has_output(cls))
			report_boundary(ctx, &c, d.pos, d.index, features);
	}
	features->x[PF_GROUP] = 1;
	features->x[PF_CMDS] = d.index;
	if (framebuffer_size(ctx, &w, &h, &samples)) {
		fb[0] = (uint32_t)w;
		fb[1] = (uint32_t)h;
	}
	features->content_hash =
	    fnv1a(fnv1a(FNV_OFFSET, buf, buf ? ndw * sizeof(*buf) : 0), fb, sizeof(fb));
	if (r < 0) {
		if (err) {
			err->index = c.index;
			err->offset = c.offset;
			err->what = why;
		}
		return -EINVAL;
	}
	return 0;
}

void predict_ctx_set_boundary_hook(struct predict_ctx *ctx, predict_boundary_fn fn, void *data)
{
	ctx->boundary = fn;
	ctx->boundary_arg = data;
}

void predict_ctx_set_resource_data(struct predict_ctx *ctx, predict_resource_data_fn fn, void *data)
{
	ctx->resource_data = fn;
	ctx->resource_data_arg = data;
}

void predict_ctx_set_fragment_mode(struct predict_ctx *ctx, enum predict_fragment_mode mode)
{
	ctx->mode = mode == PREDICT_FRAGMENTS_HISTORY ? PREDICT_FRAGMENTS_HISTORY
		    : mode == PREDICT_FRAGMENTS_BBOX  ? PREDICT_FRAGMENTS_BBOX
						      : PREDICT_FRAGMENTS_AUTO;
}

/* Weight of the newest score in an estimator's recent error. */
#define PREDICT_CTX_ERROR_WEIGHT 0.2
/* Fragments added to both sides of a ratio so that tiny counts do not dominate. */
#define PREDICT_CTX_ERROR_FLOOR 64.0

/* Largest |bbox_bias|: a box covered a 150th or 150 times over. */
#define PREDICT_CTX_BIAS_MAX 5.0

/* Scores an estimate against the measured count; returns ln(estimate / measured). */
static double score(double *err, double estimate, double measured)
{
	double l = log((estimate + PREDICT_CTX_ERROR_FLOOR) / (measured + PREDICT_CTX_ERROR_FLOOR));

	*err = *err < 0 ? fabs(l) : *err + PREDICT_CTX_ERROR_WEIGHT * (fabs(l) - *err);
	return l;
}

void predict_ctx_observe_fragments(struct predict_ctx *ctx, double measured,
				   const struct predict_features *f)
{
	const struct predict_fragment_estimates *e = &f->frag;

	if (!finite_f(measured) || measured < 0 || !e->draws || !finite_f(e->vertices) ||
	    e->vertices <= 0 || !finite_f(e->bbox) || !finite_f(e->history))
		return;
	measured = clamp_feature(measured);
	ctx->frag_observed++;
	/* An estimator is scored only on groups where it estimated every draw. */
	if (e->bbox_draws == e->draws) {
		double l = score(&ctx->err_bbox, e->bbox, measured);

		ctx->bbox_bias += PREDICT_CTX_ERROR_WEIGHT * l;
		ctx->bbox_bias =
		    fmax(-PREDICT_CTX_BIAS_MAX, fmin(PREDICT_CTX_BIAS_MAX, ctx->bbox_bias));
	}
	if (e->history_draws == e->draws)
		score(&ctx->err_hist, e->history, measured);
	ctx->hist_frag[ctx->hist_next] = measured;
	ctx->hist_vert[ctx->hist_next] = e->vertices;
	ctx->hist_next = (ctx->hist_next + 1) % PREDICT_CTX_HISTORY;
	if (ctx->hist_n < PREDICT_CTX_HISTORY)
		ctx->hist_n++;
}

void predict_ctx_fragment_stats(const struct predict_ctx *ctx, struct predict_fragment_stats *out)
{
	out->observed = ctx->frag_observed;
	out->bbox_error = ctx->err_bbox;
	out->history_error = ctx->err_hist;
	out->preferred = preferred_estimator(ctx);
}

#define FRAGMENTS_MAGIC	  0x47415246u /* "FRAG" */
#define FRAGMENTS_VERSION 1u

int predict_ctx_save_fragments(const void *arg, uint8_t *buf, size_t size)
{
	const struct predict_ctx *ctx = arg;
	struct predict_wr w;

	predict_wr_begin(&w, buf, size, FRAGMENTS_MAGIC, FRAGMENTS_VERSION);
	predict_wr_f64(&w, ctx->err_bbox);
	predict_wr_f64(&w, ctx->err_hist);
	predict_wr_f64(&w, ctx->bbox_bias);
	predict_wr_u32(&w, ctx->hist_n);
	/* Oldest first. */
	for (uint32_t i = 0; i < ctx->hist_n; i++) {
		uint32_t k =
		    (ctx->hist_next + PREDICT_CTX_HISTORY - ctx->hist_n + i) % PREDICT_CTX_HISTORY;

		predict_wr_f64(&w, ctx->hist_frag[k]);
		predict_wr_f64(&w, ctx->hist_vert[k]);
	}
	return predict_wr_end(&w);
}

static bool valid_error(double e)
{
	return e == -1 || (e >= 0 && e < 1e6);
}

int predict_ctx_load_fragments(void *arg, const uint8_t *buf, size_t size)
{
	struct predict_ctx *ctx = arg;
	double frag[PREDICT_CTX_HISTORY], vert[PREDICT_CTX_HISTORY], eb, eh, bias;
	struct predict_rd r;
	uint32_t n;

	if (predict_rd_begin(&r, buf, size, FRAGMENTS_MAGIC, FRAGMENTS_VERSION))
		return -EINVAL;
	eb = predict_rd_f64(&r);
	eh = predict_rd_f64(&r);
	bias = predict_rd_f64(&r);
	n = predict_rd_u32(&r);
	if (!valid_error(eb) || !valid_error(eh) || !(fabs(bias) <= PREDICT_CTX_BIAS_MAX) ||
	    n > PREDICT_CTX_HISTORY)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		frag[i] = predict_rd_f64(&r);
		vert[i] = predict_rd_f64(&r);
		if (!(frag[i] >= 0 && frag[i] <= PREDICT_FEATURE_MAX && vert[i] > 0 &&
		      vert[i] <= PREDICT_FEATURE_MAX))
			return -EINVAL;
	}
	if (predict_rd_end(&r))
		return -EINVAL;
	ctx->err_bbox = eb;
	ctx->err_hist = eh;
	ctx->bbox_bias = bias;
	ctx->hist_n = n;
	ctx->hist_next = n % PREDICT_CTX_HISTORY;
	memcpy(ctx->hist_frag, frag, n * sizeof(double));
	memcpy(ctx->hist_vert, vert, n * sizeof(double));
	return 0;
}
