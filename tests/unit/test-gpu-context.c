// SPDX-License-Identifier: MIT
/*
 * Piece dispatch (gpu_context.h, doc/design.md "Pieces") with a real
 * renderer: virglrenderer on llvmpipe (egl-surfaceless), a context with
 * two 2048x2048 textures, and groups of BUSY_BLITS blits between them.
 * "mediatord" is this test on the other end of the link's socket pair: it
 * reads the worker's requests, records and WIRE_DONEs, and answers each
 * request with a grant.
 *
 * With a piece length of 1 us, the second group of a context (young: its
 * bound is the first group's measured time) is cut into several pieces.
 * Checked: the pieces reach the renderer in order, each with its own grant
 * and fence, and together hold the group's commands; the model learns once
 * per group, after its last piece; a group whose last command is malformed
 * reaches the GPU in no piece; a context destroyed between two pieces of a
 * group releases the grants of the pieces it dispatched (measured when
 * drained, charged when abandoned) and nothing of the pieces it did not.
 *
 * Exits 77 when no renderer starts here (no EGL surfaceless platform).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <virgl/virglrenderer.h>

#include "busy_texture.h"
#include "worker/gpu_context.h"
#include "worker/mediator_link.h"
#include "worker/pieces.h"
#include "worker/renderer.h"
#include "test_renderer.h"
#include "virgl_defs.h"
#include "common/wire.h"

#define CTX_ID	      3u
#define TEX_A	      1u
#define TEX_B	      2u
#define PIECE_NS      1000u
#define MAX_MSGS      256u
#define WAIT_LIMIT_NS 30000000000ull /* for the GPU to finish a group: far above a few blits */

static struct renderer *renderer;

/* What "mediatord" read from the link, in order. */
struct seen {
	uint32_t type;
	union {
		struct wire_grant_request req;
		struct wire_done done;
		struct wire_group group;
		struct wire_context context;
	} m;
};

