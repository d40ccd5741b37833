// SPDX-License-Identifier: MIT
/*
 * Recent cost of similar groups (see predict_recent.h).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "predict_model_priv.h"
#include "predict_recent.h"

#define RECENT_MAGIC   0x4e434552u /* "RECN" */
#define RECENT_VERSION 1u

/* Steps of the kind's rounding per factor e: exp(1/10) = 10.5 % per step. */
#define RECENT_STEPS_PER_E 10.0
/* Relative errors are taken of at least this measured time, ns (no division by ~0). */
#define RECENT_MIN_NS 1000.0
/* Added to both recent errors before weighting: a kind with two perfect predictors weighs them
 * alike. */
#define RECENT_ERROR_FLOOR 0.001

struct recent_slot {
	uint64_t kind;		     /* 0 = free */
	double level;		     /* exponentially weighted mean of the measured times, ns */
	double err_model, err_level; /* recent mean relative errors */
	uint32_t seen;
};

struct predict_recent {
	struct recent_slot slot[PREDICT_RECENT_SLOTS];
};

struct predict_recent *predict_recent_create(void)
{
	return calloc(1, sizeof(struct predict_recent));
}

void predict_recent_destroy(struct predict_recent *recent)
{
	free(recent);
}

uint64_t predict_recent_kind(const struct predict_features *f)
{
	double x[PF_COUNT];
	uint64_t h = 14695981039346656037ull; /* FNV-1a 64 over (feature, step) pairs */

	predict_features_sanitize(f, x);
	for (unsigned i = 0; i < PF_COUNT; i++) {
		/* 0 stays 0; x >= 1e-300 gives a step in [-6907, 347]: a shift keeps it positive.
		 */
		uint64_t step =
		    x[i] > 0 ? (uint64_t)(llround(log(x[i]) * RECENT_STEPS_PER_E) + 8000) : 0;

		h ^= step * PF_COUNT + i;
		h *= 1099511628211ull;
	}
	return h ? h : 1;
}

static const struct recent_slot *find(const struct predict_recent *recent, uint64_t kind)
{
	const struct recent_slot *s = &recent->slot[kind % PREDICT_RECENT_SLOTS];

	return s->kind == kind ? s : NULL;
}

/* Slot @s (NULL: none) holds a kind measured often enough for its level to count. */
static bool known(const struct recent_slot *s)
{
	return s && s->seen >= PREDICT_RECENT_MIN_SEEN;
}

bool predict_recent_known(const struct predict_recent *recent, uint64_t kind)
{
	return known(find(recent, kind));
}

double predict_recent_predict(const struct predict_recent *recent, uint64_t kind, double model_ns)
{
	const struct recent_slot *s = find(recent, kind);
	double w_model, w_level;

	if (!known(s) || !(model_ns >= 0))
		return model_ns;
	w_model = 1 / (s->err_model + RECENT_ERROR_FLOOR);
	w_level = 1 / (s->err_level + RECENT_ERROR_FLOOR);
	return (model_ns * w_model + s->level * w_level) / (w_model + w_level);
}

void predict_recent_update(struct predict_recent *recent, uint64_t kind, double model_ns,
			   double measured_ns)
{
	struct recent_slot *s = &recent->slot[kind % PREDICT_RECENT_SLOTS];
	double m;

	if (!predict_time_valid(measured_ns) || !(model_ns >= 0) || kind == 0)
		return;
	measured_ns = predict_time_clamp(measured_ns);
	if (s->kind != kind) {
		*s = (struct recent_slot){.kind = kind, .level = measured_ns, .seen = 1};
		return;
	}
	m = measured_ns > RECENT_MIN_NS ? measured_ns : RECENT_MIN_NS;
	s->err_model +=
	    PREDICT_RECENT_ERROR_WEIGHT * (fabs(model_ns - measured_ns) / m - s->err_model);
	s->err_level +=
	    PREDICT_RECENT_ERROR_WEIGHT * (fabs(s->level - measured_ns) / m - s->err_level);
	s->level += PREDICT_RECENT_LEVEL_WEIGHT * (measured_ns - s->level);
	if (s->seen < UINT32_MAX)
		s->seen++;
}

size_t predict_recent_size(const struct predict_recent *recent)
{
	size_t n = 0;

	for (unsigned i = 0; i < PREDICT_RECENT_SLOTS; i++)
		n += recent->slot[i].kind != 0;
	return n;
}

int predict_recent_save(const struct predict_recent *recent, uint8_t *buf, size_t size)
{
	struct predict_wr w;

	predict_wr_begin(&w, buf, size, RECENT_MAGIC, RECENT_VERSION);
	predict_wr_u32(&w, (uint32_t)predict_recent_size(recent));
	for (unsigned i = 0; i < PREDICT_RECENT_SLOTS; i++) {
		const struct recent_slot *s = &recent->slot[i];

		if (!s->kind)
			continue;
		predict_wr_u64(&w, s->kind);
		predict_wr_f64(&w, s->level);
		predict_wr_f64(&w, s->err_model);
		predict_wr_f64(&w, s->err_level);
		predict_wr_u32(&w, s->seen);
	}
	return predict_wr_end(&w);
}

int predict_recent_load(struct predict_recent *recent, const uint8_t *buf, size_t size)
{
	struct predict_recent *tmp;
	struct predict_rd r;
	uint32_t n;
	int ret = -EINVAL;

	if (predict_rd_begin(&r, buf, size, RECENT_MAGIC, RECENT_VERSION))
		return -EINVAL;
	n = predict_rd_u32(&r);
	if (n > PREDICT_RECENT_SLOTS)
		return -EINVAL;
	tmp = calloc(1, sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct recent_slot s;
		struct recent_slot *dst;

		s.kind = predict_rd_u64(&r);
		s.level = predict_rd_f64(&r);
		s.err_model = predict_rd_f64(&r);
		s.err_level = predict_rd_f64(&r);
		s.seen = predict_rd_u32(&r);
		dst = &tmp->slot[s.kind % PREDICT_RECENT_SLOTS];
		/* Each kind in its own slot, as saved; errors are relative, so finite and >= 0. */
		if (s.kind == 0 || dst->kind != 0 || !predict_time_valid(s.level) ||
		    !(s.err_model >= 0) || !(s.err_level >= 0) || s.seen == 0)
			goto out;
		*dst = s;
	}
	if (predict_rd_end(&r))
		goto out;
	*recent = *tmp;
	ret = 0;
out:
	free(tmp);
	return ret;
}
