// SPDX-License-Identifier: MIT
/*
 * The show-budgets members' texts (see budget_fields.h).
 */
#include <string.h>

#include "tools/budget_fields.h"

const struct budget_field budget_fields[] = {
    {"name", "DOMAIN", "The domain's name."},
    {"class", "CLASS", "Safety or normal."},
    {"period_us", "PERIOD", "The domain's budget period."},
    {"budget_us", "BUDGET", "GPU time the domain may use per period."},
    {"remaining_us", "REMAIN",
     "Budget left in the domain's current period: BUDGET less DEBT and THIS."},
    {"used_this_period_us", "THIS",
     "Measured GPU time charged to the domain in its current period."},
    {"used_us", "USED",
     "GPU time the domain's command groups took since mediatord started, measured at their "
     "fences."},
    {"used_last_period_us", "LAST", "Measured GPU time charged to the domain in its last period."},
    {"predicted_us", "PRED",
     "GPU time predicted for the domain's command groups before they started, since mediatord "
     "started."},
    {"debt_us", "DEBT", "GPU time the domain used beyond its budget, paid back in later periods."},
    {"utilization", "UTIL", "GPU time the domain used in its last period over that period."},
    {"clients", "CLI", "Connected clients (workers) of the domain."},
    {"contexts", "CTX", "Live guest contexts of the domain."},
    {"groups", "GROUPS", "Command groups of the domain that completed since mediatord started."},
    {"overruns", "OVR",
     "Groups whose measured GPU time was more than the budget the domain had left in their "
     "period (it ends the period in debt)."},
    {"deadline_misses", "MISS", "Frames of the safety domain that ended after their deadline."},
    {"throttled", "THR",
     "Groups that waited for budget, or for a gap the safety domains leave that fits them, "
     "before their grant (each group counted once)."},
    {"timestamp_source", "TIMESTAMPS", "Where the domain's completion timestamps come from."},
    {"deadline_us", NULL, "Deadline of the domain's frames from their release."},
    {"frames", NULL, "Frames of the safety domain, judged against their deadline."},
    {"startup_frames", NULL,
     "Late frames of the safety domain's start-up, not judged: released in its first 30 "
     "periods (context set-up and first draws, shaders compiling), with no other domain's "
     "group beside them."},
    {"weight", NULL,
     "A normal domain's weight: what the safety domains leave is shared among the busy normal "
     "domains in the ratio of their weights."},
    {"virtual_time_us", NULL,
     "A normal domain's GPU time over its weight, as the weighted sharing counts it: the domain "
     "furthest behind goes first."},
    {"learned_period_us", NULL,
     "A safety domain without period_us: the period learned from its guest's frames (PERIOD "
     "is then its shortest, min_period_us)."},
    {"max_period_us", NULL, "A learned period's longest."},
    {"period_confidence", NULL,
     "How sure the learned period is, 0 to 1: how well the recent frames fit it, and how many "
     "there were (full from 8)."},
    {"period_changes", NULL, "Rate changes the learned period followed."},
    {"period_pauses", NULL, "Pauses after which the learned period's grid started again."},
    {"deadline_follows_period", NULL,
     "A learned period's frames are judged against it (no deadline_us), not deadline_us."},
    {"deadline_misses_alone", NULL,
     "Frames of the safety domain that ended after their deadline with no other domain's group "
     "on the GPU beside them (late by their own work)."},
    {"unschedulable", NULL,
     "Groups refused, never run: larger than any gap the safety domains leave (oversize = "
     "unschedulable, or refuse-untiled for a draw that cannot be cut) or than a strict domain's "
     "whole budget; their contexts are reported unschedulable."},
    {"watchdog_revokes", NULL, "Grants the grant watchdog revoked at their deadline."},
    {"watchdog_kills", NULL, "Workers the grant watchdog killed."},
    {"idle_host_work", NULL,
     "Large resource creations and transfers the domain's workers ran at idle priority."},
    {"waiting", NULL, "Groups of the domain waiting for a grant."},
    {"in_flight", NULL, "Granted groups of the domain on the GPU."},
    {"group_time", NULL, "GPU time of each command group of the domain, measured at its fence."},
    {"grant_wait", NULL, "How long each group of the domain waited for its grant."},
    {"frame_latency", NULL, "Release to end of each finished frame of the safety domain."},
    {NULL, NULL, NULL},
};

const char *budget_field_text(const char *member)
{
	for (const struct budget_field *f = budget_fields; f->member; f++)
		if (!strcmp(f->member, member))
			return f->text;
	return NULL;
}

/* Prints @text from column 16 on, wrapped at 78 characters, continuing under itself. */
static void print_wrapped(FILE *out, const char *text)
{
	enum { INDENT = 16, WIDTH = 78 };
	size_t col = INDENT;

	while (*text) {
		size_t word = strcspn(text, " ");

		if (col > INDENT && col + 1 + word > WIDTH) {
			fprintf(out, "\n%*s", INDENT, "");
			col = INDENT;
		} else if (col > INDENT) {
			fputc(' ', out);
			col++;
		}
		fwrite(text, 1, word, out);
		col += word;
		text += word;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

void budget_fields_print_help(FILE *out, int columns)
{
	for (const struct budget_field *f = budget_fields; f->member; f++) {
		const char *label = columns ? f->column : f->member;

		if (!f->column != !columns)
			continue;
		if (strlen(label) > 11)
			fprintf(out, "    %s\n%16s", label, "");
		else
			fprintf(out, "    %-11s ", label);
		print_wrapped(out, f->text);
	}
}
