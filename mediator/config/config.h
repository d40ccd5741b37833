// SPDX-License-Identifier: MIT
/*
 * mediatord's configuration: the INI file of doc/design.md ("Configuration"), parsed with inih.
 *
 * A config is plain data: one [mediator] section (struct mediator_config)
 * and one [domain NAME] section per domain (struct domain_config). Every key
 * has a named default below. Parsing is strict: an unknown section or key,
 * a malformed or out-of-range number, a domain without a socket, two
 * domains (or the control socket) on one socket path, a budget larger than
 * the period, or a deadline larger than the period is an error that names
 * the file, the line and the key.
 */
#ifndef MEDIATOR_CONFIG_H
#define MEDIATOR_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/renderer_kind.h"

/* Longest socket or directory path accepted; sun_path is 108 bytes. */
#define CONFIG_PATH_MAX 108
/* Longest domain name; names appear in logs, JSON and trace records. */
#define CONFIG_NAME_MAX 32
/* Longest cost model name ("history", "linear", "sgd", "rls"). */
#define CONFIG_MODEL_MAX 16
/* Longest worker_pass_environment value (a config line holds at most 197 characters). */
#define CONFIG_PASS_ENV_MAX 192
/* Most domains one mediatord serves (a car has a handful of VMs). */
#define CONFIG_MAX_DOMAINS 16

#define CONFIG_DEFAULT_CONTROL_SOCKET "/run/gpu-mediator/control.sock"
/*
 * libvirt's own vhost-user GPU path (doc/vms.md): the socket the back-end
 * libvirt starts per VM (gpu-mediator-vm-gpu) hands the VM's connection
 * to, opened when a domain lists `vms`; its owner (mode 0600), the user
 * libvirt runs QEMU and its back-ends as on Debian; and where libvirt keeps
 * the back-ends' pid files, from which mediatord tells which VM a
 * back-end serves.
 */
#define CONFIG_DEFAULT_VM_SOCKET	 "/run/gpu-mediator/vms.sock"
#define CONFIG_DEFAULT_VM_SOCKET_OWNER	 "libvirt-qemu"
#define CONFIG_DEFAULT_LIBVIRT_STATE_DIR "/run/libvirt/qemu"
/* Longest `vms` value (space-separated libvirt VM names; a config line holds 197 characters). */
#define CONFIG_VMS_MAX		 192
#define CONFIG_DEFAULT_STATE_DIR "/var/lib/gpu-mediator"
/* Where each domain's workers keep the host GL driver's shader cache: a directory per domain. */
#define CONFIG_DEFAULT_CACHE_DIR    "/var/cache/gpu-mediator"
#define CONFIG_DEFAULT_POLICY	    MEDIATOR_POLICY_BUDGET
#define CONFIG_DEFAULT_MAX_INFLIGHT 1
#define CONFIG_DEFAULT_RENDERER	    RENDERER_DEFAULT_KIND
#define CONFIG_DEFAULT_RENDER_NODE  RENDERER_DEFAULT_NODE
#define CONFIG_DEFAULT_CLASS	    DOMAIN_CLASS_NORMAL
#define CONFIG_DEFAULT_PERIOD_US    16667u
/*
 * A safety domain without period_us learns its period from its guest's
 * frames (doc/design.md, "Learned periods"), within [min_period_us,
 * max_period_us]: by default 60 Hz, the fastest rate a car's displays
 * run at, and 1 Hz.
 */
#define CONFIG_DEFAULT_MIN_PERIOD_US 16667u
#define CONFIG_DEFAULT_MAX_PERIOD_US 1000000u
/* A normal domain's weight: 1..1000 (SCHED_MAX_WEIGHT), by default 1. */
#define CONFIG_DEFAULT_WEIGHT 1u
#define CONFIG_MAX_WEIGHT     1000u
/* budget_us defaults to period_us (the whole GPU); deadline_us to period_us. */
/*
 * A domain's sockets admit its owner and group only: a domain is a trust
 * boundary (a VM or a set of host clients), so who may connect is granted
 * by socket_owner/socket_group, never by default to every local user.
 */
