// SPDX-License-Identifier: MIT
/*
 * mediator-calibrate: the calibration microbenchmarks of Schnitzer et al.,
 * Concepts for Execution Time Prediction of 3D GPU Rendering (§V), as an
 * OpenGL ES 2 program. `mediatorctl calibrate DOMAIN` runs it through the domain's
 * vtest socket (with mediator-exec and Mesa's virgl driver), so it gets a
 * virgl context of its own in that domain, and the worker serving it
 * learns the cost of each kind of command from the groups it sends and
 * saves what it learned as the domain's model state.
 *
 * Each round sends one command group (one glFinish) of each kind, with the
 * amount of work varied from round to round so that constant and per-unit
 * costs can be told apart:
 *   flush      a group with no rendering: the per-group constant;
 *   clears     100 clears of the 1200x1000 target, each round another of the
 *              7 buffer masks (colour, depth, stencil and their mixes);
 *   culled     250k to 1M vertices drawn with both faces culled: the
 *              per-vertex cost without fragments;
 *   triangles  25 to 100 triangles each covering half the target: the
 *              per-fragment cost.
 *
 * Rendering goes to an EGL pbuffer (EGL_PLATFORM decides the platform;
 * mediatorctl sets surfaceless). Prints one line per kind: groups sent and
 * their mean wall time as seen by the client. Exit status 0, 1 on a GL/EGL
 * error, 2 on a bad command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gles/gles_target.h"
/* Schnitzer et al.'s microbenchmark sizes. */
#define TARGET_W	    1200
#define TARGET_H	    1000
#define CLEARS_PER_GROUP    100
#define CULLED_VERTICES_MAX 1000000
#define TRIANGLES_PER_GROUP 100
/* Work per group is varied over this many steps (1/4 .. 4/4 of the above). */
#define STEPS	       4
#define DEFAULT_ROUNDS 40
#define MAX_ROUNDS     100000

enum kind { FLUSH, CLEARS, CULLED, TRIANGLES, KINDS };

static const char *const kind_names[KINDS] = {"flush", "clears", "culled", "triangles"};

struct calib {
	struct gles_target t;
	GLuint program, vbo;
	GLint pos_attr;
	double total_s[KINDS];
	long groups[KINDS];
};

static int fail(const char *what)
{
	return gles_fail("mediator-calibrate", what);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int egl_up(struct calib *c)
{
	const char *what = gles_target_open(&c->t, TARGET_W, TARGET_H, true);

	return what ? fail(what) : 0;
}

/*
 * The MVP is a uniform (identity), as in most applications, so that the
 * worker finds it in the constant buffer and projects the vertices'
 * bounding box.
 */
static int gl_up(struct calib *c)
{
	static const char vs[] = "uniform mat4 mvp;\n"
				 "attribute vec3 pos;\n"
				 "void main() { gl_Position = mvp * vec4(pos, 1.0); }\n";
	static const char fs[] = "precision mediump float;\n"
				 "uniform vec4 color;\n"
				 "void main() { gl_FragColor = color; }\n";
	static const GLfloat identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
	const char *what = NULL;
	GLfloat *data;

	c->program = gles_program(vs, fs, NULL, &what);
	if (!c->program)
		return fail(what);
	glUseProgram(c->program);
	glUniformMatrix4fv(glGetUniformLocation(c->program, "mvp"), 1, GL_FALSE, identity);
	glUniform4f(glGetUniformLocation(c->program, "color"), 0.2f, 0.6f, 0.9f, 1.0f);
	c->pos_attr = glGetAttribLocation(c->program, "pos");

	/*
	 * One vertex buffer: CULLED_VERTICES_MAX vertices. Every triangle is
	 * the lower-left half of the target (-1,-1), (1,-1), (-1,1), so a
	 * triangle draws half the target's pixels and the buffer's bounding
	 * box is the whole target.
	 */
	data = malloc(sizeof(GLfloat) * 3 * CULLED_VERTICES_MAX);
	if (!data)
		return fail("allocating the vertex data");
	for (long i = 0; i < CULLED_VERTICES_MAX; i++) {
		static const GLfloat tri[3][3] = {{-1, -1, 0}, {1, -1, 0}, {-1, 1, 0}};

		memcpy(&data[3 * i], tri[i % 3], sizeof(tri[0]));
	}
	glGenBuffers(1, &c->vbo);
	glBindBuffer(GL_ARRAY_BUFFER, c->vbo);
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(sizeof(GLfloat) * 3 * CULLED_VERTICES_MAX), data,
		     GL_STATIC_DRAW);
	free(data);
	glVertexAttribPointer((GLuint)c->pos_attr, 3, GL_FLOAT, GL_FALSE, 0, NULL);
	glEnableVertexAttribArray((GLuint)c->pos_attr);
	glViewport(0, 0, TARGET_W, TARGET_H);
	glFinish();
	return glGetError() == GL_NO_ERROR ? 0 : fail("setting up");
}

