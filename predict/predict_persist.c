// SPDX-License-Identifier: MIT
/*
 * Saving and loading model states (see predict_persist.h). This is the
 * only file of the predict library that does I/O.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "predict_persist.h"

#define PERSIST_MAGIC	  "GMPRED"
#define PERSIST_MAGIC_LEN 6
/* Largest valid file: header + identity + every model at its largest + CRC. */
#define PERSIST_FILE_MAX                                                                           \
	(PERSIST_MAGIC_LEN + 2 + 4 + PREDICT_PERSIST_IDENTITY_MAX + 4 +                            \
	 PREDICT_PERSIST_MODELS_MAX *                                                              \
	     (4 + PREDICT_PERSIST_NAME_MAX + 4 + PREDICT_MODEL_STATE_MAX) +                        \
	 4)

uint32_t predict_persist_crc32(const void *data, size_t len)
{
	static uint32_t table[256];
	static bool ready;
	const uint8_t *p = data;
	uint32_t crc = 0xffffffffu;

	if (!ready) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
		ready = true;
	}
	for (size_t i = 0; i < len; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc ^ 0xffffffffu;
}

struct buf {
	uint8_t *data;
	size_t len, cap;
};

/* An entry names exactly one model or one section, complete. */
static bool entry_valid(const struct predict_persist_entry *e)
{
	if (e->ops)
		return e->model && !e->section && e->ops->name;
	return e->section && e->obj && e->section->name && e->section->save && e->section->load;
}

static const char *entry_name(const struct predict_persist_entry *e)
{
	return e->ops ? e->ops->name : e->section->name;
}

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void put_u32(struct buf *b, uint32_t v)
{
	uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

	put(b, le, 4);
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The directory of @path, allocated (the caller frees it), or NULL. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

static int fsync_dir_of(const char *path)
{
	char *dir = dir_of(path);
	int fd, ret = 0;

	if (!dir)
		return -ENOMEM;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		if (fsync(fd) < 0)
			ret = -errno;
		close(fd);
	}
	free(dir);
	return ret;
}

int predict_persist_save(const char *path, const char *identity,
			 const struct predict_persist_entry *entries, size_t n)
{
	struct buf b = {0};
	size_t id_len;
	char *tmp = NULL;
	int fd = -1, ret;

	if (!path || !identity || (n > 0 && !entries) || n > PREDICT_PERSIST_MODELS_MAX)
		return -EINVAL;
	id_len = strlen(identity);
	if (id_len > PREDICT_PERSIST_IDENTITY_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!entry_valid(&entries[i]) ||
		    strlen(entry_name(&entries[i])) > PREDICT_PERSIST_NAME_MAX)
			return -EINVAL;
		for (size_t j = 0; j < i; j++) {
			if (strcmp(entry_name(&entries[i]), entry_name(&entries[j])) == 0)
				return -EINVAL;
		}
	}
	b.cap = PERSIST_FILE_MAX;
	b.data = malloc(b.cap);
	if (!b.data)
		return -ENOMEM;
	put(&b, PERSIST_MAGIC, PERSIST_MAGIC_LEN);
	put(&b, (const uint8_t[]){PREDICT_PERSIST_VERSION & 0xff, PREDICT_PERSIST_VERSION >> 8}, 2);
	put_u32(&b, (uint32_t)id_len);
	put(&b, identity, id_len);
	put_u32(&b, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		const char *name = entry_name(&entries[i]);
		size_t len_at;
		int len;

		put_u32(&b, (uint32_t)strlen(name));
		put(&b, name, strlen(name));
		len_at = b.len;
		put_u32(&b, 0);
		len = entries[i].ops ? entries[i].ops->save(entries[i].model, b.data + b.len,
							    PREDICT_MODEL_STATE_MAX)
				     : entries[i].section->save(entries[i].obj, b.data + b.len,
								PREDICT_MODEL_STATE_MAX);
		if (len < 0) {
			ret = len;
			goto out;
		}
		b.len = len_at;
		put_u32(&b, (uint32_t)len);
		b.len += (size_t)len;
	}
	put_u32(&b, predict_persist_crc32(b.data, b.len));

	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
		tmp = NULL;
		ret = -ENOMEM;
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		free(tmp);
		tmp = NULL;
		goto out;
	}
	ret = write_all(fd, b.data, b.len);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	fd = -1;
	if (!ret && rename(tmp, path) < 0)
		ret = -errno;
	if (ret) {
		unlink(tmp);
		goto out;
	}
	ret = fsync_dir_of(path);
out:
	free(tmp);
	free(b.data);
	return ret;
}

