// SPDX-License-Identifier: MIT
/*
 * Tests of the memo of under-predicted groups (predict_memo.h), of the
 * context estimator around it (predict_estimator.h), and of the state
 * sections saved with a model (the memo, a context's fragment
 * estimators): what is remembered and what not, eviction, round trips,
 * and refusal of bad states without changing anything.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "predict_ctx.h"
#include "predict_estimator.h"
#include "predict_memo.h"

#define MS 1000000.0

/*
 * Only groups the model predicted far off (by 2x and by 250 us or more,
 * either way) are remembered, and a context's start-up groups.
 */
static void only_groups_far_off_the_model_or_at_start_up_are_remembered(void **state)
{
	struct predict_memo *m = predict_memo_create();

	assert_non_null(m);
	assert_false(predict_memo_update(m, 1, 1 * MS, 1.9 * MS, 0));	/* under 2x */
	assert_false(predict_memo_update(m, 2, 0.1 * MS, 0.3 * MS, 0)); /* 3x, but 200 us */
	assert_false(predict_memo_update(m, 3, 0.4 * MS, 0.2 * MS, 0)); /* over, 200 us */
	assert_false(predict_memo_update(m, 4, 1 * MS, NAN, 0));
	assert_false(predict_memo_update(m, 5, NAN, 20 * MS, 0));
	assert_int_equal(predict_memo_size(m), 0);
	assert_true(predict_memo_lookup(m, 1) < 0);

	assert_true(predict_memo_update(m, 6, 1 * MS, 18 * MS, 0)); /* a shader compile */
	assert_int_equal(predict_memo_size(m), 1);
	assert_true(predict_memo_lookup(m, 6) == 18 * MS);
	/* A later measurement the model still badly under-predicts replaces the time... */
	assert_false(predict_memo_update(m, 6, 1 * MS, 16 * MS, 0));
	assert_true(predict_memo_lookup(m, 6) == 16 * MS);
	/* ... one the model is no longer that far off makes the memo forget the content. */
	assert_false(predict_memo_update(m, 6, 1 * MS, 0.9 * MS, 0));
	assert_true(predict_memo_lookup(m, 6) < 0);
	assert_int_equal(predict_memo_size(m), 0);

	/* A group the model over-predicts 6x (a few state commands, 600 us) is a one-off too. */
	assert_true(predict_memo_update(m, 7, 0.6 * MS, 0.1 * MS, 0));
	assert_true(predict_memo_lookup(m, 7) == 0.1 * MS);
	/*
	 * A start-up group is remembered even when the model is right about
	 * it (a restart's model may not be), but it is no one-off.
	 */
	assert_false(predict_memo_update(m, 8, 0.05 * MS, 0.07 * MS, PREDICT_MEMO_START_UP));
	assert_true(predict_memo_lookup(m, 8) == 0.07 * MS);
	assert_false(predict_memo_update(m, 9, 0.05 * MS, 0.07 * MS,
					 PREDICT_MEMO_START_UP | PREDICT_MEMO_KNOWN_KIND));
	assert_true(predict_memo_lookup(m, 9) < 0);
	assert_int_equal(predict_memo_size(m), 2);
	predict_memo_destroy(m);
	predict_memo_destroy(NULL);
}

/*
 * Only a content's first group is remembered: a repeated group that ran
 * long once (a noisy stretch) is not, while a new content that did (a
 * shader compile) is.
 */
static void a_repeated_content_that_ran_long_once_is_not_remembered(void **state)
{
	struct predict_memo *m = predict_memo_create();

	(void)state;
	for (int i = 0; i < 5; i++)
		assert_false(predict_memo_update(m, 7, 10 * MS, 10 * MS, 0));
	assert_false(predict_memo_update(m, 7, 10 * MS, 38 * MS, 0));
	assert_true(predict_memo_lookup(m, 7) < 0);
	assert_true(predict_memo_update(m, 8, 1 * MS, 18 * MS, 0));
	assert_true(predict_memo_update(m, 0, 1 * MS, 18 * MS, 0)); /* hash 0 is a content too */
	assert_int_equal(predict_memo_size(m), 2);
	predict_memo_destroy(m);
}

/*
 * Nor is a new content of a kind measured lately: long-draws cycles
 * through contents of one kind, and one that ran 36 ms instead of 12 ms
 * (a host stall) would be predicted at 36 ms when it comes again.
 */
