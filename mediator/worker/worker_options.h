// SPDX-License-Identifier: MIT
/*
 * What a worker serves, as mediatord started it (mediator-worker's
 * options): one struct for both transports, vtest and vhost-user.
 */
#ifndef MEDIATOR_WORKER_OPTIONS_H
#define MEDIATOR_WORKER_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/renderer_kind.h"

struct worker_options {
	const char *domain;
	uint32_t client_id;
	enum mediator_renderer renderer;
	const char *render_node;      /* used by renderer egl-gbm */
	uint32_t max_inflight;	      /* per context, 0 = unlimited */
	uint64_t piece_ns;	      /* longer groups are cut into pieces (pieces.h); 0: never */
	const char *model;	      /* cost model name, NULL for the default */
	const char *feature_dump_dir; /* see stream_cost_dump_to(); NULL: none */
	const char *state_dir;	      /* learned model state; NULL: not kept */
	int client_fd;		      /* the connection; the server closes it */
	int mediator_fd;	      /* record channel to mediatord; the server closes it */
	bool grants;		      /* ask mediatord for a grant before each group (wire.h) */
	bool idle_host_work;	      /* bulk host work at idle priority (host_work.h) */
	bool start_turn;	      /* asks mediatord before it makes its renderer (WIRE_START) */
	int board_fd;		      /* the grant board (wire.h), with board_domain >= 0 */
	int board_domain;	      /* this domain's index on it; -1: no board */
	uint32_t max_contexts;	      /* guest contexts at once (a VM's); 0: its table's room */
	uint64_t resource_quota_bytes; /* host memory its resources may take (resource_quota.h); 0:
					  unlimited */
};

#endif
