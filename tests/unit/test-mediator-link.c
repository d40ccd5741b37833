// SPDX-License-Identifier: MIT
/*
 * Tests of the worker's link to mediatord (mediator_link.h): a message
 * the record channel does not take now is queued, never dropped, and sent
 * in order once the channel takes it again; a queue past its bound ends
 * the worker; when mediatord dies (WIRE_ORPHANED) and a restarted one
 * takes the worker over (WIRE_RESUME), the link says again what the new
 * one must know (wire.h); how long its pieces may be, from what the
 * grant board says of the safety domains' gap. The channel is a real
 * SOCK_SEQPACKET socket pair; "mediatord" (and its keeper) is this test at
 * the other end.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "worker/fence_done.h"
#include "worker/mediator_link.h"

/* A link on one end of a fresh socket pair with a small send buffer; *@peer: the other end. */
static struct mediator_link *make_link(int *peer)
{
	int pair[2], small = 4096;
	struct mediator_link *link;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair), 0);
	assert_int_equal(setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
	link = mediator_link_create(pair[0], "test", 1);
	assert_non_null(link);
	*peer = pair[1];
	return link;
}

/* Sends client-info messages numbered from *@n (in peer_pid) until the link queues one. */
static void fill_until_queued(struct mediator_link *link, int32_t *n)
{
	while (mediator_link_queued_bytes(link) == 0) {
		mediator_link_client_info(link, (*n)++, "x");
		assert_true(*n < 100000);
	}
}

static void a_done_the_channel_cannot_take_is_queued_and_sent_in_order(void **state)
{
	int peer;
	struct mediator_link *link = make_link(&peer);
	int32_t n = 0, expect = 0;
	bool got_done = false;
	unsigned char buf[4096];
	ssize_t len;

	fill_until_queued(link, &n);
	mediator_link_done(link, 42, 1000, 2000);
	assert_false(mediator_link_gone(link));
	/* Queued: the link asks to be ticked soon. */
	assert_int_equal(mediator_link_timeout_ms(link), MEDIATOR_LINK_RETRY_MS);
	/* mediatord reads; the link sends what it queued on its ticks. */
	while (!got_done) {
		len = recv(peer, buf, sizeof(buf), MSG_DONTWAIT);
		if (len < 0) {
			assert_int_equal(errno, EAGAIN);
			mediator_link_tick(link);
			continue;
		}
		if (((struct wire_header *)buf)->type == WIRE_DONE) {
			struct wire_done d;

			assert_int_equal(len, sizeof(d));
			memcpy(&d, buf, sizeof(d));
			assert_int_equal(d.id, 42);
			assert_int_equal(d.measured_ns, 1000);
			got_done = true;
			continue;
		}
		{
			struct wire_client_info ci;

			assert_int_equal(len, sizeof(ci));
			memcpy(&ci, buf, sizeof(ci));
			assert_int_equal(ci.peer_pid, expect++); /* nothing lost, in order */
		}
	}
	/* Everything sent before the done came before it. */
	assert_int_equal(expect, n);
	assert_int_equal(mediator_link_queued_bytes(link), 0);
	assert_int_equal(mediator_link_timeout_ms(link), -1);
	mediator_link_destroy(link);
	close(peer);
}

static void a_queue_past_its_bound_ends_the_worker(void **state)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		int peer;
		struct mediator_link *link = make_link(&peer);
		struct wire_group batch[WIRE_MAX_BATCH];

		memset(batch, 0, sizeof(batch));
		/* mediatord never reads: the queue grows to its bound, and the worker exits. */
		for (unsigned i = 0; i < 1000000; i++)
			mediator_link_send(link, batch, sizeof(batch));
		_exit(0); /* not reached */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), EXIT_FAILURE);
}

/* A link on one end of a fresh socket pair; *@peer: mediatord's end. */
static struct mediator_link *make_roomy_link(int *peer)
{
	int pair[2];
	struct mediator_link *link;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair), 0);
	link = mediator_link_create(pair[0], "test", 1);
	assert_non_null(link);
	*peer = pair[1];
	return link;
}

/* The next message at mediatord's end, into @buf; its size, or -1 when there is none. */
static ssize_t next_message(int peer, void *buf, size_t size)
{
	ssize_t n = recv(peer, buf, size, MSG_DONTWAIT);

	if (n < 0)
		assert_int_equal(errno, EAGAIN);
	return n;
}

