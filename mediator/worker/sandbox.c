// SPDX-License-Identifier: MIT
/*
 * A worker's rights, given up (see sandbox.h).
 */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "worker/sandbox.h"

static int parse_id(const char *s, char **end, uint32_t *out)
{
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, end, 10);
	if (errno || v >= UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int sandbox_parse_run_as(const char *s, struct sandbox_options *o)
{
	uint32_t uid, gid, g;
	char *end;

	if (parse_id(s, &end, &uid) < 0 || *end != ':' || parse_id(end + 1, &end, &gid) < 0)
		return -EINVAL;
	o->n_groups = 0;
	if (*end == ':') {
		do {
			if (o->n_groups == SANDBOX_MAX_GROUPS || parse_id(end + 1, &end, &g) < 0)
				return -EINVAL;
			o->groups[o->n_groups++] = (gid_t)g;
		} while (*end == ',');
	}
	if (*end != '\0')
		return -EINVAL;
	o->switch_user = true;
	o->uid = (uid_t)uid;
	o->gid = (gid_t)gid;
	return 0;
}

/* The private memory this process has mapped now (VmData), in bytes; 0 when unknown. */
static uint64_t data_in_use(void)
{
	char line[128];
	unsigned long long kib = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "VmData: %llu kB", &kib) == 1)
			break;
	}
	fclose(f);
	return (uint64_t)kib * 1024;
}

static bool kept(const struct sandbox_options *o, int fd)
{
	for (size_t i = 0; i < o->n_keep; i++) {
		if (o->keep[i] == fd)
			return true;
	}
	return false;
}

/* Closes every descriptor above 2 that @o does not keep. */
static int close_others(const struct sandbox_options *o)
{
	unsigned int from = 3;
	int highest = 2;

	for (size_t i = 0; i < o->n_keep; i++)
		highest = o->keep[i] > highest ? o->keep[i] : highest;
	for (int fd = 3; fd <= highest; fd++) {
		if (!kept(o, fd))
			continue;
		if ((unsigned)fd > from && close_range(from, (unsigned)fd - 1, 0) < 0)
			return -errno;
		from = (unsigned)fd + 1;
	}
	if (close_range(from, ~0u, 0) < 0)
		return -errno;
	return 0;
}

static int become_user(const struct sandbox_options *o, char *err, size_t err_size)
{
	uid_t r, e, s;

	if (setgroups(o->n_groups, o->groups) < 0 || setresgid(o->gid, o->gid, o->gid) < 0 ||
	    setresuid(o->uid, o->uid, o->uid) < 0) {
		int saved = errno;

		snprintf(err, err_size, "cannot become uid %u gid %u: %s", (unsigned)o->uid,
			 (unsigned)o->gid, strerror(saved));
		return -saved;
	}
	if (getresuid(&r, &e, &s) < 0 || r != o->uid || e != o->uid || s != o->uid) {
		snprintf(err, err_size, "still not uid %u after setresuid", (unsigned)o->uid);
		return -EPERM;
	}
	if (o->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
		snprintf(err, err_size, "uid %u can become root again", (unsigned)o->uid);
		return -EPERM;
	}
	return 0;
}

int sandbox_enter(const struct sandbox_options *o, char *err, size_t err_size)
{
	int r;

	r = close_others(o);
	if (r < 0) {
		snprintf(err, err_size, "cannot close inherited descriptors: %s", strerror(-r));
		return r;
	}
	if (o->data_limit_bytes) {
		/* On top of what is mapped already (the program; a sanitizer's shadow). */
		rlim_t limit = data_in_use() + o->data_limit_bytes;
		struct rlimit lim = {limit, limit};

		if (setrlimit(RLIMIT_DATA, &lim) < 0) {
			r = -errno;
			snprintf(err, err_size, "cannot limit its memory to %llu bytes: %s",
				 (unsigned long long)o->data_limit_bytes, strerror(-r));
			return r;
		}
	}
	if (o->switch_user) {
		r = become_user(o, err, err_size);
		if (r < 0)
			return r;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ||
	    prctl(PR_SET_PDEATHSIG, o->parent_death_signal, 0, 0, 0) < 0) {
		r = -errno;
		snprintf(err, err_size, "prctl: %s", strerror(-r));
		return r;
	}
	/* mediatord died before the parent-death signal was set again. */
	if (o->parent && getppid() != o->parent) {
		snprintf(err, err_size, "mediatord is gone");
		return -ESRCH;
	}
	return 0;
}
