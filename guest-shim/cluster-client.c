// SPDX-License-Identifier: MIT
/*
 * cluster-client: a periodic "instrument cluster" OpenGL ES 2 client, the
 * latency-critical side of the isolation benchmark.
 *
 * Frame k is released at t_k = t0 + k * period (CLOCK_MONOTONIC, absolute
 * sleeps; the period is --period-us or 1 / --rate). It then draws a fixed
 * instrument-like scene (a clear, two dials of a few dozen triangles each
 * with a needle whose angle follows k, two bars and a row of warning lamps,
 * some blinking: the same draws every frame, so the GPU cost is steady),
 * calls glFinish() and takes the completion time c_k. Its latency is
 * c_k - t_k; it misses when c_k > t_k + deadline. A frame that completes
 * after later releases makes those releases skipped: they are not drawn,
 * each counts as a missed frame, and the next frame is the first one
 * released at or after c_k (frame_stats.h does this accounting).
 *
 * "frames" counts releases: frames drawn plus releases skipped. Latency
 * percentiles are over the frames drawn. One frame is drawn before t0 and
 * not counted, so that llvmpipe's shader compilation is not measured.
 *
 * Rendering goes to an EGL pbuffer (EGL_PLATFORM decides the platform,
 * surfaceless or an X display), or with --kms to a display, where each
 * frame is shown with a page flip after it is timed. Output on stdout, for
 * a guest's serial console and for scripts (key=value, times in us):
 *   GM-CLUSTER start size=WxH period_us=P deadline_us=D frames=N pace=timer
 *   GM-CLUSTER rate frame=K period_us=P release_ns=T   (--switch-rate: frame K,
 *                       released at T, CLOCK_MONOTONIC ns, is the first at P)
 *   GM-CLUSTER progress frames=.. misses=.. skipped=.. p50_us=.. p99_us=.. max_us=..
 *                       window_max_us=..
 *   GM-CLUSTER frames=.. misses=.. skipped=.. p50_us=.. p99_us=.. max_us=.. deadline_us=D
 * (progress every --progress-s seconds, window_max_us the longest latency
 * since the line before; the last line once the run ends),
 * then the same in words: "NAME: F frames (S skipped), M missed the D us
 * deadline; latency p50 .. us, p99 .. us, max .. us". SIGTERM or SIGINT
 * end the run early; the results are still printed and written. Exit
 * status 0, 1 on a GL/EGL (or output) failure, 2 on a bad command line.
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

#include "client_args.h"
#include "frame_stats.h"
#include "gles/gles_target.h"

#define PROG "cluster-client"

#define DEFAULT_PERIOD_US 16667
#define DEFAULT_FRAMES	  600
#define DEFAULT_W	  800
#define DEFAULT_H	  480
#define MIN_PERIOD_US	  1000
#define MAX_PERIOD_US	  1000000
#define MAX_DEADLINE_US	  10000000
#define MAX_FRAMES	  10000000
#define MAX_SECONDS	  86400
#define MAX_RATE_HZ	  (1000000 / MIN_PERIOD_US)
#define MIN_SIZE	  16
#define MAX_SIZE	  8192

/* The scene's geometry, in one vertex buffer of 2D positions. */
#define FACE_SEGMENTS 24
#define TICKS	      12
#define FACE_FIRST    0
#define TICKS_FIRST   (FACE_FIRST + 3 * FACE_SEGMENTS)
#define NEEDLE_FIRST  (TICKS_FIRST + 3 * TICKS)
#define BAR_FIRST     (NEEDLE_FIRST + 3)
#define VERTICES      (BAR_FIRST + 6)
/* Warning lamps: small discs (the dial face's fan) in a row at the top. */
#define LAMPS 6
/* Dials sweep 270 degrees, from bottom left clockwise to bottom right. */
#define SWEEP_START (1.25 * M_PI)
#define SWEEP	    (1.5 * M_PI)

/* Most --switch-rate options. */
#define MAX_SWITCHES 8

/* --switch-rate K:HZ: from release K on, HZ frames per second. */
struct rate_switch {
	unsigned long frame, period_us;
};

