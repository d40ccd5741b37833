// SPDX-License-Identifier: MIT
/*
 * The guest clients' command line (see client_args.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "client_args.h"

int client_args_parse(int argc, char **argv, client_args_option_fn option, void (*usage)(FILE *to),
		      void *data)
{
	for (int i = 1; i < argc; i += 2) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 1;
		}
		if (i + 1 >= argc || strncmp(argv[i], "--", 2) != 0) {
			usage(stderr);
			return -EINVAL;
		}
		if (option(argv[i], argv[i + 1], data))
			return -EINVAL;
	}
	return 0;
}

/* A decimal number at @s, digits only up to *@end; false if none or too large. */
static bool decimal(const char *s, char **end, unsigned long *out)
{
	if (!isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	*out = strtoul(s, end, 10);
	return errno == 0;
}

int client_args_ulong(const char *prog, const char *opt, const char *s, unsigned long min,
		      unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!decimal(s, &end, &v) || *end || v < min || v > max) {
		fprintf(stderr, "%s: %s: expected an integer in %lu..%lu, got '%s'\n", prog, opt,
			min, max, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int client_args_size(const char *prog, const char *s, unsigned long min, unsigned long max,
		     unsigned long *width, unsigned long *height)
{
	char *end;
	unsigned long w, h;

	if (decimal(s, &end, &w) && *end == 'x' && decimal(end + 1, &end, &h) && !*end &&
	    w >= min && w <= max && h >= min && h <= max) {
		*width = w;
		*height = h;
		return 0;
	}
	fprintf(stderr, "%s: --size: expected WxH, each in %lu..%lu, got '%s'\n", prog, min, max,
		s);
	return -EINVAL;
}

int client_args_string(const char *prog, const char *opt, const char *s, const char **out)
{
	if (!s[0]) {
		fprintf(stderr, "%s: %s: empty\n", prog, opt);
		return -EINVAL;
	}
	*out = s;
	return 0;
}
