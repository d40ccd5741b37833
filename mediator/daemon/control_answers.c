// SPDX-License-Identifier: MIT
/*
 * The control socket's answers (control.h's struct control_ops):
 * mediatord's status and workers, each domain's budget, accounting and
 * live contexts (show-budgets), the cost models its workers report, the
 * trace's start and stop, and budgets set at run time (which the keeper
 * keeps for a successor). control.c speaks the protocol; this file only
 * reads and sets mediatord's state, on its one thread.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "predict.h"
#include "build-config/build-config.h"
#include "common/renderer_kind.h"
#include "common/util.h"
#include "daemon/control.h"
#include "daemon/dispatcher.h"
#include "daemon/domain.h"
#include "daemon/keeper.h"
#include "daemon/mediatord_priv.h"
#include "daemon/trace.h"

static struct json_object *domain_models(struct mediatord *md, struct listener *l,
					 double *max_margin_ns);

static void json_set_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

/*
 * How often each invariant of the dispatcher and its scheduler was found
 * broken: {"request_counts": 0, ...}, all 0 in a healthy mediatord.
 */
static struct json_object *invariant_violations(struct mediatord *md)
{
	struct json_object *o = json_object_new_object();

	for (unsigned i = 0; i < DISPATCHER_INVARIANTS; i++)
		json_set_u64(o, dispatcher_invariant_name(i),
			     dispatcher_invariant_violations(md->dispatcher, i));
	return o;
}

/* The live guest contexts of domain @l's clients: client, kind, context id, name, groups. */
static struct json_object *context_list(struct mediatord *md, const struct listener *l)
{
	struct json_object *arr = json_object_new_array();

	for (const struct client *c = md->clients; c; c = c->next) {
		if (c->listener != l)
			continue;
		for (uint32_t i = 0; i < c->n_ctx_list; i++) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "client", json_object_new_int64(c->id));
			json_object_object_add(
			    o, "transport", json_object_new_string(c->vm ? "vhost-user" : "vtest"));
			json_object_object_add(o, "peer", json_object_new_string(c->name));
			json_object_object_add(o, "ctx_id",
					       json_object_new_int64(c->ctx_list[i].ctx_id));
			json_object_object_add(o, "name",
					       json_object_new_string(c->ctx_list[i].name));
			json_object_object_add(o, "groups",
					       json_object_new_uint64(c->ctx_list[i].groups));
			json_object_array_add(arr, o);
		}
	}
	return arr;
}

/* A domain's groups with a long draw not cut into tiles, and the last context that sent one. */
static struct json_object *untiled_to_json(const struct untiled_report *u)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "groups", json_object_new_uint64(u->groups));
	if (!u->groups)
		return o;
	json_object_object_add(o, "client", json_object_new_int64(u->client));
	json_object_object_add(o, "ctx_id", json_object_new_int64(u->ctx_id));
	json_object_object_add(o, "name", json_object_new_string(u->name));
	json_object_object_add(
	    o, "why", json_object_new_string(predict_untiled_text((enum predict_untiled)u->why)));
	return o;
}

static struct json_object *ctl_show_budgets(void *data)
{
	struct mediatord *md = data;
	struct json_object *o = json_object_new_object();
	struct json_object *arr = json_object_new_array();
	uint64_t now = mono_now_ns();

	mediatord_take_frames(md);
	if (md->trace)
		trace_tick(md->trace, now);
	json_object_object_add(o, "policy",
			       json_object_new_string(config_policy_name(md->cfg.policy)));
	for (size_t i = 0; i < md->cfg.n_domains; i++) {
		struct sched_domain_stats st;
		struct json_object *d, *models;
		double margin;

		/* Per period, the scheduler's figures: the only accounting by periods. */
		if (dispatcher_stats(md->dispatcher, (int)i, now, &st) < 0)
			continue;
		d = domain_to_json(md->listeners[i].domain, &st);
		if (!d)
			continue;

		/* The widest bound margin of the domain's live contexts: a
		 * context whose groups keep overrunning their bound shows here. */
		models = domain_models(md, &md->listeners[i], &margin);
		json_object_put(models);
		json_object_object_add(d, "bound_margin_us",
				       json_object_new_double(margin / 1000.0));
		json_object_object_add(d, "context_list", context_list(md, &md->listeners[i]));
		json_object_object_add(d, "untiled", untiled_to_json(&md->listeners[i].untiled));
		json_object_array_add(arr, d);
	}
	json_object_object_add(o, "domains", arr);
	json_object_object_add(o, "invariant_violations", invariant_violations(md));
	return o;
}

static struct json_object *model_report_to_json(const struct model_report *r, bool live)
{
	struct json_object *o = json_object_new_object();
	struct json_object *coef = json_object_new_object();
	const struct wire_model *m = &r->m;