struct fixture {
	int peer;
	struct mediator_link *link;
	struct gpu_context *ctx;
	uint32_t next_fence;
	uint64_t seq_of_fence[64]; /* the piece sequence number each fence belongs to */
	uint64_t end_of_fence[64]; /* when it signalled (wait_fences()) */
	uint32_t fences_done;
	struct seen msgs[MAX_MSGS];
	uint32_t nmsgs;
	uint32_t stream[BUSY_DWORDS + 4];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Takes every message the link sent so far into f->msgs. */
static void read_peer(struct fixture *f)
{
	unsigned char buf[65536];
	ssize_t len;

	mediator_link_flush(f->link);
	while ((len = recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		size_t off = 0;

		while (off + sizeof(struct wire_header) <= (size_t)len) {
			struct wire_header h;
			struct seen *s = &f->msgs[f->nmsgs];

			memcpy(&h, buf + off, sizeof(h));
			assert_true(h.size >= sizeof(h) && off + h.size <= (size_t)len);
			assert_true(f->nmsgs < MAX_MSGS);
			s->type = h.type;
			memcpy(&s->m, buf + off, h.size < sizeof(s->m) ? h.size : sizeof(s->m));
			f->nmsgs++;
			off += h.size;
		}
	}
}

static uint32_t count_type(const struct fixture *f, uint32_t from, uint32_t type)
{
	uint32_t n = 0;

	for (uint32_t i = from; i < f->nmsgs; i++)
		n += f->msgs[i].type == type;
	return n;
}

static void on_fence(uint32_t fence_id, uint64_t end_ns, void *data)
{
	struct fixture *f = data;

	assert_true(fence_id >= 1 && fence_id < 64);
	if (!f->ctx)
		return; /* its context is gone */
	gpu_context_complete(f->ctx, f->seq_of_fence[fence_id], end_ns);
	f->fences_done++;
}

static void pump(void *data)
{
	renderer_take_completions(renderer, on_fence, data);
}

static void note_fence(uint32_t fence_id, uint64_t end_ns, void *data)
{
	struct fixture *f = data;

	assert_true(fence_id >= 1 && fence_id < 64);
	f->end_of_fence[fence_id] = end_ns;
	f->fences_done++;
}

/* Waits until @n fences signalled, without handing them to the context. */
static void wait_fences(struct fixture *f, uint32_t n)
{
	uint64_t start = now_ns();
	const struct timespec tick = {0, 1000000};

	for (;;) {
		renderer_take_completions(renderer, note_fence, f);
		if (f->fences_done >= n)
			return;
		assert_true(now_ns() - start < WAIT_LIMIT_NS);
		nanosleep(&tick, NULL);
	}
}

/* Waits until the context has no group in flight. */
static void wait_idle(struct fixture *f)
{
	uint64_t start = now_ns();
	const struct timespec tick = {0, 1000000};

	for (;;) {
		pump(f);
		if (gpu_context_inflight(f->ctx) == 0)
			return;
		assert_true(now_ns() - start < WAIT_LIMIT_NS);
		nanosleep(&tick, NULL);
	}
}

/* Gets the next piece its grant the way a transport does: asks, and "mediatord" grants. */
static void grant_next(struct fixture *f)
{
	struct wire_grant g = {.hdr = {WIRE_GRANT, sizeof(g)}, .verdict = WIRE_GRANTED};
	uint32_t verdict = 99, before = f->nmsgs;

	assert_false(gpu_context_request_grant(f->ctx)); /* no board: every piece asks */
	read_peer(f);
	assert_int_equal(count_type(f, before, WIRE_GRANT_REQUEST), 1);
	/* The request, not a WIRE_DONE of an earlier piece sent from the sync thread since. */
	for (uint32_t i = before; i < f->nmsgs; i++)
		if (f->msgs[i].type == WIRE_GRANT_REQUEST)
			g.id = f->msgs[i].m.req.id;
	assert_int_equal(g.id, gpu_context_next_piece(f->ctx)->grant_id);
	assert_int_equal(send(f->peer, &g, sizeof(g), 0), (ssize_t)sizeof(g));
	assert_int_equal(mediator_link_read(f->link), 0);
	assert_true(mediator_link_take_grant(f->link, &verdict));
	assert_int_equal(verdict, WIRE_GRANTED);
}

/* Grants and dispatches the next piece with a fence of its own; returns its sequence number. */
static uint64_t dispatch_next(struct fixture *f)
{
	uint32_t fence = ++f->next_fence;
	uint64_t seq;

	grant_next(f);
	seq = gpu_context_dispatch(f->ctx, fence);
	assert_true(seq > 0);
	f->seq_of_fence[fence] = seq;
	return seq;
}

/*
 * A fresh link, a context with a piece length of PIECE_NS and the two
 * textures, and its first group of blits dispatched whole and completed:
 * the group that makes the context's next ones long.
 */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int pair[2];
	struct gpu_context_options opt = {
	    .domain = "test",
	    .client_id = 1,
	    .ctx_id = CTX_ID,
	    .name = "pieces",
	    .max_inflight = 0,
	    .piece_ns = PIECE_NS,
	    .renderer = renderer,
	};

	assert_non_null(f);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair), 0);
	f->peer = pair[1];
	f->link = mediator_link_create(pair[0], "test", 1);
	assert_non_null(f->link);
	opt.link = f->link;
	f->ctx = gpu_context_create(&opt);
	assert_non_null(f->ctx);
	assert_int_equal(busy_texture_create(TEX_A, CTX_ID), 0);
	assert_int_equal(busy_texture_create(TEX_B, CTX_ID), 0);
	busy_blits(f->stream, TEX_A, TEX_B);
	assert_int_equal(gpu_context_prepare(f->ctx, f->stream, BUSY_DWORDS), 0);
	assert_int_equal(gpu_context_next_piece(f->ctx)->pieces, 0); /* no bound yet: whole */
	dispatch_next(f);
	assert_false(gpu_context_pending(f->ctx));
	wait_idle(f);
	assert_int_equal(stream_cost_learned(gpu_context_stream_cost(f->ctx)), 1);
	read_peer(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (f->ctx) {
		gpu_context_drain(f->ctx, pump, f);
		gpu_context_destroy(f->ctx);
	}
	virgl_renderer_resource_unref(TEX_A);
	virgl_renderer_resource_unref(TEX_B);
	pump(f); /* completions of a destroyed context go nowhere */
	mediator_link_destroy(f->link);
	close(f->peer);
	free(f);
	return 0;
}

static const struct wire_group *nth_group(const struct fixture *f, uint32_t from, uint32_t n)
{
	for (uint32_t i = from; i < f->nmsgs; i++)
		if (f->msgs[i].type == WIRE_GROUP && n-- == 0)
			return &f->msgs[i].m.group;
	fail_msg("fewer than %u group records", n + 1);
	return NULL;
}

