// SPDX-License-Identifier: MIT
/*
 * mediatorctl plan (see plan.h). Each domain's groups (dispatch, measured
 * time) and frames (release, end) are gathered from the traces; a frame's
 * GPU time is what its domain's groups dispatched within it measured.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tools/plan.h"

/* Most domains a plan holds (mediatord's most). */
#define PLAN_MAX_DOMAINS 16
#define NAME_MAX_LEN	 32
/* The period a normal domain's budget is per, and a safety domain's budget is rounded up to. */
#define NORMAL_PERIOD_US 16667u
#define BUDGET_STEP_US	 100u

struct u64s {
	uint64_t *v;
	size_t n, cap;
};

struct group {
	uint64_t dispatch, measured;
};

struct frame {
	uint64_t release, end;
};

struct pdom {
	char name[NAME_MAX_LEN];
	struct group *groups;
	size_t n_groups, cap_groups;
	struct frame *frames;
	size_t n_frames, cap_frames;
	uint64_t gpu_ns, first_ns, last_ns;
};

struct plan {
	struct pdom d[PLAN_MAX_DOMAINS];
	int n;
};

struct plan *plan_create(void)
{
	return calloc(1, sizeof(struct plan));
}

void plan_destroy(struct plan *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n; i++) {
		free(p->d[i].groups);
		free(p->d[i].frames);
	}
	free(p);
}

/* Grows *@v (of *@cap elements of @size) to hold one more than @n. */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap * 2 : 256;
	void *nv;

	if (n < *cap)
		return 0;
	nv = realloc(*v, c * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = c;
	return 0;
}

/* A domain name as mediatord.conf takes it: 1..31 of A-Z a-z 0-9 _ . - */
static bool valid_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= NAME_MAX_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-",
			    s[i]))
			return false;
	return true;
}

static struct pdom *domain_of(struct plan *p, const char *name)
{
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->d[i].name, name))
			return &p->d[i];
	if (p->n == PLAN_MAX_DOMAINS || !valid_name(name))
		return NULL;
	snprintf(p->d[p->n].name, sizeof(p->d[p->n].name), "%s", name);
	return &p->d[p->n++];
}

static bool get_u64(struct json_object *o, const char *key, uint64_t *out)
{
	struct json_object *m;

	if (!json_object_object_get_ex(o, key, &m) || !json_object_is_type(m, json_type_int))
		return false;
	*out = (uint64_t)json_object_get_int64(m);
	return true;
}

static bool get_bool(struct json_object *o, const char *key)
{
	struct json_object *m;

	return json_object_object_get_ex(o, key, &m) && json_object_get_boolean(m);
}

/* One record; false when it is none this plan reads. */
static int take_record(struct plan *p, struct json_object *o, bool *taken)
{
	struct json_object *dom, *type;
	struct pdom *d;
	uint64_t a, b;

	*taken = false;
	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "domain", &dom) ||
	    !json_object_is_type(dom, json_type_string))
		return 0;
	d = domain_of(p, json_object_get_string(dom));
	if (!d)
		return 0;
	if (json_object_object_get_ex(o, "type", &type)) {
		/* A frame: its start-up and unfinished ones say nothing of its usual cost. */
		if (strcmp(json_object_get_string(type), "frame") ||
		    !get_u64(o, "release_ns", &a) || !get_u64(o, "end_ns", &b))
			return 0;
		*taken = true;
		if (!b || b < a || get_bool(o, "startup"))
			return 0;
		if (grow((void **)&d->frames, &d->cap_frames, d->n_frames, sizeof(*d->frames)))
			return -ENOMEM;
		d->frames[d->n_frames++] = (struct frame){a, b};
		return 0;
	}
	if (!get_u64(o, "dispatch_ns", &a) || !get_u64(o, "measured_ns", &b))
		return 0;
	*taken = true;
	if (grow((void **)&d->groups, &d->cap_groups, d->n_groups, sizeof(*d->groups)))
		return -ENOMEM;
	d->groups[d->n_groups++] = (struct group){a, b};
	d->gpu_ns += b;
	if (!d->first_ns || a < d->first_ns)
		d->first_ns = a;
	if (a + b > d->last_ns)
		d->last_ns = a + b;
	return 0;
}

int plan_read(struct plan *p, FILE *in, const char *name, size_t *skipped, char *err,
	      size_t err_size)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int r = 0;

	while (!r && (len = getline(&line, &cap, in)) > 0) {
		struct json_object *o = json_tokener_parse(line);
		bool taken = false;

		r = take_record(p, o, &taken);
		if (!taken && skipped)
			(*skipped)++;
		json_object_put(o);
	}
	free(line);
	if (r)
		snprintf(err, err_size, "%s: %s", name, strerror(-r));
	else if (ferror(in))
		snprintf(err, err_size, "%s: %s", name, strerror(errno ? errno : EIO)), r = -EIO;
	return r;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_group(const void *a, const void *b)
{
	return cmp_u64(&((const struct group *)a)->dispatch, &((const struct group *)b)->dispatch);
}

static int cmp_frame(const void *a, const void *b)
{
	return cmp_u64(&((const struct frame *)a)->release, &((const struct frame *)b)->release);
}

/* The nearest-rank @q-th percentile of sorted @v[@n] (n > 0). */
static uint64_t percentile(const uint64_t *v, size_t n, double q)
{
	size_t k = (size_t)(q / 100 * (double)n + 0.999999);

	return v[k ? (k > n ? n : k) - 1 : 0];
}

