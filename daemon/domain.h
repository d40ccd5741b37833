/*
 * A domain is one [domain NAME] of the config: a VM or a group of host
 * clients sharing a GPU-time budget. mediatord keeps one struct domain per
 * configured domain for its whole life; clients come and go.
 *
 * Accounting: time is divided into periods of period_us starting when the
 * domain is created. A measured group is charged to the period its fence
 * completed in. The domain keeps the measured use of the current and of the
 * last completed period, cumulative totals, and the counts show-budgets
 * reports. Budget enforcement (debt, throttling, deadline misses) belongs
 * to the scheduler; until it runs those counts stay 0, never invented.
 *
 * All functions run on mediatord's main thread.
 */
#ifndef MEDIATOR_DOMAIN_H
#define MEDIATOR_DOMAIN_H

#include <stdint.h>

#include "config.h"
#include "wire.h"

struct domain;
struct json_object;

/* Copies @cfg. Periods start at @now_ns. Returns NULL on allocation failure. */
struct domain *domain_create(const struct domain_config *cfg, uint64_t now_ns);
/* NULL is fine. */
void domain_destroy(struct domain *domain);

const struct domain_config *domain_config(const struct domain *domain);

void domain_client_added(struct domain *domain);
void domain_client_removed(struct domain *domain);
/* @delta is +1 (created) or -1 (destroyed). */
void domain_contexts_changed(struct domain *domain, int delta);
/* The timestamp source the most recent worker of this domain uses. Copied. */
void domain_set_timestamp_source(struct domain *domain, const char *source);

/* Charges one measured group (already validated by the caller). */
void domain_charge_group(struct domain *domain, const struct wire_group *group, uint64_t now_ns);

/* Rolls the period accounting forward to @now_ns. */
void domain_advance(struct domain *domain, uint64_t now_ns);

/*
 * Returns a new JSON object with the show-budgets fields of DESIGN.md for
 * this domain as of @now_ns. The caller owns the reference (json_object_put).
 */
struct json_object *domain_to_json(struct domain *domain, uint64_t now_ns);

#endif
