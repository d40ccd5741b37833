// SPDX-License-Identifier: MIT
/*
 * mediatord's dispatcher (see dispatcher.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "daemon/dispatcher.h"
#include "common/util.h"

/*
 * How long an offer on the grant board stands: a new one is made when it
 * runs out. Its bounds hold for the whole span, so a longer one offers
 * less and a shorter one wakes mediatord more often.
 */
#define DISPATCHER_OFFER_NS 2000000ull
/*
 * A claim is reported right after its compare-and-swap, before the group
 * goes to the renderer. One not reported within its domain's bound on the
 * offer (a group of that bound would have held the slot as long, and the
 * offer was made with room for it), at least DISPATCHER_CLAIM_REPORT_NS,
 * at most DISPATCHER_CLAIM_TIMEOUT_NS, was not a worker's honest one: that
 * domain's board is switched off, its groups ask from then on. Until
 * 2026-11-29 every claim had the 50 ms: bench/faults' worker-claim row
 * held the cluster's grant 42 ms once (its frame 48.6 ms late). The floor
 * is above every honest report lag measured (4.6 ms at most, see
 * DISPATCHER_CHARGE_SLACK_NS); one later than it costs the worker's
 * domain its board (offers), not a group.
 */
#define DISPATCHER_CLAIM_TIMEOUT_NS 50000000ull
#define DISPATCHER_CLAIM_REPORT_NS  10000000ull

/*
 * How much mediatord's view of a group (grant to completion report) may
 * exceed what an honest worker measured (dispatch to fence): the worker's
 * wake-up on the grant and its report through its loop, at its domain's
 * nice value. Measured in test-isolation, test-pieces and
 * test-two-domains (2026-11-27, 6,964 groups): median 45 us, 99th
 * percentile 384 us, the most 4.6 ms; beside test-compromised-worker's
 * attacks up to 17 ms. A group is charged what mediatord saw less
 * DISPATCHER_CHARGE_SLACK_NS (between the median and the 90th percentile
 * of the lag: an honest worker is charged a little more than it measured
 * in about a third of its groups) when that is more than what the worker
 * measured (the slot was held, if idle, from the grant on); a client whose
 * reports add up to less than half of what mediatord saw, by more than
 * DISPATCHER_SHORT_SLACK_NS, reports short.
 */
#define DISPATCHER_CHARGE_SLACK_NS 100000ull
/*
 * Short is judged over about this many of a client's latest groups
 * (decaying sums), so that one report's lag, which can reach the slack
 * below, does not make an honest worker's with groups of a few ms short,
 * while a worker that calls every 4 ms piece 1 us is short within a few
 * dozen pieces.
 */
#define DISPATCHER_REPORT_WINDOW  32.0
#define DISPATCHER_SHORT_SLACK_NS 20000000ull
/*
 * A worker that reports a group short under-reports: its later requests
 * are admitted on their bounds times how much it under-reported (the
 * ratio decays by a tenth with each group reported truly), and while the
 * ratio is above DISPATCHER_DISTRUST no offer goes on its domain's board
 * (its claims would start groups on its word).
 */
#define DISPATCHER_DISTRUST 2.0
/*
 * A client's groups are young (SCHED_YOUNG) to mediatord until it saw this
 * many of them complete, whatever its worker says: a worker that calls its
 * first groups learned would have them placed as if their bounds were.
 * (A worker's own estimate is young over its first 64 whole groups of
 * each context, predict_estimator.h; this counts pieces, per client.)
 */
#define DISPATCHER_YOUNG_GROUPS 64u
#define DISPATCHER_INFLATE_MAX	1e6

/* A request or granted group of a client, as the scheduler knows it. */
struct outstanding {
	bool used, granted;
	/*
	 * Granted, then revoked by the watchdog: the scheduler forgot it, its
	 * client is suspended until its late completion comes (or it is
	 * killed at revoked_ns + kill_ns).
	 */
	bool revoked;
	/* A request of a suspended client: not given to the scheduler until its client resumes. */
	bool held;
	uint32_t client;
	uint64_t wire_id;  /* the worker's id */
	uint64_t sched_id; /* unique in the scheduler */
	uint32_t ctx_id;   /* as the worker named it */
	int domain;
	/* held: what it asked for, to submit it when its client resumes. */
	uint64_t predicted_ns, bound_ns;
	unsigned flags;
	/* revoked: when, what the scheduler charged for it then, and its grant. */
	uint64_t revoked_ns, charged_ns, granted_ns;
	/* granted: when mediatord sent its grant or learned of its claim (its own clock). */
	uint64_t seen_start_ns;
	uint64_t kill_at; /* revoked: when its kill stage comes */
};

struct client_ids {
	uint32_t client;
	uint64_t last_id; /* highest request id seen */
	/* >= 1: how much it under-reported its groups' times lately (DISPATCHER_DISTRUST). */
	double inflate;
	int domain;	    /* of its latest request */
	uint64_t completed; /* groups mediatord saw complete (DISPATCHER_YOUNG_GROUPS) */
	/* Decaying sums of what mediatord saw and the worker measured (DISPATCHER_REPORT_WINDOW).
	 */
	double seen_sum, measured_sum;
	uint64_t underreports;
};

