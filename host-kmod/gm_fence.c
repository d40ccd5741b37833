// SPDX-License-Identifier: GPL-2.0
/*
 * gm_fence: dma-fence completion timestamps for gpu-mediator.
 *
 * Overview: probes on the kernel's dma_fence tracepoints (init, emit,
 * signaled) record each event with ktime_get_ns() taken in the tracepoint,
 * which for a GPU driver runs in its completion interrupt, into a per-CPU
 * ring that user space maps read-only through the misc device /dev/gm_fence
 * (uapi/gm_fence.h gives the layout). A direct-mapped table of the most
 * recent GM_FENCE_TRACKED fences answers GM_FENCE_IOC_QUERY by (context,
 * seqno). No driver is patched: any driver's fences are seen.
 *
 * Context: the probes run wherever fences are initialised and signalled,
 * including hard-IRQ context with the fence's lock held. They never sleep
 * and never allocate: a ring slot is written with local interrupts off on
 * the CPU that owns the ring, the table under a raw spinlock. A reader that
 * does not keep up loses the oldest records; the GPU path never waits.
 *
 * Lifetime: the rings live from load to unload; the device holds a module
 * reference while it is open or mapped (.owner), so rmmod waits until the
 * last reader is gone, and unload waits for running probes to finish
 * (tracepoint_synchronize_unregister()) before freeing anything.
 */
#include <linux/dma-fence-array.h>
#include <linux/dma-fence.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/sync_file.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "uapi/gm_fence.h"

/* Fences GM_FENCE_IOC_QUERY can answer for: the most recent ones, by hash. */
#define GM_FENCE_TRACKED 8192u

struct tracked {
	u64 context, seqno;
	u64 init_ns, emit_ns, signal_ns;
	bool used;
};

static void *area;	/* vmalloc_user: header, then one ring per possible CPU */
static size_t area_size;
static struct gm_fence_header *hdr;
static struct tracked *table;
static DEFINE_RAW_SPINLOCK(table_lock); /* the table and the filter */
static struct gm_fence_filter filter;
static bool filtering;

static struct gm_fence_ring_header *ring_of(unsigned int cpu)
{
	return area + hdr->rings_offset + (size_t)cpu * hdr->ring_stride;
}

static struct gm_fence_record *records_of(struct gm_fence_ring_header *ring)
{
	return (struct gm_fence_record *)(ring + 1);
}

static void copy_name(char *dst, const char *src)
{
	strscpy_pad(dst, src ? src : "", GM_FENCE_NAME_LEN);
}

/* Called with table_lock held. */
static bool filtered_out(const char *driver, const char *timeline)
{
	if (!filtering)
		return false;
	if (filter.driver[0] && strncmp(filter.driver, driver, GM_FENCE_NAME_LEN))
		return true;
	if (filter.timeline[0] && strncmp(filter.timeline, timeline, GM_FENCE_NAME_LEN))
		return true;
	return false;
}

static struct tracked *slot_of(u64 context, u64 seqno)
{
	u64 h = (context * 0x9e3779b97f4a7c15ull) ^ (seqno * 0xc2b2ae3d27d4eb4full);

	return &table[(h >> 17) % GM_FENCE_TRACKED];
}

static void record(struct dma_fence *fence, u32 event)
{
	u64 now = ktime_get_ns();
	char driver[GM_FENCE_NAME_LEN], timeline[GM_FENCE_NAME_LEN];
	struct gm_fence_ring_header *ring;
	struct gm_fence_record *rec;
	struct tracked *t;
	unsigned long flags;
	u64 head;

	copy_name(driver, fence->ops->get_driver_name(fence));
	copy_name(timeline, fence->ops->get_timeline_name(fence));

	raw_spin_lock_irqsave(&table_lock, flags);
	if (filtered_out(driver, timeline)) {
		raw_spin_unlock_irqrestore(&table_lock, flags);
		return;
	}
	t = slot_of(fence->context, fence->seqno);
	if (event == GM_FENCE_EVENT_INIT || !t->used || t->context != fence->context ||
	    t->seqno != fence->seqno) {
		memset(t, 0, sizeof(*t));
		t->used = true;
		t->context = fence->context;
		t->seqno = fence->seqno;
	}
	if (event == GM_FENCE_EVENT_INIT)
		t->init_ns = now;
	else if (event == GM_FENCE_EVENT_EMIT)
		t->emit_ns = now;
	else
		t->signal_ns = now;

	/* Interrupts are off: this CPU's ring has one writer. */
	ring = ring_of(raw_smp_processor_id());
	head = ring->head;
	rec = &records_of(ring)[head % GM_FENCE_RING_ENTRIES];
	rec->context = fence->context;
	rec->seqno = fence->seqno;
	rec->time_ns = now;
	rec->event = event;
	rec->cpu = raw_smp_processor_id();
	memcpy(rec->driver, driver, GM_FENCE_NAME_LEN);
	memcpy(rec->timeline, timeline, GM_FENCE_NAME_LEN);
	/* The record is complete before the head says so. */
	smp_store_release(&ring->head, head + 1);
	raw_spin_unlock_irqrestore(&table_lock, flags);
}

