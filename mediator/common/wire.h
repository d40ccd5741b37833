// SPDX-License-Identifier: MIT
/*
 * The messages a worker process sends to mediatord over its record channel,
 * a SOCK_SEQPACKET socketpair created by mediatord before it starts the
 * worker (the worker's end is fd WIRE_WORKER_FD). One message per packet;
 * every message starts with struct wire_header. Integers are host-endian:
 * both ends are the same build on the same machine.
 *
 * mediatord does not trust these bytes blindly: a worker parses guest
 * bytes and may be compromised, so mediatord checks every message's type,
 * size, string termination and time ordering, and drops the worker's
 * connection on the first bad message. doc/protocols.md describes the
 * protocol as a whole.
 */
#ifndef MEDIATOR_WIRE_H
#define MEDIATOR_WIRE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* File descriptors the worker inherits from mediatord. */
#define WIRE_CLIENT_FD 3 /* the accepted client connection */
#define WIRE_WORKER_FD 4 /* the worker's end of the record channel */
#define WIRE_BOARD_FD  5 /* the grant board (struct wire_board), a memfd */
/* Most supplementary groups mediatord passes a worker to run with (--run-as). */
#define WIRE_RUN_AS_MAX_GROUPS 32

/*
 * A worker may send up to WIRE_MAX_BATCH struct wire_group back to back in
 * one packet, each with its own header; it flushes a batch when it is full
 * or WIRE_FLUSH_MS after its first record, so that mediatord wakes up
 * about once per batch rather than once per command group.
 */
#define WIRE_MAX_BATCH 16
#define WIRE_FLUSH_MS  10

#define WIRE_NAME_MAX  64
#define WIRE_MODEL_MAX 16
/*
 * The wire's room for libpredict's command classes (enum
 * predict_cmd_class) and feature coefficients (enum predict_feature):
 * fixed, so that the messages' sizes do not follow libpredict's
 * enums; both ends check at compile time that those fit.
 */
#define WIRE_CMD_CLASSES 16
#define WIRE_COEFS	 32
/*
 * How many of struct wire_model's coef a model fills at most: libpredict's
 * PF_COUNT (enum predict_feature). Its own value here so that common/
 * needs no libpredict; mediatord asserts at compile time that they agree.
 */
#define WIRE_FEATURES 20u
/*
 * struct wire_model's frag_preferred: libpredict's enum
 * predict_fragment_mode less AUTO (a context always prefers one of the
 * two); mediatord asserts at compile time that the values agree.
 */
#define WIRE_FRAGMENTS_BBOX    1u
#define WIRE_FRAGMENTS_HISTORY 2u
/*
 * Largest time a worker may report or ask for (a grant request's bound, a
 * completion's measured time): an hour. No command group runs that long
 * (the grant watchdog stops one far sooner), and sums of such times stay
 * far from overflowing 64 bits.
 */
#define WIRE_TIME_MAX_NS (3600ull * 1000000000ull)

enum wire_type {
	WIRE_HELLO = 1,	  /* worker -> mediatord, once, when the renderer is up */
	WIRE_CONTEXT = 2, /* worker -> mediatord, a guest context was created or destroyed */
	/* worker -> mediatord, one measured command group; may be batched (WIRE_MAX_BATCH) */
	WIRE_GROUP = 3,
	WIRE_CLIENT_INFO = 4,	/* worker -> mediatord, the client said who it is */
	WIRE_MODEL = 5,		/* worker -> mediatord, its cost model, about once a second */
	WIRE_GRANT_REQUEST = 6, /* worker -> mediatord, a group asks to start */
	WIRE_GRANT = 7,		/* mediatord -> worker, the answer to a request */
	WIRE_DONE = 8,		/* worker -> mediatord, a granted group completed (never batched) */
	/* keeper -> worker: mediatord died; serve on as struct wire_orphaned says */
	WIRE_ORPHANED = 9,
	/* mediatord -> worker: a (restarted) mediatord took this worker over; and the worker's
	   answer */
	WIRE_RESUME = 10,
	/* worker -> mediatord: bulk host work at idle priority begins or is done
	   (worker/host_work.h) */
	WIRE_HOST_WORK = 11,
	/* worker -> mediatord: may it make its renderer now; mediatord -> worker: yes */
	WIRE_START = 12,
};

