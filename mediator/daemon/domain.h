// SPDX-License-Identifier: MIT
/*
 * A domain is one [domain NAME] of the config: a VM or a group of host
 * clients sharing a GPU-time budget. mediatord keeps one struct domain per
 * configured domain for its whole life; clients come and go.
 *
 * What a domain keeps is what the scheduler does not know: its name,
 * class and sockets, its live clients and guest contexts, the timestamp
 * source its workers use, and totals since mediatord started (measured
 * and predicted GPU time, command groups) from the workers' group
 * records. Everything per period (period, budget, deadline, use this and
 * last period, remaining budget, debt, utilization) and every enforcement
 * count is the scheduler's (sched_domain_stats()): domain_to_json() takes
 * those from it, so that show-budgets has one source for them and a
 * set-budget applies to every figure from the boundary where it applies.
 *
 * All functions run on mediatord's main thread.
 */
#ifndef MEDIATOR_DOMAIN_H
#define MEDIATOR_DOMAIN_H

#include <stdint.h>

#include "config/config.h"
#include "scheduler/scheduler.h"
#include "common/wire.h"

struct domain;
struct json_object;

/*
 * Copies the name, class and sockets of @cfg (its period, budget and
 * deadline are the scheduler's). Returns NULL on allocation failure.
 */
struct domain *domain_create(const struct domain_config *cfg);
/* NULL is fine. */
void domain_destroy(struct domain *domain);

/* The domain's name (its [domain NAME]); lives as long as @domain. */
const char *domain_name(const struct domain *domain);

void domain_client_added(struct domain *domain);
void domain_client_removed(struct domain *domain);
/* @delta is +1 (created) or -1 (destroyed). */
void domain_contexts_changed(struct domain *domain, int delta);
/* The timestamp source the most recent worker of this domain uses. Copied. */
void domain_set_timestamp_source(struct domain *domain, const char *source);

/*
 * Adds one group record (already validated by the caller) to the totals:
 * its prediction, its time and grant wait to the histograms, and, for a
 * group that ran without a grant (WIRE_GRANT_NONE), its time to the used
 * total; a granted group's time comes from domain_charge().
 */
void domain_charge_group(struct domain *domain, const struct wire_group *group);
/* Adds @ns that the dispatcher charged for a granted group (dispatcher_done()) to the used total.
 */
void domain_charge(struct domain *domain, uint64_t ns);
/*
 * A safety frame of @domain closed: released at @release_ns, its last group
 * done at @end_ns (0: unfinished), for the frame latency histogram.
 */
void domain_frame_closed(struct domain *domain, uint64_t release_ns, uint64_t end_ns);
/* The grant watchdog killed a worker of @domain (counted as watchdog_kills). */
void domain_watchdog_killed(struct domain *domain);
/* A worker of @domain ran bulk host work at idle priority (counted as idle_host_work). */
void domain_idle_host_work(struct domain *domain);

/*
 * Returns a new JSON object with the show-budgets fields of this domain
 * (doc/operating.md, "What show-budgets reports"): its own, and the per-period
 * figures and counts of @st, the scheduler's state of the domain. The
 * caller owns the reference (json_object_put); NULL when out of memory.
 */
struct json_object *domain_to_json(const struct domain *domain,
				   const struct sched_domain_stats *st);

#endif
