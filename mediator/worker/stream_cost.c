// SPDX-License-Identifier: MIT
/*
 * Worker-side prediction glue (see stream_cost.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predict.h"
#include "worker/stream_cost.h"

struct stream_cost {
	struct predict_ctx *ctx;
	const struct predict_model_ops *ops;
	struct predict_estimator *est;
	FILE *dump;
	struct predict_calibration *calibration; /* NULL unless a calibration client */
	uint64_t learned;
	/* Accuracy so far, for stream_cost_report(). */
	double abs_err_sum, ape_sum;
	uint64_t big, over;
	uint32_t flags;
	/* Where the last group could be cut (stream_cost_record_boundaries()). */
	bool record_boundaries;
	struct piece_boundary *boundaries;
	size_t n_boundaries, cap_boundaries;
	double empty_cost, total_cost;
};

/* Groups measured at least this long count for the MAPE (as in bench/accuracy). */
#define STREAM_COST_MAPE_MIN_NS 100000.0

struct stream_cost *stream_cost_create(const char *model)
{
	struct stream_cost *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->ops = predict_model_find(model ? model : STREAM_COST_DEFAULT_MODEL);
	if (!p->ops) {
		free(p);
		return NULL;
	}
	p->ctx = predict_ctx_create();
	p->est = predict_estimator_create(p->ops, PREDICT_ESTIMATOR_ALL);
	if (!p->ctx || !p->est) {
		stream_cost_destroy(p);
		return NULL;
	}
	return p;
}

void stream_cost_destroy(struct stream_cost *p)
{
	if (!p)
		return;
	if (p->dump)
		fclose(p->dump);
	predict_calibration_destroy(p->calibration);
	predict_estimator_destroy(p->est);
	predict_ctx_destroy(p->ctx);
	free(p->boundaries);
	free(p);
}

const char *stream_cost_model_name(const struct stream_cost *p)
{
	return p->ops->name;
}

int stream_cost_resource_create(struct stream_cost *p, uint32_t handle,
				const struct predict_resource_desc *desc)
{
	return predict_ctx_resource_create(p->ctx, handle, desc);
}

void stream_cost_resource_destroy(struct stream_cost *p, uint32_t handle)
{
	predict_ctx_resource_destroy(p->ctx, handle);
}

void stream_cost_resource_write(struct stream_cost *p, uint32_t handle, uint64_t offset,
				const void *data, size_t len)
{
	predict_ctx_resource_write(p->ctx, handle, offset, data, len);
}

void stream_cost_set_resource_data(struct stream_cost *p, predict_resource_data_fn fn, void *data)
{
	predict_ctx_set_resource_data(p->ctx, fn, data);
}

/* The model's cost of a group with features @f and @commands commands; @g gets its features. */
static double model_cost(struct stream_cost *p, const struct predict_features *f, double commands,
			 struct predict_features *g)
{
	*g = *f;
	g->x[PF_GROUP] = 1;
	g->x[PF_CMDS] = commands;
	return p->ops->predict(predict_estimator_model(p->est), g);
}

/* predict_boundary_fn: remembers a place where the group may be cut, with its cost so far. */
static void on_boundary(void *data, const struct predict_boundary *at)
{
	struct stream_cost *p = data;
	struct piece_boundary *nb;
	struct predict_features g;
	double cost;

	if (p->n_boundaries == p->cap_boundaries) {
		size_t cap = p->cap_boundaries ? 2 * p->cap_boundaries : 64;
		struct piece_boundary *b;

		if (cap > STREAM_COST_MAX_BOUNDARIES)
			return; /* the rest of the group stays with the last piece */
		b = realloc(p->boundaries, cap * sizeof(*b));
		if (!b)
			return;
		p->boundaries = b;
		p->cap_boundaries = cap;
	}
	cost = model_cost(p, at->so_far, at->commands, &g) - p->empty_cost;
	nb = &p->boundaries[p->n_boundaries++];
	nb->start_dw = at->start_dw;
	nb->end_dw = at->end_dw;
	nb->cost = cost > 0 && isfinite(cost) ? cost : 0;
	memcpy(nb->x, g.x, sizeof(g.x));
	nb->draw = at->draw;
	nb->tileable = at->tileable;
	nb->tiling = at->tiling;
	nb->untiled = at->untiled;
}

