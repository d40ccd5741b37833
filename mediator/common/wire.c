// SPDX-License-Identifier: MIT
/*
 * The checker of what a worker sends on its record channel (wire.h).
 *
 * A worker parses guest bytes and may be compromised, so what it sends is
 * hostile: each message is copied out of the packet (no alignment is
 * assumed) and held to every rule that needs nothing but the message and
 * the time it was read. The rules, by type:
 *
 *   every packet  at least a header, at most WIRE_MAX_PACKET; a header's
 *                 size is the packet's, except a WIRE_GROUP batch: a whole
 *                 number of records, each with its own header
 *   WIRE_GROUP    its model NUL-terminated; request <= dispatch <= start
 *                 <= end <= now
 *   WIRE_GRANT_REQUEST  predicted <= bound <= WIRE_TIME_MAX_NS; only
 *                 known flags, never CLAIMED with YOUNG; reserved 0
 *   WIRE_DONE     measured <= WIRE_TIME_MAX_NS; end <= now
 *   WIRE_HELLO    both strings NUL-terminated
 *   WIRE_CLIENT_INFO  its name NUL-terminated
 *   WIRE_CONTEXT  its name NUL-terminated; alive 0 or 1
 *   WIRE_MODEL    its model NUL-terminated; n_coef <= WIRE_FEATURES;
 *                 mae, mape, margin finite and >= 0; over_share in 0..1;
 *                 both fragment errors finite and >= -1; frag_preferred
 *                 BBOX or HISTORY; the first WIRE_FEATURES coef finite
 *   WIRE_RESUME   the header only (the answer to a take-over)
 *   WIRE_HOST_WORK  phase DONE or BEGIN; reserved 0
 *   WIRE_START    reserved 0
 *
 * WIRE_GRANT and WIRE_ORPHANED are mediatord's and the keeper's, never a
 * worker's. The rules are those mediatord always applied; a rule added
 * here changes which workers mediatord stops.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/wire.h"

/*
 * Every record of a batch passes wire_check_message() as a WIRE_GROUP only:
 * no other message a worker sends has a group's size.
 */
_Static_assert(sizeof(struct wire_hello) != sizeof(struct wire_group) &&
		   sizeof(struct wire_context) != sizeof(struct wire_group) &&
		   sizeof(struct wire_client_info) != sizeof(struct wire_group) &&
		   sizeof(struct wire_model) != sizeof(struct wire_group) &&
		   sizeof(struct wire_grant_request) != sizeof(struct wire_group) &&
		   sizeof(struct wire_done) != sizeof(struct wire_group) &&
		   sizeof(struct wire_resume) != sizeof(struct wire_group) &&
		   sizeof(struct wire_start) != sizeof(struct wire_group),
	       "a batch's records are told apart from other messages by their size");

