// SPDX-License-Identifier: MIT
/*
 * The per-group trace file (see trace.h and doc/trace-format.md for the format).
 *
 * A struct trace is one open trace file behind a stdio buffer. It is written
 * once per measured command group on mediatord's main thread, so records
 * are formatted straight into the buffer (no JSON objects are built) and
 * the file is flushed by trace_tick() at most once a second, or earlier
 * when the buffer fills. Strings in a record come from the config (domain
 * names) and from worker processes (model names), and a worker may be
 * compromised: they are escaped so that every line stays one valid JSON
 * object whatever bytes they hold.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "predict.h"
#include "daemon/trace.h"
#include "common/util.h"

_Static_assert(PREDICT_CMD_CLASS_COUNT <= WIRE_CMD_CLASSES, "the wire holds every command class");

/* stdio buffer of a trace file: about a second of records at a few hundred groups/s per domain. */
#define TRACE_BUFFER_SIZE (256 * 1024)

struct trace {
	FILE *file;
	char *path;
	uint64_t last_flush_ns;
	int error; /* first write error (negative errno), reported by later calls */
	char buffer[TRACE_BUFFER_SIZE];
};

/*
 * Length of the well-formed UTF-8 sequence at @s (at most @n bytes), or 0 if
 * there is none (RFC 3629: no overlong forms, no surrogates, <= U+10FFFF).
 */
static size_t utf8_sequence_length(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	}
	return len;
}

/*
 * Writes @len bytes at @str as a JSON string, quotes included. Control
 * characters are escaped; bytes that are not well-formed UTF-8 become
 * U+FFFD, so the output is valid JSON for any input.
 */
static void put_json_string(FILE *f, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	putc_unlocked('"', f);
	while (i < len) {
		unsigned char ch = s[i];

		if (ch == '"' || ch == '\\') {
			putc_unlocked('\\', f);
			putc_unlocked(ch, f);
			i++;
		} else if (ch == '\n') {
			fputs_unlocked("\\n", f);
			i++;
		} else if (ch == '\t') {
			fputs_unlocked("\\t", f);
			i++;
		} else if (ch == '\r') {
			fputs_unlocked("\\r", f);
			i++;
		} else if (ch < 0x20 || ch == 0x7f) {
			fprintf(f, "\\u%04x", ch);
			i++;
		} else if (ch < 0x80) {
			putc_unlocked(ch, f);
			i++;
		} else {
			size_t n = utf8_sequence_length(s + i, len - i);

			if (n) {
				fwrite_unlocked(s + i, 1, n, f);
				i += n;
			} else {
				fputs_unlocked("\\ufffd", f);
				i++;
			}
		}
	}
	putc_unlocked('"', f);
}

struct trace *trace_create(int fd, const char *path, char *err, size_t err_size)
{
	struct trace *trace;
	struct stat st;

