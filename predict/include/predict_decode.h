// SPDX-License-Identifier: MIT
/*
 * Typed decoder of a virgl command buffer.
 *
 * A struct predict_decode walks the buffer command by command (the caller
 * embeds it: predict_decode_init(), then predict_decode_next() until it
 * returns 0). For each command it checks the header's length against the
 * end of the buffer and the payload against the protocol's minimum for
 * that command, then exposes the operands of the commands that matter for
 * cost and state by name in struct predict_dcmd. Other commands are
 * returned with their header fields only.
 *
 * Protocol facts (command and object numbers, operand positions, minimum
 * lengths) come from virglrenderer's src/virgl_protocol.h and from how
 * src/vrend_decode.c reads them; the names below keep the header's names
 * so that the two can be compared line by line.
 *
 * Layout of a header (VIRGL_CMD0): bits 0..7 command, 8..15 object type,
 * 16..31 payload length in dwords, the header not included. Operand n of a
 * command is payload dword n - 1 (the protocol counts the header as 0).
 *
 * Pointers in a decoded command point into the caller's buffer and are
 * valid as long as it is. Nothing outside the buffer is ever read.
 */
#ifndef PREDICT_DECODE_H
#define PREDICT_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Object handles from here up are the host's: the worker creates its own
 * objects (the occlusion query that measures a group's fragments) in the
 * guest's context with them, so a guest stream that creates one is
 * rejected. Mesa's virgl driver numbers objects from 1 up.
 */
#define PREDICT_HOST_HANDLE_MIN 0xffffff00u

/* TRANSFER3D directions (VIRGL_TRANSFER_TO_HOST, VIRGL_TRANSFER_FROM_HOST). */
#define PREDICT_TRANSFER_TO_HOST   1u
#define PREDICT_TRANSFER_FROM_HOST 2u

/* Command numbers: enum virgl_context_cmd (virgl_protocol.h). */
enum predict_virgl_cmd {
	PREDICT_VIRGL_NOP = 0,
	PREDICT_VIRGL_CREATE_OBJECT = 1,
	PREDICT_VIRGL_BIND_OBJECT = 2,
	PREDICT_VIRGL_DESTROY_OBJECT = 3,
	PREDICT_VIRGL_SET_VIEWPORT_STATE = 4,
	PREDICT_VIRGL_SET_FRAMEBUFFER_STATE = 5,
	PREDICT_VIRGL_SET_VERTEX_BUFFERS = 6,
	PREDICT_VIRGL_CLEAR = 7,
	PREDICT_VIRGL_DRAW_VBO = 8,
	PREDICT_VIRGL_RESOURCE_INLINE_WRITE = 9,
	PREDICT_VIRGL_SET_SAMPLER_VIEWS = 10,
	PREDICT_VIRGL_SET_INDEX_BUFFER = 11,
	PREDICT_VIRGL_SET_CONSTANT_BUFFER = 12,
	PREDICT_VIRGL_SET_SCISSOR_STATE = 15,
	PREDICT_VIRGL_BLIT = 16,
	PREDICT_VIRGL_RESOURCE_COPY_REGION = 17,
	PREDICT_VIRGL_BEGIN_QUERY = 19,
	PREDICT_VIRGL_END_QUERY = 20,
	PREDICT_VIRGL_GET_QUERY_RESULT = 21,
	PREDICT_VIRGL_SET_STREAMOUT_TARGETS = 25,
	PREDICT_VIRGL_SET_UNIFORM_BUFFER = 27,
	PREDICT_VIRGL_SET_SUB_CTX = 28,
	PREDICT_VIRGL_CREATE_SUB_CTX = 29,
	PREDICT_VIRGL_DESTROY_SUB_CTX = 30,
	PREDICT_VIRGL_BIND_SHADER = 31,
	PREDICT_VIRGL_SET_SHADER_BUFFERS = 34,
	PREDICT_VIRGL_SET_SHADER_IMAGES = 35,
	PREDICT_VIRGL_LAUNCH_GRID = 37,
	PREDICT_VIRGL_SET_FRAMEBUFFER_STATE_NO_ATTACH = 38,
	PREDICT_VIRGL_SET_ATOMIC_BUFFERS = 40,
	PREDICT_VIRGL_GET_QUERY_RESULT_QBO = 42,
	PREDICT_VIRGL_TRANSFER3D = 43,
	PREDICT_VIRGL_COPY_TRANSFER3D = 45,
	PREDICT_VIRGL_CLEAR_TEXTURE = 47,
	/* VIRGL_MAX_COMMANDS of virglrenderer 0.10 (SEND_STRING_MARKER = 51 is the last). */
	PREDICT_VIRGL_MAX_COMMANDS = 52,
};

/* enum virgl_object_type (virgl_protocol.h). */
enum predict_virgl_object {
	PREDICT_VIRGL_OBJECT_NULL = 0,
	PREDICT_VIRGL_OBJECT_BLEND = 1,
	PREDICT_VIRGL_OBJECT_RASTERIZER = 2,
	PREDICT_VIRGL_OBJECT_DSA = 3,
	PREDICT_VIRGL_OBJECT_SHADER = 4,
	PREDICT_VIRGL_OBJECT_VERTEX_ELEMENTS = 5,
	PREDICT_VIRGL_OBJECT_SAMPLER_VIEW = 6,
	PREDICT_VIRGL_OBJECT_SAMPLER_STATE = 7,
	PREDICT_VIRGL_OBJECT_SURFACE = 8,
	PREDICT_VIRGL_OBJECT_QUERY = 9,
	PREDICT_VIRGL_OBJECT_STREAMOUT_TARGET = 10,
	PREDICT_VIRGL_OBJECT_MSAA_SURFACE = 11,
	PREDICT_VIRGL_MAX_OBJECTS = 12,
};

/* Gallium limits the renderer enforces (virglrenderer src/gallium/include/pipe/p_state.h,
 * p_defines.h); the decoder rejects counts above them as the renderer does. */
#define PREDICT_PIPE_SHADER_TYPES	      6u  /* PIPE_SHADER_TYPES */
#define PREDICT_PIPE_SHADER_VERTEX	      0u  /* PIPE_SHADER_VERTEX */
#define PREDICT_PIPE_SHADER_FRAGMENT	      1u  /* PIPE_SHADER_FRAGMENT */
#define PREDICT_PIPE_SHADER_COMPUTE	      5u  /* PIPE_SHADER_COMPUTE */
#define PREDICT_PIPE_MAX_COLOR_BUFS	      8u  /* VIRGL_MAX_COLOR_BUFS */
#define PREDICT_PIPE_MAX_VIEWPORTS	      16u /* PIPE_MAX_VIEWPORTS */
#define PREDICT_PIPE_MAX_ATTRIBS	      32u /* PIPE_MAX_ATTRIBS */
#define PREDICT_PIPE_MAX_CONSTANT_BUFFERS     32u /* PIPE_MAX_CONSTANT_BUFFERS */
#define PREDICT_PIPE_MAX_SHADER_SAMPLER_VIEWS 32u /* PIPE_MAX_SHADER_SAMPLER_VIEWS */
#define PREDICT_PIPE_MAX_SO_OUTPUTS	      64u /* PIPE_MAX_SO_OUTPUTS */

/* Shader text offset field (VIRGL_OBJ_SHADER_OFFSET): bit 31 marks a continuation. */
#define PREDICT_VIRGL_SHADER_OFFSET_CONT 0x80000000u
#define PREDICT_VIRGL_SHADER_OFFSET_MASK 0x7fffffffu

/* A pipe_box as the protocol carries it (x, y, z, width, height, depth; signed). */
struct predict_box {
	int32_t x, y, z, w, h, d;
};

/* The operands of one command; which member of u is valid depends on cmd (and obj). */
struct predict_dcmd {
	uint32_t cmd, obj, len;	 /* header fields */
	uint32_t index;		 /* of the command in the buffer */
	size_t offset;		 /* byte offset of its header */
	const uint32_t *payload; /* len dwords */
	union {
		/* CREATE_OBJECT shader */
		struct {
			uint32_t handle, type, num_tokens, num_so_outputs;
			bool continuation; /* offset field had VIRGL_OBJ_SHADER_OFFSET_CONT */
			uint32_t offlen;   /* total bytes (start) or offset (continuation) */
			const char *text;  /* this part of the TGSI text */
			size_t text_len;   /* bytes of this part (a multiple of 4) */
		} shader;
		/* CREATE_OBJECT surface / msaa surface */
		struct {
			uint32_t handle, res_handle, format, level_or_first, layers_or_last;
			uint32_t nr_samples; /* msaa surface only, else 0 */
		} surface;
		/* CREATE_OBJECT sampler view */
		struct {
			uint32_t handle, res_handle, format;
		} sampler_view;
		/* CREATE_OBJECT vertex elements: element i is at elems[4 i]: src_offset,
		 * instance_divisor, vertex_buffer_index, src_format */
		struct {
			uint32_t handle, count;
			const uint32_t *elems;
		} vertex_elements;
		/* CREATE_OBJECT query */
		struct {
			uint32_t handle, type, index, offset, res_handle;
		} query;
		/* CREATE_OBJECT of blend/dsa/rasterizer/sampler state/streamout; BIND_OBJECT;
		 * DESTROY_OBJECT; BEGIN_QUERY; END_QUERY; SET/CREATE/DESTROY_SUB_CTX */
		struct {
			uint32_t handle;
		} object;
		struct {
			uint32_t handle, type;
		} bind_shader;
		/* cbufs[i] for i < nr_cbufs */
		struct {
			uint32_t nr_cbufs, zsurf;
			const uint32_t *cbufs;
		} framebuffer;
		struct {
			uint32_t width, height, layers, samples;
		} framebuffer_no_attach;
		/* viewport i: 6 float bit patterns at vp[6 i]: scale xyz, translate xyz */
		struct {
			uint32_t start_slot, count;
			const uint32_t *vp;
		} viewport;
		/* scissor i: vp[2 i] = minx | miny << 16, vp[2 i + 1] = maxx | maxy << 16 */
		struct {
			uint32_t start_slot, count;
			const uint32_t *ss;
		} scissor;
		/* buffer i: vb[3 i] stride, vb[3 i + 1] offset, vb[3 i + 2] resource */
		struct {
			uint32_t count;
			const uint32_t *vb;
		} vertex_buffers;
		struct {
			uint32_t handle, index_size, offset;
		} index_buffer;
		/* count dwords of constants at data */
		struct {
			uint32_t shader_type, index, count;
			const uint32_t *data;
		} constant_buffer;
		struct {
			uint32_t shader_type, index, offset, length, res_handle;
		} uniform_buffer;
		struct {
			uint32_t shader_type, start_slot, count;
			const uint32_t *handles;
		} sampler_views;
		struct {
			uint32_t buffers; /* PIPE_CLEAR_* */
		} clear;
		struct {
			uint32_t handle, level;
			struct predict_box box;
		} clear_texture;
		struct {
			uint32_t start, count, mode, indexed, instance_count, start_instance;
			uint32_t min_index, max_index, count_from_so;
			uint32_t indirect_handle; /* 0 unless the indirect form */
		} draw;
		struct {
			uint32_t mask, dst_handle, dst_level, dst_format;
			uint32_t src_handle, src_level, src_format;
			struct predict_box dst, src;
		} blit;
		struct {
			uint32_t dst_handle, dst_level, src_handle, src_level;
			int32_t dst_x, dst_y, dst_z;
			struct predict_box src;
		} copy_region;
		/* RESOURCE_INLINE_WRITE (data, data_len), TRANSFER3D (data_offset,
		 * direction) and COPY_TRANSFER3D (from src_handle at data_offset) */
		struct {
			uint32_t handle, level, usage, stride, layer_stride;
			struct predict_box box;
			const void *data;
			size_t data_len;
			uint32_t data_offset, direction;
			uint32_t src_handle;
		} transfer;
		struct {
			uint32_t block[3], grid[3], indirect_handle, indirect_offset;
		} launch_grid;
	} u;
};

struct predict_decode {
	const uint32_t *buf;
	size_t ndw;
	size_t pos;	    /* dword index of the next header */
	uint32_t index;	    /* index of the next command */
	const char *failed; /* why the command at pos is malformed, or NULL */
};

/* Starts a walk of @ndw dwords at @buf (NULL is fine when @ndw is 0). Owns nothing. */
void predict_decode_init(struct predict_decode *d, const uint32_t *buf, size_t ndw);

/*
 * Decodes the next command into @out. Returns 1 when a command was
 * decoded, 0 at the end of the buffer, -EINVAL when the command is
 * malformed: then out->index and out->offset say which one, *@why (if not
 * NULL) is a static reason, and further calls keep returning -EINVAL.
 * Commands this build does not know are returned as they are (the renderer
 * decides), with no operands.
 */
int predict_decode_next(struct predict_decode *d, struct predict_dcmd *out, const char **why);

/* Byte offset of the next header (after an error: of the bad command). */
size_t predict_decode_offset(const struct predict_decode *d);

/* The float whose bits are @bits (operands carry floats as their bit patterns). */
float predict_decode_f32(uint32_t bits);

#endif
