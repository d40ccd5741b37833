// SPDX-License-Identifier: MIT
/*
 * Replays real QEMU vhost-user sessions (the .txt files of tests/data/vhost-user,
 * recorded by tests/tools/vhost-user-record) against the real worker.
 *
 * For each recording, a mediator-worker is started on a socketpair as
 * mediatord starts it (--transport vhost-user), and this test plays QEMU:
 * it sends every request the recording shows, with the same flags and
 * payload and fresh fds of the right kind (memfds for the memory table,
 * eventfds for the rings, a socketpair for the display channel), and
 * reads a reply exactly where QEMU got one. A reply must match QEMU's
 * recorded one: request, flags, size and payload, except where the
 * replay differs from the recorded run by its nature: the replayed
 * guest never queues a request, so GET_VRING_BASE answers where
 * SET_VRING_BASE put the ring, and GET_CONFIG's capset count is this
 * host's virglrenderer's. The worker must keep the connection to the
 * end and exit 0 when "QEMU" disconnects.
 *
 * The display channel's recorded exchange (protocol features, display
 * information, EDID) is replayed against vgpu_display: QEMU's recorded
 * answers must be taken, and the requests sent must be those recorded.
 *
 * A new QEMU's recording added to the directory is replayed too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "scm_send.h"
#include "spawn_worker.h"
#include "worker/vhost-user/vgpu_display.h"
#include "worker/vhost-user/vhost_user.h"
#include "common/wire.h"

#define REPLY_TIMEOUT_MS 10000
#define MAX_LINE	 8192
/* The longest payload a recording line may carry (display answers included). */
#define MAX_RECORDED_PAYLOAD 2048u

struct record {
	char dir[3]; /* ">", "<", "G>", "G<" */
	uint32_t request, flags, size;
	int nfds;
	bool elided; /* payload left out of the recording ("*") */
	uint8_t payload[MAX_RECORDED_PAYLOAD];
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Parses one recording line into @r. 1: a record, 0: a comment or blank. */
static int parse_line(const char *file, int lineno, const char *line, struct record *r)
{
	char payload[MAX_LINE];
	size_t n;

	if (line[0] == '#' || line[0] == '\n' || line[0] == '\0')
		return 0;
	memset(r, 0, sizeof(*r));
	if (sscanf(line, "%2s %u %u %u %d %8191s", r->dir, &r->request, &r->flags, &r->size,
		   &r->nfds, payload) != 6)
		fail_msg("%s:%d: not a record", file, lineno);
	if (strcmp(payload, "*") == 0) {
		r->elided = true;
		return 1;
	}
	if (strcmp(payload, "-") == 0) {
		if (r->size)
			fail_msg("%s:%d: no payload for %u bytes", file, lineno, r->size);
		return 1;
	}
	n = strlen(payload);
	if (n != 2 * (size_t)r->size || r->size > MAX_RECORDED_PAYLOAD)
		fail_msg("%s:%d: payload of %zu hex digits for %u bytes", file, lineno, n, r->size);
	for (size_t i = 0; i < r->size; i++) {
		int hi = hexval(payload[2 * i]), lo = hexval(payload[2 * i + 1]);

		if (hi < 0 || lo < 0)
			fail_msg("%s:%d: bad hex", file, lineno);
		r->payload[i] = (uint8_t)(hi << 4 | lo);
	}
	return 1;
}

/* All records of @path; *@n their count. */
static struct record *load(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	char *line = malloc(MAX_LINE);
	struct record *recs = NULL;
	size_t cap = 0;
	int lineno = 0;

	assert_non_null(f);
	assert_non_null(line);
	*n = 0;
	while (fgets(line, MAX_LINE, f)) {
		lineno++;
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			recs = realloc(recs, cap * sizeof(*recs));
			assert_non_null(recs);
		}
		*n += (size_t)parse_line(path, lineno, line, &recs[*n]);
	}
	fclose(f);
	free(line);
	return recs;
}

