// SPDX-License-Identifier: MIT
/*
 * Tests of the control socket (control.c) and of the trace writer (trace.c).
 *
 * Control tests start a real loop and a real socket in a temporary
 * directory, with stub ops that return fixed objects. The client side runs
 * in the test's own thread on nonblocking sockets; between its writes and
 * reads the test turns the loop with loop_dispatch(), so the server is never
 * waited on by a blocked call. trace-start opens its file for real (as
 * this process's user, or as "nobody" in the tests run as root), in the
 * fixture's temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <json-c/json.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/control.h"
#include "common/loop.h"
#include "predict.h"
#include "daemon/trace.h"
#include "common/util.h"

/* How long a test waits for an answer before it fails. */
#define TEST_TIMEOUT_NS (5 * NSEC_PER_SEC)

static const char budgets_json[] =
    "{\"policy\":\"budget\",\"domains\":[{\"name\":\"cluster\",\"class\":\"safety\","
    "\"period_us\":16667,\"budget_us\":4000,\"deadline_us\":16667,\"remaining_us\":3000,"
    "\"used_us\":12345,\"used_last_period_us\":1000,\"predicted_us\":12000,\"debt_us\":0,"
    "\"utilization\":0.06,\"clients\":1,\"contexts\":2,\"groups\":77,\"overruns\":0,"
    "\"deadline_misses\":0,\"throttled\":0,\"timestamp_source\":\"fence-callback\"}]}";

struct stub {
	int status_calls;
	int trace_start_calls;
	int trace_stop_calls;
	char trace_path[PATH_MAX];
	bool trace_fd_regular; /* the descriptor trace_start got was a regular file's */
	bool tracing;
};

static struct json_object *stub_status(void *data)
{
	struct stub *stub = data;
	struct json_object *o = json_object_new_object();

	stub->status_calls++;
	json_object_object_add(o, "uptime_s", json_object_new_int(42));
	json_object_object_add(o, "version", json_object_new_string("test"));
	return o;
}

static struct json_object *stub_show_budgets(void *data)
{
	return json_tokener_parse(budgets_json);
}

static int stub_trace_check(void *data, char *err, size_t err_size)
{
	struct stub *stub = data;

	if (stub->tracing) {
		snprintf(err, err_size, "a trace is already being written to %s", stub->trace_path);
		return -EBUSY;
	}
	return 0;
}

static int stub_trace_start(void *data, const char *path, int fd, char *err, size_t err_size)
{
	struct stub *stub = data;
	struct stat st;

	stub->trace_start_calls++;
	stub->trace_fd_regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	close(fd);
	snprintf(stub->trace_path, sizeof(stub->trace_path), "%s", path);
	stub->tracing = true;
	return 0;
}

static int stub_trace_stop(void *data, char *err, size_t err_size)
{
	struct stub *stub = data;

	stub->trace_stop_calls++;
	if (!stub->tracing) {
		snprintf(err, err_size, "no trace is running");
		return -EINVAL;
	}
	stub->tracing = false;
	return 0;
}

static const struct control_ops stub_ops = {
    .version = CONTROL_OPS_VERSION,
    .status = stub_status,
    .show_budgets = stub_show_budgets,
    .trace_check = stub_trace_check,
    .trace_start = stub_trace_start,
    .trace_stop = stub_trace_stop,
};

/* Everyone connected may change mediatord: this process's user is mediatord's. */
static struct control_access open_access;

struct fixture {
	char dir[64];
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct loop *loop;
	struct control *control;
	struct stub stub;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char err[256] = "";

	assert_non_null(fx);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/test-control-XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	/* One directory level below the temp dir, so control_create must create it. */
	snprintf(fx->sock, sizeof(fx->sock), "%s/run/control.sock", fx->dir);
	fx->loop = loop_create();
	assert_non_null(fx->loop);
	fx->control = control_create(fx->loop, fx->sock, &open_access, &stub_ops, &fx->stub, err,
				     sizeof(err));
	if (!fx->control)
		fail_msg("control_create: %s", err);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char path[192];

	control_destroy(fx->control);
	loop_destroy(fx->loop);
	snprintf(path, sizeof(path), "%s/run/control.sock", fx->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/run", fx->dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/trace.jsonl", fx->dir);
	unlink(path);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

static int client_connect(struct fixture *fx)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", fx->sock);
	/* The listen backlog takes the connection; the server accepts it in loop_dispatch. */
	assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	return fd;
}

/* Writes all of @data, turning the loop whenever the socket is full. */
static void client_send(struct fixture *fx, int fd, const char *data, size_t len)
{
	uint64_t deadline = mono_now_ns() + TEST_TIMEOUT_NS;

	while (len) {
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);

		if (n < 0) {
			assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
			assert_true(mono_now_ns() < deadline);
			assert_int_equal(loop_dispatch(fx->loop, 10), 0);
			continue;
		}
		data += n;
		len -= (size_t)n;
	}
}

static void client_send_str(struct fixture *fx, int fd, const char *s)
{
	client_send(fx, fd, s, strlen(s));
}

/*
 * Reads one line (without '\n') into @buf, turning the loop until it
 * arrives. Returns its length, or -1 when the server closed the connection
 * first. Reads byte by byte so that a following line stays in the socket.
 */
static ssize_t client_read_line(struct fixture *fx, int fd, char *buf, size_t size)
{
	uint64_t deadline = mono_now_ns() + TEST_TIMEOUT_NS;
	size_t len = 0;

	for (;;) {
		ssize_t n = recv(fd, buf + len, 1, 0);

		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return -1;
		if (n < 0) {
			assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
			if (mono_now_ns() > deadline)
				fail_msg("no reply within the timeout");
			assert_int_equal(loop_dispatch(fx->loop, 10), 0);
			continue;
		}
		if (buf[len] == '\n') {
			buf[len] = '\0';
			return (ssize_t)len;
		}
		len++;
		assert_true(len < size);
	}
}

/* Reads and parses one reply; the test fails if there is none or it is not an object with "ok". */
static struct json_object *client_read_reply(struct fixture *fx, int fd)
{
	static char line[1 << 20];
	struct json_object *reply, *ok;

	assert_true(client_read_line(fx, fd, line, sizeof(line)) >= 0);
	reply = json_tokener_parse(line);
	if (!reply)
		fail_msg("reply is not JSON: %s", line);
	assert_true(json_object_is_type(reply, json_type_object));
	assert_true(json_object_object_get_ex(reply, "ok", &ok));
	assert_true(json_object_is_type(ok, json_type_boolean));
	return reply;
}