struct wire_header {
	uint32_t type;
	uint32_t size; /* of the whole message, header included */
};

/*
 * The grant path: before dispatching a group the worker sends
 * WIRE_GRANT_REQUEST and waits for WIRE_GRANT with the same id (one
 * request outstanding per worker; ids increase from 1); when the group's
 * fence completed it sends WIRE_DONE at once, so that mediatord's
 * scheduler knows the GPU is free without waiting for the batched
 * WIRE_GROUP record.
 */
struct wire_grant_request {
	struct wire_header hdr;
	uint64_t id;
	uint64_t predicted_ns;
	uint64_t bound_ns;   /* >= predicted_ns */
	uint32_t flags;	     /* enum wire_grant_flag */
	uint32_t offer_gen;  /* claimed: the generation of the offer it took */
	uint64_t claimed_ns; /* claimed: when it took it (CLOCK_MONOTONIC) */
	uint32_t ctx_id;     /* the group's guest context, for mediatord's log lines */
	/*
	 * 0, or why a draw of this group (or piece) longer than the piece
	 * length was not cut into scissor tiles: libpredict's enum
	 * predict_untiled, below WIRE_UNTILED_MAX. mediatord refuses such a
	 * group where it fits no gap (oversize = refuse-untiled, the default)
	 * and show-budgets names its context.
	 */
	uint32_t untiled;
};
/* Room for libpredict's enum predict_untiled; both ends check at compile time that it fits. */
#define WIRE_UNTILED_MAX 16u

enum wire_grant_flag {
	/* The group already started on the board's offer (below). */
	WIRE_GRANT_CLAIMED = 1u << 0,
	/*
	 * Its context is young (predict_estimate.young): its bound is the
	 * longest group the context took so far, not a learned one; such a
	 * group never takes an offer.
	 */
	WIRE_GRANT_YOUNG = 1u << 1,
	/*
	 * It draws, clears, copies, transfers or computes nothing (state,
	 * shaders, queries only): a safety domain's run of such groups, such
	 * as a client's teardown, is no frame.
	 */
	WIRE_GRANT_NO_OUTPUT = 1u << 2,
};

/*
 * The grant board: a fast path of the grant path, one page of shared
 * memory (a memfd mediatord creates; every worker maps it on
 * WIRE_BOARD_FD). While no group waits and a slot is free, mediatord
 * offers the slot: for each domain (by its index in the config) the
 * largest bound a group may have to start now, valid until
 * valid_until_ns. A worker whose group fits takes the offer by one
 * compare-and-swap of @offer (OFFERED of that generation -> CLAIMED with
 * its client id), dispatches at once and then sends its WIRE_GRANT_REQUEST with
 * WIRE_GRANT_CLAIMED, which mediatord charges as granted; a group that does not
 * fit asks as usual. mediatord withdraws an offer by the same
 * compare-and-swap (OFFERED -> NONE) before it grants anything else, and
 * waits for the claimer's request when it finds the offer taken. An offer
 * may be reserved for one client (its id in the offer word): the one
 * whose groups are all that is in flight; it may take it once it has sent
 * WIRE_DONE for every group of its own, so that its next group needs no
 * round trip either.
 *
 * @offer: bits 63..32 the generation, 31..30 the state, 29..0 the
 * claimer's client id (mediator-worker --client-id). The fields an offer carries are written before
 * it is published (release) and are read after it was seen (acquire); a worker that read them for a
 * generation that is gone fails its swap.
 */
#define WIRE_BOARD_MAGIC   0x47424f44u /* "GBOD" */
#define WIRE_BOARD_DOMAINS 16u	       /* CONFIG_MAX_DOMAINS */
enum wire_offer_state {
	WIRE_OFFER_NONE = 0,
	WIRE_OFFER_OFFERED = 1,
	WIRE_OFFER_CLAIMED = 2,
};
#define WIRE_OFFER(gen, state, client)                                                             \
	(((uint64_t)(gen) << 32) | ((uint64_t)(state) << 30) | ((uint64_t)(client)&0x3fffffffu))
