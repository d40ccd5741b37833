// SPDX-License-Identifier: MIT
/*
 * The lifeline: how a SIGTERM tells a restart from a stop, so that
 * `systemctl restart gpu-mediator` keeps every client.
 *
 * systemd sends SIGTERM both to stop a unit and to restart it, and says
 * nothing about which. What differs is its file descriptor store
 * (FileDescriptorStoreMax= in data/gpu-mediator.service, sd_notify(3)'s
 * FDSTORE=1): the descriptors a service stored are kept while the unit
 * runs or has a job queued (a restart, Restart= after a crash) and are
 * closed when it stops for good; they are passed to the next instance
 * (sd_listen_fds_with_names(3)).
 *
 * So mediatord makes a socket pair: one end goes to the store (named
 * LIFELINE_FDNAME), the other to mediatord and its keeper (keeper.h). On
 * SIGTERM, while the store holds its end (lifeline_held()), mediatord
 * leaves its clients to the keeper, as when it is killed; a mediatord
 * started again takes them over. When the unit stops instead, the store
 * closes its end, and the keeper, seeing the other end hang up, ends the
 * workers at once rather than after restart_wait_s. Without a service
 * manager's store (started by hand, or FileDescriptorStoreMax=0),
 * SIGTERM stops mediatord and its workers as SIGINT does.
 *
 * Without libsystemd (the systemd build feature off) there is no lifeline.
 * Main thread.
 */
#ifndef MEDIATOR_LIFELINE_H
#define MEDIATOR_LIFELINE_H

#include <stdbool.h>

#define LIFELINE_FDNAME "keeper-lifeline"

/*
 * Closes the descriptors the service manager passed at start
 * (LISTEN_FDS): a lifeline's store end, which the store still holds, and
 * any other (logged: mediatord takes no sockets from its manager).
 */
void lifeline_close_passed(void);
/*
 * Makes a new lifeline: stores one end with the service manager, in place
 * of an earlier one, and returns the other end (close-on-exec); -1 when
 * there is no service manager to store it with (no NOTIFY_SOCKET) or on
 * failure (logged).
 */
int lifeline_create(void);
/* True while the other end of lifeline end @fd is open somewhere (the store). */
bool lifeline_held(int fd);

#endif