struct options {
	unsigned long period_us, deadline_us, frames, seconds, width, height;
	bool deadline_given; /* --deadline-us: it stays through rate switches */
	struct rate_switch switches[MAX_SWITCHES];
	unsigned n_switches;
	unsigned long progress_s; /* a progress line every that many seconds; 0: none */
	bool period_given;	  /* --period-us or --rate was given */
	const char *kms;	  /* --kms CARD: draw on its display, not into a pbuffer */
	const char *json, *name;
	bool hud; /* --scene hud: the head-up display's scene */
};

struct gl {
	struct gles_target t;
	GLuint program, vbo;
	GLint rot, scale, offset, color;
};

/* A draw of vertices [first, first + count) at one placement. */
struct piece {
	GLint first;
	GLsizei count;
	float angle, sx, sy, ox, oy;
	const float *rgba;
};

static int fail(const char *what)
{
	return gles_fail("cluster-client", what);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sleeps until @when (CLOCK_MONOTONIC ns); nonzero if a stop was asked. */
static int sleep_until(int64_t when)
{
	struct timespec ts = {.tv_sec = when / 1000000000, .tv_nsec = when % 1000000000};

	while (!gles_stop_requested()) {
		int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (r == 0)
			return 0;
		if (r != EINTR)
			return -1;
	}
	return 1;
}

static int egl_up(struct gl *g, struct options *o)
{
	const char *what = gles_target_open_either(&g->t, o->kms, &o->width, &o->height);

	return what ? fail(what) : 0;
}

static int program_up(struct gl *g)
{
	static const char vs[] =
	    "attribute vec2 pos;\n"
	    "uniform vec2 rot;\n" /* cos, sin of the rotation */
	    "uniform vec2 scale;\n"
	    "uniform vec2 offset;\n"
	    "void main() {\n"
	    "  vec2 r = vec2(rot.x * pos.x - rot.y * pos.y, rot.y * pos.x + rot.x * "
	    "pos.y);\n"
	    "  gl_Position = vec4(offset + scale * r, 0.0, 1.0);\n"
	    "}\n";
	static const char fs[] = "precision mediump float;\n"
				 "uniform vec4 color;\n"
				 "void main() { gl_FragColor = color; }\n";
	const char *what = NULL;

	g->program = gles_program(vs, fs, "pos", &what);
	if (!g->program)
		return fail(what);
	glUseProgram(g->program);
	g->rot = glGetUniformLocation(g->program, "rot");
	g->scale = glGetUniformLocation(g->program, "scale");
	g->offset = glGetUniformLocation(g->program, "offset");
	g->color = glGetUniformLocation(g->program, "color");
	return 0;
}

static void put(GLfloat *v, int i, double x, double y)
{
	v[2 * i] = (GLfloat)x;
	v[2 * i + 1] = (GLfloat)y;
}

/*
 * A unit dial (a disc fan and thin tick marks along the sweep), a needle
 * pointing along +x (rotated by the shader) and the unit square for bars.
 */
static void build_geometry(GLfloat *v)
{
	static const double bar[6][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 0}, {1, 1}, {0, 1}};

	for (int i = 0; i < FACE_SEGMENTS; i++) {
		double a0 = 2 * M_PI * i / FACE_SEGMENTS, a1 = 2 * M_PI * (i + 1) / FACE_SEGMENTS;

		put(v, FACE_FIRST + 3 * i, 0, 0);
		put(v, FACE_FIRST + 3 * i + 1, cos(a0), sin(a0));
		put(v, FACE_FIRST + 3 * i + 2, cos(a1), sin(a1));
	}
	for (int i = 0; i < TICKS; i++) {
		double a = SWEEP_START - SWEEP * i / (TICKS - 1), c = cos(a), s = sin(a);

		put(v, TICKS_FIRST + 3 * i, 0.8 * c - 0.03 * s, 0.8 * s + 0.03 * c);
		put(v, TICKS_FIRST + 3 * i + 1, 0.8 * c + 0.03 * s, 0.8 * s - 0.03 * c);
		put(v, TICKS_FIRST + 3 * i + 2, 0.95 * c, 0.95 * s);
	}
	put(v, NEEDLE_FIRST, 0, 0.04);
	put(v, NEEDLE_FIRST + 1, 0, -0.04);
	put(v, NEEDLE_FIRST + 2, 0.85, 0);
	for (int i = 0; i < 6; i++)
		put(v, BAR_FIRST + i, bar[i][0], bar[i][1]);
}