void stream_cost_record_boundaries(struct stream_cost *p, bool on)
{
	p->record_boundaries = on;
	predict_ctx_set_boundary_hook(p->ctx, on ? on_boundary : NULL, p);
}

size_t stream_cost_boundaries(const struct stream_cost *p, const struct piece_boundary **b,
			      double *total_cost)
{
	*b = p->boundaries;
	*total_cost = p->total_cost;
	return p->n_boundaries;
}

int stream_cost_group(struct stream_cost *p, const uint32_t *buf, size_t ndw,
		      struct group_info *info, struct predict_decode_error *err)
{
	struct predict_features empty = {0}, g;
	int r;

	memset(info, 0, sizeof(*info));
	p->n_boundaries = 0;
	p->total_cost = 0;
	if (p->record_boundaries)
		p->empty_cost = model_cost(p, &empty, 0, &g);
	r = predict_ctx_submit(p->ctx, buf, ndw, &info->features, &info->counts, err);
	if (r < 0) {
		p->n_boundaries = 0;
		return r;
	}
	predict_estimator_predict(p->est, &info->features, &info->est);
	info->model = p->ops->name;
	if (p->record_boundaries)
		p->total_cost =
		    model_cost(p, &info->features, info->features.x[PF_CMDS], &g) - p->empty_cost;
	return 0;
}

void stream_cost_learn_piece(struct stream_cost *p, const struct predict_features *f,
			     double measured_ns)
{
	p->ops->update(predict_estimator_model(p->est), f, measured_ns);
}

void stream_cost_learn(struct stream_cost *p, const struct group_info *info, double measured_ns,
		       double fragments)
{
	double err = info->est.predicted_ns - measured_ns;

	if (fragments >= 0)
		predict_ctx_observe_fragments(p->ctx, fragments, &info->features);

	predict_estimator_learn(p->est, &info->features, &info->est, measured_ns);
	if (p->calibration)
		predict_calibration_add(p->calibration, &info->features, measured_ns);
	p->learned++;
	p->abs_err_sum += err < 0 ? -err : err;
	if (measured_ns >= STREAM_COST_MAPE_MIN_NS) {
		p->ape_sum += (err < 0 ? -err : err) / measured_ns;
		p->big++;
	}
	p->over += measured_ns > info->est.bound_ns;
	p->flags |= info->features.flags;
	if (p->dump) {
		fprintf(p->dump,
			"{\"seq\":%llu,\"hash\":\"%016llx\",\"flags\":%u,\"measured_ns\":%.0f,"
			"\"predicted_ns\":%.0f,\"fragments\":%.0f,\"x\":[",
			(unsigned long long)p->learned,
			(unsigned long long)info->features.content_hash, info->features.flags,
			measured_ns, info->est.predicted_ns, fragments);
		for (int i = 0; i < PF_COUNT; i++)
			fprintf(p->dump, "%s%.17g", i ? "," : "", info->features.x[i]);
		fputs("]}\n", p->dump);
	}
}

static const struct predict_persist_section fragments_section = {
    .name = "fragments",
    .save = predict_ctx_save_fragments,
    .load = predict_ctx_load_fragments,
};

/* What a domain's state file holds: the estimator's (model first), the fragment estimators. */
#define STREAM_COST_SECTIONS (PREDICT_ESTIMATOR_PERSIST_ENTRIES + 1)

static void stream_cost_sections(struct stream_cost *p,
				 struct predict_persist_entry e[STREAM_COST_SECTIONS])
{
	predict_estimator_persist_entries(p->est, e);
	memset(&e[STREAM_COST_SECTIONS - 1], 0, sizeof(e[0]));
	e[STREAM_COST_SECTIONS - 1].section = &fragments_section;
	e[STREAM_COST_SECTIONS - 1].obj = p->ctx;
}

