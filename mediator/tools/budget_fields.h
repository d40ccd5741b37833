// SPDX-License-Identifier: MIT
/*
 * What each member of a domain in mediatord's show-budgets answer means,
 * in one text: `mediatorctl show-budgets --help` prints it for its columns
 * (and for the members only --json and the metrics carry), and
 * `mediatorctl metrics` gives it as the HELP of the member's series. One
 * text, so the two never say different things.
 */
#ifndef MEDIATOR_BUDGET_FIELDS_H
#define MEDIATOR_BUDGET_FIELDS_H

#include <stdio.h>

struct budget_field {
	const char *member; /* in the show-budgets JSON (a histogram's object) */
	const char *column; /* its show-budgets column; NULL: --json and the metrics only */
	const char *text;   /* one or more sentences, each ending with a full stop */
};

/* Every member described, columns first in their order; ends with a NULL member. */
extern const struct budget_field budget_fields[];

/* The text of @member, or NULL. */
const char *budget_field_text(const char *member);
/*
 * Prints the fields with a column (@columns) or without one (!@columns) as
 * help lines: "    COLUMN      TEXT" (or the member), the text wrapped at
 * 78 characters under itself.
 */
void budget_fields_print_help(FILE *out, int columns);

#endif
