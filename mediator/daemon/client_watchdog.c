// SPDX-License-Identifier: MIT
/*
 * DOC: the grant watchdog's side of a client
 *
 * The dispatcher revokes a group that holds the GPU past its deadline (a
 * normal domain's: its allowance, what the safety domains' gaps left at
 * its grant) and frees the slot; on llvmpipe the group still runs on the
 * CPU, which is the GPU. So at the revocation its worker is demoted to
 * idle priority (worker_threads.h): it draws on only with CPU time the
 * safety domain's worker does not want, until its group completes. Its
 * user is penalised (penalties.h) when the revoked group turns out to
 * have drawn past its own bound: more than PENALTY_DREW_NS of rasterizer
 * time after its revocation and completed after its grant + bound, or
 * killed. A revoked shader compile (the rasterizer idle), and a group
 * that completed within its bound, cost no penalty: the mediator's
 * allowance, not the client, cut it short. The level rises whatever
 * connection or context it came from.
 *
 * Then, every WATCH_STEP_NS, the kill stage asks what the worker does:
 * - it drew more than its rasterizer allowance since the revocation
 *   (kill_us of rasterizer CPU time at level 1, halved per level, at
 *   least MIN_RASTER_NS): killed. A deceiving client's long draws end
 *   here, the sooner the more often it did it;
 * - from known level PENALTY_RESET_LEVEL on (a user whose revoked groups
 *   of known cost drew on past their own bounds again and again), a group
 *   not young (its context's cost known, by its worker's word and
 *   mediatord's count) that has run past its own bound may draw
 *   RESET_RASTER_NS, checked every RESET_STEP_NS: the engine
 *   reset a hardware GPU's driver would do at once. Its long draws would
 *   otherwise draw beside every safety frame for the MIN_RASTER_NS each
 *   may (bench/faults, sustained: a client whose 75 ms scissor tiles were
 *   each revoked at the gap's end cost the cluster a frame every few
 *   tiles). A young context's groups (an honest app's first long draws,
 *   granted a few ms with no cost known), and a group revoked within its
 *   bound (an honest tile granted a room of 2 ms, its bound 40 ms: the
 *   mediator's choice, not its client's), keep the halved allowance.
 *   Only known-cost offences count toward the reset: an honest app's
 *   young groups overran a bound the mediator guessed (glmark2's or
 *   long-draws' first full-screen draws under ASan, 250 ms and more), and
 *   counted with them, one tile that a noisy host stretched past its
 *   bound had the app killed (test-isolation, ASan CI run of
 *   2026-11-28: long-draws' connection dropped mid-run). A user at level
 *   PENALTY_RESET_ANY_LEVEL, whatever its groups, is at the reset too:
 *   honest apps' start-ups reached 3 (glmark2 in test-metrics), clients
 *   whose young groups each outlast the last 13 to 31
 *   (test-deceiving-client); without it their groups of known cost drew
 *   the halved allowance, 500 ms, beside the cluster;
 * - it made no progress (no CPU time, no thread runnable: stopped,
 *   deadlocked) for kill_us: killed;
 * - it compiles (its rasterizer threads idle, its other threads busy or
 *   runnable): it may go on, at idle priority, up to COMPILE_GRACE_NS
 *   after the revocation. A healthy app's first shader compile, cold
 *   cache and sanitizers included, is told apart from a long draw this
 *   way (doc/design.md, "The grant watchdog");
 * - a worker without rasterizer threads (a hardware renderer): killed
 *   kill_us, halved per level, after the revocation.
 * Its priority comes back when its late completion comes, unless its
 * user is at PENALTY_DEMOTE_LEVEL or above, whose workers, old and new,
 * stay at idle priority until the level decays.
 *
 * A normal domain's new worker starts at idle priority too, until its
 * first group completes: its start-up (a GL stack, a renderer) is CPU
 * work no safety frame should wait for (a VM that connects again and
 * again; bench/faults, display-flood).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "daemon/domain.h"
#include "daemon/mediatord_priv.h"
#include "daemon/worker_threads.h"

#define WATCH_STEP_NS	 100000000ull	/* 100 ms between kill stage checks */
#define MIN_RASTER_NS	 500000000ull	/* the rasterizer allowance's floor */
#define COMPILE_GRACE_NS 30000000000ull /* the longest compile after a revocation */
#define PENALTY_DREW_NS	 20000000ull	/* drawing after a revocation that is penalised */
/* The known level from which a revoked group's draw is ended at once */
#define PENALTY_RESET_LEVEL 3u
/* ... or the level, of any offences: above every honest app's start-up (3) */
#define PENALTY_RESET_ANY_LEVEL 6u
#define RESET_RASTER_NS		4000000ull /* ... once it drew this much rasterizer time */
#define RESET_STEP_NS		2000000ull /* ... checked this often */

