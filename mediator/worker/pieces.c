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
	memset(&out->p[0], 0, sizeof(out->p[0]));
	out->p[0].start_dw = 0;
	out->p[0].ndw = ndw;
	out->p[0].share = 1.0;
	out->p[0].est = *est;
	memcpy(out->p[0].x, x, sizeof(out->p[0].x));
}

/*
 * Each piece's estimate from its share: the group's prediction times the
 * share, and the group's margin scaled as a standard deviation is (pieces.h).
 */
static void set_estimates(struct piece_plan *out, const struct predict_estimate *est)
{
	double margin = est->bound_ns - est->predicted_ns, squares = 0;

	for (uint32_t k = 0; k < out->n; k++)
		squares += out->p[k].share * out->p[k].share;
	for (uint32_t k = 0; k < out->n; k++) {
		struct piece *p = &out->p[k];

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

/*
 * Sets each piece's length, share and features from the cut offsets,
 * shares and features up to its start already in @out.
 */
static void finish(struct piece_plan *out, size_t ndw, const double x[PF_COUNT])
{
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
	}
}

/* How a piece's cost falls around its costliest tileable draw (tile_piece()). */
struct draw_in_piece {
	const struct piece_boundary *b;
	double before, draw, after; /* shares of the group */
};

/*
 * The tileable draw of piece @p (which starts at share @start of the
 * group) that costs the most, if it is at least half the piece's cost.
 */
static bool costliest_draw(const struct piece_boundary *b, size_t nb, double total, bool by_cost,
			   const struct piece *p, double start, struct draw_in_piece *d)
{
	size_t end_dw = p->start_dw + p->ndw;
	double best = 0, prev = 0;

	d->b = NULL;
	for (size_t i = 0; i < nb; i++) {
		double at = share_at(b, i, nb, total, by_cost);
		double cost = at > prev ? at - prev : 0;

		if (b[i].tileable && b[i].start_dw >= p->start_dw && b[i].end_dw <= end_dw &&
		    b[i].end_dw > b[i].start_dw && cost > best) {
			best = cost;
			d->b = &b[i];
			d->before = prev - start;
		}
		prev = at > prev ? at : prev;
	}
	if (!d->b || best < p->share / 2)
		return false;
	d->draw = best;
	d->before = d->before > 0 ? d->before : 0;
	d->after = p->share - d->draw - d->before;
	d->after = d->after > 0 ? d->after : 0;
	return true;
}

/*
 * Cuts piece @k of @out into @m tiles of its draw @d: bands of rows of
 * equal height (even rows where they fall inside), each its share of the
 * draw by its rows.
 */
static void tile_piece(struct piece_plan *out, uint32_t k, const struct draw_in_piece *d,
		       uint32_t m)
{
	struct piece whole = out->p[k];
	const struct predict_tiling *t = &d->b->tiling;
	uint32_t rows = t->y1 - t->y0, y = t->y0;
	size_t end_dw = whole.start_dw + whole.ndw;

	memmove(&out->p[k + m], &out->p[k + 1], (out->n - k - 1) * sizeof(out->p[0]));
	out->n += m - 1;
	for (uint32_t j = 0; j < m; j++) {
		struct piece *p = &out->p[k + j];
		uint32_t next =
		    j + 1 == m ? t->y1 : t->y0 + (uint32_t)((uint64_t)rows * (j + 1) / m);

		/* Even rows for a draw's tiles; a clear's bands keep a compressed format's blocks.
		 */
		if (j + 1 < m)
			next = t->clear ? t->y0 + ((next - t->y0) & ~(PIECES_TILE_MIN_ROWS - 1))
					: next & ~1u;
		*p = whole;
		p->tile = j;
		p->tiles = m;
		p->draw_start_dw = d->b->start_dw;
		p->draw_end_dw = d->b->end_dw;
		p->tiling = *t;
		p->band_y0 = y;
		p->band_y1 = next;
		p->start_dw = j == 0 ? whole.start_dw : d->b->start_dw;
		p->ndw = (j + 1 == m ? end_dw : d->b->end_dw) - p->start_dw;
		p->share = d->draw * (double)(next - y) / (double)rows;
		if (j == 0)
			p->share += d->before;
		if (j + 1 == m)
			p->share += d->after;
		for (int i = 0; i < PF_COUNT; i++)
			p->x[i] = whole.share > 0 ? whole.x[i] * p->share / whole.share : 0;
		p->x[PF_GROUP] = 1;
		y = next;
	}
}

/*
 * How many tiles the costliest tileable command @d of a piece, @length
 * being the group's prediction, is cut into at least: as many pieces as
 * its share of the prediction needs; for a clear, also one band per
 * PIECES_CLEAR_BAND_PIXELS, whatever its prediction.
 */
static double tiles_wanted(const struct draw_in_piece *d, double length, uint64_t piece_ns)
{
	const struct predict_tiling *t = &d->b->tiling;
	double m = ceil(length * d->draw / (double)piece_ns), pixels;

	if (!t->clear)
		return m;
	pixels = (double)(t->x1 - t->x0) * (double)(t->y1 - t->y0) * (double)t->layers;
	return fmax(m, ceil(pixels / (double)PIECES_CLEAR_BAND_PIXELS));
}

/*
 * Cuts into scissor tiles each piece still longer than @piece_ns whose
 * cost is mostly one tileable draw, and into bands each whose cost is
 * mostly a clear of more than PIECES_CLEAR_BAND_PIXELS, as far as
 * PIECES_MAX allows.
 */
static void plan_tiles(const struct piece_boundary *b, size_t nb, double total, bool by_cost,
		       double length, uint64_t piece_ns, struct piece_plan *out)
{
	double start = 0;

	for (uint32_t k = 0; k < out->n; k++) {
		struct piece *p = &out->p[k];
		double own = length * p->share, share = p->share;
		struct draw_in_piece d;
		uint32_t m, rows;

		if (costliest_draw(b, nb, total, by_cost, p, start, &d) &&
		    (own > (double)piece_ns || d.b->tiling.clear)) {
			double wanted = tiles_wanted(&d, length, piece_ns);

			rows = d.b->tiling.y1 - d.b->tiling.y0;
			m = wanted < (double)PIECES_MAX ? (uint32_t)wanted : PIECES_MAX;
			if (m > PIECES_MAX - out->n + 1)
				m = PIECES_MAX - out->n + 1;
			if (m > rows / PIECES_TILE_MIN_ROWS)
				m = rows / PIECES_TILE_MIN_ROWS;
			if (m >= 2) {
				tile_piece(out, k, &d, m);
				k += m - 1;
			}
		}
		start += share;
	}
}

/*
 * Cuts the group (one piece in @out) at the boundaries where its cost so
 * far comes closest to each next share of @length in pieces of @piece_ns.
 */
static void cut_at_boundaries(const struct piece_boundary *b, size_t nb, double total_cost,
			      bool by_cost, size_t ndw, double length, uint64_t piece_ns,
			      const double x[PF_COUNT], struct piece_plan *out)
{
	double wanted, prev_share = 0.0;
	uint32_t n;

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
		memset(&out->p[out->n], 0, sizeof(out->p[0]));
		out->p[out->n].start_dw = b[i].end_dw;
		/* until finish(): the share done and the features where it starts */
		out->p[out->n].share = s;
		memcpy(out->p[out->n].x, b[i].x, sizeof(b[i].x));
		out->n++;
	}
	if (out->n > 1) {
		out->p[0].share = 0.0;
		memset(out->p[0].x, 0, sizeof(out->p[0].x));
		finish(out, ndw, x);
	}
}

