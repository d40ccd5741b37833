/*
 * mediatord's dispatcher (see dispatcher.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "dispatcher.h"
#include "util.h"

/* Largest time a worker may report or ask for: an hour. */
#define DISPATCHER_TIME_MAX (3600ull * 1000000000ull)

/* A request or granted group of a client, as the scheduler knows it. */
struct outstanding {
	bool used, granted;
	uint32_t client;
	uint64_t wire_id;  /* the worker's id */
	uint64_t sched_id; /* unique in the scheduler */
};

struct client_ids {
	uint32_t client;
	uint64_t last_id; /* highest request id seen */
};

struct dispatcher {
	struct sched *sched;
	int timer_fd;
	struct loop_source *timer;
	dispatcher_send_fn send;
	void *data;
	uint64_t next_sched_id;
	/* Scans stop at the tops: out[top..] and ids[ids_top..] are unused. */
	struct outstanding out[SCHED_MAX_PENDING];
	struct client_ids ids[SCHED_MAX_PENDING];
	size_t top, ids_top;
};

static void run(struct dispatcher *d, uint64_t now_ns);

static void on_timer(struct loop_source *source, int fd, uint32_t events, void *data)
{
	uint64_t expirations;

	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		log_warn("dispatcher timer: %s", strerror(errno));
	run(data, mono_now_ns());
}

struct dispatcher *dispatcher_create(struct loop *loop, const struct mediator_config *cfg,
				     uint64_t now_ns, dispatcher_send_fn send, void *data,
				     char *err, size_t err_size)
{
	struct dispatcher *d = calloc(1, sizeof(*d));

	if (!d) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	d->timer_fd = -1;
	d->sched = sched_create_from_config(cfg, now_ns, err, err_size);
	if (!d->sched)
		goto fail;
	d->send = send;
	d->data = data;
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->timer_fd < 0 || !(d->timer = loop_add(loop, d->timer_fd, EPOLLIN, on_timer, d))) {
		snprintf(err, err_size, "cannot create the scheduler's timer: %s", strerror(errno));
		goto fail;
	}
	return d;
fail:
	dispatcher_destroy(d);
	return NULL;
}

void dispatcher_destroy(struct dispatcher *d)
{
	if (!d)
		return;
	loop_remove(d->timer);
	if (d->timer_fd >= 0)
		close(d->timer_fd);
	sched_destroy(d->sched);
	free(d);
}

static void drop(struct dispatcher *d, struct outstanding *o)
{
	o->used = false;
	while (d->top && !d->out[d->top - 1].used)
		d->top--;
}

static struct outstanding *find_sched(struct dispatcher *d, uint64_t sched_id)
{
	for (size_t i = 0; i < d->top; i++) {
		if (d->out[i].used && d->out[i].sched_id == sched_id)
			return &d->out[i];
	}
	return NULL;
}

static struct outstanding *find_wire(struct dispatcher *d, uint32_t client, uint64_t wire_id)
{
	for (size_t i = 0; i < d->top; i++) {
		if (d->out[i].used && d->out[i].client == client && d->out[i].wire_id == wire_id)
			return &d->out[i];
	}
	return NULL;
}

static struct client_ids *ids_of(struct dispatcher *d, uint32_t client, bool create)
{
	struct client_ids *free_slot = NULL;

	for (size_t i = 0; i < d->ids_top; i++) {
		if (d->ids[i].client == client)
			return &d->ids[i];
		if (!d->ids[i].client && !free_slot)
			free_slot = &d->ids[i];
	}
	if (create && !free_slot && d->ids_top < SCHED_MAX_PENDING)
		free_slot = &d->ids[d->ids_top++];
	if (create && free_slot) {
		free_slot->client = client;
		free_slot->last_id = 0;
		return free_slot;
	}
	return NULL;
}

