// SPDX-License-Identifier: MIT
/*
 * mediator-worker: serves one client connection for mediatord.
 *
 * mediatord starts one worker per accepted connection, with the
 * connection on fd WIRE_CLIENT_FD and its end of the record channel on fd
 * WIRE_WORKER_FD. Everything guest- or client-controlled is parsed and
 * rendered in this process, so that a crash or hang here costs only this
 * client. Not meant to be run by hand.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "worker/fatal_signal.h"
#include "worker/renderer.h"
#include "worker/sandbox.h"
#include "common/util.h"
#include "worker/vhost-user/vhost_gpu_server.h"
#include "worker/vtest/vtest_server.h"
#include "common/wire.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: mediator-worker --domain NAME --client-id N [--renderer NAME]\n"
		"                       [--render-node PATH] [--max-inflight N] [--model NAME]\n"
		"                       [--state-dir DIR] [--grants] [--idle-host-work]\n"
		"                       [--start-turn]\n"
		"                       [--nice N]\n"
		"                       [--run-as UID:GID[:GROUP,...]] [--memory-mb N]\n"
		"                       [--cache-dir DIR] [--outlive-mediatord]\n"
		"                       [--resource-memory-mb N] [--max-contexts N]\n"
		"                       [--transport vtest|vhost-user] [--verbose]\n"
		"\n"
		"Serves the connection on fd %d (a vtest client, or with --transport\n"
		"vhost-user a QEMU vhost-user-gpu device) and sends command-group records\n"
		"to mediatord on fd %d; with --grants, asks mediatord for a grant before\n"
		"each command group. --nice sets its CPU priority (the domain's\n"
		"worker_nice) before any thread starts. Before it reads a byte of the\n"
		"client it closes every other descriptor, limits its private memory to\n"
		"--memory-mb (the domain's worker_memory_mb), becomes --run-as (the\n"
		"worker user) and sets no-new-privs. The client's resources may take\n"
		"--resource-memory-mb of host memory (the domain's resource_memory_mb),\n"
		"and a VM at most --max-contexts guest contexts at once (the domain's\n"
		"max_contexts_per_client). With --idle-host-work (a normal domain's\n"
		"worker), it runs a large resource's storage and a large transfer at\n"
		"idle priority, and mediatord puts it back afterwards. With --start-turn\n"
		"(a normal domain's worker) it asks mediatord before it makes its\n"
		"renderer, and waits for its turn.\n"
		"It dies with mediatord, or with --outlive-mediatord serves on when\n"
		"mediatord dies and is taken over by a restarted one (its keeper holds\n"
		"the record channel). Started by mediatord; not meant to be run by hand.\n",
		WIRE_CLIENT_FD, WIRE_WORKER_FD);
}

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *s == '\0' || *end != '\0' || v > UINT32_MAX || s[0] == '-')
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* A size given in MiB (a u32), in bytes. */
static int parse_mib(const char *s, uint64_t *bytes)
{
	uint32_t mb;

	if (parse_u32(s, &mb) < 0)
		return -EINVAL;
	*bytes = (uint64_t)mb << 20;
	return 0;
}

/*
 * The process's nice value, set before the renderer starts its threads
 * (they inherit it). Failing is not fatal: the worker runs at the priority
 * it has, and says so.
 */
static void set_nice(const struct worker_options *o, int nice)
{
	if (setpriority(PRIO_PROCESS, 0, nice) < 0)
		log_warn("domain %s client %u: cannot set the CPU priority to nice %d: %s",
			 o->domain, o->client_id, nice, strerror(errno));
}

/*
 * Gives up what the worker does not need (sandbox.h), after opening the
 * devices its renderer will need. Mesa's shader cache goes to @cache_dir
 * (its domain's, which the worker user owns; NULL: Mesa's default).
 */
static int enter_sandbox(const struct worker_options *o, struct sandbox_options *sb,
			 const char *cache_dir)
{
	char err[256];
	int fds[2], n;

	renderer_preopen(o->renderer, o->render_node);
	sb->keep[sb->n_keep++] = o->client_fd;
	sb->keep[sb->n_keep++] = o->mediator_fd;
	if (o->board_domain >= 0)
		sb->keep[sb->n_keep++] = o->board_fd;
	n = renderer_preopened_fds(fds);
	for (int i = 0; i < n; i++)
		sb->keep[sb->n_keep++] = fds[i];
	sb->parent = getppid();
	if (sandbox_enter(sb, err, sizeof(err)) < 0) {
		log_error("domain %s client %u: cannot give up its rights: %s; not serving",
			  o->domain, o->client_id, err);
		return -1;
	}
	if (cache_dir)
		setenv("MESA_SHADER_CACHE_DIR", cache_dir, 1);
	log_debug("domain %s client %u: running as uid %u, memory limit %llu MiB", o->domain,
		  o->client_id, (unsigned)getuid(),
		  (unsigned long long)(sb->data_limit_bytes >> 20));
	return 0;
}

