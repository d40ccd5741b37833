// SPDX-License-Identifier: MIT
/*
 * Tests of the cost models (predict_model.h): each learns known
 * coefficients from synthetic groups, history remembers and forgets,
 * states survive a save/load round trip exactly, load refuses bad states
 * without changing the model, and no input makes a prediction NaN or
 * negative; in a context's estimator, each kind of group gets a bound
 * from its own spread.
 *
 * The synthetic workload: every group has a flush; half clear the colour
 * buffer (0.2–2.1 Mpixels); 0–20 draws of 100–5000 vertices each and up to
 * 2 Mfragments. Its true time is
 *   t = 30000 + 200 cmds + 0.01 clear_c + 2000 draws + 0.5 vertices
 *       + 0.004 fragments  (ns)
 * times (1 + 2 % Gaussian noise). Accuracy is prequential: the mean
 * absolute percentage error (MAPE) of predictions made before each
 * update, over the last MAPE_WINDOW of the groups. With 2 % Gaussian
 * noise the best possible MAPE is 0.8 * 2 % = 1.6 %.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "predict_estimator.h"
#include "predict_model.h"

#define MAPE_WINDOW 2000
#define NOISE	    0.02

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 2685821657736338717ull;
}

static double rng_uniform(struct rng *r) /* [0, 1) */
{
	return (double)(rng_next(r) >> 11) / 9007199254740992.0;
}