static bool reply_ok(struct json_object *reply)
{
	return json_object_get_boolean(json_object_object_get(reply, "ok"));
}

static const char *reply_error_text(struct json_object *reply)
{
	struct json_object *e;

	assert_false(reply_ok(reply));
	assert_true(json_object_object_get_ex(reply, "error", &e));
	assert_true(json_object_is_type(e, json_type_string));
	assert_true(json_object_get_string_len(e) > 0);
	return json_object_get_string(e);
}

static struct json_object *roundtrip(struct fixture *fx, int fd, const char *line)
{
	client_send_str(fx, fd, line);
	return client_read_reply(fx, fd);
}

/* Turns the loop until the server closes @fd's connection; fails if it does not. */
static void assert_closed_by_server(struct fixture *fx, int fd)
{
	char buf[4096];

	for (;;) {
		ssize_t n = client_read_line(fx, fd, buf, sizeof(buf));

		if (n < 0)
			return;
	}
}

static void status_returns_the_ops_object(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	struct json_object *reply = roundtrip(fx, fd, "{\"cmd\":\"status\"}\n");
	struct json_object *result;

	assert_true(reply_ok(reply));
	assert_true(json_object_object_get_ex(reply, "result", &result));
	assert_int_equal(json_object_get_int(json_object_object_get(result, "uptime_s")), 42);
	assert_int_equal(fx->stub.status_calls, 1);
	json_object_put(reply);
	close(fd);
}

static void show_budgets_returns_the_ops_object(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	struct json_object *reply = roundtrip(fx, fd, "{\"cmd\": \"show-budgets\"}\n");
	struct json_object *expected = json_tokener_parse(budgets_json);
	struct json_object *result;

	assert_true(reply_ok(reply));
	assert_true(json_object_object_get_ex(reply, "result", &result));
	assert_true(json_object_equal(result, expected));
	json_object_put(expected);
	json_object_put(reply);
	close(fd);
}

static void unknown_command_gets_an_error(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	struct json_object *reply = roundtrip(fx, fd, "{\"cmd\":\"reboot-the-gpu\"}\n");

	assert_non_null(strstr(reply_error_text(reply), "reboot-the-gpu"));
	json_object_put(reply);
	close(fd);
}

static void malformed_json_gets_an_error(void **state)
{
	static const struct {
		const char *line;
		const char *what;
	} cases[] = {
	    {"{\n", "an unfinished object"},
	    {"status\n", "a bare word"},
	    {"[\"status\"]\n", "an array"},
	    {"{\"cmd\": 7}\n", "a cmd that is not a string"},
	    {"{\"command\": \"status\"}\n", "no cmd at all"},
	    {"{\"cmd\":\"status\"} {\"cmd\":\"status\"}\n", "two objects on one line"},
	    {"{\"cmd\":\"status\"} trailing\n", "garbage after the object"},
	    {"{'cmd':'status'}\n", "single quotes"},
	    {"{\"cmd\":\"st\xff\xfetus\"}\n", "invalid UTF-8"},
	};
	struct fixture *fx = *state;
	int fd = client_connect(fx);

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct json_object *reply = roundtrip(fx, fd, cases[i].line);

		if (reply_ok(reply))
			fail_msg("%s was accepted", cases[i].what);
		reply_error_text(reply);
		json_object_put(reply);
	}
	/* The connection survives bad requests. */
	struct json_object *reply = roundtrip(fx, fd, "{\"cmd\":\"status\"}\n");

	assert_true(reply_ok(reply));
	assert_int_equal(fx->stub.status_calls, 1);
	json_object_put(reply);
	close(fd);
}

static void blank_lines_get_no_reply(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	struct json_object *reply = roundtrip(fx, fd, "\n\r\n  \n{\"cmd\":\"status\"}\r\n");

	/* The first reply is the status one: the blank lines were skipped. */
	assert_true(reply_ok(reply));
	assert_int_equal(fx->stub.status_calls, 1);
	json_object_put(reply);
	close(fd);
}

static void overlong_request_closes_the_connection(void **state)
{
	struct fixture *fx = *state;
	size_t len = CONTROL_MAX_REQUEST + 100;
	char *big = malloc(len);
	struct json_object *reply;
	int fd = client_connect(fx);

	assert_non_null(big);
	memset(big, 'a', len);
	client_send(fx, fd, big, len);
	reply = client_read_reply(fx, fd);
	assert_non_null(strstr(reply_error_text(reply), "longer"));
	json_object_put(reply);
	assert_closed_by_server(fx, fd);
	free(big);
	close(fd);
}

static void request_of_the_maximum_length_is_answered(void **state)
{
	struct fixture *fx = *state;
	const char *head = "{\"cmd\":\"status\",\"pad\":\"";
	const char *tail = "\"}";
	char *line = malloc(CONTROL_MAX_REQUEST + 2);
	struct json_object *reply;
	int fd = client_connect(fx);

	assert_non_null(line);
	memset(line, 'x', CONTROL_MAX_REQUEST);
	memcpy(line, head, strlen(head));
	memcpy(line + CONTROL_MAX_REQUEST - strlen(tail), tail, strlen(tail));
	line[CONTROL_MAX_REQUEST] = '\n';
	client_send(fx, fd, line, CONTROL_MAX_REQUEST + 1);
	reply = client_read_reply(fx, fd);
	assert_true(reply_ok(reply));
	json_object_put(reply);
	free(line);
	close(fd);
}

static void relative_trace_path_is_refused(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	struct json_object *reply =
	    roundtrip(fx, fd, "{\"cmd\":\"trace-start\",\"path\":\"trace.jsonl\"}\n");

	assert_non_null(strstr(reply_error_text(reply), "absolute"));
	json_object_put(reply);
	assert_int_equal(fx->stub.trace_start_calls, 0);
	close(fd);
}

static void trace_start_without_a_path_is_refused(void **state)
{
	static const char *const lines[] = {
	    "{\"cmd\":\"trace-start\"}\n",
	    "{\"cmd\":\"trace-start\",\"path\":17}\n",
	    "{\"cmd\":\"trace-start\",\"path\":\"/tmp/a\\u0000b\"}\n",
	};
	struct fixture *fx = *state;
	int fd = client_connect(fx);

	for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
		struct json_object *reply = roundtrip(fx, fd, lines[i]);

		reply_error_text(reply);
		json_object_put(reply);
	}
	assert_int_equal(fx->stub.trace_start_calls, 0);
	close(fd);
}

/* Sends trace-start of @path on @fd and returns the reply. */
static struct json_object *trace_start(struct fixture *fx, int fd, const char *path)
{
	char line[PATH_MAX + 64];

