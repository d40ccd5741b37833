// SPDX-License-Identifier: MIT
/*
 * Tests of the worker's system-call allow-list (syscall_filter.h) and of
 * sandbox_enter() (sandbox.h), each in a child process: what a worker
 * needs still works under the filter (threads, memory, the JIT's
 * mprotect, memfds, files), maps writable and executable at once fail
 * with EACCES; a forbidden call (socket, fork, execve,
 * kill of another process) kills the child by SIGSYS after it named the
 * call on stderr; and a sandboxed child keeps only the descriptors it
 * was told to, has no-new-privs set and cannot become root again.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <linux/dma-buf.h>
#include <linux/sync_file.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cmocka.h>

#include "worker/sandbox.h"
#include "worker/syscall_filter.h"

/* What a child does once filtered; returns its exit status. */
typedef int (*child_fn)(void);

/* Runs @fn in a child under the filter; *@out gets its stderr. Returns the wait status. */
static int run_filtered(child_fn fn, char *out, size_t size)
{
	int pipefd[2], status;
	pid_t pid;
	ssize_t n;
	size_t len = 0;

	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char err[256];

		dup2(pipefd[1], STDERR_FILENO);
		close(pipefd[0]);
		if (syscall_filter_install(err, sizeof(err)) < 0) {
			fprintf(stderr, "install: %s\n", err);
			_exit(90);
		}
		_exit(fn());
	}
	close(pipefd[1]);
	while (len + 1 < size && (n = read(pipefd[0], out + len, size - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(pipefd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void *thread_main(void *arg)
{
	char name[16];

	prctl(PR_SET_NAME, "gm-test");
	prctl(PR_GET_NAME, name);
	*(int *)arg = strcmp(name, "gm-test") == 0 ? 42 : 1;
	return NULL;
}

/* What a worker's renderer and transport do. */
static int allowed_calls(void)
{
	pthread_t t;
	int v = 0, fd;
	char path[64], buf[8];
	void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p, 4096, PROT_READ | PROT_EXEC) < 0 || munmap(p, 1 << 20))
		return 1;
	if (pthread_create(&t, NULL, thread_main, &v) != 0 || pthread_join(t, NULL) != 0 || v != 42)
		return 2;
	fd = memfd_create("gm-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, 4096) < 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) < 0)
		return 3;
	close(fd);
	snprintf(path, sizeof(path), "/proc/self/status");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, sizeof(buf)) <= 0)
		return 4;
	close(fd);
	return 0;
}

static int forbidden_socket(void)
{
	socket(AF_INET, SOCK_STREAM, 0);
	return 10; /* not reached */
}

static int forbidden_fork(void)
{
	/* glibc's fork is clone without CLONE_THREAD. */
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	return 11;
}

static int forbidden_exec(void)
{
	char *const argv[] = {"/bin/true", NULL};

	execv("/bin/true", argv);
	return 12;
}

static int forbidden_kill(void)
{
	kill(getppid(), 0);
	return 13;
}

/* What Mesa's thread queues do (pthread_setschedparam, pinning): EPERM, and the worker lives. */
static void *lower_own_priority(void *arg)
{
	struct sched_param p = {0};
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	*(int *)arg = pthread_setschedparam(pthread_self(), SCHED_IDLE, &p) == EPERM &&
			      sched_setaffinity(0, sizeof(cpus), &cpus) < 0 && errno == EPERM &&
			      setpriority(PRIO_PROCESS, 0, 19) < 0 && errno == EPERM
			  ? 42
			  : 1;
	return NULL;
}

static int scheduling_calls(void)
{
	struct sched_param p = {0};
	pthread_t t;
	int v = 0;

	if (pthread_create(&t, NULL, lower_own_priority, &v) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	if (v != 42)
		return 2;
	/* Bulk host work (host_work.h): a thread may lower itself to SCHED_IDLE, nothing else. */
	if (sched_setscheduler(0, SCHED_FIFO, &p) == 0 || errno != EPERM)
		return 3;
	if (sched_setscheduler(0, SCHED_IDLE, &p) != 0 || sched_getscheduler(0) != SCHED_IDLE)
		return 4;
	if (sched_setscheduler(0, SCHED_OTHER, &p) == 0 || errno != EPERM)
		return 5;
	if (sched_setscheduler(getpid(), SCHED_IDLE, &p) == 0 || errno != EPERM)
		return 6;
	return 0;
}

static void scheduling_calls_are_refused_not_killed(void **state)
{
	char out[1024];
	int status = run_filtered(scheduling_calls, out, sizeof(out));

	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("status 0x%x, stderr: %s", status, out);
}

static void renderer_calls_are_allowed(void **state)
{
	char out[1024];
	int status = run_filtered(allowed_calls, out, sizeof(out));

	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("status 0x%x, stderr: %s", status, out);
}

static void expect_killed(child_fn fn, const char *name)
{
	char out[1024], want[64];
	int status = run_filtered(fn, out, sizeof(out));

	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS)
		fail_msg("%s: status 0x%x, stderr: %s", name, status, out);
	snprintf(want, sizeof(want), "forbidden system call %s (", name);
	if (!strstr(out, want))
		fail_msg("%s: stderr does not name it: %s", name, out);
}

/*
 * A map writable and executable at once, made so or turned so: EACCES
 * (as under SELinux's execmem rule; Mesa falls back), while read-only and
 * executable, and writable, are allowed.
 */
static int writable_and_executable_maps_are_refused(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p != MAP_FAILED || errno != EACCES)
		return 1;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	if (mprotect(p, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) == 0 || errno != EACCES)
		return 3;
	if (mprotect(p, 4096, PROT_EXEC) < 0 || mprotect(p, 4096, PROT_WRITE) < 0)
		return 4;
	return munmap(p, 4096) < 0 ? 5 : 0;
}

