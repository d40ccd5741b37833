// SPDX-License-Identifier: MIT
/*
 * The worker's system-call allow-list (see syscall_filter.h).
 *
 * Each entry says why a worker needs it. "Renderer" is virglrenderer and
 * the host's GL driver (Mesa: llvmpipe here, a hardware driver with
 * egl-gbm) with their threads; "transport" is the vtest or vhost-user
 * server. Calls a worker makes only before the filter (exec, socket
 * options, credentials, opening the devices) are not on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/sched.h>
#include <linux/sync_file.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "worker/syscall_filter.h"
#include "common/util.h"
#include "gm_fence.h"

struct allowed {
	int nr;
	const char *why;
};

#define ALLOW(name, reason)                                                                        \
	{                                                                                          \
		SCMP_SYS(name), reason                                                             \
	}

static const struct allowed allowed[] = {
    /* Memory. */
    ALLOW(brk, "malloc"),
    /* mmap and mprotect: by protection (allow_write_xor_execute()). */
    ALLOW(munmap, "the same, released"),
    ALLOW(mremap, "realloc of large blocks"),
    ALLOW(madvise, "malloc returning memory, thread stacks"),
    ALLOW(membarrier, "the GL driver's JIT (LLVM) on some versions"),
    /* Threads and waiting. */
    ALLOW(futex, "mutexes and condition variables of every thread"),
    ALLOW(set_robust_list, "every new thread (glibc)"),
    ALLOW(get_robust_list, "glibc"),
    ALLOW(rseq, "every new thread (glibc restartable sequences)"),
    ALLOW(set_tid_address, "every new thread (glibc)"),
    ALLOW(sched_yield, "the renderer's spin waits"),
    ALLOW(sched_getaffinity, "the GL driver sizes its thread pool by the CPUs it may use"),
    ALLOW(nanosleep, "the transport's drain and retry waits"),
    ALLOW(clock_nanosleep, "the same, through glibc"),
    ALLOW(clock_gettime, "every timestamp (usually vDSO; the syscall where not)"),
    ALLOW(clock_getres, "the GL driver's timer queries"),
    ALLOW(gettimeofday, "glibc, where vDSO is not used"),
    ALLOW(exit, "a thread ends"),
    ALLOW(exit_group, "the worker ends"),
    ALLOW(restart_syscall, "a wait interrupted by a signal goes on"),
    /* Signals: its own only. */
    ALLOW(rt_sigaction, "glibc and the GL driver install handlers"),
    ALLOW(rt_sigprocmask, "thread creation blocks signals around clone"),
    ALLOW(rt_sigreturn, "return from a signal handler"),
    ALLOW(sigaltstack, "glibc, new threads"),
    ALLOW(getpid, "log lines, abort()"),
    ALLOW(gettid, "thread names, abort()"),
    ALLOW(getuid, "the GL driver's cache directory"),
    ALLOW(geteuid, "the same"),
    ALLOW(getgid, "the same"),
    ALLOW(getegid, "the same"),
    ALLOW(getppid, "nothing but harmless: glibc"),
    /* Descriptors: the connection, the record channel, eventfds, epoll, memfds. */
    ALLOW(read, "the client's and mediatord's sockets, eventfds, files of the shader cache"),
    ALLOW(write, "the same, and log lines"),
    ALLOW(readv, "vtest replies"),
    ALLOW(writev, "vtest replies, log lines"),
    ALLOW(pread64, "the shader cache"),
    ALLOW(pwrite64, "the shader cache"),
    ALLOW(lseek, "the shader cache, memfds"),
    ALLOW(close, "every descriptor"),
    ALLOW(dup, "the renderer hands out fences as sync_file descriptors"),
    ALLOW(dup3, "the same"),
    ALLOW(sendmsg, "vtest replies with descriptors; records to mediatord"),
    ALLOW(recvmsg, "the client's messages with descriptors (vhost-user)"),
    ALLOW(sendto, "records to mediatord"),
    ALLOW(recvfrom, "the client's messages, grants from mediatord"),
    ALLOW(shutdown, "the transport closes a connection"),
    ALLOW(poll, "the worker's event loop"),
    ALLOW(ppoll, "the same, through glibc"),
    ALLOW(epoll_create1, "the GL driver's and virglrenderer's waits"),
    ALLOW(epoll_ctl, "the same"),
    ALLOW(epoll_wait, "the same"),
    ALLOW(epoll_pwait, "the same"),
    ALLOW(eventfd2, "fence completions wake the main thread"),
    ALLOW(memfd_create, "vtest resources' shared memory, created for the client"),
    ALLOW(ftruncate, "sizing that shared memory"),
    ALLOW(fstat, "glibc stdio, the shader cache"),
    ALLOW(newfstatat, "the same"),
    ALLOW(statx, "the same"),
    /* Files: the GL driver's shader cache in the state directory, and /proc. */
    ALLOW(openat, "the shader cache; /proc/self (the driver's own queries)"),
    ALLOW(open, "the same, where a runtime calls it directly (AddressSanitizer's)"),
    ALLOW(mkdir, "the shader cache's directories"),
    ALLOW(mkdirat, "the same"),
    ALLOW(rename, "the shader cache and learned state are replaced atomically"),
    ALLOW(renameat, "the same"),
    ALLOW(renameat2, "the same"),
    ALLOW(unlink, "the shader cache evicts, a temporary state file is removed"),
    ALLOW(unlinkat, "the same"),
    ALLOW(flock, "the shader cache's index"),
    ALLOW(fsync, "learned state"),
    ALLOW(fdatasync, "learned state"),
    ALLOW(fallocate, "the shader cache"),
    ALLOW(getdents64, "the shader cache's eviction walks its directory"),
    ALLOW(readlink, "the driver's process name (/proc/self/exe)"),
    ALLOW(readlinkat, "the same"),
    ALLOW(access, "the driver's configuration files"),
    ALLOW(faccessat, "the same"),
    ALLOW(faccessat2, "the same"),
    ALLOW(uname, "the GL driver's cache keys"),
    ALLOW(sysinfo, "the GL driver sizes its caches by memory"),
    ALLOW(getrandom, "hash seeds"),
    ALLOW(getcwd, "glibc path handling"),
    ALLOW(getrlimit, "glibc thread stacks"),
    ALLOW(prlimit64, "the same"),
    ALLOW(sched_getscheduler, "the GL driver's thread queues read their policy"),
    ALLOW(sched_getparam, "the same"),
};

