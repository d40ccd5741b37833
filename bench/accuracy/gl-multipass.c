// SPDX-License-Identifier: MIT
/*
 * gl-multipass: a multi-pass workload for the accuracy benchmark, as an
 * unmodified GL ES 2 program (run it through mediatord with mediator-exec
 * and GALLIUM_DRIVER=virpipe, as bench/accuracy/run.sh does).
 *
 *   gl-multipass [GROUPS] [SEED]
 *
 * Per frame, like a post-processing pipeline or a compositor:
 *   1. scene pass: into a texture-backed framebuffer object of a random
 *      size (128 to 2048 texels square, with a depth buffer), clear colour
 *      and depth, then draw a lit mesh through a model-view-projection
 *      matrix at a random scale (it covers between a tenth of the target
 *      and all of it);
 *   2. composite pass: into the pbuffer (1200x1000), clear colour, then
 *      draw a quad given directly in clip space (a pass-through vertex
 *      shader, no matrix) over a random rectangle of the target, whose
 *      fragment shader samples the scene's texture five times (a blur).
 * Half of the frames call glFinish() between the passes, so the workload
 * has groups that only render to a texture, groups that only sample one,
 * and groups that do both; every frame ends with glFinish().
 *
 * Rendering goes to an EGL pbuffer (gles_target.h) on the X display in
 * $DISPLAY. Exit status 0 on success, 1 on a GL/EGL error, 2 on a bad
 * command line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gles/gles_target.h"

#define TARGET_W 1200
#define TARGET_H 1000
/* Sizes of the texture-backed framebuffers: 128 << i. */
#define FBO_SIZES 5
/* The mesh: a sphere of MESH_RINGS x MESH_SEGMENTS quads. */
#define MESH_RINGS    48
#define MESH_SEGMENTS 96
#define MESH_VERTICES (MESH_RINGS * MESH_SEGMENTS * 6)

static const char scene_vs[] = "attribute vec3 position;\n"
			       "uniform mat4 mvp;\n"
			       "varying vec3 normal;\n"
			       "void main() {\n"
			       "  normal = position;\n"
			       "  gl_Position = mvp * vec4(position, 1.0);\n"
			       "}\n";
static const char scene_fs[] = "precision mediump float;\n"
			       "varying vec3 normal;\n"
			       "void main() {\n"
			       "  vec3 n = normalize(normal);\n"
			       "  float d = max(dot(n, normalize(vec3(0.3, 0.5, 0.8))), 0.0);\n"
			       "  gl_FragColor = vec4(vec3(0.1) + d * vec3(0.8, 0.6, 0.4), 1.0);\n"
			       "}\n";
static const char quad_vs[] = "attribute vec2 position;\n"
			      "varying vec2 uv;\n"
			      "void main() {\n"
			      "  uv = position * 0.5 + 0.5;\n"
			      "  gl_Position = vec4(position, 0.0, 1.0);\n"
			      "}\n";
static const char quad_fs[] =
    "precision mediump float;\n"
    "uniform sampler2D tex;\n"
    "varying vec2 uv;\n"
    "void main() {\n"
    "  vec2 d = vec2(0.004, 0.004);\n"
    "  gl_FragColor = 0.4 * texture2D(tex, uv)\n"
    "    + 0.15 * texture2D(tex, uv + d) + 0.15 * texture2D(tex, uv - d)\n"
    "    + 0.15 * texture2D(tex, uv + vec2(d.x, -d.y))\n"
    "    + 0.15 * texture2D(tex, uv - vec2(d.x, -d.y));\n"
    "}\n";

static int fail(const char *what)
{
	return gles_fail("gl-multipass", what);
}

static float frand(void)
{
	return (float)rand() / (float)RAND_MAX;
}

/* Triangles of a unit sphere. */
static float *sphere(void)
{
	float *v = malloc(sizeof(float) * 3 * MESH_VERTICES), *p = v;
	const float pi = 3.14159265f;

	if (!v)
		return NULL;
	for (int r = 0; r < MESH_RINGS; r++) {
		for (int s = 0; s < MESH_SEGMENTS; s++) {
			static const int corner[6][2] = {{0, 0}, {1, 0}, {1, 1},
							 {0, 0}, {1, 1}, {0, 1}};

			for (int c = 0; c < 6; c++) {
				float th = pi * (float)(r + corner[c][0]) / MESH_RINGS;
				float ph = 2 * pi * (float)(s + corner[c][1]) / MESH_SEGMENTS;

				*p++ = sinf(th) * cosf(ph);
				*p++ = cosf(th);
				*p++ = sinf(th) * sinf(ph);
			}
		}
	}
	return v;
}

