// SPDX-License-Identifier: MIT
/*
 * mediatorctl: the command-line client of mediatord's control socket.
 *
 * Each invocation connects, sends one request line (see control.h for the
 * protocol), waits at most MEDIATORCTL_TIMEOUT_MS for the one reply line,
 * prints it for people (or as JSON for scripts) and exits with a status
 * that tells scripts what went wrong (enum mediatorctl_exit). This file
 * holds the commands, their help and options; the request and its reply
 * are mediatorctl_call.c's, the printing for people mediatorctl_print.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "common/helper_path.h"
#include "build-config/build-config.h"
#include "tools/budget_fields.h"
#include "tools/mediatorctl_call.h"
#include "tools/mediatorctl_plan.h"
#include "tools/mediatorctl_print.h"
#include "tools/metrics_text.h"
#include "tools/trace_export.h"

/* Environment variable naming the control socket (overridden by --socket). */
#define MEDIATORCTL_SOCKET_ENV "MEDIATOR_CONTROL_SOCKET"

static const char main_help[] =
    "NAME\n"
    "    mediatorctl - control and inspect a running mediatord\n"
    "\n"
    "SYNOPSIS\n"
    "    mediatorctl [--socket PATH] status [--json]\n"
    "    mediatorctl [--socket PATH] show-budgets [--json] [--watch] [--contexts]\n"
    "    mediatorctl [--socket PATH] set-budget DOMAIN --budget-us N [--period-us N]\n"
    "                                [--deadline-us N] [--json]\n"
    "    mediatorctl [--socket PATH] model [--json]\n"
    "    mediatorctl [--socket PATH] metrics [FILE]\n"
    "    mediatorctl [--socket PATH] calibrate DOMAIN [--rounds N]\n"
    "    mediatorctl [--socket PATH] trace start FILE\n"
    "    mediatorctl [--socket PATH] trace stop\n"
    "    mediatorctl trace export --perfetto OUT TRACE\n"
    "    mediatorctl plan [--margin PCT] [--check] TRACE...\n"
    "    mediatorctl --help | --version\n"
    "    mediatorctl COMMAND --help\n"
    "\n"
    "DESCRIPTION\n"
    "    mediatorctl talks to mediatord, the daemon that shares a GPU between\n"
    "    several virtual machines (domains), over its control socket. It sends\n"
    "    one request, prints the answer and exits. It waits at most 10 seconds\n"
    "    for mediatord to answer.\n"
    "\n"
    "COMMANDS\n"
    "    status [--json]\n"
    "        Print mediatord's state as 'key: value' lines, or with --json the\n"
    "        status object as mediatord sent it.\n"
    "\n"
    "    show-budgets [--json]\n"
    "        Print the policy and one row per domain: its class, period,\n"
    "        budget, remaining budget, GPU time used, predicted and owed,\n"
    "        utilization and counters. With --json print the object mediatord\n"
    "        sent, {\"policy\": ..., \"domains\": [...]}, times in microseconds.\n"
    "        'mediatorctl show-budgets --help' explains the columns. With\n"
    "        --watch print it again every second, like pw-top, until\n"
    "        interrupted, with each domain's GPU share and groups per second\n"
    "        (into a pipe appended as plain text, or JSON lines with --json).\n"
    "        With --contexts also list each domain's live guest contexts (a\n"
    "        VM's contexts by the debug names its guest gave them).\n"
    "\n"
    "    set-budget DOMAIN --budget-us N [--period-us N] [--deadline-us N]\n"
    "        Give DOMAIN N us of GPU time per period (and a new period and\n"
    "        deadline; by default they stay) from its next period. mediatord\n"
    "        refuses values out of range, and budgets with which the safety\n"
    "        domains would no longer fit (their budgets must fit their\n"
    "        deadlines and together take at most the whole GPU).\n"
    "\n"
    "    model [--json]\n"
    "        Print, per domain and guest context, the cost model that predicts\n"
    "        its command groups: its error so far (mean absolute error, MAPE),\n"
    "        its bound's margin and how often the bound was exceeded, whether a\n"
    "        shader with an unbounded loop was seen, and the learned\n"
    "        coefficients (ns per unit of each feature).\n"
    "\n"
    "    metrics [FILE]\n"
    "        Print each domain's counters, gauges and histograms (GPU time per\n"
    "        group, wait for a grant, frame latency) in Prometheus' text\n"
    "        exposition format, for node_exporter's textfile collector or a\n"
    "        scrape. Names start with gpu_mediator_, times are in seconds, and\n"
    "        every series has the labels domain and class. With FILE, write\n"
    "        them there instead, through a file beside it renamed over it, so\n"
    "        that a reader never sees half of them (the gpu-mediator-metrics\n"
    "        timer writes node_exporter's textfile directory every 15 s).\n"
    "\n"
    "    calibrate DOMAIN [--rounds N]\n"
    "        Seed DOMAIN's cost model with the microbenchmarks of Schnitzer et\n"
    "        al., Concepts for Execution Time Prediction of 3D GPU Rendering (empty\n"
    "        flushes, 100 clears of a 1200x1000 target, up to a million culled\n"
    "        vertices, up to 100 half-target triangles; N rounds, default 40),\n"
    "        run as a client of the domain in a context of its own, then print\n"
    "        the seeded model. Later contexts of the domain start from it.\n"
    "\n"
    "    trace start FILE\n"
    "        Make mediatord write one JSON line per GPU command group to FILE.\n"
    "        mediatord opens FILE as the user who runs mediatorctl, with that\n"
    "        user's groups, not as root: FILE must be new (it is created, mode\n"
    "        0644) or a regular file that user may write; a symbolic link is\n"
    "        not followed but refused, and so is a FIFO or a device. FILE is\n"
    "        truncated when the trace starts. A relative FILE is taken relative\n"
    "        to the current directory.\n"
    "\n"
    "    trace stop\n"
    "        Stop tracing and close the trace file.\n"
    "\n"
    "    trace export --perfetto OUT TRACE\n"
    "        Turn the trace file TRACE into OUT, a GPU timeline that\n"
    "        ui.perfetto.dev (and chrome://tracing) opens: per domain a track per\n"
    "        guest context with a slice per command group (predicted, bound and\n"
    "        measured time, model, commands), the waits for grants with flows\n"
    "        to their groups, and the safety domains' frames with their release\n"
    "        and deadline, missed ones named MISSED. Needs no mediatord.\n"
    "\n"
    "    plan [--margin PCT] [--check] TRACE...\n"
    "        Propose budgets from traces of the domains at work, best each\n"
    "        recorded alone, as mediatord.conf lines: a safety domain's the 99.9th\n"
    "        percentile of its frames' GPU time plus PCT % (default 25), its\n"
    "        period learned, at least 1 % under the median interval of its\n"
    "        releases; a normal domain's what the safety budgets leave. With\n"
    "        --check, replay the traces through the proposal with mediator-sim\n"
    "        --check and say whether it is schedulable (exit status 1 if not).\n"
    "        Needs no mediatord.\n"
    "\n"
    "OPTIONS\n"
    "    -s, --socket PATH\n"
    "        The control socket of mediatord (default: $" MEDIATORCTL_SOCKET_ENV ",\n"
    "        else " MEDIATOR_DEFAULT_CONTROL_SOCKET ").\n"
    "    -h, --help\n"
    "        Print this help and exit.\n"
    "    -V, --version\n"
    "        Print the version and exit.\n"
    "\n"
    "ENVIRONMENT\n"
    "    " MEDIATORCTL_SOCKET_ENV "\n"
    "        The control socket to use when --socket is not given.\n"
    "\n"
    "EXIT STATUS\n"
    "    0   success\n"
    "    1   mediatord answered with an error (the message is printed)\n"
    "    2   usage error: unknown command or option, missing argument\n"
    "    3   mediatord cannot be reached: no socket, connection refused or\n"
    "        closed, no answer within 10 seconds, or a malformed answer\n"
    "\n"
    "EXAMPLES\n"
    "    mediatorctl show-budgets\n"
    "    mediatorctl --socket /tmp/test/control.sock show-budgets --json\n"
    "    mediatorctl trace start groups.jsonl; sleep 10; mediatorctl trace stop\n";

