// SPDX-License-Identifier: MIT
/*
 * Recent cost of similar groups, per context.
 *
 * A cost model over features (predict_model.h) fits every group at once
 * and moves slowly by design. The same kind of group, though, costs a
 * level that drifts over seconds on a shared machine, and some kinds the
 * model fits worse than others. Measured in bench/accuracy on identical
 * groups (glmark2 draws, full-HD clears: doc/results/2026-11.md), the
 * level varies by tens of percent and each group's time is strongly
 * correlated with the previous one's; following their recent level
 * predicts them better than the model alone.
 *
 * This table keeps, per kind of group, an exponentially weighted mean of
 * its measured times (weight PREDICT_RECENT_LEVEL_WEIGHT on the newest)
 * and how far off that mean and the model have been for that kind lately
 * (mean relative error, weight PREDICT_RECENT_ERROR_WEIGHT). A kind's
 * prediction blends the two, each weighted by the inverse of its recent
 * error, once the kind was seen PREDICT_RECENT_MIN_SEEN times: a kind the
 * model predicts well keeps the model's prediction, a kind it predicts
 * badly follows its level.
 *
 * A kind is the group's features with every nonzero value rounded to a
 * logarithmic step of about 10 % (predict_recent_kind()): groups of the
 * same commands, sizes and shaders whose estimated fragments differ by a
 * few percent are one kind; a group twice the size is another. Kinds
 * live in PREDICT_RECENT_SLOTS slots indexed by kind; a new kind takes
 * over its slot.
 *
 * The table is saved with the model (predict_recent_save()), so that
 * after a restart the kinds the application runs again start from what
 * they cost last time. One thread at a time.
 */
#ifndef PREDICT_RECENT_H
#define PREDICT_RECENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "predict_features.h"

/* Slots of the table: far more than the kinds one application repeats (glmark2 scenes: 12-19). */
#define PREDICT_RECENT_SLOTS 512u
/* Weight of the newest measurement in a kind's level. */
#define PREDICT_RECENT_LEVEL_WEIGHT 0.5
/* Weight of the newest error in a kind's recent errors. */
#define PREDICT_RECENT_ERROR_WEIGHT 0.2
/* Measurements of a kind before its level is used. */
#define PREDICT_RECENT_MIN_SEEN 2u

struct predict_recent;

/* Returns NULL on allocation failure. */
struct predict_recent *predict_recent_create(void);
/* NULL is fine. */
void predict_recent_destroy(struct predict_recent *recent);

/* The kind of a group with features @f (never 0). */
uint64_t predict_recent_kind(const struct predict_features *f);

/*
 * The prediction for a group of @kind that the model predicts at
 * @model_ns: @model_ns itself for a kind not seen often enough, else the
 * blend of the model's prediction and the kind's level.
 */
double predict_recent_predict(const struct predict_recent *recent, uint64_t kind, double model_ns);

/* True when groups of @kind were measured at least PREDICT_RECENT_MIN_SEEN times lately. */
bool predict_recent_known(const struct predict_recent *recent, uint64_t kind);

/* A group of @kind, predicted by the model at @model_ns, took @measured_ns. */
void predict_recent_update(struct predict_recent *recent, uint64_t kind, double model_ns,
			   double measured_ns);

/* Kinds in the table now. */
size_t predict_recent_size(const struct predict_recent *recent);

/* Serialises the table into @buf; bytes written or -ENOSPC. */
int predict_recent_save(const struct predict_recent *recent, uint8_t *buf, size_t size);
/* Replaces the table with @buf as written by save(); 0 or -EINVAL (table unchanged). */
int predict_recent_load(struct predict_recent *recent, const uint8_t *buf, size_t size);

#endif
