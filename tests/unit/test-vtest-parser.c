/*
 * Tests of vtest message framing: whole and split messages, Mesa's
 * handshake byte for byte, CREATE_RENDERER's byte-counted length, and every
 * malformed header refused before its payload is awaited.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vtest_parser.h"

/* Feeds @len bytes into @p, in chunks of at most @chunk bytes. */
static void feed(struct vtest_parser *p, const void *data, size_t len, size_t chunk)
{
	const uint8_t *src = data;

	while (len) {
		size_t space_len;
		void *space = vtest_parser_space(p, &space_len);
		size_t n = len < chunk ? len : chunk;

		assert_non_null(space);
		assert_true(space_len > 0);
		if (n > space_len)
			n = space_len;
		memcpy(space, src, n);
		vtest_parser_commit(p, n);
		src += n;
		len -= n;
	}
}

static void whole_message_is_returned_once(void **state)
{
	struct vtest_parser *p = vtest_parser_create(0);
	const uint32_t msg[] = {2, VCMD_RESOURCE_BUSY_WAIT, 7, 1};
	struct vtest_msg m;

	feed(p, msg, sizeof(msg), sizeof(msg));
	assert_int_equal(vtest_parser_next(p, &m, NULL), 1);
	assert_int_equal(m.cmd, VCMD_RESOURCE_BUSY_WAIT);
	assert_int_equal(m.length_dw, 2);
	assert_int_equal(m.payload[0], 7);
	assert_int_equal(m.payload[1], 1);
	assert_int_equal(vtest_parser_next(p, &m, NULL), 0);
	assert_int_equal(vtest_parser_pending(p), 0);
	vtest_parser_destroy(p);
}

static void message_split_byte_by_byte_is_reassembled(void **state)
{
	struct vtest_parser *p = vtest_parser_create(0);
	uint32_t msg[2 + 100];
	struct vtest_msg m;

	msg[0] = 100;
	msg[1] = VCMD_SUBMIT_CMD;
	for (uint32_t i = 0; i < 100; i++)
		msg[2 + i] = i * 3;
	for (size_t i = 0; i < sizeof(msg); i++) {
		assert_int_equal(vtest_parser_next(p, &m, NULL), 0);
		feed(p, (uint8_t *)msg + i, 1, 1);
	}
	assert_int_equal(vtest_parser_next(p, &m, NULL), 1);
	assert_int_equal(m.length_dw, 100);
	assert_memory_equal(m.payload, msg + 2, 400);
	vtest_parser_destroy(p);
}

/* Mesa's connect sequence: CREATE_RENDERER with an odd-length name (its
 * length field counts bytes), then PING_PROTOCOL_VERSION and a BUSY_WAIT
 * probe, all in one write. */
static void mesa_handshake_with_odd_name_keeps_later_payloads_aligned(void **state)
{
	struct vtest_parser *p = vtest_parser_create(0);
	uint8_t buf[64];
	const char name[] = "es2gears_x11"; /* 13 bytes with the NUL */
	uint32_t hdr[2] = {sizeof(name), VCMD_CREATE_RENDERER};
	const uint32_t rest[] = {0, VCMD_PING_PROTOCOL_VERSION, 2, VCMD_RESOURCE_BUSY_WAIT, 0, 0};
	size_t n = 0;
	struct vtest_msg m;

	memcpy(buf, hdr, sizeof(hdr));
	n += sizeof(hdr);
	memcpy(buf + n, name, sizeof(name));
	n += sizeof(name);
	memcpy(buf + n, rest, sizeof(rest));
	n += sizeof(rest);
	feed(p, buf, n, n);

	assert_int_equal(vtest_parser_next(p, &m, NULL), 1);
	assert_int_equal(m.cmd, VCMD_CREATE_RENDERER);
	assert_int_equal(m.payload_bytes, sizeof(name));
	assert_string_equal((const char *)m.payload, name);
	assert_int_equal(vtest_parser_next(p, &m, NULL), 1);
	assert_int_equal(m.cmd, VCMD_PING_PROTOCOL_VERSION);
	assert_int_equal(vtest_parser_next(p, &m, NULL), 1);
	assert_int_equal(m.cmd, VCMD_RESOURCE_BUSY_WAIT);
	assert_int_equal((uintptr_t)m.payload % sizeof(uint32_t), 0);
	assert_int_equal(m.payload[0], 0);
	vtest_parser_destroy(p);
}

struct bad_case {
	const char *description;
	uint32_t length;
	uint32_t cmd;
	int error;
};

