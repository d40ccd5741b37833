// SPDX-License-Identifier: MIT
/*
 * mediatord trace -> Trace Event JSON for Perfetto (see trace_export.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/trace_export.h"

/* Domains and contexts a trace may name: mediatord's limits, with room. */
#define EXPORT_MAX_DOMAINS  64
#define EXPORT_MAX_CONTEXTS 4096
/* Longest trace line read (a group record is a few hundred bytes). */
#define EXPORT_LINE_MAX 65536

/*
 * The frames track of a domain; its contexts' tracks are 2k and 2k+1 (k
 * from 1). A frame that starts before an earlier one on the track ended (a
 * frame late past its period) goes on the next frames track, "frames 2"
 * and on (FRAMES_LANE_TID), so that no two slices of a track overlap:
 * Perfetto nests or drops overlapping slices (issue 32: 484 of 2,151
 * frames). The last lane takes what the others cannot.
 */
#define FRAMES_TID	   1
#define FRAMES_LANES	   8
#define FRAMES_LANE_TID(l) ((l) ? 1000000 + (l) : FRAMES_TID)

struct context_track {
	int pid;
	int64_t client, ctx;
	int tid; /* the groups' track; tid + 1 its grant waits' */
};

struct exporter {
	FILE *out;
	bool first;
	char domains[EXPORT_MAX_DOMAINS][64];
	bool frames_named[EXPORT_MAX_DOMAINS][FRAMES_LANES];
	uint64_t frames_end[EXPORT_MAX_DOMAINS][FRAMES_LANES]; /* each lane's latest end */
	int n_domains;
	struct context_track contexts[EXPORT_MAX_CONTEXTS];
	int n_contexts;
	int next_tid[EXPORT_MAX_DOMAINS];
	uint64_t flow_id;
	struct trace_export_counts counts;
};

/* Writes one event (taking @ev). */
static void emit(struct exporter *x, struct json_object *ev)
{
	fputs(x->first ? "\n" : ",\n", x->out);
	x->first = false;
	fputs(json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN), x->out);
	json_object_put(ev);
}

static struct json_object *event(const char *ph, const char *name, int pid, int tid)
{
	struct json_object *ev = json_object_new_object();

	json_object_object_add(ev, "ph", json_object_new_string(ph));
	json_object_object_add(ev, "name", json_object_new_string(name));
	json_object_object_add(ev, "pid", json_object_new_int(pid));
	json_object_object_add(ev, "tid", json_object_new_int(tid));
	return ev;
}

/*
 * Microseconds, with the nanoseconds kept as three decimals, written as
 * such: a double of a monotonic clock's microseconds printed with 17
 * significant digits showed digits that were never measured.
 */
static struct json_object *usec(uint64_t ns)
{
	char text[32];

	snprintf(text, sizeof(text), "%llu.%03llu", (unsigned long long)(ns / 1000),
		 (unsigned long long)(ns % 1000));
	return json_object_new_double_s((double)ns / 1000.0, text);
}

/* A metadata event naming process @pid (@tid < 0) or thread @tid. */
static void name_track(struct exporter *x, int pid, int tid, const char *name)
{
	struct json_object *ev =
	    event("M", tid < 0 ? "process_name" : "thread_name", pid, tid < 0 ? 0 : tid);
	struct json_object *args = json_object_new_object();

	json_object_object_add(args, "name", json_object_new_string(name));
	json_object_object_add(ev, "args", args);
	emit(x, ev);
}

/* The process id of domain @name (from 1), named at its first use; 0 when too many. */
static int domain_pid(struct exporter *x, const char *name)
{
	char label[96];

	for (int i = 0; i < x->n_domains; i++)
		if (!strcmp(x->domains[i], name))
			return i + 1;
	if (x->n_domains == EXPORT_MAX_DOMAINS)
		return 0;
	snprintf(x->domains[x->n_domains], sizeof(x->domains[0]), "%s", name);
	x->next_tid[x->n_domains] = 2;
	snprintf(label, sizeof(label), "domain %s", name);
	name_track(x, x->n_domains + 1, -1, label);
	return ++x->n_domains;
}

/* The groups' track of (@pid, @client, @ctx), named with its grant track at first use. */
static const struct context_track *context_track(struct exporter *x, int pid, int64_t client,
						 int64_t ctx)
{
	struct context_track *t;
	char label[96];

	for (int i = 0; i < x->n_contexts; i++) {
		t = &x->contexts[i];
		if (t->pid == pid && t->client == client && t->ctx == ctx)
			return t;
	}
	if (x->n_contexts == EXPORT_MAX_CONTEXTS)
		return NULL;
	t = &x->contexts[x->n_contexts++];
	*t = (struct context_track){pid, client, ctx, x->next_tid[pid - 1]};
	x->next_tid[pid - 1] += 2;
	snprintf(label, sizeof(label), "client %" PRId64 " ctx %" PRId64, client, ctx);
	name_track(x, pid, t->tid, label);
	snprintf(label, sizeof(label), "client %" PRId64 " ctx %" PRId64 ": grant", client, ctx);
	name_track(x, pid, t->tid + 1, label);
	return t;
}

