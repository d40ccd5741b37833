/*
 * Tests of the virtio-gpu request checks (virtio_gpu_cmd.h): a case table
 * of malformed requests, each with the exact VIRTIO_GPU_RESP_ERR_* it gets,
 * and a well-formed request of every command the device serves.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "virtio_gpu_cmd.h"

/* A request of @len bytes whose header says @type; the rest from @body. */
static uint8_t *request(uint32_t type, size_t len)
{
	uint8_t *r = calloc(1, len < 64 ? 64 : len);
	struct virtio_gpu_ctrl_hdr h = {.type = type};

	memcpy(r, &h, sizeof(h) <= len ? sizeof(h) : len);
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

static void every_served_command_of_its_size_is_accepted(void **state)
{
	static const struct {
		uint32_t type;
		size_t size;
	} ok[] = {
	    {VIRTIO_GPU_CMD_GET_DISPLAY_INFO, sizeof(struct virtio_gpu_ctrl_hdr)},
	    {VIRTIO_GPU_CMD_RESOURCE_CREATE_2D, sizeof(struct virtio_gpu_resource_create_2d)},
	    {VIRTIO_GPU_CMD_RESOURCE_UNREF, sizeof(struct virtio_gpu_resource_unref)},
	    {VIRTIO_GPU_CMD_SET_SCANOUT, sizeof(struct virtio_gpu_set_scanout)},
	    {VIRTIO_GPU_CMD_RESOURCE_FLUSH, sizeof(struct virtio_gpu_resource_flush)},
	    {VIRTIO_GPU_CMD_TRANSFER_TO_HOST_2D, sizeof(struct virtio_gpu_transfer_to_host_2d)},
	    {VIRTIO_GPU_CMD_RESOURCE_DETACH_BACKING,
	     sizeof(struct virtio_gpu_resource_detach_backing)},
	    {VIRTIO_GPU_CMD_GET_CAPSET_INFO, sizeof(struct virtio_gpu_get_capset_info)},
	    {VIRTIO_GPU_CMD_GET_CAPSET, sizeof(struct virtio_gpu_get_capset)},
	    {VIRTIO_GPU_CMD_CTX_CREATE, sizeof(struct virtio_gpu_ctx_create)},
	    {VIRTIO_GPU_CMD_CTX_DESTROY, sizeof(struct virtio_gpu_ctx_destroy)},
	    {VIRTIO_GPU_CMD_CTX_ATTACH_RESOURCE, sizeof(struct virtio_gpu_ctx_resource)},
	    {VIRTIO_GPU_CMD_CTX_DETACH_RESOURCE, sizeof(struct virtio_gpu_ctx_resource)},
	    {VIRTIO_GPU_CMD_RESOURCE_CREATE_3D, sizeof(struct virtio_gpu_resource_create_3d)},
	    {VIRTIO_GPU_CMD_TRANSFER_TO_HOST_3D, sizeof(struct virtio_gpu_transfer_host_3d)},
	    {VIRTIO_GPU_CMD_TRANSFER_FROM_HOST_3D, sizeof(struct virtio_gpu_transfer_host_3d)},
	    {VIRTIO_GPU_CMD_SUBMIT_3D, sizeof(struct virtio_gpu_cmd_submit)},
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint8_t *r = request(ok[i].type, ok[i].size);

		if (check(r, ok[i].size, VGPU_QUEUE_CONTROL))
			fail_msg("%s refused", vgpu_cmd_name(ok[i].type));
		free(r);
	}
	for (uint32_t t = VIRTIO_GPU_CMD_UPDATE_CURSOR; t <= VIRTIO_GPU_CMD_MOVE_CURSOR; t++) {
		uint8_t *r = request(t, sizeof(struct virtio_gpu_update_cursor));

		assert_int_equal(
		    check(r, sizeof(struct virtio_gpu_update_cursor), VGPU_QUEUE_CURSOR), 0);
		free(r);
	}
}

static void malformed_requests_get_their_error(void **state)
{
	struct virtio_gpu_resource_attach_backing ab = {
	    .hdr.type = VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING, .resource_id = 1, .nr_entries = 2};
	struct virtio_gpu_cmd_submit sub = {.hdr.type = VIRTIO_GPU_CMD_SUBMIT_3D, .size = 8};
	struct virtio_gpu_ctx_create cc = {.hdr.type = VIRTIO_GPU_CMD_CTX_CREATE, .nlen = 65};
	uint8_t buf[256];
	struct {
		const char *description;
		const void *req;
		size_t len;
		enum vgpu_queue q;
		uint32_t expect;
	} cases[] = {
	    {"shorter than a header", &ab, 10, VGPU_QUEUE_CONTROL, VIRTIO_GPU_RESP_ERR_UNSPEC},
	    {"unknown command", NULL, 24, VGPU_QUEUE_CONTROL, VIRTIO_GPU_RESP_ERR_UNSPEC},
	    {"shorter than its command", &ab, sizeof(ab) - 4, VGPU_QUEUE_CONTROL,
	     VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER},
	    {"fewer backing entries than announced", buf,
	     sizeof(ab) + sizeof(struct virtio_gpu_mem_entry), VGPU_QUEUE_CONTROL,
	     VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER},
	    {"a stream beyond the request", &sub, sizeof(sub) + 4, VGPU_QUEUE_CONTROL,
	     VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER},
	    {"a name longer than its field", &cc, sizeof(cc), VGPU_QUEUE_CONTROL,
	     VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER},
	    {"a control command on the cursor queue", &sub, sizeof(sub) + 8, VGPU_QUEUE_CURSOR,
	     VIRTIO_GPU_RESP_ERR_UNSPEC},
	    {"larger than the device accepts", &sub, (size_t)VGPU_MAX_REQUEST + 1,
	     VGPU_QUEUE_CONTROL, VIRTIO_GPU_RESP_ERR_OUT_OF_MEMORY},
	};
	uint8_t *unknown = request(0x999, 24);

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &ab, sizeof(ab));
	cases[1].req = unknown;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t r = check(cases[i].req, cases[i].len, cases[i].q);

		if (r != cases[i].expect)
			fail_msg("%s: got %#x, expected %#x", cases[i].description, r,
				 cases[i].expect);
	}
	free(unknown);
}

