/*
 * Tests of the worker's link to mediatord (mediator_link.h): a message
 * the record channel does not take now is queued, never dropped, and sent
 * in order once the channel takes it again; a queue past its bound ends
 * the worker. The channel is a real SOCK_SEQPACKET socket pair with a
 * small send buffer; "mediatord" is this test reading the other end.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mediator_link.h"

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

static void destroying_null_is_fine(void **state)
{
	mediator_link_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_done_the_channel_cannot_take_is_queued_and_sent_in_order),
	    cmocka_unit_test(a_queue_past_its_bound_ends_the_worker),
	    cmocka_unit_test(destroying_null_is_fine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
