// SPDX-License-Identifier: MIT
/*
 * The list of cost models and the helpers they share (see
 * predict_model_priv.h): feature sanitising, clamping of predicted times,
 * and bounds-checked little-endian serialisation of model states.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "predict_model.h"
#include "predict_model_priv.h"

const struct predict_model_ops *const predict_models[] = {
    &predict_model_history_ops,
    &predict_model_linear_ops,
    &predict_model_sgd_ops,
    &predict_model_rls_ops,
    NULL,
};

const struct predict_model_ops *predict_model_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; predict_models[i]; i++) {
		if (strcmp(predict_models[i]->name, name) == 0)
			return predict_models[i];
	}
	return NULL;
}

void predict_features_sanitize(const struct predict_features *f, double x[PF_COUNT])
{
	for (int i = 0; i < PF_COUNT; i++) {
		double v = f->x[i];

		/* !(v > 0) also catches NaN. */
		if (!(v > 0))
			v = 0;
		else if (v > PREDICT_FEATURE_MAX)
			v = PREDICT_FEATURE_MAX;
		x[i] = v;
	}
}

double predict_time_clamp(double t)
{
	if (!(t > 0))
		return 0;
	if (t > PREDICT_MODEL_TIME_MAX)
		return PREDICT_MODEL_TIME_MAX;
	return t;
}

bool predict_time_valid(double measured_ns)
{
	return isfinite(measured_ns) && measured_ns >= 0;
}

static void put_le(struct predict_wr *w, uint64_t v, size_t n)
{
	if (w->overflow || w->size - w->pos < n) {
		w->overflow = true;
		return;
	}
	for (size_t i = 0; i < n; i++)
		w->buf[w->pos + i] = (uint8_t)(v >> (8 * i));
	w->pos += n;
}

void predict_wr_begin(struct predict_wr *w, uint8_t *buf, size_t size, uint32_t magic,
		      uint32_t version)
{
	w->buf = buf;
	w->size = buf ? size : 0;
	w->pos = 0;
	w->overflow = false;
	put_le(w, magic, 4);
	put_le(w, version, 4);
	put_le(w, 0, 4); /* payload size, filled in by predict_wr_end() */
}

void predict_wr_u32(struct predict_wr *w, uint32_t v)
{
	put_le(w, v, 4);
}

void predict_wr_u64(struct predict_wr *w, uint64_t v)
{
	put_le(w, v, 8);
}

void predict_wr_f64(struct predict_wr *w, double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	put_le(w, u, 8);
}

int predict_wr_end(struct predict_wr *w)
{
	size_t payload;

	if (w->overflow || w->pos > (size_t)INT32_MAX)
		return -ENOSPC;
	payload = w->pos - PREDICT_STATE_HEADER;
	for (size_t i = 0; i < 4; i++)
		w->buf[8 + i] = (uint8_t)(payload >> (8 * i));
	return (int)w->pos;
}

static uint64_t get_le(struct predict_rd *r, size_t n)
{
	uint64_t v = 0;

	if (r->bad || r->size - r->pos < n) {
		r->bad = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->buf[r->pos + i] << (8 * i);
	r->pos += n;
	return v;
}

int predict_rd_begin(struct predict_rd *r, const uint8_t *buf, size_t size, uint32_t magic,
		     uint32_t version)
{
	r->buf = buf;
	r->size = buf ? size : 0;
	r->pos = 0;
	r->bad = false;
	if (get_le(r, 4) != magic || get_le(r, 4) != version)
		r->bad = true;
	if (get_le(r, 4) != r->size - PREDICT_STATE_HEADER)
		r->bad = true;
	return r->bad ? -EINVAL : 0;
}

uint32_t predict_rd_u32(struct predict_rd *r)
{
	return (uint32_t)get_le(r, 4);
}

uint64_t predict_rd_u64(struct predict_rd *r)
{
	return get_le(r, 8);
}

double predict_rd_f64(struct predict_rd *r)
{
	uint64_t u = get_le(r, 8);
	double v;

	memcpy(&v, &u, sizeof(v));
	if (!isfinite(v)) {
		r->bad = true;
		return 0;
	}
	return v;
}

int predict_rd_end(const struct predict_rd *r)
{
	return r->bad || r->pos != r->size ? -EINVAL : 0;
}
