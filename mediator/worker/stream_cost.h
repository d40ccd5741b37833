// SPDX-License-Identifier: MIT
/*
 * A guest stream's cost: the worker's glue feeding a transport's command
 * groups to libpredict (predict/), the predictor of the design.
 *
 * One struct stream_cost per guest context. Before a group is dispatched,
 * stream_cost_group() decodes it (tracking the context's state), extracts
 * its features and asks the context's estimator (predict_estimator.h:
 * the active cost model with its memo, bias and bound) for a prediction
 * and a bound; after its fence completed, stream_cost_learn() feeds the
 * measured time back to the model and the bound. Transports report
 * resources and transfers so that sizes and vertex bounding boxes are
 * known. Runs on the worker's main thread.
 */
#ifndef MEDIATOR_STREAM_COST_H
#define MEDIATOR_STREAM_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/groups.h"
#include "worker/pieces.h"
#include "predict.h"
#include "common/wire.h"

/* The model used when none is configured; chosen by bench/accuracy (README). */
#define STREAM_COST_DEFAULT_MODEL "sgd"

struct stream_cost;

/* @model: a name from predict_models[], or NULL for the default. NULL on failure. */
struct stream_cost *stream_cost_create(const char *model);
/* NULL is fine. */
void stream_cost_destroy(struct stream_cost *p);

const char *stream_cost_model_name(const struct stream_cost *p);

int stream_cost_resource_create(struct stream_cost *p, uint32_t handle,
				const struct predict_resource_desc *desc);
void stream_cost_resource_destroy(struct stream_cost *p, uint32_t handle);
void stream_cost_resource_write(struct stream_cost *p, uint32_t handle, uint64_t offset,
				const void *data, size_t len);
/* Where the transport keeps resources' memory (predict_ctx_set_resource_data()). */
void stream_cost_set_resource_data(struct stream_cost *p, predict_resource_data_fn fn, void *data);

/*
 * Decodes the group at @buf (@ndw dwords) and fills @info: command counts,
 * features, prediction and bound. Returns 0, or -EINVAL for a stream the
 * decoder rejects (then *@err says where; the group must not be
 * dispatched).
 */
int stream_cost_group(struct stream_cost *p, const uint32_t *buf, size_t ndw,
		      struct group_info *info, struct predict_decode_error *err);

/*
 * From now on (@on), stream_cost_group() also records where each group
 * could be cut into pieces (pieces.h), with the model's cost so far at
 * each place: one model evaluation per command with output. At most
 * STREAM_COST_MAX_BOUNDARIES places per group are kept (the rest of a
 * longer group stays with its last piece).
 */
#define STREAM_COST_MAX_BOUNDARIES 4096u
void stream_cost_record_boundaries(struct stream_cost *p, bool on);
/*
 * The places the last group stream_cost_group() decoded could be cut, in
 * stream order (*@b, valid until the next stream_cost_group()), and the
 * model's cost of the whole group in *@total_cost. Returns how many; 0
 * when not recorded or the group was refused.
 */
size_t stream_cost_boundaries(const struct stream_cost *p, const struct piece_boundary **b,
			      double *total_cost);

/*
 * A piece of a group (pieces.h), with features @f of its own, took
 * @measured_ns: the cost model learns from it (the estimator's other parts
 * learn from whole groups, stream_cost_learn()).
 */
void stream_cost_learn_piece(struct stream_cost *p, const struct predict_features *f,
			     double measured_ns);

/*
 * The group described by @info took @measured_ns on the GPU and
 * rasterized @fragments samples (< 0: not measured).
 */
void stream_cost_learn(struct stream_cost *p, const struct group_info *info, double measured_ns,
		       double fragments);

/*
 * Learned state (Keller's thesis, §4.6). stream_cost_load() replaces the model's
 * state with the one saved in @path for @identity (the GPU and driver):
 * returns 0, -ENOENT (no file), -ESTALE (saved for another GPU/driver) or
 * -EINVAL (corrupt: ignored); in every error case the model is unchanged.
 * stream_cost_save() writes it atomically; returns 0 or a negative errno.
 */
int stream_cost_load(struct stream_cost *p, const char *path, const char *identity);
int stream_cost_save(struct stream_cost *p, const char *path, const char *identity);
/* What the model has learned so far, for mediatorctl model. */
void stream_cost_report(const struct stream_cost *p, struct wire_model *out);

/*
 * Calibration (predict_calibrate.h). A client with this name (the program
 * `mediatorctl calibrate` runs) sends Schnitzer et al.'s microbenchmarks; its
 * measured groups are collected from stream_cost_calibration_start() on, and
 * stream_cost_calibration_finish() derives the coefficients and seeds the
 * model with them. finish returns 0 (then @summary lists the coefficients),
 * -ENOENT when no calibration was started, or another negative errno with
 * the reason in @summary.
 */
#define STREAM_COST_CALIBRATION_CLIENT "mediator-calibrate"
int stream_cost_calibration_start(struct stream_cost *p);
int stream_cost_calibration_finish(struct stream_cost *p, char *summary, size_t size);

/* Groups learned since the predictor was created. */
uint64_t stream_cost_learned(const struct stream_cost *p);

/*
 * From now on, appends one JSON line per learned group to @path (created
 * or appended to): {"seq", "hash", "flags", "measured_ns", "predicted_ns",
 * "fragments" (measured, -1 if not), "x": [PF_COUNT features]}. bench/accuracy replays these files
 * through every model. Returns 0 or a negative errno.
 */
int stream_cost_dump_to(struct stream_cost *p, const char *path);

#endif
