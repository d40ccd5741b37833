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

#include "config.h"
#include "helper_path.h"
#include "mediator-build-config.h"
#include "mediatord.h"
#include "service_notify.h"
#include "util.h"

enum exit_code {
	EXIT_OK = 0,
	EXIT_CONFIG = 1,
	EXIT_USAGE = 2,
	EXIT_STARTUP = 3,
};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: mediatord --config FILE [--check] [--verbose]\n"
	    "       mediatord --help | --version\n"
	    "\n"
	    "gpu-mediator daemon: serves the GL ES command streams of several domains\n"
	    "(VMs, containers, host processes) on one GPU, one worker process per\n"
	    "client, and measures the GPU time of every command group.\n"
	    "\n"
	    "Options:\n"
	    "  -c, --config FILE  the INI configuration (see vm-configs/mediatord.example.conf)\n"
	    "      --check        validate the configuration and exit\n"
	    "  -v, --verbose      log debug messages\n"
	    "  -h, --help         show this help\n"
	    "  -V, --version      show the version\n"
	    "\n"
	    "Environment:\n"
	    "  MEDIATOR_WORKER    path of the mediator-worker executable (default: next to\n"
	    "                     mediatord, else " MEDIATOR_LIBEXECDIR "/mediator-worker)\n"
	    "\n"
	    "Runs in the foreground and logs to stderr; SIGTERM or SIGINT stop it.\n"
	    "\n"
	    "Exit status:\n"
	    "  0  stopped by a signal, or --check found the configuration valid\n"
	    "  1  the configuration is invalid (the message names file, line and key)\n"
	    "  2  invalid command line\n"
	    "  3  could not start (socket in use, no permission, worker missing)\n");
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
	char err[512], worker[4096];
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
	snprintf(err, sizeof(err), "%zu domain(s), policy %s, max_inflight %u, control %s",
		 cfg.n_domains, config_policy_name(cfg.policy), cfg.max_inflight,
		 cfg.control_socket);
	log_info("ready: %s", err);
	service_notify_ready(err);
	r = mediatord_run(md);
	mediatord_destroy(md);
	if (r < 0)
		return EXIT_STARTUP;
	/* The last line of a clean stop, for whoever cannot wait for the status. */
	log_info("stopped");
	return EXIT_OK;
}
