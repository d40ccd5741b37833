// SPDX-License-Identifier: MIT
/*
 * show-budgets -> Prometheus text (see metrics_text.h).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "tools/budget_fields.h"
#include "tools/metrics_text.h"

enum kind { COUNTER, GAUGE };

/*
 * A show-budgets member as a metric; @scale turns its unit into the
 * metric's. Its help is the member's text (budget_fields.h).
 */
struct metric {
	const char *name, *member;
	enum kind kind;
	double scale;
};

#define US 1e-6 /* microseconds to seconds */

static const struct metric metrics[] = {
    {"gpu_mediator_gpu_seconds_total", "used_us", COUNTER, US},
    {"gpu_mediator_predicted_gpu_seconds_total", "predicted_us", COUNTER, US},
    {"gpu_mediator_groups_total", "groups", COUNTER, 1},
    {"gpu_mediator_frames_total", "frames", COUNTER, 1},
    {"gpu_mediator_startup_frames_total", "startup_frames", COUNTER, 1},
    {"gpu_mediator_deadline_misses_total", "deadline_misses", COUNTER, 1},
    {"gpu_mediator_deadline_misses_alone_total", "deadline_misses_alone", COUNTER, 1},
    {"gpu_mediator_overruns_total", "overruns", COUNTER, 1},
    {"gpu_mediator_throttled_total", "throttled", COUNTER, 1},
    {"gpu_mediator_unschedulable_total", "unschedulable", COUNTER, 1},
    {"gpu_mediator_watchdog_revokes_total", "watchdog_revokes", COUNTER, 1},
    {"gpu_mediator_watchdog_kills_total", "watchdog_kills", COUNTER, 1},
    {"gpu_mediator_idle_host_work_total", "idle_host_work", COUNTER, 1},
    {"gpu_mediator_period_seconds", "period_us", GAUGE, US},
    {"gpu_mediator_learned_period_seconds", "learned_period_us", GAUGE, US},
    {"gpu_mediator_period_confidence_ratio", "period_confidence", GAUGE, 1},
    {"gpu_mediator_budget_seconds", "budget_us", GAUGE, US},
    {"gpu_mediator_deadline_seconds", "deadline_us", GAUGE, US},
    {"gpu_mediator_budget_remaining_seconds", "remaining_us", GAUGE, US},
    {"gpu_mediator_debt_seconds", "debt_us", GAUGE, US},
    {"gpu_mediator_utilization_ratio", "utilization", GAUGE, 1},
    {"gpu_mediator_clients", "clients", GAUGE, 1},
    {"gpu_mediator_contexts", "contexts", GAUGE, 1},
    {"gpu_mediator_waiting_groups", "waiting", GAUGE, 1},
    {"gpu_mediator_in_flight_groups", "in_flight", GAUGE, 1},
};

/* The histograms' help: budget_fields.h, by member. */
static const struct {
	const char *name, *member;
} histograms[] = {
    {"gpu_mediator_group_gpu_seconds", "group_time"},
    {"gpu_mediator_grant_wait_seconds", "grant_wait"},
    {"gpu_mediator_frame_latency_seconds", "frame_latency"},
};

