// SPDX-License-Identifier: MIT
/*
 * Tests of the guest clients' command line (guest-shim's client_args):
 * integers in their range and nothing else, WxH sizes, non-empty strings,
 * and the walk over "--option value" pairs with --help and bad arguments.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "client_args.h"

static void integers_in_range_are_taken_and_others_refused(void **state)
{
	unsigned long v = 7;

	assert_int_equal(client_args_ulong("t", "--n", "42", 1, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(client_args_ulong("t", "--n", "100", 1, 100, &v), 0);
	assert_int_equal(v, 100);
	v = 7;
	assert_int_equal(client_args_ulong("t", "--n", "0", 1, 100, &v), -EINVAL);
	assert_int_equal(client_args_ulong("t", "--n", "101", 1, 100, &v), -EINVAL);
	assert_int_equal(client_args_ulong("t", "--n", "-5", 1, 100, &v), -EINVAL);
	assert_int_equal(client_args_ulong("t", "--n", " 5", 1, 100, &v), -EINVAL);
	assert_int_equal(client_args_ulong("t", "--n", "5x", 1, 100, &v), -EINVAL);
	assert_int_equal(client_args_ulong("t", "--n", "", 1, 100, &v), -EINVAL);
	assert_int_equal(client_args_ulong("t", "--n", "99999999999999999999999", 1, 100, &v),
			 -EINVAL);
	assert_int_equal(v, 7); /* untouched by refusals */
}

static void sizes_are_w_x_h_within_limits(void **state)
{
	unsigned long w = 1, h = 2;

	assert_int_equal(client_args_size("t", "800x480", 16, 8192, &w, &h), 0);
	assert_int_equal(w, 800);
	assert_int_equal(h, 480);
	w = 1;
	h = 2;
	assert_int_equal(client_args_size("t", "800", 16, 8192, &w, &h), -EINVAL);
	assert_int_equal(client_args_size("t", "800x", 16, 8192, &w, &h), -EINVAL);
	assert_int_equal(client_args_size("t", "x480", 16, 8192, &w, &h), -EINVAL);
	assert_int_equal(client_args_size("t", "800x-480", 16, 8192, &w, &h), -EINVAL);
	assert_int_equal(client_args_size("t", "800x480x1", 16, 8192, &w, &h), -EINVAL);
	assert_int_equal(client_args_size("t", "8x480", 16, 8192, &w, &h), -EINVAL);
	assert_int_equal(client_args_size("t", "800x9000", 16, 8192, &w, &h), -EINVAL);
	assert_int_equal(w, 1);
	assert_int_equal(h, 2);
}

static void strings_must_not_be_empty(void **state)
{
	const char *s = NULL;

	assert_int_equal(client_args_string("t", "--json", "out.json", &s), 0);
	assert_string_equal(s, "out.json");
	assert_int_equal(client_args_string("t", "--json", "", &s), -EINVAL);
	assert_string_equal(s, "out.json");
}

struct seen {
	char opts[256];
	int usage_stdout, usage_stderr;
};

static struct seen *seen_now;

static void usage(FILE *to)
{
	if (to == stdout)
		seen_now->usage_stdout++;
	else
		seen_now->usage_stderr++;
}

/* Records "opt=val;"; refuses --bad. */
static int option(const char *opt, const char *val, void *data)
{
	struct seen *s = data;

	if (strcmp(opt, "--bad") == 0)
		return -1;
	strcat(s->opts, opt);
	strcat(s->opts, "=");
	strcat(s->opts, val);
	strcat(s->opts, ";");
	return 0;
}

static int parse(struct seen *s, int argc, char **argv)
{
	memset(s, 0, sizeof(*s));
	seen_now = s;
	return client_args_parse(argc, argv, option, usage, s);
}

static void pairs_are_walked_in_order(void **state)
{
	char *argv[] = {"prog", "--a", "1", "--b", "two", NULL};
	struct seen s;

	assert_int_equal(parse(&s, 5, argv), 0);
	assert_string_equal(s.opts, "--a=1;--b=two;");
	assert_int_equal(parse(&s, 1, argv), 0);
	assert_string_equal(s.opts, "");
}

static void help_prints_the_usage_to_stdout(void **state)
{
	char *argv[] = {"prog", "--a", "1", "-h", NULL};
	char *help[] = {"prog", "--help", NULL};
	struct seen s;

	assert_int_equal(parse(&s, 4, argv), 1);
	assert_int_equal(s.usage_stdout, 1);
	assert_int_equal(parse(&s, 2, help), 1);
	assert_int_equal(s.usage_stdout, 1);
	assert_int_equal(s.usage_stderr, 0);
}

static void bad_arguments_are_refused(void **state)
{
	char *lone[] = {"prog", "--a", NULL};
	char *plain[] = {"prog", "a", "1", NULL};
	char *bad[] = {"prog", "--a", "1", "--bad", "x", "--c", "3", NULL};
	struct seen s;

	assert_int_equal(parse(&s, 2, lone), -EINVAL);
	assert_int_equal(s.usage_stderr, 1);
	assert_int_equal(parse(&s, 3, plain), -EINVAL);
	assert_int_equal(s.usage_stderr, 1);
	assert_int_equal(parse(&s, 7, bad), -EINVAL);
	assert_string_equal(s.opts, "--a=1;"); /* stops at the refused one */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(integers_in_range_are_taken_and_others_refused),
	    cmocka_unit_test(sizes_are_w_x_h_within_limits),
	    cmocka_unit_test(strings_must_not_be_empty),
	    cmocka_unit_test(pairs_are_walked_in_order),
	    cmocka_unit_test(help_prints_the_usage_to_stdout),
	    cmocka_unit_test(bad_arguments_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