/* The next message at mediatord's end is one of @type, @size bytes, copied to @m. */
static void expect_message(int peer, uint32_t type, void *m, size_t size)
{
	unsigned char buf[sizeof(struct wire_group) * WIRE_MAX_BATCH];
	struct wire_header hdr;

	assert_int_equal(next_message(peer, buf, sizeof(buf)), size);
	memcpy(&hdr, buf, sizeof(hdr));
	assert_int_equal(hdr.type, type);
	assert_int_equal(hdr.size, size);
	memcpy(m, buf, size);
}

/* Nothing waits at mediatord's end. */
static void expect_no_message(int peer)
{
	unsigned char buf[sizeof(struct wire_group) * WIRE_MAX_BATCH];

	assert_int_equal(next_message(peer, buf, sizeof(buf)), -1);
}

/* Reads and drops what waits at mediatord's end. */
static void skip_messages(int peer)
{
	unsigned char buf[sizeof(struct wire_group) * WIRE_MAX_BATCH];

	while (next_message(peer, buf, sizeof(buf)) >= 0)
		;
}

/* The keeper says mediatord died; the link reads it. */
static void orphaned(struct mediator_link *link, int peer, uint32_t serve_freely)
{
	struct wire_orphaned m = {.hdr = {WIRE_ORPHANED, sizeof(m)}, .serve_freely = serve_freely};

	assert_int_equal(send(peer, &m, sizeof(m), 0), sizeof(m));
	assert_int_equal(mediator_link_read(link), 0);
	assert_false(mediator_link_gone(link));
}

/*
 * A restarted mediatord takes the worker over; the link reads it and
 * answers with WIRE_RESUME first (what follows is the tests').
 */
static void resumed(struct mediator_link *link, int peer)
{
	struct wire_resume m = {.hdr = {WIRE_RESUME, sizeof(m)}}, answer;

	assert_int_equal(send(peer, &m, sizeof(m), 0), sizeof(m));
	assert_int_equal(mediator_link_read(link), 0);
	assert_false(mediator_link_gone(link));
	expect_message(peer, WIRE_RESUME, &answer, sizeof(answer));
}

/* mediatord answers grant request @id. */
static void grant(struct mediator_link *link, int peer, uint64_t id)
{
	struct wire_grant g = {.hdr = {WIRE_GRANT, sizeof(g)}, .id = id, .verdict = WIRE_GRANTED};

	assert_int_equal(send(peer, &g, sizeof(g), 0), sizeof(g));
	assert_int_equal(mediator_link_read(link), 0);
}

/*
 * A worker that said hello, who its client is, and of contexts 1, 2 and
 * 3 (2 destroyed since), whose group of context 3 waits for grant
 * request 2 (request 1 was granted). Returns 2, the waiting request's id.
 */
static uint64_t a_worker_with_a_waiting_group(struct mediator_link *link, int peer)
{
	uint32_t verdict;
	uint64_t id;

	mediator_link_hello(link, "fence-callback", "egl-surfaceless");
	mediator_link_client_info(link, 4242, "glmark2");
	mediator_link_context(link, 1, true, "one");
	mediator_link_context(link, 2, true, "two");
	mediator_link_context(link, 3, true, "three");
	mediator_link_context(link, 2, false, "two");
	id = mediator_link_request_grant(link, 1, 1000, 2000, 0, 0);
	grant(link, peer, id);
	assert_true(mediator_link_take_grant(link, &verdict));
	id = mediator_link_request_grant(link, 3, 3000, 4000, WIRE_GRANT_YOUNG, 3);
	assert_int_equal(id, 2);
	skip_messages(peer);
	return id;
}

/*
 * What a worker built by a_worker_with_a_waiting_group() answers a
 * WIRE_RESUME with: its hello, its client, its live contexts, its waiting
 * request, in this order, and nothing else.
 */
