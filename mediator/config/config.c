// SPDX-License-Identifier: MIT
/*
 * Strict INI config parser on top of inih (see config.h for the format).
 *
 * Objects: a struct config_parser lives on the stack of one
 * config_parse_*() call and holds the config under construction, the line
 * number of every key seen (for duplicate and cross-key errors) and the
 * first error. Nothing is global, so parses may run in parallel.
 *
 * inih does the key = value splitting, trimming and inline-comment removal.
 * It is fed through our own reader, config_read_line(), which:
 *  - counts lines, because Debian's inih passes no line number to the
 *    handler (INI_HANDLER_LINENO=0);
 *  - rejects lines that do not fit inih's line buffer (inih would silently
 *    split them into several lines);
 *  - strips leading whitespace, so that an indented line is never taken as
 *    a continuation of the previous value (inih's multi-line values);
 *  - handles section headers itself: inih calls the handler only for keys,
 *    so an empty [domain NAME] would otherwise go unseen and a domain's
 *    line would be unknown.
 * Cross-key checks (budget vs period, sockets, domain count) run once the
 * whole file is read, in config_validate().
 *
 * On error the caller's config is left untouched, so a failed reload keeps
 * the previous config.
 */
#include <errno.h>
#include <grp.h>
#include <ini.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "predict.h"
#include "common/libvirt_name.h"
#include "common/util.h"

/*
 * Longest line accepted, without its line terminator: inih's line buffer is
 * INI_MAX_LINE bytes and must hold the line plus "\r\n" and a NUL.
 */
#define CONFIG_LINE_MAX (INI_MAX_LINE - 3)

static const char *const policy_names[] = {
    [MEDIATOR_POLICY_BUDGET] = "budget",
    [MEDIATOR_POLICY_FIFO] = "fifo",
};

static const char *const oversize_names[] = {
    [MEDIATOR_OVERSIZE_RUN] = "run",
    [MEDIATOR_OVERSIZE_UNSCHEDULABLE] = "unschedulable",
    [MEDIATOR_OVERSIZE_REFUSE_UNTILED] = "refuse-untiled",
};

static const char *const bool_names[] = {"false", "true"};

static const char *const class_names[] = {
    [DOMAIN_CLASS_NORMAL] = "normal",
    [DOMAIN_CLASS_SAFETY] = "safety",
};

const char *config_policy_name(enum mediator_policy policy)
{
	if ((size_t)policy >= ARRAY_SIZE(policy_names))
		return "unknown";
	return policy_names[policy];
}

const char *config_oversize_name(enum mediator_oversize oversize)
{
	if ((size_t)oversize >= ARRAY_SIZE(oversize_names))
		return "unknown";
	return oversize_names[oversize];
}

const char *config_class_name(enum domain_class class)
{
	if ((size_t) class >= ARRAY_SIZE(class_names))
		return "unknown";
	return class_names[class];
}

/* How the text of a value is checked and stored. */
enum value_kind {
	VALUE_PATH,	/* absolute path shorter than CONFIG_PATH_MAX, into char[CONFIG_PATH_MAX] */
	VALUE_U32,	/* plain decimal in [min, max], into uint32_t */
	VALUE_POLICY,	/* one of policy_names, into enum mediator_policy */
	VALUE_RENDERER, /* one of renderer_kind_name()'s, into enum mediator_renderer */
	VALUE_MODEL,	/* the name of a cost model of libpredict */
	VALUE_CLASS,	/* one of class_names, into enum domain_class */
	VALUE_OVERSIZE, /* one of oversize_names, into enum mediator_oversize */
	VALUE_BOOL,	/* true or false, into bool */
	VALUE_USER,	/* a user name or decimal uid that exists, into uid_t */
	VALUE_GROUP,	/* a group name or decimal gid that exists, into gid_t */
	VALUE_MODE,	/* octal file permission bits (at most 0777), into uint32_t */
	VALUE_NICE,	/* a nice value, decimal CONFIG_MIN_NICE..CONFIG_MAX_NICE, into int */
	VALUE_ENV_NAMES, /* environment variable names or PREFIX*, into char[CONFIG_PASS_ENV_MAX] */
	VALUE_VM_NAMES,	 /* libvirt VM names, space-separated, into char[CONFIG_VMS_MAX] */
};

struct key_desc {
	const char *name;
	enum value_kind kind;
	size_t offset; /* of the field in struct mediator_config or struct domain_config */
	uint32_t min, max;
};

enum mediator_key {
	MEDIATOR_KEY_CONTROL_SOCKET,
	MEDIATOR_KEY_STATE_DIR,
	MEDIATOR_KEY_CACHE_DIR,
	MEDIATOR_KEY_POLICY,
	MEDIATOR_KEY_MAX_INFLIGHT,
	MEDIATOR_KEY_RENDERER,
	MEDIATOR_KEY_RENDER_NODE,
	MEDIATOR_KEY_MODEL,
	MEDIATOR_KEY_MAX_DEFER_US,
	MEDIATOR_KEY_OVERSIZE,
	MEDIATOR_KEY_WATCHDOG_MULTIPLIER,
	MEDIATOR_KEY_WATCHDOG_SLACK_US,
	MEDIATOR_KEY_WATCHDOG_FLOOR_US,
	MEDIATOR_KEY_WATCHDOG_KILL_US,
	MEDIATOR_KEY_WATCHDOG_NORMAL_CAP_US,
	MEDIATOR_KEY_CONTROL_GROUP,
	MEDIATOR_KEY_ADMIN_GROUP,
	MEDIATOR_KEY_WORKER_USER,
	MEDIATOR_KEY_RESTART_WAIT_S,
	MEDIATOR_KEY_WORKER_PASS_ENVIRONMENT,
	MEDIATOR_KEY_VM_SOCKET,
	MEDIATOR_KEY_VM_SOCKET_OWNER,
	MEDIATOR_KEY_LIBVIRT_STATE_DIR,
	MEDIATOR_KEY_COUNT,
};

