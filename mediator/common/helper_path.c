// SPDX-License-Identifier: MIT
/*
 * Finding the programs mediatord and mediatorctl start (see helper_path.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/helper_path.h"
#include "build-config/build-config.h"

int helper_path(const char *env, const char *build_subdir, const char *name, char *out, size_t size)
{
	const char *e = getenv(env);
	char self[PATH_MAX - 64];
	ssize_t n;

	if (!out || size == 0)
		return -EINVAL;
	if (e && *e) {
		snprintf(out, size, "%s", e);
		return access(out, X_OK) == 0 ? 0 : -errno;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(out, size, "%s/%s%s", self, build_subdir, name);
			if (access(out, X_OK) == 0)
				return 0;
			snprintf(out, size, "%s/%s", self, name);
			if (access(out, X_OK) == 0)
				return 0;
		}
	}
	snprintf(out, size, "%s/%s", MEDIATOR_LIBEXECDIR, name);
	return access(out, X_OK) == 0 ? 0 : -errno;
}
