// SPDX-License-Identifier: MIT
/*
 * DOC: safety frames
 *
 * A safety domain (the instrument cluster) draws periodic frames with
 * deadlines. A frame is released by the first group that arrives while
 * the domain has no frame open, and ends with the group that precedes an
 * idle gap of SCHED_FRAME_GAP_NS; it misses when it completed later than
 * release + deadline. A frame still busy one observed period after its
 * release is rolled over: what arrives now is the next frame's, and if
 * its deadline has not come yet, the rolled-over frame is carried and
 * judged when its work completed. Frames made only of groups without
 * output (SCHED_NO_OUTPUT) are no frames. A late frame that no other
 * domain crossed, in the domain's first SCHED_STARTUP_PERIODS, is its
 * start-up and not judged (judge_frame()).
 *
 * Closed frames feed the domain's recent history (SCHED_FRAME_HISTORY):
 * their costs give its typical frame cost C, their release times its
 * observed period and release grid, from which the next release is
 * expected. A domain past its budget that draws as fast as it can loses
 * its frames' protection (past_entitlement()). Closed frames are logged
 * for the trace (sched_take_frames()).
 */
#include <stdlib.h>
#include <string.h>

#include "scheduler/sched_internal.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The median of @n values (n >= 1); sorts @v. */
static uint64_t median(uint64_t *v, unsigned n)
{
	qsort(v, n, sizeof(v[0]), cmp_u64);
	return v[n / 2];
}

/* The median of @d's recent frames' values @per_frame (costs or measured), its budget before any.
 */
static uint64_t frames_median(const struct sdom *d, const uint64_t *per_frame)
{
	uint64_t c[SCHED_FRAME_HISTORY];

	if (!d->ncosts)
		return d->p.budget_ns;
	memcpy(c, per_frame, d->ncosts * sizeof(c[0]));
	return median(c, d->ncosts);
}

/*
 * The frame cost C of a safety domain: the median of its recent frames'
 * costs (its budget before any frame was seen). A frame's cost is the sum
 * of its groups' bounds, or of their measured times where those were
 * larger. Each bound is already a high quantile of what its group will
 * take (the 0.995 quantile of its context's residuals), so the typical
 * frame's sum is what the domain needs with that confidence; the largest
 * of the sums would count each frame's rare worst case again.
 */
uint64_t sched_frame_cost(const struct sdom *d)
{
	return frames_median(d, d->costs);
}

/* The median measured time of safety domain @d's recent frames (its budget before any). */
uint64_t sched_frame_time(const struct sdom *d)
{
	return frames_median(d, d->measured);
}

uint64_t sched_frame_cost_beside_revoked(const struct sdom *d)
{
	uint64_t c = sched_frame_cost(d);

	for (unsigned i = 0; i < SCHED_BESIDE_HISTORY; i++)
		c = d->beside[i] > c ? d->beside[i] : c;
	return c;
}

/*
 * True while safety domain @d is past its budget and draws as fast as it
 * can: its last SCHED_FAST_RELEASES releases each came less than half a
 * period after the one before, or its typical measured frame exceeds its
 * budget (frames that roll into one another). Its frames are then not
 * protected against other domains' groups, nor ordered first: it is
 * guaranteed its budget each period, not the GPU, and would otherwise
 * leave no gap for the others while it draws. A periodic client keeps
 * its protection past its budget (doc/results/scheduler-tuning.md).
 * Its typical frame says so only once it has SCHED_TYPICAL_FRAMES: its
 * first frames are its start-up, its shaders compiling (10 to 40 ms each
 * under TCG against a budget of 4 ms, bench/vms: two or three frames), and
 * the median of eight has its usual ones in the majority.
 */
static bool past_entitlement(const struct sdom *d)
{
	return d->remaining < 0 &&
	       (d->fast_releases >= SCHED_FAST_RELEASES ||
		(d->ncosts >= SCHED_TYPICAL_FRAMES && sched_frame_time(d) > d->p.budget_ns));
}

/* Safety domain @d's frames are protected against other domains' groups. */
bool sched_protected_safety(const struct sdom *d)
{
	return d->p.class == SCHED_CLASS_SAFETY && !past_entitlement(d);
}

/*
 * The most groups a recent frame of safety domain @d had (UINT32_MAX
 * before any frame was seen): a frame with fewer may still be sent more.
 */
