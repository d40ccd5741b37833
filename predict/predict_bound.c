/*
 * The bound of a context (see predict_model.h): prediction + margin.
 *
 * A bound keeps the last PREDICT_BOUND_WINDOW residuals (measured -
 * predicted) twice: in arrival order (a ring, to know which one leaves)
 * and sorted (so the quantile is one array read). An update removes the
 * oldest residual from the sorted copy and inserts the new one, each by
 * binary search and memmove: O(window) bytes moved, ~100 ns.
 *
 *   margin = max(0, Q_q(residuals)) * inflation
 *
 * Q_q is the nearest-rank quantile: the ceil(q n)-th smallest of the n
 * residuals kept, but never one of the largest few that a full window
 * leaves out (PREDICT_BOUND_WINDOW - ceil(q PREDICT_BOUND_WINDOW): 2 for
 * 0.995), so that a window not yet full is not set by one outlier alone
 * (the plain nearest rank is the largest while n < 1 / (1 - q): one
 * cluster group slowed to 17 ms by a client starting beside it made every
 * 1 ms cluster group's bound 15 ms for the next 8 seconds, and the gaps
 * left to the other domains shrank to 3 ms). With no residual yet the
 * margin is 0.
 *
 * Inflation widens the margin of a context that keeps overrunning it (the
 * quantile of a window lags behind a drift, and a heavy tail can make the
 * nearest rank too optimistic). Each update records whether the group
 * exceeded the bound it was given. When more than the allowed share of
 * the groups in the window did — (1 - q) n plus a binomial slack of
 * 3 sqrt((1 - q) n) + 1, so that a well-calibrated bound is not widened
 * by chance — every exceedance burst (a run of consecutive exceedances;
 * a long run counts once per BOUND_BURST_LEN groups) multiplies the
 * inflation by BOUND_INFLATE, up to BOUND_INFLATION_MAX. Every group that
 * stays within its bound lets the inflation decay back toward 1 by
 * BOUND_DECAY (about 500 groups to lose most of a step).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "predict_model.h"
#include "predict_model_priv.h"

#define BOUND_INFLATE	    1.5
#define BOUND_INFLATION_MAX 64.0
#define BOUND_DECAY	    0.995
#define BOUND_BURST_LEN	    4u

/*
 * The last PREDICT_BOUND_WINDOW values of a series, in arrival order (a
 * ring, to know which one leaves) and sorted (for the quantile).
 */
struct bound_window {
	double ring[PREDICT_BOUND_WINDOW];   /* oldest at head once full */
	double sorted[PREDICT_BOUND_WINDOW]; /* the same values, ascending */
	unsigned head;			     /* next slot to write */
	unsigned count;			     /* values kept */
};

struct predict_bound {
	double quantile;
	unsigned spared;		     /* largest residuals never taken (see above) */
	struct bound_window residuals;	     /* measured - predicted, ns */
	bool exceeded[PREDICT_BOUND_WINDOW]; /* per ring slot of residuals */
	unsigned exceed_count;		     /* true entries of exceeded[] */
	unsigned run;			     /* current run of consecutive exceedances */
	double inflation;		     /* >= 1 */
};

struct predict_bound *predict_bound_create(double quantile)
{
	struct predict_bound *b;

	if (!(quantile > 0 && quantile < 1))
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->quantile = quantile;
	b->spared = PREDICT_BOUND_WINDOW - (unsigned)ceil(quantile * PREDICT_BOUND_WINDOW);
	b->inflation = 1;
	return b;
}

void predict_bound_destroy(struct predict_bound *b)
{
	free(b);
}

/* Q_q of @w's values with the largest @spared left out (see above); 0 when empty. */
static double window_quantile(const struct bound_window *w, double quantile, unsigned spared)
{
	unsigned rank;

	if (w->count == 0)
		return 0;
	rank = (unsigned)ceil(quantile * w->count);
	if (w->count > spared && rank > w->count - spared)
		rank = w->count - spared;
	if (rank < 1)
		rank = 1;
	if (rank > w->count)
		rank = w->count;
	return w->sorted[rank - 1];
}

double predict_bound_margin(const struct predict_bound *b)
{
	double q = window_quantile(&b->residuals, b->quantile, b->spared);

	return q > 0 ? q * b->inflation : 0;
}

double predict_bound_of(const struct predict_bound *b, double predicted_ns)
{
	if (isnan(predicted_ns))
		predicted_ns = 0;
	return predicted_ns + predict_bound_margin(b);
}

/* First index in sorted[0, n) whose value is >= @v. */
static unsigned lower_bound(const double *sorted, unsigned n, double v)
{
	unsigned lo = 0, hi = n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (sorted[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Adds @v to @w, dropping the oldest value of a full window; returns the ring slot written. */
static unsigned window_push(struct bound_window *w, double v)
{
	unsigned i, slot;

	if (w->count == PREDICT_BOUND_WINDOW) {
		/* Drop the oldest value (it sits at head). */
		i = lower_bound(w->sorted, w->count, w->ring[w->head]);
		memmove(&w->sorted[i], &w->sorted[i + 1], (w->count - i - 1) * sizeof(double));
		w->count--;
	}
	i = lower_bound(w->sorted, w->count, v);
	memmove(&w->sorted[i + 1], &w->sorted[i], (w->count - i) * sizeof(double));
	w->sorted[i] = v;
	w->count++;
	w->ring[w->head] = v;
	slot = w->head;
	w->head = (w->head + 1) % PREDICT_BOUND_WINDOW;
	return slot;
}

void predict_bound_update(struct predict_bound *b, double predicted_ns, double measured_ns,
			  bool judged)
{
	double r, allowed;
	bool over;
	unsigned slot;

	if (!isfinite(predicted_ns) || !isfinite(measured_ns))
		return;
	over = judged && measured_ns > predict_bound_of(b, predicted_ns);
	r = measured_ns - predicted_ns;
	if (r > PREDICT_MODEL_TIME_MAX)
		r = PREDICT_MODEL_TIME_MAX;
	else if (r < -PREDICT_MODEL_TIME_MAX)
		r = -PREDICT_MODEL_TIME_MAX;

	if (b->residuals.count == PREDICT_BOUND_WINDOW)
		b->exceed_count -= b->exceeded[b->residuals.head]; /* the slot about to be reused */
	slot = window_push(&b->residuals, r);
	b->exceeded[slot] = over;
	b->exceed_count += over;

	if (!over) {
		b->run = 0;
		b->inflation = 1 + (b->inflation - 1) * BOUND_DECAY;
		return;
	}
	allowed = (1 - b->quantile) * b->residuals.count;
	allowed += 3 * sqrt(allowed) + 1;
	if (b->run++ % BOUND_BURST_LEN == 0 && b->exceed_count > allowed) {
		b->inflation *= BOUND_INFLATE;
		if (b->inflation > BOUND_INFLATION_MAX)
			b->inflation = BOUND_INFLATION_MAX;
	}
}