static void a_new_content_of_a_known_kind_is_not_remembered(void **state)
{
	struct predict_memo *m = predict_memo_create();

	(void)state;
	assert_false(predict_memo_update(m, 9, 12 * MS, 36 * MS, PREDICT_MEMO_KNOWN_KIND));
	assert_true(predict_memo_lookup(m, 9) < 0);
	assert_int_equal(predict_memo_size(m), 0);
	/* Once remembered, a content's time is still replaced whatever its kind. */
	assert_true(predict_memo_update(m, 10, 1 * MS, 18 * MS, 0));
	assert_false(predict_memo_update(m, 10, 1 * MS, 16 * MS, PREDICT_MEMO_KNOWN_KIND));
	assert_true(predict_memo_lookup(m, 10) == 16 * MS);
	predict_memo_destroy(m);
}

/* What a restart does: @from saved, loaded into @to. */
static void restart(const struct predict_memo *from, struct predict_memo *to)
{
	uint8_t buf[4096];
	int n = predict_memo_save(from, buf, sizeof(buf));

	assert_true(n > 0);
	assert_int_equal(predict_memo_load(to, buf, (size_t)n), 0);
}

/*
 * A content first seen in this run stays remembered when the model
 * happens to be close (a start-up group seen once per start: the model's
 * prediction of it drifts from one start to the next); one that repeats
 * is forgotten once the model has caught up with it.
 */
static void a_start_up_group_stays_across_restarts(void **state)
{
	struct predict_memo *a = predict_memo_create(), *b = predict_memo_create();

	(void)state;
	/* First start: the model is right about the group by chance. */
	assert_false(predict_memo_update(a, 11, 0.7 * MS, 0.75 * MS, PREDICT_MEMO_START_UP));
	/* Next start: remembered, and right again by chance; it stays, with the new time. */
	restart(a, b);
	assert_true(predict_memo_lookup(b, 11) == 0.75 * MS);
	assert_false(predict_memo_update(b, 11, 0.8 * MS, 0.7 * MS, PREDICT_MEMO_START_UP));
	assert_true(predict_memo_lookup(b, 11) == 0.7 * MS);
	/* It repeats within this start and the model is still close: no one-off. */
	assert_false(predict_memo_update(b, 11, 0.8 * MS, 0.7 * MS, 0));
	assert_true(predict_memo_lookup(b, 11) < 0);
	predict_memo_destroy(a);
	predict_memo_destroy(b);
}

/* A full memo forgets the group used least recently. */
static void the_least_recently_used_group_is_forgotten(void **state)
{
	struct predict_memo *m = predict_memo_create();

	for (uint64_t h = 1; h <= PREDICT_MEMO_ENTRIES; h++)
		assert_true(predict_memo_update(m, h, 0, (double)h * MS, 0));
	assert_int_equal(predict_memo_size(m), PREDICT_MEMO_ENTRIES);
	assert_true(predict_memo_lookup(m, 1) == 1 * MS); /* 1 is now the most recent */
	assert_true(predict_memo_update(m, 1000, 0, 5 * MS, 0));
	assert_int_equal(predict_memo_size(m), PREDICT_MEMO_ENTRIES);
	assert_true(predict_memo_lookup(m, 1) == 1 * MS);
	assert_true(predict_memo_lookup(m, 2) < 0); /* the oldest went */
	assert_true(predict_memo_lookup(m, 1000) == 5 * MS);
	predict_memo_destroy(m);
}

