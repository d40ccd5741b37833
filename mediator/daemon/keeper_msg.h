// SPDX-License-Identifier: MIT
/*
 * The messages between mediatord and its keeper (keeper.h), one per
 * SOCK_SEQPACKET packet, a descriptor attached to KEEP_OP_ADD. Both ends
 * are the same build on the same machine.
 */
#ifndef MEDIATOR_KEEPER_MSG_H
#define MEDIATOR_KEEPER_MSG_H

#include <stdint.h>

#include "daemon/keeper.h"

enum keep_op {
	KEEP_OP_ADD = 1,    /* both ways: an entry and its descriptor */
	KEEP_OP_FORGET = 2, /* mediatord -> keeper: a client is gone */
	KEEP_OP_BUDGET = 3, /* both ways: a budget set at run time */
	KEEP_OP_END = 4,    /* keeper -> mediatord: all is sent; or: quit done */
	KEEP_OP_QUIT = 5,   /* mediatord -> keeper: close everything and exit */
};

struct keep_msg {
	uint32_t op;		   /* enum keep_op */
	uint32_t client_id;	   /* KEEP_OP_FORGET */
	struct keep_entry entry;   /* KEEP_OP_ADD */
	struct keep_budget budget; /* KEEP_OP_BUDGET */
};

#endif