static const char status_help[] =
    "Usage: mediatorctl [--socket PATH] status [--json]\n"
    "\n"
    "Print mediatord's state, one 'key: value' line per member of its status\n"
    "object (nested members as 'outer.inner').\n"
    "\n"
    "    --json      print the status object exactly as mediatord sent it\n"
    "    -h, --help  print this help\n";

static const char model_help[] =
    "Usage: mediatorctl [--socket PATH] model [--json]\n"
    "\n"
    "Print per domain each guest context's cost model: groups learned from,\n"
    "mean absolute error, MAPE (groups of 100 us or more), the bound's current\n"
    "margin and the share of groups that exceeded their bound, whether a shader\n"
    "with an unbounded loop was seen (its estimate is conservative), and the\n"
    "learned coefficients in ns per unit of each feature. A context whose\n"
    "client has gone is shown with its last report.\n"
    "\n"
    "    --json      print the object mediatord sent\n"
    "    -h, --help  print this help\n";

/* show-budgets --help: the head, the columns (budget_fields.h), the rest. */
static const char show_budgets_help_head[] =
    "Usage: mediatorctl [--socket PATH] show-budgets [--json] [--watch] [--contexts]\n"
    "\n"
    "Print the scheduling policy and one row per domain. Times carry their\n"
    "unit (us, ms, s). Columns:\n";
static const char show_budgets_help_tail[] =
    "\n"
    "The periods are the scheduler's: set-budget changes PERIOD and BUDGET\n"
    "from the domain's next period boundary, and every per-period column\n"
    "follows from there. Lines under the table name each domain whose\n"
    "workers could not cut a long group further: a draw into scissor\n"
    "tiles, or the group into enough pieces (\"uncut: DOMAIN: N groups ...;\n"
    "last: client C context X (NAME): WHY\"; with oversize = refuse-untiled,\n"
    "the default, such a group that fits no gap the safety domains leave is\n"
    "refused), and the invariants of mediatord's state\n"
    "found broken, if any (its log says where).\n"
    "\n"
    "    --json      print {\"policy\", \"domains\": [...], \"invariant_violations\"}\n"
    "                exactly as mediatord sent it, times in microseconds\n"
    "    --watch     print the answer again every second until interrupted,\n"
    "                with two more columns over the last second: GPU/S, the\n"
    "                domain's GPU time over wall time, and GRP/S, its groups\n"
    "                per second. Columns never narrow between refreshes. On a\n"
    "                terminal the screen is redrawn; into a pipe or file each\n"
    "                refresh is appended (a time line, the table, a blank\n"
    "                line); with --json one object a line, with \"time\" and\n"
    "                each domain's gpu_share_1s and groups_1s (from the second\n"
    "                refresh on)\n"
    "    --contexts  also list the live guest contexts of each domain: client,\n"
    "                transport (vtest or vhost-user), context id, groups and\n"
    "                the debug name the guest gave the context\n"
    "    -h, --help  print this help\n";

