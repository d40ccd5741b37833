// SPDX-License-Identifier: MIT
/*
 * gm-fence-test: runs inside the KVM/TCG guest of tests/integration/
 * test-kmod.sh, as its init's child, with gm_fence.ko and vgem loaded.
 * Creates, emits and signals vgem fences and checks what the module
 * recorded: counts, order, signal >= init, monotonic timestamps, the query
 * ioctl, the filter, every bad-input case, the overflow count, the
 * device's permissions and that the module cannot go while in use and goes
 * cleanly after. Also measures the jitter of back-to-back signalled
 * fences' timestamps (the module's against user space's).
 * Prints "GMTEST PASS name", "GMTEST FAIL name: why", "GMTEST JITTER ..."
 * and at the end "GMTEST DONE failures=N".
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include <drm/drm.h>
#include <drm/drm_mode.h>
#include <drm/vgem_drm.h>

#include "gm_fence.h"
#include "fence_ring.h"
#include "worker/timestamp_source.h"

static int failures;

#define CHECK(name, cond, ...)                                                                     \
	do {                                                                                       \
		if (cond) {                                                                        \
			printf("GMTEST PASS %s\n", name);                                          \
		} else {                                                                           \
			failures++;                                                                \
			printf("GMTEST FAIL %s: ", name);                                          \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
		fflush(stdout);                                                                    \
	} while (0)

static int vgem = -1;
static uint32_t bo;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* One vgem fence: attached to the BO (init), then signalled. 0 or -errno. */
static int one_fence(void)
{
	struct drm_vgem_fence_attach a = {.handle = bo, .flags = VGEM_FENCE_WRITE};
	struct drm_vgem_fence_signal s = {0};

	if (ioctl(vgem, DRM_IOCTL_VGEM_FENCE_ATTACH, &a) < 0)
		return -errno;
	s.fence = a.out_fence;
	if (ioctl(vgem, DRM_IOCTL_VGEM_FENCE_SIGNAL, &s) < 0)
		return -errno;
	return 0;
}

struct seen {
	unsigned init, signal, other, bad_order, early_signal;
	uint64_t last_time;
	struct gm_fence_record last_signal;
	uint64_t lost;
	uint64_t init_of_last;
};

