// SPDX-License-Identifier: MIT
/*
 * What an attacker's code inside a worker would do, for the tests of a
 * compromised worker (issue 30; doc/design.md, "Workers' rights").
 * Loaded with LD_PRELOAD into mediatord, it does nothing there; in a
 * mediator-worker whose domain GM_WORKER_ATTACK_DOMAIN names (from its
 * --domain option), a thread waits until the worker's system-call filter
 * is on (as code that came in with a guest's bytes would run) and then
 * performs the attacks GM_WORKER_ATTACK lists (comma-separated, each
 * NAME or NAME:SECONDS), or the first line of the file
 * GM_WORKER_ATTACK_FILE names (read when the worker starts: a test changes
 * it between clients), each reporting on stderr (mediatord's log) a line
 * starting "worker-attack: NAME:" and ending "refused" or "DONE" (the
 * attack did what it wanted).
 *
 * Attacks:
 *   tiocsti  push a command line into every terminal the worker can
 *            reach: its descriptors, its session's terminal (/dev/tty),
 *            every pseudo-terminal by name (mediatord's among them).
 *   wx       make memory writable and executable at once, where injected
 *            code would be written and then run: a new map, a writable
 *            map turned executable, this module's own code turned
 *            writable; DONE for each that succeeded.
 *   forge    for GM_WORKER_ATTACK_SECONDS, write the grant board the worker
 *            maps as the review did: huge bounds and
 *            validity, NONE words turned OFFERED of later generations;
 *            DONE when the board could be written.
 *   claim    take the board's offers (OFFERED -> CLAIMED) and never
 *            report them, for GM_WORKER_ATTACK_SECONDS; DONE when one was
 *            taken.
 *   lie      for GM_WORKER_ATTACK_SECONDS, rewrite what the worker sends
 *            mediatord (its send() calls on WIRE_WORKER_FD, interposed
 *            here): every asked request predicted and bounded at 1 us and
 *            not young, every done and group record measured at 1 us;
 *            DONE when it lied about at least one group.
 *   hour     the same, but every asked request young with a bound (and
 *            prediction) of an hour, the most the wire accepts.
 *   flood    send valid records (WIRE_CLIENT_INFO) to mediatord as fast as
 *            the channel takes them, for GM_WORKER_ATTACK_SECONDS (default
 *            5); DONE when it could go on that long.
 *   export   send the worker's end of its record channel (WIRE_WORKER_FD)
 *            to its vtest client (SCM_RIGHTS on WIRE_CLIENT_FD), as the
 *            review did, DONE when it went; then exit when mediatord dies
 *            (the worker's parent changes), leaving the channel open in
 *            the client: the keeper must not take it for a live worker.
 */
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/wire.h"
#include "scm_send.h"

static void report(const char *attack, const char *what, int result, int err)
{
	if (result == 0)
		fprintf(stderr, "worker-attack: %s: %s: DONE\n", attack, what);
	else
		fprintf(stderr, "worker-attack: %s: %s (%s): refused\n", attack, what,
			strerror(err));
}

/* Pushes "id\n" into @fd's terminal; 0 when every byte went in. */
static int push_input(int fd)
{
	static const char line[] = "echo worker-attack-was-here\n";

	for (size_t i = 0; i < sizeof(line) - 1; i++) {
		if (ioctl(fd, TIOCSTI, &line[i]) < 0)
			return -1;
	}
	return 0;
}

static void try_terminal_path(const char *path)
{
	char what[300];
	int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC), r, err;

	snprintf(what, sizeof(what), "open %s", path);
	if (fd < 0) {
		report("tiocsti", what, -1, errno);
		return;
	}
	r = push_input(fd);
	err = errno;
	snprintf(what, sizeof(what), "TIOCSTI on %s", path);
	report("tiocsti", what, r, err);
	close(fd);
}

