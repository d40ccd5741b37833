// SPDX-License-Identifier: MIT
/*
 * In-flight command groups of one client (see groups.h). Groups live in a
 * ring indexed by sequence number; they complete in sequence order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/groups.h"

struct pending_group {
	uint64_t dispatch_ns;
	struct group_info info;
};

struct groups {
	uint32_t ctx_id;
	uint32_t limit;	      /* max groups in flight */
	uint64_t next_seq;    /* seq of the next dispatched group */
	uint64_t oldest_seq;  /* seq of the oldest group in flight */
	uint64_t last_end_ns; /* end of the previous completed group */
	struct pending_group ring[GROUPS_MAX_TRACKED];
};

struct groups *groups_create(uint32_t ctx_id, uint32_t max_inflight)
{
	struct groups *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->ctx_id = ctx_id;
	g->limit = (max_inflight == 0 || max_inflight > GROUPS_MAX_TRACKED) ? GROUPS_MAX_TRACKED
									    : max_inflight;
	g->next_seq = 1;
	g->oldest_seq = 1;
	return g;
}

void groups_destroy(struct groups *groups)
{
	free(groups);
}

uint32_t groups_inflight(const struct groups *groups)
{
	return (uint32_t)(groups->next_seq - groups->oldest_seq);
}

bool groups_can_dispatch(const struct groups *groups)
{
	return groups_inflight(groups) < groups->limit;
}

uint64_t groups_dispatch(struct groups *groups, uint64_t dispatch_ns, const struct group_info *info)
{
	uint64_t seq = groups->next_seq++;
	struct pending_group *p = &groups->ring[seq % GROUPS_MAX_TRACKED];

	p->dispatch_ns = dispatch_ns;
	p->info = *info;
	return seq;
}

/* Nanoseconds as an integer, for records: never negative, never past UINT64_MAX. */
static uint64_t to_ns(double ns);

uint64_t groups_abandoned_charge(const struct group_info *info, uint64_t dispatch_ns,
				 uint64_t now_ns)
{
	uint64_t charge = to_ns(info->est.bound_ns);

	if (now_ns > dispatch_ns && now_ns - dispatch_ns > charge)
		charge = now_ns - dispatch_ns;
	return charge ? charge : 1;
}

uint32_t groups_abandon(struct groups *groups, uint64_t now_ns,
			void (*fn)(const struct group_info *info, uint64_t charge_ns, void *data),
			void *data)
{
	uint32_t n = 0;

	for (; groups->oldest_seq < groups->next_seq; groups->oldest_seq++, n++) {
		const struct pending_group *p =
		    &groups->ring[groups->oldest_seq % GROUPS_MAX_TRACKED];

		fn(&p->info, groups_abandoned_charge(&p->info, p->dispatch_ns, now_ns), data);
	}
	return n;
}

static uint64_t to_ns(double ns)
{
	if (!(ns > 0))
		return 0;
	if (ns >= 1.8e19)
		return UINT64_MAX;
	return (uint64_t)ns;
}

uint32_t groups_complete(struct groups *groups, uint64_t seq, uint64_t end_ns, groups_emit_fn emit,
			 void *data)
{
	uint32_t done = 0;

	if (seq < groups->oldest_seq || seq >= groups->next_seq)
		return 0;
	while (groups->oldest_seq <= seq) {
		uint64_t s = groups->oldest_seq++;
		const struct pending_group *p = &groups->ring[s % GROUPS_MAX_TRACKED];
		struct wire_group r;

		memset(&r, 0, sizeof(r));
		r.hdr.type = WIRE_GROUP;
		r.hdr.size = sizeof(r);
		r.ctx_id = groups->ctx_id;
		r.seq = s;
		r.dispatch_ns = p->dispatch_ns;
		r.request_ns = p->info.request_ns ? p->info.request_ns : p->dispatch_ns;
		r.grant = p->info.grant;
		r.start_ns =
		    p->dispatch_ns > groups->last_end_ns ? p->dispatch_ns : groups->last_end_ns;
		/* A clock read on another CPU can be a hair before dispatch. */
		r.end_ns = end_ns > r.start_ns ? end_ns : r.start_ns;
		groups->last_end_ns = r.end_ns;
		memcpy(r.cmds, p->info.counts.n, sizeof(p->info.counts.n));
		r.predicted_ns = to_ns(p->info.est.predicted_ns);
		r.bound_ns = to_ns(p->info.est.bound_ns);
		r.young = p->info.est.young;
		r.tile = p->info.tile;
		r.piece = (uint16_t)p->info.piece;
		r.pieces = (uint16_t)p->info.pieces;
		snprintf(r.model, sizeof(r.model), "%s", p->info.model ? p->info.model : "");
		emit(&r, &p->info, data);
		done++;
	}
	return done;
}
