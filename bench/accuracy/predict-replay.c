// SPDX-License-Identifier: MIT
/*
 * predict-replay: replays per-group feature dumps (MEDIATOR_FEATURE_DUMP of
 * mediator-worker) through every cost model of libpredict, in order, each
 * model predicting a group before learning its measured time — exactly
 * what the worker does live — and prints the accuracy of each model on
 * the same data.
 *
 *   predict-replay [--skip N] [--first N] [--state FILE] [--cdf DIR] [--plain]
 *                  NAME FILE [FILE...]
 *
 * Each model runs inside a context estimator (predict_estimator.h) as in
 * the worker, with what the estimator adds (memo of under-predicted
 * groups, recent cost of similar groups, re-anchoring), or without it
 * (--plain) to measure what that adds. The history model is the
 * baseline, TimeGraph's prediction as Schnitzer et al. (Concepts for
 * Execution Time Prediction of 3D GPU Rendering) evaluated it: it always
 * runs plain.
 *
 * NAME labels the workload. Per model it prints, over the groups after the
 * first N (default 200, warm-up):
 *   mape      mean absolute percentage error over groups measured >= 100 us
 *             (their share of all groups is printed as big%)
 *   mae_us    mean absolute error, all groups
 *   p99_us    99th percentile of the absolute error
 *   over%     share of groups whose measured time exceeded the bound
 *   bound/m   mean bound / mean measured
 *   ns/op     median CPU time of one predict + update (+ bound)
 *   least/m   the least bound/m of a bound predicted x c, with c chosen
 *             after the fact so that at most 0.5 % of the groups exceed
 *             it: what this model's predictions allow any such margin
 * and one more row, "neighbours", the host's noise floor: each group
 * predicted by the median time of the (up to) 2 groups before and 2
 * after it with the same features (rounded to integers); the groups that
 * have fewer than 2 such neighbours are left out (big% is then the share
 * of groups kept). It looks into the future, which no model can; its
 * neighbours' own noise adds to its error (for independent normal noise,
 * the median of 4 adds about 15 %), so the noise floor proper is
 * somewhat lower. On workloads where most groups have neighbours, a
 * model close to this row predicts about as well as the host's noise
 * lets anything predict; where few have (random clears, glmark2
 * texture), the row describes only those few.
 * With --cdf DIR it writes DIR/NAME-MODEL.dat: the sorted signed errors
 * (predicted - measured, us), one per line, for a CDF plot.
 *
 * --first N replays only the first N groups and skips none (--skip is
 * then ignored). --state FILE starts each model from what a worker saved
 * in FILE (its state_dir's DOMAIN.MODEL.state, any identity) instead of
 * from nothing; models FILE has no state for are left out. One more row,
 * "recorded", then gives the predictions the worker itself made (the
 * dump's predicted_ns). test-model-state uses both: a restart's first
 * groups as the worker predicted them, against the same groups replayed
 * from the state the worker saved at the end of that run.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "predict.h"

/* Groups measured at least this long count for MAPE (the accuracy targets' rule). */
#define MAPE_MIN_NS 100000.0

struct sample {
	struct predict_features f;
	double measured_ns;
	double recorded_ns; /* what the worker predicted, < 0 when the dump has no prediction */
};

struct samples {
	struct sample *v;
	size_t n, cap;
};

