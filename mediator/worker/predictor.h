// SPDX-License-Identifier: MIT
/*
 * The worker's predictor: the glue between a transport and libpredict.
 *
 * One struct predictor per guest context. Before a group is dispatched,
 * predictor_group() decodes it (tracking the context's state), extracts
 * its features and asks the context's estimator (predict_estimator.h:
 * the active cost model with its memo, bias and bound) for a prediction
 * and a bound; after its fence completed, predictor_learn() feeds the
 * measured time back to the model and the bound. Transports report
 * resources and transfers so that sizes and vertex bounding boxes are
 * known. Runs on the worker's main thread.
 */
#ifndef MEDIATOR_PREDICTOR_H
#define MEDIATOR_PREDICTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/groups.h"
#include "worker/pieces.h"
#include "predict.h"
#include "common/wire.h"

/* The model used when none is configured; chosen by bench/accuracy (README). */
#define PREDICTOR_DEFAULT_MODEL "sgd"

struct predictor;

/* @model: a name from predict_models[], or NULL for the default. NULL on failure. */
struct predictor *predictor_create(const char *model);
/* NULL is fine. */
void predictor_destroy(struct predictor *p);

const char *predictor_model_name(const struct predictor *p);

int predictor_resource_create(struct predictor *p, uint32_t handle,
			      const struct predict_resource_desc *desc);
void predictor_resource_destroy(struct predictor *p, uint32_t handle);
void predictor_resource_write(struct predictor *p, uint32_t handle, uint64_t offset,
			      const void *data, size_t len);
/* Where the transport keeps resources' memory (predict_ctx_set_resource_data()). */
void predictor_set_resource_data(struct predictor *p, predict_resource_data_fn fn, void *data);

/*
 * Decodes the group at @buf (@ndw dwords) and fills @info: command counts,
 * features, prediction and bound. Returns 0, or -EINVAL for a stream the
 * decoder rejects (then *@err says where; the group must not be
 * dispatched).
 */
int predictor_group(struct predictor *p, const uint32_t *buf, size_t ndw, struct group_info *info,
		    struct predict_decode_error *err);

/*
 * From now on (@on), predictor_group() also records where each group
 * could be cut into pieces (pieces.h), with the model's cost so far at
 * each place: one model evaluation per command with output. At most
 * PREDICTOR_MAX_BOUNDARIES places per group are kept (the rest of a
 * longer group stays with its last piece).
 */
#define PREDICTOR_MAX_BOUNDARIES 4096u
void predictor_record_boundaries(struct predictor *p, bool on);
/*
 * The places the last group predictor_group() decoded could be cut, in
 * stream order (*@b, valid until the next predictor_group()), and the
 * model's cost of the whole group in *@total_cost. Returns how many; 0
 * when not recorded or the group was refused.
 */
size_t predictor_boundaries(const struct predictor *p, const struct piece_boundary **b,
			    double *total_cost);

/*
 * A piece of a group (pieces.h), with features @f of its own, took
 * @measured_ns: the cost model learns from it (the estimator's other parts
 * learn from whole groups, predictor_learn()).
 */
void predictor_learn_piece(struct predictor *p, const struct predict_features *f,
			   double measured_ns);

/*
 * The group described by @info took @measured_ns on the GPU and
 * rasterized @fragments samples (< 0: not measured).
 */
void predictor_learn(struct predictor *p, const struct group_info *info, double measured_ns,
		     double fragments);

/*
 * Learned state (Keller's thesis, §4.6). predictor_load() replaces the model's
 * state with the one saved in @path for @identity (the GPU and driver):
 * returns 0, -ENOENT (no file), -ESTALE (saved for another GPU/driver) or
 * -EINVAL (corrupt: ignored); in every error case the model is unchanged.
 * predictor_save() writes it atomically; returns 0 or a negative errno.
 */
int predictor_load(struct predictor *p, const char *path, const char *identity);
int predictor_save(struct predictor *p, const char *path, const char *identity);
/* What the model has learned so far, for mediatorctl model. */
void predictor_report(const struct predictor *p, struct wire_model *out);

/*
 * Calibration (predict_calibrate.h). A client with this name (the program
 * `mediatorctl calibrate` runs) sends Schnitzer et al.'s microbenchmarks; its
 * measured groups are collected from predictor_calibration_start() on, and
 * predictor_calibration_finish() derives the coefficients and seeds the
 * model with them. finish returns 0 (then @summary lists the coefficients),
 * -ENOENT when no calibration was started, or another negative errno with
 * the reason in @summary.
 */
#define PREDICTOR_CALIBRATION_CLIENT "mediator-calibrate"
int predictor_calibration_start(struct predictor *p);
int predictor_calibration_finish(struct predictor *p, char *summary, size_t size);

/* Groups learned since the predictor was created. */
uint64_t predictor_learned(const struct predictor *p);

/*
 * From now on, appends one JSON line per learned group to @path (created
 * or appended to): {"seq", "hash", "flags", "measured_ns", "predicted_ns",
 * "fragments" (measured, -1 if not), "x": [PF_COUNT features]}. bench/accuracy replays these files
 * through every model. Returns 0 or a negative errno.
 */
int predictor_dump_to(struct predictor *p, const char *path);

#endif
