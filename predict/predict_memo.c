// SPDX-License-Identifier: MIT
/*
 * Memo of one-off groups by content (see predict_memo.h).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "predict_memo.h"
#include "predict_model_priv.h"

#define MEMO_MAGIC   0x4f4d454du /* "MEMO" */
#define MEMO_VERSION 1u

struct memo_entry {
	uint64_t hash;
	double ns;
	uint64_t used; /* memo->clock at the last lookup or update; 0 = free */
};

struct predict_memo {
	struct memo_entry e[PREDICT_MEMO_ENTRIES];
	uint64_t clock;
	uint64_t seen[PREDICT_MEMO_SEEN]; /* recent contents, by hash % PREDICT_MEMO_SEEN */
};

struct predict_memo *predict_memo_create(void)
{
	return calloc(1, sizeof(struct predict_memo));
}

void predict_memo_destroy(struct predict_memo *memo)
{
	free(memo);
}

static struct memo_entry *find(struct predict_memo *memo, uint64_t hash)
{
	for (unsigned i = 0; i < PREDICT_MEMO_ENTRIES; i++) {
		if (memo->e[i].used && memo->e[i].hash == hash)
			return &memo->e[i];
	}
	return NULL;
}

double predict_memo_lookup(struct predict_memo *memo, uint64_t hash)
{
	struct memo_entry *e = find(memo, hash);

	if (!e)
		return -1;
	e->used = ++memo->clock;
	return e->ns;
}

/*
 * Whether the model's prediction @model_ns of a group measured @measured_ns
 * is so far off that the group is better predicted from its last time: by
 * PREDICT_MEMO_MIN_NS or more, and by a factor of 2 or more, either way.
 */
static bool far_off(double model_ns, double measured_ns)
{
	double lo = fmin(model_ns, measured_ns), hi = fmax(model_ns, measured_ns);

	return hi - lo >= PREDICT_MEMO_MIN_NS && hi >= 2 * lo;
}

bool predict_memo_update(struct predict_memo *memo, uint64_t hash, double model_ns,
			 double measured_ns, unsigned hints)
{
	struct memo_entry *e = find(memo, hash);
	uint64_t key = hash ? hash : 1; /* seen[] is 0 where nothing was seen */
	uint64_t *seen = &memo->seen[hash % PREDICT_MEMO_SEEN];
	bool first = *seen != key, off, added = false;

	if (!predict_time_valid(measured_ns) || !(model_ns >= 0))
		return false;
	*seen = key;
	off = far_off(model_ns, measured_ns);
	if (e && !off && !first) {
		/*
		 * The model has caught up with this content, which repeats:
		 * it is no one-off. (A content first seen in this run, such
		 * as a start-up group, stays: the model of a group seen
		 * once per start can be right once by chance and 2x off the
		 * next time; test-model-state, a 550-820 us group.)
		 */
		e->used = 0;
		return false;
	}
	if (!e) {
		if (!first || (hints & PREDICT_MEMO_KNOWN_KIND))
			return false; /* a group like many before that ran long once: noise */
		if (!off && !(hints & PREDICT_MEMO_START_UP))
			return false;
		e = &memo->e[0];
		for (unsigned i = 1; i < PREDICT_MEMO_ENTRIES && e->used; i++) {
			if (memo->e[i].used < e->used)
				e = &memo->e[i];
		}
		e->hash = hash;
		added = true;
	}
	e->ns = measured_ns;
	e->used = ++memo->clock;
	return added && off;
}

size_t predict_memo_size(const struct predict_memo *memo)
{
	size_t n = 0;

	for (unsigned i = 0; i < PREDICT_MEMO_ENTRIES; i++)
		n += memo->e[i].used != 0;
	return n;
}

int predict_memo_save(const struct predict_memo *memo, uint8_t *buf, size_t size)
{
	struct predict_wr w;

	predict_wr_begin(&w, buf, size, MEMO_MAGIC, MEMO_VERSION);
	predict_wr_u32(&w, (uint32_t)predict_memo_size(memo));
	/* Oldest first, so that loading keeps the order of use. */
	for (uint64_t last = 0;;) {
		const struct memo_entry *next = NULL;

		for (unsigned i = 0; i < PREDICT_MEMO_ENTRIES; i++) {
			if (memo->e[i].used > last && (!next || memo->e[i].used < next->used))
				next = &memo->e[i];
		}
		if (!next)
			break;
		predict_wr_u64(&w, next->hash);
		predict_wr_f64(&w, next->ns);
		last = next->used;
	}
	return predict_wr_end(&w);
}

int predict_memo_load(struct predict_memo *memo, const uint8_t *buf, size_t size)
{
	struct predict_memo tmp = {.clock = 0};
	struct predict_rd r;
	uint32_t n;

	if (predict_rd_begin(&r, buf, size, MEMO_MAGIC, MEMO_VERSION))
		return -EINVAL;
	n = predict_rd_u32(&r);
	if (n > PREDICT_MEMO_ENTRIES)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		tmp.e[i].hash = predict_rd_u64(&r);
		tmp.e[i].ns = predict_rd_f64(&r);
		tmp.e[i].used = ++tmp.clock;
		if (!predict_time_valid(tmp.e[i].ns))
			return -EINVAL;
		for (uint32_t j = 0; j < i; j++) {
			if (tmp.e[j].hash == tmp.e[i].hash)
				return -EINVAL;
		}
	}
	if (predict_rd_end(&r))
		return -EINVAL;
	*memo = tmp;
	return 0;
}
