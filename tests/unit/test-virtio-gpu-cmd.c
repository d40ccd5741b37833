// SPDX-License-Identifier: MIT
/*
 * Tests of the virtio-gpu request checks (virtio_gpu_cmd.h): a case table
 * of requests, each with the exact VIRTIO_GPU_RESP_ERR_* it gets (or 0),
 * a well-formed request of every command the device serves, and every one
 * of them a byte short. Each request lives in a buffer of exactly its
 * length, so that a check reading past the request shows under ASan.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "worker/vhost-user/virtio_gpu_cmd.h"

#define HDR	 sizeof(struct virtio_gpu_ctrl_hdr)
#define BACKING	 sizeof(struct virtio_gpu_resource_attach_backing)
#define ENTRY	 sizeof(struct virtio_gpu_mem_entry)
#define SUBMIT	 sizeof(struct virtio_gpu_cmd_submit)
#define CTX	 sizeof(struct virtio_gpu_ctx_create)
#define CURSOR	 sizeof(struct virtio_gpu_update_cursor)
#define NR	 offsetof(struct virtio_gpu_resource_attach_backing, nr_entries)
#define STREAM	 offsetof(struct virtio_gpu_cmd_submit, size)
#define NLEN	 offsetof(struct virtio_gpu_ctx_create, nlen)
#define NO_FIELD 0

#define INVALID VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER
#define UNSPEC	VIRTIO_GPU_RESP_ERR_UNSPEC

/*
 * A zeroed request of exactly @len bytes whose header says @type (as much
 * of the header as fits) and whose u32 at @field is @value (when it fits).
 */
static uint8_t *request(uint32_t type, size_t len, size_t field, uint32_t value)
{
	struct virtio_gpu_ctrl_hdr h = {.type = type};
	uint8_t *r = calloc(1, len ? len : 1);

	assert_non_null(r);
	memcpy(r, &h, len < HDR ? len : HDR);
	if (field != NO_FIELD && field + sizeof(value) <= len)
		memcpy(r + field, &value, sizeof(value));
	return r;
}

static uint32_t check(const void *req, size_t len, enum vgpu_queue q)
{
	const char *what = NULL;
	uint32_t r = vgpu_cmd_check(req, len, q, &what);

	if (r)
		assert_non_null(what);
	return r;
}

static const struct {
	uint32_t type;
	size_t size;
	enum vgpu_queue q;
} served[] = {
    {VIRTIO_GPU_CMD_GET_DISPLAY_INFO, HDR, VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_RESOURCE_CREATE_2D, sizeof(struct virtio_gpu_resource_create_2d),
     VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_RESOURCE_UNREF, sizeof(struct virtio_gpu_resource_unref), VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_SET_SCANOUT, sizeof(struct virtio_gpu_set_scanout), VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_RESOURCE_FLUSH, sizeof(struct virtio_gpu_resource_flush), VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_TRANSFER_TO_HOST_2D, sizeof(struct virtio_gpu_transfer_to_host_2d),
     VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_RESOURCE_DETACH_BACKING, sizeof(struct virtio_gpu_resource_detach_backing),
     VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_GET_CAPSET_INFO, sizeof(struct virtio_gpu_get_capset_info), VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_GET_CAPSET, sizeof(struct virtio_gpu_get_capset), VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_GET_EDID, sizeof(struct virtio_gpu_cmd_get_edid), VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_CTX_CREATE, CTX, VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_CTX_DESTROY, sizeof(struct virtio_gpu_ctx_destroy), VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_CTX_ATTACH_RESOURCE, sizeof(struct virtio_gpu_ctx_resource),
     VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_CTX_DETACH_RESOURCE, sizeof(struct virtio_gpu_ctx_resource),
     VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_RESOURCE_CREATE_3D, sizeof(struct virtio_gpu_resource_create_3d),
     VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_TRANSFER_TO_HOST_3D, sizeof(struct virtio_gpu_transfer_host_3d),
     VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_TRANSFER_FROM_HOST_3D, sizeof(struct virtio_gpu_transfer_host_3d),
     VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_SUBMIT_3D, SUBMIT, VGPU_QUEUE_CONTROL},
    {VIRTIO_GPU_CMD_UPDATE_CURSOR, CURSOR, VGPU_QUEUE_CURSOR},
    {VIRTIO_GPU_CMD_MOVE_CURSOR, CURSOR, VGPU_QUEUE_CURSOR},
};