static void probe_init(void *data, struct dma_fence *fence)
{
	record(fence, GM_FENCE_EVENT_INIT);
}

static void probe_emit(void *data, struct dma_fence *fence)
{
	record(fence, GM_FENCE_EVENT_EMIT);
}

static void probe_signaled(void *data, struct dma_fence *fence)
{
	record(fence, GM_FENCE_EVENT_SIGNAL);
}

/* The tracepoints, found by name: not every one is exported to modules. */
static struct {
	const char *name;
	void *probe;
	struct tracepoint *tp;
} hooks[] = {
	{ "dma_fence_init", probe_init },
	{ "dma_fence_emit", probe_emit },
	{ "dma_fence_signaled", probe_signaled },
};

static void find_tracepoint(struct tracepoint *tp, void *priv)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(hooks); i++)
		if (!strcmp(tp->name, hooks[i].name))
			hooks[i].tp = tp;
}

/* ---- the device ---------------------------------------------------------- */

static int gm_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	if (vma->vm_pgoff != 0 || vma->vm_end - vma->vm_start > area_size)
		return -EINVAL;
	vma->vm_flags &= ~VM_MAYWRITE;
	return remap_vmalloc_range(vma, area, 0);
}

static long gm_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	if (_IOC_TYPE(cmd) != GM_FENCE_IOC_MAGIC)
		return -ENOTTY;
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(GM_FENCE_IOC_VERSION): {
		struct gm_fence_version v = {
			.abi_version = GM_FENCE_ABI_VERSION,
			.nr_rings = hdr->nr_rings,
			.ring_entries = hdr->ring_entries,
			.record_size = hdr->record_size,
			.map_size = area_size,
		};

		if (cmd != GM_FENCE_IOC_VERSION)
			return -EINVAL;
		return copy_to_user(uarg, &v, sizeof(v)) ? -EFAULT : 0;
	}
	case _IOC_NR(GM_FENCE_IOC_FILTER): {
		struct gm_fence_filter f;
		unsigned long flags;

		if (cmd != GM_FENCE_IOC_FILTER)
			return -EINVAL;
		if (copy_from_user(&f, uarg, sizeof(f)))
			return -EFAULT;
		if (strnlen(f.driver, GM_FENCE_NAME_LEN) == GM_FENCE_NAME_LEN ||
		    strnlen(f.timeline, GM_FENCE_NAME_LEN) == GM_FENCE_NAME_LEN)
			return -EINVAL;
		raw_spin_lock_irqsave(&table_lock, flags);
		filter = f;
		filtering = f.driver[0] || f.timeline[0];
		raw_spin_unlock_irqrestore(&table_lock, flags);
		return 0;
	}
	case _IOC_NR(GM_FENCE_IOC_QUERY): {
		struct gm_fence_query q;
		struct tracked *t;
		unsigned long flags;
		int r = 0;

		if (cmd != GM_FENCE_IOC_QUERY)
			return -EINVAL;
		if (copy_from_user(&q, uarg, sizeof(q)))
			return -EFAULT;
		raw_spin_lock_irqsave(&table_lock, flags);
		t = slot_of(q.context, q.seqno);
		if (t->used && t->context == q.context && t->seqno == q.seqno) {
			q.init_ns = t->init_ns;
			q.emit_ns = t->emit_ns;
			q.signal_ns = t->signal_ns;
		} else {
			r = -ENOENT;
		}
		raw_spin_unlock_irqrestore(&table_lock, flags);
		if (r)
			return r;
		return copy_to_user(uarg, &q, sizeof(q)) ? -EFAULT : 0;
	}
	case _IOC_NR(GM_FENCE_IOC_RESOLVE): {
		struct gm_fence_resolve res;
		struct dma_fence *fence, *first;

		if (cmd != GM_FENCE_IOC_RESOLVE)
			return -EINVAL;
		if (copy_from_user(&res, uarg, sizeof(res)))
			return -EFAULT;
		fence = sync_file_get_fence(res.fd);
		if (!fence)
			return -EINVAL; /* not a sync_file */
		first = fence;
		if (dma_fence_is_array(fence) && to_dma_fence_array(fence)->num_fences)
			first = to_dma_fence_array(fence)->fences[0];
		res.context = first->context;
		res.seqno = first->seqno;
		dma_fence_put(fence);
		return copy_to_user(uarg, &res, sizeof(res)) ? -EFAULT : 0;
	}
	default:
		return -ENOTTY;
	}
}

