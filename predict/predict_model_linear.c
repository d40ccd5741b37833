// SPDX-License-Identifier: MIT
/*
 * The calibrated linear model of Schnitzer et al., Concepts for Execution
 * Time Prediction of 3D GPU Rendering: t = sum(c_i * x_i), with c_i in ns
 * per unit of feature i.
 *
 * The coefficients come from calibration (predict_model_linear_set(),
 * Schnitzer et al. §IV-C..E) and are refined online by normalised least mean
 * squares (NLMS) on every measurement:
 *
 *   z_i = x_i / s_i              s_i: largest |x_i| seen (max-abs scaling)
 *   e   = measured - sum(c_i x_i)
 *   c_i += mu * e * z_i / ((eps + |z|^2) * s_i)
 *   c_i  = max(c_i, 0)           projection: no negative costs
 *
 * The step is taken in scaled coordinates (z in [0, 1]) so that a feature
 * counted in millions of pixels and one counted in commands move at
 * comparable speed. mu is LINEAR_MU_CALIBRATED (small: calibration stays
 * in charge, slow drift is corrected) once calibration has set the
 * coefficients, LINEAR_MU_LEARNING before (no calibration: learn from
 * measurements alone).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "predict_model.h"
#include "predict_model_priv.h"

#define LINEAR_MU_CALIBRATED 0.02
#define LINEAR_MU_LEARNING   0.3
#define LINEAR_EPS	     1e-3	 /* NLMS regulariser, in scaled units (|z|^2 <= PF_COUNT) */
#define LINEAR_MAGIC	     0x4e494c50u /* "PLIN" */
#define LINEAR_VERSION	     1u

struct predict_model {
	const struct predict_model_ops *ops; /* first, see predict_model_priv.h */
	double c[PF_COUNT];		     /* ns per unit of feature, >= 0 */
	double s[PF_COUNT];		     /* max |x_i| seen, 0 = never seen */
	uint32_t calibrated;		     /* 0 or 1 */
};

static struct predict_model *linear_create(void)
{
	struct predict_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->ops = &predict_model_linear_ops;
	return m;
}

static void linear_destroy(struct predict_model *m)
{
	free(m);
}

static double linear_dot(const struct predict_model *m, const double x[PF_COUNT])
{
	double t = 0;

	for (int i = 0; i < PF_COUNT; i++)
		t += m->c[i] * x[i];
	return t;
}

static double linear_predict(struct predict_model *m, const struct predict_features *f)
{
	double x[PF_COUNT];

	predict_features_sanitize(f, x);
	return predict_time_clamp(linear_dot(m, x));
}

static void linear_update(struct predict_model *m, const struct predict_features *f,
			  double measured_ns)
{
	double x[PF_COUNT], z[PF_COUNT], norm = 0, e, step;

	if (!predict_time_valid(measured_ns))
		return;
	predict_features_sanitize(f, x);
	for (int i = 0; i < PF_COUNT; i++) {
		if (x[i] > m->s[i])
			m->s[i] = x[i];
		z[i] = m->s[i] > 0 ? x[i] / m->s[i] : 0;
		norm += z[i] * z[i];
	}
	if (norm == 0)
		return;
	e = predict_time_clamp(measured_ns) - linear_dot(m, x);
	step =
	    (m->calibrated ? LINEAR_MU_CALIBRATED : LINEAR_MU_LEARNING) * e / (LINEAR_EPS + norm);
	for (int i = 0; i < PF_COUNT; i++) {
		double c;

		if (z[i] == 0)
			continue;
		c = m->c[i] + step * z[i] / m->s[i];
		m->c[i] = c > 0 && isfinite(c) ? c : 0;
	}
}

int predict_model_linear_set(struct predict_model *m, const double coef[PF_COUNT])
{
	if (!m || !coef || predict_model_ops_of(m) != &predict_model_linear_ops)
		return -EINVAL;
	for (int i = 0; i < PF_COUNT; i++) {
		if (!isfinite(coef[i]) || coef[i] < 0)
			return -EINVAL;
	}
	memcpy(m->c, coef, sizeof(m->c));
	m->calibrated = 1;
	return 0;
}

static int linear_save(const struct predict_model *m, uint8_t *buf, size_t size)
{
	struct predict_wr w;

	predict_wr_begin(&w, buf, size, LINEAR_MAGIC, LINEAR_VERSION);
	predict_wr_u32(&w, PF_COUNT);
	predict_wr_u32(&w, m->calibrated);
	for (int i = 0; i < PF_COUNT; i++) {
		predict_wr_f64(&w, m->c[i]);
		predict_wr_f64(&w, m->s[i]);
	}
	return predict_wr_end(&w);
}

static int linear_load(struct predict_model *m, const uint8_t *buf, size_t size)
{
	struct predict_model tmp = {.ops = &predict_model_linear_ops};
	struct predict_rd r;

	if (predict_rd_begin(&r, buf, size, LINEAR_MAGIC, LINEAR_VERSION))
		return -EINVAL;
	if (predict_rd_u32(&r) != PF_COUNT)
		return -EINVAL;
	tmp.calibrated = predict_rd_u32(&r);
	if (tmp.calibrated > 1)
		return -EINVAL;
	for (int i = 0; i < PF_COUNT; i++) {
		tmp.c[i] = predict_rd_f64(&r);
		tmp.s[i] = predict_rd_f64(&r);
		if (tmp.c[i] < 0 || tmp.s[i] < 0 || tmp.s[i] > PREDICT_FEATURE_MAX)
			return -EINVAL;
	}
	if (predict_rd_end(&r))
		return -EINVAL;
	*m = tmp;
	return 0;
}

static void linear_seed(struct predict_model *m, const double coef[PF_COUNT],
			const double xmax[PF_COUNT], double ymax)
{
	for (int i = 0; i < PF_COUNT; i++) {
		if (xmax[i] > m->s[i] && xmax[i] <= PREDICT_FEATURE_MAX)
			m->s[i] = xmax[i];
		if (coef[i] >= 0 && isfinite(coef[i]))
			m->c[i] = coef[i];
	}
	m->calibrated = 1;
}

static size_t linear_coefficients(const struct predict_model *m, double *out, size_t n)
{
	for (size_t i = 0; i < n && i < PF_COUNT; i++)
		out[i] = m->c[i];
	return PF_COUNT;
}

const struct predict_model_ops predict_model_linear_ops = {
    .version = PREDICT_MODEL_OPS_VERSION,
    .name = "linear",
    .create = linear_create,
    .destroy = linear_destroy,
    .predict = linear_predict,
    .update = linear_update,
    .save = linear_save,
    .load = linear_load,
    .coefficients = linear_coefficients,
    .seed = linear_seed,
};
