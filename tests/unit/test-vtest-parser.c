// SPDX-License-Identifier: MIT
/*
 * Tests of vtest message framing: whole and split messages, Mesa's
 * handshake byte for byte, CREATE_RENDERER's byte-counted length, the
 * transfers whose length field is not what travels (as the reference
 * server reads them), every malformed header refused before its payload is
 * awaited, and real Mesa 22 and Mesa 25 sessions recorded with
 * tests/tools/vtest-record (tests/data/vtest/README).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "predict.h"
#include "worker/vtest/vtest_parser.h"

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
    {"protocol-3 GET_PARAM not served", 1, 15, -EPROTO},
    {"protocol-3 RESOURCE_CREATE_BLOB not served", 6, 18, -EPROTO},
    {"protocol-3 SUBMIT_CMD2 not served", 1, 24, -EPROTO},
    {"command 25 does not exist", 0, 25, -EPROTO},
    {"BUSY_WAIT shorter than its two dwords", 1, VCMD_RESOURCE_BUSY_WAIT, -EMSGSIZE},
    {"BUSY_WAIT longer than its two dwords", 3, VCMD_RESOURCE_BUSY_WAIT, -EMSGSIZE},
    {"RESOURCE_CREATE2 short", 10, VCMD_RESOURCE_CREATE2, -EMSGSIZE},
    {"TRANSFER_PUT without its header", 5, VCMD_TRANSFER_PUT, -EMSGSIZE},
    {"TRANSFER_PUT2 without its header", 9, VCMD_TRANSFER_PUT2, -EMSGSIZE},
    {"TRANSFER_GET2 with data", 11, VCMD_TRANSFER_GET2, -EMSGSIZE},
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

/* A TRANSFER_PUT2 header as Mesa's vtest winsys writes it. */
static void put2_header(uint32_t msg[2 + VCMD_TRANSFER2_HDR_SIZE], uint32_t length,
			uint32_t data_size)
{
	memset(msg, 0, (2 + VCMD_TRANSFER2_HDR_SIZE) * sizeof(uint32_t));
	msg[0] = length;
	msg[1] = VCMD_TRANSFER_PUT2;
	msg[2] = 5;	  /* resource */
	msg[2 + 5] = 800; /* width */
	msg[2 + 6] = 480; /* height */
	msg[2 + 7] = 1;	  /* depth */
	msg[2 + 8] = data_size;
	msg[2 + 9] = 4096; /* offset into the resource's shared memory */
}

/*
 * Mesa 25 adds the data size in dwords to TRANSFER_PUT2's length field
 * but sends only the header (the pixels are in shared memory): an 800x480
 * RGBA window says 10 + 384000 dwords. The message is the header, and the
 * next message follows it directly.
 */
static void transfer_put2_length_with_its_data_size_takes_only_the_header(void **state)
{
	struct vtest_parser *p = vtest_parser_create(0);
	const uint32_t data_size = 800 * 480 * 4;
	uint32_t msg[2 + VCMD_TRANSFER2_HDR_SIZE + 4];
	struct vtest_msg m;

	put2_header(msg, VCMD_TRANSFER2_HDR_SIZE + data_size / 4, data_size);
	msg[2 + VCMD_TRANSFER2_HDR_SIZE] = 2;
	msg[2 + VCMD_TRANSFER2_HDR_SIZE + 1] = VCMD_RESOURCE_BUSY_WAIT;
	msg[2 + VCMD_TRANSFER2_HDR_SIZE + 2] = 5;
	msg[2 + VCMD_TRANSFER2_HDR_SIZE + 3] = VCMD_BUSY_WAIT_FLAG_WAIT;
	feed(p, msg, sizeof(msg), sizeof(msg));
	assert_int_equal(vtest_parser_next(p, &m, NULL), 1);
	assert_int_equal(m.cmd, VCMD_TRANSFER_PUT2);
	assert_int_equal(m.length_dw, VCMD_TRANSFER2_HDR_SIZE + data_size / 4);
	assert_int_equal(m.payload_bytes, VCMD_TRANSFER2_HDR_SIZE * sizeof(uint32_t));
	assert_int_equal(m.payload[8], data_size);
	assert_int_equal(vtest_parser_next(p, &m, NULL), 1);
	assert_int_equal(m.cmd, VCMD_RESOURCE_BUSY_WAIT);
	assert_int_equal(vtest_parser_pending(p), 0);
	vtest_parser_destroy(p);
}

/* Mesa 22 sends the header's own length; a data size that is no multiple
 * of four is rounded up in the length field. */
