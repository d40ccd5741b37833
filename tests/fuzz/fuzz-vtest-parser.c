/*
 * libFuzzer target: arbitrary bytes from a vtest client, fed to the parser
 * in chunks whose sizes the input also chooses; every message taken out
 * of it that is a SUBMIT_CMD goes through the command-buffer walk. Neither
 * may read outside its buffers or crash (run under ASan).
 *
 *   CC=clang meson setup build-fuzz -Dfuzzing=true \
 *       -Db_sanitize=address,undefined -Db_lundef=false
 *   build-fuzz/tests/fuzz/fuzz-vtest-parser -max_total_time=60
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "predict_cmd.h"
#include "vtest_parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
