// SPDX-License-Identifier: MIT
/*
 * Reading a worker: the records it sends on its record channel (wire.h).
 * Each packet goes through three steps, each message of it in turn (a
 * WIRE_GROUP batch holds several):
 *   1. the wire's rules (wire_frame(), wire_check_message()): what any
 *      message must be on its own;
 *   2. the rules of the client's state: a group's seq above the last one,
 *      WIRE_RESUME only as the answer to a take-over, and the dispatcher's
 *      (a request's id, a claim of the offer it made, a completion of a
 *      group it granted);
 *   3. its taker (record_takers[]) applies it.
 * The first message that breaks a rule stops the worker; the messages
 * before it in its packet were applied.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "predict.h"
#include "common/util.h"
#include "common/wire.h"
#include "daemon/dispatcher.h"
#include "daemon/domain.h"
#include "daemon/mediatord_priv.h"
#include "daemon/trace.h"

_Static_assert(PF_COUNT <= WIRE_COEFS, "the wire holds every feature's coefficient");
_Static_assert(PREDICT_UNTILED_COUNT <= WIRE_UNTILED_MAX, "the wire holds every untiled reason");
_Static_assert(PF_COUNT == WIRE_FEATURES, "wire_check_model() knows libpredict's features");
_Static_assert(PREDICT_FRAGMENTS_BBOX == WIRE_FRAGMENTS_BBOX &&
		   PREDICT_FRAGMENTS_HISTORY == WIRE_FRAGMENTS_HISTORY,
	       "wire_check_model() knows libpredict's fragment estimators");

/*
 * Records a worker sends of its own accord (group records, models,
 * contexts, its client's name): one group record a group at most, a model
 * a context about once a second, a few of the others. More in one second
 * than this plus twice the groups it completed in it and the second before
 * (whose dones the dispatcher checked against its grants; group records
 * come batched, after their dones) are no honest worker's: a worker that
 * floods mediatord's loop is stopped. Requests and dones need no count:
 * each must match the dispatcher's state.
 */
#define UNSOLICITED_PER_SECOND 1000u

/* The second @c's worker's records are counted in, from @now on. */
static void rate_window(struct client *c, uint64_t now)
{
	if (now - c->rate_since >= 1000000000ull) {
		c->rate_dones_before = now - c->rate_since < 2000000000ull ? c->rate_dones : 0;
		c->rate_since = now;
		c->rate_count = 0;
		c->rate_dones = 0;
	}
}

/* Counts @n unsolicited records; false when @c's worker has gone over the rate. */
static bool unsolicited_ok(struct client *c, uint64_t now, uint32_t n)
{
	rate_window(c, now);
	c->rate_count += n;
	return c->rate_count <=
	       UNSOLICITED_PER_SECOND + 2u * (c->rate_dones + c->rate_dones_before);
}

/* Applies one checked message of its type; 0 or a negative errno with the reason in @err. */
typedef int (*record_taker)(struct client *c, const void *msg, uint64_t now_ns, char *err,
			    size_t err_size);

static int take_group(struct client *c, const void *msg, uint64_t now_ns, char *err,
		      size_t err_size)
{
	struct mediatord *md = c->md;
	struct domain *domain = c->listener->domain;
	struct wire_group m;

	memcpy(&m, msg, sizeof(m));
	if (m.seq <= c->last_seq) {
		snprintf(err, err_size, "group: seq %llu not above %llu", (unsigned long long)m.seq,
			 (unsigned long long)c->last_seq);
		return -EPROTO;
	}
	c->last_seq = m.seq;
	c->groups++;
	for (uint32_t i = 0; i < c->n_ctx_list; i++) {
		if (c->ctx_list[i].ctx_id == m.ctx_id) {
			c->ctx_list[i].groups++;
			break;
		}
	}
	domain_charge_group(domain, &m);
	if (md->trace && trace_write_group(md->trace, domain_name(domain), c->id, &m) < 0) {
		log_error("trace %s: write failed; tracing stopped", trace_path(md->trace));
		trace_close(md->trace);
		md->trace = NULL;
	}
	return 0;
}

/* Notes request @m (checked: untiled below WIRE_UNTILED_MAX) in its domain's untiled report. */
static void note_untiled(struct client *c, const struct wire_grant_request *m)
{
	struct untiled_report *u = &c->listener->untiled;

	u->groups++;
	u->client = c->id;
	u->ctx_id = m->ctx_id;
	u->why = m->untiled;
	u->name[0] = '\0';
	for (uint32_t i = 0; i < c->n_ctx_list; i++) {
		if (c->ctx_list[i].ctx_id == m->ctx_id) {
			memcpy(u->name, c->ctx_list[i].name, sizeof(u->name));
			break;
		}
	}
}

