// SPDX-License-Identifier: MIT
/*
 * What the vtest transport's files share (vtest_server.h is its public
 * face): struct vtest_server and its resources, and the functions each
 * file offers the other. vtest_server.c runs the connection (replies,
 * the renderer, the loop, the commands but resources'); vtest_resources.c
 * the client's resources: creating them with their shared memory,
 * unreferencing them, and the transfers in and out of them. All on the
 * worker's main thread.
 */
#ifndef MEDIATOR_VTEST_SERVER_PRIV_H
#define MEDIATOR_VTEST_SERVER_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "predict.h"
#include "common/util.h"
#include "common/wire.h"
#include "worker/resource_quota.h"
#include "worker/vtest/vtest_limits.h"
#include "worker/vtest/vtest_outbuf.h"
#include "worker/vtest/vtest_parser.h"
#include "worker/vtest/vtest_server.h"

/* The one virgl context of this client (one context per vtest connection). */
#define VTEST_CTX_ID 1

struct vtest_resource {
	uint32_t handle;
	uint32_t target; /* PIPE_BUFFER (0) holds vertex data worth watching */
	void *shm;	 /* NULL when there is no backing */
	size_t shm_size;
	uint64_t host_bytes; /* charged to the client's quota (resource_quota.h) */
	/* virglrenderer keeps a pointer to the iovec attached as backing, not
	 * a copy: it must live as long as the resource. */
	struct iovec iov;
};

enum blocked_on {
	BLOCKED_NONE = 0,
	BLOCKED_GROUP, /* a SUBMIT_CMD's group waits (a slot, a grant): the runner's */
	BLOCKED_IDLE,  /* a BUSY_WAIT with WAIT waits for all groups */
};

struct vtest_server {
	struct worker_options opt;
	struct vtest_parser *parser;
	struct worker_session *session; /* the link to mediatord; the renderer once opened */
	struct mediator_link *link;	/* the session's */
	struct gpu_context *ctx;	/* once the session is open */
	struct group_runner *runner;	/* takes each SUBMIT_CMD's group to the GPU */
	struct predict_map resources;
	struct vtest_limits limits;
	struct resource_quota quota;
	struct vtest_outbuf *out; /* replies not yet taken by the client */
	bool more;		  /* the work budget ran out with messages left */
	uint32_t protocol_version;
	bool named;	 /* CREATE_RENDERER was received */
	bool gpu_failed; /* the session did not open, or the context was not created */
	char client_name[WIRE_NAME_MAX];
	enum blocked_on blocked;
	struct vtest_msg blocked_msg;
	uint64_t dispatched; /* groups so far: the last fence id */
};

#define srv_log(level, s, fmt, ...)                                                                \
	log_msg(level, "domain %s client %u: " fmt, (s)->opt.domain, (s)->opt.client_id,           \
		##__VA_ARGS__)

/* ---- vtest_server.c ------------------------------------------------------ */

/*
 * Queues a reply: its header (@len_field, @cmd), then @body_len bytes of
 * @body (copied). 0 or a negative errno.
 */
int vtest_server_reply(struct vtest_server *s, uint32_t len_field, uint32_t cmd, const void *body,
		       size_t body_len);
/* Creates the renderer and the GPU context on first use. 0 or a negative errno. */
int vtest_server_need_renderer(struct vtest_server *s);

/* ---- vtest_resources.c --------------------------------------------------- */

/* Detaches and unmaps @res's shared memory, unreferences its virgl resource and frees it. */
void vtest_resource_free(struct vtest_resource *res);
/* @s's resource of @handle, or NULL with the reason in @what (not the client's). */
struct vtest_resource *vtest_resource_lookup(struct vtest_server *s, uint32_t handle,
					     const char **what);
/*
 * The resource commands (the server's command table): each returns 0 or
 * a negative errno with the reason in @what, after which the connection
 * is closed.
 */
int vtest_cmd_resource_create(struct vtest_server *s, const struct vtest_msg *m, const char **what);
int vtest_cmd_resource_create2(struct vtest_server *s, const struct vtest_msg *m,
			       const char **what);
int vtest_cmd_resource_unref(struct vtest_server *s, const struct vtest_msg *m, const char **what);
int vtest_cmd_transfer_get(struct vtest_server *s, const struct vtest_msg *m, const char **what);
int vtest_cmd_transfer_put(struct vtest_server *s, const struct vtest_msg *m, const char **what);
int vtest_cmd_transfer_get2(struct vtest_server *s, const struct vtest_msg *m, const char **what);
int vtest_cmd_transfer_put2(struct vtest_server *s, const struct vtest_msg *m, const char **what);

#endif