	snprintf(line, sizeof(line), "{\"cmd\":\"trace-start\",\"path\":\"%s\"}\n", path);
	return roundtrip(fx, fd, line);
}

static void trace_start_passes_the_opened_file_to_the_ops(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	struct json_object *reply;
	char path[192];
	struct stat st;

	snprintf(path, sizeof(path), "%s/trace.jsonl", fx->dir);
	reply = trace_start(fx, fd, path);
	assert_true(reply_ok(reply));
	assert_int_equal(fx->stub.trace_start_calls, 1);
	assert_string_equal(fx->stub.trace_path, path);
	assert_true(fx->stub.trace_fd_regular);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_uid, geteuid());
	json_object_put(reply);

	reply = roundtrip(fx, fd, "{\"cmd\":\"trace-stop\"}\n");
	assert_true(reply_ok(reply));
	assert_int_equal(fx->stub.trace_stop_calls, 1);
	assert_false(fx->stub.tracing);
	json_object_put(reply);
	close(fd);
}

/*
 * The "stranger": a client that is not root and not mediatord's user. As
 * root, a child process that becomes nobody (uid and gid 65534); as
 * anyone else, this user, with mediatord pretending to run as another.
 */
#define STRANGER_ID 65534u

static gid_t stranger_gid(void)
{
	return geteuid() == 0 ? STRANGER_ID : getegid();
}

/* Recreates the fixture's control with @admin_gid; mediatord's user is not the stranger. */
static void recreate_control(struct fixture *fx, gid_t admin_gid)
{
	struct control_access access = {
	    .gid = (gid_t)-1,
	    .self_uid = geteuid() == 0 ? 0 : geteuid() + 1,
	    .admin_gid = admin_gid,
	};
	char err[256] = "";

	control_destroy(fx->control);
	fx->control =
	    control_create(fx->loop, fx->sock, &access, &stub_ops, &fx->stub, err, sizeof(err));
	if (!fx->control)
		fail_msg("control_create: %s", err);
	/* The stranger must reach the socket: nobody is in no group of ours. */
	assert_int_equal(chmod(fx->dir, 0755), 0);
	assert_int_equal(chmod(fx->sock, 0666), 0);
}

/* The stranger's side, in a child: sends @requests, copies @n reply lines to @out_fd. */
static int stranger_session(const char *sock, const char *requests, int n, int out_fd)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct timeval tmo = {10, 0};
	char c;
	int fd;

	if (geteuid() == 0 &&
	    (setgroups(0, NULL) < 0 || setgid(STRANGER_ID) < 0 || setuid(STRANGER_ID) < 0))
		return 2;
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)) < 0 ||
	    connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return 3;
	if (send(fd, requests, strlen(requests), MSG_NOSIGNAL) != (ssize_t)strlen(requests))
		return 4;
	while (n > 0 && recv(fd, &c, 1, 0) == 1) {
		if (write(out_fd, &c, 1) != 1)
			return 5;
		n -= c == '\n';
	}
	return n == 0 ? 0 : 6;
}

/* Runs the stranger's session while turning the loop; returns its @n reply lines (one string). */
static char *as_stranger(struct fixture *fx, const char *requests, int n)
{
	static char replies[8192];
	uint64_t deadline = mono_now_ns() + TEST_TIMEOUT_NS;
	int pipefd[2], status = 0;
	ssize_t len;
	pid_t pid;

	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pipefd[0]);
		_exit(stranger_session(fx->sock, requests, n, pipefd[1]));
	}
	close(pipefd[1]);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		assert_true(mono_now_ns() < deadline);
		assert_int_equal(loop_dispatch(fx->loop, 10), 0);
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	len = read(pipefd[0], replies, sizeof(replies) - 1);
	close(pipefd[0]);
	assert_true(len > 0);
	replies[len] = '\0';
	return replies;
}

static void a_client_outside_the_admin_group_may_read_but_not_change(void **state)
{
	struct fixture *fx = *state;
	const char *replies;
	char *line2, *line3;

	recreate_control(fx, stranger_gid() + 1);
	replies = as_stranger(fx,
			      "{\"cmd\":\"set-budget\",\"domain\":\"a\",\"budget_us\":1}\n"
			      "{\"cmd\":\"trace-start\",\"path\":\"/tmp/t.jsonl\"}\n"
			      "{\"cmd\":\"show-budgets\"}\n",
			      3);
	line2 = strchr(replies, '\n');
	assert_non_null(line2);
	line3 = strchr(line2 + 1, '\n');
	assert_non_null(line3);
	*line2++ = *line3++ = '\0';
	assert_non_null(strstr(replies, "permission denied: set-budget changes mediatord"));
	assert_non_null(strstr(replies, "admin_group"));
	assert_non_null(strstr(line2, "permission denied: trace-start"));
	assert_null(strstr(line3, "permission denied"));
	assert_non_null(strstr(line3, "\"ok\":true"));
	assert_int_equal(fx->stub.trace_start_calls, 0);
}

static void a_member_of_the_admin_group_may_change(void **state)
{
	struct fixture *fx = *state;
	const char *replies;

	recreate_control(fx, stranger_gid());
	replies = as_stranger(fx, "{\"cmd\":\"trace-stop\"}\n", 1);
	/* It reached the ops, which answered that no trace runs. */
	assert_int_equal(fx->stub.trace_stop_calls, 1);
	assert_non_null(strstr(replies, "no trace is running"));
}

static void trace_start_does_not_follow_a_symbolic_link(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	char link[192], target[192];
	struct json_object *reply;

	snprintf(link, sizeof(link), "%s/link.jsonl", fx->dir);
	snprintf(target, sizeof(target), "%s/target.jsonl", fx->dir);
	assert_int_equal(symlink(target, link), 0);
	reply = trace_start(fx, fd, link);
	assert_non_null(strstr(reply_error_text(reply), "is a symbolic link"));
	json_object_put(reply);
	assert_int_equal(access(target, F_OK), -1);
	assert_int_equal(fx->stub.trace_start_calls, 0);
	unlink(link);
	close(fd);
}

