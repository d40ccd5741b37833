// SPDX-License-Identifier: MIT
/*
 * Tests of the dispatcher's grant board (dispatcher.h, wire.h): the trust
 * boundary with the workers, which may be compromised. A worker takes the
 * board's offer by one compare-and-swap on shared memory and then reports
 * its claim; mediatord checks the claim against the offer. Every field of
 * a claimed request that can be wrong is refused, and a refused claim
 * costs only its worker: the others are served at once, without waiting
 * for the refused worker to be stopped and forgotten.
 *
 * The dispatcher under test is a real one on a real scheduler, with two
 * domains: "cluster" (safety, index 0) and "infotainment" (normal and
 * strict, 8 ms per period, index 1). Workers are played here: they write
 * the board as a worker does (mediator_link.c) and call
 * dispatcher_request() and dispatcher_done() as mediatord does for their
 * messages. Times are a fake clock from T0; no timer ever runs: the
 * tests call dispatcher_tick() where the timer would fire.
 *
 * The grant watchdog: a granted group whose completion does not come by
 * its deadline (the config's defaults: max(4 x bound, bound + 50 ms,
 * 200 ms)) is revoked, the slot goes to the cluster's waiting group at
 * once and its client is suspended until its late completion comes (then
 * charged the rest of its measured time); when that has not come
 * watchdog_kill_us after the revocation, its worker is reported for
 * killing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "config/config.h"
#include "daemon/dispatcher.h"
#include "common/loop.h"
#include "common/util.h"
#include "common/wire.h"

#define US NSEC_PER_USEC
#define MS (1000 * US)
#define T0 (100 * NSEC_PER_SEC)

#define CLUSTER 0
#define IVI	1
/* Clients (mediatord's client ids): two infotainment workers and a cluster worker. */
#define FIRST  1
#define SECOND 2
#define THIRD  3

static const char config_text[] =
    "[mediator]\n"
    "control_socket = /nonexistent/control.sock\n"
    "policy = budget\n"
    "max_inflight = 1\n"
    /* the watchdog's limits alone (test-scheduler has the allowances) */
    "watchdog_normal_cap_us = 0\n"
    "[domain cluster]\n"
    "class = safety\n"
    "period_us = 16667\n"
    "budget_us = 4000\n"
    "vtest_socket = /nonexistent/cluster.vtest\n"
    "[domain infotainment]\n"
    "class = normal\n"
    "period_us = 16667\n"
    "budget_us = 8000\n"
    "strict = true\n"
    "vtest_socket = /nonexistent/ivi.vtest\n";

/* A grant the dispatcher sent. */
struct sent {
	uint32_t client;
	uint64_t id;
	uint32_t verdict;
};

struct fixture {
	struct dispatcher_revoked revoked[4];
	size_t n_revoked;
	struct loop *loop;
	struct dispatcher *d;
	struct wire_board *boards[2]; /* each domain's, as its workers map it */
	struct sent sent[64];
	size_t n_sent;
	uint64_t next_id[8]; /* each client's last request id */
	uint64_t kill_later; /* what record_revoke() answers a kill stage with */
};

static int record_grant(void *data, uint32_t client, const struct wire_grant *grant)
{
	struct fixture *f = data;

	assert_true(f->n_sent < sizeof(f->sent) / sizeof(f->sent[0]));
	f->sent[f->n_sent++] = (struct sent){client, grant->id, grant->verdict};
	return 0;
}

static uint64_t record_revoke(void *data, const struct dispatcher_revoked *r)
{
	struct fixture *f = data;

	assert_true(f->n_revoked < sizeof(f->revoked) / sizeof(f->revoked[0]));
	f->revoked[f->n_revoked++] = *r;
	return r->kill ? f->kill_later : 0;
}

static int setup_with(void **state, const char *text)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct mediator_config cfg;
	char err[256];

	assert_non_null(f);
	assert_int_equal(config_parse_string(&cfg, "test", text, err, sizeof(err)), 0);
	f->loop = loop_create();
	assert_non_null(f->loop);
	f->d = dispatcher_create(f->loop, &cfg, T0, record_grant, f, err, sizeof(err));
	assert_non_null(f->d);
	dispatcher_set_revoke(f->d, record_revoke, f);
	for (int i = 0; i < 2; i++) {
		f->boards[i] = mmap(NULL, sizeof(struct wire_board), PROT_READ | PROT_WRITE,
				    MAP_SHARED, dispatcher_board_fd(f->d, i), 0);
		assert_true(f->boards[i] != MAP_FAILED);
		assert_int_equal(f->boards[i]->magic, WIRE_BOARD_MAGIC);
		assert_int_equal(f->boards[i]->domains, 2);
	}
	/* Each domain its own board; none for a domain that is not. */
	assert_int_not_equal(dispatcher_board_fd(f->d, 0), dispatcher_board_fd(f->d, 1));
	assert_int_equal(dispatcher_board_fd(f->d, 2), -1);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, config_text);
}

/* The same with watchdog_kill_us = 0: a revoked group's worker is never killed. */
static int setup_never_kill(void **state)
{
	static const char head[] = "[mediator]\n";
	char text[sizeof(config_text) + 64];

	snprintf(text, sizeof(text), "%swatchdog_kill_us = 0\n%s", head,
		 config_text + strlen(head));
	return setup_with(state, text);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	/* Whatever the workers did, no invariant of mediatord's broke. */
	for (unsigned i = 0; i < DISPATCHER_INVARIANTS; i++) {
		if (dispatcher_invariant_violations(f->d, i)) {
			print_error("invariant %s broken\n", dispatcher_invariant_name(i));
			fail();
		}
	}
	for (int i = 0; i < 2; i++)
		munmap(f->boards[i], sizeof(struct wire_board));
	dispatcher_destroy(f->d);
	loop_destroy(f->loop);
	free(f);
	return 0;
}

/* A request of @client's next id asking for a group of @bound_ns (predicted half). */
static struct wire_grant_request request_of(struct fixture *f, uint32_t client, uint64_t bound_ns)
{
	struct wire_grant_request r = {.hdr = {WIRE_GRANT_REQUEST, sizeof(r)}};

	r.id = ++f->next_id[client];
	r.predicted_ns = bound_ns / 2;
	r.bound_ns = bound_ns;
	return r;
}