static int gl_up(struct gl *g, const struct options *o)
{
	GLfloat v[2 * VERTICES];

	if (program_up(g))
		return 1;
	build_geometry(v);
	glGenBuffers(1, &g->vbo);
	glBindBuffer(GL_ARRAY_BUFFER, g->vbo);
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)sizeof(v), v, GL_STATIC_DRAW);
	glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, NULL);
	glEnableVertexAttribArray(0);
	glViewport(0, 0, (GLsizei)o->width, (GLsizei)o->height);
	glClearColor(0.02f, 0.02f, 0.05f, 1.0f);
	glFinish();
	return glGetError() == GL_NO_ERROR ? 0 : fail("setting up");
}

static void draw(const struct gl *g, const struct piece *p)
{
	glUniform2f(g->rot, cosf(p->angle), sinf(p->angle));
	glUniform2f(g->scale, p->sx, p->sy);
	glUniform2f(g->offset, p->ox, p->oy);
	glUniform4fv(g->color, 1, p->rgba);
	glDrawArrays(GL_TRIANGLES, p->first, p->count);
}

/* A value in [0, 1] going up and down over @frames frames. */
static float wave(unsigned long k, unsigned long frames)
{
	float x = (float)(k % frames) / (float)frames;

	return x < 0.5f ? 2 * x : 2 - 2 * x;
}

static void draw_dial(const struct gl *g, float cx, float aspect, float value)
{
	static const float face_rgba[4] = {0.15f, 0.15f, 0.2f, 1};
	static const float tick_rgba[4] = {0.9f, 0.9f, 0.9f, 1};
	static const float needle_rgba[4] = {0.95f, 0.2f, 0.1f, 1};
	struct piece face = {FACE_FIRST, 3 * FACE_SEGMENTS, 0, 0.45f * aspect, 0.45f, cx,
			     0.15f,	 face_rgba};
	struct piece ticks = face, needle = face;

	ticks.first = TICKS_FIRST;
	ticks.count = 3 * TICKS;
	ticks.rgba = tick_rgba;
	needle.first = NEEDLE_FIRST;
	needle.count = 3;
	needle.angle = (float)(SWEEP_START - SWEEP * value);
	needle.rgba = needle_rgba;
	draw(g, &face);
	draw(g, &ticks);
	draw(g, &needle);
}

static void draw_bar(const struct gl *g, float oy, float value, const float *rgba)
{
	struct piece bar = {BAR_FIRST, 6, 0, 1.6f * value, 0.08f, -0.8f, oy, rgba};

	draw(g, &bar);
}

/*
 * The warning lamps of frame @k: each lit or dim (the same draws either
 * way), the turn indicators blinking at 1.5 Hz at 60 Hz, the others
 * switching now and then.
 */
static void draw_lamps(const struct gl *g, float aspect, unsigned long k)
{
	static const float lit[LAMPS][4] = {{0.1f, 0.9f, 0.2f, 1},   {0.95f, 0.6f, 0.05f, 1},
					    {0.9f, 0.1f, 0.1f, 1},   {0.2f, 0.4f, 1.0f, 1},
					    {0.95f, 0.6f, 0.05f, 1}, {0.1f, 0.9f, 0.2f, 1}};
	/* Lamp i is lit in frames [on, on + len) of every cycle frames. */
	static const unsigned long cycle[LAMPS] = {40, 600, 900, 300, 700, 40};
	static const unsigned long on[LAMPS] = {0, 100, 500, 0, 300, 20};
	static const unsigned long len[LAMPS] = {20, 200, 120, 150, 250, 20};

	for (int i = 0; i < LAMPS; i++) {
		float dim[4] = {lit[i][0] * 0.2f, lit[i][1] * 0.2f, lit[i][2] * 0.2f, 1};
		unsigned long t = k % cycle[i];
		struct piece lamp = {.first = FACE_FIRST,
				     .count = 3 * FACE_SEGMENTS,
				     .sx = 0.05f * aspect,
				     .sy = 0.05f,
				     .ox = -0.75f + 0.3f * (float)i,
				     .oy = 0.82f};

		lamp.rgba = t >= on[i] && t < on[i] + len[i] ? lit[i] : dim;
		draw(g, &lamp);
	}
}