static void transfer_put2_lengths_of_mesa_22_and_odd_sizes_are_accepted(void **state)
{
	const struct {
		const char *description;
		uint32_t length, data_size;
	} cases[] = {
	    {"Mesa 22: the header's length", VCMD_TRANSFER2_HDR_SIZE, 1536000},
	    {"odd data size rounded up", VCMD_TRANSFER2_HDR_SIZE + 2, 5},
	    {"largest data size", VCMD_TRANSFER2_HDR_SIZE + UINT32_MAX / 4 + 1, UINT32_MAX},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vtest_parser *p = vtest_parser_create(0);
		uint32_t msg[2 + VCMD_TRANSFER2_HDR_SIZE];
		struct vtest_msg m;

		put2_header(msg, cases[i].length, cases[i].data_size);
		feed(p, msg, sizeof(msg), sizeof(msg));
		if (vtest_parser_next(p, &m, NULL) != 1)
			fail_msg("case '%s' refused", cases[i].description);
		assert_int_equal(m.payload_bytes, VCMD_TRANSFER2_HDR_SIZE * sizeof(uint32_t));
		vtest_parser_destroy(p);
	}
}

static void transfer_put2_length_matching_neither_is_refused(void **state)
{
	const struct {
		const char *description;
		uint32_t length, data_size;
	} cases[] = {
	    {"one dword more than header and data", VCMD_TRANSFER2_HDR_SIZE + 3, 8},
	    {"data part without data", VCMD_TRANSFER2_HDR_SIZE + 1, 0},
	    {"data part shorter than the size", VCMD_TRANSFER2_HDR_SIZE + 1, 8},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vtest_parser *p = vtest_parser_create(0);
		uint32_t msg[2 + VCMD_TRANSFER2_HDR_SIZE];
		struct vtest_msg m;
		const char *what = NULL;

		put2_header(msg, cases[i].length, cases[i].data_size);
		feed(p, msg, sizeof(msg), sizeof(msg));
		if (vtest_parser_next(p, &m, &what) != -EMSGSIZE)
			fail_msg("case '%s' not refused", cases[i].description);
		assert_non_null(what);
		vtest_parser_destroy(p);
	}
}

/*
 * Protocol 0: TRANSFER_PUT's data follows its header as data size bytes,
 * not rounded up, while its length field is rounded up to dwords (Mesa's
 * virgl_vtest_send_transfer_put_data()). The next message starts right
 * after the data, and is handed out aligned.
 */
static void transfer_put_data_is_as_long_as_its_size_not_its_length(void **state)
{
	struct vtest_parser *p = vtest_parser_create(0);
	uint8_t buf[8 + 44 + 6 + 16];
	uint32_t hdr[2 + VCMD_TRANSFER_HDR_SIZE] = {VCMD_TRANSFER_HDR_SIZE + 2, VCMD_TRANSFER_PUT};
	const uint8_t data[6] = {1, 2, 3, 4, 5, 6};
	const uint32_t busy[] = {2, VCMD_RESOURCE_BUSY_WAIT, 9, 0};
	struct vtest_msg m;

	hdr[2] = 9;	 /* resource */
	hdr[2 + 7] = 6;	 /* width */
	hdr[2 + 10] = 6; /* data size */
	memcpy(buf, hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), data, sizeof(data));
	memcpy(buf + sizeof(hdr) + sizeof(data), busy, sizeof(busy));
	feed(p, buf, sizeof(buf), sizeof(buf));
	assert_int_equal(vtest_parser_next(p, &m, NULL), 1);
	assert_int_equal(m.cmd, VCMD_TRANSFER_PUT);
	assert_int_equal(m.payload_bytes, 44 + 6);
	assert_memory_equal((const uint8_t *)m.payload + 44, data, sizeof(data));
	assert_int_equal(vtest_parser_next(p, &m, NULL), 1);
	assert_int_equal(m.cmd, VCMD_RESOURCE_BUSY_WAIT);
	assert_int_equal((uintptr_t)m.payload % sizeof(uint32_t), 0);
	assert_int_equal(m.payload[0], 9);
	vtest_parser_destroy(p);
}

static void transfer_put_length_not_matching_its_size_is_refused(void **state)
{
	struct vtest_parser *p = vtest_parser_create(0);
	uint32_t msg[2 + VCMD_TRANSFER_HDR_SIZE + 4] = {VCMD_TRANSFER_HDR_SIZE + 4,
							VCMD_TRANSFER_PUT};
	struct vtest_msg m;

	msg[2 + 10] = 8; /* two dwords of data, but the length says four */
	feed(p, msg, sizeof(msg), sizeof(msg));
	assert_int_equal(vtest_parser_next(p, &m, NULL), -EMSGSIZE);
	vtest_parser_destroy(p);
}

/* A data size beyond the limit is refused as soon as the header is in,
 * and no room is made for it. */
