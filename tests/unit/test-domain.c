// SPDX-License-Identifier: MIT
/*
 * Tests of a domain's show-budgets object: the domain's own state (name,
 * class, sockets, clients, contexts, totals since start) and the
 * per-period figures, which come from the scheduler's state of the domain
 * (sched_domain_stats()) and nowhere else. Above all: after set-budget
 * changes the period, every per-period figure follows the new period from
 * the boundary where it applies.
 *
 * Each test drives a real scheduler with one domain created at T0 (a
 * period of 1000 us, a budget of 400 us) and, like mediatord, charges each
 * measured group to both: the scheduler on its completion, the domain on
 * its group record.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "daemon/domain.h"
#include "scheduler/scheduler.h"
#include "common/util.h"

#define T0 (5 * NSEC_PER_SEC)
#define US NSEC_PER_USEC
#define P  (1000 * US)

struct fixture {
	struct sched *s;
	int dom;
	struct domain *d;
	uint64_t next_id;
};

static struct domain_config test_config(enum domain_class class)
{
	struct domain_config cfg = {
	    .name = "cluster",
	    .class = class,
	    .period_us = 1000,
	    .budget_us = 400,
	    .deadline_us = 900,
	    .vtest_socket = "/tmp/cluster.vtest",
	    .line = 3,
	};

	return cfg;
}

static struct fixture *fixture_create(enum domain_class class)
{
	struct sched_params sp = {.policy = SCHED_POLICY_BUDGET, .max_inflight = 1};
	struct sched_domain_params dp = {
	    .class = class == DOMAIN_CLASS_SAFETY ? SCHED_CLASS_SAFETY : SCHED_CLASS_NORMAL,
	    .period_ns = P,
	    .budget_ns = 400 * US,
	    .deadline_ns = 900 * US,
	};
	struct domain_config cfg = test_config(class);
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->s = sched_create(&sp, T0);
	assert_non_null(f->s);
	f->dom = sched_add_domain(f->s, &dp, T0);
	assert_int_equal(f->dom, 0);
	f->d = domain_create(&cfg);
	assert_non_null(f->d);
	return f;
}

static void fixture_destroy(struct fixture *f)
{
	/* Nothing a test does here breaks the scheduler's invariants. */
	for (unsigned i = 0; i < SCHED_INV_COUNT; i++) {
		if (sched_invariant_violations(f->s, (enum sched_invariant)i)) {
			print_error("invariant %s broken\n",
				    sched_invariant_name((enum sched_invariant)i));
			fail();
		}
	}
	domain_destroy(f->d);
	sched_destroy(f->s);
	free(f);
}

static int setup(void **state)
{
	*state = fixture_create(DOMAIN_CLASS_NORMAL);
	return 0;
}

static int teardown(void **state)
{
	fixture_destroy(*state);
	return 0;
}

/*
 * One group that started at @start_ns and ran @measured_ns (predicted
 * @predicted_ns), as mediatord sees it: granted, completed, recorded.
 */
static void run_group(struct fixture *f, uint64_t start_ns, uint64_t measured_ns,
		      uint64_t predicted_ns)
{
	struct sched_decision dec[4];
	struct wire_group g;
	uint64_t id = ++f->next_id;

	assert_int_equal(sched_submit(f->s, id, f->dom, predicted_ns, predicted_ns, 0, start_ns),
			 0);
	assert_int_equal(sched_poll(f->s, start_ns, dec, 4), 1);
	assert_int_equal(dec[0].id, id);
	assert_int_equal(sched_complete(f->s, id, measured_ns, start_ns + measured_ns), 0);
	memset(&g, 0, sizeof(g));
	g.hdr.type = WIRE_GROUP;
	g.hdr.size = sizeof(g);
	g.seq = id;
	g.dispatch_ns = start_ns;
	g.start_ns = start_ns;
	g.end_ns = start_ns + measured_ns;
	g.predicted_ns = predicted_ns;
	domain_charge_group(f->d, &g);
}

/* The domain's show-budgets object as of @now_ns, as mediatord builds it. */
static struct json_object *budgets(struct fixture *f, uint64_t now_ns)
{
	struct sched_domain_stats st;
	struct json_object *o;

