// SPDX-License-Identifier: MIT
/*
 * Tests of the early WIRE_DONE (fence_done.h): a granted group's
 * completion goes out once, from whichever thread comes first; fences
 * signal in order; a full channel leaves the message to the main thread;
 * a forgotten channel gets nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "worker/fence_done.h"
#include "common/wire.h"

struct channel {
	int worker; /* the worker's end, armed */
	int mediatord;
};

static int setup(void **state)
{
	static struct channel ch;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	ch.worker = sv[0];
	ch.mediatord = sv[1];
	*state = &ch;
	return 0;
}

static int teardown(void **state)
{
	struct channel *ch = *state;

	fence_done_forget(ch->worker);
	close(ch->worker);
	close(ch->mediatord);
	return 0;
}

/* The next WIRE_DONE mediatord's end holds, or false when none waits. */
static bool next_done(const struct channel *ch, struct wire_done *out)
{
	ssize_t n = recv(ch->mediatord, out, sizeof(*out), MSG_DONTWAIT);

	if (n < 0)
		return false;
	assert_int_equal(n, sizeof(*out));
	assert_int_equal(out->hdr.type, WIRE_DONE);
	assert_int_equal(out->hdr.size, sizeof(*out));
	return true;
}

static void signalled_fence_sends_done_once(void **state)
{
	struct channel *ch = *state;
	struct wire_done d;

	assert_int_equal(fence_done_arm(ch->worker, 7, 41, 1000), 0);
	fence_done_signalled(7, 5000);
	assert_true(next_done(ch, &d));
	assert_int_equal(d.id, 41);
	assert_int_equal(d.end_ns, 5000);
	assert_int_equal(d.measured_ns, 4000);
	/* Signalled again (a later fence): nothing more. */
	fence_done_signalled(8, 6000);
	assert_false(next_done(ch, &d));
	/* The main thread learns it went out and sends nothing. */
	assert_true(fence_done_take(41));
	assert_false(fence_done_take(41));
}

static void main_thread_first_takes_it_back(void **state)
{
	struct channel *ch = *state;
	struct wire_done d;

	assert_int_equal(fence_done_arm(ch->worker, 20, 50, 10000), 0);
	/* The main thread completes the group first: it sends, the relay must not. */
	assert_false(fence_done_take(50));
	fence_done_signalled(20, 12000);
	assert_false(next_done(ch, &d));
}

static void a_fence_ends_every_earlier_one_not_later_ones(void **state)
{
	struct channel *ch = *state;
	struct wire_done d;

	assert_int_equal(fence_done_arm(ch->worker, 30, 60, 20000), 0);
	assert_int_equal(fence_done_arm(ch->worker, 31, 61, 21000), 0);
	assert_int_equal(fence_done_arm(ch->worker, 33, 62, 22000), 0);
	fence_done_signalled(32, 30000);
	assert_true(next_done(ch, &d));
	assert_true(d.id == 60 || d.id == 61);
	assert_true(next_done(ch, &d));
	assert_true(d.id == 60 || d.id == 61);
	assert_false(next_done(ch, &d));
	fence_done_signalled(33, 31000);
	assert_true(next_done(ch, &d));
	assert_int_equal(d.id, 62);
	/* Started when the previous fence ended, after its own dispatch. */
	assert_int_equal(d.measured_ns, 1000);
	for (uint64_t id = 60; id <= 62; id++)
		assert_true(fence_done_take(id));
}

/*
 * One callback for two fences whose slots lie in the other order (slots
 * are reused as they are freed): mediatord hears of them in fence order.
 * Seen in test-gpu-context, where the pieces' grants came back 3, 2.
 */
static void fences_ended_together_are_relayed_in_fence_order(void **state)
{
	struct channel *ch = *state;
	struct wire_done d;

	assert_int_equal(fence_done_arm(ch->worker, 34, 63, 23000), 0); /* slot 0 */
	assert_int_equal(fence_done_arm(ch->worker, 35, 64, 23500), 0); /* slot 1 */
	assert_false(fence_done_take(63));				/* frees slot 0 */
	assert_int_equal(fence_done_arm(ch->worker, 37, 66, 25000), 0); /* slot 0 */
	assert_false(fence_done_take(64));				/* frees slot 1 */
	assert_int_equal(fence_done_arm(ch->worker, 36, 65, 24000), 0); /* slot 1 */
	fence_done_signalled(37, 32000);
	assert_true(next_done(ch, &d));
	assert_int_equal(d.id, 65);
	assert_true(next_done(ch, &d));
	assert_int_equal(d.id, 66);
	assert_false(next_done(ch, &d));
	assert_true(fence_done_take(65));
	assert_true(fence_done_take(66));
}

