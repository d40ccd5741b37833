// SPDX-License-Identifier: MIT
/*
 * Gupta et al., An Online Learning Methodology for Performance Modeling of
 * Graphics Processors: recursive least squares with a forgetting factor, on
 * all PF_COUNT features (PF_GROUP is the intercept):
 *
 *   k = P h,  d = lambda + h'k
 *   theta += k (y - h'theta) / d
 *   P = (P - k k' / d) / lambda
 *
 * Scaling. Features span many orders of magnitude (pixels ~1e6, commands
 * ~1), which would make P badly conditioned, so h is the features scaled
 * by their running max-abs: h_i = x_i / s_i in [0, 1], theta_i = c_i s_i.
 * When s_i grows by r the state is transformed exactly (theta_i *= r,
 * row and column i of P *= r), so scaling never changes a prediction.
 * The target stays in ns: RLS is equivariant in y.
 *
 * Numerical safety:
 *  - P is updated in the symmetric form above (upper triangle, mirrored),
 *    so it stays exactly symmetric;
 *  - P starts at RLS_DELTA * I, and a feature seen for the first time gets
 *    a fresh row/column (RLS_DELTA on the diagonal);
 *  - covariance windup: with lambda < 1, a direction the data does not
 *    excite (a feature that stays 0, or collinear features) grows as
 *    lambda^-t; each diagonal element is capped at RLS_DELTA by scaling
 *    its row and column (P stays positive semi-definite), which is a
 *    regularisation toward the current coefficient of unexcited features;
 *  - a non-finite or non-positive diagonal, or a non-positive d, resets P
 *    to RLS_DELTA * I (and theta to 0 if theta is not finite).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "predict_model.h"
#include "predict_model_priv.h"

#define RLS_LAMBDA  0.999	/* forgetting factor: memory of ~1000 groups */
#define RLS_DELTA   1e6		/* initial and largest P_ii (ns^2 per unit of scaled feature^2) */
#define RLS_MAGIC   0x534c5250u /* "PRLS" */
#define RLS_VERSION 1u

struct predict_model {
	const struct predict_model_ops *ops; /* first, see predict_model_priv.h */
	double theta[PF_COUNT];		     /* scaled coefficients, theta_i = c_i s_i */
	double s[PF_COUNT];		     /* max |x_i| seen, 0 = never */
	double p[PF_COUNT][PF_COUNT];
	uint64_t resets; /* times P had to be reset (not saved) */
};

static void rls_reset_p(struct predict_model *m)
{
	memset(m->p, 0, sizeof(m->p));
	for (int i = 0; i < PF_COUNT; i++)
		m->p[i][i] = RLS_DELTA;
}

static struct predict_model *rls_create(void)
{
	struct predict_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->ops = &predict_model_rls_ops;
	rls_reset_p(m);
	return m;
}

static void rls_destroy(struct predict_model *m)
{
	free(m);
}

static double rls_dot(const struct predict_model *m, const double x[PF_COUNT], double h[PF_COUNT])
{
	double y = 0;

	for (int i = 0; i < PF_COUNT; i++) {
		h[i] = m->s[i] > 0 ? x[i] / m->s[i] : 0;
		if (h[i] != 0)
			y += m->theta[i] * h[i];
	}
	return y;
}

static double rls_predict(struct predict_model *m, const struct predict_features *f)
{
	double x[PF_COUNT], h[PF_COUNT];

	predict_features_sanitize(f, x);
	return predict_time_clamp(rls_dot(m, x, h));
}

/* Scales row and column @i of P by @r. */
static void rls_scale_p(struct predict_model *m, int i, double r)
{
	for (int j = 0; j < PF_COUNT; j++) {
		m->p[i][j] *= r;
		m->p[j][i] *= r;
	}
}

static void rls_rescale(struct predict_model *m, const double x[PF_COUNT])
{
	for (int i = 0; i < PF_COUNT; i++) {
		if (x[i] <= m->s[i])
			continue;
		if (m->s[i] > 0) {
			double r = x[i] / m->s[i];

			m->theta[i] *= r;
			rls_scale_p(m, i, r);
		} else {
			/* First sighting: no information yet, a fresh prior. */
			m->theta[i] = 0;
			for (int j = 0; j < PF_COUNT; j++)
				m->p[i][j] = m->p[j][i] = 0;
			m->p[i][i] = RLS_DELTA;
		}
		m->s[i] = x[i];
	}
}

