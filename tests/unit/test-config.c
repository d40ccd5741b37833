// SPDX-License-Identifier: MIT
/*
 * Tests of the config parser: the example of doc/design.md (which that
 * file must still show) and the shipped example config parse with the
 * right values and defaults; every kind of bad config is rejected with
 * -EINVAL and a message naming the file, the line and the key (a case
 * table); config_load reports files it cannot open with their errno.
 */
#include <errno.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <ini.h>

#include "config/config.h"

#define NAME "test.conf"

/* Longest line the parser accepts: inih's buffer less "\r\n" and a NUL. */
#define LINE_MAX_CHARS (INI_MAX_LINE - 3)

/* The example of doc/design.md, "Configuration", verbatim. */
static const char design_example[] =
    "[mediator]\n"
    "control_socket = /run/gpu-mediator/control.sock\n"
    "state_dir = /var/lib/gpu-mediator\n"
    "policy = budget            ; budget | fifo\n"
    "max_inflight = 1           ; command groups on the GPU at once (0 = unlimited)\n"
    "renderer = egl-surfaceless ; egl-surfaceless | egl-gbm | glx\n"
    "\n"
    "[domain cluster]\n"
    "class = safety\n"
    "period_us = 16667\n"
    "budget_us = 4000\n"
    "vtest_socket = /run/gpu-mediator/cluster.vtest\n"
    "vhost_user_socket = /run/gpu-mediator/cluster.vhost   ; optional\n";

static int parse(struct mediator_config *cfg, const char *text, char *err, size_t err_size)
{
	return config_parse_string(cfg, NAME, text, err, err_size);
}

static void design_example_parses_with_its_values(void **state)
{
	struct mediator_config cfg;
	char err[256];
	const struct domain_config *d;

	assert_int_equal(parse(&cfg, design_example, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_string_equal(cfg.path, NAME);
	assert_string_equal(cfg.control_socket, "/run/gpu-mediator/control.sock");
	assert_string_equal(cfg.state_dir, "/var/lib/gpu-mediator");
	assert_int_equal(cfg.policy, MEDIATOR_POLICY_BUDGET);
	assert_int_equal(cfg.max_inflight, 1);
	/* A draw that cannot be cut is refused where it fits no gap, by default. */
	assert_int_equal(cfg.oversize, MEDIATOR_OVERSIZE_REFUSE_UNTILED);
	assert_int_equal(cfg.renderer, MEDIATOR_RENDERER_EGL_SURFACELESS);
	assert_string_equal(cfg.render_node, CONFIG_DEFAULT_RENDER_NODE);
	assert_int_equal(cfg.n_domains, 1);

	d = &cfg.domains[0];
	assert_string_equal(d->name, "cluster");
	assert_int_equal(d->class, DOMAIN_CLASS_SAFETY);
	assert_int_equal(d->period_us, 16667);
	assert_int_equal(d->budget_us, 4000);
	assert_int_equal(d->deadline_us, 16667); /* defaults to period_us */
	assert_string_equal(d->vtest_socket, "/run/gpu-mediator/cluster.vtest");
	assert_string_equal(d->vhost_user_socket, "/run/gpu-mediator/cluster.vhost");
	assert_int_equal(d->line, 8);
}

static void domain_with_only_a_socket_gets_every_default(void **state)
{
	struct mediator_config cfg;
	char err[256];
	const struct domain_config *d = &cfg.domains[0];

	assert_int_equal(parse(&cfg, "[domain a]\nvtest_socket = /tmp/a.sock\n", err, sizeof(err)),
			 0);
	assert_string_equal(cfg.control_socket, CONFIG_DEFAULT_CONTROL_SOCKET);
	assert_string_equal(cfg.state_dir, CONFIG_DEFAULT_STATE_DIR);
	assert_int_equal(cfg.policy, CONFIG_DEFAULT_POLICY);
	assert_int_equal(cfg.max_inflight, CONFIG_DEFAULT_MAX_INFLIGHT);
	assert_int_equal(cfg.renderer, CONFIG_DEFAULT_RENDERER);
	assert_string_equal(cfg.render_node, CONFIG_DEFAULT_RENDER_NODE);
	assert_int_equal(cfg.n_domains, 1);
	assert_string_equal(d->name, "a");
	assert_int_equal(d->class, CONFIG_DEFAULT_CLASS);
	assert_int_equal(d->period_us, CONFIG_DEFAULT_PERIOD_US);
	assert_int_equal(d->budget_us, CONFIG_DEFAULT_PERIOD_US);
	assert_int_equal(d->deadline_us, CONFIG_DEFAULT_PERIOD_US);
	assert_string_equal(d->vtest_socket, "/tmp/a.sock");
	assert_string_equal(d->vhost_user_socket, "");
	assert_int_equal(d->socket_uid, (uid_t)-1);
	assert_int_equal(d->socket_gid, (gid_t)-1);
	assert_int_equal(d->socket_mode, 0660);
	assert_int_equal(d->line, 1);
}

static void socket_owner_group_and_mode_take_names_or_numbers(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(parse(&cfg,
			       "[domain a]\nvhost_user_socket = /tmp/a\nsocket_owner = root\n"
			       "socket_group = root\nsocket_mode = 0600\n"
			       "[domain b]\nvtest_socket = /tmp/b\nsocket_owner = 0\n"
			       "socket_group = 0\nsocket_mode = 666\n",
			       err, sizeof(err)),
			 0);
	assert_int_equal(cfg.domains[0].socket_uid, 0);
	assert_int_equal(cfg.domains[0].socket_gid, 0);
	assert_int_equal(cfg.domains[0].socket_mode, 0600);
	assert_int_equal(cfg.domains[1].socket_uid, 0);
	assert_int_equal(cfg.domains[1].socket_gid, 0);
	assert_int_equal(cfg.domains[1].socket_mode, 0666);
}

static void a_domain_without_worker_user_takes_the_mediator_sections(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(parse(&cfg, "[domain a]\nvtest_socket = /tmp/a\n", err, sizeof(err)), 0);
	assert_int_equal(cfg.domains[0].worker_uid, (uid_t)CONFIG_SOCKET_ID_UNSET);
	/* [mediator] after the domain still counts; a domain's own wins. */
	assert_int_equal(parse(&cfg,
			       "[domain a]\nvtest_socket = /tmp/a\n"
			       "[domain b]\nvtest_socket = /tmp/b\nworker_user = 0\n"
			       "[mediator]\nworker_user = nobody\n",
			       err, sizeof(err)),
			 0);
	assert_int_equal(cfg.domains[0].worker_uid, getpwnam("nobody")->pw_uid);
	assert_int_equal(cfg.domains[1].worker_uid, 0);
}

static void control_and_admin_groups_default_to_none_and_take_names_or_numbers(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(parse(&cfg, "[domain a]\nvtest_socket = /tmp/a\n", err, sizeof(err)), 0);
	assert_int_equal(cfg.control_gid, (gid_t)-1);
	assert_int_equal(cfg.admin_gid, (gid_t)-1);
	assert_int_equal(parse(&cfg,
			       "[mediator]\ncontrol_group = root\nadmin_group = 0\n"
			       "[domain a]\nvtest_socket = /tmp/a\n",
			       err, sizeof(err)),
			 0);
	assert_int_equal(cfg.control_gid, 0);
	assert_int_equal(cfg.admin_gid, 0);
}

static void worker_nice_defaults_by_class_and_takes_signed_values(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(
	    parse(&cfg,
		  "[domain a]\nvtest_socket = /tmp/a\nclass = safety\n"
		  "[domain b]\nvtest_socket = /tmp/b\n"
		  "[domain c]\nvtest_socket = /tmp/c\nclass = safety\nworker_nice = -5\n"
		  "[domain d]\nvtest_socket = /tmp/d\nworker_nice = 19\n"
		  "[domain e]\nvtest_socket = /tmp/e\nworker_nice = -20\n",
		  err, sizeof(err)),
	    0);
	assert_int_equal(cfg.domains[0].worker_nice, CONFIG_DEFAULT_SAFETY_NICE);
	assert_int_equal(cfg.domains[1].worker_nice, CONFIG_DEFAULT_NORMAL_NICE);
	assert_int_equal(cfg.domains[2].worker_nice, -5);
	assert_int_equal(cfg.domains[3].worker_nice, 19);
	assert_int_equal(cfg.domains[4].worker_nice, -20);
}

/* resource_memory_mb defaults to half of worker_memory_mb; restart_wait_s to 60 s. */
static void resource_memory_and_restart_wait_defaults(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(parse(&cfg,
			       "[domain a]\nvtest_socket = /tmp/a\n"
			       "[domain b]\nvtest_socket = /tmp/b\nworker_memory_mb = 256\n"
			       "[domain c]\nvtest_socket = /tmp/c\nresource_memory_mb = 0\n"
			       "[domain d]\nvtest_socket = /tmp/d\nresource_memory_mb = 300\n",
			       err, sizeof(err)),
			 0);
	assert_int_equal(cfg.restart_wait_s, CONFIG_DEFAULT_RESTART_WAIT_S);
	assert_int_equal(cfg.domains[0].resource_memory_mb, CONFIG_DEFAULT_WORKER_MEMORY_MB / 2);
	assert_int_equal(cfg.domains[1].resource_memory_mb, 128);
	assert_int_equal(cfg.domains[2].resource_memory_mb, 0);
	assert_int_equal(cfg.domains[3].resource_memory_mb, 300);
	assert_int_equal(
	    parse(&cfg, "[mediator]\nrestart_wait_s = 0\n[domain a]\nvtest_socket = /tmp/a\n", err,
		  sizeof(err)),
	    0);
	assert_int_equal(cfg.restart_wait_s, 0);
	assert_int_equal(
	    parse(&cfg, "[mediator]\nrestart_wait_s = 3601\n[domain a]\nvtest_socket = /tmp/a\n",
		  err, sizeof(err)),
	    -EINVAL);
	assert_non_null(strstr(err, "restart_wait_s"));
}

/* worker_pass_environment: names and PREFIX* words; anything else is an error naming the word. */
static void worker_pass_environment_names(void **state)
{
	static const char *const bad[] = {"*", "1ABC", "A-B", "MESA_*X", "LP_NUM_THREADS=2", "A**"};
	struct mediator_config cfg;
	char err[256], text[256];

	(void)state;
	assert_int_equal(parse(&cfg, "[domain a]\nvtest_socket = /tmp/a\n", err, sizeof(err)), 0);
	assert_string_equal(cfg.worker_pass_environment, "");
	assert_int_equal(parse(&cfg,
			       "[mediator]\nworker_pass_environment = LP_NUM_THREADS  MESA_* _x9\n"
			       "[domain a]\nvtest_socket = /tmp/a\n",
			       err, sizeof(err)),
			 0);
	assert_string_equal(cfg.worker_pass_environment, "LP_NUM_THREADS  MESA_* _x9");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
			 "[mediator]\nworker_pass_environment = OK %s\n[domain a]\nvtest_socket = "
			 "/tmp/a\n",
			 bad[i]);
		assert_int_equal(parse(&cfg, text, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "worker_pass_environment"));
		assert_non_null(strstr(err, bad[i]));
	}
}