static void set_demoted(struct client *c, bool idle)
{
	int r;

	if (c->demoted == idle)
		return;
	r = worker_threads_set_idle(c->pid, idle, listener_config(c->listener)->worker_nice);
	if (r < 0 && r != -ESRCH)
		log_warn("domain %s: client %u: cannot set worker %d's priority: %s",
			 domain_name(c->listener->domain), c->id, (int)c->pid, strerror(-r));
	c->demoted = idle;
}

/* @full halved per level above 1, at least @floor. */
static uint64_t halved(uint64_t full, uint32_t level, uint64_t floor)
{
	uint64_t v = level > 1 ? full >> (level - 1 < 63 ? level - 1 : 63) : full;

	return v > floor ? v : floor;
}

/* @c's user's known penalty level at @now. */
static uint32_t known_level(struct client *c, uint64_t now)
{
	return penalties_known(&c->listener->penalties, c->peer_uid, now);
}

/* Whether @c's user is at the engine reset at @now (its levels high enough). */
static bool at_reset(struct client *c, uint64_t now)
{
	return known_level(c, now) >= PENALTY_RESET_LEVEL ||
	       penalties_level(&c->listener->penalties, c->peer_uid, now) >=
		   PENALTY_RESET_ANY_LEVEL;
}

/*
 * Whether revoked group @r of a client, its user @reset at the engine
 * reset, seen at @now, is ended at once: not young, and past its own bound.
 */
static bool reset_now(const struct dispatcher_revoked *r, bool reset, uint64_t now)
{
	return reset && !r->young && now - r->granted_ns >= r->bound_ns;
}

/*
 * When revoked group @r of a client, its user @reset at the engine reset,
 * is next checked after @now: every WATCH_STEP_NS; one the reset may end,
 * every RESET_STEP_NS once past its bound, and at the moment it passes it.
 */
static uint64_t next_check(const struct dispatcher_revoked *r, bool reset, uint64_t now)
{
	uint64_t past = r->granted_ns + r->bound_ns;

	if (!reset || r->young)
		return now + WATCH_STEP_NS;
	if (now >= past)
		return now + RESET_STEP_NS;
	return now + WATCH_STEP_NS < past ? now + WATCH_STEP_NS : past;
}

/*
 * The rasterizer time revoked group @r at penalty @level (its user @reset
 * at the engine reset) may still draw, seen at @now.
 */
static uint64_t raster_allowance(const struct dispatcher_revoked *r, uint64_t kill_ns,
				 uint32_t level, bool reset, uint64_t now)
{
	return reset_now(r, reset, now) ? RESET_RASTER_NS : halved(kill_ns, level, MIN_RASTER_NS);
}

/* True on the 1st, 2nd, 4th, 8th, ... revocation of a client: the ones logged. */
static bool worth_logging(uint64_t n)
{
	return (n & (n - 1)) == 0;
}

/* Rasterizer time @c's worker drew since its last revocation (0: none known). */
static uint64_t drawn_since_revoke(const struct client *c)
{
	struct worker_cpu cpu;

	if (worker_threads_cpu(c->pid, &cpu) < 0 || cpu.raster_ns < c->raster_at_revoke)
		return 0;
	return cpu.raster_ns - c->raster_at_revoke;
}

