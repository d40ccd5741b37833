// SPDX-License-Identifier: MIT
/*
 * Tests of the bound (predict_model.h): never below the prediction, holds
 * with the configured probability on Gaussian residuals, and widens when
 * a context's groups suddenly take 3x longer until it holds again; per
 * kind of group, a steady kind gets a tight bound beside a kind with a
 * long tail, which keeps the context's margin.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "predict_model.h"

struct rng {
	uint64_t s;
};

static double rng_uniform(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return (double)((r->s * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static double rng_gauss(struct rng *r)
{
	double u = rng_uniform(r), v = rng_uniform(r);

	return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

static void bound_is_never_below_the_prediction(void **state)
{
	struct predict_bound *b = predict_bound_create(0.995);
	struct rng r = {1};

	assert_non_null(b);
	assert_true(predict_bound_of(b, 1000) >= 1000); /* no residuals yet */
	assert_true(predict_bound_margin(b) == 0);
	/* Only over-predictions: the margin stays 0, never negative. */
	for (int i = 0; i < 1000; i++)
		predict_bound_update(b, 1e6, 1e6 * (0.5 + 0.4 * rng_uniform(&r)), true);
	assert_true(predict_bound_margin(b) == 0);
	for (int i = 0; i < 5000; i++) {
		double p = 1e6 * rng_uniform(&r);

		predict_bound_update(b, p, p * (0.5 + rng_uniform(&r)), true);
		assert_true(predict_bound_margin(b) >= 0);
		assert_true(predict_bound_of(b, p) >= p);
	}
	/* Non-finite input is ignored. */
	predict_bound_update(b, NAN, 1, true);
	predict_bound_update(b, 1, INFINITY, true);
	assert_true(isfinite(predict_bound_margin(b)));
	predict_bound_destroy(b);
}

static void bound_is_exceeded_rarely_with_gaussian_residuals(void **state)
{
	struct predict_bound *b = predict_bound_create(0.995);
	struct rng r = {2};
	int over = 0, n = 100000, warmup = 1000;

	for (int i = 0; i < warmup + n; i++) {
		double p = 2e5 + 1e5 * rng_uniform(&r);
		double t = p + 5000 * rng_gauss(&r);

		if (i >= warmup && t > predict_bound_of(b, p))
			over++;
		predict_bound_update(b, p, t, true);
	}
	printf("# 0.995 bound exceeded by %.3f %% of %d groups; margin %.0f ns (2.58 sigma = "
	       "12900)\n",
	       100.0 * over / n, n, predict_bound_margin(b));
	assert_true(over <= n / 100);
	/* And not absurdly wide: below 4 sigma. */
	assert_true(predict_bound_margin(b) < 4 * 5000);
	predict_bound_destroy(b);
}

static void margin_widens_when_times_jump_until_the_bound_holds(void **state)
{
	struct predict_bound *b = predict_bound_create(0.995);
	struct rng r = {3};
	double before;
	int over_late = 0, held_from = -1, run = 0;

	/* A context predicted at 1 ms that took 1 ms +- 2 %. */
	for (int i = 0; i < 2000; i++)
		predict_bound_update(b, 1e6, 1e6 * (1 + 0.02 * rng_gauss(&r)), true);
	before = predict_bound_margin(b);
	/* Its groups now take 3x as long; the prediction does not follow. */
	for (int i = 0; i < 2000; i++) {
		double t = 3e6 * (1 + 0.02 * rng_gauss(&r));
		bool over = t > predict_bound_of(b, 1e6);

		run = over ? 0 : run + 1;
		if (run == 20 && held_from < 0)
			held_from = i - 19; /* 20 groups in a row within the bound */
		if (i >= 100)
			over_late += over;
		predict_bound_update(b, 1e6, t, true);
	}
	printf("# margin %.0f ns before the jump, %.0f after; held from group %d on, then "
	       "%d of 1900 exceeded\n",
	       before, predict_bound_margin(b), held_from, over_late);
	assert_true(predict_bound_margin(b) > 2e6);
	assert_true(held_from >= 0 && held_from < 20);
	assert_true(over_late <= 1900 / 100);
	predict_bound_destroy(b);
}

/*
 * A window not yet full is not set by one outlier alone: like a full
 * window (whose 0.995 quantile is its 510th of 512), it spares its two
 * largest residuals. One cluster group slowed from 1 ms to 17 ms by a
 * client starting beside it leaves the margin near the others; three such
 * groups set it.
 */