/* Frame @k of the scene. */
static void draw_scene(const struct gl *g, const struct options *o, unsigned long k)
{
	float aspect = (float)o->height / (float)o->width;

	static const float bar1_rgba[4] = {0.2f, 0.8f, 0.9f, 1};
	static const float bar2_rgba[4] = {0.2f, 0.5f, 0.9f, 1};

	glClear(GL_COLOR_BUFFER_BIT);
	draw_dial(g, -0.45f, aspect, wave(k, 240));
	draw_dial(g, 0.45f, aspect, wave(k + 100, 360));
	draw_bar(g, -0.7f, wave(k, 300), bar1_rgba);
	draw_bar(g, -0.88f, wave(k + 50, 500), bar2_rgba);
	draw_lamps(g, aspect, k);
}

/*
 * A seven-segment digit @d with its lower left corner at (@x, @y), @w wide
 * and 2 @w high in clip space (times @aspect across): all seven segments
 * drawn every frame, lit or dim, so that every frame costs the same.
 */
static void draw_digit(const struct gl *g, float x, float y, float w, float aspect, unsigned d)
{
	/* Segments a..g (top, top right, bottom right, bottom, bottom left, top left, middle). */
	static const unsigned char lit_of[10] = {0x3f, 0x06, 0x5b, 0x4f, 0x66,
						 0x6d, 0x7d, 0x07, 0x7f, 0x6f};
	static const float seg[7][4] = {/* x, y, width, height, in digit widths */
					{0, 1.9f, 1, 0.1f}, {0.9f, 1, 0.1f, 1}, {0.9f, 0, 0.1f, 1},
					{0, 0, 1, 0.1f},    {0, 0, 0.1f, 1},	{0, 1, 0.1f, 1},
					{0, 0.95f, 1, 0.1f}};
	static const float on_rgba[4] = {0.3f, 1.0f, 0.5f, 1},
			   off_rgba[4] = {0.05f, 0.15f, 0.08f, 1};

	for (unsigned i = 0; i < 7; i++) {
		struct piece p = {BAR_FIRST,
				  6,
				  0,
				  seg[i][2] * w * aspect,
				  seg[i][3] * w,
				  x + seg[i][0] * w * aspect,
				  y + seg[i][1] * w,
				  lit_of[d % 10] & (1u << i) ? on_rgba : off_rgba};

		draw(g, &p);
	}
}

/*
 * Frame @k of the head-up display's scene (--scene hud): the speed in
 * three seven-segment digits, a turn arrow that sweeps, and two lane
 * marks; a few dozen triangles, lighter than the cluster's.
 */
static void draw_hud(const struct gl *g, const struct options *o, unsigned long k)
{
	static const float arrow_rgba[4] = {0.3f, 0.8f, 1.0f, 1},
			   lane_rgba[4] = {0.9f, 0.9f, 0.9f, 1};
	float aspect = (float)o->height / (float)o->width;
	unsigned speed = 40 + (unsigned)(90 * wave(k, 600));
	struct piece arrow = {
	    NEEDLE_FIRST,  3,	      (float)(M_PI / 2 + 0.8 * (wave(k, 120) - 0.5)),
	    0.5f * aspect, 0.5f,      0.45f,
	    -0.4f,	   arrow_rgba};
	struct piece lane = {BAR_FIRST, 6, 0.3f, 0.03f, 0.5f, -0.9f, -0.9f, lane_rgba};

	glClear(GL_COLOR_BUFFER_BIT);
	for (unsigned i = 0; i < 3; i++)
		draw_digit(g, -0.75f + 0.35f * (float)i, -0.4f, 0.4f, aspect,
			   i == 0   ? speed / 100
			   : i == 1 ? speed / 10
				    : speed);
	draw(g, &arrow);
	draw(g, &lane);
	lane.angle = -0.3f;
	lane.ox = 0.9f;
	draw(g, &lane);
}

/* Frame @k of the scene --scene chose. */
static void frame(const struct gl *g, const struct options *o, unsigned long k)
{
	if (o->hud)
		draw_hud(g, o, k);
	else
		draw_scene(g, o, k);
}