static uint64_t on_revoke(struct client *c, const struct dispatcher_revoked *r, uint64_t now)
{
	struct worker_cpu cpu;
	uint32_t level = penalties_level(&c->listener->penalties, c->peer_uid, now);

	c->revocations++;
	c->awaiting_late = true;
	c->revoked_young = r->young;
	if (worth_logging(c->revocations))
		log_warn("domain %s: client %u context %u: group of grant %llu held it for %llu "
			 "ms, past its watchdog deadline of %llu ms (bound %llu us); grant "
			 "revoked, client suspended until its completion, worker at idle "
			 "priority (revocation %llu of this client, penalty level %u, known-cost "
			 "level %u)",
			 domain_name(c->listener->domain), c->id, r->ctx_id,
			 (unsigned long long)r->wire_id,
			 (unsigned long long)((now - r->granted_ns) / 1000000u),
			 (unsigned long long)((r->deadline_ns - r->granted_ns) / 1000000u),
			 (unsigned long long)(r->bound_ns / 1000u),
			 (unsigned long long)c->revocations, level, known_level(c, now));
	set_demoted(c, true);
	memset(&cpu, 0, sizeof(cpu));
	worker_threads_cpu(c->pid, &cpu);
	c->raster_at_revoke = cpu.raster_ns;
	c->revoked_past_ns = r->granted_ns + r->bound_ns;
	c->cpu_at_check = cpu.total_ns;
	c->stuck_since = r->revoked_ns;
	return next_check(r, at_reset(c, now), r->revoked_ns);
}

/* Why @c's worker is to be killed now (NULL: not yet). */
static const char *kill_reason(struct client *c, const struct dispatcher_revoked *r, uint64_t now,
			       char *buf, size_t size)
{
	const struct mediator_config *cfg = &c->md->cfg;
	uint64_t kill_ns = (uint64_t)cfg->watchdog_kill_us * 1000;
	uint32_t level = penalties_level(&c->listener->penalties, c->peer_uid, now);
	struct worker_cpu cpu;
	uint64_t drew, allowed;

	if (worker_threads_cpu(c->pid, &cpu) < 0)
		return "it is gone";
	if (cpu.total_ns > c->cpu_at_check || cpu.runnable)
		c->stuck_since = 0;
	else if (!c->stuck_since)
		c->stuck_since = now;
	c->cpu_at_check = cpu.total_ns;
	if (c->stuck_since && now - c->stuck_since >= kill_ns) {
		snprintf(buf, size, "no progress for %llu ms",
			 (unsigned long long)((now - c->stuck_since) / 1000000u));
		return buf;
	}
	if (!cpu.raster_threads) {
		if (now - r->revoked_ns < halved(kill_ns, level, kill_ns / 4))
			return NULL;
		snprintf(buf, size, "penalty level %u", level);
		return buf;
	}
	drew = cpu.raster_ns > c->raster_at_revoke ? cpu.raster_ns - c->raster_at_revoke : 0;
	allowed = raster_allowance(r, kill_ns, level, at_reset(c, now), now);
	if (drew > allowed) {
		snprintf(buf, size,
			 "drew %llu ms of rasterizer time since, %llu ms allowed at "
			 "penalty level %u",
			 (unsigned long long)(drew / 1000000u),
			 (unsigned long long)(allowed / 1000000u), level);
		return buf;
	}
	if (now - r->revoked_ns >= COMPILE_GRACE_NS) {
		snprintf(buf, size, "still compiling after %llu s",
			 (unsigned long long)(COMPILE_GRACE_NS / 1000000000u));
		return buf;
	}
	return NULL;
}

