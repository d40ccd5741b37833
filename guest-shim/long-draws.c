// SPDX-License-Identifier: MIT
/*
 * long-draws: an "infotainment flood" OpenGL ES 2 client, the interfering
 * side of the isolation benchmark. It sends very long command groups, one
 * after the other: each group is one or more quads covering the whole
 * pbuffer, drawn with an expensive fragment shader (a loop of sin/cos/mix
 * arithmetic with a trip count compiled in), then glFinish().
 *
 * A group's time runs from before its first draw to after its glFinish().
 * The run lasts S seconds or until SIGTERM or SIGINT; it then prints (and
 * with --json writes) the groups sent, their rate and their median and
 * longest times. One group is drawn before the run and not counted, so
 * that llvmpipe's shader compilation is not measured.
 *
 * Rendering goes to an EGL pbuffer (EGL_PLATFORM decides the platform,
 * surfaceless or an X display), or with --kms to a display, each group
 * shown as one frame. Output on stdout (key=value, for a guest's serial
 * console and for scripts):
 *   GM-FLOOD start size=WxH draws=D iterations=I seconds=S
 *   GM-FLOOD progress groups=N seconds=T groups_per_s=R
 *   GM-FLOOD groups=N seconds=T groups_per_s=R p50_ms=.. max_ms=..
 * each followed by the same in words ("long-draws: N groups in T s, ...").
 * Exit status 0, 1 on a GL/EGL (or output) failure, 2 on a bad command
 * line.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <EGL/egl.h>
#include <GLES2/gl2.h>
#include <GLES2/gl2ext.h>

#include "client_args.h"
#include "gles/gles_target.h"
#include "samples.h"

#define PROG		   "long-draws"
#define DEFAULT_W	   1920
#define DEFAULT_H	   1080
#define DEFAULT_ITERATIONS 12
#define DEFAULT_DRAWS	   1
#define DEFAULT_SECONDS	   10
#define MAX_ITERATIONS	   1000
/* --escalate and --cheap: the trip count is a uniform, up to this. */
#define MAX_UNIFORM_ITERATIONS 200000
#define MAX_DRAWS	       100
#define MAX_SECONDS	       86400
#define MIN_SIZE	       16
#define MAX_SIZE	       8192

struct options {
	unsigned long iterations, draws, seconds, width, height;
	unsigned long deceive;	  /* the quad's vertices at 1/deceive of its size; 0, 1: none */
	unsigned long progress_s; /* a progress line every that many seconds; 0: none */
	unsigned long escalate;	  /* each group's trip count that many times the last's; 0: none */
	unsigned long cheap;	  /* the first that many groups loop once */
	const char *kms;	  /* --kms CARD: draw on its display, not into a pbuffer */
	const char *query;	  /* --query any-samples: the draws in an occlusion query */
	const char *json;
};

struct gl {
	struct gles_target t;
	GLuint program, vbo;
	GLuint query; /* --query's, 0: none */
	PFNGLBEGINQUERYEXTPROC begin_query;
	PFNGLENDQUERYEXTPROC end_query;
	GLint phase, trips; /* trips: the uniform trip count's (-1: compiled in) */
};

/* The trip count is a uniform: the stream shows the same draw whatever it costs. */
static bool uniform_trips(const struct options *o)
{
	return o->escalate > 1 || o->cheap;
}

struct stats {
	struct samples group_ms; /* one per group sent */
	double seconds;
};

static int fail(const char *what)
{
	return gles_fail("long-draws", what);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int egl_up(struct gl *g, struct options *o)
{
	const char *what = gles_target_open_either(&g->t, o->kms, &o->width, &o->height);

	return what ? fail(what) : 0;
}

/*
 * GLSL ES 1.00 loops need a constant trip count, so the iterations are
 * compiled in; with a uniform trip count (uniform_trips()), the loop runs
 * to MAX_UNIFORM_ITERATIONS and breaks at the uniform's. Every iteration
 * feeds the next, so none can be dropped.
 */
static int program_up(struct gl *g, const struct options *o)
{
	/* scale: what --deceive shrank the vertices by, undone where the stream does not show it.
	 */
	static const char vs[] = "attribute vec2 pos;\n"
				 "uniform float scale;\n"
				 "void main() { gl_Position = vec4(pos * scale, 0.0, 1.0); }\n";
	static const char fs_fmt[] =
	    "precision highp float;\n"
	    "uniform float phase;\n"
	    "uniform float trips;\n"
	    "void main() {\n"
	    "  vec2 p = gl_FragCoord.xy * 0.002 + phase;\n"
	    "  vec3 c = vec3(0.0);\n"
	    "  for (int i = 0; i < %lu; i++) {\n"
	    "%s"
	    "    float f = float(i) * 0.1;\n"
	    "    p = vec2(sin(p.x * 1.7 + p.y + f), cos(p.y * 1.3 - p.x + f));\n"
	    "    c = mix(c, vec3(p, p.x * p.y), 0.1);\n"
	    "  }\n"
	    "  gl_FragColor = vec4(c * 0.5 + 0.5, 0.5);\n"
	    "}\n";
	static const char trips_break[] = "    if (float(i) >= trips) break;\n";
	char fs[sizeof(fs_fmt) + sizeof(trips_break) + 24];
	const char *what = NULL;

	if (uniform_trips(o))
		snprintf(fs, sizeof(fs), fs_fmt, (unsigned long)MAX_UNIFORM_ITERATIONS,
			 trips_break);
	else
		snprintf(fs, sizeof(fs), fs_fmt, o->iterations, "");
	g->program = gles_program(vs, fs, "pos", &what);
	if (!g->program)
		return fail(what);
	glUseProgram(g->program);
	g->phase = glGetUniformLocation(g->program, "phase");
	g->trips = uniform_trips(o) ? glGetUniformLocation(g->program, "trips") : -1;
	glUniform1f(glGetUniformLocation(g->program, "scale"),
		    o->deceive > 1 ? (float)o->deceive : 1.0f);
	return 0;
}

/* --query any-samples: an occlusion query (GL_EXT_occlusion_query_boolean) around each group. */
static int query_up(struct gl *g)
{
	PFNGLGENQUERIESEXTPROC gen = (PFNGLGENQUERIESEXTPROC)eglGetProcAddress("glGenQueriesEXT");
	const char *ext = (const char *)glGetString(GL_EXTENSIONS);

	g->begin_query = (PFNGLBEGINQUERYEXTPROC)eglGetProcAddress("glBeginQueryEXT");
	g->end_query = (PFNGLENDQUERYEXTPROC)eglGetProcAddress("glEndQueryEXT");
	if (!ext || !strstr(ext, "GL_EXT_occlusion_query_boolean") || !gen || !g->begin_query ||
	    !g->end_query)
		return fail("--query: GL_EXT_occlusion_query_boolean is not supported");
	gen(1, &g->query);
	return 0;
}

static int gl_up(struct gl *g, const struct options *o)
{
	GLfloat quad[] = {-1, -1, 1, -1, -1, 1, 1, 1};

	if (program_up(g, o))
		return 1;
	for (size_t i = 0; i < sizeof(quad) / sizeof(quad[0]) && o->deceive > 1; i++)
		quad[i] /= (GLfloat)o->deceive;
	glGenBuffers(1, &g->vbo);
	glBindBuffer(GL_ARRAY_BUFFER, g->vbo);
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)sizeof(quad), quad, GL_STATIC_DRAW);
	glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, NULL);
	glEnableVertexAttribArray(0);
	glViewport(0, 0, (GLsizei)o->width, (GLsizei)o->height);
	if (o->query && query_up(g))
		return 1;
	glFinish();
	return glGetError() == GL_NO_ERROR ? 0 : fail("setting up");
}

/* Group @n's trip count: --cheap's 1, then --escalate's growth from --iterations. */
static double trips_of(const struct options *o, size_t n)
{
	double t = (double)o->iterations;

	if (n < o->cheap)
		return 1;
	for (size_t k = o->cheap; k < n && o->escalate > 1 && t < MAX_UNIFORM_ITERATIONS; k++)
		t *= (double)o->escalate;
	return t < MAX_UNIFORM_ITERATIONS ? t : MAX_UNIFORM_ITERATIONS;
}

