// SPDX-License-Identifier: MIT
/*
 * Starting a worker (see mediatord_priv.h): mediator-worker with its
 * domain's options, on the descriptors wire.h names, with a clean signal
 * mask and default dispositions, and only the environment worker_env.h
 * names. mediatord never waits on it here: it is reaped on SIGCHLD
 * (clients.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>

#include "common/renderer_kind.h"
#include "common/util.h"
#include "common/wire.h"
#include "daemon/dispatcher.h"
#include "daemon/domain.h"
#include "daemon/mediatord_priv.h"
#include "daemon/worker_env.h"

extern char **environ;

/* spawn_worker()'s argv: the program, 23 options always given, up to 12 optional ones, NULL. */
#define SPAWN_MAX_ARGS 48

pid_t worker_spawn(struct mediatord *md, struct listener *l, uint32_t id, bool vm, int client_fd,
		   int worker_fd)
{
	char id_str[16], inflight_str[16], index_str[16], nice_str[16], piece_str[16], mem_str[16],
	    res_str[16], ctx_str[16];
	/* The board's offer names its claimer by client id, in 30 bits (wire.h). */
	bool board = id <= 0x3fffffffu;
	const char *argv[SPAWN_MAX_ARGS] = {
	    md->worker_path,
	    "--domain",
	    domain_name(l->domain),
	    "--client-id",
	    id_str,
	    "--renderer",
	    renderer_kind_name(md->cfg.renderer),
	    "--render-node",
	    md->cfg.render_node,
	    "--max-inflight",
	    inflight_str,
	    "--grants",
	    "--nice",
	    nice_str,
	    "--piece-us",
	    piece_str,
	    "--memory-mb",
	    mem_str,
	    "--resource-memory-mb",
	    res_str,
	    "--max-contexts",
	    ctx_str,
	    "--transport",
	    vm ? "vhost-user" : "vtest",
	    /* Then the options below that are given, and NULL. */
	};
	/* Options given or not: each with its value, or alone (value NULL). */
	const struct {
		bool given;
		const char *option, *value;
	} optional[] = {
	    {md->keeper != NULL, "--outlive-mediatord", NULL},
	    {l->user.switch_user, "--run-as", l->user.run_as},
	    {l->dirs.state[0] != '\0', "--state-dir", l->dirs.state},
	    {l->dirs.cache[0] != '\0', "--cache-dir", l->dirs.cache},
	    {board, "--board-domain", index_str},
	    {md->cfg.model[0] != '\0', "--model", md->cfg.model},
	    {listener_config(l)->class == DOMAIN_CLASS_NORMAL, "--idle-host-work", NULL},
	    {listener_config(l)->class == DOMAIN_CLASS_NORMAL, "--start-turn", NULL},
	};
	size_t argc = 0, dropped;
	const char *envp[WORKER_ENV_MAX];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none;
	pid_t pid = -1;
	int r;

	while (argv[argc])
		argc++;
	for (size_t i = 0; i < ARRAY_SIZE(optional); i++) {
		if (!optional[i].given)
			continue;
		argv[argc++] = optional[i].option;
		if (optional[i].value)
			argv[argc++] = optional[i].value;
	}
	argv[argc] = NULL;
	snprintf(id_str, sizeof(id_str), "%u", id);
	snprintf(inflight_str, sizeof(inflight_str), "%u", md->cfg.max_inflight);
	snprintf(index_str, sizeof(index_str), "%d", (int)(l - md->listeners));
	snprintf(nice_str, sizeof(nice_str), "%d", listener_config(l)->worker_nice);
	snprintf(piece_str, sizeof(piece_str), "%u", listener_config(l)->piece_us);
	snprintf(mem_str, sizeof(mem_str), "%u", listener_config(l)->worker_memory_mb);
	snprintf(res_str, sizeof(res_str), "%u", listener_config(l)->resource_memory_mb);
	snprintf(ctx_str, sizeof(ctx_str), "%u", listener_config(l)->max_contexts_per_client);
	sigemptyset(&none);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	/* dup2 onto the fixed numbers clears close-on-exec there; everything
	 * else of mediatord's is close-on-exec. */
	posix_spawn_file_actions_adddup2(&fa, client_fd, WIRE_CLIENT_FD);
	posix_spawn_file_actions_adddup2(&fa, worker_fd, WIRE_WORKER_FD);
	if (board)
		posix_spawn_file_actions_adddup2(
		    &fa, dispatcher_board_fd(md->dispatcher, (int)(l - md->listeners)),
		    WIRE_BOARD_FD);
	/* No terminal: mediatord's may be an operator's shell (TIOCSTI, signals from its keys). */
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawnattr_setsigmask(&attr, &none);
	/* A session of its own, without a controlling terminal. */
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
					    POSIX_SPAWN_SETSID);
	{
		sigset_t def;

		sigemptyset(&def);
		sigaddset(&def, SIGPIPE);
		sigaddset(&def, SIGCHLD);
		sigaddset(&def, SIGTERM);
		sigaddset(&def, SIGINT);
		sigaddset(&def, SIGHUP);
		posix_spawnattr_setsigdefault(&attr, &def);
	}
	worker_env_build(environ, md->cfg.worker_pass_environment,
			 md->cfg.renderer == MEDIATOR_RENDERER_GLX, envp, ARRAY_SIZE(envp),
			 &dropped);
	if (dropped)
		log_warn("domain %s: client %u: its worker gets %zu of the variables "
			 "worker_pass_environment names: %zu left out (at most %d)",
			 domain_name(l->domain), id, ARRAY_SIZE(envp) - 1, dropped,
			 WORKER_ENV_MAX - 1);
	r = posix_spawn(&pid, md->worker_path, &fa, &attr, (char *const *)argv,
			(char *const *)envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (r != 0) {
		errno = r;
		return -1;
	}
	return pid;
}
