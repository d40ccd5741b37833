// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: a packet a compromised worker sends mediatord on its
 * record channel (common/wire.h). The input's first 8 bytes are the time
 * it is read at; the rest is the packet, copied to a buffer of its own
 * size at an odd address, as recv() may leave it. wire_check() must never
 * read outside the packet (run under ASan), whatever its sizes, types and
 * fields; what it accepts must be what its parts accept (wire_frame()
 * gives whole messages, each passing wire_check_message()), and nothing
 * accepted may break a rule mediatord relies on afterwards.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts (a crash libFuzzer keeps) when an accepted message breaks what mediatord relies on. */
static void accepted_is_sound(const uint8_t *msg, size_t len, uint64_t now_ns)
{
	struct wire_header hdr;

	memcpy(&hdr, msg, sizeof(hdr));
	if (hdr.size != len)
		abort();
	if (hdr.type == WIRE_GROUP) {
		struct wire_group m;

		memcpy(&m, msg, sizeof(m));
		if (!memchr(m.model, 0, sizeof(m.model)) || m.end_ns > now_ns ||
		    m.request_ns > m.end_ns)
			abort();
	} else if (hdr.type == WIRE_GRANT_REQUEST) {
		struct wire_grant_request m;

		memcpy(&m, msg, sizeof(m));
		if (m.bound_ns > WIRE_TIME_MAX_NS || m.predicted_ns > m.bound_ns)
			abort();
	} else if (hdr.type == WIRE_MODEL) {
		struct wire_model m;

		memcpy(&m, msg, sizeof(m));
		if (m.n_coef > WIRE_FEATURES || !memchr(m.model, 0, sizeof(m.model)))
			abort();
	} else if (hdr.type == WIRE_GRANT || hdr.type == WIRE_ORPHANED) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t now_ns;
	uint8_t *packet;
	size_t len;
	char err[128];
	int n, r;

	if (size < sizeof(now_ns))
		return 0;
	memcpy(&now_ns, data, sizeof(now_ns));
	len = size - sizeof(now_ns);
	/* Exactly the packet's bytes, one past an aligned address: ASan sees every overread. */
	packet = malloc(len + 1);
	if (!packet)
		return 0;
	memcpy(packet + 1, data + sizeof(now_ns), len);
	r = wire_check(packet + 1, len, now_ns, err, sizeof(err));
	n = wire_frame(packet + 1, len, NULL, 0);
	if (r == 0) {
		if (n < 1 || (size_t)n > WIRE_MAX_BATCH || len % (size_t)n)
			abort();
		for (int i = 0; i < n; i++) {
			const uint8_t *msg = packet + 1 + (size_t)i * (len / (size_t)n);

			if (wire_check_message(msg, len / (size_t)n, now_ns, NULL, 0) != 0)
				abort();
			accepted_is_sound(msg, len / (size_t)n, now_ns);
		}
	} else if (r != -EPROTO && r != -EMSGSIZE && r != -EINVAL) {
		abort();
	}
	free(packet);
	return 0;
}
