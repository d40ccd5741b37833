// SPDX-License-Identifier: MIT
/*
 * Tests of what one VM may make its worker hold and do (vgpu_limits.h):
 * resources, backing entries and bytes per resource and per VM, counted
 * on attach and given back on detach; and the work budget of one wake-up
 * of the worker's loop.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "worker/vhost-user/vgpu_device.h"
#include "worker/vhost-user/vgpu_limits.h"

static void a_vm_creates_resources_up_to_its_limit(void **state)
{
	const char *what = NULL;

	assert_int_equal(vgpu_limits_may_create(0, &what), 0);
	assert_int_equal(vgpu_limits_may_create(VGPU_MAX_RESOURCES - 1, &what), 0);
	assert_int_equal(vgpu_limits_may_create(VGPU_MAX_RESOURCES, &what), -ENOSPC);
	assert_non_null(strstr(what, "VGPU_MAX_RESOURCES"));
}

/* A VM creates contexts up to its domain's max_contexts_per_client, within its table. */
static void a_vm_creates_contexts_up_to_its_domains_limit(void **state)
{
	static const struct {
		const char *description;
		uint32_t configured; /* --max-contexts; 0: not given */
		uint32_t contexts;   /* the VM holds */
		int expected;
	} cases[] = {
	    {"the first of one", 1, 0, 0},
	    {"a second past one", 1, 1, -ENOSPC},
	    {"the last of 8", 8, 7, 0},
	    {"one past 8", 8, 8, -ENOSPC},
	    {"not given: the table's last", 0, VGPU_MAX_CONTEXTS - 1, 0},
	    {"not given: past the table", 0, VGPU_MAX_CONTEXTS, -ENOSPC},
	    {"more than the table: the table's", VGPU_MAX_CONTEXTS + 10, VGPU_MAX_CONTEXTS,
	     -ENOSPC},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *what = NULL;
		int r = vgpu_limits_may_create_context(
		    cases[i].contexts, vgpu_max_contexts(cases[i].configured), &what);

		if (r != cases[i].expected) {
			print_error("%s: %d, expected %d\n", cases[i].description, r,
				    cases[i].expected);
			fail();
		}
		if (r < 0)
			assert_non_null(strstr(what, "max_contexts_per_client"));
	}
}

