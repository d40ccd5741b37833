// SPDX-License-Identifier: MIT
/*
 * Small helpers shared by mediatord, the worker and mediatorctl: the clock
 * every timestamp in gpu-mediator is taken from, and logging.
 *
 * All times are CLOCK_MONOTONIC nanoseconds so that records taken in a
 * worker process, in mediatord and (later) in the host kernel module can be
 * compared directly.
 */
#ifndef MEDIATOR_UTIL_H
#define MEDIATOR_UTIL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#define NSEC_PER_USEC 1000ull
#define NSEC_PER_SEC  1000000000ull

static inline uint64_t mono_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Writes all @len bytes of @buf to the stream socket @fd (blocking, or
 * bounded by its SO_SNDTIMEO; no SIGPIPE). Returns 0 or a negative errno.
 */
static inline int fd_send_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

/*
 * Sets the program name printed before every line and the most verbose
 * level that is printed. Lines go to stderr, one write per line so that
 * lines of concurrent processes sharing stderr never interleave.
 */
void log_init(const char *program, enum log_level max_level);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif
