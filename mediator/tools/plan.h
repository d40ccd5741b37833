// SPDX-License-Identifier: MIT
/*
 * mediatorctl plan: budgets proposed from traces (doc/trace-format.md) of
 * the domains at work, ideally each recorded alone. A safety domain (one
 * with frame records) gets its period from its frames' releases and a
 * budget from the distribution of its frames' GPU time (the sum of its
 * groups' measured times within each frame): the 99.9th percentile plus
 * a margin; its start-up frames are left out. A normal domain gets what
 * the safety domains' budgets leave of a 60 Hz period, and weight 1.
 * Pure: reads the caller's streams.
 */
#ifndef MEDIATOR_TOOLS_PLAN_H
#define MEDIATOR_TOOLS_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct plan;

/* NULL on allocation failure. */
struct plan *plan_create(void);
/* NULL is fine. */
void plan_destroy(struct plan *p);

/*
 * Reads one trace from @in (@name for messages). Lines that are not
 * records are counted in *@skipped (may be NULL). 0, or a negative errno
 * with a reason in @err.
 */
int plan_read(struct plan *p, FILE *in, const char *name, size_t *skipped, char *err,
	      size_t err_size);

/*
 * Writes the proposal to @out: a comment per domain with its figures, and
 * mediatord.conf lines (a [mediator] section with policy budget, a
 * [domain NAME] section per domain, its socket a placeholder under
 * @socket_dir). @margin: the share added to a safety domain's 99.9th
 * percentile (0.25: 25 %). It sorts the records read. 0, or -EINVAL
 * with a reason in @err (no domain, a safety domain without frames,
 * budgets that cannot fit).
 */
int plan_write(struct plan *p, double margin, const char *socket_dir, FILE *out, char *err,
	       size_t err_size);

#endif