static void transfer_put_size_beyond_the_limit_is_refused_before_its_data(void **state)
{
	struct vtest_parser *p = vtest_parser_create(1024);
	uint32_t hdr[2 + VCMD_TRANSFER_HDR_SIZE] = {VCMD_TRANSFER_HDR_SIZE + 1, VCMD_TRANSFER_PUT};
	struct vtest_msg m;
	size_t len;

	hdr[2 + 10] = 1u << 30;
	feed(p, hdr, sizeof(hdr), sizeof(hdr));
	assert_non_null(vtest_parser_space(p, &len));
	assert_true(len <= 64 * 1024);
	assert_int_equal(vtest_parser_next(p, &m, NULL), -EMSGSIZE);
	vtest_parser_destroy(p);
}

/* ---- recorded sessions ------------------------------------------------ */

struct recording {
	const char *file;
	const char *client;   /* CREATE_RENDERER's name */
	uint32_t versions[2]; /* PROTOCOL_VERSION asked, in order (0: none) */
	unsigned min_groups;  /* SUBMIT_CMDs in the recording, at least */
};

/*
 * Recorded against virgl_test_server 0.10.4, which answers version 3 to
 * Mesa 25; Mesa 25 then reads caps older than it wants for version 3 and
 * negotiates again, for 2, on the same connection. Mesa 22 asks for 2.
 * The es2gears and glmark2 files are the first 64 and 96 KiB of longer
 * sessions, so they end inside a message.
 */
static const struct recording recordings[] = {
    {"mesa22-oes-texture-float.vtest", "oes_texture_float", {2, 0}, 7},
    {"mesa25-oes-texture-float.vtest", "oes_texture_float", {3, 2}, 7},
    {"mesa22-es2gears-x11.vtest", "es2gears_x11.x86_64-linux-gnu", {2, 0}, 10},
    {"mesa25-es2gears-x11.vtest", "es2gears_x11.x86_64-linux-gnu", {3, 2}, 10},
    {"mesa22-glmark2-es2-texture.vtest", "glmark2-es2", {2, 0}, 15},
    {"mesa25-glmark2-es2-texture.vtest", "glmark2-es2", {3, 2}, 15},
};

static uint8_t *read_recording(const char *name, size_t *len)
{
	char path[512];
	FILE *f;
	uint8_t *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", VTEST_DATA_DIR, name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* What a replay of a recording saw. */
struct replay {
	unsigned messages, groups, versions_asked;
	uint32_t versions[2];
	char client[64];
	bool only_served_commands;
	/* with a predict_ctx: each group's features, in order */
	struct predict_ctx *ctx;
	struct predict_features features[16];
};

static void replay_message(struct replay *r, const struct vtest_msg *m)
{
	const uint32_t *q = m->payload;

	r->messages++;
	if (m->cmd < VCMD_GET_CAPS || m->cmd > VCMD_TRANSFER_PUT2)
		r->only_served_commands = false;
	if (m->cmd == VCMD_CREATE_RENDERER)
		snprintf(r->client, sizeof(r->client), "%.*s", (int)m->payload_bytes,
			 (const char *)q);
	if (m->cmd == VCMD_PROTOCOL_VERSION && r->versions_asked < 2)
		r->versions[r->versions_asked++] = q[0];
	if (!r->ctx)
		goto count;
	if (m->cmd == VCMD_RESOURCE_CREATE2) {
		const struct predict_resource_desc desc = {
		    .target = q[1],
		    .format = q[2],
		    .bind = q[3],
		    .width = q[4],
		    .height = q[5],
		    .depth = q[6],
		    .array_size = q[7],
		    .last_level = q[8],
		    .nr_samples = q[9],
		};

		assert_int_equal(predict_ctx_resource_create(r->ctx, q[0], &desc), 0);
	} else if (m->cmd == VCMD_RESOURCE_UNREF) {
		predict_ctx_resource_destroy(r->ctx, q[0]);
	} else if (m->cmd == VCMD_SUBMIT_CMD && r->groups < 16) {
		struct predict_decode_error err;

		assert_int_equal(predict_ctx_submit(r->ctx, q, m->length_dw,
						    &r->features[r->groups], NULL, &err),
				 0);
	}
count:
	if (m->cmd == VCMD_SUBMIT_CMD)
		r->groups++;
}

/* Feeds a recording in @chunk-byte reads, as a socket might deliver it. */
static void replay(const char *file, size_t chunk, struct replay *r)
{
	size_t len, pos = 0;
	uint8_t *data = read_recording(file, &len);
	struct vtest_parser *p = vtest_parser_create(0);
	struct vtest_msg m;
	const char *what = NULL;
	int ret;

	r->only_served_commands = true;
	while (pos < len) {
		size_t space_len, n = len - pos < chunk ? len - pos : chunk;
		void *space = vtest_parser_space(p, &space_len);

		assert_non_null(space);
		assert_true(space_len > 0);
		if (n > space_len)
			n = space_len;
		memcpy(space, data + pos, n);
		vtest_parser_commit(p, n);
		pos += n;
		while ((ret = vtest_parser_next(p, &m, &what)) == 1)
			replay_message(r, &m);
		if (ret < 0)
			fail_msg("%s: refused after %u messages: %s", file, r->messages, what);
	}
	/* What is left is the start of one message cut off by the recording. */
	assert_true(vtest_parser_pending(p) < len);
	vtest_parser_destroy(p);
	free(data);
}

static void recorded_mesa_sessions_frame_into_whole_messages(void **state)
{
	const size_t chunks[] = {7, 4096, 1 << 20};

	for (size_t i = 0; i < sizeof(recordings) / sizeof(recordings[0]); i++) {
		const struct recording *rec = &recordings[i];

		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			struct replay r = {0};

			replay(rec->file, chunks[c], &r);
			if (!r.only_served_commands)
				fail_msg("%s: a command outside protocol 0-2", rec->file);
			assert_string_equal(r.client, rec->client);
			assert_int_equal(r.versions[0], rec->versions[0]);
			assert_int_equal(r.versions[1], rec->versions[1]);
			if (r.groups < rec->min_groups)
				fail_msg("%s: %u groups", rec->file, r.groups);
		}
	}
}

