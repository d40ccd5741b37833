// SPDX-License-Identifier: MIT
/*
 * vhost-user-frontend: plays QEMU's part against mediatord's
 * vhost_user_socket, for tests/integration/test-vhost-user.sh.
 *
 * It does what QEMU's vhost-user-gpu-pci device and a guest's virtio-gpu
 * driver do, without a VM: the vhost-user handshake (features, protocol
 * features, config, a memfd "guest memory" table, two split rings with
 * kick and call eventfds, the display channel), then virtio-gpu requests
 * written into its rings exactly as a guest driver writes them. It checks
 * each answer, and the scanout pixels that arrive over the display
 * channel.
 *
 *   vhost-user-frontend SOCKET scenario   the whole device, good and bad requests
 *   vhost-user-frontend SOCKET bad-size   a message with a wrong payload size:
 *                                         the back-end must close the connection
 *   vhost-user-frontend SOCKET bad-fds    SET_MEM_TABLE with fewer fds than regions
 *   vhost-user-frontend SOCKET bad-region SET_MEM_TABLE with overlapping regions
 *
 * Hostile modes (issue 22), each a guest or a QEMU trying to take more
 * than its share; exit 0 when the back-end held, with one "attack: ..."
 * line of what it measured on stdout:
 *   vhost-user-frontend SOCKET --attack display-flood
 *       one kick of a SUBMIT_3D and 30,000 GET_DISPLAY_INFO chains whose
 *       request buffers are one 16 MiB buffer (the control ring restarted
 *       at 32768 entries): every chain must be answered, the floods
 *       refused (their buffers are far larger than the command)
 *   vhost-user-frontend SOCKET --attack ring-num
 *       SET_VRING_NUM 32768 on a started 4-entry ring whose used ring ends
 *       a 0x2000-byte region, used->idx 30000, then a cursor request: the
 *       back-end must close the connection
 *   vhost-user-frontend SOCKET --attack backing
 *       up to 64 resources, each attaching 262,144 backing entries that
 *       name the same 4 MiB of guest pages, until one is refused
 *       (ERR_OUT_OF_MEMORY); the device must still answer afterwards
 *   vhost-user-frontend SOCKET --attack huge-resources
 *       up to 64 textures of 64 MiB (RESOURCE_CREATE_3D) until one is
 *       refused (ERR_OUT_OF_MEMORY: the domain's resource_memory_mb); the
 *       device must still answer, and an unreferenced texture's share is
 *       given back
 *   vhost-user-frontend SOCKET --attack contexts
 *       up to 65 guest contexts (one more than VGPU_MAX_CONTEXTS) until one
 *       is refused (ERR_OUT_OF_MEMORY: the domain's max_contexts_per_client);
 *       then one destroyed and another created: the limit counts the live
 *       ones
 *   vhost-user-frontend SOCKET --attack destroy-busy
 *   vhost-user-frontend SOCKET --attack pieces   (not an attack: 101 long
 *       fenced groups, the last with CTX_DESTROY; see pieces())
 *       one kick of a fenced SUBMIT_3D of 16 whole-surface blits between
 *       two 2048x2048 resources and CTX_DESTROY of its context: both
 *       must be answered (the group is measured, not abandoned: the test
 *       reads mediatord's trace)
 * SOCKET "fd:N" is inherited descriptor N, connected already: one end of the
 * socket pair libvirt's vhost-user path hands a back-end (test-vm-socket.sh).
 * FRONTEND_HOLD=1 keeps the connection (display-flood, backing, destroy-busy) until
 * stdin closes.
 * Exit 0 when every check held; 1 with "FAIL: ..." on stderr otherwise.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_gpu.h>
#include <linux/virtio_ring.h>

#include "busy_blits.h"
#include "predict.h"
#include "scm_send.h"
#include "worker/vhost-user/vhost_user.h"

#define MEM_SIZE   (64u << 20)
#define RING_SIZE  64u
#define TIMEOUT_MS 10000

/* Guest memory layout (gpa = offset in the memfd). */
#define RING_AREA(q) (0x1000u + (q)*0x4000u) /* desc, avail, used of queue q */
/* VIRGL_CCMD_CLEAR_TEXTURE (virglrenderer's virgl_protocol.h) */
#define FRONTEND_CMD_CLEAR_TEXTURE 47u
#define REQ_AREA		   0x10000u
#define RESP_AREA		   0x20000u
#define PIXELS_AREA		   0x100000u
#define CAPS_AREA		   0x200000u

static int sock = -1, gpu = -1;
static bool closing_is_fine;
static bool quiet; /* benchmarks: no line per request */
/* Benchmarks also run against QEMU's own back-end, which may offer less. */
static bool need_3d = true, have_ack = true;
static uint64_t features_offered;
static uint8_t *mem;
static int kick[2], call[2];
/* Each queue's ring: its size and guest addresses (an attack moves the control ring). */
static uint32_t ring_num[2] = {RING_SIZE, RING_SIZE};
static uint64_t ring_desc[2] = {RING_AREA(0), RING_AREA(1)};
static uint64_t ring_avail[2] = {RING_AREA(0) + RING_SIZE * 16, RING_AREA(1) + RING_SIZE * 16};
static uint64_t ring_used[2] = {RING_AREA(0) + 0x2000, RING_AREA(1) + 0x2000};
static uint16_t avail_idx[2], used_seen[2];
static uint32_t display_w = 640, display_h = 480;
/* What arrived over the display channel. */
static uint32_t scanout_w, scanout_h, updates;
static uint8_t *last_update;
static size_t last_update_len;
/* The display channel's protocol features, as the back-end set them. */
static uint64_t display_features;
static bool display_features_set;
/* The first bytes of the EDID "QEMU" gives (an EDID's fixed header, then a tag). */
static const uint8_t EDID_HEADER[12] = {0,    0xff, 0xff, 0xff, 0xff, 0xff,
					0xff, 0,    'Q',  'E',	'M',  'U'};

__attribute__((format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "FAIL: vhost-user-frontend: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void send_msg(uint32_t request, uint32_t flags, const void *payload, uint32_t size,
		     const int *fds, int nfds)
{
	uint32_t hdr[3] = {request, VHOST_USER_VERSION | flags, size};
	struct iovec iov[2] = {{hdr, sizeof(hdr)}, {(void *)payload, size}};

	if (scm_send(sock, iov, size ? 2 : 1, fds, nfds, MSG_NOSIGNAL) !=
	    (ssize_t)(sizeof(hdr) + size)) {
		/* In the bad-input modes the back-end may close first: fine. */
		if (closing_is_fine && (errno == EPIPE || errno == ECONNRESET))
			return;
		fail("sending vhost-user request %u: %s", request, strerror(errno));
	}
}

static void read_exact(int fd, void *buf, size_t len, const char *what)
{
	uint8_t *p = buf;

	while (len) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, TIMEOUT_MS) <= 0)
			fail("%s: no answer within %d ms", what, TIMEOUT_MS);
		n = recv(fd, p, len, 0);
		if (n <= 0)
			fail("%s: connection closed", what);
		p += n;
		len -= (size_t)n;
	}
}

/* Reads the reply to @request into @payload (@size bytes expected). */
static void read_reply(uint32_t request, void *payload, uint32_t size)
{
	uint32_t hdr[3];

	read_exact(sock, hdr, sizeof(hdr), "vhost-user reply");
	if (hdr[0] != request || !(hdr[1] & VHOST_USER_REPLY) || hdr[2] != size)
		fail("reply to %u: got request %u flags %#x size %u", request, hdr[0], hdr[1],
		     hdr[2]);
	read_exact(sock, payload, size, "vhost-user reply payload");
}

static uint64_t get_u64(uint32_t request)
{
	uint64_t v;

	send_msg(request, 0, NULL, 0, NULL, 0);
	read_reply(request, &v, sizeof(v));
	return v;
}

static void set_u64(uint32_t request, uint64_t v, bool ack)
{
	uint64_t status;

	send_msg(request, ack ? VHOST_USER_NEED_REPLY : 0, &v, sizeof(v), NULL, 0);
	if (ack) {
		read_reply(request, &status, sizeof(status));
		if (status != 0)
			fail("request %u not acknowledged (status %llu)", request,
			     (unsigned long long)status);
	}
}

/* Connects to @path, or takes inherited descriptor N for a @path "fd:N" (a socket pair's end). */
static int connect_to(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd;

	if (!strncmp(path, "fd:", 3))
		return atoi(path + 3);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		fail("connect %s: %s", path, strerror(errno));
	return fd;
}

/* Waits until the back-end closes the connection (it must, after a bad message). */
static void expect_closed(const char *what)
{
	char buf[64];

	for (;;) {
		struct pollfd pfd = {.fd = sock, .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, TIMEOUT_MS) <= 0)
			fail("%s: the back-end kept the connection open", what);
		n = recv(sock, buf, sizeof(buf), 0);
		if (n <= 0)
			return;
	}
}

/* ---- the display channel -------------------------------------------------- */

