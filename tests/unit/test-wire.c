// SPDX-License-Identifier: MIT
/*
 * Tests of the checker of what a worker sends (common/wire.h): a valid
 * message of every type a worker sends is accepted, a batch of groups up
 * to WIRE_MAX_BATCH too, and every rule, one case each, refuses a message
 * that breaks it with its exact errno (-EPROTO framing, -EMSGSIZE too
 * long, -EINVAL a field) and a line saying why. Each case starts from a
 * valid message of its type and spoils one field.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/util.h"
#include "common/wire.h"

#define MS	  1000000ull
#define NOW	  (1000ull * 1000 * MS) /* when the messages are read */
#define HOUR	  WIRE_TIME_MAX_NS
#define BAD_TYPE  99u
#define GROUP_LEN sizeof(struct wire_group)

/* A valid message of @type (a worker's, or WIRE_GRANT / WIRE_ORPHANED as their senders make them).
 */
static size_t valid_message(uint32_t type, union wire_message *m)
{
	memset(m, 0, sizeof(*m));
	switch (type) {
	case WIRE_GROUP:
		m->group = (struct wire_group){.hdr = {type, sizeof(m->group)},
					       .ctx_id = 1,
					       .grant = WIRE_GRANT_ASKED,
					       .seq = 1,
					       .request_ns = NOW - 40 * MS,
					       .dispatch_ns = NOW - 30 * MS,
					       .start_ns = NOW - 20 * MS,
					       .end_ns = NOW - 10 * MS,
					       .predicted_ns = 5 * MS,
					       .bound_ns = 8 * MS,
					       .model = "linear"};
		return sizeof(m->group);
	case WIRE_GRANT_REQUEST:
		m->request = (struct wire_grant_request){.hdr = {type, sizeof(m->request)},
							 .id = 1,
							 .predicted_ns = 1 * MS,
							 .bound_ns = 2 * MS,
							 .ctx_id = 1};
		return sizeof(m->request);
	case WIRE_DONE:
		m->done = (struct wire_done){.hdr = {type, sizeof(m->done)},
					     .id = 1,
					     .measured_ns = 1 * MS,
					     .end_ns = NOW - 1};
		return sizeof(m->done);
	case WIRE_HELLO:
		m->hello = (struct wire_hello){.hdr = {type, sizeof(m->hello)},
					       .worker_pid = 42,
					       .timestamp_source = "fence-callback",
					       .renderer = "egl-surfaceless"};
		return sizeof(m->hello);
	case WIRE_CLIENT_INFO:
		m->info = (struct wire_client_info){
		    .hdr = {type, sizeof(m->info)}, .peer_pid = -1, .name = "glmark2"};
		return sizeof(m->info);
	case WIRE_CONTEXT:
		m->context = (struct wire_context){
		    .hdr = {type, sizeof(m->context)}, .ctx_id = 3, .alive = 1, .name = "ctx"};
		return sizeof(m->context);
	case WIRE_MODEL:
		m->model = (struct wire_model){.hdr = {type, sizeof(m->model)},
					       .groups = 100,
					       .mae_ns = 1000,
					       .mape = 0.1,
					       .over_share = 0.01,
					       .margin_ns = 500,
					       .n_coef = WIRE_FEATURES,
					       .model = "linear",
					       .frag_bbox_error = -1,
					       .frag_history_error = -1,
					       .frag_preferred = WIRE_FRAGMENTS_BBOX};
		return sizeof(m->model);
	case WIRE_RESUME:
		m->resume = (struct wire_resume){.hdr = {type, sizeof(m->resume)}};
		return sizeof(m->resume);
	case WIRE_HOST_WORK:
		m->host_work = (struct wire_host_work){.hdr = {type, sizeof(m->host_work)}};
		return sizeof(m->host_work);
	case WIRE_START:
		m->start = (struct wire_start){.hdr = {type, sizeof(m->start)}};
		return sizeof(m->start);
	case WIRE_GRANT:
		m->grant = (struct wire_grant){.hdr = {type, sizeof(m->grant)}, .id = 1};
		return sizeof(m->grant);
	case WIRE_ORPHANED:
		m->orphaned = (struct wire_orphaned){.hdr = {type, sizeof(m->orphaned)}};
		return sizeof(m->orphaned);
	default:
		m->hdr = (struct wire_header){type, sizeof(m->hdr)};
		return sizeof(m->hdr);
	}
}

