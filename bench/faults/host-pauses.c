// SPDX-License-Identifier: MIT
/*
 * host-pauses: when the host did not run a process of the cluster's
 * priority (bench/faults/run.sh; not a test).
 *
 *   host-pauses SECONDS [THRESHOLD_MS]
 *
 * Sleeps 2 ms at a time, for SECONDS, at the priority it was started with
 * (bench/faults starts it at the cluster client's: nice 0). A wake-up
 * more than THRESHOLD_MS (default 30) late is a stall; it prints one JSON
 * line per stall, with CLOCK_MONOTONIC times (those of mediatord's trace):
 *
 *   {"type":"stall","start_ns":..,"end_ns":..,"ticks":..,"system_ticks":..,
 *    "expected_ticks":..}
 *
 * ticks: the CPU time /proc/stat accounted over the stall on all CPUs
 * (user, nice, system, idle, iowait, irq, softirq, steal), in its units
 * (USER_HZ); system_ticks: the part in the kernel (system, irq, softirq);
 * expected_ticks: the stall's length times the CPUs times USER_HZ. A
 * stall the cluster's client and worker shared: whatever held the CPUs
 * (the kernel's own work mostly, when system_ticks is most of ticks),
 * nothing of the cluster's priority ran. Seen here in bench/faults'
 * mem-flood row: stalls of 141 and 116 ms (12 of 15 and 8 of 18
 * accounted ticks in the kernel), while the cluster's groups on the
 * "GPU" took 84 and 74 ms alone; both about 4 s into a round, when the
 * guest kernel handed freed memory back to its hypervisor (free page
 * reporting).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TICK_NS (2 * 1000000L)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* All CPUs' accounted time from /proc/stat's first line (USER_HZ); zeros when unreadable. */
struct ticks {
	uint64_t all, system;
};

static struct ticks accounted_ticks(void)
{
	unsigned long long v[8] = {0};
	struct ticks t = {0, 0};
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return t;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) != 8)
		memset(v, 0, sizeof(v));
	fclose(f);
	for (int i = 0; i < 8; i++)
		t.all += v[i];
	t.system = v[2] + v[5] + v[6];
	return t;
}

static int parse_positive(const char *s, const char *what, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	if (errno || *end || *out <= 0) {
		fprintf(stderr, "host-pauses: %s must be a positive whole number, not \"%s\"\n",
			what, s);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long seconds, threshold_ms = 30, hz = sysconf(_SC_CLK_TCK),
		      cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t end, prev;
	struct ticks prev_ticks;
	const struct timespec tick = {0, TICK_NS};

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: host-pauses SECONDS [THRESHOLD_MS]\n");
		return 2;
	}
	if (parse_positive(argv[1], "SECONDS", &seconds) ||
	    (argc == 3 && parse_positive(argv[2], "THRESHOLD_MS", &threshold_ms)))
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	end = now_ns() + (uint64_t)seconds * 1000000000ull;
	prev = now_ns();
	prev_ticks = accounted_ticks();
	while (prev < end) {
		uint64_t t;
		struct ticks ticks;

		nanosleep(&tick, NULL);
		t = now_ns();
		ticks = accounted_ticks();
		if (t - prev > (uint64_t)TICK_NS + (uint64_t)threshold_ms * 1000000ull)
			printf(
			    "{\"type\":\"stall\",\"start_ns\":%llu,\"end_ns\":%llu,\"ticks\":%llu,"
			    "\"system_ticks\":%llu,\"expected_ticks\":%llu}\n",
			    (unsigned long long)prev, (unsigned long long)t,
			    (unsigned long long)(ticks.all - prev_ticks.all),
			    (unsigned long long)(ticks.system - prev_ticks.system),
			    (unsigned long long)((t - prev) * (uint64_t)cpus * (uint64_t)hz /
						 1000000000ull));
		prev = t;
		prev_ticks = ticks;
	}
	return 0;
}