/* Writes @s as a label value (escaping \, " and newlines). */
static void label_value(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

static void labels(FILE *out, const char *domain, const char *class, const char *le)
{
	fputs("{domain=\"", out);
	label_value(out, domain);
	fputs("\",class=\"", out);
	label_value(out, class);
	if (le)
		fprintf(out, "\",le=\"%s", le);
	fputs("\"}", out);
}

static const char *string_of(struct json_object *o, const char *key)
{
	struct json_object *m;

	return json_object_object_get_ex(o, key, &m) && json_object_is_type(m, json_type_string)
		   ? json_object_get_string(m)
		   : NULL;
}

static bool number_of(struct json_object *o, const char *key, double *v)
{
	struct json_object *m;

	if (!json_object_object_get_ex(o, key, &m) ||
	    !(json_object_is_type(m, json_type_int) || json_object_is_type(m, json_type_double)))
		return false;
	*v = json_object_get_double(m);
	return true;
}

/* @v (a show-budgets number) times @scale: exact microseconds as seconds, counts whole. */
static void print_value(FILE *out, double v, double scale)
{
	if (scale == US)
		fprintf(out, " %.6f\n", v * US);
	else if (v == (double)(int64_t)v)
		fprintf(out, " %.0f\n", v);
	else
		fprintf(out, " %.9g\n", v);
}

static void one_histogram(FILE *out, const char *name, struct json_object *h, const char *domain,
			  const char *class)
{
	struct json_object *le, *buckets;
	double count = 0, sum = 0;
	size_t n;

	if (!h || !json_object_object_get_ex(h, "le_us", &le) ||
	    !json_object_object_get_ex(h, "buckets", &buckets) || !number_of(h, "count", &count) ||
	    !number_of(h, "sum_us", &sum) ||
	    json_object_array_length(buckets) != json_object_array_length(le) + 1)
		return;
	n = json_object_array_length(le);
	for (size_t i = 0; i <= n; i++) {
		char bound[32];

		if (i < n)
			snprintf(bound, sizeof(bound), "%.9g",
				 json_object_get_double(json_object_array_get_idx(le, i)) * US);
		else
			snprintf(bound, sizeof(bound), "+Inf");
		fprintf(out, "%s_bucket", name);
		labels(out, domain, class, bound);
		fprintf(out, " %.0f\n",
			json_object_get_double(json_object_array_get_idx(buckets, i)));
	}
	fprintf(out, "%s_sum", name);
	labels(out, domain, class, NULL);
	fprintf(out, " %.9f\n", sum * US);
	fprintf(out, "%s_count", name);
	labels(out, domain, class, NULL);
	fprintf(out, " %.0f\n", count);
}

/*
 * The invariants of the dispatcher and its scheduler that were found
 * broken (show-budgets' "invariant_violations": name -> count), a series
 * each, zeros included: an alert wants the series before its first rise.
 */
static void invariant_violations(FILE *out, struct json_object *budgets)
{
	static const char name[] = "gpu_mediator_invariant_violations_total";
	struct json_object *inv;

	if (!json_object_object_get_ex(budgets, "invariant_violations", &inv) ||
	    !json_object_is_type(inv, json_type_object))
		return;
	fprintf(out,
		"# HELP %s Times mediatord found an invariant of its dispatcher or scheduler "
		"broken (it logs each; doc/design.md).\n# TYPE %s counter\n",
		name, name);
	json_object_object_foreach(inv, key, val)
	{
		if (!json_object_is_type(val, json_type_int))
			continue;
		fprintf(out, "%s{invariant=\"", name);
		label_value(out, key);
		fprintf(out, "\"} %lld\n", (long long)json_object_get_int64(val));
	}
}

/* gpu_mediator_build_info{version="..."} 1, Prometheus' convention for a build's facts. */
static void build_info(FILE *out, const char *version)
{
	static const char name[] = "gpu_mediator_build_info";

	fprintf(out, "# HELP %s The running mediatord's version (the value is always 1).\n", name);
	fprintf(out, "# TYPE %s gauge\n%s{version=\"", name, name);
	label_value(out, version);
	fputs("\"} 1\n", out);
}

int metrics_write_prometheus(FILE *out, struct json_object *budgets, const char *version)
{
	struct json_object *domains;
	size_t n;

	if (!json_object_object_get_ex(budgets, "domains", &domains) ||
	    !json_object_is_type(domains, json_type_array))
		return -EPROTO;
	n = json_object_array_length(domains);
	for (size_t m = 0; m < sizeof(metrics) / sizeof(metrics[0]); m++) {
		fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", metrics[m].name,
			budget_field_text(metrics[m].member), metrics[m].name,
			metrics[m].kind == COUNTER ? "counter" : "gauge");
		for (size_t i = 0; i < n; i++) {
			struct json_object *d = json_object_array_get_idx(domains, i);
			const char *name = string_of(d, "name"), *class = string_of(d, "class");
			double v;

			if (!name || !class || !number_of(d, metrics[m].member, &v))
				continue; /* e.g. a normal domain has no frames */
			fputs(metrics[m].name, out);
			labels(out, name, class, NULL);
			print_value(out, v, metrics[m].scale);
		}
	}
	for (size_t k = 0; k < sizeof(histograms) / sizeof(histograms[0]); k++) {
		fprintf(out, "# HELP %s %s\n# TYPE %s histogram\n", histograms[k].name,
			budget_field_text(histograms[k].member), histograms[k].name);
		for (size_t i = 0; i < n; i++) {
			struct json_object *d = json_object_array_get_idx(domains, i), *hs,
					   *h = NULL;
			const char *name = string_of(d, "name"), *class = string_of(d, "class");

			if (!name || !class || !json_object_object_get_ex(d, "histograms", &hs))
				continue;
			json_object_object_get_ex(hs, histograms[k].member, &h);
			one_histogram(out, histograms[k].name, h, name, class);
		}
	}
	invariant_violations(out, budgets);
	if (version)
		build_info(out, version);
	return 0;
}