static uint32_t frame_groups_max(const struct sdom *d)
{
	uint32_t m = d->ncosts ? 0 : UINT32_MAX;

	for (unsigned i = 0; i < d->ncosts; i++)
		m = d->counts[i] > m ? d->counts[i] : m;
	return m;
}

/* What one more group of safety domain @d typically costs: the median of its frames' cost per
 * group. */
static uint64_t group_cost(const struct sdom *d)
{
	uint64_t c[SCHED_FRAME_HISTORY];

	if (!d->ncosts)
		return d->p.budget_ns;
	for (unsigned i = 0; i < d->ncosts; i++)
		c[i] = d->costs[i] / (d->counts[i] ? d->counts[i] : 1);
	return median(c, d->ncosts);
}

/*
 * The period of safety domain @d's frames: its configured one, or the one
 * learned (its observed period, SCHED_PERIOD_TRUST) with learn_period.
 */
static uint64_t frame_period(const struct sdom *d)
{
	return d->p.learn_period ? (uint64_t)d->period_est : d->p.period_ns;
}

/* What @d's frames are judged against: its deadline, or with deadline_follows its period. */
static uint64_t judged_deadline(const struct sdom *d)
{
	uint64_t p = frame_period(d);

	return d->p.learn_period && d->p.deadline_follows && p > d->p.deadline_ns
		   ? p
		   : d->p.deadline_ns;
}

/* Logs a frame that ended for the trace. */
static void log_frame(struct sdom *d, uint64_t release, uint64_t deadline, uint64_t end,
		      uint64_t bound, bool missed, bool crossed, bool startup)
{
	struct sched *s = d->s;
	struct sched_frame *f;

	if (s->frame_n == SCHED_FRAME_LOG) {
		s->frame_head = (s->frame_head + 1) % SCHED_FRAME_LOG;
		s->frame_n--;
		s->frames_dropped++;
	}
	f = &s->frame_log[(s->frame_head + s->frame_n++) % SCHED_FRAME_LOG];
	*f = (struct sched_frame){.domain = d->index,
				  .missed = missed,
				  .alone = !crossed,
				  .startup = startup,
				  .release_ns = release,
				  .deadline_ns = deadline,
				  .end_ns = end,
				  .bound_ns = bound,
				  .period_ns = frame_period(d)};
}

/*
 * Judges a frame of safety domain @d that closed: released at @release,
 * due at @deadline, its work done at @end (0: unfinished at its
 * deadline), @crossed by another domain's group. A late frame no other
 * domain crossed in the domain's first SCHED_STARTUP_PERIODS is its
 * start-up: its client's context set-up and first draws, shaders
 * compiling, several periods alone on llvmpipe (bench/faults,
 * 2026-11-29: 34 to 46 ms of set-up and 24 to 30 ms of first draws on a
 * warm shader cache, then two or three frames late while the client
 * catches up: three to five frames in every row). The client does not
 * time them either (cluster-client draws one frame before its first
 * timed release), and no schedule of the others changes them: they are
 * counted apart. A crossed frame is judged whenever it came; a window
 * rather than "until the first frame in time" (the set-up group's frame
 * is often in time, its first draws are not), so that a domain that
 * never makes a frame in time is judged after it all the same.
 */
static void judge_frame(struct sdom *d, uint64_t release, uint64_t deadline, uint64_t end,
			uint64_t bound, bool crossed)
{
	bool missed = !end || end > deadline;
	bool startup = missed && !crossed && release < d->startup_until;

	log_frame(d, release, deadline, end, bound, missed, crossed, startup);
	if (startup) {
		d->startup_frames++;
		return;
	}
	d->frames++;
	if (missed)
		d->misses++;
	if (missed && !crossed)
		d->misses_alone++;
}

size_t sched_take_frames(struct sched *s, struct sched_frame *out, size_t max, uint64_t *dropped)
{
	size_t n = 0;

	for (; n < max && s->frame_n; n++, s->frame_n--) {
		out[n] = s->frame_log[s->frame_head];
		s->frame_head = (s->frame_head + 1) % SCHED_FRAME_LOG;
	}
	if (dropped)
		*dropped = s->frames_dropped;
	s->frames_dropped = 0;
	return n;
}

