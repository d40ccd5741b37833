// SPDX-License-Identifier: MIT
/*
 * Typed decoder of a virgl command buffer (see predict_decode.h).
 *
 * Every operand is read through op(), which indexes the payload the way
 * virgl_protocol.h numbers operands (1 = first dword after the header).
 * Before any op() call the command's length has been checked against the
 * largest operand that command reads, so op() never runs past the payload
 * and the payload never runs past the buffer.
 */
#include <errno.h>
#include <string.h>

#include "predict_decode.h"

/* Minimum payload lengths (dwords) of virgl_protocol.h, as vrend_decode.c checks them. */
enum {
	MIN_CREATE_OBJECT = 1,	  /* handle */
	MIN_SHADER = 5,		  /* VIRGL_OBJ_SHADER_HDR_SIZE(0) */
	SHADER_SO_EXTRA = 4,	  /* VIRGL_OBJ_SHADER_HDR_SIZE(nso): + 2 nso + 4 */
	MIN_SURFACE = 5,	  /* VIRGL_OBJ_SURFACE_SIZE */
	MIN_MSAA_SURFACE = 6,	  /* VIRGL_OBJ_MSAA_SURFACE_SIZE */
	MIN_SAMPLER_VIEW = 6,	  /* VIRGL_OBJ_SAMPLER_VIEW_SIZE */
	MIN_BLEND = 11,		  /* VIRGL_OBJ_BLEND_SIZE */
	MIN_DSA = 5,		  /* VIRGL_OBJ_DSA_SIZE */
	MIN_RASTERIZER = 9,	  /* VIRGL_OBJ_RS_SIZE */
	MIN_SAMPLER_STATE = 9,	  /* VIRGL_OBJ_SAMPLER_STATE_SIZE */
	MIN_QUERY_OBJ = 4,	  /* VIRGL_OBJ_QUERY_SIZE */
	MIN_STREAMOUT = 4,	  /* VIRGL_OBJ_STREAMOUT_SIZE */
	VE_DWORDS = 4,		  /* VIRGL_OBJ_VERTEX_ELEMENTS_SIZE(n) = 4 n + 1 */
	MIN_HANDLE_ONLY = 1,	  /* bind/destroy object, begin/end query, sub ctx */
	MIN_BIND_SHADER = 2,	  /* VIRGL_BIND_SHADER_SIZE */
	MIN_FRAMEBUFFER = 2,	  /* VIRGL_SET_FRAMEBUFFER_STATE_SIZE(0) */
	MIN_FB_NO_ATTACH = 2,	  /* VIRGL_SET_FRAMEBUFFER_STATE_NO_ATTACH_SIZE */
	VIEWPORT_DWORDS = 6,	  /* VIRGL_SET_VIEWPORT_STATE_SIZE(n) = 6 n + 1 */
	SCISSOR_DWORDS = 2,	  /* VIRGL_SET_SCISSOR_STATE_SIZE(n) = 2 n + 1 */
	VB_DWORDS = 3,		  /* VIRGL_SET_VERTEX_BUFFERS_SIZE(n) = 3 n */
	MIN_INDEX_BUFFER = 1,	  /* VIRGL_SET_INDEX_BUFFER_SIZE(0) */
	FULL_INDEX_BUFFER = 3,	  /* VIRGL_SET_INDEX_BUFFER_SIZE(1) */
	MIN_CONSTANT_BUFFER = 2,  /* shader type, index */
	MIN_UNIFORM_BUFFER = 5,	  /* VIRGL_SET_UNIFORM_BUFFER_SIZE */
	MIN_SAMPLER_VIEWS = 2,	  /* VIRGL_SET_SAMPLER_VIEWS_SIZE(0) */
	MIN_CLEAR = 8,		  /* VIRGL_OBJ_CLEAR_SIZE */
	MIN_CLEAR_TEXTURE = 12,	  /* VIRGL_CLEAR_TEXTURE_SIZE */
	MIN_DRAW = 12,		  /* VIRGL_DRAW_VBO_SIZE */
	DRAW_INDIRECT = 20,	  /* VIRGL_DRAW_VBO_SIZE_INDIRECT */
	MIN_BLIT = 21,		  /* VIRGL_CMD_BLIT_SIZE */
	MIN_COPY_REGION = 13,	  /* VIRGL_CMD_RESOURCE_COPY_REGION_SIZE */
	MIN_INLINE_WRITE = 12,	  /* vrend_decode_resource_inline_write: length < 12 */
	INLINE_WRITE_DATA = 12,	  /* VIRGL_RESOURCE_IW_DATA_START */
	MIN_TRANSFER3D = 13,	  /* VIRGL_TRANSFER3D_SIZE */
	MIN_COPY_TRANSFER3D = 14, /* VIRGL_COPY_TRANSFER3D_SIZE */
	MIN_LAUNCH_GRID = 8,	  /* VIRGL_LAUNCH_GRID_SIZE */
};