/* The key=value part of the GM-CLUSTER progress and summary lines. */
static void print_counts(const struct frame_summary *s)
{
	printf("frames=%lu misses=%lu skipped=%lu p50_us=%.0f p99_us=%.0f max_us=%.0f", s->frames,
	       s->misses, s->skipped, s->p50_us, s->p99_us, s->max_us);
}

/*
 * Before frame @k: the --switch-rate options from *@next on whose frame
 * was reached take effect, the last of them from @k on (its deadline the
 * new period, unless --deadline-us was given). 0, or -1 on a failure.
 */
static int switch_rate(const struct options *o, struct frame_stats *fs, unsigned long k,
		       unsigned *next)
{
	const struct rate_switch *w = NULL;

	while (*next < o->n_switches && o->switches[*next].frame <= k)
		w = &o->switches[(*next)++];
	if (!w)
		return 0;
	if (frame_stats_set_period(fs, k, (int64_t)w->period_us * 1000,
				   (int64_t)(o->deadline_given ? o->deadline_us : w->period_us) *
				       1000))
		return -1;
	printf("GM-CLUSTER rate frame=%lu period_us=%lu release_ns=%lld\n", k, w->period_us,
	       (long long)frame_stats_release(fs, k));
	fflush(stdout);
	return 0;
}

/*
 * Draws and times the frames of @fs's run, printing progress every
 * --progress-s seconds. *@fs is made here, after the untimed first frame
 * (the caller destroys it). Returns 0 when the run ends (or a stop was
 * asked), 1 on a failure.
 */
static int run(const struct gl *g, const struct options *o, struct frame_stats **fs)
{
	const int64_t period = (int64_t)o->period_us * 1000,
		      progress_every = (int64_t)o->progress_s * 1000000000;
	int64_t progress, window_max = 0; /* the longest latency since the last progress line */
	long k = 0;
	unsigned next_switch = 0;
	const char *what;

	frame(g, o, 0);
	glFinish();
	what = gles_target_present(&g->t);
	if (what)
		return fail(what);
	*fs = frame_stats_create(now_ns(), period, (int64_t)o->deadline_us * 1000, o->frames);
	if (!*fs)
		return fail("allocating the frame record");
	progress = frame_stats_release(*fs, 0) + progress_every;
	while ((unsigned long)k < o->frames) {
		int64_t done, latency;
		int r;

		if (switch_rate(o, *fs, (unsigned long)k, &next_switch))
			return fail("switching the rate");
		r = sleep_until(frame_stats_release(*fs, (unsigned long)k));

		if (r)
			return r < 0 ? fail("clock_nanosleep") : 0;
		frame(g, o, (unsigned long)k);
		glFinish();
		done = now_ns();
		latency = done - frame_stats_release(*fs, (unsigned long)k);
		window_max = latency > window_max ? latency : window_max;
		if (glGetError() != GL_NO_ERROR)
			return fail("drawing a frame");
		what = gles_target_present(&g->t);
		if (what)
			return fail(what);
		k = frame_stats_complete(*fs, (unsigned long)k, done);
		if (k < 0)
			return fail("recording a frame");
		if (progress_every && done >= progress) {
			struct frame_summary sum;

			frame_stats_summary(*fs, &sum);
			printf("GM-CLUSTER progress ");
			print_counts(&sum);
			printf(" window_max_us=%.0f\n", (double)window_max / 1000.0);
			fflush(stdout);
			window_max = 0;
			while (progress <= done)
				progress += progress_every;
		}
	}
	return 0;
}

static int report(const struct options *o, struct frame_stats *fs)
{
	struct frame_summary s = {0};
	FILE *f;

	if (fs)
		frame_stats_summary(fs, &s);
	printf("GM-CLUSTER ");
	print_counts(&s);
	printf(" deadline_us=%lu\n", o->deadline_us);
	printf("%s: %lu frames (%lu skipped), %lu missed the %lu us deadline; "
	       "latency p50 %.1f "
	       "us, p99 %.1f us, max %.1f us\n",
	       o->name, s.frames, s.skipped, s.misses, o->deadline_us, s.p50_us, s.p99_us,
	       s.max_us);
	fflush(stdout);
	if (!o->json)
		return 0;
	f = fopen(o->json, "w");
	if (!f) {
		fprintf(stderr, "cluster-client: %s: %s\n", o->json, strerror(errno));
		return 1;
	}
	fprintf(f,
		"{\"frames\": %lu, \"misses\": %lu, \"skipped\": %lu, "
		"\"p50_latency_us\": %.1f, "
		"\"p99_latency_us\": %.1f, \"max_latency_us\": %.1f, \"period_us\": %lu, "
		"\"deadline_us\": %lu}\n",
		s.frames, s.misses, s.skipped, s.p50_us, s.p99_us, s.max_us, o->period_us,
		o->deadline_us);
	if (fclose(f) != 0) {
		fprintf(stderr, "cluster-client: writing %s: %s\n", o->json, strerror(errno));
		return 1;
	}
	return 0;
}