/*
 * vms: a domain may serve libvirt VMs alone; vm_socket opens then, owned by
 * the configured user; each VM's libvirt pid file name finds its domain.
 */
static void vms_map_libvirt_file_names_to_domains(void **state)
{
	struct mediator_config cfg;
	char err[256], vm[CONFIG_VMS_MAX];

	(void)state;
	assert_int_equal(parse(&cfg, "[domain a]\nvtest_socket = /tmp/a\n", err, sizeof(err)), 0);
	assert_false(config_has_vms(&cfg));
	assert_string_equal(cfg.vm_socket, CONFIG_DEFAULT_VM_SOCKET);
	assert_string_equal(cfg.libvirt_state_dir, CONFIG_DEFAULT_LIBVIRT_STATE_DIR);
	assert_int_equal(parse(&cfg,
			       "[mediator]\nvm_socket = /tmp/vms\nvm_socket_owner = root\n"
			       "libvirt_state_dir = /tmp/lv\n"
			       "[domain a]\nvms = cluster-vm\n"
			       "[domain b]\nvms = ivi-vm a-very-long-vm-name-of-thirty-chars\n",
			       err, sizeof(err)),
			 0);
	assert_true(config_has_vms(&cfg));
	assert_string_equal(cfg.vm_socket, "/tmp/vms");
	assert_int_equal(cfg.vm_socket_uid, 0);
	assert_int_equal(config_domain_of_vm_stem(&cfg, "1-cluster-vm-video0", vm, sizeof(vm)), 0);
	assert_string_equal(vm, "cluster-vm");
	assert_int_equal(config_domain_of_vm_stem(&cfg, "12-ivi-vm-ua-gpu", vm, sizeof(vm)), 1);
	assert_string_equal(vm, "ivi-vm");
	/* libvirt keeps the first 20 characters of a name in its files. */
	assert_int_equal(
	    config_domain_of_vm_stem(&cfg, "3-a-very-long-vm-name--video0", vm, sizeof(vm)), 1);
	assert_string_equal(vm, "a-very-long-vm-name-of-thirty-chars");
	assert_int_equal(config_domain_of_vm_stem(&cfg, "1-other-vm-video0", vm, sizeof(vm)),
			 -ENOENT);
	assert_int_equal(config_domain_of_vm_stem(&cfg, "cluster-vm-video0", vm, sizeof(vm)),
			 -ENOENT);
	assert_int_equal(config_domain_of_vm_stem(&cfg, "1-cluster-vm-2-video0", vm, sizeof(vm)),
			 -ENOENT);
	assert_int_equal(config_domain_of_vm_stem(&cfg, "1-cluster-vm-videoX", vm, sizeof(vm)),
			 -ENOENT);
	/* Names libvirt's files cannot tell apart are refused at run time. */
	assert_int_equal(parse(&cfg,
			       "[mediator]\nvm_socket_owner = root\n[domain a]\nvms = x\n"
			       "[domain b]\nvms = x-ua-y\n",
			       err, sizeof(err)),
			 0);
	assert_int_equal(config_domain_of_vm_stem(&cfg, "1-x-ua-y-video0", vm, sizeof(vm)),
			 -EEXIST);
}

/* The domain limits' defaults are the named constants; set values are kept. */
static void domain_limits_default_and_take_set_values(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(parse(&cfg,
			       "[domain a]\nvtest_socket = /tmp/a\nclass = safety\n"
			       "[domain b]\nvtest_socket = /tmp/b\nmax_clients = 224\n"
			       "domain_memory_mb = 0\nmax_contexts_per_client = 1\n",
			       err, sizeof(err)),
			 0);
	assert_int_equal(cfg.domains[0].max_clients, CONFIG_DEFAULT_MAX_CLIENTS);
	assert_int_equal(cfg.domains[0].domain_memory_mb, CONFIG_DEFAULT_DOMAIN_MEMORY_MB);
	assert_int_equal(cfg.domains[0].max_contexts_per_client,
			 CONFIG_DEFAULT_MAX_CONTEXTS_PER_CLIENT);
	assert_int_equal(cfg.domains[1].max_clients, 224);
	assert_int_equal(cfg.domains[1].domain_memory_mb, 0);
	assert_int_equal(cfg.domains[1].max_contexts_per_client, 1);
}

