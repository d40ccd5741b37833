// SPDX-License-Identifier: MIT
/*
 * mediatorctl plan (mediatorctl_plan.h): reads the traces into a plan
 * (plan.h), prints the proposed configuration, and with --check runs
 * mediator-sim --check on it and the same traces.
 */
#include <errno.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/helper_path.h"
#include "tools/mediatorctl_call.h"
#include "tools/mediatorctl_plan.h"
#include "tools/plan.h"

extern char **environ;

#define DEFAULT_MARGIN_PCT 25
#define MAX_MARGIN_PCT	   400
#define DEFAULT_SOCKET_DIR "/run/gpu-mediator"

const char mediatorctl_plan_help[] =
    "Usage: mediatorctl plan [--margin PCT] [--check] TRACE...\n"
    "\n"
    "Proposes budgets from traces (mediatorctl trace start) of the domains at\n"
    "work, best each recorded alone, and prints them as mediatord.conf lines:\n"
    "a safety domain (one with frames) gets the 99.9th percentile of its\n"
    "frames' GPU time plus PCT % (default 25), its period learned, at least 1 %\n"
    "under the median interval of its releases (min_period_us); a normal domain\n"
    "what the safety budgets leave of a 60 Hz period, weight 1. The sockets are\n"
    "placeholders under " DEFAULT_SOCKET_DIR ". Needs no mediatord.\n"
    "\n"
    "  --margin PCT  added to the 99.9th percentile, 0..400 (default 25)\n"
    "  --check       replay the traces through the proposal with mediator-sim\n"
    "                --check (MEDIATOR_SIM names it; default: next to mediatorctl)\n"
    "                and say whether it is schedulable\n"
    "  -h, --help    print this help\n"
    "\n"
    "Exit status: 0 proposed (and with --check schedulable), 1 no proposal or\n"
    "not schedulable, 2 usage.\n";

/* Reads every trace into @p; EXIT_OK, or an exit status after a message. */
static int read_traces(struct plan *p, char **paths, int n)
{
	char err[512];

	for (int i = 0; i < n; i++) {
		FILE *f = fopen(paths[i], "r");
		size_t skipped = 0;
		int r;

		if (!f) {
			mediatorctl_error("plan: %s: %s", paths[i], strerror(errno));
			return EXIT_USAGE;
		}
		r = plan_read(p, f, paths[i], &skipped, err, sizeof(err));
		fclose(f);
		if (r < 0) {
			mediatorctl_error("plan: %s", err);
			return EXIT_REFUSED;
		}
		if (skipped)
			fprintf(stderr, "mediatorctl: plan: %s: %zu lines skipped\n", paths[i],
				skipped);
	}
	return EXIT_OK;
}

/* mediator-sim --check CONFIG TRACES..., its output on stderr; EXIT_OK when schedulable. */
static int check(const char *config, char **traces, int n)
{
	char sim[4096];
	char **argv = calloc((size_t)n + 4, sizeof(*argv));
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, r;

	if (!argv)
		return EXIT_REFUSED;
	if (helper_path("MEDIATOR_SIM", "", "mediator-sim", sim, sizeof(sim)) < 0) {
		mediatorctl_error("plan: no mediator-sim at %s", sim);
		free(argv);
		return EXIT_REFUSED;
	}
	argv[0] = sim;
	argv[1] = "--check";
	argv[2] = (char *)config;
	for (int i = 0; i < n; i++)
		argv[3 + i] = traces[i];
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
	r = posix_spawn(&pid, sim, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	free(argv);
	if (r) {
		mediatorctl_error("plan: %s: %s", sim, strerror(r));
		return EXIT_REFUSED;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return EXIT_REFUSED;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		puts("; mediator-sim --check: schedulable with these budgets for these traces");
		return EXIT_OK;
	}
	puts("; mediator-sim --check: NOT schedulable with these budgets for these traces");
	return EXIT_REFUSED;
}

/* Writes @text, the proposal, to a new file under $TMPDIR or /tmp, its path into @path. */
static int write_proposal(const char *text, char *path, size_t size)
{
	const char *dir = getenv("TMPDIR");
	FILE *f;
	int fd;

	snprintf(path, size, "%s/mediatorctl-plan.XXXXXX", dir && dir[0] ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		mediatorctl_error("plan: %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return EXIT_REFUSED;
	}
	if ((fputs(text, f) < 0) | (fclose(f) != 0)) {
		mediatorctl_error("plan: %s: %s", path, strerror(errno));
		unlink(path);
		return EXIT_REFUSED;
	}
	return EXIT_OK;
}

/* The proposal for the traces read into @p, into *@text (the caller frees it); an exit status. */
static int propose(struct plan *p, double margin, char **text)
{
	char err[512];
	size_t len;
	FILE *f = open_memstream(text, &len);
	int r;

	if (!f) {
		mediatorctl_error("plan: %s", strerror(errno));
		return EXIT_REFUSED;
	}
	r = plan_write(p, margin, DEFAULT_SOCKET_DIR, f, err, sizeof(err));
	if (fclose(f) != 0 && !r)
		r = -ENOMEM, snprintf(err, sizeof(err), "%s", strerror(ENOMEM));
	if (r < 0) {
		mediatorctl_error("plan: %s", err);
		return EXIT_REFUSED;
	}
	return EXIT_OK;
}

int mediatorctl_plan(int argc, char **argv)
{
	long margin = DEFAULT_MARGIN_PCT;
	bool do_check = false;
	char path[4096], *text = NULL;
	struct plan *p;
	int first = argc, r;

	for (int i = 0; i < argc && first == argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(mediatorctl_plan_help, stdout);
			return EXIT_OK;
		} else if (!strcmp(argv[i], "--check")) {
			do_check = true;
		} else if (!strcmp(argv[i], "--margin") && i + 1 < argc) {
			errno = 0;
			margin = strtol(argv[++i], &end, 10);
			if (errno || *end || end == argv[i] || margin < 0 ||
			    margin > MAX_MARGIN_PCT) {
				mediatorctl_error("plan: --margin: '%s' is not 0..%d", argv[i],
						  MAX_MARGIN_PCT);
				return EXIT_USAGE;
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			mediatorctl_error("plan: unknown option '%s'", argv[i]);
			return EXIT_USAGE;
		} else {
			first = i;
		}
	}
	if (first == argc) {
		mediatorctl_error("plan: needs a TRACE file");
		return EXIT_USAGE;
	}
	p = plan_create();
	if (!p)
		return EXIT_REFUSED;
	r = read_traces(p, argv + first, argc - first);
	if (r == EXIT_OK)
		r = propose(p, (double)margin / 100, &text);
	if (r == EXIT_OK)
		fputs(text, stdout);
	if (r == EXIT_OK && do_check) {
		r = write_proposal(text, path, sizeof(path));
		if (r == EXIT_OK) {
			r = check(path, argv + first, argc - first);
			unlink(path);
		}
	}
	free(text);
	plan_destroy(p);
	return r;
}
