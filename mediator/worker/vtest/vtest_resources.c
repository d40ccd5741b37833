// SPDX-License-Identifier: MIT
/*
 * A vtest client's resources (vtest_server_priv.h): RESOURCE_CREATE(2)
 * makes a virgl resource with its shared memory (a memfd the client maps,
 * attached as its backing), charged to the client's limits and quota and
 * known to the predictor; RESOURCE_UNREF frees it; TRANSFER_GET/PUT(2)
 * copy between the shared memory or the socket and the resource. Every
 * handle, size and box the client sends is checked before use.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <virgl/virglrenderer.h>

#include "worker/gpu_context.h"
#include "worker/stream_cost.h"
#include "worker/renderer.h"
#include "worker/host_work.h"
#include "worker/vtest/vtest_server_priv.h"

void vtest_resource_free(struct vtest_resource *res)
{
	if (res->shm) {
		virgl_renderer_resource_detach_iov((int)res->handle, NULL, NULL);
		munmap(res->shm, res->shm_size);
	}
	virgl_renderer_resource_unref(res->handle);
	free(res);
}

/*
 * A new memfd of @size bytes for a resource's backing, sealed against
 * shrinking and growing (and further seals) before the client ever sees
 * it: a client that truncated its copy would make every access of the
 * worker's mapping past the new end a SIGBUS. Returns the fd (the caller
 * closes it) or a negative errno.
 */
