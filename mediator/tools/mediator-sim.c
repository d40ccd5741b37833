// SPDX-License-Identifier: MIT
/*
 * mediator-sim: replays per-group traces (mediatorctl trace, the format of
 * doc/trace-format.md) of several domains against a model of one non-preemptive GPU,
 * through the scheduler mediatord runs (scheduler.h: one implementation,
 * two drivers).
 *
 *   mediator-sim [--model trace|oracle] [--check] CONFIG TRACE...
 *
 * CONFIG is a mediatord config: its policy, max_inflight, max_defer_us,
 * oversize and domains (matched to the traces' "domain" by name; groups of
 * other domains are ignored and counted). Each (domain, client) of the
 * traces is one stream of groups in "seq" order. Group k of a stream asks
 * for a grant at its recorded time ("request_ns", else "dispatch_ns"),
 * but never before the stream's previous group was granted (a worker has
 * one group waiting at a time): a periodic client keeps its releases, a
 * flooding one is never faster than it was when recorded. The
 * GPU runs one group at a time, each for its recorded "measured_ns", in
 * the order the scheduler grants them. Predictions and bounds come from
 * the trace ("trace", what the live model said, and whether its context
 * was young) or are the measured times ("oracle", a perfect predictor,
 * for comparison). A group whose "cmds" are only state, shader and query
 * commands produces no output (libpredict's rule, predict_cmd.h), as
 * mediatord is told live.
 *
 * Prints per domain: groups, frames and deadline misses (safety), GPU
 * utilisation, groups per second, throttled and refused groups, and the
 * mean wait for a grant. Deterministic: the same input gives the same
 * output. With --check, the exit status says whether the configuration is
 * schedulable for these workloads: 0 no safety deadline missed and no group
 * refused, 1 otherwise; 2 usage or input errors.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "predict.h"
#include "scheduler/sched_config.h"

struct group {
	uint64_t seq, arrival, dispatch, measured, predicted, bound;
	/*
	 * enum sched_group_flag: SCHED_YOUNG for "young": true (its context's
	 * bound was not learned yet), SCHED_NO_OUTPUT when "cmds" has only
	 * state, shader and query commands.
	 */
	unsigned flags;
};

struct stream {
	int domain;
	uint32_t client;
	struct group *g;
	size_t n, cap, next; /* next: first group not yet submitted */
	bool waiting;	     /* a group of it is submitted and not granted */
	uint64_t ready;	     /* when group next may ask */
};

struct sim {
	struct mediator_config cfg;
	struct stream *s;
	size_t n_streams;
	uint64_t ignored;
	bool oracle;
};

struct running {
	uint64_t id, end, measured;
};

struct domain_out {
	uint64_t groups, busy_ns, wait_ns, refused;
};

/* The help, shaped like a man page: mediator-sim(1) is made from it (doc/man/). */
static void help(FILE *f)
{
	fputs("NAME\n"
	      "    mediator-sim - replay GPU traces through mediatord's scheduler\n"
	      "\n"
	      "SYNOPSIS\n"
	      "    mediator-sim [--model trace|oracle] [--check] CONFIG TRACE...\n"
	      "    mediator-sim --help\n"
	      "\n"
	      "DESCRIPTION\n"
	      "    mediator-sim replays per-group traces of several domains (written by\n"
	      "    mediatorctl trace start) against a model of one non-preemptive GPU,\n"
	      "    through the scheduler mediatord runs, to ask what a configuration\n"
	      "    would do with these workloads before it goes into a car.\n"
	      "\n"
	      "    CONFIG is a mediatord configuration (mediatord.conf(5)): its policy,\n"
	      "    max_inflight, max_defer_us, oversize and domains, matched to the\n"
	      "    traces' domains by name (groups of other domains are ignored and\n"
	      "    counted). Each domain and client of the traces is one stream of\n"
	      "    groups. A group asks for the GPU at its recorded time, but never\n"
	      "    before its stream's previous group was granted; the GPU runs one\n"
	      "    group at a time for its recorded measured time.\n"
	      "\n"
	      "    It prints per domain: groups, frames and deadline misses (safety\n"
	      "    domains), GPU utilisation, groups per second, throttled and refused\n"
	      "    groups, and the mean wait for a grant. The same input gives the same\n"
	      "    output.\n"
	      "\n"
	      "OPTIONS\n"
	      "    --model trace|oracle\n"
	      "        Where predictions and bounds come from: the trace (what the live\n"
	      "        model said; the default), or the measured times (a perfect\n"
	      "        predictor, for comparison).\n"
	      "    --check\n"
	      "        Let the exit status say whether the configuration is schedulable\n"
	      "        for these workloads.\n"
	      "    -h, --help\n"
	      "        Print this help and exit.\n"
	      "\n"
	      "EXIT STATUS\n"
	      "    0   done; with --check: no safety deadline missed, no group refused\n"
	      "    1   with --check: a safety deadline missed or a group refused\n"
	      "    2   usage or input error\n"
	      "\n"
	      "SEE ALSO\n"
	      "    mediatord(8), mediatord.conf(5), mediatorctl(1)\n",
	      f);
}

