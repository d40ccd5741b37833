// SPDX-License-Identifier: MIT
/*
 * Keller's thesis, Predicting the GPU Execution Time of 3D Rendering
 * Commands using Machine Learning Concepts: online linear regression by
 * stochastic gradient descent on the squared error, with online feature
 * normalisation and ADADELTA per-coefficient learning rates. PF_GROUP
 * (always 1) is the intercept.
 *
 * Normalisation follows the thesis (Algorithm 4.2, Ross et al.'s normalised
 * gradient descent): max-abs scaling, s_i = largest |x_i| seen, and the
 * learning rate is rescaled by t / N with N = sum over samples of |x/s|^2
 * (Algorithm 4.1 line 8). We write the algorithm in scaled coordinates:
 * z_i = x_i / s_i, weights u_i = c_i * s_i / s_y, where s_y is the largest
 * measured time seen (the target is max-abs scaled too, because ADADELTA's
 * steps start near sqrt(eps) and have no unit: without it a 30 µs
 * intercept would take millions of steps to reach).
 *
 * Two deviations from the thesis, both deliberate:
 *  - when a scale grows by up to SGD_KEEP_GROWTH, u is rescaled so that
 *    the raw coefficient c_i is unchanged (the prediction does not jump);
 *    the thesis's w_i s_i^2/x_i^2 shrink (meant for adversarial scale
 *    changes) discards what was learned whenever a somewhat larger draw
 *    shows up. A larger jump keeps c_i only up to that factor: a
 *    coefficient learned from tiny values is not extrapolated to values
 *    a thousand times larger (bench/accuracy, glmark2 texture: a shader-
 *    compiling draw of 19 ms estimated at 75 fragments taught ~0.25 ms
 *    per fragment; kept unchanged, the next draw's 75,000 fragments were
 *    predicted at 300 ms, and the model was still 16 ms off 16,000
 *    groups later);
 *  - ADADELTA accumulates E[g^2] as in Algorithm 4.4 (Algorithm 5.15's
 *    listing omits that line).
 * No truncated gradient (the thesis found no clear benefit, §6.2).
 *
 *   e    = sum(u_i z_i) - y / s_y
 *   g_i  = e z_i                       (only for z_i != 0: Algorithm 5.13 l.10)
 *   E[g^2]_i  = rho E[g^2]_i + (1 - rho) g_i^2
 *   dw_i = sqrt(E[dw^2]_i + eps) / sqrt(E[g^2]_i + eps) * g_i
 *   E[dw^2]_i = rho E[dw^2]_i + (1 - rho) dw_i^2
 *   u_i -= dw_i * t / N
 *
 * with rho = 0.9, eps = 1e-5 as evaluated in the thesis, §6.2. Predictions
 * are clamped at 0. The saved state is everything listed in the thesis, §4.6,
 * for NG + ADADELTA: u, s, s_y, t, N, E[g^2], E[dw^2].
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "predict_model.h"
#include "predict_model_priv.h"

#define SGD_RHO	    0.9
#define SGD_EPS	    1e-5
#define SGD_MAGIC   0x44475350u /* "PSGD" */
#define SGD_VERSION 1u
/* Largest growth of a feature's scale over which its raw coefficient is kept. */
#define SGD_KEEP_GROWTH 2.0

struct predict_model {
	const struct predict_model_ops *ops; /* first, see predict_model_priv.h */
	double u[PF_COUNT];		     /* weights in scaled coordinates */
	double s[PF_COUNT];		     /* max |x_i| seen, 0 = never */
	double sy;			     /* max measured time seen, 0 = never */
	double t;			     /* samples learned from */
	double n;			     /* sum of |z|^2 over those samples */
	double eg2[PF_COUNT];
	double edw2[PF_COUNT];
};

static struct predict_model *sgd_create(void)
{
	struct predict_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->ops = &predict_model_sgd_ops;
	return m;
}

static void sgd_destroy(struct predict_model *m)
{
	free(m);
}

/* Prediction in scaled units (multiply by sy for ns); also fills @z. */
static double sgd_dot(const struct predict_model *m, const double x[PF_COUNT], double z[PF_COUNT])
{
	double y = 0;

	for (int i = 0; i < PF_COUNT; i++) {
		z[i] = m->s[i] > 0 ? x[i] / m->s[i] : 0;
		if (z[i] != 0)
			y += m->u[i] * z[i];
	}
	return y;
}

static double sgd_predict(struct predict_model *m, const struct predict_features *f)
{
	double x[PF_COUNT], z[PF_COUNT];

	predict_features_sanitize(f, x);
	return predict_time_clamp(sgd_dot(m, x, z) * m->sy);
}

/* Grows the scales to cover @x and @y, keeping each c_i = u_i sy / s_i. */
static void sgd_rescale(struct predict_model *m, const double x[PF_COUNT], double y)
{
	for (int i = 0; i < PF_COUNT; i++) {
		if (x[i] > m->s[i]) {
			/* Keep c_i = u_i sy / s_i, up to SGD_KEEP_GROWTH. */
			if (m->s[i] > 0)
				m->u[i] *= fmin(x[i] / m->s[i], SGD_KEEP_GROWTH);
			if (!isfinite(m->u[i]))
				m->u[i] = 0;
			m->s[i] = x[i];
		}
	}
	if (y > m->sy) {
		if (m->sy > 0) {
			for (int i = 0; i < PF_COUNT; i++)
				m->u[i] *= m->sy / y;
		}
		m->sy = y;
	}
}