	sched_advance(f->s, now_ns);
	assert_int_equal(sched_domain_stats(f->s, f->dom, &st), 0);
	o = domain_to_json(f->d, &st);
	assert_non_null(o);
	return o;
}

/* The value of integer field @key of show-budgets at @now_ns. */
static int64_t field(struct fixture *f, const char *key, uint64_t now_ns)
{
	struct json_object *o = budgets(f, now_ns);
	struct json_object *v;
	int64_t value;

	if (!json_object_object_get_ex(o, key, &v)) {
		print_error("field '%s' is missing\n", key);
		fail();
	}
	assert_true(json_object_is_type(v, json_type_int));
	value = json_object_get_int64(v);
	json_object_put(o);
	return value;
}

static double utilization(struct fixture *f, uint64_t now_ns)
{
	struct json_object *o = budgets(f, now_ns);
	struct json_object *v;
	double value;

	assert_true(json_object_object_get_ex(o, "utilization", &v));
	assert_true(json_object_is_type(v, json_type_double));
	value = json_object_get_double(v);
	json_object_put(o);
	return value;
}

static void assert_near(double a, double b)
{
	if (a < b - 1e-9 || a > b + 1e-9) {
		print_error("%.9f is not %.9f\n", a, b);
		fail();
	}
}

/*
 * The per-period figures at @now_ns: period and budget in force, use this
 * and last period, the last period's length, utilization, debt and what
 * is left (all in us).
 */
struct period_figures {
	int64_t period, budget, used_this, used_last, last_period, debt, remaining;
	double utilization;
};

static void assert_figures(struct fixture *f, uint64_t now_ns, struct period_figures want)
{
	assert_int_equal(field(f, "period_us", now_ns), want.period);
	assert_int_equal(field(f, "budget_us", now_ns), want.budget);
	assert_int_equal(field(f, "used_this_period_us", now_ns), want.used_this);
	assert_int_equal(field(f, "used_last_period_us", now_ns), want.used_last);
	assert_int_equal(field(f, "last_period_us", now_ns), want.last_period);
	assert_int_equal(field(f, "debt_us", now_ns), want.debt);
	assert_int_equal(field(f, "remaining_us", now_ns), want.remaining);
	assert_near(utilization(f, now_ns), want.utilization);
	/* One meaning of remaining: the budget less the debt and this period's use. */
	assert_int_equal(want.remaining, want.budget - want.debt - want.used_this > 0
					     ? want.budget - want.debt - want.used_this
					     : 0);
}

static void new_domain_has_its_whole_budget_and_no_use(void **state)
{
	struct fixture *f = *state;

	assert_figures(f, T0,
		       (struct period_figures){.period = 1000, .budget = 400, .remaining = 400});
	assert_int_equal(field(f, "used_us", T0), 0);
	assert_int_equal(field(f, "groups", T0), 0);
	assert_int_equal(field(f, "clients", T0), 0);
	assert_int_equal(field(f, "contexts", T0), 0);
}

static void domain_copies_its_name_and_sockets(void **state)
{
	struct domain_config cfg = test_config(DOMAIN_CLASS_SAFETY);
	struct domain *d = domain_create(&cfg);
	struct sched_domain_stats st = {.params = {.class = SCHED_CLASS_SAFETY}};
	struct json_object *o, *v;

	assert_non_null(d);
	strcpy(cfg.name, "changed");
	strcpy(cfg.vtest_socket, "/changed");
	assert_string_equal(domain_name(d), "cluster");
	o = domain_to_json(d, &st);
	assert_true(json_object_object_get_ex(o, "vtest_socket", &v));
	assert_string_equal(json_object_get_string(v), "/tmp/cluster.vtest");
	assert_true(json_object_object_get_ex(o, "vhost_user_socket", &v));
	assert_string_equal(json_object_get_string(v), "");
	json_object_put(o);
	domain_destroy(d);
}

static void group_is_charged_to_the_current_period_and_the_totals(void **state)
{
	struct fixture *f = *state;

	run_group(f, T0 + 50 * US, 50 * US, 60 * US);
	run_group(f, T0 + 200 * US, 100 * US, 90 * US);
	assert_figures(f, T0 + 400 * US,
		       (struct period_figures){
			   .period = 1000, .budget = 400, .used_this = 150, .remaining = 250});
	assert_int_equal(field(f, "used_us", T0 + 400 * US), 150);
	assert_int_equal(field(f, "predicted_us", T0 + 400 * US), 150);
	assert_int_equal(field(f, "predicted_this_period_us", T0 + 400 * US), 150);
	assert_int_equal(field(f, "groups", T0 + 400 * US), 2);
}