/* @client of @domain asks for a group of @bound_ns at @now_ns; returns what the dispatcher says. */
static int ask(struct fixture *f, uint32_t client, int domain, uint64_t bound_ns, uint64_t now_ns)
{
	struct wire_grant_request r = request_of(f, client, bound_ns);

	return dispatcher_request(f->d, client, domain, &r, now_ns);
}

/* True when the last grant sent went to @client's last request, granted. */
static bool granted_last(struct fixture *f, uint32_t client)
{
	const struct sent *s = f->n_sent ? &f->sent[f->n_sent - 1] : NULL;

	return s && s->client == client && s->id == f->next_id[client] &&
	       s->verdict == WIRE_GRANTED;
}

/*
 * @client's worker reports group @id, which ended at @end_ns, at @now_ns:
 * it measured 4 ms (an honest worker's measure is what mediatord saw, the
 * report's lag aside: none of these groups was granted more than 4 ms
 * before its end).
 */
static void complete(struct fixture *f, uint32_t client, uint64_t id, uint64_t end_ns,
		     uint64_t now_ns)
{
	struct wire_done done = {
	    .hdr = {WIRE_DONE, sizeof(done)}, .id = id, .measured_ns = 4 * MS, .end_ns = end_ns};

	assert_int_equal(dispatcher_done(f->d, client, &done, now_ns, NULL), 0);
}

/* The domain of each client of these tests. */
static int domain_of(uint32_t client)
{
	return client == THIRD ? CLUSTER : IVI;
}

/* The board @client's worker maps: its domain's. */
static struct wire_board *board_of(struct fixture *f, uint32_t client)
{
	return f->boards[domain_of(client)];
}

/* The offer word of the board an offer stands (or was taken) on; else infotainment's. */
static uint64_t board_word(struct fixture *f)
{
	uint64_t cluster = atomic_load(&f->boards[CLUSTER]->offer);

	if (WIRE_OFFER_STATE(cluster) != WIRE_OFFER_NONE)
		return cluster;
	return atomic_load(&f->boards[IVI]->offer);
}

/*
 * What a worker of @client does to take the offer: one compare-and-swap
 * of the word it read, OFFERED -> CLAIMED with its client id. True when
 * it took it.
 */
static bool take_offer(struct fixture *f, uint32_t client)
{
	struct wire_board *b = board_of(f, client);
	uint64_t word = atomic_load(&b->offer);

	if (WIRE_OFFER_STATE(word) != WIRE_OFFER_OFFERED)
		return false;
	return atomic_compare_exchange_strong(
	    &b->offer, &word, WIRE_OFFER(WIRE_OFFER_GEN(word), WIRE_OFFER_CLAIMED, client));
}

/* The request an honest worker of @client sends after taking the offer at @claimed_ns. */
static struct wire_grant_request claim_of(struct fixture *f, uint32_t client, uint64_t bound_ns,
					  uint64_t claimed_ns)
{
	struct wire_grant_request r = request_of(f, client, bound_ns);

	r.flags = WIRE_GRANT_CLAIMED;
	r.offer_gen = WIRE_OFFER_GEN(board_word(f));
	r.claimed_ns = claimed_ns;
	return r;
}

static struct sched_domain_stats stats_of(struct fixture *f, int domain, uint64_t now_ns)
{
	struct sched_domain_stats st;

	assert_int_equal(dispatcher_stats(f->d, domain, now_ns, &st), 0);
	return st;
}

/*
 * A free offer standing for anyone, made at T0 + 5 ms: FIRST's group was
 * granted at T0 and completed at T0 + 4 ms, reported at T0 + 5 ms after
 * its offer had run out. It stands until T0 + 7 ms; infotainment may
 * claim up to its strict budget's rest, IVI_OFFERED: 8 ms less the 4.9 ms
 * charged for FIRST's group (what mediatord saw, grant to report, less
 * the report's slack of 0.1 ms; FIRST measured 4 ms).
 */
#define IVI_OFFERED (3 * MS + 100 * 1000)
static void free_offer_at_t0_plus_5ms(struct fixture *f)
{
	assert_int_equal(ask(f, FIRST, IVI, 1 * MS, T0), 0);
	assert_true(granted_last(f, FIRST));
	complete(f, FIRST, f->next_id[FIRST], T0 + 4 * MS, T0 + 5 * MS);
	assert_int_equal(WIRE_OFFER_STATE(board_word(f)), WIRE_OFFER_OFFERED);
	assert_int_equal(WIRE_OFFER_CLIENT(board_word(f)), 0);
	/* On infotainment's board, the domain that asked last; the cluster's has none. */
	assert_int_equal(WIRE_OFFER_STATE(atomic_load(&f->boards[IVI]->offer)), WIRE_OFFER_OFFERED);
	assert_int_equal(WIRE_OFFER_STATE(atomic_load(&f->boards[CLUSTER]->offer)),
			 WIRE_OFFER_NONE);
	assert_int_equal(atomic_load(&f->boards[IVI]->valid_until_ns), T0 + 7 * MS);
	assert_int_equal(atomic_load(&f->boards[IVI]->max_bound_ns[IVI]), IVI_OFFERED);
}

static void a_worker_that_took_the_offer_runs_without_a_round_trip(void **state)
{
	struct fixture *f = *state;
	struct wire_grant_request r;
	size_t sent;

	free_offer_at_t0_plus_5ms(f);
	sent = f->n_sent;
	assert_true(take_offer(f, SECOND));
	r = claim_of(f, SECOND, IVI_OFFERED, T0 + 6 * MS);
	assert_int_equal(dispatcher_request(f->d, SECOND, IVI, &r, T0 + 6 * MS), 0);
	/* No answer is sent: the group is on the GPU and the scheduler knows it. */
	assert_int_equal(f->n_sent, sent);
	assert_int_equal(stats_of(f, IVI, T0 + 6 * MS).inflight, 1);
	/* The taken offer is gone; the slot is offered to SECOND for after its group. */
	assert_int_equal(WIRE_OFFER_GEN(board_word(f)), r.offer_gen + 1);
	assert_int_equal(WIRE_OFFER_STATE(board_word(f)), WIRE_OFFER_OFFERED);
	assert_int_equal(WIRE_OFFER_CLIENT(board_word(f)), SECOND);
	complete(f, SECOND, r.id, T0 + 7 * MS, T0 + 7 * MS);
	assert_int_equal(stats_of(f, IVI, T0 + 7 * MS).inflight, 0);
}