static int usage(void)
{
	fputs("usage: mediator-sim [--model trace|oracle] [--check] CONFIG TRACE...\n"
	      "       mediator-sim --help\n",
	      stderr);
	return 2;
}

static struct stream *stream_of(struct sim *sim, int domain, uint32_t client)
{
	struct stream *s;

	for (size_t i = 0; i < sim->n_streams; i++) {
		if (sim->s[i].domain == domain && sim->s[i].client == client)
			return &sim->s[i];
	}
	s = realloc(sim->s, (sim->n_streams + 1) * sizeof(*s));
	if (!s)
		return NULL;
	sim->s = s;
	s = &sim->s[sim->n_streams++];
	memset(s, 0, sizeof(*s));
	s->domain = domain;
	s->client = client;
	return s;
}

static bool get_u64(struct json_object *o, const char *key, uint64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return false;
	*out = (uint64_t)json_object_get_int64(v);
	return true;
}

/*
 * Whether a group record's "cmds" (if any) names only classes of commands
 * without output (predict_cmd_class_has_output(), the worker's rule).
 */
static bool without_output(struct json_object *o)
{
	struct json_object *cmds;

	if (!json_object_object_get_ex(o, "cmds", &cmds) ||
	    !json_object_is_type(cmds, json_type_object))
		return false;
	json_object_object_foreach(cmds, name, n)
	{
		int cls = predict_cmd_class_find(name);

		(void)n;
		if (cls < 0 || predict_cmd_class_has_output((enum predict_cmd_class)cls))
			return false;
	}
	return true;
}

static int domain_index(const struct sim *sim, const char *name)
{
	for (size_t i = 0; i < sim->cfg.n_domains; i++) {
		if (!strcmp(sim->cfg.domains[i].name, name))
			return (int)i;
	}
	return -1;
}

/* Reads one trace file. Returns 0 or -1 after printing what is wrong. */
static int load_trace(struct sim *sim, const char *path)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	int r = 0;

	if (!f) {
		fprintf(stderr, "mediator-sim: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		struct json_object *o = json_tokener_parse(line), *jd, *jy;
		struct group g = {0};
		uint64_t client;
		struct stream *s;
		int d;

		lineno++;
		/* Frame records (trace.h) describe what happened; groups are replayed. */
		if (o && json_object_object_get_ex(o, "type", &jd)) {
			json_object_put(o);
			continue;
		}
		if (!o || !json_object_object_get_ex(o, "domain", &jd) ||
		    !json_object_is_type(jd, json_type_string) || !get_u64(o, "client", &client) ||
		    client > UINT32_MAX || !get_u64(o, "seq", &g.seq) ||
		    !get_u64(o, "dispatch_ns", &g.dispatch) ||
		    !get_u64(o, "measured_ns", &g.measured) ||
		    !get_u64(o, "predicted_ns", &g.predicted) ||
		    !get_u64(o, "bound_ns", &g.bound)) {
			fprintf(stderr,
				"mediator-sim: %s:%zu: not a group record of the trace format\n",
				path, lineno);
			json_object_put(o);
			r = -1;
			break;
		}
		if (!get_u64(o, "request_ns", &g.arrival) || g.arrival > g.dispatch)
			g.arrival = g.dispatch;
		if (json_object_object_get_ex(o, "young", &jy) &&
		    json_object_is_type(jy, json_type_boolean) && json_object_get_boolean(jy))
			g.flags |= SCHED_YOUNG;
		if (without_output(o))
			g.flags |= SCHED_NO_OUTPUT;
		d = domain_index(sim, json_object_get_string(jd));
		json_object_put(o);
		if (d < 0) {
			sim->ignored++;
			continue;
		}
		if (sim->oracle) { /* the bound is exact: nothing is young */
			g.predicted = g.bound = g.measured;
			g.flags &= ~(unsigned)SCHED_YOUNG;
		}
		if (g.bound < g.predicted)
			g.bound = g.predicted;
		s = stream_of(sim, d, (uint32_t)client);
		if (!s || (s->n == s->cap &&
			   !(s->g = realloc(s->g, (s->cap = s->cap ? 2 * s->cap : 1024) *
						      sizeof(*s->g))))) {
			fprintf(stderr, "mediator-sim: out of memory\n");
			r = -1;
			break;
		}
		s->g[s->n++] = g;
	}
	free(line);
	fclose(f);
	return r;
}