static void expect_resume_answer(int peer)
{
	struct wire_hello hello;
	struct wire_client_info info;
	struct wire_context ctx[2];
	struct wire_grant_request req;

	expect_message(peer, WIRE_HELLO, &hello, sizeof(hello));
	assert_int_equal(hello.worker_pid, getpid());
	assert_string_equal(hello.timestamp_source, "fence-callback");
	assert_string_equal(hello.renderer, "egl-surfaceless");
	expect_message(peer, WIRE_CLIENT_INFO, &info, sizeof(info));
	assert_int_equal(info.peer_pid, 4242);
	assert_string_equal(info.name, "glmark2");
	/* The live contexts, in any order. */
	expect_message(peer, WIRE_CONTEXT, &ctx[0], sizeof(ctx[0]));
	expect_message(peer, WIRE_CONTEXT, &ctx[1], sizeof(ctx[1]));
	assert_int_equal(ctx[0].ctx_id + ctx[1].ctx_id, 1 + 3);
	assert_int_not_equal(ctx[0].ctx_id, ctx[1].ctx_id);
	assert_int_equal(ctx[0].alive, 1);
	assert_int_equal(ctx[1].alive, 1);
	assert_string_equal(ctx[0].ctx_id == 1 ? ctx[0].name : ctx[1].name, "one");
	assert_string_equal(ctx[0].ctx_id == 3 ? ctx[0].name : ctx[1].name, "three");
	expect_message(peer, WIRE_GRANT_REQUEST, &req, sizeof(req));
	assert_int_equal(req.id, 2);
	assert_int_equal(req.ctx_id, 3);
	assert_int_equal(req.predicted_ns, 3000);
	assert_int_equal(req.bound_ns, 4000);
	assert_int_equal(req.flags, WIRE_GRANT_YOUNG);
	assert_int_equal(req.untiled, 3); /* why a long draw of it was not cut, as it was asked */
	expect_no_message(peer);
}

/*
 * Shows: a safety domain's worker told that mediatord died starts its
 * waiting group at once, dispatches freely, and sends nothing (records,
 * WIRE_DONE, contexts) to the dead mediatord.
 */
static void an_orphaned_safety_worker_starts_its_waiting_group_and_sends_nothing(void **state)
{
	int peer;
	struct mediator_link *link = make_roomy_link(&peer);
	struct wire_group record = {.hdr = {WIRE_GROUP, sizeof(record)}, .ctx_id = 1};
	uint32_t verdict = WIRE_REFUSED;
	uint64_t id;

	assert_false(mediator_link_serving_freely(link));
	id = mediator_link_request_grant(link, 1, 1000, 2000, 0, 0);
	skip_messages(peer);
	orphaned(link, peer, 1);
	assert_true(mediator_link_take_grant(link, &verdict));
	assert_int_equal(verdict, WIRE_GRANTED);
	assert_true(mediator_link_serving_freely(link));
	mediator_link_record(link, &record);
	mediator_link_flush(link);
	mediator_link_done(link, id, 1000, 2000);
	mediator_link_context(link, 2, true, "two");
	mediator_link_client_info(link, 1, "x");
	expect_no_message(peer);
	assert_int_equal(mediator_link_queued_bytes(link), 0);
	assert_false(mediator_link_gone(link));
	mediator_link_destroy(link);
	close(peer);
}

/*
 * Shows: a worker of another domain told that mediatord died keeps its
 * group waiting; a restarted mediatord's WIRE_RESUME gets, in order, its
 * hello, client, live contexts and the waiting request, with its id.
 */
static void an_orphaned_worker_waits_and_tells_its_new_mediatord_all(void **state)
{
	int peer;
	struct mediator_link *link = make_roomy_link(&peer);
	uint32_t verdict;

	a_worker_with_a_waiting_group(link, peer);
	orphaned(link, peer, 0);
	assert_false(mediator_link_take_grant(link, &verdict));
	assert_false(mediator_link_serving_freely(link));
	mediator_link_context(link, 4, true, "four"); /* told while orphaned: not sent */
	mediator_link_context(link, 4, false, "four");
	expect_no_message(peer);
	resumed(link, peer);
	expect_resume_answer(peer);
	assert_false(mediator_link_take_grant(link, &verdict));
	mediator_link_destroy(link);
	close(peer);
}

/*
 * Shows: after a WIRE_RESUME the worker sends WIRE_DONE only for groups
 * the new mediatord granted: the waiting request it answers, and later
 * ones; not for one its predecessor granted.
 */
