// SPDX-License-Identifier: MIT
/*
 * Handle map (see predict_map.h). A slot holds (key, value); a NULL value
 * marks it empty. An entry sits at its key's home slot or after it, with
 * no empty slot in between: that is what a lookup relies on, what an
 * insertion keeps (it takes the first empty slot from home on) and what a
 * removal restores by moving later entries of the run back into the hole.
 */
#include <errno.h>
#include <stdlib.h>

#include "predict_map.h"

/* Slots of the first table: a context's first few objects fit without growing. */
#define PREDICT_MAP_INITIAL_SLOTS 16u

static size_t home_of(uint32_t key, size_t cap)
{
	return (size_t)((key * 2654435761u) &
			(uint32_t)(cap - 1)); /* Knuth's multiplicative hash */
}

/* The slot of @key, or the empty slot where it would go. @m has a table that is not full. */
static size_t find(const struct predict_map *m, uint32_t key)
{
	size_t i = home_of(key, m->cap);

	while (m->slots[i].value && m->slots[i].key != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

void predict_map_init(struct predict_map *map)
{
	map->slots = NULL;
	map->cap = 0;
	map->n = 0;
}

void predict_map_finish(struct predict_map *map)
{
	free(map->slots);
	predict_map_init(map);
}

void *predict_map_get(const struct predict_map *map, uint32_t key)
{
	if (!map->cap)
		return NULL;
	return map->slots[find(map, key)].value;
}

static int grow(struct predict_map *m)
{
	size_t cap = m->cap ? 2 * m->cap : PREDICT_MAP_INITIAL_SLOTS;
	struct predict_map_slot *old = m->slots;
	size_t old_cap = m->cap;

	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return -ENOMEM;
	}
	m->cap = cap;
	for (size_t i = 0; i < old_cap; i++) {
		if (old[i].value)
			m->slots[find(m, old[i].key)] = old[i];
	}
	free(old);
	return 0;
}

int predict_map_add(struct predict_map *map, uint32_t key, void *value)
{
	size_t i;

	if (!value)
		return -EINVAL;
	if (map->cap && map->slots[find(map, key)].value)
		return -EEXIST;
	if ((map->n + 1) * 2 > map->cap && grow(map) < 0)
		return -ENOMEM;
	i = find(map, key);
	map->slots[i].key = key;
	map->slots[i].value = value;
	map->n++;
	return 0;
}

void *predict_map_remove(struct predict_map *map, uint32_t key)
{
	size_t mask = map->cap - 1, hole, j;
	void *value;

	if (!map->cap)
		return NULL;
	hole = find(map, key);
	value = map->slots[hole].value;
	if (!value)
		return NULL;
	map->slots[hole].value = NULL;
	map->n--;
	/* Entries after the hole, up to the next empty slot, may have probed past it. */
	for (j = (hole + 1) & mask; map->slots[j].value; j = (j + 1) & mask) {
		size_t home = home_of(map->slots[j].key, map->cap);

		/* Entry j stays unless its home lies cyclically in (hole, j]. */
		if ((j > hole && (home <= hole || home > j)) ||
		    (j < hole && home <= hole && home > j)) {
			map->slots[hole] = map->slots[j];
			map->slots[j].value = NULL;
			hole = j;
		}
	}
	return value;
}

size_t predict_map_count(const struct predict_map *map)
{
	return map->n;
}

void *predict_map_next(const struct predict_map *map, size_t *pos)
{
	for (; *pos < map->cap; (*pos)++) {
		if (map->slots[*pos].value)
			return map->slots[(*pos)++].value;
	}
	return NULL;
}
