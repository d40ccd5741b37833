/*
 * A map from non-zero 32-bit handles (resource ids chosen by a guest or
 * client) to pointers. Open addressing with linear probing; grows as
 * needed. Used to check that every handle a client names is one it
 * created, and to find that resource's backing.
 */
#ifndef MEDIATOR_HANDLE_MAP_H
#define MEDIATOR_HANDLE_MAP_H

#include <stddef.h>
#include <stdint.h>

struct handle_map;

struct handle_map *handle_map_create(void);
/* Frees the map, not the values. NULL is fine. */
void handle_map_destroy(struct handle_map *map);

/* Returns the value of @handle, or NULL if absent. */
void *handle_map_get(const struct handle_map *map, uint32_t handle);
/* Adds @handle (non-zero, absent) -> @value (non-NULL). Returns 0, -EEXIST, -EINVAL or -ENOMEM. */
int handle_map_add(struct handle_map *map, uint32_t handle, void *value);
/* Removes @handle and returns its value, or NULL if absent. */
void *handle_map_remove(struct handle_map *map, uint32_t handle);
size_t handle_map_count(const struct handle_map *map);
/* Removes one entry and returns its value, or NULL when empty (for teardown). */
void *handle_map_pop(struct handle_map *map);

#endif
