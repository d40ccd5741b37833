// SPDX-License-Identifier: MIT
/*
 * The command line of the guest clients (cluster-client, long-draws):
 * "--option value" pairs, or --help (-h) alone. What is wrong goes to
 * stderr as "PROG: OPTION: ...", PROG being the client's name.
 */
#ifndef GUEST_SHIM_CLIENT_ARGS_H
#define GUEST_SHIM_CLIENT_ARGS_H

#include <stdio.h>

/*
 * Takes one option and its value into @data: 0, or non-zero for a bad one
 * (after saying why, or after usage(stderr) for an unknown option).
 */
typedef int (*client_args_option_fn)(const char *opt, const char *val, void *data);

/*
 * Walks argv[1..@argc-1]: @option for each "--option value" pair. Returns
 * 0; 1 after usage(stdout) for --help or -h; -EINVAL after usage(stderr)
 * for an argument that starts no such pair, or when @option refused one.
 */
int client_args_parse(int argc, char **argv, client_args_option_fn option, void (*usage)(FILE *to),
		      void *data);

/* A decimal integer in [@min, @max], digits only, into *@out. 0 or -EINVAL. */
int client_args_ulong(const char *prog, const char *opt, const char *s, unsigned long min,
		      unsigned long max, unsigned long *out);
/* WxH (--size), each in [@min, @max], into *@width and *@height. 0 or -EINVAL. */
int client_args_size(const char *prog, const char *s, unsigned long min, unsigned long max,
		     unsigned long *width, unsigned long *height);
/* A non-empty string into *@out (which then points into @s). 0 or -EINVAL. */
int client_args_string(const char *prog, const char *opt, const char *s, const char **out);

#endif
