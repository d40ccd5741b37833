// SPDX-License-Identifier: MIT
/*
 * The service manager's hold on mediatord's keeper (see lifeline.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "build-config/build-config.h"
#include "daemon/lifeline.h"
#include "common/util.h"

#if HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

void lifeline_close_passed(void)
{
#if HAVE_LIBSYSTEMD
	char **names = NULL;
	int n = sd_listen_fds_with_names(1, &names);

	for (int i = 0; i < n; i++) {
		const char *name = names && names[i] ? names[i] : "unknown";

		if (strcmp(name, LIFELINE_FDNAME))
			log_warn("the service manager passed descriptor %d (%s): not one of "
				 "mediatord's; closed",
				 SD_LISTEN_FDS_START + i, name);
		close(SD_LISTEN_FDS_START + i);
	}
	if (n < 0)
		log_warn("the descriptors the service manager passed: %s", strerror(-n));
	for (int i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
#endif
}

int lifeline_create(void)
{
#if HAVE_LIBSYSTEMD
	int sv[2], r;

	if (!getenv("NOTIFY_SOCKET"))
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		log_warn("lifeline: socketpair: %s; a SIGTERM stops the clients", strerror(errno));
		return -1;
	}
	/* An earlier instance's, whose keeper is gone: replaced. */
	sd_notify(0, "FDSTOREREMOVE=1\nFDNAME=" LIFELINE_FDNAME);
	r = sd_pid_notify_with_fds(0, 0, "FDSTORE=1\nFDNAME=" LIFELINE_FDNAME, &sv[0], 1);
	close(sv[0]);
	if (r <= 0) {
		log_warn("lifeline: the service manager did not take it (%s); a SIGTERM stops "
			 "the clients",
			 r < 0 ? strerror(-r) : "no notify socket");
		close(sv[1]);
		return -1;
	}
	return sv[1];
#else
	return -1;
#endif
}

bool lifeline_held(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	if (fd < 0 || poll(&p, 1, 0) < 0)
		return false;
	return !(p.revents & (POLLHUP | POLLERR | POLLNVAL));
}
