// SPDX-License-Identifier: MIT
/*
 * A map from 32-bit handles to pointers: the resources and objects a
 * guest names, in libpredict's context state (predict_ctx) and in the
 * worker's transports (which resources a client owns, and their backing).
 *
 * Open addressing with linear probing; removal shifts the entries after
 * the hole back, so there are no tombstones and lookups stay short. The
 * table is kept at most half full and doubles when it would not be; an
 * empty map allocates nothing. Every 32-bit key is a key, 0 included;
 * values are never NULL (NULL is what get and remove answer for "absent").
 *
 * The caller embeds the struct (its fields are the map's own):
 * predict_map_init(), then predict_map_finish(). The map owns its table,
 * never the values: the caller frees those, for instance by walking the
 * map with predict_map_next() before predict_map_finish(). One thread at a
 * time.
 */
#ifndef PREDICT_MAP_H
#define PREDICT_MAP_H

#include <stddef.h>
#include <stdint.h>

struct predict_map_slot {
	uint32_t key;
	void *value; /* NULL: the slot is empty */
};

struct predict_map {
	struct predict_map_slot *slots;
	size_t cap; /* slots: 0 or a power of two */
	size_t n;   /* entries */
};

/* An empty map. Allocates nothing. */
void predict_map_init(struct predict_map *map);
/* Frees the table, not the values; the map is then empty, as after init. */
void predict_map_finish(struct predict_map *map);

/* The value of @key, or NULL if absent. */
void *predict_map_get(const struct predict_map *map, uint32_t key);
/* Adds @key -> @value (non-NULL). Returns 0, -EINVAL (NULL value), -EEXIST or -ENOMEM. */
int predict_map_add(struct predict_map *map, uint32_t key, void *value);
/* Removes @key and returns its value, or NULL if absent. */
void *predict_map_remove(struct predict_map *map, uint32_t key);
size_t predict_map_count(const struct predict_map *map);

/*
 * Walks the entries in no particular order: returns the value of the next
 * entry at or after slot *@pos and moves *@pos past it, or NULL after the
 * last. Start with *@pos = 0; the map must not change during the walk.
 *
 *   for (size_t i = 0; (v = predict_map_next(map, &i));)
 */
void *predict_map_next(const struct predict_map *map, size_t *pos);

#endif