static int take_grant_request(struct client *c, const void *msg, uint64_t now_ns, char *err,
			      size_t err_size)
{
	struct wire_grant_request m;
	int r;

	memcpy(&m, msg, sizeof(m));
	r = dispatcher_request(c->md->dispatcher, c->id, (int)(c->listener - c->md->listeners), &m,
			       now_ns);
	if (r < 0) {
		snprintf(err, err_size, "grant request %llu refused by the dispatcher: %s",
			 (unsigned long long)m.id, strerror(-r));
		return r;
	}
	if (m.untiled)
		note_untiled(c, &m);
	return 0;
}

static int take_done(struct client *c, const void *msg, uint64_t now_ns, char *err, size_t err_size)
{
	struct wire_done m;
	uint64_t charged = 0;
	bool trusted = !dispatcher_distrusted(c->md->dispatcher, c->id);
	int r;

	memcpy(&m, msg, sizeof(m));
	r = dispatcher_done(c->md->dispatcher, c->id, &m, now_ns, &charged);
	if (r == 0)
		domain_charge(c->listener->domain, charged);
	if (r == 0 && trusted && dispatcher_distrusted(c->md->dispatcher, c->id))
		client_watchdog_short(c);
	if (r < 0)
		snprintf(err, err_size, "done %llu refused by the dispatcher: %s",
			 (unsigned long long)m.id, strerror(-r));
	else
		client_watchdog_done(c);
	if (r == 0) {
		rate_window(c, now_ns);
		c->rate_dones++;
	}
	return r;
}

static int take_hello(struct client *c, const void *msg, uint64_t now_ns, char *err,
		      size_t err_size)
{
	struct wire_hello m;

	memcpy(&m, msg, sizeof(m));
	domain_set_timestamp_source(c->listener->domain, m.timestamp_source);
	if (c->spawned_ns)
		log_info("domain %s: client %u: worker %d has its renderer up, %llu ms after its "
			 "start",
			 domain_name(c->listener->domain), c->id, (int)c->pid,
			 (unsigned long long)((now_ns - c->spawned_ns) / 1000000u));
	c->renderer_up = true;
	client_started(c);
	return 0;
}

static int take_client_info(struct client *c, const void *msg, uint64_t now_ns, char *err,
			    size_t err_size)
{
	struct wire_client_info m;

	memcpy(&m, msg, sizeof(m));
	memcpy(c->name, m.name, sizeof(c->name));
	c->peer_pid = m.peer_pid;
	return 0;
}

static int take_model(struct client *c, const void *msg, uint64_t now_ns, char *err,
		      size_t err_size)
{
	memcpy(&c->model.m, msg, sizeof(c->model.m));
	c->model.valid = true;
	c->model.client = c->id;
	memcpy(c->model.client_name, c->name, sizeof(c->model.client_name));
	c->listener->last_model = c->model;
	return 0;
}

static int take_context(struct client *c, const void *msg, uint64_t now_ns, char *err,
			size_t err_size)
{
	struct domain *domain = c->listener->domain;
	struct wire_context m;

	memcpy(&m, msg, sizeof(m));
	if (m.alive) {
		c->contexts++;
		domain_contexts_changed(domain, 1);
		/* Logged once per client: a worker may create contexts without end. */
		if (dispatcher_expect_frames(c->md->dispatcher,
					     (int)(c->listener - c->md->listeners), now_ns) &&
		    !c->expect_logged) {
			c->expect_logged = true;
			log_info(
			    "domain %s: client %u created context %u; a frame of it may come at "
			    "any moment, other domains' groups keep room for it",
			    domain_name(domain), c->id, m.ctx_id);
		}
		if (c->n_ctx_list < MEDIATORD_MAX_CLIENT_CONTEXTS) {
			struct client_ctx *x = &c->ctx_list[c->n_ctx_list++];

			x->ctx_id = m.ctx_id;
			x->groups = 0;
			memcpy(x->name, m.name, sizeof(x->name));
		}
	} else if (c->contexts) {
		c->contexts--;
		domain_contexts_changed(domain, -1);
		for (uint32_t i = 0; i < c->n_ctx_list; i++) {
			if (c->ctx_list[i].ctx_id == m.ctx_id) {
				c->ctx_list[i] = c->ctx_list[--c->n_ctx_list];
				break;
			}
		}
	}
	return 0;
}

static int take_host_work(struct client *c, const void *msg, uint64_t now_ns, char *err,
			  size_t err_size)
{
	const struct wire_host_work *m = msg;

	if (m->phase == WIRE_HOST_WORK_BEGIN)
		client_watchdog_host_work_begin(c);
	else if (m->phase == WIRE_HOST_WORK_HELD)
		client_watchdog_host_work_held(c);
	else
		client_watchdog_host_work_done(c);
	return 0;
}

static int take_start(struct client *c, const void *msg, uint64_t now_ns, char *err,
		      size_t err_size)
{
	return client_start_ask(c, err, err_size);
}