static const struct key_desc mediator_keys[MEDIATOR_KEY_COUNT] = {
    [MEDIATOR_KEY_CONTROL_SOCKET] = {.name = "control_socket",
				     .kind = VALUE_PATH,
				     .offset = offsetof(struct mediator_config, control_socket)},
    [MEDIATOR_KEY_STATE_DIR] = {.name = "state_dir",
				.kind = VALUE_PATH,
				.offset = offsetof(struct mediator_config, state_dir)},
    [MEDIATOR_KEY_CACHE_DIR] = {.name = "cache_dir",
				.kind = VALUE_PATH,
				.offset = offsetof(struct mediator_config, cache_dir)},
    [MEDIATOR_KEY_POLICY] = {.name = "policy",
			     .kind = VALUE_POLICY,
			     .offset = offsetof(struct mediator_config, policy)},
    [MEDIATOR_KEY_MAX_INFLIGHT] = {.name = "max_inflight",
				   .kind = VALUE_U32,
				   .offset = offsetof(struct mediator_config, max_inflight),
				   .min = 0,
				   .max = CONFIG_MAX_INFLIGHT_LIMIT},
    [MEDIATOR_KEY_RENDERER] = {.name = "renderer",
			       .kind = VALUE_RENDERER,
			       .offset = offsetof(struct mediator_config, renderer)},
    [MEDIATOR_KEY_RENDER_NODE] = {.name = "render_node",
				  .kind = VALUE_PATH,
				  .offset = offsetof(struct mediator_config, render_node)},
    [MEDIATOR_KEY_MODEL] = {.name = "model",
			    .kind = VALUE_MODEL,
			    .offset = offsetof(struct mediator_config, model)},
    [MEDIATOR_KEY_MAX_DEFER_US] = {.name = "max_defer_us",
				   .kind = VALUE_U32,
				   .offset = offsetof(struct mediator_config, max_defer_us),
				   .min = CONFIG_MIN_MAX_DEFER_US,
				   .max = CONFIG_MAX_MAX_DEFER_US},
    [MEDIATOR_KEY_OVERSIZE] = {.name = "oversize",
			       .kind = VALUE_OVERSIZE,
			       .offset = offsetof(struct mediator_config, oversize)},
    [MEDIATOR_KEY_WATCHDOG_MULTIPLIER] = {.name = "watchdog_multiplier",
					  .kind = VALUE_U32,
					  .offset =
					      offsetof(struct mediator_config, watchdog_multiplier),
					  .min = 0,
					  .max = CONFIG_MAX_WATCHDOG_MULTIPLIER},
    [MEDIATOR_KEY_WATCHDOG_SLACK_US] = {.name = "watchdog_slack_us",
					.kind = VALUE_U32,
					.offset =
					    offsetof(struct mediator_config, watchdog_slack_us),
					.min = 0,
					.max = CONFIG_MAX_WATCHDOG_US},
    [MEDIATOR_KEY_WATCHDOG_FLOOR_US] = {.name = "watchdog_floor_us",
					.kind = VALUE_U32,
					.offset =
					    offsetof(struct mediator_config, watchdog_floor_us),
					.min = CONFIG_MIN_WATCHDOG_FLOOR_US,
					.max = CONFIG_MAX_WATCHDOG_US},
    [MEDIATOR_KEY_WATCHDOG_KILL_US] = {.name = "watchdog_kill_us",
				       .kind = VALUE_U32,
				       .offset = offsetof(struct mediator_config, watchdog_kill_us),
				       .min = 0,
				       .max = CONFIG_MAX_WATCHDOG_US},
    [MEDIATOR_KEY_WATCHDOG_NORMAL_CAP_US] = {.name = "watchdog_normal_cap_us",
					     .kind = VALUE_U32,
					     .offset = offsetof(struct mediator_config,
								watchdog_normal_cap_us),
					     .min = 0,
					     .max = CONFIG_MAX_WATCHDOG_US},
    [MEDIATOR_KEY_CONTROL_GROUP] = {.name = "control_group",
				    .kind = VALUE_GROUP,
				    .offset = offsetof(struct mediator_config, control_gid)},
    [MEDIATOR_KEY_ADMIN_GROUP] = {.name = "admin_group",
				  .kind = VALUE_GROUP,
				  .offset = offsetof(struct mediator_config, admin_gid)},
    [MEDIATOR_KEY_WORKER_USER] = {.name = "worker_user",
				  .kind = VALUE_USER,
				  .offset = offsetof(struct mediator_config, worker_uid)},
    [MEDIATOR_KEY_RESTART_WAIT_S] = {.name = "restart_wait_s",
				     .kind = VALUE_U32,
				     .offset = offsetof(struct mediator_config, restart_wait_s),
				     .min = 0,
				     .max = CONFIG_MAX_RESTART_WAIT_S},
    [MEDIATOR_KEY_WORKER_PASS_ENVIRONMENT] = {.name = "worker_pass_environment",
					      .kind = VALUE_ENV_NAMES,
					      .offset = offsetof(struct mediator_config,
								 worker_pass_environment)},
    [MEDIATOR_KEY_VM_SOCKET] = {.name = "vm_socket",
				.kind = VALUE_PATH,
				.offset = offsetof(struct mediator_config, vm_socket)},
    [MEDIATOR_KEY_VM_SOCKET_OWNER] = {.name = "vm_socket_owner",
				      .kind = VALUE_USER,
				      .offset = offsetof(struct mediator_config, vm_socket_uid)},
    [MEDIATOR_KEY_LIBVIRT_STATE_DIR] = {.name = "libvirt_state_dir",
					.kind = VALUE_PATH,
					.offset =
					    offsetof(struct mediator_config, libvirt_state_dir)},
};

enum domain_key {
	DOMAIN_KEY_CLASS,
	DOMAIN_KEY_PERIOD_US,
	DOMAIN_KEY_BUDGET_US,
	DOMAIN_KEY_DEADLINE_US,
	DOMAIN_KEY_VTEST_SOCKET,
	DOMAIN_KEY_VHOST_USER_SOCKET,
	DOMAIN_KEY_STRICT,
	DOMAIN_KEY_GUARD_US,
	DOMAIN_KEY_SOCKET_OWNER,
	DOMAIN_KEY_SOCKET_GROUP,
	DOMAIN_KEY_SOCKET_MODE,
	DOMAIN_KEY_WORKER_NICE,
	DOMAIN_KEY_PIECE_US,
	DOMAIN_KEY_WORKER_MEMORY_MB,
	DOMAIN_KEY_RESOURCE_MEMORY_MB,
	DOMAIN_KEY_WORKER_USER,
	DOMAIN_KEY_MAX_CLIENTS,
	DOMAIN_KEY_DOMAIN_MEMORY_MB,
	DOMAIN_KEY_MAX_CONTEXTS_PER_CLIENT,
	DOMAIN_KEY_VMS,
	DOMAIN_KEY_MIN_PERIOD_US,
	DOMAIN_KEY_MAX_PERIOD_US,
	DOMAIN_KEY_WEIGHT,
	DOMAIN_KEY_COUNT,
};