static void close_frame(struct sdom *d, bool unfinished)
{
	if (!d->frame_open) {
		sched_violated(d->s, SCHED_INV_FRAME_ONCE,
			       "domain %d: the frame released at %llu ns closed again", d->index,
			       (unsigned long long)d->frame_release);
		return;
	}
	d->frame_open = false;
	if (!d->frame_output)
		return; /* set-up or teardown: no frame */
	/*
	 * Nothing of it ended and nothing of it waits: it was rolled over
	 * from a frame carried over (judged when that frame's groups are
	 * done), and the client released nothing in it, as in any period it
	 * leaves empty: no frame (2026-11-28, a CI run under ASan: such a
	 * frame was recorded with no end and not missed).
	 */
	if (!unfinished && !d->frame_last_end)
		return;
	judge_frame(d, d->frame_release, d->frame_release + judged_deadline(d),
		    unfinished ? 0 : d->frame_last_end, d->frame_bound, d->frame_crossed);
	/* What an unfinished frame would have cost is not known. */
	if (unfinished)
		return;
	if (d->frame_beside_revoked) {
		d->beside[d->next_beside] = d->frame_measured;
		d->next_beside = (d->next_beside + 1) % SCHED_BESIDE_HISTORY;
	}
	d->costs[d->next_cost] = d->frame_bound + d->frame_extra;
	d->measured[d->next_cost] = d->frame_measured;
	d->counts[d->next_cost] = d->frame_groups;
	d->next_cost = (d->next_cost + 1) % SCHED_FRAME_HISTORY;
	if (d->ncosts < SCHED_FRAME_HISTORY)
		d->ncosts++;
}

/* A safety domain's frame is over once it has been idle for SCHED_FRAME_GAP_NS. */
static bool frame_over(const struct sdom *d, uint64_t now_ns)
{
	return d->frame_open && !d->pending && !d->inflight && d->frame_last_end &&
	       now_ns >= d->frame_last_end + SCHED_FRAME_GAP_NS;
}

/*
 * True while a group of another domain than @d draws on revoked, or (not
 * @revoked_only) is in flight.
 */
static bool others_on_gpu(const struct sdom *d, bool revoked_only)
{
	const struct sched *s = d->s;

	for (int i = 0; i < s->n; i++)
		if (i != d->index &&
		    (s->d[i].revoked_running || (!revoked_only && s->d[i].inflight)))
			return true;
	return false;
}

/*
 * Another domain's group is on the GPU beside safety domain @d's open
 * frame: it crosses the frame, and (@revoked) draws beside it revoked.
 */
static void cross_frame(struct sdom *d, bool revoked)
{
	d->frame_crossed = true;
	if (revoked)
		d->frame_beside_revoked = true;
}

void sched_frames_crossed(struct sched *s, int by)
{
	for (int i = 0; i < s->n; i++) {
		struct sdom *d = &s->d[i];

		if (i == by)
			continue;
		/*
		 * Only while work of the frame waits or runs: a group granted
		 * after the frame's own groups ended, before the idle gap
		 * closes it, takes nothing from it (test-isolation counted
		 * every frame crossed so, none overlapped by another group).
		 */
		if (d->frame_open && (d->pending || d->inflight))
			cross_frame(d, s->d[by].revoked_running);
		if (d->carried_n)
			d->carried_crossed = true;
	}
}

void sched_set_revoked_running(struct sched *s, int domain, uint32_t n)
{
	if (domain < 0 || domain >= s->n)
		return;
	s->d[domain].revoked_running = n;
	if (n)
		sched_frames_crossed(s, domain);
}

uint64_t sched_gap_period(const struct sdom *d)
{
	if (d->p.learn_period && (double)d->p.period_ns < d->period_est)
		return d->p.period_ns;
	return (uint64_t)d->period_est;
}

/* Counts @d's releases in a row that came under half its shortest period after the one before. */
static void count_fast(struct sdom *d, uint64_t now_ns)
{
	if (now_ns - d->last_release < d->p.period_ns / 2)
		d->fast_releases++;
	else
		d->fast_releases = 0;
}

/*
 * A release of @d, whose period is learned: the estimate learns it, and
 * its frames follow what it is sure of (sched_period_followed(): rolled
 * over, expected, judged with deadline_follows).
 */
static void learn_release(struct sdom *d, uint64_t now_ns)
{
	if (d->have_release)
		count_fast(d, now_ns);
	sched_period_note(&d->learned, now_ns);
	d->period_est = (double)sched_period_followed(&d->learned);
}

