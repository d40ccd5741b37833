// SPDX-License-Identifier: MIT
/*
 * mediatord's per-domain figures in Prometheus' text exposition format
 * (version 0.0.4), for `mediatorctl metrics`: for node_exporter's textfile
 * collector, or a scrape through any HTTP wrapper. Names follow
 * Prometheus' conventions: the gpu_mediator_ prefix, base units (seconds),
 * _total for counters; every series has the labels domain and class.
 */
#ifndef MEDIATOR_METRICS_TEXT_H
#define MEDIATOR_METRICS_TEXT_H

#include <stdio.h>

struct json_object;

/*
 * Writes the metrics of @budgets, a show-budgets answer ({"policy",
 * "domains": [...]}, doc/operating.md "What show-budgets reports", with each
 * domain's "histograms" and the answer's "invariant_violations"), to @out,
 * and gpu_mediator_build_info with @version (mediatord's, from status;
 * NULL: none written). Returns 0, or -EPROTO when @budgets lacks what it
 * needs.
 */
int metrics_write_prometheus(FILE *out, struct json_object *budgets, const char *version);

#endif