/* budget_us and deadline_us are checked against period_us in config_validate(). */
static const struct key_desc domain_keys[DOMAIN_KEY_COUNT] = {
    [DOMAIN_KEY_CLASS] = {.name = "class",
			  .kind = VALUE_CLASS,
			  .offset = offsetof(struct domain_config, class)},
    [DOMAIN_KEY_PERIOD_US] = {.name = "period_us",
			      .kind = VALUE_U32,
			      .offset = offsetof(struct domain_config, period_us),
			      .min = CONFIG_MIN_PERIOD_US,
			      .max = CONFIG_MAX_PERIOD_US},
    [DOMAIN_KEY_BUDGET_US] = {.name = "budget_us",
			      .kind = VALUE_U32,
			      .offset = offsetof(struct domain_config, budget_us),
			      .min = 1,
			      .max = CONFIG_MAX_PERIOD_US},
    [DOMAIN_KEY_DEADLINE_US] = {.name = "deadline_us",
				.kind = VALUE_U32,
				.offset = offsetof(struct domain_config, deadline_us),
				.min = 1,
				.max = CONFIG_MAX_PERIOD_US},
    [DOMAIN_KEY_VTEST_SOCKET] = {.name = "vtest_socket",
				 .kind = VALUE_PATH,
				 .offset = offsetof(struct domain_config, vtest_socket)},
    [DOMAIN_KEY_VHOST_USER_SOCKET] = {.name = "vhost_user_socket",
				      .kind = VALUE_PATH,
				      .offset = offsetof(struct domain_config, vhost_user_socket)},
    [DOMAIN_KEY_STRICT] = {.name = "strict",
			   .kind = VALUE_BOOL,
			   .offset = offsetof(struct domain_config, strict)},
    [DOMAIN_KEY_GUARD_US] = {.name = "guard_us",
			     .kind = VALUE_U32,
			     .offset = offsetof(struct domain_config, guard_us),
			     .min = 0,
			     .max = CONFIG_MAX_PERIOD_US},
    [DOMAIN_KEY_SOCKET_OWNER] = {.name = "socket_owner",
				 .kind = VALUE_USER,
				 .offset = offsetof(struct domain_config, socket_uid)},
    [DOMAIN_KEY_SOCKET_GROUP] = {.name = "socket_group",
				 .kind = VALUE_GROUP,
				 .offset = offsetof(struct domain_config, socket_gid)},
    [DOMAIN_KEY_SOCKET_MODE] = {.name = "socket_mode",
				.kind = VALUE_MODE,
				.offset = offsetof(struct domain_config, socket_mode)},
    [DOMAIN_KEY_WORKER_NICE] = {.name = "worker_nice",
				.kind = VALUE_NICE,
				.offset = offsetof(struct domain_config, worker_nice)},
    [DOMAIN_KEY_PIECE_US] = {.name = "piece_us",
			     .kind = VALUE_U32,
			     .offset = offsetof(struct domain_config, piece_us),
			     .min = 0,
			     .max = CONFIG_MAX_PERIOD_US},
    [DOMAIN_KEY_WORKER_MEMORY_MB] = {.name = "worker_memory_mb",
				     .kind = VALUE_U32,
				     .offset = offsetof(struct domain_config, worker_memory_mb),
				     .min = 0,
				     .max = CONFIG_MAX_WORKER_MEMORY_MB},
    [DOMAIN_KEY_RESOURCE_MEMORY_MB] = {.name = "resource_memory_mb",
				       .kind = VALUE_U32,
				       .offset = offsetof(struct domain_config, resource_memory_mb),
				       .min = 0,
				       .max = CONFIG_MAX_WORKER_MEMORY_MB},
    [DOMAIN_KEY_WORKER_USER] = {.name = "worker_user",
				.kind = VALUE_USER,
				.offset = offsetof(struct domain_config, worker_uid)},
    [DOMAIN_KEY_MAX_CLIENTS] = {.name = "max_clients",
				.kind = VALUE_U32,
				.offset = offsetof(struct domain_config, max_clients),
				.min = 1,
				.max = CONFIG_MAX_CLIENTS_TOTAL},
    [DOMAIN_KEY_DOMAIN_MEMORY_MB] = {.name = "domain_memory_mb",
				     .kind = VALUE_U32,
				     .offset = offsetof(struct domain_config, domain_memory_mb),
				     .min = 0,
				     .max = CONFIG_MAX_WORKER_MEMORY_MB},
    [DOMAIN_KEY_MAX_CONTEXTS_PER_CLIENT] = {.name = "max_contexts_per_client",
					    .kind = VALUE_U32,
					    .offset = offsetof(struct domain_config,
							       max_contexts_per_client),
					    .min = 1,
					    .max = CONFIG_MAX_CONTEXTS_PER_CLIENT},
    [DOMAIN_KEY_VMS] = {.name = "vms",
			.kind = VALUE_VM_NAMES,
			.offset = offsetof(struct domain_config, vms)},
    /* Into period_us: a learned period's shortest is what the checks take as its period. */
    [DOMAIN_KEY_MIN_PERIOD_US] = {.name = "min_period_us",
				  .kind = VALUE_U32,
				  .offset = offsetof(struct domain_config, period_us),
				  .min = CONFIG_MIN_PERIOD_US,
				  .max = CONFIG_MAX_PERIOD_US},
    [DOMAIN_KEY_MAX_PERIOD_US] = {.name = "max_period_us",
				  .kind = VALUE_U32,
				  .offset = offsetof(struct domain_config, max_period_us),
				  .min = CONFIG_MIN_PERIOD_US,
				  .max = CONFIG_MAX_PERIOD_US},
    [DOMAIN_KEY_WEIGHT] = {.name = "weight",
			   .kind = VALUE_U32,
			   .offset = offsetof(struct domain_config, weight),
			   .min = 1,
			   .max = CONFIG_MAX_WEIGHT},
};

enum config_section {
	SECTION_NONE,	  /* before the first section header */
	SECTION_MEDIATOR, /* [mediator] */
	SECTION_DOMAIN,	  /* [domain NAME], the last one in cfg.domains */
};

struct config_parser {
	struct mediator_config cfg; /* under construction */
	const char *name;	    /* file name for messages */

	/* Input: either a NUL-terminated string or a FILE. */
	const char *text;
	size_t text_pos;
	FILE *file;

	int line; /* number of the line last handed to inih */
	enum config_section section;
	int mediator_line;			   /* of the [mediator] header, 0 if none */
	int mediator_key_line[MEDIATOR_KEY_COUNT]; /* 0 while not set */
	int domain_key_line[CONFIG_MAX_DOMAINS][DOMAIN_KEY_COUNT];

	int error;	/* negative errno of the first error, 0 while none */
	int error_line; /* its line, to keep the earliest one */
	char *err;
	size_t err_size;
};

/*
 * Records an error at @line unless one at an earlier (or the same) line is
 * already recorded. A @line of -1 means "no line": the message is
 * "FILE: ...".
 */
__attribute__((format(printf, 4, 5))) static void config_fail(struct config_parser *p, int error,
							      int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->error && p->error_line <= line)
		return;
	p->error = error;
	p->error_line = line;
	if (!p->err || !p->err_size)
		return;
	if (line >= 0)
		n = snprintf(p->err, p->err_size, "%s:%d: ", p->name, line);
	else
		n = snprintf(p->err, p->err_size, "%s: ", p->name);
	if (n < 0 || (size_t)n >= p->err_size)
		return;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->err_size - (size_t)n, fmt, ap);
	va_end(ap);
}