int predict_persist_sweep(const char *path, unsigned older_than_s)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *dir, *prefix = NULL;
	size_t prefix_len;
	struct dirent *e;
	DIR *d;
	time_t now = time(NULL);
	int removed = 0;

	dir = dir_of(path);
	if (!dir || asprintf(&prefix, "%s.tmp.", base) < 0) {
		free(dir);
		return -ENOMEM;
	}
	prefix_len = strlen(prefix);
	d = opendir(dir);
	if (!d) {
		removed = -errno;
		goto out;
	}
	while ((e = readdir(d))) {
		struct stat st;

		if (strncmp(e->d_name, prefix, prefix_len) != 0 ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode) || now - st.st_mtime <= (time_t)older_than_s)
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			removed++;
	}
	closedir(d);
out:
	free(prefix);
	free(dir);
	return removed;
}

/* Reads all of @path (at most PERSIST_FILE_MAX + 1 bytes, to tell "too big"). */
static int read_file(const char *path, uint8_t **data, size_t *len)
{
	size_t cap = PERSIST_FILE_MAX + 1, n = 0;
	uint8_t *p;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	p = malloc(cap);
	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	while (n < cap) {
		ssize_t r = read(fd, p + n, cap - n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (ret) {
		free(p);
		return ret;
	}
	*data = p;
	*len = n;
	return 0;
}

struct model_state {
	const uint8_t *name;
	uint32_t name_len;
	const uint8_t *state;
	uint32_t state_len;
};

/* Takes @n bytes at *@pos of @data (@len), or returns NULL. */
static const uint8_t *take(const uint8_t *data, size_t len, size_t *pos, size_t n)
{
	const uint8_t *p;

	if (len - *pos < n)
		return NULL;
	p = data + *pos;
	*pos += n;
	return p;
}

int predict_persist_load(const char *path, const char *identity,
			 struct predict_persist_entry *entries, size_t n)
{
	struct model_state ms[PREDICT_PERSIST_MODELS_MAX];
	const uint8_t *p, *id;
	uint8_t *data = NULL;
	size_t len = 0, pos = 0;
	uint32_t id_len, count;
	int ret;

	if (!path || (n > 0 && !entries))
		return -EINVAL;
	ret = read_file(path, &data, &len);
	if (ret)
		return ret;
	ret = -EINVAL;
	/* The CRC first: it covers everything, so nothing below reads garbage. */
	if (len < PERSIST_MAGIC_LEN + 2 + 4 + 4 + 4 || len > PERSIST_FILE_MAX ||
	    predict_persist_crc32(data, len - 4) != get_u32(data + len - 4))
		goto out;
	len -= 4;
	p = take(data, len, &pos, PERSIST_MAGIC_LEN + 2);
	if (memcmp(p, PERSIST_MAGIC, PERSIST_MAGIC_LEN) != 0 ||
	    (p[6] | p[7] << 8) != PREDICT_PERSIST_VERSION)
		goto out;
	id_len = get_u32(take(data, len, &pos, 4));
	if (id_len > PREDICT_PERSIST_IDENTITY_MAX || !(id = take(data, len, &pos, id_len)))
		goto out;
	if (!(p = take(data, len, &pos, 4)))
		goto out;
	count = get_u32(p);
	if (count > PREDICT_PERSIST_MODELS_MAX)
		goto out;
	for (uint32_t i = 0; i < count; i++) {
		if (!(p = take(data, len, &pos, 4)))
			goto out;
		ms[i].name_len = get_u32(p);
		if (ms[i].name_len > PREDICT_PERSIST_NAME_MAX ||
		    !(ms[i].name = take(data, len, &pos, ms[i].name_len)) ||
		    !(p = take(data, len, &pos, 4)))
			goto out;
		ms[i].state_len = get_u32(p);
		if (ms[i].state_len > PREDICT_MODEL_STATE_MAX ||
		    !(ms[i].state = take(data, len, &pos, ms[i].state_len)))
			goto out;
		for (uint32_t j = 0; j < i; j++) {
			if (ms[j].name_len == ms[i].name_len &&
			    memcmp(ms[j].name, ms[i].name, ms[i].name_len) == 0)
				goto out;
		}
	}
	if (pos != len)
		goto out;
	if (identity && (id_len != strlen(identity) || memcmp(id, identity, id_len) != 0)) {
		ret = -ESTALE;
		goto out;
	}
	ret = 0;
	for (size_t e = 0; e < n; e++) {
		const char *name = entry_valid(&entries[e]) ? entry_name(&entries[e]) : "";
		size_t name_len = strlen(name);

		entries[e].status = -ENOENT;
		if (!entry_valid(&entries[e])) {
			entries[e].status = -EINVAL;
			ret = -EINVAL;
			continue;
		}
		for (uint32_t i = 0; i < count; i++) {
			if (ms[i].name_len != name_len || memcmp(ms[i].name, name, name_len) != 0)
				continue;
			entries[e].status =
			    entries[e].ops ? entries[e].ops->load(entries[e].model, ms[i].state,
								  ms[i].state_len)
					   : entries[e].section->load(entries[e].obj, ms[i].state,
								      ms[i].state_len);
			if (entries[e].status)
				ret = -EINVAL;
			break;
		}
	}
out:
	free(data);
	return ret;
}