/* Serves one message the back-end sent on the display channel. */
static void serve_display(void)
{
	uint32_t hdr[3];
	uint8_t *payload;

	read_exact(gpu, hdr, sizeof(hdr), "display channel header");
	if (hdr[2] > (64u << 20))
		fail("display message %u of %u bytes", hdr[0], hdr[2]);
	payload = malloc(hdr[2] ? hdr[2] : 1);
	if (!payload)
		fail("out of memory");
	read_exact(gpu, payload, hdr[2], "display channel payload");
	switch (hdr[0]) {
	case 1: { /* GET_PROTOCOL_FEATURES: EDID, as QEMU >= 8.1 (and DMABUF2, never used) */
		uint32_t rh[3] = {1, 0x4, 8};
		uint64_t offered = 0x3;

		if (send(gpu, rh, sizeof(rh), 0) != sizeof(rh) ||
		    send(gpu, &offered, sizeof(offered), 0) != sizeof(offered))
			fail("answering GET_PROTOCOL_FEATURES");
		break;
	}
	case 2: /* SET_PROTOCOL_FEATURES */
		if (hdr[2] != 8)
			fail("SET_PROTOCOL_FEATURES of %u bytes", hdr[2]);
		memcpy(&display_features, payload, 8);
		display_features_set = true;
		break;
	case 11: { /* GET_EDID: QEMU answers only for a scanout it has */
		struct virtio_gpu_resp_edid edid = {.hdr.type = VIRTIO_GPU_RESP_OK_EDID,
						    .size = 128};
		uint32_t rh[3] = {11, 0x4, sizeof(edid)}, id;

		if (hdr[2] != 4)
			fail("GET_EDID of %u bytes", hdr[2]);
		if (!display_features_set || !(display_features & 1))
			fail("GET_EDID without the EDID protocol feature set");
		memcpy(&id, payload, 4);
		if (id != 0)
			fail("GET_EDID of scanout %u, which QEMU does not have", id);
		memcpy(edid.edid, EDID_HEADER, sizeof(EDID_HEADER));
		if (send(gpu, rh, sizeof(rh), 0) != sizeof(rh) ||
		    send(gpu, &edid, sizeof(edid), 0) != sizeof(edid))
			fail("answering GET_EDID");
		break;
	}
	case 3: { /* GET_DISPLAY_INFO */
		struct virtio_gpu_resp_display_info info = {0};
		uint32_t rh[3] = {3, 0x4, sizeof(info)};

		info.hdr.type = VIRTIO_GPU_RESP_OK_DISPLAY_INFO;
		info.pmodes[0].r.width = display_w;
		info.pmodes[0].r.height = display_h;
		info.pmodes[0].enabled = 1;
		if (send(gpu, rh, sizeof(rh), 0) != sizeof(rh) ||
		    send(gpu, &info, sizeof(info), 0) != sizeof(info))
			fail("answering GET_DISPLAY_INFO");
		break;
	}
	case 7: /* SCANOUT */
		if (hdr[2] != 12)
			fail("SCANOUT of %u bytes", hdr[2]);
		memcpy(&scanout_w, payload + 4, 4);
		memcpy(&scanout_h, payload + 8, 4);
		break;
	case 8: /* UPDATE */
		if (hdr[2] < 20)
			fail("UPDATE of %u bytes", hdr[2]);
		updates++;
		free(last_update);
		last_update_len = hdr[2] - 20;
		last_update = malloc(last_update_len ? last_update_len : 1);
		memcpy(last_update, payload + 20, last_update_len);
		break;
	case 4:
	case 5:
	case 6:
		break;
	default:
		fail("unexpected display message %u", hdr[0]);
	}
	free(payload);
}

/* ---- rings ----------------------------------------------------------------- */

struct desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags, next;
};

static volatile uint16_t *avail(int q)
{
	return (volatile uint16_t *)(mem + ring_avail[q]);
}

static volatile uint16_t *used(int q)
{
	return (volatile uint16_t *)(mem + ring_used[q]);
}

/*
 * Puts a request of @len bytes (already at REQ_AREA) with an answer
 * buffer of @resp_len bytes at RESP_AREA on queue @q, kicks, and waits for
 * it to come back, serving the display channel meanwhile. Returns the
 * answer's type.
 */
static uint32_t request_at(int q, uint64_t req, uint32_t len, uint32_t resp_len)
{
	struct desc *d = (struct desc *)(mem + ring_desc[q]);
	uint16_t slot = avail_idx[q] % ring_num[q];
	uint64_t one = 1;
	struct virtio_gpu_ctrl_hdr resp;
	struct timespec start, now;

	memset(mem + RESP_AREA, 0xee, resp_len);
	d[0] = (struct desc){req, len, VRING_DESC_F_NEXT, 1};
	d[1] = (struct desc){RESP_AREA, resp_len, VRING_DESC_F_WRITE, 0};
	avail(q)[2 + slot] = 0;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	avail(q)[1] = ++avail_idx[q];
	if (write(kick[q], &one, sizeof(one)) != sizeof(one))
		fail("kick");
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct pollfd pfd[2] = {{.fd = call[q], .events = POLLIN},
					{.fd = gpu, .events = POLLIN}};

		if (used(q)[1] != used_seen[q])
			break;
		poll(pfd, 2, 100);
		if (pfd[1].revents & POLLIN)
			serve_display();
		if (pfd[0].revents & POLLIN) {
			uint64_t v;

			if (read(call[q], &v, sizeof(v)) < 0)
				fail("call eventfd");
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >
		    TIMEOUT_MS)
			fail("request %#x on queue %d: no answer",
			     ((uint32_t *)(mem + REQ_AREA))[0], q);
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	used_seen[q]++;
	/* The back-end sends display updates before it answers: take them. */
	for (;;) {
		struct pollfd pfd = {.fd = gpu, .events = POLLIN};

		if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & POLLIN))
			break;
		serve_display();
	}
	memcpy(&resp, mem + RESP_AREA, sizeof(resp));
	return resp.type;
}

static uint32_t request(int q, uint32_t len, uint32_t resp_len)
{
	return request_at(q, REQ_AREA, len, resp_len);
}

/* Sends request @req (@len bytes) on queue @q and checks the answer's type. */
static void expect_on(int q, const char *what, const void *req, uint32_t len, uint32_t want)
{
	uint32_t got;

	memcpy(mem + REQ_AREA, req, len);
	got = request(q, len, 4096);
	if (got != want)
		fail("%s: answer %#x, expected %#x", what, got, want);
	if (!quiet)
		fprintf(stderr, "vhost-user-frontend: ok: %s (%#x)\n", what, got);
}

static void expect(const char *what, const void *req, uint32_t len, uint32_t want)
{
	expect_on(0, what, req, len, want);
}

/* ---- set-up ---------------------------------------------------------------- */

