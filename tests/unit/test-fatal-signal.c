// SPDX-License-Identifier: MIT
/*
 * Tests of worker/fatal_signal.h: a worker that faults or aborts says so
 * on stderr, naming its domain, client and signal, and still dies of the
 * signal (or, under a sanitizer, of the sanitizer's report: the handler
 * before it still runs).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "worker/fatal_signal.h"

enum death { BY_FAULT, BY_ABORT };

/* Where the child faults: not mapped (a variable, so that the compiler cannot see it). */
static volatile uintptr_t bad_address = 0x10;

/*
 * Runs a child that installs the report and dies as @how says; returns
 * what it wrote on stderr in @out (NUL-terminated) and its wait status.
 */
static int child_dies(enum death how, char *out, size_t size)
{
	int pipefd[2], status = 0;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(pipefd[1], STDERR_FILENO);
		close(pipefd[0]);
		/* As in a worker: not cmocka's handlers, which go back to the test. */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGABRT, SIG_DFL);
		if (fatal_signal_report("cluster", 7) < 0)
			_exit(3);
		if (how == BY_ABORT)
			abort();
		*(volatile int *)bad_address = 1;
		_exit(4);
	}
	close(pipefd[1]);
	while (got + 1 < size && (n = read(pipefd[0], out + got, size - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(pipefd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void a_fault_is_named_and_still_kills(void **state)
{
	char out[8192];
	int status;

	(void)state;
	status = child_dies(BY_FAULT, out, sizeof(out));
	assert_true(WIFSIGNALED(status));
	assert_non_null(strstr(
	    out, "mediator-worker: domain cluster client 7: fatal signal SIGSEGV at 0x10\n"));
}

static void an_abort_is_named_and_still_kills(void **state)
{
	char out[8192];
	int status;

	(void)state;
	status = child_dies(BY_ABORT, out, sizeof(out));
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	assert_non_null(
	    strstr(out, "mediator-worker: domain cluster client 7: fatal signal SIGABRT\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_fault_is_named_and_still_kills),
	    cmocka_unit_test(an_abort_is_named_and_still_kills),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