/*
 * Calls the renderer makes on some paths whose effect a worker must not have,
 * refused with EPERM instead of killing the worker: Mesa's thread queues
 * (the shader cache's writer among them) lower their threads' policy with
 * pthread_setschedparam() and may pin threads; both ignore a failure, and a
 * worker's scheduling is its domain's (nice, set before the filter).
 */
static const struct allowed refused[] = {
    ALLOW(sched_setparam, "Mesa's low-priority queues (shader cache writes)"),
    ALLOW(sched_setattr, "the same, newer glibc"),
    ALLOW(sched_setaffinity, "Mesa pins its threads on some paths"),
    ALLOW(setpriority, "thread priorities; the domain's nice stays"),
};

/* Names of system calls, for the message of a forbidden one (filled before the filter). */
#define MAX_NR 512
static char names[MAX_NR][24];

static void write_str(const char *s)
{
	ssize_t r = write(STDERR_FILENO, s, strlen(s));

	(void)r;
}

/* The kernel stopped a forbidden call: say which, then die of SIGSYS (async-signal-safe). */
static void on_sigsys(int sig, siginfo_t *info, void *ctx)
{
	char num[16];
	int nr = info->si_syscall, i = (int)sizeof(num) - 1;
	unsigned int v = (unsigned int)nr;

	(void)ctx;
	num[i] = '\0';
	do {
		num[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v && i > 0);
	write_str("mediator-worker: error: forbidden system call ");
	write_str(nr >= 0 && nr < MAX_NR && names[nr][0] ? names[nr] : "?");
	write_str(" (");
	write_str(num + i);
	write_str("): killed by its filter\n");
	signal(sig, SIG_DFL);
	raise(sig);
}

/* clone: threads only (CLONE_THREAD set); no new processes. */
static int allow_threads(scmp_filter_ctx ctx)
{
	int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				 SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));

	/*
	 * clone3 passes its flags in memory, which a filter cannot read:
	 * ENOSYS makes glibc fall back to clone, checked above.
	 */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	return r;
}

