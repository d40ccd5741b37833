// SPDX-License-Identifier: MIT
/*
 * Tests of peer_cred.h: the kernel's word on a unix socket's peer, and
 * who of them may change mediatord.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/peer_cred.h"

static void a_socket_pair_peer_is_this_process(void **state)
{
	int pair[2];
	struct peer_cred cred;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
	assert_int_equal(peer_cred_read(pair[0], &cred), 0);
	assert_int_equal(cred.pid, getpid());
	assert_int_equal(cred.uid, geteuid());
	assert_int_equal(cred.gid, getegid());
	assert_true(peer_cred_in_group(&cred, getegid()));
	close(pair[0]);
	close(pair[1]);
}

static void a_pipe_has_no_peer(void **state)
{
	int p[2];
	struct peer_cred cred;

	assert_int_equal(pipe(p), 0);
	assert_true(peer_cred_read(p[0], &cred) < 0);
	close(p[0]);
	close(p[1]);
}

static void supplementary_groups_count(void **state)
{
	struct peer_cred cred = {.uid = 1000, .gid = 1000, .n_groups = 2, .groups = {24, 27}};

	assert_true(peer_cred_in_group(&cred, 1000));
	assert_true(peer_cred_in_group(&cred, 27));
	assert_false(peer_cred_in_group(&cred, 28));
}

static void admins_are_root_the_daemon_user_and_the_admin_group(void **state)
{
	struct peer_cred root = {.uid = 0, .gid = 0};
	struct peer_cred self = {.uid = 120, .gid = 120};
	struct peer_cred member = {.uid = 1000, .gid = 1000, .n_groups = 1, .groups = {130}};
	struct peer_cred other = {.uid = 1001, .gid = 1001};

	assert_true(peer_cred_is_admin(&root, 120, (gid_t)-1));
	assert_true(peer_cred_is_admin(&self, 120, (gid_t)-1));
	assert_false(peer_cred_is_admin(&member, 120, (gid_t)-1));
	assert_true(peer_cred_is_admin(&member, 120, 130));
	assert_false(peer_cred_is_admin(&other, 120, 130));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_socket_pair_peer_is_this_process),
	    cmocka_unit_test(a_pipe_has_no_peer),
	    cmocka_unit_test(supplementary_groups_count),
	    cmocka_unit_test(admins_are_root_the_daemon_user_and_the_admin_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
