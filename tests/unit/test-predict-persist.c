// SPDX-License-Identifier: MIT
/*
 * Tests of the model state file (predict_persist.h): round trip of
 * several models, and refusal of corrupt, truncated and foreign files
 * without touching any model. Files live in a fresh directory under
 * $TMPDIR (or /tmp) that the test removes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "predict_model.h"
#include "predict_persist.h"

#define IDENTITY "NVIDIA H100 / nouveau 1.0 / virgl 0.10.4"

struct fixture {
	char dir[PATH_MAX];
	char path[PATH_MAX + 32];
	struct predict_persist_entry e[4];
};

static void train(struct predict_persist_entry *e, int n, unsigned seed)
{
	for (int k = 0; k < n; k++) {
		struct predict_features f = {.x = {[PF_GROUP] = 1}};

		f.x[PF_DRAWS] = (k * 7 + seed) % 13;
		f.x[PF_VERTICES] = f.x[PF_DRAWS] * (1000 + (k * 31 + seed) % 997);
		f.content_hash = (uint64_t)(k % 50);
		e->ops->update(e->model, &f, 30000 + 2000 * f.x[PF_DRAWS] + 0.5 * f.x[PF_VERTICES]);
	}
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	const char *tmp = getenv("TMPDIR");

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "%s/test-predict-persist.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->path, sizeof(fx->path), "%s/models.state", fx->dir);
	for (int i = 0; i < 4; i++) {
		fx->e[i].ops = predict_models[i];
		fx->e[i].model = predict_models[i]->create();
		train(&fx->e[i], 500, (unsigned)i);
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char tmp[PATH_MAX + 64];

	for (int i = 0; i < 4; i++)
		fx->e[i].ops->destroy(fx->e[i].model);
	unlink(fx->path);
	snprintf(tmp, sizeof(tmp), "%s/other", fx->dir);
	unlink(tmp);
	rmdir(fx->dir);
	free(fx);
	return 0;
}

/* Fresh, untrained models of the same kinds. */
static void fresh(struct predict_persist_entry out[4])
{
	for (int i = 0; i < 4; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].ops = predict_models[i];
		out[i].model = predict_models[i]->create();
		out[i].status = 1;
	}
}

static void drop(struct predict_persist_entry e[4])
{
	for (int i = 0; i < 4; i++)
		e[i].ops->destroy(e[i].model);
}