/* CONFIG_MAX_DOMAINS domains all at the default max_clients fit in the client table. */
static void every_domain_at_the_default_max_clients_fits(void **state)
{
	char text[4096];
	struct mediator_config cfg;
	char err[256];
	size_t n = 0;

	for (unsigned i = 0; i < CONFIG_MAX_DOMAINS; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "[domain d%u]\nvtest_socket = /tmp/d%u\n", i, i);
	assert_int_equal(parse(&cfg, text, err, sizeof(err)), 0);
	assert_true(CONFIG_MAX_DOMAINS * CONFIG_DEFAULT_MAX_CLIENTS <= CONFIG_MAX_CLIENTS_TOTAL);
}

static void budget_and_deadline_default_to_the_domains_own_period(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(parse(&cfg,
			       "[domain a]\nvhost_user_socket = /tmp/a\nperiod_us = 1000\n"
			       "[domain b]\nvhost_user_socket = /tmp/b\nperiod_us = 2000\n"
			       "deadline_us = 1500\n",
			       err, sizeof(err)),
			 0);
	assert_int_equal(cfg.domains[0].budget_us, 1000);
	assert_int_equal(cfg.domains[0].deadline_us, 1000);
	assert_int_equal(cfg.domains[1].budget_us, 2000);
	assert_int_equal(cfg.domains[1].deadline_us, 1500);
	assert_int_equal(cfg.domains[1].guard_us, 0);
}

static void a_safety_domain_has_a_guard(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(
	    parse(&cfg, "[domain a]\nvtest_socket = /tmp/a\nclass = safety\nguard_us = 4000\n", err,
		  sizeof(err)),
	    0);
	assert_int_equal(cfg.domains[0].guard_us, 4000);
}

/* Issue 33: a safety domain without period_us learns it, within min_period_us and max_period_us. */
static void a_safety_domain_without_period_us_learns_it(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(
	    parse(&cfg,
		  "[domain a]\nvtest_socket = /tmp/a\nclass = safety\nbudget_us = 4000\n"
		  "[domain b]\nvtest_socket = /tmp/b\nclass = safety\n"
		  "min_period_us = 33333\nmax_period_us = 100000\ndeadline_us = 30000\n"
		  "[domain c]\nvtest_socket = /tmp/c\nclass = safety\nperiod_us = 20000\n"
		  "[domain d]\nvtest_socket = /tmp/d\n",
		  err, sizeof(err)),
	    0);
	assert_true(cfg.domains[0].period_learned);
	assert_int_equal(cfg.domains[0].period_us, CONFIG_DEFAULT_MIN_PERIOD_US);
	assert_int_equal(cfg.domains[0].max_period_us, CONFIG_DEFAULT_MAX_PERIOD_US);
	assert_int_equal(cfg.domains[0].deadline_us, CONFIG_DEFAULT_MIN_PERIOD_US);
	assert_true(cfg.domains[0].deadline_follows);
	assert_true(cfg.domains[1].period_learned);
	assert_int_equal(cfg.domains[1].period_us, 33333);
	assert_int_equal(cfg.domains[1].max_period_us, 100000);
	assert_int_equal(cfg.domains[1].budget_us, 33333);
	assert_false(cfg.domains[1].deadline_follows);
	assert_false(cfg.domains[2].period_learned);
	assert_int_equal(cfg.domains[2].period_us, 20000);
	assert_false(cfg.domains[3].period_learned);
	assert_int_equal(cfg.domains[3].weight, CONFIG_DEFAULT_WEIGHT);
}

static void a_normal_domain_has_a_weight(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(
	    parse(&cfg, "[domain a]\nvtest_socket = /tmp/a\nweight = 3\n", err, sizeof(err)), 0);
	assert_int_equal(cfg.domains[0].weight, 3);
}

static void every_mediator_key_is_read(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(parse(&cfg,
			       "[mediator]\n"
			       "control_socket = /tmp/m/control.sock\n"
			       "state_dir = /tmp/m/state\n"
			       "policy = fifo\n"
			       "max_inflight = 0\n"
			       "renderer = egl-gbm\n"
			       "render_node = /dev/dri/renderD129\n"
			       "model = rls\n"
			       "[domain a]\n"
			       "vtest_socket = /tmp/m/a\n",
			       err, sizeof(err)),
			 0);
	assert_string_equal(cfg.control_socket, "/tmp/m/control.sock");
	assert_string_equal(cfg.state_dir, "/tmp/m/state");
	assert_int_equal(cfg.policy, MEDIATOR_POLICY_FIFO);
	assert_int_equal(cfg.max_inflight, 0);
	assert_int_equal(cfg.renderer, MEDIATOR_RENDERER_EGL_GBM);
	assert_string_equal(cfg.render_node, "/dev/dri/renderD129");
	assert_string_equal(cfg.model, "rls");
	/* Not set: the grant watchdog's defaults. */
	assert_int_equal(cfg.watchdog_multiplier, CONFIG_DEFAULT_WATCHDOG_MULTIPLIER);
	assert_int_equal(cfg.watchdog_slack_us, CONFIG_DEFAULT_WATCHDOG_SLACK_US);
	assert_int_equal(cfg.watchdog_floor_us, CONFIG_DEFAULT_WATCHDOG_FLOOR_US);
	assert_int_equal(cfg.watchdog_kill_us, CONFIG_DEFAULT_WATCHDOG_KILL_US);

	assert_int_equal(parse(&cfg,
			       "[mediator]\nwatchdog_multiplier = 0\nwatchdog_slack_us = 7\n"
			       "watchdog_floor_us = 123456\nwatchdog_kill_us = 0\n[domain "
			       "a]\nvtest_socket = /tmp/m/a\n",
			       err, sizeof(err)),
			 0);
	assert_int_equal(cfg.watchdog_multiplier, 0);
	assert_int_equal(cfg.watchdog_slack_us, 7);
	assert_int_equal(cfg.watchdog_floor_us, 123456);
	assert_int_equal(cfg.watchdog_kill_us, 0);

	assert_int_equal(parse(&cfg,
			       "[mediator]\nrenderer = glx\nmax_inflight = 64\n"
			       "[domain a]\nvtest_socket = /tmp/m/a\n",
			       err, sizeof(err)),
			 0);
	assert_int_equal(cfg.renderer, MEDIATOR_RENDERER_GLX);
	assert_int_equal(cfg.max_inflight, CONFIG_MAX_INFLIGHT_LIMIT);
}

static void limits_themselves_are_accepted(void **state)
{
	struct mediator_config cfg;
	char err[256];
	char text[1024];
	char path[CONFIG_PATH_MAX];
	char name[CONFIG_NAME_MAX];

	/* A path of CONFIG_PATH_MAX - 1 characters and a name of CONFIG_NAME_MAX - 1. */
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(text, sizeof(text),
		 "[domain %s]\nvtest_socket = %s\nperiod_us = 100\nbudget_us = 100\n"
		 "deadline_us = 100\n"
		 "[domain Az09_.-]\nvtest_socket = /b\nperiod_us = 10000000\n"
		 "budget_us = 10000000\ndeadline_us = 10000000\n",
		 name, path);
	assert_int_equal(parse(&cfg, text, err, sizeof(err)), 0);
	assert_string_equal(cfg.domains[0].name, name);
	assert_string_equal(cfg.domains[0].vtest_socket, path);
	assert_int_equal(cfg.domains[0].period_us, CONFIG_MIN_PERIOD_US);
	assert_int_equal(cfg.domains[0].budget_us, 100);
	assert_int_equal(cfg.domains[0].deadline_us, 100);
	assert_string_equal(cfg.domains[1].name, "Az09_.-");
	assert_int_equal(cfg.domains[1].period_us, CONFIG_MAX_PERIOD_US);
	assert_int_equal(cfg.domains[1].budget_us, CONFIG_MAX_PERIOD_US);
	assert_int_equal(cfg.domains[1].deadline_us, CONFIG_MAX_PERIOD_US);
}

