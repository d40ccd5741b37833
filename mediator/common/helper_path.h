// SPDX-License-Identifier: MIT
/*
 * Where mediatord and mediatorctl find the programs they start
 * (mediator-worker, mediator-exec, mediator-calibrate).
 */
#ifndef MEDIATOR_HELPER_PATH_H
#define MEDIATOR_HELPER_PATH_H

#include <stddef.h>

/*
 * Writes the path of program @name into @out: $@env when set, else next
 * to the running executable in @build_subdir (the build tree's layout,
 * "" for none) or beside it, else in the libexec directory. Returns 0
 * when that file is executable, else a negative errno (@out still names
 * the last place tried).
 */
int helper_path(const char *env, const char *build_subdir, const char *name, char *out,
		size_t size);

#endif
