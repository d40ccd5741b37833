// SPDX-License-Identifier: MIT
/*
 * Each domain's directories (doc/design.md, "Workers' rights"), its
 * worker user's alone (mode 0700):
 *   <state_dir>/<domain>   the learned models its workers keep;
 *   <cache_dir>/<domain>   the host GL driver's shader cache of its clients.
 * With a worker user per domain, a worker broken into by its guest can
 * neither read nor write another domain's models or compiled shaders.
 * <state_dir> and <cache_dir> themselves stay mediatord's (0755).
 * Models kept in the layout before this one (<state_dir>/<domain>.*.state)
 * move into the domain's directory.
 */
#ifndef MEDIATOR_DOMAIN_DIRS_H
#define MEDIATOR_DOMAIN_DIRS_H

#include "config/config.h"
#include "daemon/worker_user.h"

struct domain_dirs {
	char state[CONFIG_PATH_MAX + CONFIG_NAME_MAX + 1]; /* "": models not kept */
	char cache[CONFIG_PATH_MAX + CONFIG_NAME_MAX + 1]; /* "": Mesa's default place */
};

/*
 * Makes (where missing) and checks the directories of domain @domain of
 * @cfg for worker user @wu, into @out. What cannot be had is logged as a
 * warning (the worker runs on without it) and left "" in @out.
 */
void domain_dirs_prepare(const struct mediator_config *cfg, const char *domain,
			 const struct worker_user *wu, struct domain_dirs *out);

#endif
