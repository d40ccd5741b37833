// SPDX-License-Identifier: MIT
/*
 * Who mediatord's workers run as (see worker_user.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/wire.h"
#include "daemon/worker_user.h"

/* Writes "UID:GID[:G1,...]" for @pw and its groups into out->run_as. */
static int format_run_as(const struct passwd *pw, struct worker_user *out, char *err,
			 size_t err_size)
{
	gid_t groups[WIRE_RUN_AS_MAX_GROUPS];
	int n = WIRE_RUN_AS_MAX_GROUPS;
	size_t used;

	if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0) {
		snprintf(err, err_size, "worker user %s is in more than %d groups", pw->pw_name,
			 WIRE_RUN_AS_MAX_GROUPS);
		return -E2BIG;
	}
	used = (size_t)snprintf(out->run_as, sizeof(out->run_as), "%u:%u", (unsigned)pw->pw_uid,
				(unsigned)pw->pw_gid);
	for (int i = 0; i < n && used < sizeof(out->run_as); i++)
		used += (size_t)snprintf(out->run_as + used, sizeof(out->run_as) - used, "%c%u",
					 i ? ',' : ':', (unsigned)groups[i]);
	if (used >= sizeof(out->run_as)) {
		snprintf(err, err_size, "worker user %s: too many groups", pw->pw_name);
		return -E2BIG;
	}
	return 0;
}

int worker_user_resolve(uid_t configured, struct worker_user *out, char *err, size_t err_size)
{
	const struct passwd *pw;

	memset(out, 0, sizeof(*out));
	out->uid = geteuid();
	out->gid = getegid();
	if (geteuid() != 0) {
		snprintf(out->name, sizeof(out->name), "uid %u", (unsigned)out->uid);
		return 0;
	}
	pw = configured == (uid_t)CONFIG_SOCKET_ID_UNSET ? getpwnam(CONFIG_DEFAULT_WORKER_USER)
							 : getpwuid(configured);
	if (!pw) {
		if (configured != (uid_t)CONFIG_SOCKET_ID_UNSET)
			snprintf(err, err_size, "worker_user: uid %u no longer exists",
				 (unsigned)configured);
		else
			snprintf(err, err_size,
				 "worker_user: no user '%s' on this system: create it "
				 "(scripts/add-worker-user.sh) or name another in worker_user",
				 CONFIG_DEFAULT_WORKER_USER);
		return -ENOENT;
	}
	out->uid = pw->pw_uid;
	out->gid = pw->pw_gid;
	snprintf(out->name, sizeof(out->name), "%s", pw->pw_name);
	if (pw->pw_uid == 0)
		return 0; /* worker_user = root, explicitly */
	out->switch_user = true;
	return format_run_as(pw, out, err, err_size);
}

int worker_user_own_dir(const struct worker_user *wu, const char *dir, bool created, char *err,
			size_t err_size)
{
	struct stat st;
	int fd, r = 0;

	if (!wu->switch_user)
		return 0;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, err_size, "%s: %s", dir, strerror(-r));
	} else if (st.st_uid == wu->uid) {
		r = 0;
	} else if (!created) {
		snprintf(err, err_size,
			 "%s belongs to uid %u, not to worker user %s (uid %u): give it to %s "
			 "(chown), or name a directory of its own in state_dir",
			 dir, (unsigned)st.st_uid, wu->name, (unsigned)wu->uid, wu->name);
		r = -EACCES;
	} else if (fchown(fd, wu->uid, wu->gid) < 0) {
		r = -errno;
		snprintf(err, err_size, "%s: cannot give it to worker user %s: %s", dir, wu->name,
			 strerror(-r));
	}
	if (fd >= 0)
		close(fd);
	return r;
}

int worker_user_make_dir(const struct worker_user *wu, const char *dir, mode_t mode, char *err,
			 size_t err_size)
{
	bool created = mkdir(dir, mode) == 0;

	if (!created && errno != EEXIST) {
		int r = -errno;

		snprintf(err, err_size, "%s: %s", dir, strerror(-r));
		return r;
	}
	return worker_user_own_dir(wu, dir, created, err, err_size);
}