static void writable_and_executable_maps_fail(void **state)
{
	char out[1024];
	int status = run_filtered(writable_and_executable_maps_are_refused, out, sizeof(out));

	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("status 0x%x, stderr: %s", status, out);
}

static void a_forbidden_call_kills_and_is_named(void **state)
{
	expect_killed(forbidden_socket, "socket");
	expect_killed(forbidden_fork, "clone");
	expect_killed(forbidden_exec, "execve");
	expect_killed(forbidden_kill, "kill");
}

/* A terminal's slave side, for the filtered child to attack (opened by the test). */
static int tty_slave = -1;

/* Pushing input into a terminal, or taking it as the controlling one: ENOTTY, nothing else. */
static int terminal_requests(void)
{
	char c = 'x';

	if (ioctl(tty_slave, TIOCSTI, &c) == 0 || errno != ENOTTY)
		return 1;
	/* Higher bits of the request do not make it another one. */
	if (syscall(SYS_ioctl, tty_slave, (unsigned long)TIOCSTI | 0x6400000000ul, &c) == 0 ||
	    errno != ENOTTY)
		return 2;
	if (ioctl(tty_slave, TIOCSCTTY, 1) == 0 || errno != ENOTTY)
		return 3;
	if (isatty(tty_slave)) /* TCGETS, refused: "not a terminal" */
		return 4;
	return 0;
}

static void terminal_requests_fail_and_inject_nothing(void **state)
{
	char out[1024], buf[16];
	struct termios raw;
	int master = posix_openpt(O_RDWR | O_NOCTTY), status;

	assert_true(master >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	tty_slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_NONBLOCK);
	assert_true(tty_slave >= 0);
	/* Raw: an injected byte would be readable at once, without a newline. */
	assert_int_equal(tcgetattr(tty_slave, &raw), 0);
	cfmakeraw(&raw);
	assert_int_equal(tcsetattr(tty_slave, TCSANOW, &raw), 0);
	status = run_filtered(terminal_requests, out, sizeof(out));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("status 0x%x, stderr: %s", status, out);
	assert_int_equal(read(tty_slave, buf, sizeof(buf)), -1);
	assert_int_equal(errno, EAGAIN);
	/* Without the filter, the same request injects (the test runs as root, or owns the
	 * terminal's session): the check above can fail. */
	if (ioctl(tty_slave, TIOCSTI, "y") == 0)
		assert_int_equal(read(tty_slave, buf, sizeof(buf)), 1);
	close(tty_slave);
	close(master);
}

/* A pipe made before the filter, for the filtered child. */
static int pipe_fds[2] = {-1, -1};

/* Status flags and descriptor flags, allowed; signals chosen by fcntl, refused. */
static int descriptor_requests(void)
{
	if (fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK) < 0 ||
	    !(fcntl(pipe_fds[0], F_GETFL) & O_NONBLOCK))
		return 1;
	if (fcntl(pipe_fds[0], F_SETFD, FD_CLOEXEC) < 0)
		return 2;
	if (fcntl(pipe_fds[0], F_SETOWN, getppid()) == 0 || errno != EPERM)
		return 3;
	if (fcntl(pipe_fds[0], F_SETSIG, SIGKILL) == 0 || errno != EPERM)
		return 4;
	return 0;
}

static int unknown_ioctl(void)
{
	int n;

	ioctl(pipe_fds[0], FIONREAD, &n); /* 'T' family: ENOTTY */
	ioctl(pipe_fds[0], _IO('V', 1));  /* no family of a renderer's: forbidden */
	return 20;
}

/* A dma-buf request that is not one of those listed: forbidden, family or not. */
static int unlisted_dma_buf_ioctl(void)
{
	ioctl(pipe_fds[0], _IOW(DMA_BUF_BASE, 9, __u32));
	return 22;
}

/* Listed requests reach the kernel (which refuses them on a pipe). */
static int listed_ioctls(void)
{
	struct dma_buf_sync sync = {.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ};
	struct sync_file_info info = {0};

	if (ioctl(pipe_fds[0], DMA_BUF_IOCTL_SYNC, &sync) == 0 || errno != ENOTTY)
		return 1;
	if (ioctl(pipe_fds[0], SYNC_IOC_FILE_INFO, &info) == 0 || errno != ENOTTY)
		return 2;
	/* The high 32 bits are not the kernel's: a listed request with them set is that request. */
	if (syscall(SYS_ioctl, pipe_fds[0], (unsigned long)DMA_BUF_IOCTL_SYNC | 0x100000000ul,
		    &sync) == 0 ||
	    errno != ENOTTY)
		return 3;
	return 0;
}

