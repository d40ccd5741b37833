// SPDX-License-Identifier: MIT
/*
 * Completion timestamp sources (see timestamp_source.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include "gm_fence.h"
#include "worker/timestamp_source.h"

/* ---- fence-callback -------------------------------------------------------- */

static int callback_end_ns(void *state, int sync_fd, uint64_t *end_ns)
{
	return -ENOTSUP;
}

static const struct timestamp_source_ops callback_ops = {
    .version = TIMESTAMP_SOURCE_OPS_VERSION,
    .name = "fence-callback",
    .end_ns = callback_end_ns,
};

/* ---- sync_file -------------------------------------------------------------- */

static int sync_file_end_ns(void *state, int sync_fd, uint64_t *end_ns)
{
	struct sync_fence_info fence;
	struct sync_file_info info;

	memset(&info, 0, sizeof(info));
	memset(&fence, 0, sizeof(fence));
	info.num_fences = 1;
	info.sync_fence_info = (uint64_t)(uintptr_t)&fence;
	if (ioctl(sync_fd, SYNC_IOC_FILE_INFO, &info) < 0)
		return -errno;
	if (fence.status < 0)
		return fence.status;
	if (fence.status == 0 || fence.timestamp_ns == 0)
		return -EAGAIN;
	*end_ns = fence.timestamp_ns;
	return 0;
}

static const struct timestamp_source_ops sync_file_ops = {
    .version = TIMESTAMP_SOURCE_OPS_VERSION,
    .name = "sync_file",
    .end_ns = sync_file_end_ns,
};

/* ---- kmod --------------------------------------------------------------------- */

struct kmod_state {
	int fd; /* /dev/gm_fence */
};

static int kmod_end_ns(void *state, int sync_fd, uint64_t *end_ns)
{
	struct kmod_state *k = state;
	struct gm_fence_resolve res = {.fd = sync_fd};
	struct gm_fence_query q;

	if (ioctl(k->fd, GM_FENCE_IOC_RESOLVE, &res) < 0)
		return -errno;
	memset(&q, 0, sizeof(q));
	q.context = res.context;
	q.seqno = res.seqno;
	if (ioctl(k->fd, GM_FENCE_IOC_QUERY, &q) < 0) {
		/* No longer tracked (or filtered out): the sync_file still knows. */
		return sync_file_end_ns(NULL, sync_fd, end_ns);
	}
	if (!q.signal_ns)
		return -EAGAIN;
	*end_ns = q.signal_ns;
	return 0;
}

static void kmod_destroy(void *state)
{
	struct kmod_state *k = state;

	close(k->fd);
	free(k);
}

static const struct timestamp_source_ops kmod_ops = {
    .version = TIMESTAMP_SOURCE_OPS_VERSION,
    .name = "kmod",
    .end_ns = kmod_end_ns,
    .destroy = kmod_destroy,
};

/* Takes @fd: closed unless the returned state keeps it. */
static struct kmod_state *kmod_open(int fd)
{
	struct gm_fence_version v;
	struct kmod_state *k;

	if (fd < 0)
		return NULL;
	if (ioctl(fd, GM_FENCE_IOC_VERSION, &v) < 0 || v.abi_version != GM_FENCE_ABI_VERSION) {
		close(fd);
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		close(fd);
		return NULL;
	}
	k->fd = fd;
	return k;
}

/* ---- choice ------------------------------------------------------------------- */

void timestamp_source_choose(struct timestamp_source *out, bool have_sync_files, int kmod_fd)
{
	struct kmod_state *k;

	out->ops = &callback_ops;
	out->state = NULL;
	if (!have_sync_files) {
		if (kmod_fd >= 0)
			close(kmod_fd);
		return;
	}
	k = kmod_open(kmod_fd);
	if (k) {
		out->ops = &kmod_ops;
		out->state = k;
		return;
	}
	out->ops = &sync_file_ops;
}

const char *timestamp_source_name(const struct timestamp_source *src)
{
	return src->ops->name;
}

int timestamp_source_end_ns(const struct timestamp_source *src, int sync_fd, uint64_t *end_ns)
{
	return src->ops->end_ns(src->state, sync_fd, end_ns);
}

void timestamp_source_finish(struct timestamp_source *src)
{
	if (src->ops && src->ops->destroy)
		src->ops->destroy(src->state);
	src->ops = &callback_ops;
	src->state = NULL;
}