#define CONFIG_DEFAULT_SOCKET_MODE 0660u
/*
 * The CPU priority (nice value) of a domain's workers, where worker_nice is
 * not set: 0 for both classes. A worker's CPU work (the guest's stream,
 * the host GL driver; on llvmpipe the rendering itself) is part of its
 * groups' time: a normal domain's worker at nice 10 lost 28 % of its
 * throughput to its own client (issue 29). What protects the safety
 * domains from a normal domain's CPU is mediatord's instead
 * (client_watchdog.c): a normal domain's worker runs at idle priority
 * until its first group completes (its start-up: a VM that connects
 * again and again starts a worker and a GL stack each time), and from a
 * revocation until the revoked group completes. Negative values need
 * CAP_SYS_NICE.
 */
#define CONFIG_DEFAULT_SAFETY_NICE 0
#define CONFIG_DEFAULT_NORMAL_NICE 0
#define CONFIG_MIN_NICE		   (-20)
#define CONFIG_MAX_NICE		   19
/*
 * The piece length of a domain's groups, where piece_us is not set
 * (pieces.h in worker/, doc/design.md "Pieces"): a normal domain's long
 * groups are cut into pieces of about 4 ms, what bench/isolation measured
 * for the gaps a 60 Hz cluster leaves on these machines, and its long
 * draws into scissor tiles; a safety domain's groups are not cut (what
 * would wait for them between pieces is only the normal domains' work).
 */
#define CONFIG_DEFAULT_NORMAL_PIECE_US 4000u
#define CONFIG_DEFAULT_SAFETY_PIECE_US 0u
/*
 * The user workers run as, where worker_user is not set (doc/design.md,
 * "Workers' rights"): a system user of its own, which owns nothing but
 * the state directory (scripts/add-worker-user.sh creates it).
 */
#define CONFIG_DEFAULT_WORKER_USER "gpu-mediator"
/*
 * The private memory a worker may allocate, where worker_memory_mb is not
 * set: the renderer's textures and buffers of one client, the host GL
 * driver and its threads (RLIMIT_DATA: a VM's RAM that a vhost-user worker
 * maps is shared and not counted). Above the 1 GiB of shared memory a
 * vtest client may create (vtest_limits.h) and what the heaviest
 * workload measured needs (bench/faults); 0: unlimited.
 */
#define CONFIG_DEFAULT_WORKER_MEMORY_MB 4096u
#define CONFIG_MAX_WORKER_MEMORY_MB	1048576u
/*
 * The host memory one client's resources may take (worker/resource_quota.h),
 * where resource_memory_mb is not set: half of worker_memory_mb, so that
 * a guest asking for more is refused in its protocol while its worker
 * still has room for the host GL driver; unlimited with an unlimited
 * worker_memory_mb. 0: unlimited.
 */
#define CONFIG_DEFAULT_RESOURCE_MEMORY_SHARE 2u
/*
 * The clients (connections, each a worker) a domain may have at once,
 * where max_clients is not set. A refused connection is closed at once,
 * so that one domain's flood cannot take what another domain needs. The
 * sum of all domains' max_clients may not pass CONFIG_MAX_CLIENTS_TOTAL,
 * the size of mediatord's client table: every domain, the safety ones
 * first, can always reach its own limit whatever the others do. 16: what
 * CONFIG_MAX_DOMAINS domains all left at the default fit in that table,
 * and 16 renderers (~80 MiB each, doc/results) are far more than a VM
 * or a set of host clients draws with at once.
 */
#define CONFIG_DEFAULT_MAX_CLIENTS 16u
#define CONFIG_MAX_CLIENTS_TOTAL   256u
/*
 * The memory all the workers of a domain may hold together, where
 * domain_memory_mb is not set (the sum of their private resident memory,
 * RssAnon: mediatord refuses a new client when it is reached, and ends
 * the domain's newest worker while it is passed). 4096: two domains at the
 * default leave most of a 24 GiB host to the guests; 0: unlimited.
 */
#define CONFIG_DEFAULT_DOMAIN_MEMORY_MB 4096u
/*
 * Guest contexts one client may hold, where max_contexts_per_client is not
 * set, and its most: a vhost-user worker's context table
 * (VGPU_MAX_CONTEXTS, worker/vhost-user/vgpu_device.h). A vtest client has
 * one context per connection whatever is set.
 */
#define CONFIG_DEFAULT_MAX_CONTEXTS_PER_CLIENT 64u
#define CONFIG_MAX_CONTEXTS_PER_CLIENT	       64u
/* socket_owner/socket_group not set: the socket keeps mediatord's user/group. */
#define CONFIG_SOCKET_ID_UNSET (-1)