static void period_rollover_moves_use_to_the_last_period(void **state)
{
	struct fixture *f = *state;

	run_group(f, T0 + 200 * US, 300 * US, 0);
	assert_figures(f, T0 + P,
		       (struct period_figures){.period = 1000,
					       .budget = 400,
					       .used_last = 300,
					       .last_period = 1000,
					       .remaining = 400,
					       .utilization = 0.3});
	/* One more period without groups: the last period had no use. */
	assert_figures(f, T0 + 2 * P,
		       (struct period_figures){
			   .period = 1000, .budget = 400, .last_period = 1000, .remaining = 400});
	assert_int_equal(field(f, "used_us", T0 + 2 * P), 300);
}

static void skipping_several_periods_resets_the_last_period(void **state)
{
	struct fixture *f = *state;

	run_group(f, T0 + 200 * US, 300 * US, 0);
	/* Nothing happens for a while, then show-budgets runs in period 5. */
	assert_figures(f, T0 + 5 * P + 1,
		       (struct period_figures){
			   .period = 1000, .budget = 400, .last_period = 1000, .remaining = 400});
	assert_int_equal(field(f, "used_us", T0 + 5 * P + 1), 300);
}

static void overspending_shows_nothing_left_and_becomes_debt(void **state)
{
	struct fixture *f = *state;

	run_group(f, T0, 900 * US, 100 * US);
	assert_figures(f, T0 + 950 * US,
		       (struct period_figures){.period = 1000, .budget = 400, .used_this = 900});
	assert_int_equal(field(f, "overruns", T0 + 950 * US), 1);
	/* 500 us overspent: taken from the next period's budget. */
	assert_figures(f, T0 + P,
		       (struct period_figures){.period = 1000,
					       .budget = 400,
					       .used_last = 900,
					       .last_period = 1000,
					       .debt = 500,
					       .utilization = 0.9});
	/* Paid off by the period after: its whole budget again. */
	assert_figures(
	    f, T0 + 2 * P,
	    (struct period_figures){
		.period = 1000, .budget = 400, .last_period = 1000, .remaining = 300, .debt = 100});
	assert_figures(f, T0 + 3 * P,
		       (struct period_figures){
			   .period = 1000, .budget = 400, .last_period = 1000, .remaining = 400});
}

/*
 * set-budget gives the domain a period of 4000 us (budget 2000 us) from
 * its next boundary, T0 + P: until then every figure is the old period's;
 * from then on the periods are [T0 + P, T0 + 5P), [T0 + 5P, T0 + 9P), ...
 * (not multiples of 4000 us since T0), the use of each is counted in it,
 * and the utilization of the last period is over that period's own length.
 */
