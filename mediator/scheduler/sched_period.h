/* SPDX-License-Identifier: MIT */
/*
 * A safety domain's frame period and phase, learned from when its guest
 * shows its frames (issue 33): the releases' times, fitted to a grid.
 * Pure: times come from the caller. The caller embeds a struct
 * sched_period and calls sched_period_init() first; nothing to finish.
 */
#ifndef GM_SCHED_PERIOD_H
#define GM_SCHED_PERIOD_H

#include <stdbool.h>
#include <stdint.h>

/* Releases kept for the fit: half a second at 60 Hz, two at 16 Hz. */
#define SCHED_PERIOD_RELEASES 32u
/* Intervals in a row on a grid of their own that make a rate change (a few frames). */
#define SCHED_PERIOD_CHANGE_RELEASES 4u
/* A fit whose residuals' spread reaches this share of the period gives no confidence. */
#define SCHED_PERIOD_OFF_GRID 0.25
/* A period whose standard error reaches this share of it gives no confidence. */
#define SCHED_PERIOD_PRECISION 0.02
/* Releases within this share of a period of a grid are on it (a rate change's). */
#define SCHED_PERIOD_ALIKE 0.10
/* A grid of releases this share away from the period are a new rate (60 to 50 Hz: 20 %). */
#define SCHED_PERIOD_CHANGE 0.15
/* An interval this many periods long is a pause: the grid starts again after it. */
#define SCHED_PERIOD_PAUSE 4u
/*
 * A learned period this sure (sched_period_confidence()) is the one frames
 * follow: from 5 releases on a clean fit, more on a jittered one. One
 * release 6 ms late among 5 took the fit to 17.06 ms for 16.67 at 0.3
 * (test-learned-period, 2026-11-29).
 */
#define SCHED_PERIOD_TRUST 0.6

struct sched_period {
	/* Bounds of the period (a configured shortest and longest, or 0 and UINT64_MAX). */
	uint64_t min_ns, max_ns;
	/* Releases since the grid last started again, oldest first from @head. */
	uint64_t t[SCHED_PERIOD_RELEASES];
	unsigned head, n;
	double period_ns; /* 0 until two releases were seen */
	double phase_ns;  /* a release time on the grid */
	double spread_ns; /* the fit's residuals' spread (their largest tenth left out) */
	double error_ns;  /* the period's standard error */
	/* The fit rests on more releases than a rate change needs: pauses are told from then on. */
	bool settled;
	uint64_t changes; /* rate changes followed */
	uint64_t pauses;  /* pauses: the grid started again */
	/* The period frames follow (sched_period_followed()), and whether it follows every fit. */
	double followed_ns;
	bool following;
};

/*
 * Starts @e with no release seen; the learned period stays within
 * [@min_ns, @max_ns], and the one followed is @min_ns until one is sure.
 */
void sched_period_init(struct sched_period *e, uint64_t min_ns, uint64_t max_ns);

/*
 * The guest showed a frame at @now_ns (times must not go back; an earlier
 * time is ignored). Returns true when the period changed by a rate change
 * or a pause, false otherwise.
 */
bool sched_period_note(struct sched_period *e, uint64_t now_ns);

/* The learned period (0 before two releases). */
uint64_t sched_period_ns(const struct sched_period *e);

/* The next release on the grid at or after @now_ns (0 before two releases). */
uint64_t sched_period_next(const struct sched_period *e, uint64_t now_ns);

/*
 * How sure the period is, 0 to 1: the fit's residuals against the period,
 * the period's standard error, and how many releases it rests on (full
 * from 8). A guest whose frames come at random has no period to learn
 * and scores near 0.
 */
double sched_period_confidence(const struct sched_period *e);

/*
 * The period the guest's frames follow: the last one sure enough
 * (SCHED_PERIOD_TRUST), kept while the releases jitter too much to be
 * sure; after a rate change, though, each fit at the new rate, sure or
 * not, until one is sure. @min_ns before any.
 */
uint64_t sched_period_followed(const struct sched_period *e);

#endif