static void
a_long_group_reaches_the_renderer_as_pieces_in_order_each_with_grant_and_fence(void **state)
{
	struct fixture *f = *state;
	uint32_t from = f->nmsgs, n, blits = 0;
	uint64_t seq[PIECES_MAX], grants[PIECES_MAX], prev_end = 0;
	uint32_t fence[PIECES_MAX];

	assert_int_equal(gpu_context_prepare(f->ctx, f->stream, BUSY_DWORDS), 0);
	n = gpu_context_next_piece(f->ctx)->pieces;
	assert_true(n >= 2 && n <= PIECES_MAX);
	for (uint32_t k = 0; k < n; k++) {
		assert_true(gpu_context_pending(f->ctx));
		assert_int_equal(gpu_context_next_piece(f->ctx)->piece, k + 1);
		seq[k] = dispatch_next(f);
		fence[k] = f->next_fence;
		if (k) /* each piece counts one */
			assert_int_equal(seq[k], seq[k - 1] + 1);
	}
	assert_false(gpu_context_pending(f->ctx));
	assert_int_equal(gpu_context_dispatch(f->ctx, ++f->next_fence), 0); /* nothing left */
	/*
	 * The fences signal; handed over one at a time, the model learns from
	 * the group once, as a whole, when its last piece completed.
	 */
	wait_fences(f, 1 + n);
	/* Each piece's grant was done by its fence's signal, before the main thread looked. */
	read_peer(f);
	assert_int_equal(count_type(f, from, WIRE_DONE), n);
	assert_int_equal(count_type(f, from, WIRE_GROUP), 0);
	for (uint32_t k = 0; k < n; k++) {
		assert_int_equal(stream_cost_learned(gpu_context_stream_cost(f->ctx)), 1);
		assert_int_equal(gpu_context_inflight(f->ctx), n - k);
		gpu_context_complete(f->ctx, seq[k], f->end_of_fence[fence[k]]);
	}
	assert_int_equal(gpu_context_inflight(f->ctx), 0);
	assert_int_equal(stream_cost_learned(gpu_context_stream_cost(f->ctx)), 2);

	read_peer(f);
	assert_int_equal(count_type(f, from, WIRE_GRANT_REQUEST), n);
	assert_int_equal(count_type(f, from, WIRE_DONE), n);
	assert_int_equal(count_type(f, from, WIRE_GROUP), n);
	for (uint32_t k = 0; k < n; k++) {
		const struct wire_group *g = nth_group(f, from, k);

		if (k)
			assert_int_equal(g->seq, nth_group(f, from, k - 1)->seq + 1);
		assert_int_equal(g->piece, k + 1);
		assert_int_equal(g->pieces, n);
		assert_int_equal(g->ctx_id, CTX_ID);
		assert_int_equal(g->grant, WIRE_GRANT_ASKED);
		/* Each piece holds whole blits and starts after the one before it ended. */
		assert_true(g->cmds[PREDICT_CMD_BLIT] >= 1);
		blits += g->cmds[PREDICT_CMD_BLIT];
		assert_true(g->start_ns >= prev_end && g->end_ns >= g->start_ns);
		prev_end = g->end_ns;
	}
	assert_int_equal(blits, BUSY_BLITS);
	/*
	 * WIRE_DONE answers each piece's own grant, in order, sent when its
	 * fence signalled (fence_done.h): the callback's time (this renderer's
	 * only source, so the record's too), measured from its dispatch or the
	 * end of the worker's fence before it (the set-up's included), which
	 * is never earlier than the record's start.
	 */
	for (uint32_t i = from, k = 0, r = 0; i < f->nmsgs; i++) {
		if (f->msgs[i].type == WIRE_GRANT_REQUEST)
			grants[r++] = f->msgs[i].m.req.id;
		if (f->msgs[i].type != WIRE_DONE)
			continue;
		assert_true(k < r);
		assert_int_equal(f->msgs[i].m.done.id, grants[k]);
		assert_int_equal(f->msgs[i].m.done.end_ns, nth_group(f, from, k)->end_ns);
		assert_true(f->msgs[i].m.done.measured_ns <=
			    nth_group(f, from, k)->end_ns - nth_group(f, from, k)->start_ns);
		k++;
	}
}

