/*
 * Tests of per-domain accounting: measured groups are charged to the period
 * they completed in, periods roll over (and skipped periods reset the last
 * period's use), counters never go negative, and the JSON object has every
 * show-budgets field of DESIGN.md with the right JSON type.
 *
 * The domain under test has a period of 1000 us and a budget of 400 us, and
 * starts at T0; P is one period in nanoseconds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "domain.h"
#include "util.h"

#define T0 (5 * NSEC_PER_SEC)
#define P  (1000 * NSEC_PER_USEC)
#define US NSEC_PER_USEC

static struct domain_config test_config(void)
{
	struct domain_config cfg = {
	    .name = "cluster",
	    .class = DOMAIN_CLASS_SAFETY,
	    .period_us = 1000,
	    .budget_us = 400,
	    .deadline_us = 900,
	    .vtest_socket = "/tmp/cluster.vtest",
	    .line = 3,
	};

	return cfg;
}

static int setup(void **state)
{
	struct domain_config cfg = test_config();

	*state = domain_create(&cfg, T0);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	domain_destroy(*state);
	return 0;
}

/* Charges a group that ran for @measured_ns and ended at @end_ns, received at @now_ns. */
static void charge(struct domain *d, uint64_t end_ns, uint64_t measured_ns, uint64_t predicted_ns,
		   uint64_t now_ns)
{
	struct wire_group g;

	memset(&g, 0, sizeof(g));
	g.hdr.type = WIRE_GROUP;
	g.hdr.size = sizeof(g);
	g.seq = 1;
	g.start_ns = end_ns - measured_ns;
	g.dispatch_ns = g.start_ns;
	g.end_ns = end_ns;
	g.predicted_ns = predicted_ns;
	domain_charge_group(d, &g, now_ns);
}

/* The value of integer field @key of show-budgets at @now_ns. */
static int64_t field(struct domain *d, const char *key, uint64_t now_ns)
{
	struct json_object *o = domain_to_json(d, now_ns);
	struct json_object *v;
	int64_t value;

	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, key, &v));
	assert_true(json_object_is_type(v, json_type_int));
	value = json_object_get_int64(v);
	json_object_put(o);
	return value;
}

static double utilization(struct domain *d, uint64_t now_ns)
{
	struct json_object *o = domain_to_json(d, now_ns);
	struct json_object *v;
	double value;

	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "utilization", &v));
	assert_true(json_object_is_type(v, json_type_double));
	value = json_object_get_double(v);
	json_object_put(o);
	return value;
}

static void new_domain_has_its_whole_budget_and_no_use(void **state)
{
	struct domain *d = *state;

	assert_int_equal(field(d, "remaining_us", T0), 400);
	assert_int_equal(field(d, "used_us", T0), 0);
	assert_int_equal(field(d, "used_last_period_us", T0), 0);
	assert_int_equal(field(d, "groups", T0), 0);
	assert_int_equal(field(d, "clients", T0), 0);
	assert_int_equal(field(d, "contexts", T0), 0);
	assert_true(utilization(d, T0) == 0.0);
}

static void domain_copies_its_config(void **state)
{
	struct domain_config cfg = test_config();
	struct domain *d = domain_create(&cfg, T0);

	assert_non_null(d);
	strcpy(cfg.name, "changed");
	cfg.budget_us = 1;
	assert_string_equal(domain_config(d)->name, "cluster");
	assert_int_equal(domain_config(d)->budget_us, 400);
	assert_int_equal(domain_config(d)->line, 3);
	domain_destroy(d);
}

static void group_is_charged_to_the_current_period(void **state)
{
	struct domain *d = *state;

	charge(d, T0 + 100 * US, 50 * US, 60 * US, T0 + 110 * US);
	charge(d, T0 + 300 * US, 100 * US, 90 * US, T0 + 310 * US);
	assert_int_equal(field(d, "remaining_us", T0 + 400 * US), 400 - 150);
	assert_int_equal(field(d, "used_us", T0 + 400 * US), 150);
	assert_int_equal(field(d, "used_last_period_us", T0 + 400 * US), 0);
	assert_int_equal(field(d, "predicted_us", T0 + 400 * US), 150);
	assert_int_equal(field(d, "groups", T0 + 400 * US), 2);
}