/*
 * A safety domain that falls silent after a release (its client starved
 * of the CPU for a few periods, say) may come back at any moment: its
 * next frame is expected, as after its context's creation, for
 * SCHED_SILENT_EXPECT_PERIODS periods after its last release. Fewer than
 * after a context's creation: it costs the others room while the domain
 * is silent for good (mediator-sim's test trace, a cluster that stops
 * with infotainment backlogged: 69 % of the GPU kept with 60 periods,
 * 80 % with 12). bench/faults' worker-wx row, 2026-11-29: the cluster,
 * silent for 5 periods while a new infotainment client started,
 * requested its frame 0.4 ms before a young group of that client (bound
 * 26.5 ms) was granted, which then ran 48.8 ms; the cluster's group
 * waited 17.4 ms and its frame missed.
 */
static void expect_after(struct sdom *d, uint64_t release_ns)
{
	uint64_t until = release_ns + SCHED_SILENT_EXPECT_PERIODS * frame_period(d);

	if (until > d->expect_until)
		d->expect_until = until;
}

/*
 * Safety domain @d released a frame with output at @now_ns: its period,
 * its grid, how early it came and whether it draws as fast as it can
 * follow. A frame made only of groups without output (a client's state
 * or fence group that came after the idle gap closed its frame) is no
 * release: counted, it moved the grid (an "irregular release") and the
 * draw after it counted a short interval, so the observed period sank
 * towards P less the group's offset (test-scheduler: a state group 4 ms
 * after each draw gave about 14 ms for 16.67). With a learned period,
 * the estimate (sched_period.h) takes the release instead of the
 * observed period's average.
 */
static void note_release(struct sdom *d, uint64_t now_ns)
{
	if (d->p.learn_period) {
		learn_release(d, now_ns);
	} else if (d->have_release) {
		double interval = (double)(now_ns - d->last_release);
		double p = (double)d->p.period_ns;

		/* A frame split by a pause, or a skipped release, says nothing of the period. */
		if (interval >= p / 2 && interval <= p * 2)
			d->period_est += SCHED_PERIOD_WEIGHT * (interval - d->period_est);
		count_fast(d, now_ns);
	}
	if (!d->have_release) {
		d->grid = now_ns;
	} else {
		uint64_t due = d->grid + (uint64_t)d->period_est;

		uint64_t off = now_ns > due ? now_ns - due : due - now_ns;

		if (off < (uint64_t)d->period_est / 2) { /* on the grid, give or take */
			d->early[d->next_early] = now_ns < due ? due - now_ns : 0;
			d->next_early = (d->next_early + 1) % SCHED_FRAME_HISTORY;
		}
		if (now_ns <= due || now_ns - due > (uint64_t)d->period_est / 2)
			d->grid = now_ns; /* early, or an irregular release: start again here */
		else
			d->grid = due + (uint64_t)(SCHED_GRID_FOLLOW * (double)(now_ns - due));
	}
	d->have_release = true;
	d->last_release = now_ns;
	expect_after(d, now_ns);
}

static void open_frame(struct sdom *d, uint64_t now_ns)
{
	if (!d->startup_until)
		d->startup_until = now_ns + SCHED_STARTUP_PERIODS * frame_period(d);
	d->frame_open = true;
	d->frame_noted = false;
	d->frame_release = now_ns;
	d->frame_bound = 0;
	d->frame_granted = 0;
	d->frame_extra = 0;
	d->frame_measured = 0;
	d->frame_groups = 0;
	d->frame_output = false;
	d->frame_crossed = others_on_gpu(d, false);
	d->frame_beside_revoked = others_on_gpu(d, true);
	d->frame_last_end = 0;
}

/*
 * Rolls the open frame over at the next release while work of it still
 * waits or runs but its deadline has not come: whether it missed is
 * decided when that work completed.
 */
static void carry_frame(struct sdom *d)
{
	struct sched *s = d->s;

	d->frame_open = false;
	d->carried_n = 0;
	for (size_t i = 0; i < s->top; i++) {
		if (s->req[i].used && s->req[i].domain == d->index) {
			s->req[i].carried = true;
			d->carried_n++;
		}
	}
	d->carried_release = d->frame_release;
	d->carried_deadline = d->frame_release + judged_deadline(d);
	d->carried_bound = d->frame_bound;
	d->carried_end = d->frame_last_end;
	d->carried_output = d->frame_output;
	d->carried_crossed = d->frame_crossed;
}

