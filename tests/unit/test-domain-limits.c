// SPDX-License-Identifier: MIT
/*
 * Tests of a domain's limits (domain_limits.h): who is admitted at the
 * client and memory limits, when a domain is past its memory total, how
 * a worker's memory is read from /proc, the rate limit of refusal lines,
 * and how the cgroup v2 memory controller is detected.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/domain_limits.h"

static void a_client_is_admitted_up_to_each_limit(void **state)
{
	static const struct {
		const char *description;
		struct domain_limits limits;
		struct domain_usage usage;
		int expected;
		const char *what; /* the key named when refused */
	} cases[] = {
	    {"an empty domain", {16, 4096 * 1024}, {0, 0}, 0, NULL},
	    {"the last client", {16, 4096 * 1024}, {15, 1024}, 0, NULL},
	    {"one past max_clients", {16, 4096 * 1024}, {16, 1024}, -EMFILE, "max_clients"},
	    {"a domain of one client with one", {1, 0}, {1, 0}, -EMFILE, "max_clients"},
	    {"just under the memory total", {16, 1000}, {3, 999}, 0, NULL},
	    {"at the memory total", {16, 1000}, {3, 1000}, -ENOMEM, "domain_memory_mb"},
	    {"past the memory total", {16, 1000}, {3, 5000}, -ENOMEM, "domain_memory_mb"},
	    {"no memory total", {16, 0}, {3, UINT64_MAX}, 0, NULL},
	    {"both reached: the clients' named", {2, 1000}, {2, 5000}, -EMFILE, "max_clients"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *what = NULL;
		int r = domain_limits_admit(&cases[i].limits, &cases[i].usage, &what);

		if (r != cases[i].expected) {
			print_error("%s: %d, expected %d\n", cases[i].description, r,
				    cases[i].expected);
			fail();
		}
		if (cases[i].what)
			assert_string_equal(what, cases[i].what);
	}
}