static const char set_budget_help[] =
    "usage: mediatorctl set-budget DOMAIN --budget-us N [--period-us N] [--deadline-us N]\n"
    "                              [--json]\n"
    "\n"
    "Give DOMAIN N microseconds of GPU time per period from its next period;\n"
    "--period-us and --deadline-us change those too (by default they stay).\n"
    "Budget and deadline are at most the period; safety budgets must fit their\n"
    "deadlines and together take at most the whole GPU. Exit status: 0 done,\n"
    "1 refused by mediatord (the reason is printed), 2 usage, 3 unreachable.\n";

static const char calibrate_help[] =
    "usage: mediatorctl calibrate DOMAIN [--rounds N]\n"
    "\n"
    "Runs mediator-calibrate (the calibration microbenchmarks of Schnitzer et\n"
    "al., Concepts for Execution Time Prediction of 3D GPU Rendering, as an\n"
    "OpenGL ES program on Mesa's virgl driver) through DOMAIN's vtest socket\n"
    "with mediator-exec, so that it gets a virgl context of its own in that\n"
    "domain. The worker serving it derives per-group, per-pixel-cleared,\n"
    "per-vertex and per-fragment costs from the measured groups, seeds the\n"
    "domain's model with them and saves it in state_dir; contexts that start\n"
    "later load it. Prints the microbenchmarks' timings and the seeded model.\n"
    "Needs the rights mediator-exec needs (a private mount namespace).\n"
    "\n"
    "  --rounds N   groups of each microbenchmark (1..100000, default 40)\n"
    "\n"
    "Environment: MEDIATOR_EXEC and MEDIATOR_CALIBRATE name the programs\n"
    "(default: next to mediatorctl, else in " MEDIATOR_LIBEXECDIR ").\n"
    "Exit status: 0 calibrated, 1 the run or the calibration failed, 2 usage,\n"
    "3 mediatord cannot be reached.\n";

static const char trace_help[] =
    "Usage: mediatorctl [--socket PATH] trace start FILE\n"
    "       mediatorctl [--socket PATH] trace stop\n"
    "       mediatorctl trace export --perfetto OUT TRACE\n"
    "\n"
    "start FILE  make mediatord write one JSON line per GPU command group to\n"
    "            FILE, opened as you: new or a regular file you may write, not\n"
    "            a symbolic link (relative paths are taken from the current\n"
    "            directory)\n"
    "stop        stop tracing and close the file\n"
    "export --perfetto OUT TRACE\n"
    "            write trace file TRACE as a timeline for ui.perfetto.dev to OUT\n"
    "\n"
    "    -h, --help  print this help\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("mediatorctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'mediatorctl --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

static struct json_object *new_request(const char *cmd)
{
	struct json_object *req = json_object_new_object();

	if (req)
		json_object_object_add(req, "cmd", json_object_new_string(cmd));
	return req;
}

/* Options of a subcommand: --json and --help, then up to @max_args positional arguments. */
struct sub_args {
	bool json;
	bool help;
	int n_args;
	char **args;
};

static int parse_sub_args(const char *cmd, int argc, char **argv, bool json_allowed, int max_args,
			  struct sub_args *out)
{
	bool options = true;

