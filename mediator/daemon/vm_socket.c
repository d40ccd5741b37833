// SPDX-License-Identifier: MIT
#include "daemon/vm_socket.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fd_pass.h"
#include "common/libvirt_name.h"
#include "common/unix_listener.h"
#include "common/util.h"
#include "common/vm_handoff.h"
#include "config/config.h"
#include "daemon/peer_cred.h"
#include "daemon/vm_identity.h"

#define VM_SOCKET_BACKLOG 16

struct pending {
	struct vm_socket *owner;
	int fd; /* -1: a free slot */
	struct loop_source *source;
	uint64_t since_ns;
	pid_t pid; /* the connecting process, from the kernel */
};

struct vm_socket {
	struct loop *loop;
	struct unix_listener sock;
	struct loop_source *source;
	bool taken_over;
	char state_dir[CONFIG_PATH_MAX];
	vm_socket_fn fn;
	void *data;
	struct pending pending[VM_SOCKET_MAX_PENDING];
};

static void drop(struct pending *p)
{
	loop_remove(p->source);
	p->source = NULL;
	close(p->fd);
	p->fd = -1;
}

/* Sends @p its answer line and closes it. */
__attribute__((format(printf, 2, 3))) static void answer(struct pending *p, const char *fmt, ...)
{
	char line[VM_HANDOFF_ANSWER_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (send(p->fd, line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		log_warn("vm_socket: back-end %d: cannot answer: %s", (int)p->pid, strerror(errno));
	drop(p);
}

/* Checks @p's request (@n bytes of @req, descriptor @vfd) and hands the VM on. */
static void serve(struct pending *p, const struct vm_handoff_request *req, ssize_t n, int vfd)
{
	struct vm_socket *s = p->owner;
	char stem[256], text[VM_HANDOFF_ANSWER_MAX - 16];
	int r;

	if (n != (ssize_t)sizeof(*req) || req->magic != VM_HANDOFF_MAGIC) {
		log_warn("vm_socket: process %d sent no VM hand-off request (%zd bytes)",
			 (int)p->pid, n);
		answer(p, "error: not a VM hand-off request (common/vm_handoff.h)");
		goto out;
	}
	if (req->version != VM_HANDOFF_VERSION || (req->flags & ~VM_HANDOFF_FLAGS_KNOWN)) {
		log_warn("vm_socket: process %d: hand-off version %u, flags %#x: not ours",
			 (int)p->pid, req->version, req->flags);
		answer(p, "error: hand-off version %u flags %#x; this mediatord speaks version %u",
		       req->version, req->flags, VM_HANDOFF_VERSION);
		goto out;
	}
	if (vfd < 0 || unix_stream_check(vfd) < 0) {
		log_warn("vm_socket: process %d: %s", (int)p->pid,
			 vfd < 0 ? "no descriptor came with its request"
				 : "its descriptor is no unix stream socket");
		answer(p, "error: the request needs the VM's vhost-user socket with it");
		goto out;
	}
	r = vm_identity_stem_of_pid(s->state_dir, p->pid, stem, sizeof(stem));
	if (r < 0) {
		log_warn("vm_socket: process %d is no VM's GPU back-end libvirt started: no "
			 "*%s in %s holds its pid (%s)",
			 (int)p->pid, LIBVIRT_VHOST_GPU_PIDFILE_SUFFIX, s->state_dir, strerror(-r));
		answer(p,
		       "error: process %d is no GPU back-end libvirt started (no pid file of "
		       "it in %s)",
		       (int)p->pid, s->state_dir);
		goto out;
	}
	r = s->fn(s->data, stem, p->pid, req->flags, vfd, text, sizeof(text));
	if (r < 0) {
		log_warn("vm_socket: libvirt's %s (back-end %d): %s", stem, (int)p->pid, text);
		answer(p, "error: %s", text);
	} else {
		answer(p, "ok %s", text);
	}
	return;
out:
	if (vfd >= 0)
		close(vfd);
}

static void on_request(struct loop_source *source, int fd, uint32_t events, void *data)
{
	struct pending *p = data;
	struct vm_handoff_request req;
	int vfd = -1;
	ssize_t n = fd_pass_recv(fd, &req, sizeof(req), MSG_DONTWAIT, &vfd);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0 && !(n < 0 && errno == EMSGSIZE)) {
		if (n < 0)
			log_warn("vm_socket: process %d: %s", (int)p->pid, strerror(errno));
		drop(p);
		return;
	}
	serve(p, &req, n < 0 ? (ssize_t)sizeof(req) + 1 : n, vfd);
}

static void on_accept(struct loop_source *source, int fd, uint32_t events, void *data)
{
	struct vm_socket *s = data;
	struct peer_cred cred;
	struct pending *p = NULL;
	int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (cfd < 0) {
		if (errno != EAGAIN && errno != EINTR)
			log_warn("vm_socket %s: accept: %s", s->sock.path, strerror(errno));
		return;
	}
	for (size_t i = 0; i < VM_SOCKET_MAX_PENDING && !p; i++)
		if (s->pending[i].fd < 0)
			p = &s->pending[i];
	if (!p || peer_cred_read(cfd, &cred) < 0) {
		log_warn("vm_socket %s: refusing a connection: %s", s->sock.path,
			 p ? "its peer is not known" : "too many wait for their request");
		close(cfd);
		return;
	}
	*p = (struct pending){.owner = s, .fd = cfd, .since_ns = mono_now_ns(), .pid = cred.pid};
	p->source = loop_add(s->loop, cfd, EPOLLIN, on_request, p);
	if (!p->source) {
		log_warn("vm_socket: cannot watch a connection: %s", strerror(errno));
		close(cfd);
		p->fd = -1;
	}
}

struct vm_socket *vm_socket_create(struct loop *loop, const struct vm_socket_params *params,
				   vm_socket_fn fn, void *data, char *err, size_t err_size)
{
	struct vm_socket *s = calloc(1, sizeof(*s));
	char ebuf[256];

	if (!s) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	s->loop = loop;
	s->fn = fn;
	s->data = data;
	s->sock.fd = -1;
	snprintf(s->state_dir, sizeof(s->state_dir), "%s", params->state_dir);
	for (size_t i = 0; i < VM_SOCKET_MAX_PENDING; i++)
		s->pending[i].fd = -1;
	s->taken_over = params->kept_fd >= 0 &&
			unix_listener_adopt(&s->sock, params->kept_fd, params->path) == 0;
	if (params->kept_fd >= 0 && !s->taken_over) {
		log_warn("vm_socket %s is gone; opened again", params->path);
		close(params->kept_fd);
	}
	if (!s->taken_over &&
	    (unix_listener_open(&s->sock, params->path, 0600, VM_SOCKET_BACKLOG, ebuf,
				sizeof(ebuf)) < 0 ||
	     unix_listener_chown(&s->sock, params->owner, (gid_t)-1, ebuf, sizeof(ebuf)) < 0)) {
		snprintf(err, err_size, "vm_socket %s", ebuf);
		vm_socket_destroy(s, false);
		return NULL;
	}
	s->source = loop_add(loop, s->sock.fd, EPOLLIN, on_accept, s);
	if (!s->source) {
		snprintf(err, err_size, "cannot watch vm_socket %s: %s", params->path,
			 strerror(errno));
		vm_socket_destroy(s, s->taken_over);
		return NULL;
	}
	return s;
}

int vm_socket_fd(const struct vm_socket *s)
{
	return s->sock.fd;
}

bool vm_socket_taken_over(const struct vm_socket *s)
{
	return s->taken_over;
}

void vm_socket_expire(struct vm_socket *s, uint64_t now_ns)
{
	if (!s)
		return;
	for (size_t i = 0; i < VM_SOCKET_MAX_PENDING; i++) {
		struct pending *p = &s->pending[i];

		if (p->fd < 0 || now_ns - p->since_ns < VM_SOCKET_REQUEST_TIMEOUT_MS * 1000000ull)
			continue;
		log_warn("vm_socket: process %d sent no request within %d ms; closed", (int)p->pid,
			 VM_SOCKET_REQUEST_TIMEOUT_MS);
		drop(p);
	}
}

void vm_socket_destroy(struct vm_socket *s, bool leave)
{
	if (!s)
		return;
	for (size_t i = 0; i < VM_SOCKET_MAX_PENDING; i++)
		if (s->pending[i].fd >= 0)
			drop(&s->pending[i]);
	loop_remove(s->source);
	if (leave)
		unix_listener_leave(&s->sock);
	else
		unix_listener_close(&s->sock);
	free(s);
}
