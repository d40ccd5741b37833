// SPDX-License-Identifier: MIT
/*
 * Tests of the recent cost of similar groups (predict_recent.h): what is
 * one kind and what is not, a kind the model misses follows its level, a
 * kind the model predicts keeps the model's prediction, the estimator
 * uses it, and the table survives a round trip while bad states are
 * refused without changing it.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "predict_estimator.h"
#include "predict_recent.h"

#define MS 1000000.0

static void draw(struct predict_features *f, double vertices, double fragments)
{
	memset(f, 0, sizeof(*f));
	f->x[PF_GROUP] = 1;
	f->x[PF_DRAWS] = 1;
	f->x[PF_VERTICES] = vertices;
	f->x[PF_FRAGMENTS] = fragments;
}

/* Features within a few percent are one kind; twice the size, or one more feature, is another. */
static void a_kind_is_the_features_rounded_to_ten_percent(void **state)
{
	struct predict_features a, b;
	uint64_t k;

	(void)state;
	draw(&a, 3000, 100000);
	k = predict_recent_kind(&a);
	assert_true(k != 0);
	draw(&b, 3000, 100400); /* fragments +0.4 %: the same bucket */
	assert_true(predict_recent_kind(&b) == k);
	draw(&b, 3000, 200000);
	assert_true(predict_recent_kind(&b) != k);
	draw(&b, 6000, 100000);
	assert_true(predict_recent_kind(&b) != k);
	draw(&b, 3000, 100000);
	b.x[PF_TRANSFER_BYTES] = 1;
	assert_true(predict_recent_kind(&b) != k);
	/* Values a guest controls cannot break it. */
	b.x[PF_VERTICES] = NAN;
	b.x[PF_FRAGMENTS] = INFINITY;
	b.x[PF_DRAWS] = -5;
	assert_true(predict_recent_kind(&b) != 0);
}

/* An unknown kind, or one seen once, is predicted by the model alone. */
static void an_unseen_kind_keeps_the_model_prediction(void **state)
{
	struct predict_recent *r = predict_recent_create();

	(void)state;
	assert_non_null(r);
	assert_true(predict_recent_predict(r, 42, 1 * MS) == 1 * MS);
	predict_recent_update(r, 42, 1 * MS, 3 * MS);
	assert_true(predict_recent_predict(r, 42, 1 * MS) == 1 * MS); /* seen once */
	assert_true(predict_recent_predict(r, 43, 2 * MS) == 2 * MS);
	assert_int_equal(predict_recent_size(r), 1);
	predict_recent_destroy(r);
	predict_recent_destroy(NULL);
}

/*
 * A kind the model keeps under-predicting by half (it says 1 ms, the
 * kind costs 2 ms, drifting to 2.4 ms) is predicted from its level.
 */
static void a_kind_the_model_misses_follows_its_level(void **state)
{
	struct predict_recent *r = predict_recent_create();
	double t = 2 * MS;

	(void)state;
	for (int i = 0; i < 20; i++) {
		predict_recent_update(r, 7, 1 * MS, t);
		t += 0.02 * MS;
	}
	assert_true(fabs(predict_recent_predict(r, 7, 1 * MS) - t) < 0.1 * t);
	predict_recent_destroy(r);
}

/* A kind the model predicts exactly, with a noisy level, keeps the model's prediction. */
static void a_kind_the_model_predicts_keeps_the_model(void **state)
{
	struct predict_recent *r = predict_recent_create();

	(void)state;
	for (int i = 0; i < 40; i++) {
		double t = (i % 2 ? 1.5 : 0.5) * MS; /* alternating: the level is always 50 % off */

		predict_recent_update(r, 9, t, t);
	}
	assert_true(fabs(predict_recent_predict(r, 9, 0.5 * MS) - 0.5 * MS) < 0.01 * MS);
	predict_recent_destroy(r);
}

/* A new kind that lands in an occupied slot takes it over. */
static void a_new_kind_takes_over_its_slot(void **state)
{
	struct predict_recent *r = predict_recent_create();
	uint64_t a = 5, b = 5 + PREDICT_RECENT_SLOTS;

	(void)state;
	for (int i = 0; i < 3; i++)
		predict_recent_update(r, a, 0, 2 * MS);
	assert_true(predict_recent_predict(r, a, 0) > 1.9 * MS);
	predict_recent_update(r, b, 0, 5 * MS);
	assert_true(predict_recent_predict(r, a, 0) == 0);
	assert_int_equal(predict_recent_size(r), 1);
	predict_recent_destroy(r);
}

/*
 * In the estimator, a repeated group whose cost steps from 2 to 3 ms with
 * the same features is predicted within 5 % of its new cost ten groups
 * later (2.93 ms); without the table, the model still lags (2.29 ms).
 */
