// SPDX-License-Identifier: MIT
/*
 * The worker's record channel to mediatord (see mediator_link.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/fence_done.h"
#include "worker/mediator_link.h"
#include "common/util.h"

/* A message the channel did not take yet. */
struct queued {
	struct queued *next;
	size_t size;
	unsigned char msg[];
};

struct mediator_link {
	int fd;
	char domain[WIRE_NAME_MAX];
	uint32_t client_id;
	bool gone;
	/* Messages waiting for the channel, oldest first (see mediator_link.h). */
	struct queued *queue, **queue_tail;
	size_t queued_bytes;
	uint64_t queued_total;
	/* Group records not yet sent (see WIRE_MAX_BATCH). */
	struct wire_group batch[WIRE_MAX_BATCH];
	size_t batch_n;
	uint64_t batch_since_ns;
	uint64_t records_sent;
	/* The outstanding grant request, if any. */
	uint64_t grant_last_id;
	bool grant_pending;
	bool grant_answered;
	uint32_t grant_verdict;
	/* The grant board (wire.h), NULL without; this worker's domain index there. */
	struct wire_board *board;
	uint32_t board_domain;
	uint64_t claims;
	uint32_t granted; /* groups granted whose WIRE_DONE has not gone out */
	/* A claim not yet reported (mediator_link_report_claim()). */
	struct wire_grant_request claim;
	bool claim_unsent;
	/* The outstanding request as sent, for a restarted mediatord. */
	struct wire_grant_request request;
	/*
	 * mediatord's restart (wire.h): orphaned between WIRE_ORPHANED and
	 * WIRE_RESUME; what was sent to be said again; grants below
	 * stale_below were a previous mediatord's (no WIRE_DONE for them).
	 */
	bool orphaned;
	bool serve_freely;
	uint64_t dropped_orphaned;
	uint64_t stale_below;
	struct wire_hello hello;
	struct wire_client_info info;
	bool have_info;
	struct wire_context contexts[MEDIATOR_LINK_MAX_CONTEXTS];
	size_t n_contexts;
	/* WIRE_START: asked, and not answered yet; answered. */
	bool start_asked;
	bool start_go;
};