void pieces_plan(const struct piece_boundary *b, size_t nb, double total_cost, size_t ndw,
		 const struct predict_estimate *est, const double x[PF_COUNT], uint64_t piece_ns,
		 struct piece_plan *out)
{
	/* A young context's model prices nothing well yet: its bound, and equal shares. */
	bool by_cost = !est->young && total_cost > 0.0 && isfinite(total_cost);
	double length = est->young ? est->bound_ns : est->predicted_ns;

	one_piece(ndw, est, x, out);
	if (piece_ns == 0 || nb == 0)
		return;
	if (est->bound_ns > 0.0 && length > (double)piece_ns)
		cut_at_boundaries(b, nb, total_cost, by_cost, ndw, length, piece_ns, x, out);
	/*
	 * Tiles go by the prediction, young or not: a young context's bound
	 * is the longest group it took so far, most often a shader compile,
	 * and would cut every short draw into PIECES_MAX tiles. A large
	 * clear is cut by its size, whatever its prediction: a young
	 * context's first clear of a 64 MiB texture is predicted like its
	 * other first groups, and took 25 to 100 ms (bench/faults, mem-flood).
	 * A group predicted within a piece without such a clear (most
	 * groups: this runs for each) has nothing to tile.
	 */
	if (est->predicted_ns > (double)piece_ns ||
	    x[PF_CLEAR_TEX_PIXELS] > (double)PIECES_CLEAR_BAND_PIXELS)
		plan_tiles(b, nb, total_cost, by_cost, est->predicted_ns, piece_ns, out);
	if (out->n > 1)
		set_estimates(out, est);
}

enum predict_untiled pieces_uncut(const struct piece_plan *plan, const struct piece *p,
				  enum predict_untiled draw, double length, uint64_t piece_ns)
{
	if (!piece_ns || !(length > (double)piece_ns))
		return PREDICT_TILEABLE;
	if (draw != PREDICT_TILEABLE)
		return p->tiles >= 2 ? PREDICT_TILEABLE : draw;
	if ((p->tiles >= 2 || plan->n == PIECES_MAX) && !p->est.young &&
	    length > 2.0 * (double)piece_ns)
		return PREDICT_UNTILED_SPENT;
	return PREDICT_TILEABLE;
}