static void one_outlier_does_not_set_a_young_margin(void **state)
{
	struct predict_bound *b = predict_bound_create(0.995);

	(void)state;
	for (int i = 0; i < 100; i++)
		predict_bound_update(b, 1e6, 1e6 + 1e3 * (i % 50), true);
	predict_bound_update(b, 1e6, 17e6, true);
	assert_true(predict_bound_margin(b) < 0.1e6);
	predict_bound_update(b, 1e6, 17e6, true);
	assert_true(predict_bound_margin(b) < 0.1e6);
	predict_bound_update(b, 1e6, 17e6, true);
	assert_true(predict_bound_margin(b) >= 16e6);
	predict_bound_destroy(b);
}

/*
 * Residuals of groups that are not judged (a context's start-up) join the
 * window but their overruns do not widen the margin: the same overrunning
 * groups judged inflate it beyond the largest residual.
 */
static void unjudged_overruns_do_not_widen_the_margin(void **state)
{
	struct predict_bound *judged = predict_bound_create(0.995);
	struct predict_bound *unjudged = predict_bound_create(0.995);

	(void)state;
	for (int i = 0; i < 64; i++) {
		double t = 1e6 + (i % 8 == 7 ? 1e6 : 1e3 * i); /* every 8th group twice as long */

		predict_bound_update(judged, 1e6, t, true);
		predict_bound_update(unjudged, 1e6, t, false);
	}
	assert_true(predict_bound_margin(unjudged) == 1e6); /* the largest residual */
	assert_true(predict_bound_margin(judged) > 1.4e6);
	predict_bound_destroy(judged);
	predict_bound_destroy(unjudged);
}

static void persistent_overruns_inflate_the_margin(void **state)
{
	struct predict_bound *b = predict_bound_create(0.9);
	double plain;
	int over = 0;

	/* Residuals that grow steadily: the window's quantile lags behind. */
	for (int i = 0; i < 600; i++)
		predict_bound_update(b, 1e6, 1e6 + 1000.0 * (i % 512), true);
	plain = predict_bound_margin(b);
	for (int i = 0; i < 2000; i++) {
		double t = 1e6 + 1000.0 * (i % 5000) + 600e3;

		over += t > predict_bound_of(b, 1e6);
		predict_bound_update(b, 1e6, t, true);
	}
	printf("# drifting residuals: margin %.0f -> %.0f ns, %d of 2000 exceeded\n", plain,
	       predict_bound_margin(b), over);
	assert_true(over < 2000 / 5);
	/* Wider than any residual in the window: only inflation gets there. */
	assert_true(predict_bound_margin(b) > 600e3 + 1000.0 * 1999);
	predict_bound_destroy(b);
}

/* Kinds of the tests below (any nonzero values: the bound only compares them). */
#define STEADY 0x57eadull
#define TAILED 0x7a11ull

/*
 * One group of @kind predicted at 1 ms: a steady kind takes 1 ms +- 1 %,
 * a tailed one 1 ms +- 15 % and one group in 100 three times as long.
 * Returns its measured time.
 */
static double group_of(struct rng *r, uint64_t kind)
{
	if (kind != TAILED)
		return 1e6 * (1 + 0.01 * rng_gauss(r));
	if (rng_uniform(r) < 0.01)
		return 3e6;
	return 1e6 * (1 + 0.15 * rng_gauss(r));
}

/*
 * Two kinds interleaved in one context. The context's margin is set by
 * the tailed kind's spread (a third of a millisecond); given to the steady
 * kind, whose groups stray by 10 us, its bound would be 1.35x what it
 * takes. Per kind, the steady kind's bound stays within 1.2x, and the
 * tailed kind keeps the context's margin: over by no more of its groups
 * than the context-wide margin let through (its 3 ms groups, 1 % of it,
 * are 0.5 % of the context, at the edge of a 0.995 quantile).
 */