static void late_record_is_charged_to_the_period_it_completed_in(void **state)
{
	struct domain *d = *state;

	/* Completed near the end of period 0, reported early in period 1. */
	charge(d, T0 + P - 10 * US, 200 * US, 0, T0 + P + 5 * US);
	assert_int_equal(field(d, "remaining_us", T0 + P + 5 * US), 400);
	assert_int_equal(field(d, "used_last_period_us", T0 + P + 5 * US), 200);
	assert_int_equal(field(d, "used_us", T0 + P + 5 * US), 200);
}

static void record_older_than_the_last_period_counts_only_in_totals(void **state)
{
	struct domain *d = *state;

	charge(d, T0 + 10 * US, 70 * US, 80 * US, T0 + 2 * P + 5 * US);
	assert_int_equal(field(d, "remaining_us", T0 + 2 * P + 5 * US), 400);
	assert_int_equal(field(d, "used_last_period_us", T0 + 2 * P + 5 * US), 0);
	assert_int_equal(field(d, "used_us", T0 + 2 * P + 5 * US), 70);
	assert_int_equal(field(d, "predicted_us", T0 + 2 * P + 5 * US), 80);
	assert_int_equal(field(d, "groups", T0 + 2 * P + 5 * US), 1);
}

static void period_rollover_moves_use_to_the_last_period(void **state)
{
	struct domain *d = *state;

	charge(d, T0 + 500 * US, 300 * US, 0, T0 + 500 * US);
	domain_advance(d, T0 + P);
	assert_int_equal(field(d, "remaining_us", T0 + P), 400);
	assert_int_equal(field(d, "used_last_period_us", T0 + P), 300);
	assert_true(utilization(d, T0 + P) > 0.2999 && utilization(d, T0 + P) < 0.3001);

	/* One more period without groups: the last period had no use. */
	assert_int_equal(field(d, "used_last_period_us", T0 + 2 * P), 0);
	assert_int_equal(field(d, "used_us", T0 + 2 * P), 300);
}

static void skipping_several_periods_resets_the_last_period(void **state)
{
	struct domain *d = *state;

	charge(d, T0 + 500 * US, 300 * US, 0, T0 + 500 * US);
	assert_int_equal(field(d, "remaining_us", T0 + 600 * US), 100);
	/* Nothing happens for a while, then show-budgets runs in period 5. */
	assert_int_equal(field(d, "used_last_period_us", T0 + 5 * P + 1), 0);
	assert_int_equal(field(d, "remaining_us", T0 + 5 * P + 1), 400);
	assert_true(utilization(d, T0 + 5 * P + 1) == 0.0);
	assert_int_equal(field(d, "used_us", T0 + 5 * P + 1), 300);
}

static void remaining_is_never_negative(void **state)
{
	struct domain *d = *state;

	charge(d, T0 + 900 * US, 900 * US, 100 * US, T0 + 900 * US);
	assert_int_equal(field(d, "remaining_us", T0 + 950 * US), 0);
	charge(d, T0 + 990 * US, 50 * US, 0, T0 + 990 * US);
	assert_int_equal(field(d, "remaining_us", T0 + 995 * US), 0);
	assert_int_equal(field(d, "used_us", T0 + 995 * US), 950);
	/* The next period starts with the whole budget again. */
	assert_int_equal(field(d, "remaining_us", T0 + P), 400);
}

static void group_that_ends_after_now_is_not_lost(void **state)
{
	struct domain *d = *state;

	/* The record says the group ended a little after the caller's now,
	 * in the next period: it must still count against a period. */
	charge(d, T0 + P + 10 * US, 100 * US, 0, T0 + P - 10 * US);
	domain_advance(d, T0 + P + 20 * US);
	assert_int_equal(field(d, "remaining_us", T0 + P + 20 * US) +
			     field(d, "used_last_period_us", T0 + P + 20 * US),
			 400 + 100);
}

