// SPDX-License-Identifier: MIT
/*
 * DOC: learned periods
 *
 * A safety domain's guest shows its frames at its display's rate; when it
 * shows one is a release. The period and phase are fitted to the recent
 * releases: release i is counted k_i periods after the first (k_i its
 * distance over a first guess, the median interval, rounded), and
 * t_i = phase + k_i * period is fitted, the period as the median of the
 * slopes between every two releases (Theil and Sen's estimator), the
 * phase as the median offset. A release the guest skipped (a dropped
 * frame) only leaves a k out; jitter in when the guest shows a frame
 * averages out over the window, unlike an average of intervals, where
 * each jittered release counts twice. Medians, not least squares: a
 * guest's frames reach mediatord late by its own CPU time, never early,
 * and a run of late ones (a client catching up after its start) is a
 * step that least squares takes for a slope (17.0 ms for 16.67 in
 * test-learned-period, 2026-11-29).
 *
 * The rate may change (60 to 30 Hz, a display switched off and on): the
 * last SCHED_PERIOD_CHANGE_RELEASES + 1 releases on a grid of their own
 * (each within SCHED_PERIOD_ALIKE of it), whose period is more than
 * SCHED_PERIOD_CHANGE away from the one learned, are a new rate, and the
 * fit starts again from them. The releases are checked against a grid,
 * not their intervals against each other: an interval carries the jitter
 * of two releases. Five releases, not four: on a loaded host a client
 * that falls behind comes later by a few ms a frame for three frames, a
 * grid 20 % slower (a model of cluster-client starved of the CPU,
 * 2026-11-29). An interval of SCHED_PERIOD_PAUSE periods or more is a
 * pause: the grid starts again at the release after it, the period kept.
 *
 * How sure the period is (sched_period_confidence()) is three things: the
 * releases fit the grid (a guest that shows its frames at random leaves
 * residuals of a quarter period, and scores 0), the period's standard
 * error is well under SCHED_PERIOD_PRECISION of it (a fit to the few
 * releases after a pause, jittered by a starved client, is no period to
 * follow), and enough releases were seen. A guest that shows them faster
 * than the configured shortest period is held to it.
 */
#include <math.h>
#include <stdlib.h>

#include "scheduler/sched_period.h"

/* Releases the confidence needs before it can be full. */
#define PERIOD_SURE_RELEASES 8u

static uint64_t at(const struct sched_period *e, unsigned i)
{
	return e->t[(e->head + i) % SCHED_PERIOD_RELEASES];
}

static void push(struct sched_period *e, uint64_t t_ns)
{
	if (e->n == SCHED_PERIOD_RELEASES) {
		e->head = (e->head + 1) % SCHED_PERIOD_RELEASES;
		e->n--;
	}
	e->t[(e->head + e->n++) % SCHED_PERIOD_RELEASES] = t_ns;
}