/* How a case spoils a claim: the board before it is sent, and the request. */
struct claim_case {
	const char *what;
	bool take;	       /* the worker swapped the board's word to CLAIMED first */
	uint32_t taken_by;     /* ... naming this client (0: itself) */
	int domain;	       /* the claimer's domain */
	uint64_t bound_ns;     /* its bound (0: 1 ms) */
	uint64_t predicted_ns; /* its prediction (0: half its bound) */
	int64_t id_step;       /* its id after its last (0: the next) */
	uint32_t flags;	       /* more flags than WIRE_GRANT_CLAIMED */
	int64_t gen_step;      /* its offer_gen from the standing one */
	int64_t claimed_at;    /* when it says it took it, from T0 + 6 ms */
	int64_t now_at;	       /* when its claim arrives, from T0 + 6 ms */
	bool twice;	       /* claimed once already, honestly */
	bool ok;
};

static const struct claim_case claim_cases[] = {
    {"the offer as it stands", .take = true, .domain = IVI, .ok = true},
    {"the most it was offered, to the nanosecond", .take = true, .domain = IVI,
     .bound_ns = IVI_OFFERED, .ok = true},
    {"a bound above what its domain was offered", .take = true, .domain = IVI,
     .bound_ns = IVI_OFFERED + 1},
    {"a bound of 0 (unknown cost)", .take = true, .domain = IVI, .bound_ns = 1, .predicted_ns = 2},
    {"a bound below its prediction", .take = true, .domain = IVI, .bound_ns = 2 * MS,
     .predicted_ns = 3 * MS},
    {"a bound above an hour (the cluster is offered any)", .take = true, .domain = CLUSTER,
     .bound_ns = 3601ull * NSEC_PER_SEC},
    {"an id that is not above its last", .take = true, .domain = IVI, .id_step = -1},
    {"an unknown flag", .take = true, .domain = IVI, .flags = 1u << 7},
    {"a young group (its bound is not learned)", .take = true, .domain = IVI,
     .flags = WIRE_GRANT_YOUNG},
    {"an offer generation gone by", .take = true, .domain = IVI, .gen_step = -1},
    {"an offer generation not made yet", .take = true, .domain = IVI, .gen_step = 1},
    {"taken before the offer was made", .take = true, .domain = IVI,
     .claimed_at = -1 * (int64_t)MS - 1},
    {"taken when the offer had run out", .take = true, .domain = IVI, .claimed_at = 1 * (int64_t)MS,
     .now_at = 1 * (int64_t)MS + 1},
    {"taken in the future", .take = true, .domain = IVI, .claimed_at = 1},
    {"an offer it never took (the word still says offered)", .domain = IVI},
    {"an offer another worker took", .take = true, .taken_by = FIRST, .domain = IVI},
    {"an offer on another domain's board", .take = true, .domain = CLUSTER},
    {"the same offer twice", .take = true, .domain = IVI, .twice = true},
    {"a domain out of range", .take = true, .domain = 2},
    {"a negative domain", .take = true, .domain = -1},
};

/*
 * Each case: SECOND (infotainment) sends a claim spoiled as the case says.
 * A valid one is in flight; a refused one is refused with -EPROTO, leaves
 * nothing in the scheduler, and costs nobody else: THIRD's cluster group
 * is granted at once, SECOND not yet forgotten (or, where the board says
 * THIRD took the offer, THIRD's honest claim is taken). Then SECOND is
 * forgotten as mediatord does once its worker was stopped.
 */
static void every_wrong_field_of_a_claim_is_refused_and_costs_only_its_worker(void **state)
{
	for (size_t k = 0; k < sizeof(claim_cases) / sizeof(claim_cases[0]); k++) {
		const struct claim_case *c = &claim_cases[k];
		const uint64_t now = (uint64_t)((int64_t)(T0 + 6 * MS) + c->now_at);
		struct wire_grant_request r;
		void *fx;
		struct fixture *f;
		int rc;

		print_message("claim: %s\n", c->what);
		setup(&fx);
		f = fx;
		free_offer_at_t0_plus_5ms(f);
		if (c->twice) {
			assert_true(take_offer(f, SECOND));
			r = claim_of(f, SECOND, 1 * MS, now);
			assert_int_equal(dispatcher_request(f->d, SECOND, IVI, &r, now), 0);
			complete(f, SECOND, r.id, now, now);
		}
		if (c->take && !c->twice)
			assert_true(take_offer(f, c->taken_by ? c->taken_by : SECOND));
		if (c->twice) /* the old generation's word, written back by the worker */
			atomic_store(&f->boards[IVI]->offer,
				     WIRE_OFFER(r.offer_gen, WIRE_OFFER_CLAIMED, SECOND));
		r = claim_of(f, SECOND, c->bound_ns ? c->bound_ns : 1 * MS,
			     (uint64_t)((int64_t)(T0 + 6 * MS) + c->claimed_at));
		if (c->predicted_ns)
			r.predicted_ns = c->predicted_ns;
		if (c->bound_ns == 1) /* "a bound of 0" */
			r.bound_ns = r.predicted_ns = 0;
		r.id = (uint64_t)((int64_t)r.id + c->id_step);
		r.flags |= c->flags;
		r.offer_gen = (uint32_t)((int64_t)r.offer_gen + c->gen_step);

		rc = dispatcher_request(f->d, SECOND, c->domain, &r, now);
		if (c->ok) {
			assert_int_equal(rc, 0);
			assert_int_equal(stats_of(f, IVI, now).inflight, 1);
		} else {
			if (rc != -EPROTO) {
				print_error("claim with %s: %d, not -EPROTO\n", c->what, rc);
				fail();
			}
			/* Nothing of it reached the scheduler. */
			assert_int_equal(stats_of(f, IVI, now).inflight, 0);
			assert_int_equal(stats_of(f, IVI, now).pending, 0);
			/* Nobody waits for SECOND to be stopped. */
			if (c->taken_by) {
				r = claim_of(f, c->taken_by, 1 * MS, now);
				assert_int_equal(dispatcher_request(f->d, c->taken_by,
								    domain_of(c->taken_by), &r,
								    now),
						 0);
				assert_int_equal(stats_of(f, domain_of(c->taken_by), now).inflight,
						 1);
			} else {
				assert_int_equal(ask(f, THIRD, CLUSTER, 1 * MS, now), 0);
				assert_true(granted_last(f, THIRD));
			}
		}
		dispatcher_forget(f->d, SECOND, now + 1);
		dispatcher_forget(f->d, THIRD, now + 1);
		dispatcher_forget(f->d, FIRST, now + 1);
		assert_int_equal(stats_of(f, CLUSTER, now + 1).inflight, 0);
		assert_int_equal(stats_of(f, IVI, now + 1).inflight, 0);
		teardown(&fx);
	}
}