static const struct bad_case bad_cases[] = {
    {"unknown command number", 0, 999, -EPROTO},
    {"command 0 does not exist", 0, 0, -EPROTO},
    {"protocol-3 command not served", 1, 15, -EPROTO},
    {"BUSY_WAIT shorter than its two dwords", 1, VCMD_RESOURCE_BUSY_WAIT, -EMSGSIZE},
    {"BUSY_WAIT longer than its two dwords", 3, VCMD_RESOURCE_BUSY_WAIT, -EMSGSIZE},
    {"RESOURCE_CREATE2 short", 10, VCMD_RESOURCE_CREATE2, -EMSGSIZE},
    {"TRANSFER_PUT without its header", 5, VCMD_TRANSFER_PUT, -EMSGSIZE},
    {"GET_CAPS with a payload", 1, VCMD_GET_CAPS, -EMSGSIZE},
    {"SUBMIT_CMD beyond the size limit", 0x7fffffff, VCMD_SUBMIT_CMD, -EMSGSIZE},
    {"SUBMIT_CMD of the largest length", 0xffffffff, VCMD_SUBMIT_CMD, -EMSGSIZE},
    {"CREATE_RENDERER name over the limit", VTEST_MAX_NAME_BYTES + 1, VCMD_CREATE_RENDERER,
     -EMSGSIZE},
};

static void malformed_headers_are_refused_before_their_payload(void **state)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct vtest_parser *p = vtest_parser_create(0);
		uint32_t hdr[2] = {c->length, c->cmd};
		struct vtest_msg m;
		const char *what = NULL;

		feed(p, hdr, sizeof(hdr), sizeof(hdr));
		if (vtest_parser_next(p, &m, &what) != c->error)
			fail_msg("case '%s': wrong result", c->description);
		assert_non_null(what);
		/* The parser stays in error. */
		assert_int_equal(vtest_parser_next(p, &m, NULL), c->error);
		vtest_parser_destroy(p);
	}
}

static void truncated_message_waits_for_more(void **state)
{
	struct vtest_parser *p = vtest_parser_create(0);
	const uint32_t partial[] = {100, VCMD_SUBMIT_CMD, 1, 2, 3};
	struct vtest_msg m;

	feed(p, partial, sizeof(partial), sizeof(partial));
	assert_int_equal(vtest_parser_next(p, &m, NULL), 0);
	assert_int_equal(vtest_parser_pending(p), sizeof(partial));
	vtest_parser_destroy(p);
}

static void large_message_grows_the_buffer_and_shrinks_it_after(void **state)
{
	struct vtest_parser *p = vtest_parser_create(0);
	const size_t ndw = 256 * 1024; /* 1 MiB payload */
	uint32_t *big = calloc(ndw + 2, sizeof(uint32_t));
	const uint32_t small[] = {0, VCMD_GET_CAPS2};
	struct vtest_msg m;
	size_t len;

	big[0] = (uint32_t)ndw;
	big[1] = VCMD_SUBMIT_CMD;
	big[2 + ndw - 1] = 0xabcdef;
	feed(p, big, (ndw + 2) * sizeof(uint32_t), 65536);
	assert_int_equal(vtest_parser_next(p, &m, NULL), 1);
	assert_int_equal(m.payload[ndw - 1], 0xabcdef);
	feed(p, small, sizeof(small), sizeof(small));
	assert_int_equal(vtest_parser_next(p, &m, NULL), 1);
	assert_int_equal(m.cmd, VCMD_GET_CAPS2);
	assert_non_null(vtest_parser_space(p, &len));
	assert_true(len <= 64 * 1024);
	free(big);
	vtest_parser_destroy(p);
}

static void configured_limit_is_enforced(void **state)
{
	struct vtest_parser *p = vtest_parser_create(1024);
	const uint32_t hdr[] = {257, VCMD_SUBMIT_CMD};
	struct vtest_msg m;

	feed(p, hdr, sizeof(hdr), sizeof(hdr));
	assert_int_equal(vtest_parser_next(p, &m, NULL), -EMSGSIZE);
	vtest_parser_destroy(p);
}

static void command_names_are_known(void **state)
{
	assert_string_equal(vtest_cmd_name(VCMD_SUBMIT_CMD), "SUBMIT_CMD");
	assert_string_equal(vtest_cmd_name(12345), "unknown");
}

static void destroy_accepts_null(void **state)
{
	vtest_parser_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(whole_message_is_returned_once),
	    cmocka_unit_test(message_split_byte_by_byte_is_reassembled),
	    cmocka_unit_test(mesa_handshake_with_odd_name_keeps_later_payloads_aligned),
	    cmocka_unit_test(malformed_headers_are_refused_before_their_payload),
	    cmocka_unit_test(truncated_message_waits_for_more),
	    cmocka_unit_test(large_message_grows_the_buffer_and_shrinks_it_after),
	    cmocka_unit_test(configured_limit_is_enforced),
	    cmocka_unit_test(command_names_are_known),
	    cmocka_unit_test(destroy_accepts_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