	memset(out, 0, sizeof(*out));
	out->args = calloc((size_t)argc + 1, sizeof(char *));
	if (!out->args) {
		mediatorctl_error("out of memory");
		return EXIT_REFUSED;
	}
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (options && !strcmp(a, "--")) {
			options = false;
		} else if (options && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
			out->help = true;
		} else if (options && json_allowed && !strcmp(a, "--json")) {
			out->json = true;
		} else if (options && a[0] == '-' && a[1]) {
			fprintf(stderr, "mediatorctl: %s: unknown option '%s'\n", cmd, a);
			fputs("Try 'mediatorctl --help' for more information.\n", stderr);
			return EXIT_USAGE;
		} else {
			out->args[out->n_args++] = argv[i];
		}
	}
	if (!out->help && out->n_args > max_args) {
		fprintf(stderr, "mediatorctl: %s: unexpected argument '%s'\n", cmd,
			out->args[max_args]);
		fputs("Try 'mediatorctl --help' for more information.\n", stderr);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/*
 * Takes "@opt N" out of @argv (N a whole number 1..@max) into *@out; leaves
 * *@out as it is when @opt is absent. Returns EXIT_OK or EXIT_USAGE.
 */
static int take_number(const char *cmd, int *argc, char **argv, const char *opt, unsigned long max,
		       unsigned long *out)
{
	for (int i = 0; i < *argc; i++) {
		unsigned long v;
		char *end;

		if (strcmp(argv[i], opt))
			continue;
		errno = 0;
		if (i + 1 >= *argc || argv[i + 1][0] == '-' ||
		    ((v = strtoul(argv[i + 1], &end, 10)), errno) || *end || !argv[i + 1][0] ||
		    v < 1 || v > max)
			return usage_error("%s: %s needs a whole number 1..%lu", cmd, opt, max);
		*out = v;
		memmove(&argv[i], &argv[i + 2], sizeof(char *) * (size_t)(*argc - i - 2));
		*argc -= 2;
		i--;
	}
	return EXIT_OK;
}

static int cmd_status(const char *socket_path, int argc, char **argv)
{
	struct json_object *result;
	struct sub_args a;
	int r = parse_sub_args("status", argc, argv, true, 0, &a);

	if (r == EXIT_OK && a.help)
		fputs(status_help, stdout);
	if (r != EXIT_OK || a.help)
		goto out;
	r = mediatorctl_call(socket_path, new_request("status"), &result);
	if (r != EXIT_OK)
		goto out;
	if (a.json)
		mediatorctl_print_json(result);
	else if (json_object_object_length(result) == 0)
		puts("(mediatord reported no status)");
	else
		mediatorctl_print_flat("", result);
	json_object_put(result);
out:
	free(a.args);
	return r;
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	interrupted = 1;
}

/* Most domains a --watch remembers between refreshes (mediatord serves at most 16). */
#define WATCH_MAX_DOMAINS 64

/* What --watch remembers of the last answer: each domain's totals then. */
struct watch_prev {
	double t_s; /* CLOCK_MONOTONIC, seconds; 0: no answer yet */
	size_t n;
	char name[WATCH_MAX_DOMAINS][64];
	double used_us[WATCH_MAX_DOMAINS], groups[WATCH_MAX_DOMAINS];
};

static double monotonic_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Adds to each domain of @result its share of the GPU (gpu_share_1s: GPU
 * time over wall time) and its groups per second (groups_1s) since @prev,
 * as pw-top and nvidia-smi give rates; then remembers @result's totals.
 * A domain new since then gets none.
 */
static void watch_rates(struct json_object *result, struct watch_prev *prev)
{
	struct json_object *domains = mediatorctl_json_get(result, "domains");
	size_t n = domains && json_object_is_type(domains, json_type_array)
		       ? json_object_array_length(domains)
		       : 0;
	double now = monotonic_s(), dt = now - prev->t_s;
	struct watch_prev next = {.t_s = now};

	for (size_t i = 0; i < n && next.n < WATCH_MAX_DOMAINS; i++) {
		struct json_object *d = json_object_array_get_idx(domains, i);
		const char *name = json_object_get_string(mediatorctl_json_get(d, "name"));
		double used = json_object_get_double(mediatorctl_json_get(d, "used_us"));
		double groups = json_object_get_double(mediatorctl_json_get(d, "groups"));

		if (!name || !json_object_is_type(d, json_type_object))
			continue;
		for (size_t k = 0; prev->t_s > 0 && dt > 0 && k < prev->n; k++) {
			if (strcmp(prev->name[k], name) != 0 || used < prev->used_us[k] ||
			    groups < prev->groups[k])
				continue;
			json_object_object_add(
			    d, "gpu_share_1s",
			    json_object_new_double((used - prev->used_us[k]) / (dt * 1e6)));
			json_object_object_add(
			    d, "groups_1s",
			    json_object_new_double((groups - prev->groups[k]) / dt));
		}
		snprintf(next.name[next.n], sizeof(next.name[0]), "%s", name);
		next.used_us[next.n] = used;
		next.groups[next.n] = groups;
		next.n++;
	}
	*prev = next;
}

/*
 * show-budgets --watch [--json]: the answer again every second until
 * SIGINT/SIGTERM, as pw-top or nvidia-smi -l do. On a terminal the screen
 * is redrawn; into a pipe or file each refresh is appended as plain text
 * (a time line, the table, a blank line), or with --json one JSON object a
 * line with its "time". Columns never narrow between refreshes; GPU/S and
 * GRP/S are the last refresh's rates.
 */
static int watch_budgets(const char *socket_path, bool json)
{
	struct sigaction sa = {.sa_handler = on_interrupt};
	struct budget_widths widths = {0};
	struct watch_prev prev = {0};
	bool tty = isatty(STDOUT_FILENO);
	int r = EXIT_OK;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!interrupted) {
		struct json_object *result;
		time_t now = time(NULL);
		char when[32];

		r = mediatorctl_call(socket_path, new_request("show-budgets"), &result);
		if (r != EXIT_OK)
			return r;
		watch_rates(result, &prev);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
		if (json) {
			json_object_object_add(result, "time", json_object_new_string(when));
			puts(json_object_to_json_string_ext(result, JSON_C_TO_STRING_PLAIN));
		} else {
			if (tty)
				fputs("\033[H\033[J", stdout);
			printf("%s  (every 1 s%s)\n", when, tty ? "; Ctrl-C ends" : "");
			r = mediatorctl_print_budgets(result, &widths);
			if (!tty)
				putchar('\n');
		}
		json_object_put(result);
		fflush(stdout);
		if (r != EXIT_OK)
			return r;
		sleep(1);
	}
	return EXIT_OK;
}

