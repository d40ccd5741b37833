// SPDX-License-Identifier: MIT
/*
 * One guest GPU context below the transport layer (see gpu_context.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <virgl/virglrenderer.h>

#include "predict_persist.h"
#include "worker/fragment_query.h"
#include "worker/gpu_caps.h"
#include "worker/gpu_context.h"
#include "worker/pieces.h"
#include "worker/tile_cmds.h"
#include "common/util.h"

/* Groups cut into pieces that may be in flight at once; more are dispatched whole. */
#define GPU_CONTEXT_SPLIT_MAX 8u

/* The learned model state is also saved every this many groups, so that a
 * worker that is killed loses little. */
#define GPU_CONTEXT_SAVE_STATE_EVERY 2000u
/*
 * A temporary file of a save older than this is a save that never
 * finished (its worker stopped mid-way), not one in progress: a save takes
 * milliseconds.
 */
#define GPU_CONTEXT_STALE_SAVE_S 60u

_Static_assert(PREDICT_UNTILED_COUNT <= WIRE_UNTILED_MAX, "the wire holds every untiled reason");

struct gpu_context {
	struct gpu_context_options opt;
	char name[WIRE_NAME_MAX];
	struct stream_cost *cost;
	struct groups *groups;
	struct fragment_query *fragments;
	struct mediator_link *link;
	bool have_virgl_ctx;
	bool fragments_stopped_logged;
	enum predict_untiled untiled_logged; /* why a long draw was last said not to be cut */
	/* The last two groups or pieces that held a draw that may not be cut: measured, ns. */
	double untileable_ns[2];
	char state_path[4096];
	char identity[128];
	uint64_t model_reported_ns;
	uint64_t saved_at; /* groups learned when the state was last saved */
	/* The group being dispatched, piece by piece (gpu_context_prepare()). */
	struct {
		const uint32_t *buf;
		struct group_info whole;
		struct piece_plan plan;
		uint32_t next;		/* the next piece to dispatch; plan.n when none is left */
		struct group_info info; /* the next piece's */
		bool counting;		/* a fragment query runs from its first piece to its last */
	} cur;
	/*
	 * Groups cut into pieces whose last piece has not completed, oldest
	 * first: what the model learns from once all of them did (the whole
	 * group, its pieces' measured times summed).
	 */
	struct split_group {
		struct group_info whole;
		double measured;
		uint64_t first_seq; /* its first piece's: its fragment query's */
	} split[GPU_CONTEXT_SPLIT_MAX];
	uint32_t split_head, split_n;
};

