// SPDX-License-Identifier: MIT
/*
 * mediatorctl's way to mediatord: one request line on the control socket
 * (control.h), one reply line back, within MEDIATORCTL_TIMEOUT_MS, and
 * the exit statuses that tell scripts what went wrong.
 */
#ifndef MEDIATOR_MEDIATORCTL_CALL_H
#define MEDIATOR_MEDIATORCTL_CALL_H

#include <json-c/json.h>
#include <stdint.h>

/* How long mediatorctl waits for mediatord, connect to reply, so a hung daemon cannot hang scripts.
 */
#define MEDIATORCTL_TIMEOUT_MS 10000
/* Largest reply accepted; show-budgets of CONFIG_MAX_DOMAINS domains is a few KiB. */
#define MEDIATORCTL_MAX_REPLY (16 * 1024 * 1024)

enum mediatorctl_exit {
	EXIT_OK = 0,
	EXIT_REFUSED = 1,     /* mediatord answered with an error */
	EXIT_USAGE = 2,	      /* unknown command or option, missing argument */
	EXIT_UNREACHABLE = 3, /* cannot connect, connection closed, no or malformed reply */
};

/* CLOCK_MONOTONIC in milliseconds: the clock of the deadlines. */
int64_t mediatorctl_now_ms(void);
/* Prints "mediatorctl: " and the message on stderr. */
void mediatorctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Sends @request (its reference is taken over) to mediatord at @socket_path
 * and waits for the reply. On success (EXIT_OK) *@result is a new reference
 * to the reply's "result" (the caller puts it). Otherwise the problem has
 * been printed and the exit status is returned.
 */
int mediatorctl_call(const char *socket_path, struct json_object *request,
		     struct json_object **result);

#endif