static void now_going_backwards_does_not_reset_the_period(void **state)
{
	struct domain *d = *state;

	charge(d, T0 + 2 * P + 100 * US, 100 * US, 0, T0 + 2 * P + 100 * US);
	/* A caller with a stale now (an earlier period) must not wipe the
	 * current period's use. */
	domain_advance(d, T0 + P + 500 * US);
	assert_int_equal(field(d, "remaining_us", T0 + 2 * P + 200 * US), 300);
}

static void group_ending_before_the_domain_started_is_in_its_first_period(void **state)
{
	struct domain *d = *state;

	charge(d, T0 - 10 * US, 20 * US, 0, T0 + 5 * US);
	assert_int_equal(field(d, "remaining_us", T0 + 5 * US), 380);
}

static void times_are_reported_in_whole_microseconds(void **state)
{
	struct domain *d = *state;

	charge(d, T0 + 100 * US, 1999, 2999, T0 + 100 * US);
	assert_int_equal(field(d, "used_us", T0 + 100 * US), 1);
	assert_int_equal(field(d, "predicted_us", T0 + 100 * US), 2);
}

static void client_count_follows_adds_and_removes_and_stays_at_zero(void **state)
{
	struct domain *d = *state;

	domain_client_added(d);
	domain_client_added(d);
	assert_int_equal(field(d, "clients", T0), 2);
	domain_client_removed(d);
	assert_int_equal(field(d, "clients", T0), 1);
	domain_client_removed(d);
	domain_client_removed(d);
	assert_int_equal(field(d, "clients", T0), 0);
}

static void context_count_follows_changes_and_stays_at_zero(void **state)
{
	struct domain *d = *state;

	domain_contexts_changed(d, +1);
	domain_contexts_changed(d, +1);
	domain_contexts_changed(d, +1);
	assert_int_equal(field(d, "contexts", T0), 3);
	domain_contexts_changed(d, -1);
	assert_int_equal(field(d, "contexts", T0), 2);
	domain_contexts_changed(d, -1);
	domain_contexts_changed(d, -1);
	domain_contexts_changed(d, -1);
	assert_int_equal(field(d, "contexts", T0), 0);
	domain_contexts_changed(d, +1);
	assert_int_equal(field(d, "contexts", T0), 1);
}

static void timestamp_source_is_none_until_a_worker_says(void **state)
{
	struct domain *d = *state;
	struct json_object *o, *v;

	o = domain_to_json(d, T0);
	assert_true(json_object_object_get_ex(o, "timestamp_source", &v));
	assert_string_equal(json_object_get_string(v), "none");
	json_object_put(o);

	domain_set_timestamp_source(d, "fence-callback");
	o = domain_to_json(d, T0);
	assert_true(json_object_object_get_ex(o, "timestamp_source", &v));
	assert_string_equal(json_object_get_string(v), "fence-callback");
	json_object_put(o);
}

/* The show-budgets fields of DESIGN.md and their JSON types. */
static const struct {
	const char *key;
	enum json_type type;
} show_budgets_fields[] = {
    {"name", json_type_string},	       {"class", json_type_string},
    {"period_us", json_type_int},      {"budget_us", json_type_int},
    {"deadline_us", json_type_int},    {"remaining_us", json_type_int},
    {"used_us", json_type_int},	       {"used_last_period_us", json_type_int},
    {"predicted_us", json_type_int},   {"debt_us", json_type_int},
    {"utilization", json_type_double}, {"clients", json_type_int},
    {"contexts", json_type_int},       {"groups", json_type_int},
    {"overruns", json_type_int},       {"deadline_misses", json_type_int},
    {"throttled", json_type_int},      {"timestamp_source", json_type_string},
};