static void the_estimator_follows_a_drifting_kind(void **state)
{
	struct predict_estimator *with =
	    predict_estimator_create(predict_model_find("sgd"), PREDICT_ESTIMATOR_RECENT);
	struct predict_estimator *without = predict_estimator_create(predict_model_find("sgd"), 0);
	struct predict_features f;
	struct predict_estimate a, b;
	double t = 0;

	(void)state;
	draw(&f, 3000, 100000);
	for (int i = 0; i < 400; i++) {
		t = (2 + (i >= 200 ? 1 : 0)) * MS;
		predict_estimator_predict(with, &f, &a);
		predict_estimator_predict(without, &f, &b);
		predict_estimator_learn(with, &f, &a, t);
		predict_estimator_learn(without, &f, &b, t);
		if (i == 210) {
			assert_true(fabs(a.predicted_ns - t) < 0.05 * t);
			assert_true(fabs(b.predicted_ns - t) > fabs(a.predicted_ns - t));
		}
	}
	assert_true(a.kind == predict_recent_kind(&f));
	assert_int_equal(predict_recent_size(predict_estimator_recent(with)), 1);
	predict_estimator_destroy(with);
	predict_estimator_destroy(without);
}

static void the_table_survives_a_round_trip(void **state)
{
	struct predict_recent *a = predict_recent_create(), *b = predict_recent_create();
	uint8_t buf[PREDICT_RECENT_SLOTS * 64], small[20];
	int n;

	(void)state;
	for (int i = 0; i < 5; i++) {
		predict_recent_update(a, 11, 1 * MS, 3 * MS);
		predict_recent_update(a, 22, 1 * MS, 1 * MS);
	}
	n = predict_recent_save(a, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(predict_recent_save(a, small, sizeof(small)), -ENOSPC);
	assert_int_equal(predict_recent_load(b, buf, (size_t)n), 0);
	assert_int_equal(predict_recent_size(b), 2);
	assert_true(predict_recent_predict(b, 11, 1 * MS) == predict_recent_predict(a, 11, 1 * MS));
	assert_true(predict_recent_predict(b, 22, 5 * MS) == predict_recent_predict(a, 22, 5 * MS));
	predict_recent_destroy(a);
	predict_recent_destroy(b);
}

/* Byte offsets in a saved table: header 12, count 4, then per kind 36 bytes. */
#define AT_COUNT    12
#define AT_KIND(i)  (16 + 36 * (i))
#define AT_LEVEL(i) (AT_KIND(i) + 8)
#define AT_ERROR(i) (AT_KIND(i) + 16)
#define AT_SEEN(i)  (AT_KIND(i) + 32)

static void put_f64(uint8_t *p, double v)
{
	uint64_t u;

	memcpy(&u, &v, 8);
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(u >> (8 * i));
}

/* Truncated, extended and corrupt tables are refused and change nothing. */
static void bad_tables_are_refused(void **state)
{
	struct predict_recent *a = predict_recent_create(), *b = predict_recent_create();
	uint8_t buf[4096], bad[4096];
	int n;

	(void)state;
	for (int i = 0; i < 3; i++) {
		predict_recent_update(a, 11, 1 * MS, 3 * MS);
		predict_recent_update(a, 12, 1 * MS, 2 * MS);
		predict_recent_update(b, 99, 1 * MS, 7 * MS);
	}
	n = predict_recent_save(a, buf, sizeof(buf));
	assert_int_equal(n, AT_KIND(2));
	for (int len = 0; len < n; len++)
		assert_int_equal(predict_recent_load(b, buf, (size_t)len), -EINVAL);
	assert_int_equal(predict_recent_load(b, buf, (size_t)n + 1), -EINVAL);
	struct {
		const char *what;
		size_t at;
		int width; /* 8: a double, 1: a byte */
		double value;
	} cases[] = {
	    {"a kind of 0", AT_KIND(0), 8, 0},
	    {"a NaN level", AT_LEVEL(1), 8, NAN},
	    {"a negative level", AT_LEVEL(0), 8, -1},
	    {"a negative error", AT_ERROR(1), 8, -0.5},
	    {"an infinite error", AT_ERROR(0), 8, INFINITY},
	    {"a kind never seen", AT_SEEN(0), 1, 0},
	    {"more kinds than slots", AT_COUNT + 2, 1, 1},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		memcpy(bad, buf, (size_t)n);
		if (cases[c].width == 8)
			put_f64(bad + cases[c].at, cases[c].value);
		else
			bad[cases[c].at] = (uint8_t)cases[c].value;
		if (predict_recent_load(b, bad, (size_t)n) != -EINVAL)
			fail_msg("%s was accepted", cases[c].what);
	}
	/* Two entries for one slot (the second kind made equal to the first). */
	memcpy(bad, buf, (size_t)n);
	memcpy(bad + AT_KIND(1), bad + AT_KIND(0), 8);
	assert_int_equal(predict_recent_load(b, bad, (size_t)n), -EINVAL);
	assert_int_equal(predict_recent_size(b), 1);
	assert_true(predict_recent_predict(b, 99, 1 * MS) > 5 * MS);
	predict_recent_destroy(a);
	predict_recent_destroy(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_kind_is_the_features_rounded_to_ten_percent),
	    cmocka_unit_test(an_unseen_kind_keeps_the_model_prediction),
	    cmocka_unit_test(a_kind_the_model_misses_follows_its_level),
	    cmocka_unit_test(a_kind_the_model_predicts_keeps_the_model),
	    cmocka_unit_test(a_new_kind_takes_over_its_slot),
	    cmocka_unit_test(the_estimator_follows_a_drifting_kind),
	    cmocka_unit_test(the_table_survives_a_round_trip),
	    cmocka_unit_test(bad_tables_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