/* ---- the worker ------------------------------------------------------------ */

struct worker {
	pid_t pid;
	int qemu;     /* our end of the vhost-user connection */
	int mediator; /* our end of the record channel */
	int display;  /* our end of the display channel, -1 before GPU_SET_SOCKET */
	uint32_t vring_base[VHOST_USER_VRING_IDX_MASK + 1];
};

static void start_worker(struct worker *w)
{
	w->pid = spawn_vhost_user_worker(MEDIATOR_WORKER_PATH, "replay", &w->qemu, &w->mediator);
	assert_true(w->pid > 0);
	w->display = -1;
	memset(w->vring_base, 0, sizeof(w->vring_base));
}

/* Drops what the worker sent mediatord (its hello and group records). */
static void drain_records(struct worker *w)
{
	char buf[4096];

	while (recv(w->mediator, buf, sizeof(buf), MSG_DONTWAIT) > 0) {
	}
}

/* Fresh fds of the kind @r's request carries. */
static int make_fds(struct worker *w, const struct record *r, int *fds)
{
	if (r->nfds == 0)
		return 0;
	switch (r->request) {
	case VHOST_USER_SET_MEM_TABLE: {
		struct vhost_user_memory m;

		memcpy(&m, r->payload, r->size < sizeof(m) ? r->size : sizeof(m));
		assert_int_equal(m.nregions, r->nfds);
		for (uint32_t i = 0; i < m.nregions; i++) {
			/* Sparse: the guest's memory reads as zeroes, so its rings are empty. */
			fds[i] = memfd_create("replay-guest", MFD_CLOEXEC);
			assert_true(fds[i] >= 0);
			assert_int_equal(ftruncate(fds[i], (off_t)(m.regions[i].mmap_offset +
								   m.regions[i].size)),
					 0);
		}
		return (int)m.nregions;
	}
	case VHOST_USER_SET_VRING_KICK:
	case VHOST_USER_SET_VRING_CALL:
	case VHOST_USER_SET_VRING_ERR:
		assert_int_equal(r->nfds, 1);
		fds[0] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		assert_true(fds[0] >= 0);
		return 1;
	case VHOST_USER_GPU_SET_SOCKET: {
		int sv[2];

		assert_int_equal(r->nfds, 1);
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
		if (w->display >= 0)
			close(w->display);
		w->display = sv[0];
		fds[0] = sv[1];
		return 1;
	}
	default:
		fail_msg("request %u (%s) with %d fds: which kind is not known", r->request,
			 vhost_user_request_name(r->request), r->nfds);
		return 0;
	}
}

static void send_request(struct worker *w, const struct record *r)
{
	uint32_t hdr[3] = {r->request, r->flags, r->size};
	struct iovec iov[2] = {{hdr, sizeof(hdr)}, {(void *)r->payload, r->size}};
	int fds[VHOST_USER_MAX_FDS], nfds = make_fds(w, r, fds);

	if (scm_send(w->qemu, iov, r->size ? 2 : 1, fds, nfds, MSG_NOSIGNAL) !=
	    (ssize_t)(sizeof(hdr) + r->size))
		fail_msg("%s: the worker closed the connection (%s)",
			 vhost_user_request_name(r->request), strerror(errno));
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	if (r->request == VHOST_USER_SET_VRING_BASE) {
		struct vhost_user_vring_state st;

		memcpy(&st, r->payload, sizeof(st));
		w->vring_base[st.index & VHOST_USER_VRING_IDX_MASK] = st.num;
	}
}

static void read_exact(int fd, void *buf, size_t len, const char *what)
{
	uint8_t *p = buf;

	while (len) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, REPLY_TIMEOUT_MS) <= 0)
			fail_msg("%s: no answer within %d ms", what, REPLY_TIMEOUT_MS);
		n = recv(fd, p, len, 0);
		if (n <= 0)
			fail_msg("%s: the worker closed the connection", what);
		p += n;
		len -= (size_t)n;
	}
}