/*
 * The same program on Mesa 22 and Mesa 25 gives the decoder the same
 * work, group by group: the streams differ in their shaders' TGSI (so the
 * shader-weighted features may differ), not in what is drawn, cleared or
 * transferred. Texture uploads travel as transfers in the command stream
 * under both (COPY_TRANSFER3D from shared memory), never as vtest data.
 */
static void mesa22_and_mesa25_streams_give_the_same_features(void **state)
{
	static const enum predict_feature same[] = {
	    PF_GROUP,	       PF_CLEAR_C,     PF_CLEAR_D,     PF_CLEAR_S,
	    PF_CLEAR_CD,       PF_CLEAR_CS,    PF_CLEAR_DS,    PF_CLEAR_CDS,
	    PF_DRAWS,	       PF_VERTICES,    PF_FRAGMENTS,   PF_FS_TEX_WORK,
	    PF_TRANSFER_BYTES, PF_BLIT_PIXELS, PF_COPY_PIXELS, PF_CLEAR_TEX_PIXELS,
	};
	struct replay r22 = {.ctx = predict_ctx_create()};
	struct replay r25 = {.ctx = predict_ctx_create()};
	double transferred = 0;

	replay("mesa22-oes-texture-float.vtest", 4096, &r22);
	replay("mesa25-oes-texture-float.vtest", 4096, &r25);
	assert_int_equal(r22.groups, r25.groups);
	for (unsigned g = 0; g < r22.groups && g < 16; g++) {
		for (size_t f = 0; f < sizeof(same) / sizeof(same[0]); f++) {
			if (r22.features[g].x[same[f]] != r25.features[g].x[same[f]])
				fail_msg("group %u: %s is %g under Mesa 22, %g under Mesa 25", g,
					 predict_feature_name(same[f]), r22.features[g].x[same[f]],
					 r25.features[g].x[same[f]]);
		}
		transferred += r25.features[g].x[PF_TRANSFER_BYTES];
	}
	/* The test's float textures were uploaded, and counted. */
	assert_true(transferred > 0);
	predict_ctx_destroy(r22.ctx);
	predict_ctx_destroy(r25.ctx);
}

static void command_names_are_known(void **state)
{
	assert_string_equal(vtest_cmd_name(VCMD_SUBMIT_CMD), "SUBMIT_CMD");
	assert_string_equal(vtest_cmd_name(VCMD_TRANSFER_PUT2), "TRANSFER_PUT2");
	assert_string_equal(vtest_cmd_name(18), "protocol-3 command");
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
	    cmocka_unit_test(transfer_put2_length_with_its_data_size_takes_only_the_header),
	    cmocka_unit_test(transfer_put2_lengths_of_mesa_22_and_odd_sizes_are_accepted),
	    cmocka_unit_test(transfer_put2_length_matching_neither_is_refused),
	    cmocka_unit_test(transfer_put_data_is_as_long_as_its_size_not_its_length),
	    cmocka_unit_test(transfer_put_length_not_matching_its_size_is_refused),
	    cmocka_unit_test(transfer_put_size_beyond_the_limit_is_refused_before_its_data),
	    cmocka_unit_test(recorded_mesa_sessions_frame_into_whole_messages),
	    cmocka_unit_test(mesa22_and_mesa25_streams_give_the_same_features),
	    cmocka_unit_test(command_names_are_known),
	    cmocka_unit_test(destroy_accepts_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