static void same_predictions(struct predict_persist_entry *a, struct predict_persist_entry *b,
			     bool equal)
{
	bool all = true;

	for (int k = 0; k < 40; k++) {
		struct predict_features f = {
		    .x = {[PF_GROUP] = 1, [PF_DRAWS] = k % 9, [PF_VERTICES] = 1500.0 * (k % 9)},
		    .content_hash = (uint64_t)k};

		if (a->ops->predict(a->model, &f) != b->ops->predict(b->model, &f))
			all = false;
	}
	assert_true(all == equal);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(1 << 20);

	assert_non_null(f);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

static void spit(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
}

static void several_models_survive_a_round_trip(void **state)
{
	struct fixture *fx = *state;
	struct predict_persist_entry back[4];

	assert_int_equal(predict_persist_save(fx->path, IDENTITY, fx->e, 4), 0);
	fresh(back);
	assert_int_equal(predict_persist_load(fx->path, IDENTITY, back, 4), 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(back[i].status, 0);
		same_predictions(&fx->e[i], &back[i], true);
	}
	drop(back);
}

static void models_missing_from_the_file_are_left_alone(void **state)
{
	struct fixture *fx = *state;
	struct predict_persist_entry back[4];

	assert_int_equal(predict_persist_save(fx->path, IDENTITY, &fx->e[2], 1), 0); /* sgd */
	fresh(back);
	assert_int_equal(predict_persist_load(fx->path, IDENTITY, back, 4), 0);
	assert_int_equal(back[0].status, -ENOENT);
	assert_int_equal(back[2].status, 0);
	same_predictions(&fx->e[2], &back[2], true);
	drop(back);
}

/* A section of a few bytes, saved and loaded through the same file as the models. */
struct blob {
	uint8_t bytes[3];
	bool refuse;
};

static int blob_save(const void *obj, uint8_t *buf, size_t size)
{
	if (size < 3)
		return -ENOSPC;
	memcpy(buf, ((const struct blob *)obj)->bytes, 3);
	return 3;
}

static int blob_load(void *obj, const uint8_t *buf, size_t size)
{
	struct blob *b = obj;

	if (size != 3 || b->refuse)
		return -EINVAL;
	memcpy(b->bytes, buf, 3);
	return 0;
}

static const struct predict_persist_section blob_section = {"blob", blob_save, blob_load};
static const struct predict_persist_section other_section = {"other", blob_save, blob_load};

static void sections_are_kept_next_to_the_models(void **state)
{
	struct fixture *fx = *state;
	struct blob saved = {{1, 2, 3}, false}, back = {{0}, false}, other = {{9, 9, 9}, false};
	struct predict_persist_entry e[2] = {fx->e[2], {.section = &blob_section, .obj = &saved}};
	struct predict_persist_entry r[3];

	assert_int_equal(predict_persist_save(fx->path, IDENTITY, e, 2), 0);
	memset(&r[0], 0, sizeof(r[0]));
	r[0].ops = predict_models[2];
	r[0].model = predict_models[2]->create();
	memset(&r[1], 0, sizeof(r[1]));
	r[1].section = &blob_section;
	r[1].obj = &back;
	memset(&r[2], 0, sizeof(r[2]));
	r[2].section = &other_section;
	r[2].obj = &other;
	assert_int_equal(predict_persist_load(fx->path, IDENTITY, r, 3), 0);
	assert_int_equal(r[0].status, 0);
	assert_int_equal(r[1].status, 0);
	assert_memory_equal(back.bytes, saved.bytes, 3);
	assert_int_equal(r[2].status, -ENOENT); /* not in the file: left alone */
	assert_int_equal(other.bytes[0], 9);
	same_predictions(&fx->e[2], &r[0], true);

	/* A section that refuses its state: reported, the others still loaded. */
	back.refuse = true;
	assert_int_equal(predict_persist_load(fx->path, IDENTITY, r, 3), -EINVAL);
	assert_int_equal(r[1].status, -EINVAL);
	assert_int_equal(r[0].status, 0);

	/* An entry naming both a model and a section, or neither, is refused. */
	r[1].ops = predict_models[0];
	r[1].model = r[0].model;
	assert_int_equal(predict_persist_save(fx->path, IDENTITY, r, 2), -EINVAL);
	memset(&r[1], 0, sizeof(r[1]));
	assert_int_equal(predict_persist_save(fx->path, IDENTITY, r, 2), -EINVAL);
	/* Two entries of one name are refused. */
	r[1].section = &blob_section;
	r[1].obj = &back;
	r[2].section = &blob_section;
	assert_int_equal(predict_persist_save(fx->path, IDENTITY, r, 3), -EINVAL);
	predict_models[2]->destroy(r[0].model);
}

static void every_corrupt_byte_is_refused(void **state)
{
	struct fixture *fx = *state;
	struct predict_persist_entry back[4];
	size_t len;
	uint8_t *buf;

	assert_int_equal(predict_persist_save(fx->path, IDENTITY, fx->e, 4), 0);
	buf = slurp(fx->path, &len);
	fresh(back);
	for (size_t i = 0; i < len; i += (i < 64 ? 1 : 97)) {
		buf[i] ^= 0x40;
		spit(fx->path, buf, len);
		assert_int_equal(predict_persist_load(fx->path, IDENTITY, back, 4), -EINVAL);
		buf[i] ^= 0x40;
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(back[i].status, 1); /* not even looked at */
		same_predictions(&fx->e[i], &back[i], false);
	}
	drop(back);
	free(buf);
}

static void truncated_files_are_refused(void **state)
{
	struct fixture *fx = *state;
	struct predict_persist_entry back[4];
	size_t len;
	uint8_t *buf;

	assert_int_equal(predict_persist_save(fx->path, IDENTITY, fx->e, 4), 0);
	buf = slurp(fx->path, &len);
	fresh(back);
	for (size_t n = 0; n < len; n += (n < 64 ? 1 : 89)) {
		spit(fx->path, buf, n);
		assert_int_equal(predict_persist_load(fx->path, IDENTITY, back, 4), -EINVAL);
	}
	/* Extra bytes after the CRC too. */
	buf[len] = 0;
	spit(fx->path, buf, len + 1);
	assert_int_equal(predict_persist_load(fx->path, IDENTITY, back, 4), -EINVAL);
	drop(back);
	free(buf);
}

static void a_file_of_another_gpu_is_refused(void **state)
{
	struct fixture *fx = *state;
	struct predict_persist_entry back[4];

	assert_int_equal(predict_persist_save(fx->path, "Mali-G52 / panfrost", fx->e, 4), 0);
	fresh(back);
	assert_int_equal(predict_persist_load(fx->path, IDENTITY, back, 4), -ESTALE);
	for (int i = 0; i < 4; i++)
		same_predictions(&fx->e[i], &back[i], false);
	drop(back);
}

static void a_null_identity_accepts_any_gpu(void **state)
{
	struct fixture *fx = *state;
	struct predict_persist_entry back[4];

	assert_int_equal(predict_persist_save(fx->path, "Mali-G52 / panfrost", fx->e, 4), 0);
	fresh(back);
	assert_int_equal(predict_persist_load(fx->path, NULL, back, 4), 0);
	for (int i = 0; i < 4; i++)
		same_predictions(&fx->e[i], &back[i], true);
	drop(back);
}

static void a_missing_file_is_enoent(void **state)
{
	struct fixture *fx = *state;
	char other[PATH_MAX + 64];

	snprintf(other, sizeof(other), "%s/other", fx->dir);
	assert_int_equal(predict_persist_load(other, IDENTITY, fx->e, 4), -ENOENT);
}

static void save_replaces_the_file_atomically_and_leaves_no_temporary(void **state)
{
	struct fixture *fx = *state;
	char cmd[PATH_MAX + 64];
	int n = 0;
	FILE *ls;

	assert_int_equal(predict_persist_save(fx->path, IDENTITY, fx->e, 4), 0);
	assert_int_equal(predict_persist_save(fx->path, IDENTITY, fx->e, 2), 0);
	snprintf(cmd, sizeof(cmd), "ls -A '%s'", fx->dir);
	ls = popen(cmd, "r");
	assert_non_null(ls);
	while (fgets(cmd, sizeof(cmd), ls))
		n++;
	pclose(ls);
	assert_int_equal(n, 1);
	/* Bad arguments are refused before anything is written. */
	assert_int_equal(predict_persist_save(fx->path, NULL, fx->e, 4), -EINVAL);
	{
		struct predict_persist_entry dup[2] = {fx->e[1], fx->e[1]};

		assert_int_equal(predict_persist_save(fx->path, IDENTITY, dup, 2), -EINVAL);
	}
}

/* Creates @dir/@name, last written @age_s seconds ago. */
static void file_aged(const char *dir, const char *name, time_t age_s)
{
	char path[PATH_MAX + 64];
	struct timespec t[2];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= age_s;
	t[1] = t[0];
	assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

static bool exists_in(const char *dir, const char *name)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/*
 * A worker stopped while it saved leaves its temporary file: the next one
 * removes those older than the limit, and nothing else (another worker's
 * save in progress, other files, the state itself).
 */
static void unfinished_saves_are_swept_and_nothing_else(void **state)
{
	struct fixture *fx = *state;
	static const char *const names[] = {"models.state.tmp.old1", "models.state.tmp.old2",
					    "models.state.tmp.young", "other.state.tmp.old",
					    "models.state.tmpx"};

	assert_int_equal(predict_persist_save(fx->path, IDENTITY, fx->e, 4), 0);
	file_aged(fx->dir, names[0], 3600);
	file_aged(fx->dir, names[1], 120);
	file_aged(fx->dir, names[2], 1);
	file_aged(fx->dir, names[3], 3600);
	file_aged(fx->dir, names[4], 3600);
	assert_int_equal(predict_persist_sweep(fx->path, 60), 2);
	assert_false(exists_in(fx->dir, names[0]));
	assert_false(exists_in(fx->dir, names[1]));
	for (int i = 2; i < 5; i++) {
		char path[PATH_MAX + 64];

		assert_true(exists_in(fx->dir, names[i]));
		snprintf(path, sizeof(path), "%s/%s", fx->dir, names[i]);
		unlink(path);
	}
	assert_true(exists_in(fx->dir, "models.state"));
	assert_int_equal(predict_persist_sweep(fx->path, 60), 0);
	/* A directory that cannot be read says so. */
	assert_int_equal(predict_persist_sweep("/nonexistent-gm/models.state", 60), -ENOENT);
}

static void crc32_matches_the_standard_check_value(void **state)
{
	assert_int_equal(predict_persist_crc32("123456789", 9), 0xcbf43926u);
	assert_int_equal(predict_persist_crc32("", 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(several_models_survive_a_round_trip, setup, teardown),
	    cmocka_unit_test_setup_teardown(models_missing_from_the_file_are_left_alone, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(sections_are_kept_next_to_the_models, setup, teardown),
	    cmocka_unit_test_setup_teardown(every_corrupt_byte_is_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(truncated_files_are_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_file_of_another_gpu_is_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_null_identity_accepts_any_gpu, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_missing_file_is_enoent, setup, teardown),
	    cmocka_unit_test_setup_teardown(unfinished_saves_are_swept_and_nothing_else, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(
		save_replaces_the_file_atomically_and_leaves_no_temporary, setup, teardown),
	    cmocka_unit_test(crc32_matches_the_standard_check_value),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