/* Keeps only the last @keep releases. */
static void keep_last(struct sched_period *e, unsigned keep)
{
	if (e->n <= keep)
		return;
	e->head = (e->head + e->n - keep) % SCHED_PERIOD_RELEASES;
	e->n = keep;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of @n values (n >= 1); sorts @v. */
static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The first guess of the period: the median interval, leaving out
 * intervals under a quarter of the median of all (a frame shown twice).
 */
static double guess(const struct sched_period *e)
{
	double iv[SCHED_PERIOD_RELEASES], m;
	unsigned n = 0, k = 0;

	for (unsigned i = 1; i < e->n; i++)
		iv[n++] = (double)(at(e, i) - at(e, i - 1));
	if (!n)
		return 0;
	m = median(iv, n);
	for (unsigned i = 0; i < n; i++)
		if (iv[i] >= m / 4)
			iv[k++] = iv[i];
	return k ? median(iv, k) : m;
}

static double clamped(const struct sched_period *e, double p)
{
	if (p < (double)e->min_ns)
		return (double)e->min_ns;
	if (p > (double)e->max_ns)
		return (double)e->max_ns;
	return p;
}

/*
 * The periods between the first release kept and release @i: each
 * interval counted in periods of @g (none for a frame shown twice, more
 * than one across frames left out). Counted interval by
 * interval, so that a first guess a few percent off does not drift by a
 * whole period over the window.
 */
static void count_periods(const struct sched_period *e, double g, double *k)
{
	k[0] = 0;
	for (unsigned i = 1; i < e->n; i++) {
		double m = round((double)(at(e, i) - at(e, i - 1)) / g);

		k[i] = k[i - 1] + m;
	}
}

/*
 * The median of the slopes between every two releases counted apart
 * (Theil and Sen's estimator): @g when there are none.
 */
static double pairwise_slope(const struct sched_period *e, const double *k, double g)
{
	double sl[SCHED_PERIOD_RELEASES * (SCHED_PERIOD_RELEASES - 1) / 2];
	unsigned m = 0;

	for (unsigned i = 0; i < e->n; i++)
		for (unsigned j = i + 1; j < e->n; j++)
			if (k[j] > k[i])
				sl[m++] = (double)(at(e, j) - at(e, i)) / (k[j] - k[i]);
	return m ? median(sl, m) : g;
}

/*
 * The spread of @n residuals around 0: their RMS, leaving out the largest
 * tenth. Not the plain RMS: a guest's frames come late by its CPU time,
 * now and then by a lot (a client starved for 50 ms), and one such frame
 * in the window must not make a steady rate look like none. Not a median
 * either: that takes the jitter of a coarse timer (uniform, a few ms) for
 * more than it is.
 */
static double spread(const double *r, unsigned n)
{
	double a[SCHED_PERIOD_RELEASES], ss = 0;
	unsigned keep = n - n / 10;

	for (unsigned i = 0; i < n; i++)
		a[i] = fabs(r[i]);
	qsort(a, n, sizeof(a[0]), cmp_double);
	for (unsigned i = 0; i < keep; i++)
		ss += a[i] * a[i];
	return keep ? sqrt(ss / keep) : 0;
}

/*
 * The standard error of a slope fitted to @n points at @k whose residuals
 * spread by @sd: sd / sqrt(sum (k_i - mean k)^2). Over 32 releases in a
 * row, a fiftieth of the residuals' spread; over 4, nearly half of it.
 */
static double slope_error(const double *k, unsigned n, double sd)
{
	double mean = 0, sxx = 0;

	for (unsigned i = 0; i < n; i++)
		mean += k[i] / n;
	for (unsigned i = 0; i < n; i++)
		sxx += (k[i] - mean) * (k[i] - mean);
	return sxx > 0 ? sd / sqrt(sxx) : 0;
}

/*
 * Fits t_i - t_0 = a + p * k_i: the period p (clamped), the phase and
 * the residuals' spread. With @keep, the period is @g, and only the phase
 * is fitted. Returns the period before it was clamped.
 */
static double fit_line(struct sched_period *e, const double *k, double g, bool keep)
{
	double off[SCHED_PERIOD_RELEASES], res[SCHED_PERIOD_RELEASES], p, raw, a;
	uint64_t t0 = at(e, 0);

	p = keep ? g : pairwise_slope(e, k, g);
	raw = p;
	p = clamped(e, p);
	for (unsigned i = 0; i < e->n; i++)
		off[i] = (double)(at(e, i) - t0) - p * k[i];
	a = median(off, e->n);
	for (unsigned i = 0; i < e->n; i++)
		res[i] = (double)(at(e, i) - t0) - a - p * k[i];
	e->period_ns = p;
	e->phase_ns = (double)t0 + a;
	e->spread_ns = spread(res, e->n);
	if (!keep)
		e->error_ns = slope_error(k, e->n, e->spread_ns);
	return raw;
}

/*
 * Fits the releases kept to a grid: period, phase and the residuals' RMS.
 * The periods are counted twice, by the median interval, then by the
 * period fitted from that. Too few releases since a pause to tell a
 * period (fewer than a change needs) keep the period learned before, if
 * they agree with it, and move only the phase.
 */
static void fit(struct sched_period *e)
{
	double g = guess(e), k[SCHED_PERIOD_RELEASES], raw;
	bool keep = e->period_ns > 0 && e->n <= SCHED_PERIOD_CHANGE_RELEASES &&
		    fabs(g - e->period_ns) <= SCHED_PERIOD_ALIKE * e->period_ns;

	if (g <= 0)
		return;
	if (keep)
		g = e->period_ns;
	count_periods(e, g, k);
	raw = fit_line(e, k, g, keep);
	if (!keep && raw > 0) {
		count_periods(e, raw, k);
		fit_line(e, k, raw, false);
	}
	e->settled = e->n > SCHED_PERIOD_CHANGE_RELEASES;
}

/*
 * True when the last SCHED_PERIOD_CHANGE_RELEASES + 1 releases lie on a
 * grid of their own, one period of it apart each (within
 * SCHED_PERIOD_ALIKE of it), and that period is away from the one
 * learned: a new rate. The releases are checked against the grid, not
 * their intervals against each other: an interval carries the jitter of
 * two releases (a host whose timer wakes its guest on 4 ms ticks spaces a
 * steady 30 Hz 32 and 36 ms apart, 12 % off each other, each release
 * within 2 ms, 6 %, of the grid).
 */
static bool rate_changed(const struct sched_period *e)
{
	const unsigned r = SCHED_PERIOD_CHANGE_RELEASES;
	double sl[(SCHED_PERIOD_CHANGE_RELEASES + 1) * SCHED_PERIOD_CHANGE_RELEASES / 2];
	double off[SCHED_PERIOD_CHANGE_RELEASES + 1], m, a;
	unsigned first, ns = 0;

	if (e->n < r + 1 || e->period_ns <= 0)
		return false;
	first = e->n - r - 1;
	for (unsigned i = 0; i <= r; i++)
		for (unsigned j = i + 1; j <= r; j++)
			sl[ns++] = (double)(at(e, first + j) - at(e, first + i)) / (j - i);
	m = median(sl, ns);
	for (unsigned i = 0; i <= r; i++)
		off[i] = (double)(at(e, first + i) - at(e, first)) - m * i;
	a = median(off, r + 1);
	for (unsigned i = 0; i <= r; i++)
		if (fabs((double)(at(e, first + i) - at(e, first)) - m * i - a) >
		    SCHED_PERIOD_ALIKE * m)
			return false;
	/*
	 * Away from the period by more than SCHED_PERIOD_CHANGE, and by more
	 * than the releases' jitter can move a slope fitted to so few: three
	 * standard errors of it (with the residuals' spread of the fit so far,
	 * sd * sqrt(12 / (n (n^2 - 1))) over n releases in a row).
	 */
	return fabs(clamped(e, m) - e->period_ns) >
	       fmax(SCHED_PERIOD_CHANGE * e->period_ns,
		    3 * e->spread_ns * sqrt(12.0 / ((r + 1) * ((r + 1) * (r + 1) - 1))));
}

void sched_period_init(struct sched_period *e, uint64_t min_ns, uint64_t max_ns)
{
	*e = (struct sched_period){.min_ns = min_ns,
				   .max_ns = max_ns ? max_ns : UINT64_MAX,
				   .followed_ns = (double)min_ns};
	if (e->max_ns < e->min_ns)
		e->max_ns = e->min_ns;
}

/*
 * What the frames follow after a release (sched_period_followed()). After
 * a rate change the period kept is known to be wrong. Holding it until
 * the new fit was sure, test-scheduler's case on a 4 ms timer judged a
 * 60 Hz guest by its 30 Hz period past its tenth frame: the jitter kept
 * the new fit unsure.
 */
static void follow(struct sched_period *e, bool changed)
{
	if (changed)
		e->following = true;
	if (sched_period_confidence(e) >= SCHED_PERIOD_TRUST)
		e->following = false;
	else if (!e->following)
		return;
	e->followed_ns = e->period_ns;
}

bool sched_period_note(struct sched_period *e, uint64_t now_ns)
{
	if (e->n && now_ns < at(e, e->n - 1))
		return false;
	/*
	 * Only a settled period tells a pause: one fitted to two releases
	 * (a frame shown twice, 0.5 ms apart) would take every interval
	 * after it for one.
	 */
	if (e->n && e->settled &&
	    (double)(now_ns - at(e, e->n - 1)) >= SCHED_PERIOD_PAUSE * e->period_ns) {
		keep_last(e, 0);
		push(e, now_ns);
		e->phase_ns = (double)now_ns;
		e->spread_ns = 0;
		e->error_ns = 0;
		e->settled = false;
		e->pauses++;
		return true;
	}
	push(e, now_ns);
	if (e->n < 2)
		return false;
	if (rate_changed(e)) {
		keep_last(e, SCHED_PERIOD_CHANGE_RELEASES + 1);
		fit(e);
		e->changes++;
		follow(e, true);
		return true;
	}
	fit(e);
	follow(e, false);
	return false;
}

uint64_t sched_period_ns(const struct sched_period *e)
{
	return (uint64_t)llround(e->period_ns);
}

uint64_t sched_period_followed(const struct sched_period *e)
{
	return (uint64_t)llround(e->followed_ns);
}

uint64_t sched_period_next(const struct sched_period *e, uint64_t now_ns)
{
	double k;

	if (e->period_ns <= 0)
		return 0;
	if ((double)now_ns <= e->phase_ns)
		return (uint64_t)llround(e->phase_ns);
	k = ceil(((double)now_ns - e->phase_ns) / e->period_ns);
	return (uint64_t)llround(e->phase_ns + k * e->period_ns);
}

/* @x within [0, 1]. */
static double share(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

double sched_period_confidence(const struct sched_period *e)
{
	double fit_share, precise, seen;

	if (e->period_ns <= 0 || e->n < 2)
		return 0;
	fit_share = 1 - e->spread_ns / (SCHED_PERIOD_OFF_GRID * e->period_ns);
	precise = 1 - e->error_ns / (SCHED_PERIOD_PRECISION * e->period_ns);
	seen = (double)(e->n - 1) / PERIOD_SURE_RELEASES;
	return share(fit_share) * share(precise) * share(seen);
}
