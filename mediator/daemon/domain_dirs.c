// SPDX-License-Identifier: MIT
/*
 * Each domain's state and shader cache directories (see domain_dirs.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/domain_dirs.h"
#include "common/util.h"

/* mkdir -m 0755 @dir, where missing; false (logged) when it cannot be had. */
static bool make_parent(const char *key, const char *dir)
{
	if (mkdir(dir, 0755) == 0 || errno == EEXIST)
		return true;
	log_warn("%s %s: %s", key, dir, strerror(errno));
	return false;
}

/* Whether @name is "<domain>.<model>.state", the layout before domain directories. */
static bool old_state_file(const char *name, const char *domain)
{
	size_t n = strlen(name), d = strlen(domain);
	const char *suffix = ".state";

	return n > d + 1 + strlen(suffix) && strncmp(name, domain, d) == 0 && name[d] == '.' &&
	       strcmp(name + n - strlen(suffix), suffix) == 0;
}

/* Moves the domain's model files of the old layout from @parent into @dir, for @wu. */
static void move_old_state(const char *parent, const char *dir, const char *domain,
			   const struct worker_user *wu)
{
	DIR *d = opendir(parent);
	struct dirent *e;
	int from, to;

	if (!d)
		return;
	from = dirfd(d);
	to = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	while (to >= 0 && (e = readdir(d))) {
		struct stat st;

		if (!old_state_file(e->d_name, domain) ||
		    fstatat(from, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (faccessat(to, e->d_name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			continue; /* the new layout's file wins */
		if (renameat(from, e->d_name, to, e->d_name) < 0) {
			log_warn("domain %s: cannot move %s/%s into %s: %s", domain, parent,
				 e->d_name, dir, strerror(errno));
			continue;
		}
		if (wu->switch_user && fchownat(to, e->d_name, wu->uid, wu->gid, 0) < 0)
			log_warn("domain %s: %s/%s: cannot give it to %s: %s", domain, dir,
				 e->d_name, wu->name, strerror(errno));
		log_info("domain %s: learned model %s moved into %s", domain, e->d_name, dir);
	}
	if (to >= 0)
		close(to);
	closedir(d);
}

/* <parent>/<domain> for @wu into @out (size @size); "" where it cannot be had. */
static void make_domain_dir(const char *key, const char *parent, const char *domain,
			    const struct worker_user *wu, char *out, size_t size)
{
	char ebuf[512];

	out[0] = '\0';
	if (!make_parent(key, parent))
		return;
	snprintf(out, size, "%s/%s", parent, domain);
	if (worker_user_make_dir(wu, out, 0700, ebuf, sizeof(ebuf)) < 0) {
		log_warn("domain %s: %s %s", domain, key, ebuf);
		out[0] = '\0';
	}
}

void domain_dirs_prepare(const struct mediator_config *cfg, const char *domain,
			 const struct worker_user *wu, struct domain_dirs *out)
{
	make_domain_dir("state_dir", cfg->state_dir, domain, wu, out->state, sizeof(out->state));
	if (out->state[0])
		move_old_state(cfg->state_dir, out->state, domain, wu);
	else
		log_warn("domain %s: learned models will not be kept", domain);
	make_domain_dir("cache_dir", cfg->cache_dir, domain, wu, out->cache, sizeof(out->cache));
	if (!out->cache[0])
		log_warn("domain %s: shader cache in Mesa's default place", domain);
}
