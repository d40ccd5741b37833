// SPDX-License-Identifier: MIT
#include "common/libvirt_name.h"

#include <string.h>

/* The length of the UTF-8 character starting with byte @c (1 for a byte that starts none). */
static size_t utf8_char_len(unsigned char c)
{
	if (c >= 0xf0 && c < 0xf8)
		return 4;
	if (c >= 0xe0)
		return c < 0xf0 ? 3 : 1;
	if (c >= 0xc0)
		return 2;
	return 1;
}

size_t libvirt_short_name_len(const char *name)
{
	size_t len = 0;

	for (int chars = 0; chars < LIBVIRT_SHORT_NAME_CHARS && name[len]; chars++) {
		size_t n = utf8_char_len((unsigned char)name[len]);

		for (size_t i = 1; i < n; i++) {
			if (((unsigned char)name[len + i] & 0xc0) != 0x80) {
				n = 1;
				break;
			}
		}
		len += n;
	}
	return len;
}

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Whether @alias is a video device's alias libvirt gives or accepts. */
static bool is_video_alias(const char *alias)
{
	if (!strncmp(alias, "video", 5))
		return all_digits(alias + 5, strlen(alias + 5));
	return !strncmp(alias, "ua-", 3) && alias[3];
}

bool libvirt_stem_is_vm(const char *stem, const char *name)
{
	size_t id_len = strspn(stem, "0123456789");
	size_t short_len = libvirt_short_name_len(name);
	const char *rest;

	if (!id_len || stem[id_len] != '-' || !short_len)
		return false;
	rest = stem + id_len + 1;
	if (strncmp(rest, name, short_len) || rest[short_len] != '-')
		return false;
	return is_video_alias(rest + short_len + 1);
}