struct dispatcher {
	struct sched *sched;
	int timer_fd;
	struct loop_source *timer;
	dispatcher_send_fn send;
	void *data;
	dispatcher_revoke_fn revoke;
	void *revoke_data;
	uint64_t kill_ns; /* revocation to kill (0: never) */
	uint64_t next_sched_id;
	/* Scans stop at the tops: out[top..] and ids[ids_top..] are unused. */
	struct outstanding out[SCHED_MAX_PENDING];
	struct client_ids ids[SCHED_MAX_PENDING];
	size_t top, ids_top;
	/*
	 * The grant boards (wire.h), one per domain: a worker maps its
	 * domain's only, so that what it writes there reaches no other
	 * domain's worker. One offer stands at a time, on one board.
	 */
	struct {
		int fd;
		struct wire_board *b;
		bool off; /* after a claim never reported: no more offers on it */
		/*
		 * The claim that switched it off, given up but not forgotten: an
		 * honest worker slowed past its report's due time (descheduled
		 * between its compare-and-swap and its report, on a loaded host)
		 * reports it yet, and its group runs already (late_claim()).
		 */
		struct lapsed_claim {
			bool set;
			uint32_t client, gen;
			uint64_t offer_at, offer_until, bound_ns;
			uint64_t claimed_at; /* when mediatord found it taken */
		} lapsed;
	} boards[WIRE_BOARD_DOMAINS];
	struct wire_board *board; /* boards[board_domain].b: the current offer's */
	int board_domain;
	int last_domain; /* of the latest request: a free offer goes on its board */
	int n_domains;
	uint32_t gen;
	bool offered;	       /* an offer of generation gen stands (or was just taken) */
	bool claimed;	       /* it was taken: no grant until the claimer's request */
	uint32_t claimer;      /* claimed: the client that took it */
	uint64_t claimed_at;   /* claimed: when mediatord found it taken */
	uint64_t claim_due;    /* claimed: its report is owed by then (claim_due_at()) */
	uint32_t offer_client; /* the client it is reserved for, 0: anyone */
	uint64_t offer_at;     /* when it was made: no claim is older */
	uint64_t offer_until;
	uint64_t offer_bound[WIRE_BOARD_DOMAINS];
	/* DISPATCHER_INV_AGREES: times the scheduler and the dispatcher disagreed. */
	uint64_t disagreements;
	/* When the latest completion report came: a group granted before it queued until then. */
	uint64_t last_done_ns;
	uint64_t underreported[WIRE_BOARD_DOMAINS]; /* groups reported short, per domain */
};

/* The dispatcher's own invariant, after the scheduler's (enum sched_invariant). */
#define DISPATCHER_INV_AGREES SCHED_INV_COUNT

/* Logs a broken invariant the 1st, 2nd, 4th, 8th, ... time: a recurring one does not flood. */
static void warn_invariant(const char *name, uint64_t count, const char *what)
{
	if (count & (count - 1))
		return;
	log_warn("invariant %s broken: %s (%llu times so far)", name, what,
		 (unsigned long long)count);
}

/* The scheduler's warn callback (sched_warn_fn). */
static void on_sched_invariant(void *data, enum sched_invariant inv, uint64_t count,
			       const char *what)
{
	warn_invariant(sched_invariant_name(inv), count, what);
}

