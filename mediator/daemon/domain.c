// SPDX-License-Identifier: MIT
/*
 * A domain's own state and its show-budgets object (see domain.h).
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/domain.h"
#include "daemon/histogram.h"
#include "common/util.h"

struct domain {
	char name[CONFIG_NAME_MAX];
	enum domain_class class;
	char vtest_socket[CONFIG_PATH_MAX];
	char vhost_user_socket[CONFIG_PATH_MAX];
	/* Totals since mediatord started, from the workers' group records. */
	uint64_t used_total_ns;
	uint64_t predicted_total_ns;
	uint64_t groups;
	uint32_t clients;
	uint32_t contexts;
	uint64_t watchdog_kills; /* workers the grant watchdog killed */
	uint64_t idle_host_work; /* bulk host work its workers ran at idle priority (host_work.h) */
	/* Distributions since mediatord started, for mediatorctl metrics. */
	struct histogram group_time;	/* each group's measured GPU time */
	struct histogram grant_wait;	/* request to dispatch of each group */
	struct histogram frame_latency; /* release to end of each finished safety frame */
	char timestamp_source[WIRE_NAME_MAX];
};

struct domain *domain_create(const struct domain_config *cfg)
{
	struct domain *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	snprintf(d->name, sizeof(d->name), "%s", cfg->name);
	d->class = cfg->class;
	snprintf(d->vtest_socket, sizeof(d->vtest_socket), "%s", cfg->vtest_socket);
	snprintf(d->vhost_user_socket, sizeof(d->vhost_user_socket), "%s", cfg->vhost_user_socket);
	snprintf(d->timestamp_source, sizeof(d->timestamp_source), "none");
	return d;
}

void domain_destroy(struct domain *domain)
{
	free(domain);
}

const char *domain_name(const struct domain *domain)
{
	return domain->name;
}

void domain_client_added(struct domain *domain)
{
	domain->clients++;
}

void domain_client_removed(struct domain *domain)
{
	if (domain->clients)
		domain->clients--;
}

void domain_contexts_changed(struct domain *domain, int delta)
{
	if (delta < 0 && domain->contexts < (uint32_t)-delta)
		domain->contexts = 0;
	else
		domain->contexts += (uint32_t)delta;
}

void domain_set_timestamp_source(struct domain *domain, const char *source)
{
	snprintf(domain->timestamp_source, sizeof(domain->timestamp_source), "%s", source);
}

void domain_watchdog_killed(struct domain *domain)
{
	domain->watchdog_kills++;
}

void domain_idle_host_work(struct domain *domain)
{
	domain->idle_host_work++;
}

void domain_charge_group(struct domain *domain, const struct wire_group *group)
{
	if (group->grant == WIRE_GRANT_NONE)
		domain->used_total_ns += group->end_ns - group->start_ns;
	domain->predicted_total_ns += group->predicted_ns;
	domain->groups++;
	histogram_add(&domain->group_time, group->end_ns - group->start_ns);
	histogram_add(&domain->grant_wait, group->dispatch_ns > group->request_ns
					       ? group->dispatch_ns - group->request_ns
					       : 0);
}

void domain_charge(struct domain *domain, uint64_t ns)
{
	domain->used_total_ns += ns;
}

void domain_frame_closed(struct domain *domain, uint64_t release_ns, uint64_t end_ns)
{
	if (end_ns)
		histogram_add(&domain->frame_latency,
			      end_ns > release_ns ? end_ns - release_ns : 0);
}

static void json_add_u64(struct json_object *obj, const char *key, uint64_t v)
{
	json_object_object_add(obj, key, json_object_new_uint64(v));
}

/* Adds @ns as microseconds (whole ones, rounded down) under @key. */
static void json_add_us(struct json_object *obj, const char *key, uint64_t ns)
{
	json_add_u64(obj, key, ns / NSEC_PER_USEC);
}

struct json_object *domain_to_json(const struct domain *domain, const struct sched_domain_stats *st)
{
	struct json_object *o = json_object_new_object(), *h;
	const struct sched_domain_params *p = &st->params;