/* Member @key of @o as a non-negative integer into *@v; false when missing or not one. */
static bool get_u64(struct json_object *o, const char *key, uint64_t *v)
{
	struct json_object *m;

	if (!json_object_object_get_ex(o, key, &m) || !json_object_is_type(m, json_type_int))
		return false;
	if (json_object_get_int64(m) < 0)
		return false;
	*v = (uint64_t)json_object_get_int64(m);
	return true;
}

static const char *get_string(struct json_object *o, const char *key)
{
	struct json_object *m;

	if (!json_object_object_get_ex(o, key, &m) || !json_object_is_type(m, json_type_string))
		return NULL;
	return json_object_get_string(m);
}

/* Copies member @key of @from, if present, into @to. */
static void copy_member(struct json_object *from, struct json_object *to, const char *key)
{
	struct json_object *m;

	if (json_object_object_get_ex(from, key, &m))
		json_object_object_add(to, key, json_object_get(m));
}

static bool export_group(struct exporter *x, struct json_object *rec)
{
	const char *domain = get_string(rec, "domain");
	uint64_t client, ctx, seq, request, dispatch, start, end, measured, predicted, bound;
	const struct context_track *t;
	struct json_object *ev, *args, *piece;
	char name[64];
	int pid;

	if (!domain || !get_u64(rec, "client", &client) || !get_u64(rec, "ctx", &ctx) ||
	    !get_u64(rec, "seq", &seq) || !get_u64(rec, "dispatch_ns", &dispatch) ||
	    !get_u64(rec, "start_ns", &start) || !get_u64(rec, "end_ns", &end) ||
	    !get_u64(rec, "measured_ns", &measured) || !get_u64(rec, "predicted_ns", &predicted) ||
	    !get_u64(rec, "bound_ns", &bound) || end < start)
		return false;
	if (!get_u64(rec, "request_ns", &request) || request > dispatch)
		request = dispatch;
	if (!(pid = domain_pid(x, domain)) ||
	    !(t = context_track(x, pid, (int64_t)client, (int64_t)ctx)))
		return false;
	if (json_object_object_get_ex(rec, "piece", &piece) &&
	    json_object_is_type(piece, json_type_array) && json_object_array_length(piece) == 2)
		snprintf(name, sizeof(name), "group %" PRIu64 " piece %d/%d", seq,
			 json_object_get_int(json_object_array_get_idx(piece, 0)),
			 json_object_get_int(json_object_array_get_idx(piece, 1)));
	else
		snprintf(name, sizeof(name), "group %" PRIu64, seq);
	if (request < dispatch) {
		/* The wait for its grant, and a flow from it to the group. */
		ev = event("X", name, pid, t->tid + 1);
		json_object_object_add(ev, "cat", json_object_new_string("grant"));
		json_object_object_add(ev, "ts", usec(request));
		json_object_object_add(ev, "dur", usec(dispatch - request));
		emit(x, ev);
		ev = event("s", "grant", pid, t->tid + 1);
		json_object_object_add(ev, "cat", json_object_new_string("grant"));
		json_object_object_add(ev, "id", json_object_new_int64((int64_t)++x->flow_id));
		json_object_object_add(ev, "ts", usec(request));
		emit(x, ev);
		ev = event("f", "grant", pid, t->tid);
		json_object_object_add(ev, "cat", json_object_new_string("grant"));
		json_object_object_add(ev, "id", json_object_new_int64((int64_t)x->flow_id));
		json_object_object_add(ev, "bp", json_object_new_string("e"));
		json_object_object_add(ev, "ts", usec(start));
		emit(x, ev);
		x->counts.waits++;
	}
	ev = event("X", name, pid, t->tid);
	json_object_object_add(ev, "cat", json_object_new_string("gpu"));
	json_object_object_add(ev, "ts", usec(start));
	json_object_object_add(ev, "dur", usec(end - start));
	args = json_object_new_object();
	json_object_object_add(args, "measured_us", usec(measured));
	json_object_object_add(args, "predicted_us", usec(predicted));
	json_object_object_add(args, "bound_us", usec(bound));
	json_object_object_add(args, "grant_wait_us", usec(dispatch - request));
	copy_member(rec, args, "model");
	copy_member(rec, args, "young");
	copy_member(rec, args, "grant");
	copy_member(rec, args, "cmds");
	json_object_object_add(ev, "args", args);
	emit(x, ev);
	x->counts.groups++;
	return true;
}