/* DISPATCHER_INV_AGREES broke: the scheduler does not hold what the dispatcher does. */
static void disagree(struct dispatcher *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void disagree(struct dispatcher *d, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	warn_invariant(dispatcher_invariant_name(DISPATCHER_INV_AGREES), ++d->disagreements, what);
}

const char *dispatcher_invariant_name(unsigned i)
{
	if (i == DISPATCHER_INV_AGREES)
		return "dispatcher_agrees";
	return sched_invariant_name((enum sched_invariant)i);
}

uint64_t dispatcher_invariant_violations(const struct dispatcher *d, unsigned i)
{
	if (i == DISPATCHER_INV_AGREES)
		return d->disagreements;
	return sched_invariant_violations(d->sched, (enum sched_invariant)i);
}

static void run(struct dispatcher *d, uint64_t now_ns);

static void on_timer(struct loop_source *source, int fd, uint32_t events, void *data)
{
	uint64_t expirations;

	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		log_warn("dispatcher timer: %s", strerror(errno));
	run(data, mono_now_ns());
}

static void clear_board(struct dispatcher *d);

/* A sealed memfd holding a struct wire_board, mapped at d->boards[@i].b. */
static int create_board(struct dispatcher *d, int i, char *err, size_t err_size)
{
	struct wire_board *b;
	int fd = memfd_create("gpu-mediator-grant-board", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	d->boards[i].fd = fd;
	if (fd < 0 || ftruncate(fd, sizeof(struct wire_board)) < 0 ||
	    /* A worker must not shrink it under mediatord (SIGBUS). */
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		snprintf(err, err_size, "cannot create the grant board: %s", strerror(errno));
		return -1;
	}
	/* Above the numbers workers inherit fds on, so that spawning never clobbers it. */
	if (fd <= WIRE_BOARD_FD) {
		d->boards[i].fd = fcntl(fd, F_DUPFD_CLOEXEC, WIRE_BOARD_FD + 1);
		close(fd);
		if (d->boards[i].fd < 0) {
			snprintf(err, err_size, "cannot move the grant board: %s", strerror(errno));
			return -1;
		}
	}
	b = mmap(NULL, sizeof(struct wire_board), PROT_READ | PROT_WRITE, MAP_SHARED,
		 d->boards[i].fd, 0);
	if (b == MAP_FAILED) {
		snprintf(err, err_size, "cannot map the grant board: %s", strerror(errno));
		return -1;
	}
	d->boards[i].b = b;
	b->magic = WIRE_BOARD_MAGIC;
	b->domains = (uint32_t)d->n_domains;
	atomic_store(&b->offer, WIRE_OFFER(0, WIRE_OFFER_NONE, 0));
	return 0;
}

int dispatcher_adopt_board(struct dispatcher *d, int domain, int fd)
{
	struct wire_board *b;
	struct stat st;
	uint32_t gen;

	if (domain < 0 || domain >= d->n_domains || fstat(fd, &st) < 0 ||
	    st.st_size < (off_t)sizeof(*b))
		return -EINVAL;
	b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (b == MAP_FAILED)
		return -errno;
	if (b->magic != WIRE_BOARD_MAGIC || b->domains != (uint32_t)d->n_domains) {
		munmap(b, sizeof(*b));
		return -EINVAL;
	}
	if (fd <= WIRE_BOARD_FD) {
		int moved = fcntl(fd, F_DUPFD_CLOEXEC, WIRE_BOARD_FD + 1);

		if (moved < 0) {
			munmap(b, sizeof(*b));
			return -errno;
		}
		close(fd);
		fd = moved;
	}
	munmap(d->boards[domain].b, sizeof(struct wire_board));
	close(d->boards[domain].fd);
	d->boards[domain].b = b;
	d->boards[domain].fd = fd;
	d->board = d->boards[d->board_domain].b;
	/* Past every generation its workers saw: none of their claims can match. */
	gen = WIRE_OFFER_GEN(atomic_load(&b->offer));
	if (gen >= d->gen)
		d->gen = gen + 1;
	atomic_store(&b->offer, WIRE_OFFER(d->gen, WIRE_OFFER_NONE, 0));
	clear_board(d);
	return 0;
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
	d->n_domains = (int)cfg->n_domains;
	for (int i = 0; i < (int)WIRE_BOARD_DOMAINS; i++)
		d->boards[i].fd = -1;
	d->kill_ns = (uint64_t)cfg->watchdog_kill_us * 1000;
	for (int i = 0; i < d->n_domains; i++) {
		if (create_board(d, i, err, err_size) < 0)
			goto fail;
	}
	d->board = d->boards[0].b;
	d->sched = sched_create_from_config(cfg, now_ns, err, err_size);
	if (!d->sched)
		goto fail;
	sched_set_warn(d->sched, on_sched_invariant, d);
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
	for (int i = 0; i < (int)WIRE_BOARD_DOMAINS; i++) {
		if (d->boards[i].b)
			munmap(d->boards[i].b, sizeof(struct wire_board));
		if (d->boards[i].fd >= 0)
			close(d->boards[i].fd);
	}
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
		*free_slot = (struct client_ids){.client = client, .inflate = 1.0};
		return free_slot;
	}
	return NULL;
}

void dispatcher_set_revoke(struct dispatcher *d, dispatcher_revoke_fn fn, void *data)
{
	d->revoke = fn;
	d->revoke_data = data;
}

int dispatcher_board_fd(const struct dispatcher *d, int domain)
{
	return domain >= 0 && domain < d->n_domains ? d->boards[domain].fd : -1;
}

/* Clears the board: no offer stands, none is taken. */
static void clear_board(struct dispatcher *d)
{
	d->offered = false;
	d->claimed = false;
	atomic_store(&d->board->offer, WIRE_OFFER(d->gen, WIRE_OFFER_NONE, 0));
}

/* When a claim found at @now_ns on the current offer is owed its report. */
static uint64_t claim_due_at(const struct dispatcher *d, uint64_t now_ns)
{
	uint64_t wait = d->offer_bound[d->board_domain];

	if (wait < DISPATCHER_CLAIM_REPORT_NS)
		wait = DISPATCHER_CLAIM_REPORT_NS;
	if (wait > DISPATCHER_CLAIM_TIMEOUT_NS)
		wait = DISPATCHER_CLAIM_TIMEOUT_NS;
	return now_ns + wait;
}

/*
 * Withdraws the standing offer. Returns false when a worker took it
 * first: then nothing else may be granted until its request came.
 */
static bool withdraw(struct dispatcher *d, uint64_t now_ns)
{
	uint64_t expect = WIRE_OFFER(d->gen, WIRE_OFFER_OFFERED, d->offer_client);

	if (d->claimed)
		return false;
	if (!d->offered)
		return true;
	if (atomic_compare_exchange_strong(&d->board->offer, &expect,
					   WIRE_OFFER(d->gen, WIRE_OFFER_NONE, 0))) {
		d->offered = false;
		return true;
	}
	if (WIRE_OFFER_STATE(expect) == WIRE_OFFER_CLAIMED && WIRE_OFFER_GEN(expect) == d->gen) {
		d->claimed = true;
		d->claimer = WIRE_OFFER_CLIENT(expect);
		d->claimed_at = now_ns;
		d->claim_due = claim_due_at(d, now_ns);
		return false;
	}
	/* Not what any worker may write: drop it and go on without the offer. */
	log_warn("grant board: offer word 0x%llx written by a worker; cleared",
		 (unsigned long long)expect);
	clear_board(d);
	return true;
}

/* True when a request waits for the scheduler's answer. */
static bool waiting(const struct dispatcher *d)
{
	for (size_t i = 0; i < d->top; i++) {
		if (d->out[i].used && !d->out[i].granted && !d->out[i].held)
			return true;
	}
	return false;
}

/* True when @client (0: any client) is suspended: a group of it was revoked. */
static bool suspended(const struct dispatcher *d, uint32_t client)
{
	for (size_t i = 0; i < d->top; i++) {
		if (d->out[i].used && d->out[i].revoked && (!client || d->out[i].client == client))
			return true;
	}
	return false;
}

/* The one client whose groups are all that is in flight (0: none, or several), its domain in
 * @domain. */
static uint32_t sole_owner(const struct dispatcher *d, int *domain)
{
	uint32_t owner = 0;

	for (size_t i = 0; i < d->top; i++) {
		const struct outstanding *o = &d->out[i];

		if (!o->used)
			continue;
		if (!o->granted || (owner && o->client != owner))
			return 0;
		owner = o->client;
		*domain = o->domain;
	}
	return owner;
}

/* True when a client of @domain under-reported lately (DISPATCHER_DISTRUST). */
static bool distrusted(const struct dispatcher *d, int domain)
{
	for (size_t i = 0; i < d->ids_top; i++) {
		if (d->ids[i].client && d->ids[i].domain == domain &&
		    d->ids[i].inflate > DISPATCHER_DISTRUST)
			return true;
	}
	return false;
}

/*
 * Offers a slot on the board when nothing waits: a free one to anyone, or
 * the one a single client's groups hold to that client for its next
 * group. Returns until when the offer stands (0: none).
 */
static uint64_t offer(struct dispatcher *d, uint64_t now_ns, uint64_t next_event)
{
	uint64_t until = now_ns + DISPATCHER_OFFER_NS;
	uint32_t owner;
	int domain = -1;

	/*
	 * Only for workers that ask; an idle mediatord sleeps. Not while a
	 * client is suspended: an offer cannot leave one client out.
	 */
	if (d->ids_top == 0 || suspended(d, 0))
		return 0;
	if (next_event < until)
		until = next_event;
	if ((owner = sole_owner(d, &domain)) == 0)
		domain = d->last_domain;
	if (domain < 0 || domain >= d->n_domains || d->boards[domain].off || distrusted(d, domain))
		return 0;
	if (sched_offer(d->sched, now_ns, until, false, d->offer_bound))
		d->offer_client = 0;
	else if (owner && sched_offer(d->sched, now_ns, until, true, d->offer_bound))
		d->offer_client = owner;
	else
		return 0;
	/* A free offer goes where the single owner's next group is, else to the latest asker. */
	d->board_domain = domain;
	d->board = d->boards[domain].b;
	d->gen++;
	for (int i = 0; i < d->n_domains; i++)
		atomic_store_explicit(&d->board->max_bound_ns[i], d->offer_bound[i],
				      memory_order_relaxed);
	atomic_store_explicit(&d->board->valid_until_ns, until, memory_order_relaxed);
	atomic_store_explicit(&d->board->offer,
			      WIRE_OFFER(d->gen, WIRE_OFFER_OFFERED, d->offer_client),
			      memory_order_release);
	d->offered = true;
	d->offer_at = now_ns;
	d->offer_until = until;
	return until;
}

static bool drop_claim(struct dispatcher *d, uint32_t client);

/*
 * Forgets everything of @client: its claim, its requests and groups in
 * flight, its ids. Returns true when something was forgotten.
 */
static bool forget(struct dispatcher *d, uint32_t client, uint64_t now_ns)
{
	struct client_ids *ids = ids_of(d, client, false);
	/* A worker that took the offer and died before saying so. */
	bool any = drop_claim(d, client);

	for (int i = 0; i < d->n_domains; i++) {
		if (d->boards[i].lapsed.client == client)
			d->boards[i].lapsed.set = false;
	}
	for (size_t i = d->top; i-- > 0;) {
		if (d->out[i].used && d->out[i].client == client) {
			/* The scheduler knows neither revoked groups nor held requests. */
			if (!d->out[i].revoked && !d->out[i].held &&
			    sched_cancel(d->sched, d->out[i].sched_id, now_ns) < 0)
				disagree(d,
					 "client %u's request %llu is gone, unknown to the "
					 "scheduler",
					 client, (unsigned long long)d->out[i].wire_id);
			drop(d, &d->out[i]);
			any = true;
		}
	}
	if (ids)
		ids->client = 0;
	while (d->ids_top && !d->ids[d->ids_top - 1].client)
		d->ids_top--;
	return any;
}

/*
 * Tells the scheduler how many revoked groups of each domain still draw
 * (their late completion not come, their client not forgotten), and a
 * claim found taken but not reported yet: other domains' frames then are
 * not alone (sched_set_revoked_running()). A count told late only ever
 * says "not alone" for longer.
 */
static void tell_revoked(struct dispatcher *d)
{
	uint32_t n[SCHED_MAX_DOMAINS] = {0};

	for (size_t i = 0; i < d->top; i++) {
		const struct outstanding *o = &d->out[i];

		if (o->used && o->revoked && o->domain >= 0 && o->domain < SCHED_MAX_DOMAINS)
			n[o->domain]++;
	}
	/* A claim not reported yet runs something mediatord does not know, beside them too. */
	if (d->claimed && d->board_domain >= 0 && d->board_domain < SCHED_MAX_DOMAINS)
		n[d->board_domain]++;
	for (int i = 0; i < d->n_domains && i < SCHED_MAX_DOMAINS; i++)
		sched_set_revoked_running(d->sched, i, n[i]);
}

/*
 * The grant watchdog's first stage: revokes every group past its
 * deadline, suspends its client (its waiting request is taken back from
 * the scheduler and held) and tells the revoke callback.
 */
static void revoke_overdue(struct dispatcher *d, uint64_t now_ns)
{
	struct sched_overdue od[8];
	size_t n;

	while ((n = sched_overdue(d->sched, now_ns, od, ARRAY_SIZE(od))) > 0) {
		for (size_t i = 0; i < n; i++) {
			struct outstanding *o = find_sched(d, od[i].id);
			struct dispatcher_revoked r = {.domain = od[i].domain,
						       .granted_ns = od[i].granted_ns,
						       .bound_ns = od[i].bound_ns,
						       .deadline_ns = od[i].deadline_ns,
						       .revoked_ns = now_ns};

			if (sched_revoke(d->sched, od[i].id, now_ns) < 0 || !o || o->revoked) {
				disagree(d, "the watchdog revoked request %llu, unknown here",
					 (unsigned long long)od[i].id);
				if (o)
					drop(d, o);
				continue;
			}
			o->revoked = true;
			o->revoked_ns = now_ns;
			o->granted_ns = od[i].granted_ns;
			/* What sched_revoke() charged: the time held, at least the bound. */
			o->charged_ns = now_ns > od[i].granted_ns ? now_ns - od[i].granted_ns : 0;
			if (o->charged_ns < od[i].bound_ns)
				o->charged_ns = od[i].bound_ns;
			for (size_t k = 0; k < d->top; k++) {
				struct outstanding *w = &d->out[k];

				if (!w->used || w->client != o->client || w->granted || w->held)
					continue;
				if (sched_cancel(d->sched, w->sched_id, now_ns) < 0)
					disagree(
					    d,
					    "client %u's request %llu is unknown to the scheduler",
					    w->client, (unsigned long long)w->wire_id);
				w->held = true;
			}
			r.client = o->client;
			r.ctx_id = o->ctx_id;
			r.wire_id = o->wire_id;
			r.young = o->flags & SCHED_YOUNG;
			o->kill_at = d->revoke ? d->revoke(d->revoke_data, &r) : 0;
			if (!o->kill_at)
				o->kill_at = now_ns + d->kill_ns;
		}
	}
}

/*
 * The second stage: asks the revoke callback about each revoked group
 * whose completion has not come by its kill stage's time; forgets the
 * client when its worker was killed. Returns the next time one is due
 * (UINT64_MAX: none).
 */
static uint64_t kill_overdue(struct dispatcher *d, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX;
	size_t i = 0;

	if (!d->kill_ns)
		return UINT64_MAX;
	while (i < d->top) {
		struct outstanding *o = &d->out[i];
		struct dispatcher_revoked r;
		uint64_t later;

		if (!o->used || !o->revoked) {
			i++;
			continue;
		}
		if (now_ns < o->kill_at) {
			next = o->kill_at < next ? o->kill_at : next;
			i++;
			continue;
		}
		r = (struct dispatcher_revoked){.client = o->client,
						.domain = o->domain,
						.ctx_id = o->ctx_id,
						.wire_id = o->wire_id,
						.granted_ns = o->granted_ns,
						.bound_ns = o->bound_ns,
						.revoked_ns = o->revoked_ns,
						.young = o->flags & SCHED_YOUNG,
						.kill = true};
		later = d->revoke ? d->revoke(d->revoke_data, &r) : 0;
		if (later > now_ns) {
			o->kill_at = later;
			next = later < next ? later : next;
			i++;
			continue;
		}
		forget(d, r.client, now_ns);
		i = 0; /* forget() dropped entries: scan again */
	}
	return next;
}

/* Resumes @client when nothing of it is revoked any more: its held request goes to the scheduler.
 */
static void resume(struct dispatcher *d, uint32_t client, uint64_t now_ns)
{
	if (suspended(d, client))
		return;
	for (size_t i = 0; i < d->top; i++) {
		struct outstanding *o = &d->out[i];

		if (!o->used || !o->held || o->client != client)
			continue;
		o->held = false;
		if (sched_submit(d->sched, o->sched_id, o->domain, o->predicted_ns, o->bound_ns,
				 o->flags, now_ns) < 0) {
			disagree(d, "the scheduler refused client %u's held request %llu", client,
				 (unsigned long long)o->wire_id);
			drop(d, o);
		}
	}
}

/* Grants what may start now, then sets the timer for the next time the answer may change. */
static void run(struct dispatcher *d, uint64_t now_ns)
{
	struct sched_decision dec[32];
	struct itimerspec its = {{0, 0}, {0, 0}};
	uint64_t next, until = 0, overdue, kill_at, gap;
	size_t n;

	revoke_overdue(d, now_ns);
	kill_at = kill_overdue(d, now_ns);
	tell_revoked(d);
	gap = sched_safety_gap(d->sched, now_ns);
	for (int i = 0; i < d->n_domains; i++)
		atomic_store_explicit(&d->boards[i].b->safety_gap_ns, gap, memory_order_relaxed);
	if (d->claimed && now_ns > d->claim_due) {
		log_error("grant board of domain %d: an offer taken for client %u was not reported "
			  "within %llu ms; that board is off, its domain's groups ask",
			  d->board_domain, d->claimer,
			  (unsigned long long)((d->claim_due - d->claimed_at) / 1000000));
		d->boards[d->board_domain].lapsed = (struct lapsed_claim){
		    .set = true,
		    .client = d->claimer,
		    .gen = d->gen,
		    .offer_at = d->offer_at,
		    .offer_until = d->offer_until,
		    .bound_ns = d->offer_bound[d->board_domain],
		    .claimed_at = d->claimed_at,
		};
		clear_board(d);
		d->boards[d->board_domain].off = true;
	}
	if (d->offered && !d->claimed && !waiting(d) && now_ns < d->offer_until &&
	    !suspended(d, 0)) {
		/*
		 * Nothing to grant, and the standing offer's bounds hold for its
		 * whole span (groups completing only make room): it stays, so
		 * that the next group takes it rather than a withdrawn one.
		 */
		sched_advance(d->sched, now_ns);
		next = sched_next_event(d->sched, now_ns);
		if (d->offer_until < next)
			next = d->offer_until;
		goto arm;
	}
	if (!withdraw(d, now_ns)) {
		/* A worker took the offer: its request comes next. */
		next = d->claim_due + 1;
		goto arm;
	}
	do {
		n = sched_poll(d->sched, now_ns, dec, ARRAY_SIZE(dec));
		for (size_t i = 0; i < n; i++) {
			struct outstanding *o = find_sched(d, dec[i].id);
			struct wire_grant g = {.hdr = {WIRE_GRANT, sizeof(g)}};

			if (!o) {
				/* Nobody would complete it: its slot would stay taken. */
				disagree(d,
					 "the scheduler decided about request %llu, unknown here",
					 (unsigned long long)dec[i].id);
				sched_cancel(d->sched, dec[i].id, now_ns);
				continue;
			}
			g.id = o->wire_id;
			g.verdict = dec[i].verdict == SCHED_GRANTED ? WIRE_GRANTED : WIRE_REFUSED;
			if (dec[i].verdict == SCHED_GRANTED) {
				o->granted = true;
				o->seen_start_ns = now_ns;
			} else
				drop(d, o); /* the scheduler forgot it already */
			d->send(d->data, o->client, &g);
		}
	} while (n == ARRAY_SIZE(dec));
	next = sched_next_event(d->sched, now_ns);
	until = offer(d, now_ns, next);
	if (until && until < next)
		next = until;
arm:
	overdue = sched_next_deadline(d->sched);
	if (overdue < next)
		next = overdue;
	if (kill_at < next)
		next = kill_at;
	if (next != UINT64_MAX) {
		its.it_value.tv_sec = (time_t)(next / 1000000000u);
		its.it_value.tv_nsec = (long)(next % 1000000000u);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(d->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* True when claim @req names offer @gen, within its @bound and its span [@at, @until), by @now. */
static bool claim_fits(const struct wire_grant_request *req, uint32_t gen, uint64_t bound,
		       uint64_t at, uint64_t until, uint64_t now_ns)
{
	return req->offer_gen == gen && req->bound_ns && req->bound_ns <= bound &&
	       req->claimed_ns >= at && req->claimed_ns < until && req->claimed_ns <= now_ns;
}

/*
 * A request that says it took the board's offer: the offer it names must
 * be the one standing, taken by this client (the board's word says so),
 * reserved for no other client, its bound (not 0) within what was
 * offered to its domain, taken while the offer stood (not before it was
 * made, not at or after its end, not in the future). A reserved offer is
 * for after the claimer's own groups: their completions came first.
 */
static bool claim_valid(struct dispatcher *d, uint32_t client, int domain,
			const struct wire_grant_request *req, uint64_t now_ns)
{
	uint64_t word = atomic_load(&d->board->offer);

	if (!d->offered && !d->claimed)
		return false;
	if (word != WIRE_OFFER(d->gen, WIRE_OFFER_CLAIMED, client) || domain != d->board_domain ||
	    !claim_fits(req, d->gen, d->offer_bound[domain], d->offer_at, d->offer_until, now_ns) ||
	    (d->offer_client && d->offer_client != client))
		return false;
	for (size_t i = 0; d->offer_client && i < d->top; i++) {
		if (d->out[i].used && d->out[i].client == client)
			return false;
	}
	return true;
}

/*
 * True when @req of @client reports the claim mediatord gave up on @domain's
 * board (it switched the board off): the same offer, within its bound and
 * span. Its group runs already, so it is taken as a claim, late; before
 * 2026-11-29 it was refused as malformed and the worker stopped, which
 * ended honest workers on a loaded host (CI, AddressSanitizer: a cluster
 * worker under test-memory-flood's load, an infotainment worker at idle
 * priority in test-isolation, each reporting 14 to 50 ms after its
 * claim). Each lapsed claim is taken once.
 */
static bool late_claim(struct dispatcher *d, uint32_t client, int domain,
		       const struct wire_grant_request *req, uint64_t now_ns)
{
	struct lapsed_claim *l;

	if (domain < 0 || domain >= d->n_domains)
		return false;
	l = &d->boards[domain].lapsed;
	if (!l->set || l->client != client ||
	    !claim_fits(req, l->gen, l->bound_ns, l->offer_at, l->offer_until, now_ns))
		return false;
	for (size_t i = 0; i < d->top; i++) {
		if (d->out[i].used && d->out[i].client == client)
			return false;
	}
	l->set = false;
	log_warn("grant board of domain %d: client %u reported its claim of offer %u %llu ms "
		 "after it was taken; its group runs, taken late",
		 domain, client, req->offer_gen,
		 (unsigned long long)((now_ns - req->claimed_ns) / 1000000));
	return true;
}

/*
 * When the board says @client took the offer, forgets that claim (its
 * client is refused or gone) and returns true: the others need not wait
 * for a report of it.
 */
static bool drop_claim(struct dispatcher *d, uint32_t client)
{
	uint64_t word;

	if (!d->offered && !d->claimed)
		return false;
	word = atomic_load(&d->board->offer);
	if (WIRE_OFFER_STATE(word) != WIRE_OFFER_CLAIMED || WIRE_OFFER_CLIENT(word) != client)
		return false;
	clear_board(d);
	return true;
}

/* The scheduler's flags (enum sched_group_flag) of a request (enum wire_grant_flag, untiled). */
static unsigned sched_flags(const struct wire_grant_request *req)
{
	return (req->flags & WIRE_GRANT_YOUNG ? SCHED_YOUNG : 0) |
	       (req->flags & WIRE_GRANT_NO_OUTPUT ? SCHED_NO_OUTPUT : 0) |
	       (req->untiled ? SCHED_UNTILED : 0);
}

/* A time @ns of a request of @ids's client, as admitted: times how much it under-reported. */
static uint64_t admitted(const struct client_ids *ids, uint64_t ns)
{
	double t = (double)ns * ids->inflate;

	return t < (double)WIRE_TIME_MAX_NS ? (uint64_t)t : WIRE_TIME_MAX_NS;
}

/*
 * What @o's domain is charged for it, completed with the report @done at
 * @now_ns: what the worker measured, but at least what mediatord saw
 * (from its grant, or from the latest other completion after it, to the
 * report), less DISPATCHER_CHARGE_SLACK_NS. A report far below what
 * mediatord saw marks its client as under-reporting (struct client_ids).
 */
static uint64_t observed_charge(struct dispatcher *d, uint32_t client, const struct outstanding *o,
				const struct wire_done *done, uint64_t now_ns)
{
	struct client_ids *ids = ids_of(d, client, false);
	/* (Groups run after a revocation ran beside the revoked one, not before it.) */
	uint64_t start =
	    o->revoked || o->seen_start_ns > d->last_done_ns ? o->seen_start_ns : d->last_done_ns;
	uint64_t seen = now_ns > start ? now_ns - start : 0;
	uint64_t measured = done->measured_ns;

	if (!ids)
		return measured;
	ids->completed++;

	/* Over its last DISPATCHER_REPORT_WINDOW groups or so: one report's lag is not a lie. */
	ids->seen_sum = ids->seen_sum * (1.0 - 1.0 / DISPATCHER_REPORT_WINDOW) + (double)seen;
	ids->measured_sum =
	    ids->measured_sum * (1.0 - 1.0 / DISPATCHER_REPORT_WINDOW) + (double)measured;
	if (ids->seen_sum > 2.0 * ids->measured_sum + (double)DISPATCHER_SHORT_SLACK_NS) {
		double ratio =
		    ids->seen_sum / (ids->measured_sum > 1000.0 ? ids->measured_sum : 1000.0);

		if (ratio > ids->inflate)
			ids->inflate =
			    ratio < DISPATCHER_INFLATE_MAX ? ratio : DISPATCHER_INFLATE_MAX;
		ids->underreports++;
		if (o->domain >= 0 && o->domain < (int)WIRE_BOARD_DOMAINS)
			d->underreported[o->domain]++;
		if (!(ids->underreports & (ids->underreports - 1)))
			log_warn(
			    "client %u reported %llu us for group %llu, which held its slot "
			    "%llu us: its requests are admitted at %.0f times their bounds, no "
			    "offer goes on its domain's board (%llu groups reported short)",
			    client, (unsigned long long)(measured / 1000),
			    (unsigned long long)done->id, (unsigned long long)(seen / 1000),
			    ids->inflate, (unsigned long long)ids->underreports);
	} else {
		ids->inflate = 1.0 + (ids->inflate - 1.0) * 0.9;
	}
	seen = seen > DISPATCHER_CHARGE_SLACK_NS ? seen - DISPATCHER_CHARGE_SLACK_NS : 0;
	return measured > seen ? measured : seen;
}

/* The work of dispatcher_request(), less releasing a refused claim. */
static int request(struct dispatcher *d, uint32_t client, int domain,
		   const struct wire_grant_request *req, uint64_t now_ns)
{
	struct client_ids *ids = ids_of(d, client, true);
	struct outstanding *o = NULL;
	bool claimed = req->flags & WIRE_GRANT_CLAIMED, late = false;
	int r;

	/* What the request says on its own is the wire's rule; its id is the dispatcher's. */
	if (wire_check_grant_request(req, NULL, 0) < 0 || !ids || req->id <= ids->last_id)
		return -EPROTO;
	if (claimed && !claim_valid(d, client, domain, req, now_ns) &&
	    !(late = late_claim(d, client, domain, req, now_ns)))
		return -EPROTO;
	ids->domain = domain;
	if (domain >= 0 && domain < d->n_domains)
		d->last_domain = domain;
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
	o->revoked = false;
	o->held = !claimed && suspended(d, client);
	o->domain = domain;
	o->predicted_ns = admitted(ids, req->predicted_ns);
	o->bound_ns = admitted(ids, req->bound_ns);
	/*
	 * Young to the scheduler, of unknown cost, also while its client
	 * under-reports: its word is no guide, as a new context's is not.
	 * Admitted on its true times only (admitted()), a worker that called
	 * every group 1 us ran 2,030 to 2,410 groups where the same client
	 * honest ran 818 to 1,437, its own bounds wide after a shader compile
	 * (test-compromised-worker, 2026-11-29).
	 */
	o->flags = sched_flags(req) |
		   (ids->completed < DISPATCHER_YOUNG_GROUPS || ids->inflate > DISPATCHER_DISTRUST
			? SCHED_YOUNG
			: 0);
	/* A claim started before its report; mediatord knows it since it found the word taken. */
	o->seen_start_ns =
	    d->claimed && d->claimer == client && d->claimed_at < now_ns ? d->claimed_at : now_ns;
	if (late)
		o->seen_start_ns = d->boards[domain].lapsed.claimed_at;
	if (o->held) {
		r = 0; /* its client is suspended: the scheduler gets it when it resumes */
	} else if (claimed) {
		if (!late) /* a late one's board was cleared; the current offer may be another's */
			clear_board(d);
		r = sched_claim(d->sched, o->sched_id, domain, o->predicted_ns, o->bound_ns,
				o->flags, now_ns);
	} else {
		r = sched_submit(d->sched, o->sched_id, domain, o->predicted_ns, o->bound_ns,
				 o->flags, now_ns);
	}
	if (r < 0) {
		/* Both hold SCHED_MAX_PENDING requests, and the request was checked. */
		disagree(d, "the scheduler refused request %llu of client %u: %s",
			 (unsigned long long)req->id, client, strerror(-r));
		return -ENOSPC;
	}
	o->used = true;
	if ((size_t)(o - d->out) >= d->top)
		d->top = (size_t)(o - d->out) + 1;
	o->granted = claimed;
	o->client = client;
	o->wire_id = req->id;
	o->ctx_id = req->ctx_id;
	run(d, now_ns);
	return 0;
}

int dispatcher_request(struct dispatcher *d, uint32_t client, int domain,
		       const struct wire_grant_request *req, uint64_t now_ns)
{
	int r = request(d, client, domain, req, now_ns);

	/* A refused claim costs its worker only: nobody waits for its report. */
	if (r < 0 && req->flags & WIRE_GRANT_CLAIMED)
		dispatcher_release_claim(d, client, now_ns);
	return r;
}

void dispatcher_release_claim(struct dispatcher *d, uint32_t client, uint64_t now_ns)
{
	if (drop_claim(d, client))
		run(d, now_ns);
}

int dispatcher_done(struct dispatcher *d, uint32_t client, const struct wire_done *done,
		    uint64_t now_ns, uint64_t *charged_ns)
{
	struct outstanding *o = find_wire(d, client, done->id);
	uint64_t charge;

	if (wire_check_done(done, now_ns, NULL, 0) < 0 || !o || !o->granted)
		return -EPROTO;
	charge = observed_charge(d, client, o, done, now_ns);
	d->last_done_ns = now_ns;
	if (o->revoked) {
		/*
		 * Late: charged the rest of its time (the revocation charged
		 * what it held until then); its client resumes.
		 */
		uint64_t extra = charge > o->charged_ns ? charge - o->charged_ns : 0;

		if (sched_charge_late(d->sched, o->domain, extra, done->end_ns) < 0)
			disagree(d, "client %u's late group %llu is of no domain", client,
				 (unsigned long long)done->id);
		if (charged_ns)
			*charged_ns = extra;
		drop(d, o);
		resume(d, client, now_ns);
		run(d, now_ns);
		return 0;
	}
	if (sched_complete(d->sched, o->sched_id, charge, done->end_ns) < 0)
		disagree(d, "client %u's group %llu completed, not in flight in the scheduler",
			 client, (unsigned long long)done->id);
	if (charged_ns)
		*charged_ns = charge;
	drop(d, o);
	run(d, now_ns);
	return 0;
}

bool dispatcher_distrusted(const struct dispatcher *d, uint32_t client)
{
	for (size_t i = 0; client && i < d->ids_top; i++) {
		if (d->ids[i].client == client)
			return d->ids[i].inflate > DISPATCHER_DISTRUST;
	}
	return false;
}

bool dispatcher_suspended(const struct dispatcher *d, uint32_t client)
{
	return client && suspended(d, client);
}

void dispatcher_tick(struct dispatcher *d, uint64_t now_ns)
{
	run(d, now_ns);
}

bool dispatcher_expect_frames(struct dispatcher *d, int domain, uint64_t now_ns)
{
	if (!sched_expect_frames(d->sched, domain, now_ns))
		return false;
	/* The standing offer's bounds did not keep room for such a frame. */
	withdraw(d, now_ns);
	run(d, now_ns);
	return true;
}

void dispatcher_forget(struct dispatcher *d, uint32_t client, uint64_t now_ns)
{
	if (forget(d, client, now_ns))
		run(d, now_ns);
}

int dispatcher_set_params(struct dispatcher *d, const struct sched_params *params)
{
	return sched_set_params(d->sched, params);
}

void dispatcher_get_params(const struct dispatcher *d, struct sched_params *out)
{
	sched_get_params(d->sched, out);
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
	int r;

	sched_advance(d->sched, now_ns);
	r = sched_domain_stats(d->sched, domain, out);
	if (r == 0 && domain >= 0 && domain < (int)WIRE_BOARD_DOMAINS)
		out->underreported = d->underreported[domain];
	return r;
}
