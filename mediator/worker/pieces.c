// SPDX-License-Identifier: MIT
/*
 * Where a long command group is cut (see pieces.h).
 */
#include <math.h>
#include <string.h>

#include "worker/pieces.h"

/* The share of the group's cost done at boundary @i of @nb. */
static double share_at(const struct piece_boundary *b, size_t i, size_t nb, double total,
		       bool by_cost)
{
	double s = by_cost ? b[i].cost / total : (double)(i + 1) / (double)nb;

	if (!(s > 0.0))
		return 0.0;
	return s > 1.0 ? 1.0 : s;
}

static void one_piece(size_t ndw, const struct predict_estimate *est, const double x[PF_COUNT],
		      struct piece_plan *out)
{
	out->n = 1;
	out->p[0].start_dw = 0;
	out->p[0].ndw = ndw;
	out->p[0].share = 1.0;
	out->p[0].est = *est;
	memcpy(out->p[0].x, x, sizeof(out->p[0].x));
}

/*
 * Sets each piece's length, estimate and features from the cut offsets,
 * shares and features up to its start already in @out.
 */
static void finish(struct piece_plan *out, size_t ndw, const struct predict_estimate *est,
		   const double x[PF_COUNT])
{
	double margin = est->bound_ns - est->predicted_ns, squares = 0;

	for (uint32_t k = 0; k < out->n; k++) {
		double next = k + 1 < out->n ? out->p[k + 1].share : 1.0;

		squares += (next - out->p[k].share) * (next - out->p[k].share);
	}
	for (uint32_t k = 0; k < out->n; k++) {
		struct piece *p = &out->p[k];
		size_t end = k + 1 < out->n ? out->p[k + 1].start_dw : ndw;
		double next = k + 1 < out->n ? out->p[k + 1].share : 1.0;
		const double *x_end = k + 1 < out->n ? out->p[k + 1].x : x;

		/* x holds the features up to the piece's start until here */
		for (int i = 0; i < PF_COUNT; i++) {
			double v = x_end[i] - p->x[i];

			p->x[i] = v > 0 ? v : 0;
		}
		p->x[PF_GROUP] = 1;

		p->ndw = end - p->start_dw;
		/* share holds the share done where the piece starts until here */
		p->share = next - p->share;
		p->est = *est;
		p->est.predicted_ns = est->predicted_ns * p->share;
		p->est.model_ns = est->model_ns * p->share;
		p->est.bound_ns = p->est.predicted_ns;
		if (margin > 0 && squares > 0)
			p->est.bound_ns += margin * p->share / sqrt(squares);
		if (p->est.bound_ns > est->bound_ns)
			p->est.bound_ns = est->bound_ns;
	}
}

void pieces_plan(const struct piece_boundary *b, size_t nb, double total_cost, size_t ndw,
		 const struct predict_estimate *est, const double x[PF_COUNT], uint64_t piece_ns,
		 struct piece_plan *out)
{
	/* A young context's model prices nothing well yet: its bound, and equal shares. */
	bool by_cost = !est->young && total_cost > 0.0 && isfinite(total_cost);
	double length = est->young ? est->bound_ns : est->predicted_ns;
	double wanted, prev_share = 0.0;
	uint32_t n;

	one_piece(ndw, est, x, out);
	if (piece_ns == 0 || !(est->bound_ns > 0.0) || !(length > (double)piece_ns) || nb == 0)
		return;
	wanted = ceil(length / (double)piece_ns);
	n = wanted > PIECES_MAX ? PIECES_MAX : (uint32_t)wanted;
	/*
	 * For each next target share k/n, cut at the usable boundary whose
	 * share is closest to it, after the previous cut.
	 */
	for (size_t i = 0; i < nb && out->n < n; i++) {
		double target = (double)out->n / (double)n;
		double s = share_at(b, i, nb, total_cost, by_cost);
		double s_next;
		bool closer_next;

		/* A piece must do something, and cuts follow the stream. */
		if (s <= prev_share || b[i].end_dw == 0 || b[i].end_dw >= ndw ||
		    b[i].end_dw <= out->p[out->n - 1].start_dw)
			continue;
		if (s < target) {
			/* Not there yet: cut here only if the next usable boundary overshoots more.
			 */
			size_t j = i + 1;

			while (j < nb && (b[j].end_dw <= b[i].end_dw || b[j].end_dw >= ndw))
				j++;
			if (j < nb) {
				s_next = share_at(b, j, nb, total_cost, by_cost);
				closer_next = s_next - target < target - s;
				if (closer_next || s_next < target)
					continue;
			}
		}
		prev_share = s;
		out->p[out->n].start_dw = b[i].end_dw;
		/* until finish(): the share done and the features where it starts */
		out->p[out->n].share = s;
		memcpy(out->p[out->n].x, b[i].x, sizeof(b[i].x));
		out->n++;
	}
	if (out->n == 1)
		return;
	out->p[0].share = 0.0;
	memset(out->p[0].x, 0, sizeof(out->p[0].x));
	finish(out, ndw, est, x);
}
