/*
 * predict-replay: replays per-group feature dumps (MEDIATOR_FEATURE_DUMP of
 * mediator-worker) through every cost model of libpredict, in order, each
 * model predicting a group before learning its measured time — exactly
 * what the worker does live — and prints the accuracy of each model on
 * the same data.
 *
 *   predict-replay [--skip N] [--cdf DIR] [--plain] NAME FILE [FILE...]
 *
 * Each model runs inside a context estimator (predict_estimator.h) as in
 * the worker, with what the estimator adds (memo of under-predicted
 * groups, recent cost of similar groups, re-anchoring), or without it
 * (--plain) to measure what that adds. The history model is the
 * baseline, TimeGraph's prediction as seed 002 evaluated it: it always
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
 * With --cdf DIR it writes DIR/NAME-MODEL.dat: the sorted signed errors
 * (predicted - measured, us), one per line, for a CDF plot.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "predict_estimator.h"
#include "predict_model.h"

/* Groups measured at least this long count for MAPE (the rule). */
#define MAPE_MIN_NS 100000.0

struct sample {
	struct predict_features f;
	double measured_ns;
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
		struct json_object *o = json_tokener_parse(line), *x, *m, *h;
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

static void evaluate(const char *name, const struct predict_model_ops *ops, unsigned flags,
		     const struct samples *s, size_t skip, const char *cdf_dir)
{
	struct predict_estimator *e = predict_estimator_create(ops, flags);
	size_t n = s->n > skip ? s->n - skip : 0;
	double *abs_err = calloc(n + 1, sizeof(double));
	double *signed_err = calloc(n + 1, sizeof(double));
	double *op_ns = calloc(s->n + 1, sizeof(double));
	double ape_sum = 0, ae_sum = 0, bound_sum = 0, meas_sum = 0;
	size_t big = 0, over = 0, k = 0;

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
		k++;
	}
	qsort(abs_err, k, sizeof(double), cmp_double);
	qsort(signed_err, k, sizeof(double), cmp_double);
	qsort(op_ns, s->n, sizeof(double), cmp_double);
	if (k)
		printf("%-14s %-8s %7zu %6.1f%% %7.2f%% %9.1f %9.1f %7.3f%% %8.3f %7.0f\n", name,
		       ops->name, k, 100.0 * (double)big / (double)k,
		       big ? 100.0 * ape_sum / (double)big : 0.0, ae_sum / (double)k,
		       abs_err[(size_t)((double)(k - 1) * 0.99)], 100.0 * (double)over / (double)k,
		       meas_sum > 0 ? bound_sum / meas_sum : 0.0, op_ns[s->n / 2]);
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
	free(abs_err);
	free(signed_err);
	free(op_ns);
	predict_estimator_destroy(e);
}

int main(int argc, char **argv)
{
	struct samples s = {0};
	size_t skip = 200;
	unsigned flags = PREDICT_ESTIMATOR_ALL;
	const char *cdf_dir = NULL, *name;
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--skip") == 0 && i + 1 < argc)
			skip = strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--cdf") == 0 && i + 1 < argc)
			cdf_dir = argv[++i];
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
	if (s.n <= skip) {
		fprintf(stderr, "predict-replay: %s: only %zu groups, %zu skipped\n", name, s.n,
			skip);
		return 1;
	}
	for (const struct predict_model_ops *const *ops = predict_models; *ops; ops++)
		evaluate(name, *ops, *ops == &predict_model_history_ops ? 0 : flags, &s, skip,
			 cdf_dir);
	free(s.v);
	return 0;
usage:
	fprintf(stderr,
		"usage: predict-replay [--skip N] [--cdf DIR] [--plain] NAME FILE [FILE...]\n");
	return 2;
}