/* What a case writes over its valid message. */
enum spoil {
	KEEP,	/* nothing */
	U32,	/* .u at .off, 32 bits */
	U64,	/* .u at .off, 64 bits */
	F64,	/* .f at .off */
	UNTERM, /* .len bytes of 'x' at .off: a string with no NUL */
};

struct message_case {
	const char *what;
	uint32_t type; /* of the valid message it starts from */
	enum spoil spoil;
	size_t off, len;
	uint64_t u;
	double f;
	int expect;
};

#define FIELD(s, f)  offsetof(struct s, f)
#define STRING(s, f) .spoil = UNTERM, .off = FIELD(s, f), .len = sizeof(((struct s *)0)->f)

static const struct message_case message_cases[] = {
    /* Valid messages of every type a worker sends. */
    {"a valid group", WIRE_GROUP, KEEP, .expect = 0},
    {"a group that ends right now", WIRE_GROUP, U64, FIELD(wire_group, end_ns), .u = NOW},
    {"a group that started as it was dispatched", WIRE_GROUP, U64, FIELD(wire_group, start_ns),
     .u = NOW - 30 * MS},
    {"a valid grant request", WIRE_GRANT_REQUEST, KEEP, .expect = 0},
    {"a claimed request", WIRE_GRANT_REQUEST, U32, FIELD(wire_grant_request, flags),
     .u = WIRE_GRANT_CLAIMED},
    {"a young request of no output", WIRE_GRANT_REQUEST, U32, FIELD(wire_grant_request, flags),
     .u = WIRE_GRANT_YOUNG | WIRE_GRANT_NO_OUTPUT},
    {"a request bound at an hour", WIRE_GRANT_REQUEST, U64, FIELD(wire_grant_request, bound_ns),
     .u = HOUR},
    {"a valid done", WIRE_DONE, KEEP, .expect = 0},
    {"a done measured at an hour", WIRE_DONE, U64, FIELD(wire_done, measured_ns), .u = HOUR},
    {"a done that ends right now", WIRE_DONE, U64, FIELD(wire_done, end_ns), .u = NOW},
    {"a valid hello", WIRE_HELLO, KEEP, .expect = 0},
    {"a valid client info", WIRE_CLIENT_INFO, KEEP, .expect = 0},
    {"a context created", WIRE_CONTEXT, KEEP, .expect = 0},
    {"a context destroyed", WIRE_CONTEXT, U32, FIELD(wire_context, alive), .u = 0},
    {"a valid model", WIRE_MODEL, KEEP, .expect = 0},
    {"a model preferring the history estimator", WIRE_MODEL, U32, FIELD(wire_model, frag_preferred),
     .u = WIRE_FRAGMENTS_HISTORY},
    {"a model with all over its bound", WIRE_MODEL, F64, FIELD(wire_model, over_share), .f = 1},
    {"a model with a coefficient beyond its features not finite (unused)", WIRE_MODEL, F64,
     FIELD(wire_model, coef[WIRE_FEATURES]), .f = NAN},
    {"a resume (the answer to a take-over)", WIRE_RESUME, KEEP, .expect = 0},
    {"a resume with its reserved set (never checked)", WIRE_RESUME, U64,
     FIELD(wire_resume, reserved), .u = 7},
    {"host work done", WIRE_HOST_WORK, KEEP, .expect = 0},
    {"host work done with its reserved set", WIRE_HOST_WORK, U32, FIELD(wire_host_work, reserved),
     .u = 1, .expect = -EINVAL},
    {"host work begins (kept at idle priority)", WIRE_HOST_WORK, U32, FIELD(wire_host_work, phase),
     .u = WIRE_HOST_WORK_BEGIN, .expect = 0},
    {"host work held at idle priority by mediatord", WIRE_HOST_WORK, U32,
     FIELD(wire_host_work, phase), .u = WIRE_HOST_WORK_HELD, .expect = 0},
    {"host work of an unknown phase", WIRE_HOST_WORK, U32, FIELD(wire_host_work, phase), .u = 3,
     .expect = -EINVAL},
    {"host work done a byte short", WIRE_HOST_WORK, U32, FIELD(wire_header, size),
     .u = sizeof(struct wire_host_work) - 1, .expect = -EPROTO},
    {"a start (may it make its renderer)", WIRE_START, KEEP, .expect = 0},
    {"a start with its reserved set", WIRE_START, U64, FIELD(wire_start, reserved), .u = 1,
     .expect = -EINVAL},
    {"a start a byte long", WIRE_START, U32, FIELD(wire_header, size),
     .u = sizeof(struct wire_start) + 1, .expect = -EPROTO},

    /* The header. */
    {"a type no one sends", BAD_TYPE, KEEP, .expect = -EPROTO},
    {"type 0", 0, KEEP, .expect = -EPROTO},
    {"mediatord's grant", WIRE_GRANT, KEEP, .expect = -EPROTO},
    {"the keeper's orphaned", WIRE_ORPHANED, KEEP, .expect = -EPROTO},
    {"a header whose size is one byte short", WIRE_HELLO, U32, FIELD(wire_header, size),
     .u = sizeof(struct wire_hello) - 1, .expect = -EPROTO},
    {"a header whose size is 0", WIRE_DONE, U32, FIELD(wire_header, size), .u = 0,
     .expect = -EPROTO},
    {"a lone group whose header says a byte more", WIRE_GROUP, U32, FIELD(wire_header, size),
     .u = GROUP_LEN + 1, .expect = -EPROTO},

    /* WIRE_GROUP. */
    {"a group whose model is not NUL-terminated", WIRE_GROUP, STRING(wire_group, model),
     .expect = -EINVAL},
    {"a group dispatched before it asked", WIRE_GROUP, U64, FIELD(wire_group, dispatch_ns),
     .u = NOW - 41 * MS, .expect = -EINVAL},
    {"a group started before it was dispatched", WIRE_GROUP, U64, FIELD(wire_group, start_ns),
     .u = NOW - 31 * MS, .expect = -EINVAL},
    {"a group that ended before it started", WIRE_GROUP, U64, FIELD(wire_group, end_ns),
     .u = NOW - 21 * MS, .expect = -EINVAL},
    {"a group that ends in the future", WIRE_GROUP, U64, FIELD(wire_group, end_ns), .u = NOW + 1,
     .expect = -EINVAL},

    /* WIRE_GRANT_REQUEST. */
    {"a request bound below its prediction", WIRE_GRANT_REQUEST, U64,
     FIELD(wire_grant_request, bound_ns), .u = 1 * MS - 1, .expect = -EINVAL},
    {"a request bound above an hour", WIRE_GRANT_REQUEST, U64, FIELD(wire_grant_request, bound_ns),
     .u = HOUR + 1, .expect = -EINVAL},
    {"a request with an unknown flag", WIRE_GRANT_REQUEST, U32, FIELD(wire_grant_request, flags),
     .u = 1u << 3, .expect = -EINVAL},
    {"a young group's claim", WIRE_GRANT_REQUEST, U32, FIELD(wire_grant_request, flags),
     .u = WIRE_GRANT_CLAIMED | WIRE_GRANT_YOUNG, .expect = -EINVAL},
    {"a request with an untiled reason", WIRE_GRANT_REQUEST, U32,
     FIELD(wire_grant_request, untiled), .u = WIRE_UNTILED_MAX - 1},
    {"a request whose untiled reason is out of range", WIRE_GRANT_REQUEST, U32,
     FIELD(wire_grant_request, untiled), .u = WIRE_UNTILED_MAX, .expect = -EINVAL},

    /* WIRE_DONE. */
    {"a done measured above an hour", WIRE_DONE, U64, FIELD(wire_done, measured_ns), .u = HOUR + 1,
     .expect = -EINVAL},
    {"a done that ends in the future", WIRE_DONE, U64, FIELD(wire_done, end_ns), .u = NOW + 1,
     .expect = -EINVAL},

    /* WIRE_HELLO, WIRE_CLIENT_INFO, WIRE_CONTEXT. */
    {"a hello whose timestamp source is not NUL-terminated", WIRE_HELLO,
     STRING(wire_hello, timestamp_source), .expect = -EINVAL},
    {"a hello whose renderer is not NUL-terminated", WIRE_HELLO, STRING(wire_hello, renderer),
     .expect = -EINVAL},
    {"a client info whose name is not NUL-terminated", WIRE_CLIENT_INFO,
     STRING(wire_client_info, name), .expect = -EINVAL},
    {"a context whose name is not NUL-terminated", WIRE_CONTEXT, STRING(wire_context, name),
     .expect = -EINVAL},
    {"a context neither created nor destroyed", WIRE_CONTEXT, U32, FIELD(wire_context, alive),
     .u = 2, .expect = -EINVAL},

    /* WIRE_MODEL. */
    {"a model whose name is not NUL-terminated", WIRE_MODEL, STRING(wire_model, model),
     .expect = -EINVAL},
    {"a model of more coefficients than features", WIRE_MODEL, U32, FIELD(wire_model, n_coef),
     .u = WIRE_FEATURES + 1, .expect = -EINVAL},
    {"a model whose mae is negative", WIRE_MODEL, F64, FIELD(wire_model, mae_ns), .f = -1,
     .expect = -EINVAL},
    {"a model whose mae is infinite", WIRE_MODEL, F64, FIELD(wire_model, mae_ns), .f = INFINITY,
     .expect = -EINVAL},
    {"a model whose mape is NaN", WIRE_MODEL, F64, FIELD(wire_model, mape), .f = NAN,
     .expect = -EINVAL},
    {"a model whose mape is negative", WIRE_MODEL, F64, FIELD(wire_model, mape), .f = -0.5,
     .expect = -EINVAL},
    {"a model whose over_share is negative", WIRE_MODEL, F64, FIELD(wire_model, over_share),
     .f = -0.01, .expect = -EINVAL},
    {"a model whose over_share is above 1", WIRE_MODEL, F64, FIELD(wire_model, over_share),
     .f = 1.01, .expect = -EINVAL},
    {"a model whose over_share is NaN", WIRE_MODEL, F64, FIELD(wire_model, over_share), .f = NAN,
     .expect = -EINVAL},
    {"a model whose margin is negative", WIRE_MODEL, F64, FIELD(wire_model, margin_ns), .f = -1,
     .expect = -EINVAL},
    {"a model whose margin is infinite", WIRE_MODEL, F64, FIELD(wire_model, margin_ns),
     .f = INFINITY, .expect = -EINVAL},
    {"a model whose bbox error is below -1", WIRE_MODEL, F64, FIELD(wire_model, frag_bbox_error),
     .f = -1.5, .expect = -EINVAL},
    {"a model whose bbox error is NaN", WIRE_MODEL, F64, FIELD(wire_model, frag_bbox_error),
     .f = NAN, .expect = -EINVAL},
    {"a model whose history error is below -1", WIRE_MODEL, F64,
     FIELD(wire_model, frag_history_error), .f = -2, .expect = -EINVAL},
    {"a model whose history error is infinite", WIRE_MODEL, F64,
     FIELD(wire_model, frag_history_error), .f = INFINITY, .expect = -EINVAL},
    {"a model preferring no estimator (AUTO)", WIRE_MODEL, U32, FIELD(wire_model, frag_preferred),
     .u = 0, .expect = -EINVAL},
    {"a model preferring an unknown estimator", WIRE_MODEL, U32, FIELD(wire_model, frag_preferred),
     .u = 3, .expect = -EINVAL},
    {"a model whose first coefficient is NaN", WIRE_MODEL, F64, FIELD(wire_model, coef[0]),
     .f = NAN, .expect = -EINVAL},
    {"a model whose last feature's coefficient is infinite", WIRE_MODEL, F64,
     FIELD(wire_model, coef[WIRE_FEATURES - 1]), .f = -INFINITY, .expect = -EINVAL},
};