/* By enum wire_type; NULL: a message a worker may send only at another time (WIRE_RESUME). */
static const record_taker record_takers[] = {
    [WIRE_HELLO] = take_hello,	       [WIRE_CONTEXT] = take_context,
    [WIRE_GROUP] = take_group,	       [WIRE_CLIENT_INFO] = take_client_info,
    [WIRE_MODEL] = take_model,	       [WIRE_GRANT_REQUEST] = take_grant_request,
    [WIRE_DONE] = take_done,	       [WIRE_RESUME] = NULL,
    [WIRE_HOST_WORK] = take_host_work, [WIRE_START] = take_start,
};

/*
 * A claim the wire's rules refused never came to the dispatcher, which
 * would have released the offer it took: released here.
 */
static void release_refused_claim(struct client *c, const void *msg, uint64_t now_ns)
{
	struct wire_grant_request m;

	memcpy(&m, msg, sizeof(m));
	if (m.flags & WIRE_GRANT_CLAIMED)
		dispatcher_release_claim(c->md->dispatcher, c->id, now_ns);
}

/* Checks and applies one packet: 0, or a negative errno with the rule it broke in @err. */
static int client_take_record(struct client *c, const void *buf, size_t size, char *err,
			      size_t err_size)
{
	uint64_t now = mono_now_ns();
	struct wire_header hdr;
	size_t each;
	int n;

	if (c->revoked)
		return 0; /* killed by the watchdog; the dispatcher forgot it */
	if (size < sizeof(hdr))
		return wire_frame(buf, size, err, err_size);
	memcpy(&hdr, buf, sizeof(hdr));
	/* Taken over: what came before its answer was for the mediatord that died. */
	if (c->resuming) {
		c->resuming =
		    !(hdr.type == WIRE_RESUME && wire_check(buf, size, now, NULL, 0) == 0);
		return 0;
	}
	n = wire_frame(buf, size, err, err_size);
	if (n < 0)
		return n;
	if (hdr.type != WIRE_GRANT_REQUEST && hdr.type != WIRE_DONE &&
	    !unsolicited_ok(c, now, (uint32_t)n)) {
		snprintf(err, err_size,
			 "more than %u records in a second beyond twice its %u completed groups",
			 UNSOLICITED_PER_SECOND, c->rate_dones + c->rate_dones_before);
		return -EPROTO;
	}
	each = size / (size_t)n;
	for (int i = 0; i < n; i++) {
		const uint8_t *msg = (const uint8_t *)buf + (size_t)i * each;
		int r = wire_check_message(msg, each, now, err, err_size);

		if (r == -EINVAL && hdr.type == WIRE_GRANT_REQUEST)
			release_refused_claim(c, msg, now);
		if (r < 0)
			return r;
		if (hdr.type >= ARRAY_SIZE(record_takers) || !record_takers[hdr.type]) {
			snprintf(err, err_size, "type %u: no take-over waits for it", hdr.type);
			return -EPROTO;
		}
		r = record_takers[hdr.type](c, msg, now, err, err_size);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Packets read from one worker per wake-up: the loop serves every other
 * source (the other domains' workers, the control socket, timers) between
 * two such bites, so that no worker's flood holds them.
 */
#define RECORDS_PER_WAKE 32
/* Stops @c's worker, which broke the record protocol as @err says. */
static void stop_bad_worker(struct client *c, const char *err)
{
	c->md->bad_records++;
	log_error("domain %s client %u: worker %d sent a malformed record (%s); stopping it",
		  domain_name(c->listener->domain), c->id, (int)c->pid, err);
	client_kill(c, SIGKILL);
}

bool client_read_records(struct client *c, int max)
{
	uint8_t buf[MEDIATORD_MAX_RECORD];
	char err[256];

	for (int i = 0; i < max; i++) {
		ssize_t n = recv(c->record_fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
		int r;

		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		if (n == 0)
			return false;
		if ((size_t)n > sizeof(buf)) {
			snprintf(err, sizeof(err), "a packet of %zd bytes, above %zu", n,
				 sizeof(buf));
			r = -EMSGSIZE;
		} else {
			r = client_take_record(c, buf, (size_t)n, err, sizeof(err));
		}
		if (r < 0) {
			stop_bad_worker(c, err);
			return false;
		}
	}
	return true;
}

void client_on_record(struct loop_source *source, int fd, uint32_t events, void *data)
{
	struct client *c = data;

	mediatord_take_frames(c->md);
	/* The loop calls again while more wait. */
	if (!client_read_records(c, RECORDS_PER_WAKE)) {
		/* The worker is gone or cut off; it is forgotten when reaped. */
		loop_remove(c->source);
		c->source = NULL;
		close(c->record_fd);
		c->record_fd = -1;
	}
}
