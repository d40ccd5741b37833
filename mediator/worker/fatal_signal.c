// SPDX-License-Identifier: MIT
/*
 * Why a worker died, in mediatord's log. mediatord learns a child's end
 * from waitpid(), with its signal; a worker it took over from a mediatord
 * that stopped is not its child, and its end shows there only as "ended
 * after N groups". On CI (2026-11-29) test-restart-systemd's infotainment
 * worker ended so after the restart, its client's connection reset, and
 * nothing said why. Now the worker says it: a fault's handler writes one
 * line made before any fault (write(2) is async-signal-safe; snprintf is
 * not), puts the handler it replaced back (SIG_DFL, or a sanitizer's) and
 * lets the signal come again: a fault by returning to the instruction that
 * faulted, a signal sent (abort()) by raising it once more. The process
 * then dies as it would have, with its core or its sanitizer's report.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "worker/fatal_signal.h"

static const struct {
	int sig;
	const char *name;
} fatal[] = {
    {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},	{SIGILL, "SIGILL"},
    {SIGFPE, "SIGFPE"},	  {SIGABRT, "SIGABRT"},
};

#define N_FATAL (sizeof(fatal) / sizeof(fatal[0]))

static struct sigaction before[N_FATAL];
static char prefix[160];
static size_t prefix_len;

/* Writes @s (async-signal-safe). */
static void say(const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(STDERR_FILENO, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* " at 0x..." for @addr (async-signal-safe). */
static void say_address(const void *addr)
{
	char buf[32] = " at 0x";
	size_t n = strlen(buf), start = n;
	unsigned long long v = (unsigned long long)(uintptr_t)addr;

	do {
		buf[n++] = "0123456789abcdef"[v & 0xf];
		v >>= 4;
	} while (v && n < sizeof(buf));
	for (size_t i = start, j = n - 1; i < j; i++, j--) {
		char t = buf[i];

		buf[i] = buf[j];
		buf[j] = t;
	}
	say(buf, n);
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	for (size_t i = 0; i < N_FATAL; i++) {
		if (fatal[i].sig != sig)
			continue;
		say(prefix, prefix_len);
		say(fatal[i].name, strlen(fatal[i].name));
		if (si->si_code > 0 && sig != SIGABRT)
			say_address(si->si_addr);
		say("\n", 1);
		sigaction(sig, &before[i], NULL);
		break;
	}
	/* Sent (kill(), abort()): again, for the handler put back. A fault comes again by itself.
	 */
	if (si->si_code <= 0)
		raise(sig);
}

int fatal_signal_report(const char *domain, uint32_t client_id)
{
	struct sigaction sa;
	int n = snprintf(prefix, sizeof(prefix),
			 "mediator-worker: domain %s client %u: fatal signal ", domain, client_id);

	if (n < 0)
		return -EINVAL;
	prefix_len = (size_t)n < sizeof(prefix) ? (size_t)n : sizeof(prefix) - 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < N_FATAL; i++)
		if (sigaction(fatal[i].sig, &sa, &before[i]) < 0)
			return -errno;
	return 0;
}
