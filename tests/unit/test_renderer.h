// SPDX-License-Identifier: MIT
/*
 * The real renderer of the unit tests that drive one (virglrenderer on
 * llvmpipe, EGL surfaceless): started once per test program, before its
 * tests, and destroyed by the caller after them.
 */
#ifndef GM_TESTS_TEST_RENDERER_H
#define GM_TESTS_TEST_RENDERER_H

#include <stdio.h>
#include <stdlib.h>

#include "worker/renderer.h"

/*
 * Starts the renderer; the caller destroys it (renderer_destroy()). Where
 * none starts here, says why and exits 77 (skip): the prerequisite, not the
 * code under test, is missing.
 */
static inline struct renderer *test_renderer_start(void)
{
	char err[256] = "";
	struct renderer *r =
	    renderer_create(MEDIATOR_RENDERER_EGL_SURFACELESS, NULL, err, sizeof(err));

	if (!r) {
		fprintf(stderr, "skipped: no renderer (EGL surfaceless, llvmpipe): %s\n", err);
		exit(77);
	}
	return r;
}

#endif