	json_object_object_add(o, "client", json_object_new_int64(r->client));
	json_object_object_add(o, "name", json_object_new_string(r->client_name));
	json_object_object_add(o, "live", json_object_new_boolean(live));
	json_object_object_add(o, "model", json_object_new_string(m->model));
	json_object_object_add(o, "groups", json_object_new_uint64(m->groups));
	json_object_object_add(o, "mae_us", json_object_new_double(m->mae_ns / 1000.0));
	json_object_object_add(o, "mape", json_object_new_double(m->mape));
	json_object_object_add(o, "bound_exceeded", json_object_new_double(m->over_share));
	json_object_object_add(o, "bound_margin_us", json_object_new_double(m->margin_ns / 1000.0));
	json_object_object_add(o, "unbounded_loops",
			       json_object_new_boolean(m->flags & PFF_UNBOUNDED_LOOP));
	json_object_object_add(o, "fragments_measured", json_object_new_uint64(m->frag_observed));
	json_object_object_add(o, "fragment_estimator",
			       json_object_new_string(m->frag_preferred == PREDICT_FRAGMENTS_HISTORY
							  ? "history"
							  : "bbox"));
	/* As the factor the estimates were off by lately (exp of the mean |ln ratio|), -1 if none.
	 */
	json_object_object_add(
	    o, "fragment_error_bbox",
	    json_object_new_double(m->frag_bbox_error < 0 ? -1 : exp(m->frag_bbox_error)));
	json_object_object_add(
	    o, "fragment_error_history",
	    json_object_new_double(m->frag_history_error < 0 ? -1 : exp(m->frag_history_error)));
	for (uint32_t i = 0; i < m->n_coef; i++)
		json_object_object_add(coef, predict_feature_name((enum predict_feature)i),
				       json_object_new_double(m->coef[i]));
	json_object_object_add(o, "coefficients_ns", coef);
	return o;
}

/* Every live context's model report of @l's domain, and its last one if that client is gone. */
static struct json_object *domain_models(struct mediatord *md, struct listener *l,
					 double *max_margin_ns)
{
	struct json_object *arr = json_object_new_array();
	bool last_is_live = false;

	*max_margin_ns = 0;
	for (struct client *c = md->clients; c; c = c->next) {
		if (c->listener != l || !c->model.valid)
			continue;
		json_object_array_add(arr, model_report_to_json(&c->model, true));
		if (c->model.m.margin_ns > *max_margin_ns)
			*max_margin_ns = c->model.m.margin_ns;
		last_is_live |= c->id == l->last_model.client;
	}
	if (l->last_model.valid && !last_is_live)
		json_object_array_add(arr, model_report_to_json(&l->last_model, false));
	return arr;
}

static struct json_object *ctl_model(void *data)
{
	struct mediatord *md = data;
	struct json_object *o = json_object_new_object();
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < md->cfg.n_domains; i++) {
		struct json_object *d = json_object_new_object();
		double margin;

		json_object_object_add(d, "name", json_object_new_string(md->cfg.domains[i].name));
		json_object_object_add(d, "contexts",
				       domain_models(md, &md->listeners[i], &margin));
		json_object_array_add(arr, d);
	}
	json_object_object_add(o, "domains", arr);
	return o;
}

static struct json_object *ctl_status(void *data)
{
	struct mediatord *md = data;
	struct json_object *o = json_object_new_object();
	struct json_object *workers = json_object_new_array();
	uint64_t now = mono_now_ns();

	json_object_object_add(o, "version", json_object_new_string(MEDIATOR_VERSION));
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "config", json_object_new_string(md->cfg.path));
	{
		/* Milliseconds, written as such (not a double's 17 digits). */
		char uptime[32];
		uint64_t ms = (now - md->started_ns) / 1000000u;

		snprintf(uptime, sizeof(uptime), "%llu.%03llu", (unsigned long long)(ms / 1000),
			 (unsigned long long)(ms % 1000));
		json_object_object_add(o, "uptime_s",
				       json_object_new_double_s((double)ms / 1e3, uptime));
	}
	json_object_object_add(o, "policy",
			       json_object_new_string(config_policy_name(md->cfg.policy)));
	json_object_object_add(o, "max_inflight", json_object_new_int64(md->cfg.max_inflight));
	json_object_object_add(o, "renderer",
			       json_object_new_string(renderer_kind_name(md->cfg.renderer)));
	json_object_object_add(o, "domains", json_object_new_int64((int64_t)md->cfg.n_domains));
	json_object_object_add(o, "clients", json_object_new_int64(md->n_clients));
	json_object_object_add(o, "trace",
			       md->trace ? json_object_new_string(trace_path(md->trace)) : NULL);
	json_object_object_add(o, "bad_records", json_object_new_uint64(md->bad_records));
	for (struct client *c = md->clients; c; c = c->next) {
		struct json_object *w = json_object_new_object();

		json_object_object_add(w, "client", json_object_new_int64(c->id));
		json_object_object_add(w, "domain",
				       json_object_new_string(domain_name(c->listener->domain)));
		json_object_object_add(w, "worker_pid", json_object_new_int(c->pid));
		json_object_object_add(w, "peer_pid", json_object_new_int(c->peer_pid));
		json_object_object_add(w, "name", json_object_new_string(c->name));
		json_object_object_add(w, "groups", json_object_new_uint64(c->groups));
		/* The grant watchdog's word on it (client_watchdog.c). */
		json_object_object_add(w, "revocations", json_object_new_uint64(c->revocations));
		json_object_object_add(w, "idle_priority", json_object_new_boolean(c->demoted));
		json_object_object_add(w, "penalty_level",
				       json_object_new_int64(penalties_level(
					   &c->listener->penalties, c->peer_uid, now)));
		json_object_array_add(workers, w);
	}
	json_object_object_add(o, "workers", workers);
	return o;
}