	/* open_as.c checked it as the client; checked again here, where it is cheap. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, err_size, "trace '%s': not a regular file", path);
		close(fd);
		return NULL;
	}
	if (ftruncate(fd, 0) < 0) {
		snprintf(err, err_size, "trace '%s': cannot truncate it: %s", path,
			 strerror(errno));
		close(fd);
		return NULL;
	}
	trace = calloc(1, sizeof(*trace));
	if (!trace || !(trace->path = strdup(path))) {
		snprintf(err, err_size, "trace '%s': out of memory", path);
		free(trace);
		close(fd);
		return NULL;
	}
	trace->file = fdopen(fd, "w");
	if (!trace->file) {
		snprintf(err, err_size, "trace '%s': %s", path, strerror(errno));
		close(fd);
		free(trace->path);
		free(trace);
		return NULL;
	}
	setvbuf(trace->file, trace->buffer, _IOFBF, sizeof(trace->buffer));
	trace->last_flush_ns = mono_now_ns();
	return trace;
}

int trace_close(struct trace *trace)
{
	int r;

	if (!trace)
		return 0;
	r = trace->error;
	if (fflush(trace->file) != 0 && !r)
		r = -errno;
	if (fclose(trace->file) != 0 && !r)
		r = -errno;
	free(trace->path);
	free(trace);
	return r;
}

int trace_write_frame(struct trace *trace, const char *domain, const struct sched_frame *frame)
{
	FILE *f = trace->file;

	if (trace->error)
		return trace->error;
	errno = 0;
	fputs_unlocked("{\"type\":\"frame\",\"domain\":", f);
	put_json_string(f, domain, strlen(domain));
	fprintf(f,
		",\"release_ns\":%" PRIu64 ",\"deadline_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
		",\"missed\":%s,\"alone\":%s,\"startup\":%s,\"bound_ns\":%" PRIu64
		",\"period_ns\":%" PRIu64 "}\n",
		frame->release_ns, frame->deadline_ns, frame->end_ns,
		frame->missed ? "true" : "false", frame->alone ? "true" : "false",
		frame->startup ? "true" : "false", frame->bound_ns, frame->period_ns);
	if (ferror(f)) {
		trace->error = errno ? -errno : -EIO;
		return trace->error;
	}
	return 0;
}

int trace_write_group(struct trace *trace, const char *domain, uint32_t client,
		      const struct wire_group *group)
{
	FILE *f = trace->file;
	uint64_t measured = group->end_ns >= group->start_ns ? group->end_ns - group->start_ns : 0;
	bool first = true;

	if (trace->error)
		return trace->error;
	errno = 0;

	fputs_unlocked("{\"domain\":", f);
	put_json_string(f, domain, strlen(domain));
	fprintf(f,
		",\"client\":%" PRIu32 ",\"ctx\":%" PRIu32 ",\"seq\":%" PRIu64
		",\"request_ns\":%" PRIu64 ",\"dispatch_ns\":%" PRIu64 ",\"start_ns\":%" PRIu64
		",\"end_ns\":%" PRIu64 ",\"measured_ns\":%" PRIu64 ",\"predicted_ns\":%" PRIu64
		",\"bound_ns\":%" PRIu64 ",\"model\":",
		client, group->ctx_id, group->seq, group->request_ns, group->dispatch_ns,
		group->start_ns, group->end_ns, measured, group->predicted_ns, group->bound_ns);
	put_json_string(f, group->model, strnlen(group->model, sizeof(group->model)));
	if (group->young)
		fputs_unlocked(",\"young\":true", f);
	if (group->pieces > 1)
		fprintf(f, ",\"piece\":[%u,%u]", (unsigned)group->piece, (unsigned)group->pieces);
	if (group->tile)
		fputs_unlocked(",\"tile\":true", f);
	if (group->grant == WIRE_GRANT_ASKED || group->grant == WIRE_GRANT_OFFERED)
		fprintf(f, ",\"grant\":\"%s\"",
			group->grant == WIRE_GRANT_OFFERED ? "offer" : "request");
	fputs_unlocked(",\"cmds\":{", f);
	for (int cls = 0; cls < PREDICT_CMD_CLASS_COUNT; cls++) {
		const char *name;

		if (!group->cmds[cls])
			continue;
		name = predict_cmd_class_name((enum predict_cmd_class)cls);
		if (!name)
			continue;
		if (!first)
			putc_unlocked(',', f);
		first = false;
		put_json_string(f, name, strlen(name));
		fprintf(f, ":%" PRIu32, group->cmds[cls]);
	}
	fputs_unlocked("}}\n", f);

	if (ferror(f)) {
		trace->error = errno ? -errno : -EIO;
		return trace->error;
	}
	return 0;
}

void trace_tick(struct trace *trace, uint64_t now_ns)
{
	if (!trace || now_ns < trace->last_flush_ns || now_ns - trace->last_flush_ns < NSEC_PER_SEC)
		return;
	trace->last_flush_ns = now_ns;
	if (fflush(trace->file) != 0 && !trace->error)
		trace->error = -errno;
}

const char *trace_path(const struct trace *trace)
{
	return trace->path;
}
