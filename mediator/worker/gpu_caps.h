// SPDX-License-Identifier: MIT
/*
 * What names a GPU and driver in saved state: a hash of the renderer's
 * virgl capability set 2 (pure: no renderer, no I/O).
 */
#ifndef MEDIATOR_GPU_CAPS_H
#define MEDIATOR_GPU_CAPS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The hash of a virgl capability set 2 block of @size bytes that names the
 * GPU and driver: the block without the fields that change from one run of
 * the same driver to the next (GPU_CAPS_VOLATILE in gpu_caps.c lists them).
 */
uint64_t gpu_caps_hash(const uint8_t *caps, size_t size);

#endif