static void fence_ids_wrap(void **state)
{
	struct channel *ch = *state;
	struct wire_done d;

	assert_int_equal(fence_done_arm(ch->worker, 2, 70, 40000), 0);
	/* UINT32_MAX comes before 2 once the ids wrapped. */
	fence_done_signalled(UINT32_MAX, 41000);
	assert_false(next_done(ch, &d));
	fence_done_signalled(2, 42000);
	assert_true(next_done(ch, &d));
	assert_int_equal(d.id, 70);
	assert_true(fence_done_take(70));
}

static void forgotten_channel_gets_nothing(void **state)
{
	struct channel *ch = *state;
	struct wire_done d;

	assert_int_equal(fence_done_arm(ch->worker, 40, 80, 50000), 0);
	fence_done_forget(ch->worker);
	fence_done_signalled(40, 51000);
	assert_false(next_done(ch, &d));
	/* The main thread decides (its mediatord died or changed). */
	assert_false(fence_done_take(80));
}

static void full_channel_leaves_it_to_the_main_thread(void **state)
{
	struct channel *ch = *state;
	struct wire_done d = {.hdr = {WIRE_DONE, sizeof(d)}};
	int fill = 0;

	while (send(ch->worker, &d, sizeof(d), MSG_DONTWAIT) == (ssize_t)sizeof(d))
		fill++;
	assert_true(fill > 0);
	assert_int_equal(fence_done_arm(ch->worker, 50, 90, 60000), 0);
	fence_done_signalled(50, 61000);
	/* Not sent: the main thread must send it (it queues). */
	assert_false(fence_done_take(90));
}

static void every_slot_armed_is_enospc(void **state)
{
	struct channel *ch = *state;

	for (uint64_t i = 0; i < FENCE_DONE_SLOTS; i++)
		assert_int_equal(fence_done_arm(ch->worker, 100 + (uint32_t)i, 100 + i, 1), 0);
	assert_int_equal(fence_done_arm(ch->worker, 200, 200, 1), -ENOSPC);
	assert_int_equal(fence_done_arm(ch->worker, 201, 0, 1), -EINVAL);
	assert_int_equal(fence_done_arm(-1, 201, 201, 1), -EINVAL);
	assert_false(fence_done_take(100));
	assert_int_equal(fence_done_arm(ch->worker, 200, 200, 1), 0);
}

/* The sync thread signals fences while the main thread takes them back. */
struct race {
	uint32_t fences;
};

static void *sync_thread(void *data)
{
	const struct race *r = data;

	for (uint32_t f = 1; f <= r->fences; f++)
		fence_done_signalled(f, 1000000u + f);
	return NULL;
}

static void racing_threads_send_each_done_exactly_once(void **state)
{
	struct channel *ch = *state;
	enum { FENCES = 2000 };
	struct race r = {FENCES};
	pthread_t t;
	unsigned relayed = 0, by_main = 0, received = 0;
	struct wire_done d;
	int big = 4 << 20;

	setsockopt(ch->mediatord, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(ch->worker, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	/* Arm ahead of the fences, take back behind them, as a worker does. */
	assert_int_equal(pthread_create(&t, NULL, sync_thread, &r), 0);
	for (uint32_t f = 1; f <= FENCES; f++) {
		while (fence_done_arm(ch->worker, f, 1000 + f, 0) == -ENOSPC) {
			/* The oldest armed one: taken by the "main thread". */
			static uint32_t oldest = 1;

			if (fence_done_take(1000 + oldest++))
				relayed++;
			else
				by_main++;
		}
		while (next_done(ch, &d))
			received++;
	}
	pthread_join(t, NULL);
	for (uint32_t f = 1; f <= FENCES; f++)
		if (fence_done_take(1000 + f))
			relayed++;
	while (next_done(ch, &d))
		received++;
	/* Each relayed one arrived once; none of those the main thread took did. */
	assert_int_equal(received, relayed);
	assert_true(relayed + by_main <= FENCES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(signalled_fence_sends_done_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(main_thread_first_takes_it_back, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_fence_ends_every_earlier_one_not_later_ones, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(fences_ended_together_are_relayed_in_fence_order, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(fence_ids_wrap, setup, teardown),
	    cmocka_unit_test_setup_teardown(forgotten_channel_gets_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(full_channel_leaves_it_to_the_main_thread, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(every_slot_armed_is_enospc, setup, teardown),
	    cmocka_unit_test_setup_teardown(racing_threads_send_each_done_exactly_once, setup,
					    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