static size_t build(const struct message_case *c, union wire_message *m)
{
	size_t len = valid_message(c->type, m);
	uint8_t *p = (uint8_t *)m + c->off;
	uint32_t u32 = (uint32_t)c->u;

	switch (c->spoil) {
	case KEEP:
		break;
	case U32:
		memcpy(p, &u32, sizeof(u32));
		break;
	case U64:
		memcpy(p, &c->u, sizeof(c->u));
		break;
	case F64:
		memcpy(p, &c->f, sizeof(c->f));
		break;
	case UNTERM:
		memset(p, 'x', c->len);
		break;
	}
	return len;
}

/* Refused with its errno and a reason, or accepted with @err untouched. */
static void check_case(const char *what, int got, int expect, const char *err)
{
	if (got != expect) {
		print_error("%s: %d (%s), not %d\n", what, got, err, expect);
		fail();
	}
	if (expect < 0 && !err[0]) {
		print_error("%s: refused without a reason\n", what);
		fail();
	}
	if (!expect && err[0]) {
		print_error("%s: accepted with a reason: %s\n", what, err);
		fail();
	}
}

static void every_message_is_held_to_each_rule_of_its_type(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(message_cases); i++) {
		const struct message_case *c = &message_cases[i];
		union wire_message m;
		size_t len = build(c, &m);
		char err[256] = "";

		print_message("%s\n", c->what);
		check_case(c->what, wire_check(&m, len, NOW, err, sizeof(err)), c->expect, err);
		/* One message: its packet and itself are held to the same rules. */
		err[0] = '\0';
		check_case(c->what, wire_check_message(&m, len, NOW, err, sizeof(err)), c->expect,
			   err);
	}
}

