// SPDX-License-Identifier: MIT
/*
 * Per-client limits and the per-wake-up work budget (see vtest_limits.h).
 */
#include <errno.h>

#include "worker/vtest/vtest_limits.h"

void vtest_limits_init(struct vtest_limits *limits, uint32_t max_resources, uint64_t max_shm_bytes)
{
	*limits = (struct vtest_limits){
	    .max_resources = max_resources ? max_resources : VTEST_MAX_RESOURCES,
	    .max_shm_bytes = max_shm_bytes ? max_shm_bytes : VTEST_MAX_SHM_BYTES,
	};
}

int vtest_limits_admit(struct vtest_limits *limits, uint64_t shm_bytes, const char **what)
{
	const char *why = NULL;

	if (limits->resources >= limits->max_resources)
		why = "resource limit reached";
	else if (shm_bytes > limits->max_shm_bytes ||
		 limits->shm_bytes > limits->max_shm_bytes - shm_bytes)
		why = "shared memory limit reached";
	if (why) {
		if (what)
			*what = why;
		return -ENOSPC;
	}
	limits->resources++;
	limits->shm_bytes += shm_bytes;
	return 0;
}

void vtest_limits_release(struct vtest_limits *limits, uint64_t shm_bytes)
{
	if (limits->resources)
		limits->resources--;
	limits->shm_bytes = shm_bytes > limits->shm_bytes ? 0 : limits->shm_bytes - shm_bytes;
}

void vtest_budget_init(struct vtest_budget *budget)
{
	budget->msgs = 0;
	budget->bytes = 0;
}

void vtest_budget_charge(struct vtest_budget *budget, size_t bytes)
{
	budget->msgs++;
	budget->bytes += bytes;
}

bool vtest_budget_spent(const struct vtest_budget *budget)
{
	return budget->msgs >= VTEST_BUDGET_MSGS || budget->bytes >= VTEST_BUDGET_BYTES;
}
