/*
 * gl-clears: the clear workloads of seed 002's evaluation, as an
 * unmodified GL ES 2 program (run it through mediatord with mediator-exec
 * and GALLIUM_DRIVER=virpipe).
 *
 *   gl-clears random [GROUPS] [SEED]
 *       Like seed 002's modified clearspd: per group, a random number of
 *       glClear calls (1..500) with random buffer masks and colours on a
 *       1200x1000 surface, then glFinish() (one command group).
 *   gl-clears two-contexts [GROUPS]
 *       Seed 002 §VI-E: two contexts on a 640x480 and a 1920x1080
 *       surface, alternating, 300 clears of the colour buffer each, then
 *       glFinish(): binary-equal groups whose cost differs by context.
 *
 * Rendering goes to EGL pbuffers on the X display in $DISPLAY.
 * Exit status 0 on success, 1 on a GL/EGL error, 2 on a bad command line.
 */
#include <EGL/egl.h>
#include <GLES2/gl2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seed 002's clearspd variant: 1..500 clears per group. */
#define RANDOM_MAX_CLEARS 500
/* Seed 002 §VI-E: 300 clears per group in the two-context test. */
#define TWO_CONTEXT_CLEARS 300

struct surface {
	EGLSurface surface;
	EGLContext context;
};

static EGLDisplay display;
static EGLConfig config;

static int die(const char *what)
{
	fprintf(stderr, "gl-clears: %s failed (EGL 0x%x, GL 0x%x)\n", what, eglGetError(),
		glGetError());
	return 1;
}

static int egl_init(void)
{
	static const EGLint attribs[] = {
	    EGL_SURFACE_TYPE,
	    EGL_PBUFFER_BIT,
	    EGL_RENDERABLE_TYPE,
	    EGL_OPENGL_ES2_BIT,
	    EGL_RED_SIZE,
	    8,
	    EGL_GREEN_SIZE,
	    8,
	    EGL_BLUE_SIZE,
	    8,
	    EGL_DEPTH_SIZE,
	    24,
	    EGL_STENCIL_SIZE,
	    8,
	    EGL_NONE,
	};
	EGLint n = 0;

	display = eglGetDisplay(EGL_DEFAULT_DISPLAY);
	if (display == EGL_NO_DISPLAY || !eglInitialize(display, NULL, NULL))
		return die("eglInitialize");
	if (!eglBindAPI(EGL_OPENGL_ES_API) || !eglChooseConfig(display, attribs, &config, 1, &n) ||
	    n < 1)
		return die("eglChooseConfig");
	return 0;
}

static int surface_init(struct surface *s, int width, int height)
{
	const EGLint pb[] = {EGL_WIDTH, width, EGL_HEIGHT, height, EGL_NONE};
	const EGLint ctx[] = {EGL_CONTEXT_CLIENT_VERSION, 2, EGL_NONE};

	s->surface = eglCreatePbufferSurface(display, config, pb);
	s->context = eglCreateContext(display, config, EGL_NO_CONTEXT, ctx);
	if (s->surface == EGL_NO_SURFACE || s->context == EGL_NO_CONTEXT)
		return die("creating a pbuffer and its context");
	return 0;
}

static int make_current(const struct surface *s)
{
	if (!eglMakeCurrent(display, s->surface, s->surface, s->context))
		return die("eglMakeCurrent");
	return 0;
}

static int run_random(long groups, unsigned seed)
{
	static const GLbitfield masks[] = {
	    GL_COLOR_BUFFER_BIT,
	    GL_DEPTH_BUFFER_BIT,
	    GL_STENCIL_BUFFER_BIT,
	    GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT,
	    GL_COLOR_BUFFER_BIT | GL_STENCIL_BUFFER_BIT,
	    GL_DEPTH_BUFFER_BIT | GL_STENCIL_BUFFER_BIT,
	    GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT | GL_STENCIL_BUFFER_BIT,
	};
	struct surface s;

	srand(seed);
	if (surface_init(&s, 1200, 1000) || make_current(&s))
		return 1;
	glViewport(0, 0, 1200, 1000);
	for (long g = 0; g < groups; g++) {
		int clears = 1 + rand() % RANDOM_MAX_CLEARS;

		for (int i = 0; i < clears; i++) {
			glClearColor((float)rand() / (float)RAND_MAX,
				     (float)rand() / (float)RAND_MAX,
				     (float)rand() / (float)RAND_MAX, 1.0f);
			glClearDepthf((float)rand() / (float)RAND_MAX);
			glClearStencil(rand() & 0xff);
			glClear(masks[rand() % (int)(sizeof(masks) / sizeof(masks[0]))]);
		}
		glFinish();
		if (glGetError() != GL_NO_ERROR)
			return die("glClear");
	}
	return 0;
}

static int run_two_contexts(long groups)
{
	struct surface small, large;

	if (surface_init(&small, 640, 480) || surface_init(&large, 1920, 1080))
		return 1;
	for (long g = 0; g < groups; g++) {
		const struct surface *s = (g % 2) ? &large : &small;

		if (make_current(s))
			return 1;
		glClearColor(0, 0, 0, 1);
		for (int i = 0; i < TWO_CONTEXT_CLEARS; i++)
			glClear(GL_COLOR_BUFFER_BIT);
		glFinish();
		if (glGetError() != GL_NO_ERROR)
			return die("glClear");
	}
	return 0;
}

int main(int argc, char **argv)
{
	long groups = argc > 2 ? strtol(argv[2], NULL, 10) : 2000;
	int r;

	if (argc < 2 || groups <= 0 ||
	    (strcmp(argv[1], "random") != 0 && strcmp(argv[1], "two-contexts") != 0)) {
		fprintf(stderr,
			"usage: gl-clears random [GROUPS] [SEED] | two-contexts [GROUPS]\n");
		return 2;
	}
	if (egl_init())
		return 1;
	if (strcmp(argv[1], "random") == 0)
		r = run_random(groups, argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 1);
	else
		r = run_two_contexts(groups);
	eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
	eglTerminate(display);
	return r;
}