static int new_backing(size_t size)
{
	int fd = memfd_create("vtest-res", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int r;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

/* Maps a new sealed backing of @size bytes into @res; returns its fd or a negative errno. */
static int attach_backing(struct vtest_resource *res, size_t size)
{
	int fd = new_backing(size);
	void *p;

	if (fd < 0)
		return fd;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int r = -errno;

		close(fd);
		return r;
	}
	res->shm = p;
	res->shm_size = size;
	return fd;
}

static void predict_resource(struct vtest_server *s, const struct vtest_resource *res,
			     const struct virgl_renderer_resource_create_args *args)
{
	const struct predict_resource_desc desc = {
	    .target = args->target,
	    .format = args->format,
	    .bind = args->bind,
	    .width = args->width,
	    .height = args->height,
	    .depth = args->depth,
	    .array_size = args->array_size,
	    .last_level = args->last_level,
	    .nr_samples = args->nr_samples,
	};

	/* Prediction only loses this resource's size if it fails. */
	stream_cost_resource_create(gpu_context_stream_cost(s->ctx), res->handle, &desc);
}

/*
 * RESOURCE_CREATE(2). Every refusal ends the connection, as the reference
 * server's does: versions 0 to 2 have no reply that could carry an error
 * (RESOURCE_CREATE2's only reply is the backing's fd).
 */
static int create_resource(struct vtest_server *s, const uint32_t *p, uint32_t shm_size,
			   bool with_shm, const char **what)
{
	struct virgl_renderer_resource_create_args args = {
	    .handle = p[0],
	    .target = p[1],
	    .format = p[2],
	    .bind = p[3],
	    .width = p[4],
	    .height = p[5],
	    .depth = p[6],
	    .array_size = p[7],
	    .last_level = p[8],
	    .nr_samples = p[9],
	    .flags = 0,
	};
	uint64_t backing = with_shm ? shm_size : 0;
	const struct resource_desc desc = {args.target,	    args.format,    args.width,
					   args.height,	    args.depth,	    args.array_size,
					   args.last_level, args.nr_samples};
	uint64_t host_bytes = resource_host_bytes(&desc);
	struct vtest_resource *res;
	int fd = -1;
	int r;

	if (vtest_server_need_renderer(s) < 0) {
		*what = "renderer unavailable";
		return -ENODEV;
	}
	if (args.handle == 0) {
		*what = "resource handle 0";
		return -EINVAL;
	}
	if (args.handle >= PREDICT_HOST_HANDLE_MIN) {
		*what = "resource handle reserved for the host";
		return -EINVAL;
	}
	if (predict_map_get(&s->resources, args.handle)) {
		*what = "resource handle already in use";
		return -EEXIST;
	}
	if (resource_quota_admit(&s->quota, host_bytes) < 0) {
		srv_log(LOG_LEVEL_WARN, s,
			"resource %u of %llu MiB refused: its resources would pass the domain's "
			"host memory quota (resource_memory_mb %llu, %llu MiB held)",
			args.handle, (unsigned long long)(host_bytes >> 20),
			(unsigned long long)(s->quota.max >> 20),
			(unsigned long long)(s->quota.used >> 20));
		*what = "host memory quota reached";
		return -ENOSPC;
	}
	r = vtest_limits_admit(&s->limits, backing, what);
	if (r < 0) {
		resource_quota_release(&s->quota, host_bytes);
		return r;
	}
	res = calloc(1, sizeof(*res));
	if (!res) {
		vtest_limits_release(&s->limits, backing);
		resource_quota_release(&s->quota, host_bytes);
		return -ENOMEM;
	}
	res->host_bytes = host_bytes;
	res->handle = args.handle;
	res->target = args.target;
	host_work_begin(host_bytes);
	r = virgl_renderer_resource_create(&args, NULL, 0);
	host_work_end();
	if (r) {
		/* virglrenderer refused the description: a client error. */
		vtest_limits_release(&s->limits, backing);
		resource_quota_release(&s->quota, host_bytes);
		free(res);
		*what = "virglrenderer refused the resource description";
		return -EINVAL;
	}
	virgl_renderer_ctx_attach_resource(VTEST_CTX_ID, (int)args.handle);
	if (backing) {
		fd = attach_backing(res, backing);
		if (fd < 0) {
			r = fd;
			fd = -1;
			goto fail;
		}
	}
	r = predict_map_add(&s->resources, res->handle, res);
	if (r < 0)
		goto fail;
	predict_resource(s, res, &args);
	if (res->shm) {
		res->iov.iov_base = res->shm;
		res->iov.iov_len = res->shm_size;
		virgl_renderer_resource_attach_iov((int)res->handle, &res->iov, 1);
		/* The queue owns the fd from here. */
		r = vtest_outbuf_push_fd(s->out, fd);
		if (r < 0) {
			*what = "cannot queue the backing fd";
			return r;
		}
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	*what = "cannot allocate the resource backing";
	vtest_limits_release(&s->limits, backing);
	resource_quota_release(&s->quota, host_bytes);
	vtest_resource_free(res);
	return r;
}

int vtest_cmd_resource_create(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	return create_resource(s, m->payload, 0, false, what);
}

int vtest_cmd_resource_create2(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	return create_resource(s, m->payload, m->payload[10], true, what);
}

struct vtest_resource *vtest_resource_lookup(struct vtest_server *s, uint32_t handle,
					     const char **what)
{
	struct vtest_resource *res = predict_map_get(&s->resources, handle);

	if (!res)
		*what = "resource handle not owned by this client";
	return res;
}

int vtest_cmd_resource_unref(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	struct vtest_resource *res = vtest_resource_lookup(s, m->payload[0], what);

	if (!res)
		return -ENOENT;
	predict_map_remove(&s->resources, res->handle);
	stream_cost_resource_destroy(gpu_context_stream_cost(s->ctx), res->handle);
	vtest_limits_release(&s->limits, res->shm_size);
	resource_quota_release(&s->quota, res->host_bytes);
	virgl_renderer_ctx_detach_resource(VTEST_CTX_ID, (int)res->handle);
	vtest_resource_free(res);
	return 0;
}

static void box_from(struct virgl_box *box, const uint32_t *p)
{
	box->x = p[0];
	box->y = p[1];
	box->z = p[2];
	box->w = p[3];
	box->h = p[4];
	box->d = p[5];
}

/*
 * v0 transfers: data travels inline in the messages.
 *
 * TRANSFER_GET has no reply header: the client reads data size bytes
 * whatever happens. The reference server sends them even when
 * virglrenderer refused the read (whatever its buffer held) and goes on
 * serving; so does this one, but it sends zeros then, so that nothing
 * virglrenderer did not produce (not even half a read) reaches the
 * client. The reply is queued like any other: a client that reads it
 * slowly holds only its own connection.
 */
int vtest_cmd_transfer_get(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	const uint32_t *p = m->payload;
	struct vtest_resource *res = vtest_resource_lookup(s, p[0], what);
	uint32_t data_size = p[10];
	struct virgl_box box;
	struct iovec iov;
	int r;

	if (!res)
		return -ENOENT;
	if (data_size > VTEST_DEFAULT_MAX_PAYLOAD) {
		*what = "transfer size beyond the limit";
		return -EMSGSIZE;
	}
	if (data_size == 0)
		return 0;
	box_from(&box, p + 4);
	iov.iov_len = data_size;
	iov.iov_base = calloc(1, data_size);
	if (!iov.iov_base)
		return -ENOMEM;
	host_work_begin(data_size);
	r = virgl_renderer_transfer_read_iov(res->handle, VTEST_CTX_ID, p[1], p[2], p[3], &box, 0,
					     &iov, 1);
	host_work_end();
	if (r) {
		free(iov.iov_base);
		srv_log(LOG_LEVEL_WARN, s,
			"TRANSFER_GET of resource %u refused by virglrenderer; answering %u zero "
			"bytes",
			res->handle, data_size);
		return vtest_outbuf_push_zeros(s->out, data_size);
	}
	return vtest_outbuf_push_owned(s->out, iov.iov_base, data_size);
}

int vtest_cmd_transfer_put(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	const uint32_t *p = m->payload;
	struct vtest_resource *res = vtest_resource_lookup(s, p[0], what);
	uint32_t data_size = p[10];
	struct virgl_box box;
	struct iovec iov;
	int r;

	if (!res)
		return -ENOENT;
	if (data_size > m->payload_bytes - VCMD_TRANSFER_HDR_SIZE * sizeof(uint32_t)) {
		*what = "transfer size beyond the message";
		return -EMSGSIZE;
	}
	box_from(&box, p + 4);
	iov.iov_base = (void *)(p + VCMD_TRANSFER_HDR_SIZE);
	iov.iov_len = data_size;
	if (res->target == PIPE_BUFFER)
		stream_cost_resource_write(gpu_context_stream_cost(s->ctx), res->handle, box.x,
					   iov.iov_base, data_size);
	host_work_begin(data_size);
	r = virgl_renderer_transfer_write_iov(res->handle, VTEST_CTX_ID, (int)p[1], p[2], p[3],
					      &box, 0, &iov, 1);
	host_work_end();
	if (r)
		srv_log(LOG_LEVEL_WARN, s, "TRANSFER_PUT to resource %u refused by virglrenderer",
			res->handle);
	return 0;
}

/* v2 transfers: data goes through the resource's shared-memory backing. */
static int transfer2(struct vtest_server *s, const struct vtest_msg *m, bool put, const char **what)
{
	const uint32_t *p = m->payload;
	struct vtest_resource *res = vtest_resource_lookup(s, p[0], what);
	uint32_t data_size = p[8], offset = p[9];
	struct virgl_box box;
	int r;

	if (!res)
		return -ENOENT;
	/* The transfer starts inside the backing; virglrenderer checks that
	 * the box, with the resource's strides, fits the backing it was
	 * given (Mesa's data_size may count padding past its end). */
	if (!res->shm || offset >= res->shm_size) {
		*what = "transfer offset outside the resource's backing";
		return -EFAULT;
	}
	if (data_size > res->shm_size - offset)
		data_size = (uint32_t)(res->shm_size - offset);
	box_from(&box, p + 2);
	if (put && res->target == PIPE_BUFFER)
		stream_cost_resource_write(gpu_context_stream_cost(s->ctx), res->handle, box.x,
					   (const uint8_t *)res->shm + offset, data_size);
	host_work_begin(data_size);
	if (put)
		r = virgl_renderer_transfer_write_iov(res->handle, VTEST_CTX_ID, (int)p[1], 0, 0,
						      &box, offset, NULL, 0);
	else
		r = virgl_renderer_transfer_read_iov(res->handle, VTEST_CTX_ID, p[1], 0, 0, &box,
						     offset, NULL, 0);
	host_work_end();
	if (r)
		srv_log(LOG_LEVEL_WARN, s, "%s on resource %u refused by virglrenderer",
			put ? "TRANSFER_PUT2" : "TRANSFER_GET2", res->handle);
	return 0;
}

int vtest_cmd_transfer_get2(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	return transfer2(s, m, false, what);
}

int vtest_cmd_transfer_put2(struct vtest_server *s, const struct vtest_msg *m, const char **what)
{
	return transfer2(s, m, true, what);
}
