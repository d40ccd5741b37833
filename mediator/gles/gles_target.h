/*
 * An off-screen OpenGL ES 2 target for this project's GL clients
 * (mediator-calibrate, bench/isolation's cluster-client and long-draws):
 * an EGL pbuffer with a current context, and shader programs. Works with
 * EGL_PLATFORM=surfaceless (Mesa's virgl over vtest, no display) and on
 * an X display alike.
 */
#ifndef MEDIATOR_GLES_TARGET_H
#define MEDIATOR_GLES_TARGET_H

#include <signal.h>
#include <stdbool.h>

#include <EGL/egl.h>
#include <GLES2/gl2.h>

struct gles_target {
	EGLDisplay display;
	EGLSurface surface;
	EGLContext context;
};

/*
 * Makes a @width x @height RGB8 pbuffer (with a 24-bit depth and 8-bit
 * stencil buffer when @depth_stencil) and a GL ES 2 context current on it.
 * Returns NULL, or what failed ("eglInitialize", ...).
 */
const char *gles_target_open(struct gles_target *t, int width, int height, bool depth_stencil);
/* Releases what gles_target_open() made; a zeroed target is fine. */
void gles_target_close(struct gles_target *t);

/*
 * Compiles @vs and @fs and links them, attribute 0 bound to @attr0 unless
 * NULL. Returns the program, or 0 with *@what set to what failed.
 */
GLuint gles_program(const char *vs, const char *fs, const char *attr0, const char **what);

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
