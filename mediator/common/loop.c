// SPDX-License-Identifier: MIT
/*
 * epoll-based event loop. Sources are kept on a list; removal inside a
 * callback marks the source dead and defers the free to the end of the
 * dispatch round, so that pending events for it in the same epoll_wait()
 * batch are ignored rather than delivered to freed memory.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "common/loop.h"

#define LOOP_MAX_EVENTS 32

struct loop_source {
	struct loop *loop;
	int fd;
	bool dead;
	loop_fn fn;
	void *data;
	struct loop_source *next_dead;
};

struct loop {
	int epfd;
	bool quit;
	bool dispatching;
	struct loop_source *dead;
};

struct loop *loop_create(void)
{
	struct loop *loop = calloc(1, sizeof(*loop));

	if (!loop)
		return NULL;
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epfd < 0) {
		free(loop);
		return NULL;
	}
	return loop;
}

static void loop_free_dead(struct loop *loop)
{
	while (loop->dead) {
		struct loop_source *s = loop->dead;

		loop->dead = s->next_dead;
		free(s);
	}
}

void loop_destroy(struct loop *loop)
{
	if (!loop)
		return;
	loop_free_dead(loop);
	close(loop->epfd);
	free(loop);
}

struct loop_source *loop_add(struct loop *loop, int fd, uint32_t events, loop_fn fn, void *data)
{
	struct loop_source *s = calloc(1, sizeof(*s));
	struct epoll_event ev = {.events = events};

	if (!s)
		return NULL;
	s->loop = loop;
	s->fd = fd;
	s->fn = fn;
	s->data = data;
	ev.data.ptr = s;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int e = errno;

		free(s);
		errno = e;
		return NULL;
	}
	return s;
}

int loop_update(struct loop_source *source, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = source};

	if (epoll_ctl(source->loop->epfd, EPOLL_CTL_MOD, source->fd, &ev) < 0)
		return -errno;
	return 0;
}

void loop_remove(struct loop_source *source)
{
	struct loop *loop;

	if (!source)
		return;
	loop = source->loop;
	epoll_ctl(loop->epfd, EPOLL_CTL_DEL, source->fd, NULL);
	source->dead = true;
	if (loop->dispatching) {
		source->next_dead = loop->dead;
		loop->dead = source;
	} else {
		free(source);
	}
}

int loop_dispatch(struct loop *loop, int timeout_ms)
{
	struct epoll_event events[LOOP_MAX_EVENTS];
	int n = epoll_wait(loop->epfd, events, LOOP_MAX_EVENTS, timeout_ms);

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	loop->dispatching = true;
	for (int i = 0; i < n; i++) {
		struct loop_source *s = events[i].data.ptr;

		if (!s->dead)
			s->fn(s, s->fd, events[i].events, s->data);
	}
	loop->dispatching = false;
	loop_free_dead(loop);
	return 0;
}

int loop_run(struct loop *loop)
{
	loop->quit = false;
	while (!loop->quit) {
		int r = loop_dispatch(loop, -1);

		if (r < 0)
			return r;
	}
	return 0;
}

void loop_quit(struct loop *loop)
{
	loop->quit = true;
}
