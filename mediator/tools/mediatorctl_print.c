// SPDX-License-Identifier: MIT
/*
 * How mediatorctl shows mediatord's answers (mediatorctl_print.h). The
 * show-budgets table is made of budget_columns[], one line each: its
 * header, the member of a domain it shows and how (text, microseconds,
 * a count, a percentage); a column is as wide as its widest cell.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tools/mediatorctl_call.h"
#include "tools/mediatorctl_print.h"

/* Prints @s with control characters replaced, so that odd names cannot drive the terminal. */
void mediatorctl_print_sanitized(const char *s)
{
	for (; *s; s++)
		putchar((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

void mediatorctl_print_json(struct json_object *obj)
{
	puts(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						     JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* Prints @obj as "key: value" lines, nested members as "outer.inner" and "list[i]". */
void mediatorctl_print_flat(const char *prefix, struct json_object *obj)
{
	char key[512];

	if (json_object_is_type(obj, json_type_object) && json_object_object_length(obj)) {
		json_object_object_foreach(obj, k, v)
		{
			snprintf(key, sizeof(key), "%s%s%s", prefix, prefix[0] ? "." : "", k);
			mediatorctl_print_flat(key, v);
		}
		return;
	}
	if (json_object_is_type(obj, json_type_array) && json_object_array_length(obj)) {
		for (size_t i = 0; i < json_object_array_length(obj); i++) {
			snprintf(key, sizeof(key), "%s[%zu]", prefix, i);
			mediatorctl_print_flat(key, json_object_array_get_idx(obj, i));
		}
		return;
	}
	mediatorctl_print_sanitized(prefix);
	fputs(": ", stdout);
	if (json_object_is_type(obj, json_type_string))
		mediatorctl_print_sanitized(json_object_get_string(obj));
	else
		fputs(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN), stdout);
	putchar('\n');
}

enum column_kind {
	COL_TEXT,
	COL_US,
	COL_COUNT,
	COL_PERCENT,
	COL_RATE, /* a number per second, one decimal */
};

struct column {
	const char *header;
	const char *key;
	enum column_kind kind;
	bool watch; /* only under --watch: over the last refresh, from mediatorctl's two answers */
};

/* clang-format off */
static const struct column budget_columns[] = {
    {"DOMAIN", "name", COL_TEXT, false},
    {"CLASS", "class", COL_TEXT, false},
    {"PERIOD", "period_us", COL_US, false},
    {"BUDGET", "budget_us", COL_US, false},
    {"REMAIN", "remaining_us", COL_US, false},
    {"THIS", "used_this_period_us", COL_US, false},
    {"USED", "used_us", COL_US, false},
    {"LAST", "used_last_period_us", COL_US, false},
    {"PRED", "predicted_us", COL_US, false},
    {"DEBT", "debt_us", COL_US, false},
    {"UTIL", "utilization", COL_PERCENT, false},
    {"GPU/S", "gpu_share_1s", COL_PERCENT, true},
    {"GRP/S", "groups_1s", COL_RATE, true},
    {"CLI", "clients", COL_COUNT, false},
    {"CTX", "contexts", COL_COUNT, false},
    {"GROUPS", "groups", COL_COUNT, false},
    {"OVR", "overruns", COL_COUNT, false},
    {"MISS", "deadline_misses", COL_COUNT, false},
    {"THR", "throttled", COL_COUNT, false},
    {"TIMESTAMPS", "timestamp_source", COL_TEXT, false},
};

/* clang-format on */
#define N_BUDGET_COLUMNS (sizeof(budget_columns) / sizeof(budget_columns[0]))
_Static_assert(N_BUDGET_COLUMNS <= MEDIATORCTL_BUDGET_COLUMNS_MAX,
	       "struct budget_widths has too few columns");

/* One column a line. */
#define CELL_MAX 48

static bool is_number(struct json_object *v)
{
	return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

/* Formats a time in microseconds with a unit that keeps it short. */
static void format_us(char *buf, size_t size, double us)
{
	if (us < 1000.0)
		snprintf(buf, size, "%.0fus", us);
	else if (us < 1000000.0)
		snprintf(buf, size, "%.2fms", us / 1000.0);
	else
		snprintf(buf, size, "%.2fs", us / 1000000.0);
}

static void format_cell(char *buf, size_t size, struct json_object *domain,
			const struct column *col)
{
	struct json_object *v;

	if (!json_object_object_get_ex(domain, col->key, &v) || !v) {
		snprintf(buf, size, "-");
		return;
	}
	switch (col->kind) {
	case COL_TEXT:
		snprintf(buf, size, "%s", json_object_get_string(v));
		for (char *p = buf; *p; p++) {
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
		}
		return;
	case COL_US:
		if (is_number(v))
			format_us(buf, size, json_object_get_double(v));
		else
			snprintf(buf, size, "-");
		return;
	case COL_COUNT:
		if (json_object_is_type(v, json_type_int))
			snprintf(buf, size, "%" PRId64, json_object_get_int64(v));
		else
			snprintf(buf, size, "-");
		return;
	case COL_PERCENT:
		if (is_number(v))
			snprintf(buf, size, "%.1f%%", json_object_get_double(v) * 100.0);
		else
			snprintf(buf, size, "-");
		return;
	case COL_RATE:
		if (is_number(v))
			snprintf(buf, size, "%.1f", json_object_get_double(v));
		else
			snprintf(buf, size, "-");
		return;
	}
}

/*
 * The width a --watch column starts at, for what its values usually
 * reach ("999.99ms", "100.0%", a count of millions), so that refreshes
 * rarely widen it.
 */
static size_t watch_width(enum column_kind kind)
{
	switch (kind) {
	case COL_US:
		return 9;
	case COL_COUNT:
	case COL_RATE:
		return 7;
	case COL_PERCENT:
		return 6;
	case COL_TEXT:
	default:
		return 0;
	}
}

/* True when column @c is printed: the --watch ones only under it (@keep set). */
static bool column_shown(size_t c, const struct budget_widths *keep)
{
	return keep || !budget_columns[c].watch;
}

static void print_row(char cells[][CELL_MAX], const size_t *widths,
		      const struct budget_widths *keep)
{
	for (size_t c = 0; c < N_BUDGET_COLUMNS; c++) {
		bool last = c + 1 == N_BUDGET_COLUMNS;
		int w = (int)widths[c];

		if (!column_shown(c, keep))
			continue;

		if (budget_columns[c].kind == COL_TEXT)
			printf("%-*s", last ? 0 : w, cells[c]);
		else
			printf("%*s", w, cells[c]);
		if (!last)
			fputs("  ", stdout);
	}
	putchar('\n');
}

/*
 * One line per domain whose workers could not cut a long draw into
 * scissor tiles: how many groups, the last context, and why.
 */
static void print_untiled(struct json_object *domains)
{
	size_t n = json_object_array_length(domains);

	for (size_t i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(domains, i);
		struct json_object *u = mediatorctl_json_get(d, "untiled");
		int64_t groups = json_object_get_int64(mediatorctl_json_get(u, "groups"));

		if (groups <= 0)
			continue;
		fputs("uncut: ", stdout);
		mediatorctl_print_sanitized(
		    json_object_get_string(mediatorctl_json_get(d, "name")));
		printf(": %" PRId64
		       " groups held a draw longer than a piece that could not be cut further; "
		       "last: client %" PRId64 " context %" PRId64 " (",
		       groups, json_object_get_int64(mediatorctl_json_get(u, "client")),
		       json_object_get_int64(mediatorctl_json_get(u, "ctx_id")));
		mediatorctl_print_sanitized(
		    json_object_get_string(mediatorctl_json_get(u, "name")));
		fputs("): ", stdout);
		mediatorctl_print_sanitized(json_object_get_string(mediatorctl_json_get(u, "why")));
		putchar('\n');
	}
}

/*
 * One line per safety domain whose period is learned (issue 33): the
 * period learned, how sure it is, its rate changes and pauses.
 */
static void print_learned(struct json_object *domains)
{
	size_t n = json_object_array_length(domains);

	for (size_t i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(domains, i);
		struct json_object *l;

		if (!json_object_object_get_ex(d, "learned_period_us", &l))
			continue;
		fputs("learned period: ", stdout);
		mediatorctl_print_sanitized(
		    json_object_get_string(mediatorctl_json_get(d, "name")));
		printf(": %.2f ms (%.0f Hz), confidence %.2f, %" PRId64 " rate changes, %" PRId64
		       " pauses; deadline %s\n",
		       (double)json_object_get_int64(l) / 1000.0,
		       json_object_get_int64(l) > 0 ? 1e6 / (double)json_object_get_int64(l) : 0.0,
		       json_object_get_double(mediatorctl_json_get(d, "period_confidence")),
		       json_object_get_int64(mediatorctl_json_get(d, "period_changes")),
		       json_object_get_int64(mediatorctl_json_get(d, "period_pauses")),
		       json_object_get_boolean(mediatorctl_json_get(d, "deadline_follows_period"))
			   ? "the learned period"
			   : "as configured");
	}
}

/* show-budgets' "invariant_violations": one line naming those broken, nothing when none is. */
static void print_invariant_violations(struct json_object *result)
{
	struct json_object *inv;
	bool any = false;

	if (!json_object_object_get_ex(result, "invariant_violations", &inv) ||
	    !json_object_is_type(inv, json_type_object))
		return;
	json_object_object_foreach(inv, name, count)
	{
		if (!json_object_is_type(count, json_type_int) || json_object_get_int64(count) <= 0)
			continue;
		fputs(any ? ", " : "broken invariants of mediatord (see its log): ", stdout);
		mediatorctl_print_sanitized(name);
		printf(" %" PRId64, json_object_get_int64(count));
		any = true;
	}
	if (any)
		putchar('\n');
}

int mediatorctl_print_budgets(struct json_object *result, struct budget_widths *keep)
{
	struct json_object *policy, *domains;
	char(*cells)[N_BUDGET_COLUMNS][CELL_MAX];
	size_t widths[N_BUDGET_COLUMNS];
	size_t n;

	if (!json_object_object_get_ex(result, "domains", &domains) ||
	    !json_object_is_type(domains, json_type_array)) {
		mediatorctl_error("malformed reply from mediatord: no \"domains\" array");
		return EXIT_UNREACHABLE;
	}
	fputs("policy: ", stdout);
	if (json_object_object_get_ex(result, "policy", &policy) && policy)
		mediatorctl_print_sanitized(json_object_get_string(policy));
	else
		fputs("-", stdout);
	putchar('\n');

	n = json_object_array_length(domains);
	if (n == 0) {
		puts("(no domains)");
		return EXIT_OK;
	}
	cells = calloc(n + 1, sizeof(*cells));
	if (!cells) {
		mediatorctl_error("out of memory");
		return EXIT_REFUSED;
	}
	for (size_t c = 0; c < N_BUDGET_COLUMNS; c++) {
		snprintf(cells[0][c], CELL_MAX, "%s", budget_columns[c].header);
		widths[c] = strlen(cells[0][c]);
		if (keep && keep->width[c] > widths[c])
			widths[c] = keep->width[c];
		if (keep && watch_width(budget_columns[c].kind) > widths[c])
			widths[c] = watch_width(budget_columns[c].kind);
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(domains, i);

		for (size_t c = 0; c < N_BUDGET_COLUMNS; c++) {
			size_t w;

			if (json_object_is_type(d, json_type_object))
				format_cell(cells[i + 1][c], CELL_MAX, d, &budget_columns[c]);
			else
				snprintf(cells[i + 1][c], CELL_MAX, "-");
			w = strlen(cells[i + 1][c]);
			if (w > widths[c])
				widths[c] = w;
		}
	}
	if (keep)
		memcpy(keep->width, widths, sizeof(widths));
	for (size_t i = 0; i <= n; i++)
		print_row(cells[i], widths, keep);
	free(cells);
	print_untiled(domains);
	print_learned(domains);
	print_invariant_violations(result);
	return EXIT_OK;
}

/* show-budgets --contexts: one line per live guest context of each domain. */
void mediatorctl_print_contexts(struct json_object *result)
{
	struct json_object *domains = mediatorctl_json_get(result, "domains");
	size_t n = domains ? json_object_array_length(domains) : 0;

	printf("\n%-16s %-6s %-10s %-5s %-8s %s\n", "DOMAIN", "CLIENT", "TRANSPORT", "CTX",
	       "GROUPS", "CONTEXT");
	for (size_t i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(domains, i);
		struct json_object *list = mediatorctl_json_get(d, "context_list");
		const char *dname = json_object_get_string(mediatorctl_json_get(d, "name"));
		size_t m = list ? json_object_array_length(list) : 0;

		for (size_t j = 0; j < m; j++) {
			struct json_object *c = json_object_array_get_idx(list, j);

			printf("%-16s %-6" PRId64 " %-10s %-5" PRId64 " %-8" PRId64 " ",
			       dname ? dname : "-",
			       json_object_get_int64(mediatorctl_json_get(c, "client")),
			       json_object_get_string(mediatorctl_json_get(c, "transport")),
			       json_object_get_int64(mediatorctl_json_get(c, "ctx_id")),
			       json_object_get_int64(mediatorctl_json_get(c, "groups")));
			mediatorctl_print_sanitized(
			    json_object_get_string(mediatorctl_json_get(c, "name")));
			putchar('\n');
		}
	}
}

/* Member @key of @o, or NULL (json-c's getters treat NULL as 0 / ""). */
struct json_object *mediatorctl_json_get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(o, key, &v);
	return v;
}

/* An estimator's error as "x1.23" (estimates off by that factor lately), or "-". */
static void format_fragment_error(double factor, char *buf, size_t size)
{
	if (factor < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "x%.2f", factor);
}

static void print_fragment_estimators(struct json_object *c)
{
	char bbox[32], hist[32];

	if (json_object_get_int64(mediatorctl_json_get(c, "fragments_measured")) == 0)
		return;
	format_fragment_error(
	    json_object_get_double(mediatorctl_json_get(c, "fragment_error_bbox")), bbox,
	    sizeof(bbox));
	format_fragment_error(
	    json_object_get_double(mediatorctl_json_get(c, "fragment_error_history")), hist,
	    sizeof(hist));
	printf("    fragments: measured in %" PRId64 " groups; recent error bbox %s, history %s; "
	       "using %s\n",
	       json_object_get_int64(mediatorctl_json_get(c, "fragments_measured")), bbox, hist,
	       json_object_get_string(mediatorctl_json_get(c, "fragment_estimator")));
}

void mediatorctl_print_context_model(struct json_object *c)
{
	struct json_object *coef = NULL;
	int n = 0;

	printf("  client %" PRId64 " %s%s: model %s, %" PRId64 " groups, mean |error| %.0f us, "
	       "MAPE %.1f %%, bound margin %.0f us, exceeded by %.2f %% of groups%s\n",
	       json_object_get_int64(mediatorctl_json_get(c, "client")),
	       json_object_get_string(mediatorctl_json_get(c, "name")),
	       json_object_get_boolean(mediatorctl_json_get(c, "live")) ? "" : " (gone)",
	       json_object_get_string(mediatorctl_json_get(c, "model")),
	       json_object_get_int64(mediatorctl_json_get(c, "groups")),
	       json_object_get_double(mediatorctl_json_get(c, "mae_us")),
	       100.0 * json_object_get_double(mediatorctl_json_get(c, "mape")),
	       json_object_get_double(mediatorctl_json_get(c, "bound_margin_us")),
	       100.0 * json_object_get_double(mediatorctl_json_get(c, "bound_exceeded")),
	       json_object_get_boolean(mediatorctl_json_get(c, "unbounded_loops"))
		   ? ", unbounded shader loops seen (conservative estimate)"
		   : "");
	print_fragment_estimators(c);
	if (!json_object_object_get_ex(c, "coefficients_ns", &coef) ||
	    json_object_object_length(coef) == 0)
		return;
	printf("    coefficients (ns per unit):");
	json_object_object_foreach(coef, key, val)
	{
		double v = json_object_get_double(val);

		if (v == 0)
			continue;
		printf("%s %s=%.4g", n++ % 4 == 0 ? "\n     " : "", key, v);
	}
	printf("\n");
}

int mediatorctl_print_models(struct json_object *result)
{
	struct json_object *domains;

	if (!json_object_object_get_ex(result, "domains", &domains) ||
	    !json_object_is_type(domains, json_type_array)) {
		fprintf(stderr, "mediatorctl: malformed answer from mediatord\n");
		return EXIT_UNREACHABLE;
	}
	for (size_t i = 0; i < json_object_array_length(domains); i++) {
		struct json_object *d = json_object_array_get_idx(domains, i), *ctxs;

		printf("domain %s:\n", json_object_get_string(mediatorctl_json_get(d, "name")));
		if (!json_object_object_get_ex(d, "contexts", &ctxs) ||
		    json_object_array_length(ctxs) == 0) {
			printf("  (no context has reported a model yet)\n");
			continue;
		}
		for (size_t k = 0; k < json_object_array_length(ctxs); k++)
			mediatorctl_print_context_model(json_object_array_get_idx(ctxs, k));
	}
	return EXIT_OK;
}