/* Signals to its own threads only (abort(), raise()); of prctl, thread names only. */
/* (Each comparison names its second datum, unused by SCMP_CMP_EQ: clang's -Wextra asks for it.) */
static int allow_own(scmp_filter_ctx ctx)
{
	pid_t self = getpid();
	int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
				 SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self, 0));

	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				     SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME, 0));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				     SCMP_A0(SCMP_CMP_EQ, PR_GET_NAME, 0));
	/* Who the client is (SO_PEERCRED), for mediatord's client list; nothing else of sockets. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(getsockopt), 2,
				     SCMP_A1(SCMP_CMP_EQ, SOL_SOCKET, 0),
				     SCMP_A2(SCMP_CMP_EQ, SO_PEERCRED, 0));
	return r;
}

/*
 * ioctl by request. DRM's requests by family, the type byte of their
 * numbers: a render node's driver has its own requests (i915's, amdgpu's,
 * hundreds across drivers), and the kernel itself lets a render node serve
 * only those its driver marked DRM_RENDER_ALLOW. Every other request by
 * its number (Linux's uapi headers; host-kmod's own): dma-buf's CPU access,
 * names and sync_file exchange, sync_file's merge and information, and the
 * three requests of host-kmod's fence device the worker makes. Requests
 * are matched on their low 32 bits, which are all the kernel reads.
 * Terminal requests (type 'T': isatty()'s TCGETS, but also TIOCSTI, which
 * pushes input into a terminal, and TIOCSCTTY) fail with ENOTTY, as on a
 * descriptor that is no terminal. Any other request is forbidden like a
 * forbidden call. (libseccomp lets a rule without arguments override those
 * with; so each refusal has its own match.)
 */
static const struct {
	unsigned long type;
	const char *why;
} ioctl_families[] = {
    {'d', "DRM: the GPU's render node (egl-gbm), its driver's own requests included"},
};

static const struct {
	unsigned long request;
	const char *why;
} ioctl_requests[] = {
    {DMA_BUF_IOCTL_SYNC, "dma-buf: brackets CPU access to a shared buffer"},
    {DMA_BUF_SET_NAME_A, "dma-buf: a buffer's name (32-bit pointer form)"},
    {DMA_BUF_SET_NAME_B, "dma-buf: a buffer's name"},
    {DMA_BUF_IOCTL_EXPORT_SYNC_FILE, "dma-buf: its fences as a sync_file"},
    {DMA_BUF_IOCTL_IMPORT_SYNC_FILE, "dma-buf: a sync_file's fence added to it"},
    {SYNC_IOC_MERGE, "sync_file: two fences as one"},
    {SYNC_IOC_FILE_INFO, "sync_file: a fence's state and timestamp"},
    {GM_FENCE_IOC_VERSION, "host-kmod's fence device: its ABI version"},
    {GM_FENCE_IOC_QUERY, "host-kmod's fence device: a completion timestamp"},
    {GM_FENCE_IOC_RESOLVE, "host-kmod's fence device: a fence of the worker's context"},
};

static int allow_ioctls(scmp_filter_ctx ctx)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(ioctl_families); i++)
		r = seccomp_rule_add(
		    ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
		    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xff00, ioctl_families[i].type << 8));
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(ioctl_requests); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
					     ioctl_requests[i].request & 0xffffffffUL));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOTTY), SCMP_SYS(ioctl), 1,
				     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xff00, (unsigned long)'T' << 8));
	return r;
}

/*
 * fcntl by command: descriptor flags, status flags, duplicates, memfd
 * seals, record locks (the shader cache). Signals to a process of the
 * worker's choosing (F_SETOWN, F_SETSIG), leases and directory
 * notifications: EPERM. Any other command is forbidden.
 */
static const int fcntl_commands[] = {
    F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD,	   F_SETFD,	F_GETFL,      F_SETFL,	   F_GETLK,
    F_SETLK, F_SETLKW,	      F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_ADD_SEALS, F_GET_SEALS,
};
static const int fcntl_refused[] = {
    F_SETOWN, F_SETOWN_EX, F_SETSIG, F_SETLEASE, F_NOTIFY,
};

static int allow_fcntls(scmp_filter_ctx ctx)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(fcntl_commands); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1,
				     SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)fcntl_commands[i], 0));
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(fcntl_refused); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(fcntl), 1,
				     SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)fcntl_refused[i], 0));
	return r;
}

/*
 * sched_setscheduler: a thread may lower itself to SCHED_IDLE (pid 0), as
 * a normal domain's worker does for bulk host work (host_work.h); mediatord
 * puts it back. Any other call (another thread's, as Mesa's queues make
 * with pthread_setschedparam(); another policy): EPERM, as above.
 */
