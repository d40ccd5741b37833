// SPDX-License-Identifier: MIT
/*
 * What one vtest client may cost its worker: how many resources and how
 * many bytes of shared memory it holds at once (vtest_limits), and how
 * much of its input is handled per wake-up of the worker (vtest_budget).
 *
 * A worker serves exactly one vtest connection (mediatord starts one per
 * accepted connection), so the per-connection limits are the worker's too.
 * Pure bookkeeping, no I/O; the caller embeds both structs.
 */
#ifndef MEDIATOR_VTEST_LIMITS_H
#define MEDIATOR_VTEST_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Most resources one client may hold at once. glmark2 and es2gears hold a
 * few hundred; every resource with shared memory costs the worker one
 * mapping, and the kernel's default vm.max_map_count is 65530 per process:
 * half of it leaves room for Mesa, LLVM and virglrenderer's own.
 */
#define VTEST_MAX_RESOURCES 32768u
/*
 * Most shared memory (RESOURCE_CREATE2 backing) one client may hold at
 * once: 1 GiB. A 4096x4096 RGBA8 texture with its mipmaps is 85 MiB; the
 * Mesa clients of the test suite hold far less than 100 MiB. What a
 * client writes into its backing is host memory charged to nobody else,
 * so this bounds what a hostile client can make the host hold.
 */
#define VTEST_MAX_SHM_BYTES (1ull << 30)

struct vtest_limits {
	uint32_t resources;
	uint64_t shm_bytes;
	uint32_t max_resources;
	uint64_t max_shm_bytes;
};

/* Starts empty; 0 for either maximum: the VTEST_MAX_* default. */
void vtest_limits_init(struct vtest_limits *limits, uint32_t max_resources, uint64_t max_shm_bytes);
/*
 * Counts one more resource with @shm_bytes of backing (0: none). Returns
 * 0, or -ENOSPC (and counts nothing) when either limit would be passed;
 * *@what (may be NULL) then names the limit.
 */
int vtest_limits_admit(struct vtest_limits *limits, uint64_t shm_bytes, const char **what);
/* Uncounts a resource admitted with @shm_bytes. */
void vtest_limits_release(struct vtest_limits *limits, uint64_t shm_bytes);

/*
 * Work done per wake-up. While the worker handles client messages it
 * does not take fence completions or talk to mediatord, whose scheduler
 * takes the GPU as busy until the worker reports a group done. A client
 * that pipelines thousands of cheap commands (or many large transfers)
 * could keep it there; after VTEST_BUDGET_MSGS messages or
 * VTEST_BUDGET_BYTES of payload, whichever comes first, the worker goes
 * back to its poll (with a zero timeout) before it takes more. One frame
 * of glmark2 is a handful of messages; 64 keeps a pipelining client's
 * throughput while a turn stays well under a millisecond of parsing. 8
 * MiB is a few milliseconds of copying; a single larger message (a
 * TRANSFER_PUT of up to the parser's 64 MiB) is still handled whole.
 */
#define VTEST_BUDGET_MSGS  64u
#define VTEST_BUDGET_BYTES (8u << 20)

struct vtest_budget {
	uint32_t msgs;
	size_t bytes;
};

/* A fresh allowance for one wake-up. */
void vtest_budget_init(struct vtest_budget *budget);
/* One message of @bytes was handled. */
void vtest_budget_charge(struct vtest_budget *budget, size_t bytes);
/* True once the allowance is used up: take no further message this turn. */
bool vtest_budget_spent(const struct vtest_budget *budget);

#endif