static int unknown_fcntl(void)
{
	fcntl(pipe_fds[0], F_SETPIPE_SZ, 1 << 20);
	return 21;
}

static void descriptor_requests_by_command(void **state)
{
	char out[1024];
	int status;

	assert_int_equal(pipe(pipe_fds), 0);
	status = run_filtered(descriptor_requests, out, sizeof(out));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("status 0x%x, stderr: %s", status, out);
	status = run_filtered(listed_ioctls, out, sizeof(out));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("listed requests: status 0x%x, stderr: %s", status, out);
	expect_killed(unknown_ioctl, "ioctl");
	expect_killed(unlisted_dma_buf_ioctl, "ioctl");
	expect_killed(unknown_fcntl, "fcntl");
	close(pipe_fds[0]);
	close(pipe_fds[1]);
}

#ifdef __x86_64__
/* An x32 system call (socket's number with the x32 bit) from a second thread. */
static void *x32_socket(void *arg)
{
	(void)arg;
	syscall(0x40000000 | SYS_socket, AF_INET, SOCK_STREAM, 0);
	return NULL;
}

static int another_architecture(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, x32_socket, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	sleep(1);
	return 2; /* reached only if just the thread died */
}

static void another_architecture_ends_the_process(void **state)
{
	char out[1024];
	int status = run_filtered(another_architecture, out, sizeof(out));

	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS)
		fail_msg("status 0x%x, stderr: %s", status, out);
}
#endif

static void parse_run_as_takes_ids_and_groups(void **state)
{
	struct sandbox_options o = {0};

	assert_int_equal(sandbox_parse_run_as("999:998", &o), 0);
	assert_true(o.switch_user);
	assert_int_equal(o.uid, 999);
	assert_int_equal(o.gid, 998);
	assert_int_equal(o.n_groups, 0);
	assert_int_equal(sandbox_parse_run_as("999:998:998,44,108", &o), 0);
	assert_int_equal(o.n_groups, 3);
	assert_int_equal(o.groups[2], 108);
	assert_int_equal(sandbox_parse_run_as("999", &o), -EINVAL);
	assert_int_equal(sandbox_parse_run_as("999:", &o), -EINVAL);
	assert_int_equal(sandbox_parse_run_as("-1:0", &o), -EINVAL);
	assert_int_equal(sandbox_parse_run_as("1:2:", &o), -EINVAL);
	assert_int_equal(sandbox_parse_run_as("1:2:3,", &o), -EINVAL);
	assert_int_equal(sandbox_parse_run_as("1:2x", &o), -EINVAL);
	assert_int_equal(sandbox_parse_run_as("4294967295:0", &o), -EINVAL);
}

/* In a child: sandbox_enter() keeping fd @keep; exit 0 when everything checked holds. */
static int sandboxed_child(int keep, int drop)
{
	struct sandbox_options o = {.n_keep = 1, .keep = {keep}, .parent = getppid()};
	char err[256];
	int r;

	if (geteuid() == 0) {
		o.switch_user = true;
		o.uid = o.gid = 65534;
	}
	o.data_limit_bytes = 64u << 20;
	r = sandbox_enter(&o, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "sandbox_enter: %s\n", err);
		return 20;
	}
	if (fcntl(keep, F_GETFD) < 0 || fcntl(drop, F_GETFD) == 0 || errno != EBADF)
		return 21;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 || prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
		return 22;
	if (o.switch_user && (getuid() != 65534 || setuid(0) == 0 || getgroups(0, NULL) != 0))
		return 23;
	/* The memory limit holds: 128 MiB of private memory is refused. */
	if (mmap(NULL, 128u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) !=
	    MAP_FAILED)
		return 24;
	return 0;
}

static void sandbox_keeps_only_what_it_is_told(void **state)
{
	int keep = open("/dev/null", O_RDONLY), drop = open("/dev/null", O_RDONLY), status;
	pid_t pid;

	assert_true(keep >= 0 && drop >= 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(sandboxed_child(keep, drop));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(keep);
	close(drop);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(renderer_calls_are_allowed),
	    cmocka_unit_test(a_forbidden_call_kills_and_is_named),
	    cmocka_unit_test(writable_and_executable_maps_fail),
	    cmocka_unit_test(scheduling_calls_are_refused_not_killed),
	    cmocka_unit_test(terminal_requests_fail_and_inject_nothing),
	    cmocka_unit_test(descriptor_requests_by_command),
#ifdef __x86_64__
	    cmocka_unit_test(another_architecture_ends_the_process),
#endif
	    cmocka_unit_test(parse_run_as_takes_ids_and_groups),
	    cmocka_unit_test(sandbox_keeps_only_what_it_is_told),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