static void steady_kind_gets_a_tight_bound_beside_a_tailed_one(void **state)
{
	struct predict_bound *b = predict_bound_create(0.995);
	struct rng r = {4};
	int over[2] = {0, 0}, n = 20000, warmup = 2000;
	double steady_bound = 0, steady_sum = 0;

	(void)state;
	assert_non_null(b);
	for (int i = 0; i < warmup + n; i++) {
		uint64_t kind = i % 2 ? TAILED : STEADY;
		double t = group_of(&r, kind), bound = predict_bound_of_kind(b, kind, 1e6);

		assert_true(bound >= 1e6);
		if (i >= warmup) {
			over[kind == TAILED] += t > bound;
			if (kind == STEADY && bound > steady_bound)
				steady_bound = bound;
			if (kind == STEADY)
				steady_sum += bound;
		}
		predict_bound_update_kind(b, kind, 1e6, t, true);
	}
	printf("# steady kind: bound %.0f ns on average, at most %.0f, %d of %d over; tailed kind: "
	       "bound %.0f ns, %d of %d over; context margin %.0f ns\n",
	       steady_sum / (n / 2), steady_bound, over[0], n / 2,
	       predict_bound_of_kind(b, TAILED, 1e6), over[1], n / 2, predict_bound_margin(b));
	assert_true(steady_sum / (n / 2) <= 1.2e6);
	assert_true(over[0] <= n / 2 / 200);
	assert_true(predict_bound_of_kind(b, TAILED, 1e6) == predict_bound_of(b, 1e6));
	assert_true(predict_bound_of(b, 1e6) > 1.3e6);
	assert_true(over[1] <= n / 2 * 3 / 200);
	predict_bound_destroy(b);
}

/* Feeds @groups steady groups of @kind predicted at 1 ms. */
static void feed(struct predict_bound *b, struct rng *r, uint64_t kind, int groups)
{
	for (int i = 0; i < groups; i++)
		predict_bound_update_kind(b, kind, 1e6, group_of(r, kind), true);
}

/* A context whose margin the tailed kind set, and a steady kind with a margin of its own. */
static struct predict_bound *two_kinds(struct rng *r)
{
	struct predict_bound *b = predict_bound_create(0.995);

	assert_non_null(b);
	for (int i = 0; i < 2000; i++) {
		feed(b, r, TAILED, 1);
		feed(b, r, STEADY, 1);
	}
	assert_true(predict_bound_of_kind(b, STEADY, 1e6) < predict_bound_of(b, 1e6));
	return b;
}

/* Kind 0, a kind never seen, one seen fewer than PREDICT_BOUND_KIND_MIN times: the context's. */
static void unknown_kinds_get_the_context_margin(void **state)
{
	struct rng r = {5};
	struct predict_bound *b = two_kinds(&r);
	double context = predict_bound_of(b, 1e6);

	(void)state;
	assert_true(predict_bound_of_kind(b, 0, 1e6) == context);
	assert_true(predict_bound_of_kind(b, 0x1234, 1e6) == context);
	feed(b, &r, 0x1234, PREDICT_BOUND_KIND_MIN - 1);
	assert_true(predict_bound_of_kind(b, 0x1234, 1e6) == predict_bound_of(b, 1e6));
	feed(b, &r, 0x1234, 1);
	assert_true(predict_bound_of_kind(b, 0x1234, 1e6) < predict_bound_of(b, 1e6));
	predict_bound_destroy(b);
}

/*
 * The table holds PREDICT_BOUND_KINDS kinds: a new one takes the slot of
 * the one updated least recently, which falls back to the context's
 * margin; a kind still in use keeps its own.
 */
static void the_least_recently_updated_kind_is_evicted(void **state)
{
	struct rng r = {6};
	struct predict_bound *b = two_kinds(&r);
	uint64_t k;

	(void)state;
	/* The tailed kind was updated before the steady one: it leaves first. */
	for (k = 1; k < PREDICT_BOUND_KINDS - 1; k++) {
		feed(b, &r, 0x100 + k, 1);
		feed(b, &r, STEADY, 1);
	}
	assert_true(predict_bound_of_kind(b, STEADY, 1e6) < predict_bound_of(b, 1e6));
	feed(b, &r, 0x100 + k, 1); /* one more kind: the tailed one is evicted */
	feed(b, &r, STEADY, 1);
	assert_true(predict_bound_of_kind(b, STEADY, 1e6) < predict_bound_of(b, 1e6));
	/* Not in use any more, the steady kind is evicted by PREDICT_BOUND_KINDS new ones. */
	for (k = 0; k < PREDICT_BOUND_KINDS - 1; k++)
		feed(b, &r, 0x1000 + k, 1);
	assert_true(predict_bound_of_kind(b, STEADY, 1e6) < predict_bound_of(b, 1e6));
	for (; k < PREDICT_BOUND_KINDS; k++)
		feed(b, &r, 0x1000 + k, 1);
	assert_true(predict_bound_of_kind(b, STEADY, 1e6) == predict_bound_of(b, 1e6));
	predict_bound_destroy(b);
}

