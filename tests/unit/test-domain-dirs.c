// SPDX-License-Identifier: MIT
/*
 * Tests of each domain's directories (domain_dirs.h), as a user that
 * gives them to nobody else (the worker user is mediatord's own; who owns
 * them under root is test-domain-users'): both made, mode 0700; models of
 * the layout before moved in, only the domain's own regular files, never
 * over a newer one; what cannot be made is left "".
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/domain_dirs.h"

struct fixture {
	char root[64];
	struct mediator_config cfg;
	struct worker_user wu; /* switch_user false: directories stay ours */
};

static int setup(void **state)
{
	static struct fixture f;

	memset(&f, 0, sizeof(f));
	snprintf(f.root, sizeof(f.root), "/tmp/test-domain-dirs.XXXXXX");
	assert_non_null(mkdtemp(f.root));
	snprintf(f.cfg.state_dir, sizeof(f.cfg.state_dir), "%s/state", f.root);
	snprintf(f.cfg.cache_dir, sizeof(f.cfg.cache_dir), "%s/cache", f.root);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* Writes @text into file @dir/@name. */
static void write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* The contents of @dir/@name ("" when missing), in a static buffer. */
static const char *read_file(const char *dir, const char *name)
{
	static char text[64];
	char path[256];
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "r");
	if (!fp)
		return "";
	n = fread(text, 1, sizeof(text) - 1, fp);
	text[n] = '\0';
	fclose(fp);
	return text;
}

static void both_directories_are_made_for_the_domain_alone(void **state)
{
	struct fixture *f = *state;
	struct domain_dirs dirs;
	struct stat st;
	char want[256];

	domain_dirs_prepare(&f->cfg, "cluster", &f->wu, &dirs);
	snprintf(want, sizeof(want), "%s/cluster", f->cfg.state_dir);
	assert_string_equal(dirs.state, want);
	snprintf(want, sizeof(want), "%s/cluster", f->cfg.cache_dir);
	assert_string_equal(dirs.cache, want);
	assert_int_equal(stat(dirs.state, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat(dirs.cache, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	/* The parents stay mediatord's, open to look into. */
	assert_int_equal(stat(f->cfg.state_dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0755 & ~(mode_t)umask(022));
}

static void models_of_the_layout_before_move_in(void **state)
{
	struct fixture *f = *state;
	struct domain_dirs dirs;
	char path[256];

	assert_int_equal(mkdir(f->cfg.state_dir, 0755), 0);
	write_file(f->cfg.state_dir, "cluster.sgd.state", "sgd");
	write_file(f->cfg.state_dir, "cluster.rls.state", "old rls");
	write_file(f->cfg.state_dir, "clusterx.sgd.state", "another domain's");
	write_file(f->cfg.state_dir, "infotainment.sgd.state", "another domain's");
	write_file(f->cfg.state_dir, "cluster.notes", "not a model");
	snprintf(path, sizeof(path), "%s/cluster.link.state", f->cfg.state_dir);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	/* A model of the new layout is newer than the old one of its name. */
	snprintf(path, sizeof(path), "%s/cluster", f->cfg.state_dir);
	assert_int_equal(mkdir(path, 0700), 0);
	write_file(path, "cluster.rls.state", "new rls");

	domain_dirs_prepare(&f->cfg, "cluster", &f->wu, &dirs);
	assert_string_equal(read_file(dirs.state, "cluster.sgd.state"), "sgd");
	assert_string_equal(read_file(f->cfg.state_dir, "cluster.sgd.state"), "");
	assert_string_equal(read_file(dirs.state, "cluster.rls.state"), "new rls");
	assert_string_equal(read_file(f->cfg.state_dir, "cluster.rls.state"), "old rls");
	assert_string_equal(read_file(f->cfg.state_dir, "clusterx.sgd.state"), "another domain's");
	assert_string_equal(read_file(f->cfg.state_dir, "infotainment.sgd.state"),
			    "another domain's");
	assert_string_equal(read_file(f->cfg.state_dir, "cluster.notes"), "not a model");
	snprintf(path, sizeof(path), "%s/cluster.link.state", dirs.state);
	assert_int_equal(access(path, F_OK), -1); /* a link stays where it is */
}

static void what_cannot_be_made_is_left_empty(void **state)
{
	struct fixture *f = *state;
	struct domain_dirs dirs;

	/* state_dir's parent is a file. */
	write_file(f->root, "file", "x");
	snprintf(f->cfg.state_dir, sizeof(f->cfg.state_dir), "%s/file/state", f->root);
	domain_dirs_prepare(&f->cfg, "cluster", &f->wu, &dirs);
	assert_string_equal(dirs.state, "");
	assert_true(dirs.cache[0] != '\0');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(both_directories_are_made_for_the_domain_alone, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(models_of_the_layout_before_move_in, setup, teardown),
	    cmocka_unit_test_setup_teardown(what_cannot_be_made_is_left_empty, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