static void trace_start_refuses_a_fifo_at_once(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	uint64_t t0 = mono_now_ns();
	struct json_object *reply;
	char fifo[192];
	int reader;

	snprintf(fifo, sizeof(fifo), "%s/fifo", fx->dir);
	assert_int_equal(mkfifo(fifo, 0666), 0);
	/* Without a reader (the open would wait for one) and with one (it would not). */
	reply = trace_start(fx, fd, fifo);
	assert_non_null(strstr(reply_error_text(reply), "not a regular file"));
	json_object_put(reply);
	reader = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(reader >= 0);
	reply = trace_start(fx, fd, fifo);
	assert_non_null(strstr(reply_error_text(reply), "not a regular file"));
	json_object_put(reply);
	close(reader);
	assert_true(mono_now_ns() - t0 < 2 * NSEC_PER_SEC);
	assert_int_equal(fx->stub.trace_start_calls, 0);
	unlink(fifo);
	close(fd);
}

static void trace_start_while_a_trace_runs_leaves_no_file(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	struct json_object *reply;
	char first[192], second[192];

	snprintf(first, sizeof(first), "%s/trace.jsonl", fx->dir);
	snprintf(second, sizeof(second), "%s/second.jsonl", fx->dir);
	reply = trace_start(fx, fd, first);
	assert_true(reply_ok(reply));
	json_object_put(reply);
	reply = trace_start(fx, fd, second);
	assert_non_null(strstr(reply_error_text(reply), "already being written"));
	json_object_put(reply);
	assert_int_equal(access(second, F_OK), -1);
	assert_int_equal(fx->stub.trace_start_calls, 1);
	close(fd);
}

static void requests_after_trace_start_wait_for_its_answer(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	struct json_object *first, *second;
	char line[PATH_MAX + 128];

	snprintf(line, sizeof(line),
		 "{\"cmd\":\"trace-start\",\"path\":\"%s/trace.jsonl\"}\n{\"cmd\":\"status\"}\n",
		 fx->dir);
	client_send_str(fx, fd, line);
	first = client_read_reply(fx, fd);
	second = client_read_reply(fx, fd);
	assert_true(reply_ok(first));
	assert_non_null(json_object_object_get(json_object_object_get(first, "result"), "path"));
	assert_true(reply_ok(second));
	assert_non_null(
	    json_object_object_get(json_object_object_get(second, "result"), "uptime_s"));
	json_object_put(first);
	json_object_put(second);
	close(fd);
}

static void trace_start_is_answered_after_the_client_shuts_its_side(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	struct json_object *reply;
	char line[PATH_MAX + 64];

	snprintf(line, sizeof(line), "{\"cmd\":\"trace-start\",\"path\":\"%s/trace.jsonl\"}\n",
		 fx->dir);
	client_send_str(fx, fd, line);
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	reply = client_read_reply(fx, fd);
	assert_true(reply_ok(reply));
	json_object_put(reply);
	assert_closed_by_server(fx, fd);
	close(fd);
}

/* A directory in the fixture's that belongs to the stranger. */
static void make_stranger_dir(struct fixture *fx, char *dir, size_t size)
{
	snprintf(dir, size, "%s/nobody", fx->dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chown(dir, STRANGER_ID, STRANGER_ID), 0);
}

static void trace_start_opens_the_file_as_the_client(void **state)
{
	struct fixture *fx = *state;
	char line[PATH_MAX + 128], dir[192], path[256], root_file[192];
	const char *replies;
	struct stat st;
	int fd;

	if (geteuid() != 0)
		skip(); /* needs root, to be another user */
	recreate_control(fx, STRANGER_ID);
	make_stranger_dir(fx, dir, sizeof(dir));
	/* root's file, which the stranger may not write, and the stranger's own directory. */
	snprintf(root_file, sizeof(root_file), "%s/trace.jsonl", fx->dir);
	fd = open(root_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "root's\n", 7), 7);
	close(fd);
	snprintf(path, sizeof(path), "%s/trace.jsonl", dir);
	snprintf(line, sizeof(line),
		 "{\"cmd\":\"trace-start\",\"path\":\"%s\"}\n"
		 "{\"cmd\":\"trace-start\",\"path\":\"%s\"}\n",
		 root_file, path);
	replies = as_stranger(fx, line, 2);
	assert_non_null(strstr(replies, "Permission denied"));
	assert_non_null(strstr(replies, "\"ok\":true"));
	assert_int_equal(fx->stub.trace_start_calls, 1);
	assert_string_equal(fx->stub.trace_path, path);
	assert_int_equal(stat(root_file, &st), 0);
	assert_int_equal(st.st_size, 7);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_uid, STRANGER_ID);
	unlink(path);
	rmdir(dir);
}

/* Limits small enough to fill in a test; the stranger's are the ones tested. */
static void set_small_limits(struct fixture *fx, unsigned max, unsigned admin, unsigned owner,
			     unsigned per_user, uint32_t idle_ms)
{
	struct control_limits l = {max, admin, owner, per_user, idle_ms, 1000};

	assert_int_equal(control_set_limits(fx->control, &l), 0);
}

static void limits_that_do_not_nest_are_refused(void **state)
{
	static const struct control_limits bad[] = {
	    {8, 2, 3, 4, 1000, 1000}, /* more places for owners than for admins */
	    {8, 8, 2, 4, 1000, 1000}, /* no place left for users */
	    {8, 2, 1, 0, 1000, 1000}, /* no connection per user */
	    {8, 2, 1, 4, 0, 1000},    /* no idle time */
	};
	struct fixture *fx = *state;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(control_set_limits(fx->control, &bad[i]), -EINVAL);
}

/*
 * The stranger's side of a crowd: opens @n connections, asks each for its
 * status, copies the first line each gets to @out_fd, and holds them all
 * until a byte comes on @hold_fd.
 */
static int stranger_crowd(const char *sock, int n, int out_fd, int hold_fd)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct timeval tmo = {10, 0};
	static const char req[] = "{\"cmd\":\"status\"}\n";
	int fds[64];
	char c;

	if (n > (int)ARRAY_SIZE(fds))
		return 2;
	if (setgroups(0, NULL) < 0 || setgid(STRANGER_ID) < 0 || setuid(STRANGER_ID) < 0)
		return 2;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock);
	for (int i = 0; i < n; i++) {
		fds[i] = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fds[i] < 0 ||
		    setsockopt(fds[i], SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)) < 0 ||
		    connect(fds[i], (struct sockaddr *)&addr, sizeof(addr)) < 0)
			return 3;
	}
	for (int i = 0; i < n; i++) {
		/* A refused connection may be closed before the request is sent: no matter. */
		(void)!send(fds[i], req, sizeof(req) - 1, MSG_NOSIGNAL);
		do {
			if (recv(fds[i], &c, 1, 0) != 1)
				return 4;
			if (write(out_fd, &c, 1) != 1)
				return 5;
		} while (c != '\n');
	}
	if (write(out_fd, "held\n", 5) != 5)
		return 5;
	return read(hold_fd, &c, 1) == 1 ? 0 : 6;
}

