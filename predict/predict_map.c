/*
 * Handle map (see handle_map.h). Slots hold (handle, value); handle 0 marks
 * an empty slot. Removal uses backward-shift deletion, so there are no
 * tombstones and lookups stay short. The table is kept at most half full.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "predict_map.h"

#define INITIAL_SLOTS 64u

struct slot {
	uint32_t handle;
	void *value;
};

struct handle_map {
	struct slot *slots;
	size_t n_slots; /* a power of two */
	size_t count;
};

static size_t hash(uint32_t h, size_t n_slots)
{
	return (size_t)((h * 2654435761u) & (uint32_t)(n_slots - 1));
}

struct handle_map *handle_map_create(void)
{
	struct handle_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->slots = calloc(INITIAL_SLOTS, sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		return NULL;
	}
	m->n_slots = INITIAL_SLOTS;
	return m;
}

void handle_map_destroy(struct handle_map *map)
{
	if (!map)
		return;
	free(map->slots);
	free(map);
}

static struct slot *find(const struct handle_map *m, uint32_t handle)
{
	for (size_t i = hash(handle, m->n_slots);; i = (i + 1) & (m->n_slots - 1)) {
		if (m->slots[i].handle == handle || m->slots[i].handle == 0)
			return &m->slots[i];
	}
}

void *handle_map_get(const struct handle_map *map, uint32_t handle)
{
	struct slot *s;

	if (handle == 0)
		return NULL;
	s = find(map, handle);
	return s->handle ? s->value : NULL;
}

static int grow(struct handle_map *m)
{
	struct slot *old = m->slots;
	size_t old_n = m->n_slots;

	m->slots = calloc(old_n * 2, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return -ENOMEM;
	}
	m->n_slots = old_n * 2;
	for (size_t i = 0; i < old_n; i++) {
		if (old[i].handle)
			*find(m, old[i].handle) = old[i];
	}
	free(old);
	return 0;
}

int handle_map_add(struct handle_map *map, uint32_t handle, void *value)
{
	struct slot *s;

	if (handle == 0 || !value)
		return -EINVAL;
	if (handle_map_get(map, handle))
		return -EEXIST;
	if ((map->count + 1) * 2 > map->n_slots && grow(map) < 0)
		return -ENOMEM;
	s = find(map, handle);
	s->handle = handle;
	s->value = value;
	map->count++;
	return 0;
}

static void delete_slot(struct handle_map *m, size_t i)
{
	size_t mask = m->n_slots - 1;
	size_t j = i;

	m->slots[i].handle = 0;
	m->slots[i].value = NULL;
	/* Shift back following entries that would no longer be found. */
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (m->slots[j].handle == 0)
			break;
		home = hash(m->slots[j].handle, m->n_slots);
		/* Entry j may move to i if i lies cyclically in [home, j). */
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			m->slots[i] = m->slots[j];
			m->slots[j].handle = 0;
			m->slots[j].value = NULL;
			i = j;
		}
	}
	m->count--;
}

void *handle_map_remove(struct handle_map *map, uint32_t handle)
{
	struct slot *s;
	void *value;

	if (handle == 0)
		return NULL;
	s = find(map, handle);
	if (!s->handle)
		return NULL;
	value = s->value;
	delete_slot(map, (size_t)(s - map->slots));
	return value;
}

size_t handle_map_count(const struct handle_map *map)
{
	return map->count;
}

void *handle_map_pop(struct handle_map *map)
{
	for (size_t i = 0; i < map->n_slots; i++) {
		if (map->slots[i].handle) {
			void *value = map->slots[i].value;

			delete_slot(map, i);
			return value;
		}
	}
	return NULL;
}
