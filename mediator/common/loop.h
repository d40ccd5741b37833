// SPDX-License-Identifier: MIT
/*
 * A minimal single-threaded event loop over epoll, used by mediatord.
 *
 * A struct loop_source is one watched fd and its callback. Callbacks run on
 * the thread that calls loop_run(), one at a time. A callback may remove its
 * own or any other source (loop_remove() is safe inside callbacks: removed
 * sources receive no further events in the same iteration).
 */
#ifndef MEDIATOR_LOOP_H
#define MEDIATOR_LOOP_H

#include <stdint.h>

struct loop;
struct loop_source;

/* Events are EPOLLIN/EPOLLOUT/EPOLLHUP/EPOLLERR bits. */
typedef void (*loop_fn)(struct loop_source *source, int fd, uint32_t events, void *data);

struct loop *loop_create(void);
/* Removes all sources (closing none of their fds) and frees the loop. NULL is fine. */
void loop_destroy(struct loop *loop);

/*
 * Watches @fd for @events. The loop does not own @fd: the caller closes it
 * after loop_remove(). Returns NULL on failure (errno set).
 */
struct loop_source *loop_add(struct loop *loop, int fd, uint32_t events, loop_fn fn, void *data);
/* Changes the events watched. Returns 0 or a negative errno. */
int loop_update(struct loop_source *source, uint32_t events);
/* Stops watching and frees @source. NULL is fine. */
void loop_remove(struct loop_source *source);

/* Runs one round, waiting at most @timeout_ms (-1: forever). Returns 0 or a negative errno. */
int loop_dispatch(struct loop *loop, int timeout_ms);
/* Runs until loop_quit(). Returns 0 or a negative errno. */
int loop_run(struct loop *loop);
void loop_quit(struct loop *loop);

#endif
