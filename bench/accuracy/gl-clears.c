// SPDX-License-Identifier: MIT
/*
 * gl-clears: the clear workloads of the evaluation in Schnitzer et al.,
 * Concepts for Execution Time Prediction of 3D GPU Rendering (see
 * doc/references.md#schnitzer), as an unmodified GL ES 2 program (run it
 * through mediatord with mediator-exec and GALLIUM_DRIVER=virpipe).
 *
 *   gl-clears random [GROUPS] [SEED]
 *       Like Schnitzer et al.'s modified clearspd: per group, a random number of
 *       glClear calls (1..500) with random buffer masks and colours on a
 *       1200x1000 surface, then glFinish() (one command group).
 *   gl-clears two-contexts [GROUPS]
 *       Schnitzer et al. §VI-E: two contexts on a 640x480 and a 1920x1080
 *       surface, alternating, 300 clears of the colour buffer each, then
 *       glFinish(): binary-equal groups whose cost differs by context.
 *
 * Rendering goes to EGL pbuffers (gles_target.h) on the X display in
 * $DISPLAY.
 * Exit status 0 on success, 1 on a GL/EGL error, 2 on a bad command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/gles_target.h"

/* Schnitzer et al.'s clearspd variant: 1..500 clears per group. */
#define RANDOM_MAX_CLEARS 500
/* Schnitzer et al. §VI-E: 300 clears per group in the two-context test. */
#define TWO_CONTEXT_CLEARS 300

static int fail(const char *what)
{
	return gles_fail("gl-clears", what);
}

/* A pbuffer of @width x @height with depth and stencil, and its context, made current. */
static int target_open(struct gles_target *t, int width, int height)
{
	const char *what = gles_target_open(t, width, height, true);

	return what ? fail(what) : 0;
}

static int make_current(const struct gles_target *t)
{
	if (!eglMakeCurrent(t->display, t->surface, t->surface, t->context))
		return fail("eglMakeCurrent");
	return 0;
}

static int run_random(long groups, unsigned seed)
{
	struct gles_target t = {0};
	int r = 0;

	srand(seed);
	if (target_open(&t, 1200, 1000)) {
		gles_target_close(&t);
		return 1;
	}
	glViewport(0, 0, 1200, 1000);
	for (long g = 0; g < groups; g++) {
		int clears = 1 + rand() % RANDOM_MAX_CLEARS;

		for (int i = 0; i < clears; i++) {
			glClearColor((float)rand() / (float)RAND_MAX,
				     (float)rand() / (float)RAND_MAX,
				     (float)rand() / (float)RAND_MAX, 1.0f);
			glClearDepthf((float)rand() / (float)RAND_MAX);
			glClearStencil(rand() & 0xff);
			glClear(gles_clear_mask((unsigned long)rand()));
		}
		glFinish();
		if (glGetError() != GL_NO_ERROR) {
			r = fail("glClear");
			break;
		}
	}
	gles_target_close(&t);
	return r;
}

static int run_two_contexts(long groups)
{
	/* Both on the one EGL display: closing either terminates it. */
	struct gles_target small = {0}, large = {0};
	int r = 0;

	if (target_open(&small, 640, 480) || target_open(&large, 1920, 1080))
		r = 1;
	for (long g = 0; g < groups && !r; g++) {
		r = make_current((g % 2) ? &large : &small);
		if (r)
			break;
		glClearColor(0, 0, 0, 1);
		for (int i = 0; i < TWO_CONTEXT_CLEARS; i++)
			glClear(GL_COLOR_BUFFER_BIT);
		glFinish();
		if (glGetError() != GL_NO_ERROR)
			r = fail("glClear");
	}
	gles_target_close(&large);
	gles_target_close(&small);
	return r;
}

int main(int argc, char **argv)
{
	long groups = argc > 2 ? strtol(argv[2], NULL, 10) : 2000;

	if (argc < 2 || groups <= 0 ||
	    (strcmp(argv[1], "random") != 0 && strcmp(argv[1], "two-contexts") != 0)) {
		fprintf(stderr,
			"usage: gl-clears random [GROUPS] [SEED] | two-contexts [GROUPS]\n");
		return 2;
	}
	if (strcmp(argv[1], "random") == 0)
		return run_random(groups, argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 1);
	return run_two_contexts(groups);
}
