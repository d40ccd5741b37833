/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * gm_fence: the user-space interface of gpu-mediator's host kernel module
 * (host-kmod/), shared by the module and mediatord's reader
 * (host-kmod/reader/fence_ring.h).
 *
 * The module records dma-fence events from the kernel's dma_fence
 * tracepoints, timestamped with ktime_get_ns() (CLOCK_MONOTONIC, the clock
 * of every gpu-mediator timestamp) in the tracepoint itself: for a GPU
 * driver, "signaled" fires in its completion interrupt.
 *
 * /dev/gm_fence (mode 0660, root and the device's group) maps read-only:
 *   offset 0:                      struct gm_fence_header
 *   GM_FENCE_RING_OFFSET(cpu):     struct gm_fence_ring_header, then
 *                                  ring_entries struct gm_fence_record
 * One ring per possible CPU; each is written only by its CPU, with
 * interrupts off, and never waits for a reader: a reader that falls more
 * than ring_entries behind loses the oldest records (the gap is in the
 * ring's head; it counts them). A record is valid when, read after it,
 * head - (its index) < ring_entries still holds.
 */
#ifndef GM_FENCE_UAPI_H
#define GM_FENCE_UAPI_H

#ifdef __KERNEL__
#include <linux/ioctl.h>
#include <linux/types.h>
#else
#include <linux/ioctl.h>
#include <linux/types.h>
#endif

#define GM_FENCE_ABI_VERSION 1
#define GM_FENCE_MAGIC	     0x676d6663u /* "gmfc" */
#define GM_FENCE_DEVICE	     "/dev/gm_fence"

#define GM_FENCE_NAME_LEN     32u /* driver and timeline names, NUL-padded */
#define GM_FENCE_RING_ENTRIES 4096u
#define GM_FENCE_PAGE_ALIGN   4096u

enum gm_fence_event {
	GM_FENCE_EVENT_INIT = 1,   /* dma_fence_init: the fence exists */
	GM_FENCE_EVENT_EMIT = 2,   /* dma_fence_emit: its driver handed it to the GPU */
	GM_FENCE_EVENT_SIGNAL = 3, /* dma_fence_signaled: it completed */
};

struct gm_fence_record {
	__u64 context;
	__u64 seqno;
	__u64 time_ns; /* ktime_get_ns() in the tracepoint */
	__u32 event;   /* enum gm_fence_event */
	__u32 cpu;
	char driver[GM_FENCE_NAME_LEN];
	char timeline[GM_FENCE_NAME_LEN];
};

struct gm_fence_header {
	__u32 magic;	    /* GM_FENCE_MAGIC */
	__u32 abi_version;  /* GM_FENCE_ABI_VERSION */
	__u32 nr_rings;	    /* possible CPUs */
	__u32 ring_entries; /* GM_FENCE_RING_ENTRIES */
	__u32 record_size;  /* sizeof(struct gm_fence_record) */
	__u32 ring_stride;  /* bytes from one ring header to the next */
	__u32 rings_offset; /* of ring 0's header */
	__u32 pad;
};

struct gm_fence_ring_header {
	__u64 head; /* records ever written to this ring; record i is at i % ring_entries */
	__u64 pad[7];
};

/* What GM_FENCE_IOC_VERSION answers (the header's numbers). */
struct gm_fence_version {
	__u32 abi_version;
	__u32 nr_rings;
	__u32 ring_entries;
	__u32 record_size;
	__u64 map_size; /* bytes to mmap */
};

/* GM_FENCE_IOC_FILTER: only fences of this driver and/or timeline ("" = any). */
struct gm_fence_filter {
	char driver[GM_FENCE_NAME_LEN];
	char timeline[GM_FENCE_NAME_LEN];
};

/* GM_FENCE_IOC_QUERY: in context and seqno; out the rest. */
struct gm_fence_query {
	__u64 context;
	__u64 seqno;
	__u64 init_ns;	 /* 0 when not seen */
	__u64 emit_ns;	 /* 0 when the driver never emitted it */
	__u64 signal_ns; /* 0 while not signalled */
};

/*
 * GM_FENCE_IOC_RESOLVE: in fd, a sync_file (e.g. exported by a GPU
 * driver or EGL_ANDROID_native_fence_sync); out the context and seqno of
 * its fence (the first one of a merged sync_file), to match with records
 * and GM_FENCE_IOC_QUERY.
 */
struct gm_fence_resolve {
	__s32 fd;
	__u32 pad;
	__u64 context;
	__u64 seqno;
};

#define GM_FENCE_IOC_MAGIC   'G'
#define GM_FENCE_IOC_VERSION _IOR(GM_FENCE_IOC_MAGIC, 1, struct gm_fence_version)
#define GM_FENCE_IOC_FILTER  _IOW(GM_FENCE_IOC_MAGIC, 2, struct gm_fence_filter)
#define GM_FENCE_IOC_QUERY   _IOWR(GM_FENCE_IOC_MAGIC, 3, struct gm_fence_query)
#define GM_FENCE_IOC_RESOLVE _IOWR(GM_FENCE_IOC_MAGIC, 4, struct gm_fence_resolve)

#endif
