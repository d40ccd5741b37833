// SPDX-License-Identifier: MIT
/*
 * A command group's life in the group runner (group_runner.h) with a real
 * renderer: virglrenderer on llvmpipe (egl-surfaceless), a context with
 * two 2048x2048 textures, and groups of BUSY_BLITS blits between them.
 * "mediatord" is this test on the other end of the link's socket pair:
 * it reads the worker's grant requests and answers them. The transport is
 * the fixture's ops: a fence numbering and a switch for its fence room.
 *
 * Checked: a group waits for a grant per piece and, resumed, reaches the
 * GPU whole or in pieces; without fence room it waits for a slot before
 * it is even decoded; a refused grant, a malformed stream and a second
 * group while one waits end with their errno; a grant asked for a group
 * whose context ended is still awaited and released unused.
 *
 * Exits 77 when no renderer starts here (no EGL surfaceless platform).
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
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <virgl/virglrenderer.h>

#include "busy_texture.h"
#include "worker/gpu_context.h"
#include "worker/group_runner.h"
#include "worker/mediator_link.h"
#include "worker/renderer.h"
#include "test_renderer.h"
#include "virgl_defs.h"
#include "common/wire.h"

#define CTX_ID	      3u
#define TEX_A	      1u
#define TEX_B	      2u
#define PIECE_NS      1000u
#define MAX_FENCES    64u
#define WAIT_LIMIT_NS 30000000000ull /* for the GPU to finish a group: far above a few blits */

static struct renderer *renderer;