/*
 * While only FIRST's groups are in flight, the slot they hold is offered
 * to FIRST for its next group, for after their completions: another
 * worker may not take it, nor FIRST before its completions came.
 */
static void a_reserved_offer_is_for_its_client_after_its_completions(void **state)
{
	struct fixture *f = *state;
	struct wire_grant_request r;

	assert_int_equal(ask(f, FIRST, IVI, 1 * MS, T0), 0);
	assert_true(granted_last(f, FIRST));
	assert_int_equal(WIRE_OFFER_STATE(board_word(f)), WIRE_OFFER_OFFERED);
	assert_int_equal(WIRE_OFFER_CLIENT(board_word(f)), FIRST);

	/* SECOND swaps the word to its own name: refused, and the offer is FIRST's again. */
	assert_true(atomic_compare_exchange_strong(
	    &f->boards[IVI]->offer, &(uint64_t){board_word(f)},
	    WIRE_OFFER(WIRE_OFFER_GEN(board_word(f)), WIRE_OFFER_CLAIMED, SECOND)));
	r = claim_of(f, SECOND, 1 * MS, T0 + 1);
	assert_int_equal(dispatcher_request(f->d, SECOND, IVI, &r, T0 + 1), -EPROTO);
	assert_int_equal(WIRE_OFFER_CLIENT(board_word(f)), FIRST);
	assert_int_equal(WIRE_OFFER_STATE(board_word(f)), WIRE_OFFER_OFFERED);

	/* FIRST takes it with its group still in flight: refused. */
	assert_true(take_offer(f, FIRST));
	r = claim_of(f, FIRST, 1 * MS, T0 + 2);
	assert_int_equal(dispatcher_request(f->d, FIRST, IVI, &r, T0 + 2), -EPROTO);
	dispatcher_forget(f->d, SECOND, T0 + 3);

	/* FIRST is stopped; THIRD's group, once completed, takes the offer kept for THIRD. */
	dispatcher_forget(f->d, FIRST, T0 + 3);
	assert_int_equal(ask(f, THIRD, CLUSTER, 1 * MS, T0 + 4), 0);
	assert_true(granted_last(f, THIRD));
	assert_int_equal(WIRE_OFFER_CLIENT(board_word(f)), THIRD);
	complete(f, THIRD, f->next_id[THIRD], T0 + 1 * MS, T0 + 1 * MS);
	assert_true(take_offer(f, THIRD));
	r = claim_of(f, THIRD, 1 * MS, T0 + 1 * MS + 1);
	assert_int_equal(dispatcher_request(f->d, THIRD, CLUSTER, &r, T0 + 1 * MS + 1), 0);
	assert_int_equal(stats_of(f, CLUSTER, T0 + 1 * MS + 1).inflight, 1);
}

/*
 * A context of the cluster created while an offer stands: its frame may
 * come at any moment, which the offer did not keep room for. The offer is
 * withdrawn (a claim of it would be refused) and made again with room.
 */
static void a_safety_context_created_withdraws_the_standing_offer(void **state)
{
	struct fixture *f = *state;
	uint64_t word, now = T0 + 5 * MS + 100 * 1000;

	free_offer_at_t0_plus_5ms(f);
	word = board_word(f);
	assert_false(dispatcher_expect_frames(f->d, IVI, now));
	assert_int_equal(board_word(f), word);
	assert_true(dispatcher_expect_frames(f->d, CLUSTER, now));
	assert_int_not_equal(WIRE_OFFER_GEN(board_word(f)), WIRE_OFFER_GEN(word));
	assert_true(atomic_load(&f->boards[IVI]->max_bound_ns[IVI]) <= 16667 * 1000 - 4 * MS);
}

/* A worker that took the offer and died before reporting it holds up nobody. */
static void a_claimer_that_goes_away_unreported_frees_the_board(void **state)
{
	struct fixture *f = *state;

	free_offer_at_t0_plus_5ms(f);
	assert_true(take_offer(f, SECOND));
	/* THIRD asks: the dispatcher finds the offer taken and waits for SECOND's report. */
	assert_int_equal(ask(f, THIRD, CLUSTER, 1 * MS, T0 + 6 * MS), 0);
	assert_false(granted_last(f, THIRD));
	dispatcher_forget(f->d, SECOND, T0 + 6 * MS + 1);
	assert_true(granted_last(f, THIRD));
}

/* A claim when no offer stands (a request waits) is refused, whatever the board's word says. */
static void a_claim_when_no_offer_stands_is_refused(void **state)
{
	struct fixture *f = *state;
	struct wire_grant_request r;

	free_offer_at_t0_plus_5ms(f);
	assert_int_equal(ask(f, FIRST, IVI, 1 * MS, T0 + 6 * MS), 0);
	assert_true(granted_last(f, FIRST));
	assert_int_equal(ask(f, THIRD, CLUSTER, 1 * MS, T0 + 6 * MS), 0);
	assert_false(granted_last(f, THIRD)); /* it waits for the slot */
	assert_int_equal(WIRE_OFFER_STATE(board_word(f)), WIRE_OFFER_NONE);
	/* SECOND writes a claim into the word itself. */
	atomic_store(&f->boards[IVI]->offer,
		     WIRE_OFFER(WIRE_OFFER_GEN(board_word(f)), WIRE_OFFER_CLAIMED, SECOND));
	r = claim_of(f, SECOND, 1 * MS, T0 + 6 * MS);
	assert_int_equal(dispatcher_request(f->d, SECOND, IVI, &r, T0 + 6 * MS), -EPROTO);
	complete(f, FIRST, f->next_id[FIRST], T0 + 7 * MS, T0 + 7 * MS);
	assert_true(granted_last(f, THIRD));
}

/*
 * What a compromised infotainment worker writes on its board (the review's
 * forgery: huge bounds, a NONE word turned OFFERED of a later generation)
 * reaches no cluster worker: the cluster's board is another page. THIRD's
 * honest claim of the offer reserved for it on the cluster's board is
 * taken; SECOND's claim of the forged offer costs SECOND only.
 */
