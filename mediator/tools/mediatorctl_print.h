// SPDX-License-Identifier: MIT
/*
 * How mediatorctl shows mediatord's answers to people: any answer as
 * "key: value" lines, show-budgets as a table (one domain a line) and its
 * context list, model as one block per context. Names a client chose are
 * printed with control characters replaced.
 */
#ifndef MEDIATOR_MEDIATORCTL_PRINT_H
#define MEDIATOR_MEDIATORCTL_PRINT_H

#include <json-c/json.h>
#include <stddef.h>

/* Prints @s with control characters replaced, so that odd names cannot drive the terminal. */
void mediatorctl_print_sanitized(const char *s);
/* Prints @obj as indented JSON, for scripts (--json). */
void mediatorctl_print_json(struct json_object *obj);
/* Prints @obj as "key: value" lines, nested members as "outer.inner" and "list[i]". */
void mediatorctl_print_flat(const char *prefix, struct json_object *obj);
/* @o's member @key, or NULL (@o not an object, no such member). The reference stays @o's. */
struct json_object *mediatorctl_json_get(struct json_object *o, const char *key);
/* Most columns show-budgets' table has. */
#define MEDIATORCTL_BUDGET_COLUMNS_MAX 32

/* show-budgets --watch: each column's width so far, which a refresh never narrows. */
struct budget_widths {
	size_t width[MEDIATORCTL_BUDGET_COLUMNS_MAX];
};

/*
 * show-budgets' table and its invariant violations; returns an exit status
 * (mediatorctl_call.h). With @keep (--watch; zeroed before the first), the
 * columns of the last refresh too (each domain's gpu_share_1s and
 * groups_1s, where set), no narrower than before.
 */
int mediatorctl_print_budgets(struct json_object *result, struct budget_widths *keep);
/* show-budgets --contexts: the live contexts of every domain. */
void mediatorctl_print_contexts(struct json_object *result);
/* One context of model's answer: its model, errors and coefficients. */
void mediatorctl_print_context_model(struct json_object *c);
/* model's answer, one block per context; returns an exit status (mediatorctl_call.h). */
int mediatorctl_print_models(struct json_object *result);

#endif