static int cmd_show_budgets(const char *socket_path, int argc, char **argv)
{
	struct json_object *result;
	struct sub_args a;
	bool watch = false, contexts = false;
	int r;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--watch") || !strcmp(argv[i], "--contexts")) {
			if (argv[i][2] == 'w')
				watch = true;
			else
				contexts = true;
			memmove(&argv[i], &argv[i + 1], sizeof(char *) * (size_t)(argc - i - 1));
			argc--;
			i--;
		}
	}
	r = parse_sub_args("show-budgets", argc, argv, true, 0, &a);
	if (r == EXIT_OK && a.help) {
		fputs(show_budgets_help_head, stdout);
		budget_fields_print_help(stdout, 1);
		fputs("\nIn --json and `mediatorctl metrics` (each its series' HELP) too:\n",
		      stdout);
		budget_fields_print_help(stdout, 0);
		fputs(show_budgets_help_tail, stdout);
	}
	if (r != EXIT_OK || a.help)
		goto out;
	if (watch) {
		r = watch_budgets(socket_path, a.json);
		goto out;
	}
	r = mediatorctl_call(socket_path, new_request("show-budgets"), &result);
	if (r != EXIT_OK)
		goto out;
	if (a.json) {
		mediatorctl_print_json(result);
	} else {
		r = mediatorctl_print_budgets(result, NULL);
		if (r == EXIT_OK && contexts)
			mediatorctl_print_contexts(result);
	}
	json_object_put(result);
out:
	free(a.args);
	return r;
}

static int cmd_set_budget(const char *socket_path, int argc, char **argv)
{
	unsigned long budget = 0, period = 0, deadline = 0;
	struct json_object *req, *result;
	struct sub_args a = {0};
	int r;

	r = take_number("set-budget", &argc, argv, "--budget-us", CONFIG_MAX_PERIOD_US, &budget);
	if (r == EXIT_OK)
		r = take_number("set-budget", &argc, argv, "--period-us", CONFIG_MAX_PERIOD_US,
				&period);
	if (r == EXIT_OK)
		r = take_number("set-budget", &argc, argv, "--deadline-us", CONFIG_MAX_PERIOD_US,
				&deadline);
	if (r != EXIT_OK)
		return r;
	r = parse_sub_args("set-budget", argc, argv, true, 1, &a);
	if (r == EXIT_OK && a.help)
		fputs(set_budget_help, stdout);
	if (r != EXIT_OK || a.help)
		goto out;
	if (a.n_args != 1 || !budget) {
		r = usage_error("set-budget: needs DOMAIN and --budget-us N");
		goto out;
	}
	req = new_request("set-budget");
	json_object_object_add(req, "domain", json_object_new_string(a.args[0]));
	json_object_object_add(req, "budget_us", json_object_new_int64((int64_t)budget));
	if (period)
		json_object_object_add(req, "period_us", json_object_new_int64((int64_t)period));
	if (deadline)
		json_object_object_add(req, "deadline_us",
				       json_object_new_int64((int64_t)deadline));
	r = mediatorctl_call(socket_path, req, &result);
	if (r != EXIT_OK)
		goto out;
	if (a.json) {
		mediatorctl_print_json(result);
	} else {
		fputs("domain ", stdout);
		mediatorctl_print_sanitized(a.args[0]);
		printf(": budget %" PRId64 " us per %" PRId64 " us, deadline %" PRId64
		       " us, from its next period\n",
		       json_object_get_int64(mediatorctl_json_get(result, "budget_us")),
		       json_object_get_int64(mediatorctl_json_get(result, "period_us")),
		       json_object_get_int64(mediatorctl_json_get(result, "deadline_us")));
	}
	json_object_put(result);
out:
	free(a.args);
	return r;
}

static int cmd_model(const char *socket_path, int argc, char **argv)
{
	struct json_object *result;
	struct sub_args a;
	int r = parse_sub_args("model", argc, argv, true, 0, &a);

	if (r == EXIT_OK && a.help)
		fputs(model_help, stdout);
	if (r != EXIT_OK || a.help)
		goto out;
	r = mediatorctl_call(socket_path, new_request("model"), &result);
	if (r != EXIT_OK)
		goto out;
	if (a.json)
		mediatorctl_print_json(result);
	else
		r = mediatorctl_print_models(result);
	json_object_put(result);
out:
	free(a.args);
	return r;
}

/* ---- calibrate ---------------------------------------------------------- */

/* Longest a calibration run may take before it is stopped. */
#define CALIBRATE_TIMEOUT_S 600