static void a_forged_board_reaches_no_other_domain(void **state)
{
	struct fixture *f = *state;
	struct wire_board *ivi = f->boards[IVI];
	struct wire_grant_request r;
	uint64_t gen;

	assert_int_equal(ask(f, THIRD, CLUSTER, 1 * MS, T0), 0);
	assert_true(granted_last(f, THIRD));
	/* The slot THIRD holds is offered to THIRD, on the cluster's board. */
	assert_int_equal(WIRE_OFFER_STATE(atomic_load(&f->boards[CLUSTER]->offer)),
			 WIRE_OFFER_OFFERED);
	gen = WIRE_OFFER_GEN(atomic_load(&f->boards[CLUSTER]->offer));
	/* SECOND forges its own board. */
	for (int i = 0; i < 2; i++)
		atomic_store(&ivi->max_bound_ns[i], UINT64_MAX / 2);
	atomic_store(&ivi->valid_until_ns, UINT64_MAX / 2);
	atomic_store(&ivi->offer, WIRE_OFFER(gen + 5, WIRE_OFFER_OFFERED, 0));
	assert_int_not_equal(atomic_load(&f->boards[CLUSTER]->valid_until_ns), UINT64_MAX / 2);
	assert_int_equal(WIRE_OFFER_GEN(atomic_load(&f->boards[CLUSTER]->offer)), gen);
	/* THIRD's group completes; its worker takes its offer and reports it. */
	complete(f, THIRD, f->next_id[THIRD], T0 + 1 * MS, T0 + 1 * MS);
	assert_true(take_offer(f, THIRD));
	r = claim_of(f, THIRD, 1 * MS, T0 + 1 * MS + 1);
	r.offer_gen = (uint32_t)WIRE_OFFER_GEN(atomic_load(&f->boards[CLUSTER]->offer));
	assert_int_equal(dispatcher_request(f->d, THIRD, CLUSTER, &r, T0 + 1 * MS + 1), 0);
	assert_int_equal(stats_of(f, CLUSTER, T0 + 1 * MS + 1).inflight, 1);
	/* SECOND takes its forged offer: refused. */
	assert_true(take_offer(f, SECOND));
	r = claim_of(f, SECOND, 1 * MS, T0 + 1 * MS + 2);
	r.offer_gen = (uint32_t)(gen + 5);
	assert_int_equal(dispatcher_request(f->d, SECOND, IVI, &r, T0 + 1 * MS + 2), -EPROTO);
	assert_int_equal(stats_of(f, IVI, T0 + 1 * MS + 2).inflight, 0);
	assert_int_equal(stats_of(f, CLUSTER, T0 + 1 * MS + 2).inflight, 1);
}

/*
 * A claim never reported holds the others for its domain's bound on the
 * offer, at least DISPATCHER_CLAIM_REPORT_NS (10 ms; here the bound is
 * IVI_OFFERED, 3.1 ms) and at most DISPATCHER_CLAIM_TIMEOUT_NS (50 ms);
 * then its domain's board is off (its groups ask from then on) and the
 * others' are not.
 */
static void an_unreported_claim_switches_its_domains_board_off(void **state)
{
	struct fixture *f = *state;
	uint64_t t = T0 + 6 * MS;

	free_offer_at_t0_plus_5ms(f);
	assert_true(take_offer(f, SECOND));
	assert_int_equal(ask(f, THIRD, CLUSTER, 1 * MS, t), 0);
	assert_false(granted_last(f, THIRD));
	dispatcher_tick(f->d, t + 10 * MS);
	assert_false(granted_last(f, THIRD));
	dispatcher_tick(f->d, t + 10 * MS + 1);
	assert_true(granted_last(f, THIRD));
	/* The cluster's board still gets offers: the one THIRD's slot is kept for. */
	assert_int_equal(WIRE_OFFER_STATE(atomic_load(&f->boards[CLUSTER]->offer)),
			 WIRE_OFFER_OFFERED);
	complete(f, THIRD, f->next_id[THIRD], t + 11 * MS, t + 11 * MS);
	/*
	 * The cluster's next frame at its next release; at the gap after it,
	 * infotainment asks and is served (its group's cost unknown yet: it
	 * starts at a gap's start); no offer goes on its board any more.
	 */
	assert_int_equal(ask(f, THIRD, CLUSTER, 1 * MS, t + 16667 * US), 0);
	assert_true(granted_last(f, THIRD));
	complete(f, THIRD, f->next_id[THIRD], t + 17667 * US, t + 17667 * US);
	assert_int_equal(ask(f, FIRST, IVI, 1 * MS, t + 18 * MS), 0);
	assert_true(granted_last(f, FIRST));
	complete(f, FIRST, f->next_id[FIRST], t + 19 * MS, t + 19 * MS);
	assert_int_equal(WIRE_OFFER_STATE(atomic_load(&f->boards[IVI]->offer)), WIRE_OFFER_NONE);
	dispatcher_forget(f->d, SECOND, t + 20 * MS);
}

/*
 * A claim reported after mediatord gave up on it (an honest worker
 * descheduled between its compare-and-swap and its report, on a loaded
 * host) is taken late: its group runs already. Its worker is not refused,
 * its domain's board stays off, and the claim is taken once; one of
 * another offer, or of another client, is still refused.
 */
static void a_claim_reported_after_it_was_given_up_is_taken_late(void **state)
{
	struct fixture *f = *state;
	uint64_t t = T0 + 6 * MS;
	struct wire_grant_request r;

	free_offer_at_t0_plus_5ms(f);
	r = claim_of(f, SECOND, 1 * MS, t);
	assert_true(take_offer(f, SECOND));
	/* Found taken when the offer ran out (T0 + 7 ms); given up 10 ms later. */
	dispatcher_tick(f->d, t + 2 * MS);
	assert_int_equal(WIRE_OFFER_STATE(atomic_load(&f->boards[IVI]->offer)), WIRE_OFFER_CLAIMED);
	dispatcher_tick(f->d, t + 12 * MS + 1);
	assert_int_equal(WIRE_OFFER_STATE(atomic_load(&f->boards[IVI]->offer)), WIRE_OFFER_NONE);
	/* Another client with SECOND's claim, and the claim of another offer: refused. */
	{
		struct wire_grant_request other = r;

		other.id = ++f->next_id[THIRD];
		assert_int_equal(dispatcher_request(f->d, THIRD, IVI, &other, t + 14 * MS),
				 -EPROTO);
		other = r;
		other.offer_gen++;
		assert_int_equal(dispatcher_request(f->d, SECOND, IVI, &other, t + 14 * MS),
				 -EPROTO);
	}
	assert_int_equal(dispatcher_request(f->d, SECOND, IVI, &r, t + 14 * MS), 0);
	complete(f, SECOND, r.id, t + 15 * MS, t + 15 * MS);
	/* Once: the same claim again is refused. */
	r.id = ++f->next_id[SECOND];
	assert_int_equal(dispatcher_request(f->d, SECOND, IVI, &r, t + 16 * MS), -EPROTO);
	assert_int_equal(WIRE_OFFER_STATE(atomic_load(&f->boards[IVI]->offer)), WIRE_OFFER_NONE);
	dispatcher_forget(f->d, SECOND, t + 20 * MS);
}

