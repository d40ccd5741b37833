// SPDX-License-Identifier: MIT
/*
 * The early WIRE_DONE: a granted group's completion goes to mediatord from
 * virglrenderer's sync thread the moment its fence signals, whatever the
 * worker's main thread is doing then.
 *
 * Why: mediatord holds the GPU for a granted group until its WIRE_DONE
 * arrives (wire.h). The main thread takes completions between client
 * messages; one message can keep it tens of milliseconds (creating a
 * 64 MiB texture on llvmpipe takes 50-80 ms), and every other domain's
 * groups waited that long for an idle GPU.
 *
 * Process-global, like virglrenderer and its sync thread. The record
 * channel of each armed group is given with it, so links may come and go.
 *   Main thread: fence_done_arm() a granted group's fence before creating
 *   the fence (the channel must have nothing queued: the relay's message
 *   overtakes what is queued); fence_done_take() where it would send the
 *   group's WIRE_DONE itself; fence_done_forget() a channel before closing
 *   it or when mediatord behind it died or changed.
 *   Sync thread: fence_done_signalled() for every fence that signalled.
 * Exactly one WIRE_DONE per grant goes out: the relay's or the main
 * thread's (a mutex orders the two). The relay's carries the callback's
 * time; the group's record (WIRE_GROUP) keeps the best timestamp source's.
 */
#ifndef MEDIATOR_DONE_RELAY_H
#define MEDIATOR_DONE_RELAY_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Granted groups armed at once: more than a worker has granted and in
 * flight (one request outstanding, a few groups in flight); past it,
 * groups are not armed and their WIRE_DONE comes from the main thread.
 */
#define FENCE_DONE_SLOTS 16

/*
 * Main thread. When fence @fence_id signals, send WIRE_DONE for grant
 * @grant_id on @fd (not owned; a SOCK_SEQPACKET record channel), measured
 * from @dispatch_ns (CLOCK_MONOTONIC) or the previous fence's completion,
 * whichever is later. Returns 0, or -ENOSPC when every slot is armed (the
 * main thread then sends it), -EINVAL for @grant_id 0 or @fd < 0.
 */
int fence_done_arm(int fd, uint32_t fence_id, uint64_t grant_id, uint64_t dispatch_ns);

/*
 * Main thread. Whether grant @grant_id's WIRE_DONE went out from the
 * relay (true: do not send it again); either way the relay forgets it,
 * so a false answer means the caller must send it.
 */
bool fence_done_take(uint64_t grant_id);

/* Main thread. Forgets every group armed on @fd, sent or not. */
void fence_done_forget(int fd);

/*
 * Sync thread (any thread). Fence @fence_id signalled at @end_ns; fences
 * signal in order, so every armed fence up to it (in uint32 sequence
 * order) has too. Sends their WIRE_DONE in fence order; one whose channel
 * does not take it (full) stays armed for the main thread, and so do the
 * later ones of that channel.
 */
void fence_done_signalled(uint32_t fence_id, uint64_t end_ns);

#endif