static void a_new_period_applies_to_every_figure_from_its_boundary(void **state)
{
	struct fixture *f = *state;
	char why[200];

	run_group(f, T0 + 200 * US, 300 * US, 0);
	assert_int_equal(sched_set_budget(f->s, f->dom, 4 * P, 2000 * US, 4 * P, why, sizeof(why)),
			 0);
	/* Before the boundary: the old period, budget and use. */
	assert_figures(f, T0 + 700 * US,
		       (struct period_figures){
			   .period = 1000, .budget = 400, .used_this = 300, .remaining = 100});
	assert_int_equal(field(f, "deadline_us", T0 + 700 * US), 900);

	/* The first new period: the last one was 1000 us long. */
	run_group(f, T0 + 1500 * US, 1500 * US, 0);
	assert_figures(f, T0 + 3000 * US,
		       (struct period_figures){.period = 4000,
					       .budget = 2000,
					       .used_this = 1500,
					       .used_last = 300,
					       .last_period = 1000,
					       .remaining = 500,
					       .utilization = 0.3});
	assert_int_equal(field(f, "deadline_us", T0 + 3000 * US), 4000);
	/* 1500 us more in the same period: 1000 us overspent. */
	run_group(f, T0 + 3000 * US, 1500 * US, 0);
	assert_figures(f, T0 + 5 * P - 1,
		       (struct period_figures){.period = 4000,
					       .budget = 2000,
					       .used_this = 3000,
					       .used_last = 300,
					       .last_period = 1000,
					       .utilization = 0.3});

	/* The second new period starts at T0 + 5P: its last period was 4000 us long. */
	assert_figures(f, T0 + 5 * P,
		       (struct period_figures){.period = 4000,
					       .budget = 2000,
					       .used_last = 3000,
					       .last_period = 4000,
					       .debt = 1000,
					       .remaining = 1000,
					       .utilization = 0.75});
	run_group(f, T0 + 8 * P, 200 * US, 0);
	assert_figures(f, T0 + 9 * P - 1,
		       (struct period_figures){.period = 4000,
					       .budget = 2000,
					       .used_this = 200,
					       .used_last = 3000,
					       .last_period = 4000,
					       .debt = 1000,
					       .remaining = 800,
					       .utilization = 0.75});
	/* Idle periods of the new length: nothing used in the last, nothing owed. */
	assert_figures(f, T0 + 17 * P + 10 * US,
		       (struct period_figures){
			   .period = 4000, .budget = 2000, .last_period = 4000, .remaining = 2000});
	/* Totals know no periods. */
	assert_int_equal(field(f, "used_us", T0 + 17 * P + 10 * US), 300 + 1500 + 1500 + 200);
	assert_int_equal(field(f, "groups", T0 + 17 * P + 10 * US), 4);
}

/* A period made shorter: 1000 us, then 250 us from T0 + P. */
static void a_shorter_period_applies_from_its_boundary_too(void **state)
{
	struct fixture *f = *state;
	char why[200];

	assert_int_equal(sched_set_budget(f->s, f->dom, P / 4, 100 * US, P / 4, why, sizeof(why)),
			 0);
	run_group(f, T0 + 500 * US, 400 * US, 0);
	run_group(f, T0 + P + 50 * US, 100 * US, 0);
	assert_figures(f, T0 + P + 200 * US,
		       (struct period_figures){.period = 250,
					       .budget = 100,
					       .used_this = 100,
					       .used_last = 400,
					       .last_period = 1000,
					       .utilization = 0.4});
	run_group(f, T0 + P + 250 * US, 50 * US, 0);
	assert_figures(f, T0 + P + 400 * US,
		       (struct period_figures){.period = 250,
					       .budget = 100,
					       .used_this = 50,
					       .used_last = 100,
					       .last_period = 250,
					       .remaining = 50,
					       .utilization = 0.4});
}

static void times_are_reported_in_whole_microseconds(void **state)
{
	struct fixture *f = *state;

	run_group(f, T0 + 100 * US, 1999, 2999);
	assert_int_equal(field(f, "used_us", T0 + 100 * US), 1);
	assert_int_equal(field(f, "used_this_period_us", T0 + 100 * US), 1);
	assert_int_equal(field(f, "predicted_us", T0 + 100 * US), 2);
}

static void client_count_follows_adds_and_removes_and_stays_at_zero(void **state)
{
	struct fixture *f = *state;

	domain_client_added(f->d);
	domain_client_added(f->d);
	assert_int_equal(field(f, "clients", T0), 2);
	domain_client_removed(f->d);
	assert_int_equal(field(f, "clients", T0), 1);
	domain_client_removed(f->d);
	domain_client_removed(f->d);
	assert_int_equal(field(f, "clients", T0), 0);
}

static void context_count_follows_changes_and_stays_at_zero(void **state)
{
	struct fixture *f = *state;

	domain_contexts_changed(f->d, +1);
	domain_contexts_changed(f->d, +1);
	domain_contexts_changed(f->d, +1);
	assert_int_equal(field(f, "contexts", T0), 3);
	domain_contexts_changed(f->d, -1);
	assert_int_equal(field(f, "contexts", T0), 2);
	domain_contexts_changed(f->d, -1);
	domain_contexts_changed(f->d, -1);
	domain_contexts_changed(f->d, -1);
	assert_int_equal(field(f, "contexts", T0), 0);
	domain_contexts_changed(f->d, +1);
	assert_int_equal(field(f, "contexts", T0), 1);
}

