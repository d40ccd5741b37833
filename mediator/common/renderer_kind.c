// SPDX-License-Identifier: MIT
/*
 * The renderer kinds' names (renderer_kind.h).
 */
#include <errno.h>
#include <string.h>

#include "common/renderer_kind.h"

static const char *const names[MEDIATOR_RENDERER_COUNT] = {
    [MEDIATOR_RENDERER_EGL_SURFACELESS] = "egl-surfaceless",
    [MEDIATOR_RENDERER_EGL_GBM] = "egl-gbm",
    [MEDIATOR_RENDERER_GLX] = "glx",
};

const char *renderer_kind_name(enum mediator_renderer kind)
{
	return (unsigned)kind < MEDIATOR_RENDERER_COUNT ? names[kind] : "unknown";
}

int renderer_kind_parse(const char *name, enum mediator_renderer *out)
{
	for (unsigned i = 0; i < MEDIATOR_RENDERER_COUNT; i++) {
		if (strcmp(name, names[i]) == 0) {
			*out = (enum mediator_renderer)i;
			return 0;
		}
	}
	return -EINVAL;
}