static int config_getc(struct config_parser *p)
{
	if (p->file)
		return getc(p->file);
	if (!p->text[p->text_pos])
		return EOF;
	return (unsigned char)p->text[p->text_pos++];
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static char *skip_space(char *s)
{
	while (is_space(*s))
		s++;
	return s;
}

static void strip_trailing_space(char *s)
{
	size_t len = strlen(s);

	while (len && is_space(s[len - 1]))
		s[--len] = '\0';
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

/* Checks a domain name; returns false after recording the error. */
static bool config_check_domain_name(struct config_parser *p, const char *name)
{
	size_t len = strlen(name);

	if (!len) {
		config_fail(p, -EINVAL, p->line, "domain name is empty; write [domain NAME]");
		return false;
	}
	if (len >= CONFIG_NAME_MAX) {
		config_fail(p, -EINVAL, p->line, "domain name '%s' is longer than %d characters",
			    name, CONFIG_NAME_MAX - 1);
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		if (!is_name_char(name[i])) {
			config_fail(p, -EINVAL, p->line,
				    "domain name '%s' has a character other than A-Z a-z 0-9 _ . -",
				    name);
			return false;
		}
	}
	/* Names end up in file names under state_dir. */
	if (!strcmp(name, ".") || !strcmp(name, "..")) {
		config_fail(p, -EINVAL, p->line, "domain name '%s' is not allowed", name);
		return false;
	}
	return true;
}

static void config_open_domain(struct config_parser *p, const char *name)
{
	struct domain_config *d;

	if (!config_check_domain_name(p, name))
		return;
	for (size_t i = 0; i < p->cfg.n_domains; i++) {
		if (!strcmp(p->cfg.domains[i].name, name)) {
			config_fail(p, -EINVAL, p->line,
				    "domain '%s' is defined twice (first on line %d)", name,
				    p->cfg.domains[i].line);
			return;
		}
	}
	if (p->cfg.n_domains == CONFIG_MAX_DOMAINS) {
		config_fail(p, -EINVAL, p->line, "domain '%s': more than %d domains", name,
			    CONFIG_MAX_DOMAINS);
		return;
	}
	d = &p->cfg.domains[p->cfg.n_domains++];
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->class = CONFIG_DEFAULT_CLASS;
	d->period_us = CONFIG_DEFAULT_PERIOD_US;
	d->socket_uid = (uid_t)CONFIG_SOCKET_ID_UNSET;
	d->socket_gid = (gid_t)CONFIG_SOCKET_ID_UNSET;
	d->socket_mode = CONFIG_DEFAULT_SOCKET_MODE;
	d->line = p->line;
	p->section = SECTION_DOMAIN;
}

/* @s is a whole line without leading space, starting with '['. */
static void config_open_section(struct config_parser *p, char *s)
{
	char *close = strchr(s, ']');
	char *rest, *header;

	if (!close) {
		config_fail(p, -EINVAL, p->line, "section header without ']'");
		return;
	}
	rest = skip_space(close + 1);
	if (*rest && *rest != ';' && *rest != '#') {
		config_fail(p, -EINVAL, p->line, "text after ']' of a section header");
		return;
	}
	*close = '\0';
	header = skip_space(s + 1);
	strip_trailing_space(header);

	if (!strcmp(header, "mediator")) {
		if (p->mediator_line) {
			config_fail(p, -EINVAL, p->line,
				    "second [mediator] section (first on line %d)",
				    p->mediator_line);
			return;
		}
		p->mediator_line = p->line;
		p->section = SECTION_MEDIATOR;
	} else if (!strncmp(header, "domain", 6) && (!header[6] || is_space(header[6]))) {
		config_open_domain(p, skip_space(header + 6));
	} else {
		config_fail(p, -EINVAL, p->line,
			    "unknown section [%s]; expected [mediator] or [domain NAME]", header);
	}
}

/* Records a read error of the file, if there was one; returns true if so. */
static bool config_check_read_error(struct config_parser *p)
{
	char buf[128];
	int e = errno ? errno : EIO;

	if (!p->file || !ferror(p->file))
		return false;
	config_fail(p, -e, -1, "cannot read: %s", strerror_r(e, buf, sizeof(buf)));
	return true;
}

/*
 * inih's fgets-like reader: hands inih one line per call, counting lines,
 * and opens sections itself (see the top of this file). Returns NULL at the
 * end of the input or once an error is recorded, which ends the parse.
 */
static char *config_read_line(char *str, int num, void *stream)
{
	struct config_parser *p = stream;
	char buf[CONFIG_LINE_MAX + 2]; /* the line, a '\r' and a NUL */
	size_t len = 0, total = 0;
	bool nul = false;
	char *s;
	int c;

	if (p->error)
		return NULL;
	c = config_getc(p);
	if (c == EOF) {
		config_check_read_error(p);
		return NULL;
	}
	p->line++;
	for (; c != EOF && c != '\n'; c = config_getc(p)) {
		if (c == '\0')
			nul = true;
		if (len < sizeof(buf) - 1)
			buf[len++] = (char)c;
		total++;
	}
	if (c == EOF && config_check_read_error(p))
		return NULL;
	if (total && len == total && buf[len - 1] == '\r') {
		len--;
		total--;
	}
	buf[len] = '\0';
	if (total > CONFIG_LINE_MAX || total + 3 > (size_t)num) {
		config_fail(p, -EINVAL, p->line, "line longer than %d characters", CONFIG_LINE_MAX);
		return NULL;
	}
	if (nul) {
		config_fail(p, -EINVAL, p->line, "NUL byte in line");
		return NULL;
	}

	s = buf;
	if (p->line == 1 && !strncmp(s, "\xef\xbb\xbf", 3))
		s += 3; /* UTF-8 byte order mark */
	s = skip_space(s);
	snprintf(str, (size_t)num, "%s\n", s);
	if (*s == '[') {
		config_open_section(p, s); /* modifies s, not str */
		if (p->error)
			return NULL;
	}
	return str;
}

/*
 * Parses a plain decimal number: digits only, no sign, no space, no prefix.
 * Values above UINT32_MAX come out as UINT32_MAX + 1, so that they fail
 * every range check without overflowing.
 */
static bool parse_decimal(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > UINT32_MAX)
			v = (uint64_t)UINT32_MAX + 1;
	}
	*out = v;
	return true;
}

/* Returns the index of @value in @names, or -1 after recording the error. */
static int config_choice(struct config_parser *p, const struct key_desc *key, const char *value,
			 const char *const *names, size_t n_names)
{
	char list[128] = "";
	size_t used = 0;

	for (size_t i = 0; i < n_names; i++) {
		if (!strcmp(value, names[i]))
			return (int)i;
	}
	for (size_t i = 0; i < n_names && used < sizeof(list); i++) {
		int n = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", names[i]);

		if (n < 0)
			break;
		used += (size_t)n;
	}
	config_fail(p, -EINVAL, p->line, "key '%s': '%s' is not one of %s", key->name, value, list);
	return -1;
}

