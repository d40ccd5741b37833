// SPDX-License-Identifier: MIT
/*
 * Cost models: each predicts a command group's GPU time in nanoseconds
 * from its features (predict_features.h) and learns from every measured
 * time. All models implement struct predict_model_ops, so that they can be
 * compared on the same data (bench/accuracy) and chosen by name; the core
 * never switches on the concrete model.
 *
 *   history  TimeGraph's history-based prediction as Schnitzer et al. evaluate it:
 *            same content_hash seen before -> its last measured time,
 *            otherwise the largest time seen so far.
 *   linear   Schnitzer et al.'s calibrated linear model: t = sum(c_i * x_i) with
 *            c_i set by calibration (predict_model_calibrate) and refined
 *            online by normalised least-mean-squares.
 *   sgd      Keller's thesis: online linear regression by stochastic gradient
 *            descent with online feature normalisation and ADADELTA
 *            per-coefficient learning rates.
 *   rls      Gupta et al.: recursive least squares with a forgetting factor.
 *
 * The papers (Schnitzer et al., Concepts for Execution Time Prediction of
 * 3D GPU Rendering; Keller's and Ma's theses; Gupta et al., An Online
 * Learning Methodology for Performance Modeling of Graphics Processors) are
 * listed in doc/references.md.
 *
 * A model instance is used from one thread at a time (the worker's main
 * thread). Predictions are never negative and never NaN.
 */
#ifndef PREDICT_MODEL_H
#define PREDICT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "predict_features.h"

struct predict_model;

#define PREDICT_MODEL_OPS_VERSION 1

/* Largest serialised state of any model, in bytes. */
#define PREDICT_MODEL_STATE_MAX 65536

struct predict_model_ops {
	int version; /* PREDICT_MODEL_OPS_VERSION */
	const char *name;
	/* Returns NULL on allocation failure. */
	struct predict_model *(*create)(void);
	/* NULL is fine. */
	void (*destroy)(struct predict_model *model);
	/* Predicted GPU time of a group with features @f, in ns (>= 0). */
	double (*predict)(struct predict_model *model, const struct predict_features *f);
	/* Learns from one measurement: the group with features @f took @measured_ns. */
	void (*update)(struct predict_model *model, const struct predict_features *f,
		       double measured_ns);
	/*
	 * Serialises the learned state into @buf (at most @size bytes).
	 * Returns the number of bytes written, or a negative errno (-ENOSPC).
	 */
	int (*save)(const struct predict_model *model, uint8_t *buf, size_t size);
	/*
	 * Replaces the learned state with @buf as written by save(). Checks
	 * everything (sizes, finite values); returns 0, or -EINVAL and leaves
	 * the model unchanged.
	 */
	int (*load)(struct predict_model *model, const uint8_t *buf, size_t size);
	/*
	 * Copies up to @n learned coefficients (ns per unit of feature i, in
	 * predict_feature order) into @out; returns how many the model has
	 * (0 for models without coefficients, such as history).
	 */
	size_t (*coefficients)(const struct predict_model *model, double *out, size_t n);
	/*
	 * Replaces the coefficient of each feature i with @coef[i] ns per
	 * unit where @coef[i] >= 0 (calibration, predict_calibrate.h);
	 * @xmax and @ymax are the largest feature values and time the
	 * calibration saw (for models that scale their inputs). NULL for
	 * models without coefficients.
	 */
	void (*seed)(struct predict_model *model, const double coef[PF_COUNT],
		     const double xmax[PF_COUNT], double ymax);
};

extern const struct predict_model_ops predict_model_history_ops;
extern const struct predict_model_ops predict_model_linear_ops;
extern const struct predict_model_ops predict_model_sgd_ops;
extern const struct predict_model_ops predict_model_rls_ops;

/* The ops of the model called @name, or NULL. */
const struct predict_model_ops *predict_model_find(const char *name);
/* All models, NULL-terminated, in a stable order. */
extern const struct predict_model_ops *const predict_models[];

/*
 * Seeds a linear model's coefficients from calibration (Schnitzer et al. §IV-C..E):
 * @coef[i] in ns per unit of feature i, PF_COUNT values.
 */
int predict_model_linear_set(struct predict_model *model, const double coef[PF_COUNT]);

/*
 * The bound of a context: prediction + a margin from a running quantile
 * of that context's recent residuals (measured - predicted), so that the
 * scheduler can admit a group against a time it will rarely exceed; a
 * kind of group seen often enough gets a margin from its own spread
 * where that is smaller (predict_bound_of_kind()), so that a steady
 * kind's bound is not set by another kind's tail. When measurements keep
 * exceeding the bound (for instance a guest whose draws fool the fragment
 * estimate), the margin widens until the bound holds again.
 */
struct predict_bound;

/* Residuals kept per bound. */
#define PREDICT_BOUND_WINDOW 512
/* Kinds of group a bound follows on their own (glmark2 scenes: 2-6 kinds seen 32 times). */
#define PREDICT_BOUND_KINDS 64u
/* Groups of a kind learned before it has a margin of its own. */
#define PREDICT_BOUND_KIND_MIN 32u

/* @quantile in (0, 1), e.g. 0.995. Returns NULL on allocation failure. */
struct predict_bound *predict_bound_create(double quantile);
void predict_bound_destroy(struct predict_bound *bound);
/* The bound by the context's margin for a group predicted @predicted_ns (>= predicted_ns). */
double predict_bound_of(const struct predict_bound *bound, double predicted_ns);
/*
 * The bound for a group of @kind (predict_recent_kind(); 0: none)
 * predicted to take @predicted_ns: by the smaller of the kind's own
 * margin, once it has one, and the context's; else as predict_bound_of().
 * Never below @predicted_ns.
 */
double predict_bound_of_kind(const struct predict_bound *bound, uint64_t kind, double predicted_ns);
/*
 * Learns from one group: predicted @predicted_ns, measured @measured_ns.
 * Its residual joins the window; whether it exceeded its bound counts
 * toward widening the margin only when @judged (false for a context's
 * start-up groups, whose bounds the caller set otherwise: counted, the
 * start-up's misses widened a cluster's margin from 1 to 7.5 ms two
 * seconds later, at its first ordinary overrun).
 */
void predict_bound_update(struct predict_bound *bound, double predicted_ns, double measured_ns,
			  bool judged);
/*
 * The same for a group of @kind (0: none, as predict_bound_update()): it
 * also teaches the kind's margin, and @judged says whether its exceedance
 * counts toward that margin's inflation too.
 */
void predict_bound_update_kind(struct predict_bound *bound, uint64_t kind, double predicted_ns,
			       double measured_ns, bool judged);
/* The context's current margin in ns (for show-budgets / mediatorctl model). */
double predict_bound_margin(const struct predict_bound *bound);

#endif
