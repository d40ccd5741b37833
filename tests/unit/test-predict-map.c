/*
 * Tests of the handle map that decides which resource handles a client
 * owns: add/get/remove, refusal of 0 and duplicates, growth, and removal
 * keeping every other entry reachable.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "predict_map.h"

static int values[4096];

static void added_handles_are_found_and_others_are_not(void **state)
{
	struct handle_map *m = handle_map_create();

	assert_int_equal(handle_map_add(m, 5, &values[5]), 0);
	assert_ptr_equal(handle_map_get(m, 5), &values[5]);
	assert_null(handle_map_get(m, 6));
	assert_null(handle_map_get(m, 0));
	handle_map_destroy(m);
}

static void handle_zero_and_duplicates_are_refused(void **state)
{
	struct handle_map *m = handle_map_create();

	assert_int_equal(handle_map_add(m, 0, &values[0]), -EINVAL);
	assert_int_equal(handle_map_add(m, 1, NULL), -EINVAL);
	assert_int_equal(handle_map_add(m, 9, &values[9]), 0);
	assert_int_equal(handle_map_add(m, 9, &values[1]), -EEXIST);
	assert_int_equal(handle_map_count(m), 1);
	handle_map_destroy(m);
}

static void removal_keeps_every_other_entry_reachable(void **state)
{
	struct handle_map *m = handle_map_create();

	/* Enough entries to grow several times and collide a lot. */
	for (uint32_t h = 1; h < 4096; h++)
		assert_int_equal(handle_map_add(m, h * 64, &values[h]), 0);
	for (uint32_t h = 1; h < 4096; h += 2)
		assert_ptr_equal(handle_map_remove(m, h * 64), &values[h]);
	for (uint32_t h = 1; h < 4096; h++) {
		if (h % 2)
			assert_null(handle_map_get(m, h * 64));
		else
			assert_ptr_equal(handle_map_get(m, h * 64), &values[h]);
	}
	assert_int_equal(handle_map_count(m), 2047);
	assert_null(handle_map_remove(m, 64));
	handle_map_destroy(m);
}

static void pop_empties_the_map(void **state)
{
	struct handle_map *m = handle_map_create();
	size_t n = 0;

	for (uint32_t h = 1; h <= 100; h++)
		handle_map_add(m, h, &values[h]);
	while (handle_map_pop(m))
		n++;
	assert_int_equal(n, 100);
	assert_int_equal(handle_map_count(m), 0);
	handle_map_destroy(m);
}

static void destroy_accepts_null(void **state)
{
	handle_map_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(added_handles_are_found_and_others_are_not),
	    cmocka_unit_test(handle_zero_and_duplicates_are_refused),
	    cmocka_unit_test(removal_keeps_every_other_entry_reachable),
	    cmocka_unit_test(pop_empties_the_map),
	    cmocka_unit_test(destroy_accepts_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