static void after_a_resume_only_the_new_mediatords_grants_are_done(void **state)
{
	int peer;
	struct mediator_link *link = make_roomy_link(&peer);
	struct wire_done done;
	uint32_t verdict;
	uint64_t id = a_worker_with_a_waiting_group(link, peer);

	orphaned(link, peer, 0);
	resumed(link, peer);
	skip_messages(peer);
	mediator_link_done(link, id - 1, 10, 20); /* granted by the dead mediatord */
	expect_no_message(peer);
	grant(link, peer, id);
	assert_true(mediator_link_take_grant(link, &verdict));
	mediator_link_done(link, id, 30, 40);
	expect_message(peer, WIRE_DONE, &done, sizeof(done));
	assert_int_equal(done.id, id);
	id = mediator_link_request_grant(link, 1, 1000, 2000, 0, 0);
	skip_messages(peer);
	grant(link, peer, id);
	assert_true(mediator_link_take_grant(link, &verdict));
	mediator_link_done(link, id, 50, 60);
	expect_message(peer, WIRE_DONE, &done, sizeof(done));
	assert_int_equal(done.id, id);
	mediator_link_destroy(link);
	close(peer);
}

/*
 * Shows: a WIRE_RESUME with no WIRE_ORPHANED before it (the keeper's word
 * was lost) is answered the same, and its predecessor's grants are not
 * done.
 */
static void a_resume_without_word_of_the_death_is_answered_the_same(void **state)
{
	int peer;
	struct mediator_link *link = make_roomy_link(&peer);
	uint64_t id = a_worker_with_a_waiting_group(link, peer);

	resumed(link, peer);
	expect_resume_answer(peer);
	mediator_link_done(link, id - 1, 10, 20);
	expect_no_message(peer);
	mediator_link_destroy(link);
	close(peer);
}

/*
 * Shows: a resume says only what there is to say: a worker that said
 * hello but no client, has no context and no group waiting answers with
 * its hello alone.
 */
static void a_resume_repeats_only_what_was_said(void **state)
{
	int peer;
	struct mediator_link *link = make_roomy_link(&peer);
	struct wire_hello hello;
	uint32_t verdict;

	mediator_link_hello(link, "fence-callback", "egl-surfaceless");
	mediator_link_context(link, 1, true, "one");
	mediator_link_context(link, 1, false, "one");
	grant(link, peer, mediator_link_request_grant(link, 1, 1000, 2000, 0, 0));
	assert_true(mediator_link_take_grant(link, &verdict));
	skip_messages(peer);
	orphaned(link, peer, 1);
	resumed(link, peer);
	expect_message(peer, WIRE_HELLO, &hello, sizeof(hello));
	expect_no_message(peer);
	assert_false(mediator_link_serving_freely(link));
	mediator_link_destroy(link);
	close(peer);
}

/*
 * Shows: a worker whose renderer is not up yet (no hello) answers a
 * WIRE_RESUME with no hello, not a zeroed one: its client info follows
 * the answer directly.
 */
static void a_resume_before_the_hello_sends_no_hello(void **state)
{
	int peer;
	struct mediator_link *link = make_roomy_link(&peer);
	struct wire_client_info info;

	mediator_link_client_info(link, 7, "early");
	skip_messages(peer);
	resumed(link, peer);
	expect_message(peer, WIRE_CLIENT_INFO, &info, sizeof(info));
	assert_string_equal(info.name, "early");
	expect_no_message(peer);
	mediator_link_destroy(link);
	close(peer);
}

/* Shows: a WIRE_GRANT while orphaned breaks the protocol: nothing but a keeper speaks then. */
static void a_grant_while_orphaned_breaks_the_protocol(void **state)
{
	int peer;
	struct mediator_link *link = make_roomy_link(&peer);
	struct wire_grant g = {.hdr = {WIRE_GRANT, sizeof(g)}, .verdict = WIRE_GRANTED};
	uint32_t verdict;

	g.id = mediator_link_request_grant(link, 1, 1000, 2000, 0, 0);
	orphaned(link, peer, 0);
	assert_int_equal(send(peer, &g, sizeof(g), 0), sizeof(g));
	assert_int_equal(mediator_link_read(link), -EPIPE);
	assert_true(mediator_link_gone(link));
	assert_false(mediator_link_take_grant(link, &verdict));
	mediator_link_destroy(link);
	close(peer);
}

/*
 * Shows: a granted group armed for the early WIRE_DONE (fence_done.h) is
 * done by its fence's signal, whatever the main thread does meanwhile,
 * and the main thread's completion then sends nothing more.
 */