/*
 * A steady kind whose group exceeds its own margin widens it at once
 * (by BOUND_INFLATE and its scale), without waiting for a share of
 * exceedances it would take hundreds of groups to see; and narrows again.
 */
static void a_kind_exceeded_widens_at_once(void **state)
{
	struct rng r = {8};
	struct predict_bound *b = two_kinds(&r);
	double before = predict_bound_of_kind(b, STEADY, 1e6) - 1e6, after;

	(void)state;
	predict_bound_update_kind(b, STEADY, 1e6, 1e6 + 2 * before, true);
	after = predict_bound_of_kind(b, STEADY, 1e6) - 1e6;
	printf("# steady kind's margin %.0f ns, after one group over it %.0f ns\n", before, after);
	assert_true(after >= 1.5 * before);
	feed(b, &r, STEADY, 2000);
	assert_true(predict_bound_of_kind(b, STEADY, 1e6) - 1e6 < 1.2 * before);
	predict_bound_destroy(b);
}

/*
 * Non-finite and huge inputs of a kind: ignored or clamped; every bound
 * stays finite and at least the prediction.
 */
static void hostile_inputs_leave_kind_bounds_finite(void **state)
{
	struct rng r = {7};
	struct predict_bound *b = two_kinds(&r);
	const double odd[] = {NAN, INFINITY, -INFINITY, 1e300, -1e300, 0, -1, 1e-300};

	(void)state;
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		for (size_t j = 0; j < sizeof(odd) / sizeof(odd[0]); j++)
			predict_bound_update_kind(b, STEADY, odd[i], odd[j], true);
		predict_bound_update_kind(b, STEADY, 1e6, odd[i], true);
		predict_bound_update_kind(b, STEADY, odd[i], 1e6, true);
	}
	for (int i = 0; i < 100; i++)
		predict_bound_update_kind(b, STEADY, 1e6, 1e300, true);
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		double p = isfinite(odd[i]) ? odd[i] : 1e6;

		for (uint64_t kind = 0; kind < 3; kind++) {
			double bound =
			    predict_bound_of_kind(b, kind ? (kind == 1 ? STEADY : TAILED) : 0, p);

			assert_true(isfinite(bound));
			assert_true(bound >= p);
		}
	}
	assert_true(predict_bound_of_kind(b, STEADY, NAN) >= 0);
	assert_true(isfinite(predict_bound_margin(b)));
	/* And the steady kind recovers once its groups are steady again. */
	feed(b, &r, STEADY, 4000);
	assert_true(predict_bound_of_kind(b, STEADY, 1e6) <= 1.2e6);
	predict_bound_destroy(b);
}

static void create_refuses_bad_quantiles_and_destroy_accepts_null(void **state)
{
	assert_null(predict_bound_create(0));
	assert_null(predict_bound_create(1));
	assert_null(predict_bound_create(NAN));
	assert_null(predict_bound_create(-0.5));
	predict_bound_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(bound_is_never_below_the_prediction),
	    cmocka_unit_test(bound_is_exceeded_rarely_with_gaussian_residuals),
	    cmocka_unit_test(margin_widens_when_times_jump_until_the_bound_holds),
	    cmocka_unit_test(one_outlier_does_not_set_a_young_margin),
	    cmocka_unit_test(unjudged_overruns_do_not_widen_the_margin),
	    cmocka_unit_test(persistent_overruns_inflate_the_margin),
	    cmocka_unit_test(steady_kind_gets_a_tight_bound_beside_a_tailed_one),
	    cmocka_unit_test(unknown_kinds_get_the_context_margin),
	    cmocka_unit_test(the_least_recently_updated_kind_is_evicted),
	    cmocka_unit_test(a_kind_exceeded_widens_at_once),
	    cmocka_unit_test(hostile_inputs_leave_kind_bounds_finite),
	    cmocka_unit_test(create_refuses_bad_quantiles_and_destroy_accepts_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