static void comments_blank_lines_indentation_and_crlf_are_fine(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(parse(&cfg,
			       "\xef\xbb\xbf; a comment\r\n"
			       "# another comment\r\n"
			       "\r\n"
			       "  [ mediator ]   ; inline comment after a header\r\n"
			       "\tpolicy=fifo\r\n"
			       "\r\n"
			       "   [domain  one ]\r\n"
			       "    vtest_socket = /tmp/one   ; comment\r\n"
			       /* An indented key is a key, never a continuation of the
				* previous value (inih's multi-line values). */
			       "    period_us = 1000\r\n"
			       "class: safety\r\n",
			       err, sizeof(err)),
			 0);
	assert_int_equal(cfg.policy, MEDIATOR_POLICY_FIFO);
	assert_int_equal(cfg.n_domains, 1);
	assert_string_equal(cfg.domains[0].name, "one");
	assert_string_equal(cfg.domains[0].vtest_socket, "/tmp/one");
	assert_int_equal(cfg.domains[0].period_us, 1000);
	assert_int_equal(cfg.domains[0].class, DOMAIN_CLASS_SAFETY);
	assert_int_equal(cfg.domains[0].line, 7);
}

static void each_domain_knows_the_line_of_its_header(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(parse(&cfg,
			       "; domains\n"
			       "[domain a]\n"
			       "vtest_socket = /tmp/a\n"
			       "\n"
			       "[mediator]\n"
			       "policy = fifo\n"
			       "[domain b]\n"
			       "vtest_socket = /tmp/b\n",
			       err, sizeof(err)),
			 0);
	assert_int_equal(cfg.n_domains, 2);
	assert_int_equal(cfg.domains[0].line, 2);
	assert_int_equal(cfg.domains[1].line, 7);
}

/* A bad config, the errno expected and a part of the message expected. */
struct bad_case {
	const char *what;
	const char *text;
	int error;
	const char *message;
};

#define DOMAIN_A "[domain a]\nvtest_socket = /tmp/a\n"