/* Grants what may start now, then sets the timer for the next time the answer may change. */
static void run(struct dispatcher *d, uint64_t now_ns)
{
	struct sched_decision dec[32];
	struct itimerspec its = {{0, 0}, {0, 0}};
	uint64_t next;
	size_t n;

	do {
		n = sched_poll(d->sched, now_ns, dec, ARRAY_SIZE(dec));
		for (size_t i = 0; i < n; i++) {
			struct outstanding *o = find_sched(d, dec[i].id);
			struct wire_grant g = {.hdr = {WIRE_GRANT, sizeof(g)}};

			if (!o)
				continue;
			g.id = o->wire_id;
			g.verdict = dec[i].verdict == SCHED_GRANTED ? WIRE_GRANTED : WIRE_REFUSED;
			if (dec[i].verdict == SCHED_GRANTED)
				o->granted = true;
			else
				drop(d, o); /* the scheduler forgot it already */
			d->send(d->data, o->client, &g);
		}
	} while (n == ARRAY_SIZE(dec));
	next = sched_next_event(d->sched, now_ns);
	if (next != UINT64_MAX) {
		its.it_value.tv_sec = (time_t)(next / 1000000000u);
		its.it_value.tv_nsec = (long)(next % 1000000000u);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(d->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

int dispatcher_request(struct dispatcher *d, uint32_t client, int domain,
		       const struct wire_grant_request *req, uint64_t now_ns)
{
	struct client_ids *ids = ids_of(d, client, true);
	struct outstanding *o = NULL;

	if (!ids || req->id <= ids->last_id || req->bound_ns < req->predicted_ns ||
	    req->bound_ns > DISPATCHER_TIME_MAX)
		return -EPROTO;
	/* One request waiting per worker: it waits for the answer before the next. */
	for (size_t i = 0; i < d->top; i++) {
		if (d->out[i].used && d->out[i].client == client && !d->out[i].granted)
			return -EPROTO;
		if (!d->out[i].used && !o)
			o = &d->out[i];
	}
	if (!o && d->top < SCHED_MAX_PENDING)
		o = &d->out[d->top];
	if (!o)
		return -ENOSPC;
	ids->last_id = req->id;
	o->sched_id = ++d->next_sched_id;
	if (sched_submit(d->sched, o->sched_id, domain, req->predicted_ns, req->bound_ns, now_ns) <
	    0)
		return -ENOSPC;
	o->used = true;
	if ((size_t)(o - d->out) >= d->top)
		d->top = (size_t)(o - d->out) + 1;
	o->granted = false;
	o->client = client;
	o->wire_id = req->id;
	run(d, now_ns);
	return 0;
}

int dispatcher_done(struct dispatcher *d, uint32_t client, const struct wire_done *done,
		    uint64_t now_ns)
{
	struct outstanding *o = find_wire(d, client, done->id);

	if (!o || !o->granted || done->end_ns > now_ns || done->measured_ns > DISPATCHER_TIME_MAX)
		return -EPROTO;
	sched_complete(d->sched, o->sched_id, done->measured_ns, done->end_ns);
	drop(d, o);
	run(d, now_ns);
	return 0;
}

void dispatcher_forget(struct dispatcher *d, uint32_t client, uint64_t now_ns)
{
	struct client_ids *ids = ids_of(d, client, false);
	bool any = false;

	for (size_t i = d->top; i-- > 0;) {
		if (d->out[i].used && d->out[i].client == client) {
			sched_cancel(d->sched, d->out[i].sched_id, now_ns);
			drop(d, &d->out[i]);
			any = true;
		}
	}
	if (ids)
		ids->client = 0;
	while (d->ids_top && !d->ids[d->ids_top - 1].client)
		d->ids_top--;
	if (any)
		run(d, now_ns);
}

int dispatcher_set_budget(struct dispatcher *d, int domain, uint32_t period_us, uint32_t budget_us,
			  uint32_t deadline_us, char *why, size_t why_size)
{
	return sched_set_budget(d->sched, domain, (uint64_t)period_us * 1000,
				(uint64_t)budget_us * 1000, (uint64_t)deadline_us * 1000, why,
				why_size);
}

size_t dispatcher_take_frames(struct dispatcher *d, struct sched_frame *out, size_t max,
			      uint64_t *dropped)
{
	return sched_take_frames(d->sched, out, max, dropped);
}

int dispatcher_stats(struct dispatcher *d, int domain, uint64_t now_ns,
		     struct sched_domain_stats *out)
{
	sched_advance(d->sched, now_ns);
	return sched_domain_stats(d->sched, domain, out);
}