static uint64_t on_kill_stage(struct client *c, const struct dispatcher_revoked *r, uint64_t now)
{
	char buf[160];
	const char *why = kill_reason(c, r, now, buf, sizeof(buf));

	if (!why)
		return next_check(r, at_reset(c, now), now);
	penalties_offend(&c->listener->penalties, c->peer_uid, now, !r->young);
	log_error("domain %s: client %u context %u: group of grant %llu revoked %llu ms ago has "
		  "not completed (held %llu ms; %s); killing worker %d",
		  domain_name(c->listener->domain), c->id, r->ctx_id,
		  (unsigned long long)r->wire_id,
		  (unsigned long long)((now - r->revoked_ns) / 1000000u),
		  (unsigned long long)((now - r->granted_ns) / 1000000u), why, (int)c->pid);
	domain_watchdog_killed(c->listener->domain);
	c->revoked = true;
	client_kill(c, SIGKILL);
	return 0;
}

uint64_t client_revoked(void *data, const struct dispatcher_revoked *r)
{
	struct client *c = client_by_id(data, r->client);
	uint64_t now = mono_now_ns();

	if (!c)
		return 0;
	return r->kill ? on_kill_stage(c, r, now) : on_revoke(c, r, now);
}

void client_watchdog_start(struct client *c)
{
	if (listener_config(c->listener)->class == DOMAIN_CLASS_NORMAL ||
	    penalties_level(&c->listener->penalties, c->peer_uid, mono_now_ns()) >=
		PENALTY_DEMOTE_LEVEL)
		set_demoted(c, true);
}

void client_watchdog_done(struct client *c)
{
	uint64_t now = mono_now_ns();

	if (c->awaiting_late && !dispatcher_suspended(c->md->dispatcher, c->id)) {
		/*
		 * Its revoked group completed: did it draw on after the
		 * revocation, and past its own bound? One that ended within its
		 * bound was revoked for a room the mediator chose (an honest
		 * tile granted 2 ms, its bound 7 to 40 ms), not for its client's
		 * word.
		 */
		c->awaiting_late = false;
		if (drawn_since_revoke(c) > PENALTY_DREW_NS && now > c->revoked_past_ns)
			penalties_offend(&c->listener->penalties, c->peer_uid, now,
					 !c->revoked_young);
	}
	if (!c->demoted || dispatcher_suspended(c->md->dispatcher, c->id) ||
	    dispatcher_distrusted(c->md->dispatcher, c->id) ||
	    penalties_level(&c->listener->penalties, c->peer_uid, now) >= PENALTY_DEMOTE_LEVEL)
		return;
	set_demoted(c, false);
}

void client_watchdog_short(struct client *c)
{
	uint32_t level =
	    penalties_offend(&c->listener->penalties, c->peer_uid, mono_now_ns(), true);

	log_warn("domain %s: client %u: its worker reports its groups far shorter than mediatord "
		 "sees them; worker at idle priority, penalty level %u",
		 domain_name(c->listener->domain), c->id, level);
	set_demoted(c, true);
}

/* A normal domain's worker, not at idle priority by mediatord's doing, to @idle or back. */
static void set_host_work(struct client *c, bool idle)
{
	int r;

	if (listener_config(c->listener)->class != DOMAIN_CLASS_NORMAL || c->demoted)
		return;
	r = worker_threads_set_idle(c->pid, idle, listener_config(c->listener)->worker_nice);
	if (r < 0 && r != -ESRCH)
		log_warn("domain %s: client %u: cannot set worker %d's priority: %s",
			 domain_name(c->listener->domain), c->id, (int)c->pid, strerror(-r));
}

void client_watchdog_host_work_begin(struct client *c)
{
	/* Host work right after host work whose put-back was on its way: kept at idle priority. */
	set_host_work(c, true);
}

void client_watchdog_host_work_held(struct client *c)
{
	/* It ran at the idle priority mediatord itself put the worker at: counted, nothing to undo.
	 */
	if (listener_config(c->listener)->class == DOMAIN_CLASS_NORMAL)
		domain_idle_host_work(c->listener->domain);
}

void client_watchdog_host_work_done(struct client *c)
{
	/* Only a normal domain's workers lower themselves; mediatord's own reasons come first. */
	if (listener_config(c->listener)->class == DOMAIN_CLASS_NORMAL)
		domain_idle_host_work(c->listener->domain);
	set_host_work(c, false);
}
