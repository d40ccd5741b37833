// SPDX-License-Identifier: MIT
/*
 * The host memory a client's resources may take (a domain's
 * resource_memory_mb), the same for both transports.
 *
 * Every resource a guest creates costs host storage in the renderer
 * (textures and buffers of the host GL driver) that the guest never pays
 * for. Each one is charged, when it is created, the bytes its description
 * says it needs (resource_host_bytes()); a resource that would take the
 * client past its quota is refused with the transport's error (vtest: the
 * connection closes, as for every refused RESOURCE_CREATE; virtio-gpu:
 * VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY), before the renderer allocates
 * anything. The worker's memory limit (worker_memory_mb, sandbox.h)
 * remains the backstop for what descriptions do not show. Pure; main
 * thread only.
 */
#ifndef MEDIATOR_RESOURCE_QUOTA_H
#define MEDIATOR_RESOURCE_QUOTA_H

#include <stdint.h>

/*
 * Bytes per texel counted for a format this file does not list: 16, the
 * widest texel Mesa's virgl driver asks for (R32G32B32A32; the 64-bit
 * float formats are listed). Compressed and unlisted formats are thereby
 * counted high: the quota errs on refusing.
 */
#define RESOURCE_QUOTA_DEFAULT_TEXEL 16u

/* The fields of a resource description that size its storage (virglrenderer.h's). */
struct resource_desc {
	uint32_t target; /* enum pipe_texture_target */
	uint32_t format; /* enum virgl_formats (virtio-gpu's 2D formats are the same numbers) */
	uint32_t width, height, depth, array_size, last_level, nr_samples;
};

struct resource_quota {
	uint64_t used;
	uint64_t max; /* 0: unlimited */
};

/* Bytes of texel storage @d needs, all mip levels, layers and samples; saturates. */
uint64_t resource_host_bytes(const struct resource_desc *d);
/* Bytes per texel of virgl format @format (RESOURCE_QUOTA_DEFAULT_TEXEL when not listed). */
uint32_t resource_texel_bytes(uint32_t format);

void resource_quota_init(struct resource_quota *q, uint64_t max_bytes);
/* Charges @bytes. 0, or -ENOSPC (nothing charged) when it would pass the quota. */
int resource_quota_admit(struct resource_quota *q, uint64_t bytes);
/* Gives back what resource_quota_admit() charged. */
void resource_quota_release(struct resource_quota *q, uint64_t bytes);

#endif