/*
 * Looks up a user (@group false) or group by name, or takes a decimal id as
 * it is once it names an existing entry. Returns false after recording the
 * error.
 */
static bool config_lookup_id(struct config_parser *p, const struct key_desc *key, const char *value,
			     bool group, uint32_t *id)
{
	uint64_t number;
	bool numeric = parse_decimal(value, &number) && number < UINT32_MAX;

	errno = 0;
	if (group) {
		const struct group *g = numeric ? getgrgid((gid_t)number) : getgrnam(value);

		if (g) {
			*id = (uint32_t)g->gr_gid;
			return true;
		}
	} else {
		const struct passwd *u = numeric ? getpwuid((uid_t)number) : getpwnam(value);

		if (u) {
			*id = (uint32_t)u->pw_uid;
			return true;
		}
	}
	config_fail(p, -EINVAL, p->line, "key '%s': no %s '%s' on this system%s%s", key->name,
		    group ? "group" : "user", value, errno ? ": " : "",
		    errno ? strerror(errno) : "");
	return false;
}

/* Parses octal permission bits such as 0660 or 660; false when not that. */
static bool parse_mode(const char *value, uint32_t *mode)
{
	uint32_t m = 0;

	if (!value[0] || strlen(value) > 4)
		return false;
	for (const char *c = value; *c; c++) {
		if (*c < '0' || *c > '7')
			return false;
		m = m * 8 + (uint32_t)(*c - '0');
	}
	if (m > 0777)
		return false;
	*mode = m;
	return true;
}

/*
 * Checks @value, space-separated words each a variable name
 * ([A-Za-z_][A-Za-z0-9_]*) or such a name's start followed by '*'; returns
 * false after recording the error.
 */
static bool config_check_env_names(struct config_parser *p, const struct key_desc *key,
				   const char *value)
{
	const char *w = value;

	if (strlen(value) >= CONFIG_PASS_ENV_MAX) {
		config_fail(p, -EINVAL, p->line, "key '%s': %zu characters long, at most %d fit",
			    key->name, strlen(value), CONFIG_PASS_ENV_MAX - 1);
		return false;
	}
	while (*w) {
		size_t len, i;

		while (is_space(*w))
			w++;
		for (len = 0; w[len] && !is_space(w[len]); len++)
			;
		for (i = 0; i < len; i++) {
			char c = w[i];
			bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';

			if (letter || (i > 0 && c >= '0' && c <= '9'))
				continue;
			if (c == '*' && i > 0 && i == len - 1)
				continue;
			config_fail(
			    p, -EINVAL, p->line,
			    "key '%s': '%.*s' is neither a variable name nor a name's start "
			    "and '*' (such as LP_NUM_THREADS or MESA_*)",
			    key->name, (int)len, w);
			return false;
		}
		w += len;
	}
	return true;
}

/*
 * Takes the next space-separated word of *@cursor into @out (at most
 * @size - 1 bytes: longer words are cut); false at the end.
 */
static bool next_word(const char **cursor, char *out, size_t size)
{
	const char *w = *cursor;
	size_t len;

	while (is_space(*w))
		w++;
	for (len = 0; w[len] && !is_space(w[len]); len++)
		;
	*cursor = w + len;
	if (!len)
		return false;
	snprintf(out, size, "%.*s", (int)len, w);
	return true;
}

/*
 * Checks @value, space-separated libvirt VM names (printable, no '/':
 * libvirt's own rule is only the '/'); returns false after recording the
 * error.
 */
static bool config_check_vm_names(struct config_parser *p, const struct key_desc *key,
				  const char *value)
{
	const char *cursor = value;
	char name[CONFIG_VMS_MAX];

	if (strlen(value) >= CONFIG_VMS_MAX) {
		config_fail(p, -EINVAL, p->line, "key '%s': %zu characters long, at most %d fit",
			    key->name, strlen(value), CONFIG_VMS_MAX - 1);
		return false;
	}
	if (!next_word(&cursor, name, sizeof(name))) {
		config_fail(p, -EINVAL, p->line, "key '%s': no VM name", key->name);
		return false;
	}
	cursor = value;
	while (next_word(&cursor, name, sizeof(name))) {
		for (const char *c = name; *c; c++) {
			if (*c == '/' || (unsigned char)*c < 0x20 || *c == 0x7f) {
				config_fail(p, -EINVAL, p->line,
					    "key '%s': '%s' is no libvirt VM name (no '/' or "
					    "control characters)",
					    key->name, name);
				return false;
			}
		}
	}
	return true;
}

/* Checks @value and stores it into the field of @key in @base. */
static void config_set(struct config_parser *p, const struct key_desc *key, void *base,
		       const char *value)
{
	char *field = (char *)base + key->offset;
	uint64_t number;
	int i;

	switch (key->kind) {
	case VALUE_PATH:
		if (value[0] != '/') {
			config_fail(p, -EINVAL, p->line, "key '%s': '%s' is not an absolute path",
				    key->name, value);
			return;
		}
		if (strlen(value) >= CONFIG_PATH_MAX) {
			config_fail(p, -EINVAL, p->line,
				    "key '%s': path is %zu characters long, at most %d fit",
				    key->name, strlen(value), CONFIG_PATH_MAX - 1);
			return;
		}
		snprintf(field, CONFIG_PATH_MAX, "%s", value);
		return;
	case VALUE_U32:
		if (!parse_decimal(value, &number)) {
			config_fail(p, -EINVAL, p->line,
				    "key '%s': '%s' is not a non-negative decimal integer",
				    key->name, value);
			return;
		}
		if (number < key->min || number > key->max) {
			config_fail(p, -EINVAL, p->line, "key '%s': %s is out of range (%u..%u)",
				    key->name, value, key->min, key->max);
			return;
		}
		*(uint32_t *)(void *)field = (uint32_t)number;
		return;
	case VALUE_POLICY:
		i = config_choice(p, key, value, policy_names, ARRAY_SIZE(policy_names));
		if (i >= 0)
			*(enum mediator_policy *)(void *)field = (enum mediator_policy)i;
		return;
	case VALUE_RENDERER: {
		const char *names[MEDIATOR_RENDERER_COUNT];

		for (unsigned k = 0; k < MEDIATOR_RENDERER_COUNT; k++)
			names[k] = renderer_kind_name((enum mediator_renderer)k);
		i = config_choice(p, key, value, names, MEDIATOR_RENDERER_COUNT);
		if (i >= 0)
			*(enum mediator_renderer *)(void *)field = (enum mediator_renderer)i;
		return;
	}
	case VALUE_MODEL:
		if (!predict_model_find(value)) {
			config_fail(p, -EINVAL, p->line,
				    "key '%s': unknown model '%s' (history, linear, sgd, rls)",
				    key->name, value);
			return;
		}
		snprintf(field, CONFIG_MODEL_MAX, "%s", value);
		return;
	case VALUE_CLASS:
		i = config_choice(p, key, value, class_names, ARRAY_SIZE(class_names));
		if (i >= 0)
			*(enum domain_class *)(void *)field = (enum domain_class)i;
		return;
	case VALUE_OVERSIZE:
		i = config_choice(p, key, value, oversize_names, ARRAY_SIZE(oversize_names));
		if (i >= 0)
			*(enum mediator_oversize *)(void *)field = (enum mediator_oversize)i;
		return;
	case VALUE_BOOL:
		i = config_choice(p, key, value, bool_names, ARRAY_SIZE(bool_names));
		if (i >= 0)
			*(bool *)(void *)field = i == 1;
		return;
	case VALUE_USER:
	case VALUE_GROUP: {
		uint32_t id;

		if (!config_lookup_id(p, key, value, key->kind == VALUE_GROUP, &id))
			return;
		if (key->kind == VALUE_GROUP)
			*(gid_t *)(void *)field = (gid_t)id;
		else
			*(uid_t *)(void *)field = (uid_t)id;
		return;
	}
	case VALUE_MODE:
		if (!parse_mode(value, (uint32_t *)(void *)field))
			config_fail(p, -EINVAL, p->line,
				    "key '%s': '%s' is not octal permission bits such as 0660",
				    key->name, value);
		return;
	case VALUE_NICE: {
		bool negative = value[0] == '-';

		if (!parse_decimal(value + negative, &number) ||
		    number > (uint64_t)(negative ? -CONFIG_MIN_NICE : CONFIG_MAX_NICE)) {
			config_fail(p, -EINVAL, p->line,
				    "key '%s': '%s' is not a nice value (%d..%d)", key->name, value,
				    CONFIG_MIN_NICE, CONFIG_MAX_NICE);
			return;
		}
		*(int *)(void *)field = negative ? -(int)number : (int)number;
		return;
	}
	case VALUE_ENV_NAMES:
		if (config_check_env_names(p, key, value))
			snprintf(field, CONFIG_PASS_ENV_MAX, "%s", value);
		return;
	case VALUE_VM_NAMES:
		if (config_check_vm_names(p, key, value))
			snprintf(field, CONFIG_VMS_MAX, "%s", value);
		return;
	}
}