/* One group of @kind at work step @step (1..STEPS). */
static void group(struct calib *c, enum kind kind, int step, long round)
{
	switch (kind) {
	case FLUSH:
		/* A state change, so that the flush carries a command buffer. */
		glClearColor((float)(round % 2), 0, 0, 1);
		break;
	case CLEARS:
		for (int i = 0; i < CLEARS_PER_GROUP; i++)
			glClear(gles_clear_mask((unsigned long)round));
		break;
	case CULLED:
		glEnable(GL_CULL_FACE);
		glCullFace(GL_FRONT_AND_BACK);
		glDrawArrays(GL_TRIANGLES, 0, CULLED_VERTICES_MAX / 3 / STEPS * 3 * step);
		glDisable(GL_CULL_FACE);
		break;
	case TRIANGLES:
		for (int i = 0; i < TRIANGLES_PER_GROUP / STEPS * step; i++)
			glDrawArrays(GL_TRIANGLES, 0, 3);
		break;
	case KINDS:
		break;
	}
}

static int run(struct calib *c, long rounds)
{
	for (long r = 0; r < rounds; r++) {
		for (int k = 0; k < KINDS; k++) {
			double t0 = now_s();

			group(c, (enum kind)k, 1 + (int)((r + k) % STEPS), r);
			glFinish();
			c->total_s[k] += now_s() - t0;
			c->groups[k]++;
		}
		if (glGetError() != GL_NO_ERROR)
			return fail("a calibration group");
	}
	return 0;
}

static void usage(FILE *to)
{
	fprintf(to,
		"usage: mediator-calibrate [--rounds N]\n"
		"Runs the calibration microbenchmarks of Schnitzer et al., Concepts for\n"
		"Execution Time Prediction of 3D GPU Rendering (flush, clears, culled\n"
		"vertices, half-target triangles), N rounds of one group each\n"
		"(default %d), on the virgl context it gets.\n",
		DEFAULT_ROUNDS);
}

int main(int argc, char **argv)
{
	struct calib c;
	long rounds = DEFAULT_ROUNDS;
	char *end;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
			rounds = strtol(argv[++i], &end, 10);
			if (*end || rounds < 1 || rounds > MAX_ROUNDS) {
				fprintf(stderr, "mediator-calibrate: --rounds: 1..%d\n",
					MAX_ROUNDS);
				return 2;
			}
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	memset(&c, 0, sizeof(c));
	if (egl_up(&c) || gl_up(&c) || run(&c, rounds))
		return 1;
	for (int k = 0; k < KINDS; k++)
		printf("%-10s %5ld groups, %8.1f us per group (client wall time)\n", kind_names[k],
		       c.groups[k], c.total_s[k] / (double)c.groups[k] * 1e6);
	gles_target_close(&c.t);
	return 0;
}