static double rng_gauss(struct rng *r)
{
	double u = rng_uniform(r), v = rng_uniform(r);

	return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

static const double true_coef[PF_COUNT] = {
    [PF_GROUP] = 30000, [PF_CMDS] = 200,     [PF_CLEAR_C] = 0.01,
    [PF_DRAWS] = 2000,	[PF_VERTICES] = 0.5, [PF_FRAGMENTS] = 0.004,
};

/* One synthetic group; returns its noiseless time. */
static double synth_group(struct rng *r, struct predict_features *f)
{
	int draws = (int)(rng_uniform(r) * 21);
	bool clear = rng_uniform(r) < 0.5;
	double t = 0;

	memset(f, 0, sizeof(*f));
	f->x[PF_GROUP] = 1;
	f->x[PF_DRAWS] = draws;
	f->x[PF_CMDS] = draws + clear + 1;
	if (clear)
		f->x[PF_CLEAR_C] = 0.2e6 + rng_uniform(r) * 1.9e6;
	for (int d = 0; d < draws; d++)
		f->x[PF_VERTICES] += 100 + floor(rng_uniform(r) * 4900);
	if (draws)
		f->x[PF_FRAGMENTS] = floor(rng_uniform(r) * 2e6);
	f->content_hash = rng_next(r);
	for (int i = 0; i < PF_COUNT; i++)
		t += true_coef[i] * f->x[i];
	return t;
}

/* Trains @m on @n groups; returns the MAPE (%) of the last MAPE_WINDOW. */
static double train(const struct predict_model_ops *ops, struct predict_model *m, int n,
		    uint64_t seed)
{
	struct rng r = {seed};
	double sum = 0;

	for (int k = 0; k < n; k++) {
		struct predict_features f;
		double t = synth_group(&r, &f) * (1 + NOISE * rng_gauss(&r));
		double p = ops->predict(m, &f);

		assert_true(p >= 0 && isfinite(p));
		if (k >= n - MAPE_WINDOW)
			sum += fabs(p - t) / t;
		ops->update(m, &f, t);
	}
	return 100 * sum / MAPE_WINDOW;
}

struct convergence_case {
	const char *desc;
	const char *model;
	bool calibrate;	  /* linear: start from calibration ... */
	double cal_error; /* ... with every coefficient off by this factor */
	int groups;
	double mape_max; /* % */
};

static const struct convergence_case convergence_cases[] = {
    {"rls learns the coefficients from scratch", "rls", false, 0, 5000, 2.0},
    {"sgd (ADADELTA) learns them from scratch", "sgd", false, 0, 20000, 2.5},
    {"linear learns them from scratch with NLMS", "linear", false, 0, 20000, 2.5},
    {"linear corrects a calibration 30 % too high", "linear", true, 1.3, 20000, 2.0},
    {"linear keeps an exact calibration", "linear", true, 1.0, 5000, 2.0},
};

static void every_model_converges_on_synthetic_groups(void **state)
{
	for (size_t c = 0; c < sizeof(convergence_cases) / sizeof(convergence_cases[0]); c++) {
		const struct convergence_case *tc = &convergence_cases[c];
		const struct predict_model_ops *ops = predict_model_find(tc->model);
		struct predict_model *m;
		double mape;

		assert_non_null(ops);
		m = ops->create();
		assert_non_null(m);
		if (tc->calibrate) {
			double coef[PF_COUNT];

			for (int i = 0; i < PF_COUNT; i++)
				coef[i] = true_coef[i] * tc->cal_error;
			assert_int_equal(predict_model_linear_set(m, coef), 0);
		}
		mape = train(ops, m, tc->groups, 0x1234567 + c);
		printf("# %s: MAPE %.2f %% after %d groups (limit %.1f %%)\n", tc->desc, mape,
		       tc->groups, tc->mape_max);
		assert_true(mape < tc->mape_max);
		ops->destroy(m);
	}
}

static void rls_recovers_the_true_coefficients(void **state)
{
	struct predict_model *m = predict_model_rls_ops.create();
	double c[PF_COUNT];
	static const int check[] = {PF_GROUP, PF_CLEAR_C, PF_VERTICES, PF_FRAGMENTS};

	train(&predict_model_rls_ops, m, 5000, 42);
	assert_int_equal(predict_model_rls_ops.coefficients(m, c, PF_COUNT), PF_COUNT);
	for (size_t i = 0; i < sizeof(check) / sizeof(check[0]); i++) {
		double rel = fabs(c[check[i]] / true_coef[check[i]] - 1);

		printf("# rls coefficient %d: %g (true %g)\n", check[i], c[check[i]],
		       true_coef[check[i]]);
		assert_true(rel < 0.10);
	}
	predict_model_rls_ops.destroy(m);
}

static void linear_coefficients_never_go_negative(void **state)
{
	struct predict_model *m = predict_model_linear_ops.create();
	struct predict_features f = {.x = {[PF_GROUP] = 1, [PF_DRAWS] = 5}};
	double c[PF_COUNT] = {[PF_GROUP] = 50000, [PF_DRAWS] = 10000};

	assert_int_equal(predict_model_linear_set(m, c), 0);
	/* Measurements far below the calibration push the coefficients down. */
	for (int k = 0; k < 10000; k++)
		predict_model_linear_ops.update(m, &f, 10);
	predict_model_linear_ops.coefficients(m, c, PF_COUNT);
	for (int i = 0; i < PF_COUNT; i++)
		assert_true(c[i] >= 0);
	assert_true(predict_model_linear_ops.predict(m, &f) >= 0);
	predict_model_linear_ops.destroy(m);
}

static void linear_set_refuses_bad_coefficients_and_other_models(void **state)
{
	struct predict_model *lin = predict_model_linear_ops.create();
	struct predict_model *sgd = predict_model_sgd_ops.create();
	double c[PF_COUNT] = {0};

	assert_int_equal(predict_model_linear_set(sgd, c), -EINVAL);
	c[PF_DRAWS] = -1;
	assert_int_equal(predict_model_linear_set(lin, c), -EINVAL);
	c[PF_DRAWS] = NAN;
	assert_int_equal(predict_model_linear_set(lin, c), -EINVAL);
	c[PF_DRAWS] = 1;
	assert_int_equal(predict_model_linear_set(lin, c), 0);
	predict_model_linear_ops.destroy(lin);
	predict_model_sgd_ops.destroy(sgd);
}

static void history_predicts_the_last_time_of_the_same_content(void **state)
{
	const struct predict_model_ops *ops = &predict_model_history_ops;
	struct predict_model *m = ops->create();
	struct predict_features a = {.content_hash = 1}, b = {.content_hash = 2},
				unknown = {.content_hash = 3};
	double c[PF_COUNT];

	assert_true(ops->predict(m, &unknown) == 0); /* nothing seen yet */
	ops->update(m, &a, 5000);
	ops->update(m, &b, 90000);
	ops->update(m, &a, 7000);
	assert_true(ops->predict(m, &a) == 7000);
	assert_true(ops->predict(m, &b) == 90000);
	assert_true(ops->predict(m, &unknown) == 90000); /* the largest so far */
	assert_int_equal(ops->coefficients(m, c, PF_COUNT), 0);
	ops->destroy(m);
}

static void history_forgets_the_least_recently_used_content(void **state)
{
	const struct predict_model_ops *ops = &predict_model_history_ops;
	struct predict_model *m = ops->create();
	struct predict_features f = {0};

	f.content_hash = 0;
	ops->update(m, &f, 1);
	/* Far more distinct contents than the table holds; keep #0 in use. */
	for (uint64_t h = 1; h <= 20000; h++) {
		f.content_hash = h;
		ops->update(m, &f, 100 + (double)h);
		if (h % 1000 == 0) {
			f.content_hash = 0;
			assert_true(ops->predict(m, &f) == 1);
		}
	}
	f.content_hash = 20000;
	assert_true(ops->predict(m, &f) == 20100);
	f.content_hash = 0;
	assert_true(ops->predict(m, &f) == 1);
	f.content_hash = 5; /* evicted long ago: falls back to the max */
	assert_true(ops->predict(m, &f) == 20100);
	ops->destroy(m);
}

/*
 * What sgd learned per unit of a feature from small values is not
 * extrapolated to a value a thousand times larger than any seen (in
 * bench/accuracy a shader-compiling draw estimated at 75 fragments taught
 * a cost per fragment that the next draw's 75,000 fragments turned into a
 * 300 ms prediction). Trained on t = 1 ms + 10 us per fragment with 1-75
 * fragments, a group of 75,000 fragments is predicted, once seen, at most
 * at what 2 x 75 fragments cost (SGD_KEEP_GROWTH), not at 750 ms.
 */
static void sgd_does_not_extrapolate_a_feature_a_thousandfold(void **state)
{
	const struct predict_model_ops *ops = predict_model_find("sgd");
	struct predict_model *m = ops->create();
	struct predict_features f = {0};
	struct rng r = {88172645463325252ull};

	(void)state;
	f.x[PF_GROUP] = 1;
	for (int i = 0; i < 5000; i++) {
		f.x[PF_FRAGMENTS] = 1 + 74 * rng_uniform(&r);
		ops->update(m, &f, 1e6 + 1e4 * f.x[PF_FRAGMENTS]);
	}
	f.x[PF_FRAGMENTS] = 75;
	assert_true(fabs(ops->predict(m, &f) - 1.75e6) < 0.2e6); /* learned */
	f.x[PF_FRAGMENTS] = 75000;
	ops->update(m, &f, 2e6); /* the large value is seen: its scale grows */
	assert_true(ops->predict(m, &f) < 2 * 2.5e6);
	ops->destroy(m);
}

static void save_and_load_reproduce_predictions_exactly(void **state)
{
	for (size_t k = 0; predict_models[k]; k++) {
		const struct predict_model_ops *ops = predict_models[k];
		struct predict_model *a = ops->create(), *b = ops->create();
		uint8_t *buf = malloc(PREDICT_MODEL_STATE_MAX);
		struct rng r = {99};
		int len;

		train(ops, a, 6000, 7 + k); /* history: more contents than it keeps */
		len = ops->save(a, buf, PREDICT_MODEL_STATE_MAX);
		assert_true(len > 0);
		assert_int_equal(ops->load(b, buf, (size_t)len), 0);
		for (int i = 0; i < 500; i++) {
			struct predict_features f;
			double t = synth_group(&r, &f);

			if (i % 2)
				f.content_hash = 0; /* unknown to history */
			assert_true(ops->predict(a, &f) == ops->predict(b, &f));
			ops->update(a, &f, t);
			ops->update(b, &f, t);
		}
		free(buf);
		ops->destroy(a);
		ops->destroy(b);
	}
}

static void save_reports_a_short_buffer(void **state)
{
	for (size_t k = 0; predict_models[k]; k++) {
		const struct predict_model_ops *ops = predict_models[k];
		struct predict_model *m = ops->create();
		uint8_t buf[8];

		train(ops, m, 2000, 3);
		assert_int_equal(ops->save(m, buf, sizeof(buf)), -ENOSPC);
		ops->destroy(m);
	}
}

/* The model's state as bytes, to tell whether it changed. */
static int snapshot(const struct predict_model_ops *ops, struct predict_model *m, uint8_t *buf)
{
	int len = ops->save(m, buf, PREDICT_MODEL_STATE_MAX);

	assert_true(len > 0);
	return len;
}

static void load_refuses_garbage_truncated_and_nan_states(void **state)
{
	uint8_t *good = malloc(PREDICT_MODEL_STATE_MAX), *bad = malloc(PREDICT_MODEL_STATE_MAX);
	uint8_t *before = malloc(PREDICT_MODEL_STATE_MAX), *after = malloc(PREDICT_MODEL_STATE_MAX);

	for (size_t k = 0; predict_models[k]; k++) {
		const struct predict_model_ops *ops = predict_models[k];
		struct predict_model *src = ops->create(), *m = ops->create();
		struct rng r = {5};
		const double nan = NAN;
		int len, blen;

		train(ops, src, 300, 11);
		len = ops->save(src, good, PREDICT_MODEL_STATE_MAX);
		train(ops, m, 300, 12);
		blen = snapshot(ops, m, before);

		/* Garbage of many sizes. */
		for (int n = 0; n < 2000; n += 37) {
			for (int i = 0; i < n; i++)
				bad[i] = (uint8_t)rng_next(&r);
			assert_int_equal(ops->load(m, bad, (size_t)n), -EINVAL);
		}
		/* Every truncation, and one byte too many. */
		for (int n = 0; n < len; n += (len > 4000 ? 61 : 1))
			assert_int_equal(ops->load(m, good, (size_t)n), -EINVAL);
		memcpy(bad, good, (size_t)len);
		bad[len] = 0;
		assert_int_equal(ops->load(m, bad, (size_t)len + 1), -EINVAL);
		/* A NaN in place of each 8-byte value after the header. */
		for (int off = 12; off + 8 <= len; off += 4) {
			uint64_t u;

			memcpy(bad, good, (size_t)len);
			memcpy(&u, &nan, 8);
			for (int i = 0; i < 8; i++)
				bad[off + i] = (uint8_t)(u >> (8 * i));
			/* Only offsets where a double lies must fail; others may pass. */
			if (ops->load(m, bad, (size_t)len) == 0) {
				/* Accepted: then it must not have produced a NaN model. */
				struct predict_features f = {.x = {[PF_GROUP] = 1}};
				double p = ops->predict(m, &f);

				assert_true(isfinite(p) && p >= 0);
				assert_int_equal(ops->load(m, before, (size_t)blen), 0);
			}
		}
		/* A NaN at the first double of the payload is always refused. */
		memcpy(bad, good, (size_t)len);
		{
			uint64_t u;
			int off = len - 8; /* every model ends with a double */

			memcpy(&u, &nan, 8);
			for (int i = 0; i < 8; i++)
				bad[off + i] = (uint8_t)(u >> (8 * i));
			assert_int_equal(ops->load(m, bad, (size_t)len), -EINVAL);
		}
		/* A state of another model. */
		{
			const struct predict_model_ops *other =
			    predict_models[k + 1] ? predict_models[k + 1] : predict_models[0];
			struct predict_model *o = other->create();
			int olen = other->save(o, bad, PREDICT_MODEL_STATE_MAX);

			assert_int_equal(ops->load(m, bad, (size_t)olen), -EINVAL);
			other->destroy(o);
		}
		assert_int_equal(snapshot(ops, m, after), blen);
		assert_memory_equal(before, after, (size_t)blen);
		ops->destroy(src);
		ops->destroy(m);
	}
	free(good);
	free(bad);
	free(before);
	free(after);
}

static void predictions_are_never_nan_or_negative_for_extreme_features(void **state)
{
	static const double values[] = {0,  1e-300, 1,	      1e6,	 PREDICT_FEATURE_MAX,
					-1, NAN,    INFINITY, -INFINITY, 1e300};

	for (size_t k = 0; predict_models[k]; k++) {
		const struct predict_model_ops *ops = predict_models[k];
		struct predict_model *m = ops->create();
		struct rng r = {77};

		train(ops, m, 1000, 13);
		for (int n = 0; n < 3000; n++) {
			struct predict_features f;
			double p, t;

			for (int i = 0; i < PF_COUNT; i++)
				f.x[i] =
				    values[rng_next(&r) % (sizeof(values) / sizeof(values[0]))];
			f.content_hash = rng_next(&r) % 8;
			p = ops->predict(m, &f);
			assert_false(isnan(p));
			assert_true(p >= 0);
			t = values[rng_next(&r) % (sizeof(values) / sizeof(values[0]))];
			ops->update(m, &f, t);
			ops->update(m, &f, 1e5 * rng_uniform(&r));
		}
		/* And the model still learns afterwards. */
		{
			double p;
			struct predict_features f = {.x = {[PF_GROUP] = 1}};

			train(ops, m, 200, 14);
			p = ops->predict(m, &f);
			assert_false(isnan(p));
			assert_true(p >= 0);
		}
		ops->destroy(m);
	}
}

static void models_are_found_by_name_and_destroy_accepts_null(void **state)
{
	static const char *const names[] = {"history", "linear", "sgd", "rls"};

	for (size_t i = 0; i < 4; i++) {
		assert_non_null(predict_models[i]);
		assert_string_equal(predict_models[i]->name, names[i]);
		assert_ptr_equal(predict_model_find(names[i]), predict_models[i]);
		assert_int_equal(predict_models[i]->version, PREDICT_MODEL_OPS_VERSION);
		predict_models[i]->destroy(NULL);
	}
	assert_null(predict_models[4]);
	assert_null(predict_model_find("timegraph"));
	assert_null(predict_model_find(NULL));
}

/*
 * glmark2's buffer scene in small: 0.1 ms uploads (+- 5 %) interleaved
 * with 3 ms draws (+- 15 %, one in 100 twice as long). The draws set the
 * context's margin (milliseconds); through the estimator, the uploads'
 * bound follows their own spread instead (within 2x what they take),
 * while the draws keep the context's.
 */
static void the_estimator_bounds_each_kind_by_its_own_spread(void **state)
{
	struct predict_estimator *e =
	    predict_estimator_create(predict_model_find("sgd"), PREDICT_ESTIMATOR_ALL);
	struct rng r = {11};
	struct predict_features upload, draw;
	struct predict_estimate est;
	double upload_bound = 0, draw_bound = 0, margin;
	int n = 4000, counted = 0;

	(void)state;
	assert_non_null(e);
	memset(&upload, 0, sizeof(upload));
	upload.x[PF_GROUP] = 1;
	upload.x[PF_TRANSFER_BYTES] = 65536;
	memset(&draw, 0, sizeof(draw));
	draw.x[PF_GROUP] = 1;
	draw.x[PF_DRAWS] = 3;
	draw.x[PF_VERTICES] = 3000;
	for (int i = 0; i < n; i++) {
		bool is_draw = i % 2;
		struct predict_features *f = is_draw ? &draw : &upload;
		double t = is_draw ? 3e6 * (rng_uniform(&r) < 0.01 ? 2 : 1 + 0.15 * rng_gauss(&r))
				   : 1e5 * (1 + 0.05 * rng_gauss(&r));

		f->content_hash = (uint64_t)i + 1; /* new content each time: no memo */
		predict_estimator_predict(e, f, &est);
		assert_true(est.kind != 0);
		assert_true(est.bound_ns >= est.predicted_ns);
		if (i >= n / 2) {
			*(is_draw ? &draw_bound : &upload_bound) += est.bound_ns;
			counted += !is_draw;
		}
		predict_estimator_learn(e, f, &est, t);
	}
	upload_bound /= counted;
	draw_bound /= n / 2 - counted;
	margin = predict_estimator_margin(e);
	printf("# uploads of 100 us: bound %.0f ns on average; draws of 3 ms: %.0f ns; context "
	       "margin %.0f ns\n",
	       upload_bound, draw_bound, margin);
	assert_true(margin > 0.3e6);
	assert_true(upload_bound < 2e5);
	assert_true(draw_bound > 3e6 + margin / 2);
	predict_estimator_destroy(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_model_converges_on_synthetic_groups),
	    cmocka_unit_test(rls_recovers_the_true_coefficients),
	    cmocka_unit_test(linear_coefficients_never_go_negative),
	    cmocka_unit_test(linear_set_refuses_bad_coefficients_and_other_models),
	    cmocka_unit_test(history_predicts_the_last_time_of_the_same_content),
	    cmocka_unit_test(history_forgets_the_least_recently_used_content),
	    cmocka_unit_test(sgd_does_not_extrapolate_a_feature_a_thousandfold),
	    cmocka_unit_test(save_and_load_reproduce_predictions_exactly),
	    cmocka_unit_test(save_reports_a_short_buffer),
	    cmocka_unit_test(load_refuses_garbage_truncated_and_nan_states),
	    cmocka_unit_test(predictions_are_never_nan_or_negative_for_extreme_features),
	    cmocka_unit_test(models_are_found_by_name_and_destroy_accepts_null),
	    cmocka_unit_test(the_estimator_bounds_each_kind_by_its_own_spread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