static void sgd_update(struct predict_model *m, const struct predict_features *f,
		       double measured_ns)
{
	double x[PF_COUNT], z[PF_COUNT], y, e, norm = 0, rate;

	if (!predict_time_valid(measured_ns))
		return;
	y = predict_time_clamp(measured_ns);
	predict_features_sanitize(f, x);
	sgd_rescale(m, x, y);
	if (m->sy == 0)
		return; /* only zero times so far: nothing to scale by */
	e = sgd_dot(m, x, z) - y / m->sy;
	for (int i = 0; i < PF_COUNT; i++)
		norm += z[i] * z[i];
	if (norm == 0)
		return;
	m->t += 1;
	m->n += norm;
	rate = m->t / m->n;
	for (int i = 0; i < PF_COUNT; i++) {
		double g, dw, u;

		if (z[i] == 0)
			continue;
		g = e * z[i];
		m->eg2[i] = SGD_RHO * m->eg2[i] + (1 - SGD_RHO) * g * g;
		dw = sqrt(m->edw2[i] + SGD_EPS) / sqrt(m->eg2[i] + SGD_EPS) * g;
		m->edw2[i] = SGD_RHO * m->edw2[i] + (1 - SGD_RHO) * dw * dw;
		u = m->u[i] - dw * rate;
		if (isfinite(u))
			m->u[i] = u;
	}
}

static int sgd_save(const struct predict_model *m, uint8_t *buf, size_t size)
{
	struct predict_wr w;

	predict_wr_begin(&w, buf, size, SGD_MAGIC, SGD_VERSION);
	predict_wr_u32(&w, PF_COUNT);
	predict_wr_f64(&w, m->sy);
	predict_wr_f64(&w, m->t);
	predict_wr_f64(&w, m->n);
	for (int i = 0; i < PF_COUNT; i++) {
		predict_wr_f64(&w, m->u[i]);
		predict_wr_f64(&w, m->s[i]);
		predict_wr_f64(&w, m->eg2[i]);
		predict_wr_f64(&w, m->edw2[i]);
	}
	return predict_wr_end(&w);
}

static int sgd_load(struct predict_model *m, const uint8_t *buf, size_t size)
{
	struct predict_model tmp = {.ops = &predict_model_sgd_ops};
	struct predict_rd r;

	if (predict_rd_begin(&r, buf, size, SGD_MAGIC, SGD_VERSION))
		return -EINVAL;
	if (predict_rd_u32(&r) != PF_COUNT)
		return -EINVAL;
	tmp.sy = predict_rd_f64(&r);
	tmp.t = predict_rd_f64(&r);
	tmp.n = predict_rd_f64(&r);
	if (tmp.sy < 0 || tmp.sy > PREDICT_MODEL_TIME_MAX || tmp.t < 0 || tmp.n < 0 ||
	    (tmp.t > 0) != (tmp.n > 0))
		return -EINVAL;
	for (int i = 0; i < PF_COUNT; i++) {
		tmp.u[i] = predict_rd_f64(&r);
		tmp.s[i] = predict_rd_f64(&r);
		tmp.eg2[i] = predict_rd_f64(&r);
		tmp.edw2[i] = predict_rd_f64(&r);
		if (tmp.s[i] < 0 || tmp.s[i] > PREDICT_FEATURE_MAX || tmp.eg2[i] < 0 ||
		    tmp.edw2[i] < 0)
			return -EINVAL;
	}
	if (predict_rd_end(&r))
		return -EINVAL;
	*m = tmp;
	return 0;
}

static void sgd_seed(struct predict_model *m, const double coef[PF_COUNT],
		     const double xmax[PF_COUNT], double ymax)
{
	double x[PF_COUNT];

	for (int i = 0; i < PF_COUNT; i++)
		x[i] = xmax[i] > 0 && xmax[i] <= PREDICT_FEATURE_MAX ? xmax[i] : 0;
	sgd_rescale(m, x, predict_time_valid(ymax) ? predict_time_clamp(ymax) : 0);
	if (m->sy == 0)
		return;
	for (int i = 0; i < PF_COUNT; i++) {
		if (coef[i] >= 0 && isfinite(coef[i]) && m->s[i] > 0) {
			m->u[i] = coef[i] * m->s[i] / m->sy;
			/* ADADELTA starts over for the seeded weights. */
			m->eg2[i] = m->edw2[i] = 0;
		}
	}
}

static size_t sgd_coefficients(const struct predict_model *m, double *out, size_t n)
{
	for (size_t i = 0; i < n && i < PF_COUNT; i++)
		out[i] = m->s[i] > 0 ? m->u[i] * m->sy / m->s[i] : 0;
	return PF_COUNT;
}

const struct predict_model_ops predict_model_sgd_ops = {
    .version = PREDICT_MODEL_OPS_VERSION,
    .name = "sgd",
    .create = sgd_create,
    .destroy = sgd_destroy,
    .predict = sgd_predict,
    .update = sgd_update,
    .save = sgd_save,
    .load = sgd_load,
    .coefficients = sgd_coefficients,
    .seed = sgd_seed,
};