static void attack_tiocsti(void)
{
	char link[64], target[256], what[320];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	ssize_t n;

	/* Every descriptor the worker holds, terminal or not. */
	while (dir && (d = readdir(dir))) {
		int fd = atoi(d->d_name), r, err;

		if (d->d_name[0] == '.' || fd == dirfd(dir))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		r = push_input(fd);
		err = errno;
		snprintf(what, sizeof(what), "TIOCSTI on fd %d (%s)", fd, target);
		report("tiocsti", what, r, err);
	}
	if (dir)
		closedir(dir);
	try_terminal_path("/dev/tty");
	/* Every pseudo-terminal by name (mediatord's among them). */
	dir = opendir("/dev/pts");
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(what, sizeof(what), "/dev/pts/%s", d->d_name);
		try_terminal_path(what);
	}
	if (dir)
		closedir(dir);
	fprintf(stderr, "worker-attack: tiocsti: finished\n");
}

/* Memory writable and executable at once, three ways (attack "wx"). */
static void attack_wx(void)
{
	const int wx = PROT_READ | PROT_WRITE | PROT_EXEC;
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)page, wx, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int err = errno;

	report("wx", "mmap of a page writable and executable", p == MAP_FAILED ? -1 : 0, err);
	if (p != MAP_FAILED)
		munmap(p, (size_t)page);
	p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		int r = mprotect(p, (size_t)page, wx);

		err = errno;
		report("wx", "mprotect of a writable page to executable too", r, err);
		munmap(p, (size_t)page);
	}
	/* This function's own page, made writable while it stays executable. */
	void *code = (void *)((uintptr_t)(void *)attack_wx & ~(uintptr_t)(page - 1));
	int r = mprotect(code, (size_t)page, wx);

	err = errno;
	report("wx", "mprotect of its own code to writable", r, err);
	if (r == 0)
		mprotect(code, (size_t)page, PROT_READ | PROT_EXEC);
	fprintf(stderr, "worker-attack: wx: finished\n");
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The worker's grant board, where the worker mapped it (its descriptor is
 * closed by then: the mapping is found in /proc/self/maps); NULL
 * (reported) when it has none.
 */
static struct wire_board *find_board(const char *attack)
{
	char line[512];
	unsigned long start = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "gpu-mediator-grant-board") && strstr(line, "rw-s")) {
			start = strtoul(line, NULL, 16);
			break;
		}
	}
	if (f)
		fclose(f);
	if (!start)
		report(attack, "find the grant board's mapping", -1, ENOENT);
	return (struct wire_board *)start;
}

/* The current attack's seconds: from its "NAME:SECONDS", else GM_WORKER_ATTACK_SECONDS, else 5. */
static double attack_seconds = -1.0;

static uint64_t attack_end(void)
{
	const char *secs = getenv("GM_WORKER_ATTACK_SECONDS");
	double s = attack_seconds >= 0.0 ? attack_seconds : secs ? atof(secs) : 5.0;

	return now_ns() + (uint64_t)(s * 1e9);
}

/*
 * Forged offers are reserved for a client that is nobody (client ids are
 * small), so that the attacker's own worker does not take them and get
 * itself stopped before the attack ran its time.
 */
#define FORGED_FOR 0x3fffffffu

static void attack_forge(void)
{
	struct wire_board *b = find_board("forge");
	uint64_t end = attack_end(), writes = 0;
	char what[64];

	if (b) {
		while (now_ns() < end) {
			uint64_t word = atomic_load(&b->offer);

			for (uint32_t i = 0; i < WIRE_BOARD_DOMAINS; i++)
				atomic_store(&b->max_bound_ns[i], UINT64_MAX / 2);
			atomic_store(&b->valid_until_ns, UINT64_MAX / 2);
			if (WIRE_OFFER_STATE(word) == WIRE_OFFER_NONE)
				atomic_compare_exchange_strong(&b->offer, &word,
							       WIRE_OFFER(WIRE_OFFER_GEN(word) + 1,
									  WIRE_OFFER_OFFERED,
									  FORGED_FOR));
			writes++;
		}
		snprintf(what, sizeof(what), "%llu rounds of writes", (unsigned long long)writes);
		report("forge", what, 0, 0);
	}
	fprintf(stderr, "worker-attack: forge: finished\n");
}

