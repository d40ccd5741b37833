// SPDX-License-Identifier: MIT
/*
 * Shallow walk of a virgl command buffer (see predict_cmd.h). Command and
 * object numbers are the decoder's (predict_decode.h), those of
 * virglrenderer's src/virgl_protocol.h.
 */
#include <errno.h>
#include <string.h>

#include "predict_cmd.h"
#include "predict_decode.h"

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

int predict_cmd_class_find(const char *name)
{
	for (int cls = 0; cls < PREDICT_CMD_CLASS_COUNT; cls++) {
		if (!strcmp(class_names[cls], name))
			return cls;
	}
	return -1;
}

bool predict_cmd_class_has_output(enum predict_cmd_class cls)
{
	return cls != PREDICT_CMD_STATE && cls != PREDICT_CMD_SHADER && cls != PREDICT_CMD_QUERY;
}

bool predict_cmd_no_output(const struct predict_cmd_counts *counts)
{
	for (int cls = 0; cls < PREDICT_CMD_CLASS_COUNT; cls++) {
		if (counts->n[cls] && predict_cmd_class_has_output((enum predict_cmd_class)cls))
			return false;
	}
	return true;
}

enum predict_cmd_class predict_cmd_classify(uint32_t cmd, uint32_t obj)
{
	switch (cmd) {
	case PREDICT_VIRGL_DRAW_VBO:
		return PREDICT_CMD_DRAW;
	case PREDICT_VIRGL_CLEAR:
		return PREDICT_CMD_CLEAR;
	case PREDICT_VIRGL_CLEAR_TEXTURE:
		return PREDICT_CMD_CLEAR_TEXTURE;
	case PREDICT_VIRGL_BLIT:
		return PREDICT_CMD_BLIT;
	case PREDICT_VIRGL_RESOURCE_COPY_REGION:
		return PREDICT_CMD_COPY;
	case PREDICT_VIRGL_RESOURCE_INLINE_WRITE:
	case PREDICT_VIRGL_TRANSFER3D:
	case PREDICT_VIRGL_COPY_TRANSFER3D:
		return PREDICT_CMD_TRANSFER;
	case PREDICT_VIRGL_LAUNCH_GRID:
		return PREDICT_CMD_COMPUTE;
	case PREDICT_VIRGL_BEGIN_QUERY:
	case PREDICT_VIRGL_END_QUERY:
	case PREDICT_VIRGL_GET_QUERY_RESULT:
	case PREDICT_VIRGL_GET_QUERY_RESULT_QBO:
		return PREDICT_CMD_QUERY;
	case PREDICT_VIRGL_BIND_SHADER:
		return PREDICT_CMD_SHADER;
	case PREDICT_VIRGL_CREATE_OBJECT:
		return obj == PREDICT_VIRGL_OBJECT_SHADER ? PREDICT_CMD_SHADER : PREDICT_CMD_STATE;
	default:
		return cmd < PREDICT_VIRGL_MAX_COMMANDS ? PREDICT_CMD_STATE : PREDICT_CMD_UNKNOWN;
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
