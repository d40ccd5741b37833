// SPDX-License-Identifier: MIT
/*
 * Tests of opening a file as a control client (open_as.c).
 *
 * Each test opens in a temporary directory with a real loop, which it
 * turns until the open's end is reported. Run as root, the client is
 * "nobody" (uid and gid 65534), so that its rights differ from the test's;
 * as anyone else, the client is the test's own user and the tests that
 * need another user are skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/loop.h"
#include "common/util.h"
#include "daemon/open_as.h"

/* How long a test waits for an open to end before it fails. */
#define TEST_TIMEOUT_NS (5 * NSEC_PER_SEC)
#define TEST_TIMEOUT_MS 5000
#define NOBODY		65534u
/* A group nobody is in, for the test of supplementary groups. */
#define TEST_GROUP 4242u

struct fixture {
	char dir[64];
	struct loop *loop;
};

/* What the open's end said (open_as_done_fn). */
struct outcome {
	bool done;
	int fd;
	char err[PATH_MAX + 128];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/test-open-as-XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	assert_int_equal(chmod(fx->dir, 0755), 0);
	fx->loop = loop_create();
	assert_non_null(fx->loop);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[128];

	loop_destroy(fx->loop);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

/* The test's own user, as peer_cred_read() would give it. */
static struct peer_cred self_cred(void)
{
	struct peer_cred who = {.pid = getpid(), .uid = geteuid(), .gid = getegid()};

	return who;
}

static struct peer_cred nobody_cred(void)
{
	struct peer_cred who = {.pid = getpid(), .uid = NOBODY, .gid = NOBODY};

	return who;
}

static void record_outcome(struct open_as *oa, void *data, int fd, const char *err)
{
	struct outcome *out = data;

	assert_false(out->done);
	out->done = true;
	out->fd = fd;
	snprintf(out->err, sizeof(out->err), "%s", err ? err : "");
	open_as_destroy(oa);
}

/* Opens @path as @who and turns the loop until the end is reported. */
static struct outcome open_and_wait(struct fixture *fx, const struct peer_cred *who,
				    const char *path)
{
	uint64_t deadline = mono_now_ns() + TEST_TIMEOUT_NS;
	struct outcome out = {.fd = -1};
	char err[PATH_MAX + 128] = "";
	struct open_as *oa;

	oa = open_as_create(fx->loop, who, path, 0644, TEST_TIMEOUT_MS, record_outcome, &out, err,
			    sizeof(err));
	if (!oa)
		fail_msg("open_as_create: %s", err);
	while (!out.done) {
		assert_true(mono_now_ns() < deadline);
		assert_int_equal(loop_dispatch(fx->loop, 10), 0);
	}
	return out;
}

static void make_nothing(const char *path)
{
}

static void make_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "twelve bytes", 12), 12);
	close(fd);
}

static void make_link_to_file(const char *path)
{
	char target[PATH_MAX];

	snprintf(target, sizeof(target), "%s.target", path);
	make_file(target);
	assert_int_equal(symlink(target, path), 0);
}

static void make_link_to_nothing(const char *path)
{
	char target[PATH_MAX];

	snprintf(target, sizeof(target), "%s.target", path);
	assert_int_equal(symlink(target, path), 0);
}

static void make_fifo(const char *path)
{
	assert_int_equal(mkfifo(path, 0666), 0);
}

static void make_dir(const char *path)
{
	assert_int_equal(mkdir(path, 0777), 0);
}

static void make_setuid_file(const char *path)
{
	make_file(path);
	assert_int_equal(chmod(path, 04755), 0);
}