/* Column-major: a rotation about y by @a, scaled by @s, pushed to z = -3 and projected. */
static void mvp(float m[16], float a, float s)
{
	const float n = 1.0f, f = 10.0f, t = 0.5f; /* frustum: near, far, half-height at near */
	float c = cosf(a) * s, sn = sinf(a) * s;
	/* model-view: rotation/scale, translation (0, 0, -3) */
	float mv[16] = {c, 0, -sn, 0, 0, s, 0, 0, sn, 0, c, 0, 0, 0, -3, 1};
	float pr[16] = {n / t,
			0,
			0,
			0,
			0,
			n / t,
			0,
			0,
			0,
			0,
			-(f + n) / (f - n),
			-1,
			0,
			0,
			-2 * f * n / (f - n),
			0};

	for (int col = 0; col < 4; col++)
		for (int row = 0; row < 4; row++) {
			float v = 0;

			for (int k = 0; k < 4; k++)
				v += pr[k * 4 + row] * mv[col * 4 + k];
			m[col * 4 + row] = v;
		}
}

struct fbo {
	GLuint fb, tex, depth;
	int size;
};

static int fbo_open(struct fbo *o, int size)
{
	o->size = size;
	glGenTextures(1, &o->tex);
	glBindTexture(GL_TEXTURE_2D, o->tex);
	glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, size, size, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
	glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
	glGenRenderbuffers(1, &o->depth);
	glBindRenderbuffer(GL_RENDERBUFFER, o->depth);
	glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT16, size, size);
	glGenFramebuffers(1, &o->fb);
	glBindFramebuffer(GL_FRAMEBUFFER, o->fb);
	glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, o->tex, 0);
	glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, o->depth);
	if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
		return fail("glCheckFramebufferStatus");
	glBindFramebuffer(GL_FRAMEBUFFER, 0);
	return 0;
}

static int run(long groups)
{
	struct gles_target t = {0};
	struct fbo fbo[FBO_SIZES];
	GLuint scene, quad, mesh_vb, quad_vb;
	const char *what = NULL;
	float *mesh;
	int r = 0;

	if ((what = gles_target_open(&t, TARGET_W, TARGET_H, true))) {
		gles_target_close(&t);
		return fail(what);
	}
	scene = gles_program(scene_vs, scene_fs, "position", &what);
	quad = scene ? gles_program(quad_vs, quad_fs, "position", &what) : 0;
	mesh = sphere();
	if (!scene || !quad || !mesh) {
		free(mesh);
		gles_target_close(&t);
		return fail(what ? what : "malloc");
	}
	for (int i = 0; i < FBO_SIZES && !r; i++)
		r = fbo_open(&fbo[i], 128 << i);
	glGenBuffers(1, &mesh_vb);
	glBindBuffer(GL_ARRAY_BUFFER, mesh_vb);
	glBufferData(GL_ARRAY_BUFFER, sizeof(float) * 3 * MESH_VERTICES, mesh, GL_STATIC_DRAW);
	free(mesh);
	glGenBuffers(1, &quad_vb);
	glEnable(GL_DEPTH_TEST);
	for (long g = 0; g < groups && !r; g++) {
		const struct fbo *o = &fbo[rand() % FBO_SIZES];
		float m[16], x0 = -1 + frand(), y0 = -1 + frand();
		float x1 = x0 + 0.3f + frand() * (1 - x0 - 0.3f);
		float y1 = y0 + 0.3f + frand() * (1 - y0 - 0.3f);
		float q[8] = {x0, y0, x1, y0, x0, y1, x1, y1};

		/* 1. scene pass into the texture */
		glBindFramebuffer(GL_FRAMEBUFFER, o->fb);
		glViewport(0, 0, o->size, o->size);
		glEnable(GL_DEPTH_TEST);
		glClearColor(0.1f, 0.1f, 0.2f, 1);
		glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
		glUseProgram(scene);
		mvp(m, (float)g * 0.05f, 0.25f + frand() * 1.0f);
		glUniformMatrix4fv(glGetUniformLocation(scene, "mvp"), 1, GL_FALSE, m);
		glBindBuffer(GL_ARRAY_BUFFER, mesh_vb);
		glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, NULL);
		glEnableVertexAttribArray(0);
		glDrawArrays(GL_TRIANGLES, 0, MESH_VERTICES);
		if (rand() % 2)
			glFinish();

		/* 2. composite pass: the texture, blurred, over a rectangle of the target */
		glBindFramebuffer(GL_FRAMEBUFFER, 0);
		glViewport(0, 0, TARGET_W, TARGET_H);
		glDisable(GL_DEPTH_TEST);
		glClearColor(0, 0, 0, 1);
		glClear(GL_COLOR_BUFFER_BIT);
		glUseProgram(quad);
		glActiveTexture(GL_TEXTURE0);
		glBindTexture(GL_TEXTURE_2D, o->tex);
		glUniform1i(glGetUniformLocation(quad, "tex"), 0);
		glBindBuffer(GL_ARRAY_BUFFER, quad_vb);
		glBufferData(GL_ARRAY_BUFFER, sizeof(q), q, GL_STREAM_DRAW);
		glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, NULL);
		glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
		glFinish();
		if (glGetError() != GL_NO_ERROR)
			r = fail("drawing");
	}
	gles_target_close(&t);
	return r;
}

int main(int argc, char **argv)
{
	long groups = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;

	if (groups <= 0 || argc > 3) {
		fprintf(stderr, "usage: gl-multipass [GROUPS] [SEED]\n");
		return 2;
	}
	srand(argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 1);
	return run(groups);
}
