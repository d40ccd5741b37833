// SPDX-License-Identifier: MIT
/*
 * mediatord's own CPU priority (see own_priority.h).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "daemon/own_priority.h"

int own_priority_raise(char *err, size_t err_size)
{
	struct sched_param sp = {.sched_priority = 0};
	int r;

	/* First: a child started between the two calls must not keep the raised value. */
	if (sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &sp) < 0) {
		r = -errno;
		snprintf(err, err_size, "cannot set SCHED_RESET_ON_FORK: %s", strerror(errno));
		return r;
	}
	if (setpriority(PRIO_PROCESS, 0, OWN_NICE) < 0) {
		r = -errno;
		snprintf(err, err_size, "cannot set nice %d: %s", OWN_NICE, strerror(errno));
		return r;
	}
	return 0;
}