static void json_has_every_show_budgets_field_with_its_type(void **state)
{
	struct domain *d = *state;
	struct json_object *o = domain_to_json(d, T0 + 10 * US);
	struct json_object *v;

	assert_non_null(o);
	assert_true(json_object_is_type(o, json_type_object));
	for (size_t i = 0; i < sizeof(show_budgets_fields) / sizeof(show_budgets_fields[0]); i++) {
		if (!json_object_object_get_ex(o, show_budgets_fields[i].key, &v)) {
			print_error("field '%s' is missing\n", show_budgets_fields[i].key);
			fail();
		}
		if (!json_object_is_type(v, show_budgets_fields[i].type)) {
			print_error("field '%s' has type %s\n", show_budgets_fields[i].key,
				    json_type_to_name(json_object_get_type(v)));
			fail();
		}
	}

	assert_true(json_object_object_get_ex(o, "name", &v));
	assert_string_equal(json_object_get_string(v), "cluster");
	assert_true(json_object_object_get_ex(o, "class", &v));
	assert_string_equal(json_object_get_string(v), "safety");
	assert_true(json_object_object_get_ex(o, "period_us", &v));
	assert_int_equal(json_object_get_int64(v), 1000);
	assert_true(json_object_object_get_ex(o, "budget_us", &v));
	assert_int_equal(json_object_get_int64(v), 400);
	assert_true(json_object_object_get_ex(o, "deadline_us", &v));
	assert_int_equal(json_object_get_int64(v), 900);
	/* Enforcement counts stay 0 until the scheduler keeps them. */
	assert_true(json_object_object_get_ex(o, "debt_us", &v));
	assert_int_equal(json_object_get_int64(v), 0);
	assert_true(json_object_object_get_ex(o, "overruns", &v));
	assert_int_equal(json_object_get_int64(v), 0);
	assert_true(json_object_object_get_ex(o, "deadline_misses", &v));
	assert_int_equal(json_object_get_int64(v), 0);
	assert_true(json_object_object_get_ex(o, "throttled", &v));
	assert_int_equal(json_object_get_int64(v), 0);
	json_object_put(o);
}

static void normal_class_is_named_normal(void **state)
{
	struct domain_config cfg = test_config();
	struct domain *d;
	struct json_object *o, *v;

	cfg.class = DOMAIN_CLASS_NORMAL;
	d = domain_create(&cfg, T0);
	assert_non_null(d);
	o = domain_to_json(d, T0);
	assert_true(json_object_object_get_ex(o, "class", &v));
	assert_string_equal(json_object_get_string(v), "normal");
	json_object_put(o);
	domain_destroy(d);
}

static void destroying_null_is_fine(void **state)
{
	domain_destroy(NULL);
}

#define DOMAIN_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    DOMAIN_TEST(new_domain_has_its_whole_budget_and_no_use),
	    cmocka_unit_test(domain_copies_its_config),
	    DOMAIN_TEST(group_is_charged_to_the_current_period),
	    DOMAIN_TEST(late_record_is_charged_to_the_period_it_completed_in),
	    DOMAIN_TEST(record_older_than_the_last_period_counts_only_in_totals),
	    DOMAIN_TEST(period_rollover_moves_use_to_the_last_period),
	    DOMAIN_TEST(skipping_several_periods_resets_the_last_period),
	    DOMAIN_TEST(remaining_is_never_negative),
	    DOMAIN_TEST(group_that_ends_after_now_is_not_lost),
	    DOMAIN_TEST(now_going_backwards_does_not_reset_the_period),
	    DOMAIN_TEST(group_ending_before_the_domain_started_is_in_its_first_period),
	    DOMAIN_TEST(times_are_reported_in_whole_microseconds),
	    DOMAIN_TEST(client_count_follows_adds_and_removes_and_stays_at_zero),
	    DOMAIN_TEST(context_count_follows_changes_and_stays_at_zero),
	    DOMAIN_TEST(timestamp_source_is_none_until_a_worker_says),
	    DOMAIN_TEST(json_has_every_show_budgets_field_with_its_type),
	    cmocka_unit_test(normal_class_is_named_normal),
	    cmocka_unit_test(destroying_null_is_fine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