#define WIRE_OFFER_GEN(o)    ((uint32_t)((o) >> 32))
#define WIRE_OFFER_STATE(o)  ((uint32_t)(((o) >> 30) & 3u))
#define WIRE_OFFER_CLIENT(o) ((uint32_t)((o)&0x3fffffffu))

struct wire_board {
	uint32_t magic;
	uint32_t domains; /* entries of max_bound_ns in use */
	_Atomic uint64_t offer;
	_Atomic uint64_t valid_until_ns;
	_Atomic uint64_t max_bound_ns[WIRE_BOARD_DOMAINS];
	/*
	 * The largest gap the active safety domains leave between their
	 * frames, 0 while none is active: a worker cuts its long groups into
	 * pieces (worker/pieces.h) no longer than this and only while it is
	 * not 0, since pieces cost throughput and only make room for safety
	 * frames. Written by mediatord whenever it schedules.
	 */
	_Atomic uint64_t safety_gap_ns;
};

enum wire_verdict {
	WIRE_GRANTED = 0,
	WIRE_REFUSED = 1, /* the group can never fit: its context is unschedulable */
};

struct wire_grant {
	struct wire_header hdr;
	uint64_t id;
	uint32_t verdict; /* enum wire_verdict */
	uint32_t reserved;
};

struct wire_done {
	struct wire_header hdr;
	uint64_t id;
	uint64_t measured_ns;
	uint64_t end_ns;
};

/*
 * mediatord's restart (daemon/keeper.h). When mediatord dies, its keeper
 * sends WIRE_ORPHANED on every record channel: a worker then sends nothing
 * more to mediatord; with @serve_freely (a safety domain's worker) it
 * dispatches its groups without grants, otherwise its groups wait. A
 * restarted mediatord that takes the worker over sends WIRE_RESUME (whether
 * or not WIRE_ORPHANED came): the worker answers, in this order, with
 * WIRE_RESUME, WIRE_HELLO if its renderer is up, WIRE_CLIENT_INFO if it
 * had sent one, WIRE_CONTEXT for each live guest context and its
 * outstanding WIRE_GRANT_REQUEST, if any, with the same id; then it goes
 * on as before. It sends no WIRE_DONE for a group granted before the
 * WIRE_RESUME: the new mediatord never granted it. The new mediatord
 * ignores what it reads from the worker before that WIRE_RESUME (sent to
 * its predecessor).
 */
struct wire_orphaned {
	struct wire_header hdr;
	uint32_t serve_freely; /* 1: dispatch without grants until WIRE_RESUME */
	uint32_t reserved;     /* 0 */
};

struct wire_resume {
	struct wire_header hdr;
	uint64_t reserved; /* 0 */
};

/*
 * A worker lowers its thread to SCHED_IDLE itself before bulk host work
 * and sends WIRE_HOST_WORK with phase DONE afterwards: mediatord puts it
 * back. Phase BEGIN is sent instead of lowering when the thread is still
 * at idle priority because mediatord has not yet acted on the last DONE:
 * mediatord, reading both in order, keeps it there. Without it the put-back
 * came in the middle of the next host work (a client making its textures
 * one after another), which then ran at the domain's priority.
 */
enum wire_host_work_phase {
	WIRE_HOST_WORK_DONE = 0,
	WIRE_HOST_WORK_BEGIN = 1,
	/*
	 * Bulk host work ran at idle priority that mediatord itself had put
	 * the thread at (a revocation, a penalty, a new worker): counted,
	 * nothing changes.
	 */
	WIRE_HOST_WORK_HELD = 2,
};

struct wire_host_work {
	struct wire_header hdr;
	uint32_t phase;	   /* enum wire_host_work_phase */
	uint32_t reserved; /* 0 */
};