/* The vtest socket of domain @name from a show-budgets answer, or NULL. */
static const char *domain_socket(struct json_object *status, const char *name)
{
	struct json_object *domains;

	if (!json_object_object_get_ex(status, "domains", &domains) ||
	    !json_object_is_type(domains, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(domains); i++) {
		struct json_object *d = json_object_array_get_idx(domains, i);
		const char *s = json_object_get_string(mediatorctl_json_get(d, "vtest_socket"));

		if (!strcmp(json_object_get_string(mediatorctl_json_get(d, "name")) ?: "", name))
			return s ? s : "";
	}
	return NULL;
}

/* Runs mediator-exec --socket @sock -- @calib --rounds @rounds; returns its exit status or -1. */
static int run_calibration(const char *exec_path, const char *calib_path, const char *sock,
			   const char *rounds)
{
	char *args[] = {(char *)exec_path,  "--socket", (char *)sock,	"--",
			(char *)calib_path, "--rounds", (char *)rounds, NULL};
	pid_t pid, w;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* Mesa's virgl driver over vtest, rendering without a display. */
		setenv("GALLIUM_DRIVER", "virpipe", 1);
		setenv("EGL_PLATFORM", "surfaceless", 0);
		alarm(CALIBRATE_TIMEOUT_S);
		execv(exec_path, args);
		fprintf(stderr, "mediatorctl: cannot run %s: %s\n", exec_path, strerror(errno));
		_exit(127);
	}
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (w < 0)
		return -1;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "mediatorctl: calibration run killed by signal %d\n",
			WTERMSIG(status));
		return -1;
	}
	return WEXITSTATUS(status);
}

/*
 * The entry of a calibration context of @domain in a model answer whose
 * client id is above @after and which is gone, or NULL.
 */
static struct json_object *calibrated_context(struct json_object *models, const char *domain,
					      int64_t after)
{
	struct json_object *domains, *ctxs, *found = NULL;

	if (!json_object_object_get_ex(models, "domains", &domains) ||
	    !json_object_is_type(domains, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(domains); i++) {
		struct json_object *d = json_object_array_get_idx(domains, i);

		if (strcmp(json_object_get_string(mediatorctl_json_get(d, "name")) ?: "", domain) ||
		    !json_object_object_get_ex(d, "contexts", &ctxs))
			continue;
		for (size_t k = 0; k < json_object_array_length(ctxs); k++) {
			struct json_object *c = json_object_array_get_idx(ctxs, k);

			if (!strcmp(json_object_get_string(mediatorctl_json_get(c, "name")) ?: "",
				    "mediator-calibrate") &&
			    !json_object_get_boolean(mediatorctl_json_get(c, "live")) &&
			    json_object_get_int64(mediatorctl_json_get(c, "client")) > after)
				found = c;
		}
	}
	return found;
}

static int cmd_calibrate(const char *socket_path, int argc, char **argv)
{
	char exec_path[PATH_MAX], calib_path[PATH_MAX];
	const char *rounds = "40", *sock;
	struct json_object *status = NULL, *models = NULL, *c = NULL;
	struct sub_args a;
	int64_t earlier;
	char *end;
	int r, run;

	/* --rounds N is taken out before the common parsing. */
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--rounds"))
			continue;
		if (i + 1 >= argc || strtol(argv[i + 1], &end, 10) < 1 || *end ||
		    strtol(argv[i + 1], NULL, 10) > 100000)
			return usage_error("calibrate: --rounds needs a number 1..100000");
		rounds = argv[i + 1];
		memmove(&argv[i], &argv[i + 2], sizeof(char *) * (size_t)(argc - i - 2));
		argc -= 2;
		i--;
	}
	r = parse_sub_args("calibrate", argc, argv, false, 1, &a);
	if (r == EXIT_OK && a.help)
		fputs(calibrate_help, stdout);
	if (r != EXIT_OK || a.help)
		goto out;
	if (a.n_args != 1) {
		r = usage_error("calibrate: missing DOMAIN");
		goto out;
	}
	if (helper_path("MEDIATOR_EXEC", "", "mediator-exec", exec_path, sizeof(exec_path)) < 0 ||
	    helper_path("MEDIATOR_CALIBRATE", "calibrate/", "mediator-calibrate", calib_path,
			sizeof(calib_path)) < 0) {
		mediatorctl_error("calibrate: cannot find %s",
				  exec_path[0] ? calib_path : exec_path);
		r = EXIT_REFUSED;
		goto out;
	}
	r = mediatorctl_call(socket_path, new_request("show-budgets"), &status);
	if (r != EXIT_OK)
		goto out;
	sock = domain_socket(status, a.args[0]);
	if (!sock || !sock[0]) {
		mediatorctl_error("calibrate: %s",
				  sock ? "domain has no vtest socket" : "no such domain");
		r = EXIT_REFUSED;
		goto out;
	}
	/* A calibration context from an earlier run may still be listed. */
	r = mediatorctl_call(socket_path, new_request("model"), &models);
	if (r != EXIT_OK)
		goto out;
	c = calibrated_context(models, a.args[0], -1);
	earlier = c ? json_object_get_int64(mediatorctl_json_get(c, "client")) : -1;
	c = NULL;
	printf("calibrating domain %s through %s (%s rounds)\n", a.args[0], sock, rounds);
	run = run_calibration(exec_path, calib_path, sock, rounds);
	if (run != 0) {
		mediatorctl_error("calibrate: the calibration run failed (exit status %d)", run);
		r = EXIT_REFUSED;
		goto out;
	}
	/* The worker reports the seeded model as its client leaves. */
	for (int64_t deadline = mediatorctl_now_ms() + MEDIATORCTL_TIMEOUT_MS;
	     !c && mediatorctl_now_ms() < deadline;) {
		if (models)
			json_object_put(models);
		models = NULL;
		r = mediatorctl_call(socket_path, new_request("model"), &models);
		if (r != EXIT_OK)
			goto out;
		c = calibrated_context(models, a.args[0], earlier);
		if (!c)
			usleep(100000);
	}
	if (!c) {
		mediatorctl_error("calibrate: the calibration context's model did not arrive");
		r = EXIT_REFUSED;
		goto out;
	}
	printf("seeded model of domain %s (its error figures are from the run, before the seed):\n",
	       a.args[0]);
	mediatorctl_print_context_model(c);
	r = EXIT_OK;
out:
	if (status)
		json_object_put(status);
	if (models)
		json_object_put(models);
	free(a.args);
	return r;
}

