// SPDX-License-Identifier: MIT
/*
 * The scheduler of a mediatord configuration (config.h): the one place
 * where the config's names and units become the scheduler's. mediatord and
 * mediator-sim build their scheduler with it, so both schedule alike.
 */
#ifndef MEDIATOR_SCHED_CONFIG_H
#define MEDIATOR_SCHED_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "scheduler/scheduler.h"

/* The scheduler's parameters @cfg's [mediator] section sets. */
void sched_params_from_config(const struct mediator_config *cfg, struct sched_params *out);
/*
 * A scheduler for @cfg: its policy, max_inflight, max_defer_us and
 * oversize, and its domains in order (domain i is cfg->domains[i]). NULL
 * with @err set on failure.
 */
struct sched *sched_create_from_config(const struct mediator_config *cfg, uint64_t now_ns,
				       char *err, size_t err_size);

/* The scheduler's class of a config's domain class. */
enum sched_class sched_class_of(enum domain_class class);

#endif