static void set_up(const char *path)
{
	int memfd, sv[2];
	struct vhost_user_memory table = {.nregions = 1};
	uint64_t features, pf;
	struct vhost_user_config cfg = {.offset = 0, .size = sizeof(struct virtio_gpu_config)};
	struct virtio_gpu_config gc;

	sock = connect_to(path);
	send_msg(VHOST_USER_SET_OWNER, 0, NULL, 0, NULL, 0);
	features = get_u64(VHOST_USER_GET_FEATURES);
	features_offered = features;
	if ((need_3d && !(features & (1ull << VIRTIO_GPU_F_VIRGL))) ||
	    !(features & (1ull << VHOST_USER_F_PROTOCOL_FEATURES)))
		fail("features %#llx lack VIRGL or PROTOCOL_FEATURES",
		     (unsigned long long)features);
	pf = get_u64(VHOST_USER_GET_PROTOCOL_FEATURES);
	have_ack = pf & (1ull << VHOST_USER_PROTOCOL_F_REPLY_ACK);
	if (need_3d && (!(pf & (1ull << VHOST_USER_PROTOCOL_F_CONFIG)) || !have_ack))
		fail("protocol features %#llx lack CONFIG or REPLY_ACK", (unsigned long long)pf);
	set_u64(VHOST_USER_SET_PROTOCOL_FEATURES,
		pf & ((1ull << VHOST_USER_PROTOCOL_F_CONFIG) |
		      (1ull << VHOST_USER_PROTOCOL_F_REPLY_ACK)),
		false);
	gc.num_capsets = 0;
	if (pf & (1ull << VHOST_USER_PROTOCOL_F_CONFIG)) {
		send_msg(VHOST_USER_GET_CONFIG, 0, &cfg, 12 + cfg.size, NULL, 0);
		read_reply(VHOST_USER_GET_CONFIG, &cfg, 12 + sizeof(gc));
		memcpy(&gc, cfg.payload, sizeof(gc));
	}
	if (need_3d && gc.num_capsets < 1)
		fail("config: %u capsets", gc.num_capsets);
	fprintf(stderr, "vhost-user-frontend: ok: handshake (features %#llx, %u capsets)\n",
		(unsigned long long)features, gc.num_capsets);

	memfd = memfd_create("guest", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, MEM_SIZE) < 0)
		fail("memfd: %s", strerror(errno));
	mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (mem == MAP_FAILED)
		fail("mmap: %s", strerror(errno));
	/* Ring addresses are "QEMU's" virtual addresses: our mapping. */
	table.regions[0] = (struct guest_mem_region){0, MEM_SIZE, (uint64_t)(uintptr_t)mem, 0};
	send_msg(VHOST_USER_SET_MEM_TABLE, have_ack ? VHOST_USER_NEED_REPLY : 0, &table,
		 8 + sizeof(table.regions[0]), &memfd, 1);
	if (have_ack) {
		uint64_t status;

		read_reply(VHOST_USER_SET_MEM_TABLE, &status, sizeof(status));
		if (status)
			fail("SET_MEM_TABLE refused");
	}
	close(memfd);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		fail("socketpair");
	send_msg(VHOST_USER_GPU_SET_SOCKET, 0, NULL, 0, &sv[1], 1);
	close(sv[1]);
	gpu = sv[0];
	/* As QEMU 10 does: what the guest acknowledged, RING_RESET included,
	 * which QEMU's virtio-pci offers itself. */
	set_u64(
	    VHOST_USER_SET_FEATURES,
	    (features & ((1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_GPU_F_VIRGL) |
			 (1ull << VIRTIO_GPU_F_EDID) | (1ull << VHOST_USER_F_PROTOCOL_FEATURES))) |
		(need_3d ? 1ull << VHOST_USER_VIRTIO_F_RING_RESET : 0),
	    have_ack);
	for (int q = 0; q < 2; q++) {
		struct vhost_user_vring_state st = {(uint32_t)q, RING_SIZE};
		struct vhost_user_vring_addr a = {
		    .index = (uint32_t)q,
		    .desc_uva = (uint64_t)(uintptr_t)(mem + RING_AREA(q)),
		    .avail_uva = (uint64_t)(uintptr_t)avail(q),
		    .used_uva = (uint64_t)(uintptr_t)used(q),
		};
		uint64_t idx = (uint64_t)q;

		send_msg(VHOST_USER_SET_VRING_NUM, 0, &st, sizeof(st), NULL, 0);
		st.num = 0;
		send_msg(VHOST_USER_SET_VRING_BASE, 0, &st, sizeof(st), NULL, 0);
		send_msg(VHOST_USER_SET_VRING_ADDR, 0, &a, sizeof(a), NULL, 0);
		call[q] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		kick[q] = eventfd(0, EFD_CLOEXEC);
		send_msg(VHOST_USER_SET_VRING_CALL, 0, &idx, sizeof(idx), &call[q], 1);
		send_msg(VHOST_USER_SET_VRING_KICK, 0, &idx, sizeof(idx), &kick[q], 1);
		st.num = 1;
		send_msg(VHOST_USER_SET_VRING_ENABLE, have_ack ? VHOST_USER_NEED_REPLY : 0, &st,
			 sizeof(st), NULL, 0);
		if (have_ack) {
			uint64_t status;

			read_reply(VHOST_USER_SET_VRING_ENABLE, &status, sizeof(status));
		}
	}
}

/* ---- the scenario ------------------------------------------------------------ */

#define SIZE_OF(x) ((uint32_t)sizeof(x))

static void submit(const char *what, uint32_t ctx, const uint32_t *stream, uint32_t ndw, bool fence,
		   uint32_t want)
{
	struct {
		struct virtio_gpu_cmd_submit s;
		uint32_t dw[64];
	} r;

	memset(&r, 0, sizeof(r));
	r.s.hdr.type = VIRTIO_GPU_CMD_SUBMIT_3D;
	r.s.hdr.ctx_id = ctx;
	if (fence) {
		r.s.hdr.flags = VIRTIO_GPU_FLAG_FENCE;
		r.s.hdr.fence_id = 77;
	}
	r.s.size = ndw * 4;
	memcpy(r.dw, stream, ndw * 4);
	expect(what, &r, SIZE_OF(r.s) + ndw * 4, want);
}

static void check_pixels(const char *what, uint32_t pixel)
{
	if (!last_update || last_update_len < 4)
		fail("%s: no pixels arrived", what);
	for (size_t i = 0; i + 4 <= last_update_len; i += 4) {
		uint32_t p;

		memcpy(&p, last_update + i, 4);
		if ((p & 0xffffff) != (pixel & 0xffffff))
			fail("%s: pixel %zu is %#x, expected %#x", what, i / 4, p, pixel);
	}
	fprintf(stderr, "vhost-user-frontend: ok: %s (%zu bytes of %#x)\n", what, last_update_len,
		pixel & 0xffffff);
}