#define ctx_log(level, c, fmt, ...)                                                                \
	log_msg(level, "domain %s client %u context %u (%s): " fmt, (c)->opt.domain,               \
		(c)->opt.client_id, (c)->opt.ctx_id, (c)->name, ##__VA_ARGS__)

static void load_state(struct gpu_context *c)
{
	int r;

	if (!c->opt.state_dir)
		return;
	snprintf(c->state_path, sizeof(c->state_path), "%s/%s.%s.state", c->opt.state_dir,
		 c->opt.domain, stream_cost_model_name(c->cost));
	r = predict_persist_sweep(c->state_path, GPU_CONTEXT_STALE_SAVE_S);
	if (r > 0)
		ctx_log(LOG_LEVEL_INFO, c,
			"removed %d unfinished saves of %s (a worker stopped while it saved)", r,
			c->state_path);
	r = stream_cost_load(c->cost, c->state_path, c->identity);
	if (r == 0)
		ctx_log(LOG_LEVEL_INFO, c, "model %s: learned state loaded from %s",
			stream_cost_model_name(c->cost), c->state_path);
	else if (r == -ESTALE)
		ctx_log(LOG_LEVEL_WARN, c, "%s was learned on another GPU or driver; ignored",
			c->state_path);
	else if (r != -ENOENT)
		ctx_log(LOG_LEVEL_WARN, c, "%s is corrupt or unreadable (%s); ignored",
			c->state_path, strerror(-r));
}

static void save_state(struct gpu_context *c)
{
	int r;

	if (!c->state_path[0] || stream_cost_learned(c->cost) == 0)
		return;
	r = stream_cost_save(c->cost, c->state_path, c->identity);
	if (r < 0)
		ctx_log(LOG_LEVEL_WARN, c, "cannot save the learned state to %s: %s", c->state_path,
			strerror(-r));
}

/* Tells mediatord what the cost model has learned (mediatorctl model). */
static void report_model(struct gpu_context *c)
{
	struct wire_model m;

	stream_cost_report(c->cost, &m);
	m.ctx_id = c->opt.ctx_id;
	mediator_link_send(c->link, &m, sizeof(m));
	c->model_reported_ns = mono_now_ns();
}

/* A calibration client is gone: seed the model with what its groups measured. */
static void finish_calibration(struct gpu_context *c)
{
	char summary[512];
	int r = stream_cost_calibration_finish(c->cost, summary, sizeof(summary));

	if (r == -ENOENT)
		return;
	if (r < 0)
		ctx_log(LOG_LEVEL_WARN, c, "calibration not applied: %s", summary);
	else
		ctx_log(LOG_LEVEL_INFO, c, "calibration applied to model %s: %s",
			stream_cost_model_name(c->cost), summary);
}

static void destroy_parts(struct gpu_context *c)
{
	if (c->have_virgl_ctx)
		virgl_renderer_context_destroy(c->opt.ctx_id);
	fragment_query_destroy(c->fragments);
	groups_destroy(c->groups);
	stream_cost_destroy(c->cost);
	free(c);
}

struct gpu_context *gpu_context_create(const struct gpu_context_options *options)
{
	struct gpu_context *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->opt = *options;
	c->link = options->link;
	snprintf(c->name, sizeof(c->name), "%s", options->name ? options->name : "unnamed");
	c->opt.name = c->name;
	snprintf(c->identity, sizeof(c->identity), "%s",
		 options->identity ? options->identity : "");
	c->cost = stream_cost_create(options->model);
	c->groups = groups_create(options->ctx_id, options->max_inflight);
	c->fragments = fragment_query_create(options->ctx_id);
	if (!c->cost || !c->groups || !c->fragments) {
		log_error("domain %s client %u: out of memory for context %u", options->domain,
			  options->client_id, options->ctx_id);
		destroy_parts(c);
		return NULL;
	}
	if (virgl_renderer_context_create(options->ctx_id, (uint32_t)strlen(c->name), c->name)) {
		ctx_log(LOG_LEVEL_ERROR, c, "virglrenderer cannot create the context");
		destroy_parts(c);
		return NULL;
	}
	c->have_virgl_ctx = true;
	if (options->feature_dump_dir) {
		char path[4096];

		if (options->ctx_id == 1)
			snprintf(path, sizeof(path), "%s/%s-%u.jsonl", options->feature_dump_dir,
				 options->domain, options->client_id);
		else
			snprintf(path, sizeof(path), "%s/%s-%u.%u.jsonl", options->feature_dump_dir,
				 options->domain, options->client_id, options->ctx_id);
		if (stream_cost_dump_to(c->cost, path) < 0)
			ctx_log(LOG_LEVEL_WARN, c, "cannot write features to %s", path);
	}
	load_state(c);
	if (strcmp(c->name, STREAM_COST_CALIBRATION_CLIENT) == 0 &&
	    stream_cost_calibration_start(c->cost) == 0)
		ctx_log(LOG_LEVEL_INFO, c, "calibration client: its groups will seed the model");
	mediator_link_context(c->link, options->ctx_id, true, c->name);
	return c;
}

/*
 * A granted group whose context is going away before its fence: its slot
 * is released at once, charged its bound (never 0; groups.h).
 */
static void release_grant(const struct group_info *info, uint64_t charge_ns, void *data)
{
	struct gpu_context *c = data;

	if (info->grant_id)
		mediator_link_done(c->link, info->grant_id, charge_ns, mono_now_ns());
}

uint32_t gpu_context_drain(struct gpu_context *ctx, void (*poll)(void *data), void *data)
{
	const struct timespec tick = {0, 1000000};
	uint64_t start = mono_now_ns();
	uint32_t left;

	if (!ctx)
		return 0;
	for (;;) {
		poll(data);
		left = groups_inflight(ctx->groups);
		if (left == 0)
			return 0;
		if (mono_now_ns() - start >= GPU_CONTEXT_DRAIN_LIMIT_NS)
			break;
		nanosleep(&tick, NULL);
	}
	ctx_log(LOG_LEVEL_WARN, ctx,
		"%u group(s) still on the GPU %llu ms after the context ended; released unmeasured",
		left, (unsigned long long)(GPU_CONTEXT_DRAIN_LIMIT_NS / 1000000));
	return left;
}

void gpu_context_destroy(struct gpu_context *ctx)
{
	if (!ctx)
		return;
	groups_abandon(ctx->groups, mono_now_ns(), release_grant, ctx);
	finish_calibration(ctx);
	if (stream_cost_learned(ctx->cost))
		report_model(ctx);
	save_state(ctx);
	mediator_link_context(ctx->link, ctx->opt.ctx_id, false, ctx->name);
	destroy_parts(ctx);
}

uint32_t gpu_context_id(const struct gpu_context *ctx)
{
	return ctx->opt.ctx_id;
}

const char *gpu_context_name(const struct gpu_context *ctx)
{
	return ctx->name;
}

struct stream_cost *gpu_context_stream_cost(struct gpu_context *ctx)
{
	return ctx->cost;
}

bool gpu_context_can_dispatch(const struct gpu_context *ctx)
{
	return groups_can_dispatch(ctx->groups);
}

uint32_t gpu_context_inflight(const struct gpu_context *ctx)
{
	return groups_inflight(ctx->groups);
}

/* Sets cur.info to the next piece's: the whole group's, with the piece's estimate and counts. */
static void describe_next_piece(struct gpu_context *c)
{
	const struct piece *p = &c->cur.plan.p[c->cur.next];

	c->cur.info = c->cur.whole;
	c->cur.info.untiled = p->untiled;
	c->cur.info.untileable = p->untileable;
	c->cur.info.young_ns = p->young_ns;
	if (c->cur.plan.n < 2)
		return;
	c->cur.info.est = p->est;
	memcpy(c->cur.info.features.x, p->x, sizeof(p->x));
	c->cur.info.piece = c->cur.next + 1;
	c->cur.info.pieces = c->cur.plan.n;
	c->cur.info.tile = p->tiles >= 2;
	/* Cut after whole commands of a buffer the decoder accepted: cannot fail. */
	predict_cmd_count(c->cur.buf + p->start_dw, p->ndw, &c->cur.info.counts, NULL, NULL);
}

/*
 * Marks each piece just planned that is longer than the piece length
 * @piece_ns and cannot be cut further, with why (struct piece's untiled:
 * its grant request tells mediatord, which refuses it where it fits no
 * gap, oversize = refuse-untiled), and says in the log, once per context
 * and reason, when such a piece is longer than twice the piece length.
 */
static void mark_untiled(struct gpu_context *c, const struct piece_boundary *b, size_t nb,
			 uint64_t piece_ns)
{
	struct piece_plan *plan = &c->cur.plan;
	/* What a young context's untileable draws took: the shorter of the last two (one may
	 * have compiled its shaders). */
	double lately = fmin(c->untileable_ns[0], c->untileable_ns[1]);

	for (uint32_t k = 0; k < plan->n; k++) {
		struct piece *p = &plan->p[k];
		enum predict_untiled why = PREDICT_TILEABLE;
		double length = p->est.predicted_ns;

		p->untiled = PREDICT_TILEABLE;
		p->young_ns = 0;
		for (size_t i = 0; i < nb && why == PREDICT_TILEABLE; i++) {
			if (b[i].draw && !b[i].tileable && b[i].start_dw >= p->start_dw &&
			    b[i].end_dw <= p->start_dw + p->ndw)
				why = b[i].untiled;
		}
		p->untileable = why != PREDICT_TILEABLE;
		if (!piece_ns)
			continue;
		/*
		 * A young model can predict 0.1 ms for a draw that took 36 ms
		 * each time: such a piece asks with what they took, so that the
		 * scheduler can refuse it as oversize (scheduler.h,
		 * SCHED_UNTILED).
		 */
		if (p->untileable && p->tiles < 2 && p->est.young && lately > length) {
			p->young_ns = lately;
			length = lately;
		}
		p->untiled = pieces_uncut(plan, p, why, length, piece_ns);
		if (p->untiled == PREDICT_TILEABLE || p->untiled == c->untiled_logged ||
		    !(length > 2.0 * (double)piece_ns))
			continue;
		c->untiled_logged = p->untiled;
		ctx_log(LOG_LEVEL_WARN, c,
			"a piece of %.1f ms %s: %s; where it fits no gap a safety domain leaves, "
			"mediatord refuses it or runs it whole (oversize)",
			length / 1e6,
			p->untileable ? "holds a draw that is not cut into tiles"
				      : "is not cut further",
			predict_untiled_text(p->untiled));
	}
}

int gpu_context_prepare(struct gpu_context *ctx, const uint32_t *buf, size_t ndw)
{
	struct predict_decode_error err = {0};
	const struct piece_boundary *b;
	uint64_t piece_ns;
	double total;
	size_t nb;

	ctx->cur.buf = NULL;
	ctx->cur.next = ctx->cur.plan.n = 0;
	ctx->cur.counting = false;
	/*
	 * Where the group could be cut is priced (a model evaluation per
	 * command with output) only while it may be cut: while a safety
	 * domain is active (mediator_link_piece_ns()).
	 */
	piece_ns = mediator_link_piece_ns(ctx->link, ctx->opt.piece_ns);
	stream_cost_record_boundaries(ctx->cost, piece_ns != 0);
	if (stream_cost_group(ctx->cost, buf, ndw, &ctx->cur.whole, &err) < 0) {
		ctx_log(LOG_LEVEL_ERROR, ctx, "command buffer refused: command %u at byte %zu: %s",
			err.index, err.offset, err.what ? err.what : "malformed");
		return -EPROTO;
	}
	nb = stream_cost_boundaries(ctx->cost, &b, &total);
	/* Pieces of at most GPU_CONTEXT_SPLIT_MAX groups are learned from at once. */
	pieces_plan(b, ctx->split_n < GPU_CONTEXT_SPLIT_MAX ? nb : 0, total, ndw,
		    &ctx->cur.whole.est, ctx->cur.whole.features.x, piece_ns, &ctx->cur.plan);
	mark_untiled(ctx, b, nb, piece_ns);
	ctx->cur.buf = buf;
	describe_next_piece(ctx);
	return 0;
}

/* Submits @ndw dwords at @dw to the renderer (none: nothing); nonzero on an error. */
static int submit(struct gpu_context *c, const uint32_t *dw, size_t ndw)
{
	if (ndw == 0)
		return 0;
	return virgl_renderer_submit_cmd((void *)dw, (int)c->opt.ctx_id, (int)ndw);
}

/*
 * Submits piece @p: its part of the guest's stream, and for a scissor
 * tile the draw between the commands that set the tile's scissor and, after
 * the last tile, put the guest's state back (tile_cmds.h); for a clear's
 * band, the clear with its box limited to the band's rows. Every part is
 * whole commands; they make one submission, fenced after the last.
 */
static int submit_piece(struct gpu_context *c, const struct piece *p)
{
	const uint32_t *buf = c->cur.buf;
	size_t end = p->start_dw + p->ndw;
	uint32_t cmds[TILE_CMDS_MAX];
	int err = 0;

	if (p->tiles < 2)
		return submit(c, buf + p->start_dw, p->ndw);
	err |= submit(c, buf + p->start_dw, p->draw_start_dw - p->start_dw);
	if (p->tiling.clear) {
		size_t n = tile_cmds_clear_band(p, buf + p->draw_start_dw,
						p->draw_end_dw - p->draw_start_dw, cmds);

		/* The plan cut only a whole CLEAR_TEXTURE (predict_ctx.h). */
		err |= n ? submit(c, cmds, n) : -1;
	} else {
		err |= submit(c, cmds, tile_cmds_before(p, cmds));
		err |= submit(c, buf + p->draw_start_dw, p->draw_end_dw - p->draw_start_dw);
	}
	if (p->tile + 1 == p->tiles) {
		err |= submit(c, cmds, tile_cmds_after(p, cmds));
		err |= submit(c, buf + p->draw_end_dw, end - p->draw_end_dw);
	}
	return err;
}

bool gpu_context_pending(const struct gpu_context *ctx)
{
	return ctx->cur.next < ctx->cur.plan.n;
}

const struct group_info *gpu_context_next_piece(const struct gpu_context *ctx)
{
	return &ctx->cur.info;
}

bool gpu_context_request_grant(struct gpu_context *ctx)
{
	struct group_info *info = &ctx->cur.info;
	uint32_t flags = predict_cmd_no_output(&info->counts) ? WIRE_GRANT_NO_OUTPUT : 0;
	double predicted = info->est.predicted_ns, bound = info->est.bound_ns;

	info->request_ns = mono_now_ns();
	/* mediatord is dead and this domain is served freely (wire.h). */
	if (mediator_link_serving_freely(ctx->link)) {
		info->grant = WIRE_GRANT_NONE;
		info->grant_id = 0;
		return true;
	}
	/* A young context's group asks: the scheduler places it (wire.h). */
	if (info->young_ns > info->est.predicted_ns) {
		predicted = info->young_ns;
		bound = bound > predicted ? bound : predicted;
	}
	if (!info->est.young &&
	    mediator_link_claim_grant(ctx->link, ctx->opt.ctx_id, (uint64_t)predicted,
				      (uint64_t)bound, flags, info->untiled, &info->grant_id)) {
		info->grant = WIRE_GRANT_OFFERED;
		return true;
	}
	info->grant = WIRE_GRANT_ASKED;
	info->grant_id = mediator_link_request_grant(
	    ctx->link, ctx->opt.ctx_id, (uint64_t)predicted, (uint64_t)bound,
	    flags | (info->est.young ? WIRE_GRANT_YOUNG : 0), info->untiled);
	return false;
}

uint64_t gpu_context_dispatch(struct gpu_context *ctx, uint32_t fence_id)
{
	const struct piece *p = &ctx->cur.plan.p[ctx->cur.next];
	const struct group_info *info = &ctx->cur.info;
	uint64_t seq, dispatch_ns, grant_id;
	bool wrapped;

	if (!gpu_context_pending(ctx))
		return 0;
	grant_id = info->grant_id; /* @info becomes the next piece's below */
	dispatch_ns = mono_now_ns();
	seq = groups_dispatch(ctx->groups, dispatch_ns, info);
	/*
	 * The fragment query counts a group: a whole one, or a cut one from
	 * before its first piece to after its last (a query may span
	 * submissions of its context; none of another group comes between).
	 */
	if (info->piece == 1) {
		struct split_group *sg =
		    &ctx->split[(ctx->split_head + ctx->split_n++) % GPU_CONTEXT_SPLIT_MAX];

		sg->whole = ctx->cur.whole;
		sg->measured = 0;
		sg->first_seq = seq;
		ctx->cur.counting = fragment_query_begin(ctx->fragments, seq, &ctx->cur.whole);
	}
	if (info->pieces == 0)
		wrapped = fragment_query_begin(ctx->fragments, seq, info);
	else if ((wrapped = info->piece == info->pieces && ctx->cur.counting))
		ctx->cur.counting = false;
	/*
	 * A group that took the grant board's offer is on the GPU: say so
	 * before handing it to the renderer. mediatord grants nothing until
	 * it knows, and llvmpipe compiles a draw's shader variant inside the
	 * submission: reported after it, a 73 ms compile held every domain's
	 * grants (the watchdog covers only what mediatord knows is in
	 * flight), and the cluster missed 3 frames in scripts/demo.sh --vtest.
	 */
	mediator_link_report_claim(ctx->link);
	if (submit_piece(ctx, p))
		ctx_log(LOG_LEVEL_WARN, ctx,
			"group %llu: virglrenderer reported an error in the stream",
			(unsigned long long)seq);
	if (wrapped)
		fragment_query_end(ctx->fragments);
	if (!ctx->fragments_stopped_logged && fragment_query_stopped(ctx->fragments)) {
		ctx_log(LOG_LEVEL_INFO, ctx, "fragment counts no longer measured: %s",
			fragment_query_stopped(ctx->fragments));
		ctx->fragments_stopped_logged = true;
	}
	if (++ctx->cur.next < ctx->cur.plan.n)
		describe_next_piece(ctx);
	else
		ctx->cur.buf = NULL;
	/* Armed before the fence exists: it may signal at once. */
	mediator_link_arm_done(ctx->link, fence_id, grant_id, dispatch_ns);
	if (renderer_fence(ctx->opt.renderer, ctx->opt.ctx_id, fence_id) < 0) {
		ctx_log(LOG_LEVEL_ERROR, ctx, "cannot create a fence");
		return 0;
	}
	return seq;
}

/*
 * A piece completed: the model learns from its group once the last piece
 * did, from the pieces' measured times summed (each started when it was
 * dispatched or the previous one ended: time between pieces, when the GPU
 * ran another domain's group, is not the group's).
 */
static void learn_piece(struct gpu_context *c, const struct group_info *info, uint64_t measured)
{
	struct split_group *sg = &c->split[c->split_head];

	if (c->split_n == 0)
		return;
	if (!info->tile)
		stream_cost_learn_piece(c->cost, &info->features, (double)measured);
	sg->measured += (double)measured;
	if (info->piece < info->pieces)
		return;
	stream_cost_learn(c->cost, &sg->whole, sg->measured,
			  fragment_query_take(c->fragments, sg->first_seq));
	c->split_head = (c->split_head + 1) % GPU_CONTEXT_SPLIT_MAX;
	c->split_n--;
}

static void emit_group(const struct wire_group *record, const struct group_info *info, void *data)
{
	struct gpu_context *c = data;
	uint64_t measured = record->end_ns - record->start_ns;

	if (info->grant_id)
		mediator_link_done(c->link, info->grant_id, measured, record->end_ns);
	if (info->untileable) {
		c->untileable_ns[1] = c->untileable_ns[0];
		c->untileable_ns[0] = (double)measured;
	}
	if (info->pieces)
		learn_piece(c, info, measured);
	else
		stream_cost_learn(c->cost, info, (double)measured,
				  fragment_query_take(c->fragments, record->seq));
	if (stream_cost_learned(c->cost) - c->saved_at >= GPU_CONTEXT_SAVE_STATE_EVERY) {
		c->saved_at = stream_cost_learned(c->cost);
		save_state(c);
	}
	mediator_link_record(c->link, record);
	if (mono_now_ns() - c->model_reported_ns >= WIRE_MODEL_REPORT_MS * 1000000ull)
		report_model(c);
}

void gpu_context_complete(struct gpu_context *ctx, uint64_t seq, uint64_t end_ns)
{
	groups_complete(ctx->groups, seq, end_ns, emit_group, ctx);
}

void gpu_context_identity(const char *renderer_name, char *out, size_t size)
{
	uint32_t max_ver = 0, max_size = 0;
	uint64_t h = 0;
	uint8_t *caps;

	virgl_renderer_get_cap_set(2, &max_ver, &max_size);
	caps = max_size ? calloc(1, max_size) : NULL;
	if (caps) {
		virgl_renderer_fill_caps(2, max_ver ? 1 : 0, caps);
		h = gpu_caps_hash(caps, max_size);
		free(caps);
	}
	snprintf(out, size, "virglrenderer %s caps2 %016llx", renderer_name, (unsigned long long)h);
}
