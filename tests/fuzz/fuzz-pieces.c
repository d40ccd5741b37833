// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: where a worker cuts a group into pieces and scissor
 * tiles (mediator/worker/pieces.h, tile_cmds.h), for arbitrary bytes as
 * virgl command groups of one predict_ctx. The first bytes pick the piece
 * length, the group's prediction and bound and whether it is young; the
 * rest is cut into groups at every 0xdeadbeef dword (state carries over
 * between them, as in a worker). Each group the decoder accepts is planned
 * with the boundaries its state tracker reported, priced by a stand-in
 * cost (commands so far), and the plan must hold what the dispatch relies
 * on: at most PIECES_MAX pieces, each inside the group and made of whole
 * commands, in stream order, a tile's draw inside its piece, its band
 * inside the draw's pixels, the bands of one draw in order and touching,
 * the commands around each tile whole and within TILE_CMDS_MAX, a
 * clear's band the clear rewritten whole with the band's rows, shares
 * summing to 1 and every bound at least its prediction. A violation
 * aborts (run under ASan and UBSan).
 *
 *   CC=clang meson setup build-fuzz -Dfuzzing=true \
 *       -Db_sanitize=address,undefined -Db_lundef=false
 *   build-fuzz/tests/fuzz/fuzz-pieces -max_total_time=60
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_groups.h"
#include "worker/pieces.h"
#include "worker/tile_cmds.h"

#define MAX_BOUNDARIES 4096u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct collected {
	struct piece_boundary b[MAX_BOUNDARIES];
	size_t n;
};

static void on_boundary(void *data, const struct predict_boundary *at)
{
	struct collected *c = data;
	struct piece_boundary *b;

	if (c->n == MAX_BOUNDARIES)
		return;
	b = &c->b[c->n++];
	memset(b, 0, sizeof(*b));
	b->start_dw = at->start_dw;
	b->end_dw = at->end_dw;
	b->cost = (double)at->commands * 1e5;
	b->x[PF_GROUP] = 1;
	b->draw = at->draw;
	b->tileable = at->tileable;
	b->tiling = at->tiling;
	b->untiled = at->untiled;
	if (at->tileable && (at->tiling.x1 <= at->tiling.x0 || at->tiling.y1 <= at->tiling.y0 ||
			     at->start_dw >= at->end_dw))
		abort();
}

/* @n dwords at @dw are whole, well-formed commands. */
static void check_whole(const uint32_t *dw, size_t n)
{
	struct predict_cmd_counts counts;

	if (n && predict_cmd_count(dw, n, &counts, NULL, NULL) != 0)
		abort();
}

static void check_plan(const struct piece_plan *plan, const uint32_t *g, size_t ndw,
		       const struct predict_estimate *est)
{
	double shares = 0;
	size_t at = 0;
	uint32_t band_end = 0;

	if (plan->n < 1 || plan->n > PIECES_MAX)
		abort();
	for (uint32_t k = 0; k < plan->n; k++) {
		const struct piece *p = &plan->p[k];
		uint32_t cmds[TILE_CMDS_MAX];
		size_t end = p->start_dw + p->ndw;

		if ((p->ndw == 0 && ndw > 0) || end > ndw ||
		    !(p->share >= 0 && p->share <= 1 + 1e-9) ||
		    !(p->est.bound_ns >= p->est.predicted_ns) || p->est.bound_ns > est->bound_ns) {
			fprintf(stderr,
				"piece %u of %u: [%zu, +%zu) of %zu, share %g, predicted %g, "
				"bound %g (group %g, %g), tile %u of %u\n",
				k, plan->n, p->start_dw, p->ndw, ndw, p->share, p->est.predicted_ns,
				p->est.bound_ns, est->predicted_ns, est->bound_ns, p->tile,
				p->tiles);
			abort();
		}
		if (p->tiles >= 2) {
			const struct predict_tiling *t = &p->tiling;

			if (p->tile >= p->tiles || p->draw_start_dw < p->start_dw ||
			    p->draw_end_dw > end || p->draw_start_dw >= p->draw_end_dw ||
			    p->band_y0 >= p->band_y1 || p->band_y0 < t->y0 || p->band_y1 > t->y1)
				abort();
			if (p->tile > 0 && (p->band_y0 != band_end || at != p->draw_end_dw ||
					    p->start_dw != p->draw_start_dw))
				abort();
			if (p->tile == 0 && (p->band_y0 != t->y0 || p->start_dw != at))
				abort();
			if (p->tile + 1 == p->tiles && p->band_y1 != t->y1)
				abort();
			band_end = p->band_y1;
			check_whole(g + p->start_dw, p->draw_start_dw - p->start_dw);
			check_whole(g + p->draw_start_dw, p->draw_end_dw - p->draw_start_dw);
			check_whole(g + p->draw_end_dw, end - p->draw_end_dw);
			check_whole(cmds, tile_cmds_before(p, cmds));
			check_whole(cmds, tile_cmds_after(p, cmds));
			if (t->clear) {
				/* A clear's band: the clear itself, rewritten whole, its rows the
				 * band's. */
				size_t n =
				    tile_cmds_clear_band(p, g + p->draw_start_dw,
							 p->draw_end_dw - p->draw_start_dw, cmds);

				if (n != p->draw_end_dw - p->draw_start_dw ||
				    cmds[4] != p->band_y0 || cmds[7] != p->band_y1 - p->band_y0 ||
				    (p->band_y0 - t->y0) % PIECES_TILE_MIN_ROWS)
					abort();
				check_whole(cmds, n);
			}
		} else {
			if (p->start_dw != at)
				abort();
			check_whole(g + p->start_dw, p->ndw);
		}
		at = end;
		shares += p->share;
	}
	if (at != ndw || fabs(shares - 1.0) > 1e-6)
		abort();
}

/* What each group is planned with (fuzz_for_each_group()). */
struct run {
	struct predict_ctx *ctx;
	struct predict_estimate est;
	uint64_t piece_ns;
};

static void one_group(const uint32_t *g, size_t n, size_t start, void *arg)
{
	static struct collected c;
	struct run *r = arg;
	struct predict_features f;
	struct predict_decode_error err;
	struct piece_plan plan;

	(void)start;
	c.n = 0;
	predict_ctx_set_boundary_hook(r->ctx, on_boundary, &c);
	if (predict_ctx_submit(r->ctx, g, n, &f, NULL, &err) != 0)
		return;
	pieces_plan(c.b, c.n, (double)f.x[PF_CMDS] * 1e5, n, &r->est, f.x, r->piece_ns, &plan);
	check_plan(&plan, g, n, &r->est);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct predict_resource_desc tex = {
	    .target = 2, .format = 67, .width = 640, .height = 480, .depth = 1, .array_size = 1};
	struct run r = {0};

	if (size < 4)
		return 0;
	r.piece_ns = (uint64_t)(data[0] % 16) * 1000000u;
	r.est.predicted_ns = (double)data[1] * 1e6;
	r.est.bound_ns = r.est.predicted_ns + (double)(data[2] & 0x7f) * 1e6;
	r.est.model_ns = r.est.predicted_ns;
	r.est.young = data[2] >> 7;
	r.ctx = predict_ctx_create();
	if (!r.ctx)
		return 0;
	predict_ctx_resource_create(r.ctx, 1, &tex);
	fuzz_for_each_group(data + 3, size - 3, one_group, &r);
	predict_ctx_destroy(r.ctx);
	return 0;
}
