// SPDX-License-Identifier: MIT
/*
 * A first, shallow walk of a virgl command buffer: it checks that every
 * command header's length stays inside the buffer and counts commands by
 * class. The trace's "cmds" object and the per-group records are built from
 * these counts. The full typed decoder (operands, state tracking) builds on
 * the same walk.
 *
 * Layout of a command header (virglrenderer src/virgl_protocol.h, VIRGL_CMD0):
 * bits 0..7 command, bits 8..15 object type, bits 16..31 payload length in
 * dwords, not counting the header itself.
 */
#ifndef PREDICT_CMD_H
#define PREDICT_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum predict_cmd_class {
	PREDICT_CMD_DRAW = 0,	   /* DRAW_VBO */
	PREDICT_CMD_CLEAR,	   /* CLEAR */
	PREDICT_CMD_CLEAR_TEXTURE, /* CLEAR_TEXTURE */
	PREDICT_CMD_BLIT,	   /* BLIT */
	PREDICT_CMD_COPY,	   /* RESOURCE_COPY_REGION */
	PREDICT_CMD_TRANSFER,	   /* RESOURCE_INLINE_WRITE, TRANSFER3D, COPY_TRANSFER3D */
	PREDICT_CMD_COMPUTE,	   /* LAUNCH_GRID */
	PREDICT_CMD_QUERY,	   /* BEGIN/END/GET_QUERY_RESULT(_QBO) */
	PREDICT_CMD_SHADER,	   /* CREATE_OBJECT of a shader, BIND_SHADER, LINK_SHADER */
	PREDICT_CMD_STATE,	   /* every other known command */
	PREDICT_CMD_UNKNOWN,	   /* command numbers this build does not know */
	PREDICT_CMD_CLASS_COUNT
};

struct predict_cmd_counts {
	uint32_t n[PREDICT_CMD_CLASS_COUNT];
	uint32_t total;
};

/* The class of a command from its header's command and object-type fields. */
enum predict_cmd_class predict_cmd_classify(uint32_t cmd, uint32_t obj);

/* Name of a class as used in trace records: "draw", "clear", ... */
const char *predict_cmd_class_name(enum predict_cmd_class cls);
/* The class named @name (as predict_cmd_class_name() names it), or -1 if none is. */
int predict_cmd_class_find(const char *name);

/*
 * Whether commands of @cls have output: they draw, clear, copy, transfer
 * or compute. State, shader and query commands have none; neither does a
 * group of only those, such as a client's set-up or teardown, which is
 * therefore no frame (the scheduler's SCHED_NO_OUTPUT, wire.h's
 * WIRE_GRANT_NO_OUTPUT). Unknown commands count as output.
 */
bool predict_cmd_class_has_output(enum predict_cmd_class cls);
/* Whether a group of @counts has no command with output (true for an empty group). */
bool predict_cmd_no_output(const struct predict_cmd_counts *counts);

/*
 * Walks @ndw dwords at @buf and fills @counts. Reads nothing outside the
 * buffer. Returns 0, or -EINVAL when a header's length runs past the end;
 * then *@bad_index is the index of that command and *@bad_offset its byte
 * offset (both may be NULL), and @counts holds the commands before it.
 */
int predict_cmd_count(const uint32_t *buf, size_t ndw, struct predict_cmd_counts *counts,
		      uint32_t *bad_index, size_t *bad_offset);

#endif