/*
 * A normal domain's workers make their renderers one at a time
 * (mediatord's client_start.c). A worker started with --start-turn sends
 * WIRE_START before it makes its renderer, and waits for mediatord's
 * WIRE_START in answer, WIRE_START_WAIT_MS at most, and not at all once
 * orphaned; its WIRE_HELLO says the renderer is up. Asked once per
 * worker. A worker taken over while it waits asks its new mediatord again
 * after its WIRE_RESUME.
 */
struct wire_start {
	struct wire_header hdr;
	uint64_t reserved; /* 0 */
};
/*
 * mediatord answers each asker at most 1 s after the one before it began
 * (client_start.c), so a domain's 16 clients (the default max_clients)
 * all asking at once are answered within 16 s; the wait's end is for a
 * mediatord that answers nothing. 3 s was too short where renderers are
 * slow: eight AddressSanitizer workers asking at once took 3 to 4 s each
 * (2026-11-28), and the last ones then made theirs beside the others.
 */
#define WIRE_START_WAIT_MS 20000

struct wire_hello {
	struct wire_header hdr;
	int32_t worker_pid;
	uint32_t protocol;		      /* reserved, 0 */
	char timestamp_source[WIRE_NAME_MAX]; /* NUL-terminated, e.g. "fence-callback" */
	char renderer[WIRE_NAME_MAX];	      /* NUL-terminated, e.g. "egl-surfaceless" */
};

struct wire_client_info {
	struct wire_header hdr;
	int32_t peer_pid; /* from SO_PEERCRED, -1 when unknown */
	uint32_t reserved;
	char name[WIRE_NAME_MAX]; /* NUL-terminated, from VCMD_CREATE_RENDERER */
};

struct wire_context {
	struct wire_header hdr;
	uint32_t ctx_id;
	uint32_t alive; /* 1 created, 0 destroyed */
	char name[WIRE_NAME_MAX];
};

/* How a group got to start. */
enum wire_grant_path {
	WIRE_GRANT_NONE = 0,	/* mediatord does not schedule */
	WIRE_GRANT_ASKED = 1,	/* a request answered by WIRE_GRANT */
	WIRE_GRANT_OFFERED = 2, /* it took the grant board's offer */
};

struct wire_group {
	struct wire_header hdr;
	uint32_t ctx_id;
	uint32_t grant;	       /* enum wire_grant_path */
	uint64_t seq;	       /* per client, from 1 */
	uint64_t request_ns;   /* when the worker asked for a grant (= dispatch_ns without) */
	uint64_t dispatch_ns;  /* when the worker handed it to the renderer */
	uint64_t start_ns;     /* max(dispatch, end of the previous group) */
	uint64_t end_ns;       /* completion of its fence */
	uint64_t predicted_ns; /* 0 while no model predicts */
	uint64_t bound_ns;     /* 0 while no model predicts */
	uint32_t cmds[WIRE_CMD_CLASSES]; /* by enum predict_cmd_class */
	uint16_t young;			 /* 1: its estimate was young (WIRE_GRANT_YOUNG) */
	uint16_t tile;		/* 1: a piece that is a scissor tile of a draw (worker/pieces.h) */
	uint16_t piece, pieces; /* a piece of a group cut into pieces: its number from 1, how many;
				   0, 0 whole */
	char model[WIRE_MODEL_MAX]; /* NUL-terminated, "" while no model predicts */
};

/* How often a worker reports its cost model (and when it exits). */
#define WIRE_MODEL_REPORT_MS 1000

struct wire_model {
	struct wire_header hdr;
	uint32_t ctx_id;
	uint32_t flags;		 /* predict_feature_flag bits seen so far (unbounded loops, ...) */
	uint64_t groups;	 /* groups learned from */
	double mae_ns;		 /* mean |predicted - measured| so far */
	double mape;		 /* mean |error| / measured over groups >= 100 us, 0..inf */
	double over_share;	 /* share of groups that exceeded their bound */
	double margin_ns;	 /* the bound's current margin */
	double coef[WIRE_COEFS]; /* learned ns per unit of each feature (0 if none) */
	uint32_t n_coef;	 /* how many of coef the model has */
	char model[WIRE_MODEL_MAX];
	/* Fragment estimators (predict_fragment_stats): groups measured, errors, preference. */
	uint64_t frag_observed;
	double frag_bbox_error;	   /* -1 before the first score */
	double frag_history_error; /* -1 before the first score */
	uint32_t frag_preferred;   /* enum predict_fragment_mode: BBOX or HISTORY */
	uint32_t pad;
};

