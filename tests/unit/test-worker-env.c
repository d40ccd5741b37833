// SPDX-License-Identifier: MIT
/*
 * Tests of a worker's environment (worker_env.h): only the named
 * variables of mediatord's, never a client's such as GALLIUM_DRIVER; the
 * X display only for renderer = glx; worker_pass_environment's names and
 * prefixes, whole names only; the room given is never overrun.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/worker_env.h"

static char *const env[] = {
    "PATH=/usr/bin",
    "GALLIUM_DRIVER=virpipe",
    "VTEST_SOCKET_NAME=/run/x.sock",
    "ASAN_OPTIONS=detect_leaks=0",
    "MEDIATOR_FEATURE_DUMP=/tmp/dump",
    "DISPLAY=:99",
    "LP_NUM_THREADS=2",
    "LP_NUM_THREADSX=9",
    "MESA_DEBUG=1",
    "MESA_SHADER_CACHE_DIR=/tmp/c",
    "ASAN_OPTIONSX=1",
    "NOEQUALS",
    NULL,
};

/* True when @out (NULL-ended) holds @entry. */
static bool has(const char *const *out, const char *entry)
{
	for (size_t i = 0; out[i]; i++)
		if (strcmp(out[i], entry) == 0)
			return true;
	return false;
}

static void only_the_named_ones(void **state)
{
	const char *out[WORKER_ENV_MAX];
	size_t dropped;
	size_t n = worker_env_build(env, "", false, out, WORKER_ENV_MAX, &dropped);

	(void)state;
	assert_int_equal(n, 2);
	assert_int_equal(dropped, 0);
	assert_true(has(out, "ASAN_OPTIONS=detect_leaks=0"));
	assert_true(has(out, "MEDIATOR_FEATURE_DUMP=/tmp/dump"));
	assert_false(has(out, "GALLIUM_DRIVER=virpipe"));
	assert_false(has(out, "ASAN_OPTIONSX=1"));
	assert_null(out[n]);
}

static void x_display_for_glx(void **state)
{
	const char *out[WORKER_ENV_MAX];
	size_t dropped;
	size_t n = worker_env_build(env, "", true, out, WORKER_ENV_MAX, &dropped);

	(void)state;
	assert_int_equal(n, 3);
	assert_true(has(out, "DISPLAY=:99"));
}

static void names_and_prefixes_passed(void **state)
{
	const char *out[WORKER_ENV_MAX];
	size_t dropped;
	size_t n = worker_env_build(env, " LP_NUM_THREADS\tMESA_*\vNOEQUALS", false, out,
				    WORKER_ENV_MAX, &dropped);

	(void)state;
	assert_int_equal(n, 5);
	assert_true(has(out, "LP_NUM_THREADS=2"));
	assert_false(has(out, "LP_NUM_THREADSX=9"));
	assert_true(has(out, "MESA_DEBUG=1"));
	assert_true(has(out, "MESA_SHADER_CACHE_DIR=/tmp/c"));
	assert_false(has(out, "NOEQUALS"));
}

static void room_never_overrun(void **state)
{
	const char *out[3] = {"x", "x", "x"};
	size_t dropped;
	size_t n = worker_env_build(env, "MESA_* LP_*", false, out, 3, &dropped);

	(void)state;
	assert_int_equal(n, 2);
	assert_null(out[2]);
	assert_int_equal(dropped, 4);
	assert_int_equal(worker_env_build(env, "", false, out, 1, &dropped), 0);
	assert_null(out[0]);
	assert_int_equal(dropped, 2);
	assert_int_equal(worker_env_build(NULL, "", false, out, 3, &dropped), 0);
	assert_null(out[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(only_the_named_ones),
	    cmocka_unit_test(x_display_for_glx),
	    cmocka_unit_test(names_and_prefixes_passed),
	    cmocka_unit_test(room_never_overrun),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
