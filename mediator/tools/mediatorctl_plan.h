// SPDX-License-Identifier: MIT
/* mediatorctl plan TRACE...: budgets proposed from traces (plan.h), checked by mediator-sim. */
#ifndef MEDIATOR_TOOLS_MEDIATORCTL_PLAN_H
#define MEDIATOR_TOOLS_MEDIATORCTL_PLAN_H

/* The help of the plan command. */
extern const char mediatorctl_plan_help[];

/* @argv: the arguments after "plan". Returns an enum mediatorctl_exit. */
int mediatorctl_plan(int argc, char **argv);

#endif
