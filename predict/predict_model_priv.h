// SPDX-License-Identifier: MIT
/*
 * Helpers shared by the cost models (predict_model_*.c); not a public
 * interface.
 *
 * Features: predict_features_sanitize() copies a group's features into a
 * plain array with every value clamped to [0, PREDICT_FEATURE_MAX] (NaN
 * becomes 0), so that the models never see a value that could overflow.
 *
 * Times: predict_time_clamp() maps any computed prediction into
 * [0, PREDICT_MODEL_TIME_MAX]; predict_time_valid() says whether a
 * measured time is worth learning from.
 *
 * Every model's struct predict_model starts with a
 * `const struct predict_model_ops *ops` pointing at its own ops, so that
 * model-specific entry points (predict_model_linear_set()) can refuse a
 * model of another kind: predict_model_ops_of().
 *
 * Serialisation: every model's state starts with a 12-byte header
 * (magic, version, payload size; all little endian) followed by its
 * payload. struct predict_wr / struct predict_rd write and read
 * little-endian integers and doubles with bounds checks; a reader refuses
 * non-finite doubles so that load() never accepts NaN or infinity.
 */
#ifndef PREDICT_MODEL_PRIV_H
#define PREDICT_MODEL_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "predict_features.h"
#include "predict_model.h"

/*
 * Largest prediction and largest measurement learned from, in ns: 1e15 ns
 * is about 11.6 days, far above any GPU command group, and small enough
 * that sums of a few of them stay exact-ish in a double.
 */
#define PREDICT_MODEL_TIME_MAX 1e15

/* Size of the per-model state header: magic u32, version u32, payload size u32. */
#define PREDICT_STATE_HEADER 12u

static inline const struct predict_model_ops *predict_model_ops_of(const void *model)
{
	return *(const struct predict_model_ops *const *)model;
}

void predict_features_sanitize(const struct predict_features *f, double x[PF_COUNT]);
double predict_time_clamp(double t);
bool predict_time_valid(double measured_ns);

struct predict_wr {
	uint8_t *buf;
	size_t size;
	size_t pos;
	bool overflow;
};

struct predict_rd {
	const uint8_t *buf;
	size_t size;
	size_t pos;
	bool bad;
};

/* Starts a state: writes the header; predict_wr_end() fills in its size. */
void predict_wr_begin(struct predict_wr *w, uint8_t *buf, size_t size, uint32_t magic,
		      uint32_t version);
void predict_wr_u32(struct predict_wr *w, uint32_t v);
void predict_wr_u64(struct predict_wr *w, uint64_t v);
void predict_wr_f64(struct predict_wr *w, double v);
/* Returns the bytes written, or -ENOSPC when @size was too small. */
int predict_wr_end(struct predict_wr *w);

/*
 * Starts reading a state: checks the header's magic, version and that the
 * payload size matches @size exactly. Returns 0 or -EINVAL.
 */
int predict_rd_begin(struct predict_rd *r, const uint8_t *buf, size_t size, uint32_t magic,
		     uint32_t version);
uint32_t predict_rd_u32(struct predict_rd *r);
uint64_t predict_rd_u64(struct predict_rd *r);
/* Marks the reader bad (and returns 0) for a non-finite value. */
double predict_rd_f64(struct predict_rd *r);
/* 0 if everything was read without error and nothing is left over, else -EINVAL. */
int predict_rd_end(const struct predict_rd *r);

#endif