/*
 * Largest packet a worker may send on its record channel: a full batch of
 * WIRE_GROUP (every other message is smaller).
 */
#define WIRE_MAX_PACKET (WIRE_MAX_BATCH * sizeof(struct wire_group))

/*
 * Any one message, to read one at any alignment (memcpy it in) or to build
 * one: the checker's and its tests' buffer.
 */
union wire_message {
	struct wire_header hdr;
	struct wire_group group;
	struct wire_grant_request request;
	struct wire_grant grant;
	struct wire_done done;
	struct wire_orphaned orphaned;
	struct wire_resume resume;
	struct wire_host_work host_work;
	struct wire_start start;
	struct wire_hello hello;
	struct wire_client_info info;
	struct wire_context context;
	struct wire_model model;
};

/*
 * The checker of what a worker sends (wire.c): every rule a message must
 * keep on its own, whoever reads it. Rules that need the reader's state
 * (a group's seq above the last one, a request's id above the last, a
 * completion of a group it granted, a claim of the offer it made, a
 * WIRE_RESUME only as the answer to a take-over) are the reader's
 * (mediatord's client_records.c and dispatcher.c).
 *
 * The errors, the same for every function:
 *   -EPROTO    the packet's framing: shorter than a header, its header's
 *              size not the packet's, a type no worker sends, a size not
 *              its type's (a batch: not a whole number of WIRE_GROUP)
 *   -EMSGSIZE  a packet longer than WIRE_MAX_PACKET
 *   -EINVAL    a field breaks its rule: a string not NUL-terminated, a
 *              value out of its enum or range, an unknown flag, a
 *              reserved field not 0, times out of order or in the future
 * @err (NULL: none) gets a line saying which rule broke. No function
 * keeps state or writes the message; wire_frame(), wire_check_message()
 * and wire_check() read it at any alignment (as recv() leaves it), the
 * per-type ones take a struct of that type.
 */

/*
 * Checks the framing of one packet of @len bytes read from a record
 * channel: returns how many messages it holds (1, or a WIRE_GROUP batch's
 * records, each sizeof(struct wire_group) bytes, back to back), or a
 * negative errno. Their content is wire_check_message()'s.
 */
int wire_frame(const void *packet, size_t len, char *err, size_t err_size);
/*
 * Checks one message of @len bytes (a packet, or one record of a batch)
 * that a worker sent: its header (a worker's type, the size of that type)
 * and every field. @now_ns (CLOCK_MONOTONIC) is when it was read: no time
 * in it may be later. 0 or a negative errno.
 */
int wire_check_message(const void *msg, size_t len, uint64_t now_ns, char *err, size_t err_size);
/* wire_frame() and wire_check_message() of every message: 0 or a negative errno. */
int wire_check(const void *packet, size_t len, uint64_t now_ns, char *err, size_t err_size);

/* The fields' rules of one message of that type, its header not looked at. 0 or -EINVAL. */
int wire_check_group(const struct wire_group *m, uint64_t now_ns, char *err, size_t err_size);
int wire_check_grant_request(const struct wire_grant_request *m, char *err, size_t err_size);
int wire_check_done(const struct wire_done *m, uint64_t now_ns, char *err, size_t err_size);
int wire_check_hello(const struct wire_hello *m, char *err, size_t err_size);
int wire_check_client_info(const struct wire_client_info *m, char *err, size_t err_size);
int wire_check_context(const struct wire_context *m, char *err, size_t err_size);
int wire_check_model(const struct wire_model *m, char *err, size_t err_size);

#endif