static int load_file(struct samples *s, const char *path)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	int r = 0;

	if (!f) {
		fprintf(stderr, "predict-replay: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	while (getline(&line, &cap, f) > 0) {
		struct json_object *o = json_tokener_parse(line), *x, *m, *h, *p;
		struct sample smp;

		memset(&smp, 0, sizeof(smp));
		if (!o || !json_object_object_get_ex(o, "x", &x) ||
		    !json_object_object_get_ex(o, "measured_ns", &m) ||
		    json_object_array_length(x) != PF_COUNT) {
			fprintf(stderr, "predict-replay: %s: malformed line\n", path);
			json_object_put(o);
			r = -EINVAL;
			break;
		}
		for (size_t i = 0; i < PF_COUNT; i++)
			smp.f.x[i] = json_object_get_double(json_object_array_get_idx(x, i));
		if (json_object_object_get_ex(o, "hash", &h))
			smp.f.content_hash = strtoull(json_object_get_string(h), NULL, 16);
		smp.measured_ns = json_object_get_double(m);
		smp.recorded_ns = json_object_object_get_ex(o, "predicted_ns", &p)
				      ? json_object_get_double(p)
				      : -1;
		json_object_put(o);
		if (s->n == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 4096;
			s->v = realloc(s->v, s->cap * sizeof(*s->v));
			if (!s->v) {
				r = -ENOMEM;
				break;
			}
		}
		s->v[s->n++] = smp;
	}
	free(line);
	fclose(f);
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*
 * Loads @e's state from @state (NULL: none). Returns 0, 1 when @state has
 * no state for @e's model, or -1 (reported) when it cannot be loaded.
 */
static int load_state(struct predict_estimator *e, const char *state)
{
	struct predict_persist_entry entries[PREDICT_ESTIMATOR_PERSIST_ENTRIES];
	int r;

	if (!state)
		return 0;
	predict_estimator_persist_entries(e, entries);
	r = predict_persist_load(state, NULL, entries, PREDICT_ESTIMATOR_PERSIST_ENTRIES);
	if (r == 0 && entries[0].status == -ENOENT)
		return 1;
	for (size_t i = 0; r == 0 && i < PREDICT_ESTIMATOR_PERSIST_ENTRIES; i++)
		r = entries[i].status == -ENOENT ? 0 : entries[i].status;
	if (r < 0) {
		fprintf(stderr, "predict-replay: %s: cannot load %s's state: %s\n", state,
			predict_estimator_ops(e)->name, strerror(-r));
		return -1;
	}
	return 0;
}

/* Returns 0, or -1 when @state cannot be loaded. */
static int evaluate(const char *name, const struct predict_model_ops *ops, unsigned flags,
		    const struct samples *s, size_t skip, const char *state, const char *cdf_dir)
{
	struct predict_estimator *e = predict_estimator_create(ops, flags);
	size_t n = s->n > skip ? s->n - skip : 0;
	double *abs_err = calloc(n + 1, sizeof(double));
	double *signed_err = calloc(n + 1, sizeof(double));
	double *op_ns = calloc(s->n + 1, sizeof(double));
	double *ratio = calloc(n + 1, sizeof(double));
	double ape_sum = 0, ae_sum = 0, bound_sum = 0, meas_sum = 0, pred_sum = 0;
	size_t big = 0, over = 0, k = 0;
	int loaded = -1;

	if (!e || !abs_err || !signed_err || !op_ns || !ratio)
		goto out;
	loaded = load_state(e, state);
	if (loaded != 0)
		goto out;
	for (size_t i = 0; i < s->n; i++) {
		const struct sample *smp = &s->v[i];
		double t0 = now_ns(), pred, bound;
		struct predict_estimate est;

		predict_estimator_predict(e, &smp->f, &est);
		predict_estimator_learn(e, &smp->f, &est, smp->measured_ns);
		op_ns[i] = now_ns() - t0;
		pred = est.predicted_ns;
		bound = est.bound_ns;
		if (i < skip)
			continue;
		abs_err[k] = fabs(pred - smp->measured_ns) / 1000.0;
		signed_err[k] = (pred - smp->measured_ns) / 1000.0;
		ae_sum += abs_err[k];
		if (smp->measured_ns >= MAPE_MIN_NS) {
			ape_sum += fabs(pred - smp->measured_ns) / smp->measured_ns;
			big++;
		}
		if (smp->measured_ns > bound)
			over++;
		bound_sum += bound;
		meas_sum += smp->measured_ns;
		pred_sum += pred;
		ratio[k] = pred > 0 ? smp->measured_ns / pred : INFINITY;
		k++;
	}
	qsort(abs_err, k, sizeof(double), cmp_double);
	qsort(signed_err, k, sizeof(double), cmp_double);
	qsort(op_ns, s->n, sizeof(double), cmp_double);
	qsort(ratio, k, sizeof(double), cmp_double);
	if (k) {
		/* The least c with at most 0.5 % of measured / predicted above it. */
		double c = ratio[k - (size_t)((double)k * 0.005) - 1];

		printf("%-14s %-8s %7zu %6.1f%% %7.2f%% %9.1f %9.1f %7.3f%% %8.3f %7.0f %8.3f\n",
		       name, ops->name, k, 100.0 * (double)big / (double)k,
		       big ? 100.0 * ape_sum / (double)big : 0.0, ae_sum / (double)k,
		       abs_err[(size_t)((double)(k - 1) * 0.99)], 100.0 * (double)over / (double)k,
		       meas_sum > 0 ? bound_sum / meas_sum : 0.0, op_ns[s->n / 2],
		       meas_sum > 0 && isfinite(c) ? c * pred_sum / meas_sum : INFINITY);
	}
	if (cdf_dir && k) {
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s-%s.dat", cdf_dir, name, ops->name);
		f = fopen(path, "we");
		if (f) {
			for (size_t i = 0; i < k; i++)
				fprintf(f, "%.3f %.6f\n", signed_err[i],
					(double)(i + 1) / (double)k);
			fclose(f);
		}
	}
out:
	free(abs_err);
	free(signed_err);
	free(op_ns);
	free(ratio);
	predict_estimator_destroy(e);
	return loaded < 0 ? -1 : 0;
}

/* The "recorded" row: the worker's own predictions, where the dump has them. */
static void recorded(const char *name, const struct samples *s, size_t skip)
{
	double ape_sum = 0, ae_sum = 0;
	size_t big = 0, k = 0;

	for (size_t i = skip; i < s->n; i++) {
		const struct sample *smp = &s->v[i];
		double err = fabs(smp->recorded_ns - smp->measured_ns);

		if (smp->recorded_ns < 0)
			return;
		ae_sum += err / 1000.0;
		k++;
		if (smp->measured_ns >= MAPE_MIN_NS) {
			ape_sum += err / smp->measured_ns;
			big++;
		}
	}
	if (k)
		printf("%-14s %-8s %7zu %6.1f%% %7.2f%% %9.1f %9s %8s %8s %7s %8s\n", name,
		       "recorded", k, 100.0 * (double)big / (double)k,
		       big ? 100.0 * ape_sum / (double)big : 0.0, ae_sum / (double)k, "-", "-", "-",
		       "-", "-");
}

/* A group's features rounded to integers, and where it is in the samples. */
struct keyed {
	double key[PF_COUNT];
	size_t i;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	for (int j = 0; j < PF_COUNT; j++) {
		if (x->key[j] != y->key[j])
			return x->key[j] < y->key[j] ? -1 : 1;
	}
	return (x->i > y->i) - (x->i < y->i);
}

/* The "neighbours" row: the host's noise floor (see the top of this file). */
static void noise_floor(const char *name, const struct samples *s, size_t skip)
{
	struct keyed *v = calloc(s->n + 1, sizeof(*v));
	double *abs_err = calloc(s->n + 1, sizeof(double));
	double ape_sum = 0, ae_sum = 0;
	size_t big = 0, k = 0, from = 0;

	if (!v || !abs_err)
		goto out;
	for (size_t i = 0; i < s->n; i++) {
		for (int j = 0; j < PF_COUNT; j++)
			v[i].key[j] = round(s->v[i].f.x[j]);
		v[i].i = i;
	}
	qsort(v, s->n, sizeof(*v), cmp_keyed);
	for (size_t a = 0; a < s->n; a++) {
		double near[4], m, pred;
		size_t nn = 0;

		if (a > 0 && memcmp(v[a].key, v[a - 1].key, sizeof(v[a].key)))
			from = a; /* the first of this run of equal features */
		if (v[a].i < skip)
			continue;
		for (size_t b = a > from + 2 ? a - 2 : from; b < a; b++)
			near[nn++] = s->v[v[b].i].measured_ns;
		for (size_t b = a + 1;
		     b <= a + 2 && b < s->n && !memcmp(v[b].key, v[a].key, sizeof(v[a].key)); b++)
			near[nn++] = s->v[v[b].i].measured_ns;
		if (nn < 2)
			continue;
		qsort(near, nn, sizeof(double), cmp_double);
		pred = nn % 2 ? near[nn / 2] : (near[nn / 2 - 1] + near[nn / 2]) / 2;
		m = s->v[v[a].i].measured_ns;
		abs_err[k] = fabs(pred - m) / 1000.0;
		ae_sum += abs_err[k++];
		if (m >= MAPE_MIN_NS) {
			ape_sum += fabs(pred - m) / m;
			big++;
		}
	}
	qsort(abs_err, k, sizeof(double), cmp_double);
	if (k)
		printf("%-14s %-8s %7zu %6.1f%% %7.2f%% %9.1f %9.1f %8s %8s %7s %8s\n", name,
		       "neighbours", k, 100.0 * (double)k / (double)(s->n - skip),
		       big ? 100.0 * ape_sum / (double)big : 0.0, ae_sum / (double)k,
		       abs_err[(size_t)((double)(k - 1) * 0.99)], "-", "-", "-", "-");
out:
	free(v);
	free(abs_err);
}

int main(int argc, char **argv)
{
	struct samples s = {0};
	size_t skip = 200;
	unsigned flags = PREDICT_ESTIMATOR_ALL;
	const char *cdf_dir = NULL, *state = NULL, *name;
	size_t first = 0;
	int i = 1, r = 0;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--skip") == 0 && i + 1 < argc)
			skip = strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--cdf") == 0 && i + 1 < argc)
			cdf_dir = argv[++i];
		else if (strcmp(argv[i], "--first") == 0 && i + 1 < argc)
			first = strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--state") == 0 && i + 1 < argc)
			state = argv[++i];
		else if (strcmp(argv[i], "--plain") == 0)
			flags = 0;
		else
			goto usage;
	}
	if (argc - i < 2)
		goto usage;
	name = argv[i++];
	for (; i < argc; i++) {
		if (load_file(&s, argv[i]) < 0)
			return 1;
	}
	if (first) {
		s.n = s.n < first ? s.n : first;
		skip = 0;
	}
	if (s.n <= skip) {
		fprintf(stderr, "predict-replay: %s: only %zu groups, %zu skipped\n", name, s.n,
			skip);
		return 1;
	}
	for (const struct predict_model_ops *const *ops = predict_models; *ops && !r; ops++)
		r = evaluate(name, *ops, *ops == &predict_model_history_ops ? 0 : flags, &s, skip,
			     state, cdf_dir);
	if (state)
		recorded(name, &s, skip);
	noise_floor(name, &s, skip);
	free(s.v);
	return r ? 1 : 0;
usage:
	fprintf(stderr, "usage: predict-replay [--skip N] [--first N] [--state FILE] [--cdf DIR] "
			"[--plain] NAME FILE [FILE...]\n");
	return 2;
}
