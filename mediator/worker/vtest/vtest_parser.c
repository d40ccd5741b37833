// SPDX-License-Identifier: MIT
/*
 * vtest message framing (see vtest_parser.h).
 *
 * The buffer holds at most one message being assembled plus whatever
 * followed it in the same read. Consumed bytes are dropped by moving the
 * rest to the front when the next space is requested, so a message is
 * always contiguous and dword-aligned for the handlers.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "worker/vtest/vtest_parser.h"

#define HDR_BYTES	 (VTEST_HDR_DWORDS * sizeof(uint32_t))
#define INITIAL_CAPACITY (64u * 1024u)
/* Reads never ask for less than this, so that small messages batch up. */
#define MIN_READ 4096u

struct vtest_parser {
	uint32_t *buf;
	size_t capacity; /* bytes */
	size_t start;	 /* first byte not yet taken */
	size_t end;	 /* one past the last byte received */
	size_t max_payload;
	int error;
	const char *what;
};

/* How a command's payload size follows from its header (see vtest_parser.h). */
enum framing {
	FRAME_DWORDS,	   /* the length field, in dwords */
	FRAME_BYTES,	   /* the length field, in bytes (CREATE_RENDERER) */
	FRAME_PUT_INLINE,  /* TRANSFER_PUT: 11-dword header, then data size bytes */
	FRAME_PUT2_HEADER, /* TRANSFER_PUT2: the 10-dword header only */
};

struct cmd_shape {
	const char *name;
	uint32_t min_dw; /* smallest length field allowed */
	uint32_t max_dw; /* largest length field allowed, UINT32_MAX: the parser's limit */
	enum framing framing;
};

static const struct cmd_shape shapes[] = {
    [VCMD_GET_CAPS] = {"GET_CAPS", 0, 0, FRAME_DWORDS},
    [VCMD_RESOURCE_CREATE] = {"RESOURCE_CREATE", VCMD_RES_CREATE_SIZE, VCMD_RES_CREATE_SIZE,
			      FRAME_DWORDS},
    [VCMD_RESOURCE_UNREF] = {"RESOURCE_UNREF", VCMD_RES_UNREF_SIZE, VCMD_RES_UNREF_SIZE,
			     FRAME_DWORDS},
    [VCMD_TRANSFER_GET] = {"TRANSFER_GET", VCMD_TRANSFER_HDR_SIZE, VCMD_TRANSFER_HDR_SIZE,
			   FRAME_DWORDS},
    [VCMD_TRANSFER_PUT] = {"TRANSFER_PUT", VCMD_TRANSFER_HDR_SIZE, UINT32_MAX, FRAME_PUT_INLINE},
    [VCMD_SUBMIT_CMD] = {"SUBMIT_CMD", 0, UINT32_MAX, FRAME_DWORDS},
    [VCMD_RESOURCE_BUSY_WAIT] = {"RESOURCE_BUSY_WAIT", VCMD_BUSY_WAIT_SIZE, VCMD_BUSY_WAIT_SIZE,
				 FRAME_DWORDS},
    [VCMD_CREATE_RENDERER] = {"CREATE_RENDERER", 0, VTEST_MAX_NAME_BYTES, FRAME_BYTES},
    [VCMD_GET_CAPS2] = {"GET_CAPS2", 0, 0, FRAME_DWORDS},
    [VCMD_PING_PROTOCOL_VERSION] = {"PING_PROTOCOL_VERSION", 0, 0, FRAME_DWORDS},
    [VCMD_PROTOCOL_VERSION] = {"PROTOCOL_VERSION", VCMD_PROTOCOL_VERSION_SIZE,
			       VCMD_PROTOCOL_VERSION_SIZE, FRAME_DWORDS},
    [VCMD_RESOURCE_CREATE2] = {"RESOURCE_CREATE2", VCMD_RES_CREATE2_SIZE, VCMD_RES_CREATE2_SIZE,
			       FRAME_DWORDS},
    [VCMD_TRANSFER_GET2] = {"TRANSFER_GET2", VCMD_TRANSFER2_HDR_SIZE, VCMD_TRANSFER2_HDR_SIZE,
			    FRAME_DWORDS},
    /* The largest length field is 10 plus a data size of UINT32_MAX bytes
     * in dwords; vtest_parser_next() checks it against the header. */
    [VCMD_TRANSFER_PUT2] = {"TRANSFER_PUT2", VCMD_TRANSFER2_HDR_SIZE,
			    VCMD_TRANSFER2_HDR_SIZE + (UINT32_MAX / 4 + 1), FRAME_PUT2_HEADER},
};

/* Index of the data size in the transfers' headers (vtest_protocol.h). */
#define TRANSFER_DATA_SIZE_DW  10 /* VCMD_TRANSFER_DATA_SIZE */
#define TRANSFER2_DATA_SIZE_DW 8  /* VCMD_TRANSFER2_DATA_SIZE */

