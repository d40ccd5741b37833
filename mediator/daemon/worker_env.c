// SPDX-License-Identifier: MIT
/* A worker's environment (worker_env.h). */
#include <string.h>

#include "common/util.h"
#include "daemon/worker_env.h"

/* What every worker gets where mediatord has it (worker_env.h says why). */
static const char *const always[] = {
    "ASAN_OPTIONS",
    "UBSAN_OPTIONS",
    "LSAN_OPTIONS",
    "MEDIATOR_FEATURE_DUMP",
    "MEDIATOR_WORKER_TRY_FORBIDDEN",
};

/* What a worker of renderer = glx gets beside them. */
static const char *const x_display[] = {"DISPLAY", "XAUTHORITY"};

/* True when "NAME=value" @entry is named @name (@len bytes; a prefix when @prefix). */
static bool entry_named(const char *entry, const char *name, size_t len, bool prefix)
{
	const char *eq = strchr(entry, '=');

	if (!eq || strncmp(entry, name, len) != 0)
		return false;
	return prefix ? (size_t)(eq - entry) >= len : (size_t)(eq - entry) == len;
}

/* True when @entry is named in @names. */
static bool in_list(const char *entry, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (entry_named(entry, names[i], strlen(names[i]), false))
			return true;
	return false;
}

/* What separates worker_pass_environment's words: the config parser's whitespace. */
#define PASS_SPACE " \t\r\f\v"

/* True when @entry is named by a word of @pass (whitespace-separated NAME or PREFIX*). */
static bool passed(const char *entry, const char *pass)
{
	const char *w = pass;

	while (*w) {
		size_t len;

		w += strspn(w, PASS_SPACE);
		len = strcspn(w, PASS_SPACE);
		if (len && w[len - 1] == '*') {
			if (entry_named(entry, w, len - 1, true))
				return true;
		} else if (len && entry_named(entry, w, len, false)) {
			return true;
		}
		w += len;
	}
	return false;
}

size_t worker_env_build(char *const *env, const char *pass, bool glx, const char **out, size_t max,
			size_t *dropped)
{
	size_t n = 0;

	*dropped = 0;
	if (!max)
		return 0;
	for (size_t i = 0; env && env[i]; i++) {
		const char *e = env[i];

		if (!in_list(e, always, ARRAY_SIZE(always)) &&
		    !(glx && in_list(e, x_display, ARRAY_SIZE(x_display))) && !passed(e, pass))
			continue;
		if (n + 1 >= max) {
			(*dropped)++;
			continue;
		}
		out[n++] = e;
	}
	out[n] = NULL;
	return n;
}