/* Framing cases: a packet of @len bytes made of @records valid groups, one spoiled. */
struct packet_case {
	const char *what;
	uint32_t type;	/* its first (or only) message's */
	bool short_len; /* the packet is .len bytes, not the type's size times records */
	size_t len;
	size_t records; /* WIRE_GROUP: records in the batch */
	size_t bad;	/* the record spoiled from 1; 0: none */
	enum {
		NOTHING,
		WRONG_TYPE, /* the record is a hello by its header */
		BAD_SIZE,   /* the record's header says one byte more */
		FUTURE,	    /* the record ends in the future */
	} spoil;
	int expect;
};

static const struct packet_case packet_cases[] = {
    {"a batch of two groups", WIRE_GROUP, .records = 2, .expect = 2},
    {"a full batch", WIRE_GROUP, .records = WIRE_MAX_BATCH, .expect = WIRE_MAX_BATCH},
    {"one message of another type", WIRE_CONTEXT, .records = 1, .expect = 1},
    {"an empty packet", WIRE_HELLO, .short_len = true, .len = 0, .records = 1, .expect = -EPROTO},
    {"a packet shorter than a header", WIRE_HELLO, .short_len = true,
     .len = sizeof(struct wire_header) - 1, .records = 1, .expect = -EPROTO},
    {"a packet of only a header", WIRE_HELLO, .short_len = true, .len = sizeof(struct wire_header),
     .records = 1, .expect = -EPROTO},
    {"a batch one group longer than WIRE_MAX_BATCH", WIRE_GROUP, .records = WIRE_MAX_BATCH + 1,
     .expect = -EMSGSIZE},
    {"a packet a byte longer than WIRE_MAX_PACKET", WIRE_HELLO, .short_len = true,
     .len = WIRE_MAX_PACKET + 1, .records = 1, .expect = -EMSGSIZE},
    {"a batch of one and a half groups", WIRE_GROUP, .short_len = true,
     .len = GROUP_LEN + GROUP_LEN / 2, .records = 2, .expect = -EPROTO},
    {"a hello in a batch of groups", WIRE_GROUP, .records = 3, .bad = 2, .spoil = WRONG_TYPE,
     .expect = -EPROTO},
    {"a batch's last record whose header size is wrong", WIRE_GROUP, .records = 4, .bad = 4,
     .spoil = BAD_SIZE, .expect = -EPROTO},
    {"a batch's middle record that ends in the future", WIRE_GROUP, .records = 5, .bad = 3,
     .spoil = FUTURE, .expect = -EINVAL},
};