static void every_served_command_of_its_size_is_accepted(void **state)
{
	for (size_t i = 0; i < sizeof(served) / sizeof(served[0]); i++) {
		uint8_t *r = request(served[i].type, served[i].size, NO_FIELD, 0);

		if (check(r, served[i].size, served[i].q))
			fail_msg("%s refused", vgpu_cmd_name(served[i].type));
		free(r);
	}
}

static void every_served_command_a_byte_short_is_an_invalid_parameter(void **state)
{
	for (size_t i = 0; i < sizeof(served) / sizeof(served[0]); i++) {
		size_t len = served[i].size - 1;
		uint8_t *r;

		if (len < HDR)
			continue; /* GET_DISPLAY_INFO is only a header */
		r = request(served[i].type, len, NO_FIELD, 0);
		if (check(r, len, served[i].q) != INVALID)
			fail_msg("%s a byte short: got %#x", vgpu_cmd_name(served[i].type),
				 check(r, len, served[i].q));
		free(r);
	}
}

static const struct {
	const char *description;
	uint32_t type;
	size_t len;
	enum vgpu_queue q;
	size_t field; /* a u32 of the request set to value, or NO_FIELD */
	uint32_t value;
	uint32_t expect;
} cases[] = {
    /* The header and the queue. */
    {"an empty request", VIRTIO_GPU_CMD_GET_DISPLAY_INFO, 0, VGPU_QUEUE_CONTROL, NO_FIELD, 0,
     UNSPEC},
    {"a header cut short", VIRTIO_GPU_CMD_GET_DISPLAY_INFO, HDR - 1, VGPU_QUEUE_CONTROL, NO_FIELD,
     0, UNSPEC},
    {"type 0", 0, HDR, VGPU_QUEUE_CONTROL, NO_FIELD, 0, UNSPEC},
    {"an unknown command", 0x999, 64, VGPU_QUEUE_CONTROL, NO_FIELD, 0, UNSPEC},
    {"a response type as a command", VIRTIO_GPU_RESP_OK_NODATA, 64, VGPU_QUEUE_CONTROL, NO_FIELD, 0,
     UNSPEC},
    {"GET_EDID on the cursor queue", VIRTIO_GPU_CMD_GET_EDID,
     sizeof(struct virtio_gpu_cmd_get_edid), VGPU_QUEUE_CURSOR, NO_FIELD, 0, UNSPEC},
    {"RESOURCE_ASSIGN_UUID, not served", VIRTIO_GPU_CMD_RESOURCE_ASSIGN_UUID, 64,
     VGPU_QUEUE_CONTROL, NO_FIELD, 0, UNSPEC},
    {"RESOURCE_CREATE_BLOB, not served", VIRTIO_GPU_CMD_RESOURCE_CREATE_BLOB, 64,
     VGPU_QUEUE_CONTROL, NO_FIELD, 0, UNSPEC},
    {"RESOURCE_MAP_BLOB, not served", VIRTIO_GPU_CMD_RESOURCE_MAP_BLOB, 64, VGPU_QUEUE_CONTROL,
     NO_FIELD, 0, UNSPEC},
    {"UPDATE_CURSOR on the control queue", VIRTIO_GPU_CMD_UPDATE_CURSOR, CURSOR, VGPU_QUEUE_CONTROL,
     NO_FIELD, 0, UNSPEC},
    {"MOVE_CURSOR on the control queue", VIRTIO_GPU_CMD_MOVE_CURSOR, CURSOR, VGPU_QUEUE_CONTROL,
     NO_FIELD, 0, UNSPEC},
    {"GET_DISPLAY_INFO on the cursor queue", VIRTIO_GPU_CMD_GET_DISPLAY_INFO, HDR,
     VGPU_QUEUE_CURSOR, NO_FIELD, 0, UNSPEC},
    {"SUBMIT_3D on the cursor queue", VIRTIO_GPU_CMD_SUBMIT_3D, SUBMIT, VGPU_QUEUE_CURSOR, NO_FIELD,
     0, UNSPEC},
    {"a cursor request a byte short of its header", VIRTIO_GPU_CMD_MOVE_CURSOR, HDR - 1,
     VGPU_QUEUE_CURSOR, NO_FIELD, 0, UNSPEC},
    /* RESOURCE_ATTACH_BACKING's entries. */
    {"ATTACH_BACKING with no entries", VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING, BACKING,
     VGPU_QUEUE_CONTROL, NR, 0, INVALID},
    {"ATTACH_BACKING with one entry", VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING, BACKING + ENTRY,
     VGPU_QUEUE_CONTROL, NR, 1, 0},
    {"ATTACH_BACKING with bytes to spare after its entries", VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING,
     BACKING + 2 * ENTRY + 3, VGPU_QUEUE_CONTROL, NR, 2, 0},
    {"ATTACH_BACKING with fewer entries than announced", VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING,
     BACKING + ENTRY, VGPU_QUEUE_CONTROL, NR, 2, INVALID},
    {"ATTACH_BACKING a byte short of its last entry", VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING,
     BACKING + 2 * ENTRY - 1, VGPU_QUEUE_CONTROL, NR, 2, INVALID},
    {"ATTACH_BACKING with entries announced but none present",
     VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING, BACKING, VGPU_QUEUE_CONTROL, NR, 1, INVALID},
    {"ATTACH_BACKING with VGPU_MAX_BACKING_ENTRIES entries", VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING,
     BACKING + (size_t)VGPU_MAX_BACKING_ENTRIES *ENTRY, VGPU_QUEUE_CONTROL, NR,
     VGPU_MAX_BACKING_ENTRIES, 0},
    {"ATTACH_BACKING with one entry more than VGPU_MAX_BACKING_ENTRIES",
     VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING,
     BACKING + (size_t)(VGPU_MAX_BACKING_ENTRIES + 1) * ENTRY, VGPU_QUEUE_CONTROL, NR,
     VGPU_MAX_BACKING_ENTRIES + 1, INVALID},
    {"ATTACH_BACKING announcing 2^32 - 1 entries", VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING,
     BACKING + ENTRY, VGPU_QUEUE_CONTROL, NR, UINT32_MAX, INVALID},
    /* SUBMIT_3D's command stream. */
    {"SUBMIT_3D with an empty stream", VIRTIO_GPU_CMD_SUBMIT_3D, SUBMIT, VGPU_QUEUE_CONTROL, STREAM,
     0, 0},
    {"SUBMIT_3D whose stream fills the request", VIRTIO_GPU_CMD_SUBMIT_3D, SUBMIT + 16,
     VGPU_QUEUE_CONTROL, STREAM, 16, 0},
    {"SUBMIT_3D with a stream shorter than the request", VIRTIO_GPU_CMD_SUBMIT_3D, SUBMIT + 16,
     VGPU_QUEUE_CONTROL, STREAM, 8, 0},
    {"SUBMIT_3D with a stream not of whole dwords", VIRTIO_GPU_CMD_SUBMIT_3D, SUBMIT + 8,
     VGPU_QUEUE_CONTROL, STREAM, 6, INVALID},
    {"SUBMIT_3D with a stream beyond the request", VIRTIO_GPU_CMD_SUBMIT_3D, SUBMIT + 4,
     VGPU_QUEUE_CONTROL, STREAM, 8, INVALID},
    {"SUBMIT_3D with a stream of 2^32 - 4 bytes", VIRTIO_GPU_CMD_SUBMIT_3D, SUBMIT + 4,
     VGPU_QUEUE_CONTROL, STREAM, UINT32_MAX - 3, INVALID},
    /* CTX_CREATE's debug name. */
    {"CTX_CREATE with a name of 64 bytes", VIRTIO_GPU_CMD_CTX_CREATE, CTX, VGPU_QUEUE_CONTROL, NLEN,
     64, 0},
    {"CTX_CREATE with a name of 65 bytes", VIRTIO_GPU_CMD_CTX_CREATE, CTX, VGPU_QUEUE_CONTROL, NLEN,
     65, INVALID},
    {"CTX_CREATE with a name of 2^32 - 1 bytes", VIRTIO_GPU_CMD_CTX_CREATE, CTX, VGPU_QUEUE_CONTROL,
     NLEN, UINT32_MAX, INVALID},
    /* The whole request's size. */
    {"SUBMIT_3D of VGPU_MAX_REQUEST bytes", VIRTIO_GPU_CMD_SUBMIT_3D, VGPU_MAX_REQUEST,
     VGPU_QUEUE_CONTROL, STREAM, VGPU_MAX_REQUEST - SUBMIT, 0},
    {"SUBMIT_3D of a byte more than VGPU_MAX_REQUEST", VIRTIO_GPU_CMD_SUBMIT_3D,
     (size_t)VGPU_MAX_REQUEST + 1, VGPU_QUEUE_CONTROL, STREAM, 0,
     VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY},
    {"GET_DISPLAY_INFO of a byte more than VGPU_MAX_REQUEST", VIRTIO_GPU_CMD_GET_DISPLAY_INFO,
     (size_t)VGPU_MAX_REQUEST + 1, VGPU_QUEUE_CONTROL, NO_FIELD, 0,
     VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY},
};