const char *vtest_cmd_name(uint32_t cmd)
{
	if (cmd >= VCMD_V3_FIRST && cmd <= VCMD_V3_LAST)
		return "protocol-3 command";
	if (cmd >= sizeof(shapes) / sizeof(shapes[0]) || !shapes[cmd].name)
		return "unknown";
	return shapes[cmd].name;
}

struct vtest_parser *vtest_parser_create(size_t max_payload)
{
	struct vtest_parser *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->max_payload = max_payload ? max_payload : VTEST_DEFAULT_MAX_PAYLOAD;
	p->capacity = INITIAL_CAPACITY;
	p->buf = malloc(p->capacity);
	if (!p->buf) {
		free(p);
		return NULL;
	}
	return p;
}

void vtest_parser_destroy(struct vtest_parser *parser)
{
	if (!parser)
		return;
	free(parser->buf);
	free(parser);
}

static const uint8_t *bytes(const struct vtest_parser *p)
{
	return (const uint8_t *)p->buf;
}

static uint32_t dwords_for(uint32_t bytes)
{
	return bytes / 4 + (bytes % 4 != 0);
}

/*
 * Size in bytes of the message at p->start (header included), from its
 * already checked header. Sets *@known to false, and returns how many bytes
 * are needed to know it, when that depends on more than the header (the
 * data size of a v0 TRANSFER_PUT); 0 when not even the header is there.
 */
static size_t message_size(const struct vtest_parser *p, bool *known)
{
	uint32_t hdr[VTEST_HDR_DWORDS], data_size;

	*known = false;
	if (p->end - p->start < HDR_BYTES)
		return 0;
	memcpy(hdr, bytes(p) + p->start, HDR_BYTES);
	*known = true;
	switch (shapes[hdr[1]].framing) {
	case FRAME_BYTES:
		return HDR_BYTES + hdr[0];
	case FRAME_PUT2_HEADER:
		return HDR_BYTES + VCMD_TRANSFER2_HDR_SIZE * sizeof(uint32_t);
	case FRAME_PUT_INLINE:
		if (p->end - p->start < HDR_BYTES + VCMD_TRANSFER_HDR_SIZE * sizeof(uint32_t)) {
			*known = false;
			return HDR_BYTES + VCMD_TRANSFER_HDR_SIZE * sizeof(uint32_t);
		}
		memcpy(&data_size,
		       bytes(p) + p->start + HDR_BYTES + TRANSFER_DATA_SIZE_DW * sizeof(uint32_t),
		       sizeof(data_size));
		return HDR_BYTES + VCMD_TRANSFER_HDR_SIZE * sizeof(uint32_t) + (size_t)data_size;
	case FRAME_DWORDS:
	default:
		return HDR_BYTES + (size_t)hdr[0] * sizeof(uint32_t);
	}
}

static int fail(struct vtest_parser *p, int error, const char *what)
{
	p->error = error;
	p->what = what;
	return error;
}

/* Checks the header at p->start: known command, length field allowed. */
static int check_header(struct vtest_parser *p)
{
	uint32_t hdr[VTEST_HDR_DWORDS];
	const struct cmd_shape *shape;

	memcpy(hdr, bytes(p) + p->start, HDR_BYTES);
	if (hdr[1] >= VCMD_V3_FIRST && hdr[1] <= VCMD_V3_LAST)
		return fail(p, -EPROTO, "command of protocol version 3, which is not offered");
	if (hdr[1] >= sizeof(shapes) / sizeof(shapes[0]) || !shapes[hdr[1]].name)
		return fail(p, -EPROTO, "unknown command");
	shape = &shapes[hdr[1]];
	if (hdr[0] < shape->min_dw)
		return fail(p, -EMSGSIZE, "payload shorter than the command needs");
	if (shape->max_dw != UINT32_MAX && hdr[0] > shape->max_dw)
		return fail(p, -EMSGSIZE, "payload longer than the command allows");
	if (shape->framing == FRAME_BYTES && hdr[0] > p->max_payload)
		return fail(p, -EMSGSIZE, "payload beyond the size limit");
	if (shape->framing != FRAME_BYTES && shape->framing != FRAME_PUT2_HEADER &&
	    (size_t)hdr[0] * sizeof(uint32_t) > p->max_payload)
		return fail(p, -EMSGSIZE, "payload beyond the size limit");
	return 0;
}

/*
 * Checks what the transfers' headers say against their length field, once
 * the header is there (@payload: the dwords after the message header).
 */
