// SPDX-License-Identifier: MIT
/*
 * A config reload (SIGHUP; systemctl reload): what of the config file
 * changes while every client stays, and what waits for a restart (which
 * keeps the clients too under the unit: lifeline.h).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "daemon/dispatcher.h"
#include "daemon/mediatord_priv.h"
#include "scheduler/sched_config.h"
#include "common/util.h"

/* A setting that needs a restart, by its config key and where it lies in the struct. */
struct setting {
	const char *key;
	size_t offset, size;
	bool string; /* compared up to its NUL: what follows may be an earlier value's */
};

/* clang-format off */
#define SETTING(type, key, field) {key, offsetof(type, field), sizeof(((type *)0)->field), false}
#define STRING(type, key, field) {key, offsetof(type, field), sizeof(((type *)0)->field), true}
/* clang-format on */

static const struct setting mediator_settings[] = {
    STRING(struct mediator_config, "control_socket", control_socket),
    STRING(struct mediator_config, "state_dir", state_dir),
    STRING(struct mediator_config, "cache_dir", cache_dir),
    SETTING(struct mediator_config, "renderer", renderer),
    STRING(struct mediator_config, "render_node", render_node),
    STRING(struct mediator_config, "model", model),
    SETTING(struct mediator_config, "watchdog_kill_us", watchdog_kill_us),
    SETTING(struct mediator_config, "control_group", control_gid),
    SETTING(struct mediator_config, "admin_group", admin_gid),
    SETTING(struct mediator_config, "worker_user", worker_uid),
    SETTING(struct mediator_config, "restart_wait_s", restart_wait_s),
    STRING(struct mediator_config, "worker_pass_environment", worker_pass_environment),
    STRING(struct mediator_config, "vm_socket", vm_socket),
    SETTING(struct mediator_config, "vm_socket_owner", vm_socket_uid),
    STRING(struct mediator_config, "libvirt_state_dir", libvirt_state_dir),
};

static const struct setting domain_settings[] = {
    SETTING(struct domain_config, "class", class),
    SETTING(struct domain_config, "strict", strict),
    SETTING(struct domain_config, "guard_us", guard_us),
    SETTING(struct domain_config, "period_us (set or learned)", period_learned),
    SETTING(struct domain_config, "max_period_us", max_period_us),
    SETTING(struct domain_config, "weight", weight),
    SETTING(struct domain_config, "deadline_us (set or following the period)", deadline_follows),
    STRING(struct domain_config, "vtest_socket", vtest_socket),
    STRING(struct domain_config, "vhost_user_socket", vhost_user_socket),
    SETTING(struct domain_config, "socket_owner", socket_uid),
    SETTING(struct domain_config, "socket_group", socket_gid),
    SETTING(struct domain_config, "socket_mode", socket_mode),
    SETTING(struct domain_config, "worker_nice", worker_nice),
    SETTING(struct domain_config, "piece_us", piece_us),
    SETTING(struct domain_config, "worker_memory_mb", worker_memory_mb),
    SETTING(struct domain_config, "resource_memory_mb", resource_memory_mb),
    SETTING(struct domain_config, "max_clients", max_clients),
    SETTING(struct domain_config, "domain_memory_mb", domain_memory_mb),
    SETTING(struct domain_config, "max_contexts_per_client", max_contexts_per_client),
    SETTING(struct domain_config, "worker_user", worker_uid),
    STRING(struct domain_config, "vms", vms),
};

