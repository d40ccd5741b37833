// SPDX-License-Identifier: MIT
/*
 * Bulk host work at idle priority (see host_work.h).
 */
#include <sched.h>

#include "common/wire.h"
#include "worker/host_work.h"
#include "worker/mediator_link.h"

static struct mediator_link *host_link;
static bool lowered;	    /* by host_work_begin(), until host_work_end() */
static bool held;	    /* idle by mediatord's doing at host_work_begin(), until its end */
static bool put_back_asked; /* DONE sent; seen done once the thread is SCHED_OTHER again */

void host_work_enable(struct mediator_link *link)
{
	host_link = link;
	lowered = held = put_back_asked = false;
}

static void send_phase(uint32_t phase)
{
	struct wire_host_work msg = {.hdr = {WIRE_HOST_WORK, sizeof(msg)}, .phase = phase};

	mediator_link_send(host_link, &msg, sizeof(msg));
}

void host_work_begin(uint64_t bytes)
{
	struct sched_param sp = {.sched_priority = 0};
	int policy;

	/* Without a mediatord to put it back (dead, or not listening), it stays as it is. */
	if (!host_link || lowered || held || bytes < HOST_WORK_MIN_BYTES ||
	    mediator_link_gone(host_link) || mediator_link_serving_freely(host_link))
		return;
	policy = sched_getscheduler(0);
	if (policy == SCHED_OTHER) {
		put_back_asked = false;
		if (sched_setscheduler(0, SCHED_IDLE, &sp) == 0)
			lowered = true;
	} else if (policy == SCHED_IDLE && put_back_asked) {
		/*
		 * Still idle from the last host work: its put-back is on its
		 * way, and would come in the middle of this one. Keep it.
		 */
		send_phase(WIRE_HOST_WORK_BEGIN);
		lowered = true;
	} else if (policy == SCHED_IDLE) {
		/* Idle by mediatord's own doing: nothing to change, only to count. */
		held = true;
	}
}

void host_work_end(void)
{
	if (held) {
		held = false;
		send_phase(WIRE_HOST_WORK_HELD);
		return;
	}
	if (!lowered)
		return;
	lowered = false;
	put_back_asked = true;
	send_phase(WIRE_HOST_WORK_DONE);
}

void host_work_final(void)
{
	struct sched_param sp = {.sched_priority = 0};

	if (host_link)
		sched_setscheduler(0, SCHED_IDLE, &sp);
}