static void take(const struct gm_fence_record *r, void *data)
{
	struct seen *s = data;

	if (strncmp(r->driver, "vgem", sizeof(r->driver)) != 0) {
		s->other++;
		return;
	}
	if (r->time_ns < s->last_time)
		s->bad_order++;
	s->last_time = r->time_ns;
	if (r->event == GM_FENCE_EVENT_INIT) {
		s->init++;
		s->init_of_last = r->time_ns;
	} else if (r->event == GM_FENCE_EVENT_SIGNAL) {
		s->signal++;
		if (r->time_ns < s->init_of_last)
			s->early_signal++;
		s->last_signal = *r;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double stddev(const double *v, size_t n, double *median)
{
	double mean = 0, var = 0, *c = malloc(n * sizeof(*c));

	for (size_t i = 0; i < n; i++)
		mean += v[i];
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		var += (v[i] - mean) * (v[i] - mean);
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	*median = c[n / 2];
	free(c);
	return sqrt(var / (double)(n - 1));
}

/*
 * Intervals between back-to-back signals: the module's stamps against user
 * space's. Fences go in batches that fit a ring (two records each), read
 * after each batch; intervals are taken within a batch only.
 */
#define JITTER_BATCH (GM_FENCE_RING_ENTRIES / 2 - 64)

static void jitter(struct fence_ring *ring, unsigned n)
{
	double *mod = calloc(n, sizeof(double)), *usr = calloc(n, sizeof(double));
	uint64_t *usr_t = calloc(JITTER_BATCH + 1, sizeof(uint64_t));
	struct gm_fence_record *recs = calloc(GM_FENCE_RING_ENTRIES, sizeof(*recs));
	size_t nm = 0, nu = 0;
	uint64_t lost = 0;
	double m_med, u_med, m_sd, u_sd;

	while (nu < n) {
		unsigned batch = n - nu < JITTER_BATCH ? (unsigned)(n - nu) : JITTER_BATCH;
		uint64_t prev = 0;
		size_t got;

		fence_ring_skip(ring);
		for (unsigned i = 0; i <= batch; i++) {
			one_fence();
			usr_t[i] = now_ns();
		}
		got = fence_ring_read(ring, recs, GM_FENCE_RING_ENTRIES, &lost);
		for (size_t i = 0; i < got; i++) {
			if (recs[i].event != GM_FENCE_EVENT_SIGNAL ||
			    strncmp(recs[i].driver, "vgem", sizeof(recs[i].driver)))
				continue;
			if (prev && nm < n)
				mod[nm++] = (double)(recs[i].time_ns - prev);
			prev = recs[i].time_ns;
		}
		for (unsigned i = 0; i < batch; i++)
			usr[nu++] = (double)(usr_t[i + 1] - usr_t[i]);
	}
	CHECK("jitter_records", nm == n && lost == 0, "%zu intervals of %u, %llu lost", nm, n,
	      (unsigned long long)lost);
	if (nm == n) {
		m_sd = stddev(mod, n, &m_med);
		u_sd = stddev(usr, n, &u_med);
		printf("GMTEST JITTER fences=%u module_median_ns=%.0f module_stddev_ns=%.0f "
		       "user_median_ns=%.0f user_stddev_ns=%.0f\n",
		       n, m_med, m_sd, u_med, u_sd);
	}
	free(mod);
	free(usr);
	free(usr_t);
	free(recs);
}

/*
 * The worker's timestamp sources on a real sync_file: a vgem fence on a
 * dma-buf, exported with DMA_BUF_IOCTL_EXPORT_SYNC_FILE.
 */
static void sync_file_sources(int gm)
{
	struct drm_prime_handle prime = {.handle = bo, .flags = DRM_CLOEXEC | DRM_RDWR};
	struct drm_vgem_fence_attach a = {.handle = bo, .flags = VGEM_FENCE_WRITE};
	struct dma_buf_export_sync_file ex = {.flags = DMA_BUF_SYNC_READ, .fd = -1};
	struct drm_vgem_fence_signal sig = {0};
	struct timestamp_source kmod, sf, cb;
	struct gm_fence_resolve res = {.fd = -1};
	struct gm_fence_query q;
	uint64_t t_kmod = 0, t_sf = 0, t;
	int r;

	r = ioctl(vgem, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime);
	CHECK("prime_export", r == 0, "%s", strerror(errno));
	r = ioctl(vgem, DRM_IOCTL_VGEM_FENCE_ATTACH, &a);
	CHECK("attach_pending_fence", r == 0, "%s", strerror(errno));
	r = ioctl(prime.fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &ex);
	CHECK("export_sync_file", r == 0 && ex.fd >= 0, "%s", strerror(errno));
	if (r)
		return;
	timestamp_source_choose(&kmod, true, open(GM_FENCE_DEVICE, O_RDONLY | O_CLOEXEC));
	timestamp_source_choose(&sf, true, open("/nonexistent/gm_fence", O_RDONLY | O_CLOEXEC));
	timestamp_source_choose(&cb, false, open(GM_FENCE_DEVICE, O_RDONLY | O_CLOEXEC));
	CHECK("sources_chosen",
	      !strcmp(timestamp_source_name(&kmod), "kmod") &&
		  !strcmp(timestamp_source_name(&sf), "sync_file") &&
		  !strcmp(timestamp_source_name(&cb), "fence-callback"),
	      "%s %s %s", timestamp_source_name(&kmod), timestamp_source_name(&sf),
	      timestamp_source_name(&cb));
	CHECK("pending_fence_has_no_time",
	      timestamp_source_end_ns(&kmod, ex.fd, &t) == -EAGAIN &&
		  timestamp_source_end_ns(&sf, ex.fd, &t) == -EAGAIN,
	      "a pending fence was given a time");
	res.fd = ex.fd;
	r = ioctl(gm, GM_FENCE_IOC_RESOLVE, &res);
	CHECK("resolve_sync_file", r == 0 && res.context != 0, "r=%d %s", r, strerror(errno));
	res.fd = vgem;
	errno = 0;
	CHECK("resolve_non_sync_file_is_einval",
	      ioctl(gm, GM_FENCE_IOC_RESOLVE, &res) < 0 && errno == EINVAL, "errno %d", errno);
	sig.fence = a.out_fence;
	ioctl(vgem, DRM_IOCTL_VGEM_FENCE_SIGNAL, &sig);
	r = timestamp_source_end_ns(&kmod, ex.fd, &t_kmod);
	memset(&q, 0, sizeof(q));
	res.fd = ex.fd;
	ioctl(gm, GM_FENCE_IOC_RESOLVE, &res);
	q.context = res.context;
	q.seqno = res.seqno;
	ioctl(gm, GM_FENCE_IOC_QUERY, &q);
	CHECK("kmod_source_time", r == 0 && t_kmod == q.signal_ns && t_kmod > 0,
	      "r=%d %llu vs %llu", r, (unsigned long long)t_kmod, (unsigned long long)q.signal_ns);
	r = timestamp_source_end_ns(&sf, ex.fd, &t_sf);
	CHECK("sync_file_source_time",
	      r == 0 && (t_sf > t_kmod ? t_sf - t_kmod : t_kmod - t_sf) < 1000000,
	      "r=%d sync_file %llu, module %llu", r, (unsigned long long)t_sf,
	      (unsigned long long)t_kmod);
	CHECK("callback_source_takes_no_sync_file",
	      timestamp_source_end_ns(&cb, ex.fd, &t) == -ENOTSUP, "it did");
	printf("GMTEST SYNCFILE module_signal_ns=%llu sync_file_ns=%llu diff_ns=%lld\n",
	       (unsigned long long)t_kmod, (unsigned long long)t_sf, (long long)(t_sf - t_kmod));
	timestamp_source_finish(&kmod);
	timestamp_source_finish(&sf);
	timestamp_source_finish(&cb);
	close(ex.fd);
	close(prime.fd);
}

int main(int argc, char **argv)
{
	unsigned n = 200, jitter_n = argc > 1 ? (unsigned)atoi(argv[1]) : 1000;
	struct drm_mode_create_dumb dumb = {.width = 64, .height = 64, .bpp = 32};
	struct gm_fence_version v;
	struct fence_ring *ring;
	struct seen s = {0};
	struct stat st;
	void *map;
	int fd, r;

	fd = open(GM_FENCE_DEVICE, O_RDONLY | O_CLOEXEC);
	CHECK("open", fd >= 0, "%s: %s", GM_FENCE_DEVICE, strerror(errno));
	if (fd < 0)
		goto done;
	CHECK("device_mode_0660", stat(GM_FENCE_DEVICE, &st) == 0 && (st.st_mode & 0777) == 0660,
	      "mode %o", st.st_mode & 0777);
	r = ioctl(fd, GM_FENCE_IOC_VERSION, &v);
	CHECK("version",
	      r == 0 && v.abi_version == GM_FENCE_ABI_VERSION &&
		  v.ring_entries == GM_FENCE_RING_ENTRIES &&
		  v.record_size == sizeof(struct gm_fence_record),
	      "r=%d abi %u entries %u size %u", r, v.abi_version, v.ring_entries, v.record_size);

	/* Bad input. */
	errno = 0;
	r = ioctl(fd, _IOC(_IOC_READ, GM_FENCE_IOC_MAGIC, 1, 8), &v);
	CHECK("bad_size_is_einval", r < 0 && errno == EINVAL, "r=%d errno %d", r, errno);
	errno = 0;
	r = ioctl(fd, _IOR(GM_FENCE_IOC_MAGIC, 99, int), &v);
	CHECK("unknown_number_is_enotty", r < 0 && errno == ENOTTY, "r=%d errno %d", r, errno);
	errno = 0;
	r = ioctl(fd, _IOR('x', 1, struct gm_fence_version), &v);
	CHECK("foreign_magic_is_enotty", r < 0 && errno == ENOTTY, "r=%d errno %d", r, errno);
	errno = 0;
	r = ioctl(fd, GM_FENCE_IOC_VERSION, (void *)8);
	CHECK("bad_pointer_is_efault", r < 0 && errno == EFAULT, "r=%d errno %d", r, errno);
	{
		struct gm_fence_query q = {.context = 0xdeadbeef, .seqno = 42};

		errno = 0;
		r = ioctl(fd, GM_FENCE_IOC_QUERY, &q);
		CHECK("unknown_fence_is_enoent", r < 0 && errno == ENOENT, "r=%d errno %d", r,
		      errno);
	}
	{
		struct gm_fence_filter f;

		memset(&f, 'x', sizeof(f));
		errno = 0;
		r = ioctl(fd, GM_FENCE_IOC_FILTER, &f);
		CHECK("unterminated_filter_is_einval", r < 0 && errno == EINVAL, "r=%d errno %d", r,
		      errno);
	}
	map = mmap(NULL, v.map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK("writable_map_is_refused", map == MAP_FAILED, "mapped writable");
	if (map != MAP_FAILED)
		munmap(map, v.map_size);
	map = mmap(NULL, v.map_size, PROT_READ, MAP_SHARED, fd, 0);
	CHECK("read_only_map", map != MAP_FAILED, "%s", strerror(errno));
	if (map == MAP_FAILED)
		goto done;
	ring = fence_ring_open(map, v.map_size);
	CHECK("ring_header_valid", ring != NULL, "fence_ring_open refused the module's map");
	if (!ring)
		goto done;

	vgem = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
	CHECK("vgem_open", vgem >= 0, "%s", strerror(errno));
	if (vgem < 0)
		goto done;
	r = ioctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &dumb);
	CHECK("vgem_bo", r == 0, "%s", strerror(errno));
	bo = dumb.handle;

	/* N fences: N init and N signal records, in order, signal after init. */
	fence_ring_skip(ring);
	for (unsigned i = 0; i < n; i++) {
		r = one_fence();
		if (r < 0)
			break;
	}
	CHECK("vgem_fences", r == 0, "%s", strerror(-r));
	fence_ring_drain(ring, take, &s, &s.lost);
	CHECK("record_count", s.init == n && s.signal == n, "init %u signal %u of %u", s.init,
	      s.signal, n);
	CHECK("records_in_time_order", s.bad_order == 0, "%u out of order", s.bad_order);
	CHECK("signal_after_init", s.early_signal == 0, "%u signalled before init", s.early_signal);
	CHECK("nothing_lost", s.lost == 0, "%llu lost", (unsigned long long)s.lost);
	{
		struct gm_fence_query q = {.context = s.last_signal.context,
					   .seqno = s.last_signal.seqno};

		r = ioctl(fd, GM_FENCE_IOC_QUERY, &q);
		CHECK("query_last_fence",
		      r == 0 && q.signal_ns == s.last_signal.time_ns && q.init_ns &&
			  q.init_ns <= q.signal_ns,
		      "r=%d signal %llu (record %llu) init %llu", r,
		      (unsigned long long)q.signal_ns, (unsigned long long)s.last_signal.time_ns,
		      (unsigned long long)q.init_ns);
	}
	/* The filter: another driver's fences only; then any again. */
	{
		struct gm_fence_filter f = {.driver = "not-vgem"};
		struct seen s2 = {0};

		r = ioctl(fd, GM_FENCE_IOC_FILTER, &f);
		fence_ring_skip(ring);
		one_fence();
		fence_ring_drain(ring, take, &s2, NULL);
		CHECK("filter_excludes", r == 0 && s2.init == 0 && s2.signal == 0,
		      "r=%d %u/%u records passed", r, s2.init, s2.signal);
		strcpy(f.driver, "vgem");
		ioctl(fd, GM_FENCE_IOC_FILTER, &f);
		one_fence();
		fence_ring_drain(ring, take, &s2, NULL);
		CHECK("filter_includes", s2.signal == 1, "%u signals passed", s2.signal);
		memset(&f, 0, sizeof(f));
		ioctl(fd, GM_FENCE_IOC_FILTER, &f);
	}
	/* A reader that falls behind loses the oldest records, counted. */
	{
		struct seen s3 = {0};
		unsigned many = GM_FENCE_RING_ENTRIES; /* 2 records each: twice the ring */

		fence_ring_skip(ring);
		for (unsigned i = 0; i < many; i++)
			one_fence();
		fence_ring_drain(ring, take, &s3, &s3.lost);
		CHECK("overflow_counted",
		      s3.lost >= GM_FENCE_RING_ENTRIES - 64 &&
			  s3.init + s3.signal + s3.lost + s3.other >= 2 * many,
		      "lost %llu, kept %u", (unsigned long long)s3.lost, s3.init + s3.signal);
	}
	sync_file_sources(fd);
	jitter(ring, jitter_n);

	/* The module stays while in use, and goes cleanly after. */
	errno = 0;
	r = (int)syscall(SYS_delete_module, "gm_fence", O_NONBLOCK);
	CHECK("busy_while_open", r < 0 && (errno == EBUSY || errno == EWOULDBLOCK),
	      "delete_module: r=%d errno %d", r, errno);
	fence_ring_close(ring);
	munmap(map, v.map_size);
	close(fd);
	r = (int)syscall(SYS_delete_module, "gm_fence", O_NONBLOCK);
	CHECK("unload", r == 0, "delete_module: %s", strerror(errno));
	CHECK("device_gone", access(GM_FENCE_DEVICE, F_OK) != 0, "%s still there", GM_FENCE_DEVICE);
	/* vgem still works without the module's probes. */
	CHECK("fences_after_unload", one_fence() == 0, "vgem failed after unload");
done:
	printf("GMTEST DONE failures=%d\n", failures);
	fflush(stdout);
	return failures ? 1 : 0;
}