static void every_request_of_the_table_gets_its_answer(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t *r = request(cases[i].type, cases[i].len, cases[i].field, cases[i].value);
		uint32_t got = check(r, cases[i].len, cases[i].q);

		if (got != cases[i].expect)
			fail_msg("%s: got %#x, expected %#x", cases[i].description, got,
				 cases[i].expect);
		free(r);
	}
}

static void only_the_bytes_a_command_can_use_are_needed(void **state)
{
	struct virtio_gpu_ctrl_hdr hdr = {.type = VIRTIO_GPU_CMD_GET_DISPLAY_INFO};
	struct virtio_gpu_resource_attach_backing ab = {
	    .hdr.type = VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING, .nr_entries = 3};
	struct virtio_gpu_cmd_submit sub = {.hdr.type = VIRTIO_GPU_CMD_SUBMIT_3D, .size = 64};
	struct virtio_gpu_ctrl_hdr unknown = {.type = 0x999};

	/* GET_DISPLAY_INFO is its header, however large its buffer. */
	assert_int_equal(vgpu_cmd_needed_size(&hdr, sizeof(hdr)), sizeof(hdr));
	assert_int_equal(vgpu_cmd_needed_size(&ab, sizeof(ab)), sizeof(ab) + 3 * 16);
	assert_int_equal(vgpu_cmd_needed_size(&sub, sizeof(sub)), sizeof(sub) + 64);
	sub.size = UINT32_MAX;
	assert_true(vgpu_cmd_needed_size(&sub, sizeof(sub)) > VGPU_MAX_REQUEST);
	/* Counts past their limit, unknown commands, a cut fixed part: the
	 * fixed part (or the header) only. */
	ab.nr_entries = VGPU_MAX_BACKING_ENTRIES + 1;
	assert_int_equal(vgpu_cmd_needed_size(&ab, sizeof(ab)), sizeof(ab));
	assert_int_equal(vgpu_cmd_needed_size(&unknown, sizeof(unknown)), sizeof(unknown));
	assert_int_equal(vgpu_cmd_needed_size(&ab, 10), sizeof(struct virtio_gpu_ctrl_hdr));
	assert_int_equal(vgpu_cmd_needed_size(&ab, sizeof(hdr)), sizeof(ab));
	assert_true(sizeof(struct virtio_gpu_ctx_create) <= VGPU_CMD_MAX_FIXED);
}