void predict_decode_init(struct predict_decode *d, const uint32_t *buf, size_t ndw)
{
	d->buf = buf;
	d->ndw = buf ? ndw : 0;
	d->pos = 0;
	d->index = 0;
	d->failed = NULL;
}

size_t predict_decode_offset(const struct predict_decode *d)
{
	return d->pos * sizeof(uint32_t);
}

float predict_decode_f32(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

/* Operand @n (1-based, as in virgl_protocol.h) of @c; the caller checked c->len >= n. */
static uint32_t op(const struct predict_dcmd *c, uint32_t n)
{
	return c->payload[n - 1];
}

static struct predict_box box_at(const struct predict_dcmd *c, uint32_t n)
{
	struct predict_box b = {
	    .x = (int32_t)op(c, n),
	    .y = (int32_t)op(c, n + 1),
	    .z = (int32_t)op(c, n + 2),
	    .w = (int32_t)op(c, n + 3),
	    .h = (int32_t)op(c, n + 4),
	    .d = (int32_t)op(c, n + 5),
	};
	return b;
}

static const char *decode_shader(struct predict_dcmd *c)
{
	uint32_t text_first; /* operand number of the first text dword */
	uint32_t nso = 0;

	if (c->len < MIN_SHADER)
		return "shader object shorter than its header";
	c->u.shader.handle = op(c, 1);
	c->u.shader.type = op(c, 2);
	c->u.shader.offlen = op(c, 3) & PREDICT_VIRGL_SHADER_OFFSET_MASK;
	c->u.shader.continuation = (op(c, 3) & PREDICT_VIRGL_SHADER_OFFSET_CONT) != 0;
	c->u.shader.num_tokens = op(c, 4);
	if (c->u.shader.type >= PREDICT_PIPE_SHADER_TYPES)
		return "shader type out of range";
	/* For compute shaders operand 5 is the local memory size, not SO outputs. */
	if (c->u.shader.type != PREDICT_PIPE_SHADER_COMPUTE)
		nso = op(c, 5);
	if (nso > PREDICT_PIPE_MAX_SO_OUTPUTS)
		return "too many stream-output outputs";
	text_first = MIN_SHADER + 1;
	if (nso) {
		if (c->len < MIN_SHADER + SHADER_SO_EXTRA + 2 * nso)
			return "shader object shorter than its stream-output info";
		text_first += SHADER_SO_EXTRA + 2 * nso;
	}
	c->u.shader.num_so_outputs = nso;
	c->u.shader.text = (const char *)&c->payload[text_first - 1];
	c->u.shader.text_len = (size_t)(c->len - (text_first - 1)) * sizeof(uint32_t);
	return NULL;
}

static const char *decode_create(struct predict_dcmd *c)
{
	if (c->len < MIN_CREATE_OBJECT)
		return "create_object without a handle";
	if (op(c, 1) == 0)
		return "create_object with handle 0";
	if (op(c, 1) >= PREDICT_HOST_HANDLE_MIN)
		return "create_object with a handle reserved for the host";
	switch (c->obj) {
	case PREDICT_VIRGL_OBJECT_SHADER:
		return decode_shader(c);
	case PREDICT_VIRGL_OBJECT_SURFACE:
	case PREDICT_VIRGL_OBJECT_MSAA_SURFACE:
		if (c->len <
		    (c->obj == PREDICT_VIRGL_OBJECT_SURFACE ? MIN_SURFACE : MIN_MSAA_SURFACE))
			return "surface object too short";
		c->u.surface.handle = op(c, 1);
		c->u.surface.res_handle = op(c, 2);
		c->u.surface.format = op(c, 3);
		c->u.surface.level_or_first = op(c, 4);
		c->u.surface.layers_or_last = op(c, 5);
		c->u.surface.nr_samples =
		    c->obj == PREDICT_VIRGL_OBJECT_MSAA_SURFACE ? op(c, 6) : 0;
		return NULL;
	case PREDICT_VIRGL_OBJECT_SAMPLER_VIEW:
		if (c->len < MIN_SAMPLER_VIEW)
			return "sampler view object too short";
		c->u.sampler_view.handle = op(c, 1);
		c->u.sampler_view.res_handle = op(c, 2);
		c->u.sampler_view.format = op(c, 3);
		return NULL;
	case PREDICT_VIRGL_OBJECT_VERTEX_ELEMENTS:
		if ((c->len - 1) % VE_DWORDS)
			return "vertex elements length not 4 n + 1";
		if ((c->len - 1) / VE_DWORDS > PREDICT_PIPE_MAX_ATTRIBS)
			return "too many vertex elements";
		c->u.vertex_elements.handle = op(c, 1);
		c->u.vertex_elements.count = (c->len - 1) / VE_DWORDS;
		c->u.vertex_elements.elems = &c->payload[1];
		return NULL;
	case PREDICT_VIRGL_OBJECT_QUERY:
		if (c->len < MIN_QUERY_OBJ)
			return "query object too short";
		c->u.query.handle = op(c, 1);
		c->u.query.type = op(c, 2) & 0xffff;
		c->u.query.index = op(c, 2) >> 16;
		c->u.query.offset = op(c, 3);
		c->u.query.res_handle = op(c, 4);
		return NULL;
	case PREDICT_VIRGL_OBJECT_BLEND:
		if (c->len < MIN_BLEND)
			return "blend object too short";
		break;
	case PREDICT_VIRGL_OBJECT_DSA:
		if (c->len < MIN_DSA)
			return "depth-stencil-alpha object too short";
		break;
	case PREDICT_VIRGL_OBJECT_RASTERIZER:
		if (c->len < MIN_RASTERIZER)
			return "rasterizer object too short";
		break;
	case PREDICT_VIRGL_OBJECT_SAMPLER_STATE:
		if (c->len < MIN_SAMPLER_STATE)
			return "sampler state object too short";
		break;
	case PREDICT_VIRGL_OBJECT_STREAMOUT_TARGET:
		if (c->len < MIN_STREAMOUT)
			return "streamout target object too short";
		break;
	default:
		return "unknown object type";
	}
	c->u.object.handle = op(c, 1);
	return NULL;
}

static const char *decode_framebuffer(struct predict_dcmd *c)
{
	if (c->len < MIN_FRAMEBUFFER)
		return "framebuffer state too short";
	c->u.framebuffer.nr_cbufs = op(c, 1);
	c->u.framebuffer.zsurf = op(c, 2);
	if (c->u.framebuffer.nr_cbufs > PREDICT_PIPE_MAX_COLOR_BUFS)
		return "too many color buffers";
	if (c->len < MIN_FRAMEBUFFER + c->u.framebuffer.nr_cbufs)
		return "framebuffer state shorter than its color buffers";
	c->u.framebuffer.cbufs = &c->payload[2];
	return NULL;
}

static const char *decode_viewport(struct predict_dcmd *c)
{
	uint32_t n;

	if (c->len < 1 || (c->len - 1) % VIEWPORT_DWORDS)
		return "viewport state length not 6 n + 1";
	n = (c->len - 1) / VIEWPORT_DWORDS;
	c->u.viewport.start_slot = op(c, 1);
	c->u.viewport.count = n;
	c->u.viewport.vp = &c->payload[1];
	if (n > PREDICT_PIPE_MAX_VIEWPORTS ||
	    c->u.viewport.start_slot > PREDICT_PIPE_MAX_VIEWPORTS - n)
		return "viewport slots out of range";
	return NULL;
}

static const char *decode_scissor(struct predict_dcmd *c)
{
	uint32_t n;

	if (c->len < 1 || (c->len - 1) % SCISSOR_DWORDS)
		return "scissor state length not 2 n + 1";
	n = (c->len - 1) / SCISSOR_DWORDS;
	c->u.scissor.start_slot = op(c, 1);
	c->u.scissor.count = n;
	c->u.scissor.ss = &c->payload[1];
	if (n > PREDICT_PIPE_MAX_VIEWPORTS ||
	    c->u.scissor.start_slot > PREDICT_PIPE_MAX_VIEWPORTS - n)
		return "scissor slots out of range";
	return NULL;
}

static const char *decode_sampler_views(struct predict_dcmd *c)
{
	if (c->len < MIN_SAMPLER_VIEWS)
		return "sampler views too short";
	c->u.sampler_views.shader_type = op(c, 1);
	c->u.sampler_views.start_slot = op(c, 2);
	c->u.sampler_views.count = c->len - MIN_SAMPLER_VIEWS;
	c->u.sampler_views.handles = &c->payload[2];
	if (c->u.sampler_views.shader_type >= PREDICT_PIPE_SHADER_TYPES)
		return "shader type out of range";
	if (c->u.sampler_views.count > PREDICT_PIPE_MAX_SHADER_SAMPLER_VIEWS ||
	    c->u.sampler_views.start_slot >
		PREDICT_PIPE_MAX_SHADER_SAMPLER_VIEWS - c->u.sampler_views.count)
		return "sampler view slots out of range";
	return NULL;
}

static const char *decode_transfer_common(struct predict_dcmd *c)
{
	c->u.transfer.handle = op(c, 1);
	c->u.transfer.level = op(c, 2);
	c->u.transfer.usage = op(c, 3);
	c->u.transfer.stride = op(c, 4);
	c->u.transfer.layer_stride = op(c, 5);
	c->u.transfer.box = box_at(c, 6);
	return NULL;
}

static const char *decode_draw(struct predict_dcmd *c)
{
	if (c->len < MIN_DRAW)
		return "draw_vbo too short";
	c->u.draw.start = op(c, 1);
	c->u.draw.count = op(c, 2);
	c->u.draw.mode = op(c, 3);
	c->u.draw.indexed = op(c, 4);
	c->u.draw.instance_count = op(c, 5);
	c->u.draw.start_instance = op(c, 7);
	c->u.draw.min_index = op(c, 10);
	c->u.draw.max_index = op(c, 11);
	c->u.draw.count_from_so = op(c, 12);
	c->u.draw.indirect_handle = c->len >= DRAW_INDIRECT ? op(c, 15) : 0;
	return NULL;
}

static const char *decode_blit(struct predict_dcmd *c)
{
	if (c->len < MIN_BLIT)
		return "blit too short";
	c->u.blit.mask = op(c, 1) & 0xff;
	c->u.blit.dst_handle = op(c, 4);
	c->u.blit.dst_level = op(c, 5);
	c->u.blit.dst_format = op(c, 6);
	c->u.blit.dst = box_at(c, 7);
	c->u.blit.src_handle = op(c, 13);
	c->u.blit.src_level = op(c, 14);
	c->u.blit.src_format = op(c, 15);
	c->u.blit.src = box_at(c, 16);
	return NULL;
}

static const char *decode_copy_region(struct predict_dcmd *c)
{
	if (c->len < MIN_COPY_REGION)
		return "resource_copy_region too short";
	c->u.copy_region.dst_handle = op(c, 1);
	c->u.copy_region.dst_level = op(c, 2);
	c->u.copy_region.dst_x = (int32_t)op(c, 3);
	c->u.copy_region.dst_y = (int32_t)op(c, 4);
	c->u.copy_region.dst_z = (int32_t)op(c, 5);
	c->u.copy_region.src_handle = op(c, 6);
	c->u.copy_region.src_level = op(c, 7);
	c->u.copy_region.src = box_at(c, 8);
	return NULL;
}

/* Checks and names the operands of @c; returns NULL or why it is malformed. */
static const char *decode_operands(struct predict_dcmd *c)
{
	switch (c->cmd) {
	case PREDICT_VIRGL_CREATE_OBJECT:
		return decode_create(c);
	case PREDICT_VIRGL_BIND_OBJECT:
	case PREDICT_VIRGL_DESTROY_OBJECT:
	case PREDICT_VIRGL_BEGIN_QUERY:
	case PREDICT_VIRGL_END_QUERY:
	case PREDICT_VIRGL_SET_SUB_CTX:
	case PREDICT_VIRGL_CREATE_SUB_CTX:
	case PREDICT_VIRGL_DESTROY_SUB_CTX:
		if (c->len < MIN_HANDLE_ONLY)
			return "command without its handle";
		c->u.object.handle = op(c, 1);
		return NULL;
	case PREDICT_VIRGL_BIND_SHADER:
		if (c->len < MIN_BIND_SHADER)
			return "bind_shader too short";
		c->u.bind_shader.handle = op(c, 1);
		c->u.bind_shader.type = op(c, 2);
		if (c->u.bind_shader.type >= PREDICT_PIPE_SHADER_TYPES)
			return "shader type out of range";
		return NULL;
	case PREDICT_VIRGL_SET_FRAMEBUFFER_STATE:
		return decode_framebuffer(c);
	case PREDICT_VIRGL_SET_FRAMEBUFFER_STATE_NO_ATTACH:
		if (c->len < MIN_FB_NO_ATTACH)
			return "framebuffer state (no attachment) too short";
		c->u.framebuffer_no_attach.width = op(c, 1) & 0xffff;
		c->u.framebuffer_no_attach.height = op(c, 1) >> 16;
		c->u.framebuffer_no_attach.layers = op(c, 2) & 0xffff;
		c->u.framebuffer_no_attach.samples = (op(c, 2) >> 16) & 0xff;
		return NULL;
	case PREDICT_VIRGL_SET_VIEWPORT_STATE:
		return decode_viewport(c);
	case PREDICT_VIRGL_SET_SCISSOR_STATE:
		return decode_scissor(c);
	case PREDICT_VIRGL_SET_VERTEX_BUFFERS:
		if (c->len % VB_DWORDS)
			return "vertex buffers length not 3 n";
		if (c->len / VB_DWORDS > PREDICT_PIPE_MAX_ATTRIBS)
			return "too many vertex buffers";
		c->u.vertex_buffers.count = c->len / VB_DWORDS;
		c->u.vertex_buffers.vb = c->payload;
		return NULL;
	case PREDICT_VIRGL_SET_INDEX_BUFFER:
		if (c->len < MIN_INDEX_BUFFER)
			return "set_index_buffer too short";
		c->u.index_buffer.handle = op(c, 1);
		c->u.index_buffer.index_size = c->len >= FULL_INDEX_BUFFER ? op(c, 2) : 0;
		c->u.index_buffer.offset = c->len >= FULL_INDEX_BUFFER ? op(c, 3) : 0;
		return NULL;
	case PREDICT_VIRGL_SET_CONSTANT_BUFFER:
		if (c->len < MIN_CONSTANT_BUFFER)
			return "set_constant_buffer too short";
		c->u.constant_buffer.shader_type = op(c, 1);
		c->u.constant_buffer.index = op(c, 2);
		c->u.constant_buffer.count = c->len - MIN_CONSTANT_BUFFER;
		c->u.constant_buffer.data = &c->payload[2];
		if (c->u.constant_buffer.shader_type >= PREDICT_PIPE_SHADER_TYPES)
			return "shader type out of range";
		return NULL;
	case PREDICT_VIRGL_SET_UNIFORM_BUFFER:
		if (c->len < MIN_UNIFORM_BUFFER)
			return "set_uniform_buffer too short";
		c->u.uniform_buffer.shader_type = op(c, 1);
		c->u.uniform_buffer.index = op(c, 2);
		c->u.uniform_buffer.offset = op(c, 3);
		c->u.uniform_buffer.length = op(c, 4);
		c->u.uniform_buffer.res_handle = op(c, 5);
		if (c->u.uniform_buffer.shader_type >= PREDICT_PIPE_SHADER_TYPES)
			return "shader type out of range";
		if (c->u.uniform_buffer.index >= PREDICT_PIPE_MAX_CONSTANT_BUFFERS)
			return "uniform buffer index out of range";
		return NULL;
	case PREDICT_VIRGL_SET_SAMPLER_VIEWS:
		return decode_sampler_views(c);
	case PREDICT_VIRGL_CLEAR:
		if (c->len < MIN_CLEAR)
			return "clear too short";
		c->u.clear.buffers = op(c, 1);
		return NULL;
	case PREDICT_VIRGL_CLEAR_TEXTURE:
		if (c->len < MIN_CLEAR_TEXTURE)
			return "clear_texture too short";
		c->u.clear_texture.handle = op(c, 1);
		c->u.clear_texture.level = op(c, 2);
		c->u.clear_texture.box = box_at(c, 3);
		return NULL;
	case PREDICT_VIRGL_DRAW_VBO:
		return decode_draw(c);
	case PREDICT_VIRGL_BLIT:
		return decode_blit(c);
	case PREDICT_VIRGL_RESOURCE_COPY_REGION:
		return decode_copy_region(c);
	case PREDICT_VIRGL_RESOURCE_INLINE_WRITE:
		if (c->len < MIN_INLINE_WRITE)
			return "resource_inline_write too short";
		decode_transfer_common(c);
		c->u.transfer.data = &c->payload[INLINE_WRITE_DATA - 1];
		c->u.transfer.data_len = (size_t)(c->len - (INLINE_WRITE_DATA - 1)) * 4;
		return NULL;
	case PREDICT_VIRGL_TRANSFER3D:
		if (c->len < MIN_TRANSFER3D)
			return "transfer3d too short";
		decode_transfer_common(c);
		c->u.transfer.data_offset = op(c, 12);
		c->u.transfer.direction = op(c, 13);
		if (c->u.transfer.direction != PREDICT_TRANSFER_TO_HOST &&
		    c->u.transfer.direction != PREDICT_TRANSFER_FROM_HOST)
			return "transfer3d direction is neither to nor from host";
		return NULL;
	case PREDICT_VIRGL_COPY_TRANSFER3D:
		if (c->len < MIN_COPY_TRANSFER3D)
			return "copy_transfer3d too short";
		decode_transfer_common(c);
		c->u.transfer.src_handle = op(c, 12);
		c->u.transfer.data_offset = op(c, 13);
		return NULL;
	case PREDICT_VIRGL_LAUNCH_GRID:
		if (c->len < MIN_LAUNCH_GRID)
			return "launch_grid too short";
		for (uint32_t i = 0; i < 3; i++) {
			c->u.launch_grid.block[i] = op(c, 1 + i);
			c->u.launch_grid.grid[i] = op(c, 4 + i);
		}
		c->u.launch_grid.indirect_handle = op(c, 7);
		c->u.launch_grid.indirect_offset = op(c, 8);
		return NULL;
	default:
		return NULL;
	}
}

int predict_decode_next(struct predict_decode *d, struct predict_dcmd *out, const char **why)
{
	const char *bad;
	uint32_t hdr;

	memset(out, 0, sizeof(*out));
	out->index = d->index;
	out->offset = predict_decode_offset(d);
	if (d->failed) {
		if (why)
			*why = d->failed;
		return -EINVAL;
	}
	if (d->pos == d->ndw)
		return 0;
	hdr = d->buf[d->pos];
	out->cmd = hdr & 0xff;
	out->obj = (hdr >> 8) & 0xff;
	out->len = hdr >> 16;
	if (out->len > d->ndw - d->pos - 1) {
		bad = "length runs past the end of the buffer";
	} else {
		out->payload = &d->buf[d->pos + 1];
		bad = decode_operands(out);
	}
	if (bad) {
		out->payload = NULL;
		if (why)
			*why = bad;
		d->failed = bad; /* pos and index stay at the bad command */
		return -EINVAL;
	}
	d->pos += (size_t)out->len + 1;
	d->index++;
	return 1;
}
