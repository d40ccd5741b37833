// SPDX-License-Identifier: MIT
/*
 * A context's estimator: model + memo + bound (see predict_estimator.h).
 */
#include <stdlib.h>
#include <string.h>

#include "predict_estimator.h"
#include "predict_model_priv.h"

struct predict_estimator {
	const struct predict_model_ops *ops;
	struct predict_model *model;
	struct predict_memo *memo;
	struct predict_recent *recent;
	struct predict_bound *bound;
	unsigned flags;
	double bias;	  /* running mean of recent measured - model, ns (anchor) */
	double start_max; /* the longest group measured during start-up, ns */
	uint64_t learned; /* groups learned from */
};

struct predict_estimator *predict_estimator_create(const struct predict_model_ops *ops,
						   unsigned flags)
{
	struct predict_estimator *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->ops = ops;
	e->flags = flags;
	e->model = ops->create();
	e->memo = predict_memo_create();
	e->recent = predict_recent_create();
	e->bound = predict_bound_create(PREDICT_ESTIMATOR_BOUND_QUANTILE);
	if (!e->model || !e->memo || !e->recent || !e->bound) {
		predict_estimator_destroy(e);
		return NULL;
	}
	return e;
}

void predict_estimator_destroy(struct predict_estimator *e)
{
	if (!e)
		return;
	if (e->model)
		e->ops->destroy(e->model);
	predict_memo_destroy(e->memo);
	predict_recent_destroy(e->recent);
	predict_bound_destroy(e->bound);
	free(e);
}

void predict_estimator_predict(struct predict_estimator *e, const struct predict_features *f,
			       struct predict_estimate *out)
{
	double memo = -1, t;

	out->model_ns = e->ops->predict(e->model, f);
	t = out->model_ns;
	if ((e->flags & PREDICT_ESTIMATOR_REANCHOR) && e->learned < PREDICT_ESTIMATOR_ANCHOR) {
		t += e->bias * (double)(PREDICT_ESTIMATOR_ANCHOR - e->learned) /
		     PREDICT_ESTIMATOR_ANCHOR;
		if (t < out->model_ns / 2) /* never below half the model's prediction */
			t = out->model_ns / 2;
	}
	out->kind = 0;
	if (e->flags & PREDICT_ESTIMATOR_RECENT) {
		out->kind = predict_recent_kind(f);
		t = predict_recent_predict(e->recent, out->kind, t);
	}
	if (e->flags & PREDICT_ESTIMATOR_MEMO)
		memo = predict_memo_lookup(e->memo, f->content_hash);
	out->memo = memo >= 0;
	out->predicted_ns = predict_time_clamp(out->memo ? memo : t);
	out->bound_ns = predict_bound_of_kind(e->bound, out->kind, out->predicted_ns);
	out->young = e->learned < PREDICT_ESTIMATOR_ANCHOR;
	if (out->young && out->bound_ns < e->start_max)
		out->bound_ns = e->start_max;
}

void predict_estimator_learn(struct predict_estimator *e, const struct predict_features *f,
			     const struct predict_estimate *est, double measured_ns)
{
	bool outlier = false;

	if (!predict_time_valid(measured_ns))
		return;
	if (e->flags & PREDICT_ESTIMATOR_MEMO) {
		unsigned hints = e->learned < PREDICT_ESTIMATOR_ANCHOR ? PREDICT_MEMO_START_UP : 0;

		/* Were groups like it measured before it? (Asked before it counts as one.) */
		if (est->kind && predict_recent_known(e->recent, est->kind))
			hints |= PREDICT_MEMO_KNOWN_KIND;
		outlier = predict_memo_update(e->memo, f->content_hash, est->model_ns, measured_ns,
					      hints);
	}
	e->ops->update(e->model, f, measured_ns);
	predict_recent_update(e->recent, est->kind, est->model_ns, measured_ns);
	/* One-off groups (the memo's) say nothing of the level. */
	if (!est->memo && !outlier)
		e->bias +=
		    PREDICT_ESTIMATOR_ANCHOR_WEIGHT * (measured_ns - est->model_ns - e->bias);
	/*
	 * Nor, at start-up, of the margin: the first draws compile shaders
	 * (tens of ms); kept among the residuals they would widen the bound
	 * of every group for the next PREDICT_BOUND_WINDOW groups. Later, every
	 * group counts, so that a context that keeps overrunning (new content
	 * each time) still widens its margin. Start-up groups, whose bounds
	 * are at least start_max, are not judged by the margin's bound.
	 */
	if (!(outlier && e->learned < PREDICT_ESTIMATOR_ANCHOR))
		predict_bound_update_kind(e->bound, est->kind, est->predicted_ns, measured_ns,
					  e->learned >= PREDICT_ESTIMATOR_ANCHOR);
	if (measured_ns > e->start_max)
		e->start_max = measured_ns;
	e->learned++;
}

const struct predict_model_ops *predict_estimator_ops(const struct predict_estimator *e)
{
	return e->ops;
}

struct predict_model *predict_estimator_model(struct predict_estimator *e)
{
	return e->model;
}

struct predict_memo *predict_estimator_memo(struct predict_estimator *e)
{
	return e->memo;
}

struct predict_recent *predict_estimator_recent(struct predict_estimator *e)
{
	return e->recent;
}

double predict_estimator_margin(const struct predict_estimator *e)
{
	return predict_bound_margin(e->bound);
}

static int memo_save(const void *memo, uint8_t *buf, size_t size)
{
	return predict_memo_save(memo, buf, size);
}

static int memo_load(void *memo, const uint8_t *buf, size_t size)
{
	return predict_memo_load(memo, buf, size);
}

static const struct predict_persist_section memo_section = {
    .name = "memo",
    .save = memo_save,
    .load = memo_load,
};

static int recent_save(const void *recent, uint8_t *buf, size_t size)
{
	return predict_recent_save(recent, buf, size);
}

static int recent_load(void *recent, const uint8_t *buf, size_t size)
{
	return predict_recent_load(recent, buf, size);
}

static const struct predict_persist_section recent_section = {
    .name = "recent",
    .save = recent_save,
    .load = recent_load,
};

void predict_estimator_persist_entries(
    struct predict_estimator *e,
    struct predict_persist_entry out[PREDICT_ESTIMATOR_PERSIST_ENTRIES])
{
	memset(out, 0, PREDICT_ESTIMATOR_PERSIST_ENTRIES * sizeof(*out));
	out[0].ops = predict_estimator_ops(e);
	out[0].model = predict_estimator_model(e);
	out[1].section = &memo_section;
	out[1].obj = predict_estimator_memo(e);
	out[2].section = &recent_section;
	out[2].obj = predict_estimator_recent(e);
}