static int check_transfer(struct vtest_parser *p, uint32_t cmd, uint32_t length_dw,
			  const uint8_t *payload)
{
	uint32_t data_size;

	if (cmd == VCMD_TRANSFER_PUT) {
		memcpy(&data_size, payload + TRANSFER_DATA_SIZE_DW * sizeof(uint32_t),
		       sizeof(data_size));
		if (data_size > p->max_payload)
			return fail(p, -EMSGSIZE, "payload beyond the size limit");
		if (length_dw != VCMD_TRANSFER_HDR_SIZE + dwords_for(data_size))
			return fail(p, -EMSGSIZE,
				    "TRANSFER_PUT length does not match its data size");
	} else if (cmd == VCMD_TRANSFER_PUT2) {
		memcpy(&data_size, payload + TRANSFER2_DATA_SIZE_DW * sizeof(uint32_t),
		       sizeof(data_size));
		if (length_dw != VCMD_TRANSFER2_HDR_SIZE &&
		    length_dw != VCMD_TRANSFER2_HDR_SIZE + dwords_for(data_size))
			return fail(p, -EMSGSIZE,
				    "TRANSFER_PUT2 length is neither its header's nor header and "
				    "data size");
	}
	return 0;
}

/*
 * Checks what has arrived of the message at p->start: its header, and for
 * the transfers their own header's data size, as soon as each is there,
 * so that no length is trusted before it is checked.
 */
static int check_pending(struct vtest_parser *p)
{
	uint32_t hdr[VTEST_HDR_DWORDS];
	size_t avail = p->end - p->start;
	size_t header_dw;
	int r;

	if (p->error)
		return p->error;
	if (avail < HDR_BYTES)
		return 0;
	r = check_header(p);
	if (r < 0)
		return r;
	memcpy(hdr, bytes(p) + p->start, HDR_BYTES);
	if (hdr[1] == VCMD_TRANSFER_PUT)
		header_dw = VCMD_TRANSFER_HDR_SIZE;
	else if (hdr[1] == VCMD_TRANSFER_PUT2)
		header_dw = VCMD_TRANSFER2_HDR_SIZE;
	else
		return 0;
	if (avail < HDR_BYTES + header_dw * sizeof(uint32_t))
		return 0;
	return check_transfer(p, hdr[1], hdr[0], bytes(p) + p->start + HDR_BYTES);
}

void *vtest_parser_space(struct vtest_parser *parser, size_t *len)
{
	struct vtest_parser *p = parser;
	bool known = false;
	size_t want = 0;
	size_t avail = p->end - p->start;

	/* A message found malformed gets no room: the next
	 * vtest_parser_next() reports it. */
	if (check_pending(p) == 0)
		want = message_size(p, &known);
	if (known && avail >= want) {
		*len = 0;
		return (uint8_t *)p->buf + p->end;
	}
	if (want < HDR_BYTES)
		want = HDR_BYTES;
	if (want < MIN_READ)
		want = MIN_READ;
	/* Move the unconsumed bytes to the front; messages stay aligned. */
	if (p->start) {
		memmove(p->buf, bytes(p) + p->start, avail);
		p->start = 0;
		p->end = avail;
	}
	if (want > p->capacity) {
		uint32_t *nbuf = realloc(p->buf, want);

		if (!nbuf)
			return NULL;
		p->buf = nbuf;
		p->capacity = want;
	} else if (p->capacity > INITIAL_CAPACITY && want <= INITIAL_CAPACITY &&
		   avail <= INITIAL_CAPACITY) {
		/* Give back the memory of a large message once it is done. */
		uint32_t *nbuf = realloc(p->buf, INITIAL_CAPACITY);

		if (nbuf) {
			p->buf = nbuf;
			p->capacity = INITIAL_CAPACITY;
		}
	}
	*len = p->capacity - p->end;
	return (uint8_t *)p->buf + p->end;
}

void vtest_parser_commit(struct vtest_parser *parser, size_t n)
{
	parser->end += n;
}

int vtest_parser_next(struct vtest_parser *parser, struct vtest_msg *msg, const char **what)
{
	struct vtest_parser *p = parser;
	uint32_t hdr[VTEST_HDR_DWORDS];
	bool known;
	size_t size;
	int r;

	r = check_pending(p);
	if (r < 0) {
		if (what)
			*what = p->what;
		return r;
	}
	size = message_size(p, &known);
	if (!known || p->end - p->start < size)
		return 0;
	memcpy(hdr, bytes(p) + p->start, HDR_BYTES);
	if (p->start % sizeof(uint32_t)) {
		/* Only after a message of a size that is not a multiple of four:
		 * move the bytes to the front so that every payload is
		 * dword-aligned. */
		memmove(p->buf, bytes(p) + p->start, p->end - p->start);
		p->end -= p->start;
		p->start = 0;
	}
	msg->length_dw = hdr[0];
	msg->cmd = hdr[1];
	msg->payload = (const uint32_t *)(bytes(p) + p->start + HDR_BYTES);
	msg->payload_bytes = size - HDR_BYTES;
	p->start += size;
	return 1;
}

size_t vtest_parser_pending(const struct vtest_parser *parser)
{
	return parser->end - parser->start;
}