static const struct {
	const char *description;
	const char *name;
	void (*make)(const char *path);
	const char *error; /* NULL: opened */
	off_t size;	   /* of the file opened: it is not truncated */
} open_cases[] = {
    {"a new file is created", "new", make_nothing, NULL, 0},
    {"a regular file is opened, not truncated", "file", make_file, NULL, 12},
    {"a link to a file is refused", "link", make_link_to_file, "is a symbolic link", 0},
    {"a link to nothing is refused", "dangling", make_link_to_nothing, "is a symbolic link", 0},
    {"a FIFO without a reader is refused", "fifo", make_fifo, "not a regular file", 0},
    {"a directory is refused", "dir", make_dir, "not a regular file", 0},
    {"a set-user-ID file is refused", "setuid", make_setuid_file, "set-user-ID", 0},
    {"a missing directory says so", "missing/file", make_nothing, "No such file or directory", 0},
};

static void what_may_be_opened_is_opened_and_nothing_else(void **state)
{
	struct fixture *fx = *state;

	for (size_t i = 0; i < ARRAY_SIZE(open_cases); i++) {
		struct peer_cred who = self_cred();
		char path[192], target[256];
		struct outcome out;
		struct stat st;
		int flags;

		snprintf(path, sizeof(path), "%s/%s", fx->dir, open_cases[i].name);
		open_cases[i].make(path);
		out = open_and_wait(fx, &who, path);
		if (open_cases[i].error) {
			if (out.fd >= 0 || !strstr(out.err, open_cases[i].error) ||
			    strncmp(out.err, path, strlen(path)))
				fail_msg("%s: fd %d, \"%s\"", open_cases[i].description, out.fd,
					 out.err);
			/* What a link points at is neither made nor changed. */
			snprintf(target, sizeof(target), "%s.target", path);
			if (stat(target, &st) == 0)
				assert_int_equal(st.st_size, 12);
			continue;
		}
		if (out.fd < 0)
			fail_msg("%s: %s", open_cases[i].description, out.err);
		assert_int_equal(fstat(out.fd, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_size, open_cases[i].size);
		assert_int_equal(st.st_uid, geteuid());
		flags = fcntl(out.fd, F_GETFL);
		assert_int_equal(flags & O_ACCMODE, O_WRONLY);
		assert_int_equal(flags & O_NONBLOCK, 0);
		assert_true(fcntl(out.fd, F_GETFD) & FD_CLOEXEC);
		close(out.fd);
	}
}

static void a_fifo_with_a_reader_is_refused_too(void **state)
{
	struct fixture *fx = *state;
	struct peer_cred who = self_cred();
	struct outcome out;
	char path[PATH_MAX];
	int reader;

	snprintf(path, sizeof(path), "%s/fifo", fx->dir);
	make_fifo(path);
	reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(reader >= 0);
	out = open_and_wait(fx, &who, path);
	assert_int_equal(out.fd, -1);
	assert_non_null(strstr(out.err, "not a regular file"));
	close(reader);
}

static void a_relative_path_or_an_unknown_client_is_refused_at_once(void **state)
{
	struct fixture *fx = *state;
	struct peer_cred who = self_cred();
	struct outcome out = {.fd = -1};
	char err[256] = "";

	assert_null(open_as_create(fx->loop, &who, "trace.jsonl", 0644, TEST_TIMEOUT_MS,
				   record_outcome, &out, err, sizeof(err)));
	assert_non_null(strstr(err, "not an absolute path"));
	who.uid = (uid_t)-1;
	assert_null(open_as_create(fx->loop, &who, "/tmp/t.jsonl", 0644, TEST_TIMEOUT_MS,
				   record_outcome, &out, err, sizeof(err)));
	assert_non_null(strstr(err, "unknown"));
	assert_false(out.done);
}

static void not_root_it_opens_for_no_other_user(void **state)
{
	struct fixture *fx = *state;
	struct peer_cred who = self_cred();
	struct outcome out = {.fd = -1};
	char err[256] = "";

	if (geteuid() == 0)
		skip(); /* as root it may open for anyone */
	who.uid = geteuid() + 1;
	assert_null(open_as_create(fx->loop, &who, "/tmp/t.jsonl", 0644, TEST_TIMEOUT_MS,
				   record_outcome, &out, err, sizeof(err)));
	assert_non_null(strstr(err, "does not run as root"));
}

static void the_file_is_opened_with_the_clients_rights(void **state)
{
	struct fixture *fx = *state;
	struct peer_cred who = nobody_cred();
	char path[256], dir[192];
	struct outcome out;
	struct stat st;

	if (geteuid() != 0)
		skip(); /* needs root, to be another user */
	/* Not in root's directory (0755)... */
	snprintf(path, sizeof(path), "%s/new", fx->dir);
	out = open_and_wait(fx, &who, path);
	assert_int_equal(out.fd, -1);
	assert_non_null(strstr(out.err, "Permission denied"));
	assert_int_equal(access(path, F_OK), -1);
	/* ...nor into root's file (0644)... */
	make_file(path);
	out = open_and_wait(fx, &who, path);
	assert_int_equal(out.fd, -1);
	assert_non_null(strstr(out.err, "Permission denied"));
	/* ...but in its own directory, as its own file. */
	snprintf(dir, sizeof(dir), "%s/nobody", fx->dir);
	make_dir(dir);
	assert_int_equal(chown(dir, NOBODY, NOBODY), 0);
	snprintf(path, sizeof(path), "%s/new", dir);
	out = open_and_wait(fx, &who, path);
	assert_true(out.fd >= 0);
	assert_int_equal(fstat(out.fd, &st), 0);
	assert_int_equal(st.st_uid, NOBODY);
	assert_int_equal(st.st_gid, NOBODY);
	close(out.fd);
}

static void the_clients_supplementary_groups_count_and_no_others(void **state)
{
	struct fixture *fx = *state;
	struct peer_cred who = nobody_cred();
	char path[256], dir[192];
	struct outcome out;

	if (geteuid() != 0)
		skip(); /* needs root, to be another user */
	/* A directory only TEST_GROUP may write. */
	snprintf(dir, sizeof(dir), "%s/group", fx->dir);
	make_dir(dir);
	assert_int_equal(chown(dir, 0, TEST_GROUP), 0);
	assert_int_equal(chmod(dir, 0770), 0);
	snprintf(path, sizeof(path), "%s/new", dir);
	out = open_and_wait(fx, &who, path);
	assert_int_equal(out.fd, -1);
	assert_non_null(strstr(out.err, "Permission denied"));
	who.groups[0] = TEST_GROUP;
	who.n_groups = 1;
	out = open_and_wait(fx, &who, path);
	if (out.fd < 0)
		fail_msg("with TEST_GROUP: %s", out.err);
	close(out.fd);
}

static void destroy_gives_up_an_open_in_progress(void **state)
{
	struct fixture *fx = *state;
	struct peer_cred who = self_cred();
	struct outcome out = {.fd = -1};
	char path[PATH_MAX], err[256] = "";
	struct open_as *oa;

	snprintf(path, sizeof(path), "%s/new", fx->dir);
	oa = open_as_create(fx->loop, &who, path, 0644, TEST_TIMEOUT_MS, record_outcome, &out, err,
			    sizeof(err));
	assert_non_null(oa);
	open_as_destroy(oa);
	for (int i = 0; i < 20; i++)
		assert_int_equal(loop_dispatch(fx->loop, 5), 0);
	assert_false(out.done);
}

static void destroy_accepts_null(void **state)
{
	open_as_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(what_may_be_opened_is_opened_and_nothing_else, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(a_fifo_with_a_reader_is_refused_too, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_relative_path_or_an_unknown_client_is_refused_at_once,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(not_root_it_opens_for_no_other_user, setup, teardown),
	    cmocka_unit_test_setup_teardown(the_file_is_opened_with_the_clients_rights, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(the_clients_supplementary_groups_count_and_no_others,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(destroy_gives_up_an_open_in_progress, setup, teardown),
	    cmocka_unit_test(destroy_accepts_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
