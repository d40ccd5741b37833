// SPDX-License-Identifier: MIT
/*
 * A context's estimator: what the worker (and bench/accuracy's replay)
 * asks before dispatching a group, and teaches after it completed. It
 * composes the cost model (predict_model.h) with what else is learned
 * from the same measurements:
 *
 *   recent  per kind of group, the recent level of its measured times
 *           (predict_recent.h), blended with the model's prediction by
 *           how well each did for that kind lately;
 *   memo    one-off groups, by exact content (predict_memo.h): groups
 *           the model predicted far off, such as start-up groups that
 *           compile shaders, and the context's start-up groups, which
 *           repeat at the next start;
 *   anchor  over the first PREDICT_ESTIMATOR_ANCHOR groups, a running
 *           mean of the residuals (measured - model) is added to the
 *           model's prediction, fading out linearly: a model loaded
 *           from a saved state knows what costs what, but the same work
 *           costs a different amount from one start to the next on a
 *           shared machine (test-model-state; doc/results/ has the
 *           figures);
 *   bound   prediction + a quantile of the recent residuals
 *           (predict_bound_*), for the scheduler: per kind of group
 *           (recent's kind), a kind seen often enough gets a margin
 *           from its own spread when that is below the context's, so
 *           that short steady groups are not bounded by the long
 *           groups' tail. During the first
 *           PREDICT_ESTIMATOR_ANCHOR groups the bound is at least the
 *           longest group measured so far: the start-up groups the model
 *           under-predicts are kept out of the residuals (above), and a
 *           model still learning under-predicts repeated work too (a
 *           long draw predicted 0.1 ms, then 0.3, 0.4, ... while it takes
 *           8.5 ms every time); a bound below what the context was seen
 *           to take would let the scheduler start it right before a
 *           safety frame. Such an estimate is marked young: that floor
 *           is often a one-off (a 28 ms shader compile), more than any
 *           gap a safety domain leaves, so mediatord places a young
 *           group of a normal domain at the start of a safety gap
 *           rather than deferring it as oversize (scheduler.h).
 *
 * Tried and left out (bench/accuracy, same recorded groups): keeping
 * that residual mean for good, to follow drift faster than the
 * regression: sgd MAPE rose on every workload but two-contexts
 * (doc/results/2026-11.md).
 *
 * One thread at a time.
 */
#ifndef PREDICT_ESTIMATOR_H
#define PREDICT_ESTIMATOR_H

#include <stdbool.h>

#include "predict_features.h"
#include "predict_memo.h"
#include "predict_model.h"
#include "predict_persist.h"
#include "predict_recent.h"

/* Groups over which a context re-anchors its model's level, and the newest residual's weight. */
#define PREDICT_ESTIMATOR_ANCHOR	64u
#define PREDICT_ESTIMATOR_ANCHOR_WEIGHT 0.3
/* Quantile of the residuals the bound is set at. */
#define PREDICT_ESTIMATOR_BOUND_QUANTILE 0.995

/* What is known of a group before dispatch. */
struct predict_estimate {
	double predicted_ns; /* what the group is expected to take */
	double bound_ns;     /* what it will rarely exceed (>= predicted_ns) */
	double model_ns;     /* the model's own prediction */
	uint64_t kind;	     /* the group's kind (predict_recent_kind()), 0 without recent */
	bool memo;	     /* predicted_ns is the memo's */
	bool young;	     /* among the first PREDICT_ESTIMATOR_ANCHOR groups (see bound) */
};

/* What an estimator adds to its model (bench/accuracy compares with and without). */
enum predict_estimator_flag {
	PREDICT_ESTIMATOR_MEMO = 1u << 0,
	PREDICT_ESTIMATOR_REANCHOR = 1u << 1,
	PREDICT_ESTIMATOR_RECENT = 1u << 2,
	PREDICT_ESTIMATOR_ALL =
	    PREDICT_ESTIMATOR_MEMO | PREDICT_ESTIMATOR_REANCHOR | PREDICT_ESTIMATOR_RECENT,
};

struct predict_estimator;

/* A fresh estimator for model @ops with corrections @flags; NULL on allocation failure. */
struct predict_estimator *predict_estimator_create(const struct predict_model_ops *ops,
						   unsigned flags);
/* NULL is fine. */
void predict_estimator_destroy(struct predict_estimator *e);

void predict_estimator_predict(struct predict_estimator *e, const struct predict_features *f,
			       struct predict_estimate *out);
/* The group with features @f, estimated as @est, took @measured_ns. */
void predict_estimator_learn(struct predict_estimator *e, const struct predict_features *f,
			     const struct predict_estimate *est, double measured_ns);

const struct predict_model_ops *predict_estimator_ops(const struct predict_estimator *e);
struct predict_model *predict_estimator_model(struct predict_estimator *e);
struct predict_memo *predict_estimator_memo(struct predict_estimator *e);
struct predict_recent *predict_estimator_recent(struct predict_estimator *e);
/* The bound's current margin, ns. */
double predict_estimator_margin(const struct predict_estimator *e);

/* What of an estimator a state file holds: its model, its memo, its recent levels. */
#define PREDICT_ESTIMATOR_PERSIST_ENTRIES 3
/*
 * Fills @out with the entries that save or load @e's learned state with
 * predict_persist_save() / predict_persist_load() (the worker adds its
 * context's own section; bench/accuracy's replay loads a worker's file).
 */
void predict_estimator_persist_entries(
    struct predict_estimator *e,
    struct predict_persist_entry out[PREDICT_ESTIMATOR_PERSIST_ENTRIES]);

#endif
