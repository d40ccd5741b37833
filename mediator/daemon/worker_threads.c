// SPDX-License-Identifier: MIT
/*
 * A worker's threads, seen from mediatord (see worker_threads.h).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemon/worker_threads.h"

/* The name Mesa's llvmpipe gives its rasterizer threads ("llvmpipe-0", ...). */
#define RASTER_PREFIX "llvmpipe-"

int worker_threads_add_stat(const char *line, struct worker_cpu *out)
{
	/* "tid (comm) S ...": comm may hold spaces and parentheses; it ends at the last ')'. */
	const char *open = strchr(line, '('), *close = strrchr(line, ')');
	unsigned long long utime, stime;
	char state;
	long ticks = sysconf(_SC_CLK_TCK);
	uint64_t ns;

	if (!open || !close || close < open || ticks <= 0)
		return -EINVAL;
	/* After comm: state (3), then fields 4..13, utime (14), stime (15). */
	if (sscanf(close + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &state,
		   &utime, &stime) != 3)
		return -EINVAL;
	ns = (uint64_t)(utime + stime) * (1000000000ull / (uint64_t)ticks);
	out->threads++;
	out->total_ns += ns;
	if (close - open - 1 >= (long)strlen(RASTER_PREFIX) &&
	    strncmp(open + 1, RASTER_PREFIX, strlen(RASTER_PREFIX)) == 0) {
		out->raster_threads++;
		out->raster_ns += ns;
	}
	if (state == 'R')
		out->runnable = true;
	return 0;
}

/* Opens /proc/@pid/task; NULL with errno set. */
static DIR *open_tasks(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	return opendir(path);
}

/* A thread id from a task directory entry, or 0 for "." and "..". */
static pid_t entry_tid(const struct dirent *e)
{
	char *end;
	long tid = strtol(e->d_name, &end, 10);

	return *end == '\0' && tid > 0 ? (pid_t)tid : 0;
}

int worker_threads_cpu(pid_t pid, struct worker_cpu *out)
{
	DIR *dir = open_tasks(pid);
	struct dirent *e;

	memset(out, 0, sizeof(*out));
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((e = readdir(dir)) != NULL) {
		char path[96], line[512];
		pid_t tid = entry_tid(e);
		FILE *f;

		if (!tid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
		f = fopen(path, "re");
		if (!f)
			continue; /* the thread ended meanwhile */
		if (fgets(line, sizeof(line), f))
			worker_threads_add_stat(line, out);
		fclose(f);
	}
	closedir(dir);
	return out->threads ? 0 : -ESRCH;
}

/*
 * One thread to SCHED_IDLE or back to SCHED_OTHER at @nice; 0 or -errno.
 * A thread its process lowered itself (a nice value above @nice: Mesa's
 * shader cache thread, at 19 and SCHED_BATCH or SCHED_IDLE) is left as it
 * is both ways; one started while the process was at idle priority
 * inherited it, and is restored with the others.
 */
static int set_thread(pid_t tid, bool idle, int nice)
{
	struct sched_param sp = {.sched_priority = 0};
	int policy = sched_getscheduler(tid), now;

	errno = 0;
	now = getpriority(PRIO_PROCESS, (id_t)tid);
	if (policy < 0 || (now == -1 && errno))
		return errno == ESRCH ? 0 : -errno;
	if (now > nice || policy != (idle ? SCHED_OTHER : SCHED_IDLE))
		return 0;
	if (sched_setscheduler(tid, idle ? SCHED_IDLE : SCHED_OTHER, &sp) < 0)
		return errno == ESRCH ? 0 : -errno;
	if (!idle && setpriority(PRIO_PROCESS, (id_t)tid, nice) < 0)
		return errno == ESRCH ? 0 : -errno;
	return 0;
}

int worker_threads_set_idle(pid_t pid, bool idle, int nice)
{
	int first = 0;

	for (int pass = 0; pass < 2; pass++) {
		DIR *dir = open_tasks(pid);
		struct dirent *e;

		if (!dir)
			return errno == ENOENT ? -ESRCH : -errno;
		while ((e = readdir(dir)) != NULL) {
			pid_t tid = entry_tid(e);
			int r = tid ? set_thread(tid, idle, nice) : 0;

			if (r < 0 && !first)
				first = r;
		}
		closedir(dir);
	}
	return first;
}