/* A group of a carried frame completed (or went away) at @end_ns. */
void sched_carried_done(struct sdom *d, struct sreq *r, uint64_t end_ns)
{
	if (!r->carried || !d->carried_n) {
		sched_violated(
		    d->s, SCHED_INV_FRAME_ONCE,
		    "domain %d: a group done for a carried frame already judged (%u left)",
		    d->index, d->carried_n);
		r->carried = false;
		return;
	}
	r->carried = false;
	if (end_ns > d->carried_end)
		d->carried_end = end_ns;
	if (--d->carried_n || !d->carried_output)
		return;
	judge_frame(d, d->carried_release, d->carried_deadline, d->carried_end, d->carried_bound,
		    d->carried_crossed);
}

/* True when a group of @d with output waits or runs. */
static bool output_outstanding(const struct sdom *d)
{
	const struct sched *s = d->s;

	for (size_t i = 0; i < s->top; i++)
		if (s->req[i].used && s->req[i].domain == d->index && s->req[i].output)
			return true;
	return false;
}

/*
 * A safety domain that never leaves an idle gap (it submits without
 * pause) still has one frame per period: a frame open for a whole
 * observed period is closed (late if work of it was still waiting or
 * running at its deadline), and what remains opens the next one.
 */
static void roll_frame(struct sdom *d, uint64_t now_ns)
{
	uint64_t next = d->frame_release + (uint64_t)d->period_est;
	bool busy = d->pending || d->inflight;
	bool drawn;

	if (!d->frame_open || now_ns < next)
		return;
	/*
	 * Only groups without output left (a client's teardown right after
	 * its last frame, waiting behind another domain's group): the frame
	 * is judged by what it drew, which is done, and what is left is no
	 * frame of its own.
	 */
	drawn = busy && !output_outstanding(d);
	if (busy && !drawn && !d->carried_n && now_ns < d->frame_release + d->p.deadline_ns)
		carry_frame(d);
	else
		close_frame(d, busy && !drawn);
	if (!busy)
		return;
	d->have_release = true;
	d->last_release = next;
	d->grid = next;
	d->frame_open = true;
	d->frame_noted = true; /* on the grid by construction */
	d->frame_release = next;
	d->frame_bound = d->outstanding_bound;
	d->frame_granted = 0;
	d->frame_extra = 0;
	d->frame_measured = 0;
	d->frame_groups = 0; /* the groups carried over are the last frame's */
	if (drawn)
		d->frame_output = false;
	/*
	 * frame_output stays: a frame rolled over from one with output is
	 * judged as before (a release the client missed while its last frame
	 * waited is a frame late); one rolled over from set-up or teardown is
	 * no frame unless a group with output joins it.
	 */
	d->frame_last_end = 0;
}

/* True while safety domain @d releases on its grid: it released within SCHED_IDLE_PERIODS. */
static bool on_grid(const struct sdom *d, uint64_t now_ns)
{
	return d->have_release &&
	       now_ns - d->last_release <= (uint64_t)(SCHED_IDLE_PERIODS * d->period_est);
}

bool sched_expecting(const struct sdom *d, uint64_t now_ns)
{
	return now_ns < d->expect_until && !on_grid(d, now_ns);
}

/*
 * The next release expected of safety domain @d: on its grid, or now
 * while a release may come at any moment (sched_expect_frames()); 0 when
 * none is expected.
 */
uint64_t sched_next_release(const struct sdom *d, uint64_t now_ns)
{
	uint64_t r;

	if (!on_grid(d, now_ns))
		return sched_expecting(d, now_ns) ? now_ns : 0;
	r = d->grid + (uint64_t)d->period_est;
	if (d->p.learn_period && d->last_release + d->p.period_ns < r)
		r = d->last_release + d->p.period_ns;
	return r > now_ns ? r : now_ns;
}

/*
 * bench/vms, 2026-11-28: the cluster VM's very first frame (7.1 ms, its
 * start-up) was requested 2.4 ms after an infotainment group of 13.6 ms
 * took the board's offer, and missed: before its first release a safety
 * domain had no release expected, and check 3 nothing to keep room for.
 */