	if (!o)
		return NULL;
	json_object_object_add(o, "name", json_object_new_string(domain->name));
	json_object_object_add(o, "class",
			       json_object_new_string(config_class_name(domain->class)));
	json_object_object_add(o, "vtest_socket", json_object_new_string(domain->vtest_socket));
	json_object_object_add(o, "vhost_user_socket",
			       json_object_new_string(domain->vhost_user_socket));
	/* The scheduler's periods: what is enforced now, and what was used in them. */
	json_add_us(o, "period_us", p->period_ns);
	json_add_us(o, "budget_us", p->budget_ns);
	json_add_us(o, "deadline_us", p->deadline_ns);
	json_object_object_add(o, "strict", json_object_new_boolean(p->strict));
	json_add_us(o, "guard_us", p->guard_ns);
	if (p->class == SCHED_CLASS_NORMAL) {
		json_add_u64(o, "weight", p->weight ? p->weight : 1);
		json_add_us(o, "virtual_time_us", st->vtime_ns);
	}
	json_add_us(o, "remaining_us", st->remaining_ns > 0 ? (uint64_t)st->remaining_ns : 0);
	json_add_us(o, "used_this_period_us", st->used_ns);
	json_add_us(o, "used_last_period_us", st->used_last_period_ns);
	json_add_us(o, "last_period_us", st->last_period_ns);
	json_object_object_add(o, "utilization",
			       json_object_new_double(st->last_period_ns
							  ? (double)st->used_last_period_ns /
								(double)st->last_period_ns
							  : 0.0));
	json_add_us(o, "debt_us", st->debt_ns);
	json_add_us(o, "predicted_this_period_us", st->predicted_ns);
	/* The domain's own totals. */
	json_add_us(o, "used_us", domain->used_total_ns);
	json_add_us(o, "predicted_us", domain->predicted_total_ns);
	json_add_u64(o, "groups", domain->groups);
	json_add_u64(o, "clients", domain->clients);
	json_add_u64(o, "contexts", domain->contexts);
	json_object_object_add(o, "timestamp_source",
			       json_object_new_string(domain->timestamp_source));
	/* The scheduler's counts. */
	json_add_u64(o, "overruns", st->overruns);
	json_add_u64(o, "deadline_misses", st->deadline_misses);
	json_add_u64(o, "deadline_misses_alone", st->misses_alone);
	json_add_u64(o, "throttled", st->throttled);
	json_add_u64(o, "unschedulable", st->unschedulable);
	json_add_u64(o, "watchdog_revokes", st->revoked);
	json_add_u64(o, "watchdog_kills", domain->watchdog_kills);
	json_add_u64(o, "idle_host_work", domain->idle_host_work);
	json_add_u64(o, "underreported", st->underreported);
	json_add_u64(o, "frames", st->frames);
	json_add_u64(o, "startup_frames", st->startup_frames);
	json_add_u64(o, "waiting", st->pending);
	json_add_u64(o, "in_flight", st->inflight);
	if (p->class == SCHED_CLASS_SAFETY) {
		json_add_us(o, "frame_cost_us", st->frame_cost_ns);
		json_add_us(o, "observed_period_us", st->observed_period_ns);
	}
	if (p->learn_period) {
		json_add_us(o, "learned_period_us", st->learned_period_ns);
		json_add_us(o, "max_period_us", p->max_period_ns);
		json_object_object_add(o, "period_confidence",
				       json_object_new_double(st->period_confidence));
		json_add_u64(o, "period_changes", st->period_changes);
		json_add_u64(o, "period_pauses", st->period_pauses);
		json_object_object_add(o, "deadline_follows_period",
				       json_object_new_boolean(p->deadline_follows));
	}
	h = json_object_new_object();
	if (h) {
		json_object_object_add(h, "group_time", histogram_to_json(&domain->group_time));
		json_object_object_add(h, "grant_wait", histogram_to_json(&domain->grant_wait));
		json_object_object_add(h, "frame_latency",
				       histogram_to_json(&domain->frame_latency));
		json_object_object_add(o, "histograms", h);
	}
	return o;
}