static void a_packet_is_one_message_or_a_batch_of_groups(void **state)
{
	static union wire_message buf[WIRE_MAX_BATCH + 2];

	for (size_t i = 0; i < ARRAY_SIZE(packet_cases); i++) {
		const struct packet_case *c = &packet_cases[i];
		uint8_t *p = (uint8_t *)buf;
		size_t each = 0, len;
		char err[256] = "";
		int r;

		print_message("%s\n", c->what);
		memset(buf, 0, sizeof(buf));
		for (size_t k = 0; k < c->records; k++) {
			union wire_message m;

			each = valid_message(c->type, &m);
			if (k + 1 == c->bad && c->spoil == WRONG_TYPE)
				m.hdr.type = WIRE_HELLO;
			if (k + 1 == c->bad && c->spoil == BAD_SIZE)
				m.hdr.size++;
			if (k + 1 == c->bad && c->spoil == FUTURE)
				m.group.end_ns = NOW + 1;
			memcpy(p + k * each, &m, each);
		}
		len = c->short_len ? c->len : each * c->records;
		r = wire_frame(buf, len, err, sizeof(err));
		if (c->expect > 0 || c->spoil == NOTHING)
			check_case(c->what, r, c->expect, err);
		else
			assert_int_equal(r, (int)c->records);
		err[0] = '\0';
		r = wire_check(buf, len, NOW, err, sizeof(err));
		check_case(c->what, r, c->expect > 0 ? 0 : c->expect, err);
	}
}