static void scenario(void)
{
	struct virtio_gpu_ctrl_hdr hdr = {.type = VIRTIO_GPU_CMD_GET_DISPLAY_INFO};
	struct virtio_gpu_resp_display_info info;
	struct virtio_gpu_get_capset_info ci = {.hdr.type = VIRTIO_GPU_CMD_GET_CAPSET_INFO};
	struct virtio_gpu_resp_capset_info cir;
	struct virtio_gpu_resource_create_2d c2 = {.hdr.type = VIRTIO_GPU_CMD_RESOURCE_CREATE_2D,
						   .resource_id = 1,
						   .format = VIRTIO_GPU_FORMAT_B8G8R8X8_UNORM,
						   .width = 64,
						   .height = 64};
	struct {
		struct virtio_gpu_resource_attach_backing ab;
		struct virtio_gpu_mem_entry e;
	} ab = {
	    {.hdr.type = VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING, .resource_id = 1, .nr_entries = 1},
	    {PIXELS_AREA, 64 * 64 * 4, 0}};
	struct virtio_gpu_transfer_to_host_2d t2 = {
	    .hdr.type = VIRTIO_GPU_CMD_TRANSFER_TO_HOST_2D, .r = {0, 0, 64, 64}, .resource_id = 1};
	struct virtio_gpu_set_scanout ss = {.hdr.type = VIRTIO_GPU_CMD_SET_SCANOUT,
					    .r = {0, 0, 64, 64},
					    .scanout_id = 0,
					    .resource_id = 1};
	struct virtio_gpu_resource_flush fl = {
	    .hdr.type = VIRTIO_GPU_CMD_RESOURCE_FLUSH, .r = {0, 0, 64, 64}, .resource_id = 1};
	struct virtio_gpu_ctx_create cc = {.hdr = {.type = VIRTIO_GPU_CMD_CTX_CREATE, .ctx_id = 5},
					   .nlen = 8};
	struct virtio_gpu_resource_create_3d c3 = {.hdr.type = VIRTIO_GPU_CMD_RESOURCE_CREATE_3D,
						   .resource_id = 2,
						   .target = 2,
						   .format = VIRTIO_GPU_FORMAT_B8G8R8X8_UNORM,
						   .bind = (1u << 1) | (1u << 3),
						   .width = 64,
						   .height = 64,
						   .depth = 1,
						   .array_size = 1};
	struct virtio_gpu_ctx_resource car = {
	    .hdr = {.type = VIRTIO_GPU_CMD_CTX_ATTACH_RESOURCE, .ctx_id = 5}, .resource_id = 2};
	float red[4] = {1.0f, 0.0f, 0.0f, 1.0f};
	uint32_t clear[3 + 3 + 9];
	uint32_t bad_stream[1] = {VIRGL_CMD(7, 0, 100)};
	uint32_t *pixels = (uint32_t *)(mem + PIXELS_AREA);

	/* The display channel is live: the back-end asks QEMU for the mode. */
	memcpy(mem + REQ_AREA, &hdr, sizeof(hdr));
	if (request(0, sizeof(hdr), sizeof(info)) != VIRTIO_GPU_RESP_OK_DISPLAY_INFO)
		fail("GET_DISPLAY_INFO");
	memcpy(&info, mem + RESP_AREA, sizeof(info));
	if (info.pmodes[0].r.width != display_w || info.pmodes[0].r.height != display_h ||
	    !info.pmodes[0].enabled)
		fail("GET_DISPLAY_INFO: %ux%u, expected QEMU's %ux%u", info.pmodes[0].r.width,
		     info.pmodes[0].r.height, display_w, display_h);
	fprintf(stderr,
		"vhost-user-frontend: ok: GET_DISPLAY_INFO %ux%u from the display channel\n",
		display_w, display_h);
	if (!(features_offered & (1ull << VIRTIO_GPU_F_EDID)))
		fail("the back-end does not offer VIRTIO_GPU_F_EDID");
	{
		struct virtio_gpu_cmd_get_edid ge = {.hdr.type = VIRTIO_GPU_CMD_GET_EDID};
		struct virtio_gpu_resp_edid edid;

		memcpy(mem + REQ_AREA, &ge, sizeof(ge));
		if (request(0, sizeof(ge), sizeof(edid)) != VIRTIO_GPU_RESP_OK_EDID)
			fail("GET_EDID of scanout 0");
		memcpy(&edid, mem + RESP_AREA, sizeof(edid));
		if (edid.size != 128 || memcmp(edid.edid, EDID_HEADER, sizeof(EDID_HEADER)))
			fail("GET_EDID: %u bytes, not QEMU's EDID", edid.size);
		fprintf(stderr, "vhost-user-frontend: ok: GET_EDID from the display channel\n");
		ge.scanout = 3;
		expect("GET_EDID of a scanout QEMU does not show", &ge, sizeof(ge),
		       VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER);
		ge.scanout = 16;
		expect("GET_EDID of scanout 16", &ge, sizeof(ge),
		       VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER);
	}
	memcpy(mem + REQ_AREA, &ci, sizeof(ci));
	if (request(0, sizeof(ci), sizeof(cir)) != VIRTIO_GPU_RESP_OK_CAPSET_INFO)
		fail("GET_CAPSET_INFO");
	memcpy(&cir, mem + RESP_AREA, sizeof(cir));
	{
		struct virtio_gpu_get_capset gc = {.hdr.type = VIRTIO_GPU_CMD_GET_CAPSET,
						   .capset_id = cir.capset_id,
						   .capset_version = cir.capset_max_version};

		memcpy(mem + REQ_AREA, &gc, sizeof(gc));
		if (request(0, sizeof(gc), 24 + cir.capset_max_size) != VIRTIO_GPU_RESP_OK_CAPSET)
			fail("GET_CAPSET %u", cir.capset_id);
		fprintf(stderr, "vhost-user-frontend: ok: capset %u v%u, %u bytes\n", cir.capset_id,
			cir.capset_max_version, cir.capset_max_size);
	}

	/* 2D: what the guest's framebuffer console does. */
	for (int i = 0; i < 64 * 64; i++)
		pixels[i] = 0x00336699u;
	expect("RESOURCE_CREATE_2D", &c2, sizeof(c2), VIRTIO_GPU_RESP_OK_NODATA);
	expect("RESOURCE_ATTACH_BACKING", &ab, sizeof(ab), VIRTIO_GPU_RESP_OK_NODATA);
	expect("TRANSFER_TO_HOST_2D", &t2, sizeof(t2), VIRTIO_GPU_RESP_OK_NODATA);
	expect("SET_SCANOUT", &ss, sizeof(ss), VIRTIO_GPU_RESP_OK_NODATA);
	if (scanout_w != 64 || scanout_h != 64)
		fail("SCANOUT on the display channel: %ux%u", scanout_w, scanout_h);
	expect("RESOURCE_FLUSH", &fl, sizeof(fl), VIRTIO_GPU_RESP_OK_NODATA);
	check_pixels("2D scanout update", 0x336699);

	/* 3D: a context clears a render target red; the scanout shows it. */
	memcpy(cc.debug_name, "poke-ctx", 8);
	expect("CTX_CREATE", &cc, sizeof(cc), VIRTIO_GPU_RESP_OK_NODATA);
	expect("RESOURCE_CREATE_3D", &c3, sizeof(c3), VIRTIO_GPU_RESP_OK_NODATA);
	expect("CTX_ATTACH_RESOURCE", &car, sizeof(car), VIRTIO_GPU_RESP_OK_NODATA);
	clear[0] = VIRGL_CMD(1, 8, 5); /* CREATE_OBJECT SURFACE */
	clear[1] = 10;		       /* surface handle */
	clear[2] = 2;		       /* resource */
	clear[3] = VIRTIO_GPU_FORMAT_B8G8R8X8_UNORM;
	clear[4] = 0;
	clear[5] = 0;
	clear[6] = VIRGL_CMD(5, 0, 3); /* SET_FRAMEBUFFER_STATE: 1 cbuf, no zsurf */
	clear[7] = 1;
	clear[8] = 0;
	clear[9] = 10;
	submit("SUBMIT_3D surface + framebuffer", 5, clear, 10, false, VIRTIO_GPU_RESP_OK_NODATA);
	clear[0] = VIRGL_CMD(7, 0, 8); /* CLEAR color0 */
	clear[1] = 4;
	memcpy(&clear[2], red, sizeof(red));
	clear[6] = clear[7] = clear[8] = 0;
	submit("SUBMIT_3D clear (fenced)", 5, clear, 9, true, VIRTIO_GPU_RESP_OK_NODATA);
	ss.resource_id = 2;
	fl.resource_id = 2;
	expect("SET_SCANOUT to the 3D target", &ss, sizeof(ss), VIRTIO_GPU_RESP_OK_NODATA);
	expect("RESOURCE_FLUSH of the 3D target", &fl, sizeof(fl), VIRTIO_GPU_RESP_OK_NODATA);
	check_pixels("3D scanout update", 0xff0000);

	/* Bad requests get errors; the device goes on. */
	{
		struct virtio_gpu_ctrl_hdr unknown = {.type = 0x999};
		struct virtio_gpu_update_cursor cur = {.hdr.type = VIRTIO_GPU_CMD_MOVE_CURSOR};
		struct virtio_gpu_resource_flush nofl = fl;
		struct virtio_gpu_resource_create_2d host = c2;
		typeof(ab) outside = ab;

		nofl.resource_id = 12345;
		host.resource_id = 0xffffff00u;
		outside.ab.resource_id = 1;
		outside.e.addr = MEM_SIZE - 4096;
		outside.e.length = 8192;
		expect("unknown command", &unknown, sizeof(unknown), VIRTIO_GPU_RESP_ERR_UNSPEC);
		expect("cursor command on the control queue", &cur, sizeof(cur),
		       VIRTIO_GPU_RESP_ERR_UNSPEC);
		expect("flush of a resource never created", &nofl, sizeof(nofl),
		       VIRTIO_GPU_RESP_ERR_INVALID_RESOURCE_ID);
		expect("resource id of the host's range", &host, sizeof(host),
		       VIRTIO_GPU_RESP_ERR_INVALID_RESOURCE_ID);
		expect("truncated request", &c2, 30, VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER);
		outside.ab.resource_id = 1;
		expect("second backing", &outside, sizeof(outside), VIRTIO_GPU_RESP_ERR_UNSPEC);
		c2.resource_id = 3;
		expect("RESOURCE_CREATE_2D 3", &c2, sizeof(c2), VIRTIO_GPU_RESP_OK_NODATA);
		outside.ab.resource_id = 3;
		expect("backing outside guest memory", &outside, sizeof(outside),
		       VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER);
		submit("SUBMIT_3D on a context never created", 9, clear, 9, false,
		       VIRTIO_GPU_RESP_ERR_INVALID_CONTEXT_ID);
		submit("SUBMIT_3D with a malformed stream", 5, bad_stream, 1, false,
		       VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER);
		submit("SUBMIT_3D on the context the malformed stream cost", 5, clear, 9, false,
		       VIRTIO_GPU_RESP_ERR_INVALID_CONTEXT_ID);
		cur.hdr.type = VIRTIO_GPU_CMD_MOVE_CURSOR;
		expect_on(1, "MOVE_CURSOR on the cursor queue", &cur, sizeof(cur),
			  VIRTIO_GPU_RESP_OK_NODATA);
		expect_on(1, "control command on the cursor queue", &fl, sizeof(fl),
			  VIRTIO_GPU_RESP_ERR_UNSPEC);
	}
	/* The device still renders: a new context clears again. */
	cc.hdr.ctx_id = 6;
	memcpy(cc.debug_name, "poke-ct2", 8);
	expect("CTX_CREATE after the bad ones", &cc, sizeof(cc), VIRTIO_GPU_RESP_OK_NODATA);
	car.hdr.ctx_id = 6;
	expect("CTX_ATTACH_RESOURCE", &car, sizeof(car), VIRTIO_GPU_RESP_OK_NODATA);
	clear[0] = VIRGL_CMD(1, 8, 5);
	clear[1] = 10;
	clear[2] = 2;
	clear[3] = VIRTIO_GPU_FORMAT_B8G8R8X8_UNORM;
	clear[4] = clear[5] = 0;
	clear[6] = VIRGL_CMD(5, 0, 3);
	clear[7] = 1;
	clear[8] = 0;
	clear[9] = 10;
	submit("SUBMIT_3D framebuffer in the new context", 6, clear, 10, false,
	       VIRTIO_GPU_RESP_OK_NODATA);
	red[0] = 0.0f;
	red[1] = 1.0f;
	clear[0] = VIRGL_CMD(7, 0, 8);
	clear[1] = 4;
	memcpy(&clear[2], red, sizeof(red));
	clear[6] = clear[7] = clear[8] = 0;
	submit("SUBMIT_3D clear green (fenced)", 6, clear, 9, true, VIRTIO_GPU_RESP_OK_NODATA);
	expect("RESOURCE_FLUSH", &fl, sizeof(fl), VIRTIO_GPU_RESP_OK_NODATA);
	check_pixels("3D scanout update after the bad requests", 0x00ff00);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * bench2d / bench3d: frames of W x H for @seconds, each a guest frame as a
 * driver sends it: 2D, new pixels written, TRANSFER_TO_HOST_2D and
 * RESOURCE_FLUSH; 3D, a fenced SUBMIT_3D clearing the render target to a
 * new colour and RESOURCE_FLUSH. A frame counts once its scanout update
 * arrived. Prints "frames N seconds S fps F".
 */
static void bench(bool three_d, double seconds, uint32_t w, uint32_t h)
{
	struct virtio_gpu_resource_create_2d c2 = {.hdr.type = VIRTIO_GPU_CMD_RESOURCE_CREATE_2D,
						   .resource_id = 1,
						   .format = VIRTIO_GPU_FORMAT_B8G8R8X8_UNORM,
						   .width = w,
						   .height = h};
	struct virtio_gpu_resource_create_3d c3 = {.hdr.type = VIRTIO_GPU_CMD_RESOURCE_CREATE_3D,
						   .resource_id = 1,
						   .target = 2,
						   .format = VIRTIO_GPU_FORMAT_B8G8R8X8_UNORM,
						   .bind = (1u << 1) | (1u << 3),
						   .width = w,
						   .height = h,
						   .depth = 1,
						   .array_size = 1};
	struct {
		struct virtio_gpu_resource_attach_backing ab;
		struct virtio_gpu_mem_entry e;
	} ab = {
	    {.hdr.type = VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING, .resource_id = 1, .nr_entries = 1},
	    {PIXELS_AREA, w * h * 4, 0}};
	struct virtio_gpu_transfer_to_host_2d t2 = {
	    .hdr.type = VIRTIO_GPU_CMD_TRANSFER_TO_HOST_2D, .r = {0, 0, w, h}, .resource_id = 1};
	struct virtio_gpu_set_scanout ss = {
	    .hdr.type = VIRTIO_GPU_CMD_SET_SCANOUT, .r = {0, 0, w, h}, .resource_id = 1};
	struct virtio_gpu_resource_flush fl = {
	    .hdr.type = VIRTIO_GPU_CMD_RESOURCE_FLUSH, .r = {0, 0, w, h}, .resource_id = 1};
	struct virtio_gpu_ctx_create cc = {.hdr = {.type = VIRTIO_GPU_CMD_CTX_CREATE, .ctx_id = 1},
					   .nlen = 5};
	struct virtio_gpu_ctx_resource car = {
	    .hdr = {.type = VIRTIO_GPU_CMD_CTX_ATTACH_RESOURCE, .ctx_id = 1}, .resource_id = 1};
	uint32_t fb[10] = {VIRGL_CMD(1, 8, 5),
			   10,
			   1,
			   VIRTIO_GPU_FORMAT_B8G8R8X8_UNORM,
			   0,
			   0,
			   VIRGL_CMD(5, 0, 3),
			   1,
			   0,
			   10};
	uint32_t frames = 0, seen;
	double t0, t;

	if (PIXELS_AREA + (uint64_t)w * h * 4 > MEM_SIZE)
		fail("frame too large for the guest memory");
	if (three_d) {
		memcpy(cc.debug_name, "bench", 5);
		expect("CTX_CREATE", &cc, sizeof(cc), VIRTIO_GPU_RESP_OK_NODATA);
		expect("RESOURCE_CREATE_3D", &c3, sizeof(c3), VIRTIO_GPU_RESP_OK_NODATA);
		expect("CTX_ATTACH_RESOURCE", &car, sizeof(car), VIRTIO_GPU_RESP_OK_NODATA);
		submit("framebuffer", 1, fb, 10, false, VIRTIO_GPU_RESP_OK_NODATA);
	} else {
		expect("RESOURCE_CREATE_2D", &c2, sizeof(c2), VIRTIO_GPU_RESP_OK_NODATA);
		expect("RESOURCE_ATTACH_BACKING", &ab, sizeof(ab), VIRTIO_GPU_RESP_OK_NODATA);
	}
	expect("SET_SCANOUT", &ss, sizeof(ss), VIRTIO_GPU_RESP_OK_NODATA);
	t0 = now_s();
	do {
		seen = updates;
		if (three_d) {
			float rgba[4] = {(float)(frames % 256) / 255.0f, 0.5f, 0.25f, 1.0f};
			uint32_t clear[9] = {VIRGL_CMD(7, 0, 8), 4};

			memcpy(&clear[2], rgba, sizeof(rgba));
			submit("clear", 1, clear, 9, true, VIRTIO_GPU_RESP_OK_NODATA);
		} else {
			uint32_t *px = (uint32_t *)(mem + PIXELS_AREA);

			for (uint32_t i = 0; i < w * h; i++)
				px[i] = frames * 0x010203u;
			expect("TRANSFER_TO_HOST_2D", &t2, sizeof(t2), VIRTIO_GPU_RESP_OK_NODATA);
		}
		expect("RESOURCE_FLUSH", &fl, sizeof(fl), VIRTIO_GPU_RESP_OK_NODATA);
		while (updates == seen) {
			struct pollfd pfd = {.fd = gpu, .events = POLLIN};

			if (poll(&pfd, 1, TIMEOUT_MS) <= 0)
				fail("frame %u: no scanout update", frames);
			serve_display();
		}
		frames++;
		t = now_s();
	} while (t - t0 < seconds);
	printf("frames %u seconds %.3f fps %.1f\n", frames, t - t0, frames / (t - t0));
}

/* ---- hostile modes (issue 22) ------------------------------------------------ */

/* Guest memory of the attacks, above what the scenario uses. */
#define FLOOD_DESC    0x400000u
#define FLOOD_AVAIL   0x480000u
#define FLOOD_USED    0x4a0000u
#define FLOOD_NUM     32768u
#define FLOOD_CHAINS  30000u
#define BIG_AREA      0x1000000u /* 16 MiB */
#define BIG_SIZE      (16u << 20)
#define BACKING_REQ   0x2000000u /* an ATTACH_BACKING of 262144 entries: 4 MiB + 32 */
#define BACKING_PAGES 0x3000000u /* the 4 MiB every entry names */
#define BACKING_N     262144u

/*
 * Waits until queue @q's used index reaches @idx, serving the display
 * channel meanwhile; fails (@what) when that takes more than @limit_s from
 * @t0 (now_s()). Returns the seconds since @t0.
 */
static double wait_used(int q, uint16_t idx, double t0, double limit_s, const char *what)
{
	double took;

	while (used(q)[1] != idx) {
		struct pollfd pfd = {.fd = gpu, .events = POLLIN};

		if (now_s() - t0 > limit_s)
			fail("%s: used index %u of %u after %.0f s", what, used(q)[1], idx,
			     limit_s);
		if (poll(&pfd, 1, 10) > 0)
			serve_display();
	}
	took = now_s() - t0;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return took;
}

static void hold_if_asked(void)
{
	char c;

	if (!getenv("FRONTEND_HOLD"))
		return;
	fprintf(stderr, "vhost-user-frontend: holding\n");
	if (read(0, &c, 1) < 0) {
	}
}

/*
 * Stops the control ring (GET_VRING_BASE) and starts it again with @num
 * entries at the FLOOD_* addresses, as QEMU restarts a ring.
 */
static void restart_control_ring(uint32_t num)
{
	struct vhost_user_vring_state st = {0, 0};
	struct vhost_user_vring_addr a = {.index = 0,
					  .desc_uva = (uint64_t)(uintptr_t)(mem + FLOOD_DESC),
					  .avail_uva = (uint64_t)(uintptr_t)(mem + FLOOD_AVAIL),
					  .used_uva = (uint64_t)(uintptr_t)(mem + FLOOD_USED)};
	uint64_t idx = 0;

	send_msg(VHOST_USER_GET_VRING_BASE, 0, &st, sizeof(st), NULL, 0);
	read_reply(VHOST_USER_GET_VRING_BASE, &st, sizeof(st));
	memset(mem + FLOOD_DESC, 0, FLOOD_USED + 8 * FLOOD_NUM + 8 - FLOOD_DESC);
	st = (struct vhost_user_vring_state){0, num};
	send_msg(VHOST_USER_SET_VRING_NUM, 0, &st, sizeof(st), NULL, 0);
	st.num = 0;
	send_msg(VHOST_USER_SET_VRING_BASE, 0, &st, sizeof(st), NULL, 0);
	send_msg(VHOST_USER_SET_VRING_ADDR, 0, &a, sizeof(a), NULL, 0);
	close(kick[0]);
	kick[0] = eventfd(0, EFD_CLOEXEC);
	send_msg(VHOST_USER_SET_VRING_KICK, 0, &idx, sizeof(idx), &kick[0], 1);
	st.num = 1;
	set_u64(VHOST_USER_SET_VRING_ENABLE, *(uint64_t *)&st, have_ack);
	ring_num[0] = num;
	ring_desc[0] = FLOOD_DESC;
	ring_avail[0] = FLOOD_AVAIL;
	ring_used[0] = FLOOD_USED;
	avail_idx[0] = used_seen[0] = 0;
}

static void attack_display_flood(void)
{
	struct virtio_gpu_ctx_create cc = {.hdr = {.type = VIRTIO_GPU_CMD_CTX_CREATE, .ctx_id = 1},
					   .nlen = 5};
	struct virtio_gpu_resource_create_3d c3 = {.hdr.type = VIRTIO_GPU_CMD_RESOURCE_CREATE_3D,
						   .resource_id = 1,
						   .target = 2,
						   .format = VIRTIO_GPU_FORMAT_B8G8R8X8_UNORM,
						   .bind = (1u << 1) | (1u << 3),
						   .width = 64,
						   .height = 64,
						   .depth = 1,
						   .array_size = 1};
	struct virtio_gpu_ctx_resource car = {
	    .hdr = {.type = VIRTIO_GPU_CMD_CTX_ATTACH_RESOURCE, .ctx_id = 1}, .resource_id = 1};
	uint32_t fb[10] = {VIRGL_CMD(1, 8, 5),
			   10,
			   1,
			   VIRTIO_GPU_FORMAT_B8G8R8X8_UNORM,
			   0,
			   0,
			   VIRGL_CMD(5, 0, 3),
			   1,
			   0,
			   10};
	struct {
		struct virtio_gpu_cmd_submit s;
		uint32_t dw[9];
	} clear = {{.hdr = {.type = VIRTIO_GPU_CMD_SUBMIT_3D, .ctx_id = 1}, .size = 36},
		   {VIRGL_CMD(7, 0, 8), 4, 0x3f800000u, 0, 0, 0x3f800000u, 0, 0, 0}};
	struct virtio_gpu_ctrl_hdr info = {.type = VIRTIO_GPU_CMD_GET_DISPLAY_INFO};
	struct desc *d;
	struct virtio_gpu_ctrl_hdr submit_resp, flood_resp;
	uint64_t one = 1;
	double t0, took;

	memcpy(cc.debug_name, "flood", 5);
	expect("CTX_CREATE", &cc, sizeof(cc), VIRTIO_GPU_RESP_OK_NODATA);
	expect("RESOURCE_CREATE_3D", &c3, sizeof(c3), VIRTIO_GPU_RESP_OK_NODATA);
	expect("CTX_ATTACH_RESOURCE", &car, sizeof(car), VIRTIO_GPU_RESP_OK_NODATA);
	submit("framebuffer", 1, fb, 10, false, VIRTIO_GPU_RESP_OK_NODATA);
	restart_control_ring(FLOOD_NUM);
	fprintf(stderr, "vhost-user-frontend: ok: control ring restarted at %u entries\n",
		FLOOD_NUM);
	/* Chain 0: the SUBMIT_3D; chain 2: GET_DISPLAY_INFO in a 16 MiB buffer. */
	memcpy(mem + REQ_AREA, &clear, sizeof(clear));
	memset(mem + BIG_AREA, 0, BIG_SIZE);
	memcpy(mem + BIG_AREA, &info, sizeof(info));
	memset(mem + RESP_AREA, 0xee, 8192);
	d = (struct desc *)(mem + ring_desc[0]);
	d[0] = (struct desc){REQ_AREA, sizeof(clear), VRING_DESC_F_NEXT, 1};
	d[1] = (struct desc){RESP_AREA, 4096, VRING_DESC_F_WRITE, 0};
	d[2] = (struct desc){BIG_AREA, BIG_SIZE, VRING_DESC_F_NEXT, 3};
	d[3] = (struct desc){RESP_AREA + 4096, 4096, VRING_DESC_F_WRITE, 0};
	avail(0)[2] = 0;
	for (uint32_t i = 1; i <= FLOOD_CHAINS; i++)
		avail(0)[2 + i] = 2;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	avail(0)[1] = (uint16_t)(FLOOD_CHAINS + 1);
	t0 = now_s();
	if (write(kick[0], &one, sizeof(one)) != sizeof(one))
		fail("kick");
	took = wait_used(0, (uint16_t)(FLOOD_CHAINS + 1), t0, 120, "display-flood");
	avail_idx[0] = used_seen[0] = (uint16_t)(FLOOD_CHAINS + 1);
	memcpy(&submit_resp, mem + RESP_AREA, sizeof(submit_resp));
	memcpy(&flood_resp, mem + RESP_AREA + 4096, sizeof(flood_resp));
	if (submit_resp.type != VIRTIO_GPU_RESP_OK_NODATA)
		fail("display-flood: the SUBMIT_3D was answered %#x", submit_resp.type);
	if (flood_resp.type != VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER)
		fail("display-flood: a 16 MiB GET_DISPLAY_INFO was answered %#x, not refused",
		     flood_resp.type);
	printf("attack display-flood: %u chains answered in %.3f s, SUBMIT_3D %#x, "
	       "GET_DISPLAY_INFO of 16 MiB %#x\n",
	       FLOOD_CHAINS + 1, took, submit_resp.type, flood_resp.type);
	fflush(stdout);
	/* The device still answers a well-formed request. */
	memcpy(mem + REQ_AREA, &info, sizeof(info));
	if (request(0, sizeof(info), sizeof(struct virtio_gpu_resp_display_info)) !=
	    VIRTIO_GPU_RESP_OK_DISPLAY_INFO)
		fail("display-flood: GET_DISPLAY_INFO after the flood");
	hold_if_asked();
}

static void attack_ring_num(const char *path)
{
	int memfd = memfd_create("ring-num", MFD_CLOEXEC), kfd = eventfd(0, EFD_CLOEXEC);
	struct vhost_user_memory t = {.nregions = 1};
	struct vhost_user_vring_state st = {1, 4};
	uint8_t *g;
	uint64_t features = 1ull << VIRTIO_F_VERSION_1, idx = 1, one = 1;
	const uint32_t used_at = 0x2000 - 40; /* 6 + 8 * 4 bytes, 4-aligned, at the end */
	struct vhost_user_vring_addr a = {.index = 1};
	struct virtio_gpu_update_cursor c = {.hdr.type = VIRTIO_GPU_CMD_MOVE_CURSOR};
	struct desc *d;

	if (memfd < 0 || kfd < 0 || ftruncate(memfd, 0x2000) < 0)
		fail("memfd");
	g = mmap(NULL, 0x2000, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (g == MAP_FAILED)
		fail("mmap");
	closing_is_fine = true;
	sock = connect_to(path);
	send_msg(VHOST_USER_SET_OWNER, 0, NULL, 0, NULL, 0);
	(void)get_u64(VHOST_USER_GET_FEATURES);
	send_msg(VHOST_USER_SET_FEATURES, 0, &features, sizeof(features), NULL, 0);
	t.regions[0] = (struct guest_mem_region){0, 0x2000, (uint64_t)(uintptr_t)g, 0};
	send_msg(VHOST_USER_SET_MEM_TABLE, 0, &t, 8 + sizeof(t.regions[0]), &memfd, 1);
	a.desc_uva = (uint64_t)(uintptr_t)g;
	a.avail_uva = (uint64_t)(uintptr_t)(g + 0x100);
	a.used_uva = (uint64_t)(uintptr_t)(g + used_at);
	send_msg(VHOST_USER_SET_VRING_NUM, 0, &st, sizeof(st), NULL, 0);
	st.num = 0;
	send_msg(VHOST_USER_SET_VRING_BASE, 0, &st, sizeof(st), NULL, 0);
	send_msg(VHOST_USER_SET_VRING_ADDR, 0, &a, sizeof(a), NULL, 0);
	*(uint16_t *)(g + used_at + 2) = 30000;
	send_msg(VHOST_USER_SET_VRING_KICK, 0, &idx, sizeof(idx), &kfd, 1);
	st.num = 32768;
	send_msg(VHOST_USER_SET_VRING_NUM, 0, &st, sizeof(st), NULL, 0);
	/* One cursor request: the old back-end answered it 0x3c95c bytes into the region. */
	memcpy(g + 0x200, &c, sizeof(c));
	d = (struct desc *)g;
	d[0] = (struct desc){0x200, sizeof(c), VRING_DESC_F_NEXT, 1};
	d[1] = (struct desc){0x400, 24, VRING_DESC_F_WRITE, 0};
	((uint16_t *)(g + 0x100))[2] = 0;
	((uint16_t *)(g + 0x100))[1] = 1;
	if (write(kfd, &one, sizeof(one)) != sizeof(one))
		fail("kick");
	expect_closed("ring-num");
	if (*(uint16_t *)(g + used_at + 2) != 30000)
		fail("ring-num: the resized ring answered a request");
	printf("attack ring-num: SET_VRING_NUM on a started ring closed the connection\n");
}

static void attack_backing(void)
{
	struct virtio_gpu_resource_create_2d c2 = {.hdr.type = VIRTIO_GPU_CMD_RESOURCE_CREATE_2D,
						   .format = VIRTIO_GPU_FORMAT_B8G8R8X8_UNORM,
						   .width = 64,
						   .height = 64};
	struct virtio_gpu_resource_attach_backing ab = {
	    .hdr.type = VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING, .nr_entries = BACKING_N};
	struct virtio_gpu_resource_detach_backing db = {
	    .hdr.type = VIRTIO_GPU_CMD_RESOURCE_DETACH_BACKING, .resource_id = 1};
	struct virtio_gpu_ctrl_hdr info = {.type = VIRTIO_GPU_CMD_GET_DISPLAY_INFO};
	struct virtio_gpu_mem_entry *e = (void *)(mem + BACKING_REQ + sizeof(ab));
	const uint32_t len = (uint32_t)(sizeof(ab) + BACKING_N * sizeof(*e));
	uint32_t attached = 0, refused = 0, type;

	for (uint32_t k = 0; k < BACKING_N; k++)
		e[k] = (struct virtio_gpu_mem_entry){BACKING_PAGES + (k % 1024) * 4096ull, 4096, 0};
	for (uint32_t id = 1; id <= 64; id++) {
		c2.resource_id = id;
		expect("RESOURCE_CREATE_2D", &c2, sizeof(c2), VIRTIO_GPU_RESP_OK_NODATA);
		ab.resource_id = id;
		memcpy(mem + BACKING_REQ, &ab, sizeof(ab));
		type = request_at(0, BACKING_REQ, len, 4096);
		if (type != VIRTIO_GPU_RESP_OK_NODATA) {
			refused = type;
			break;
		}
		attached++;
	}
	if (!refused)
		fail("backing: 64 resources of %u entries each were all attached", BACKING_N);
	if (refused != VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY)
		fail("backing: refused with %#x, not ERR_OUT_OF_MEMORY", refused);
	printf("attack backing: %u resources of %u entries attached, the next refused %#x\n",
	       attached, BACKING_N, refused);
	fflush(stdout);
	/* Nothing else is affected, and a detached backing's entries come back. */
	memcpy(mem + REQ_AREA, &info, sizeof(info));
	if (request(0, sizeof(info), sizeof(struct virtio_gpu_resp_display_info)) !=
	    VIRTIO_GPU_RESP_OK_DISPLAY_INFO)
		fail("backing: GET_DISPLAY_INFO after the refusal");
	expect("RESOURCE_DETACH_BACKING", &db, sizeof(db), VIRTIO_GPU_RESP_OK_NODATA);
	ab.resource_id = attached + 1;
	memcpy(mem + BACKING_REQ, &ab, sizeof(ab));
	if (request_at(0, BACKING_REQ, len, 4096) != VIRTIO_GPU_RESP_OK_NODATA)
		fail("backing: the refused resource's backing still refused after a detach");
	fprintf(stderr, "vhost-user-frontend: ok: a detached backing's entries are given back\n");
	hold_if_asked();
}

/* Side of the textures of attack huge-resources: 4096^2 texels of 4 bytes, 64 MiB. */
#define HUGE_SIZE 4096u

/*
 * Up to 64 textures of 64 MiB each (RESOURCE_CREATE_3D), until one is
 * refused: it must be ERR_OUT_OF_MEMORY (the domain's resource_memory_mb),
 * the device must still answer, and a texture unreferenced gives its
 * share back.
 */
static void attack_huge_resources(void)
{
	struct virtio_gpu_resource_create_3d c3 = {.hdr.type = VIRTIO_GPU_CMD_RESOURCE_CREATE_3D,
						   .target = 2,
						   .format = BUSY_FORMAT,
						   .bind = BUSY_BIND,
						   .width = HUGE_SIZE,
						   .height = HUGE_SIZE,
						   .depth = 1,
						   .array_size = 1};
	struct virtio_gpu_resource_unref un = {.hdr.type = VIRTIO_GPU_CMD_RESOURCE_UNREF,
					       .resource_id = 1};
	struct virtio_gpu_ctrl_hdr info = {.type = VIRTIO_GPU_CMD_GET_DISPLAY_INFO};
	uint32_t made = 0, refused = 0, type;

	for (uint32_t id = 1; id <= 64; id++) {
		c3.resource_id = id;
		memcpy(mem + REQ_AREA, &c3, sizeof(c3));
		type = request(0, sizeof(c3), sizeof(struct virtio_gpu_ctrl_hdr));
		if (type != VIRTIO_GPU_RESP_OK_NODATA) {
			refused = type;
			break;
		}
		made++;
	}
	if (!refused)
		fail("huge-resources: 64 textures of 64 MiB were all created");
	if (refused != VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY)
		fail("huge-resources: refused with %#x, not ERR_OUT_OF_MEMORY", refused);
	printf("attack huge-resources: %u textures of %u MiB created, the next refused %#x\n", made,
	       HUGE_SIZE * HUGE_SIZE * 4 >> 20, refused);
	fflush(stdout);
	memcpy(mem + REQ_AREA, &info, sizeof(info));
	if (request(0, sizeof(info), sizeof(struct virtio_gpu_resp_display_info)) !=
	    VIRTIO_GPU_RESP_OK_DISPLAY_INFO)
		fail("huge-resources: GET_DISPLAY_INFO after the refusal");
	expect("RESOURCE_UNREF", &un, sizeof(un), VIRTIO_GPU_RESP_OK_NODATA);
	c3.resource_id = made + 1;
	expect("RESOURCE_CREATE_3D after an unref", &c3, sizeof(c3), VIRTIO_GPU_RESP_OK_NODATA);
	fprintf(stderr, "vhost-user-frontend: ok: an unreferenced texture's share is given back\n");
	hold_if_asked();
}

/* Contexts attack contexts asks for: one more than a VM's table (VGPU_MAX_CONTEXTS). */
#define ATTACK_CONTEXTS 65u

/*
 * Guest contexts 1, 2, ... until one is refused: it must be
 * ERR_OUT_OF_MEMORY (the domain's max_contexts_per_client); then context 1
 * is destroyed and a new one created, which must succeed.
 */
static void attack_contexts(void)
{
	struct virtio_gpu_ctx_create cc = {.hdr = {.type = VIRTIO_GPU_CMD_CTX_CREATE}, .nlen = 4};
	struct virtio_gpu_ctx_destroy cd = {
	    .hdr = {.type = VIRTIO_GPU_CMD_CTX_DESTROY, .ctx_id = 1}};
	uint32_t made = 0, refused = 0, type;

	memcpy(cc.debug_name, "many", 4);
	for (uint32_t id = 1; id <= ATTACK_CONTEXTS; id++) {
		cc.hdr.ctx_id = id;
		memcpy(mem + REQ_AREA, &cc, sizeof(cc));
		type = request(0, sizeof(cc), sizeof(struct virtio_gpu_ctrl_hdr));
		if (type != VIRTIO_GPU_RESP_OK_NODATA) {
			refused = type;
			break;
		}
		made++;
	}
	if (!refused)
		fail("contexts: %u contexts were all created", ATTACK_CONTEXTS);
	if (refused != VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY)
		fail("contexts: refused with %#x, not ERR_OUT_OF_MEMORY", refused);
	printf("attack contexts: %u contexts created, the next refused %#x\n", made, refused);
	fflush(stdout);
	expect("CTX_DESTROY 1", &cd, sizeof(cd), VIRTIO_GPU_RESP_OK_NODATA);
	cc.hdr.ctx_id = ATTACK_CONTEXTS + 1;
	expect("CTX_CREATE after a CTX_DESTROY", &cc, sizeof(cc), VIRTIO_GPU_RESP_OK_NODATA);
	fprintf(stderr, "vhost-user-frontend: ok: a destroyed context's place is given back\n");
	hold_if_asked();
}

/* Guest context 1 with two BUSY_SIZE textures, 1 and 2, attached (busy_blits.h). */
static void busy_context(void)
{
	struct virtio_gpu_ctx_create cc = {.hdr = {.type = VIRTIO_GPU_CMD_CTX_CREATE, .ctx_id = 1},
					   .nlen = 4};
	struct virtio_gpu_resource_create_3d c3 = {.hdr.type = VIRTIO_GPU_CMD_RESOURCE_CREATE_3D,
						   .target = 2,
						   .format = BUSY_FORMAT,
						   .bind = BUSY_BIND,
						   .width = BUSY_SIZE,
						   .height = BUSY_SIZE,
						   .depth = 1,
						   .array_size = 1};
	struct virtio_gpu_ctx_resource car = {
	    .hdr = {.type = VIRTIO_GPU_CMD_CTX_ATTACH_RESOURCE, .ctx_id = 1}};

	memcpy(cc.debug_name, "busy", 4);
	expect("CTX_CREATE", &cc, sizeof(cc), VIRTIO_GPU_RESP_OK_NODATA);
	for (uint32_t id = 1; id <= 2; id++) {
		c3.resource_id = car.resource_id = id;
		expect("RESOURCE_CREATE_3D", &c3, sizeof(c3), VIRTIO_GPU_RESP_OK_NODATA);
		expect("CTX_ATTACH_RESOURCE", &car, sizeof(car), VIRTIO_GPU_RESP_OK_NODATA);
	}
}

/*
 * A fenced SUBMIT_3D of @dw_n dwords at @dw and CTX_DESTROY of context 1 in
 * one kick: both must be answered OK (the context's groups are measured
 * when the GPU is done with them). Returns how long the answers took, s.
 */
static double submit_and_destroy(const uint32_t *dw, uint32_t dw_n, uint64_t fence_id,
				 const char *what)
{
	struct virtio_gpu_ctx_destroy cd = {
	    .hdr = {.type = VIRTIO_GPU_CMD_CTX_DESTROY, .ctx_id = 1}};
	struct virtio_gpu_cmd_submit sub = {.hdr = {.type = VIRTIO_GPU_CMD_SUBMIT_3D,
						    .flags = VIRTIO_GPU_FLAG_FENCE,
						    .fence_id = fence_id,
						    .ctx_id = 1},
					    .size = dw_n * 4};
	struct desc *d = (struct desc *)(mem + ring_desc[0]);
	struct virtio_gpu_ctrl_hdr submit_resp, destroy_resp;
	const uint32_t destroy_at = REQ_AREA + 0x8000u;
	uint64_t one = 1;
	double t0, took;

	/* One kick: the fenced SUBMIT_3D, then CTX_DESTROY. */
	memcpy(mem + REQ_AREA, &sub, sizeof(sub));
	memcpy(mem + REQ_AREA + sizeof(sub), dw, dw_n * 4);
	memcpy(mem + destroy_at, &cd, sizeof(cd));
	memset(mem + RESP_AREA, 0xee, 8192);
	d[0] = (struct desc){REQ_AREA, (uint32_t)sizeof(sub) + dw_n * 4, VRING_DESC_F_NEXT, 1};
	d[1] = (struct desc){RESP_AREA, 4096, VRING_DESC_F_WRITE, 0};
	d[2] = (struct desc){destroy_at, sizeof(cd), VRING_DESC_F_NEXT, 3};
	d[3] = (struct desc){RESP_AREA + 4096, 4096, VRING_DESC_F_WRITE, 0};
	avail(0)[2 + avail_idx[0] % ring_num[0]] = 0;
	avail(0)[2 + (avail_idx[0] + 1) % ring_num[0]] = 2;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	avail_idx[0] = (uint16_t)(avail_idx[0] + 2);
	avail(0)[1] = avail_idx[0];
	t0 = now_s();
	if (write(kick[0], &one, sizeof(one)) != sizeof(one))
		fail("kick");
	took = wait_used(0, avail_idx[0], t0, 60, what);
	used_seen[0] = avail_idx[0];
	memcpy(&submit_resp, mem + RESP_AREA, sizeof(submit_resp));
	memcpy(&destroy_resp, mem + RESP_AREA + 4096, sizeof(destroy_resp));
	if (submit_resp.type != VIRTIO_GPU_RESP_OK_NODATA ||
	    destroy_resp.type != VIRTIO_GPU_RESP_OK_NODATA)
		fail("%s: SUBMIT_3D answered %#x, CTX_DESTROY %#x", what, submit_resp.type,
		     destroy_resp.type);
	return took;
}

static void attack_destroy_busy(void)
{
	uint32_t dw[BUSY_DWORDS];
	double took;

	busy_context();
	busy_blits(dw, 1, 2);
	took = submit_and_destroy(dw, BUSY_DWORDS, 1, "destroy-busy");
	printf("attack destroy-busy: SUBMIT_3D of %u blits of %ux%u and CTX_DESTROY in one kick, "
	       "answered in %.3f s\n",
	       BUSY_BLITS, BUSY_SIZE, BUSY_SIZE, took);
	fflush(stdout);
	hold_if_asked();
}

/*
 * pieces N: N fenced SUBMIT_3D, one at a time, each a CLEAR_TEXTURE of
 * texture 1 and busy_blits() (long groups: a worker cuts them into pieces),
 * then one more with CTX_DESTROY in the same kick. Prints when each was
 * answered ("answered FENCE NS", CLOCK_MONOTONIC as the trace): the test
 * checks that a group cut into pieces is answered only after its last
 * piece's fence.
 */
static void pieces(unsigned long n)
{
	enum { CLEAR_DW = 12 };
	struct {
		struct virtio_gpu_cmd_submit s;
		uint32_t dw[1 + CLEAR_DW + BUSY_DWORDS];
	} sub = {.s = {.hdr = {.type = VIRTIO_GPU_CMD_SUBMIT_3D,
			       .flags = VIRTIO_GPU_FLAG_FENCE,
			       .ctx_id = 1},
		       .size = (1 + CLEAR_DW + BUSY_DWORDS) * 4}};
	struct timespec t;

	busy_context();
	sub.dw[0] = VIRGL_CMD(FRONTEND_CMD_CLEAR_TEXTURE, 0, CLEAR_DW);
	sub.dw[1] = 1; /* texture 1, level 0, the whole of it */
	sub.dw[6] = BUSY_SIZE;
	sub.dw[7] = BUSY_SIZE;
	sub.dw[8] = 1;
	busy_blits(sub.dw + 1 + CLEAR_DW, 1, 2);
	for (unsigned long g = 1; g <= n; g++) {
		sub.s.hdr.fence_id = g;
		sub.dw[9] = (uint32_t)g * 2654435761u;
		expect("SUBMIT_3D", &sub, sizeof(sub), VIRTIO_GPU_RESP_OK_NODATA);
		clock_gettime(CLOCK_MONOTONIC, &t);
		printf("answered %lu %llu\n", g,
		       (unsigned long long)t.tv_sec * 1000000000ull +
			   (unsigned long long)t.tv_nsec);
	}
	submit_and_destroy(sub.dw, 1 + CLEAR_DW + BUSY_DWORDS, n + 1, "pieces");
	printf("pieces: %lu fenced groups of a clear and %u blits of %ux%u, then one with "
	       "CTX_DESTROY in the same kick\n",
	       n + 1, BUSY_BLITS, BUSY_SIZE, BUSY_SIZE);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc == 6 && (!strcmp(argv[2], "bench2d") || !strcmp(argv[2], "bench3d"))) {
		bool three_d = argv[2][5] == '3';

		quiet = true;
		need_3d = three_d;
		set_up(argv[1]);
		bench(three_d, atof(argv[3]), (uint32_t)atoi(argv[4]), (uint32_t)atoi(argv[5]));
		return 0;
	}
	if (argc == 4 && strcmp(argv[2], "--attack") == 0) {
		quiet = true;
		if (strcmp(argv[3], "ring-num") == 0) {
			attack_ring_num(argv[1]);
			return 0;
		}
		set_up(argv[1]);
		if (strcmp(argv[3], "display-flood") == 0)
			attack_display_flood();
		else if (strcmp(argv[3], "backing") == 0)
			attack_backing();
		else if (strcmp(argv[3], "destroy-busy") == 0)
			attack_destroy_busy();
		else if (strcmp(argv[3], "contexts") == 0)
			attack_contexts();
		else if (strcmp(argv[3], "huge-resources") == 0)
			attack_huge_resources();
		else if (strcmp(argv[3], "pieces") == 0)
			pieces(100);
		else
			fail("unknown attack %s", argv[3]);
		return 0;
	}
	if (argc != 3) {
		fprintf(
		    stderr,
		    "usage: vhost-user-frontend SOCKET scenario|bad-size|bad-fds|"
		    "bad-region\n"
		    "       vhost-user-frontend SOCKET bench2d|bench3d SECONDS WIDTH HEIGHT\n"
		    "       vhost-user-frontend SOCKET --attack "
		    "display-flood|ring-num|backing|destroy-busy|huge-resources|contexts|pieces\n");
		return 2;
	}
	if (strcmp(argv[2], "scenario") == 0) {
		set_up(argv[1]);
		scenario();
		/* Stay until told: the test reads show-budgets while the device lives. */
		if (getenv("FRONTEND_HOLD")) {
			char c;

			fprintf(stderr, "vhost-user-frontend: holding\n");
			if (read(0, &c, 1) < 0) {
			}
		}
		return 0;
	}
	closing_is_fine = true;
	sock = connect_to(argv[1]);
	send_msg(VHOST_USER_SET_OWNER, 0, NULL, 0, NULL, 0);
	if (strcmp(argv[2], "bad-size") == 0) {
		uint64_t v = 0;

		send_msg(VHOST_USER_SET_VRING_NUM, 0, &v, 4, NULL, 0);
	} else if (strcmp(argv[2], "bad-fds") == 0) {
		struct vhost_user_memory t = {.nregions = 2};
		int fd = memfd_create("guest", MFD_CLOEXEC);

		if (fd < 0 || ftruncate(fd, 1 << 20) < 0)
			fail("memfd");
		t.regions[0] = (struct guest_mem_region){0, 1 << 20, 0x10000000, 0};
		t.regions[1] = (struct guest_mem_region){1 << 20, 1 << 20, 0x20000000, 0};
		send_msg(VHOST_USER_SET_MEM_TABLE, 0, &t, 8 + 2 * sizeof(t.regions[0]), &fd, 1);
	} else if (strcmp(argv[2], "bad-region") == 0) {
		struct vhost_user_memory t = {.nregions = 2};
		int fds[2] = {memfd_create("a", MFD_CLOEXEC), memfd_create("b", MFD_CLOEXEC)};

		if (fds[0] < 0 || fds[1] < 0 || ftruncate(fds[0], 1 << 20) < 0 ||
		    ftruncate(fds[1], 1 << 20) < 0)
			fail("memfd");
		t.regions[0] = (struct guest_mem_region){0, 1 << 20, 0x10000000, 0};
		t.regions[1] = (struct guest_mem_region){4096, 1 << 20, 0x20000000, 0};
		send_msg(VHOST_USER_SET_MEM_TABLE, 0, &t, 8 + 2 * sizeof(t.regions[0]), fds, 2);
	} else {
		fail("unknown mode %s", argv[2]);
	}
	expect_closed(argv[2]);
	fprintf(stderr, "vhost-user-frontend: ok: %s closed the connection\n", argv[2]);
	return 0;
}