/* Save, load into a fresh memo: same groups, same order of use. */
static void the_memo_survives_a_round_trip(void **state)
{
	struct predict_memo *a = predict_memo_create(), *b = predict_memo_create();
	uint8_t buf[4096];
	int n;

	for (uint64_t h = 1; h <= PREDICT_MEMO_ENTRIES; h++)
		predict_memo_update(a, h * 7919, 0, (double)h * MS, 0);
	predict_memo_lookup(a, 7919); /* the first becomes the most recent */
	n = predict_memo_save(a, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(predict_memo_save(a, buf, 10), -ENOSPC);
	assert_int_equal(predict_memo_load(b, buf, (size_t)n), 0);
	assert_int_equal(predict_memo_size(b), PREDICT_MEMO_ENTRIES);
	/* The order of use came along: a new group pushes out the second, not the first. */
	assert_true(predict_memo_update(b, 424242, 0, 9 * MS, 0));
	assert_true(predict_memo_lookup(b, 2 * 7919) < 0);
	for (uint64_t h = 1; h <= PREDICT_MEMO_ENTRIES; h++) {
		if (h != 2)
			assert_true(predict_memo_lookup(b, h * 7919) == (double)h * MS);
	}
	predict_memo_destroy(a);
	predict_memo_destroy(b);
}

/* Truncated, padded, duplicate, non-finite and oversized states are refused; nothing changes. */
static void bad_memo_states_are_refused(void **state)
{
	struct predict_memo *a = predict_memo_create(), *b = predict_memo_create();
	uint8_t buf[4096], bad[4096];
	int n;

	predict_memo_update(a, 11, 0, 3 * MS, 0);
	predict_memo_update(a, 22, 0, 4 * MS, 0);
	predict_memo_update(b, 99, 0, 7 * MS, 0);
	n = predict_memo_save(a, buf, sizeof(buf));
	assert_true(n > 0);
	for (int len = 0; len < n; len++)
		assert_int_equal(predict_memo_load(b, buf, (size_t)len), -EINVAL);
	memcpy(bad, buf, (size_t)n);
	assert_int_equal(predict_memo_load(b, bad, (size_t)n + 1), -EINVAL);
	/* The second hash (bytes 16..23 after header and count) made equal to the first. */
	memcpy(bad + 12 + 4 + 16, bad + 12 + 4, 8);
	assert_int_equal(predict_memo_load(b, bad, (size_t)n), -EINVAL);
	memcpy(bad, buf, (size_t)n);
	memset(bad + 12 + 4 + 8, 0xff, 8); /* a NaN time */
	assert_int_equal(predict_memo_load(b, bad, (size_t)n), -EINVAL);
	memcpy(bad, buf, (size_t)n);
	bad[12] = 200; /* more groups than a memo holds */
	assert_int_equal(predict_memo_load(b, bad, (size_t)n), -EINVAL);
	assert_int_equal(predict_memo_size(b), 1);
	assert_true(predict_memo_lookup(b, 99) == 7 * MS);
	predict_memo_destroy(a);
	predict_memo_destroy(b);
}

static void features(struct predict_features *f, uint64_t hash, double draws)
{
	memset(f, 0, sizeof(*f));
	f->x[PF_GROUP] = 1;
	f->x[PF_DRAWS] = draws;
	f->content_hash = hash;
}

/*
 * The estimator predicts a remembered group from the memo, the others
 * from the model; after a restart's first groups re-anchored the level,
 * the prediction is the model's own. Once the model predicts the
 * remembered group itself, the memo forgets it.
 */
static void the_estimator_uses_the_memo_and_re_anchors(void **state)
{
	struct predict_estimator *e = predict_estimator_create(
	    predict_model_find("rls"), PREDICT_ESTIMATOR_MEMO | PREDICT_ESTIMATOR_REANCHOR);
	struct predict_estimator *plain = predict_estimator_create(predict_model_find("rls"), 0);
	struct predict_features f;
	struct predict_estimate est;

	assert_non_null(e);
	assert_non_null(plain);
	/* Draws cost 1 ms each plus 100 us; the first one compiles for 20 ms. */
	features(&f, 0xc0ffee, 1);
	predict_estimator_predict(e, &f, &est);
	assert_false(est.memo);
	predict_estimator_learn(e, &f, &est, 20 * MS);
	predict_estimator_predict(e, &f, &est);
	assert_true(est.memo);
	assert_true(est.predicted_ns == 20 * MS);
	assert_true(est.bound_ns >= est.predicted_ns);
	predict_estimator_learn(e, &f, &est, 1.1 * MS); /* compiled now: the model is not far off */
	for (int i = 0; i < 200; i++) {
		features(&f, (uint64_t)i + 1, 1 + i % 4);
		predict_estimator_predict(e, &f, &est);
		assert_false(est.memo);
		assert_true(est.bound_ns >= est.predicted_ns);
		if (i >= 64)
			assert_true(est.predicted_ns == est.model_ns);
		predict_estimator_learn(e, &f, &est, 0.1 * MS + (1 + i % 4) * MS);
		predict_estimator_predict(plain, &f, &est);
		assert_false(est.memo);
		predict_estimator_learn(plain, &f, &est, 20 * MS);
	}
	/*
	 * The model had learned from the compile alone when the second
	 * measurement (1.1 ms) came: far off, so the memo kept that time.
	 * Now the model predicts the group itself, and the memo forgets it.
	 */
	features(&f, 0xc0ffee, 1);
	predict_estimator_predict(e, &f, &est);
	assert_true(est.memo);
	assert_true(est.predicted_ns == 1.1 * MS);
	predict_estimator_learn(e, &f, &est, 1.1 * MS);
	predict_estimator_predict(e, &f, &est);
	assert_false(est.memo);
	assert_true(est.predicted_ns == est.model_ns);
	features(&f, 12345, 3);
	predict_estimator_predict(e, &f, &est);
	assert_true(fabs(est.predicted_ns - 3.1 * MS) < 0.05 * 3.1 * MS);
	assert_true(predict_estimator_margin(e) >= 0);
	assert_non_null(predict_estimator_model(e));
	assert_ptr_equal(predict_estimator_ops(e), predict_model_find("rls"));
	assert_int_equal(predict_memo_size(predict_estimator_memo(plain)), 0);
	predict_estimator_destroy(e);
	predict_estimator_destroy(plain);
	predict_estimator_destroy(NULL);
}

/*
 * The estimator's view of it: a start-up group of a few state commands
 * (75 us), then 500 draws of 2-3 ms. sgd's per-group constant takes part
 * of the draws' cost, so after them the model predicts the small group
 * far too long; a restart with the memo predicts it from last time.
 */
static void a_restart_predicts_a_start_up_group_from_last_time(void **state)
{
	const struct predict_model_ops *sgd = predict_model_find("sgd");
	struct predict_estimator *a = predict_estimator_create(sgd, PREDICT_ESTIMATOR_ALL);
	struct predict_estimator *b = predict_estimator_create(sgd, PREDICT_ESTIMATOR_ALL);
	struct predict_features f;
	struct predict_estimate est;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	features(&f, 0x5747e, 0);
	f.x[PF_CMDS] = 4;
	predict_estimator_predict(a, &f, &est);
	predict_estimator_learn(a, &f, &est, 0.075 * MS);
	for (uint64_t i = 1; i <= 500; i++) {
		features(&f, 1000 + i, 1);
		f.x[PF_CMDS] = 5;
		f.x[PF_FRAGMENTS] = 50000 + (double)(i % 7) * 10000;
		predict_estimator_predict(a, &f, &est);
		predict_estimator_learn(a, &f, &est, 0.4 * MS + f.x[PF_FRAGMENTS] * 30.0);
	}
	restart(predict_estimator_memo(a), predict_estimator_memo(b));
	features(&f, 0x5747e, 0);
	f.x[PF_CMDS] = 4;
	predict_estimator_predict(a, &f, &est);
	assert_true(est.memo);
	assert_true(est.predicted_ns == 0.075 * MS);
	assert_true(est.model_ns > 2 * 0.075 * MS); /* the model alone: far off */
	predict_estimator_predict(b, &f, &est);
	assert_true(est.memo);
	assert_true(est.predicted_ns == 0.075 * MS);
	predict_estimator_destroy(a);
	predict_estimator_destroy(b);
}

/*
 * With the per-kind table, a stall of one group among many of its kind
 * (each of new content) is not remembered: when that content comes again
 * it is predicted like its kind, not at the stall's time; a first group
 * of a new kind that runs long still is.
 */
static void the_estimator_remembers_no_stall_of_a_known_kind(void **state)
{
	struct predict_estimator *e =
	    predict_estimator_create(predict_model_find("sgd"), PREDICT_ESTIMATOR_ALL);
	struct predict_features f;
	struct predict_estimate est;

	(void)state;
	assert_non_null(e);
	for (uint64_t i = 1; i <= 400; i++) {
		features(&f, i, 4);
		predict_estimator_predict(e, &f, &est);
		predict_estimator_learn(e, &f, &est, i == 300 ? 36 * MS : 12 * MS);
	}
	features(&f, 300, 4);
	predict_estimator_predict(e, &f, &est);
	assert_false(est.memo);
	assert_true(fabs(est.predicted_ns - 12 * MS) < 0.1 * 12 * MS);
	/* A draw of another kind (a new shader) that compiles for 40 ms is a one-off. */
	features(&f, 5000, 1);
	f.x[PF_SHADER_TOKENS] = 500;
	predict_estimator_predict(e, &f, &est);
	predict_estimator_learn(e, &f, &est, 40 * MS);
	predict_estimator_predict(e, &f, &est);
	assert_true(est.memo);
	assert_true(est.predicted_ns == 40 * MS);
	predict_estimator_destroy(e);
}

/*
 * While its model is young, a context's bound is at least the longest
 * group it was seen to take, even when those groups were left out of the
 * residuals as start-up outliers, and the estimate says it is young;
 * after start-up the bound is the residuals'.
 */
static void a_young_context_is_bounded_by_what_it_took(void **state)
{
	struct predict_estimator *e =
	    predict_estimator_create(predict_model_find("sgd"), PREDICT_ESTIMATOR_ALL);
	struct predict_features f;
	struct predict_estimate est;

	assert_non_null(e);
	for (unsigned i = 0; i < PREDICT_ESTIMATOR_ANCHOR; i++) {
		/* The same long draw each time, with new content (uniforms). */
		features(&f, 1000 + i, 1);
		predict_estimator_predict(e, &f, &est);
		if (i > 0 && est.bound_ns < 8.5 * MS)
			fail_msg("group %u: bound %.0f ns below the 8.5 ms seen", i, est.bound_ns);
		assert_true(est.young); /* the scheduler is told that bound is a floor */
		predict_estimator_learn(e, &f, &est, 8.5 * MS);
	}
	/* A short group after start-up gets the residuals' bound, not the start-up floor. */
	for (unsigned i = 0; i < 600; i++) {
		features(&f, 5000 + i, 0.1);
		predict_estimator_predict(e, &f, &est);
		predict_estimator_learn(e, &f, &est, 0.2 * MS);
	}
	features(&f, 9999, 0.1);
	predict_estimator_predict(e, &f, &est);
	assert_true(est.bound_ns < 1 * MS);
	assert_false(est.young);
	predict_estimator_destroy(e);
}

/* What a context's fragment estimators learned survives a round trip; bad states are refused. */
static void fragment_estimators_survive_a_round_trip(void **state)
{
	struct predict_ctx *a = predict_ctx_create(), *b = predict_ctx_create();
	struct predict_fragment_stats sa, sb;
	struct predict_features f;
	uint8_t buf[1024], bad[1024];
	int n;

	memset(&f, 0, sizeof(f));
	f.frag.draws = f.frag.history_draws = 1;
	f.frag.vertices = 300;
	f.frag.history = 900;
	for (int i = 0; i < 12; i++)
		predict_ctx_observe_fragments(a, 1000 + 10 * i, &f);
	n = predict_ctx_save_fragments(a, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(predict_ctx_save_fragments(a, buf, 8), -ENOSPC);
	for (int len = 0; len < n; len++)
		assert_int_equal(predict_ctx_load_fragments(b, buf, (size_t)len), -EINVAL);
	memcpy(bad, buf, (size_t)n);
	memset(bad + 12, 0xff, 8); /* a NaN error */
	assert_int_equal(predict_ctx_load_fragments(b, bad, (size_t)n), -EINVAL);
	memcpy(bad, buf, (size_t)n);
	bad[12 + 24] = 99; /* more observations than a context keeps */
	assert_int_equal(predict_ctx_load_fragments(b, bad, (size_t)n), -EINVAL);
	predict_ctx_fragment_stats(b, &sb);
	assert_true(sb.history_error < 0); /* unchanged */

	assert_int_equal(predict_ctx_load_fragments(b, buf, (size_t)n), 0);
	predict_ctx_fragment_stats(a, &sa);
	predict_ctx_fragment_stats(b, &sb);
	assert_true(sa.history_error == sb.history_error);
	assert_true(sa.bbox_error == sb.bbox_error);
	assert_int_equal(sa.preferred, sb.preferred);
	assert_int_equal(sb.observed, 0); /* counted per context */
	/* Same saved state again: the ring came back in the same order. */
	assert_int_equal(predict_ctx_save_fragments(b, bad, sizeof(bad)), n);
	assert_memory_equal(bad, buf, (size_t)n);
	predict_ctx_destroy(a);
	predict_ctx_destroy(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(only_groups_far_off_the_model_or_at_start_up_are_remembered),
	    cmocka_unit_test(a_repeated_content_that_ran_long_once_is_not_remembered),
	    cmocka_unit_test(a_new_content_of_a_known_kind_is_not_remembered),
	    cmocka_unit_test(a_start_up_group_stays_across_restarts),
	    cmocka_unit_test(a_restart_predicts_a_start_up_group_from_last_time),
	    cmocka_unit_test(the_least_recently_used_group_is_forgotten),
	    cmocka_unit_test(the_memo_survives_a_round_trip),
	    cmocka_unit_test(bad_memo_states_are_refused),
	    cmocka_unit_test(the_estimator_uses_the_memo_and_re_anchors),
	    cmocka_unit_test(the_estimator_remembers_no_stall_of_a_known_kind),
	    cmocka_unit_test(a_young_context_is_bounded_by_what_it_took),
	    cmocka_unit_test(fragment_estimators_survive_a_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