static void timestamp_source_is_none_until_a_worker_says(void **state)
{
	struct fixture *f = *state;
	struct json_object *o, *v;

	o = budgets(f, T0);
	assert_true(json_object_object_get_ex(o, "timestamp_source", &v));
	assert_string_equal(json_object_get_string(v), "none");
	json_object_put(o);

	domain_set_timestamp_source(f->d, "fence-callback");
	o = budgets(f, T0);
	assert_true(json_object_object_get_ex(o, "timestamp_source", &v));
	assert_string_equal(json_object_get_string(v), "fence-callback");
	json_object_put(o);
}

/* The show-budgets fields of a domain (doc/operating.md) and their JSON types. */
static const struct {
	const char *key;
	enum json_type type;
} show_budgets_fields[] = {
    {"name", json_type_string},
    {"class", json_type_string},
    {"vtest_socket", json_type_string},
    {"vhost_user_socket", json_type_string},
    {"period_us", json_type_int},
    {"budget_us", json_type_int},
    {"deadline_us", json_type_int},
    {"strict", json_type_boolean},
    {"guard_us", json_type_int},
    {"remaining_us", json_type_int},
    {"used_this_period_us", json_type_int},
    {"used_last_period_us", json_type_int},
    {"last_period_us", json_type_int},
    {"utilization", json_type_double},
    {"debt_us", json_type_int},
    {"predicted_this_period_us", json_type_int},
    {"used_us", json_type_int},
    {"predicted_us", json_type_int},
    {"groups", json_type_int},
    {"clients", json_type_int},
    {"contexts", json_type_int},
    {"timestamp_source", json_type_string},
    {"overruns", json_type_int},
    {"deadline_misses", json_type_int},
    {"throttled", json_type_int},
    {"unschedulable", json_type_int},
    {"frames", json_type_int},
    {"waiting", json_type_int},
    {"in_flight", json_type_int},
    {"frame_cost_us", json_type_int},
    {"observed_period_us", json_type_int},
};

static void json_has_every_show_budgets_field_with_its_type(void **state)
{
	struct fixture *f = fixture_create(DOMAIN_CLASS_SAFETY);
	struct json_object *o = budgets(f, T0 + 10 * US);
	struct json_object *v;

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
	assert_true(json_object_object_get_ex(o, "deadline_us", &v));
	assert_int_equal(json_object_get_int64(v), 900);
	/* Before any frame, the frame cost the scheduler protects is the budget. */
	assert_true(json_object_object_get_ex(o, "frame_cost_us", &v));
	assert_int_equal(json_object_get_int64(v), 400);
	json_object_put(o);
	fixture_destroy(f);
}

static void normal_class_is_named_normal_and_has_no_frames(void **state)
{
	struct fixture *f = *state;
	struct json_object *o = budgets(f, T0), *v;

	assert_true(json_object_object_get_ex(o, "class", &v));
	assert_string_equal(json_object_get_string(v), "normal");
	assert_false(json_object_object_get_ex(o, "frame_cost_us", &v));
	assert_false(json_object_object_get_ex(o, "observed_period_us", &v));
	json_object_put(o);
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
	    cmocka_unit_test(domain_copies_its_name_and_sockets),
	    DOMAIN_TEST(group_is_charged_to_the_current_period_and_the_totals),
	    DOMAIN_TEST(period_rollover_moves_use_to_the_last_period),
	    DOMAIN_TEST(skipping_several_periods_resets_the_last_period),
	    DOMAIN_TEST(overspending_shows_nothing_left_and_becomes_debt),
	    DOMAIN_TEST(a_new_period_applies_to_every_figure_from_its_boundary),
	    DOMAIN_TEST(a_shorter_period_applies_from_its_boundary_too),
	    DOMAIN_TEST(times_are_reported_in_whole_microseconds),
	    DOMAIN_TEST(client_count_follows_adds_and_removes_and_stays_at_zero),
	    DOMAIN_TEST(context_count_follows_changes_and_stays_at_zero),
	    DOMAIN_TEST(timestamp_source_is_none_until_a_worker_says),
	    cmocka_unit_test(json_has_every_show_budgets_field_with_its_type),
	    DOMAIN_TEST(normal_class_is_named_normal_and_has_no_frames),
	    cmocka_unit_test(destroying_null_is_fine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