static void attack_claim(void)
{
	struct wire_board *b = find_board("claim");
	uint64_t end = attack_end(), taken = 0;
	const struct timespec tick = {0, 100 * 1000};
	char what[64];

	if (b) {
		while (now_ns() < end) {
			uint64_t word = atomic_load(&b->offer);

			if (WIRE_OFFER_STATE(word) == WIRE_OFFER_OFFERED &&
			    atomic_compare_exchange_strong(&b->offer, &word,
							   WIRE_OFFER(WIRE_OFFER_GEN(word),
								      WIRE_OFFER_CLAIMED,
								      WIRE_OFFER_CLIENT(word))))
				taken++;
			nanosleep(&tick, NULL);
		}
		snprintf(what, sizeof(what), "%llu offers taken, none reported",
			 (unsigned long long)taken);
		report("claim", what, taken ? 0 : -1, EAGAIN);
	}
	fprintf(stderr, "worker-attack: claim: finished\n");
}

/* While set, send() on the record channel lies (attacks "lie", "hour"); how many records it
 * rewrote. */
enum lie { LIE_NONE, LIE_SHORT, LIE_HOUR };
static atomic_int lying;
static atomic_ulong lies;

/* Rewrites @len bytes of records at @p as the lie says. */
static void rewrite(uint8_t *p, size_t len)
{
	struct wire_header h;

	memcpy(&h, p, sizeof(h));
	if (h.type == WIRE_GRANT_REQUEST && len >= sizeof(struct wire_grant_request)) {
		struct wire_grant_request *r = (struct wire_grant_request *)p;

		if (!(r->flags & WIRE_GRANT_CLAIMED) && atomic_load(&lying) == LIE_HOUR) {
			/* The longest the wire accepts, young: unknown cost. */
			r->predicted_ns = r->bound_ns = WIRE_TIME_MAX_NS;
			r->flags |= WIRE_GRANT_YOUNG;
			atomic_fetch_add(&lies, 1);
		} else if (!(r->flags & WIRE_GRANT_CLAIMED)) {
			r->predicted_ns = r->bound_ns = 1000;
			r->flags &= ~(uint32_t)WIRE_GRANT_YOUNG;
			atomic_fetch_add(&lies, 1);
		}
	} else if (atomic_load(&lying) == LIE_HOUR) {
		return;
	} else if (h.type == WIRE_DONE && len >= sizeof(struct wire_done)) {
		((struct wire_done *)p)->measured_ns = 1000;
		atomic_fetch_add(&lies, 1);
	} else if (h.type == WIRE_GROUP) {
		for (size_t off = 0; off + sizeof(struct wire_group) <= len;
		     off += sizeof(struct wire_group)) {
			struct wire_group *g = (struct wire_group *)(p + off);

			g->end_ns = g->start_ns + 1000;
			g->predicted_ns = g->bound_ns = 1000;
		}
	}
}

/* The worker's send(): on the record channel, what the lie says while it lasts. */
ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	uint8_t copy[16384];

	if (fd == WIRE_WORKER_FD && atomic_load(&lying) && len >= sizeof(struct wire_header) &&
	    len <= sizeof(copy)) {
		memcpy(copy, buf, len);
		rewrite(copy, len);
		buf = copy;
	}
	return syscall(SYS_sendto, fd, buf, len, flags, NULL, 0);
}

static void attack_lie(const char *name, enum lie how)
{
	uint64_t end = attack_end();
	const struct timespec tick = {0, 10 * 1000 * 1000};
	char what[64];

	atomic_store(&lying, how);
	while (now_ns() < end)
		nanosleep(&tick, NULL);
	atomic_store(&lying, LIE_NONE);
	snprintf(what, sizeof(what), "%lu records rewritten", atomic_load(&lies));
	report(name, what, atomic_load(&lies) ? 0 : -1, ENOENT);
	fprintf(stderr, "worker-attack: %s: finished\n", name);
}

static void attack_flood(void)
{
	uint64_t end = attack_end();
	struct wire_client_info m = {
	    .hdr = {.type = WIRE_CLIENT_INFO, .size = sizeof(m)},
	    .peer_pid = -1,
	};
	unsigned long long sent = 0;
	int r = 0, err = 0;
	char what[96];

	snprintf(m.name, sizeof(m.name), "flood");
	while (now_ns() < end) {
		if (send(WIRE_WORKER_FD, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof(m)) {
			sent++;
		} else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			r = -1;
			err = errno;
			break;
		}
	}
	snprintf(what, sizeof(what), "%llu records sent", sent);
	report("flood", what, r, err);
	fprintf(stderr, "worker-attack: flood: finished\n");
}

