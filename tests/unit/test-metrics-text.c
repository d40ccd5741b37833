// SPDX-License-Identifier: MIT
/*
 * Tests of mediatorctl metrics' text (metrics_text.h) against a known
 * show-budgets answer: the exact lines of a counter, a gauge and a
 * histogram in Prometheus' text format, seconds from microseconds, labels
 * escaped, a member a domain lacks left out, the invariants' counters and
 * build_info, and an answer without domains refused.
 */
#include <errno.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/metrics_text.h"

static const char known[] =
    "{\"policy\":\"budget\",\"domains\":["
    "{\"name\":\"cluster\",\"class\":\"safety\",\"used_us\":1500000,\"groups\":42,"
    "\"frames\":40,\"budget_us\":4000,\"utilization\":0.25,\"clients\":1,"
    "\"histograms\":{\"group_time\":{\"le_us\":[100,250,16667],\"buckets\":[1,3,40,42],"
    "\"count\":42,\"sum_us\":1500000.5}}},"
    "{\"name\":\"in\\\"fo\",\"class\":\"normal\",\"used_us\":7,\"groups\":1}"
    "],\"invariant_violations\":{\"budget\":0,\"one_in_flight\":3}}";

/* What metrics_write_prometheus() makes of @json, in a static buffer. */
static const char *render(const char *json, int *ret)
{
	static char text[65536];
	struct json_object *o = json_tokener_parse(json);
	FILE *f = fmemopen(text, sizeof(text), "w");

	assert_non_null(o);
	assert_non_null(f);
	*ret = metrics_write_prometheus(f, o, "0.1.0");
	fputc('\0', f);
	fclose(f);
	json_object_put(o);
	return text;
}

static void has_line(const char *text, const char *line)
{
	char want[512];

	snprintf(want, sizeof(want), "\n%s\n", line);
	if (!strstr(text, want)) {
		print_error("no line '%s' in:\n%s\n", line, text);
		fail();
	}
}

static void counters_and_gauges_are_in_seconds_with_labels(void **state)
{
	int ret;
	const char *text = render(known, &ret);

	assert_int_equal(ret, 0);
	has_line(text, "# TYPE gpu_mediator_gpu_seconds_total counter");
	has_line(text,
		 "gpu_mediator_gpu_seconds_total{domain=\"cluster\",class=\"safety\"} 1.500000");
	has_line(text, "gpu_mediator_groups_total{domain=\"cluster\",class=\"safety\"} 42");
	has_line(text, "# TYPE gpu_mediator_budget_seconds gauge");
	has_line(text, "gpu_mediator_budget_seconds{domain=\"cluster\",class=\"safety\"} 0.004000");
	has_line(text, "gpu_mediator_utilization_ratio{domain=\"cluster\",class=\"safety\"} 0.25");
	/* A label value with a quote is escaped. */
	has_line(text, "gpu_mediator_groups_total{domain=\"in\\\"fo\",class=\"normal\"} 1");
	/* The normal domain has no frames: no series, not a zero. */
	assert_null(strstr(text, "gpu_mediator_frames_total{domain=\"in"));
}

static void a_histogram_has_cumulative_buckets_a_sum_and_a_count(void **state)
{
	int ret;
	const char *text = render(known, &ret);

	assert_int_equal(ret, 0);
	has_line(text, "# TYPE gpu_mediator_group_gpu_seconds histogram");
	has_line(text, "gpu_mediator_group_gpu_seconds_bucket{domain=\"cluster\",class=\"safety\","
		       "le=\"0.0001\"} 1");
	has_line(text, "gpu_mediator_group_gpu_seconds_bucket{domain=\"cluster\",class=\"safety\","
		       "le=\"0.00025\"} 3");
	has_line(text, "gpu_mediator_group_gpu_seconds_bucket{domain=\"cluster\",class=\"safety\","
		       "le=\"0.016667\"} 40");
	has_line(text, "gpu_mediator_group_gpu_seconds_bucket{domain=\"cluster\",class=\"safety\","
		       "le=\"+Inf\"} 42");
	has_line(
	    text,
	    "gpu_mediator_group_gpu_seconds_sum{domain=\"cluster\",class=\"safety\"} 1.500000500");
	has_line(text,
		 "gpu_mediator_group_gpu_seconds_count{domain=\"cluster\",class=\"safety\"} 42");
}

static void invariants_and_build_info(void **state)
{
	int ret;
	const char *text = render(known, &ret);

	assert_int_equal(ret, 0);
	has_line(text, "# TYPE gpu_mediator_invariant_violations_total counter");
	has_line(text, "gpu_mediator_invariant_violations_total{invariant=\"budget\"} 0");
	has_line(text, "gpu_mediator_invariant_violations_total{invariant=\"one_in_flight\"} 3");
	has_line(text, "# TYPE gpu_mediator_build_info gauge");
	has_line(text, "gpu_mediator_build_info{version=\"0.1.0\"} 1");
}

static void an_answer_without_domains_is_refused(void **state)
{
	int ret;

	render("{\"policy\":\"budget\"}", &ret);
	assert_int_equal(ret, -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(counters_and_gauges_are_in_seconds_with_labels),
	    cmocka_unit_test(a_histogram_has_cumulative_buckets_a_sum_and_a_count),
	    cmocka_unit_test(invariants_and_build_info),
	    cmocka_unit_test(an_answer_without_domains_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
