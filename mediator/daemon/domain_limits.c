// SPDX-License-Identifier: MIT
/*
 * A domain's limits of clients and memory (see domain_limits.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/domain_limits.h"

struct domain_limits domain_limits_from_config(const struct domain_config *cfg)
{
	return (struct domain_limits){
	    .max_clients = cfg->max_clients,
	    .memory_kib = (uint64_t)cfg->domain_memory_mb * 1024u,
	};
}

int domain_limits_admit(const struct domain_limits *limits, const struct domain_usage *usage,
			const char **what)
{
	if (usage->clients >= limits->max_clients) {
		*what = "max_clients";
		return -EMFILE;
	}
	if (limits->memory_kib && usage->memory_kib >= limits->memory_kib) {
		*what = "domain_memory_mb";
		return -ENOMEM;
	}
	return 0;
}

bool domain_limits_over(const struct domain_limits *limits, const struct domain_usage *usage)
{
	return limits->memory_kib && usage->memory_kib > limits->memory_kib;
}

int domain_limits_parse_status(const char *text, uint64_t *kib)
{
	static const char key[] = "RssAnon:";
	const char *line = text;

	while (line && *line) {
		if (strncmp(line, key, sizeof(key) - 1) == 0) {
			const char *p = line + sizeof(key) - 1;
			char *end;
			unsigned long long v;

			while (*p == ' ' || *p == '\t')
				p++;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			errno = 0;
			v = strtoull(p, &end, 10);
			if (errno || strncmp(end, " kB", 3) != 0)
				return -EINVAL;
			*kib = v;
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

int domain_limits_worker_kib(pid_t pid, uint64_t *kib)
{
	char path[64], text[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	text[n] = '\0';
	return domain_limits_parse_status(text, kib);
}

bool domain_limits_log_pass(struct domain_limits_log *log, uint64_t now_ns, uint32_t *suppressed)
{
	if (!log->window_start_ns || now_ns - log->window_start_ns >= DOMAIN_LIMITS_LOG_WINDOW_NS) {
		log->window_start_ns = now_ns ? now_ns : 1;
		log->in_window = 0;
	}
	if (log->in_window >= DOMAIN_LIMITS_LOG_BURST) {
		log->suppressed++;
		return false;
	}
	log->in_window++;
	*suppressed = log->suppressed;
	log->suppressed = 0;
	return true;
}

bool domain_limits_log_flush(struct domain_limits_log *log, uint64_t now_ns, uint32_t *suppressed)
{
	if (!log->suppressed || now_ns - log->window_start_ns < DOMAIN_LIMITS_LOG_WINDOW_NS)
		return false;
	*suppressed = log->suppressed;
	log->suppressed = 0;
	log->window_start_ns = now_ns;
	log->in_window = 0;
	return true;
}

/* The path of the cgroup v2 line ("0::/PATH") of /proc/self/cgroup's @text, or NULL. */
static const char *unified_path(const char *text, size_t *len)
{
	const char *line = text;

	while (line && *line) {
		if (strncmp(line, "0::", 3) == 0) {
			const char *end = strchr(line + 3, '\n');

			*len = end ? (size_t)(end - line - 3) : strlen(line + 3);
			return line + 3;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return NULL;
}

int domain_limits_cgroup_probe(const char *root, const char *self_cgroup, char *where,
			       size_t where_size)
{
	char path[512], controllers[512];
	const char *self;
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(where, where_size, "no cgroup v2 hierarchy at %s (%s)", root,
			 strerror(errno));
		return -ENOENT;
	}
	n = read(fd, controllers, sizeof(controllers) - 1);
	close(fd);
	controllers[n > 0 ? n : 0] = '\0';
	for (char *tok = strtok(controllers, " \n"); tok; tok = strtok(NULL, " \n"))
		if (strcmp(tok, "memory") == 0)
			goto memory;
	snprintf(where, where_size, "the cgroup v2 hierarchy at %s has no memory controller", root);
	return -ENOTSUP;
memory:
	self = unified_path(self_cgroup, &len);
	if (!self) {
		snprintf(where, where_size, "mediatord is in no cgroup v2 cgroup");
		return -ENOTSUP;
	}
	snprintf(path, sizeof(path), "%s%.*s/cgroup.subtree_control", root, (int)len, self);
	if (access(path, W_OK) < 0) {
		snprintf(where, where_size, "%s is not writable: not delegated to mediatord (%s)",
			 path, strerror(errno));
		return -EACCES;
	}
	snprintf(where, where_size, "%s%.*s", root, (int)len, self);
	return 0;
}