static void rls_update(struct predict_model *m, const struct predict_features *f,
		       double measured_ns)
{
	double x[PF_COUNT], h[PF_COUNT], k[PF_COUNT], d = RLS_LAMBDA, e;
	bool ok = true;

	if (!predict_time_valid(measured_ns))
		return;
	predict_features_sanitize(f, x);
	rls_rescale(m, x);
	e = predict_time_clamp(measured_ns) - rls_dot(m, x, h);
	for (int i = 0; i < PF_COUNT; i++) {
		double ki = 0;

		for (int j = 0; j < PF_COUNT; j++) {
			if (h[j] != 0)
				ki += m->p[i][j] * h[j];
		}
		k[i] = ki;
		d += h[i] * ki;
	}
	if (!(d > 0) || !isfinite(d) || !isfinite(e)) {
		rls_reset_p(m);
		m->resets++;
		return;
	}
	for (int i = 0; i < PF_COUNT; i++) {
		m->theta[i] += k[i] * e / d;
		if (!isfinite(m->theta[i]))
			ok = false;
		for (int j = i; j < PF_COUNT; j++)
			m->p[i][j] = m->p[j][i] = (m->p[i][j] - k[i] * k[j] / d) / RLS_LAMBDA;
	}
	for (int i = 0; i < PF_COUNT && ok; i++) {
		double pii = m->p[i][i];

		if (!(pii > 0) || !isfinite(pii))
			ok = false;
		else if (pii > RLS_DELTA)
			rls_scale_p(m, i, sqrt(RLS_DELTA / pii));
	}
	if (!ok) {
		for (int i = 0; i < PF_COUNT; i++) {
			if (!isfinite(m->theta[i]))
				memset(m->theta, 0, sizeof(m->theta));
		}
		rls_reset_p(m);
		m->resets++;
	}
}

static int rls_save(const struct predict_model *m, uint8_t *buf, size_t size)
{
	struct predict_wr w;

	predict_wr_begin(&w, buf, size, RLS_MAGIC, RLS_VERSION);
	predict_wr_u32(&w, PF_COUNT);
	for (int i = 0; i < PF_COUNT; i++) {
		predict_wr_f64(&w, m->theta[i]);
		predict_wr_f64(&w, m->s[i]);
	}
	for (int i = 0; i < PF_COUNT; i++) {
		for (int j = i; j < PF_COUNT; j++)
			predict_wr_f64(&w, m->p[i][j]);
	}
	return predict_wr_end(&w);
}

static int rls_load(struct predict_model *m, const uint8_t *buf, size_t size)
{
	struct predict_model *tmp = rls_create();
	struct predict_rd r;
	int ret = -EINVAL;

	if (!tmp)
		return -ENOMEM;
	if (predict_rd_begin(&r, buf, size, RLS_MAGIC, RLS_VERSION) ||
	    predict_rd_u32(&r) != PF_COUNT)
		goto out;
	for (int i = 0; i < PF_COUNT; i++) {
		tmp->theta[i] = predict_rd_f64(&r);
		tmp->s[i] = predict_rd_f64(&r);
		if (tmp->s[i] < 0 || tmp->s[i] > PREDICT_FEATURE_MAX)
			goto out;
	}
	for (int i = 0; i < PF_COUNT; i++) {
		for (int j = i; j < PF_COUNT; j++)
			tmp->p[i][j] = tmp->p[j][i] = predict_rd_f64(&r);
	}
	if (predict_rd_end(&r))
		goto out;
	/* P must look like a covariance: positive bounded diagonal, |P_ij| <= sqrt(P_ii P_jj). */
	for (int i = 0; i < PF_COUNT; i++) {
		if (!(tmp->p[i][i] > 0) || tmp->p[i][i] > RLS_DELTA * (1 + 1e-9))
			goto out;
		for (int j = 0; j < i; j++) {
			if (fabs(tmp->p[i][j]) > sqrt(tmp->p[i][i] * tmp->p[j][j]) * (1 + 1e-9))
				goto out;
		}
	}
	tmp->resets = m->resets;
	memcpy(m, tmp, sizeof(*m));
	ret = 0;
out:
	free(tmp);
	return ret;
}

static void rls_seed(struct predict_model *m, const double coef[PF_COUNT],
		     const double xmax[PF_COUNT], double ymax)
{
	rls_rescale(m, xmax);
	for (int i = 0; i < PF_COUNT; i++)
		if (coef[i] >= 0 && isfinite(coef[i]) && m->s[i] > 0)
			m->theta[i] = coef[i] * m->s[i];
	/* Fresh confidence: what follows refines the seed quickly. */
	rls_reset_p(m);
}

static size_t rls_coefficients(const struct predict_model *m, double *out, size_t n)
{
	for (size_t i = 0; i < n && i < PF_COUNT; i++)
		out[i] = m->s[i] > 0 ? m->theta[i] / m->s[i] : 0;
	return PF_COUNT;
}

const struct predict_model_ops predict_model_rls_ops = {
    .version = PREDICT_MODEL_OPS_VERSION,
    .name = "rls",
    .create = rls_create,
    .destroy = rls_destroy,
    .predict = rls_predict,
    .update = rls_update,
    .save = rls_save,
    .load = rls_load,
    .coefficients = rls_coefficients,
    .seed = rls_seed,
};
