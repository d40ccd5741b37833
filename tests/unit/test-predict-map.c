// SPDX-License-Identifier: MIT
/*
 * Tests of the handle map that libpredict's context state and the worker's
 * transports keep their objects and resources in: add/get/remove, key 0
 * as a key like any other, refusal of NULL values and duplicates, growth,
 * removal keeping every other entry reachable (checked against a plain
 * array over a long random run), walking the entries, and reuse after
 * finish.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "predict_map.h"

static int values[4096];

static void added_keys_are_found_and_others_are_not(void **state)
{
	struct predict_map m;

	predict_map_init(&m);
	assert_null(predict_map_get(&m, 5));
	assert_null(predict_map_remove(&m, 5));
	assert_int_equal(predict_map_add(&m, 5, &values[5]), 0);
	assert_ptr_equal(predict_map_get(&m, 5), &values[5]);
	assert_null(predict_map_get(&m, 6));
	assert_null(predict_map_get(&m, 0));
	predict_map_finish(&m);
}

static void key_zero_is_a_key_like_any_other(void **state)
{
	struct predict_map m;

	predict_map_init(&m);
	assert_int_equal(predict_map_add(&m, 0, &values[0]), 0);
	assert_int_equal(predict_map_add(&m, UINT32_MAX, &values[1]), 0);
	assert_ptr_equal(predict_map_get(&m, 0), &values[0]);
	assert_ptr_equal(predict_map_get(&m, UINT32_MAX), &values[1]);
	assert_ptr_equal(predict_map_remove(&m, 0), &values[0]);
	assert_null(predict_map_get(&m, 0));
	assert_int_equal(predict_map_count(&m), 1);
	predict_map_finish(&m);
}

static void null_values_and_duplicates_are_refused(void **state)
{
	struct predict_map m;

	predict_map_init(&m);
	assert_int_equal(predict_map_add(&m, 1, NULL), -EINVAL);
	assert_int_equal(predict_map_add(&m, 9, &values[9]), 0);
	assert_int_equal(predict_map_add(&m, 9, &values[1]), -EEXIST);
	assert_ptr_equal(predict_map_get(&m, 9), &values[9]);
	assert_int_equal(predict_map_count(&m), 1);
	predict_map_finish(&m);
}

static void removal_keeps_every_other_entry_reachable(void **state)
{
	struct predict_map m;

	predict_map_init(&m);
	/* Enough entries to grow several times and collide a lot. */
	for (uint32_t h = 1; h < 4096; h++)
		assert_int_equal(predict_map_add(&m, h * 64, &values[h]), 0);
	for (uint32_t h = 1; h < 4096; h += 2)
		assert_ptr_equal(predict_map_remove(&m, h * 64), &values[h]);
	for (uint32_t h = 1; h < 4096; h++) {
		if (h % 2)
			assert_null(predict_map_get(&m, h * 64));
		else
			assert_ptr_equal(predict_map_get(&m, h * 64), &values[h]);
	}
	assert_int_equal(predict_map_count(&m), 2047);
	assert_null(predict_map_remove(&m, 64));
	predict_map_finish(&m);
}

/* xorshift32: the same sequence on every run. */
static uint32_t next_random(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void random_adds_and_removes_agree_with_an_array(void **state)
{
	/* Few keys, so that runs of probes wrap around the table and removals
	 * meet them; each step checks every key. */
	enum { KEYS = 200, STEPS = 20000 };
	static bool present[KEYS];
	struct predict_map m;
	uint32_t seed = 12345;
	size_t n = 0;

	predict_map_init(&m);
	for (int step = 0; step < STEPS; step++) {
		uint32_t k = next_random(&seed) % KEYS;

		if (present[k]) {
			assert_ptr_equal(predict_map_remove(&m, k), &values[k]);
			n--;
		} else {
			assert_int_equal(predict_map_add(&m, k, &values[k]), 0);
			n++;
		}
		present[k] = !present[k];
		assert_int_equal(predict_map_count(&m), n);
		for (uint32_t key = 0; key < KEYS; key++)
			assert_ptr_equal(predict_map_get(&m, key),
					 present[key] ? &values[key] : NULL);
	}
	predict_map_finish(&m);
}

static void next_visits_every_entry_once(void **state)
{
	static int seen[4096];
	struct predict_map m;
	size_t n = 0;
	int *v;

	predict_map_init(&m);
	for (size_t i = 0; (v = predict_map_next(&m, &i));)
		n++;
	assert_int_equal(n, 0);
	for (uint32_t h = 0; h < 1000; h++)
		assert_int_equal(predict_map_add(&m, h * 7, &values[h]), 0);
	for (size_t i = 0; (v = predict_map_next(&m, &i));) {
		seen[v - values]++;
		n++;
	}
	assert_int_equal(n, 1000);
	for (uint32_t h = 0; h < 1000; h++)
		assert_int_equal(seen[h], 1);
	predict_map_finish(&m);
}

static void finish_leaves_an_empty_map_to_use_again(void **state)
{
	struct predict_map m;

	predict_map_init(&m);
	for (uint32_t h = 1; h <= 100; h++)
		assert_int_equal(predict_map_add(&m, h, &values[h]), 0);
	predict_map_finish(&m);
	assert_int_equal(predict_map_count(&m), 0);
	assert_null(predict_map_get(&m, 1));
	assert_int_equal(predict_map_add(&m, 1, &values[1]), 0);
	assert_ptr_equal(predict_map_get(&m, 1), &values[1]);
	predict_map_finish(&m);
	predict_map_finish(&m); /* twice is fine */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(added_keys_are_found_and_others_are_not),
	    cmocka_unit_test(key_zero_is_a_key_like_any_other),
	    cmocka_unit_test(null_values_and_duplicates_are_refused),
	    cmocka_unit_test(removal_keeps_every_other_entry_reachable),
	    cmocka_unit_test(random_adds_and_removes_agree_with_an_array),
	    cmocka_unit_test(next_visits_every_entry_once),
	    cmocka_unit_test(finish_leaves_an_empty_map_to_use_again),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