/* Bounds of period_us: 100 us .. 10 s. */
#define CONFIG_MIN_PERIOD_US 100u
#define CONFIG_MAX_PERIOD_US 10000000u
/* Most command groups in flight at once (0 = unlimited). */
#define CONFIG_MAX_INFLIGHT_LIMIT 64u

enum mediator_policy {
	MEDIATOR_POLICY_BUDGET = 0,
	MEDIATOR_POLICY_FIFO,
};

/* What the budget policy does with a group too large for any safety gap, after max_defer_us. */
enum mediator_oversize {
	MEDIATOR_OVERSIZE_RUN = 0,	 /* run it at the start of the next gap */
	MEDIATOR_OVERSIZE_UNSCHEDULABLE, /* refuse it; its context is reported unschedulable */
	/* the default: refuse it where a draw in it could not be cut into tiles, else run it */
	MEDIATOR_OVERSIZE_REFUSE_UNTILED,
};

#define CONFIG_DEFAULT_MAX_DEFER_US 100000u
#define CONFIG_MIN_MAX_DEFER_US	    1000u
#define CONFIG_MAX_MAX_DEFER_US	    10000000u

/*
 * The grant watchdog (doc/design.md): a granted group whose completion has
 * not come by max(multiplier x bound, bound + slack, floor) after its grant
 * is revoked and its client suspended until that completion comes; when
 * it has not come kill_us after the revocation, the worker is killed (0:
 * never). The defaults are the scheduler's (SCHED_WATCHDOG_*, where they
 * are explained); multiplier 0: no watchdog. The kill stage is the
 * dispatcher's: 2 s, far past any shader compile or host stall seen.
 */
#define CONFIG_DEFAULT_WATCHDOG_MULTIPLIER    4u
#define CONFIG_MAX_WATCHDOG_MULTIPLIER	      100u
#define CONFIG_DEFAULT_WATCHDOG_SLACK_US      50000u
#define CONFIG_DEFAULT_WATCHDOG_FLOOR_US      200000u
#define CONFIG_DEFAULT_WATCHDOG_KILL_US	      2000000u
#define CONFIG_DEFAULT_WATCHDOG_NORMAL_CAP_US 250000u
#define CONFIG_MIN_WATCHDOG_FLOOR_US	      10000u
#define CONFIG_MAX_WATCHDOG_US		      60000000u
/* How long workers wait for a restarted mediatord (keeper.h); 0: they die with it. */
#define CONFIG_DEFAULT_RESTART_WAIT_S 60u
#define CONFIG_MAX_RESTART_WAIT_S     3600u

enum domain_class {
	DOMAIN_CLASS_NORMAL = 0,
	DOMAIN_CLASS_SAFETY,
};

struct domain_config {
	char name[CONFIG_NAME_MAX];
	enum domain_class class;
	/* With period_learned, the shortest period (min_period_us): the checks' and budget's. */
	uint32_t period_us;
	uint32_t budget_us;
	uint32_t deadline_us;
	/* Safety, no period_us: its period is learned, at most max_period_us. */
	bool period_learned;
	uint32_t max_period_us;
	/* period_learned, no deadline_us: its frames are judged against the learned period. */
	bool deadline_follows;
	/* Normal domains: their share of what the safety domains leave, by weight. */
	uint32_t weight;
	bool strict;				 /* never past its budget, even on an idle GPU */
	uint32_t guard_us;			 /* safety: slack kept for overruns (0: none) */
	char vtest_socket[CONFIG_PATH_MAX];	 /* "" when not set */
	char vhost_user_socket[CONFIG_PATH_MAX]; /* "" when not set */
	/* libvirt VMs (space-separated names) whose GPU it serves through vm_socket; "": none */
	char vms[CONFIG_VMS_MAX];
	/* Owner, group and mode of both its sockets; (uid_t)/(gid_t)-1: unchanged. */
	uid_t socket_uid;
	gid_t socket_gid;
	uint32_t socket_mode;
	int worker_nice;	     /* its workers' nice value */
	uint32_t piece_us;	     /* its groups predicted longer are cut into pieces; 0: never */
	uint32_t worker_memory_mb;   /* RLIMIT_DATA of its workers; 0: unlimited */
	uint32_t resource_memory_mb; /* host memory a client's resources may take; 0: unlimited */
	uint32_t max_clients;	     /* its clients at once, 1..CONFIG_MAX_CLIENTS_TOTAL */
	uint32_t domain_memory_mb;   /* its workers' private memory together; 0: unlimited */
	uint32_t max_contexts_per_client; /* guest contexts of one client */
	/* The user its workers run as; [mediator]'s worker_user where not set
	   (CONFIG_SOCKET_ID_UNSET: CONFIG_DEFAULT_WORKER_USER). */
	uid_t worker_uid;
	int line; /* line of its [domain NAME] header */
};

