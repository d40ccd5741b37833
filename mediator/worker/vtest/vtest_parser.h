// SPDX-License-Identifier: MIT
/*
 * Framing and shape checks of the vtest protocol, as spoken by Mesa's virgl
 * vtest winsys (src/gallium/winsys/virgl/vtest/) to a vtest server
 * (virglrenderer vtest/vtest_protocol.h gives the numbers below).
 *
 * A message is a header of two uint32 — payload length in dwords, command
 * id — followed by the payload. The parser owns one receive buffer: the
 * caller reads from the socket straight into the space vtest_parser_space()
 * gives, reports how much arrived with vtest_parser_commit(), and takes
 * whole messages out with vtest_parser_next(). It checks each header as
 * soon as it is complete — known command, payload length allowed for that
 * command, and at most the configured limit — so that a hostile length is
 * refused before anything is allocated for it.
 *
 * How long a message is follows the reference server (virglrenderer's
 * vtest/vtest_renderer.c), which reads a fixed number of dwords for most
 * commands whatever the length field says, and not the length field alone.
 * Mesa's client relies on that in two commands:
 *
 *  - TRANSFER_PUT2 (protocol 2): newer Mesa (25, for one) adds the
 *    transfer's data size, rounded up to dwords, to the length field, but
 *    sends only the 10-dword header: the data is in the resource's shared
 *    memory. The message is those 10 dwords; the length field must be
 *    either 10 (Mesa 22) or 10 plus the header's data size in dwords.
 *  - TRANSFER_PUT (protocol 0): the 11-dword header is followed by exactly
 *    data size bytes, not rounded up, while the length field says 11 plus
 *    the data size rounded up to dwords. The message is header and data;
 *    the length field must say what Mesa says.
 *
 * A message after one whose size is not a multiple of four (CREATE_RENDERER
 * with an odd name, TRANSFER_PUT with odd data) is moved to a dword
 * boundary before it is handed out.
 *
 * Pure code, no I/O: unit-testable and fuzzable.
 */
#ifndef MEDIATOR_VTEST_PARSER_H
#define MEDIATOR_VTEST_PARSER_H

#include <stddef.h>
#include <stdint.h>

#define VTEST_HDR_DWORDS 2

enum vtest_cmd {
	VCMD_GET_CAPS = 1,
	VCMD_RESOURCE_CREATE = 2,
	VCMD_RESOURCE_UNREF = 3,
	VCMD_TRANSFER_GET = 4,
	VCMD_TRANSFER_PUT = 5,
	VCMD_SUBMIT_CMD = 6,
	VCMD_RESOURCE_BUSY_WAIT = 7,
	VCMD_CREATE_RENDERER = 8,
	VCMD_GET_CAPS2 = 9,
	VCMD_PING_PROTOCOL_VERSION = 10,
	VCMD_PROTOCOL_VERSION = 11,
	VCMD_RESOURCE_CREATE2 = 12,
	VCMD_TRANSFER_GET2 = 13,
	VCMD_TRANSFER_PUT2 = 14,
};

/* Payload sizes in dwords (vtest_protocol.h). */
#define VCMD_RES_CREATE_SIZE	   10
#define VCMD_RES_CREATE2_SIZE	   11
#define VCMD_RES_UNREF_SIZE	   1
#define VCMD_TRANSFER_HDR_SIZE	   11
#define VCMD_TRANSFER2_HDR_SIZE	   10
#define VCMD_BUSY_WAIT_SIZE	   2
#define VCMD_PROTOCOL_VERSION_SIZE 1
#define VCMD_BUSY_WAIT_FLAG_WAIT   1

/* Highest protocol version served. Version 3 adds venus, blob and sync
 * objects, which the GL client does not need; version 1 is deprecated and
 * answered as 0, as the reference server does. */
#define VTEST_PROTOCOL_VERSION_MAX 2

/* The commands of protocol version 3 (vtest_protocol.h), never offered:
 * the parser refuses them. */
#define VCMD_V3_FIRST 15 /* VCMD_GET_PARAM */
#define VCMD_V3_LAST  24 /* VCMD_SUBMIT_CMD2 */

/*
 * Longest process name accepted in CREATE_RENDERER; Mesa sends at most 64
 * bytes including the NUL.
 */
#define VTEST_MAX_NAME_BYTES 1024

/*
 * Default limit for any payload the server receives and buffers. A command
 * buffer from Mesa's virgl driver is at most VIRGL_MAX_CMDBUF_DWORDS (64 Ki
 * dwords, 256 KiB); a v0 TRANSFER_PUT carries pixel data inline, 64 MiB
 * holds a 4096x4096 RGBA8 level. The data size a TRANSFER_PUT2 header
 * announces is not under it: those bytes never travel on the socket (they
 * are in the resource's shared memory, whose size the server chose).
 */
#define VTEST_DEFAULT_MAX_PAYLOAD (64u << 20)

struct vtest_parser;

struct vtest_msg {
	uint32_t cmd;
	uint32_t length_dw;	 /* the header's length field (bytes for CREATE_RENDERER) */
	size_t payload_bytes;	 /* what followed the header (see above: not always length_dw) */
	const uint32_t *payload; /* valid until the next vtest_parser_* call */
};

/* @max_payload: largest payload in bytes accepted (0: VTEST_DEFAULT_MAX_PAYLOAD). */
struct vtest_parser *vtest_parser_create(size_t max_payload);
/* NULL is fine. */
void vtest_parser_destroy(struct vtest_parser *parser);

/*
 * Where the next bytes from the socket go: *@len bytes free at the
 * returned pointer (never 0 unless a whole message is waiting to be taken
 * with vtest_parser_next()). Returns NULL on allocation failure.
 */
void *vtest_parser_space(struct vtest_parser *parser, size_t *len);
/* @n bytes were written into the space. */
void vtest_parser_commit(struct vtest_parser *parser, size_t n);

/*
 * Takes the next whole message. Returns 1 and fills @msg, 0 when more
 * bytes are needed, or a negative errno: -EPROTO for an unknown command or
 * one of protocol version 3, -EMSGSIZE for a length field the command does
 * not allow (for the transfers: that does not agree with the header's data
 * size) or a payload beyond the limit. After an error the parser stays in
 * error; *@what (may be NULL) points to a static description.
 */
int vtest_parser_next(struct vtest_parser *parser, struct vtest_msg *msg, const char **what);

/* Bytes received but not yet taken as messages (for "disconnected mid-message"). */
size_t vtest_parser_pending(const struct vtest_parser *parser);

/* Name of a command for log lines ("SUBMIT_CMD"), or "unknown". */
const char *vtest_cmd_name(uint32_t cmd);

#endif