/* inih's handler: one call per key = value line, right after config_read_line() returned it. */
static int config_handle_key(void *user, const char *section, const char *name, const char *value)
{
	struct config_parser *p = user;
	const struct key_desc *keys;
	size_t n_keys;
	int *key_lines;
	void *base;
	char where[CONFIG_NAME_MAX + 16];

	if (p->error)
		return 0;
	switch (p->section) {
	case SECTION_NONE:
	default:
		config_fail(p, -EINVAL, p->line, "key '%s': outside of any section", name);
		return 0;
	case SECTION_MEDIATOR:
		keys = mediator_keys;
		n_keys = MEDIATOR_KEY_COUNT;
		key_lines = p->mediator_key_line;
		base = &p->cfg;
		snprintf(where, sizeof(where), "[mediator]");
		break;
	case SECTION_DOMAIN:
		keys = domain_keys;
		n_keys = DOMAIN_KEY_COUNT;
		key_lines = p->domain_key_line[p->cfg.n_domains - 1];
		base = &p->cfg.domains[p->cfg.n_domains - 1];
		snprintf(where, sizeof(where), "[domain %s]",
			 p->cfg.domains[p->cfg.n_domains - 1].name);
		break;
	}

	for (size_t i = 0; i < n_keys; i++) {
		if (strcmp(name, keys[i].name))
			continue;
		if (key_lines[i]) {
			config_fail(p, -EINVAL, p->line,
				    "key '%s': set twice in %s (first on line %d)", name, where,
				    key_lines[i]);
			return 0;
		}
		key_lines[i] = p->line;
		config_set(p, &keys[i], base, value);
		return p->error ? 0 : 1;
	}
	config_fail(p, -EINVAL, p->line, "key '%s': unknown key in %s", name, where);
	return 0;
}

/* A socket path in use, for the check that no two sockets share a path. */
struct config_socket {
	const char *path;
	const char *key;
	const char *domain; /* NULL for control_socket */
	int line;	    /* 0 for the default control_socket */
};

static void config_check_sockets(struct config_parser *p)
{
	struct config_socket s[2 + 2 * CONFIG_MAX_DOMAINS];
	size_t n = 0;

	s[n++] = (struct config_socket){p->cfg.control_socket, "control_socket", NULL,
					p->mediator_key_line[MEDIATOR_KEY_CONTROL_SOCKET]};
	if (config_has_vms(&p->cfg))
		s[n++] = (struct config_socket){p->cfg.vm_socket, "vm_socket", NULL,
						p->mediator_key_line[MEDIATOR_KEY_VM_SOCKET]};
	for (size_t i = 0; i < p->cfg.n_domains; i++) {
		const struct domain_config *d = &p->cfg.domains[i];
		const int *lines = p->domain_key_line[i];

		if (d->vtest_socket[0])
			s[n++] = (struct config_socket){d->vtest_socket, "vtest_socket", d->name,
							lines[DOMAIN_KEY_VTEST_SOCKET]};
		if (d->vhost_user_socket[0])
			s[n++] =
			    (struct config_socket){d->vhost_user_socket, "vhost_user_socket",
						   d->name, lines[DOMAIN_KEY_VHOST_USER_SOCKET]};
	}

	for (size_t i = 0; i < n; i++) {
		for (size_t j = i + 1; j < n; j++) {
			const struct config_socket *first = &s[i], *second = &s[j];
			char owner[CONFIG_NAME_MAX + 32], at[32];

			if (strcmp(first->path, second->path))
				continue;
			if (second->line < first->line) {
				first = &s[j];
				second = &s[i];
			}
			if (first->domain)
				snprintf(owner, sizeof(owner), "%s of domain '%s'", first->key,
					 first->domain);
			else
				snprintf(owner, sizeof(owner), "%s", first->key);
			if (first->line)
				snprintf(at, sizeof(at), "line %d", first->line);
			else
				snprintf(at, sizeof(at), "its default");
			config_fail(p, -EINVAL, second->line,
				    "key '%s': '%s' is already used by %s (%s)", second->key,
				    second->path, owner, at);
		}
	}
}

/*
 * Checks that libvirt's file names tell every listed VM apart (no VM twice,
 * no two sharing their short name: common/libvirt_name.h) and resolves
 * vm_socket_owner's default when some domain lists VMs.
 */
