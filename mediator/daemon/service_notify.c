// SPDX-License-Identifier: MIT
/*
 * sd_notify() for mediatord (see service_notify.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "build-config/build-config.h"
#include "daemon/service_notify.h"
#include "common/util.h"

#if HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

struct service_notify {
	int timer;
	struct loop_source *source;
};

#if HAVE_LIBSYSTEMD
static void on_keep_alive(struct loop_source *source, int fd, uint32_t events, void *data)
{
	uint64_t expirations;

	if (read(fd, &expirations, sizeof(expirations)) < 0)
		return;
	sd_notify(0, "WATCHDOG=1");
}
#endif

struct service_notify *service_notify_create(struct loop *loop)
{
#if HAVE_LIBSYSTEMD
	uint64_t usec = 0;
	struct service_notify *n;
	struct itimerspec every;

	if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
		return NULL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	/* Half the interval, as sd_watchdog_enabled(3) advises. */
	usec /= 2;
	every.it_interval.tv_sec = (time_t)(usec / 1000000u);
	every.it_interval.tv_nsec = (long)(usec % 1000000u) * 1000;
	every.it_value = every.it_interval;
	n->timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (n->timer < 0 || timerfd_settime(n->timer, 0, &every, NULL) < 0 ||
	    !(n->source = loop_add(loop, n->timer, EPOLLIN, on_keep_alive, n))) {
		log_error("systemd watchdog: cannot arm the keep-alive: %s", strerror(errno));
		if (n->timer >= 0)
			close(n->timer);
		free(n);
		return NULL;
	}
	log_info("systemd watchdog: alive every %llu ms", (unsigned long long)(usec / 1000));
	sd_notify(0, "WATCHDOG=1");
	return n;
#else
	(void)loop;
	return NULL;
#endif
}

void service_notify_destroy(struct service_notify *notify)
{
	if (!notify)
		return;
	loop_remove(notify->source);
	close(notify->timer);
	free(notify);
}

void service_notify_ready(const char *status)
{
#if HAVE_LIBSYSTEMD
	sd_notifyf(0, "READY=1\nSTATUS=%s", status);
#else
	(void)status;
#endif
}

void service_notify_stopping(void)
{
#if HAVE_LIBSYSTEMD
	sd_notify(0, "STOPPING=1\nSTATUS=stopping");
#endif
}

void service_notify_reloading(void)
{
#if HAVE_LIBSYSTEMD
	sd_notify(0, "RELOADING=1");
#endif
}