static void usage(FILE *to)
{
	fprintf(to,
		"usage: cluster-client [--period-us N | --rate HZ] [--deadline-us N]\n"
		"                      [--frames N | --seconds S] [--size WxH]\n"
		"                      [--kms CARD] [--progress-s P] [--json FILE]\n"
		"                      [--name NAME] [--switch-rate K:HZ ...]\n"
		"                      [--scene cluster|hud]\n"
		"Draws an instrument cluster into a WxH pbuffer (default %dx%d) once\n"
		"per period (default %d us, %d..%d; --rate HZ: 1..%d per second),\n"
		"finishing each frame, and counts the frames that miss the deadline\n"
		"(default: the period, 1..%d us) after their release, by this\n"
		"machine's CLOCK_MONOTONIC. Runs N frames (default %d, at most %d)\n"
		"or S seconds (1..%d). Prints a GM-CLUSTER start line, a progress\n"
		"line every P seconds (1..%d; default none) and a summary line, all\n"
		"key=value, and the summary again in words, labelled NAME. --json\n"
		"writes the results to FILE. --kms CARD (e.g. /dev/dri/card0) draws\n"
		"on that card's display at its preferred mode's size instead, and\n"
		"shows each frame with a page flip once it is timed. --switch-rate K:HZ\n"
		"(up to %d, K rising) runs at HZ from release K on, a frame period after\n"
		"release K - 1 at the old rate, each frame due a period after its release\n"
		"unless --deadline-us was given, and prints GM-CLUSTER rate frame=K\n"
		"period_us=P release_ns=T (CLOCK_MONOTONIC) when it switches.\n"
		"--scene hud draws a head-up display instead (a speed readout, a turn\n"
		"arrow, lane marks: lighter than the cluster's dials).\n",
		DEFAULT_W, DEFAULT_H, DEFAULT_PERIOD_US, MIN_PERIOD_US, MAX_PERIOD_US, MAX_RATE_HZ,
		MAX_DEADLINE_US, DEFAULT_FRAMES, MAX_FRAMES, MAX_SECONDS, MAX_SECONDS,
		MAX_SWITCHES);
}

/* --switch-rate K:HZ, after those given before it (K larger than theirs). 0, or -1. */
static int parse_switch(struct options *o, const char *val)
{
	char frame[24];
	const char *colon = strchr(val, ':');
	struct rate_switch w;
	unsigned long hz;

	if (!colon || (size_t)(colon - val) >= sizeof(frame)) {
		fprintf(stderr, "cluster-client: --switch-rate: '%s' is not FRAME:HZ\n", val);
		return -1;
	}
	memcpy(frame, val, (size_t)(colon - val));
	frame[colon - val] = '\0';
	if (client_args_ulong(PROG, "--switch-rate", frame, 1, MAX_FRAMES, &w.frame) ||
	    client_args_ulong(PROG, "--switch-rate", colon + 1, 1, MAX_RATE_HZ, &hz))
		return -1;
	if (o->n_switches == MAX_SWITCHES ||
	    (o->n_switches && o->switches[o->n_switches - 1].frame >= w.frame)) {
		fprintf(stderr,
			"cluster-client: --switch-rate: at most %d, each at a later frame than the "
			"one before\n",
			MAX_SWITCHES);
		return -1;
	}
	w.period_us = (1000000 + hz / 2) / hz;
	o->switches[o->n_switches++] = w;
	return 0;
}