static void attack_export(void)
{
	const struct timespec tick = {0, 10 * 1000 * 1000};
	const int channel = WIRE_WORKER_FD;
	pid_t parent = getppid();
	char byte = 'c';
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	int r = scm_send(WIRE_CLIENT_FD, &iov, 1, &channel, 1, MSG_NOSIGNAL) == 1 ? 0 : -1;

	report("export", "send the record channel to the client", r, errno);
	if (r < 0) {
		fprintf(stderr, "worker-attack: export: finished\n");
		return;
	}
	while (getppid() == parent)
		nanosleep(&tick, NULL);
	fprintf(stderr, "worker-attack: export: mediatord died: the worker exits, its channel "
			"open in its client\n");
	_exit(0);
}

static bool filter_on(void)
{
	char line[128];
	bool on = false;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "Seccomp:", 8) == 0)
			on = atoi(line + 8) == 2;
	if (f)
		fclose(f);
	return on;
}

static void *attacker(void *arg)
{
	char list[256], *save = NULL;
	const struct timespec tick = {0, 10 * 1000 * 1000};

	snprintf(list, sizeof(list), "%s", (const char *)arg);
	for (int i = 0; i < 6000 && !filter_on(); i++)
		nanosleep(&tick, NULL);
	if (!filter_on()) {
		fprintf(stderr, "worker-attack: the filter never came on\n");
		return NULL;
	}
	fprintf(stderr, "worker-attack: the filter is on; attacking\n");
	for (char *a = strtok_r(list, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(a, ':');

		attack_seconds = -1.0;
		if (colon) {
			*colon = '\0';
			attack_seconds = atof(colon + 1);
		}
		if (strcmp(a, "tiocsti") == 0)
			attack_tiocsti();
		else if (strcmp(a, "wx") == 0)
			attack_wx();
		else if (strcmp(a, "flood") == 0)
			attack_flood();
		else if (strcmp(a, "forge") == 0)
			attack_forge();
		else if (strcmp(a, "claim") == 0)
			attack_claim();
		else if (strcmp(a, "lie") == 0)
			attack_lie(a, LIE_SHORT);
		else if (strcmp(a, "hour") == 0)
			attack_lie(a, LIE_HOUR);
		else if (strcmp(a, "export") == 0)
			attack_export();
		else
			fprintf(stderr, "worker-attack: %s: no such attack\n", a);
	}
	return NULL;
}

/* The value of option @name in /proc/self/cmdline, or NULL. */
static const char *option(const char *name, char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/cmdline", "re");
	size_t n = f ? fread(buf, 1, size - 1, f) : 0;
	const char *prev = NULL;

	if (f)
		fclose(f);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
		if (prev && strcmp(prev, name) == 0)
			return buf + i;
		prev = buf + i;
	}
	return NULL;
}

__attribute__((constructor)) static void worker_attack_start(void)
{
	static char cmdline[8192], attacks[256];
	const char *list = getenv("GM_WORKER_ATTACK");
	const char *file = getenv("GM_WORKER_ATTACK_FILE");
	const char *want = getenv("GM_WORKER_ATTACK_DOMAIN");
	const char *domain;
	pthread_t t;

	if (!want || strcmp(program_invocation_short_name, "mediator-worker") != 0)
		return;
	domain = option("--domain", cmdline, sizeof(cmdline));
	if (!domain || strcmp(domain, want) != 0)
		return;
	/* Read now: the worker is still root, before it becomes its domain's user. */
	if (file) {
		FILE *f = fopen(file, "re");

		if (!f || !fgets(attacks, sizeof(attacks), f))
			attacks[0] = '\0';
		if (f)
			fclose(f);
		attacks[strcspn(attacks, "\n")] = '\0';
	} else if (list) {
		snprintf(attacks, sizeof(attacks), "%s", list);
	}
	if (attacks[0] && pthread_create(&t, NULL, attacker, attacks) == 0)
		pthread_detach(t);
}
