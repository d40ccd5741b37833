// SPDX-License-Identifier: MIT
/*
 * Bulk host work at idle priority (see host_work.h).
 */
#include <sched.h>

#include "common/wire.h"
#include "worker/host_work.h"
#include "worker/mediator_link.h"

static struct mediator_link *host_link;
static bool lowered;

void host_work_enable(struct mediator_link *link)
{
	host_link = link;
}

void host_work_begin(uint64_t bytes)
{
	struct sched_param sp = {.sched_priority = 0};

	/* Without a mediatord to put it back (dead, or not listening), it stays as it is. */
	if (!host_link || lowered || bytes < HOST_WORK_MIN_BYTES || mediator_link_gone(host_link) ||
	    mediator_link_serving_freely(host_link) || sched_getscheduler(0) != SCHED_OTHER)
		return;
	if (sched_setscheduler(0, SCHED_IDLE, &sp) == 0)
		lowered = true;
}

void host_work_end(void)
{
	struct wire_host_work msg = {.hdr = {WIRE_HOST_WORK, sizeof(msg)}};

	if (!lowered)
		return;
	lowered = false;
	mediator_link_send(host_link, &msg, sizeof(msg));
}
