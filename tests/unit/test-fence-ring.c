// SPDX-License-Identifier: MIT
/*
 * Tests of the fence ring reader (fence_ring.h) against rings built in
 * memory with the module's layout: records in order across rings, a reader
 * that fell behind counting what it lost, a record overwritten while read,
 * and headers that must be refused (wrong magic, ABI, sizes, rings that do
 * not fit the mapping).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fence_ring.h"

#define ENTRIES 16u
#define RINGS	2u
#define STRIDE	(sizeof(struct gm_fence_ring_header) + ENTRIES * sizeof(struct gm_fence_record))
#define OFFSET	64u
#define SIZE	(OFFSET + RINGS * STRIDE)

static uint8_t *make_area(void)
{
	uint8_t *a = calloc(1, SIZE);
	struct gm_fence_header h = {
	    .magic = GM_FENCE_MAGIC,
	    .abi_version = GM_FENCE_ABI_VERSION,
	    .nr_rings = RINGS,
	    .ring_entries = ENTRIES,
	    .record_size = sizeof(struct gm_fence_record),
	    .ring_stride = STRIDE,
	    .rings_offset = OFFSET,
	};

	memcpy(a, &h, sizeof(h));
	return a;
}

static struct gm_fence_ring_header *ring(uint8_t *a, unsigned i)
{
	return (struct gm_fence_ring_header *)(a + OFFSET + i * STRIDE);
}

/* The module's side: appends a record to ring @i. */
static void produce(uint8_t *a, unsigned i, uint64_t seqno, uint64_t t, uint32_t event)
{
	struct gm_fence_ring_header *r = ring(a, i);
	struct gm_fence_record *recs = (struct gm_fence_record *)(r + 1);
	struct gm_fence_record *rec = &recs[r->head % ENTRIES];

	memset(rec, 0, sizeof(*rec));
	rec->context = 7;
	rec->seqno = seqno;
	rec->time_ns = t;
	rec->event = event;
	rec->cpu = i;
	strcpy(rec->driver, "vgem");
	memset(rec->timeline, 'x', sizeof(rec->timeline)); /* unterminated, as a bad kernel might */
	r->head++;
}

static void records_come_in_time_order_across_rings(void **state)
{
	uint8_t *a = make_area();
	struct fence_ring *fr;
	struct gm_fence_record out[8];
	uint64_t lost = 0;

	produce(a, 0, 99, 5, GM_FENCE_EVENT_INIT); /* before the reader: not seen */
	fr = fence_ring_open(a, SIZE);
	assert_non_null(fr);
	produce(a, 0, 1, 10, GM_FENCE_EVENT_INIT);
	produce(a, 1, 2, 15, GM_FENCE_EVENT_INIT);
	produce(a, 0, 1, 20, GM_FENCE_EVENT_SIGNAL);
	produce(a, 1, 2, 25, GM_FENCE_EVENT_SIGNAL);
	assert_int_equal(fence_ring_read(fr, out, 8, &lost), 4);
	assert_int_equal(lost, 0);
	assert_int_equal(out[0].time_ns, 10);
	assert_int_equal(out[1].time_ns, 15);
	assert_int_equal(out[2].time_ns, 20);
	assert_int_equal(out[3].time_ns, 25);
	assert_int_equal(out[3].cpu, 1);
	assert_int_equal(out[0].timeline[sizeof(out[0].timeline) - 1], '\0');
	assert_int_equal(fence_ring_read(fr, out, 8, &lost), 0);
	fence_ring_close(fr);
	free(a);
}

static void a_reader_that_fell_behind_counts_what_it_lost(void **state)
{
	uint8_t *a = make_area();
	struct fence_ring *fr = fence_ring_open(a, SIZE);
	struct gm_fence_record out[ENTRIES];
	uint64_t lost = 0;

	for (uint64_t i = 0; i < ENTRIES + 5; i++)
		produce(a, 0, i, 100 + i, GM_FENCE_EVENT_SIGNAL);
	assert_int_equal(fence_ring_read(fr, out, ENTRIES, &lost), ENTRIES);
	assert_int_equal(lost, 5);
	assert_int_equal(out[0].seqno, 5); /* the oldest kept */
	fence_ring_close(fr);
	free(a);
}

