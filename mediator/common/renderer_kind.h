// SPDX-License-Identifier: MIT
/*
 * How a worker's virglrenderer reaches the host's GL: the config key
 * `renderer` and mediator-worker's --renderer take these names.
 */
#ifndef MEDIATOR_RENDERER_KIND_H
#define MEDIATOR_RENDERER_KIND_H

enum mediator_renderer {
	MEDIATOR_RENDERER_EGL_SURFACELESS = 0,
	MEDIATOR_RENDERER_EGL_GBM,
	MEDIATOR_RENDERER_GLX,
	MEDIATOR_RENDERER_COUNT
};

#define RENDERER_DEFAULT_KIND MEDIATOR_RENDERER_EGL_SURFACELESS
#define RENDERER_DEFAULT_NODE "/dev/dri/renderD128"

/* Its name ("egl-surfaceless", "egl-gbm", "glx"); "unknown" when out of range. */
const char *renderer_kind_name(enum mediator_renderer kind);
/* The kind named @name into *@out: 0, or -EINVAL for an unknown name. */
int renderer_kind_parse(const char *name, enum mediator_renderer *out);

#endif