bool sched_expect_frames(struct sched *s, int domain, uint64_t now_ns)
{
	struct sdom *d;

	if (domain < 0 || domain >= s->n || s->d[domain].p.class != SCHED_CLASS_SAFETY)
		return false;
	now_ns = sched_call_time(s, now_ns, "sched_expect_frames");
	d = &s->d[domain];
	d->expect_until = now_ns + SCHED_EXPECT_PERIODS * frame_period(d);
	/* A context made while it was silent starts it again: a start-up of its own. */
	if (!on_grid(d, now_ns) && !d->frame_open && !d->carried_n)
		d->startup_until = 0;
	return true;
}

/*
 * How much earlier than expected the next release of safety domain @d may
 * come: the most any of its recent releases was early (a client's frames
 * reach us late by its own CPU time, which varies, so the grid sits a
 * little late now and then), at most an eighth of its deadline.
 */
uint64_t sched_release_guard(const struct sdom *d)
{
	uint64_t g = 0;

	for (unsigned i = 0; i < SCHED_FRAME_HISTORY; i++)
		g = d->early[i] > g ? d->early[i] : g;
	return g < d->p.deadline_ns / 8 ? g : d->p.deadline_ns / 8;
}

/*
 * What the open frame of safety domain @d still needs, C being its typical
 * cost: a typical frame or what arrived, less what was granted. A frame
 * with all its groups granted and fewer than its recent frames had may
 * still be sent another, so it keeps room for one typical group; one with
 * as many is done.
 */
uint64_t sched_frame_rest(const struct sdom *d, uint64_t c)
{
	uint64_t need = c > d->frame_bound ? c : d->frame_bound;
	uint64_t rest = need > d->frame_granted ? need - d->frame_granted : 0;
	uint64_t one;

	if (d->pending)
		return rest;
	if (d->frame_groups >= frame_groups_max(d))
		return 0;
	one = group_cost(d);
	return rest > one ? rest : one;
}

void sched_frames_advance(struct sdom *d, uint64_t now_ns)
{
	if (frame_over(d, now_ns))
		close_frame(d, false);
	if (d->p.class == SCHED_CLASS_SAFETY)
		roll_frame(d, now_ns);
}

void sched_frame_arrival(struct sdom *d, uint64_t now_ns)
{
	/*
	 * A group arriving half a period or more after its frame's release,
	 * with all of that frame done, is the next frame's, even if it came
	 * before the idle gap that ends a frame (the GPU was busy, the frame
	 * completed late in its period).
	 */
	if (d->p.class == SCHED_CLASS_SAFETY && d->frame_open && !d->pending && !d->inflight &&
	    d->frame_last_end && now_ns - d->frame_release >= (uint64_t)(d->period_est / 2))
		close_frame(d, false);
	if (d->p.class == SCHED_CLASS_SAFETY && !d->frame_open)
		open_frame(d, now_ns);
	/* Its group comes while another domain's runs: it waits, or runs beside it. */
	if (d->p.class == SCHED_CLASS_SAFETY && others_on_gpu(d, false))
		cross_frame(d, others_on_gpu(d, true));
}

void sched_frame_add(struct sdom *d, const struct sreq *r)
{
	if (d->p.class != SCHED_CLASS_SAFETY)
		return;
	d->frame_bound += r->bound;
	d->frame_groups++;
	if (r->output)
		d->frame_output = true;
	/* The frame's first group with output makes its release one. */
	if (r->output && d->frame_open && !d->frame_noted) {
		d->frame_noted = true;
		note_release(d, d->frame_release);
	}
}

void sched_frame_grant(struct sdom *d, const struct sreq *r)
{
	if (d->p.class == SCHED_CLASS_SAFETY && d->frame_open)
		d->frame_granted += r->bound;
}

void sched_frame_complete(struct sdom *d, struct sreq *r, uint64_t measured_ns, uint64_t end_ns)
{
	if (r->carried) {
		sched_carried_done(d, r, end_ns);
	} else if (d->p.class == SCHED_CLASS_SAFETY && d->frame_open) {
		if (end_ns > d->frame_last_end)
			d->frame_last_end = end_ns;
		if (measured_ns > r->bound)
			d->frame_extra += measured_ns - r->bound;
		d->frame_measured += measured_ns;
	}
}

void sched_frame_cancel(struct sdom *d, struct sreq *r, uint64_t now_ns)
{
	if (r->carried)
		sched_carried_done(d, r, now_ns);
	else if (d->p.class == SCHED_CLASS_SAFETY && d->frame_open && !d->frame_last_end)
		d->frame_last_end = now_ns;
}