static void a_group_whose_last_command_is_malformed_reaches_the_gpu_in_no_piece(void **state)
{
	struct fixture *f = *state;
	uint32_t from = f->nmsgs;

	/* A blit that claims fewer dwords than a blit has, at the end of a long group. */
	f->stream[BUSY_DWORDS] = VIRGL_CMD(BUSY_CMD_BLIT, 0, 3);
	f->stream[BUSY_DWORDS + 1] = f->stream[BUSY_DWORDS + 2] = f->stream[BUSY_DWORDS + 3] = 0;
	assert_int_equal(gpu_context_prepare(f->ctx, f->stream, BUSY_DWORDS + 4), -EPROTO);
	assert_false(gpu_context_pending(f->ctx));
	assert_int_equal(gpu_context_dispatch(f->ctx, ++f->next_fence), 0);
	assert_int_equal(gpu_context_inflight(f->ctx), 0);
	read_peer(f);
	assert_int_equal(f->nmsgs, from);
	/* The context goes on: its next group is cut and runs. */
	assert_int_equal(gpu_context_prepare(f->ctx, f->stream, BUSY_DWORDS), 0);
	assert_true(gpu_context_next_piece(f->ctx)->pieces >= 2);
	while (gpu_context_pending(f->ctx))
		dispatch_next(f);
	wait_idle(f);
	assert_int_equal(stream_cost_learned(gpu_context_stream_cost(f->ctx)), 2);
}

/*
 * Destroys the context after dispatching two pieces of a group, drained
 * first or not; checks what mediatord is told.
 */
static void destroy_after_two_pieces(struct fixture *f, bool drain)
{
	uint32_t from = f->nmsgs, dones = 0, n;
	uint64_t grants[2], seen_id = 0;

	assert_int_equal(gpu_context_prepare(f->ctx, f->stream, BUSY_DWORDS), 0);
	n = gpu_context_next_piece(f->ctx)->pieces;
	assert_true(n >= 3);
	for (int k = 0; k < 2; k++) {
		dispatch_next(f);
		/* Its request's id (a relayed WIRE_DONE may have come after it). */
		for (uint32_t i = from; i < f->nmsgs; i++)
			if (f->msgs[i].type == WIRE_GRANT_REQUEST)
				grants[k] = f->msgs[i].m.req.id;
	}
	assert_true(gpu_context_pending(f->ctx));
	if (drain)
		assert_int_equal(gpu_context_drain(f->ctx, pump, f), 0);
	gpu_context_destroy(f->ctx);
	f->ctx = NULL;
	read_peer(f);
	assert_int_equal(count_type(f, from, WIRE_GRANT_REQUEST), 2);
	for (uint32_t i = from; i < f->nmsgs; i++) {
		const struct seen *s = &f->msgs[i];

		if (s->type == WIRE_DONE) {
			assert_true(dones < 2);
			/*
			 * Either order: the sync thread may relay the second
			 * piece's fence while the main thread sends the
			 * first's (mediatord takes each by its id, wire.h).
			 */
			assert_true(s->m.done.id == grants[0] || s->m.done.id == grants[1]);
			assert_true(dones == 0 || s->m.done.id != seen_id);
			seen_id = s->m.done.id;
			assert_true(s->m.done.measured_ns > 0); /* measured, or charged never 0 */
			dones++;
		} else if (s->type == WIRE_GROUP) {
			assert_true(drain);
			assert_true(s->m.group.piece <= 2);
		}
	}
	assert_int_equal(dones, 2);
	assert_int_equal(count_type(f, from, WIRE_GROUP), drain ? 2 : 0);
	assert_int_equal(f->msgs[f->nmsgs - 1].type, WIRE_CONTEXT);
	assert_int_equal(f->msgs[f->nmsgs - 1].m.context.alive, 0);
}

static void a_context_drained_mid_group_measures_its_dispatched_pieces_only(void **state)
{
	destroy_after_two_pieces(*state, true);
}

static void a_context_destroyed_mid_group_releases_its_dispatched_pieces_charged(void **state)
{
	destroy_after_two_pieces(*state, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		a_long_group_reaches_the_renderer_as_pieces_in_order_each_with_grant_and_fence,
		setup, teardown),
	    cmocka_unit_test_setup_teardown(
		a_group_whose_last_command_is_malformed_reaches_the_gpu_in_no_piece, setup,
		teardown),
	    cmocka_unit_test_setup_teardown(
		a_context_drained_mid_group_measures_its_dispatched_pieces_only, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		a_context_destroyed_mid_group_releases_its_dispatched_pieces_charged, setup,
		teardown),
	};
	int failed;

	renderer = test_renderer_start();
	failed = cmocka_run_group_tests(tests, NULL, NULL);
	renderer_destroy(renderer);
	return failed;
}