static const struct file_operations gm_fops = {
	.owner = THIS_MODULE,
	.mmap = gm_mmap,
	.unlocked_ioctl = gm_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice gm_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "gm_fence",
	.fops = &gm_fops,
	.mode = 0660,
};

static void unhook(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(hooks); i++)
		if (hooks[i].tp)
			tracepoint_probe_unregister(hooks[i].tp, hooks[i].probe, NULL);
	/* No probe runs any more when this returns. */
	tracepoint_synchronize_unregister();
}

static int __init gm_fence_init(void)
{
	size_t ring_bytes = sizeof(struct gm_fence_ring_header) +
			    (size_t)GM_FENCE_RING_ENTRIES * sizeof(struct gm_fence_record);
	unsigned int nr = num_possible_cpus();
	int i, r;

	ring_bytes = ALIGN(ring_bytes, PAGE_SIZE);
	area_size = PAGE_SIZE + (size_t)nr * ring_bytes;
	area = vmalloc_user(area_size); /* zeroed */
	table = kvcalloc(GM_FENCE_TRACKED, sizeof(*table), GFP_KERNEL);
	if (!area || !table) {
		r = -ENOMEM;
		goto fail;
	}
	hdr = area;
	hdr->magic = GM_FENCE_MAGIC;
	hdr->abi_version = GM_FENCE_ABI_VERSION;
	hdr->nr_rings = nr;
	hdr->ring_entries = GM_FENCE_RING_ENTRIES;
	hdr->record_size = sizeof(struct gm_fence_record);
	hdr->ring_stride = ring_bytes;
	hdr->rings_offset = PAGE_SIZE;

	for_each_kernel_tracepoint(find_tracepoint, NULL);
	for (i = 0; i < ARRAY_SIZE(hooks); i++) {
		if (!hooks[i].tp) {
			/* dma_fence_signaled is what this module is for. */
			if (hooks[i].probe == probe_signaled) {
				pr_err("gm_fence: tracepoint %s not found\n", hooks[i].name);
				r = -ENOENT;
				goto fail_hooks;
			}
			continue;
		}
		r = tracepoint_probe_register(hooks[i].tp, hooks[i].probe, NULL);
		if (r) {
			hooks[i].tp = NULL;
			goto fail_hooks;
		}
	}
	r = misc_register(&gm_dev);
	if (r)
		goto fail_hooks;
	pr_info("gm_fence: %u rings of %u records on /dev/%s\n", nr, GM_FENCE_RING_ENTRIES,
		gm_dev.name);
	return 0;
fail_hooks:
	unhook();
fail:
	kvfree(table);
	vfree(area);
	return r;
}

static void __exit gm_fence_exit(void)
{
	misc_deregister(&gm_dev);
	unhook();
	kvfree(table);
	vfree(area);
}

module_init(gm_fence_init);
module_exit(gm_fence_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("gpu-mediator: dma-fence completion timestamps in a mappable ring");