/* Says which rule broke into @err (NULL: nowhere) and returns @r. */
static int fail(int r, char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(int r, char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	if (err && err_size) {
		va_start(ap, fmt);
		vsnprintf(err, err_size, fmt, ap);
		va_end(ap);
	}
	return r;
}

static bool terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

/* The size of a message of @type a worker sends; 0: no worker sends it. */
static size_t worker_message_size(uint32_t type)
{
	switch (type) {
	case WIRE_HELLO:
		return sizeof(struct wire_hello);
	case WIRE_CONTEXT:
		return sizeof(struct wire_context);
	case WIRE_GROUP:
		return sizeof(struct wire_group);
	case WIRE_CLIENT_INFO:
		return sizeof(struct wire_client_info);
	case WIRE_MODEL:
		return sizeof(struct wire_model);
	case WIRE_GRANT_REQUEST:
		return sizeof(struct wire_grant_request);
	case WIRE_DONE:
		return sizeof(struct wire_done);
	case WIRE_RESUME:
		return sizeof(struct wire_resume);
	case WIRE_HOST_WORK:
		return sizeof(struct wire_host_work);
	case WIRE_START:
		return sizeof(struct wire_start);
	default:
		return 0; /* WIRE_GRANT, WIRE_ORPHANED, unknown */
	}
}

int wire_frame(const void *packet, size_t len, char *err, size_t err_size)
{
	struct wire_header hdr;

	if (len < sizeof(hdr))
		return fail(-EPROTO, err, err_size, "a packet of %zu bytes, shorter than a header",
			    len);
	if (len > WIRE_MAX_PACKET)
		return fail(-EMSGSIZE, err, err_size, "a packet of %zu bytes, above %zu", len,
			    (size_t)WIRE_MAX_PACKET);
	memcpy(&hdr, packet, sizeof(hdr));
	if (hdr.type == WIRE_GROUP) {
		if (len % sizeof(struct wire_group))
			return fail(-EPROTO, err, err_size,
				    "a batch of %zu bytes, not a whole number of group records",
				    len);
		return (int)(len / sizeof(struct wire_group));
	}
	if (hdr.size != len)
		return fail(-EPROTO, err, err_size, "type %u: header says %u bytes, packet has %zu",
			    hdr.type, hdr.size, len);
	if (!worker_message_size(hdr.type))
		return fail(-EPROTO, err, err_size, "type %u: no message a worker sends", hdr.type);
	return 1;
}

int wire_check_group(const struct wire_group *m, uint64_t now_ns, char *err, size_t err_size)
{
	if (!terminated(m->model, sizeof(m->model)))
		return fail(-EINVAL, err, err_size, "group: model not NUL-terminated");
	if (m->dispatch_ns < m->request_ns)
		return fail(-EINVAL, err, err_size, "group: dispatched before it asked");
	if (m->start_ns < m->dispatch_ns)
		return fail(-EINVAL, err, err_size, "group: started before it was dispatched");
	if (m->end_ns < m->start_ns)
		return fail(-EINVAL, err, err_size, "group: ended before it started");
	if (m->end_ns > now_ns)
		return fail(-EINVAL, err, err_size, "group: ended in the future");
	return 0;
}

int wire_check_grant_request(const struct wire_grant_request *m, char *err, size_t err_size)
{
	const uint32_t known = WIRE_GRANT_CLAIMED | WIRE_GRANT_YOUNG | WIRE_GRANT_NO_OUTPUT;

	if (m->bound_ns < m->predicted_ns)
		return fail(-EINVAL, err, err_size, "grant request: bound below its prediction");
	if (m->bound_ns > WIRE_TIME_MAX_NS)
		return fail(-EINVAL, err, err_size, "grant request: bound above an hour");
	if (m->flags & ~known)
		return fail(-EINVAL, err, err_size, "grant request: unknown flags 0x%x",
			    m->flags & ~known);
	if ((m->flags & WIRE_GRANT_CLAIMED) && (m->flags & WIRE_GRANT_YOUNG))
		return fail(-EINVAL, err, err_size, "grant request: a young group's claim");
	if (m->untiled >= WIRE_UNTILED_MAX)
		return fail(-EINVAL, err, err_size, "grant request: untiled %u out of range",
			    m->untiled);
	return 0;
}

int wire_check_done(const struct wire_done *m, uint64_t now_ns, char *err, size_t err_size)
{
	if (m->measured_ns > WIRE_TIME_MAX_NS)
		return fail(-EINVAL, err, err_size, "done: measured above an hour");
	if (m->end_ns > now_ns)
		return fail(-EINVAL, err, err_size, "done: ended in the future");
	return 0;
}

int wire_check_hello(const struct wire_hello *m, char *err, size_t err_size)
{
	if (!terminated(m->timestamp_source, sizeof(m->timestamp_source)))
		return fail(-EINVAL, err, err_size, "hello: timestamp source not NUL-terminated");
	if (!terminated(m->renderer, sizeof(m->renderer)))
		return fail(-EINVAL, err, err_size, "hello: renderer not NUL-terminated");
	return 0;
}

int wire_check_client_info(const struct wire_client_info *m, char *err, size_t err_size)
{
	if (!terminated(m->name, sizeof(m->name)))
		return fail(-EINVAL, err, err_size, "client info: name not NUL-terminated");
	return 0;
}

int wire_check_context(const struct wire_context *m, char *err, size_t err_size)
{
	if (!terminated(m->name, sizeof(m->name)))
		return fail(-EINVAL, err, err_size, "context: name not NUL-terminated");
	if (m->alive > 1)
		return fail(-EINVAL, err, err_size, "context: alive %u, not 0 or 1", m->alive);
	return 0;
}

/* A finite value >= @min. */
static bool at_least(double v, double min)
{
	return isfinite(v) && v >= min;
}

int wire_check_model(const struct wire_model *m, char *err, size_t err_size)
{
	if (!terminated(m->model, sizeof(m->model)))
		return fail(-EINVAL, err, err_size, "model: name not NUL-terminated");
	if (m->n_coef > WIRE_FEATURES)
		return fail(-EINVAL, err, err_size, "model: %u coefficients, above %u", m->n_coef,
			    WIRE_FEATURES);
	if (!at_least(m->mae_ns, 0))
		return fail(-EINVAL, err, err_size, "model: mae not a finite value >= 0");
	if (!at_least(m->mape, 0))
		return fail(-EINVAL, err, err_size, "model: mape not a finite value >= 0");
	/* A share: NaN fails both comparisons. */
	if (!(m->over_share >= 0 && m->over_share <= 1))
		return fail(-EINVAL, err, err_size, "model: over_share not in 0..1");
	if (!at_least(m->margin_ns, 0))
		return fail(-EINVAL, err, err_size, "model: margin not a finite value >= 0");
	if (!at_least(m->frag_bbox_error, -1) || !at_least(m->frag_history_error, -1))
		return fail(-EINVAL, err, err_size,
			    "model: a fragment error not a finite value >= -1");
	if (m->frag_preferred != WIRE_FRAGMENTS_BBOX && m->frag_preferred != WIRE_FRAGMENTS_HISTORY)
		return fail(-EINVAL, err, err_size, "model: fragment estimator %u unknown",
			    m->frag_preferred);
	for (unsigned i = 0; i < WIRE_FEATURES; i++) {
		if (!isfinite(m->coef[i]))
			return fail(-EINVAL, err, err_size, "model: coefficient %u not finite", i);
	}
	return 0;
}

int wire_check_message(const void *msg, size_t len, uint64_t now_ns, char *err, size_t err_size)
{
	union wire_message m;
	size_t size;

	if (len < sizeof(m.hdr))
		return fail(-EPROTO, err, err_size, "a message of %zu bytes, shorter than a header",
			    len);
	memcpy(&m.hdr, msg, sizeof(m.hdr));
	size = worker_message_size(m.hdr.type);
	if (!size)
		return fail(-EPROTO, err, err_size, "type %u: no message a worker sends",
			    m.hdr.type);
	if (len != size || m.hdr.size != size)
		return fail(-EPROTO, err, err_size,
			    "type %u: %zu bytes, header says %u, the type has %zu", m.hdr.type, len,
			    m.hdr.size, size);
	memcpy(&m, msg, size);
	switch (m.hdr.type) {
	case WIRE_GROUP:
		return wire_check_group(&m.group, now_ns, err, err_size);
	case WIRE_GRANT_REQUEST:
		return wire_check_grant_request(&m.request, err, err_size);
	case WIRE_DONE:
		return wire_check_done(&m.done, now_ns, err, err_size);
	case WIRE_HELLO:
		return wire_check_hello(&m.hello, err, err_size);
	case WIRE_CLIENT_INFO:
		return wire_check_client_info(&m.info, err, err_size);
	case WIRE_CONTEXT:
		return wire_check_context(&m.context, err, err_size);
	case WIRE_MODEL:
		return wire_check_model(&m.model, err, err_size);
	case WIRE_HOST_WORK:
		if (m.host_work.phase != WIRE_HOST_WORK_DONE &&
		    m.host_work.phase != WIRE_HOST_WORK_BEGIN &&
		    m.host_work.phase != WIRE_HOST_WORK_HELD)
			return fail(-EINVAL, err, err_size, "host work: unknown phase %" PRIu32,
				    m.host_work.phase);
		if (m.host_work.reserved)
			return fail(-EINVAL, err, err_size, "host work: reserved not 0");
		return 0;
	case WIRE_START:
		if (m.start.reserved)
			return fail(-EINVAL, err, err_size, "start: reserved not 0");
		return 0;
	default:
		return 0; /* WIRE_RESUME: its header is all */
	}
}

int wire_check(const void *packet, size_t len, uint64_t now_ns, char *err, size_t err_size)
{
	int n = wire_frame(packet, len, err, err_size);
	size_t each;

	if (n < 0)
		return n;
	each = len / (size_t)n;
	for (int i = 0; i < n; i++) {
		int r = wire_check_message((const uint8_t *)packet + (size_t)i * each, each, now_ns,
					   err, err_size);

		if (r < 0)
			return r;
	}
	return 0;
}