/* Reads what the crowd has written to @fd so far (turning the loop) until it says "held". */
static void read_until_held(struct fixture *fx, int fd, char *buf, size_t size)
{
	uint64_t deadline = mono_now_ns() + TEST_TIMEOUT_NS;
	size_t len = 0;

	buf[0] = '\0';
	while (!strstr(buf, "held\n")) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n > 0) {
			len += (size_t)n;
			buf[len] = '\0';
			continue;
		}
		assert_true(n < 0 && errno == EAGAIN);
		assert_true(mono_now_ns() < deadline);
		assert_int_equal(loop_dispatch(fx->loop, 10), 0);
	}
}

/*
 * Runs a crowd of @n connections of the stranger; while it holds them,
 * connects as this process (an owner) and checks that it is served.
 * Returns the crowd's lines, one per connection.
 */
static char *stranger_crowd_and_owner(struct fixture *fx, int n)
{
	static char lines[16384];
	uint64_t deadline = mono_now_ns() + TEST_TIMEOUT_NS;
	int out[2], hold[2], status = 0, fd;
	struct json_object *reply;
	pid_t pid;

	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(stranger_crowd(fx->sock, n, out[1], hold[0]));
	close(out[1]);
	close(hold[0]);
	assert_int_equal(fcntl(out[0], F_SETFL, O_NONBLOCK), 0);
	read_until_held(fx, out[0], lines, sizeof(lines));

	fd = client_connect(fx);
	reply = roundtrip(fx, fd, "{\"cmd\":\"status\"}\n");
	assert_true(reply_ok(reply));
	json_object_put(reply);
	close(fd);

	assert_int_equal(write(hold[1], "x", 1), 1);
	close(hold[1]);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		assert_true(mono_now_ns() < deadline);
		assert_int_equal(loop_dispatch(fx->loop, 10), 0);
	}
	close(out[0]);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	return lines;
}