/* What safety domain @d's frames cost and its period; false without two frames. */
struct safety_figures {
	size_t frames;
	uint64_t period_ns, p50, p99, p999, max;
};

static bool safety_figures(struct pdom *d, struct safety_figures *f)
{
	uint64_t *costs, *iv;
	size_t g = 0, n_iv = 0;

	if (d->n_frames < 2)
		return false;
	qsort(d->groups, d->n_groups, sizeof(*d->groups), cmp_group);
	qsort(d->frames, d->n_frames, sizeof(*d->frames), cmp_frame);
	costs = calloc(d->n_frames, sizeof(*costs));
	iv = calloc(d->n_frames, sizeof(*iv));
	if (!costs || !iv) {
		free(costs);
		free(iv);
		return false;
	}
	for (size_t i = 0; i < d->n_frames; i++) {
		while (g < d->n_groups && d->groups[g].dispatch < d->frames[i].release)
			g++;
		for (size_t k = g; k < d->n_groups && d->groups[k].dispatch <= d->frames[i].end;
		     k++)
			costs[i] += d->groups[k].measured;
		if (i)
			iv[n_iv++] = d->frames[i].release - d->frames[i - 1].release;
	}
	qsort(costs, d->n_frames, sizeof(*costs), cmp_u64);
	qsort(iv, n_iv, sizeof(*iv), cmp_u64);
	*f = (struct safety_figures){.frames = d->n_frames,
				     .period_ns = iv[n_iv / 2],
				     .p50 = percentile(costs, d->n_frames, 50),
				     .p99 = percentile(costs, d->n_frames, 99),
				     .p999 = percentile(costs, d->n_frames, 99.9),
				     .max = costs[d->n_frames - 1]};
	free(iv);
	free(costs);
	return true;
}

int plan_write(struct plan *p, double margin, const char *socket_dir, FILE *out, char *err,
	       size_t err_size)
{
	struct safety_figures f[PLAN_MAX_DOMAINS];
	uint32_t budget[PLAN_MAX_DOMAINS], period[PLAN_MAX_DOMAINS];
	double util = 0;

	if (!p->n) {
		snprintf(err, err_size, "no domain in the traces");
		return -EINVAL;
	}
	for (int i = 0; i < p->n; i++) {
		double b;

		budget[i] = period[i] = 0;
		if (!p->d[i].n_frames)
			continue;
		if (!safety_figures(&p->d[i], &f[i])) {
			snprintf(err, err_size,
				 "domain %s: fewer than 2 whole frames in the traces",
				 p->d[i].name);
			return -EINVAL;
		}
		/* 1 % under the median interval: a guest's jitter must not hold it above its rate.
		 */
		period[i] = (uint32_t)((double)f[i].period_ns * 0.99 / 1000);
		b = (double)f[i].p999 / 1000 * (1 + margin);
		budget[i] = ((uint32_t)b + BUDGET_STEP_US - 1) / BUDGET_STEP_US * BUDGET_STEP_US;
		if (!budget[i] || budget[i] > period[i]) {
			snprintf(err, err_size,
				 "domain %s: a budget of %u us does not fit its period of %u us",
				 p->d[i].name, budget[i], period[i]);
			return -EINVAL;
		}
		util += (double)budget[i] / period[i];
	}
	if (util > 1) {
		snprintf(err, err_size, "the safety domains' budgets need %.0f %% of the GPU",
			 util * 100);
		return -EINVAL;
	}
	fprintf(out,
		"; mediatorctl plan: a safety domain's budget is the 99.9th percentile of its\n"
		"; frames' GPU time plus %.0f %%, rounded up to %u us; its period is learned\n"
		"; (no period_us), at least 1 %% under the median interval of its releases\n"
		"; (min_period_us); a normal domain gets what the safety budgets leave of\n"
		"; %u us, and weight 1. Set the sockets and the weights.\n"
		"[mediator]\npolicy = budget\n",
		margin * 100, BUDGET_STEP_US, NORMAL_PERIOD_US);
	for (int i = 0; i < p->n; i++) {
		const struct pdom *d = &p->d[i];

		if (period[i]) {
			fprintf(out,
				"\n; %s: %zu frames, period %.2f ms; GPU time a frame p50 %.2f ms, "
				"p99 %.2f ms, p99.9 %.2f ms, max %.2f ms\n"
				"[domain %s]\nclass = safety\nmin_period_us = %u\nbudget_us = %u\n",
				d->name, f[i].frames, (double)f[i].period_ns / 1e6,
				(double)f[i].p50 / 1e6, (double)f[i].p99 / 1e6,
				(double)f[i].p999 / 1e6, (double)f[i].max / 1e6, d->name, period[i],
				budget[i]);
		} else {
			uint32_t left = (uint32_t)((1 - util) * NORMAL_PERIOD_US);

			fprintf(out,
				"\n; %s: %zu groups, %.1f %% of the GPU over its trace\n"
				"[domain %s]\nclass = normal\nperiod_us = %u\nbudget_us = %u\n"
				"weight = 1\n",
				d->name, d->n_groups,
				d->last_ns > d->first_ns
				    ? 100.0 * (double)d->gpu_ns / (double)(d->last_ns - d->first_ns)
				    : 0.0,
				d->name, NORMAL_PERIOD_US, left ? left : 1);
		}
		fprintf(out, "vtest_socket = %s/%s.vtest\n", socket_dir, d->name);
	}
	return ferror(out) ? -EIO : 0;
}