/* An instant marker @name at @ns on the frames track of @pid. */
static void marker(struct exporter *x, int pid, const char *name, uint64_t ns)
{
	struct json_object *ev = event("i", name, pid, FRAMES_TID);

	json_object_object_add(ev, "cat", json_object_new_string("frame"));
	json_object_object_add(ev, "s", json_object_new_string("t"));
	json_object_object_add(ev, "ts", usec(ns));
	emit(x, ev);
}

static bool export_frame(struct exporter *x, struct json_object *rec)
{
	const char *domain = get_string(rec, "domain");
	uint64_t release, deadline, end, bound;
	struct json_object *ev, *args, *m, *su;
	const char *name;
	bool missed, unfinished, startup;
	int pid, lane;

	if (!domain || !get_u64(rec, "release_ns", &release) ||
	    !get_u64(rec, "deadline_ns", &deadline) || !get_u64(rec, "end_ns", &end) ||
	    !json_object_object_get_ex(rec, "missed", &m) ||
	    !json_object_is_type(m, json_type_boolean) || !(pid = domain_pid(x, domain)))
		return false;
	if (!get_u64(rec, "bound_ns", &bound))
		bound = 0;
	missed = json_object_get_boolean(m);
	/* Traces before 2026-11-29 have no "startup". */
	startup = json_object_object_get_ex(rec, "startup", &su) && json_object_get_boolean(su);
	unfinished = end == 0;
	/* An unfinished frame (end 0) lasts until its deadline; one whose last
	 * group's end was taken before its release (clocks read apart) lasts 0. */
	if (end == 0)
		end = deadline;
	if (end < release)
		end = release;
	for (lane = 0; lane < FRAMES_LANES - 1 && x->frames_end[pid - 1][lane] > release; lane++)
		;
	if (x->frames_end[pid - 1][lane] < end)
		x->frames_end[pid - 1][lane] = end;
	if (!x->frames_named[pid - 1][lane]) {
		char label[32];

		x->frames_named[pid - 1][lane] = true;
		if (lane)
			snprintf(label, sizeof(label), "frames %d", lane + 1);
		else
			snprintf(label, sizeof(label), "frames");
		name_track(x, pid, FRAMES_LANE_TID(lane), label);
	}
	/* On "frames", named by the domain's first frame (lane 0: no end yet). */
	marker(x, pid, "release", release);
	marker(x, pid, "deadline", deadline);
	name = missed ? "MISSED frame" : "frame";
	ev = event("X", startup ? "start-up frame" : name, pid, FRAMES_LANE_TID(lane));
	json_object_object_add(ev, "cat", json_object_new_string("frame"));
	json_object_object_add(ev, "ts", usec(release));
	json_object_object_add(ev, "dur", usec(end - release));
	args = json_object_new_object();
	json_object_object_add(args, "missed", json_object_new_boolean(missed));
	json_object_object_add(args, "startup", json_object_new_boolean(startup));
	json_object_object_add(args, "finished", json_object_new_boolean(!unfinished));
	json_object_object_add(args, "deadline_us", usec(deadline - release));
	json_object_object_add(args, "bound_us", usec(bound));
	json_object_object_add(ev, "args", args);
	emit(x, ev);
	x->counts.frames++;
	x->counts.missed += missed && !startup; /* as show-budgets counts them */
	return true;
}

int trace_export_perfetto(FILE *in, FILE *out, struct trace_export_counts *counts, char *err,
			  size_t err_size)
{
	struct exporter *x = calloc(1, sizeof(*x));
	char *line = malloc(EXPORT_LINE_MAX);
	int r = 0;

	if (!x || !line) {
		free(x);
		free(line);
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	x->out = out;
	x->first = true;
	fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", out);
	while (fgets(line, EXPORT_LINE_MAX, in)) {
		struct json_object *rec = json_tokener_parse(line);
		const char *type;
		bool ok = false;

		if (rec && json_object_is_type(rec, json_type_object)) {
			type = get_string(rec, "type");
			if (!type)
				ok = export_group(x, rec);
			else if (!strcmp(type, "frame"))
				ok = export_frame(x, rec);
		}
		if (!ok)
			x->counts.skipped++;
		json_object_put(rec);
	}
	fputs("\n]}\n", out);
	if (ferror(in)) {
		snprintf(err, err_size, "reading the trace: %s", strerror(errno));
		r = -EIO;
	} else if (fflush(out) != 0 || ferror(out)) {
		r = errno ? -errno : -EIO;
		snprintf(err, err_size, "writing the timeline: %s", strerror(-r));
	}
	if (counts)
		*counts = x->counts;
	free(line);
	free(x);
	return r;
}
