// SPDX-License-Identifier: MIT
/*
 * Tests of what one vtest client may cost: resources and shared memory
 * beyond their limits are refused with -ENOSPC and count nothing, freed
 * ones are given back, and the per-wake-up work budget runs out after its
 * number of messages or bytes (a single large message spends it alone).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "worker/vtest/vtest_limits.h"

static void defaults_are_the_documented_limits(void **state)
{
	struct vtest_limits l;

	vtest_limits_init(&l, 0, 0);
	assert_int_equal(l.max_resources, VTEST_MAX_RESOURCES);
	assert_true(l.max_shm_bytes == VTEST_MAX_SHM_BYTES);
	assert_int_equal(l.resources, 0);
	assert_true(l.shm_bytes == 0);
}

static void resources_beyond_the_limit_are_refused(void **state)
{
	struct vtest_limits l;
	const char *what = NULL;

	vtest_limits_init(&l, 3, 1000);
	for (int i = 0; i < 3; i++)
		assert_int_equal(vtest_limits_admit(&l, 0, &what), 0);
	assert_int_equal(vtest_limits_admit(&l, 0, &what), -ENOSPC);
	assert_string_equal(what, "resource limit reached");
	assert_int_equal(l.resources, 3);
	vtest_limits_release(&l, 0);
	assert_int_equal(vtest_limits_admit(&l, 0, NULL), 0);
}

static void shared_memory_beyond_the_limit_is_refused(void **state)
{
	struct vtest_limits l;
	const char *what = NULL;

	vtest_limits_init(&l, 100, 1000);
	assert_int_equal(vtest_limits_admit(&l, 600, &what), 0);
	assert_int_equal(vtest_limits_admit(&l, 401, &what), -ENOSPC);
	assert_string_equal(what, "shared memory limit reached");
	assert_true(l.shm_bytes == 600);
	assert_int_equal(l.resources, 1);
	/* Exactly up to the limit is fine. */
	assert_int_equal(vtest_limits_admit(&l, 400, &what), 0);
	assert_int_equal(vtest_limits_admit(&l, 1, &what), -ENOSPC);
	vtest_limits_release(&l, 600);
	assert_true(l.shm_bytes == 400);
	assert_int_equal(vtest_limits_admit(&l, 600, &what), 0);
}

static void a_size_that_would_wrap_is_refused(void **state)
{
	struct vtest_limits l;

	vtest_limits_init(&l, 100, 1000);
	assert_int_equal(vtest_limits_admit(&l, 10, NULL), 0);
	assert_int_equal(vtest_limits_admit(&l, UINT64_MAX, NULL), -ENOSPC);
	assert_int_equal(vtest_limits_admit(&l, UINT64_MAX - 5, NULL), -ENOSPC);
	assert_true(l.shm_bytes == 10);
}

static void releasing_more_than_held_never_wraps(void **state)
{
	struct vtest_limits l;

	vtest_limits_init(&l, 100, 1000);
	vtest_limits_release(&l, 5);
	assert_int_equal(l.resources, 0);
	assert_true(l.shm_bytes == 0);
}

static void budget_runs_out_after_its_messages(void **state)
{
	struct vtest_budget b;

	vtest_budget_init(&b);
	for (uint32_t i = 0; i < VTEST_BUDGET_MSGS; i++) {
		assert_false(vtest_budget_spent(&b));
		vtest_budget_charge(&b, 16);
	}
	assert_true(vtest_budget_spent(&b));
	vtest_budget_init(&b);
	assert_false(vtest_budget_spent(&b));
}

static void budget_runs_out_after_its_bytes(void **state)
{
	struct vtest_budget b;

	vtest_budget_init(&b);
	vtest_budget_charge(&b, VTEST_BUDGET_BYTES / 2);
	assert_false(vtest_budget_spent(&b));
	vtest_budget_charge(&b, VTEST_BUDGET_BYTES / 2);
	assert_true(vtest_budget_spent(&b));
}

static void one_large_message_spends_the_budget_alone(void **state)
{
	struct vtest_budget b;

	vtest_budget_init(&b);
	vtest_budget_charge(&b, 64u << 20);
	assert_true(vtest_budget_spent(&b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(defaults_are_the_documented_limits),
	    cmocka_unit_test(resources_beyond_the_limit_are_refused),
	    cmocka_unit_test(shared_memory_beyond_the_limit_is_refused),
	    cmocka_unit_test(a_size_that_would_wrap_is_refused),
	    cmocka_unit_test(releasing_more_than_held_never_wraps),
	    cmocka_unit_test(budget_runs_out_after_its_messages),
	    cmocka_unit_test(budget_runs_out_after_its_bytes),
	    cmocka_unit_test(one_large_message_spends_the_budget_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