/* Appends to @out (at *@len, kept within @out_size) what @fmt says; a full @out is cut. */
__attribute__((format(printf, 4, 5))) static void append(char *out, size_t out_size, size_t *len,
							 const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len + 1 >= out_size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(out + *len, out_size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < out_size ? *len + (size_t)n : out_size - 1;
}

/* Appends to @out (at *@len) the keys of @table that differ between @a and @b. */
static void list_changed(const struct setting *table, size_t n, const void *a, const void *b,
			 const char *section, char *out, size_t out_size, size_t *len)
{
	for (size_t i = 0; i < n; i++) {
		const char *x = (const char *)a + table[i].offset,
			   *y = (const char *)b + table[i].offset;

		if (table[i].string ? !strncmp(x, y, table[i].size) : !memcmp(x, y, table[i].size))
			continue;
		append(out, out_size, len, "%s%s %s", *len ? ", " : " ", section, table[i].key);
	}
}

/* Applies @dc's period, budget and deadline to domain @i where they differ from those in force. */
static int apply_budget(struct mediatord *md, int i, const struct domain_config *dc, char *msg,
			size_t msg_size, size_t *len)
{
	struct sched_domain_stats st;
	char err[256];

	dispatcher_stats(md->dispatcher, i, mono_now_ns(), &st);
	if (st.params.period_ns == (uint64_t)dc->period_us * 1000 &&
	    st.params.budget_ns == (uint64_t)dc->budget_us * 1000 &&
	    st.params.deadline_ns == (uint64_t)dc->deadline_us * 1000)
		return 0;
	if (dispatcher_set_budget(md->dispatcher, i, dc->period_us, dc->budget_us, dc->deadline_us,
				  err, sizeof(err)) < 0) {
		append(msg, msg_size, len, "%sdomain %s: budget not applied: %s", *len ? "; " : "",
		       dc->name, err);
		return -1;
	}
	append(msg, msg_size, len, "%sdomain %s: budget %u us per %u us, deadline %u us",
	       *len ? "; " : "", dc->name, dc->budget_us, dc->period_us, dc->deadline_us);
	md->cfg.domains[i].period_us = dc->period_us;
	md->cfg.domains[i].budget_us = dc->budget_us;
	md->cfg.domains[i].deadline_us = dc->deadline_us;
	/* A successor applies it too, as one set with set-budget. */
	takeover_keep_budget(md, i, dc->period_us, dc->budget_us, dc->deadline_us);
	return 0;
}

static bool same_params(const struct sched_params *a, const struct sched_params *b)
{
	return a->policy == b->policy && a->max_inflight == b->max_inflight &&
	       a->max_defer_ns == b->max_defer_ns && a->oversize == b->oversize &&
	       a->watchdog.multiplier == b->watchdog.multiplier &&
	       a->watchdog.slack_ns == b->watchdog.slack_ns &&
	       a->watchdog.floor_ns == b->watchdog.floor_ns &&
	       a->watchdog.normal_cap_ns == b->watchdog.normal_cap_ns;
}

/* The same domains, in the same order: otherwise says why in @msg. */
static bool same_domains(const struct mediator_config *a, const struct mediator_config *b,
			 char *msg, size_t msg_size)
{
	if (a->n_domains != b->n_domains) {
		snprintf(msg, msg_size, "%zu domains, %zu running: domains change at a restart",
			 b->n_domains, a->n_domains);
		return false;
	}
	for (size_t i = 0; i < a->n_domains; i++) {
		if (strcmp(a->domains[i].name, b->domains[i].name)) {
			snprintf(msg, msg_size,
				 "domain %zu is %s, %s running: domains change at a restart", i + 1,
				 b->domains[i].name, a->domains[i].name);
			return false;
		}
	}
	return true;
}

int mediatord_reload(struct mediatord *md, char *msg, size_t msg_size)
{
	static struct mediator_config next; /* large; main thread only */
	char later[1024] = "";
	struct sched_params p, now;
	size_t len = 0, later_len = 0;
	int r = 0;

	msg[0] = '\0';
	if (config_load(&next, md->cfg.path, msg, msg_size) < 0)
		return -1;
	if (!same_domains(&md->cfg, &next, msg, msg_size))
		return -1;
	sched_params_from_config(&next, &p);
	dispatcher_get_params(md->dispatcher, &now);
	if (!same_params(&p, &now)) {
		if (dispatcher_set_params(md->dispatcher, &p) < 0) {
			snprintf(msg, msg_size, "the scheduler refused policy %s",
				 config_policy_name(next.policy));
			return -1;
		}
		append(msg, msg_size, &len, "policy %s, max_inflight %u, oversize %s",
		       config_policy_name(next.policy), next.max_inflight,
		       config_oversize_name(next.oversize));
		md->cfg.policy = next.policy;
		md->cfg.max_inflight = next.max_inflight;
		md->cfg.max_defer_us = next.max_defer_us;
		md->cfg.oversize = next.oversize;
		md->cfg.watchdog_multiplier = next.watchdog_multiplier;
		md->cfg.watchdog_slack_us = next.watchdog_slack_us;
		md->cfg.watchdog_floor_us = next.watchdog_floor_us;
		md->cfg.watchdog_normal_cap_us = next.watchdog_normal_cap_us;
	}
	for (size_t i = 0; i < next.n_domains; i++) {
		if (apply_budget(md, (int)i, &next.domains[i], msg, msg_size, &len) < 0)
			r = -1;
		char section[CONFIG_NAME_MAX + 16];

		snprintf(section, sizeof(section), "[domain %s]", next.domains[i].name);
		list_changed(domain_settings, ARRAY_SIZE(domain_settings), &md->cfg.domains[i],
			     &next.domains[i], section, later, sizeof(later), &later_len);
	}
	list_changed(mediator_settings, ARRAY_SIZE(mediator_settings), &md->cfg, &next,
		     "[mediator]", later, sizeof(later), &later_len);
	if (!len)
		append(msg, msg_size, &len, "nothing to apply");
	if (later_len)
		append(msg, msg_size, &len,
		       "; changed, applied at the next restart (systemctl restart keeps the "
		       "clients):%s",
		       later);
	return r;
}