/* One option and its value (client_args_option_fn); 0, or non-zero on a bad one. */
static int parse_option(const char *opt, const char *val, void *data)
{
	struct options *o = data;

	if ((strcmp(opt, "--period-us") == 0 || strcmp(opt, "--rate") == 0) && o->period_given) {
		fprintf(stderr, "cluster-client: give --period-us or --rate, once\n");
		return -1;
	}
	if (strcmp(opt, "--period-us") == 0) {
		o->period_given = true;
		return client_args_ulong(PROG, opt, val, MIN_PERIOD_US, MAX_PERIOD_US,
					 &o->period_us);
	}
	if (strcmp(opt, "--rate") == 0) {
		unsigned long hz;

		o->period_given = true;
		if (client_args_ulong(PROG, opt, val, 1, MAX_RATE_HZ, &hz))
			return -1;
		o->period_us = (1000000 + hz / 2) / hz;
		return 0;
	}
	if (strcmp(opt, "--scene") == 0) {
		if (strcmp(val, "cluster") && strcmp(val, "hud")) {
			fprintf(stderr, "cluster-client: --scene: '%s' is not cluster or hud\n",
				val);
			return -1;
		}
		o->hud = strcmp(val, "hud") == 0;
		return 0;
	}
	if (strcmp(opt, "--switch-rate") == 0)
		return parse_switch(o, val);
	if (strcmp(opt, "--progress-s") == 0)
		return client_args_ulong(PROG, opt, val, 1, MAX_SECONDS, &o->progress_s);
	if (strcmp(opt, "--deadline-us") == 0) {
		o->deadline_given = true;
		return client_args_ulong(PROG, opt, val, 1, MAX_DEADLINE_US, &o->deadline_us);
	}
	if (strcmp(opt, "--frames") == 0)
		return client_args_ulong(PROG, opt, val, 1, MAX_FRAMES, &o->frames);
	if (strcmp(opt, "--seconds") == 0)
		return client_args_ulong(PROG, opt, val, 1, MAX_SECONDS, &o->seconds);
	if (strcmp(opt, "--size") == 0)
		return client_args_size(PROG, val, MIN_SIZE, MAX_SIZE, &o->width, &o->height);
	if (strcmp(opt, "--json") == 0)
		return client_args_string(PROG, opt, val, &o->json);
	if (strcmp(opt, "--kms") == 0)
		return client_args_string(PROG, opt, val, &o->kms);
	if (strcmp(opt, "--name") == 0)
		return client_args_string(PROG, opt, val, &o->name);
	usage(stderr);
	return -1;
}

/* 0, 1 after --help, or < 0 on a bad command line. */
static int parse_args(int argc, char **argv, struct options *o)
{
	unsigned long frames = 0;
	int r;

	*o = (struct options){.period_us = DEFAULT_PERIOD_US,
			      .width = DEFAULT_W,
			      .height = DEFAULT_H,
			      .name = "cluster-client"};
	r = client_args_parse(argc, argv, parse_option, usage, o);
	if (r)
		return r;
	if (o->frames && o->seconds) {
		fprintf(stderr, "cluster-client: give --frames or --seconds, not both\n");
		return -1;
	}
	if (!o->deadline_us)
		o->deadline_us = o->period_us;
	if (o->seconds)
		frames = (unsigned long)(((uint64_t)o->seconds * 1000000 + o->period_us / 2) /
					 o->period_us);
	if (frames > MAX_FRAMES) {
		fprintf(stderr, "cluster-client: --seconds: more than %d periods\n", MAX_FRAMES);
		return -1;
	}
	o->frames = frames ? frames : o->frames ? o->frames : DEFAULT_FRAMES;
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct gl g;
	struct frame_stats *fs = NULL;
	sigset_t set;
	int r = parse_args(argc, argv, &o);

	if (r)
		return r > 0 ? 0 : 2;
	memset(&g, 0, sizeof(g));
	gles_catch_stop(&set);
	if (egl_up(&g, &o) || gl_up(&g, &o))
		return 1;
	printf("GM-CLUSTER start size=%lux%lu period_us=%lu deadline_us=%lu frames=%lu "
	       "pace=timer\n",
	       o.width, o.height, o.period_us, o.deadline_us, o.frames);
	fflush(stdout);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	r = run(&g, &o, &fs);
	r |= report(&o, fs);
	frame_stats_destroy(fs);
	gles_target_close(&g.t);
	return r;
}