static const struct bad_case bad_cases[] = {
    {"a VM in two domains",
     "[mediator]\nvm_socket_owner = root\n[domain a]\nvms = v w\n"
     "[domain b]\nvms = w\n",
     -EINVAL,
     NAME ":6: key 'vms': VM 'w' (domain 'b') and VM 'w' (domain 'a') begin with the same 20"},
    {"a VM twice in a domain", "[mediator]\nvm_socket_owner = root\n[domain a]\nvms = v v\n",
     -EINVAL, NAME ":4: key 'vms': VM 'v' (domain 'a') and VM 'v' (domain 'a')"},
    {"two VMs libvirt's files cannot tell apart",
     "[mediator]\nvm_socket_owner = root\n[domain a]\n"
     "vms = a-twenty-char-prefix-1 a-twenty-char-prefix-2\n",
     -EINVAL, NAME ":4: key 'vms': VM 'a-twenty-char-prefix-2'"},
    {"a VM name with a slash", "[mediator]\nvm_socket_owner = root\n[domain a]\nvms = a/b\n",
     -EINVAL, NAME ":4: key 'vms': 'a/b' is no libvirt VM name"},
    {"vms without a name", "[domain a]\nvtest_socket = /tmp/a\nvms =  \n", -EINVAL,
     NAME ":3: key 'vms': no VM name"},
    {"vm_socket on a domain's socket",
     "[mediator]\nvm_socket = /tmp/a\nvm_socket_owner = root\n[domain a]\nvtest_socket = "
     "/tmp/a\nvms = v\n",
     -EINVAL, NAME ":5: key 'vtest_socket': '/tmp/a' is already used by vm_socket (line 2)"},
    {"vm_socket_owner that does not exist",
     "[mediator]\nvm_socket_owner = no-such-user-here\n[domain a]\nvms = v\n", -EINVAL,
     NAME ":2: key 'vm_socket_owner': no user 'no-such-user-here'"},
    {"unknown section", "[mediatr]\n" DOMAIN_A, -EINVAL, NAME ":1: unknown section [mediatr]"},
    {"section name with an extra word", DOMAIN_A "[mediator x]\n", -EINVAL,
     NAME ":3: unknown section [mediator x]"},
    {"'domain' glued to the name", "[domaina]\nvtest_socket = /tmp/a\n", -EINVAL,
     NAME ":1: unknown section [domaina]"},
    {"section header without ']'", DOMAIN_A "[domain b\n", -EINVAL,
     NAME ":3: section header without ']'"},
    {"text after a section header", "[domain a] x\nvtest_socket = /tmp/a\n", -EINVAL,
     NAME ":1: text after ']'"},
    {"second [mediator] section", "[mediator]\npolicy = fifo\n" DOMAIN_A "[mediator]\n", -EINVAL,
     NAME ":5: second [mediator] section (first on line 1)"},
    {"unknown key in [mediator]", "[mediator]\npolicyy = fifo\n" DOMAIN_A, -EINVAL,
     NAME ":2: key 'policyy': unknown key in [mediator]"},
    {"unknown key in a domain", DOMAIN_A "budget = 10\n", -EINVAL,
     NAME ":3: key 'budget': unknown key in [domain a]"},
    {"keys are case-sensitive", DOMAIN_A "Period_us = 1000\n", -EINVAL,
     NAME ":3: key 'Period_us': unknown key in [domain a]"},
    {"key before any section", "policy = fifo\n" DOMAIN_A, -EINVAL,
     NAME ":1: key 'policy': outside of any section"},
    {"line that is not a key, a section or a comment", DOMAIN_A "period_us\n", -EINVAL,
     NAME ":3: syntax error"},
    {"duplicate key in [mediator]", "[mediator]\npolicy = fifo\npolicy = budget\n" DOMAIN_A,
     -EINVAL, NAME ":3: key 'policy': set twice in [mediator] (first on line 2)"},
    {"duplicate key in a domain", DOMAIN_A "period_us = 1000\n\nperiod_us = 1000\n", -EINVAL,
     NAME ":5: key 'period_us': set twice in [domain a] (first on line 3)"},
    {"same key in two domains is fine, twice in one is not",
     DOMAIN_A "[domain b]\nvtest_socket = /tmp/b\nvtest_socket = /tmp/c\n", -EINVAL,
     NAME ":5: key 'vtest_socket': set twice in [domain b] (first on line 4)"},
    {"duplicate domain name", DOMAIN_A "[domain b]\nvtest_socket = /tmp/b\n[domain a]\n", -EINVAL,
     NAME ":5: domain 'a' is defined twice (first on line 1)"},
    {"empty domain name", "[domain]\nvtest_socket = /tmp/a\n", -EINVAL,
     NAME ":1: domain name is empty"},
    {"blank domain name", "[domain   ]\nvtest_socket = /tmp/a\n", -EINVAL,
     NAME ":1: domain name is empty"},
    {"domain name too long", "[domain abcdefghijklmnopqrstuvwxyz012345]\n", -EINVAL,
     NAME ":1: domain name 'abcdefghijklmnopqrstuvwxyz012345' is longer than 31 characters"},
    {"slash in a domain name", "[domain a/b]\nvtest_socket = /tmp/a\n", -EINVAL,
     NAME ":1: domain name 'a/b' has a character other than"},
    {"space in a domain name", "[domain a b]\nvtest_socket = /tmp/a\n", -EINVAL,
     NAME ":1: domain name 'a b' has a character other than"},
    {"domain name '..'", "[domain ..]\nvtest_socket = /tmp/a\n", -EINVAL,
     NAME ":1: domain name '..' is not allowed"},
    {"period_us not a number", DOMAIN_A "period_us = abc\n", -EINVAL,
     NAME ":3: key 'period_us': 'abc' is not a non-negative decimal integer"},
    {"period_us negative", DOMAIN_A "period_us = -1000\n", -EINVAL,
     NAME ":3: key 'period_us': '-1000' is not a non-negative decimal integer"},
    {"period_us with a plus sign", DOMAIN_A "period_us = +1000\n", -EINVAL,
     NAME ":3: key 'period_us': '+1000' is not"},
    {"period_us in hex", DOMAIN_A "period_us = 0x1000\n", -EINVAL,
     NAME ":3: key 'period_us': '0x1000' is not"},
    {"period_us with a fraction", DOMAIN_A "period_us = 1000.5\n", -EINVAL,
     NAME ":3: key 'period_us': '1000.5' is not"},
    {"period_us with a unit", DOMAIN_A "period_us = 1000us\n", -EINVAL,
     NAME ":3: key 'period_us': '1000us' is not"},
    {"period_us with a space inside", DOMAIN_A "period_us = 16 667\n", -EINVAL,
     NAME ":3: key 'period_us': '16 667' is not"},
    {"period_us empty", DOMAIN_A "period_us =\n", -EINVAL, NAME ":3: key 'period_us': '' is not"},
    {"comment glued to a value", DOMAIN_A "period_us = 1000;ms\n", -EINVAL,
     NAME ":3: key 'period_us': '1000;ms' is not"},
    {"period_us below its minimum", DOMAIN_A "period_us = 99\n", -EINVAL,
     NAME ":3: key 'period_us': 99 is out of range (100..10000000)"},
    {"period_us above its maximum", DOMAIN_A "period_us = 10000001\n", -EINVAL,
     NAME ":3: key 'period_us': 10000001 is out of range (100..10000000)"},
    {"period_us past 64 bits", DOMAIN_A "period_us = 184467440737095516160000\n", -EINVAL,
     NAME ":3: key 'period_us': 184467440737095516160000 is out of range"},
    {"period_us of 2^32 + 1000 does not wrap", DOMAIN_A "period_us = 4294968296\n", -EINVAL,
     NAME ":3: key 'period_us': 4294968296 is out of range"},
    {"max_inflight above its limit", "[mediator]\nmax_inflight = 65\n" DOMAIN_A, -EINVAL,
     NAME ":2: key 'max_inflight': 65 is out of range (0..64)"},
    {"watchdog_multiplier above its limit", "[mediator]\nwatchdog_multiplier = 101\n" DOMAIN_A,
     -EINVAL, NAME ":2: key 'watchdog_multiplier': 101 is out of range (0..100)"},
    {"watchdog_floor_us below its limit", "[mediator]\nwatchdog_floor_us = 9999\n" DOMAIN_A,
     -EINVAL, NAME ":2: key 'watchdog_floor_us': 9999 is out of range (10000..60000000)"},
    {"watchdog_slack_us above its limit", "[mediator]\nwatchdog_slack_us = 60000001\n" DOMAIN_A,
     -EINVAL, NAME ":2: key 'watchdog_slack_us': 60000001 is out of range (0..60000000)"},
    {"watchdog_kill_us above its limit", "[mediator]\nwatchdog_kill_us = 60000001\n" DOMAIN_A,
     -EINVAL, NAME ":2: key 'watchdog_kill_us': 60000001 is out of range (0..60000000)"},
    {"budget_us zero", DOMAIN_A "budget_us = 0\n", -EINVAL,
     NAME ":3: key 'budget_us': 0 is out of range (1..10000000)"},
    {"deadline_us zero", DOMAIN_A "deadline_us = 0\n", -EINVAL,
     NAME ":3: key 'deadline_us': 0 is out of range (1..10000000)"},
    {"budget_us larger than period_us, named at its own line",
     "[domain a]\nbudget_us = 20000\nperiod_us = 16667\nvtest_socket = /tmp/a\n", -EINVAL,
     NAME ":2: key 'budget_us': 20000 is larger than period_us (16667)"},
    {"budget_us larger than the default period_us", DOMAIN_A "budget_us = 16668\n", -EINVAL,
     NAME ":3: key 'budget_us': 16668 is larger than period_us (16667)"},
    {"deadline_us larger than period_us", DOMAIN_A "period_us = 1000\ndeadline_us = 1001\n",
     -EINVAL, NAME ":4: key 'deadline_us': 1001 is larger than period_us (1000)"},
    {"max_clients of 0", DOMAIN_A "max_clients = 0\n", -EINVAL,
     NAME ":3: key 'max_clients': 0 is out of range (1..256)"},
    {"max_clients past the client table", DOMAIN_A "max_clients = 257\n", -EINVAL,
     NAME ":3: key 'max_clients': 257 is out of range (1..256)"},
    {"max_clients adding up past the client table",
     DOMAIN_A "max_clients = 250\n[domain b]\nvtest_socket = /tmp/b\n", -EINVAL,
     NAME ":4: domain 'b': key 'max_clients': the domains' max_clients add up to 266, more "
	  "than the 256 clients mediatord serves"},
    {"domain_memory_mb past its most", DOMAIN_A "domain_memory_mb = 1048577\n", -EINVAL,
     NAME ":3: key 'domain_memory_mb': 1048577 is out of range (0..1048576)"},
    {"domain_memory_mb negative", DOMAIN_A "domain_memory_mb = -1\n", -EINVAL,
     NAME ":3: key 'domain_memory_mb': "},
    {"max_contexts_per_client of 0", DOMAIN_A "max_contexts_per_client = 0\n", -EINVAL,
     NAME ":3: key 'max_contexts_per_client': 0 is out of range (1..64)"},
    {"max_contexts_per_client past a VM's table", DOMAIN_A "max_contexts_per_client = 65\n",
     -EINVAL, NAME ":3: key 'max_contexts_per_client': 65 is out of range (1..64)"},
    {"guard_us of a normal domain", DOMAIN_A "guard_us = 1000\n", -EINVAL,
     NAME ":3: key 'guard_us': only a class = safety domain has a guard"},
    {"guard_us as long as the deadline", DOMAIN_A "class = safety\nguard_us = 16667\n", -EINVAL,
     NAME ":4: key 'guard_us': 16667 leaves nothing of deadline_us (16667)"},
    {"socket_owner that does not exist", DOMAIN_A "socket_owner = gm-no-such-user\n", -EINVAL,
     NAME ":3: key 'socket_owner': no user 'gm-no-such-user' on this system"},
    {"a domain's worker_user that does not exist", DOMAIN_A "worker_user = gm-no-such-user\n",
     -EINVAL, NAME ":3: key 'worker_user': no user 'gm-no-such-user' on this system"},
    {"socket_group that does not exist", DOMAIN_A "socket_group = gm-no-such-group\n", -EINVAL,
     NAME ":3: key 'socket_group': no group 'gm-no-such-group' on this system"},
    {"admin_group that does not exist", "[mediator]\nadmin_group = gm-no-such-group\n" DOMAIN_A,
     -EINVAL, NAME ":2: key 'admin_group': no group 'gm-no-such-group' on this system"},
    {"socket_owner empty", DOMAIN_A "socket_owner =\n", -EINVAL,
     NAME ":3: key 'socket_owner': no user '' on this system"},
    {"socket_mode not octal", DOMAIN_A "socket_mode = 0680\n", -EINVAL,
     NAME ":3: key 'socket_mode': '0680' is not octal permission bits such as 0660"},
    {"socket_mode with setuid bits", DOMAIN_A "socket_mode = 4660\n", -EINVAL,
     NAME ":3: key 'socket_mode': '4660' is not octal"},
    {"socket_mode symbolic", DOMAIN_A "socket_mode = rw-rw----\n", -EINVAL,
     NAME ":3: key 'socket_mode': 'rw-rw----' is not octal"},
    {"socket_mode empty", DOMAIN_A "socket_mode =\n", -EINVAL,
     NAME ":3: key 'socket_mode': '' is not octal"},
    {"worker_nice above 19", DOMAIN_A "worker_nice = 20\n", -EINVAL,
     NAME ":3: key 'worker_nice': '20' is not a nice value (-20..19)"},
    {"worker_nice below -20", DOMAIN_A "worker_nice = -21\n", -EINVAL,
     NAME ":3: key 'worker_nice': '-21' is not a nice value (-20..19)"},
    {"worker_nice with a plus sign", DOMAIN_A "worker_nice = +5\n", -EINVAL,
     NAME ":3: key 'worker_nice': '+5' is not a nice value"},
    {"worker_nice twice negative", DOMAIN_A "worker_nice = --5\n", -EINVAL,
     NAME ":3: key 'worker_nice': '--5' is not a nice value"},
    {"worker_nice empty", DOMAIN_A "worker_nice =\n", -EINVAL,
     NAME ":3: key 'worker_nice': '' is not a nice value"},
    {"domain without a socket", "[domain a]\nclass = safety\n", -EINVAL,
     NAME ":1: domain 'a': key 'vtest_socket': missing"},
    {"empty domain section followed by another", "[domain a]\n[domain b]\nvtest_socket = /b\n",
     -EINVAL, NAME ":1: domain 'a': key 'vtest_socket': missing"},
    {"empty domain section at the end", DOMAIN_A "; end\n[domain b] ; nothing here\n", -EINVAL,
     NAME ":4: domain 'b': key 'vtest_socket': missing"},
    {"relative socket path", "[domain a]\nvtest_socket = run/a\n", -EINVAL,
     NAME ":2: key 'vtest_socket': 'run/a' is not an absolute path"},
    {"empty socket path", "[domain a]\nvhost_user_socket =\n", -EINVAL,
     NAME ":2: key 'vhost_user_socket': '' is not an absolute path"},
    {"relative control_socket", "[mediator]\ncontrol_socket = control.sock\n" DOMAIN_A, -EINVAL,
     NAME ":2: key 'control_socket': 'control.sock' is not an absolute path"},
    {"relative state_dir", "[mediator]\nstate_dir = ./state\n" DOMAIN_A, -EINVAL,
     NAME ":2: key 'state_dir': './state' is not an absolute path"},
    {"relative render_node", "[mediator]\nrender_node = renderD128\n" DOMAIN_A, -EINVAL,
     NAME ":2: key 'render_node': 'renderD128' is not an absolute path"},
    {"unknown cost model", "[mediator]\nmodel = oracle\n" DOMAIN_A, -EINVAL,
     NAME ":2: key 'model': unknown model 'oracle'"},
    {"socket path that does not fit sun_path",
     "[domain a]\nvtest_socket = /"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaa\n",
     -EINVAL, NAME ":2: key 'vtest_socket': path is 108 characters long, at most 107 fit"},
    {"two domains on one vtest socket",
     DOMAIN_A "[domain b]\nclass = safety\nvtest_socket = /tmp/a\n", -EINVAL,
     NAME ":5: key 'vtest_socket': '/tmp/a' is already used by vtest_socket of domain 'a' "
	  "(line 2)"},
    {"vhost-user socket of one domain on the vtest socket of another",
     "[domain a]\nvhost_user_socket = /tmp/x\n[domain b]\nvtest_socket = /tmp/x\n", -EINVAL,
     NAME ":4: key 'vtest_socket': '/tmp/x' is already used by vhost_user_socket of domain "
	  "'a' (line 2)"},
    {"one domain with both sockets on one path",
     "[domain a]\nvtest_socket = /tmp/x\nvhost_user_socket = /tmp/x\n", -EINVAL,
     NAME ":3: key 'vhost_user_socket': '/tmp/x' is already used by vtest_socket of domain "
	  "'a'"},
    {"domain socket on the control socket",
     "[mediator]\ncontrol_socket = /tmp/c\n[domain a]\nvtest_socket = /tmp/c\n", -EINVAL,
     NAME ":4: key 'vtest_socket': '/tmp/c' is already used by control_socket (line 2)"},
    {"control socket set after the domain that uses it",
     DOMAIN_A "[mediator]\ncontrol_socket = /tmp/a\n", -EINVAL,
     NAME ":4: key 'control_socket': '/tmp/a' is already used by vtest_socket of domain 'a'"},
    {"domain socket on the default control socket",
     "[domain a]\nvtest_socket = " CONFIG_DEFAULT_CONTROL_SOCKET "\n", -EINVAL,
     NAME ":2: key 'vtest_socket': '" CONFIG_DEFAULT_CONTROL_SOCKET
	  "' is already used by control_socket (its default)"},
    {"unknown policy", "[mediator]\npolicy = edf\n" DOMAIN_A, -EINVAL,
     NAME ":2: key 'policy': 'edf' is not one of budget, fifo"},
    {"policy names are case-sensitive", "[mediator]\npolicy = Budget\n" DOMAIN_A, -EINVAL,
     NAME ":2: key 'policy': 'Budget' is not one of"},
    {"'#' is no inline comment", "[mediator]\npolicy = fifo # pass-through\n" DOMAIN_A, -EINVAL,
     NAME ":2: key 'policy': 'fifo # pass-through' is not one of"},
    {"unknown renderer", "[mediator]\nrenderer = vulkan\n" DOMAIN_A, -EINVAL,
     NAME ":2: key 'renderer': 'vulkan' is not one of egl-surfaceless, egl-gbm, glx"},
    {"unknown class", DOMAIN_A "class = critical\n", -EINVAL,
     NAME ":3: key 'class': 'critical' is not one of normal, safety"},
    {"min_period_us beside period_us",
     DOMAIN_A "class = safety\nperiod_us = 20000\n"
	      "min_period_us = 10000\n",
     -EINVAL, NAME ":5: key 'min_period_us': only a class = safety domain without period_us"},
    {"max_period_us in a normal domain", DOMAIN_A "max_period_us = 20000\n", -EINVAL,
     NAME ":3: key 'max_period_us': only a class = safety domain"},
    {"max_period_us shorter than min_period_us",
     DOMAIN_A "class = safety\nmin_period_us = 20000\nmax_period_us = 10000\n", -EINVAL,
     NAME ":5: key 'max_period_us': 10000 is shorter than min_period_us (20000)"},
    {"a learned period's budget over its shortest", DOMAIN_A "class = safety\nbudget_us = 20000\n",
     -EINVAL, NAME ":4: key 'budget_us': 20000 is larger than min_period_us (16667)"},
    {"a safety domain's weight", DOMAIN_A "class = safety\nweight = 3\n", -EINVAL,
     NAME ":4: key 'weight': only a class = normal domain has a weight"},
    {"weight 0", DOMAIN_A "weight = 0\n", -EINVAL, NAME ":3: key 'weight': 0 is out of range"},
    {"empty file", "", -EINVAL, NAME ":0: no [domain NAME] section"},
    {"only comments", "; nothing\n\n; here\n", -EINVAL, NAME ":3: no [domain NAME] section"},
    {"[mediator] without domains", "[mediator]\npolicy = fifo\n", -EINVAL,
     NAME ":2: no [domain NAME] section"},
    {"the first of several errors is reported", "[domain a]\nperiod_us = 5\nclass = bad\n[oops]\n",
     -EINVAL, NAME ":2: key 'period_us': 5 is out of range"},
    {"an earlier cross-key error wins over a later one",
     "[domain a]\nbudget_us = 20000\nvtest_socket = /tmp/a\n"
     "[domain b]\nvtest_socket = /tmp/a\n",
     -EINVAL, NAME ":2: key 'budget_us': 20000 is larger than period_us"},
};