static void an_armed_group_is_done_when_its_fence_signals(void **state)
{
	int peer;
	struct mediator_link *link = make_roomy_link(&peer);
	struct wire_done done;
	uint32_t verdict;
	uint64_t id = mediator_link_request_grant(link, 1, 1000, 2000, 0, 0);

	grant(link, peer, id);
	assert_true(mediator_link_take_grant(link, &verdict));
	skip_messages(peer);
	mediator_link_arm_done(link, 9, id, 100);
	fence_done_signalled(9, 700);
	expect_message(peer, WIRE_DONE, &done, sizeof(done));
	assert_int_equal(done.id, id);
	assert_int_equal(done.end_ns, 700);
	mediator_link_done(link, id, 550, 650);
	expect_no_message(peer);
	mediator_link_destroy(link);
	close(peer);
}

/*
 * Shows: with a message queued the early WIRE_DONE would overtake it, so
 * the group is not armed; nor while mediatord is dead; and a restart
 * forgets what was armed for the dead one.
 */
static void no_early_done_past_the_queue_or_to_a_dead_mediatord(void **state)
{
	int peer;
	struct mediator_link *link = make_link(&peer);
	int32_t n = 0;

	fill_until_queued(link, &n);
	mediator_link_arm_done(link, 10, 5, 100);
	fence_done_signalled(10, 800);
	assert_false(fence_done_take(5)); /* never armed */
	mediator_link_destroy(link);
	close(peer);

	link = make_roomy_link(&peer);
	mediator_link_arm_done(link, 11, 1, 100);
	orphaned(link, peer, 0);
	fence_done_signalled(11, 900);
	expect_no_message(peer);
	mediator_link_arm_done(link, 12, 1, 100);
	assert_false(fence_done_take(1)); /* not armed while orphaned */
	mediator_link_destroy(link);
	close(peer);
}

static void destroying_null_is_fine(void **state)
{
	mediator_link_destroy(NULL);
}

/*
 * The piece length the board allows: the domain's own without a board;
 * with one, 0 (no cutting) while no safety domain is active, the safety
 * gap where shorter, never under 1 ms whatever another worker wrote there.
 */
static void pieces_follow_the_safety_gap_on_the_board(void **state)
{
	int peer, fd = memfd_create("board", MFD_CLOEXEC);
	struct mediator_link *link = make_roomy_link(&peer);
	struct wire_board *board;

	(void)state;
	assert_int_equal(mediator_link_piece_ns(link, 4000000), 4000000);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, sizeof(*board)), 0);
	board = mmap(NULL, sizeof(*board), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(board != MAP_FAILED);
	board->magic = WIRE_BOARD_MAGIC;
	board->domains = 1;
	assert_int_equal(mediator_link_attach_board(link, dup(fd), 0), 0);
	assert_int_equal(mediator_link_piece_ns(link, 4000000), 0);
	atomic_store(&board->safety_gap_ns, 13000000);
	assert_int_equal(mediator_link_piece_ns(link, 4000000), 4000000);
	atomic_store(&board->safety_gap_ns, 2500000);
	assert_int_equal(mediator_link_piece_ns(link, 4000000), 2500000);
	atomic_store(&board->safety_gap_ns, 1);
	assert_int_equal(mediator_link_piece_ns(link, 4000000), 1000000);
	assert_int_equal(mediator_link_piece_ns(link, 0), 0);
	munmap(board, sizeof(*board));
	close(fd);
	mediator_link_destroy(link);
	close(peer);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_done_the_channel_cannot_take_is_queued_and_sent_in_order),
	    cmocka_unit_test(a_queue_past_its_bound_ends_the_worker),
	    cmocka_unit_test(an_orphaned_safety_worker_starts_its_waiting_group_and_sends_nothing),
	    cmocka_unit_test(an_orphaned_worker_waits_and_tells_its_new_mediatord_all),
	    cmocka_unit_test(after_a_resume_only_the_new_mediatords_grants_are_done),
	    cmocka_unit_test(a_resume_without_word_of_the_death_is_answered_the_same),
	    cmocka_unit_test(pieces_follow_the_safety_gap_on_the_board),
	    cmocka_unit_test(a_resume_repeats_only_what_was_said),
	    cmocka_unit_test(a_resume_before_the_hello_sends_no_hello),
	    cmocka_unit_test(a_grant_while_orphaned_breaks_the_protocol),
	    cmocka_unit_test(an_armed_group_is_done_when_its_fence_signals),
	    cmocka_unit_test(no_early_done_past_the_queue_or_to_a_dead_mediatord),
	    cmocka_unit_test(destroying_null_is_fine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