/* Returns @file made absolute against the current directory, in a new string (caller frees). */
static char *absolute_path(const char *file)
{
	char *cwd, *path;

	if (file[0] == '/')
		return strdup(file);
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return NULL;
	if (asprintf(&path, "%s%s%s", cwd, cwd[strlen(cwd) - 1] == '/' ? "" : "/", file) < 0)
		path = NULL;
	free(cwd);
	return path;
}

/*
 * Writes the metrics in @budgets to @path through PATH.PID.tmp beside it,
 * renamed over it: a reader (node_exporter's textfile collector, which
 * reads *.prom only) never sees half a file. Returns an exit status.
 */
static int write_metrics_file(const char *path, struct json_object *budgets, const char *version)
{
	char *tmp = NULL;
	FILE *f = NULL;
	int fd = -1, r = EXIT_OK;

	if (asprintf(&tmp, "%s.%d.tmp", path, (int)getpid()) < 0) {
		mediatorctl_error("out of memory");
		return EXIT_REFUSED;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		mediatorctl_error("metrics: %s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(tmp);
		return EXIT_REFUSED;
	}
	if (metrics_write_prometheus(f, budgets, version) < 0) {
		mediatorctl_error("metrics: mediatord's answer has no domains");
		r = EXIT_UNREACHABLE;
	}
	if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
		mediatorctl_error("metrics: %s: %s", tmp, strerror(errno));
		r = EXIT_REFUSED;
	}
	if (fclose(f) != 0 && r == EXIT_OK) {
		mediatorctl_error("metrics: %s: %s", tmp, strerror(errno));
		r = EXIT_REFUSED;
	}
	if (r == EXIT_OK && rename(tmp, path) < 0) {
		mediatorctl_error("metrics: %s: %s", path, strerror(errno));
		r = EXIT_REFUSED;
	}
	if (r != EXIT_OK)
		unlink(tmp);
	free(tmp);
	return r;
}

static int cmd_metrics(const char *socket_path, int argc, char **argv)
{
	struct json_object *result, *status, *version;
	const char *version_text = NULL;
	struct sub_args a;
	int r = parse_sub_args("metrics", argc, argv, false, 1, &a);

	if (r == EXIT_OK && a.help)
		fputs("Usage: mediatorctl [--socket PATH] metrics [FILE]\n"
		      "\n"
		      "Prints mediatord's per-domain metrics in Prometheus' text format, or\n"
		      "writes them to FILE through a file beside it renamed over it.\n",
		      stdout);
	if (r != EXIT_OK || a.help)
		goto out;
	r = mediatorctl_call(socket_path, new_request("status"), &status);
	if (r != EXIT_OK)
		goto out;
	r = mediatorctl_call(socket_path, new_request("show-budgets"), &result);
	if (r != EXIT_OK) {
		json_object_put(status);
		goto out;
	}
	if (json_object_object_get_ex(status, "version", &version) &&
	    json_object_is_type(version, json_type_string))
		version_text = json_object_get_string(version);
	if (a.n_args == 1) {
		r = write_metrics_file(a.args[0], result, version_text);
	} else if (metrics_write_prometheus(stdout, result, version_text) < 0) {
		mediatorctl_error("metrics: mediatord's answer has no domains");
		r = EXIT_UNREACHABLE;
	}
	json_object_put(result);
	json_object_put(status);
out:
	free(a.args);
	return r;
}

/* trace export --perfetto OUT TRACE: @argv after "export". */
static int cmd_trace_export(int argc, char **argv)
{
	struct trace_export_counts counts;
	const char *out_path = NULL, *in_path = NULL;
	char err[256];
	FILE *in, *out;
	int r;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(trace_help, stdout);
			return EXIT_OK;
		} else if (!strcmp(argv[i], "--perfetto") && i + 1 < argc) {
			out_path = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return usage_error("trace export: unknown option '%s'", argv[i]);
		} else if (!in_path) {
			in_path = argv[i];
		} else {
			return usage_error("trace export: unexpected argument '%s'", argv[i]);
		}
	}
	if (!out_path || !in_path)
		return usage_error("trace export: needs --perfetto OUT and a TRACE file");
	in = strcmp(in_path, "-") ? fopen(in_path, "r") : stdin;
	if (!in) {
		mediatorctl_error("trace export: %s: %s", in_path, strerror(errno));
		return EXIT_USAGE;
	}
	out = strcmp(out_path, "-") ? fopen(out_path, "w") : stdout;
	if (!out) {
		mediatorctl_error("trace export: %s: %s", out_path, strerror(errno));
		if (in != stdin)
			fclose(in);
		return EXIT_USAGE;
	}
	r = trace_export_perfetto(in, out, &counts, err, sizeof(err));
	if (in != stdin)
		fclose(in);
	if (out != stdout && fclose(out) != 0 && r == 0) {
		r = -errno;
		snprintf(err, sizeof(err), "writing the timeline: %s", strerror(errno));
	}
	if (r < 0) {
		mediatorctl_error("trace export: %s", err);
		return EXIT_REFUSED;
	}
	fprintf(stderr,
		"mediatorctl: %s: %zu groups (%zu waited for a grant), %zu frames (%zu missed), "
		"%zu lines skipped\n",
		out_path, counts.groups, counts.waits, counts.frames, counts.missed,
		counts.skipped);
	return EXIT_OK;
}