/* Group @n: the quads, each with another phase, then glFinish(). */
static void group(const struct gl *g, const struct options *o, size_t n)
{
	if (g->trips >= 0)
		glUniform1f(g->trips, (GLfloat)trips_of(o, n));
	if (g->query)
		g->begin_query(GL_ANY_SAMPLES_PASSED_EXT, g->query);
	for (unsigned long d = 0; d < o->draws; d++) {
		glUniform1f(g->phase, (float)((n * o->draws + d) % 1000) * 0.01f);
		glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
	}
	if (g->query)
		g->end_query(GL_ANY_SAMPLES_PASSED_EXT);
	glFinish();
}

/* Sends groups until the time is up or a stop was asked; 1 on a failure. */
static int run(const struct gl *g, const struct options *o, struct stats *s)
{
	double start, end, t0, t1, progress;
	const char *what;

	group(g, o, 0);
	what = gles_target_present(&g->t);
	if (what)
		return fail(what);
	start = now_s();
	end = start + (double)o->seconds;
	progress = start + (double)o->progress_s;
	for (t1 = start; t1 < end && !gles_stop_requested();) {
		t0 = now_s();
		group(g, o, s->group_ms.n + 1);
		t1 = now_s();
		if (glGetError() != GL_NO_ERROR)
			return fail("drawing a group");
		if (samples_add(&s->group_ms, (t1 - t0) * 1e3))
			return fail("allocating the group record");
		what = gles_target_present(&g->t);
		if (what)
			return fail(what);
		if (o->progress_s && t1 >= progress) {
			double rate = (double)s->group_ms.n / (t1 - start);

			printf("GM-FLOOD progress groups=%zu seconds=%.1f groups_per_s=%.2f\n",
			       s->group_ms.n, t1 - start, rate);
			printf("long-draws: %zu groups in %.1f s, %.2f groups/s\n", s->group_ms.n,
			       t1 - start, rate);
			fflush(stdout);
			progress += (double)o->progress_s;
		}
	}
	s->seconds = t1 - start;
	return 0;
}

static int report(const struct options *o, struct stats *s)
{
	size_t groups = s->group_ms.n;
	double rate = s->seconds > 0 ? (double)groups / s->seconds : 0, p50, max;
	FILE *f;

	samples_sort(&s->group_ms);
	p50 = samples_percentile(&s->group_ms, 50);
	max = samples_percentile(&s->group_ms, 100);
	printf("GM-FLOOD groups=%zu seconds=%.2f groups_per_s=%.2f p50_ms=%.2f max_ms=%.2f\n",
	       groups, s->seconds, rate, p50, max);
	printf("long-draws: %zu groups (%lu quads at %lux%lu, %lu iterations) in %.2f s, "
	       "%.2f groups/s; group p50 %.2f ms, max %.2f ms\n",
	       groups, o->draws, o->width, o->height, o->iterations, s->seconds, rate, p50, max);
	if (!o->json)
		return 0;
	f = fopen(o->json, "w");
	if (!f) {
		fprintf(stderr, "long-draws: %s: %s\n", o->json, strerror(errno));
		return 1;
	}
	fprintf(f,
		"{\"groups\": %zu, \"seconds\": %.3f, \"groups_per_s\": %.3f, "
		"\"p50_group_ms\": "
		"%.3f, \"max_group_ms\": %.3f}\n",
		groups, s->seconds, rate, p50, max);
	if (fclose(f) != 0) {
		fprintf(stderr, "long-draws: writing %s: %s\n", o->json, strerror(errno));
		return 1;
	}
	return 0;
}

