// SPDX-License-Identifier: MIT
/*
 * mediatord under systemd's Type=notify (data/gpu-mediator.service): it
 * says when it is ready (its sockets listen), when it stops, and, where
 * the unit sets WatchdogSec, that its loop still runs, every half of that
 * interval. Through libsystemd's sd_notify(); without libsystemd (the
 * systemd build feature off) or outside a unit (no NOTIFY_SOCKET), every
 * call does nothing. Main thread.
 */
#ifndef MEDIATOR_SERVICE_NOTIFY_H
#define MEDIATOR_SERVICE_NOTIFY_H

#include "common/loop.h"

struct service_notify;

/*
 * Starts the watchdog's keep-alive on @loop where the unit asked for one.
 * NULL when there is nothing to do or on failure (logged: systemd will
 * then restart mediatord when the watchdog interval passes).
 */
struct service_notify *service_notify_create(struct loop *loop);
/* Stops the keep-alive. NULL is fine. */
void service_notify_destroy(struct service_notify *notify);

/* READY=1, with @status (one line) as the unit's status text. */
void service_notify_ready(const char *status);
/* RELOADING=1: a config reload began (service_notify_ready() ends it). */
void service_notify_reloading(void);
/* STOPPING=1: a clean stop began. */
void service_notify_stopping(void);

#endif
