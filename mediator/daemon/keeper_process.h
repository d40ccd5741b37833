// SPDX-License-Identifier: MIT
/*
 * The keeper process (keeper.h): what keeper_open() runs in the child it
 * forks, and its only entry point. keeper_msg.h holds the messages it
 * exchanges with mediatord.
 */
#ifndef MEDIATOR_KEEPER_PROCESS_H
#define MEDIATOR_KEEPER_PROCESS_H

#include <stdint.h>

/*
 * The keeper process: serves mediatord on @conn_fd and successors on
 * @listen_fd (bound at @path), as keeper.h says. Takes both descriptors;
 * runs in the forked child only. Never returns.
 */
_Noreturn void keeper_process_run(int listen_fd, int conn_fd, const char *path, uint32_t wait_s);

#endif