static void each_type_checker_holds_its_fields_without_a_header(void **state)
{
	union wire_message m;

	/* The dispatcher's way in: a request or completion with no header set. */
	valid_message(WIRE_GRANT_REQUEST, &m);
	m.hdr = (struct wire_header){0, 0};
	assert_int_equal(wire_check_grant_request(&m.request, NULL, 0), 0);
	m.request.bound_ns = HOUR + 1;
	assert_int_equal(wire_check_grant_request(&m.request, NULL, 0), -EINVAL);
	valid_message(WIRE_DONE, &m);
	m.hdr = (struct wire_header){0, 0};
	assert_int_equal(wire_check_done(&m.done, NOW, NULL, 0), 0);
	assert_int_equal(wire_check_done(&m.done, m.done.end_ns - 1, NULL, 0), -EINVAL);
	valid_message(WIRE_GROUP, &m);
	assert_int_equal(wire_check_group(&m.group, NOW, NULL, 0), 0);
	valid_message(WIRE_HELLO, &m);
	assert_int_equal(wire_check_hello(&m.hello, NULL, 0), 0);
	valid_message(WIRE_CLIENT_INFO, &m);
	assert_int_equal(wire_check_client_info(&m.info, NULL, 0), 0);
	valid_message(WIRE_CONTEXT, &m);
	assert_int_equal(wire_check_context(&m.context, NULL, 0), 0);
	valid_message(WIRE_MODEL, &m);
	assert_int_equal(wire_check_model(&m.model, NULL, 0), 0);
}

static void a_reason_is_cut_to_its_buffer_and_none_is_fine(void **state)
{
	union wire_message m;
	size_t len = valid_message(WIRE_CONTEXT, &m);
	char err[8];

	m.context.alive = 2;
	memset(err, 'y', sizeof(err));
	assert_int_equal(wire_check(&m, len, NOW, err, sizeof(err)), -EINVAL);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	assert_int_equal(wire_check(&m, len, NOW, NULL, 0), -EINVAL);
	assert_int_equal(wire_check(&m, len, NOW, err, 0), -EINVAL);
}

static void a_message_at_any_alignment_is_read_the_same(void **state)
{
	static uint8_t buf[sizeof(struct wire_model) + 8];
	union wire_message m;
	size_t len = valid_message(WIRE_MODEL, &m);

	for (size_t shift = 0; shift < 8; shift++) {
		memcpy(buf + shift, &m, len);
		assert_int_equal(wire_check(buf + shift, len, NOW, NULL, 0), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_message_is_held_to_each_rule_of_its_type),
	    cmocka_unit_test(a_packet_is_one_message_or_a_batch_of_groups),
	    cmocka_unit_test(each_type_checker_holds_its_fields_without_a_header),
	    cmocka_unit_test(a_reason_is_cut_to_its_buffer_and_none_is_fine),
	    cmocka_unit_test(a_message_at_any_alignment_is_read_the_same),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
