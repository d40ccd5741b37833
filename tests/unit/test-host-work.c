// SPDX-License-Identifier: MIT
/*
 * Tests of bulk host work at idle priority (worker/host_work.h), with
 * this test as mediatord at the other end of a real SOCK_SEQPACKET pair
 * and the real scheduling policy of a thread of its own: work of 4 MiB
 * or more lowers the thread to SCHED_IDLE and is followed by DONE; work
 * right after it, while the put-back is still on its way, sends BEGIN so
 * that the put-back does not leave it at the domain's priority (what
 * happened when a client made its textures one after another); work
 * after the put-back lowers itself again; a thread idle by mediatord's
 * own doing stays so and sends HELD after the work (counted, nothing
 * changed); small work changes nothing; the teardown lowers for good.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/wire.h"
#include "worker/host_work.h"
#include "worker/mediator_link.h"

#define BIG (HOST_WORK_MIN_BYTES)

/* What mediatord does on DONE: the calling thread back to SCHED_OTHER. */
static void put_back(void)
{
	struct sched_param sp = {.sched_priority = 0};

	assert_int_equal(sched_setscheduler(0, SCHED_OTHER, &sp), 0);
}

static void lower(void)
{
	struct sched_param sp = {.sched_priority = 0};

	assert_int_equal(sched_setscheduler(0, SCHED_IDLE, &sp), 0);
}

/* The phases mediatord received so far, in order, into @out (at most @max); their number. */
static size_t received(int peer, uint32_t *out, size_t max)
{
	struct wire_host_work m;
	size_t n = 0;
	ssize_t len;

	while ((len = recv(peer, &m, sizeof(m), MSG_DONTWAIT)) > 0) {
		assert_int_equal(len, sizeof(m));
		assert_int_equal(m.hdr.type, WIRE_HOST_WORK);
		assert_int_equal(m.reserved, 0);
		assert_true(n < max);
		out[n++] = m.phase;
	}
	assert_true(len < 0 && errno == EAGAIN);
	return n;
}

struct run {
	void (*body)(int peer);
	int peer;
};

static void *thread_main(void *arg)
{
	struct run *r = arg;

	r->body(r->peer);
	return NULL;
}

/*
 * Runs @body on a thread of its own (the test's own thread keeps its
 * policy), with host work enabled over a fresh link.
 */
static void on_own_thread(void (*body)(int peer))
{
	int pair[2];
	struct mediator_link *link;
	struct run r = {.body = body};
	pthread_t t;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair), 0);
	link = mediator_link_create(pair[0], "test", 1);
	assert_non_null(link);
	host_work_enable(link);
	r.peer = pair[1];
	assert_int_equal(pthread_create(&t, NULL, thread_main, &r), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	host_work_enable(NULL);
	mediator_link_destroy(link);
	close(pair[1]);
}

static void lowers_and_reports(int peer)
{
	uint32_t got[4];

	host_work_begin(BIG);
	assert_int_equal(sched_getscheduler(0), SCHED_IDLE);
	host_work_end();
	assert_int_equal(received(peer, got, 4), 1);
	assert_int_equal(got[0], WIRE_HOST_WORK_DONE);
}

static void bulk_work_runs_at_idle_priority_and_is_reported(void **state)
{
	(void)state;
	on_own_thread(lowers_and_reports);
}

static void back_to_back(int peer)
{
	uint32_t got[4];

	host_work_begin(BIG);
	host_work_end();
	/* The put-back has not come yet: the next work asks to stay down. */
	host_work_begin(BIG);
	assert_int_equal(sched_getscheduler(0), SCHED_IDLE);
	host_work_end();
	assert_int_equal(received(peer, got, 4), 3);
	assert_int_equal(got[0], WIRE_HOST_WORK_DONE);
	assert_int_equal(got[1], WIRE_HOST_WORK_BEGIN);
	assert_int_equal(got[2], WIRE_HOST_WORK_DONE);
	/* mediatord acts on all three: back at the domain's priority. */
	put_back();
	/* Work after the put-back lowers itself again, no BEGIN needed. */
	lowers_and_reports(peer);
}

static void work_before_the_put_back_asks_to_stay_at_idle_priority(void **state)
{
	(void)state;
	on_own_thread(back_to_back);
}

static void idle_by_mediatord(int peer)
{
	uint32_t got[4];

	/* Demoted by mediatord (a revocation), no put-back asked for: HELD, to be counted. */
	lower();
	host_work_begin(BIG);
	assert_int_equal(received(peer, got, 4), 0);
	host_work_end();
	assert_int_equal(received(peer, got, 4), 1);
	assert_int_equal(got[0], WIRE_HOST_WORK_HELD);
	assert_int_equal(sched_getscheduler(0), SCHED_IDLE);
	/* Small work while held says nothing. */
	host_work_begin(1);
	host_work_end();
	assert_int_equal(received(peer, got, 4), 0);
}

static void a_thread_idle_by_mediatords_doing_says_held(void **state)
{
	(void)state;
	on_own_thread(idle_by_mediatord);
}

static void small(int peer)
{
	uint32_t got[4];

	host_work_begin(BIG - 1);
	assert_int_equal(sched_getscheduler(0), SCHED_OTHER);
	host_work_end();
	assert_int_equal(received(peer, got, 4), 0);
}

static void small_work_changes_nothing(void **state)
{
	(void)state;
	on_own_thread(small);
}

static void teardown_lowers(int peer)
{
	uint32_t got[4];

	host_work_final();
	assert_int_equal(sched_getscheduler(0), SCHED_IDLE);
	assert_int_equal(received(peer, got, 4), 0);
}

static void the_teardown_lowers_for_good(void **state)
{
	(void)state;
	on_own_thread(teardown_lowers);
}

static void off(int peer)
{
	(void)peer;
	host_work_enable(NULL);
	host_work_begin(BIG);
	assert_int_equal(sched_getscheduler(0), SCHED_OTHER);
	host_work_end();
	host_work_final();
	assert_int_equal(sched_getscheduler(0), SCHED_OTHER);
}

static void off_it_changes_nothing(void **state)
{
	(void)state;
	on_own_thread(off);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(bulk_work_runs_at_idle_priority_and_is_reported),
	    cmocka_unit_test(work_before_the_put_back_asks_to_stay_at_idle_priority),
	    cmocka_unit_test(a_thread_idle_by_mediatords_doing_says_held),
	    cmocka_unit_test(small_work_changes_nothing),
	    cmocka_unit_test(the_teardown_lowers_for_good),
	    cmocka_unit_test(off_it_changes_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