static void counts_at_their_limits(void **state)
{
	size_t len = sizeof(struct virtio_gpu_resource_attach_backing);
	struct virtio_gpu_resource_attach_backing ab = {.hdr.type =
							    VIRTIO_GPU_CMD_RESOURCE_ATTACH_BACKING};
	struct virtio_gpu_cmd_submit sub = {.hdr.type = VIRTIO_GPU_CMD_SUBMIT_3D, .size = 6};
	struct virtio_gpu_update_cursor cur = {.hdr.type = VIRTIO_GPU_CMD_MOVE_CURSOR};

	ab.nr_entries = 0;
	assert_int_equal(check(&ab, len, VGPU_QUEUE_CONTROL),
			 VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER);
	ab.nr_entries = VGPU_MAX_BACKING_ENTRIES + 1;
	assert_int_equal(check(&ab, len, VGPU_QUEUE_CONTROL),
			 VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER);
	/* Not whole dwords. */
	{
		uint8_t buf[64] = {0};

		memcpy(buf, &sub, sizeof(sub));
		assert_int_equal(check(buf, sizeof(sub) + 8, VGPU_QUEUE_CONTROL),
				 VIRTIO_GPU_RESP_ERR_INVALID_PARAMETER);
	}
	assert_int_equal(check(&cur, sizeof(cur), VGPU_QUEUE_CONTROL), VIRTIO_GPU_RESP_ERR_UNSPEC);
	assert_string_equal(vgpu_cmd_name(VIRTIO_GPU_CMD_SUBMIT_3D), "SUBMIT_3D");
	assert_string_equal(vgpu_cmd_name(0x999), "unknown");
	assert_string_equal(vgpu_cmd_name(VIRTIO_GPU_CMD_GET_EDID), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_served_command_of_its_size_is_accepted),
	    cmocka_unit_test(malformed_requests_get_their_error),
	    cmocka_unit_test(counts_at_their_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
