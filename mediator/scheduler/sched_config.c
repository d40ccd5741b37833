// SPDX-License-Identifier: MIT
/*
 * The scheduler of a mediatord configuration (sched_config.h).
 */
#include <stdio.h>

#include "scheduler/sched_config.h"

_Static_assert(CONFIG_DEFAULT_WATCHDOG_MULTIPLIER == SCHED_WATCHDOG_MULTIPLIER &&
		   CONFIG_DEFAULT_WATCHDOG_SLACK_US * 1000ull == SCHED_WATCHDOG_SLACK_NS &&
		   CONFIG_DEFAULT_WATCHDOG_FLOOR_US * 1000ull == SCHED_WATCHDOG_FLOOR_NS &&
		   CONFIG_DEFAULT_WATCHDOG_NORMAL_CAP_US * 1000ull == SCHED_WATCHDOG_NORMAL_CAP_NS,
	       "the config and the scheduler have the same watchdog defaults");
_Static_assert(CONFIG_MAX_DOMAINS <= SCHED_MAX_DOMAINS, "a config's domains fit the scheduler");
_Static_assert(CONFIG_MIN_PERIOD_US * 1000ull == SCHED_MIN_PERIOD_NS &&
		   CONFIG_MAX_PERIOD_US * 1000ull == SCHED_MAX_PERIOD_NS,
	       "the config and the scheduler accept the same periods");

enum sched_class sched_class_of(enum domain_class class)
{
	return class == DOMAIN_CLASS_SAFETY ? SCHED_CLASS_SAFETY : SCHED_CLASS_NORMAL;
}

void sched_params_from_config(const struct mediator_config *cfg, struct sched_params *out)
{
	*out = (struct sched_params){
	    .policy = cfg->policy == MEDIATOR_POLICY_FIFO ? SCHED_POLICY_FIFO : SCHED_POLICY_BUDGET,
	    .max_inflight = cfg->max_inflight,
	    .max_defer_ns = (uint64_t)cfg->max_defer_us * 1000,
	    .oversize =
		cfg->oversize == MEDIATOR_OVERSIZE_UNSCHEDULABLE    ? SCHED_OVERSIZE_UNSCHEDULABLE
		: cfg->oversize == MEDIATOR_OVERSIZE_REFUSE_UNTILED ? SCHED_OVERSIZE_REFUSE_UNTILED
								    : SCHED_OVERSIZE_RUN,
	    .watchdog = {.multiplier = cfg->watchdog_multiplier,
			 .slack_ns = (uint64_t)cfg->watchdog_slack_us * 1000,
			 .floor_ns = (uint64_t)cfg->watchdog_floor_us * 1000,
			 .normal_cap_ns = (uint64_t)cfg->watchdog_normal_cap_us * 1000},
	};
}

struct sched *sched_create_from_config(const struct mediator_config *cfg, uint64_t now_ns,
				       char *err, size_t err_size)
{
	struct sched_params p;
	struct sched *s;

	sched_params_from_config(cfg, &p);
	s = sched_create(&p, now_ns);

	if (!s) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < cfg->n_domains; i++) {
		const struct domain_config *dc = &cfg->domains[i];
		struct sched_domain_params dp = {
		    .class = sched_class_of(dc->class),
		    .period_ns = (uint64_t)dc->period_us * 1000,
		    .budget_ns = (uint64_t)dc->budget_us * 1000,
		    .deadline_ns = (uint64_t)dc->deadline_us * 1000,
		    .strict = dc->strict,
		    .guard_ns = (uint64_t)dc->guard_us * 1000,
		    .learn_period = dc->period_learned,
		    .deadline_follows = dc->deadline_follows,
		    .max_period_ns = (uint64_t)dc->max_period_us * 1000,
		    .weight = dc->weight,
		};

		if (sched_add_domain(s, &dp, now_ns) != (int)i) {
			snprintf(err, err_size, "domain %s: period, budget or deadline refused",
				 dc->name);
			sched_destroy(s);
			return NULL;
		}
	}
	return s;
}