static int by_seq(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The request id of group @k of stream @i: unique, and gives both back. */
static uint64_t id_of(size_t i, size_t k)
{
	return ((uint64_t)i << 40) | (uint64_t)k;
}

/* The earliest time something happens: an arrival, a completion, a scheduler event. */
static uint64_t next_time(const struct sim *sim, struct sched *sched, const struct running *run,
			  size_t n_run, uint64_t now)
{
	uint64_t t = sched_next_event(sched, now);

	for (size_t i = 0; i < sim->n_streams; i++) {
		const struct stream *s = &sim->s[i];

		if (!s->waiting && s->next < s->n && s->ready < t)
			t = s->ready;
	}
	for (size_t i = 0; i < n_run; i++)
		t = run[i].end < t ? run[i].end : t;
	return t > now ? t : now;
}

static int simulate(struct sim *sim, bool check)
{
	struct domain_out out[CONFIG_MAX_DOMAINS] = {{0}};
	struct running *run = calloc(SCHED_MAX_PENDING, sizeof(*run));
	uint64_t origin = UINT64_MAX, now = 0, gpu_free = 0, end_all = 0;
	struct sched *sched;
	size_t n_run = 0, left = 0;
	char err[256];
	bool ok = true;

	sched = sched_create_from_config(&sim->cfg, 0, err, sizeof(err));
	if (!sched || !run) {
		fprintf(stderr, "mediator-sim: %s\n", sched ? "out of memory" : err);
		sched_destroy(sched);
		free(run);
		return 2;
	}
	for (size_t i = 0; i < sim->n_streams; i++) {
		struct stream *s = &sim->s[i];

		qsort(s->g, s->n, sizeof(*s->g), by_seq);
		origin = s->g[0].arrival < origin ? s->g[0].arrival : origin;
		left += s->n;
	}
	for (size_t i = 0; i < sim->n_streams; i++)
		sim->s[i].ready = sim->s[i].g[0].arrival - origin;

	while (left) {
		struct sched_decision dec[64];
		size_t n;

		now = next_time(sim, sched, run, n_run, now);
		if (now == UINT64_MAX) {
			fprintf(stderr, "mediator-sim: %zu groups can never be granted\n", left);
			ok = false;
			break;
		}
		for (size_t i = 0; i < n_run;) { /* completions */
			if (run[i].end > now) {
				i++;
				continue;
			}
			sched_complete(sched, run[i].id, run[i].measured, run[i].end);
			run[i] = run[--n_run];
			left--;
		}
		for (size_t i = 0; i < sim->n_streams; i++) { /* arrivals */
			struct stream *s = &sim->s[i];
			const struct group *g = &s->g[s->next];

			if (s->waiting || s->next >= s->n || s->ready > now)
				continue;
			if (sched_submit(sched, id_of(i, s->next), s->domain, g->predicted,
					 g->bound, g->flags, now) < 0) {
				fprintf(stderr, "mediator-sim: too many groups waiting\n");
				return 2;
			}
			s->waiting = true;
		}
		do {
			n = sched_poll(sched, now, dec, 64);
			for (size_t k = 0; k < n; k++) {
				struct stream *s = &sim->s[dec[k].id >> 40];
				const struct group *g = &s->g[dec[k].id & ((1ull << 40) - 1)];
				struct domain_out *o = &out[s->domain];
				uint64_t start = now > gpu_free ? now : gpu_free;

				o->wait_ns += now - s->ready;
				s->waiting = false;
				s->next++;
				if (s->next < s->n) {
					uint64_t at = s->g[s->next].arrival - origin;

					s->ready = now > at ? now : at;
				}
				if (dec[k].verdict != SCHED_GRANTED) {
					o->refused++;
					left--;
					continue;
				}
				gpu_free = start + g->measured;
				end_all = gpu_free > end_all ? gpu_free : end_all;
				run[n_run++] = (struct running){dec[k].id, gpu_free, g->measured};
				o->groups++;
				o->busy_ns += g->measured;
			}
		} while (n == 64);
	}
	sched_advance(sched, end_all + SCHED_FRAME_GAP_NS + 1);
	printf("policy %s, max_inflight %u, %zu streams, %.3f s simulated%s\n",
	       config_policy_name(sim->cfg.policy), sim->cfg.max_inflight, sim->n_streams,
	       (double)end_all / 1e9, sim->oracle ? ", oracle predictions" : "");
	if (sim->ignored)
		printf("ignored %" PRIu64 " groups of domains not in the config\n", sim->ignored);
	printf("%-16s %-7s %9s %7s %6s %7s %10s %9s %8s %11s\n", "domain", "class", "groups",
	       "frames", "misses", "util", "groups/s", "throttled", "refused", "mean_wait_us");
	for (size_t i = 0; i < sim->cfg.n_domains; i++) {
		struct sched_domain_stats st;
		const struct domain_out *o = &out[i];
		double secs = end_all ? (double)end_all / 1e9 : 1;

		sched_domain_stats(sched, (int)i, &st);
		printf("%-16s %-7s %9" PRIu64 " %7" PRIu64 " %6" PRIu64 " %6.1f%% %10.1f %9" PRIu64
		       " %8" PRIu64 " %11.1f\n",
		       sim->cfg.domains[i].name, config_class_name(sim->cfg.domains[i].class),
		       o->groups, st.frames, st.deadline_misses,
		       100.0 * (double)o->busy_ns / (secs * 1e9), (double)o->groups / secs,
		       st.throttled, o->refused,
		       o->groups ? (double)o->wait_ns / (double)o->groups / 1000 : 0.0);
		if ((sim->cfg.domains[i].class == DOMAIN_CLASS_SAFETY && st.deadline_misses) ||
		    o->refused)
			ok = false;
	}
	if (check)
		printf("schedulable: %s\n", ok ? "yes" : "no");
	sched_destroy(sched);
	free(run);
	return check && !ok ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct sim sim = {0};
	bool check = false;
	char err[512];
	int i = 1, r;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			help(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--check")) {
			check = true;
		} else if (!strcmp(argv[i], "--model") && i + 1 < argc) {
			i++;
			if (!strcmp(argv[i], "oracle"))
				sim.oracle = true;
			else if (strcmp(argv[i], "trace"))
				return usage();
		} else {
			return usage();
		}
	}
	if (argc - i < 2)
		return usage();
	if (config_load(&sim.cfg, argv[i], err, sizeof(err)) < 0) {
		fprintf(stderr, "mediator-sim: %s\n", err);
		return 2;
	}
	for (i++; i < argc; i++) {
		if (load_trace(&sim, argv[i]) < 0)
			return 2;
	}
	if (!sim.n_streams) {
		fprintf(stderr, "mediator-sim: no groups of the config's domains in the traces\n");
		return 2;
	}
	r = simulate(&sim, check);
	for (size_t k = 0; k < sim.n_streams; k++)
		free(sim.s[k].g);
	free(sim.s);
	return r;
}
