// SPDX-License-Identifier: MIT
/*
 * Calibration from microbenchmarks (see predict_calibrate.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "predict_calibrate.h"
#include "predict_model_priv.h"

enum kind { K_FLUSH, K_CLEAR, K_VERTEX, K_FRAGMENT, K_NONE };

struct sample {
	double x[PF_COUNT];
	double y;
	enum kind kind;
	int mask; /* K_CLEAR: the clear feature */
};

struct predict_calibration {
	struct sample s[PREDICT_CALIBRATION_MAX];
	uint32_t n;
};

/* Features of work the microbenchmarks never do: a group with any is not one of theirs. */
static const enum predict_feature other_work[] = {
    PF_TRANSFER_BYTES, PF_BLIT_PIXELS, PF_COPY_PIXELS, PF_CLEAR_TEX_PIXELS, PF_SHADER_TOKENS,
};
static const enum predict_feature clear_masks[] = {
    PF_CLEAR_C, PF_CLEAR_D, PF_CLEAR_S, PF_CLEAR_CD, PF_CLEAR_CS, PF_CLEAR_DS, PF_CLEAR_CDS,
};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

struct predict_calibration *predict_calibration_create(void)
{
	return calloc(1, sizeof(struct predict_calibration));
}

void predict_calibration_destroy(struct predict_calibration *cal)
{
	free(cal);
}

static enum kind classify(const double x[PF_COUNT], int *mask)
{
	int masks = 0;

	for (size_t i = 0; i < N_OF(other_work); i++)
		if (x[other_work[i]] > 0)
			return K_NONE;
	for (size_t i = 0; i < N_OF(clear_masks); i++) {
		if (x[clear_masks[i]] > 0) {
			masks++;
			*mask = clear_masks[i];
		}
	}
	if (x[PF_DRAWS] > 0)
		return masks ? K_NONE : x[PF_FRAGMENTS] > 0 ? K_FRAGMENT : K_VERTEX;
	if (masks > 1)
		return K_NONE;
	return masks ? K_CLEAR : K_FLUSH;
}

void predict_calibration_add(struct predict_calibration *cal, const struct predict_features *f,
			     double measured_ns)
{
	struct sample *s;

	if (cal->n == PREDICT_CALIBRATION_MAX || !predict_time_valid(measured_ns))
		return;
	s = &cal->s[cal->n];
	predict_features_sanitize(f, s->x);
	s->y = predict_time_clamp(measured_ns);
	s->kind = classify(s->x, &s->mask);
	if (s->kind == K_VERTEX && s->x[PF_VERTICES] <= 0)
		s->kind = K_NONE;
	if (s->kind != K_NONE)
		cal->n++;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of @n values at @v (sorted in place); 0 when @n is 0. */
static double median(double *v, uint32_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double nonneg(double v)
{
	return v > 0 ? v : 0;
}

int predict_calibration_solve(const struct predict_calibration *cal,
			      struct predict_calibration_result *out)
{
	double *v = malloc(sizeof(double) * (cal->n ? cal->n : 1));
	double group, vertex;
	uint32_t k;

	if (!v)
		return -ENOMEM;
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < PF_COUNT; i++)
		out->coef[i] = -1;
	for (uint32_t j = 0; j < cal->n; j++) {
		const struct sample *s = &cal->s[j];

		out->samples[s->kind]++;
		for (int i = 0; i < PF_COUNT; i++)
			if (s->x[i] > out->xmax[i])
				out->xmax[i] = s->x[i];
		if (s->y > out->ymax)
			out->ymax = s->y;
	}
	for (int i = 0; i < 4; i++) {
		if (out->samples[i] < PREDICT_CALIBRATION_MIN) {
			free(v);
			return -EAGAIN;
		}
	}

	k = 0;
	for (uint32_t j = 0; j < cal->n; j++)
		if (cal->s[j].kind == K_FLUSH)
			v[k++] = cal->s[j].y;
	group = median(v, k);

	for (size_t m = 0; m < N_OF(clear_masks); m++) {
		k = 0;
		for (uint32_t j = 0; j < cal->n; j++)
			if (cal->s[j].kind == K_CLEAR && cal->s[j].mask == (int)clear_masks[m])
				v[k++] = (cal->s[j].y - group) / cal->s[j].x[clear_masks[m]];
		if (k)
			out->coef[clear_masks[m]] = nonneg(median(v, k));
	}

	k = 0;
	for (uint32_t j = 0; j < cal->n; j++)
		if (cal->s[j].kind == K_VERTEX)
			v[k++] = (cal->s[j].y - group) / cal->s[j].x[PF_VERTICES];
	vertex = nonneg(median(v, k));

	k = 0;
	for (uint32_t j = 0; j < cal->n; j++) {
		const struct sample *s = &cal->s[j];

		if (s->kind == K_FRAGMENT)
			v[k++] = (s->y - group - vertex * s->x[PF_VERTICES]) / s->x[PF_FRAGMENTS];
	}
	out->coef[PF_FRAGMENTS] = nonneg(median(v, k));
	out->coef[PF_GROUP] = nonneg(group);
	out->coef[PF_VERTICES] = vertex;
	/* Not separable by these microbenchmarks: their work is in the above. */
	out->coef[PF_CMDS] = 0;
	out->coef[PF_DRAWS] = 0;
	out->coef[PF_VS_WORK] = 0;
	out->coef[PF_FS_ALU_WORK] = 0;
	out->coef[PF_FS_TEX_WORK] = 0;
	free(v);
	return 0;
}

int predict_calibration_seed(const struct predict_model_ops *ops, struct predict_model *model,
			     const struct predict_calibration_result *r)
{
	if (!ops->seed)
		return -ENOTSUP;
	ops->seed(model, r->coef, r->xmax, r->ymax);
	return 0;
}