/* How many of the crowd's lines contain @what. */
static int count_lines(const char *lines, const char *what)
{
	int n = 0;

	for (const char *p = lines; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static void a_user_gets_at_most_max_per_user_connections(void **state)
{
	struct fixture *fx = *state;
	const char *lines;

	if (geteuid() != 0)
		skip(); /* needs root, to be another user */
	recreate_control(fx, STRANGER_ID + 1);
	set_small_limits(fx, 16, 4, 2, 3, 10000);
	lines = stranger_crowd_and_owner(fx, 5);
	assert_int_equal(count_lines(lines, "\"ok\":true"), 3);
	assert_int_equal(count_lines(lines, "at most 3 per user"), 2);
}

static void the_last_places_are_kept_for_admins_and_owners(void **state)
{
	struct fixture *fx = *state;
	const char *lines;

	if (geteuid() != 0)
		skip(); /* needs root, to be another user */
	/* A user fills the table up to its line (6 - 3), not beyond. */
	recreate_control(fx, STRANGER_ID + 1);
	set_small_limits(fx, 6, 3, 1, 10, 10000);
	lines = stranger_crowd_and_owner(fx, 5);
	assert_int_equal(count_lines(lines, "\"ok\":true"), 3);
	assert_int_equal(count_lines(lines, "kept for root, mediatord's user and admin_group"), 2);

	/* A member of admin_group fills it up to its line (6 - 1): root still gets in. */
	recreate_control(fx, STRANGER_ID);
	set_small_limits(fx, 6, 3, 1, 10, 10000);
	lines = stranger_crowd_and_owner(fx, 6);
	assert_int_equal(count_lines(lines, "\"ok\":true"), 5);
	assert_int_equal(count_lines(lines, "kept for root and mediatord's user"), 1);
}

static void an_idle_connection_is_closed(void **state)
{
	struct fixture *fx = *state;
	uint64_t t0 = mono_now_ns(), took;
	int fd;
	char line[256];

	set_small_limits(fx, 8, 2, 1, 4, 300);
	fd = client_connect(fx);
	/* A partial request is no request. */
	client_send_str(fx, fd, "{\"cmd\":");
	assert_true(client_read_line(fx, fd, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, "no request for 300 ms"));
	assert_closed_by_server(fx, fd);
	took = mono_now_ns() - t0;
	assert_true(took >= 300 * 1000000ull);
	assert_true(took < 3 * NSEC_PER_SEC);
	close(fd);
}

static void a_connection_that_asks_is_not_idle(void **state)
{
	struct fixture *fx = *state;
	int fd;

	set_small_limits(fx, 8, 2, 1, 4, 300);
	fd = client_connect(fx);
	/* Ten requests 100 ms apart: a second, three idle timeouts. */
	for (int i = 0; i < 10; i++) {
		uint64_t until = mono_now_ns() + 100 * 1000000ull;
		struct json_object *reply = roundtrip(fx, fd, "{\"cmd\":\"status\"}\n");

		assert_true(reply_ok(reply));
		json_object_put(reply);
		while (mono_now_ns() < until)
			assert_int_equal(loop_dispatch(fx->loop, 10), 0);
	}
	close(fd);
}

static void ops_failures_are_reported_with_their_reason(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	struct json_object *reply =
	    roundtrip(fx, fd, "{\"cmd\":\"trace-start\",\"path\":\"/nonexistent/t.jsonl\"}\n");

	assert_non_null(strstr(reply_error_text(reply), "No such file"));
	json_object_put(reply);

	reply = roundtrip(fx, fd, "{\"cmd\":\"trace-stop\"}\n");
	assert_string_equal(reply_error_text(reply), "no trace is running");
	json_object_put(reply);
	close(fd);
}

static void two_requests_on_one_connection_get_two_replies(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	struct json_object *first, *second;

	client_send_str(fx, fd, "{\"cmd\":\"status\"}\n{\"cmd\":\"show-budgets\"}\n");
	first = client_read_reply(fx, fd);
	second = client_read_reply(fx, fd);
	assert_true(reply_ok(first));
	assert_non_null(
	    json_object_object_get(json_object_object_get(first, "result"), "uptime_s"));
	assert_true(reply_ok(second));
	assert_non_null(
	    json_object_object_get(json_object_object_get(second, "result"), "domains"));
	json_object_put(first);
	json_object_put(second);
	close(fd);
}

static void request_split_across_writes_is_answered(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	struct json_object *reply;

	client_send_str(fx, fd, "{\"cmd\":");
	for (int i = 0; i < 5; i++)
		assert_int_equal(loop_dispatch(fx->loop, 1), 0);
	assert_int_equal(fx->stub.status_calls, 0);
	reply = roundtrip(fx, fd, "\"status\"}\n");
	assert_true(reply_ok(reply));
	json_object_put(reply);
	close(fd);
}

static void last_request_without_newline_is_answered_after_shutdown(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	struct json_object *reply;

	client_send_str(fx, fd, "{\"cmd\":\"status\"}");
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	reply = client_read_reply(fx, fd);
	assert_true(reply_ok(reply));
	json_object_put(reply);
	assert_closed_by_server(fx, fd);
	close(fd);
}

static void client_that_never_reads_does_not_stall_the_others(void **state)
{
	static const char req[] = "{\"cmd\":\"show-budgets\"}\n";
	struct fixture *fx = *state;
	int slow = client_connect(fx);
	int fd = client_connect(fx);
	struct json_object *reply;
	size_t sent = 0;

	/*
	 * Send requests until the socket and the server stop taking them: the
	 * server must stop reading from a client whose replies pile up, so
	 * this ends.
	 */
	for (int idle = 0; idle < 50;) {
		ssize_t n = send(slow, req, sizeof(req) - 1, MSG_NOSIGNAL);

		if (n > 0) {
			/* Keep whole requests: a partial one is completed below. */
			if ((size_t)n < sizeof(req) - 1)
				client_send(fx, slow, req + n, sizeof(req) - 1 - (size_t)n);
			sent++;
			idle = 0;
			continue;
		}
		assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
		assert_int_equal(loop_dispatch(fx->loop, 1), 0);
		idle++;
		assert_true(sent < 1000000);
	}
	assert_true(sent > 100);

	reply = roundtrip(fx, fd, "{\"cmd\":\"status\"}\n");
	assert_true(reply_ok(reply));
	json_object_put(reply);
	close(fd);
	close(slow);
	/* The server notices the slow client is gone and drops it. */
	for (int i = 0; i < 20; i++)
		assert_int_equal(loop_dispatch(fx->loop, 1), 0);
}

static void too_many_clients_are_turned_away(void **state)
{
	struct fixture *fx = *state;
	int fds[CONTROL_MAX_CLIENTS];
	struct json_object *reply;
	char line[256];
	int extra;

	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		fds[i] = client_connect(fx);
		reply = roundtrip(fx, fds[i], "{\"cmd\":\"status\"}\n");
		assert_true(reply_ok(reply));
		json_object_put(reply);
	}
	extra = client_connect(fx);
	assert_true(client_read_line(fx, extra, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, "too many"));
	assert_closed_by_server(fx, extra);
	close(extra);

	/* A place freed is a place taken. */
	close(fds[0]);
	for (int i = 0; i < 5; i++)
		assert_int_equal(loop_dispatch(fx->loop, 1), 0);
	fds[0] = client_connect(fx);
	reply = roundtrip(fx, fds[0], "{\"cmd\":\"status\"}\n");
	assert_true(reply_ok(reply));
	json_object_put(reply);
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		close(fds[i]);
}

static void control_destroy_closes_the_connections(void **state)
{
	struct fixture *fx = *state;
	int fd = client_connect(fx);
	struct json_object *reply = roundtrip(fx, fd, "{\"cmd\":\"status\"}\n");
	char c;

	json_object_put(reply);
	control_destroy(fx->control);
	fx->control = NULL;
	assert_int_equal(recv(fd, &c, 1, 0), 0);
	close(fd);
}

static void control_destroy_accepts_null(void **state)
{
	control_destroy(NULL);
}

static void socket_file_is_removed_on_destroy(void **state)
{
	struct fixture *fx = *state;
	struct stat st;

	assert_int_equal(stat(fx->sock, &st), 0);
	control_destroy(fx->control);
	fx->control = NULL;
	assert_int_equal(stat(fx->sock, &st), -1);
	assert_int_equal(errno, ENOENT);
}

static void socket_is_group_accessible_in_a_created_directory(void **state)
{
	struct fixture *fx = *state;
	char dir[192];
	struct stat st;

	assert_int_equal(lstat(fx->sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0660);
	snprintf(dir, sizeof(dir), "%s/run", fx->dir);
	assert_int_equal(stat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
}

static void stale_socket_file_is_replaced(void **state)
{
	struct fixture *fx = *state;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct json_object *reply;
	char err[256] = "";
	int fd;

	/* Leave a socket file that nobody listens on, as a crashed mediatord would. */
	control_destroy(fx->control);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", fx->sock);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	close(fd);

	fx->control = control_create(fx->loop, fx->sock, &open_access, &stub_ops, &fx->stub, err,
				     sizeof(err));
	if (!fx->control)
		fail_msg("control_create: %s", err);
	fd = client_connect(fx);
	reply = roundtrip(fx, fd, "{\"cmd\":\"status\"}\n");
	assert_true(reply_ok(reply));
	json_object_put(reply);
	close(fd);
}

static void socket_in_use_is_not_taken_over(void **state)
{
	struct fixture *fx = *state;
	char err[256] = "";
	struct control *second = control_create(fx->loop, fx->sock, &open_access, &stub_ops,
						&fx->stub, err, sizeof(err));

	assert_null(second);
	assert_non_null(strstr(err, fx->sock));
	/* The first one still serves. */
	int fd = client_connect(fx);
	struct json_object *reply = roundtrip(fx, fd, "{\"cmd\":\"status\"}\n");

	assert_true(reply_ok(reply));
	json_object_put(reply);
	close(fd);
}

static void file_that_is_not_a_socket_is_not_replaced(void **state)
{
	struct fixture *fx = *state;
	char path[192], err[256] = "";
	struct control *c;
	int fd;

	snprintf(path, sizeof(path), "%s/trace.jsonl", fx->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	close(fd);
	c = control_create(fx->loop, path, &open_access, &stub_ops, &fx->stub, err, sizeof(err));
	assert_null(c);
	assert_non_null(strstr(err, "not a socket"));
	assert_int_equal(access(path, F_OK), 0);
}

static void overlong_socket_path_is_refused(void **state)
{
	struct fixture *fx = *state;
	char path[300], err[256] = "";

	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_null(
	    control_create(fx->loop, path, &open_access, &stub_ops, &fx->stub, err, sizeof(err)));
	assert_true(strlen(err) > 0);
}

/* ---- trace.c ---- */

struct trace_fixture {
	char dir[64];
	char path[128];
};

static int trace_setup(void **state)
{
	struct trace_fixture *tf = calloc(1, sizeof(*tf));

	assert_non_null(tf);
	snprintf(tf->dir, sizeof(tf->dir), "/tmp/test-trace-XXXXXX");
	assert_non_null(mkdtemp(tf->dir));
	snprintf(tf->path, sizeof(tf->path), "%s/trace.jsonl", tf->dir);
	*state = tf;
	return 0;
}

/* trace_create() on the fixture's file, created or opened as open_as.c would give it. */
static struct trace *trace_open_path(const char *path, char *err, size_t err_size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return NULL;
	}
	return trace_create(fd, path, err, err_size);
}

static int trace_teardown(void **state)
{
	struct trace_fixture *tf = *state;

	unlink(tf->path);
	rmdir(tf->dir);
	free(tf);
	return 0;
}

static struct wire_group make_group(uint64_t seq, uint64_t start)
{
	struct wire_group g;

	memset(&g, 0, sizeof(g));
	g.hdr.type = WIRE_GROUP;
	g.hdr.size = sizeof(g);
	g.ctx_id = 3;
	g.seq = seq;
	g.dispatch_ns = start - 500;
	g.start_ns = start;
	g.end_ns = start + 1234567;
	g.predicted_ns = 1200000;
	g.bound_ns = 1500000;
	snprintf(g.model, sizeof(g.model), "linear");
	g.cmds[PREDICT_CMD_DRAW] = 12;
	g.cmds[PREDICT_CMD_CLEAR] = 1;
	g.cmds[PREDICT_CMD_STATE] = 40;
	return g;
}

/* Reads the trace file and parses each line strictly; returns the number of lines. */
static size_t read_trace(const char *path, struct json_object **records, size_t max)
{
	static char text[1 << 16];
	FILE *f = fopen(path, "r");
	size_t len, n = 0;
	char *line, *save = NULL;

	assert_non_null(f);
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	if (len)
		assert_int_equal(text[len - 1], '\n');
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct json_tokener *tok = json_tokener_new();
		struct json_object *o;

		json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
		o = json_tokener_parse_ex(tok, line, (int)strlen(line));
		if (!o || json_tokener_get_parse_end(tok) != strlen(line))
			fail_msg("trace line is not one JSON object: %s", line);
		json_tokener_free(tok);
		assert_true(n < max);
		records[n++] = o;
	}
	return n;
}

static int64_t get_i64(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("record has no \"%s\"", key);
	assert_true(json_object_is_type(v, json_type_int));
	return json_object_get_int64(v);
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("record has no \"%s\"", key);
	assert_true(json_object_is_type(v, json_type_string));
	return json_object_get_string(v);
}

static void trace_records_read_back_with_every_field(void **state)
{
	static const char *const fields[] = {
	    "domain",	   "client",   "ctx",	 "seq",		"request_ns",
	    "dispatch_ns", "start_ns", "end_ns", "measured_ns", "predicted_ns",
	    "bound_ns",	   "model",    "cmds",
	};
	struct trace_fixture *tf = *state;
	char err[256] = "";
	struct trace *t = trace_open_path(tf->path, err, sizeof(err));
	struct wire_group g1 = make_group(1, 1000000000ull);
	struct wire_group g2 = make_group(2, 5000000000ull);
	struct json_object *rec[4], *cmds;

	if (!t)
		fail_msg("trace_create: %s", err);
	assert_string_equal(trace_path(t), tf->path);
	assert_int_equal(trace_write_group(t, "cluster", 7, &g1), 0);
	assert_int_equal(trace_write_group(t, "cluster", 7, &g2), 0);
	assert_int_equal(trace_close(t), 0);

	assert_int_equal(read_trace(tf->path, rec, ARRAY_SIZE(rec)), 2);
	for (size_t i = 0; i < 2; i++) {
		const struct wire_group *g = i == 0 ? &g1 : &g2;

		assert_int_equal(json_object_object_length(rec[i]), ARRAY_SIZE(fields));
		for (size_t f = 0; f < ARRAY_SIZE(fields); f++)
			assert_non_null(json_object_object_get(rec[i], fields[f]));
		assert_string_equal(get_str(rec[i], "domain"), "cluster");
		assert_int_equal(get_i64(rec[i], "client"), 7);
		assert_int_equal(get_i64(rec[i], "ctx"), 3);
		assert_int_equal(get_i64(rec[i], "seq"), g->seq);
		assert_int_equal(get_i64(rec[i], "dispatch_ns"), g->dispatch_ns);
		assert_int_equal(get_i64(rec[i], "start_ns"), g->start_ns);
		assert_int_equal(get_i64(rec[i], "end_ns"), g->end_ns);
		assert_int_equal(get_i64(rec[i], "measured_ns"), g->end_ns - g->start_ns);
		assert_int_equal(get_i64(rec[i], "predicted_ns"), 1200000);
		assert_int_equal(get_i64(rec[i], "bound_ns"), 1500000);
		assert_string_equal(get_str(rec[i], "model"), "linear");

		/* One member per non-zero class, named like predict_cmd_class_name(). */
		cmds = json_object_object_get(rec[i], "cmds");
		assert_true(json_object_is_type(cmds, json_type_object));
		assert_int_equal(json_object_object_length(cmds), 3);
		assert_int_equal(get_i64(cmds, "draw"), 12);
		assert_int_equal(get_i64(cmds, predict_cmd_class_name(PREDICT_CMD_CLEAR)), 1);
		assert_int_equal(get_i64(cmds, predict_cmd_class_name(PREDICT_CMD_STATE)), 40);
		json_object_put(rec[i]);
	}
}

static void trace_escapes_strings_into_valid_json(void **state)
{
	struct trace_fixture *tf = *state;
	char err[256] = "";
	struct trace *t = trace_open_path(tf->path, err, sizeof(err));
	struct wire_group g = make_group(1, 1000000000ull);
	struct json_object *rec[2];

	assert_non_null(t);
	/* Quote, backslash, newline, a control character and a byte that is not UTF-8. */
	memcpy(g.model, "a\"b\\c\nd\x01\xff", sizeof("a\"b\\c\nd\x01\xff"));
	assert_int_equal(trace_write_group(t, "dom\"ain\\", 1, &g), 0);
	/* A model that fills the array with no NUL: only WIRE_MODEL_MAX bytes are used. */
	memset(g.model, 'm', sizeof(g.model));
	assert_int_equal(trace_write_group(t, "caf\xc3\xa9", 1, &g), 0);
	assert_int_equal(trace_close(t), 0);

	assert_int_equal(read_trace(tf->path, rec, ARRAY_SIZE(rec)), 2);
	assert_string_equal(get_str(rec[0], "domain"), "dom\"ain\\");
	assert_string_equal(get_str(rec[0], "model"), "a\"b\\c\nd\x01\xef\xbf\xbd");
	assert_string_equal(get_str(rec[1], "domain"), "caf\xc3\xa9");
	assert_int_equal(strlen(get_str(rec[1], "model")), WIRE_MODEL_MAX);
	json_object_put(rec[0]);
	json_object_put(rec[1]);
}

static void trace_leaves_out_zero_classes(void **state)
{
	struct trace_fixture *tf = *state;
	char err[256] = "";
	struct trace *t = trace_open_path(tf->path, err, sizeof(err));
	struct wire_group g = make_group(1, 1000000000ull);
	struct json_object *rec[1];

	assert_non_null(t);
	memset(g.cmds, 0, sizeof(g.cmds));
	g.model[0] = '\0';
	g.predicted_ns = g.bound_ns = 0;
	assert_int_equal(trace_write_group(t, "ivi", 2, &g), 0);
	assert_int_equal(trace_close(t), 0);

	assert_int_equal(read_trace(tf->path, rec, ARRAY_SIZE(rec)), 1);
	assert_int_equal(json_object_object_length(json_object_object_get(rec[0], "cmds")), 0);
	assert_string_equal(get_str(rec[0], "model"), "");
	json_object_put(rec[0]);
}

static off_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

static void trace_tick_flushes_once_a_second(void **state)
{
	struct trace_fixture *tf = *state;
	char err[256] = "";
	struct trace *t = trace_open_path(tf->path, err, sizeof(err));
	struct wire_group g = make_group(1, 1000000000ull);
	uint64_t now = mono_now_ns();

	assert_non_null(t);
	assert_int_equal(trace_write_group(t, "cluster", 1, &g), 0);
	trace_tick(t, now);
	assert_int_equal(file_size(tf->path), 0);
	trace_tick(t, now + 2 * NSEC_PER_SEC);
	assert_true(file_size(tf->path) > 0);
	assert_int_equal(trace_close(t), 0);
}

static void trace_create_truncates_the_file(void **state)
{
	struct trace_fixture *tf = *state;
	struct wire_group g = make_group(1, 1000000000ull);
	struct json_object *rec[2];
	char err[256] = "";
	struct trace *t;
	int fd;

	fd = open(tf->path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "an old, longer trace that is no JSON\n", 37), 37);
	close(fd);
	t = trace_open_path(tf->path, err, sizeof(err));
	assert_non_null(t);
	assert_int_equal(trace_write_group(t, "cluster", 1, &g), 0);
	assert_int_equal(trace_close(t), 0);
	assert_int_equal(read_trace(tf->path, rec, ARRAY_SIZE(rec)), 1);
	json_object_put(rec[0]);
}

static void trace_create_refuses_what_is_not_a_regular_file(void **state)
{
	char err[256] = "";
	int pipefd[2];

	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	assert_null(trace_create(pipefd[1], "/a/pipe", err, sizeof(err)));
	assert_non_null(strstr(err, "not a regular file"));
	/* It took the descriptor over and closed it: the pipe has no writer left. */
	assert_int_equal(fcntl(pipefd[1], F_GETFD), -1);
	close(pipefd[0]);
}

static void trace_close_accepts_null(void **state)
{
	assert_int_equal(trace_close(NULL), 0);
}

int main(void)
{
	open_access = (struct control_access){(gid_t)-1, geteuid(), (gid_t)-1};
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(status_returns_the_ops_object, setup, teardown),
	    cmocka_unit_test_setup_teardown(show_budgets_returns_the_ops_object, setup, teardown),
	    cmocka_unit_test_setup_teardown(unknown_command_gets_an_error, setup, teardown),
	    cmocka_unit_test_setup_teardown(malformed_json_gets_an_error, setup, teardown),
	    cmocka_unit_test_setup_teardown(blank_lines_get_no_reply, setup, teardown),
	    cmocka_unit_test_setup_teardown(overlong_request_closes_the_connection, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(request_of_the_maximum_length_is_answered, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(relative_trace_path_is_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(trace_start_without_a_path_is_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(trace_start_passes_the_opened_file_to_the_ops, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(trace_start_does_not_follow_a_symbolic_link, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(trace_start_refuses_a_fifo_at_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(trace_start_while_a_trace_runs_leaves_no_file, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(requests_after_trace_start_wait_for_its_answer, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(trace_start_is_answered_after_the_client_shuts_its_side,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(trace_start_opens_the_file_as_the_client, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(limits_that_do_not_nest_are_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_user_gets_at_most_max_per_user_connections, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(the_last_places_are_kept_for_admins_and_owners, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(an_idle_connection_is_closed, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_connection_that_asks_is_not_idle, setup, teardown),
	    cmocka_unit_test_setup_teardown(ops_failures_are_reported_with_their_reason, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(two_requests_on_one_connection_get_two_replies, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(request_split_across_writes_is_answered, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(last_request_without_newline_is_answered_after_shutdown,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(client_that_never_reads_does_not_stall_the_others,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(too_many_clients_are_turned_away, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		a_client_outside_the_admin_group_may_read_but_not_change, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_member_of_the_admin_group_may_change, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(control_destroy_closes_the_connections, setup,
					    teardown),
	    cmocka_unit_test(control_destroy_accepts_null),
	    cmocka_unit_test_setup_teardown(socket_file_is_removed_on_destroy, setup, teardown),
	    cmocka_unit_test_setup_teardown(socket_is_group_accessible_in_a_created_directory,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(stale_socket_file_is_replaced, setup, teardown),
	    cmocka_unit_test_setup_teardown(socket_in_use_is_not_taken_over, setup, teardown),
	    cmocka_unit_test_setup_teardown(file_that_is_not_a_socket_is_not_replaced, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(overlong_socket_path_is_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(trace_records_read_back_with_every_field, trace_setup,
					    trace_teardown),
	    cmocka_unit_test_setup_teardown(trace_escapes_strings_into_valid_json, trace_setup,
					    trace_teardown),
	    cmocka_unit_test_setup_teardown(trace_leaves_out_zero_classes, trace_setup,
					    trace_teardown),
	    cmocka_unit_test_setup_teardown(trace_tick_flushes_once_a_second, trace_setup,
					    trace_teardown),
	    cmocka_unit_test_setup_teardown(trace_create_truncates_the_file, trace_setup,
					    trace_teardown),
	    cmocka_unit_test(trace_create_refuses_what_is_not_a_regular_file),
	    cmocka_unit_test(trace_close_accepts_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
