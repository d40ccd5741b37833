// SPDX-License-Identifier: MIT
/*
 * Fuzz inputs as a run of virgl command groups: the bytes as dwords, cut
 * at every 0xdeadbeef dword, so that one input carries several groups and
 * the state they leave between them.
 */
#ifndef FUZZ_GROUPS_H
#define FUZZ_GROUPS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_GROUP_SEPARATOR 0xdeadbeefu

/* One group of @n dwords at @g (its own heap block), which started at dword @start. */
typedef void (*fuzz_group_fn)(const uint32_t *g, size_t n, size_t start, void *arg);

/*
 * Calls @fn for each group of the @size bytes at @data, in order, each
 * copied to a block of exactly its size so that ASan sees its end. Stops
 * where memory runs out.
 */
static inline void fuzz_for_each_group(const uint8_t *data, size_t size, fuzz_group_fn fn,
				       void *arg)
{
	size_t ndw = size / 4, start = 0;
	uint32_t *dw = malloc(ndw ? ndw * 4 : 1);

	if (!dw)
		return;
	memcpy(dw, data, ndw * 4);
	for (size_t i = 0; i <= ndw; i++) {
		if (i == ndw || dw[i] == FUZZ_GROUP_SEPARATOR) {
			size_t n = i - start;
			uint32_t *g = malloc(n ? n * 4 : 1);

			if (!g)
				break;
			memcpy(g, dw + start, n * 4);
			fn(g, n, start, arg);
			free(g);
			start = i + 1;
		}
	}
	free(dw);
}

#endif
