// SPDX-License-Identifier: MIT
/*
 * Calibration (Schnitzer et al., Concepts for Execution Time Prediction of
 * 3D GPU Rendering, §V): the cost coefficients measured with
 * microbenchmarks that each isolate one kind of work, used to seed a cost
 * model before it has seen any application.
 *
 * The calibration program (mediator-calibrate) sends groups of four kinds:
 * empty flushes, runs of clears with one buffer mask, draws whose triangles
 * are all culled (vertices without fragments), and draws of half-target
 * triangles. predict_calibration_add() sorts each measured group into its
 * kind by its features; predict_calibration_solve() then derives, as
 * Schnitzer et al. do, one coefficient per kind from the medians of
 *   flush:      t                                   -> ns per group
 *   clear mask: (t - group) / pixels                -> ns per pixel cleared
 *   culled:     (t - group) / vertices              -> ns per vertex
 *   triangles:  (t - group - vertex * v) / fragments -> ns per fragment
 * (medians, so that a first group that also compiled shaders does not
 * count). Coefficients of features the microbenchmarks cannot separate
 * (shader instruction mixes, per-draw and per-command costs) are 0;
 * features they do not exercise at all are left to the model (< 0).
 */
#ifndef PREDICT_CALIBRATE_H
#define PREDICT_CALIBRATE_H

#include "predict_features.h"
#include "predict_model.h"

/* Samples kept; a calibration run sends a few hundred groups. */
#define PREDICT_CALIBRATION_MAX 4096u
/* Groups of each kind needed before solving. */
#define PREDICT_CALIBRATION_MIN 3u

struct predict_calibration;

struct predict_calibration_result {
	double coef[PF_COUNT]; /* ns per unit; < 0: not calibrated, keep what the model has */
	double xmax[PF_COUNT]; /* largest value of each feature in the samples */
	double ymax;	       /* longest measured group, ns */
	uint32_t samples[4];   /* groups used per kind: flush, clear, vertex, fragment */
};

struct predict_calibration *predict_calibration_create(void);
/* NULL is fine. */
void predict_calibration_destroy(struct predict_calibration *cal);
/* A calibration group with features @f took @measured_ns. Groups of no known kind are ignored. */
void predict_calibration_add(struct predict_calibration *cal, const struct predict_features *f,
			     double measured_ns);
/*
 * Returns 0 and fills @out, or -EAGAIN when a kind has fewer than
 * PREDICT_CALIBRATION_MIN groups (out->samples says which).
 */
int predict_calibration_solve(const struct predict_calibration *cal,
			      struct predict_calibration_result *out);
/*
 * Seeds @model (of @ops) with @r's coefficients. Returns 0, or -ENOTSUP
 * for a model without coefficients (history).
 */
int predict_calibration_seed(const struct predict_model_ops *ops, struct predict_model *model,
			     const struct predict_calibration_result *r);

#endif
