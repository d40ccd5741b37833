// SPDX-License-Identifier: MIT
/*
 * libpredict: what a command group will cost on the GPU, predicted from
 * its command stream before it runs, and learned from what it cost.
 * The one header its users include; its parts, in the order data flows:
 *
 *   predict_cmd.h        the classes of virgl commands
 *   predict_decode.h     decoding a virgl command stream
 *   predict_ctx.h        a context's state and a group's features
 *   predict_features.h   the features a cost model reads
 *   predict_model.h      cost models (history, linear, sgd, rls) and bounds
 *   predict_memo.h       per-context memo of repeated groups
 *   predict_recent.h     recent-history fragment estimates
 *   predict_estimator.h  a context's estimator: model, memo, bound
 *   predict_calibrate.h  fitting a model to calibration samples
 *   predict_persist.h    saving and loading learned models
 *   predict_map.h        a map from 32-bit handles to pointers
 *
 * and virgl_defs.h, the virgl protocol's definitions that no installed
 * header gives (struct virgl_box, PIPE_* and VIRGL_* numbers), for
 * libpredict and the transports alike.
 *
 * Headers of predict/ outside include/ are libpredict's own.
 */
#ifndef PREDICT_H
#define PREDICT_H

#include "predict_calibrate.h"
#include "predict_cmd.h"
#include "predict_ctx.h"
#include "predict_decode.h"
#include "predict_estimator.h"
#include "predict_features.h"
#include "predict_map.h"
#include "predict_memo.h"
#include "predict_model.h"
#include "predict_persist.h"
#include "predict_recent.h"
#include "virgl_defs.h"

#endif
