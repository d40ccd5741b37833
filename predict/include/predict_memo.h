// SPDX-License-Identifier: MIT
/*
 * Memo of one-off groups, by exact content.
 *
 * Some groups cost far more than their features say, and cost it every
 * time an application starts: the first draw with a new shader pair
 * (virglrenderer links the GL program and llvmpipe compiles it, 18-80 ms
 * on these machines), the first clear of a new framebuffer. Others cost
 * far less than a model fitted to the application's steady frames says:
 * a start-up group of 4 state commands (75 us) that sgd, whose per-group
 * constant absorbs part of the 2-3 ms draws it sees all the time,
 * predicts at 600 us. A cost model over features cannot learn a one-off
 * group, but an instrument-cluster application starts the same way at
 * every boot, so its start-up groups repeat byte for byte (content_hash,
 * predict_features.h).
 *
 * The memo keeps the measured time of a group that is new in content and
 * in kind (the first of its content lately, and no group of its kind
 * measured lately), when the model's prediction of it was far off (by
 * PREDICT_MEMO_MIN_NS and by a factor of 2, either way), or when it is
 * one of its context's start-up groups (the model of a start-up group
 * may be right at first and far off after the model has learned the
 * application's frames: the 4-command group above was predicted at 48
 * us in a cold start, at 671 us after a restart). A later group with the
 * same content is predicted to take that time, and its measurement
 * replaces the time, until the model's own prediction of a content that
 * repeats (seen lately, see PREDICT_MEMO_SEEN) is no longer far off:
 * then the content is no one-off, and the memo forgets it (kept, the
 * memo would predict a repeated group from its last time alone). It is saved with the model state,
 * so the first groups after a restart are predicted from what they cost last time (Keller's thesis,
 * §4.6).
 */
#ifndef PREDICT_MEMO_H
#define PREDICT_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Groups remembered; the least recently used is forgotten first. */
#define PREDICT_MEMO_ENTRIES 64u
/* Smallest error of the model that makes a group a one-off, ns. */
#define PREDICT_MEMO_MIN_NS 250000.0
/*
 * Contents seen lately (direct-mapped by hash): only a content's first
 * group is remembered, since a one-off is a first. A repeated group that
 * ran long once was noise: remembered, it made long-draws' next group
 * predicted at 38 ms instead of 10 ms, which the scheduler refused. Nor
 * is a new content of a kind measured lately remembered: long-draws
 * cycles through ~1000 contents of one kind, and one that ran 36 ms
 * instead of 12 ms (the host stalled) was predicted at 36 ms when it came
 * again 1000 groups later; the scheduler refused it as never fitting the
 * cluster's gaps. A one-off is new in kind as well: a draw with a new
 * shader pair, a clear of a new framebuffer.
 */
#define PREDICT_MEMO_SEEN 1024u

struct predict_memo;

/* Returns NULL on allocation failure. */
struct predict_memo *predict_memo_create(void);
void predict_memo_destroy(struct predict_memo *memo);

/* The remembered time of a group with @hash in ns, or -1 when none. */
double predict_memo_lookup(struct predict_memo *memo, uint64_t hash);

/* What the caller knows of a measured group besides its times. */
enum predict_memo_hint {
	/* Groups like it (predict_recent_kind()) were measured lately. */
	PREDICT_MEMO_KNOWN_KIND = 1u << 0,
	/* One of its context's first groups. */
	PREDICT_MEMO_START_UP = 1u << 1,
};

/*
 * Learns from a measured group: content @hash, predicted by the model
 * (without the memo) to take @model_ns, measured @measured_ns; @hints
 * from enum predict_memo_hint. Returns true when the group was new to the
 * memo, is now remembered, and was far off the model's prediction: a
 * one-off, which says nothing of the model's level or its margin.
 */
bool predict_memo_update(struct predict_memo *memo, uint64_t hash, double model_ns,
			 double measured_ns, unsigned hints);

/* Groups remembered now. */
size_t predict_memo_size(const struct predict_memo *memo);

/* Serialises the memo into @buf; bytes written or -ENOSPC. */
int predict_memo_save(const struct predict_memo *memo, uint8_t *buf, size_t size);
/* Replaces the memo with @buf as written by save(); 0 or -EINVAL (memo unchanged). */
int predict_memo_load(struct predict_memo *memo, const uint8_t *buf, size_t size);

#endif