/* Reads the worker's reply and holds it against QEMU's recorded @want. */
static void expect_reply(struct worker *w, const struct record *want)
{
	const char *name = vhost_user_request_name(want->request);
	uint8_t got[VHOST_USER_MAX_PAYLOAD];
	uint32_t hdr[3];

	read_exact(w->qemu, hdr, sizeof(hdr), name);
	if (hdr[0] != want->request || hdr[1] != want->flags || hdr[2] != want->size)
		fail_msg("reply to %s: request %u flags %#x size %u, QEMU got %u %#x %u", name,
			 hdr[0], hdr[1], hdr[2], want->request, want->flags, want->size);
	assert_true(hdr[2] <= sizeof(got));
	read_exact(w->qemu, got, hdr[2], name);
	switch (want->request) {
	case VHOST_USER_GET_VRING_BASE: {
		struct vhost_user_vring_state g, q;

		memcpy(&g, got, sizeof(g));
		memcpy(&q, want->payload, sizeof(q));
		if (g.index != q.index ||
		    g.num != w->vring_base[q.index & VHOST_USER_VRING_IDX_MASK])
			fail_msg("GET_VRING_BASE: ring %u at %u, expected ring %u at %u", g.index,
				 g.num, q.index,
				 w->vring_base[q.index & VHOST_USER_VRING_IDX_MASK]);
		break;
	}
	case VHOST_USER_GET_CONFIG: {
		size_t capsets = 12 + offsetof(struct virtio_gpu_config, num_capsets);
		uint32_t n;

		assert_true(hdr[2] >= capsets + sizeof(n));
		memcpy(&n, got + capsets, sizeof(n));
		if (n < 1)
			fail_msg("GET_CONFIG: no capset");
		/* The rest as QEMU got it. */
		memcpy(got + capsets, want->payload + capsets, sizeof(n));
		if (memcmp(got, want->payload, hdr[2]))
			fail_msg("GET_CONFIG: config space differs from QEMU's recorded one");
		break;
	}
	default:
		if (memcmp(got, want->payload, hdr[2]))
			fail_msg("reply to %s: payload differs from QEMU's recorded one", name);
	}
}

/* The first message on the display channel: the worker asks for protocol features. */
static void expect_display_request(struct worker *w, const struct record *want)
{
	uint32_t hdr[3];

	read_exact(w->display, hdr, sizeof(hdr), "display channel");
	if (hdr[0] != want->request || hdr[1] != want->flags || hdr[2] != want->size)
		fail_msg("display channel: request %u flags %#x size %u, QEMU got %u %#x %u",
			 hdr[0], hdr[1], hdr[2], want->request, want->flags, want->size);
}

