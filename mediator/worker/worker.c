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

#include "config.h"
#include "util.h"
#include "vtest_server.h"
#include "wire.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: mediator-worker --domain NAME --client-id N [--renderer NAME]\n"
		"                       [--render-node PATH] [--max-inflight N] [--model NAME]\n"
		"                       [--state-dir DIR] [--grants] [--verbose]\n"
		"\n"
		"Serves the vtest connection on fd %d and sends command-group records to\n"
		"mediatord on fd %d; with --grants, asks mediatord for a grant before\n"
		"each command group. Started by mediatord; not meant to be run by hand.\n",
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

static int parse_renderer(const char *s, enum mediator_renderer *out)
{
	static const enum mediator_renderer all[] = {
	    MEDIATOR_RENDERER_EGL_SURFACELESS, MEDIATOR_RENDERER_EGL_GBM, MEDIATOR_RENDERER_GLX};

	for (size_t i = 0; i < ARRAY_SIZE(all); i++) {
		if (strcmp(s, config_renderer_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	}
	return -EINVAL;
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
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct vtest_server_options opt = {
	    .renderer = CONFIG_DEFAULT_RENDERER,
	    .render_node = CONFIG_DEFAULT_RENDER_NODE,
	    .max_inflight = CONFIG_DEFAULT_MAX_INFLIGHT,
	    .client_fd = WIRE_CLIENT_FD,
	    .mediator_fd = WIRE_WORKER_FD,
	};
	enum log_level level = LOG_LEVEL_INFO;
	bool have_client = false;
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
			if (parse_renderer(optarg, &opt.renderer) < 0)
				goto bad;
			break;
		case 'n':
			opt.render_node = optarg;
			break;
		case 'm':
			if (parse_u32(optarg, &opt.max_inflight) < 0)
				goto bad;
			break;
		case 'M':
			opt.model = optarg;
			break;
		case 'S':
			opt.state_dir = optarg;
			break;
		case 'g':
			opt.grants = true;
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
	/* For bench/accuracy: per-group features of every client, replayed
	 * offline through every model. */
	opt.feature_dump_dir = getenv("MEDIATOR_FEATURE_DUMP");
	/* Never outlive mediatord, even if the record channel is not polled. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	signal(SIGPIPE, SIG_IGN);

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
