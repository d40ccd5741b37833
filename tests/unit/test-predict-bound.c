/*
 * Tests of the bound (predict_model.h): never below the prediction, holds
 * with the configured probability on Gaussian residuals, and widens when
 * a context's groups suddenly take 3x longer until it holds again.
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
	    cmocka_unit_test(create_refuses_bad_quantiles_and_destroy_accepts_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