/* One VM's vhost-user-gpu device. */
static int serve_vm(const struct worker_options *o)
{
	struct vhost_gpu_server *server = vhost_gpu_server_create(o);
	int r;

	if (!server)
		return 1;
	r = vhost_gpu_server_run(server);
	vhost_gpu_server_destroy(server);
	return r == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
	    {"domain", required_argument, NULL, 'd'},
	    {"client-id", required_argument, NULL, 'c'},
	    {"renderer", required_argument, NULL, 'r'},
	    {"render-node", required_argument, NULL, 'n'},
	    {"max-inflight", required_argument, NULL, 'm'},
	    {"model", required_argument, NULL, 'M'},
	    {"state-dir", required_argument, NULL, 'S'},
	    {"grants", no_argument, NULL, 'g'},
	    {"idle-host-work", no_argument, NULL, 'I'},
	    {"start-turn", no_argument, NULL, 'T'},
	    {"nice", required_argument, NULL, 'N'},
	    {"piece-us", required_argument, NULL, 'P'},
	    {"transport", required_argument, NULL, 't'},
	    {"run-as", required_argument, NULL, 'u'},
	    {"memory-mb", required_argument, NULL, 'L'},
	    {"cache-dir", required_argument, NULL, 'C'},
	    {"board-domain", required_argument, NULL, 'B'},
	    {"outlive-mediatord", no_argument, NULL, 'O'},
	    {"resource-memory-mb", required_argument, NULL, 'R'},
	    {"max-contexts", required_argument, NULL, 'X'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct worker_options opt = {
	    .renderer = RENDERER_DEFAULT_KIND,
	    .render_node = RENDERER_DEFAULT_NODE,
	    .max_inflight = 1, /* mediatord always passes its config's */
	    .client_fd = WIRE_CLIENT_FD,
	    .mediator_fd = WIRE_WORKER_FD,
	    .board_fd = WIRE_BOARD_FD,
	    .board_domain = -1,
	};
	struct sandbox_options sandbox = {.parent_death_signal = SIGTERM};
	const char *cache_dir = NULL;
	enum log_level level = LOG_LEVEL_INFO;
	bool have_client = false, vhost = false, have_nice = false;
	long nice = 0;
	struct vtest_server *server;
	int c, r;

	log_init("mediator-worker", level);
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'd':
			opt.domain = optarg;
			break;
		case 'c':
			if (parse_u32(optarg, &opt.client_id) < 0)
				goto bad;
			have_client = true;
			break;
		case 'r':
			if (renderer_kind_parse(optarg, &opt.renderer) < 0)
				goto bad;
			break;
		case 'n':
			opt.render_node = optarg;
			break;
		case 'B': {
			uint32_t v;

			if (parse_u32(optarg, &v) < 0 || v >= WIRE_BOARD_DOMAINS)
				goto bad;
			opt.board_domain = (int)v;
			break;
		}
		case 'm':
			if (parse_u32(optarg, &opt.max_inflight) < 0)
				goto bad;
			break;
		case 'P': {
			uint32_t us;

			if (parse_u32(optarg, &us) < 0)
				goto bad;
			opt.piece_ns = (uint64_t)us * 1000;
			break;
		}
		case 'M':
			opt.model = optarg;
			break;
		case 'S':
			opt.state_dir = optarg;
			break;
		case 'g':
			opt.grants = true;
			break;
		case 'T':
			opt.start_turn = true;
			break;
		case 'I':
			opt.idle_host_work = true;
			break;
		case 'N': {
			char *end;

			errno = 0;
			nice = strtol(optarg, &end, 10);
			if (errno || *optarg == '\0' || *end != '\0' || nice < -20 || nice > 19)
				goto bad;
			have_nice = true;
			break;
		}
		case 'C':
			cache_dir = optarg;
			break;
		case 'u':
			if (sandbox_parse_run_as(optarg, &sandbox) < 0)
				goto bad;
			break;
		case 'L':
			if (parse_mib(optarg, &sandbox.data_limit_bytes) < 0)
				goto bad;
			break;
		case 't':
			if (strcmp(optarg, "vhost-user") == 0)
				vhost = true;
			else if (strcmp(optarg, "vtest") != 0)
				goto bad;
			break;
		case 'O':
			sandbox.parent_death_signal = 0;
			break;
		case 'R':
			if (parse_mib(optarg, &opt.resource_quota_bytes) < 0)
				goto bad;
			break;
		case 'X':
			if (parse_u32(optarg, &opt.max_contexts) < 0 || opt.max_contexts == 0)
				goto bad;
			break;
		case 'v':
			level = LOG_LEVEL_DEBUG;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!opt.domain || !have_client || optind != argc) {
		usage(stderr);
		return 2;
	}
	log_init("mediator-worker", level);
	r = fatal_signal_report(opt.domain, opt.client_id);
	if (r < 0)
		log_warn("domain %s client %u: no report of fatal signals: %s", opt.domain,
			 opt.client_id, strerror(-r));
	/* For bench/accuracy: per-group features of every client, replayed
	 * offline through every model. */
	opt.feature_dump_dir = getenv("MEDIATOR_FEATURE_DUMP");
	/*
	 * Never outlive mediatord, even if the record channel is not polled;
	 * with --outlive-mediatord the channel alone says when it is gone for
	 * good (its keeper closed it too).
	 */
	prctl(PR_SET_PDEATHSIG, sandbox.parent_death_signal);
	signal(SIGPIPE, SIG_IGN);
	if (have_nice)
		set_nice(&opt, (int)nice);
	if (enter_sandbox(&opt, &sandbox, cache_dir) < 0)
		return 1;

	if (vhost)
		return serve_vm(&opt);
	server = vtest_server_create(&opt);
	if (!server) {
		log_error("domain %s client %u: out of memory", opt.domain, opt.client_id);
		return 1;
	}
	r = vtest_server_run(server);
	vtest_server_destroy(server);
	return r == 0 ? 0 : 1;
bad:
	fprintf(stderr, "mediator-worker: invalid option value: %s\n", optarg);
	return 2;
}
