// SPDX-License-Identifier: MIT
/*
 * The OpenGL ES 2 target of this project's GL clients (mediator-calibrate,
 * guest-shim's cluster-client and long-draws): an EGL pbuffer with a
 * current context, and shader programs. Works with EGL_PLATFORM=surfaceless
 * (Mesa's virgl over vtest, no display) and on an X display alike. In a
 * guest the target can be the display instead: a KMS card through GBM
 * (gles_kms.c), whose frames gles_target_present() shows.
 */
#ifndef MEDIATOR_GLES_TARGET_H
#define MEDIATOR_GLES_TARGET_H

#include <signal.h>
#include <stdbool.h>

#include <EGL/egl.h>
#include <GLES2/gl2.h>

struct gles_kms;

struct gles_target {
	EGLDisplay display;
	EGLSurface surface;
	EGLContext context;
	struct gles_kms *kms; /* the display of gles_target_open_kms(); NULL: a pbuffer */
};

/*
 * Makes a @width x @height RGB8 pbuffer (with a 24-bit depth and 8-bit
 * stencil buffer when @depth_stencil) and a GL ES 2 context current on it.
 * Returns NULL, or what failed ("eglInitialize", ...).
 */
const char *gles_target_open(struct gles_target *t, int width, int height, bool depth_stencil);
/*
 * Makes the display of the DRM card @card (e.g. /dev/dri/card0) the target:
 * its first connected connector at its preferred mode, whose size goes to
 * *@width and *@height, with a GL ES 2 context current on a GBM window
 * surface. Returns NULL, or what failed; gles_target_close() releases what
 * was made either way.
 */
const char *gles_target_open_kms(struct gles_target *t, const char *card, int *width, int *height);
/*
 * For clients with a --kms CARD option: the display of @card when it is not
 * NULL (its size into *@width and *@height), else a *@width x *@height
 * pbuffer without depth and stencil. Returns NULL, or what failed.
 */
const char *gles_target_open_either(struct gles_target *t, const char *card, unsigned long *width,
				    unsigned long *height);
/*
 * Shows the frame drawn since the last call: swaps buffers and flips the
 * display to it, waiting until the flip is done. A pbuffer shows nothing:
 * NULL at once. Returns NULL, or what failed.
 */
const char *gles_target_present(const struct gles_target *t);
/* Releases what gles_target_open*() made; a zeroed target is fine. */
void gles_target_close(struct gles_target *t);
/* Releases the display; the EGL display on it must be terminated first. NULL is fine. */
void gles_kms_close(struct gles_kms *k);

/*
 * Compiles @vs and @fs and links them, attribute 0 bound to @attr0 unless
 * NULL. Returns the program, or 0 with *@what set to what failed.
 */
GLuint gles_program(const char *vs, const char *fs, const char *attr0, const char **what);

/*
 * The seven non-empty combinations of the colour, depth and stencil
 * buffers that the clear workloads cycle through (Schnitzer et al.'s clearspd):
 * colour, depth, stencil, colour and depth, colour and stencil, depth and
 * stencil, all three. Returns combination @i modulo 7.
 */
GLbitfield gles_clear_mask(unsigned long i);

/*
 * Prints "@prog: @what failed (EGL 0x.., GL 0x..)" to stderr; returns 1,
 * the clients' exit status for a GL/EGL failure.
 */
int gles_fail(const char *prog, const char *what);

/*
 * SIGTERM and SIGINT set the flag gles_stop_requested() returns. They are
 * blocked (the mask goes to @set too) until the caller unblocks @set, so
 * that EGL's driver threads, started meanwhile, inherit the block and the
 * signals reach the main thread and interrupt its sleeps. Call before
 * gles_target_open().
 */
void gles_catch_stop(sigset_t *set);
bool gles_stop_requested(void);

#endif
