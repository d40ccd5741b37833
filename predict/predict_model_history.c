// SPDX-License-Identifier: MIT
/*
 * TimeGraph's history-based prediction, the baseline of Schnitzer et al.,
 * Concepts for Execution Time Prediction of 3D GPU Rendering, §VI: a
 * group whose content_hash was seen before is predicted to take the time
 * it took last; any other group is predicted to take the largest time
 * measured so far (0 before the first measurement).
 *
 * The history is a bounded table: PREDICT_HISTORY_ENTRIES entries chained
 * from PREDICT_HISTORY_BUCKETS hash buckets, with a doubly-linked LRU list
 * through them; when the table is full the least recently used entry (by
 * predict or update) makes room. predict() refreshes an entry's place in
 * the LRU order, so the "model" is mutated by predictions too (allowed:
 * one thread at a time).
 *
 * State: max time, then the entries from least to most recently used, so
 * that load() rebuilds the same LRU order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "predict_model.h"
#include "predict_model_priv.h"

/*
 * Entries kept: 4000 × (8-byte hash + 8-byte time) + header fits in
 * PREDICT_MODEL_STATE_MAX (64 KiB); 4096 would not.
 */
#define PREDICT_HISTORY_ENTRIES 4000
#define PREDICT_HISTORY_BUCKETS 4096	    /* power of two */
#define HISTORY_MAGIC		0x54534948u /* "HIST" */
#define HISTORY_VERSION		1u
#define NIL			-1

struct history_entry {
	uint64_t hash;
	double time;
	int32_t chain; /* next in bucket */
	int32_t older, newer;
};

struct predict_model {
	const struct predict_model_ops *ops; /* first, see predict_model_priv.h */
	double max_time;
	int32_t count;
	int32_t oldest, newest;
	int32_t bucket[PREDICT_HISTORY_BUCKETS];
	struct history_entry e[PREDICT_HISTORY_ENTRIES];
};

static uint32_t bucket_of(uint64_t hash)
{
	/* The hash may be weak in its low bits; mix it (splitmix64 finaliser). */
	hash ^= hash >> 30;
	hash *= 0xbf58476d1ce4e5b9ull;
	hash ^= hash >> 27;
	hash *= 0x94d049bb133111ebull;
	hash ^= hash >> 31;
	return (uint32_t)hash & (PREDICT_HISTORY_BUCKETS - 1);
}

static void history_reset(struct predict_model *m)
{
	m->ops = &predict_model_history_ops;
	m->max_time = 0;
	m->count = 0;
	m->oldest = m->newest = NIL;
	for (int i = 0; i < PREDICT_HISTORY_BUCKETS; i++)
		m->bucket[i] = NIL;
}

static struct predict_model *history_create(void)
{
	struct predict_model *m = malloc(sizeof(*m));

	if (!m)
		return NULL;
	history_reset(m);
	return m;
}

static void history_destroy(struct predict_model *m)
{
	free(m);
}

static int32_t history_lookup(const struct predict_model *m, uint64_t hash)
{
	for (int32_t i = m->bucket[bucket_of(hash)]; i != NIL; i = m->e[i].chain) {
		if (m->e[i].hash == hash)
			return i;
	}
	return NIL;
}

static void lru_unlink(struct predict_model *m, int32_t i)
{
	struct history_entry *e = &m->e[i];

	if (e->older != NIL)
		m->e[e->older].newer = e->newer;
	else
		m->oldest = e->newer;
	if (e->newer != NIL)
		m->e[e->newer].older = e->older;
	else
		m->newest = e->older;
}

static void lru_push_newest(struct predict_model *m, int32_t i)
{
	struct history_entry *e = &m->e[i];

	e->older = m->newest;
	e->newer = NIL;
	if (m->newest != NIL)
		m->e[m->newest].newer = i;
	else
		m->oldest = i;
	m->newest = i;
}

static void bucket_remove(struct predict_model *m, int32_t i)
{
	int32_t *link = &m->bucket[bucket_of(m->e[i].hash)];

	while (*link != i)
		link = &m->e[*link].chain;
	*link = m->e[i].chain;
}

static void history_insert(struct predict_model *m, uint64_t hash, double time)
{
	int32_t i = history_lookup(m, hash);
	uint32_t b;

	if (i != NIL) {
		m->e[i].time = time;
		lru_unlink(m, i);
		lru_push_newest(m, i);
		return;
	}
	if (m->count < PREDICT_HISTORY_ENTRIES) {
		i = m->count++;
	} else {
		i = m->oldest;
		lru_unlink(m, i);
		bucket_remove(m, i);
	}
	b = bucket_of(hash);
	m->e[i].hash = hash;
	m->e[i].time = time;
	m->e[i].chain = m->bucket[b];
	m->bucket[b] = i;
	lru_push_newest(m, i);
}

static double history_predict(struct predict_model *m, const struct predict_features *f)
{
	int32_t i = history_lookup(m, f->content_hash);

	if (i == NIL)
		return m->max_time;
	lru_unlink(m, i);
	lru_push_newest(m, i);
	return m->e[i].time;
}

static void history_update(struct predict_model *m, const struct predict_features *f,
			   double measured_ns)
{
	if (!predict_time_valid(measured_ns))
		return;
	measured_ns = predict_time_clamp(measured_ns);
	if (measured_ns > m->max_time)
		m->max_time = measured_ns;
	history_insert(m, f->content_hash, measured_ns);
}

static int history_save(const struct predict_model *m, uint8_t *buf, size_t size)
{
	struct predict_wr w;

	predict_wr_begin(&w, buf, size, HISTORY_MAGIC, HISTORY_VERSION);
	predict_wr_f64(&w, m->max_time);
	predict_wr_u32(&w, (uint32_t)m->count);
	for (int32_t i = m->oldest; i != NIL; i = m->e[i].newer) {
		predict_wr_u64(&w, m->e[i].hash);
		predict_wr_f64(&w, m->e[i].time);
	}
	return predict_wr_end(&w);
}

static int history_load(struct predict_model *m, const uint8_t *buf, size_t size)
{
	struct predict_model *tmp;
	struct predict_rd r;
	uint32_t count;
	int ret = -EINVAL;

	if (predict_rd_begin(&r, buf, size, HISTORY_MAGIC, HISTORY_VERSION))
		return -EINVAL;
	/* Build into a scratch table so that @m is untouched on error. */
	tmp = history_create();
	if (!tmp)
		return -ENOMEM;
	tmp->max_time = predict_rd_f64(&r);
	count = predict_rd_u32(&r);
	if (r.bad || count > PREDICT_HISTORY_ENTRIES || tmp->max_time < 0 ||
	    tmp->max_time > PREDICT_MODEL_TIME_MAX)
		goto out;
	for (uint32_t k = 0; k < count; k++) {
		uint64_t hash = predict_rd_u64(&r);
		double t = predict_rd_f64(&r);

		if (r.bad || t < 0 || t > tmp->max_time || history_lookup(tmp, hash) != NIL)
			goto out;
		history_insert(tmp, hash, t);
	}
	if (predict_rd_end(&r))
		goto out;
	memcpy(m, tmp, sizeof(*m));
	ret = 0;
out:
	free(tmp);
	return ret;
}

static size_t history_coefficients(const struct predict_model *m, double *out, size_t n)
{
	return 0;
}

const struct predict_model_ops predict_model_history_ops = {
    .version = PREDICT_MODEL_OPS_VERSION,
    .name = "history",
    .create = history_create,
    .destroy = history_destroy,
    .predict = history_predict,
    .update = history_update,
    .save = history_save,
    .load = history_load,
    .coefficients = history_coefficients,
};