static void a_backing_past_a_limit_is_refused_with_the_limit_named(void **state)
{
	static const struct {
		const char *description;
		struct vgpu_backing_usage vm;
		uint32_t entries;
		uint64_t bytes;
		const char *limit; /* NULL: accepted */
	} cases[] = {
	    {"a page", {0, 0}, 1, 4096, NULL},
	    {"a resource of the most entries", {0, 0}, VGPU_MAX_BACKING_ENTRIES, 1ull << 30, NULL},
	    {"an entry more than a resource may have",
	     {0, 0},
	     VGPU_MAX_BACKING_ENTRIES + 1,
	     4096,
	     "VGPU_MAX_BACKING_ENTRIES"},
	    {"a resource spanning more than 1 GiB",
	     {0, 0},
	     2,
	     VGPU_MAX_RESOURCE_BACKING_BYTES + 1,
	     "VGPU_MAX_RESOURCE_BACKING_BYTES"},
	    {"the VM's last entries", {VGPU_MAX_VM_BACKING_ENTRIES - 10, 0}, 10, 40960, NULL},
	    {"an entry past the VM's",
	     {VGPU_MAX_VM_BACKING_ENTRIES - 10, 0},
	     11,
	     40960,
	     "VGPU_MAX_VM_BACKING_ENTRIES"},
	    {"a byte past the VM's",
	     {0, VGPU_MAX_VM_BACKING_BYTES - 4096},
	     2,
	     4097,
	     "VGPU_MAX_VM_BACKING_BYTES"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *what = NULL;
		int r =
		    vgpu_limits_may_attach(&cases[i].vm, cases[i].entries, cases[i].bytes, &what);

		if (!cases[i].limit && r != 0)
			fail_msg("%s: refused (%s)", cases[i].description, what);
		if (cases[i].limit && (r != -ENOSPC || !strstr(what, cases[i].limit)))
			fail_msg("%s: %d (%s), expected -ENOSPC naming %s", cases[i].description, r,
				 what ? what : "-", cases[i].limit);
	}
}

static void sixty_four_resources_of_the_same_pages_stop_at_the_vms_entries(void **state)
{
	/* The reviewer's attack: every resource attaches 262144 entries
	 * naming one 4 MiB guest buffer again and again. */
	struct vgpu_backing_usage vm = {0, 0};
	const uint64_t span = (uint64_t)VGPU_MAX_BACKING_ENTRIES * 4096; /* 4 KiB pages */
	uint32_t accepted = 0;
	const char *what = NULL;

	for (uint32_t i = 0; i < 64; i++) {
		if (vgpu_limits_may_attach(&vm, VGPU_MAX_BACKING_ENTRIES, span, &what) < 0)
			break;
		vgpu_backing_usage_add(&vm, VGPU_MAX_BACKING_ENTRIES, span);
		accepted++;
	}
	assert_int_equal(accepted, VGPU_MAX_VM_BACKING_ENTRIES / VGPU_MAX_BACKING_ENTRIES);
	assert_non_null(strstr(what, "VGPU_MAX_VM_BACKING_ENTRIES"));
	/* Detaching one gives its entries back: the next attach fits. */
	vgpu_backing_usage_sub(&vm, VGPU_MAX_BACKING_ENTRIES, span);
	assert_int_equal(vgpu_limits_may_attach(&vm, VGPU_MAX_BACKING_ENTRIES, span, &what), 0);
	/* Giving back more than is held leaves zero, never a wrapped count. */
	vgpu_backing_usage_sub(&vm, UINT32_MAX, UINT64_MAX);
	assert_int_equal(vm.entries, 0);
	assert_int_equal(vm.bytes, 0);
}

static void backing_bytes_are_the_sum_of_the_entries_lengths(void **state)
{
	struct virtio_gpu_mem_entry e[3] = {{0, 4096, 0}, {4096, UINT32_MAX, 0}, {0, 1, 0}};

	assert_int_equal(vgpu_limits_backing_bytes(e, 0), 0);
	assert_int_equal(vgpu_limits_backing_bytes(e, 3), 4096ull + UINT32_MAX + 1);
}

static void a_wake_up_serves_a_bounded_number_of_requests_and_bytes(void **state)
{
	struct vgpu_budget b;
	uint32_t served = 0;

	vgpu_budget_refill(&b);
	while (!vgpu_budget_spent(&b)) {
		vgpu_budget_take(&b, 24);
		served++;
	}
	assert_int_equal(served, VGPU_BUDGET_REQUESTS);
	/* Bytes run out first for large requests; one may overdraw. */
	vgpu_budget_refill(&b);
	served = 0;
	while (!vgpu_budget_spent(&b)) {
		vgpu_budget_take(&b, 5u << 20);
		served++;
	}
	assert_int_equal(served, 4);
	vgpu_budget_refill(&b);
	vgpu_budget_take(&b, 64u << 20);
	assert_true(vgpu_budget_spent(&b));
	vgpu_budget_refill(&b);
	assert_false(vgpu_budget_spent(&b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_vm_creates_resources_up_to_its_limit),
	    cmocka_unit_test(a_vm_creates_contexts_up_to_its_domains_limit),
	    cmocka_unit_test(a_backing_past_a_limit_is_refused_with_the_limit_named),
	    cmocka_unit_test(sixty_four_resources_of_the_same_pages_stop_at_the_vms_entries),
	    cmocka_unit_test(backing_bytes_are_the_sum_of_the_entries_lengths),
	    cmocka_unit_test(a_wake_up_serves_a_bounded_number_of_requests_and_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
