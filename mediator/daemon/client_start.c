// SPDX-License-Identifier: MIT
/*
 * A normal domain's workers make their renderers one at a time.
 *
 * mediatord starts a normal domain's workers with --start-turn: before a
 * worker makes its renderer (when its client's handshake comes) it asks
 * (WIRE_START, wire.h) and waits for the answer. mediatord answers at once
 * while no other worker of the domain is making its renderer, and
 * otherwise when that one says its renderer is up (WIRE_HELLO), is gone,
 * or has taken CLIENT_START_MAX_NS (seen at the limits timer's next
 * tick), oldest asker first (each client keeps when it asked and was
 * answered; no queue to keep in step with clients that go). A connection that never handshakes
 * never asks, and holds no one up.
 *
 * Why: a worker makes its renderer at idle priority, but where the kernel
 * does not preempt (PREEMPT_NONE, the hosts measured here) a thread in a
 * page fault keeps its CPU from the cluster's worker until the fault
 * returns. Eight made together held both CPUs for up to 4 ms at a time
 * (bench/faults' mem-flood rounds, `perf sched`); one at a time leaves the
 * other CPU to the cluster. A safety domain's workers never ask.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/util.h"
#include "common/wire.h"
#include "daemon/domain.h"
#include "daemon/mediatord_priv.h"

#define CLIENT_START_MAX_NS (1000ull * 1000 * 1000)

/* The oldest of @l's workers that asked and were not answered yet, and how many are waiting. */
static struct client *oldest_waiting(const struct listener *l, uint32_t *n)
{
	struct client *oldest = NULL;

	*n = 0;
	for (struct client *c = l->md->clients; c; c = c->next) {
		if (c->listener != l || !c->asked_ns || c->go_ns || c->record_fd < 0)
			continue;
		(*n)++;
		if (!oldest || c->asked_ns < oldest->asked_ns)
			oldest = c;
	}
	return oldest;
}

/* Answers the oldest waiting worker of @l, if no other makes its renderer. */
static void next(struct listener *l, uint64_t now_ns)
{
	struct wire_start m = {.hdr = {WIRE_START, sizeof(m)}};
	struct client *c;
	uint32_t n;

	if (l->starting || !(c = oldest_waiting(l, &n)))
		return;
	c->go_ns = now_ns;
	l->starting = c;
	log_info("domain %s: client %u: worker %d makes its renderer (waited %llu ms; %u more "
		 "wait)",
		 domain_name(l->domain), c->id, (int)c->pid,
		 (unsigned long long)((now_ns - c->asked_ns) / 1000000u), n - 1);
	if (send(c->record_fd, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(m)) {
		log_error("domain %s: client %u: cannot answer its worker: %s; stopping it",
			  domain_name(l->domain), c->id, strerror(errno));
		client_kill(c, SIGKILL); /* its client_free() answers the next */
	}
}

int client_start_ask(struct client *c, char *err, size_t err_size)
{
	uint64_t now = mono_now_ns();

	if (c->asked_ns) {
		snprintf(err, err_size, "asked to make its renderer twice");
		return -EPROTO;
	}
	c->asked_ns = now;
	next(c->listener, now);
	return 0;
}

void client_started(struct client *c)
{
	struct listener *l = c->listener;

	if (l->starting != c)
		return;
	l->starting = NULL;
	next(l, mono_now_ns());
}

void client_start_check_slow(struct listener *l, uint64_t now_ns)
{
	struct client *c = l->starting;

	if (!c || now_ns - c->go_ns < CLIENT_START_MAX_NS)
		return;
	log_info("domain %s: client %u: worker %d has no renderer up %llu ms after it began; "
		 "the next one begins beside it",
		 domain_name(l->domain), c->id, (int)c->pid,
		 (unsigned long long)((now_ns - c->go_ns) / 1000000u));
	client_started(c);
}

void client_start_forget(struct mediatord *md)
{
	/* No one is answered then: client_free() answers only for the worker now starting. */
	for (size_t i = 0; i < md->cfg.n_domains; i++)
		md->listeners[i].starting = NULL;
}