static void bad_configs_are_rejected_naming_line_and_key(void **state)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct mediator_config cfg;
		char err[512];
		int ret;

		memset(err, 'x', sizeof(err));
		ret = parse(&cfg, c->text, err, sizeof(err));
		if (ret != c->error || !strstr(err, c->message)) {
			print_error("case '%s':\n  got %d '%s'\n  expected %d '%s'\n", c->what, ret,
				    err, c->error, c->message);
			fail();
		}
		/* The message starts with the file name and is one line. */
		assert_int_equal(strncmp(err, NAME ":", strlen(NAME ":")), 0);
		assert_null(strchr(err, '\n'));
	}
}

static void budget_larger_than_period_names_its_line(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(parse(&cfg,
			       "[domain cluster]\n"
			       "class = safety\n"
			       "period_us = 16667\n"
			       "budget_us = 17000\n"
			       "vtest_socket = /tmp/cluster\n",
			       err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err,
			    NAME ":4: key 'budget_us': 17000 is larger than period_us (16667)");
}

static void sixteen_domains_fit_and_a_seventeenth_does_not(void **state)
{
	struct mediator_config cfg;
	char text[4096] = "";
	char err[256];
	size_t len = 0;

	for (int i = 0; i < CONFIG_MAX_DOMAINS; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"[domain d%d]\nvtest_socket = /tmp/d%d\n", i, i);
	assert_int_equal(parse(&cfg, text, err, sizeof(err)), 0);
	assert_int_equal(cfg.n_domains, CONFIG_MAX_DOMAINS);
	assert_string_equal(cfg.domains[CONFIG_MAX_DOMAINS - 1].name, "d15");
	assert_int_equal(cfg.domains[CONFIG_MAX_DOMAINS - 1].line, 2 * CONFIG_MAX_DOMAINS - 1);

	snprintf(text + len, sizeof(text) - len, "[domain extra]\nvtest_socket = /tmp/extra\n");
	assert_int_equal(parse(&cfg, text, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, NAME ":33: domain 'extra': more than 16 domains");
}

static void line_longer_than_inih_buffer_is_an_error_naming_it(void **state)
{
	struct mediator_config cfg;
	char text[1024];
	char comment[LINE_MAX_CHARS + 2];
	char err[256];
	char expected[128];

	/* A comment line of exactly the longest length is fine... */
	memset(comment, 'c', sizeof(comment) - 1);
	comment[0] = ';';
	comment[LINE_MAX_CHARS] = '\0';
	snprintf(text, sizeof(text), DOMAIN_A "%s\r\n" DOMAIN_A, comment);
	assert_int_equal(parse(&cfg, text, err, sizeof(err)), -EINVAL);
	/* (the duplicate domain after it proves the line was counted once) */
	assert_string_equal(err, NAME ":4: domain 'a' is defined twice (first on line 1)");

	/* ...one more character is not, even in a comment, rather than inih
	 * silently reading the rest as a line of its own. */
	comment[LINE_MAX_CHARS] = 'c';
	comment[LINE_MAX_CHARS + 1] = '\0';
	snprintf(text, sizeof(text), DOMAIN_A "%s\n", comment);
	assert_int_equal(parse(&cfg, text, err, sizeof(err)), -EINVAL);
	snprintf(expected, sizeof(expected), NAME ":3: line longer than %d characters",
		 LINE_MAX_CHARS);
	assert_string_equal(err, expected);
}

static void failed_parse_leaves_the_config_untouched(void **state)
{
	struct mediator_config cfg, before;
	char err[256];

	assert_int_equal(parse(&cfg, design_example, err, sizeof(err)), 0);
	before = cfg;
	assert_int_equal(parse(&cfg, "[mediator]\npolicy = fifo\n[domain x]\n", err, sizeof(err)),
			 -EINVAL);
	assert_memory_equal(&cfg, &before, sizeof(cfg));
}

static void message_is_truncated_but_always_terminated(void **state)
{
	struct mediator_config cfg;
	char err[8];

	memset(err, 'x', sizeof(err));
	assert_int_equal(parse(&cfg, "[bogus]\n", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "test.co");

	/* No buffer at all is fine too. */
	assert_int_equal(parse(&cfg, "[bogus]\n", NULL, 0), -EINVAL);
	assert_int_equal(parse(&cfg, "[bogus]\n", err, 0), -EINVAL);
	assert_int_equal(parse(&cfg, design_example, NULL, 0), 0);
}

static void names_match_the_config_file(void **state)
{
	assert_string_equal(config_policy_name(MEDIATOR_POLICY_BUDGET), "budget");
	assert_string_equal(config_policy_name(MEDIATOR_POLICY_FIFO), "fifo");
	assert_string_equal(renderer_kind_name(MEDIATOR_RENDERER_EGL_SURFACELESS),
			    "egl-surfaceless");
	assert_string_equal(renderer_kind_name(MEDIATOR_RENDERER_EGL_GBM), "egl-gbm");
	assert_string_equal(renderer_kind_name(MEDIATOR_RENDERER_GLX), "glx");
	assert_string_equal(config_class_name(DOMAIN_CLASS_SAFETY), "safety");
	assert_string_equal(config_class_name(DOMAIN_CLASS_NORMAL), "normal");
	/* Out-of-range values still give a printable string. */
	assert_string_equal(config_policy_name((enum mediator_policy)99), "unknown");
	assert_string_equal(renderer_kind_name((enum mediator_renderer)99), "unknown");
	assert_string_equal(config_class_name((enum domain_class)99), "unknown");
}

/* Writes @len bytes of @text to a new temporary file; returns its path (caller frees, unlinks). */
static char *write_temp_file(const char *text, size_t len)
{
	const char *tmpdir = getenv("TMPDIR");
	char *path;
	int fd;

	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	assert_true(asprintf(&path, "%s/test-config-XXXXXX", tmpdir) > 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
	return path;
}

static void load_of_a_missing_file_gives_enoent(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(config_load(&cfg, "/nonexistent/gpu-mediator.conf", err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "/nonexistent/gpu-mediator.conf: No such file or directory");
}

static void load_of_a_directory_gives_eisdir(void **state)
{
	struct mediator_config cfg;
	char err[256];

	assert_int_equal(config_load(&cfg, "/", err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, "/: "));
}

static void load_reads_a_real_file_and_keeps_its_path(void **state)
{
	struct mediator_config cfg;
	char err[256];
	char *path = write_temp_file(design_example, strlen(design_example));

	assert_int_equal(config_load(&cfg, path, err, sizeof(err)), 0);
	assert_string_equal(cfg.path, path);
	assert_int_equal(cfg.n_domains, 1);
	assert_string_equal(cfg.domains[0].name, "cluster");
	assert_int_equal(cfg.domains[0].budget_us, 4000);
	unlink(path);
	free(path);
}

static void load_names_the_file_and_line_of_an_error(void **state)
{
	static const char text[] = "[domain a]\nvtest_socket = /tmp/a\nperiod_us = 5\n";
	struct mediator_config cfg;
	char err[512];
	char expected[512];
	char *path = write_temp_file(text, strlen(text));

	assert_int_equal(config_load(&cfg, path, err, sizeof(err)), -EINVAL);
	snprintf(expected, sizeof(expected), "%s:3: key 'period_us': 5 is out of range", path);
	assert_non_null(strstr(err, expected));
	unlink(path);
	free(path);
}

static void nul_byte_in_a_file_is_an_error(void **state)
{
	static const char text[] = "[domain a]\nvtest_socket = /tmp/a\0junk\n";
	struct mediator_config cfg;
	char err[512];
	char *path = write_temp_file(text, sizeof(text) - 1);

	assert_int_equal(config_load(&cfg, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":2: NUL byte in line"));
	unlink(path);
	free(path);
}

static void shipped_example_config_parses(void **state)
{
#ifdef EXAMPLE_CONF
	struct mediator_config cfg;
	char err[512] = "";
	const struct domain_config *d;

	if (config_load(&cfg, EXAMPLE_CONF, err, sizeof(err)) != 0) {
		print_error("%s\n", err);
		fail();
	}
	/* Every [mediator] key is commented out, so every default applies. */
	assert_string_equal(cfg.control_socket, CONFIG_DEFAULT_CONTROL_SOCKET);
	assert_string_equal(cfg.state_dir, CONFIG_DEFAULT_STATE_DIR);
	assert_int_equal(cfg.policy, CONFIG_DEFAULT_POLICY);
	assert_int_equal(cfg.max_inflight, CONFIG_DEFAULT_MAX_INFLIGHT);
	assert_int_equal(cfg.renderer, CONFIG_DEFAULT_RENDERER);
	assert_string_equal(cfg.render_node, CONFIG_DEFAULT_RENDER_NODE);

	assert_int_equal(cfg.n_domains, 2);
	d = &cfg.domains[0];
	assert_string_equal(d->name, "cluster");
	assert_int_equal(d->class, DOMAIN_CLASS_SAFETY);
	assert_true(d->budget_us < d->period_us);
	assert_true(d->vtest_socket[0] || d->vhost_user_socket[0]);
	assert_int_equal(d->budget_us, 4000);
	d = &cfg.domains[1];
	assert_string_equal(d->name, "infotainment");
	assert_int_equal(d->class, DOMAIN_CLASS_NORMAL);
	assert_true(d->vtest_socket[0] || d->vhost_user_socket[0]);
	/* Each domain's workers run as a user of their own (scripts/install-deps.sh makes them). */
	assert_int_equal(cfg.domains[0].worker_uid, getpwnam("gpu-mediator-cluster")->pw_uid);
	assert_int_equal(d->worker_uid, getpwnam("gpu-mediator-infotainment")->pw_uid);
	assert_int_equal(cfg.worker_uid, (uid_t)CONFIG_SOCKET_ID_UNSET);
#else
	skip(); /* the build did not pass -DEXAMPLE_CONF="path" */
#endif
}

static void shipped_example_config_lists_every_key_commented_out(void **state)
{
#ifdef EXAMPLE_CONF
	static const char *const keys[] = {"control_socket",
					   "state_dir",
					   "policy",
					   "max_inflight",
					   "renderer",
					   "render_node",
					   "class",
					   "period_us",
					   "budget_us",
					   "deadline_us",
					   "strict",
					   "guard_us",
					   "vtest_socket",
					   "vhost_user_socket",
					   "socket_owner",
					   "socket_group",
					   "socket_mode",
					   "max_defer_us",
					   "oversize",
					   "watchdog_multiplier",
					   "watchdog_slack_us",
					   "watchdog_floor_us",
					   "watchdog_kill_us",
					   "worker_nice",
					   "piece_us",
					   "control_group",
					   "admin_group",
					   "worker_user",
					   "worker_memory_mb",
					   "resource_memory_mb",
					   "restart_wait_s",
					   "worker_pass_environment",
					   "cache_dir",
					   "max_clients",
					   "domain_memory_mb",
					   "max_contexts_per_client"};
	char text[16384];
	char pattern[64];
	FILE *f = fopen(EXAMPLE_CONF, "r");
	size_t len;

	assert_non_null(f);
	len = fread(text + 1, 1, sizeof(text) - 2, f);
	assert_true(len < sizeof(text) - 2);
	text[0] = '\n';
	text[len + 1] = '\0';
	fclose(f);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(pattern, sizeof(pattern), "\n; %s = ", keys[i]);
		if (!strstr(text, pattern)) {
			print_error("no '; %s = DEFAULT' line in %s\n", keys[i], EXAMPLE_CONF);
			fail();
		}
	}
#else
	skip(); /* the build did not pass -DEXAMPLE_CONF="path" */
#endif
}

/* doc/design.md shows the example this file parses, verbatim, in an ini block. */
static void design_doc_holds_the_tested_example(void **state)
{
#ifdef DESIGN_DOC
	static char text[131072];
	char block[sizeof(design_example) + 16];
	FILE *f = fopen(DESIGN_DOC, "r");
	size_t n;

	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	assert_int_equal(fclose(f), 0);
	assert_true(n < sizeof(text) - 1);
	text[n] = '\0';
	snprintf(block, sizeof(block), "```ini\n%s```\n", design_example);
	if (!strstr(text, block)) {
		print_error("%s has no ini block that is the example of this test\n", DESIGN_DOC);
		fail();
	}
#else
	skip(); /* the build did not pass -DDESIGN_DOC="path" */
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(design_example_parses_with_its_values),
	    cmocka_unit_test(design_doc_holds_the_tested_example),
	    cmocka_unit_test(domain_with_only_a_socket_gets_every_default),
	    cmocka_unit_test(budget_and_deadline_default_to_the_domains_own_period),
	    cmocka_unit_test(a_safety_domain_has_a_guard),
	    cmocka_unit_test(a_safety_domain_without_period_us_learns_it),
	    cmocka_unit_test(a_normal_domain_has_a_weight),
	    cmocka_unit_test(a_domain_without_worker_user_takes_the_mediator_sections),
	    cmocka_unit_test(control_and_admin_groups_default_to_none_and_take_names_or_numbers),
	    cmocka_unit_test(socket_owner_group_and_mode_take_names_or_numbers),
	    cmocka_unit_test(worker_nice_defaults_by_class_and_takes_signed_values),
	    cmocka_unit_test(resource_memory_and_restart_wait_defaults),
	    cmocka_unit_test(domain_limits_default_and_take_set_values),
	    cmocka_unit_test(every_domain_at_the_default_max_clients_fits),
	    cmocka_unit_test(every_mediator_key_is_read),
	    cmocka_unit_test(limits_themselves_are_accepted),
	    cmocka_unit_test(comments_blank_lines_indentation_and_crlf_are_fine),
	    cmocka_unit_test(each_domain_knows_the_line_of_its_header),
	    cmocka_unit_test(bad_configs_are_rejected_naming_line_and_key),
	    cmocka_unit_test(budget_larger_than_period_names_its_line),
	    cmocka_unit_test(sixteen_domains_fit_and_a_seventeenth_does_not),
	    cmocka_unit_test(line_longer_than_inih_buffer_is_an_error_naming_it),
	    cmocka_unit_test(failed_parse_leaves_the_config_untouched),
	    cmocka_unit_test(message_is_truncated_but_always_terminated),
	    cmocka_unit_test(names_match_the_config_file),
	    cmocka_unit_test(load_of_a_missing_file_gives_enoent),
	    cmocka_unit_test(load_of_a_directory_gives_eisdir),
	    cmocka_unit_test(load_reads_a_real_file_and_keeps_its_path),
	    cmocka_unit_test(load_names_the_file_and_line_of_an_error),
	    cmocka_unit_test(nul_byte_in_a_file_is_an_error),
	    cmocka_unit_test(worker_pass_environment_names),
	    cmocka_unit_test(vms_map_libvirt_file_names_to_domains),
	    cmocka_unit_test(shipped_example_config_parses),
	    cmocka_unit_test(shipped_example_config_lists_every_key_commented_out),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
