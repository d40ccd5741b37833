// SPDX-License-Identifier: MIT
/*
 * A domain's limits (doc/operating.md): how many clients it may have at
 * once (max_clients) and how much memory its workers may hold together
 * (domain_memory_mb), so that one domain's flood of connections or memory
 * cannot lock another, the safety domain above all, out.
 *
 * The decisions are pure (domain_limits_admit(), domain_limits_over()):
 * mediatord (clients.c) counts a domain's clients and its workers' memory,
 * asks, and closes the connection refused or ends the newest workers of a
 * domain past its total, as many as bring it back under. A worker's
 * memory is its private resident memory, RssAnon in /proc/PID/status:
 * what it allocated itself (the host GL driver's heap, textures, threads);
 * not the shared libraries every worker maps (RssFile, counted once by the
 * host), nor shared memory (RssShmem: a VM's RAM that a vhost-user worker
 * maps is the VM's, and a vtest client's resources are bounded by
 * resource_memory_mb). The per-worker limits summed would be no total at
 * all (16 x 4 GiB by default).
 *
 * The log of refusals is rate-limited (struct domain_limits_log) so that a
 * flood of connections does not flood the log. All of it runs on
 * mediatord's one thread.
 */
#ifndef MEDIATOR_DOMAIN_LIMITS_H
#define MEDIATOR_DOMAIN_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"

/* Refusals logged per window at most; the rest are counted, and told with the next. */
#define DOMAIN_LIMITS_LOG_BURST 5u
/* The window of DOMAIN_LIMITS_LOG_BURST: 10 s, a flood's lines stay readable. */
#define DOMAIN_LIMITS_LOG_WINDOW_NS (10ull * 1000000000ull)
/*
 * How often mediatord compares each domain's memory with its total: four
 * times a second. A domain's clients grow together between two checks:
 * at one a second, 8 clients making 64 MiB textures took a domain 386 MiB
 * past its total (test-memory-flood, 2026-11-29). A check reads each
 * worker's /proc/PID/status, microseconds each.
 */
#define DOMAIN_LIMITS_CHECK_MS 250u

/* What a domain may hold, from its config. */
struct domain_limits {
	uint32_t max_clients;
	uint64_t memory_kib; /* its workers' RssAnon together; 0: unlimited */
};

/* What a domain holds now. */
struct domain_usage {
	uint32_t clients;
	uint64_t memory_kib;
};

/* Its limits from @cfg (domain_memory_mb in KiB). */
struct domain_limits domain_limits_from_config(const struct domain_config *cfg);

/*
 * May a domain holding @usage take one more client? 0; -EMFILE when it has
 * max_clients; -ENOMEM when its workers hold its memory total or more.
 * *@what names the key of the limit reached.
 */
int domain_limits_admit(const struct domain_limits *limits, const struct domain_usage *usage,
			const char **what);

/* Is a domain holding @usage past its memory total (and must lose its newest worker)? */
bool domain_limits_over(const struct domain_limits *limits, const struct domain_usage *usage);

/*
 * The RssAnon of the text of a /proc/PID/status file, in KiB: 0, -ENOENT
 * when it has no RssAnon line (a kernel thread, an ended process), -EINVAL
 * when the line is malformed.
 */
int domain_limits_parse_status(const char *text, uint64_t *kib);

/* The RssAnon of process @pid in KiB (reads /proc/PID/status): 0 or a negative errno. */
int domain_limits_worker_kib(pid_t pid, uint64_t *kib);

/* The rate limit of a domain's refusal lines; zero-initialised it is a fresh one. */
struct domain_limits_log {
	uint64_t window_start_ns;
	uint32_t in_window;  /* lines logged in this window */
	uint32_t suppressed; /* refusals not logged since the last line */
};

/*
 * A refusal at @now_ns: true when it is to be logged; then *@suppressed is
 * the number of refusals not logged before it (to say so in its line), and
 * the count starts again.
 */
bool domain_limits_log_pass(struct domain_limits_log *log, uint64_t now_ns, uint32_t *suppressed);

/*
 * At @now_ns, past the window of the last line: true when refusals were
 * not logged since it, their number in *@suppressed (to be told in a line
 * of its own), and the count starts again. So a flood that stops is still
 * counted in the log.
 */
bool domain_limits_log_flush(struct domain_limits_log *log, uint64_t now_ns, uint32_t *suppressed);

/*
 * Whether the host gives mediatord a cgroup v2 memory controller it may
 * delegate to its domains: @root is the cgroup v2 mount (/sys/fs/cgroup),
 * @self_cgroup the text of /proc/self/cgroup. 0 when @root holds the
 * memory controller and mediatord's own cgroup there is writable (its
 * path in @where); -ENOENT (no cgroup v2 hierarchy at @root: a cgroup v1
 * or hybrid host), -ENOTSUP (no memory controller), -EACCES (mediatord's
 * cgroup not writable: not delegated) with @where saying why.
 */
int domain_limits_cgroup_probe(const char *root, const char *self_cgroup, char *where,
			       size_t where_size);

#endif
