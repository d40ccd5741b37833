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
 * tick), oldest asker first. A connection that never handshakes never
 * asks, and holds no one up.
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

static void go(struct listener *l, struct client *c, uint64_t now_ns)
{
	struct wire_start m = {.hdr = {WIRE_START, sizeof(m)}};

	c->go_ns = now_ns;
	l->starting = c;
	log_info("domain %s: client %u: worker %d makes its renderer (waited %llu ms; %u more "
		 "wait)",
		 domain_name(l->domain), c->id, (int)c->pid,
		 (unsigned long long)((now_ns - c->asked_ns) / 1000000u), l->n_waiting);
	if (send(c->record_fd, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(m)) {
		log_error("domain %s: client %u: cannot answer its worker: %s; stopping it",
			  domain_name(l->domain), c->id, strerror(errno));
		client_kill(c, SIGKILL);
	}
}

/* The next waiting worker of @l still there, if no other makes its renderer. */
static void next(struct listener *l, uint64_t now_ns)
{
	while (!l->starting && l->n_waiting) {
		struct client *c = client_by_id(l->md, l->waiting[l->first_waiting]);

		l->first_waiting = (l->first_waiting + 1) % CONFIG_MAX_CLIENTS_TOTAL;
		l->n_waiting--;
		if (c && c->record_fd >= 0)
			go(l, c, now_ns);
	}
}

int client_start_ask(struct client *c, char *err, size_t err_size)
{
	struct listener *l = c->listener;
	uint64_t now = mono_now_ns();

	if (c->asked_ns) {
		snprintf(err, err_size, "asked to make its renderer twice");
		return -EPROTO;
	}
	c->asked_ns = now;
	/* max_clients <= CONFIG_MAX_CLIENTS_TOTAL, and each asks once: room for all. */
	l->waiting[(l->first_waiting + l->n_waiting) % CONFIG_MAX_CLIENTS_TOTAL] = c->id;
	l->n_waiting++;
	next(l, now);
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
	for (size_t i = 0; i < md->cfg.n_domains; i++) {
		md->listeners[i].starting = NULL;
		md->listeners[i].n_waiting = 0;
	}
}
