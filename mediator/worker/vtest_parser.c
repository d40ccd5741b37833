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

#include "vtest_parser.h"

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

struct cmd_shape {
	const char *name;
	uint32_t min_dw; /* smallest payload allowed */
	uint32_t max_dw; /* largest payload allowed, UINT32_MAX: the parser's limit */
};

static const struct cmd_shape shapes[] = {
    [VCMD_GET_CAPS] = {"GET_CAPS", 0, 0},
    [VCMD_RESOURCE_CREATE] = {"RESOURCE_CREATE", VCMD_RES_CREATE_SIZE, VCMD_RES_CREATE_SIZE},
    [VCMD_RESOURCE_UNREF] = {"RESOURCE_UNREF", VCMD_RES_UNREF_SIZE, VCMD_RES_UNREF_SIZE},
    [VCMD_TRANSFER_GET] = {"TRANSFER_GET", VCMD_TRANSFER_HDR_SIZE, VCMD_TRANSFER_HDR_SIZE},
    [VCMD_TRANSFER_PUT] = {"TRANSFER_PUT", VCMD_TRANSFER_HDR_SIZE, UINT32_MAX},
    [VCMD_SUBMIT_CMD] = {"SUBMIT_CMD", 0, UINT32_MAX},
    [VCMD_RESOURCE_BUSY_WAIT] = {"RESOURCE_BUSY_WAIT", VCMD_BUSY_WAIT_SIZE, VCMD_BUSY_WAIT_SIZE},
    [VCMD_CREATE_RENDERER] = {"CREATE_RENDERER", 0, VTEST_MAX_NAME_BYTES}, /* bytes */
    [VCMD_GET_CAPS2] = {"GET_CAPS2", 0, 0},
    [VCMD_PING_PROTOCOL_VERSION] = {"PING_PROTOCOL_VERSION", 0, 0},
    [VCMD_PROTOCOL_VERSION] = {"PROTOCOL_VERSION", VCMD_PROTOCOL_VERSION_SIZE,
			       VCMD_PROTOCOL_VERSION_SIZE},
    [VCMD_RESOURCE_CREATE2] = {"RESOURCE_CREATE2", VCMD_RES_CREATE2_SIZE, VCMD_RES_CREATE2_SIZE},
    [VCMD_TRANSFER_GET2] = {"TRANSFER_GET2", VCMD_TRANSFER2_HDR_SIZE, VCMD_TRANSFER2_HDR_SIZE},
    [VCMD_TRANSFER_PUT2] = {"TRANSFER_PUT2", VCMD_TRANSFER2_HDR_SIZE, VCMD_TRANSFER2_HDR_SIZE},
};

const char *vtest_cmd_name(uint32_t cmd)
{
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

/*
 * Payload size in bytes of a message with header @hdr. CREATE_RENDERER is
 * the one command whose length field counts bytes, not dwords (Mesa sends
 * strlen(name) + 1 there, and the reference server reads that many bytes).
 */
static size_t payload_bytes(const uint32_t hdr[VTEST_HDR_DWORDS])
{
	if (hdr[1] == VCMD_CREATE_RENDERER)
		return hdr[0];
	return (size_t)hdr[0] * sizeof(uint32_t);
}

/* Total size of the message at p->start if its header is there, else 0. */
static size_t message_size(const struct vtest_parser *p)
{
	uint32_t hdr[VTEST_HDR_DWORDS];

	if (p->end - p->start < HDR_BYTES)
		return 0;
	memcpy(hdr, bytes(p) + p->start, HDR_BYTES);
	return HDR_BYTES + payload_bytes(hdr);
}

static int fail(struct vtest_parser *p, int error, const char *what)
{
	p->error = error;
	p->what = what;
	return error;
}

static int check_header(struct vtest_parser *p)
{
	uint32_t hdr[VTEST_HDR_DWORDS];
	const struct cmd_shape *shape;

	memcpy(hdr, bytes(p) + p->start, HDR_BYTES);
	if (hdr[1] >= sizeof(shapes) / sizeof(shapes[0]) || !shapes[hdr[1]].name)
		return fail(p, -EPROTO, "unknown command");
	shape = &shapes[hdr[1]];
	if (hdr[0] < shape->min_dw)
		return fail(p, -EMSGSIZE, "payload shorter than the command needs");
	if (shape->max_dw != UINT32_MAX && hdr[0] > shape->max_dw)
		return fail(p, -EMSGSIZE, "payload longer than the command allows");
	if (payload_bytes(hdr) > p->max_payload)
		return fail(p, -EMSGSIZE, "payload beyond the size limit");
	return 0;
}

void *vtest_parser_space(struct vtest_parser *parser, size_t *len)
{
	struct vtest_parser *p = parser;
	size_t want = message_size(p);
	size_t avail = p->end - p->start;

	if (want && avail >= want) {
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
	size_t size;
	int r;

	if (p->error) {
		if (what)
			*what = p->what;
		return p->error;
	}
	if (p->end - p->start < HDR_BYTES)
		return 0;
	r = check_header(p);
	if (r < 0) {
		if (what)
			*what = p->what;
		return r;
	}
	size = message_size(p);
	if (p->end - p->start < size)
		return 0;
	memcpy(hdr, bytes(p) + p->start, HDR_BYTES);
	msg->length_dw = hdr[0];
	msg->cmd = hdr[1];
	if (p->start % sizeof(uint32_t)) {
		/* Only after a CREATE_RENDERER with an odd name length: move the
		 * bytes to the front so that every payload is dword-aligned. */
		memmove(p->buf, bytes(p) + p->start, p->end - p->start);
		p->end -= p->start;
		p->start = 0;
	}
	msg->payload = (const uint32_t *)(bytes(p) + p->start + HDR_BYTES);
	msg->payload_bytes = size - HDR_BYTES;
	p->start += size;
	return 1;
}

size_t vtest_parser_pending(const struct vtest_parser *parser)
{
	return parser->end - parser->start;
}
