// SPDX-License-Identifier: MIT
/*
 * A worker's environment: only what it needs, named, never mediatord's
 * whole. A worker that inherited a client's variables died at start (a
 * shell with GALLIUM_DRIVER=virpipe exported, as the README's client
 * instructions make easy: its Mesa turned into a vtest client of itself,
 * issue 32). It gets:
 *  - the sanitizers' options (ASAN_OPTIONS, UBSAN_OPTIONS, LSAN_OPTIONS),
 *    so that a sanitizer build's workers report as mediatord does;
 *  - mediator-worker's own variables (MEDIATOR_FEATURE_DUMP,
 *    MEDIATOR_WORKER_TRY_FORBIDDEN: bench/accuracy and test-worker-sandbox);
 *  - with renderer = glx, the X display (DISPLAY, XAUTHORITY);
 *  - the names [mediator] worker_pass_environment lists (a NAME, or a
 *    PREFIX* for every name that starts so), as systemd's PassEnvironment=
 *    does: an integrator's LP_NUM_THREADS or MESA_DEBUG, the tests' attack
 *    module (LD_PRELOAD).
 * Each is passed from mediatord's own environment where it is set there.
 */
#ifndef MEDIATOR_DAEMON_WORKER_ENV_H
#define MEDIATOR_DAEMON_WORKER_ENV_H

#include <stdbool.h>
#include <stddef.h>

/* Most variables a worker gets; past that, worker_env_build() stops. */
#define WORKER_ENV_MAX 64

/*
 * Fills @out (room for @max pointers, the last NULL) with the entries of
 * @env (a NULL-ended "NAME=value" array, such as environ) a worker gets;
 * @pass is worker_pass_environment's value ("" for none). Returns how many
 * it took; *@dropped counts those left out for want of room.
 */
size_t worker_env_build(char *const *env, const char *pass, bool glx, const char **out, size_t max,
			size_t *dropped);

#endif
