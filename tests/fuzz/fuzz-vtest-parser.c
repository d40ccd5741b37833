// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: arbitrary bytes from a vtest client, fed to the parser
 * in chunks whose sizes the input also chooses; every message taken out
 * of it that is a SUBMIT_CMD goes through the command-buffer walk. Neither
 * may read outside its buffers or crash (run under ASan), and every
 * message handed out must keep the framing rules of vtest_parser.h (a
 * TRANSFER_PUT2 is its header whatever its length says, a TRANSFER_PUT is
 * its header and data size bytes, payloads are aligned): a message that
 * breaks one aborts. The recorded Mesa sessions make a good seed corpus:
 *
 *   CC=clang meson setup build-fuzz -Dfuzzing=true \
 *       -Db_sanitize=address,undefined -Db_lundef=false
 *   mkdir -p corpus && cp tests/data/vtest/mesa* corpus/
 *   build-fuzz/tests/fuzz/fuzz-vtest-parser -max_total_time=60 corpus
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "predict.h"
#include "worker/vtest/vtest_parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The framing rules every message handed out keeps. */
static void check_message(const struct vtest_msg *m, size_t limit)
{
	if ((uintptr_t)m->payload % sizeof(uint32_t))
		abort();
	switch (m->cmd) {
	case VCMD_TRANSFER_PUT2:
		if (m->payload_bytes != VCMD_TRANSFER2_HDR_SIZE * sizeof(uint32_t))
			abort();
		break;
	case VCMD_TRANSFER_PUT:
		if (m->payload_bytes != VCMD_TRANSFER_HDR_SIZE * sizeof(uint32_t) + m->payload[10])
			abort();
		break;
	case VCMD_CREATE_RENDERER:
		if (m->payload_bytes != m->length_dw)
			abort();
		break;
	default:
		if (m->payload_bytes != (size_t)m->length_dw * sizeof(uint32_t))
			abort();
	}
	if (m->payload_bytes > limit + VCMD_TRANSFER_HDR_SIZE * sizeof(uint32_t))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A small limit, so that large lengths are exercised both ways. */
	struct vtest_parser *p = vtest_parser_create(1 << 16);
	size_t pos = 0;

	if (!p)
		return 0;
	while (pos < size) {
		size_t chunk = 1 + data[pos] % 64, space_len;
		void *space;
		struct vtest_msg m;
		int r;

		pos++;
		if (chunk > size - pos)
			chunk = size - pos;
		space = vtest_parser_space(p, &space_len);
		if (!space)
			break;
		if (chunk > space_len)
			chunk = space_len;
		memcpy(space, data + pos, chunk);
		vtest_parser_commit(p, chunk);
		pos += chunk;
		while ((r = vtest_parser_next(p, &m, NULL)) == 1) {
			check_message(&m, 1 << 16);
			if (m.cmd == VCMD_SUBMIT_CMD) {
				struct predict_cmd_counts c;

				predict_cmd_count(m.payload, m.length_dw, &c, NULL, NULL);
			}
		}
		if (r < 0)
			break;
	}
	vtest_parser_destroy(p);
	return 0;
}
