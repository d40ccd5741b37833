// SPDX-License-Identifier: MIT
/*
 * Line-oriented logging to stderr. Each line is formatted into one buffer
 * and written with a single write(2), so that the lines of mediatord and of
 * its workers, which share stderr, stay whole.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"

static const char *log_program = "gpu-mediator";
static enum log_level log_max_level = LOG_LEVEL_INFO;

void log_init(const char *program, enum log_level max_level)
{
	log_program = program;
	log_max_level = max_level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};
	char line[1024];
	va_list ap;
	int n;

	if (level > log_max_level)
		return;
	n = snprintf(line, sizeof(line), "%s: %s: ", log_program, names[level]);
	if (n < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	n = (int)strnlen(line, sizeof(line) - 2);
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}