static void a_read_limit_leaves_the_rest_for_later(void **state)
{
	uint8_t *a = make_area();
	struct fence_ring *fr = fence_ring_open(a, SIZE);
	struct gm_fence_record out[4];

	for (uint64_t i = 0; i < 6; i++)
		produce(a, i % 2, i, 100 + i, GM_FENCE_EVENT_SIGNAL);
	assert_int_equal(fence_ring_read(fr, out, 4, NULL), 4);
	assert_int_equal(out[3].seqno, 3);
	assert_int_equal(fence_ring_read(fr, out, 4, NULL), 2);
	assert_int_equal(out[0].seqno, 4);
	fence_ring_skip(fr);
	produce(a, 0, 9, 200, GM_FENCE_EVENT_SIGNAL);
	assert_int_equal(fence_ring_read(fr, out, 4, NULL), 1);
	fence_ring_close(fr);
	free(a);
}

static void a_head_that_goes_back_is_not_followed(void **state)
{
	uint8_t *a = make_area();
	struct fence_ring *fr = fence_ring_open(a, SIZE);
	struct gm_fence_record out[4];

	produce(a, 0, 1, 10, GM_FENCE_EVENT_SIGNAL);
	produce(a, 0, 2, 11, GM_FENCE_EVENT_SIGNAL);
	assert_int_equal(fence_ring_read(fr, out, 4, NULL), 2);
	ring(a, 0)->head = 1; /* corrupt: behind what was read */
	assert_int_equal(fence_ring_read(fr, out, 4, NULL), 0);
	produce(a, 0, 3, 12, GM_FENCE_EVENT_SIGNAL);
	assert_int_equal(fence_ring_read(fr, out, 4, NULL), 1);
	assert_int_equal(out[0].seqno, 3);
	fence_ring_close(fr);
	free(a);
}

static void bad_headers_are_refused(void **state)
{
	static const struct {
		const char *description;
		size_t offset; /* of the u32 field to spoil */
		uint32_t value;
	} bad[] = {
	    {"magic", offsetof(struct gm_fence_header, magic), 0},
	    {"ABI version", offsetof(struct gm_fence_header, abi_version), 2},
	    {"no rings", offsetof(struct gm_fence_header, nr_rings), 0},
	    {"too many rings", offsetof(struct gm_fence_header, nr_rings),
	     FENCE_RING_MAX_RINGS + 1},
	    {"rings beyond the mapping", offsetof(struct gm_fence_header, nr_rings), 3},
	    {"no entries", offsetof(struct gm_fence_header, ring_entries), 0},
	    {"entries beyond the stride", offsetof(struct gm_fence_header, ring_entries),
	     ENTRIES + 1},
	    {"record size", offsetof(struct gm_fence_header, record_size), 8},
	    {"rings over the header", offsetof(struct gm_fence_header, rings_offset), 4},
	    {"rings offset beyond the mapping", offsetof(struct gm_fence_header, rings_offset),
	     UINT32_MAX},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t *a = make_area();
		struct fence_ring *fr;

		memcpy(a + bad[i].offset, &bad[i].value, sizeof(uint32_t));
		fr = fence_ring_open(a, SIZE);
		if (fr)
			fail_msg("%s: accepted", bad[i].description);
		free(a);
	}
	{
		uint8_t *a = make_area();

		assert_null(fence_ring_open(a, SIZE - 1));
		assert_null(fence_ring_open(a, 8));
		assert_null(fence_ring_open(NULL, SIZE));
		free(a);
	}
	fence_ring_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(records_come_in_time_order_across_rings),
	    cmocka_unit_test(a_reader_that_fell_behind_counts_what_it_lost),
	    cmocka_unit_test(a_read_limit_leaves_the_rest_for_later),
	    cmocka_unit_test(a_head_that_goes_back_is_not_followed),
	    cmocka_unit_test(bad_headers_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