struct fixture {
	int peer;
	struct mediator_link *link;
	struct gpu_context *ctx;
	struct group_runner *runner;
	bool no_room;			   /* the transport's fence room */
	uint32_t last_fence;		   /* the transport's fence numbering */
	uint64_t seq_of_fence[MAX_FENCES]; /* what each fence ends */
	uint32_t pieces;		   /* dispatched so far */
	uint64_t last_request;		   /* the id of the last grant request read */
	uint32_t dones;			   /* WIRE_DONEs read */
	uint64_t last_done_id, last_done_measured;
	uint32_t stream[BUSY_DWORDS + 4];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the transport ------------------------------------------------------ */

static bool fence_room(void *data)
{
	const struct fixture *f = data;

	return !f->no_room;
}

static uint32_t next_fence(void *data)
{
	const struct fixture *f = data;

	return f->last_fence + 1;
}

static void dispatched(void *data, struct gpu_context *ctx, uint32_t fence_id, uint64_t seq)
{
	struct fixture *f = data;

	assert_ptr_equal(ctx, f->ctx);
	assert_int_equal(fence_id, f->last_fence + 1);
	assert_true(fence_id < MAX_FENCES);
	f->last_fence = fence_id;
	f->seq_of_fence[fence_id] = seq;
	f->pieces++;
}

static const struct group_runner_ops ops = {
    .version = GROUP_RUNNER_OPS_VERSION,
    .fence_room = fence_room,
    .next_fence = next_fence,
    .dispatched = dispatched,
};

static void on_fence(uint32_t fence_id, uint64_t end_ns, void *data)
{
	struct fixture *f = data;

	if (f->ctx)
		gpu_context_complete(f->ctx, f->seq_of_fence[fence_id], end_ns);
}

static void pump(void *data)
{
	renderer_take_completions(renderer, on_fence, data);
}

/* ---- "mediatord" --------------------------------------------------------- */

/* Reads what the link sent: notes the last grant request and the WIRE_DONEs. */
static void read_peer(struct fixture *f)
{
	unsigned char buf[65536];
	ssize_t len;

	mediator_link_flush(f->link);
	while ((len = recv(f->peer, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		for (size_t off = 0; off + sizeof(struct wire_header) <= (size_t)len;) {
			struct wire_header h;

			memcpy(&h, buf + off, sizeof(h));
			assert_true(h.size >= sizeof(h) && off + h.size <= (size_t)len);
			if (h.type == WIRE_GRANT_REQUEST) {
				struct wire_grant_request q;

				memcpy(&q, buf + off, sizeof(q));
				f->last_request = q.id;
			} else if (h.type == WIRE_DONE) {
				struct wire_done d;

				memcpy(&d, buf + off, sizeof(d));
				f->dones++;
				f->last_done_id = d.id;
				f->last_done_measured = d.measured_ns;
			}
			off += h.size;
		}
	}
}

/* Answers the last grant request with @verdict. */
static void answer(struct fixture *f, uint32_t verdict)
{
	struct wire_grant g = {.hdr = {WIRE_GRANT, sizeof(g)}, .verdict = verdict};

	read_peer(f);
	assert_true(f->last_request != 0);
	g.id = f->last_request;
	assert_int_equal(send(f->peer, &g, sizeof(g), 0), (ssize_t)sizeof(g));
	assert_int_equal(mediator_link_read(f->link), 0);
}

/* Grants each piece of the group under way until it is done; returns the pieces dispatched. */
static uint32_t grant_until_done(struct fixture *f)
{
	uint32_t before = f->pieces;
	enum group_wait wait = GROUP_WAITS_GRANT;

	while (wait != GROUP_DONE) {
		assert_int_equal(wait, GROUP_WAITS_GRANT);
		answer(f, WIRE_GRANTED);
		assert_int_equal(group_runner_resume(f->runner, &wait), 0);
	}
	return f->pieces - before;
}

static void wait_idle(struct fixture *f)
{
	const struct timespec tick = {0, 1000000};
	uint64_t start = now_ns();

	while (gpu_context_inflight(f->ctx)) {
		pump(f);
		assert_true(now_ns() - start < WAIT_LIMIT_NS);
		nanosleep(&tick, NULL);
	}
}

/*
 * A fresh link and runner (grants, no board: every piece asks), a context
 * with a piece length of PIECE_NS and the two textures, and its first
 * group run whole and completed: the group that makes the next ones long.
 */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	enum group_wait wait;
	int pair[2];

	assert_non_null(f);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair), 0);
	f->peer = pair[1];
	f->link = mediator_link_create(pair[0], "test", 1);
	assert_non_null(f->link);
	f->ctx = gpu_context_create(&(struct gpu_context_options){
	    .domain = "test",
	    .client_id = 1,
	    .ctx_id = CTX_ID,
	    .name = "runner",
	    .piece_ns = PIECE_NS,
	    .renderer = renderer,
	    .link = f->link,
	});
	assert_non_null(f->ctx);
	f->runner = group_runner_create(&(struct group_runner_options){
	    .domain = "test",
	    .client_id = 1,
	    .grants = true,
	    .link = f->link,
	    .ops = &ops,
	    .data = f,
	});
	assert_non_null(f->runner);
	assert_int_equal(busy_texture_create(TEX_A, CTX_ID), 0);
	assert_int_equal(busy_texture_create(TEX_B, CTX_ID), 0);
	busy_blits(f->stream, TEX_A, TEX_B);
	assert_int_equal(group_runner_submit(f->runner, f->ctx, f->stream, BUSY_DWORDS, &wait), 0);
	assert_int_equal(wait, GROUP_WAITS_GRANT);
	assert_int_equal(grant_until_done(f), 1); /* no bound yet: whole */
	wait_idle(f);
	read_peer(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	group_runner_end_context(f->runner, f->ctx, pump, f);
	f->ctx = NULL;
	group_runner_destroy(f->runner);
	virgl_renderer_resource_unref(TEX_A);
	virgl_renderer_resource_unref(TEX_B);
	pump(f); /* completions of a destroyed context go nowhere */
	mediator_link_destroy(f->link);
	close(f->peer);
	free(f);
	return 0;
}

static void a_long_group_waits_for_a_grant_per_piece_and_reaches_the_gpu_in_pieces(void **state)
{
	struct fixture *f = *state;
	enum group_wait wait;

	assert_int_equal(group_runner_submit(f->runner, f->ctx, f->stream, BUSY_DWORDS, &wait), 0);
	assert_int_equal(wait, GROUP_WAITS_GRANT);
	assert_int_equal(group_runner_wait(f->runner), GROUP_WAITS_GRANT);
	/* No answer yet: it goes on waiting. */
	assert_int_equal(group_runner_resume(f->runner, &wait), 0);
	assert_int_equal(wait, GROUP_WAITS_GRANT);
	assert_true(grant_until_done(f) >= 2);
	assert_int_equal(group_runner_wait(f->runner), GROUP_DONE);
	wait_idle(f);
}

static void a_group_without_fence_room_waits_for_a_slot_before_it_is_decoded(void **state)
{
	struct fixture *f = *state;
	enum group_wait wait;

	f->no_room = true;
	/* Malformed: decoded, it would end with -EPROTO; it is not decoded yet. */
	f->stream[BUSY_DWORDS] = VIRGL_CMD(BUSY_CMD_BLIT, 0, 3);
	assert_int_equal(group_runner_submit(f->runner, f->ctx, f->stream, BUSY_DWORDS + 4, &wait),
			 0);
	assert_int_equal(wait, GROUP_WAITS_SLOT);
	assert_int_equal(group_runner_resume(f->runner, &wait), 0);
	assert_int_equal(wait, GROUP_WAITS_SLOT);
	f->no_room = false;
	assert_int_equal(group_runner_resume(f->runner, &wait), -EPROTO);
	assert_int_equal(group_runner_wait(f->runner), GROUP_DONE);
	assert_int_equal(f->pieces, 1); /* the set-up's only */
}

static void a_malformed_stream_ends_its_group_with_eproto_and_reaches_no_gpu(void **state)
{
	struct fixture *f = *state;
	enum group_wait wait;

	f->stream[BUSY_DWORDS] = VIRGL_CMD(BUSY_CMD_BLIT, 0, 3);
	assert_int_equal(group_runner_submit(f->runner, f->ctx, f->stream, BUSY_DWORDS + 4, &wait),
			 -EPROTO);
	assert_int_equal(f->pieces, 1);
	/* The context goes on: its next group runs. */
	assert_int_equal(group_runner_submit(f->runner, f->ctx, f->stream, BUSY_DWORDS, &wait), 0);
	assert_true(grant_until_done(f) >= 2);
	wait_idle(f);
}

static void a_refused_grant_ends_its_group_with_eperm(void **state)
{
	struct fixture *f = *state;
	enum group_wait wait;

	assert_int_equal(group_runner_submit(f->runner, f->ctx, f->stream, BUSY_DWORDS, &wait), 0);
	answer(f, WIRE_REFUSED);
	assert_int_equal(group_runner_resume(f->runner, &wait), -EPERM);
	assert_int_equal(group_runner_wait(f->runner), GROUP_DONE);
	assert_int_equal(f->pieces, 1);
}

static void a_second_group_while_one_waits_is_ebusy(void **state)
{
	struct fixture *f = *state;
	enum group_wait wait;

	assert_int_equal(group_runner_submit(f->runner, f->ctx, f->stream, BUSY_DWORDS, &wait), 0);
	assert_int_equal(group_runner_submit(f->runner, f->ctx, f->stream, BUSY_DWORDS, &wait),
			 -EBUSY);
	grant_until_done(f);
	wait_idle(f);
}

static void a_grant_asked_for_an_ended_context_is_awaited_and_released_unused(void **state)
{
	struct fixture *f = *state;
	enum group_wait wait;
	uint64_t asked;

	assert_int_equal(group_runner_submit(f->runner, f->ctx, f->stream, BUSY_DWORDS, &wait), 0);
	read_peer(f);
	asked = f->last_request;
	group_runner_end_context(f->runner, f->ctx, pump, f);
	f->ctx = NULL;
	assert_int_equal(group_runner_wait(f->runner), GROUP_WAITS_GRANT);
	assert_int_equal(group_runner_resume(f->runner, &wait), 0);
	assert_int_equal(wait, GROUP_WAITS_GRANT);
	answer(f, WIRE_GRANTED);
	assert_int_equal(group_runner_resume(f->runner, &wait), 0);
	assert_int_equal(wait, GROUP_DONE);
	read_peer(f);
	assert_int_equal(f->last_done_id, asked);
	assert_int_equal(f->last_done_measured, 0);
	assert_int_equal(f->pieces, 1);
}

static void group_runner_destroy_accepts_null(void **state)
{
	group_runner_destroy(NULL);
	group_runner_end_context(NULL, NULL, pump, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		a_long_group_waits_for_a_grant_per_piece_and_reaches_the_gpu_in_pieces, setup,
		teardown),
	    cmocka_unit_test_setup_teardown(
		a_group_without_fence_room_waits_for_a_slot_before_it_is_decoded, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		a_malformed_stream_ends_its_group_with_eproto_and_reaches_no_gpu, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_refused_grant_ends_its_group_with_eperm, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(a_second_group_while_one_waits_is_ebusy, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(
		a_grant_asked_for_an_ended_context_is_awaited_and_released_unused, setup, teardown),
	    cmocka_unit_test(group_runner_destroy_accepts_null),
	};
	int failed;

	renderer = test_renderer_start();
	failed = cmocka_run_group_tests(tests, NULL, NULL);
	renderer_destroy(renderer);
	return failed;
}
