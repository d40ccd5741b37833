/*
 * Per-domain accounting of measured GPU time (see domain.h).
 *
 * The period index of a time t is (t - epoch) / period. used_this_period is
 * the measured time of groups that completed in period `period_index`,
 * used_last_period that of period `period_index - 1`. A group that
 * completed in an older period than those two (a record that arrived very
 * late) still counts in the totals. One that completed in a later period
 * than @now_ns (a caller's now taken before the record was read) is charged
 * to the current period rather than lost; it is never allowed to move the
 * periods forward, as its time comes from a worker.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain.h"
#include "util.h"

struct domain {
	struct domain_config cfg;
	uint64_t epoch_ns;
	uint64_t period_index;
	uint64_t used_this_period_ns;
	uint64_t used_last_period_ns;
	uint64_t used_total_ns;
	uint64_t predicted_total_ns;
	uint64_t groups;
	uint32_t clients;
	uint32_t contexts;
	char timestamp_source[WIRE_NAME_MAX];
};

struct domain *domain_create(const struct domain_config *cfg, uint64_t now_ns)
{
	struct domain *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->cfg = *cfg;
	d->epoch_ns = now_ns;
	snprintf(d->timestamp_source, sizeof(d->timestamp_source), "none");
	return d;
}

void domain_destroy(struct domain *domain)
{
	free(domain);
}

const struct domain_config *domain_config(const struct domain *domain)
{
	return &domain->cfg;
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

static uint64_t domain_period_of(const struct domain *domain, uint64_t t_ns)
{
	uint64_t period_ns = (uint64_t)domain->cfg.period_us * NSEC_PER_USEC;

	if (t_ns <= domain->epoch_ns)
		return 0;
	return (t_ns - domain->epoch_ns) / period_ns;
}

void domain_advance(struct domain *domain, uint64_t now_ns)
{
	uint64_t index = domain_period_of(domain, now_ns);

	if (index <= domain->period_index)
		return; /* a stale @now_ns never rolls the periods back */
	if (index == domain->period_index + 1)
		domain->used_last_period_ns = domain->used_this_period_ns;
	else
		domain->used_last_period_ns = 0;
	domain->used_this_period_ns = 0;
	domain->period_index = index;
}

void domain_charge_group(struct domain *domain, const struct wire_group *group, uint64_t now_ns)
{
	uint64_t measured = group->end_ns - group->start_ns;
	uint64_t index;

	domain_advance(domain, now_ns);
	index = domain_period_of(domain, group->end_ns);
	if (index >= domain->period_index)
		domain->used_this_period_ns += measured;
	else if (index + 1 == domain->period_index)
		domain->used_last_period_ns += measured;
	domain->used_total_ns += measured;
	domain->predicted_total_ns += group->predicted_ns;
	domain->groups++;
}

static void json_add_u64(struct json_object *obj, const char *key, uint64_t v)
{
	json_object_object_add(obj, key, json_object_new_uint64(v));
}

struct json_object *domain_to_json(struct domain *domain, uint64_t now_ns)
{
	const struct domain_config *c = &domain->cfg;
	struct json_object *o = json_object_new_object();
	uint64_t budget_ns = (uint64_t)c->budget_us * NSEC_PER_USEC;
	uint64_t remaining_ns;

	if (!o)
		return NULL;
	domain_advance(domain, now_ns);
	remaining_ns =
	    domain->used_this_period_ns >= budget_ns ? 0 : budget_ns - domain->used_this_period_ns;

	json_object_object_add(o, "name", json_object_new_string(c->name));
	json_object_object_add(o, "class", json_object_new_string(config_class_name(c->class)));
	json_object_object_add(o, "vtest_socket", json_object_new_string(c->vtest_socket));
	json_object_object_add(o, "vhost_user_socket",
			       json_object_new_string(c->vhost_user_socket));
	json_add_u64(o, "period_us", c->period_us);
	json_add_u64(o, "budget_us", c->budget_us);
	json_add_u64(o, "deadline_us", c->deadline_us);
	json_add_u64(o, "remaining_us", remaining_ns / NSEC_PER_USEC);
	json_add_u64(o, "used_us", domain->used_total_ns / NSEC_PER_USEC);
	json_add_u64(o, "used_this_period_us", domain->used_this_period_ns / NSEC_PER_USEC);
	json_add_u64(o, "used_last_period_us", domain->used_last_period_ns / NSEC_PER_USEC);
	json_add_u64(o, "predicted_us", domain->predicted_total_ns / NSEC_PER_USEC);
	json_add_u64(o, "debt_us", 0);
	json_object_object_add(
	    o, "utilization",
	    json_object_new_double((double)domain->used_last_period_ns /
				   ((double)c->period_us * (double)NSEC_PER_USEC)));
	json_add_u64(o, "clients", domain->clients);
	json_add_u64(o, "contexts", domain->contexts);
	json_add_u64(o, "groups", domain->groups);
	json_add_u64(o, "overruns", 0);
	json_add_u64(o, "deadline_misses", 0);
	json_add_u64(o, "throttled", 0);
	json_object_object_add(o, "timestamp_source",
			       json_object_new_string(domain->timestamp_source));
	return o;
}