static int cmd_trace(const char *socket_path, int argc, char **argv)
{
	struct json_object *req, *result, *jpath;
	struct sub_args a;
	char *path;
	int r;

	if (argc > 0 && !strcmp(argv[0], "export"))
		return cmd_trace_export(argc - 1, argv + 1);
	r = parse_sub_args("trace", argc, argv, false, 2, &a);

	if (r == EXIT_OK && a.help)
		fputs(trace_help, stdout);
	if (r != EXIT_OK || a.help)
		goto out;
	if (a.n_args == 0) {
		r = usage_error("trace: missing 'start FILE' or 'stop'");
		goto out;
	}
	if (!strcmp(a.args[0], "stop")) {
		if (a.n_args > 1) {
			r = usage_error("trace stop: unexpected argument '%s'", a.args[1]);
			goto out;
		}
		r = mediatorctl_call(socket_path, new_request("trace-stop"), &result);
		if (r == EXIT_OK) {
			puts("trace stopped");
			json_object_put(result);
		}
		goto out;
	}
	if (strcmp(a.args[0], "start") != 0) {
		r = usage_error("trace: unknown action '%s' (expected start, stop or export)",
				a.args[0]);
		goto out;
	}
	if (a.n_args < 2 || !a.args[1][0]) {
		r = usage_error("trace start: missing FILE");
		goto out;
	}
	path = absolute_path(a.args[1]);
	if (!path) {
		mediatorctl_error("trace start: cannot make '%s' absolute: %s", a.args[1],
				  strerror(errno));
		r = EXIT_REFUSED;
		goto out;
	}
	req = new_request("trace-start");
	if (req)
		json_object_object_add(req, "path", json_object_new_string(path));
	r = mediatorctl_call(socket_path, req, &result);
	if (r == EXIT_OK) {
		fputs("tracing to ", stdout);
		if (json_object_object_get_ex(result, "path", &jpath) &&
		    json_object_is_type(jpath, json_type_string))
			mediatorctl_print_sanitized(json_object_get_string(jpath));
		else
			mediatorctl_print_sanitized(path);
		putchar('\n');
		json_object_put(result);
	}
	free(path);
out:
	free(a.args);
	return r;
}

static int finish(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		mediatorctl_error("cannot write to standard output: %s", strerror(errno));
		if (status == EXIT_OK)
			status = EXIT_REFUSED;
	}
	return status;
}

int main(int argc, char **argv)
{
	static const struct option global_options[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {"socket", required_argument, NULL, 's'},
	    {NULL, 0, NULL, 0},
	};
	struct sockaddr_un addr;
	const char *socket_path = getenv(MEDIATORCTL_SOCKET_ENV);
	const char *cmd;
	int i, c;

	if (!socket_path || !socket_path[0])
		socket_path = MEDIATOR_DEFAULT_CONTROL_SOCKET;

	/* getopt_long as mediatord's: long options may be abbreviated
	 * (--sock); the first word that is not an option is the command. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:hVs:", global_options, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(main_help, stdout);
			return finish(EXIT_OK);
		case 'V':
			puts("mediatorctl " MEDIATOR_VERSION);
			return finish(EXIT_OK);
		case 's':
			socket_path = optarg;
			break;
		case ':':
			return usage_error("option '%s' needs a PATH", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	i = optind;
	if (i >= argc)
		return usage_error("missing COMMAND (status, show-budgets, set-budget, model, "
				   "calibrate, metrics, trace or plan)");
	if (!socket_path[0] || strlen(socket_path) >= sizeof(addr.sun_path))
		return usage_error("socket path '%s' is empty or too long", socket_path);

	cmd = argv[i++];
	if (!strcmp(cmd, "status"))
		return finish(cmd_status(socket_path, argc - i, argv + i));
	if (!strcmp(cmd, "show-budgets"))
		return finish(cmd_show_budgets(socket_path, argc - i, argv + i));
	if (!strcmp(cmd, "model"))
		return finish(cmd_model(socket_path, argc - i, argv + i));
	if (!strcmp(cmd, "trace"))
		return finish(cmd_trace(socket_path, argc - i, argv + i));
	if (!strcmp(cmd, "calibrate"))
		return finish(cmd_calibrate(socket_path, argc - i, argv + i));
	if (!strcmp(cmd, "metrics"))
		return finish(cmd_metrics(socket_path, argc - i, argv + i));
	if (!strcmp(cmd, "plan"))
		return finish(mediatorctl_plan(argc - i, argv + i));
	if (!strcmp(cmd, "set-budget"))
		return finish(cmd_set_budget(socket_path, argc - i, argv + i));
	if (!strcmp(cmd, "help")) {
		fputs(main_help, stdout);
		return finish(EXIT_OK);
	}
	return usage_error("unknown command '%s'", cmd);
}