static void config_check_vms(struct config_parser *p)
{
	const struct passwd *owner;

	for (size_t i = 0; i < p->cfg.n_domains; i++) {
		const char *ci = p->cfg.domains[i].vms;
		char a[CONFIG_VMS_MAX];

		while (next_word(&ci, a, sizeof(a))) {
			for (size_t j = i; j < p->cfg.n_domains; j++) {
				/* In its own domain, only the names after it. */
				const char *cj = j == i ? ci : p->cfg.domains[j].vms;
				char b[CONFIG_VMS_MAX];
				size_t la = libvirt_short_name_len(a);

				while (next_word(&cj, b, sizeof(b))) {
					if (la != libvirt_short_name_len(b) || strncmp(a, b, la))
						continue;
					config_fail(
					    p, -EINVAL, p->domain_key_line[j][DOMAIN_KEY_VMS],
					    "key 'vms': VM '%s' (domain '%s') and VM '%s' (domain "
					    "'%s') begin with the same %d characters, which are "
					    "all of a name libvirt's files keep",
					    b, p->cfg.domains[j].name, a, p->cfg.domains[i].name,
					    LIBVIRT_SHORT_NAME_CHARS);
					return;
				}
			}
		}
	}
	if (!config_has_vms(&p->cfg) || p->mediator_key_line[MEDIATOR_KEY_VM_SOCKET_OWNER])
		return;
	errno = 0;
	owner = getpwnam(CONFIG_DEFAULT_VM_SOCKET_OWNER);
	if (owner) {
		p->cfg.vm_socket_uid = owner->pw_uid;
		return;
	}
	for (size_t i = 0; i < p->cfg.n_domains; i++) {
		if (p->cfg.domains[i].vms[0]) {
			config_fail(p, -EINVAL, p->domain_key_line[i][DOMAIN_KEY_VMS],
				    "key 'vms': vm_socket's owner is not set and there is no user "
				    "'%s' (libvirt's QEMU user) on this system: set "
				    "vm_socket_owner in [mediator]",
				    CONFIG_DEFAULT_VM_SOCKET_OWNER);
			return;
		}
	}
}

bool config_has_vms(const struct mediator_config *cfg)
{
	for (size_t i = 0; i < cfg->n_domains; i++)
		if (cfg->domains[i].vms[0])
			return true;
	return false;
}

int config_domain_of_vm_stem(const struct mediator_config *cfg, const char *stem, char *vm,
			     size_t vm_size)
{
	int found = -ENOENT;

	for (size_t i = 0; i < cfg->n_domains; i++) {
		const char *cursor = cfg->domains[i].vms;
		char name[CONFIG_VMS_MAX];

		while (next_word(&cursor, name, sizeof(name))) {
			if (!libvirt_stem_is_vm(stem, name))
				continue;
			if (found >= 0)
				return -EEXIST;
			found = (int)i;
			snprintf(vm, vm_size, "%s", name);
		}
	}
	return found;
}

/*
 * A safety domain without period_us learns its period: period_us is then
 * its shortest, min_period_us; only such a domain has min_period_us and
 * max_period_us.
 */
static void config_learned_period(struct config_parser *p, struct domain_config *d,
				  const int *lines)
{
	const enum domain_key bounds[] = {DOMAIN_KEY_MIN_PERIOD_US, DOMAIN_KEY_MAX_PERIOD_US};

	d->period_learned = d->class == DOMAIN_CLASS_SAFETY && !lines[DOMAIN_KEY_PERIOD_US];
	for (size_t k = 0; k < sizeof(bounds) / sizeof(bounds[0]); k++) {
		if (!lines[bounds[k]] || d->period_learned)
			continue;
		config_fail(p, -EINVAL, lines[bounds[k]],
			    "key '%s': only a class = safety domain without period_us learns its "
			    "period, within min_period_us and max_period_us",
			    domain_keys[bounds[k]].name);
		return;
	}
	if (!d->period_learned)
		return;
	if (!lines[DOMAIN_KEY_MIN_PERIOD_US])
		d->period_us = CONFIG_DEFAULT_MIN_PERIOD_US;
	if (!lines[DOMAIN_KEY_MAX_PERIOD_US])
		d->max_period_us = CONFIG_DEFAULT_MAX_PERIOD_US;
	d->deadline_follows = !lines[DOMAIN_KEY_DEADLINE_US];
	if (d->max_period_us < d->period_us)
		config_fail(p, -EINVAL,
			    lines[DOMAIN_KEY_MAX_PERIOD_US] ? lines[DOMAIN_KEY_MAX_PERIOD_US]
							    : lines[DOMAIN_KEY_MIN_PERIOD_US],
			    "key 'max_period_us': %u is shorter than min_period_us (%u)",
			    d->max_period_us, d->period_us);
}

/* Checks what needs the whole file and fills the defaults that depend on other keys. */
static void config_validate(struct config_parser *p)
{
	uint32_t clients = 0;

	if (!p->cfg.n_domains) {
		config_fail(p, -EINVAL, p->line,
			    "no [domain NAME] section; at least one is needed");
		return;
	}
	for (size_t i = 0; i < p->cfg.n_domains; i++) {
		struct domain_config *d = &p->cfg.domains[i];
		const int *lines = p->domain_key_line[i];

		config_learned_period(p, d, lines);
		if (!lines[DOMAIN_KEY_WEIGHT])
			d->weight = CONFIG_DEFAULT_WEIGHT;
		else if (d->class != DOMAIN_CLASS_NORMAL)
			config_fail(p, -EINVAL, lines[DOMAIN_KEY_WEIGHT],
				    "key 'weight': only a class = normal domain has a weight (the "
				    "safety domains' share is their budget)");
		if (!lines[DOMAIN_KEY_BUDGET_US])
			d->budget_us = d->period_us;
		if (!lines[DOMAIN_KEY_DEADLINE_US])
			d->deadline_us = d->period_us;
		if (!lines[DOMAIN_KEY_WORKER_NICE])
			d->worker_nice = d->class == DOMAIN_CLASS_SAFETY
					     ? CONFIG_DEFAULT_SAFETY_NICE
					     : CONFIG_DEFAULT_NORMAL_NICE;
		if (!lines[DOMAIN_KEY_PIECE_US])
			d->piece_us = d->class == DOMAIN_CLASS_SAFETY
					  ? CONFIG_DEFAULT_SAFETY_PIECE_US
					  : CONFIG_DEFAULT_NORMAL_PIECE_US;
		if (!lines[DOMAIN_KEY_WORKER_MEMORY_MB])
			d->worker_memory_mb = CONFIG_DEFAULT_WORKER_MEMORY_MB;
		if (!lines[DOMAIN_KEY_RESOURCE_MEMORY_MB])
			d->resource_memory_mb =
			    d->worker_memory_mb / CONFIG_DEFAULT_RESOURCE_MEMORY_SHARE;
		if (!lines[DOMAIN_KEY_MAX_CLIENTS])
			d->max_clients = CONFIG_DEFAULT_MAX_CLIENTS;
		if (!lines[DOMAIN_KEY_DOMAIN_MEMORY_MB])
			d->domain_memory_mb = CONFIG_DEFAULT_DOMAIN_MEMORY_MB;
		if (!lines[DOMAIN_KEY_MAX_CONTEXTS_PER_CLIENT])
			d->max_contexts_per_client = CONFIG_DEFAULT_MAX_CONTEXTS_PER_CLIENT;
		clients += d->max_clients;
		if (clients > CONFIG_MAX_CLIENTS_TOTAL)
			config_fail(p, -EINVAL,
				    lines[DOMAIN_KEY_MAX_CLIENTS] ? lines[DOMAIN_KEY_MAX_CLIENTS]
								  : d->line,
				    "domain '%s': key 'max_clients': the domains' max_clients "
				    "add up to %u, more than the %u clients mediatord serves",
				    d->name, clients, CONFIG_MAX_CLIENTS_TOTAL);
		/* [mediator]'s (or its default, unset here) where the domain names none. */
		if (!lines[DOMAIN_KEY_WORKER_USER])
			d->worker_uid = p->cfg.worker_uid;
		if (!d->vtest_socket[0] && !d->vhost_user_socket[0] && !d->vms[0])
			config_fail(p, -EINVAL, d->line,
				    "domain '%s': key 'vtest_socket': missing (a domain needs "
				    "vtest_socket, vhost_user_socket or vms)",
				    d->name);
		if (d->budget_us > d->period_us)
			config_fail(p, -EINVAL, lines[DOMAIN_KEY_BUDGET_US],
				    "key 'budget_us': %u is larger than %s (%u)", d->budget_us,
				    d->period_learned ? "min_period_us" : "period_us",
				    d->period_us);
		if (d->deadline_us > d->period_us)
			config_fail(p, -EINVAL, lines[DOMAIN_KEY_DEADLINE_US],
				    "key 'deadline_us': %u is larger than %s (%u)", d->deadline_us,
				    d->period_learned ? "min_period_us" : "period_us",
				    d->period_us);
		if (lines[DOMAIN_KEY_GUARD_US] && d->class != DOMAIN_CLASS_SAFETY)
			config_fail(p, -EINVAL, lines[DOMAIN_KEY_GUARD_US],
				    "key 'guard_us': only a class = safety domain has a guard");
		else if (d->guard_us && d->guard_us >= d->deadline_us)
			config_fail(p, -EINVAL, lines[DOMAIN_KEY_GUARD_US],
				    "key 'guard_us': %u leaves nothing of deadline_us (%u)",
				    d->guard_us, d->deadline_us);
	}
	config_check_vms(p);
	config_check_sockets(p);
}

