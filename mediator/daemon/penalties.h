// SPDX-License-Identifier: MIT
/*
 * DOC: penalties
 *
 * A domain's record of the clients whose groups the grant watchdog
 * revoked (doc/design.md, "The grant watchdog"). It belongs to the
 * domain and the client's user (its socket peer's uid; a VM's QEMU), not
 * to a connection or a context: reconnecting, or opening a new context,
 * keeps it. Each revocation raises the level by one; a level falls by
 * one for every PENALTY_DECAY_NS without a revocation. Beside it, the
 * known level counts only the offences of groups whose cost was known
 * (not young: its context's cost learned, so its bound was its client's
 * word), with the same decay: an honest app's first long draws overrun a
 * bound the mediator guessed, a deceiving client's tiles overrun the one
 * it made them ask for. What a level costs
 * is the caller's (clients.c): from PENALTY_DEMOTE_LEVEL on, every worker
 * of the user runs at idle priority; each level halves how much drawing
 * a revoked group may still do before its worker is killed.
 */
#ifndef MEDIATOR_DAEMON_PENALTIES_H
#define MEDIATOR_DAEMON_PENALTIES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PENALTY_SLOTS	     64
#define PENALTY_DECAY_NS     10000000000ull /* 10 s */
#define PENALTY_DEMOTE_LEVEL 2u

struct penalty_slot {
	uid_t uid;
	uint32_t level;
	uint32_t known;	  /* the offences of groups of known cost, as level decays */
	uint64_t last_ns; /* the last revocation, or where the decay got to */
	uint64_t offences;
};

struct penalties {
	struct penalty_slot slot[PENALTY_SLOTS];
	unsigned n;
};

/* User @uid's level at @now_ns (0: none). */
uint32_t penalties_level(struct penalties *p, uid_t uid, uint64_t now_ns);
/* User @uid's known level at @now_ns (0: none). */
uint32_t penalties_known(struct penalties *p, uid_t uid, uint64_t now_ns);
/*
 * A group of user @uid was revoked at @now_ns: its level, one higher;
 * its known level too when the group's cost was @known. When every slot
 * is taken, the one with the lowest level (the oldest of those) makes
 * room.
 */
uint32_t penalties_offend(struct penalties *p, uid_t uid, uint64_t now_ns, bool known);

#endif
