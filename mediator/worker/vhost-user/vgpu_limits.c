// SPDX-License-Identifier: MIT
/*
 * Limits of a VM and the work budget of a wake-up (see vgpu_limits.h).
 */
#include <errno.h>

#include "worker/vhost-user/vgpu_limits.h"

int vgpu_limits_may_create(uint32_t resources, const char **what)
{
	if (resources >= VGPU_MAX_RESOURCES) {
		*what = "the VM holds VGPU_MAX_RESOURCES (16384) resources";
		return -ENOSPC;
	}
	return 0;
}

int vgpu_limits_may_create_context(uint32_t contexts, uint32_t max_contexts, const char **what)
{
	if (contexts >= max_contexts) {
		*what = "the VM holds its domain's max_contexts_per_client contexts";
		return -ENOSPC;
	}
	return 0;
}

int vgpu_limits_may_attach(const struct vgpu_backing_usage *vm, uint32_t entries, uint64_t bytes,
			   const char **what)
{
	if (entries > VGPU_MAX_BACKING_ENTRIES) {
		*what = "more backing entries than VGPU_MAX_BACKING_ENTRIES (262144) per resource";
		return -ENOSPC;
	}
	if (bytes > VGPU_MAX_RESOURCE_BACKING_BYTES) {
		*what = "backing larger than VGPU_MAX_RESOURCE_BACKING_BYTES (1 GiB) per resource";
		return -ENOSPC;
	}
	if (vm->entries + entries > VGPU_MAX_VM_BACKING_ENTRIES) {
		*what = "the VM's backings would pass VGPU_MAX_VM_BACKING_ENTRIES (1048576 "
			"entries)";
		return -ENOSPC;
	}
	if (vm->bytes + bytes > VGPU_MAX_VM_BACKING_BYTES) {
		*what = "the VM's backings would pass VGPU_MAX_VM_BACKING_BYTES (8 GiB)";
		return -ENOSPC;
	}
	return 0;
}

uint64_t vgpu_limits_backing_bytes(const struct virtio_gpu_mem_entry *entries, uint32_t n)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < n; i++)
		sum += entries[i].length;
	return sum;
}

void vgpu_backing_usage_add(struct vgpu_backing_usage *vm, uint32_t entries, uint64_t bytes)
{
	vm->entries += entries;
	vm->bytes += bytes;
}

void vgpu_backing_usage_sub(struct vgpu_backing_usage *vm, uint32_t entries, uint64_t bytes)
{
	vm->entries = vm->entries >= entries ? vm->entries - entries : 0;
	vm->bytes = vm->bytes >= bytes ? vm->bytes - bytes : 0;
}

void vgpu_budget_refill(struct vgpu_budget *b)
{
	b->requests = VGPU_BUDGET_REQUESTS;
	b->bytes = VGPU_BUDGET_BYTES;
}

bool vgpu_budget_spent(const struct vgpu_budget *b)
{
	return b->requests == 0 || b->bytes == 0;
}

void vgpu_budget_take(struct vgpu_budget *b, uint64_t bytes)
{
	if (b->requests)
		b->requests--;
	b->bytes = bytes >= b->bytes ? 0 : b->bytes - bytes;
}