static void a_domain_is_over_only_past_its_memory_total(void **state)
{
	static const struct {
		const char *description;
		uint64_t total_kib, held_kib;
		bool over;
	} cases[] = {
	    {"under", 1000, 999, false},
	    {"at it", 1000, 1000, false},
	    {"a KiB past", 1000, 1001, true},
	    {"no total", 0, UINT64_MAX, false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct domain_limits l = {.max_clients = 1, .memory_kib = cases[i].total_kib};
		struct domain_usage u = {.clients = 1, .memory_kib = cases[i].held_kib};

		if (domain_limits_over(&l, &u) != cases[i].over) {
			print_error("%s: not %s\n", cases[i].description,
				    cases[i].over ? "over" : "under");
			fail();
		}
	}
}

static void the_limits_come_from_the_domains_config(void **state)
{
	struct domain_config cfg = {.max_clients = 7, .domain_memory_mb = 3};
	struct domain_limits l = domain_limits_from_config(&cfg);

	assert_int_equal(l.max_clients, 7);
	assert_int_equal(l.memory_kib, 3 * 1024);
}

static void a_workers_memory_is_its_rss_anon(void **state)
{
	static const struct {
		const char *description;
		const char *text;
		int expected;
		uint64_t kib;
	} cases[] = {
	    {"a worker's status",
	     "Name:\tmediator-worker\nVmRSS:\t  90000 kB\nRssAnon:\t   "
	     "81234 kB\nRssFile:\t    8000 kB\n",
	     0, 81234},
	    {"RssAnon first", "RssAnon: 5 kB\n", 0, 5},
	    {"no RssAnon line (a kernel thread)", "Name:\tkthreadd\nState:\tS\n", -ENOENT, 0},
	    {"empty", "", -ENOENT, 0},
	    {"a word for the number", "RssAnon:\tmany kB\n", -EINVAL, 0},
	    {"no unit", "RssAnon:\t12\n", -EINVAL, 0},
	    {"RssAnonX is not RssAnon", "XRssAnon:\t12 kB\n", -ENOENT, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t kib = 0;
		int r = domain_limits_parse_status(cases[i].text, &kib);

		if (r != cases[i].expected || (r == 0 && kib != cases[i].kib)) {
			print_error("%s: %d, %llu kB\n", cases[i].description, r,
				    (unsigned long long)kib);
			fail();
		}
	}
}

static void this_processs_memory_is_read_from_proc(void **state)
{
	uint64_t kib = 0;
	char *big = malloc(64 << 20);

	assert_non_null(big);
	memset(big, 1, 64 << 20);
	assert_int_equal(domain_limits_worker_kib(getpid(), &kib), 0);
	assert_true(kib >= 64 * 1024);
	free(big);
	assert_int_equal(domain_limits_worker_kib(-1, &kib), -ENOENT);
}

static void refusal_lines_are_rate_limited_and_count_the_rest(void **state)
{
	struct domain_limits_log log = {0};
	uint64_t t = 1000;
	uint32_t suppressed = 99;
	unsigned logged = 0;

	for (unsigned i = 0; i < 300; i++)
		if (domain_limits_log_pass(&log, t + i * 1000, &suppressed))
			logged++;
	assert_int_equal(logged, DOMAIN_LIMITS_LOG_BURST);
	assert_int_equal(suppressed, 0);
	/* The next window: its first line tells of those not logged. */
	assert_true(domain_limits_log_pass(&log, t + DOMAIN_LIMITS_LOG_WINDOW_NS, &suppressed));
	assert_int_equal(suppressed, 300 - DOMAIN_LIMITS_LOG_BURST);
	assert_true(domain_limits_log_pass(&log, t + DOMAIN_LIMITS_LOG_WINDOW_NS + 1, &suppressed));
	assert_int_equal(suppressed, 0);
}

/* Refusals not logged are told once their window is over, even when none follows. */
static void refusals_not_logged_are_told_after_their_window(void **state)
{
	struct domain_limits_log log = {0};
	uint64_t t = 5000;
	uint32_t suppressed = 99;

	assert_false(domain_limits_log_flush(&log, t, &suppressed));
	for (unsigned i = 0; i < DOMAIN_LIMITS_LOG_BURST + 7; i++)
		domain_limits_log_pass(&log, t + i, &suppressed);
	assert_false(
	    domain_limits_log_flush(&log, t + DOMAIN_LIMITS_LOG_WINDOW_NS - 1, &suppressed));
	assert_true(domain_limits_log_flush(&log, t + DOMAIN_LIMITS_LOG_WINDOW_NS, &suppressed));
	assert_int_equal(suppressed, 7);
	assert_false(
	    domain_limits_log_flush(&log, t + 3 * DOMAIN_LIMITS_LOG_WINDOW_NS, &suppressed));
	/* A new window: lines again. */
	assert_true(domain_limits_log_pass(&log, t + 3 * DOMAIN_LIMITS_LOG_WINDOW_NS, &suppressed));
	assert_int_equal(suppressed, 0);
}

/* A fake cgroup root in a temporary directory. */
static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void the_cgroup_v2_memory_controller_is_detected_or_refused_with_why(void **state)
{
	char root[] = "/tmp/test-domain-limits-XXXXXX", sub[600], where[512];

	assert_non_null(mkdtemp(root));
	/* A cgroup v1 or hybrid host: no cgroup.controllers. */
	assert_int_equal(domain_limits_cgroup_probe(root, "0::/\n", where, sizeof(where)), -ENOENT);
	assert_non_null(strstr(where, "no cgroup v2 hierarchy"));
	write_file(root, "cgroup.controllers", "cpu io pids\n");
	assert_int_equal(domain_limits_cgroup_probe(root, "0::/\n", where, sizeof(where)),
			 -ENOTSUP);
	assert_non_null(strstr(where, "no memory controller"));
	write_file(root, "cgroup.controllers", "cpu io memory pids\n");
	assert_int_equal(
	    domain_limits_cgroup_probe(root, "1:name=systemd:/\n", where, sizeof(where)), -ENOTSUP);
	snprintf(sub, sizeof(sub), "%s/gm", root);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(domain_limits_cgroup_probe(root, "0::/gm\n", where, sizeof(where)),
			 -EACCES);
	assert_non_null(strstr(where, "not delegated"));
	write_file(sub, "cgroup.subtree_control", "");
	assert_int_equal(
	    domain_limits_cgroup_probe(root, "9:cpu:/\n0::/gm\n", where, sizeof(where)), 0);
	assert_string_equal(where, sub);
	snprintf(sub, sizeof(sub), "%s/gm/cgroup.subtree_control", root);
	unlink(sub);
	snprintf(sub, sizeof(sub), "%s/gm", root);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/cgroup.controllers", root);
	unlink(sub);
	rmdir(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_client_is_admitted_up_to_each_limit),
	    cmocka_unit_test(a_domain_is_over_only_past_its_memory_total),
	    cmocka_unit_test(the_limits_come_from_the_domains_config),
	    cmocka_unit_test(a_workers_memory_is_its_rss_anon),
	    cmocka_unit_test(this_processs_memory_is_read_from_proc),
	    cmocka_unit_test(refusal_lines_are_rate_limited_and_count_the_rest),
	    cmocka_unit_test(refusals_not_logged_are_told_after_their_window),
	    cmocka_unit_test(the_cgroup_v2_memory_controller_is_detected_or_refused_with_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