static void commands_have_their_names(void **state)
{
	assert_string_equal(vgpu_cmd_name(VIRTIO_GPU_CMD_GET_DISPLAY_INFO), "GET_DISPLAY_INFO");
	assert_string_equal(vgpu_cmd_name(VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING),
			    "RESOURCE_ATTACH_BACKING");
	assert_string_equal(vgpu_cmd_name(VIRTIO_GPU_CMD_SUBMIT_3D), "SUBMIT_3D");
	assert_string_equal(vgpu_cmd_name(VIRTIO_GPU_CMD_MOVE_CURSOR), "MOVE_CURSOR");
	assert_string_equal(vgpu_cmd_name(0), "unknown");
	assert_string_equal(vgpu_cmd_name(0x999), "unknown");
	assert_string_equal(vgpu_cmd_name(VIRTIO_GPU_CMD_GET_EDID), "GET_EDID");
	assert_string_equal(vgpu_cmd_name(VIRTIO_GPU_CMD_RESOURCE_ASSIGN_UUID), "unknown");
	assert_string_equal(vgpu_cmd_name(VIRTIO_GPU_CMD_RESOURCE_MAP_BLOB), "unknown");
	assert_string_equal(vgpu_cmd_name(UINT32_MAX), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_served_command_of_its_size_is_accepted),
	    cmocka_unit_test(every_served_command_a_byte_short_is_an_invalid_parameter),
	    cmocka_unit_test(every_request_of_the_table_gets_its_answer),
	    cmocka_unit_test(commands_have_their_names),
	    cmocka_unit_test(only_the_bytes_a_command_can_use_are_needed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
