// SPDX-License-Identifier: MIT
/*
 * Whether a draw may be cut into scissor tiles (see predict_tiling.h).
 *
 * Payload layouts are virglrenderer's src/virgl_protocol.h:
 * SET_SHADER_BUFFERS and SET_SHADER_IMAGES carry the shader type, the
 * start slot and per slot 3 (offset, length, resource) or 5 (format,
 * access, layer offset, level size, resource) dwords; SET_ATOMIC_BUFFERS
 * the start slot and 3 dwords per slot; SET_STREAMOUT_TARGETS an append
 * mask and then the targets' handles.
 */
#include "predict_tiling.h"

/* Dwords per slot and where its resource handle is, after the leading operands. */
enum {
	BUFFER_DWORDS = 3,
	BUFFER_HANDLE = 2,
	IMAGE_DWORDS = 5,
	IMAGE_HANDLE = 4,
	ATOMIC_DWORDS = 3,
	ATOMIC_HANDLE = 2,
	MASK_SLOTS = 32,
};

/*
 * Slots [start, start + n) of @mask, each of @per dwords at @p with its
 * handle at @handle: bound when the handle is not 0.
 */
static void set_slots(uint32_t *mask, bool *for_good, uint32_t start, const uint32_t *p, uint32_t n,
		      uint32_t per, uint32_t handle)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t slot = start + i;
		bool bound = p[i * per + handle] != 0;

		if (slot >= MASK_SLOTS || slot < start) {
			*for_good = *for_good || bound;
			continue;
		}
		if (bound)
			*mask |= 1u << slot;
		else
			*mask &= ~(1u << slot);
	}
}

/* A binding command of @lead leading operands and @per dwords a slot; false if malformed. */
static bool slots_of(const struct predict_dcmd *c, uint32_t lead, uint32_t per, uint32_t *n)
{
	if (c->len < lead || (c->len - lead) % per)
		return false;
	*n = (c->len - lead) / per;
	return true;
}

void predict_tile_state_apply(struct predict_tile_state *t, const struct predict_dcmd *c)
{
	uint32_t n, stage;

	switch (c->cmd) {
	case PREDICT_VIRGL_SET_SCISSOR_STATE:
		if (c->u.scissor.start_slot == 0 && c->u.scissor.count) {
			t->scissor[0] = c->u.scissor.ss[0];
			t->scissor[1] = c->u.scissor.ss[1];
		}
		return;
	case PREDICT_VIRGL_SET_SHADER_BUFFERS:
	case PREDICT_VIRGL_SET_SHADER_IMAGES: {
		bool images = c->cmd == PREDICT_VIRGL_SET_SHADER_IMAGES;
		uint32_t per = images ? IMAGE_DWORDS : BUFFER_DWORDS;

		if (!slots_of(c, 2, per, &n)) {
			t->writes_for_good = true;
			return;
		}
		stage = c->payload[0];
		if (stage >= PREDICT_PIPE_SHADER_TYPES) {
			t->writes_for_good = true;
			return;
		}
		set_slots(images ? &t->images[stage] : &t->buffers[stage], &t->writes_for_good,
			  c->payload[1], c->payload + 2, n, per,
			  images ? IMAGE_HANDLE : BUFFER_HANDLE);
		return;
	}
	case PREDICT_VIRGL_SET_ATOMIC_BUFFERS:
		if (!slots_of(c, 1, ATOMIC_DWORDS, &n)) {
			t->writes_for_good = true;
			return;
		}
		set_slots(&t->atomics, &t->writes_for_good, c->payload[0], c->payload + 1, n,
			  ATOMIC_DWORDS, ATOMIC_HANDLE);
		return;
	case PREDICT_VIRGL_SET_STREAMOUT_TARGETS:
		t->streamout = false;
		for (uint32_t i = 1; i < c->len; i++)
			t->streamout = t->streamout || c->payload[i] != 0;
		return;
	case PREDICT_VIRGL_BEGIN_QUERY:
		if (t->queries < UINT32_MAX)
			t->queries++;
		return;
	case PREDICT_VIRGL_END_QUERY:
		if (t->queries)
			t->queries--;
		return;
	case PREDICT_VIRGL_BIND_SHADER:
		if (c->u.bind_shader.handle)
			t->stages |= 1u << c->u.bind_shader.type;
		else
			t->stages &= ~(1u << c->u.bind_shader.type);
		return;
	default:
		return;
	}
}

enum predict_untiled predict_tile_state_blocker(const struct predict_tile_state *t)
{
	uint32_t any = t->atomics;

	/* A compute shader's bindings are its grids', not a draw's. */
	for (uint32_t i = 0; i < PREDICT_PIPE_SHADER_TYPES; i++)
		if (i != PREDICT_PIPE_SHADER_COMPUTE)
			any |= t->buffers[i] | t->images[i];
	if (any || t->writes_for_good)
		return PREDICT_UNTILED_WRITES;
	if (t->streamout)
		return PREDICT_UNTILED_STREAMOUT;
	if (t->queries)
		return PREDICT_UNTILED_QUERY;
	if (t->stages & ~(1u << PREDICT_PIPE_SHADER_VERTEX | 1u << PREDICT_PIPE_SHADER_FRAGMENT |
			  1u << PREDICT_PIPE_SHADER_COMPUTE))
		return PREDICT_UNTILED_STAGES;
	return PREDICT_TILEABLE;
}

const char *predict_untiled_text(enum predict_untiled why)
{
	static const char *const text[PREDICT_UNTILED_COUNT] = {
	    [PREDICT_TILEABLE] = "it may be cut",
	    [PREDICT_UNTILED_WRITES] = "shader buffers, images or atomic counters are bound",
	    [PREDICT_UNTILED_STREAMOUT] = "stream output is on",
	    [PREDICT_UNTILED_QUERY] = "a query is counting",
	    [PREDICT_UNTILED_STAGES] = "a geometry or tessellation shader is bound",
	    [PREDICT_UNTILED_VIEWPORT] =
		"the vertex shader may pick another viewport (or is unknown)",
	    [PREDICT_UNTILED_NO_RS] = "no rasterizer state is bound",
	    [PREDICT_UNTILED_NOTHING] = "it rasterizes nothing",
	    [PREDICT_UNTILED_SPENT] = "it is cut into as many pieces and tiles as it may be",
	};

	return (unsigned)why < PREDICT_UNTILED_COUNT ? text[why] : "unknown";
}
