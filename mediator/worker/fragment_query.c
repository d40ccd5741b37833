// SPDX-License-Identifier: MIT
/*
 * Occlusion queries around command groups (see fragment_query.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <virgl/virglrenderer.h>

#include "worker/fragment_query.h"
#include "predict.h"

/*
 * One drawing group in this many is measured: the estimators need recent
 * counts, not every one, and an occlusion query makes the rasterizer count
 * samples (wrapping every group cost glmark2 a noticeable share of its
 * frame rate on llvmpipe in bench/overhead: doc/results/2026-11.md).
 */
#define FRAGMENT_QUERY_EVERY 8u
/*
 * Except for a context's first drawing groups: each of these is measured,
 * so that the estimators have counts of this context's own draws soon.
 */
#define FRAGMENT_QUERY_FIRST 16u

/* The host's query object (object handles are per context) and the
 * resource its result goes to (resource ids are global in virglrenderer:
 * one per context, FRAGMENT_QUERY_MAX_CTX_ID of them in the host's range). */
#define FRAGMENT_QUERY_HANDLE PREDICT_HOST_HANDLE_MIN
#define QUERY_RESOURCE(fq)    (PREDICT_HOST_HANDLE_MIN + (fq)->ctx_id)
_Static_assert(PREDICT_HOST_HANDLE_MIN + FRAGMENT_QUERY_MAX_CTX_ID > PREDICT_HOST_HANDLE_MIN,
	       "the query resources stay in the host's range");

struct fragment_query {
	uint32_t ctx_id;
	bool have_resource;
	bool have_object; /* our query object exists in the guest's current sub-context */
	const char *stopped;
	uint64_t pending; /* seq of the wrapped group in flight, 0 if none */
	uint64_t last;	  /* seq of the last wrapped group, 0 if none */
	uint32_t wrapped; /* groups wrapped so far */
	struct virgl_host_query_state state;
	struct iovec iov;
};

struct fragment_query *fragment_query_create(uint32_t ctx_id)
{
	struct fragment_query *fq;

	if (ctx_id > FRAGMENT_QUERY_MAX_CTX_ID)
		return NULL;
	fq = calloc(1, sizeof(*fq));
	if (fq)
		fq->ctx_id = ctx_id;
	return fq;
}

void fragment_query_destroy(struct fragment_query *fq)
{
	if (!fq)
		return;
	if (fq->have_resource)
		virgl_renderer_resource_unref(QUERY_RESOURCE(fq));
	free(fq);
}

static bool submit(struct fragment_query *fq, uint32_t *cmds, int ndw)
{
	if (virgl_renderer_submit_cmd(cmds, (int)fq->ctx_id, ndw) == 0)
		return true;
	fq->stopped = "virglrenderer refused the query commands";
	return false;
}

/*
 * The result resource and, in the current sub-context, the query object.
 * The object is destroyed there first: after the guest switched
 * sub-contexts and back, the one made before may still exist, and a
 * second CREATE_OBJECT of a handle in use would put the guest's context
 * in error (virglrenderer then drops its draws). DESTROY_OBJECT of a
 * handle that does not exist does nothing.
 */
static bool set_up(struct fragment_query *fq)
{
	struct virgl_renderer_resource_create_args args = {
	    .handle = QUERY_RESOURCE(fq),
	    .target = PIPE_BUFFER,
	    .format = VIRGL_FORMAT_R8_UNORM,
	    .bind = VIRGL_RES_BIND_CUSTOM,
	    .width = sizeof(struct virgl_host_query_state),
	    .height = 1,
	    .depth = 1,
	    .array_size = 1,
	};
	uint32_t create[] = {
	    VIRGL_CMD(PREDICT_VIRGL_DESTROY_OBJECT, PREDICT_VIRGL_OBJECT_QUERY, 1),
	    FRAGMENT_QUERY_HANDLE,
	    VIRGL_CMD(PREDICT_VIRGL_CREATE_OBJECT, PREDICT_VIRGL_OBJECT_QUERY, 4),
	    FRAGMENT_QUERY_HANDLE,
	    PIPE_QUERY_OCCLUSION_COUNTER,
	    0,
	    QUERY_RESOURCE(fq),
	};

	if (!fq->have_resource) {
		if (virgl_renderer_resource_create(&args, NULL, 0)) {
			fq->stopped = "virglrenderer refused the query resource";
			return false;
		}
		fq->have_resource = true;
		/* virglrenderer writes results straight into attached memory. */
		fq->iov.iov_base = &fq->state;
		fq->iov.iov_len = sizeof(fq->state);
		virgl_renderer_resource_attach_iov((int)QUERY_RESOURCE(fq), &fq->iov, 1);
		virgl_renderer_ctx_attach_resource((int)fq->ctx_id, (int)QUERY_RESOURCE(fq));
	}
	if (!submit(fq, create, (int)(sizeof(create) / sizeof(create[0]))))
		return false;
	fq->have_object = true;
	return true;
}

bool fragment_query_begin(struct fragment_query *fq, uint64_t seq, const struct group_info *info)
{
	uint32_t begin[] = {VIRGL_CMD(PREDICT_VIRGL_BEGIN_QUERY, 0, 1), FRAGMENT_QUERY_HANDLE};
	uint32_t flags = info->features.flags;

	if (fq->stopped)
		return false;
	if (flags & PFF_QUERY) {
		fq->stopped = "the guest uses queries itself";
		return false;
	}
	if (flags & PFF_SUB_CTX) {
		/* Our object may be in another sub-context now: make one anew, in
		 * whichever is current before a group that stays in it. */
		fq->have_object = false;
		return false;
	}
	if (fq->pending || !info->features.frag.draws ||
	    (fq->wrapped >= FRAGMENT_QUERY_FIRST && seq - fq->last < FRAGMENT_QUERY_EVERY))
		return false;
	if (!fq->have_object && !set_up(fq))
		return false;
	memset(&fq->state, 0, sizeof(fq->state));
	if (!submit(fq, begin, 2))
		return false;
	fq->pending = seq;
	fq->last = seq;
	fq->wrapped++;
	return true;
}

void fragment_query_end(struct fragment_query *fq)
{
	uint32_t end[] = {VIRGL_CMD(PREDICT_VIRGL_END_QUERY, 0, 1), FRAGMENT_QUERY_HANDLE};

	if (!submit(fq, end, 2))
		fq->pending = 0;
}

double fragment_query_take(struct fragment_query *fq, uint64_t seq)
{
	/* The group's fence signalled, so the result is available: virglrenderer
	 * reads it in the guest's GL context (current on this thread) and writes
	 * it into our memory before returning. */
	uint32_t get[] = {
	    VIRGL_CMD(PREDICT_VIRGL_GET_QUERY_RESULT, 0, 2), FRAGMENT_QUERY_HANDLE, 0, /* no wait */
	};

	if (!fq->pending || seq < fq->pending)
		return -1;
	if (seq > fq->pending) { /* ours completed without being taken */
		fq->pending = 0;
		return -1;
	}
	fq->pending = 0;
	if (!submit(fq, get, 3) || fq->state.query_state != VIRGL_QUERY_STATE_DONE)
		return -1;
	return (double)fq->state.result;
}

const char *fragment_query_stopped(const struct fragment_query *fq)
{
	return fq->stopped;
}
