/*
 * Shallow walk of a virgl command buffer (see predict_cmd.h). Command and
 * object numbers are those of virglrenderer's src/virgl_protocol.h
 * (enum virgl_context_cmd, enum virgl_object_type).
 */
#include <errno.h>
#include <string.h>

#include "predict_cmd.h"

enum {
	VIRGL_CCMD_CREATE_OBJECT = 1,
	VIRGL_CCMD_CLEAR = 7,
	VIRGL_CCMD_DRAW_VBO = 8,
	VIRGL_CCMD_RESOURCE_INLINE_WRITE = 9,
	VIRGL_CCMD_BLIT = 16,
	VIRGL_CCMD_RESOURCE_COPY_REGION = 17,
	VIRGL_CCMD_BEGIN_QUERY = 19,
	VIRGL_CCMD_END_QUERY = 20,
	VIRGL_CCMD_GET_QUERY_RESULT = 21,
	VIRGL_CCMD_BIND_SHADER = 31,
	VIRGL_CCMD_LAUNCH_GRID = 37,
	VIRGL_CCMD_GET_QUERY_RESULT_QBO = 42,
	VIRGL_CCMD_TRANSFER3D = 43,
	VIRGL_CCMD_COPY_TRANSFER3D = 45,
	VIRGL_CCMD_CLEAR_TEXTURE = 47,
	/* One past the last command virglrenderer 0.10 knows (SEND_STRING_MARKER = 51). */
	VIRGL_CCMD_KNOWN_END = 52,
};

#define VIRGL_OBJECT_SHADER 4

static const char *const class_names[PREDICT_CMD_CLASS_COUNT] = {
    [PREDICT_CMD_DRAW] = "draw",
    [PREDICT_CMD_CLEAR] = "clear",
    [PREDICT_CMD_CLEAR_TEXTURE] = "clear_texture",
    [PREDICT_CMD_BLIT] = "blit",
    [PREDICT_CMD_COPY] = "copy",
    [PREDICT_CMD_TRANSFER] = "transfer",
    [PREDICT_CMD_COMPUTE] = "compute",
    [PREDICT_CMD_QUERY] = "query",
    [PREDICT_CMD_SHADER] = "shader",
    [PREDICT_CMD_STATE] = "state",
    [PREDICT_CMD_UNKNOWN] = "unknown",
};

const char *predict_cmd_class_name(enum predict_cmd_class cls)
{
	if ((unsigned)cls >= PREDICT_CMD_CLASS_COUNT)
		return "invalid";
	return class_names[cls];
}

enum predict_cmd_class predict_cmd_classify(uint32_t cmd, uint32_t obj)
{
	switch (cmd) {
	case VIRGL_CCMD_DRAW_VBO:
		return PREDICT_CMD_DRAW;
	case VIRGL_CCMD_CLEAR:
		return PREDICT_CMD_CLEAR;
	case VIRGL_CCMD_CLEAR_TEXTURE:
		return PREDICT_CMD_CLEAR_TEXTURE;
	case VIRGL_CCMD_BLIT:
		return PREDICT_CMD_BLIT;
	case VIRGL_CCMD_RESOURCE_COPY_REGION:
		return PREDICT_CMD_COPY;
	case VIRGL_CCMD_RESOURCE_INLINE_WRITE:
	case VIRGL_CCMD_TRANSFER3D:
	case VIRGL_CCMD_COPY_TRANSFER3D:
		return PREDICT_CMD_TRANSFER;
	case VIRGL_CCMD_LAUNCH_GRID:
		return PREDICT_CMD_COMPUTE;
	case VIRGL_CCMD_BEGIN_QUERY:
	case VIRGL_CCMD_END_QUERY:
	case VIRGL_CCMD_GET_QUERY_RESULT:
	case VIRGL_CCMD_GET_QUERY_RESULT_QBO:
		return PREDICT_CMD_QUERY;
	case VIRGL_CCMD_BIND_SHADER:
		return PREDICT_CMD_SHADER;
	case VIRGL_CCMD_CREATE_OBJECT:
		return obj == VIRGL_OBJECT_SHADER ? PREDICT_CMD_SHADER : PREDICT_CMD_STATE;
	default:
		return cmd < VIRGL_CCMD_KNOWN_END ? PREDICT_CMD_STATE : PREDICT_CMD_UNKNOWN;
	}
}

int predict_cmd_count(const uint32_t *buf, size_t ndw, struct predict_cmd_counts *counts,
		      uint32_t *bad_index, size_t *bad_offset)
{
	size_t pos = 0;
	uint32_t index = 0;

	memset(counts, 0, sizeof(*counts));
	while (pos < ndw) {
		uint32_t hdr = buf[pos];
		size_t len = hdr >> 16;

		if (len > ndw - pos - 1) {
			if (bad_index)
				*bad_index = index;
			if (bad_offset)
				*bad_offset = pos * sizeof(uint32_t);
			return -EINVAL;
		}
		counts->n[predict_cmd_classify(hdr & 0xff, (hdr >> 8) & 0xff)]++;
		counts->total++;
		pos += len + 1;
		index++;
	}
	return 0;
}