/* Completions are checked too: of a group granted to this worker, not after now. */
static void a_completion_must_be_of_a_granted_group_and_not_in_the_future(void **state)
{
	struct fixture *f = *state;
	struct wire_done done = {.hdr = {WIRE_DONE, sizeof(done)}, .measured_ns = 1 * MS};

	assert_int_equal(ask(f, FIRST, IVI, 1 * MS, T0), 0);
	done.id = f->next_id[FIRST];
	done.end_ns = T0 + 2 * MS;
	assert_int_equal(dispatcher_done(f->d, FIRST, &done, T0 + 1 * MS, NULL), -EPROTO);
	done.end_ns = T0 + 1 * MS;
	assert_int_equal(dispatcher_done(f->d, SECOND, &done, T0 + 1 * MS, NULL), -EPROTO);
	done.id++;
	assert_int_equal(dispatcher_done(f->d, FIRST, &done, T0 + 1 * MS, NULL), -EPROTO);
	done.id--;
	assert_int_equal(dispatcher_done(f->d, FIRST, &done, T0 + 1 * MS, NULL), 0);
	assert_int_equal(dispatcher_done(f->d, FIRST, &done, T0 + 1 * MS, NULL), -EPROTO);
}

static void every_invariant_has_a_name_and_starts_unbroken(void **state)
{
	struct fixture *f = *state;
	bool agrees = false;

	for (unsigned i = 0; i < DISPATCHER_INVARIANTS; i++) {
		assert_non_null(dispatcher_invariant_name(i));
		assert_int_equal(dispatcher_invariant_violations(f->d, i), 0);
		agrees |= !strcmp(dispatcher_invariant_name(i), "dispatcher_agrees");
	}
	assert_true(agrees);
	assert_null(dispatcher_invariant_name(DISPATCHER_INVARIANTS));
}

/*
 * FIRST's group of context 7 (bound 5 ms: deadline 200 ms) is granted at
 * T0 and stalls; the cluster's group waits for the one slot. Revoked at
 * T0 + 200 ms: the cluster's group is granted in the same call.
 */
static void stall_and_revoke(struct fixture *f)
{
	struct wire_grant_request r = request_of(f, FIRST, 5 * MS);

	r.ctx_id = 7;
	assert_int_equal(dispatcher_request(f->d, FIRST, IVI, &r, T0), 0);
	assert_true(granted_last(f, FIRST));
	assert_int_equal(ask(f, THIRD, CLUSTER, 1 * MS, T0 + 1 * MS), 0);
	assert_false(granted_last(f, THIRD));
	dispatcher_tick(f->d, T0 + 200 * MS - 1);
	assert_int_equal(f->n_revoked, 0);
	assert_false(granted_last(f, THIRD));

	dispatcher_tick(f->d, T0 + 200 * MS);
	assert_int_equal(f->n_revoked, 1);
	assert_false(f->revoked[0].kill);
	assert_int_equal(f->revoked[0].client, FIRST);
	assert_int_equal(f->revoked[0].domain, IVI);
	assert_int_equal(f->revoked[0].ctx_id, 7);
	assert_int_equal(f->revoked[0].wire_id, 1);
	assert_int_equal(f->revoked[0].granted_ns, T0);
	assert_int_equal(f->revoked[0].bound_ns, 5 * MS);
	assert_int_equal(f->revoked[0].deadline_ns, T0 + 200 * MS);
	assert_int_equal(f->revoked[0].revoked_ns, T0 + 200 * MS);
	assert_true(granted_last(f, THIRD));
	assert_int_equal(stats_of(f, IVI, T0 + 200 * MS).revoked, 1);
	assert_int_equal(stats_of(f, CLUSTER, T0 + 200 * MS).revoked, 0);
	complete(f, THIRD, f->next_id[THIRD], T0 + 201 * MS, T0 + 202 * MS);
	/* The slot is free, but FIRST is suspended: its next request waits. */
	assert_int_equal(ask(f, FIRST, IVI, 1 * MS, T0 + 203 * MS), 0);
	assert_false(granted_last(f, FIRST));
	/* A second one while that waits is still a protocol error. */
	assert_int_equal(ask(f, FIRST, IVI, 1 * MS, T0 + 204 * MS), -EPROTO);
	f->next_id[FIRST]--;
	dispatcher_tick(f->d, T0 + 300 * MS);
	assert_false(granted_last(f, FIRST));
	assert_int_equal(f->revoked[0].kill, false);
	/* Others are not held up (the infotainment domain pays its debt first). */
	assert_int_equal(ask(f, THIRD, CLUSTER, 1 * MS, T0 + 301 * MS), 0);
	assert_true(granted_last(f, THIRD));
	complete(f, THIRD, f->next_id[THIRD], T0 + 302 * MS, T0 + 302 * MS);
	assert_false(granted_last(f, FIRST));
}

