// SPDX-License-Identifier: MIT
/*
 * Tests of mediatorctl plan's proposal (mediator/tools/plan.h) on traces
 * written here: a safety domain's budget from its frames' GPU time, its
 * shortest period from its releases, a normal domain's from what is left;
 * start-up and unfinished frames, lines that are no records and names no
 * config takes left out; what cannot be proposed refused with a reason.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/plan.h"

#define MS 1000000ull
#define P  16667000ull

/* A trace: @frames frames of "cluster" every P, each one group of 1 ms (frame 50: 3 ms). */
static char *cluster_trace(unsigned frames, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	for (uint64_t k = 0; k < frames; k++) {
		uint64_t r = 1000 * MS + k * P, took = k == 50 ? 3 * MS : 1 * MS;

		fprintf(f,
			"{\"domain\":\"cluster\",\"client\":1,\"ctx\":1,\"seq\":%llu,"
			"\"request_ns\":%llu,\"dispatch_ns\":%llu,\"end_ns\":%llu,"
			"\"measured_ns\":%llu}\n",
			(unsigned long long)k, (unsigned long long)r,
			(unsigned long long)r + 100000, (unsigned long long)(r + 100000 + took),
			(unsigned long long)took);
		fprintf(f,
			"{\"type\":\"frame\",\"domain\":\"cluster\",\"release_ns\":%llu,"
			"\"deadline_ns\":%llu,\"end_ns\":%llu,\"missed\":false,\"startup\":%s}\n",
			(unsigned long long)r, (unsigned long long)(r + P),
			(unsigned long long)(r + 100000 + took), k < 2 ? "true" : "false");
	}
	fputs("{\"domain\":\"ivi\",\"dispatch_ns\":1000000000,\"measured_ns\":5000000}\n"
	      "{\"domain\":\"ivi\",\"dispatch_ns\":1010000000,\"measured_ns\":5000000}\n"
	      "not a record\n"
	      "{\"domain\":\"bad name!\",\"dispatch_ns\":1,\"measured_ns\":1}\n",
	      f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* The proposal for @text with @margin, or NULL (its reason in @err). */
static char *propose(const char *text, double margin, size_t *skipped, char *err, size_t size)
{
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	struct plan *p = plan_create();
	char *out = NULL;
	size_t len;
	FILE *o = open_memstream(&out, &len);
	int r;

	assert_non_null(in);
	assert_non_null(p);
	assert_int_equal(plan_read(p, in, "trace", skipped, err, size), 0);
	fclose(in);
	r = plan_write(p, margin, "/run/x", o, err, size);
	fclose(o);
	plan_destroy(p);
	if (r < 0) {
		free(out);
		return NULL;
	}
	return out;
}

static void a_safety_budget_is_its_frames_p999_plus_the_margin(void **state)
{
	size_t len, skipped = 0;
	char *trace = cluster_trace(100, &len), err[256];
	char *out = propose(trace, 0.25, &skipped, err, sizeof(err));

	(void)state;
	assert_non_null(out);
	/* 98 frames past the start-up: the 99.9th percentile is the 3 ms one; +25 %: 3.75 ms. */
	assert_non_null(strstr(out, "; cluster: 98 frames, period 16.67 ms"));
	assert_non_null(strstr(out, "[domain cluster]\nclass = safety\nmin_period_us = 16500\n"
				    "budget_us = 3800\nvtest_socket = /run/x/cluster.vtest\n"));
	/* What 3800 us in 16500 us leaves of 16667 us. */
	assert_non_null(strstr(out, "[domain ivi]\nclass = normal\nperiod_us = 16667\n"
				    "budget_us = 12828\nweight = 1\n"));
	/* The line that is no record and the name no config takes. */
	assert_int_equal(skipped, 2);
	free(out);
	free(trace);
}

static void what_cannot_be_proposed_is_refused_with_a_reason(void **state)
{
	size_t len;
	char *trace = cluster_trace(3, &len), err[256];

	(void)state;
	/* Past its start-up, one frame: no period. */
	assert_null(propose(trace, 0.25, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "domain cluster: fewer than 2 whole frames"));
	free(trace);
	trace = cluster_trace(100, &len);
	/* 3 ms and 500 % more, 18 ms, does not fit 16.5 ms. */
	assert_null(propose(trace, 5.0, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "does not fit its period"));
	free(trace);
	assert_null(propose("", 0.25, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "no domain"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_safety_budget_is_its_frames_p999_plus_the_margin),
	    cmocka_unit_test(what_cannot_be_proposed_is_refused_with_a_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
