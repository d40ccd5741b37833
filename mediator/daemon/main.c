// SPDX-License-Identifier: MIT
/*
 * mediatord: the GPU mediator daemon. main() parses the options, loads the
 * config and runs the core (mediatord.h); behaviour lives in the config.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "common/helper_path.h"
#include "build-config/build-config.h"
#include "daemon/mediatord.h"
#include "daemon/service_notify.h"
#include "common/util.h"

enum exit_code {
	EXIT_OK = 0,
	EXIT_CONFIG = 1,
	EXIT_USAGE = 2,
	EXIT_STARTUP = 3,
};

/* The help, shaped like a man page: mediatord(8) is made from it (doc/man/). */
static void usage(FILE *f)
{
	fprintf(f, "NAME\n"
		   "    mediatord - share one GPU between virtual machines by GPU-time budget and "
		   "deadline\n"
		   "\n"
		   "SYNOPSIS\n"
		   "    mediatord --config FILE [--check] [--verbose]\n"
		   "    mediatord --help | --version\n"
		   "\n"
		   "DESCRIPTION\n"
		   "    mediatord serves the GL ES command streams of several domains (virtual\n"
		   "    machines over vhost-user-gpu, containers and host processes over vtest)\n"
		   "    on one GPU. Each client gets a worker process of its own, which runs\n"
		   "    without rights, decodes the client's command groups, predicts the GPU\n"
		   "    time of each before it may start, and reports what it measured.\n"
		   "    mediatord grants the GPU to the groups so that each domain gets its\n"
		   "    budget of GPU time per period and the safety domains meet their\n"
		   "    deadlines, and answers mediatorctl(1) on its control socket.\n"
		   "\n"
		   "    It runs in the foreground and logs to standard error. SIGINT stops\n"
		   "    it and its workers. Killed otherwise, its keeper process\n"
		   "    (mediatord-keep) holds its sockets and workers for restart_wait_s\n"
		   "    seconds, and a mediatord started again with the same configuration\n"
		   "    takes them over: no client reconnects. SIGTERM does the same under a\n"
		   "    service manager that keeps its lifeline (systemd's file descriptor\n"
		   "    store, FileDescriptorStoreMax=): systemctl restart keeps every\n"
		   "    client, and when the unit stops instead the keeper ends them at\n"
		   "    once; otherwise SIGTERM stops it and its workers. SIGHUP reads the\n"
		   "    configuration again and applies the domains' periods, budgets and\n"
		   "    deadlines and the scheduler's policy and watchdog; the log names\n"
		   "    what else changed, which applies at the next restart. Under\n"
		   "    systemd (the gpu-mediator.service unit) it tells systemd when it is\n"
		   "    ready, reloading, alive (watchdog) and stopping.\n"
		   "\n"
		   "OPTIONS\n"
		   "    -c, --config FILE\n"
		   "        The configuration, an INI file (mediatord.conf(5)).\n"
		   "    --check\n"
		   "        Only validate the configuration, and exit.\n"
		   "    -v, --verbose\n"
		   "        Log debug messages too.\n"
		   "    -h, --help\n"
		   "        Print this help and exit.\n"
		   "    -V, --version\n"
		   "        Print the version and exit.\n"
		   "\n"
		   "ENVIRONMENT\n"
		   "    MEDIATOR_WORKER\n"
		   "        The mediator-worker program (default: the one next to mediatord in\n"
		   "        a build tree, else " MEDIATOR_LIBEXECDIR "/mediator-worker).\n"
		   "\n"
		   "    Workers do not get mediatord's environment: only the variables they\n"
		   "    need and those worker_pass_environment names (mediatord.conf(5)).\n"
		   "\n"
		   "FILES\n"
		   "    /etc/gpu-mediator/mediatord.conf\n"
		   "        The configuration the gpu-mediator.service unit gives --config.\n"
		   "    " CONFIG_DEFAULT_CONTROL_SOCKET "\n"
		   "        The control socket (control_socket), for mediatorctl(1); its keeper's\n"
		   "        beside it, with the suffix .keeper.\n"
		   "    " CONFIG_DEFAULT_STATE_DIR "/DOMAIN\n"
		   "        Each domain's learned cost models (state_dir).\n"
		   "    " CONFIG_DEFAULT_CACHE_DIR "/DOMAIN\n"
		   "        Each domain's shader cache of the host GL driver (cache_dir).\n"
		   "    " MEDIATOR_LIBEXECDIR "/mediator-worker\n"
		   "        The worker program, one process per client connection.\n"
		   "\n"
		   "EXIT STATUS\n"
		   "    0   stopped by a signal, or --check found the configuration valid\n"
		   "    1   the configuration is invalid (the message names file, line and key)\n"
		   "    2   invalid command line\n"
		   "    3   could not start (socket in use, no permission, worker missing)\n"
		   "\n"
		   "SEE ALSO\n"
		   "    mediatord.conf(5), mediatorctl(1), mediator-sim(1)\n");
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
	    {"config", required_argument, NULL, 'c'}, {"check", no_argument, NULL, 'k'},
	    {"verbose", no_argument, NULL, 'v'},      {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0},
	};
	static struct mediator_config cfg;
	const char *config_path = NULL;
	enum log_level level = LOG_LEVEL_INFO;
	bool check_only = false;
	char err[512], worker[4096], status[512];
	struct mediatord *md;
	int c, r;

	log_init("mediatord", level);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:vhV", options, NULL)) != -1) {
		switch (c) {
		case 'c':
			config_path = optarg;
			break;
		case 'k':
			check_only = true;
			break;
		case 'v':
			level = LOG_LEVEL_DEBUG;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("mediatord %s\n", MEDIATOR_VERSION);
			return EXIT_OK;
		case ':':
			fprintf(stderr, "mediatord: option %s needs an argument\n",
				argv[optind - 1]);
			return EXIT_USAGE;
		default:
			fprintf(stderr, "mediatord: unknown option %s (see --help)\n",
				argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "mediatord: unexpected argument %s (see --help)\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (!config_path) {
		fprintf(stderr, "mediatord: --config FILE is required (see --help)\n");
		return EXIT_USAGE;
	}
	log_init("mediatord", level);
	r = config_load(&cfg, config_path, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "mediatord: %s\n", err);
		return EXIT_CONFIG;
	}
	if (check_only) {
		printf("%s: configuration valid, %zu domain(s)\n", config_path, cfg.n_domains);
		return EXIT_OK;
	}
	r = helper_path("MEDIATOR_WORKER", "../worker/", "mediator-worker", worker, sizeof(worker));
	if (r < 0) {
		fprintf(stderr, "mediatord: worker executable %s: %s\n", worker, strerror(-r));
		return EXIT_STARTUP;
	}
	md = mediatord_create(&cfg, worker, err, sizeof(err));
	if (!md) {
		fprintf(stderr, "mediatord: %s\n", err);
		return EXIT_STARTUP;
	}
	snprintf(status, sizeof(status), "%zu domain(s), policy %s, max_inflight %u, control %s",
		 cfg.n_domains, config_policy_name(cfg.policy), cfg.max_inflight,
		 cfg.control_socket);
	log_info("ready: %s", status);
	service_notify_ready(status);
	r = mediatord_run(md);
	mediatord_destroy(md);
	if (r < 0)
		return EXIT_STARTUP;
	/* The last line of a clean stop, for whoever cannot wait for the status. */
	log_info("stopped");
	return EXIT_OK;
}