struct mediator_config {
	char path[4096]; /* the file it was read from */
	char control_socket[CONFIG_PATH_MAX];
	char state_dir[CONFIG_PATH_MAX];
	char cache_dir[CONFIG_PATH_MAX];
	enum mediator_policy policy;
	uint32_t max_inflight; /* 0 = unlimited */
	enum mediator_renderer renderer;
	char render_node[CONFIG_PATH_MAX]; /* used by renderer = egl-gbm */
	char model[CONFIG_MODEL_MAX];	   /* cost model; "" = the worker's default */
	uint32_t max_defer_us;		   /* how long an oversize group waits */
	enum mediator_oversize oversize;   /* and what happens then */
	uint32_t watchdog_multiplier;	   /* 0: no grant watchdog */
	uint32_t watchdog_slack_us;
	uint32_t watchdog_floor_us;
	uint32_t watchdog_normal_cap_us; /* 0: a normal domain's groups get no allowance */
	uint32_t watchdog_kill_us;	 /* after a revocation; 0: never kill */
	/*
	 * The control socket's group ((gid_t)-1: mediatord's), whose members
	 * may connect and read (show-budgets, status, model); and the group
	 * whose members may also change mediatord (set-budget, trace): root
	 * and mediatord's own user always may; (gid_t)-1: nobody else.
	 */
	gid_t control_gid;
	gid_t admin_gid;
	/* The user workers run as when mediatord runs as root; (uid_t)-1:
	 * CONFIG_DEFAULT_WORKER_USER. */
	uid_t worker_uid;
	/* How long the keeper keeps workers for a restarted mediatord; 0: no keeper. */
	uint32_t restart_wait_s;
	/* Names (NAME or PREFIX*, space-separated) of mediatord's environment
	   variables its workers get beside those they always get
	   (daemon/worker_env.h); "": none. */
	char worker_pass_environment[CONFIG_PASS_ENV_MAX];
	/* libvirt's vhost-user path: opened only when a domain lists vms. */
	char vm_socket[CONFIG_PATH_MAX];
	uid_t vm_socket_uid; /* its owner; resolved only when a domain lists vms */
	char libvirt_state_dir[CONFIG_PATH_MAX];
	size_t n_domains;
	struct domain_config domains[CONFIG_MAX_DOMAINS];
};

/*
 * Reads and validates the config file at @path into @cfg (caller-owned).
 * Returns 0, or a negative errno: -ENOENT/-EACCES/... when the file cannot
 * be opened, -EINVAL when it is invalid. On error, a one-line message of the
 * form "FILE:LINE: key 'K': what is wrong" is written into @err (always
 * NUL-terminated, may be truncated).
 */
int config_load(struct mediator_config *cfg, const char *path, char *err, size_t err_size);

/* Whether some domain of @cfg lists `vms`: mediatord then opens vm_socket. */
bool config_has_vms(const struct mediator_config *cfg);

/*
 * Which listed VM a vhost-user GPU back-end whose libvirt pid file is named
 * @stem (without LIBVIRT_VHOST_GPU_PIDFILE_SUFFIX, common/libvirt_name.h)
 * serves: returns the index of the domain listing it and copies the VM's
 * name into @vm; -ENOENT when no listed VM matches, -EEXIST when more
 * than one does (names such as "a" and "a-ua-b" that libvirt's file names
 * cannot tell apart).
 */
int config_domain_of_vm_stem(const struct mediator_config *cfg, const char *stem, char *vm,
			     size_t vm_size);

/* Same as config_load() but parses @text; @name stands for the file name in messages. */
int config_parse_string(struct mediator_config *cfg, const char *name, const char *text, char *err,
			size_t err_size);

/* Names as written in the config file ("budget", "egl-surfaceless", "safety"). */
const char *config_policy_name(enum mediator_policy policy);
const char *config_class_name(enum domain_class class);
const char *config_oversize_name(enum mediator_oversize oversize);

#endif