#define link_log(level, l, fmt, ...)                                                               \
	log_msg(level, "domain %s client %u: " fmt, (l)->domain, (l)->client_id, ##__VA_ARGS__)

struct mediator_link *mediator_link_create(int fd, const char *domain, uint32_t client_id)
{
	struct mediator_link *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->fd = fd;
	l->queue_tail = &l->queue;
	snprintf(l->domain, sizeof(l->domain), "%s", domain ? domain : "?");
	l->client_id = client_id;
	return l;
}

void mediator_link_destroy(struct mediator_link *link)
{
	if (!link)
		return;
	mediator_link_flush(link);
	if (link->queue)
		link_log(LOG_LEVEL_WARN, link, "%zu bytes to mediatord never sent",
			 link->queued_bytes);
	while (link->queue) {
		struct queued *q = link->queue;

		link->queue = q->next;
		free(q);
	}
	if (link->fd >= 0) {
		fence_done_forget(link->fd);
		close(link->fd);
	}
	if (link->board)
		munmap(link->board, sizeof(struct wire_board));
	free(link);
}

int mediator_link_fd(const struct mediator_link *link)
{
	return link->fd;
}

bool mediator_link_gone(const struct mediator_link *link)
{
	return link->gone;
}

/*
 * Sends @msg now. Returns 1 when sent, 0 when the channel does not take it
 * now (EAGAIN), -1 when it is broken (the link is then gone).
 */
static int send_now(struct mediator_link *link, const void *msg, size_t size)
{
	ssize_t n = send(link->fd, msg, size, MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n == (ssize_t)size)
		return 1;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	link->gone = true;
	return -1;
}

/* Sends queued messages, oldest first, while the channel takes them. */
static void send_queued(struct mediator_link *link)
{
	while (link->queue && !link->gone) {
		struct queued *q = link->queue;

		if (send_now(link, q->msg, q->size) <= 0)
			return;
		link->queue = q->next;
		if (!link->queue)
			link->queue_tail = &link->queue;
		link->queued_bytes -= q->size;
		free(q);
	}
}

/* Queues @msg after what is queued; exits the worker when the queue overflows. */
static void enqueue(struct mediator_link *link, const void *msg, size_t size)
{
	struct queued *q;

	if (link->queued_bytes + size > MEDIATOR_LINK_QUEUE_MAX_BYTES ||
	    !(q = malloc(sizeof(*q) + size))) {
		link_log(LOG_LEVEL_ERROR, link,
			 "mediatord has not taken %zu bytes of messages beyond its socket buffer; "
			 "exiting",
			 link->queued_bytes);
		exit(EXIT_FAILURE);
	}
	q->next = NULL;
	q->size = size;
	memcpy(q->msg, msg, size);
	*link->queue_tail = q;
	link->queue_tail = &q->next;
	link->queued_bytes += size;
	if (link->queued_total++ == 0)
		link_log(LOG_LEVEL_WARN, link, "mediatord is slow to take messages; queueing them");
}

void mediator_link_send(struct mediator_link *link, const void *msg, size_t size)
{
	if (link->gone)
		return;
	if (link->orphaned) {
		link->dropped_orphaned++;
		return;
	}
	send_queued(link);
	if (link->gone)
		return;
	if (!link->queue && send_now(link, msg, size) != 0)
		return;
	enqueue(link, msg, size);
}

size_t mediator_link_queued_bytes(const struct mediator_link *link)
{
	return link->queued_bytes;
}

void mediator_link_hello(struct mediator_link *link, const char *timestamp_source,
			 const char *renderer)
{
	struct wire_hello hello;

	memset(&hello, 0, sizeof(hello));
	hello.hdr.type = WIRE_HELLO;
	hello.hdr.size = sizeof(hello);
	hello.worker_pid = getpid();
	snprintf(hello.timestamp_source, sizeof(hello.timestamp_source), "%s", timestamp_source);
	snprintf(hello.renderer, sizeof(hello.renderer), "%s", renderer);
	link->hello = hello;
	mediator_link_send(link, &hello, sizeof(hello));
}

void mediator_link_client_info(struct mediator_link *link, int32_t peer_pid, const char *name)
{
	struct wire_client_info info;

	memset(&info, 0, sizeof(info));
	info.hdr.type = WIRE_CLIENT_INFO;
	info.hdr.size = sizeof(info);
	info.peer_pid = peer_pid;
	snprintf(info.name, sizeof(info.name), "%s", name);
	link->info = info;
	link->have_info = true;
	mediator_link_send(link, &info, sizeof(info));
}

/* Keeps the list of live contexts a restarted mediatord is told of. */
static void remember_context(struct mediator_link *link, const struct wire_context *m)
{
	for (size_t i = 0; i < link->n_contexts; i++) {
		if (link->contexts[i].ctx_id == m->ctx_id) {
			if (!m->alive)
				link->contexts[i] = link->contexts[--link->n_contexts];
			return;
		}
	}
	if (m->alive && link->n_contexts < MEDIATOR_LINK_MAX_CONTEXTS)
		link->contexts[link->n_contexts++] = *m;
}

void mediator_link_context(struct mediator_link *link, uint32_t ctx_id, bool alive,
			   const char *name)
{
	struct wire_context m;

	memset(&m, 0, sizeof(m));
	m.hdr.type = WIRE_CONTEXT;
	m.hdr.size = sizeof(m);
	m.ctx_id = ctx_id;
	m.alive = alive;
	snprintf(m.name, sizeof(m.name), "%s", name);
	remember_context(link, &m);
	/* A context's records reach mediatord before its end (per-context counts). */
	mediator_link_flush(link);
	mediator_link_send(link, &m, sizeof(m));
}

void mediator_link_record(struct mediator_link *link, const struct wire_group *record)
{
	if (link->batch_n == 0)
		link->batch_since_ns = mono_now_ns();
	link->batch[link->batch_n] = *record;
	/* Sequence numbers are per worker (wire.h): the contexts of a VM
	 * count their groups apart, and complete in one order. */
	link->batch[link->batch_n++].seq = ++link->records_sent;
	if (link->batch_n == WIRE_MAX_BATCH)
		mediator_link_flush(link);
}

void mediator_link_flush(struct mediator_link *link)
{
	if (!link->batch_n)
		return;
	mediator_link_send(link, link->batch, link->batch_n * sizeof(link->batch[0]));
	link->batch_n = 0;
}

int mediator_link_timeout_ms(const struct mediator_link *link)
{
	bool retry = link->queue && !link->gone;
	uint64_t age_ms;
	int due;

	if (link->batch_n == 0)
		return retry ? MEDIATOR_LINK_RETRY_MS : -1;
	age_ms = (mono_now_ns() - link->batch_since_ns) / 1000000u;
	due = age_ms >= WIRE_FLUSH_MS ? 0 : (int)(WIRE_FLUSH_MS - age_ms);
	return retry && due > MEDIATOR_LINK_RETRY_MS ? MEDIATOR_LINK_RETRY_MS : due;
}

void mediator_link_tick(struct mediator_link *link)
{
	send_queued(link);
	if (link->batch_n && mediator_link_timeout_ms(link) == 0)
		mediator_link_flush(link);
}

int mediator_link_attach_board(struct mediator_link *link, int fd, int domain)
{
	struct stat st;
	void *p;

	if (domain < 0 || domain >= (int)WIRE_BOARD_DOMAINS || fstat(fd, &st) < 0 ||
	    st.st_size < (off_t)sizeof(struct wire_board)) {
		close(fd);
		return -EINVAL;
	}
	p = mmap(NULL, sizeof(struct wire_board), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	link->board = p;
	if (link->board->magic != WIRE_BOARD_MAGIC || (uint32_t)domain >= link->board->domains) {
		munmap(p, sizeof(struct wire_board));
		link->board = NULL;
		return -EINVAL;
	}
	link->board_domain = (uint32_t)domain;
	return 0;
}

/*
 * The shortest piece a worker cuts, whatever the board says: every
 * domain's worker maps the board writable (issue 30 gives each domain
 * its own), so a value written by another domain's worker must not make
 * this one cut its groups into slivers.
 */
#define MEDIATOR_LINK_MIN_PIECE_NS 1000000ull

uint64_t mediator_link_piece_ns(const struct mediator_link *link, uint64_t piece_ns)
{
	uint64_t gap;

	if (!link || !link->board)
		return piece_ns;
	gap = atomic_load_explicit(&link->board->safety_gap_ns, memory_order_relaxed);
	if (gap == 0)
		return 0;
	gap = gap > MEDIATOR_LINK_MIN_PIECE_NS ? gap : MEDIATOR_LINK_MIN_PIECE_NS;
	return gap < piece_ns ? gap : piece_ns;
}

/* Takes the board's offer for a group of @bound_ns if one stands that fits; *@gen: its generation.
 */
static bool claim(struct mediator_link *link, uint64_t bound_ns, uint32_t *gen, uint64_t *now_ns)
{
	uint64_t word = atomic_load_explicit(&link->board->offer, memory_order_acquire);
	uint32_t reserved = WIRE_OFFER_CLIENT(word);

	/* An offer reserved for this worker is for after its groups in flight. */
	if (WIRE_OFFER_STATE(word) != WIRE_OFFER_OFFERED ||
	    (reserved && (reserved != link->client_id || link->granted)))
		return false;
	*now_ns = mono_now_ns();
	if (*now_ns >= atomic_load_explicit(&link->board->valid_until_ns, memory_order_relaxed) ||
	    bound_ns > atomic_load_explicit(&link->board->max_bound_ns[link->board_domain],
					    memory_order_relaxed))
		return false;
	*gen = WIRE_OFFER_GEN(word);
	return atomic_compare_exchange_strong(
	    &link->board->offer, &word, WIRE_OFFER(*gen, WIRE_OFFER_CLAIMED, link->client_id));
}

bool mediator_link_claim_grant(struct mediator_link *link, uint32_t ctx_id, uint64_t predicted_ns,
			       uint64_t bound_ns, uint32_t flags, uint32_t untiled, uint64_t *id)
{
	struct wire_grant_request *req = &link->claim;
	uint32_t gen;
	uint64_t now;

	if (bound_ns < predicted_ns)
		bound_ns = predicted_ns;
	/* A group of unknown cost (no model yet) asks: the scheduler places it. */
	if (!link->board || !bound_ns || link->grant_pending || link->claim_unsent ||
	    link->orphaned || !claim(link, bound_ns, &gen, &now))
		return false;
	*req = (struct wire_grant_request){.hdr = {WIRE_GRANT_REQUEST, sizeof(*req)}};
	req->id = ++link->grant_last_id;
	req->predicted_ns = predicted_ns;
	req->bound_ns = bound_ns;
	req->flags = WIRE_GRANT_CLAIMED | (flags & WIRE_GRANT_NO_OUTPUT);
	req->untiled = untiled < WIRE_UNTILED_MAX ? untiled : 0;
	req->offer_gen = gen;
	req->claimed_ns = now;
	req->ctx_id = ctx_id;
	link->claim_unsent = true;
	link->claims++;
	link->granted++;
	*id = req->id;
	return true;
}

void mediator_link_report_claim(struct mediator_link *link)
{
	if (!link->claim_unsent)
		return;
	link->claim_unsent = false;
	mediator_link_send(link, &link->claim, sizeof(link->claim));
}

uint64_t mediator_link_request_grant(struct mediator_link *link, uint32_t ctx_id,
				     uint64_t predicted_ns, uint64_t bound_ns, uint32_t flags,
				     uint32_t untiled)
{
	struct wire_grant_request req = {.hdr = {WIRE_GRANT_REQUEST, sizeof(req)}};

	mediator_link_report_claim(link); /* requests reach mediatord in id order */
	req.id = ++link->grant_last_id;
	req.predicted_ns = predicted_ns;
	req.bound_ns = bound_ns < predicted_ns ? predicted_ns : bound_ns;
	req.flags = flags & (WIRE_GRANT_YOUNG | WIRE_GRANT_NO_OUTPUT);
	req.untiled = untiled < WIRE_UNTILED_MAX ? untiled : 0;
	req.ctx_id = ctx_id;
	link->grant_pending = true;
	link->grant_answered = false;
	link->request = req;
	mediator_link_send(link, &req, sizeof(req));
	return req.id;
}

/* WIRE_ORPHANED: mediatord died; its keeper says how to go on (wire.h). */
static void orphan(struct mediator_link *link, const struct wire_orphaned *m)
{
	link->orphaned = true;
	link->serve_freely = m->serve_freely != 0;
	fence_done_forget(link->fd);
	/* What was not sent was for the mediatord that died. */
	link->claim_unsent = false;
	link->batch_n = 0;
	while (link->queue) {
		struct queued *q = link->queue;

		link->queue = q->next;
		free(q);
	}
	link->queue_tail = &link->queue;
	link->queued_bytes = 0;
	/* A waiting group of a domain served freely starts now, without a grant. */
	if (link->serve_freely && link->grant_pending && !link->grant_answered) {
		link->grant_answered = true;
		link->grant_verdict = WIRE_GRANTED;
	}
	link_log(LOG_LEVEL_WARN, link,
		 "mediatord died; %s until a restarted mediatord takes this worker over",
		 link->serve_freely ? "dispatching without grants" : "groups wait");
}

static void send_start(struct mediator_link *link)
{
	struct wire_start m = {.hdr = {WIRE_START, sizeof(m)}};

	mediator_link_send(link, &m, sizeof(m));
}

/* WIRE_RESUME: a restarted mediatord took the worker over; tell it what it needs (wire.h). */
static void resume(struct mediator_link *link)
{
	struct wire_resume answer = {.hdr = {WIRE_RESUME, sizeof(answer)}};
	bool was_orphaned = link->orphaned;
	bool waiting = link->grant_pending && !link->grant_answered;

	link->orphaned = false;
	link->serve_freely = false;
	link->granted = 0;
	fence_done_forget(link->fd); /* their grants are stale now */
	link->stale_below = waiting ? link->request.id : link->grant_last_id + 1;
	/* First the answer itself: mediatord ignores what came before it. */
	mediator_link_send(link, &answer, sizeof(answer));
	if (link->hello.hdr.type == WIRE_HELLO)
		mediator_link_send(link, &link->hello, sizeof(link->hello));
	if (link->start_asked && !link->start_go)
		send_start(link);
	if (link->have_info)
		mediator_link_send(link, &link->info, sizeof(link->info));
	for (size_t i = 0; i < link->n_contexts; i++)
		mediator_link_send(link, &link->contexts[i], sizeof(link->contexts[i]));
	if (waiting)
		mediator_link_send(link, &link->request, sizeof(link->request));
	link_log(LOG_LEVEL_INFO, link,
		 "taken over by a restarted mediatord%s (%llu messages were not sent)",
		 was_orphaned ? "" : " (no word of its predecessor's death came)",
		 (unsigned long long)link->dropped_orphaned);
	link->dropped_orphaned = 0;
}

/* Takes one answer to the outstanding request. Returns false if there was none to answer. */
static bool take_answer(struct mediator_link *link, const struct wire_grant *g)
{
	if (!link->grant_pending || link->grant_answered || g->id != link->grant_last_id ||
	    (g->verdict != WIRE_GRANTED && g->verdict != WIRE_REFUSED))
		return false;
	link->grant_answered = true;
	link->grant_verdict = g->verdict;
	return true;
}

int mediator_link_read(struct mediator_link *link)
{
	for (;;) {
		union {
			struct wire_header hdr;
			struct wire_grant grant;
			struct wire_orphaned orphaned;
			struct wire_resume resume;
			struct wire_start start;
		} m;
		ssize_t n = recv(link->fd, &m, sizeof(m), MSG_DONTWAIT | MSG_TRUNC);
		bool ok;

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return 0;
			link->gone = true;
			return -EPIPE;
		}
		if (n == 0) {
			link->gone = true;
			return -EPIPE;
		}
		ok =
		    (size_t)n >= sizeof(m.hdr) && (size_t)n <= sizeof(m) && m.hdr.size == (size_t)n;
		if (ok && m.hdr.type == WIRE_GRANT && n == sizeof(m.grant))
			ok = !link->orphaned && take_answer(link, &m.grant);
		else if (ok && m.hdr.type == WIRE_ORPHANED && n == sizeof(m.orphaned))
			orphan(link, &m.orphaned);
		else if (ok && m.hdr.type == WIRE_RESUME && n == sizeof(m.resume))
			resume(link);
		else if (ok && m.hdr.type == WIRE_START && n == sizeof(m.start) &&
			 link->start_asked && !link->start_go)
			link->start_go = true;
		else
			ok = false;
		if (!ok) {
			link_log(LOG_LEVEL_ERROR, link, "unexpected message from mediatord");
			link->gone = true;
			return -EPIPE;
		}
	}
}

int mediator_link_wait_start(struct mediator_link *link)
{
	uint64_t until = mono_now_ns() + WIRE_START_WAIT_MS * 1000000ull;

	link->start_asked = true;
	send_start(link);
	while (!link->start_go && !link->orphaned && !link->gone) {
		uint64_t now = mono_now_ns();
		struct pollfd p = {.fd = link->fd, .events = POLLIN};

		if (now >= until) {
			link_log(LOG_LEVEL_WARN, link,
				 "mediatord did not answer in %d ms; making the renderer anyway",
				 WIRE_START_WAIT_MS);
			break;
		}
		send_queued(link);
		if (poll(&p, 1, (int)((until - now) / 1000000u) + 1) < 0 && errno != EINTR)
			return -errno;
		if ((p.revents & (POLLIN | POLLHUP | POLLERR)) && mediator_link_read(link) < 0)
			return -EPIPE;
	}
	return 0;
}

bool mediator_link_serving_freely(const struct mediator_link *link)
{
	return link->orphaned && link->serve_freely;
}

int mediator_link_on_events(struct mediator_link *link, short revents)
{
	send_queued(link);
	if ((revents & (POLLHUP | POLLERR)) ||
	    ((revents & POLLIN) && mediator_link_read(link) < 0)) {
		link->gone = true;
		link_log(LOG_LEVEL_ERROR, link, "mediatord went away; stopping");
		return -EPIPE;
	}
	return 0;
}

bool mediator_link_take_grant(struct mediator_link *link, uint32_t *verdict)
{
	if (!link->grant_pending || !link->grant_answered)
		return false;
	link->grant_pending = false;
	*verdict = link->grant_verdict;
	if (*verdict == WIRE_GRANTED)
		link->granted++;
	return true;
}

void mediator_link_arm_done(struct mediator_link *link, uint32_t fence_id, uint64_t grant_id,
			    uint64_t dispatch_ns)
{
	/* The relay's message overtakes whatever is queued: only with nothing queued. */
	if (grant_id == 0 || grant_id < link->stale_below || link->gone || link->orphaned ||
	    link->queue || link->claim_unsent)
		return;
	/* No slot left: this one's WIRE_DONE comes from mediator_link_done(). */
	(void)fence_done_arm(link->fd, fence_id, grant_id, dispatch_ns);
}

void mediator_link_done(struct mediator_link *link, uint64_t grant_id, uint64_t measured_ns,
			uint64_t end_ns)
{
	struct wire_done done = {.hdr = {WIRE_DONE, sizeof(done)},
				 .id = grant_id,
				 .measured_ns = measured_ns,
				 .end_ns = end_ns};

	mediator_link_report_claim(link); /* its request before its completion */
	if (fence_done_take(grant_id)) {
		if (link->granted)
			link->granted--;
		return; /* sent when its fence signalled */
	}
	if (grant_id < link->stale_below)
		return; /* granted by a mediatord that died (wire.h) */
	mediator_link_send(link, &done, sizeof(done));
	if (link->granted)
		link->granted--;
}