int stream_cost_load(struct stream_cost *p, const char *path, const char *identity)
{
	struct predict_persist_entry e[STREAM_COST_SECTIONS];
	int r;

	stream_cost_sections(p, e);
	r = predict_persist_load(path, identity, e, STREAM_COST_SECTIONS);
	if (r < 0 && r != -EINVAL)
		return r;
	/* The model's own state decides; the other sections may be missing (older files). */
	for (int i = 0; i < STREAM_COST_SECTIONS; i++) {
		if (e[i].status && e[i].status != -ENOENT)
			return e[i].status;
	}
	return r < 0 ? r : e[0].status;
}

int stream_cost_save(struct stream_cost *p, const char *path, const char *identity)
{
	struct predict_persist_entry e[STREAM_COST_SECTIONS];

	stream_cost_sections(p, e);
	return predict_persist_save(path, identity, e, STREAM_COST_SECTIONS);
}

void stream_cost_report(const struct stream_cost *p, struct wire_model *out)
{
	struct predict_fragment_stats fs;
	size_t n;

	memset(out, 0, sizeof(*out));
	out->hdr.type = WIRE_MODEL;
	out->hdr.size = sizeof(*out);
	out->flags = p->flags;
	out->groups = p->learned;
	out->mae_ns = p->learned ? p->abs_err_sum / (double)p->learned : 0;
	out->mape = p->big ? p->ape_sum / (double)p->big : 0;
	out->over_share = p->learned ? (double)p->over / (double)p->learned : 0;
	out->margin_ns = predict_estimator_margin(p->est);
	n = p->ops->coefficients(predict_estimator_model(p->est), out->coef, PF_COUNT);
	out->n_coef = (uint32_t)(n > PF_COUNT ? PF_COUNT : n);
	snprintf(out->model, sizeof(out->model), "%s", p->ops->name);
	predict_ctx_fragment_stats(p->ctx, &fs);
	out->frag_observed = fs.observed;
	out->frag_bbox_error = fs.bbox_error;
	out->frag_history_error = fs.history_error;
	out->frag_preferred = fs.preferred;
}

int stream_cost_calibration_start(struct stream_cost *p)
{
	if (!p->calibration)
		p->calibration = predict_calibration_create();
	return p->calibration ? 0 : -ENOMEM;
}

int stream_cost_calibration_finish(struct stream_cost *p, char *summary, size_t size)
{
	struct predict_calibration_result r;
	int n;

	if (!p->calibration)
		return -ENOENT;
	n = predict_calibration_solve(p->calibration, &r);
	predict_calibration_destroy(p->calibration);
	p->calibration = NULL;
	if (n == -EAGAIN) {
		snprintf(summary, size,
			 "too few groups (flush %u, clears %u, culled %u, triangles %u; %u of "
			 "each needed)",
			 r.samples[0], r.samples[1], r.samples[2], r.samples[3],
			 PREDICT_CALIBRATION_MIN);
		return n;
	}
	if (n < 0) {
		snprintf(summary, size, "out of memory");
		return n;
	}
	n = predict_calibration_seed(p->ops, predict_estimator_model(p->est), &r);
	if (n < 0) {
		snprintf(summary, size, "model %s has no coefficients to seed", p->ops->name);
		return n;
	}
	snprintf(summary, size,
		 "%.1f us per group, %.3f ns per pixel cleared (colour), %.2f ns per vertex, "
		 "%.3f ns per fragment, from %u groups",
		 r.coef[PF_GROUP] / 1000, r.coef[PF_CLEAR_C], r.coef[PF_VERTICES],
		 r.coef[PF_FRAGMENTS], r.samples[0] + r.samples[1] + r.samples[2] + r.samples[3]);
	return 0;
}

uint64_t stream_cost_learned(const struct stream_cost *p)
{
	return p->learned;
}

int stream_cost_dump_to(struct stream_cost *p, const char *path)
{
	FILE *f = fopen(path, "ae");

	if (!f)
		return -errno;
	if (p->dump)
		fclose(p->dump);
	p->dump = f;
	return 0;
}