static void replay_session(const char *path)
{
	struct worker w;
	struct record barrier = {.dir = "<", .request = VHOST_USER_GET_FEATURES};
	struct record *recs;
	size_t n, replies = 0, requests = 0;
	bool display_checked = false;
	int status;

	recs = load(path, &n);
	start_worker(&w);
	for (size_t i = 0; i < n; i++) {
		const struct record *r = &recs[i];

		if (strcmp(r->dir, ">") == 0) {
			send_request(&w, r);
			requests++;
			if (r->request == VHOST_USER_GET_FEATURES && !replies)
				barrier = recs[i + 1]; /* the offer, replayed at the end */
		} else if (strcmp(r->dir, "<") == 0) {
			expect_reply(&w, r);
			replies++;
		} else if (strcmp(r->dir, "G>") == 0 && !display_checked) {
			/* Only the first comes without a guest request behind it. */
			assert_true(w.display >= 0);
			expect_display_request(&w, r);
			display_checked = true;
		}
		drain_records(&w);
	}
	/* No reply QEMU did not get: the next one is the barrier's. */
	{
		struct record get = {
		    .dir = ">", .request = VHOST_USER_GET_FEATURES, .flags = VHOST_USER_VERSION};

		send_request(&w, &get);
		expect_reply(&w, &barrier);
	}
	close(w.qemu);
	assert_int_equal(waitpid(w.pid, &status, 0), w.pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("%s: the worker ended with status %#x", path, status);
	if (w.display >= 0)
		close(w.display);
	close(w.mediator);
	print_message("%s: %zu requests, %zu replies as QEMU got them\n", path, requests, replies);
	free(recs);
}

/*
 * The display channel's recorded handshake against vgpu_display: QEMU's
 * answers queued in the recorded order, then the EDID asked for as a
 * guest's GET_EDID asks; what was sent must be what QEMU got.
 */
static void replay_display(const char *path)
{
	struct record *recs;
	size_t n, sent = 0;
	struct vgpu_display disp;
	struct virtio_gpu_resp_edid edid;
	int sv[2];
	bool edid_asked = false;

	recs = load(path, &n);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	for (size_t i = 0; i < n; i++) {
		const struct record *r = &recs[i];
		uint32_t hdr[3] = {r->request, r->flags, r->size};

		if (strcmp(r->dir, "G<") != 0)
			continue;
		if (r->request == 11)
			edid_asked = true;
		assert_false(r->elided);
		assert_int_equal(send(sv[0], hdr, sizeof(hdr), 0), sizeof(hdr));
		assert_int_equal(send(sv[0], r->payload, r->size, 0), (ssize_t)r->size);
		if (r->request == 11)
			break; /* the rest follows guest requests this replay does not make */
	}
	vgpu_display_init(&disp, "replay", 1);
	vgpu_display_set_fd(&disp, sv[1]);
	if (edid_asked) {
		assert_int_equal(vgpu_display_edid(&disp, 0, &edid), 0);
		assert_int_equal(edid.hdr.type, VIRTIO_GPU_RESP_OK_EDID);
		assert_true(edid.size >= 128);
	} else {
		assert_true(vgpu_display_info(&disp)->pmodes[0].enabled);
	}
	/* What went out, against the recorded requests up to the EDID. */
	for (size_t i = 0; i < n; i++) {
		const struct record *r = &recs[i];
		uint32_t hdr[3];
		uint8_t payload[64];

		if (strcmp(r->dir, "G>") != 0)
			continue;
		if (recv(sv[0], hdr, sizeof(hdr), MSG_DONTWAIT) != sizeof(hdr))
			break;
		if (hdr[0] != r->request || hdr[1] != r->flags || hdr[2] != r->size)
			fail_msg("%s: display request %u %#x %u, QEMU got %u %#x %u", path, hdr[0],
				 hdr[1], hdr[2], r->request, r->flags, r->size);
		assert_true(hdr[2] <= sizeof(payload));
		if (hdr[2]) {
			assert_int_equal(recv(sv[0], payload, hdr[2], MSG_DONTWAIT),
					 (ssize_t)hdr[2]);
			if (memcmp(payload, r->payload, hdr[2]))
				fail_msg("%s: display request %u: payload differs", path, hdr[0]);
		}
		sent++;
	}
	assert_true(sent >= 2);
	assert_true(disp.fd >= 0);
	vgpu_display_finish(&disp);
	close(sv[0]);
	free(recs);
}

static void for_each_recording(void (*fn)(const char *path))
{
	DIR *d = opendir(VHOST_USER_DATA_DIR);
	struct dirent *e;
	int count = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[4096];
		size_t len = strlen(e->d_name);

		if (len < 5 || strcmp(e->d_name + len - 4, ".txt") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", VHOST_USER_DATA_DIR, e->d_name);
		fn(path);
		count++;
	}
	closedir(d);
	assert_true(count > 0);
}

static void every_recorded_qemu_session_is_answered_as_qemu_was(void **state)
{
	for_each_recording(replay_session);
}

static void every_recorded_display_handshake_is_taken(void **state)
{
	for_each_recording(replay_display);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_recorded_qemu_session_is_answered_as_qemu_was),
	    cmocka_unit_test(every_recorded_display_handshake_is_taken),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
