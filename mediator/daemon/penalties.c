// SPDX-License-Identifier: MIT
/*
 * Penalties of a domain's clients (see penalties.h).
 */
#include <stddef.h>

#include "daemon/penalties.h"

/* @v less @steps, at least 0. */
static uint32_t fallen(uint32_t v, uint64_t steps)
{
	return steps >= v ? 0 : v - (uint32_t)steps;
}

/* Lets @s's levels fall by one per PENALTY_DECAY_NS since its last step. */
static void decay(struct penalty_slot *s, uint64_t now_ns)
{
	uint64_t steps;

	if (now_ns <= s->last_ns)
		return;
	steps = (now_ns - s->last_ns) / PENALTY_DECAY_NS;
	s->known = fallen(s->known, steps);
	if (steps >= s->level) {
		s->level = 0;
		s->last_ns = now_ns;
		return;
	}
	s->level -= (uint32_t)steps;
	s->last_ns += steps * PENALTY_DECAY_NS;
}

static struct penalty_slot *find(struct penalties *p, uid_t uid)
{
	for (unsigned i = 0; i < p->n; i++) {
		if (p->slot[i].uid == uid)
			return &p->slot[i];
	}
	return NULL;
}

/* @uid's slot, its levels decayed to @now_ns (NULL: none). */
static const struct penalty_slot *current(struct penalties *p, uid_t uid, uint64_t now_ns)
{
	struct penalty_slot *s = find(p, uid);

	if (s)
		decay(s, now_ns);
	return s;
}

uint32_t penalties_level(struct penalties *p, uid_t uid, uint64_t now_ns)
{
	const struct penalty_slot *s = current(p, uid, now_ns);

	return s ? s->level : 0;
}

uint32_t penalties_known(struct penalties *p, uid_t uid, uint64_t now_ns)
{
	const struct penalty_slot *s = current(p, uid, now_ns);

	return s ? s->known : 0;
}

/* A slot for a user not in the table: a free one, else the least penalised. */
static struct penalty_slot *make_room(struct penalties *p, uint64_t now_ns)
{
	struct penalty_slot *best = NULL;

	if (p->n < PENALTY_SLOTS)
		return &p->slot[p->n++];
	for (unsigned i = 0; i < p->n; i++) {
		struct penalty_slot *s = &p->slot[i];

		decay(s, now_ns);
		if (!best || s->level < best->level ||
		    (s->level == best->level && s->last_ns < best->last_ns))
			best = s;
	}
	return best;
}

uint32_t penalties_offend(struct penalties *p, uid_t uid, uint64_t now_ns, bool known)
{
	struct penalty_slot *s = find(p, uid);

	if (!s) {
		s = make_room(p, now_ns);
		*s = (struct penalty_slot){.uid = uid, .last_ns = now_ns};
	}
	decay(s, now_ns);
	if (s->level < UINT32_MAX)
		s->level++;
	if (known && s->known < s->level)
		s->known++;
	s->offences++;
	s->last_ns = now_ns;
	return s->level;
}
