// SPDX-License-Identifier: MIT
#include "daemon/vm_identity.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/libvirt_name.h"

/* Reads the pid in file @name of directory @dir; 0 when it holds none (or is no trusted file). */
static pid_t read_pidfile(int dir, const char *name)
{
	char buf[VM_IDENTITY_PIDFILE_MAX + 1];
	struct stat st;
	long pid = 0;
	ssize_t n;
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != geteuid()) || st.st_size > VM_IDENTITY_PIDFILE_MAX) {
		close(fd);
		return 0;
	}
	n = read(fd, buf, VM_IDENTITY_PIDFILE_MAX);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (char *c = buf; *c && *c != '\n'; c++) {
		if (*c < '0' || *c > '9' || pid > 99999999)
			return 0;
		pid = pid * 10 + (*c - '0');
	}
	return (pid_t)pid;
}

int vm_identity_stem_of_pid(const char *state_dir, pid_t pid, char *stem, size_t stem_size)
{
	size_t suffix_len = strlen(LIBVIRT_VHOST_GPU_PIDFILE_SUFFIX);
	struct dirent *e;
	int r = -ENOENT;
	DIR *dir;

	if (pid <= 0)
		return -ENOENT;
	dir = opendir(state_dir);
	if (!dir)
		return -errno;
	while ((e = readdir(dir))) {
		size_t len = strlen(e->d_name);

		if (len <= suffix_len ||
		    strcmp(e->d_name + len - suffix_len, LIBVIRT_VHOST_GPU_PIDFILE_SUFFIX) ||
		    read_pidfile(dirfd(dir), e->d_name) != pid)
			continue;
		if (len - suffix_len >= stem_size) {
			r = -ENAMETOOLONG;
			continue;
		}
		snprintf(stem, stem_size, "%.*s", (int)(len - suffix_len), e->d_name);
		r = 0;
		break;
	}
	closedir(dir);
	return r;
}