static void config_parser_init(struct config_parser *p, const char *name, char *err,
			       size_t err_size)
{
	memset(p, 0, sizeof(*p));
	p->name = name;
	p->err = err;
	p->err_size = err_size;
	if (err && err_size)
		err[0] = '\0';
	snprintf(p->cfg.path, sizeof(p->cfg.path), "%s", name);
	snprintf(p->cfg.control_socket, sizeof(p->cfg.control_socket), "%s",
		 CONFIG_DEFAULT_CONTROL_SOCKET);
	snprintf(p->cfg.state_dir, sizeof(p->cfg.state_dir), "%s", CONFIG_DEFAULT_STATE_DIR);
	snprintf(p->cfg.cache_dir, sizeof(p->cfg.cache_dir), "%s", CONFIG_DEFAULT_CACHE_DIR);
	p->cfg.policy = CONFIG_DEFAULT_POLICY;
	p->cfg.max_inflight = CONFIG_DEFAULT_MAX_INFLIGHT;
	p->cfg.max_defer_us = CONFIG_DEFAULT_MAX_DEFER_US;
	p->cfg.oversize = MEDIATOR_OVERSIZE_REFUSE_UNTILED;
	p->cfg.control_gid = (gid_t)CONFIG_SOCKET_ID_UNSET;
	p->cfg.admin_gid = (gid_t)CONFIG_SOCKET_ID_UNSET;
	p->cfg.worker_uid = (uid_t)CONFIG_SOCKET_ID_UNSET;
	p->cfg.watchdog_multiplier = CONFIG_DEFAULT_WATCHDOG_MULTIPLIER;
	p->cfg.watchdog_slack_us = CONFIG_DEFAULT_WATCHDOG_SLACK_US;
	p->cfg.watchdog_floor_us = CONFIG_DEFAULT_WATCHDOG_FLOOR_US;
	p->cfg.watchdog_kill_us = CONFIG_DEFAULT_WATCHDOG_KILL_US;
	p->cfg.watchdog_normal_cap_us = CONFIG_DEFAULT_WATCHDOG_NORMAL_CAP_US;
	p->cfg.restart_wait_s = CONFIG_DEFAULT_RESTART_WAIT_S;
	p->cfg.renderer = CONFIG_DEFAULT_RENDERER;
	snprintf(p->cfg.vm_socket, sizeof(p->cfg.vm_socket), "%s", CONFIG_DEFAULT_VM_SOCKET);
	p->cfg.vm_socket_uid = (uid_t)CONFIG_SOCKET_ID_UNSET;
	snprintf(p->cfg.libvirt_state_dir, sizeof(p->cfg.libvirt_state_dir), "%s",
		 CONFIG_DEFAULT_LIBVIRT_STATE_DIR);
	snprintf(p->cfg.render_node, sizeof(p->cfg.render_node), "%s", CONFIG_DEFAULT_RENDER_NODE);
}

/* Runs the parse set up in @p; copies the result into @cfg only on success. */
static int config_run(struct config_parser *p, struct mediator_config *cfg)
{
	int syntax_line = ini_parse_stream(config_read_line, p, config_handle_key, p);

	/* inih's own errors: lines that are neither a section, a key nor a comment. */
	if (syntax_line > 0)
		config_fail(p, -EINVAL, syntax_line,
			    "syntax error; expected '[section]', 'key = value' or a comment");
	else if (syntax_line < 0)
		config_fail(p, -ENOMEM, -1, "out of memory");
	if (!p->error)
		config_validate(p);
	if (p->error)
		return p->error;
	*cfg = p->cfg;
	return 0;
}

int config_parse_string(struct mediator_config *cfg, const char *name, const char *text, char *err,
			size_t err_size)
{
	struct config_parser p;

	config_parser_init(&p, name, err, err_size);
	p.text = text;
	return config_run(&p, cfg);
}

int config_load(struct mediator_config *cfg, const char *path, char *err, size_t err_size)
{
	struct config_parser p;
	char buf[128];
	int ret;

	config_parser_init(&p, path, err, err_size);
	if (strlen(path) >= sizeof(cfg->path)) {
		config_fail(&p, -ENAMETOOLONG, -1, "%s",
			    strerror_r(ENAMETOOLONG, buf, sizeof(buf)));
		return p.error;
	}
	p.file = fopen(path, "re");
	if (!p.file) {
		int e = errno;

		config_fail(&p, -e, -1, "%s", strerror_r(e, buf, sizeof(buf)));
		return p.error;
	}
	errno = 0;
	ret = config_run(&p, cfg);
	fclose(p.file);
	return ret;
}
