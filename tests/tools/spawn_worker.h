// SPDX-License-Identifier: MIT
/*
 * Starts the built mediator-worker for one vhost-user connection, as
 * mediatord does (the VM's socket on WIRE_CLIENT_FD, the record channel to
 * mediatord on WIRE_WORKER_FD), for the unit tests that play QEMU against
 * the real worker. Header-only: each test program is one file.
 */
#ifndef TESTS_SPAWN_WORKER_H
#define TESTS_SPAWN_WORKER_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/wire.h"

/*
 * Forks and execs @worker_path for domain @domain; *@qemu becomes our end
 * of the vhost-user connection, *@mediator our end of the record channel.
 * Returns the worker's pid, or -1 when a socketpair or fork failed.
 */
static inline pid_t spawn_vhost_user_worker(const char *worker_path, const char *domain, int *qemu,
					    int *mediator)
{
	int client[2], record[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, client) < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, record) < 0) {
		close(client[0]);
		close(client[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		/* Above the fds the worker expects, so that dup2 never clobbers. */
		int c = fcntl(client[1], F_DUPFD, 10), m = fcntl(record[1], F_DUPFD, 10);
		const char *prev = getenv("ASAN_OPTIONS");
		char asan[512];

		if (c < 0 || m < 0 || dup2(c, WIRE_CLIENT_FD) < 0 || dup2(m, WIRE_WORKER_FD) < 0)
			_exit(125);
		/* Under ASan: the worker loads Mesa, whose leaks are not ours
		 * (scripts/test.sh does the same for the integration tests). */
		snprintf(asan, sizeof(asan), "%s%sdetect_leaks=0", prev ? prev : "",
			 prev ? ":" : "");
		setenv("ASAN_OPTIONS", asan, 1);
		execl(worker_path, "mediator-worker", "--domain", domain, "--client-id", "1",
		      "--transport", "vhost-user", "--renderer", "egl-surfaceless", (char *)NULL);
		_exit(127);
	}
	close(client[1]);
	close(record[1]);
	if (pid < 0) {
		close(client[0]);
		close(record[0]);
		return -1;
	}
	*qemu = client[0];
	*mediator = record[0];
	return pid;
}

#endif
