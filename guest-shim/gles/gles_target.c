// SPDX-License-Identifier: MIT
/*
 * An off-screen OpenGL ES 2 target (see gles_target.h).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gles/gles_target.h"

const char *gles_target_open(struct gles_target *t, int width, int height, bool depth_stencil)
{
	const EGLint attribs[] = {
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
	    depth_stencil ? 24 : 0,
	    EGL_STENCIL_SIZE,
	    depth_stencil ? 8 : 0,
	    EGL_NONE,
	};
	const EGLint pb[] = {EGL_WIDTH, width, EGL_HEIGHT, height, EGL_NONE};
	const EGLint ctx[] = {EGL_CONTEXT_CLIENT_VERSION, 2, EGL_NONE};
	EGLConfig config;
	EGLint n = 0;

	t->display = eglGetDisplay(EGL_DEFAULT_DISPLAY);
	if (t->display == EGL_NO_DISPLAY || !eglInitialize(t->display, NULL, NULL))
		return "eglInitialize";
	if (!eglBindAPI(EGL_OPENGL_ES_API) ||
	    !eglChooseConfig(t->display, attribs, &config, 1, &n) || n < 1)
		return "eglChooseConfig";
	t->surface = eglCreatePbufferSurface(t->display, config, pb);
	t->context = eglCreateContext(t->display, config, EGL_NO_CONTEXT, ctx);
	if (t->surface == EGL_NO_SURFACE || t->context == EGL_NO_CONTEXT ||
	    !eglMakeCurrent(t->display, t->surface, t->surface, t->context))
		return "creating the pbuffer and its context";
	return NULL;
}

const char *gles_target_open_either(struct gles_target *t, const char *card, unsigned long *width,
				    unsigned long *height)
{
	const char *what;
	int w, h;

	if (!card)
		return gles_target_open(t, (int)*width, (int)*height, false);
	what = gles_target_open_kms(t, card, &w, &h);
	if (!what) {
		*width = (unsigned long)w;
		*height = (unsigned long)h;
	}
	return what;
}

void gles_target_close(struct gles_target *t)
{
	if (t->display && t->display != EGL_NO_DISPLAY) {
		eglMakeCurrent(t->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
		eglTerminate(t->display);
		t->display = EGL_NO_DISPLAY;
	}
	gles_kms_close(t->kms);
	t->kms = NULL;
}

static GLuint compile(GLenum type, const char *src)
{
	GLuint s = glCreateShader(type);
	GLint ok = 0;

	glShaderSource(s, 1, &src, NULL);
	glCompileShader(s);
	glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
	return ok ? s : 0;
}

GLuint gles_program(const char *vs, const char *fs, const char *attr0, const char **what)
{
	GLuint v = compile(GL_VERTEX_SHADER, vs), f = compile(GL_FRAGMENT_SHADER, fs), p;
	GLint ok = 0;

	if (!v || !f) {
		*what = "compiling the shaders";
		return 0;
	}
	p = glCreateProgram();
	glAttachShader(p, v);
	glAttachShader(p, f);
	if (attr0)
		glBindAttribLocation(p, 0, attr0);
	glLinkProgram(p);
	glGetProgramiv(p, GL_LINK_STATUS, &ok);
	if (!ok) {
		*what = "linking the program";
		return 0;
	}
	return p;
}

GLbitfield gles_clear_mask(unsigned long i)
{
	static const GLbitfield masks[7] = {
	    GL_COLOR_BUFFER_BIT,
	    GL_DEPTH_BUFFER_BIT,
	    GL_STENCIL_BUFFER_BIT,
	    GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT,
	    GL_COLOR_BUFFER_BIT | GL_STENCIL_BUFFER_BIT,
	    GL_DEPTH_BUFFER_BIT | GL_STENCIL_BUFFER_BIT,
	    GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT | GL_STENCIL_BUFFER_BIT,
	};

	return masks[i % 7];
}

int gles_fail(const char *prog, const char *what)
{
	fprintf(stderr, "%s: %s failed (EGL 0x%x, GL 0x%x)\n", prog, what, eglGetError(),
		glGetError());
	return 1;
}

static volatile sig_atomic_t stop_flag;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

void gles_catch_stop(sigset_t *set)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	/*
	 * Mesa's vtest winsys aborts on a read that fails, EINTR included:
	 * a stop while waiting for the renderer must not interrupt it.
	 */
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

bool gles_stop_requested(void)
{
	return stop_flag != 0;
}