static int ctl_trace_check(void *data, char *err, size_t err_size)
{
	struct mediatord *md = data;

	if (md->trace) {
		snprintf(err, err_size, "a trace is already being written to %s",
			 trace_path(md->trace));
		return -EBUSY;
	}
	return 0;
}

/* @fd: the file the client opened (control.h); closed here when the trace does not start. */
static int ctl_trace_start(void *data, const char *path, int fd, char *err, size_t err_size)
{
	struct mediatord *md = data;
	struct trace *t;
	int r;

	/* Another client's trace may have started while this one's file was opened. */
	r = ctl_trace_check(md, err, err_size);
	if (r < 0) {
		close(fd);
		return r;
	}
	mediatord_take_frames(md); /* frames closed before the trace started are not in it */
	t = trace_create(fd, path, err, err_size);
	if (!t)
		return -EIO;
	md->trace = t;
	log_info("trace started: %s", path);
	return 0;
}

static int ctl_trace_stop(void *data, char *err, size_t err_size)
{
	struct mediatord *md = data;
	int r;

	if (!md->trace) {
		snprintf(err, err_size, "no trace is being written");
		return -ENOENT;
	}
	mediatord_take_frames(md);
	if (!md->trace) {
		snprintf(err, err_size, "the trace failed while its last records were written");
		return -EIO;
	}
	log_info("trace stopped: %s", trace_path(md->trace));
	r = trace_close(md->trace);
	md->trace = NULL;
	if (r < 0)
		snprintf(err, err_size, "trace file incomplete: %s", strerror(-r));
	return r;
}

static struct json_object *ctl_set_budget(void *data, const char *name, uint32_t period_us,
					  uint32_t budget_us, uint32_t deadline_us, char *err,
					  size_t err_size)
{
	struct mediatord *md = data;
	struct sched_domain_stats st;
	struct json_object *o;
	int i;

	for (i = 0; i < (int)md->cfg.n_domains; i++) {
		if (!strcmp(md->cfg.domains[i].name, name))
			break;
	}
	if (i == (int)md->cfg.n_domains) {
		size_t len =
		    (size_t)snprintf(err, err_size, "no domain '%.64s'; the domains are", name);

		for (i = 0; i < (int)md->cfg.n_domains && len < err_size; i++)
			len += (size_t)snprintf(err + len, err_size - len, "%s %s", i ? "," : "",
						md->cfg.domains[i].name);
		return NULL;
	}
	dispatcher_stats(md->dispatcher, i, mono_now_ns(), &st);
	if (!period_us)
		period_us = (uint32_t)(st.params.period_ns / 1000);
	if (!deadline_us)
		deadline_us = st.params.deadline_ns / 1000 < period_us
				  ? (uint32_t)(st.params.deadline_ns / 1000)
				  : period_us;
	if (dispatcher_set_budget(md->dispatcher, i, period_us, budget_us, deadline_us, err,
				  err_size) < 0)
		return NULL;
	log_info("domain %s: budget %u us per %u us, deadline %u us from its next period", name,
		 budget_us, period_us, deadline_us);
	takeover_keep_budget(md, i, period_us, budget_us, deadline_us);
	o = json_object_new_object();
	json_object_object_add(o, "domain", json_object_new_string(name));
	json_set_u64(o, "period_us", period_us);
	json_set_u64(o, "budget_us", budget_us);
	json_set_u64(o, "deadline_us", deadline_us);
	json_set_u64(o, "from_ns", st.period_start_ns + st.params.period_ns);
	return o;
}

const struct control_ops mediatord_control_ops = {
    .version = CONTROL_OPS_VERSION,
    .status = ctl_status,
    .show_budgets = ctl_show_budgets,
    .trace_check = ctl_trace_check,
    .trace_start = ctl_trace_start,
    .trace_stop = ctl_trace_stop,
    .model = ctl_model,
    .set_budget = ctl_set_budget,
};