static void usage(FILE *to)
{
	fprintf(to,
		"usage: long-draws [--iterations I] [--draws D] [--seconds S]\n"
		"                  [--size WxH] [--kms CARD] [--progress-s P] [--json FILE]\n"
		"                  [--deceive K] [--escalate F] [--cheap N] [--query any-samples]\n"
		"Sends command groups of D quads (default %d, 1..%d) covering a WxH\n"
		"pbuffer (default %dx%d), each drawn with a fragment shader that loops\n"
		"I times (default %d, 1..%d), then glFinish(), for S seconds\n"
		"(default %d, 1..%d). --json writes the results to FILE. --kms CARD\n"
		"(e.g. /dev/dri/card0) draws on that card's display at its mode's\n"
		"size instead and shows each group once it is timed. --progress-s\n"
		"prints the groups so far every P seconds. --deceive K (2..1000000)\n"
		"stores the quads' vertices at 1/K of their size and scales them back\n"
		"by a uniform in the vertex shader: the stream shows a tiny quad that\n"
		"covers the whole pbuffer (a guest whose groups run far over what\n"
		"their commands predict). --escalate F (2..100) and --cheap N make\n"
		"the trip count a uniform, so that every group's stream looks alike:\n"
		"the first N groups loop once, then each group loops F times as often\n"
		"as the one before, from I on (up to %d; without --escalate, I each:\n"
		"a client that turns costly after N cheap groups). --query any-samples\n"
		"draws each group inside an occlusion query (its result unread): a\n"
		"draw that gpu-mediator's workers may not cut into scissor tiles.\n",
		DEFAULT_DRAWS, MAX_DRAWS, DEFAULT_W, DEFAULT_H, DEFAULT_ITERATIONS, MAX_ITERATIONS,
		DEFAULT_SECONDS, MAX_SECONDS, MAX_UNIFORM_ITERATIONS);
}

/* One option and its value (client_args_option_fn); 0, or non-zero on a bad one. */
static int parse_option(const char *opt, const char *val, void *data)
{
	struct options *o = data;

	if (strcmp(opt, "--iterations") == 0)
		return client_args_ulong(PROG, opt, val, 1, MAX_ITERATIONS, &o->iterations);
	if (strcmp(opt, "--draws") == 0)
		return client_args_ulong(PROG, opt, val, 1, MAX_DRAWS, &o->draws);
	if (strcmp(opt, "--seconds") == 0)
		return client_args_ulong(PROG, opt, val, 1, MAX_SECONDS, &o->seconds);
	if (strcmp(opt, "--size") == 0)
		return client_args_size(PROG, val, MIN_SIZE, MAX_SIZE, &o->width, &o->height);
	if (strcmp(opt, "--progress-s") == 0)
		return client_args_ulong(PROG, opt, val, 1, MAX_SECONDS, &o->progress_s);
	if (strcmp(opt, "--json") == 0)
		return client_args_string(PROG, opt, val, &o->json);
	if (strcmp(opt, "--kms") == 0)
		return client_args_string(PROG, opt, val, &o->kms);
	if (strcmp(opt, "--deceive") == 0)
		return client_args_ulong(PROG, opt, val, 2, 1000000, &o->deceive);
	if (strcmp(opt, "--escalate") == 0)
		return client_args_ulong(PROG, opt, val, 2, 100, &o->escalate);
	if (strcmp(opt, "--cheap") == 0)
		return client_args_ulong(PROG, opt, val, 1, 1000000, &o->cheap);
	if (strcmp(opt, "--query") == 0) {
		if (strcmp(val, "any-samples") != 0) {
			fprintf(stderr, PROG ": --query: only any-samples is known, not '%s'\n",
				val);
			return -1;
		}
		o->query = val;
		return 0;
	}
	usage(stderr);
	return -1;
}

/* 0, 1 after --help, or < 0 on a bad command line. */
static int parse_args(int argc, char **argv, struct options *o)
{
	*o = (struct options){.iterations = DEFAULT_ITERATIONS,
			      .draws = DEFAULT_DRAWS,
			      .seconds = DEFAULT_SECONDS,
			      .width = DEFAULT_W,
			      .height = DEFAULT_H};
	return client_args_parse(argc, argv, parse_option, usage, o);
}

int main(int argc, char **argv)
{
	struct options o;
	struct gl g;
	struct stats s;
	sigset_t set;
	int r = parse_args(argc, argv, &o);

	if (r)
		return r > 0 ? 0 : 2;
	memset(&g, 0, sizeof(g));
	memset(&s, 0, sizeof(s));
	gles_catch_stop(&set);
	if (egl_up(&g, &o) || gl_up(&g, &o))
		return 1;
	printf("GM-FLOOD start size=%lux%lu draws=%lu iterations=%lu seconds=%lu\n", o.width,
	       o.height, o.draws, o.iterations, o.seconds);
	fflush(stdout);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	r = run(&g, &o, &s);
	r |= report(&o, &s);
	samples_finish(&s.group_ms);
	gles_target_close(&g.t);
	return r;
}