static void a_grant_held_past_its_deadline_is_revoked_and_its_client_suspended(void **state)
{
	struct fixture *f = *state;
	/* The stalled group was a 400 ms shader compile, not a stuck worker. */
	struct wire_done late = {.hdr = {WIRE_DONE, sizeof(late)},
				 .id = 1,
				 .measured_ns = 400 * MS,
				 .end_ns = T0 + 400 * MS};
	struct sched_domain_stats st;

	stall_and_revoke(f);
	/*
	 * Its late completion is accepted: charged what mediatord saw (401 ms
	 * less the report's slack, 0.1 ms) less the 200 ms charged, FIRST
	 * resumes; its held request is granted once its strict domain paid
	 * the 400 ms of debt (8 ms per 16.7 ms: by about T0 + 1040 ms).
	 */
	assert_int_equal(dispatcher_done(f->d, FIRST, &late, T0 + 401 * MS, NULL), 0);
	st = stats_of(f, IVI, T0 + 401 * MS);
	assert_int_equal(st.late_ns, 200 * MS + 900 * 1000);
	assert_int_equal(st.revoked, 1);
	assert_int_equal(st.underreported, 0);
	assert_true(st.debt_ns + st.used_ns > 200 * MS);
	assert_false(granted_last(f, FIRST));
	dispatcher_tick(f->d, T0 + 1100 * MS);
	assert_true(granted_last(f, FIRST));
	complete(f, FIRST, f->next_id[FIRST], T0 + 1101 * MS, T0 + 1101 * MS);
	assert_int_equal(ask(f, FIRST, IVI, 1 * MS, T0 + 1103 * MS), 0);
	assert_true(granted_last(f, FIRST));
	complete(f, FIRST, f->next_id[FIRST], T0 + 1104 * MS, T0 + 1104 * MS);
	/* Only once: the same completion again is not of a group in flight. */
	assert_int_equal(dispatcher_done(f->d, FIRST, &late, T0 + 1105 * MS, NULL), -EPROTO);
	/* No kill ever follows. */
	dispatcher_tick(f->d, T0 + 10 * NSEC_PER_SEC);
	assert_int_equal(f->n_revoked, 1);
}

/*
 * A late completion is charged on mediatord's clock: what the worker says
 * it measured (3 ms) is below what mediatord saw (grant to report, 1 s, less
 * the report's slack), so the domain pays that, less the 200 ms the
 * revocation charged, and the client is marked as under-reporting: its next
 * request is admitted on an inflated bound.
 */
static void a_late_completion_is_charged_on_mediatords_clock(void **state)
{
	struct fixture *f = *state;
	struct wire_done late = {.hdr = {WIRE_DONE, sizeof(late)},
				 .id = 1,
				 .measured_ns = 3 * MS,
				 .end_ns = T0 + 20 * MS};
	uint64_t charged = 0;

	stall_and_revoke(f);
	assert_int_equal(dispatcher_done(f->d, FIRST, &late, T0 + 1000 * MS, &charged), 0);
	assert_int_equal(charged, 1000 * MS - 100 * 1000 - 200 * MS);
	assert_int_equal(stats_of(f, IVI, T0 + 1000 * MS).late_ns, charged);
	assert_int_equal(stats_of(f, IVI, T0 + 1000 * MS).underreported, 1);
	assert_false(dispatcher_suspended(f->d, FIRST));
	dispatcher_forget(f->d, FIRST, T0 + 1001 * MS);
}

/*
 * A worker that reports its groups far shorter than mediatord sees them
 * (1 us for 30 ms: more than twice, by more than 20 ms) is charged what
 * mediatord saw, and its next requests are admitted on their bounds times
 * the ratio: a 1 us bound waits for room for 30 ms.
 */
static void a_worker_that_underreports_is_charged_and_admitted_on_what_mediatord_saw(void **state)
{
	struct fixture *f = *state;
	struct wire_grant_request r = request_of(f, FIRST, 1000);
	struct wire_done done = {.hdr = {WIRE_DONE, sizeof(done)}, .measured_ns = 1000};
	uint64_t charged = 0;

	assert_int_equal(dispatcher_request(f->d, FIRST, IVI, &r, T0), 0);
	assert_true(granted_last(f, FIRST));
	done.id = r.id;
	done.end_ns = T0 + 30 * MS;
	assert_int_equal(dispatcher_done(f->d, FIRST, &done, T0 + 30 * MS, &charged), 0);
	assert_int_equal(charged, 30 * MS - 100 * 1000);
	assert_int_equal(stats_of(f, IVI, T0 + 30 * MS).underreported, 1);
	/* Its domain's board gets no offer while it is distrusted. */
	assert_int_equal(WIRE_OFFER_STATE(atomic_load(&f->boards[IVI]->offer)), WIRE_OFFER_NONE);
	/* Its next 1 us group is admitted as a 30 ms one: more than infotainment's 8 ms budget. */
	r = request_of(f, FIRST, 1000);
	assert_int_equal(dispatcher_request(f->d, FIRST, IVI, &r, T0 + 31 * MS), 0);
	assert_false(granted_last(f, FIRST));
	/* An honest worker's group of the same bound is granted at once. */
	assert_int_equal(ask(f, SECOND, IVI, 1 * MS, T0 + 31 * MS), 0);
	dispatcher_forget(f->d, FIRST, T0 + 32 * MS);
	dispatcher_forget(f->d, SECOND, T0 + 32 * MS);
}

static void a_revoked_group_never_completed_has_its_worker_killed_at_the_kill_delay(void **state)
{
	struct fixture *f = *state;
	struct wire_done late = {.hdr = {WIRE_DONE, sizeof(late)},
				 .id = 1,
				 .measured_ns = 1 * MS,
				 .end_ns = T0 + 2300 * MS};

	stall_and_revoke(f);
	/* watchdog_kill_us = 2 s (the default) after the revocation, not before. */
	dispatcher_tick(f->d, T0 + 2200 * MS - 1);
	assert_int_equal(f->n_revoked, 1);
	dispatcher_tick(f->d, T0 + 2200 * MS);
	assert_int_equal(f->n_revoked, 2);
	assert_true(f->revoked[1].kill);
	assert_int_equal(f->revoked[1].client, FIRST);
	assert_int_equal(f->revoked[1].domain, IVI);
	assert_int_equal(f->revoked[1].ctx_id, 7);
	assert_int_equal(f->revoked[1].wire_id, 1);
	assert_int_equal(f->revoked[1].granted_ns, T0);
	assert_int_equal(f->revoked[1].revoked_ns, T0 + 200 * MS);
	/* FIRST is forgotten: what it still sends is not of a granted group. */
	assert_int_equal(dispatcher_done(f->d, FIRST, &late, T0 + 2300 * MS, NULL), -EPROTO);
	dispatcher_tick(f->d, T0 + 5000 * MS);
	assert_int_equal(f->n_revoked, 2);
	/* Its held request went with it: the slot is SECOND's. */
	assert_int_equal(ask(f, SECOND, IVI, 1 * MS, T0 + 5001 * MS), 0);
	assert_true(granted_last(f, SECOND));
	complete(f, SECOND, f->next_id[SECOND], T0 + 5002 * MS, T0 + 5002 * MS);
	dispatcher_forget(f->d, FIRST, T0 + 5003 * MS); /* its worker reaped: nothing left */
	assert_int_equal(f->n_revoked, 2);
}

