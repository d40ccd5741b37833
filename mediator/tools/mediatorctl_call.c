// SPDX-License-Identifier: MIT
/*
 * mediatorctl's way to mediatord (mediatorctl_call.h): connects with a
 * deadline, sends the request line, reads one reply line of at most
 * MEDIATORCTL_MAX_REPLY bytes and checks its shape ({"ok": ..., "result"
 * or "error"}); every failure is printed once, as a person would want it.
 */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tools/mediatorctl_call.h"

void mediatorctl_error(const char *fmt, ...)
{
	va_list ap;

	fputs("mediatorctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int64_t mediatorctl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until @fd is ready for @events or @deadline (ms) passes. Returns 0 or a negative errno. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		int64_t left = deadline - mediatorctl_now_ms();
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)left);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0)
			return 0;
	}
}

static int connect_to(const char *path, int64_t deadline)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = MEDIATORCTL_TIMEOUT_MS / 1000};
	int fd;

	memcpy(addr.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		mediatorctl_error("socket: %s", strerror(errno));
		return -1;
	}
	/* A blocking connect() to a unix socket with a full backlog waits at most this long. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		if (errno == EINTR && mediatorctl_now_ms() < deadline)
			continue;
		mediatorctl_error(
		    "cannot connect to mediatord at %s: %s%s", path,
		    errno == EAGAIN ? "no answer" : strerror(errno),
		    errno == ENOENT || errno == ECONNREFUSED ? " (is mediatord running?)" : "");
		close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *buf, size_t len, int64_t deadline)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			int r;

			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -errno;
			r = wait_fd(fd, POLLOUT, deadline);
			if (r < 0)
				return r;
			continue;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Reads one line into a new buffer (*@line, NUL-terminated, without '\n';
 * the caller frees it). Returns its length, -EPIPE when the connection
 * closed first, -EMSGSIZE when it is too long, or another negative errno.
 */
static ssize_t recv_line(int fd, char **line, int64_t deadline)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		char *nl;
		ssize_t n;
		int r;

		if (cap - len < 4096) {
			char *p;

			if (cap >= MEDIATORCTL_MAX_REPLY) {
				free(buf);
				return -EMSGSIZE;
			}
			cap = cap ? cap * 2 : 8192;
			p = realloc(buf, cap);
			if (!p) {
				free(buf);
				return -ENOMEM;
			}
			buf = p;
		}
		r = wait_fd(fd, POLLIN, deadline);
		if (r < 0) {
			free(buf);
			return r;
		}
		n = recv(fd, buf + len, cap - len - 1, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			r = -errno;
			free(buf);
			return r;
		}
		if (n == 0) {
			free(buf);
			return -EPIPE;
		}
		nl = memchr(buf + len, '\n', (size_t)n);
		len += (size_t)n;
		if (nl) {
			*nl = '\0';
			*line = buf;
			return nl - buf;
		}
	}
}

/*
 * Sends @request (its reference is taken over) to mediatord at @socket_path
 * and waits for the reply. On success (EXIT_OK) *@result is a new reference
 * to the reply's "result" (the caller puts it). Otherwise the problem has
 * been printed and the exit status is returned.
 */
int mediatorctl_call(const char *socket_path, struct json_object *request,
		     struct json_object **result)
{
	int64_t deadline = mediatorctl_now_ms() + MEDIATORCTL_TIMEOUT_MS;
	struct json_object *reply = NULL, *ok, *value;
	struct json_tokener *tok;
	const char *text;
	char *line = NULL;
	size_t text_len;
	ssize_t len;
	int fd, r, status = EXIT_UNREACHABLE;

	*result = NULL;
	if (!request) {
		mediatorctl_error("out of memory");
		return EXIT_REFUSED;
	}
	text = json_object_to_json_string_length(
	    request, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &text_len);
	if (!text) {
		json_object_put(request);
		mediatorctl_error("out of memory");
		return EXIT_REFUSED;
	}
	fd = connect_to(socket_path, deadline);
	if (fd < 0) {
		json_object_put(request);
		return EXIT_UNREACHABLE;
	}
	r = send_all(fd, text, text_len, deadline);
	if (r == 0)
		r = send_all(fd, "\n", 1, deadline);
	json_object_put(request);
	if (r < 0) {
		mediatorctl_error("cannot send to mediatord at %s: %s", socket_path,
				  r == -ETIMEDOUT ? "no answer within 10 s" : strerror(-r));
		close(fd);
		return EXIT_UNREACHABLE;
	}
	len = recv_line(fd, &line, deadline);
	close(fd);
	if (len < 0) {
		if (len == -ETIMEDOUT)
			mediatorctl_error("mediatord at %s did not answer within %d s", socket_path,
					  MEDIATORCTL_TIMEOUT_MS / 1000);
		else if (len == -EPIPE)
			mediatorctl_error("mediatord at %s closed the connection without answering",
					  socket_path);
		else if (len == -EMSGSIZE)
			mediatorctl_error("malformed reply from mediatord: longer than %d bytes",
					  MEDIATORCTL_MAX_REPLY);
		else
			mediatorctl_error("cannot read from mediatord at %s: %s", socket_path,
					  strerror((int)-len));
		return EXIT_UNREACHABLE;
	}

	tok = json_tokener_new();
	if (tok) {
		reply = json_tokener_parse_ex(tok, line, (int)len);
		if (reply && (json_tokener_get_error(tok) != json_tokener_success ||
			      json_tokener_get_parse_end(tok) != (size_t)len)) {
			json_object_put(reply);
			reply = NULL;
		}
		json_tokener_free(tok);
	}
	free(line);
	if (!reply || !json_object_is_type(reply, json_type_object) ||
	    !json_object_object_get_ex(reply, "ok", &ok) ||
	    !json_object_is_type(ok, json_type_boolean)) {
		mediatorctl_error("malformed reply from mediatord: not a JSON object with \"ok\"");
		goto out;
	}
	if (!json_object_get_boolean(ok)) {
		if (json_object_object_get_ex(reply, "error", &value) &&
		    json_object_is_type(value, json_type_string))
			mediatorctl_error("%s", json_object_get_string(value));
		else
			mediatorctl_error("mediatord refused the request without saying why");
		status = EXIT_REFUSED;
		goto out;
	}
	if (!json_object_object_get_ex(reply, "result", &value) ||
	    !json_object_is_type(value, json_type_object)) {
		mediatorctl_error("malformed reply from mediatord: no \"result\" object");
		goto out;
	}
	*result = json_object_get(value);
	status = EXIT_OK;
out:
	json_object_put(reply);
	return status;
}
