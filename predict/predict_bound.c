// SPDX-License-Identifier: MIT
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
 *
 * Kinds. One margin per context is set by the context's widest-spread
 * groups and given to all of them: in glmark2's buffer scene, 0.1 ms
 * uploads share a context with 3 ms draws, whose residuals (1.5 ms at the
 * quantile) made the uploads' bounds 16 times what they take. So
 * a bound also follows up to PREDICT_BOUND_KINDS kinds of group
 * (predict_recent_kind(): the estimator passes it), each with a margin of
 * its own:
 *
 *   kind margin = p * scale_k * max(0, Q_q(normalised)) * inflation_k
 *                 * BOUND_KIND_SAFETY
 *
 * with p the prediction (at least BOUND_MIN_NS). scale_k is the mean
 * absolute relative residual |measured - p| / p of the kind's recent
 * groups (the mean of its first ones, then an exponentially weighted mean
 * with weight BOUND_SCALE_WEIGHT): how far a group of that kind strays
 * from its prediction, whatever its size. The shape of the tail takes far
 * more groups to know than one kind sees (a 0.995 quantile needs 200), so
 * the quantile is taken over one window of the context's normalised
 * residuals (relative residual / scale_k of its kind before the group),
 * pooled over the kinds that have a margin of their own.
 *
 * A group of such a kind gets the smaller of its kind's margin and the
 * context's. The smaller only: the host's stalls (a 2 ms draw taking
 * 40 ms) hit steady kinds as often as others and, divided by a steady
 * kind's small scale, put huge values into the pooled window; given to
 * every kind whose margin is wider than the context's, they made bounds
 * up to 2.5 times wider on a noisy host (bench/accuracy, doc/results). A
 * kind whose groups stray far keeps the context's margin, which its
 * overruns widen (inflation, above), while the steady kinds keep their
 * own. BOUND_KIND_SAFETY keeps that choice from being biased low: where
 * the kinds are alike (glmark2's scenes but buffer, or a context of one
 * kind), both margins estimate the same quantile, and the smaller of two
 * noisy estimates falls below it more often than either. Without the
 * factor, 0.04 to 0.23 points more of bench/accuracy's groups went over
 * their bound; with it, about as many as with the context's margin
 * alone, while a kind clearly steadier than the context still gets a
 * margin of its own.
 *
 * A kind's own margin has an inflation of its own, multiplied by
 * BOUND_INFLATE at every group that exceeds it and decaying as the
 * context's: a kind sees too few groups for the context's rule (more
 * exceedances than the quantile allows, with a binomial slack) to tell
 * 0.5 % from 5 %, and widening at once costs little, since the kind's
 * margin never goes beyond the context's. Its scale widens too, by
 * BOUND_SCALE_WEIGHT of the stray residual.
 *
 * A kind has a margin of its own once it learned PREDICT_BOUND_KIND_MIN
 * residuals and the pooled window holds at least 1 / (1 - q) (what a
 * quantile q needs to be more than the largest value); until then, for
 * kind 0 (none) and for kinds not in the table, the bound is the
 * context's. A new kind takes the slot of the kind updated least
 * recently; kinds are found by scanning PREDICT_BOUND_KINDS keys (tens of
 * ns, less than the windows' memmove).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "predict_model.h"
#include "predict_model_priv.h"

#define BOUND_INFLATE	    1.5
#define BOUND_INFLATION_MAX 64.0
#define BOUND_DECAY	    0.995
#define BOUND_BURST_LEN	    4u
/* Weight of the newest group in a kind's scale once it learned 1 / weight groups. */
#define BOUND_SCALE_WEIGHT (1.0 / 64)
/*
 * Relative residuals are taken of predictions of at least this, ns: no
 * division by ~0 (a group the GPU runs takes far more than a microsecond).
 */
#define BOUND_MIN_NS 1000.0
/*
 * Least scale of a kind: one whose groups came in exactly as predicted
 * (0) would make the next residual infinitely far out. Timing noise on a
 * GPU is far above 0.1 %.
 */
#define BOUND_SCALE_MIN 1e-3
/*
 * A kind's margin is its estimate times this (see the top of this file):
 * the smaller of two noisy estimates of the same quantile is too small.
 */
#define BOUND_KIND_SAFETY 1.5
/* Relative residuals are clamped to +-this (a guest's hostile measurements stay finite). */
#define BOUND_RELATIVE_MAX 1e6

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

/* What a bound knows of one kind of group. */
struct bound_kind {
	double scale;	  /* mean |relative residual| of its recent groups */
	double inflation; /* >= 1 */
	uint64_t used;	  /* the bound's clock at its last update: the least is evicted */
	uint32_t seen;	  /* residuals learned, saturating */
};

struct predict_bound {
	double quantile;
	unsigned spared;		     /* largest residuals never taken (see above) */
	struct bound_window residuals;	     /* measured - predicted, ns */
	bool exceeded[PREDICT_BOUND_WINDOW]; /* per ring slot of residuals */
	unsigned exceed_count;		     /* true entries of exceeded[] */
	unsigned run;			     /* current run of consecutive exceedances */
	double inflation;		     /* >= 1 */

	unsigned pool_min;		       /* normalised residuals before kinds use them */
	struct bound_window normalised;	       /* relative residual / scale, all kinds */
	uint64_t kind_of[PREDICT_BOUND_KINDS]; /* the kind in each slot, 0 = free */
	struct bound_kind kind[PREDICT_BOUND_KINDS]; /* per slot */
	uint64_t clock;				     /* updates with a kind */
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
	b->pool_min = (unsigned)ceil(1 / (1 - quantile));
	if (b->pool_min > PREDICT_BOUND_WINDOW)
		b->pool_min = PREDICT_BOUND_WINDOW;
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

/* The slot of @kind, or -1. */
static int kind_find(const struct predict_bound *b, uint64_t kind)
{
	for (int i = 0; i < (int)PREDICT_BOUND_KINDS; i++) {
		if (b->kind_of[i] == kind)
			return i;
	}
	return -1;
}

/* Whether the kind in slot @i has a margin of its own (see the top of this file). */
static bool kind_ready(const struct predict_bound *b, int i)
{
	return i >= 0 && b->kind[i].seen >= PREDICT_BOUND_KIND_MIN &&
	       b->normalised.count >= b->pool_min;
}

static double relative_base(double predicted_ns)
{
	return predicted_ns > BOUND_MIN_NS ? predicted_ns : BOUND_MIN_NS;
}

/* The margin of the kind in slot @i (kind_ready()) for a group predicted @predicted_ns. */
static double kind_margin(const struct predict_bound *b, int i, double predicted_ns)
{
	const struct bound_kind *k = &b->kind[i];
	double q = window_quantile(&b->normalised, b->quantile, b->spared), m;

	if (!(q > 0))
		return 0;
	m = relative_base(predicted_ns) * k->scale * q * k->inflation * BOUND_KIND_SAFETY;
	return m < PREDICT_MODEL_TIME_MAX ? m : PREDICT_MODEL_TIME_MAX;
}

double predict_bound_of_kind(const struct predict_bound *b, uint64_t kind, double predicted_ns)
{
	int i = kind ? kind_find(b, kind) : -1;
	double context, own;

	if (isnan(predicted_ns))
		predicted_ns = 0;
	context = predict_bound_margin(b);
	if (!kind_ready(b, i))
		return predicted_ns + context;
	own = kind_margin(b, i, predicted_ns);
	return predicted_ns + (own < context ? own : context);
}

double predict_bound_of(const struct predict_bound *b, double predicted_ns)
{
	return predict_bound_of_kind(b, 0, predicted_ns);
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

/* The slot for @kind: its own, else a free one or the least recently updated, emptied. */
static int kind_slot(struct predict_bound *b, uint64_t kind)
{
	int i = kind_find(b, kind);

	if (i >= 0)
		return i;
	i = 0;
	for (int j = 1; j < (int)PREDICT_BOUND_KINDS && b->kind_of[i]; j++) {
		if (!b->kind_of[j] || b->kind[j].used < b->kind[i].used)
			i = j;
	}
	b->kind_of[i] = kind;
	b->kind[i] = (struct bound_kind){.inflation = 1};
	return i;
}

static void kind_update(struct predict_bound *b, uint64_t kind, double predicted_ns,
			double measured_ns, bool judged)
{
	int i = kind_slot(b, kind);
	struct bound_kind *k = &b->kind[i];
	double rel, weight;
	bool over;

	rel = (measured_ns - predicted_ns) / relative_base(predicted_ns);
	if (rel > BOUND_RELATIVE_MAX)
		rel = BOUND_RELATIVE_MAX;
	else if (rel < -BOUND_RELATIVE_MAX)
		rel = -BOUND_RELATIVE_MAX;
	/* Judged by its own margin, before this group moves anything. */
	over = judged && kind_ready(b, i) &&
	       measured_ns > predicted_ns + kind_margin(b, i, predicted_ns);
	/* Scale before this group: the normalised residual is one the bound did not see. */
	if (k->seen >= PREDICT_BOUND_KIND_MIN)
		window_push(&b->normalised,
			    rel / (k->scale > BOUND_SCALE_MIN ? k->scale : BOUND_SCALE_MIN));
	weight = 1.0 / (k->seen + 1.0);
	if (weight < BOUND_SCALE_WEIGHT)
		weight = BOUND_SCALE_WEIGHT;
	k->scale += weight * (fabs(rel) - k->scale);
	if (k->seen < UINT32_MAX)
		k->seen++;
	k->used = ++b->clock;
	/* Every exceedance widens a kind's margin (see the top of this file). */
	if (over) {
		k->inflation *= BOUND_INFLATE;
		if (k->inflation > BOUND_INFLATION_MAX)
			k->inflation = BOUND_INFLATION_MAX;
	} else {
		k->inflation = 1 + (k->inflation - 1) * BOUND_DECAY;
	}
}

void predict_bound_update_kind(struct predict_bound *b, uint64_t kind, double predicted_ns,
			       double measured_ns, bool judged)
{
	double r, allowed;
	bool over;
	unsigned slot;

	if (!isfinite(predicted_ns) || !isfinite(measured_ns))
		return;
	if (kind)
		kind_update(b, kind, predicted_ns, measured_ns, judged);
	/* The context's own margin is judged by itself: it is every other kind's fallback. */
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

void predict_bound_update(struct predict_bound *b, double predicted_ns, double measured_ns,
			  bool judged)
{
	predict_bound_update_kind(b, 0, predicted_ns, measured_ns, judged);
}
