// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: a packet a compromised worker sends mediatord on its
 * record channel (common/wire.h). The input: one byte of mode, 8 bytes of
 * the time the packet is read at, then the packet's bytes. Mode bit 0
 * clear: the bytes are the packet as they are. Set: the packet is framed
 * right, so that the fields' rules are reached, not only the framing's:
 * mode >> 1 picks the type (of the 11 values around enum wire_type) and,
 * for WIRE_GROUP, mode >> 5 how many records; each message is the input's
 * next bytes (zero-padded) with a header of its type and size. The packet
 * is copied to a buffer of its own size at an odd address, as recv() may
 * leave it: wire_check() must never read outside it (run under ASan),
 * whatever its sizes, types and fields; what it accepts must be what its
 * parts accept (wire_frame() gives whole messages, each passing
 * wire_check_message()), and nothing accepted may break a rule mediatord
 * relies on afterwards.
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

/* The size of a message of @type as its sender makes it (a byte for a type that has none). */
static size_t type_size(uint32_t type)
{
	static const size_t sizes[] = {
	    [WIRE_HELLO] = sizeof(struct wire_hello),
	    [WIRE_CONTEXT] = sizeof(struct wire_context),
	    [WIRE_GROUP] = sizeof(struct wire_group),
	    [WIRE_CLIENT_INFO] = sizeof(struct wire_client_info),
	    [WIRE_MODEL] = sizeof(struct wire_model),
	    [WIRE_GRANT_REQUEST] = sizeof(struct wire_grant_request),
	    [WIRE_GRANT] = sizeof(struct wire_grant),
	    [WIRE_DONE] = sizeof(struct wire_done),
	    [WIRE_ORPHANED] = sizeof(struct wire_orphaned),
	    [WIRE_RESUME] = sizeof(struct wire_resume),
	};

	return type < sizeof(sizes) / sizeof(sizes[0]) && sizes[type]
		   ? sizes[type]
		   : sizeof(struct wire_header) + 1;
}

/* Mode bit 0 set: a packet of @n messages of @type, their bytes from @in (zero-padded). */
static size_t frame(uint8_t *out, uint32_t type, size_t n, const uint8_t *in, size_t in_len)
{
	size_t each = type_size(type), len = each * n;

	memset(out, 0, len);
	memcpy(out, in, in_len < len ? in_len : len);
	for (size_t i = 0; i < n; i++) {
		struct wire_header hdr = {type, (uint32_t)each};

		memcpy(out + i * each, &hdr, sizeof(hdr));
	}
	return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t framed[(WIRE_MAX_BATCH + 1) * sizeof(struct wire_model)];
	const uint8_t *bytes;
	uint64_t now_ns;
	uint8_t *packet, mode;
	size_t len;
	char err[128];
	int n, r;

	if (size < 1 + sizeof(now_ns))
		return 0;
	mode = data[0];
	memcpy(&now_ns, data + 1, sizeof(now_ns));
	bytes = data + 1 + sizeof(now_ns);
	len = size - 1 - sizeof(now_ns);
	if (mode & 1) {
		uint32_t type = (mode >> 1) % 11;
		size_t records = type == WIRE_GROUP ? 1 + (mode >> 5) % (WIRE_MAX_BATCH + 1) : 1;

		len = frame(framed, type, records, bytes, len);
		bytes = framed;
	}
	/* Exactly the packet's bytes, one past an aligned address: ASan sees every overread. */
	packet = malloc(len + 1);
	if (!packet)
		return 0;
	memcpy(packet + 1, bytes, len);
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