static int allow_lowering(scmp_filter_ctx ctx)
{
	int nr = SCMP_SYS(sched_setscheduler);
	int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 2, SCMP_A0(SCMP_CMP_EQ, 0, 0),
				 SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)SCHED_IDLE, 0));

	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, SCMP_A0(SCMP_CMP_NE, 0, 0));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
				     SCMP_A1(SCMP_CMP_NE, (scmp_datum_t)SCHED_IDLE, 0));
	return r;
}

/*
 * mmap (malloc, the renderer's buffers, guest memory and shared memory
 * maps) and mprotect (the GL driver's shader JIT, thread stack guards)
 * with any protection but writable and executable at once, which fails
 * with EACCES, as under SELinux's execmem rule: LLVM's JIT writes its
 * code into a writable map and then makes it read-only and executable.
 * Mesa asks for such maps in two places and copes with the refusal:
 * gallium's rtasm heap (10 MiB, for its SSE vertex translation, which
 * falls back to generic code) and glapi's stub page (made before the
 * filter). Killing the worker instead killed every honest one at its
 * first draw (strace of a worker: the 10 MiB map). (crosvm's GPU device
 * policy lists the protections it allows; a hardware driver does not JIT.)
 */
static int allow_write_xor_execute(scmp_filter_ctx ctx)
{
	static const int calls[] = {SCMP_SYS(mmap), SCMP_SYS(mprotect)};
	static const scmp_datum_t ok[] = {0, PROT_WRITE, PROT_EXEC};
	int r = 0;

	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(calls); i++) {
		for (size_t k = 0; r == 0 && k < ARRAY_SIZE(ok); k++)
			r = seccomp_rule_add(
			    ctx, SCMP_ACT_ALLOW, calls[i], 1,
			    SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC, ok[k]));
		if (r == 0)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), calls[i], 1,
					     SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_WRITE | PROT_EXEC,
						     PROT_WRITE | PROT_EXEC));
	}
	return r;
}

static void remember_names(void)
{
	for (int nr = 0; nr < MAX_NR; nr++) {
		char *n = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);

		if (n)
			snprintf(names[nr], sizeof(names[nr]), "%s", n);
		free(n);
	}
}

int syscall_filter_install(char *err, size_t err_size)
{
	struct sigaction sa;
	scmp_filter_ctx ctx;
	int r = 0;

	remember_names();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGSYS, &sa, NULL) < 0) {
		r = -errno;
		snprintf(err, err_size, "SIGSYS handler: %s", strerror(-r));
		return r;
	}
	ctx = seccomp_init(SCMP_ACT_TRAP);
	if (!ctx) {
		snprintf(err, err_size, "seccomp_init failed");
		return -ENOMEM;
	}
	/* Every thread, the renderer's included, at once; the calls no thread
	 * needs are gone from all. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(allowed); i++) {
		if (allowed[i].nr < 0)
			continue; /* not on this architecture */
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i].nr, 0);
	}
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(refused); i++) {
		if (refused[i].nr >= 0)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), refused[i].nr, 0);
	}
	if (r == 0)
		r = allow_threads(ctx);
	if (r == 0)
		r = allow_own(ctx);
	if (r == 0)
		r = allow_ioctls(ctx);
	if (r == 0)
		r = allow_fcntls(ctx);
	if (r == 0)
		r = allow_lowering(ctx);
	if (r == 0)
		r = allow_write_xor_execute(ctx);
	/* A call of another architecture (x32's, say) ends the whole worker, not one thread. */
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	if (r < 0)
		snprintf(err, err_size, "cannot install the system call filter: %s", strerror(-r));
	return r;
}

int syscall_filter_enter(const char *domain, uint32_t client_id)
{
	const char *try = getenv("MEDIATOR_WORKER_TRY_FORBIDDEN");
	char err[256];
	int r = syscall_filter_install(err, sizeof(err));

	if (r < 0) {
		log_error("domain %s client %u: %s; not serving", domain, client_id, err);
		return r;
	}
	if (try && strcmp(try, domain) == 0) {
		log_info("domain %s client %u: MEDIATOR_WORKER_TRY_FORBIDDEN: calling socket()",
			 domain, client_id);
		r = socket(AF_INET, SOCK_STREAM, 0);
		if (r >= 0)
			close(r);
		log_error("domain %s client %u: socket() was not stopped by the filter", domain,
			  client_id);
		return -EPERM;
	}
	return 0;
}