/*
 * At the kill stage the callback may say "not yet" (its worker still
 * compiles): asked again at the time it gives, the client still
 * suspended; its late completion then resumes it.
 */
static void a_kill_stage_put_off_by_the_callback_is_asked_again(void **state)
{
	struct fixture *f = *state;
	struct wire_done late = {.hdr = {WIRE_DONE, sizeof(late)},
				 .id = 1,
				 .measured_ns = 2400 * MS,
				 .end_ns = T0 + 2450 * MS};

	stall_and_revoke(f);
	f->kill_later = T0 + 2400 * MS;
	dispatcher_tick(f->d, T0 + 2200 * MS);
	assert_int_equal(f->n_revoked, 2);
	assert_true(f->revoked[1].kill);
	assert_true(dispatcher_suspended(f->d, FIRST));
	dispatcher_tick(f->d, T0 + 2400 * MS - 1);
	assert_int_equal(f->n_revoked, 2);
	f->kill_later = T0 + 2600 * MS;
	dispatcher_tick(f->d, T0 + 2400 * MS);
	assert_int_equal(f->n_revoked, 3);
	assert_true(f->revoked[2].kill);
	assert_int_equal(dispatcher_done(f->d, FIRST, &late, T0 + 2500 * MS, NULL), 0);
	assert_false(dispatcher_suspended(f->d, FIRST));
	/* No kill stage left: its strict domain pays the 2.4 s back, its client lives. */
	dispatcher_tick(f->d, T0 + 5000 * MS);
	assert_int_equal(f->n_revoked, 3);
	dispatcher_forget(f->d, FIRST, T0 + 5001 * MS);
}

static void with_kill_delay_zero_a_revoked_worker_is_never_killed(void **state)
{
	struct fixture *f = *state;
	struct wire_done late = {.hdr = {WIRE_DONE, sizeof(late)},
				 .id = 1,
				 .measured_ns = 3 * MS,
				 .end_ns = T0 + 3601 * NSEC_PER_SEC};

	stall_and_revoke(f);
	dispatcher_tick(f->d, T0 + 3601 * NSEC_PER_SEC);
	assert_int_equal(f->n_revoked, 1);
	assert_false(granted_last(f, FIRST));
	assert_int_equal(dispatcher_done(f->d, FIRST, &late, T0 + 3601 * NSEC_PER_SEC, NULL), 0);
	/* It is resumed (its domain now owes the hour mediatord saw it hold). */
	assert_false(dispatcher_suspended(f->d, FIRST));
	dispatcher_forget(f->d, FIRST, T0 + 3602 * NSEC_PER_SEC);
}

static void a_suspended_client_that_goes_away_is_forgotten(void **state)
{
	struct fixture *f = *state;

	stall_and_revoke(f);
	dispatcher_forget(f->d, FIRST, T0 + 400 * MS);
	dispatcher_tick(f->d, T0 + 5000 * MS);
	assert_int_equal(f->n_revoked, 1);
	/* No client suspended any more: the board offers again. */
	assert_int_equal(WIRE_OFFER_STATE(board_word(f)), WIRE_OFFER_OFFERED);
}

static void a_group_that_completes_before_its_deadline_is_never_revoked(void **state)
{
	struct fixture *f = *state;

	/* Bound 7 ms: deadline 200 ms; its completion reaches mediatord just before. */
	assert_int_equal(ask(f, FIRST, IVI, 7 * MS, T0), 0);
	assert_true(granted_last(f, FIRST));
	dispatcher_tick(f->d, T0 + 199 * MS);
	assert_int_equal(f->n_revoked, 0);
	complete(f, FIRST, f->next_id[FIRST], T0 + 150 * MS, T0 + 199 * MS);
	dispatcher_tick(f->d, T0 + 2000 * MS);
	assert_int_equal(f->n_revoked, 0);
	assert_int_equal(stats_of(f, IVI, T0 + 2000 * MS).revoked, 0);
}

static void destroying_null_is_fine(void **state)
{
	dispatcher_destroy(NULL);
}

#define DISPATCHER_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    DISPATCHER_TEST(a_worker_that_took_the_offer_runs_without_a_round_trip),
	    cmocka_unit_test(every_wrong_field_of_a_claim_is_refused_and_costs_only_its_worker),
	    DISPATCHER_TEST(a_reserved_offer_is_for_its_client_after_its_completions),
	    DISPATCHER_TEST(a_claimer_that_goes_away_unreported_frees_the_board),
	    DISPATCHER_TEST(a_safety_context_created_withdraws_the_standing_offer),
	    DISPATCHER_TEST(a_claim_when_no_offer_stands_is_refused),
	    DISPATCHER_TEST(a_forged_board_reaches_no_other_domain),
	    DISPATCHER_TEST(an_unreported_claim_switches_its_domains_board_off),
	    DISPATCHER_TEST(a_claim_reported_after_it_was_given_up_is_taken_late),
	    DISPATCHER_TEST(a_completion_must_be_of_a_granted_group_and_not_in_the_future),
	    DISPATCHER_TEST(every_invariant_has_a_name_and_starts_unbroken),
	    DISPATCHER_TEST(a_grant_held_past_its_deadline_is_revoked_and_its_client_suspended),
	    DISPATCHER_TEST(a_late_completion_is_charged_on_mediatords_clock),
	    DISPATCHER_TEST(
		a_worker_that_underreports_is_charged_and_admitted_on_what_mediatord_saw),
	    DISPATCHER_TEST(
		a_revoked_group_never_completed_has_its_worker_killed_at_the_kill_delay),
	    DISPATCHER_TEST(a_kill_stage_put_off_by_the_callback_is_asked_again),
	    cmocka_unit_test_setup_teardown(with_kill_delay_zero_a_revoked_worker_is_never_killed,
					    setup_never_kill, teardown),
	    DISPATCHER_TEST(a_suspended_client_that_goes_away_is_forgotten),
	    DISPATCHER_TEST(a_group_that_completes_before_its_deadline_is_never_revoked),
	    cmocka_unit_test(destroying_null_is_fine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
