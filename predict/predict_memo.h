/*
 * Memo of the groups a model badly under-predicted, by exact content.
 *
 * Some groups cost far more than their features say, and cost it every
 * time an application starts: the first draw with a new shader pair
 * (virglrenderer links the GL program and llvmpipe compiles it, 18-80 ms
 * on these machines), the first clear of a new framebuffer. A cost model
 * over features cannot learn a one-off group, but an instrument-cluster
 * application starts the same way at every boot, so its start-up groups
 * repeat byte for byte (content_hash, predict_features.h). The memo keeps
 * the measured time of each group whose measurement exceeded twice its
 * model prediction by at least PREDICT_MEMO_MIN_NS; a later group with
 * the same content is predicted to take that time (only a content's first
 * group is remembered, see PREDICT_MEMO_SEEN; and every later
 * measurement of it replaces the remembered time, until the model's own
 * prediction of it is no longer that far off: then the content is no
 * one-off, and the memo forgets it; kept, the memo would predict a
 * repeated group from its last time alone). It is saved with the
 * model state, so the first groups after a restart are predicted from
 * what they cost last time (seed 003 §4.6).
 */
#ifndef PREDICT_MEMO_H
#define PREDICT_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Groups remembered; the least recently used is forgotten first. */
#define PREDICT_MEMO_ENTRIES 64u
/* Smallest under-prediction remembered, ns. */
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

/*
 * Learns from a measured group: content @hash, predicted by the model
 * (without the memo) to take @model_ns, measured @measured_ns; @known_kind
 * when groups like it (predict_recent_kind()) were measured lately. Returns
 * true when the group was new to the memo and is now remembered.
 */
bool predict_memo_update(struct predict_memo *memo, uint64_t hash, double model_ns,
			 double measured_ns, bool known_kind);

/* Groups remembered now. */
size_t predict_memo_size(const struct predict_memo *memo);

/* Serialises the memo into @buf; bytes written or -ENOSPC. */
int predict_memo_save(const struct predict_memo *memo, uint8_t *buf, size_t size);
/* Replaces the memo with @buf as written by save(); 0 or -EINVAL (memo unchanged). */
int predict_memo_load(struct predict_memo *memo, const uint8_t *buf, size_t size);

#endif
